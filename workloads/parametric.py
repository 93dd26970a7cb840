"""Parametric workload names: ``spmm:n=1024,sparsity=0.95[,bias=0.0][,seed=0]``.

Forms (A is ``m x k``, B is ``k x cols``):

* ``matmul:n=N`` (square) or ``matmul:m=..,k=..,cols=..``
* ``spmm:n=N,sparsity=S[,bias=B][,seed=R]`` — sparse A x dense B
* ``spmv:n=N,sparsity=S[,bias=B][,seed=R]`` — sparse A x dense vector
* ``spmm:file=matrix.mtx[,cols=C]`` / ``spmv:file=matrix.mtx`` — A read from a
  Matrix Market file.

``n`` sets ``m``, ``k`` and (for matmul/spmm) ``cols``; explicit keys win.
"""

from __future__ import annotations

from workloads.errors import UserError, allowed

from . import sparse
from .layers import MatMul, SparsePattern, SpMM, SpMV, Workload

_KEYS = {
    "matmul": {"n", "m", "k", "cols"},
    "spmm": {"n", "m", "k", "cols", "sparsity", "bias", "seed", "file"},
    "spmv": {"n", "m", "k", "sparsity", "bias", "seed", "file"},
}
KINDS = tuple(_KEYS)


def _parse_args(kind: str, text: str, spec: str) -> dict[str, str]:
    args: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise UserError(f"workload '{spec}': '{item}' is not key=value")
        if key not in _KEYS[kind]:
            raise UserError(f"workload '{spec}': unknown key '{key}'; allowed: {allowed(sorted(_KEYS[kind]))}")
        args[key] = value.strip()
    return args


def _num(args: dict[str, str], key: str, cast, spec: str, default=None):
    if key not in args:
        return default
    try:
        return cast(args[key])
    except ValueError:
        what = "an int" if cast is int else "a number"
        raise UserError(f"workload '{spec}': {key}={args[key]!r} is not {what}") from None


def parse(spec: str) -> Workload:
    """Build the workload named by the parametric string ``spec``."""
    kind, _, rest = spec.partition(":")
    if kind not in _KEYS:
        raise UserError(f"workload '{spec}': unknown kind '{kind}'; allowed: {allowed(KINDS)}")
    args = _parse_args(kind, rest, spec)
    n = _num(args, "n", int, spec)
    m = _num(args, "m", int, spec, n)
    k = _num(args, "k", int, spec, n)
    cols = 1 if kind == "spmv" else _num(args, "cols", int, spec, n)

    if kind == "matmul":
        if None in (m, k, cols):
            raise UserError(f"workload '{spec}': give n (square) or m, k and cols")
        _positive(spec, m=m, k=k, cols=cols)
        return Workload(spec, (MatMul("matmul", m=m, k=k, n=cols),))

    cls = SpMV if kind == "spmv" else SpMM
    if "file" in args:
        path = args["file"]
        try:
            mat = sparse.read_mtx(path)
        except (OSError, ValueError) as exc:
            raise UserError(f"workload '{spec}': cannot read Matrix Market file {path}: {exc}") from None
        m, k = mat.shape
        cols = 1 if kind == "spmv" else (cols or k)
        _positive(spec, cols=cols)
        layer = cls(kind, m=m, k=k, n=cols, sparsity=1.0 - mat.nnz / (m * k),
                    pattern=SparsePattern(source=path), nnz=int(mat.nnz))
        return Workload(spec, (layer,))

    if None in (m, k, cols):
        raise UserError(f"workload '{spec}': give n (square) or m and k, plus sparsity")
    _positive(spec, m=m, k=k, cols=cols)
    sparsity = _num(args, "sparsity", float, spec, 0.0)
    bias = _num(args, "bias", float, spec, 0.0)
    seed = _num(args, "seed", int, spec, 0)
    if not 0.0 <= sparsity < 1.0:
        raise UserError(f"workload '{spec}': sparsity={sparsity} must be in [0, 1)")
    if bias < 0.0:
        raise UserError(f"workload '{spec}': bias={bias} must be >= 0")
    if seed < 0:
        raise UserError(f"workload '{spec}': seed={seed} must be >= 0")
    nnz = m * k * (1.0 - sparsity)
    if nnz > MAX_GENERATED_NNZ or m > MAX_GENERATED_ROWS:
        raise UserError(
            f"workload '{spec}': a generated {m} x {k} matrix at sparsity {sparsity:g} has ~{nnz:.3g} nonzeros "
            f"in {m} rows; at most {MAX_GENERATED_NNZ:.0e} nonzeros and {MAX_GENERATED_ROWS:.0e} rows are generated "
            "(raise sparsity, lower n, or give a Matrix Market file with file=PATH)"
        )
    mat = sparse.generate(m, k, sparsity, bias, seed)
    pattern = SparsePattern(source="biased" if bias > 0 else "uniform", bias=bias, seed=seed)
    layer = cls(kind, m=m, k=k, n=cols, sparsity=sparsity, pattern=pattern, nnz=int(mat.nnz))
    return Workload(spec, (layer,))


# Generated matrices live in memory (CSR: ~16 bytes per nonzero while generated, one loop step
# per row): the largest that fits comfortably on a 24 GiB, 2-core machine.
MAX_GENERATED_NNZ = 50_000_000
MAX_GENERATED_ROWS = 10_000_000


def _positive(spec: str, **sizes: int) -> None:
    for key, value in sizes.items():
        if value < 1:
            raise UserError(f"workload '{spec}': {key}={value} must be >= 1")


def matrix_of(layer: SpMM):
    """The sparse A of an SpMM/SpMV layer, rebuilt (cached) from its pattern."""
    p = layer.pattern
    if p.source in ("uniform", "biased"):
        return sparse.generate(layer.m, layer.k, layer.sparsity, p.bias, p.seed)
    return sparse.read_mtx(p.source)

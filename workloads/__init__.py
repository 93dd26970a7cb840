"""Workload models: the layer IR, built-in networks, parametric matrix
products, sparse matrices, and users' own workload files.

``load_workload(spec)`` turns what a user types (a built-in name, a
parametric string, or a file path) into a :class:`Workload`.
"""

from __future__ import annotations

from pathlib import Path

from workloads.errors import UserError, allowed

from .layers import FC, KINDS, Conv2D, Layer, MatMul, Pool, SparsePattern, SpMM, SpMV, Vector, Workload
from .networks import BUILTINS, builtin

__all__ = [
    "FC", "KINDS", "Conv2D", "Layer", "MatMul", "Pool", "SparsePattern", "SpMM", "SpMV", "Vector",
    "Workload", "BUILTINS", "builtin", "load_workload", "FORMS", "file_kind", "split_file_options",
    "with_skip_unknown",
]

FORMS = ("a built-in name (with options, e.g. 'bert_encoder:seq=128'), 'matmul:n=..', 'spmm:n=..,sparsity=..', "
         "'spmv:..', or a .yaml/.mtx/.mtx.gz/.onnx file (an ONNX file takes ':skip_unknown=true')")
#: file suffixes a workload path may end in -> loader
FILE_KINDS = {".yaml": "yaml", ".yml": "yaml", ".mtx": "mtx", ".mtx.gz": "mtx", ".onnx": "onnx"}
#: options a file workload accepts after a colon (``net.onnx:skip_unknown=true``)
FILE_OPTIONS = {"onnx": ("skip_unknown",)}

_CACHE: dict[str, Workload] = {}


def load_workload(spec: str | Workload) -> Workload:
    """Resolve a workload spec; results are cached per spec string."""
    if isinstance(spec, Workload):
        return spec
    if spec in _CACHE:
        return _CACHE[spec]
    wl = _load(spec)
    _CACHE[spec] = wl
    return wl


def file_kind(path: str) -> str | None:
    """``yaml``, ``mtx`` or ``onnx`` for a workload file name (by suffix), else None."""
    low = path.lower()
    return next((kind for suffix, kind in FILE_KINDS.items() if low.endswith(suffix)), None)


def split_file_options(spec: str) -> tuple[str, str]:
    """``("net.onnx", "skip_unknown=true")`` for ``"net.onnx:skip_unknown=true"``; options may be empty."""
    for suffix in FILE_KINDS:
        i = spec.lower().find(suffix + ":")
        if i >= 0:
            return spec[:i + len(suffix)], spec[i + len(suffix) + 1:]
    return spec, ""


def with_skip_unknown(spec: str) -> str:
    """``spec`` with the ONNX option ``skip_unknown=true`` (other workloads unchanged)."""
    path, options = split_file_options(spec)
    if file_kind(path) != "onnx" or "skip_unknown" in options:
        return spec
    return f"{path}:{options + ',' if options else ''}skip_unknown=true"


def _file_options(spec: str, kind: str, text: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        if key not in FILE_OPTIONS.get(kind, ()):
            raise UserError(f"workload '{spec}': unknown option '{key}'; allowed: {allowed(FILE_OPTIONS.get(kind, ()))}")
        opts[key] = value or "true"
    return opts


def _flag(spec: str, key: str, value: str | None) -> bool:
    if value is None:
        return False
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise UserError(f"workload '{spec}': {key}={value!r}; allowed: true, false")


def _load(spec: str) -> Workload:
    from . import networks, parametric

    head = spec.partition(":")[0]
    if spec in BUILTINS or head in BUILTINS:
        return networks.parse(spec)
    if head in parametric.KINDS:
        return parametric.parse(spec)
    path, options = split_file_options(spec)
    kind = file_kind(path)
    if kind is not None and not Path(path).is_file():
        raise UserError(f"workload file {path} not found")
    opts = _file_options(spec, kind, options) if kind else {}
    if kind == "yaml":
        from . import userfile

        return userfile.load(path)
    if kind == "mtx":
        wl = parametric.parse(f"spmv:file={path}")
        return Workload(path, wl.layers)
    if kind == "onnx":
        try:
            from . import onnx_import
        except ImportError:
            raise UserError(f"workload {spec}: ONNX import is not available in this version") from None
        return onnx_import.load(path, skip_unknown=_flag(spec, "skip_unknown", opts.get("skip_unknown")))
    raise UserError(f"unknown workload '{spec}'; allowed: {allowed(BUILTINS)}, or {FORMS}")

"""Layer IR: the one place where a layer's derived sizes are computed.

Every model reads shapes, MAC counts and element counts from here, so two
models can never disagree about what a layer *is* (spec `workloads.md`).
Layers are frozen dataclasses; derived sizes are plain properties over the
declared fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

KINDS = ("conv", "pool", "fc", "matmul", "spmm", "spmv", "vector")


def _conv_out(size: int, kernel: int, stride: int, pad: int, dilation: int = 1) -> int:
    """Output extent of a convolution/pooling window along one axis."""
    eff = dilation * (kernel - 1) + 1
    return (size + 2 * pad - eff) // stride + 1


@dataclass(frozen=True)
class Layer:
    """Common fields of every layer. ``activation`` is fused (e.g. ReLU)."""

    name: str

    kind: str = field(init=False, default="")

    # --- sizes every model needs (overridden per layer type) ---
    @property
    def macs(self) -> int:  # multiply-accumulates
        return 0

    @property
    def vector_ops(self) -> int:
        """Operations that are not multiply-accumulates (comparisons, adds, exp, ...)."""
        return 0

    @property
    def input_elems(self) -> int:
        return 0

    @property
    def weight_elems(self) -> int:
        return 0

    @property
    def output_elems(self) -> int:
        return 0

    def describe(self) -> str:
        return self.kind


@dataclass(frozen=True)
class Conv2D(Layer):
    """2-D convolution. ``in_ch``/``out_ch`` are totals; ``groups`` splits both."""

    in_ch: int = 1
    out_ch: int = 1
    kernel_h: int = 1
    kernel_w: int = 1
    in_h: int = 1
    in_w: int = 1
    stride: int = 1
    padding: int = 0
    groups: int = 1
    dilation: int = 1
    activation: str | None = None
    kind: str = field(init=False, default="conv")

    def __post_init__(self) -> None:
        if self.in_ch % self.groups or self.out_ch % self.groups:
            raise ValueError(
                f"layer {self.name}: groups={self.groups} must divide in_ch={self.in_ch} "
                f"and out_ch={self.out_ch}"
            )
        if self.out_h < 1 or self.out_w < 1:
            raise ValueError(f"layer {self.name}: kernel larger than padded input")

    @property
    def ic_per_group(self) -> int:
        return self.in_ch // self.groups

    @property
    def oc_per_group(self) -> int:
        return self.out_ch // self.groups

    @property
    def out_h(self) -> int:
        return _conv_out(self.in_h, self.kernel_h, self.stride, self.padding, self.dilation)

    @property
    def out_w(self) -> int:
        return _conv_out(self.in_w, self.kernel_w, self.stride, self.padding, self.dilation)

    @property
    def macs(self) -> int:
        return self.out_ch * self.out_h * self.out_w * self.ic_per_group * self.kernel_h * self.kernel_w

    @property
    def input_elems(self) -> int:
        return self.in_ch * self.in_h * self.in_w

    @property
    def weight_elems(self) -> int:
        return self.out_ch * self.ic_per_group * self.kernel_h * self.kernel_w

    @property
    def bias_elems(self) -> int:
        return self.out_ch

    @property
    def output_elems(self) -> int:
        return self.out_ch * self.out_h * self.out_w

    def describe(self) -> str:
        g = f" g{self.groups}" if self.groups > 1 else ""
        return (
            f"conv {self.in_ch}->{self.out_ch}{g} {self.kernel_h}x{self.kernel_w}/s{self.stride}"
            f" p{self.padding} @{self.in_h}x{self.in_w}->{self.out_h}x{self.out_w}"
        )


@dataclass(frozen=True)
class Pool(Layer):
    """Max or average pooling over ``channels`` planes of ``in_h`` x ``in_w``."""

    channels: int = 1
    in_h: int = 1
    in_w: int = 1
    kernel: int = 2
    stride: int = 2
    padding: int = 0
    mode: Literal["max", "avg"] = "max"
    kind: str = field(init=False, default="pool")

    @property
    def out_h(self) -> int:
        return _conv_out(self.in_h, self.kernel, self.stride, self.padding)

    @property
    def out_w(self) -> int:
        return _conv_out(self.in_w, self.kernel, self.stride, self.padding)

    @property
    def ops(self) -> int:
        """Comparisons (max) or additions (avg): one per window element."""
        return self.output_elems * self.kernel * self.kernel

    @property
    def vector_ops(self) -> int:
        return self.ops

    @property
    def input_elems(self) -> int:
        return self.channels * self.in_h * self.in_w

    @property
    def output_elems(self) -> int:
        return self.channels * self.out_h * self.out_w

    def describe(self) -> str:
        return (
            f"{self.mode}pool {self.kernel}x{self.kernel}/s{self.stride} {self.channels}"
            f"@{self.in_h}x{self.in_w}->{self.out_h}x{self.out_w}"
        )


@dataclass(frozen=True)
class FC(Layer):
    """Fully connected: ``outputs`` neurons over ``inputs`` values, ``batch`` vectors."""

    inputs: int = 1
    outputs: int = 1
    batch: int = 1
    activation: str | None = None
    kind: str = field(init=False, default="fc")

    @property
    def macs(self) -> int:
        return self.inputs * self.outputs * self.batch

    @property
    def input_elems(self) -> int:
        return self.inputs * self.batch

    @property
    def weight_elems(self) -> int:
        return self.inputs * self.outputs

    @property
    def bias_elems(self) -> int:
        return self.outputs

    @property
    def output_elems(self) -> int:
        return self.outputs * self.batch

    def describe(self) -> str:
        b = f" x{self.batch}" if self.batch > 1 else ""
        return f"fc {self.inputs}->{self.outputs}{b}"


@dataclass(frozen=True)
class MatMul(Layer):
    """Dense C[m x n] = A[m x k] @ B[k x n]. A plays the weights' role.

    ``batch`` independent products of that shape (attention's per-head
    activation x activation products): every size counts ``batch`` times.
    Models cost one product and repeat it (``archmodels.base``).
    """

    m: int = 1
    k: int = 1
    n: int = 1
    batch: int = 1
    kind: str = field(init=False, default="matmul")

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.k * self.n

    @property
    def input_elems(self) -> int:  # B
        return self.batch * self.k * self.n

    @property
    def weight_elems(self) -> int:  # A
        return self.batch * self.m * self.k

    @property
    def output_elems(self) -> int:
        return self.batch * self.m * self.n

    @property
    def dense_macs(self) -> int:
        return self.batch * self.m * self.k * self.n

    def describe(self) -> str:
        b = f" x{self.batch}" if self.batch > 1 else ""
        return f"matmul {self.m}x{self.k} @ {self.k}x{self.n}{b}"


#: Operations per element of the vector operators (``Vector.op``), counted so
#: that a fused operator and its unfused exporter idiom cost the same: an
#: elementwise op or a transcendental function (exp, erf, sqrt, tanh: one pass
#: of a function unit) is 1; composites add their parts, e.g. GELU =
#: x * 0.5 * (1 + erf(x / sqrt 2)) = div, erf, add, mul, mul = 5.
#: Elementwise ops count per output element.
ELEMENTWISE_OPS: dict[str, int] = {
    "add": 1, "sub": 1, "mul": 1, "div": 1, "pow": 1, "sqrt": 1, "reciprocal": 1, "neg": 1, "abs": 1,
    "exp": 1, "log": 1, "erf": 1, "tanh": 1, "relu": 1, "clip": 1, "leaky_relu": 1, "max": 1, "min": 1,
    "where": 1, "equal": 1, "less": 1, "greater": 1, "not": 1, "and": 1, "or": 1,
    "sigmoid": 3,          # exp(-x), add 1, reciprocal
    "hard_sigmoid": 3,     # mul, add, clip
    "hard_swish": 4,       # hard_sigmoid + mul
    "silu": 4,             # sigmoid + mul
    "gelu": 5,             # div, erf, add, mul, mul
    "gelu_tanh": 9,        # x^3, mul, add, mul, tanh, add, mul, mul, mul
    "softplus": 3,         # exp, add, log
    "batchnorm": 2,        # inference-time scale and shift
    "col2im": 1,           # overlap-add of a transposed convolution
}


@dataclass(frozen=True)
class Vector(Layer):
    """Work without multiply-accumulates: elementwise ops, reductions, normalisations, softmax.

    ``op`` names the operation; ``ops`` is its operation count (built by the
    constructors below from :data:`ELEMENTWISE_OPS`), ``in_elems`` /
    ``out_elems`` the activation elements read and written (what DRAM traffic
    is costed on), ``param_elems`` constants it reads (a LayerNorm's scale
    and shift, a bias). ``rows`` is the number of independent reductions.
    """

    op: str = "add"
    ops: int = 0
    in_elems: int = 0
    out_elems: int = 0
    param_elems: int = 0
    rows: int = 1
    kind: str = field(init=False, default="vector")

    @property
    def vector_ops(self) -> int:
        return self.ops

    @property
    def input_elems(self) -> int:
        return self.in_elems

    @property
    def weight_elems(self) -> int:
        return self.param_elems

    @property
    def output_elems(self) -> int:
        return self.out_elems

    def describe(self) -> str:
        return f"{self.op} {self.in_elems}->{self.out_elems} ({self.ops} ops)"


def elementwise(name: str, op: str, out_elems: int, in_elems: int | None = None, param_elems: int = 0) -> Vector:
    """An elementwise operator over ``out_elems`` outputs (inputs default to the same count)."""
    if op not in ELEMENTWISE_OPS:
        raise ValueError(f"layer {name}: unknown elementwise op '{op}'")
    return Vector(name, op=op, ops=ELEMENTWISE_OPS[op] * out_elems,
                  in_elems=out_elems if in_elems is None else in_elems, out_elems=out_elems,
                  param_elems=param_elems, rows=out_elems)


def reduction(name: str, op: str, in_elems: int, out_elems: int) -> Vector:
    """A reduction of ``in_elems`` to ``out_elems`` (sum, max, min: one op per input; mean: + one divide per output)."""
    ops = in_elems + (out_elems if op == "reduce_mean" else 0)
    return Vector(name, op=op, ops=ops, in_elems=in_elems, out_elems=out_elems, rows=out_elems)


def softmax(name: str, elems: int, rows: int) -> Vector:
    """Softmax over ``rows`` rows: max, subtract, exp, sum, divide = 5 ops per element."""
    return Vector(name, op="softmax", ops=5 * elems, in_elems=elems, out_elems=elems, rows=rows)


def layer_norm(name: str, elems: int, rows: int, affine_elems: int = 0) -> Vector:
    """LayerNorm over ``rows`` rows: 7 ops per element + 4 per row.

    The unfused idiom: mean (n + r), x - mean (n), square (n), mean (n + r),
    + eps (r), sqrt (r), divide (n), * gamma (n), + beta (n).
    """
    return Vector(name, op="layer_norm", ops=7 * elems + 4 * rows, in_elems=elems, out_elems=elems,
                  param_elems=affine_elems, rows=rows)


@dataclass(frozen=True)
class SparsePattern:
    """How the nonzeros of a sparse matrix were made (the pattern descriptor).

    ``source`` is ``"uniform"`` (each entry nonzero with probability
    1 - sparsity), ``"biased"`` (row densities spread by ``bias``) or a
    Matrix Market path. The matrix itself is built on demand by
    :func:`workloads.sparse.matrix_of`, reproducibly from ``seed``.
    """

    source: str = "uniform"
    bias: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class SpMM(MatMul):
    """Sparse A[m x k] (fraction ``sparsity`` of zeros) times dense B[k x n]."""

    sparsity: float = 0.0
    pattern: SparsePattern = SparsePattern()
    nnz: int = 0  # nonzeros of A, exact (from the generated or read matrix)
    kind: str = field(init=False, default="spmm")

    @property
    def macs(self) -> int:  # useful MACs: one per nonzero of A per column of B
        return self.nnz * self.n

    @property
    def weight_elems(self) -> int:  # nonzeros of A (values only)
        return self.nnz

    def describe(self) -> str:
        return f"spmm {self.m}x{self.k} (nnz {self.nnz}, sparsity {self.sparsity:.3g}) @ {self.k}x{self.n}"


@dataclass(frozen=True)
class SpMV(SpMM):
    """Sparse A[m x k] times a dense vector (n == 1)."""

    kind: str = field(init=False, default="spmv")

    def describe(self) -> str:
        return f"spmv {self.m}x{self.k} (nnz {self.nnz}, sparsity {self.sparsity:.3g})"


@dataclass(frozen=True)
class Workload:
    """A named, ordered list of layers (a network, a layer, a matrix product)."""

    name: str
    layers: tuple[Layer, ...]
    #: layers that are not followed by their successor in the original network (a layer costed
    #: elsewhere sat between them, e.g. a vector layer): a model must not fuse across them
    breaks: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        names = [layer.name for layer in self.layers]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"workload {self.name}: duplicate layer names {sorted(dup)}")

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise KeyError(name)

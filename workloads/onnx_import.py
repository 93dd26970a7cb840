"""Import an ONNX model as a :class:`~workloads.layers.Workload` (``load(path)``).

Shapes come from ONNX shape inference (``onnx.shape_inference``, strict,
with data propagation for Reshape), so every layer is built from the shapes
the graph really has, not re-derived from attributes.

What becomes what
-----------------
=====================================  =========================================
ONNX operator                          layer IR
=====================================  =========================================
Conv (2-D; groups, strides, pads,      ``Conv2D`` (depthwise: groups == channels)
dilations, auto_pad)
Gemm; MatMul with a constant B         ``FC`` (inputs K, outputs N, batch M)
MatMul of two activations              ``MatMul`` (m = N, k = K, n = M x batch)
MaxPool / AveragePool                  ``Pool`` (max / avg)
GlobalAveragePool / GlobalMaxPool      ``Pool`` with the whole plane as window
Relu, Clip, LeakyRelu                  fused into the Conv/FC that produces
                                       their input (``activation``), when that
                                       output feeds nothing else
BatchNormalization                     folded into the Conv that produces its
                                       input (inference-time scale and shift)
Add, Sum, Concat, Flatten, Reshape,    no layer: they carry no MACs. Recorded
Softmax, Dropout, Identity, Squeeze,   in ``OnnxWorkload.graph_ops`` with their
Unsqueeze, Shape, Gather; activations  output size and inputs, so residual and
that cannot be fused                   branch structure stays visible
=====================================  =========================================

Any other operator is refused with one line listing all unsupported
operators of the file (:class:`~workloads.errors.UserError`).

Representation limits (the IR has one stride, one symmetric padding and a
square pooling window): different strides or dilations along H and W are
refused. Asymmetric or ``auto_pad`` padding and ``ceil_mode`` pooling are
represented by an input pre-padded to the size that yields the inferred
output with ``padding = 0`` (as SCALE-Sim does); output sizes and MACs stay
exact, ``input_elems`` then counts the padding. A non-square global pooling
pads the plane to a square. A symbolic batch dimension is taken as 1;
convolutions and pooling need batch 1 (the IR's Conv2D has no batch).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import onnx
from onnx import numpy_helper, shape_inference

from workloads.errors import UserError

from .layers import FC, Conv2D, Layer, MatMul, Pool, Workload

LAYER_OPS = ("Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")
ACTIVATIONS = {"Relu": "relu", "Clip": "clip", "LeakyRelu": "leaky_relu"}
FOLDED = ("BatchNormalization",)
GRAPH_OPS = ("Add", "Sum", "Concat", "Flatten", "Reshape", "Softmax", "Dropout", "Identity",
             "Squeeze", "Unsqueeze", "Shape", "Gather", "Constant")
SUPPORTED = LAYER_OPS + tuple(ACTIVATIONS) + FOLDED + GRAPH_OPS

# input slots that hold parameters, not activations
_WEIGHT_SLOTS = {"Conv": (1, 2), "Gemm": (1, 2), "BatchNormalization": (1, 2, 3, 4), "Clip": (1, 2),
                 "Reshape": (1,), "MatMul": (1,)}


@dataclass(frozen=True)
class GraphOp:
    """An imported operator that is not a layer (no MACs): kept for the record.

    ``fused_into`` names the layer an activation or a batch normalisation was
    folded into; ``None`` for operators that stand alone (Add, Concat, ...).
    """

    name: str
    op: str
    output_elems: int
    inputs: tuple[str, ...] = ()
    fused_into: str | None = None


@dataclass(frozen=True)
class OnnxWorkload(Workload):
    """A workload imported from ONNX: its layers plus the operators that are not layers."""

    source: str = ""
    graph_ops: tuple[GraphOp, ...] = ()


def load(path: str | Path) -> OnnxWorkload:
    """Read ``path`` and turn its graph into layers (see module doc)."""
    path = Path(path)
    model = _read(path)
    graph = model.graph
    unsupported = Counter(n.op_type for n in graph.node if n.op_type not in SUPPORTED)
    if unsupported:
        listed = ", ".join(f"{op} ({k})" for op, k in sorted(unsupported.items()))
        raise UserError(f"{path}: unsupported ONNX operators: {listed}; supported: {', '.join(SUPPORTED)}")
    model = _infer(path, model)
    return _Importer(path, model).run()


def _read(path: Path) -> onnx.ModelProto:
    try:
        return onnx.load(str(path))
    except OSError as exc:
        raise UserError(f"{path}: cannot read ONNX file: {exc.strerror or exc}") from None
    except Exception as exc:  # protobuf DecodeError and friends
        raise UserError(f"{path}: not a valid ONNX model ({type(exc).__name__})") from None


def _infer(path: Path, model: onnx.ModelProto) -> onnx.ModelProto:
    """Fix a symbolic batch dimension to 1, then run strict shape inference."""
    inits = {t.name for t in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        dims = inp.type.tensor_type.shape.dim
        for i, d in enumerate(dims):
            if d.HasField("dim_value"):
                continue
            if i == 0:
                d.dim_value = 1
            else:
                label = d.dim_param or "?"
                raise UserError(f"{path}: input '{inp.name}' has a symbolic dimension {i} ('{label}'); "
                                "export the model with fixed input sizes")
    try:
        return shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"{path}: ONNX shape inference failed: {first}") from None


class _Importer:
    """One pass over the (topologically ordered) nodes of an inferred model."""

    def __init__(self, path: Path, model: onnx.ModelProto):
        self.path = path
        g = model.graph
        self.shapes: dict[str, tuple[int, ...]] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            shape = _shape_of(vi)
            if shape is not None:
                self.shapes[vi.name] = shape
        for t in g.initializer:
            self.shapes[t.name] = tuple(int(d) for d in t.dims)
        self.constants = {t.name for t in g.initializer}
        for node in g.node:
            if node.op_type == "Constant":
                self.constants.update(node.output)
                for a in node.attribute:
                    if a.name == "value":
                        self.shapes[node.output[0]] = tuple(numpy_helper.to_array(a.t).shape)
        # graph inputs used only as parameters (weights supplied as inputs)
        params_use: dict[str, bool] = {}
        for node in g.node:
            for slot, name in enumerate(node.input):
                is_param = slot in _WEIGHT_SLOTS.get(node.op_type, ())
                params_use[name] = params_use.get(name, True) and is_param
        self.constants.update(i.name for i in g.input if params_use.get(i.name, False))
        self.consumers = Counter(name for node in g.node for name in node.input if name)
        self.consumers.update(o.name for o in g.output)
        self.nodes = list(g.node)
        self.layers: list[Layer] = []
        self.index: dict[str, int] = {}  # layer name -> position in self.layers
        self.producer: dict[str, str] = {}  # tensor -> layer that produced it (for fusion)
        self.ops: list[GraphOp] = []
        self.names: set[str] = set()

    # ---- helpers ----
    def shape(self, tensor: str, node: onnx.NodeProto) -> tuple[int, ...]:
        try:
            return self.shapes[tensor]
        except KeyError:
            raise UserError(f"{self.path}: node {self._label(node)}: the shape of '{tensor}' "
                            "is unknown after shape inference") from None

    def _label(self, node: onnx.NodeProto) -> str:
        return f"'{node.name}' ({node.op_type})" if node.name else f"({node.op_type})"

    def _fail(self, node: onnx.NodeProto, msg: str) -> UserError:
        return UserError(f"{self.path}: node {self._label(node)}: {msg}")

    def _name(self, node: onnx.NodeProto, i: int) -> str:
        base = node.name or f"{node.op_type}_{i}"
        name, k = base, 1
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def _add_layer(self, layer: Layer, node: onnx.NodeProto) -> None:
        self.index[layer.name] = len(self.layers)
        self.layers.append(layer)
        self.producer[node.output[0]] = layer.name

    def _record(self, node: onnx.NodeProto, name: str, fused_into: str | None = None) -> None:
        out = node.output[0] if node.output else ""
        elems = math.prod(self.shapes.get(out, ())) if out in self.shapes else 0
        self.ops.append(GraphOp(name, node.op_type, int(elems), tuple(i for i in node.input if i), fused_into))

    # ---- the pass ----
    def run(self) -> OnnxWorkload:
        for i, node in enumerate(self.nodes):
            name = self._name(node, i)
            handler = getattr(self, f"_op_{node.op_type}", None)
            if node.op_type in ("MaxPool", "AveragePool"):
                handler = self._op_pool
            elif node.op_type in ("GlobalAveragePool", "GlobalMaxPool"):
                handler = self._op_global_pool
            elif node.op_type in ACTIVATIONS:
                handler = self._op_activation
            if node.op_type == "Constant":
                continue  # a parameter, not an operation
            if handler is None:  # a graph op: no layer
                self._record(node, name)
            else:
                handler(node, name)
        if not self.layers:
            raise UserError(f"{self.path}: the graph has no layer (Conv, Gemm, MatMul or pooling)")
        try:
            return OnnxWorkload(self.path.stem, tuple(self.layers), source=str(self.path), graph_ops=tuple(self.ops))
        except ValueError as exc:
            raise UserError(f"{self.path}: {exc}") from None

    def _attrs(self, node: onnx.NodeProto) -> dict[str, Any]:
        return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

    def _nchw(self, node: onnx.NodeProto, tensor: str) -> tuple[int, int, int]:
        shape = self.shape(tensor, node)
        if len(shape) != 4:
            raise self._fail(node, f"input of rank {len(shape)}; only 2-D images (N, C, H, W) are supported")
        if shape[0] != 1:
            raise self._fail(node, f"batch {shape[0]}; convolutions and pooling are imported with batch 1")
        return shape[1], shape[2], shape[3]

    def _same(self, node: onnx.NodeProto, key: str, values: list[int]) -> int:
        """The one value of an attribute given per axis (H, W); refused if they differ."""
        if len(set(values)) != 1:
            raise self._fail(node, f"{key} {values} differ along H and W; the layer IR has one value for both")
        return int(values[0])

    @staticmethod
    def _spatial(h, w, k_h, k_w, stride, dil, pads, out_h, out_w) -> tuple[int, int, int]:
        """(in_h, in_w, padding) giving the inferred output with the IR's symmetric padding."""
        top, left, bottom, right = pads
        eff_h, eff_w = dil * (k_h - 1) + 1, dil * (k_w - 1) + 1
        if top == bottom == left == right and (h + 2 * top - eff_h) // stride + 1 == out_h \
                and (w + 2 * left - eff_w) // stride + 1 == out_w:
            return h, w, top
        # pre-padded input: the smallest one that yields the inferred output
        return (out_h - 1) * stride + eff_h, (out_w - 1) * stride + eff_w, 0

    # ---- operators ----
    def _op_Conv(self, node: onnx.NodeProto, name: str) -> None:
        c, h, w = self._nchw(node, node.input[0])
        wshape = self.shape(node.input[1], node)
        oshape = self.shape(node.output[0], node)
        a = self._attrs(node)
        kh, kw = int(wshape[2]), int(wshape[3])
        stride = self._same(node, "strides", list(a.get("strides", [1, 1])))
        dil = self._same(node, "dilations", list(a.get("dilations", [1, 1])))
        pads = list(a.get("pads", [0, 0, 0, 0]))
        pads = [pads[0], pads[1], pads[2], pads[3]]
        in_h, in_w, pad = self._spatial(h, w, kh, kw, stride, dil, pads, oshape[2], oshape[3])
        try:
            layer = Conv2D(name, in_ch=c, out_ch=int(wshape[0]), kernel_h=kh, kernel_w=kw, in_h=in_h, in_w=in_w,
                           stride=stride, padding=pad, groups=int(a.get("group", 1)), dilation=dil)
        except ValueError as exc:
            raise self._fail(node, str(exc)) from None
        self._add_layer(layer, node)

    def _op_Gemm(self, node: onnx.NodeProto, name: str) -> None:
        a = self._attrs(node)
        sa, sb = self.shape(node.input[0], node), self.shape(node.input[1], node)
        m, k = (sa[1], sa[0]) if a.get("transA", 0) else (sa[0], sa[1])
        n = sb[0] if a.get("transB", 0) else sb[1]
        self._product(node, name, m, k, n, node.input[1] in self.constants)

    def _op_MatMul(self, node: onnx.NodeProto, name: str) -> None:
        sa, sb = self.shape(node.input[0], node), self.shape(node.input[1], node)
        if len(sa) < 2 or len(sb) < 2:
            raise self._fail(node, "1-D operands are not supported")
        k, n = sa[-1], sb[-1]
        batch = math.prod(self.shape(node.output[0], node)[:-2])
        if node.input[1] in self.constants and len(sb) == 2:
            self._product(node, name, math.prod(sa[:-1]), k, n, True)
        else:
            self._product(node, name, sa[-2] * batch, k, n, False)

    def _product(self, node, name: str, m: int, k: int, n: int, constant_b: bool) -> None:
        """Y[m x n] = X[m x k] W[k x n]: FC when W is a parameter, else a matrix product."""
        if constant_b:
            layer: Layer = FC(name, inputs=int(k), outputs=int(n), batch=int(m))
        else:  # Y^T = W^T X^T: the second operand plays the weights' role
            layer = MatMul(name, m=int(n), k=int(k), n=int(m))
        self._add_layer(layer, node)

    def _op_pool(self, node: onnx.NodeProto, name: str) -> None:
        c, h, w = self._nchw(node, node.input[0])
        oshape = self.shape(node.output[0], node)
        a = self._attrs(node)
        kernel = self._same(node, "kernel_shape", list(a["kernel_shape"]))
        stride = self._same(node, "strides", list(a.get("strides", [1, 1])))
        pads = list(a.get("pads", [0, 0, 0, 0]))
        in_h, in_w, pad = self._spatial(h, w, kernel, kernel, stride, 1, pads, oshape[2], oshape[3])
        mode = "max" if node.op_type == "MaxPool" else "avg"
        self._add_layer(Pool(name, channels=c, in_h=in_h, in_w=in_w, kernel=kernel, stride=stride,
                             padding=pad, mode=mode), node)

    def _op_global_pool(self, node: onnx.NodeProto, name: str) -> None:
        c, h, w = self._nchw(node, node.input[0])
        k = max(h, w)
        mode = "max" if node.op_type == "GlobalMaxPool" else "avg"
        self._add_layer(Pool(name, channels=c, in_h=k, in_w=k, kernel=k, stride=k, mode=mode), node)

    def _fusable(self, tensor: str, kinds: tuple[type, ...]) -> str | None:
        """The layer producing ``tensor`` if it is of ``kinds`` and ``tensor`` feeds one node only."""
        owner = self.producer.get(tensor)
        if owner is None or self.consumers[tensor] != 1:
            return None
        layer = self.layers[self.index[owner]]
        return owner if isinstance(layer, kinds) else None

    def _op_activation(self, node: onnx.NodeProto, name: str) -> None:
        owner = self._fusable(node.input[0], (Conv2D, FC))
        if owner is not None and self.layers[self.index[owner]].activation is None:
            i = self.index[owner]
            self.layers[i] = replace(self.layers[i], activation=ACTIVATIONS[node.op_type])
            self.producer[node.output[0]] = owner
            self._record(node, name, fused_into=owner)
        else:
            self._record(node, name)

    def _op_BatchNormalization(self, node: onnx.NodeProto, name: str) -> None:
        owner = self._fusable(node.input[0], (Conv2D,))
        if owner is not None:
            self.producer[node.output[0]] = owner  # a following Relu still fuses
        self._record(node, name, fused_into=owner)


def _shape_of(vi: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    dims = vi.type.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    return tuple(int(d.dim_value) for d in dims)


__all__ = ["GraphOp", "OnnxWorkload", "SUPPORTED", "load"]

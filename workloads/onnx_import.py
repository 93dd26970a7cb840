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
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

from workloads.errors import UserError

from .layers import FC, Conv2D, Layer, MatMul, Pool, Vector, Workload, elementwise, layer_norm, reduction, softmax

LAYER_OPS = ("Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
             "GlobalMaxPool")
#: activations fused into the Conv/Gemm that produces their input (when that output feeds nothing else)
ACTIVATIONS = {"Relu": "relu", "Clip": "clip", "LeakyRelu": "leaky_relu"}
FOLDED = ("BatchNormalization",)
#: elementwise operators -> ``Vector`` op (operation counts in ``workloads.layers.ELEMENTWISE_OPS``)
ELEMENTWISE = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Sqrt": "sqrt",
    "Reciprocal": "reciprocal", "Neg": "neg", "Abs": "abs", "Exp": "exp", "Log": "log", "Erf": "erf",
    "Tanh": "tanh", "Sigmoid": "sigmoid", "HardSigmoid": "hard_sigmoid", "HardSwish": "hard_swish",
    "Relu": "relu", "Clip": "clip", "LeakyRelu": "leaky_relu", "PRelu": "leaky_relu", "Gelu": "gelu",
    "Softplus": "softplus", "Where": "where", "Max": "max", "Min": "min", "Equal": "equal", "Less": "less",
    "Greater": "greater", "Not": "not", "And": "and", "Or": "or", "Sum": "add",
}
REDUCTIONS = {"ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max",
              "ReduceMin": "reduce_min"}
NORMALIZATIONS = ("LayerNormalization", "Softmax", "LogSoftmax")
#: zero-compute data movement: no layer, the tensor sizes flow through shape inference
GRAPH_OPS = ("Concat", "Flatten", "Reshape", "Dropout", "Identity", "Squeeze", "Unsqueeze", "Shape", "Gather",
             "Transpose", "Slice", "Split", "Expand", "Cast", "ConstantOfShape", "Range", "Size", "Tile", "Pad",
             "Constant")
SUPPORTED = tuple(dict.fromkeys(LAYER_OPS + tuple(ACTIVATIONS) + FOLDED + tuple(ELEMENTWISE) + tuple(REDUCTIONS)
                                + NORMALIZATIONS + GRAPH_OPS))
#: operators whose output depends only on their inputs' shapes (constant once shapes are fixed)
_SHAPE_ONLY = ("Shape", "Size", "Constant")

# input slots that hold parameters, not activations
_WEIGHT_SLOTS = {"Conv": (1, 2), "ConvTranspose": (1, 2), "Gemm": (1, 2), "BatchNormalization": (1, 2, 3, 4),
                 "Clip": (1, 2), "Reshape": (1,), "MatMul": (1,), "LayerNormalization": (1, 2), "Add": (1,),
                 "Mul": (1,), "PRelu": (1,)}


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


def load(path: str | Path, skip_unknown: bool = False) -> OnnxWorkload:
    """Read ``path`` and turn its graph into layers (see module doc).

    ``skip_unknown``: an operator outside :data:`SUPPORTED` becomes a zero-cost
    vector layer (op ``skipped:<Op>``) and one warning line goes to stderr,
    instead of the one-line refusal.
    """
    path = Path(path)
    model = _read(path)
    unknown = _unknown_ops(model)
    if unknown and not skip_unknown:
        listed = ", ".join(f"{op} ({k})" for op, k in sorted(unknown.items()))
        raise UserError(f"{path}: unsupported ONNX operators: {listed}; supported: {', '.join(SUPPORTED)} "
                        "(or --skip-unknown to cost them as zero)")
    model = _infer(path, model, strict=not unknown)
    wl = _Importer(path, model, skip_unknown).run()
    if unknown:
        listed = ", ".join(f"{op} ({k})" for op, k in sorted(unknown.items()))
        print(f"dse: warning: {path}: unknown ONNX operators costed as zero: {listed}", file=sys.stderr)
    return wl


def _constant_tensors(graph: onnx.GraphProto) -> set[str]:
    """Tensors known before any input arrives: initializers, Constant outputs, and the outputs
    of every node whose inputs are all such tensors (a constant subgraph, folded) or that
    reads only shapes (Shape, Size)."""
    const = {t.name for t in graph.initializer}
    for node in graph.node:
        inputs = [i for i in node.input if i]
        if node.op_type in _SHAPE_ONLY or all(i in const for i in inputs):
            const.update(o for o in node.output if o)
    return const


def _unknown_ops(model: onnx.ModelProto) -> Counter:
    const = _constant_tensors(model.graph)
    return Counter(n.op_type for n in model.graph.node
                   if n.op_type not in SUPPORTED and not all(o in const for o in n.output if o))


def _read(path: Path) -> onnx.ModelProto:
    try:
        return onnx.load(str(path), load_external_data=False)  # only shapes are read
    except OSError as exc:
        raise UserError(f"{path}: cannot read ONNX file: {exc.strerror or exc}") from None
    except Exception as exc:  # protobuf DecodeError and friends
        raise UserError(f"{path}: not a valid ONNX model ({type(exc).__name__})") from None


def _infer(path: Path, model: onnx.ModelProto, strict: bool = True) -> onnx.ModelProto:
    """Fix a symbolic batch dimension to 1, then run shape inference with data propagation."""
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
    for t in model.graph.initializer:  # only shapes are needed: drop the weights' values (faster inference)
        if math.prod(t.dims) > _FOLD_MAX_ELEMS:
            for key in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data"):
                t.ClearField(key)
    try:
        model, folded = _fold_constants(model)
        inferred = shape_inference.infer_shapes(model, strict_mode=strict, data_prop=True)
        inferred.metadata_props.extend(onnx.StringStringEntryProto(key=f"{_FOLDED_KEY}{name}", value=op)
                                       for name, op in folded)
        return inferred
    except UserError:
        raise
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"{path}: ONNX shape inference failed: {first}") from None


_FOLDED_KEY = "accel-dse.folded:"
#: constant tensors larger than this are left to the graph (folding is for shapes, axes, scalars)
_FOLD_MAX_ELEMS = 1 << 16


def _fold_constants(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[tuple[str, str]]]:
    """Evaluate the constant subgraphs (shapes, axes, scales computed in the graph) with ONNX's
    reference evaluator and replace them by initializers, so that shape inference sees their
    values (``Shape -> Div -> Slice``-style chains that data propagation cannot follow).

    Shape inference and folding alternate until nothing folds (a ``Shape`` becomes constant once
    its input's shape is known). Returns the model and the (name, op) of every folded node.
    """
    from onnx.reference import ReferenceEvaluator

    const = _constant_tensors(model.graph)
    if not any(n.op_type != "Constant" and all(o in const for o in n.output if o) for n in model.graph.node):
        return model, []  # nothing computed from constants or shapes: nothing to fold
    g = model.graph
    folded: list[tuple[str, str]] = []
    for _ in range(16):
        shapes = {}
        try:
            inferred = shape_inference.infer_shapes(model, data_prop=True)
        except Exception:
            break
        for vi in list(inferred.graph.input) + list(inferred.graph.value_info):
            shape = _shape_of(vi)
            if shape is not None:
                shapes[vi.name] = shape
        values = {t.name: numpy_helper.to_array(t) for t in g.initializer
                  if math.prod(t.dims) <= _FOLD_MAX_ELEMS and (t.raw_data or _has_typed_data(t))}
        keep, changed = [], False
        for i, node in enumerate(g.node):
            ins = [x for x in node.input if x]
            result = None
            if node.op_type == "Shape" and ins and ins[0] in shapes:
                a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
                result = [np.array(shapes[ins[0]], dtype=np.int64)[a.get("start", 0):a.get("end")]]
            elif node.op_type not in ("Constant",) and ins and all(x in values for x in ins) or \
                    node.op_type == "Constant":
                try:
                    result = ReferenceEvaluator(node).run(None, {x: values[x] for x in ins})
                except Exception:
                    result = None
            if result is None or any(np.asarray(r).size > _FOLD_MAX_ELEMS for r in result):
                keep.append(node)
                continue
            for out, val in zip(node.output, result):
                val = np.asarray(val)
                values[out] = val
                g.initializer.append(numpy_helper.from_array(val, out))
            if node.op_type != "Constant":
                folded.append((node.name or f"{node.op_type}_{i}", node.op_type))
            changed = True
        if not changed:
            break
        del g.node[:]
        g.node.extend(keep)
    return model, folded


def _has_typed_data(t: onnx.TensorProto) -> bool:
    return bool(t.float_data or t.int32_data or t.int64_data or t.double_data or t.uint64_data or t.string_data)


class _Importer:
    """One pass over the (topologically ordered) nodes of an inferred model."""

    def __init__(self, path: Path, model: onnx.ModelProto, skip_unknown: bool = False):
        self.path = path
        self.skip_unknown = skip_unknown
        g = model.graph
        self.shapes: dict[str, tuple[int, ...]] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            shape = _shape_of(vi)
            if shape is not None:
                self.shapes[vi.name] = shape
        for t in g.initializer:
            self.shapes[t.name] = tuple(int(d) for d in t.dims)
        for node in g.node:
            if node.op_type == "Constant":
                for a in node.attribute:
                    if a.name == "value":
                        self.shapes[node.output[0]] = tuple(numpy_helper.to_array(a.t).shape)
        # graph inputs used only as parameters (weights supplied as inputs)
        params_use: dict[str, bool] = {}
        for node in g.node:
            for slot, name in enumerate(node.input):
                is_param = slot in _WEIGHT_SLOTS.get(node.op_type, ())
                params_use[name] = params_use.get(name, True) and is_param
        self.param_inputs = {i.name for i in g.input if params_use.get(i.name, False)}
        graph = onnx.GraphProto()
        graph.CopyFrom(g)
        graph.initializer.extend(onnx.TensorProto(name=n) for n in self.param_inputs)
        self.constants = _constant_tensors(graph)
        self.consumers = Counter(name for node in g.node for name in node.input if name)
        self.consumers.update(o.name for o in g.output)
        self.nodes = list(g.node)
        self.folded = [(e.key[len(_FOLDED_KEY):], e.value) for e in model.metadata_props
                       if e.key.startswith(_FOLDED_KEY)]
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

    def elems(self, tensor: str, node: onnx.NodeProto) -> int:
        return int(math.prod(self.shape(tensor, node)))

    def _label(self, node: onnx.NodeProto) -> str:
        return f"'{node.name}' ({node.op_type})" if node.name else f"({node.op_type})"

    def _fail(self, node: onnx.NodeProto, msg: str) -> UserError:
        return UserError(f"{self.path}: node {self._label(node)}: {msg}")

    def _name(self, node: onnx.NodeProto, i: int) -> str:
        return self._unique(node.name or f"{node.op_type}_{i}")

    def _unique(self, base: str) -> str:
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
        for name, op in self.folded:  # constant subgraphs evaluated before shape inference
            self.ops.append(GraphOp(self._unique(name), op, 0))
        for i, node in enumerate(self.nodes):
            name = self._name(node, i)
            op = node.op_type
            if op == "Constant":
                continue  # a parameter, not an operation
            if all(o in self.constants for o in node.output if o):
                self._record(node, name)  # a folded constant subgraph: no work at run time
                continue
            handler = getattr(self, f"_op_{op}", None)
            if op in ("MaxPool", "AveragePool"):
                handler = self._op_pool
            elif op in ("GlobalAveragePool", "GlobalMaxPool"):
                handler = self._op_global_pool
            elif op in REDUCTIONS:
                handler = self._op_reduce
            elif op in ("Softmax", "LogSoftmax"):
                handler = self._op_softmax
            elif op in ACTIVATIONS:
                handler = self._op_activation
            elif op in ELEMENTWISE and handler is None:
                handler = self._op_elementwise
            if handler is not None:
                handler(node, name)
            elif op in GRAPH_OPS:
                self._record(node, name)  # data movement: no layer
            else:  # unknown, with skip_unknown (load() refused it otherwise)
                self.layers.append(Vector(name, op=f"skipped:{op}"))
                self._record(node, name)
        if not any(layer.macs or layer.vector_ops for layer in self.layers):
            raise UserError(f"{self.path}: the graph has no layer (Conv, Gemm, MatMul, pooling or vector work)")
        try:
            return OnnxWorkload(self.path.stem, tuple(self.layers), source=str(self.path), graph_ops=tuple(self.ops))
        except ValueError as exc:
            raise UserError(f"{self.path}: {exc}") from None

    def _attrs(self, node: onnx.NodeProto) -> dict[str, Any]:
        return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

    def _nchw(self, node: onnx.NodeProto, tensor: str) -> tuple[int, int, int]:
        """(C, H, W) of an image; a 1-D signal (N, C, L) is an image of height 1."""
        shape = self.shape(tensor, node)
        if len(shape) == 3:
            shape = (shape[0], shape[1], 1, shape[2])
        if len(shape) != 4:
            raise self._fail(node, f"input of rank {len(shape)}; only 1-D and 2-D images (N, C, [H,] W) are supported")
        if shape[0] != 1:
            raise self._fail(node, f"batch {shape[0]}; convolutions and pooling are imported with batch 1")
        return shape[1], shape[2], shape[3]

    def _hw_out(self, node: onnx.NodeProto) -> tuple[int, int]:
        oshape = self.shape(node.output[0], node)
        return (1, oshape[2]) if len(oshape) == 3 else (oshape[2], oshape[3])

    @staticmethod
    def _per_axis(values: list[int], rank: int, fill: int) -> list[int]:
        """A per-spatial-axis attribute as (H, W); a 1-D one gets ``fill`` for H."""
        return [fill] + list(values) if rank == 1 else list(values)

    @staticmethod
    def _pads4(pads: list[int], rank: int) -> list[int]:
        """ONNX pads (begin..., end...) as [top, left, bottom, right]; a 1-D signal has none along H."""
        if rank == 1:
            return [0, pads[0], 0, pads[1]]
        return [pads[0], pads[1], pads[2], pads[3]]

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
        rank = len(wshape) - 2
        out_h, out_w = self._hw_out(node)
        a = self._attrs(node)
        kh, kw = (1, int(wshape[2])) if rank == 1 else (int(wshape[2]), int(wshape[3]))
        strides = list(a.get("strides", [1] * rank))
        dils = list(a.get("dilations", [1] * rank))
        stride = self._same(node, "strides", strides)
        dil = self._same(node, "dilations", dils)
        pads = self._pads4(list(a.get("pads", [0] * 2 * rank)), rank)
        if rank == 1:  # height 1: any stride or dilation along H gives the same single row
            in_h, in_w, pad = 1, (out_w - 1) * stride + dil * (kw - 1) + 1, 0
            if pads[1] == pads[3] and (w + 2 * pads[1] - dil * (kw - 1) - 1) // stride + 1 == out_w:
                in_w = w + 2 * pads[1]
        else:
            in_h, in_w, pad = self._spatial(h, w, kh, kw, stride, dil, pads, out_h, out_w)
        try:
            layer = Conv2D(name, in_ch=c, out_ch=int(wshape[0]), kernel_h=kh, kernel_w=kw, in_h=in_h, in_w=in_w,
                           stride=stride, padding=pad, groups=int(a.get("group", 1)), dilation=dil)
        except ValueError as exc:
            raise self._fail(node, str(exc)) from None
        self._add_layer(layer, node)

    def _op_ConvTranspose(self, node: onnx.NodeProto, name: str) -> None:
        """Y = col2im(W^T X): a grouped 1x1 convolution from Cin to Cout*kh*kw channels over the
        input plane (Cin*Hin*Win*(Cout/g)*kh*kw MACs, no multiplications by inserted zeros), then the
        overlap-add of those partial products into the output (a ``col2im`` vector layer)."""
        c, h, w = self._nchw(node, node.input[0])
        wshape = self.shape(node.input[1], node)  # (Cin, Cout/g, k...)
        g = int(self._attrs(node).get("group", 1))
        kernel = math.prod(int(d) for d in wshape[2:])
        cout = int(wshape[1]) * g
        out = self.elems(node.output[0], node)
        try:
            gemm = Conv2D(name, in_ch=c, out_ch=cout * kernel, in_h=h, in_w=w, groups=g)
        except ValueError as exc:
            raise self._fail(node, str(exc)) from None
        self._add_layer(gemm, node)
        partial = gemm.output_elems
        col2im = Vector(self._unique(f"{name}.col2im"), op="col2im", ops=partial, in_elems=partial, out_elems=out)
        self._add_layer(col2im, node)

    def _op_Gemm(self, node: onnx.NodeProto, name: str) -> None:
        a = self._attrs(node)
        sa, sb = self.shape(node.input[0], node), self.shape(node.input[1], node)
        m, k = (sa[1], sa[0]) if a.get("transA", 0) else (sa[0], sa[1])
        n = sb[0] if a.get("transB", 0) else sb[1]
        self._product(node, name, m, k, n, node.input[1] in self.constants)

    def _op_MatMul(self, node: onnx.NodeProto, name: str) -> None:
        sa, sb = self.shape(node.input[0], node), self.shape(node.input[1], node)
        sa = (1,) + sa if len(sa) == 1 else sa
        sb = sb + (1,) if len(sb) == 1 else sb
        k, n = sa[-1], sb[-1]
        if math.prod(sb[:-2]) == 1:  # one B for every row of A (a Linear on tokens, or a plain product)
            rows = math.prod(_broadcast(sa[:-2], sb[:-2])) * sa[-2]
            self._product(node, name, rows, k, n, node.input[1] in self.constants)
        else:  # a B per batch (attention's Q K^T and P V): batched activation products
            batch = math.prod(_broadcast(sa[:-2], sb[:-2]))
            self._add_layer(MatMul(name, m=int(n), k=int(k), n=int(sa[-2]), batch=int(batch)), node)

    def _product(self, node, name: str, m: int, k: int, n: int, constant_b: bool) -> None:
        """Y[m x n] = X[m x k] W[k x n]: FC when W is a parameter, else a matrix product."""
        if constant_b:
            layer: Layer = FC(name, inputs=int(k), outputs=int(n), batch=int(m))
        else:  # Y^T = W^T X^T: the second operand plays the weights' role
            layer = MatMul(name, m=int(n), k=int(k), n=int(m))
        self._add_layer(layer, node)

    def _op_pool(self, node: onnx.NodeProto, name: str) -> None:
        c, h, w = self._nchw(node, node.input[0])
        out_h, out_w = self._hw_out(node)
        a = self._attrs(node)
        rank = len(a["kernel_shape"])
        if rank == 1:
            raise self._fail(node, "1-D pooling is not supported; the IR's pooling window is square")
        kernel = self._same(node, "kernel_shape", list(a["kernel_shape"]))
        stride = self._same(node, "strides", list(a.get("strides", [1, 1])))
        pads = self._pads4(list(a.get("pads", [0, 0, 0, 0])), rank)
        in_h, in_w, pad = self._spatial(h, w, kernel, kernel, stride, 1, pads, out_h, out_w)
        mode = "max" if node.op_type == "MaxPool" else "avg"
        self._add_layer(Pool(name, channels=c, in_h=in_h, in_w=in_w, kernel=kernel, stride=stride,
                             padding=pad, mode=mode), node)

    def _op_global_pool(self, node: onnx.NodeProto, name: str) -> None:
        c, h, w = self._nchw(node, node.input[0])
        k = max(h, w)
        mode = "max" if node.op_type in ("GlobalMaxPool", "ReduceMax") else "avg"
        self._add_layer(Pool(name, channels=c, in_h=k, in_w=k, kernel=k, stride=k, mode=mode), node)

    def _op_reduce(self, node: onnx.NodeProto, name: str) -> None:
        """A reduction; over the whole plane of an image (the dynamo exporter's global average
        pooling: ReduceMean over H and W) it is the same ``Pool`` as GlobalAveragePool."""
        ishape = self.shape(node.input[0], node)
        oshape = self.shape(node.output[0], node)
        if node.op_type in ("ReduceMean", "ReduceMax") and len(ishape) == 4 and ishape[0] == 1 \
                and tuple(d for d in oshape if d != 1) == tuple(d for d in ishape[:2] if d != 1) \
                and math.prod(oshape) == ishape[1]:
            self._op_global_pool(node, name)
            return
        self._add_layer(reduction(name, REDUCTIONS[node.op_type], math.prod(ishape), math.prod(oshape)), node)

    def _op_softmax(self, node: onnx.NodeProto, name: str) -> None:
        shape = self.shape(node.input[0], node)
        axis = int(self._attrs(node).get("axis", -1)) % len(shape)
        elems = math.prod(shape)
        self._add_layer(softmax(name, elems, elems // shape[axis]), node)

    def _op_LayerNormalization(self, node: onnx.NodeProto, name: str) -> None:
        shape = self.shape(node.input[0], node)
        axis = int(self._attrs(node).get("axis", -1)) % len(shape)
        affine = sum(self.elems(t, node) for t in node.input[1:] if t)
        self._add_layer(layer_norm(name, math.prod(shape), math.prod(shape[:axis]), affine), node)

    def _activations_and_params(self, node: onnx.NodeProto) -> tuple[int, int]:
        """Elements read from activations and from constants (each distinct input once)."""
        acts = params = 0
        for t in dict.fromkeys(i for i in node.input if i):
            if t in self.constants:
                params += self.elems(t, node) if t in self.shapes else 0
            else:
                acts += self.elems(t, node)
        return acts, params

    def _op_elementwise(self, node: onnx.NodeProto, name: str) -> None:
        op = ELEMENTWISE[node.op_type]
        if node.op_type == "Gelu" and self._attrs(node).get("approximate", "none") == "tanh":
            op = "gelu_tanh"
        if node.op_type == "Add" and self._fuse_bias(node, name):
            return
        out = self.elems(node.output[0], node)
        acts, params = self._activations_and_params(node)
        layer = elementwise(name, op, out, in_elems=acts, param_elems=params)
        if node.op_type == "Sum" and len(node.input) > 2:
            layer = replace(layer, ops=out * (len(node.input) - 1))
        self._add_layer(layer, node)

    def _fuse_bias(self, node: onnx.NodeProto, name: str) -> bool:
        """A constant added to the output of an FC (MatMul + Add, the exporters' Linear on
        tokens) is its bias, as in Gemm: recorded as fused, no layer."""
        data = [i for i in node.input if i not in self.constants]
        const = [i for i in node.input if i in self.constants]
        if len(data) != 1 or len(const) != 1:
            return False
        owner = self._fusable(data[0], (FC,))
        if owner is None or self.elems(const[0], node) != self.layers[self.index[owner]].outputs:
            return False
        self.producer[node.output[0]] = owner
        self._record(node, name, fused_into=owner)
        return True

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
            self._op_elementwise(node, name)

    def _op_BatchNormalization(self, node: onnx.NodeProto, name: str) -> None:
        owner = self._fusable(node.input[0], (Conv2D,))
        if owner is not None:
            self.producer[node.output[0]] = owner  # a following Relu still fuses
            self._record(node, name, fused_into=owner)
            return
        out = self.elems(node.output[0], node)
        c = self.shape(node.input[0], node)[1]
        self._add_layer(elementwise(name, "batchnorm", out, param_elems=2 * c), node)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Numpy broadcasting of two batch shapes."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


def _shape_of(vi: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    dims = vi.type.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    return tuple(int(d.dim_value) for d in dims)


__all__ = ["GraphOp", "OnnxWorkload", "SUPPORTED", "load"]

"""Small ONNX networks built with the onnx helper API (no downloads).

Shared by ``tests/test_onnx_import.py`` and the peer benchmark
(``benchmarks/peers.py``), so that accel-dse and ZigZag read literally the
same ResNet-18 file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Net:
    """A tiny graph builder over ``onnx.helper``.

    ``params_as_inputs`` declares weights as typed graph inputs without data
    (a legal ONNX form), which keeps a full-size ResNet-18 file a few KB.
    """

    def __init__(self, shape: tuple[int, ...], params_as_inputs: bool = False, opset: int = 17):
        self.opset = opset
        self.nodes: list = []
        self.inits: list = []
        self.inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))]
        self.params_as_inputs = params_as_inputs
        self.k = 0

    def _id(self, op: str) -> str:
        self.k += 1
        return f"{op.lower()}{self.k}"

    def param(self, shape: tuple[int, ...]) -> str:
        name = f"p{len(self.inits) + len(self.inputs)}"
        if self.params_as_inputs:
            self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        else:
            self.inits.append(numpy_helper.from_array(np.zeros(shape, np.float32), name))
        return name

    def op(self, op: str, inputs: list[str], name: str | None = None, **attrs) -> str:
        name = name or self._id(op)
        self.nodes.append(helper.make_node(op, inputs, [name + "_out"], name=name, **attrs))
        return name + "_out"

    def const(self, value) -> str:
        """An initializer holding ``value`` (shapes, axes, scalars)."""
        name = f"k{len(self.inits)}_{self.k}"
        self.k += 1
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def conv(self, x, cin, cout, k, stride=1, pad=0, group=1, dilation=1, name=None, pads=None):
        w = self.param((cout, cin // group, k, k))
        return self.op("Conv", [x, w], name, kernel_shape=[k, k], strides=[stride, stride],
                       pads=pads or [pad] * 4, group=group, dilations=[dilation, dilation])

    def bn(self, x, c):
        return self.op("BatchNormalization", [x] + [self.param((c,)) for _ in range(4)])

    def gemm(self, x, k, n, name=None):
        return self.op("Gemm", [x, self.param((n, k))], name, transB=1)

    def model(self, out: str) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, "net", self.inputs,
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)])

    def save(self, out: str, path) -> str:
        onnx.save(self.model(out), str(path))
        return str(path)


def basic_block(n: Net, x: str, cin: int, cout: int, stride: int, size: int, bn: bool) -> tuple[str, int]:
    """ResNet basic block; returns the output and its spatial size."""
    y = n.conv(x, cin, cout, 3, stride=stride, pad=1)
    y = n.bn(y, cout) if bn else y
    y = n.op("Relu", [y])
    y = n.conv(y, cout, cout, 3, pad=1)
    y = n.bn(y, cout) if bn else y
    short = x
    if stride != 1 or cin != cout:
        short = n.conv(x, cin, cout, 1, stride=stride)
        short = n.bn(short, cout) if bn else short
    y = n.op("Add", [y, short])
    return n.op("Relu", [y]), size // stride


def resnet18_net(bn: bool = True) -> tuple[Net, str]:
    """ResNet-18 (batch 1, 224 x 224, weights as data-less inputs); returns the builder and its output."""
    n = Net((1, 3, 224, 224), params_as_inputs=True)
    y = n.conv("x", 3, 64, 7, stride=2, pad=3, name="conv1")
    y = n.bn(y, 64) if bn else y
    y = n.op("Relu", [y])
    y = n.op("MaxPool", [y], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    size, cin = 56, 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        y, size = basic_block(n, y, cin, cout, stride, size, bn)
        y, size = basic_block(n, y, cout, cout, 1, size, bn)
        cin = cout
    y = n.op("GlobalAveragePool", [y], "avgpool")
    y = n.op("Flatten", [y], "flatten")
    y = n.gemm(y, 512, 1000, name="fc")
    return n, y


def resnet18(tmp_path, bn: bool = True) -> str:
    """Write ``resnet18.onnx`` into ``tmp_path``; return its path."""
    n, y = resnet18_net(bn)
    return n.save(y, Path(tmp_path) / "resnet18.onnx")


def resnet18_inferred(path: str | Path) -> str:
    """ResNet-18 with every tensor shape written into the file (ONNX shape inference).

    Tools that read shapes from the graph instead of inferring them (ZigZag)
    need this form; the graph output gets its shape (1 x 1000) too.
    """
    n, y = resnet18_net()
    m = onnx.shape_inference.infer_shapes(n.model(y), strict_mode=True)
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 1000]))
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


def encoder_net(seq: int = 16, hidden: int = 64, heads: int = 4, ffn: int = 256, gelu: str = "erf",
                layernorm: str = "fused", shape_chain: bool = False) -> tuple[Net, str]:
    """A BERT-style encoder layer as PyTorch's exporters write it (weights as initializers).

    Linear layers on tokens are ``MatMul`` with a transposed weight + ``Add`` bias; heads are split
    with ``Reshape`` + ``Transpose``; ``Q K^T`` / ``P V`` are batched ``MatMul``s of activations.
    ``gelu``: ``"gelu"`` (one Gelu node, opset 20) or ``"erf"`` (x * 0.5 * (1 + erf(x / sqrt 2)));
    ``layernorm``: ``"fused"`` (LayerNormalization) or ``"unfused"`` (ReduceMean, Sub, Pow, ...);
    ``shape_chain``: one head split gets its shape from a ``Shape -> Gather -> Concat`` chain
    (the legacy exporter's idiom) instead of a constant.
    """
    n = Net((1, seq, hidden), opset=20 if gelu == "gelu" else 18)
    d = hidden // heads

    def linear(x, k, m, name):
        y = n.op("MatMul", [x, n.param((k, m))], name)
        return n.op("Add", [y, n.param((m,))], f"{name}.bias")

    def split_heads(x, perm, chain=False):
        if chain:
            shp = n.op("Shape", [x])
            b = n.op("Gather", [shp, n.const(np.array([0], np.int64))], axis=0)
            s = n.op("Gather", [shp, n.const(np.array([1], np.int64))], axis=0)
            target = n.op("Concat", [b, s, n.const(np.array([heads, d], np.int64))], axis=0)
        else:
            target = n.const(np.array([1, seq, heads, d], np.int64))
        return n.op("Transpose", [n.op("Reshape", [x, target])], perm=perm)

    def norm(x, name):
        if layernorm == "fused":
            return n.op("LayerNormalization", [x, n.param((hidden,)), n.param((hidden,))], name, axis=-1)
        axes = n.const(np.array([-1], np.int64))
        mean = n.op("ReduceMean", [x, axes], keepdims=1)
        xc = n.op("Sub", [x, mean])
        var = n.op("ReduceMean", [n.op("Pow", [xc, n.const(np.array(2.0, np.float32))]), axes], keepdims=1)
        std = n.op("Sqrt", [n.op("Add", [var, n.const(np.array(1e-12, np.float32))])])
        y = n.op("Div", [xc, std])
        return n.op("Add", [n.op("Mul", [y, n.param((hidden,))]), n.param((hidden,))], name)

    x = "x"
    q = split_heads(linear(x, hidden, hidden, "query"), [0, 2, 1, 3], chain=shape_chain)
    k = split_heads(linear(x, hidden, hidden, "key"), [0, 2, 3, 1])
    v = split_heads(linear(x, hidden, hidden, "value"), [0, 2, 1, 3])
    scores = n.op("MatMul", [q, k], "scores")
    scores = n.op("Div", [scores, n.const(np.array(float(np.sqrt(d)), np.float32))], "scale")
    probs = n.op("Softmax", [scores], "softmax", axis=-1)
    ctx = n.op("Transpose", [n.op("MatMul", [probs, v], "context")], perm=[0, 2, 1, 3])
    ctx = n.op("Reshape", [ctx, n.const(np.array([1, seq, hidden], np.int64))])
    y = norm(n.op("Add", [linear(ctx, hidden, hidden, "attn_out"), x], "attn_residual"), "ln1")
    h = linear(y, hidden, ffn, "ffn1")
    if gelu == "gelu":
        h = n.op("Gelu", [h], "gelu")
    else:
        e = n.op("Erf", [n.op("Div", [h, n.const(np.array(1.4142135, np.float32))])])
        h = n.op("Mul", [n.op("Mul", [h, n.op("Add", [e, n.const(np.array(1.0, np.float32))])]),
                         n.const(np.array(0.5, np.float32))], "gelu")
    out = norm(n.op("Add", [linear(h, ffn, hidden, "ffn2"), y], "ffn_residual"), "ln2")
    return n, out

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

    def __init__(self, shape: tuple[int, ...], params_as_inputs: bool = False):
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
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

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

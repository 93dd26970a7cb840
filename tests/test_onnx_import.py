"""ONNX import: small models built here with the onnx helper API (no downloads).

Every expected MAC count is computed by hand in the test from the layer
shapes (out_ch x out_h x out_w x in_ch/groups x kh x kw, inputs x outputs).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dse.cli import main  # noqa: E402
from workloads.errors import UserError  # noqa: E402
from workloads import load_workload  # noqa: E402
from workloads.layers import FC, Conv2D, MatMul, Pool  # noqa: E402
from workloads.onnx_import import OnnxWorkload, load  # noqa: E402

from benchmarks.onnx_nets import Net, basic_block, resnet18  # noqa: E402  (shared with benchmarks/peers.py)


def lenet(tmp_path) -> str:
    n = Net((1, 1, 28, 28))
    y = n.conv("x", 1, 20, 5, name="conv1")
    y = n.op("MaxPool", [y], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    y = n.conv(y, 20, 50, 5, name="conv2")
    y = n.op("MaxPool", [y], "pool2", kernel_shape=[2, 2], strides=[2, 2])
    y = n.op("Flatten", [y], "flatten")
    y = n.gemm(y, 800, 500, name="ip1")
    y = n.op("Relu", [y], "relu1")
    y = n.gemm(y, 500, 10, name="ip2")
    return n.save(y, tmp_path / "lenet.onnx")


def conv_macs(oc, oh, ow, ic_per_group, k):
    return oc * oh * ow * ic_per_group * k * k


# ---- LeNet ----
def test_lenet_layers_and_macs_by_hand(tmp_path):
    wl = load(lenet(tmp_path))
    assert isinstance(wl, OnnxWorkload) and wl.name == "lenet"
    assert [(l.name, l.kind) for l in wl.layers] == [
        ("conv1", "conv"), ("pool1", "pool"), ("conv2", "conv"), ("pool2", "pool"), ("ip1", "fc"), ("ip2", "fc")]
    c1, p1, c2, p2, ip1, ip2 = wl.layers
    assert (c1.out_h, c1.out_w, p1.out_h, c2.out_h, p2.out_h) == (24, 24, 12, 8, 4)
    assert c1.macs == conv_macs(20, 24, 24, 1, 5) == 288_000
    assert c2.macs == conv_macs(50, 8, 8, 20, 5) == 1_600_000
    assert (ip1.inputs, ip1.outputs, ip1.macs) == (800, 500, 400_000)
    assert (ip2.inputs, ip2.outputs, ip2.macs) == (500, 10, 5_000)
    assert ip1.activation == "relu" and ip2.activation is None
    # the same network as the built-in Caffe LeNet
    builtin = load_workload("lenet")
    assert [l.macs for l in wl.layers] == [l.macs for l in builtin.layers]
    assert [op.op for op in wl.graph_ops] == ["Flatten", "Relu"]
    assert wl.graph_ops[1].fused_into == "ip1"


# ---- residual block ----
def test_residual_block_add_is_a_vector_layer(tmp_path):
    n = Net((1, 64, 56, 56))
    y, _ = basic_block(n, "x", 64, 64, 1, 56, bn=False)
    wl = load(n.save(y, tmp_path / "block.onnx"))
    assert [l.kind for l in wl.layers] == ["conv", "conv", "vector", "vector"]
    a, b, add, relu = wl.layers
    assert a.macs == b.macs == conv_macs(64, 56, 56, 64, 3) == 115_605_504
    assert (a.padding, a.out_h, a.activation, b.activation) == (1, 56, "relu", None)
    ops = [(op.op, op.fused_into) for op in wl.graph_ops]
    assert ops == [("Relu", a.name)]
    # the residual Add reads both branches and writes one tensor; the Relu after it cannot fuse
    size = 64 * 56 * 56
    assert (add.op, add.macs, add.vector_ops, add.input_elems, add.output_elems) == ("add", 0, size, 2 * size, size)
    assert (relu.op, relu.vector_ops, relu.input_elems) == ("relu", size, size)


# ---- depthwise separable ----
def test_depthwise_conv_groups_equal_channels(tmp_path):
    n = Net((1, 32, 56, 56))
    y = n.conv("x", 32, 32, 3, pad=1, group=32, name="dw")
    y = n.op("Clip", [y], "relu6")
    y = n.conv(y, 32, 64, 1, name="pw")
    wl = load(n.save(y, tmp_path / "dw.onnx"))
    dw, pw = wl.layers
    assert (dw.groups, dw.ic_per_group, dw.oc_per_group, dw.activation) == (32, 1, 1, "clip")
    assert dw.macs == 32 * 56 * 56 * 9 == 903_168
    assert pw.macs == conv_macs(64, 56, 56, 32, 1) == 6_422_528


def test_strided_dilated_and_asymmetric_padding(tmp_path):
    n = Net((1, 8, 31, 31))
    y = n.conv("x", 8, 16, 3, stride=2, pad=2, dilation=2, name="dil")
    y = n.conv(y, 16, 16, 3, stride=2, name="asym", pads=[0, 0, 1, 1])  # TF-style SAME
    wl = load(n.save(y, tmp_path / "pad.onnx"))
    dil, asym = wl.layers
    # dilated: effective kernel 5, (31 + 4 - 5) // 2 + 1 = 16
    assert (dil.out_h, dil.dilation, dil.stride, dil.padding) == (16, 2, 2, 2)
    assert dil.macs == conv_macs(16, 16, 16, 8, 3)
    # asymmetric pads 0/1: (16 + 1 - 3) // 2 + 1 = 8, represented by a 17 x 17
    # pre-padded input with padding 0; MACs exact
    assert (asym.out_h, asym.out_w, asym.padding, asym.in_h) == (8, 8, 0, 17)
    assert asym.macs == conv_macs(16, 8, 8, 16, 3)


def test_auto_pad_same(tmp_path):
    n = Net((1, 4, 15, 15))
    w = n.param((8, 4, 3, 3))
    y = n.op("Conv", ["x", w], "same", kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    (layer,) = load(n.save(y, tmp_path / "same.onnx")).layers
    assert (layer.out_h, layer.out_w) == (8, 8)  # ceil(15 / 2)
    assert layer.macs == conv_macs(8, 8, 8, 4, 3)


def test_resnet18_layers_and_total_macs(tmp_path):
    wl = load(resnet18(tmp_path))
    kinds = [l.kind for l in wl.layers]
    assert kinds.count("conv") == 20 and kinds.count("pool") == 2 and kinds.count("fc") == 1
    # the well-known 1.814 G MACs of ResNet-18, summed by hand per stage
    stem = conv_macs(64, 112, 112, 3, 7)
    stage1 = 4 * conv_macs(64, 56, 56, 64, 3)
    later = sum(conv_macs(c, s, s, c // 2, 3) + 3 * conv_macs(c, s, s, c, 3) + conv_macs(c, s, s, c // 2, 1)
                for c, s in ((128, 28), (256, 14), (512, 7)))
    assert wl.macs == stem + stage1 + later + 512 * 1000 == 1_814_073_344
    # BatchNormalization folded into the convolutions, ReLU fused after it
    bns = [op for op in wl.graph_ops if op.op == "BatchNormalization"]
    assert len(bns) == 20 and all(op.fused_into for op in bns)
    conv1 = wl.layer("conv1")
    assert conv1.activation == "relu" and conv1.out_h == 112
    mp = wl.layer("maxpool")
    assert (mp.out_h, mp.kernel, mp.stride, mp.padding) == (56, 3, 2, 1)
    # the residual Adds and the ReLUs after them are vector layers: one operation per element
    adds = [l for l in wl.layers if l.kind == "vector" and l.op == "add"]
    relus = [l for l in wl.layers if l.kind == "vector" and l.op == "relu"]
    assert len(adds) == len(relus) == 8
    block_out = sum(2 * c * s * s for c, s in ((64, 56), (128, 28), (256, 14), (512, 7)))
    pools = 64 * 56 * 56 * 3 * 3 + 512 * 7 * 7
    assert sum(l.vector_ops for l in wl.layers) == 2 * block_out + pools
    gap = wl.layer("avgpool")
    assert (gap.mode, gap.kernel, gap.out_h, gap.channels) == ("avg", 7, 1, 512)


# multicore's default 4 MB shared memory cannot hold conv1's 26 MB of data:
# give it 32 MB so that every layer is feasible
@pytest.mark.parametrize("arch,sets", [("rena", []), ("rena", ["target=fpga"]), ("multicore", ["shm_kb=32768"]),
                                      ("emaxvr", []), ("emaxv", [])])
def test_resnet18_runs_through_dse_evaluate(tmp_path, capsys, arch, sets):
    path = resnet18(tmp_path)
    assert main(["evaluate", arch, path, "--json"] + [a for s in sets for a in ("--set", s)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total"]["macs"] == 1_814_073_344
    assert len(out["layers"]) == 23 + 16  # + 8 residual Adds and the 8 ReLUs after them
    assert all(l["feasible"] for l in out["layers"])
    assert out["total"]["time_s"] > 0 and np.isfinite(out["total"]["fps"])
    conv1 = next(l for l in out["layers"] if l["name"] == "conv1")
    assert conv1["macs"] == conv_macs(64, 112, 112, 3, 7)


def test_matmul_of_activations_and_gemm_batch(tmp_path):
    n = Net((4, 16))
    a = n.gemm("x", 16, 8, name="fc")  # constant weights: FC over a batch of 4 vectors
    t = n.op("Reshape", [a, _const(n, np.array([8, 4], np.int64))], "r")
    m = n.op("MatMul", [a, t], "mm")  # (4 x 8) @ (8 x 4): two activations
    wl = load(n.save(m, tmp_path / "mm.onnx"))
    fc, mm = wl.layers
    assert isinstance(fc, FC) and (fc.inputs, fc.outputs, fc.batch, fc.macs) == (16, 8, 4, 16 * 8 * 4)
    assert isinstance(mm, MatMul) and (mm.m, mm.k, mm.n, mm.macs) == (4, 8, 4, 4 * 8 * 4)


def _const(n: Net, value: np.ndarray) -> str:
    name = f"c{n.k}"
    n.k += 1
    n.inits.append(numpy_helper.from_array(value, name))
    return name


# ---- errors: one line, the file, what is wrong ----
def test_unsupported_operators_are_listed(tmp_path):
    n = Net((1, 3, 8, 8))
    y = n.conv("x", 3, 4, 3)
    y = n.op("Resize", [y, "", _const(n, np.array([1, 1, 2, 2], np.float32))], mode="nearest")
    y = n.op("Mod", [y, y])
    y = n.op("Mod", [y, y])
    path = n.save(y, tmp_path / "bad.onnx")
    with pytest.raises(UserError) as exc:
        load(path)
    msg = str(exc.value)
    assert "\n" not in msg and "bad.onnx" in msg
    assert "unsupported ONNX operators: Mod (2), Resize (1)" in msg and "supported: Conv" in msg


def test_cli_reports_bad_onnx_as_exit_2(tmp_path, capsys):
    bad = tmp_path / "junk.onnx"
    bad.write_bytes(b"this is not a protobuf")
    assert main(["evaluate", "rena", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dse: error:") and "junk.onnx" in err and err.count("\n") == 1


def test_different_strides_along_h_and_w_are_refused(tmp_path):
    n = Net((1, 3, 16, 16))
    w = n.param((4, 3, 3, 3))
    y = n.op("Conv", ["x", w], "c", kernel_shape=[3, 3], strides=[1, 2])
    with pytest.raises(UserError, match=r"node 'c' \(Conv\): strides \[1, 2\] differ"):
        load(n.save(y, tmp_path / "s.onnx"))


def test_symbolic_batch_is_one_and_pool_layers(tmp_path):
    n = Net((1, 8, 16, 16))
    n.inputs[0] = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 16, 16])
    y = n.op("AveragePool", ["x"], "ap", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    y = n.op("GlobalMaxPool", [y], "gmp")
    wl = load(n.save(y, tmp_path / "pool.onnx"))
    ap, gmp = wl.layers
    # ceil_mode: ceil((16 - 3) / 2) + 1 = 8 (floor would give 7): a 17 x 17 pre-padded input
    assert isinstance(ap, Pool) and (ap.mode, ap.out_h, ap.in_h, ap.padding) == ("avg", 8, 17, 0)
    assert (gmp.mode, gmp.out_h, gmp.kernel) == ("max", 1, 8)
    assert all(not isinstance(l, Conv2D) for l in wl.layers)


def test_symbolic_spatial_dimension_and_batched_conv_are_refused(tmp_path):
    n = Net((1, 3, 8, 8))
    n.inputs[0] = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", 8])
    y = n.conv("x", 3, 4, 3)
    with pytest.raises(UserError, match=r"input 'x' has a symbolic dimension 2 \('H'\)"):
        load(n.save(y, tmp_path / "sym.onnx"))
    n = Net((2, 3, 8, 8))
    y = n.conv("x", 3, 4, 3, name="c")
    with pytest.raises(UserError, match=r"node 'c' \(Conv\): batch 2; convolutions and pooling"):
        load(n.save(y, tmp_path / "batch.onnx"))

"""ONNX operators past classic CNNs, in the idioms of both PyTorch exporters (issue 13).

Graphs are built with ``onnx.helper`` (no torch). MACs are checked node by node
against a count made here from ONNX's own shape inference (independent of the
importer); vector operations against the per-element counts of
``workloads.layers.ELEMENTWISE_OPS``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, shape_inference  # noqa: E402

from archmodels import get_model  # noqa: E402
from benchmarks.onnx_nets import Net, encoder_net  # noqa: E402
from dse.cli import main  # noqa: E402
from workloads import load_workload  # noqa: E402
from workloads.errors import UserError  # noqa: E402
from workloads.layers import FC, Conv2D, MatMul, Pool, Vector  # noqa: E402
from workloads.onnx_import import load  # noqa: E402

MODELS = ("emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore")


def independent_macs(path: str) -> dict[str, int]:
    """MACs per node name from ONNX shape inference: product nodes only."""
    m = shape_inference.infer_shapes(onnx.load(path), strict_mode=True, data_prop=True)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
              for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output)}
    shapes.update({t.name: list(t.dims) for t in m.graph.initializer})
    out = {}
    for node in m.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type in ("MatMul", "Gemm"):
            a = shapes[node.input[0]]
            k = a[0] if attrs.get("transA", 0) else a[-1]
            out[node.name] = math.prod(shapes[node.output[0]]) * k
        elif node.op_type == "Conv":
            w = shapes[node.input[1]]
            out[node.name] = math.prod(shapes[node.output[0]]) * math.prod(w[1:])
        elif node.op_type == "ConvTranspose":
            w = shapes[node.input[1]]  # (Cin, Cout/g, k...)
            out[node.name] = math.prod(shapes[node.input[0]]) * math.prod(w[1:])
    return out


def layer_macs(wl) -> dict[str, int]:
    return {l.name: l.macs for l in wl.layers if l.macs}


# ---- transformer encoder: both exporters' idioms ----
@pytest.mark.parametrize("gelu", ["gelu", "erf"])
@pytest.mark.parametrize("layernorm", ["fused", "unfused"])
def test_encoder_idioms_give_the_same_work(tmp_path, gelu, layernorm):
    n, out = encoder_net(gelu=gelu, layernorm=layernorm, shape_chain=True)
    path = n.save(out, tmp_path / "enc.onnx")
    wl = load(path)
    assert layer_macs(wl) == independent_macs(path)  # node by node
    seq, hidden, heads, ffn = 16, 64, 4, 256
    kinds = {l.name: l for l in wl.layers}
    assert isinstance(kinds["query"], FC) and (kinds["query"].batch, kinds["query"].inputs) == (seq, hidden)
    scores = kinds["scores"]  # reached through Reshape + Transpose of activations
    assert isinstance(scores, MatMul) and (scores.batch, scores.m, scores.k, scores.n) == (heads, seq, hidden // heads, seq)
    # bias Adds are fused into their MatMul (as Gemm would carry them), not vector layers
    assert not any(l.name.endswith(".bias") for l in wl.layers)
    # vector work: scale, softmax, 2 residual adds, 2 LayerNorms (7n + 4 rows), GELU (5 per element)
    x, att = seq * hidden, heads * seq * seq
    expected = att + 5 * att + 2 * x + 2 * (7 * x + 4 * seq) + 5 * seq * ffn
    assert sum(l.vector_ops for l in wl.layers) == expected
    # and it is the built-in encoder of the same size, layer work for layer work
    builtin = load_workload(f"bert_encoder:seq={seq},hidden={hidden},heads={heads},ffn={ffn}")
    assert wl.macs == builtin.macs and expected == sum(l.vector_ops for l in builtin.layers)


def test_encoder_runs_on_every_model(tmp_path):
    n, out = encoder_net()
    path = n.save(out, tmp_path / "enc.onnx")
    for arch in MODELS:
        r = get_model(arch).evaluate(path)
        assert r["total"]["vector_ops"] > 0 and r["total"]["macs"] == load(path).macs
        vec = [l for l in r["layers"] if l["kind"] == "vector"]
        assert all(l["time_s"] > 0 and l["energy_j"] > 0 for l in vec)
        if arch == "atomswitch":  # weights live in the switches: no product of two activations
            assert not r["feasible"] and "does not run matmul" in r["infeasible_reason"]
            assert all(l["feasible"] and l["vector_unit"] == "host CPU" for l in vec)
        else:
            assert r["feasible"], (arch, r["infeasible_reason"])


# ---- global average pooling: GlobalAveragePool (legacy) vs ReduceMean (dynamo) ----
def _gap_net(tmp_path, idiom: str) -> str:
    n = Net((1, 16, 7, 7), opset=18)
    y = n.conv("x", 16, 32, 3, pad=1, name="c")
    if idiom == "global":
        y = n.op("GlobalAveragePool", [y], "gap")
        y = n.op("Flatten", [y])
    else:
        y = n.op("ReduceMean", [y, n.const(np.array([-1, -2], np.int64))], "gap", keepdims=0)
    y = n.gemm(y, 32, 10, name="fc")
    return n.save(y, tmp_path / f"{idiom}.onnx")


def test_reducemean_over_the_plane_is_global_average_pooling(tmp_path):
    a, b = load(_gap_net(tmp_path, "global")), load(_gap_net(tmp_path, "reduce"))
    pa, pb = a.layer("gap"), b.layer("gap")
    assert isinstance(pb, Pool) and pa == pb and (pb.mode, pb.kernel, pb.channels) == ("avg", 7, 32)
    for arch in MODELS:
        ra, rb = get_model(arch).evaluate(a), get_model(arch).evaluate(b)
        assert ra["total"]["time_s"] == rb["total"]["time_s"] and ra["total"]["energy_j"] == rb["total"]["energy_j"]


def test_reduction_over_channels_is_a_vector_layer(tmp_path):
    n = Net((1, 8, 4, 4), opset=18)
    y = n.conv("x", 8, 8, 1, name="c")
    y = n.op("ReduceMean", [y, n.const(np.array([1], np.int64))], "rm", keepdims=1)
    wl = load(n.save(y, tmp_path / "rm.onnx"))
    rm = wl.layer("rm")
    assert isinstance(rm, Vector) and (rm.op, rm.input_elems, rm.output_elems, rm.vector_ops) == (
        "reduce_mean", 128, 16, 128 + 16)


# ---- 1-D and transposed convolutions ----
def test_conv1d_is_a_conv_of_height_one(tmp_path):
    n = Net((1, 4, 50))
    w = n.param((8, 4, 5))
    y = n.op("Conv", ["x", w], "c1d", kernel_shape=[5], strides=[2], pads=[2, 2])
    path = n.save(y, tmp_path / "c1d.onnx")
    c = load(path).layer("c1d")
    assert isinstance(c, Conv2D) and (c.in_h, c.kernel_h, c.kernel_w, c.out_h, c.out_w) == (1, 1, 5, 1, 25)
    assert c.macs == 8 * 25 * 4 * 5 == independent_macs(path)["c1d"]


def test_conv_transpose_lowering_keeps_the_mac_formula(tmp_path):
    cin, cout, k, s, h = 16, 8, 4, 2, 7
    n = Net((1, cin, h, h))
    w = n.param((cin, cout, k, k))
    y = n.op("ConvTranspose", ["x", w], "up", kernel_shape=[k, k], strides=[s, s], pads=[1, 1, 1, 1])
    path = n.save(y, tmp_path / "up.onnx")
    wl = load(path)
    gemm, col2im = wl.layers
    assert gemm.macs == cin * h * h * cout * k * k == independent_macs(path)["up"]
    assert (gemm.kernel_h, gemm.out_ch, gemm.out_h) == (1, cout * k * k, h)
    out = cout * ((h - 1) * s - 2 + k) ** 2
    assert isinstance(col2im, Vector) and col2im.output_elems == out and col2im.vector_ops == cout * k * k * h * h


# ---- activations of EfficientNet / MobileNetV3, data movement of ShuffleNet ----
def test_cnn_activations_and_channel_shuffle(tmp_path):
    n = Net((1, 16, 8, 8), opset=18)
    y = n.conv("x", 16, 16, 1, name="c")
    s = n.op("Sigmoid", [y], "sig")
    y = n.op("Mul", [y, s], "silu")  # EfficientNet's SiLU, unfused
    y = n.op("HardSwish", [y], "hs")
    n.op("Split", [y, n.const(np.array([8, 8], np.int64))], "split", axis=1)
    n.nodes[-1].output[:] = ["s0", "s1"]
    z = n.op("Concat", ["s0", "s1"], "cat", axis=1)
    z = n.op("Reshape", [z, n.const(np.array([1, 2, 8, 8, 8], np.int64))])
    z = n.op("Transpose", [z], perm=[0, 2, 1, 3, 4])
    z = n.op("Reshape", [z, n.const(np.array([1, 16, 8, 8], np.int64))])
    z = n.conv(z, 16, 4, 1, name="c2")
    wl = load(n.save(z, tmp_path / "act.onnx"))
    e = 16 * 8 * 8
    ops = {l.name: (l.op, l.vector_ops) for l in wl.layers if isinstance(l, Vector)}
    assert ops == {"sig": ("sigmoid", 3 * e), "silu": ("mul", e), "hs": ("hard_swish", 4 * e)}
    assert [l.name for l in wl.layers if l.macs] == ["c", "c2"]
    assert {op.op for op in wl.graph_ops} >= {"Split", "Concat", "Reshape", "Transpose"}


def test_constant_subgraphs_fold(tmp_path):
    n = Net((1, 8), opset=18)
    w = n.param((4, 8))
    wt = n.op("Transpose", [w], "wt", perm=[1, 0])  # weights transposed in the graph: still weights
    s = n.op("Mul", [n.const(np.array(2.0, np.float32)), n.const(np.array(3.0, np.float32))], "folded")
    y = n.op("MatMul", ["x", wt], "fc")
    y = n.op("Mul", [y, s], "scale")
    wl = load(n.save(y, tmp_path / "fold.onnx"))
    assert [(l.name, l.kind) for l in wl.layers] == [("fc", "fc"), ("scale", "vector")]
    assert {op.name for op in wl.graph_ops} == {"wt", "folded"}


# ---- unknown operators ----
def _unknown(tmp_path) -> str:
    n = Net((1, 4, 8, 8))
    y = n.conv("x", 4, 4, 3, pad=1, name="c")
    y = n.op("Mod", [y, y], "m1", fmod=1)
    return n.save(y, tmp_path / "unk.onnx")


def test_skip_unknown_costs_them_as_zero_with_one_warning(tmp_path, capsys):
    path = _unknown(tmp_path)
    with pytest.raises(UserError, match=r"unsupported ONNX operators: Mod \(1\).*--skip-unknown"):
        load(path)
    wl = load(path, skip_unknown=True)
    skipped = wl.layer("m1")
    assert isinstance(skipped, Vector) and skipped.op == "skipped:Mod" and skipped.vector_ops == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unk.onnx" in err and "Mod (1)" in err
    assert main(["evaluate", "rena", path, "--skip-unknown", "--json"]) == 0
    cap = capsys.readouterr()
    r = json.loads(cap.out)
    m1 = next(l for l in r["layers"] if l["name"] == "m1")
    assert r["feasible"] and m1["time_s"] == 0 and m1["dram_bytes"] == 0 and m1["energy_j"] == 0
    assert main(["evaluate", "rena", path]) == 2


def test_skip_unknown_as_a_study_key(tmp_path):
    from dse.config import load as load_study

    path = _unknown(tmp_path)
    study = tmp_path / "s.yaml"
    study.write_text("name: s\narch: rena\nworkload: unk.onnx\nskip_unknown: true\n"
                     "objectives: [total.time_s]\nn_trials: 2\n")
    st = load_study(str(study))
    assert st.workloads == (f"{path}:skip_unknown=true",)
    assert load_workload(st.workloads[0]).layer("m1").op == "skipped:Mod"


def test_shape_arithmetic_is_folded_before_shape_inference(tmp_path):
    # the legacy exporter's channel split (ShuffleNetV2): Slice ends computed as Shape[1] / 2,
    # which ONNX data propagation alone leaves unknown
    n = Net((1, 16, 4, 4), opset=17)
    shp = n.op("Shape", ["x"], "shape")
    c = n.op("Gather", [shp, n.const(np.array(1, np.int64))], "c", axis=0)
    half = n.op("Div", [c, n.const(np.array(2, np.int64))], "half")
    end = n.op("Unsqueeze", [half, n.const(np.array([0], np.int64))], "end")
    y = n.op("Slice", ["x", n.const(np.array([0], np.int64)), end, n.const(np.array([1], np.int64))], "slice")
    y = n.conv(y, 8, 4, 1, name="c1")
    wl = load(n.save(y, tmp_path / "split.onnx"))
    assert [(l.name, l.in_ch, l.macs) for l in wl.layers] == [("c1", 8, 4 * 16 * 8)]
    assert {"shape", "c", "half", "end"} <= {op.name for op in wl.graph_ops}


# ---- a real export: examples/tiny_hybrid.onnx, written by torch.onnx.export(model, (x,)) (dynamo) ----
EXAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "tiny_hybrid.onnx"


def test_dynamo_export_imports_node_by_node():
    wl = load(str(EXAMPLE))
    assert layer_macs(wl) == independent_macs(str(EXAMPLE))
    kinds = {l.name: l for l in wl.layers}
    conv1d = next(l for l in wl.layers if isinstance(l, Conv2D) and l.in_h == 1)
    assert (conv1d.kernel_h, conv1d.kernel_w, conv1d.out_w) == (1, 3, 256)
    assert sum(isinstance(l, MatMul) and l.batch == 4 for l in wl.layers) == 2  # Q K^T and P V per head
    ops = {l.op for l in wl.layers if isinstance(l, Vector)}
    assert {"sigmoid", "hard_swish", "col2im", "softmax", "layer_norm", "gelu", "reduce_mean", "add"} <= ops
    gap = [l for l in kinds.values() if isinstance(l, Pool)]  # x.mean(dim=(2, 3)) -> ReduceMean -> pooling
    assert len(gap) == 1 and (gap[0].mode, gap[0].kernel) == ("avg", 16)


def test_dynamo_export_evaluates_on_every_model(capsys):
    wl = load(str(EXAMPLE))
    for arch in MODELS:
        assert main(["evaluate", arch, str(EXAMPLE), "--json"]) == 0
        r = json.loads(capsys.readouterr().out)
        assert r["total"]["macs"] == wl.macs and r["total"]["vector_ops"] == sum(l.vector_ops for l in wl.layers)
        if arch == "atomswitch":
            assert r["infeasible_reason"].endswith("atomswitch does not run matmul layers")
        else:
            assert r["feasible"] and r["total"]["time_s"] > 0 and r["total"]["energy_j"] > 0

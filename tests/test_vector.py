"""Vector layers (work without MACs) and batched products on every model (issue 13 §2)."""

from __future__ import annotations

import numpy as np
import pytest

from archmodels import get_model
from archmodels.result import LayerBatch
from archmodels.vector import layer_bytes
from workloads.layers import MatMul, Workload, elementwise, layer_norm, softmax

MODELS = ("emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore")


@pytest.mark.parametrize("arch", MODELS)
def test_vector_layer_time_is_bounded_by_its_unit(arch):
    model = get_model(arch)
    pts = model.params.points([{}])
    unit = model.vector_unit(pts)
    for layer in (elementwise("g", "gelu", 1 << 16), softmax("s", 1 << 16, 256), layer_norm("n", 1 << 16, 256, 512)):
        r = model.evaluate(Workload("v", (layer,)))
        lay = r["layers"][0]
        assert r["feasible"] and lay["vector_ops"] == layer.vector_ops and lay["macs"] == 0
        rd, wr = layer_bytes(layer, unit.elem_bytes)
        compute_s = layer.vector_ops / float(np.asarray(unit.ops_per_s).ravel()[0])
        assert lay["time_s"] >= compute_s * (1 - 1e-12)
        assert lay["energy_j"] > 0 and lay["utilization"] == 0
        # traffic: all bytes through DRAM, or none when the model keeps them on chip
        assert lay["dram_bytes"] in (0, pytest.approx(float(np.ravel(rd + wr)[0])))
        assert r["total"]["vector_ops"] == layer.vector_ops


@pytest.mark.parametrize("arch", MODELS)
def test_more_vector_work_never_costs_less(arch):
    model = get_model(arch)
    small = model.evaluate(Workload("a", (elementwise("x", "add", 4096),)))
    big = model.evaluate(Workload("b", (elementwise("x", "gelu", 4096),)))  # same bytes, 5x the ops
    assert big["total"]["time_s"] >= small["total"]["time_s"]
    assert big["total"]["energy_j"] > small["total"]["energy_j"]


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr", "imax", "rena", "multicore"])
def test_batched_matmul_is_its_products_back_to_back(arch):
    model = get_model(arch)
    one = model.evaluate(Workload("1", (MatMul("mm", m=64, k=32, n=64),)))["layers"][0]
    many = model.evaluate(Workload("12", (MatMul("mm", m=64, k=32, n=64, batch=12),)))["layers"][0]
    assert many["macs"] == 12 * one["macs"]
    for key in ("time_s", "cycles", "dram_bytes", "energy_j"):
        assert many[key] == pytest.approx(12 * one[key])
    assert many["utilization"] == pytest.approx(one["utilization"])


def test_no_pool_fusion_across_a_vector_layer():
    # EMAXVR fuses a pool into the conv before it; a vector layer in between (e.g. a sigmoid)
    # needs the conv's whole output, so the pool must not be fused across it
    from workloads.layers import Conv2D, Pool

    c = Conv2D("c", in_ch=16, out_ch=32, kernel_h=3, kernel_w=3, in_h=28, in_w=28, padding=1)
    p = Pool("p", channels=32, in_h=28, in_w=28, kernel=2, stride=2)
    v = elementwise("v", "sigmoid", 32 * 28 * 28)
    m = get_model("emaxvr")
    direct = m.evaluate(Workload("a", (c, p)), pool_fusion=True)["layers"]
    across = m.evaluate(Workload("b", (c, v, p)), pool_fusion=True)["layers"]
    assert direct[1]["fused_into"] == "c"
    assert across[2]["fused_into"] is None


def test_imax_runs_depthwise_convolutions_as_streams():
    from workloads.layers import Conv2D

    dw = Conv2D("dw", in_ch=96, out_ch=96, groups=96, kernel_h=3, kernel_w=3, in_h=56, in_w=56, padding=1)
    r = get_model("imax").evaluate(Workload("dw", (dw,)))
    lay = r["layers"][0]
    assert r["feasible"] and lay["macs"] == 96 * 56 * 56 * 9 and lay["vector_unit"] == "CGRA ALUs"
    # one FMA pass per MAC on 64 units x 2 lanes at 150 MHz, or the host link, whichever is slower
    assert lay["time_s"] >= lay["macs"] / (64 * 2 * 150e6)
    assert 0 < lay["utilization"] <= 1
    # a grouped (not depthwise) convolution still runs as products
    g2 = Conv2D("g2", in_ch=96, out_ch=96, groups=2, kernel_h=3, kernel_w=3, in_h=13, in_w=13, padding=1)
    assert "vector_unit" not in get_model("imax").evaluate(Workload("g", (g2,)))["layers"][0]


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr", "imax", "rena", "multicore"])
@pytest.mark.parametrize("workload", ["resnet50", "mobilenet_v2", "bert_encoder"])
def test_real_networks_run_at_the_published_design_points(arch, workload):
    r = get_model(arch).evaluate(workload)  # the model's defaults = its paper's configuration
    bad = [(l["name"], l["infeasible_reason"]) for l in r["layers"] if not l["feasible"]]
    assert r["feasible"] and not bad, bad
    assert r["total"]["time_s"] > 0 and r["total"]["vector_ops"] > 0


def test_atomswitch_refuses_them_for_real_limits_with_per_layer_reasons():
    r = get_model("atomswitch").evaluate("resnet50")
    bad = [l for l in r["layers"] if not l["feasible"]]
    assert not r["feasible"] and bad and all("mm2 > chip_area_mm2" in l["infeasible_reason"] for l in bad)


# ---- vector.cost_layers: every vector layer of a workload at once == the per-layer costing it replaced ----

def _cost_one_layer(layer, unit, n, model_metrics=()):
    """The per-layer costing before issue 15 (vector.cost): the reference cost_layers must reproduce."""
    ops = float(layer.vector_ops + layer.macs)
    rd, wr = layer_bytes(layer, unit.elem_bytes)
    moved = rd + wr
    onchip = moved <= np.asarray(unit.onchip_kb, dtype=float) * 1024.0
    stream = np.where(onchip, unit.onchip_bytes_per_s, unit.dram_bytes_per_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        time_s = np.broadcast_to(np.maximum(ops / unit.ops_per_s, moved / stream), (n,))
    dram_rd, dram_wr = np.where(onchip, 0.0, rd), np.where(onchip, 0.0, wr)
    compute_pj = ops * np.asarray(unit.op_energy_pj, dtype=float)
    dram_pj = dram_rd * unit.dram_read_pj_per_byte + dram_wr * unit.dram_write_pj_per_byte
    move_pj = np.where(onchip, moved * unit.onchip_pj_per_byte, dram_pj)
    lb = LayerBatch(layer, n)
    lb.set(**{m.name: 0.0 for m in model_metrics})
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(time_s > 0, layer.macs / (time_s * unit.ops_per_s), 0.0)
    lb.set(cycles=time_s * unit.clock_hz, time_s=time_s, utilization=util, dram_read_bytes=dram_rd,
           dram_write_bytes=dram_wr, energy_j=(compute_pj + move_pj) * 1e-12)
    names = {m.name for m in model_metrics}
    if "compute_energy_j" in names:
        lb.set(compute_energy_j=compute_pj * 1e-12)
    if "dram_energy_j" in names:
        lb.set(dram_energy_j=dram_pj * 1e-12)
    if "sram_energy_j" in names:  # (added 2026-11-27: the on-chip moves; tests/test_energy_parts.py)
        lb.set(sram_energy_j=np.where(onchip, moved * unit.onchip_pj_per_byte, 0.0) * 1e-12)
    lb.labels["vector_unit"] = np.full(n, unit.label, dtype=object)
    return lb


def _complete_one_layer(lb, keys):
    metrics, states, labels = keys
    for key in metrics:
        lb.metrics.setdefault(key, np.zeros(lb.n))
    for key in states:
        lb.states.setdefault(key, np.zeros(lb.n))
    for key in labels:
        lb.labels.setdefault(key, np.full(lb.n, None, dtype=object))


def _same_arrays(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=True)) and \
            np.array_equal(np.signbit(a), np.signbit(b))
    return a.shape == b.shape and a.tolist() == b.tolist()


@pytest.mark.parametrize("arch", MODELS)
@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize("network", ["resnet50", "mobilenet_v2", "bert_encoder:seq=32,hidden=64,heads=2,ffn=128"])
def test_vector_layers_at_once_equal_each_layer_alone(arch, n, network):
    """vector.cost_layers over a network's vector layers gives each layer exactly the per-layer costing's metrics,
    states, labels (keys in the same order), feasibility and reasons, for the model's own units at random points
    and with no unit (every layer infeasible)."""
    from archmodels import vector
    from workloads import load_workload

    model = get_model(arch)
    pts = model.params.points(model.params.random_rows(n, np.random.default_rng(len(network) + n)))
    layers = [x for x in load_workload(network).layers if model.runs_as_vector(x)]
    assert layers
    extra = (["cycles", "x_metric", "time_s", "y_metric"], ["S1", "S2"], ["bound", "fused_into"])
    unit = model.vector_unit(pts)
    for u, why in ((unit, None), (None, [f"no {x.kind}" for x in layers])):
        got = vector.cost_layers(layers, u, n, model.LAYER_METRICS, extra, why)
        for i, (layer, lb) in enumerate(zip(layers, got)):
            want = _cost_one_layer(layer, u or vector.VectorUnit("none", 1.0, 1.0, 1.0, 1.0, 0.0), n, model.LAYER_METRICS)
            if why:
                want.infeasible(np.ones(n, bool), why[i])
            _complete_one_layer(want, extra)
            assert lb.layer is layer and lb.n == n
            for part in ("metrics", "states", "labels"):
                a, b = getattr(lb, part), getattr(want, part)
                assert list(a) == list(b), (part, layer.name)
                for k in b:
                    assert _same_arrays(a[k], b[k]), (part, k, layer.name)
            assert _same_arrays(lb.feasible, want.feasible) and _same_arrays(lb.reason, want.reason)

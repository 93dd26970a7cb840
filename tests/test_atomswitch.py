"""Atom-switch model (spec atom_switch.md): calibration, folding, area, feasibility, contract."""

from __future__ import annotations

import json

import numpy as np
import pytest

from archmodels import get_model
from archmodels.atomswitch.circuits import STAGES
from dse import config, validate
from workloads import Workload
from workloads.layers import Conv2D, MatMul, Pool

from .conftest import ROOT, dse_process

M = get_model("atomswitch")


def _layers(result: dict) -> dict[str, dict]:
    return {l["name"]: l for l in result["layers"]}


@pytest.fixture(scope="module")
def lenet() -> dict[str, dict]:
    return _layers(M.evaluate("lenet"))


# ---- calibration (spec §4) ----

def test_validate_passes_every_atomswitch_case():
    res = validate.run("atomswitch")
    assert len(res) == 6
    assert all(r.ok for r in res), validate.report(res)


def test_conv1_pool1_cycles_from_the_circuit(lenet):
    # 28 x 28 pixels, then product + accumulate registers (1 input channel: no adder tree),
    # then the pool's two comparators: 784 + 2 + 2 = 788 against the published 793 (-0.63 %).
    assert lenet["conv1"]["states"] == {"STREAM": 784, "DRAM_STALL": 0, "LOAD": 0, "FILL": 2}
    assert lenet["pool1"]["cycles"] == STAGES.pool == 2
    assert lenet["pool1"]["fused_into"] == "conv1"
    total = lenet["conv1"]["cycles"] + lenet["pool1"]["cycles"]
    assert total == 788
    assert abs(total - 793) / 793 < 0.02
    assert lenet["conv1"]["time_s"] + lenet["pool1"]["time_s"] == pytest.approx(7.88e-6)


def test_conv1_buffer_follows_the_formula_not_the_printed_figure(lenet):
    """Paper prints 28,800 words for conv1's buffer but writes it as 24 x 24 x 20 = 11,520.

    The model follows the formula. (28,800 = 24 x 24 x 50: conv1's output
    size times conv2's channel count, probably a slip.)
    """
    printed = 28_800
    assert lenet["conv1"]["memory_words"] == 24 * 24 * 20 == 11_520
    assert lenet["conv1"]["memory_words"] != printed
    assert printed == 24 * 24 * 50


def test_multipliers_and_memory_words(lenet):
    assert lenet["conv1"]["multipliers"] == 5 * 5 * 20 == 500
    assert lenet["pool1"]["memory_words"] == 12 * 20 == 240
    # predictions (not published): conv2 one circuit per (output, input) channel pair
    assert lenet["conv2"]["multipliers"] == 50 * 20 * 25 == 25_000
    assert lenet["conv2"]["memory_words"] == 8 * 8 * 50
    assert lenet["pool2"]["memory_words"] == 4 * 50
    assert lenet["conv2"]["delay_words"] == 1000 * 4 * (12 - 5)
    assert lenet["conv2"]["adders"] == 50 * 19  # one tree of 19 adders per output channel
    assert lenet["pool1"]["comparators"] == 2 * 20
    # FC: one MAC per neuron, weights in its memory, outputs buffered
    assert lenet["ip1"]["multipliers"] == 500 and lenet["ip1"]["memory_words"] == 800 * 500 + 500
    for l in lenet.values():
        assert l["tiles"] == l["multipliers"]


def test_tiles_in_area_is_chip_over_tile():
    for area, tiles in ((25, 4700), (100, 18800)):
        r = M.evaluate("lenet", chip_area_mm2=float(area))
        assert r["total"]["tiles_in_area"] == tiles


def test_conv2_pool2_cycles_prediction(lenet):
    # 12 x 12 pixels + product + accumulate + adder tree over 20 channels (5 levels) + pool
    assert lenet["conv2"]["cycles"] == 144 + 2 + 5
    assert lenet["pool2"]["cycles"] == 2


def test_fc_mapping_and_relu(lenet):
    # ip1: 800 inputs stream past 500 MACs, then product, accumulate, ReLU; ip2 without ReLU
    assert lenet["ip1"]["cycles"] == 800 + 2 + STAGES.activation
    assert lenet["ip2"]["cycles"] == 500 + 2
    assert lenet["ip2"]["dram_write_bytes"] == 10 * 2  # the network output, 16-bit
    assert lenet["conv1"]["dram_read_bytes"] == 784 * 2  # the image, from outside


# ---- area and feasibility ----

def test_whole_lenet_area_and_feasibility():
    r = M.evaluate("lenet")  # 100 mm2 chip: the paper's conv2 does not fit
    t = r["total"]
    tiles = 500 + 25_000 + 500 + 10
    words = t["memory_words"] + t["delay_words"]
    assert t["tiles"] == tiles
    assert t["min_chip_area_mm2"] == pytest.approx((tiles * 5319 + words * 16 * M.params.defaults()["memory_bit_um2"]) * 1e-6)
    assert 139 < t["min_chip_area_mm2"] < 141
    assert not r["feasible"] and t["feasible"] == 0 and t["area_mm2"] == 100
    assert "layer conv2: this layer alone needs" in r["infeasible_reason"]
    ok = M.evaluate("lenet", chip_area_mm2=150.0)
    assert ok["feasible"] and ok["total"]["feasible"] == 1 and ok["total"]["area_mm2"] == 150


def test_network_that_fits_only_layer_by_layer_is_infeasible_at_the_overflowing_layer():
    # balanced fold 2: conv2 12,500 tiles; the whole network ~74 mm2 > 70 mm2 but each layer < 70 mm2
    r = M.evaluate("lenet", fold=2, chip_area_mm2=70.0)
    assert not r["feasible"]
    assert r["infeasible_reason"].startswith("layer ip1: the network up to this layer needs")


def test_overhead_fraction_scales_area():
    a = M.evaluate("lenet")["total"]["min_chip_area_mm2"]
    b = M.evaluate("lenet", overhead_frac=0.25)["total"]["min_chip_area_mm2"]
    assert b == pytest.approx(1.25 * a)


# ---- folding ----

@pytest.mark.parametrize("fold", [2, 5, 10, 25, 50])
def test_folding_conv2_divides_multipliers_and_multiplies_stream(fold, lenet):
    f = _layers(M.evaluate("lenet", fold=fold, fold_policy="uniform"))
    c2, base = f["conv2"], lenet["conv2"]
    assert c2["passes"] == fold
    assert c2["multipliers"] * fold == base["multipliers"]  # fold divides 50 output channels
    assert c2["states"]["STREAM"] == fold * base["states"]["STREAM"]
    assert c2["states"]["LOAD"] == fold * 25  # 5 x 5 coefficients shifted in before each pass
    assert c2["states"]["FILL"] == base["states"]["FILL"]
    assert c2["cycles"] > base["cycles"] and c2["area_mm2"] < base["area_mm2"]
    # tile area falls by the fold; memory grows by the coefficient store
    assert c2["memory_words"] == base["memory_words"] + 50 * 20 * 25
    assert f["pool2"]["memory_words"] * fold == lenet["pool2"]["memory_words"]


def test_folding_beyond_output_channels_splits_input_channels():
    c2 = _layers(M.evaluate("lenet", fold=100, fold_policy="uniform"))["conv2"]
    # 50 output passes x 2 input halves of 10 channels: tree of 4 levels + partial-sum add
    assert c2["passes"] == 100 and c2["circuits"] == 10
    assert c2["states"]["FILL"] == 2 + 4 + STAGES.partial_sum
    assert c2["cycles"] == 100 * 144 + 100 * 25 + 7


def test_fc_folding_neurons_per_mac(lenet):
    ip1 = _layers(M.evaluate("lenet", fold=4, fold_policy="uniform"))["ip1"]
    assert ip1["multipliers"] == 125 and ip1["passes"] == 4
    assert ip1["states"]["STREAM"] == 4 * 800
    assert ip1["memory_words"] == lenet["ip1"]["memory_words"]  # weights were on chip already


def test_balanced_policy_folds_only_the_big_layers():
    f = _layers(M.evaluate("lenet", fold=10))  # cap: 25,000 / 10 = 2,500 multipliers per layer
    assert f["conv2"]["passes"] == 10 and f["conv2"]["multipliers"] == 2500
    assert f["conv1"]["passes"] == 1 and f["ip1"]["passes"] == 1 and f["ip2"]["passes"] == 1


def test_more_folding_is_slower_and_smaller():
    rows = [{"fold": f} for f in (1, 2, 4, 8, 16, 32, 64)]
    t = M.evaluate_points("lenet", rows).totals
    assert np.all(np.diff(t["time_s"]) > 0)
    assert np.all(np.diff(t["min_chip_area_mm2"]) < 0)


def test_pixels_per_clock_replicates_circuits(lenet):
    f = _layers(M.evaluate("lenet", pixels_per_clock=2))
    assert f["conv1"]["multipliers"] == 2 * lenet["conv1"]["multipliers"]
    assert f["conv1"]["states"]["STREAM"] == 392
    assert f["ip1"]["states"]["FILL"] == lenet["ip1"]["states"]["FILL"] + 1  # adder tree over 2 lanes


def test_dram_weight_store_trades_area_for_time(lenet):
    f = _layers(M.evaluate("lenet", weight_store="dram"))
    ip1 = f["ip1"]
    assert ip1["memory_words"] == 500 and ip1["dram_read_bytes"] == 800 * 500 * 2
    # one pass needs 800,000 B at 12.8 GB/s / 100 MHz = 128 B per clock: 6,250 clocks
    assert ip1["states"]["STREAM"] + ip1["states"]["DRAM_STALL"] == 6250


# ---- other layers and networks ----

def test_padding_and_stride_stream_the_padded_image():
    wl = Workload("t", (Conv2D("c", in_ch=1, out_ch=2, kernel_h=3, kernel_w=3, in_h=4, in_w=4, padding=1),
                        Pool("p", channels=2, in_h=4, in_w=4, kernel=2, stride=2)))
    r = _layers(M.evaluate(wl))
    assert r["c"]["states"]["STREAM"] == 36 and r["c"]["delay_words"] == 2 * 2 * (6 - 3)
    assert r["p"]["fused_into"] == "c"


def test_unsupported_layers_are_infeasible_not_errors():
    r = M.evaluate(Workload("m", (MatMul("mm", m=8, k=8, n=8),)))
    assert not r["feasible"] and "does not run matmul" in r["infeasible_reason"]


@pytest.mark.parametrize("net", ["alexnet", "vgg16"])
def test_big_networks_fit_100mm2_only_with_heavy_folding(net):
    rows = [{"weight_store": "dram", "fold": f} for f in (1, 64, 8192)]
    res = M.evaluate_points(net, rows)
    assert list(res.feasible) == [False, False, True]
    assert np.all(np.diff(res.totals["time_s"]) > 0)
    assert np.isfinite(res.totals["energy_j"]).all()


def test_batch_equals_scalar_on_random_points():
    rows = M.params.random_rows(64, np.random.default_rng(3))
    for net in ("lenet", "alexnet"):
        res = M.evaluate_points(net, rows)
        for i in (0, 17, 63):
            assert M.evaluate(net, **rows[i]) == res.point(i)
        for lb in res.layers:
            u = lb.metrics["utilization"]
            assert np.all((u >= 0) & (u <= 1))


@pytest.mark.parametrize("n", [1, 5])
def test_stage_layer_batches_hold_every_layer_batch_field(n):
    """The model builds its LayerBatches without LayerBatch.__init__ (states and fused_into on first access, one
    point): each must still have every field a LayerBatch has, of the batch's length, as a plain one would."""
    import dataclasses

    from archmodels.result import LayerBatch

    rows = M.params.random_rows(n, np.random.default_rng(4))
    res = M.evaluate_points("lenet", rows)
    for lb in res.layers:
        plain = LayerBatch(lb.layer, n)
        for f in dataclasses.fields(LayerBatch):
            got, want = getattr(lb, f.name), getattr(plain, f.name)
            assert type(got) is type(want), f.name
            if isinstance(want, np.ndarray):
                assert got.shape == want.shape == (n,), f.name
        assert set(plain.labels) <= set(lb.labels)
        assert all(v.shape == (n,) for d in (lb.metrics, lb.states, lb.labels) for v in d.values())


def test_cli_json_fills_the_contract_and_model_keys():
    proc = dse_process("evaluate", "atomswitch", "lenet", "--json")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    for l in r["layers"]:
        assert {"name", "kind", "macs", "cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes",
                "dram_bytes", "energy_j", "fused_into", "states", "multipliers", "memory_words", "tiles",
                "area_mm2"} <= set(l)
        assert l["energy_j"] > 0 and l["cycles"] == sum(l["states"].values())
    assert {"area_mm2", "min_chip_area_mm2", "feasible", "tiles_in_area", "fps", "power_w"} <= set(r["total"])


def test_bad_parameter_is_one_line_exit_2():
    proc = dse_process("evaluate", "atomswitch", "lenet", "--set", "fold_policy=greedy")
    assert proc.returncode == 2
    assert "fold_policy='greedy' is not valid; allowed: balanced, uniform" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# ---- the area study ----

def test_lenet_area_study_front_per_budget():
    """Fastest feasible design per chip budget over the study's whole grid."""
    st = config.load(ROOT / "studies" / "atomswitch_lenet_area.yaml")
    grids = {d.name: d.grid() for d in st.searched}
    mesh = np.meshgrid(*grids.values(), indexing="ij")
    rows = [dict(zip(grids, vals)) for vals in zip(*(m.ravel().tolist() for m in mesh))]
    res = M.evaluate_points(st.workloads[0], [{**st.fixed, **r} for r in rows])
    best = {}
    for budget in (25, 50, 100, 150):
        ok = res.feasible & (res.points["chip_area_mm2"] == budget)
        i = int(np.flatnonzero(ok)[np.argmin(res.totals["time_s"][ok])])
        best[budget] = (int(res.points["fold"][i]), res.points["fold_policy"][i])
        unfolded = ~ok & (res.points["chip_area_mm2"] == budget) & (res.points["fold"] == 1)
        assert unfolded.any() == (budget < 150)  # the unfolded design stops fitting below 150 mm2
    assert best == {25: (9, "balanced"), 50: (4, "balanced"), 100: (2, "balanced"), 150: (1, "balanced")}

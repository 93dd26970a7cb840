"""ReNA model: calibration, the flows against hand counts, DRAM bounds, FPGA resources."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from archmodels import get_model
from archmodels.rena import resources as res
from archmodels.rena.dram import BURST_BYTES, stream_channels
from archmodels.rena.flows import CONTROL_CYCLES
from dse import validate
from dse.cli import main
from workloads import Workload
from workloads.layers import FC, Conv2D, Pool

FPGA = dict(target="fpga")


@pytest.fixture(scope="module")
def rena():
    return get_model("rena")


def one(layer) -> Workload:
    return Workload("one", (layer,))


def test_validate_passes_every_rena_case():
    results = validate.run("rena")
    assert len(results) == 5
    assert all(r.ok for r in results), validate.report(results)


def test_conv_compute_cycles_by_hand(rena):
    # 2 -> 6 channels, 3x3, 6x6 input: 16 output pixels, window T = 18.
    # 4x4 array: 2 filter tiles x 4 pixel tiles, ceil(18/4) = 5 passes per tile.
    conv = Conv2D("c", in_ch=2, out_ch=6, kernel_h=3, kernel_w=3, in_h=6, in_w=6)
    fpga = rena.evaluate(one(conv), pb_rows=4, pb_cols=4, **FPGA)["layers"][0]
    assert fpga["passes"] == 2 * 4 * 5
    # separate ports: a pass = max(load 4, MAC 4) + control; first load and last unload show
    assert fpga["compute_cycles"] == 40 * (4 + CONTROL_CYCLES) + 2 * 4
    asic = rena.evaluate(one(conv), pb_rows=4, pb_cols=4)["layers"][0]
    # shared 2-bit interface, 4 transfers per value: (load 4 + weights 4) x 4 per pass,
    # plus each tile's unload (4 values x 4 transfers)
    assert asic["compute_cycles"] == 40 * (4 * (4 + 4) + CONTROL_CYCLES) + 8 * 4 * 4


def test_conv_dram_bytes_and_cycles_by_hand(rena):
    # VGG16 C8 on 64x64: 4 filter tiles, 49 pixel tiles, 36 passes per tile
    conv = Conv2D("C8", in_ch=256, out_ch=256, kernel_h=3, kernel_w=3, in_h=56, in_w=56, padding=1)
    lay = rena.evaluate(one(conv), **FPGA)["layers"][0]
    x_in, out, w = 4 * 2304 * 3136, 256 * 3136, 49 * 256 * 2304
    assert lay["dram_read_bytes"] == x_in + w and lay["dram_write_bytes"] == out
    # X (inputs + outputs) is the busiest of the X, W, I channels: 205 cycles per 4 KB burst
    assert lay["dram_cycles"] == math.ceil((x_in + out) / BURST_BYTES) * 205
    assert lay["cycles"] == lay["dram_cycles"] + 205 and lay["bound"] == "dram"
    assert lay["states"]["MAC"] + lay["states"]["TRANSFER"] + lay["states"]["DRAM_WAIT"] == lay["cycles"]


def test_fc_is_dram_bound_and_reads_every_weight_once(rena):
    fc = FC("fc", inputs=25088, outputs=4096)
    lay = rena.evaluate(one(fc), **FPGA)["layers"][0]
    assert lay["passes"] == 25088  # 6 chunks x 4096 steps + 512 steps with 8 rings of 512
    weights = 25088 * 4096
    assert lay["dram_read_bytes"] == weights + 2 * 4096 + (6 * 4096 + 8 * 512)  # + routing + inputs
    assert lay["dram_cycles"] == math.ceil((weights + 2 * 4096) / BURST_BYTES) * 205
    assert lay["compute_cycles"] < lay["dram_cycles"] and lay["bound"] == "dram"
    # one MAC per PB per step: the array is busy 1 cycle in 65 at best
    assert lay["utilization"] < 1 / 64


def test_fc_cannot_use_the_second_multiplier_conv_can(rena):
    fc = one(FC("fc", inputs=4096, outputs=4096))
    conv = one(Conv2D("c", in_ch=256, out_ch=256, kernel_h=3, kernel_w=3, in_h=56, in_w=56, padding=1))
    f1, f2 = (rena.evaluate(fc, mults_per_pb=m, **FPGA)["total"]["cycles"] for m in (1, 2))
    assert f1 == f2
    c1, c2 = (rena.evaluate(conv, mults_per_pb=m, **FPGA)["total"]["cycles"] for m in (1, 2))
    assert 0.45 < c2 / c1 < 0.6  # half the passes; outputs still on the X channel


def test_batch_equals_scalar(rena):
    rows = [dict(target="fpga", pb_rows=r, pb_cols=c, mults_per_pb=m, dram_channels=ch, clock_mhz=clk)
            for r, c, m, ch, clk in [(64, 64, 1, 3, 144), (32, 96, 2, 4, 120), (128, 40, 1, 1, 200), (16, 16, 2, 2, 144)]]
    rows += [dict(target="asic"), dict(target="asic", pb_rows=48, mults_per_pb=2, tech_nm=14)]
    batch = rena.evaluate_points("vgg16", rows)
    for i, r in enumerate(rows):
        single = rena.evaluate("vgg16", **r)
        assert batch.point(i) == single


def test_dram_never_faster_than_bursts(rena):
    out = rena.evaluate("vgg16", **FPGA)
    for lay in out["layers"]:
        assert lay["cycles"] >= lay["dram_cycles"] + 205
        assert lay["cycles"] >= lay["compute_cycles"]
    bound = {l["name"]: l["bound"] for l in out["layers"]}
    assert bound["FC19"] == bound["FC20"] == "dram"
    # FC21 has 1000 outputs for 4096 PBs: 4096 steps of 65 cycles > its 1000 bursts of 205
    assert bound["FC21"] == "array"


def test_faster_bursts_or_more_channels_help_only_when_dram_bound(rena):
    base = rena.evaluate("vgg16", **FPGA)["total"]["cycles"]
    assert rena.evaluate("vgg16", dram_burst_cycles=102.5, **FPGA)["total"]["cycles"] < 0.6 * base
    # a 4th channel stripes the X stream (inputs + outputs); the weight stream,
    # one burst per pass like the inputs, then sets the pace
    conv = Conv2D("C8", in_ch=256, out_ch=256, kernel_h=3, kernel_w=3, in_h=56, in_w=56, padding=1)
    three, four = (rena.evaluate(one(conv), dram_channels=c, **FPGA)["layers"][0] for c in (3, 4))
    w_bursts = math.ceil(49 * 256 * 2304 / BURST_BYTES)
    assert four["dram_cycles"] == w_bursts * 205 < three["dram_cycles"]
    five = rena.evaluate(one(conv), dram_channels=5, **FPGA)["layers"][0]  # X and W1 both striped
    x_bursts = math.ceil((4 * 2304 * 3136 + 256 * 3136) / BURST_BYTES)
    assert five["dram_cycles"] == pytest.approx(x_bursts / 2 * 205)  # X is again the busiest
    # the ASIC is limited by its 2-bit transfers, not by DRAM
    asic = rena.evaluate("vgg16-conv")
    assert all(l["bound"] == "array" for l in asic["layers"] if l["kind"] == "conv")


def test_channel_map_follows_the_paper():
    assert stream_channels(3, 1) == [{"X": 1.0}, {"W1": 1.0}, {"I": 1.0}]
    assert stream_channels(3, 2) == [{"X": 1.0}, {"W1": 1.0}, {"W2": 1.0, "I": 1.0}]
    assert stream_channels(1, 1) == [{"X": 1.0, "W1": 1.0, "I": 1.0}]
    assert stream_channels(4, 1) == [{"X": 0.5}, {"W1": 1.0}, {"I": 1.0}, {"X": 0.5}]


def test_fpga_resources_predictions_and_scaling(rena):
    """The published rows are fitted (ALMs, BRAM) or by construction (DSP = PBs): see archmodels/fitted.py.
    What can fail here: the 2-mult BRAM prediction, the DSP packing rule, and per-PB scaling."""
    two_m = rena.evaluate("vgg16", mults_per_pb=2, **FPGA)["total"]
    assert two_m["bram_mb"] == pytest.approx(9.92, rel=0.01)  # predicted, published 9.92
    assert two_m["dsp"] == 4096  # two 18x19 multipliers share one DSP block
    assert rena.evaluate("vgg16", mults_per_pb=2, bits=16, **FPGA)["total"]["dsp"] == 4096  # 16 <= 18 bits: dual
    res_ = rena.evaluate_points("vgg16", [{"pb_rows": 32, "pb_cols": 32, **FPGA}, {"pb_rows": 64, "pb_cols": 64, **FPGA}])
    for key in ("dsp", "bram_mb", "logic"):
        assert res_.totals[key][1] == pytest.approx(4 * res_.totals[key][0], rel=1e-4)
    assert two_m["mac_units"] == 8192


def test_resources_scale_with_the_array(rena):
    small = rena.evaluate("lenet", pb_rows=32, pb_cols=32, **FPGA)["total"]
    assert small["dsp"] == 1024 and small["logic"] == round(1024 * res.ALM_PER_PB)
    assert small["bram_mb"] == pytest.approx(9.99 / 4)
    wide = rena.evaluate("lenet", pb_rows=64, pb_cols=64, bits=16, **FPGA)["total"]
    assert wide["dsp"] == 4096 and wide["bram_mb"] == pytest.approx(2 * 9.99)


def test_design_exceeding_the_device_is_infeasible_not_an_error(rena):
    out = rena.evaluate("vgg16", pb_rows=80, pb_cols=80, **FPGA)
    assert not out["feasible"]
    assert out["infeasible_reason"] == "exceeds the stratix10-sx2800: DSP blocks (5760)"
    assert out["total"]["dsp"] == 6400 and out["total"]["fps"] > 0  # metrics still filled
    out = rena.evaluate("vgg16", dram_channels=5, device="arria10-gx1150", **FPGA)
    assert "DSP blocks (1518)" in out["infeasible_reason"] and "DRAM channels (2" in out["infeasible_reason"]
    full = rena.evaluate("vgg16", pb_rows=72, pb_cols=80, **FPGA)  # 5,760 DSP exactly: fits, but not at 144 MHz
    assert not full["feasible"] and full["infeasible_reason"].startswith("timing: clock above the 119 MHz")
    assert rena.evaluate("vgg16", pb_rows=72, pb_cols=80, clock_mhz=118, **FPGA)["feasible"]


def test_fpga_fmax_falls_with_utilization_and_is_anchored_on_the_published_port(rena):
    """The published 64 x 64 port closes at 144 MHz (spec rena.md §4); smaller designs close faster."""
    res = rena.evaluate_points("vgg16", [{"pb_rows": r, "pb_cols": 64, **FPGA} for r in (16, 32, 64)])
    fmax = res.totals["fmax_mhz"]
    assert fmax[2] == pytest.approx(144.0, rel=1e-12)
    assert fmax[0] > fmax[1] > fmax[2]
    assert res.feasible.all()
    assert not rena.evaluate("vgg16", clock_mhz=150, **FPGA)["feasible"]


def test_asic_area_energy_and_target_defaults(rena):
    out = rena.evaluate("vgg16")
    p, t = out["params"], out["total"]
    assert (p["clock_mhz"], p["dram_burst_cycles"], p["transfer_bits"], p["array_ports"]) == (350.0, 64.0, 2, "shared")
    assert t["dsp"] is None and t["logic"] is None and t["bram_mb"] is None
    assert 1 < t["area_mm2"] < 50 and t["energy_j"] > 0
    assert rena.evaluate("vgg16", tech_nm=14)["total"]["area_mm2"] < t["area_mm2"]
    f = rena.evaluate("vgg16", **FPGA)
    assert f["params"]["clock_mhz"] == 144.0 and f["total"]["area_mm2"] is None
    # an explicit value wins over the target default
    assert rena.evaluate("vgg16", clock_mhz=100, **FPGA)["params"]["clock_mhz"] == 100.0


def test_paper_orderings(rena):
    """Spec §4: the FPGA beats the ASIC on convolution but loses on the whole network;
    the 2-multiplier variant is better on convolution and worse on the whole network
    at a lower clock (100 MHz here: the clock is an input)."""
    fps = {}
    for wl in ("vgg16-conv", "vgg16"):
        fps[wl, "fpga"] = rena.evaluate(wl, **FPGA)["total"]["fps"]
        fps[wl, "asic"] = rena.evaluate(wl)["total"]["fps"]
        fps[wl, "2mult"] = rena.evaluate(wl, mults_per_pb=2, clock_mhz=100, **FPGA)["total"]["fps"]
    assert fps["vgg16-conv", "fpga"] > fps["vgg16-conv", "asic"]
    assert fps["vgg16", "fpga"] < fps["vgg16", "asic"]
    assert fps["vgg16-conv", "2mult"] > fps["vgg16-conv", "fpga"]
    assert fps["vgg16", "2mult"] < fps["vgg16", "fpga"]


def test_sparse_layers_are_infeasible_with_nan_metrics(rena):
    out = rena.evaluate("spmv:n=64,sparsity=0.5", **FPGA)
    assert not out["feasible"] and "does not run spmv" in out["infeasible_reason"]
    assert out["layers"][0]["cycles"] is None


def test_pool_streams_through_dram(rena):
    pool = Pool("p", channels=64, in_h=224, in_w=224, kernel=2, stride=2)
    lay = rena.evaluate(one(pool), **FPGA)["layers"][0]
    assert lay["macs"] == 0 and lay["utilization"] == 0
    assert lay["dram_read_bytes"] == 64 * 224 * 224 and lay["dram_write_bytes"] == 64 * 112 * 112
    assert lay["dram_cycles"] == math.ceil(64 * 224 * 224 * 1.25 / BURST_BYTES) * 205


def test_cli_json_contract(capsys):
    assert main(["evaluate", "rena", "vgg16", "--set", "target=fpga", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    t = out["total"]
    for key in ("macs", "cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "dram_bytes",
                "energy_j", "power_w", "area_mm2", "macs_per_s", "fps", "dsp", "bram_mb", "logic"):
        assert key in t
    assert t["fps"] == pytest.approx(1 / t["time_s"]) and t["dsp"] == 4096 and t["logic"] == 303_615
    for lay in out["layers"]:
        assert set(lay["states"]) == {"MAC", "TRANSFER", "DRAM_WAIT"}
        assert 0 <= lay["utilization"] <= 1 and lay["fused_into"] is None
        assert lay["dram_bytes"] == lay["dram_read_bytes"] + lay["dram_write_bytes"]


@pytest.mark.parametrize("arg,needle", [
    ("target=gpu", "target='gpu' is not valid; allowed: asic, fpga"),
    ("device=virtex", "device='virtex' is not valid; allowed: stratix10-sx2800, arria10-gx1150"),
    ("mults_per_pb=3", "allowed: 1, 2"),
    ("pb_rows=0", "allowed: 1..1024"),
])
def test_bad_parameters_exit_2_with_one_line(capsys, arg, needle):
    assert main(["evaluate", "rena", "lenet", "--set", arg]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_many_points_in_one_call(rena):
    rng = np.random.default_rng(0)
    rows = [dict(target="fpga", pb_rows=int(r), pb_cols=int(c), mults_per_pb=int(m), dram_channels=int(ch))
            for r, c, m, ch in zip(rng.integers(8, 129, 300), rng.integers(8, 129, 300),
                                   rng.integers(1, 3, 300), rng.integers(1, 5, 300))]
    res_ = rena.evaluate_points("vgg16", rows)
    fps = res_.totals["fps"]
    assert np.all(np.isfinite(fps)) and np.all(fps > 0)
    # feasibility is exactly the DSP limit (BRAM and ALMs are far from theirs) and timing at the default 144 MHz:
    # DSP share u closes at 300 / (1 + 1.5234375 u) MHz, >= 144 up to the published 4,096 PBs
    dsp = np.array([r["pb_rows"] * r["pb_cols"] for r in rows])
    assert np.array_equal(res_.feasible, dsp <= 4096)
    assert (dsp > 4096).any() and (dsp <= 4096).any()


def test_a_study_searching_the_target_gets_each_targets_defaults(tmp_path):
    """Parameters left at 0 / auto take the default of the target each trial samples (clock, bursts,
    transfer width, ports), on the study path as in ``dse evaluate``: fixed values resolved once per
    study must not freeze the default target's values."""
    from dse import config
    from dse.objective import evaluate_rows

    path = tmp_path / "target.yaml"
    path.write_text("name: target\narch: rena\nworkload: fc1\nspace:\n  target: [asic, fpga]\n"
                    "objectives:\n  - total.time_s: minimize\nn_trials: 2\n")
    st = config.load(path)
    ev = evaluate_rows(st, [{"target": "fpga"}, {"target": "asic"}])
    for i, target in enumerate(("fpga", "asic")):
        direct = get_model("rena").evaluate("fc1", target=target)
        assert ev.totals["time_s"][i] == direct["total"]["time_s"], target

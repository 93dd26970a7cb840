"""EMAXVR mapping space (issue 12): SPM-resident tilings, pins, criteria, compulsory traffic, explanation."""

from __future__ import annotations

import numpy as np
import pytest

from archmodels import get_model

from .conftest import dse_process

VGG = "vgg16-conv"


def _run(workload: str, rows: list[dict]):
    m = get_model("emaxvr")
    return m.evaluate_points(workload, [{**m.params.defaults(), **r} for r in rows])


def _conv(res, key: str, i: int = 0) -> dict[str, float]:
    def get(lb):
        if key == "dram_bytes":
            return lb.metrics["dram_read_bytes"][i] + lb.metrics["dram_write_bytes"][i]
        return lb.metrics[key][i]

    return {lb.layer.name: get(lb) for lb in res.layers if lb.layer.kind == "conv"}


def _label(res, key: str, i: int = 0) -> dict[str, str]:
    return {lb.layer.name: lb.labels[key][i] for lb in res.layers if lb.layer.kind == "conv"}


def test_vgg16_partial_sums_stay_in_the_spm_at_128kb():
    """The issue's symptom: at 128 KB the default mapper sent most partial sums through DRAM (1,035 MB)."""
    r = _run(VGG, [{"spm_kb": 128.0}])
    sched = _label(r, "schedule")
    multi_pass = [k for k, v in _conv(r, "passes").items() if v > 1]
    assert multi_pass and all("psum:spm" in sched[k] for k in multi_pass), sched
    ratio = r.totals["dram_bytes"][0] / r.totals["dram_compulsory_bytes"][0]
    assert ratio < 1035e6 / r.totals["dram_compulsory_bytes"][0]  # below the 1,035 MB
    # With the fitted TIE_RTOL (1.5 %) the default re-reads weights per output row where that is faster;
    # "fastest, then least traffic within 10 %" gets within a few times the compulsory traffic.
    r = _run(VGG, [{"spm_kb": 128.0, "criterion": "time_then_dram"}])
    assert r.totals["dram_bytes"][0] / r.totals["dram_compulsory_bytes"][0] < 5.0


def test_spm_sweep_has_no_cliff_under_the_dram_criterion():
    sizes = [96.0, 128.0, 160.0, 192.0, 256.0]
    r = _run(VGG, [{"spm_kb": s, "criterion": "dram"} for s in sizes])
    d = r.totals["dram_bytes"]
    assert np.all(np.diff(d) <= 1e-6 * d[:-1]), d
    assert d[1] < 1.5 * d[-1]  # 128 KB within 50 % of 256 KB (was 6.8x)


def test_thesis_schedules_remain_points_of_the_space():
    """Pinning the thesis's choices (one start per pass, halo in the SPM) still plans every layer."""
    r = _run("alexnet-conv", [{"ic_loop": "outer", "halo": "spm"}, {}])
    for key in ("time_s", "dram_bytes"):
        assert r.totals[key][0] == pytest.approx(r.totals[key][1], rel=1e-12)


@pytest.mark.parametrize("pins, check", [
    ({"psum_home": "dram"}, lambda sched, passes: all("psum:dram" in sched[k] for k in passes)),
    ({"ic_loop": "inner", "spm_kb": 256.0}, None),
    ({"band_size": 2}, None),
])
def test_pins_restrict_the_chosen_plan(pins, check):
    r = _run(VGG, [pins])
    assert r.feasible[0]
    sched = _label(r, "schedule")
    passes = [k for k, v in _conv(r, "passes").items() if v > 1]
    if check:
        assert check(sched, passes), sched
    if pins.get("ic_loop") == "inner":  # one start per output row (and group/segment), passes inside
        nest = _label(r, "loop_nest")
        assert all("IC x" in nest[k] for k in passes), nest
        act, starts = _conv(r, "activations"), _conv(r, "starts")
        assert all(act[k] < starts[k] * _conv(r, "bands")[k] for k in passes)
    if "band_size" in pins:
        bands = _conv(r, "bands")
        assert bands["C2"] >= 112  # 224 output rows, at most 2 per band


def test_criteria_pick_what_they_say():
    crits = ["time", "energy", "dram", "edp", "time_then_dram"]
    r = _run(VGG, [{"criterion": c} for c in crits])
    t, e, d = (np.array([list(_conv(r, k, i).values()) for i in range(len(crits))])
               for k in ("time_s", "energy_j", "dram_bytes"))
    i = {c: crits.index(c) for c in crits}
    assert (t[i["time"]] <= t.min(axis=0) * 1.03 + 1e-12).all()
    assert (d[i["dram"]] <= d.min(axis=0) * 1.001 + 1e-6).all()
    edp = t * e
    assert (edp[i["edp"]] <= edp.min(axis=0) * 1.03 + 1e-18).all()
    # 10 % of time allowed for less traffic: never more traffic than the time criterion's 3 % ties
    assert (d[i["time_then_dram"]] <= d[i["time"]] * 1.001 + 1e-6).all()
    assert (t[i["time_then_dram"]] <= t.min(axis=0) * 1.10 + 1e-12).all()


def test_explain_keys_and_flag():
    r = _run("alexnet-conv", [{}])
    c1 = {k: r.layers[0].labels[k][0] for k in ("loop_nest", "tiles", "placement", "runner_up", "runner_up_lost")}
    assert "start[" in c1["loop_nest"] and "IC" in c1["tiles"] and "partial sums: SPM" in c1["placement"]
    assert c1["runner_up"] != "-" and c1["runner_up_lost"]
    assert r.layers[0].metrics["runner_up_dram_ratio"][0] > 1.0  # the runner-up lost on traffic (a 3 % time tie)
    proc = dse_process("evaluate", "emaxvr", "alexnet-conv", "--explain")
    assert proc.returncode == 0, proc.stderr
    assert "runner_up" in proc.stdout and "placement" in proc.stdout and "P3: fused into C1" in proc.stdout


def test_traffic_never_below_compulsory_on_builtins():
    m = get_model("emaxvr")
    rows = [m.params.defaults()] + m.params.random_rows(12, np.random.default_rng(3))
    for wl in ("alexnet", "vgg16-conv", "lenet"):
        res = m.evaluate_points(wl, rows)
        for lb in res.layers:
            d = lb.metrics["dram_read_bytes"] + lb.metrics["dram_write_bytes"]
            ok = lb.feasible & np.isfinite(d)
            assert (d[ok] >= lb.metrics["dram_compulsory_bytes"][ok] * (1 - 1e-9)).all(), (wl, lb.layer.name)

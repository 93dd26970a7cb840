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


# ---------------------------------------------------------------- channels per start (issue 12)
@pytest.mark.parametrize("pattern, oc, ocp, t_max, elem", [
    ("A", 384, 1, 171, 2), ("A", 384, 1, 342, 2), ("B", 384, 4, 260, 2), ("B", 512, 16, 96, 4),
    ("pairs", 256, 2, 30, 2), ("B", 64, 4, 64, 2), ("A", 100, 1, 7, 4)])
def test_oc_tiles_are_legal_and_include_the_most_that_fit(pattern, oc, ocp, t_max, elem):
    from archmodels.emax.mapper import BUS_ALIGN_BYTES, TILE_SEARCH_MAX, oc_tiles
    tiles = oc_tiles(pattern, oc, ocp, t_max, elem)
    unit = 1 if pattern == "A" else ocp
    assert tiles[0] == t_max and len(set(tiles)) == len(tiles) <= TILE_SEARCH_MAX
    assert all(0 < t <= t_max and t % unit == 0 for t in tiles[1:])
    if t_max >= oc:
        assert tiles == (t_max,)
    per_lmm = (lambda t: 2 * t * elem) if pattern == "A" else (lambda t: 2 * (t // ocp) * elem)
    aligned = [t for t in range(unit, t_max + 1, unit) if per_lmm(t) % BUS_ALIGN_BYTES == 0]
    if aligned and t_max < oc:  # the largest tile whose transfers fill whole words of every bus width
        assert max(aligned) in tiles


@pytest.mark.parametrize("oc, t_max, elem, spread", [(256, 90, 4, (3, 2)), (256, 52, 4, (3, 2)), (512, 300, 2, (5, 3)),
                                                     (128, 56, 4, (3, 2)), (96, 40, 1, (9, 5))])
def test_oc_tiles_align_spread_transfers_too(oc, t_max, elem, spread):
    """A pattern-A start whose taps do not come 2 to a kernel LMM (3 taps over 2 LMMs) has its weights spread evenly
    over them by the plans: the largest tile whose spread bytes fill whole words is tried, beside every 2-value tile."""
    from archmodels.emax.mapper import BUS_ALIGN_BYTES, oc_tiles
    plain, tiles = oc_tiles("A", oc, 1, t_max, elem), oc_tiles("A", oc, 1, t_max, elem, spread=spread)
    assert tiles[:len(plain)] == plain  # nothing lost, the same order (ties resolve as before)
    values, lmms = spread
    whole = [t for t in range(1, t_max + 1) if (t * values * elem) % (BUS_ALIGN_BYTES * lmms) == 0]
    if whole:
        assert max(whole) in tiles
    assert len(tiles) <= len(plain) + 1


def test_oc_tile_knob_caps_the_channels_per_start():
    r = _run("alexnet-conv", [{"oc_tile": 40}, {}])
    assert r.feasible.all()
    tiles = _label(r, "tiles")
    per_start = {k: int(v.split("OC ")[1].split(" per start")[0]) for k, v in tiles.items() if "OC " in v}
    assert per_start and all(v <= 40 for v in per_start.values()), tiles
    # fewer channels per start: more starts, never less DRAM traffic than every channel at once
    assert r.totals["starts"][0] > r.totals["starts"][1]


def test_dram_criterion_searches_tiles_the_time_criterion_does_not():
    """With an LMM that limits the channels per start, criterion=dram may pick a smaller tile than the most that
    fit; it never moves more DRAM traffic than the same point planned with the max tile only (oc_tile pinned)."""
    base = {"lmm_kb": 0.5, "spm_kb": 1024.0, "fsm_bus_bits": 512, "criterion": "dram"}
    r = _run("alexnet-conv", [base, dict(base, criterion="time")])
    d = r.totals["dram_bytes"]
    assert r.feasible.all() and d[0] <= d[1]


def test_weights_move_per_chunk_not_averaged():
    """_by_chunk: the full chunks and the last one carry their own bytes and add up to the total."""
    import numpy as np
    from archmodels.emax.traffic import _by_chunk
    slots = _by_chunk("weight", True, np.array([12.0]), np.array([5.0]), np.array([60.0]), np.array([6000.0]),
                      np.array([384]), np.array([171]), 4)
    moved = sum(float(np.where(s.on, s.bursts * s.per_burst * s.each, 0.0)[0]) for s in slots)
    assert moved == pytest.approx(6000.0)
    each = sorted({round(float(s.each[0]), 6) for s in slots if np.asarray(s.on).all()})
    assert each == pytest.approx([6000 * 42 / 384 / 20, 6000 * 171 / 384 / 20])  # 60 transfers, 20 per chunk


@pytest.mark.parametrize("ow, n_min, step", [(224, 1, 1), (224, 3, 1), (13, 1, 2), (7, 4, 1), (1, 1, 1)])
def test_ow_segments_start_at_the_fewest_that_fit(ow, n_min, step):
    from archmodels.emax.mapper import SEGMENT_SEARCH_MAX, ow_segments
    segs = ow_segments(ow, n_min, step)
    assert segs[0] == n_min and len(segs) <= 1 + SEGMENT_SEARCH_MAX
    top = -(-ow // step)
    assert all(n > n_min and n & (n - 1) == 0 and n <= top for n in segs[1:]), segs


def _chain_cost(planned, k, run, resident, keep):
    """The least exact DRAM bytes of layers ``run`` of combination k in the contexts decided."""
    from archmodels.emax.model import CONTEXTS
    tot = 0.0
    for i in run:
        s = planned.seg(i, k) + CONTEXTS.index((bool(resident[i]), bool(keep[i])))
        n, d = (planned.n_chain, planned.dram_chain) if resident[i] else (planned.n_all, planned.dram_all)
        tot += d[s] if n[s] else np.inf
    return tot


@pytest.mark.parametrize("wl", ["vgg16-conv", "alexnet-conv", "lenet"])
def test_dram_chaining_never_costs_more_than_the_greedy_one(wl, monkeypatch):
    """criterion=dram decides which outputs stay in the SPM by dynamic programming over the whole chain: its
    total of the layers' least DRAM bytes is never above the pairwise greedy decision's on the same plans."""
    from archmodels import get_model
    from archmodels.emax import model as em
    seen = []
    dp = em._chain_least_dram

    def both(k, layers, shapes, fused, pooled, planned, resident, keep):
        # the greedy decision for combination k alone (it decides for many at once: full-width arrays)
        nl, nk = len(layers), planned.n_comb
        r0, k0, pooled_k = (np.zeros((nl, nk), bool) for _ in range(3))
        r0[:, k], k0[:, k], pooled_k[:, k] = resident, keep, pooled
        em._chain(np.array([k]), layers, shapes, [[f if j == k else None for j in range(nk)] for f in fused], pooled_k,
                  planned, r0, k0)
        r0, k0 = r0[:, k], k0[:, k]
        dp(k, layers, shapes, fused, pooled, planned, resident, keep)
        run = [i for i in range(len(layers)) if fused[i] is None and shapes[i] is not None]
        seen.append((_chain_cost(planned, k, run, resident, keep), _chain_cost(planned, k, run, r0, k0)))

    monkeypatch.setattr(em, "_chain_least_dram", both)
    monkeypatch.setattr(em, "CHAIN_DP_NUMPY_FROM", 1 << 30)  # one by one (the numpy path: test_emax_batched_paths4)
    em.workload_plans.cache_clear()
    m = get_model("emaxvr")
    rows = [dict(r, criterion="dram") for r in m.params.random_rows(40, np.random.default_rng(7))]
    m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    assert seen
    assert all(a <= b * (1 + 1e-12) or b == np.inf for a, b in seen), [s for s in seen if s[0] > s[1]]
    assert any(a < b for a, b in seen) or wl != "vgg16-conv"  # the greedy order is not optimal somewhere

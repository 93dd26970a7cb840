"""IMAX fast paths (issue 15): a point alone (Python-number screen, cached schedules) and a batch (plans over
configurations) give the same numbers, states and reasons, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from archmodels import get_model
from archmodels.testing import assert_alone_equals_batch
from archmodels.imax import schedule as S

M = get_model("imax")


def _rows(n: int, seed: int, divisors: tuple[int, ...]) -> list[dict]:
    """Random points of the declared space, half of them with ``nchip`` dividing n (so that many schedule)."""
    rng = np.random.default_rng(seed)
    rows = M.params.random_rows(n, rng)
    for row in rows[::2]:
        row["nchip"] = int(rng.choice(divisors))
        row["units"] = int(rng.integers(8, 160))
        row["lmm_kb"] = int(rng.choice([4, 8, 16, 32, 64, 256]))
    return rows


@pytest.mark.parametrize("wl, divisors", [("spmm:n=96,sparsity=0.9", (1, 2, 3, 4, 8)),
                                          ("spmm:m=300,k=200,n=16,sparsity=0.97", (1, 2, 4)),
                                          ("alexnet-conv", (1, 2, 3))])
def test_each_point_alone_equals_the_batch_states_and_reasons(wl, divisors):
    batch = assert_alone_equals_batch(M, wl, _rows(120, 11, divisors))
    assert batch.feasible.any() and not batch.feasible.all()


@pytest.mark.parametrize("shared_tails", [False, True])
def test_scalar_constraints_equal_the_array_ones(shared_tails):
    """broken() over Python numbers == over arrays; no_schedule_reason() == no_schedule_reasons() (whose lines
    are joined from shared (nchip, lmm_kb) tails when many configurations share them, else written whole)."""
    rng = np.random.default_rng(3)
    G = 400
    mapping = rng.choice(["dense", "ivj", "ivs"], G)
    lmm_kb, nchip = ((rng.choice([3, 40], G), rng.choice([5, 7], G)) if shared_tails
                     else (rng.integers(1, 64, G), rng.integers(1, 12, G)))
    cfg = S.configurations(rng.integers(1, 600, G), rng.integers(1, 600, G), 96, mapping, rng.integers(1, 100, G),
                           rng.choice([1, 2, 4, 8], G), lmm_kb, nchip)
    ok = ~cfg["error"]
    lim = {k: v[ok] if np.ndim(v) else v for k, v in cfg.items()}
    arrays = S.no_schedule_reasons(lim, shared=shared_tails)
    for g in range(int(ok.sum())):
        one = {k: (v[g].item() if np.ndim(v) else v) for k, v in lim.items()}
        for a, b in [(1, 1), (2, 3), (1, 8)]:
            flags = S.broken(lim, a, b, b)
            want = {c: bool(np.broadcast_to(flags[c], ok.sum())[g]) for c in flags}
            assert {c: bool(x) for c, x in S.broken(one, a, b, b).items()} == want
        p = S.build(96, 96, 96, "dense", "dense", 64, 4, 64, 1, with_tiles=False)  # only its error is read
        assert S.no_schedule_reason(p, one) == arrays[g]


@pytest.mark.parametrize("seed", [5, 6])
def test_sparse_plans_of_all_formats_and_tilings_at_once_equal_the_tile_walk(seed):
    """plans.sparse_plans over configurations of both formats, both mappings and many tilings side by side
    (padded with an empty tile) == schedule() of each configuration's built tiles, count by count."""
    from archmodels.imax import plans as P
    from workloads.parametric import matrix_of, parse

    layer = parse("spmm:m=150,k=260,cols=48,sparsity=0.9,bias=1.5,seed=4").layers[0]
    rng = np.random.default_rng(seed)
    G = 240
    fmt, mapping = rng.choice(["csr", "jds"], G), rng.choice(["ivj", "ivs"], G)
    units, cols = rng.integers(8, 90, G), rng.choice([1, 2, 4, 8], G)
    lmm_kb, nchip, opt = rng.integers(1, 8, G), rng.choice([1, 2, 4], G), rng.random(G) < 0.5
    cfg = S.configurations(150, 260, 48, mapping, units, cols, lmm_kb, nchip)
    live = np.flatnonzero(~S.unschedulable(cfg))
    cfg = {k: v[live] if np.ndim(v) else v for k, v in cfg.items()}
    assert len(set(zip(cfg["rt"].tolist(), cfg["ct"].tolist()))) >= 3  # several tilings in one call
    d = P.sparse_plans(layer, fmt[live], mapping[live], 48, cfg, opt[live])
    first = np.cumsum(d["count"]) - d["count"]
    checked = set()
    for i, g in enumerate(live):
        sch = S.schedule(S.build(150, 260, 48, fmt[g], mapping[g], int(units[g]), int(cols[g]), int(lmm_kb[g]),
                                 int(nchip[g]), matrix_of(layer)), bool(opt[g]))
        if d["fallback"][i]:
            assert any(t.blocks == 0 for t in sch.problem.tiles)
            continue
        own = slice(first[i], first[i] + d["count"][i])
        assert d["count"][i] == len(sch.agrp) and d["bgrp"][own].tolist() == sch.bgrp.tolist()
        assert d["agrp"][own].tolist() == sch.agrp.tolist()
        for key in S.FEATURES:
            assert d["feats"][key][own].tolist() == sch.feats[key].tolist(), (i, key)
        want = P.from_schedule(sch)["per"]
        for key, v in d["per"].items():
            assert v[i] == want[key][0], key
        checked.add((fmt[g], mapping[g], bool(opt[g])))
    assert len(checked) == 8  # every format, mapping and lmm_opt met


def test_distinct_rows_by_code_equal_np_unique_rows():
    """schedule.distinct_rows (one mixed-radix code per row, or tuples when the code would overflow) gives
    np.unique(axis=0)'s first indices and inverse; reasons and build errors are written per distinct row."""
    rng = np.random.default_rng(8)
    for big in (False, True):
        cols = [rng.integers(0, 5, 300), rng.integers(0, 3, 300), rng.integers(0, 4, 300)]
        if big:  # a radix product past 2**62: the tuple path
            cols.append(rng.choice([0, 1 << 40], 300))
            cols.append(rng.choice([0, 1 << 30], 300))
        first, inv = S.distinct_rows(tuple(cols))
        rows = np.stack(cols, axis=1)
        _, want_first, want_inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        assert first.tolist() == want_first.tolist() and inv.tolist() == np.asarray(want_inv).reshape(-1).tolist()
        assert (rows[first][inv] == rows).all()


def test_build_error_lines_name_only_their_key():
    """model._reasons writes one build-error line per distinct (mapping, cols, units) when H < 1 and per lmm_kb
    otherwise: the line must not depend on anything else (else points would share a wrong line)."""
    from archmodels.imax import costs as C

    for mapping in C.MAPPINGS:
        for cols in (1, 2, 4, 8):
            for units in (4, 5, 6, 8, 12, 20, 40):
                H = int(C.mac_units(units, cols, mapping))
                if H < 1:
                    assert len({S.build_error(mapping, units, cols, kb, H) for kb in (1, 4, 64, 4096)}) == 1
    lines = {S.build_error(m, u, c, 1, int(C.mac_units(u, c, m))) for m in C.MAPPINGS for c in (1, 2, 4, 8)
             for u in (64, 100, 1024) if C.mac_units(u, c, m) >= 1}
    assert len(lines) == 1


def test_batch_dram_energy_equals_tech():
    """model._Batch.dram_energy_j (pJ per byte looked up once per batch) == tech.dram_energy_j, bit for bit."""
    from archmodels import tech
    from archmodels.imax import model as IM

    rng = np.random.default_rng(4)
    pts = M.params.points(M.params.random_rows(300, rng))
    batch = IM._Batch.of(pts)
    for _ in range(2):  # the second call reads the remembered lookup
        reads, writes = rng.random(300) * 1e9, rng.integers(0, 1 << 40, 300).astype(float)
        reads[::7] = np.nan
        got, want = batch.dram_energy_j(reads, writes), tech.dram_energy_j(reads, writes, pts["dram"])
        assert np.array_equal(got, want, equal_nan=True) and got.tobytes() == want.tobytes()


# ---- one configuration in Python numbers (third round): the scalar schedule of a one-point study's new point

_FMT_MAP = [("dense", "dense"), ("csr", "ivj"), ("jds", "ivj"), ("csr", "ivs"), ("jds", "ivs")]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 300), k=st.integers(1, 400), n=st.sampled_from([1, 6, 12, 16, 48, 96, 100, 512]),
       fmt_map=st.sampled_from(_FMT_MAP), units=st.integers(5, 120), cols=st.sampled_from([1, 2, 4, 8]),
       lmm_kb=st.integers(1, 32), nchip=st.sampled_from([1, 2, 3, 4]),
       sparsity=st.sampled_from([0.5, 0.9, 0.97, 0.999]), seed=st.integers(0, 50))
def test_point_schedule_equals_the_array_counts(m, k, n, fmt_map, units, cols, lmm_kb, nchip, sparsity, seed):
    """schedule() (candidate_ranges, point_features: Python integers) == candidates() + dominant() and
    features() / features_swapped_a() (numpy over tiles x candidates), bit for bit and dtype for dtype; and
    point_features over every candidate (several AGRP values: the JDS packing per cap) == features(). Tiny
    LMMs cut A into row and column tiles; sparsity 0.999 leaves empty tiles."""
    from workloads import sparse

    fmt, mapping = fmt_map
    mat = None if fmt == "dense" else sparse.generate(m, k, sparsity, 1.5, seed)
    p = S.build(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip, mat)
    for opt in (True, False):
        sch = S.schedule(p, opt)
        A, B = S.candidates(p, opt) if not p.error else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        keep = S.dominant(A) if len(A) else slice(None)
        A, B = A[keep], B[keep]
        assert sch.agrp.tolist() == A.tolist() and sch.bgrp.tolist() == B.tolist()
        assert sch.agrp.dtype == A.dtype and sch.bgrp.dtype == B.dtype
        if not len(A):
            assert sch.feats == {}
            continue
        want = S.features(p, A, B) if opt else S.features_swapped_a(p, B)
        _assert_same_counts(sch.feats, want)
    A, B = S.candidates(p, True) if not p.error else ((), ())
    if len(A):
        _assert_same_counts(S.point_features(p, A.tolist(), B.tolist(), True), S.features(p, A, B))


def _assert_same_counts(got: dict, want: dict) -> None:
    assert list(got) == list(want) == list(S.FEATURES)
    for key in S.FEATURES:
        assert got[key].dtype == want[key].dtype and got[key].shape == want[key].shape, key
        assert got[key].tobytes() == want[key].tobytes(), key


def test_point_packing_equals_the_array_packing():
    """schedule._pack_one (one tile, one AGRP cap, Python integers) == schedule.pack and groups_of, on
    falling Margins (JDS) whose sums meet the budget exactly at many blocks."""
    rng = np.random.default_rng(12)
    for _ in range(400):
        margins = sorted(rng.integers(0, 12, int(rng.integers(1, 14))).tolist(), reverse=True)
        budget, agrp = int(rng.integers(1, 30)), int(rng.integers(1, 6))
        want = [int(x[0]) for x in S.pack(margins, len(margins), budget, np.array([agrp]))]
        assert list(S._pack_one(margins, budget, agrp)) == want


@settings(max_examples=300, deadline=None)
@given(m=st.integers(1, 5000), k=st.integers(1, 5000), n=st.integers(1, 2048), fmt_map=st.sampled_from(_FMT_MAP),
       units=st.integers(1, 1024), cols=st.sampled_from([1, 2, 4, 8]), lmm_kb=st.integers(1, 4096),
       nchip=st.integers(1, 64))
def test_point_screen_equals_the_problem_screen(m, k, n, fmt_map, units, cols, lmm_kb, nchip):
    """schedule.screen (Python integers, no Problem) == build(with_tiles=False): its H and error, else
    unschedulable's test (n % nchip, the BGRP bound) and no_schedule_reason with the screen's limits."""
    fmt, mapping = fmt_map
    p = S.build(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip, with_tiles=False)
    if p.error:
        want = (p.H, p.error)
    elif n % nchip != 0 or S._bgrp_cap(p) < 1:
        want = (p.H, S.no_schedule_reason(p, dict(S._limits(p), jds_top=-1)))
    else:
        want = (p.H, None)
    assert S.screen(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip) == want


def test_one_point_totals_equal_the_array_totals():
    """model_totals of one point (Python numbers, _totals_one) == the array path's row of that point in a batch
    (every key, in order, bit for bit), on networks whose layers mix NaN (no schedule) and numbers; _fmax is
    np.fmax."""
    from archmodels.imax import model as IM
    from workloads import load_workload

    nan = float("nan")
    for a, b in [(nan, nan), (nan, 2.0), (3.0, nan), (1.0, 2.0), (2.0, 1.0), (0.0, 0.0)]:
        assert np.array_equal(np.fmax(a, b), IM._fmax(a, b), equal_nan=True)
    for wl in ("alexnet", "spmm:n=96,sparsity=0.9"):
        w = load_workload(wl)
        pts = M.params.points(_rows(40, 21, (1, 2, 3, 4)))
        many = M.model_totals(w, pts, M._evaluate_all(w, pts))
        for i in range(40):
            one_pts = {k: v[i:i + 1] for k, v in pts.items()}
            one = M.model_totals(w, one_pts, M._evaluate_all(w, one_pts))
            assert list(one) == list(many)
            for key, v in one.items():
                assert v.shape == (1,) and v.dtype == np.float64 and v.tobytes() == many[key][i:i + 1].astype(float).tobytes(), key


def test_one_point_check_config_equals_tech_clock_check():
    """check_config of one point (the clock costs the evaluation keeps, tech.clock_check only when infeasible)
    == tech.clock_check: the same flags and reasons, a writable flag array, feasible and infeasible clocks."""
    from archmodels import tech

    rows = M.params.random_rows(300, np.random.default_rng(30))
    seen = set()
    for row in rows:
        pts = M.params.points([row])
        got, want = M.check_config(pts), tech.clock_check(pts["clock_mhz"], pts["tech_nm"])
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
        assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype and got[0].flags.writeable
        seen.add(bool(got[0][0]))
    assert seen == {True, False}


def test_cost_formulas_on_python_integers_equal_the_array_ones():
    """costs' chain stages, fill, CONF/REGV/RANGE words and area parts of one configuration in Python numbers
    (no numpy call) == the same formulas over arrays, value for value."""
    from archmodels.imax import costs as C

    for mapping in C.MAPPINGS:
        for cols in (1, 2, 4, 8):
            units = np.arange(1, 300)
            for fn in (C.chain_stages, C.fill_cycles):
                arr = fn(units, np.full(len(units), cols), mapping)
                assert [fn(int(u), cols, mapping) for u in units] == arr.tolist()
                assert type(fn(64, cols, mapping)) is int
    for fn in (C.conf_words, C.regv_words, C.range_words):
        assert fn(60, 4) == fn(np.array([60]), np.array([4]))[0] and type(fn(60, 4)) is int
    for u, kb, nc, f in [(64, 64, 1, 150.0), (1000, 4096, 64, 1999.5), (8, 4, 3, 10.0)]:
        one = C.area_parts_mm2(u, kb, nc, 28, f, 1.37)
        arr = C.area_parts_mm2(np.array([u]), np.array([kb]), np.array([nc]), 28, np.array([f]), np.array([1.37]))
        assert [float(x) for x in one] == [float(x[0]) for x in arr]


def test_one_point_run_equals_the_stored_choice():
    """model._chosen_one (the fastest candidate's numbers read as Python numbers, one array) == _store_one
    (every number written into a NaN block as the batched path writes it), bit for bit, over scalar schedules
    of every format, mapping and lmm_opt at random clocks and link bandwidths."""
    from archmodels.imax import model as IM, plans as P
    from workloads.parametric import parse

    layer = parse("spmm:m=150,k=260,cols=48,sparsity=0.9,bias=1.5,seed=4").layers[0]
    rng = np.random.default_rng(17)
    done = set()
    for _ in range(400):
        fmt, mapping = _FMT_MAP[rng.integers(len(_FMT_MAP))]
        units, cols, kb = int(rng.integers(8, 90)), int(rng.choice([1, 2, 4, 8])), int(rng.integers(1, 8))
        opt = bool(rng.random() < 0.5)
        sch = S.cached_schedule((150, 260, 48, layer), fmt, mapping, units, cols, kb, int(rng.choice([1, 2, 4])), opt)
        if not sch.feasible:
            continue
        clock, bw = np.array([rng.uniform(10, 2000) * 1e6]), np.array([rng.uniform(0.01, 1000) * 1e9])
        plan = P.from_schedule(sch)
        H = sch.problem.H
        want = dict(zip(IM._RUN_NAMES, np.full((len(IM._RUN_NAMES), 1), np.nan)))
        want["H"] = np.array([float(H)])
        IM._store_one(want, IM._Plans(plan["count"], plan["feats"], plan["agrp"], plan["bgrp"], plan["per"]),
                      sch.problem.nchip, clock, bw)
        got = IM._chosen_one(plan, H, sch.problem.nchip, clock, bw)
        for k in IM._RUN_NAMES:
            assert got[k].shape == (1,) and got[k].dtype == want[k].dtype and got[k].tobytes() == want[k].tobytes(), k
        assert got["ok"].tolist() == [True] and got["reason"].tolist() == [""]
        done.add((fmt, mapping, opt))
    assert len(done) == 10

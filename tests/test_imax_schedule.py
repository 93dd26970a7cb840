"""IMAX LMM scheduling: constraints 4.4.1-4.4.10, the search against brute force, the counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from archmodels.imax import costs as C
from archmodels.imax import schedule as S
from workloads import sparse

_A = sparse.generate(48, 70, 0.7, 1.5, 1)

# (m, k, n, format, mapping, units, cols, lmm_kb, nchip): small cases, some infeasible
CASES = [
    (48, 70, 16, "csr", "ivj", 16, 2, 4, 1),
    (48, 70, 24, "jds", "ivj", 24, 4, 8, 2),
    (48, 70, 24, "jds", "ivs", 40, 2, 2, 1),
    (48, 70, 12, "dense", "dense", 12, 1, 4, 3),
    (48, 70, 8, "csr", "ivj", 20, 4, 1, 4),
    (48, 70, 8, "jds", "ivj", 20, 4, 4, 3),  # 8 columns over 3 chips: no BGRP (4.4.10)
    (48, 70, 16, "dense", "dense", 10, 2, 1, 1),  # 1 KB LMM: row and column tiles
]


def _problem(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip):
    return S.build(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip, None if fmt == "dense" else _A)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("lmm_opt", [True, False])
def test_search_equals_brute_force(case, lmm_opt):
    p = _problem(*case)
    sch = S.schedule(p, lmm_opt)
    for clock_hz, bw in [(150e6, 1.818e9), (1e9, 0.05e9), (30e6, 50e9)]:
        bf = S.brute_force(p, lmm_opt, clock_hz, bw, box=24)
        if not sch.feasible:
            assert bf is None
            continue
        assert sch.agrp.max() < 24 and sch.bgrp.max() < 24  # the brute-force box covers the space
        i = S.choose(sch, p.nchip, np.array([clock_hz]), np.array([bw]))[0]
        assert (int(sch.agrp[i]), int(sch.bgrp[i]), int(sch.bgrp[i])) == bf


@pytest.mark.parametrize("case", CASES)
def test_candidates_are_exactly_the_feasible_set(case):
    p = _problem(*case)
    A, B = S.candidates(p, lmm_opt=True)
    got = set(zip(A.tolist(), B.tolist()))
    want = {(a, b) for a in range(1, 40) for b in range(1, 40) if not S.violations(p, a, b, b)}
    assert got == want


@pytest.mark.parametrize("case", [c for c in CASES if c[5] != 20 or c[8] != 3])
@pytest.mark.parametrize("lmm_opt", [True, False])
def test_closed_form_counts_equal_the_loop_nest_walk(case, lmm_opt):
    p = _problem(*case)
    sch = S.schedule(p, lmm_opt)
    assert sch.feasible
    for j in range(len(sch.agrp)):
        sim = S.simulate(p, int(sch.agrp[j]), int(sch.bgrp[j]), lmm_opt)
        for key in S.FEATURES:
            assert sch.feats[key][j] == pytest.approx(sim[key]), key


def test_unoptimised_order_resends_a_and_keeps_b_and_c():
    p = _problem(48, 70, 16, "csr", "ivj", 16, 2, 4, 1)
    opt = S.simulate(p, 1, 4, lmm_opt=True)
    old = S.simulate(p, 1, 4, lmm_opt=False)
    blocks = sum(t.blocks for t in p.tiles)
    assert old["a_bytes"] == pytest.approx(opt["a_bytes"] * old["b_groups"])  # A once per B group
    assert old["starts"] == opt["starts"] == blocks * old["b_groups"]
    assert old["c_load_bytes"] == 0 < opt["c_load_bytes"]  # the C group stays across blocks
    assert old["exec_cycles"] == opt["exec_cycles"]


def test_resolved_constraints_follow_the_text():
    p = S.build(1024, 1024, 1024, "csr", "ivj", 64, 4, 64, 1, sparse.generate(1024, 1024, 0.99, 0.0, 0))
    assert "4.4.9" not in S.violations(p, 1, 8, 8)  # BGRP = W x 2 allowed (printed "!=" would refuse it)
    assert "4.4.9" in S.violations(p, 1, 9, 9)  # wider than the SIMD execution width
    p3 = S.build(64, 64, 96, "dense", "dense", 64, 4, 64, 1)
    assert "4.4.10" not in S.violations(p3, 1, 8, 8)  # 96 divides by 8 (printed "!= 0" would refuse)
    assert "4.4.10" in S.violations(p3, 1, 5, 5)
    assert S.pad_of(1024, 58) == 58 - 1024 % 58 and S.pad_of(116, 58) == 0  # 4.4.1
    assert "4.4.8" in S.violations(p3, 1, 4, 8)


def test_optimised_1024_fills_the_lmm_and_unoptimised_keeps_one_block():
    A = sparse.generate(1024, 1024, 0.9, 0.0, 0)
    p = S.build(1024, 1024, 1024, "csr", "ivj", 64, 4, 64, 1, A)
    opt, unopt = S.schedule(p, True), S.schedule(p, False)
    i = S.choose(opt, 1, np.array([150e6]), np.array([1.818e9]))[0]
    assert opt.agrp[i] * 1024 * 8 == 32 * 1024  # AGRP = 4 fills the A half (4.4.2 at equality)
    assert list(unopt.agrp) == [1] and list(unopt.bgrp) == [8]


def test_no_schedule_is_reported_with_the_constraints():
    p = S.build(300, 200, 1, "csr", "ivj", 64, 4, 64, 2, sparse.generate(300, 200, 0.9, 0.0, 0))
    assert not S.schedule(p, True).feasible
    reason = S.no_schedule_reason(p)
    assert "4.4.10" in reason and "4.4.5" in reason and "nchip=2" in reason
    small = S.build(64, 64, 64, "csr", "ivs", 16, 4, 64, 1, sparse.generate(64, 64, 0.9, 0.0, 0))
    assert small.H == 0 and "ivs needs at least 22 units" in S.no_schedule_reason(small)


def test_tiles_when_one_lmm_half_cannot_hold_a_row_block():
    p = S.build(3000, 5000, 8, "dense", "dense", 64, 4, 8, 1)  # 8 KB LMM: 1024 rows x 4 B per half
    assert (p.row_tiles, p.col_tiles) == (3, 5)
    assert sum(t.rows for t in p.tiles) == 3000 * 5 and sum(t.cols for t in p.tiles) == 5000 * 3
    assert S.schedule(p, True).feasible


# ---------------------------------------------------------------- mechanisms (hand-checked)

def test_simd_width_binds_sparse_starts_but_not_dense_ones():
    """4.4.9: a sparse start covers W x 2 B columns; the dense §3 loop iterates the B columns it holds."""
    dense = S.build(64, 64, 64, "dense", "dense", 64, 4, 64, 1)
    sparse_p = S.build(64, 64, 64, "csr", "ivj", 64, 4, 64, 1, sparse.generate(64, 64, 0.9, 0.0, 0))
    assert "4.4.9" not in S.violations(dense, 1, 16, 16) and "4.4.9" in S.violations(sparse_p, 1, 16, 16)
    # dense: B slab 64 x 64 x 4 = 16 KB <= 32 KB and C 64 x 64 x 4 <= 64 KB: all 64 columns in one start
    assert int(S.candidates(dense, True)[1].max()) == 64
    assert int(S.candidates(sparse_p, True)[1].max()) == 8
    d = S.simulate(dense, 2, 64)
    s = S.simulate(sparse_p, 1, 8)
    assert d["starts"] == 1  # 2 blocks of 60 columns, one A group, one B group
    assert s["starts"] == 64 / 8  # one start per 8 B columns
    assert d["pauses"] == 1  # the second block of the A group
    # EXEC of a dense pass: 64 rows x 64/8 LOOP0 iterations x 4 cycles, + fill of 61 stages x 8 cycles
    assert d["exec_cycles"] == 2 * (64 * 8 * 4 + 61 * 8)


def test_counts_of_a_small_dense_product_by_hand():
    # 16 x 16 @ 16 x 16, 12 units -> H = 8, 2 columns, 1 KB LMM: 2 blocks of 8 columns
    p = S.build(16, 16, 16, "dense", "dense", 12, 2, 1, 1)
    assert p.H == 8 and [t.blocks for t in p.tiles] == [2]
    assert "4.4.3" in S.violations(p, 3, 8, 8) and "4.4.4" in S.violations(p, 1, 9, 9)  # 16 x 9 x 4 > 512
    f = S.simulate(p, 2, 8)
    assert f["starts"] == 2  # one A group x two B groups of 8 columns
    assert f["a_bytes"] == 16 * 16 * 4  # A once, 4-byte values
    assert f["b_bytes"] == 2 * 16 * 8 * 4  # a 16 x 8 slab per start (broadcast once)
    assert f["c_drain_bytes"] == 2 * 16 * 8 * 4 and f["c_load_bytes"] == 0  # one A group: no partial sums
    assert f["pauses"] == 2  # block 2 of the group, in each start
    fill = 9 * 2 * 2  # H + 1 = 9 stages x 2 cycles per thread x 2 threads
    assert f["exec_cycles"] == 2 * (2 * 16 * 2 * 2 + 2 * fill)  # 2 passes x 16 rows x 2 iterations x 2 cycles
    # full REGV at the A group's first start only; the second start changes only the B group (issue 12)
    assert f["regv_words"] == 12 * 2 * C.REGV_WORDS_PER_PE + C.B_GROUP_WORDS + 2 * C.PAUSE_WORDS


def test_unchanged_ranges_stay_in_lmm():
    A = sparse.generate(48, 70, 0.2, 0.0, 3)  # long rows: several blocks of H = 8
    spmv = S.build(48, 70, 1, "csr", "ivj", 14, 2, 4, 1, A)
    f = S.simulate(spmv, 1, 1)
    blocks = spmv.tiles[0].blocks
    assert blocks > 1 and f["starts"] == blocks  # AGRP = 1: one A group per block
    assert f["b_bytes"] == 70 * 4  # one B group: the vector is sent once ...
    assert f["c_drain_bytes"] == 48 * 4 and f["c_load_bytes"] == 0  # ... and C never leaves the LMM
    one_block = S.build(48, 70, 16, "csr", "ivj", 16, 2, 4, 1, sparse.generate(48, 70, 0.95, 0.0, 1))
    assert one_block.tiles[0].blocks == 1
    old = S.simulate(one_block, 1, 4, lmm_opt=False)
    new = S.simulate(one_block, 1, 4, lmm_opt=True)
    assert old["starts"] == new["starts"] == 4 and old["a_bytes"] == new["a_bytes"]  # A sent once either way


def test_ivs_offset_units_hold_the_set_indices():
    assert C.a_unit_row_bytes("ivs", 4) == 16 * 4 and C.a_unit_row_bytes("ivj", 4) == 8
    assert C.a_unit_row_bytes("dense", 4) == 4
    A = sparse.generate(1024, 1024, 0.9, 0.0, 0)
    ivs = S.build(1024, 1024, 1024, "csr", "ivs", 64, 4, 64, 1, A)
    ivj = S.build(1024, 1024, 1024, "csr", "ivj", 64, 4, 64, 1, A)
    assert ivs.row_tiles == 2 and ivj.row_tiles == 1  # 1024 rows x 64 B overflow a 32 KB half
    assert S.candidates(ivs, True)[0].max() == 1 and S.candidates(ivj, True)[0].max() == 4


def test_pipeline_fill_counts_the_chain_stages():
    assert int(C.chain_stages(64, 4, "dense")) == 61  # H + 1 (§3)
    assert int(C.chain_stages(64, 4, "ivj")) == 58 + 2 + 1
    assert int(C.chain_stages(64, 4, "ivs")) == 3 * (2 + 16) + 1
    assert int(C.fill_cycles(64, 4, "dense")) == 61 * 2 * 4  # 8 cycles per stage with 4 threads


# ---- the whole-batch screen (issue 15): what it flags and the reasons it writes equal the full build's

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 300), k=st.integers(1, 300), n=st.integers(1, 96), fmt_map=st.sampled_from(
    [("dense", "dense"), ("csr", "ivj"), ("jds", "ivj"), ("csr", "ivs"), ("jds", "ivs")]),
       units=st.integers(1, 80), cols=st.sampled_from([1, 2, 4, 8]), lmm_kb=st.integers(1, 64),
       nchip=st.integers(1, 12), seed=st.integers(0, 1000))
def test_unschedulable_screen_and_reasons_equal_the_full_build(m, k, n, fmt_map, units, cols, lmm_kb, nchip, seed):
    fmt, mapping = fmt_map
    mat = None if fmt == "dense" else sparse.generate(m, k, 0.9, 1.5, seed)
    p = S.build(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip, mat)
    sch = S.schedule(p, True)
    cfg = S.configurations(m, k, n, np.array([mapping]), [units], [cols], [lmm_kb], [nchip])
    assert cfg["H"][0] == p.H and bool(cfg["error"][0]) == bool(p.error)
    flagged = bool(S.unschedulable(cfg)[0])
    if flagged:  # never a configuration that has a schedule
        assert not sch.feasible
    if not p.error:
        assert (cfg["arow"][0], cfg["acol"][0]) == (p.tile_rows, p.tile_cols)
        assert cfg["b_hi"][0] == S._bgrp_cap(p)
        if flagged:  # the reason without tiles is the one of the full problem
            assert S.no_schedule_reasons(cfg)[0] == S.no_schedule_reason(p)
    for a, b in [(1, 1), (2, 3), (1, 8)] if not p.error else []:  # violations over arrays == one by one
        flags = S.broken({key: np.asarray([v]) for key, v in S._limits(p).items()}, a, b, b)
        assert [c for c in S.CONSTRAINTS if np.ravel(flags[c])[0]] == S.violations(p, a, b, b)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 400), k=st.integers(1, 700), n=st.sampled_from([1, 6, 12, 16, 48, 96, 100]),
       units=st.integers(5, 90), cols=st.sampled_from([1, 2, 4, 8]), lmm_kb=st.integers(1, 16),
       nchip=st.sampled_from([1, 2, 3, 4]), lmm_opt=st.booleans())
def test_dense_closed_form_plans_equal_the_tile_walk(m, k, n, units, cols, lmm_kb, nchip, lmm_opt):
    """plans.dense_plans (no tiles, many configurations at once) == schedule() of the built tiles, candidate
    by candidate and count by count, on small LMMs that cut A into row and column tiles."""
    from archmodels.imax import plans as P

    cfg = S.configurations(m, k, n, np.array(["dense"]), [units], [cols], [lmm_kb], [nchip])
    if S.unschedulable(cfg)[0]:
        return
    sch = S.schedule(S.build(m, k, n, "dense", "dense", units, cols, lmm_kb, nchip), lmm_opt)
    d = P.dense_plans(m, k, n, cfg, np.array([lmm_opt]))
    assert sch.feasible and d["count"][0] == len(sch.agrp)
    assert d["agrp"].tolist() == sch.agrp.tolist() and d["bgrp"].tolist() == sch.bgrp.tolist()
    for key in S.FEATURES:
        assert d["feats"][key].tolist() == sch.feats[key].tolist(), key
    p = sch.problem
    assert (d["per"]["blocks"][0], d["per"]["slots"][0]) == (sum(t.blocks for t in p.tiles), p.stored_slots)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(8, 200), k=st.integers(8, 300), n=st.sampled_from([1, 8, 12, 16, 48]),
       fmt_map=st.sampled_from([("csr", "ivj"), ("jds", "ivj"), ("csr", "ivs"), ("jds", "ivs")]),
       units=st.integers(8, 90), cols=st.sampled_from([1, 2, 4, 8]), lmm_kb=st.integers(1, 16),
       nchip=st.sampled_from([1, 2, 4]), lmm_opt=st.booleans(), sparsity=st.sampled_from([0.5, 0.9, 0.97]),
       seed=st.integers(0, 50))
def test_sparse_plans_over_all_chain_lengths_equal_the_tile_walk(m, k, n, fmt_map, units, cols, lmm_kb, nchip,
                                                                 lmm_opt, sparsity, seed):
    """plans.sparse_plans (Margins for all H at once from sorted row counts) == schedule() of the built tiles."""
    from archmodels.imax import plans as P
    from workloads.parametric import matrix_of, parse

    fmt, mapping = fmt_map
    layer = parse(f"spmm:m={m},k={k},cols={n},sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    cfg = S.configurations(m, k, n, np.array([mapping]), [units], [cols], [lmm_kb], [nchip])
    if S.unschedulable(cfg)[0]:
        return
    sch = S.schedule(S.build(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip, matrix_of(layer)), lmm_opt)
    d = P.sparse_plans(layer, fmt, mapping, n, cfg, np.array([lmm_opt]))
    if d["fallback"][0]:  # an empty tile: left to schedule()
        assert any(t.blocks == 0 for t in sch.problem.tiles)
        return
    assert sch.feasible and d["count"][0] == len(sch.agrp)
    assert d["agrp"].tolist() == sch.agrp.tolist() and d["bgrp"].tolist() == sch.bgrp.tolist()
    for key in S.FEATURES:
        assert d["feats"][key].tolist() == sch.feats[key].tolist(), key
    want = P.from_schedule(sch)["per"]
    for key, v in d["per"].items():
        assert v[0] == want[key][0], key

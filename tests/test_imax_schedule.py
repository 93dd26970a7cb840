"""IMAX LMM scheduling: constraints 4.4.1-4.4.10, the search against brute force, the counts."""

from __future__ import annotations

import numpy as np
import pytest

from archmodels import imax_schedule as S
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

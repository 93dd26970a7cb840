"""IMAX batched paths of issue 15's fifth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from workloads import load_workload
from workloads.parametric import parse

from .test_imax_batched4 import _rows, random_limits

M = get_model("imax")


def _same(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype == object:
        assert a.tolist() == b.tolist()
    else:
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), (a, b)


def _plans_equal(a: dict, b: dict) -> None:
    for key in ("count", "agrp", "bgrp", "fallback"):
        _same(a[key], b[key])
    assert list(a["feats"]) == list(b["feats"]) == list(S.FEATURES)
    for key in S.FEATURES:
        _same(a["feats"][key], b["feats"][key])
    assert set(a["per"]) == set(b["per"])
    for key in a["per"]:
        _same(a["per"][key], b["per"][key])


def _configs(rng, m: int, k: int, n: int, G: int, lmm_hi: int, opt: str):
    """Random live configurations of an m x k x n sparse product (small LMMs: many tiles), both formats and
    mappings, LMM sizes log-uniform below ``lmm_hi`` KB, ``opt``: every configuration with the LMM optimisation,
    none, or a mix."""
    fmt, mapping = rng.choice(["csr", "jds"], G), rng.choice(["ivj", "ivs"], G)
    cfg = S.configurations(m, k, n, mapping, rng.integers(8, 90, G), rng.choice([1, 2, 4, 8], G),
                           np.maximum(1, 2 ** rng.uniform(0, np.log2(lmm_hi), G)).astype(np.int64),
                           rng.choice([1, 2, 4, 3], G))
    live = np.flatnonzero(~S.unschedulable(cfg))
    lmm_opt = {"all": np.ones(G, bool), "none": np.zeros(G, bool), "mixed": rng.random(G) < 0.5}[opt]
    return fmt[live], mapping[live], {key: v[live] if np.ndim(v) else v for key, v in cfg.items()}, lmm_opt[live]


@settings(max_examples=40, deadline=None)
@given(m=st.integers(20, 200), k=st.integers(20, 300), n=st.sampled_from([12, 16, 48, 96]),
       sparsity=st.sampled_from([0.5, 0.9, 0.97, 0.999]), seed=st.integers(0, 40),
       lmm_hi=st.sampled_from([3, 8, 64]),
       opt=st.sampled_from(["all", "none", "mixed"]), rng_seed=st.integers(0, 10_000))
def test_sparse_plans_by_pairs_equal_the_padded_groups(m, k, n, sparsity, seed, lmm_hi, opt, rng_seed):
    """plans.sparse_plans (one pass over (tile, configuration) pairs, sums per configuration, counts per
    candidate from the sums) == plans.sparse_plans_padded (per-tile sums over padded [tile slots, candidates]
    arrays in four groups): every count, candidate, problem number and fallback flag, bit for bit and dtype for
    dtype; empty tiles (sparsity 0.999) and many tiles (small LMMs) included."""
    layer = parse(f"spmm:m={m},k={k},cols={n},sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    fmt, mapping, cfg, lmm_opt = _configs(np.random.default_rng(rng_seed), m, k, n, 120, lmm_hi, opt)
    if not len(lmm_opt):
        return
    _plans_equal(P.sparse_plans(layer, fmt, mapping, n, cfg, lmm_opt),
                 P.sparse_plans_padded(layer, fmt, mapping, n, cfg, lmm_opt))


@pytest.mark.parametrize("opt", ["all", "none", "mixed"])
def test_sparse_plans_by_pairs_many_tilings_and_one_format_name(opt):
    """The same on many tilings side by side (a 1024 x 1024 matrix, LMMs up to 4 MB), and with the format and
    mapping given as one name for all configurations."""
    layer = load_workload("spmm:n=1024,sparsity=0.95").layers[0]
    rng = np.random.default_rng(3)
    fmt, mapping, cfg, lmm_opt = _configs(rng, 1024, 1024, 1024, 600, 4096, opt)
    assert len(set(zip(cfg["rt"].tolist(), cfg["ct"].tolist()))) >= 10
    _plans_equal(P.sparse_plans(layer, fmt, mapping, 1024, cfg, lmm_opt),
                 P.sparse_plans_padded(layer, fmt, mapping, 1024, cfg, lmm_opt))
    _plans_equal(P.sparse_plans(layer, "jds", "ivs", 1024, cfg, lmm_opt),
                 P.sparse_plans_padded(layer, "jds", "ivs", 1024, cfg, lmm_opt))


@pytest.mark.parametrize("opt", [True, False])
def test_candidates_of_one_lmm_opt_equal_per_configuration(opt):
    """plans._candidates with one Python bool for every configuration == with it per configuration."""
    rng = np.random.default_rng(5)
    G = 400
    cfg = S.configurations(300, 200, 96, rng.choice(["ivj", "ivs", "dense"], G), rng.integers(8, 300, G),
                           rng.choice([1, 2, 4, 8], G), rng.integers(4, 256, G), rng.choice([1, 2, 3, 4, 8], G))
    a_max = rng.integers(1, 9, G)
    got = P._candidates(96, cfg, opt, a_max)
    want = P._candidates(96, cfg, np.full(G, opt), a_max)
    for a, b in zip(got, want):
        _same(a, b)
    assert got[0].sum() > 0


def test_reasons_from_the_limits_alone_and_timing_from_its_counts():
    """no_schedule_reasons reads only schedule.LIMIT_NAMES, timing only schedule.TIMING_FEATURES (the batched
    paths gather just those): the same lines and times as from every number."""
    rng = np.random.default_rng(9)
    ok, lim = random_limits(rng, 500)
    _same(S.no_schedule_reasons({key: lim[key] for key in S.LIMIT_NAMES}), S.no_schedule_reasons(lim))
    feats = {key: rng.integers(0, 10**6, 50).astype(float) for key in S.FEATURES}
    nchip, clock, bw = rng.integers(1, 8, 50), rng.uniform(1e7, 2e9, 50), rng.uniform(1e7, 1e11, 50)
    want = S.timing(feats, nchip, clock, bw)
    got = S.timing({key: feats[key] for key in S.TIMING_FEATURES}, nchip, clock, bw)
    assert list(got) == list(want)
    for key in want:
        _same(got[key], want[key])


def test_runs_of_several_products_split_equal_each_product_alone():
    """_runs of several dense products at once (one pass over (product, configuration) pairs: the candidates of
    one lmm_opt array, the reasons from LIMIT_NAMES) == each product's _runs alone: flags, reasons, every number."""
    pts = M.params.points(_rows(300, 4, (1, 2, 3, 4)))
    keys = [(64, 96, 48, None), (100, 30, 12, None), (7, 500, 96, None)]
    together = M._runs(keys, IM._Batch.of(pts), False)
    for key, got in zip(keys, together):
        want = M._runs([key], IM._Batch.of(pts), False)[0]
        assert set(got) == set(want)
        for name in want:
            _same(got[name], want[name])
    assert all(r["ok"].any() and not r["ok"].all() for r in together)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(1, 40), min_size=0, max_size=12), min_size=1, max_size=30),
       st.integers(1, 60), st.integers(1, 6), st.integers(0, 10_000))
def test_pack_pairs_equals_pack(margin_lists, budget_hi, agrp_hi, seed):
    """schedule.pack_pairs (pairs ordered by blocks, a shrinking prefix walked per block, no ``b > start`` test,
    the last few pairs in Python integers) == schedule.pack of the same pairs (padded Margins, 0 past each pair's
    blocks), pair by pair; pairs without blocks included; the Python tail from the start, never, or from a block."""
    rng = np.random.default_rng(seed)
    P = len(margin_lists)
    B = max(len(ms) for ms in margin_lists)
    margins = np.zeros((B, P), np.int64)
    for j, ms in enumerate(margin_lists):
        margins[:len(ms), j] = sorted(ms, reverse=True)  # JDS Margins do not grow from block to block
    blocks = np.array([len(ms) for ms in margin_lists], dtype=np.int64)
    budget, agrp = rng.integers(1, budget_hi + 1, P), rng.integers(1, agrp_hi + 1, P)
    want = S.pack(margins, blocks, budget, agrp)
    tail = S._PACK_TAIL
    try:
        for S._PACK_TAIL in (tail, 0, 4, 1000):  # Python tail from some block on, numpy only, Python only
            for got, w in zip(S.pack_pairs(margins, blocks, budget, agrp), want):
                _same(got, w)
    finally:
        S._PACK_TAIL = tail

"""IMAX batched paths of issue 15's fifth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import costs as C
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from archmodels.result import LayerBatch
from workloads import load_workload
from workloads.layers import SpMM
from workloads.parametric import parse

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
    G = 500
    cfg = S.configurations(rng.integers(1, 900, G), rng.integers(1, 900, G), 96, rng.choice(["dense", "ivj", "ivs"], G),
                           rng.integers(1, 1024, G), rng.choice([1, 2, 4, 8], G), rng.integers(4, 4097, G),
                           rng.integers(1, 65, G))
    ok = ~cfg["error"]
    lim = {key: v[ok] if np.ndim(v) else v for key, v in cfg.items()}
    _same(S.no_schedule_reasons({key: lim[key] for key in S.LIMIT_NAMES}), S.no_schedule_reasons(lim))
    feats = {key: rng.integers(0, 10**6, 50).astype(float) for key in S.FEATURES}
    nchip, clock, bw = rng.integers(1, 8, 50), rng.uniform(1e7, 2e9, 50), rng.uniform(1e7, 1e11, 50)
    want = S.timing(feats, nchip, clock, bw)
    got = S.timing({key: feats[key] for key in S.TIMING_FEATURES}, nchip, clock, bw)
    assert list(got) == list(want)
    for key in want:
        _same(got[key], want[key])


def _rows(n: int, seed: int, divisors: tuple[int, ...]) -> list[dict]:
    """Random points, half of them with nchip dividing n and small structures (many schedule)."""
    rng = np.random.default_rng(seed)
    rows = M.params.random_rows(n, rng)
    for row in rows[::2]:
        row["nchip"] = int(rng.choice(divisors))
        row["units"] = int(rng.choice([8, 16, 24, 40, 64]))
        row["lmm_kb"] = int(rng.choice([4, 8, 16, 64, 256]))
    return rows


def _full(r: dict, n: int) -> dict:
    """A run of ImaxModel._runs_on's form (numbers kept at ``at``) as the earlier one: every number over every
    point, NaN without a schedule."""
    out = {key: r[key] for key in ("H", "ok", "reason", "time")}
    for key in IM._AT_NAMES:
        row = np.full(n, np.nan)
        row[r["at"]] = r[key]
        out[key] = row
    return out


def _fill_full(lb: LayerBatch, layer, r: dict, reps: int, dense_time: np.ndarray, batch) -> None:
    """ImaxModel._fill of a batch (several points, some with a schedule) as it was before _fill_at: every
    operation over every point on the full run, then lb.set."""
    pts = batch.pts
    nchip = pts["nchip"].astype(float)
    clock_hz = batch.clock_hz
    time_s, reads, writes, issued, lmm_bytes = IM._run_flows(r, nchip, reps)
    energy = np.full(lb.n, np.nan)
    vscale, ok = batch.vscale, r["ok"]
    for node, sel in batch.nodes:
        sel = np.flatnonzero(sel & ok) if len(batch.nodes) > 1 or not ok.all() else slice(None)
        energy[sel] = C.energy_pj(issued[sel], lmm_bytes[sel], pts["lmm_kb"][sel], int(node), vscale[sel]) * 1e-12
    energy = energy + batch.dram_energy_j(reads, writes)
    cycles = time_s * clock_hz
    with np.errstate(divide="ignore", invalid="ignore"):
        util = layer.macs / (cycles * nchip * pts["units"] * C.SIMD)
        speedup = dense_time / time_s
    slots = r["slots"] * reps
    useful = float(getattr(layer, "nnz", 0)) if isinstance(layer, SpMM) else np.nan
    padding = slots - useful if isinstance(layer, SpMM) else np.where(np.isnan(slots), np.nan, 0.0)
    lb.set(
        cycles=cycles, time_s=time_s, utilization=util, dram_read_bytes=reads, dram_write_bytes=writes,
        energy_j=energy, speedup_vs_dense=speedup, dense_time_s=dense_time,
        lmm_utilization=r["util"], lmm_utilization_unoptimized=r["util_unopt"], mac_units=r["H"],
        agrp=r["agrp"], bgrp=r["bgrp"], cgrp=r["bgrp"], starts=r["starts"] * reps,
        a_groups=r["a_groups"] * reps, b_groups=r["b_groups"], blocks=r["blocks"] * reps,
        row_tiles=r["row_tiles"], col_tiles=r["col_tiles"], stored_slots=slots, padding_slots=padding,
        dram_a_bytes=r["a_bytes"] * reps, dram_b_bytes=nchip * r["b_bytes"] * reps,
        dram_c_partial_bytes=nchip * r["c_load_bytes"] * reps, dram_c_bytes=writes,
    )
    for s in IM.STATES:
        lb.states[s] = r[s] * reps


@pytest.mark.parametrize("wl, divisors, n, reps", [("spmm:n=96,sparsity=0.9", (1, 2, 3, 4, 8), 300, 1),
                                                   ("spmm:m=300,k=200,n=16,sparsity=0.97", (1, 2, 4), 200, 1),
                                                   ("matmul:m=64,k=96,n=48", (1, 2, 3, 4), 300, 3)])
def test_fill_at_the_points_with_a_schedule_equals_the_fill_over_every_point(wl, divisors, n, reps):
    """_fill_at (the metrics of the points with a schedule only, written into NaN arrays) == the earlier _fill over
    every point of the full run (NaN rows): every metric and state, bit for bit, in the same key order; several
    technology nodes in the batch (the energy per node)."""
    layer = load_workload(wl).layers[0]
    pts = M.params.points(_rows(n, 11, divisors))
    batch = IM._Batch.of(pts)
    assert len(batch.nodes) > 1
    if isinstance(layer, SpMM):
        key = (layer.m, layer.k, layer.n, layer)
        r, dense_time = M._sparse_runs(key, batch)
    else:
        key = (layer.m, layer.k, layer.n, None)
        r = M._runs([key], batch, False)[0]
        dense_time = r["time"] * reps
    assert 0 < len(r["at"]) < n
    got, want = LayerBatch(layer, n), LayerBatch(layer, n)
    IM._fill_at(got, layer, r, reps, dense_time, batch)
    _fill_full(want, layer, _full(r, n), reps, dense_time, batch)
    assert list(got.metrics) == list(want.metrics) and list(got.states) == list(want.states)
    for key in want.metrics:
        _same(got.metrics[key], want.metrics[key])
    for key in want.states:
        _same(got.states[key], want.states[key])


def test_runs_of_several_products_split_equal_each_product_alone():
    """_runs of several dense products at once (their numbers kept at the pairs with a schedule, split per product
    by _run_part) == each product's _runs alone: flags, reasons, times, the points ``at`` and their numbers."""
    pts = M.params.points(_rows(300, 4, (1, 2, 3, 4)))
    keys = [(64, 96, 48, None), (100, 30, 12, None), (7, 500, 96, None)]
    together = M._runs(keys, IM._Batch.of(pts), False)
    for key, got in zip(keys, together):
        want = M._runs([key], IM._Batch.of(pts), False)[0]
        assert set(got) == set(want)
        for name in want:
            _same(got[name], want[name])
    assert all(len(r["at"]) for r in together)


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

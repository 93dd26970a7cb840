"""IMAX batched paths of issue 15's seventh round: each equals the path it replaced, bit for bit.

With glibc's malloc thresholds fixed per process (dse.procs.tune_malloc), a batched run keeps its numbers only at
the points with a schedule (``_runs_on``'s ``at``; ``_fill_at`` writes each metric into its own NaN array) and only
the 26 numbers ``_fill`` reads (``_RUN_NAMES``): the reference below is the sixth round's ``_fill`` over every point
of a full run (NaN rows where no schedule)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels.imax import costs as C
from archmodels.imax import model as IM
from archmodels.imax import schedule as S
from archmodels.result import LayerBatch
from workloads import load_workload
from workloads.layers import SpMM

from .test_imax_batched4 import _rows
from .test_imax_batched5 import M, _same


def _full(r: dict, n: int) -> dict:
    """A run of ImaxModel._runs_on's form (numbers kept at ``at``) as the sixth round's: every number over every
    point, NaN without a schedule."""
    out = {key: r[key] for key in ("H", "ok", "reason", "time")}
    for key in IM._AT_NAMES:
        row = np.full(n, np.nan)
        row[r["at"]] = r[key]
        out[key] = row
    return out


def _fill_full(lb: LayerBatch, layer, r: dict, reps: int, dense_time: np.ndarray, batch) -> None:
    """ImaxModel._fill of a batch (several points, some with a schedule) as in the sixth round: every operation
    over every point of the full run, then lb.set."""
    pts = batch.pts
    nchip = pts["nchip"].astype(float)
    clock_hz = batch.clock_hz
    time_s, reads, writes, issued, lmm_bytes = IM._run_flows(r, nchip, reps)
    energy = np.full(lb.n, np.nan)
    fma_j, lmm_j = np.full(lb.n, np.nan), np.full(lb.n, np.nan)  # (the energy parts, added 2026-11-27)
    vscale, ok = batch.vscale, r["ok"]
    for node, sel in batch.nodes:
        sel = np.flatnonzero(sel & ok) if len(batch.nodes) > 1 or not ok.all() else slice(None)
        energy[sel] = C.energy_pj(issued[sel], lmm_bytes[sel], pts["lmm_kb"][sel], int(node), vscale[sel]) * 1e-12
        fma, lmm = C.energy_terms_pj(issued[sel], lmm_bytes[sel], pts["lmm_kb"][sel], int(node))
        fma_j[sel], lmm_j[sel] = fma * vscale[sel] * 1e-12, lmm * vscale[sel] * 1e-12
    dram_j = batch.dram_energy_j(reads, writes)
    energy = energy + dram_j
    cycles = time_s * clock_hz
    with np.errstate(divide="ignore", invalid="ignore"):
        util = layer.macs / (cycles * nchip * pts["units"] * C.SIMD)
        speedup = dense_time / time_s
    slots = IM._rep(r["slots"], reps)
    useful = float(getattr(layer, "nnz", 0)) if isinstance(layer, SpMM) else np.nan
    padding = slots - useful if isinstance(layer, SpMM) else np.where(np.isnan(slots), np.nan, 0.0)
    lb.set(
        cycles=cycles, time_s=time_s, utilization=util, dram_read_bytes=reads, dram_write_bytes=writes,
        energy_j=energy, speedup_vs_dense=speedup, dense_time_s=dense_time,
        lmm_utilization=r["util"], lmm_utilization_unoptimized=r["util_unopt"], mac_units=r["H"],
        agrp=r["agrp"], bgrp=r["bgrp"], cgrp=r["bgrp"], starts=IM._rep(r["starts"], reps),
        a_groups=IM._rep(r["a_groups"], reps), b_groups=r["b_groups"], blocks=IM._rep(r["blocks"], reps),
        row_tiles=r["row_tiles"], col_tiles=r["col_tiles"], stored_slots=slots, padding_slots=padding,
        dram_a_bytes=IM._rep(r["a_bytes"], reps), dram_b_bytes=IM._rep(nchip * r["b_bytes"], reps),
        dram_c_partial_bytes=IM._rep(nchip * r["c_load_bytes"], reps), dram_c_bytes=writes,
        compute_energy_j=fma_j, sram_energy_j=lmm_j, dram_energy_j=dram_j,
    )
    for s in IM.STATES:
        lb.states[s] = r[s] * reps


def _check_fill(wl: str, divisors: tuple[int, ...], n: int, reps: int, seed: int) -> None:
    layer = load_workload(wl).layers[0]
    pts = M.params.points(_rows(n, seed, divisors))
    batch = IM._Batch.of(pts)
    if isinstance(layer, SpMM):
        key = (layer.m, layer.k, layer.n, layer)
        r, dense_time = M._sparse_runs(key, batch)
    else:
        key = (layer.m, layer.k, layer.n, None)
        r = M._runs([key], batch, False)[0]
        dense_time = r["time"] * reps
    assert set(r) == {"H", "ok", "reason", "time", "at"} | set(IM._AT_NAMES)
    assert all(len(r[k]) == len(r["at"]) and r[k].dtype == np.float64 for k in IM._AT_NAMES)
    kept = [r[k] for k in IM._AT_NAMES]  # each number an array of its own
    assert not any(np.may_share_memory(kept[i], kept[j]) for i in range(len(kept)) for j in range(i))
    _same(r["at"], np.flatnonzero(r["ok"]))
    if not r["ok"].any():
        return  # _fill_nan's case (not _fill_at's)
    got, want = LayerBatch(layer, n), LayerBatch(layer, n)
    IM._fill_at(got, layer, r, reps, dense_time, batch)
    _fill_full(want, layer, _full(r, n), reps, dense_time, batch)
    assert list(got.metrics) == list(want.metrics) and list(got.states) == list(want.states)
    for key in want.metrics:
        _same(got.metrics[key], want.metrics[key])
    for key in want.states:
        _same(got.states[key], want.states[key])
    arrays = list(got.metrics.values()) + list(got.states.values())
    for i in range(len(arrays)):  # each metric an array of its own (no row shared with the run or another metric)
        assert not any(np.may_share_memory(arrays[i], v) for v in list(r.values()) + arrays[:i] if
                       isinstance(v, np.ndarray))


@pytest.mark.parametrize("wl, divisors, n, reps", [("spmm:n=96,sparsity=0.9", (1, 2, 3, 4, 8), 300, 1),
                                                   ("spmm:m=300,k=200,n=16,sparsity=0.97", (1, 2, 4), 200, 1),
                                                   ("spmm:n=512,sparsity=0.9", (1, 2, 4, 8), 256, 1),
                                                   ("matmul:m=64,k=96,n=48", (1, 2, 3, 4), 300, 3),
                                                   ("matmul:m=64,k=96,n=48", (1, 2, 3, 4), 300, 1)])
def test_fill_at_the_points_with_a_schedule_equals_the_fill_over_every_point(wl, divisors, n, reps):
    """_fill_at (the metrics of the points with a schedule only, written into NaN arrays) == the sixth round's
    _fill over every point of the full run: every metric and state, bit for bit, in the same key order; several
    technology nodes in the batch (the energy per node); no array shared."""
    _check_fill(wl, divisors, n, reps, 11)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["spmm:n=96,sparsity=0.9", "spmm:n=64,sparsity=0.99",
                                                 "matmul:m=30,k=40,n=24", "spmm:m=300,k=200,n=16,sparsity=0.97"]),
       st.integers(2, 80), st.integers(1, 4))
def test_fill_at_equals_the_fill_over_every_point_hypothesis(seed, wl, n, reps):
    """As above over random batches (few or no points with a schedule, one or two nodes)."""
    _check_fill(wl, (1, 2, 3, 4), n, reps, seed)


def test_runs_of_several_products_kept_at_their_points_equal_each_alone():
    """_runs of several dense products at once (numbers at the pairs with a schedule, split by _run_part, ``at``
    relative to each product) == each product's _runs alone, and the expanded runs equal too."""
    pts = M.params.points(_rows(300, 4, (1, 2, 3, 4)))
    keys = [(64, 96, 48, None), (100, 30, 12, None), (7, 500, 96, None)]
    together = M._runs(keys, IM._Batch.of(pts), False)
    for key, got in zip(keys, together):
        want = M._runs([key], IM._Batch.of(pts), False)[0]
        assert 0 < len(want["at"]) < 300
        assert list(got) == list(want)
        for name in want:
            _same(got[name], want[name])
        a, b = _full(got, 300), _full(want, 300)
        for name in b:
            _same(a[name], b[name])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 400))
def test_timing_of_the_chosen_counts_kept_equals_of_every_count(seed, n):
    """_store_choice times only the counts of _CHOSEN_FEATURES (what timing, _write_choice and the LMM use read):
    == timing of every count; the run keeps _RUN_FEATURES of them, all in the chosen ones."""
    rng = np.random.default_rng(seed)
    feats = {k: rng.integers(0, 1 << 20, n).astype(float) for k in S.FEATURES}
    nchip, clock, bw = rng.choice([1, 2, 4], n).astype(float), rng.uniform(1e8, 1e9, n), rng.uniform(1e9, 1e11, n)
    a = S.timing({k: feats[k] for k in IM._CHOSEN_FEATURES}, nchip, clock, bw)
    b = S.timing(feats, nchip, clock, bw)
    assert list(a) == list(b)
    for k in b:
        _same(a[k], b[k])
    assert set(IM._RUN_FEATURES) <= set(IM._CHOSEN_FEATURES) and set(S.TIMING_FEATURES) <= set(IM._CHOSEN_FEATURES)


@pytest.mark.parametrize("wl", ["spmm:n=96,sparsity=0.9", "alexnet-conv"])
def test_batch_equals_each_point_alone(wl):
    """A batch's layers (compact runs, _fill_at) == each point evaluated alone (the one-point path), every metric,
    state and reason, bit for bit."""
    w = load_workload(wl)
    rows = _rows(48, 21, (1, 2, 4))
    res = M.evaluate_batch(w, M.params.points(rows))
    assert any(lb.feasible.any() for lb in res.layers)
    for i in range(0, 48, 3):
        one = M.evaluate_batch(w, M.params.points(rows[i:i + 1]))
        for lb, lo in zip(res.layers, one.layers):
            assert list(lb.metrics) == list(lo.metrics)
            for k in lo.metrics:
                _same(np.asarray(lb.metrics[k])[i:i + 1], lo.metrics[k])
            for k in lo.states:
                _same(np.asarray(lb.states[k])[i:i + 1], lo.states[k])
            assert lb.reason[i] == lo.reason[0] and lb.feasible[i] == lo.feasible[0]


def _tilings_divisions(m, k, urb, lmm):
    """schedule.tilings as in the sixth round (int64 floor divisions by 2 and VALUE_BYTES)."""
    urb, lmm = np.asarray(urb, dtype=np.int64), np.asarray(lmm, dtype=np.int64)
    rows_max = np.minimum((lmm // 2) // urb, lmm // C.VALUE_BYTES)
    cols_max = (lmm // 2) // C.VALUE_BYTES
    ok = (rows_max >= 1) & (cols_max >= 1)
    return (np.where(ok, -(-m // np.maximum(rows_max, 1)), 0), np.where(ok, -(-k // np.maximum(cols_max, 1)), 0))


def _bgrp_caps_divisions(tile_rows, tile_cols, n, nchip, lmm_bytes, cols, simd_limited):
    """schedule.bgrp_caps as in the sixth round."""
    L = np.asarray(lmm_bytes, dtype=np.int64)
    hi = np.minimum(np.minimum((L // 2) // (tile_cols * 4), L // (tile_rows * 4)),
                    np.minimum(n // nchip, tile_rows // nchip))
    return np.where(simd_limited, np.minimum(hi, np.asarray(cols) * 2), hi)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 400), st.integers(1, 5000), st.integers(1, 5000))
def test_tilings_and_bgrp_caps_by_shifts_equal_the_divisions(seed, G, m, k):
    """schedule.tilings and bgrp_caps with x // 2**j as shifts == the int64 floor divisions, every value and
    dtype: LMM sizes of the space and any (odd, tiny, 0) sizes, tile counts from 0 up."""
    rng = np.random.default_rng(seed)
    lmm = np.where(rng.random(G) < 0.5, rng.choice([4, 8, 16, 32, 64, 128, 256, 512], G) * 1024,
                   rng.integers(0, 1 << 21, G))
    urb = rng.choice([4, 8, 16, 32, 64, 3, 12], G)
    a, b = S.tilings(m, k, urb, lmm), _tilings_divisions(m, k, urb, lmm)
    for x, y in zip(a, b):
        _same(x, y)
    tr, tc = rng.integers(0, 3000, G), rng.integers(0, 3000, G)
    nchip, cols, simd = rng.choice([1, 2, 3, 4, 8], G), rng.choice([1, 2, 4, 8], G), rng.random(G) < 0.5
    with np.errstate(divide="ignore"):
        _same(S.bgrp_caps(tr, tc, 96, nchip, lmm, cols, simd), _bgrp_caps_divisions(tr, tc, 96, nchip, lmm, cols, simd))


@pytest.mark.parametrize("wl, sparse", [("spmm:n=96,sparsity=0.9", True), ("matmul:m=64,k=96,n=48", False)])
def test_choice_numbers_equal_the_choice_written_into_nan_rows(wl, sparse):
    """_choice_numbers (new float64 arrays over the points with a schedule) == _write_choice into a NaN block of
    _RUN_NAMES over those points (the sixth round's rows), every number of _AT_NAMES bit for bit."""
    layer = load_workload(wl).layers[0]
    key = (layer.m, layer.k, layer.n, layer if sparse else None)
    pts = M.params.points(_rows(300, 7, (1, 2, 3, 4)))
    batch = IM._Batch.of(pts)
    grp = batch.groups(sparse)
    cfg = S.configurations(key[0], key[1], np.broadcast_to(np.int64(key[2]), (len(grp.uniq),)), None,
                           *grp.uniq[:, 2:6].T, mapping_codes=grp.uniq[:, 1])
    plans, feasible = IM._Plans.build([key], np.zeros(len(grp.uniq), np.intp), grp.uniq, cfg, ~S.unschedulable(cfg))
    sel = np.flatnonzero(feasible[grp.inv])
    assert len(sel)
    g = grp.inv[sel]
    cand = plans.first[g] + (np.arange(len(sel)) % plans.count[g])  # any candidate of each point's configuration
    chosen = {k: plans.feats[k][cand] for k in IM._CHOSEN_FEATURES}
    nchip, clock, bw = batch.nchip[sel], batch.clock_hz[sel], batch.bw[sel]
    st = S.timing(chosen, nchip, clock, bw)
    want = dict(zip(IM._RUN_NAMES, np.full((len(IM._RUN_NAMES), len(sel)), np.nan)))
    IM._write_choice(want, plans, slice(None), g, cand, chosen, st, clock)
    got = IM._choice_numbers(plans, g, cand, chosen, st, clock)
    for k in IM._AT_NAMES:
        _same(got[k], want[k])


def _merge_by_count(G: int, parts: list) -> dict:
    """plans.merge as in the sixth round: each count concatenated and ordered alone."""
    if len(parts) == 1 and len(parts[0][0]) == G:
        return parts[0][1]
    count = np.zeros(G, np.int64)
    owner, per = [], {}
    for idx, d in parts:
        count[idx] = d["count"]
        owner.append(np.repeat(idx, d["count"]))
        for k, v in d["per"].items():
            per.setdefault(k, np.zeros(G, np.asarray(v).dtype))[idx] = v
    owner = np.concatenate(owner)
    order = slice(None) if (owner[1:] >= owner[:-1]).all() else np.argsort(owner, kind="stable")
    cat = lambda key: np.concatenate([d[key] for _, d in parts])[order]  # noqa: E731
    return {"count": count, "feats": {k: np.concatenate([d["feats"][k] for _, d in parts])[order] for k in S.FEATURES},
            "agrp": cat("agrp"), "bgrp": cat("bgrp"), "per": per}


def _parts(seed: int, G: int, n_parts: int, in_order: bool, mixed: bool, blocks: bool) -> list:
    """Random parts of G configurations for the merges: in or out of configuration order, the first one with int64
    counts (``mixed``), with or without their counts' blocks (float64 parts only)."""
    rng = np.random.default_rng(seed)
    cfgs = rng.permutation(G) if not in_order else np.arange(G)
    cuts = np.sort(rng.choice(np.arange(1, G), size=min(n_parts - 1, G - 1), replace=False)) if G > 1 else []
    parts = []
    for j, idx in enumerate(np.split(cfgs, cuts)):
        idx = np.sort(idx) if len(idx) > 1 and rng.random() < 0.7 else idx
        count = rng.integers(0, 4, len(idx))
        c = int(count.sum())
        dtype = np.int64 if mixed and j == 0 else np.float64
        block = rng.integers(0, 1 << 40, (len(S.FEATURES), c)).astype(dtype)
        d = {"count": count, "feats": dict(zip(S.FEATURES, block)), "agrp": rng.integers(1, 9, c),
             "bgrp": rng.integers(1, 9, c), "per": {"jds": rng.random(len(idx)) < 0.5, "half": rng.random(len(idx))}}
        if blocks and dtype == np.float64 and rng.random() < 0.7:
            d["block"] = block
        parts.append((idx, d))
    return parts


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 60), st.integers(1, 6), st.booleans(), st.booleans())
def test_merge_of_stacked_counts_equals_count_by_count(seed, G, n_parts, in_order, mixed):
    """plans.merge (every part's counts stacked, concatenated and ordered at once) == each count alone: every
    count, dtype and the problem numbers; parts in and out of configuration order, one part with int64 counts
    (the count-by-count path)."""
    from archmodels.imax import plans as P
    parts = _parts(seed, G, n_parts, in_order, mixed, blocks=False)
    got, want = P.merge(G, parts), _merge_by_count(G, parts)
    _same(got["count"], want["count"])
    assert list(got["feats"]) == list(want["feats"]) == list(S.FEATURES)
    for k in S.FEATURES:
        _same(got["feats"][k], want["feats"][k])
    for k in ("agrp", "bgrp"):
        _same(got[k], want[k])
    assert list(got["per"]) == list(want["per"])
    for k in want["per"]:
        _same(got["per"][k], want["per"][k])

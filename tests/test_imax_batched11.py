"""IMAX batched paths of issue 15's eleventh round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from workloads import load_workload
from workloads.parametric import parse

from .test_imax_batched4 import _rows
from .test_imax_batched5 import M, _configs, _plans_equal, _same
from .test_imax_batched7 import _merge_by_count, _parts
from .test_imax_batched8 import _dense_case, _dense_plans_7


def _rows_of_block(d: dict) -> None:
    """The plan's counts are the rows of its ``block``, in schedule.FEATURES' order (views, float64)."""
    block = d["block"]
    assert block.dtype == np.float64 and block.shape[0] == len(S.FEATURES)
    assert list(d["feats"]) == list(S.FEATURES)
    for i, k in enumerate(S.FEATURES):
        assert d["feats"][k].base is block or d["feats"][k].base is block.base
        _same(d["feats"][k], block[i])


# ---------------------------------------------------------------- plans: the counts as one block


@settings(max_examples=40, deadline=None)
@given(m=st.integers(20, 200), k=st.integers(20, 300), n=st.sampled_from([12, 16, 48, 96]),
       sparsity=st.sampled_from([0.5, 0.9, 0.97, 0.999]), seed=st.integers(0, 40),
       lmm_hi=st.sampled_from([3, 8, 64]),
       opt=st.sampled_from(["all", "none", "mixed"]), rng_seed=st.integers(0, 10_000))
def test_sparse_plans_block_equals_the_padded_groups(m, k, n, sparsity, seed, lmm_hi, opt, rng_seed):
    """plans.sparse_plans with its counts cast into one block (two stacks, the PIO words from units x cols once) and
    the configurations' numbers gathered at the candidates in one take == plans.sparse_plans_padded (schedule.finish's
    words, per-tile sums), bit for bit and dtype for dtype; the counts are the block's rows."""
    layer = parse(f"spmm:m={m},k={k},cols={n},sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    fmt, mapping, cfg, lmm_opt = _configs(np.random.default_rng(rng_seed), m, k, n, 120, lmm_hi, opt)
    if not len(lmm_opt):
        return
    got = P.sparse_plans(layer, fmt, mapping, n, cfg, lmm_opt)
    _plans_equal(got, P.sparse_plans_padded(layer, fmt, mapping, n, cfg, lmm_opt))
    if "block" in got:
        _rows_of_block(got)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 250), st.sampled_from([48, 96, 512, 1000, 4096]),
       st.sampled_from(["number", "arrays"]), st.sampled_from(["all", "none", "mixed"]))
def test_dense_plans_block_equals_seventh_round(seed, G, n, mk, opt):
    """plans.dense_plans with its counts as one block == the seventh round's (a float64 cast per count, the words by
    costs.conf_words / regv_words / range_words), every count bit for bit; the counts are the block's rows."""
    case = _dense_case(seed, G, n, mk, opt)
    if case is None:
        return
    ms, ks, sub, lmm_opt = case
    got, want = P.dense_plans(ms, ks, n, sub, lmm_opt), _dense_plans_7(ms, ks, n, sub, lmm_opt)
    for key in S.FEATURES:
        _same(got["feats"][key], want["feats"][key])
    _rows_of_block(got)


# ---------------------------------------------------------------- plans.merge_in_place


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(1, 6), st.booleans(), st.booleans(), st.booleans())
def test_merge_in_place_equals_merge_per_configuration(seed, G, n_parts, in_order, mixed, blocks):
    """plans.merge_in_place (candidates left part after part, ``first`` per configuration) == plans.merge and the
    count-by-count merge: each configuration's count, candidates (every count, AGRP, BGRP) and problem numbers, bit
    for bit and dtype for dtype; parts in and out of order, with and without blocks, one part of int64 counts."""
    parts = _parts(seed, G, n_parts, in_order, mixed, blocks)
    got, want = P.merge_in_place(G, parts), P.merge(G, parts)
    _same(got["count"], want["count"])
    _same(got["count"], _merge_by_count(G, parts)["count"])
    first_got = got.get("first", np.cumsum(got["count"]) - got["count"])
    first_want = np.cumsum(want["count"]) - want["count"]
    for g in range(G):
        a = np.arange(first_got[g], first_got[g] + got["count"][g])
        b = np.arange(first_want[g], first_want[g] + want["count"][g])
        for key in S.FEATURES:
            _same(got["feats"][key][a], want["feats"][key][b])
        for key in ("agrp", "bgrp"):
            _same(got[key][a], want[key][b])
    assert list(got["feats"]) == list(S.FEATURES)
    assert list(got["per"]) == list(want["per"])
    covered = np.zeros(G, bool)
    for idx, _ in parts:
        covered[idx] = True
    row = got.get("per_row", np.arange(G))
    for key in want["per"]:
        assert got["per"][key].dtype == want["per"][key].dtype
        _same(got["per"][key][row[covered]], want["per"][key][covered])
    if "block" in got:
        _rows_of_block(got)
    total = int(want["count"].sum())
    assert all(len(v) == total for v in got["feats"].values())


def test_merge_in_place_without_parts_and_one_covering_part():
    """No parts: merge's empty plans; one part covering every configuration in order: that part itself."""
    empty = P.merge_in_place(5, [])
    _same(empty["count"], np.zeros(5, np.int64))
    assert all(len(v) == 0 for v in empty["feats"].values())
    parts = _parts(1, 7, 1, True, False, True)
    assert P.merge_in_place(7, parts) is parts[0][1]


# ---------------------------------------------------------------- model: plans in place, columns in one take


def _runs_with(monkeypatch, merge_fn, keys, pts, sparse: bool) -> list[dict]:
    monkeypatch.setattr(P, "merge_in_place", merge_fn)
    return M._runs(keys, IM._Batch.of(pts), sparse)


def _ordered_merge(G, parts):
    d = P.merge(G, parts)
    d.pop("block", None)  # and no block: the gathers count by count
    return d


@pytest.mark.parametrize("seed", [1, 7])
def test_runs_of_interleaved_dense_parts_in_place_equal_the_ordered_merge(monkeypatch, seed):
    """Several dense products whose (sparse, n) groups interleave over the (product, configuration) pairs (n = 48,
    12, 48): their runs with the plans left part after part (``_Plans.starts``) and the chosen counts taken from the
    block in one call == with merge's configuration order and one gather per count: every flag, reason and number."""
    pts = M.params.points(_rows(300, seed, (1, 2, 3, 4)))
    keys = [(64, 96, 48, None), (100, 30, 12, None), (7, 500, 48, None)]
    seen, in_place = [], P.merge_in_place

    def spy(G, parts):
        seen.append(in_place(G, parts))
        return seen[-1]

    got = _runs_with(monkeypatch, spy, keys, pts, False)
    want = _runs_with(monkeypatch, _ordered_merge, keys, pts, False)
    assert any("first" in d and not np.array_equal(d["first"], np.cumsum(d["count"]) - d["count"]) for d in seen)
    for a, b in zip(got, want):
        assert list(a) == list(b)
        assert 0 < len(b["at"]) < 300
        for name in b:
            _same(a[name], b[name])


@pytest.mark.parametrize("wl", ["spmm:n=96,sparsity=0.9", "spmm:n=1024,sparsity=0.95"])
def test_sparse_runs_with_blocks_equal_without(monkeypatch, wl):
    """A sparse product's runs and dense reference (one pass) with the plans' block (one take of the chosen
    counts, one of the timed ones) == with the plans merged count by count and no block."""
    layer = load_workload(wl).layers[0]
    key = (layer.m, layer.k, layer.n, layer)
    pts = M.params.points(_rows(400, 5, (1, 2, 4, 8)))
    monkeypatch.setattr(P, "merge_in_place", P.merge_in_place)
    got = M._sparse_runs(key, IM._Batch.of(pts))
    monkeypatch.setattr(P, "merge_in_place", _ordered_merge)
    monkeypatch.setattr(P, "merge", _ordered_merge_no_block)
    want = M._sparse_runs(key, IM._Batch.of(pts))
    assert list(got[0]) == list(want[0])
    assert len(want[0]["at"])
    for name in want[0]:
        _same(got[0][name], want[0][name])
    _same(got[1], want[1])


_plain_merge = P.merge


def _ordered_merge_no_block(G, parts):
    d = _plain_merge(G, parts)
    if "block" in d:
        d = dict(d)
        del d["block"]
    return d


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 40), st.integers(0, 60))
def test_columns_from_the_block_equal_one_gather_per_count(seed, C, n):
    """model._columns with the block (one take, every count of FEATURES) == one gather per asked count; without
    the block, just the asked counts."""
    rng = np.random.default_rng(seed)
    block = rng.random((len(S.FEATURES), C))
    feats = dict(zip(S.FEATURES, block))
    idx = rng.integers(0, C, n) if C else np.zeros(0, np.int64)
    for names in (S.TIMING_FEATURES, IM._CHOSEN_FEATURES):
        got, plain = IM._columns(feats, idx, names, block), IM._columns(feats, idx, names)
        assert list(plain) == list(names) and set(names) <= set(got)
        for k in names:
            _same(got[k], feats[k][idx])
            _same(plain[k], feats[k][idx])


# ---------------------------------------------------------------- plans: tilings added to the kept ones


def _tiling_view(tiles, t: int) -> dict:
    """Tiling number ``t`` of a :class:`plans._Tiles` as its own arrays (the counts lowered by their tile's shift)."""
    a, c = int(tiles.first[t]), int(tiles.count[t])
    out = {name: getattr(tiles, name)[a:a + c] for name in ("rows", "cols", "top", "nonzero_rows", "first_k",
                                                             "b_new", "last")}
    lo, hi = int(tiles.start[a]), int(tiles.start[a + c])
    tile = np.repeat(np.arange(a, a + c), out["rows"])
    out["nz"] = tiles.shifted[lo:hi] - tile * tiles.shift
    return out


@settings(max_examples=40, deadline=None)
@given(m=st.integers(10, 120), k=st.integers(10, 150), sparsity=st.sampled_from([0.5, 0.9, 0.99]),
       seed=st.integers(0, 30),
       batches=st.lists(st.sets(st.tuples(st.booleans(), st.integers(1, 7), st.integers(1, 5)), min_size=1, max_size=5),
                        min_size=1, max_size=5),
       rng_seed=st.integers(0, 10_000))
def test_tilings_added_to_the_kept_ones_equal_each_tiling_alone(m, k, sparsity, seed, batches, rng_seed):
    """_tilings_of over a sequence of batches (new tilings added after the kept ones, their counts written into the
    buffer's tail): every kept tiling's tiles and sorted row counts == plans._tiling's own, at the position its code
    names; the earlier joins' arrays unaltered by later ones; the pair Margins == a fresh join's (other positions,
    the same numbers)."""
    layer = parse(f"spmm:m={m},k={k},n=16,sparsity={sparsity},seed={seed}").layers[0]
    P._TILINGS.clear()
    rng = np.random.default_rng(rng_seed)
    earlier = []
    for keys in batches:
        keys = {(j, min(rt, m), min(ct, k)) for j, rt, ct in keys}
        tiles, codes, (R, K), pos = P._tilings_of(layer, keys)
        assert (np.diff(codes) > 0).all()
        for j, rt, ct in keys:
            t = int(pos[np.searchsorted(codes, (j * R + rt) * K + ct)])
            assert tiles.keys[t] == ("jds" if j else "csr", rt, ct)
            got, want = _tiling_view(tiles, t), P._tiling(layer, *tiles.keys[t])
            for name in ("rows", "cols", "top", "nonzero_rows", "first_k", "b_new", "last", "nz"):
                _same(got[name], getattr(want, name))
            assert bool(tiles.narrow[t]) == want.narrow
        assert tiles.rows[-1] == 0 and tiles.cols[-1] == 0 and tiles.start[-1] == len(tiles.shifted)
        earlier.append((tiles, tiles.shifted.copy(), tiles.start.copy()))
        fresh = P._tiles(layer, tiles.keys)
        gid = rng.integers(0, len(tiles.rows) - 1, 30)
        H = rng.integers(1, 30, 30)
        nb = np.maximum(-(-tiles.top[gid] // H), 1)
        _same(tiles.margins(gid, H, nb), fresh.margins(gid, H, nb))
    for tiles, shifted, start in earlier:
        _same(tiles.shifted, shifted)
        _same(tiles.start, start)
    P._TILINGS.clear()


def test_tilings_buffer_grows_and_keeps_the_earlier_counts(monkeypatch):
    """A buffer too small for the added counts is replaced by a larger one holding the kept counts (the earlier
    join's view keeps the old buffer); the plans the same as on a fresh join."""
    layer = load_workload("spmm:n=1024,sparsity=0.95").layers[0]
    P._TILINGS.clear()
    tiles1, *_ = P._tilings_of(layer, {(False, 1, 1), (True, 2, 2)})
    buf1 = P._TILINGS[id(layer)][6]
    kept = tiles1.shifted.copy()
    big = {(j, rt, ct) for j in (False, True) for rt in (1, 2, 4, 8) for ct in (1, 2, 4, 8, 16)}
    tiles2, codes, (R, K), pos = P._tilings_of(layer, big)
    buf2 = P._TILINGS[id(layer)][6]
    assert buf2 is not buf1 and len(tiles2.shifted) > len(buf1)
    _same(tiles2.shifted[:len(kept)], kept)
    _same(tiles1.shifted, kept)
    fresh = P._tiles(layer, tiles2.keys)
    for name in ("rows", "cols", "top", "nonzero_rows", "first", "count", "start", "shifted"):
        _same(getattr(tiles2, name), getattr(fresh, name))
    P._TILINGS.clear()


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.sampled_from([1, 2, 7, 300, 2000, 70_000]), st.integers(0, 10_000))
def test_sorted_keys_by_radix_equal_the_int64_sort(m, ct, big, seed):
    """plans._sorted_keys (one uint16 radix sort when tile x big fits 16 bits, two stable uint16 argsorts when each
    part does, else the int64 sort) == np.sort of the int64 keys: (tile, count) keys of m rows x ct column tiles in
    row tiles of random heights."""
    rng = np.random.default_rng(seed)
    rt = int(rng.integers(1, m + 1)) if rng.random() < 0.5 else min(m, int(rng.integers(1, 3000)))
    heights = np.bincount(np.sort(rng.integers(0, rt, m)), minlength=rt)
    tile = np.repeat(np.arange(rt, dtype=np.int64), heights)[:, None] * ct + np.arange(ct)
    counts = rng.integers(0, big, (m, ct))
    _same(P._sorted_keys(tile, counts, big, rt * ct), np.sort((tile * big + counts).ravel()))


# ---------------------------------------------------------------- model._fastest: the chosen pairs' times kept


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 80), st.sampled_from([1, 3, 7, 1 << 20]), st.booleans())
def test_fastest_states_equal_timing_the_chosen_candidates_again(seed, points, max_pairs, with_block):
    """_fastest's states (each point's state times and time at its fastest candidate, taken from the pairs' timing,
    in chunks of at most max_pairs pairs) == schedule.timing of the chosen candidates alone, bit for bit; the chosen
    candidates the same as without states. Ties and NaN counts included."""
    rng = np.random.default_rng(seed)
    C = int(rng.integers(1, 60))
    block = rng.integers(0, 50, (len(S.FEATURES), C)).astype(float) * rng.choice([1.0, 1e6], (1, C))
    block[:, rng.random(C) < 0.1] = np.nan
    feats = dict(zip(S.FEATURES, block))
    count = rng.integers(1, 4, points)
    first = rng.integers(0, C, points)
    count = np.minimum(count, C - first)
    nchip = rng.integers(1, 9, points)
    clock, bw = rng.choice([5e8, 1e9], points), rng.choice([1e9, 2e10], points)
    states = {}
    got = IM._fastest(feats, first, count, nchip, clock, bw, block if with_block else None, max_pairs, states=states)
    _same(got, IM._fastest(feats, first, count, nchip, clock, bw, None, max_pairs))
    want = S.timing({k: feats[k][got] for k in S.FEATURES}, nchip, clock, bw)
    assert set(states) == set(want)
    for k in want:
        _same(states[k], want[k])


def test_pattern_names_table_equals_the_join_per_pattern():
    """schedule._PATTERN_NAMES: every pattern of broken constraints (9 bits) named as the reason lines join them."""
    assert len(S._PATTERN_NAMES) == 1 << len(S.CONSTRAINTS)
    for code, text in enumerate(S._PATTERN_NAMES):
        assert text == ", ".join(c for i, c in enumerate(S.CONSTRAINTS) if code >> i & 1)

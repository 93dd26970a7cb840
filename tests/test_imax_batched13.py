"""IMAX batched paths of issue 15's thirteenth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels.imax import costs as C
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from workloads import load_workload
from workloads.parametric import parse

from .test_imax_batched4 import _rows
from .test_imax_batched5 import M, _configs, _plans_equal, _same
from .test_imax_batched11 import _tiling_view

_TILE_NAMES = ("rows", "cols", "top", "nonzero_rows", "first_k", "b_new", "last")


# ---------------------------------------------------------------- plans: the tilings built together


def _join_of_tilings(layer, keys: tuple, base=None) -> tuple[dict, np.ndarray]:
    """The join the twelfth round built (:func:`plans._joined` from each tiling's own :func:`plans._tiling`, one by
    one): every array of the :class:`plans._Tiles` and the buffer's counts."""
    ts = [P._tiling(layer, fmt, rt, ct) for fmt, rt, ct in keys]
    if base is None:
        shift, t0, c0, old = max([int(layer.k)] + [t.most for t in ts]) + 1, 0, 0, None
    else:
        old = base
        shift, t0, c0 = old.shift, len(old.rows) - 1, len(old.shifted)
    pre = (lambda name: [getattr(old, name)[:-1]]) if old is not None else (lambda name: [])
    out = {name: np.concatenate(pre(name) + [getattr(t, name) for t in ts] + [np.array([pad])])
           for name, pad in zip(_TILE_NAMES, (0, 0, 0, 0, False, False, False))}
    new_rows = out["rows"][t0:-1]
    count = np.array([len(t.rows) for t in ts], dtype=np.int64)
    first = t0 + np.cumsum(count) - count
    shifted = np.concatenate(([old.shifted] if old is not None else [])
                             + [np.concatenate([t.nz for t in ts])
                                + np.repeat(np.arange(t0, t0 + len(new_rows)), new_rows) * shift])
    out["start"] = np.concatenate(pre("start") + [c0 + np.cumsum(out["rows"][t0:]) - out["rows"][t0:]])
    out["count"] = count if old is None else np.concatenate((old.count, count))
    out["first"] = first if old is None else np.concatenate((old.first, first))
    out["narrow"] = np.array(([] if old is None else old.narrow.tolist()) + [t.narrow for t in ts], dtype=bool)
    out["shifted"], out["shift"] = shifted, shift
    return out, shifted


def _tiles_equal(tiles, want: dict, keys: tuple) -> None:
    for name in _TILE_NAMES + ("start", "count", "first", "narrow", "shifted"):
        _same(getattr(tiles, name), want[name])
    assert tiles.shift == want["shift"] and tiles.keys == keys


_keys = st.lists(st.tuples(st.sampled_from(["csr", "jds"]), st.integers(1, 12), st.integers(1, 6)), min_size=1,
                 max_size=12, unique=True)


@settings(max_examples=80, deadline=None)
@given(m=st.integers(1, 120), k=st.integers(1, 150), sparsity=st.sampled_from([0.0, 0.5, 0.9, 0.99, 0.9999]),
       seed=st.integers(0, 30), keys=_keys, later=_keys)
def test_tilings_built_together_equal_each_tiling_built_alone(m, k, sparsity, seed, keys, later):
    """plans._joined (every new tiling at once, plans._new_tiles) == the join of each tiling's own plans._tiling (the
    twelfth round's): every per-tile array, tiling starts and counts, count starts, the sorted counts raised by their
    tile's shift, the shift -- dtype for dtype; then tilings added to that join (its buffer's tail) the same way.
    Row tiles past the rows (empty tiles), column tiles past the columns (narrow tilings), empty rows and matrices
    without a nonzero included."""
    layer = parse(f"spmm:m={m},k={k},n=16,sparsity={sparsity},seed={seed}").layers[0]
    keys = tuple(keys)
    tiles, buf = P._joined(layer, keys)
    want, _ = _join_of_tilings(layer, keys)
    _tiles_equal(tiles, want, keys)
    assert tiles.shifted.base is buf or tiles.shifted is buf
    for t, key in enumerate(keys):  # each tiling's arrays at its place: plans._tiling's own
        got, own = _tiling_view(tiles, t), P._tiling(layer, *key)
        for name in _TILE_NAMES + ("nz",):
            _same(got[name], getattr(own, name))
    added = tuple(key for key in later if key not in keys)
    if added:
        kept = tiles.shifted.copy()
        more, _ = P._joined(layer, added, (tiles, buf))
        want_more, _ = _join_of_tilings(layer, added, tiles)
        _tiles_equal(more, want_more, keys + added)
        _same(tiles.shifted, kept)  # the earlier join's view unaltered


@pytest.mark.parametrize("wl", ["spmm:n=512,sparsity=0.9", "spmm:n=1024,sparsity=0.95"])
def test_every_tiling_of_the_space_built_together_equals_the_join_of_each(wl):
    """The space's tilings of the benchmarks' matrices (38 and 84) built together == the join of each built alone."""
    layer = load_workload(wl).layers[0]
    keys = tuple(("jds" if j else "csr", rt, ct) for j, rt, ct in sorted(P.space_tilings(layer.m, layer.k)[0]))
    tiles, _ = P._joined(layer, keys)
    want, _ = _join_of_tilings(layer, keys)
    _tiles_equal(tiles, want, keys)


def test_tilings_of_more_tiles_than_16_bits_built_together_equal_each_built_alone():
    """Past 2^16 tiles (here 75,000 one-row tiles) the tiles are ordered by plans' 16-bit-digit sort
    (schedule._stable_argsort), not one uint16 sort: the join == the join of each tiling built alone."""
    layer = parse("spmm:m=300,k=500,n=16,sparsity=0.9,seed=3").layers[0]
    keys = (("jds", 300, 250), ("csr", 7, 3))
    tiles, _ = P._joined(layer, keys)
    assert int(tiles.count.sum()) > 1 << 16
    want, _ = _join_of_tilings(layer, keys)
    _tiles_equal(tiles, want, keys)


# ---------------------------------------------------------------- plans: the space's tilings at a layer's first meet


def test_space_constants_are_the_declared_space():
    """plans.SPACE_LMM_KB, SPACE_COLS, SPACE_MAPPINGS == ImaxModel.PARAMS' LMM range, columns and sparse schedules."""
    par = {p.name: p for p in M.PARAMS}
    assert P.SPACE_LMM_KB == (par["lmm_kb"].low, par["lmm_kb"].high)
    assert P.SPACE_COLS == tuple(par["cols"].choices)
    assert P.SPACE_MAPPINGS == tuple(par["schedule"].choices)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 5000), k=st.integers(1, 70_000), block=st.sampled_from([1, 3, 256]))
def test_space_tilings_equal_every_configuration_s_tiling(m, k, block):
    """plans.space_tilings(m, k) == the tilings schedule.tiling gives every (mapping, cols, lmm_kb) of the declared
    space (Python integers, one by one), in both formats; the column-tile sum theirs. LMM blocks of 1 and 3 sizes
    (many block edges) as well as the default."""
    pairs = set()
    for mapping in P.SPACE_MAPPINGS:
        for cols in P.SPACE_COLS:
            urb = int(C.a_unit_row_bytes(mapping, cols))
            for kb in range(P.SPACE_LMM_KB[0], P.SPACE_LMM_KB[1] + 1):
                rt, ct = S.tiling(m, k, urb, kb * 1024)
                if rt:
                    pairs.add((rt, ct))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "_LMM_BLOCK", block)
        got, cols = P.space_tilings.__wrapped__(m, k)
    assert got == {(j, rt, ct) for j in (False, True) for rt, ct in pairs}
    assert cols == sum(ct for _, _, ct in got)


def _spy_joins(monkeypatch) -> list:
    """plans._joined recording the tilings each call builds."""
    joins, joined = [], P._joined
    monkeypatch.setattr(P, "_joined", lambda layer, keys, base=None: joins.append(keys) or joined(layer, keys, base))
    return joins


def test_a_layer_met_first_gets_every_tiling_of_the_space(monkeypatch):
    """_tilings_of at a layer's first meet keeps the space's tilings with the batch's own (one join); batches of
    random points of the space then build nothing; a batch's tiling outside the space is added after them."""
    layer = load_workload("spmm:n=512,sparsity=0.9").layers[0]
    P._TILINGS.clear()
    joins = _spy_joins(monkeypatch)
    space = P.space_tilings(layer.m, layer.k)[0]
    P._tilings_of(layer, {(False, 1, 1)})
    assert len(joins) == 1 and P._TILINGS[id(layer)][1] == space
    w = load_workload("spmm:n=512,sparsity=0.9")
    for seed in range(3):
        M.evaluate_batch(w, M.params.points(_rows(600, seed, (1, 2, 4, 8))))
    assert len(joins) == 1
    outside = (True, 200, 3)  # (an LMM below the space's)
    tiles, codes, (R, K), pos = P._tilings_of(layer, {outside, (False, 1, 1)})
    assert len(joins) == 2 and joins[1] == (("jds", 200, 3),) and P._TILINGS[id(layer)][1] == space | {outside}
    t = int(pos[np.searchsorted(codes, (R + 200) * K + 3)])
    got, own = _tiling_view(tiles, t), P._tiling(layer, "jds", 200, 3)
    for name in _TILE_NAMES + ("nz",):
        _same(got[name], getattr(own, name))
    P._TILINGS.clear()


def test_space_tilings_bounded(monkeypatch):
    """Past _SPACE_COUNTS (or _TILINGS_COUNTS) row counts, a layer met first keeps only the batch's tilings."""
    layer = load_workload("spmm:n=512,sparsity=0.9").layers[0]
    for name in ("_SPACE_COUNTS", "_TILINGS_COUNTS"):
        P._TILINGS.clear()
        with monkeypatch.context() as mp:
            mp.setattr(P, name, 512 * 3)  # room for the batch's 3 one-column tilings, not the space's 38
            P._tilings_of(layer, {(False, 1, 1), (True, 2, 1), (False, 3, 1)})
            assert P._TILINGS[id(layer)][1] == {(False, 1, 1), (True, 2, 1), (False, 3, 1)}
    P._TILINGS.clear()


@settings(max_examples=15, deadline=None)
@given(m=st.integers(20, 200), k=st.integers(20, 300), n=st.sampled_from([12, 48]),
       sparsity=st.sampled_from([0.5, 0.9, 0.999]), seed=st.integers(0, 40), lmm_hi=st.sampled_from([3, 8, 64]),
       opt=st.sampled_from(["all", "none", "mixed"]), rng_seed=st.integers(0, 10_000))
def test_sparse_plans_on_the_space_s_tilings_equal_those_on_the_batch_s_own(m, k, n, sparsity, seed, lmm_hi, opt,
                                                                            rng_seed):
    """plans.sparse_plans on a layer met first (the space's tilings kept beside the batch's) == with the space's
    tilings off (the batch's own only), every count and problem number."""
    layer = parse(f"spmm:m={m},k={k},cols={n},sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    fmt, mapping, cfg, lmm_opt = _configs(np.random.default_rng(rng_seed), m, k, n, 120, lmm_hi, opt)
    if not len(lmm_opt):
        return
    P._TILINGS.clear()
    got = P.sparse_plans(layer, fmt, mapping, n, cfg, lmm_opt)
    P._TILINGS.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "_SPACE_COUNTS", 0)
        want = P.sparse_plans(layer, fmt, mapping, n, cfg, lmm_opt)
    _plans_equal(got, want)
    P._TILINGS.clear()


@pytest.mark.parametrize("wl", ["spmm:n=512,sparsity=0.9", "spmm:m=300,k=200,n=16,sparsity=0.97"])
def test_batches_on_the_space_s_tilings_equal_the_batches_on_their_own(monkeypatch, wl):
    """evaluate_batch over a sequence of batches with the space's tilings filled at the first meet == with them off
    (each batch's tilings added as met): every metric, state, flag and reason of every layer and the totals."""
    w = load_workload(wl)
    batches = [M.params.points(_rows(500, seed, (1, 2, 4, 8))) for seed in (21, 22)]
    P._TILINGS.clear()
    got = [M.evaluate_batch(w, pts) for pts in batches]
    P._TILINGS.clear()
    monkeypatch.setattr(P, "_SPACE_COUNTS", 0)
    want = [M.evaluate_batch(w, pts) for pts in batches]
    P._TILINGS.clear()
    for g, v in zip(got, want):
        (names, arrays), (want_names, want_arrays) = _named_arrays(g), _named_arrays(v)
        assert names == want_names
        for a, b in zip(arrays, want_arrays):
            _same(a, b)


def _named_arrays(res) -> tuple[list[str], list[np.ndarray]]:
    """Every array of a batch result (each layer's metrics, states, feasibility and reasons, then the totals) with its
    name, in order."""
    named = []
    for i, lb in enumerate(res.layers):
        named += [(f"{i}:{k}", v) for k, v in lb.metrics.items()] + [(f"{i}:state {k}", v) for k, v in lb.states.items()]
        named += [(f"{i}:feasible", lb.feasible), (f"{i}:reason", lb.reason)]
    named += list(res.totals.items())
    return [k for k, _ in named], [v for _, v in named]

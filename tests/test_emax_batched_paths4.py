"""EMAX batched planning, fourth round (issue 15): the chunk's (layer, combination) pairs as index arrays, the
mapper asked once per distinct (layer shape, combination), reasons picked as numpy columns. Each fast path is
compared with the scalar mapper (or the former form) bit for bit on random points."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper
from archmodels.emax import model as em
from archmodels.emax.mapper import ConvShape, FCShape, Hw, Indexed, shape_of
from workloads import load_workload

SLOW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _captured(monkeypatch, name: str, arch: str, wl: str, rows: list[dict]) -> list[tuple]:
    """(args, result) of every call of ``model.<name>`` while ``rows`` of ``wl`` are evaluated (caches cleared)."""
    seen = []
    fn = getattr(em, name)

    def spy(*args):
        out = fn(*args)
        seen.append((args, out))
        return out

    monkeypatch.setattr(em, name, spy)
    em.workload_plans.cache_clear()
    get_model(arch).evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    monkeypatch.undo()
    assert seen
    return seen


def _rows(arch: str, n: int, seed: int) -> list[dict]:
    m = get_model(arch)
    rows = m.params.random_rows(n, np.random.default_rng(seed))
    return rows[: n // 2] + [dict(r, criterion="dram") for r in rows[n // 2:]]  # tile searches too


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16", "resnet50", "alexnet", "lenet"]))
def test_mapping_rows_equal_the_scalar_mapper_pair_by_pair(seed, arch, wl):
    """_mapping_rows (requests by position, one per distinct (shape, combination), rows shared through ``src``)
    gives every (layer, combination) pair the mappings conv_candidates / fc_candidates give it (with _spm_tiles and
    _conv_pattern applied to the pair), in pair order, every column, dtype and value; and the reasons of any pairs,
    in any order, repeated, as the scalar mapper's."""
    with pytest.MonkeyPatch.context() as mp:
        calls = _captured(mp, "_mapping_rows", arch, wl, _rows(arch, 60, seed))
    rng = np.random.default_rng(seed)
    for (a, shapes, lt, li, ki, hws, mhws, pattern, order), (maps, owner, src, why) in calls:
        answers = []
        for i, k in zip(li.tolist(), ki.tolist()):
            sh = shapes[i]
            if isinstance(sh, ConvShape):
                answers.append(mapper.conv_candidates(sh, em._spm_tiles(mhws[k], hws[k], sh),
                                                      em._conv_pattern(sh, pattern[k]), order[k]))
            else:
                answers.append(mapper.fc_candidates(sh, mhws[k]))
        want = mapper.mapping_columns([m for ms, _ in answers for m in ms])
        assert owner.tolist() == [j for j, (ms, _) in enumerate(answers) for _ in ms]
        assert list(maps) == list(want)
        for key, v in want.items():
            got = maps[key][src]
            assert got.dtype == v.dtype and got.tolist() == v.tolist(), key
        js = rng.integers(0, len(li), min(len(li), 80))
        assert why(js) == [(bool(answers[j][0]), tuple(x.reason for x in answers[j][1])) for j in js.tolist()]


def structure_keys(arch: str, n: int, seed: int) -> tuple[tuple, ...]:
    """The structural combinations (em.STRUCT, the tile-search flag last) of ``n`` random points of ``arch``."""
    m = get_model(arch)
    pts = m.params.points(m.params.random_rows(n, np.random.default_rng(seed)))
    n = len(pts["rows"])
    cols = [pts[k] if k in pts else np.full(n, em._STRUCT_DEFAULTS[k], dtype=object) for k in em.STRUCT[:-1]]
    cols.append(np.isin(np.asarray(pts["criterion"], dtype=object), em.TILE_SEARCH_CRITERIA))
    return tuple(zip(*[c.tolist() for c in cols]))


def test_arrays_equal_hw_and_its_mapper_view():
    """_arrays builds each combination's array field by field: equal (and hashing equal) to _hw and to
    replace(_hw, spm_bytes=0), for random combinations of both architectures."""
    for arch in ("emaxv", "emaxvr"):
        keys = structure_keys(arch, 50, 3)
        hws, mhws = em._arrays(arch, keys)
        for key, hw, mhw in zip(keys, hws, mhws):
            want = em._hw(arch, key)
            assert hw == want and hash(hw) == hash(want) and vars(hw).keys() <= vars(want).keys() | {"_hash"}
            assert mhw == replace(want, spm_bytes=0) and hash(mhw) == hash(replace(want, spm_bytes=0))
            assert [type(getattr(hw, f)) for f in mapper._HW_FIELDS] == [type(getattr(want, f)) for f in mapper._HW_FIELDS]


@settings(max_examples=30, deadline=None)
@given(at=st.lists(st.integers(0, 5), max_size=30))
def test_indexed_sequence_and_numbers_by_position(at):
    """Indexed reads as the list it names; _by_object of it equals _by_object of that list (objects never named
    are not asked for their numbers)."""
    objs = [Hw("emaxvr", 4 + i, 2 * (i + 1), 512 * i, 0, 2, i, i % 3) for i in range(5)] + [None]
    at = [a for a in at if a < 5]
    seq = Indexed(objs, np.array(at, dtype=np.int64))
    plain = [objs[a] for a in at]
    assert len(seq) == len(plain) and list(seq) == plain and seq[1:4] == plain[1:4]
    assert all(seq[j] is plain[j] for j in range(len(plain)))
    get = lambda hw: (hw.rows, hw.cols, hw.lmm_bytes, hw.tile_search)  # noqa: E731
    got = mapper._by_object(seq, get, 4)
    want = mapper._by_object(plain, get, 4)
    assert got.dtype == want.dtype == np.int64 and got.shape == want.shape == (4, len(at))
    assert got.tolist() == want.tolist()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_rejections_by_columns_equal_the_scalar_mapper(seed, arch):
    """ConvTable.rejections (each request's reasons picked as numpy columns, texts only for the given ones) equals
    conv_candidates' answers (whether any mapping fits, the rejected ones' reasons in order) for requests asked in
    any order, repeated, on tables of requests given by position (Indexed) and as lists, small arrays (rows and
    structures rejected), tiny LMMs (LMM fits rejected), knobs and pooling layers."""
    rng = np.random.default_rng(seed)
    shapes = sorted({s for wl in ("vgg16", "mobilenet_v2", "alexnet") for s in map(shape_of, load_workload(wl).layers)
                     if isinstance(s, ConvShape)}, key=repr)
    arrays = [Hw(arch, int(rng.integers(4, 40)), int(rng.choice([2, 4, 8, 16])),
                 int(rng.choice([2, 16, 64, 512, 4096, 65536])), 0, int(rng.choice([2, 4])),
                 int(rng.choice([0, 0, 8])), int(rng.integers(0, 3))) for _ in range(8)]
    n = int(rng.integers(mapper.TABLE_NUMPY_FROM, 90))
    s_at, h_at = rng.integers(0, len(shapes), n), rng.integers(0, len(arrays), n)
    pats = [str(rng.choice(["auto", "A", "B", "pairs"])) if arch == "emaxvr" else "auto" for _ in range(n)]
    ords = [str(rng.choice(["auto", "OW,OC,OH", "OW,OH,OC"])) if arch == "emaxvr" else "auto" for _ in range(n)]
    answers = [mapper.conv_candidates(shapes[a], arrays[b], p, o) for a, b, p, o in zip(s_at, h_at, pats, ords)]
    js = rng.integers(0, n, 2 * n)
    want = [(bool(answers[j][0]), tuple(x.reason for x in answers[j][1])) for j in js.tolist()]
    for sh, hw in ((Indexed(shapes, s_at), Indexed(arrays, h_at)),
                   ([shapes[a] for a in s_at], [arrays[b] for b in h_at])):
        tab = mapper.conv_table(arch, sh, hw, np.array(pats, dtype=object), np.array(ords, dtype=object))
        assert tab.rejections(js) == want
        assert tab.rejections(js[:0]) == []


@pytest.mark.parametrize("wl", ["vgg16", "resnet50", "mobilenet_v2", "lenet", "fc1"])
def test_layer_table(wl):
    """_layer_table: per layer, its kind flags, the first layer of an equal shape, its position among the conv and
    pooling layers, the elements _spm_tiles compares with the SPM."""
    w = load_workload(wl)
    shapes = em._shapes(w)
    lt = em._layer_table(w)
    assert lt.has_shape.tolist() == [s is not None for s in shapes]
    assert lt.fc.tolist() == [isinstance(s, FCShape) for s in shapes]
    assert lt.conv.tolist() == [isinstance(s, ConvShape) for s in shapes]
    assert lt.same.tolist() == [shapes.index(s) for s in shapes]
    assert [lt.conv_shapes[a] for a in lt.conv_at[lt.conv].tolist()] == [s for s in shapes if isinstance(s, ConvShape)]
    assert lt.names.tolist() == [layer.name for layer in w.layers]
    for s, pool, mac, whole in zip(shapes, lt.pool.tolist(), lt.mac.tolist(), lt.whole.tolist()):
        if isinstance(s, ConvShape):
            assert (pool, mac) == (s.op == "max", s.op == "mac")
            assert whole == s.groups * (s.oc * s.oh * s.ow + s.ic * s.h * s.w)


@SLOW
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet", "resnet50"]))
def test_chain_by_mask_equals_chain_by_names(seed, wl):
    """_chain decides the same from the mask of fused layers (as _workload_plans gives it) as from the lists of
    the names they are fused into, on the numpy path and one combination at a time."""
    with pytest.MonkeyPatch.context() as mp:
        calls = _captured(mp, "_chain", "emaxvr", wl, _rows("emaxvr", 40, seed)[:20])
    for (ks, layers, shapes, fused_at, pooled, planned, resident, keep), _ in calls:
        assert isinstance(fused_at, np.ndarray) and fused_at.dtype == bool
        names = [["x" if f else None for f in row] for row in fused_at.tolist()]
        for pick in (ks, ks[:1]):
            got = [np.zeros_like(resident), np.zeros_like(keep)]
            want = [np.zeros_like(resident), np.zeros_like(keep)]
            em._chain(pick, layers, shapes, fused_at, pooled, planned, *got)
            em._chain(pick, layers, shapes, names, pooled, planned, *want)
            assert all(np.array_equal(g, w) for g, w in zip(got, want))


def _numpy_equals_one_by_one(numpy_fn, one_fn, ks, layers, shapes, fused_at, pooled, planned) -> list[np.ndarray]:
    """Run a chaining over the combinations ``ks`` as numpy and one combination at a time (``one_fn``, fused
    layers by names), assert the (resident, keep) masks are equal, and return the numpy ones."""
    nl, nk = fused_at.shape
    got = [np.zeros((nl, nk), bool), np.zeros((nl, nk), bool)]
    numpy_fn(ks, layers, shapes, fused_at, pooled, planned, *got)
    want = [np.zeros((nl, nk), bool), np.zeros((nl, nk), bool)]
    for k in ks.tolist():
        names = ["x" if f else None for f in fused_at[:, k].tolist()]
        one_fn(k, layers, shapes, names, pooled[:, k], planned, want[0][:, k], want[1][:, k])
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    return got


@SLOW
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet", "resnet50", "mobilenet_v2"]))
def test_dram_chaining_as_numpy_equals_one_by_one(seed, wl):
    """_chain_least_dram_np (every DRAM-traffic search of a chunk at once) decides for each combination what
    _chain_least_dram decides for it alone (resident and keep, every layer), on the plans of random points (pooling
    fused or not, layers without plans), and leaves the other combinations' columns alone."""
    rows = [dict(r, criterion="dram") for r in get_model("emaxvr").params.random_rows(30, np.random.default_rng(seed))]
    with pytest.MonkeyPatch.context() as mp:
        calls = _captured(mp, "_chain_least_dram_np", "emaxvr", wl, rows)
    for (ks, layers, shapes, fused_at, pooled, planned, resident, keep), _ in calls:
        got = _numpy_equals_one_by_one(em._chain_least_dram_np, em._chain_least_dram, ks, layers, shapes, fused_at,
                                       pooled, planned)
        others = np.setdiff1d(np.arange(fused_at.shape[1]), ks)
        assert not got[0][:, others].any() and not got[1][:, others].any()
        assert any(g.any() for g in got) or wl != "vgg16"  # something is chained


@SLOW
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet", "resnet50", "mobilenet_v2"]))
def test_greedy_chaining_as_numpy_equals_one_by_one(seed, wl):
    """_chain as numpy (every pair's decision for both states of its input, then layer by layer) decides for each
    combination what _chain_one decides for it alone, on the plans of random points (the greedy criteria)."""
    rows = [dict(r, criterion="time") for r in get_model("emaxvr").params.random_rows(40, np.random.default_rng(seed))]
    with pytest.MonkeyPatch.context() as mp:
        calls = _captured(mp, "_chain", "emaxvr", wl, rows)
    assert any(len(ks) >= em.CHAIN_NUMPY_FROM for (ks, *_), _ in calls)
    for (ks, layers, shapes, fused_at, pooled, planned, resident, keep), _ in calls:
        got = _numpy_equals_one_by_one(em._chain, em._chain_one, ks, layers, shapes, fused_at, pooled, planned)
        assert any(g.any() for g in got) or len(ks) < em.CHAIN_NUMPY_FROM or wl != "vgg16"


def test_only_small_chunks_are_remembered():
    """workload_plans remembers a chunk of up to PLANS_CACHE_KEYS combinations (one design point again: a hit) and
    plans a larger one every time (a random batch's chunks never recur), with the same plans."""
    m = get_model("emaxvr")
    rows = m.params.random_rows(3 * em.PLANS_CACHE_KEYS, np.random.default_rng(2))
    em.workload_plans.cache_clear()
    one = m.evaluate_points("vgg16", rows[:1])
    again = m.evaluate_points("vgg16", rows[:1])
    assert em.workload_plans.cache_info().hits >= 1 and repr(one.point(0)) == repr(again.point(0))
    em.workload_plans.cache_clear()
    first = m.evaluate_points("alexnet", rows)
    second = m.evaluate_points("alexnet", rows)
    info = em.workload_plans.cache_info()
    assert info.hits == 0 and info.currsize == 0
    assert [repr(first.point(i)) for i in range(first.n)] == [repr(second.point(i)) for i in range(second.n)]
    em.workload_plans.cache_clear()


def test_a_study_revisiting_a_structure_reuses_its_plans():
    """One design point at a time (a study's trials): a structure met 255 points ago (twice the former bound of 128
    entries; now a budget of bytes) is still remembered -- a hit, and the same numbers as planning it cold at another
    clock."""
    m = get_model("emaxv")
    rows = m.params.random_rows(256, np.random.default_rng(9))
    em.workload_plans.cache_clear()
    for r in rows:
        m.evaluate_points("alexnet-conv", [r])
    hits = em.workload_plans.cache_info().hits
    later = dict(rows[0], clock_mhz=rows[0]["clock_mhz"] * 0.5)
    warm = m.evaluate_points("alexnet-conv", [later])
    assert em.workload_plans.cache_info().hits == hits + 1
    assert 0 < em._one_structure_plans.nbytes <= em.ONE_STRUCTURE_PLANS_BYTES
    em.workload_plans.cache_clear()
    cold = m.evaluate_points("alexnet-conv", [later])
    assert repr(warm.point(0)) == repr(cold.point(0))
    em.workload_plans.cache_clear()

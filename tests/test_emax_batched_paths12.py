"""EMAX batched paths, twelfth round (issue 15): the reasons of a batch's pairs without a plan coded as arrays when
its layers mix conv and FC ones (``mapper.merged_reasons``: the conv requests' coded reasons and the FC ones' merged
in pair order, no tuple per pair); ``mapper.nonzero_2d`` (np.nonzero of the builders' and the mapper's 2-D masks from
their flat indices) and the EMAXVR builder's variant flags gathered column by column. Each fast path is compared with
the general one, and checked to happen."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper, traffic
from archmodels.emax import model as em

from .test_emax_batched_paths5 import _rows
from .test_emax_batched_paths9 import _bits_equal
from .test_emax_batched_paths11 import _builder_calls, _evaluate_spied


_TEXTS = st.lists(st.sampled_from(["a", "b", "no LMM fit", "rows: 3 > 2", ""]), max_size=3).map(tuple)
_ANSWERS = st.lists(st.tuples(st.booleans(), _TEXTS), max_size=30)


@settings(max_examples=300, deadline=None)
@given(a=_ANSWERS, b=_ANSWERS, data=st.data())
def test_merged_reasons_equal_the_answers_coded_in_order(a, b, data):
    """Two coded sets merged by any interleaving equal the answers interleaved the same way, then coded."""
    first = np.array(data.draw(st.permutations([True] * len(a) + [False] * len(b))), dtype=bool)
    ia, ib = iter(a), iter(b)
    want = mapper.coded_reasons([next(ia) if f else next(ib) for f in first.tolist()])
    got = mapper.merged_reasons(first, mapper.coded_reasons(a), mapper.coded_reasons(b))
    assert got[0].dtype == want[0].dtype and np.array_equal(got[0], want[0])
    assert got[2].dtype == want[2].dtype and np.array_equal(got[2], want[2])
    assert got[1].dtype == want[1].dtype and got[1].tolist() == want[1].tolist()


def _whys(arch: str, wl: str, n: int, seed: int) -> list:
    """(pairs' layers, _Why) of every chunk while ``n`` points of ``wl`` are evaluated (caches cleared)."""
    got = []
    real = em._mapping_rows

    def spy(*a, **kw):
        out = real(*a, **kw)
        got.append((a[3], out[3]))
        return out

    _evaluate_spied(em, "_mapping_rows", spy, arch, wl, _rows(arch, n, seed) if seed % 2 else
                    get_model(arch).params.random_rows(n, np.random.default_rng(seed)))
    return got


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxvr", "vgg16", 300, 2), ("emaxvr", "alexnet", 200, 3),
                                            ("emaxv", "vgg16", 200, 4), ("emaxvr", "lenet", 40, 5)])
def test_coded_reasons_of_conv_and_fc_pairs_equal_the_listed_ones(arch, wl, n, seed):
    """A chunk's coded reasons of any pairs (conv and FC mixed: the merged path) equal its listed reasons coded."""
    merged = 0
    real = mapper.merged_reasons

    def count(*a):
        nonlocal merged
        merged += 1
        return real(*a)

    rng = np.random.default_rng(seed)
    for li, why in _whys(arch, wl, n, seed):
        js = np.arange(len(li))
        for sel in (js, rng.permutation(js)[: len(js) // 3], js[::-1][:17], js[:0], js[-1:]):
            with mock.patch.object(mapper, "merged_reasons", count):
                got = why.coded(sel)
            want = mapper.coded_reasons(why(sel))
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[2], want[2])
            assert got[1].tolist() == want[1].tolist()
    assert merged  # (the merged path ran)


@settings(max_examples=300, deadline=None)
@given(rows=st.integers(0, 40), cols=st.integers(0, 12), p=st.floats(0, 1), order=st.sampled_from("CF"),
       dtype=st.sampled_from([bool, np.int8, np.int64, float]), seed=st.integers(0, 2**32 - 1))
def test_nonzero_2d_equals_numpy(rows, cols, p, order, dtype, seed):
    """nonzero_2d gives np.nonzero's row and column indices (values and dtype) of any 2-D array, any layout."""
    a = np.asarray(np.random.default_rng(seed).random((rows, cols)) < p, dtype=dtype, order=order)
    got, want = mapper.nonzero_2d(a), np.nonzero(a)
    assert len(got) == len(want) == 2
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    flat = np.zeros(rows, bool)  # (1-D: numpy's own)
    assert all(np.array_equal(x, y) for x, y in zip(mapper.nonzero_2d(flat), np.nonzero(flat)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("n,seed", [(30, 5), (1, 3)])
def test_builder_with_nonzero_2d_equals_it_with_numpys_nonzero(n, seed):
    """The EMAXVR builder (nonzero_2d, the variant flags gathered column by column) gives the table it gives with
    np.nonzero and the [variant, flag] rows gathered: every column bit for bit, labels, sources, block matrices."""
    real = traffic.emaxvr_plans
    calls = _builder_calls(n, seed)
    assert calls

    def plain_nonzero(a):
        return np.nonzero(a)

    def flag_rows(var):  # (the [variant, flag] rows gathered, then their columns: as before)
        f = np.array(traffic.VR_VARIANTS, dtype=bool)[var]
        return f[:, 0], f[:, 1], f[:, 2], f[:, 3]

    for shapes, r in calls:
        got = real(shapes, r)
        with mock.patch.object(traffic, "nonzero_2d", plain_nonzero), \
                mock.patch.object(traffic, "_variant_flags", flag_rows):
            want = real(shapes, r)
        assert np.array_equal(got.src, want.src) and got.plan.keys() == want.plan.keys()
        for k in want.plan:
            assert np.asarray(got.plan[k]).dtype == np.asarray(want.plan[k]).dtype, k
            assert _bits_equal(got.plan[k], want.plan[k]), k
        assert all(got.label[k].tolist() == want.label[k].tolist() for k in want.label)
        rows = np.arange(len(got))
        for (bg, ag), (bw, aw) in zip(got.take(rows).moves, want.take(rows).moves):
            assert np.array_equal(ag, aw)
            for f in ("xfer_on", "bursts", "per_burst", "par", "dram", "rd_on", "rd_count", "rd_each", "h_on", "h_bytes"):
                assert _bits_equal(getattr(bg, f), getattr(bw, f)), f


@settings(max_examples=100, deadline=None)
@given(var=st.lists(st.integers(0, len(traffic.VR_VARIANTS) - 1), max_size=50))
def test_variant_flags_are_the_variants_rows(var):
    """_variant_flags: per variant index, its VR_VARIANTS flags, one boolean column per flag."""
    var = np.array(var, dtype=np.int64)
    got = traffic._variant_flags(var)
    want = np.array(traffic.VR_VARIANTS, dtype=bool).reshape(-1, 4)[var]
    assert len(got) == 4 and all(g.dtype == bool and np.array_equal(g, want[:, j]) for j, g in enumerate(got))


def _old_fill_pool_passes(tab, n_rows, passes, li, ki):
    """_fill_pool_passes as before this round: the [li, ki] entries of every row, then the plans'."""
    n = passes.n
    first = np.minimum(np.searchsorted(tab.src, n_rows + np.arange(n)), len(tab) - 1)
    if not len(tab) or (tab.src[first] != n_rows + np.arange(n)).any():
        raise IndexError("list index out of range")
    own = tab.src < n_rows
    for name, col in (("pool_iterations", "iterations"), ("pool_loop_ends", "loop_ends")):
        passes.cols[name][passes.li, passes.ki] = tab.plan[col][first]
        v = tab.plan[name]
        v[own] = passes.cols[name][li, ki][tab.src[own]]


def _final(rows, wl: str, old: bool) -> list:
    """Every chunk's (resident, keep, Plans) and the batch while ``rows`` of ``wl`` are evaluated (``old``: the pooling
    passes filled as before this round)."""
    got = []
    real = em._final_plans

    def spy(p, rejections, lt, fused, fused_at, resident, keep):
        out = real(p, rejections, lt, fused, fused_at, resident, keep)
        got.append((resident.copy(), keep.copy(), out))
        return out

    fills = []
    real_fill = em._fill_pool_passes

    def counting_fill(*a):
        fills.append(a[2].n)
        return (_old_fill_pool_passes if old else real_fill)(*a)

    real_passes = em._pool_passes

    def checked_passes(shapes, pooled, hws, maps, req, pairs):
        out = real_passes(shapes, pooled, hws, maps, req, pairs)
        if out.n:  # each pass's mapping: its request's first of the most MAC units, the request found by a dict
            macs = maps["macs"]
            first = {}
            for j, (rq, mc) in enumerate(zip(req.tolist(), macs.tolist())):
                if rq not in first or mc > macs[first[rq]]:
                    first[rq] = j
            where = {p: j for j, p in enumerate(pairs)}
            best = [first[where[(int(i), int(k))]] for i, k in zip(out.li, out.ki)]
            for k, v in maps.items():
                w = np.asarray(v)[best]
                assert (_bits_equal(out.rows[k], w) if w.dtype.kind in "biuf" else
                        out.rows[k].tolist() == w.tolist() and out.rows[k].dtype == w.dtype), k
            # each pass names its pooling shape (the layer after its own), listed once each, layers in order; its
            # array's columns and element size; the pass columns from its shape
            pools = [shapes[i + 1] for i in out.li.tolist()]
            assert [out.shapes[j] for j in out.rows["shape"].tolist()] == pools
            assert len(out.shapes) == len(set(out.li.tolist())) and out.rows["shape"].dtype == np.int64
            assert out.rows["cols"].tolist() == [float(hws[k].cols) for k in out.ki.tolist()]
            assert out.rows["elem"].tolist() == [float(hws[k].elem_bytes) for k in out.ki.tolist()]
            assert out.rows["cols"].dtype == out.rows["elem"].dtype == float
            for name, f in (("pool_oh", lambda p: p.oh), ("pool_ow", lambda p: p.ow),
                            ("pool_ops", lambda p: p.groups * p.oh * p.ow * p.kh * p.kw)):
                want = np.zeros(pooled.shape)
                want[out.li, out.ki] = [f(p) for p in pools]
                assert _bits_equal(out.cols[name], want), name
            fills.append(-out.n)
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "_final_plans", spy), mock.patch.object(em, "_fill_pool_passes", counting_fill), \
            mock.patch.object(em, "_pool_passes", checked_passes):
        batch = get_model("emaxvr").evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    return got, batch, fills


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet", "resnet50"]), mixed=st.booleans())
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_pool_passes_by_positions_equal_them_by_lookups(seed, wl, mixed):
    """A batch with fused pooling passes (found by a [layer, combination] position table, filled by flat positions)
    gives the same decisions, plans (every column and label) and contract dictionaries as with the passes found in
    a dict and filled through the [li, ki] entries of every row; passes happen (checked)."""
    from .test_emax_batched_paths5 import _dump
    m = get_model("emaxvr")
    rows = _rows("emaxvr", 24, seed) if mixed else m.params.random_rows(24, np.random.default_rng(seed))
    fast, fb, fills = _final(rows, wl, False)
    slow, sb, _ = _final(rows, wl, True)
    assert [_dump(fb.point(i)) for i in range(fb.n)] == [_dump(sb.point(i)) for i in range(sb.n)]
    for (rf, kf, of), (rs, ks, os_) in zip(fast, slow):
        assert np.array_equal(rf, rs) and np.array_equal(kf, ks)
        assert np.array_equal(of.start, os_.start) and np.array_equal(of.count, os_.count)
        a, b = of.table, os_.table
        assert all(_bits_equal(a.plan[k], b.plan[k]) for k in b.plan)
        assert all(a.label[k].tolist() == b.label[k].tolist() for k in b.label)


def test_pool_passes_happen_in_a_batch():
    _, _, fills = _final(_rows("emaxvr", 24, 3), "vgg16", False)
    assert any(f > 0 for f in fills) and any(f < 0 for f in fills)  # (passes found and filled, each checked)

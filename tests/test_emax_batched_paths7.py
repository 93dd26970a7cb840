"""EMAX batched paths, seventh round (issue 15): the mapper's tile search over a chunk (``mapper.conv_table``) takes
each row's weight spread as arrays (``mapper._spreads``), the arrays' architecture once (``mapper._archs``) and
places the other tiles after their structure's first without a sort (``mapper._after_each``); it fits the LMM on
each pattern's live requests only (``mapper._fits_of_live``) and keeps a structure's numbers per pattern, a fit's
per (pattern, input mode) (``mapper._slot_numbers``). Each fast path is compared with the general one bit for bit."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels.emax import mapper
from archmodels.emax.mapper import ConvShape, Hw, Indexed, shape_of
from workloads import load_workload

#: every conv and pooling shape of a few built-in CNNs
SHAPES = sorted({s for wl in ("vgg16", "alexnet", "resnet50", "mobilenet_v2")
                 for s in map(shape_of, load_workload(wl).layers) if isinstance(s, ConvShape)}, key=repr)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 40), data=st.data())
def test_after_each_equals_the_stable_sort(n, data):
    """_after_each gives the order np.argsort(concatenate([arange(n), repeat(rows, lens)]), kind="stable") gives:
    each row, then its new rows, in order (rows increasing, any counts, none included)."""
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))) if n else [],
                    dtype=np.int64)
    lens = np.array(data.draw(st.lists(st.integers(0, 9), min_size=len(rows), max_size=len(rows))), dtype=np.int64)
    want = np.argsort(np.concatenate([np.arange(n), np.repeat(rows, lens)]), kind="stable")
    got = mapper._after_each(n, rows, lens)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(0, 50))
def test_spreads_equal_weights_spread_row_by_row(data, n):
    """_spreads (the test over arrays of float columns, as conv_table holds them) equals _weights_spread of each
    row's pattern, taps and kernel LMMs as Python numbers: None, or the same (int, int) tuple."""
    patterns = data.draw(st.lists(st.sampled_from(["A", "B", "pairs", "single"]), min_size=1, max_size=6))
    slot = np.array(data.draw(st.lists(st.integers(0, len(patterns) - 1), min_size=n, max_size=n)), dtype=np.int64)
    macs = np.array(data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)), dtype=float)
    lmms = np.array(data.draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)), dtype=float)
    for k in data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=n)) if n else []:
        macs[k] = 2 * lmms[k]  # the even case, often
    got = mapper._spreads(patterns, slot, macs, lmms)
    want = [mapper._weights_spread(patterns[s], m, k) for s, m, k in zip(slot.tolist(), macs.tolist(), lmms.tolist())]
    assert got == want
    assert [type(x) for g in got if g for x in g] == [int] * 2 * sum(g is not None for g in got)


def test_archs_one_architecture_or_each_arrays():
    """_archs: every request's array's architecture, repeated when one, row by row when the arrays mix them (given
    by position or as a list)."""
    hv, hr = Hw("emaxv", 8, 4, 1024, 0, 4), Hw("emaxvr", 8, 4, 1024, 0, 4)
    js = np.array([2, 0, 1, 1], dtype=np.int64)
    for hws in ([hr, hr, hr], Indexed([hr], np.zeros(3, np.int64))):
        assert list(mapper._archs(hws, js)) == ["emaxvr"] * 4
    for hws in ([hv, hr, hv], Indexed([hv, hr], np.array([0, 1, 0]))):
        assert list(mapper._archs(hws, js)) == ["emaxv", "emaxv", "emaxvr", "emaxvr"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), indexed=st.booleans())
def test_tile_search_over_a_chunk_equals_one_by_one(seed, indexed):
    """conv_table with tile searches (every request searched, levels 1 and 2, pattern-A layers whose taps spread
    unevenly, equal requests repeated as a chunk repeats them) lists what conv_candidates lists request by request:
    every column's kind and values, every request's rows in order, for requests given by position or as lists."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(mapper.TABLE_NUMPY_FROM, 120))
    arrays = [Hw("emaxvr", int(rng.integers(8, 129)), int(rng.choice([4, 8, 16])),
                 int(round(float(np.exp(rng.uniform(np.log(256), np.log(2**18)))))), 0, int(rng.choice([2, 4])),
                 int(rng.choice([0, 0, int(rng.integers(1, 600))])), int(rng.choice([1, 2]))) for _ in range(6)]
    s_at, h_at = rng.integers(0, len(SHAPES), n), rng.integers(0, len(arrays), n)
    pats = [str(rng.choice(["auto", "auto", "A", "B", "pairs"])) for _ in range(n)]
    pats = [p if not (SHAPES[a].op == "max" and p == "pairs") else "auto" for p, a in zip(pats, s_at.tolist())]
    ords = [str(rng.choice(["auto", "OW,OC,OH", "OW,OH,OC"])) for _ in range(n)]
    shapes, hws = [SHAPES[a] for a in s_at], [arrays[b] for b in h_at]
    sh, hw = (Indexed(SHAPES, s_at), Indexed(arrays, h_at)) if indexed else (shapes, hws)
    tab = mapper.conv_table("emaxvr", sh, hw, np.array(pats, dtype=object), np.array(ords, dtype=object))
    maps = [mapper.conv_candidates(*a)[0] for a in zip(shapes, hws, pats, ords)]
    ref = mapper.mapping_columns(list(itertools.chain.from_iterable(maps)))
    assert tab.req.tolist() == np.repeat(np.arange(n), [len(ms) for ms in maps]).tolist()
    assert tab.cols.keys() == ref.keys()
    for k, v in ref.items():
        assert tab.cols[k].dtype.kind == v.dtype.kind and np.array_equal(tab.cols[k], v), k


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), some=st.floats(0.0, 1.0))
def test_fits_of_live_requests_equal_the_fits_of_every_request(seed, arch, some):
    """_fits_of_live (the LMM fits computed on the live requests only, placed at their positions) equals
    _fit_lmm_np on every request at every live one, for both input modes, every field's dtype and value; no fit
    (n_seg 0) and no reason code elsewhere. Random layers, arrays (small ones, tiny LMMs, channel caps) and live
    masks (the structure's verdict, thinned at random, none and all included)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    shapes = [SHAPES[i] for i in rng.integers(0, len(SHAPES), n)]
    hws = [Hw(arch, int(rng.integers(4, int(rng.choice([16, 64, 513])))), int(rng.choice([2, 4, 8, 16])),
              int(round(float(np.exp(rng.uniform(np.log(16), np.log(2**21)))))), 0, int(rng.choice([2, 4])),
              int(rng.choice([0, int(rng.integers(1, 4097))])), int(rng.choice([0, 1, 2]))) for _ in range(n)]
    q = mapper._Req(shapes, hws)
    for p in (mapper.PATTERNS_V if arch == "emaxv" else mapper.PATTERNS_VR):
        ok, core, _ = mapper._structure_np(p, q, rng.random(n) < 0.5, arch)
        live = ok & (rng.random(n) < some)
        got = mapper._fits_of_live(p, q, core["oc_par"], core["px_par"], live)
        shared = mapper._fit_kernel_np(p, q, core["oc_par"])
        for res in (False, True):
            want = mapper._fit_lmm_np(p, res, q, core["oc_par"], core["px_par"], live, shared)
            assert len(got[res]) == len(want)
            for g, w in zip(got[res], want):
                assert g.dtype == w.dtype and g.shape == w.shape
                assert np.array_equal(g[live], w[live])
            assert not got[res][0][~live].any() and not got[res][4][~live].any()
            assert not want[0][~live].any() and not want[4][~live].any()  # (the general path's too)

"""EMAXV/EMAXVR speed work (issue 15) must not change a number: the LMM-fit shortcut, the plan caches
and the texts built when read give what the plain computation gives."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, example, given, settings, strategies as st

from archmodels import get_model
from archmodels.emax import explain, mapper, model
from archmodels.emax.mapper import ORDERS_VR, ConvShape, Hw, shape_of
from workloads import load_workload

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: every conv and pooling shape of the built-in CNNs
SHAPES = sorted({sh for wl in ("alexnet", "vgg16", "lenet", "mobilenet_v2", "resnet50")
                 for sh in map(shape_of, load_workload(wl).layers) if isinstance(sh, ConvShape)}, key=repr)


@SETTINGS
@given(sh=st.sampled_from(SHAPES), pattern=st.sampled_from(["single", "A", "B", "pairs"]),
       order=st.sampled_from([("OW",)] + list(ORDERS_VR)), mode=st.sampled_from(["rows", "resident", "swap"]),
       lmm=st.integers(64, 2**21), elem=st.sampled_from([2, 4]), cols=st.sampled_from([2, 4, 8, 16]))
def test_lmm_fit_shortcut_equals_the_search(sh, pattern, order, mode, lmm, elem, cols):
    """Above the widest tiling's need the fit answers without searching: the same answer as the search."""
    hw = Hw("emaxvr", 64, cols, lmm, 0, elem)
    _, ocp, pxp, _ = mapper._geometry(pattern, sh, hw)
    fast = mapper._fit_lmm(pattern, order, mode, sh, hw, ocp, pxp)
    with mock.patch.object(mapper, "_whole_need", lambda *a: float("inf")):  # never take the shortcut
        searched = mapper._fit_lmm(pattern, order, mode, sh, hw, ocp, pxp)
    assert fast == searched


def _clear_caches() -> None:
    for fn in (model.workload_plans, mapper.conv_candidates, mapper.fc_candidates, mapper._whole_need,
               mapper._reduction_rows, mapper._geometry_cols):
        fn.cache_clear()
    explain._MEMO.clear()


def test_same_structure_through_other_points_equals_uncached():
    """A structure planned for one point (cached) gives another point of that structure what a cold
    evaluation gives it."""
    m = get_model("emaxvr")
    rows = m.params.random_rows(6, np.random.default_rng(4))
    m.evaluate_points("vgg16", rows)  # plans and texts cached
    again = [dict(r, clock_mhz=r["clock_mhz"] * 0.7, dram_gbps=r["dram_gbps"] * 1.3) for r in rows]
    warm = m.evaluate_points("vgg16", again)
    _clear_caches()
    cold = m.evaluate_points("vgg16", again)
    for i in range(len(rows)):
        assert warm.point(i) == cold.point(i)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
# found in CI-like runs: a layer whose plans all had NaN bounds (an energy criterion above the node's fmax) took
# the batch's first pair as its pruning probe, so another point's reference pruned this point's runner-up
@example(seed=4559, arch="emaxvr")
@example(seed=1197, arch="emaxvr")
def test_texts_read_alone_equal_texts_built_together(seed, arch):
    """A lazily built text read point by point equals the column built at once, and a point alone
    (infeasible ones included) equals the same point in a batch."""
    m = get_model(arch)
    rows = m.params.random_rows(12, np.random.default_rng(seed))
    batch = m.evaluate_points("vgg16", rows)
    for lb in batch.layers:
        for key in model.LAZY_TEXTS:
            col = lb.labels[key]
            alone = [col[i] for i in range(batch.n)]  # before the column is built
            assert alone == list(np.asarray(col))
    for i in range(0, len(rows), 3):
        assert m.evaluate_points("vgg16", [rows[i]]).point(0) == batch.point(i)


def test_lazy_text_column_semantics():
    """Fixed values, plans put on, and a rebuild after a change."""
    m = get_model("emaxvr")
    res = m.evaluate_points("alexnet-conv", [m.params.defaults()])
    col = res.layers[0].labels["tiles"]
    assert isinstance(col, explain.LazyText) and "OC " in col[0]
    tab = col.tables[0]
    text = col[0]
    fresh = explain.LazyText(3, explain.tiles)
    fresh[1] = "-"
    fresh.put(np.array([0, 2]), tab, np.array([col.row[0], col.row[0]]))
    assert list(np.asarray(fresh)) == [text, "-", text]
    fresh[2] = "x"  # a change after the column was built
    assert fresh[2] == "x" and np.asarray(fresh)[2] == "x"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_mapper_over_many_requests_equals_one_by_one(seed, arch):
    """conv_table (the mapper as numpy over many requests) lists, column by column, what conv_candidates lists
    request by request: every conv/pool shape of the built-in CNNs on random arrays (small ones, where patterns
    are rejected; tiny LMMs, where nothing fits), LMM sizes, channel caps, tile searches and knobs."""
    rng = np.random.default_rng(seed)
    n = 60
    shapes = [SHAPES[i] for i in rng.integers(0, len(SHAPES), n)]
    hws = [Hw(arch, int(rng.integers(4, int(rng.choice([16, 64, 513])))), int(rng.choice([2, 4, 8, 16])),
              int(round(float(np.exp(rng.uniform(np.log(16), np.log(2**21)))))), 0, int(rng.choice([2, 4])),
              int(rng.choice([0, int(rng.integers(1, 4097))])), int(rng.choice([0, 0, 1, 2]))) for _ in range(n)]
    pats = [str(rng.choice(["auto", "single"] if arch == "emaxv" else ["auto", "A", "B", "pairs"])) for _ in range(n)]
    pats = [p if not (sh.op == "max" and p == "pairs") else "auto" for p, sh in zip(pats, shapes)]
    orders = [str(rng.choice(["auto"] if arch == "emaxv" else ["auto", "OW,OC,OH", "OW,OH,OC"])) for _ in range(n)]
    tab = mapper.conv_table(arch, shapes, hws, pats, orders)
    cols, req = tab.cols, tab.req
    maps = [mapper.conv_candidates(*a)[0] for a in zip(shapes, hws, pats, orders)]
    ref = mapper.mapping_columns([m for ms in maps for m in ms])
    assert req.tolist() == np.repeat(np.arange(n), [len(ms) for ms in maps]).tolist()
    assert cols.keys() == ref.keys()
    for k, v in ref.items():  # the same numbers and texts, and text columns of the same kind (str or object)
        assert cols[k].dtype.kind == v.dtype.kind and np.array_equal(cols[k], v), k
    some = rng.permutation(n)[:n // 2].tolist()  # asked for some requests, in any order
    for j, got in zip(some, tab.rejections(some)):
        ms, rej = mapper.conv_candidates(shapes[j], hws[j], pats[j], orders[j])
        assert got == (bool(ms), tuple(x.reason for x in rej))


#: every FC and dense-product shape of the built-in workloads
FC_SHAPES = sorted({sh for wl in ("alexnet", "vgg16", "lenet", "mobilenet_v2", "resnet50")
                    for sh in map(shape_of, load_workload(wl).layers) if isinstance(sh, mapper.FCShape)}, key=repr)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_fc_mapper_over_many_requests_equals_one_by_one(seed, arch):
    """fc_table lists, column by column, what fc_candidates lists request by request (tiny arrays and LMMs
    included, channel caps, tile searches)."""
    rng = np.random.default_rng(seed)
    n = 40
    shapes = [FC_SHAPES[i] for i in rng.integers(0, len(FC_SHAPES), n)]
    hws = [Hw(arch, int(rng.integers(4, int(rng.choice([12, 513])))), int(rng.choice([2, 4, 8, 16])),
              int(rng.choice([1, 2, 3, int(rng.integers(4, 2**20))])), 0, int(rng.choice([2, 4])),
              int(rng.choice([0, int(rng.integers(1, 4097))])), int(rng.choice([0, 1]))) for _ in range(n)]
    cols, req = mapper.fc_table(shapes, hws)
    maps = [mapper.fc_candidates(sh, hw)[0] for sh, hw in zip(shapes, hws)]
    ref = mapper.mapping_columns([m for ms in maps for m in ms])
    assert req.tolist() == np.repeat(np.arange(n), [len(ms) for ms in maps]).tolist()
    for k, v in ref.items():
        assert cols[k].dtype.kind == v.dtype.kind and np.array_equal(cols[k], v), k


def test_small_and_large_paths_decide_alike(monkeypatch):
    """The mapper table and the SPM chaining run one by one for a few requests / combinations and as numpy for
    many: forced either way, every point of a batch gets the same numbers and texts."""
    m = get_model("emaxvr")
    rows = m.params.random_rows(24, np.random.default_rng(11))
    out = []
    for numpy_from in (10**9, 0):
        monkeypatch.setattr(mapper, "TABLE_NUMPY_FROM", numpy_from)
        monkeypatch.setattr(model, "CHAIN_NUMPY_FROM", numpy_from)
        _clear_caches()
        r = m.evaluate_points("vgg16", rows)
        out.append([repr(r.point(i)) for i in range(r.n)])
    assert out[0] == out[1]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16", "alexnet", "mobilenet_v2"]))
def test_timing_every_pair_equals_pruning_first(seed, arch, wl):
    """The choice times every (plan, point) pair at once below TIME_ALL_UPTO pairs (the choice's and the report's
    states from one pass) and prunes first above: forced either way, a batch and its points alone get the same
    numbers and texts."""
    m = get_model(arch)
    rows = m.params.random_rows(6, np.random.default_rng(seed))
    out = []
    for upto in (0, 10**9):
        with mock.patch.object(model, "TIME_ALL_UPTO", upto):
            model.workload_plans.cache_clear()
            explain._MEMO.clear()
            r = m.evaluate_points(wl, rows)
            alone = [m.evaluate_points(wl, [row]).point(0) for row in rows[:2]]
            out.append(([repr(r.point(i)) for i in range(r.n)], [repr(p) for p in alone]))
    assert out[0] == out[1]


@SETTINGS
@given(crit=st.sampled_from(model.CRITERIA), counts=st.lists(st.integers(1, 5), min_size=1, max_size=6),
       seed=st.integers(0, 2**31 - 1))
def test_one_criterion_as_text_equals_per_pair(crit, counts, seed):
    """The choice under one criterion for every pair (a string: one design point) ranks, picks and finds the
    runner-up as with the criterion per pair (an array), ties, NaN and repeated values included."""
    rng = np.random.default_rng(seed)
    n = sum(counts)
    start = np.cumsum(counts) - np.array(counts)

    def col():
        return rng.choice([1.0, 1.01, 2.0, 3.0, np.nan], n) * rng.choice([1.0, 1.0 + 1e-12], n)

    t, en, dr = col(), col(), col()
    per = np.full(n, crit, dtype=object)
    assert np.array_equal(model._primary(crit, t, en, dr), model._primary(per, t, en, dr), equal_nan=True)
    pick = model.select(crit, t, en, dr, start)
    assert np.array_equal(pick, model.select(per, t, en, dr, start))
    at = start + pick
    assert np.array_equal(model.runner_up(crit, t, en, dr, start, at), model.runner_up(per, t, en, dr, start, at))
    assert model._first_rtol(crit, True) == model._first_rtol(per, True)[0]
    assert model._first_rtol(crit, False) == model._first_rtol(per, False)[0]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet"]), n=st.sampled_from([1, 5]))
def test_pooling_passes_planned_with_the_layers_equal_planned_alone(seed, wl, n):
    """The fused pooling passes ride along in the layers' EMAXVR builder call: each pass's first schedule (its
    iterations and loop ends, which the fused layer's plans carry) equals the pass planned alone."""
    from archmodels.emax import traffic
    m = get_model("emaxvr")
    rows = [dict(r, pool_fusion=True, spm_kb=max(r["spm_kb"], 64.0), rows=max(r["rows"], 64),
                 lmm_kb=max(r["lmm_kb"], 2.0))  # an array with an SPM that the pooling layers map on
            for r in m.params.random_rows(n, np.random.default_rng(seed))]
    seen = []
    real = model._fill_pool_passes

    def spy(tab, n_rows, passes, li, ki):
        real(tab, n_rows, passes, li, ki)
        seen.append((tab, n_rows, passes, li, ki))

    model.workload_plans.cache_clear()
    with mock.patch.object(model, "_fill_pool_passes", spy):
        m.evaluate_points(wl, rows)
    assert seen
    for tab, n_rows, passes, li, ki in seen:
        alone = traffic.emaxvr_plans(passes.shapes, {k: v.copy() for k, v in passes.rows.items()})
        first = np.searchsorted(alone.src, np.arange(passes.n))
        own = tab.src < n_rows
        for name, col in (("pool_iterations", "iterations"), ("pool_loop_ends", "loop_ends")):
            assert np.array_equal(passes.cols[name][passes.li, passes.ki], alone.plan[col][first])
            assert np.array_equal(tab.plan[name][own], passes.cols[name][li, ki][tab.src[own]])


@SETTINGS
@given(crit=st.sampled_from(model.CRITERIA), seed=st.integers(0, 2**31 - 1), n=st.integers(0, 12))
def test_verdicts_under_one_criterion_equal_per_point(crit, seed, n):
    """The runner-up verdicts for one criterion (a string) are the per-point phrases, text for text."""
    rng = np.random.default_rng(seed)
    worse, more, none = (rng.random(n) < 0.5 for _ in range(3))
    per = explain.verdicts(np.full(n, crit, dtype=object), worse, more, none)
    one = explain.verdicts(crit, worse, more, none)
    assert one.dtype == per.dtype and one.tolist() == per.tolist()


@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(0, 40))
def test_close_equals_isclose(seed, n):
    """The runner-up's sameness test equals np.isclose(rtol=1e-9, atol=0), NaN, infinities and zeros included."""
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.0, 1.0 + 1e-10, 1.0 + 1e-8, -1.0, 3e300, np.inf, -np.inf, np.nan, 5e-324])
    x, y = rng.choice(pool, n), rng.choice(pool, n)
    assert np.array_equal(model._close(x, y), np.isclose(x, y, rtol=1e-9, atol=0))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
def test_lazy_text_where_equals_where_of_the_strings(seed):
    """np.where between two lazy text columns of one text function (a GEMM form picked per point) stays lazy and
    shows, point by point and as an array, what np.where of their strings shows; other numpy functions get the
    strings."""
    m = get_model("emaxvr")
    rng = np.random.default_rng(seed)
    rows = m.params.random_rows(8, rng)
    layers = m.evaluate_points("vgg16", rows).layers
    for key in model.LAZY_TEXTS:
        a, b = layers[int(rng.integers(len(layers)))].labels[key], layers[int(rng.integers(len(layers)))].labels[key]
        cond = rng.random(len(rows)) < rng.choice([0.0, 0.5, 1.0])  # one column's points only, or some of each
        both = np.where(cond, a, b)
        assert isinstance(both, explain.LazyText)
        want = np.where(cond, np.asarray(a), np.asarray(b))
        assert [both[i] for i in range(len(rows))] == want.tolist()
        assert np.asarray(np.where(~cond, both, a)).tolist() == np.where(~cond, want, np.asarray(a)).tolist()
        assert np.concatenate([a, b]).tolist() == np.asarray(a).tolist() + np.asarray(b).tolist()

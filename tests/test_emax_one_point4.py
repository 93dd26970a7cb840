"""EMAXV/EMAXVR one design point, fourth round (issue 15): the one-point paths give the general path's bits.

Every fast path here is forced off (or on) and compared bit for bit with the other over random points of the
declared spaces: one point, several points sharing a node and data type, and mixed batches."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from archmodels import get_model
from archmodels.emax import cost, model

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _bits(a) -> tuple:
    """An array's dtype, shape and bytes (NaN equal to itself, -0.0 apart from 0.0)."""
    a = np.asarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def _points(arch: str, seed: int, n: int, same: bool):
    """``n`` random points of ``arch``'s space; ``same``: all at the first point's node and data type."""
    m = get_model(arch)
    rows = m.params.random_rows(n, np.random.default_rng(seed))
    if same:
        rows = [dict(r, tech_nm=rows[0]["tech_nm"], dtype_bits=rows[0]["dtype_bits"]) for r in rows]
    return m.params.points(rows)


def _never_one(a) -> bool:
    return False


@SETTINGS
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6),
       same=st.booleans())
def test_area_one_node_equals_selection(arch, seed, n, same):
    """cost.area_mm2 and the leakage of points at one node and data type (every point at once) equal the
    per-(node, type) selection."""
    pts = _points(arch, seed, n, same)
    fast = model._area_static_computed(pts)
    with mock.patch.object(cost, "_one_value", _never_one):
        slow = model._area_static_computed(pts)
    assert fast.keys() == slow.keys()
    for k in fast:
        assert _bits(fast[k]) == _bits(slow[k]), k


@SETTINGS
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6),
       same=st.booleans())
def test_point_consts_one_node_equals_selection(arch, seed, n, same):
    """_PointConsts of points at one node and data type equals the per-(node, type) selection."""
    pts = _points(arch, seed, n, same)
    model._AREA_MEMOS.clear()
    fast = model._PointConsts(pts, n)
    model._AREA_MEMOS.clear()
    with mock.patch.object(cost, "_one_value", _never_one):
        slow = model._PointConsts(pts, n)
    for k in ("pes", "spm_kb", "dram_rd_pj", "dram_wr_pj", "mac_pj", "add_pj", "lmm_pj", "spm_pj", "static_w"):
        assert _bits(getattr(fast, k)) == _bits(getattr(slow, k)), k
    assert fast.only == slow.only


def _json(res) -> list[str]:
    import json
    return [json.dumps(res.point(i), default=str, sort_keys=True) for i in range(res.n)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3),
       wl=st.sampled_from(["alexnet-conv", "lenet", "vgg16"]), default=st.booleans())
def test_few_transfers_in_python_equal_the_sub_tables(arch, seed, n, wl, default):
    """The transfers' sums in Python numbers (_few_flows, _few_reads; forced for every table, EMAXVR's staging
    and pooling transfers included) equal the sub-tables' numpy sums bit for bit, and so does every output."""
    from archmodels.emax import timing

    m = get_model(arch)
    rows = m.params.random_rows(n, np.random.default_rng(seed))
    if default:  # (the default point has plans on every layer: some pairs are timed)
        rows[0] = {}
    checked = []
    entry_flows, few_flows = timing._entry_flows, timing._few_flows

    def both(tab, r, pts, link, variants):
        a, b = entry_flows(tab, r, pts, link, variants), few_flows(tab, r, pts, link, variants)
        assert a.keys() <= b.keys()  # (the sub-tables' path leaves out the report's sums when they are the choice's)
        for k in a:
            assert _bits(a[k]) == _bits(b[k]), k
        for x, y in zip(timing._states(tab, r, pts, link, variants, a), timing._states(tab, r, pts, link, variants, b)):
            assert list(x) == list(y) and all(_bits(x[k]) == _bits(y[k]) for k in x)
        reads = timing._few_reads(tab, r, pts, link)
        with mock.patch.object(timing, "FEW_CELLS", -1):
            ref = timing.pair_dram_reads(tab, r, pts, link)
        assert [_bits(x) for x in reads] == [_bits(x) for x in ref]
        checked.append(len(r))
        return b

    with mock.patch.object(timing, "FEW_CELLS", 10**9), mock.patch.object(timing, "_few_flows", both):
        model.workload_plans.cache_clear()
        few = _json(m.evaluate_points(wl, rows))
    assert checked or not default
    with mock.patch.object(timing, "FEW_CELLS", -1):
        model.workload_plans.cache_clear()
        entries = _json(m.evaluate_points(wl, rows))
    assert few == entries


def test_numpy_ceil_and_maximum_in_python():
    """_ceil and _max give np.ceil's and np.maximum's bits (signed zeros, infinities, NaN)."""
    from archmodels.emax import timing

    xs = [0.0, -0.0, -1e-9, -0.5, -1.0, 1e-9, 0.5, 1.0, 2.5, -2.5, 1e300, -1e300, float("inf"), float("-inf"),
          float("nan"), 2.0**53 + 2, 4503599627370495.5]
    for x in xs:
        assert _bits(np.float64(timing._ceil(x))) == _bits(np.ceil(np.float64(x))), x
        for y in xs:
            assert _bits(np.float64(timing._max(x, y))) == _bits(np.maximum(np.float64(x), np.float64(y))), (x, y)


_VALUES = st.one_of(st.floats(0, 1e6), st.sampled_from([0.0, -0.0, float("inf"), float("nan"), 1.0]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (inf x 0 in edp: NaN, as in the model)
@settings(max_examples=200, deadline=None)
@given(data=st.lists(st.tuples(_VALUES, _VALUES, _VALUES), min_size=0, max_size=8),
       crit=st.sampled_from(list(model.CRITERIA) + ["array"]), seed=st.integers(0, 2**31 - 1))
def test_one_candidate_per_point_select_and_runner_up(data, crit, seed):
    """With one candidate per point (EMAXV), select's and runner_up's shortcuts equal their pair-by-pair rules."""
    t, en, dr = (np.array([d[i] for d in data], dtype=float) for i in range(3))
    n = len(t)
    start = np.arange(n, dtype=np.int64)
    if crit == "array":
        c = np.random.default_rng(seed).choice(np.array(model.CRITERIA, dtype=object), n)
    else:
        c = crit
    pick = start + model.select(c, t, en, dr, start)
    if n:
        assert _bits(pick) == _bits(start + model._select_pairs(c, t, en, dr, start))
        assert _bits(model.runner_up(c, t, en, dr, start, pick)) == \
            _bits(model._runner_up_pairs(c, t, en, dr, start, pick))
        by = model._primary(c, t, en, dr)
        assert _bits(model.runner_up(c, t, en, dr, start, pick, by)) == \
            _bits(model._runner_up_pairs(c, t, en, dr, start, pick, by))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1),
       wl=st.sampled_from(["alexnet-conv", "vgg16", "lenet"]))
def test_every_plan_in_order_equals_gathered(arch, seed, wl):
    """A choice over every plan of its table in order (one design point) reads the plan columns and sub-table
    entries as they are (_every, _Take, _expand): the same bits as gathering them; the words of entries without a
    repeat are computed directly, the same bits as once per distinct entry (_entry_words)."""
    from archmodels.emax import timing

    m = get_model(arch)
    rows = [{}] + m.params.random_rows(1, np.random.default_rng(seed))
    calls = []
    states, reads = timing.pair_states_both, timing.pair_dram_reads

    def check(tab, r, pts, link):
        got = states(tab, r, pts, link)
        with mock.patch.object(timing, "_every", lambda *a: False), mock.patch.object(timing, "FEW_CELLS", -1):
            ref = states(tab, r, pts, link)
            ref_reads = reads(tab, r, pts, link)
        with mock.patch.object(timing, "FEW_CELLS", -1):
            new_reads = reads(tab, r, pts, link)
        for a, b in zip(got, ref):
            assert list(a) == list(b)
            assert all(_bits(a[k]) == _bits(b[k]) for k in a)
        assert [_bits(x) for x in new_reads] == [_bits(x) for x in ref_reads]
        calls.append(timing._every(tab, r))
        return got

    for row in rows:
        model.workload_plans.cache_clear()
        with mock.patch.object(model, "pair_states_both", check):
            m.evaluate_points(wl, [row])
    assert any(calls)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(0, 30), repeats=st.booleans())
def test_entry_words_directly_equals_once_per_entry(seed, n, repeats):
    """_entry_words without np.unique (no more entries than the table lists) gives words() once per distinct entry."""
    from archmodels.emax import timing

    rng = np.random.default_rng(seed)
    each = rng.choice([0.0, 1.0, 3.0, 17.5, 64.0, 1e6, 2.0**40 + 0.5], size=max(n, 1))
    weight = rng.integers(0, 2, size=len(each)).astype(float)
    e = rng.integers(0, len(each), size=n) if repeats else rng.permutation(len(each))[:n]
    link = timing.Link(np.full(2, 240.0), np.full(2, 128), np.full(2, 17.0), np.full(2, 62.5), np.full(2, 15.36),
                       np.full(2, 4.0), 2, 4)
    pt = np.zeros(len(e), dtype=np.int64)
    used, inv = np.unique(e, return_inverse=True)
    ref = timing.words(each[used], weight[used], link.bus_bytes[:1], link.elem[:1])[inv.reshape(-1)]
    assert _bits(timing._entry_words(each, weight, e, pt, link)) == _bits(ref)


@settings(max_examples=60, deadline=None)
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1))
def test_link_of_one_point_equals_the_batch_path(arch, seed):
    """Link of one point (Python numbers) equals row 0 of the numpy path (that point twice)."""
    from archmodels.emax import timing

    pts = _points(arch, seed, 1, False)
    n = 1
    args = lambda p, n: (p["clock_mhz"], p["fsm_bus_bits"], p["dram_gbps"], p["dram_latency_ns"],  # noqa: E731
                         p.get("spm_gbps", np.full(n, 15.36)), p.get("spm_latency_ns", np.full(n, 1000 / 240)),
                         p["dtype_bits"] // 8, p["cols"])
    one = timing.Link(*args(pts, n))
    two = timing.Link(*(np.repeat(np.asarray(a), 2) for a in args(pts, n)))
    for k in ("clock_hz", "bus_bytes", "dram_bpc", "spm_bpc", "lat_dram", "lat_spm", "elem", "cols"):
        assert _bits(getattr(one, k)) == _bits(np.asarray(getattr(two, k))[:1]), k


def test_report_states_without_staging_equal_their_own_sums():
    """Without a staging byte (EMAXV) the report's states are the choice's (_same_sums): the same bits as the report
    computed alone from its own sums."""
    from archmodels.emax import timing

    m = get_model("emaxv")
    rows = [{}] + m.params.random_rows(3, np.random.default_rng(5))
    seen = []
    states = timing._states

    def check(tab, r, pts, link, variants, flows):
        got = states(tab, r, pts, link, variants, flows)
        if timing._same_sums(variants, flows):
            full = timing._entry_flows(tab, r, pts, link, (False,))
            ref = states(tab, r, pts, link, (False,), full)[0]
            rep = got[variants.index(False)]
            assert list(rep) == list(ref) and all(_bits(rep[k]) == _bits(ref[k]) for k in rep)
            seen.append(True)
        return got

    with mock.patch.object(timing, "_states", check), mock.patch.object(timing, "FEW_CELLS", -1):
        model.workload_plans.cache_clear()
        m.evaluate_points("alexnet-conv", rows)
    assert seen


@settings(max_examples=150, deadline=None)
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1))
def test_one_point_consts_in_python_numbers(arch, seed):
    """One design point's constants, areas and leakage in Python numbers (_area_static_one, _PointConsts' n == 1)
    equal the per-node selection of the numpy path."""
    pts = _points(arch, seed, 1, False)
    fast_area = model._area_static_computed(pts)
    model._AREA_MEMOS.clear()
    fast = model._PointConsts(pts, 1)
    model._AREA_MEMOS.clear()
    with mock.patch.object(cost, "_one_value", _never_one):
        slow_area = model._area_static_computed(pts)
        slow = model._PointConsts(pts, 1)
    model._AREA_MEMOS.clear()
    assert list(fast_area) == list(slow_area)
    assert all(_bits(fast_area[k]) == _bits(slow_area[k]) for k in fast_area)
    for k in ("mac_pj", "add_pj", "lmm_pj", "spm_pj", "static_w"):
        assert _bits(getattr(fast, k)) == _bits(getattr(slow, k)), k


@settings(max_examples=60, deadline=None)
@given(crit=st.lists(st.sampled_from(model.CRITERIA), min_size=0, max_size=70))
def test_tile_search_flags_equal_isin(crit):
    """evaluate_layers' tile-search flags of a few points (a comprehension) equal np.isin's."""
    seen = {}
    real = model.workload_plans

    def spy(arch, workload, keys):
        seen["keys"] = keys
        return real(arch, workload, keys)

    m = get_model("emaxvr")
    rows = [dict(criterion=c) for c in crit] or [{}]
    with mock.patch.object(model, "workload_plans", spy):
        m.evaluate_points("lenet", rows)
    a = np.asarray([r.get("criterion", "time") for r in rows], dtype=object)
    assert sorted({k[-1] for k in seen["keys"]}) == sorted(set(np.isin(a, model.TILE_SEARCH_CRITERIA).tolist()))

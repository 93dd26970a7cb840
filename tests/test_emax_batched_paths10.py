"""EMAX batched paths, tenth round (issue 15): the distinct channel counts of ``mapper._largest_divisor_np`` by a
table; the mapper's reasons as arrays (``ConvTable.rejections_coded``, ``coded_reasons``, ``listed_reasons``), each
reason column's distinct keys by one sort (``mapper._texts_of_keys``) and the one-reason texts gathered at once
(``model._reason_texts``); a chunk's arrays' fields as columns (``mapper.HwList``, ``hw_field``); the LMM fit only
for the input modes a pattern's slots run (``_fits_of_live`` modes); one candidate per (layer, point): no gathers in
the choice; a batch of distinct combinations grouped without a loop; ``_primary`` as nested wheres; one kind's bus
words (``timing._words_of``); the states' link numbers repeated over the phases; ``_SlotMoves._all`` without
gathers. Each fast path is compared with the general one bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model, testing
from archmodels.emax import mapper, timing, traffic
from archmodels.emax import model as em
from archmodels.emax.mapper import Hw, HwList, Indexed

from .test_emax_batched_paths4 import structure_keys
from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths7 import SHAPES
from .test_emax_batched_paths8 import _requests, _table_and_asks
from .test_emax_batched_paths9 import _SPECIAL, _VALUE, _tables

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exact(a, b) -> bool:
    """The same dtype, shape and bits (NaN payloads and signs included)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return a.tolist() == b.tolist() and all(type(x) is type(y) for x, y in zip(a.ravel(), b.ravel()))
    return a.tobytes() == b.tobytes()


# ---------------------------------------------------------------- the mapper
@settings(max_examples=200, deadline=None)
@given(n=st.lists(st.integers(1, 700), min_size=1, max_size=60), data=st.data(), dense=st.booleans())
def test_largest_divisor_by_a_table_of_the_values_equals_the_scalar(n, data, dense):
    """_largest_divisor_np (distinct n by a table of the values, or np.unique above DIVISOR_DENSE_UPTO) gives every
    pair the scalar _largest_divisor, as int64."""
    limit = [data.draw(st.integers(1, 800)) for _ in n]
    with mock.patch.object(mapper, "DIVISOR_DENSE_UPTO", 1 << 16 if dense else 2):
        got = mapper._largest_divisor_np(np.array(n, dtype=np.int64), np.array(limit, dtype=np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == [mapper._largest_divisor(a, b) for a, b in zip(n, limit)]


def test_largest_divisor_of_no_pair():
    assert mapper._largest_divisor_np(np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)


def _per_key(nums, tag, build, memo):
    """The reference: every key looked up (and built) one by one, as _why_texts did."""
    got = []
    for key in zip(*[np.asarray(a).tolist() for a in nums]):
        t = memo.get(tag + key)
        if t is None:
            t = memo[tag + key] = build(key)
        got.append(t)
    return got


_INT = st.one_of(st.integers(-3, 3), st.integers(0, 600), st.integers(-2**62, 2**62), st.sampled_from([0, 1, 2**40]))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 120), k=st.integers(1, 7), kind=st.sampled_from(["int64", "mixed"]),
       warm=st.booleans())
def test_texts_of_keys_equal_the_texts_key_by_key(data, n, k, kind, warm):
    """_texts_of_keys (each distinct key found by one sort of the packed keys, or np.unique over the rows when they
    could overflow; few keys or other dtypes key by key) gives every key the text built from its Python numbers,
    in order, and leaves the memo as key by key does (empty or warm)."""
    cols = [np.array([data.draw(_INT if data.draw(st.booleans()) else st.integers(0, 5)) for _ in range(n)],
                     dtype=np.int64) for _ in range(k)]
    if kind == "mixed" and n:
        cols[0] = cols[0].astype(float)  # (a float column: key by key, its floats in the texts)
    build = lambda key: "|".join(repr(x) for x in key)  # noqa: E731
    memo_a: dict = {}
    memo_b: dict = {}
    if warm and n:
        first = tuple(np.asarray(c[:1]).tolist()[0] for c in cols)
        memo_a[("t",) + first] = memo_b[("t",) + first] = "kept"
    got = mapper._texts_of_keys(cols, ("t",), build, memo_a)
    want = _per_key(cols, ("t",), build, memo_b)
    assert list(got) == want and all(type(t) is str for t in got)
    assert memo_a == memo_b


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), indexed=st.booleans())
def test_coded_rejections_equal_the_listed_ones_and_the_scalar_mapper(seed, arch, indexed):
    """ConvTable.rejections_coded (flags, texts request by request, ends) lists what rejections gives and what the
    scalar mapper gives (conv_candidates' rejected lists), with the distinct keys by a sort or key by key; any
    subset in any order, repeats included; coded_reasons / listed_reasons round-trip."""
    tab, want, js = _table_and_asks(arch, seed, indexed)
    for upto in (1, 1 << 30):  # (every column's keys by a sort; key by key)
        mapper._WHY_TEXTS.clear()
        with mock.patch.object(mapper, "TEXT_KEYS_NUMPY_FROM", upto):
            fits, texts, ends = tab.rejections_coded(js)
            listed = tab.rejections(js)
        assert fits.dtype == bool and texts.dtype == object and ends.dtype == np.int64
        assert len(fits) == len(ends) == len(js) and (len(js) == 0 or ends[-1] == len(texts))
        assert mapper.listed_reasons(fits, texts, ends) == listed == [want[j] for j in js.tolist()]
        back = mapper.coded_reasons(listed)
        assert all(_exact(a, b) for a, b in zip(back, (fits, texts, ends)))


def test_coded_reasons_of_no_answer_and_of_known_answers():
    """No answer: empty arrays of the coded dtypes; a table of few requests (the scalar mapper's answers) codes them."""
    fits, texts, ends = mapper.coded_reasons([])
    assert fits.shape == texts.shape == ends.shape == (0,) and ends.dtype == np.int64 and texts.dtype == object
    assert mapper.listed_reasons(fits, texts, ends) == []
    arr = Hw("emaxv", 5, 4, 64, 0, 4)
    tab = mapper.conv_table("emaxv", SHAPES[:3], [arr] * 3, ["auto"] * 3, ["auto"] * 3)  # (< TABLE_NUMPY_FROM)
    assert tab.known is not None
    assert mapper.listed_reasons(*tab.rejections_coded([2, 0, 2])) == tab.rejections([2, 0, 2])


def _reason_texts_reference(conv, answers):
    out = []
    for c, (fits, rej) in zip(conv.tolist(), answers):
        if fits and c:
            rej += ("no schedule fits the SPM",)
        out.append((rej[0] if len(rej) == 1 else "; ".join(dict.fromkeys(rej))) or "no mapping fits")
    return out


@settings(max_examples=300, deadline=None)
@given(answers=st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(["a", "b", "", "a; b", "no mapping fits"]),
                                                          max_size=4).map(tuple)), max_size=30), data=st.data())
def test_reason_texts_equal_the_pair_by_pair_join(answers, data):
    """_reason_texts (coded, one reason and no addition: the text gathered at once; else, or a list, joined one by
    one) equals the
    former loop of _final_plans: the SPM addition for conv layers with a mapping, repeated reasons once, an empty
    reason list or an empty text as 'no mapping fits'."""
    conv = np.array([data.draw(st.booleans()) for _ in answers], dtype=bool)
    for why in (mapper.coded_reasons(answers), list(answers)):  # (coded: at once; a list: one by one)
        got = em._reason_texts(conv, why)
        assert got.dtype == object and got.tolist() == _reason_texts_reference(conv, answers)


# ---------------------------------------------------------------- a chunk's arrays as columns
@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_hw_list_columns_are_the_arrays_fields(seed, arch):
    """_arrays gives HwLists whose columns (int64, read-only) are every array's fields (the mapper's view: no SPM),
    hw_field reads them (by position through Indexed too) as the objects give them, and _Req / fc_table / the
    reasons' fields built from the columns equal those built from the objects."""
    keys = structure_keys(arch, 50, seed)
    hws, mhws = em._arrays(arch, keys)
    assert isinstance(hws, HwList) and isinstance(mhws, HwList)
    few = em._arrays(arch, keys[:em.HW_COLUMNS_FROM - 1])
    assert all(type(x) is list for x in few) and [vars(h) for h in few[0]] == [vars(h) for h in hws[:len(few[0])]]
    for lst in (hws, mhws):
        for f in mapper.HW_NUMBERS:
            col = lst.numbers[f]
            assert col.dtype == np.int64 and not col.flags.writeable
            assert col.tolist() == [getattr(h, f) for h in lst]
            assert _exact(mapper.hw_field(lst, f), np.array([getattr(h, f) for h in lst], dtype=np.int64))
            assert _exact(mapper.hw_field(list(lst), f), mapper.hw_field(lst, f))
    rng = np.random.default_rng(seed)
    at = rng.integers(0, len(keys), 200)
    shapes = Indexed(SHAPES, rng.integers(0, len(SHAPES), 200))
    for f in mapper.HW_NUMBERS:
        assert _exact(mapper.hw_field(Indexed(mhws, at), f), mapper.hw_field(Indexed(list(mhws), at), f))
    a, b = mapper._Req(shapes, Indexed(mhws, at)), mapper._Req(shapes, Indexed(list(mhws), at))
    assert sorted(vars(a)) == sorted(vars(b)) and all(_exact(v, getattr(b, k)) for k, v in vars(a).items())
    js = rng.integers(0, 200, 50)
    for f in ("rows", "cols", "lmm_bytes"):
        assert _exact(mapper._attr_of(Indexed(mhws, at), js, f), mapper._attr_of(Indexed(list(mhws), at), js, f))
    fc = [s for s in (mapper.shape_of(layer) for layer in __import__("workloads").load_workload("alexnet").layers)
          if isinstance(s, mapper.FCShape)]
    fsh = Indexed(fc, rng.integers(0, len(fc), 200))
    c1, r1 = mapper.fc_table(fsh, Indexed(mhws, at))
    c2, r2 = mapper.fc_table(fsh, Indexed(list(mhws), at))
    assert _exact(r1, r2) and sorted(c1) == sorted(c2) and all(_exact(c1[k], c2[k]) for k in c1)


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_conv_table_of_hw_columns_equals_it_of_the_objects(seed, arch):
    """conv_table over an HwList by position (its columns; the narrower views' too) equals it over the same objects
    as a plain list: every column (dtype, bits), the request of each row, the rejections."""
    keys = structure_keys(arch, 40, seed)
    _, mhws = em._arrays(arch, keys)
    rng = np.random.default_rng(seed)
    n = 300
    at, s_at = rng.integers(0, len(keys), n), rng.integers(0, len(SHAPES), n)
    pats = np.array(["auto"] * n if arch == "emaxv" else
                    [p if not (SHAPES[a].op == "max" and p == "pairs") else "auto"
                     for p, a in zip(rng.choice(["auto", "A", "B", "pairs"], n).tolist(), s_at.tolist())], dtype=object)
    ords = np.array(["auto"] * n, dtype=object)
    t1 = mapper.conv_table(arch, Indexed(SHAPES, s_at), Indexed(mhws, at), pats, ords)
    t2 = mapper.conv_table(arch, Indexed(SHAPES, s_at), Indexed(list(mhws), at), pats, ords)
    assert _exact(t1.req, t2.req) and sorted(t1.cols) == sorted(t2.cols)
    for k in t1.cols:
        assert _exact(t1.cols[k], t2.cols[k]), k
    assert t1.rejections(np.arange(n)) == t2.rejections(np.arange(n))


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16", "resnet50", "alexnet"]))
def test_chunk_plans_from_hw_columns_equal_plans_from_the_objects(seed, arch, wl):
    """A chunk planned from the arrays' columns (HwList) equals it planned from the objects (the columns hidden:
    plain lists): every plan column, label and source row, start, count, fused and missing reasons (criterion=dram
    rows included: tile searches and their narrower views)."""
    keys = structure_keys(arch, 30, seed)
    from workloads import load_workload
    w = load_workload(wl)
    em.workload_plans.cache_clear()
    a = em._workload_plans.__wrapped__(arch, em._Same(em._canonical(w)), keys)
    real = em._arrays
    with mock.patch.object(em, "_arrays", lambda arch, keys: tuple(list(x) for x in real(arch, keys))):
        b = em._workload_plans.__wrapped__(arch, em._Same(em._canonical(w)), keys)
    em.workload_plans.cache_clear()
    assert sorted(a.table.plan) == sorted(b.table.plan)
    for k in a.table.plan:
        assert _exact(a.table.plan[k], b.table.plan[k]), k
    for k in a.table.label:
        assert _exact(a.table.label[k], b.table.label[k]), k
    assert _exact(a.table.src, b.table.src) and _exact(a.start, b.start) and _exact(a.count, b.count)
    assert a.fused_into == b.fused_into and a.reason == b.reason
    assert all(_exact(x, y) for x, y in zip(a.missing, b.missing))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_fits_of_the_modes_asked_equal_the_fits_of_both(seed, arch):
    """_fits_of_live of the modes asked equals those modes of both modes' fits (live subsets and most-live)."""
    n, arrays, s_at, h_at, _, _ = _requests(arch, seed)
    q = mapper._Req([SHAPES[a] for a in s_at], [arrays[b] for b in h_at])
    rng = np.random.default_rng(seed)
    for p in (mapper.PATTERNS_V if arch == "emaxv" else mapper.PATTERNS_VR):
        gpar, ocp, pxp, _ = mapper._geometry_np(p, q)
        for live in (rng.random(n) < 0.2, rng.random(n) < 0.9):
            both = mapper._fits_of_live(p, q, ocp, pxp, live)
            for modes in ((False,), (True,)):
                got = mapper._fits_of_live(p, q, ocp, pxp, live, modes)
                assert list(got) == list(modes)
                assert all(_exact(x, y) for x, y in zip(got[modes[0]], both[modes[0]]))


def test_emaxv_conv_table_fits_no_resident_mode():
    """EMAXV's slots never run resident: conv_table asks _fits_of_live for the rows mode only; EMAXVR asks both."""
    seen = []
    real = mapper._fits_of_live

    def spy(*args):
        seen.append(args[-1])
        return real(*args)

    for arch in ("emaxv", "emaxvr"):
        n, arrays, s_at, h_at, pats, ords = _requests(arch, 3)
        seen.clear()
        with mock.patch.object(mapper, "_fits_of_live", spy):
            mapper.conv_table(arch, [SHAPES[a] for a in s_at], [arrays[b] for b in h_at],
                              np.array(pats, dtype=object), np.array(ords, dtype=object))
        assert seen and all(m == ((False,) if arch == "emaxv" else (False, True)) for m in seen)


# ---------------------------------------------------------------- the choice
class _GatherAlways(timing._Take):
    """timing._Take that always gathers (the general path of every identity shortcut)."""

    def __init__(self, idx, every):
        super().__init__(idx, False)


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), mixed=st.booleans(),
       wl=st.sampled_from(["vgg16-conv", "alexnet"]))
def test_choice_without_gathers_equals_the_gathered_choice(seed, arch, mixed, wl):
    """A batch chosen with the picked values as the pairs' own arrays (one candidate per (layer, point)) gives every
    point the contract dictionary it gets with every pick gathered by position (random points of the declared
    space, and mixed: small arrays, criterion=dram, layers without a plan, several candidates)."""
    m = get_model(arch)
    n = 200 if arch == "emaxv" else 40
    rows = _rows(arch, n, seed) if mixed else m.params.random_rows(n, np.random.default_rng(seed))
    em.workload_plans.cache_clear()
    fast = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    with mock.patch.object(em.timing, "_Take", _GatherAlways):
        slow = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr"])
def test_batches_with_repeated_and_distinct_combinations_equal_each_point_alone(arch):
    """The grouping of a batch's points by combination: every point distinct (no loop) and points sharing
    combinations (the loop), each point as it is alone (archmodels.testing.assert_alone_equals_batch)."""
    m = get_model(arch)
    rows = m.params.random_rows(30, np.random.default_rng(7))
    testing.assert_alone_equals_batch(m, "alexnet", rows)  # (all distinct)
    twice = rows[:10] + [dict(r, clock_mhz=r["clock_mhz"] * 0.9) for r in rows[:10]] + rows[:5]
    testing.assert_alone_equals_batch(m, "alexnet", twice)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n=st.integers(0, 40))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_primary_as_nested_wheres_equals_np_select(data, n):
    """_primary of per-pair criteria (object arrays) equals np.select of the same choices (NaN, infinities, -0.0)."""
    crit = np.array([data.draw(st.sampled_from(em.CRITERIA)) for _ in range(n)], dtype=object)
    t, e, d = (np.array([data.draw(st.one_of(_SPECIAL, st.floats(-1e6, 1e6))) for _ in range(n)], dtype=float)
               for _ in range(3))
    want = np.select([crit == "energy", crit == "dram", crit == "edp"], [e, d, e * t], t)
    assert _exact(em._primary(crit, t, e, d), want)
    for c in em.CRITERIA:
        assert _exact(em._primary(c, t, e, d), np.select([np.full(n, c == "energy"), np.full(n, c == "dram"),
                                                          np.full(n, c == "edp")], [e, d, e * t], t))


# ---------------------------------------------------------------- timing
@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(0, 30), weight=st.sampled_from([0.0, 1.0]))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_words_of_one_kind_equal_words(data, n, weight):
    """_words_of (one kind: only its branch) equals words() with the kind as a number, bit for bit (NaN, inf)."""
    each = np.array([data.draw(_VALUE) for _ in range(n)], dtype=float)
    bus = np.array([data.draw(st.sampled_from([4.0, 8.0, 16.0, 64.0])) for _ in range(n)], dtype=float)
    elem = np.array([data.draw(st.sampled_from([2.0, 4.0])) for _ in range(n)], dtype=float)
    assert _exact(timing._words_of(each, weight, bus, elem), timing.words(each, weight, bus, elem))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, 2, 5, 20, 64, 70]), n_pts=st.integers(1, 4), variants=st.sampled_from([(True, False), (True,),
                                                                                                  (False,)]))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_states_with_link_numbers_repeated_equal_them_gathered_per_phase(data, n, n_pts, variants):
    """_states (each pair's link numbers gathered once and repeated over its phases) gives the transfer phases'
    cycles the numbers gathered per phase give, bit for bit (LOAD, DRAIN, the overlapped totals; -0.0 included: a
    broadcast operand's maximum of 0.0 and -0.0 differed)."""
    nph = len(traffic.PHASES)
    vals = lambda m: np.array([data.draw(_VALUE) for _ in range(m)], dtype=float)  # noqa: E731
    flows = {"work": vals(n * nph), "longest": vals(n * nph), "dram_c": vals(n * nph), "spm_c": vals(n * nph),
             "_dram_read": vals(n), "_dram_write": vals(n), "staged": vals(n * nph), "dram_r": vals(n * nph),
             "spm_r": vals(n * nph)}
    pick = lambda xs: np.array([data.draw(st.sampled_from(xs)) for _ in range(n_pts)], dtype=float)  # noqa: E731
    link = em.Link(pick([50.0, 240.0]), pick([32.0, 128.0]), pick([0.1, 17.0]), pick([0.0, 62.5]), pick([0.1, 15.36]),
                   pick([0.0, 4.0]), pick([2.0, 4.0]), pick([2.0, 4.0, 16.0]))
    pts = np.array([data.draw(st.integers(0, n_pts - 1)) for _ in range(n)], dtype=np.int64)
    plan = {k: vals(n) for k in timing._STATE_COLS}
    tab = traffic.PlanTable(plan, {}, np.arange(n), ())
    got = timing._states(tab, np.arange(n), pts, link, variants, flows)
    with mock.patch.object(timing, "STATES_REPEAT_FROM", 1 << 30):
        few = timing._states(tab, np.arange(n), pts, link, variants, flows)
    ptr = np.repeat(pts, nph)
    for v, st_, st_few in zip(variants, got, few):
        assert sorted(st_) == sorted(st_few) and all(_exact(st_[k], st_few[k]) for k in st_)
        dram_b, spm_b = ((flows["dram_c"], flows["spm_c"]) if v else
                         (flows["dram_r"] + flows["staged"], flows["spm_r"] + flows["staged"]))
        bus_c = np.maximum(flows["work"] / link.cols[ptr], flows["longest"])
        ph = np.maximum(np.maximum(bus_c, dram_b / link.dram_bpc[ptr]), spm_b / link.spm_bpc[ptr]).reshape(n, nph)
        for k, j in (("LOAD", 0), ("DRAIN", 1), ("_pload_total", 2), ("_pdrain_total", 3)):
            assert _exact(st_[k], ph[:, j]), k


# ---------------------------------------------------------------- traffic
@pytest.mark.parametrize("arch,wl", [("emaxv", "vgg16-conv"), ("emaxvr", "vgg16")])
def test_slot_moves_of_every_plan_equal_the_general_take(arch, wl):
    """_SlotMoves._all (the slot columns as they are) equals take of every row (gathered): every matrix's dtype,
    shape and bits, for the builder tables of random batches (conv, pooling, FC)."""
    seen = 0
    for tab in _tables(arch, wl, 300 if arch == "emaxv" else 40, 11):
        for block, _ in tab.moves:
            if not isinstance(block, traffic._SlotMoves):
                continue
            seen += 1
            a, b = block._all, block.take(np.arange(block.n))
            for f in traffic._Moves.__dataclass_fields__:
                assert _exact(getattr(a, f), getattr(b, f)), f
    assert seen


@settings(SLOW, max_examples=4)  # (four evaluations an example; the suite's budget)
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), mixed=st.booleans(),
       wl=st.sampled_from(["vgg16-conv", "alexnet", "resnet50"]))
def test_results_cube_without_a_nan_fill_equals_it_filled(seed, arch, mixed, wl):
    """_Results' cube is not filled with NaN first: the chunks write every cell of every key (run, fused, or without
    a plan: every (layer, point) marked done before the layers are read), so a cube holding any value first (a
    sentinel, NaN) gives every point the same contract dictionary; small chunks (several per batch) too; a small
    batch's cube filled with NaN first (CUBE_FILL_UPTO) as well."""
    m = get_model(arch)
    n = 120 if arch == "emaxv" else 30
    rows = _rows(arch, n, seed) if mixed else m.params.random_rows(n, np.random.default_rng(seed))
    real_init, real_batches = em._Results.__init__, em._Results.batches
    seen = []

    def filled(value):
        def init(self, nl, n):
            real_init(self, nl, n)
            self.cube[...] = value
        return init

    def batches(self, layers):
        seen.append(self.filled or bool(self.done.all()))
        return real_batches(self, layers)

    out = []
    for value, chunk, fill_upto in ((np.nan, None, 1 << 62), (12345.0, None, -1), (-0.0, 8, -1), (7.0, None, 512)):
        em.workload_plans.cache_clear()
        with mock.patch.object(em._Results, "__init__", filled(value) if fill_upto < 0 else real_init), \
                mock.patch.object(em._Results, "batches", batches), mock.patch.object(em, "CUBE_FILL_UPTO", fill_upto), \
                mock.patch.dict(em.CHUNK_OF, {arch: chunk or em.CHUNK_OF.get(arch, em.CHUNK)}):
            r = m.evaluate_points(wl, rows)
        out.append([_dump(r.point(i)) for i in range(r.n)])
    em.workload_plans.cache_clear()
    assert all(seen) and out[0] == out[1] == out[2] == out[3]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_conv_table_of_knobs_as_text_equals_it_of_objects(seed, arch):
    """conv_table with the pattern and loop-order knobs as fixed-width text (compared in C, as _mapping_rows gathers
    them) equals it with the knobs as objects: every column, the request of each row, the rejections."""
    n, arrays, s_at, h_at, pats, ords = _requests(arch, seed)
    sh, hw = Indexed(SHAPES, s_at), Indexed(arrays, h_at)
    t1 = mapper.conv_table(arch, sh, hw, np.array(pats), np.array(ords))
    t2 = mapper.conv_table(arch, sh, hw, np.array(pats, dtype=object), np.array(ords, dtype=object))
    assert _exact(t1.req, t2.req) and sorted(t1.cols) == sorted(t2.cols)
    for k in t1.cols:
        assert _exact(t1.cols[k], t2.cols[k]), k
    assert t1.rejections(np.arange(n)) == t2.rejections(np.arange(n))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n=st.integers(0, 12), widths=st.lists(st.integers(0, 5), min_size=1, max_size=3),
       dtype=st.sampled_from([bool, float]))
def test_hcat_equals_concatenate(data, n, widths, dtype):
    """_hcat (column-major) equals np.concatenate(axis=1): shape, dtype, values."""
    mats = [np.array([[data.draw(st.booleans() if dtype is bool else _VALUE) for _ in range(w)] for _ in range(n)],
                     dtype=dtype).reshape(n, w) for w in widths]
    got, want = traffic._hcat(mats), np.concatenate(mats, axis=1)
    assert got.flags.f_contiguous and _exact(np.ascontiguousarray(got), want)

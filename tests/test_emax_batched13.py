"""EMAX batched paths, thirteenth round (issue 15): a chunk's arrays (``mapper.HwList``) from columns converted by numpy,
their ``Hw`` objects built only when read (``model._arrays``; the narrower tiles' views and the fused-pooling requests
by position too); the DRAM reads' total kind by kind in the block's order when each kind's columns are contiguous
(``timing._kind_blocks`` in ``_dense_reads``); object arrays filled by ``ndarray.fill`` (``num.objects``) instead of
``np.full``; the knobs and array fields read from the keys by ``itemgetter``. Each compared with the general path (the
code before this round) bit for bit."""

from __future__ import annotations

import dataclasses
import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper, timing, traffic
from archmodels.emax import model as em
from archmodels.emax.mapper import HwList, Indexed

from .test_emax_batched_paths4 import structure_keys
from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths9 import _bits_equal, _blocks
from .test_emax_batched_paths11 import _chosen_tables, _evaluate_spied

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- the arrays: columns, objects when read
def _listed_reference(arch: str, keys) -> tuple[list, list]:
    """``_arrays`` as it was before this round: every object built field by field from its key (one loop)."""
    hws, mhws = [], []
    for key in keys:
        rows, cols, lmm_kb, spm_kb, bits = key[:5]
        rows, cols, lmm, bits, cap, search = int(rows), int(cols), int(round(lmm_kb * 1024)), int(bits), \
            int(key[13]), int(bool(key[14]))
        spm = int(round(spm_kb * 1024))
        hw = mapper.new_hw(arch, rows, cols, lmm, spm, bits // 8, cap, search)
        hws.append(hw)
        mhws.append(hw if spm == 0 else mapper.new_hw(arch, rows, cols, lmm, 0, bits // 8, cap, search))
    return hws, mhws


def _same_objects(a, b) -> bool:
    """The same fields, values and types, in the same order."""
    return list(vars(a).items()) == list(vars(b).items()) and \
        [type(v) for v in vars(a).values()] == [type(v) for v in vars(b).values()]


@st.composite
def _keys(draw):
    """Structure keys of random points, some fields replaced by awkward values: LMM and SPM sizes at exact halves of
    a byte (round half to even), no SPM, 8/16/32-bit data, channel caps, tile searches, as Python numbers of the
    types the points give (ints, floats, bools)."""
    arch = draw(st.sampled_from(["emaxv", "emaxvr"]))
    keys = [list(k) for k in structure_keys(arch, draw(st.integers(em.HW_COLUMNS_FROM, 60)), draw(st.integers(0, 999)))]
    for k in keys:
        if draw(st.booleans()):
            k[2] = draw(st.integers(1, 4096)) / 2048 + draw(st.sampled_from([0.0, 1.0, 64.0]))  # (x.5 bytes)
        if draw(st.booleans()):
            k[3] = draw(st.sampled_from([0.0, 0.0, 1 / 2048, 3 / 2048, 128.0, 65536.0]))
        if draw(st.booleans()):
            k[4] = draw(st.sampled_from([8, 16, 32]))
        if draw(st.booleans()):
            k[13] = draw(st.integers(0, 64))
        if draw(st.booleans()):
            k[14] = draw(st.booleans())
    return arch, tuple(tuple(k) for k in keys)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_keys(), data=st.data())
def test_arrays_built_when_read_equal_the_listed_objects(case, data):
    """_arrays from HW_COLUMNS_FROM combinations: nothing built before a read; each object, read in any order (by
    position, negative, numpy integers, slices, iteration), equals the former loop's (fields, values, types), the
    mapper's view is the array itself exactly where it has no SPM, and the columns are the objects' fields."""
    arch, keys = case
    hws, mhws = em._arrays(arch, keys)
    want_h, want_m = _listed_reference(arch, keys)
    assert isinstance(hws, HwList) and isinstance(mhws, HwList) and len(hws) == len(mhws) == len(keys)
    assert hws._objs.count(None) == mhws._objs.count(None) == len(keys)  # (nothing built yet)
    assert hws.arch == mhws.arch == arch
    n = len(keys)
    order = data.draw(st.permutations(range(n)))
    for k in order[: n // 2]:
        how = data.draw(st.sampled_from(["int", "neg", "np", "slice"]))
        at = {"int": k, "neg": k - n, "np": np.int64(k), "slice": slice(k, k + 1)}[how]
        lst = data.draw(st.sampled_from(["hws", "mhws"]))
        got = (hws if lst == "hws" else mhws)[at]
        got = got[0] if how == "slice" else got
        assert _same_objects(got, (want_h if lst == "hws" else want_m)[k])
    for lst, want in ((hws, want_h), (mhws, want_m)):  # (the rest when iterated)
        assert all(_same_objects(a, b) for a, b in zip(list(lst), want, strict=True))
        assert all(hash(a) == hash(b) and a == b for a, b in zip(lst, want))
        for f in mapper.HW_NUMBERS:
            col = lst.numbers[f]
            assert col.dtype == np.int64 and not col.flags.writeable and col.tolist() == [getattr(h, f) for h in want]
    assert [mhws[k] is hws[k] for k in range(n)] == [want_m[k] is want_h[k] for k in range(n)]
    assert hws[-1] is hws[n - 1] and hws[::-1] == list(hws)[::-1]
    with pytest.raises(IndexError):
        hws[n]


def test_hw_list_of_given_objects_and_its_architecture():
    """An HwList of given objects keeps them (the same objects) and names their one architecture (None for two:
    _archs then reads the objects); _archs of a lazy list builds nothing."""
    keys = structure_keys("emaxv", 20, 3)
    objs, _ = _listed_reference("emaxv", keys)
    lst = HwList(objs, {f: np.array([getattr(h, f) for h in objs], np.int64) for f in mapper.HW_NUMBERS})
    assert lst.arch == "emaxv" and all(a is b for a, b in zip(lst, objs)) and lst[3] is objs[3]
    other = dataclasses.replace(objs[0], arch="emaxvr")
    two = HwList([other] + objs[1:], lst.numbers)
    assert two.arch is None
    assert list(mapper._archs(two, np.array([0, 1, 0]))) == ["emaxvr", "emaxv", "emaxvr"]
    lazy, _ = em._arrays("emaxv", keys)
    assert list(mapper._archs(Indexed(lazy, np.array([4, 2])), np.array([1, 0, 1]))) == ["emaxv"] * 3
    assert lazy._objs.count(None) == len(keys)


def test_a_random_emaxv_batch_builds_no_array_objects_and_equals_the_objects_path():
    """A random EMAXV batch reads the arrays' columns only (no Hw object built) and gives the contract dictionaries
    of the same batch planned from plain lists of objects (the former loop)."""
    built = []
    real = mapper.new_hw

    def spy(*args):
        built.append(args)
        return real(*args)

    rows = get_model("emaxv").params.random_rows(150, np.random.default_rng(4))
    _evaluate_spied(mapper, "new_hw", spy, "emaxv", "vgg16-conv", rows)
    assert not built
    m = get_model("emaxv")
    em.workload_plans.cache_clear()
    fast = m.evaluate_points("vgg16-conv", rows)
    with mock.patch.object(em, "_arrays", _listed_reference):
        em.workload_plans.cache_clear()
        slow = m.evaluate_points("vgg16-conv", rows)
    em.workload_plans.cache_clear()
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16", "alexnet", "resnet50"]))
def test_a_batch_from_lazy_arrays_equals_it_from_the_former_objects(seed, arch, wl):
    """Mixed points (small arrays with reasons, criterion=dram: the narrower tiles' views, fused pooling): the
    contract dictionaries planned from the lazy columns equal those planned from the former loop's plain lists."""
    rows = _rows(arch, 40, seed)
    m = get_model(arch)
    em.workload_plans.cache_clear()
    fast = m.evaluate_points(wl, rows)
    with mock.patch.object(em, "_arrays", _listed_reference):
        em.workload_plans.cache_clear()
        slow = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]


def test_narrower_tiles_views_and_pooling_requests_by_position():
    """EMAXVR under criterion=dram with an SPM smaller than a layer: the mapper's views (the arrays, then the
    narrower tiles' ones) are a lazy HwList whose view nk + k is the array itself or ``replace(array,
    tile_search=2)`` exactly where it asks the narrower tiles; fused pooling's requests name the arrays by
    position (Indexed over the HwList). Both happen."""
    seen = []
    real = em.conv_table

    def spy(arch, shapes, hws, patterns, orders):
        seen.append(hws)
        return real(arch, shapes, hws, patterns, orders)

    rows = get_model("emaxvr").params.random_rows(60, np.random.default_rng(2))
    for r in rows:
        r.update(criterion="dram", spm_kb=float(r["spm_kb"]) % 96.0 + 32.0, pool_fusion=True)
    _evaluate_spied(em, "conv_table", spy, "emaxvr", "vgg16", rows)
    views = [h.objs for h in seen if isinstance(h, Indexed) and isinstance(h.objs, HwList)]
    wide = [v for v in views if v._from is not None and len(v) == 2 * len(v._base)]
    assert wide and len(views) > len(wide)  # (the narrower views; the pooling requests over the mapper's view)
    for v in wide:
        nk, base = len(v._base), v._base
        asks = v.numbers["tile_search"][nk:] == 2
        assert asks.any() and not (base.numbers["tile_search"] == 2).any()
        for k in range(2 * nk):
            if k < nk or not asks[k - nk]:
                assert v[k] is base[k % nk]
            else:
                assert _same_objects(v[k], dataclasses.replace(base[k - nk], tile_search=2))


# ---------------------------------------------------------------- the DRAM reads' total in the blocks' order
def _kinds_contiguous(draw, n_cols: int) -> list[int]:
    """A column kind sequence where each kind's columns are contiguous (kinds in any order)."""
    kinds = draw(st.permutations(range(len(traffic.KINDS))))
    cuts = sorted(draw(st.lists(st.integers(0, n_cols), min_size=len(kinds) - 1, max_size=len(kinds) - 1)))
    return [k for k, a, b in zip(kinds, [0] + cuts, cuts + [n_cols]) for _ in range(b - a)]


def _reads_by_order(b, pts, link):
    """_dense_reads with each plan's first-named order (the former way)."""
    with mock.patch.object(timing, "_kind_blocks", lambda b: None):
        return timing._dense_reads(b, pts, link)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_blocks(), data=st.data())
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_dense_reads_in_the_blocks_order_equal_each_plans_order(case, data):
    """Blocks whose kinds' columns are contiguous (any kinds, any order, reads and host reads): the total kind by
    kind in the blocks' order (_kind_blocks) equals the total in each plan's first-named order bit for bit (NaN
    payloads and signs, -0.0, infinities, unused columns holding any value); the kinds' bytes unchanged."""
    tab, pts, link = case
    b = tab.moves[0][0]
    n_rd, n_h = b.rd_on.shape[1], b.h_on.shape[1]
    kinds = _kinds_contiguous(data.draw, n_rd + n_h)
    b = dataclasses.replace(b, rd_kind=np.array(kinds[:n_rd], np.int64), h_kind=np.array(kinds[n_rd:], np.int64))
    runs = timing._kind_blocks(b)
    assert runs == [k for k, _ in itertools.groupby(kinds)]
    got, want = timing._dense_reads(b, pts, link), _reads_by_order(b, pts, link)
    assert got[0].tobytes() == want[0].tobytes() and got[0].shape == want[0].shape
    assert got[1].tobytes() == want[1].tobytes() and got[1].shape == want[1].shape


#: bytes whose sums depend on their order: (1 + 1e16) + 1 rounds twice to 1e16, (1 + 1) + 1e16 is 1e16 + 2; NaN of
#: both signs (x86 keeps the first operand's), infinities of both signs, -0.0
_ORDERED = st.sampled_from([1.0, 1.0, 3.0, 1e16, 2.0**53, -1e16, np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0])


@st.composite
def _host_blocks(draw):
    """A block of plans reading by host columns only (its one transfer column unused), each kind's columns
    contiguous, named by any plans, holding bytes whose sum depends on the order (:data:`_ORDERED`)."""
    n, n_h = draw(st.integers(1, 12)), draw(st.integers(1, 8))
    kinds = _kinds_contiguous(draw, 1 + n_h)
    flags = np.array(draw(st.lists(st.booleans(), min_size=n * n_h, max_size=n * n_h)), bool).reshape(n, n_h)
    vals = np.array(draw(st.lists(_ORDERED, min_size=n * n_h, max_size=n * n_h)), float).reshape(n, n_h)
    one, no = np.ones((n, 1)), np.zeros((n, 1), bool)
    return traffic._Moves(no, np.zeros(1, np.int64), np.zeros(1, bool), one, one, one, no, no, one, one,
                          np.array(kinds[:1], np.int64), flags, vals, np.array(kinds[1:], np.int64))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=_host_blocks())
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_dense_reads_total_is_each_plans_first_named_order(b):
    """The total of a block read in the blocks' order equals, bit for bit, each plan's kinds summed from 0.0 in
    the order it first names them (its bytes per kind from 0.0 in column order), computed here in Python numbers
    (NaN of either sign where two NaN meet in a kind's own sum: numpy's loop there, unchanged, may keep the other
    one), and exactly the former way (each plan's order gathered)."""
    link = em.Link(np.array([200.0]), np.array([64.0]), np.array([12.8]), np.array([62.5]), np.array([15.36]),
                   np.array([4.0]), np.array([2.0]), np.array([8.0]))
    pts = np.zeros(len(b.h_on), np.int64)
    assert timing._kind_blocks(b) is not None
    by_kind, total = timing._dense_reads(b, pts, link)
    want = []
    for on, vals in zip(b.h_on.tolist(), b.h_bytes.tolist()):
        got, first = {}, []
        for j, kind in enumerate(b.h_kind.tolist()):
            if on[j]:
                got[kind] = got.get(kind, 0.0) + vals[j]
                first += [kind] if kind not in first else []
        t = 0.0
        for kind in first:
            t = t + got[kind]
        want.append(t)
    assert _bits_equal(total, np.array(want, float))  # (NaN of either sign: numpy's by-kind sums, as before)
    assert total.tobytes() == _reads_by_order(b, pts, link)[1].tobytes()  # (exactly)


@st.composite
def _wide_kinds(draw):
    """The blocks of ``test_emax_batched_paths11._wide_blocks`` (the same sizes and kinds, drawn alike) with zeros for the flags and
    bytes, which :func:`timing._kind_blocks` does not read: drawing up to 30 x 40 values one by one was 8 s of the
    suite for a property of the kinds alone."""
    n = draw(st.integers(1, 30))
    ns, n_st, n_h = draw(st.integers(1, 24)), draw(st.integers(0, 8)), draw(st.integers(0, 8))
    rd_kind = np.array(draw(st.lists(st.integers(0, 4), min_size=ns + n_st, max_size=ns + n_st)), dtype=np.int64)
    h_kind = np.array(draw(st.lists(st.integers(0, 4), min_size=n_h, max_size=n_h)), dtype=np.int64)
    on, x = (lambda cols: np.zeros((n, cols), bool)), (lambda cols: np.zeros((n, cols)))
    return traffic._Moves(on(ns), np.zeros(ns, np.int64), np.zeros(ns, bool), x(ns), x(ns), x(ns), on(ns),
                          on(ns + n_st), x(ns + n_st), x(ns + n_st), rd_kind, on(n_h), x(n_h), h_kind)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(b=_wide_kinds())
def test_kind_blocks_only_for_contiguous_kinds(b):
    """_kind_blocks names the kinds' runs exactly when no kind's columns are split (else None: each plan's order)."""
    kinds = b.rd_kind.tolist() + b.h_kind.tolist()
    runs = [k for k, _ in itertools.groupby(kinds)]
    assert timing._kind_blocks(b) == (runs if len(set(runs)) == len(runs) else None)


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 300, 2), ("emaxv", "alexnet", 120, 3),
                                            ("emaxvr", "alexnet", 40, 4), ("emaxvr", "vgg16", 30, 6)])
def test_chosen_plans_reads_in_the_blocks_order_equal_each_plans_order(arch, wl, n, seed):
    """Every block of a batch's choice (EMAXV's conv blocks, EMAXVR's FC blocks take the blocks' order; EMAXVR's
    conv blocks do not): pair_dram_reads' kinds and total equal those in each plan's first-named order."""
    fast = 0
    for tab, rows, pts, link in _chosen_tables(arch, wl, n, seed):
        for b, _ in tab.moves:
            if not isinstance(b, traffic._Moves):
                continue
            some = np.arange(len(b.rd_on))
            p = pts[: len(some)] if len(pts) >= len(some) else np.resize(pts, len(some))
            got, want = timing._dense_reads(b, p, link), _reads_by_order(b, p, link)
            assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
            fast += timing._kind_blocks(b) is not None
    assert fast


# ---------------------------------------------------------------- object arrays filled once
def test_results_object_arrays_equal_np_full():
    """_Results' reasons and labels, a text column's fixed values and a chunk's fused names: object arrays of the
    same values and types as np.full gave (one shared object per array, equal to np.full's)."""
    out = em._Results(5, 700)
    assert out.reason.dtype == object and out.reason.shape == (5, 700)
    assert out.reason.tolist() == np.full((5, 700), "", dtype=object).tolist()
    for k, v in out.labels.items():
        assert v.dtype == object and v.tolist() == np.full((5, 700), None, dtype=object).tolist(), k
    for k, t in out.texts.items():
        assert t.fixed.dtype == object and t.fixed.tolist() == [[None] * 700] * 5, k
    m = get_model("emaxv")
    pts = m.params.points(m.params.random_rows(40, np.random.default_rng(1)))
    cols = [pts[k] if k in pts else em.num.objects(40, em._STRUCT_DEFAULTS[k]) for k in em.STRUCT[:-1]]
    want = [pts[k] if k in pts else np.full(40, em._STRUCT_DEFAULTS[k], dtype=object) for k in em.STRUCT[:-1]]
    assert [[(type(x), x) for x in c.tolist()] for c in cols] == [[(type(x), x) for x in c.tolist()] for c in want]


# ---------------------------------------------------------------- chunks of equal size, the criteria's codes
@settings(max_examples=300, deadline=None)
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), n_keys=st.integers(0, 20000), n_layers=st.integers(1, 200),
       slack=st.sampled_from([0.0, 0.1, 0.25, 1.0]))
def test_chunk_step_gives_the_fewest_chunks_within_the_slack(arch, n_keys, n_layers, slack):
    """_chunk_step: without slack (EMAXVR) the CHUNK_OF / CHUNK step; with it, chunks of at most (1 + slack) x that
    step, as few as fit, as equal as they come; a batch within one step stays one chunk."""
    base = max(1, em.CHUNK_OF.get(arch, em.CHUNK) // n_layers)
    with mock.patch.dict(em.CHUNK_SLACK_OF, {arch: slack}, clear=True):
        step = em._chunk_step(arch, n_keys, n_layers)
    if slack == 0 or n_keys <= base:
        assert step == base
        return
    cap = max(1, int(base * (1 + slack)))
    sizes = [min(step, n_keys - lo) for lo in range(0, n_keys, step)]
    assert max(sizes) <= cap and len(sizes) == -(-n_keys // cap) and max(sizes) - min(sizes) <= len(sizes)
    assert em._chunk_step("emaxvr", n_keys, n_layers) == max(1, em.CHUNK_OF.get("emaxvr", em.CHUNK) // n_layers)


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), per_chunk=st.integers(3, 9),
       slack=st.sampled_from([0.25, 1.0, 3.0]))
def test_a_batch_in_equal_chunks_equals_it_in_the_plain_ones(seed, arch, per_chunk, slack):
    """A batch planned in chunks grown by the slack (fewer, equal) gives every point the contract dictionary it gets
    in CHUNK_OF's chunks (mixed points: reasons, tile searches, fused pools)."""
    m = get_model(arch)
    rows = _rows(arch, 31, seed)
    n_layers = len(m.evaluate_points("alexnet", rows[:1]).layers)
    out = []
    for s in (0.0, slack):
        with mock.patch.dict(em.CHUNK_OF, {arch: per_chunk * n_layers}), \
                mock.patch.dict(em.CHUNK_SLACK_OF, {arch: s}, clear=True):
            em.workload_plans.cache_clear()
            b = m.evaluate_points("alexnet", rows)
            out.append([_dump(b.point(i)) for i in range(b.n)])
    em.workload_plans.cache_clear()
    assert out[0] == out[1]


@settings(max_examples=200, deadline=None)
@given(crit=st.lists(st.sampled_from(["time", "energy", "dram", "edp", "time_then_dram"]), min_size=1, max_size=60))
def test_criterion_codes_in_order_of_first_appearance(crit):
    """_PointConsts.criterion_codes (by dict.fromkeys and a map) equals the former setdefault loop."""
    pp = em._PointConsts.__new__(em._PointConsts)
    pp.criterion = np.array(crit, dtype=object)
    names, code = pp.criterion_codes
    want: dict[str, int] = {}
    want_code = np.array([want.setdefault(c, len(want)) for c in crit], dtype=np.int64)
    assert names == list(want) and code.dtype == np.int64 and code.tolist() == want_code.tolist()


# ---------------------------------------------------------------- the chaining's statistics when read
def _stats_reference(p) -> tuple:
    """The chaining's statistics as _context_plans computed them before this round (eagerly, the same branches)."""
    column = p.table.column if isinstance(p.table, em.Concat) else p.table.plan.__getitem__
    seg, nseg, stats = p.segment, p.n_seg, []
    for sel in (np.ones(len(seg), bool), p.chainable):
        s, m, d = seg[sel], column("macs")[sel], column("dram_exact")[sel]
        n_sel = np.bincount(s, minlength=nseg + 1)[:nseg]
        macs, dram = np.full(nseg + 1, -np.inf), np.full(nseg + 1, np.inf)
        if p.runs and len(s):
            at = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
            macs[s[at]] = np.maximum(macs[s[at]], np.maximum.reduceat(m, at))
            dram[s[at]] = np.minimum(dram[s[at]], np.minimum.reduceat(d, at))
        else:
            np.maximum.at(macs, s, m)
            np.minimum.at(dram, s, d)
        stats += [n_sel, macs[:nseg], dram[:nseg]]
    return tuple(stats)


def _context_plans_of(arch: str, wl: str, n: int, seed: int) -> list:
    """Every _context_plans result of one batch of ``n`` random points (``_rows``; one point: a random row)."""
    got = []
    real = em._context_plans

    def spy(*args):
        out = real(*args)
        got.append(out)
        return out

    _evaluate_spied(em, "_context_plans", spy, arch, wl, _rows(arch, n, seed) if n > 1 else
                    get_model(arch).params.random_rows(1, np.random.default_rng(seed)))
    return got


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxvr", "vgg16", 30, 1), ("emaxvr", "alexnet", 20, 2),
                                            ("emaxvr", "vgg16", 1, 3), ("emaxv", "vgg16", 60, 4)])
def test_chaining_statistics_when_read_equal_them_computed_at_once(arch, wl, n, seed):
    """_Planned's statistics (counts, largest MACs, least DRAM bytes over all and chainable plans per segment),
    computed when the chaining reads them, equal the former eager computation bit for bit; an EMAXV chunk (no SPM,
    no chaining) never computes them, an EMAXVR one always does."""
    got = _context_plans_of(arch, wl, n, seed)
    assert got
    for p in got:
        assert ("_stats" in vars(p)) == (arch == "emaxvr")
        want = _stats_reference(p)
        names = ("n_all", "macs_all", "dram_all", "n_chain", "macs_chain", "dram_chain")
        for name, w in zip(names, want):
            v = getattr(p, name)
            assert v.dtype == w.dtype and v.tobytes() == w.tobytes(), name
        assert p.lists == tuple(a.tolist() for a in want)


# ---------------------------------------------------------------- one candidate per point: the runner-up
_CHOICE_VALUE = st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-12, 2.5, 1e300, np.inf, -np.inf, np.nan, -np.nan])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(0, 40), crit=st.sampled_from(["time", "energy", "dram", "edp", "mixed"]))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_runner_up_of_one_candidate_equals_the_pairs_path(data, n, crit):
    """runner_up with one candidate per point (its shortcut: ``_close(x, x)`` as ``~isnan(x)``) equals the general
    _runner_up_pairs bit for bit (NaN, infinities, -0.0, every criterion, a given primary or not)."""
    arr = lambda: np.array(data.draw(st.lists(_CHOICE_VALUE, min_size=n, max_size=n)), dtype=float)
    t, e, d = arr(), arr(), arr()
    c = (np.array(data.draw(st.lists(st.sampled_from(["time", "energy", "dram", "edp"]), min_size=n, max_size=n)),
                  dtype=object) if crit == "mixed" else crit)
    start, pick = np.arange(n), np.arange(n)
    by = em._primary(c, t, e, d) if data.draw(st.booleans()) else None
    got = em.runner_up(c, t, e, d, start, pick, by)
    want = em._runner_up_pairs(c, t, e, d, start, pick, by)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    for x in (t, e, d):
        assert np.array_equal(em._close(x, x), ~np.isnan(x))


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 200, 1), ("emaxv", "alexnet", 1, 2),
                                            ("emaxvr", "vgg16", 30, 3), ("emaxvr", "alexnet", 1, 4)])
def test_segment_starts_without_a_sort_equal_np_unique(arch, wl, n, seed):
    """_context_plans' segment starts and ``runs`` flag from the counts when the segments come in order (EMAXV's
    builder; a sort, as before, otherwise: EMAXVR's batches) equal those of np.unique's first occurrences; both
    branches happen."""
    got = _context_plans_of(arch, wl, n, seed)
    in_order = []
    for p in got:
        seg, nseg = p.segment, p.n_seg
        start = np.zeros(nseg + 1, dtype=np.int64)
        first, at = np.unique(seg, return_index=True)
        start[first] = at
        assert p.start.dtype == np.int64 and p.start.tobytes() == start[:nseg].tobytes()
        assert p.runs == (len(seg) >= em.REDUCEAT_FROM and int(np.count_nonzero(seg[1:] != seg[:-1])) + 1 == len(first))
        in_order.append(bool(len(seg)) and not (seg[1:] < seg[:-1]).any())
    assert all(in_order) if arch == "emaxv" else (not all(in_order) if n > 1 else True)

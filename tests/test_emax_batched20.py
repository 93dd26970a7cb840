"""EMAX batched, nineteenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit, on real blocks with NaN of both signs, -0.0 and infinities planted."""

from __future__ import annotations

from contextlib import ExitStack
from functools import lru_cache
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels.emax import mapper
from archmodels.emax import model as em
from archmodels.emax import timing as tm
from archmodels.emax import traffic
from archmodels.emax.traffic import KINDS, PHASES

from .test_emax_batched16 import _everything, _same
from .test_emax_batched17 import _random_rows

_ODD = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1e308, 5e-324, 3.0]


def _bits(a) -> bytes:
    a = np.asarray(a)
    assert a.dtype == np.float64
    return a.tobytes()


# ------------------------------------------------------------------ the oracles: the code before this round
def _dense_flows_former(b, host: np.ndarray, pts: np.ndarray, link,
                 variants: tuple[bool, ...], always: bool = False) -> dict[str, np.ndarray]:
    n, nph = len(pts), len(PHASES)
    ns = len(b.phase)
    bus, elem = link.at(link.bus_bytes, pts), link.at(link.elem, pts)
    lat_d, lat_s = link.lat_dram[pts], link.lat_spm[pts]
    choice, report = True in variants, False in variants
    work, dram_x, spm_x = np.zeros((nph, n)), np.zeros((nph, n)), np.zeros((nph, n))
    longest: list = [None] * nph
    rd, wr = 0.0 + host, np.zeros(n)  # (the host's reads first: a sum from 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (columns a plan does not use: discarded)
        for j in np.argsort(b.phase, kind="stable").tolist():  # phase by phase, slot order within a phase
            ph = int(b.phase[j])
            on = b.col("xfer_on", j)
            read = 0.0 if b.write[j] else 1.0
            count, each = b.col("rd_count", j), b.col("rd_each", j)
            dram = b.col("dram", j).astype(float)
            w = tm._column_words(b, j, pts, link)  # (_words_of(each, 1.0 if kind 1 else 0.0, bus, elem))
            # (``read`` is 1.0 or 0.0 for the whole column: x * 1.0 is x, bit for bit, NaN included, so a read
            # column skips its multiplications by 1.0, and each column's ``np.where(read > 0, ...)`` is one branch)
            lat = np.where(dram > 0, lat_d, lat_s)
            cost = tm.HANDSHAKE_CYCLES + (lat if read > 0 else read * lat) + w
            moved = count * (w * bus if read > 0 else each)
            rounds = b.col("bursts", j) * np.ceil(b.col("per_burst", j) / b.col("par", j) - 1e-9)
            work[ph] += np.where(on, count * cost, 0.0)
            r = np.where(on, rounds * cost, -np.inf)
            longest[ph] = r if longest[ph] is None else np.maximum(longest[ph], r)
            md = moved * dram
            dram_x[ph] += np.where(on, md, 0.0)
            spm_x[ph] += np.where(on, moved * (1 - dram), 0.0)
            rd = rd + np.where(on, md if read > 0 else md * read, 0.0)
            wr = wr + np.where(on, md * (1 - read) if read > 0 else md, 0.0)
        stage = [np.where(b.col("rd_on", j), tm._read_bytes(b, j, bus, elem), 0.0)  # staging reads (on: a positive
                 for j in range(ns, b.width("rd_on"))]                              # count), in order
        staged = np.zeros(n)
        for v in stage:
            staged = staged + v
    longest = np.stack([np.zeros(n) if v is None else np.maximum(0.0, v) for v in longest], axis=1).reshape(-1)
    out = {"work": work.T.reshape(-1), "longest": longest}
    if choice:
        if stage:  # the staging reads after the phase's transfers (PLOAD), one by one, and after the reads
            dc, sc = dram_x.copy(), spm_x.copy()
            rd_c = rd
            for v in stage:
                dc[tm._PLOAD_AT] += v
                sc[tm._PLOAD_AT] += v
                rd_c = rd_c + v
            out["dram_c"], out["spm_c"], out["_dram_read"] = dc.T.reshape(-1), sc.T.reshape(-1), rd_c
        else:
            out["dram_c"], out["spm_c"], out["_dram_read"] = dram_x.T.reshape(-1), spm_x.T.reshape(-1), rd
        out["_dram_write"] = wr
    if report:
        if stage:
            st = np.zeros((nph, n))
            st[tm._PLOAD_AT] = staged
            out["staged"] = st.T.reshape(-1)
        else:  # no staging column (EMAXV): every sum is the +0.0 it starts from, as np.zeros gives it (no transposing
            out["staged"] = np.zeros(n * nph)  # copy of a [phases, pairs] matrix of zeros)
        if always or not tm._same_sums(variants, out):
            out["dram_r"] = dram_x.T.reshape(-1)
            out["spm_r"] = spm_x.T.reshape(-1)
    return out


tm._PLOAD_AT = PHASES.index("pload")


def _dense_reads_former(b, pts: np.ndarray, link) -> tuple[np.ndarray, np.ndarray]:
    n, nk = len(pts), len(KINDS)
    bus = link.at(link.bus_bytes, pts)
    by_kind = np.zeros((nk + 1, n))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (columns a plan does not read: discarded)
        for j in range(b.width("rd_on")):  # (tm._read_bytes, the words of each column once per chunk)
            by_kind[int(b.rd_kind[j])] += np.where(b.col("rd_on", j),
                                                   b.col("rd_count", j) * tm._column_words(b, j, pts, link) * bus, 0.0)
    for j in range(b.width("h_on")):
        by_kind[int(b.h_kind[j])] += np.where(b.col("h_on", j), b.col("h_bytes", j), 0.0)
    out = np.ascontiguousarray(by_kind.T)
    blocks = tm._kind_blocks(b)
    if blocks is not None:  # every plan names its kinds in an order within ``blocks`` (EMAXV's blocks)
        total = np.zeros(n)
        for k in blocks:  # (a strided column, as the gathered one below: numpy's loop for it keeps NaN signs alike)
            total = total + out[:, k]
        return out[:, :nk], total
    named = out.ravel()[np.arange(n)[:, None] * (nk + 1) + tm._read_order(b)]  # [pair, j]: its j-th named kind's bytes
    total = np.zeros(n)
    for j in range(nk):
        total = total + named[:, j]
    return out[:, :nk], total


def _sum_in_order_former(terms: list, n: int, zeros: bool) -> np.ndarray:
    if not terms:
        return np.zeros(n)
    first = terms[0]
    out = np.array(first, dtype=float) if np.ndim(first) else np.full(n, first, dtype=float)
    for t in terms[1:]:
        out += t
    if zeros:
        out += 0.0
    return out


def _sum_in_order_former_at(terms: list, n: int, zeros: bool, out=None) -> np.ndarray:
    """The former call sites: ``write_kind[:, k] = _sum_in_order(...)`` where ``out`` is now passed."""
    v = _sum_in_order_former(terms, n, zeros)
    if out is None:
        return v
    out[:] = v
    return out


def _by_object_former(objs, numbers, k: int) -> np.ndarray:
    if isinstance(objs, mapper.Indexed):
        used = np.bincount(objs.at, minlength=len(objs.objs)).astype(bool).tolist()  # (others: zeros, not read)
        table = np.array([numbers(o) if u else (0,) * k for o, u in zip(objs.objs, used)],
                         dtype=np.int64).reshape(len(objs.objs), k).T
        return table[:, objs.at]
    ids = np.fromiter(map(id, objs), dtype=np.int64, count=len(objs))
    _, first, at = np.unique(ids, return_index=True, return_inverse=True)
    table = np.array([numbers(objs[i]) for i in first.tolist()], dtype=np.int64).reshape(len(first), k).T
    return table[:, at.reshape(-1)]


_pool_passes_now = em._pool_passes


def _pool_passes_former(shapes, pooled, hws, maps, req, pairs):
    """The former ``_pool_passes`` (its no-pass branch verbatim; the rest is unchanged)."""
    names = ("pool_oh", "pool_ow", "pool_ops", "pool_iterations", "pool_loop_ends", "pool_rows_used", "pool_regs")
    out = {name: np.zeros(pooled.shape) for name in names}
    li, ki = np.nonzero(pooled)
    if not len(li):
        return em._PoolPasses(out, {}, [], li, ki)
    return _pool_passes_now(shapes, pooled, hws, maps, req, pairs)


def _per_plan_former(v, keep, n: int, dtype=float, fills=None) -> np.ndarray:
    """The former ``_per_plan`` (``fills`` ignored: a new array per scalar column)."""
    a = np.asarray(v, dtype=dtype)
    if not a.ndim:
        return np.full(n if keep is None else len(keep), a, dtype=dtype)
    return a if keep is None else a[keep]


class _KnobFormer(np.ndarray):
    """The former per-request knob: the combinations' fixed-width texts gathered per request (``pat_knob[rk]``),
    the pooling layers' ``pairs`` replaced by an assignment into it."""

    def replaced(self, where, text):
        a = np.asarray(self).copy()
        a[where] = text
        return a


def _knob_at_former(texts, at):
    return texts[at].view(_KnobFormer)


def _former():
    """Every change of this round undone (``conv_table``'s zero-filled slot matrices: :func:`_poisoned` shows every
    cell is written)."""
    stack = ExitStack()
    stack.enter_context(mock.patch.object(tm, "_dense_flows", _dense_flows_former))
    stack.enter_context(mock.patch.object(tm, "_dense_reads", _dense_reads_former))
    stack.enter_context(mock.patch.object(traffic, "_sum_in_order", _sum_in_order_former_at))
    stack.enter_context(mock.patch.object(mapper, "_by_object", _by_object_former))
    stack.enter_context(mock.patch.object(em, "_pool_passes", _pool_passes_former))
    stack.enter_context(mock.patch.object(em, "SKIP_POOL_SOURCES", False))
    stack.enter_context(mock.patch.object(em, "KnobAt", _knob_at_former))
    stack.enter_context(mock.patch.object(traffic, "_per_plan", _per_plan_former))
    return stack


class _Poisoned:
    """``numpy`` for a module, its ``np.empty`` filled with garbage (NaN, True, a large int): a cell the code leaves
    unwritten shows in the results."""

    def __init__(self):
        self._np = np

    def __getattr__(self, k):
        return getattr(np, k)

    @staticmethod
    def empty(shape, dtype=float, order="C"):
        a = np.empty(shape, dtype=dtype, order=order)
        a[...] = {"f": np.nan, "b": True, "i": 987654321}.get(np.dtype(dtype).kind, 0)
        return a


# ------------------------------------------------------------------ real blocks, with planted values
@lru_cache(maxsize=None)
def _captured(arch: str, wl: str, n: int, seed: int) -> tuple[list, list]:
    """The (args, kwargs) of every ``_dense_flows`` and ``_dense_reads`` call of a real batch."""
    flows, reads = [], []
    f0, r0 = tm._dense_flows, tm._dense_reads

    def f(*a, **k):
        flows.append((a, k))
        return f0(*a, **k)

    def r(*a, **k):
        reads.append((a, k))
        return r0(*a, **k)

    with mock.patch.object(tm, "_dense_flows", f), mock.patch.object(tm, "_dense_reads", r):
        _everything(arch, wl, _random_rows(arch, n, seed))
    return flows, reads


class _Planted:
    """Block ``b`` with odd values planted in its float columns (NaN of both signs, +-0.0, infinities, huge and
    tiny numbers) at random plans, and optionally its columns' phases and directions redrawn."""

    def __init__(self, b, rng: np.random.Generator, phase=None, write=None):
        self._b, self._rng, self._cols = b, rng, {}
        self.phase = b.phase if phase is None else phase
        self.write = b.write if write is None else write

    def __getattr__(self, k):
        return getattr(self._b, k)

    def width(self, name: str) -> int:
        return self._b.width(name)

    def col(self, name: str, j: int) -> np.ndarray:
        key = (name, j)
        if key not in self._cols:
            v = self._b.col(name, j)
            if v.dtype == np.float64 and len(v):
                v = v.copy()
                at = self._rng.integers(0, len(v), max(1, len(v) // 7))
                v[at] = self._rng.choice(_ODD, len(at))
            self._cols[key] = v
        return self._cols[key]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), redraw=st.booleans(), which=st.integers(0, 10**6))
def test_dense_flows_and_reads_equal_the_former(seed, redraw, which):
    """``_dense_flows`` (no zero-filled phase matrices) and ``_dense_reads``
    (no zero-filled kind matrix) give the former bits on real blocks (EMAXV's choice; EMAXVR's blocks with staging
    columns) with odd values planted, phases and directions redrawn (phases without a column, several columns a
    phase), host bytes with NaN; for both variants and each alone."""
    rng = np.random.default_rng(seed)
    flows = [(c, False) for case in (("emaxv", "vgg16-conv", 300, 41), ("emaxvr", "alexnet", 60, 42))
             for c in _captured(*case)[0]]
    calls = flows + [(c, True) for c in _captured("emaxv", "vgg16-conv", 300, 41)[1]]
    assert len(calls) >= 3
    (args, kw), is_read = calls[which % len(calls)]
    b = args[0]
    ns = len(b.phase)
    phase = rng.integers(0, len(PHASES), ns) if redraw else None
    write = rng.random(ns) < 0.4 if redraw else None
    if is_read:
        pts, link = args[1], args[2]
        pb = _Planted(b, rng, phase, write)
        got, want = tm._dense_reads(pb, pts.copy(), link), _dense_reads_former(pb, pts.copy(), link)
        assert all(_bits(g) == _bits(w) for g, w in zip(got, want))
        return
    host, pts, link, variants = args[1].copy(), args[2], args[3], args[4]
    host[rng.integers(0, len(host), max(1, len(host) // 9))] = rng.choice(_ODD, max(1, len(host) // 9))
    for vs in (variants, (True,), (False,), (True, False)):
        pb = _Planted(b, np.random.default_rng(seed), phase, write)  # (the same planted columns for both)
        p2 = pts.copy()
        got = tm._dense_flows(pb, host, p2, link, vs, **kw)
        want = _dense_flows_former(pb, host, p2, link, vs, **kw)
        assert list(got) == list(want)
        for k in want:
            assert _bits(got[k]) == _bits(want[k]), k


@st.composite
def _terms(draw):
    n = draw(st.integers(1, 40))
    out = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["f", "f", "f", "scalar", "int", "bool", "strided"]))
        if kind == "scalar":
            out.append(draw(st.sampled_from(_ODD)))
            continue
        v = np.array(draw(st.lists(st.sampled_from(_ODD), min_size=2 * n, max_size=2 * n)))
        out.append(v[::2] if kind == "strided" else v[:n] if kind == "f" else
                   (np.nan_to_num(v[:n]) > 1).astype(np.int64 if kind == "int" else bool))
    return n, out


@settings(max_examples=150, deadline=None)
@given(t=_terms(), zeros=st.booleans(), into=st.booleans())
def test_sum_in_order_equals_the_former(t, zeros, into):
    """``_sum_in_order`` (two contiguous float terms summed into the result, no copy first; ``out=``) gives the
    former bits: NaN of both signs, -0.0, scalars, int, bool and strided terms, none."""
    n, terms = t
    want = _sum_in_order_former(list(terms), n, zeros)
    if into:
        block = np.full((n, 3), 7.0, order="F")
        got = traffic._sum_in_order(list(terms), n, zeros, out=block[:, 1])
        assert np.shares_memory(got, block) and (block[:, [0, 2]] == 7.0).all()
    else:
        got = traffic._sum_in_order(list(terms), n, zeros)
    assert got.dtype == np.float64 and _bits(got) == _bits(want)
    for t_ in terms:  # (the terms are not written)
        assert not (isinstance(t_, np.ndarray) and np.shares_memory(t_, got))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 6), n_obj=st.integers(1, 12), n=st.integers(0, 50), seed=st.integers(0, 2**32 - 1),
       indexed=st.booleans())
def test_by_object_equals_the_former(k, n_obj, n, seed, indexed):
    """``_by_object``'s columns taken from a contiguous table (np.take) equal the former index, value and dtype, and
    come out C-contiguous."""
    rng = np.random.default_rng(seed)
    objs = [tuple(int(x) for x in rng.integers(-2**40, 2**40, k)) for _ in range(n_obj)]
    at = rng.integers(0, n_obj, n)
    seq = mapper.Indexed(objs, at) if indexed else [objs[i] for i in at.tolist()]
    got, want = mapper._by_object(seq, tuple, k), _by_object_former(seq, tuple, k)
    assert got.dtype == want.dtype == np.int64 and got.shape == want.shape == (k, n)
    assert np.array_equal(got, want) and got.flags.c_contiguous


def test_pool_passes_without_a_pass_are_read_only_zeros():
    """No pooled (layer, combination): every column zeros of the chunk's shape, as before, and read only."""
    pooled = np.zeros((3, 5), bool)
    got = em._pool_passes([], pooled, [], {}, np.zeros(0, np.int64), [])
    want = _pool_passes_former([], pooled, [], {}, np.zeros(0, np.int64), [])
    assert list(got.cols) == list(want.cols) and got.n == 0
    for k, v in want.cols.items():
        assert _bits(got.cols[k]) == _bits(v) and not got.cols[k].flags.writeable


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 2100, 43),  # two chunks
                                            ("emaxv", "vgg16", 200, 44),  # FC layers' forms
                                            ("emaxv", "alexnet", 1, 45),  # one design point
                                            ("emaxvr", "alexnet", 40, 46)])
def test_batches_equal_the_former_and_every_cell_is_written(arch, wl, n, seed):
    """Whole batches (random points; a third with small arrays and LMMs: layers without a plan, NaN; criterion
    dram) give what the former code gives, every metric, state, reason and total bit for bit and keys in order;
    and the same with ``np.empty`` poisoned in the changed modules (every cell of the arrays no longer zero-filled
    is written)."""
    rows = _random_rows(arch, n, seed)
    got = _everything(arch, wl, rows)
    with _former():
        want = _everything(arch, wl, rows)
    _same(got, want)
    with ExitStack() as stack:
        for mod in (tm, mapper, traffic):
            stack.enter_context(mock.patch.object(mod, "np", _Poisoned()))
        poisoned = _everything(arch, wl, rows)
    _same(poisoned, want)



@pytest.mark.parametrize("wl,n,seed", [("vgg16-conv", 300, 47), ("vgg16", 60, 48)])
def test_emaxv_builders_take_the_pool_columns_absent_as_zeros(wl, n, seed):
    """The EMAXV builders' tables (every plan column: dtype and bits; labels) are the same with the pooling-pass
    columns and ``has_pool`` absent (:data:`SKIP_POOL_SOURCES`) as with them gathered (zeros, False)."""
    def tables(skip: bool) -> list:
        got = []
        builders = {k: getattr(traffic, k) for k in ("emaxv_plans", "fc_plans")}

        def spy(fn):
            def run(*a, **k):
                tab = fn(*a, **k)
                got.append(tab)
                return tab
            return run

        with ExitStack() as stack:
            stack.enter_context(mock.patch.object(em, "SKIP_POOL_SOURCES", skip))
            for k, fn in builders.items():
                stack.enter_context(mock.patch.object(em, k, spy(fn)))
            _everything("emaxv", wl, _random_rows("emaxv", n, seed))
        return got

    got, want = tables(True), tables(False)
    assert len(got) == len(want) >= 1
    for g, w in zip(got, want):
        assert list(g.plan) == list(w.plan) and list(g.label) == list(w.label)
        for k in w.plan:
            a, b = np.asarray(g.plan[k]), np.asarray(w.plan[k])
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), k
        for k in w.label:
            assert np.asarray(g.label[k]).tolist() == np.asarray(w.label[k]).tolist(), k


_TEXTS = ["auto", "single", "pairs", "A", "B", "OW,OC,OH", "OW,OH,OC", "", "auto ", "x" * 9]


@settings(max_examples=120, deadline=None)
@given(texts=st.lists(st.sampled_from(_TEXTS), min_size=1, max_size=4, unique=True), n=st.integers(0, 30),
       value=st.sampled_from(_TEXTS), new=st.sampled_from(_TEXTS), seed=st.integers(0, 2**32 - 1))
def test_knob_at_equals_the_gathered_texts(texts, n, value, new, seed):
    """``KnobAt(texts, at)`` compares, converts and replaces as the gathered fixed-width text array ``texts[at]``
    did: ``==`` any text (among them or not), ``np.asarray``, and ``replaced(mask, text)`` as ``a[mask] = text``
    (a text not among them added, cut to the array's width; none replaced)."""
    rng = np.random.default_rng(seed)
    t = np.array(texts)
    at = rng.integers(0, len(t), n)
    k, want = mapper.KnobAt(t, at), t[at]
    eq = k == value
    assert eq.dtype == bool and np.array_equal(eq, want == value)
    assert np.asarray(k).dtype == want.dtype and np.asarray(k).tolist() == want.tolist() and len(k) == n
    assert list(k) == want.tolist()
    mask = rng.random(n) < 0.4
    r = k.replaced(mask, new)
    former = want.copy()
    former[mask] = new
    assert np.asarray(r).dtype == former.dtype and np.asarray(r).tolist() == former.tolist()
    for v in _TEXTS:
        assert np.array_equal(r == v, former == v)
    assert np.array_equal(np.asarray(k), want)  # (not written)


def test_knob_codes_give_the_knob_texts():
    """``_knob_codes``' distinct texts at each combination's position are ``np.array`` of the knob (one value,
    several, objects: None)."""
    for pattern, order in ((["auto"] * 5, ["OW"] * 5), (["single", "auto", "single", "pairs"], ["a", "b", "a", "a"]),
                           ([], [])):
        (pt, pa), (ot, oa) = em._knob_codes(pattern, order)
        for t, a, values in ((pt, pa, pattern), (ot, oa, order)):
            want = np.array(values)
            assert t[a].dtype == want.dtype and t[a].tolist() == want.tolist() and len(t) == len(set(values))
    assert em._knob_codes(["auto", 3], ["OW", "OW"]) is None


@settings(max_examples=60, deadline=None)
@given(conv_mask=st.lists(st.booleans(), max_size=40), seed=st.integers(0, 2**32 - 1))
def test_conv_pairs_are_the_former_gathers(conv_mask, seed):
    """``_mapping_rows``' conv pairs: the pairs themselves when every pair is a conv one, else gathered, as the
    former ``li[conv]``, ``ki[conv]`` (values and dtype)."""
    rng = np.random.default_rng(seed)
    n = len(conv_mask)
    li, ki = rng.integers(0, 20, n), rng.integers(0, 99, n)
    conv = np.flatnonzero(np.array(conv_mask, dtype=bool))
    lc, kc = em._conv_pairs(li, ki, conv)
    assert lc.dtype == li[conv].dtype and np.array_equal(lc, li[conv]) and np.array_equal(kc, ki[conv])


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.one_of(st.sampled_from(_ODD), st.booleans(), st.integers(-3, 3), st.sampled_from(["-", "ab"]),
                                 st.just("array")), min_size=1, max_size=8),
       n=st.integers(0, 12), keep=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_per_plan_shares_equal_scalar_columns(values, n, keep, seed):
    """``_per_plan`` with ``fills``: every column the former's (dtype, shape, bytes; arrays as before), the scalar
    ones of equal dtype and bytes one read-only array (+0.0 and -0.0, NaN of either sign kept apart)."""
    rng = np.random.default_rng(seed)
    at = np.flatnonzero(rng.random(n) < 0.6) if keep else None
    fills: dict = {}
    seen: dict = {}
    for v in values:
        if isinstance(v, str) and v == "array":
            v = rng.random(n)
        dtype = None if isinstance(v, str) else float
        got, want = traffic._per_plan(v, at, n, dtype, fills), _per_plan_former(v, at, n, dtype)
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
        if np.ndim(v) == 0:
            assert not got.flags.writeable
            key = (got.dtype.str, np.asarray(v, dtype=dtype).tobytes())
            assert seen.setdefault(key, got) is got

"""EMAX batched, fifteenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper, traffic
from archmodels.emax import model as em
from workloads import load_workload

from .test_emax_batched_paths5 import _dump, _rows


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=float)).view(np.int64)


def _spied_batch(points, bound: int, fill_upto: int = em.CUBE_FILL_UPTO):
    """An EMAXV VGG16-conv batch of ``points`` with ``PENDING_BYTES_UPTO`` = ``bound`` (and ``CUBE_FILL_UPTO`` =
    ``fill_upto``): the rows of the results' cube written, the kept values' bytes and chunks when the batch returned
    (before any layer dict is read), and every layer's metrics, states and feasibility."""
    m, wl = get_model("emaxv"), load_workload("vgg16-conv")
    seen = []
    real = em._Results.batches

    def batches(self, layers):
        out = real(self, layers)
        seen.append(self)
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "PENDING_BYTES_UPTO", bound), mock.patch.object(em, "CUBE_FILL_UPTO", fill_upto), \
            mock.patch.object(em._Results, "batches", batches):
        r = m.evaluate_batch(wl, m.params.points(points))
        res = seen[0]
        written, kept, n_kept = set(res.written), res.pending_bytes, len(res.pending)
        assert res.pending_upto == 2 * bound  # (EMAXV's scale)
        layers = r.layers
        # every key of every layer read here (under the bound the batch ran with: fill writes the kept chunks)
        values = [({k: _bits(v) for k, v in lb.metrics.items()}, {k: _bits(v) for k, v in lb.states.items()},
                   lb.feasible.copy()) for lb in layers]
    return written, kept, n_kept, values


def test_a_4096_point_batch_keeps_both_chunks_and_equals_every_key_written_at_once():
    """EMAXV keeps 2 x PENDING_BYTES_UPTO = 32 MiB: a 4,096-point VGG16-conv batch (two chunks of 2,048) keeps both
    chunks' values and writes only the keys its own steps read; reading every key afterwards gives the values every key written
    at once gives (the oracle: the cube filled first and every key written by each chunk, no kept values), bit for
    bit; NaN cells (layers without a plan) included."""
    assert em.PENDING_BYTES_UPTO == 16 << 20 and em.PENDING_SCALE_OF == {"emaxv": 2}
    seen = []
    real = em._Results.batches
    with mock.patch.object(em._Results, "batches", lambda self, layers: seen.append(self) or real(self, layers)):
        get_model("emaxvr").evaluate_points("lenet", _rows("emaxvr", 8, 1))
    assert seen and all(r.pending_upto == 16 << 20 for r in seen)  # (EMAXVR keeps the plain bound)
    rows = _rows("emaxv", 4096, 15)  # (a third with small arrays and LMMs: layers without a plan, their NaN)
    written, kept, n_kept, got = _spied_batch(rows, em.PENDING_BYTES_UPTO)
    w_written, w_kept, w_n_kept, want = _spied_batch(rows, 16 << 20, fill_upto=1 << 40)  # the oracle
    assert n_kept == 2 and 16 << 20 < kept <= 32 << 20  # (more than the former bound: both chunks kept)
    assert len(written) < len(em._cube_keys())  # the keys nobody read were not written
    assert w_n_kept == 0 and not w_kept  # (the oracle kept nothing)
    assert len(got) == len(want)
    nan_seen = False
    for (gm, gs, gf), (wm, ws, wf) in zip(got, want):
        assert list(gm) == list(wm) and list(gs) == list(ws)
        for k in wm:
            assert np.array_equal(gm[k], wm[k]), k
            nan_seen |= bool(np.isnan(gm[k].view(float)).any())
        for k in ws:
            assert np.array_equal(gs[k], ws[k]), k
        assert np.array_equal(gf, wf)
    assert nan_seen


# ------------------------------------------------------------ the expansions of counts of 0 or 1 (ONE_EACH_SHORTCUTS)

def _take_former(g: em._Groups, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_Groups.take`` before this round (the general gather), the oracle."""
    if g.one:
        return (np.repeat(g.flat[None], len(ks), axis=0).reshape(-1),
                np.full(len(ks), len(g.flat), dtype=np.int64))
    n = g.lens[ks]
    ends = np.cumsum(n)
    return g.flat[np.repeat(g.offs[ks] - (ends - n), n) + np.arange(int(ends[-1]) if len(ends) else 0)], n


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1), grouped=st.booleans())
def test_groups_take_of_single_points_equals_the_general_gather(n, seed, grouped):
    """A chunk of one point per combination takes ``flat[ks]`` and ones: the general gather's integers and dtypes
    (combinations in any order, repeated, none); grouped points (some combination with 2+ points) keep it."""
    rng = np.random.default_rng(seed)
    groups = None
    if grouped:
        perm = rng.permutation(n + 5).tolist()
        cuts = sorted(rng.choice(np.arange(1, n + 5), size=n - 1, replace=False).tolist()) if n > 1 else []
        groups = [perm[a:b] for a, b in zip([0] + cuts, cuts + [n + 5])]
    step = int(rng.integers(1, n + 1))
    for g in em._Groups.chunks(groups, step, n):
        assert g.single == (len(g.lens) > 1 and bool((g.lens == 1).all()))
        ks = rng.integers(0, len(g.lens), size=int(rng.integers(0, 3 * len(g.lens) + 1)))
        got, want = g.take(ks), _take_former(g, ks)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def _spied_plans(arch: str, wl: str, rows: list[dict], shortcuts: bool):
    """The contract dictionaries of a batch with :data:`ONE_EACH_SHORTCUTS` = ``shortcuts``, and every chunk's
    ``_mapping_rows`` (owner, src), ``_context_plans`` (start, count, the table's src) and ``_final_plans`` (start,
    count, the table's src) integers, and whether the shortcuts ran."""
    m = get_model(arch)
    got: dict[str, list] = {"maps": [], "ctx": [], "final": [], "single": [], "one_each": []}
    real_m, real_c, real_f, real_ch, real_o = em._mapping_rows, em._context_plans, em._final_plans, em._choose, \
        em._one_each

    def one_each(counts):
        out = real_o(counts)
        got["one_each"].append(bool(counts.max(initial=0) <= 1))
        return out

    def maps(*a, **k):
        out = real_m(*a, **k)
        got["maps"].append((out[1], out[2]))
        return out

    def ctx(*a, **k):
        out = real_c(*a, **k)
        got["ctx"].append((out.start, out.count, out.table.src if hasattr(out.table, "src") else None))
        return out

    def final(*a, **k):
        out = real_f(*a, **k)
        got["final"].append((out.start, out.count, out.table.src))
        return out

    def choose(p, grp, *a, **k):
        got["single"].append(grp.single and bool(p.count.max(initial=0) <= 1))
        return real_ch(p, grp, *a, **k)

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "ONE_EACH_SHORTCUTS", shortcuts), mock.patch.object(em, "_mapping_rows", maps), \
            mock.patch.object(em, "_context_plans", ctx), mock.patch.object(em, "_final_plans", final), \
            mock.patch.object(em, "_choose", choose), mock.patch.object(em, "_one_each", one_each):
        r = m.evaluate_points(wl, rows)
        d = [r.point(i) for i in range(len(rows))]
    em.workload_plans.cache_clear()
    return _dump(d), got


@pytest.mark.parametrize("arch,wl,n,seed,kind", [("emaxv", "vgg16-conv", 200, 1, "random"),
                                                  ("emaxv", "vgg16", 120, 2, "small"),
                                                  ("emaxv", "alexnet", 100, 3, "repeat"),
                                                  ("emaxvr", "alexnet", 40, 4, "small")])
def test_count_shortcuts_equal_the_general_expansions(arch, wl, n, seed, kind):
    """With the shortcuts the mapper rows' owners and sources, the plans' segment starts and counts, the final plans
    and the contract dictionaries (NaN, reasons of layers without a plan, every metric and text) are those of the
    general expansions (the code before this round, ``ONE_EACH_SHORTCUTS`` False), integer for integer and dtype
    for dtype. A random EMAXV batch takes the shortcuts in every chunk; repeated points (combinations with several
    points) and EMAXVR (several plans per pair) the general ones."""
    # random points (one per combination; layers without a plan too), or some with small arrays and LMMs and some
    # under criterion=dram (_rows: equal combinations among them), or every point twice (combinations of two points)
    rows = (get_model(arch).params.random_rows(n, np.random.default_rng(seed)) if kind == "random" else
            _rows(arch, n, seed))
    if kind == "repeat":
        rows = rows + [dict(r) for r in rows]
    want_d, want = _spied_plans(arch, wl, rows, False)
    got_d, got = _spied_plans(arch, wl, rows, True)
    assert got_d == want_d
    for part in ("maps", "ctx", "final"):
        assert len(got[part]) == len(want[part])
        for a, b in zip(got[part], want[part]):
            for x, y in zip(a, b):
                if y is None:
                    assert x is None
                    continue
                assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), part
    assert not any(want["single"])
    assert all(got["single"]) == (kind == "random")
    # the mapper rows', plans' and final plans' shortcuts: on every EMAXV chunk of conv and pooling layers (one
    # mapping and one plan per pair whatever the points; an FC layer has two: VGG16's and AlexNet's take the general
    # ones), not on EMAXVR's (several plans per pair)
    assert any(got["one_each"]) == (arch == "emaxv") and all(got["one_each"]) == (wl == "vgg16-conv")
    assert '"feasible": false' in got_d  # (infeasible points, layers without a plan: their NaN and reasons)


# ------------------------------------------------------------ conv_table's columns built when read (SlotColumns)

def _slot_numbers_former(by_pattern, by_fit, at_pattern, at_fit, pload):
    """``mapper._slot_numbers`` before this round (every column gathered and converted at once), the oracle."""
    out = {}
    for f in mapper._NUMBERS:
        got = by_fit.get(f) or by_pattern.get(f)
        if f == "pload":
            out[f] = pload
        elif not got:
            out[f] = np.zeros(len(at_pattern))
        else:
            col = np.concatenate(got) if len(got) > 1 else got[0]
            out[f] = col[at_fit if f in by_fit else at_pattern].astype(float)
    return out


def _slot_labels_former(out, labels, slot):
    """The texts of ``conv_table``'s rows as ``conv_table`` set them before this round (its last lines), the oracle."""
    lab = labels[slot]
    # fixed-width text as ``astype(str)`` of the objects gives it: as wide as the longest text present
    present = np.zeros(len(labels), bool)
    present[slot] = True
    for j, k in enumerate(("pattern", "outer", "mode", "name", "order_name")):
        if k in ("pattern", "outer", "mode"):
            texts = [x[j] for x in labels.tolist()]
            wide = max([len(t) for t, on in zip(texts, present.tolist()) if on], default=1)
            out[k] = np.array(texts, dtype=f"<U{wide}")[slot]
        else:
            out[k] = lab[:, j]


def _former_tables():
    return mock.patch.multiple(mapper, _slot_numbers=_slot_numbers_former, _slot_labels=_slot_labels_former)


def _same_column(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:  # (texts: equal values of one type)
        return [(type(x), x) for x in a.tolist()] == [(type(y), y) for y in b.tolist()]
    if a.dtype.kind == "U":
        return np.array_equal(a, b)
    return np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))  # (bits)


def _conv_table_calls(arch: str, wl: str, rows: list[dict]) -> list[tuple]:
    calls = []
    real = em.conv_table

    def spy(*a):
        calls.append(a)
        return real(*a)

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "conv_table", spy):
        get_model(arch).evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    return calls


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 150, 5), ("emaxv", "alexnet", 60, 6),
                                            ("emaxvr", "vgg16", 24, 7), ("emaxvr", "mobilenet_v2", 12, 8)])
def test_conv_table_columns_when_read_equal_the_former_columns(arch, wl, n, seed):
    """Every ``conv_table`` answer of a batch (the layers' requests, the fused pooling requests; tile searches,
    pairs, every EMAXVR slot; small arrays and LMMs) has the former table's columns: the same keys in the same order,
    each column's dtype, shape and bits (the texts the same objects), read whole or gathered at any rows (one
    gather, :meth:`SlotColumns.gather`), before or after the column is built (texts: equal values)."""
    rng = np.random.default_rng(seed)
    calls = _conv_table_calls(arch, wl, _rows(arch, n, seed))
    assert calls and any(len(c[1]) >= mapper.TABLE_NUMPY_FROM for c in calls)
    lazy_seen = False
    for args in calls:
        got = mapper.conv_table(*args)
        with _former_tables():
            want = mapper.conv_table(*args)
        assert list(got.cols) == list(want.cols) and np.array_equal(got.req, want.req)
        lazy_seen |= isinstance(got.cols, mapper.SlotColumns)
        for k, w in want.cols.items():
            if isinstance(got.cols, mapper.SlotColumns) and len(w):
                at = rng.integers(0, len(w), size=int(rng.integers(0, 2 * len(w))))
                assert _same_column(got.cols.gather(k, at), w[at]), k  # (composed: not built yet, or built)
            assert _same_column(got.cols[k], w), k
            if isinstance(got.cols, mapper.SlotColumns) and len(w):
                assert _same_column(got.cols.gather(k, at), w[at]), k  # (from the built column)
    assert lazy_seen


_INT64 = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_slot_columns_equal_the_gathered_and_converted_columns(data):
    """``SlotColumns``: a number column is ``base[at].astype(float)`` and its ``gather`` of any rows the same values'
    ``[rows]`` bit for bit (int64 of any size: conversions that round), texts ``base[at]``; keys in the order set,
    ``in`` / ``len`` without building; nothing built by ``gather`` (each (at, rows) composed once, the same answer
    for new arrays at recycled ids)."""
    n_base = data.draw(st.integers(1, 40))
    base = np.array(data.draw(st.lists(_INT64, min_size=n_base, max_size=n_base)), dtype=np.int64)
    at = np.array(data.draw(st.lists(st.integers(0, n_base - 1), max_size=60)), dtype=np.int64)
    texts = np.array(["single", "A", "pairs[OC,OW]", "B"], dtype=object)
    t_at = np.array(data.draw(st.lists(st.integers(0, 3), min_size=len(at), max_size=len(at))), dtype=np.int64)
    sc = mapper.SlotColumns()
    sc.lazy("n", base, at, True)
    sc.put("given", np.arange(len(at), dtype=float))
    sc.lazy("t", texts, t_at, False)
    assert list(sc) == ["n", "given", "t"] and len(sc) == 3 and "n" in sc and "x" not in sc
    assert not sc.built("n") and not sc.built("t") and sc.built("given")
    want_n, want_t = base[at].astype(float), texts[t_at]
    for _ in range(3):
        rows = np.array(data.draw(st.lists(st.integers(0, max(len(at) - 1, 0)), max_size=50) if len(at) else
                                  st.just([])), dtype=np.int64)
        assert _same_column(sc.gather("n", rows), want_n[rows]) and _same_column(sc.gather("t", rows), want_t[rows])
    assert not sc.built("n") and not sc.built("t")
    assert _same_column(sc["n"], want_n) and _same_column(sc["t"], want_t) and sc.built("n")
    assert _same_column(sc.gather("n", np.arange(len(at))), want_n)
    assert _same_column(dict(sc.items())["given"], np.arange(len(at), dtype=float))


@pytest.mark.parametrize("tail", [False, True])
def test_rows_over_slot_columns_equal_rows_over_the_built_columns(tail):
    """``traffic.Rows`` with a ``SlotColumns`` source gathers a column not built yet in one composed gather, and every
    read (``[]``, ``take_rows``, ``eq``, ``eq_rows``) equals the same Rows over the built columns (a plain dict: the
    former path); with tail rows (fused pooling passes) the former path."""
    rng = np.random.default_rng(3)
    calls = _conv_table_calls("emaxv", "vgg16-conv", get_model("emaxv").params.random_rows(80, rng))
    tab = mapper.conv_table(*max(calls, key=lambda c: len(c[1])))
    assert isinstance(tab.cols, mapper.SlotColumns)
    m = len(tab.req)
    idx = rng.integers(0, m, size=3 * m)
    keys = [k for k in tab.cols if k != "pload"]
    extra = 4
    texts = ("pattern", "outer", "mode")
    tail_cols = {k: (np.full(extra, "single") if k in texts else np.full(extra, "x", dtype=object)
                     if k in ("name", "order_name") else np.arange(extra, dtype=float)) for k in tab.cols}

    def rows_of(cols):
        return traffic.Rows({"shape": np.zeros(len(idx) + (extra if tail else 0), np.int64)}, [(cols, idx)],
                            tail_cols if tail else None, extra if tail else 0)

    fresh = mapper.conv_table(*max(calls, key=lambda c: len(c[1])))
    got, want = rows_of(fresh.cols), rows_of({k: tab.cols[k] for k in tab.cols})
    at = rng.integers(0, len(idx), size=50)
    assert _same_column(got.take_rows("icpar", at), want.take_rows("icpar", at))
    for k in keys:
        assert _same_column(got[k], want[k]), k
        assert fresh.cols.built(k) == (tail or k == "icpar"), k  # (composed: the source's column not built)
    for k in ("pattern", "mode"):
        assert np.array_equal(got.eq(k, "single"), want.eq(k, "single"))
        assert np.array_equal(got.eq_rows(k, "rows", at), want.eq_rows(k, "rows", at))


def test_batches_with_columns_when_read_equal_the_former_tables():
    """Whole batches (EMAXV random points; EMAXVR with tile searches, fused pooling, small arrays) with the lazy
    columns give the former tables' contract dictionaries (every EMAXVR slot and tile search: the table test above)."""
    v_rows = get_model("emaxv").params.random_rows(100, np.random.default_rng(9))
    for arch, wl, rows in (("emaxv", "vgg16-conv", v_rows), ("emaxvr", "alexnet", _rows("emaxvr", 30, 10))):
        m = get_model(arch)
        em.workload_plans.cache_clear()
        r = m.evaluate_points(wl, rows)
        got = _dump([r.point(i) for i in range(len(rows))])
        em.workload_plans.cache_clear()
        with _former_tables():
            r = m.evaluate_points(wl, rows)
            want = _dump([r.point(i) for i in range(len(rows))])
        em.workload_plans.cache_clear()
        assert got == want

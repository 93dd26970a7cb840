"""EMAX batched, seventeenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit."""

from __future__ import annotations

import json
from itertools import chain
from operator import itemgetter
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import model as em
from archmodels.emax import traffic
from workloads import load_workload

from .test_emax_batched16 import _everything, _same


class _Text(str):
    """A str subclass: the former knob check (``type(v) is str``) sends such a value's chunk to objects."""


# ------------------------------------------------------------------ the oracles: the code before this round
def _keys_former(cols: list[np.ndarray]) -> tuple[list[tuple], list[list[int]] | None]:
    every = list(zip(*[c.tolist() for c in cols]))
    keys = list(dict.fromkeys(every))  # the distinct combinations, in order of first appearance
    members = None
    if len(keys) != len(every):
        groups: dict[tuple, list[int]] = {}
        for i, key in enumerate(every):
            groups.setdefault(key, []).append(i)
        members = list(groups.values())
    return keys, members


def _knobs_former(pattern: list, order: list, many: bool = True) -> tuple[np.ndarray, np.ndarray]:
    as_text = many and set(map(type, chain(pattern, order))) <= {str}  # (in C)
    return ((np.array(pattern) if as_text else np.array(pattern, dtype=object)),
            (np.array(order) if as_text else np.array(order, dtype=object)))


def _arrays_columns_former(keys: tuple[tuple, ...]) -> list[np.ndarray]:
    col = {i: list(map(itemgetter(i), keys)) for i in (0, 1, 2, 3, 4, 13, 14)}
    return [np.array(col[0]).astype(np.int64), np.array(col[1]).astype(np.int64),
            np.rint(np.array(col[2], dtype=float) * 1024), np.rint(np.array(col[3], dtype=float) * 1024),
            np.floor_divide(np.array(col[4]).astype(np.int64), 8), np.array(col[13]).astype(np.int64),
            np.array(col[14]).astype(bool)]


def _same_array(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    else:
        assert a.tolist() == b.tolist() and [type(x) for x in a.tolist()] == [type(x) for x in b.tolist()]


# ------------------------------------------------------------------ _distinct: every point its own combination
def _reprs(keys) -> list:
    """Tuples by their values' types and texts (NaN is not equal to itself: compared by what it shows)."""
    return [[(type(v), repr(v)) for v in k] for k in keys]


_FLOATS = st.sampled_from([0.25, 1.0, 1.5, 4.0, -0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e300, 5e-324])


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_distinct_is_what_dict_fromkeys_keeps(data):
    """``_distinct(col)`` says exactly whether ``dict.fromkeys`` of the column's values keeps every one (NaN of either
    sign unequal to everything, -0.0 equal to 0.0, ints, equal values); where it says so, the former tuples of the
    points (any other columns, objects and texts too) are every point in order, without groups."""
    n = data.draw(st.integers(0, 40))
    kind = data.draw(st.sampled_from(["f", "i", "o", "b"]))
    if kind == "f":
        col = np.array(data.draw(st.lists(st.one_of(_FLOATS, st.floats(-1e6, 1e6)), min_size=n, max_size=n)), float)
    elif kind == "i":
        col = np.array(data.draw(st.lists(st.integers(-2**63, 2**63 - 1), min_size=n, max_size=n)), np.int64)
    elif kind == "o":
        col = np.array(data.draw(st.lists(st.floats(0, 4), min_size=n, max_size=n)) + [None], dtype=object)[:n]
    else:
        col = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool).reshape(n)
    assert em._distinct(col) == (kind in "fi" and len(dict.fromkeys(col.tolist())) == len(col))
    other = [np.array(data.draw(st.lists(st.sampled_from(["auto", "A", None, 3]), min_size=n, max_size=n)) + [None],
                      dtype=object)[:n], np.zeros(n, np.int64)]
    if em._distinct(col):
        keys, members = _keys_former([col] + other)
        assert members is None and _reprs(keys) == _reprs(list(em.KeyColumns([col] + other)))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_key_columns_give_the_former_tuples_lists_and_arrays(data):
    """:class:`KeyColumns` iterates as the former tuples (slices too); ``_key_list`` is the former list of a value,
    and ``_arrays``' numbers from the columns (int64, int32, float, bool, objects, read-only arrays) equal those the
    former code converted from the tuples, dtype and bits; the arrays' objects are equal."""
    n = data.draw(st.integers(em.HW_COLUMNS_FROM, 60))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    rows_dt = data.draw(st.sampled_from([np.int64, np.int32, float, object]))
    cols = [rng.integers(1, 64, n).astype(rows_dt), rng.choice([2, 4, 8], n).astype(data.draw(
            st.sampled_from([np.int64, object]))), rng.uniform(0.25, 64, n), rng.choice([0.0, 16.0, 96.5], n),
            rng.choice([8, 16, 32], n), np.array(rng.choice(["auto", "A", "single", "pairs"], n), dtype=object),
            np.array(["auto"] * n, dtype=object), rng.integers(0, 2, n).astype(bool), np.array(["after_conv"] * n,
            dtype=object), np.array(["auto"] * n, dtype=object), np.array(["auto"] * n, dtype=object),
            np.array(["auto"] * n, dtype=object), rng.integers(0, 5, n), np.array(rng.integers(0, 3, n), dtype=object)
            if data.draw(st.booleans()) else rng.integers(0, 3, n), rng.integers(0, 2, n).astype(bool)]
    if data.draw(st.booleans()):
        cols[2] = cols[2].astype(np.float32)
    const = {}
    v13 = data.draw(st.sampled_from([None, 0, 3, 2.0]))
    if v13 is not None:  # (a parameter the model does not have: one default value, as evaluate_layers fills it)
        cols[13], const = np.array([v13] * n + [None], dtype=object)[:n], {13: v13}
    for c in cols:
        c.flags.writeable = False
    kc = em.KeyColumns(cols, const)
    keys = tuple(zip(*[c.tolist() for c in cols]))
    assert _reprs(kc) == _reprs(keys)
    lo, hi = sorted(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
    assert _reprs(kc[lo:hi]) == _reprs(keys[lo:hi]) and len(kc[lo:hi]) == hi - lo
    for i in range(len(cols)):
        assert _reprs([em._key_list(kc, i)]) == _reprs([list(map(itemgetter(i), keys))])
        for dtype in ((None, float) if i in (2, 3) else (None,)):
            got_a, want_a = em._key_array(kc, i, dtype), np.array(list(map(itemgetter(i), keys)), dtype=dtype)
            assert np.array_equal(got_a.astype(want_a.dtype), want_a) and (got_a.dtype == want_a.dtype or
                                                                          i not in const and cols[i].dtype != object)
    for arch in ("emaxv", "emaxvr"):
        got, want = em._arrays(arch, kc), em._arrays(arch, keys)
        for g, w in zip(got, want):
            assert list(g.numbers) == list(w.numbers)
            for k in w.numbers:
                _same_array(g.numbers[k], w.numbers[k])
            assert list(g) == list(w)
        for a, b in zip(_arrays_columns_former(keys), [got[0].numbers[k] for k in em.HW_NUMBERS]):
            assert np.array_equal(a.astype(np.int64), b)


# ------------------------------------------------------------------ _knob_texts: the knobs as fixed-width text
_KNOBS = st.sampled_from(["auto", "A", "single", "pairs", "", "OC_OH_OW", None, 3, 2.5, _Text("A")])


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_knob_texts_are_the_former_arrays(data):
    """The chunk's pattern and loop-order knobs equal the former arrays (fixed-width text of the longest value's
    width where every value of both lists is a ``str``, else objects), dtype and values, from lists of texts, empty
    texts, other objects and str subclasses (equal to a text: still objects); lists of one value (a default)."""
    n = data.draw(st.integers(1, 40))
    pattern = data.draw(st.lists(_KNOBS, min_size=n, max_size=n))
    order = data.draw(st.lists(_KNOBS, min_size=n, max_size=n))
    if data.draw(st.booleans()):  # (the loop order a default: one value everywhere)
        order = [data.draw(_KNOBS)] * n
        if data.draw(st.booleans()):
            order[data.draw(st.integers(0, n - 1))] = _Text(order[0]) if isinstance(order[0], str) else order[0]
    if data.draw(st.booleans()):
        pattern = [data.draw(_KNOBS)] * n
    got = em._knob_texts(pattern, order)
    want = _knobs_former(pattern, order)
    if got is None:
        assert want[0].dtype == object and want[1].dtype == object
        return
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tolist() == w.tolist()


# ------------------------------------------------------------------ whole batches: columns or tuples
def _random_rows(arch: str, n: int, seed: int, repeat: bool = False) -> list[dict]:
    """Random points (distinct LMM sizes: every point its own combination), a third with small arrays and LMMs
    (layers without a plan: reasons, NaN), some under criterion=dram (tile searches), every pattern knob; with
    ``repeat``, some points twice (combinations grouped: the tuples' path)."""
    m = get_model(arch)
    rng = np.random.default_rng(seed)
    rows = m.params.random_rows(n, rng)
    for r in rows[: n // 3]:
        r.update(rows=int(rng.choice([4, 8, 12])), lmm_kb=float(rng.uniform(0.25, 4.0)))
    for r in rows[n // 3: n // 2]:
        r["criterion"] = "dram"
    if repeat:
        rows[n // 2:] = rows[: n - n // 2]
    return rows


def _contracts(arch: str, wl: str, rows: list[dict], at: list[int]) -> list[str]:
    m = get_model(arch)
    em.workload_plans.cache_clear()
    r = m.evaluate_batch(load_workload(wl), m.params.points(rows))
    return [json.dumps(r.point(i), sort_keys=False, default=str) for i in at]


@pytest.mark.parametrize("arch,wl,n,seed,repeat", [("emaxv", "vgg16-conv", 300, 3, False),  # two chunks (CHUNK_OF below)
                                                   ("emaxv", "vgg16", 90, 5, False),  # FC layers
                                                   ("emaxv", "alexnet", 40, 8, True),  # grouped: tuples
                                                   ("emaxvr", "alexnet", 24, 7, False)])
def test_batches_equal_with_and_without_key_columns(arch, wl, n, seed, repeat):
    """Whole batches give with :class:`KeyColumns` what the tuples give (``KEY_COLUMNS`` False: the former path),
    every metric, state, reason, label and total bit for bit and keys in order, and the contract dictionaries of
    some points text for text; the columns are taken exactly where every point is its own combination."""
    rows = _random_rows(arch, n, seed, repeat)
    at = [0, 1, n // 3, n - 1]
    made = []
    real = em.KeyColumns.__init__

    def spy(self, *a, **k):
        made.append(len(a[0][0]))
        real(self, *a, **k)

    chunks = mock.patch.dict(em.CHUNK_OF, {"emaxv": 13 * 150})  # (VGG16-conv: 300 points in two chunks)
    with chunks, mock.patch.object(em.KeyColumns, "__init__", spy):
        got, got_c = _everything(arch, wl, rows), _contracts(arch, wl, rows, at)
    assert bool(made) == (not repeat)
    with chunks, mock.patch.object(em, "KEY_COLUMNS", False), mock.patch.object(em.KeyColumns, "__init__", spy):
        made.clear()
        want, want_c = _everything(arch, wl, rows), _contracts(arch, wl, rows, at)
        assert not made
    _same(got, want)
    assert got_c == want_c


# ------------------------------------------------------------------ _column_moves: a block's matrices column by column
def _slot_moves(data, n: int):
    """A random :class:`_SlotMoves`: slot columns as arrays of several dtypes (NaN, infinities, -0.0, negative
    counts) or scalars, some slots sharing a column, staging and host columns or none."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ns, nst, nh = data.draw(st.integers(1, 5)), data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, 2.5, -3.0, 7.0])

    def column(kind: str):
        pick = data.draw(st.sampled_from(["float", "int", "bool", "scalar"]))
        if pick == "scalar":
            return data.draw(st.sampled_from([0, 1, 2.5, -0.0, np.nan, True, False])) if kind != "bool" else \
                data.draw(st.booleans())
        if pick == "int":
            return rng.integers(-2, 6, n)
        if pick == "bool":
            return rng.random(n) < 0.6
        return rng.choice(special, n) if kind != "bool" else rng.choice(special, n)

    shared = column("float")
    cols = {k: tuple(shared if data.draw(st.booleans()) and k != "on" else column("bool" if k in ("on", "dram")
                     else "float") for _ in range(ns)) for k in ("on", "bursts", "per_burst", "each", "dram", "par")}
    return traffic._SlotMoves(
        n, cols["on"], cols["bursts"], cols["per_burst"], cols["each"], cols["dram"], cols["par"],
        rng.integers(0, 5, ns), rng.random(ns) < 0.5, rng.integers(0, 5, ns + nst),
        tuple(column("bool") for _ in range(nst)), tuple(column("float") for _ in range(nst)),
        tuple(column("float") for _ in range(nst)), tuple(column("bool") for _ in range(nh)),
        tuple(column("float") for _ in range(nh)), rng.integers(0, 5, nh))


_MATRICES = ("xfer_on", "bursts", "per_burst", "par", "dram", "rd_on", "rd_count", "rd_each", "h_on", "h_bytes")


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_column_moves_give_the_matrices_columns(data):
    """Every column of every matrix of a block of ``_column_moves`` (a plain ``_Moves``), read in any order (a column read twice: the same
    array), equals that column of the former :meth:`_SlotMoves.take` of every plan in dtype and bits; its widths
    are the matrices'; a matrix read whole, the sub-tables and the copies of rows are the former ones."""

    n = data.draw(st.integers(1, 30))
    slots = _slot_moves(data, n)
    full = slots.take(np.arange(n), every=True)  # (the former matrices)
    cm = traffic._column_moves(slots)
    assert type(cm) is traffic._Moves
    order = [(k, j) for k in _MATRICES for j in range(getattr(full, k).shape[1])]
    order = data.draw(st.permutations(order))
    with np.errstate(invalid="ignore"):
        for k, j in order:
            got = cm.col(k, j)
            want = getattr(full, k)[:, j]
            assert got.dtype == want.dtype and got.shape == want.shape, (k, j)
            assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8)), (k, j)
            assert cm.col(k, j) is got
    for k in _MATRICES:
        assert cm.width(k) == getattr(full, k).shape[1] == full.width(k)
    assert cm.__dict__["_lazy"]._full is None and not set(_MATRICES) & set(cm.__dict__)  # (no matrix built)
    for k in _MATRICES:
        assert np.array_equal(_u8(getattr(cm, k)), _u8(getattr(full, k)))
    rows = np.arange(n)[::-1].copy()
    for a, b in ((cm.take(rows), full.take(rows)), (cm, full)):
        for k in _MATRICES:
            assert np.array_equal(_u8(getattr(a, k)), _u8(getattr(b, k)))
    r1, c1 = cm.read()
    r2, c2 = full.read()
    assert np.array_equal(r1, r2) and all(np.array_equal(_u8(c1[k]), _u8(c2[k])) for k in c2)


def _u8(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 150, 11), ("emaxv", "vgg16", 150, 12),
                                            ("emaxvr", "alexnet", 24, 13)])
def test_batches_equal_with_and_without_column_moves(arch, wl, n, seed):
    """Whole batches read a chunk's block column by column (``_column_moves``) as from the former matrices
    (``COLUMN_MOVES_FROM`` huge: ``take`` of every plan), every metric, state, reason, label and total bit for bit;
    an EMAXV chunk builds no matrix whole."""

    rows = _random_rows(arch, n, seed)
    built = []
    real = traffic._SlotMoves.take

    def spy(self, r, every=False):
        built.append(len(r))
        return real(self, r, every)

    with mock.patch.object(traffic._SlotMoves, "take", spy):
        got = _everything(arch, wl, rows)
    if arch == "emaxv" and wl == "vgg16-conv":
        assert not built
    with mock.patch.object(traffic, "COLUMN_MOVES_FROM", 1 << 60):
        want = _everything(arch, wl, rows)
    _same(got, want)


def test_column_moves_count_nans_as_the_block_product():
    """Bursts and per-burst counts NaN of opposite signs in every cell: each count column keeps the NaN the block's
    product (the former matrices') gives, which a product column by column may not (numpy's SIMD body and scalar
    tail pick different operands)."""
    n, ns = 37, 4
    a, b = np.full(n, np.nan), np.full(n, -np.nan)
    slots = traffic._SlotMoves(n, (True,) * ns, (a, b, a, b), (b, a, b, a), (1.0,) * ns, (True,) * ns, (1.0,) * ns,
                               np.arange(ns), np.zeros(ns, bool), np.zeros(ns, np.int64), (), (), (), (), (),
                               np.zeros(0, np.int64))
    full, cm = slots.take(np.arange(n), every=True), traffic._column_moves(slots)
    for j in range(ns):
        assert np.array_equal(_u8(cm.col("rd_count", j)), _u8(full.rd_count[:, j]))


# ------------------------------------------------------------------ SlotColumns: parts concatenated when first read
def _slot_numbers_former(by_pattern, by_fit, at_pattern, at_fit, pload):
    from archmodels.emax import mapper

    out = mapper.SlotColumns()
    for f in mapper._NUMBERS:
        got = by_fit.get(f) or by_pattern.get(f)
        if f == "pload":
            out.put(f, pload)
        elif not got:
            out.put(f, np.zeros(len(at_pattern)))
        else:
            col = np.concatenate(got) if len(got) > 1 else got[0]
            out.lazy(f, col, at_fit if f in by_fit else at_pattern, True)
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_slot_columns_of_parts_equal_the_concatenated_base(data):
    """A column whose base is given as parts (the same part twice too) reads, whole or gathered at rows before and
    after it is built, as the former concatenated base: ``base[at].astype(float)`` (int64 up to +-2**63: the
    conversion rounds) or the objects; a column never read is never concatenated."""
    from archmodels.emax import mapper

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    m = data.draw(st.integers(1, 12))
    parts = [rng.integers(-2**63, 2**63 - 1, m, dtype=np.int64) for _ in range(data.draw(st.integers(1, 3)))]
    if data.draw(st.booleans()):
        parts.append(parts[0])  # (an input mode no slot runs: the other's numbers again)
    base = np.concatenate(parts)
    at = rng.integers(0, len(base), data.draw(st.integers(0, 40)))
    rows = rng.integers(0, len(at), data.draw(st.integers(0, 30))) if len(at) else np.zeros(0, np.int64)
    to_float = data.draw(st.booleans())
    got, want = mapper.SlotColumns(), mapper.SlotColumns()
    got.lazy("x", list(parts), at, to_float)
    got.lazy("unread", list(parts), at, to_float)
    want.lazy("x", base, at, to_float)
    first = data.draw(st.sampled_from(["gather", "whole"]))
    for how in (first, "gather", "whole"):
        g, w = (got.gather("x", rows), want.gather("x", rows)) if how == "gather" else (got["x"], want["x"])
        assert g.dtype == w.dtype and np.array_equal(_u8(g), _u8(w))
    assert isinstance(got._src["unread"][0], list)


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 150, 21), ("emaxvr", "alexnet", 40, 22)])
def test_batches_equal_with_the_former_slot_numbers(arch, wl, n, seed):
    """Whole batches (the mapper's columns from parts) equal those of the former ``_slot_numbers`` (every base
    concatenated at once), every metric, state, reason, label and total bit for bit."""
    from archmodels.emax import mapper

    rows = _random_rows(arch, n, seed)
    got = _everything(arch, wl, rows)
    with mock.patch.object(mapper, "_slot_numbers", _slot_numbers_former):
        want = _everything(arch, wl, rows)
    _same(got, want)


# ------------------------------------------------------------------ LazyTextColumns.put with a mask
def _put_former(self, which, col_of, at, tab, rows, flat=None):
    part = np.array([len(t) for t in self.tables])
    for i in which:
        self.tables[i].append(tab)
    self._changed(which)
    if flat is None:
        flat = col_of * self.n + at
    fixed, part_of, row = (a.reshape(-1) for a in (self.fixed, self.part, self.row))  # (views: C-contiguous)
    has = rows >= 0
    if has.all():  # (the chosen plans: every point has one)
        part_of[flat] = part[col_of]
        row[flat] = rows
        return
    none = flat[~has]
    fixed[none] = "-"
    part_of[none] = -1
    part_of[flat[has]] = part[col_of[has]]
    row[flat[has]] = rows[has]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_put_with_a_mask_equals_the_former_put(data):
    """Chunks of pairs put one after another (columns holding different numbers of tables, rows all chosen, none
    or some, points in order or not, so the mask is or is not used) leave the texts' arrays and tables the former
    ``put`` leaves."""
    from archmodels.emax.explain import LazyTextColumns

    nl, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 12))
    got, want = LazyTextColumns(nl, n, str), LazyTextColumns(nl, n, str)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    for _ in range(data.draw(st.integers(1, 4))):
        cells = np.flatnonzero((rng.random(nl * n) < 0.7) & np.repeat(rng.random(nl) < 0.6, n))  # (some layers)
        if data.draw(st.booleans()):
            rng.shuffle(cells)
        layer_of, at = cells // n, cells % n
        which = sorted(set(layer_of.tolist()))
        rows = {"all": rng.integers(0, 9, len(cells)), "none": np.full(len(cells), -1),
                "some": rng.integers(-1, 9, len(cells))}[data.draw(st.sampled_from(["all", "none", "some"]))]
        flat = layer_of * n + at
        to = flat
        if data.draw(st.booleans()):
            with mock.patch.object(em, "SCATTER_MASK_FROM", 0):  # (a mask where the positions increase)
                to = em._scatter_index(flat, nl * n)
        tab = object()
        got.use_index(flat, to)
        got.put(which, layer_of, at, tab, rows, flat)
        _put_former(want, which, layer_of, at, tab, rows, flat)
        assert got.fixed.tolist() == want.fixed.tolist()
        assert np.array_equal(got.part, want.part) and np.array_equal(got.row, want.row)
        assert [[id(t) for t in ts] for ts in got.tables] == [[id(t) for t in ts] for ts in want.tables]

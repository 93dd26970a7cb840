"""EMAXVR batched, fourteenth round (issue 15): each change compared with the code before it (kept here as the
oracle, verbatim but for names) bit for bit: boolean columns gathered as the bits of one column
(:func:`traffic._gather_bools`, :meth:`traffic._Gather.gather_bools`, :func:`traffic._variant_flags`), the
(row, variant) pairs from bits (:func:`traffic._allowed_bits`), ``np.where(on, x, 0.0)`` with a scalar True
(:func:`traffic._where0`), and whole batches with the former paths patched back."""

from __future__ import annotations

from contextlib import ExitStack
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels.emax import mapper, timing, traffic
from archmodels.emax.mapper import nonzero_2d

from .test_emax_batched16 import _everything, _same
from .test_emax_batched17 import _random_rows

_ODD = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1e308, 5e-324, 3.0]


# ------------------------------------------------------------------ the oracles: the code before this round
def _variant_flags_former(var):
    return tuple(col[var] for col in traffic._FLAG_COLUMNS)


def _allowed_former(allowed_m, mrow, row):
    flags = np.array(traffic.VR_VARIANTS, dtype=bool)
    allowed = allowed_m[mrow]
    allowed[:, flags[:, 1]] &= (~(row["keep"] & ~row["has_pool"]))[:, None]
    allowed &= ~row["bad"][:, None]
    allowed[:, flags[:, 2]] &= row["halo_rows"][:, None]
    allowed[:, flags[:, 3]] &= row["inner_ok"][:, None]
    return nonzero_2d(allowed)


def _where0_former(on, x):
    return np.where(on, x, 0.0)


def _bools(draw, n: int) -> np.ndarray:
    a = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    how = draw(st.sampled_from(["as is", "as is", "strided", "broadcast"]))
    if how == "strided":
        return np.repeat(a, 2)[::2]
    if how == "broadcast":
        return np.broadcast_to(a[:1], (n,)) if n else a
    return a


@st.composite
def _columns(draw):
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, 16))
    cols = {f"c{i}": _bools(draw, n) for i in range(k)}
    if draw(st.booleans()):  # a column that is not boolean: gathered alone
        cols["x"] = np.array(draw(st.lists(st.sampled_from(_ODD), min_size=n, max_size=n)))
    at = np.array(draw(st.lists(st.integers(0, n - 1), max_size=60)), np.int64)
    return cols, at


@settings(max_examples=80, deadline=None)
@given(g=_columns())
def test_gather_bools_equals_each_gather(g):
    """_gather_bools: each column's ``c[at]`` (values, dtype, shape; up to 16 columns: uint8 and uint16 codes;
    strided and broadcast columns, a float column with NaN of both signs gathered alone, no rows)."""
    cols, at = g
    got = traffic._gather_bools(cols, at)
    assert list(got) != [] and set(got) == set(cols)
    for k, c in cols.items():
        want = c[at]
        assert got[k].dtype == want.dtype and got[k].shape == want.shape
        assert got[k].tobytes() == want.tobytes(), k


@settings(max_examples=50, deadline=None)
@given(g=_columns(), keys=st.lists(st.sampled_from(["c0", "c1", "c2", "c3", "x", "absent", "given"]), max_size=6))
def test_gather_object_gather_bools_equals_its_items(g, keys):
    """_Gather.gather_bools then ``v[k]``: the column ``v[k]`` alone gives (the first source holding it; a known
    column kept; absent ones skipped)."""
    cols, at = g
    split = {k: c for i, (k, c) in enumerate(cols.items()) if i % 2}
    rest = {k: c for i, (k, c) in enumerate(cols.items()) if not i % 2}
    given_col = np.ones(len(at), bool)
    sources = ((split, at), (rest, at[::-1].copy()), (cols, at))
    v = traffic._Gather(*sources, given=given_col)
    v.gather_bools(*keys)
    w = traffic._Gather(*sources, given=given_col)
    for k in [*keys, *cols]:
        if k in w:
            assert v[k].dtype == w[k].dtype and v[k].tobytes() == w[k].tobytes(), k
    assert v["given"] is given_col


@settings(max_examples=50, deadline=None)
@given(var=st.lists(st.integers(0, len(traffic.VR_VARIANTS) - 1), max_size=3000))
def test_variant_flags_equal_the_former(var):
    var = np.array(var, np.int64)
    for pack_from in (0, traffic.PACK_FROM):
        with mock.patch.object(traffic, "PACK_FROM", pack_from):
            got = traffic._variant_flags(var)
        want = _variant_flags_former(var)
        assert len(got) == len(want) == 4
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_allowed_bits_equal_the_former_pairs(data):
    """_allowed_bits: the former [row, variant] mask's gather, masking and nonzero pairs (rows and variants, int64,
    row by row), the row rules as arrays or broadcast views."""
    nm = data.draw(st.integers(1, 12))
    n = data.draw(st.integers(0, 50))
    allowed = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=9, max_size=9), min_size=nm,
                                          max_size=nm)), bool)
    mrow = np.array(data.draw(st.lists(st.integers(0, nm - 1), min_size=n, max_size=n)), np.int64)
    row = {k: _bools(data.draw, n) for k in ("keep", "has_pool", "bad", "halo_rows", "inner_ok")}
    got = traffic._allowed_bits(allowed, mrow, row)
    want = _allowed_former(allowed, mrow, row)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b)


@settings(max_examples=100, deadline=None)
@given(x=st.lists(st.sampled_from(_ODD), min_size=0, max_size=8), on=st.sampled_from([True, False, "array"]),
       mask=st.lists(st.booleans(), min_size=8, max_size=8), kind=st.sampled_from(["array", "float", "0-d"]))
def test_where0_equals_np_where(x, on, mask, kind):
    """_where0: ``np.where(on, x, 0.0)``'s bits (NaN of both signs, -0.0), dtype and shape."""
    xs = np.array(x, float) if kind == "array" else 3.5 if kind == "float" else np.array(-np.nan)
    c = np.array(mask[:len(x)], bool) if on == "array" and kind == "array" else on if on != "array" else True
    got, want = traffic._where0(c, xs), _where0_former(c, xs)
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == want.shape
    assert np.asarray(got).tobytes() == want.tobytes()


@pytest.mark.parametrize("wl,n,seed", [("vgg16", 90, 81),  # conv, FC and pooling layers, several contexts
                                       ("alexnet", 40, 82),
                                       ("vgg16", 1, 83)])  # one design point
@pytest.mark.parametrize("pack_from", [None, 0])  # (0: the bits' paths for every table, one design point's too)
def test_emaxvr_batches_equal_the_former_paths(wl, n, seed, pack_from):
    """Whole EMAXVR batches (random points; a third with small arrays and LMMs: layers without a plan, NaN; some under
    criterion=dram: tile searches) give every metric, state, reason and total bit for bit as with the former paths
    (each boolean column gathered alone, the [row, variant] mask, ``np.where``)."""
    rows = _random_rows("emaxvr", n, seed)
    with mock.patch.object(traffic, "PACK_FROM", traffic.PACK_FROM if pack_from is None else pack_from):
        got = _everything("emaxvr", wl, rows)
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(traffic, "PACK_FROM", 2**62))
        stack.enter_context(mock.patch.object(traffic, "_where0", _where0_former))
        want = _everything("emaxvr", wl, rows)
    _same(got, want)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), rows=st.lists(st.integers(0, 29), max_size=40), width=st.sampled_from([0, 2]),
       take_from=st.sampled_from([0, 3, 1024]), sub=st.sampled_from(["all", "half", "slice", "mask"]))
def test_rows_getter_equals_rows_of(n, rows, width, take_from, sub):
    """mapper.rows_getter(at): for rows ``at`` and its subsets, a slice or a mask, ``_rows_of``'s values, dtype and
    shape (1-D and 2-D floats with NaN of both signs); timing._Take the same."""
    a = np.array([_ODD[i % len(_ODD)] for i in range(n * max(width, 1))], float).reshape((n, width) if width else n)
    at = np.array([r % n for r in rows], np.int64)
    part = {"all": at, "half": at[::2], "slice": slice(1, None), "mask": np.arange(n) % 2 == 0}[sub]
    with mock.patch.object(mapper, "TAKE_FROM", take_from):
        got = mapper.rows_getter(at)(a, part)
        want = mapper._rows_of(a, part)
        took = timing._Take(at, False)(a)
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
    former = a[at]
    assert took.shape == former.shape and took.tobytes() == np.ascontiguousarray(former).tobytes()

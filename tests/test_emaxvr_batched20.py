"""EMAXVR batched, thirteenth round (issue 15): each change compared with the code before it (kept here as the
oracle, verbatim but for names) bit for bit: the row gathers by ``take`` (:func:`mapper._rows_of`) on any dtype,
shape and index, and whole batches with the former gathers patched back."""

from __future__ import annotations

from contextlib import ExitStack
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels.emax import mapper, model, timing, traffic

from .test_emax_batched16 import _everything, _same
from .test_emax_batched17 import _random_rows

_ODD = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1e308, 5e-324, 3.0]


# ------------------------------------------------------------------ the oracle: the code before this round
def _rows_of_former(a, at):
    return a[at]


def _column(draw, kind: str, n: int, width: int):
    """A column of n rows (width 0: 1-D) of dtype kind, odd floats included."""
    shape = (n,) if width == 0 else (n, width)
    size = int(np.prod(shape))
    if kind == "f":
        return np.array(draw(st.lists(st.sampled_from(_ODD), min_size=size, max_size=size)), float).reshape(shape)
    if kind == "i":
        return np.array(draw(st.lists(st.integers(-2**63, 2**63 - 1), min_size=size, max_size=size)),
                        np.int64).reshape(shape)
    if kind == "b":
        return np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), bool).reshape(shape)
    if kind == "u":
        return np.array(draw(st.lists(st.sampled_from(["", "ab", "output-row", "-"]), min_size=size, max_size=size))
                        ).reshape(shape)
    return np.array(draw(st.lists(st.sampled_from([None, 1, "x", 2.5]), min_size=size, max_size=size)),
                    dtype=object).reshape(shape)


@st.composite
def _gathers(draw):
    n = draw(st.integers(1, 30))
    a = _column(draw, draw(st.sampled_from("fibuo")), n, draw(st.sampled_from([0, 0, 1, 3])))
    if draw(st.booleans()) and a.ndim == 2:
        a = np.asfortranarray(a)
    if draw(st.booleans()):
        a = a[::-1]  # (a strided view)
    how = draw(st.sampled_from(["int64", "int32", "uint8", "neg", "mask", "slice", "empty"]))
    rows = draw(st.lists(st.integers(0, n - 1), max_size=40))
    if how == "mask":
        at = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    elif how == "slice":
        at = slice(draw(st.integers(0, n)), None)
    elif how == "empty":
        at = np.zeros(0, np.int64)
    elif how == "neg":
        at = np.array(rows, np.int64) - n
    else:
        at = np.array(rows, dtype=how)
    return a, at


@settings(max_examples=300, deadline=None)
@given(g=_gathers())
def test_rows_of_equals_the_former_gather(g):
    """``_rows_of`` gives ``a[at]``'s values, dtype and shape (NaN bits, -0.0, texts, objects, 2-D rows, F order and
    strided views; int64, int32, uint8 and negative indices, a boolean mask, a slice, none)."""
    a, at = g
    want = _rows_of_former(a, at)
    for take_from in (0, mapper.TAKE_FROM):  # (every index by take; few rows by indexing)
        with mock.patch.object(mapper, "TAKE_FROM", take_from):
            got = mapper._rows_of(a, at)
        assert got.dtype == want.dtype and got.shape == want.shape
        if a.dtype.kind in "fib":
            assert got.tobytes() == np.ascontiguousarray(want).tobytes()
        else:
            assert got.tolist() == want.tolist()


def test_rows_of_raises_as_the_former_out_of_range():
    a = np.arange(5.0)
    for at in (np.array([5]), np.array([-6])):
        with pytest.raises(IndexError), mock.patch.object(mapper, "TAKE_FROM", 0):
            mapper._rows_of(a, at)
        with pytest.raises(IndexError):
            mapper._rows_of(a, at)
        with pytest.raises(IndexError):
            _rows_of_former(a, at)


@pytest.mark.parametrize("wl,n,seed", [("vgg16", 90, 71),  # conv, FC and pooling layers, several contexts
                                       ("alexnet", 40, 72),
                                       ("vgg16", 1, 73)])  # one design point (the per-plan counts)
@pytest.mark.parametrize("take_from", [None, 0])  # (0: every integer gather by take)
def test_emaxvr_batches_equal_the_former_gathers(wl, n, seed, take_from):
    """Whole EMAXVR batches (random points; a third with small arrays and LMMs: layers without a plan, NaN; some under
    criterion=dram: tile searches) give every metric, state, reason and total bit for bit as with ``a[at]``."""
    rows = _random_rows("emaxvr", n, seed)
    with mock.patch.object(mapper, "TAKE_FROM", mapper.TAKE_FROM if take_from is None else take_from):
        got = _everything("emaxvr", wl, rows)
    with ExitStack() as stack:
        for mod in (mapper, traffic, timing, model):
            stack.enter_context(mock.patch.object(mod, "_rows_of", _rows_of_former))
        stack.enter_context(mock.patch.object(mapper, "TAKE_FROM", 2**62))  # (the inline one: by indexing)
        want = _everything("emaxvr", wl, rows)
    _same(got, want)

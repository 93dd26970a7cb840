"""IMAX batched paths of issue 15's eighth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodels.imax import schedule as S


def _np_distinct_rows(cols: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The seventh round's ``distinct_rows``: ``np.unique`` of the mixed-radix codes (or of the rows)."""
    cols = [np.asarray(c, dtype=np.int64) for c in cols]
    radix = [int(c.max()) + 1 if len(c) else 1 for c in cols]
    if np.prod(np.array(radix, dtype=float)) < float(1 << 62):
        code = np.zeros(len(cols[0]), np.int64)
        for c, r in zip(cols, radix):
            code = code * r + c
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
        return first, np.asarray(inv).reshape(-1)
    _, first, inv = np.unique(np.stack(cols, axis=1), axis=0, return_index=True, return_inverse=True)
    return first, np.asarray(inv).reshape(-1)


def _same_arrays(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**40), max_size=60), st.integers(1, 50))
def test_unique_index_inverse_is_numpy_unique(values, spread):
    """First index of each distinct value (the first occurrence) and the inverse, as np.unique gives them."""
    code = np.array([v % spread if spread < 50 else v for v in values], dtype=np.int64)
    _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    f2, i2 = S.unique_index_inverse(code)
    _same_arrays(f2, first)
    _same_arrays(i2, np.asarray(inv).reshape(-1))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.lists(st.integers(1, 5000), min_size=1, max_size=6), st.integers(0, 2**31))
def test_distinct_rows_is_numpy_unique(n, highs, seed):
    """distinct_rows over columns of many or few distinct values (duplicated rows) == np.unique's."""
    rng = np.random.default_rng(seed)
    cols = tuple(rng.integers(0, h, n) for h in highs)
    for got, want in zip(S.distinct_rows(cols), _np_distinct_rows(cols)):
        _same_arrays(got, want)


def test_distinct_rows_wide_codes():
    """Columns whose mixed-radix code would overflow take np.unique over the rows (unchanged)."""
    rng = np.random.default_rng(3)
    cols = tuple(rng.integers(0, 2**40, 200) // (2**35) * (2**35) for _ in range(3))
    for got, want in zip(S.distinct_rows(cols), _np_distinct_rows(cols)):
        _same_arrays(got, want)

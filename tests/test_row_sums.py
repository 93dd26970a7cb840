"""archmodels.result.row_sum / layer sums (issue 15): rows summed by a loop of in-place additions from
ROW_LOOP_FROM elements a row, by one np.add.accumulate below: the same additions in the same order, so the same
bits as seqsum's one row after the other, on both sides of the threshold."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import result


def _one_after_the_other(rows: np.ndarray) -> np.ndarray:
    total = rows[0].copy()
    for r in rows[1:]:
        total = total + r
    return total


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit where a value is a number (signed zeros included); NaN where the other is NaN, of either sign
    or payload: x86 keeps the first operand's NaN when both are NaN, and numpy's accumulate and its add loop put
    the operands of one addition in different places (the contract prints NaN without a sign)."""
    nan = np.isnan(a)
    return a.shape == b.shape and np.array_equal(nan, np.isnan(b)) and \
        np.array_equal(a[~nan].view(np.int64), b[~nan].view(np.int64))


@settings(max_examples=80, deadline=None)
@given(n_rows=st.integers(1, 30), keys=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       near=st.sampled_from([-3, -1, 0, 1, 5, 700]))
def test_row_sum_and_cube_sums_add_row_after_row(n_rows, keys, seed, near):
    rng = np.random.default_rng(seed)
    width = max(1, (result.ROW_LOOP_FROM + near) // keys)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e308, -1e308, 5e-324])
    cube = rng.standard_normal((keys, n_rows, width)) * 10.0 ** rng.integers(-20, 20, (keys, n_rows, width))
    mask = rng.random(cube.shape) < 0.05
    cube[mask] = rng.choice(special, int(mask.sum()))
    want = np.array([_one_after_the_other(cube[k]) for k in range(keys)])
    got = result._cube_sums(cube)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert _same_bits(got, want)
    for k in range(keys):
        assert _same_bits(result.row_sum(cube[k]), want[k])
    rows = cube[0].copy()
    before = rows.copy()
    result.row_sum(rows)
    assert np.array_equal(rows.view(np.int64), before.view(np.int64))  # the input is not altered

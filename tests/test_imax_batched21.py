"""IMAX batched paths of issue 15's nineteenth round: each equals the code it replaced (kept below as the oracle, verbatim
but for names), value for value and dtype for dtype, and shares no array a later write could corrupt: one layer's total
time as the layer's own time row (``model._one_layer_sums``: model_totals only divides by it); the configurations'
``jds_top`` as a read-only view of one shared row of -1s (``schedule._minus_ones``); the wide columns of
``schedule.distinct_rows_any`` replaced by their ranks before its table (``schedule._ranked_wide``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import model as IM
from archmodels.imax import schedule as S
from tests.test_imax_batched17 import _layer_sums_former
from workloads import load_workload

M = get_model("imax")


def _bits_same(a, b) -> None:
    """Equal arrays bit for bit (floats by their bits: NaN signs and payloads too), the same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        assert np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))
    else:
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- the former code (oracles)
def _one_layer_time_former(lb) -> np.ndarray:
    time = np.asarray(IM.metric_of(lb, "time_s"), dtype=float)
    return time.copy()


def _jds_top_former(units) -> np.ndarray:
    return np.full(len(units), -1)


# ---------------------------------------------------------------- _one_layer_sums
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 200))
def test_one_layer_time_row_and_totals_apart_from_layers(seed, n):
    """The time row _one_layer_sums gives == the former copy, bit for bit (NaNs of both signs planted); model_totals
    with that layer's metrics made read-only (nothing writes into the row it now reads) gives the totals it gives on
    writeable copies, and no total it stores shares memory with any layer metric."""
    rng = np.random.default_rng(seed)
    w = load_workload("spmm:n=96,sparsity=0.9")
    pts = M.params.points(M.params.random_rows(n, rng))
    (lb,) = M.evaluate_layers(w, pts)
    odd = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0])
    for k in IM._TOTAL_INPUTS:
        row = np.array(lb.metrics[k], dtype=float)
        at = rng.integers(0, n, n // 3)
        row[at] = rng.choice(odd, len(at))
        lb.metrics[k] = row
    _bits_same(IM._one_layer_sums(lb)[0], _one_layer_time_former(lb))
    for g, want in zip(IM._one_layer_sums(lb), _layer_sums_former([lb])):
        _bits_same(g, want)
    copies = {k: v.copy() for k, v in lb.metrics.items() if isinstance(v, np.ndarray)}
    want = M.model_totals(w, pts, [lb])
    for v in lb.metrics.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    got = M.model_totals(w, pts, [lb])
    assert list(got) == list(want)
    for k in got:
        _bits_same(got[k], want[k])
        assert not any(np.shares_memory(got[k], v) for v in lb.metrics.values() if isinstance(v, np.ndarray))
    for k, v in copies.items():
        _bits_same(lb.metrics[k], v)


# ---------------------------------------------------------------- configurations' jds_top
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0, 1, 3, 200, 1025, 5000]))
def test_configurations_jds_top_equals_the_former(seed, G):
    """``configurations``' jds_top == np.full(G, -1) (values, int64 dtype, shape) at any length (the shared row grows),
    read-only; every other number as before (the whole dict compared with the former jds_top put back)."""
    rng = np.random.default_rng(seed)
    args = (rng.integers(1, 1025, G), rng.choice([1, 2, 4, 8], G), rng.integers(1, 4097, G), rng.integers(1, 65, G))
    cfg = S.configurations(int(rng.integers(1, 900)), int(rng.integers(1, 900)), 96, None, *args,
                           mapping_codes=rng.integers(0, 3, G), caps_where_divisible=True)
    _bits_same(cfg["jds_top"], _jds_top_former(args[0]))
    assert cfg["jds_top"].dtype == np.int64 and not cfg["jds_top"].flags.writeable
    with pytest.raises(ValueError):
        cfg["jds_top"][:1] = 0


def test_shared_minus_ones_never_written():
    """Whole SpMM and network batches (their reasons read jds_top; their plans gather it) leave the shared row all -1."""
    rng = np.random.default_rng(5)
    for w in ("spmm:n=512,sparsity=0.9", "lenet"):
        M.evaluate_batch(load_workload(w), M.params.points(M.params.random_rows(300, rng)))
    assert len(S._MINUS_ONES) >= 300 and (S._MINUS_ONES == -1).all() and not S._MINUS_ONES.flags.writeable


# ---------------------------------------------------------------- distinct_rows_any's ranked wide columns
def _wide_columns(rng, n: int, k: int, kinds: list[str]) -> list[np.ndarray]:
    """Columns of few distinct values over wide spans (a tile's rows), few values, constant, or dense wide ones."""
    cols = []
    for kind in kinds[:k]:
        if kind == "sparse-wide":
            cols.append(rng.choice(rng.integers(0, 1 << int(rng.integers(8, 30)), int(rng.integers(1, 40))), n))
        elif kind == "few":
            cols.append(rng.integers(0, int(rng.integers(1, 5)), n))
        elif kind == "constant":
            cols.append(np.full(n, int(rng.integers(0, 1000))))
        elif kind == "offset":
            cols.append(rng.choice(rng.integers(10**6, 10**6 + 5000, 30), n))
        else:  # dense-wide: about as many values as rows (ranking cannot bring it under the table)
            cols.append(rng.integers(0, 50 * max(n, 1), n))
    return cols


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 500), st.integers(1, 5),
       st.lists(st.sampled_from(["sparse-wide", "few", "constant", "offset", "dense-wide"]), min_size=5, max_size=5))
def test_distinct_rows_any_ranked_equals_distinct_rows(seed, n, k, kinds):
    """distinct_rows_any (wide columns ranked first) == distinct_rows' inverse exactly, and an index of each distinct
    row whose row it is; the ranked columns give the same inverse as the columns themselves."""
    rng = np.random.default_rng(seed)
    cols = _wide_columns(rng, n, k, kinds)
    first, inv = S.distinct_rows_any(tuple(cols))
    _, want = S.distinct_rows(cols)
    _bits_same(inv, want)
    assert len(first) == int(want.max()) + 1
    for c in cols:
        _bits_same(c[first][inv], c)
    lo = [int(c.min()) for c in cols]
    radix = [int(c.max()) - x + 1 for c, x in zip(cols, lo)]
    ranked, r2, lo2 = S._ranked_wide([c.astype(np.int64) for c in cols], radix, lo, n)
    _bits_same(S.distinct_rows(ranked)[1], want)
    for c, r, least in zip(ranked, r2, lo2):
        assert int(c.min()) - least >= 0 and int(c.max()) - least < r


def test_distinct_rows_any_ranks_on_a_tile_batch(monkeypatch):
    """An SpMM n=1024 batch (its heads' tile columns span ~1,000 values, a few of them used) ranks them and takes the
    table, and its reasons equal those of the sort (the table turned off)."""
    w = load_workload("spmm:n=1024,sparsity=0.95")
    pts = M.params.points(M.params.random_rows(400, np.random.default_rng(3)))
    calls = []
    real = S._ranked_wide

    def spy(cols, radix, lo, n):
        out = real(cols, radix, lo, n)
        calls.append(np.prod(out[1], dtype=float) <= S._TABLE_PER_ROW * n)
        return out

    monkeypatch.setattr(S, "_ranked_wide", spy)
    a = M.evaluate_batch(w, pts)
    assert calls and all(calls)
    monkeypatch.setattr(S, "_TABLE_PER_ROW", 0)
    b = M.evaluate_batch(w, pts)
    assert a.layers[0].reason.tolist() == b.layers[0].reason.tolist()
    assert any(r for r in a.layers[0].reason.tolist())

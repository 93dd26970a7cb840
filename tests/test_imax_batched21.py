"""IMAX batched paths of issue 15's nineteenth round: each equals the code it replaced (kept below as the oracle, verbatim
but for names), value for value and dtype for dtype, and shares no array a later write could corrupt: one layer's total
time as the layer's own time row (``model._one_layer_sums``: model_totals only divides by it); the configurations'
``jds_top`` as a read-only view of one shared row of -1s (``schedule._minus_ones``); the wide columns of
``schedule.distinct_rows_any`` replaced by their ranks before its table (``schedule._ranked_wide``); a batch run's
metric and state rows as the rows of one NaN-filled block (``model._fill_at``); one layer's energy parts as 0.0 plus
its rows (``model._one_layer_parts`` for ``result.layer_sums``' cube with a zero layer)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import model as IM
from archmodels.imax import schedule as S
from archmodels.result import ENERGY_PARTS, LayerBatch, layer_sums
from tests.test_imax_batched17 import _layer_sums_former, _same_batch_results
from tests.test_imax_batched19 import _same as _bits_same  # bit for bit, NaN signs and payloads too
from workloads import load_workload
from workloads.layers import Layer

M = get_model("imax")


# ---------------------------------------------------------------- the former code (oracles)
def _one_layer_time_former(lb) -> np.ndarray:
    time = np.asarray(IM.metric_of(lb, "time_s"), dtype=float)
    return time.copy()


def _energy_parts_former(layers, n) -> dict:
    return layer_sums(layers, ENERGY_PARTS, n, from_zero=True)


def _jds_top_former(units) -> np.ndarray:
    return np.full(len(units), -1)


def _fill_at_former(lb: LayerBatch, layer: Layer, r: dict, reps: int, dense_time: np.ndarray,
                    batch: IM._Batch) -> None:
    """The former _fill_at: one NaN-filled array per metric and state."""
    at = r["at"]
    pts = batch.pts
    nchip = pts["nchip"][at].astype(float)
    clock_hz = batch.clock_hz[at]
    g = dict(r, time=r["time"][at], H=r["H"][at])
    time_s, reads, writes, issued, lmm_bytes = IM._run_flows(g, nchip, reps)
    energy = np.full(len(at), np.nan)  # every point here has its node: all set below
    fma_j, lmm_j = np.full(len(at), np.nan), np.full(len(at), np.nan)  # the parts (compute, SRAM)
    vscale, lmm_kb = batch.vscale[at], pts["lmm_kb"][at]
    for node, mask in batch.nodes:
        sel = IM.S.nonzero_at(mask[at]) if len(batch.nodes) > 1 else slice(None)
        fma, lmm = IM.C.energy_terms_pj(issued[sel], lmm_bytes[sel], lmm_kb[sel], int(node))
        v = vscale[sel]
        energy[sel] = IM.C.on_chip_pj(fma, lmm, v) * 1e-12
        fma_j[sel], lmm_j[sel] = fma * v * 1e-12, lmm * v * 1e-12
    dram_j = batch.dram_energy_j(reads, writes, at)
    energy = energy + dram_j
    cycles = time_s * clock_hz
    with np.errstate(divide="ignore", invalid="ignore"):
        util = layer.macs / (cycles * nchip * pts["units"][at] * IM.C.SIMD)
        speedup = dense_time[at] / time_s
    slots = IM._rep(g["slots"], reps)  # (IM._rep: x * 1 is x; every value below is copied into its own row)
    useful = float(getattr(layer, "nnz", 0)) if isinstance(layer, IM.SpMM) else np.nan
    padding = slots - useful if isinstance(layer, IM.SpMM) else np.where(np.isnan(slots), np.nan, 0.0)
    values = [cycles, time_s, util, reads, writes, energy, speedup, None, g["util"], g["util_unopt"], None,
              g["agrp"], g["bgrp"], g["bgrp"], IM._rep(g["starts"], reps), IM._rep(g["a_groups"], reps), g["b_groups"],
              IM._rep(g["blocks"], reps), g["row_tiles"], g["col_tiles"], slots, padding, IM._rep(g["a_bytes"], reps),
              IM._rep(nchip * g["b_bytes"], reps), IM._rep(nchip * g["c_load_bytes"], reps), writes, fma_j, lmm_j, dram_j]
    values += [IM._rep(g[s], reps) for s in IM.STATES]
    rows = []
    for v in values:  # one array per metric (the copies lb.set would make; rows of one large block cost more:
        if v is None:  # a fresh 1 MB block page-faults in, small arrays reuse freed memory), each filled with NaN
            rows.append(None)  # (not a copy of one NaN row: a copy moves 8 bytes an element, by ``rep movsb``
            continue  # past a few KB, ~1 instruction a byte; the fill stores them, ~3x fewer)
        row = IM._filled_nan(lb.n)
        row[at] = v
        rows.append(row)
    rows[IM._DENSE_ROW], rows[IM._CHAIN_ROW] = dense_time.astype(float), r["H"].astype(float)  # every point
    lb.metrics.update(zip(IM._NAN_METRICS, rows))
    lb.states.update(zip(IM.STATES, rows[len(IM._NAN_METRICS):]))


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


# ---------------------------------------------------------------- _fill_at's rows of one block
@pytest.mark.parametrize("wl, n", [("spmm:n=512,sparsity=0.9", 400), ("spmm:n=1024,sparsity=0.95", 300),
                                   ("lenet", 200), ("matmul:n=256", 1100)])
def test_fill_at_block_rows_equal_the_former(monkeypatch, wl, n):
    """Whole batches (sparse, dense, a network; from 1,024 points the NaN fill is a product) with _fill_at's rows from
    one block == with the former row per metric: every metric, state, label, reason and total bit for bit; the rows
    of a layer overlap no other metric or state of any layer, and a write into one row leaves the others as they were."""
    w = load_workload(wl)
    pts = M.params.points(M.params.random_rows(n, np.random.default_rng(n)))
    new = M.evaluate_batch(w, pts)
    with monkeypatch.context() as mp:
        mp.setattr(IM, "_fill_at", _fill_at_former)
        old = M.evaluate_batch(w, pts)
    _same_batch_results(new, old)
    for la, lo in zip(new.layers, old.layers):  # (and every float by its bits: NaN signs and payloads)
        for k in la.metrics:
            _bits_same(la.metrics[k], lo.metrics[k])
        for k in la.states:
            _bits_same(la.states[k], lo.states[k])
    for k in new.totals:
        _bits_same(new.totals[k], old.totals[k])
    arrays = [(i, k, a) for i, lb in enumerate(new.layers)
              for k, a in list(lb.metrics.items()) + [("state " + s_, v) for s_, v in lb.states.items()]
              if isinstance(a, np.ndarray) and a.ndim == 1 and a.size > 1]
    for j, (i, k, a) in enumerate(arrays):
        assert not any(np.shares_memory(a, b) for _, _, b in arrays[j + 1:] if b is not a), (i, k)
    lb = new.layers[0]
    keep = {k: np.array(v) for k, v in lb.metrics.items() if isinstance(v, np.ndarray)}
    lb.metrics["time_s"][:] = -1.0
    for k, v in keep.items():
        if k != "time_s":
            _bits_same(lb.metrics[k], v)


# ---------------------------------------------------------------- one layer's energy parts
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 300), st.sampled_from(["array", "one", "int"]))
def test_one_layer_parts_equal_layer_sums(seed, n, kind):
    """_one_layer_parts == the former layer_sums from zero, bit for bit: NaNs of both signs and other payloads, a
    signalling NaN, infinities, zeros of both signs planted in each part's row; an int row; a part that is not an
    array of n points (one element) falls back (None); model_totals with the fallback forced gives the same totals."""
    rng = np.random.default_rng(seed)
    w = load_workload("spmm:n=96,sparsity=0.9")
    pts = M.params.points(M.params.random_rows(n, rng))
    (lb,) = M.evaluate_layers(w, pts)
    odd = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0])
    odd = np.concatenate((odd, np.frombuffer(np.array([0x7FF8000000000123, 0xFFF0000000000456, 0x7FF0000000000001],
                                                      np.uint64).tobytes())))
    for k in ENERGY_PARTS:
        row = np.array(lb.metrics[k], dtype=float)
        at = rng.integers(0, n, n // 2)
        row[at] = rng.choice(odd, len(at))
        lb.metrics[k] = row
    if kind == "int":
        lb.metrics[ENERGY_PARTS[1]] = rng.integers(-5, 5, n)
    if kind == "one":
        lb.metrics[ENERGY_PARTS[0]] = np.array([1.5])
        assert IM._one_layer_parts(lb, n) is None
        return
    got, want = IM._one_layer_parts(lb, n), _energy_parts_former([lb], n)
    assert list(got) == list(want)
    for k in got:
        _bits_same(got[k], want[k])
        assert not np.shares_memory(got[k], lb.metrics[k])


@pytest.mark.parametrize("wl", ["spmm:n=512,sparsity=0.9", "matmul:n=256"])
def test_model_totals_one_layer_parts_equal_the_former(monkeypatch, wl):
    """model_totals of one-layer workloads == with the former layer_sums (the new path turned off): every total bit
    for bit."""
    w = load_workload(wl)
    pts = M.params.points(M.params.random_rows(500, np.random.default_rng(9)))
    layers = M.evaluate_layers(w, pts)
    got = M.model_totals(w, pts, layers)
    with monkeypatch.context() as mp:
        mp.setattr(IM, "_one_layer_parts", lambda lb, n: None)
        want = M.model_totals(w, pts, layers)
    assert list(got) == list(want)
    for k in got:
        _bits_same(got[k], want[k])

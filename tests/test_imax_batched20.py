"""IMAX batched paths of issue 15's eighteenth round: each equals the code it replaced (kept below verbatim, but for
names, module prefixes and docstrings, as the oracle), bit for bit and dtype for dtype: the NaN rows as NaN times a row
of ones (:func:`archmodels.imax.model._filled_nan`); gathers at the model's own indices by ``take(mode="wrap")``
(:func:`archmodels.imax.schedule.gather`); a broadcast limit's lines not gathered (``model._limit_at``); one part's
plans merged without copying its arrays (``plans.merge_in_place``, ``_merged_feats``); rows of 1-D arrays stacked by one
concatenation (``schedule.stack_rows``); the reason lines' heads found by a table of their codes, not a sort
(``schedule.distinct_rows_any`` for ``distinct_rows``); one layer's leakage without the stack of one row
(``archmodels.base.add_static_energy``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import base as B
from archmodels import get_model
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from archmodels.result import LayerBatch, stacked
from tests.test_imax_batched17 import _same_batch_results
from tests.test_imax_batched19 import _same  # bit for bit, NaN signs and payloads too
from workloads import load_workload
from workloads.layers import MatMul, Workload

M = get_model("imax")


# ---------------------------------------------------------------- the former code (oracles)


def _filled_nan_former(n):
    out = np.empty(n)
    out.fill(np.nan)
    return out


def _gather_former(a, idx):
    return a[idx]


def _stack_former(arrays, out=None):
    return np.stack(arrays, out=out)


def _distinct_rows_any_former(cols):
    return S.distinct_rows(cols)


def _merge_former(G, parts):
    if len(parts) == 1 and len(parts[0][0]) == G:  # one part covering every configuration in order
        return parts[0][1]
    count = np.zeros(G, np.int64)
    owner, per = [], {}
    for idx, d in parts:
        count[idx] = d["count"]
        owner.append(np.repeat(idx, d["count"]))
        for k, v in d["per"].items():
            if k not in per:  # (not setdefault: its default would be built for every part)
                per[k] = np.zeros(G, np.asarray(v).dtype)
            per[k][idx] = v
    if not parts:
        return {"count": count, "feats": {k: np.zeros(0) for k in S.FEATURES}, "agrp": np.zeros(0, np.int64),
                "bgrp": np.zeros(0, np.int64), "per": per}
    owner = np.concatenate(owner)
    order = slice(None) if (owner[1:] >= owner[:-1]).all() else np.argsort(owner, kind="stable")
    cat = lambda key: np.concatenate([d[key] for _, d in parts])[order]  # noqa: E731
    feats, block = _merged_feats_former([d["feats"] for _, d in parts], order, [d.get("block") for _, d in parts])
    out = {"count": count, "feats": feats, "agrp": cat("agrp"), "bgrp": cat("bgrp"), "per": per}
    if block is not None:
        out["block"] = block
    return out


def _merge_in_place_former(G, parts):
    if len(parts) == 1 and len(parts[0][0]) == G:  # one part covering every configuration in order
        return parts[0][1]
    if not parts:
        return _merge_former(G, parts)
    count, first, row = np.zeros(G, np.int64), np.zeros(G, np.int64), np.zeros(G, np.int64)
    vals = {}
    off = rows = 0
    for idx, d in parts:
        c = np.asarray(d["count"], dtype=np.int64)
        count[idx] = c
        first[idx] = np.cumsum(c) - c + off
        off += int(c.sum())
        row[idx] = np.arange(rows, rows + len(idx))
        rows += len(idx)
        if d["per"].keys() != parts[0][1]["per"].keys():
            return _merge_former(G, parts)  # (parts with other problem numbers: merge's zero-filled arrays)
        for k, v in d["per"].items():
            if type(v) is not np.ndarray or v.shape != idx.shape:  # (a number for every configuration of the part)
                v = np.broadcast_to(v, idx.shape)
            vals.setdefault(k, []).append(v)
    # each number in the dtype of the first part's (as merge's arrays, assigned part by part, hold them)
    per = {k: np.concatenate(vs) if all(v.dtype == vs[0].dtype for v in vs[1:]) else
           np.concatenate(vs, dtype=vs[0].dtype, casting="unsafe") for k, vs in vals.items()}
    cat = lambda key: np.concatenate([d[key] for _, d in parts])  # noqa: E731
    feats, block = _merged_feats_former([d["feats"] for _, d in parts], slice(None), [d.get("block") for _, d in parts])
    out = {"count": count, "first": first, "feats": feats, "agrp": cat("agrp"), "bgrp": cat("bgrp"), "per": per,
           "per_row": row}
    if block is not None:
        out["block"] = block
    return out


def _merged_feats_former(feats, order, blocks=None):
    if all(type(v) is np.ndarray and v.dtype == np.float64 and v.ndim == 1 for f in feats for v in f.values()):
        blocks = blocks or [None] * len(feats)
        block = np.concatenate([np.stack([f[k] for k in S.FEATURES]) if b is None else b
                                for f, b in zip(feats, blocks)], axis=1)
        if type(order) is not slice:
            block = np.take(block, order, axis=1)
        return dict(zip(S.FEATURES, block)), block
    return {k: np.concatenate([f[k] for f in feats])[order] for k in S.FEATURES}, None


def _static_rest_former(layers, power):
    """add_static_energy's end (the layers of no layerarrays call: ``rest``), as it was."""
    times = [lb.metrics["time_s"] for lb in layers]
    t = stacked(times) if layers else None
    e = stacked([lb.metrics["energy_j"] for lb in layers]) if t is not None else None
    if e is not None and e.shape == t.shape and power.shape in ((), t.shape[1:]):
        static = power * t
        energy = e + static
        for lb, s_row, e_row in zip(layers, static, energy):
            lb.metrics["static_energy_j"] = s_row
            lb.metrics["energy_j"] = e_row
        return
    for lb, time_s in zip(layers, times):
        static = power * time_s
        lb.metrics["static_energy_j"] = static
        lb.metrics["energy_j"] = lb.metrics["energy_j"] + static


def _add_static_energy_former(layers, static_power_w):
    """The whole former add_static_energy for layers of no layerarrays call (every IMAX layer): its ``rest`` path."""
    assert all(lb.__dict__.get("_shared") is None for lb in layers)
    if layers:
        _static_rest_former(list(layers), np.asarray(static_power_w, dtype=float))


# ---------------------------------------------------------------- pieces


@pytest.mark.parametrize("n", [0, 1, 2, 7, 1023, 1024, 1025, 4096, 4097, 9000, 3])
def test_filled_nan_equals_the_former(n):
    """NaN x a row of ones == a fill with NaN: the same bits (NaN's sign and payload), a fresh writeable C-contiguous
    float64 array each call (the ones' buffer is shared, never written)."""
    a, b = IM._filled_nan(n), _filled_nan_former(n)
    _same(a, b)
    assert a.flags.writeable and a.flags.c_contiguous and a.flags.owndata
    a[:] = 5.0
    _same(IM._filled_nan(n), b)
    assert not IM._ones(n).flags.writeable and (IM._ones(n) == 1.0).all() and len(IM._ones(n)) == n


_DTYPES = ["int64", "float64", "bool", "uint16", "object"]


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.integers(0, 400), st.sampled_from(_DTYPES),
       st.sampled_from(["contiguous", "strided", "broadcast", "2d"]))
def test_gather_equals_the_former(seed, n, k, dtype, layout):
    """take(mode="wrap") == a[idx] for indices in range (negative ones too), any dtype (floats with NaNs of both signs),
    contiguous, strided, broadcast and 2-D arrays (the last three by a[idx] itself); a new array either way."""
    rng = np.random.default_rng(seed)
    if layout == "broadcast":
        n = max(n, 1)
    base = rng.integers(-(10**12), 10**12, 2 * n + 3)
    if dtype == "float64":
        base = base * 1.5
        base[rng.random(len(base)) < 0.2] = np.nan
        base[rng.random(len(base)) < 0.1] = -np.nan
    a = base.astype(dtype) if dtype != "object" else np.array([str(x) for x in base], dtype=object)
    a = {"contiguous": a[:n], "strided": a[: 2 * n : 2], "broadcast": np.broadcast_to(a[:1], (n,)),
         "2d": a[: (n // 2) * 2].reshape(-1, 2)}[layout]
    m = len(a)
    idx = rng.integers(-m, m, k) if m else np.zeros(0, np.int64)
    if rng.random() < 0.3:
        idx = idx.astype(np.intp).reshape(-1, 1) if layout != "2d" else idx
    got, want = S.gather(a, idx), _gather_former(a, idx)
    if dtype == "object":
        assert got.dtype == want.dtype and got.shape == want.shape and got.tolist() == want.tolist()
    else:
        _same(got, want)
    assert not np.shares_memory(got, a) and got.flags.c_contiguous


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 30), st.integers(0, 9), st.sampled_from(["none", "contiguous", "columns",
       "float_out", "bool_out"]), st.sampled_from(["same", "mixed", "ragged", "ragged2", "scalar", "2d", "broadcast"]))
def test_stack_rows_equals_the_former(seed, n, k, out_kind, kind):
    """stack_rows == np.stack (axis 0): values, dtype (mixed bool/int64/float64 rows promoted alike), the same array
    written into ``out`` (C-contiguous, a column slice of a wider block, another dtype: the same casting, or the same
    error), the same error for rows of other lengths, scalars or 2-D rows."""
    rng = np.random.default_rng(seed)
    kinds = {"same": ["int64"], "mixed": ["int64", "bool", "float64"]}.get(kind, ["float64", "int64"])
    rows = []
    for i in range(k):
        dt = kinds[i % len(kinds)]
        a = rng.integers(-50, 50, n).astype(dt)
        if dt == "float64" and n:
            a[rng.random(n) < 0.3] = -np.nan
        rows.append(a)
    if kind == "ragged" and k:
        rows[-1] = rows[-1][:-1] if n else np.zeros(1)
    if kind == "ragged2" and k >= 3 and n:  # lengths n + 1, n - 1, n, ...: their total that of k rows of n
        rows[0], rows[1] = np.append(rows[0], rows[0][:1]), rows[1][:-1]
    if kind == "scalar" and k:
        rows[0] = np.float64(3.0)
    if kind == "2d" and k:
        rows[0] = np.zeros((1, n))
    if kind == "broadcast" and k:
        rows[0] = np.broadcast_to(np.int64(7), (n,))

    def run(f):
        out = {"none": None, "contiguous": np.full((k, n), -1, np.int64),
               "columns": np.full((k, n + 3), -1, np.float64)[:, 1:n + 1], "float_out": np.full((k, n), 0.5),
               "bool_out": np.zeros((k, n), bool)}[out_kind]
        try:
            got = f(list(rows), out=out)
        except Exception as e:  # noqa: BLE001
            return type(e), None
        if out is not None:
            assert got is out
        return got, out

    (a, _), (b, _) = run(S.stack_rows), run(_stack_former)
    if isinstance(a, type):
        assert a is b
    else:
        _same(a, b)
        assert a.flags.c_contiguous == b.flags.c_contiguous


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 400), st.integers(1, 5), st.sampled_from([1, 3, 40, 700, 10**6]),
       st.sampled_from(["plain", "constant", "negative", "bool", "broadcast", "offset"]))
def test_distinct_rows_any_equals_the_former(seed, n, k, top, kind):
    """distinct_rows_any: distinct_rows' inverse exactly (dtype too), and an index of each distinct row whose row it is
    (any element of it): on columns of few or many values (the table or the sort), constant, negative, bool,
    broadcast, far from 0."""
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, top, n) for _ in range(k)]
    if kind == "constant":
        cols[0] = np.full(n, 7)
    if kind == "negative" and n:
        cols[-1] = cols[-1] - top // 2 - 1
    if kind == "bool":
        cols[0] = cols[0] % 2 == 0
    if kind == "broadcast":
        cols[-1] = np.broadcast_to(np.int64(5), (n,))
    if kind == "offset":
        cols = [c + 10**9 for c in cols]
    try:
        want = _distinct_rows_any_former(tuple(cols))
    except Exception as e:  # noqa: BLE001  (the former's error: the same)
        with pytest.raises(type(e)):
            S.distinct_rows_any(tuple(cols))
        return
    first, inv = S.distinct_rows_any(tuple(cols))
    _same(inv, want[1])
    assert len(first) == len(want[0]) and first.dtype.kind == want[0].dtype.kind
    if kind != "negative":  # (distinct_rows' columns are non-negative: with others both give its answer, tested above)
        for c in cols:
            c = np.asarray(c)
            _same(c[first][inv], c)
    else:
        _same(first, want[0])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 200), st.integers(0, 150))
def test_limit_at_equals_the_gather(seed, G, k):
    """A broadcast limit broadcast at the lines == its gather; other arrays gathered."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, G, k)
    for a in (np.broadcast_to(np.int64(rng.integers(-5, 9)), (G,)), np.broadcast_to(np.int64(-1), (G,)),
              rng.integers(0, 99, G), rng.random(G) < 0.5, np.broadcast_to(rng.random(G) < 0.5, (3, G))[1]):
        _same(IM._limit_at(a, idx), a[idx])


def _plans_same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for key, v in a.items():
        if key == "feats":
            assert list(v) == list(b[key])
            for k in v:
                _same(v[k], b[key][k])
        elif key == "per":
            assert list(v) == list(b[key])
            for k in v:
                _same(v[k], b[key][k])
        else:
            _same(v, b[key])


def _random_part(rng, idx: np.ndarray, block: bool, per_kind: str, dtype_flip: bool) -> dict:
    c = rng.integers(0, 4, len(idx))
    n = int(c.sum())
    rows = rng.random((len(S.FEATURES), n)) * 100
    rows[rng.random(rows.shape) < 0.05] = np.nan
    d = {"count": c, "feats": dict(zip(S.FEATURES, rows)), "agrp": rng.integers(1, 9, n),
         "bgrp": rng.integers(1, 9, n)}
    if block:
        d["block"] = rows
    per = {}
    for i, k in enumerate(P.PROBLEM_NUMBERS):
        if per_kind == "scalar" and i % 3 == 0:
            per[k] = int(rng.integers(0, 50)) if i % 2 else float(rng.random())
        elif per_kind == "broadcast" and i % 3 == 1:
            per[k] = np.broadcast_to(np.int64(rng.integers(0, 50)), idx.shape)
        else:
            v = rng.integers(0, 50, len(idx))
            per[k] = v.astype(bool if k == "jds" else (np.float64 if dtype_flip and i % 2 else np.int64))
    d["per"] = per
    return d


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(0, 3), st.booleans(),
       st.sampled_from(["arrays", "scalar", "broadcast"]), st.booleans())
def test_merge_in_place_equals_the_former(seed, G, n_parts, block, per_kind, dtype_flip):
    """merge_in_place (one part's arrays as they are) == the former (concatenations of one array), on random parts:
    one to three, blocks or not, problem numbers as arrays, Python numbers or broadcasts, dtypes that differ between
    parts (cast to the first's), NaN counts; every key, count, feature row, block and problem number."""
    rng = np.random.default_rng(seed)
    owners = rng.permutation(G)[: rng.integers(0, G + 1)]
    cuts = np.sort(rng.integers(0, len(owners) + 1, max(n_parts - 1, 0)))
    groups = [np.sort(g) for g in np.split(owners, cuts)][:n_parts] if n_parts else []
    parts = [(g, _random_part(rng, g, block, per_kind, dtype_flip and i > 0)) for i, g in enumerate(groups)]
    got = P.merge_in_place(G, parts)
    want = _merge_in_place_former(G, parts)
    _plans_same(got, want)
    if "block" in got:
        for k, row in got["feats"].items():
            _same(row, got["block"][S.FEATURES.index(k)])
    got2 = P.merge(G, parts)  # merge (whose _merged_feats changed too) == the former merge
    _plans_same(got2, _merge_former(G, parts))


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9", "two"])
def test_merge_in_place_equals_the_former_on_batches(wl, monkeypatch):
    """merge_in_place on the parts of real batches (an SpMM batch's one mixed part; a dense workload's parts)."""
    seen = []
    former = P.merge_in_place

    def both(G, parts):
        got = former(G, parts)
        _plans_same(got, _merge_in_place_former(G, parts))
        seen.append(len(parts))
        return got

    monkeypatch.setattr(P, "merge_in_place", both)
    w = _two_products() if wl == "two" else load_workload(wl)
    rng = np.random.default_rng(7)
    for size in (400, 5, 60):
        M.evaluate_batch(w, M.params.points(M.params.random_rows(size, rng)))
    assert seen and (1 in seen or wl == "two")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 50), st.sampled_from(["scalar", "points", "one", "int"]),
       st.integers(1, 3), st.booleans())
def test_add_static_energy_of_layers_equals_the_former(seed, n, power_kind, n_layers, int_time):
    """add_static_energy of layers of no layerarrays call (IMAX's; one layer: no stack of one row) == the former: the
    static energy and the energy bit for bit (NaNs of both signs, infinities, -0.0), for powers of every shape."""
    rng = np.random.default_rng(seed)

    def layers():
        r = np.random.default_rng(seed + 1)
        out = []
        for i in range(n_layers):
            lb = LayerBatch(MatMul(f"l{i}", m=4, k=4, n=4), n)
            t = r.random(n) * 1e-3
            e = r.random(n) * 1e-6
            for x in (t, e):
                x[r.random(n) < 0.2] = np.nan
                x[r.random(n) < 0.1] = -np.nan
                x[r.random(n) < 0.05] = -0.0
                x[r.random(n) < 0.05] = np.inf
            lb.metrics["time_s"] = r.integers(0, 9, n) if int_time else t
            lb.metrics["energy_j"] = e
            out.append(lb)
        return out

    power = {"scalar": float(rng.random()), "points": rng.random(n), "one": rng.random(1),
             "int": 0}[power_kind]
    if power_kind == "points":
        power[rng.random(n) < 0.2] = -np.nan
    a, b = layers(), layers()
    B.add_static_energy(a, power)
    _add_static_energy_former(b, power)
    for la, lb_ in zip(a, b):
        assert list(la.metrics) == list(lb_.metrics)
        for k in la.metrics:
            _same(la.metrics[k], lb_.metrics[k])


# ---------------------------------------------------------------- whole batches


def _two_products() -> Workload:
    return Workload("two", (MatMul("a", m=300, k=200, n=64), MatMul("b", m=96, k=40, n=48)))


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9", "two"])
def test_batch_with_the_former_paths_equals(wl, monkeypatch):
    """evaluate_batch of random points (infeasible ones most) with this round's paths == with the former ones swapped
    in (NaN rows filled, fancy gathers, every limit gathered, the merge's concatenations, np.stack, the heads sorted, one layer's
    leakage through a stack): every metric (bit for bit), state, label, total, flag and
    reason."""
    w = _two_products() if wl == "two" else load_workload(wl)
    rng = np.random.default_rng(21)
    batches = [M.params.points(M.params.random_rows(size, rng)) for size in (600, 300, 9)]
    new = [M.evaluate_batch(w, pts) for pts in batches]
    monkeypatch.setattr(IM, "_filled_nan", _filled_nan_former)
    monkeypatch.setattr(S, "gather", _gather_former)
    monkeypatch.setattr(S, "stack_rows", _stack_former)
    monkeypatch.setattr(S, "distinct_rows_any", _distinct_rows_any_former)
    monkeypatch.setattr(IM, "_limit_at", _gather_former)
    monkeypatch.setattr(P, "merge_in_place", _merge_in_place_former)
    monkeypatch.setattr(P, "merge", _merge_former)
    monkeypatch.setattr(B, "add_static_energy", _add_static_energy_former)
    old = [M.evaluate_batch(w, pts) for pts in batches]
    for a, b in zip(new, old):
        _same_batch_results(a, b)
        for la, lb_ in zip(a.layers, b.layers):
            assert list(la.metrics) == list(lb_.metrics) and list(la.states) == list(lb_.states)
        assert list(a.totals) == list(b.totals)

"""IMAX batched paths of issue 15's sixteenth round: each equals the code it replaced (kept below verbatim, but for
names and docstrings, as the oracle), bit for bit and dtype for dtype: a layer's flags and reasons taken from its
run (:func:`archmodels.imax.model._run_layer_batch`), the clock bisection's loop with 0-d operands and outputs by
position (:func:`archmodels.tech._bisect_loop`), ``tech.clock_check``'s reasons by declared node and
``tech._vdd_ratios``' memo lookups and writes of new clocks (and ``_remember_vdd``'s keys)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model, num, tech
from archmodels.imax import model as IM
from archmodels.result import LayerBatch
from tests.test_imax_batched15 import _same
from tests.test_imax_batched17 import _same_batch_results
from workloads import load_workload
from workloads.layers import MatMul, Workload

M = get_model("imax")


# ---------------------------------------------------------------- the former code (oracles)


def _layer_batch_former(layer, ok: np.ndarray, reason: np.ndarray, own: bool) -> LayerBatch:
    lb = LayerBatch(layer, len(ok))
    lb.infeasible(~ok, reason)
    return lb


def _bisect_loop_former(lo, hi, vt, target, steps):
    if lo.size > tech._IN_PLACE_MAX:
        for _ in range(steps):
            mid = (lo + hi) / 2
            slow = (mid - vt) ** tech.ALPHA / mid < target  # _speed(mid)
            lo, hi = np.where(slow, mid, lo), np.where(slow, hi, mid)
        return lo, hi
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)  # (own copies: updated in place)
    mid, t, slow = np.empty(lo.shape), np.empty(lo.shape), np.empty(lo.shape, dtype=bool)
    add, divide, subtract, power, less, copyto = np.add, np.divide, np.subtract, np.power, np.less, np.copyto
    for _ in range(steps):
        divide(add(lo, hi, out=mid), 2, out=mid)  # mid = (lo + hi) / 2
        divide(power(subtract(mid, vt, out=t), tech.ALPHA, out=t), mid, out=t)  # _speed(mid)
        less(t, target, out=slow)
        copyto(lo, mid, where=slow)  # lo = where(slow, mid, lo)
        copyto(mid, hi, where=slow)  # where(slow, hi, mid): the new hi, in mid's buffer
        hi, mid = mid, hi  # (the old hi's buffer takes the next step's mid)
    return lo, hi


def _clock_check_former(clock_mhz, node_nm):
    c = tech.clock_costs(clock_mhz, node_nm)
    reason = num.objects(c.feasible.shape, "")
    if c.feasible.all():
        return c.feasible.copy(), reason  # a writable array, as before the memo
    bad = np.flatnonzero(~c.feasible)  # (a few points: their nodes only, not a mask per node over all)
    nodes = np.broadcast_to(np.asarray(node_nm), c.feasible.shape).reshape(-1)[bad]
    flat = reason.reshape(-1)
    for nd in sorted(set(nodes.tolist())):
        sel = bad[nodes == nd]
        nd = int(nd) if nd in tech.NODES_NM else nd  # (as node_masks names the declared nodes)
        flat[sel] = f"clock above the {nd} nm maximum of {tech.fmax_mhz(nd):.0f} MHz (V_max {tech.VDD_MAX[nd]} V)"
    return c.feasible.copy(), reason


def _vdd_ratios_former(f: np.ndarray, masks: list[tuple[int, np.ndarray | None]], f_nom=None) -> np.ndarray:
    flat = f.reshape(-1)
    if masks[0][1] is None:
        nd = masks[0][0]
        f_nom, f_top = tech.F_NOM_MHZ[nd], tech.fmax_mhz(nd) * (1 + 1e-9)
    else:
        if f_nom is None:
            f_nom = tech.node_constants(tech.F_NOM_MHZ, masks, flat.shape)
        f_nom = np.reshape(f_nom, -1)
        f_top = tech.node_constants({nd: tech.fmax_mhz(nd) * (1 + 1e-9) for nd, _ in masks}, masks, flat.shape)
    ok = flat <= f_top  # NaN clocks stay NaN
    v = np.where(ok, 1.0, np.nan)
    above = np.flatnonzero((flat > f_nom) & ok)  # positions in ``flat`` of the clocks to look up or bisect
    if not above.size:
        return v.reshape(f.shape)
    pending = []  # (node, positions in ``flat``, the clocks to bisect (distinct), how to write their ratios)
    for nd, mask in masks:
        need = above if mask is None else above[mask.reshape(-1)[above]]
        if not need.size:
            continue
        if need.size <= tech._VDD_MEMO_KEYS:  # at most tech._VDD_MEMO_KEYS distinct: looked up (and kept) one by one
            clocks = flat[need].tolist()
            got = [tech._VDD_MEMO.get((nd, k)) for k in clocks]
            if None not in got:
                v[need] = got
                continue
            miss = list(dict.fromkeys(k for k, g in zip(clocks, got) if g is None))
            pending.append((nd, need, np.array(miss), (clocks, got)))
            continue
        keys, inv = np.unique(flat[need], return_inverse=True)
        inv = inv.reshape(-1)
        if len(keys) > tech._VDD_MEMO_KEYS:  # many distinct clocks (random points): none remembered, nor worth it
            pending.append((nd, need, keys, inv))
            continue
        got = np.array([tech._VDD_MEMO.get((nd, k), np.nan) for k in keys.tolist()])
        miss = np.isnan(got)
        if miss.any():
            pending.append((nd, need, keys[miss], (got, miss, inv)))
        else:
            v[need] = got[inv]
    if pending:  # every node's clocks not remembered: one bisection
        results = tech._bisect_parts([(nd, keys) for nd, _, keys, _ in pending])
        for (nd, need, keys, how), ratios in zip(pending, results):
            if isinstance(how, np.ndarray):  # (the inverse of all distinct clocks)
                v[need] = ratios[how]
            elif isinstance(how[0], list):  # (clocks, memo answers or None)
                new = dict(zip(keys.tolist(), ratios.tolist()))
                v[need] = [new[k] if g is None else g for k, g in zip(*how)]
            else:  # (memo answers of the distinct clocks, which are new, inverse)
                got, miss, inv = how
                got[miss] = ratios
                v[need] = got[inv]
        for (nd, _, keys, how), ratios in zip(pending, results):  # (after reading: remembering may clear the memo)
            if not isinstance(how, np.ndarray):
                _remember_vdd_former(nd, keys.tolist(), ratios)
    return v.reshape(f.shape)


def _remember_vdd_former(node_nm: int, clocks: list[float], ratios: np.ndarray) -> None:
    if len(tech._VDD_MEMO) + len(clocks) > tech._VDD_MEMO_MAX:
        tech._VDD_MEMO.clear()
    tech._VDD_MEMO.update(zip(((node_nm, k) for k in clocks), ratios.tolist()))


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=float).view(np.int64)


# ---------------------------------------------------------------- a layer's flags and reasons from its run


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.floats(0, 1), st.booleans())
def test_run_layer_batch_equals_infeasible_on_a_fresh_layer(seed, n, share, own):
    """LayerBatch from a run's ok / reason (reasons "" where ok, as runs write them) == a fresh LayerBatch marked
    ``infeasible(~ok, reason)``: flags, reasons, labels; the run's arrays unaltered and not aliased unless ``own``."""
    rng = np.random.default_rng(seed)
    ok = rng.random(n) < share
    texts = np.array([f"why {i % 7}" for i in range(n)], dtype=object)
    reason = np.where(ok, "", texts).astype(object)
    ok0, reason0 = ok.copy(), reason.copy()
    layer = MatMul("mm", m=4, k=4, n=4)
    got = IM._run_layer_batch(layer, ok, reason, own)
    want = _layer_batch_former(layer, ok, reason, own)
    _same(got.feasible, want.feasible)
    _same(got.reason, want.reason)
    assert got.reason.tolist() == want.reason.tolist() and got.n == want.n == n
    assert list(got.labels) == list(want.labels) and got.labels["fused_into"].tolist() == [None] * n
    _same(ok, ok0)
    _same(reason, reason0)
    assert not np.shares_memory(got.feasible, ok)
    assert (got.reason is reason) == own


def _two_same_products() -> Workload:
    """Two dense layers of one product: one run serves both (their reasons must not be one array)."""
    return Workload("twice", (MatMul("a", m=300, k=200, n=64), MatMul("b", m=300, k=200, n=64)))


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9", "twice"])
def test_batch_with_the_former_paths_equals(wl, monkeypatch):
    """evaluate_batch of random points of the space (infeasible ones most) with this round's paths == with the former
    ones swapped in (the layer marked infeasible on a fresh LayerBatch, the bisection loop, clock_check, the supply
    ratios and their memo; every clock new to the memo in both runs): the memo's entries afterwards, every
    metric, state, label, total, flag and reason; the runs' reasons are "" wherever the run has a schedule; layers
    sharing a dense run do not share their flag or reason arrays."""
    w = _two_same_products() if wl == "twice" else load_workload(wl)
    rng = np.random.default_rng(18)
    batches = [M.params.points(M.params.random_rows(300, rng)) for _ in range(2)]
    seen = []
    former = IM._run_layer_batch

    def checked(layer, ok, reason, own):
        seen.append(int((~ok).sum()))
        assert all(r == "" for r in reason[ok].tolist())  # what _run_layer_batch relies on
        return former(layer, ok, reason, own)

    monkeypatch.setattr(IM, "_run_layer_batch", checked)
    monkeypatch.setattr(tech, "_VDD_MEMO", {})  # (every clock new in both runs: the bisection and the memo's stores)
    tech._CLOCK_MEMO.clear()
    new = [M.evaluate_batch(w, pts) for pts in batches]
    assert len(seen) >= 2 * len(w.layers) and sum(seen) > 0
    for res in new:
        for la in res.layers:
            for lb_ in res.layers:
                if la is not lb_:
                    assert not np.shares_memory(la.reason, lb_.reason)
                    assert not np.shares_memory(la.feasible, lb_.feasible)
    monkeypatch.setattr(IM, "_run_layer_batch", _layer_batch_former)
    monkeypatch.setattr(tech, "_bisect_loop", _bisect_loop_former)
    monkeypatch.setattr(tech, "clock_check", _clock_check_former)
    monkeypatch.setattr(tech, "_vdd_ratios", _vdd_ratios_former)
    memo_new = list(tech._VDD_MEMO.items())
    tech._VDD_MEMO.clear()
    tech._CLOCK_MEMO.clear()
    old = [M.evaluate_batch(w, pts) for pts in batches]
    assert memo_new == list(tech._VDD_MEMO.items()) and memo_new
    for a, b in zip(new, old):
        _same_batch_results(a, b)


# ---------------------------------------------------------------- the clock path


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 45, 90, 511, 512, 513, 1500]), st.integers(0, 30),
       st.sampled_from([28, 14]))
def test_bisect_loop_equals_the_former(seed, n, steps, node):
    """_bisect_loop (0-d operands, outputs by position) == the former loop, bit for bit: bounds anywhere in the node's
    supply range, targets inside and outside the speeds' range and NaN; the inputs unaltered."""
    rng = np.random.default_rng(seed)
    v0, vmax = tech._VDD[node], tech.VDD_MAX[node]
    a, b = rng.uniform(v0, vmax, n), rng.uniform(v0, vmax, n)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    vt = np.full(n, tech.VT[node])
    target = tech._speed(rng.uniform(v0 - 0.05, vmax + 0.05, n), node)
    target[rng.random(n) < 0.05] = np.nan
    keep = [x.copy() for x in (lo, hi, vt, target)]
    got = tech._bisect_loop(lo, hi, vt, target, steps)
    want = _bisect_loop_former(lo, hi, vt, target, steps)
    for g, w_ in zip(got, want):
        assert g.dtype == w_.dtype and g.shape == w_.shape
        assert np.array_equal(_bits(g), _bits(w_))
    for x, k in zip((lo, hi, vt, target), keep):
        assert np.array_equal(_bits(x), _bits(k))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300),
       st.sampled_from(["flat", "2d", "one node", "float nodes", "python node", "one of each"]))
def test_clock_check_equals_the_former(seed, n, shape):
    """clock_check == the former (nodes broadcast, a set of the infeasible points' nodes): flags, reasons, shape,
    dtype, writable arrays; clocks from 10 to 4,000 MHz (feasible and not) and NaN, nodes as int or float arrays, a
    numpy or Python number, 2-D batches."""
    rng = np.random.default_rng(seed)
    f = np.exp(rng.uniform(np.log(10.0), np.log(4000.0), n))
    f[rng.random(n) < 0.05] = np.nan
    nodes = rng.choice(np.array(tech.NODES_NM), n)
    if shape == "one node":
        nodes = np.int64(tech.NODES_NM[1])
    elif shape == "python node":
        nodes = tech.NODES_NM[0]
    elif shape == "float nodes":
        nodes = nodes.astype(float)
    elif shape == "2d" and n % 2 == 0:
        f, nodes = f.reshape(2, -1), nodes.reshape(2, -1)
    elif shape == "one of each":
        f = np.full(n, 3000.0)
    ok, why = tech.clock_check(f, nodes)
    ok0, why0 = _clock_check_former(f, nodes)
    _same(ok, ok0)
    assert why.shape == why0.shape and why.dtype == why0.dtype and why.tolist() == why0.tolist()
    assert ok.flags.writeable and why.flags.writeable


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 140), st.integers(1, 4), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0), st.booleans(),
       st.booleans())
def test_vdd_ratios_and_memo_equal_the_former(per_node, repeats, seed, known, one_node, near_full):
    """_vdd_ratios (all-miss lookups without a test per clock, the ratios written in order when every clock is new
    and distinct, the memo's keys made in C) == the former: the ratios bit for bit, and the memo afterwards the same
    entries in the same order -- clocks of a node few or many, repeated, part of them remembered beforehand, below
    nominal, above the top and NaN, one node or two, and a memo that remembering clears."""
    rng = np.random.default_rng(seed)
    nodes_used = tech.NODES_NM[:1] if one_node else tech.NODES_NM
    fs, ns = [], []
    for node in nodes_used:
        top = tech.fmax_mhz(node)
        distinct = rng.uniform(tech.F_NOM_MHZ[node], top, max(1, per_node // repeats))
        f = rng.choice(distinct, per_node)
        fs.append(np.concatenate([f, [100.0, tech.F_NOM_MHZ[node], 5000.0, np.nan]]))
        ns.append(np.full(len(fs[-1]), node))
    order = rng.permutation(sum(map(len, fs)))
    f, nodes = np.concatenate(fs)[order], np.concatenate(ns)[order]
    masks = tech.node_masks(nodes)
    masks = masks if len(masks) > 1 else [(masks[0][0], None)]
    saved = dict(tech._VDD_MEMO)
    try:
        tech._VDD_MEMO.clear()
        for node, fn in zip(nodes_used, fs):  # part of the clocks remembered beforehand, with answers a bisection
            pre = np.unique(fn[(fn > tech.F_NOM_MHZ[node]) & (fn <= tech.fmax_mhz(node))])  # would not give (the
            pre = pre[: int(len(pre) * known)]  # memo's answers must be read, not computed again)
            if len(pre):
                tech._remember_vdd(node, pre.tolist(), tech._bisect_vdd_ratio(pre, node) * (1 + 2.0**-40))
        if near_full:
            tech._VDD_MEMO.update({(-1, float(i)): 0.0 for i in range(tech._VDD_MEMO_MAX - len(tech._VDD_MEMO) - 20)})
        before = dict(tech._VDD_MEMO)
        got = tech._vdd_ratios(f, masks)
        after = list(tech._VDD_MEMO.items())
        tech._VDD_MEMO.clear()
        tech._VDD_MEMO.update(before)
        want = _vdd_ratios_former(f, masks)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(_bits(got), _bits(want))
        assert after == list(tech._VDD_MEMO.items())
    finally:
        tech._VDD_MEMO.clear()
        tech._VDD_MEMO.update(saved)

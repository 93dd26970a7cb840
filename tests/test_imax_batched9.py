"""Issue 15, ninth round (IMAX helper): tech's clock costs of a random batch by fewer numpy calls -- the supply
bisection's remaining steps in place (:func:`tech._bisect_loop`), every node's new clocks in one
:func:`tech._bisect_parts`, a node's few clocks above nominal looked up in the memo one by one (no np.unique), two
nodes' constants by one ``np.where``, the clock memo's cheap first/last test, clock_check's reasons from the
infeasible points' nodes -- each equal to the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodels import num, tech

from .test_clock_bisection import _per_node_costs


def _top(node: int) -> float:
    return tech.fmax_mhz(node) * (1 + 1e-9)


def _where_loop(lo, hi, vt, target, steps):
    """The eighth round's remaining steps: ``np.where`` picks, new arrays every step."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        slow = (mid - vt) ** tech.ALPHA / mid < target
        lo, hi = np.where(slow, mid, lo), np.where(slow, hi, mid)
    return lo, hi


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=float).view(np.int64)


def _same(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(_bits(a), _bits(b)) if a.dtype.kind == "f" else np.array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 700), steps=st.integers(0, 30), seed=st.integers(0, 2**32 - 1),
       limit=st.sampled_from([None, 0, 10**6]))
def test_bisect_loop_in_place_equals_the_where_loop(n, steps, seed, limit):
    """From any bounds (the tree's intervals or the whole range), targets inside and outside the range: (lo, hi)
    after the steps == the where loop's, in place (up to _IN_PLACE_MAX clocks) or not; the inputs are not
    altered."""
    kept_limit = tech._IN_PLACE_MAX
    if limit is not None:
        tech._IN_PLACE_MAX = limit
    try:
        _check_bisect_loop(n, steps, seed)
    finally:
        tech._IN_PLACE_MAX = kept_limit


def _check_bisect_loop(n: int, steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    nodes = rng.choice(np.array(tech.NODES_NM), n)
    v0 = np.array([tech.VDD_NOM[int(x)] for x in nodes])
    vmax = np.array([tech.VDD_MAX[int(x)] for x in nodes])
    vt = np.array([tech.VT[int(x)] for x in nodes])
    u = np.sort(rng.uniform(0, 1, (2, n)), axis=0)
    lo, hi = v0 + u[0] * (vmax - v0), v0 + u[1] * (vmax - v0)
    target = tech._speed(v0 + rng.uniform(-0.1, 1.1, n) * (vmax - v0), 28) * rng.uniform(0.9, 1.1, n)
    keep = lo.copy(), hi.copy()
    got = tech._bisect_loop(lo, hi, vt, target, steps)
    want = _where_loop(lo, hi, vt, target, steps)
    for g, w in zip(got, want):
        _same(g, w)
    _same(lo, keep[0])
    _same(hi, keep[1])


def test_bisect_parts_equal_the_definition_on_many_clocks():
    """Parts of one node or both, sizes 1 to 2,000, clocks at the range's ends and repeated: == the 40-step loop."""
    rng = np.random.default_rng(91)
    for size in (1, 2, 17, 45, 64, 65, 300, 2000):
        parts = []
        for node in tech.NODES_NM:
            f = rng.uniform(tech.F_NOM_MHZ[node], _top(node), size)
            f[: min(size, 2)] = [np.nextafter(tech.F_NOM_MHZ[node], np.inf), _top(node)][: min(size, 2)]
            parts.append((node, np.concatenate([f, f[: size // 3]])))
        for chosen in (parts[:1], parts[1:], parts, parts[::-1]):
            got = tech._bisect_parts(chosen)
            assert len(got) == len(chosen)
            for (node, f), g in zip(chosen, got):
                _same(g, tech._bisect_vdd_ratio(f, node))


def _old_vdd_ratios(f: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The definition over points: 1 up to nominal, NaN above the top clock, the 40-step loop between."""
    return _per_node_costs(f, nodes)[0]


@settings(max_examples=60, deadline=None)
@given(per_node=st.integers(0, 140), repeat=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       known=st.floats(0.0, 1.0), one_node=st.booleans())
def test_vdd_ratios_by_lookups_one_by_one_equal_the_definition_and_remember_as_before(per_node, repeat, seed,
                                                                                    known, one_node):
    """A node's clocks above nominal, few (looked up one by one) or many (made distinct first; remembered only up
    to _VDD_MEMO_KEYS distinct), repeated, part of them already remembered, mixed with clocks below nominal, above
    the top and NaN: == the definition; afterwards the memo holds exactly the clocks of the nodes with at most
    _VDD_MEMO_KEYS distinct ones above nominal (and those it held)."""
    rng = np.random.default_rng(seed)
    nodes_used = tech.NODES_NM[:1] if one_node else tech.NODES_NM
    fs, ns = [], []
    for node in nodes_used:
        distinct = rng.uniform(tech.F_NOM_MHZ[node], _top(node), max(1, per_node // repeat))
        f = rng.choice(distinct, per_node)
        f = np.concatenate([f, [100.0, tech.F_NOM_MHZ[node], 5000.0, np.nan]])
        fs.append(f)
        ns.append(np.full(len(f), node))
    order = rng.permutation(sum(map(len, fs)))
    f, nodes = np.concatenate(fs)[order], np.concatenate(ns)[order]
    tech._VDD_MEMO.clear()
    for node, fn in zip(nodes_used, fs):  # part of the clocks remembered beforehand (the loop's bits)
        pre = np.unique(fn[(fn > tech.F_NOM_MHZ[node]) & (fn <= _top(node))])
        pre = pre[: int(len(pre) * known)]
        if len(pre):
            tech._remember_vdd(node, pre.tolist(), tech._bisect_vdd_ratio(pre, node))
    before = dict(tech._VDD_MEMO)
    want = _old_vdd_ratios(f, nodes)
    masks = tech.node_masks(nodes)
    got = tech._vdd_ratios(f, masks if len(masks) > 1 else [(masks[0][0], None)])
    _same(got, want)
    expect = dict(before)
    for node, fn in zip(nodes_used, fs):
        up = np.unique(fn[(fn > tech.F_NOM_MHZ[node]) & (fn <= _top(node))])
        if len(up) <= tech._VDD_MEMO_KEYS:
            expect.update(zip(((node, k) for k in up.tolist()), tech._bisect_vdd_ratio(up, node).tolist()))
    assert tech._VDD_MEMO == expect
    _same(tech._vdd_ratios(f, masks if len(masks) > 1 else [(masks[0][0], None)]), want)  # from the memo


def test_vdd_ratios_when_remembering_clears_the_memo():
    """The memo full: remembering the second node's clocks clears it after the first node's were read from it
    and stored -- the answers are the definition's all the same."""
    rng = np.random.default_rng(3)
    f = np.concatenate([rng.uniform(tech.F_NOM_MHZ[n], _top(n), 30) for n in tech.NODES_NM])
    nodes = np.repeat(tech.NODES_NM, 30)
    tech._VDD_MEMO.clear()
    half = f[:15]  # the first node's first half remembered
    tech._remember_vdd(tech.NODES_NM[0], half.tolist(), tech._bisect_vdd_ratio(half, tech.NODES_NM[0]))
    filler = {(-1, float(i)): 0.0 for i in range(tech._VDD_MEMO_MAX - len(tech._VDD_MEMO) - 20)}
    tech._VDD_MEMO.update(filler)
    got = tech._vdd_ratios(f, tech.node_masks(nodes))
    _same(got, _old_vdd_ratios(f, nodes))
    tech._VDD_MEMO.clear()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 200), seed=st.integers(0, 2**32 - 1), which=st.sampled_from(["one", "two", "float"]))
def test_node_constants_equal_the_fill_and_masked_assignment(n, seed, which):
    rng = np.random.default_rng(seed)
    nodes = rng.choice(np.array(tech.NODES_NM), n) if which != "one" else np.full(n, tech.NODES_NM[0])
    masks = tech.node_masks(nodes)
    for table in (tech.F_NOM_MHZ, {14: 3, 28: 7}):
        (nd0, _), *rest = masks
        want = np.full(n, table[nd0])
        for nd, sel in rest:
            want[sel] = table[nd]
        _same(tech.node_constants(table, masks, (n,)), want)
        _same(tech.node_constants(table, masks, (1, n)), want.reshape(1, n))


def test_clock_memo_first_and_last_test_finds_only_equal_batches():
    """Batches that share their first and last clocks (and nodes) but differ inside, or differ only at an end,
    NaN and -0.0 clocks: the memo answers only the equal batch, and each answer is the fresh computation's."""
    rng = np.random.default_rng(8)
    f = np.exp(rng.uniform(np.log(10.0), np.log(2500.0), 500))
    f[7], f[9] = np.nan, -0.0
    nodes = rng.choice(np.array(tech.NODES_NM), 500)
    tech._CLOCK_MEMO.clear()
    first = tech.clock_costs(f, nodes)
    assert tech.clock_costs(f.copy(), nodes.copy()) is first
    inner = f.copy()
    inner[250] = inner[250] * 1.01
    end = f.copy()
    end[-1] = np.nextafter(end[-1], np.inf)
    zero = f.copy()
    zero[9] = 0.0
    other_nodes = nodes.copy()
    other_nodes[3] = tech.NODES_NM[0] if nodes[3] != tech.NODES_NM[0] else tech.NODES_NM[1]
    for g, nd in ((inner, nodes), (end, nodes), (zero, nodes), (f, other_nodes)):
        got = tech.clock_costs(g, nd)
        assert got is not first
        kept = list(tech._CLOCK_MEMO)
        tech._CLOCK_MEMO.clear()
        fresh = tech.clock_costs(g, nd)
        tech._CLOCK_MEMO[:] = kept
        for field in ("vdd_ratio", "energy_scale", "area_factor", "feasible"):
            _same(getattr(got, field), getattr(fresh, field))
    tech._clock_memo(np.empty(0), np.empty(0, np.int64))  # (an empty batch: no end test, no error)


def _old_clock_check(clock_mhz, node_nm):
    """The eighth round's clock_check: a mask per node over every point."""
    c = tech.clock_costs(clock_mhz, node_nm)
    reason = num.objects(c.feasible.shape, "")
    if c.feasible.all():
        return c.feasible.copy(), reason
    nodes = np.broadcast_to(np.asarray(node_nm), c.feasible.shape)
    for nd, at in tech.node_masks(nodes):
        sel = at & ~c.feasible
        if sel.any():
            reason[sel] = (f"clock above the {nd} nm maximum of {tech.fmax_mhz(nd):.0f} MHz "
                           f"(V_max {tech.VDD_MAX[nd]} V)")
    return c.feasible.copy(), reason


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1), shape=st.sampled_from(["flat", "2d", "one node"]))
def test_clock_check_reasons_equal_the_per_node_masks(n, seed, shape):
    rng = np.random.default_rng(seed)
    f = np.exp(rng.uniform(np.log(10.0), np.log(4000.0), n))
    f[rng.random(n) < 0.05] = np.nan
    nodes = rng.choice(np.array(tech.NODES_NM), n)
    if shape == "one node":
        nodes = np.int64(tech.NODES_NM[1])
    elif shape == "2d" and n % 2 == 0:
        f, nodes = f.reshape(2, -1), nodes.reshape(2, -1)
    ok, why = tech.clock_check(f, nodes)
    ok0, why0 = _old_clock_check(f, nodes)
    _same(ok, ok0)
    assert why.shape == why0.shape and why.dtype == why0.dtype and why.tolist() == why0.tolist()
    assert ok.flags.writeable and why.flags.writeable

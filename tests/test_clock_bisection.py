"""tech's supply bisection from its table (issue 15): the first steps of every bisection by one binary search in
``bisection_tree``, the rest for all nodes at once, equal the plain 40-step loop (``_bisect_vdd_ratio``, the
definition) bit for bit; the memo and clock_check keep their answers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import clock, tech


def _top(node: int) -> float:
    return tech.fmax_mhz(node) * (1 + 1e-9)


def _plain(f: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    out = np.empty(f.shape)
    for node in tech.NODES_NM:
        sel = nodes == node
        out[sel] = tech._bisect_vdd_ratio(f[sel], node)
    return out


def test_the_tree_holds_the_bisections_first_steps_in_order():
    """Each level's supplies are the midpoints the loop computes, in increasing order between v0 and vmax; the
    speeds rise (the condition the binary search needs)."""
    for node in tech.NODES_NM:
        mids, speeds = tech.bisection_tree(node)
        n = (1 << tech._TREE_DEPTH) - 1
        assert mids.shape == (n + 2,) and speeds.shape == (n,)
        assert mids[0] == tech.VDD_NOM[node] and mids[-1] == tech.VDD_MAX[node]
        assert np.all(np.diff(mids) > 0) and np.all(np.diff(speeds) >= 0)
        assert mids[(n + 1) // 2] == (tech.VDD_NOM[node] + tech.VDD_MAX[node]) / 2  # the root: the first mid
        assert np.array_equal(speeds, tech._speed(mids[1:-1], node))


def test_table_bisection_equals_the_loop_on_many_clocks_and_on_the_table_speeds():
    """300,000 random clocks a node, the ends of the range, and clocks whose target lands on (or next to) a speed
    of the table, where the binary search's side decides: == the loop, one node and both nodes mixed."""
    rng = np.random.default_rng(21)
    fs, ns = [], []
    for node in tech.NODES_NM:
        lo, top = tech.F_NOM_MHZ[node], _top(node)
        _, speeds = tech.bisection_tree(node)
        on_table = speeds[rng.integers(0, len(speeds), 4000)] / tech._speed(tech.VDD_NOM[node], node) * lo
        near = np.concatenate([on_table, np.nextafter(on_table, 0), np.nextafter(on_table, np.inf)])
        near = near[(near > lo) & (near <= top)]
        f = np.concatenate([rng.uniform(lo, top, 300_000), near,
                            [np.nextafter(lo, np.inf), tech.fmax_mhz(node), top]])
        got = tech._bisect_vdd_ratios(f, np.full(len(f), node))
        assert np.array_equal(got, tech._bisect_vdd_ratio(f, node)), node
        fs.append(f[::7])
        ns.append(np.full(len(f[::7]), node))
    f, nodes = np.concatenate(fs), np.concatenate(ns)
    order = rng.permutation(len(f))
    f, nodes = f[order], nodes[order]
    assert np.array_equal(tech._bisect_vdd_ratios(f, nodes), _plain(f, nodes))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(tech.NODES_NM), st.floats(0.0, 1.0)), min_size=1, max_size=40))
def test_table_bisection_equals_the_loop_hypothesis(draws):
    nodes = np.array([n for n, _ in draws])
    f = np.array([tech.F_NOM_MHZ[n] + u * (_top(n) - tech.F_NOM_MHZ[n]) for n, u in draws])
    f = np.where(f > np.array([tech.F_NOM_MHZ[n] for n in nodes]), f, np.nextafter(f, np.inf))
    want = _plain(f, nodes)
    assert np.array_equal(tech._bisect_vdd_ratios(f, nodes), want)
    for x, n, w in zip(f.tolist(), nodes.tolist(), want.tolist()):  # one clock (a study's trial)
        assert clock.bisect_vdd_ratio(x, n) == w


def test_without_a_table_the_loop_runs_from_the_start(monkeypatch):
    """A node whose table's speeds did not rise would have none (None): the plain loop, the same bits; and a
    table is refused when its speeds do not rise."""
    rng = np.random.default_rng(5)
    f = np.concatenate([rng.uniform(tech.F_NOM_MHZ[n], _top(n), 500) for n in tech.NODES_NM])
    nodes = np.repeat(tech.NODES_NM, 500)
    want = _plain(f, nodes)
    monkeypatch.setattr(tech, "bisection_tree", lambda node: None)
    assert np.array_equal(tech._bisect_vdd_ratios(f, nodes), want)
    assert [clock.bisect_vdd_ratio(x, n) for x, n in zip(f[:50].tolist(), nodes[:50].tolist())] == want[:50].tolist()
    monkeypatch.undo()
    monkeypatch.setattr(tech, "_speed", lambda v, node: -np.asarray(v))  # falling speeds
    assert tech.bisection_tree.__wrapped__(28) is None


def test_vdd_ratio_remembers_few_clocks_only_and_answers_the_same():
    """A node's array with at most _VDD_MEMO_KEYS distinct clocks above nominal is remembered; more are bisected
    without the memo; both answer the loop's bits (NaN above the maximum, 1 up to nominal)."""
    rng = np.random.default_rng(9)
    node = 28
    many = rng.uniform(tech.F_NOM_MHZ[node], _top(node), tech._VDD_MEMO_KEYS + 1)
    few = rng.uniform(tech.F_NOM_MHZ[node], _top(node), tech._VDD_MEMO_KEYS)
    for clocks, kept in ((many, False), (few, True)):
        tech._VDD_MEMO.clear()
        f = np.concatenate([clocks, clocks, [500.0, 5000.0, np.nan]])
        want = np.concatenate([tech._bisect_vdd_ratio(clocks, node)] * 2 + [[1.0, np.nan, np.nan]])
        assert np.array_equal(tech.vdd_ratio(f, node), want, equal_nan=True)
        assert (len(tech._VDD_MEMO) == len(clocks)) is kept and (len(tech._VDD_MEMO) == 0) is not kept
        assert np.array_equal(tech.vdd_ratio(f, node), want, equal_nan=True)  # from the memo where kept


def test_clock_check_of_mixed_nodes_names_each_points_node():
    f = np.array([100.0, 5000.0, 1100.0, 5000.0, 1600.0, 2000.0])
    nodes = np.array([28, 28, 28, 14, 14, 14])
    tech._CLOCK_MEMO.clear()
    ok, why = tech.clock_check(f, nodes)
    assert ok.tolist() == [f[i] <= clock.node_max_clock_mhz(int(nodes[i])) for i in range(len(f))]
    assert why.tolist() == ["" if ok[i] else clock.clock_reason(int(nodes[i])) for i in range(len(f))]
    assert ok.flags.writeable and why.flags.writeable
    costs = tech.clock_costs(f, nodes)
    assert np.array_equal(costs.vdd_ratio, [tech.vdd_ratio(x, int(n)) for x, n in zip(f, nodes)], equal_nan=True)


def _per_node_costs(f: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V / V_nom, area factor) node by node, as clock_costs computed them before the per-point constants: each
    node's points selected, the node's constants as numbers."""
    v, a = np.empty(f.shape), np.empty(f.shape)
    for node in tech.NODES_NM:
        sel = nodes == node
        fn = f[sel]
        ok = fn <= _top(node)
        vn = np.where(ok, 1.0, np.nan)
        up = (fn > tech.F_NOM_MHZ[node]) & ok
        vn[up] = tech._bisect_vdd_ratio(fn[up], node)
        v[sel] = vn
        x = (fn / tech.F_NOM_MHZ[node] - tech.AREA_KNEE) / (1 - tech.AREA_KNEE)
        c = np.minimum(np.maximum(x, 0.0), 1.0)
        a[sel] = 1.0 + tech.AREA_PENALTY_MAX * (c * c)
    return v, a


@settings(max_examples=40, deadline=None)
@given(n=st.integers(17, 400), repeat=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), clear=st.booleans())
def test_clock_costs_over_mixed_nodes_equal_the_node_by_node_costs(n, repeat, seed, clear):
    """Batches of mixed nodes (each node's nominal and top clock gathered per point, one expression over all
    points) give the bits of the node-by-node computation: clocks over the whole range, at the boundaries, NaN,
    repeated (memo paths: few distinct keys, many), with the memos empty or filled."""
    rng = np.random.default_rng(seed)
    special = [np.nan, 0.0] + [x for node in tech.NODES_NM for x in
                               (tech.F_NOM_MHZ[node], np.nextafter(tech.F_NOM_MHZ[node], np.inf), tech.fmax_mhz(node),
                                _top(node), np.nextafter(_top(node), np.inf))]
    pool = np.concatenate([np.exp(rng.uniform(np.log(10.0), np.log(2500.0), max(1, n // repeat))), special])
    f = rng.choice(pool, n)
    nodes = rng.choice(np.array(tech.NODES_NM), n)
    if clear:
        tech._VDD_MEMO.clear()
        tech._CLOCK_MEMO.clear()
    c = tech.clock_costs(f, nodes)
    v, a = _per_node_costs(f, nodes)
    assert np.array_equal(c.vdd_ratio, v, equal_nan=True)
    assert np.array_equal(c.area_factor, a, equal_nan=True)
    assert np.array_equal(c.feasible, ~np.isnan(v))
    assert np.array_equal(tech.vdd_ratio(f[nodes == 28], 28), v[nodes == 28], equal_nan=True)

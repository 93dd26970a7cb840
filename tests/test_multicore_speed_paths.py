"""The multicore model's one-point path (issue 15: each layer costed in Python numbers) gives the very numbers of
the batch path (the same formulas over arrays of layers x points)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from archmodels import get_model
from archmodels.multicore import model as MC

M = get_model("multicore")


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space, and some with each placement (infeasible ones included)."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    return rows + [{**r, "placement": p} for r in rows[:4] for p in MC.PLACEMENTS]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("wl", ["vgg16", "fc2", "matmul:m=300,k=500,cols=7", "mobilenet_v2"])
def test_each_point_alone_equals_the_batch_states_and_reasons(wl):
    rows = _rows(100, 21)
    batch = M.evaluate_batch(wl, M.params.points(rows))
    assert batch.feasible.any() and not batch.feasible.all()
    assert any("shared memory too small" in r for r in batch.reason)  # a layer's own reason, too
    for i, row in enumerate(rows):
        one = M.evaluate_batch(wl, M.params.points([row]))
        assert bool(one.feasible[0]) == bool(batch.feasible[i])
        assert one.reason[0] == batch.reason[i]
        assert len(one.layers) == len(batch.layers)
        for lb_one, lb in zip(one.layers, batch.layers):
            assert lb_one.layer is lb.layer
            assert bool(lb_one.feasible[0]) == bool(lb.feasible[i]) and lb_one.reason[0] == lb.reason[i]
            assert list(lb_one.metrics) == list(lb.metrics) and list(lb_one.states) == list(lb.states)
            for key, v in list(lb_one.metrics.items()) + list(lb_one.states.items()):
                got = lb.metrics[key][i] if key in lb.metrics else lb.states[key][i]
                assert _same(v[0], got), (i, lb.layer.name, key, v[0], got)
            assert {k: v[0] for k, v in lb_one.labels.items()} == {k: v[i] for k, v in lb.labels.items()}
        assert list(one.totals) == list(batch.totals)
        for key, v in one.totals.items():
            assert _same(v[0], batch.totals[key][i]), (i, key, v[0], batch.totals[key][i])
        assert one.point(0) == batch.point(i)


def test_helpers_give_numpy_results_on_python_numbers():
    """where / minimum / maximum / max_of / ceil / ceil_div on Python numbers == numpy on arrays, NaN included."""
    nan = math.nan
    xs = [0.0, 1.0, 2.5, -3.0, 7, 3, nan, 1e300]
    for a in xs:
        for b in xs:
            want_min, want_max = np.minimum(np.array([a]), b)[0], np.maximum(np.array([a]), b)[0]
            assert _same(float(MC.minimum(a, b)), float(want_min)) and _same(float(MC.maximum(a, b)), float(want_max))
            assert _same(float(MC.where(a < b, a, b)), float(np.where(np.array([a]) < b, a, b)[0]))
            for c in xs[:4] + [nan]:
                want = np.maximum.reduce([np.array([float(a)]), np.array([b]), np.array([c]), np.array([2.0])])[0]
                got = MC.max_of(float(a), b, c, 2.0)
                assert type(got) is float and _same(got, float(want))
                arr = MC.max_of(np.array([float(a)]), np.array([b]), np.array([c]), np.array([2.0]))
                assert _same(float(arr[0]), float(want))
    for x in [0.0, 0.5, 1.0, 2.0000001, 1e17 + 0.5, 12345.999, math.inf]:
        got = MC.ceil(x)
        assert type(got) is float and got == float(np.ceil(np.array([x]))[0])
    for a in range(1, 60):
        for b in (1, 2, 7, 16, 1024):
            assert MC.ceil_div(a, b) == int(MC.ceil_div(np.array([a]), np.array([b]))[0]) == math.ceil(a / b)


def test_point_clock_gives_the_technology_tables_clock_costs_and_reason():
    """point_clock and logic_area_factor (one point's clock in Python floats) == tech.clock_costs over an array,
    bit for bit, at every node, below, at and above the nominal clock and the maximum; clock_reason ==
    tech.clock_check's words."""
    from archmodels import tech

    rng = np.random.default_rng(8)
    for node in tech.NODES_NM:
        fmax, fnom = tech.fmax_mhz(node), tech.F_NOM_MHZ[node]
        clocks = np.concatenate([rng.uniform(1.0, 3000.0, 300), [fnom, fmax, fmax * (1 + 1e-9), fnom * 0.6, 50.0,
                                                                 np.nextafter(fnom, 0), np.nextafter(fmax, 1e9)]])
        want = tech.clock_costs(clocks, node)
        ok, reason = tech.clock_check(clocks, node)
        for i, f in enumerate(clocks.tolist()):
            MC._CLOCK_MEMO.clear()
            got = (*MC.point_clock(f, node), MC.logic_area_factor(f, node))
            for g, w in zip(got, (want.vdd_ratio[i], want.energy_scale[i], want.area_factor[i])):
                assert type(g) is float and _same(g, float(w)), (node, f)
            assert (not math.isnan(got[0])) == bool(ok[i])
            if not ok[i]:
                assert MC.clock_reason(node) == reason[i]

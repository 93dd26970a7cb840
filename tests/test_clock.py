"""archmodels.clock: what one ASIC clock costs, in Python numbers (a model's one-point path), equals the
technology table's clock_costs / clock_check over arrays (its batch path), bit for bit."""

from __future__ import annotations

import math

import numpy as np

from archmodels import clock, tech


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def test_point_clock_equals_the_technology_table():
    """clock.point_clock (Python numbers, tech.vdd_ratio for a clock above nominal) and tech.clock_costs /
    clock_check of a one-point array (which take point_clock) == the array path over many clocks at once, each
    element; the reason of a clock above the maximum == the array path's."""
    rng = np.random.default_rng(4)
    for node in tech.NODES_NM:
        fmax = tech.fmax_mhz(node)
        clocks = np.concatenate([rng.uniform(0.1, 3000, 300), [tech.F_NOM_MHZ[node], fmax, fmax * (1 + 1e-9),
                                                               fmax * (1 + 2e-9), 0.6 * tech.F_NOM_MHZ[node]]])
        tech._CLOCK_MEMO.clear()
        tech._VDD_MEMO.clear()
        clock._VDD.clear()
        many = tech.clock_costs(clocks, np.full(len(clocks), node))  # the array path (several points)
        many_ok, many_why = tech.clock_check(clocks, np.full(len(clocks), node))
        for i, f in enumerate(clocks.tolist()):
            got = clock.point_clock(f, node)
            one = tech.clock_costs(np.array([f]), np.array([node]))
            for key in ("vdd_ratio", "energy_scale", "area_factor"):
                assert _same(getattr(got, key), getattr(many, key).item(i)), (node, f, key)
                assert _same(getattr(one, key).item(0), getattr(many, key).item(i)), (node, f, key)
                assert getattr(one, key).shape == (1,) and not getattr(one, key).flags.writeable
            assert got.feasible == many.feasible.item(i) == one.feasible.item(0)
            ok, why = tech.clock_check(np.array([f]), np.array([node]))
            assert (f <= clock.node_max_clock_mhz(node)) == ok.item(0) == many_ok.item(i)
            assert why.item(0) == many_why.item(i) == ("" if ok.item(0) else clock.clock_reason(node))


def test_supply_bisection_of_one_clock_equals_the_array_bisection():
    """clock.bisect_vdd_ratio (Python floats, numpy's power on a one-element array) == tech's bisection over an
    array of many clocks and over a one-element array, bit for bit."""
    rng = np.random.default_rng(12)
    for node in tech.NODES_NM:
        top = tech.fmax_mhz(node) * (1 + 1e-9)
        clocks = np.concatenate([rng.uniform(tech.F_NOM_MHZ[node], top, 3000),
                                 [np.nextafter(tech.F_NOM_MHZ[node], np.inf), tech.fmax_mhz(node), top]])
        many = tech._bisect_vdd_ratio(clocks, node)
        for f, want in zip(clocks.tolist(), many.tolist()):
            assert clock.bisect_vdd_ratio(f, node) == want, (node, f)
        for f in clocks[:200].tolist():
            assert clock.bisect_vdd_ratio(f, node) == tech._bisect_vdd_ratio(np.array([f]), node).item(0)


def test_logic_area_factor_of_one_number_equals_the_array_path():
    """tech.logic_area_factor of one clock given as a number (a 0-d array inside) == the same clock in an array:
    the square is c * c both ways (a 0-d ``** 2`` calls pow(), one unit in the last place off for e.g.
    795.6116496849764 MHz at 28 nm, which the hypothesis test of the clock memo once drew)."""
    rng = np.random.default_rng(8)
    for node in tech.NODES_NM:
        clocks = np.concatenate([rng.uniform(1.0, 3000.0, 5000), [795.6116496849764]])
        arr = tech.logic_area_factor(clocks, node)
        for f, want in zip(clocks.tolist(), arr.tolist()):
            assert float(tech.logic_area_factor(f, node)) == want, (node, f)
            assert float(tech.logic_area_factor(np.float64(f), node)) == want, (node, f)
            assert clock.logic_area_factor(f, node) == want, (node, f)

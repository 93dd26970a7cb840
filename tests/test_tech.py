"""The technology table: its published points, its DRAM rows' source formulas, and the rules that must hold
everywhere (voltage-frequency model, synthesis penalty, leakage). The fitted PE overhead is re-fitted in
tests/test_fitted.py; nothing here restates a fitted anchor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import tech


@pytest.mark.parametrize("kb,pj64", [(8, 10.0), (32, 20.0), (1024, 100.0)])
def test_sram_energy_fits_horowitz_points(kb, pj64):
    at45 = float(tech.sram_energy_pj_per_byte(kb, 28)) / tech.energy_scale(28) * 8
    assert at45 == pytest.approx(pj64, rel=0.15)


def test_dram_rows_follow_their_sources():
    rows = tech.DRAM_TYPES
    assert rows["ddr3l"].read_pj_per_byte == pytest.approx(61.49, abs=0.01)  # 4 x 262.3 mW / 17.064 GB/s
    assert rows["ddr3l"].write_pj_per_byte == pytest.approx(128.13, abs=0.01)  # 4 x 546.6 mW / 17.064 GB/s
    assert rows["ddr4"].read_pj_per_byte == pytest.approx(45.0)  # (145 - 55) mA x 1.2 V / 2.4 GB/s
    assert rows["hbm2"].read_pj_per_byte == pytest.approx(31.76)  # 3.97 pJ/bit
    assert rows["lpddr4"].write_pj_per_byte == pytest.approx(108.0)  # 13.5 pJ/bit
    assert all(r.source and r.basis for r in rows.values())
    e = tech.dram_energy_j(np.array([1e6, 0.0]), np.array([0.0, 1e6]), np.array(["ddr3l", "hbm2"], dtype=object))
    assert e == pytest.approx([61.49e-6, 31.76e-6], rel=1e-3)


def test_smaller_node_costs_less_and_wider_types_cost_more():
    for dt in tech.DTYPES:
        assert tech.mac_energy_pj(dt, 14) < tech.mac_energy_pj(dt, 28)
        assert tech.mac_area_mm2(dt, 14) < tech.mac_area_mm2(dt, 28)
    e = [tech.mac_energy_pj(d, 28) for d in ("int8", "int16", "int32")]
    assert e == sorted(e)
    sizes = np.array([1, 8, 64, 512])
    assert np.all(np.diff(tech.sram_energy_pj_per_byte(sizes, 28)) > 0)
    assert tech.sram_area_mm2(2048, 28) == pytest.approx(2 * tech.sram_area_mm2(1024, 28))


def test_unknown_node_is_rejected():
    with pytest.raises(ValueError, match="not in table"):
        tech.mac_energy_pj("int8", 7)


@settings(max_examples=200, deadline=None)
@given(node=st.sampled_from(tech.NODES_NM), frac=st.floats(0.0, 1.0))
def test_supply_meets_the_alpha_power_law_between_nominal_and_max_clock(node, frac):
    f_nom, f_max = tech.F_NOM_MHZ[node], tech.fmax_mhz(node)
    f = f_nom + frac * (f_max - f_nom)
    v = float(tech.vdd_ratio(f, node)) * tech.VDD_NOM[node]
    assert tech.VDD_NOM[node] - 1e-9 <= v <= tech.VDD_MAX[node] + 1e-9
    # the supply found makes the gates exactly fast enough for f (relative to nominal)
    assert tech._speed(v, node) / tech._speed(tech.VDD_NOM[node], node) == pytest.approx(f / f_nom, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(node=st.sampled_from(tech.NODES_NM), f1=st.floats(1.0, 3000.0), f2=st.floats(1.0, 3000.0))
def test_clock_costs_never_fall_with_the_clock(node, f1, f2):
    lo, hi = sorted((f1, f2))
    c = tech.clock_costs([lo, hi], node)
    assert c.area_factor[0] <= c.area_factor[1] and 1.0 <= c.area_factor[0]
    assert c.area_factor[1] <= 1.0 + tech.AREA_PENALTY_MAX
    if c.feasible[1]:
        assert c.feasible[0] and 1.0 <= c.energy_scale[0] <= c.energy_scale[1]
    assert c.feasible[1] == (hi <= tech.fmax_mhz(node) * (1 + 1e-9))
    if hi <= tech.AREA_KNEE * tech.F_NOM_MHZ[node]:
        assert c.area_factor[1] == 1.0 and c.energy_scale[1] == 1.0


def test_fmax_reason_names_the_limit():
    ok, why = tech.clock_check(np.array([500.0, 5000.0]), 28)
    assert ok.tolist() == [True, False] and why[0] == "" and "28 nm maximum of 1118 MHz" in why[1]
    assert math.isnan(float(tech.vdd_ratio(5000.0, 28)))


@settings(max_examples=100, deadline=None)
@given(logic=st.floats(0.0, 1e3), kb=st.floats(0.0, 1e6), v=st.floats(0.5, 1.5), node=st.sampled_from(tech.NODES_NM))
def test_leakage_is_linear_in_logic_sram_and_supply(logic, kb, v, node):
    p = float(tech.static_power_w(logic, kb, node, v))
    want = (logic * tech.LOGIC_LEAK_MW_PER_MM2[node] * 1e-3 + kb * tech.SRAM_LEAK_UW_PER_KB[node] * 1e-6) * v
    assert p == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_sram_figures_of_one_python_float_equal_the_array_path():
    """sram_energy_pj_per_byte / sram_area_mm2 of a Python float (one point) == the array path, bit for bit."""
    import math

    rng = np.random.default_rng(2)
    sizes = np.concatenate([np.exp(rng.uniform(-8, 14, 500)), [0.0, -1.0, 0.0625, 0.06, 8.0, 1e300, math.inf, math.nan]])
    for node in tech.NODES_NM:
        e_arr, a_arr = tech.sram_energy_pj_per_byte(sizes, node), tech.sram_area_mm2(sizes, node)
        for i, kb in enumerate(sizes.tolist()):
            e, a = tech.sram_energy_pj_per_byte(kb, node), tech.sram_area_mm2(kb, node)
            assert type(e) is float and type(a) is float
            assert np.array([e]).tobytes() == e_arr[i:i + 1].tobytes(), (node, kb)
            assert np.array([a]).tobytes() == a_arr[i:i + 1].tobytes(), (node, kb)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e4), st.floats(0, 1e6), st.sampled_from(tech.NODES_NM), st.floats(0.3, 1.5))
def test_static_power_on_python_floats_has_the_bits_of_the_array_path(logic, kb, node, vdd):
    """One point's leakage (Python floats in, a Python float out) equals the array path's value bit for bit."""
    got = tech.static_power_w(logic, kb, node, vdd)
    want = tech.static_power_w(np.array([logic]), np.array([kb]), node, np.array([vdd]))[0]
    assert type(got) is float
    assert np.float64(got).tobytes() == want.tobytes()

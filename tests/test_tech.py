"""The technology table: anchors and the shape of its scaling rules."""

from __future__ import annotations

import numpy as np
import pytest

from archmodels import tech


def test_imax_die_anchor_reproduces_13_3_mm2():
    unit = float(tech.sram_area_mm2(tech.IMAX_LMM_KB, 28)) + tech.pe_logic_area_mm2("fp32", 28, tech.IMAX_FMAS_PER_UNIT)
    assert unit * tech.IMAX_UNITS == pytest.approx(13.3, rel=1e-12)


@pytest.mark.parametrize("kb,pj64", [(8, 10.0), (32, 20.0), (1024, 100.0)])
def test_sram_energy_fits_horowitz_points(kb, pj64):
    at45 = float(tech.sram_energy_pj_per_byte(kb, 28)) / tech.energy_scale(28) * 8
    assert at45 == pytest.approx(pj64, rel=0.15)


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

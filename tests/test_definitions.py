"""One physics for every model: each metric means the same thing (docs/contract.md, ``result.DEFINITIONS``)
and the same data movement costs the same energy for the same technology row (docs/technology.md)."""

from __future__ import annotations

import numpy as np
import pytest

from archmodels import available, get_model, tech
from archmodels.result import DEFINITIONS, check_definitions

WORKLOADS = {"emaxv": "alexnet-conv", "emaxvr": "alexnet", "imax": "spmm:n=256,sparsity=0.9", "rena": "vgg16",
             "atomswitch": "lenet", "multicore": "alexnet"}


def _feasible_points(arch: str, n: int = 60):
    model = get_model(arch)
    rows = [model.params.defaults()] + model.params.random_rows(n, np.random.default_rng(7))
    if arch == "imax":  # random IMAX points rarely fit an LMM schedule: add a grid around the prototype
        rows += [{"units": u, "nchip": c, "clock_mhz": f, "tech_nm": nd, "schedule": s}
                 for u in (32, 64, 128) for c in (1, 2) for f in (150.0, 900.0) for nd in (28, 14) for s in ("ivj", "ivs")]
    batch = model.evaluate_points(WORKLOADS[arch], rows)
    return [batch.point(i) for i in range(batch.n) if batch.feasible[i]]


@pytest.mark.parametrize("arch", available())
def test_every_definition_holds_on_every_model(arch):
    points = _feasible_points(arch)
    assert len(points) >= 3, "too few feasible points to check"
    for r in points:
        assert check_definitions(r) == []
        t = r["total"]
        # the three the issue names, recomputed here by hand
        assert t["utilization"] == pytest.approx(t["macs"] / (t["cycles"] * t["hw_mac_units"]), rel=1e-9)
        assert t["power_w"] == pytest.approx(t["energy_j"] / t["time_s"], rel=1e-12)
        assert t["power_w"] == pytest.approx(t["dynamic_power_w"] + t["static_power_w"], rel=1e-12)
        assert t["dram_bytes"] == pytest.approx(t["dram_read_bytes"] + t["dram_write_bytes"], rel=1e-12)
        assert 0 <= t["utilization"] <= 1 and t["static_power_w"] > 0
        for lay in r["layers"]:
            if lay["cycles"]:
                assert lay["utilization"] == pytest.approx(lay["macs"] / (lay["cycles"] * t["hw_mac_units"]), rel=1e-9)


def test_check_definitions_catches_a_wrong_metric():
    r = get_model("multicore").evaluate("fc2")
    assert check_definitions(r) == []
    r["total"]["utilization"] *= 1.5
    r["layers"][0]["dram_bytes"] += 1
    bad = check_definitions(r)
    assert any("utilization" in b for b in bad) and any("dram_bytes" in b for b in bad)
    assert {d.key for d in DEFINITIONS} >= {"utilization", "power_w", "dram_bytes"}


@pytest.mark.parametrize("arch", available())
def test_same_dram_row_same_energy_per_byte_in_every_model(arch):
    """Switching the DRAM row changes each model's energy by exactly its DRAM bytes x the rows' difference."""
    model = get_model(arch)
    res = model.evaluate_points(WORKLOADS[arch], [{"dram": "ddr4"}, {"dram": "hbm2"}, {"dram": "ddr3l"}])
    rd, wr = res.totals["dram_read_bytes"][0], res.totals["dram_write_bytes"][0]
    assert rd + wr > 0
    e = res.totals["energy_j"]
    for i, name in ((1, "hbm2"), (2, "ddr3l")):
        row, ref = tech.DRAM_TYPES[name], tech.DRAM_TYPES["ddr4"]
        expect = (rd * (row.read_pj_per_byte - ref.read_pj_per_byte) + wr * (row.write_pj_per_byte - ref.write_pj_per_byte)) * 1e-12
        assert e[i] - e[0] == pytest.approx(expect, rel=1e-6)
        assert res.totals["time_s"][i] == res.totals["time_s"][0]  # the row is energy only


def test_emax_ddr3l_row_is_the_thesis_method():
    """The DDR3L row is the EMAX thesis's read/write chip power over the bus bandwidth (spec emax.md §5)."""
    row = tech.DRAM_TYPES["ddr3l"]
    assert row.read_pj_per_byte == pytest.approx(4 * 0.2623 / 17.064e9 * 1e12)
    assert row.write_pj_per_byte == pytest.approx(4 * 0.5466 / 17.064e9 * 1e12)
    r = get_model("emaxvr").evaluate("alexnet-conv")
    t = r["total"]
    assert t["dram_energy_j"] == pytest.approx((t["dram_read_bytes"] * row.read_pj_per_byte
                                                + t["dram_write_bytes"] * row.write_pj_per_byte) * 1e-12, rel=1e-9)


@pytest.mark.parametrize("arch,wl", [("emaxvr", "alexnet-conv"), ("imax", "matmul:n=256"), ("multicore", "fc2")])
def test_clock_above_nominal_costs_energy_area_and_has_a_limit(arch, wl):
    model = get_model(arch)
    f_nom = tech.F_NOM_MHZ[28]
    res = model.evaluate_points(wl, [{"clock_mhz": 0.3 * f_nom}, {"clock_mhz": 0.5 * f_nom}, {"clock_mhz": f_nom},
                                     {"clock_mhz": tech.fmax_mhz(28)}, {"clock_mhz": 1.05 * tech.fmax_mhz(28)}])
    t = res.totals
    area, dyn = t["area_mm2"], t["dynamic_power_w"] * t["time_s"]
    assert area[0] == area[1] < area[2] == area[3]  # below the knee no penalty; at F_NOM fully upsized
    assert dyn[3] > dyn[2] * 1.1  # overdrive: (V / V_nom)^2
    assert res.feasible[:4].all() and not res.feasible[4]
    assert "maximum" in res.reason[4]


def test_combined_workloads_keep_the_definitions():
    """A study's ``combine: sum`` over two workloads: hardware keys are not summed, power still adds up."""
    from dse.objective import combine_totals

    m = get_model("multicore")
    res = [m.evaluate_points(w, [{}, {"cores": 4}]) for w in ("fc1", "fc2")]
    tot = combine_totals(res, "sum", {}, m.TOTAL_METRICS)
    assert tot["hw_mac_units"] == pytest.approx(res[0].totals["hw_mac_units"])
    assert tot["static_power_w"] == pytest.approx(res[0].totals["static_power_w"])
    assert tot["power_w"] == pytest.approx(tot["dynamic_power_w"] + tot["static_power_w"], rel=1e-12)
    assert tot["utilization"] == pytest.approx(tot["macs"] / (tot["cycles"] * tot["hw_mac_units"]), rel=1e-9)

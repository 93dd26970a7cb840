"""EMAXV/EMAXVR models: calibration, contract, sanity, knobs, configurations never built."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from archmodels import get_model, tech
from archmodels.emax import timing as emax_timing
from archmodels.emax.cost import dram_power_saved_w
from dse import validate
from workloads.errors import UserError
from workloads import Workload, load_workload

from .conftest import dse_process

LAYER_KEYS = {"name", "kind", "macs", "cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes",
              "dram_bytes", "energy_j", "fused_into", "states"}
TOTAL_KEYS = {"macs", "cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "dram_bytes",
              "energy_j", "power_w", "area_mm2", "macs_per_s", "fps"}
STATES = {"CONF", "LMMI", "LOAD", "REGV", "EXEC", "PRE_POST_EXEC", "DRAIN", "PLOAD", "PDRAIN", "POOL"}


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr"])
def test_calibration_cases_pass(arch):
    results = validate.run(arch)
    assert len(results) == (8 if arch == "emaxv" else 24)
    failed = [(r.section, r.label, r.metric, r.model, r.published) for r in results if not r.ok]
    assert not failed


def test_fitted_constants_are_the_fit_of_their_figures():
    from archmodels.emax.fit import fit

    assert fit(rounds=2) == (emax_timing.START_OVERHEAD_CYCLES, emax_timing.LOOP_END_BUBBLE_CYCLES)


def test_dram_power_saved_is_computed_from_two_runs():
    m = get_model("emaxvr")
    p = m.params.defaults()
    got = m.validation_metric("dram_power_saved_w", None, p, {}, {})
    r = m.evaluate_points("alexnet-conv", [p, {**p, "spm_kb": 0.0}]).totals
    want = dram_power_saved_w(r["dram_read_bytes"][1] - r["dram_read_bytes"][0],
                              r["dram_write_bytes"][1] - r["dram_write_bytes"][0], r["time_s"][0])
    assert got == pytest.approx(float(want)) and got > 0
    assert m.validation_metric("something_else", None, p, {}, {}) is NotImplemented


@pytest.mark.parametrize("args", [
    ["emaxvr", "vgg16-conv"], ["emaxv", "alexnet-conv"], ["emaxvr", "alexnet-conv", "--set", "spm_kb=0"],
])
def test_json_fills_every_contract_key(args):
    proc = dse_process("evaluate", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["feasible"]
    for lay in r["layers"]:
        assert LAYER_KEYS <= set(lay)
        assert all(lay[k] is not None for k in LAYER_KEYS - {"fused_into"})
        assert set(lay["states"]) == STATES
        assert 0 <= lay["utilization"] <= 1
        if lay["kind"] == "conv":
            assert lay["mapping"] and lay["loop_order"] and lay["parallelism"] > 0 and lay["starts"] >= 1
    assert all(r["total"][k] is not None for k in TOTAL_KEYS)
    if "spm_kb=0" in args:
        c7 = next(lay for lay in r["layers"] if lay["name"] == "C7")
        assert c7["dram_psum_write_bytes"] > 0  # partial sums go to DRAM without an SPM


@pytest.mark.parametrize("wl", ["alexnet-conv", "vgg16-conv"])
@pytest.mark.parametrize("criterion", ["time", "dram"])
def test_more_spm_never_adds_dram_traffic(wl, criterion):
    spms = [0, 32, 64, 128, 256, 512, 2048]
    r = get_model("emaxvr").evaluate_points(wl, [{"spm_kb": float(s), "criterion": criterion} for s in spms])
    d = r.totals["dram_bytes"]
    assert np.all(np.diff(d) <= 1e-9 * d[:-1]), d
    assert d[-1] < d[0]


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr"])
def test_higher_clock_never_slows_exec(arch):
    clocks = [100.0, 240.0, 500.0, 1000.0]
    r = get_model(arch).evaluate_points("alexnet", [{"clock_mhz": c} for c in clocks])
    exec_s = np.array([sum(lb.states["EXEC"] for lb in r.layers)]) / (np.array(clocks) * 1e6)
    assert np.all(np.diff(exec_s[0]) < 0)
    assert np.all(np.diff(r.totals["time_s"]) <= 0)


def test_batch_equals_scalar():
    m = get_model("emaxvr")
    rows = [{"rows": 32, "spm_kb": 64.0}, {"cols": 8, "lmm_kb": 2.0, "clock_mhz": 500.0}, {"criterion": "energy"}]
    batch = m.evaluate_points("alexnet", rows)
    for i, row in enumerate(rows):
        assert batch.point(i) == m.evaluate("alexnet", **row)


def test_configurations_never_built_give_a_result_or_a_reason():
    m = get_model("emaxvr")
    rows = [dict(rows=r, cols=c, lmm_kb=lmm, spm_kb=s, clock_mhz=f)
            for r, c, lmm, s, f in itertools.product((16, 128), (4, 8), (0.5, 64.0), (0.0, 4096.0), (100.0, 1000.0))]
    res = m.evaluate_points("alexnet", rows)
    t = res.totals
    ok = res.feasible
    assert np.all(np.isfinite(t["time_s"][ok])) and np.all(t["area_mm2"] > 0)
    assert all(res.reason[i] for i in np.flatnonzero(~ok))
    # EMAXV too (no SPM), including a 16-row array where C1's kernel must be split over passes
    v = get_model("emaxv").evaluate("alexnet-conv", rows=16, lmm_kb=0.5)
    assert v["feasible"] and v["layers"][0]["passes"] > 3


def test_fixed_pattern_knob_and_infeasible_reason():
    m = get_model("emaxvr")
    r = m.evaluate("alexnet-conv", pattern="B")
    assert not r["feasible"]
    c1 = r["layers"][0]
    assert not c1["feasible"] and "121 MAC rows" in c1["infeasible_reason"]
    assert c1["time_s"] is None  # not computable, not zero
    a = m.evaluate("alexnet-conv", pattern="A")
    assert a["feasible"] and all(lay["mapping"].startswith("A") for lay in a["layers"] if lay["kind"] == "conv")
    pairs32 = m.evaluate("vgg16-conv", pattern="pairs", dtype_bits=32)
    assert not pairs32["feasible"] and "LDDHR" in pairs32["infeasible_reason"]


def test_mapper_reports_the_thesis_mappings():
    r = get_model("emaxvr").evaluate("alexnet-conv")
    got = {lay["name"]: (lay["mapping"], lay["parallelism"]) for lay in r["layers"] if lay["kind"] == "conv"}
    assert got["C1"] == ("A[OW,OC,OH]", 121)
    assert all(got[n] == ("B[OW,OH,OC]", 216) for n in ("C7", "C8", "C9"))
    assert got["C4"][1] == 200


def test_criterion_knob():
    m = get_model("emaxvr")
    rows = [{"criterion": c} for c in ("time", "dram", "energy")]
    r = m.evaluate_points("vgg16-conv", rows)
    t = r.totals
    assert t["dram_bytes"][1] <= t["dram_bytes"][0] and t["time_s"][0] <= t["time_s"][1] * (1 + 0.03)
    assert t["energy_j"][2] <= t["energy_j"][0] * (1 + 1e-9)


def test_emaxv_accepts_only_spm_zero():
    m = get_model("emaxv")
    assert m.evaluate("alexnet-conv", spm_kb=0.0)["feasible"]
    with pytest.raises(UserError, match="spm_kb=128.0 is not valid; allowed: 0..0"):
        m.evaluate("alexnet-conv", spm_kb=128.0)


def test_area_from_tech_and_imax_crosscheck():
    m = get_model("emaxv")
    # IMAX-sized array: 64 units, 64 KB LMM, fp32. IMAX units carry 2 FMAs, EMAX PEs one.
    area = m.evaluate("fc1", rows=16, cols=4, lmm_kb=64.0, dtype_bits=32)["total"]["area_mm2"]
    # one FP32 MAC per EMAX PE vs two per IMAX unit: the difference is 64 PE logic blocks; the rest (the LMMs)
    # is the same SRAM, 64 x 64 KB of 0.127 um^2 bit cells at 50 % efficiency, computed here independently
    logic = 64 * tech.pe_logic_area_mm2("fp32", 28)
    assert area - logic == pytest.approx(64 * 64 * 8192 * 0.127 / 0.5 * 1e-6, rel=1e-9)
    assert area + logic == pytest.approx(tech.IMAX_DIE_MM2)
    vr = get_model("emaxvr")
    a = vr.evaluate_points("fc1", [{}, {"spm_kb": 256.0}, {"lmm_kb": 2.0}, {"rows": 128}]).totals["area_mm2"]
    assert a[0] < a[1] and a[0] < a[2] and a[0] < a[3]


def test_dram_power_follows_the_ddr3l_method():
    r = get_model("emaxvr").evaluate("alexnet-conv")
    t = r["total"]
    e = (t["dram_read_bytes"] * 4 * 0.2623 + t["dram_write_bytes"] * 4 * 0.5466) / 17_064e6
    assert t["dram_power_w"] == pytest.approx(e / t["time_s"])
    assert t["dram_access_per_op"] == pytest.approx(t["dram_bytes"] / (2 * t["macs"]))


def test_unsupported_layers_are_infeasible_not_errors():
    r = get_model("emaxvr").evaluate("spmv:n=64,sparsity=0.9")
    assert not r["feasible"] and "spmv" in r["infeasible_reason"]


def test_fc_is_load_bound_as_published():
    r = get_model("emaxvr").evaluate(Workload("fc11", (load_workload("alexnet").layer("FC11"),)))
    fc = r["layers"][0]
    assert fc["states"]["LOAD"] > 0.8 * fc["cycles"]  # spec §3.1: LOAD takes over 80 % of FC time

"""The evaluation contract (issue framework core §4) and parameter validation."""

from __future__ import annotations

import json

import pytest

from archmodels import get_model
from archmodels.result import LAYER_METRICS, TOTAL_METRICS
from workloads.errors import UserError

from .conftest import dse_process

LAYER_KEYS = {"name", "kind", "macs", "vector_ops", "cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes",
              "dram_bytes", "energy_j", "static_energy_j", "fused_into", "states"}
TOTAL_KEYS = {"macs", "vector_ops", "cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "dram_bytes",
              "energy_j", "power_w", "area_mm2", "macs_per_s", "fps", "hw_mac_units", "dynamic_power_w",
              "static_power_w"}


def test_contract_names_are_declared_once():
    assert {m.name for m in LAYER_METRICS} | {"name", "kind", "macs", "vector_ops", "fused_into", "states"} == LAYER_KEYS
    assert {m.name for m in TOTAL_METRICS} == TOTAL_KEYS


def test_json_output_fills_every_contract_key():
    proc = dse_process("evaluate", "multicore", "alexnet", "--json")
    assert proc.returncode == 0
    r = json.loads(proc.stdout)
    assert {"arch", "workload", "params", "feasible", "infeasible_reason", "layers", "total"} <= set(r)
    assert r["params"] == get_model("multicore").params.defaults()
    for layer in r["layers"]:
        assert LAYER_KEYS <= set(layer)
        assert 0 <= layer["utilization"] <= 1
        assert layer["dram_bytes"] == layer["dram_read_bytes"] + layer["dram_write_bytes"]
        assert layer["kind"] in ("conv", "pool", "fc", "matmul", "spmm", "spmv", "vector")
    t = r["total"]
    assert TOTAL_KEYS <= set(t)
    assert t["macs_per_s"] == pytest.approx(t["macs"] / t["time_s"])
    assert t["fps"] == pytest.approx(1 / t["time_s"])
    assert t["power_w"] == pytest.approx(t["energy_j"] / t["time_s"])


def test_table_output_lists_layers():
    proc = dse_process("evaluate", "multicore", "lenet", "--set", "cores=4")
    assert proc.returncode == 0
    for name in ("conv1", "pool1", "ip2", "total:"):
        assert name in proc.stdout


def test_python_api_equals_cli_json():
    import dse

    proc = dse_process("evaluate", "multicore", "fc2", "--set", "placement=T2", "--set", "cores=8", "--json")
    assert dse.evaluate("multicore", "fc2", placement="T2", cores=8) == json.loads(proc.stdout)


@pytest.mark.parametrize("args,msg", [
    (["evaluate", "multicore", "fc1", "--set", "cores=0"], "cores=0 is not valid; allowed: 1..1024"),
    (["evaluate", "multicore", "fc1", "--set", "placement=X"], "allowed: B, T1, TR1, T2, TR2"),
    (["evaluate", "multicore", "fc1", "--set", "colour=red"], "unknown parameter 'colour'"),
    (["evaluate", "multicore", "fc1", "--set", "cores"], "not key=value"),
    (["evaluate", "nosuch", "fc1"], "unknown architecture 'nosuch'"),
    (["evaluate", "multicore", "nosuchnet"], "unknown workload"),
    (["evaluate"], "arguments are required"),
])
def test_bad_cli_input_is_one_line_exit_2(args, msg):
    proc = dse_process(*args)
    assert proc.returncode == 2
    assert msg in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_param_check_coerces_and_rejects():
    ps = get_model("multicore").params
    assert ps.get("clock_mhz").check(600) == 600.0
    with pytest.raises(UserError):
        ps.get("cores").check(2.5)
    with pytest.raises(UserError):
        ps.get("cores").check(True)
    assert ps.get("input_reuse").parse("on") is True
    assert ps.get("value_bits").parse("8") == 8

"""The example model (examples/systolic_array.py) used without editing the framework,
and check_model failing on deliberately broken models (the checker itself can fail)."""

from __future__ import annotations

import csv
import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model, is_path_ref, names
from archmodels.params import Param
from archmodels.result import Metric
from archmodels.testing import check_model

from .conftest import dse_process, write

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "systolic_array.py"
STUDY = ROOT / "examples" / "systolic_study.yaml"
REF = f"{EXAMPLE}:SystolicArray"
SCALESIM = ROOT / "benchmarks" / "data" / "scalesim"  # copy of ../shared/reference/scalesim

SystolicArray = type(get_model(REF))


# ---- the example passes the conformance check and matches SCALE-Sim ----
def test_example_passes_check_model():
    report = check_model(get_model(REF), ["alexnet", "fc1", "matmul:m=300,k=500,cols=70"], n_points=32, seed=3)
    assert report.n_feasible > 0 and report.n_infeasible > 0


def test_example_is_short_and_documented():
    text = EXAMPLE.read_text()
    assert len(text.splitlines()) < 150
    assert text.startswith('"""') and "infeasible" in text


@pytest.mark.parametrize("net", ["alexnet", "vgg16"])
def test_example_compute_cycles_match_scalesim_weight_stationary(net):
    """64 x 64, no stalls: SCALE-Sim counts ``folds * (2R + C + T - 2) - 1`` per run, we count it without the -1."""
    with open(SCALESIM / f"{net}_ws_per_layer.csv") as f:
        runs = list(csv.DictReader(f))
    per_layer: dict[str, list[float]] = {}
    for r in runs:  # AlexNet's two-group layers ran as two runs (conv2_g0, conv2_g1)
        per_layer.setdefault(r["layer"].split("_g")[0], []).append(float(r["total_cycles"]))
    out = get_model(REF).evaluate(net, rows=64, cols=64, sram_kb=65536, dram_gbps=1000)
    ours = [layer for layer in out["layers"] if layer["kind"] in ("conv", "fc")]
    theirs = list(per_layer.values())
    assert len(ours) == len(theirs)
    checked = 0
    for layer, parts in zip(ours, theirs):
        if net == "vgg16" and layer["kind"] == "fc":
            continue  # SCALE-Sim's VGG16 fc6 ran split in parts (vgg16_fc6split.csv)
        assert layer["states"]["COMPUTE"] == sum(parts) + len(parts), layer["name"]
        checked += 1
    assert checked == {"alexnet": 8, "vgg16": 13}[net]


def test_example_mechanisms_move_the_numbers_the_right_way():
    m = get_model(REF)
    small, big = (m.evaluate("alexnet-conv", sram_kb=kb, dram_gbps=1000) for kb in (64, 8192))
    assert small["feasible"] and big["feasible"]
    assert small["total"]["dram_read_bytes"] > big["total"]["dram_read_bytes"]  # reuse decided by buffer size
    assert small["total"]["area_mm2"] < big["total"]["area_mm2"]
    slow = m.evaluate("alexnet", dram_gbps=1.0)
    assert sum(layer["states"]["DRAM_STALL"] for layer in slow["layers"]) > 0
    bad = m.evaluate("lenet", rows=512, cols=512, sram_kb=64)
    assert not bad["feasible"] and "exceed sram_kb=64" in bad["infeasible_reason"]


_design = dict(rows=st.integers(1, 512), cols=st.integers(1, 512), sram_kb=st.floats(4, 32768),
               dram_gbps=st.floats(0.1, 500), clock_mhz=st.floats(50, 2000), value_bits=st.sampled_from([8, 16]),
               wl=st.sampled_from(["lenet", "alexnet", "fc1", "matmul:m=300,k=500,cols=70"]))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(**_design)
def test_example_more_buffer_or_bandwidth_never_hurts(rows, cols, sram_kb, dram_gbps, clock_mhz, value_bits, wl):
    """Anywhere in the space: a larger SRAM never adds DRAM traffic, more bandwidth never adds time."""
    m = get_model(REF)
    p = dict(rows=rows, cols=cols, dram_gbps=dram_gbps, clock_mhz=clock_mhz, value_bits=value_bits)
    r = m.evaluate_points(wl, [{**p, "sram_kb": sram_kb}, {**p, "sram_kb": 2 * sram_kb},
                               {**p, "sram_kb": sram_kb, "dram_gbps": 2 * dram_gbps}])
    dram, time_s = r.totals["dram_bytes"], r.totals["time_s"]
    assert dram[1] <= dram[0] and r.feasible[1] >= r.feasible[0]
    assert time_s[2] <= time_s[0] and dram[2] == dram[0]


# ---- using it without editing the framework ----
def test_cli_evaluates_a_model_by_path():
    proc = dse_process("evaluate", "examples/systolic_array.py:SystolicArray", "alexnet", "--set", "rows=64", "--json")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["arch"] == "systolic" and r["params"]["rows"] == 64
    assert r == get_model(REF).evaluate("alexnet", rows=64)


def test_models_command_describes_a_model_by_path(run_cli):
    code, out, _ = run_cli("models", "examples/systolic_array.py:SystolicArray")
    assert code == 0
    assert "sram_kb" in out and "pes" in out


def test_check_command_passes_the_example_and_fails_a_broken_model(tmp_path):
    ok = dse_process("check", "examples/systolic_array.py:SystolicArray", "lenet", "--points", "4")
    assert ok.returncode == 0, ok.stderr
    assert "check_model(systolic): 10 checks passed on 7 points (lenet:" in ok.stdout
    broken = write(tmp_path / "broken_model.py", (
        "from archmodels.multicore import MulticoreModel\n\n"
        "class Broken(MulticoreModel):\n"
        "    def evaluate_layers(self, workload, pts):\n"
        "        layers = super().evaluate_layers(workload, pts)\n"
        "        layers[0].metrics['energy_j'] = -1.0 - layers[0].metrics['energy_j']\n"
        "        return layers\n"))
    bad = dse_process("check", f"{broken}:Broken", "fc1", "--points", "2")
    assert bad.returncode == 1
    assert "FAILED: check_model(multicore) [units_and_ranges] on fc1 at point" in bad.stderr
    assert "energy_j=" in bad.stderr and "Traceback" not in bad.stderr


def test_model_from_a_path_is_one_instance_and_pickles_as_its_reference(monkeypatch):
    m = get_model(REF)
    monkeypatch.chdir(ROOT / "examples")
    assert get_model("systolic_array.py:SystolicArray") is m  # relative to the cwd, same file
    data = pickle.dumps(m)
    assert len(data) < 500  # a reference, not the model's state
    assert pickle.loads(data) is m
    assert is_path_ref("a/b.py:C") and not is_path_ref("spmm:n=4") and not is_path_ref("multicore")


@pytest.mark.parametrize("ref,msg", [
    ("examples/nosuch.py:SystolicArray", "nosuch.py: no such model file"),
    ("examples/systolic_array.py:Nope", "no class 'Nope'"),
    ("examples/systolic_array.py:np", "'np' is not a subclass of archmodels.Model"),
    ("examples/systolic_array.py:Model", "does not implement evaluate_layers, model_totals"),
])
def test_bad_model_reference_is_one_line_exit_2(ref, msg):
    proc = dse_process("evaluate", ref, "lenet")
    assert proc.returncode == 2
    assert msg in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_model_file_that_fails_to_import_is_one_line(tmp_path):
    write(tmp_path / "broken.py", "import archmodels\ndef oops(:\n")
    proc = dse_process("evaluate", f"{tmp_path / 'broken.py'}:X", "lenet")
    assert proc.returncode == 2
    assert "broken.py: cannot import the model file (line 2): SyntaxError" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_study_with_a_bad_arch_path_names_the_study_file_and_key(tmp_path):
    text = STUDY.read_text().replace("systolic_array.py:SystolicArray", "missing.py:SystolicArray")
    study = write(tmp_path / "s.yaml", text)
    proc = dse_process("run", study, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{study}: arch:" in proc.stderr and "missing.py: no such model file" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_study_from_the_example_file_runs_in_a_subprocess(tmp_path):
    """arch is relative to the study file: run from another directory with two worker processes
    (each re-loads the study file and the model file); results land in the cwd's results/."""
    proc = dse_process("run", STUDY, "--n-trials", "40", "--n-jobs", "2", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "results" / "systolic_alexnet" / "trials.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 40
    feasible = [r for r in rows if r["feasible"] == "True"]
    assert feasible, "no feasible trial"
    r = feasible[0]
    params = {k[len("param."):]: v for k, v in r.items() if k.startswith("param.")}
    m = get_model(REF)
    want = m.evaluate("alexnet", **{k: m.params.get(k).parse(v) for k, v in params.items()})
    assert float(r["total.time_s"]) == pytest.approx(want["total"]["time_s"], rel=1e-12)


def test_sweep_workers_reimport_the_model_from_its_file(tmp_path):
    proc = dse_process("sweep", STUDY, "--sample", "120", "--n-jobs", "2", "--chunk", "30", "--no-progress",
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "results" / "systolic_alexnet" / "sweep" / "trials.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 120
    m = get_model(REF)
    for r in rows[:: 40]:
        params = {k[len("param."):]: v for k, v in r.items() if k.startswith("param.")}
        want = m.evaluate("alexnet", **{k: m.params.get(k).parse(v) for k, v in params.items()})
        if want["total"]["energy_j"] is None:
            assert r["total.energy_j"] == ""
        else:
            assert float(r["total.energy_j"]) == pytest.approx(want["total"]["energy_j"], rel=1e-12)


def test_installed_package_adds_a_model_by_entry_point(tmp_path, monkeypatch):
    """A distribution on the path with an ``accel_dse.models`` entry point (what pip install writes)."""
    shutil.copy(EXAMPLE, tmp_path / "acme_systolic.py")
    dist = tmp_path / "acme_models-0.1.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: acme-models\nVersion: 0.1\n")
    write(dist / "entry_points.txt", "[accel_dse.models]\nacme = acme_systolic:SystolicArray\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    listed = dse_process("models")
    assert listed.returncode == 0, listed.stderr
    assert "acme" in listed.stdout and "multicore" in listed.stdout
    proc = dse_process("evaluate", "acme", "lenet", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == get_model(REF).evaluate("lenet")
    assert "acme" not in names()  # not installed in this process
    write(dist / "entry_points.txt", "[accel_dse.models]\nacme = acme_gone:Nope\n")
    broken = dse_process("models")
    assert broken.returncode == 0 and "acme         cannot be loaded: architecture 'acme'" in broken.stdout
    assert "multicore" in broken.stdout


# ---- check_model fails on broken models ----
class BatchDependent(SystolicArray):
    """time_s drifts with the batch size: batch != scalar."""

    def evaluate_layers(self, workload, pts):
        layers = super().evaluate_layers(workload, pts)
        for lb in layers:
            lb.metrics["time_s"] = lb.metrics["time_s"] * (1 + 1e-12 * lb.n)
        return layers


class GhostMetric(SystolicArray):
    TOTAL_METRICS = (*SystolicArray.TOTAL_METRICS, Metric("ghost_bytes", "B", "declared but never produced"))


class UndeclaredTotal(SystolicArray):
    def model_totals(self, workload, pts, layers):
        return {**super().model_totals(workload, pts, layers), "secret": np.zeros(len(pts["rows"]))}


class SilentInfeasible(SystolicArray):
    """Marks big arrays infeasible without saying why."""

    def evaluate_layers(self, workload, pts):
        layers = super().evaluate_layers(workload, pts)
        for lb in layers:
            lb.infeasible(pts["rows"] > 200, "")
        return layers


class NegativeTraffic(SystolicArray):
    def evaluate_layers(self, workload, pts):
        layers = super().evaluate_layers(workload, pts)
        layers[0].metrics["dram_write_bytes"] = -layers[0].metrics["dram_write_bytes"] - 1
        return layers


class OverUtilized(SystolicArray):
    def evaluate_layers(self, workload, pts):
        layers = super().evaluate_layers(workload, pts)
        layers[0].metrics["utilization"] = layers[0].metrics["utilization"] * 0 + 1.5
        return layers


class FeasibleButNaN(SystolicArray):
    def evaluate_layers(self, workload, pts):
        layers = super().evaluate_layers(workload, pts)
        layers[-1].metrics["energy_j"] = layers[-1].metrics["energy_j"] * np.nan
        return layers


class Undocumented(SystolicArray):
    PARAMS = (*SystolicArray.PARAMS, Param("mystery", "int", 1, 1, 4))


class Drifting(SystolicArray):
    """Energy grows with every multi-point call: a point alone agrees with the last batch, a repeat does not."""

    batches = 0

    def evaluate_batch(self, workload, pts):
        res = super().evaluate_batch(workload, pts)
        if res.n > 1:
            Drifting.batches += 1
        res.model_totals["extra_energy_j"] = np.full(res.n, 1e-3 * Drifting.batches)
        return res


class RaisesOnBigArrays(SystolicArray):
    def evaluate_layers(self, workload, pts):
        if (pts["rows"] > 500).any():
            raise ValueError("array too large")
        return super().evaluate_layers(workload, pts)


class AlwaysInfeasible(SystolicArray):
    def evaluate_layers(self, workload, pts):
        layers = super().evaluate_layers(workload, pts)
        layers[0].infeasible(np.ones(layers[0].n, bool), "never fits")
        return layers


@pytest.mark.parametrize("cls,check", [
    (BatchDependent, "batch_equals_scalar"),
    (GhostMetric, "declared_metrics"),
    (UndeclaredTotal, "declared_metrics"),
    (SilentInfeasible, "infeasible_reasons"),
    (NegativeTraffic, "units_and_ranges"),
    (OverUtilized, "units_and_ranges"),
    (FeasibleButNaN, "infeasible_reasons"),
    (Undocumented, "declared_parameters"),
    (Drifting, "determinism"),
    (RaisesOnBigArrays, "evaluates"),
    (AlwaysInfeasible, "coverage"),
])
def test_check_model_fails_on_a_broken_model(cls, check):
    with pytest.raises(AssertionError, match=rf"check_model\(systolic\) \[{check}\]"):
        check_model(cls(), ["lenet"], n_points=8)


def test_check_model_names_the_workload_and_point():
    with pytest.raises(AssertionError) as exc:
        check_model(NegativeTraffic(), ["fc1"], n_points=2)
    msg = str(exc.value)
    assert "on fc1 at point {'rows': 32" in msg and "dram_write_bytes" in msg  # the defaults come first


def test_check_model_fails_on_an_unpicklable_model():
    class Local(SystolicArray):  # a class inside a function cannot be pickled by reference
        pass

    with pytest.raises(AssertionError, match=r"\[picklable\]"):
        check_model(Local(), ["lenet"], n_points=2)

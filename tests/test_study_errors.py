"""A bad study file gives one clear line naming the file and the key, exit code 2."""

from __future__ import annotations

import pytest

from .conftest import dse_process, write

GOOD = """name: e
arch: multicore
workload: fc1
space:
  cores: {low: 1, high: 32}
  placement: [T1, TR2]
objectives:
  - total.time_s: minimize
n_trials: 5
"""


def _run_bad(tmp_path, text):
    path = write(tmp_path / "bad.yaml", text)
    proc = dse_process("run", path, "--no-progress", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert str(path) in lines[0]
    return lines[0]


def test_good_study_passes(tmp_path):
    path = write(tmp_path / "good.yaml", GOOD)
    assert dse_process("run", path, "--no-progress", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("old,new,expected", [
    # unknown parameter
    ("  cores: {low: 1, high: 32}", "  kores: {low: 1, high: 32}", ["space", "unknown parameter 'kores'", "allowed:", "cores"]),
    # wrong type: a range on a categorical parameter, a float bound on an int parameter
    ("  placement: [T1, TR2]", "  placement: {low: 1, high: 2}", ["space.placement", "choice parameter", "B, T1, TR1, T2, TR2"]),
    ("  cores: {low: 1, high: 32}", "  cores: {low: 1.5, high: 32}", ["space.cores", "must be an integer"]),
    ("  cores: {low: 1, high: 32}", "  cores: {low: one, high: 32}", ["space.cores", "low"]),
    # range outside the model's limits
    ("  cores: {low: 1, high: 32}", "  cores: {low: 1, high: 5000}", ["space.cores", "high=5000", "outside the model's range 1..1024"]),
    # a choice the model does not have
    ("  placement: [T1, TR2]", "  placement: [T1, T3]", ["space.placement", "T3", "allowed: B, T1, TR1, T2, TR2"]),
    # unknown metric in an objective / a constraint
    ("  - total.time_s: minimize", "  - total.speed: minimize", ["objectives.0", "unknown metric 'total.speed'", "total.time_s"]),
    ("  - total.time_s: minimize", "  - layers.XX.time_s: minimize", ["objectives.0", "unknown layer 'XX'", "fc"]),
    ("  - total.time_s: minimize", "  - total.time_s: fastest", ["objectives.0", "minimize"]),
    ("n_trials: 5", "n_trials: 5\nconstraints: [total.area_mm2 < 3]", ["constraints.0", "METRIC <= BOUND"]),
    # schema: unknown key, bad sampler, missing budget, unknown arch/workload
    ("n_trials: 5", "n_trials: 5\nn_trails: 9", ["n_trails", "unknown key"]),
    ("n_trials: 5", "n_trials: 5\nsampler: cmaes", ["sampler", "tpe"]),
    ("n_trials: 5", "n_trials: 5\nsampler: gp\nbatch_size: 4", ["batch_size", "gp sampler takes no batches", "allowed: 1"]),
    ("n_trials: 5", "", ["n_trials", "give n_trials"]),
    ("arch: multicore", "arch: tpu", ["arch", "unknown architecture 'tpu'"]),
    ("workload: fc1", "workload: resnet99", ["workload", "unknown workload 'resnet99'"]),
    ("name: e", "name: 'a b'", ["name", "pattern"]),
])
def test_bad_study_is_one_line_with_file_key_and_allowed(tmp_path, old, new, expected):
    assert old in GOOD
    line = _run_bad(tmp_path, GOOD.replace(old, new))
    for part in expected:
        assert part in line, line


def test_not_yaml_and_not_a_mapping(tmp_path):
    assert "not valid YAML" in _run_bad(tmp_path, "name: [unclosed\n")
    assert "mapping" in _run_bad(tmp_path, "- just\n- a list\n")


def test_missing_study_file(tmp_path):
    proc = dse_process("run", tmp_path / "nope.yaml")
    assert proc.returncode == 2 and "cannot read study file" in proc.stderr


def test_unknown_option_is_one_line_without_a_doubled_prefix(run_cli):
    code, _, err = run_cli("run", "studies/quickstart.yaml", "--out", "x")
    assert code == 2 and err.strip() == "dse: error: unrecognized arguments: --out x"
    code, _, err = run_cli("run")
    assert code == 2 and err.strip() == "dse: error: dse run: the following arguments are required: study"

"""What a first-time user reads: error lines that name the allowed values, and outputs that do not mislead."""

from __future__ import annotations

import pytest

from dse import config, report, samplers
from dse.units import Scale, distinct_digits
from workloads import load_workload
from workloads.errors import UserError

from .conftest import write

STUDY = """name: s
arch: multicore
workload: fc1
space:
  cores: {{low: 1, high: 8}}
  placement: [T1, TR2]
objectives:
  - total.time_s: minimize
  - total.area_mm2: minimize
sampler: {{name: nsga2, seed: 0, options: {{population_size: 4}}}}
n_trials: 6
batch_size: 6
results_dir: {results}
"""


def _study(tmp_path, old="", new=""):
    return write(tmp_path / "s.yaml", STUDY.format(results=tmp_path / "results").replace(old, new))


def _error(path) -> str:
    with pytest.raises(UserError) as exc:
        samplers.make_sampler(config.load(path))
    return str(exc.value)


def test_a_misspelt_key_is_named_with_the_allowed_keys(tmp_path):
    # `objective:` used to report only "objectives: Field required"
    msg = _error(_study(tmp_path, "objectives:", "objective:"))
    assert "objective: unknown key; allowed: name, arch" in msg and "objectives" in msg
    assert "allowed: name, seed, options" in _error(_study(tmp_path, "{name: nsga2", "{nam: nsga2"))


def test_a_misspelt_sampler_option_lists_the_samplers_options(tmp_path):
    msg = _error(_study(tmp_path, "population_size", "populaton_size"))
    assert "sampler.options: unknown option 'populaton_size' for nsga2; allowed: population_size" in msg
    assert "__init__" not in msg


def test_every_parameter_of_a_model_is_listed():
    with pytest.raises(UserError) as exc:
        from archmodels import get_model

        get_model("multicore").params.parse_sets(["core=4"])
    assert "placement" in str(exc.value) and "in all" not in str(exc.value)  # 19 parameters, all named


def test_a_parametric_number_error_reads_as_english():
    with pytest.raises(UserError, match="n='1e12' is not an int"):
        load_workload("matmul:n=1e12")
    with pytest.raises(UserError, match="sparsity='x' is not a number"):
        load_workload("spmm:n=64,sparsity=x")


def test_pareto_table_tells_front_points_apart():
    # two Pareto points 128.005 us and 128.0106 us: at 4 digits both read "128" with different areas
    us = Scale(1e-6, "µs")
    times = [us(1.28005e-4), us(1.280106e-4), us(2.45e-7)]
    d = distinct_digits(times)
    assert len({f"{t:.{d}g}" for t in times}) == 3 and d == 5  # 128, 128.01
    assert distinct_digits([1.0, 2.0]) == 4
    col = report.Column("total.time_s", "time [µs] ★", us, d)
    assert report._cell({"total.time_s": 1.28005e-4}, col) != report._cell({"total.time_s": 1.280106e-4}, col)


def test_plot_and_report_after_a_study_was_continued(tmp_path, run_cli):
    path = _study(tmp_path)
    assert run_cli("run", path, "--no-progress", "--no-report")[0] == 0
    assert run_cli("run", path, "--no-progress", "--no-report", "--n-trials", "8")[0] == 0
    folder = tmp_path / "results" / "s"
    code, out, _ = run_cli("plot", folder)
    assert code == 0 and "8 points" in out and " s\n" not in out.splitlines()[0]  # no "N completed trials in 0.0 s"
    src = report.load_source(folder)
    facts = dict(report._run_facts(src)[0])
    assert facts["budget"].startswith("6 trials in the study file, continued to 8")
    assert report._commands(src)[0].startswith(f"dse run {path} --n-trials 8 ")
    # the trials fact says what the budget counts (designs) and what the trial numbers count (every Optuna trial)
    n_trials = len(src.ost.get_trials(deepcopy=False))
    assert facts["trials"].startswith("8 designs evaluated (") and f"in {n_trials} Optuna trials" in facts["trials"]


def test_parameters_read_as_written():
    """Breakdown headings and the search space: clock_mhz=1000, fixed 512, not 1000.0 / 512.0; other floats exact."""
    assert [report.param_text(v) for v in (1000.0, 512.0, 0.5, 0.1 + 0.2, 7, "TR2")] == \
        ["1000", "512", "0.5", "0.30000000000000004", "7", "TR2"]

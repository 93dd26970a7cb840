"""Grid sweeps with joblib: same rows for 1 and 2 workers, samples, chunk resume."""

from __future__ import annotations

import csv

import pytest

import dse
from dse import config
from dse.sweep import Grid, run_sweep

from .conftest import write

SWEEP = """
name: sw
arch: multicore
workload: fc2
space:
  cores: {low: 1, high: 32}
  placement: [B, T1, TR1, T2, TR2]
  ni: [8, 16]
  clock_mhz: {low: 400, high: 800, points: 3}
objectives: [total.time_s, total.area_mm2]
constraints: [total.area_mm2 <= 30]
n_trials: 1
results_dir: RESULTS
"""


@pytest.fixture
def study(tmp_path):
    return config.load(write(tmp_path / "sw.yaml", SWEEP.replace("RESULTS", str(tmp_path / "results"))))


def _rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_grid_enumeration():
    g = Grid(["a", "b"], [[1, 2, 3], ["x", "y"]])
    assert g.size == 6
    assert g.rows([0, 1, 5]) == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 3, "b": "y"}]


def test_sweep_same_rows_for_one_and_two_workers(study, tmp_path):
    t1, p1, _ = run_sweep(study, n_jobs=1, chunk=97, out_dir=tmp_path / "one", progress=False)
    t2, p2, _ = run_sweep(study, n_jobs=2, chunk=97, out_dir=tmp_path / "two", progress=False)
    assert len(t1.rows) == Grid.of(study).size == 32 * 5 * 2 * 3 == 960
    assert p1["trials"].read_text() == p2["trials"].read_text()
    assert p1["pareto"].read_text() == p2["pareto"].read_text()


def test_sweep_metrics_equal_direct_evaluation(study, tmp_path):
    table, _, _ = run_sweep(study, n_jobs=1, sample=12, seed=1, out_dir=tmp_path / "s", progress=False)
    assert len(table.rows) == 12
    for r in table.rows:
        params = {k[6:]: v for k, v in r.items() if k.startswith("param.")}
        ev = dse.evaluate("multicore", "fc2", **params)
        assert r["total.time_s"] == ev["total"]["time_s"]
        assert r["feasible"] == (ev["feasible"] and ev["total"]["area_mm2"] <= 30)


def test_pareto_front_is_nondominated_and_complete(study, tmp_path):
    table, paths, _ = run_sweep(study, n_jobs=1, out_dir=tmp_path / "p", progress=False)
    front = _rows(paths["pareto"])
    pts = [(r["total.time_s"], r["total.area_mm2"]) for r in table.rows if r["feasible"]]
    fpts = {(float(r["total.time_s"]), float(r["total.area_mm2"])) for r in front}
    for t, a in pts:  # nothing feasible dominates a front point ...
        assert not any(t <= ft and a <= fa and (t, a) != (ft, fa) for ft, fa in fpts) or (t, a) in fpts
    for ft, fa in fpts:  # ... and every non-dominated feasible point is on the front
        assert not any(t <= ft and a <= fa and (t, a) != (ft, fa) for t, a in pts)


def test_interrupted_sweep_resumes_from_chunks(study, tmp_path):
    out = tmp_path / "r"
    _, p, _ = run_sweep(study, n_jobs=1, chunk=50, out_dir=out, progress=False)
    full = p["trials"].read_text()
    chunks = sorted((out / "chunks").glob("chunk_*.npz"))
    assert len(chunks) == 20  # 960 points / 50
    for c in chunks[2:5]:  # as if the sweep had died before these
        c.unlink()
    _, p, _ = run_sweep(study, n_jobs=2, chunk=50, out_dir=out, progress=False)
    assert p["trials"].read_text() == full


def test_changed_study_does_not_reuse_old_chunks(study, tmp_path):
    out = tmp_path / "c"
    t1, _, _ = run_sweep(study, n_jobs=1, out_dir=out, progress=False)
    changed = config.load(write(tmp_path / "sw2.yaml", SWEEP.replace("RESULTS", str(tmp_path / "results"))
                                .replace("workload: fc2", "workload: fc1")))
    t2, _, _ = run_sweep(changed, n_jobs=1, out_dir=out, progress=False)
    assert t1.rows[0]["total.time_s"] != t2.rows[0]["total.time_s"]


def test_sweep_cli_writes_results(tmp_path, run_cli):
    path = write(tmp_path / "sw.yaml", SWEEP.replace("RESULTS", str(tmp_path / "results")))
    code, out, _ = run_cli("sweep", path, "--no-progress", "--n-jobs", "2", "--sample", "40")
    assert code == 0 and "40 of 960 grid points" in out
    res = tmp_path / "results" / "sw" / "sweep"
    assert len(_rows(res / "trials.csv")) == 40 and (res / "pareto.png").exists()
    code, _, _ = run_cli("plot", res)
    assert code == 0


def test_sweep_is_exactly_the_grid_the_file_names(tmp_path, run_cli):
    """Every integer of an int range, log or not; the size is printed before the sweep starts."""
    body = SWEEP.replace("RESULTS", str(tmp_path / "results")).replace(
        "  cores: {low: 1, high: 32}", "  cores: {low: 1, high: 64, log: true}").replace(
        "  clock_mhz: {low: 400, high: 800, points: 3}", "  clock_mhz: {low: 400, high: 800, step: 200}")
    path = write(tmp_path / "log.yaml", body)
    st = config.load(path)
    assert Grid.of(st).values[0] == list(range(1, 65))
    code, out, _ = run_cli("sweep", path, "--no-progress")
    assert code == 0
    assert out.splitlines()[0].startswith(f"sweep sw: {64 * 5 * 2 * 3} of {64 * 5 * 2 * 3} grid points")
    rows = _rows(tmp_path / "results" / "sw" / "sweep" / "trials.csv")
    assert sorted({int(r["param.cores"]) for r in rows}) == list(range(1, 65))
    assert len(rows) == 64 * 5 * 2 * 3


def test_float_range_without_step_or_points_is_an_error(tmp_path, run_cli):
    body = SWEEP.replace("RESULTS", str(tmp_path / "results")).replace(
        "  clock_mhz: {low: 400, high: 800, points: 3}", "  clock_mhz: {low: 400, high: 800}")
    path = write(tmp_path / "f.yaml", body)
    code, out, err = run_cli("sweep", path, "--no-progress")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "space.clock_mhz" in err and "'step' or 'points'" in err
    assert not (tmp_path / "results").exists()
    code, _, err = run_cli("sweep", write(tmp_path / "ok.yaml", SWEEP.replace("RESULTS", str(tmp_path))), "--n-jobs", "0")
    assert code == 2 and "--n-jobs" in err

"""Studies on Optuna: outputs, budget, resume after kill -9 / Ctrl-C, workers, grid, combine."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import time

import optuna
import pytest
from optuna.trial import TrialState

import dse
from dse import config, samplers, study as study_mod

from .conftest import ROOT, dse_process, sigint_default, write

STUDY = """
name: {name}
arch: multicore
workload: fc1
space:
  cores: {{low: 1, high: 32}}
  placement: [B, T1, TR1, T2, TR2]
  ni: [8, 16, 32]
  clock_mhz: {{low: 300, high: 900, step: 100}}
objectives:
  - total.time_s: minimize
  - total.area_mm2: minimize
constraints:
  - total.area_mm2 <= 40
sampler: {{name: {sampler}, seed: 3}}
n_trials: {n}
results_dir: {results}
"""


def make_study(tmp_path, name="s", sampler="nsga2", n=30, extra=""):
    return write(tmp_path / f"{name}.yaml", STUDY.format(name=name, sampler=sampler, n=n, results=tmp_path / "results") + extra)


def load_optuna(tmp_path, name):
    st = config.load(tmp_path / f"{name}.yaml")
    return study_mod.open_study(st, load_only=True)


def states(ost):
    """Trials by state; COMPLETE counts new designs, repeated ones are "repeats" (DesignCache)."""
    out = {}
    for t in ost.get_trials(deepcopy=False):
        key = "repeats" if "repeat_of" in t.user_attrs else t.state
        out[key] = out.get(key, 0) + 1
    out.pop("repeats", None)
    return out


def read_rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_run_writes_outputs_and_metrics_match_evaluate(tmp_path, run_cli):
    path = make_study(tmp_path, n=25)
    code, out, _ = run_cli("run", path, "--no-progress")
    assert code == 0
    res = tmp_path / "results" / "s"
    for f in ("trials.csv", "pareto.csv", "pareto.png", "study.json"):
        assert (res / f).exists()
    rows = read_rows(res / "trials.csv")
    assert len(rows) == 25
    assert "on the Pareto front" in out
    for r in rows[:5]:
        params = {k[6:]: r[k] for k in r if k.startswith("param.")}
        ev = dse.evaluate("multicore", "fc1", cores=int(params["cores"]), placement=params["placement"],
                          ni=int(params["ni"]), clock_mhz=float(params["clock_mhz"]))
        assert float(r["total.time_s"]) == pytest.approx(ev["total"]["time_s"], rel=1e-12)
        assert (r["feasible"] == "True") == (ev["feasible"] and ev["total"]["area_mm2"] <= 40)
    pareto = read_rows(res / "pareto.csv")
    assert pareto and all(r["feasible"] == "True" for r in pareto)
    times = [float(r["total.time_s"]) for r in pareto]
    areas = [float(r["total.area_mm2"]) for r in pareto]
    assert times == sorted(times) and areas == sorted(areas, reverse=True)  # a real 2-D front


def test_infeasible_points_are_constraint_violations(tmp_path, run_cli):
    path = make_study(tmp_path, n=40, sampler="random")
    assert run_cli("run", path, "--no-progress")[0] == 0
    ost = load_optuna(tmp_path, "s")
    trials = ost.get_trials(states=(TrialState.COMPLETE,))
    over = [t for t in trials if t.user_attrs["dse"]["total"]["area_mm2"] > 40]
    assert over, "the space must contain designs above the area bound"
    assert ost.user_attrs["constraint_names"] == ["total.area_mm2 <= 40", "feasible"]
    for t in over:  # Optuna's list form (one write, shown by optuna-dashboard): keys in constraint_names order
        assert t.constraints["0"] > 0
    assert all(t.constraints["1"] == 0 for t in trials)


def test_budget_is_total_not_more(tmp_path, run_cli):
    path = make_study(tmp_path, n=12)
    assert run_cli("run", path, "--no-progress")[0] == 0
    first = {t.number: t.values for t in load_optuna(tmp_path, "s").get_trials(states=(TrialState.COMPLETE,))}
    assert run_cli("run", path, "--no-progress")[0] == 0  # already complete: nothing more
    assert states(load_optuna(tmp_path, "s")) == {TrialState.COMPLETE: 12}
    assert run_cli("run", path, "--no-progress", "--n-trials", "20")[0] == 0
    ost = load_optuna(tmp_path, "s")
    assert states(ost) == {TrialState.COMPLETE: 20}
    kept = {t.number: t.values for t in ost.get_trials(states=(TrialState.COMPLETE,)) if t.number in first}
    assert kept == first


def test_trial_left_running_is_rerun_on_resume(tmp_path, run_cli):
    path = make_study(tmp_path, n=10)
    st = config.load(path)
    ost = study_mod.open_study(st)
    orphan = ost.ask()  # a worker that died mid-trial (journal storage has no heartbeat)
    params = samplers.suggest(orphan, st.searched)
    code, out, _ = run_cli("run", path, "--no-progress")
    assert code == 0 and "re-queued" in out
    ost = load_optuna(tmp_path, "s")
    assert states(ost) == {TrialState.COMPLETE: 10, TrialState.FAIL: 1}
    rerun = [t for t in ost.get_trials() if t.user_attrs.get("retry_of") == orphan.number]
    assert len(rerun) == 1 and rerun[0].state == TrialState.COMPLETE and rerun[0].params == params


def _complete(journal, name):
    st = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(journal)))
    s = optuna.load_study(study_name=name, storage=st)
    return [t for t in s.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)) if "repeat_of" not in t.user_attrs], s


def _start_and_wait(path, journal, name, at_least):
    proc = subprocess.Popen([sys.executable, "-m", "dse.cli", "run", str(path), "--no-progress"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    deadline = time.time() + 600  # a hang guard only: the run is awaited by its progress
    while time.time() < deadline:
        time.sleep(0.2)
        if journal.exists():
            try:
                if len(_complete(journal, name)[0]) >= at_least:
                    return proc
            except (KeyError, ValueError):
                pass
        assert proc.poll() is None, proc.communicate()
    proc.kill()
    raise AssertionError("study did not progress")


def test_kill_9_loses_no_completed_trial(tmp_path):
    path = make_study(tmp_path, name="k", sampler="tpe", n=100000)
    journal = tmp_path / "results" / "k" / "study.journal"
    proc = _start_and_wait(path, journal, "k", at_least=30)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before, _ = _complete(journal, "k")
    snapshot = {t.number: (t.params, t.values) for t in before}
    target = len(before) + 15
    done = dse_process("run", path, "--no-progress", "--n-trials", target)
    assert done.returncode == 0, done.stderr
    after, s = _complete(journal, "k")
    assert len(after) == target
    now = {t.number: (t.params, t.values) for t in after}
    assert all(now[n] == v for n, v in snapshot.items())
    assert not s.get_trials(states=(TrialState.RUNNING,))


def test_ctrl_c_keeps_work_and_resumes(tmp_path):
    path = make_study(tmp_path, name="c", sampler="tpe", n=100000)
    journal = tmp_path / "results" / "c" / "study.journal"
    proc = _start_and_wait(path, journal, "c", at_least=20)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=600)  # awaits the exit; the limit is a hang guard only
    assert proc.returncode == 130, err[-3000:]
    assert "run the same command again to resume" in err and "Traceback" not in err, err[-3000:]
    before, s = _complete(journal, "c")
    assert not s.get_trials(states=(TrialState.RUNNING,))  # in-flight trials were failed and re-queued
    done = dse_process("run", path, "--no-progress", "--n-trials", len(before) + 5)
    assert done.returncode == 0
    assert len(_complete(journal, "c")[0]) == len(before) + 5


def test_parallel_workers_hit_the_budget_exactly(tmp_path, run_cli):
    path = make_study(tmp_path, name="p", n=60, extra="n_jobs: 2\nbatch_size: 4\n")
    assert run_cli("run", path, "--no-progress")[0] == 0
    ost = load_optuna(tmp_path, "p")
    assert states(ost) == {TrialState.COMPLETE: 60}
    for t in ost.get_trials()[:10]:  # same metrics as a serial evaluation
        ev = dse.evaluate("multicore", "fc1", **t.params)
        assert t.user_attrs["dse"]["total"]["time_s"] == ev["total"]["time_s"]


def test_grid_sampler_visits_each_point_once(tmp_path, run_cli):
    body = """
name: g
arch: multicore
workload: fc1
space:
  cores: {low: 4, high: 16, step: 4}
  placement: [T1, TR2]
  ni: [8, 16]
objectives: [total.time_s]
sampler: grid
n_jobs: 2
results_dir: RESULTS
""".replace("RESULTS", str(tmp_path / "results"))
    path = write(tmp_path / "g.yaml", body)
    assert run_cli("run", path, "--no-progress")[0] == 0
    trials = load_optuna(tmp_path, "g").get_trials(states=(TrialState.COMPLETE,))
    points = {(t.params["cores"], t.params["placement"], t.params["ni"]) for t in trials}
    assert len(trials) == len(points) == 4 * 2 * 2


def test_all_fixed_study_is_one_trial(tmp_path, run_cli):
    body = f"""
name: fixed
arch: multicore
workload: fc1
space: {{placement: TR2, cores: 16}}
objectives: [total.cycles]
n_trials: 1
results_dir: {tmp_path / 'results'}
"""
    path = write(tmp_path / "fixed.yaml", body)
    assert run_cli("run", path, "--no-progress")[0] == 0
    (row,) = read_rows(tmp_path / "results" / "fixed" / "trials.csv")
    assert float(row["total.cycles"]) == dse.evaluate("multicore", "fc1")["total"]["cycles"]


@pytest.mark.parametrize("combine", ["sum", "worst"])
def test_several_workloads_combine(tmp_path, combine):
    body = f"""
name: multi
arch: multicore
workloads: [fc1, fc2]
combine: {combine}
space: {{cores: 8}}
objectives:
  - total.time_s
  - total.utilization: maximize
n_trials: 1
results_dir: {tmp_path / 'results'}
"""
    st = config.load(write(tmp_path / "m.yaml", body))
    from dse.objective import evaluate_rows

    ev = evaluate_rows(st, [{}])
    a, b = (dse.evaluate("multicore", w, cores=8)["total"] for w in ("fc1", "fc2"))
    if combine == "sum":
        assert ev.values[0, 0] == pytest.approx(a["time_s"] + b["time_s"])
        u = (a["utilization"] * a["time_s"] + b["utilization"] * b["time_s"]) / (a["time_s"] + b["time_s"])
        assert ev.values[0, 1] == pytest.approx(u)
    else:
        assert ev.values[0, 0] == max(a["time_s"], b["time_s"])
        assert ev.values[0, 1] == min(a["utilization"], b["utilization"])  # maximised: worst is the smallest
    assert ev.totals["area_mm2"][0] == a["area_mm2"]


def test_plot_redraws_from_storage(tmp_path, run_cli):
    path = make_study(tmp_path, n=10)
    assert run_cli("run", path, "--no-progress")[0] == 0
    res = tmp_path / "results" / "s"
    (res / "pareto.png").unlink()
    (res / "trials.csv").unlink()
    code, out, _ = run_cli("plot", res)
    assert code == 0 and (res / "pareto.png").exists()
    assert len(read_rows(res / "trials.csv")) == 10


def test_three_objectives_draw_a_scatter_matrix(tmp_path, run_cli):
    path = make_study(tmp_path, n=15, extra="")
    text = path.read_text().replace("  - total.area_mm2: minimize", "  - total.area_mm2: minimize\n  - total.energy_j: minimize")
    path.write_text(text)
    assert run_cli("run", path, "--no-progress")[0] == 0
    import matplotlib.image as mpimg

    img = mpimg.imread(tmp_path / "results" / "s" / "pareto.png")
    assert img.shape[0] > 600 and img.shape[1] > 600  # 3 x 3 panels, not a single axes


def test_model_metrics_combine_as_declared(tmp_path):
    """Over several workloads, hardware totals take the maximum, not the sum."""
    body = f"""
name: comb
arch: rena
workloads: [vgg16-conv, lenet]
space: {{target: fpga}}
objectives: [total.time_s]
n_trials: 1
results_dir: {tmp_path / 'results'}
"""
    st = config.load(write(tmp_path / "c.yaml", body))
    from dse.objective import evaluate_rows

    ev = evaluate_rows(st, [{}])
    a, b = (dse.evaluate("rena", w, target="fpga")["total"] for w in ("vgg16-conv", "lenet"))
    assert ev.totals["dsp"][0] == max(a["dsp"], b["dsp"]) == a["dsp"]
    assert ev.totals["dram_cycles"][0] == pytest.approx(a["dram_cycles"] + b["dram_cycles"])


def test_speedup_over_several_matrices_is_a_ratio_of_sums(tmp_path):
    body = f"""
name: sp
arch: imax
workloads: ["spmm:n=256,sparsity=0.9", "spmm:n=512,sparsity=0.95"]
space: {{units: 64}}
objectives: [total.time_s]
n_trials: 1
results_dir: {tmp_path / 'results'}
"""
    st = config.load(write(tmp_path / "sp.yaml", body))
    from dse.objective import evaluate_rows

    ev = evaluate_rows(st, [{}])
    a, b = (dse.evaluate("imax", w)["total"] for w in st.workloads)
    expect = (a["dense_time_s"] + b["dense_time_s"]) / (a["time_s"] + b["time_s"])
    assert ev.totals["speedup_vs_dense"][0] == pytest.approx(expect, rel=1e-12)


SMALL = """
name: small
arch: multicore
workload: fc1
space:
  cores: {{low: 1, high: 4}}
  placement: [T1, TR2]
objectives: [total.time_s, total.area_mm2]
sampler: {{name: random, seed: 0}}
n_trials: {n}
batch_size: 4
results_dir: {results}
"""


def test_repeated_designs_are_answered_from_the_study_and_not_counted(tmp_path, run_cli):
    path = write(tmp_path / "small.yaml", SMALL.format(n=6, results=tmp_path / "results"))
    assert run_cli("run", path, "--no-progress")[0] == 0
    ost = load_optuna(tmp_path, "small")
    trials = ost.get_trials(states=(TrialState.COMPLETE,))
    new = [t for t in trials if "repeat_of" not in t.user_attrs]
    repeats = [t for t in trials if "repeat_of" in t.user_attrs]
    assert len(new) == 6 and len({tuple(t.params.values()) for t in new}) == 6  # 6 distinct new designs
    assert repeats, "random sampling of 8 designs repeats some before 6 distinct ones"
    by_number = {t.number: t for t in trials}
    for r in repeats:  # same answer as the earlier trial, without an evaluation
        src = by_number[r.user_attrs["repeat_of"]]
        assert src.number < r.number and src.params == r.params and src.values == r.values
        assert r.constraints == src.constraints and "dse" not in r.user_attrs
    assert len(read_rows(tmp_path / "results" / "small" / "trials.csv")) == 6  # one row per design


def test_a_budget_beyond_the_space_stops_when_every_design_is_evaluated(tmp_path, run_cli):
    path = write(tmp_path / "small.yaml", SMALL.format(n=50, results=tmp_path / "results"))
    code, out, err = run_cli("run", path, "--no-progress")
    assert code == 0 and "all 8 designs of the space are evaluated" in err
    assert states(load_optuna(tmp_path, "small")) == {TrialState.COMPLETE: 8}

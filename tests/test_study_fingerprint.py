"""A study file edited after its study was made (issue 14, item 4): stop, or --new-name / --fork."""

from __future__ import annotations

import json

import optuna
import pytest
from optuna.trial import TrialState

from dse import config, study as study_mod

from .test_study import make_study


def complete(path, name=None):
    st = config.load(path, {"name": name} if name else None)
    trials = study_mod.open_study(st, load_only=True).get_trials(states=(TrialState.COMPLETE,))
    return [t for t in trials if "repeat_of" not in t.user_attrs]  # new designs


@pytest.mark.parametrize("old,new,named", [
    ("  - total.area_mm2: minimize", "  - total.energy_j: minimize", ["objectives", "total.area_mm2", "total.energy_j"]),
    ("  cores: {low: 1, high: 32}", "  cores: {low: 1, high: 32, log: true}", ["space.cores", "int 1..32 log"]),
    ("  - total.area_mm2 <= 40", "  - total.area_mm2 <= 50", ["constraints", "total.area_mm2 <= 50"]),
    ("workload: fc1", "workload: fc2", ["workloads", "fc2"]),
    ("  ni: [8, 16, 32]", "  ni: 16", ["space.ni", "= 16"]),
])
def test_edited_study_file_stops_with_the_difference(tmp_path, run_cli, old, new, named):
    path = make_study(tmp_path, n=8)
    assert run_cli("run", path, "--no-progress")[0] == 0
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    code, out, err = run_cli("run", path, "--no-progress")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--new-name" in err and "--fork" in err
    for part in named:
        assert part in err, err
    journal = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(
        str(tmp_path / "results" / "s" / "study.journal")))
    assert len(optuna.load_study(study_name="s", storage=journal).trials) == 8  # nothing appended


def test_budget_sampler_and_jobs_may_change(tmp_path, run_cli):
    path = make_study(tmp_path, n=8)
    assert run_cli("run", path, "--no-progress")[0] == 0
    path.write_text(path.read_text().replace("name: nsga2", "name: tpe") + "batch_size: 3\n")
    assert run_cli("run", path, "--no-progress", "--n-trials", "12")[0] == 0
    assert len(complete(path)) == 12


def test_new_name_and_fork(tmp_path, run_cli):
    path = make_study(tmp_path, n=30, sampler="random")
    assert run_cli("run", path, "--no-progress")[0] == 0
    before = complete(path)
    path.write_text(path.read_text().replace("  placement: [B, T1, TR1, T2, TR2]", "  placement: [T1, TR2]")
                    .replace("  - total.area_mm2: minimize", "  - total.energy_j: minimize"))
    assert run_cli("run", path, "--no-progress")[0] == 2
    code, out, _ = run_cli("run", path, "--no-progress", "--new-name", "fresh")
    assert code == 0 and (tmp_path / "results" / "fresh" / "trials.csv").exists()
    assert not any("forked_from" in t.user_attrs for t in complete(path, "fresh"))

    code, out, _ = run_cli("run", path, "--no-progress", "--fork", "forked", "--n-trials", "40")
    assert code == 0
    fits = {tuple(t.params.values()) for t in before if t.params["placement"] in ("T1", "TR2")}
    forked = [t for t in complete(path, "forked") if "forked_from" in t.user_attrs]
    assert f"forked: {len(fits)} of the 30 completed trials" in out
    assert {tuple(t.params[k] for k in before[0].params) for t in forked} == fits
    st = config.load(path, {"name": "forked"})
    import dse

    for t in forked:  # evaluated anew: the new objective is there
        ev = dse.evaluate("multicore", "fc1", **t.params)
        assert t.values[1] == pytest.approx(ev["total"]["energy_j"])
    assert len(complete(path, "forked")) == 40
    assert study_mod.open_study(st, load_only=True).metric_names == ["total.time_s", "total.energy_j"]
    assert run_cli("run", path, "--no-progress", "--fork", "forked")[0] == 2  # exists already


def test_plot_and_report_read_the_folder_given(tmp_path, run_cli, monkeypatch):
    # `dse plot` of a --new-name folder plotted the file's own study into the file's folder; both commands
    # looked for the folder under the file's results_dir from the working directory, not where it was given
    path = make_study(tmp_path, n=8, sampler="random")
    assert run_cli("run", path, "--no-progress", "--no-report")[0] == 0
    assert run_cli("run", path, "--no-progress", "--no-report", "--new-name", "other", "--n-trials", "5")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    folder = tmp_path / "results" / "other"
    (folder / "pareto.png").unlink()
    code, out, err = run_cli("plot", folder)
    assert code == 0 and (folder / "pareto.png").exists() and "5 points" in out, err
    assert not (elsewhere / "results").exists()
    code, out, err = run_cli("report", folder)
    assert code == 0 and (folder / "report.html").exists(), err
    # a file edited since, then deleted: the folder is read through the copy of the file kept there
    first = (folder / "report.html").read_text()
    path.write_text(path.read_text().replace("  - total.area_mm2: minimize", "  - total.energy_j: minimize"))
    code, out, err = run_cli("report", folder)
    assert code == 0 and (folder / "report.html").exists(), err
    assert "minimize time, minimize area<" in (folder / "report.html").read_text()  # the study as it was run
    assert "minimize time, minimize area<" in first
    path.unlink()
    (folder / "pareto.png").unlink()
    code, out, err = run_cli("plot", folder)
    assert code == 0 and (folder / "pareto.png").exists(), err
    assert json.loads((folder / "study.json").read_text())["study_file"] == str(path)  # (still the original's)

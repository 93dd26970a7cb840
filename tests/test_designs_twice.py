"""A design two processes asked at the same moment is evaluated by both (neither trial was COMPLETE when the other
was asked): it counts once towards the budget and keeps one row in trials.csv, pareto.csv and the report, whose
facts say how many designs were evaluated twice (docs/studies.md, "Repeated designs")."""

from __future__ import annotations

import csv

import optuna
from optuna.trial import TrialState

from dse import study as study_mod, worker

from .conftest import write
from .test_study import SMALL, load_optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _evaluated_again(ost: optuna.Study, t: optuna.trial.FrozenTrial) -> None:
    """What a second process's evaluation of ``t``'s design leaves: a COMPLETE trial, same values, no repeat_of."""
    ost.add_trial(optuna.trial.create_trial(params=t.params, distributions=t.distributions, values=t.values,
                                            user_attrs=dict(t.user_attrs), system_attrs=dict(t.system_attrs)))


def test_a_design_evaluated_twice_counts_once_and_keeps_one_row(tmp_path, run_cli):
    path = write(tmp_path / "small.yaml", SMALL.format(n=6, results=tmp_path / "results"))
    assert run_cli("run", path, "--no-progress")[0] == 0
    ost = load_optuna(tmp_path, "small")
    first = worker.first_designs(ost.get_trials(states=(TrialState.COMPLETE,)))
    assert len(first) == 6 and worker.counts(ost) == (6, 0)
    _evaluated_again(ost, first[2])
    _evaluated_again(ost, first[4])

    ost = load_optuna(tmp_path, "small")
    assert worker.counts(ost) == (6, 0)
    rows = study_mod.trial_rows(ost, ["total.time_s", "total.area_mm2"])
    assert [r["number"] for r in rows] == [t.number for t in first]  # the lower trial number's row
    # the budget is met: a second run asks nothing and writes one row per design
    code, _, err = run_cli("run", path, "--no-progress")
    assert code == 0, err
    out = tmp_path / "results" / "small"
    assert len(_rows(out / "trials.csv")) == 6
    numbers = {int(r["number"]) for r in _rows(out / "pareto.csv")}
    assert numbers <= {t.number for t in first}
    assert run_cli("report", out)[0] == 0
    html = (out / "report.html").read_text()
    assert "6 designs evaluated" in html and "2 designs evaluated twice" in html


def test_first_designs_skip_repeats_and_second_evaluations():
    ost = optuna.create_study(directions=["minimize"])
    dist = {"x": optuna.distributions.IntDistribution(0, 9)}

    def add(x, repeat=False, state=TrialState.COMPLETE):
        ost.add_trial(optuna.trial.create_trial(params={"x": x}, distributions=dist, state=state,
                                                values=[float(x)] if state == TrialState.COMPLETE else None,
                                                user_attrs={worker.REPEAT_ATTR: 0} if repeat else {}))

    for x, rep in ((1, False), (2, False), (1, False), (1, True), (3, False), (2, False)):
        add(x, rep)
    add(4, state=TrialState.FAIL)
    trials = ost.get_trials(deepcopy=False)
    assert [t.number for t in worker.first_designs(trials)] == [0, 1, 4]
    assert worker.counts(ost) == (3, 0)

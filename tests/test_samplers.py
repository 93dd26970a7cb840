"""dse.samplers' NSGA-II/III: Optuna's samplers without their per-ask walk over every trial must propose exactly
what Optuna's own propose, store the same attributes, alone and with another process telling trials between
the asks."""

from __future__ import annotations

import warnings
from pathlib import Path

import optuna
import pytest
from optuna.storages.journal import JournalFileBackend, JournalStorage

from dse import storage
from dse.samplers import NSGAIIISampler, NSGAIISampler, TPESampler

PAIRS = [(NSGAIISampler, optuna.samplers.NSGAIISampler), (NSGAIIISampler, optuna.samplers.NSGAIIISampler)]


def _suggest(trials: list[optuna.Trial]) -> None:
    for t in trials:
        _, y, _ = t.suggest_int("x", 0, 15), t.suggest_float("y", 0.0, 1.0), t.suggest_categorical("c", ["a", "b"])
        t.storage.set_trial_system_attr(t._trial_id, "constraints", (y - 0.9,))


def _answer(study: optuna.Study, trials: list[optuna.Trial]) -> None:
    _suggest(trials)
    for t in reversed(trials):  # told out of ask order, as parallel workers do
        x, y, c = t.params["x"], t.params["y"], t.params["c"]
        study.tell(t, (x * 0.1 + y + (c == "b"), (15 - x) * y))


def _trials(study: optuna.Study) -> list[tuple]:
    return [(t.number, t.state, t.params, t.values, t.system_attrs) for t in study.get_trials(deepcopy=False)]


def _alone(cls: type, n: int, batch: int) -> tuple[list[tuple], dict]:
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=cls(seed=3, population_size=10))
    while len(study.trials) < n:
        _answer(study, [study.ask() for _ in range(batch)])
    return _trials(study), study._storage.get_study_system_attrs(study._study_id)


@pytest.fixture(autouse=True)
def _quiet():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        yield


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=["nsga2", "nsga3"])
@pytest.mark.parametrize("batch", [1, 7])
def test_same_trials_as_optuna(ours, theirs, batch):
    a, b = _alone(theirs, 200, batch), _alone(ours, 200, batch)
    assert a == b
    gens = {t[4].get(theirs._GENERATION_KEY) for t in a[0]}
    assert max(gens) >= 12  # many generations, so the tally and the parents were exercised


def _plain_journal(path: str) -> JournalStorage:
    return JournalStorage(JournalFileBackend(path))


def _two_workers(cls: type, path: str, journal=_plain_journal, **opts) -> list[tuple]:
    """Two studies on one journal, each with its own sampler (two processes), alternating batches of asks and
    tells: each sees trials the other completed, out of order."""
    one = optuna.create_study(study_name="s", storage=journal(path), directions=["minimize", "minimize"],
                              sampler=cls(seed=1, **(opts or {"population_size": 8})))
    two = optuna.load_study(study_name="s", storage=journal(path),
                            sampler=cls(seed=2, **(opts or {"population_size": 8})))
    pending = []
    for step in range(40):
        study = (one, two)[step % 2]
        trials = [study.ask() for _ in range(5)]
        pending.append((study, trials))
        if len(pending) == 2:  # the older batch is told after the newer one was asked
            _answer(*pending.pop(0))
    _answer(*pending.pop(0))
    return _trials(one)


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=["nsga2", "nsga3"])
def test_same_trials_as_optuna_with_another_worker(tmp_path, ours, theirs):
    assert _two_workers(theirs, str(tmp_path / "a.journal")) == _two_workers(ours, str(tmp_path / "b.journal"))


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=["nsga2", "nsga3"])
def test_stores_optunas_attribute_names(ours, theirs):
    # a subclass would store its own class name's keys; a study started by Optuna's sampler continues with ours
    assert ours._get_generation_key() == theirs._get_generation_key()
    assert ours._get_parent_cache_key_prefix() == theirs._get_parent_cache_key_prefix()


def _tpe_alone(cls: type, n: int, batch: int, directions: list[str]) -> list[tuple]:
    study = optuna.create_study(directions=directions, sampler=cls(seed=5, n_startup_trials=8))
    while len(study.trials) < n:
        trials = [study.ask() for _ in range(batch)]
        _answer(study, trials) if len(directions) == 2 else _answer_one(study, trials)
    return _trials(study)


def _answer_one(study: optuna.Study, trials: list[optuna.Trial]) -> None:
    _suggest(trials)
    for i, t in enumerate(reversed(trials)):
        if i % 5 == 4:
            study.tell(t, state=optuna.trial.TrialState.PRUNED)
        else:
            study.tell(t, t.params["x"] * 0.1 + t.params["y"] + (t.params["c"] == "b"))


@pytest.mark.parametrize("directions", [["minimize"], ["minimize", "minimize"]], ids=["one", "two"])
@pytest.mark.parametrize("batch", [1, 7])
def test_tpe_same_trials_as_optuna(directions, batch):
    """dse's TPE splits the trials once per list of trials: the very proposals of Optuna's, with infeasible and
    pruned trials, one trial an ask or a batch of asks before the suggestions."""
    n = 80 if batch == 1 else 120
    assert _tpe_alone(optuna.samplers.TPESampler, n, batch, directions) == _tpe_alone(TPESampler, n, batch, directions)


def _dse_journal(path: str) -> JournalStorage:
    """The journal as a dse process opens it (its own storage, filed trials: dse.replay.IndexedReplay)."""
    storage._OPEN_JOURNALS.clear()
    return storage._journal(Path(path))


def test_tpe_same_trials_as_optuna_with_another_worker(tmp_path):
    assert _two_workers(optuna.samplers.TPESampler, str(tmp_path / "a.journal"), _dse_journal, n_startup_trials=8) \
        == _two_workers(TPESampler, str(tmp_path / "b.journal"), _dse_journal, n_startup_trials=8)

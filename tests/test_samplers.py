"""dse.samplers' NSGA-II/III: Optuna's samplers without their per-ask walk over every trial must propose exactly
what Optuna's own propose, store the same attributes, alone and with another process telling trials between
the asks."""

from __future__ import annotations

import warnings

import optuna
import pytest
from optuna.storages.journal import JournalFileBackend, JournalStorage

from dse.samplers import NSGAIIISampler, NSGAIISampler

PAIRS = [(NSGAIISampler, optuna.samplers.NSGAIISampler), (NSGAIIISampler, optuna.samplers.NSGAIIISampler)]


def _answer(study: optuna.Study, trials: list[optuna.Trial]) -> None:
    for t in trials:
        x, y, c = t.suggest_int("x", 0, 15), t.suggest_float("y", 0.0, 1.0), t.suggest_categorical("c", ["a", "b"])
        t.storage.set_trial_system_attr(t._trial_id, "constraints", (y - 0.9,))
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


def _two_workers(cls: type, path: str) -> list[tuple]:
    """Two studies on one journal, each with its own sampler (two processes), alternating batches of asks and
    tells: each sees trials the other completed, out of order."""
    storage = JournalStorage(JournalFileBackend(path))
    one = optuna.create_study(study_name="s", storage=storage, directions=["minimize", "minimize"],
                              sampler=cls(seed=1, population_size=8))
    two = optuna.load_study(study_name="s", storage=JournalStorage(JournalFileBackend(path)),
                            sampler=cls(seed=2, population_size=8))
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

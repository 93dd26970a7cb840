"""dse.samplers._Intersection: Optuna's intersection search space fed only the trials of the states it reads must
answer as Optuna's own after any sequence of asks (with changing distributions and missing parameters), tells of
every kind and enqueued trials, on an in-memory study and on a dse journal (its filed trials)."""

from __future__ import annotations

import optuna
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from optuna.search_space import IntersectionSearchSpace
from optuna.trial import TrialState

from dse import replay
from dse.samplers import NSGAIIISampler, NSGAIISampler, _Intersection

from .test_replay import _open

# one step: ask (with one of a few parameter sets), or tell the k-th unfinished trial COMPLETE / FAIL / PRUNED, or
# enqueue a trial (WAITING until the next ask)
STEP = st.tuples(st.sampled_from(["ask", "complete", "fail", "prune", "enqueue"]), st.integers(0, 20),
                 st.integers(0, 3))


def _ask(study: optuna.Study, variant: int) -> None:
    t = study.ask()
    t.suggest_int("x", 0, 15 if variant != 1 else 7)  # variant 1: another distribution of x
    if variant != 2:  # variant 2: y not suggested
        t.suggest_float("y", 0.0, 1.0)
    t.suggest_categorical("c" if variant != 3 else "d", ["a", "b"])  # variant 3: d instead of c


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=40), journal=st.booleans(), pruned=st.booleans())
def test_same_space_as_optunas(tmp_path_factory, steps, journal, pruned):
    storage = _open(tmp_path_factory.mktemp("j") / "study.journal") if journal else None
    if journal:
        assert isinstance(storage._replay_result, replay.IndexedReplay)
    study = optuna.create_study(storage=storage, directions=["minimize"])
    ours, theirs = _Intersection(include_pruned=pruned), IntersectionSearchSpace(include_pruned=pruned)
    for what, k, variant in steps:
        open_ = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if what == "ask":
            _ask(study, variant)
        elif what == "enqueue":
            study.enqueue_trial({"x": k % 8})
        elif open_:
            t = open_[k % len(open_)]
            if what == "complete":
                study.tell(t.number, float(k))
            else:
                study.tell(t.number, state=TrialState.FAIL if what == "fail" else TrialState.PRUNED)
        got, want = ours.calculate(study), theirs.calculate(study)
        assert list(got) == list(want) and got == want
        inner = ours._search_space or {}
        assert all(v is not inner[k] for k, v in got.items())  # copies of the kept space, as Optuna's


@pytest.mark.parametrize("journal", [False, True])
def test_a_trial_that_completes_after_a_newer_one_is_taken_in(tmp_path, journal):
    """The walk stops at the oldest unfinished trial it met: one told after a newer trial still counts."""
    study = optuna.create_study(storage=_open(tmp_path / "study.journal") if journal else None)
    ours, theirs = _Intersection(), IntersectionSearchSpace()
    _ask(study, 1)  # trial 0: x in 0..7
    _ask(study, 0)  # trial 1: x in 0..15
    study.tell(1, 1.0)
    assert ours.calculate(study) == theirs.calculate(study) != {}
    study.tell(0, 0.0)
    got, want = ours.calculate(study), theirs.calculate(study)
    assert got == want and "x" not in want


def test_the_samplers_use_it():
    for cls in (NSGAIISampler, NSGAIIISampler):
        assert type(cls(seed=0)._search_space) is _Intersection


def test_another_study_is_refused():
    storage, ours = optuna.storages.InMemoryStorage(), _Intersection()
    ours.calculate(optuna.create_study(storage=storage))
    with pytest.raises(ValueError):
        ours.calculate(optuna.create_study(storage=storage))

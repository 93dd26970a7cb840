"""dse.samplers._GreedyHSSP (multi-objective TPE's tie-break, its greedy steps kept across asks) chooses exactly what
Optuna 5.0's ``_solve_hssp`` chooses, call after call; whole three-objective TPE studies propose what Optuna's do."""

from __future__ import annotations

import warnings

import numpy as np
import optuna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna._hypervolume.hssp import _solve_hssp
from optuna.samplers._tpe.sampler import _get_reference_point

from dse import samplers
from dse.samplers import TPESampler, _GreedyHSSP

POINT = st.tuples(*[st.integers(0, 6)] * 3)  # small integers: equal points and equal contributions (ties) are common


@settings(max_examples=150, deadline=None)
@given(bases=st.lists(st.lists(POINT, min_size=1, max_size=14, unique=True), min_size=1, max_size=3),
       calls=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 8), st.integers(1, 30), st.booleans(), st.booleans()),
                      min_size=1, max_size=12),
       flip=st.booleans())
def test_same_choice_as_optuna_call_after_call(bases, calls, flip):
    """A few sets of distinct points, each asked again and again with duplicates appended (a repeated design) and
    other subset sizes (more or fewer than asked before), in any order, now and then with another reference point:
    every answer equals Optuna's."""
    solver = _GreedyHSSP()
    for which, dups, size, shuffle, far in calls:
        base = np.array(bases[which % len(bases)], dtype=float) * (-1.0 if flip else 1.0)
        rng = np.random.default_rng(size + dups)
        if shuffle:  # (the rank's trials in another order: other first indices)
            base = base[rng.permutation(len(base))]
        lvals = np.concatenate([base, base[rng.integers(0, len(base), dups)]])
        indices = np.sort(rng.choice(100, size=len(lvals), replace=False))
        subset = min(size, len(lvals))
        ref = _get_reference_point(lvals) + (7.0 if far else 0.0)
        expected = _solve_hssp(lvals, indices, subset, ref)
        got = solver(lvals, indices, subset, ref)
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


def test_a_longer_answer_extends_the_kept_run():
    """The kept run steps on from where it stopped (no new run for the same points), and a shorter answer is its
    prefix."""
    pts = np.random.default_rng(1).random((40, 3))
    ref = _get_reference_point(pts)
    idx = np.arange(40)
    solver = _GreedyHSSP()
    for s in (5, 12, 3, 30, 29):
        np.testing.assert_array_equal(solver(pts, idx, s, ref), _solve_hssp(pts, idx, s, ref))
    (run,) = solver.runs.values()
    assert len(run.selected) == 30


def _three(study: optuna.Study, trials: list[optuna.Trial]) -> None:
    for t in trials:  # a small discrete space: repeated designs, ties, points on the front again and again
        x, y, c = t.suggest_int("x", 0, 9), t.suggest_int("y", 0, 4), t.suggest_categorical("c", ["a", "b", "c"])
        t.storage.set_trial_system_attr(t._trial_id, "constraints", (x - 8.5,))
    for t in reversed(trials):
        x, y, c = t.params["x"], t.params["y"], "abc".index(t.params["c"])
        study.tell(t, (x + 0.5 * c, (9 - x) * (y + 1), (4 - y) + c * x * 0.1))


def _study(cls: type, n: int, batch: int) -> list[tuple]:
    study = optuna.create_study(directions=["minimize"] * 3, sampler=cls(seed=7, n_startup_trials=10))
    while len(study.trials) < n:
        _three(study, [study.ask() for _ in range(batch)])
    return [(t.number, t.state, t.params, t.values) for t in study.get_trials(deepcopy=False)]


@pytest.mark.parametrize("batch", [1, 4])
def test_three_objective_tpe_same_trials_as_optuna(batch, monkeypatch):
    calls, runs = [0], [0]
    call, init = _GreedyHSSP.__call__, samplers._Greedy.__init__

    def counted_call(self, *a):
        calls[0] += 1
        return call(self, *a)

    def counted_init(self, *a):
        runs[0] += 1
        init(self, *a)

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        theirs = _study(optuna.samplers.TPESampler, 160, batch)
        monkeypatch.setattr(_GreedyHSSP, "__call__", counted_call)
        monkeypatch.setattr(samplers._Greedy, "__init__", counted_init)
        ours = _study(TPESampler, 160, batch)
    assert ours == theirs
    assert 0 < runs[0] < calls[0]  # the tie-break ran, and calls reused a kept run


TRIAL = st.tuples(st.sampled_from(["complete", "pruned", "running"]), st.booleans(), st.booleans(), st.booleans(),
                  st.integers(0, 9), st.floats(0.0, 1.0), st.sampled_from(["a", "b", "c"]))


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.lists(TRIAL, min_size=1, max_size=8), min_size=1, max_size=5),
       multivariate=st.booleans())
def test_internal_repr_equals_optunas(batches, multivariate):
    """Finished and RUNNING trials interleaved (other workers' trials), parameters missing (conditional spaces), a
    categorical, trials added between calls, RUNNING trials given more parameters and finished later: the gathered
    values, their order and dtype are Optuna's."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["minimize", "minimize"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        ours, theirs = TPESampler(multivariate=multivariate), optuna.samplers.TPESampler(multivariate=multivariate)
    dists = {"x": optuna.distributions.IntDistribution(0, 9), "y": optuna.distributions.FloatDistribution(0.0, 1.0),
             "c": optuna.distributions.CategoricalDistribution(["a", "b", "c"])}
    spaces = [{"x": dists["x"]}, {"y": dists["y"]}, {"c": dists["c"]}, dict(dists)]
    pending: list = []
    for batch in batches:
        for t in pending:  # the previous batch's RUNNING trials: every parameter, then told
            for name in dists:
                if name not in t.params:
                    study._storage.set_trial_param(t._trial_id, name, 0.0, dists[name])
            study.tell(t, (1.0, 2.0))
        pending = []
        for state, hx, hy, hc, x, y, c in batch:
            t = study.ask()
            for name, has, v in (("x", hx, x), ("y", hy, y), ("c", hc, c)):
                if has:
                    study._storage.set_trial_param(t._trial_id, name, dists[name].to_internal_repr(v), dists[name])
            if state == "complete":
                study.tell(t, (x + y, 9 - x))
            elif state == "pruned":
                study.tell(t, state=optuna.trial.TrialState.PRUNED)
            else:
                pending.append(t)
        trials = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,
                                                          optuna.trial.TrialState.PRUNED,
                                                          optuna.trial.TrialState.RUNNING))
        finished = [t for t in trials if t.state != optuna.trial.TrialState.RUNNING]
        running = [t for t in trials if t.state == optuna.trial.TrialState.RUNNING]
        for part in ours._split(study, finished, running, max(1, len(finished) // 3)):
            for space in spaces:
                got = ours._get_internal_repr(part, space, study)
                expected = theirs._get_internal_repr(list(part), space, study)
                assert got.keys() == expected.keys()
                for k in expected:
                    np.testing.assert_array_equal(got[k], expected[k])
                    assert got[k].dtype == expected[k].dtype, k


@pytest.mark.parametrize("liar", [True, False])
def test_listed_trials_are_optunas_list(liar):
    """The trials ``_sample`` reads, split into finished and RUNNING: Optuna's list (the asking trial left out with
    the constant liar), also when another worker finishes a trial between two parameters of one trial."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        ours = TPESampler(constant_liar=liar)
    for i in range(5):
        study.tell(study.ask({"x": optuna.distributions.FloatDistribution(0, 1)}), i)
    asking, other = study.ask(), study.ask()
    study.tell(study.ask(), state=optuna.trial.TrialState.PRUNED)

    def expected(number: int) -> tuple[list, list]:
        states = [optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED]
        trials = study._get_trials(deepcopy=False, states=states + [optuna.trial.TrialState.RUNNING] * liar)
        trials = [t for t in trials if t.number != number]
        return ([t for t in trials if t.state != optuna.trial.TrialState.RUNNING],
                [t for t in trials if t.state == optuna.trial.TrialState.RUNNING])

    frozen = study._storage.get_trial(asking._trial_id)
    for step in range(3):
        got = ours._listed(study, frozen)
        assert [[t.number for t in part] for part in got] == [[t.number for t in part] for part in expected(frozen.number)]
        assert all(a is b for a, b in zip(got[0], expected(frozen.number)[0]))
        if step == 0:  # the other worker finishes its trial: same number of trials, one object replaced
            study.tell(other, 9.0)
        study._thread_local.cached_all_trials = None  # (Optuna's per-ask list, as a new ask starts afresh)

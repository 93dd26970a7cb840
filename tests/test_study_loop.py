"""The worker loop's counts from :class:`dse.worker.DesignCache` (one read of the trial list per ask, each
COMPLETE trial taken in once) equal :func:`dse.worker.counts` and a cache filled from scratch, under any order of
asks, tells, repeats and failures, as several processes sharing a study make them."""

from __future__ import annotations

from types import SimpleNamespace

import optuna
from hypothesis import given, settings, strategies as hs
from optuna.trial import TrialState

from dse import worker

optuna.logging.set_verbosity(optuna.logging.WARNING)


class _Before:
    """:class:`DesignCache` as it was (a walk over every COMPLETE trial at each update, :func:`counts` a walk over
    every trial): the oracle."""

    def __init__(self):
        self.done: dict = {}
        self.seen: set[int] = set()

    def counts(self, ost: optuna.Study) -> tuple[int, int]:
        for t in ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            if t.number in self.seen:
                continue
            self.seen.add(t.number)
            key = (t.params.get("x"),)
            if worker.REPEAT_ATTR not in t.user_attrs and key not in self.done:
                self.done[key] = (t.number, list(t.values), list(t.constraints.values()))
        return worker.counts(ost)


def _cache() -> worker.DesignCache:
    return worker.DesignCache(SimpleNamespace(searched=[SimpleNamespace(name="x")]))


_X = optuna.distributions.IntDistribution(0, 3)


def _ask(ost: optuna.Study, x: int) -> optuna.Trial:
    t = ost.ask()
    ost._storage.set_trial_param(t._trial_id, "x", x, _X)
    return t


_OPS = hs.lists(hs.tuples(hs.sampled_from(["ask", "tell", "repeat", "fail", "count"]),
                          hs.integers(0, 50), hs.integers(0, 3)), max_size=60)


@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_cache_counts_equal_a_full_count_under_any_order_of_events(ops):
    ost = optuna.create_study(directions=["minimize"])
    cache, before = _cache(), _Before()
    running: list[optuna.Trial] = []
    for op, pick, x in ops:
        if op == "ask":
            running.append(_ask(ost, x))
        elif op in ("tell", "repeat", "fail") and running:
            t = running.pop(pick % len(running))  # any running trial: trials end out of order
            if op == "fail":
                ost.tell(t, state=TrialState.FAIL)
                continue
            if op == "repeat":
                t.set_user_attr(worker.REPEAT_ATTR, 0)
            t.storage.set_trial_system_attr(t._trial_id, "constraints", [float(x)])
            ost.tell(t, [float(pick)])
        else:
            assert cache.counts(ost) == before.counts(ost)
            assert cache.done == before.done
    assert cache.counts(ost) == before.counts(ost)
    assert cache.done == before.done


def test_two_caches_on_one_study_count_each_others_trials():
    """Two processes' caches on one storage: each counts the other's trials. A design told twice at the same time
    (neither a repeat) counts once (until 2026-11-27: twice); repeats point to the trial of it a cache saw first,
    the lower number of those it took in at once."""
    ost = optuna.create_study(directions=["minimize"])
    a, b = _cache(), _cache()
    trials = [_ask(ost, x) for x in (1, 1, 2)]
    assert a.counts(ost) == (0, 3)
    ost.tell(trials[1], [5.0])  # the later trial of design 1 ends first
    assert a.counts(ost) == (1, 2)
    ost.tell(trials[0], [4.0])
    ost.tell(trials[2], [3.0])
    assert a.counts(ost) == b.counts(ost) == worker.counts(ost) == (2, 0)
    assert a.done[(1,)][0] == 1 and b.done[(1,)][0] == 0
    assert a.done[(2,)] == b.done[(2,)] == (2, [3.0], [])

"""A worker with budget left fails and re-queues a dead process's RUNNING trials while it runs, not only once it
waits: Optuna's incremental search-space intersection stops at the oldest unfinished trial, so a dead process's
RUNNING trials made every later NSGA-II ask walk all trials since (docs/studies.md, "Several processes")."""

from __future__ import annotations

import subprocess
import sys

import pytest
from optuna.trial import TrialState

from dse import config, lease, study as study_mod, worker

from .test_study_concurrency import by_state, make


def _owned_by_a_process_that_dies_mid_run(ost, monkeypatch):
    """A RUNNING trial owned by a live child process, killed after the worker's first told batch."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    owner = lease.Owner(lease.me().host, child.pid, lease._start_ticks(child.pid))
    t = ost.ask()
    t.suggest_int("cores", 1, 64)
    t.set_user_attr(lease.OWNER_ATTR, owner.token)
    real = worker.tell_batch

    def tell_then_kill(*args, **kw):
        out = real(*args, **kw)
        if child.poll() is None:
            child.kill()
            child.wait()
        return out

    monkeypatch.setattr(worker, "tell_batch", tell_then_kill)
    return t.number, child


@pytest.mark.parametrize("every_s, early", [(0.0, True), (float("inf"), False)])
def test_a_running_worker_recovers_a_dead_owners_trials(tmp_path, monkeypatch, every_s, early):
    monkeypatch.setattr(worker, "RECOVER_EVERY_S", every_s)
    n, batch = 30, 5
    st = config.load(make(tmp_path, n=n, batch=batch))
    ost = study_mod.open_study(st)
    number, child = _owned_by_a_process_that_dies_mid_run(ost, monkeypatch)
    try:
        worker.worker_loop(st, ost)
    finally:
        child.kill()
        child.wait()
    ts = ost.get_trials(deepcopy=False)
    assert next(t for t in ts if t.number == number).state == TrialState.FAIL
    retry = [t for t in ts if t.user_attrs.get("retry_of") == number]
    assert len(retry) == 1 and retry[0].state == TrialState.COMPLETE
    # with the check on every ask, the dead trial is re-run right after the first batch; with the check only when
    # the worker waits (every_s = inf, the former behaviour), only once the rest of the budget is asked
    assert (retry[0].number <= 1 + 2 * batch) == early
    assert by_state(ts)[TrialState.COMPLETE] == n and TrialState.RUNNING not in by_state(ts)

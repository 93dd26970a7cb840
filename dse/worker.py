"""The ask/tell worker loop: budget, the ask lock, heartbeats, stall watch.

One worker asks ``batch_size`` trials, evaluates them in one vectorised call,
sets every constraint (Optuna's list form, one write; the model's own
feasibility is the last, ``feasible``), and tells the values. It never uses
``study.optimize`` so that batches, the exact trial budget and recovery are
under our control:

* **Budget**: ``n_trials`` is the study's total of COMPLETE trials, across
  resumes and workers, not "n more". Asking is serialised by a lock file
  next to the journal, so workers never overshoot; on a shared database (no
  common file system) an asked trial that finds the budget already taken by
  lower-numbered trials is marked PRUNED and not evaluated.
* **Heartbeats** (RDB storages): recorded here while a batch is evaluated,
  so that a killed worker's trials go stale and are retried by the others.
* **Owners** (journal and SQLite storages, which have no heartbeats): every
  asked trial records its owner process (:mod:`dse.lease`); a trial is
  failed and re-queued only when its owner is dead (:func:`recover_dead`,
  at a worker's start, whenever it waits for others' trials, and at most
  every :data:`RECOVER_EVERY_S` while others' trials run).
"""

from __future__ import annotations

import fcntl
import sys
import threading
import time
from pathlib import Path

import optuna
from optuna.trial import TrialState

from . import lease as lease_mod
from . import storage as storage_mod
from .config import Study
from .objective import evaluate_rows
from .samplers import suggest

ATTR = "dse"  # user attribute holding a trial's totals, feasibility and reason
FEASIBLE_KEY = "feasible"


def budget(study: Study) -> int | None:
    if study.n_trials is not None:
        return study.n_trials
    if study.sampler == "grid":
        return study.grid_size()
    return None


class _AskLock:
    """A lock file serialising 'count, then ask' among local workers."""

    def __init__(self, path: Path | None):
        self.path = path
        self.fh = None

    def __enter__(self):
        if self.path is not None:
            self.fh = open(self.path, "a+")
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fh is not None:
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()
            self.fh = None


def _lock_path(study: Study) -> Path | None:
    if storage_mod.is_journal(study.storage) or (study.storage or "").startswith("sqlite"):
        study.out_dir.mkdir(parents=True, exist_ok=True)
        return study.out_dir / ".ask.lock"
    return None


def lease_dir(study: Study) -> Path:
    return study.out_dir / "leases"


def seed_slot(study: Study, worker: int) -> int:
    """The seed offset of sampling worker ``worker``: on local-file storages, the next one at or above it that
    no other process of this host holds (:func:`dse.lease.claim_slot`), so that processes started on the same
    study sample apart; elsewhere (database servers, or no seed) ``worker`` (``dse worker --worker-id``)."""
    if study.seed is None or _lock_path(study) is None:
        return worker
    return lease_mod.claim_slot(lease_dir(study), worker)


def recover_dead(study: Study, ost: optuna.Study, lock: _AskLock | None = None) -> int:
    """Fail and re-queue the RUNNING trials whose owner process is dead; return how many.

    Runs under the ask lock, so no trial is asked (and left ownerless) or
    recovered twice meanwhile. For storages with leases (journal, SQLite).
    """
    lock = lock or _AskLock(_lock_path(study))
    with lock:
        return _recover_dead_locked(study, ost)


def _recover_dead_locked(study: Study, ost: optuna.Study) -> int:
    """:func:`recover_dead`'s work, the ask lock already held; each owner's liveness is looked up once."""
    living: dict[object, bool] = {}
    dead = []
    for t in ost.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        token = t.user_attrs.get(lease_mod.OWNER_ATTR)
        if token not in living:
            living[token] = lease_mod.alive(token, lease_dir(study), study.grace_period)
        if not living[token]:
            dead.append(t)
    for t in dead:
        ost.tell(t.number, state=TrialState.FAIL, skip_if_finished=True)
        ost.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
    return len(dead)


#: how often [s] a worker that still has trials to ask looks for RUNNING trials of dead owners (when any trial
#: runs): a dead process's RUNNING trials hold Optuna's incremental search-space intersection at the oldest of
#: them, so every later ask walks all trials since (NSGA-II ran ~15x slower after a co-running ``dse run`` was
#: killed, until the survivor ran out of budget and waited; docs/studies.md)
RECOVER_EVERY_S = 1.0


def counts(ost: optuna.Study) -> tuple[int, int]:
    """(distinct designs COMPLETE, RUNNING trials): repeats and second evaluations do not count
    (:func:`first_designs`, :class:`DesignCache`)."""
    trials = ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
    running = sum(t.state == TrialState.RUNNING for t in trials)
    return len(first_designs(trials)), running


def design_key(params: dict) -> tuple:
    """A design point as a key: a trial's parameters (Optuna's ``params`` hold the searched ones only)."""
    return tuple(sorted(params.items()))


def first_designs(trials: list) -> list:
    """The COMPLETE trials that first evaluated their design, in the given (trial-number) order: not the repeats
    (answered from an earlier trial, ``repeat_of``), nor the second evaluation of a design that two processes
    asked at the same moment (neither knew of the other's; both were evaluated, to the same values). What the
    budget, ``trials.csv`` and the report count as designs."""
    seen: set[tuple] = set()
    out = []
    for t in trials:
        if t.state != TrialState.COMPLETE or REPEAT_ATTR in t.user_attrs:
            continue
        key = design_key(t.params)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def _surplus(ost: optuna.Study, number: int, n_budget: int) -> bool:
    """True when lower-numbered live trials already fill the budget (shared DB race): the distinct designs of the
    COMPLETE ones (:func:`first_designs`) and the RUNNING ones (repeats aside)."""
    lower = [t for t in ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
             if t.number < number]
    running = sum(t.state == TrialState.RUNNING and REPEAT_ATTR not in t.user_attrs for t in lower)
    return len(first_designs(lower)) + running >= n_budget


class _Heartbeat:
    """Record heartbeats of in-flight trials while a batch is evaluated.

    Optuna runs its heartbeat thread only inside ``Study.optimize``; the
    ask/tell loop does it here, so that a killed worker's trials go stale and
    are failed and retried (``RetryHeartbeatStaleTrialCallback``) by the
    other workers' :func:`optuna.storages.fail_stale_trials` calls.
    """

    def __init__(self, ost: optuna.Study):
        self.storage = ost._storage
        self.ids: list[int] = []
        self.enabled = storage_mod.has_heartbeat(self.storage)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def add(self, trial: optuna.Trial) -> optuna.Trial:
        """Start beating for a trial as soon as it is asked."""
        if self.enabled:
            with self.lock:
                self.ids.append(trial._trial_id)  # Optuna has no public trial-id accessor
            self.storage.record_heartbeat(trial._trial_id)
        return trial

    def beat(self) -> None:
        with self.lock:
            ids = list(self.ids)
        for tid in ids:
            self.storage.record_heartbeat(tid)

    def __enter__(self):
        if self.enabled:
            interval = self.storage.get_heartbeat_interval() or 1

            def run():
                while not self.stop.wait(interval):
                    self.beat()

            self.thread = threading.Thread(target=run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread is not None:
            self.thread.join()


CONSTRAINTS_ATTR = "constraints"  # Optuna's list form of a trial's constraints (system attribute)


def constraint_names(study: Study) -> list[str]:
    """Names of a trial's constraint values, in order: the study's, then the model's feasibility."""
    return [c.key for c in study.constraints] + [FEASIBLE_KEY]


HEADLINE_TOTALS = ("time_s", "energy_j", "area_mm2", "dram_bytes")


def attr_metrics(study: Study) -> list[str]:
    """Totals stored as their own trial user attributes (``total.KEY``), for optuna-dashboard.

    The objectives' and constraints' totals and the contract's headline
    totals (time, energy, area, DRAM traffic); every total is also in the
    ``dse`` attribute. Not all ~20: each attribute is one fsync'd journal
    write, and a trial already costs ~13 of them.
    """
    keys = [m.partition(".")[2] for m in [*(o.metric for o in study.objectives), *(c.metric for c in study.constraints)]
            if m.startswith("total.")]
    known = set(study.model.metric_names()["total"])
    keys += [k for k in HEADLINE_TOTALS if k in known]
    return list(dict.fromkeys(keys))


def tell_batch(study: Study, ost: optuna.Study, trials: list[optuna.Trial], rows: list[dict]) -> list[tuple]:
    """Evaluate one batch in a single vectorised call and tell every trial; return (values, constraints) each."""
    ev = evaluate_rows(study, rows)
    answers = [([float(v) for v in ev.values[i]], [float(v) for v in ev.violations[i]]) for i in range(len(trials))]
    keys = constraint_names(study)
    own = attr_metrics(study)
    for i, trial in enumerate(trials):
        try:
            # All constraints in one write, in the list form Optuna's samplers read (as keys "0", "1", ...)
            # and optuna-dashboard shows; their names are the study's user attribute constraint_names.
            trial.storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_ATTR, answers[i][1][:len(keys)])
            totals = ev.metrics_of(i)
            trial.set_user_attr(ATTR, {
                "feasible": bool(ev.feasible[i]),
                "reason": ev.reason[i] or None,
                "total": totals,
            })
            for key in own:
                trial.set_user_attr(f"total.{key}", totals.get(key))
            ost.tell(trial, answers[i][0])
        except optuna.exceptions.UpdateFinishedTrialError:
            continue  # another process took this trial's owner for dead and re-queued it
    return answers


REPEAT_ATTR = "repeat_of"  # user attribute of a trial answered from an earlier trial with the same design
REPEAT_LIMIT = 1000  # consecutive repeats after which a worker stops: the sampler finds nothing new


class DesignCache:
    """The study's evaluated designs, keyed by design point: repeats are answered from here.

    Samplers propose designs already evaluated (the demo's 400 trials held
    321 distinct designs). Such a trial is told the earlier trial's values
    and constraints without evaluating it, marked ``repeat_of: NUMBER``, and
    does not count towards the budget of new designs (:func:`counts`).
    Filled from the storage's COMPLETE trials, so it spans processes and
    resumes. Two processes asking the same new design at the same moment
    both evaluate it (neither trial is COMPLETE when the other is asked);
    the design counts once (:func:`first_designs`).
    """

    def __init__(self, study: Study):
        self.names = [d.name for d in study.searched]
        self.done: dict[tuple, tuple[int, list[float], list[float]]] = {}
        self._seen: set[int] = set()  # numbers of the COMPLETE trials taken in
        # the designs of those that are not repeats: their number is what the budget counts (a design two processes
        # evaluated at the same moment counts once)
        self._counted: set[tuple] = set()

    def key(self, params: dict) -> tuple:
        return tuple(params.get(n) for n in self.names)

    def counts(self, ost: optuna.Study) -> tuple[int, int]:
        """:func:`counts`, from one read of the storage's trial list, taking in the COMPLETE trials not seen yet.

        A COMPLETE trial stays so, with the attributes it had when told, so each is read once and counted then
        when it is not a repeat. The new ones are the list's last ones as a rule (trials end in about the order
        they were asked): looked for from the end until as many are found as the COMPLETE trials grew by, then
        taken in trial-number order (the lower number of two trials of one new design is the one repeats point
        to). :func:`counts` looks at every trial (docs/profile/study_loop.md).

        The RUNNING trials are counted before the COMPLETE ones are read: a trial that completes in between is
        counted twice (one trial fewer asked this time), never missed (a trial asked beyond the budget). A
        journal answers both from its filed trials (:class:`dse.replay.IndexedReplay`)."""
        running = ost._storage.get_n_trials(ost._study_id, TrialState.RUNNING)
        trials = ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        seen = self._seen
        fresh = len(trials) - len(seen)
        new = []
        for t in reversed(trials) if fresh > 0 else ():
            if t.number not in seen:
                new.append(t)
                if len(new) == fresh:
                    break
        for t in reversed(new):
            seen.add(t.number)
            if REPEAT_ATTR in t.user_attrs:
                continue
            key = self.key(t.params)
            if key in self._counted:  # evaluated again by another process that asked it at the same moment
                continue
            self._counted.add(key)
            if key not in self.done:
                self.done[key] = (t.number, list(t.values), list(t.constraints.values()))
        return len(self._counted), running

    def answer(self, study: Study, ost: optuna.Study, trials: list[optuna.Trial], rows: list[dict]) -> int:
        """Evaluate the new designs of a batch, answer the repeats; return how many were repeats."""
        fresh: dict[tuple, int] = {}
        new_idx, repeats = [], []
        for i, row in enumerate(rows):
            key = self.key(row)
            if key in self.done:
                repeats.append((i, key))
            elif key in fresh:
                repeats.append((i, key))
            else:
                fresh[key] = i
                new_idx.append(i)
        if new_idx:
            answers = tell_batch(study, ost, [trials[i] for i in new_idx], [rows[i] for i in new_idx])
            for i, (values, cons) in zip(new_idx, answers):
                self.done.setdefault(self.key(rows[i]), (trials[i].number, values, cons))
        for i, key in repeats:
            number, values, cons = self.done[key]
            trial = trials[i]
            try:
                trial.storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_ATTR, cons)
                trial.set_user_attr(REPEAT_ATTR, number)
                ost.tell(trial, values)
            except optuna.exceptions.UpdateFinishedTrialError:
                continue
        return len(repeats)


def finite_size(study: Study) -> int | None:
    """How many designs the space has, when every searched dimension is discrete (else None)."""
    n = 1
    for d in study.searched:
        if d.kind == "float" and (not d.step or d.log):
            return None
        if d.kind == "int":  # what Optuna samples (``points`` only thins sweeps)
            n *= len(range(int(d.low), int(d.high) + 1, int(d.step or 1)))
        else:
            n *= len(d.grid())
    return n


def worker_loop(study: Study, ost: optuna.Study, deadline: float | None = None,
                stop: threading.Event | None = None) -> int:
    """Ask/evaluate/tell until the budget, the deadline or ``stop``; return trials told."""
    n_budget = budget(study)
    lock = _AskLock(_lock_path(study))
    heartbeat = storage_mod.has_heartbeat(ost._storage)
    stall = _StallWatch(ost, STALL_FACTOR * study.grace_period)
    owner = None
    if lock.path is not None:  # local-file storage: own trials by a lease, recover the dead's
        owner = lease_mod.lease_for(lease_dir(study)).owner.token
        recover_dead(study, ost, lock)
    recovered_at = time.monotonic()
    cache = DesignCache(study)
    n_designs = finite_size(study)
    done = streak = 0
    while True:
        if (deadline is not None and time.time() >= deadline) or (stop is not None and stop.is_set()):
            return done
        if streak >= REPEAT_LIMIT:
            print(f"dse: the sampler proposed {streak} evaluated designs in a row; stopping", file=sys.stderr)
            return done
        if heartbeat:  # fail (and re-queue) the trials of workers that stopped beating
            optuna.storages.fail_stale_trials(ost)
        with _Heartbeat(ost) as hb:
            with lock:
                complete, running = cache.counts(ost)  # also takes in the trials completed since (one pass)
                if owner is not None and running and time.monotonic() - recovered_at >= RECOVER_EVERY_S:
                    recovered_at = time.monotonic()  # others' trials run: any of a dead owner's? (not only when idle)
                    if _recover_dead_locked(study, ost):
                        complete, running = cache.counts(ost)
                if n_designs is not None and len(cache.done) >= n_designs and (n_budget is None or n_designs < n_budget):
                    print(f"dse: all {n_designs} designs of the space are evaluated; stopping", file=sys.stderr)
                    return done
                if n_budget is not None and complete >= n_budget:
                    return done
                k = study.batch_size if n_budget is None else min(study.batch_size, n_budget - complete - running)
                trials = [hb.add(ost.ask()) for _ in range(max(k, 0))]
                if owner is not None:
                    for t in trials:
                        t.set_user_attr(lease_mod.OWNER_ATTR, owner)
            if n_budget is not None and lock.path is None:
                trials = _drop_surplus(ost, trials, n_budget)
            if not trials:  # others hold the remaining budget; wait for them (they may die)
                if owner is not None:
                    if recover_dead(study, ost, lock) == 0:
                        time.sleep(0.05)
                    continue
                stall.check()
                time.sleep(0.05)
                continue
            stall.reset()
            try:
                rows = [suggest(t, study.searched) for t in trials]
                repeats = cache.answer(study, ost, trials, rows)
                streak = streak + repeats if repeats == len(trials) else 0
            except KeyboardInterrupt:
                for t in trials:  # re-run these on resume
                    ost.tell(t, state=TrialState.FAIL, skip_if_finished=True)
                    ost.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
                raise
            except BaseException:
                for t in trials:
                    ost.tell(t, state=TrialState.FAIL, skip_if_finished=True)
                raise
        done += len(trials)


STALL_FACTOR = 10  # x grace_period: how long running trials may show no progress while we wait


class _StallWatch:
    """Fallback for trials that can never go stale.

    A worker killed between ``ask`` (the trial exists, RUNNING) and its first
    heartbeat leaves a trial Optuna never fails (no heartbeat row). (Journal
    and SQLite storages use owners and leases instead: :func:`recover_dead`.)
    When the other workers have nothing left to ask and the set of RUNNING
    trials shows no progress for ``timeout_s``, those trials are failed and
    their parameters re-queued. Evaluations take milliseconds to seconds, so
    a live trial never stays that long.
    """

    def __init__(self, ost: optuna.Study, timeout_s: float):
        self.ost, self.timeout_s = ost, timeout_s
        self.since: float | None = None
        self.snapshot: frozenset[int] = frozenset()

    def reset(self) -> None:
        self.since = None

    def check(self) -> None:
        running = self.ost.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        snap = frozenset(t.number for t in running)
        if self.since is None or snap != self.snapshot:
            self.since, self.snapshot = time.time(), snap
            return
        if snap and time.time() - self.since > self.timeout_s:
            for t in running:
                self.ost.tell(t.number, state=TrialState.FAIL, skip_if_finished=True)
                self.ost.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
            self.since = None


def _drop_surplus(ost: optuna.Study, trials: list[optuna.Trial], n_budget: int) -> list[optuna.Trial]:
    """Without a common lock (shared database), prune trials asked beyond the budget."""
    keep = []
    for t in trials:
        if _surplus(ost, t.number, n_budget):
            t.set_user_attr("surplus", True)
            ost.tell(t, state=TrialState.PRUNED)
        else:
            keep.append(t)
    return keep

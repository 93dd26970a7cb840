"""Run a study on Optuna: samplers, the ask/tell worker loop, budget and resume.

The loop asks ``batch_size`` trials, evaluates them in one vectorised call,
sets every constraint (``trial.set_constraint``; the model's own feasibility
is the constraint ``feasible``), and tells the values. It never uses
``study.optimize`` so that batches, the exact trial budget and recovery are
under our control:

* **Budget**: ``n_trials`` is the study's total of COMPLETE trials, across
  resumes and workers, not "n more". Asking is serialised by a lock file
  next to the journal, so workers never overshoot; on a shared database (no
  common file system) an asked trial that finds the budget already taken by
  lower-numbered trials is marked PRUNED and not evaluated.
* **Resume**: ``dse run`` again loads the study by name. Trials left RUNNING
  by a killed run (journal and SQLite storages have no heartbeat) are marked
  FAIL and their parameters enqueued, so they run again; completed trials
  are kept. RDB storages use Optuna's heartbeats instead.
* **Grid**: the ``grid`` sampler enqueues the whole grid once (shuffled by
  the seed, as Optuna's GridSampler visits it) so that parallel workers
  pop distinct points (``GridSampler`` from two processes duplicates points,
  see ``../shared/notes/optuna5.md``).
"""

from __future__ import annotations

import fcntl
import logging
import math
import os
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState

from . import storage as storage_mod
from .config import Dim, Study
from .errors import UserError
from .objective import evaluate_rows

ATTR = "dse"  # user attribute holding a trial's totals, feasibility and reason
FEASIBLE_KEY = "feasible"


def make_sampler(study: Study, worker: int = 0) -> optuna.samplers.BaseSampler:
    """The study's sampler; worker ``i`` gets seed + i so workers do not repeat each other."""
    seed = None if study.seed is None else study.seed + worker
    opts = dict(study.sampler_options)
    name = study.sampler
    try:
        if name == "tpe":
            return optuna.samplers.TPESampler(seed=seed, **opts)
        if name == "nsga2":
            return optuna.samplers.NSGAIISampler(seed=seed, **opts)
        if name == "nsga3":
            return optuna.samplers.NSGAIIISampler(seed=seed, **opts)
        if name in ("random", "grid"):
            return optuna.samplers.RandomSampler(seed=seed, **opts)
        if name == "gp":
            try:
                import torch  # noqa: F401  (GPSampler needs it)
            except ImportError:
                raise UserError(
                    f"{study.path}: sampler: 'gp' needs PyTorch; install it with "
                    "`.venv/bin/pip install -e '.[gp]'` (CPU wheel torch==2.13.0)"
                ) from None
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            opts.setdefault("deterministic_objective", True)
            return optuna.samplers.GPSampler(seed=seed, **opts)
    except TypeError as exc:
        raise UserError(f"{study.path}: sampler.options: {exc}") from None
    raise UserError(f"{study.path}: sampler: unknown '{name}'")


def suggest(trial: optuna.Trial, dims: tuple[Dim, ...]) -> dict[str, Any]:
    """Sample the searched parameters of one trial."""
    out: dict[str, Any] = {}
    for d in dims:
        if d.kind == "int":
            out[d.name] = trial.suggest_int(d.name, int(d.low), int(d.high), step=int(d.step or 1), log=d.log)
        elif d.kind == "float":
            out[d.name] = trial.suggest_float(d.name, d.low, d.high, step=d.step, log=d.log)
        elif d.kind == "choice":
            out[d.name] = trial.suggest_categorical(d.name, list(d.choices))
    return out


def open_study(study: Study, load_only: bool = False, worker: int = 0) -> optuna.Study:
    """Create or load the Optuna study named like the study file."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    st = storage_mod.open_storage(study.storage, study.out_dir, heartbeat_interval_s=study.heartbeat_interval,
                                  grace_period_s=study.grace_period)
    directions = [o.direction for o in study.objectives]
    sampler = make_sampler(study, worker)
    if load_only:
        try:
            ost = optuna.load_study(study_name=study.name, storage=st, sampler=sampler)
        except KeyError:
            raise UserError(f"{study.path}: no study '{study.name}' in {storage_mod.describe(study.storage, study.out_dir)}; run `dse run` first") from None
    else:
        for attempt in range(5):  # workers starting together may race to create the study
            try:
                ost = optuna.create_study(study_name=study.name, storage=st, sampler=sampler,
                                          directions=directions, load_if_exists=True)
                break
            except Exception:
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1) + random.random() * 0.2)
    if [d.name.lower() for d in ost.directions] != directions:
        raise UserError(
            f"{study.path}: the study '{study.name}' in {storage_mod.describe(study.storage, study.out_dir)} "
            f"has other objectives ({len(ost.directions)}); rename the study or delete {study.out_dir}"
        )
    ost.set_user_attr("objectives", [o.metric for o in study.objectives])
    ost.set_user_attr("constraints", [c.key for c in study.constraints])
    ost.set_user_attr("arch", study.arch)
    return ost


def recover_stale(ost: optuna.Study) -> int:
    """Mark RUNNING trials FAIL and enqueue their parameters; return how many.

    Only for storages without heartbeats, and only when no other process is
    running the study (``dse run`` owns it while it starts).
    """
    stale = ost.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    for t in stale:
        ost.tell(t.number, state=TrialState.FAIL, skip_if_finished=True)
        ost.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
    return len(stale)


def enqueue_grid(study: Study, ost: optuna.Study) -> int:
    """Enqueue every grid point not yet in the study (shuffled by the seed)."""
    import itertools

    dims = study.searched
    seen = {tuple(t.params.get(d.name) for d in dims) for t in ost.get_trials(deepcopy=False)}
    pts = [p for p in itertools.product(*(d.grid() for d in dims)) if p not in seen]
    random.Random(study.seed).shuffle(pts)
    for p in pts:
        ost.enqueue_trial(dict(zip((d.name for d in dims), p)))
    return len(pts)


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


def _counts(ost: optuna.Study) -> tuple[int, int]:
    trials = ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
    complete = sum(t.state == TrialState.COMPLETE for t in trials)
    return complete, len(trials) - complete


def _surplus(ost: optuna.Study, number: int, n_budget: int) -> bool:
    """True when lower-numbered live trials already fill the budget (shared DB race)."""
    live = ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
    return sum(t.number < number for t in live) >= n_budget


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


def tell_batch(study: Study, ost: optuna.Study, trials: list[optuna.Trial], rows: list[dict]) -> None:
    """Evaluate one batch in a single vectorised call and tell every trial."""
    ev = evaluate_rows(study, rows)
    keys = [c.key for c in study.constraints] + [FEASIBLE_KEY]
    for i, trial in enumerate(trials):
        for j, key in enumerate(keys):
            trial.set_constraint(key, float(ev.violations[i, j]))
        trial.set_user_attr(ATTR, {
            "feasible": bool(ev.feasible[i]),
            "reason": ev.reason[i] or None,
            "total": ev.metrics_of(i),
        })
        ost.tell(trial, [float(v) for v in ev.values[i]])


def worker_loop(study: Study, ost: optuna.Study, deadline: float | None = None,
                stop: threading.Event | None = None) -> int:
    """Ask/evaluate/tell until the budget, the deadline or ``stop``; return trials told."""
    n_budget = budget(study)
    lock = _AskLock(_lock_path(study))
    heartbeat = storage_mod.has_heartbeat(ost._storage)
    stall = _StallWatch(ost, STALL_FACTOR * study.grace_period)
    done = 0
    while True:
        if (deadline is not None and time.time() >= deadline) or (stop is not None and stop.is_set()):
            return done
        if heartbeat:  # fail (and re-queue) the trials of workers that stopped beating
            optuna.storages.fail_stale_trials(ost)
        with _Heartbeat(ost) as hb:
            with lock:
                complete, running = _counts(ost)
                if n_budget is not None and complete >= n_budget:
                    return done
                k = study.batch_size if n_budget is None else min(study.batch_size, n_budget - complete - running)
                trials = [hb.add(ost.ask()) for _ in range(max(k, 0))]
            if n_budget is not None and lock.path is None:
                trials = _drop_surplus(ost, trials, n_budget)
            if not trials:  # others hold the remaining budget; wait for them (they may fail)
                stall.check()
                time.sleep(0.05)
                continue
            stall.reset()
            try:
                rows = [suggest(t, study.searched) for t in trials]
                tell_batch(study, ost, trials, rows)
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
    heartbeat leaves a trial Optuna never fails (no heartbeat row), and on a
    journal storage (no heartbeats at all) any killed ``dse worker`` does.
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


def _worker_process(study_path: str, overrides: dict, worker: int, deadline: float | None) -> int:
    """Entry point of a joblib worker process (``n_jobs > 1``)."""
    from . import config

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    logging.getLogger("optuna").setLevel(logging.WARNING)
    study = config.load(study_path, overrides)
    ost = open_study(study, load_only=True, worker=worker)
    return worker_loop(study, ost, deadline)


@dataclass
class RunSummary:
    completed: int
    recovered: int
    told: int
    elapsed_s: float


def run(study: Study, overrides: dict | None = None, progress: bool = True) -> RunSummary:
    """Run (or resume) a study to its budget; ``n_jobs`` worker processes share the storage."""
    t0 = time.time()
    ost = open_study(study)
    recovered = 0
    if not storage_mod.has_heartbeat(ost._storage):
        recovered = recover_stale(ost)
    if study.sampler == "grid":
        enqueue_grid(study, ost)
    deadline = t0 + study.timeout if study.timeout else None
    n_budget = budget(study)

    stop = threading.Event()
    bar = _progress(ost, n_budget, stop) if progress else None
    try:
        if study.n_jobs == 1:
            told = worker_loop(study, ost, deadline)
        else:
            from joblib import Parallel, delayed

            told = sum(Parallel(n_jobs=study.n_jobs, backend="loky")(
                delayed(_worker_process)(study.path, overrides or {}, w, deadline) for w in range(study.n_jobs)
            ))
    finally:
        stop.set()
        if bar is not None:
            bar.join()
    completed, _ = _counts(ost)
    return RunSummary(completed, recovered, told, time.time() - t0)


def _progress(ost: optuna.Study, total: int | None, stop: threading.Event) -> threading.Thread:
    """A tqdm bar fed by polling the storage (works for any number of workers)."""
    from tqdm import tqdm

    def poll():
        start, _ = _counts(ost)
        with tqdm(total=total, initial=start, unit="trial", dynamic_ncols=True, leave=True) as bar:
            last = start
            while not stop.wait(0.25):
                c, _ = _counts(ost)
                bar.update(c - last)
                last = c
            c, _ = _counts(ost)
            bar.update(c - last)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    return th


def trial_rows(ost: optuna.Study, objectives: list[str]) -> list[dict[str, Any]]:
    """COMPLETE trials as flat rows: number, params, totals, feasibility, constraints."""
    rows = []
    for t in ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        info = t.user_attrs.get(ATTR, {})
        row: dict[str, Any] = {"number": t.number}
        row.update({f"param.{k}": v for k, v in t.params.items()})
        row.update({f"total.{k}": v for k, v in info.get("total", {}).items()})
        cons = t.constraints  # {key: violation}, <= 0 satisfied
        row["feasible"] = all(v <= 0 for v in cons.values()) and bool(info.get("feasible", False))
        row["model_feasible"] = bool(info.get("feasible", False))
        row["constraint_violation"] = float(sum(max(0.0, v) for k, v in cons.items() if k != FEASIBLE_KEY))
        row["infeasible_reason"] = info.get("reason")
        for metric, v in zip(objectives, t.values):
            row.setdefault(metric, v if math.isfinite(v) else None)
        rows.append(row)
    return rows

"""The study lifecycle: open or create, resume, grid, budget, run, read back.

``run`` opens the study named like the study file, recovers trials a killed
run left RUNNING, enqueues the grid, and drives one worker loop
(:mod:`dse.worker`) in this process or ``n_jobs`` worker processes on the
shared storage, until the budget (:func:`dse.worker.budget`) is reached:

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

import logging
import math
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import TrialState

from workloads.errors import UserError

from . import storage as storage_mod
from .config import Study
from .samplers import make_sampler
from .worker import ATTR, FEASIBLE_KEY, budget, counts, worker_loop


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
    completed, _ = counts(ost)
    return RunSummary(completed, recovered, told, time.time() - t0)


def _progress(ost: optuna.Study, total: int | None, stop: threading.Event) -> threading.Thread:
    """A tqdm bar fed by polling the storage (works for any number of workers)."""
    from tqdm import tqdm

    def poll():
        start, _ = counts(ost)
        with tqdm(total=total, initial=start, unit="trial", dynamic_ncols=True, leave=True) as bar:
            last = start
            while not stop.wait(0.25):
                c, _ = counts(ost)
                bar.update(c - last)
                last = c
            c, _ = counts(ost)
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

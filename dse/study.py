"""The study lifecycle: open or create, resume, grid, budget, run, read back.

``run`` opens the study named like the study file, recovers trials a killed
run left RUNNING, enqueues the grid, and drives one worker loop
(:mod:`dse.worker`) in this process or ``n_jobs`` worker processes on the
shared storage, until the budget (:func:`dse.worker.budget`) is reached:

* **Resume**: ``dse run`` again loads the study by name. Trials left RUNNING
  by a dead process (journal and SQLite storages have no heartbeat; every
  trial records its owner, :mod:`dse.lease`) are marked FAIL and their
  parameters enqueued, so they run again; trials of live processes are left
  alone, so several runs and workers share a study. Completed trials are
  kept. Database servers use Optuna's heartbeats instead.
* **Grid**: the ``grid`` sampler enqueues the whole grid once (shuffled by
  the seed, as Optuna's GridSampler visits it) so that parallel workers
  pop distinct points (``GridSampler`` from two processes duplicates points,
  see ``../shared/notes/optuna5.md``).
"""

from __future__ import annotations

import logging
import math
import os
import random
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import TrialState

from workloads.errors import UserError

from . import replay, storage as storage_mod
from .config import Study
from . import worker as worker_mod
from .samplers import make_sampler, suggest
from .worker import ATTR, FEASIBLE_KEY, budget, counts, recover_dead, tell_batch, worker_loop


def open_study(study: Study, load_only: bool = False, worker: int | None = None) -> optuna.Study:
    """Create or load the Optuna study named like the study file; ``worker``: the index of a process that
    samples it (its seed offset, :func:`dse.worker.seed_slot`), None for one that only reads it."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = make_sampler(study, worker or 0)  # bad options fail before anything is written
    try:
        st = storage_mod.open_storage(study.storage, study.out_dir, heartbeat_interval_s=study.heartbeat_interval,
                                      grace_period_s=study.grace_period)
    except UserError as exc:
        raise UserError(f"{study.path}: {exc}") from None
    directions = [o.direction for o in study.objectives]
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
    check_fingerprint(study, ost, reading=load_only and worker is None)
    if [d.name.lower() for d in ost.directions] != directions:  # (a study made before fingerprints)
        raise UserError(
            f"{study.path}: the study '{study.name}' in {storage_mod.describe(study.storage, study.out_dir)} "
            f"has other objectives ({len(ost.directions)}); {_HOW_TO_PROCEED}"
        )
    attrs = {
        "fingerprint": study.identity(),
        "objectives": [o.metric for o in study.objectives],
        "constraints": [c.key for c in study.constraints],
        "constraint_names": worker_mod.constraint_names(study),
        "arch": study.arch,
        "fixed": {k: v for k, v in study.fixed.items()},
    }
    current = ost.user_attrs
    for key, value in attrs.items():
        if current.get(key) != value:
            ost.set_user_attr(key, value)
    names = [o.metric for o in study.objectives]
    if ost.metric_names != names:
        ost.set_metric_names(names)  # optuna-dashboard and Optuna's plots label the objectives
    if worker is not None:
        slot = worker_mod.seed_slot(study, worker)
        if slot != worker:  # another process samples this study with that seed
            ost.sampler = make_sampler(study, slot)
    return ost


_HOW_TO_PROCEED = ("run it as a new study with `--new-name NAME`, or `--fork NAME` for a new study "
                   "seeded with the trials that fit the file")


def check_fingerprint(study: Study, ost: optuna.Study, reading: bool = False) -> None:
    """Stop with one line when the study file no longer defines the stored study (see Study.identity);
    ``reading``: for a command that only reads the study (plot, report), which needs the file as it was run."""
    stored = ost.user_attrs.get("fingerprint")
    if not isinstance(stored, dict):
        return  # a new study, or one made before fingerprints: it takes this file's
    now = study.identity()
    diffs = []
    for key in now:
        old, new = stored.get(key), now[key]
        if old == new:
            continue
        if key == "space" and isinstance(old, dict):
            for name in sorted(set(old) | set(new)):
                if old.get(name) != new.get(name):
                    diffs.append(f"space.{name}: the study has {old.get(name, 'the model default')}, "
                                 f"the file {new.get(name, 'the model default')}")
        else:
            diffs.append(f"{key}: the study has {old}, the file {new}")
    if diffs:
        where = storage_mod.describe(study.storage, study.out_dir)
        how = ("the study is read through the file it was run from: restore that file (or run the file as a new "
               "study with `--new-name NAME`)" if reading else _HOW_TO_PROCEED)
        raise UserError(f"{study.path}: the file no longer matches the study '{study.name}' in {where} "
                        f"({'; '.join(diffs)}); {how}")


def fork(study: Study, source: str) -> tuple[int, int]:
    """Create ``study`` seeded with the trials of study ``source`` whose designs fit it; (copied, of).

    A trial fits when its full design point (model defaults, the source's
    fixed values, its parameters) is a point of the new space. The copies
    are evaluated anew under the new study's workloads, objectives and
    constraints (attribute ``forked_from``), and count towards its budget.
    """
    import dataclasses

    src = dataclasses.replace(study, name=source)
    where = storage_mod.describe(src.storage, src.out_dir)
    if storage_mod.is_journal(src.storage) and not (src.storage or (src.out_dir / "study.journal").exists()):
        raise UserError(f"{study.path}: --fork: no study '{source}' in {where}")
    st = storage_mod.open_storage(src.storage, src.out_dir, heartbeat=False)
    try:
        old = optuna.load_study(study_name=source, storage=st)
    except KeyError:
        raise UserError(f"{study.path}: --fork: no study '{source}' in {where}") from None
    ost = open_study(study)  # its trials are enqueued: nothing sampled
    if ost.get_trials(deepcopy=False):
        raise UserError(f"{study.path}: --fork {study.name}: that study exists already; pick a new name")
    params = study.model.params
    old_fixed = old.user_attrs.get("fixed", {})
    done = [t for t in old.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if worker_mod.REPEAT_ATTR not in t.user_attrs]
    seeds, seen = [], set()
    for t in done:
        try:
            full = params.resolve({**old_fixed, **t.params})
        except UserError:
            continue
        point = {d.name: full[d.name] for d in study.searched}
        key = tuple(point.values())
        if key in seen or not all(d.fits(full[d.name]) for d in study.dims):
            continue
        if full != params.resolve({**study.fixed, **point}):  # a parameter the new file leaves at its default
            continue
        seen.add(key)
        seeds.append((t.number, point))
    from . import lease

    owner = lease.lease_for(worker_mod.lease_dir(study)).owner.token
    for i in range(0, len(seeds), 1024):
        chunk = seeds[i:i + 1024]
        for number, point in chunk:
            ost.enqueue_trial(point, user_attrs={"forked_from": f"{source}#{number}", lease.OWNER_ATTR: owner})
        trials = [ost.ask() for _ in chunk]
        tell_batch(study, ost, trials, [suggest(t, study.searched) for t in trials])
    return len(seeds), len(done)


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


def _worker_process(study_path: str, overrides: dict, worker: int, deadline: float | None,
                    parent_pid: int, conn) -> None:
    """Entry point of a worker process (``n_jobs > 1``): sends ("ok", told) or ("error", text) to ``conn``."""
    import signal
    import traceback

    from . import config, procs

    procs.tune_malloc()  # as the parent did (a spawned process starts with glibc's defaults)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent forwards Ctrl-C as SIGTERM, once
    stop = threading.Event()  # SIGTERM (also when the parent dies): finish the trials held, then return
    procs.die_with_parent(parent_pid, on_term=stop.set)
    def send(message: tuple) -> None:
        try:
            conn.send(message)
        except OSError:  # the parent is gone (killed): nobody reads the answer, and the work is in the storage
            pass

    try:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        logging.getLogger("optuna").setLevel(logging.WARNING)
        study = config.load(study_path, overrides)
        ost = open_study(study, load_only=True, worker=worker)
        told = worker_loop(study, ost, deadline, stop)
        storage_mod.sync_journals()  # its last tells on disk before it reports
        send(("interrupted", told) if stop.is_set() else ("ok", told))
    except KeyboardInterrupt:
        send(("interrupted", 0))
    except UserError as exc:
        send(("error", str(exc)))
    except BaseException:
        send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _run_workers(study: Study, overrides: dict, deadline: float | None) -> int:
    """``n_jobs`` worker processes on the shared storage; return the trials they told.

    Workers ignore SIGINT: Ctrl-C, SIGTERM or SIGHUP reach this process,
    which forwards one SIGTERM to each worker and waits for them to finish
    the trials they hold (a worker's SIGTERM sets a flag its loop reads
    between trials, :func:`dse.procs.stop_on_term`), so none is left
    RUNNING; a worker still running ``procs.GRACE_S`` seconds later is
    killed, and :func:`run` recovers its trials. Workers die with this process
    (:func:`dse.procs.die_with_parent`).
    """
    import multiprocessing as mp

    from . import procs

    ctx = mp.get_context("spawn")
    workers, conns = [], []
    for w in range(study.n_jobs):
        recv, send = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker_process, args=(study.path, overrides, w, deadline, os.getpid(), send),
                        name=f"dse-worker-{w}")
        p.start()
        send.close()
        workers.append(p)
        conns.append(recv)
    try:
        procs.join_all(workers)
    except KeyboardInterrupt:
        killed = procs.stop_all(workers)
        if killed:
            print(f"dse: killed {', '.join(killed)} (still running {procs.GRACE_S:.0f} s after SIGTERM); "
                  "its trials are recovered", file=sys.stderr)
        raise
    told, errors = 0, []
    for p, c in zip(workers, conns):
        kind, value = c.recv() if c.poll() else ("error", f"{p.name} died (exit code {p.exitcode})")
        if kind == "ok":
            told += value
        elif kind == "error":
            errors.append(value)
    if errors:
        if all("\n" not in e for e in errors):
            raise UserError(errors[0])
        raise RuntimeError("a worker process failed:\n" + errors[0])
    return told


@dataclass
class RunSummary:
    completed: int
    recovered: int
    told: int
    elapsed_s: float


def run(study: Study, overrides: dict | None = None, progress: bool = True,
        ost: optuna.Study | None = None) -> RunSummary:
    """Run (or resume) a study to its budget; ``n_jobs`` worker processes share the storage."""
    t0 = time.time()
    ost = ost or open_study(study, worker=0 if study.n_jobs == 1 else None)  # (n_jobs > 1: the workers sample)
    recovered = 0
    if not storage_mod.has_heartbeat(ost._storage):
        recovered = recover_dead(study, ost)
    if study.sampler == "grid":
        enqueue_grid(study, ost)
    deadline = t0 + study.timeout if study.timeout else None

    stop = threading.Event()
    bar = _progress(study, ost, budget(study), stop) if progress else None
    try:
        if study.n_jobs == 1:
            told = worker_loop(study, ost, deadline)
        else:
            told = _run_workers(study, overrides or {}, deadline)
    except KeyboardInterrupt:
        if not storage_mod.has_heartbeat(ost._storage):
            recover_dead(study, ost)  # trials of a worker that died without its clean path
        raise
    finally:
        stop.set()
        if bar is not None:
            bar.join()
        storage_mod.sync_journals()  # every told trial on disk before the run returns
        save_replay(ost)
    completed, _ = counts(ost)
    return RunSummary(completed, recovered, told, time.time() - t0)


def save_replay(ost: optuna.Study) -> None:
    """Save the journal's replay for the next process that opens the study (:mod:`dse.replay`); a results
    folder that cannot take it loses nothing but that speed-up."""
    try:
        replay.save(ost._storage)
    except Exception as exc:  # (also runs on the way out of an interrupt: never a traceback of its own)
        print(f"dse: warning: could not save the journal's replay: {exc}", file=sys.stderr)


def _progress(study: Study, ost: optuna.Study, total: int | None, stop: threading.Event) -> threading.Thread:
    """A tqdm bar fed by polling the storage (works for any number of workers); the designs counted as the
    workers count them (:class:`~dse.worker.DesignCache`: each COMPLETE trial taken in once, not every poll)."""
    from tqdm import tqdm

    designs = worker_mod.DesignCache(study)

    def poll():
        start, _ = designs.counts(ost)
        with tqdm(total=total, initial=start, unit="trial", dynamic_ncols=True, leave=True) as bar:
            last = start
            while not stop.wait(0.25):
                c, _ = designs.counts(ost)
                bar.update(c - last)
                last = c
            c, _ = designs.counts(ost)
            bar.update(c - last)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    return th


def trial_rows(ost: optuna.Study, objectives: list[str]) -> list[dict[str, Any]]:
    """COMPLETE trials as flat rows, one per design: number, params, totals, feasibility, constraints."""
    rows = []
    names = ost.user_attrs.get("constraint_names") or []
    # one row per design: a repeat's row is the earlier trial's, and of a design two processes evaluated at the
    # same moment the lower-numbered trial's
    for t in worker_mod.first_designs(ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))):
        info = t.user_attrs.get(ATTR, {})
        row: dict[str, Any] = {"number": t.number}
        row.update({f"param.{k}": v for k, v in t.params.items()})
        row.update({f"total.{k}": v for k, v in info.get("total", {}).items()})
        cons = t.constraints  # {key: violation}, <= 0 satisfied; list form: keys "0", "1", ... in names order
        if cons and all(k.isdigit() for k in cons):
            cons = {names[int(k)] if int(k) < len(names) else k: v for k, v in cons.items()}
        row["feasible"] = all(v <= 0 for v in cons.values()) and bool(info.get("feasible", False))
        row["model_feasible"] = bool(info.get("feasible", False))
        row["constraint_violation"] = float(sum(max(0.0, v) for k, v in cons.items() if k != FEASIBLE_KEY))
        row["infeasible_reason"] = info.get("reason")
        for metric, v in zip(objectives, t.values):
            row.setdefault(metric, v if math.isfinite(v) else None)
        rows.append(row)
    return rows

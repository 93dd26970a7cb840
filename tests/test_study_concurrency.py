"""A study shared by several processes, killed and interrupted (issue 14, items 1-3 and 9).

* any number of ``dse run`` / ``dse worker`` on one study (journal, SQLite)
  cooperate to the exact budget: trials in flight in a live process are
  never taken for dead (ownership by liveness, :mod:`dse.lease`);
* ``kill -9`` of a ``dse run`` with ``n_jobs: 2`` (and of a ``dse sweep``)
  leaves no worker alive; SIGTERM / SIGHUP / Ctrl-C leave no RUNNING trial;
* a journal lock whose holder died is free at once.

No test depends on the speed of the machine: processes are awaited by
their exit or by polling a condition with a generous limit (a hang guard).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from dse import config, lease, storage, study as study_mod, worker
from workloads.errors import UserError

from .conftest import ROOT, sigint_default, write

HANG_S = 600  # only a guard against a hang, never a timing assumption

STUDY = """
name: {name}
arch: multicore
workload: fc2
space:
  cores: {{low: 1, high: 64}}
  placement: [B, T1, TR1, T2, TR2]
  ni: [8, 16, 32]
  clock_mhz: {{low: 300, high: 1000, step: 50}}
objectives: [total.time_s, total.area_mm2]
sampler: {{name: nsga2, seed: 0, options: {{population_size: 10}}}}
n_trials: {n}
batch_size: {batch}
results_dir: {results}
"""


def make(tmp_path, name="c", n=120, batch=5, storage_url=None, extra=""):
    text = STUDY.format(name=name, n=n, batch=batch, results=tmp_path / "results")
    if storage_url:
        text += f"storage: {storage_url}\n"
    return write(tmp_path / f"{name}.yaml", text + extra)


def start(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dse.cli", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"),
                            preexec_fn=sigint_default, **kw)


def trials(path):
    st = config.load(path)
    return study_mod.open_study(st, load_only=True).get_trials(deepcopy=False)


def by_state(ts):
    """Trials by state; repeated designs (answered from earlier trials, not in the budget) and second evaluations
    of a design two processes asked at the same moment (it counts once: worker.first_designs) left out."""
    first = {t.number for t in worker.first_designs(ts)}
    out: dict[TrialState, int] = {}
    for t in ts:
        if "repeat_of" not in t.user_attrs and (t.state != TrialState.COMPLETE or t.number in first):
            out[t.state] = out.get(t.state, 0) + 1
    return out


def wait_for(cond, what: str):
    """Poll ``cond`` until true (the limit is a hang guard only)."""
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except (KeyError, ValueError, OSError, UserError):  # the study or file is not there yet
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def children(pid: int) -> set[int]:
    """PIDs whose parent is ``pid`` (from /proc)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(d.name))
    return out


def _stopped(pid: int) -> bool:
    return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0] == "T"


def _free(lock_files, db) -> bool:
    """No process holds any of the flock files or a lock on the SQLite database ``db``."""
    for path in lock_files:
        if not Path(path).exists():
            continue
        with open(path) as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(fh, fcntl.LOCK_UN)
    if db is not None:
        con = sqlite3.connect(db, timeout=0, isolation_level=None)
        try:
            con.execute("BEGIN EXCLUSIVE")
            con.execute("ROLLBACK")
        except sqlite3.OperationalError:
            return False
        finally:
            con.close()
    return True


def pause_unlocked(proc: subprocess.Popen, lock_files, db=None) -> bool:
    """Stop ``proc`` (SIGSTOP) at a moment it holds none of the locks; False if it ended first."""
    while proc.poll() is None:
        proc.send_signal(signal.SIGSTOP)
        wait_for(lambda: proc.poll() is not None or _stopped(proc.pid), "the process to stop")
        if proc.poll() is None and _free(lock_files, db):
            return True
        proc.send_signal(signal.SIGCONT)
        time.sleep(0.01)
    return False


def gone(pid: int) -> bool:
    return not lease.pid_exists(pid)


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_runs_and_workers_share_one_study_to_the_exact_budget(tmp_path, kind):
    url = f"sqlite:///{tmp_path / 'c.db'}" if kind == "sqlite" else None
    path = make(tmp_path, n=150, storage_url=url)
    first = start("run", path, "--no-progress")
    wait_for(lambda: by_state(trials(path)).get(TrialState.COMPLETE, 0) >= 5, "the first run to make progress")
    # the first run is paused (outside every lock) until the others have done work: however fast it is, the
    # work is shared, and a stopped live process's trials must not be taken for dead
    out_dir = tmp_path / "results" / "c"
    paused = pause_unlocked(first, [out_dir / ".ask.lock", out_dir / "study.journal.flock"],
                            tmp_path / "c.db" if kind == "sqlite" else None)
    others = [start("run", path, "--no-progress"), start("worker", path, "--worker-id", 2)]
    if paused:
        mine = str(first.pid)
        wait_for(lambda: sum(t.state == TrialState.COMPLETE and t.user_attrs[lease.OWNER_ATTR].split(":")[1] != mine
                             for t in trials(path)) >= 5 or any(p.poll() is not None for p in others),
                 "the other processes to make progress")
        first.send_signal(signal.SIGCONT)
    outs = [p.communicate(timeout=HANG_S) for p in [first, *others]]
    for p, (out, err) in zip([first, *others], outs):
        assert p.returncode == 0 and "Traceback" not in err, err
        assert "re-queued" not in out  # nobody took a live process's trials for dead
    ts = trials(path)
    assert by_state(ts) == {TrialState.COMPLETE: 150}
    owners = {t.user_attrs[lease.OWNER_ATTR].split(":")[1] for t in ts}
    assert len(owners) >= 2  # the work was shared


def test_only_trials_of_dead_owners_are_recovered(tmp_path):
    path = make(tmp_path, n=10)
    st = config.load(path)
    ost = study_mod.open_study(st)
    dead = subprocess.run([sys.executable, "-c", "from dse import lease; print(lease.me().token)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    mine = lease.me().token
    leases = worker.lease_dir(st)
    leases.mkdir(parents=True)
    remote_live = lease.Owner("elsewhere", 7, "1")
    remote_dead = lease.Owner("elsewhere", 8, "1")
    remote_live.lease_file(leases).write_text("x")
    remote_dead.lease_file(leases).write_text("x")
    old = time.time() - 10 * st.grace_period
    os.utime(remote_dead.lease_file(leases), (old, old))
    tokens = {"mine": mine, "dead": dead, "remote_live": remote_live.token, "remote_dead": remote_dead.token,
              "none": None}
    asked = {}
    for label, token in tokens.items():
        t = ost.ask()
        t.suggest_int("cores", 1, 64)
        if token is not None:
            t.set_user_attr(lease.OWNER_ATTR, token)
        asked[label] = t.number
    assert worker.recover_dead(st, ost) == 3
    state = {t.number: t.state for t in ost.get_trials()}
    for label in ("mine", "remote_live"):
        assert state[asked[label]] == TrialState.RUNNING
    for label in ("dead", "remote_dead", "none"):
        assert state[asked[label]] == TrialState.FAIL
    retried = [t.user_attrs["retry_of"] for t in ost.get_trials(states=(TrialState.WAITING,))]
    assert sorted(retried) == sorted(asked[k] for k in ("dead", "remote_dead", "none"))


def test_kill_9_of_a_parallel_run_leaves_no_worker(tmp_path):
    path = make(tmp_path, name="orph", n=1_000_000, extra="n_jobs: 2\n")
    parent = start("run", path, "--no-progress")
    wait_for(lambda: len(children(parent.pid)) >= 2 and by_state(trials(path)).get(TrialState.COMPLETE, 0) >= 10,
             "two workers completing trials")
    kids = children(parent.pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    wait_for(lambda: all(gone(k) for k in kids), "the workers to die with their parent")
    err = parent.stderr.read()  # the workers wrote to the parent's stderr: they took their clean path quietly
    assert "Traceback" not in err, err
    # a new run recovers what the dead workers held, and finishes an exact budget
    n = by_state(trials(path)).get(TrialState.COMPLETE, 0) + 10
    done = subprocess.run([sys.executable, "-m", "dse.cli", "run", str(path), "--no-progress", "--n-trials", str(n)],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_S)
    assert done.returncode == 0, done.stderr
    ts = trials(path)
    assert by_state(ts).get(TrialState.COMPLETE) == n and TrialState.RUNNING not in by_state(ts)


@pytest.mark.parametrize("how", ["ctrl-c", "SIGTERM", "SIGHUP"])
def test_interrupt_of_a_parallel_run_leaves_no_running_trial(tmp_path, how):
    path = make(tmp_path, name="intr", n=1_000_000, extra="n_jobs: 2\n")
    proc = start("run", path, "--no-progress", start_new_session=True)
    wait_for(lambda: len(children(proc.pid)) >= 2 and by_state(trials(path)).get(TrialState.COMPLETE, 0) >= 10,
             "two workers completing trials")
    kids = children(proc.pid)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends: the whole process group
    else:
        proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "run the same command again to resume" in err
    wait_for(lambda: all(gone(k) for k in kids), "the workers to exit")
    assert TrialState.RUNNING not in by_state(trials(path))


def test_a_workers_sigterm_finishes_its_trials_instead_of_failing_them(tmp_path):
    """A worker's SIGTERM (forwarded by its parent, or sent to it alone) sets a flag its loop reads between trials
    (procs.stop_on_term): it tells the trials it holds and exits; nothing is failed or re-queued. (Raising
    KeyboardInterrupt from the handler instead, as before, failed them -- and could land between a lock's acquire
    and its release, leaving the clean path waiting for the lock for ever.)"""
    path = make(tmp_path, name="wterm", n=1_000_000, batch=1, extra="n_jobs: 2\n")
    proc = start("run", path, "--no-progress", start_new_session=True)
    wait_for(lambda: len(children(proc.pid)) >= 2 and by_state(trials(path)).get(TrialState.COMPLETE, 0) >= 10,
             "two workers completing trials")
    kids = children(proc.pid)
    worker = min(k for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes())
    os.kill(worker, signal.SIGTERM)  # one worker alone: it stops, the other goes on
    wait_for(lambda: gone(worker), "the signalled worker to exit")
    done = by_state(trials(path)).get(TrialState.COMPLETE, 0)
    wait_for(lambda: by_state(trials(path)).get(TrialState.COMPLETE, 0) >= done + 10, "the other worker going on")
    proc.send_signal(signal.SIGTERM)  # then the parent, which forwards it to the remaining worker
    _, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == 130 and "Traceback" not in err, err
    wait_for(lambda: all(gone(k) for k in kids), "the workers to exit")
    states = by_state(trials(path))
    assert TrialState.RUNNING not in states and TrialState.FAIL not in states, states
    assert TrialState.WAITING not in states  # nothing re-queued


def test_kill_9_of_a_sweep_leaves_no_worker(tmp_path):
    body = STUDY.format(name="sw", n=1, batch=1, results=tmp_path / "results").replace(
        "  clock_mhz: {low: 300, high: 1000, step: 50}", "  clock_mhz: {low: 300, high: 1000, step: 0.05}")
    path = write(tmp_path / "sw.yaml", body)
    parent = start("sweep", path, "--no-progress", "--n-jobs", 2, "--chunk", 64)
    chunks = tmp_path / "results" / "sw" / "sweep" / "chunks"
    wait_for(lambda: len(children(parent.pid)) >= 2 and len(list(chunks.glob("chunk_*.npz"))) >= 2,
             "the sweep's workers to finish chunks")
    kids = children(parent.pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    wait_for(lambda: all(gone(k) for k in kids), "the sweep's workers to die with their parent")


def test_journal_lock_of_a_dead_holder_is_free_at_once(tmp_path):
    lock_file = tmp_path / "study.journal.flock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from dse.storage import FlockLock; lock = FlockLock(sys.argv[1]); lock.acquire(); "
        "print('held', flush=True); time.sleep(3600)"), str(lock_file)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    assert lock_file.read_text().split()[0] == str(holder.pid)  # the holder is recorded
    with open(lock_file) as fh:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    holder.kill()
    holder.wait()
    lock = storage.FlockLock(str(lock_file))
    with open(lock_file) as fh:  # free without waiting: the kernel dropped the dead holder's lock
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fh, fcntl.LOCK_UN)
    assert lock.acquire()
    assert lock_file.read_text().split()[0] == str(os.getpid())
    lock.release()


def test_journal_is_synced_at_most_once_per_told_trial_and_every_told_trial_is_synced(tmp_path, run_cli, monkeypatch):
    """TellSyncBackend: a trial's parameters and attributes are written without a sync, its tell with one that
    covers them; the journal holds every record (readable by a plain Optuna journal)."""
    synced: list[int] = []  # the journal's size at each sync of it
    real = os.fsync

    def counting(fd):
        synced.append(os.fstat(fd).st_size)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    path = make(tmp_path, n=30, batch=5)
    assert run_cli("run", path, "--no-progress")[0] == 0
    journal = tmp_path / "results" / "c" / "study.journal"
    raw = journal.read_bytes()
    ends, told, logs = 0, [], []
    for line in raw.splitlines(keepends=True):
        ends += len(line)
        logs.append(json.loads(line))
        if logs[-1]["op_code"] == 6 and TrialState(logs[-1]["state"]).is_finished():
            told.append(ends)
    assert len(told) >= 30
    assert all(any(s >= end for s in synced) for end in told)  # each tell is on disk when the run returns ...
    assert len(synced) <= sum(storage.needs_sync(log) for log in logs)  # ... at most one sync per record that needs one
    assert len(synced) < len(logs) / 5  # (a trial writes ~15 records: params, attributes, the tell)
    ost = optuna.load_study(study_name="c", storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(journal))))
    done = [t for t in ost.trials if t.state == TrialState.COMPLETE and "repeat_of" not in t.user_attrs]
    assert len(done) == 30 and all(len(t.params) == 4 and "dse" in t.user_attrs for t in done)


def test_journal_details_are_visible_to_other_processes_before_the_tell(tmp_path):
    journal = str(tmp_path / "s.journal")
    mine = storage.open_storage(journal, tmp_path)
    study = optuna.create_study(study_name="v", storage=mine)
    trial = study.ask()
    trial.suggest_int("x", 0, 9)
    trial.set_user_attr("note", "running")
    assert not storage.needs_sync({"op_code": 5}) and storage.needs_sync({"op_code": 6, "state": TrialState.COMPLETE})
    other = subprocess.run([sys.executable, "-c", (
        "import sys, optuna; from optuna.storages.journal import JournalFileBackend; "
        "t = optuna.load_study(study_name='v', storage=optuna.storages.JournalStorage(JournalFileBackend(sys.argv[1])))"
        ".trials[0]; print(t.state.name, t.params['x'], t.user_attrs['note'])"), journal],
        cwd=ROOT, capture_output=True, text=True, check=True)
    assert other.stdout.split() == ["RUNNING", str(trial.params["x"]), "running"]


def test_a_journal_is_replayed_once_per_process_unless_replaced(tmp_path):
    """dse run opens its study again for the outputs and the report: the replayed journal is reused, unless the
    file was replaced (then its records are not the ones replayed)."""
    path = tmp_path / "s.journal"
    first = storage.open_storage(str(path), tmp_path)
    optuna.create_study(study_name="a", storage=first).optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    again = storage.open_storage(str(path), tmp_path)
    assert again is first and len(optuna.load_study(study_name="a", storage=again).trials) == 3
    path.unlink()
    optuna.create_study(study_name="b", storage=optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(path))))
    fresh = storage.open_storage(str(path), tmp_path)
    assert fresh is not first and [s.study_name for s in fresh.get_all_studies()] == ["b"]


def test_a_pool_task_that_starts_after_its_parent_died_exits():
    """A queued chunk picked up after a kill -9 of the sweep must not run (its result pipe has no reader:
    the worker would block on it forever); a live process that is not our parent (a Dask worker's) is left alone."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    code = "import sys; from dse.procs import die_with_parent; die_with_parent(int(sys.argv[1]), clean=False); print('ran')"
    gone_parent = subprocess.run([sys.executable, "-c", code, str(dead.pid)], cwd=ROOT, capture_output=True, text=True)
    assert gone_parent.returncode == 1 and "ran" not in gone_parent.stdout
    other = subprocess.run([sys.executable, "-c", code, "1"], cwd=ROOT, capture_output=True, text=True)
    assert other.returncode == 0 and "ran" in other.stdout


HOLD_SLOT = """
import sys
from pathlib import Path
from dse import lease
print(lease.claim_slot(Path(sys.argv[1]), int(sys.argv[2])), flush=True)
sys.stdin.read()  # hold it until the test closes stdin
"""


def _holder(folder: Path, preferred: int) -> tuple[subprocess.Popen, int]:
    p = subprocess.Popen([sys.executable, "-c", HOLD_SLOT, str(folder), str(preferred)], cwd=ROOT, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return p, int(p.stdout.readline())


def test_a_seed_slot_is_held_until_its_process_exits(tmp_path):
    folder = tmp_path / "leases"
    a, slot_a = _holder(folder, 0)
    b, slot_b = _holder(folder, 0)
    assert (slot_a, slot_b) == (0, 1)
    a.kill()  # kill -9 frees it too
    a.wait(timeout=HANG_S)
    c, slot_c = _holder(folder, 0)
    assert slot_c == 0
    for p in (b, c):
        p.communicate("", timeout=HANG_S)
    assert lease.claim_slot(folder, 0) == 0 == lease.claim_slot(folder, 0)  # the same in one process
    assert lease.claim_slot(folder, 1) == 1


def test_a_second_process_on_a_study_samples_with_another_seed(tmp_path, monkeypatch):
    # two `dse run` of one study started together used to sample with the same seed: the same designs in
    # lockstep, each evaluated twice (measured: 439 distinct of 800 "new" designs; now 786)
    path = make(tmp_path, name="slots", n=10)
    st = config.load(path)
    study_mod.open_study(st)  # the study exists (as after another run started it)
    holder, held = _holder(worker.lease_dir(st), 0)
    try:
        seeds = []
        real = study_mod.make_sampler
        monkeypatch.setattr(study_mod, "make_sampler", lambda s, w=0: seeds.append(w) or real(s, w))
        ost = study_mod.open_study(st, worker=0)
        assert held == 0 and seeds == [0, 1]  # checked with worker 0's options, then sampled with slot 1's seed
        assert ost.sampler._random_sampler._rng.rng.random() == \
            real(st, 1)._random_sampler._rng.rng.random()
        seeds.clear()
        study_mod.open_study(st, load_only=True)  # a reader claims nothing
        assert seeds == [0]
    finally:
        holder.communicate("", timeout=HANG_S)


def test_background_sync_returns_at_once_and_covers_requests_made_during_a_sync(tmp_path, monkeypatch):
    """BackgroundSync: a request does not wait for the disk; requests made while a sync runs are covered by one
    more sync (a group commit); wait() returns when all are covered; a failed sync's error reaches the caller."""
    path = tmp_path / "j.journal"
    path.write_bytes(b"x\n")
    started, release, calls = threading.Event(), threading.Event(), []

    def slow_fsync(fd):
        calls.append(os.fstat(fd).st_size)
        started.set()
        assert release.wait(60)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    sync = storage.BackgroundSync(str(path))
    sync.request()  # returns while the sync is held
    assert started.wait(60)
    with open(path, "ab") as f:
        f.write(b"more\n")
    for _ in range(5):
        sync.request()
    assert len(calls) == 1
    release.set()
    sync.wait()
    assert calls == [2, 7]  # the first sync, then one for the five requests (it saw the later record)

    def failing(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    sync.request()
    with pytest.raises(OSError, match="Input/output"):
        sync.wait()
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    sync.request()
    sync.wait()  # the error was reported once


def test_pending_journal_sync_finishes_before_the_process_exits(tmp_path):
    """A process that told trials and exits (no explicit wait) still syncs: sync_journals runs at exit."""
    marker = tmp_path / "synced"
    code = (
        "import os, sys, time\n"
        "from dse import storage\n"
        "def slow(fd, real=os.fsync):\n"
        "    time.sleep(0.3); real(fd); open(sys.argv[2], 'w').write('done')\n"
        "os.fsync = slow\n"
        "s = storage.BackgroundSync(sys.argv[1])\n"
        "open(sys.argv[1], 'ab').write(b'x\\n')\n"
        "s.request()\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "j.journal"), str(marker)],
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert marker.read_text() == "done"

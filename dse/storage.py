"""Where a study lives: Optuna storages from the study's ``storage`` key.

* default (no key): Optuna's journal file ``results/<name>/study.journal``,
  safe for several processes on one machine and ~5x faster than SQLite
  here (``../shared/notes/optuna5.md``);
* ``journal:PATH`` or a path ending in ``.journal``/``.log``: a journal file;
* ``sqlite:///PATH``, ``postgresql://...``, ``mysql://...``: an RDB storage,
  with heartbeats so that a killed worker's trial is failed and retried.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import random
import socket
import sys
import threading
import time
import warnings
from pathlib import Path

import optuna
from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.storages.journal import JournalStorage
from optuna.storages.journal._file import BaseJournalFileLock, get_lock_file  # (not re-exported)
from optuna.storages.journal._storage import JournalOperation
from optuna.trial import TrialState

from workloads.errors import UserError

from . import replay

# Optuna marks heartbeats and fail_stale_trials experimental, and warns that heartbeats
# are meant for Study.optimize; dse records them itself in its ask/tell loop.
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")

HEARTBEAT_INTERVAL_S = 5
GRACE_PERIOD_S = 20
MAX_RETRY = 3


def describe(url: str | None, out_dir: Path) -> str:
    return url or str(out_dir / "study.journal")


def is_journal(url: str | None) -> bool:
    return url is None or url.startswith("journal:") or url.endswith((".journal", ".log"))


ALLOWED = "journal:PATH, PATH.journal, sqlite:///PATH, postgresql://..., mysql://..."


def understood(url: str | None) -> bool:
    """True for the storage URL forms of the module doc (syntax only; nothing is opened)."""
    return is_journal(url) or url.startswith(("sqlite:///", "postgresql", "mysql"))


def open_storage(url: str | None, out_dir: Path, heartbeat: bool = True,
                 heartbeat_interval_s: int = HEARTBEAT_INTERVAL_S,
                 grace_period_s: int = GRACE_PERIOD_S) -> optuna.storages.BaseStorage:
    """The Optuna storage for a study's ``storage`` key (see module doc)."""
    if is_journal(url):
        path = Path(url.removeprefix("journal:")) if url else out_dir / "study.journal"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return _journal(path)
        except OSError as exc:
            raise UserError(f"storage {path}: cannot open: {exc.strerror or exc}") from None
    if url.startswith(("sqlite://", "postgresql", "mysql")):
        if url.startswith("sqlite:///"):
            try:
                Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(f"storage {url}: cannot open: {exc.strerror or exc}") from None
        kwargs = {}
        if heartbeat and not url.startswith("sqlite"):  # remote workers; dse run owns SQLite studies
            kwargs = dict(
                heartbeat_interval=heartbeat_interval_s,
                grace_period=grace_period_s,
                heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY),
            )
        last: Exception | None = None
        for attempt in range(6):  # workers starting together race to create the tables
            try:
                return RDBStorage(url, **kwargs)
            except ImportError as exc:
                last = exc
                break
            except Exception as exc:  # server down, bad URL, or the creation race
                last = exc
                time.sleep(0.2 * (attempt + 1) + random.random() * 0.2)
        msg = str(last).splitlines()[0] if str(last) else type(last).__name__
        if "DB access module" in msg or isinstance(last, ImportError):
            msg += " (PostgreSQL needs `pip install psycopg[binary]`, MySQL `pip install pymysql`)"
        raise UserError(f"storage {url}: cannot open: {msg}") from None
    raise UserError(f"storage '{url}': not understood; allowed: {ALLOWED}")


#: journal operations that only fill in a running trial: written and flushed to the OS at once (other processes
#: and a killed writer see them), synced to disk with the trial's next state change (:class:`TellSyncBackend`)
_DETAIL_OPS = frozenset((JournalOperation.SET_TRIAL_PARAM, JournalOperation.SET_TRIAL_USER_ATTR,
                         JournalOperation.SET_TRIAL_SYSTEM_ATTR, JournalOperation.SET_TRIAL_INTERMEDIATE_VALUE))


def needs_sync(log: dict) -> bool:
    """Whether a journal record is synced to disk when written: all but a running trial's details (its
    parameters, attributes and intermediate values) and the creation or start of a running trial."""
    op = log.get("op_code")
    if op in _DETAIL_OPS:
        return False
    if op in (JournalOperation.CREATE_TRIAL, JournalOperation.SET_TRIAL_STATE_VALUES):
        return log.get("state", TrialState.RUNNING) != TrialState.RUNNING
    return True


#: journal storages opened by this process: {path: (pid, identity of the file when opened, storage)}
_OPEN_JOURNALS: dict[str, tuple[int, tuple, JournalStorage]] = {}


def _identity(path: str) -> tuple:
    """(device, inode, size, first record) of a journal file: its first record names the worker that wrote it
    (a random id), so a journal deleted and written anew differs even where the inode is reused."""
    st = os.stat(path)
    with open(path, "rb") as fh:
        first = fh.readline(4096)
    return st.st_dev, st.st_ino, st.st_size, first


def _journal(path: Path) -> JournalStorage:
    """The journal storage of ``path``, opened once per process: opening replays the whole journal (seconds
    for a study of thousands of trials), and ``dse run`` opens its study again for the outputs and the report.
    A storage reads what other processes appended at its next access, so one per process serves every open.
    Opened anew when the file was replaced or shortened (its records would not be the ones replayed)."""
    key = str(path.resolve())
    hit = _OPEN_JOURNALS.get(key)
    if hit is not None and hit[0] == os.getpid() and path.exists():
        dev, ino, size, first = _identity(key)
        was = hit[1]
        if (dev, ino) == was[:2] and size >= was[2] and (first == was[3] or not was[3]):
            if not was[3]:  # empty when opened: its first record is the one this storage replays from now on
                _OPEN_JOURNALS[key] = (hit[0], (dev, ino, was[2], first), hit[2])
            return hit[2]
    storage = replay.open_journal(TellSyncBackend(key, lock_obj=FlockLock(key + ".flock")))
    _OPEN_JOURNALS[key] = (os.getpid(), _identity(key), storage)
    return storage


class BackgroundSync:
    """Disk syncs (``fsync``) of one journal file, made by a thread of this process while its loop goes on.

    :meth:`request` returns at once; the thread's next sync, started after the request, covers it. Requests
    that arrive while a sync runs are covered together by the next one (a group commit), so a study whose
    trials are told faster than the disk syncs (``batch_size: 1``: ~4 ms a sync on this machine, ~3 ms a
    trial) waits for none of them. :meth:`wait` returns when every request made so far is covered:
    :func:`sync_journals` calls it before ``dse run`` returns, before a worker process reports, and at exit.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.pid = os.getpid()
        self._cv = threading.Condition()
        self._asked = self._done = 0
        self._error: OSError | None = None
        self._thread: threading.Thread | None = None
        self._idle = False  # the thread waits for a request
        _SYNCS.append(self)

    def request(self) -> None:
        """Ask for a sync of everything written to the file so far; raise a failed earlier sync's error."""
        with self._cv:
            self._raise_error()
            self._asked += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="dse-journal-sync", daemon=True)
                self._thread.start()
            elif self._idle:  # (a busy thread looks for new requests when its sync ends: no wake-up to pay)
                self._cv.notify_all()

    def wait(self) -> None:
        """Return when every sync requested so far is done (raise the error of one that failed)."""
        with self._cv:
            while self._done < self._asked and self._thread is not None and self._thread.is_alive():
                self._cv.wait(1.0)
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._done >= self._asked:
                    self._idle = True
                    self._cv.wait()
                    self._idle = False
                upto = self._asked
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except FileNotFoundError:  # the file was removed since it was written: nothing left to sync
                pass
            except OSError as exc:
                with self._cv:
                    self._error = exc
            with self._cv:
                self._done = upto
                self._cv.notify_all()


#: this process's journal syncers (a forked child's list holds its parent's too: :func:`sync_journals` skips them)
_SYNCS: list[BackgroundSync] = []


def sync_journals() -> None:
    """Wait for every journal sync this process has requested (the end of a run or worker, and exit)."""
    for sync in list(_SYNCS):
        if sync.pid == os.getpid():
            sync.wait()


atexit.register(sync_journals)


class TellSyncBackend(replay.HeldBackend):
    """Optuna's journal file, synced to disk (``fsync``) once per trial, when it is told, instead of once per
    record (~15 per trial: each parameter, attribute and the tell), and in the background
    (:class:`BackgroundSync`) instead of while the loop waits.

    Every record is still written and flushed under the journal lock before the call returns, so other
    processes read it at once and a killed writer loses nothing it wrote (the kernel holds the data); the
    sync only matters if the machine itself goes down, and then a trial's outcome is on disk within about two
    disk syncs of its tell (the tell's sync also covers that trial's earlier records, written before it). A
    study's own records, enqueued and finished trials are synced as before. The per-record sync took 2/3 of
    the time of a batched quickstart run, the waits for the per-trial sync ~1/3-2/3 of a ``batch_size: 1``
    run (docs/benchmarks.md).
    """

    def __init__(self, file_path: str, lock_obj: BaseJournalFileLock | None = None) -> None:
        super().__init__(file_path, lock_obj)
        self._sync = BackgroundSync(file_path)
        self._written: tuple[int, list[bytes]] | None = None  # the last append: where it began, its lines

    def append_logs(self, logs: list[dict]) -> None:
        with get_lock_file(self._lock):
            lines = [(json.dumps(log, separators=(",", ":")) + "\n").encode("utf-8") for log in logs]
            with open(self._file_path, "ab") as f:
                start = f.tell()  # the file's end: no other writer appends while the lock is held
                f.write(b"".join(lines))
                f.flush()
            self._written = (start, lines)
        if any(needs_sync(log) for log in logs):
            self._sync.request()

    def read_logs(self, log_number_from: int):
        """The records from ``log_number_from`` on; those this storage has just appended are taken from the
        lines it wrote instead of opening and reading the file again.

        Optuna's journal storage reads the file back after each of its writes (~15 a trial) to apply what it
        wrote. When the records read so far end exactly where this storage's last append began, no other
        process wrote in between, so the next records are that append's lines: they are decoded from the very
        bytes written (as Optuna's reader decodes the file's lines, and their ends recorded as it records them),
        then the file is read on from their end for anything others appended since (a ``stat`` when nothing)."""
        written, self._written = self._written, None
        if written is None or self.held or self._log_number_offset.get(log_number_from) != written[0]:
            return super().read_logs(log_number_from)
        return self._read_written(log_number_from, *written)

    def _read_written(self, log_number_from: int, start: int, lines: list[bytes]):
        end = start
        for i, line in enumerate(lines):
            end += len(line)
            self._log_number_offset.setdefault(log_number_from + i + 1, end)
            yield json.loads(line)
        yield from super().read_logs(log_number_from + len(lines))


class FlockLock(BaseJournalFileLock):
    """The journal's write lock: ``flock`` on a lock file, released by the kernel when its holder dies.

    Optuna's default lock (a symlink ``study.journal.lock``) survives a
    ``kill -9`` and makes every later process wait its 30 s grace period with
    warnings. An ``flock`` cannot go stale: the kernel drops it with the
    holder's last file descriptor, so a dead holder's lock is gone at once.
    The holder writes ``PID host`` into the file; a process that waits more
    than ``WARN_AFTER_S`` names the (live) holder once on stderr.
    """

    WARN_AFTER_S = 10.0

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()  # one descriptor per thread: flock excludes per open file
        self._record = f"{os.getpid()} {socket.gethostname()}".ljust(self.RECORD_BYTES - 1)[:self.RECORD_BYTES - 1] + "\n"

    RECORD_BYTES = 96  # fixed width: rewritten in place, no truncate (a slow metadata update)

    def _fd(self) -> int:
        fd = getattr(self._local, "fd", None)
        if fd is None:
            fd = self._local.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        return fd

    def acquire(self) -> bool:
        fd = self._fd()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            t0: float | None = time.monotonic()
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if t0 is not None and time.monotonic() - t0 > self.WARN_AFTER_S:
                        holder = os.pread(fd, self.RECORD_BYTES, 0).decode(errors="replace").strip()
                        print(f"dse: waiting for the journal lock {self.path} held by PID {holder}", file=sys.stderr)
                        t0 = None
                    time.sleep(0.005)
        os.pwrite(fd, self._record.encode(), 0)
        return True

    def release(self) -> None:
        fcntl.flock(self._fd(), fcntl.LOCK_UN)


def has_heartbeat(storage: optuna.storages.BaseStorage) -> bool:
    """True for storages with heartbeats on (Optuna wraps RDBStorage in a cache, so no isinstance)."""
    interval = getattr(storage, "get_heartbeat_interval", None)
    return interval is not None and interval() is not None

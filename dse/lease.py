"""Who owns a running trial, and is that owner still alive?

Journal and SQLite storages have no heartbeats, so ``dse`` records the owner
of every trial it asks (trial user attribute ``owner`` = ``host:pid:start``,
where ``start`` is the process start time, which guards against a reused
PID) and keeps a *lease* per process: a small file
``results/<name>/leases/<host>.<pid>`` whose modification time a daemon
thread refreshes every ``interval_s`` seconds while the process runs.

An owner is alive when

* it runs on this host: its PID exists and has the recorded start time
  (exact, no timing involved);
* it runs on another host (a shared file system): its lease file was
  refreshed less than ``grace_s`` seconds ago.

A starting ``dse run`` and any idle worker fail and re-queue only the
RUNNING trials whose owner is dead (:func:`dse.study.recover_dead`), so any
number of ``dse run`` / ``dse worker`` processes cooperate on one study.
"""

from __future__ import annotations

import fcntl
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

OWNER_ATTR = "owner"
LEASE_INTERVAL_S = 2.0


def _start_ticks(pid: int) -> str | None:
    """Start time of process ``pid`` (clock ticks since boot), or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        if not Path("/proc/self/stat").exists():  # no procfs: fall back to "the PID exists"
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return None
            except PermissionError:
                return "?"
            return "?"
        return None
    fields = stat.rpartition(")")[2].split()  # the name (field 2) may contain spaces
    if fields and fields[0] == "Z":  # a zombie has exited
        return None
    return fields[19] if len(fields) > 19 else "?"


@dataclass(frozen=True)
class Owner:
    """A process that may own trials: host name, PID and the PID's start time."""

    host: str
    pid: int
    start: str

    @property
    def token(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, token: object) -> Owner | None:
        if not isinstance(token, str) or token.count(":") < 2:
            return None
        host, pid, start = token.rsplit(":", 2)
        try:
            return cls(host, int(pid), start)
        except ValueError:
            return None

    def lease_file(self, lease_dir: Path) -> Path:
        return lease_dir / f"{self.host}.{self.pid}"


def pid_exists(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (a zombie has exited: it does not)."""
    return _start_ticks(pid) is not None


def me() -> Owner:
    """This process as a trial owner."""
    pid = os.getpid()
    return Owner(socket.gethostname(), pid, _start_ticks(pid) or "?")


def alive(token: object, lease_dir: Path, grace_s: float) -> bool:
    """True while the owner ``token`` may still be working on its trials (see module doc)."""
    owner = Owner.parse(token)
    if owner is None:  # a trial without an owner was asked outside dse's lock: nobody holds it
        return False
    if owner.host == socket.gethostname():
        start = _start_ticks(owner.pid)
        return start is not None and (start == owner.start or "?" in (start, owner.start))
    try:
        age_s = time.time() - owner.lease_file(lease_dir).stat().st_mtime
    except OSError:
        return False
    return age_s < grace_s


class Lease:
    """This process's lease file, refreshed by a daemon thread until ``close``."""

    def __init__(self, lease_dir: Path, interval_s: float = LEASE_INTERVAL_S):
        self.owner = me()
        self.path = self.owner.lease_file(lease_dir)
        self.interval_s = interval_s
        self._stop = threading.Event()
        lease_dir.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.owner.token + "\n")
        self._thread = threading.Thread(target=self._beat, daemon=True, name="dse-lease")
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                os.utime(self.path)
            except OSError:  # removed by hand: write it again
                try:
                    self.path.write_text(self.owner.token + "\n")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        try:
            self.path.unlink()
        except OSError:
            pass

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_LEASES: dict[tuple[int, Path], Lease] = {}
_LEASES_LOCK = threading.Lock()


def lease_for(lease_dir: Path) -> Lease:
    """The one lease of this process in ``lease_dir`` (started on first use, removed at exit)."""
    import atexit

    key = (os.getpid(), Path(lease_dir).resolve())
    with _LEASES_LOCK:
        lease = _LEASES.get(key)
        if lease is None:
            lease = _LEASES[key] = Lease(Path(lease_dir))
            atexit.register(lease.close)
        return lease


#: seed slots this process holds: (folder, preferred slot) -> (slot, open locked file)
_SLOTS: dict[tuple[str, int], tuple[int, int]] = {}


def claim_slot(folder: Path, preferred: int, most: int = 1024) -> int:
    """The seed offset of a process that samples a study: ``preferred``, or the next one that no other live
    process on this host holds (an ``flock`` on ``folder/slot.N``, held until the process exits, ``kill -9``
    included). Two ``dse run`` of one study started together would otherwise sample with the same seed and
    propose the same designs in lockstep. The same (folder, preferred) in one process gives the same slot.
    Where the file system does not lock, ``preferred``."""
    key = (str(folder.resolve()), preferred)
    if key in _SLOTS:
        return _SLOTS[key][0]
    folder.mkdir(parents=True, exist_ok=True)
    mine = {slot for (f, _), (slot, _) in _SLOTS.items() if f == key[0]}
    for slot in range(preferred, preferred + most):
        if slot in mine:
            continue
        fd = os.open(folder / f"slot.{slot}", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process holds it
            os.close(fd)
            continue
        except OSError:  # no locks here (some network file systems)
            os.close(fd)
            return preferred
        _SLOTS[key] = (slot, fd)
        return slot
    return preferred

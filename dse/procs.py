"""Worker processes that die with their parent, and signals that take Ctrl-C's clean path.

* :func:`interrupt_on_term` makes SIGTERM (SLURM, ``docker stop``) and
  SIGHUP (a closed terminal) raise ``KeyboardInterrupt`` like Ctrl-C, so
  every exit goes through the same clean-up (in-flight trials failed and
  re-queued, completed work kept); :func:`stop_on_term` makes them set a
  study worker's stop flag instead (it finishes the trials it holds).
* :func:`die_with_parent` is called first thing in a worker process: on
  Linux the kernel sends it SIGTERM when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``), and a watchdog thread checks the parent
  PID every ``WATCH_S`` seconds (the portable path, and a guard for the
  prctl's "parent *thread*" semantics). Either way the worker takes its
  clean path, and is hard-killed if that has not ended it after
  ``GRACE_S`` seconds, so a ``kill -9`` of ``dse run`` or ``dse sweep``
  leaves no orphan evaluating the study.
* :func:`tune_malloc` fixes glibc's malloc thresholds, first thing in
  every dse process (batched evaluation faults far fewer pages).
* :func:`join_all` and :func:`stop_all` are the parent's side: it waits for
  its workers waking every ``WATCH_S`` (so a signal is acted on at once,
  never left behind a blocking ``waitpid``), and on an interrupt gives
  them ``GRACE_S`` seconds to take their clean path before it kills the
  ones still running (their trials are recovered like a dead worker's).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence

from .lease import pid_exists

WATCH_S = 0.5
GRACE_S = 30.0
PR_SET_PDEATHSIG = 1


def _raise_interrupt(signum, frame):
    signal.signal(signum, signal.SIG_IGN)  # once: the clean path must not be interrupted again
    raise KeyboardInterrupt


def _on_term(handler) -> None:
    """SIGTERM and SIGHUP (where the platform has it) go to ``handler`` (main thread only: Python sets signal
    handlers there)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, handler)


def interrupt_on_term() -> None:
    """SIGTERM and SIGHUP raise KeyboardInterrupt (main thread only)."""
    _on_term(_raise_interrupt)


def stop_on_term(stop: Callable[[], None]) -> None:
    """SIGTERM and SIGHUP call ``stop`` (main thread only) instead of raising: a study worker finishes the
    trials it holds and returns. An exception raised by a signal handler may land anywhere, also between a
    lock's acquire and the block that releases it (Python's signal docs), and the clean path would then wait
    for that lock for ever; a flag read between trials cannot."""
    _on_term(lambda signum, frame: stop())


#: glibc ``mallopt`` parameters (malloc.h) and the values :func:`tune_malloc` sets
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_BYTES = 32 << 20
TRIM_THRESHOLD_BYTES = 256 << 20


def tune_malloc() -> bool:
    """Fix glibc's mmap and trim thresholds for this process (32 MB and 256 MB); returns whether they were set.

    A batched evaluation allocates and frees many point-sized arrays. With glibc's dynamic thresholds, arrays of
    a few 100 KB came from fresh ``mmap`` pages or from a heap top trimmed after each call, and every call
    faulted its pages in again: ~4,200 minor faults a 4,096-point ReNA VGG16 call against ~150. Fixed, freed
    memory stays in the heap for the next call. The peak is unchanged; the resident size stays at the peak
    between calls instead of dropping (docs/profile/shared_paths.md, sixth round). Set by every dse process
    (the CLI, study and sweep workers). Skipped off glibc, when the environment sets any of glibc's own ``MALLOC_*``
    variables, or with ``DSE_MALLOC_TUNE=0``."""
    if os.environ.get("DSE_MALLOC_TUNE", "1") == "0" or any(k.startswith("MALLOC_") for k in os.environ):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):  # glibc only: other C libraries have other knobs
            return False
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1


def _prctl_pdeathsig(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_WATCHED: set[int] = set()


def die_with_parent(parent_pid: int, clean: bool = True, on_term: Callable[[], None] | None = None) -> None:
    """End this process when ``parent_pid`` (our parent) dies; see module doc.

    ``clean``: take the SIGTERM path first: ``on_term`` (:func:`stop_on_term`: a study worker finishes its
    trials and returns), or without one KeyboardInterrupt (:func:`interrupt_on_term`); else exit at once
    (sweep chunks are written atomically, nothing to clean). Does nothing if ``parent_pid`` is not our parent
    (e.g. a Dask worker) or already set up.
    """
    if parent_pid in _WATCHED:
        return
    if os.getppid() != parent_pid:
        if not pid_exists(parent_pid):  # the parent died before this task started: nobody reads our result
            os._exit(1)
        return  # not our parent (e.g. a Dask worker)
    _WATCHED.add(parent_pid)
    if clean:  # (a pool's worker may be started from a helper thread: no prctl there, the watchdog only)
        if on_term is None:
            interrupt_on_term()
        else:
            stop_on_term(on_term)
        _prctl_pdeathsig(signal.SIGTERM)
    if os.getppid() != parent_pid:  # the parent died before the prctl took effect
        os._exit(1)

    def watch():
        stop = threading.Event()
        while not stop.wait(WATCH_S):
            if os.getppid() != parent_pid:
                if clean:
                    os.kill(os.getpid(), signal.SIGTERM)
                    stop.wait(GRACE_S)
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="dse-parent-watch").start()


def _wait(workers: Sequence, poll_s: float, end: float | None = None) -> list:
    """The processes of ``workers`` still running once all have ended or ``time.monotonic()`` passed ``end``,
    waking every ``poll_s`` seconds (a signal is acted on at each wake-up)."""
    from multiprocessing.connection import wait

    alive = [p for p in workers if p.is_alive()]
    while alive and (end is None or time.monotonic() < end):
        left = poll_s if end is None else min(poll_s, max(0.0, end - time.monotonic()))
        wait([p.sentinel for p in alive], timeout=left)
        alive = [p for p in alive if p.is_alive()]
    return alive


def join_all(workers: Sequence, poll_s: float = WATCH_S) -> None:
    """Wait until every process of ``workers`` (``multiprocessing.Process``) has ended, waking every ``poll_s``
    seconds: a bare ``join`` blocks in ``waitpid``, and an interrupt whose signal another thread of this process
    took (numpy's BLAS threads can) would wait there for a worker to end by itself."""
    _wait(workers, poll_s)


def stop_all(workers: Sequence, grace_s: float = GRACE_S, poll_s: float = WATCH_S) -> list[str]:
    """SIGTERM every live worker (their clean path: a study worker finishes the trials it holds), wait up to ``grace_s``
    seconds for all of them, SIGKILL the ones still running; returns the names of those killed."""
    for p in workers:
        if p.is_alive():
            os.kill(p.pid, signal.SIGTERM)
    stuck = _wait(workers, poll_s, time.monotonic() + grace_s)
    for p in stuck:
        p.kill()
    for p in workers:
        p.join()
    return [p.name for p in stuck]

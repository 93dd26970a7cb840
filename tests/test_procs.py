"""dse.procs, the parent's side: join_all wakes up to act on an interrupt, stop_all gives workers their clean
path and kills the ones that do not take it, never waiting longer than its grace period."""

from __future__ import annotations

import multiprocessing as mp
import signal
import time

from dse import procs


def _stubborn(ready) -> None:
    """A worker that ignores SIGTERM (as one that lost its interrupt would)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    while True:
        time.sleep(0.05)


def _polite(ready) -> None:
    """A worker that ends on SIGTERM."""
    ready.set()
    while True:
        time.sleep(0.05)


def _start(target):
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    p = ctx.Process(target=target, args=(ready,), name=target.__name__.strip("_"))
    p.start()
    assert ready.wait(120), "the worker did not start"
    return p


def test_stop_all_kills_a_worker_that_ignores_sigterm_after_the_grace_period():
    stubborn, polite = _start(_stubborn), _start(_polite)
    killed = procs.stop_all([stubborn, polite], grace_s=0.5, poll_s=0.05)
    assert killed == ["stubborn"]
    assert not stubborn.is_alive() and stubborn.exitcode == -signal.SIGKILL
    assert not polite.is_alive() and polite.exitcode == -signal.SIGTERM


def test_join_all_acts_on_an_interrupt_another_thread_took():
    """The signal of an interrupt handled by another thread of the parent (the C handler runs there and only
    flags it for the main thread) comes out of join_all while the worker still runs. A bare join would sit in
    waitpid until the worker ended: the guard ends it after a minute, and the worker would then be dead."""
    import threading

    p = _start(_polite)
    guard = threading.Timer(60, lambda: p.is_alive() and p.terminate())  # only against a hang
    guard.start()

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    other = threading.Thread(target=lambda: (time.sleep(0.3), signal.pthread_kill(threading.get_ident(), signal.SIGALRM)))
    try:
        other.start()
        try:
            procs.join_all([p], poll_s=0.05)
        except KeyboardInterrupt:
            assert p.is_alive(), "the interrupt came out of join_all only once its worker had ended"
        else:
            raise AssertionError("join_all returned while its worker runs")
    finally:
        other.join()
        guard.cancel()
        signal.signal(signal.SIGALRM, old)
        assert procs.stop_all([p], grace_s=5) == []

"""dse processes fix glibc's malloc thresholds (dse.procs.tune_malloc): fewer page faults per batched call, the
same numbers, and the ways to keep glibc's defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_PROBE = r"""
import json, resource, sys
from dse.procs import tune_malloc
tuned = tune_malloc()
import numpy as np
from archmodels import get_model
m = get_model("rena")
rng = np.random.default_rng(4)
pts = [m.params.points(m.params.random_rows(4096, rng)) for _ in range(5)]
[m.evaluate_batch("vgg16", p) for p in pts[:2]]
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
time = [float(np.nansum(m.evaluate_batch("vgg16", p).totals["time_s"])) for p in pts[2:]]  # none kept
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 3
print(json.dumps({"tuned": tuned, "faults": faults, "time": time}))
"""


def _probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "DSE_MALLOC_TUNE"}
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, "PYTHONPATH": str(ROOT), **env},
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_tuned_process_faults_far_fewer_pages_with_the_same_numbers():
    tuned, default = _probe(), _probe(DSE_MALLOC_TUNE="0")
    assert tuned["tuned"] and not default["tuned"]
    assert tuned["time"] == default["time"]  # the allocator changes where memory comes from, not a number
    assert tuned["faults"] * 3 < default["faults"], (tuned, default)


def test_the_environment_keeps_glibc_defaults(monkeypatch):
    from dse import procs

    monkeypatch.setenv("DSE_MALLOC_TUNE", "0")
    assert procs.tune_malloc() is False
    monkeypatch.delenv("DSE_MALLOC_TUNE")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")  # the user tunes glibc himself: left alone
    assert procs.tune_malloc() is False


def test_every_dse_process_tunes(monkeypatch, tmp_path):
    """The CLI, a study worker and a sweep pool worker call it first thing."""
    import signal

    from dse import cli, procs, study, sweep

    calls = []
    monkeypatch.setattr(procs, "tune_malloc", lambda: calls.append("tuned") or True)
    monkeypatch.setattr(procs, "die_with_parent", lambda *a, **k: calls.append("watched"))
    assert cli.main(["models"]) == 0 and calls == ["tuned"]

    sweep._watch_parent(os.getpid())
    assert calls[1:] == ["tuned", "watched"]

    class Conn:  # a study worker on a study file that does not exist: it answers with the error
        sent: list = []

        def send(self, message):
            self.sent.append(message)

        def close(self):
            pass

    sigint = signal.getsignal(signal.SIGINT)
    try:
        study._worker_process(str(tmp_path / "missing.yaml"), {}, 0, None, os.getpid(), Conn())
    finally:
        signal.signal(signal.SIGINT, sigint)
    assert calls[3:] == ["tuned", "watched"] and Conn.sent[0][0] == "error"

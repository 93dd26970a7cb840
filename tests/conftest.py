"""Shared fixtures: run the CLI in-process or as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The files whose tests run longest (several processes each; ~80 s and ~60 s of an idle machine), collected first:
#: pytest-xdist (``--dist loadfile --no-loadscope-reorder``, pyproject) hands files to its workers in collection
#: order, so these start at once, one per worker, and the short files fill in around them instead of one of these
#: running alone at the end (xdist's default order, by number of tests, put test_distributed's 4 tests last).
LONG_FILES = ("test_distributed.py", "test_study_concurrency.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.path.name not in LONG_FILES)  # (stable: the order within a file is kept)


@pytest.fixture
def run_cli(capsys):
    """Run ``dse ARGS`` in-process; return (exit code, stdout, stderr)."""
    from dse.cli import main

    def _run(*args: str):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


def dse_process(*args: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    """Run ``dse ARGS`` as a separate process (real exit codes, signals)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "dse.cli", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, env=env, **kw)


def evaluate_json(arch: str, workload: str, *sets: str) -> dict:
    args = ["evaluate", arch, workload, "--json"]
    for s in sets:
        args += ["--set", s]
    proc = dse_process(*args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sigint_default() -> None:
    """``preexec_fn`` of a child a test interrupts as a terminal would: a shell starts background jobs (a CI
    script run with ``&``) with SIGINT ignored, which the child would inherit and keep running."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


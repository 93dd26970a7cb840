"""Before/after in one run: the baseline ref in a temporary git worktree, each tree measured in a subprocess.

``make bench`` compares the working tree ("after") with a baseline git ref
("before"; ``--baseline REF``, default :data:`DEFAULT_BASELINE`, the commit
main had when issue 15's speed round started). The ref is checked out with
``git worktree add --detach`` into a temporary folder and removed afterwards;
both trees run in the same venv through :mod:`benchmarks.tree_runner`, one
subprocess per measurement with ``PYTHONPATH`` set to the tree, so their
imports never mix.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "benchmarks" / "tree_runner.py"
DEFAULT_BASELINE = "1ae54d5"


class Unavailable(Exception):
    """The baseline cannot be measured (no git, unknown ref, worktree failed): the message says why."""


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"git is not available ({exc})") from None
    if out.returncode != 0:
        raise Unavailable(f"`git {' '.join(args)}` failed: {(out.stderr or out.stdout).strip().splitlines()[-1:]}")
    return out.stdout.strip()


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[tuple[Path, str]]:
    """(path, full commit hash) of ``ref`` checked out in a temporary worktree; removed on exit."""
    commit = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    tmp = Path(tempfile.mkdtemp(prefix="dse-baseline-"))
    path = tmp / "tree"
    _git("worktree", "add", "--detach", "--quiet", str(path), commit)
    try:
        yield path, commit
    finally:
        try:
            _git("worktree", "remove", "--force", str(path))
        except Unavailable:
            pass
        shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.suppress(Unavailable):
            _git("worktree", "prune")


def run_in(tree: Path, args: list[str], timeout_s: float = 900) -> dict:
    """Run :mod:`benchmarks.tree_runner` on ``tree`` in a subprocess; its RESULT line as a dict.

    Raises RuntimeError with the runner's last error line when it fails, or
    when the project's packages did not come from ``tree``.
    """
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, str(RUNNER), str(tree), *args], capture_output=True, text=True,
                          env=env, cwd=str(tree), timeout=timeout_s)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{' '.join(args[:3])} on {tree}: {err}")
    out = json.loads(lines[-1][len("RESULT "):])
    wrong = {k: v for k, v in out.get("imported_from", {}).items() if Path(v) != tree.resolve()}
    if wrong:
        raise RuntimeError(f"imports did not come from {tree}: {wrong}")
    return out

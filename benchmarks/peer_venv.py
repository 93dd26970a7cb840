"""A peer tool's own virtual environment: create it or reuse it, pip-install pinned packages.

Peers are never project dependencies: each lives in a git-ignored venv under
``benchmarks/.peers/``. A stamp file in the venv records what was installed,
when, and how long it took, so a reused venv still reports its install time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

STAMP = ".dse-peer.json"
_VERSIONS = ("import importlib.metadata as m, json; "
             "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))")


@dataclass
class PeerEnv:
    path: Path
    requirements: list[str]
    reused: bool = False
    install_s: float = 0.0  # pip install time when the venv was created
    created: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def tail(text: str, n: int = 3) -> str:
    """The gist of a failed tool's output (each line cut to 200 characters): pip's ERROR lines, a
    Python traceback's exception line, else the last ``n`` lines."""
    keep = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("WARNING: Location")]
    errors = [ln for ln in keep if ln.startswith("ERROR")]
    if not errors and "Traceback (most recent call last)" in text:
        errors = keep[-1:]
    return " / ".join(ln if len(ln) <= 200 else ln[:197] + "..." for ln in (errors or keep)[-n:])


def ensure(path: Path, requirements: list[str], timeout_s: float = 600) -> PeerEnv:
    """Reuse ``path`` if its stamp lists exactly ``requirements``; otherwise (re)create it."""
    env = PeerEnv(path, list(requirements))
    stamp = path / STAMP
    if env.python.exists() and stamp.exists():
        try:
            old = json.loads(stamp.read_text())
        except ValueError:
            old = {}
        if old.get("requirements") == env.requirements:
            env.reused = True
            env.install_s, env.created, env.versions = old["install_s"], old["created"], old["versions"]
            return env
    try:
        if path.exists():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, text=True,
                       timeout=120)
        subprocess.run([str(env.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *env.requirements], check=True, capture_output=True, text=True, timeout=timeout_s)
        env.install_s = time.perf_counter() - t0
        out = subprocess.run([str(env.python), "-c", _VERSIONS], check=True, capture_output=True, text=True)
        env.versions = json.loads(out.stdout)
    except subprocess.CalledProcessError as exc:
        env.error = f"`{' '.join(map(str, exc.cmd[:4]))} ...` failed (exit {exc.returncode}): {tail(exc.stderr)}"
        return env
    except subprocess.TimeoutExpired as exc:
        env.error = f"`{' '.join(map(str, exc.cmd[:4]))} ...` did not finish within {exc.timeout:.0f} s"
        return env
    except OSError as exc:
        env.error = f"cannot create the venv in {path}: {exc}"
        return env
    env.created = time.strftime("%Y-%m-%d %H:%M")
    stamp.write_text(json.dumps({"requirements": env.requirements, "install_s": env.install_s,
                                 "created": env.created, "versions": env.versions}, indent=1))
    return env

"""A throw-away PostgreSQL server on loopback for the distributed-study tests.

Uses the server binaries of the machine (Debian's ``postgresql`` package;
``.ci/run`` installs it when missing). As root, the server runs as the
``postgres`` system user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return cands[-1] if cands else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self) -> None:
        self.initdb, self.pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
        if not (self.initdb and self.pg_ctl):
            raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
        self.root = Path(tempfile.mkdtemp(prefix="dse-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_user = "postgres" if os.geteuid() == 0 else None

    def _run(self, *cmd: str) -> None:
        if self.as_user:
            cmd = ("runuser", "-u", self.as_user, "--", *cmd)
        subprocess.run(cmd, check=True, capture_output=True, text=True)

    def start(self) -> str:
        if self.as_user:
            shutil.chown(self.root, self.as_user)
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "dse", "--no-sync")
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50"
        self._run(self.pg_ctl, "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "start")
        self._run(find_bin("createdb") or "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "dse", "dse")
        return f"postgresql://dse@127.0.0.1:{self.port}/dse"

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass
        time.sleep(0.2)
        shutil.rmtree(self.root, ignore_errors=True)

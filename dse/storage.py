"""Where a study lives: Optuna storages from the study's ``storage`` key.

* default (no key): Optuna's journal file ``results/<name>/study.journal``,
  safe for several processes on one machine and ~5x faster than SQLite
  here (``../shared/notes/optuna5.md``);
* ``journal:PATH`` or a path ending in ``.journal``/``.log``: a journal file;
* ``sqlite:///PATH``, ``postgresql://...``, ``mysql://...``: an RDB storage,
  with heartbeats so that a killed worker's trial is failed and retried.
"""

from __future__ import annotations

import random
import time
import warnings
from pathlib import Path

import optuna
from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.storages.journal import JournalFileBackend, JournalStorage

from workloads.errors import UserError

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


def open_storage(url: str | None, out_dir: Path, heartbeat: bool = True,
                 heartbeat_interval_s: int = HEARTBEAT_INTERVAL_S,
                 grace_period_s: int = GRACE_PERIOD_S) -> optuna.storages.BaseStorage:
    """The Optuna storage for a study's ``storage`` key (see module doc)."""
    if is_journal(url):
        path = Path(url.removeprefix("journal:")) if url else out_dir / "study.journal"
        path.parent.mkdir(parents=True, exist_ok=True)
        return JournalStorage(JournalFileBackend(str(path)))
    if url.startswith(("sqlite://", "postgresql", "mysql")):
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
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
    raise UserError(
        f"storage '{url}': not understood; allowed: journal:PATH, PATH.journal, sqlite:///PATH, "
        "postgresql://..., mysql://..."
    )


def has_heartbeat(storage: optuna.storages.BaseStorage) -> bool:
    """True for storages with heartbeats on (Optuna wraps RDBStorage in a cache, so no isinstance)."""
    interval = getattr(storage, "get_heartbeat_interval", None)
    return interval is not None and interval() is not None

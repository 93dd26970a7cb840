"""Optuna trials per second of real studies (sampler x storage), as `dse run` runs them."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dse import config, study as study_mod


@dataclass
class TrialRate:
    study: str
    sampler: str
    storage: str
    batch_size: int
    n_jobs: int
    trials: int
    seconds: float

    @property
    def per_s(self) -> float:
        return self.trials / self.seconds


def measure(study_file: str | Path, sampler: str, n_trials: int, batch_size: int = 1, n_jobs: int = 1,
            storage: str = "journal") -> TrialRate:
    tmp = Path(tempfile.mkdtemp(prefix="dse-bench-"))
    try:
        ov = {"sampler": {"name": sampler, "seed": 0}, "n_trials": n_trials, "batch_size": batch_size,
              "n_jobs": n_jobs, "results_dir": str(tmp), "timeout": None}
        if storage == "sqlite":
            ov["storage"] = f"sqlite:///{tmp}/study.db"
        st = config.load(study_file, ov)
        t0 = time.perf_counter()
        study_mod.run(st, ov, progress=False)
        el = time.perf_counter() - t0
        return TrialRate(st.name, sampler, storage, batch_size, n_jobs, n_trials, el)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

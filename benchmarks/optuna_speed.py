"""Optuna trials per second of real studies (sampler x storage), as `dse run` runs them."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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


def bare_trial(seed: int = 0) -> Callable[[], None]:
    """One trial of Optuna's own cost, as a function to call: the yardstick of issue 15.

    An in-memory study with two minimised objectives and the RandomSampler;
    each call asks six parameters (two ints, one of them log-scaled, two
    floats, one log-scaled, two categoricals) and tells two objective values
    computed from them by two arithmetic expressions. 20 warm-up trials
    (imports, first-trial set-up) run before it is returned.
    """
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    st = optuna.create_study(directions=["minimize", "minimize"], sampler=optuna.samplers.RandomSampler(seed=seed))

    def one() -> None:
        t = st.ask()
        cores = t.suggest_int("cores", 1, 64, log=True)
        rows = t.suggest_int("rows", 4, 128, step=4)
        clock = t.suggest_float("clock_mhz", 100.0, 1000.0)
        kb = t.suggest_float("buffer_kb", 0.5, 1024.0, log=True)
        bits = t.suggest_categorical("bits", [8, 16, 32])
        order = t.suggest_categorical("order", ["A", "B", "pairs"])
        st.tell(t, [bits / (cores * rows * clock), cores * rows + kb * (2 if order == "A" else 1)])

    for _ in range(20):
        one()
    return one


def bare_trial_s(n_trials: int = 500, seed: int = 0) -> float:
    """Seconds of Optuna's own cost per trial (:func:`bare_trial`), mean over ``n_trials`` in a row."""
    one = bare_trial(seed)
    t0 = time.perf_counter()
    for _ in range(n_trials):
        one()
    return (time.perf_counter() - t0) / n_trials

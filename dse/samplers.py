"""Samplers: the factory for a study's ``sampler`` key, parameter suggestion, and the default.

:func:`make_sampler` builds the Optuna sampler a study names; :func:`suggest`
samples a trial's searched parameters. The default sampler of a study that
names none comes from measured search quality:

`make bench` (benchmarks/search_quality.py, docs/benchmarks.md) ran every
sampler with 5 seeds on one enumerable space per model (640-770 grid
points) and compared the hypervolume reached after 1, 2 and 5 % of the grid
with the exact Pareto front. Measured on 2026-11-21 (2 cores), best at 5 %:
GP on emaxv, emaxvr, imax, rena and atomswitch; TPE on multicore.

So for studies of that size -- a finite grid of at most 50,000 points and a
budget of at most 5 % of it and at most 100 trials, where GP's ~0.5 s per
trial is affordable -- the default is the model's measured best (GP needs
PyTorch, the `gp` extra; without it TPE, the runner-up). Anything larger
keeps Optuna's own default, TPE.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import optuna

from workloads.errors import UserError

if TYPE_CHECKING:
    from .config import Dim, Study

BEST_SMALL_BUDGET = {
    "emaxv": "gp", "emaxvr": "gp", "imax": "gp", "rena": "gp", "atomswitch": "gp", "multicore": "tpe",
}
MAX_GRID = 50_000
MAX_FRACTION = 0.05
MAX_TRIALS_GP = 100


def default_sampler(arch: str, grid_size: int | None, n_trials: int | None, batch_size: int = 1) -> tuple[str, str]:
    """(sampler, why) for a study without an explicit sampler."""
    small = (grid_size is not None and grid_size <= MAX_GRID and n_trials is not None
             and n_trials <= MAX_FRACTION * grid_size and n_trials <= MAX_TRIALS_GP)
    if not small:
        return "tpe", "Optuna's default (the study is larger than the measured small-budget regime)"
    best = BEST_SMALL_BUDGET.get(arch, "tpe")
    if best == "gp" and find_spec("torch") is None:
        return "tpe", "GP measured best for this size but PyTorch is not installed (pip install -e '.[gp]')"
    if best == "gp" and batch_size > 1:
        return "tpe", "GP measured best for this size but it takes no batches (batch_size > 1)"
    return best, f"measured best for {arch} at <= 5 % of a small grid (docs/benchmarks.md)"


def make_sampler(study: Study, worker: int = 0) -> optuna.samplers.BaseSampler:
    """The study's sampler; worker ``i`` gets seed + i so workers do not repeat each other."""
    seed = None if study.seed is None else study.seed + worker
    opts = dict(study.sampler_options)
    name = study.sampler
    try:
        if name == "tpe":
            return optuna.samplers.TPESampler(seed=seed, **opts)
        if name == "nsga2":
            return optuna.samplers.NSGAIISampler(seed=seed, **opts)
        if name == "nsga3":
            return optuna.samplers.NSGAIIISampler(seed=seed, **opts)
        if name in ("random", "grid"):
            return optuna.samplers.RandomSampler(seed=seed, **opts)
        if name == "gp":
            # one thread per process (workers run side by side): set before torch starts its pool, and again
            # on the pool in case torch was imported earlier
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            try:
                import torch  # GPSampler needs it
            except ImportError:
                raise UserError(
                    f"{study.path}: sampler: 'gp' needs PyTorch; install it with "
                    "`.venv/bin/pip install -e '.[gp]'` (CPU wheel torch==2.13.0)"
                ) from None
            threads = os.environ["OMP_NUM_THREADS"]
            torch.set_num_threads(int(threads) if threads.isdigit() and int(threads) > 0 else 1)
            opts.setdefault("deterministic_objective", True)
            return optuna.samplers.GPSampler(seed=seed, **opts)
    except TypeError as exc:
        raise UserError(f"{study.path}: sampler.options: {exc}") from None
    raise UserError(f"{study.path}: sampler: unknown '{name}'")


def suggest(trial: optuna.Trial, dims: tuple[Dim, ...]) -> dict[str, Any]:
    """Sample the searched parameters of one trial."""
    out: dict[str, Any] = {}
    for d in dims:
        if d.kind == "int":
            out[d.name] = trial.suggest_int(d.name, int(d.low), int(d.high), step=int(d.step or 1), log=d.log)
        elif d.kind == "float":
            out[d.name] = trial.suggest_float(d.name, d.low, d.high, step=d.step, log=d.log)
        elif d.kind == "choice":
            out[d.name] = trial.suggest_categorical(d.name, list(d.choices))
    return out

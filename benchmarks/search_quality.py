"""Search quality: how close each sampler gets to the exact Pareto front.

For each model, a search space small enough to enumerate
(``benchmarks/spaces/<arch>.yaml``, every dimension on a grid the samplers
see exactly: int/float ranges with a step, or choices):

1. the exact front: every grid point evaluated in one batch call;
2. each sampler (tpe, nsga2, nsga3, gp, random) x 5 seeds runs an in-memory
   Optuna study with the same ask/tell loop, constraints and feasibility as
   ``dse run`` (batch_size 1, so each sampler sees every result before its
   next suggestion), for 5 % of the grid size; the first 1 % and 2 % of a
   run are exactly what a run with that budget would have done (no sampler
   here depends on the budget), so one run gives all three budgets;
3. hypervolume ratio = HV(feasible points found so far) / HV(exact front),
   both in the space of log10(objective) (time, area, fps... span orders of
   magnitude; an objective with values <= 0 stays linear), normalised by the
   exact front's ideal point and the worst feasible value of each objective,
   the reference point sitting 10 % beyond it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dse import config
from dse.config import Study
from dse.objective import evaluate_columns, evaluate_rows
from dse.results import pareto_mask
from dse.sweep import Grid

SAMPLERS = ("tpe", "nsga2", "nsga3", "gp", "random")
SEEDS = (0, 1, 2, 3, 4)
BUDGETS = (0.01, 0.02, 0.05)
SPACES = Path(__file__).resolve().parent / "spaces"


@dataclass
class Front:
    ideal: np.ndarray
    ref: np.ndarray
    sign: np.ndarray  # +1 minimise, -1 maximise
    log: np.ndarray  # objectives compared in log10
    hv: float
    grid_size: int
    n_feasible: int
    n_front: int
    seconds: float

    def normalise(self, values: np.ndarray) -> np.ndarray:
        return (_transform(values, self.sign, self.log) - self.ideal) / (self.ref - self.ideal)


def _transform(values: np.ndarray, sign: np.ndarray, log: np.ndarray) -> np.ndarray:
    """To minimised coordinates: log10 where chosen, sign flipped for maximised objectives."""
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(log, np.log10(np.where(log, values, 1.0)), values)
    return v * sign


def hypervolume(points: np.ndarray, ref: np.ndarray) -> float:
    """Hypervolume dominated by ``points`` (minimised) up to ``ref``."""
    pts = points[np.all(points < ref, axis=1)]
    if len(pts) == 0:
        return 0.0
    if pts.shape[1] == 2:
        pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
        hv, best = 0.0, ref[1]
        for x, y in pts:
            if y < best:
                hv += (ref[0] - x) * (best - y)
                best = y
        return float(hv)
    from optuna._hypervolume import compute_hypervolume  # no public function in Optuna 5

    return float(compute_hypervolume(pts, ref, assume_pareto=False))


def _feasible(ev) -> np.ndarray:
    return np.all(ev.violations <= 0, axis=1)


def exact_front(study: Study) -> Front:
    t0 = time.perf_counter()
    grid = Grid.of(study)
    ev = evaluate_columns(study, grid.columns(np.arange(grid.size)))
    ok = _feasible(ev) & np.isfinite(ev.values).all(axis=1)
    sign = np.array([1.0 if o.direction == "minimize" else -1.0 for o in study.objectives])
    log = np.all(ev.values[ok] > 0, axis=0)
    v = _transform(ev.values[ok], sign, log)
    ideal = v.min(axis=0)
    worst = v.max(axis=0)
    ref = worst + 0.1 * (worst - ideal)
    front = pareto_mask(v, ["minimize"] * v.shape[1])
    f = Front(ideal, ref, sign, log, 0.0, grid.size, int(ok.sum()), int(front.sum()), time.perf_counter() - t0)
    f.hv = hypervolume(f.normalise(ev.values[ok]), np.ones(v.shape[1]))
    return f


def _sampler(name: str, seed: int, n_trials: int):
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "tpe-mv":  # not in SAMPLERS: benchmarks/spikes/tpe_multivariate.py
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=population(n_trials))
    if name == "nsga3":
        return optuna.samplers.NSGAIIISampler(seed=seed, population_size=population(n_trials))
    if name == "gp":
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        return optuna.samplers.GPSampler(seed=seed, deterministic_objective=True)
    return optuna.samplers.RandomSampler(seed=seed)


def population(n_trials: int) -> int:
    """NSGA population for a budget: about 5 generations, 10 to 50 individuals."""
    return int(min(50, max(10, n_trials // 5)))


def run_sampler(study_file: str, sampler: str, seed: int, n_trials: int) -> list[tuple[list[float], bool]]:
    """One in-memory study; returns (objective values, feasible) per trial in order."""
    import optuna

    from dse.samplers import suggest

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = config.load(study_file)
    ost = optuna.create_study(directions=[o.direction for o in study.objectives],
                              sampler=_sampler(sampler, seed, n_trials))
    keys = [c.key for c in study.constraints] + ["feasible"]
    out = []
    for _ in range(n_trials):
        trial = ost.ask()
        ev = evaluate_rows(study, [suggest(trial, study.searched)])
        for j, key in enumerate(keys):
            trial.set_constraint(key, float(ev.violations[0, j]))
        ost.tell(trial, [float(x) for x in ev.values[0]])
        out.append(([float(x) for x in ev.values[0]], bool(_feasible(ev)[0])))
    return out


def hv_curve(trials: list[tuple[list[float], bool]], front: Front) -> np.ndarray:
    """Hypervolume ratio after each trial."""
    dim = len(front.ideal)
    found = np.empty((0, dim))
    curve = np.zeros(len(trials))
    ones = np.ones(dim)
    for i, (vals, ok) in enumerate(trials):
        v = np.array(vals)
        if ok and np.isfinite(v).all():
            found = np.vstack([found, front.normalise(v[None, :])])
            keep = pareto_mask(found, ["minimize"] * dim)
            found = found[keep]
        curve[i] = hypervolume(found, ones) / front.hv if front.hv > 0 else 0.0
    return curve


@dataclass
class ModelResult:
    arch: str
    study_file: str
    front: Front
    curves: dict[str, np.ndarray]  # sampler -> (seeds, n_trials)
    seconds: dict[str, float]

    def budgets(self) -> list[int]:
        return [max(1, int(round(b * self.front.grid_size))) for b in BUDGETS]

    def at(self, sampler: str, n: int) -> np.ndarray:
        return self.curves[sampler][:, n - 1]

    def best(self) -> str:
        n = self.budgets()[-1]
        return max(self.curves, key=lambda s: (self.at(s, n).mean(), -self.seconds[s]))


def measure(arch: str, n_jobs: int = 2, samplers=SAMPLERS, seeds=SEEDS) -> ModelResult:
    from joblib import Parallel, delayed

    study_file = str(SPACES / f"{arch}.yaml")
    study = config.load(study_file)
    front = exact_front(study)
    n = max(1, int(round(BUDGETS[-1] * front.grid_size)))
    jobs = [(s, seed) for s in samplers for seed in seeds]
    t0 = {}
    results = Parallel(n_jobs=n_jobs)(delayed(_timed)(study_file, s, seed, n) for s, seed in jobs)
    curves: dict[str, list[np.ndarray]] = {s: [] for s in samplers}
    for (s, _seed), (trials, secs) in zip(jobs, results):
        curves[s].append(hv_curve(trials, front))
        t0[s] = t0.get(s, 0.0) + secs
    return ModelResult(arch, study_file, front, {s: np.array(c) for s, c in curves.items()}, t0)


def _timed(study_file: str, sampler: str, seed: int, n: int):
    t = time.perf_counter()
    trials = run_sampler(study_file, sampler, seed, n)
    return trials, time.perf_counter() - t


def plot_curves(results: list[ModelResult], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(results))
    rows = -(-len(results) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    for ax, r in zip(axes.flat, results):
        x = np.arange(1, r.curves[next(iter(r.curves))].shape[1] + 1)
        for s, c in r.curves.items():
            m, sd = c.mean(axis=0), c.std(axis=0)
            ax.plot(x, m, label=s)
            ax.fill_between(x, m - sd, m + sd, alpha=0.15)
        for b in r.budgets():
            ax.axvline(b, color="0.8", lw=0.8, zorder=0)
        ax.set_title(f"{r.arch} ({r.front.grid_size} points)", fontsize=9)
        ax.set_xlabel("trials")
        ax.set_ylabel("hypervolume / exact")
        ax.set_ylim(0, 1.05)
    for ax in list(axes.flat)[len(results):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)

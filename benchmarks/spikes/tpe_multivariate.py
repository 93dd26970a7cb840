"""Spike (issue 15, docs/studies.md): Optuna's multivariate TPE against its default (univariate) TPE --
search quality (hypervolume ratio against the exact front, as ``benchmarks/search_quality.py`` measures it) and
the sampler's CPU time, on the six enumerable spaces of ``benchmarks/spaces`` with a longer budget (25 % of the
grid), 5 seeds; and with ``--long`` on two real studies too large to enumerate (``studies/quickstart.yaml``,
``studies/emaxvr_dse_vgg16.yaml``), 300 trials, where the reference front is the union of every run's feasible
points. Run: ``.venv/bin/python -m benchmarks.spikes.tpe_multivariate [--budget 0.25] [--seeds 5] [--long]``."""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks import search_quality as sq
from dse import config

ARCHS = ("emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore")
SAMPLERS = ("tpe", "tpe-mv")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=0.25)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--long", action="store_true")
    o = ap.parse_args()
    if o.long:
        return long_studies(o.seeds)
    marks = (0.05, 0.1, o.budget)
    print("| model | grid | sampler | " + " | ".join(f"{m:.0%} of the grid" for m in marks) + " | CPU s per run |")
    print("|---|---|---|" + "---|" * len(marks) + "---|")
    for arch in ARCHS:
        study_file = str(sq.SPACES / f"{arch}.yaml")
        front = sq.exact_front(config.load(study_file))
        n = max(1, int(round(o.budget * front.grid_size)))
        at = [max(1, int(round(m * front.grid_size))) for m in marks]
        for sampler in SAMPLERS:
            curves, cpu = [], []
            for seed in range(o.seeds):
                t = time.process_time()
                trials = sq.run_sampler(study_file, sampler, seed, n)
                cpu.append(time.process_time() - t)
                curves.append(sq.hv_curve(trials, front))
            c = np.array(curves)
            cells = " | ".join(f"{c[:, k - 1].mean():.3f} ± {c[:, k - 1].std():.3f} ({k})" for k in at)
            print(f"| {arch} | {front.grid_size} | {sampler} | {cells} | {np.mean(cpu):.1f} |", flush=True)


def long_studies(seeds: int, n: int = 300, marks: tuple[int, ...] = (50, 100, 300)) -> None:
    """Hypervolume ratio against the union of all runs' feasible points (each study), and CPU s per run."""
    print("| study | sampler | " + " | ".join(f"{m} trials" for m in marks) + " | CPU s per run |")
    print("|---|---|" + "---|" * len(marks) + "---|")
    root = sq.SPACES.parent.parent / "studies"
    for name in ("quickstart", "emaxvr_dse_vgg16"):
        study_file = str(root / f"{name}.yaml")
        study = config.load(study_file)
        runs = {s: [] for s in SAMPLERS}
        cpu = {s: [] for s in SAMPLERS}
        for sampler in SAMPLERS:
            for seed in range(seeds):
                t = time.process_time()
                runs[sampler].append(sq.run_sampler(study_file, sampler, seed, n))
                cpu[sampler].append(time.process_time() - t)
        ok = np.array([v for rs in runs.values() for r in rs for v, f in r if f and np.isfinite(v).all()])
        sign = np.array([1.0 if o.direction == "minimize" else -1.0 for o in study.objectives])
        log = np.all(ok > 0, axis=0)
        v = sq._transform(ok, sign, log)
        ideal, worst = v.min(axis=0), v.max(axis=0)
        front = sq.Front(ideal, worst + 0.1 * (worst - ideal), sign, log, 0.0, 0, len(ok), 0, 0.0)
        front.hv = sq.hypervolume(front.normalise(ok), np.ones(v.shape[1]))
        for sampler in SAMPLERS:
            c = np.array([sq.hv_curve(r, front) for r in runs[sampler]])
            cells = " | ".join(f"{c[:, k - 1].mean():.3f} ± {c[:, k - 1].std():.3f}" for k in marks)
            print(f"| {name} | {sampler} | {cells} | {np.mean(cpu[sampler]):.1f} |", flush=True)


if __name__ == "__main__":
    main()

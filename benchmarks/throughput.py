"""Model evaluation throughput: design-point x layer evaluations per second.

Scalar = ``model.evaluate`` one point at a time (the path of a study with
batch_size 1); batched = one ``evaluate_batch`` call over many random points
of the model's declared space. Both on the same random points, same run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from archmodels import get_model
from workloads import load_workload


@dataclass
class Throughput:
    arch: str
    workload: str
    layers: int
    scalar_points_per_s: float
    batch_points_per_s: float
    batch_size: int
    one_point_s: float

    @property
    def scalar_evals_per_s(self) -> float:  # design point x layer
        return self.scalar_points_per_s * self.layers

    @property
    def batch_evals_per_s(self) -> float:
        return self.batch_points_per_s * self.layers

    @property
    def ratio(self) -> float:
        return self.batch_points_per_s / self.scalar_points_per_s


def measure(arch: str, workload: str, batch: int = 4096, scalar_s: float = 2.0, seed: int = 0,
            fixed: dict | None = None) -> Throughput:
    model = get_model(arch)
    wl = load_workload(workload)
    rows = model.params.random_rows(batch, np.random.default_rng(seed), fixed)
    pts = model.params.points(rows)
    model.evaluate_batch(wl, model.params.points(rows[:8]))  # warm caches, imports

    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < scalar_s and n < len(rows):
        model.evaluate(wl, **rows[n])
        n += 1
    scalar = n / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    reps = 0
    while True:
        model.evaluate_batch(wl, pts)
        reps += 1
        el = time.perf_counter() - t0
        if el > 1.0:
            break
    batched = reps * batch / el

    t0 = time.perf_counter()
    model.evaluate(wl, **model.params.defaults())
    one = time.perf_counter() - t0
    return Throughput(arch, workload, len(wl.layers), scalar, batched, batch, one)

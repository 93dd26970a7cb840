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


PROBE = 128


def adaptive_batch(arch: str, workload: str, quick: bool, budget_s: float = 1.0) -> tuple[int, float]:
    """(batch size, feasible share): the batch one call evaluates in about ``budget_s``.

    A probe call on ``PROBE`` random points (its own seed) estimates the
    batched rate; the batch is that rate times ``budget_s``, between
    ``PROBE`` and 4,096 points (1,024 quick), so models whose batched path is
    slow do not take minutes per call.
    """
    model, wl = get_model(arch), load_workload(workload)
    pts = model.params.points(model.params.random_rows(PROBE, np.random.default_rng(1)))
    t0 = time.perf_counter()
    res = model.evaluate_batch(wl, pts)
    rate = PROBE / (time.perf_counter() - t0)
    return int(np.clip(rate * budget_s, PROBE, 1024 if quick else 4096)), float(res.feasible.mean())


def measure_adaptive(arch: str, workload: str, quick: bool, budget_s: float = 1.0) -> tuple[Throughput, float]:
    """:func:`measure` with :func:`adaptive_batch`; also returns the feasible share."""
    batch, feasible = adaptive_batch(arch, workload, quick, budget_s)
    return measure(arch, workload, batch=batch, scalar_s=0.5 if quick else 2.0), feasible


def measure_grid(study_file: str, n_points: int = 4096, seed: int = 0) -> tuple[float, int, int]:
    """Batched rate on points of a study's grid (structures repeat, as in a real study).

    Returns (design-point x layer evaluations/s of one cold call, points,
    distinct grid points among them). "Cold": the call includes all
    per-structure work for the structures it meets; model caches are not
    cleared between calls of the process, so measure each space once.
    """
    from dse import config
    from dse.objective import evaluate_columns
    from dse.sweep import Grid

    st = config.load(study_file)
    grid = Grid.of(st)
    idx = np.random.default_rng(seed).integers(0, grid.size, n_points)
    cols = grid.columns(idx)
    layers = sum(len(load_workload(w).layers) for w in st.workloads)
    t0 = time.perf_counter()
    evaluate_columns(st, cols)
    el = time.perf_counter() - t0
    return n_points * layers / el, n_points, len(np.unique(idx))


def measure(arch: str, workload: str, batch: int = 4096, scalar_s: float = 2.0, seed: int = 0,
            fixed: dict | None = None, max_batches: int = 8) -> Throughput:
    """Scalar and batched rates on random points; every batched call gets fresh points.

    Up to ``max_batches`` batches are drawn before timing; batched calls
    repeat over them (never the same points twice) until a second has
    passed, so per-structure caches of a model cannot serve a repeated
    batch. The scalar loop walks through the first batch's points.
    """
    model = get_model(arch)
    wl = load_workload(workload)
    rng = np.random.default_rng(seed)
    batches_rows = [model.params.random_rows(batch, rng, fixed) for _ in range(max_batches)]
    batches = [model.params.points(rows) for rows in batches_rows]
    rows = batches_rows[0]
    warm = model.params.random_rows(8, np.random.default_rng(seed + 1000), fixed)
    model.evaluate_batch(wl, model.params.points(warm))  # imports, layer-level caches

    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < scalar_s and n < len(rows):
        model.evaluate(wl, **rows[n])
        n += 1
    scalar = n / (time.perf_counter() - t0)

    # the scalar loop has seen batch 0's points: time batched calls from batch 1 on
    t0 = time.perf_counter()
    done = 0
    for pts in batches[1:]:
        model.evaluate_batch(wl, pts)
        done += batch
        if time.perf_counter() - t0 > 1.0:
            break
    batched = done / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    model.evaluate(wl, **model.params.defaults())
    one = time.perf_counter() - t0
    return Throughput(arch, workload, len(wl.layers), scalar, batched, batch, one)

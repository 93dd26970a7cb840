"""Model evaluation throughput: design-point x layer evaluations per second.

Scalar = ``model.evaluate`` one point at a time; batched = one
``evaluate_batch`` call over many random points of the model's declared
space. Both on the same random points, same run. :func:`measure_speed` adds
the study paths and yardsticks of issue 15: one point through
``dse.objective.evaluate_rows`` (what ``dse run`` with batch_size 1 does),
the bare numpy roofline (:mod:`benchmarks.roofline`) on the same batch and
layers, and Optuna's own trial cost (:func:`benchmarks.optuna_speed.bare_trial`, interleaved with the one
point's rows).
"""

from __future__ import annotations

import gc
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from archmodels import get_model
from archmodels.base import Model
from benchmarks import roofline
from workloads import Workload, load_workload


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


#: points per call of :func:`batch_ladder`
LADDER = (1024, 4096, 16384)


def batch_ladder(arch: str, workload: str, sizes: tuple[int, ...] = LADDER, min_s: float = 0.3, min_calls: int = 3,
                 max_call_s: float = 1.0, seed: int = 5) -> dict[int, float]:
    """Batched evals/s by points per call: for each size, calls on fresh random points (none repeated) until
    ``min_s`` seconds and ``min_calls`` calls have passed, after one untimed call of that size (its heap growth).
    A size whose first call takes longer than ``max_call_s`` ends the ladder (the slow models). A model's fixed
    cost per call (numpy's dispatch, Python) weighs less as the batch grows; its per-point arrays leave the
    caches as it grows: the ladder shows which wins where."""
    model, wl = get_model(arch), load_workload(workload)
    rng = np.random.default_rng(seed)
    out: dict[int, float] = {}
    for n in sizes:
        t0 = time.perf_counter()
        model.evaluate_batch(wl, model.params.points(model.params.random_rows(n, rng)))
        if time.perf_counter() - t0 > max_call_s:
            break
        c = timed_calls(model, wl, n, rng, min_s, min_calls)
        out[n] = c.points * len(wl.layers) / c.wall_s
    return out


@dataclass
class TimedCalls:
    """:func:`timed_calls`' answer: points evaluated, their calls' wall-clock and CPU time, the calls, and each
    call's feasible share."""

    points: int
    wall_s: float
    cpu_s: float
    calls: int
    feasible_shares: list[float]


def timed_calls(model: Model, wl: Workload, n: int, rng: np.random.Generator, min_s: float,
                min_calls: int = 1) -> TimedCalls:
    """``evaluate_batch`` calls of ``n`` fresh random points (drawn from ``rng``, none repeated, the drawing not
    timed) until ``min_s`` seconds of calls and ``min_calls`` calls have passed, however short each call is."""
    c = TimedCalls(0, 0.0, 0.0, 0, [])
    while c.wall_s < min_s or c.calls < min_calls:
        pts = model.params.points(model.params.random_rows(n, rng))
        c0, t0 = time.process_time(), time.perf_counter()
        res = model.evaluate_batch(wl, pts)
        c.wall_s += time.perf_counter() - t0
        c.cpu_s += time.process_time() - c0
        c.feasible_shares.append(float(np.mean(res.feasible)))
        c.points, c.calls = c.points + n, c.calls + 1
    return c


@dataclass
class Speed:
    """Issue 15's measurements of one model on one workload, all from the same run (seconds)."""

    arch: str
    workload: str
    layers: int
    batch: int  # points in each batched call
    feasible: float  # feasible share of the batched points
    batched_point_s: float  # evaluate_batch time per point
    roofline_batched_point_s: float  # the numpy roofline on the same batch size and layers, per point
    one_random_s: float  # evaluate_rows(study, [row]) on distinct random rows, mean
    one_default_s: float  # evaluate_rows(study, [defaults]) repeated (warm), median
    evaluate_dict_s: float  # model.evaluate(defaults) -> contract dict (warm), median
    roofline_one_s: float  # the numpy roofline on one point, median
    stacked_batched_point_s: float  # roofline.evaluate_stacked (layers x points arrays), per point
    stacked_one_s: float  # roofline.evaluate_stacked on one point, median
    trial_s: float  # Optuna's own trial (ask six, tell two, RandomSampler, in memory)
    gc_between_s: float = 0.0  # full garbage collections run untimed before each pair of blocks, total
    gc_between_n: int = 0  # how many
    first_call_point_s: float = float("nan")  # the process's first evaluate_batch call of ``batch`` points, per point
    batched_calls: int = 0  # the timed batched calls (after the first)
    batched_cpu_point_s: float = float("nan")  # the same calls' CPU time (process_time) per point
    ladder: dict[str, float] | None = None  # batched evals/s by points per call (batch_ladder; keys as text: JSON)

    @property
    def batched_evals_per_s(self) -> float:
        return self.layers / self.batched_point_s

    @property
    def roofline_evals_per_s(self) -> float:
        return self.layers / self.roofline_batched_point_s

    def columns(self) -> dict[str, str]:
        """The table cells, by column name (the order of :data:`BATCH_COLUMNS` then :data:`ONE_COLUMNS`)."""
        ms = lambda s: f"{s * 1e3:.3g} ms"  # noqa: E731
        return {
            "model": self.arch, "workload": f"`{self.workload}`", "layers": str(self.layers),
            "batch": f"{self.batch:,}", "calls": f"{self.batched_calls:,}", "feasible": f"{self.feasible:.0%}",
            "batched evals/s": f"{self.batched_evals_per_s:,.0f}",
            "CPU evals/s": f"{self.layers / self.batched_cpu_point_s:,.0f}",
            "first call evals/s": f"{self.layers / self.first_call_point_s:,.0f}",
            "roofline evals/s": f"{self.roofline_evals_per_s:,.0f}",
            "stacked roofline evals/s": f"{self.layers / self.stacked_batched_point_s:,.0f}",
            "batched / roofline": ratio_text(self.roofline_batched_point_s / self.batched_point_s),
            "batched point / Optuna trial": ratio_text(self.batched_point_s / self.trial_s),
            "Optuna trial": ms(self.trial_s),
            "one point (random)": ms(self.one_random_s),
            "one point (defaults, warm)": ms(self.one_default_s),
            "model.evaluate -> dict": ms(self.evaluate_dict_s),
            "roofline one point": ms(self.roofline_one_s),
            "stacked roofline one point": ms(self.stacked_one_s),
            "one point / roofline": ratio_text(self.one_random_s / self.roofline_one_s),
            "one point / Optuna trial": ratio_text(self.one_random_s / self.trial_s),
            "defaults / Optuna trial": ratio_text(self.one_default_s / self.trial_s),
        }


BATCH_COLUMNS = ("model", "workload", "layers", "batch", "calls", "feasible", "batched evals/s", "CPU evals/s",
                 "first call evals/s",
                 "roofline evals/s",
                 "stacked roofline evals/s", "batched / roofline", "batched point / Optuna trial")
ONE_COLUMNS = ("model", "Optuna trial", "one point (random)", "one point (defaults, warm)", "model.evaluate -> dict",
               "roofline one point", "stacked roofline one point", "one point / roofline", "one point / Optuna trial",
               "defaults / Optuna trial")


def ratio_text(x: float) -> str:
    """A ratio as '12x' / '1.30x' / '0.45x' / '1/250' (below 0.1 as a fraction, so small ratios stay readable)."""
    if not np.isfinite(x) or x <= 0:
        return "—"
    if x >= 1:
        return f"{x:,.0f}x" if x >= 10 else f"{x:.2f}x"
    return f"1/{1 / x:,.0f}" if x < 0.1 else f"{x:.2f}x"


def point_study(arch: str, workload: str, tmp: Path):
    """A one-workload study over the model's whole declared space (every parameter searched).

    Written as a study file and loaded by :func:`dse.config.load`, as
    ``dse run`` loads one; objectives time and energy. Its rows are whole
    parameter dicts from ``params.random_rows``.
    """
    import yaml

    from dse import config

    model = get_model(arch)
    space: dict = {}
    for p in model.params:
        if p.kind == "choice":
            space[p.name] = list(p.choices)
        elif p.kind == "bool":
            space[p.name] = [False, True]
        else:
            space[p.name] = {"low": p.low, "high": p.high}
    doc = {"name": f"bench_{arch}", "arch": arch, "workload": workload, "space": space,
           "objectives": ["total.time_s", "total.energy_j"], "n_trials": 1, "results_dir": str(tmp)}
    path = tmp / f"bench_{arch}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return config.load(path)


def _median_call_s(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure_speed(arch: str, workload: str, trial_s: float | None = None, quick: bool = False, seed: int = 0,
                  batch: int | None = None, ladder: bool = False) -> Speed:
    """Batched and one-point costs of ``arch`` on ``workload`` next to the roofline and Optuna's trial.

    Batched: :func:`adaptive_batch` sizes the batch (or ``batch``); the
    process's first call of that size is timed alone (``first_call_point_s``:
    the heap's growth and the per-structure caches), then calls on fresh
    random points repeat until a second of calls has passed (0.2 s quick),
    however many calls that takes: the batched rate. (Until 2026-11-27,
    session 7, at most 8 calls: ~35 ms of IMAX's, whose rate then moved
    0.56-0.76 M between runs with the VM's steal time.) One point (random): ``evaluate_rows(study, [row])`` over
    distinct random rows for about a second (0.2 s quick; at most 500), after
    one warm-up row. Optuna's own trial (:func:`benchmarks.optuna_speed.bare_trial`),
    unless ``trial_s`` is given: as many trials as rows, interleaved with
    them in blocks of 25 (10 quick), so that a slow moment of a shared
    machine weighs on both sides of the ratio alike; a full garbage
    collection runs, untimed, before each pair of blocks (``gc_between_s``).
    Without it one full collection (~30 ms: the whole heap, ~60 k tracked
    objects) fell inside the ~1 s of either side, wherever the collector's
    counters happened to stand, and moved the one-point ratio between ~0.8x
    and ~1.2x from one process to another. Only Optuna's trials leave
    objects behind for it (its storage: ~10 tracked objects a trial; a
    model's row ~0), so no side's own work is hidden by it; the young
    collections each side's allocations trigger stay inside its blocks.
    Defaults and ``model.evaluate``: the median of repeated warm calls. The
    rooflines (per layer and layers stacked) run on arrays of the same
    lengths: median of as many calls as the model's batched loop made
    (batched), of 200 calls (one point; 50 quick).
    """
    from dse.objective import evaluate_rows

    model, wl = get_model(arch), load_workload(workload)
    budget = 0.2 if quick else 1.0
    feasible = float("nan")
    if batch is None:
        batch, feasible = adaptive_batch(arch, workload, quick, budget)
    rng = np.random.default_rng(seed)
    warm = model.params.random_rows(8, np.random.default_rng(seed + 1000))
    model.evaluate_batch(wl, model.params.points(warm))  # imports, layer-level caches

    # the process's first call of the full batch size, timed alone: the heap grows to its peak (each new page
    # faulted in) and the per-structure caches fill (docs/profile/shared_paths.md, tenth round); a sweep worker
    # pays it once, on its first chunk
    pts = model.params.points(model.params.random_rows(batch, rng))
    t0 = time.perf_counter()
    res = model.evaluate_batch(wl, pts)
    first_call = time.perf_counter() - t0
    c = timed_calls(model, wl, batch, rng, budget)  # the calls after it, a whole second of them: the batched rate
    done, t_batch = c.points, c.wall_s
    if np.isnan(feasible):
        feasible = float(np.mean([float(np.mean(res.feasible)), *c.feasible_shares]))

    sizes = roofline.LayerSizes.of(list(wl.layers))
    big, one = roofline.random_params(batch, rng), roofline.random_params(1, rng)
    reps = max(5, round(done / batch))
    roof_batch, stacked_batch = (_median_call_s(lambda f=f: f(sizes, big), reps) / batch
                                 for f in (roofline.evaluate, roofline.evaluate_stacked))
    roof_one, stacked_one = (_median_call_s(lambda f=f: f(sizes, one), 50 if quick else 200)
                             for f in (roofline.evaluate, roofline.evaluate_stacked))

    with tempfile.TemporaryDirectory(prefix="dse-bench-") as tmp:
        st = point_study(arch, workload, Path(tmp))
        rows = model.params.random_rows(501 if not quick else 51, rng)
        evaluate_rows(st, [rows[0]])
        n, t_one, t_trials = 0, 0.0, 0.0
        trial = None
        if trial_s is None:
            from benchmarks.optuna_speed import bare_trial

            trial = bare_trial()
        block = 10 if quick else 25
        gc_s, gc_n = 0.0, 0
        while n < len(rows) - 1 and t_one <= budget:  # blocks of rows, each followed by as many Optuna trials
            chunk = rows[1 + n:1 + n + block]
            t0 = time.perf_counter()
            gc.collect()  # untimed: a full collection must not fall inside either side's block (see docstring)
            gc_s, gc_n = gc_s + time.perf_counter() - t0, gc_n + 1
            t0 = time.perf_counter()
            for row in chunk:
                evaluate_rows(st, [row])
            t_one += time.perf_counter() - t0
            n += len(chunk)
            if trial is not None:
                t0 = time.perf_counter()
                for _ in chunk:
                    trial()
                t_trials += time.perf_counter() - t0
        if trial is not None:
            trial_s = t_trials / n
        defaults = model.params.defaults()
        evaluate_rows(st, [defaults])
        one_default = _median_call_s(lambda: evaluate_rows(st, [defaults]), 5 if quick else 20)
    model.evaluate(wl, **defaults)
    as_dict = _median_call_s(lambda: model.evaluate(wl, **defaults), 5 if quick else 20)
    steps = None
    if ladder:  # last: its large calls grow the heap, which the measurements above must not inherit
        steps = {str(k): v for k, v in batch_ladder(arch, workload, (1024, 4096) if quick else LADDER,
                                                    min_s=0.1 if quick else 0.3).items()}
    return Speed(arch, workload, len(wl.layers), batch, feasible, t_batch / done, roof_batch, t_one / n,
                 one_default, as_dict, roof_one, stacked_batch, stacked_one, trial_s, gc_s, gc_n, first_call / batch,
                 c.calls, c.cpu_s / done, steps)

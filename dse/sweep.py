"""Grid sweeps with joblib: every point of a study's space (or a random sample).

The grid is addressed by index (mixed radix over the dimensions), so a
worker decodes its own chunk ``[start, stop)`` and nothing large is shipped
between processes. Each chunk is evaluated in one vectorised call per
workload and checkpointed to ``results/<name>/sweep/chunks/`` (one ``.npz``
of arrays per chunk: the grid indices, totals, objectives, flags and
reasons; the parameters are decoded from the indices again); an
interrupted sweep resumes from its finished chunks, also from the ``.json``
chunks that earlier versions wrote. The output does not depend on
``n_jobs``: rows are ordered by grid index.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .config import Study
from workloads.errors import UserError
from .objective import evaluate_columns
from .outputs import write_outputs
from .results import Table, atomic_path, csv_stable, gc_paused, summary

DEFAULT_CHUNK = 2048


@dataclass
class Grid:
    """The study's grid: one list of values per searched dimension."""

    names: list[str]
    values: list[list[Any]]

    @classmethod
    def of(cls, study: Study) -> Grid:
        """Every point the study file names (see :meth:`dse.config.Dim.grid`), or a one-line error."""
        dims = study.searched
        for d in dims:
            if d.kind == "float" and not d.step and not d.points:
                raise UserError(f"{study.path}: space.{d.name}: a float range needs 'step' or 'points' for a sweep "
                                f"(the grid); e.g. {{low: {d.low:g}, high: {d.high:g}, points: 8}}")
        return cls([d.name for d in dims], [d.grid() for d in dims])

    @property
    def size(self) -> int:
        return math.prod(len(v) for v in self.values)

    def columns(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        """Parameter values of the grid points ``indices`` (mixed-radix decode), per dimension."""
        rem = np.asarray(indices, dtype=np.int64).copy()
        digits: list[np.ndarray] = []
        for vals in reversed(self.values):
            digits.append(rem % len(vals))
            rem //= len(vals)
        digits.reverse()
        return {n: np.array(self.values[d], dtype=object)[digits[d]] for d, n in enumerate(self.names)}

    def rows(self, indices: np.ndarray) -> list[dict[str, Any]]:
        """Parameter dicts of the grid points ``indices``."""
        cols = self.columns(indices)
        return [{n: cols[n][i] for n in self.names} for i in range(len(indices))]


def _watch_parent(parent_pid: int) -> None:
    """Pool-worker initializer: exit when the sweep's process dies (a kill -9 leaves no idle worker behind), and
    glibc's malloc thresholds as in every dse process (:func:`dse.procs.tune_malloc`)."""
    from .procs import die_with_parent, tune_malloc

    tune_malloc()
    die_with_parent(parent_pid, clean=False)


def _eval_chunk(study: Study, grid: Grid, indices: np.ndarray, path: Path | None,
                parent_pid: int | None = None) -> dict[str, np.ndarray]:
    """Evaluate the grid points ``indices``: their study values as arrays (grid indices, totals, objectives,
    flags, violations, reasons; :func:`chunk_lists` turns them into rows' values), checkpointed to ``path``
    (``.npz``) when given."""
    if parent_pid is not None and parent_pid != os.getpid():  # a pool worker: no orphan after a kill -9
        _watch_parent(parent_pid)  # (a no-op where the pool's initializer already ran it)
    ev = evaluate_columns(study, grid.columns(indices))
    viol = ev.violations
    out = {
        "index": np.asarray(indices, dtype=np.int64),
        **{_TOTAL + k: np.asarray(v, dtype=float) for k, v in ev.totals.items()},
        "objectives": np.asarray(ev.values, dtype=float),
        "model_feasible": np.asarray(ev.feasible, dtype=bool),
        # the constraints' positive parts summed per row (the last column is the model's verdict)
        "violation": np.maximum(viol[:, :-1], 0).sum(axis=1) if viol.shape[1] > 1 else np.zeros(len(viol)),
        "reason": np.array([str(r) for r in ev.reason], dtype=str).reshape(len(viol)),  # "" for none
    }
    if path is not None:  # a chunk file is either whole or absent
        with atomic_path(path) as tmp, tmp.open("wb") as fh:
            np.savez(fh, **out)
    return out


_TOTAL = "total."


def _read_chunk(cdir: Path, i: int) -> dict[str, Any]:
    """Chunk ``i`` from its file: the arrays of a ``.npz``, or the lists of a ``.json`` that a sweep before the
    binary files wrote (an interrupted sweep resumes from either)."""
    path = cdir / f"chunk_{i:06d}.npz"
    if path.exists():
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    return json.loads((cdir / f"chunk_{i:06d}.json").read_text())


def chunk_lists(grid: Grid, part: dict[str, Any]) -> dict[str, Any]:
    """A chunk as lists of plain values (None for non-finite numbers and for no reason), the form
    :func:`table_from_chunks` reads; the parameters are decoded from the grid indices again. A ``.json`` chunk
    already has this form."""
    if "params" in part:
        return part
    idx = part["index"]
    cols = grid.columns(idx)
    return {
        "index": idx.tolist(),
        "params": {n: cols[n].tolist() for n in grid.names},
        "totals": {k[len(_TOTAL):]: finite_or_none(v) for k, v in part.items() if k.startswith(_TOTAL)},
        "objectives": finite_or_none(part["objectives"]),
        "model_feasible": part["model_feasible"].tolist(),
        "violation": part["violation"].tolist(),
        "reason": [r or None for r in part["reason"].tolist()],
    }


def finite_or_none(a: np.ndarray) -> list:
    """``a`` (1-D or 2-D floats) as nested Python lists with None for each non-finite value (a row's "no value",
    written as an empty CSV field, as the JSON chunks held it): one ``tolist`` and a patch of the few non-finite
    cells, not a Python test per value."""
    a = np.asarray(a, dtype=float)
    out = a.tolist()
    bad = ~np.isfinite(a)
    if a.ndim == 1:
        for i in np.flatnonzero(bad).tolist():
            out[i] = None
    else:
        for i, j in np.argwhere(bad).tolist():
            out[i][j] = None
    return out


def _eval_task(i: int, *args: Any) -> tuple[int, dict[str, np.ndarray]]:
    """Chunk ``i`` evaluated (:func:`_eval_chunk`), with its number (the pool returns chunks in any order)."""
    return i, _eval_chunk(*args)


def chunk_indices(n_points: int, chunk: int, sample: np.ndarray | None) -> list[np.ndarray]:
    base = sample if sample is not None else np.arange(n_points, dtype=np.int64)
    return [base[i:i + chunk] for i in range(0, len(base), chunk)]


def run_sweep(study: Study, n_jobs: int | None = None, sample: int | None = None, seed: int = 0,
              chunk: int = DEFAULT_CHUNK, backend: str = "loky", scheduler: str | None = None,
              out_dir: Path | None = None, progress: bool = True) -> tuple[Table, dict[str, Path], float]:
    """Evaluate the study's grid (or ``sample`` random grid points) in parallel."""
    from joblib import Parallel, delayed, parallel_config

    grid = Grid.of(study)
    n_jobs = n_jobs or study.n_jobs
    pick = None
    if sample is not None and sample < grid.size:
        pick = np.sort(np.random.default_rng(seed).choice(grid.size, size=sample, replace=False))
    chunks = chunk_indices(grid.size, chunk, pick)
    out_dir = out_dir or (study.out_dir / "sweep")
    cdir = out_dir / "chunks"
    cdir.mkdir(parents=True, exist_ok=True)
    tag = f"{study.fingerprint()}-{grid.size}-{sample}-{seed}-{chunk}"
    marker = cdir / "grid.txt"
    if marker.exists() and marker.read_text() != tag:  # another study or grid: old chunks do not apply
        for f in [*cdir.glob("chunk_*.npz"), *cdir.glob("chunk_*.json")]:
            f.unlink()
    marker.write_text(tag)

    t0 = time.time()
    todo = [(i, c) for i, c in enumerate(chunks)
            if not (cdir / f"chunk_{i:06d}.npz").exists() and not (cdir / f"chunk_{i:06d}.json").exists()]
    calls = (delayed(_eval_task)(i, study, grid, c, cdir / f"chunk_{i:06d}.npz", os.getpid()) for i, c in todo)
    done: dict[int, dict[str, Any]] = {}
    if todo:
        if backend == "dask":
            with _dask_client(scheduler), parallel_config(backend="dask"):
                done.update(_track(Parallel(n_jobs=-1, return_as="generator_unordered")(calls), len(todo), progress))
        else:
            # loky workers watch their parent from the moment they start, not only once they run a chunk
            init = dict(initializer=_watch_parent, initargs=(os.getpid(),)) if backend == "loky" else {}
            with parallel_config(backend=backend, n_jobs=n_jobs, **init):
                done.update(_track(Parallel(return_as="generator_unordered")(calls), len(todo), progress))
    elapsed = time.time() - t0
    with gc_paused():
        # chunks evaluated by this call as they came back (the same arrays as their files); chunks of an
        # earlier, interrupted call from their files
        parts = [chunk_lists(grid, done.pop(i, None) or _read_chunk(cdir, i)) for i in range(len(chunks))]
        table = table_from_chunks(study, parts)
    table.csv_exact = _reads_back(grid, parts)
    from .report import bounds_of, study_title

    paths = write_outputs(out_dir, table, title=study_title(study, "sweep"), bounds=bounds_of(study))
    return table, paths, elapsed


def record_sweep(study: Study, out_dir: Path, table: Table, sample: int | None, seed: int, elapsed_s: float) -> None:
    """Write the sweep folder's ``study.json`` and study copy: what ``dse report`` and ``dse plot`` read."""
    from . import config
    from .results import write_meta

    write_meta(out_dir, {
        "name": study.name, "study_file": study.path, "study_copy": config.write_copy(study, out_dir),
        "arch": study.arch, "kind": "sweep",
        "objectives": table.objectives, "directions": table.directions,
        "sample": sample, "seed": seed, "elapsed_s": elapsed_s,
    })


def _dask_client(scheduler: str | None):
    """A Dask client for ``scheduler``, or a one-line error."""
    try:
        from distributed import Client
    except ImportError:
        raise UserError("sweep: --backend dask needs dask.distributed: pip install -e '.[dask]'") from None
    try:
        return Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise UserError(f"sweep: cannot reach the Dask scheduler {scheduler}: {exc}") from None


def _track(gen, total: int, progress: bool):
    if not progress:
        yield from gen
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="chunk", dynamic_ncols=True) as bar:
        for x in gen:
            bar.update(1)
            yield x


def _reads_back(grid: Grid, parts: list[dict[str, Any]]) -> bool:
    """Whether the sweep's rows equal what reading its trials.csv back returns (:attr:`Table.csv_exact`): every
    chunk has the same totals, and every grid value and reason reads back as itself (totals, objectives and
    violations are floats or None, flags bools, indices small integers, by construction)."""
    if len({tuple(p["totals"]) for p in parts}) > 1:
        return False
    reasons = set().union(*(p["reason"] for p in parts)) if parts else set()
    return all(csv_stable(x) for vals in grid.values for x in vals) and all(map(csv_stable, reasons))


def table_from_chunks(study: Study, parts: list[dict[str, Any]]) -> Table:
    """Rows ordered by grid index, with the same columns as a study's trials.csv."""
    rows: list[dict[str, Any]] = []
    objectives = [o.metric for o in study.objectives]
    for p in parts:  # a chunk's columns, then its rows zipped from them (not one dict update per value)
        cols: dict[str, list[Any]] = {"number": p["index"]}
        cols.update((f"param.{n}", v) for n, v in p["params"].items())
        cols.update((f"total.{k}", v) for k, v in p["totals"].items())
        for j, m in enumerate(objectives):
            if m not in cols:  # an objective that is not a total (the first value wins, as setdefault)
                cols[m] = [o[j] for o in p["objectives"]]
        cols["feasible"] = [f and v <= 0 for f, v in zip(p["model_feasible"], p["violation"])]
        cols["model_feasible"] = p["model_feasible"]
        cols["constraint_violation"] = p["violation"]
        cols["infeasible_reason"] = p["reason"]
        keys = list(cols)
        rows.extend(dict(zip(keys, vals)) for vals in zip(*cols.values()))
    return Table(rows, objectives, [o.direction for o in study.objectives])


__all__ = ["Grid", "record_sweep", "run_sweep", "summary"]

"""Helpers for models that cost every layer of a workload at once, as arrays over (layers x points).

A model turns its workload into integer columns (one row per layer, shape ``(rows, 1)``) once per
layer tuple, and broadcasts them against the per-point parameter arrays (shape ``(points,)``):
one numpy expression then costs every layer of every point, instead of a Python loop over layers
(issue 15). Elementwise arithmetic gives the very bits the per-layer loop gave, as long as each
expression keeps the loop's order of operations.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def column(values: Iterable[int]) -> np.ndarray:
    """Integers as a read-only ``(rows, 1)`` int64 column (shared by every evaluation of a workload)."""
    col = np.array(list(values), dtype=np.int64).reshape(-1, 1)
    col.setflags(write=False)
    return col


def full(x, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` as a float array of exactly ``shape`` (a copy only when it must be broadcast or cast)."""
    x = np.asarray(x, dtype=float)
    return x if x.shape == shape else np.broadcast_to(x, shape).copy()


def groups(*keys: np.ndarray) -> list[tuple[tuple, np.ndarray | slice]]:
    """Distinct combinations of per-point keys (Python values) and the points that have each.

    The selector is ``slice(None)`` when every point shares one combination (a single point,
    or a study with fixed node and width), so callers index without copying.
    """
    cols = [np.asarray(k).tolist() for k in keys]
    combos = sorted(set(zip(*cols)))
    if len(combos) == 1:
        return [(combos[0], slice(None))]
    arrays = [np.asarray(k) for k in keys]
    return [(combo, np.logical_and.reduce([a == v for a, v in zip(arrays, combo)])) for combo in combos]

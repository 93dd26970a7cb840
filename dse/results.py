"""Study and sweep outputs: ``trials.csv``, ``pareto.csv``, the summary, ``study.json``.

``study.json`` records what ``dse plot`` needs to redraw a results folder
from storage alone: the study name, storage, objectives and directions.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Table:
    """Rows of a study or a sweep plus the objectives that define its front."""

    rows: list[dict[str, Any]]
    objectives: list[str]  # metric paths, e.g. total.time_s
    directions: list[str]  # minimize | maximize

    def values(self) -> np.ndarray:
        out = np.full((len(self.rows), len(self.objectives)), np.nan)
        for i, r in enumerate(self.rows):
            for j, m in enumerate(self.objectives):
                v = r.get(m)
                out[i, j] = np.nan if v is None else float(v)
        return out

    def feasible(self) -> np.ndarray:
        return np.array([bool(r.get("feasible")) for r in self.rows], dtype=bool)

    def pareto_mask(self) -> np.ndarray:
        vals = self.values()
        ok = self.feasible() & np.isfinite(vals).all(axis=1)
        return pareto_mask(vals, self.directions, ok)


def pareto_mask(values: np.ndarray, directions: Sequence[str], candidates: np.ndarray | None = None) -> np.ndarray:
    """Non-dominated rows of ``values`` (n x m) among ``candidates``; ties kept once."""
    n = len(values)
    cand = np.ones(n, bool) if candidates is None else candidates.copy()
    if n == 0 or not cand.any():
        return np.zeros(n, bool)
    sign = np.array([1.0 if d == "minimize" else -1.0 for d in directions])
    v = values * sign  # all minimised
    idx = np.flatnonzero(cand)
    order = idx[np.lexsort(v[idx].T[::-1])]  # sorted by first objective, then the others
    keep = np.zeros(n, bool)
    if v.shape[1] == 1:
        keep[order[0]] = True
        return keep
    if v.shape[1] == 2:
        best = math.inf
        for i in order:
            if v[i, 1] < best:
                keep[i] = True
                best = v[i, 1]
        return keep
    alive = np.zeros(n, bool)
    alive[order] = True
    for i in order:
        if not alive[i]:
            continue
        keep[i] = True
        dominated = np.all(v[i] <= v, axis=1) & alive
        dominated[i] = False
        alive &= ~dominated
    # rows kept early may be dominated by none; equal rows: only the first survives
    return keep


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Rows as CSV; the union of keys forms the header (params first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys and k != "values":
                keys.append(k)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})


def read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows back from a CSV written by :func:`write_csv` (numbers parsed)."""
    with path.open(newline="") as fh:
        return [{k: _parse(v) for k, v in r.items()} for r in csv.DictReader(fh)]


def _parse(v: str) -> Any:
    if v == "":
        return None
    if v in ("True", "False"):
        return v == "True"
    try:
        f = float(v)
    except ValueError:
        return v
    return int(f) if f.is_integer() and "." not in v and "e" not in v.lower() else f


def summary(table: Table, max_rows: int = 5) -> str:
    """A few lines: counts, then the best points of the front."""
    front = table.pareto_mask()
    feas = table.feasible()
    lines = [f"{len(table.rows)} points, {int(feas.sum())} feasible, {int(front.sum())} on the Pareto front"]
    rows = [r for r, f in zip(table.rows, front) if f]
    if not rows:
        return "\n".join(lines)
    first = table.objectives[0]
    rows.sort(key=lambda r: r[first], reverse=table.directions[0] == "maximize")
    if len(rows) > max_rows:  # spread the shown points along the front
        pick = np.linspace(0, len(rows) - 1, max_rows).round().astype(int)
        rows = [rows[i] for i in pick]
    params = [k for k in rows[0] if k.startswith("param.")]
    lines.append("best points (along the front):")
    for r in rows:
        objs = ", ".join(f"{m}={_g(r.get(m))}" for m in table.objectives)
        ps = ", ".join(f"{k[6:]}={_g(r[k])}" for k in params)
        lines.append(f"  {objs}  |  {ps}")
    return "\n".join(lines)


def _g(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it: a reader (another process) sees the
    old file or the new one whole, never a part."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_meta(out_dir: Path, meta: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "study.json").write_text(json.dumps(meta, indent=1))


def read_meta(out_dir: Path) -> dict[str, Any]:
    return json.loads((out_dir / "study.json").read_text())


def folder_overrides(out_dir: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Overrides that load a results folder's study file as the study in that folder: its own name (a run with
    --new-name/--fork stores the file under another) and the folder's parent as ``results_dir`` (the folder
    given on the command line, from any working directory; a sweep's folder is ``<study folder>/sweep``)."""
    study_dir = Path(out_dir).parent if meta.get("kind") == "sweep" else Path(out_dir)
    out = {"results_dir": str(study_dir.parent)}
    if meta.get("name"):
        out["name"] = meta["name"]
    return out

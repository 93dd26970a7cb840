"""Study and sweep outputs: ``trials.csv``, ``pareto.csv``, the summary, ``study.json``.

``study.json`` records what ``dse plot`` needs to redraw a results folder
from storage alone: the study name, storage, objectives and directions.
"""

from __future__ import annotations

import csv
import gc
import json
import math
import operator
import os
from collections.abc import Sequence
from contextlib import contextmanager
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
    #: the rows equal what :func:`read_csv` returns for the trials.csv :func:`write_csv` writes from them (set by
    #: whoever checked it, e.g. a sweep), so a report may use them instead of reading the file back
    csv_exact: bool = False

    def values(self) -> np.ndarray:
        """The objectives, (rows x objectives) floats; NaN where a row has none (None converts to NaN)."""
        rows = self.rows
        out = np.empty((len(rows), len(self.objectives)))
        for j, m in enumerate(self.objectives):
            out[:, j] = np.array([r.get(m) for r in rows], dtype=float)
        return out

    def feasible(self) -> np.ndarray:
        return np.fromiter((bool(r.get("feasible")) for r in self.rows), dtype=bool, count=len(self.rows))

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
    keys = _header(rows)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)  # writes None as an empty field
        w.writerow(keys)
        w.writerows(_cells(rows, keys))


def _header(rows: list[dict[str, Any]]) -> list[str]:
    """The union of the rows' keys in order of first appearance, without ``values``; a row whose keys equal the
    previous row's (the common case: all rows alike) adds nothing and is skipped by one set comparison."""
    seen: dict[str, None] = {}
    last = None
    for r in rows:
        ks = r.keys()
        if last is None or ks != last:
            seen.update(dict.fromkeys(ks))
            last = ks
    seen.pop("values", None)
    return list(seen)


def _cells(rows: list[dict[str, Any]], keys: list[str]):
    """Each row's values in ``keys`` order, None where a row lacks a key."""
    if len(keys) < 2:  # itemgetter of one key returns the value, not a tuple
        yield from ([r.get(k) for k in keys] for r in rows)
        return
    get = operator.itemgetter(*keys)
    for r in rows:
        try:
            yield get(r)
        except KeyError:
            yield [r.get(k) for k in keys]


@contextmanager
def gc_paused():
    """The cyclic garbage collector paused while a bulk step builds millions of acyclic containers (row dicts
    and their values): each allocation burst would otherwise trigger collections that walk every row built so far.
    Nothing cyclic is made inside, so nothing is left for the collector to find later."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def csv_stable(value: Any) -> bool:
    """Whether ``value`` in a row reads back from :func:`write_csv`'s file as itself (:func:`_parse`): None,
    floats (written by repr), bools, integers below 2**53 (parsed through a float) and text that does not look
    like a number, a bool or nothing."""
    t = type(value)
    if value is None or t is float or t is bool:
        return True
    if t is int:
        return abs(value) < 2 ** 53
    if t is str:
        return value != "" and type(_parse(value)) is str
    return False


def read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows back from a CSV written by :func:`write_csv` (numbers parsed)."""
    with path.open(newline="") as fh, gc_paused():
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return []
        width = len(header)
        rows = []
        for r in reader:  # a row at a time (not csv.DictReader's Python-level pairing of each row)
            if len(r) == width:
                rows.append(dict(zip(header, map(_parse, r))))
            elif r:  # ragged: as csv.DictReader pairs the fields, from the start
                break
        else:
            return rows
        fh.seek(0)
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


@contextmanager
def atomic_path(path: Path):
    """A temporary path beside ``path``, renamed over it when the block ends without an error: a reader (another
    process) sees the old file or the new one whole, never a part."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    yield tmp
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through :func:`atomic_path`."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


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

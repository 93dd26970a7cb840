"""Evaluate design points for a study: combine workloads, read objectives and constraints.

Several workloads in one study are combined per metric (``combine`` key):

* ``sum`` (default): the workloads run back to back on the same hardware.
  Extensive totals (time, cycles, energy, DRAM bytes, MACs) add up;
  ``utilization`` is the time-weighted mean, ``power_w`` = energy / time,
  ``macs_per_s`` = MACs / time, ``fps`` = 1 / total time; hardware totals
  (``area_mm2``) are the same for every workload and taken as the maximum.
  Model-specific totals combine as the model declares
  (:class:`archmodels.result.Metric` ``combine``: sum, max, time- or
  MAC-weighted mean).
* ``worst``: each metric takes its worst value over the workloads (the
  largest for minimised objectives and ``<=`` constraints, the smallest for
  maximised objectives and ``>=`` constraints).

A point is feasible when it is feasible on every workload.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from archmodels.memo import IdentityMemo
from archmodels.result import TOTAL_METRICS, BatchResult, Metric, seqsum

from .config import Study

BIG = 1e30  # stands for a metric a point cannot produce (NaN), in objectives and constraints
#: numpy's native float64 dtype: a float array's dtype is this very object (any other equal dtype: converted, the
#: same values)
_F64 = np.dtype(np.float64)


@dataclass
class Evaluated:
    """Totals and study values for a batch of points (arrays over points)."""

    totals: dict[str, np.ndarray]
    feasible: np.ndarray
    reason: np.ndarray
    values: np.ndarray  # (n_points, n_objectives), NaN replaced by +-inf
    violations: np.ndarray  # (n_points, n_constraints + 1); last column = model feasibility

    def metrics_of(self, i: int) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for k, v in self.totals.items():
            x = float(v[i])
            out[k] = x if np.isfinite(x) else None
        return out


def evaluate_rows(study: Study, rows: Sequence[Mapping[str, Any]]) -> Evaluated:
    """Evaluate searched-parameter dicts (fixed parameters added) in one batch per workload."""
    params = study.model.params
    base = study.fixed_row  # fixed values and defaults: checked once per study
    checks = _checks(params)
    full = [params.derive({**base, **{k: (checks.get(k) or params.get(k).check)(v) for k, v in r.items()}})
            for r in rows]
    return _evaluate(study, params.stack(full))


#: ``{name: params.get(name).check}`` of a parameter set, made once per set (a study checks every trial's row)
_checks: IdentityMemo[dict[str, Callable[[Any], Any]]] = IdentityMemo(lambda params: {p.name: p.check for p in params})


def evaluate_columns(study: Study, cols: Mapping[str, np.ndarray]) -> Evaluated:
    """Like :func:`evaluate_rows` for columns of already-validated values (grid sweeps)."""
    n = len(next(iter(cols.values())))
    pts = {}
    for p in study.model.params:
        if p.name in cols:
            pts[p.name] = np.asarray(cols[p.name], dtype=p.dtype())
        else:
            value = study.fixed.get(p.name, p.default)
            pts[p.name] = np.full(n, value, dtype=p.dtype()) if p.dtype() is not object else np.array([value] * n, dtype=object)
    return _evaluate(study, pts)


def _evaluate(study: Study, pts: dict[str, np.ndarray]) -> Evaluated:
    model = study.model
    results = [model.evaluate_batch(w, pts) for w in study.workloads]
    directions = _directions(study)
    totals = combine_totals(results, study.combine, directions, model.TOTAL_METRICS)
    feasible = results[0].feasible.astype(bool) if len(results) == 1 else np.logical_and.reduce([r.feasible for r in results])
    reason = results[0].reason.copy()
    for r in results[1:]:
        fill = reason == ""
        reason[fill] = r.reason[fill]

    n = results[0].n
    if n == 1:  # a study's trial: the same values from Python floats, ~12 numpy calls fewer
        return _evaluated_one(study, results, totals, directions, feasible, reason)
    # every objective (and every constraint) as a row of one array: one isfinite and one where for all
    obj = np.array([metric_values(study, results, totals, o.metric, directions) for o in study.objectives],
                   dtype=float).reshape(len(study.objectives), n)
    worst = np.array([np.inf if o.direction == "minimize" else -np.inf for o in study.objectives]).reshape(-1, 1)
    values = np.where(np.isfinite(obj), obj, worst).T
    viol = np.empty((n, len(study.constraints) + 1))
    if study.constraints:
        v = np.array([c.violation(metric_values(study, results, totals, c.metric, directions))
                      for c in study.constraints], dtype=float).reshape(len(study.constraints), n)
        viol[:, :-1] = np.where(np.isfinite(v), v, BIG).T
    viol[:, -1] = np.where(feasible, 0.0, 1.0)
    return Evaluated(totals, feasible, reason, values, viol)


def _evaluated_one(study: Study, results: list[BatchResult], totals: dict[str, np.ndarray],
                   directions: Mapping[str, str], feasible: np.ndarray, reason: np.ndarray) -> Evaluated:
    """:func:`_evaluate`'s values and violations of one point: each objective and constraint value as a Python
    float (IEEE doubles: a violation's subtraction gives numpy's bits), a non-finite objective as its worst
    infinity and a non-finite violation as :data:`BIG`, as the array path's ``where``."""
    values = []
    for o in study.objectives:
        x = float(metric_values(study, results, totals, o.metric, directions)[0])
        values.append(x if math.isfinite(x) else (math.inf if o.direction == "minimize" else -math.inf))
    viol = []
    for c in study.constraints:
        v = c.violation(float(metric_values(study, results, totals, c.metric, directions)[0]))
        viol.append(v if math.isfinite(v) else BIG)
    viol.append(0.0 if feasible[0] else 1.0)
    return Evaluated(totals, feasible, reason, np.array([values], dtype=float), np.array([viol], dtype=float))


def _directions(study: Study) -> dict[str, str]:
    """'max' for metrics whose worst case is the smallest value, else 'min'."""
    d: dict[str, str] = {}
    for o in study.objectives:
        d[o.metric] = "max" if o.direction == "maximize" else "min"
    for c in study.constraints:
        d.setdefault(c.metric, "max" if c.op == ">=" else "min")
    return d


def combine_totals(results: list[BatchResult], how: str, directions: Mapping[str, str],
                   declared: Sequence[Metric] = ()) -> dict[str, np.ndarray]:
    """Totals of several workloads on the same points (see module doc)."""
    if len(results) == 1:  # float arrays as they are (the common case), others converted
        return {k: v if type(v) is np.ndarray and v.dtype is _F64 else np.asarray(v, dtype=float)
                for k, v in results[0].totals.items()}
    keys = list(results[0].totals)
    stack = {k: np.array([np.asarray(r.totals[k], dtype=float) for r in results]) for k in keys}
    if how == "worst":
        out = {}
        for k in keys:
            small_is_bad = directions.get(f"total.{k}") == "max"
            out[k] = stack[k].min(axis=0) if small_is_bad else stack[k].max(axis=0)
        return out
    how_each = {m.name: m.combine for m in TOTAL_METRICS}  # contract keys: area max, shares/powers time-weighted
    how_each.update({m.name: m.combine for m in declared})
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in keys:
            rule = how_each.get(k, "sum")
            if rule == "max":
                out[k] = stack[k].max(axis=0)
            elif rule == "min":
                out[k] = stack[k].min(axis=0)
            elif rule == "time_mean":
                out[k] = seqsum(stack[k] * stack["time_s"]) / seqsum(stack["time_s"])
            elif rule == "macs_mean":
                out[k] = seqsum(stack[k] * stack["macs"]) / seqsum(stack["macs"])
            else:
                out[k] = seqsum(stack[k])
        t = out["time_s"]
        out["power_w"] = out["energy_j"] / t
        out["macs_per_s"] = out["macs"] / t
        out["fps"] = 1.0 / t
    return out


def metric_values(study: Study, results: list[BatchResult], totals: Mapping[str, np.ndarray],
                  metric: str, directions: Mapping[str, str]) -> np.ndarray:
    """Array over points of a metric path, combined over the study's workloads."""
    head, _, key = metric.partition(".")
    if head == "total":
        return np.asarray(totals[key], dtype=float)
    arrays = []
    for r in results:
        try:
            arrays.append(np.asarray(r.metric(metric), dtype=float))
        except KeyError:
            continue
    stack = np.array(arrays)
    if len(arrays) == 1:
        return stack[0]
    if study.combine == "worst":
        return stack.min(axis=0) if directions.get(metric) == "max" else stack.max(axis=0)
    return seqsum(stack)

"""``check_model``: the contract checks every model passes, runnable on yours.

In the spirit of scikit-learn's ``check_estimator``: one call runs the checks
the built-in models pass (tests/test_conformance.py) on any
:class:`~archmodels.base.Model` instance::

    from archmodels.testing import check_model
    report = check_model(MyModel())            # raises AssertionError naming the check and the point
    print(report)                              # what was checked: workloads, points, feasible/infeasible

Checks (``CHECKS``; a failure names one of them):

* ``declared_parameters``: every :class:`~archmodels.params.Param` has a doc,
  a range (int/float: ``low <= high``, integral bounds for ints) or choices,
  a string unit, and a valid default; parameter names are identifiers.
* ``declared_metrics``: the model's own metrics have a name, a string unit
  and a doc, do not redefine a contract key, and are the only extra keys
  results carry (a study can only name declared metrics); every declared
  total is in every result, every declared layer metric in every layer.
* ``evaluates``: ``evaluate_batch`` runs on every point of the declared
  space without raising (a design that cannot run is reported infeasible,
  not raised) and gives every layer metric one value per point.
* ``contract_keys``: the ``dse evaluate --json`` dictionary of
  docs/contract.md: top-level, layer and total keys, their types, the
  parameters echoed with defaults filled in, JSON-serialisable.
* ``batch_equals_scalar``: one ``evaluate_batch`` over all points gives, bit
  for bit, what ``evaluate`` gives for each point alone (NaN equal to NaN).
* ``determinism``: evaluating the batch again gives the same results.
* ``infeasible_reasons``: ``feasible`` false exactly when a reason is given
  (the point's and each layer's); an infeasible layer makes the point
  infeasible; a feasible point has no null contract value (a design that
  cannot produce a value is infeasible, docs/contract.md), except
  ``NOT_APPLICABLE`` ones (area_mm2 of an FPGA port).
* ``units_and_ranges``: time_s, cycles, DRAM bytes, energy, power >= 0 and
  utilization in [0, 1] wherever given; for feasible points time_s > 0 and
  finite, area_mm2 > 0 (unless null, see above); dram_bytes = read + write; macs = sum of layer MACs;
  macs_per_s, fps, power_w consistent with time_s; where time_s is null, the
  totals divided by it (``PER_TIME``) are null too.
* ``picklable``: the model survives a pickle round trip with equal results
  (``dse sweep`` and ``n_jobs`` ship it to worker processes).
* ``coverage``: at least one feasible point was checked (else the range
  checks checked nothing).

Points: the defaults, the all-low and all-high corners of the declared
space, and ``n_points`` random points (``ParamSet.random_rows``, seeded), on
every workload.
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workloads import Workload
from workloads.layers import KINDS

from .base import Model
from .result import LAYER_METRICS, TOTAL_METRICS, BatchResult

CHECKS = ("declared_parameters", "declared_metrics", "evaluates", "contract_keys", "batch_equals_scalar", "determinism",
          "infeasible_reasons", "units_and_ranges", "picklable", "coverage")

TOP_KEYS = ("arch", "workload", "params", "feasible", "infeasible_reason", "layers", "total")
LAYER_KEYS = ("name", "kind", "macs", *(m.name for m in LAYER_METRICS), "fused_into", "states", "feasible",
              "infeasible_reason")
TOTAL_KEYS = tuple(m.name for m in TOTAL_METRICS)
NON_NEGATIVE = ("cycles", "time_s", "dram_read_bytes", "dram_write_bytes", "dram_bytes", "energy_j", "power_w")
#: totals divided by time_s: null when time_s is (docs/contract.md: values a design cannot produce are null)
PER_TIME = ("utilization", "power_w", "dynamic_power_w", "macs_per_s", "fps")
REL_TOL = 1e-9  # for identities recomputed here (macs_per_s = macs / time_s, ...)
UTIL_SLACK = 1e-9  # utilization may exceed 1 by rounding only
#: contract totals a feasible design may leave null because they do not apply to it:
#: area_mm2 of a design with no die of its own (the ReNA FPGA port, docs/models/rena.md)
NOT_APPLICABLE = ("area_mm2",)


@dataclass
class CheckReport:
    """What ``check_model`` checked: points per workload, feasible and infeasible among them."""

    model: str
    checks: tuple[str, ...] = CHECKS
    points: dict[str, int] = field(default_factory=dict)
    feasible: dict[str, int] = field(default_factory=dict)

    @property
    def n_points(self) -> int:
        return sum(self.points.values())

    @property
    def n_feasible(self) -> int:
        return sum(self.feasible.values())

    @property
    def n_infeasible(self) -> int:
        return self.n_points - self.n_feasible

    def __str__(self) -> str:
        per = ", ".join(f"{w}: {self.feasible[w]}/{n} feasible" for w, n in self.points.items())
        return f"check_model({self.model}): {len(self.checks)} checks passed on {self.n_points} points ({per})"


class _Fail:
    """Raises AssertionError naming the model, the check, the workload and the point."""

    def __init__(self, model: Model):
        self.model = getattr(model, "name", type(model).__name__)

    def __call__(self, check: str, message: str, workload: str | None = None, point: Any = None) -> None:
        where = f" on {workload}" if workload else ""
        at = f" at point {point}" if point is not None else ""
        raise AssertionError(f"check_model({self.model}) [{check}]{where}{at}: {message}")


def default_workloads(model: Model) -> list[str]:
    """Small workloads covering the layer kinds the model declares in ``SUPPORTS``."""
    out = ["lenet"] if {"conv", "pool", "fc"} & set(model.SUPPORTS) else []
    if "fc" in model.SUPPORTS:
        out.append("fc1")
    if "matmul" in model.SUPPORTS:
        out.append("matmul:n=128")
    if "spmm" in model.SUPPORTS:
        out.append("spmm:n=256,sparsity=0.9")
    return out or ["lenet"]


def check_model(model: Model, workloads: Sequence[str] | None = None, n_points: int = 24,
                seed: int = 0) -> CheckReport:
    """Run every check of ``CHECKS`` on ``model``; raise AssertionError on the first failure."""
    fail = _Fail(model)
    if not isinstance(model, Model):
        fail("declared_parameters", f"{model!r} is not an archmodels.Model instance")
    _check_params(model, fail)
    _check_metric_decls(model, fail)
    rng = np.random.default_rng(seed)
    rows = [model.params.defaults(), _corner(model, "low"), _corner(model, "high")]
    rows += model.params.random_rows(n_points, rng)
    report = CheckReport(model.name)
    for wl in workloads or default_workloads(model):
        batch = _run_batch(model, wl, rows, fail)
        for lb in batch.layers:
            for key, arr in lb.metrics.items():
                if np.shape(arr) != (len(rows),):
                    fail("evaluates", f"layer {lb.name}: metric {key} has shape {np.shape(arr)}, not ({len(rows)},)", wl)
        points = [batch.point(i) for i in range(len(rows))]
        for i, (row, p) in enumerate(zip(rows, points)):
            _check_point(model, p, row, wl, fail)
            scalar = _run(fail, wl, lambda: model.evaluate(wl, **row), row)
            if (d := _first_difference(p, scalar)) is not None:
                fail("batch_equals_scalar", f"batch and scalar results differ at {d}", wl, row)
        again = model.evaluate_points(wl, rows)
        for i, row in enumerate(rows):
            if (d := _first_difference(points[i], again.point(i))) is not None:
                fail("determinism", f"a second evaluation differs at {d}", wl, row)
        report.points[wl] = len(rows)
        report.feasible[wl] = sum(p["feasible"] for p in points)
    _check_pickle(model, rows[0], (workloads or default_workloads(model))[0], fail)
    if report.n_feasible == 0:
        fail("coverage", f"no feasible point among {report.n_points} (defaults, corners, random) on "
                         f"{', '.join(report.points)}: the range checks checked nothing")
    return report


def assert_alone_equals_batch(model: Model, workload: str | Workload, rows: list[dict[str, Any]]) -> BatchResult:
    """Each of ``rows`` evaluated alone (a study's one-point path) gives exactly what it gets inside the batch
    of all ``rows``: feasibility and reasons (configuration, layers, the point), every layer's metrics and
    states (their keys in the same order, the same bits, NaN equal to NaN), labels, totals and the contract
    dictionary. Returns the batch (for the caller's own checks); raises AssertionError at the first difference."""
    batch = model.evaluate_points(workload, rows)
    for i, row in enumerate(rows):
        one = model.evaluate_points(workload, [row])
        where = f"point {i} {row}"
        assert bool(one.feasible[0]) == bool(batch.feasible[i]) and one.reason[0] == batch.reason[i], where
        assert one.reason_config[0] == batch.reason_config[i], where
        assert bool(one.feasible_config[0]) == bool(batch.feasible_config[i]), where
        assert len(one.layers) == len(batch.layers), where
        for lb_one, lb in zip(one.layers, batch.layers):
            at = f"{where}, layer {lb.layer.name}"
            assert lb_one.layer is lb.layer, at
            assert bool(lb_one.feasible[0]) == bool(lb.feasible[i]) and lb_one.reason[0] == lb.reason[i], at
            assert list(lb_one.metrics) == list(lb.metrics) and list(lb_one.states) == list(lb.states), at
            for key, v in [*lb_one.metrics.items(), *lb_one.states.items()]:
                got = (lb.metrics[key] if key in lb.metrics else lb.states[key]).item(i)
                assert _same_bits(v.item(0), got), f"{at}: {key} {v.item(0)!r} != {got!r}"
            assert {k: v[0] for k, v in lb_one.labels.items()} == {k: v[i] for k, v in lb.labels.items()}, at
        assert list(one.totals) == list(batch.totals), where
        for key, v in one.totals.items():
            got = batch.totals[key].item(i)
            assert _same_bits(v.item(0), got), f"{where}: total {key} {v.item(0)!r} != {got!r}"
        assert (d := _first_difference(one.point(0), batch.point(i))) is None, f"{where}: contract differs at {d}"
    return batch


def _same_bits(a: Any, b: Any) -> bool:
    """``a == b``, NaN equal to NaN."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _run(fail: _Fail, wl: str, call, row: dict[str, Any] | None = None):
    try:
        return call()
    except AssertionError:
        raise
    except Exception as exc:  # a design must be reported infeasible, not raise
        fail("evaluates", f"raised {type(exc).__name__}: {exc}", wl, row)


def _run_batch(model: Model, wl: str, rows: list[dict[str, Any]], fail: _Fail):
    """``evaluate_points``; when it raises, find the first point that raises alone."""
    try:
        return model.evaluate_points(wl, rows)
    except AssertionError:
        raise
    except Exception as exc:
        for row in rows:
            _run(fail, wl, lambda: model.evaluate(wl, **row), row)
        fail("evaluates", f"the batch raised {type(exc).__name__}: {exc}, though every point alone runs", wl)


# ---- declarations ----
def _check_params(model: Model, fail: _Fail) -> None:
    c = "declared_parameters"
    params = list(model.params)
    if not params:
        fail(c, "the model declares no parameters (PARAMS)")
    for p in params:
        if not p.name.isidentifier():
            fail(c, f"parameter name {p.name!r} is not an identifier")
        if not p.doc.strip():
            fail(c, f"parameter '{p.name}' has no doc")
        if not isinstance(p.unit, str):
            fail(c, f"parameter '{p.name}': unit {p.unit!r} is not a string ('' for a pure number)")
        if p.kind in ("int", "float"):
            if p.low is None or p.high is None or not p.low <= p.high:  # low == high: fixed in this model
                fail(c, f"parameter '{p.name}': a {p.kind} needs a range low <= high, got {p.low}..{p.high}")
            if p.kind == "int" and not (float(p.low).is_integer() and float(p.high).is_integer()):
                fail(c, f"parameter '{p.name}': int range {p.low}..{p.high} has non-integral bounds")
        elif p.kind == "choice":
            if not p.choices or len(set(map(repr, p.choices))) != len(p.choices):
                fail(c, f"parameter '{p.name}': repeated choices {p.choices}")
        elif p.kind != "bool":
            fail(c, f"parameter '{p.name}': kind {p.kind!r} is not int, float, choice or bool")
        try:
            if p.check(p.default) != p.default:
                fail(c, f"parameter '{p.name}': default {p.default!r} is not of the declared type {p.kind}")
        except Exception as exc:  # UserError: out of range or not a choice
            fail(c, f"parameter '{p.name}': default {p.default!r} is not valid: {exc}")
    for attr in ("name", "title", "spec"):
        if not isinstance(getattr(model, attr, None), str) or not getattr(model, attr).strip():
            fail(c, f"the model class has no {attr} (a non-empty string)")


def _check_metric_decls(model: Model, fail: _Fail) -> None:
    c = "declared_metrics"
    for group, decl, contract in (("LAYER_METRICS", model.LAYER_METRICS, LAYER_KEYS),
                                  ("TOTAL_METRICS", model.TOTAL_METRICS, TOTAL_KEYS)):
        names = [m.name for m in decl]
        if len(set(names)) != len(names):
            fail(c, f"{group} declares a name twice: {names}")
        for m in decl:
            if not m.name.isidentifier() or not isinstance(m.unit, str) or not m.doc.strip():
                fail(c, f"{group} entry {m.name!r} needs an identifier name, a string unit and a doc")
            if m.name in contract:
                fail(c, f"{group} entry '{m.name}' redefines a contract key (docs/contract.md)")
            if m.combine not in ("sum", "max", "min", "time_mean", "macs_mean"):
                fail(c, f"{group} entry '{m.name}': combine {m.combine!r} is unknown")


# ---- one result ----
def _check_point(model: Model, p: dict[str, Any], row: dict[str, Any], wl: str, fail: _Fail) -> None:
    c = "contract_keys"
    for key in TOP_KEYS:
        if key not in p:
            fail(c, f"result has no '{key}'", wl, row)
    if p["arch"] != model.name or not isinstance(p["workload"], str):
        fail(c, f"arch {p['arch']!r} / workload {p['workload']!r}: expected the model's name and a string", wl, row)
    if p["params"] != model.params.resolve(row):
        fail(c, f"params {p['params']} are not the point with defaults filled in", wl, row)
    try:
        json.dumps(p, allow_nan=False)
    except (TypeError, ValueError) as exc:
        fail(c, f"the result is not JSON (dse evaluate --json): {exc}", wl, row)
    declared_layer = {m.name for m in model.LAYER_METRICS}
    for layer in p["layers"]:
        lname = layer.get("name")
        for key in LAYER_KEYS:
            if key not in layer:
                fail(c, f"layer {lname} has no '{key}'", wl, row)
        if layer["kind"] not in KINDS or not isinstance(layer["macs"], int) or not isinstance(layer["states"], dict):
            fail(c, f"layer {lname}: kind {layer['kind']!r} must be one of {KINDS}, macs an int, states a dict", wl, row)
        missing = declared_layer - set(layer)
        if missing:
            fail("declared_metrics", f"layer {lname} lacks the declared layer metrics {sorted(missing)}", wl, row)
        undocumented = [s for s in layer["states"] if s not in model.STATE_DOCS] if model.STATE_DOCS else []
        if undocumented:
            fail("declared_metrics", f"layer {lname}: states {undocumented} have no line in STATE_DOCS", wl, row)
    total = p["total"]
    for key in TOTAL_KEYS:
        if key not in total:
            fail(c, f"total has no '{key}'", wl, row)
    extra = set(total) - set(TOTAL_KEYS)
    declared = {m.name for m in model.TOTAL_METRICS}
    if extra - declared:
        fail("declared_metrics", f"undeclared total keys {sorted(extra - declared)} (add them to TOTAL_METRICS)", wl, row)
    if declared - extra:
        fail("declared_metrics", f"declared totals {sorted(declared - extra)} are missing from the result", wl, row)
    _check_feasibility(p, row, wl, fail)
    _check_ranges(p, row, wl, fail)


def _check_feasibility(p: dict[str, Any], row: dict[str, Any], wl: str, fail: _Fail) -> None:
    c = "infeasible_reasons"
    for what, d in [("the point", p)] + [(f"layer {layer['name']}", layer) for layer in p["layers"]]:
        reason = d["infeasible_reason"]
        if not isinstance(d["feasible"], bool):
            fail(c, f"{what}: feasible is {d['feasible']!r}, not a bool", wl, row)
        if d["feasible"] and reason is not None:
            fail(c, f"{what} is feasible but has a reason {reason!r}", wl, row)
        if not d["feasible"] and not (isinstance(reason, str) and reason.strip()):
            fail(c, f"{what} is infeasible without a reason (infeasible_reason={reason!r})", wl, row)
    if p["feasible"] and not all(layer["feasible"] for layer in p["layers"]):
        bad = [layer["name"] for layer in p["layers"] if not layer["feasible"]]
        fail(c, f"the point is feasible but layers {bad} are not", wl, row)
    if p["feasible"]:
        nulls = [f"total.{k}" for k in TOTAL_KEYS if p["total"][k] is None and k not in NOT_APPLICABLE]
        nulls += [f"{layer['name']}.{m.name}" for layer in p["layers"] for m in LAYER_METRICS if layer[m.name] is None]
        if nulls:
            fail(c, f"a feasible point has null (NaN/inf) contract values: {nulls[:5]}", wl, row)


def _check_ranges(p: dict[str, Any], row: dict[str, Any], wl: str, fail: _Fail) -> None:
    c = "units_and_ranges"
    for what, d in [("total", p["total"])] + [(f"layer {layer['name']}", layer) for layer in p["layers"]]:
        for key in NON_NEGATIVE:
            v = d.get(key)
            if v is not None and not v >= 0:
                fail(c, f"{what}: {key}={v} is negative", wl, row)
        u = d.get("utilization")
        if u is not None and not -UTIL_SLACK <= u <= 1 + UTIL_SLACK:
            fail(c, f"{what}: utilization={u} is outside [0, 1]", wl, row)
        rd, wr, both = d.get("dram_read_bytes"), d.get("dram_write_bytes"), d.get("dram_bytes")
        if None not in (rd, wr, both) and not math.isclose(both, rd + wr, rel_tol=REL_TOL, abs_tol=1e-12):
            fail(c, f"{what}: dram_bytes={both} != dram_read_bytes + dram_write_bytes = {rd + wr}", wl, row)
    t = p["total"]
    if t["macs"] != sum(layer["macs"] for layer in p["layers"]):
        fail(c, f"total macs={t['macs']} != the sum of layer MACs", wl, row)
    if t["time_s"] is None:  # a time the design cannot produce: nothing divided by it can be produced either
        made_up = [k for k in PER_TIME if t[k] is not None]
        if made_up:
            fail(c, f"total time_s is null but {', '.join(f'{k}={t[k]}' for k in made_up)} are not", wl, row)
    if not p["feasible"]:
        return
    time_s = t["time_s"]
    if not (isinstance(time_s, (int, float)) and math.isfinite(time_s) and time_s > 0):
        fail(c, f"a feasible point has total time_s={time_s} (must be > 0 and finite)", wl, row)
    if t["area_mm2"] is not None and not t["area_mm2"] > 0:
        fail(c, f"a feasible point has area_mm2={t['area_mm2']} (must be > 0)", wl, row)
    for key, want in (("macs_per_s", t["macs"] / time_s), ("fps", 1.0 / time_s)):
        if not math.isclose(t[key], want, rel_tol=REL_TOL):
            fail(c, f"total {key}={t[key]} != {want} (from time_s)", wl, row)


# ---- comparisons, corners, pickling ----
def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Path of the first difference between two results (bit for bit; NaN equals NaN; any key order), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):  # key order is not part of the contract
            return f"{path or 'top'}: keys {sorted(set(a) ^ set(b))} in one result only"
        for k in a:
            if (d := _first_difference(a[k], b[k], f"{path}.{k}" if path else k)) is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if (d := _first_difference(x, y, f"{path}[{i}]")) is not None:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    if type(a) is not type(b) or a != b:
        return f"{path}: {a!r} != {b!r}"
    return None


def _corner(model: Model, side: str) -> dict[str, Any]:
    """Every parameter at its lowest (``low``) or highest (``high``) declared value."""
    out: dict[str, Any] = {}
    for p in model.params:
        if p.kind in ("int", "float"):
            v = p.low if side == "low" else p.high
            out[p.name] = int(v) if p.kind == "int" else float(v)
        elif p.kind == "bool":
            out[p.name] = side == "high"
        else:
            out[p.name] = p.choices[0] if side == "low" else p.choices[-1]
    return out


def _check_pickle(model: Model, row: dict[str, Any], wl: str, fail: _Fail) -> None:
    try:
        copy = pickle.loads(pickle.dumps(model))
    except Exception as exc:
        fail("picklable", f"the model does not pickle ({type(exc).__name__}: {exc}); define its class at module "
                          "level, or load it with archmodels.get_model('file.py:Class')")
    if (d := _first_difference(model.evaluate(wl, **row), copy.evaluate(wl, **row))) is not None:
        fail("picklable", f"the unpickled model gives other results at {d}", wl, row)

"""Calibration cases: load the published figures and evaluate one case with a model.

Shared by ``dse validate`` (which reports every case) and the fits of
:mod:`archmodels.fitted` (which minimise the error over a constant's target
cases, the ones the calibration file tags ``basis: fitted`` with
``basis_note: CONSTANT``). The file is ``dse/data/calibration.yaml``, read
as data (no import of the ``dse`` package, which sits above this one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workloads import load_workload, yamlio

from . import available, get_model

PATH = Path(__file__).resolve().parents[1] / "dse" / "data" / "calibration.yaml"
#: keys of a case that are not model parameters
CASE_KEYS = {"layer", "layer_kind", "total", "metric", "value", "rtol", "note", "workload", "basis", "basis_note",
             "published_as"}


def load() -> dict[str, Any]:
    """Every calibration section (the package copy, with its basis tags)."""
    return yamlio.load(PATH.read_text())


def arch_of(section: str) -> str | None:
    """The registered model a calibration section belongs to (longest prefix)."""
    best = None
    for name in available():
        if (section == name or section.startswith(name + "_")) and (best is None or len(name) > len(best)):
            best = name
    return best


def cases_of(constant: str, cal: dict[str, Any] | None = None) -> list[tuple[str, dict, dict]]:
    """(section, section body, case) of every case fitted with ``constant`` (its ``basis_note``)."""
    cal = load() if cal is None else cal
    return [(s, body, c) for s, body in cal.items() for c in body.get("cases", [])
            if c.get("basis") == "fitted" and c.get("basis_note") == constant]


def case_value(arch: str, body: dict[str, Any], case: dict[str, Any]) -> Any:
    """The model's value for one case (section parameters, overridden by the case's parameter keys)."""
    model = get_model(arch)
    params = dict(body.get("params", {}))
    for k, v in case.items():
        if k in CASE_KEYS:
            continue
        key = model.VALIDATION_ALIASES.get(k, k)
        if key in model.params:
            params[key] = v
    params = model.params.resolve({k: float(v) if model.params.get(k).kind == "float" else v for k, v in params.items()})
    metric = case["metric"]
    workload = case.get("workload", body.get("workload"))
    value = model.validation_metric(metric, workload, params, case, body)
    if value is NotImplemented:
        value = pick(model.evaluate(load_workload(workload), **params), case, metric)
    return value


def pick(result: dict[str, Any], case: dict[str, Any], metric: str) -> Any:
    """A case's metric from a contract dictionary: a layer (``A+B`` sums two), a layer kind, or the total."""
    if "layer" in case:
        names = str(case["layer"]).split("+")
        layers = [lay for lay in result["layers"] if lay["name"] in names]
        if len(layers) != len(names):
            raise KeyError(f"layer(s) {case['layer']} not in {result['workload']}")
        vals = [lay.get(metric) for lay in layers]
        return None if None in vals else (vals[0] if len(vals) == 1 else sum(vals))
    if "layer_kind" in case:
        layers = [lay for lay in result["layers"] if lay["kind"] == case["layer_kind"]]
        if metric == "macs_per_s":
            return sum(lay["macs"] for lay in layers) / sum(lay["time_s"] for lay in layers)
        return sum(lay[metric] for lay in layers)
    return result["total"].get(metric)


def compare(value: Any, published: Any, rtol: float | None) -> bool:
    """Whether a model value meets a published one (range, exact string, or relative tolerance)."""
    if value is None:
        return False
    if isinstance(published, list):
        return published[0] <= value <= published[1]
    if isinstance(published, str):
        return str(value) == published
    return abs(value - published) <= (rtol or 0.0) * abs(published) + 1e-12


def rel_error(value: Any, published: Any) -> float:
    """|relative error| of a value against a figure; 0 inside a published range (distance to it outside)."""
    if value is None:
        return float("inf")
    if isinstance(published, list):
        lo, hi = published
        return 0.0 if lo <= value <= hi else min(abs(value - lo), abs(value - hi)) / max(abs(hi), 1e-12)
    return abs(value - published) / abs(published)

"""``dse validate``: every model against the published calibration figures.

Cases come from ``dse/data/calibration.yaml`` (a copy of the shared
calibration file with its sources). A section belongs to the registered
model whose name is its longest prefix (``emaxvr_spm256`` -> ``emaxvr``).
A case picks its metric from:

* ``layer: NAME`` -> ``layers[NAME].metric``; ``"A+B"`` sums the two layers;
* ``layer_kind: KIND`` -> the layers of that kind together (``macs_per_s`` =
  their MACs / their time, other metrics summed);
* otherwise ``total.metric``;
* metrics that are not in the contract (``cycle_order``, ...) are computed by
  the model's :meth:`validation_metric` hook.

Keys of a case that name a model parameter (``placement: T1``) override the
section's parameters. A value ``[a, b]`` is a range; a string must match.

Every case carries a ``basis`` (added in the package copy): ``fitted`` (the
target of a fitted constant, ``archmodels/fitted.py``), ``by construction``
(holds by a definition or a rule derived from the same figure) or
``predicted``; the report prints the three counts and the error
distribution of the predicted cases, the only ones that test the models.
``published_as`` names the shared file's metric where the model's key for
that quantity differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

from workloads import yamlio

from archmodels import available, get_model
from workloads import load_workload

_CASE_KEYS = {"layer", "layer_kind", "total", "metric", "value", "rtol", "note", "workload", "basis", "basis_note",
              "published_as"}
BASES = ("fitted", "by construction", "predicted")
#: keys the package copy adds to the shared calibration file (see :func:`published_view`)
_ADDED_KEYS = ("basis", "basis_note", "published_as")


@dataclass
class CaseResult:
    section: str
    arch: str | None
    label: str
    metric: str
    model: Any
    published: Any
    rtol: float | None
    ok: bool | None  # None = skipped
    note: str = ""
    basis: str = "predicted"
    basis_note: str = ""

    @property
    def error(self) -> float | None:
        if isinstance(self.model, (int, float)) and isinstance(self.published, (int, float)) and self.published:
            return (self.model - self.published) / abs(self.published)
        return None


def calibration() -> dict[str, Any]:
    text = resources.files("dse").joinpath("data/calibration.yaml").read_text()
    return yamlio.load(text)


def published_view(cal: dict[str, Any]) -> dict[str, Any]:
    """The calibration as the shared file publishes it: added keys dropped, ``published_as`` metric names back."""
    out: dict[str, Any] = {}
    for section, body in cal.items():
        body = dict(body)
        if "cases" in body:
            cases = []
            for case in body["cases"]:
                case = dict(case)
                if "published_as" in case:
                    case["metric"] = case["published_as"]
                cases.append({k: v for k, v in case.items() if k not in _ADDED_KEYS})
            body["cases"] = cases
        out[section] = body
    return out


def published_digest(cal: dict[str, Any]) -> str:
    """SHA-256 of the published view (canonical JSON): the drift check's stored fingerprint."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(published_view(cal), sort_keys=True).encode()).hexdigest()


def arch_of(section: str) -> str | None:
    """The registered model a calibration section belongs to (longest prefix)."""
    best = None
    for name in available():
        if (section == name or section.startswith(name + "_")) and (best is None or len(name) > len(best)):
            best = name
    return best


def known_archs() -> set[str]:
    """Prefixes of all calibration sections (the models the figures are for)."""
    return {s.split("_")[0] for s in calibration()}


def run(arch: str | None = None) -> list[CaseResult]:
    """Evaluate every case (of ``arch`` only, if given)."""
    out: list[CaseResult] = []
    for section, body in calibration().items():
        owner = arch_of(section)
        prefix = section.split("_")[0]
        if arch is not None and owner != arch and prefix != arch:
            continue
        for case in body.get("cases", []):
            out.append(_run_case(section, owner, body, case))
    return out


def _label(case: dict[str, Any]) -> str:
    parts = []
    if "workload" in case:
        parts.append(str(case["workload"]))
    if "layer" in case:
        parts.append(str(case["layer"]))
    if "layer_kind" in case:
        parts.append(f"{case['layer_kind']} layers")
    if case.get("total"):
        parts.append("total")
    parts += [f"{k}={v}" for k, v in case.items() if k not in _CASE_KEYS]
    return " ".join(parts) or "total"


def _run_case(section: str, arch: str | None, body: dict[str, Any], case: dict[str, Any]) -> CaseResult:
    metric, published = case["metric"], case["value"]
    rtol = case.get("rtol")
    label = _label(case)
    basis, basis_note = case.get("basis", "predicted"), case.get("basis_note", "")
    if basis not in BASES:
        raise ValueError(f"calibration {section}: basis '{basis}' not one of {', '.join(BASES)}")
    if arch is None:
        return CaseResult(section, None, label, metric, None, published, rtol, None, "model not implemented yet",
                          basis, basis_note)
    model = get_model(arch)
    params = dict(body.get("params", {}))
    for k, v in case.items():
        if k in _CASE_KEYS:
            continue
        key = model.VALIDATION_ALIASES.get(k, k)
        if key in model.params:
            params[key] = v
    params = model.params.resolve({k: float(v) if model.params.get(k).kind == "float" else v for k, v in params.items()})
    workload = case.get("workload", body.get("workload"))
    value = model.validation_metric(metric, workload, params, case, body)
    if value is NotImplemented:
        result = model.evaluate(load_workload(workload), **params)
        value = _pick(result, case, metric)
    return CaseResult(section, arch, label, metric, value, published, rtol, _compare(value, published, rtol),
                      case.get("note", ""), basis, basis_note)


def _pick(result: dict[str, Any], case: dict[str, Any], metric: str) -> Any:
    if "layer" in case:
        names = str(case["layer"]).split("+")
        layers = [l for l in result["layers"] if l["name"] in names]
        if len(layers) != len(names):
            raise KeyError(f"layer(s) {case['layer']} not in {result['workload']}")
        vals = [l.get(metric) for l in layers]
        return None if None in vals else (vals[0] if len(vals) == 1 else sum(vals))
    if "layer_kind" in case:
        layers = [l for l in result["layers"] if l["kind"] == case["layer_kind"]]
        if metric == "macs_per_s":
            return sum(l["macs"] for l in layers) / sum(l["time_s"] for l in layers)
        return sum(l[metric] for l in layers)
    return result["total"].get(metric)


def _compare(value: Any, published: Any, rtol: float | None) -> bool:
    if value is None:
        return False
    if isinstance(published, list):
        return published[0] <= value <= published[1]
    if isinstance(published, str):
        return str(value) == published
    return abs(value - published) <= (rtol or 0.0) * abs(published) + 1e-12


def report(results: list[CaseResult]) -> str:
    """A fixed-width table: model vs published value and relative error."""
    head = (f"{'section':<22}{'case':<28}{'metric':<22}{'model':>14}{'published':>16}{'error':>9}{'tol':>7}  "
            f"{'basis':<16}result")
    lines = [head, "-" * len(head)]
    for r in results:
        err = f"{r.error * 100:+.1f}%" if r.error is not None else ""
        tol = f"{r.rtol * 100:.0f}%" if isinstance(r.rtol, (int, float)) and not isinstance(r.published, list) else ""
        status = "skipped" if r.ok is None else ("PASS" if r.ok else "FAIL")
        lines.append(f"{r.section:<22}{r.label[:27]:<28}{r.metric[:21]:<22}{_fmt(r.model):>14} "
                     f"{_fmt(r.published):>15}{err:>9}{tol:>7}  {r.basis:<16}{status}"
                     + (f"  ({r.note})" if r.ok is None else ""))
    checked = [r for r in results if r.ok is not None]
    lines.append(f"{sum(r.ok for r in checked)}/{len(checked)} cases within tolerance"
                 + (f", {len(results) - len(checked)} skipped" if len(checked) < len(results) else ""))
    lines += summary(results)
    return "\n".join(lines)


def summary(results: list[CaseResult]) -> list[str]:
    """The basis counts and the error distribution of the predicted cases (lines of text)."""
    counts = {b: [r for r in results if r.basis == b and r.ok is not None] for b in BASES}
    out = ["by basis: " + ", ".join(f"{len(v)} {b} ({sum(bool(r.ok) for r in v)} pass)" for b, v in counts.items())]
    errs = sorted(abs(r.error) for r in counts["predicted"] if r.error is not None)
    if errs:
        def q(p: float) -> float:
            return errs[min(len(errs) - 1, int(round(p * (len(errs) - 1))))]
        other = len(counts["predicted"]) - len(errs)
        out.append(f"predicted cases, |relative error| over {len(errs)} numeric ones: median {q(0.5) * 100:.1f} %, "
                   f"75th percentile {q(0.75) * 100:.1f} %, max {errs[-1] * 100:.1f} %; "
                   f"within 5 % {sum(e <= 0.05 for e in errs)}, within 15 % {sum(e <= 0.15 for e in errs)}"
                   + (f"; {other} more are ranges or orderings" if other else ""))
    return out


def markdown(results: list[CaseResult]) -> str:
    """The same comparison as a Markdown table (for docs/validation.md)."""
    lines = ["| section | case | metric | model | published | error | tolerance | basis | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        err = f"{r.error * 100:+.1f} %" if r.error is not None else ""
        if isinstance(r.published, list):
            tol = "range"
        elif isinstance(r.rtol, (int, float)):
            tol = f"{r.rtol * 100:.0f} %"
        else:
            tol = "exact"
        status = "skipped" if r.ok is None else ("pass" if r.ok else "**FAIL**")
        note = f" ({r.note})" if r.note else ""
        basis = r.basis + (f" ({r.basis_note})" if r.basis_note else "")
        lines.append(f"| {r.section} | {r.label}{note} | {r.metric} | {_fmt(r.model)} | {_fmt(r.published)} "
                     f"| {err} | {tol} | {basis} | {status} |")
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return f"[{v[0]:g}, {v[1]:g}]"
    return str(v)

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
from typing import Any

from archmodels import calibration as cal_mod
from archmodels.calibration import arch_of, compare as _compare

_CASE_KEYS = cal_mod.CASE_KEYS
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
    return cal_mod.load()


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
    value = cal_mod.case_value(arch, body, case)
    return CaseResult(section, arch, label, metric, value, published, rtol, _compare(value, published, rtol),
                      case.get("note", ""), basis, basis_note)


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

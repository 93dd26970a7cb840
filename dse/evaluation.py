"""Evaluate a model on a workload: the Python API behind ``dse evaluate``."""

from __future__ import annotations

import json
from typing import Any

from archmodels import get_model
from workloads import load_workload


def evaluate(arch: str, workload: str, **params: Any) -> dict[str, Any]:
    """One design point of ``arch`` on ``workload`` as the contract dictionary."""
    return get_model(arch).evaluate(load_workload(workload), **params)


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=1, allow_nan=False)


def _fmt(v: Any, width: int = 10) -> str:
    if v is None:
        return "-".rjust(width)
    if isinstance(v, float):
        if v == 0:
            return "0".rjust(width)
        if abs(v) >= 1e5 or abs(v) < 1e-2:
            return f"{v:.3e}".rjust(width)
        return f"{v:.4g}".rjust(width)
    return str(v).rjust(width)


def table(result: dict[str, Any]) -> str:
    """A readable per-layer table of a contract dictionary."""
    cols = [("layer", "name"), ("kind", "kind"), ("MACs", "macs"), ("cycles", "cycles"),
            ("time [s]", "time_s"), ("util", "utilization"), ("DRAM rd [B]", "dram_read_bytes"),
            ("DRAM wr [B]", "dram_write_bytes"), ("energy [J]", "energy_j")]
    widths = [max(9, len(h)) + 2 for h, _ in cols]
    widths[0] = max([6] + [len(l["name"]) + 1 for l in result["layers"]])
    lines = [f"{result['arch']} on {result['workload']}"]
    lines.append("params: " + ", ".join(f"{k}={v}" for k, v in result["params"].items()))
    lines.append("".join(h.rjust(w) if i else h.ljust(w) for i, ((h, _), w) in enumerate(zip(cols, widths))))
    for layer in result["layers"]:
        cells = []
        for i, ((_, key), w) in enumerate(zip(cols, widths)):
            v = layer[key]
            cells.append(str(v).ljust(w) if i == 0 else _fmt(v, w))
        note = ""
        if layer.get("fused_into"):
            note = f"  (fused into {layer['fused_into']})"
        elif not layer.get("feasible", True):
            note = f"  INFEASIBLE: {layer['infeasible_reason']}"
        lines.append("".join(cells) + note)
    t = result["total"]
    lines.append("total: " + ", ".join(f"{k}={_fmt(v, 0).strip()}" for k, v in t.items()))
    if not result["feasible"]:
        lines.append(f"INFEASIBLE: {result['infeasible_reason']}")
    return "\n".join(lines)


#: per-layer keys ``--explain`` prints when a model reports them (EMAXV/EMAXVR: issue 12)
EXPLAIN_KEYS = ("mapping", "schedule", "loop_nest", "tiles", "placement", "runner_up", "runner_up_lost")


def explain(result: dict[str, Any]) -> str:
    """Why each layer runs the way it does: the chosen mapping and the runner-up, for models that say."""
    lines = []
    for layer in result["layers"]:
        if layer.get("fused_into"):
            lines.append(f"{layer['name']}: fused into {layer['fused_into']}")
            continue
        have = [k for k in EXPLAIN_KEYS if layer.get(k) not in (None, "-")]
        if not have:
            continue
        lines.append(f"{layer['name']}:")
        lines += [f"  {k:15s} {layer[k]}" for k in have]
        ratios = [(k, layer.get(f"runner_up_{k}_ratio")) for k in ("time", "dram", "energy")]
        if all(v is not None for _, v in ratios):
            lines.append("  runner-up vs chosen: " + ", ".join(f"{k} x{v:.3f}" for k, v in ratios))
    return "\n".join(lines) if lines else "(this model reports no mapping explanation)"

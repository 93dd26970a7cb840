"""Plots of study and sweep results (matplotlib, no display needed).

* ``pareto_plot``: 2 objectives -> all points, infeasible ones grey, the
  front highlighted; 3 or more -> a pairwise scatter matrix.
* ``breakdown_plot``: per-layer stacked bars of a contract result's
  ``states`` (the EMAXVR thesis's Figure 17 style) and, when the model
  reports them, per-layer DRAM traffic by data kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

if TYPE_CHECKING:
    from .results import Table


def _label(metric: str) -> str:
    return metric.removeprefix("total.")


def _logscale(v: np.ndarray) -> bool:
    v = v[np.isfinite(v) & (v > 0)]
    return len(v) > 1 and v.max() / v.min() > 100


def pareto_plot(path: Path, table: Table, front: np.ndarray) -> None:
    """Draw the Pareto front of ``table`` into ``path``."""
    vals = table.values()
    finite = np.isfinite(vals).all(axis=1)
    feas = table.feasible() & finite
    infeas = ~table.feasible() & finite
    m = vals.shape[1]
    title = f"{len(vals)} points, {int(feas.sum())} feasible, {int(front.sum())} on the front"
    if m == 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.hist(vals[feas, 0], bins=40, color="tab:blue", alpha=0.7, label="feasible")
        if infeas.any():
            ax.hist(vals[infeas, 0], bins=40, color="0.7", alpha=0.7, label="infeasible")
        ax.axvline(vals[front, 0][0] if front.any() else np.nan, color="tab:red", label="best")
        ax.set_xlabel(_label(table.objectives[0]))
        ax.legend()
    elif m == 2:
        fig, ax = plt.subplots(figsize=(6.5, 5))
        _scatter(ax, vals[:, 0], vals[:, 1], feas, infeas, front, table.directions)
        ax.set_xlabel(_label(table.objectives[0]))
        ax.set_ylabel(_label(table.objectives[1]))
        ax.legend(loc="best", fontsize=8)
    else:
        fig, axes = plt.subplots(m, m, figsize=(3 * m, 3 * m))
        for i in range(m):
            for j in range(m):
                ax = axes[i, j]
                if i == j:
                    ax.hist(vals[feas, i], bins=30, color="tab:blue", alpha=0.7)
                    ax.hist(vals[front, i], bins=30, color="tab:red", alpha=0.7)
                else:
                    _scatter(ax, vals[:, j], vals[:, i], feas, infeas, front, None)
                if i == m - 1:
                    ax.set_xlabel(_label(table.objectives[j]))
                if j == 0:
                    ax.set_ylabel(_label(table.objectives[i]))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _scatter(ax, x, y, feas, infeas, front, directions) -> None:
    if infeas.any():
        ax.scatter(x[infeas], y[infeas], s=8, color="0.75", label="infeasible")
    ax.scatter(x[feas & ~front], y[feas & ~front], s=10, color="tab:blue", alpha=0.6, label="feasible")
    if front.any():
        o = np.argsort(x[front])
        fx, fy = x[front][o], y[front][o]
        ax.scatter(fx, fy, s=22, color="tab:red", label="Pareto front", zorder=3)
        if directions is not None:
            ax.step(fx, fy, where="post" if directions[1] == "minimize" else "pre", color="tab:red", lw=1)
    shown = feas | infeas
    if _logscale(x[shown]):
        ax.set_xscale("log")
    if _logscale(y[shown]):
        ax.set_yscale("log")


def breakdown_plot(path: Path, result: dict[str, Any]) -> None:
    """Per-layer state breakdown (stacked, share of time) and DRAM traffic by kind."""
    layers = [l for l in result["layers"] if not l.get("fused_into")]
    names = [l["name"] for l in layers]
    states: list[str] = []
    for l in layers:
        states += [s for s in l["states"] if s not in states]
    traffic_keys = sorted({k for l in layers for k in l if k.startswith("dram_") and k.endswith("_bytes")
                           and k not in ("dram_read_bytes", "dram_write_bytes", "dram_bytes")})
    ncols = 2 if traffic_keys else 1
    fig, axes = plt.subplots(1, ncols, figsize=(6 * ncols + 1, 4.5), squeeze=False)
    ax = axes[0, 0]
    bottom = np.zeros(len(layers))
    for s in states:
        cyc = np.array([l["states"].get(s) or 0.0 for l in layers])
        tot = np.array([sum(v or 0.0 for v in l["states"].values()) for l in layers])
        share = np.divide(cyc, tot, out=np.zeros_like(cyc), where=tot > 0) * 100
        ax.bar(names, share, bottom=bottom, label=s)
        bottom += share
    ax.set_ylabel("share of layer cycles [%]")
    ax.set_title(f"{result['arch']} on {result['workload']}: state breakdown")
    ax.legend(fontsize=7, ncol=2)
    ax.tick_params(axis="x", rotation=60)
    if traffic_keys:
        ax = axes[0, 1]
        bottom = np.zeros(len(layers))
        for k in traffic_keys:
            mb = np.array([(l.get(k) or 0.0) / 1e6 for l in layers])
            ax.bar(names, mb, bottom=bottom, label=k.removeprefix("dram_").removesuffix("_bytes"))
            bottom += mb
        ax.set_ylabel("DRAM traffic [MB]")
        ax.set_title("DRAM traffic by data kind")
        ax.legend(fontsize=7)
        ax.tick_params(axis="x", rotation=60)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)

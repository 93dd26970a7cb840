"""Plots of study and sweep results (matplotlib, no display needed).

Every figure uses the Okabe-Ito colour-blind-safe palette, axes in human
units (:mod:`dse.units`) and log scales where values span decades. Keys
sit right of their axes (:func:`legend_outside`): they cover no data.

* ``pareto_plot``: 2 objectives -> all points, infeasible ones as grey
  crosses, the front highlighted, constraint bounds drawn as dashed lines;
  3 or more -> a pairwise scatter matrix.
* ``parallel_plot``: parallel coordinates of the objectives (3 or more).
* ``breakdown_plot``: per-layer bars of a contract result: time by state
  (the EMAXVR thesis's Figure 17 style), DRAM traffic by data kind, energy
  by component and utilization; a vector layer's time and DRAM bytes (no states, no traffic kinds) are
  a grey "vector unit: <unit>" part, so each bar adds up to the layer's total.
* ``convergence_plot``: best value or hypervolume over the designs evaluated, and the front
  at 25/50/100 % of the trials.
* ``importance_plot``: parameter importances per objective.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .units import label as unit_label, plain_name, scale_for  # noqa: E402

if TYPE_CHECKING:
    from .results import Table

#: Okabe & Ito (2008), "Color Universal Design": distinguishable with any colour-vision deficiency.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000"]
GREY = "#9A9A9A"
FRONT = "#D55E00"  # vermillion
FEASIBLE = "#0072B2"  # blue


@dataclass(frozen=True)
class Bound:
    """A constraint bound to draw: ``metric op bound`` (op ``<=`` or ``>=``)."""

    metric: str
    op: str
    bound: float

    @property
    def text(self) -> str:
        s = scale_for(self.metric, [self.bound])
        return f"{unit_label(self.metric, s).split(' [')[0]} {'≤' if self.op == '<=' else '≥'} {s(self.bound):g} {s.unit}".strip()


def colours(n: int) -> list[str]:
    return [OKABE_ITO[i % len(OKABE_ITO)] for i in range(n)]


def _logscale(v: np.ndarray) -> bool:
    v = v[np.isfinite(v) & (v > 0)]
    return len(v) > 1 and v.max() / v.min() > 30


#: most rows a legend outside the axes takes before it adds a column (:func:`legend_outside`)
LEGEND_ROWS = 12


def legend_outside(ax, fontsize: float = 7, reverse: bool = False, **kw):
    """``ax``'s legend right of its axes, outside the data area, so it covers no bar, point or line.

    One column up to :data:`LEGEND_ROWS` entries, then as many as it takes; ``reverse`` lists the entries
    last first (stacked bars: the top part first, as on the page). :func:`_save`'s ``tight_layout`` counts
    the legend and shrinks the axes to make room for it (``tests/test_legends.py``)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    ncol = -(-len(handles) // LEGEND_ROWS)
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=fontsize, ncol=ncol, reverse=reverse, **kw)


def _save(fig, path: Path, dpi: int = 110) -> None:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def pareto_plot(path: Path, table: Table, front: np.ndarray, title: str | None = None,
                bounds: Sequence[Bound] = ()) -> None:
    """Draw the Pareto front of ``table`` into ``path`` (see module doc)."""
    vals = table.values()
    finite = np.isfinite(vals).all(axis=1)
    feas = table.feasible() & finite
    infeas = ~table.feasible() & finite
    m = vals.shape[1]
    scales = [scale_for(o, vals[finite, j]) for j, o in enumerate(table.objectives)]
    shown = vals / np.array([s.factor for s in scales])
    counts = f"{len(vals)} points, {int(feas.sum())} feasible, {int(front.sum())} on the front"
    head = f"{title}\n{counts}" if title else counts
    labels = [unit_label(o, s) for o, s in zip(table.objectives, scales)]
    if m == 1:
        fig, ax = plt.subplots(figsize=(8, 4.2))
        ax.hist(shown[feas, 0], bins=40, color=FEASIBLE, alpha=0.75, label="feasible")
        if infeas.any():
            ax.hist(shown[infeas, 0], bins=40, color=GREY, alpha=0.6, label="infeasible")
        if front.any():
            ax.axvline(shown[front, 0][0], color=FRONT, lw=2, label="best")
        _draw_bounds(ax, bounds, table.objectives, scales, axis_of={0: "x"})
        ax.set_xlabel(labels[0])
        ax.set_ylabel("trials")
        legend_outside(ax, fontsize=8)
    elif m == 2:
        fig, ax = plt.subplots(figsize=(8.6, 5.2))
        _scatter(ax, shown[:, 0], shown[:, 1], feas, infeas, front, table.directions)
        _draw_bounds(ax, bounds, table.objectives, scales, axis_of={0: "x", 1: "y"})
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        legend_outside(ax, fontsize=8)
    else:
        fig, axes = plt.subplots(m, m, figsize=(2.9 * m + 1.8, 2.9 * m))  # + the key right of the panels
        for i in range(m):
            for j in range(m):
                ax = axes[i, j]
                if i == j:
                    # the front's bars on the feasible ones' bins (the front is feasible), log-spaced on a log axis
                    bins = _bins(shown[feas, i], 30)
                    ax.hist(shown[feas, i], bins=bins, color=FEASIBLE, alpha=0.7)
                    ax.hist(shown[front, i], bins=bins, color=FRONT, alpha=0.8)
                    if _logscale(shown[feas, i]):
                        ax.set_xscale("log")
                else:
                    _scatter(ax, shown[:, j], shown[:, i], feas, infeas, front, None)
                    _draw_bounds(ax, bounds, table.objectives, scales, axis_of={j: "x", i: "y"})
                if i == m - 1:
                    ax.set_xlabel(labels[j], fontsize=8)
                if j == 0:
                    ax.set_ylabel(labels[i], fontsize=8)
                ax.tick_params(labelsize=7)
        # the key of every off-diagonal panel, right of the top-right one (outside every panel)
        handles, names = axes[0, 1].get_legend_handles_labels()
        axes[0, m - 1].legend(handles, names, loc="upper left", bbox_to_anchor=(1.04, 1.0), borderaxespad=0.0,
                              fontsize=8)
    fig.suptitle(head, fontsize=10)
    _save(fig, path)


def _bins(v: np.ndarray, n: int) -> np.ndarray | int:
    """``n`` histogram bins over ``v``: log-spaced where the axis is logarithmic (:func:`_logscale`), so every
    bar has the same width on the page."""
    v = v[np.isfinite(v)]
    if _logscale(v):
        v = v[v > 0]  # (what a log axis shows)
        return np.geomspace(v.min(), v.max(), n + 1)
    if len(v) and v.max() > v.min():
        return np.linspace(v.min(), v.max(), n + 1)
    return n


def _draw_bounds(ax, bounds: Sequence[Bound], objectives: Sequence[str], scales, axis_of: dict[int, str]) -> None:
    """Dashed lines at the constraint bounds on objectives shown on this axes."""
    for b in bounds:
        if b.metric not in objectives:
            continue
        j = list(objectives).index(b.metric)
        if j not in axis_of:
            continue
        v = scales[j](b.bound)
        line = ax.axvline if axis_of[j] == "x" else ax.axhline
        line(v, color="#000000", ls="--", lw=1.2, label=f"constraint: {b.text}")


def _scatter(ax, x, y, feas, infeas, front, directions) -> None:
    if infeas.any():
        ax.scatter(x[infeas], y[infeas], s=14, marker="x", color=GREY, lw=0.8, label="infeasible")
    ax.scatter(x[feas & ~front], y[feas & ~front], s=10, color=FEASIBLE, alpha=0.55, label="feasible")
    if front.any():
        o = np.argsort(x[front])
        fx, fy = x[front][o], y[front][o]
        ax.scatter(fx, fy, s=26, color=FRONT, edgecolor="black", lw=0.4, label="Pareto front", zorder=3)
        if directions is not None:
            ax.step(fx, fy, where="post" if directions[1] == "minimize" else "pre", color=FRONT, lw=1)
    shown = feas | infeas
    if _logscale(x[shown]):
        ax.set_xscale("log")
    if _logscale(y[shown]):
        ax.set_yscale("log")
    ax.grid(True, which="major", alpha=0.3)


def parallel_plot(path: Path, table: Table, front: np.ndarray, title: str | None = None) -> None:
    """Parallel coordinates of every objective: feasible points grey, the front coloured.

    Each axis runs from its best (bottom) to its worst (top) value over the
    feasible points, in log space when the values span decades; the end
    labels give the values in human units.
    """
    vals = table.values()
    feas = table.feasible() & np.isfinite(vals).all(axis=1)
    m = vals.shape[1]
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * m), 4.6))
    if not feas.any():
        ax.text(0.5, 0.5, "no feasible points", ha="center", transform=ax.transAxes)
        _save(fig, path)
        return
    norm = np.zeros_like(vals)
    ends = []
    for j in range(m):
        v = vals[feas, j]
        logs = _logscale(v)
        t = (lambda a: np.log10(np.maximum(a, 1e-300))) if logs else (lambda a: a)
        lo, hi = t(v).min(), t(v).max()
        span = hi - lo or 1.0
        norm[:, j] = (t(vals[:, j]) - lo) / span
        if table.directions[j] == "maximize":
            norm[:, j] = 1 - norm[:, j]
        s = scale_for(table.objectives[j], v)
        best, worst = (v.min(), v.max()) if table.directions[j] == "minimize" else (v.max(), v.min())
        ends.append((unit_label(table.objectives[j], s) + (" (log)" if logs else ""), s(best), s(worst)))
    xs = np.arange(m)
    for i in np.flatnonzero(feas & ~front):
        ax.plot(xs, norm[i], color=GREY, alpha=0.25, lw=0.7)
    fi = np.flatnonzero(front)
    cmap = matplotlib.colormaps["cividis"]
    order = fi[np.argsort(norm[fi, 0])] if len(fi) else fi
    for k, i in enumerate(order):
        ax.plot(xs, norm[i], color=cmap(k / max(1, len(order) - 1)), lw=1.6, alpha=0.9)
    ax.set_xticks(xs, [e[0] for e in ends], fontsize=8)
    ax.set_yticks([0, 1], ["best", "worst"])
    for j, (_, best, worst) in enumerate(ends):
        ax.annotate(f"{best:.3g}", (j, 0), xytext=(4, -12), textcoords="offset points", fontsize=7)
        ax.annotate(f"{worst:.3g}", (j, 1), xytext=(4, 4), textcoords="offset points", fontsize=7)
        ax.axvline(j, color="black", lw=0.6)
    ax.set_ylim(-0.08, 1.08)
    ax.set_title((title + "\n" if title else "") + "parallel coordinates: Pareto front coloured, other feasible points grey",
                 fontsize=9)
    _save(fig, path)


#: per-layer ``dram_*_bytes`` keys that are not a kind of traffic: the totals, and EMAX's
#: ``dram_compulsory_bytes`` (a lower bound on the layer's traffic, not a part of it)
NOT_DRAM_KINDS = ("dram_read_bytes", "dram_write_bytes", "dram_bytes", "dram_compulsory_bytes")
#: the breakdown series of vector layers (no states, no traffic kinds), drawn grey and cross-hatched
VECTOR_UNIT = "vector unit: "


def _left_out(layers: list[dict[str, Any]], series: dict[str, np.ndarray], whole: np.ndarray,
              fallback: str = "unattributed") -> dict[str, np.ndarray]:
    """What ``series`` leave out of each layer's ``whole``, named by the unit that ran the layer.

    A layer costed on a model's vector unit (``vector_unit`` label: softmax, LayerNorm, elementwise ops,
    docs/vector.md) has all-zero states and no traffic kinds, so the stacked bars would drop its time and
    DRAM bytes; they go to "vector unit: <unit>" instead (``fallback`` when the layer names no unit)."""
    rest = whole - sum(series.values(), np.zeros_like(whole))
    out: dict[str, np.ndarray] = {}
    for i, l in enumerate(layers):
        if rest[i] > 1e-9 * abs(whole[i]):
            key = f"{VECTOR_UNIT}{l['vector_unit']}" if l.get("vector_unit") else fallback
            out.setdefault(key, np.zeros_like(whole))[i] = rest[i]
    return out


def layer_breakdown(result: dict[str, Any]) -> dict[str, Any]:
    """Per-layer series of a contract result: time by state, DRAM by kind, energy by component.

    Each layer's series add up to its ``time_s``, ``dram_bytes`` and ``energy_j``: what its states or
    kinds do not cover (vector layers) is a series of its own (:func:`_left_out`)."""
    layers = [l for l in result["layers"] if not l.get("fused_into")]
    states: list[str] = []
    for l in layers:
        states += [s for s in (l.get("states") or {}) if s not in states]
    time_by_state: dict[str, np.ndarray] = {}
    t = np.array([l.get("time_s") or 0.0 for l in layers])
    tot = np.array([sum(v or 0.0 for v in (l.get("states") or {}).values()) for l in layers])
    for s in states:
        cyc = np.array([(l.get("states") or {}).get(s) or 0.0 for l in layers])
        time_by_state[s] = np.divide(cyc, tot, out=np.zeros_like(cyc), where=tot > 0) * t
    time_by_state.update(_left_out(layers, time_by_state, t, "unattributed" if states else "total"))
    kinds = sorted({k for l in layers for k in l if k.startswith("dram_") and k.endswith("_bytes")
                    and k not in NOT_DRAM_KINDS})
    dram = {k.removeprefix("dram_").removesuffix("_bytes"): np.array([l.get(k) or 0.0 for l in layers]) for k in kinds}
    if not dram:
        dram = {"read": np.array([l.get("dram_read_bytes") or 0.0 for l in layers]),
                "write": np.array([l.get("dram_write_bytes") or 0.0 for l in layers])}
    dram.update(_left_out(layers, dram, np.array([l.get("dram_bytes") or 0.0 for l in layers])))
    comps = sorted({k for l in layers for k in l if k.endswith("_energy_j") and k != "energy_j"})
    energy = {k.removesuffix("_energy_j"): np.array([l.get(k) or 0.0 for l in layers]) for k in comps}
    if energy:
        rest = np.array([l.get("energy_j") or 0.0 for l in layers]) - sum(energy.values())
        if (rest > 1e-6 * np.maximum(1e-30, sum(energy.values()))).any():
            energy["other"] = np.maximum(rest, 0.0)
    else:
        energy = {"total": np.array([l.get("energy_j") or 0.0 for l in layers])}
    return {
        "names": [l["name"] for l in layers],
        "time_by_state": time_by_state,
        "dram_by_kind": dram,
        "energy_by_component": energy,
        "utilization": np.array([l.get("utilization") or 0.0 for l in layers]),
    }


def _stacked(ax, names: list[str], series: dict[str, np.ndarray], metric: str, title: str) -> None:
    allv = np.concatenate([v for v in series.values()]) if series else np.zeros(0)
    s = scale_for(metric, [float(x) for x in np.sum(list(series.values()), axis=0)] if series else [])
    bottom = np.zeros(len(names))
    x = np.arange(len(names))
    for i, ((k, v), c) in enumerate(zip(series.items(), colours(len(series)))):
        # past the palette's 8 colours, hatching keeps the series apart; time or bytes outside the states or
        # kinds (a vector layer's, _left_out) grey and cross-hatched: not one of the model's states
        outside = k.startswith(VECTOR_UNIT) or k == "unattributed"
        hatch = "xx" if outside else "//" if i >= len(OKABE_ITO) else None
        # a series that is zero on every layer keeps its colour (the same state, the same colour on every point's
        # chart) but stays out of the key (an "_" label), which lists what the bars show
        ax.bar(x, v / s.factor, bottom=bottom, label=k if np.any(v) else f"_{k}", color=GREY if outside else c,
               width=0.8, hatch=hatch, edgecolor="white" if hatch else None)
        bottom += v / s.factor
    if bottom.any():
        ax.set_ylim(bottom=0)
    else:
        ax.set_ylim(0, 1)
        ax.text(0.5, 0.5, "0 on every layer", ha="center", transform=ax.transAxes, color=GREY)
    ax.set_ylabel(unit_label(metric, s))
    ax.set_title(title, fontsize=9)
    ax.set_xticks(x, names, rotation=60, ha="right", fontsize=7)
    if (allv > 0).any():  # (no key for an empty panel: "0 on every layer")
        legend_outside(ax, reverse=True)  # top of the stack first


def breakdown_plot(path: Path, result: dict[str, Any], title: str | None = None) -> None:
    """Four per-layer panels: time by state, DRAM traffic by kind, energy by component, utilization."""
    b = layer_breakdown(result)
    names = b["names"]
    fig, axes = plt.subplots(2, 2, figsize=(14, 7.2))
    _stacked(axes[0, 0], names, b["time_by_state"], "time_s", "time by state")
    _stacked(axes[0, 1], names, b["dram_by_kind"], "dram_bytes", "DRAM traffic by data kind")
    _stacked(axes[1, 0], names, b["energy_by_component"], "energy_j", "energy by component")
    ax = axes[1, 1]
    x = np.arange(len(names))
    ax.bar(x, b["utilization"] * 100, color=OKABE_ITO[2], width=0.8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("utilization [%]")
    ax.set_title("MAC utilization", fontsize=9)
    ax.set_xticks(x, names, rotation=60, ha="right", fontsize=7)
    tot = result.get("total", {})
    sub = (f"total {scale_for('time_s', [tot.get('time_s')])(tot.get('time_s')) or 0:.4g} "
           f"{scale_for('time_s', [tot.get('time_s')]).unit}, "
           f"{(tot.get('utilization') or 0) * 100:.1f} % utilization")
    fig.suptitle(f"{title or result['arch'] + ' on ' + result['workload']}: per-layer breakdown ({sub})", fontsize=10)
    _save(fig, path)


#: the convergence plot's x axis: the budget's unit (docs/studies.md, "Repeated designs"), not Optuna's trial
#: numbers, which also count the repeats answered from earlier trials
DESIGNS_AXIS = "designs evaluated (trials that are not repeats)"


def convergence_plot(path: Path, values: np.ndarray, feasible: np.ndarray,
                     objectives: Sequence[str], directions: Sequence[str]) -> dict[str, Any]:
    """Best value (1 objective) or hypervolume (2+) over the designs evaluated, and the front at 25/50/100 %.

    ``values`` and ``feasible`` have one row per design, in the order the
    search evaluated them (a study's trials without repeats); the x axis
    counts them (1 .. n), the unit of the study's budget. The
    hypervolume is taken on objectives normalised to [0, 1] over every
    feasible point (log10 first where they span decades), all minimised,
    with reference point 1.1 per axis, and shown as the share of the box
    between the origin and the reference point that the front dominates.
    Returns the curve's points (for the report's text).
    """
    from .results import pareto_mask

    n = len(values)
    designs = np.arange(1, n + 1)  # the x axis: designs evaluated so far
    ok = feasible & np.isfinite(values).all(axis=1)
    m = values.shape[1]
    fig, axes = plt.subplots(1, 2 if m >= 2 else 1, figsize=(14 if m >= 2 else 6.5, 4.4), squeeze=False)
    ax = axes[0, 0]
    out: dict[str, Any] = {"x": [], "y": []}
    if m == 1:
        sign = 1.0 if directions[0] == "minimize" else -1.0
        v = np.where(ok, values[:, 0] * sign, np.inf)
        best = np.minimum.accumulate(v) * sign
        s = scale_for(objectives[0], values[ok, 0])
        good = np.isfinite(best)
        ax.plot(designs[good], best[good] / s.factor, color=OKABE_ITO[0], drawstyle="steps-post")
        ax.set_ylabel("best " + unit_label(objectives[0], s))
        if _logscale(best[good]):
            ax.set_yscale("log")
        out = {"x": designs[good].tolist(), "y": best[good].tolist(), "kind": "best"}
    else:
        norm = normalised(values, ok, directions)
        from optuna._hypervolume import compute_hypervolume  # no public function in Optuna 5 (notes)

        ref = np.full(m, 1.1)
        steps = np.unique(np.linspace(1, n, min(n, 80)).astype(int)) if n else np.zeros(0, int)
        hv = []
        for k in steps:
            sel = ok[:k]
            pts = norm[:k][sel]
            pts = pts[(pts <= ref).all(axis=1)]
            box = float(np.prod(ref))
            hv.append(float(compute_hypervolume(pts, ref, assume_pareto=False)) / box if len(pts) else 0.0)
        xs = designs[steps - 1] if n else steps
        ax.plot(xs, hv, color=OKABE_ITO[0], marker=".", ms=3)
        ax.set_ylabel("hypervolume [share of the reference box]")
        ax.set_ylim(0, 1)
        out = {"x": [int(x) for x in xs], "y": hv, "kind": "hypervolume"}
        ax2 = axes[0, 1]
        scales = [scale_for(o, values[ok, j]) for j, o in enumerate(objectives[:2])]
        for frac, c in zip((0.25, 0.5, 1.0), (OKABE_ITO[4], OKABE_ITO[1], FRONT)):
            k = max(1, int(round(frac * n)))
            mask = pareto_mask(values[:k], directions, ok[:k])
            pts = values[:k][mask][:, :2]
            pts = pts[np.argsort(pts[:, 0])]
            ax2.step(pts[:, 0] / scales[0].factor, pts[:, 1] / scales[1].factor, where="post", color=c,
                     marker="o", ms=3.5, label=f"front after {k} designs ({int(frac * 100)} %)")
        if _logscale(values[ok, 0]):
            ax2.set_xscale("log")
        if _logscale(values[ok, 1]):
            ax2.set_yscale("log")
        ax2.set_xlabel(unit_label(objectives[0], scales[0]))
        ax2.set_ylabel(unit_label(objectives[1], scales[1]))
        ax2.set_title("Pareto front as the search went on" + (" (first two objectives)" if m > 2 else ""), fontsize=9)
        legend_outside(ax2, fontsize=8)
        ax2.grid(True, alpha=0.3)
    ax.set_xlabel(DESIGNS_AXIS)
    ax.set_title("best feasible value over the designs evaluated" if m == 1
                 else "hypervolume of the feasible front over the designs evaluated", fontsize=9)
    ax.grid(True, alpha=0.3)
    _save(fig, path)
    return out


def normalised(values: np.ndarray, ok: np.ndarray, directions: Sequence[str]) -> np.ndarray:
    """Objectives mapped to [0, 1] over the ``ok`` rows, all minimised (log10 where they span decades)."""
    out = np.full(values.shape, np.inf)
    for j, d in enumerate(directions):
        v = values[:, j].astype(float)
        if not ok.any():
            continue
        logs = _logscale(v[ok])
        t = np.log10(np.clip(v, 1e-300, None)) if logs else v
        lo, hi = t[ok].min(), t[ok].max()
        span = (hi - lo) or 1.0
        z = (t - lo) / span
        out[:, j] = z if d == "minimize" else 1 - z
    out[~ok] = np.inf
    return out


def importance_plot(path: Path, importances: dict[str, dict[str, float]]) -> None:
    """Horizontal bars: one group per parameter, one bar per objective."""
    params: list[str] = []
    for imp in importances.values():
        params += [p for p in imp if p not in params]
    objs = list(importances)
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * max(1, len(params)) * max(1, len(objs)) ** 0.5 + 0.8))
    y = np.arange(len(params))
    h = 0.8 / max(1, len(objs))
    for k, (o, c) in enumerate(zip(objs, colours(len(objs)))):
        ax.barh(y + k * h, [importances[o].get(p, 0.0) for p in params], height=h, color=c,
                label=plain_name(o))
    ax.set_yticks(y + h * (len(objs) - 1) / 2, params, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("importance (PED-ANOVA, normalised to sum to 1 per objective)")
    ax.set_xlim(0, 1)
    legend_outside(ax, fontsize=8, title="objective")
    ax.grid(True, axis="x", alpha=0.3)
    _save(fig, path)


def bar_chart(ax, names: Sequence[str], values: Sequence[float | None], metric: str, title: str,
              colour_of: dict[str, str] | None = None, hatch: Sequence[bool] | None = None,
              faded: Sequence[bool] | None = None) -> None:
    """One bar per name in human units (log scale when the values span decades).

    Missing values are marked n/a; ``faded`` bars (infeasible designs) are
    drawn pale and labelled "infeasible".
    """
    arr = np.array([np.nan if v is None else float(v) for v in values])
    s = scale_for(metric, [v for v in arr if np.isfinite(v)])
    x = np.arange(len(names))
    cols = [(colour_of or {}).get(n.split(" ")[0], OKABE_ITO[0]) for n in names]
    bars = ax.bar(x, np.nan_to_num(arr / s.factor), color=cols, edgecolor="black", lw=0.5)
    for i, b in enumerate(bars):
        if hatch is not None and hatch[i]:
            b.set_hatch("//")
        if not np.isfinite(arr[i]):
            ax.annotate("n/a", (x[i], 0), ha="center", va="bottom", fontsize=7)
        elif faded is not None and faded[i]:
            b.set_alpha(0.3)
            ax.annotate("infeasible", (x[i], b.get_height()), ha="center", va="bottom", fontsize=6, rotation=90)
    if _logscale(arr[np.isfinite(arr)]):
        ax.set_yscale("log")
    ax.set_ylabel(unit_label(metric, s))
    ax.set_title(title, fontsize=9)
    ax.set_xticks(x, names, rotation=45, ha="right", fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)


#: a design's energy components, in stacking order: the models' energy parts (archmodels.result.ENERGY_PARTS) and
#: the leakage (static_power_w x time_s); what a model leaves unattributed is "other"
ENERGY_COMPONENTS = (("compute", "compute_energy_j"), ("SRAM", "sram_energy_j"), ("DRAM", "dram_energy_j"))


def energy_shares(totals: dict[str, Any]) -> dict[str, float] | None:
    """A design's total energy by component as shares of its ``energy_j``: compute, SRAM, DRAM, leakage
    (``static_power_w`` x ``time_s``), and "other" for what the parts leave out (a model without the part totals: all
    of it). None without a positive, finite energy (an infeasible design)."""
    e = totals.get("energy_j")
    if e is None or not np.isfinite(e) or e <= 0.0:
        return None
    parts = {name: float(totals.get(key) or 0.0) for name, key in ENERGY_COMPONENTS}
    static, time = totals.get("static_power_w"), totals.get("time_s")
    parts["leakage"] = float(static * time) if static is not None and time is not None else 0.0
    rest = e - sum(parts.values())
    parts["other"] = rest if rest > 1e-6 * e else 0.0  # (rounding of the parts' sums is not "other")
    return {k: v / e for k, v in parts.items()}


def share_bars(ax, names: Sequence[str], shares: Sequence[dict[str, float] | None], title: str,
               faded: Sequence[bool] | None = None) -> None:
    """Horizontal 100 % bars, one per name: each design's shares (:func:`energy_shares`) side by side, whatever
    its absolute energy (which spans decades between models); "n/a" where a design has none; ``faded`` bars
    (infeasible designs) pale and marked, as :func:`bar_chart` draws them."""
    keys = [k for k in ("compute", "SRAM", "DRAM", "leakage", "other") if any(s and s.get(k) for s in shares)]
    y = np.arange(len(names))[::-1]
    left = np.zeros(len(names))
    for i, (k, c) in enumerate(zip(keys, colours(len(keys)))):
        v = np.array([(s or {}).get(k, 0.0) * 100 for s in shares])
        bars = ax.barh(y, v, left=left, color=GREY if k == "other" else c, label=k, height=0.7,
                       hatch="xx" if k == "other" else None, edgecolor="white" if k == "other" else None)
        for b, pale in zip(bars, faded or ()):
            if pale:
                b.set_alpha(0.3)
        left += v
    for i, (yi, s) in enumerate(zip(y, shares)):
        if s is None:
            ax.annotate("n/a (no energy: infeasible)", (1, yi), va="center", fontsize=7, color=GREY)
        elif faded is not None and faded[i]:
            ax.annotate("infeasible", (99, yi), ha="right", va="center", fontsize=7)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the design's energy [%]")
    ax.set_yticks(y, names, fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    if keys:
        legend_outside(ax)

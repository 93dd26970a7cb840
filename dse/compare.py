"""``dse compare WORKLOAD``: one workload on every model that can run it.

For each model: (a) its published design point (the model's defaults, at the
node it was published in) and (b) its best design -- the fastest feasible
one -- under a common area budget and technology node, found by a short
study on the model's own hardware space (``dse/data/compare_spaces.yaml``).
The studies are ordinary study files written to ``OUT/studies/`` and run by
:func:`dse.study.run` on journal storages under ``OUT/``, so a second
``dse compare`` with the same arguments resumes them (and ``dse run``,
``dse report`` work on them too). Output: ``compare.csv`` and a
self-contained ``compare.html`` (table, bar charts of time, energy, DRAM
traffic, area and utilization, and one time-vs-area plot with every
model's front and published point). What "same technology" means per model
is in ``docs/report.md``.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from archmodels import REGISTRY, get_model
from workloads import load_workload
from workloads.errors import UserError, allowed

from . import plots, results
from .units import fmt, label as unit_label, scale_for

METRICS = ("total.time_s", "total.energy_j", "total.dram_bytes", "total.area_mm2", "total.utilization",
           "total.power_w")
#: compare.csv's energy columns after METRICS: the models' energy parts (archmodels.result.ENERGY_PARTS)
ENERGY_PART_COLUMNS = tuple(f"total.{k}" for _, k in plots.ENERGY_COMPONENTS)
DEFAULT_BUDGET_MM2 = 50.0
#: trials per model: about a minute for AlexNet over five models on this project's 2-core machine (docs/report.md)
DEFAULT_TRIALS = 100
BATCH = 20
_BUDGET_RE = re.compile(r"^\s*(?:total\.)?area_mm2\s*<=\s*([0-9.eE+]+)\s*$")


@dataclass
class Entry:
    """One model's two points and its study."""

    arch: str
    title: str
    published: dict[str, Any] | None = None
    best: dict[str, Any] | None = None
    best_params: dict[str, Any] = field(default_factory=dict)
    table: results.Table | None = None
    study_file: str = ""
    trials: int = 0
    node: str = ""
    note: str = ""
    doc: str = ""  # where the model is documented (Model.described_in)


def parse_budget(text: str | None) -> float:
    """``area_mm2<=50`` -> 50.0 (the only budget compare takes)."""
    if text is None:
        return DEFAULT_BUDGET_MM2
    m = _BUDGET_RE.match(text)
    if not m:
        raise UserError(f"compare: --budget {text!r}: write 'area_mm2<=X' (mm²), e.g. area_mm2<=50")
    v = float(m.group(1))
    if v <= 0:
        raise UserError(f"compare: --budget {text!r}: the area must be > 0 mm²")
    return v


def spaces() -> dict[str, dict[str, Any]]:
    from workloads import yamlio

    return yamlio.load((files("dse") / "data" / "compare_spaces.yaml").read_text())


def runnable(workload: str) -> tuple[list[str], dict[str, str]]:
    """Models whose layer kinds cover the workload's, and why the others are left out."""
    wl = load_workload(workload)
    kinds = sorted({layer.kind for layer in wl.layers})
    ok, skipped = [], {}
    for name in REGISTRY:
        missing = [k for k in kinds if k not in get_model(name).SUPPORTS]
        if missing:
            skipped[name] = f"does not run {', '.join(missing)} layers"
        else:
            ok.append(name)
    return ok, skipped


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", text).strip("_")


def study_dict(arch: str, workload: str, budget_mm2: float, tech_nm: int, trials: int, out_dir: Path) -> dict:
    """The study file of one model's comparison study (time and area, under the area budget)."""
    model = get_model(arch)
    space: dict[str, Any] = {}
    for k, v in spaces().get(arch, {}).items():
        if isinstance(v, dict):
            v = {kk: (budget_mm2 if vv == "BUDGET" else vv) for kk, vv in v.items()}
        space[k] = v
    if "tech_nm" in {p.name for p in model.params}:
        space["tech_nm"] = tech_nm
    return {
        "name": f"{arch}_{tech_nm}nm_area{budget_mm2:g}",
        "arch": arch,
        "workload": workload,
        "space": space,
        "objectives": [{"total.time_s": "minimize"}, {"total.area_mm2": "minimize"}],
        "constraints": [f"total.area_mm2 <= {budget_mm2:g}"],
        "sampler": {"name": "tpe", "seed": 0},
        "n_trials": trials,
        "batch_size": BATCH,
        "results_dir": str(out_dir / "studies"),
    }


def _run_one(arch: str, workload: str, budget_mm2: float, tech_nm: int, trials: int, out_dir: Path) -> str:
    """Write the model's study file, run (or resume) it; return the file's path."""
    from . import config, outputs, study as study_mod

    d = study_dict(arch, workload, budget_mm2, tech_nm, trials, out_dir)
    path = out_dir / "studies" / f"{d['name']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# written by dse compare; `dse run` this file to extend the study\n" + yaml.safe_dump(d, sort_keys=False))
    st = config.load(path)
    study_mod.run(st, progress=False)
    outputs.write_study_outputs(st)  # study.json, trials.csv, pareto.png: `dse report` works on it
    return str(path)


def _entry(arch: str, workload: str, study_file: str, budget_mm2: float, tech_nm: int) -> Entry:
    from . import config, study as study_mod

    model = get_model(arch)
    e = Entry(arch, model.title, study_file=study_file, doc=model.described_in(short=True))
    pub = model.evaluate(workload)
    e.published = {**pub["total"], "feasible": pub["feasible"], "reason": pub["infeasible_reason"],
                   "params": {}}
    st = config.load(study_file)
    ost = study_mod.open_study(st, load_only=True)
    objectives = [o.metric for o in st.objectives]
    table = results.Table(study_mod.trial_rows(ost, objectives), objectives, [o.direction for o in st.objectives])
    e.table, e.trials = table, len(table.rows)
    ok = [r for r in table.rows if r["feasible"] and r.get("total.time_s") is not None]
    if ok:
        best = min(ok, key=lambda r: (r["total.time_s"], r["total.area_mm2"]))
        e.best_params = {**st.fixed, **{k[6:]: v for k, v in best.items() if k.startswith("param.")}}
        e.best = {**{k.removeprefix("total."): v for k, v in best.items() if k.startswith("total.")},
                  "feasible": True, "reason": None, "params": e.best_params}
    else:
        e.note = f"no design of its space fits {budget_mm2:g} mm² on this workload in {e.trials} trials"
    has_tech = "tech_nm" in {p.name for p in model.params}
    pub_node = model.params.get("tech_nm").default if has_tech else None
    if has_tech:
        e.node = f"published {pub_node} nm; searched at {tech_nm} nm"
    else:
        e.node = "its own technology (no tech_nm parameter): see docs/report.md"
    return e


def run(workload: str, archs: str | None = None, budget: str | None = None, tech_nm: int = 28,
        trials: int | None = None, out_dir: str | Path | None = None, progress: bool = True,
        n_jobs: int = 2) -> dict[str, Path]:
    """Run (or resume) every model's study and write compare.csv and compare.html."""
    budget_mm2 = parse_budget(budget)
    trials = DEFAULT_TRIALS if trials is None else trials
    if trials < 1:
        raise UserError("compare: --trials must be >= 1")
    if tech_nm not in (28, 14):
        raise UserError(f"compare: --tech {tech_nm}: allowed: 28, 14")
    load_workload(workload)  # one-line error for an unknown workload
    can, skipped = runnable(workload)
    if archs:
        chosen = [a.strip() for a in archs.split(",") if a.strip()]
        unknown = [a for a in chosen if a not in REGISTRY]
        if unknown:
            raise UserError(f"compare: --arch {', '.join(unknown)}: unknown; allowed: {allowed(list(REGISTRY))}")
        bad = [a for a in chosen if a not in can]
        if bad:
            raise UserError(f"compare: --arch {bad[0]} cannot run {workload}: it {skipped[bad[0]]}; "
                            f"allowed: {allowed(can)}")
        can = chosen
    if not can:
        raise UserError(f"compare: no model runs {workload}")
    out = Path(out_dir) if out_dir else Path("results") / f"compare_{_safe(workload)}"
    out.mkdir(parents=True, exist_ok=True)
    if progress:
        print(f"compare {workload}: {', '.join(can)}; {trials} trials each, area <= {budget_mm2:g} mm², {tech_nm} nm")
    from joblib import Parallel, delayed

    files_ = Parallel(n_jobs=min(n_jobs, len(can)), backend="loky")(
        delayed(_run_one)(a, workload, budget_mm2, tech_nm, trials, out) for a in can)
    entries = [_entry(a, workload, f, budget_mm2, tech_nm) for a, f in zip(can, files_)]
    csv_path = out / "compare.csv"
    results.write_csv(csv_path, csv_rows(entries, workload, budget_mm2, tech_nm))
    html_path = out / "compare.html"
    html_path.write_text(page(entries, skipped if not archs else {}, workload, budget_mm2, tech_nm, trials, out))
    return {"html": html_path, "csv": csv_path}


def csv_rows(entries: list[Entry], workload: str, budget_mm2: float, tech_nm: int) -> list[dict[str, Any]]:
    rows = []
    for e in entries:
        for point, d in (("published", e.published), ("best", e.best)):
            if d is None:
                continue
            row: dict[str, Any] = {"workload": workload, "arch": e.arch, "point": point,
                                   "area_budget_mm2": budget_mm2 if point == "best" else None,
                                   "tech_nm": tech_nm if point == "best" else None,
                                   "feasible": d["feasible"], "infeasible_reason": d["reason"]}
            row.update({m: d.get(m.removeprefix("total.")) for m in METRICS + ENERGY_PART_COLUMNS})
            row["params"] = " ".join(f"{k}={v}" for k, v in d["params"].items()) or "defaults"
            rows.append(row)
    return rows


def _figures(entries: list[Entry], budget_mm2: float, tmp: Path) -> list[tuple[str, str]]:
    from .report import embed_png
    import matplotlib.pyplot as plt

    colour = dict(zip([e.arch for e in entries], plots.colours(len(entries))))
    names, vals, hatch, faded = [], {m: [] for m in METRICS}, [], []
    for e in entries:
        for point, d in (("published", e.published), ("best", e.best)):
            names.append(f"{e.arch} {point}")
            hatch.append(point == "published")
            faded.append(d is not None and not d["feasible"])
            for m in METRICS:
                v = None if d is None else d.get(m.removeprefix("total."))
                vals[m].append(v)
    fig, axes = plt.subplots(2, 3, figsize=(14, 8))
    titles = {"total.time_s": "time (lower is better)", "total.energy_j": "energy (lower is better)",
              "total.dram_bytes": "DRAM traffic (lower is better)", "total.area_mm2": "area",
              "total.utilization": "MAC utilization (higher is better)", "total.power_w": "average power"}
    for ax, m in zip(axes.flat, METRICS):
        plots.bar_chart(ax, names, vals[m], m, titles[m], colour_of=colour, hatch=hatch, faded=faded)
    fig.suptitle("published design point (hatched) and best design under the area budget, per model; "
                 "pale bars: the published design does not run this workload as given (infeasible)", fontsize=10)
    bars = tmp / "bars.png"
    plots._save(fig, bars)

    fig, ax = plt.subplots(figsize=(11, 6))
    allx = []
    for e in entries:
        c = colour[e.arch]
        t = e.table
        if t is not None and t.rows:
            v = t.values()
            feas = t.feasible() & np.isfinite(v).all(axis=1)
            ax.scatter(v[feas, 1], v[feas, 0] * 1e3, s=8, color=c, alpha=0.25)
            front = t.pareto_mask()
            fv = v[front]
            fv = fv[np.argsort(fv[:, 1])]
            ax.step(fv[:, 1], fv[:, 0] * 1e3, where="post", color=c, lw=1.6, marker="o", ms=4, label=f"{e.arch} front")
            allx += list(v[feas, 1])
        p = e.published
        if p and p.get("time_s") is not None and p.get("area_mm2") is not None:
            ax.scatter([p["area_mm2"]], [p["time_s"] * 1e3], marker="*", s=260, color=c, edgecolor="black",
                       lw=0.8, zorder=4, label=f"{e.arch} published" + ("" if p["feasible"] else " (infeasible)"))
            allx.append(p["area_mm2"])
    ax.axvline(budget_mm2, color="black", ls="--", lw=1.2, label=f"area budget {budget_mm2:g} mm²")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("area [mm²]")
    ax.set_ylabel("time per inference [ms]")
    ax.set_title("time vs area: every model's Pareto front (lines), explored designs (dots), published points (★)",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.25)
    plots.legend_outside(ax)
    pareto = tmp / "pareto.png"
    plots._save(fig, pareto)

    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.32 * len(names)))
    plots.share_bars(ax, names, [None if d is None else plots.energy_shares(d)
                                 for e in entries for d in (e.published, e.best)],
                     "where each design's energy goes: compute, on-chip SRAM, DRAM, leakage (static power x time)",
                     faded=faded)
    shares = tmp / "energy_shares.png"
    plots._save(fig, shares)
    return [("Time, energy, DRAM traffic, area, utilization and power", embed_png(bars)),
            ("Time vs area across models", embed_png(pareto)),
            ("Where the energy goes", embed_png(shares))]


def page(entries: list[Entry], skipped: dict[str, str], workload: str, budget_mm2: float, tech_nm: int,
         trials: int, out: Path) -> str:
    from .report import render

    cols = []
    for m in METRICS:
        vs = [d.get(m.removeprefix("total.")) for e in entries for d in (e.published, e.best) if d]
        s = scale_for(m, vs)
        cols.append((m, unit_label(m, s), s))
    rows = []
    for e in entries:
        for point, d in (("published", e.published), ("best under budget", e.best)):
            if d is None:
                rows.append({"arch": e.arch, "point": point, "cells": ["—"] * len(cols), "feasible": False,
                             "reason": e.note, "params": ""})
                continue
            cells = [fmt(s(d.get(m.removeprefix("total."))) if d.get(m.removeprefix("total.")) is not None else None)
                     for m, _, s in cols]
            rows.append({"arch": e.arch, "point": point, "cells": cells, "feasible": d["feasible"],
                         "reason": d["reason"] or "",
                         "params": " ".join(f"{k}={fmt(v) if isinstance(v, float) else v}"
                                             for k, v in d["params"].items()) or "model defaults"})
    with tempfile.TemporaryDirectory(prefix="dse-compare-") as td:
        figures = _figures(entries, budget_mm2, Path(td))
    return render(
        "compare.html.j2", workload=workload, budget=f"{budget_mm2:g}", tech=tech_nm, trials=trials,
        generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        headers=[h for _, h, _ in cols], rows=rows, figures=figures, skipped=skipped,
        studies=[(e.arch, e.study_file, e.trials, e.node, e.title, e.doc) for e in entries],
        command=f"dse compare {workload} --budget 'area_mm2<={budget_mm2:g}' --tech {tech_nm} --trials {trials}"
                f" --out {out}",
    )

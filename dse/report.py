"""``dse report RESULTS_DIR``: one self-contained ``report.html`` per study or sweep.

The page says what was run (model, workloads, space, objectives,
constraints, sampler, budget, storage, trial counts, wall time, the command
to resume), shows the Pareto front (with constraint bounds, infeasible
points distinct, human units), a table of the Pareto points, the per-layer
breakdown of the extremes and the knee of the front, how the search
converged, and which parameters mattered (Optuna's PED-ANOVA importance
evaluator; fANOVA would need scikit-learn, which is not a dependency).
Figures are PNGs embedded as base64 data URIs, so the file opens offline.

Inputs: ``study.json`` in the folder (written by ``dse run``/``dse sweep``),
the study file it names, and the study's storage (for a study) or its
``trials.csv`` (for a sweep).
"""

from __future__ import annotations

import base64
import datetime as dt
import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workloads.errors import UserError

from . import plots, results
from .config import Dim, Study
from .units import distinct_digits, fmt, label as unit_label, plain_name, scale_for
from .worker import REPEAT_ATTR, first_designs

#: contract totals shown for every Pareto point (docs/contract.md), besides the objectives
KEY_METRICS = ("total.time_s", "total.energy_j", "total.dram_bytes", "total.area_mm2", "total.utilization",
               "total.power_w")
MAX_TABLE_ROWS = 200
MAX_IMPORTANCE_ROWS = 2000


@dataclass
class Figure:
    """An embedded PNG with a caption."""

    title: str
    data_uri: str
    caption: str = ""


@dataclass
class Chosen:
    """A Pareto point picked for the per-layer breakdown."""

    why: str
    number: int
    params: dict[str, Any]
    figure: Figure | None = None
    note: str = ""
    #: the model's states its figure shows (non-zero on some layer), in the model's order
    states: list[str] = field(default_factory=list)


@dataclass
class Column:
    key: str
    header: str
    scale: Any = None
    digits: int = 4


@dataclass
class Page:
    """Everything the report template shows."""

    title: str
    generated: str
    run: list[tuple[str, str]]
    space: list[tuple[str, str, str]]
    commands: list[str]
    pareto_figures: list[Figure]
    columns: list[Column]
    rows: list[list[str]]
    rows_note: str
    chosen: list[Chosen]
    convergence: Figure | None
    convergence_note: str
    importances: Figure | None
    importance_table: list[tuple[str, list[str]]]
    importance_objectives: list[str]
    importance_note: str
    dashboard: str
    warnings: list[str] = field(default_factory=list)
    #: (state, meaning) of every state a breakdown shows, in the model's order (:attr:`Model.STATE_DOCS`)
    state_docs: list[tuple[str, str]] = field(default_factory=list)


def embed_png(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def study_title(study: Study, kind: str = "study") -> str:
    """``multicore on fc2, sampler nsga2`` (the Pareto plot's and the report's title)."""
    how = "grid sweep" if kind == "sweep" else f"sampler {study.sampler}"
    return f"{study.name}: {study.arch} on {', '.join(study.workloads)}, {how}"


def bounds_of(study: Study) -> list[plots.Bound]:
    return [plots.Bound(c.metric, c.op, c.bound) for c in study.constraints]


# ---------------------------------------------------------------- loading


@dataclass
class Source:
    """A results folder resolved: the study, its rows, and (for studies) the Optuna study."""

    out_dir: Path
    meta: dict[str, Any]
    study: Study
    table: results.Table
    kind: str  # study | sweep
    ost: Any = None


def load_source(out_dir: Path, table: results.Table | None = None) -> Source:
    """Read ``study.json``, the study file and the rows (storage or trials.csv); a sweep's ``table`` whose rows
    are what its trials.csv reads back as (:attr:`~dse.results.Table.csv_exact`) is taken as it is."""
    from . import config

    out_dir = Path(out_dir)
    if not (out_dir / "study.json").exists():
        raise UserError(f"report: {out_dir} has no study.json; give a results folder written by dse run or dse sweep")
    meta = results.read_meta(out_dir)
    st = config.load_folder(out_dir, meta, "report")
    objectives = [o.metric for o in st.objectives]
    directions = [o.direction for o in st.objectives]
    if meta.get("kind") == "sweep":
        if not (out_dir / "trials.csv").exists():
            raise UserError(f"report: {out_dir}/trials.csv is missing; run dse sweep again")
        if table is None or not table.csv_exact or table.objectives != objectives:
            table = results.Table(results.read_csv(out_dir / "trials.csv"), objectives, directions)
        return Source(out_dir, meta, st, table, "sweep")
    from . import study as study_mod

    ost = study_mod.open_study(st, load_only=True)
    table = results.Table(study_mod.trial_rows(ost, objectives), objectives, directions)
    return Source(out_dir, meta, st, table, "study", ost)


# ---------------------------------------------------------------- sections


def _dim_text(d: Dim) -> str:
    if d.kind == "fixed":
        return f"fixed {param_text(d.value)}"
    if d.kind == "choice":
        return "one of " + ", ".join(str(c) for c in d.choices)
    rng = f"{d.kind} {fmt(d.low)} .. {fmt(d.high)}"
    if d.step:
        rng += f" step {fmt(d.step)}"
    if d.log:
        rng += " (log)"
    return rng


def _run_facts(src: Source) -> tuple[list[tuple[str, str]], list[str]]:
    from . import storage

    st, table = src.study, src.table
    feas = table.feasible()
    facts = [
        ("model", f"{st.arch} — {st.model.title} ({st.model.described_in()})"),
        ("workloads", ", ".join(st.workloads) + (f" (combined: {st.combine})" if len(st.workloads) > 1 else "")),
        ("objectives", ", ".join(f"{o.direction} {plain_name(o.metric)}" for o in st.objectives)),
        ("constraints", ", ".join(plots.Bound(c.metric, c.op, c.bound).text for c in st.constraints) or "none"),
    ]
    warnings: list[str] = []
    if src.kind == "sweep":
        sample = src.meta.get("sample")
        facts.append(("search", f"joblib grid sweep of {st.grid_size():,} points"
                      + (f", random sample of {sample:,} (seed {src.meta.get('seed', 0)})" if sample else "")))
        facts.append(("points evaluated", f"{len(table.rows):,} ({int(feas.sum()):,} feasible, "
                      f"{int((~feas).sum()):,} infeasible)"))
        if src.meta.get("elapsed_s") is not None:
            facts.append(("wall time", f"{src.meta['elapsed_s']:.1f} s (last dse sweep call)"))
        facts.append(("results", str(src.out_dir)))
        return facts, warnings
    from optuna.trial import TrialState

    sampler = st.sampler + ("" if st.sampler_explicit else f" (default: {st.sampler_why})")
    if st.seed is not None:
        sampler += f", seed {st.seed}"
    if st.sampler_options:
        sampler += ", options " + ", ".join(f"{k}={v}" for k, v in st.sampler_options.items())
    facts.append(("sampler", sampler))
    budget = []
    designs = _designs(src)
    if st.n_trials and designs > st.n_trials:  # continued with dse run --n-trials N
        budget.append(f"{st.n_trials:,} trials in the study file, continued to {designs:,} with --n-trials")
    elif st.n_trials:
        budget.append(f"{st.n_trials:,} trials")
    if st.timeout:
        budget.append(f"{st.timeout:g} s per run")
    budget.append(f"batch {st.batch_size}, {st.n_jobs} worker process(es)")
    facts.append(("budget", ", ".join(budget)))
    facts.append(("storage", storage.describe(st.storage, st.out_dir)))
    trials = src.ost.get_trials(deepcopy=False)
    by_state = {s: sum(t.state == s for t in trials) for s in TrialState}
    n_repeat = sum(t.state == TrialState.COMPLETE and REPEAT_ATTR in t.user_attrs for t in trials)
    n_complete = designs  # distinct designs (the budget counts these)
    n_twice = by_state[TrialState.COMPLETE] - n_repeat - n_complete
    n_infeas = int((~feas).sum())
    # the budget counts designs; trial numbers (the Pareto table's) count every Optuna trial, repeats included
    twice = (f"{n_twice:,} designs evaluated twice (two processes asked them at the same moment; one row kept), "
             if n_twice else "")
    facts.append(("trials", f"{n_complete:,} designs evaluated ({n_complete - n_infeas:,} feasible, {n_infeas:,} "
                  f"infeasible) in {len(trials):,} Optuna trials (the trial numbers count them all): "
                  f"{n_repeat:,} repeated designs answered from earlier trials, {twice}"
                  f"{by_state[TrialState.FAIL]:,} failed, {by_state[TrialState.PRUNED]:,} pruned, "
                  f"{by_state[TrialState.RUNNING]:,} running"))
    starts = [t.datetime_start for t in trials if t.datetime_start]
    ends = [t.datetime_complete for t in trials if t.datetime_complete]
    if starts and ends:
        span = (max(ends) - min(starts)).total_seconds()
        facts.append(("wall time", f"{span:.1f} s from the first trial's start to the last trial's end "
                      f"({min(starts):%Y-%m-%d %H:%M:%S} – {max(ends):%H:%M:%S})"))
    if st.n_trials and n_complete < st.n_trials:
        warnings.append(f"the study has {n_complete} of its {st.n_trials} trials: run `dse run {st.path}` to finish it")
    facts.append(("results", str(src.out_dir)))
    return facts, warnings


def _commands(src: Source) -> list[str]:
    path = shlex.quote(src.study.path)
    out = shlex.quote(str(src.out_dir))
    if src.kind == "sweep":
        extra = f" --sample {src.meta['sample']} --seed {src.meta.get('seed', 0)}" if src.meta.get("sample") else ""
        return [f"dse sweep {path}{extra}", f"dse report {out}"]
    designs = _designs(src)
    more = f" --n-trials {designs}" if src.study.n_trials and designs > src.study.n_trials else ""
    return [f"dse run {path}{more}    # resumes to the budget; --n-trials N extends it", f"dse report {out}"]


def _designs(src: Source) -> int:
    """The study's distinct designs (what the budget counts; :func:`dse.worker.first_designs`)."""
    from optuna.trial import TrialState

    return len(first_designs(src.ost.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))))


def _columns(src: Source, rows: list[dict[str, Any]]) -> list[Column]:
    """Trial, the objectives, the parameters, then constraint metrics and the contract's key totals."""
    cols = [Column("number", "trial" if src.kind == "study" else "grid index")]
    objectives = [o.metric for o in src.study.objectives]

    def metric_cols(metrics: list[str], star: str) -> list[Column]:
        out = []
        for m in metrics:
            s = scale_for(m, [r.get(m) for r in rows])
            digits = distinct_digits(s(r[m]) for r in rows if isinstance(r.get(m), (int, float))) if star else 4
            out.append(Column(m, unit_label(m, s) + star, s, digits))
        return out

    cols += metric_cols(objectives, " ★")
    for d in src.study.searched:
        unit = src.study.model.params.get(d.name).unit
        cols.append(Column(f"param.{d.name}", d.name + (f" [{unit}]" if unit else "")))
    more = [c.metric for c in src.study.constraints if c.metric not in objectives]
    more += [m for m in KEY_METRICS if m not in objectives + more and any(r.get(m) is not None for r in rows)]
    return cols + metric_cols(more, "")


def _cell(row: dict[str, Any], col: Column) -> str:
    v = row.get(col.key)
    if col.scale is not None and isinstance(v, (int, float)) and not isinstance(v, bool):
        return fmt(col.scale(float(v)), col.digits)
    return fmt(v)


def front_rows(table: results.Table) -> list[dict[str, Any]]:
    """The Pareto rows, ordered by the first objective (best first)."""
    front = table.pareto_mask()
    rows = [r for r, f in zip(table.rows, front) if f]
    rows.sort(key=lambda r: r[table.objectives[0]], reverse=table.directions[0] == "maximize")
    return rows


def choose_points(table: results.Table, rows: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The extremes of the front (best in each objective) and its knee.

    The knee is the Pareto point nearest the ideal point after normalising
    every objective to [0, 1] over the front (log10 first where it spans
    decades): the most balanced compromise.
    """
    if not rows:
        return []
    vals = results.Table(rows, table.objectives, table.directions).values()
    picked: list[tuple[str, dict[str, Any]]] = []
    seen: set[int] = set()

    def add(why: str, i: int) -> None:
        if rows[i]["number"] in seen:
            for k, (w, r) in enumerate(picked):
                if r["number"] == rows[i]["number"]:
                    picked[k] = (f"{w}; {why}", r)
            return
        seen.add(rows[i]["number"])
        picked.append((why, rows[i]))

    for j, (o, d) in enumerate(zip(table.objectives, table.directions)):
        i = int(np.argmin(vals[:, j]) if d == "minimize" else np.argmax(vals[:, j]))
        add(f"best {plain_name(o)}", i)
    if len(table.objectives) > 1 and len(rows) > 2:
        norm = plots.normalised(vals, np.ones(len(rows), bool), table.directions)
        add("knee (nearest the ideal point)", int(np.argmin(np.linalg.norm(norm, axis=1))))
    return picked


def _chosen(src: Source, rows: list[dict[str, Any]], numbers: Sequence[int] | None, tmp: Path) -> list[Chosen]:
    if numbers:
        by_num = {r["number"]: r for r in src.table.rows}
        missing = [n for n in numbers if n not in by_num]
        if missing:
            raise UserError(f"report: --points: no completed trial numbered {', '.join(map(str, missing))}; "
                            f"allowed: {min(by_num)}..{max(by_num)}" if by_num else "report: --points: no trials")
        picks = [(f"trial {n} (chosen)", by_num[n]) for n in numbers]
    else:
        picks = choose_points(src.table, rows)
    out = []
    model = src.study.model
    wl = src.study.workloads[0]
    for k, (why, r) in enumerate(picks):
        params = {**src.study.fixed, **{c[6:]: v for c, v in r.items() if c.startswith("param.")}}
        ch = Chosen(why, r["number"], params)
        try:
            res = model.evaluate(wl, **params)
        except UserError as exc:
            ch.note = f"cannot re-evaluate: {exc}"
            out.append(ch)
            continue
        png = tmp / f"breakdown_{k}.png"
        plots.breakdown_plot(png, res, title=f"{src.study.arch} on {res['workload']}, {why}")
        note = "" if len(src.study.workloads) == 1 else f"first workload of {len(src.study.workloads)} shown"
        ch.figure = Figure(why, embed_png(png), note)
        shown = {s for layer in res["layers"] for s, v in (layer.get("states") or {}).items() if v}
        ch.states = [s for s in model.STATE_DOCS if s in shown]
        out.append(ch)
    return out


def _convergence(src: Source, tmp: Path) -> tuple[Figure | None, str]:
    if src.kind == "sweep":
        return None, "An exhaustive (or randomly sampled) grid sweep has no search to converge: every point is shown above."
    rows = sorted(src.table.rows, key=lambda r: r["number"])
    if not rows:
        return None, "no completed trials yet"
    t = results.Table(rows, src.table.objectives, src.table.directions)
    png = tmp / "convergence.png"
    # rows: one per design (repeats are not rows), in trial order: the plot counts them, as the budget does
    curve = plots.convergence_plot(png, t.values(), t.feasible(), t.objectives, t.directions)
    if curve["kind"] == "hypervolume":
        ys = curve["y"]
        final = ys[-1] if ys else 0.0
        half = next((x for x, y in zip(curve["x"], ys) if y >= 0.95 * final), None) if final > 0 else None
        note = (f"Hypervolume of the feasible front after {len(rows):,} designs evaluated: {final:.3f} "
                f"(share of the box up to the reference point 1.1 per axis that the front dominates; objectives "
                f"normalised to [0, 1] over all feasible points, log10 where they span decades)."
                + (f" 95 % of it was reached after {half:,} designs." if half is not None else "")
                + " The x axis counts designs evaluated, as the budget does: repeated designs answered from earlier "
                  "trials are not counted (Optuna's trial numbers are).")
    else:
        note = ("Best feasible value over the designs evaluated (repeated designs answered from earlier trials are "
                "not counted, as in the budget).")
    return Figure("convergence", embed_png(png)), note


def _distributions(dims: Sequence[Dim]) -> dict[str, Any]:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out = {}
    for d in dims:
        if d.kind == "choice":
            out[d.name] = CategoricalDistribution(list(d.choices))
        elif d.kind == "int":
            step = 1 if d.log or d.points else int(d.step or 1)
            out[d.name] = IntDistribution(int(d.low), int(d.high), log=d.log, step=step)
        elif d.kind == "float":
            out[d.name] = FloatDistribution(float(d.low), float(d.high), log=d.log)
    return out


def importances(src: Source) -> tuple[dict[str, dict[str, float]], str]:
    """PED-ANOVA importances of the searched parameters, per objective, over the feasible points."""
    import optuna
    from optuna.importance import PedAnovaImportanceEvaluator, get_param_importances

    dists = _distributions(src.study.searched)
    if len(dists) < 2:
        return {}, "fewer than two searched parameters: nothing to rank"
    vals = src.table.values()
    ok = src.table.feasible() & np.isfinite(vals).all(axis=1)
    idx = np.flatnonzero(ok)
    note = ""
    if len(idx) > MAX_IMPORTANCE_ROWS:
        idx = np.sort(np.random.default_rng(0).choice(idx, MAX_IMPORTANCE_ROWS, replace=False))
        note = f" (a random sample of {MAX_IMPORTANCE_ROWS:,} of the {int(ok.sum()):,} feasible points)"
    if len(idx) < 10:
        return {}, f"only {len(idx)} feasible points: too few to rank parameters"
    out: dict[str, dict[str, float]] = {}
    for j, (o, d) in enumerate(zip(src.table.objectives, src.table.directions)):
        s = optuna.create_study(direction=d)
        trials = []
        for i in idx:
            r = src.table.rows[i]
            params = {n: r.get(f"param.{n}") for n in dists}
            if any(v is None for v in params.values()):
                continue
            try:
                trials.append(optuna.trial.create_trial(params=params, distributions=dists, value=float(vals[i, j])))
            except ValueError:  # a stored value outside today's space (the study file changed)
                continue
        s.add_trials(trials)
        try:
            imp = get_param_importances(s, evaluator=PedAnovaImportanceEvaluator())
        except (RuntimeError, ValueError) as exc:
            return {}, f"Optuna could not rank the parameters: {exc}"
        out[o] = {k: float(v) for k, v in imp.items()}
    return out, ("PED-ANOVA (Optuna's PedAnovaImportanceEvaluator) on the feasible points" + note +
                 ": how much each parameter's distribution differs between the best 10 % of the points and "
                 "all of them, normalised to sum to 1 per objective.")


def build(out_dir: Path, points: Sequence[int] | None = None, output: Path | None = None,
          pareto_png: Path | None = None, table: results.Table | None = None) -> Path:
    """Write ``report.html`` for the results folder ``out_dir``; return its path.

    ``pareto_png``: the Pareto plot just drawn from the same rows by
    :func:`dse.outputs.write_outputs` (embedded as is instead of drawn again);
    ``table``: a sweep's rows just written to trials.csv (see :func:`load_source`).
    """
    src = load_source(Path(out_dir), table)
    return write(src, points, output, pareto_png)


def write(src: Source, points: Sequence[int] | None = None, output: Path | None = None,
          pareto_png: Path | None = None) -> Path:
    """Render the page for a loaded :class:`Source`."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    st, table = src.study, src.table
    title = study_title(st, src.kind)
    with tempfile.TemporaryDirectory(prefix="dse-report-") as td:
        tmp = Path(td)
        front = table.pareto_mask()
        figs = []
        png = pareto_png
        if png is None:
            png = tmp / "pareto.png"
            plots.pareto_plot(png, table, front, title=title, bounds=bounds_of(st))
        figs.append(Figure("Pareto front", embed_png(png),
                           "Blue: feasible points; vermillion: the Pareto front; grey crosses: infeasible points "
                           "(a constraint violated or a design the model rejects); dashed: constraint bounds."))
        if len(table.objectives) >= 3:
            pp = tmp / "parallel.png"
            plots.parallel_plot(pp, table, front, title=title)
            figs.append(Figure("Parallel coordinates", embed_png(pp),
                               "One line per point; each axis from best (bottom) to worst (top)."))
        rows = front_rows(table)
        cols = _columns(src, rows)
        shown = rows[:MAX_TABLE_ROWS]
        rows_note = (f"{len(rows):,} Pareto points" + (f"; the first {MAX_TABLE_ROWS} shown (all are in pareto.csv)"
                                                      if len(rows) > MAX_TABLE_ROWS else "")
                     + f", ordered by {plain_name(table.objectives[0])}. ★ marks objectives.")
        chosen = _chosen(src, rows, points, tmp)
        conv, conv_note = _convergence(src, tmp)
        imps, imp_note = importances(src)
        imp_fig = None
        imp_table: list[tuple[str, list[str]]] = []
        if imps:
            ip = tmp / "importance.png"
            plots.importance_plot(ip, imps)
            imp_fig = Figure("parameter importances", embed_png(ip))
            params = list(next(iter(imps.values())))
            imp_table = [(p, [f"{imps[o].get(p, 0.0):.3f}" for o in imps]) for p in params]
        facts, warnings = _run_facts(src)
        page = Page(
            title=title,
            generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            run=facts,
            space=[(d.name, _dim_text(d), st.model.params.get(d.name).unit) for d in st.dims],
            commands=_commands(src),
            pareto_figures=figs,
            columns=cols,
            rows=[[_cell(r, c) for c in cols] for r in shown],
            rows_note=rows_note,
            chosen=chosen,
            convergence=conv,
            convergence_note=conv_note,
            importances=imp_fig,
            importance_table=imp_table,
            importance_objectives=[plain_name(o) for o in imps],  # (as the chart names them)
            importance_note=imp_note,
            dashboard=_dashboard(src),
            state_docs=[(s, d) for s, d in st.model.STATE_DOCS.items() if any(s in c.states for c in chosen)],
            warnings=warnings,
        )
    out = Path(output) if output else src.out_dir / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render("report.html.j2", page=page))
    return out


def _dashboard(src: Source) -> str:
    from . import storage

    if src.kind == "sweep":
        return ""
    url = storage.describe(src.study.storage, src.study.out_dir)
    if storage.is_journal(src.study.storage):
        url = url.removeprefix("journal:")
    return f"optuna-dashboard {shlex.quote(url)}"


def render(template: str, **context: Any) -> str:
    """Render a template from ``dse/templates`` (autoescaped)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("dse", "templates"), autoescape=select_autoescape(["html", "j2"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = param_text
    return env.get_template(template).render(**context)


def param_text(value: Any) -> str:
    """A parameter value as a user writes it: whole floats without ``.0`` (``clock_mhz=1000``), other floats
    exactly (the shortest text that reads back as the same float: a design point must be reproducible)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


__all__ = ["build", "write", "render", "load_source", "choose_points", "importances", "Figure"]

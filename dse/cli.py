"""The ``dse`` command line.

    dse evaluate ARCH WORKLOAD [--set key=value]... [--json] [--explain] [--check]   # ARCH: a name or path/to/model.py:ClassName
    dse run STUDY.yaml [--n-trials N] [--n-jobs N]
    dse worker STUDY.yaml            # join a running study from another process/machine
    dse sweep STUDY.yaml [--n-jobs N] [--sample N] [--backend loky|dask --scheduler ADDR]
    dse plot RESULTS_DIR | STUDY.yaml
    dse plot --breakdown ARCH WORKLOAD [--set key=value]... [-o FILE]
    dse report RESULTS_DIR [--points N,N] [-o FILE]   # self-contained report.html
    dse compare WORKLOAD [--arch a,b] [--budget area_mm2<=X] [--tech 28|14] [--trials N]
    dse validate [ARCH]
    dse models [ARCH]                # parameters, knobs and metrics of the models
    dse check ARCH [WORKLOAD]...     # the conformance check (archmodels.testing.check_model); exit 1 on failure

Bad input prints one line ``dse: error: ...`` and exits with code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from workloads.errors import UserError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage + error)
        raise UserError(message if self.prog == "dse" else f"{self.prog}: {message}")  # main adds "dse: error: "


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dse", description="Design-space exploration for accelerator architectures.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    e = sub.add_parser("evaluate", help="evaluate one design point on a workload")
    e.add_argument("arch", help="model name (dse models) or path/to/model.py:ClassName")
    e.add_argument("workload", help="built-in name, parametric (spmm:n=..,sparsity=..) or a file")
    e.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a parameter")
    e.add_argument("--json", action="store_true", help="print the JSON contract")
    e.add_argument("--skip-unknown", action="store_true",
                   help="ONNX: cost operators the importer does not know as zero (one warning line lists them)")
    e.add_argument("--check", action="store_true", help="exit 1 when the design is infeasible (for scripts)")
    e.add_argument("--explain", action="store_true", help="also print each layer's chosen mapping and runner-up")

    r = sub.add_parser("run", help="run or resume a study to its trial budget")
    r.add_argument("study")
    r.add_argument("--n-trials", type=int, help="override the study's n_trials (total budget)")
    r.add_argument("--n-jobs", type=int, help="override the study's n_jobs")
    r.add_argument("--timeout", type=float, help="override the study's timeout [s]")
    r.add_argument("--no-progress", action="store_true")
    r.add_argument("--no-report", action="store_true", help="do not write report.html")
    r.add_argument("--new-name", metavar="NAME", help="run the file as a new study NAME (results/NAME/)")
    r.add_argument("--fork", metavar="NAME", help="new study NAME seeded with the stored trials that fit the file")

    w = sub.add_parser("worker", help="join a study (same storage) as one more worker")
    w.add_argument("study")
    w.add_argument("--worker-id", type=int, default=1, help="offsets the sampler seed")

    s = sub.add_parser("sweep", help="evaluate the study's whole grid with joblib")
    s.add_argument("study")
    s.add_argument("--n-jobs", type=int)
    s.add_argument("--sample", type=int, help="evaluate this many random grid points")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--chunk", type=int, default=2048, help="points per joblib task")
    s.add_argument("--backend", choices=("loky", "threading", "dask"), default="loky")
    s.add_argument("--scheduler", help="Dask scheduler address (tcp://host:port) for --backend dask")
    s.add_argument("--no-progress", action="store_true")
    s.add_argument("--no-report", action="store_true", help="do not write report.html")

    pl = sub.add_parser("plot", help="redraw results, or draw a per-layer breakdown")
    pl.add_argument("target", nargs="*", help="RESULTS_DIR or STUDY.yaml; with --breakdown: ARCH WORKLOAD")
    pl.add_argument("--breakdown", action="store_true", help="per-layer state and DRAM traffic bars")
    pl.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    pl.add_argument("-o", "--output", help="output PNG (breakdown)")

    rp = sub.add_parser("report", help="write a self-contained report.html for a results folder")
    rp.add_argument("results_dir")
    rp.add_argument("--points", help="trial numbers to break down per layer (default: extremes and knee), e.g. 3,17")
    rp.add_argument("-o", "--output", help="output HTML (default RESULTS_DIR/report.html)")

    c = sub.add_parser("compare", help="one workload on every model: published point and best under a budget")
    c.add_argument("workload")
    c.add_argument("--arch", help="comma-separated models (default: every model that runs the workload)")
    c.add_argument("--budget", default=None, help="area budget, e.g. 'area_mm2<=50' (default: see docs/report.md)")
    c.add_argument("--tech", type=int, choices=(28, 14), default=28, help="technology node [nm] (default 28)")
    c.add_argument("--trials", type=int, default=None, help="trials of each model's study")
    c.add_argument("--out", help="output folder (default results/compare_<workload>)")
    c.add_argument("--no-progress", action="store_true")

    v = sub.add_parser("validate", help="compare models with the published calibration figures")
    v.add_argument("arch", nargs="?")
    v.add_argument("--markdown", action="store_true", help="print a Markdown table")

    m = sub.add_parser("models", help="list models, or one model's parameters and metrics")
    m.add_argument("arch", nargs="?")

    c = sub.add_parser("check", help="run the model conformance check (archmodels.testing.check_model)")
    c.add_argument("arch", help="model name or path/to/model.py:ClassName")
    c.add_argument("workloads", nargs="*", help="default: small workloads of the kinds the model supports")
    c.add_argument("--points", type=int, default=24, help="random design points besides defaults and corners")
    c.add_argument("--seed", type=int, default=0)
    return p


def main(argv: list[str] | None = None) -> int:
    from .procs import interrupt_on_term, tune_malloc

    tune_malloc()  # fewer page faults in batched evaluation (dse.procs.tune_malloc)
    interrupt_on_term()  # SIGTERM (SLURM, docker stop) and SIGHUP take Ctrl-C's clean path
    try:
        args = _parser().parse_args(argv)
        return int(_dispatch(args) or 0)
    except UserError as exc:
        print(f"dse: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("\ndse: interrupted; completed work is kept — run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _dispatch(args: argparse.Namespace) -> int:
    return {
        "evaluate": cmd_evaluate, "run": cmd_run, "worker": cmd_worker, "sweep": cmd_sweep,
        "plot": cmd_plot, "validate": cmd_validate, "models": cmd_models, "check": cmd_check,
        "report": cmd_report, "compare": cmd_compare,
    }[args.cmd](args)


def cmd_evaluate(args) -> int:
    from archmodels import get_model
    from workloads import load_workload, with_skip_unknown

    from .evaluation import table, to_json

    model = get_model(args.arch)
    params = model.params.parse_sets(args.set)
    workload = with_skip_unknown(args.workload) if args.skip_unknown else args.workload
    result = model.evaluate(load_workload(workload), **params)
    print(to_json(result) if args.json else table(result))
    if args.explain:
        from .evaluation import explain

        print(explain(result))
    if args.check and not result["feasible"]:
        print(f"dse: infeasible: {result['infeasible_reason']}", file=sys.stderr)
        return 1
    return 0


def _overrides(args, *keys: str) -> dict[str, Any]:
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def cmd_run(args) -> int:
    from . import config, study as study_mod, worker

    ov = _overrides(args, "n_trials", "n_jobs", "timeout")
    if args.new_name and args.fork:
        raise UserError("run: give --new-name or --fork, not both")
    source = None
    if args.new_name or args.fork:
        source = config.load(args.study, ov).name
        ov["name"] = args.new_name or args.fork
    st = config.load(args.study, ov)
    if args.fork:
        copied, of = study_mod.fork(st, source)
        print(f"forked: {copied} of the {of} completed trials of '{source}' fit the file and seed '{st.name}'")
    # storage, sampler and study checks fail before the header; with n_jobs > 1 the worker processes sample
    ost = study_mod.open_study(st, worker=0 if st.n_jobs == 1 else None)
    why = "" if st.sampler_explicit else f" ({st.sampler_why})"
    print(f"study {st.name}: {st.arch} on {', '.join(st.workloads)}, sampler {st.sampler}{why}, "
          f"{worker.budget(st) or 'no'} trial budget, storage {_storage_text(st)}")
    summary = study_mod.run(st, ov, progress=not args.no_progress, ost=ost)
    if summary.recovered:
        print(f"resumed: {summary.recovered} trial(s) left running by an interrupted run were re-queued")
    return _write_study_outputs(st, summary.completed, summary.elapsed_s, report=not args.no_report)


def _storage_text(st) -> str:
    from . import storage

    return storage.describe(st.storage, st.out_dir)


def _write_study_outputs(st, completed: int, elapsed: float | None, report: bool = False) -> int:
    from . import outputs, report as report_mod, results

    table, paths = outputs.write_study_outputs(st)
    if elapsed is not None:  # dse run; dse plot ran nothing
        print(f"{completed} completed trials in {elapsed:.1f} s")
    print(results.summary(table))
    print(f"results: {paths['trials']}, {paths['pareto']}, {paths['plot']}")
    if report:
        print(f"report: {report_mod.build(st.out_dir, pareto_png=paths['plot'])}")
    return 0


def cmd_worker(args) -> int:
    from . import config, study as study_mod, worker

    st = config.load(args.study)
    ost = study_mod.open_study(st, worker=args.worker_id)
    try:
        n = worker.worker_loop(st, ost)
    finally:
        study_mod.save_replay(ost)
    print(f"worker {args.worker_id}: {n} trials evaluated")
    return 0


def cmd_sweep(args) -> int:
    from . import config, results
    from .sweep import Grid, record_sweep, run_sweep

    st = config.load(args.study)
    if args.n_jobs is not None and args.n_jobs < 1:
        raise UserError(f"sweep: --n-jobs {args.n_jobs}: allowed: 1 or more")
    n = Grid.of(st).size
    if args.backend == "dask" and not args.scheduler:
        raise UserError("sweep: --backend dask needs --scheduler tcp://HOST:PORT")
    if args.sample is not None and args.sample < 1:
        raise UserError("sweep: --sample must be >= 1")
    if args.chunk < 1:
        raise UserError("sweep: --chunk must be >= 1")
    todo = min(n, args.sample) if args.sample else n
    print(f"sweep {st.name}: {todo} of {n} grid points, {args.n_jobs or st.n_jobs} job(s), backend {args.backend}")
    table, paths, elapsed = run_sweep(
        st, n_jobs=args.n_jobs, sample=args.sample, seed=args.seed, chunk=args.chunk,
        backend=args.backend, scheduler=args.scheduler, progress=not args.no_progress,
    )
    record_sweep(st, paths["trials"].parent, table, args.sample, args.seed, elapsed)
    rate = len(table.rows) / elapsed if elapsed > 0 else float("inf")
    print(f"{len(table.rows)} points in {elapsed:.2f} s ({rate:,.0f} points/s)")
    print(results.summary(table))
    print(f"results: {paths['trials']}, {paths['pareto']}, {paths['plot']}")
    if not args.no_report:
        from . import report

        print(f"report: {report.build(paths['trials'].parent, pareto_png=paths['plot'], table=table)}")
    return 0


def cmd_plot(args) -> int:
    from . import outputs, results

    if args.breakdown:
        return _plot_breakdown(args)
    if len(args.target) != 1:
        raise UserError("plot: give one RESULTS_DIR or STUDY.yaml (or --breakdown ARCH WORKLOAD)")
    target = Path(args.target[0])
    if target.suffix in (".yaml", ".yml"):
        from . import config

        st = config.load(target)
        return _write_study_outputs(st, 0, None)
    if not (target / "study.json").exists():
        raise UserError(f"plot: {target} has no study.json; give a results folder written by dse run or dse sweep")
    meta = results.read_meta(target)
    if meta.get("kind") == "sweep":
        table = results.Table(results.read_csv(target / "trials.csv"), meta["objectives"], meta["directions"])
        paths = outputs.write_outputs(target, table)
        print(results.summary(table))
        print(f"results: {paths['plot']}")
        return 0
    from . import config

    st = config.load_folder(target, meta, "plot")
    return _write_study_outputs(st, 0, None)


def _plot_breakdown(args) -> int:
    from archmodels import get_model
    from workloads import load_workload

    from .plots import breakdown_plot

    if len(args.target) != 2:
        raise UserError("plot --breakdown: give ARCH WORKLOAD")
    arch, workload = args.target
    model = get_model(arch)
    result = model.evaluate(load_workload(workload), **model.params.parse_sets(args.set))
    safe = workload.replace("/", "_").replace(":", "_").replace(",", "_").replace("=", "")
    out = Path(args.output or f"results/breakdown_{arch}_{safe}.png")
    breakdown_plot(out, result)
    print(f"breakdown: {out}")
    return 0


def cmd_report(args) -> int:
    from . import report

    points = None
    if args.points:
        try:
            points = [int(x) for x in args.points.split(",") if x.strip()]
        except ValueError:
            raise UserError(f"report: --points {args.points!r}: give trial numbers separated by commas") from None
    print(f"report: {report.build(Path(args.results_dir), points, args.output)}")
    return 0


def cmd_compare(args) -> int:
    from . import compare

    out = compare.run(args.workload, archs=args.arch, budget=args.budget, tech_nm=args.tech, trials=args.trials,
                      out_dir=args.out, progress=not args.no_progress)
    print(f"compare: {out['html']}, {out['csv']}")
    return 0


def cmd_validate(args) -> int:
    from archmodels import REGISTRY

    from . import validate

    if args.arch is not None and args.arch not in REGISTRY:
        raise UserError(f"validate: unknown architecture '{args.arch}'; allowed: {', '.join(REGISTRY)}")
    res = validate.run(args.arch)
    print(validate.markdown(res) if args.markdown else validate.report(res))
    checked = [r for r in res if r.ok is not None]
    if args.arch is not None and not checked:
        print(f"no model registered for '{args.arch}' yet", file=sys.stderr)
        return 1
    return 0 if all(r.ok for r in checked) else 1


def cmd_models(args) -> int:
    from archmodels import get_model, names

    if args.arch is None:
        for name in names():
            try:
                m = get_model(name)
            except UserError as exc:  # a broken plugin does not hide the other models
                print(f"{name:<12} cannot be loaded: {exc}")
                continue
            print(f"{name:<12} {m.title}  ({m.described_in(short=True)})")
        return 0
    m = get_model(args.arch)
    print(f"{m.name}: {m.title} ({m.described_in()})")
    if m.AREA_ANCHOR:
        print(f"area anchor: {m.AREA_ANCHOR}")
    print("parameters (knobs marked *):")
    for p in m.params:
        unit = f" [{p.unit}]" if p.unit else ""
        print(f"  {'*' if p.knob else ' '} {p.name:<24} default {p.default!s:<10} allowed {p.allowed_text:<22}{unit} {p.doc}")
    names = m.metric_names()
    print("total metrics: " + ", ".join(names["total"]))
    print("layer metrics: " + ", ".join(names["layer"]))
    # what the model's own keys mean (a key can look like a contract one: atomswitch's total.feasible is an area fit)
    for kind, decl in (("total", m.TOTAL_METRICS), ("layer", m.LAYER_METRICS)):
        if decl:
            print(f"model-specific {kind} metrics (the others: docs/contract.md):")
            for x in decl:
                unit = f" [{x.unit}]" if x.unit else ""
                print(f"    {x.name:<24}{unit} {x.doc}")
    if m.STATE_DOCS:
        print("layer states (cycles; the breakdown's time by state):")
        for state, doc in m.STATE_DOCS.items():
            print(f"    {state:<24} {doc}")
    return 0


def cmd_check(args) -> int:
    from archmodels import get_model
    from archmodels.testing import check_model
    from workloads import load_workload

    if args.points < 0:
        raise UserError("check: --points must be >= 0")
    model = get_model(args.arch)
    for w in args.workloads:
        load_workload(w)  # a bad name is a one-line user error, not a failed check
    try:
        report = check_model(model, args.workloads or None, n_points=args.points, seed=args.seed)
    except AssertionError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print(report)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

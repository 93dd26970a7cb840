"""The ``dse`` command line.

    dse evaluate ARCH WORKLOAD [--set key=value]... [--json] [--explain]
    dse run STUDY.yaml [--n-trials N] [--n-jobs N]
    dse worker STUDY.yaml            # join a running study from another process/machine
    dse sweep STUDY.yaml [--n-jobs N] [--sample N] [--backend loky|dask --scheduler ADDR]
    dse plot RESULTS_DIR | STUDY.yaml
    dse plot --breakdown ARCH WORKLOAD [--set key=value]... [-o FILE]
    dse validate [ARCH]
    dse models [ARCH]                # parameters, knobs and metrics of the models

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
        raise UserError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dse", description="Design-space exploration for accelerator architectures.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    e = sub.add_parser("evaluate", help="evaluate one design point on a workload")
    e.add_argument("arch")
    e.add_argument("workload", help="built-in name, parametric (spmm:n=..,sparsity=..) or a file")
    e.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a parameter")
    e.add_argument("--json", action="store_true", help="print the JSON contract")
    e.add_argument("--explain", action="store_true", help="also print each layer's chosen mapping and runner-up")

    r = sub.add_parser("run", help="run or resume a study to its trial budget")
    r.add_argument("study")
    r.add_argument("--n-trials", type=int, help="override the study's n_trials (total budget)")
    r.add_argument("--n-jobs", type=int, help="override the study's n_jobs")
    r.add_argument("--timeout", type=float, help="override the study's timeout [s]")
    r.add_argument("--no-progress", action="store_true")

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

    pl = sub.add_parser("plot", help="redraw results, or draw a per-layer breakdown")
    pl.add_argument("target", nargs="*", help="RESULTS_DIR or STUDY.yaml; with --breakdown: ARCH WORKLOAD")
    pl.add_argument("--breakdown", action="store_true", help="per-layer state and DRAM traffic bars")
    pl.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    pl.add_argument("-o", "--output", help="output PNG (breakdown)")

    v = sub.add_parser("validate", help="compare models with the published calibration figures")
    v.add_argument("arch", nargs="?")
    v.add_argument("--markdown", action="store_true", help="print a Markdown table")

    m = sub.add_parser("models", help="list models, or one model's parameters and metrics")
    m.add_argument("arch", nargs="?")
    return p


def main(argv: list[str] | None = None) -> int:
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
        "plot": cmd_plot, "validate": cmd_validate, "models": cmd_models,
    }[args.cmd](args)


def cmd_evaluate(args) -> int:
    from archmodels import get_model
    from workloads import load_workload

    from .evaluation import table, to_json

    model = get_model(args.arch)
    params = model.params.parse_sets(args.set)
    result = model.evaluate(load_workload(args.workload), **params)
    print(to_json(result) if args.json else table(result))
    if args.explain:
        from .evaluation import explain

        print(explain(result))
    return 0


def _overrides(args, *keys: str) -> dict[str, Any]:
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def cmd_run(args) -> int:
    from . import config, study as study_mod, worker

    ov = _overrides(args, "n_trials", "n_jobs", "timeout")
    st = config.load(args.study, ov)
    why = "" if st.sampler_explicit else f" ({st.sampler_why})"
    print(f"study {st.name}: {st.arch} on {', '.join(st.workloads)}, sampler {st.sampler}{why}, "
          f"{worker.budget(st) or 'no'} trial budget, storage {_storage_text(st)}")
    summary = study_mod.run(st, ov, progress=not args.no_progress)
    if summary.recovered:
        print(f"resumed: {summary.recovered} trial(s) left running by an interrupted run were re-queued")
    return _write_study_outputs(st, summary.completed, summary.elapsed_s)


def _storage_text(st) -> str:
    from . import storage

    return storage.describe(st.storage, st.out_dir)


def _write_study_outputs(st, completed: int, elapsed: float) -> int:
    from . import outputs, results, study as study_mod

    ost = study_mod.open_study(st, load_only=True)
    objectives = [o.metric for o in st.objectives]
    table = results.Table(study_mod.trial_rows(ost, objectives), objectives, [o.direction for o in st.objectives])
    results.write_meta(st.out_dir, {
        "name": st.name, "study_file": st.path, "arch": st.arch, "workloads": list(st.workloads),
        "storage": st.storage, "objectives": objectives, "directions": table.directions,
        "constraints": [c.key for c in st.constraints],
    })
    paths = outputs.write_outputs(st.out_dir, table)
    print(f"{completed} completed trials in {elapsed:.1f} s")
    print(results.summary(table))
    print(f"results: {paths['trials']}, {paths['pareto']}, {paths['plot']}")
    return 0


def cmd_worker(args) -> int:
    from . import config, study as study_mod, worker

    st = config.load(args.study)
    ost = study_mod.open_study(st, worker=args.worker_id)
    n = worker.worker_loop(st, ost)
    print(f"worker {args.worker_id}: {n} trials evaluated")
    return 0


def cmd_sweep(args) -> int:
    from . import config, results
    from .sweep import Grid, run_sweep

    st = config.load(args.study)
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
    results.write_meta(paths["trials"].parent, {
        "name": st.name, "study_file": st.path, "arch": st.arch, "kind": "sweep",
        "objectives": table.objectives, "directions": table.directions,
    })
    rate = len(table.rows) / elapsed if elapsed > 0 else float("inf")
    print(f"{len(table.rows)} points in {elapsed:.2f} s ({rate:,.0f} points/s)")
    print(results.summary(table))
    print(f"results: {paths['trials']}, {paths['pareto']}, {paths['plot']}")
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
        return _write_study_outputs(st, len(_completed(st)), 0.0)
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

    study_file = meta.get("study_file")
    if not study_file or not Path(study_file).exists():
        raise UserError(f"plot: the study file {study_file} recorded in {target}/study.json is gone")
    st = config.load(study_file)
    return _write_study_outputs(st, len(_completed(st)), 0.0)


def _completed(st) -> list:
    from optuna.trial import TrialState

    from . import study as study_mod

    return study_mod.open_study(st, load_only=True).get_trials(deepcopy=False, states=(TrialState.COMPLETE,))


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
    from archmodels import available, get_model

    if args.arch is None:
        for name in available():
            m = get_model(name)
            print(f"{name:<12} {m.title}  (spec: {m.spec})")
        return 0
    m = get_model(args.arch)
    print(f"{m.name}: {m.title} (spec: {m.spec})")
    print("parameters (knobs marked *):")
    for p in m.params:
        unit = f" [{p.unit}]" if p.unit else ""
        print(f"  {'*' if p.knob else ' '} {p.name:<24} default {p.default!s:<10} allowed {p.allowed_text:<22}{unit} {p.doc}")
    names = m.metric_names()
    print("total metrics: " + ", ".join(names["total"]))
    print("layer metrics: " + ", ".join(names["layer"]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""`make bench`: measure, then write docs/benchmarks.md (machine and date included).

Sections (``--only`` takes a comma-separated subset, in this order):

* ``throughput``: issue 15's evaluation speed per model -- batched evals/s
  and the one-point study path, as ratios to a bare numpy roofline and to
  Optuna's own trial cost, before (``--baseline REF`` in a temporary git
  worktree) and after, plus a cold grid-sample rate;
* ``runs``: ``dse run`` trials/s with TPE and NSGA-II on the quickstart and
  ``emaxvr_dse_vgg16`` studies, before and after;
* ``optuna`` (only when named in ``--only``: it does not fit the 10 minutes):
  trials/s of the other samplers (random, NSGA-III, GP) and storages on the
  quickstart study;
* ``sweep``: the joblib sweep speed-up from 1 to 2 workers;
* ``search``: hypervolume vs the exact Pareto front per sampler;
* ``peers``: ZigZag in its own venv, MAESTRO's published rate;
* ``profile``: the profile notes ``docs/profile/*.md``, verbatim.

Every ratio compares numbers measured in this same run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from archmodels import available  # noqa: E402
from benchmarks import before_after, machine, optuna_speed, peers, peers_report, speed_report  # noqa: E402
from benchmarks.throughput import Speed  # noqa: E402

# Each model on VGG16 or its natural workload.
NATURAL = {"emaxv": "vgg16-conv", "emaxvr": "vgg16", "imax": "spmm:n=512,sparsity=0.9", "rena": "vgg16",
           "atomswitch": "lenet", "multicore": "vgg16"}
# a real network with vector layers and GEMM forms (1x1 convolutions), for the one-point cost of such studies
NETWORK = "resnet50"
# `dse run` before/after: (study file, sampler, trials full, trials quick)
RUNS = (("studies/quickstart.yaml", "nsga2", 200, 40), ("studies/quickstart.yaml", "tpe", 100, 20),
        ("studies/emaxvr_dse_vgg16.yaml", "nsga2", 200, 40), ("studies/emaxvr_dse_vgg16.yaml", "tpe", 100, 20))
RUN_BATCH_SIZES = (40, 1)
# a large study continued: (study file, sampler, designs stored first (full, quick), designs added (full, quick));
# NSGA-II on a grid converges and repeats designs, each repeat a trial: Optuna's per-ask cost grows with them
LARGE_RUN = ("studies/quickstart.yaml", "nsga2", (2000, 400), (100, 40))


@dataclasses.dataclass
class Options:
    quick: bool
    models: list[str]
    baseline: str | None  # git ref, or None for no before/after
    baseline_tree: Path | None = None
    baseline_line: str = ""


def section_throughput(lines: list[str], o: Options) -> None:
    after, before, errors = _measure_models(o, lambda arch: NATURAL.get(arch, "vgg16"), "throughput", ladder=True)
    lines += speed_report.speed_section(after, before, o.baseline_line, errors)
    after, before, errors = _measure_models(o, lambda arch: NETWORK, "network")
    lines += speed_report.networks_section(NETWORK, after, before, errors)
    _grid_table(lines, o)


def _measure_models(o: Options, workload_of, what: str,
                    ladder: bool = False) -> tuple[list[Speed], dict[str, Speed | str], dict[str, str]]:
    """(after, before, errors): each model's :func:`~benchmarks.throughput.measure_speed` on ``workload_of(arch)``
    in this tree and the baseline's (with this tree's batch size), each in its own subprocess; ``ladder``: this
    tree's rates by points per call too (:func:`~benchmarks.throughput.batch_ladder`)."""
    after: list[Speed] = []
    before: dict[str, Speed | str] = {}
    errors: dict[str, str] = {}
    quick = ["--quick"] if o.quick else []
    for arch in o.models:
        wl = workload_of(arch)
        try:
            a = Speed(**_speed_fields(before_after.run_in(ROOT, ["speed", arch, wl, *quick,
                                                                *(["--ladder"] if ladder else [])])))
        except (RuntimeError, OSError) as exc:
            errors[arch] = str(exc)
            print(f"{what} {arch}: {exc}", flush=True)
            continue
        if o.baseline_tree is not None:
            try:
                before[arch] = Speed(**_speed_fields(before_after.run_in(
                    o.baseline_tree, ["speed", arch, wl, "--batch", str(a.batch), *quick])))
            except (RuntimeError, OSError) as exc:
                before[arch] = f"failed: {exc}"
        after.append(a)
        b = before.get(arch)
        print(f"{what} {arch} ({wl}): {a.batched_evals_per_s:,.0f} evals/s batched, one point "
              f"{a.one_random_s * 1e3:.2f} ms"
              + (f" (before: {b.batched_evals_per_s:,.0f}, {b.one_random_s * 1e3:.2f} ms)" if isinstance(b, Speed) else ""),
              flush=True)
    return after, before, errors


def _speed_fields(d: dict) -> dict:
    names = {f.name for f in dataclasses.fields(Speed)}
    return {k: v for k, v in d.items() if k in names}


def _grid_table(lines: list[str], o: Options) -> None:
    from benchmarks import search_quality, throughput

    lines += ["### Grid sample (structures repeat, as in a real study)", "",
              "One cold batched call (in this process) on 4,096 points (1,024 quick) drawn from the model's "
              "search-quality space (`benchmarks/spaces/<model>.yaml`), through `dse.objective.evaluate_columns` "
              "as `dse sweep` calls it.", "",
              "| model | workload | distinct points | evals/s |", "|---|---|---|---|"]
    for arch in o.models:
        space = search_quality.SPACES / f"{arch}.yaml"
        if space.exists():
            rate, _, distinct = throughput.measure_grid(str(space), 1024 if o.quick else 4096)
            lines.append(f"| {arch} | `{config_workloads(space)}` | {distinct} | {rate:,.0f} |")
    lines.append("")


def section_runs(lines: list[str], o: Options) -> None:
    rows = []
    for study, sampler, full, quick in RUNS:
        n = quick if o.quick else full
        for batch in RUN_BATCH_SIZES:
            args = ["run", str(ROOT / study), sampler, str(n), str(batch)]
            b = _run_rate(o.baseline_tree, args, study, sampler, batch, n) if o.baseline_tree else None
            a = _run_rate(ROOT, args, study, sampler, batch, n)
            rows.append((b, a))
            print(f"dse run {Path(study).stem} {sampler} b{batch}: " + " -> ".join(
                f"{r.per_s:,.1f}" if r.per_s else str(r.error) for r in (b, a) if r is not None) + " trials/s", flush=True)
    study, sampler, stored, added = LARGE_RUN
    stored, added = stored[o.quick], added[o.quick]
    large = None
    with tempfile.TemporaryDirectory(prefix="dse-bench-large-") as tmp:
        try:  # the stored study: written by this tree (both trees store the same trials and attributes)
            before_after.run_in(ROOT, ["run", str(ROOT / study), sampler, str(stored), "40", "--keep", f"{tmp}/start"])
        except (RuntimeError, OSError) as exc:
            print(f"dse run {Path(study).stem}: could not store {stored} designs: {exc}", flush=True)
        else:
            args = ["run", str(ROOT / study), sampler, str(stored + added), "40", "--start", f"{tmp}/start"]
            b = _run_rate(o.baseline_tree, args, study, sampler, 40, added) if o.baseline_tree else None
            a = _run_rate(ROOT, args, study, sampler, 40, added)
            rows.append((b, a))
            large = f"{Path(study).stem} {sampler} continued from {stored:,} designs ({a.stored:,} stored trials)"
            print(f"dse run {large}: " + " -> ".join(f"{r.per_s:,.1f}" if r.per_s else str(r.error)
                                                       for r in (b, a) if r is not None) + " trials/s", flush=True)
    trials = ", ".join(f"{Path(s).stem} {smp}: {q if o.quick else f} trials" for s, smp, f, q in RUNS)
    lines += speed_report.runs_section(rows, o.baseline_line, trials, large)


def _run_rate(tree: Path, args: list[str], study: str, sampler: str, batch: int, n: int) -> speed_report.RunRate:
    try:
        r = before_after.run_in(tree, args)
        return speed_report.RunRate(Path(study).name, sampler, batch, r["trials"], r["seconds"],
                                    stored=r.get("stored", 0))
    except (RuntimeError, OSError) as exc:
        return speed_report.RunRate(Path(study).name, sampler, batch, n, None, str(exc)[:200])


def section_profile(lines: list[str], o: Options) -> None:
    lines += speed_report.profile_section(ROOT / "docs" / "profile")


def config_workloads(space: Path) -> str:
    from dse import config

    return ", ".join(config.load(space).workloads)


def section_optuna(lines: list[str], o: Options) -> None:
    quick = o.quick
    n = 100 if quick else 200
    lines += ["## Optuna trials per second, other samplers and storage (quickstart study)", "",
              f"`studies/quickstart.yaml` ({n} trials; GP: 40, its cost grows with the trials; 6 searched "
              "parameters, 2 objectives, 1 constraint), run exactly as `dse run` runs it (ask/tell loop, "
              "constraints and metrics stored per trial). TPE and NSGA-II are in the `dse run` section above.", "",
              "| sampler | storage | batch_size | trials/s |", "|---|---|---|---|"]
    for sampler in ("random", "nsga3", "gp"):
        for storage, batch in (("journal", 1), ("journal", 40), ("sqlite", 1)):
            if (storage == "sqlite" and sampler != "random") or (sampler == "gp" and batch > 1):
                continue
            trials = min(n, 40) if sampler == "gp" else n
            r = optuna_speed.measure(ROOT / "studies/quickstart.yaml", sampler, trials, batch_size=batch, storage=storage)
            lines.append(f"| {sampler} | {storage} | {batch} | {r.per_s:,.0f} |")
            print(f"optuna {sampler} {storage} b{batch}: {r.per_s:,.0f} trials/s", flush=True)
    lines.append("")


def section_sweep(lines: list[str], o: Options) -> None:
    quick = o.quick
    from dse import config, report
    from dse.sweep import Grid, record_sweep, run_sweep

    space = ROOT / "benchmarks" / "spaces" / "sweep_multicore.yaml"
    tmp = Path(tempfile.mkdtemp(prefix="dse-sweep-"))
    st = config.load(space, {"results_dir": str(tmp)})
    n = Grid.of(st).size
    sample = 50000 if quick else None
    points = sample or n
    times, evals, reports = {}, {}, {}
    for jobs in (1, 2):
        t0 = time.perf_counter()
        table, paths, evals[jobs] = run_sweep(st, n_jobs=jobs, sample=sample, seed=0, out_dir=tmp / f"j{jobs}",
                                              progress=False)
        times[jobs] = time.perf_counter() - t0
        record_sweep(st, tmp / f"j{jobs}", table, sample, 0, evals[jobs])
        t0 = time.perf_counter()
        report.build(tmp / f"j{jobs}", pareto_png=paths["plot"], table=table)  # as `dse sweep` ends
        reports[jobs] = time.perf_counter() - t0
    same = (tmp / "j1" / "trials.csv").read_bytes() == (tmp / "j2" / "trials.csv").read_bytes()
    lines += ["## joblib sweep speed-up", "",
              f"`dse sweep benchmarks/spaces/sweep_multicore.yaml`: {points:,} grid points, multicore on VGG16 "
              "(21 layers), chunks of 2,048 points per joblib task (loky backend). *Evaluation* = the parallel "
              "phase (workers start, evaluate, checkpoint chunks); *total* adds the serial CSV, Pareto and plot "
              "output; *report* = the report.html that `dse sweep` then writes (docs/profile/sweep.md). "
              f"The two runs wrote identical trials.csv files: {same}.", "",
              "| workers | evaluation s | evaluation points/s | speed-up | total s | report s |",
              "|---|---|---|---|---|---|"]
    for jobs in times:
        lines.append(f"| {jobs} | {evals[jobs]:.2f} | {points / evals[jobs]:,.0f} | {evals[1] / evals[jobs]:.2f}x "
                     f"| {times[jobs]:.2f} | {reports[jobs]:.2f} |")
    lines.append("")
    print(f"sweep: evaluation 1 worker {evals[1]:.2f} s, 2 workers {evals[2]:.2f} s", flush=True)


def section_search(lines: list[str], o: Options) -> None:
    quick = o.quick
    from benchmarks import search_quality as sq

    archs = [a for a in available() if (sq.SPACES / f"{a}.yaml").exists()]
    seeds = sq.SEEDS[:2] if quick else sq.SEEDS[:3]  # 3 of 5 seeds: GP dominates the section's time
    results = []
    for arch in archs:
        t0 = time.perf_counter()
        results.append(sq.measure(arch, n_jobs=2, seeds=seeds))
        print(f"search quality {arch}: {time.perf_counter() - t0:.0f} s", flush=True)
    img = Path(ROOT / "docs" / "img" / "hypervolume.png")
    sq.plot_curves(results, img)
    lines += ["## Search quality: hypervolume vs the exact Pareto front", "",
              "For each model, a space small enough to enumerate (`benchmarks/spaces/<model>.yaml`); the exact front "
              "comes from evaluating every grid point in one batch call. Each sampler then runs with "
              f"{len(seeds)} seeds for 5 % of the grid size (in-memory storage, batch_size 1, constraints as in "
              "`dse run`); the table gives the hypervolume ratio (found / exact; log10 objectives normalised "
              "between the exact ideal point and the worst feasible value) after 1 %, 2 % and 5 % of the grid, "
              "as mean ± standard deviation over the seeds. NSGA-II/III use a population of about a fifth of the "
              "budget (10-50). Sampler time is the total over seeds.", ""]
    best = {}
    for r in results:
        b = r.budgets()
        lines += [f"**{r.arch}** — `{Path(r.study_file).name}`: {r.front.grid_size} points, {r.front.n_feasible} "
                  f"feasible, {r.front.n_front} on the exact front (enumerated in {r.front.seconds:.2f} s).", "",
                  f"| sampler | {b[0]} trials (1 %) | {b[1]} trials (2 %) | {b[2]} trials (5 %) | sampler time [s] |",
                  "|---|---|---|---|---|"]
        for smp in r.curves:
            cells = [f"{r.at(smp, n).mean():.3f} ± {r.at(smp, n).std():.3f}" for n in b]
            lines.append(f"| {smp} | " + " | ".join(cells) + f" | {r.seconds[smp]:.1f} |")
        best[r.arch] = r.best()
        lines += ["", f"Best at 5 %: **{best[r.arch]}**.", ""]
    lines += ["![hypervolume vs trials](img/hypervolume.png)", "",
              "| model | best sampler at 5 % of the grid |", "|---|---|"]
    lines += [f"| {a} | {s} |" for a, s in best.items()]
    lines.append("")


def section_peers(lines: list[str], o: Options) -> None:
    quick = o.quick
    lines += peers_report.markdown(peers.compare(quick))


SECTIONS = {"throughput": section_throughput, "runs": section_runs, "optuna": section_optuna,
            "sweep": section_sweep, "search": section_search, "peers": section_peers, "profile": section_profile}
NEEDS_BASELINE = ("throughput", "runs")
DEFAULT = [name for name in SECTIONS if name != "optuna"]


def main(argv: list[str] | None = None) -> int:
    from dse.procs import tune_malloc

    tune_malloc()  # as every dse process (the in-process sections: sweep, grid rates)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS) + " (default: all but optuna)")
    ap.add_argument("--quick", action="store_true", help="smaller samples (a smoke run)")
    ap.add_argument("--models", help="comma-separated models for the throughput section (default: all)")
    ap.add_argument("--baseline", default=before_after.DEFAULT_BASELINE,
                    help="git ref measured as 'before' (default %(default)s, main at the start of issue 15's "
                         "speed round); 'none' to skip")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = ap.parse_args(argv)
    chosen = args.only.split(",") if args.only else DEFAULT
    unknown = [c for c in chosen if c not in SECTIONS]
    if unknown:
        ap.error(f"--only: unknown section(s) {', '.join(unknown)}; allowed: {', '.join(SECTIONS)}")
    models = args.models.split(",") if args.models else available()
    bad = [a for a in models if a not in available()]
    if bad:
        ap.error(f"--models: unknown model(s) {', '.join(bad)}; allowed: {', '.join(available())}")
    o = Options(args.quick, models, None if args.baseline.lower() == "none" else args.baseline)
    # a terminated run still removes its temporary worktree (ExitStack below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    m = machine.describe()
    lines = ["# Benchmarks", "",
             f"Measured by `make bench` on {m['date']}: {m['cpu']}, {m['cores']} cores, {m['os']}, "
             f"Python {m['python']}, numpy {m['numpy']}, optuna {m['optuna']}."
             + (" Quick mode (smaller samples)." if args.quick else ""), ""]
    t0 = time.time()
    spent = {}
    with contextlib.ExitStack() as stack:
        if o.baseline is None:
            o.baseline_line = "No baseline: run with `--baseline REF` for before/after columns."
        elif any(c in NEEDS_BASELINE for c in chosen):
            try:
                o.baseline_tree, commit = stack.enter_context(before_after.worktree(o.baseline))
                o.baseline_line = (f"*Before* = `{o.baseline}` (commit {commit[:10]}), checked out in a temporary git "
                                   f"worktree and run from the same venv with PYTHONPATH pointing there; *after* = this "
                                   "working tree.")
            except before_after.Unavailable as exc:
                o.baseline_line = f"Baseline `{o.baseline}` skipped: {exc}."
            print(o.baseline_line, flush=True)
        for name in chosen:
            t1 = time.time()
            SECTIONS[name](lines, o)
            spent[name] = time.time() - t1
            print(f"section {name}: {spent[name]:.0f} s", flush=True)
    lines.append("_Section times: " + ", ".join(f"{k} {v:.0f} s" for k, v in spent.items())
                 + f". Total benchmark time: {time.time() - t0:.0f} s._")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`make bench`: measure, then write docs/benchmarks.md (machine and date included).

Sections: model throughput (scalar vs batched, per model), Optuna trials per
second for the quickstart study per sampler and storage, and the joblib
sweep speed-up from 1 to 2 workers, and peers (ZigZag in its own venv, MAESTRO's
published rate). Every ratio compares numbers measured in this same run. Run a
subset with ``--only throughput,optuna,sweep,peers``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from archmodels import available  # noqa: E402
from benchmarks import machine, optuna_speed, peers, peers_report, throughput  # noqa: E402

# Each model on VGG16 or its natural workload.
NATURAL = {"emaxv": "vgg16-conv", "emaxvr": "vgg16", "imax": "spmm:n=512,sparsity=0.9", "rena": "vgg16",
           "atomswitch": "lenet", "multicore": "vgg16"}
# throughput measured in this invocation, by (model, workload): reused by the peer section
MEASURED: dict[tuple[str, str], throughput.Throughput] = {}


def section_throughput(lines: list[str], quick: bool) -> None:
    lines += ["## Model evaluation throughput", "",
              "Design-point x layer evaluations per second. *Random*: points drawn uniformly from each model's "
              "whole declared space (infeasible corners included; continuous parameters make every point a new "
              "hardware structure, the worst case for models that plan per structure). *Scalar*: "
              "`model.evaluate`, one point per call (a study with batch_size 1). *Batched*: one "
              "`evaluate_batch` call over as many points as it evaluates in about a second (128-4,096, the "
              "*batch* column). Same points, same run. *Grid*: one cold batched call on 4,096 points drawn from "
              "the model's search-quality space (`benchmarks/spaces/`), where hardware structures repeat as "
              "in a real study.", "",
              "| model | workload | layers | scalar evals/s | batched evals/s | batch | batched / scalar "
              "| one full-network evaluation | grid sample evals/s (workload) |",
              "|---|---|---|---|---|---|---|---|---|"]
    from benchmarks import search_quality

    for arch in available():
        wl = NATURAL.get(arch, "vgg16")
        t, _ = throughput.measure_adaptive(arch, wl, quick)
        MEASURED[arch, wl] = t
        space = search_quality.SPACES / f"{arch}.yaml"
        grid = ""
        if space.exists():
            rate, _, distinct = throughput.measure_grid(str(space), 1024 if quick else 4096)
            grid = f"{rate:,.0f} (`{config_workloads(space)}`, {distinct} distinct points)"
        lines.append(f"| {arch} | `{wl}` | {t.layers} | {t.scalar_evals_per_s:,.0f} | {t.batch_evals_per_s:,.0f} "
                     f"| {t.batch_size} | {t.ratio:,.1f}x | {t.one_point_s * 1e3:.2f} ms | {grid} |")
        print(f"throughput {arch}: {t.batch_evals_per_s:,.0f} evals/s batched, {t.ratio:.1f}x scalar", flush=True)
    lines.append("")


def config_workloads(space: Path) -> str:
    from dse import config

    return ", ".join(config.load(space).workloads)


def section_optuna(lines: list[str], quick: bool) -> None:
    n = 100 if quick else 400
    lines += ["## Optuna trials per second (quickstart study)", "",
              f"`studies/quickstart.yaml` ({n} trials; GP: 40, its cost grows with the trials; 6 searched "
              "parameters, 2 objectives, 1 constraint), run exactly as `dse run` runs it (ask/tell loop, "
              "constraints and metrics stored per trial).", "",
              "| sampler | storage | batch_size | trials/s |", "|---|---|---|---|"]
    for sampler in ("random", "nsga2", "nsga3", "tpe", "gp"):
        for storage, batch in (("journal", 1), ("journal", 40), ("sqlite", 1)):
            if (storage == "sqlite" and sampler != "random") or (sampler == "gp" and batch > 1):
                continue
            trials = min(n, 40) if sampler == "gp" else n
            r = optuna_speed.measure(ROOT / "studies/quickstart.yaml", sampler, trials, batch_size=batch, storage=storage)
            lines.append(f"| {sampler} | {storage} | {batch} | {r.per_s:,.0f} |")
            print(f"optuna {sampler} {storage} b{batch}: {r.per_s:,.0f} trials/s", flush=True)
    lines.append("")


def section_sweep(lines: list[str], quick: bool) -> None:
    from dse import config
    from dse.sweep import Grid, run_sweep

    space = ROOT / "benchmarks" / "spaces" / "sweep_multicore.yaml"
    tmp = Path(tempfile.mkdtemp(prefix="dse-sweep-"))
    st = config.load(space, {"results_dir": str(tmp)})
    n = Grid.of(st).size
    sample = 50000 if quick else None
    points = sample or n
    times, evals = {}, {}
    for jobs in (1, 2):
        t0 = time.perf_counter()
        _, _, evals[jobs] = run_sweep(st, n_jobs=jobs, sample=sample, seed=0, out_dir=tmp / f"j{jobs}", progress=False)
        times[jobs] = time.perf_counter() - t0
    same = (tmp / "j1" / "trials.csv").read_bytes() == (tmp / "j2" / "trials.csv").read_bytes()
    lines += ["## joblib sweep speed-up", "",
              f"`dse sweep benchmarks/spaces/sweep_multicore.yaml`: {points:,} grid points, multicore on VGG16 "
              "(21 layers), chunks of 2,048 points per joblib task (loky backend). *Evaluation* = the parallel "
              "phase (workers start, evaluate, checkpoint chunks); *total* adds the serial CSV, Pareto and plot "
              f"output. The two runs wrote identical trials.csv files: {same}.", "",
              "| workers | evaluation s | evaluation points/s | speed-up | total s |", "|---|---|---|---|---|"]
    for jobs in times:
        lines.append(f"| {jobs} | {evals[jobs]:.2f} | {points / evals[jobs]:,.0f} | {evals[1] / evals[jobs]:.2f}x "
                     f"| {times[jobs]:.2f} |")
    lines.append("")
    print(f"sweep: evaluation 1 worker {evals[1]:.2f} s, 2 workers {evals[2]:.2f} s", flush=True)


def section_search(lines: list[str], quick: bool) -> None:
    from benchmarks import search_quality as sq

    archs = [a for a in available() if (sq.SPACES / f"{a}.yaml").exists()]
    seeds = sq.SEEDS[:2] if quick else sq.SEEDS
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


def section_peers(lines: list[str], quick: bool) -> None:
    lines += peers_report.markdown(peers.compare(quick, MEASURED.get(("emaxvr", "vgg16"))))


SECTIONS = {"throughput": section_throughput, "optuna": section_optuna, "sweep": section_sweep,
            "search": section_search, "peers": section_peers}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--quick", action="store_true", help="smaller samples (a smoke run)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = ap.parse_args(argv)
    chosen = args.only.split(",") if args.only else list(SECTIONS)
    m = machine.describe()
    lines = ["# Benchmarks", "",
             f"Measured by `make bench` on {m['date']}: {m['cpu']}, {m['cores']} cores, {m['os']}, "
             f"Python {m['python']}, numpy {m['numpy']}, optuna {m['optuna']}."
             + (" Quick mode (smaller samples)." if args.quick else ""), ""]
    t0 = time.time()
    for name in chosen:
        SECTIONS[name](lines, args.quick)
    lines.append(f"_Total benchmark time: {time.time() - t0:.0f} s._")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

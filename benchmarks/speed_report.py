"""Markdown of issue 15's sections: evaluation speed vs the yardsticks, ``dse run`` before/after, profiles.

Pure functions of measured numbers (:class:`benchmarks.throughput.Speed`,
:class:`RunRate`), so tests can check the tables without timing anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.throughput import BATCH_COLUMNS, ONE_COLUMNS, Speed, ratio_text

TARGET_EVALS_PER_S = 1e6  # issue 15: design-point x layer evaluations/s, batched, random points


@dataclass
class RunRate:
    """``dse run`` trials/s of one study, sampler and batch size in one tree (None + error when it failed)."""

    study: str
    sampler: str
    batch_size: int
    trials: int
    seconds: float | None
    error: str | None = None
    stored: int = 0  # trials in the study before the run (a continued study)

    @property
    def per_s(self) -> float | None:
        return None if self.seconds is None else self.trials / self.seconds


def table(columns: tuple[str, ...], rows: list[dict[str, str]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return out + ["| " + " | ".join(r.get(c, "—") for c in columns) + " |" for r in rows]


def _gc_sentence(after: list[Speed]) -> str:
    """The untimed full collections of this run, per model (count, total ms)."""
    cells = [f"{s.arch} {s.gc_between_n} ({s.gc_between_s * 1e3:,.0f} ms)" for s in after if s.gc_between_n]
    return ("Untimed collections in this run: " + ", ".join(cells) + ".") if cells else ""


def speed_section(after: list[Speed], before: dict[str, Speed | str], baseline: str,
                  errors: dict[str, str]) -> list[str]:
    """Batched table, one-point table, before/after table, targets.

    ``before``: per model the baseline's Speed, or a string saying why it is
    missing; ``baseline``: a sentence naming the baseline (or why none ran);
    ``errors``: models whose current measurement failed.
    """
    lines = ["## Evaluation speed (issue 15)", "",
             "All numbers in this section come from this one run; the machine is shared and noisy (+-30 % between "
             "runs), so the ratios are what count. Each model on VGG16 or its natural workload, each measurement "
             "in its own subprocess (`benchmarks/tree_runner.py`), with the process settings of that tree's dse "
             "processes: in this tree, glibc's malloc thresholds fixed (`dse.procs.tune_malloc`, which every dse "
             "process calls; with and without it: docs/profile/shared_paths.md, sixth round).", "",
             "**Optuna's own trial** (the yardstick of the one-point path; column *Optuna trial*) = ask six "
             "parameters (two ints, two floats, two categoricals) and tell two objectives, RandomSampler, in-memory "
             "storage (`benchmarks/optuna_speed.bare_trial`), measured in the same subprocess as the model: as "
             "many trials as the one-point rows below, interleaved with them in blocks of 25 (rows, then trials), "
             "mean per trial. A slow moment of the shared machine thus weighs on both sides of each ratio alike "
             "(until 2026-11-26 the trials ran after the model, and atomswitch's ratio read 0.77x to 1.28x in three "
             "runs of one tree). A full garbage collection runs, untimed, before each pair of blocks: before "
             "2026-11-26 (evening) one full collection (~30 ms, the whole heap of ~60 k tracked objects) fell inside "
             "the ~1 s of one side or the other, wherever the collector's counters stood in that process, and moved "
             "atomswitch's ratio between ~0.8x and ~1.2x from process to process (docs/profile/shared_paths.md, "
             "eighth round). Only Optuna's trials leave objects for it to collect (its storage, ~10 tracked objects "
             "a trial; a model's row ~0); the young collections each side's own allocations trigger stay inside "
             "its blocks. " + _gc_sentence(after), "",
             "**Numpy roofline** (the yardstick of the array arithmetic; `benchmarks/roofline.py`): for the same "
             "batch size and the same layers, per layer 21 numpy operations over arrays of the batch's length "
             "(roofline time = max(ops / (PEs x clock), bytes / bandwidth), utilization, energy = MAC + DRAM + "
             "leakage x time, a buffer fit check, running totals), plus 6 for area, leakage and the network "
             "totals. Its parameter arrays are random (PEs, clock, bandwidth, word width, buffer): numpy's cost "
             "depends on the array length, not on the values. It models no architecture; it is the floor of "
             "\"about 20 array operations per layer\". The ratios use it. *Stacked roofline*: the same totals "
             "computed over (layers x points) arrays, about 25 operations for the whole network "
             "(`roofline.evaluate_stacked`): what vectorising across layers buys where numpy's per-call overhead "
             "dominates (one point, small batches); at large batches it can be slower, its arrays leave the cache.",
             "",
             "### Batched: one `evaluate_batch` call over random points of the model's whole declared space", "",
             "*batch*: points per call, sized by a probe so that one call takes about a second (128-4,096; quick "
             "mode: 0.2 s, at most 1,024). *first call*: the subprocess's first call of that size (after an 8-point "
             "warm-up for the imports), timed alone: the heap grows to its peak and each new page is faulted in, "
             "per-structure caches fill; a sweep worker pays it on its first chunk. *batched evals/s*: the calls "
             "after it, on fresh points, until a second of calls has passed, however many calls that takes (*calls*; "
             "until 2026-11-27 at most 8 calls: ~35 ms of IMAX's, whose rate then moved 0.56-0.76 M between runs "
             "with this VM's steal time; earlier still the first call was among them). *CPU evals/s*: the same calls over their CPU time "
             "(`process_time`), which another process on the 2 cores or the VM's steal time does not lengthen as "
             "much; the target is judged on the wall-clock column. *feasible*: share of "
             "those points the model finds feasible (infeasible points are evaluated all the same). *batched / "
             "roofline*: the model's rate over the roofline's on the same batch size and layers. *batched point / "
             "Optuna trial*: the model's time per point in the batch over Optuna's own trial.", ""]
    lines += table(BATCH_COLUMNS, [s.columns() for s in after])
    steps = sorted({int(k) for s in after if s.ladder for k in s.ladder})
    if steps:
        lines += ["", "**Batched evals/s by points per call** (`throughput.batch_ladder`, same subprocess, after the "
                  "rest: at each size calls on fresh random points for at least 0.3 s and 3 calls, after one untimed "
                  "call of that size; a size whose first call takes over a second ends a model's row). A model's "
                  "fixed cost per call (numpy's dispatch, Python) weighs less as the batch grows, its arrays leave "
                  "the caches: the column above is at the probe's size, these rows show the others.", "",
                  "| model | " + " | ".join(f"{n:,} points" for n in steps) + " |",
                  "|---|" + "---|" * len(steps)]
        for s in after:
            if s.ladder:
                lines.append(f"| {s.arch} | " + " | ".join(
                    f"{s.ladder[str(n)]:,.0f}" if str(n) in s.ladder else "—" for n in steps) + " |")
    lines += ["", "### One point: the path of a study with batch_size 1", "",
              "*one point (random)*: `dse.objective.evaluate_rows(study, [row])` (params -> `evaluate_batch` on one "
              "point -> totals, objectives, constraints) for a one-workload study over the model's whole declared "
              "space, mean over distinct random rows for about a second after one warm-up row (at most 500; quick: "
              "0.2 s, 50). *defaults, warm*: the same call repeated on the default point (median; every per-structure "
              "cache hits). *model.evaluate -> dict*: `model.evaluate(workload, **defaults)` returning the JSON "
              "contract dictionary, warm, median. *roofline one point*: the roofline on arrays of length 1 (median).",
              ""]
    lines += table(ONE_COLUMNS, [s.columns() for s in after])
    lines += [""] + [f"- `{a}`: not measured: {e}" for a, e in errors.items()]
    lines += ["", "### Targets", "",
              f"Issue 15 asks for >= {TARGET_EVALS_PER_S:,.0f} design-point x layer evaluations/s batched on random "
              "points, and one full-network point no slower than Optuna's own trial.", "",
              "| model | batched evals/s | >= 1 M | one point (random) / Optuna trial | <= 1 |", "|---|---|---|---|---|"]
    for s in after:
        r = s.one_random_s / s.trial_s
        lines.append(f"| {s.arch} | {s.batched_evals_per_s:,.0f} | {'yes' if s.batched_evals_per_s >= TARGET_EVALS_PER_S else 'no'} "
                     f"| {ratio_text(r)} | {'yes' if r <= 1 else 'no'} |")
    lines += ["", "### Before and after", "", baseline, ""]
    if before:
        lines += ["Both trees measured by the same code with the same batch size (the current tree's), one "
                  "subprocess each, model by model (before, then after). *speed-up* = before time / after time.", "",
                  "| model | batched evals/s before | after | speed-up | one point (random) before | after | speed-up "
                  "| defaults (warm) before | after | speed-up |", "|---|---|---|---|---|---|---|---|---|---|"]
        for s in after:
            b = before.get(s.arch)
            if not isinstance(b, Speed):
                lines.append(f"| {s.arch} | {b or 'not measured'} | {s.batched_evals_per_s:,.0f} | — | — "
                             f"| {s.one_random_s * 1e3:.3g} ms | — | — | {s.one_default_s * 1e3:.3g} ms | — |")
                continue
            lines.append(f"| {s.arch} | {b.batched_evals_per_s:,.0f} | {s.batched_evals_per_s:,.0f} "
                         f"| {ratio_text(b.batched_point_s / s.batched_point_s)} "
                         f"| {b.one_random_s * 1e3:.3g} ms | {s.one_random_s * 1e3:.3g} ms "
                         f"| {ratio_text(b.one_random_s / s.one_random_s)} "
                         f"| {b.one_default_s * 1e3:.3g} ms | {s.one_default_s * 1e3:.3g} ms "
                         f"| {ratio_text(b.one_default_s / s.one_default_s)} |")
    return lines + [""]


def networks_section(workload: str, after: list[Speed], before: dict[str, Speed | str], errors: dict[str, str]) -> list[str]:
    """One point and batched on a network with vector layers and GEMM forms (``workload``), per model, before and
    after: the cost a study of such a network pays, outside issue 15's targets (measured on VGG16 or the model's
    natural workload above)."""
    lines = [f"### A network with vector layers and GEMM forms: `{workload}`", "",
             "The same measurement as above (`measure_speed`, random points of the whole declared space, Optuna's "
             f"trial in the same subprocess) on `{workload}`: its vector layers (additions, activations, "
             "normalisations) run on the shared vector path, its 1x1 convolutions and products are costed in every "
             "GEMM form. Not one of issue 15's targets (they name VGG16 or the model's natural workload); a study of "
             "a real network pays this.", "",
             "| model | layers | batched evals/s before | after | one point (random) before | after | speed-up "
             "| one point / Optuna trial |", "|---|---|---|---|---|---|---|---|"]
    for s in after:
        b = before.get(s.arch)
        if isinstance(b, Speed):
            cells = (f"{b.batched_evals_per_s:,.0f} | {s.batched_evals_per_s:,.0f} | {b.one_random_s * 1e3:.3g} ms "
                     f"| {s.one_random_s * 1e3:.3g} ms | {ratio_text(b.one_random_s / s.one_random_s)}")
        else:
            cells = (f"{b or 'not measured'} | {s.batched_evals_per_s:,.0f} | — | {s.one_random_s * 1e3:.3g} ms | —")
        lines.append(f"| {s.arch} | {s.layers} | {cells} | {ratio_text(s.one_random_s / s.trial_s)} |")
    lines += [""] + [f"- `{a}`: not measured: {e}" for a, e in errors.items()]
    return lines + [""]


def runs_section(rows: list[tuple[RunRate | None, RunRate]], baseline: str, trials_text: str,
                 large: str | None = None) -> list[str]:
    """``dse run`` trials/s before (None when no baseline) and after, per study x sampler x batch size
    (``large``: what the row of a continued study, ``stored`` > 0, continued)."""
    lines = ["## `dse run` trials per second, before and after", "", baseline, "",
             "Each run: `dse.study.run` exactly as `dse run` calls it (ask, evaluate, constraints, tell; journal "
             "storage in a temporary results folder; no report), sampler overridden with seed 0 (NSGA-II: "
             f"population 40), {trials_text}; imports and study loading excluded; each in its own subprocess, "
             "the baseline's run right before the current tree's. *batch_size 40* is what both study files set; "
             "*1* is a study that evaluates each trial on its own (TPE's default use)."
             + (f" *continued*: {large}, stored by this tree first, then copied for each tree's run; trials/s "
                "of the designs added (NSGA-II on a grid repeats designs as it converges, each repeat a trial of "
                "its own: Optuna's cost per ask grows with every stored trial)." if large else ""), "",
             "| study | sampler | batch_size | trials | before trials/s | after trials/s | after / before |",
             "|---|---|---|---|---|---|---|"]

    def rate(r: RunRate | None) -> str:
        if r is None:
            return "—"
        return f"{r.per_s:,.1f}" if r.per_s is not None else f"failed: {r.error}"

    for b, a in rows:
        ratio = ratio_text(a.per_s / b.per_s) if b and b.per_s and a.per_s else "—"
        study = f"`{a.study}` continued" if a.stored else f"`{a.study}`"
        lines.append(f"| {study} | {a.sampler} | {a.batch_size} | {a.trials} | {rate(b)} | {rate(a)} | {ratio} |")
    return lines + [""]


def profile_section(folder: Path) -> list[str]:
    """Every ``docs/profile/*.md`` verbatim under a heading of its own (written by the helpers who profiled)."""
    files = sorted(folder.glob("*.md")) if folder.is_dir() else []
    lines = ["## Profile", ""]
    if not files:
        return lines + [f"No profile notes (`docs/{folder.name}/*.md`) were present.", ""]
    lines += ["Where the time went and what changed, as written by whoever profiled each part (files "
              "`docs/profile/*.md`, included verbatim).", ""]
    for f in files:
        lines += [f"### {f.stem} (`docs/profile/{f.name}`)", "", f.read_text().rstrip(), ""]
    return lines

"""Measure one source tree of accel-dse in its own process (``before``/``after`` of ``make bench``).

Run by :mod:`benchmarks.before_after` as
``python benchmarks/tree_runner.py TREE MODE ...`` with ``PYTHONPATH=TREE``.
The project's packages (``archmodels``, ``dse``, ``workloads``) are imported
from ``TREE`` first; only then is this file's own repository put on the path
for the benchmark code (``benchmarks.*``), so one measuring method runs on
both trees. Submodules load through their package's path, so nothing of the
other tree mixes in; the result records where ``archmodels`` and ``dse``
came from, and the caller checks it.

Modes (the result is printed as one JSON line starting ``RESULT``):

* ``speed ARCH WORKLOAD [--quick] [--batch N]``:
  :func:`benchmarks.throughput.measure_speed` (Optuna's own trial measured
  in the same process);
* ``run STUDY SAMPLER N_TRIALS BATCH_SIZE``: trials/s of ``dse.study.run``
  (the loop of ``dse run``: ask, evaluate, set constraints, tell, journal
  storage in a temporary results folder), imports and study loading excluded.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def import_tree(tree: Path) -> dict[str, str]:
    """Import the project's top-level packages from ``tree``; then make ``benchmarks`` importable from HERE."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(tree))
    where = {}
    for pkg in ("workloads", "archmodels", "dse"):
        mod = importlib.import_module(pkg)
        where[pkg] = str(Path(mod.__file__).resolve().parents[1])
    sys.path.insert(0, str(HERE))
    return where


def _process_settings() -> bool:
    """What the tree's dse processes set up first (``dse.procs.tune_malloc``, where the tree has it), so each tree
    is measured as its ``dse`` commands run; returns whether glibc's malloc thresholds were fixed."""
    try:
        tune = getattr(importlib.import_module("dse.procs"), "tune_malloc", None)
    except ImportError:
        return False
    return bool(tune()) if tune is not None else False


def run_rate(study_file: str, sampler: str, n_trials: int, batch_size: int, start: Path | None = None,
             keep: Path | None = None) -> dict:
    """``dse run``'s trials/s from scratch, or continuing a copy of the stored study in results folder ``start``
    (trials: those added); ``keep``: where to leave the results folder (e.g. to be a later run's ``start``)."""
    from dse import config
    from dse import study as study_mod
    from dse import worker as worker_mod

    tmp = Path(tempfile.mkdtemp(prefix="dse-bench-run-"))
    try:
        spec = {"name": sampler, "seed": 0}
        if sampler.startswith("nsga"):
            spec["options"] = {"population_size": 40}
        ov = {"sampler": spec, "n_trials": n_trials, "batch_size": batch_size, "n_jobs": 1,
              "results_dir": str(tmp), "timeout": None}
        st = config.load(study_file, ov)
        before = stored = 0
        if start is not None:
            shutil.copytree(start, st.out_dir)
            ost = study_mod.open_study(st, load_only=True)
            before, stored = worker_mod.counts(ost)[0], len(ost.get_trials(deepcopy=False))
        t0 = time.perf_counter()
        study_mod.run(st, ov, progress=False)
        seconds = time.perf_counter() - t0
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(st.out_dir, keep)
        return {"trials": n_trials - before, "seconds": seconds, "stored": stored}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("tree", type=Path)
    sub = ap.add_subparsers(dest="mode", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("arch")
    sp.add_argument("workload")
    sp.add_argument("--quick", action="store_true")
    sp.add_argument("--batch", type=int)
    sp.add_argument("--ladder", action="store_true", help="also batched evals/s by points per call")
    rp = sub.add_parser("run")
    rp.add_argument("study")
    rp.add_argument("sampler")
    rp.add_argument("n_trials", type=int)
    rp.add_argument("batch_size", type=int)
    rp.add_argument("--start", type=Path, help="continue a copy of the study stored in this results folder")
    rp.add_argument("--keep", type=Path, help="copy the results folder here after the run")
    args = ap.parse_args(argv)
    where = import_tree(args.tree.resolve())
    tuned = _process_settings()
    if args.mode == "speed":
        from benchmarks.throughput import measure_speed

        out = dataclasses.asdict(measure_speed(args.arch, args.workload, None, args.quick,
                                               batch=args.batch, ladder=args.ladder))
    else:
        out = run_rate(args.study, args.sampler, args.n_trials, args.batch_size, args.start, args.keep)
    out["imported_from"] = where
    out["malloc_tuned"] = tuned
    mixed = sorted(name for name, mod in list(sys.modules.items())
                   if name.split(".")[0] in where and getattr(mod, "__file__", None)
                   and not Path(mod.__file__).resolve().is_relative_to(args.tree.resolve()))
    if mixed:
        out["imported_from"]["elsewhere"] = ", ".join(mixed)
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

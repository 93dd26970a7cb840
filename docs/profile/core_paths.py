"""Time the shared evaluation paths (issue 15): a study's one-point path and each model's batched rate.

    .venv/bin/python docs/profile/core_paths.py measure            # this tree, JSON on stdout
    .venv/bin/python docs/profile/core_paths.py compare BASE_DIR   # BASE_DIR (e.g. a git worktree of an older
                                                                   # commit) vs this tree, interleaved in one run

``compare`` runs ``measure`` in subprocesses with ``PYTHONPATH`` set to each tree, alternating (base, this,
base, this) so both see the same machine load, and prints each figure's best of the repeats and the ratio.
Not a test: timings only (docs/profile/core.md records a run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]

#: (model, workload) of the lead's baseline table (docs/profile/core.md)
CASES = (("emaxv", "vgg16-conv"), ("emaxvr", "vgg16"), ("imax", "spmm:n=512,sparsity=0.9"),
         ("rena", "vgg16"), ("atomswitch", "lenet"), ("multicore", "vgg16"))
STUDIES = ("studies/quickstart.yaml", "studies/emaxvr_dse_vgg16.yaml")
#: ``dse run`` as a user runs it (journal storage in a temporary directory): (sampler, trials, batch size)
RUNS = (("tpe", 60, 1), ("nsga2", 400, 40))


def _per_call_s(fn, args_list) -> float:
    t0 = time.perf_counter()
    for a in args_list:
        fn(a)
    return (time.perf_counter() - t0) / len(args_list)


def measure(root: Path) -> dict:
    import numpy as np
    import optuna

    from archmodels import get_model
    from dse import config
    from dse.objective import evaluate_rows
    from dse.sweep import Grid
    from workloads import load_workload

    out: dict = {"study_one_point_s": {}, "batched_evals_per_s": {}, "model_one_point_s": {}}
    for path in STUDIES:
        st = config.load(root / path)
        grid = Grid.of(st)
        rows = grid.rows(np.random.default_rng(0).integers(0, grid.size, 300))
        evaluate_rows(st, rows[:20])  # imports and per-structure caches of a first batch
        out["study_one_point_s"][Path(path).stem] = _per_call_s(lambda r: evaluate_rows(st, [r]), rows[20:])
    for arch, wl_name in CASES:
        model, wl = get_model(arch), load_workload(wl_name)
        rng = np.random.default_rng(1)
        model.evaluate_batch(wl, model.params.points(model.params.random_rows(8, rng)))
        best = 0.0
        for _ in range(3):  # fresh points each call: no cache can serve a repeated batch
            pts = model.params.points(model.params.random_rows(512, rng))
            t0 = time.perf_counter()
            model.evaluate_batch(wl, pts)
            best = max(best, 512 * len(wl.layers) / (time.perf_counter() - t0))
        out["batched_evals_per_s"][arch] = best
        defaults = model.params.defaults()
        model.evaluate(wl, **defaults)
        out["model_one_point_s"][arch] = _per_call_s(lambda _: model.evaluate(wl, **defaults), range(20))

    out["run_trials_per_s"] = {}
    for path in STUDIES:
        for sampler, trials, batch in RUNS:
            out["run_trials_per_s"][f"{Path(path).stem} {sampler} batch {batch}"] = _run_rate(root / path, sampler,
                                                                                             trials, batch)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ost = optuna.create_study(directions=["minimize", "minimize"], sampler=optuna.samplers.RandomSampler(seed=0))

    def trial(_):
        t = ost.ask()
        xs = [t.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)]
        ost.tell(t, [sum(xs), xs[0]])

    for _ in range(50):
        trial(None)
    out["optuna_trial_s"] = _per_call_s(trial, range(300))
    return out


def _run_rate(path: Path, sampler: str, trials: int, batch: int) -> float:
    """Trials per second of ``dse run`` (study.run) on a fresh journal storage in a temporary directory."""
    import shutil
    import tempfile

    from dse import config
    from dse import study as study_mod

    tmp = Path(tempfile.mkdtemp(prefix="dse-core-"))
    try:
        ov = {"sampler": {"name": sampler, "seed": 0}, "n_trials": trials, "batch_size": batch, "n_jobs": 1,
              "results_dir": str(tmp), "timeout": None}
        st = config.load(path, ov)
        t0 = time.perf_counter()
        study_mod.run(st, ov, progress=False)
        return trials / (time.perf_counter() - t0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare(base: Path, repeats: int = 2) -> None:
    runs: dict[str, list[dict]] = {"base": [], "this": []}
    for _ in range(repeats):
        for tag, root in (("base", base), ("this", HERE)):
            env = {**os.environ, "PYTHONPATH": str(root)}
            text = subprocess.run([sys.executable, __file__, "measure", str(root)], env=env, cwd=root,
                                  check=True, capture_output=True, text=True).stdout
            runs[tag].append(json.loads(text))

    def best(tag: str, group: str, key: str | None, higher: bool) -> float:
        vals = [r[group] if key is None else r[group][key] for r in runs[tag]]
        return max(vals) if higher else min(vals)

    trial = best("this", "optuna_trial_s", None, False)
    print(f"Optuna trial (ask 6, tell 2, random, in memory): {trial * 1e3:.3f} ms")
    print("| study | one point base | one point now | speed-up | now / Optuna trial |\n|---|---|---|---|---|")
    for key in runs["this"][0]["study_one_point_s"]:
        b, t = best("base", "study_one_point_s", key, False), best("this", "study_one_point_s", key, False)
        print(f"| {key} | {b * 1e3:.2f} ms | {t * 1e3:.2f} ms | {b / t:.1f}x | {t / trial:.1f}x |")
    print("| model | batched base | batched now | ratio | one point base | one point now | ratio |\n"
          "|---|---|---|---|---|---|---|")
    for key in runs["this"][0]["batched_evals_per_s"]:
        bb, bt = best("base", "batched_evals_per_s", key, True), best("this", "batched_evals_per_s", key, True)
        ob, ot = best("base", "model_one_point_s", key, False), best("this", "model_one_point_s", key, False)
        print(f"| {key} | {bb:,.0f} | {bt:,.0f} | {bt / bb:.2f}x | {ob * 1e3:.2f} ms | {ot * 1e3:.2f} ms | "
              f"{ob / ot:.2f}x |")
    print("| dse run (journal storage) | trials/s base | trials/s now | ratio |\n|---|---|---|---|")
    for key in runs["this"][0]["run_trials_per_s"]:
        b, t = best("base", "run_trials_per_s", key, True), best("this", "run_trials_per_s", key, True)
        print(f"| {key} | {b:.1f} | {t:.1f} | {t / b:.2f}x |")


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        print(json.dumps(measure(Path(sys.argv[2]) if len(sys.argv) > 2 else HERE)))
    else:
        compare(Path(sys.argv[2]))

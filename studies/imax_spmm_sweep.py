"""Speedup of sparse over dense IMAX vs sparsity, one curve per matrix size (spec imax.md §6).

``dse sweep`` grids model parameters and adds a study's workloads into one
total; the thesis's curves need each (size, sparsity) product kept apart.
This script takes a study file whose ``workloads`` list is the workload
grid and whose ``space`` is the parameter grid (``studies/imax_spmm_sweep.yaml``)
and evaluates their cross product with joblib: one task per workload, all
grid points of that workload in one vectorised ``evaluate_batch`` call.

    python studies/imax_spmm_sweep.py [STUDY.yaml] [--n-jobs N] [--out DIR]

Writes ``<results_dir>/<name>/spmm_grid/grid.csv`` (one row per workload x
grid point) and ``speedup_vs_sparsity.png`` (one panel per format x
schedule, one line per size).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dse import config
from workloads.errors import UserError
from dse.results import write_csv
from dse.sweep import Grid
from workloads import load_workload


def evaluate_workload(study_path: str, workload: str) -> list[dict[str, Any]]:
    """Every grid point of the study on one workload (a joblib task)."""
    st = config.load(study_path)
    grid = Grid.of(st)
    rows = grid.rows(np.arange(grid.size))
    model = st.model
    pts = model.params.points([{**st.fixed, **r} for r in rows])
    res = model.evaluate_batch(load_workload(workload), pts)
    layer = res.layers[0].layer
    out = []
    for i, r in enumerate(rows):
        d = res.point(i)
        lay = d["layers"][0]
        row: dict[str, Any] = {"workload": workload, "m": layer.m, "k": layer.k, "n": layer.n,
                               "sparsity": getattr(layer, "sparsity", 0.0), **{f"param.{k}": v for k, v in r.items()}}
        row["feasible"] = d["feasible"]
        for key in ("time_s", "dense_time_s", "speedup_vs_dense", "lmm_utilization", "energy_j", "dram_bytes"):
            row[key] = d["total"].get(key)
        for key in ("agrp", "bgrp", "starts", "blocks", "padding_slots"):
            row[key] = lay.get(key)
        cyc = sum(v or 0.0 for v in lay["states"].values())
        for s, v in lay["states"].items():
            row[f"share.{s}"] = (v or 0.0) / cyc if cyc else None
        out.append(row)
    return out


def plot(path: Path, rows: list[dict[str, Any]]) -> None:
    """Speedup vs sparsity: a panel per (format, schedule), a line per size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r.get("param.format"), r.get("param.schedule")) for r in rows}, key=str)
    sizes = sorted({r["m"] for r in rows})
    ncol = min(2, len(panels))
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.5 * ncol, 4 * nrow), squeeze=False, sharey=True)
    for ax, (fmt, sched) in zip(axes.ravel(), panels):
        for n in sizes:
            pts = sorted((r["sparsity"], r["speedup_vs_dense"]) for r in rows
                         if r["m"] == n and r.get("param.format") == fmt and r.get("param.schedule") == sched
                         and r["speedup_vs_dense"] is not None)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"{n} x {n}")
        ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
        ax.set_title(f"format={fmt}, schedule={sched}")
        ax.set_xlabel("sparsity (fraction of zeros)")
        ax.set_ylabel("speedup over dense on IMAX")
        ax.legend(fontsize=8)
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    fig.suptitle("IMAX sparse x dense product: speedup vs sparsity (model)", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study", nargs="?", default=str(Path(__file__).with_name("imax_spmm_sweep.yaml")))
    ap.add_argument("--n-jobs", type=int, help="joblib workers (default: the study's n_jobs)")
    ap.add_argument("--out", help="output folder (default: <results_dir>/<name>/spmm_grid)")
    args = ap.parse_args(argv)
    try:
        st = config.load(args.study)
    except UserError as exc:
        print(f"imax_spmm_sweep: error: {exc}", file=sys.stderr)
        return 2
    from joblib import Parallel, delayed

    out = Path(args.out) if args.out else st.out_dir / "spmm_grid"
    t0 = time.time()
    parts = Parallel(n_jobs=args.n_jobs or st.n_jobs)(delayed(evaluate_workload)(st.path, w) for w in st.workloads)
    rows = [r for part in parts for r in part]
    write_csv(out / "grid.csv", rows)
    plot(out / "speedup_vs_sparsity.png", rows)
    print(f"{len(rows)} points ({len(st.workloads)} workloads x {Grid.of(st).size} grid points) "
          f"in {time.time() - t0:.1f} s -> {out / 'grid.csv'}, {out / 'speedup_vs_sparsity.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

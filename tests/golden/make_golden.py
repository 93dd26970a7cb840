"""Write the golden outputs that structural and speed changes must keep equal.

Every model, every built-in workload (plus parametric ones for the matrix
models), the defaults and a fixed random sample of each model's declared
space (infeasible points included), every key of the contract dictionary.
Run ``python tests/golden/make_golden.py`` only when a model's numbers change
on purpose (a mechanism fix documented in docs/validation.md).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from archmodels import available, get_model  # noqa: E402
from workloads.networks import BUILTINS  # noqa: E402

EXTRA = ["matmul:n=256", "spmm:n=256,sparsity=0.9", "spmv:n=512,sparsity=0.95"]
N_RANDOM = 6
SEED = 20261125
PATH = HERE / "golden.json.gz"


def cases():
    """(arch, workload, rows) of the golden sample."""
    for arch in available():
        model = get_model(arch)
        rng = np.random.default_rng(SEED)
        for wl in list(BUILTINS) + EXTRA:
            rows = [model.params.defaults()] + model.params.random_rows(N_RANDOM, rng)
            yield arch, wl, rows


def compute() -> dict:
    out: dict = {}
    for arch, wl, rows in cases():
        batch = get_model(arch).evaluate_points(wl, rows)
        out[f"{arch}|{wl}"] = [batch.point(i) for i in range(len(rows))]
    return out


def main() -> None:
    data = compute()
    with gzip.open(PATH, "wt") as f:
        json.dump(data, f, sort_keys=True)
    print(f"wrote {PATH} ({sum(len(v) for v in data.values())} points)")


if __name__ == "__main__":
    main()

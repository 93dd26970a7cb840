"""Batch and scalar paths agree, point by point, on every model (issue 7 §1).

Random design points cover each model's whole declared space, infeasible
corners included; one ``evaluate_batch`` call over all of them must give
exactly (bit for bit) what ``evaluate`` gives for each point alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from archmodels import available, get_model

WORKLOADS = {  # each model's natural workloads (small enough for a quick test)
    "multicore": ["alexnet", "fc2"],
    "emaxv": ["alexnet-conv"],
    "emaxvr": ["alexnet", "vgg16-conv"],
    "imax": ["spmm:n=256,sparsity=0.9", "fc1"],
    "rena": ["vgg16", "lenet"],
    "atomswitch": ["lenet"],
}
N_POINTS = 48


@pytest.mark.parametrize("arch", available())
def test_batch_equals_scalar_point_by_point(arch):
    model = get_model(arch)
    rng = np.random.default_rng(7)
    for workload in WORKLOADS.get(arch, ["alexnet"]):
        rows = model.params.random_rows(N_POINTS, rng)
        rows += [model.params.defaults()]
        batch = model.evaluate_points(workload, rows)
        for i, row in enumerate(rows):
            assert batch.point(i) == model.evaluate(workload, **row), (arch, workload, row)


@pytest.mark.parametrize("arch", available())
def test_random_space_reaches_feasible_and_infeasible_points(arch):
    """The sample above is only a good test if it covers both kinds of point."""
    model = get_model(arch)
    rng = np.random.default_rng(7)
    feasible = []
    for workload in WORKLOADS.get(arch, ["alexnet"]):
        rows = model.params.random_rows(200, rng) + [model.params.defaults()]
        feasible.append(model.evaluate_points(workload, rows).feasible)
    f = np.concatenate(feasible)
    assert f.any(), f"{arch}: no feasible point in 200 random ones"
    assert (~f).any(), f"{arch}: no infeasible point in 200 random ones"

"""Every built-in model passes the public conformance check (archmodels.testing.check_model).

This replaces the former tests/test_batch.py: batch == scalar point by point
(bit for bit) is one of the checks, run over each model's whole declared
space (defaults, both corners, random points), on the model's natural
workloads. The sample must reach both feasible and infeasible points, so the
checks of infeasible reasons and of feasible ranges both run on something.
"""

from __future__ import annotations

import pytest

from archmodels import available, get_model
from archmodels.testing import CHECKS, check_model

WORKLOADS = {  # each model's natural workloads (small enough for a quick test)
    "multicore": ["alexnet", "fc2"],
    "emaxv": ["alexnet-conv"],
    "emaxvr": ["alexnet", "vgg16-conv"],
    "imax": ["spmm:n=256,sparsity=0.9", "fc1"],
    "rena": ["vgg16", "lenet"],
    "atomswitch": ["lenet"],
}
N_POINTS = 48


def test_every_built_in_model_has_natural_workloads():
    assert set(available()) <= set(WORKLOADS), "add the new model's workloads to WORKLOADS"


@pytest.mark.parametrize("arch", available())
def test_built_in_model_conforms(arch):
    report = check_model(get_model(arch), WORKLOADS[arch], n_points=N_POINTS, seed=7)
    assert report.checks == CHECKS
    assert report.n_points == len(WORKLOADS[arch]) * (N_POINTS + 3)
    assert report.n_feasible > 0, f"{arch}: no feasible point checked"
    assert report.n_infeasible > 0, f"{arch}: no infeasible point checked (reasons untested)"


@pytest.mark.parametrize("arch", available())
def test_default_workloads_cover_supported_kinds(arch):
    """check_model's default workloads run too (what a user gets without naming any)."""
    report = check_model(get_model(arch), n_points=8, seed=1)
    assert report.n_feasible > 0

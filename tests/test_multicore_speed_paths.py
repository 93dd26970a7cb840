"""The multicore model's one-point path (issue 15: each layer costed in Python numbers) gives the very numbers of
the batch path (the same formulas over arrays of layers x points)."""

from __future__ import annotations


import numpy as np
import pytest

from archmodels import get_model
from archmodels.testing import assert_alone_equals_batch
from archmodels.multicore import model as MC

M = get_model("multicore")


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space, and some with each placement (infeasible ones included)."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    return rows + [{**r, "placement": p} for r in rows[:4] for p in MC.PLACEMENTS]



@pytest.mark.parametrize("wl", ["vgg16", "fc2", "matmul:m=300,k=500,cols=7", "mobilenet_v2"])
def test_each_point_alone_equals_the_batch_states_and_reasons(wl):
    rows = _rows(100, 21)
    batch = assert_alone_equals_batch(M, wl, rows)
    assert batch.feasible.any() and not batch.feasible.all()
    assert any("shared memory too small" in r for r in batch.reason)  # a layer's own reason, too

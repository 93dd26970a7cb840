"""The multicore model's one-point path (issue 15: each layer costed in Python numbers) gives the very numbers of
the batch path (the same formulas over arrays of layers x points)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from archmodels import get_model
from archmodels.multicore import model as MC

M = get_model("multicore")


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space, and some with each placement (infeasible ones included)."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    return rows + [{**r, "placement": p} for r in rows[:4] for p in MC.PLACEMENTS]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("wl", ["vgg16", "fc2", "matmul:m=300,k=500,cols=7", "mobilenet_v2"])
def test_each_point_alone_equals_the_batch_states_and_reasons(wl):
    rows = _rows(100, 21)
    batch = M.evaluate_batch(wl, M.params.points(rows))
    assert batch.feasible.any() and not batch.feasible.all()
    assert any("shared memory too small" in r for r in batch.reason)  # a layer's own reason, too
    for i, row in enumerate(rows):
        one = M.evaluate_batch(wl, M.params.points([row]))
        assert bool(one.feasible[0]) == bool(batch.feasible[i])
        assert one.reason[0] == batch.reason[i]
        assert len(one.layers) == len(batch.layers)
        for lb_one, lb in zip(one.layers, batch.layers):
            assert lb_one.layer is lb.layer
            assert bool(lb_one.feasible[0]) == bool(lb.feasible[i]) and lb_one.reason[0] == lb.reason[i]
            assert list(lb_one.metrics) == list(lb.metrics) and list(lb_one.states) == list(lb.states)
            for key, v in list(lb_one.metrics.items()) + list(lb_one.states.items()):
                got = lb.metrics[key][i] if key in lb.metrics else lb.states[key][i]
                assert _same(v[0], got), (i, lb.layer.name, key, v[0], got)
            assert {k: v[0] for k, v in lb_one.labels.items()} == {k: v[i] for k, v in lb.labels.items()}
        assert list(one.totals) == list(batch.totals)
        for key, v in one.totals.items():
            assert _same(v[0], batch.totals[key][i]), (i, key, v[0], batch.totals[key][i])
        assert one.point(0) == batch.point(i)

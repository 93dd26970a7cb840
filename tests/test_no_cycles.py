"""A model's result is freed by reference counting alone: no reference cycle in the layers, their shared row
arrays or the lazy explanation texts. A cycle keeps a whole batch's arrays (hundreds of MB for EMAXVR) alive
until Python's next full collection, so a loop of batches held several at once."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from archmodels import get_model

WORKLOADS = {"emaxv": "vgg16-conv", "emaxvr": "vgg16", "imax": "spmm:n=256,sparsity=0.9", "rena": "resnet50",
             "atomswitch": "lenet", "multicore": "resnet50"}


def _unreachable_after(fn) -> list:
    """The objects only a cycle kept alive once ``fn``'s result is dropped (collected with gc off before)."""
    while gc.collect():  # what earlier tests left (a collection can free objects whose garbage the next one finds)
        pass
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        return [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        if was:
            gc.enable()


@pytest.mark.parametrize("arch", sorted(WORKLOADS))
@pytest.mark.parametrize("n", [1, 40])
def test_a_result_read_and_dropped_leaves_no_cycle(arch, n):
    m = get_model(arch)
    wl = WORKLOADS[arch]
    m.evaluate_points(wl, m.params.random_rows(n, np.random.default_rng(1)))  # caches filled outside the check

    def evaluate_and_read():
        r = m.evaluate_points(wl, m.params.random_rows(n, np.random.default_rng(2)))
        r.point(0), r.point(n - 1), r.totals
        for lb in r.layers[:3]:
            lb.labels, lb.metrics, lb.feasible

    assert _unreachable_after(evaluate_and_read) == []

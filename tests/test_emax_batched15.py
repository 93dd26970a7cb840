"""EMAX batched, fifteenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np

from archmodels import get_model
from archmodels.emax import model as em
from workloads import load_workload

from .test_emax_batched_paths5 import _rows


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=float)).view(np.int64)


def _spied_batch(points, bound: int, fill_upto: int = em.CUBE_FILL_UPTO):
    """An EMAXV VGG16-conv batch of ``points`` with ``PENDING_BYTES_UPTO`` = ``bound`` (and ``CUBE_FILL_UPTO`` =
    ``fill_upto``): the rows of the results' cube written, the kept values' bytes and chunks when the batch returned
    (before any layer dict is read), and every layer's metrics, states and feasibility."""
    m, wl = get_model("emaxv"), load_workload("vgg16-conv")
    seen = []
    real = em._Results.batches

    def batches(self, layers):
        out = real(self, layers)
        seen.append(self)
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "PENDING_BYTES_UPTO", bound), mock.patch.object(em, "CUBE_FILL_UPTO", fill_upto), \
            mock.patch.object(em._Results, "batches", batches):
        r = m.evaluate_batch(wl, m.params.points(points))
        res = seen[0]
        written, kept, n_kept = set(res.written), res.pending_bytes, len(res.pending)
        layers = r.layers
        # every key of every layer read here (under the bound the batch ran with: fill writes the kept chunks)
        values = [({k: _bits(v) for k, v in lb.metrics.items()}, {k: _bits(v) for k, v in lb.states.items()},
                   lb.feasible.copy()) for lb in layers]
    return written, kept, n_kept, values


def test_a_4096_point_batch_keeps_both_chunks_and_equals_every_key_written_at_once():
    """PENDING_BYTES_UPTO = 32 MiB: a 4,096-point EMAXV VGG16-conv batch (two chunks of 2,048) keeps both chunks'
    values and writes only the keys its own steps read; reading every key afterwards gives the values every key written
    at once gives (the oracle: the cube filled first and every key written by each chunk, no kept values), bit for
    bit; NaN cells (layers without a plan) included."""
    assert em.PENDING_BYTES_UPTO == 32 << 20
    rows = _rows("emaxv", 4096, 15)  # (a third with small arrays and LMMs: layers without a plan, their NaN)
    written, kept, n_kept, got = _spied_batch(rows, em.PENDING_BYTES_UPTO)
    w_written, w_kept, w_n_kept, want = _spied_batch(rows, 16 << 20, fill_upto=1 << 40)  # the oracle
    assert n_kept == 2 and 0 < kept <= em.PENDING_BYTES_UPTO
    assert len(written) < len(em._cube_keys())  # the keys nobody read were not written
    assert w_n_kept == 0 and not w_kept  # (the oracle kept nothing)
    assert len(got) == len(want)
    nan_seen = False
    for (gm, gs, gf), (wm, ws, wf) in zip(got, want):
        assert list(gm) == list(wm) and list(gs) == list(ws)
        for k in wm:
            assert np.array_equal(gm[k], wm[k]), k
            nan_seen |= bool(np.isnan(gm[k].view(float)).any())
        for k in ws:
            assert np.array_equal(gs[k], ws[k]), k
        assert np.array_equal(gf, wf)
    assert nan_seen

"""EMAX batched, fifteenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import model as em
from workloads import load_workload

from .test_emax_batched_paths5 import _dump, _rows


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


# ------------------------------------------------------------ the expansions of counts of 0 or 1 (ONE_EACH_SHORTCUTS)

def _take_former(g: em._Groups, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_Groups.take`` before this round (the general gather), the oracle."""
    if g.one:
        return (np.repeat(g.flat[None], len(ks), axis=0).reshape(-1),
                np.full(len(ks), len(g.flat), dtype=np.int64))
    n = g.lens[ks]
    ends = np.cumsum(n)
    return g.flat[np.repeat(g.offs[ks] - (ends - n), n) + np.arange(int(ends[-1]) if len(ends) else 0)], n


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1), grouped=st.booleans())
def test_groups_take_of_single_points_equals_the_general_gather(n, seed, grouped):
    """A chunk of one point per combination takes ``flat[ks]`` and ones: the general gather's integers and dtypes
    (combinations in any order, repeated, none); grouped points (some combination with 2+ points) keep it."""
    rng = np.random.default_rng(seed)
    groups = None
    if grouped:
        perm = rng.permutation(n + 5).tolist()
        cuts = sorted(rng.choice(np.arange(1, n + 5), size=n - 1, replace=False).tolist()) if n > 1 else []
        groups = [perm[a:b] for a, b in zip([0] + cuts, cuts + [n + 5])]
    step = int(rng.integers(1, n + 1))
    for g in em._Groups.chunks(groups, step, n):
        assert g.single == (len(g.lens) > 1 and bool((g.lens == 1).all()))
        ks = rng.integers(0, len(g.lens), size=int(rng.integers(0, 3 * len(g.lens) + 1)))
        got, want = g.take(ks), _take_former(g, ks)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def _spied_plans(arch: str, wl: str, rows: list[dict], shortcuts: bool):
    """The contract dictionaries of a batch with :data:`ONE_EACH_SHORTCUTS` = ``shortcuts``, and every chunk's
    ``_mapping_rows`` (owner, src), ``_context_plans`` (start, count, the table's src) and ``_final_plans`` (start,
    count, the table's src) integers, and whether the shortcuts ran."""
    m = get_model(arch)
    got: dict[str, list] = {"maps": [], "ctx": [], "final": [], "single": [], "one_each": []}
    real_m, real_c, real_f, real_ch, real_o = em._mapping_rows, em._context_plans, em._final_plans, em._choose, \
        em._one_each

    def one_each(counts):
        out = real_o(counts)
        got["one_each"].append(bool(counts.max(initial=0) <= 1))
        return out

    def maps(*a, **k):
        out = real_m(*a, **k)
        got["maps"].append((out[1], out[2]))
        return out

    def ctx(*a, **k):
        out = real_c(*a, **k)
        got["ctx"].append((out.start, out.count, out.table.src if hasattr(out.table, "src") else None))
        return out

    def final(*a, **k):
        out = real_f(*a, **k)
        got["final"].append((out.start, out.count, out.table.src))
        return out

    def choose(p, grp, *a, **k):
        got["single"].append(grp.single and bool(p.count.max(initial=0) <= 1))
        return real_ch(p, grp, *a, **k)

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "ONE_EACH_SHORTCUTS", shortcuts), mock.patch.object(em, "_mapping_rows", maps), \
            mock.patch.object(em, "_context_plans", ctx), mock.patch.object(em, "_final_plans", final), \
            mock.patch.object(em, "_choose", choose), mock.patch.object(em, "_one_each", one_each):
        r = m.evaluate_points(wl, rows)
        d = [r.point(i) for i in range(len(rows))]
    em.workload_plans.cache_clear()
    return _dump(d), got


@pytest.mark.parametrize("arch,wl,n,seed,kind", [("emaxv", "vgg16-conv", 200, 1, "random"),
                                                  ("emaxv", "vgg16", 200, 2, "small"),
                                                  ("emaxv", "alexnet", 100, 3, "repeat"),
                                                  ("emaxvr", "alexnet", 40, 4, "small")])
def test_count_shortcuts_equal_the_general_expansions(arch, wl, n, seed, kind):
    """With the shortcuts the mapper rows' owners and sources, the plans' segment starts and counts, the final plans
    and the contract dictionaries (NaN, reasons of layers without a plan, every metric and text) are those of the
    general expansions (the code before this round, ``ONE_EACH_SHORTCUTS`` False), integer for integer and dtype
    for dtype. A random EMAXV batch takes the shortcuts in every chunk; repeated points (combinations with several
    points) and EMAXVR (several plans per pair) the general ones."""
    # random points (one per combination; layers without a plan too), or some with small arrays and LMMs and some
    # under criterion=dram (_rows: equal combinations among them), or every point twice (combinations of two points)
    rows = (get_model(arch).params.random_rows(n, np.random.default_rng(seed)) if kind == "random" else
            _rows(arch, n, seed))
    if kind == "repeat":
        rows = rows + [dict(r) for r in rows]
    want_d, want = _spied_plans(arch, wl, rows, False)
    got_d, got = _spied_plans(arch, wl, rows, True)
    assert got_d == want_d
    for part in ("maps", "ctx", "final"):
        assert len(got[part]) == len(want[part])
        for a, b in zip(got[part], want[part]):
            for x, y in zip(a, b):
                if y is None:
                    assert x is None
                    continue
                assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), part
    assert not any(want["single"])
    assert all(got["single"]) == (kind == "random")
    # the mapper rows', plans' and final plans' shortcuts: on every EMAXV chunk of conv and pooling layers (one
    # mapping and one plan per pair whatever the points; an FC layer has two: VGG16's and AlexNet's take the general
    # ones), not on EMAXVR's (several plans per pair)
    assert any(got["one_each"]) == (arch == "emaxv") and all(got["one_each"]) == (wl == "vgg16-conv")
    assert '"feasible": false' in got_d  # (infeasible points, layers without a plan: their NaN and reasons)

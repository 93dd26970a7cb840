"""IMAX batched paths of issue 15's twelfth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from workloads import load_workload
from workloads.parametric import parse

from .test_imax_batched4 import _rows
from .test_imax_batched5 import M, _configs, _plans_equal, _same
from .test_imax_batched8 import _dense_case
from .test_imax_batched11 import _rows_of_block


# ---------------------------------------------------------------- plans: dense and sparse candidates in one pass


def _joined(a: dict, b: dict) -> dict:
    """Two configurations' dicts (``schedule.configurations``) one after the other (numbers shared by both kept)."""
    out = {}
    for key in a:
        x, y = a[key], b[key]
        if np.ndim(x) == 0 and np.ndim(y) == 0 and x == y:
            out[key] = x
        else:
            out[key] = np.concatenate((np.broadcast_to(x, (len(a["H"]),)), np.broadcast_to(y, (len(b["H"]),))))
    return out


def _by_kind(layer, fmt, mapping, n, m, k, nd, cfg, lmm_opt) -> dict:
    """What :func:`plans.mixed_plans` replaces: dense_plans of configurations ``:nd`` and sparse_plans of the
    others, merged in configuration order (count 0 and zero problem numbers where a sparse one falls back)."""
    dcfg = {key: v[:nd] if np.ndim(v) else v for key, v in cfg.items()}
    scfg = {key: v[nd:] if np.ndim(v) else v for key, v in cfg.items()}
    G = len(cfg["H"])
    sp = P.sparse_plans(layer, fmt, mapping, n, scfg, lmm_opt[nd:])
    parts = [(np.arange(nd, G), sp)]
    if nd:
        parts.insert(0, (np.arange(nd), P.dense_plans(m, k, n, dcfg, lmm_opt[:nd])))
    out = P.merge(G, parts)
    out["fallback"] = sp["fallback"]
    return out


@settings(max_examples=60, deadline=None)
@given(m=st.integers(20, 200), k=st.integers(20, 300), n=st.sampled_from([12, 16, 48, 96]),
       sparsity=st.sampled_from([0.5, 0.9, 0.97, 0.999]), seed=st.integers(0, 40),
       lmm_hi=st.sampled_from([3, 8, 64]), opt=st.sampled_from(["all", "none", "mixed"]),
       dense_opt=st.sampled_from(["all", "none", "mixed"]), G=st.integers(0, 120), rng_seed=st.integers(0, 10_000),
       mk=st.sampled_from(["number", "arrays"]))
def test_mixed_plans_equal_dense_and_sparse_plans(m, k, n, sparsity, seed, lmm_hi, opt, dense_opt, G, rng_seed, mk):
    """plans.mixed_plans (dense configurations' numbers in closed form and sparse ones' sums over their tiles side by
    side, one _candidates, one pass of the counts' formulas) == dense_plans and sparse_plans of each kind, merged:
    every configuration's count, candidates (every count, AGRP, BGRP), problem numbers and fallback flag, bit for bit
    and dtype for dtype; dense products m x k x n (one number or one per configuration; k at a block's edge, many
    tiles), sparse configurations with empty tiles (sparsity 0.999), lmm_opt all / none / mixed on either side."""
    layer = parse(f"spmm:m={m},k={k},cols={n},sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    fmt, mapping, scfg, sopt = _configs(np.random.default_rng(rng_seed), m, k, n, 120, lmm_hi, opt)
    case = _dense_case(rng_seed, G, n, mk, dense_opt) if G else None
    if case is None:  # no dense configuration: a zero-length dense part of the sparse product's shape
        ms, ks, dcfg, dopt = m, k, {key: v[:0] if np.ndim(v) else v for key, v in scfg.items()}, sopt[:0]
    else:
        ms, ks, dcfg, dopt = case
    if not len(sopt) or not len(dopt):
        return
    nd = len(dopt)
    cfg, lmm_opt = _joined(dcfg, scfg), np.concatenate((dopt, sopt))
    got, idx, fallback = P.mixed_plans(layer, fmt, mapping, n, ms, ks, nd, cfg, lmm_opt)
    assert np.array_equal(idx, np.concatenate((np.arange(nd), nd + np.flatnonzero(~fallback))))
    _rows_of_block(got)
    merged = P.merge(len(cfg["H"]), [(idx, got)])
    merged["fallback"] = fallback
    _plans_equal(merged, _by_kind(layer, fmt, mapping, n, ms, ks, nd, cfg, lmm_opt))


def test_mixed_plans_when_every_sparse_configuration_falls_back():
    """No sparse configuration left to plan (each has an empty tile): the dense ones' plans alone, == dense_plans."""
    layer = parse("spmm:m=300,k=200,cols=16,sparsity=0.999,bias=1.5,seed=3").layers[0]
    fmt, mapping, scfg, sopt = _configs(np.random.default_rng(2), 300, 200, 16, 120, 3, "mixed")
    back = np.flatnonzero(P.sparse_plans(layer, fmt, mapping, 16, scfg, sopt)["fallback"])
    assert len(back)  # the configurations with an empty tile only
    fmt, mapping, sopt = fmt[back], mapping[back], sopt[back]
    scfg = {key: v[back] if np.ndim(v) else v for key, v in scfg.items()}
    ms, ks, dcfg, dopt = _dense_case(4, 50, 16, "number", "mixed")
    nd = len(dopt)
    got, idx, fallback = P.mixed_plans(layer, fmt, mapping, 16, ms, ks, nd, _joined(dcfg, scfg),
                                       np.concatenate((dopt, sopt)))
    assert fallback.all() and np.array_equal(idx, np.arange(nd))
    want = P.dense_plans(ms, ks, 16, dcfg, dopt)
    for key in ("count", "agrp", "bgrp"):
        _same(got[key], want[key])
    for key in S.FEATURES:
        _same(got["feats"][key], want["feats"][key])
    for key in want["per"]:
        _same(got["per"][key], want["per"][key])


def _separate_kinds(monkeypatch) -> list:
    """_Plans.build with the dense and sparse groups planned apart (the groups handed over sparse first: not the
    mixed pass's case; merge_in_place takes parts in any order); returns a list the groups are recorded in."""
    by_kind = IM._groups_by_kind
    seen = []

    def reversed_groups(*args):
        groups = by_kind(*args)
        seen.append(groups)
        return groups[::-1]

    monkeypatch.setattr(IM, "_groups_by_kind", reversed_groups)
    return seen


@pytest.mark.parametrize("wl, seed", [("spmm:n=96,sparsity=0.9", 5), ("spmm:n=1024,sparsity=0.95", 6),
                                      ("spmm:m=300,k=200,n=16,sparsity=0.999", 7)])
def test_sparse_runs_in_one_pass_equal_the_runs_by_kind(monkeypatch, wl, seed):
    """A sparse product's runs and dense reference with the dense and sparse configurations planned in one pass
    (plans.mixed_plans) == planned kind by kind: every flag, reason and number; the one pass checked to be taken."""
    layer = load_workload(wl).layers[0]
    key = (layer.m, layer.k, layer.n, layer)
    pts = M.params.points(_rows(500, seed, (1, 2, 4, 8)))
    calls = []
    mixed = P.mixed_plans
    monkeypatch.setattr(P, "mixed_plans", lambda *a: calls.append(a[6]) or mixed(*a))
    got = M._sparse_runs(key, IM._Batch.of(pts))
    assert calls and calls[0] > 0  # the pass ran, with dense configurations
    seen = _separate_kinds(monkeypatch)
    want = M._sparse_runs(key, IM._Batch.of(pts))
    assert len(calls) == 1 and [[g[1] for g in groups] for groups in seen] == [[False, True]]
    assert list(got[0]) == list(want[0])
    assert len(want[0]["at"])
    for name in want[0]:
        _same(got[0][name], want[0][name])
    _same(got[1], want[1])


@pytest.mark.parametrize("wl", ["spmm:n=512,sparsity=0.9", "spmm:n=96,sparsity=0.9"])
def test_batch_in_one_pass_equals_the_batch_by_kind(monkeypatch, wl):
    """evaluate_batch of an SpMM workload (random points of the declared space and small structures) with the one
    pass == with the kinds planned apart: every metric, state, flag and reason of every layer and the totals."""
    w = load_workload(wl)
    pts = M.params.points(_rows(700, 11, (1, 2, 4, 8)))
    got = M.evaluate_batch(w, pts)
    _separate_kinds(monkeypatch)
    want = M.evaluate_batch(w, pts)
    for a, b in zip(got.layers, want.layers):
        for name in b.metrics:
            _same(a.metrics[name], b.metrics[name])
        for name in b.states:
            _same(a.states[name], b.states[name])
        _same(a.feasible, b.feasible)
        _same(a.reason, b.reason)
    for name in want.totals:
        _same(got.totals[name], want.totals[name])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-2, 2), max_size=80), st.sampled_from(["bool", "int", "2-D", "list"]))
def test_nonzero_at_equals_flatnonzero(values, kind):
    """schedule.nonzero_at (a 1-D array's nonzero method; anything else np.flatnonzero) == np.flatnonzero: the same
    indices, dtype and shape, for 1-D bool and int arrays (empty included), 2-D arrays and lists."""
    a = np.array(values, dtype=np.int64)
    if kind == "bool":
        a = a > 0
    elif kind == "2-D":
        a = a[: len(a) // 2 * 2].reshape(-1, 2)
    elif kind == "list":
        a = values
    got, want = S.nonzero_at(a), np.flatnonzero(a)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)

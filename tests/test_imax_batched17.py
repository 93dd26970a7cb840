"""IMAX batched paths of issue 15's fifteenth round: each equals the code it replaced (kept below verbatim, but for
names and docstrings, as the oracle), bit for bit and dtype for dtype."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import costs as C
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from tests.test_imax_batched15 import _same
from workloads import load_workload

M = get_model("imax")


# ---------------------------------------------------------------- the former code (oracles)


def _unschedulable_former(cfg: dict[str, np.ndarray]) -> np.ndarray:
    return cfg["error"] | (cfg["n"] % cfg["N"] != 0) | (cfg["b_hi"] < 1)


def _agrp1_too_wide_former(arow, acol, H):
    return arow * 2 * H > arow * (acol + S.pad_of(acol, H)) * 2


def _kb_former(L):
    return L // 1024


def _distinct_rows_former(cols: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    cols = [np.asarray(c, dtype=np.int64) for c in cols]
    radix = [int(np.maximum.reduce(c)) + 1 if len(c) else 1 for c in cols]  # (the ufunc: no Python-level .max)
    if math.prod(radix) < 1 << 62:
        code = np.zeros(len(cols[0]), np.int64)
        for c, r in zip(cols, radix):
            code = code * r + c
        return _unique_index_inverse_former(code)
    _, first, inv = np.unique(np.stack(cols, axis=1), axis=0, return_index=True, return_inverse=True)
    return first, np.asarray(inv).reshape(-1)


def _unique_index_inverse_former(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(code)
    order = S._stable_argsort(code)
    if n == 0:
        return order, np.empty(0, np.intp)
    ordered = code[order]
    new = np.empty(n, bool)  # True where a run of equal values starts
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inv = np.empty(n, np.intp)
    inv[order] = new.cumsum() - 1
    return order[new], inv


def _conf_plans_former(n: int, cfg: dict[str, np.ndarray], opt: np.ndarray, a_max: np.ndarray,
                              conf: np.ndarray, per: dict[str, np.ndarray]) -> dict:
    all_opt, no_opt = bool(opt.all()), not opt.any()
    count, g, AG, BG = P._candidates(n, cfg, True if all_opt else False if no_opt else opt, a_max)
    (R, Cs, NB, ST, SL, FK, FKR, BN, BNC, LA, LAR, MS, MB, GAs, GAC, GAR, TOPg, BIG, MOST,
     N, W, units, fill, arrays, perm, o, TI, sb) = np.take(conf, g, axis=1)
    o = o.astype(bool)
    VB, desc = C.VALUE_BYTES, C.DMA_DESC_WORDS
    GB = n // (BG * N)
    multi = GB > 1
    # C groups over the tiles (x their columns, rows): A groups x B groups (optimised), B groups (swapped A)
    CG, CGc, CGr = np.where(o, GB * GAs, GB * TI), np.where(o, GB * GAC, GB * Cs), np.where(o, GB * GAR, GB * R)
    starts = np.where(o, GB * GAs, GB * NB)
    a_groups = np.where(o, GAs, GB * NB)
    f = {
        "starts": starts, "a_groups": a_groups, "pauses": np.where(o, GB * (NB - GAs), 0),
        "a_bytes": np.where(o, SL * sb + R * np.where(perm, C.INDEX_BYTES, 0),
                            (GB * MS + (SL - MS)) * sb + R * C.INDEX_BYTES * perm),
        "b_bytes": np.where(multi, CGc, BNC) * BG * VB,
        "c_load_bytes": np.where(multi, CGr - GB * FKR, 0) * BG * VB,
        "c_drain_bytes": np.where(multi, CGr, LAR) * BG * VB,
        "exec_cycles": GB * (ST * -(-BG // (W * C.SIMD)) * W + NB * fill),
        "load_desc_words": np.where(multi, 2 * CG - GB * FK, BN) * desc,
        "drain_desc_words": np.where(multi, CG, LA) * desc,
        "a_desc_words": (np.where(o, GAs, GB * MB + (NB - MB)) * arrays + perm * TI) * desc,
        "issued_macs": GB * SL * BG,
        "lmm_exec_bytes": GB * (SL * (sb + BG * VB) + ST * 2 * BG * VB),
        "b_groups": GB,
        "a_group_slots": np.where(o, BIG, TOPg), "a_group_blocks": np.where(o, MOST, 1),
    }
    block = P._count_block(f, len(g), units * W, o)
    return {"count": count, "feats": dict(zip(S.FEATURES, block)), "agrp": AG, "bgrp": BG, "per": per,
            "block": block}


# ---------------------------------------------------------------- helpers


def _configurations_args(rng: np.random.Generator, G: int, per_n: bool):
    """Random configurations of the declared space and beyond it (nchip up to 64, n a power of two or not, one n or
    one per configuration), as ``schedule.configurations`` takes them."""
    n = rng.choice([96, 512, 1024, 1000, 3025], G) if per_n else int(rng.choice([96, 512, 1024, 1000, 7]))
    return (rng.integers(1, 3000, G), rng.integers(1, 3000, G), n, rng.choice(["dense", "ivj", "ivs"], G),
            rng.integers(1, 1024, G), rng.choice([1, 2, 4, 8], G), rng.integers(1, 4097, G), rng.integers(1, 65, G))


# ---------------------------------------------------------------- tests


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 300), st.booleans(), st.booleans())
def test_caps_where_divisible_equal_the_caps_where_read(seed, G, per_n, broadcast_n):
    """configurations(caps_where_divisible=True): every number as without, b_hi the same where nchip divides n and 0
    elsewhere; unschedulable_divisible_caps of it == the former unschedulable of the full configurations."""
    rng = np.random.default_rng(seed)
    m, k, n, mapping, units, cols, lmm_kb, nchip = _configurations_args(rng, G, per_n)
    if broadcast_n and not per_n:  # the model's form: n as a read-only broadcast of one number
        n = np.broadcast_to(np.int64(n), (G,))
    full = S.configurations(m, k, n, mapping, units, cols, lmm_kb, nchip)
    div = S.configurations(m, k, n, mapping, units, cols, lmm_kb, nchip, caps_where_divisible=True)
    assert list(full) == list(div)
    for key in full:
        if key != "b_hi":
            _same(np.broadcast_to(div[key], (G,)), np.broadcast_to(full[key], (G,)))
    divides = np.broadcast_to(n, (G,)) % nchip == 0
    _same(div["b_hi"], np.where(divides, full["b_hi"], 0).astype(np.int64))
    _same(S.unschedulable_divisible_caps(div), _unschedulable_former(full))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 200))
def test_caps_where_divisible_on_pairs(seed, G):
    """The same over (product, configuration) pairs (``pair_cfg``; m, k, n per pair: a network's products)."""
    rng = np.random.default_rng(seed)
    m, k, n, mapping, units, cols, lmm_kb, nchip = _configurations_args(rng, G, True)
    pair_cfg = rng.integers(0, max(G, 1), 2 * G) if G else np.zeros(0, np.intp)
    mkn = [rng.integers(1, 3000, len(pair_cfg)), rng.integers(1, 3000, len(pair_cfg)),
           rng.choice([96, 512, 1024, 3025], len(pair_cfg))]
    args = (*mkn, None, units, cols, lmm_kb, nchip)
    codes = np.searchsorted(np.array(["dense", "ivj", "ivs"]), mapping)
    full = S.configurations(*args, mapping_codes=codes, pair_cfg=pair_cfg)
    div = S.configurations(*args, mapping_codes=codes, pair_cfg=pair_cfg, caps_where_divisible=True)
    divides = mkn[2] % nchip[pair_cfg] == 0 if G else np.zeros(0, bool)
    _same(div["b_hi"], np.where(divides, full["b_hi"], 0).astype(np.int64))
    _same(S.unschedulable_divisible_caps(div), _unschedulable_former(full))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300),
       st.sampled_from(["space", "zeros", "arow0", "acol0", "H0", "negative", "huge", "one"]))
def test_agrp1_too_wide_equals_the_expression(seed, G, how):
    """4.4.3 at AGRP = 1: the constant False when the tiles are non-degenerate == the expression, and the expression
    itself otherwise (zero or negative rows and columns, H < 1, numbers past the exactness bound)."""
    rng = np.random.default_rng(seed)
    arow, acol, H = rng.integers(1, 3000, G), rng.integers(1, 3000, G), rng.integers(1, 8193, G)
    if how == "zeros":
        arow[rng.integers(0, G)], acol[rng.integers(0, G)], H[rng.integers(0, G)] = 0, 0, 0
    elif how in ("arow0", "acol0", "H0"):
        {"arow0": arow, "acol0": acol, "H0": H}[how][rng.integers(0, G)] = 0
    elif how == "negative":  # (a negative row count with columns wider than H: the expression holds there)
        i = rng.integers(0, G)
        arow[i], acol[i], H[i] = -rng.integers(1, 3), 4000, 64
    elif how == "huge":  # (products past int64: the expression's own wrapped values)
        i = rng.integers(0, G)
        arow[i], acol[i] = 3, 1 << 61
    elif how == "one":
        arow, acol, H = arow[:1], acol[:1], H[:1]
    got, want = S._agrp1_too_wide(arow, acol, H), _agrp1_too_wide_former(arow, acol, H)
    _same(np.broadcast_to(got, want.shape), want)
    if how == "space":
        assert got is False  # the constant: no pass
    assert S._agrp1_too_wide(1, 2, 3) == _agrp1_too_wide_former(1, 2, 3)  # (Python numbers: the expression)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 400))
def test_no_schedule_reasons_equal_with_the_former_kb_and_flags(seed, G):
    """no_schedule_reasons (lmm_kb by a shift, 4.4.3 by its guard) == the lines of the former expressions (4.4.3's
    oracle swapped in, L as int32: the floor-division path), line for line; and == the scalar no_schedule_reason."""
    rng = np.random.default_rng(seed)
    cfg = S.configurations(rng.integers(1, 900, G), rng.integers(1, 900, G), 96, rng.choice(["dense", "ivj", "ivs"], G),
                           rng.integers(1, 1024, G), rng.choice([1, 2, 4, 8], G), rng.integers(4, 4097, G),
                           rng.integers(1, 65, G))
    ok = ~cfg["error"]
    lim = {k: v[ok] if np.ndim(v) else v for k, v in cfg.items()}
    got = S.no_schedule_reasons(lim)
    former_flag = S._agrp1_too_wide
    try:
        S._agrp1_too_wide = _agrp1_too_wide_former
        want = S.no_schedule_reasons({**lim, "L": lim["L"].astype(np.int32)})
    finally:
        S._agrp1_too_wide = former_flag
    _same(got, want)
    p = S.build(96, 96, 96, "dense", "dense", 64, 4, 64, 1, with_tiles=False)  # only its error is read
    for g in range(0, int(ok.sum()), 7):
        one = {k: (v[g].item() if np.ndim(v) else v) for k, v in lim.items()}
        assert S.no_schedule_reason(p, one) == got[g]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000), st.integers(-(1 << 40), 1 << 40), st.integers(0, 500))
def test_kb_shift_equals_the_floor_division(seed, shift, n):
    """int64 ``L >> 10`` == ``L // 1024`` (any sign), as no_schedule_reasons reads it."""
    L = np.random.default_rng(seed).integers(-(1 << 45), 1 << 45, n) + shift
    _same(L >> 10, _kb_former(L))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 600), st.integers(1, 8), st.sampled_from([2, 30, 4096, 1 << 20]),
       st.booleans())
def test_distinct_rows_equal_the_former(seed, n, ncols, top, as_block):
    """distinct_rows (a 2-D block's radices from one reduction, the code written in place, every value distinct
    without the runs' count) == the former loop, first and inverse, dtype for dtype; past 2**62 radices too."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, top, (ncols, n)).astype(np.int64)
    if n and rng.random() < 0.3:
        block[:, rng.integers(0, n, n // 3)] = block[:, :1]  # repeated rows
    want = _distinct_rows_former(tuple(block))
    for got in (S.distinct_rows(block if as_block else tuple(block)), S.distinct_rows(list(block))):
        _same(got[0], want[0])
        _same(got[1], want[1])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 3000), st.integers(1, 1 << 40), st.booleans())
def test_unique_index_inverse_equals_the_former(seed, n, top, negative):
    """unique_index_inverse with and without repeated values (the all-distinct shortcut) == the former."""
    rng = np.random.default_rng(seed)
    code = rng.choice(max(top, n), n, replace=False) if max(top, n) < 1 << 20 else rng.integers(0, top, n)
    code = np.asarray(code, dtype=np.int64) - (top // 2 if negative else 0)
    for c in (code, np.repeat(code, 2)):
        got, want = S.unique_index_inverse(c), _unique_index_inverse_former(c)
        _same(got[0], want[0])
        _same(got[1], want[1])


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9"])
def test_batch_with_the_former_paths_equals(wl, monkeypatch):
    """evaluate_batch of random points of the space (infeasible ones most) with this round's paths == with the former
    ones swapped in (caps over every configuration and the remainder test, the former flags, rows, inverse, the counts
    over candidates, the totals' stack, the int64 pattern, where's tile counts): every
    metric, state, label, total, flag and reason."""
    w = load_workload(wl)
    rng = np.random.default_rng(17)
    batches = [M.params.points(M.params.random_rows(300, rng)) for _ in range(2)]
    new = [M.evaluate_batch(w, pts) for pts in batches]
    former_conf = S.configurations
    monkeypatch.setattr(S, "configurations", lambda *a, caps_where_divisible=False, **k: former_conf(*a, **k))
    monkeypatch.setattr(S, "unschedulable_divisible_caps", _unschedulable_former)
    monkeypatch.setattr(S, "_agrp1_too_wide", _agrp1_too_wide_former)
    monkeypatch.setattr(S, "distinct_rows", lambda cols: _distinct_rows_former(tuple(cols)))
    monkeypatch.setattr(S, "unique_index_inverse", _unique_index_inverse_former)
    monkeypatch.setattr(P, "_conf_plans", _conf_plans_former)
    monkeypatch.setattr(IM, "_one_layer_sums", lambda lb: _layer_sums_former([lb]))
    monkeypatch.setattr(S, "_broken_pattern", _broken_pattern_former)
    monkeypatch.setattr(S, "tilings_of_bounds", _tilings_of_bounds_former)
    old = [M.evaluate_batch(w, pts) for pts in batches]
    for a, b in zip(new, old):
        _same_batch_results(a, b)


def _same_batch_results(a, b) -> None:
    """Two BatchResults equal bit for bit: flags, reasons, every layer's flags, metrics (in key order), states,
    labels and reasons, and the totals (also used by tests/test_imax_batched18.py)."""
    _same(a.feasible, b.feasible)
    _same(a.reason, b.reason)
    for la, lb_ in zip(a.layers, b.layers):
        _same(la.feasible, lb_.feasible)
        assert list(la.metrics) == list(lb_.metrics)
        for key in la.metrics:
            _same(la.metrics[key], lb_.metrics[key])
        for key in la.states:
            _same(la.states[key], lb_.states[key])
        for key in la.labels:
            _same(np.asarray(la.labels[key], dtype=object), np.asarray(lb_.labels[key], dtype=object))
        _same(np.asarray(la.reason, dtype=object), np.asarray(lb_.reason, dtype=object))
    for key in a.totals:
        _same(a.totals[key], b.totals[key])


def _plans_same(a: dict, b: dict) -> None:
    assert list(a) == list(b) and list(a["feats"]) == list(b["feats"]) == list(S.FEATURES)
    for key in ("count", "agrp", "bgrp", "block"):
        _same(a[key], b[key])
    for key in S.FEATURES:
        _same(a["feats"][key], b["feats"][key])
    assert a["per"] is b["per"]


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9",
                                "spmm:n=96,sparsity=0.999"])
def test_conf_plans_equal_the_former_on_batches(wl, monkeypatch):
    """_conf_plans (configuration terms written once, gathered at the candidates) == the counts over candidates, on
    the inputs of real batches (the one pass of SpMM batches with dense references, fallbacks), every count, AGRP,
    BGRP and block row, bit for bit."""
    seen = []
    former = P._conf_plans

    def both(*args):
        got = former(*args)
        _plans_same(got, _conf_plans_former(*args))
        seen.append(len(got["agrp"]))
        return got

    monkeypatch.setattr(P, "_conf_plans", both)
    rng = np.random.default_rng(5)
    M.evaluate_batch(load_workload(wl), M.params.points(M.params.random_rows(400, rng)))
    assert seen and sum(seen) > 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 120), st.sampled_from(["all", "none", "mixed"]),
       st.sampled_from([1, 96, 1024, 3025]))
def test_conf_plans_equal_the_former_on_random_numbers(seed, G, opt_kind, n):
    """The same on random configuration numbers (every row of :data:`plans._CONF_ROWS` random, chips 1-64, BGRP
    bounds past n, JDS permutation and lmm_opt flags mixed)."""
    rng = np.random.default_rng(seed)
    conf = rng.integers(0, 5000, (len(P._CONF_ROWS), G)).astype(np.int64)
    row = {name: i for i, name in enumerate(P._CONF_ROWS)}
    conf[row["N"]] = rng.integers(1, 65, G)
    conf[row["W"]] = rng.choice([1, 2, 4, 8], G)
    conf[row["perm"]] = rng.integers(0, 2, G)
    opt = {"all": np.ones(G, bool), "none": np.zeros(G, bool), "mixed": rng.random(G) < 0.5}[opt_kind]
    conf[row["o"]] = opt
    cfg = {"N": conf[row["N"]].copy(), "b_hi": rng.integers(-1, n + 3, G)}
    a_max = rng.integers(1, 40, G)
    per = {}
    _plans_same(P._conf_plans(n, cfg, opt, a_max, conf, per), _conf_plans_former(n, cfg, opt, a_max, conf, per))


def _layer_sums_former(layers) -> tuple[np.ndarray, ...]:
    """The former model_totals' sums and largest chain (the stack, its concatenation and row_sum)."""
    from archmodels.result import row_sum
    cube = np.array([[lb.metrics[k] for k in IM._TOTAL_INPUTS] for lb in layers], dtype=float)
    time = cube[:, :1]
    sums = row_sum(np.concatenate((cube[:, :2], time * cube[:, 2:4], cube[:, 4:5]), axis=1))
    tot_time, dense_time, util, util_unopt, starts = sums
    return tot_time, dense_time, util, util_unopt, starts, np.fmax.reduce(cube[:, 5], axis=0)


def _bits_same(a, b) -> None:
    """The same float64 bits (NaN payloads and signs included)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype == np.float64 and a.shape == b.shape
    assert np.array_equal(a.view(np.uint64), b.view(np.uint64))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 300))
def test_one_layer_sums_equal_the_former_stack(seed, n):
    """_one_layer_sums == the former stack's sums of one layer, bit for bit: NaNs of both signs and payloads planted in
    every input metric (time x utilization picks the same NaN), infinities, zeros of both signs."""
    rng = np.random.default_rng(seed)
    pts = M.params.points(M.params.random_rows(n, rng))
    (lb,) = M.evaluate_layers(load_workload("spmm:n=96,sparsity=0.9"), pts)
    odd = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, np.float64(np.nan) * -1])
    odd = np.concatenate((odd, np.frombuffer(np.array([0x7FF8000000000123, 0xFFF0000000000456], np.uint64).tobytes())))
    for k in IM._TOTAL_INPUTS:
        row = np.array(lb.metrics[k], dtype=float)
        at = rng.integers(0, n, n // 3)
        row[at] = rng.choice(odd, len(at))
        lb.metrics[k] = row
    got, want = IM._one_layer_sums(lb), _layer_sums_former([lb])
    for g, w in zip(got, want):
        _bits_same(g, w)
    # the sums model_totals stores (dense time, busy times, starts, chain) are new arrays; the time row (index 0) may
    # be the layer's own: model_totals only divides by it, never stores or writes it (restated in the nineteenth
    # round; tests/test_imax_batched21.py holds model_totals' stored totals apart from every layer metric)
    assert not any(np.shares_memory(g, lb.metrics[k]) for g, k in list(zip(got, IM._TOTAL_INPUTS))[1:])
    for g in got[1:]:
        assert not any(np.shares_memory(g, lb.metrics[k]) for k in IM._TOTAL_INPUTS)


def _broken_pattern_former(flags: list) -> np.ndarray:
    pattern = np.asarray(flags[0]).astype(np.int64)  # bit i: constraint i broken (two calls a bit, no stack)
    for i, flag in enumerate(flags[1:], 1):
        if flag is not False:  # 4.4.8 (CGRP = BGRP) never
            pattern |= np.asarray(flag).astype(np.int64) << i
    return pattern


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 300), st.integers(0, 1 << 9))
def test_broken_pattern_equals_the_former(seed, G, constant):
    """The uint16 pattern of broken constraints == the former int64 one (every bit; flags False where constant)."""
    rng = np.random.default_rng(seed)
    flags = [False if constant >> i & 1 and i else rng.random(G) < 0.5 for i in range(len(S.CONSTRAINTS))]
    got, want = S._broken_pattern(flags), _broken_pattern_former(flags)
    assert got.dtype == np.uint16 and got.shape == want.shape
    _same(got.astype(np.int64), want)


def _tilings_of_bounds_former(m, k, rows_max: np.ndarray, cols_max: np.ndarray, ok: np.ndarray):
    return np.where(ok, -(-m // rows_max), 0), np.where(ok, -(-k // cols_max), 0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 300), st.booleans(), st.booleans())
def test_tilings_of_bounds_equal_the_former(seed, G, per_config, two_d):
    """The tile counts times the flag == where(flag, counts, 0): values and dtype; m, k one number or one per
    configuration, [sizes, LMMs] grids (space_tilings), the bounds of tiling_bounds (1 where not ok)."""
    rng = np.random.default_rng(seed)
    shape = (3, G) if two_d else (G,)
    urb, lmm = rng.choice([2, 4, 8, 16, 24, 40], shape), rng.integers(0, 4097, shape) * 1024
    rows_max, cols_max, ok = S.tiling_bounds(urb, lmm)
    m, k = (rng.integers(1, 70_000, shape), rng.integers(1, 70_000, shape)) if per_config else (1024, 70_000)
    for got, want in zip(S.tilings_of_bounds(m, k, rows_max, cols_max, ok),
                         _tilings_of_bounds_former(m, k, rows_max, cols_max, ok)):
        _same(got, want)

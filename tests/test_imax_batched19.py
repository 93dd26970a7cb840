"""IMAX batched paths of issue 15's seventeenth round: each equals the code it replaced (kept below verbatim, but for
names, module prefixes and docstrings, as the oracle), bit for bit and dtype for dtype: a layer's metric rows filled
with NaN instead of copied from one NaN row (:func:`archmodels.imax.model._fill_at`); the dense and sparse
configurations' number blocks written into one block (:func:`archmodels.imax.plans.mixed_plans`,
``_pair_conf``/``_dense_conf`` with ``out``); the configuration terms configuration-major, taken by rows and
transposed back (``plans._conf_terms``, ``_conf_plans``); the timed counts' rows alone taken (``model._columns``);
the codes sorted with their indices packed into one int64 (``schedule._ordered``, ``unique_index_inverse``); a
one-product run's reasons written at its points (``ImaxModel._reasons_at``); ceil divisions in float64 where exact
(``schedule.ceil_div``); the distinct configurations' columns read back from their bit-packed codes
(``schedule.distinct_columns``, and with an SpMM batch's dense references joined by their codes alone:
``distinct_columns_joined``); an SpMM batch's runs reading clocks, chips and bandwidths at the points with a
schedule (``_runs_on``'s ``point_of``); DRAM pJ per byte read at those points only (``_Batch.dram_energy_j``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import costs as C
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from tests.test_imax_batched17 import _same_batch_results
from workloads import formats, load_workload
from workloads.layers import MatMul, SpMM, Workload

M = get_model("imax")


def _same(a, b) -> None:
    """Equal arrays bit for bit (floats by their bits: NaN signs and payloads too), the same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        assert np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))
    else:
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- the former code (oracles)


def _fill_at_former(lb, layer, r, reps, dense_time, batch):
    at = r["at"]
    pts = batch.pts
    nchip = pts["nchip"][at].astype(float)
    clock_hz = batch.clock_hz[at]
    g = dict(r, time=r["time"][at], H=r["H"][at])
    time_s, reads, writes, issued, lmm_bytes = IM._run_flows(g, nchip, reps)
    energy = np.full(len(at), np.nan)  # every point here has its node: all set below
    fma_j, lmm_j = np.full(len(at), np.nan), np.full(len(at), np.nan)  # (the energy parts, merged in on 2026-11-27)
    vscale, lmm_kb = batch.vscale[at], pts["lmm_kb"][at]
    for node, mask in batch.nodes:
        sel = IM.S.nonzero_at(mask[at]) if len(batch.nodes) > 1 else slice(None)
        fma, lmm = IM.C.energy_terms_pj(issued[sel], lmm_bytes[sel], lmm_kb[sel], int(node))
        v = vscale[sel]
        energy[sel] = (fma + lmm) * v * 1e-12
        fma_j[sel], lmm_j[sel] = fma * v * 1e-12, lmm * v * 1e-12
    dram_j = batch.dram_energy_j(reads, writes, at)
    energy = energy + dram_j
    cycles = time_s * clock_hz
    with np.errstate(divide="ignore", invalid="ignore"):
        util = layer.macs / (cycles * nchip * pts["units"][at] * IM.C.SIMD)
        speedup = dense_time[at] / time_s
    slots = IM._rep(g["slots"], reps)  # (IM._rep: x * 1 is x; every value below is copied into its own row)
    useful = float(getattr(layer, "nnz", 0)) if isinstance(layer, SpMM) else np.nan
    padding = slots - useful if isinstance(layer, SpMM) else np.where(np.isnan(slots), np.nan, 0.0)
    values = [cycles, time_s, util, reads, writes, energy, speedup, None, g["util"], g["util_unopt"], None,
              g["agrp"], g["bgrp"], g["bgrp"], IM._rep(g["starts"], reps), IM._rep(g["a_groups"], reps), g["b_groups"],
              IM._rep(g["blocks"], reps), g["row_tiles"], g["col_tiles"], slots, padding, IM._rep(g["a_bytes"], reps),
              IM._rep(nchip * g["b_bytes"], reps), IM._rep(nchip * g["c_load_bytes"], reps), writes, fma_j, lmm_j,
              dram_j]
    values += [IM._rep(g[s], reps) for s in IM.STATES]
    nan = IM._filled_nan(lb.n)
    rows = []
    for v in values:  # one array per metric (the copies lb.set would make; rows of one large block cost more:
        if v is None:  # a fresh 1 MB block page-faults in, small arrays reuse freed memory)
            rows.append(None)
            continue
        row = nan.copy()
        row[at] = v
        rows.append(row)
    rows[IM._DENSE_ROW], rows[IM._CHAIN_ROW] = dense_time.astype(float), r["H"].astype(float)  # every point
    lb.metrics.update(zip(IM._NAN_METRICS, rows))
    lb.states.update(zip(IM.STATES, rows[len(IM._NAN_METRICS):]))



def _mixed_plans_former(layer, fmt, mapping, n, m, k, nd, cfg, lmm_opt):
    dcfg = {key: cfg[key][:nd] for key in P.PLAN_INPUTS}
    scfg = {key: cfg[key][nd:] for key in P.PLAN_INPUTS}
    fallback, sidx, pairs = P._sparse_pairs(layer, fmt, mapping, scfg, lmm_opt[nd:])
    dopt = lmm_opt[:nd]
    d_amax = P._a_max(dcfg, np.ones(nd, bool))
    dconf = P._dense_conf(m, k, dcfg, dopt, d_amax)
    if not len(sidx):
        per = P._per_numbers(dconf, np.zeros(nd, bool), np.full(nd, P._DENSE_URB), dcfg)
        return _conf_plans_former(n, dcfg, dopt, d_amax, dconf, per), np.arange(nd), fallback
    sconf, s_amax = _pair_conf_former(*pairs)
    sub, sopt = pairs[-2], pairs[-1]
    # the numbers of the planned configurations, dense then sparse: the given ones when none falls back
    joined = cfg if len(sidx) == len(fallback) else {key: np.concatenate((dcfg[key], sub[key])) for key in P._PER_INPUTS}
    conf = np.concatenate((dconf, sconf), axis=1)
    per = P._per_numbers(conf, np.concatenate((np.zeros(nd, bool), pairs[5])),
                       np.concatenate((np.full(nd, P._DENSE_URB), sub["e"])), joined)
    plans = _conf_plans_former(n, joined, np.concatenate((dopt, sopt)), np.concatenate((d_amax, s_amax)), conf, per)
    return plans, np.concatenate((np.arange(nd), nd + sidx)), fallback


def _pair_conf_former(tiles, cp, tp, nbp, first, jds, ivs, cfg, opt):
    H, e, L = cfg["H"], cfg["e"], cfg["L"]
    rows = tiles.rows[tp]
    Hp = H[cp]
    stored, top = rows * nbp, rows
    jx = S.nonzero_at(jds[cp])  # the Margins of the JDS pairs only
    if len(jx):
        margins = tiles.margins(tp[jx], Hp[jx], nbp[jx])  # [blocks, JDS pairs]
        stored, top = stored.copy(), rows.copy()
        stored[jx] = margins.sum(axis=0)  # rows x their blocks = the Margins' sum
        top[jx] = tiles.nonzero_rows[tp[jx]]
    TOP = np.maximum.reduceat(top, first)
    a_max = P._a_max(cfg, ~jds | (TOP * e > L / 2))
    all_opt, no_opt = bool(opt.all()), not opt.any()
    # A groups of each pair with the optimisation (AGRP = a_max of its configuration, every candidate's):
    # CSR ceil(blocks / AGRP); JDS packed (schedule.pack); without it they are not read
    AGp = np.where(opt, a_max, 1)[cp]
    GA, big, most = -(-nbp // AGp), np.minimum(AGp, nbp) * rows, AGp.copy()
    if len(jx) and not no_opt:
        at = jx if all_opt else jx[opt[cp[jx]]]
        m = margins if all_opt else np.take(margins, S.nonzero_at(opt[cp[jx]]), axis=1)
        budget = (L // 2) // e
        GA[at], big[at], most[at] = S.pack_pairs(m, nbp[at], budget[cp[at]], a_max[cp[at]])
    cols, fk, bn, la = tiles.cols[tp], tiles.first_k[tp], tiles.b_new[tp], tiles.last[tp]
    several = nbp > 1  # tiles of several blocks: re-sent per B group without the optimisation
    slots = stored * Hp
    sums = np.add.reduceat(np.stack((rows, cols, nbp, stored, slots, fk, fk * rows, bn, bn * cols, la, la * rows,
                                     several * slots, several * nbp, GA, GA * cols, GA * rows)), first, axis=1)
    tops = np.maximum.reduceat(np.stack((top, big, most)), first, axis=1)
    # every number of a configuration the candidates read (C-contiguous rows; the tiles of each configuration:
    # every one runs)
    conf = np.concatenate((sums, tops, np.stack((cfg["N"], cfg["W"], cfg["units"], cfg["fill"], np.where(ivs, 2, 1),
                                                 jds, opt, np.diff(np.append(first, len(cp))),
                                                 np.full(len(first), formats.SLOT_BYTES)))))
    return conf, a_max


def _conf_plans_former(n, cfg, opt, a_max, conf, per):
    all_opt, no_opt = bool(opt.all()), not opt.any()
    count, g, AG, BG = P._candidates(n, cfg, True if all_opt else False if no_opt else opt, a_max)
    (N, X_st, X_ag, Y_ag, X_pa, A0, A1, Bm, Bs, Cl, Cd, LARv, STW, WS, NBF, LDm, BNd, DDm, LAd, D0, D1, SL, E0, E1,
     slots, most, pes, o) = np.take(_conf_terms_former(conf), g, axis=1)
    o = o.astype(bool)
    GB = n // (BG * N)
    multi = GB > 1
    f = {
        "starts": GB * X_st, "a_groups": X_ag + GB * Y_ag, "pauses": GB * X_pa, "a_bytes": A0 + GB * A1,
        "b_bytes": np.where(multi, GB * Bm, Bs) * BG,
        "c_load_bytes": np.where(multi, GB * Cl, 0) * BG,
        "c_drain_bytes": np.where(multi, GB * Cd, LARv) * BG,
        "exec_cycles": GB * (STW * -(-BG // WS) + NBF),
        "load_desc_words": np.where(multi, GB * LDm, BNd),
        "drain_desc_words": np.where(multi, GB * DDm, LAd),
        "a_desc_words": D0 + GB * D1,
        "issued_macs": GB * SL * BG,
        "lmm_exec_bytes": GB * (E0 + BG * E1),
        "b_groups": GB,
        "a_group_slots": slots, "a_group_blocks": most,
    }
    block = P._count_block(f, len(g), pes, o)
    return {"count": count, "feats": dict(zip(S.FEATURES, block)), "agrp": AG, "bgrp": BG, "per": per,
            "block": block}


def _conf_terms_former(conf):
    (R, Cs, NB, ST, SL, FK, FKR, BN, BNC, LA, LAR, MS, MB, GAs, GAC, GAR, TOPg, BIG, MOST,
     N, W, units, fill, arrays, perm, o, TI, sb) = conf
    VB, desc = C.VALUE_BYTES, C.DMA_DESC_WORDS
    ob = o.astype(bool)
    zero = np.zeros(len(o), np.int64)
    x_cg = np.where(ob, GAs, TI)  # C groups over the tiles per B group (optimised: the A groups)
    x_cgr = np.where(ob, GAR, R)
    return np.stack((
        N, np.where(ob, GAs, NB), np.where(ob, GAs, zero), np.where(ob, zero, NB), np.where(ob, NB - GAs, zero),
        np.where(ob, SL * sb + R * np.where(perm, C.INDEX_BYTES, 0), (SL - MS) * sb + R * C.INDEX_BYTES * perm),
        np.where(ob, zero, MS * sb),
        np.where(ob, GAC, Cs) * VB, BNC * VB, (x_cgr - FKR) * VB, x_cgr * VB, LAR * VB,
        ST * W, W * C.SIMD, NB * fill,
        (2 * x_cg - FK) * desc, BN * desc, x_cg * desc, LA * desc,
        np.where(ob, GAs * arrays + perm * TI, (NB - MB) * arrays + perm * TI) * desc,
        np.where(ob, zero, MB * arrays * desc),
        SL, SL * sb, (SL + 2 * ST) * VB,
        np.where(ob, BIG, TOPg), np.where(ob, MOST, 1), units * W, o))


def _columns_former(feats, idx, names, block=None):
    if block is None:
        return {k: feats[k][idx] for k in names}
    return dict(zip(S.FEATURES, block.take(idx, axis=1)))


def _unique_index_inverse_former(code):
    n = len(code)
    order = S._stable_argsort(code)
    if n == 0:
        return order, np.empty(0, np.intp)
    ordered = code[order]
    new = np.empty(n, bool)  # True where a run of equal values starts
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inv = np.empty(n, np.intp)
    if np.logical_and.reduce(new):  # every value distinct (random points' configurations): the runs' count is 0..n-1
        inv[order] = np.arange(n)
        return order, inv
    inv[order] = new.cumsum() - 1
    return order[new], inv


def _reasons_at_former(keys, prod, rows, cfg, none, feasible, at, size):
    """_runs_on's former lines: the wanted configurations' reasons, gathered at the points (those past ``at``: "")."""
    want = np.zeros(len(rows), bool)
    want[at] = True
    out = IM.ImaxModel._reasons(keys, prod, rows, cfg, none, feasible, want, None)[at]
    return np.concatenate((out, IM._filled(size - len(at), "")))


def _sparse_runs_former(self, key, batch):
    n = batch.n
    grp = batch.groups(True)
    own = grp.columns[0] == 0  # format code 0: dense
    need = S.nonzero_at(~own & (key[2] % batch.nchip == 0))
    if len(need):  # the reference configurations: the points' structure, format and mapping dense (codes 0)
        every = np.concatenate((grp.columns, grp.columns[:, need]), axis=1)
        every[:2, n:] = 0
        first, point_cfg = S.distinct_rows(every)
        uniq = IM._rows_at(every, first)
        at = np.concatenate((np.arange(n), need))
        out = self._runs_on([key], uniq, point_cfg, batch.nchip[at], batch.clock_hz[at], batch.bw[at], n)
    else:
        out = self._runs_on([key], grp.uniq, grp.inv, batch.nchip, batch.clock_hz, batch.bw, n)
    run = IM._run_part(out, 0, n)
    dense_time = np.where(own, run["time"], np.nan)
    dense_time[need] = out["time"][n:]
    return run, dense_time


def _dram_energy_j_former(self, read_bytes, write_bytes, at=None):
    if self._dram_pj is None:
        self._dram_pj = IM._dram_pj_per_byte(self.pts["dram"])
    read_pj, write_pj = self._dram_pj
    if at is not None:
        read_pj, write_pj = read_pj[at], write_pj[at]
    return (np.asarray(read_bytes, dtype=float) * read_pj + np.asarray(write_bytes, dtype=float) * write_pj) * 1e-12


def _ceil_div_former(a, b):
    return -(-a // b)


def _distinct_columns_former(block):
    first, inv = S.distinct_rows(block)
    return first, inv, block.take(first, axis=1)


# ---------------------------------------------------------------- integer paths


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 400), st.sampled_from(["small", "big", "edge", "past", "zero_b",
                                                                        "negative", "scalar", "scalar_past"]))
def test_ceil_div_equals_the_former(seed, n, kind):
    """ceil_div == -(-a // b) (values and dtype): a and b small, large, at the float path's bound (a < 2**52) and
    past it, b with a 0 (numpy's int64 division by zero: 0, and its warning), negative a, a Python number."""
    rng = np.random.default_rng(seed)
    b = rng.integers(1, 1 << 20, n)
    top = {"small": 5000, "big": 1 << 50, "edge": 1 << 52, "past": 1 << 60, "zero_b": 99, "negative": 99,
           "scalar": 1, "scalar_past": 1}[kind]
    a = rng.integers(0, top, n)
    if kind == "edge" and n:
        a[0], b[0] = (1 << 52) - 1, 3
    if kind == "zero_b" and n:
        b[rng.integers(0, n)] = 0
    if kind == "negative":
        a -= 50
    if kind == "scalar":
        a = int(rng.integers(0, 1 << 52))
    if kind == "scalar_past":
        a = (1 << 52) + int(rng.integers(0, 1000))
    with np.errstate(divide="ignore"):
        _same(S.ceil_div(a, b), _ceil_div_former(a, b))
        if kind == "scalar":
            _same(S.ceil_div(np.int64(a), b), _ceil_div_former(np.int64(a), b))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(0, 600), st.sampled_from([2, 50, 5000, 1 << 40]))
def test_distinct_columns_equal_the_former(seed, rows, n, top):
    """distinct_columns == distinct_rows and the take of the distinct rows' columns: repeated rows (few values),
    distinct ones, columns whose bits overflow 62 (the former path), all-zero columns."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, top, (rows, n))
    if rows > 2:
        block[1] = 0
    for got, want in zip(S.distinct_columns(block), _distinct_columns_former(block)):
        _same(got, want)
    assert S.distinct_columns(block)[2].flags.c_contiguous


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(1, 600), st.sampled_from([2, 50, 5000, 1 << 40]),
       st.integers(0, 3), st.floats(0, 1))
def test_distinct_columns_joined_equal_the_former(seed, rows, n, top, zeroed, share):
    """distinct_columns_joined(block, extra, zeroed) == distinct_rows and the take of the joined block (the block, then
    its columns ``extra`` with their first ``zeroed`` rows 0: _sparse_runs' former ``every``), with extra columns
    equal to some of the block's (a point whose format is dense already) or not, repeated, none."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, top, (rows, n))
    if rows > 3:
        block[:2, rng.random(n) < 0.3] = 0  # (some columns already zero on top: their extra copies repeat them)
    extra = np.flatnonzero(rng.random(n) < share)
    every = np.concatenate((block, block[:, extra]), axis=1)
    every[:zeroed, n:] = 0
    for got, want in zip(S.distinct_columns_joined(block, extra, zeroed), _distinct_columns_former(every)):
        _same(got, want)


# ---------------------------------------------------------------- sorting with packed indices


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 5000), st.sampled_from(["few", "wide", "edge", "past", "negative"]))
def test_ordered_and_unique_index_inverse_equal_the_former(seed, n, kind):
    """_ordered == (stable argsort, the codes in that order) and unique_index_inverse == the former, on codes with
    repeats (few values), distinct wide ones, ones at the largest value the packing takes and one past it (the
    stable argsort then), and negative ones."""
    rng = np.random.default_rng(seed)
    s = max(n - 1, 1).bit_length()
    top = {"few": 7, "wide": 1 << 40, "edge": 1 << (63 - s), "past": 1 << (63 - s), "negative": 50}[kind]
    code = rng.integers(0, top, n, dtype=np.int64)
    if kind == "edge" and n:
        code[rng.integers(0, n)] = (1 << (63 - s)) - 1
    if kind == "past" and n:
        code[rng.integers(0, n)] = 1 << (63 - s)
    if kind == "negative":
        code -= 25
    order, ordered = S._ordered(code)
    want = S._stable_argsort(code)
    _same(order, want)
    _same(ordered, code[want])
    for got, exp in zip(S.unique_index_inverse(code), _unique_index_inverse_former(code)):
        _same(got, exp)


def test_ordered_on_other_kinds():
    """Not int64 (int32, uint64), 2-D slices and long codes take the former path: the same answers."""
    rng = np.random.default_rng(1)
    for code in (rng.integers(0, 9, 300).astype(np.int32), rng.integers(0, 9, 300).astype(np.uint64),
                 rng.integers(0, 1 << 30, 20_000), rng.integers(0, 5, (3, 40))[1]):
        order, ordered = S._ordered(code)
        _same(order, S._stable_argsort(code))
        _same(ordered, code[order])


# ---------------------------------------------------------------- plans


def _plans_same(a: dict, b: dict) -> None:
    assert list(a) == list(b) and list(a["feats"]) == list(b["feats"]) == list(S.FEATURES)
    for key in ("count", "agrp", "bgrp", "block"):
        _same(a[key], b[key])
    for key in S.FEATURES:
        _same(a["feats"][key], b["feats"][key])
    assert list(a["per"]) == list(b["per"])
    for key in a["per"]:
        _same(a["per"][key], b["per"][key])


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9", "spmm:n=96,sparsity=0.999"])
def test_mixed_plans_equal_the_former_on_batches(wl, monkeypatch):
    """mixed_plans (both kinds' numbers written into one block; the terms taken by configuration rows) == the former
    (three concatenations; the terms taken element by element), on the inputs of real batches (SpMM batches with
    dense references and fallbacks, lmm_opt mixed): the plans, every count, AGRP, BGRP, problem number and block
    row, the planned configurations and the fallbacks, bit for bit."""
    seen = []
    new = P.mixed_plans

    def both(*args):
        got = new(*args)
        want = _mixed_plans_former(*args)
        _plans_same(got[0], want[0])
        _same(got[1], want[1])
        _same(got[2], want[2])
        seen.append(len(got[0]["agrp"]))
        return got

    monkeypatch.setattr(P, "mixed_plans", both)
    rng = np.random.default_rng(17)
    for size in (400, 37):
        M.evaluate_batch(load_workload(wl), M.params.points(M.params.random_rows(size, rng)))
    assert seen and sum(seen) > 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 120), st.sampled_from(["all", "none", "mixed"]),
       st.sampled_from([1, 96, 1024, 3025]))
def test_conf_terms_and_plans_equal_the_former_on_random_numbers(seed, G, opt_kind, n):
    """_conf_terms is the former's transpose, and _conf_plans == the former, on random configuration numbers (every
    row of :data:`plans._CONF_ROWS` random, chips 1-64, BGRP bounds past n, JDS permutation and lmm_opt mixed)."""
    rng = np.random.default_rng(seed)
    conf = rng.integers(0, 5000, (len(P._CONF_ROWS), G)).astype(np.int64)
    row = {name: i for i, name in enumerate(P._CONF_ROWS)}
    conf[row["N"]] = rng.integers(1, 65, G)
    conf[row["W"]] = rng.choice([1, 2, 4, 8], G)
    conf[row["perm"]] = rng.integers(0, 2, G)
    opt = {"all": np.ones(G, bool), "none": np.zeros(G, bool), "mixed": rng.random(G) < 0.5}[opt_kind]
    conf[row["o"]] = opt
    terms = P._conf_terms(conf)
    _same(terms, np.ascontiguousarray(_conf_terms_former(conf).T))
    assert terms.flags.c_contiguous
    cfg = {"N": conf[row["N"]].copy(), "b_hi": rng.integers(-1, n + 3, G)}
    a_max = rng.integers(1, 40, G)
    _plans_same(P._conf_plans(n, cfg, opt, a_max, conf, {}), _conf_plans_former(n, cfg, opt, a_max, conf, {}))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 200), st.integers(1, 300))
def test_columns_equal_the_former(seed, n_cand, n_idx):
    """_columns: the rows of the asked counts only (timed counts: rows 3-13), each equal to the former's; without a
    block, one gather per count as before."""
    rng = np.random.default_rng(seed)
    block = rng.random((len(S.FEATURES), n_cand + 1))
    feats = dict(zip(S.FEATURES, block))
    idx = rng.integers(0, n_cand + 1, n_idx)
    for names in (S.TIMING_FEATURES, IM._CHOSEN_FEATURES, ("b_groups",), ("a_bytes", "starts")):
        got, want = IM._columns(feats, idx, names, block), _columns_former(feats, idx, names, block)
        assert set(names) <= set(got)
        for k in names:
            _same(got[k], want[k])
        got = IM._columns(feats, idx, names)
        assert list(got) == list(names)
        for k in names:
            _same(got[k], want[k])


# ---------------------------------------------------------------- reasons at the points


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9", "spmm:n=96,sparsity=0.999"])
def test_reasons_at_equal_the_former_on_batches(wl, monkeypatch):
    """_reasons_at == the wanted configurations' reasons gathered at the points, on the inputs of real batches
    (build errors, reasons from the tile counts, several points on one configuration: a batch of repeated rows);
    lines past ``at`` are ""."""
    seen = []
    new = IM.ImaxModel._reasons_at

    def both(*args):
        got = new(*args)
        _same(got, _reasons_at_former(*args))
        assert got.dtype == object and all(type(x) is str for x in got.tolist())
        seen.append(int(sum(x != "" for x in got.tolist())))
        return got

    monkeypatch.setattr(IM.ImaxModel, "_reasons_at", staticmethod(both))
    rng = np.random.default_rng(19)
    rows = M.params.random_rows(300, rng)
    for r in (rows, np.concatenate((rows[:40], rows[:40]))):  # (the second: two points on each configuration)
        M.evaluate_batch(load_workload(wl), M.params.points(r))
    assert seen and sum(seen) > 0


def test_reasons_at_with_no_candidate_configurations(monkeypatch):
    """A configuration that passes the screen but whose schedule has no candidate gets the scalar line (the loop of
    _reasons_at): planted by marking live configurations infeasible."""
    rng = np.random.default_rng(3)
    keys = [(64, 64, 64, None)]
    rows = np.array([[0, 0, 64, 4, 64, 1, 1], [0, 0, 8, 1, 4, 1, 1], [0, 0, 64, 4, 64, 2, 0]], dtype=np.int64)
    cfg = S.configurations(64, 64, np.full(3, 64), None, *rows[:, 2:6].T, mapping_codes=rows[:, 1],
                           caps_where_divisible=True)
    none = S.unschedulable_divisible_caps(cfg)
    feasible = np.array([False, False, True])
    for at in (np.array([0, 1, 2, 0]), rng.integers(0, 3, 20), np.zeros(0, np.intp)):
        got = IM.ImaxModel._reasons_at(keys, np.zeros(3, np.intp), rows, cfg, none, feasible, at, len(at) + 3)
        _same(got, _reasons_at_former(keys, np.zeros(3, np.intp), rows, cfg, none, feasible, at, len(at) + 3))


# ---------------------------------------------------------------- whole batches


def _two_products() -> Workload:
    return Workload("two", (MatMul("a", m=300, k=200, n=64), MatMul("b", m=96, k=40, n=48)))


@pytest.mark.parametrize("wl", ["spmm:n=1024,sparsity=0.95", "spmm:n=512,sparsity=0.9", "two"])
def test_batch_with_the_former_paths_equals(wl, monkeypatch):
    """evaluate_batch of random points (infeasible ones most) with this round's paths == with the former ones swapped
    in (the NaN rows copied, the three concatenations of the configurations' numbers, the terms' take of 28 rows,
    every count's row taken, the stable argsort, reasons per configuration gathered at the points, the int64 ceil
    divisions, the configurations' columns taken, the clocks, chips and bandwidths gathered for every run, the DRAM
    pJ of every point): every metric (bit for bit), state, label, total, flag and reason."""
    w = _two_products() if wl == "two" else load_workload(wl)
    rng = np.random.default_rng(20)
    batches = [M.params.points(M.params.random_rows(size, rng)) for size in (300, 300, 9)]
    new = [M.evaluate_batch(w, pts) for pts in batches]
    monkeypatch.setattr(IM, "_fill_at", _fill_at_former)
    monkeypatch.setattr(P, "mixed_plans", _mixed_plans_former)
    monkeypatch.setattr(P, "_conf_plans", _conf_plans_former)
    monkeypatch.setattr(IM, "_columns", _columns_former)
    monkeypatch.setattr(S, "unique_index_inverse", _unique_index_inverse_former)
    monkeypatch.setattr(IM.ImaxModel, "_reasons_at", staticmethod(_reasons_at_former))
    monkeypatch.setattr(IM.ImaxModel, "_sparse_runs", _sparse_runs_former)
    monkeypatch.setattr(IM._Batch, "dram_energy_j", _dram_energy_j_former)
    monkeypatch.setattr(S, "ceil_div", _ceil_div_former)
    monkeypatch.setattr(S, "distinct_columns", _distinct_columns_former)
    old = [M.evaluate_batch(w, pts) for pts in batches]
    for a, b in zip(new, old):
        _same_batch_results(a, b)
        for la, lb_ in zip(a.layers, b.layers):
            for key in la.metrics:
                _same(la.metrics[key], lb_.metrics[key])
            for key in la.states:
                _same(la.states[key], lb_.states[key])
        for key in a.totals:
            _same(a.totals[key], b.totals[key])

"""IMAX batched paths of issue 15's eighth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodels.imax import model as IM
from archmodels.imax import schedule as S


def _np_distinct_rows(cols: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The seventh round's ``distinct_rows``: ``np.unique`` of the mixed-radix codes (or of the rows)."""
    cols = [np.asarray(c, dtype=np.int64) for c in cols]
    radix = [int(c.max()) + 1 if len(c) else 1 for c in cols]
    if np.prod(np.array(radix, dtype=float)) < float(1 << 62):
        code = np.zeros(len(cols[0]), np.int64)
        for c, r in zip(cols, radix):
            code = code * r + c
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
        return first, np.asarray(inv).reshape(-1)
    _, first, inv = np.unique(np.stack(cols, axis=1), axis=0, return_index=True, return_inverse=True)
    return first, np.asarray(inv).reshape(-1)


def _same_arrays(a: np.ndarray, b: np.ndarray) -> None:
    """Same dtype, shape and values; floats bit for bit (NaN equal to NaN, -0.0 not to 0.0)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype.kind == "f":
        assert np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))
    else:
        assert np.array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**40), max_size=60), st.integers(1, 50))
def test_unique_index_inverse_is_numpy_unique(values, spread):
    """First index of each distinct value (the first occurrence) and the inverse, as np.unique gives them."""
    code = np.array([v % spread if spread < 50 else v for v in values], dtype=np.int64)
    _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    f2, i2 = S.unique_index_inverse(code)
    _same_arrays(f2, first)
    _same_arrays(i2, np.asarray(inv).reshape(-1))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.lists(st.integers(1, 5000), min_size=1, max_size=6), st.integers(0, 2**31))
def test_distinct_rows_is_numpy_unique(n, highs, seed):
    """distinct_rows over columns of many or few distinct values (duplicated rows) == np.unique's."""
    rng = np.random.default_rng(seed)
    cols = tuple(rng.integers(0, h, n) for h in highs)
    for got, want in zip(S.distinct_rows(cols), _np_distinct_rows(cols)):
        _same_arrays(got, want)


def test_distinct_rows_wide_codes():
    """Columns whose mixed-radix code would overflow take np.unique over the rows (unchanged)."""
    rng = np.random.default_rng(3)
    cols = tuple(rng.integers(0, 2**40, 200) // (2**35) * (2**35) for _ in range(3))
    for got, want in zip(S.distinct_rows(cols), _np_distinct_rows(cols)):
        _same_arrays(got, want)


def _same_cfg(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for key in a:
        x, y = np.atleast_1d(a[key]), np.atleast_1d(b[key])
        _same_arrays(x, y)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 200), st.sampled_from([8, 100, 1024, 1025, 5000]),
       st.sampled_from([1, 8, 9, 40]), st.sampled_from(["number", "arrays"]))
def test_configurations_table_equal_masks(seed, G, units_hi, cols_hi, mk):
    """configurations by mapping codes (H, unit-row bytes and the SIMD flag gathered from costs.mapping_table, or
    by masks past its size) == by mapping names (masks per mapping), every number and dtype; units and columns
    from 0 (no MAC unit, no column) to past the table's bound."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, G)
    names = np.array(S.C.MAPPINGS)[codes]
    m, k = (int(rng.integers(1, 900)), int(rng.integers(1, 900))) if mk == "number" else \
        (rng.integers(1, 900, G), rng.integers(1, 900, G))
    args = (rng.integers(0, units_hi + 1, G), rng.integers(0, cols_hi + 1, G), rng.integers(1, 4097, G),
            rng.integers(1, 65, G))
    with np.errstate(divide="ignore"):
        _same_cfg(S.configurations(m, k, 96, None, *args, mapping_codes=codes),
                  S.configurations(m, k, 96, names, *args))


def test_mapping_table_is_the_formulas():
    """Every entry of costs.mapping_table == mac_units, a_unit_row_bytes and simd_bgrp_limited of its (mapping,
    units, cols) in Python numbers."""
    C = S.C
    H, urb, simd = C.mapping_table(64, 16)
    assert H.dtype == np.int64 and urb.dtype == np.int64 and simd.dtype == bool
    for code, name in enumerate(C.MAPPINGS):
        for units in range(64):
            for cols in range(16):
                at = (code * 64 + units) * 16 + cols
                assert H[at] == C.mac_units(units, cols, name)
                assert urb[at] == C.a_unit_row_bytes(name, cols)
                assert simd[at] == C.simd_bgrp_limited(name)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 120), st.integers(1, 5))
def test_configurations_per_pair_equal_tiled(seed, G, nk):
    """configurations of (product, configuration) pairs with the configuration's numbers computed once and
    gathered (``pair_cfg``) == over the configurations' rows tiled per product, every number and dtype."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, G)
    units, cols = rng.integers(0, 1100, G), rng.choice([0, 1, 2, 4, 8], G)
    lmm_kb, nchip = rng.integers(1, 4097, G), rng.integers(1, 65, G)
    prod = np.repeat(np.arange(nk), G)
    mkn = rng.integers(1, 3000, (nk, 3))[prod]
    pair = np.tile(np.arange(G), nk)
    with np.errstate(divide="ignore"):
        a = S.configurations(mkn[:, 0], mkn[:, 1], mkn[:, 2], None, units, cols, lmm_kb, nchip, mapping_codes=codes,
                             pair_cfg=pair)
        b = S.configurations(mkn[:, 0], mkn[:, 1], mkn[:, 2], None, units[pair], cols[pair], lmm_kb[pair],
                             nchip[pair], mapping_codes=codes[pair])
        c = S.configurations(mkn[:, 0], mkn[:, 1], mkn[:, 2], np.array(S.C.MAPPINGS)[codes][pair], units[pair],
                             cols[pair], lmm_kb[pair], nchip[pair])
    _same_cfg(a, b)
    _same_cfg(a, c)


def test_tilings_from_bounds_equal_tilings_of_divisions():
    """tilings (tiling_bounds, then tilings_of_bounds) == the divisions of the seventh round's tilings."""
    from .test_imax_batched7 import _tilings_divisions

    rng = np.random.default_rng(8)
    for _ in range(50):
        G = int(rng.integers(1, 300))
        m, k = int(rng.integers(1, 5000)), int(rng.integers(1, 5000))
        urb = rng.choice([4, 8, 16, 32, 64, 128, 3], G)
        lmm = rng.integers(0, 4097, G) * 1024 + rng.integers(0, 2, G) * rng.integers(0, 1024, G)
        for x, y in zip(S.tilings(m, k, urb, lmm), _tilings_divisions(m, k, urb, lmm)):
            _same_arrays(x, y)


# ---------------------------------------------------------------- dense plans, per-width numbers shared

from archmodels.imax import costs as C  # noqa: E402
from archmodels.imax import plans as P  # noqa: E402
from workloads import formats  # noqa: E402,F401

def _dense_plans_7(m, k, n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> dict:
    """plans.dense_plans as in the seventh round (one _col_sum per sum, the blocks of a width recomputed)."""
    H, W, N, L, units = cfg["H"], cfg["W"], cfg["N"], cfg["L"], cfg["units"]
    rt, ct, arow = cfg["rt"], cfg["ct"], cfg["arow"]
    urb = C.a_unit_row_bytes("dense", 1)
    e = C.VALUE_BYTES
    count, g, AG, BG = P._candidates(n, cfg, lmm_opt, P._a_max(cfg, np.ones(len(H), bool)))
    opt = lmm_opt[g]
    m_cfg, k_cfg = np.broadcast_to(m, H.shape), np.broadcast_to(k, H.shape)
    m, k = m_cfg[g], k_cfg[g]
    H_, W_, rt_, ct_, units_ = H[g], W[g], rt[g], ct[g], units[g]
    c0, ec = np.divmod(k, ct_)
    GB = n // (BG * N[g])
    multi = GB > 1
    blocks = lambda c: -(-c // H_)  # noqa: E731 - blocks of a column tile of width c
    SB = P._col_sum(ec, ct_, c0, blocks)
    # with the optimisation: A groups per column tile GA = ceil(blocks / AGRP); without: one block a start
    SGA = np.where(opt, P._col_sum(ec, ct_, c0, lambda c: -(-blocks(c) // AG)), SB)
    starts = GB * rt_ * SGA
    pauses = np.where(opt, GB * rt_ * (SB - SGA), 0)
    c_groups = np.where(opt, SGA, ct_)  # C ranges a row of tiles visits per B group
    b_cols = np.where(opt, P._col_sum(ec, ct_, c0, lambda c: -(-blocks(c) // AG) * c), k)
    b_loads_cols = np.where(multi, rt_ * GB * b_cols, np.where(ct_ > 1, rt_, 1) * k)
    drains = np.where(multi, rt_ * GB * c_groups, rt_)  # tiles' C drains (one per row range with one B group)
    drain_rows = np.where(multi, GB * m * c_groups, m)
    partial_rows = np.where(multi, GB * m * (c_groups - 1), 0)
    b_loads = np.where(multi, rt_ * GB * c_groups, np.where(ct_ > 1, rt_ * ct_, 1))
    partial = np.where(multi, rt_ * GB * (c_groups - 1), 0)
    sends = lambda c: np.where(blocks(c) > 1, GB, 1)  # noqa: E731 - unoptimised: A re-sent per B group
    a_bytes = np.where(opt, m * k * e, e * m * P._col_sum(ec, ct_, c0, lambda c: sends(c) * c))
    a_desc = np.where(opt, rt_ * SGA, rt_ * P._col_sum(ec, ct_, c0, lambda c: sends(c) * blocks(c)))
    iters = -(-BG // (W_ * C.SIMD))
    fill = C.fill_cycles(units_, W_, "dense")
    f = {
        "starts": starts, "a_groups": np.where(opt, rt_ * SGA, starts), "pauses": pauses, "a_bytes": a_bytes,
        "b_bytes": b_loads_cols * BG * C.VALUE_BYTES, "c_load_bytes": partial_rows * BG * C.VALUE_BYTES,
        "c_drain_bytes": drain_rows * BG * C.VALUE_BYTES,
        "exec_cycles": GB * (m * SB * iters * W_ + rt_ * SB * fill),
        "load_desc_words": (b_loads + partial) * C.DMA_DESC_WORDS, "drain_desc_words": drains * C.DMA_DESC_WORDS,
        "a_desc_words": a_desc * C.DMA_DESC_WORDS, "issued_macs": GB * m * k * BG,
        "lmm_exec_bytes": GB * (m * k * (e + BG * C.VALUE_BYTES) + m * SB * 2 * BG * C.VALUE_BYTES),
        "b_groups": GB, "conf_words": C.conf_words(units_, W_),
        "a_group_slots": np.where(opt, np.minimum(AG, blocks(-(-k // ct_))), 1) * -(-m // rt_),
        "a_group_blocks": AG,
    }
    f = {key: np.asarray(v, dtype=np.float64) for key, v in f.items()}
    regv = C.regv_words(units_, W_).astype(np.float64)
    f["regv_words"] = np.where(opt, f["a_groups"] * regv + (f["starts"] - f["a_groups"]) * C.B_GROUP_WORDS
                               + f["pauses"] * C.PAUSE_WORDS, f["starts"] * regv)
    f["range_words"] = f["starts"] * C.range_words(units_, W_).astype(np.float64)
    half = L / 2
    per = {"jds": np.zeros(len(H), bool), "tile_rows": arow, "urb": np.full(len(H), urb), "half": half,
           "util_unopt": arow * urb / half, "blocks": rt * P._col_sum(k_cfg % ct, ct, k_cfg // ct, lambda c: -(-c // H)),
           "row_tiles": rt, "col_tiles": ct, "slots": m_cfg * k_cfg}
    return {"count": count, "feats": {key: f[key] for key in S.FEATURES}, "agrp": AG, "bgrp": BG, "per": per}



def _dense_case(seed: int, G: int, n: int, mk: str, opt: str):
    """(m, k, configurations, lmm_opt) of random dense products (m, k one number or one per configuration), units,
    columns, LMM sizes and chips, the schedulable configurations only; None when there is none."""
    rng = np.random.default_rng(seed)
    units = np.where(rng.random(G) < 0.7, rng.integers(8, 40, G), rng.integers(8, 1025, G))
    if mk == "number":
        m, k = int(rng.integers(1, 3000)), int(rng.integers(1, 3000))
    else:  # k often a multiple of H (= units - 4) or one off: column tiles at a block's edge
        m = rng.integers(1, 3000, G)
        k = np.where(rng.random(G) < 0.6, (units - 4) * rng.integers(1, 40, G) + rng.integers(-1, 2, G),
                     rng.integers(1, 3000, G))
    lmm_kb = np.where(rng.random(G) < 0.5, rng.integers(1, 9, G), rng.integers(1, 4097, G))  # small: many tiles
    cfg = S.configurations(m, k, n, np.full(G, "dense"), units, rng.choice([1, 2, 4, 8], G), lmm_kb,
                           rng.choice([1, 2, 3, 4, 8, 16, 64], G))
    live = np.flatnonzero(~S.unschedulable(cfg))
    if not len(live):
        return None
    sub = {key: v[live] if np.ndim(v) else v for key, v in cfg.items()}
    ms, ks = (m, k) if mk == "number" else (m[live], k[live])
    lmm_opt = {"all": np.ones(len(live), bool), "none": np.zeros(len(live), bool),
               "mixed": rng.random(len(live)) < 0.5}[opt]
    return ms, ks, sub, lmm_opt


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 250), st.sampled_from([48, 96, 512, 1000, 4096]),
       st.sampled_from(["number", "arrays"]), st.sampled_from(["all", "none", "mixed"]))
def test_dense_plans_equal_seventh_round(seed, G, n, mk, opt):
    """plans.dense_plans with each width's blocks, A groups and sends computed once == the seventh round's (one
    _col_sum per sum), every count, candidate and problem number bit for bit and dtype for dtype: random dense
    products (m, k one number or one per configuration), units, columns, LMM sizes and chips, lmm_opt all, none or
    mixed."""
    case = _dense_case(seed, G, n, mk, opt)
    if case is None:
        return
    ms, ks, sub, lmm_opt = case
    a, b = P.dense_plans(ms, ks, n, sub, lmm_opt), _dense_plans_7(ms, ks, n, sub, lmm_opt)
    for key in ("count", "agrp", "bgrp"):
        _same_arrays(a[key], b[key])
    assert list(a["feats"]) == list(b["feats"]) and list(a["per"]) == list(b["per"])
    for key in a["feats"]:
        _same_arrays(a["feats"][key], b["feats"][key])
    for key in a["per"]:
        _same_arrays(np.asarray(a["per"][key]), np.asarray(b["per"][key]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 150), st.integers(2, 6))
def test_reasons_tails_by_configuration_equal_sorted_tails(seed, G, nk):
    """no_schedule_reasons of (product, configuration) pairs with each configuration's (nchip, lmm_kb) tail written
    once by its code (``config``) == with the tails found by sorting the lines' pairs (``shared`` alone) == every
    line written whole (not shared), object for object equal texts."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, G)
    units, cols = rng.integers(8, 1025, G), rng.choice([1, 2, 4, 8], G)
    lmm_kb, nchip = rng.integers(1, 4097, G), rng.integers(1, 65, G)
    prod = np.repeat(np.arange(nk), G)
    mkn = rng.integers(1, 3000, (nk, 3))[prod]
    pair = np.tile(np.arange(G), nk)
    cfg = S.configurations(mkn[:, 0], mkn[:, 1], mkn[:, 2], None, units, cols, lmm_kb, nchip, mapping_codes=codes,
                           pair_cfg=pair)
    plain = np.flatnonzero(S.unschedulable(cfg) & ~cfg["error"])
    lim = {name: cfg[name][plain] for name in S.LIMIT_NAMES}
    a = S.no_schedule_reasons(lim, shared=True, config=pair[plain])
    b = S.no_schedule_reasons(lim, shared=True)
    c = S.no_schedule_reasons(lim)
    assert a.dtype == object and a.shape == (len(plain),)
    assert a.tolist() == b.tolist() == c.tolist()


def test_network_reasons_equal_each_product_alone():
    """A network's reasons (several products on one batch: tails per configuration) == each product run alone on
    the same points (one product: no shared tails), line for line."""
    from archmodels import get_model
    from workloads import load_workload

    M = get_model("imax")
    w = load_workload("alexnet-conv")
    pts = M.params.points(M.params.random_rows(300, np.random.default_rng(4)))
    batch = IM._Batch.of(pts)
    keys = []
    for layer in w.layers:
        prods = IM._matmuls(layer)
        if prods:
            keys.append((prods[0].m, prods[0].k, prods[0].n, None))
    keys = list(dict.fromkeys(keys))
    assert len(keys) > 1
    together = M._runs(keys, batch, False)
    for key, run in zip(keys, together):
        alone = M._runs([key], IM._Batch.of(pts), False)[0]
        assert run["reason"].tolist() == alone["reason"].tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([1, 15, 16, 17, 31, 32, 33, 47, 48, 50, 62]),
       st.sampled_from([0, 10, 1 << 14, (1 << 14) + 7, 50_000]), st.booleans())
def test_stable_argsort_radix_equals_merge_sort(seed, bits, n, dups):
    """schedule._stable_argsort (16-bit digits for long non-negative codes) == np.argsort(kind="stable"): codes of
    1 to 62 bits, many equal codes or few, below and past the radix threshold."""
    rng = np.random.default_rng(seed)
    code = rng.integers(0, 1 << bits, n, dtype=np.int64)
    if dups and n:
        code = code[rng.integers(0, max(1, n // 50), n)]
    _same_arrays(S._stable_argsort(code), np.argsort(code, kind="stable"))


def test_stable_argsort_negative_codes_merge_sort():
    code = np.random.default_rng(2).integers(-1000, 1000, 1 << 15)
    _same_arrays(S._stable_argsort(code), np.argsort(code, kind="stable"))


def test_network_batch_radix_sorted_equals_merge_sorted(monkeypatch):
    """A vgg16 batch whose reasons sort ~20k (product, configuration) lines (radix path) == the same batch with
    every sort a merge sort: every metric, state and reason. (Restated in the nineteenth round: the reason heads'
    rows now fit ``distinct_rows_any``'s table, which sorts nothing; its table is turned off in both runs here so
    that the heads are sorted, by the radix path in the first run, as this test was written to check.)"""
    monkeypatch.setattr(S, "_TABLE_PER_ROW", 0)
    from archmodels import get_model
    from workloads import load_workload

    M = get_model("imax")
    w = load_workload("vgg16")
    pts = M.params.points(M.params.random_rows(1600, np.random.default_rng(11)))
    calls = []
    real = S._stable_argsort

    def spy(code):
        calls.append(len(code))
        return real(code)

    monkeypatch.setattr(S, "_stable_argsort", spy)
    a = M.evaluate_batch(w, pts)
    assert max(calls) >= S._RADIX_MIN
    monkeypatch.setattr(S, "_RADIX_MIN", 1 << 62)
    b = M.evaluate_batch(w, pts)
    for la, lb in zip(a.layers, b.layers):
        assert la.reason.tolist() == lb.reason.tolist()
        for key in la.metrics:
            _same_arrays(np.asarray(la.metrics[key]), np.asarray(lb.metrics[key]))
        for key in la.states:
            _same_arrays(np.asarray(la.states[key]), np.asarray(lb.states[key]))
    assert [a.point(i) for i in range(0, 1600, 97)] == [b.point(i) for i in range(0, 1600, 97)]


def _groups_by_tuples(live_mask: np.ndarray, sparse: np.ndarray, n_of: np.ndarray) -> list:
    """_Plans.build's grouping as in the seventh round: a Python tuple per live configuration, three compares per
    group over every configuration."""
    out = []
    for sp, n in sorted(set(zip(sparse[live_mask].tolist(), n_of[live_mask].tolist()))):
        out.append((np.flatnonzero(live_mask & (sparse == sp) & (n_of == n)), sp, n))
    return out


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 400), st.lists(st.integers(1, 5000), min_size=1, max_size=6),
       st.floats(0, 1))
def test_groups_by_kind_equal_tuples(seed, G, ns, p_live):
    """model._groups_by_kind == the grouping by (sparse, n) tuples: the same groups in the same order, the same
    indices, flags and n (Python bool and int)."""
    rng = np.random.default_rng(seed)
    live = rng.random(G) < p_live
    sparse = rng.random(G) < 0.5
    n_of = np.array(ns, dtype=np.int64)[rng.integers(0, len(ns), G)]
    got = IM._groups_by_kind(np.flatnonzero(live), sparse, n_of)
    want = _groups_by_tuples(live, sparse, n_of)
    assert len(got) == len(want)
    for (a, sa, na), (b, sb, nb) in zip(got, want):
        _same_arrays(a, b)
        assert (type(sa), sa, type(na), na) == (type(sb), sb, type(nb), nb)

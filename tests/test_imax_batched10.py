"""IMAX batched paths of issue 15's tenth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import tech
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from workloads.parametric import parse

from .test_imax_batched5 import _configs, _plans_equal, _same


# ---------------------------------------------------------------- tech.bisection_tree


def _stacked_tree(node_nm: int) -> tuple[np.ndarray, np.ndarray]:
    """The ninth round's ``bisection_tree``: each level's (lo, hi) arrays built from the previous level's by
    stacking, its mids written at their positions."""
    v0, vmax = tech.VDD_NOM[node_nm], tech.VDD_MAX[node_nm]
    n = (1 << tech._TREE_DEPTH) - 1
    mids = np.empty(n + 2)
    mids[0], mids[-1] = v0, vmax
    lo, hi = np.array([v0]), np.array([vmax])
    for level in range(tech._TREE_DEPTH):
        mid = (lo + hi) / 2
        gap = 1 << (tech._TREE_DEPTH - level - 1)
        mids[gap::2 * gap] = mid
        lo, hi = np.stack((lo, mid), axis=1).ravel(), np.stack((mid, hi), axis=1).ravel()
    return mids, tech._speed(mids[1:-1], node_nm)


@pytest.mark.parametrize("node", tech.NODES_NM)
def test_bisection_tree_in_place_equals_the_stacked_levels(node):
    """The table's mids from their neighbours one gap away, in place == the level-by-level (lo, hi) arrays, bit
    for bit; speeds the same; the arrays read-only."""
    mids, speeds = tech.bisection_tree.__wrapped__(node)
    want_mids, want_speeds = _stacked_tree(node)
    _same(mids, want_mids)
    _same(speeds, want_speeds)
    assert not mids.flags.writeable and not speeds.flags.writeable


# ---------------------------------------------------------------- schedule._int_texts


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9000), max_size=40), min_size=1, max_size=6),
       st.sampled_from(["", ", lmm_kb=", "x"]))
def test_int_texts_from_the_growing_table_equal_f_strings(batches, suffix):
    """Batches of growing and shrinking largest numbers, read from one table per suffix (rebuilt with headroom
    only when a number passes it) == one f-string per value; a table never shrinks while it serves."""
    S._INT_TABLES.clear()
    for values in batches:
        before = S._INT_TABLES.get(suffix)
        got = S._int_texts(np.array(values, dtype=np.int64), suffix)
        assert got.dtype == object and got.tolist() == [f"{v}{suffix}" for v in values]
        table = S._INT_TABLES.get(suffix)
        if values:
            assert len(table) > max(values) and len(table) >= 64
            assert table.tolist() == [f"{v}{suffix}" for v in range(len(table))]
            if before is not None and len(before) > max(values):
                assert table is before  # served by the table it had
            else:
                assert len(table) >= 3 * (max(values) + 1) // 2  # headroom
        else:
            assert table is before


def test_int_texts_tables_per_suffix_and_bounded():
    """Each suffix its own table; past 8 suffixes the tables are dropped (bounded); numbers past the tabled range
    or negative written one by one."""
    S._INT_TABLES.clear()
    for i in range(10):
        assert S._int_texts(np.array([3, 70]), f"s{i}").tolist() == [f"3s{i}", f"70s{i}"]
        assert len(S._INT_TABLES) <= 8
    big = np.array([S._INT_TEXTS_MAX, 5])
    assert S._int_texts(big, "k").tolist() == [f"{S._INT_TEXTS_MAX}k", "5k"]
    assert S._int_texts(np.array([-1, 2]), "k").tolist() == ["-1k", "2k"]


# ---------------------------------------------------------------- plans._candidates


def _divmod_candidates(n, cfg, lmm_opt, a_max):
    """The ninth round's ``_candidates``: ``np.divmod`` of the divisors of n by each configuration's N."""
    N = cfg["N"]
    divs = P._divisors(n)[::-1]
    b, rem = np.divmod(divs[None, :], N[:, None])
    ok = (rem == 0) & (b <= cfg["b_hi"][:, None])
    if lmm_opt is False:
        ok &= np.cumsum(ok, axis=1) == 1
    elif lmm_opt is not True:
        ok &= lmm_opt[:, None] | (np.cumsum(ok, axis=1) == 1)
    count = ok.sum(axis=1)
    g = np.repeat(np.arange(len(N)), count)
    if lmm_opt is True or lmm_opt is False:
        return count, g, a_max[g] if lmm_opt else np.ones(len(g), np.int64), b[ok]
    return count, g, np.where(lmm_opt[g], a_max[g], 1), b[ok]


@settings(max_examples=120, deadline=None)
@given(n=st.sampled_from([1, 7, 12, 48, 96, 360, 512, 1024, 5040]), G=st.integers(0, 300),
       n_hi=st.sampled_from([1, 4, 64, 65, 300, 5000]), opt=st.sampled_from(["all", "none", "mixed"]),
       seed=st.integers(0, 10_000))
def test_candidates_by_the_divisor_table_equal_divmod(n, G, n_hi, opt, seed):
    """plans._candidates reading d // N and N | d from the per-n table (N up to the table's bound; past it, or
    below 1, the divmod) == the divmod of the divisors by N: counts, owners, AGRP, BGRP, dtypes; the table
    read-only and the same object for a later batch of smaller N."""
    rng = np.random.default_rng(seed)
    N = rng.integers(1, n_hi + 1, G)
    cfg = {"N": N, "b_hi": rng.integers(-1, n + 2, G)}
    a_max = rng.integers(1, 9, G)
    lmm_opt = {"all": True, "none": False, "mixed": rng.random(G) < 0.5}[opt]
    got = P._candidates(n, cfg, lmm_opt, a_max)
    for a, b in zip(got, _divmod_candidates(n, cfg, lmm_opt, a_max)):
        _same(a, b)
    if G and n_hi < P._DIV_TABLE_MAX:
        quot, whole = P._divisor_table(n, max(64, 1 << int(N.max()).bit_length()))
        assert not quot.flags.writeable and not whole.flags.writeable
        assert quot.shape == whole.shape == (max(64, 1 << int(N.max()).bit_length()), len(P._divisors(n)))


def test_candidates_past_the_table_and_with_n_of_zero_take_divmod(monkeypatch):
    """N at or past _DIV_TABLE_MAX (monkeypatched low), and a configuration with N = 0 (not met: nchip >= 1),
    take the divmod: the same answers as before, warnings included."""
    rng = np.random.default_rng(4)
    cfg = {"N": rng.integers(1, 40, 200), "b_hi": rng.integers(0, 100, 200)}
    a_max = rng.integers(1, 5, 200)
    want = _divmod_candidates(96, cfg, True, a_max)
    monkeypatch.setattr(P, "_DIV_TABLE_MAX", 8)
    for a, b in zip(P._candidates(96, cfg, True, a_max), want):
        _same(a, b)
    monkeypatch.undo()
    cfg0 = {"N": np.array([0, 3, 4]), "b_hi": np.array([5, 5, 5])}
    with np.errstate(divide="ignore"):
        for a, b in zip(P._candidates(12, cfg0, True, np.ones(3, np.int64)),
                        _divmod_candidates(12, cfg0, True, np.ones(3, np.int64))):
            _same(a, b)


# ---------------------------------------------------------------- plans.sparse_plans without a fallback


@settings(max_examples=25, deadline=None)
@given(m=st.integers(20, 200), k=st.integers(20, 300), n=st.sampled_from([12, 48, 96]),
       sparsity=st.sampled_from([0.5, 0.9, 0.97]), seed=st.integers(0, 40), lmm_hi=st.sampled_from([8, 64]),
       opt=st.sampled_from(["all", "none", "mixed"]), rng_seed=st.integers(0, 10_000))
def test_sparse_plans_on_every_configuration_equal_the_gathered_ones(m, k, n, sparsity, seed, lmm_hi, opt, rng_seed):
    """sparse_plans reading the configurations' numbers as they are when none is left to the scalar schedule (no
    gather by an index of all of them): == the padded reference and == the plans of a copy of the numbers, and the
    caller's numbers unaltered (a plan's problem numbers may be the caller's arrays: they are only read)."""
    layer = parse(f"spmm:m={m},k={k},cols={n},sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    fmt, mapping, cfg, lmm_opt = _configs(np.random.default_rng(rng_seed), m, k, n, 120, lmm_hi, opt)
    if not len(lmm_opt):
        return
    copy = {key: np.array(v, copy=True) if np.ndim(v) else v for key, v in cfg.items()}
    got = P.sparse_plans(layer, fmt, mapping, n, cfg, lmm_opt)
    for key, v in cfg.items():
        if np.ndim(v):
            _same(v, copy[key])  # not altered
        else:
            assert v == copy[key]
    _plans_equal(got, P.sparse_plans_padded(layer, fmt, mapping, n, copy, lmm_opt))
    _plans_equal(got, P.sparse_plans(layer, fmt, mapping, n, copy, lmm_opt.copy()))


def test_int_text_tables_cover_the_declared_space_at_once():
    """The reason lines' tables are built to the declared space's largest nchip and lmm_kb (ImaxModel's
    parameters) when a batch's numbers lie below them (one table for every batch of the space), with headroom past
    them; the lines the same texts."""
    from archmodels.imax.model import ImaxModel

    high = {p.name: p.high for p in ImaxModel.PARAMS}
    assert (S.SPACE_NCHIP, S.SPACE_LMM_KB) == (high["nchip"], high["lmm_kb"])
    S._INT_TABLES.clear()
    got = S._int_texts(np.array([4, 2000]), "", S.SPACE_LMM_KB + 1)
    assert got.tolist() == ["4", "2000"] and len(S._INT_TABLES[""]) == S.SPACE_LMM_KB + 1
    table = S._INT_TABLES[""]
    assert S._int_texts(np.array([4096, 7]), "", S.SPACE_LMM_KB + 1).tolist() == ["4096", "7"]
    assert S._INT_TABLES[""] is table  # the space's largest served by the same table
    assert S._int_texts(np.array([5000]), "", S.SPACE_LMM_KB + 1).tolist() == ["5000"]
    assert len(S._INT_TABLES[""]) >= 3 * 5001 // 2  # past the space: headroom
    lim = {"arow": np.array([10, 10]), "acol": np.array([20, 20]), "n": np.array([512, 512]),
           "L": np.array([4096 * 1024, 4 * 1024]), "H": np.array([8, 8]), "W": np.array([4, 4]),
           "N": np.array([64, 3]), "e": np.array([8, 8]), "simd": np.array([False, False]),
           "jds_top": np.array([-1, -1])}
    S._INT_TABLES.clear()
    lines = S.no_schedule_reasons(lim)
    assert lines.tolist() == [S._reason_of({k: v[i].item() for k, v in lim.items()}) for i in range(2)]


# ---------------------------------------------------------------- model._choice_codes by the declared objects


def _ptr(values: np.ndarray) -> np.ndarray:
    import ctypes

    return np.ctypeslib.as_array((ctypes.c_ssize_t * values.size).from_address(values.ctypes.data))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=300), st.sampled_from(["declared", "one fresh", "fresh"]),
       st.sampled_from([tech.DRAM_NAMES, IM.FORMATS, IM.SCHEDULES]))
def test_codes_of_names_equal_the_names_index(picks, objects, names):
    """_codes_of_names (the sum of index x identity with each declared name's object) == each element's index in
    ``names`` when every element is one of those objects (names unused, one name only, all of them); None as soon
    as one element is another object, even an equal string (the general path then answers); _choice_codes the
    same answers either way."""
    picks = [p % len(names) for p in picks]
    values = np.array([names[p] for p in picks], dtype=object)
    if objects == "one fresh":
        values[len(values) // 2] = "".join(list(names[picks[len(values) // 2]]))
    elif objects == "fresh":
        values = np.array(["".join(list(names[p])) for p in picks], dtype=object)
    got = IM._codes_of_names(_ptr(values), names)
    if objects == "declared":
        assert got is not None and got.dtype == np.int64 and got.tolist() == picks
    else:
        assert got is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(IM, "_CHOICE_BY_VALUE_MAX", 0)  # the pointer paths even for short arrays
        codes = IM._choice_codes(values, names)
    assert codes.dtype == np.int64 and codes.tolist() == picks


def test_codes_of_names_refuses_repeated_name_objects():
    """Names holding one object twice would count its elements twice: None (the general path)."""
    name = "".join(["c", "s", "r"])
    values = np.array([name, name], dtype=object)
    assert IM._codes_of_names(_ptr(values), (name, name)) is None
    assert IM._codes_of_names(_ptr(values), ("dense", name)).tolist() == [1, 1]

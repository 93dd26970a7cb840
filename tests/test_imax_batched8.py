"""IMAX batched paths of issue 15's eighth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

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
    assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


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

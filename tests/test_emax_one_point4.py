"""EMAXV/EMAXVR one design point, fourth round (issue 15): the one-point paths give the general path's bits.

Every fast path here is forced off (or on) and compared bit for bit with the other over random points of the
declared spaces: one point, several points sharing a node and data type, and mixed batches."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from archmodels import get_model
from archmodels.emax import cost, model

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _bits(a) -> tuple:
    """An array's dtype, shape and bytes (NaN equal to itself, -0.0 apart from 0.0)."""
    a = np.asarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def _points(arch: str, seed: int, n: int, same: bool):
    """``n`` random points of ``arch``'s space; ``same``: all at the first point's node and data type."""
    m = get_model(arch)
    rows = m.params.random_rows(n, np.random.default_rng(seed))
    if same:
        rows = [dict(r, tech_nm=rows[0]["tech_nm"], dtype_bits=rows[0]["dtype_bits"]) for r in rows]
    return m.params.points(rows)


def _never_one(a) -> bool:
    return False


@SETTINGS
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6),
       same=st.booleans())
def test_area_one_node_equals_selection(arch, seed, n, same):
    """cost.area_mm2 and the leakage of points at one node and data type (every point at once) equal the
    per-(node, type) selection."""
    pts = _points(arch, seed, n, same)
    fast = model._area_static_computed(pts)
    with mock.patch.object(cost, "_one_value", _never_one):
        slow = model._area_static_computed(pts)
    assert fast.keys() == slow.keys()
    for k in fast:
        assert _bits(fast[k]) == _bits(slow[k]), k


@SETTINGS
@given(arch=st.sampled_from(["emaxv", "emaxvr"]), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6),
       same=st.booleans())
def test_point_consts_one_node_equals_selection(arch, seed, n, same):
    """_PointConsts of points at one node and data type equals the per-(node, type) selection."""
    pts = _points(arch, seed, n, same)
    model._AREA_MEMOS.clear()
    fast = model._PointConsts(pts, n)
    model._AREA_MEMOS.clear()
    with mock.patch.object(cost, "_one_value", _never_one):
        slow = model._PointConsts(pts, n)
    for k in ("pes", "spm_kb", "dram_rd_pj", "dram_wr_pj", "mac_pj", "add_pj", "lmm_pj", "spm_pj", "static_w"):
        assert _bits(getattr(fast, k)) == _bits(getattr(slow, k)), k
    assert fast.only == slow.only

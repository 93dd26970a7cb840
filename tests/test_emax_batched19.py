"""EMAX batched, eighteenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit."""

from __future__ import annotations

from contextlib import ExitStack
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import tech
from archmodels.emax import cost
from archmodels.emax import model as em

from .test_emax_batched16 import _everything, _same
from .test_emax_batched17 import _random_rows

_FLOATS = st.sampled_from([0.25, 1.0, 1.5, 4.0, 300.0, 1000.0, 2000.0, -0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf,
                           1e300, 5e-324])


def _bits(a) -> list:
    a = np.asarray(a)
    assert a.dtype == np.float64
    return a.view(np.int64).tolist()


# ------------------------------------------------------------------ the oracles: the code before this round
def _area_former(rows, cols, lmm_kb, spm_kb, bits, node_nm, clock_mhz=0.0) -> dict[str, np.ndarray]:
    args = [np.asarray(x) for x in (rows, cols, lmm_kb, spm_kb, bits, node_nm, clock_mhz)]
    shape = np.broadcast(*args).shape
    if any(a.shape != shape for a in args):
        args = [np.broadcast_to(a, shape) for a in args]
    rows, cols, lmm_kb, spm_kb, bits, node, clock = args
    pes = rows.astype(float) * cols
    if len(shape) == 1 and bits.size and cost._one_value(bits) and cost._one_value(node):
        b, nd = bits.flat[0], int(node.flat[0])
        logic = pes * tech.pe_logic_area_mm2(cost.dtype_name(b), nd) * tech.logic_area_factor(clock, nd)
        lmm = pes * tech.sram_area_mm2(lmm_kb.astype(float), nd)
        spm = np.asarray(tech.sram_area_mm2(spm_kb.astype(float), nd), dtype=float)
        return {"pe_logic_area_mm2": logic, "lmm_area_mm2": lmm, "spm_area_mm2": spm, "area_mm2": logic + lmm + spm}
    logic, lmm, spm = np.empty(shape), np.empty(shape), np.empty(shape)
    for b in np.unique(bits):
        for nd in np.unique(node):
            sel = (bits == b) & (node == nd)
            logic[sel] = (pes[sel] * tech.pe_logic_area_mm2(cost.dtype_name(b), int(nd))
                          * tech.logic_area_factor(clock[sel], int(nd)))
            lmm[sel] = pes[sel] * tech.sram_area_mm2(lmm_kb[sel].astype(float), int(nd))
            spm[sel] = tech.sram_area_mm2(spm_kb[sel].astype(float), int(nd))
    return {"pe_logic_area_mm2": logic, "lmm_area_mm2": lmm, "spm_area_mm2": spm, "area_mm2": logic + lmm + spm}


def _static_former(pts, n: int, area: dict[str, np.ndarray], sram_kb: np.ndarray, vdd: np.ndarray) -> np.ndarray:
    static = np.empty(n)
    for nd in np.unique(pts["tech_nm"]):
        at = pts["tech_nm"] == nd
        static[at] = tech.static_power_w(area["pe_logic_area_mm2"][at], sram_kb[at], int(nd), vdd[at])
    return static


def _area_static_former(pts) -> dict[str, np.ndarray]:
    """``_area_static_computed`` as it was (the several-node path; the others unchanged)."""
    n = len(pts["rows"])
    spm_kb = pts.get("spm_kb", np.zeros(n))
    area = _area_former(pts["rows"], pts["cols"], pts["lmm_kb"], spm_kb, pts["dtype_bits"], pts["tech_nm"],
                        pts["clock_mhz"])
    sram_kb = (pts["rows"] * pts["cols"]).astype(float) * pts["lmm_kb"] + spm_kb
    vdd = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).vdd_ratio
    if n and cost._one_value(pts["tech_nm"]):
        static = np.asarray(tech.static_power_w(area["pe_logic_area_mm2"], sram_kb, int(pts["tech_nm"][0]), vdd),
                            dtype=float)
        return {**area, "static_power_w": static}
    return {**area, "static_power_w": _static_former(pts, n, area, sram_kb, vdd)}


def _consts_former(self, pts, n: int) -> tuple[np.ndarray, ...]:
    """``_PointConsts``' energies as its general path computed them (several nodes or data types)."""
    bits, node = pts["dtype_bits"], pts["tech_nm"]
    vscale = tech.clock_costs(pts["clock_mhz"], node).energy_scale
    mac_pj, add_pj, lmm_pj, spm_pj = (np.empty(n) for _ in range(4))
    for nd in np.unique(node):
        at = node == nd
        lmm_pj[at] = tech.sram_energy_pj_per_byte(pts["lmm_kb"][at], int(nd))
        spm_pj[at] = tech.sram_energy_pj_per_byte(self.spm_kb[at], int(nd))
        for b in np.unique(bits[at]):
            sel = at & (bits == b)
            mac_pj[sel], add_pj[sel] = cost.op_energies_pj(int(b), int(nd))
    for arr in (mac_pj, add_pj, lmm_pj, spm_pj):
        arr *= vscale
    return mac_pj, add_pj, lmm_pj, spm_pj


def _dram_former(dram) -> tuple[np.ndarray, np.ndarray]:
    d = np.asarray(dram, dtype=object)
    rows = np.array([tech._DRAM_ROW[x] for x in d.ravel().tolist()], dtype=np.intp)
    return tech._DRAM_PJ[0][rows].reshape(d.shape), tech._DRAM_PJ[1][rows].reshape(d.shape)


def _start_former(seg: np.ndarray, nseg: int) -> np.ndarray:
    full = np.bincount(seg, minlength=nseg + 1)
    if len(seg) and not (seg[1:] < seg[:-1]).any():
        start = np.where(full > 0, np.cumsum(full) - full, 0)[:nseg]
    else:
        start = np.zeros(nseg + 1, dtype=np.int64)
        first, at = np.unique(seg, return_index=True)
        start[first] = at
        start = start[:nseg]
    return start


# ------------------------------------------------------------------ area, leakage and energies by node
@st.composite
def _points(draw, least: int = 0):
    """Points of random sizes, data types, nodes and clocks; NaN of either sign, infinities, -0.0 among the floats."""
    n = draw(st.integers(least, 24))
    floats = st.lists(_FLOATS, min_size=n, max_size=n)
    pts = {"rows": np.array(draw(st.lists(st.integers(1, 64), min_size=n, max_size=n)), dtype=np.int64),
           "cols": np.array(draw(st.lists(st.sampled_from([1, 2, 4, 8, 16]), min_size=n, max_size=n)), dtype=np.int64),
           "lmm_kb": np.array(draw(floats), dtype=float),
           "dtype_bits": np.array(draw(st.lists(st.sampled_from([16, 32, 8]), min_size=n, max_size=n)), dtype=np.int64),
           "tech_nm": np.array(draw(st.lists(st.sampled_from([14, 28]), min_size=n, max_size=n)), dtype=np.int64),
           "clock_mhz": np.array(draw(floats), dtype=float),
           "criterion": np.array(["time"] * n, dtype=object)}
    if draw(st.booleans()):
        pts["spm_kb"] = np.array(draw(floats), dtype=float)
    return pts


@settings(max_examples=60, deadline=None)
@given(pts=_points(), shape2=st.booleans())
def test_area_equals_the_former_loop_over_types_and_nodes(pts, shape2):
    """``cost.area_mm2`` (each node's expressions over every point, picked by node) gives the former loop's arrays
    (a selection and scatter per data type and node) bit for bit: NaN of either sign, infinities, -0.0, one or
    several types and nodes, no point, a 2-d batch, a scalar clock."""
    n = len(pts["rows"])
    spm = pts.get("spm_kb", np.zeros(n))
    args = [pts["rows"], pts["cols"], pts["lmm_kb"], spm, pts["dtype_bits"], pts["tech_nm"], pts["clock_mhz"]]
    if shape2 and n % 2 == 0:
        args = [a.reshape(2, -1) for a in args]
    for a in (args, args[:-1] + [0.0]):
        got, want = cost.area_mm2(*a), _area_former(*a)
        assert list(got) == list(want)
        for k in want:
            assert got[k].shape == want[k].shape and _bits(got[k]) == _bits(want[k]), k


@settings(max_examples=40, deadline=None)
@given(pts=_points(1))
def test_leakage_and_energies_equal_the_former_loops(pts):
    """``_area_static_computed``'s leakage and ``_PointConsts``' MAC, add, LMM and SPM energies (each node's over
    every point, picked by node) equal the former loops' bit for bit."""
    n = len(pts["rows"])
    em._AREA_MEMOS.clear()
    got, want = em._area_static_computed(pts), _area_static_former_or_one(pts)
    for k in want:
        assert _bits(got[k]) == _bits(want[k]), k
    pts["dram"] = np.array(["ddr4"] * n, dtype=object)
    pc = em._PointConsts(pts, n)
    if n > 1:
        for g, w in zip((pc.mac_pj, pc.add_pj, pc.lmm_pj, pc.spm_pj), _consts_former(pc, pts, n)):
            assert _bits(g) == _bits(w)
        assert all(a.flags.writeable and a.flags.c_contiguous for a in (pc.mac_pj, pc.add_pj, pc.lmm_pj, pc.spm_pj))


def test_by_node_and_by_dtype():
    """``by_node`` picks each point's node's value (a number broadcast, a new array each call); ``by_dtype`` asks
    only for the types present."""
    node = np.array([14, 28, 28, 14])
    masks = tech.node_masks(node)
    got = cost.by_node(masks, lambda nd: np.full(4, float(nd)), (4,))
    assert got.tolist() == [14.0, 28.0, 28.0, 14.0]
    one = cost.by_node(tech.node_masks(np.array([28, 28])), lambda nd: 2.5, (2,))
    assert one.tolist() == [2.5, 2.5] and one.flags.writeable
    assert cost.by_node([], lambda nd: 1.0, (0,)).shape == (0,)
    asked = []
    assert cost.by_dtype(np.array([True, True]), lambda dt: asked.append(dt) or 1.0) == 1.0 and asked == ["int16"]
    assert cost.by_dtype(np.array([False]), lambda dt: asked.append(dt) or 2.0) == 2.0 and asked[-1] == "fp32"
    both = cost.by_dtype(np.array([True, False]), lambda dt: {"int16": 1.0, "fp32": 2.0}[dt])
    assert both.tolist() == [1.0, 2.0]


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.sampled_from(list(tech.DRAM_TYPES)), max_size=12), two_d=st.booleans())
def test_dram_energies_equal_the_former_list(names, two_d):
    """``tech.dram_pj_per_byte`` (the rows by ``np.fromiter``) equals the former list comprehension's arrays, any
    shape; an unknown name raises ``KeyError`` as before."""
    d = np.array(names, dtype=object)
    if two_d and len(names) % 2 == 0:
        d = d.reshape(2, -1)
    for x in (d, names[0] if names else "ddr4"):
        got, want = tech.dram_pj_per_byte(x), _dram_former(x)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype and _bits(g) == _bits(w)
    with pytest.raises(KeyError):
        tech.dram_pj_per_byte(np.array(names + ["sram"], dtype=object))


# ------------------------------------------------------------------ _context_plans' segment starts
@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 300, 31), ("emaxvr", "alexnet", 30, 32)])
def test_segment_starts_equal_the_former_where(arch, wl, n, seed):
    """Every segment's start (0 where empty) is the former ``np.where``'s, in dtype and bits; whole batches equal
    those of the former code (every change of this round undone: area, energies, DRAM rows), bit for bit."""
    seen = []
    final = em._final_plans

    def spy(p, *a, **k):
        seen.append(p)
        return final(p, *a, **k)

    rows = _random_rows(arch, n, seed)
    with mock.patch.object(em, "_final_plans", spy):
        got = _everything(arch, wl, rows)
    assert seen
    for p in seen:
        want = _start_former(p.segment, p.n_seg)
        assert (p.count > 0).any() and p.start.dtype == want.dtype and p.start.tobytes() == want.tobytes()
    former_init = em._PointConsts.__init__

    def init(self, pts, n):
        former_init(self, pts, n)
        if n > 1 and not (cost._one_value(pts["tech_nm"]) and cost._one_value(pts["dtype_bits"])):
            self.mac_pj, self.add_pj, self.lmm_pj, self.spm_pj = _consts_former(self, pts, n)

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(em, "_area_static_computed", _area_static_former_or_one))
        stack.enter_context(mock.patch.object(cost, "area_mm2", _area_former))
        stack.enter_context(mock.patch.object(tech, "dram_pj_per_byte", _dram_former))
        stack.enter_context(mock.patch.object(em._PointConsts, "__init__", init))
        em._AREA_MEMOS.clear()
        want = _everything(arch, wl, rows)
    em._AREA_MEMOS.clear()
    _same(got, want)


def _area_static_former_or_one(pts):
    return em._area_static_one(pts) if len(pts["rows"]) == 1 and cost._one_value(pts["tech_nm"]) else \
        _area_static_former(pts)

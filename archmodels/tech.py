"""The technology table: energy per operation/byte and area per unit, at 28 and 14 nm.

Every model takes energy, power and area from here unless its spec publishes
better figures (issue "framework core", section 3). All functions accept
numpy arrays (vectorised over design points).

Sources
-------
[H14]  M. Horowitz, "Computing's energy problem (and what we can do about
       it)", ISSCC 2014, 45 nm at 0.9 V: energy (pJ) and area (um^2) of
       arithmetic, 64-bit SRAM reads, DRAM accesses.
[T28]  TSMC 28 nm high-density 6T SRAM bit cell, 0.127 um^2 (TSMC 28 nm
       HKMG platform papers, IEDM 2011 / VLSI 2012).
[I14]  S. Natarajan et al., "A 14nm logic technology ...", IEDM 2014 (Intel):
       high-density SRAM cell 0.0588 um^2.
[IMAX] IMAX die if built in 28 nm: 13.3 mm^2 with 64 units x 64 KB LMM
       (spec `imax.md` §2) -- the one published 28 nm die among our systems;
       it anchors the logic overhead of a processing element.
[SN90] T. Sakurai, A. R. Newton, "Alpha-power law MOSFET model and its
       applications to CMOS inverter delay", IEEE JSSC 25(2), 1990:
       delay ~ V / (V - V_t)^alpha, alpha ~ 1.3 for short channels.
[ZS02] V. Zyuban, P. Strenski, "Unified methodology for resolving
       power-performance tradeoffs at the microarchitectural and circuit
       levels", ISLPED 2002: gate sizing for a tighter cycle raises area and
       energy steeply as the target approaches the fastest achievable delay.
[C7]   R. Balasubramonian et al., "CACTI 7", ACM TACO 14(2), 2017: SRAM
       leakage per bank by device type (order of magnitude only).
[DDR3L] Micron 1 Gb DDR3L x16 -093 at 1.35 V: read 262.3 mW, write 546.6 mW
       per chip, 4 chips on a 64-bit DDR3-2133 bus (17.064 GB/s): the EMAX
       thesis's DRAM power method (spec ``emax.md`` §5).
[DDR4] Micron 8 Gb DDR4-2400 x8, VDD 1.2 V: IDD4R = IDD4W = 145 mA,
       IDD3N = 55 mA (the IDD set Ramulator 2 ships), method of Micron
       TN-40-07: (IDD4 - IDD3N) x VDD per chip over its 2.4 GB/s.
[HBM2] M. O'Connor et al., "Fine-grained DRAM", MICRO 2017: HBM2 access
       energy 3.97 pJ/bit (activation, data movement and I/O).
[LP4]  H. Ha, "Understanding and improving the energy efficiency of DRAM",
       PhD thesis, Stanford 2018: LPDDR4 (4 x 8 Gb) 13-14 pJ/bit per access,
       activation and I/O included (midpoint 13.5).
[KR07] I. Kuon, J. Rose, "Measuring the gap between FPGAs and ASICs", IEEE
       TCAD 26(2), 2007: the same circuit on a 90 nm FPGA draws ~14x the
       dynamic power of 90 nm standard cells (less with hard multipliers and
       block RAM); area ~35x (18x with hard blocks), delay ~3-4x.

Assumptions (stated, not published)
-----------------------------------
* Scaling from 45 nm: energy ~ L * V^2 with nominal supplies 0.9 V (45 nm,
  28 nm) and 0.8 V (14 nm FinFET); logic area ~ L^2. Stillmaker & Baas
  (Integration 58, 2017) show such classical rules can be off by up to
  ~2x in deep submicron: treat results as relative, not absolute.
* 16-bit integer multiply interpolated from [H14]'s 8- and 32-bit figures
  with multiplier energy and area ~ width^2; adds ~ width.
* SRAM macro array efficiency (bit cells / macro area) 0.5.
* SRAM read energy per 64-bit access follows 10 pJ * sqrt(size / 8 KB) at
  45 nm, which fits [H14]'s 8 KB (10 pJ), 32 KB (20 pJ) and 1 MB (100 pJ,
  fit gives 113) points; writes cost the same as reads.
* DRAM energy is a property of the DRAM, not of the accelerator's node:
  one row per memory type in :data:`DRAM_TYPES` (read and write energy per
  byte, each with its source and basis); every model charges its DRAM bytes
  through :func:`dram_energy_j` with its ``dram`` parameter.
* Leakage: SRAM leakage per KB and logic leakage per mm^2 per node
  (:data:`SRAM_LEAK_UW_PER_KB`, :data:`LOGIC_LEAK_MW_PER_MM2`), stated
  assumptions of the order CACTI 7 [C7] gives for low-power (LSTP/HD)
  devices at 85 C; static power = leakage x (V / V_nom).
* Clock: a voltage-frequency model per node (:func:`clock_costs`): up to
  the nominal clock ``F_NOM_MHZ`` the supply is nominal; above it the supply
  rises along the alpha-power law [SN90] up to ``VDD_MAX``, which sets the
  node's maximum clock; dynamic energy scales with (V / V_nom)^2 and the
  logic area with a synthesis upsizing penalty near the nominal clock
  [ZS02] (see :func:`logic_area_factor`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat

import numpy as np

from . import num

NODES_NM = (28, 14)

# ---- [H14] at 45 nm: (energy pJ, area um^2) per operation ----
_MULT_45 = {"int8": (0.2, 282.0), "int32": (3.1, 3495.0), "fp16": (1.1, 1640.0), "fp32": (3.7, 7700.0)}
_ADD_45 = {"int8": (0.03, 36.0), "int32": (0.1, 137.0), "fp16": (0.4, 1360.0), "fp32": (0.9, 4184.0)}
# 16-bit integer: width^2 (multiply) / width (add) scaling from the 32-bit figures (assumption).
_MULT_45["int16"] = (_MULT_45["int32"][0] * 0.25, _MULT_45["int32"][1] * 0.25)
_ADD_45["int16"] = (_ADD_45["int32"][0] * 0.5, _ADD_45["int32"][1] * 0.5)

DTYPES = tuple(_MULT_45)

_SRAM_PJ_PER_64B_8KB_45 = 10.0  # [H14]
#: [H14] midpoint of 1.3-2.6 nJ per 64-bit access (kept for reference; models use :data:`DRAM_TYPES`)
H14_DRAM_PJ_PER_BYTE = 1950.0 / 8.0

# ---- node scaling (assumption, see module doc) ----
_VDD = {45: 0.9, 28: 0.9, 14: 0.8}
VDD_NOM = _VDD
_BITCELL_UM2 = {28: 0.127, 14: 0.0588}  # [T28], [I14]
SRAM_ARRAY_EFFICIENCY = 0.5  # assumption

# ---- fitted: PE logic overhead, anchored on [IMAX] ----
# An IMAX unit = 2 FP32 multiply-add units + 64 KB LMM + everything else
# (registers, 4-way thread state, address generators, pipeline, control,
# share of I/O). 13.3 mm^2 = 64 x (SRAM(64 KB) + 2 x MAC_fp32 x overhead)
# at 28 nm gives the factor below (computed in `_imax_overhead`). Models that
# build PEs from MACs use it so that their areas are anchored on one die.
IMAX_DIE_MM2 = 13.3
IMAX_UNITS = 64
IMAX_LMM_KB = 64
IMAX_FMAS_PER_UNIT = 2


def _check_node(node_nm: int) -> None:
    if node_nm not in _BITCELL_UM2:
        raise ValueError(f"technology node {node_nm} nm not in table; allowed: {NODES_NM}")


def energy_scale(node_nm: int) -> float:
    """Energy of the same circuit at ``node_nm`` relative to 45 nm (L * V^2)."""
    _check_node(node_nm)
    return (node_nm / 45.0) * (_VDD[node_nm] / _VDD[45]) ** 2


def area_scale(node_nm: int) -> float:
    """Logic area at ``node_nm`` relative to 45 nm (L^2)."""
    _check_node(node_nm)
    return (node_nm / 45.0) ** 2


def dtype_of(bits: int, floating: bool = False) -> str:
    """Name of the arithmetic type for ``bits`` (int8/int16/int32 or fp16/fp32)."""
    return f"{'fp' if floating else 'int'}{int(bits)}"


def per_point(fn, bits, nodes) -> np.ndarray:
    """``fn(bits, node_nm)`` for every design point (arrays over points), computed once per distinct pair."""
    bits, nodes = np.asarray(bits), np.asarray(nodes)
    pairs = list(zip(bits.tolist(), nodes.tolist()))
    table = {pair: float(fn(*pair)) for pair in set(pairs)}  # the pairs present (a Python set: no np.unique)
    return np.array([table[pair] for pair in pairs], dtype=float)


def mac_energy_pj(dtype: str, node_nm: int) -> float:
    """One multiply-accumulate (multiply + add) [pJ]."""
    return (_MULT_45[dtype][0] + _ADD_45[dtype][0]) * energy_scale(node_nm)


def op_energy_pj(op: str, dtype: str, node_nm: int) -> float:
    """One ``add`` or ``mult`` (e.g. a pooling comparison is an add) [pJ]."""
    table = _ADD_45 if op == "add" else _MULT_45
    return table[dtype][0] * energy_scale(node_nm)


def mac_area_mm2(dtype: str, node_nm: int) -> float:
    """Area of one multiplier + adder [mm^2]."""
    return (_MULT_45[dtype][1] + _ADD_45[dtype][1]) * area_scale(node_nm) * 1e-6


def sram_energy_pj_per_byte(size_kb, node_nm: int):
    """Read (or write) energy per byte of an SRAM of ``size_kb`` KB [pJ/B]. A Python float in, a Python float out
    (one point: the same operations, IEEE sqrt both ways; NaN stays NaN)."""
    if type(size_kb) is float:
        size = size_kb if size_kb > 0.0625 or size_kb != size_kb else 0.0625  # np.maximum(x, 0.0625)
        return _SRAM_PJ_PER_64B_8KB_45 * math.sqrt(size / 8.0) / 8.0 * energy_scale(node_nm)
    size = np.maximum(np.asarray(size_kb, dtype=float), 0.0625)
    return _SRAM_PJ_PER_64B_8KB_45 * np.sqrt(size / 8.0) / 8.0 * energy_scale(node_nm)


def sram_area_mm2(size_kb, node_nm: int):
    """Area of an SRAM macro of ``size_kb`` KB [mm^2] (bit cells / efficiency). A Python float in, a Python float
    out (the same operations)."""
    _check_node(node_nm)
    bits = (size_kb if type(size_kb) is float else np.asarray(size_kb, dtype=float)) * 8192.0
    return bits * _BITCELL_UM2[node_nm] / SRAM_ARRAY_EFFICIENCY * 1e-6


def _imax_overhead() -> float:
    unit_mm2 = IMAX_DIE_MM2 / IMAX_UNITS
    logic_mm2 = unit_mm2 - float(sram_area_mm2(IMAX_LMM_KB, 28))
    return logic_mm2 / (IMAX_FMAS_PER_UNIT * mac_area_mm2("fp32", 28))


#: PE logic area / bare MAC area, fitted on the IMAX die [IMAX] (about 8).
PE_LOGIC_OVERHEAD = _imax_overhead()


def pe_logic_area_mm2(dtype: str, node_nm: int, macs_per_pe: float = 1.0) -> float:
    """Area of a processing element's logic (MACs x fitted overhead) [mm^2]."""
    return macs_per_pe * mac_area_mm2(dtype, node_nm) * PE_LOGIC_OVERHEAD


# ---- FPGA implementations [KR07] ----
#: dynamic energy of a circuit on an FPGA / the same circuit in standard cells
#: at the same node. A model that runs on an FPGA costs its on-chip energy as
#: the ASIC energy at the FPGA's node x this ratio (an upper-side estimate:
#: hard DSP and block-RAM blocks narrow the gap).
FPGA_DYNAMIC_ENERGY_RATIO = 14.0


# ---- DRAM: one row per memory type ----
@dataclass(frozen=True)
class DramType:
    """Energy per byte read / written of one external memory type, with its source."""

    name: str
    read_pj_per_byte: float
    write_pj_per_byte: float
    basis: str
    source: str


DDR3L_CHIPS = 4  # [DDR3L]
DDR3L_READ_W_PER_CHIP = 0.2623  # [DDR3L]
DDR3L_WRITE_W_PER_CHIP = 0.5466  # [DDR3L]
DDR3L_BANDWIDTH_BPS = 17_064e6  # [DDR3L] DDR3-2133 x 64 bit
_DDR3L_READ = DDR3L_CHIPS * DDR3L_READ_W_PER_CHIP / DDR3L_BANDWIDTH_BPS * 1e12  # 61.5 pJ/B
_DDR3L_WRITE = DDR3L_CHIPS * DDR3L_WRITE_W_PER_CHIP / DDR3L_BANDWIDTH_BPS * 1e12  # 128.1 pJ/B
_DDR4_RW = (0.145 - 0.055) * 1.2 / 2.4e9 * 1e12  # [DDR4]: 45.0 pJ/B

DRAM_TYPES: dict[str, DramType] = {
    "ddr3l": DramType("ddr3l", _DDR3L_READ, _DDR3L_WRITE, "read/write burst power only (no activate, refresh, I/O)",
                      "[DDR3L] EMAX thesis method, Micron DDR3L datasheet"),
    "ddr4": DramType("ddr4", _DDR4_RW, _DDR4_RW, "read/write burst current above active standby (no activate, I/O)",
                     "[DDR4] Micron DDR4 IDD values, TN-40-07 method"),
    "lpddr4": DramType("lpddr4", 13.5 * 8, 13.5 * 8, "whole access: activation, column, I/O", "[LP4] Ha 2018"),
    "hbm2": DramType("hbm2", 3.97 * 8, 3.97 * 8, "whole access: activation, column, I/O", "[HBM2] O'Connor 2017"),
}
DRAM_NAMES = tuple(DRAM_TYPES)
_DRAM_ROW = {k: i for i, k in enumerate(DRAM_TYPES)}
_DRAM_PJ = np.array([[t.read_pj_per_byte for t in DRAM_TYPES.values()], [t.write_pj_per_byte for t in DRAM_TYPES.values()]])


def dram_pj_per_byte(dram) -> tuple[np.ndarray, np.ndarray]:
    """(read, write) energy per byte [pJ/B] of the DRAM row(s) ``dram`` (an array over points or one name)."""
    d = np.asarray(dram, dtype=object)
    # (cheaper than np.unique on strings; map of the dict's look-up into np.fromiter: no list comprehension)
    rows = np.fromiter(map(_DRAM_ROW.__getitem__, d.ravel().tolist()), dtype=np.intp, count=d.size)
    return _DRAM_PJ[0][rows].reshape(d.shape), _DRAM_PJ[1][rows].reshape(d.shape)


def dram_energy_j(read_bytes, write_bytes, dram):
    """Energy of reading and writing these bytes from/to DRAM of type(s) ``dram`` [J] (arrays over points)."""
    read_pj, write_pj = dram_pj_per_byte(dram)
    return (np.asarray(read_bytes, dtype=float) * read_pj + np.asarray(write_bytes, dtype=float) * write_pj) * 1e-12


# ---- leakage (assumptions of the order [C7] gives; static power = leakage x V / V_nom) ----
#: SRAM leakage per KB at nominal voltage, 85 C, high-density cells and periphery [uW/KB]
SRAM_LEAK_UW_PER_KB = {28: 20.0, 14: 10.0}
#: standard-cell logic leakage per mm^2 at nominal voltage, 85 C [mW/mm^2]
LOGIC_LEAK_MW_PER_MM2 = {28: 10.0, 14: 10.0}


def static_power_w(logic_mm2, sram_kb, node_nm: int, vdd_ratio=1.0):
    """Leakage power of ``logic_mm2`` of logic and ``sram_kb`` KB of SRAM at ``node_nm`` [W].

    ``vdd_ratio`` = V / V_nom (leakage current x supply; DIBL ignored). Python floats in, a Python float out
    (the same operations: one point's totals)."""
    _check_node(node_nm)
    if not (type(logic_mm2) is float and type(sram_kb) is float and type(vdd_ratio) is float):
        logic_mm2, sram_kb, vdd_ratio = (np.asarray(x, dtype=float) for x in (logic_mm2, sram_kb, vdd_ratio))
    p = logic_mm2 * LOGIC_LEAK_MW_PER_MM2[node_nm] * 1e-3 + sram_kb * SRAM_LEAK_UW_PER_KB[node_nm] * 1e-6
    return p * vdd_ratio


# ---- clock: voltage-frequency model per node [SN90], synthesis area penalty [ZS02] ----
#: clock a standard-cell accelerator datapath (one multiply-add per pipeline stage) closes at V_nom with full
#: upsizing (assumption; published 28 nm accelerators run 606 MHz (DaDianNao) to 700 MHz (TPU v1))
F_NOM_MHZ = {28: 1000.0, 14: 1500.0}
#: threshold voltage and the highest supply allowed (overdrive) per node (assumption)
VT = {28: 0.35, 14: 0.30}
VDD_MAX = {28: 1.0, 14: 0.9}
ALPHA = 1.3  # [SN90]
#: synthesis: logic synthesised for clocks below KNEE x F_NOM is minimum-size; at F_NOM it is
#: (1 + AREA_PENALTY_MAX) x as large (assumption, shape from [ZS02])
AREA_KNEE = 0.6
AREA_PENALTY_MAX = 1.0


def _speed(v, node_nm: int):
    """Relative gate speed at supply ``v`` (alpha-power law)."""
    return (v - VT[node_nm]) ** ALPHA / v


def fmax_mhz(node_nm: int) -> float:
    """Highest clock of the node: F_NOM raised to the supply VDD_MAX [MHz]."""
    _check_node(node_nm)
    return F_NOM_MHZ[node_nm] * _speed(VDD_MAX[node_nm], node_nm) / _speed(_VDD[node_nm], node_nm)


_BISECT_STEPS = 40


def _bisect_vdd_ratio(f: np.ndarray, node_nm: int) -> np.ndarray:
    """V / V_nom for clocks ``f`` in (F_NOM, fmax]: 40 bisection steps on the alpha-power law.

    The definition; the models take :func:`_bisect_parts` (the same bits, fewer steps)."""
    v0, vmax = _VDD[node_nm], VDD_MAX[node_nm]
    target = np.maximum(f / F_NOM_MHZ[node_nm], 1.0) * _speed(v0, node_nm)
    lo, hi = np.full(f.shape, v0), np.full(f.shape, vmax)
    for _ in range(_BISECT_STEPS):  # bisection: speed rises with V in [v0, vmax]
        mid = (lo + hi) / 2
        slow = _speed(mid, node_nm) < target
        lo, hi = np.where(slow, mid, lo), np.where(slow, hi, mid)
    return hi / v0


#: steps of every bisection taken from a table (:func:`bisection_tree`): 2^16 - 1 supplies per node (1 MB)
_TREE_DEPTH = 16


@lru_cache(maxsize=None)
def bisection_tree(node_nm: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(supplies, speeds): the ``mid`` of every node of the first :data:`_TREE_DEPTH` levels of
    :func:`_bisect_vdd_ratio`'s tree at ``node_nm`` in increasing order, framed by v0 and vmax, and ``_speed`` of
    the inner ones -- the very operations the bisection makes, so the very bits.

    A bisection's first steps only compare the target with these speeds: where they rise in this order (checked;
    None if not), the steps end between the last speed below the target and the next one, found by one binary
    search (:func:`_bisect_parts`)."""
    v0, vmax = _VDD[node_nm], VDD_MAX[node_nm]
    n = (1 << _TREE_DEPTH) - 1
    mids = np.empty(n + 2)
    mids[0], mids[-1] = v0, vmax
    for level in range(_TREE_DEPTH):
        # a level's nodes sit 2 gaps apart in increasing order (at odd multiples of the gap); a node's bounds
        # (lo, hi) are its neighbours one gap away, an earlier level's nodes or the frame: its mid (lo + hi) / 2
        # from them in place (no per-level lo/hi arrays built; the same operands, the same bits)
        gap = 1 << (_TREE_DEPTH - level - 1)
        np.divide(np.add(mids[:-1:2 * gap], mids[2 * gap::2 * gap]), 2, out=mids[gap::2 * gap])
    speeds = _speed(mids[1:-1], node_nm)
    if not (np.all(mids[1:] > mids[:-1]) and np.all(speeds[1:] >= speeds[:-1])):
        return None
    mids.flags.writeable = speeds.flags.writeable = False
    return mids, speeds


def tree_interval(tree: tuple[np.ndarray, np.ndarray], target):
    """(lo, hi) of the bisection after the steps :func:`bisection_tree` holds, for a target speed (a number or
    an array): between the last speed below the target and the next one (the count of speeds below it is the
    number of steps that went up)."""
    mids, speeds = tree
    at = np.searchsorted(speeds, target, side="left")
    return mids[at], mids[at + 1]


def _bisect_vdd_ratios(f: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """:func:`_bisect_vdd_ratio` of clocks ``f`` in (F_NOM, fmax] at their ``nodes`` (one per clock), bit for bit:
    the first :data:`_TREE_DEPTH` steps by one binary search in :func:`bisection_tree` per node, the remaining
    steps for all nodes at once (each element's steps are its own, and a node's constants enter them as numbers,
    the same bits as the one-node loop's scalars). ~2.5x fewer numpy calls on a two-node batch. (The models reach
    :func:`_bisect_parts` through :func:`_vdd_ratios`; this per-clock-node form is what the tests hold to the
    definition.)"""
    masks = node_masks(nodes)
    out = np.empty(f.shape)
    for (_, sel), ratios in zip(masks, _bisect_parts([(nd, f[sel]) for nd, sel in masks])):
        out[sel] = ratios
    return out


def _bisect_parts(parts: list[tuple[int, np.ndarray]]) -> list[np.ndarray]:
    """:func:`_bisect_vdd_ratio` of each (node, clocks in (F_NOM, fmax]) part, bit for bit: the tables' steps
    per part (:func:`tree_interval`), the remaining steps of every part in one :func:`_bisect_loop` over their
    clocks side by side (each clock's node constants as its own element: the same operations)."""
    trees = [bisection_tree(nd) for nd, _ in parts]
    if any(tree is None for tree in trees):  # (not met with the tables' nodes) the plain loop, node by node
        return [_bisect_vdd_ratio(c, nd) for nd, c in parts]
    los, his, targets = [], [], []
    for (nd, c), tree in zip(parts, trees):
        t = np.maximum(c / F_NOM_MHZ[nd], 1.0) * _speed(_VDD[nd], nd)
        targets.append(t)
        lo, hi = tree_interval(tree, t)
        los.append(lo)
        his.append(hi)
    counts = [len(c) for _, c in parts]
    if len(parts) == 1:
        lo, hi, target = los[0], his[0], targets[0]
    else:
        lo, hi, target = np.concatenate(los), np.concatenate(his), np.concatenate(targets)
    vt = np.repeat([VT[nd] for nd, _ in parts], counts)
    v0 = np.repeat([_VDD[nd] for nd, _ in parts], counts)
    _, hi = _bisect_loop(lo, hi, vt, target, _BISECT_STEPS - _TREE_DEPTH)  # the steps the table does not hold
    ratios = hi / v0
    ends = np.cumsum([0] + counts).tolist()
    return [ratios[a:b] for a, b in zip(ends, ends[1:])]


#: 2 and :data:`ALPHA` as 0-d float64 arrays, the operands :func:`_bisect_loop` passes its ufuncs (the same values
#: the Python numbers become: the same bits, without converting them at each of the loop's calls)
_TWO, _ALPHA = np.array(2.0), np.array(ALPHA)
for _c in (_TWO, _ALPHA):
    _c.flags.writeable = False

#: :func:`_bisect_loop` updates its bounds in place for at most this many clocks (a random batch's ~90 above nominal)
_IN_PLACE_MAX = 512


def _bisect_loop(lo: np.ndarray, hi: np.ndarray, vt: np.ndarray, target: np.ndarray,
                 steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) after ``steps`` steps of :func:`_bisect_vdd_ratio`'s loop from (lo, hi) (per clock: threshold
    ``vt``, target speed ``target``): the same operations, into buffers kept across steps (no new arrays a step,
    the bounds updated where the step moves them: ``np.where``'s picks) for up to :data:`_IN_PLACE_MAX` clocks;
    more take ``np.where`` (a masked copy of random picks is ~3x slower per element than its select)."""
    if lo.size > _IN_PLACE_MAX:
        for _ in range(steps):
            mid = (lo + hi) / 2
            slow = (mid - vt) ** ALPHA / mid < target  # _speed(mid)
            lo, hi = np.where(slow, mid, lo), np.where(slow, hi, mid)
        return lo, hi
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)  # (own copies: updated in place)
    mid, t, slow = np.empty(lo.shape), np.empty(lo.shape), np.empty(lo.shape, dtype=bool)
    add, divide, subtract, power, less, copyto = np.add, np.divide, np.subtract, np.power, np.less, np.copyto
    two, alpha = _TWO, _ALPHA  # (0-d float64 arrays: no conversion of a Python number at every call)
    for _ in range(steps):  # (outputs passed by position: no keyword parsing)
        divide(add(lo, hi, mid), two, mid)  # mid = (lo + hi) / 2
        divide(power(subtract(mid, vt, t), alpha, t), mid, t)  # _speed(mid)
        less(t, target, slow)
        copyto(lo, mid, where=slow)  # lo = where(slow, mid, lo)
        copyto(mid, hi, where=slow)  # where(slow, hi, mid): the new hi, in mid's buffer
        hi, mid = mid, hi  # (the old hi's buffer takes the next step's mid)
    return lo, hi


#: (node, clock MHz) -> V / V_nom of the bisection, for clocks above nominal (a study meets few distinct clocks)
_VDD_MEMO: dict[tuple[int, float], float] = {}
_VDD_MEMO_MAX = 65536  # entries (a few MB); cleared when full
#: a node's clocks in one array are looked up in (and added to) the memo when they have at most this many distinct
#: values above nominal (a grid's or a study's few clocks); more (random points: ~0.15 us a key, no key met twice)
#: are bisected straight away -- the same bits either way
_VDD_MEMO_KEYS = 64


def vdd_ratio(clock_mhz, node_nm: int):
    """V / V_nom the clock needs (1 up to F_NOM; alpha-power law above; NaN above fmax).

    The bisection runs once per distinct (node, clock) above nominal and is remembered
    (:data:`_VDD_MEMO`): each element's bisection is independent of the others, so the
    memo returns the very bits an uncached call computes.
    """
    _check_node(node_nm)
    f = np.asarray(clock_mhz, dtype=float)
    return _vdd_ratios(f, [(node_nm, None)])


def _vdd_ratios(f: np.ndarray, masks: list[tuple[int, np.ndarray | None]], f_nom=None) -> np.ndarray:
    """:func:`vdd_ratio` of each clock ``f`` at its node (``masks``: :func:`node_masks` of the points' nodes, or
    ``[(node, None)]`` for all at one node; ``f_nom``: each point's nominal clock when the caller has it): the
    range checks over all points at once (each node's constants gathered per point: the same comparisons), then
    each node's clocks above nominal looked up in the memo, the new clocks of every node bisected in one
    :func:`_bisect_parts` call. A node's clocks above nominal, up to :data:`_VDD_MEMO_KEYS` of them (a random
    batch's ~45), are looked up one by one (a dict, no np.unique); more are made distinct first."""
    flat = f.reshape(-1)
    if masks[0][1] is None:
        nd = masks[0][0]
        f_nom, f_top = F_NOM_MHZ[nd], fmax_mhz(nd) * (1 + 1e-9)
    else:
        if f_nom is None:
            f_nom = node_constants(F_NOM_MHZ, masks, flat.shape)
        f_nom = np.reshape(f_nom, -1)
        f_top = node_constants({nd: fmax_mhz(nd) * (1 + 1e-9) for nd, _ in masks}, masks, flat.shape)
    ok = flat <= f_top  # NaN clocks stay NaN
    v = np.where(ok, 1.0, np.nan)
    above = np.flatnonzero((flat > f_nom) & ok)  # positions in ``flat`` of the clocks to look up or bisect
    if not above.size:
        return v.reshape(f.shape)
    pending = []  # (node, positions in ``flat``, the clocks to bisect (distinct), how to write their ratios)
    for nd, mask in masks:
        need = above if mask is None else above[mask.reshape(-1)[above]]
        if not need.size:
            continue
        if need.size <= _VDD_MEMO_KEYS:  # at most _VDD_MEMO_KEYS distinct: looked up (and kept) one by one
            clocks = flat[need].tolist()
            got = list(map(_VDD_MEMO.get, zip(repeat(nd), clocks)))  # the (nd, clock) keys, made in C
            if None not in got:
                v[need] = got
                continue
            if got.count(None) == len(got):  # none remembered (random clocks): no test per clock
                miss = list(dict.fromkeys(clocks))
            else:
                miss = list(dict.fromkeys(k for k, g in zip(clocks, got) if g is None))
            pending.append((nd, need, np.array(miss), (clocks, got)))
            continue
        keys, inv = np.unique(flat[need], return_inverse=True)
        inv = inv.reshape(-1)
        if len(keys) > _VDD_MEMO_KEYS:  # many distinct clocks (random points): none remembered, nor worth it
            pending.append((nd, need, keys, inv))
            continue
        got = np.array([_VDD_MEMO.get((nd, k), np.nan) for k in keys.tolist()])
        miss = np.isnan(got)
        if miss.any():
            pending.append((nd, need, keys[miss], (got, miss, inv)))
        else:
            v[need] = got[inv]
    if pending:  # every node's clocks not remembered: one bisection
        results = _bisect_parts([(nd, keys) for nd, _, keys, _ in pending])
        for (nd, need, keys, how), ratios in zip(pending, results):
            if isinstance(how, np.ndarray):  # (the inverse of all distinct clocks)
                v[need] = ratios[how]
            elif isinstance(how[0], list):  # (clocks, memo answers or None)
                if len(keys) == len(how[0]):  # every clock new and distinct: the ratios are in the clocks' order
                    v[need] = ratios
                else:
                    new = dict(zip(keys.tolist(), ratios.tolist()))
                    v[need] = [new[k] if g is None else g for k, g in zip(*how)]
            else:  # (memo answers of the distinct clocks, which are new, inverse)
                got, miss, inv = how
                got[miss] = ratios
                v[need] = got[inv]
        for (nd, _, keys, how), ratios in zip(pending, results):  # (after reading: remembering may clear the memo)
            if not isinstance(how, np.ndarray):
                _remember_vdd(nd, keys.tolist(), ratios)
    return v.reshape(f.shape)


#: arrays of at most this many elements take the set-based paths of :func:`vdd_ratio` and :func:`clock_costs`
#: (cheaper than np.unique on a few elements; the same keys, so the same bits)
_FEW = 16


def distinct(a) -> list:
    """The distinct values of ``a`` in increasing order, as Python numbers (``np.unique(a).tolist()``; a set for
    a few elements: np.unique costs microseconds on a one-point batch)."""
    a = np.asarray(a)
    return sorted(set(a.tolist())) if a.size <= _FEW else np.unique(a).tolist()


def node_masks(nodes: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """[(node, whether each point is at it)] of the nodes in ``nodes``, in increasing order (:func:`distinct`'s
    nodes, as Python ints): one comparison per declared node (:data:`NODES_NM`) instead of np.unique's sort
    (~90 us on 4,096 points); :func:`distinct` when some point is at another node."""
    nodes = np.asarray(nodes)
    out, seen = [], 0
    for node in sorted(NODES_NM):
        sel = nodes == node
        k = int(np.count_nonzero(sel))
        if k:
            out.append((node, sel))
            seen += k
    if seen != nodes.size:
        return [(int(node), nodes == node) for node in distinct(nodes)]
    return out


def node_constants(table: dict[int, float], masks: list[tuple[int, np.ndarray]], shape) -> np.ndarray:
    """``table[node]`` of each point (``masks``: :func:`node_masks` of the points' nodes, covering every point):
    a per-node constant as an array over points, for one elementwise expression instead of one per node (two
    nodes: one ``np.where``, half the cost of a fill and a masked assignment)."""
    (nd0, _), *rest = masks
    if len(rest) == 1:
        return np.where(rest[0][1].reshape(shape), table[rest[0][0]], table[nd0])
    out = np.full(shape, table[nd0])
    for nd, sel in rest:
        out[sel.reshape(shape)] = table[nd]
    return out


def _remember_vdd(node_nm: int, clocks: list[float], ratios: np.ndarray) -> None:
    """Store bisected V / V_nom of ``clocks`` in :data:`_VDD_MEMO` (cleared first when it would overflow)."""
    if len(_VDD_MEMO) + len(clocks) > _VDD_MEMO_MAX:
        _VDD_MEMO.clear()
    _VDD_MEMO.update(zip(zip(repeat(node_nm), clocks), ratios.tolist()))  # keys (node_nm, clock), made in C


def dynamic_energy_scale(clock_mhz, node_nm: int):
    """Dynamic energy per operation at this clock / at nominal supply: (V / V_nom)^2."""
    return vdd_ratio(clock_mhz, node_nm) ** 2


def logic_area_factor(clock_mhz, node_nm: int):
    """Logic area synthesised for this clock / minimum-size logic (1 .. 1 + AREA_PENALTY_MAX)."""
    _check_node(node_nm)
    return _area_factor(clock_mhz, F_NOM_MHZ[node_nm])


def _area_factor(clock_mhz, f_nom_mhz):
    """:func:`logic_area_factor` of clocks at nodes of nominal clock ``f_nom_mhz`` (a number, or one per clock:
    the same divisions, so the same bits as node by node)."""
    x = (np.asarray(clock_mhz, dtype=float) / f_nom_mhz - AREA_KNEE) / (1 - AREA_KNEE)
    # np.minimum(np.maximum(x, 0), 1) is np.clip(x, 0, 1) (NaN stays NaN; the sign of a zero vanishes in the
    # square), without np.clip's call overhead. The square as c * c: what numpy's ``** 2`` of an array computes,
    # also for one clock given as a number (a 0-d ``** 2`` calls pow(), which can differ in the last bit)
    c = np.minimum(np.maximum(x, 0.0), 1.0)
    return 1.0 + AREA_PENALTY_MAX * (c * c)


@dataclass(frozen=True)
class ClockCosts:
    """What a clock costs at a node (arrays over points): supply ratio, dynamic-energy and logic-area factors."""

    vdd_ratio: np.ndarray
    energy_scale: np.ndarray
    area_factor: np.ndarray
    feasible: np.ndarray


#: (clocks, nodes as int64, ClockCosts) of the last few distinct arrays, newest last: models ask per layer for the
#: same batch's clocks. Found by comparing the arrays bit for bit (clocks as their int64 bit patterns: NaN and
#: -0.0 as themselves), not by a bytes key copied and hashed at every ask (~64 KB at 4,096 points). The arrays
#: handed out are read-only, so a cached answer cannot be altered.
_CLOCK_MEMO: list[tuple[np.ndarray, np.ndarray, ClockCosts]] = []
_CLOCK_MEMO_MAX = 8
_CLOCK_MEMO_POINTS = 1 << 16  # larger batches are not remembered (memory)


def _clock_memo(f: np.ndarray, nodes: np.ndarray) -> ClockCosts | None:
    """The remembered :class:`ClockCosts` of these clocks (float64) and nodes (int64), newest first, or None."""
    bits = f.view(np.int64)
    if not bits.size:
        ends = None
    else:  # the first and last clocks' bits: a cheap test that skips most other batches' entries
        ends = (bits.item(0), bits.item(bits.size - 1))
    for c, nd, out in reversed(_CLOCK_MEMO):  # (nodes were stored broadcast to their clocks' shape)
        if c.shape != f.shape or (ends is not None and (c.item(0), c.item(c.size - 1)) != ends):
            continue
        if (c == bits).all() and (nd == nodes).all():
            return out
    return None


def clock_costs(clock_mhz, node_nm) -> ClockCosts:
    """:class:`ClockCosts` of each point's clock at its node (``node_nm`` an array or one node).

    Arrays in the result are read-only (shared by repeated calls on the same clocks and nodes).
    """
    f = np.atleast_1d(np.asarray(clock_mhz, dtype=float))
    nodes = np.asarray(node_nm)
    if f.shape == (1,) and nodes.size == 1:  # one point (a study's trial): in Python numbers, the same bits
        return _one_clock_costs(f.item(0), int(nodes.reshape(-1)[0]))
    if nodes.shape != f.shape:
        nodes = np.broadcast_to(nodes, f.shape)
    remember = f.size <= _CLOCK_MEMO_POINTS
    if remember:
        nodes64 = np.asarray(nodes, dtype=np.int64)
        hit = _clock_memo(f, nodes64)
        if hit is not None:
            return hit
    masks = node_masks(nodes)
    for nd, _ in masks:
        _check_node(nd)
    if len(masks) == 1:  # one node (a single point, a study at a fixed node): no selection
        v, a = _vdd_ratios(f, [(masks[0][0], None)]), logic_area_factor(f, masks[0][0])
    else:  # several nodes: each point's nominal clock gathered, no selection of the points of a node
        f_nom = node_constants(F_NOM_MHZ, masks, f.shape)
        v = _vdd_ratios(f, masks, f_nom)
        a = _area_factor(f, f_nom)
    out = ClockCosts(v, v ** 2, a, ~np.isnan(v))
    for arr in (out.vdd_ratio, out.energy_scale, out.area_factor, out.feasible):
        arr.flags.writeable = False
    if remember:
        if len(_CLOCK_MEMO) >= _CLOCK_MEMO_MAX:
            del _CLOCK_MEMO[0]  # the oldest entry
        _CLOCK_MEMO.append((f.view(np.int64).copy(), nodes64.copy(), out))
    return out


def _one_clock_costs(clock_mhz: float, node_nm: int) -> ClockCosts:
    """:func:`clock_costs` of one clock: :func:`archmodels.clock.point_clock` (this module's formulas on Python
    floats, the supply's bisection remembered as :func:`vdd_ratio` remembers it; tests/test_clock.py checks the
    bits) as read-only one-element arrays -- four numpy calls instead of ~40."""
    from .clock import point_clock  # (archmodels.clock builds on this module)

    _check_node(node_nm)
    c = point_clock(clock_mhz, node_nm)
    out = ClockCosts(np.array([c.vdd_ratio]), np.array([c.energy_scale]), np.array([c.area_factor]),
                     np.array([c.feasible]))
    for arr in (out.vdd_ratio, out.energy_scale, out.area_factor, out.feasible):
        arr.flags.writeable = False
    return out


def clock_check(clock_mhz, node_nm) -> tuple[np.ndarray, np.ndarray]:
    """(feasible, reason) of each point's clock against its node's maximum clock."""
    c = clock_costs(clock_mhz, node_nm)
    reason = num.objects(c.feasible.shape, "")
    if c.feasible.all():
        return c.feasible.copy(), reason  # a writable array, as before the memo
    bad = np.flatnonzero(~c.feasible)  # (a few points: their nodes only, not a mask per node over all)
    if type(node_nm) is np.ndarray and node_nm.shape == c.feasible.shape:  # (a batch's nodes: no broadcast)
        nodes = node_nm.reshape(-1)[bad]
    else:
        nodes = np.broadcast_to(np.asarray(node_nm), c.feasible.shape).reshape(-1)[bad]
    flat = reason.reshape(-1)
    # every node is a declared one (clock_costs checked them): the declared nodes in increasing order, those some
    # infeasible point is at -- the nodes sorted(set(nodes)) names, without a set of every infeasible point's node
    for nd in _NODES_UP:
        sel = bad[nodes == nd]
        if len(sel):
            flat[sel] = f"clock above the {nd} nm maximum of {fmax_mhz(nd):.0f} MHz (V_max {VDD_MAX[nd]} V)"
    return c.feasible.copy(), reason


_NODES_UP = tuple(sorted(NODES_NM))  # (clock_check's order)

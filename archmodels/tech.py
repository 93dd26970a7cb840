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
  [H14]'s 1.3-2.6 nJ per 64-bit access, midpoint 1.95 nJ = 244 pJ/B.
* Leakage is not modelled.
"""

from __future__ import annotations

import numpy as np

NODES_NM = (28, 14)

# ---- [H14] at 45 nm: (energy pJ, area um^2) per operation ----
_MULT_45 = {"int8": (0.2, 282.0), "int32": (3.1, 3495.0), "fp16": (1.1, 1640.0), "fp32": (3.7, 7700.0)}
_ADD_45 = {"int8": (0.03, 36.0), "int32": (0.1, 137.0), "fp16": (0.4, 1360.0), "fp32": (0.9, 4184.0)}
# 16-bit integer: width^2 (multiply) / width (add) scaling from the 32-bit figures (assumption).
_MULT_45["int16"] = (_MULT_45["int32"][0] * 0.25, _MULT_45["int32"][1] * 0.25)
_ADD_45["int16"] = (_ADD_45["int32"][0] * 0.5, _ADD_45["int32"][1] * 0.5)

DTYPES = tuple(_MULT_45)

_SRAM_PJ_PER_64B_8KB_45 = 10.0  # [H14]
DRAM_PJ_PER_BYTE = 1950.0 / 8.0  # [H14] midpoint of 1.3-2.6 nJ per 64-bit access

# ---- node scaling (assumption, see module doc) ----
_VDD = {45: 0.9, 28: 0.9, 14: 0.8}
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
    """Read (or write) energy per byte of an SRAM of ``size_kb`` KB [pJ/B]."""
    size = np.maximum(np.asarray(size_kb, dtype=float), 0.0625)
    return _SRAM_PJ_PER_64B_8KB_45 * np.sqrt(size / 8.0) / 8.0 * energy_scale(node_nm)


def sram_area_mm2(size_kb, node_nm: int):
    """Area of an SRAM macro of ``size_kb`` KB [mm^2] (bit cells / efficiency)."""
    _check_node(node_nm)
    bits = np.asarray(size_kb, dtype=float) * 8192.0
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

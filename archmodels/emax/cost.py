"""Energy, DRAM power and area of EMAXV/EMAXVR (spec `emax.md` §5, §6).

* DRAM: the thesis's DDR3L method (§5): Micron 1 Gb DDR3L x16, -093,
  1.35 V, read 262.3 mW and write 546.6 mW per chip, 4 chips on the 64-bit
  bus, read/write power only (no activate, no refresh). A transfer of ``b``
  bytes takes ``b / 17,064 MB/s`` at that power, so the energy per byte is a
  property of the DRAM (:data:`DDR3L_READ_PJ_PER_BYTE`,
  :data:`DDR3L_WRITE_PJ_PER_BYTE`); ``dram_power_w`` = that energy over the
  run time, as in the thesis.
* MACs, other ALU operations, LMM and SPM accesses: the shared technology
  table (:mod:`archmodels.tech`), 16-bit data as ``int16`` (fixed point),
  32-bit as ``fp32`` (EMAXV's float). A MAX or an add/shift/AEX instruction
  costs one add of the data type.
* Area (§6: not published): PEs x (PE logic + LMM macro) + SPM macro, from
  :func:`tech.pe_logic_area_mm2` (one MAC per PE, logic overhead anchored on
  the IMAX die, `imax.md` §2) and :func:`tech.sram_area_mm2`. The FSM, DMA
  and bus wiring are not counted (a few % of a PE array; stated, not fitted).
"""

from __future__ import annotations

import numpy as np

from .. import tech

DDR3L_CHIPS = 4
DDR3L_READ_W_PER_CHIP = 0.2623
DDR3L_WRITE_W_PER_CHIP = 0.5466
DDR3L_BANDWIDTH_BPS = 17_064e6  # DDR3-2133 x 64 bit (spec §3)
DDR3L_READ_PJ_PER_BYTE = DDR3L_CHIPS * DDR3L_READ_W_PER_CHIP / DDR3L_BANDWIDTH_BPS * 1e12
DDR3L_WRITE_PJ_PER_BYTE = DDR3L_CHIPS * DDR3L_WRITE_W_PER_CHIP / DDR3L_BANDWIDTH_BPS * 1e12


def dtype_name(bits: int) -> str:
    return "int16" if int(bits) == 16 else "fp32"


def dram_energy_j(read_bytes, write_bytes):
    """DDR3L read/write energy of moving these bytes (spec §5 method)."""
    return (np.asarray(read_bytes) * DDR3L_READ_PJ_PER_BYTE + np.asarray(write_bytes) * DDR3L_WRITE_PJ_PER_BYTE) * 1e-12


def dram_power_saved_w(read_saved_bytes, write_saved_bytes, run_time_s, bandwidth_bps=DDR3L_BANDWIDTH_BPS):
    """The thesis's estimate (§5): transfer time saved x chip power, over the run time."""
    t_r = np.asarray(read_saved_bytes) / bandwidth_bps
    t_w = np.asarray(write_saved_bytes) / bandwidth_bps
    return (t_r * DDR3L_CHIPS * DDR3L_READ_W_PER_CHIP + t_w * DDR3L_CHIPS * DDR3L_WRITE_W_PER_CHIP) / run_time_s


#: the plan columns :func:`compute_energy_j` and :func:`sram_energy_j` read
ENERGY_COLUMNS = ("ops", "mac", "other_ops", "has_pool", "pool_ops", "lmm_read", "lmm_write", "spm_read", "spm_write")


def op_energies_pj(bits: int, node_nm: int) -> tuple[float, float]:
    """(MAC, add) energy of the data type at a node [pJ]; a MAX or an add/shift/AEX instruction is an add."""
    dt = dtype_name(bits)
    return tech.mac_energy_pj(dt, node_nm), tech.op_energy_pj("add", dt, node_nm)


def compute_energy_j(plans: dict[str, np.ndarray], mac_pj, add_pj) -> np.ndarray:
    """MAC (or MAX) operations plus the other ALU instructions issued during EXEC (arrays over plans).

    ``plans``: :class:`~archmodels.emax.traffic.PlanTable` columns (``ops``, ``mac``, ``other_ops`` = the
    non-MAC instructions x iterations, the fused pooling pass's ``pool_ops``).
    """
    per_op = np.where(plans["mac"] > 0, mac_pj, add_pj)
    e = plans["ops"] * per_op + plans["other_ops"] * add_pj
    e = np.where(plans["has_pool"] > 0, e + plans["pool_ops"] * add_pj, e)
    return e * 1e-12


def sram_energy_j(plans: dict[str, np.ndarray], lmm_pj_per_byte, spm_pj_per_byte, spm_kb) -> np.ndarray:
    """LMM and SPM accesses (arrays over plans); ``*_pj_per_byte`` from :func:`tech.sram_energy_pj_per_byte`."""
    lmm = (plans["lmm_read"] + plans["lmm_write"]) * lmm_pj_per_byte
    spm = np.where(spm_kb > 0, (plans["spm_read"] + plans["spm_write"]) * spm_pj_per_byte, 0.0)
    return (lmm + spm) * 1e-12


def area_mm2(rows, cols, lmm_kb, spm_kb, bits, node_nm) -> dict[str, np.ndarray]:
    """Area of the PE logic, the LMMs and the SPM (arrays over points) [mm^2]."""
    args = [np.asarray(x) for x in (rows, cols, lmm_kb, spm_kb, bits, node_nm)]
    shape = np.broadcast(*args).shape
    rows, cols, lmm_kb, spm_kb, bits, node = (np.broadcast_to(a, shape) for a in args)
    pes = rows.astype(float) * cols
    logic, lmm, spm = np.empty(shape), np.empty(shape), np.empty(shape)
    for b in np.unique(bits):
        for nd in np.unique(node):
            sel = (bits == b) & (node == nd)
            logic[sel] = pes[sel] * tech.pe_logic_area_mm2(dtype_name(b), int(nd))
            lmm[sel] = pes[sel] * tech.sram_area_mm2(lmm_kb[sel].astype(float), int(nd))
            spm[sel] = tech.sram_area_mm2(spm_kb[sel].astype(float), int(nd))
    return {"pe_logic_area_mm2": logic, "lmm_area_mm2": lmm, "spm_area_mm2": spm, "area_mm2": logic + lmm + spm}

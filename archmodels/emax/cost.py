"""Energy, DRAM power and area of EMAXV/EMAXVR (spec `emax.md` §5, §6).

* DRAM: the technology table's row for the ``dram`` parameter
  (:data:`archmodels.tech.DRAM_TYPES`); the default ``ddr3l`` row *is* the
  thesis's method (§5): Micron 1 Gb DDR3L x16, -093, 1.35 V, read 262.3 mW
  and write 546.6 mW per chip, 4 chips on the 64-bit bus, read/write power
  only. ``dram_power_w`` = that energy over the run time, as in the thesis.
* MACs, other ALU operations, LMM and SPM accesses: the shared technology
  table (:mod:`archmodels.tech`), 16-bit data as ``int16`` (fixed point),
  32-bit as ``fp32`` (EMAXV's float). A MAX or an add/shift/AEX instruction
  costs one add of the data type.
* Clock: above the node's nominal clock the supply rises and the on-chip
  dynamic energy scales with (V / V_nom)^2; the PE logic is synthesised for
  the clock (:func:`tech.logic_area_factor`); leakage of the logic and the
  SRAMs is the static power (:func:`tech.static_power_w`).
* Area (§6: not published; no EMAX die exists): PEs x (PE logic + LMM
  macro) + SPM macro, from :func:`tech.pe_logic_area_mm2` (one MAC per PE,
  logic overhead anchored on the IMAX die, `imax.md` §2 -- the only die of
  the family) and :func:`tech.sram_area_mm2`. The FSM, DMA
  and bus wiring are not counted (a few % of a PE array; stated, not fitted).
"""

from __future__ import annotations

import numpy as np

from .. import tech

from ..tech import DDR3L_BANDWIDTH_BPS, DDR3L_CHIPS, DDR3L_READ_W_PER_CHIP, DDR3L_WRITE_W_PER_CHIP


def dtype_name(bits: int) -> str:
    return "int16" if int(bits) == 16 else "fp32"


def dram_energy_j(read_bytes, write_bytes, read_pj_per_byte, write_pj_per_byte):
    """Read/write energy of moving these bytes at the technology-table row's energies per byte (DDR3L: spec §5)."""
    return (np.asarray(read_bytes) * read_pj_per_byte + np.asarray(write_bytes) * write_pj_per_byte) * 1e-12


def dram_power_saved_w(read_saved_bytes, write_saved_bytes, run_time_s, bandwidth_bps=DDR3L_BANDWIDTH_BPS):
    """The thesis's estimate (§5): transfer time saved x chip power, over the run time."""
    t_r = np.asarray(read_saved_bytes) / bandwidth_bps
    t_w = np.asarray(write_saved_bytes) / bandwidth_bps
    return (t_r * DDR3L_CHIPS * DDR3L_READ_W_PER_CHIP + t_w * DDR3L_CHIPS * DDR3L_WRITE_W_PER_CHIP) / run_time_s


#: the plan columns :func:`compute_energy_j` and :func:`sram_energy_j` read
ENERGY_COLUMNS = ("ops", "mac", "other_ops", "has_pool", "pool_ops", "lmm_read", "lmm_write", "spm_read", "spm_write")


def op_energies_pj(bits: int, node_nm: int) -> tuple[float, float]:
    """(MAC, add) energy of the data type at a node [pJ]; a MAX or an add/shift/AEX instruction is an add."""
    return dtype_energies_pj(dtype_name(bits), node_nm)


def dtype_energies_pj(dtype: str, node_nm: int) -> tuple[float, float]:
    """:func:`op_energies_pj` of a data type by name."""
    return tech.mac_energy_pj(dtype, node_nm), tech.op_energy_pj("add", dtype, node_nm)


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


def area_mm2(rows, cols, lmm_kb, spm_kb, bits, node_nm, clock_mhz=0.0) -> dict[str, np.ndarray]:
    """Area of the PE logic (synthesised for ``clock_mhz``), the LMMs and the SPM (arrays over points) [mm^2]."""
    args = [np.asarray(x) for x in (rows, cols, lmm_kb, spm_kb, bits, node_nm, clock_mhz)]
    shape = np.broadcast(*args).shape
    if any(a.shape != shape for a in args):  # (arrays over the same points, the usual call, need no broadcast)
        args = [np.broadcast_to(a, shape) for a in args]
    rows, cols, lmm_kb, spm_kb, bits, node, clock = args
    pes = rows.astype(float) * cols
    if len(shape) == 1 and bits.size and _one_value(bits) and _one_value(node):  # one data type at one node (one
        # design point, a study at a fixed node and type): every point at once, no selection
        b, nd = bits.flat[0], int(node.flat[0])
        logic = pes * tech.pe_logic_area_mm2(dtype_name(b), nd) * tech.logic_area_factor(clock, nd)
        lmm = pes * tech.sram_area_mm2(lmm_kb.astype(float), nd)
        spm = np.asarray(tech.sram_area_mm2(spm_kb.astype(float), nd), dtype=float)
        return {"pe_logic_area_mm2": logic, "lmm_area_mm2": lmm, "spm_area_mm2": spm, "area_mm2": logic + lmm + spm}
    # several nodes or data types (a random batch): each node's expressions over every point, each point's picked
    # (:func:`by_node`; elementwise, so the values computed over the points of its node and type alone)
    masks, is16 = tech.node_masks(node), bits == 16
    logic = by_node(masks, lambda nd: pes * by_dtype(is16, lambda dt: tech.pe_logic_area_mm2(dt, nd))
                    * tech.logic_area_factor(clock, nd), shape)
    lmm = by_node(masks, lambda nd: pes * tech.sram_area_mm2(lmm_kb.astype(float), nd), shape)
    spm = by_node(masks, lambda nd: np.asarray(tech.sram_area_mm2(spm_kb.astype(float), nd), dtype=float), shape)
    return {"pe_logic_area_mm2": logic, "lmm_area_mm2": lmm, "spm_area_mm2": spm, "area_mm2": logic + lmm + spm}


def by_node(masks: list[tuple[int, np.ndarray]], fn, shape) -> np.ndarray:
    """``fn(node)`` (an elementwise expression over every point) of each point's node: ``masks`` are
    :func:`tech.node_masks` of the points' nodes (covering every point); the expression is evaluated over every
    point once per node and each point takes its node's (one ``np.where`` per further node), instead of selecting
    each node's points and scattering the values back (the same values: elementwise). A new float array."""
    if not masks:
        return np.empty(shape)
    (nd0, _), *rest = masks
    out = np.array(np.broadcast_to(fn(nd0), shape), dtype=float)
    for nd, sel in rest:
        out = np.where(sel.reshape(shape), fn(nd), out)
    return out


def by_dtype(is16: np.ndarray, fn) -> np.ndarray | float:
    """``fn(dtype name)`` (a number) of each point's data type (``is16``: its ``dtype_bits`` is 16, else fp32, as
    :func:`dtype_name` names it): a number where every point has one type, else an array; ``fn`` is asked only for
    the types some point has."""
    if not is16.size:
        return 0.0
    if is16.all():
        return fn("int16")
    if not is16.any():
        return fn("fp32")
    return np.where(is16, fn("int16"), fn("fp32"))


def _one_value(a: np.ndarray) -> bool:
    """Whether every element of ``a`` (not empty) equals the first."""
    return a.size == 1 or bool((a == a.flat[0]).all())

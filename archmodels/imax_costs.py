"""IMAX constants and pure cost formulas (spec `imax.md`); every fitted number lives here.

Structure (published, spec §1-§4)
---------------------------------
* A linear array of ``units`` stages; 4 of them run loop control and the
  C accumulate/store at the bottom, so 60 of 64 are usable (§4).
* MAC units of the three mappings (§3-§4): dense uses every usable unit;
  IVJ loses the first 2 usable units to loads (58 of 60); IVS groups units
  in sets of 2 offset units + ``cols x ports x 2`` = 16 MAC units (48 of 60).
* Each unit: 2-way SIMD FP32 FMA, ``cols`` logical columns multithreaded,
  so one row iteration takes ``cols`` cycles and does ``cols x 2`` MACs per
  unit; a unit's latency is 2 cycles per thread (8 with 4, §1).

Host control (not published, §7: "calibrate ... keep them as named constants")
--------------------------------------------------------------------------------
CONF, REGV and RANGE are PIO writes by the host across the board link, one
64-bit word at a time; a DMA transfer needs a descriptor written the same
way. The word counts below are structural assumptions (per logical PE:
4 instruction words, 4 registers, an LMM range of start + length); the time
of one PIO word is the one constant fitted to the published figures (see
``PIO_WORD_S``).
"""

from __future__ import annotations

import numpy as np

from . import tech

# ---- structure (spec imax.md §1-§4) ----
RESERVED_UNITS = 4  # 64 stages, 60 usable (§4)
IVJ_LOAD_ONLY_UNITS = 2  # IVJ: the first 2 usable units only load (§4: 58 of 60 do MACs)
IVS_OFFSET_UNITS = 2  # IVS: 2 units of each set compute B offsets (§4)
LMM_PORTS = 2  # LMM accesses per unit per cycle (two address generators, §4 "ports")
SIMD = 2  # FP32 lanes per unit (§1)
VALUE_BYTES = 4  # FP32
INDEX_BYTES = 4  # 32-bit column index (IVS: separate word; IVJ: joined into 64 bits)
UNIT_LATENCY_PER_THREAD = 2  # cycles; 8 with 4 threads (§1)
MAPPINGS = ("dense", "ivj", "ivs")

# ---- host control: structural word counts (assumption, documented in docs/models/imax.md) ----
CONF_WORDS_PER_PE = 4  # instruction words of one logical PE (once per product: the mapping is reused)
REGV_WORDS_PER_PE = 4  # registers initialised per logical PE, every start
RANGE_WORDS_PER_PE = 2  # LMM address range (start, length) per logical PE, every start
PAUSE_WORDS = 2  # A-group control variable + base offset, between the blocks of a group (§5)
DMA_DESC_WORDS = 4  # source, destination, length, kick of one DMA transfer

# ---- the fitted constant ----
#: Time of one PIO word over the host link [s]. Fitted once on the IMAX
#: calibration cases (dse/data/calibration.yaml, section imax): the published
#: "no speedup at 128 and below" (speedup_vs_dense <= 1.05 at 128 and 64,
#: sparsity 0.95) needs per-start host overhead to dominate small products;
#: the smallest 0.05 us step meeting it with the rounding margin, 0.2 us,
#: leaves 1024 x 1024 at sparsity 0.95 at 4.0 (published 4.6, read off a
#: plot, tolerance 30 %). The scan is in docs/models/imax.md. 0.2 us = 30
#: IMAX cycles at 150 MHz: one non-posted 64-bit write across the AXI + GTH
#: board link.
PIO_WORD_S = 2.0e-7


def usable_units(units):
    """Units left for the computation after loop control and the output stages."""
    return np.asarray(units) - RESERVED_UNITS


def ivs_offsets_per_set(cols):
    """B offsets one IVS set computes: cols x ports x 2 (two 32-bit indices per word), §4."""
    return np.asarray(cols) * LMM_PORTS * 2


def mac_units(units, cols, mapping):
    """MAC units in the chain (H) of a mapping; 0 when the array is too small for it."""
    use = usable_units(units)
    if mapping == "dense":
        out = use
    elif mapping == "ivj":
        out = use - IVJ_LOAD_ONLY_UNITS
    elif mapping == "ivs":
        per = ivs_offsets_per_set(cols)
        out = (use // (IVS_OFFSET_UNITS + per)) * per
    else:
        raise ValueError(f"unknown mapping {mapping}; allowed: {', '.join(MAPPINGS)}")
    return np.maximum(out, 0)


def fill_cycles(units, cols):
    """Pipeline fill of one block pass: every unit's latency (2 cycles per thread), §1."""
    return np.asarray(units) * UNIT_LATENCY_PER_THREAD * np.asarray(cols)


def conf_words(units, cols):
    return np.asarray(units) * np.asarray(cols) * CONF_WORDS_PER_PE


def regv_words(units, cols):
    return np.asarray(units) * np.asarray(cols) * REGV_WORDS_PER_PE


def range_words(units, cols):
    return np.asarray(units) * np.asarray(cols) * RANGE_WORDS_PER_PE


def area_mm2(units, lmm_kb, nchip, node_nm: int):
    """Chip area x chips: per unit 2 FP32 FMAs x the fitted PE overhead + its LMM.

    ``tech.PE_LOGIC_OVERHEAD`` is fitted on this very die (13.3 mm^2, 64 units
    x 64 KB at 28 nm, spec §2), so the default configuration is 13.3 mm^2.
    """
    per_unit = tech.pe_logic_area_mm2("fp32", node_nm, SIMD) + tech.sram_area_mm2(lmm_kb, node_nm)
    return np.asarray(nchip) * np.asarray(units) * per_unit


def energy_pj(issued_macs, lmm_bytes, lmm_kb, dram_bytes, node_nm: int):
    """FMAs issued (padding included) + LMM bytes accessed + host-memory bytes [pJ].

    IMAX publishes no energy (§7): the technology table's 28 nm figures.
    """
    return (np.asarray(issued_macs) * tech.mac_energy_pj("fp32", node_nm)
            + np.asarray(lmm_bytes) * tech.sram_energy_pj_per_byte(lmm_kb, node_nm)
            + np.asarray(dram_bytes) * tech.DRAM_PJ_PER_BYTE)

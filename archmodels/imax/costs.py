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

Host control and the board link (not published, §7: "calibrate ... keep them as named constants")
---------------------------------------------------------------------------------------------------
Everything between the host and IMAX crosses the board link (§2: 3 GTH
lanes, 1.818 GB/s theoretical, the bottleneck): DMA data (LOAD, DRAIN) and
the host's PIO register writes (CONF, REGV, RANGE, DMA descriptors, the EXEC
kick). A PIO word is one 64-bit posted write, ``PIO_WORD_BYTES`` on the link
(its address and its data beat). The word counts below are structural
assumptions (per logical PE: 4 instruction words, 4 registers, an LMM range
of start + length). The one fitted constant is ``LINK_EFFICIENCY``, the
fraction of the theoretical link bandwidth the host achieves for DMA and
PIO alike (protocol framing, AXI bursts, synchronous DMA set-up and
completion).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import tech

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
#: registers a start rewrites when only the B group changed since the previous start (same A group): the B
#: slab and the C group land in the same LMM regions, so the PEs' registers keep their values and only the
#: B and C group base offsets are written (issue 12: a full REGV per start was a schedule artifact)
B_GROUP_WORDS = 2
DMA_DESC_WORDS = 4  # source, destination, length, kick of one DMA transfer
PIO_WORD_BYTES = 16  # one 64-bit register write on the link: address beat + data beat

# ---- the fitted constant ----
#: Fraction of the theoretical link bandwidth (``link_gbps``, 1.818 GB/s on
#: the prototype) that DMA transfers and PIO writes achieve. Fitted by the
#: one procedure of ``archmodels/fitted.py``: the least relative error on
#: its one target, the speedup 4.6 of 1024 x 1024 at sparsity 0.95 (read
#: off a plot). The earlier rule ("the largest value that passes", 0.6,
#: +28 % inside the 30 % tolerance) is gone; refitted (0.165 -> 0.11) when
#: REGV stopped being re-sent in full at every start of an A group (issue
#: 12). 0.11 x 1.818 GB/s = 0.20 GB/s effective -- far below the link's
#: rate, which says the host-side cost per byte and per PIO word is much
#: larger than the wire time (synchronous DMA set-up and completion, driver
#: calls); one PIO word then takes 80 ns (12 IMAX cycles at 150 MHz). The
#: scan is in docs/validation/imax.md.
LINK_EFFICIENCY = 0.11


def link_bytes_per_s(link_gbps, efficiency: float | None = None):
    """Effective host-link bandwidth [B/s] for DMA data and PIO writes."""
    eff = LINK_EFFICIENCY if efficiency is None else efficiency
    return np.asarray(link_gbps, dtype=float) * 1e9 * eff


def _num(x):
    """``x`` as numpy would take it, a Python int kept as is (one configuration costs no numpy call)."""
    return x if type(x) is int else np.asarray(x)


def usable_units(units):
    """Units left for the computation after loop control and the output stages."""
    return _num(units) - RESERVED_UNITS


def ivs_offsets_per_set(cols):
    """B offsets one IVS set computes: cols x ports x 2 (two 32-bit indices per word), §4."""
    return _num(cols) * LMM_PORTS * 2


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
    return max(out, 0) if type(out) is int else np.maximum(out, 0)


#: :func:`mapping_table` is built for grids of at most this many (mapping, units, cols) entries
MAPPING_TABLE_MAX = 1 << 18


@lru_cache(maxsize=8)
def mapping_table(units_top: int, cols_top: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(:func:`mac_units`, :func:`a_unit_row_bytes`, :func:`simd_bgrp_limited`) of every (mapping, units, cols)
    with ``units < units_top`` and ``cols < cols_top`` as int64, int64 and bool arrays indexed by
    ``(code x units_top + units) x cols_top + cols`` (code: the mapping's index in :data:`MAPPINGS`): the formulas
    evaluated once over the grid, so that a batch's configurations read theirs by one gather each instead of
    three masks per mapping (read-only: shared by every call)."""
    units, cols = (a.ravel() for a in np.meshgrid(np.arange(units_top, dtype=np.int64),
                                                  np.arange(cols_top, dtype=np.int64), indexing="ij"))
    H = np.concatenate([np.broadcast_to(mac_units(units, cols, name), units.shape) for name in MAPPINGS])
    urb = np.concatenate([np.broadcast_to(np.asarray(a_unit_row_bytes(name, cols), dtype=np.int64), units.shape)
                          for name in MAPPINGS])
    simd = np.repeat(np.array([simd_bgrp_limited(name) for name in MAPPINGS]), len(units))
    out = (np.ascontiguousarray(H, dtype=np.int64), np.ascontiguousarray(urb), simd)
    for a in out:
        a.flags.writeable = False
    return out


def chain_stages(units, cols, mapping):
    """Pipeline stages one block pass flows through: the units the mapping uses + the C stage.

    Dense: the H MAC units + the accumulate/store stage, the spec's "start
    latency (H+1 cycles)" of §3 counted in stages. IVJ adds its 2 load-only
    units, IVS the 2 offset units of every set (§4).
    """
    H = mac_units(units, cols, mapping)
    if mapping == "dense":
        extra = 0
    elif mapping == "ivj":
        extra = IVJ_LOAD_ONLY_UNITS
    else:
        extra = (H // ivs_offsets_per_set(cols)) * IVS_OFFSET_UNITS
    if type(H) is int and type(extra) is int:  # one configuration in Python integers: no numpy call
        return H + extra + 1 if H > 0 else 0
    return np.where(H > 0, H + extra + 1, 0)


def fill_cycles(units, cols, mapping):
    """Pipeline fill of one block pass: every stage's latency, 2 cycles per thread (8 with 4, §1).

    A start, and every pause between the blocks of an A group, restarts the
    chain, so each block pass pays it once.
    """
    stages = chain_stages(units, cols, mapping)
    if type(stages) is int and type(cols) is int:  # one configuration: Python integers (the same product)
        return stages * UNIT_LATENCY_PER_THREAD * cols
    return stages * UNIT_LATENCY_PER_THREAD * np.asarray(cols)


def a_unit_row_bytes(mapping, cols):
    """A bytes one stored row of one block puts in the fullest unit's A half (constraint 4.4.2).

    Dense: a 4-byte value per unit (no index). IVJ: the 64-bit value + index
    word of the unit's slot (the printed 4.4.2, ``2 x 4``). IVS: the set's
    first offset unit loads the indices of all the set's slots, ``cols x
    ports x 2`` 32-bit words per row (§4: 16 with 4 columns), so it holds
    64 bytes per row and block while a MAC unit holds only its 4-byte value.
    """
    if mapping == "dense":
        return VALUE_BYTES
    if mapping == "ivj":
        return VALUE_BYTES + INDEX_BYTES
    if mapping == "ivs":
        per = ivs_offsets_per_set(cols) * INDEX_BYTES
        return int(per) if np.ndim(per) == 0 else per
    raise ValueError(f"unknown mapping {mapping}; allowed: {', '.join(MAPPINGS)}")


def simd_bgrp_limited(mapping) -> bool:
    """Whether constraint 4.4.9 (BGRP <= W x 2) binds the mapping's starts.

    Sparse starts (IVJ, IVS) run their 2-deep loop over the blocks of the A
    group and the stored rows, so a start covers one SIMD execution width of
    B columns, W x 2 (§5, 4.4.9 as its text explains it). The dense mapping
    of §3 loops over rows and over the B columns held ("the last stage emits
    W partial sums per cycle ... repeating M/H times completes a row of C"):
    B columns are iterated inside the start by LOOP0, and only the LMM
    bounds 4.4.4-4.4.7 and 4.4.10 limit BGRP.
    """
    return mapping != "dense"


def conf_words(units, cols):
    return _num(units) * _num(cols) * CONF_WORDS_PER_PE


def regv_words(units, cols):
    return _num(units) * _num(cols) * REGV_WORDS_PER_PE


def range_words(units, cols):
    return _num(units) * _num(cols) * RANGE_WORDS_PER_PE


def logic_area_mm2(units, nchip, node_nm: int, clock_mhz=0.0, area_factor=None):
    """Logic of all units: 2 FP32 FMAs x the fitted PE overhead each, synthesised for ``clock_mhz``
    (``area_factor``: its ``tech.logic_area_factor`` when the caller has it, e.g. from ``tech.clock_costs``)."""
    factor = tech.logic_area_factor(clock_mhz, node_nm) if area_factor is None else area_factor
    return _num(nchip) * _num(units) * tech.pe_logic_area_mm2("fp32", node_nm, SIMD) * factor


def area_mm2(units, lmm_kb, nchip, node_nm: int, clock_mhz=0.0):
    """Chip area x chips: per unit 2 FP32 FMAs x the fitted PE overhead + its LMM.

    ``tech.PE_LOGIC_OVERHEAD`` is fitted on this very die (13.3 mm^2, 64 units
    x 64 KB at 28 nm, spec §2), so the default configuration is 13.3 mm^2
    (by construction: the die is the family's area anchor, not a prediction).
    """
    logic, lmm = area_parts_mm2(units, lmm_kb, nchip, node_nm, clock_mhz)
    return logic + lmm


def area_parts_mm2(units, lmm_kb, nchip, node_nm: int, clock_mhz=0.0, area_factor=None):
    """The two terms of :func:`area_mm2`: (logic of all units, their LMMs) [mm^2] (the totals need both)."""
    lmm = _num(nchip) * _num(units) * tech.sram_area_mm2(lmm_kb, node_nm)
    return logic_area_mm2(units, nchip, node_nm, clock_mhz, area_factor), lmm


def energy_terms_pj(issued_macs, lmm_bytes, lmm_kb, node_nm: int):
    """The two terms of :func:`energy_pj` at nominal supply [pJ]: (FMAs issued, padding included; LMM bytes
    accessed)."""
    return (np.asarray(issued_macs) * tech.mac_energy_pj("fp32", node_nm),
            np.asarray(lmm_bytes) * tech.sram_energy_pj_per_byte(lmm_kb, node_nm))


def energy_pj(issued_macs, lmm_bytes, lmm_kb, node_nm: int, vscale=1.0):
    """On-chip dynamic energy: FMAs issued (padding included) + LMM bytes accessed [pJ], x (V / V_nom)^2.

    IMAX publishes no energy (§7): the technology table's figures. Host-memory
    bytes are charged by the caller (:func:`archmodels.tech.dram_energy_j`).
    """
    return on_chip_pj(*energy_terms_pj(issued_macs, lmm_bytes, lmm_kb, node_nm), vscale)


def on_chip_pj(fma_pj, lmm_pj, vscale):
    """:func:`energy_pj` of its two terms (:func:`energy_terms_pj`) at the clock's supply [pJ]."""
    return (fma_pj + lmm_pj) * vscale

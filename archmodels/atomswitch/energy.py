"""Energy of an atom-switch stage from its activity, with the technology table (`tech.py`).

The spec publishes no energy figure, so every operation is charged at the
table's node ``DEVICE_NODE_NM``: multiplier firings as MACs, adder-tree and
partial-sum additions, pooling and ReLU comparisons as additions, memory
words (buffers, line memories, delay lines, weight memories) as SRAM
accesses sized by the bank they hit, and DRAM bytes (technology-table row
``dram``). The via-switch crossbar itself is not charged (no published
figure; atom switches hold their state without SRAM, spec §1). Leakage is
the model's static power (:func:`static_power_w`). The clock is not charged:
the voltage-frequency rules of the table are for standard-cell logic, and
the paper's via-switch fabric gives no figure for how its tiles scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import tech
from ..layerarrays import groups

#: Technology node charged for energy and used for the default memory-cell area.
#: The spec gives no node for the via-switch array; we take 28 nm, the larger
#: of the table's two nodes (a stated assumption, not a published figure).
DEVICE_NODE_NM = 28


@dataclass(frozen=True)
class EnergyRates:
    """Energies per operation and per byte of the design points (technology table): Python numbers on the
    one-point path, else arrays over points (numbers when the points share a width / a DRAM row)."""

    nbytes: np.ndarray | float  # bytes per value
    mac_pj: np.ndarray | float  # one multiplier firing (multiply + accumulate)
    add_pj: np.ndarray | float  # one addition or comparison
    read_pj: np.ndarray | float  # one DRAM byte read
    write_pj: np.ndarray | float  # one DRAM byte written


def energy_rates(value_bits: np.ndarray, dram: np.ndarray, node_nm: int = DEVICE_NODE_NM) -> EnergyRates:
    """The :class:`EnergyRates` of the points (arrays over points of the value width and the DRAM row's name)."""
    if len(value_bits) == 1:  # one point: Python numbers
        return _point_rates(value_bits.item(0), dram[0], node_nm)
    return EnergyRates(value_bits / 8.0, *_op_pj(value_bits, node_nm), *tech.dram_pj_per_byte(dram))


@lru_cache(maxsize=64)
def _point_rates(bits: int, dram: str, node_nm: int) -> EnergyRates:
    """:func:`energy_rates` of one point (Python numbers), once per (width, DRAM row, node)."""
    return EnergyRates(bits / 8.0, *_op_pj_of(int(bits), node_nm), *_dram_pj(dram))


def sram_pj_per_byte(bank_words, nbytes, node_nm: int = DEVICE_NODE_NM):
    """Energy per byte of an access to SRAM banks of ``bank_words`` words each [pJ/B]: every bank in one call
    (arrays), or one bank (Python floats)."""
    return tech.sram_energy_pj_per_byte(bank_words * nbytes / 1024.0, node_nm)


#: :func:`sram_pj_per_byte` of one point's accesses, per (bank words, bytes per value): a bank is a layer's size
#: (or, for a folded convolution's coefficients, passes x kernel), so banks recur from point to point
_SRAM_PJ: dict[tuple[float, float], float] = {}
_SRAM_PJ_MAX = 4096  # entries kept at most (then emptied)


def point_sram_pj(bank_words: list, nbytes: float) -> list[float]:
    """:func:`sram_pj_per_byte` of each bank of ``bank_words`` (Python numbers, one point's accesses) on Python
    floats, remembered per (bank, ``nbytes``) (bounded: a dict lookup, where one numpy call over all of them
    cost ~6 us)."""
    memo, out = _SRAM_PJ, []
    for bank in bank_words:
        pj = memo.get((bank, nbytes))
        if pj is None:
            if len(memo) >= _SRAM_PJ_MAX:
                memo.clear()
            pj = memo[(bank, nbytes)] = sram_pj_per_byte(float(bank), nbytes)
        out.append(pj)
    return out


def stage_energy_j(mac_ops, add_ops, compare_ops, sram_words, sram_pj, dram_read_bytes, dram_write_bytes,
                   r: EnergyRates) -> tuple:
    """(energy, compute, SRAM, DRAM energy) of a stage [J] from its activity: Python floats (one stage of one
    point) or arrays over (stages x points). ``sram_words`` / ``sram_pj``: the stage's SRAM accesses, slot by
    slot (words and :func:`sram_pj_per_byte`), summed in that order. The energy sums compute, then each SRAM
    slot, then DRAM; the parts are the same terms summed apart (they add up to it to rounding)."""
    e = mac_ops * r.mac_pj
    e = e + (add_ops + compare_ops) * r.add_pj
    compute_pj = e
    sram = 0.0
    for words, pj in zip(sram_words, sram_pj):
        term = words * r.nbytes * pj
        e = e + term
        sram = sram + term
    dram_j = (dram_read_bytes * r.read_pj + dram_write_bytes * r.write_pj) * 1e-12
    return e * 1e-12 + dram_j, compute_pj * 1e-12, sram * 1e-12, dram_j


def stages_energy_j(mac_ops: np.ndarray, add_ops: np.ndarray, compare_ops: np.ndarray, sram_words: np.ndarray,
                    sram_bank_words: np.ndarray, dram_read_bytes: np.ndarray, dram_write_bytes: np.ndarray,
                    value_bits: np.ndarray, dram: np.ndarray, node_nm: int = DEVICE_NODE_NM) -> tuple:
    """(energy, compute, SRAM, DRAM energy) of each stage per design point [J] (:func:`stage_energy_j`), arrays
    over (stages x points).

    ``sram_words`` / ``sram_bank_words``: per SRAM slot, (stages x points) accesses of so many words to banks of
    so many words, summed slot by slot in each stage's own order (a stage with fewer accesses adds exact zeros
    after its last).
    """
    r = energy_rates(value_bits, dram, node_nm)
    sram_pj = (sram_pj_per_byte(bank, r.nbytes, node_nm) for bank in sram_bank_words)  # slot by slot, as summed
    return stage_energy_j(mac_ops, add_ops, compare_ops, sram_words, sram_pj, dram_read_bytes, dram_write_bytes, r)


def _op_pj(value_bits: np.ndarray, node_nm: int) -> tuple[np.ndarray | float, np.ndarray | float]:
    """(MAC, add) energy [pJ] per point of ``value_bits``-wide operands: one number when the points share one width
    (one point, a study with a fixed width), else arrays over points."""
    widths = [int(b) for b in tech.distinct(value_bits)]
    if len(widths) == 1:
        return _op_pj_of(widths[0], node_nm)
    table = np.zeros((2, max(widths) + 1))  # per width: its energies, picked per point by indexing
    for b in widths:
        table[:, b] = _op_pj_of(b, node_nm)
    return table[0][value_bits], table[1][value_bits]


@lru_cache(maxsize=None)
def _op_pj_of(bits: int, node_nm: int) -> tuple[float, float]:
    """(MAC, add) energy [pJ] of ``bits``-wide operands (technology table), once per width and node."""
    dtype = tech.dtype_of(bits)
    return float(tech.mac_energy_pj(dtype, node_nm)), float(tech.op_energy_pj("add", dtype, node_nm))


@lru_cache(maxsize=None)
def _dram_pj(name: str) -> tuple[float, float]:
    """(read, write) energy per byte [pJ/B] of DRAM row ``name`` (technology table)."""
    read, write = tech.dram_pj_per_byte(name)
    return float(read), float(write)


def static_power_w(multipliers, memory_words, value_bits, node_nm: int = DEVICE_NODE_NM):
    """Leakage of the multipliers in use and of the memory words (SRAM) [W].

    The via-switch crossbar is nonvolatile and does not leak (spec §1); a
    tile's CMOS multiplier leaks as a bare multiply-add of the value width
    (technology table), not as the whole 5,319 um^2 tile. One point: Python
    floats and an int width in, a Python float out (the same operations).
    """
    if type(multipliers) is float:  # one point
        return float(_leakage_w(multipliers, memory_words, int(value_bits), node_nm))
    bits = np.asarray(value_bits)
    shape = np.broadcast(multipliers, memory_words, bits).shape
    widths = tech.distinct(bits)
    if len(widths) == 1 and np.shape(multipliers) == np.shape(memory_words) == shape:  # one width (one point)
        return _leakage_w(np.asarray(multipliers, dtype=float), np.asarray(memory_words, dtype=float),
                          int(widths[0]), node_nm)
    out = np.zeros(shape)
    for (b,), sel in groups(bits):
        out[sel] = _leakage_w(np.asarray(multipliers, dtype=float)[sel], np.asarray(memory_words, dtype=float)[sel],
                              int(b), node_nm)
    return out


def _leakage_w(multipliers, memory_words, bits: int, node_nm: int):
    """:func:`static_power_w` of one width: the multipliers' logic and the words' SRAM (technology table); float
    arrays or Python floats."""
    return tech.static_power_w(multipliers * _mac_area_mm2(bits, node_nm), memory_words * bits / 8.0 / 1024.0,
                               node_nm)


@lru_cache(maxsize=None)
def _mac_area_mm2(bits: int, node_nm: int) -> float:
    """Area of one ``bits``-wide multiply-add (technology table), once per width and node."""
    return tech.mac_area_mm2(tech.dtype_of(bits), node_nm)

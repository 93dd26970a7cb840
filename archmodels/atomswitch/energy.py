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

import numpy as np

from .. import tech
from ..layerarrays import groups, stack_rows
from .layers import StageCost

#: Technology node charged for energy and used for the default memory-cell area.
#: The spec gives no node for the via-switch array; we take 28 nm, the larger
#: of the table's two nodes (a stated assumption, not a published figure).
DEVICE_NODE_NM = 28


def stages_energy_j(costs: list[StageCost], rows: list[int], value_bits: np.ndarray, dram: np.ndarray,
                    node_nm: int = DEVICE_NODE_NM) -> np.ndarray:
    """Energy of each stage per design point [J], arrays over (stages x points).

    ``costs`` are stage groups of ``rows`` stages each, stacked in that order. The SRAM accesses
    are summed slot by slot in each stage's own order (a group with fewer accesses adds exact
    zeros after its last).
    """
    n = len(value_bits)

    def stack(values) -> np.ndarray:
        return stack_rows(list(values), rows, n, dtype=float)

    mac, adds, compares = stack(c.mac_ops for c in costs), stack(c.add_ops for c in costs), \
        stack(c.compare_ops for c in costs)
    slots = [(stack(c.sram[k].words if k < len(c.sram) else 0.0 for c in costs),
              stack(c.sram[k].bank_words if k < len(c.sram) else 0.0 for c in costs))
             for k in range(max(len(c.sram) for c in costs))]
    nodes = np.full(n, node_nm)
    nbytes = np.asarray(value_bits) / 8.0
    e = mac * tech.per_point(lambda b, nd: tech.mac_energy_pj(tech.dtype_of(b), nd), value_bits, nodes)
    e = e + (adds + compares) * tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd),
                                               value_bits, nodes)
    for words, bank_words in slots:
        bank_kb = bank_words * nbytes / 1024.0
        e = e + words * nbytes * tech.sram_energy_pj_per_byte(bank_kb, node_nm)
    return e * 1e-12 + tech.dram_energy_j(stack(c.dram_read_bytes for c in costs),
                                            stack(c.dram_write_bytes for c in costs), dram)


def static_power_w(multipliers, memory_words, value_bits, node_nm: int = DEVICE_NODE_NM):
    """Leakage of the multipliers in use and of the memory words (SRAM) [W].

    The via-switch crossbar is nonvolatile and does not leak (spec §1); a
    tile's CMOS multiplier leaks as a bare multiply-add of the value width
    (technology table), not as the whole 5,319 um^2 tile.
    """
    bits = np.asarray(value_bits)
    out = np.zeros(np.broadcast(multipliers, memory_words, bits).shape)
    for (b,), sel in groups(bits):
        logic = np.asarray(multipliers, dtype=float)[sel] * tech.mac_area_mm2(tech.dtype_of(int(b)), node_nm)
        kb = np.asarray(memory_words, dtype=float)[sel] * int(b) / 8.0 / 1024.0
        out[sel] = tech.static_power_w(logic, kb, node_nm)
    return out

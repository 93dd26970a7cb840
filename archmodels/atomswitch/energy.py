"""Energy of an atom-switch stage from its activity, with the technology table (`tech.py`).

The spec publishes no energy figure, so every operation is charged at the
table's node ``DEVICE_NODE_NM``: multiplier firings as MACs, adder-tree and
partial-sum additions, pooling and ReLU comparisons as additions, memory
words (buffers, line memories, delay lines, weight memories) as SRAM
accesses sized by the bank they hit, and DRAM bytes. The via-switch
crossbar itself is not charged (no published figure; atom switches hold
their state without SRAM, spec §1). Leakage is not modelled (tech table).
"""

from __future__ import annotations

import numpy as np

from .. import tech
from .layers import StageCost

#: Technology node charged for energy and used for the default memory-cell area.
#: The spec gives no node for the via-switch array; we take 28 nm, the larger
#: of the table's two nodes (a stated assumption, not a published figure).
DEVICE_NODE_NM = 28


def stage_energy_j(cost: StageCost, value_bits: np.ndarray, node_nm: int = DEVICE_NODE_NM) -> np.ndarray:
    """Energy of one stage per design point [J]."""
    n = len(value_bits)
    out = np.zeros(n)
    for bits in np.unique(value_bits):
        sel = value_bits == bits
        dt = tech.dtype_of(int(bits))
        nbytes = int(bits) / 8.0
        e = _at(cost.mac_ops, sel, n) * tech.mac_energy_pj(dt, node_nm)
        e = e + (_at(cost.add_ops, sel, n) + _at(cost.compare_ops, sel, n)) * tech.op_energy_pj("add", dt, node_nm)
        for acc in cost.sram:
            bank_kb = _at(acc.bank_words, sel, n) * nbytes / 1024.0
            e = e + _at(acc.words, sel, n) * nbytes * tech.sram_energy_pj_per_byte(bank_kb, node_nm)
        e = e + (_at(cost.dram_read_bytes, sel, n) + _at(cost.dram_write_bytes, sel, n)) * tech.DRAM_PJ_PER_BYTE
        out[sel] = e
    return out * 1e-12


def _at(x, sel: np.ndarray, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, dtype=float), (n,))[sel]

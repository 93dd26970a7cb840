"""ReNA hardware cost: FPGA resources (DSP, BRAM, logic) and ASIC area.

Every function is vectorised over design points, and takes one point's Python numbers too (then gives
Python numbers, the same values: :mod:`archmodels.num`). The FPGA constants are
fitted once on the resource table of spec ``rena.md`` §4 (64 x 64 PBs, 8 bit,
Stratix 10 SX):

=================  ============  =======  ===============
design             BRAM [Mb]     DSP      logic [ALM]
=================  ============  =======  ===============
FPGA ReNA          9.99 (4 %)    4,096    303,615 (33 %)
FPGA ReNA 2-mult   9.92 (4 %)    4,096    319,426 (34 %)
=================  ============  =======  ===============

* **DSP**: one DSP block per PB, holding up to two multipliers of <= 18 x 19
  bits (§3, device data): ``PBs x ceil(mults / mults_per_dsp)``. Not fitted:
  4,096 for both designs follows.
* **Logic** is in ALMs: 303,615 is 32.5 % of the SX 2800's 933,120 ALMs
  (the table's "33 %"), 10.9 % of its 2,753 K LEs. Per PB ``ALM_PER_PB`` =
  303,615 / 4,096 = 74.1 (the PB's I/O control module, registers and
  accumulator; everything outside the array -- controller, transfer part,
  buffer addressing -- is folded into this share because the paper
  publishes no design of another size to separate them: an assumption that
  makes very small arrays look cheap). A second multiplier adds
  ``ALM_PER_EXTRA_MULT`` = (319,426 - 303,615) / 4,096 = 3.86 ALMs per PB
  (fitted on the 2-mult row). Wider values scale the PB datapath: x bits/8.
* **BRAM**: the stream buffers (input, weight, output, instruction) are one
  lane per array row and hold a fixed number of array loads, so their size
  is proportional to the PB count: ``BRAM_BITS_PER_PB`` = 9.99 Mbit / 4,096
  = 2,557 bits (fitted on the 1-mult row); x bits/8. The 2-mult design's
  9.92 Mb is then predicted as 9.99 (+0.7 %).

ASIC area comes from the technology table (:mod:`archmodels.tech`): a PB is
one MAC x the PE logic overhead (plus a bare MAC for a second multiplier),
and the three SRAMs (input, weight,
instructions, §1) hold the same buffer capacity as the FPGA port's.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import tech
from ..clock import logic_area_factor
from .fpga_devices import MBIT, FpgaDevice
from ..num import ceil

PUBLISHED_PBS = 64 * 64
PUBLISHED_ALM_1MULT = 303_615  # spec §4, FPGA ReNA
PUBLISHED_ALM_2MULT = 319_426  # spec §4, FPGA ReNA 2-mult
PUBLISHED_BRAM_MBIT_1MULT = 9.99  # spec §4, FPGA ReNA

ALM_PER_PB = PUBLISHED_ALM_1MULT / PUBLISHED_PBS
ALM_PER_EXTRA_MULT = (PUBLISHED_ALM_2MULT - PUBLISHED_ALM_1MULT) / PUBLISHED_PBS
BRAM_BITS_PER_PB = PUBLISHED_BRAM_MBIT_1MULT * MBIT / PUBLISHED_PBS
N_BUFFERS = 4  # input, weight, output, instruction


def dsp_blocks(pbs, mults, bits, device: FpgaDevice):
    """DSP blocks: one block per PB, each holding up to ``mults_per_dsp`` multipliers."""
    if type(pbs) is int:  # one point
        return pbs * ceil(mults / device.mults_per_dsp_at(bits))
    per_pb = np.ceil(np.asarray(mults) / device.mults_per_dsp_at(bits))
    return np.asarray(pbs) * per_pb


def logic_alms(pbs, mults, bits):
    """ALMs: per-PB logic plus the second multiplier's share, scaled by width."""
    if type(pbs) is int:  # one point
        return pbs * (ALM_PER_PB + (mults - 1) * ALM_PER_EXTRA_MULT) * (bits / 8.0)
    width = np.asarray(bits) / 8.0
    return np.asarray(pbs) * (ALM_PER_PB + (np.asarray(mults) - 1) * ALM_PER_EXTRA_MULT) * width


def buffer_bits(pbs, bits):
    """On-chip buffer capacity [bit] (BRAM on the FPGA, SRAM on the ASIC)."""
    if type(pbs) is int:  # one point
        return pbs * BRAM_BITS_PER_PB * (bits / 8.0)
    return np.asarray(pbs) * BRAM_BITS_PER_PB * (np.asarray(bits) / 8.0)


def bram_mbit(pbs, bits):
    """Block RAM [Mbit = 2^20 bit], the unit of the paper's table."""
    return buffer_bits(pbs, bits) / MBIT


def asic_area_mm2(pbs, mults, bits, node_nm: int, clock_mhz=0.0):
    """ASIC area [mm^2]: PBs (MACs x PE overhead, synthesised for ``clock_mhz``) + the buffer SRAMs."""
    parts = asic_area_parts_mm2(pbs, mults, bits, node_nm, clock_mhz)
    return parts["logic"] + parts["sram"]


@lru_cache(maxsize=64)
def _pe_mac_mm2(bits: int, node_nm: int) -> tuple[float, float]:
    """(PE logic, bare MAC) area [mm^2] of ``bits``-wide values at ``node_nm`` (technology table): the same
    Python floats every call, looked up once per width and node (issue 15: a study's trial asks once)."""
    dtype = tech.dtype_of(bits)
    return tech.pe_logic_area_mm2(dtype, node_nm, 1.0), tech.mac_area_mm2(dtype, node_nm)


def asic_area_parts_mm2(pbs, mults, bits, node_nm: int, clock_mhz=0.0) -> dict:
    """``logic`` and ``sram`` area of the ASIC [mm^2] (see :func:`asic_area_mm2`)."""
    pe_mm2, mac_mm2 = _pe_mac_mm2(int(bits), int(node_nm))
    # the second multiplier shares the PB's I/O control and registers (on the
    # FPGA it adds 5 % logic): a bare MAC, no PE overhead
    if type(pbs) is not int:
        pbs, mults = np.asarray(pbs), np.asarray(mults)
    pe = pe_mm2 + (mults - 1) * mac_mm2
    sram_kb = buffer_bits(pbs, bits) / 8.0 / 1024.0
    return {"logic": pbs * pe * logic_area_factor(clock_mhz, node_nm),
            "sram": tech.sram_area_mm2(sram_kb, node_nm)}

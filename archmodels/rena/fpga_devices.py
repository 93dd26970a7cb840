"""FPGA devices (and their boards) as data, for the resource checks of FPGA models.

A model that targets an FPGA derives its DSP blocks, block-RAM bits and
logic (ALMs) from its own per-unit costs and checks them against one of
these entries; adding a device is adding an entry here.

Sources
-------
[S10]  Intel Stratix 10 GX/SX device overview and product table: SX 2800
       (1SX280) -- 933,120 ALMs, 2,753 K LEs, 5,760 variable-precision DSP
       blocks, 11,721 M20K blocks (240,046,080 bits = 229 Mbit), 15 Mbit of
       MLAB, 244 Mbit of embedded memory in all; Intel 14 nm tri-gate.
       A DSP block implements two independent 18 x 19 multipliers, or one
       27 x 27 (spec ``rena.md`` §3). Quartus reports the same totals
       ("Total block memory bits ... / 240,046,080", "ALMs ... / 933,120").
[D5005] Intel FPGA PAC D5005: Stratix 10 SX 2800, 4 x 8 GB DDR4-2400
       (spec ``rena.md`` §3). A DDR4-2400 channel of 64 bits peaks at
       2400 MT/s x 8 B = 19.2 GB/s.
[A10]  Intel Arria 10 GX device overview: GX 1150 (10AX115) -- 427,200 ALMs,
       1,150 K LEs, 1,518 DSP blocks (two 18 x 19 multipliers each), 2,713
       M20K blocks (54,260 Kbit), 20 nm; Intel PAC with Arria 10 GX: 2 banks
       of DDR4-2400.

Static power and timing (assumptions, not published for ReNA)
--------------------------------------------------------------
``static_w``: device leakage at 85 C junction, the order Intel's Early Power
Estimator gives for a full device of this size (Stratix 10 SX 2800 ~ 9 W,
Arria 10 GX 1150 ~ 3.5 W); it does not depend on the design.
``small_design_mhz``: the clock a small design of the same RTL closes at on
the device (routing uncongested; Stratix 10 without HyperFlex retiming
~ 300 MHz, Arria 10 ~ 250 MHz). The clock falls as the device fills:
``fmax = small_design_mhz / (1 + FMAX_CONGESTION x u)`` with ``u`` the
largest resource share (DSP, M20K, ALM); ``FMAX_CONGESTION`` is fitted on
the one published point, ReNA 64 x 64 closing at 144 MHz on the SX 2800
(spec ``rena.md`` §4) -- see ``archmodels/fitted.py``.

Memory sizes are in Mbit = 2^20 bits, the unit Intel's tables and the ReNA
paper's resource table use (9.99 Mb of 244 Mb = "4 %").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MBIT = 2**20


@dataclass(frozen=True)
class FpgaDevice:
    """One FPGA device on its board: resource limits and external memory."""

    name: str
    part: str
    board: str
    node_nm: int
    alms: int
    les: int
    dsp_blocks: int
    mults_per_dsp: int  # independent multipliers per DSP block at <= dual_mult_bits
    dual_mult_bits: int  # widest operand for the dual-multiplier mode (18 x 19)
    m20k_bits: int
    mlab_bits: int
    dram_channels: int
    dram_gbps_per_channel: float
    static_w: float = 0.0
    small_design_mhz: float = 300.0

    @property
    def bram_mbit(self) -> float:
        """Block RAM (M20K) capacity [Mbit]; MLABs are left to logic."""
        return self.m20k_bits / MBIT

    def mults_per_dsp_at(self, bits):
        """Multipliers one DSP block holds for ``bits``-wide operands (array-friendly; an int for an int)."""
        if type(bits) is int:
            return self.mults_per_dsp if bits <= self.dual_mult_bits else 1
        return np.where(np.asarray(bits) <= self.dual_mult_bits, self.mults_per_dsp, 1)


DEVICES: dict[str, FpgaDevice] = {
    "stratix10-sx2800": FpgaDevice(
        name="stratix10-sx2800", part="1SX280 (Stratix 10 SX 2800)", board="Intel FPGA PAC D5005",
        node_nm=14, alms=933_120, les=2_753_000, dsp_blocks=5_760, mults_per_dsp=2, dual_mult_bits=18,
        m20k_bits=11_721 * 20_480, mlab_bits=15 * MBIT, dram_channels=4, dram_gbps_per_channel=19.2,
        static_w=9.0, small_design_mhz=300.0,
    ),
    "arria10-gx1150": FpgaDevice(
        name="arria10-gx1150", part="10AX115 (Arria 10 GX 1150)", board="Intel PAC with Arria 10 GX",
        node_nm=20, alms=427_200, les=1_150_000, dsp_blocks=1_518, mults_per_dsp=2, dual_mult_bits=18,
        m20k_bits=2_713 * 20_480, mlab_bits=12_950 * 1024, dram_channels=2, dram_gbps_per_channel=19.2,
        static_w=3.5, small_design_mhz=250.0,
    ),
}

DEFAULT_DEVICE = "stratix10-sx2800"  # a model offers DEVICES as the choices of its `device` parameter

#: how fast the achievable clock falls as the device fills (fitted, archmodels/fitted.py: the published
#: 144 MHz ReNA port at its DSP share 4096 / 5760)
FMAX_CONGESTION = 1.5234375


def fmax_mhz(device: FpgaDevice, utilization):
    """Clock a design closes at on ``device`` when its largest resource share is ``utilization`` (0..1) [MHz]
    (arrays, or a Python float for a Python float)."""
    if type(utilization) is float:
        return device.small_design_mhz / (1.0 + FMAX_CONGESTION * utilization)
    return device.small_design_mhz / (1.0 + FMAX_CONGESTION * np.asarray(utilization, dtype=float))


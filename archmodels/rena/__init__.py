"""ReNA, a 64x64 processing-block array, as an ASIC and as its Stratix 10 FPGA port (spec `rena.md`).

Modules, each with the spec section it implements:

* :mod:`.model` - :class:`RenaModel`: parameters, per-layer cycles, DRAM
  time, energy, area, fps and the FPGA resource checks (§1, §2, §4, §5).
* :mod:`.flows` - how conv, FC and pooling layers flow over the PB array
  (rows, columns, passes, control cycles) (§1, §2).
* :mod:`.dram` - DRAM channels and burst timing (§3, §5).
* :mod:`.resources` - DSP, ALM and BRAM per PB, fitted per PB on the
  published port (§3, §4).
* :mod:`.fpga_devices` - the FPGA devices' resource limits (§3).
* :mod:`archmodels.clock` (shared) - an ASIC clock's supply, energy and area factors for one point in Python numbers
  (the technology table's clock model).
* :mod:`archmodels.num` (shared) - numpy's elementwise functions on Python numbers: one point is costed by the same
  formulas in Python numbers (issue 15).

Documentation: ``docs/models/rena.md``; validation: ``docs/validation/rena.md``.
"""

from .model import RenaModel

__all__ = ["RenaModel"]

"""EMAXV and EMAXVR, CGRAs with a local memory (LMM) per PE (spec `emax.md`).

Modules, each with the spec section it implements:

* :mod:`.model` - :class:`EmaxvModel` and :class:`EmaxvrModel`: parameters,
  the per-layer plan choice by the ``criterion`` knob, totals (§2, §3, §4).
* :mod:`.mapper` - the instruction mapper: every legal placement of a layer
  on the PE array, ICpar/KHpar, LMM needs, rejected mappings with reasons
  (§1, §2, §3.1).
* :mod:`.traffic` - schedules: starts, SPM bands, fused pooling, DRAM/SPM/LMM
  traffic by data kind (§2, §3).
* :mod:`.timing` - per-state cycles (CONF, LMMI, LOAD, REGV, EXEC,
  PRE_POST_EXEC, DRAIN, PLOAD/PDRAIN) and the two fitted constants (§1, §3).
* :mod:`.cost` - DDR3L DRAM power, energy and area (§5, §6).
* :mod:`.fit` - the procedure that fitted the two timing constants.

Documentation: ``docs/models/emax.md``; validation: ``docs/validation/emax.md``.
"""

from .model import EmaxvModel, EmaxvrModel

__all__ = ["EmaxvModel", "EmaxvrModel"]

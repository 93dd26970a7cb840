"""The atom-switch (via-switch) streaming conv+pool array (spec `atom_switch.md`).

Modules, each with the spec section it implements:

* :mod:`.model` - :class:`AtomSwitchModel`: parameters, area against the
  chip budget, totals (§1, §4).
* :mod:`.layers` - how a network's layers map onto circuits, with folding
  (§2, §5).
* :mod:`.circuits` - sizes and latencies of the conv, pool and FC circuits,
  and a register-level reference simulator the tests run (§2, §4).
* :mod:`.energy` - stage energy from its activity and the technology table
  (no published figure, §5).

Documentation: ``docs/models/atomswitch.md``; validation: ``docs/validation/atomswitch.md``.
"""

from .model import AtomSwitchModel

__all__ = ["AtomSwitchModel"]

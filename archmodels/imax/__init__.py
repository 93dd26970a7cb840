"""IMAX, a linear-array CGRA for dense and sparse matrix products (spec `imax.md`).

Modules, each with the spec section it implements:

* :mod:`.model` - :class:`ImaxModel`: parameters, formats (CSR/JDS),
  schedules (IVJ/IVS), per-start states, multi-chip, totals (§1-§4, §6).
* :mod:`.schedule` - the LMM schedule: constraints 4.4.1-4.4.10 and the
  exhaustive AGRP/BGRP/CGRP search (§5).
* :mod:`.plans` - the same schedules for many configurations at once
  (dense A in closed form, sparse A per tiling), for batches (§3, §5).
* :mod:`.costs` - constants and pure cost formulas: MAC units per mapping,
  host-link bytes and PIO words, the one fitted ``LINK_EFFICIENCY``
  (§1-§4, §7).

Documentation: ``docs/models/imax.md``; validation: ``docs/validation/imax.md``.
"""

from .model import ImaxModel

__all__ = ["ImaxModel"]

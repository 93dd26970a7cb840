"""A multi-core shared-memory NN accelerator, DaDianNao-like (spec `multicore.md`).

Modules, each with the spec section it implements:

* :mod:`.model` - :class:`MulticoreModel`: cores, Ni/No, buffers, the
  placements B/T1/TR1/T2/TR2 and their shared-memory reads and writes per
  core (§2, §3), time, energy and area.

Documentation: ``docs/models/multicore.md``; validation: ``docs/validation/multicore.md``.
"""

from .model import MulticoreModel

__all__ = ["MulticoreModel"]

"""accel-dse: design-space exploration for accelerator architectures.

Python API::

    import dse
    r = dse.evaluate("multicore", "fc1", placement="TR2")   # the --json contract
    r["layers"][0]["shm_reads_per_core"]                       # 36
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def evaluate(arch: str, workload: str, **params: Any) -> dict[str, Any]:
    """Evaluate one design point; returns the ``dse evaluate --json`` dictionary."""
    from .evaluation import evaluate as _evaluate

    return _evaluate(arch, workload, **params)


__all__ = ["evaluate", "__version__"]

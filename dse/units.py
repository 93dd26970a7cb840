"""Human units for metrics in figures and tables (ms/µs, mJ, mW, MB, %).

A metric path's last component names its SI unit by suffix (``time_s``,
``energy_j``, ``power_w``, ``dram_bytes``, ``area_mm2``, ``utilization``);
:func:`scale_for` picks one prefix for a whole column or axis from the values
it shows, so that every number on an axis reads in the same unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

_SI = [(1e0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]
_BYTES = [(1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")]


@dataclass(frozen=True)
class Scale:
    """Divide values by ``factor`` to show them in ``unit``."""

    factor: float
    unit: str

    def __call__(self, value: float | None) -> float | None:
        return None if value is None else value / self.factor


def short_name(metric: str) -> str:
    """``total.time_s`` -> ``time_s``; ``layers.conv1.time_s`` -> ``conv1.time_s``."""
    return metric.removeprefix("total.").removeprefix("layers.").removeprefix("param.")


def _typical(values: Iterable[float | None]) -> float | None:
    vals = sorted(abs(v) for v in values if v is not None and isinstance(v, (int, float)) and math.isfinite(v) and v != 0)
    return vals[len(vals) // 2] if vals else None


def scale_for(metric: str, values: Iterable[float | None] = ()) -> Scale:
    """The display unit of ``metric`` for ``values`` (their median picks the prefix)."""
    key = metric.rsplit(".", 1)[-1]
    typ = _typical(values)
    if key.endswith("_mm2"):
        return Scale(1.0, "mm²")
    if key == "utilization" or key.endswith("_utilization"):
        return Scale(0.01, "%")
    if key.endswith("_bytes"):
        for f, u in _BYTES:
            if typ is not None and typ >= f:
                return Scale(f, u)
        return Scale(1e6, "MB")
    for suffix, base in (("_s", "s"), ("_j", "J"), ("_w", "W")):
        if key.endswith(suffix):
            for f, p in _SI:
                if typ is not None and typ >= f:
                    return Scale(f, p + base)
            return Scale(1.0, base)
    if key == "fps":
        return Scale(1.0, "frames/s")
    if key.endswith("_nm"):
        return Scale(1.0, "nm")
    if key.endswith("_mhz"):
        return Scale(1.0, "MHz")
    if key.endswith("_kb"):
        return Scale(1.0, "KB")
    return Scale(1.0, "")


def label(metric: str, scale: Scale) -> str:
    """Axis or column label: ``time [ms]`` for ``total.time_s`` shown in ms."""
    name = short_name(metric)
    for suffix in ("_s", "_j", "_w", "_mm2", "_bytes", "_mhz", "_kb", "_nm"):
        if name.endswith(suffix) and name != suffix.lstrip("_"):
            name = name[: -len(suffix)]
            break
    return f"{name} [{scale.unit}]" if scale.unit else name


def plain_name(metric: str) -> str:
    """``total.time_s`` -> ``time``, ``total.dram_bytes`` -> ``dram`` (a label without its unit)."""
    return label(metric, Scale(1.0, ""))


def fmt(value, digits: int = 4) -> str:
    """A number for a table cell: 4 significant digits, ints as ints."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.{digits}g}"


def distinct_digits(values: Iterable[float | None], digits: int = 4, most: int = 9) -> int:
    """Significant digits (at least ``digits``) that show distinct ``values`` as distinct numbers.

    A Pareto table at 4 digits can print two front points with the same time
    and different areas (128 µs and 128 µs), which reads as one dominating the
    other; the objective columns get the digits that tell them apart.
    """
    vals = {float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
    for d in range(digits, most + 1):
        if len({f"{v:.{d}g}" for v in vals}) == len(vals):
            return d
    return most

"""What an ASIC clock costs at a node, for one point in Python numbers (:mod:`archmodels.tech` §clock).

The technology table's :func:`~archmodels.tech.clock_costs` and :func:`~archmodels.tech.clock_check` work on
arrays over points (~10-40 numpy calls for a one-point array). For one point the model asks
:func:`point_clock` instead: the same formulas of :mod:`archmodels.tech` on Python floats where they are
basic IEEE arithmetic (a clock above the node's maximum, at most nominal, the logic-area factor, squares),
and :func:`archmodels.tech.vdd_ratio` itself for the supply a clock above nominal needs (an alpha-power law
solved by bisection with numpy's ``**``: the very bits of the array path, remembered by ``tech``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import tech


@lru_cache(maxsize=None)
def node_max_clock_mhz(node_nm: int) -> float:
    """The highest clock ``tech.vdd_ratio`` accepts at ``node_nm`` (its maximum x (1 + 1e-9)) [MHz]."""
    return tech.fmax_mhz(node_nm) * (1 + 1e-9)


@lru_cache(maxsize=None)
def clock_reason(node_nm: int) -> str:
    """``tech.clock_check``'s reason for a clock above the maximum of ``node_nm`` (it depends on the node only)."""
    return tech.clock_check(np.array([math.inf]), np.array([node_nm]))[1].item(0)


def vdd_ratio(clock_mhz: float, node_nm: int) -> float:
    """``tech.vdd_ratio`` of one clock: 1 up to nominal, NaN above the maximum, the bisection in between."""
    if not clock_mhz <= node_max_clock_mhz(node_nm):
        return math.nan
    if clock_mhz > tech.F_NOM_MHZ[node_nm]:
        return tech.vdd_ratio(np.array([clock_mhz]), node_nm).item(0)
    return 1.0


def logic_area_factor(clock_mhz, node_nm: int):
    """``tech.logic_area_factor``: Python arithmetic for a Python float (numpy's ``x ** 2`` of an array is its
    square, ``x * x``), the technology table's function for arrays."""
    if type(clock_mhz) is not float:
        return tech.logic_area_factor(clock_mhz, node_nm)
    x = (clock_mhz / tech.F_NOM_MHZ[node_nm] - tech.AREA_KNEE) / (1 - tech.AREA_KNEE)
    c = min(max(x, 0.0), 1.0) if x == x else x  # np.minimum(np.maximum(x, 0), 1): NaN stays NaN
    return 1.0 + tech.AREA_PENALTY_MAX * (c * c)


@dataclass(slots=True)
class PointClock:
    """``tech.clock_costs`` of one clock at one node, as Python numbers."""

    vdd_ratio: float
    energy_scale: float  # (V / V_nom)^2
    area_factor: float
    feasible: bool


def point_clock(clock_mhz: float, node_nm: int) -> PointClock:
    """:class:`PointClock` of ``clock_mhz`` at ``node_nm`` (``tech.clock_costs`` of a one-point array)."""
    v = vdd_ratio(clock_mhz, node_nm)
    return PointClock(v, v * v, logic_area_factor(clock_mhz, node_nm), v == v)

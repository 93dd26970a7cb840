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

from . import tech


@lru_cache(maxsize=None)
def node_max_clock_mhz(node_nm: int) -> float:
    """The highest clock ``tech.vdd_ratio`` accepts at ``node_nm`` (its maximum x (1 + 1e-9)) [MHz]."""
    return tech.fmax_mhz(node_nm) * (1 + 1e-9)


@lru_cache(maxsize=None)
def clock_reason(node_nm: int) -> str:
    """``tech.clock_check``'s reason for a clock above the maximum of ``node_nm`` (it depends on the node only)."""
    return tech.clock_check(np.array([math.inf]), np.array([node_nm]))[1].item(0)


def vdd_ratio(clock_mhz: float, node_nm: int) -> float:
    """``tech.vdd_ratio`` of one clock: 1 up to nominal, NaN above the maximum, the bisection in between
    (remembered per (node, clock), as ``tech`` remembers its own)."""
    if not clock_mhz <= node_max_clock_mhz(node_nm):
        return math.nan
    if clock_mhz > tech.F_NOM_MHZ[node_nm]:
        key = (node_nm, clock_mhz)
        v = _VDD.get(key)
        if v is None:
            if len(_VDD) >= _VDD_MAX:
                _VDD.clear()
            _VDD[key] = v = bisect_vdd_ratio(clock_mhz, node_nm)
        return v
    return 1.0


#: (node, clock MHz) -> V / V_nom of :func:`bisect_vdd_ratio` (a study meets few distinct clocks, or many)
_VDD: dict[tuple[int, float], float] = {}
_VDD_MAX = 65536


def bisect_vdd_ratio(clock_mhz: float, node_nm: int) -> float:
    """``tech._bisect_vdd_ratio`` of one clock in (F_NOM, fmax]: the same 40 bisection steps of the alpha-power
    law [SN90] on Python floats, its power ``x ** ALPHA`` by numpy on a one-element array -- the very call the
    array path makes per element (numpy's pow may differ from ``math.pow`` in the last bit, which could turn a
    step); its first steps from ``tech.bisection_tree`` as the array path takes them. ~7x cheaper than the
    array bisection on a one-point array (one numpy call per step instead of 8)."""
    v0, vmax, vt, alpha = tech.VDD_NOM[node_nm], tech.VDD_MAX[node_nm], tech.VT[node_nm], tech.ALPHA
    target = max(clock_mhz / tech.F_NOM_MHZ[node_nm], 1.0) * ((v0 - vt) ** alpha / v0)  # tech._speed(v0): Python
    lo, hi, steps = v0, vmax, tech._BISECT_STEPS
    tree = tech.bisection_tree(node_nm)
    if tree is not None:  # the first steps from the table, as tech._bisect_parts takes them
        lo, hi = (float(v) for v in tech.tree_interval(tree, target))
        steps = tech._BISECT_STEPS - tech._TREE_DEPTH
    x = np.empty(1)
    power = np.power
    for _ in range(steps):  # speed rises with V in [v0, vmax]
        mid = (lo + hi) / 2
        x[0] = mid - vt
        if power(x, alpha).item(0) / mid < target:  # tech._speed(mid) < target
            lo = mid
        else:
            hi = mid
    return hi / v0


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

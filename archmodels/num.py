"""numpy's elementwise functions, computed in Python when every argument is a plain Python number.

A model's cost formulas (rena, multicore, atomswitch) are written once and run on two kinds of values:
numpy arrays over (layers x points) for a batch of design points, and Python ints / floats for one point
alone, a layer after the other (a study's trial; issue 15). A numpy call costs
~1 us even on a one-element array, a Python operation ~50 ns; the values are the same: integer arithmetic
is exact in both (no int64 overflow at these sizes), float +, -, *, / are IEEE double in both, and
``math.ceil`` of a float is exact. Transcendental functions (sqrt, pow) stay numpy calls.
"""

from __future__ import annotations

import math

import numpy as np

#: Python number types: a value of one of them is on the one-point path (``type(x) in _PLAIN``, no call)
_PLAIN = frozenset((int, float, bool))


def plain(x) -> bool:
    """``x`` is a Python number (not an array): the one-point path."""
    return type(x) in _PLAIN


def maximum(a, b):
    """``np.maximum(a, b)``, NaN included (a NaN argument gives NaN)."""
    if type(a) in _PLAIN and type(b) in _PLAIN:
        return a if a > b or a != a else b  # equal (0.0 and -0.0 too): b, as numpy
    return np.maximum(a, b)


def minimum(a, b):
    """``np.minimum(a, b)``, NaN included (a NaN argument gives NaN)."""
    if type(a) in _PLAIN and type(b) in _PLAIN:
        return a if a < b or a != a else b  # equal (0.0 and -0.0 too): b, as numpy
    return np.minimum(a, b)


def where(cond, a, b):
    """``np.where(cond, a, b)``; the chosen value itself when ``cond`` is a Python bool."""
    if type(cond) is bool:
        return a if cond else b
    return np.where(cond, a, b)


def ceil(x):
    """``np.ceil(x)`` as a float (as numpy's); NaN and infinities unchanged."""
    if type(x) is float:
        try:
            return float(math.ceil(x))
        except (ValueError, OverflowError):  # NaN, infinities
            return x
    return np.ceil(x)


def ceil_div(a, b):
    """Integer ceiling division (numpy arrays or ints)."""
    if type(a) is int and type(b) is int:
        return -(-a // b)
    return -(-np.asarray(a) // np.asarray(b))


def max_of(a, b, c, d=None):
    """``np.maximum.reduce([a, b, c, d])`` (the reduce stacks its operands into one array, float64 when one is;
    NaN wins); on Python numbers (``a`` a Python float) the same as a Python float. Without ``d``: of ``a``, ``b``,
    ``c``."""
    if type(a) is not float:
        return np.maximum.reduce([a, b, c] if d is None else [a, b, c, d])
    if type(b) is not float:  # (floats as they are: no call)
        b = float(b)
    if type(c) is not float:
        c = float(c)
    m = a if a > b or a != a else b  # pairwise, left to right, as the reduce; equal: the later one, as numpy
    m = m if m > c or m != m else c
    if d is None:
        return m
    if type(d) is not float:
        d = float(d)
    return m if m > d or m != m else d


def as_float(x):
    """``x.astype(float)``: a float64 array, or a Python float for a Python number."""
    if type(x) in _PLAIN:
        return float(x)
    return x.astype(float)


def float_like(x, like):
    """``x`` (a number, or an array broadcastable to ``like``'s shape) as floats of ``like``'s shape; a Python
    float when ``like`` is a Python number."""
    if type(like) in _PLAIN:
        return float(x)
    return np.broadcast_to(np.asarray(x, dtype=float), like.shape)


def zeros_like(like):
    """Float zeros of ``like``'s shape; ``0.0`` when ``like`` is a Python number."""
    if type(like) in _PLAIN:
        return 0.0
    return np.zeros(like.shape)


def as_int(flag):
    """A truth value (or an array of them) as 0 / 1 integers: a Python int, or an int64 array."""
    if type(flag) in _PLAIN:
        return int(bool(flag))
    return np.asarray(flag, dtype=bool).astype(np.int64)


def objects(shape, value) -> np.ndarray:
    """``np.full(shape, value, dtype=object)``, the same array: np.full of objects copies ``value`` one element
    at a time (~30 us for 4,096 elements), ``ndarray.fill`` ~4x faster; an empty object array already holds None
    (numpy fills it so), so None is not filled again (the IMAX helper's sixteenth round)."""
    out = np.empty(shape, dtype=object)
    if value is not None:
        out.fill(value)
    return out

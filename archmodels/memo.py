"""Results remembered by the identity of the objects they were computed from.

A study evaluates the same workload and layer objects on every trial; an ``lru_cache`` would hash them whole
(every layer's fields) on each call, several microseconds on a network. :class:`IdentityMemo` looks them up by
``id`` instead. Each entry holds the objects it was computed from, so their ids cannot name other objects while
the entry exists. :class:`SizedLRU` bounds a cache by the bytes its entries keep alive.
"""

from __future__ import annotations

import sys
from collections import OrderedDict, namedtuple
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import numpy as np

T = TypeVar("T")

#: ``functools.lru_cache``'s cache_info fields
CacheInfo = namedtuple("CacheInfo", "hits misses maxsize currsize")


class IdentityMemo(Generic[T]):
    """``fn(obj)`` remembered by ``obj``'s identity (``by_items``: by the identities of its items, for a new
    tuple of the same objects, e.g. the swapped GEMM forms of a workload); at most ``size`` entries, all
    dropped when full."""

    def __init__(self, fn: Callable[[Any], T], size: int = 64, by_items: bool = False) -> None:
        self.fn, self.size, self.by_items = fn, size, by_items
        self.memo: dict[Any, tuple[Any, T]] = {}

    def __call__(self, obj: Any) -> T:
        if self.by_items:
            key = tuple(map(id, obj))
            hit = self.memo.get(key)
            if hit is not None:  # the entry holds those very items
                return hit[1]
            held: Any = tuple(obj)
        else:
            key = id(obj)
            hit = self.memo.get(key)
            if hit is not None and hit[0] is obj:
                return hit[1]
            held = obj
        value = self.fn(obj)
        if len(self.memo) >= self.size:
            self.memo.clear()
        self.memo[key] = (held, value)
        return value


def by_identity(size: int = 64, by_items: bool = False) -> Callable[[Callable[[Any], T]], IdentityMemo[T]]:
    """Decorator form of :class:`IdentityMemo`."""
    return lambda fn: IdentityMemo(fn, size, by_items)



def nbytes_of(obj: Any) -> int:
    """Bytes an object keeps alive through its numpy arrays (each buffer once, views counted by their base) and
    strings, found through dicts, lists, tuples, sets and the attributes of this package's own objects (anything
    else counts 0): what a cache entry costs, to bound a cache by memory rather than by a count of entries whose
    size varies ~30x between a small network's plans and a large one's."""
    seen: set[int] = set()
    stack, total = [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            base = o
            while isinstance(base.base, np.ndarray):
                base = base.base
            if base is o or id(base) not in seen:
                seen.add(id(base))
                total += base.nbytes
            if o.dtype == object:
                stack.extend(o.ravel().tolist())
        elif isinstance(o, str):
            total += sys.getsizeof(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif type(o).__module__.startswith(__package__ + "."):
            stack.extend(vars(o).values() if hasattr(o, "__dict__") else ())
            stack.extend(getattr(o, s) for c in type(o).__mro__ for s in getattr(c, "__slots__", ())
                         if isinstance(s, str) and s != "__dict__" and hasattr(o, s))
    return total


class SizedLRU(Generic[T]):
    """``fn(*args)`` remembered by ``args`` (hashable), least recently used out first once the entries' sizes
    (``size(value)`` when stored, :func:`nbytes_of` by default) add up to more than ``budget_bytes``; a value
    larger than the whole budget is returned, not kept. ``cache_info``/``cache_clear`` as ``functools.lru_cache``'s
    (``maxsize``: the budget in bytes; ``nbytes``: the entries' sizes now)."""

    def __init__(self, fn: Callable[..., T], budget_bytes: int, size: Callable[[T], int] = nbytes_of) -> None:
        self.__wrapped__, self.budget_bytes, self.size = fn, budget_bytes, size
        self.entries: OrderedDict[Any, tuple[T, int]] = OrderedDict()
        self.nbytes = self.hits = self.misses = 0

    def __call__(self, *args: Any) -> T:
        hit = self.entries.get(args)
        if hit is not None:
            self.entries.move_to_end(args)
            self.hits += 1
            return hit[0]
        self.misses += 1
        value = self.__wrapped__(*args)
        nbytes = self.size(value)
        if nbytes <= self.budget_bytes:
            while self.entries and self.nbytes + nbytes > self.budget_bytes:
                self.nbytes -= self.entries.popitem(last=False)[1][1]
            self.entries[args] = (value, nbytes)
            self.nbytes += nbytes
        return value

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self.budget_bytes, len(self.entries))

    def cache_clear(self) -> None:
        self.entries.clear()
        self.nbytes = self.hits = self.misses = 0

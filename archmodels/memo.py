"""Results remembered by the identity of the objects they were computed from.

A study evaluates the same workload and layer objects on every trial; an ``lru_cache`` would hash them whole
(every layer's fields) on each call, several microseconds on a network. :class:`IdentityMemo` looks them up by
``id`` instead. Each entry holds the objects it was computed from, so their ids cannot name other objects while
the entry exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


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


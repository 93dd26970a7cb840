"""SizedLRU (the EMAX one-structure plans' cache) and nbytes_of: bounded by bytes, least recently used out first,
the same values as the function (a study's structures beyond the former 128 entries: test_emax_batched_paths4)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels.memo import SizedLRU, nbytes_of


@settings(max_examples=200, deadline=None)
@given(budget=st.integers(0, 60), calls=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 25)), max_size=60))
def test_sized_lru_is_a_bounded_lru(budget, calls):
    sizes = {}  # each key's size: the first one drawn (a function's value, hence its size, is fixed per key)
    computed = []
    lru = SizedLRU(lambda k: (computed.append(k), ("v", k))[1], budget, size=lambda v: sizes[v[1]])
    model: list[int] = []  # keys kept, least recently used first
    for k, size in calls:
        sizes.setdefault(k, size)
        hit = k in model
        n_before = len(computed)
        assert lru(k) == ("v", k)
        assert len(computed) == n_before + (not hit)  # computed exactly when not kept
        if hit:
            model.remove(k)
            model.append(k)
        elif sizes[k] <= budget:
            model.append(k)
            while sum(sizes[m] for m in model) > budget:
                model.pop(0)
        assert list(k for (k,) in lru.entries) == model
        assert lru.nbytes == sum(sizes[m] for m in model) <= budget
    info = lru.cache_info()
    assert (info.hits + info.misses, info.misses, info.maxsize, info.currsize) == (len(calls), len(computed), budget,
                                                                                   len(model))


def test_nbytes_of_counts_each_buffer_once():
    a = np.zeros(1000)  # 8,000 bytes
    s = "x" * 100
    obj = {"a": a, "view": a[10:20], "again": [a, (a,)], "text": np.array([s, s, None], dtype=object), "n": 3}
    assert nbytes_of(obj) == 8000 + 3 * 8 + len(s) + 49  # the array, the object array's pointers, the string once
    assert nbytes_of(np.float64(1.0)) == 0 and nbytes_of(object()) == 0  # what it does not know counts nothing

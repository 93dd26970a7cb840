"""EMAX batched paths, twelfth round (issue 15): the reasons of a batch's pairs without a plan coded as arrays when
its layers mix conv and FC ones (``mapper.merged_reasons``: the conv requests' coded reasons and the FC ones' merged
in pair order, no tuple per pair). Each fast path is compared with the general one, and checked to happen."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper
from archmodels.emax import model as em

from .test_emax_batched_paths5 import _rows


_TEXTS = st.lists(st.sampled_from(["a", "b", "no LMM fit", "rows: 3 > 2", ""]), max_size=3).map(tuple)
_ANSWERS = st.lists(st.tuples(st.booleans(), _TEXTS), max_size=30)


@settings(max_examples=300, deadline=None)
@given(a=_ANSWERS, b=_ANSWERS, data=st.data())
def test_merged_reasons_equal_the_answers_coded_in_order(a, b, data):
    """Two coded sets merged by any interleaving equal the answers interleaved the same way, then coded."""
    first = np.array(data.draw(st.permutations([True] * len(a) + [False] * len(b))), dtype=bool)
    ia, ib = iter(a), iter(b)
    want = mapper.coded_reasons([next(ia) if f else next(ib) for f in first.tolist()])
    got = mapper.merged_reasons(first, mapper.coded_reasons(a), mapper.coded_reasons(b))
    assert got[0].dtype == want[0].dtype and np.array_equal(got[0], want[0])
    assert got[2].dtype == want[2].dtype and np.array_equal(got[2], want[2])
    assert got[1].dtype == want[1].dtype and got[1].tolist() == want[1].tolist()


def _whys(arch: str, wl: str, n: int, seed: int) -> list:
    """(pairs' layers, _Why) of every chunk while ``n`` points of ``wl`` are evaluated (caches cleared)."""
    got = []
    real = em._mapping_rows

    def spy(*a, **kw):
        out = real(*a, **kw)
        got.append((a[3], out[3]))
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "_mapping_rows", spy):
        get_model(arch).evaluate_points(wl, _rows(arch, n, seed) if seed % 2 else
                                        get_model(arch).params.random_rows(n, np.random.default_rng(seed)))
    em.workload_plans.cache_clear()
    return got


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxvr", "vgg16", 300, 2), ("emaxvr", "alexnet", 200, 3),
                                            ("emaxv", "vgg16", 200, 4), ("emaxvr", "lenet", 40, 5)])
def test_coded_reasons_of_conv_and_fc_pairs_equal_the_listed_ones(arch, wl, n, seed):
    """A chunk's coded reasons of any pairs (conv and FC mixed: the merged path) equal its listed reasons coded."""
    merged = 0
    real = mapper.merged_reasons

    def count(*a):
        nonlocal merged
        merged += 1
        return real(*a)

    rng = np.random.default_rng(seed)
    for li, why in _whys(arch, wl, n, seed):
        js = np.arange(len(li))
        for sel in (js, rng.permutation(js)[: len(js) // 3], js[::-1][:17], js[:0], js[-1:]):
            with mock.patch.object(mapper, "merged_reasons", count):
                got = why.coded(sel)
            want = mapper.coded_reasons(why(sel))
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[2], want[2])
            assert got[1].tolist() == want[1].tolist()
    assert merged  # (the merged path ran)

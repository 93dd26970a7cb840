"""One GEMM, one cost (issue 13 §3): the same matrix product written as a token-wise FC, a 1x1
convolution or a MatMul costs the same on each model, within 10 %."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.gemm import forms, shape
from workloads.layers import FC, Conv2D, MatMul, Workload

MODELS = ("emaxv", "emaxvr", "imax", "rena", "multicore")


def _three(k: int, m: int, h: int, w: int) -> dict[str, Workload]:
    n = h * w
    return {
        "fc": Workload("fc", (FC("g", inputs=k, outputs=m, batch=n),)),
        "conv": Workload("conv", (Conv2D("g", in_ch=k, out_ch=m, in_h=h, in_w=w),)),
        "matmul": Workload("matmul", (MatMul("g", m=m, k=k, n=n),)),
    }


@pytest.mark.parametrize("arch", MODELS)
@pytest.mark.parametrize("k,m,h,w", [(768, 768, 14, 14), (64, 256, 8, 8), (96, 24, 28, 28)])
def test_same_product_same_cost(arch, k, m, h, w):
    model = get_model(arch)
    res = {f: model.evaluate(wl) for f, wl in _three(k, m, h, w).items()}
    assert all(r["feasible"] for r in res.values())
    times = [r["total"]["time_s"] for r in res.values()]
    energies = [r["total"]["energy_j"] for r in res.values()]
    assert max(times) <= 1.10 * min(times), {f: r["total"]["time_s"] for f, r in res.items()}
    assert max(energies) <= 1.10 * min(energies)
    assert {r["layers"][0]["gemm_form"] for r in res.values()} <= {"fc", "conv", "matmul"}


def test_atomswitch_documents_why_not():
    # a spatial design: FC and conv circuits differ in area; products of activations are not run
    model = get_model("atomswitch")
    assert model.GEMM_FORMS is False
    assert not model.evaluate(_three(64, 64, 4, 4)["matmul"])["feasible"]


def test_single_vectors_keep_the_models_own_fc_path():
    # n = 1: the FC layers the papers measure (ReNA's ring, EMAX's FC mapping) are not re-formed
    assert forms(FC("f", inputs=4096, outputs=4096)) == {}
    assert "gemm_form" not in get_model("rena").evaluate("fc1")["layers"][0]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 512), m=st.integers(1, 512), n=st.integers(2, 4096))
def test_every_form_is_the_same_product(k, m, n):
    for layer in (FC("g", inputs=k, outputs=m, batch=n), MatMul("g", m=m, k=k, n=n)):
        assert shape(layer) == (k, m, n)
        for form in forms(layer).values():
            assert shape(form) == (k, m, n) and form.macs == layer.macs and form.name == "g"


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr"])
@pytest.mark.parametrize("criterion,key", [("dram", "dram_bytes"), ("energy", "energy_j"), ("time", "time_s")])
def test_emax_forms_ranked_by_the_mapping_criterion(arch, criterion, key):
    """Under criterion=dram (energy) the form moving the least traffic (using the least energy) is taken, as the
    plans of a layer are chosen; once the fastest was taken whatever the criterion."""
    import numpy as np

    model = get_model(arch)
    alone = type(model)()
    alone.GEMM_FORMS = False  # each form costed on its own
    rows = [dict(r, criterion=criterion) for r in model.params.random_rows(60, np.random.default_rng(7))]
    rows.append(dict(model.params.defaults(), criterion=criterion, lmm_kb=model.params.get("lmm_kb").high))
    three = _three(32, 192, 28, 28)
    best = model.evaluate_points(three["conv"], rows)
    each = {f: alone.evaluate_points(wl, rows) for f, wl in three.items()}
    for i in np.flatnonzero(best.feasible):
        vals = [r.totals[key][i] for r in each.values() if r.feasible[i]]
        assert best.totals[key][i] <= min(vals) * (1 + 1e-9), (i, best.totals[key][i], vals)


def test_one_point_form_win_copies_exactly_what_where_selects():
    """gemm._all_of (one point, the better form wins whole) gives np.where's values and dtype for every kind of
    array a LayerBatch holds: floats (-0.0, NaN, inf), ints, bools, objects, and mixed dtypes (np.where itself)."""
    import numpy as np

    from archmodels.gemm import _all_of

    better = np.ones(1, dtype=bool)
    cases = [(np.array([-0.0]), np.array([1.0])), (np.array([np.nan]), np.array([2.0])),
             (np.array([np.inf]), np.array([0.0])), (np.array([3]), np.array([4])),
             (np.array([False]), np.array([True])), (np.array(["x"], dtype=object), np.array([None], dtype=object)),
             (np.array([5]), np.array([1.5])), (np.array([True]), np.array([0.5])),
             (np.broadcast_to(np.array([7.0]), (1,)), np.array([1.0]))]
    for a, b in cases:
        got, want = _all_of(better, a, b), np.where(better, a, b)
        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.writeable
        assert got.tobytes() == want.tobytes() if got.dtype != object else got.tolist() == want.tolist()
        assert got is not a

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

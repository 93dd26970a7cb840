"""The energy parts as totals (2026-11-27, session 7): ``total.compute_energy_j``, ``total.sram_energy_j`` and
``total.dram_energy_j`` on every model, the layers' parts summed, so that a study can minimise a model's DRAM energy
and `dse compare` can set the models' parts side by side (only EMAX had ``total.dram_energy_j``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.result import ENERGY_PARTS
from workloads import load_workload

MODELS = {"rena": ("vgg16", "lenet"), "atomswitch": ("lenet", "alexnet"), "multicore": ("vgg16", "fc2", "resnet50"),
          "imax": ("spmm:n=256,sparsity=0.9", "lenet", "matmul:n=128"), "emaxv": ("alexnet-conv", "lenet"),
          "emaxvr": ("lenet", "fc2")}


@pytest.mark.parametrize("arch", sorted(MODELS))
def test_declared_as_totals(arch):
    declared = [m.name for m in get_model(arch).TOTAL_METRICS]
    assert all(p in declared for p in ENERGY_PARTS)


def _layers_sum(result: dict, key: str) -> float | None:
    """The layers' part summed from zero, layer after layer (as the model's totals add them); None if one is None."""
    total = 0.0
    for layer in result["layers"]:
        if layer[key] is None:
            return None
        total = total + layer[key]
    return total


@settings(max_examples=18, deadline=None)
@given(st.sampled_from(sorted(MODELS)), st.integers(0, 2**32 - 1), st.data())
def test_totals_are_the_layers_parts_and_add_up(arch, seed, data):
    wl = load_workload(data.draw(st.sampled_from(MODELS[arch])))
    model = get_model(arch)
    rows = model.params.random_rows(5, np.random.default_rng(seed)) + [model.params.defaults()]
    batch = model.evaluate_points(wl, rows)
    added_up = 0
    for i, row in enumerate(rows):
        got = batch.point(i)
        alone = model.evaluate(wl, **row)  # one point's path: the same totals as the batch's
        t = got["total"]
        for key in ENERGY_PARTS:
            assert alone["total"][key] == t[key] or (alone["total"][key] is None and t[key] is None), (key, row)
            want = _layers_sum(got, key)
            if want is not None and t[key] is not None and not math.isnan(want):
                assert t[key] == want, (key, t[key], want)
        if got["feasible"] and t["energy_j"] is not None:
            parts = sum(t[k] for k in ENERGY_PARTS) + t["static_power_w"] * t["time_s"]
            assert parts == pytest.approx(t["energy_j"], rel=1e-12, abs=0.0)
            added_up += 1
    assert added_up > 0 or not any(batch.point(i)["feasible"] for i in range(len(rows)))


def test_plots_components_are_the_models_parts():
    from dse import plots

    assert tuple(k for _, k in plots.ENERGY_COMPONENTS) == ENERGY_PARTS


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1e3), min_size=3, max_size=3), st.floats(0.0, 10.0), st.floats(1e-6, 1.0),
       st.floats(0.0, 1e3), st.booleans())
def test_energy_shares_add_up_and_name_the_unattributed(parts, static_w, time_s, rest, declared):
    """Shares sum to 1; what the parts and the leakage leave out is "other"; a model without the part totals
    (``declared`` false) is all "other" but its leakage."""
    from dse.plots import energy_shares

    leak = static_w * time_s
    energy = sum(parts) + leak + rest
    if energy <= 0.0:
        assert energy_shares({"energy_j": energy}) is None
        return
    totals = {"energy_j": energy, "static_power_w": static_w, "time_s": time_s}
    if declared:
        totals.update(zip(ENERGY_PARTS, parts))
    s = energy_shares(totals)
    assert sum(s.values()) == pytest.approx(1.0, abs=2e-6)  # (a remainder under 1e-6 of the energy is not "other")
    assert s["leakage"] == pytest.approx(leak / energy, rel=1e-9, abs=1e-15)
    unattributed = rest + (0.0 if declared else sum(parts))
    assert s["other"] == pytest.approx(unattributed / energy if unattributed > 1e-6 * energy else 0.0, abs=1e-6)
    assert energy_shares({**totals, "energy_j": None}) is None
    assert energy_shares({**totals, "energy_j": float("nan")}) is None

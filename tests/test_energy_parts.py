"""Energy by component on every model that computes it from parts (2026-11-27).

ReNA, atomswitch, multicore and IMAX summed MAC, buffer/SRAM and DRAM energies into ``energy_j`` and reported only the sum,
so the breakdown's "energy by component" panel read ~98 % "other" for them. Their layers now carry the parts as
``compute_energy_j``, ``sram_energy_j`` and ``dram_energy_j`` (EMAX's names): the same terms the energy sums, summed
apart. ``energy_j`` itself is unchanged (tests/test_golden.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dse
from archmodels import get_model
from workloads import load_workload

PARTS = ("compute_energy_j", "sram_energy_j", "dram_energy_j")
MODELS = {"rena": ("vgg16", "lenet", "bert_encoder:seq=16,hidden=64,heads=2,ffn=128"),
          "atomswitch": ("lenet", "alexnet"),
          "multicore": ("vgg16", "fc2", "resnet50", "bert_encoder:seq=16,hidden=64,heads=2,ffn=128"),
          "imax": ("spmm:n=256,sparsity=0.9", "matmul:n=128", "lenet", "spmv:n=512,sparsity=0.95")}


def _check_layers(result: dict) -> int:
    """Every layer with an energy: parts >= 0 that add up (with the leakage) to it; returns how many were checked."""
    checked = 0
    for layer in result["layers"]:
        e = layer["energy_j"]
        parts = [layer[k] for k in PARTS]
        if e is None:  # no energy (a layer the design cannot run, a clock above the node's): a part is missing too
            assert None in parts, (layer["name"], parts)  # (DRAM's can be known: it does not scale with the clock)
            continue
        assert all(p is not None and p >= 0.0 for p in parts), (layer["name"], parts)
        total = sum(parts) + layer["static_energy_j"]
        assert total == pytest.approx(e, rel=1e-12, abs=0.0), (layer["name"], total, e)
        checked += 1
    return checked


@pytest.mark.parametrize("arch", sorted(MODELS))
def test_declared_as_layer_metrics(arch):
    declared = [m.name for m in get_model(arch).LAYER_METRICS]
    assert all(p in declared for p in PARTS)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(MODELS)), st.integers(0, 2**32 - 1), st.data())
def test_parts_add_up_to_the_layer_energy(arch, seed, data):
    wl = data.draw(st.sampled_from(MODELS[arch]))
    model = get_model(arch)
    rows = model.params.random_rows(6, np.random.default_rng(seed)) + [model.params.defaults()]
    batch = model.evaluate_points(load_workload(wl), rows)
    checked = 0
    for i in range(len(rows)):
        checked += _check_layers(batch.point(i))
    assert checked > 0 or not any(batch.point(i)["feasible"] for i in range(len(rows)))


def test_multicore_dram_energy_is_the_weights_that_do_not_fit():
    """FC2's 3.2 MB of 16-bit weights: streamed from DRAM on one core (DRAM energy), on chip over 7 cores (none)."""
    one = dse.evaluate("multicore", "fc2", cores=1, placement="T1", weight_buffer_kb=512)["layers"][0]
    seven = dse.evaluate("multicore", "fc2", cores=7, placement="T1", weight_buffer_kb=512)["layers"][0]
    assert one["dram_read_bytes"] > 3e6 and one["dram_energy_j"] > 0.5 * one["energy_j"]
    assert seven["dram_read_bytes"] == 0 and seven["dram_energy_j"] == 0.0
    assert seven["compute_energy_j"] > 0 and seven["sram_energy_j"] > 0


def test_rena_parts_follow_the_target():
    """The FPGA's on-chip parts carry the FPGA/ASIC energy ratio; DRAM's does not."""
    fpga = dse.evaluate("rena", "lenet", target="fpga")["layers"][0]
    asic = dse.evaluate("rena", "lenet", target="asic", clock_mhz=200)["layers"][0]
    assert fpga["compute_energy_j"] > asic["compute_energy_j"]
    assert fpga["dram_energy_j"] == pytest.approx(asic["dram_energy_j"], rel=1e-12)


@pytest.mark.parametrize("arch, workload", [("rena", "vgg16"), ("atomswitch", "lenet"), ("multicore", "vgg16"),
                                            ("imax", "spmm:n=256,sparsity=0.9"), ("imax", "lenet"),
                                            ("multicore", "bert_encoder:seq=16,hidden=64,heads=2,ffn=128")])
def test_the_breakdown_has_no_other_energy(arch, workload):
    """The report's energy panel: compute, SRAM, DRAM and static, nothing left to "other" (was ~98 %)."""
    from dse.plots import layer_breakdown

    r = dse.evaluate(arch, workload)
    assert _check_layers(r) > 0
    energy = layer_breakdown(r)["energy_by_component"]
    assert set(energy) == {"compute", "sram", "dram", "static"}

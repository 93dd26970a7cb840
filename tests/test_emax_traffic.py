"""EMAXV/EMAXVR data movement: traffic identities, SPM effects, pool fusion, bus rounding."""

from __future__ import annotations

import pytest

from archmodels import get_model
from archmodels.emax.model import DRAM_KIND_KEYS
from workloads import Workload, load_workload
from workloads.layers import Conv2D

ALEX = load_workload("alexnet-conv")
KIND_KEYS = [f"dram_{k}_{d}_bytes" for k, d in DRAM_KIND_KEYS]


def _one(layer) -> Workload:
    return Workload(f"one-{layer.name}", (layer,))


def _layer(result, name):
    return next(lay for lay in result["layers"] if lay["name"] == name)


def test_emaxv_c1_traffic_composition():
    """Spec §2: inputs KH/s x 2 (no vertical broadcast), partial sums (IC/ICpar - 1) x output each way."""
    r = get_model("emaxv").evaluate(_one(ALEX.layer("C1")))
    c1 = r["layers"][0]
    out = 96 * 55 * 55 * 4
    assert c1["dram_output_write_bytes"] == out
    assert c1["dram_psum_write_bytes"] == 2 * out
    # reads move whole 16-byte bus words; rows start at any 4-byte offset: (b + 16 - 4) / 16 words
    assert c1["dram_psum_read_bytes"] == pytest.approx(2 * 96 * 55 * (220 + 12))
    assert c1["dram_input_read_bytes"] == pytest.approx(3 * 55 * 11 * 2 * (908 + 12))
    assert c1["dram_weight_read_bytes"] == (96 * 3 * 121 + 96) * 4  # register constants, read once by the host


@pytest.mark.parametrize("arch,wl,sets", [
    ("emaxv", "alexnet-conv", {}), ("emaxvr", "alexnet", {}), ("emaxvr", "alexnet-conv", {"spm_kb": 0.0}),
    ("emaxvr", "vgg16-conv", {"spm_kb": 256.0}), ("emaxvr", "lenet", {"cols": 8, "rows": 16}),
])
def test_kinds_add_up_to_dram_totals(arch, wl, sets):
    r = get_model(arch).evaluate(wl, **sets)
    for lay in r["layers"]:
        reads = sum(lay[k] for k in KIND_KEYS if k.endswith("_read_bytes"))
        writes = sum(lay[k] for k in KIND_KEYS if k.endswith("_write_bytes"))
        assert reads == pytest.approx(lay["dram_read_bytes"], rel=1e-12, abs=1e-6)
        assert writes == pytest.approx(lay["dram_write_bytes"], rel=1e-12, abs=1e-6)


@pytest.mark.parametrize("arch,spm", [("emaxv", 0.0), ("emaxvr", 0.0), ("emaxvr", 32.0), ("emaxvr", 128.0),
                                      ("emaxvr", 4096.0)])
@pytest.mark.parametrize("name", ["C1", "C4", "C7"])
def test_dram_at_least_compulsory(arch, spm, name):
    layer = ALEX.layer(name)
    model = get_model(arch)
    bits = 16 if arch == "emaxvr" else 32
    r = model.evaluate(_one(layer), spm_kb=spm, dtype_bits=bits)["layers"][0]
    e = bits // 8
    compulsory = (layer.input_elems + layer.weight_elems + layer.output_elems) * e
    assert r["dram_bytes"] >= compulsory
    assert r["dram_weight_read_bytes"] >= layer.weight_elems * e
    assert r["dram_output_write_bytes"] == layer.output_elems * e


def test_spm_removes_partial_sum_traffic():
    c7 = _one(ALEX.layer("C7"))
    m = get_model("emaxvr")
    no_spm = m.evaluate(c7, spm_kb=0.0)["layers"][0]
    spm = m.evaluate(c7, spm_kb=128.0)["layers"][0]
    out = 384 * 13 * 13 * 2
    passes = no_spm["passes"]
    assert passes > 1
    assert no_spm["dram_psum_write_bytes"] == (passes - 1) * out
    assert no_spm["dram_psum_read_bytes"] >= (passes - 1) * out
    assert spm["dram_psum_read_bytes"] == spm["dram_psum_write_bytes"] == 0
    assert spm["spm_write_bytes"] >= (passes - 1) * out  # they went to the SPM instead
    assert spm["dram_bytes"] < no_spm["dram_bytes"]


def test_fused_pool_writes_only_the_pooled_output():
    r = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=128.0)
    c1, p3 = _layer(r, "C1"), _layer(r, "P3")
    assert p3["fused_into"] == "C1" and p3["dram_bytes"] == 0 and p3["time_s"] == 0
    assert c1["dram_output_write_bytes"] == 96 * 27 * 27 * 2
    # the conv result that did not stay in the 128 KB SPM is written out and read back (after_conv schedule)
    assert c1["dram_spill_write_bytes"] == 96 * 55 * 55 * 2 - 128 * 1024
    assert c1["states"]["POOL"] > 0


def test_per_band_pooling_avoids_the_spill():
    m = get_model("emaxvr")
    after = _layer(m.evaluate("alexnet-conv"), "C1")
    per_band = _layer(m.evaluate("alexnet-conv", pool_schedule="per_band"), "C1")
    assert per_band["dram_spill_write_bytes"] == 0 < after["dram_spill_write_bytes"]
    assert per_band["dram_bytes"] < after["dram_bytes"]


def test_no_fusion_without_spm_or_when_disabled():
    m = get_model("emaxvr")
    for sets in ({"spm_kb": 0.0}, {"pool_fusion": False}):
        r = m.evaluate("alexnet-conv", **sets)
        p3 = _layer(r, "P3")
        assert p3["fused_into"] is None and p3["dram_input_read_bytes"] >= 96 * 55 * 55 * 2
    assert all(lay["fused_into"] is None for lay in get_model("emaxv").evaluate("alexnet-conv")["layers"])


def test_activations_chain_through_a_large_spm():
    """256 KB: C7's output stays in the SPM and C8 reads it there (spec §4 traffic at 256 KB)."""
    r = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=256.0)
    c7, c8 = _layer(r, "C7"), _layer(r, "C8")
    assert c7["dram_output_write_bytes"] == 0 and c8["dram_input_read_bytes"] == 0
    r128 = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=128.0)
    assert _layer(r128, "C8")["dram_input_read_bytes"] >= 384 * 13 * 13 * 2


def test_wider_bus_rounds_reads_up_not_writes():
    c1 = _one(ALEX.layer("C1"))
    m = get_model("emaxv")
    narrow = m.evaluate(c1, fsm_bus_bits=64)["layers"][0]
    wide = m.evaluate(c1, fsm_bus_bits=512)["layers"][0]
    assert wide["dram_psum_read_bytes"] > narrow["dram_psum_read_bytes"]
    assert wide["dram_write_bytes"] == narrow["dram_write_bytes"]


def test_grouped_and_strided_conv_shapes_run():
    layer = Conv2D("dw", in_ch=64, out_ch=64, groups=64, kernel_h=3, kernel_w=3, in_h=28, in_w=28, stride=2, padding=1)
    for arch in ("emaxv", "emaxvr"):
        r = get_model(arch).evaluate(_one(layer))
        lay = r["layers"][0]
        assert r["feasible"] and lay["dram_output_write_bytes"] == layer.output_elems * (4 if arch == "emaxv" else 2)
        assert 0 < lay["utilization"] <= 1

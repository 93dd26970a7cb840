"""The IMAX model: contract, calibration, mappings, infeasible configurations, batches."""

from __future__ import annotations

import json

import numpy as np
import pytest

from archmodels import get_model
from archmodels.imax import costs as C
from archmodels.result import LAYER_METRICS, TOTAL_METRICS
from archmodels.testing import assert_alone_equals_batch
from dse import validate
from dse.cli import main
from workloads import load_workload, sparse

M = get_model("imax")
STATES = ["DRAIN", "CONF", "REGV", "RANGE", "LOAD", "EXEC", "WAIT"]


def _cli_json(capsys, *argv) -> dict:
    assert main(["evaluate", "imax", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _check_contract(d: dict) -> None:
    assert d["feasible"] is True
    for key in [m.name for m in TOTAL_METRICS] + [m.name for m in M.TOTAL_METRICS]:
        assert d["total"][key] is not None, key
    for lay in d["layers"]:
        for key in ["name", "kind", "macs", "fused_into", "states"] + [m.name for m in LAYER_METRICS]:
            assert key in lay, key
        for key in [m.name for m in LAYER_METRICS] + [m.name for m in M.LAYER_METRICS]:
            assert lay[key] is not None, key
        assert list(lay["states"]) == STATES
        assert sum(lay["states"].values()) == pytest.approx(lay["cycles"], rel=1e-9)
        assert lay["dram_bytes"] == pytest.approx(lay["dram_read_bytes"] + lay["dram_write_bytes"])
        assert 0 < lay["utilization"] <= 1


def test_cli_spmm_fills_the_contract(capsys):
    d = _cli_json(capsys, "spmm:n=1024,sparsity=0.95")
    _check_contract(d)
    lay = d["layers"][0]
    assert (lay["mac_units"], lay["agrp"], lay["bgrp"], lay["cgrp"]) == (58, 4, 8, 8)
    assert lay["format"] == "csr" and lay["mapping"] == "ivj"
    assert d["total"]["area_mm2"] > 0  # the 13.3 mm^2 anchor holds by construction (see the area test)
    assert lay["speedup_vs_dense"] == pytest.approx(lay["dense_time_s"] / lay["time_s"])


def test_cli_matrix_market_file_fills_the_contract(tmp_path, capsys):
    path = tmp_path / "biased.mtx"
    sparse.write_mtx(path, sparse.generate(300, 200, 0.9, 2.0, 5), "test fixture")
    d = _cli_json(capsys, str(path), "--set", "format=jds")
    _check_contract(d)
    lay = d["layers"][0]
    assert lay["kind"] == "spmv" and lay["bgrp"] == 1 and lay["macs"] == sparse.read_mtx(str(path)).nnz


def test_calibration_cases_pass():
    results = validate.run("imax")
    assert len(results) >= 7
    bad = [(r.label, r.metric, r.model, r.published) for r in results if not r.ok]
    assert not bad


def test_mac_units_of_the_three_mappings():
    assert int(C.mac_units(64, 4, "ivj")) == 58
    assert int(C.mac_units(64, 4, "ivs")) == 48  # 3 sets of 2 offset units + 16 MAC units
    assert int(C.mac_units(64, 4, "dense")) == 60
    r = M.evaluate("spmm:n=256,sparsity=0.9", schedule="ivs")
    assert r["total"]["mac_units"] == 48


def test_infeasible_lmm_configurations_are_reported_not_raised():
    r = M.evaluate("spmv:n=512,sparsity=0.9", nchip=2)  # one B column cannot split over 2 chips
    assert r["feasible"] is False and "4.4.10" in r["infeasible_reason"]
    assert r["total"]["time_s"] is None and r["layers"][0]["agrp"] is None
    r = M.evaluate("spmm:n=256,sparsity=0.9", units=16, schedule="ivs")
    assert r["feasible"] is False and "ivs needs at least" in r["infeasible_reason"]
    # the same batch mixes feasible and infeasible points
    br = M.evaluate_points("spmm:n=256,sparsity=0.9", [{"nchip": 1}, {"nchip": 3}, {"nchip": 4}])
    assert list(br.feasible) == [True, False, True]


def test_batch_equals_scalar_and_mixes_every_knob():
    wl = load_workload("spmm:n=512,sparsity=0.8,bias=1")
    rng = np.random.default_rng(3)
    rows = [dict(units=int(rng.choice([32, 64, 96])), cols=int(rng.choice([2, 4])), lmm_kb=int(rng.choice([16, 64])),
                 nchip=int(rng.choice([1, 2])), clock_mhz=float(rng.uniform(100, 300)),
                 link_gbps=float(rng.uniform(0.5, 5)), format=str(rng.choice(["dense", "csr", "jds"])),
                 schedule=str(rng.choice(["ivj", "ivs"])), lmm_opt=bool(rng.integers(2))) for _ in range(40)]
    br = M.evaluate_points(wl, rows)
    for i in range(0, 40, 7):
        one = M.evaluate(wl, **rows[i])
        assert one == br.point(i)


def test_lmm_optimisation_is_never_slower_and_matters_when_a_does_not_fit():
    for n, s in [(1024, 0.0), (1024, 0.9), (256, 0.5)]:
        on = M.evaluate(f"spmm:n={n},sparsity={s}")["total"]
        off = M.evaluate(f"spmm:n={n},sparsity={s}", lmm_opt=False)["total"]
        assert on["time_s"] <= off["time_s"]
        assert on["lmm_utilization"] >= off["lmm_utilization"]
    dense_on = M.evaluate("spmm:n=1024,sparsity=0.0", format="dense")["total"]["time_s"]
    dense_off = M.evaluate("spmm:n=1024,sparsity=0.0", format="dense", lmm_opt=False)["total"]["time_s"]
    assert dense_off > 2 * dense_on  # 18 blocks of A do not fit: B and C partials re-sent per block


def test_jds_is_robust_to_row_bias_and_csr_is_not():
    def t(fmt, bias):
        return M.evaluate(f"spmm:n=512,sparsity=0.5,bias={bias}", format=fmt)["layers"][0]

    assert t("csr", 1)["padding_slots"] > 2 * t("csr", 0)["padding_slots"]  # CSR pads to the longest row
    assert t("jds", 1)["padding_slots"] < t("jds", 0)["padding_slots"] * 1.2
    grow_csr = t("csr", 1)["time_s"] / t("csr", 0)["time_s"]
    grow_jds = t("jds", 1)["time_s"] / t("jds", 0)["time_s"]
    assert grow_csr > 1.5 and grow_jds < 1.1
    # the Margin packs JDS tail blocks: its A groups fit the A half and are never more than CSR's
    lay = t("jds", 1)
    assert lay["a_groups"] <= t("csr", 1)["a_groups"] and lay["lmm_utilization"] <= 1.0


def test_speedup_grows_with_size_and_sparsity_and_dense_format_is_one():
    sp = {(n, s): M.evaluate(f"spmm:n={n},sparsity={s}")["total"]["speedup_vs_dense"]
          for n in (256, 1024) for s in (0.5, 0.9, 0.99)}
    assert sp[(1024, 0.99)] > sp[(1024, 0.9)] > sp[(1024, 0.5)]
    assert sp[(1024, 0.9)] > sp[(256, 0.9)]
    assert M.evaluate("spmm:n=256,sparsity=0.9", format="dense")["total"]["speedup_vs_dense"] == pytest.approx(1.0)


def test_cnn_layers_run_lowered_to_matmul():
    r = M.evaluate("alexnet")
    fc = [l for l in r["layers"] if l["kind"] == "fc"]
    conv = [l for l in r["layers"] if l["kind"] == "conv"]
    assert len(fc) == 3 and len(conv) == 5
    for lay in fc + conv:
        assert lay["feasible"] and lay["time_s"] > 0 and lay["format"] == "dense" and lay["speedup_vs_dense"] == 1
    fc11 = fc[0]
    assert fc11["col_tiles"] == 2  # 9216 inputs x 4 B overflow half a 64 KB LMM
    assert fc11["dram_a_bytes"] == pytest.approx(9216 * 4096 * 4)  # every weight crosses the link once
    # pooling is not a matrix product: it runs as a vector operation on the units' ALUs, streamed
    # over the host link (one comparison per window element, 2-way SIMD per unit)
    pools = [l for l in r["layers"] if l["kind"] == "pool"]
    assert pools and all(l["feasible"] and l["vector_unit"] == "CGRA ALUs" for l in pools)
    p3 = next(l for l in pools if l["name"] == "P3")
    assert p3["vector_ops"] == 96 * 27 * 27 * 9 and p3["dram_read_bytes"] == 96 * 55 * 55 * 4
    assert p3["time_s"] >= p3["vector_ops"] / (64 * 2 * 150e6)


def test_multi_chip_splits_exec_and_shares_the_link():
    one = M.evaluate("spmm:n=1024,sparsity=0.9")["layers"][0]
    four = M.evaluate("spmm:n=1024,sparsity=0.9", nchip=4)["layers"][0]
    assert four["states"]["EXEC"] == pytest.approx(one["states"]["EXEC"] / 4)
    assert four["b_groups"] == one["b_groups"] / 4
    assert four["dram_a_bytes"] == one["dram_a_bytes"]  # A broadcast to all chips
    assert four["dram_b_bytes"] == pytest.approx(one["dram_b_bytes"])
    assert four["time_s"] < one["time_s"]


def test_area_parts_scale_and_the_lmm_share_follows_the_bit_cell():
    """Not the 13.3 mm^2 anchor itself (fitted on it, by construction): what it splits into and how it scales."""
    a = lambda **kw: M.evaluate("spmm:n=64,sparsity=0.5", **kw)["total"]["area_mm2"]  # noqa: E731
    # 64 units x 64 KB at 0.127 um^2 per bit cell and 50 % array efficiency, computed here independently
    lmm_mm2 = 64 * 64 * 8192 * 0.127 / 0.5 * 1e-6
    assert a() - a(lmm_kb=4) == pytest.approx(lmm_mm2 * (1 - 4 / 64), rel=1e-9)
    assert a(units=128) == pytest.approx(2 * a())
    assert a(nchip=3) == pytest.approx(3 * a())
    # logic synthesised at the node's nominal clock is twice the minimum-size logic (docs/technology.md)
    assert a(clock_mhz=1000.0) - a() == pytest.approx(a() - lmm_mm2, rel=1e-9)
    assert a(lmm_kb=32) < a() < a(lmm_kb=128)
    assert a(tech_nm=14) < a()


def test_bad_parameter_values_are_user_errors(capsys):
    assert main(["evaluate", "imax", "spmm:n=64,sparsity=0.5", "--set", "format=coo"]) == 2
    err = capsys.readouterr().err
    assert "format" in err and "dense, csr, jds" in err and "Traceback" not in err


def test_start_structures_of_dense_and_sparse_runs():
    # 128 x 128: the dense loop holds 64 B columns per start, a sparse start covers W x 2 = 8
    sp = M.evaluate("spmm:n=128,sparsity=0.95")["layers"][0]
    de = M.evaluate("spmm:n=128,sparsity=0.95", format="dense")["layers"][0]
    assert (sp["bgrp"], sp["starts"]) == (8, 16) and (de["bgrp"], de["starts"]) == (64, 2)
    assert sp["speedup_vs_dense"] < 1  # 8 times the starts, the same B and C traffic
    # 1024 x 1024: both hold 8 B columns; the 4-byte dense A needs 3 groups of 8 blocks, the sparse one 1
    sp = M.evaluate("spmm:n=1024,sparsity=0.9")["layers"][0]
    de = M.evaluate("spmm:n=1024,sparsity=0.9", format="dense")["layers"][0]
    assert (de["bgrp"], de["agrp"], de["a_groups"], de["starts"]) == (8, 8, 3, 384)
    assert (sp["a_groups"], sp["starts"]) == (1, 128)


def test_state_shares_follow_the_transfers():
    # a link as effective as 1.09 GB/s (the fitted efficiency is a host-side cost; the mechanism is the point)
    fast = 1.818 * 0.6 / C.LINK_EFFICIENCY

    def largest(**kw):
        st = M.evaluate("spmm:n=1024,sparsity=0.0", format="dense", link_gbps=fast, **kw)["layers"][0]["states"]
        return max(st, key=st.get)

    assert largest() == "EXEC"  # A kept, B swapped
    assert largest(lmm_opt=False) == "LOAD"  # A re-sent for every B group
    dense = M.evaluate("spmm:n=1024,sparsity=0.9", format="dense")["layers"][0]
    csr = M.evaluate("spmm:n=1024,sparsity=0.9")["layers"][0]
    share = lambda lay, s: lay["states"][s] / sum(lay["states"].values())  # noqa: E731
    assert share(csr, "DRAIN") > share(dense, "DRAIN")  # loads shrink with sparsity, C does not
    assert csr["dram_c_bytes"] * 3 == dense["dram_c_bytes"]  # the dense run drains C once per A group


def test_ivs_pays_for_its_index_units():
    j = M.evaluate("spmm:n=512,sparsity=0.9")["layers"][0]
    v = M.evaluate("spmm:n=512,sparsity=0.9", schedule="ivs")["layers"][0]
    assert (j["agrp"], v["agrp"]) == (8, 1)  # 512 rows x 64 B fill an IVS offset unit's half with one block
    assert v["a_groups"] > j["a_groups"] and v["time_s"] > j["time_s"]


@pytest.mark.parametrize("wl", ["alexnet-conv", "vgg16", "spmm:n=96,sparsity=0.9"])
def test_batch_of_random_points_equals_each_point_alone_with_layers_and_reasons(wl):
    """Shared per-batch groups, the whole-batch screen and the plan caches give every point of a batch
    (random, mostly infeasible, some repeated structures) the numbers and reasons it gets alone."""
    rows = M.params.random_rows(40, np.random.default_rng(7))
    rows += [dict(rows[0], clock_mhz=rows[0]["clock_mhz"] / 2), M.params.defaults()]  # same structure, other clock
    batch = assert_alone_equals_batch(M, wl, rows)
    assert batch.feasible.any() and not batch.feasible.all()


def test_clock_costs_kept_per_point_set_equal_the_technology_table():
    """The model keeps tech.clock_costs for the last few point sets, keyed by the clocks and nodes."""
    from archmodels import tech
    from archmodels.imax.model import _CLOCK_COSTS, _clock_costs

    sets = [{"clock_mhz": np.array([100.0, 150.0 + i]), "tech_nm": np.array([28, 14])} for i in range(12)]
    sets.append({"clock_mhz": np.array([100.0, 150.0]), "tech_nm": np.array([28, 28])})  # same clocks, other nodes
    for pts in sets + sets[::-1]:
        got, want = _clock_costs(pts), tech.clock_costs(pts["clock_mhz"], pts["tech_nm"])
        assert np.array_equal(got.vdd_ratio, want.vdd_ratio, equal_nan=True)
        assert np.array_equal(got.energy_scale, want.energy_scale, equal_nan=True)
    assert len(_CLOCK_COSTS) <= 8

"""Multi-core NN accelerator (spec multicore.md): counting rule, IB policy, cycles, contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dse
from archmodels import get_model
from archmodels.multicore.model import PLACEMENTS, cyclic_misses, simulate_misses

from .conftest import evaluate_json

PUBLISHED_FC1 = {  # placement: (reads, writes) per core, spec multicore.md §4
    "B": (1056, 32), "T1": (66, 2), "TR1": (66, 2), "T2": (98, 34), "TR2": (36, 34),
}


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_fc1_shared_memory_counts_match_paper(placement):
    layer = dse.evaluate("multicore", "fc1", placement=placement)["layers"][0]
    assert (layer["shm_reads_per_core"], layer["shm_writes_per_core"]) == PUBLISHED_FC1[placement]


def test_cli_contract_tr2_reads_36():
    r = evaluate_json("multicore", "fc1", "placement=TR2")
    assert r["layers"][0]["shm_reads_per_core"] == 36


def _cycles(workload, **kw):
    return {p: dse.evaluate("multicore", workload, placement=p, **kw)["total"]["cycles"] for p in PLACEMENTS}


def test_fc1_cycle_ordering_of_the_paper():
    c = _cycles("fc1")
    assert c["T1"] == c["TR1"] < c["TR2"] < c["T2"] < c["B"]


@pytest.mark.parametrize("workload", ["fc1", "fc2", "fc3"])
def test_every_16_core_placement_beats_baseline_and_reuse_helps_t2(workload):
    c = _cycles(workload)
    assert all(c[p] < c["B"] for p in ("T1", "TR1", "T2", "TR2"))
    assert c["TR2"] < c["T2"]
    assert c["T1"] == c["TR1"]  # 2.5x more chunks than entries: no reuse


def test_reuse_gain_grows_with_size():
    """TR2 overtakes T1 once the input grouping's reuse saves more than its partial sums cost."""
    c2, c3 = _cycles("fc2"), _cycles("fc3")
    assert c2["TR2"] < c2["T1"] and c3["TR2"] < c3["T1"]


@pytest.mark.parametrize("n,passes,entries", [(32, 32, 16), (8, 5, 16), (16, 3, 16), (17, 4, 16), (5, 1, 1), (40, 7, 39)])
@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_closed_form_misses_equal_policy_simulation(n, passes, entries, policy):
    assert int(cyclic_misses(n, passes, entries, policy)) == simulate_misses(n, passes, entries, policy)


def test_bigger_input_buffer_enables_reuse_for_t1():
    small = dse.evaluate("multicore", "fc1", placement="TR1", input_buffer_entries=16)["layers"][0]
    big = dse.evaluate("multicore", "fc1", placement="TR1", input_buffer_entries=32)["layers"][0]
    assert big["shm_reads_per_core"] == 32 + 2 < small["shm_reads_per_core"] == 66


def test_input_reuse_knob_turns_t2_into_tr2():
    t2r = dse.evaluate("multicore", "fc1", placement="T2", input_reuse=True)["layers"][0]
    assert t2r["shm_reads_per_core"] == PUBLISHED_FC1["TR2"][0]


def test_uneven_split_uses_busiest_core():
    # 100 neurons over 16 cores: 7 neurons per core -> 1 output chunk of 16
    layer = dse.evaluate("multicore", "fc:100".replace("fc:100", "matmul:m=100,k=64,cols=1"), placement="T1")["layers"][0]
    assert layer["shm_reads_per_core"] == 1 * (4 + 1)


def test_higher_clock_never_more_cycles_and_less_time():
    m = get_model("multicore")
    res = m.evaluate_points("fc2", [{"clock_mhz": f} for f in (300.0, 606.0, 1200.0)])
    t = res.totals["time_s"]
    assert t[0] > t[1] > t[2]


def test_weights_that_do_not_fit_stream_from_dram():
    fit = dse.evaluate("multicore", "fc2", placement="B", weight_buffer_kb=4096.0)
    spill = dse.evaluate("multicore", "fc2", placement="B", weight_buffer_kb=1024.0)
    assert fit["total"]["dram_read_bytes"] == 0
    assert spill["total"]["dram_read_bytes"] == 1280 * 1280 * 2
    assert spill["total"]["time_s"] > fit["total"]["time_s"]


def test_t2_partial_sums_of_big_conv_layers_are_tiled_through_dram():
    small = dse.evaluate("multicore", "alexnet-conv", placement="TR2")
    big = dse.evaluate("multicore", "alexnet-conv", placement="TR2", shm_kb=16384.0)
    assert small["feasible"] and big["feasible"]
    c1, c1_big = small["layers"][0], big["layers"][0]
    assert c1_big["shm_tiles"] == 1 and c1_big["dram_bytes"] == 0  # fits: the paper's setting
    # C1's maps + 16 cores' partial sums exceed 4 MB: tiles along output rows, input read once
    # (plus the 11 - 4 rows each tile border re-reads), output written once
    assert c1["shm_tiles"] > 1
    in_b, out_b = 3 * 227 * 227 * 2, 96 * 55 * 55 * 2
    halo = (11 - 4) * (c1["shm_tiles"] - 1) / 227
    assert c1["dram_read_bytes"] == pytest.approx(in_b * (1 + halo))
    assert c1["dram_write_bytes"] == out_b
    from archmodels import tech

    dram_j = float(tech.dram_energy_j(c1["dram_read_bytes"], c1["dram_write_bytes"], small["params"]["dram"]))
    assert c1["energy_j"] > dram_j > 0 and c1["time_s"] >= c1_big["time_s"]


def test_too_small_shared_memory_is_infeasible_not_an_error():
    r = dse.evaluate("multicore", "fc3", shm_kb=8.0)
    assert r["feasible"] is False and "shared memory too small" in r["infeasible_reason"]
    t = r["total"]["time_s"]  # metrics are still reported: a finite, positive time (JSON null would be NaN)
    assert isinstance(t, float) and math.isfinite(t) and t > 0


def test_multilayer_fc_and_conv_networks_run():
    r = dse.evaluate("multicore", "alexnet", placement="T1")
    assert r["feasible"] and len(r["layers"]) == 11
    assert r["total"]["macs"] == sum(l["macs"] for l in r["layers"])
    assert r["total"]["time_s"] == pytest.approx(sum(l["time_s"] for l in r["layers"]))


def test_sparse_layers_are_reported_infeasible():
    r = dse.evaluate("multicore", "spmv:n=64,sparsity=0.5")
    assert not r["feasible"] and "does not run spmv" in r["infeasible_reason"]


def test_area_grows_with_cores_and_buffers():
    m = get_model("multicore")
    a = m.evaluate_points("fc1", [{"cores": 8}, {"cores": 16}, {"cores": 16, "weight_buffer_kb": 4096.0}]).totals["area_mm2"]
    assert a[0] < a[1] < a[2]


def test_batch_equals_scalar_point_by_point():
    m = get_model("multicore")
    rng = np.random.default_rng(0)
    rows = [{"cores": int(rng.integers(1, 64)), "ni": int(rng.choice([8, 16, 32])), "no": int(rng.choice([8, 16])),
             "placement": str(rng.choice(PLACEMENTS)), "clock_mhz": float(rng.uniform(100, 1000)),
             "input_buffer_entries": int(rng.integers(1, 64)), "shm_kb": float(rng.choice([16.0, 4096.0])),
             "ib_policy": str(rng.choice(["lru", "fifo"])), "value_bits": int(rng.choice([8, 16, 32])),
             "tech_nm": int(rng.choice([28, 14]))} for _ in range(40)]
    batch = m.evaluate_points("alexnet", rows)
    assert not batch.feasible.all() and batch.feasible.any()  # both kinds present
    for i, row in enumerate(rows):
        assert batch.point(i) == m.evaluate("alexnet", **row)

"""ReNA's one-point path (issue 15): a point alone is costed layer after layer in Python numbers
(``archmodels/num.py``), a batch over (layers x points) numpy arrays, by the same formulas. They must
give the same numbers, states, labels, totals and reasons, bit for bit."""

from __future__ import annotations


import numpy as np
import pytest

from archmodels import get_model
from archmodels.testing import assert_alone_equals_batch
from archmodels import tech
from archmodels.rena import dram, flows, resources as res
from archmodels.rena.fpga_devices import DEVICES
from workloads import Workload
from workloads.layers import FC, Conv2D, MatMul, Pool, SpMM, Vector

M = get_model("rena")

#: pooling first (its row is costed after the convolutions and FC layers: rows out of layer order), a vector
#: layer (the shared vector path) and a sparse product (not a ReNA layer: NaN metrics, infeasible)
POOL_FIRST = Workload("pool-first", (
    Pool("pool0", channels=3, in_h=64, in_w=64, kernel=2, stride=2),
    Conv2D("conv1", in_ch=3, out_ch=40, kernel_h=3, kernel_w=3, in_h=32, in_w=32, padding=1),
    Vector("relu1", op="relu", ops=40 * 32 * 32, in_elems=40 * 32 * 32, out_elems=40 * 32 * 32),
    Conv2D("conv2", in_ch=40, out_ch=64, kernel_h=3, kernel_w=3, in_h=32, in_w=32, padding=1, groups=4),
    Pool("pool2", channels=64, in_h=32, in_w=32, kernel=2, stride=2),
    FC("fc3", inputs=64 * 16 * 16, outputs=100, batch=3),
    MatMul("mm4", m=37, k=100, n=19),
))
SPARSE = Workload("with-sparse", (
    Conv2D("conv1", in_ch=3, out_ch=16, kernel_h=3, kernel_w=3, in_h=16, in_w=16),
    SpMM("sp2", m=64, k=64, n=8, sparsity=0.9, nnz=410),
    FC("fc3", inputs=16 * 14 * 14, outputs=10),
))


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space (both targets, both devices, both widths, auto and set
    defaults, infeasible corners), and the defaults of each target and device."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    for row in rows[::3]:  # a third at the target's defaults (clock, bursts, lanes, ports): mostly feasible
        row.update(clock_mhz=0.0, dram_burst_cycles=0.0, transfer_bits=0, array_ports="auto",
                   pb_rows=int(rng.integers(1, 128)), pb_cols=int(rng.integers(1, 128)))
    for row in rows[1::6]:  # ASIC clocks above nominal, up to a little above the maximum (the supply's bisection)
        node = row["tech_nm"]
        row.update(target="asic", clock_mhz=float(rng.uniform(tech.F_NOM_MHZ[node], tech.fmax_mhz(node) * 1.02)))
    return rows + [{}, {"target": "fpga"}, {"target": "fpga", "device": "arria10-gx1150"},
                   {"target": "fpga", "pb_rows": 128, "pb_cols": 128}]



@pytest.mark.parametrize("wl", ["vgg16", "alexnet", "matmul:m=300,k=200,n=50", POOL_FIRST, SPARSE])
def test_each_point_alone_equals_the_batch_states_and_reasons(wl):
    rows = _rows(150, 21)
    batch = assert_alone_equals_batch(M, wl, rows)
    ok, fpga = batch.feasible_config, batch.points["target"] == "fpga"
    assert (ok & fpga).any() and (ok & ~fpga).any() and (~ok & fpga).any() and (~ok & ~fpga).any()
    assert batch.feasible.any() != (wl is SPARSE)  # a sparse product: every point infeasible


def test_python_numbers_give_the_array_values():
    """The helpers, flows, bursts, resources and SRAM energy on Python numbers == on one-element arrays."""
    rng = np.random.default_rng(8)
    for _ in range(300):
        cfg_py = flows.ArrayConfig(int(rng.integers(1, 1025)), int(rng.integers(1, 1025)), int(rng.integers(1, 3)),
                                   int(rng.choice([1, 2, 4, 8, 16])), bool(rng.random() < 0.5),
                                   int(rng.choice([8, 16])) / 8.0)
        cfg_np = flows.ArrayConfig(*(np.array([v]) for v in (cfg_py.rows, cfg_py.cols, cfg_py.mults, cfg_py.tpv,
                                                              cfg_py.shared, cfg_py.value_bytes)))
        for fn, args in ((flows.conv_flow, rng.integers(1, 5000, 4)), (flows.fc_flow, rng.integers(1, 30000, 3)),
                         (flows.pool_flow, rng.integers(1, 10**6, 2))):
            args = [int(a) for a in args]
            got = fn(cfg_py, *args)
            want = fn(cfg_np, *(np.array([[a]]) for a in args))
            for key in ("compute_cycles", "mac_cycles", "passes", "x_read_bytes", "x_write_bytes"):
                assert type(getattr(got, key)) is float and getattr(got, key) == getattr(want, key).item(), key
            assert tuple(got.w_bytes) == tuple(w.item() for w in want.w_bytes)
        x, w1, w2 = (float(v) for v in rng.integers(0, 10**8, 3))
        c, m, burst = int(rng.integers(1, 17)), int(rng.integers(1, 3)), float(rng.uniform(1, 400))
        assert dram.dram_cycles(x, w1, w2, c, m, burst) == dram.dram_cycles(
            np.array([[x]]), np.array([[w1]]), np.array([[w2]]), np.array([c]), np.array([m]), np.array([burst])).item()
        nominal, gbps = float(rng.choice([0.5, 64.0, 205.0])), float(rng.uniform(0.1, 1000))
        hz = float(rng.uniform(1, 3e9))
        assert dram.burst_cycles(nominal, gbps, hz) == dram.burst_cycles(np.array([nominal]), np.array([gbps]),
                                                                         np.array([hz])).item()
        pbs, bits = cfg_py.rows * cfg_py.cols, int(rng.choice([8, 16]))
        for dev in DEVICES.values():
            assert res.dsp_blocks(pbs, m, bits, dev) == res.dsp_blocks(np.array([pbs]), np.array([m]), np.array([bits]),
                                                                      dev).item()
        assert res.logic_alms(pbs, m, bits) == res.logic_alms(np.array([pbs]), np.array([m]), np.array([bits])).item()
        assert round(res.logic_alms(pbs, m, bits)) == np.round(res.logic_alms(np.array([pbs]), m, bits)).item()
        assert res.bram_mbit(pbs, bits) == res.bram_mbit(np.array([pbs]), np.array([bits])).item()
        for node in tech.NODES_NM:
            f = float(rng.uniform(0.1, 3000))
            got, want = (res.asic_area_parts_mm2(pbs, m, bits, node, f),
                         res.asic_area_parts_mm2(np.array([pbs]), np.array([m]), bits, node, np.array([f])))
            assert {k: float(v) for k, v in got.items()} == {k: v.item() for k, v in want.items()}

"""A bare numpy roofline: what plain array arithmetic costs on the same batch and layers.

The yardstick of ``make bench``'s throughput tables. For a batch of ``n``
design points it draws five parameter arrays of length ``n`` (PE count,
clock, DRAM bandwidth, data width, buffer size) and, for every layer of the
workload, runs 21 numpy operations over them:

* roofline time = max(ops / (PEs x clock), bytes / bandwidth), ops = MACs +
  vector ops, bytes = (inputs + weights + outputs) x word bytes;
* utilization = compute time / time;
* energy = ops x E_MAC x word_bytes^2 + bytes x E_DRAM + leakage x time;
* a fit check (weights must fit the buffer) and-ed into feasibility;
* running totals of time, energy, DRAM bytes and time-weighted utilization.

Before the layer loop: area and leakage from PEs and buffer (3 operations);
after it: utilization, power and energy-delay product (3 operations). The
values are not a model of any architecture (the constants are round
numbers): numpy's cost of an operation depends on the array length, not on
the values, so this measures the floor that array arithmetic over
"layers x points" sets, for the same batch size and the same layers the
model evaluates. A model doing ~20 operations per layer per metric it
reports can approach it only if it has no other overhead.

:func:`evaluate_stacked` computes the same totals with the layers stacked
into a (layers x points) array: about 25 operations for the whole network
instead of 21 per layer, what "vectorize across layers too" (issue 15) buys
where numpy's per-call overhead dominates (one point, small batches).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workloads.layers import Layer

OPS_PER_LAYER = 21

# round numbers, only so that the arithmetic is not trivially constant
E_MAC_J = 0.2e-12  # per operation at 8 bits, scaled by word_bytes^2
E_DRAM_J_PER_B = 20e-12
AREA_MM2_PER_PE = 0.005
AREA_MM2_PER_B = 1.5e-6
LEAK_W_PER_MM2 = 0.01


@dataclass(frozen=True)
class LayerSizes:
    """The per-layer scalars the roofline reads (struct of arrays over layers)."""

    ops: np.ndarray  # MACs + vector ops
    elems: np.ndarray  # inputs + weights + outputs
    weight_elems: np.ndarray

    @classmethod
    def of(cls, layers: list[Layer]) -> LayerSizes:
        return cls(np.array([float(l.macs + l.vector_ops) for l in layers]),
                   np.array([float(l.input_elems + l.weight_elems + l.output_elems) for l in layers]),
                   np.array([float(l.weight_elems) for l in layers]))


def random_params(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Parameter arrays of ``n`` points: log-uniform PEs, clock, bandwidth, buffer; 8/16/32-bit words."""
    def log_uniform(lo: float, hi: float) -> np.ndarray:
        return np.exp(rng.uniform(np.log(lo), np.log(hi), n))

    return {"pes": np.round(log_uniform(16, 4096)), "clock_hz": log_uniform(100e6, 1e9),
            "bw_b_per_s": log_uniform(1e9, 100e9), "bits": rng.choice([8.0, 16.0, 32.0], n),
            "buf_b": np.round(log_uniform(16e3, 16e6))}


def evaluate(sizes: LayerSizes, p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Network totals over the points of ``p``: 3 + 21 per layer + 3 array operations."""
    pes, clock, bw, bits, buf = p["pes"], p["clock_hz"], p["bw_b_per_s"], p["bits"], p["buf_b"]
    area = pes * AREA_MM2_PER_PE + buf * AREA_MM2_PER_B
    leak_w = area * LEAK_W_PER_MM2
    total_t = total_e = dram = util_t = 0.0
    ok = True
    for ops, elems, w_elems in zip(sizes.ops.tolist(), sizes.elems.tolist(), sizes.weight_elems.tolist()):
        word_b = bits * 0.125  # 1
        traffic_b = elems * word_b  # 2
        peak = pes * clock  # 3
        compute_s = ops / peak  # 4
        mem_s = traffic_b / bw  # 5
        t = np.maximum(compute_s, mem_s)  # 6
        util = compute_s / t  # 7
        scale = word_b * word_b  # 8
        e = (ops * E_MAC_J) * scale  # 9
        e = e + traffic_b * E_DRAM_J_PER_B  # 10, 11
        e = e + leak_w * t  # 12, 13
        fits = buf >= w_elems * word_b  # 14, 15
        ok = ok & fits  # 16
        total_t = total_t + t  # 17
        total_e = total_e + e  # 18
        dram = dram + traffic_b  # 19
        util_t = util_t + util * t  # 20, 21
    return {"time_s": total_t, "energy_j": total_e, "dram_bytes": dram, "area_mm2": area,
            "utilization": util_t / total_t, "power_w": total_e / total_t, "edp_js": total_e * total_t,
            "feasible": np.broadcast_to(ok, area.shape)}


def evaluate_stacked(sizes: LayerSizes, p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """:func:`evaluate` over a (layers x points) array: ~25 operations for the whole network."""
    pes, clock, bw, bits, buf = p["pes"], p["clock_hz"], p["bw_b_per_s"], p["bits"], p["buf_b"]
    area = pes * AREA_MM2_PER_PE + buf * AREA_MM2_PER_B
    leak_w = area * LEAK_W_PER_MM2
    word_b = bits * 0.125
    traffic_b = sizes.elems[:, None] * word_b
    compute_s = sizes.ops[:, None] / (pes * clock)
    t = np.maximum(compute_s, traffic_b / bw)
    e = (sizes.ops[:, None] * E_MAC_J) * (word_b * word_b) + traffic_b * E_DRAM_J_PER_B + leak_w * t
    ok = (buf >= sizes.weight_elems[:, None] * word_b).all(axis=0)
    total_t, total_e = t.sum(axis=0), e.sum(axis=0)
    return {"time_s": total_t, "energy_j": total_e, "dram_bytes": traffic_b.sum(axis=0), "area_mm2": area,
            "utilization": compute_s.sum(axis=0) / total_t, "power_w": total_e / total_t,
            "edp_js": total_e * total_t, "feasible": ok}

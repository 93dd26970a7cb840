"""A generic weight-stationary systolic array: the example to copy for your own model.

``rows x cols`` PEs hold a weight tile; input vectors stream in from the left
and partial sums flow down (weight stationary, as in TPU v1 and SCALE-Sim's
``ws`` dataflow). Every conv/FC/matmul layer is a GEMM ``O[M x N] = X[M x K]
W[K x N]`` (``workloads.lowering``: K = window, N = filters, M = output
pixels), one per convolution group.

* Folds: ``ceil(K / rows) * ceil(N / cols)`` weight tiles. Each takes
  ``2*rows + cols + M - 2`` cycles: load the tile (rows), stream M vectors
  with fill and drain (rows + cols - 2). SCALE-Sim 3.0's ws runs fit the same
  form (``../shared/reference/scalesim/README.md``; tests/test_examples.py).
* Buffer: one on-chip SRAM of ``sram_kb`` holds two weight tiles (double
  buffering); a tile that does not fit makes the design infeasible. Loop
  order: N folds outside, K folds inside. The input is read from DRAM once
  if it fits beside one N fold of 32-bit partial sums, else once per N fold;
  partial sums that do not fit spill to DRAM between K folds. Weights are
  read once, outputs written once.
* Time: DRAM transfers overlap compute (double buffering): cycles =
  max(compute, DRAM bytes / bytes per cycle); the excess is the ``DRAM_STALL``
  state. Pooling runs in a ``cols``-lane vector unit after the array.
* Energy and area from ``archmodels.tech``: MACs, SRAM bytes moved, DRAM
  bytes; PE logic (MAC x the fitted PE overhead) + SRAM macro.
"""

from __future__ import annotations

import numpy as np

from archmodels import tech
from archmodels.base import Model
from archmodels.params import Param, Points, batch_size
from archmodels.result import LAYER_METRICS, LayerBatch, Metric, seqsum
from workloads import Workload
from workloads.layers import Layer, Pool
from workloads.lowering import as_matmuls

ACC_BYTES = 4  # 32-bit partial sums


def _per_point(fn, bits: np.ndarray, node: np.ndarray) -> np.ndarray:
    """``fn(dtype, node_nm)`` of the tech table for every design point."""
    return tech.per_point(lambda b, n: fn(tech.dtype_of(b), n), bits, node)


def _sram_pj_per_byte(size_kb: np.ndarray, node: np.ndarray) -> np.ndarray:
    return sum(np.where(node == n, tech.sram_energy_pj_per_byte(size_kb, n), 0.0) for n in tech.NODES_NM)


class SystolicArray(Model):
    name = "systolic"
    title = "Weight-stationary systolic array with one SRAM buffer (example model)"
    spec = "examples/systolic_array.py (module docstring)"
    SUPPORTS = ("conv", "pool", "fc", "matmul")

    PARAMS = (
        Param("rows", "int", 32, 1, 512, unit="PEs", doc="PE rows (reduction dimension K)"),
        Param("cols", "int", 32, 1, 512, unit="PEs", doc="PE columns (filters / outputs N)"),
        Param("sram_kb", "float", 512.0, 4, 65536, unit="KB", doc="on-chip SRAM buffer"),
        Param("dram_gbps", "float", 25.6, 0.1, 1000, unit="GB/s", doc="DRAM bandwidth"),
        Param("clock_mhz", "float", 700.0, 50, 2000, unit="MHz", doc="array clock"),
        Param("value_bits", "choice", 8, choices=(8, 16), unit="bit", doc="integer width of data and weights"),
        Param("tech_nm", "choice", 28, choices=tech.NODES_NM, unit="nm", doc="technology node for energy and area"),
        Param("dram", "choice", "ddr4", choices=tech.DRAM_NAMES, doc="DRAM type (technology-table row) for its energy"),
    )
    LAYER_METRICS = (
        Metric("folds", "tiles", "weight tiles loaded into the array", integer=True),
        Metric("sram_bytes", "B", "bytes read and written in the SRAM buffer"),
    )
    TOTAL_METRICS = (
        Metric("sram_bytes", "B", "sum over layers"),
        Metric("pes", "PEs", "rows x cols", integer=True, combine="max"),
    )

    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        return [self._layer(layer, pts) for layer in workload.layers]

    def _layer(self, layer: Layer, pts: Points) -> LayerBatch:
        lb = LayerBatch(layer, batch_size(pts))
        rows, cols, vb = pts["rows"], pts["cols"], pts["value_bits"] / 8.0
        gemms = as_matmuls(layer)
        if isinstance(layer, Pool):
            compute = np.ceil(layer.ops / cols) + 0.0
            dram_rd, dram_wr = layer.input_elems * vb, layer.output_elems * vb
            sram, folds = dram_rd + dram_wr, 0.0
            op_pj = layer.ops * _per_point(lambda d, n: tech.op_energy_pj("add", d, n), pts["value_bits"], pts["tech_nm"])
        elif gemms:  # G identical GEMMs: K = mm.k on rows, N = mm.m on cols, M = mm.n streamed
            g, mm = len(gemms), gemms[0]
            fk, fn = np.ceil(mm.k / rows), np.ceil(mm.m / cols)
            folds = g * fk * fn
            compute = folds * (2 * rows + cols + mm.n - 2)
            x_b, w_b, o_b = layer.input_elems / g * vb, layer.weight_elems / g * vb, layer.output_elems / g * vb
            psum_b = mm.n * np.minimum(mm.m, cols) * ACC_BYTES  # one N fold of partial sums
            tile_b = 2 * rows * cols * vb
            free = pts["sram_kb"] * 1024.0 - tile_b
            if (free < 0).any():
                lb.infeasible(free < 0, np.array([f"two {r}x{c} weight tiles ({t / 1024:g} KB) exceed sram_kb={s:g}"
                                                  for r, c, t, s in zip(rows, cols, tile_b, pts["sram_kb"])], dtype=object))
            x_reads = np.where(x_b + psum_b <= free, 1.0, fn)
            spill = np.where(psum_b <= free, 0.0, (fk - 1) * mm.n * mm.m * ACC_BYTES)
            dram_rd = g * (x_b * x_reads + w_b + spill)
            dram_wr = g * (o_b + spill)
            # SRAM: every DRAM byte in or out, inputs streamed once per fold, psums read+written per K fold
            sram = dram_rd + dram_wr + g * (mm.k * mm.n * vb * fn + 2 * fk * mm.n * mm.m * ACC_BYTES)
            op_pj = layer.macs * _per_point(tech.mac_energy_pj, pts["value_bits"], pts["tech_nm"])
        else:  # sparse products: reported infeasible by the base class
            return lb.set(**{m.name: np.nan for m in (*LAYER_METRICS, *self.LAYER_METRICS) if m.name != "dram_bytes"})
        bytes_per_cycle = pts["dram_gbps"] * 1e3 / pts["clock_mhz"]
        cycles = np.maximum(compute, (dram_rd + dram_wr) / bytes_per_cycle)
        energy_pj = op_pj + sram * _sram_pj_per_byte(pts["sram_kb"], pts["tech_nm"]) + \
            tech.dram_energy_j(dram_rd, dram_wr, pts["dram"]) * 1e12
        lb.set(cycles=cycles, time_s=cycles / (pts["clock_mhz"] * 1e6), utilization=layer.macs / (cycles * rows * cols),
               dram_read_bytes=dram_rd, dram_write_bytes=dram_wr, energy_j=energy_pj * 1e-12,
               folds=folds, sram_bytes=sram)
        lb.states["COMPUTE"] = compute + 0.0
        lb.states["DRAM_STALL"] = cycles - compute
        return lb

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        pes = pts["rows"] * pts["cols"]
        pe_mm2 = _per_point(lambda d, n: tech.pe_logic_area_mm2(d, n), pts["value_bits"], pts["tech_nm"])
        sram_mm2 = sum(np.where(pts["tech_nm"] == n, tech.sram_area_mm2(pts["sram_kb"], n), 0.0) for n in tech.NODES_NM)
        sram_total = seqsum((lb.metrics["sram_bytes"] for lb in layers), len(pes))  # same order for any batch
        static = sum(np.where(pts["tech_nm"] == n, tech.static_power_w(pes * pe_mm2, pts["sram_kb"], n), 0.0)
                     for n in tech.NODES_NM)  # leakage of the PE logic and the SRAM
        return {"area_mm2": pes * pe_mm2 + sram_mm2, "hw_mac_units": pes.astype(float), "static_power_w": static,
                "sram_bytes": sram_total, "pes": pes.astype(float)}

"""Costing of vector layers (work without multiply-accumulates), shared by every model.

A vector layer (``workloads.layers.Vector``: elementwise ops, reductions,
normalisations, softmax; and pooling on models without a pooling unit) is
streamed: its activations are read from where they live (DRAM, or an on-chip
memory), ``vector_ops`` operations run on the model's vector unit
(:class:`VectorUnit`: the CGRA's ALUs, a PB array's lanes, a host CPU, ...),
and the result is written back. Streaming is double buffered, so

    time_s = max(vector_ops / ops_per_s, bytes / stream_bytes_per_s)

with bytes = (inputs + parameters + outputs) x element size (a model may also
route a layer with MACs here, e.g. IMAX's depthwise convolutions: each MAC
is one ALU pass, and utilization counts them). DRAM traffic is
those bytes, unless the model keeps activations in an on-chip memory that
holds them (``onchip_kb``). Energy = vector_ops x ``op_energy_pj`` + bytes x
the energy per byte where the data live (the model passes the energy of one
ALU pass and of a byte of its DRAM or on-chip memory, from
:mod:`archmodels.tech` or its spec). Each model documents
its unit in ``docs/models/<model>.md`` ("Vector layers").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from workloads.layers import Layer

from . import tech
from .result import LAYER_METRICS, LayerBatch, Metric


@dataclass(frozen=True)
class VectorUnit:
    """Where and how fast a model runs vector work (arrays over design points, or scalars).

    Activations live in DRAM, unless the model has an on-chip memory that
    holds them (``onchip_kb`` > 0) and a layer's bytes fit in it.
    """

    label: str  # what runs it, e.g. "CGRA ALUs" (reported per layer as ``vector_unit``)
    ops_per_s: Any
    clock_hz: Any  # converts time to the model's cycles
    elem_bytes: Any
    dram_bytes_per_s: Any
    op_energy_pj: Any  # per operation, at the design point's clock (tech.clock_costs energy scale applied)
    dram_read_pj_per_byte: Any = 0.0  # the model's technology-table DRAM row (tech.dram_pj_per_byte)
    dram_write_pj_per_byte: Any = 0.0
    onchip_kb: Any = 0.0
    onchip_bytes_per_s: Any = np.inf
    onchip_pj_per_byte: Any = 0.0


def layer_bytes(layer: Layer, elem_bytes) -> tuple[np.ndarray, np.ndarray]:
    """(read, written) bytes of a streamed vector layer."""
    eb = np.asarray(elem_bytes, dtype=float)
    return (layer.input_elems + layer.weight_elems) * eb, layer.output_elems * eb


def per_node(fn: Callable[[int], float], nodes) -> np.ndarray:
    """``fn(node)`` for an array of technology nodes (tech functions take one node)."""
    nodes = np.asarray(nodes)
    out = np.empty(nodes.shape, dtype=float)
    for nd in tech.distinct(nodes):
        out[nodes == nd] = fn(int(nd))
    return out


def cost(layer: Layer, unit: VectorUnit, n: int, model_metrics=()) -> LayerBatch:
    """The contract metrics of ``layer`` run on ``unit`` (see module doc).

    Model-specific layer metrics (``model_metrics``) are zero, except
    ``dram_energy_j`` / ``compute_energy_j`` where a model declares them.
    """
    ops = float(layer.vector_ops + layer.macs)  # a MAC routed here (a depthwise conv) is one ALU pass
    rd, wr = layer_bytes(layer, unit.elem_bytes)
    moved = rd + wr
    onchip = moved <= np.asarray(unit.onchip_kb, dtype=float) * 1024.0
    stream = np.where(onchip, unit.onchip_bytes_per_s, unit.dram_bytes_per_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        time_s = np.broadcast_to(np.maximum(ops / unit.ops_per_s, moved / stream), (n,))
    dram_rd, dram_wr = np.where(onchip, 0.0, rd), np.where(onchip, 0.0, wr)
    compute_pj = ops * np.asarray(unit.op_energy_pj, dtype=float)
    dram_pj = dram_rd * unit.dram_read_pj_per_byte + dram_wr * unit.dram_write_pj_per_byte
    move_pj = np.where(onchip, moved * unit.onchip_pj_per_byte, dram_pj)
    lb = LayerBatch(layer, n)
    lb.set(**{m.name: 0.0 for m in model_metrics})
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(time_s > 0, layer.macs / (time_s * unit.ops_per_s), 0.0)
    lb.set(cycles=time_s * unit.clock_hz, time_s=time_s, utilization=util, dram_read_bytes=dram_rd,
           dram_write_bytes=dram_wr, energy_j=(compute_pj + move_pj) * 1e-12)
    names = {m.name for m in model_metrics}
    if "compute_energy_j" in names:
        lb.set(compute_energy_j=compute_pj * 1e-12)
    if "dram_energy_j" in names:
        lb.set(dram_energy_j=dram_pj * 1e-12)
    lb.labels["vector_unit"] = np.full(n, unit.label, dtype=object)
    return lb


def keys_of(like: list[LayerBatch]) -> tuple[list[str], list[str], list[str]]:
    """(metric, state, label) keys of the layers ``like``, each in first-seen order (for :func:`complete`)."""
    return (list(dict.fromkeys(k for lb in like for k in lb.metrics)),
            list(dict.fromkeys(k for lb in like for k in lb.states)),
            list(dict.fromkeys(k for lb in like for k in lb.labels)))


def complete(lb: LayerBatch, like: list[LayerBatch], keys: tuple[list[str], list[str], list[str]] | None = None) -> None:
    """Give ``lb`` every metric and state key the other layers have (zero), so model totals can sum them.

    ``keys``: :func:`keys_of` ``like``, computed once when several layers are completed against the same list.
    """
    metrics, states, labels = keys if keys is not None else keys_of(like)
    for key in metrics:
        if key not in lb.metrics:
            lb.metrics[key] = np.zeros(lb.n)
    for key in states:
        if key not in lb.states:
            lb.states[key] = np.zeros(lb.n)
    for key in labels:
        if key not in lb.labels:
            lb.labels[key] = np.full(lb.n, None, dtype=object)


#: per-layer metrics that scale with the number of products of a batched MatMul
EXTENSIVE_UNITS = ("s", "B", "J", "cycles")


def repeat(lb: LayerBatch, times: int, decl: dict[str, Metric]) -> None:
    """Scale a layer evaluated for one product to ``times`` products run back to back."""
    units = {m.name: m.unit for m in LAYER_METRICS} | {k: m.unit for k, m in decl.items()}
    for key, arr in lb.metrics.items():
        if units.get(key) in EXTENSIVE_UNITS:
            lb.metrics[key] = arr * times
    for key, arr in lb.states.items():
        lb.states[key] = arr * times

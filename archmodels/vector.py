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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workloads.layers import Layer

from . import num, tech
from .layerarrays import dict_keys, layer_batches
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


def cost_layers(layers: Sequence[Layer], unit: VectorUnit | None, n: int, model_metrics=(),
                extra: tuple[Sequence[str], Sequence[str], Sequence[str]] = ((), (), ()),
                why: Sequence[str] | None = None) -> list[LayerBatch]:
    """The contract metrics of ``layers`` run on ``unit`` (see module doc), all layers at once: element-wise
    operations over (layers x points) arrays, one numpy call each for all the layers (a network's dozens of
    vector layers cost ~20 calls, not ~20 per layer), each layer a row (:func:`~archmodels.layerarrays.layer_batches`).

    A layer's metrics: the model-specific ones (``model_metrics``) zero, except ``dram_energy_j`` /
    ``compute_energy_j`` / ``sram_energy_j`` (the on-chip moves) where a model declares them, then the contract ones; then every metric, state and label
    key of ``extra`` (:func:`keys_of` the workload's other layers) it lacks, zero (labels None), so model totals
    can sum them. ``unit`` None: the model has no vector unit; layer i is infeasible at every point with reason
    ``why[i]``."""
    if unit is None:
        unit = VectorUnit("none", 1.0, 1.0, 1.0, 1.0, 0.0)
    rows = len(layers)
    shape = (rows, n)
    ops = np.array([float(x.vector_ops + x.macs) for x in layers]).reshape(-1, 1)
    macs = np.array([x.macs for x in layers], dtype=np.int64).reshape(-1, 1)
    eb = np.asarray(unit.elem_bytes, dtype=float)
    rd = np.array([x.input_elems + x.weight_elems for x in layers], dtype=np.int64).reshape(-1, 1) * eb
    wr = np.array([x.output_elems for x in layers], dtype=np.int64).reshape(-1, 1) * eb
    moved = rd + wr
    onchip = moved <= np.asarray(unit.onchip_kb, dtype=float) * 1024.0
    stream = np.where(onchip, unit.onchip_bytes_per_s, unit.dram_bytes_per_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        time_s = np.broadcast_to(np.maximum(ops / unit.ops_per_s, moved / stream), shape)
    dram_rd, dram_wr = np.where(onchip, 0.0, rd), np.where(onchip, 0.0, wr)
    compute_pj = ops * np.asarray(unit.op_energy_pj, dtype=float)
    dram_pj = dram_rd * unit.dram_read_pj_per_byte + dram_wr * unit.dram_write_pj_per_byte
    chip_pj = moved * unit.onchip_pj_per_byte  # the moves' energy where they stay on chip
    move_pj = np.where(onchip, chip_pj, dram_pj)
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(time_s > 0, macs / (time_s * unit.ops_per_s), 0.0)
    zeros = np.zeros(shape)
    metrics = {m.name: zeros for m in model_metrics}
    metrics.update(cycles=time_s * unit.clock_hz, time_s=time_s, utilization=util, dram_read_bytes=dram_rd,
                   dram_write_bytes=dram_wr, energy_j=(compute_pj + move_pj) * 1e-12)
    names = {m.name for m in model_metrics}
    if "compute_energy_j" in names:
        metrics["compute_energy_j"] = compute_pj * 1e-12
    if "dram_energy_j" in names:
        metrics["dram_energy_j"] = dram_pj * 1e-12
    if "sram_energy_j" in names:  # the moves that stay on chip (until 2026-11-27: 0, the energy in "other")
        metrics["sram_energy_j"] = np.where(onchip, chip_pj, 0.0) * 1e-12
    metric_keys, state_keys, label_keys = extra
    for key in metric_keys:
        metrics.setdefault(key, zeros)
    # each key its own writable (layers x points) float array (as each layer had its own arrays)
    metrics = {k: np.array(np.broadcast_to(v, shape), dtype=float) for k, v in metrics.items()}
    states = {key: np.zeros(shape) for key in state_keys}
    labels = {"fused_into": num.objects(shape, None),
              "vector_unit": num.objects(shape, unit.label)}
    for key in label_keys:
        labels.setdefault(key, num.objects(shape, None))
    feasible = reason = None
    if why is not None:
        feasible, reason = np.zeros(shape, dtype=bool), np.empty(shape, dtype=object)
        for i, text in enumerate(why):
            reason[i] = text
    return layer_batches(layers, list(range(rows)), n, metrics, states, labels, feasible, reason)


def keys_of(like: list[LayerBatch]) -> tuple[list[str], list[str], list[str]]:
    """(metric, state, label) keys of the layers ``like``, each in first-seen order (``extra`` of :func:`cost_layers`)."""
    out: tuple[dict[str, None], ...] = ({}, {}, {})  # metric, state, label keys
    read: set[tuple[int, int]] = set()  # (layer_batches call, part) whose unbuilt dicts were read: all the same keys
    for lb in like:
        d = lb.__dict__
        shared = d.get("_shared")
        for part, name in enumerate(("metrics", "states", "labels")):
            if shared is not None and name not in d and (part or shared.row_keys is None):
                if (id(shared), part) in read:
                    continue
                read.add((id(shared), part))
            out[part].update(dict.fromkeys(dict_keys(lb, name)))  # (a lazy dict is not built for this)
    return list(out[0]), list(out[1]), list(out[2])


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

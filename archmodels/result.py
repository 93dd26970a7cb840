"""Batch results and the ``dse evaluate --json`` contract built from them.

A model fills one :class:`LayerBatch` per layer (arrays over design points)
plus its model-level totals; :class:`BatchResult` aggregates the contract
totals the same way for every model and turns any point into the contract
dictionary (issue "framework core", section 4). Contract key names are a
public interface: extend, never rename.
"""

from __future__ import annotations

import math
import operator
import sys
from dataclasses import dataclass, field
from functools import cached_property, reduce
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np

from workloads.layers import Layer

from . import num
from .memo import by_identity
from .params import Points, _py, batch_size


@dataclass(frozen=True)
class Metric:
    """A declared output: name, unit, one-line doc; ``integer`` prints as int.

    ``combine`` says how a total adds up over several workloads run back to
    back on the same hardware (a study's ``combine: sum``): ``sum``
    (extensive: time, bytes, counts), ``max`` (a property of the hardware:
    area, device resources, unit counts), ``time_mean`` (a rate or share
    over the run: utilization, power, a speed-up, weighted by each
    workload's time), ``macs_mean`` (a per-operation figure, weighted by
    MACs), ``min`` (a flag that must hold for every workload).
    """

    name: str
    unit: str
    doc: str
    integer: bool = False
    combine: Literal["sum", "max", "min", "time_mean", "macs_mean"] = "sum"


# Per-layer keys every model fills (order = JSON order).
LAYER_METRICS = (
    Metric("cycles", "cycles", "accelerator clock cycles of the layer"),
    Metric("time_s", "s", "execution time"),
    Metric("utilization", "1", "busy MAC units / all MAC units over the layer's time: macs / (cycles x hw_mac_units)"),
    Metric("dram_read_bytes", "B", "bytes read from off-chip memory"),
    Metric("dram_write_bytes", "B", "bytes written to off-chip memory"),
    Metric("dram_bytes", "B", "dram_read_bytes + dram_write_bytes"),
    Metric("energy_j", "J", "energy of the layer: dynamic (MACs, SRAM, DRAM) + static_energy_j"),
    Metric("static_energy_j", "J", "leakage energy of the layer: total static_power_w x time_s"),
)

# Totals every model has (order = JSON order).
TOTAL_METRICS = (
    Metric("macs", "MAC", "multiply-accumulates of the workload", integer=True),
    Metric("vector_ops", "op", "operations that are not MACs (pooling, elementwise, reductions, softmax, ...)",
           integer=True),
    Metric("cycles", "cycles", "sum of layer cycles"),
    Metric("time_s", "s", "sum of layer times"),
    Metric("utilization", "1", "time-weighted mean of layer utilization = macs / (cycles x hw_mac_units)",
           combine="time_mean"),
    Metric("dram_read_bytes", "B", "sum over layers"),
    Metric("dram_write_bytes", "B", "sum over layers"),
    Metric("dram_bytes", "B", "sum over layers"),
    Metric("energy_j", "J", "sum over layers (plus model-level energy, if any)"),
    Metric("power_w", "W", "average power: energy_j / time_s = dynamic_power_w + static_power_w",
           combine="time_mean"),
    Metric("area_mm2", "mm2", "silicon area of the configuration", combine="max"),
    Metric("macs_per_s", "MAC/s", "macs / time_s", combine="time_mean"),
    Metric("fps", "1/s", "workloads (frames) per second: 1 / time_s", combine="time_mean"),
    Metric("hw_mac_units", "", "MAC units the hardware has, busy or not (the denominator of utilization)",
           integer=True, combine="max"),
    Metric("dynamic_power_w", "W", "(energy_j - static energy) / time_s", combine="time_mean"),
    Metric("static_power_w", "W", "leakage power of the configuration (logic and SRAM, technology table)",
           combine="max"),
)

#: a layer's energy by component, where a model reports it (EMAX's names, every built-in model's since 2026-11-27):
#: the terms its ``energy_j`` sums, summed apart; with ``static_energy_j`` they add up to ``energy_j``
ENERGY_PARTS = ("compute_energy_j", "sram_energy_j", "dram_energy_j")
#: the same parts as totals (the layers' parts summed; with static_power_w x time_s they add up to the total energy_j)
ENERGY_PART_TOTALS = (
    Metric("compute_energy_j", "J", "sum over layers: arithmetic (MACs and vector operations)"),
    Metric("sram_energy_j", "J", "sum over layers: on-chip memory accesses"),
    Metric("dram_energy_j", "J", "sum over layers: DRAM reads and writes"),
)


@dataclass(frozen=True)
class Definition:
    """A metric defined from others: ``key`` = ``formula``; ``where`` says which dictionaries (layer/total)."""

    key: str
    formula: str
    unit: str
    where: tuple[str, ...]
    compute: Any  # (entry, total) -> expected value


#: Every metric that is defined from the others, the same for every model (docs/contract.md).
#: ``check_definitions`` recomputes them from a contract dictionary.
DEFINITIONS = (
    Definition("utilization", "macs / (cycles x hw_mac_units)", "1", ("layer", "total"),
               lambda e, t: e["macs"] / (e["cycles"] * t["hw_mac_units"]) if e["cycles"] else 0.0),
    Definition("dram_bytes", "dram_read_bytes + dram_write_bytes", "B", ("layer", "total"),
               lambda e, t: e["dram_read_bytes"] + e["dram_write_bytes"]),
    Definition("static_energy_j", "static_power_w x time_s", "J", ("layer",),
               lambda e, t: t["static_power_w"] * e["time_s"]),
    Definition("energy_j", "sum of the layers' energy_j", "J", ("total",), None),
    Definition("power_w", "energy_j / time_s", "W", ("total",), lambda e, t: e["energy_j"] / e["time_s"]),
    Definition("dynamic_power_w", "power_w - static_power_w", "W", ("total",),
               lambda e, t: e["power_w"] - e["static_power_w"]),
    Definition("macs_per_s", "macs / time_s", "MAC/s", ("total",), lambda e, t: e["macs"] / e["time_s"]),
    Definition("fps", "1 / time_s", "1/s", ("total",), lambda e, t: 1.0 / e["time_s"]),
)


def check_definitions(result: dict[str, Any], rtol: float = 1e-9) -> list[str]:
    """Violations of :data:`DEFINITIONS` in a contract dictionary (a feasible point); empty if none."""
    t = result["total"]
    bad = []
    for d in DEFINITIONS:
        if d.key == "energy_j":
            expect, got = sum(lay["energy_j"] for lay in result["layers"]), t["energy_j"]
            if not math.isclose(got, expect, rel_tol=1e-6, abs_tol=1e-30) and got < expect:
                bad.append(f"total energy_j {got} < sum of layers {expect}")
            continue
        entries = ([("total", t)] if "total" in d.where else []) + \
            ([(f"layer {lay['name']}", lay) for lay in result["layers"]] if "layer" in d.where else [])
        for where, e in entries:
            expect = d.compute(e, t)
            if not math.isclose(e[d.key], expect, rel_tol=rtol, abs_tol=1e-12 * max(1.0, abs(expect))):
                bad.append(f"{where}: {d.key} = {e[d.key]!r}, {d.formula} = {expect!r}")
    return bad

_LAYER_KEYS = tuple(m.name for m in LAYER_METRICS)
_LAYER_KEY_SET = frozenset(_LAYER_KEYS)

#: model_totals keys the contract totals consume (not repeated as model-specific keys)
_CONTRACT_TOTALS = ("extra_energy_j", "area_mm2", "hw_mac_units", "static_power_w")
_TOTAL_ORDER = tuple(m.name for m in TOTAL_METRICS)  # the contract totals in their order
_SUMMED = ("cycles", "time_s", "dram_read_bytes", "dram_write_bytes", "energy_j")
_SUMMED_UTIL = (*_SUMMED, "utilization")  # time_s at index 1


def seqsum(arrays, n: int | None = None) -> np.ndarray:
    """Element-wise sum, added one array at a time.

    ``np.sum(stack, axis=0)`` may add in a different order for a batch of one
    than for a batch of many (pairwise summation on contiguous data), which
    would make the scalar and batch paths differ in the last bit. Arrays of
    one shape are stacked and summed by ``np.add.accumulate`` (always one row
    after the other: the very additions of the loop, in one numpy call
    instead of one per array; issue 15's one-point path).
    """
    arrays = list(arrays)
    if not arrays:
        return np.zeros(n or 0)
    rows = stacked(arrays)
    if rows is not None:
        return row_sum(rows)
    total = np.array(arrays[0], dtype=float, copy=True)
    for a in arrays[1:]:
        total = total + a
    return total


#: rows of at least this many elements are summed by a loop of in-place additions, smaller ones by one
#: ``np.add.accumulate`` (the same additions in the same order, so the same bits). Accumulating along a leading
#: axis writes every partial sum and walks memory across rows: 21 rows of 3 x 4,096 took 2.7 ms against 0.14 ms
#: for the loop; at 3 x 32 the loop's 20 calls cost 35 us against 10 us.
ROW_LOOP_FROM = 256


def row_sum(rows: np.ndarray) -> np.ndarray:
    """Sum of the rows of a float array, one row after the other (the order of :func:`seqsum`)."""
    if len(rows) == 1:
        return rows[0].copy()
    if rows[0].size < ROW_LOOP_FROM:
        return np.add.accumulate(rows, axis=0)[-1]
    total = rows[0].copy()
    for row in rows[1:]:
        total += row
    return total


def layer_sums(layers: list, keys: Sequence[str], n: int, from_zero: bool = False) -> dict[str, np.ndarray]:
    """``{key: seqsum of the layers' metric key}`` for several keys (``from_zero``: a zero row first, as
    ``seqsum([np.zeros(n)] + arrays)``): one stack and one ``np.add.accumulate`` for all keys when they stack
    (:func:`_layer_cube`: the very additions of :func:`seqsum`, row after row), else seqsum per key. Where the keys'
    arrays are consecutive planes of one array already (EMAX's results cube: :meth:`_SharedRows.planes`), the same
    row-after-row additions run on them in place of a stacked copy (the same bits: tests/test_layer_sums_planes.py)."""
    shared = getattr(layers[0], "_shared", None) if layers else None
    if shared is not None and n == 1:  # one point's Python numbers (layerarrays.point_batches): summed as they are
        sums = shared.point_sums(layers, keys, from_zero)
        if sums is not None:
            block = np.array(sums, dtype=float).reshape(-1, 1)
            block.flags.writeable = False  # (a result's totals hand them out as they are: no read-only views made)
            return dict(zip(keys, block))  # (1,) rows, as _cube_sums gives
    if shared is not None and len(keys) * n >= ROW_LOOP_FROM:  # (fewer: row_sum's accumulate, on a copy below)
        block = shared.planes(layers, keys)
        if block is not None:  # the keys' arrays lie as the stack would: summed where they are, no copy
            rows = block.swapaxes(0, 1)
            total = np.zeros(rows.shape[1:]) if from_zero else rows[0].copy()  # (row_sum's first row: a copy)
            for row in rows[0 if from_zero else 1:]:
                total += row
            return dict(zip(keys, total))
    cube = _layer_cube(layers, keys, n, from_zero)
    if cube is not None:
        return dict(zip(keys, _cube_sums(cube)))
    zero = [np.zeros(n)] if from_zero else []
    return {k: seqsum(zero + [lb.metrics[k] for lb in layers], n) for k in keys}


def metric_of(lb: LayerBatch, key: str) -> np.ndarray:
    """``lb.metrics[key]`` (KeyError if it has none), without building the dict of a layer made by
    :func:`archmodels.layerarrays.layer_batches`: its row of the shared array (a view of the very values the dict
    would hold)."""
    d = lb.__dict__
    shared = d.get("_shared")
    if shared is None or "metrics" in d:
        return lb.metrics[key]
    return shared.metric_row(d["_row"], key)


def _layer_cube(layers: list, keys: Sequence[str], n: int, from_zero: bool = False) -> np.ndarray | None:
    """The layers' metrics ``keys`` as one float array (keys x layers x points), a zero layer first if
    ``from_zero``; None when there are no layers or some metric is not an array of ``n`` points."""
    if not layers:
        return None
    shared = getattr(layers[0], "_shared", None)  # layers of one archmodels.layerarrays.layer_batches call
    if shared is not None:
        cube = shared.cube(layers, keys, from_zero)
        if cube is not None:
            return cube
    start = 1 if from_zero else 0
    if not any("_shared" in lb.__dict__ for lb in layers):  # every layer through its own dict: one array
        rows = [[lb.metrics[k] for lb in layers] for k in keys]
        if from_zero:
            zero = np.zeros(n)
            for r in rows:
                r.insert(0, zero)
        try:
            cube = np.array(rows, dtype=float)
        except (ValueError, TypeError):  # shapes differ
            return None
        return cube if cube.shape == (len(keys), start + len(layers), n) else None
    runs: dict[int, tuple[Any, list[int], list[int]]] = {}  # per layer_batches call: (its rows, their places)
    usable: dict[int, bool] = {}  # per layer_batches call: whether its arrays hold the keys
    own: list[LayerBatch] = []  # layers read through their own dicts, and their places
    own_places: list[int] = []
    for i, lb in enumerate(layers, start):
        d = lb.__dict__
        shared = d.get("_shared")
        if shared is not None and "metrics" not in d:
            ok = usable.get(id(shared))
            if ok is None:
                ok = usable[id(shared)] = shared.has_arrays(keys, n)
            if ok:
                run = runs.setdefault(id(shared), (shared, [], []))
                run[1].append(d["_row"])
                run[2].append(i)
                continue
        own.append(lb)
        own_places.append(i)
    block = None
    if own:
        try:
            block = np.array([[lb.metrics[k] for lb in own] for k in keys], dtype=float)
        except (ValueError, TypeError):  # shapes differ
            return None
        if block.shape != (len(keys), len(own), n):
            return None
    cube = np.empty((len(keys), start + len(layers), n))
    if from_zero:
        cube[:, 0] = 0.0
    if block is not None:
        cube[:, own_places] = block
    for shared, rows, places in runs.values():  # each call's rows at once (copies of the very values)
        cube[:, places] = shared.gather(keys, rows)
    return cube


def _cube_sums(cube: np.ndarray) -> np.ndarray:
    """Sums over the layer axis of a (keys x layers x points) array, one layer after the other (:func:`row_sum`)."""
    return row_sum(cube.swapaxes(0, 1))


def stacked(arrays: list) -> np.ndarray | None:
    """``arrays`` (numpy arrays of one shape) as one float array with a leading axis, else None (scalars,
    shapes that only broadcast): lets per-layer loops become one numpy call over (layers x points)."""
    first = arrays[0]
    if type(first) is not np.ndarray:
        return None
    try:
        rows = np.array(arrays, dtype=float)
    except (ValueError, TypeError):  # shapes differ
        return None
    return rows if rows.shape[1:] == first.shape else None


#: a LayerBatch's layer, read in C
_layer_of = operator.attrgetter("layer")


def layer_sizes(layers: list[Layer]) -> tuple[float, float]:
    """(MACs, vector operations) of ``layers``, summed once per layer list (the properties recompute shapes;
    a study sums the same workload every trial); remembered by the layers' identities."""
    return _layer_sizes(layers)


@by_identity(by_items=True)
def _layer_sizes(layers: list[Layer]) -> tuple[float, float]:
    return float(sum(x.macs for x in layers)), float(sum(x.vector_ops for x in layers))


@dataclass
class LayerBatch:
    """One layer's results over ``n`` design points (arrays of length n)."""

    layer: Layer
    n: int
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    states: dict[str, np.ndarray] = field(default_factory=dict)
    labels: dict[str, np.ndarray] = field(default_factory=dict)
    feasible: np.ndarray | None = None
    reason: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.feasible is None:
            self.feasible = np.ones(self.n, dtype=bool)
        if self.reason is None:
            self.reason = num.objects(self.n, "")
        if "fused_into" not in self.labels:  # not setdefault: its default would be built for every layer
            self.labels["fused_into"] = num.objects(self.n, None)

    @property
    def name(self) -> str:
        return self.layer.name

    @property
    def kind(self) -> str:
        return self.layer.kind

    def set(self, **metrics: Any) -> LayerBatch:
        """Store metrics, broadcasting scalars to the batch size."""
        n = self.n
        for key, value in metrics.items():
            if type(value) is np.ndarray and value.shape == (n,):
                self.metrics[key] = value.astype(float)  # a copy, as the broadcast below (the common case: fast)
            elif type(value) is float or type(value) is int:
                self.metrics[key] = np.full(n, float(value))
            else:
                self.metrics[key] = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
        return self

    def infeasible(self, mask: np.ndarray, reason: str | np.ndarray) -> None:
        """Mark points ``mask`` infeasible with ``reason`` (first reason wins)."""
        if not (type(mask) is np.ndarray and mask.dtype == np.bool_ and mask.shape == (self.n,)):  # else as it is
            mask = np.broadcast_to(np.asarray(mask, dtype=bool), (self.n,))
        new = mask & self.feasible
        if not new.any():
            return  # nothing newly infeasible (the common case): no reason to write
        reasons = reason if type(reason) is str else np.broadcast_to(np.asarray(reason, dtype=object), (self.n,))[new]
        self.reason[new] = reasons
        self.feasible &= ~mask


@dataclass
class BatchResult:
    """A model's results for ``n`` design points on one workload."""

    arch: str
    workload: str
    points: Points
    param_names: tuple[str, ...]
    layers: list[LayerBatch]
    model_totals: dict[str, np.ndarray]
    feasible_config: np.ndarray
    reason_config: np.ndarray
    layer_metric_decl: dict[str, Metric] = field(default_factory=dict)
    total_metric_decl: dict[str, Metric] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return batch_size(self.points)

    def _shared_rows(self):
        """The :class:`~archmodels.layerarrays._SharedRows` of the first layer, if made by one
        :func:`~archmodels.layerarrays.layer_batches` call (else None)."""
        return getattr(self.layers[0], "_shared", None) if self.layers else None

    @cached_property
    def feasible(self) -> np.ndarray:
        if self.n == 1:  # one point (a study's trial): the same conjunction on Python bools
            shared = self._shared_rows()
            layers_ok = shared.all_feasible(self.layers) if shared is not None else None
            if layers_ok is None:  # not straight from one layer_batches call's flags
                layers_ok = all(lb.feasible[0] for lb in self.layers)
            return np.array([bool(self.feasible_config[0]) and layers_ok])
        ok = self.feasible_config.copy()
        rows = self._layer_feasible
        if type(rows) is np.ndarray:
            if len(rows):
                ok &= np.logical_and.reduce(rows, axis=0)  # one call for all layers
            return ok
        for r in rows:
            ok &= r
        return ok

    @cached_property
    def _layer_feasible(self) -> np.ndarray | list[np.ndarray]:
        """The layers' ``feasible`` arrays: one (layers x points) array when they stack, else the list."""
        shared = self._shared_rows()
        stack = shared.feasible_stack(self.layers) if shared is not None else None
        if stack is not None:  # straight from one layer_batches call's (layers x points) array
            return stack
        rows = [lb.feasible for lb in self.layers]
        try:
            out = np.array(rows, dtype=bool)
        except (ValueError, TypeError):
            return rows
        return out if out.shape == (len(rows), self.n) else rows

    @cached_property
    def reason(self) -> np.ndarray:
        out = self.reason_config.copy()
        if self.feasible.all():
            return out  # no layer has anything to say (the common case)
        if self.n == 1:  # one point: its configuration's reason, else the first infeasible layer's
            if out[0] != "":
                return out
            shared = self._shared_rows()
            first = shared.first_infeasible(self.layers) if shared is not None else None
            if first is not None:  # straight from one layer_batches call's arrays (no row views made)
                if first is not False:
                    out[0] = f"layer {self.layers[first[0]].name}: {first[1]}"
                return out
            lb = next((lb for lb in self.layers if not lb.feasible[0]), None)
            if lb is not None:
                out[0] = f"layer {lb.name}: {lb.reason[0]}"
            return out
        rows = self._layer_feasible
        bad = (np.flatnonzero(~rows.all(axis=1)).tolist() if type(rows) is np.ndarray
               else [i for i, r in enumerate(rows) if not r.all()])
        empty = out == ""
        for i in bad:
            if not empty.any():
                break  # every point has its reason (the first one wins): later layers cannot add one
            lb = self.layers[i]
            fill = empty & ~lb.feasible
            out[fill] = np.array([f"layer {lb.name}: {r}" for r in lb.reason[fill]], dtype=object)
            empty &= ~fill
        return out

    @cached_property
    def totals(self) -> dict[str, np.ndarray]:
        """Contract totals (arrays over points), then model-specific totals."""
        n = self.n
        macs, vector_ops = layer_sizes(list(map(_layer_of, self.layers)))
        if n == 1:  # one point's Python numbers (layerarrays.point_batches): the layers' values without an array
            shared = self._shared_rows()
            columns = shared.point_columns(self.layers, _SUMMED_UTIL) if shared is not None else None
            if columns is not None:
                return self._with_model_totals(_one_point_totals_of(columns, macs, vector_ops, self.model_totals), n)
        cube = _layer_cube(self.layers, _SUMMED_UTIL, n)  # one stack for every summed key (the common case)
        if cube is not None and n == 1:  # one point (a study's trial): the same operations on Python floats
            return self._with_model_totals(_one_point_totals(cube, macs, vector_ops, self.model_totals), n)
        tot: dict[str, np.ndarray] = {"macs": np.full(n, macs), "vector_ops": np.full(n, vector_ops)}
        if cube is not None:
            tot.update(zip(_SUMMED, _cube_sums(cube[:-1])))
            busy = row_sum(cube[1] * cube[-1])  # time_s x utilization (as _busy)
        else:
            for key in _SUMMED:
                tot[key] = seqsum([lb.metrics[key] for lb in self.layers], n)
            busy = _busy([lb.metrics["time_s"] for lb in self.layers], [lb.metrics["utilization"] for lb in self.layers],
                         n)
        tot["energy_j"] = tot["energy_j"] + self.model_totals.get("extra_energy_j", 0.0)
        static = _per_point(self.model_totals.get("static_power_w", 0.0), n)
        with np.errstate(divide="ignore", invalid="ignore"):
            # 0 for a zero time, NaN (null) for a time the design cannot produce (NaN: an infeasible layer)
            tot["utilization"] = np.where(tot["time_s"] == 0, 0.0, busy / tot["time_s"])
            tot["dram_bytes"] = tot["dram_read_bytes"] + tot["dram_write_bytes"]
            tot["power_w"] = np.where(tot["time_s"] == 0, 0.0, tot["energy_j"] / tot["time_s"])
            tot["area_mm2"] = _per_point(self.model_totals["area_mm2"], n)
            tot["macs_per_s"] = tot["macs"] / tot["time_s"]
            tot["fps"] = 1.0 / tot["time_s"]
            tot["hw_mac_units"] = _per_point(self.model_totals["hw_mac_units"], n)
            tot["static_power_w"] = static
            tot["dynamic_power_w"] = tot["power_w"] - static
        return self._with_model_totals({k: tot[k] for k in _TOTAL_ORDER}, n)

    def _with_model_totals(self, out: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
        """``out`` (the contract totals in their order), then the model-specific totals (read-only views)."""
        for key, value in self.model_totals.items():
            if key not in _CONTRACT_TOTALS:
                out[key] = _read_only(value, n)
        return out

    def metric(self, path: str) -> np.ndarray:
        """Array over points of ``total.X``, ``layers.NAME.X`` or ``params.X``."""
        head, _, rest = path.partition(".")
        if head == "total":
            return np.asarray(self.totals[rest], dtype=float)
        if head == "params":
            return self.points[rest]
        if head == "layers":
            name, _, key = rest.rpartition(".")
            for lb in self.layers:
                if lb.name == name:
                    if key in ("macs", "vector_ops"):
                        return np.full(self.n, float(getattr(lb.layer, key)))
                    return lb.metrics[key]
            raise KeyError(path)
        raise KeyError(path)

    # ---- the contract, one point at a time ----
    def point(self, i: int) -> dict[str, Any]:
        """Design point ``i`` as the ``dse evaluate --json`` dictionary."""
        layers = [self._layer_dict(lb, i) for lb in self.layers]
        total = {k: self._num(k, v.item(i), self.total_metric_decl) for k, v in self.totals.items()}
        total["macs"] = int(total["macs"])
        total["vector_ops"] = int(total["vector_ops"])
        reason = self.reason[i]
        return {
            "arch": self.arch,
            "workload": self.workload,
            "params": {k: _py(self.points[k][i]) for k in self.param_names},
            "feasible": bool(self.feasible[i]),
            "infeasible_reason": reason or None,
            "layers": layers,
            "total": total,
        }

    def _layer_dict(self, lb: LayerBatch, i: int) -> dict[str, Any]:
        # ``arr.item(i)`` is ``_py(arr[i])`` for numeric arrays, without the numpy scalar in between
        m = lb.metrics
        d: dict[str, Any] = {"name": lb.name, "kind": lb.kind, "macs": int(lb.layer.macs),
                             "vector_ops": int(lb.layer.vector_ops)}
        for key in _LAYER_KEYS:
            if key == "dram_bytes":
                d["dram_bytes"] = _clean(m["dram_read_bytes"][i] + m["dram_write_bytes"][i])
            else:
                d[key] = _clean(m[key].item(i))
        d["fused_into"] = lb.labels["fused_into"][i]
        d["states"] = {k: _clean(v.item(i)) for k, v in lb.states.items()}
        d["feasible"] = bool(lb.feasible[i])
        d["infeasible_reason"] = lb.reason[i] or None
        for key, arr in m.items():
            if key not in _LAYER_KEY_SET:
                d[key] = self._num(key, arr.item(i), self.layer_metric_decl)
        for key, arr in lb.labels.items():
            if key != "fused_into":
                d[key] = _py(arr[i])
        return d

    @staticmethod
    def _num(key: str, v: Any, decl: dict[str, Metric]) -> Any:
        v = _clean(v)
        if v is not None and isinstance(v, float) and key in decl and decl[key].integer:
            return int(round(v))
        return v


def _busy(times: list, utils: list, n: int) -> np.ndarray:
    """Sum over layers of time_s x utilization, layer after layer (as :func:`seqsum`), one product for all layers
    when the arrays stack."""
    if times:
        t, u = stacked(times), stacked(utils)
        if t is not None and u is not None and t.shape == u.shape:
            return row_sum(t * u)
    return seqsum([a * b for a, b in zip(times, utils)], n)


def _one_point_totals(cube: np.ndarray, macs: float, vector_ops: float,
                      model_totals: dict[str, Any]) -> dict[str, np.ndarray]:
    """:attr:`BatchResult.totals`' contract totals of one point from its (keys x layers x 1) ``cube`` of
    :data:`_SUMMED_UTIL`: the very operations of the array path, in its order, on Python floats (IEEE
    doubles as numpy's float64: the same bits; sums layer after layer as :func:`row_sum`; a division by zero
    as numpy's, :func:`_div`), for ~20 numpy calls fewer. Each total is a (1,) view of one float array."""
    return _one_point_totals_of(cube[:, :, 0].tolist(), macs, vector_ops, model_totals)


def _one_point_totals_of(columns: Sequence[Sequence[float]], macs: float, vector_ops: float,
                         model_totals: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`_one_point_totals` of the layers' values of :data:`_SUMMED_UTIL` as Python numbers (one sequence per
    key, layers in their order)."""
    cycles, time_s, rd, wr, energy, util = columns
    t = _float_seq(time_s)
    busy = _float_seq(map(operator.mul, time_s, util))
    e = _float_seq(energy) + _one(model_totals.get("extra_energy_j", 0.0))
    static = _one(model_totals.get("static_power_w", 0.0))
    power = 0.0 if t == 0 else e / t  # NaN time (an infeasible layer): NaN, as the array path
    tot = {
        "macs": macs, "vector_ops": vector_ops, "cycles": _float_seq(cycles), "time_s": t,
        "dram_read_bytes": _float_seq(rd), "dram_write_bytes": _float_seq(wr), "energy_j": e,
        "utilization": 0.0 if t == 0 else busy / t,
        "power_w": power, "area_mm2": _one(model_totals["area_mm2"]), "macs_per_s": _div(macs, t),
        "fps": _div(1.0, t), "hw_mac_units": _one(model_totals["hw_mac_units"]), "static_power_w": static,
        "dynamic_power_w": power - static,
    }
    tot["dram_bytes"] = tot["dram_read_bytes"] + tot["dram_write_bytes"]
    values = np.array([tot[k] for k in _TOTAL_ORDER], dtype=float).reshape(-1, 1)
    return dict(zip(_TOTAL_ORDER, values))  # rows of one array: (1,) views


def _seq(xs: Iterable[float]) -> float:
    """Sum of ``xs``, one after the other (the additions of :func:`row_sum`; not ``sum``, which Python 3.12
    compensates for floats)."""
    return reduce(operator.add, xs)


if sys.version_info < (3, 12):
    def _float_seq(xs: Iterable[float], start: float = -0.0) -> float:
        """:func:`_seq` of Python floats (at least one): Python 3.11's ``sum`` from -0.0 makes the same additions
        in the same order, one C loop of ``+=`` on doubles (~3x fewer instructions than ``reduce``); -0.0 + x
        is x for every double, -0.0 and NaN included. From ``start`` 0.0: the sum after a zero row."""
        return sum(xs, start)
else:  # Python 3.12's sum compensates floats (other bits)
    def _float_seq(xs: Iterable[float], start: float = -0.0) -> float:
        return reduce(operator.add, xs, start)


def _one(value: Any) -> float:
    """A number or an array of one point as a Python float (the value :func:`_per_point` gives for n = 1)."""
    if type(value) is np.ndarray:
        return float(value.item(0))  # an int64 rounds to the float64 numpy would convert it to
    return float(value) if type(value) in (float, int) else float(np.asarray(value, dtype=float).reshape(-1)[0])


def _div(a: float, b: float) -> float:
    """``a / b`` as numpy divides float64 (``b == 0``: +-inf, or NaN for 0 / 0 and NaN / 0; no exception)."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _per_point(value: Any, n: int) -> np.ndarray:
    """``value`` (a number or an array over points) as a new float array of ``n`` points: the bits of
    ``np.asarray(value, dtype=float) * np.ones(n)`` (x * 1.0 is x), in one numpy call for an array of n floats."""
    if type(value) is np.ndarray and value.shape == (n,) and value.dtype == np.float64:
        return value.copy()
    return np.asarray(value, dtype=float) * np.ones(n)


def _read_only(value: Any, n: int) -> np.ndarray:
    """``value`` broadcast to ``n`` points as a read-only view (an array of n points: a view of it)."""
    if type(value) is np.ndarray and value.shape == (n,):
        if not value.flags.writeable:
            return value  # read-only already (e.g. a model's memo): nothing to protect
        view = value.view()
        view.flags.writeable = False
        return view
    return np.broadcast_to(np.asarray(value), (n,))


def _clean(v: Any) -> Any:
    """numpy scalar -> Python; NaN/inf -> None (JSON has no NaN)."""
    if type(v) is float:  # the common case (``arr.item(i)``), first
        return v if math.isfinite(v) else None
    v = _py(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v

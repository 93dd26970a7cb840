"""The model interface every architecture implements.

A model declares its parameters (:class:`~archmodels.params.Param`) and its
extra output metrics, and implements one method, :meth:`Model.evaluate_batch`,
which maps one workload and a batch of design points to a
:class:`~archmodels.result.BatchResult`. Everything else (defaults,
validation, the scalar path, the JSON contract) is shared.

Cost formulas are written over numpy arrays of design points so that a study
or sweep can evaluate thousands of points in one call; per-layer work that
does not depend on a parameter is done once per layer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from operator import add, attrgetter, is_
from typing import Any, ClassVar

import numpy as np

from workloads import Workload, load_workload
from workloads.layers import MatMul

from . import gemm, num, vector
from .layerarrays import fused_into_of

from .params import Param, ParamSet, Points, batch_size
from .result import LAYER_METRICS, TOTAL_METRICS, BatchResult, LayerBatch, Metric, stacked


_ROUTING_MAX = 64  # workloads whose routing a model remembers


class Model(ABC):
    """Base class of the architecture models (see module docstring)."""

    name: ClassVar[str]
    title: ClassVar[str]
    spec: ClassVar[str]  # the spec file under ../shared/spec it follows (outside this repository)
    #: the repository's page that documents the model (distilled from ``spec``); "" for a model without one
    DOC_PAGE: ClassVar[str] = ""
    #: what each of the model's layer ``states`` means, one line each, in the model's order (``dse models ARCH``
    #: and the report's breakdown print it; ``check_model`` fails on a state the model emits without a line here)
    STATE_DOCS: ClassVar[dict[str, str]] = {}
    PARAMS: ClassVar[Sequence[Param]]
    LAYER_METRICS: ClassVar[Sequence[Metric]] = ()
    TOTAL_METRICS: ClassVar[Sequence[Metric]] = ()
    #: calibration-case keys that name a parameter differently (``dse validate``)
    VALIDATION_ALIASES: ClassVar[dict[str, str]] = {}
    #: where the model's area comes from: a published die/figure of this family, or the shared IMAX anchor
    AREA_ANCHOR: ClassVar[str] = ""
    #: kinds of layers the model can run; others are reported infeasible
    SUPPORTS: ClassVar[tuple[str, ...]] = ("conv", "pool", "fc", "matmul", "spmm", "spmv", "vector")
    #: evaluate every dense product in its equivalent forms and keep the fastest (:mod:`archmodels.gemm`)
    GEMM_FORMS: ClassVar[bool] = True
    #: cost each alternative GEMM form inside the whole workload (True: a layer's cost may depend on its
    #: neighbours, e.g. EMAXVR keeps a layer's output in the SPM for the next one). False: only the layers
    #: that have the form are evaluated (neighbours that are not swapped are cut off by ``breaks``): up to
    #: 3x cheaper on networks with many 1x1 convolutions or token-wise products; set it only where the
    #: golden outputs stay equal
    GEMM_FORMS_CONTEXT: ClassVar[bool] = True
    #: kinds costed by the shared streaming vector path (:mod:`archmodels.vector`) on :meth:`vector_unit`
    VECTOR_KINDS: ClassVar[tuple[str, ...]] = ("vector",)

    #: the reference ``archmodels.get_model`` created this instance from (name or file.py:Class)
    _ref: str | None = None

    def __init__(self) -> None:
        self.params = ParamSet(self.PARAMS, self.name)

    @classmethod
    def described_in(cls, short: bool = False) -> str:
        """Where a reader finds the model described, for human-readable text (``dse models``, reports): the
        repository's page first, since the spec files of the built-in models are not in the repository;
        ``short``: the page alone (one line per model)."""
        if cls.DOC_PAGE:
            return cls.DOC_PAGE if short else f"{cls.DOC_PAGE}; spec {cls.spec}, outside the repository"
        return f"spec: {cls.spec}"

    def __reduce_ex__(self, protocol):
        """Pickle as the registry reference, so a worker process re-imports the model (from its file)."""
        if self._ref is not None:
            return (_model_by_ref, (self._ref,))
        return super().__reduce_ex__(protocol)

    # ---- what subclasses implement ----
    @abstractmethod
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        """Per-layer results over the batch ``pts`` (contract metrics filled)."""

    @abstractmethod
    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        """Model-level totals: at least ``area_mm2``; any extra total keys."""

    def runs_as_vector(self, layer) -> bool:
        """Whether ``layer`` is costed on the shared vector path (default: its kind is in VECTOR_KINDS)."""
        return layer.kind in self.VECTOR_KINDS

    def vector_unit(self, pts: Points) -> vector.VectorUnit | None:
        """The unit that runs vector layers (None: the model cannot run them)."""
        return None

    def check_config(self, pts: Points) -> tuple[np.ndarray, np.ndarray]:
        """Configuration-level feasibility (before any layer). Default: all feasible."""
        n = batch_size(pts)
        return np.ones(n, dtype=bool), num.objects(n, "")

    # ---- shared machinery ----
    def evaluate_batch(self, workload: Workload | str, pts: Points) -> BatchResult:
        """Evaluate a batch of design points (arrays over points) on ``workload``."""
        wl = load_workload(workload)
        ok, reason = self.check_config(pts)
        layers = self._evaluate_all(wl, pts)
        kinds, supported = set(map(_layer_kind, layers)), self.SUPPORTS  # (the layers' kinds read in C)
        if not kinds <= (_as_set(supported) if type(supported) is tuple else set(supported)):
            for lb in layers:
                if lb.kind not in self.SUPPORTS:
                    lb.infeasible(np.ones(lb.n, bool), f"{self.name} does not run {lb.kind} layers")
        totals = self.model_totals(wl, pts, layers)
        add_static_energy(layers, totals.get("static_power_w", 0.0))
        return BatchResult(
            arch=self.name, workload=wl.name, points=pts,
            param_names=self.params.names, layers=layers,
            model_totals=totals, feasible_config=ok, reason_config=reason,
            layer_metric_decl=self._decl("LAYER_METRICS"), total_metric_decl=self._decl("TOTAL_METRICS"),
        )

    def _decl(self, which: str) -> dict[str, Metric]:
        """``{name: Metric}`` of the model's ``LAYER_METRICS`` or ``TOTAL_METRICS`` (built once per model)."""
        memo = self.__dict__.setdefault("_decl_memo", {})
        if which not in memo:
            memo[which] = {m.name: m for m in getattr(self, which)}
        return memo[which]

    def _evaluate_all(self, wl: Workload, pts: Points) -> list[LayerBatch]:
        """Every layer of ``wl``: vector kinds on the shared vector path, the rest by
        :meth:`evaluate_layers`; a batched MatMul is evaluated as one product and repeated."""
        n = batch_size(pts)
        routed, core_wl = self._routing(wl)
        core = self._evaluate_gemms(core_wl, pts) if core_wl.layers else []
        if len(core) == len(wl.layers) and all(map(is_, [lb.layer for lb in core], wl.layers)):
            return core  # nothing routed, nothing repeated (the loop below would copy the list as it is)
        decl = self._decl("LAYER_METRICS")
        for lb, layer in zip(core, (layer for layer, r in zip(wl.layers, routed) if not r)):
            if lb.layer is not layer:  # a batched MatMul: one product, repeated
                vector.repeat(lb, layer.batch, decl)
                lb.layer = layer
        vec: Iterator[LayerBatch] = iter(())
        if any(routed):  # every vector layer at once, completed with the keys the other layers have
            unit = self.vector_unit(pts)
            layers = [layer for layer, r in zip(wl.layers, routed) if r]
            why = None if unit is not None else [f"{self.name} does not run {layer.kind} layers" for layer in layers]
            vec = iter(vector.cost_layers(layers, unit, n, self.LAYER_METRICS, vector.keys_of(core), why))
        core_out = iter(core)
        return [next(vec) if r else next(core_out) for r in routed]

    def _routing(self, wl: Workload) -> tuple[list[bool], Workload]:
        """(which layers run on the vector path, the workload of the others) of ``wl``; remembered per
        workload object (a study evaluates the same workload every trial), at most :data:`_ROUTING_MAX`."""
        memo = self.__dict__.setdefault("_routing_memo", {})
        hit = memo.get(id(wl))
        if hit is not None and hit[0] is wl:  # the entry holds ``wl``: its id cannot name another object
            return hit[1], hit[2]
        routed = [self.runs_as_vector(layer) for layer in wl.layers]
        core = [replace(layer, batch=1) if isinstance(layer, MatMul) and layer.batch > 1 else layer
                for layer, r in zip(wl.layers, routed) if not r]
        breaks = frozenset(layer.name for layer, here, nxt in zip(wl.layers, routed, routed[1:]) if nxt and not here)
        core_wl = Workload(wl.name, tuple(core), breaks | wl.breaks)
        if len(memo) >= _ROUTING_MAX:
            memo.clear()
        memo[id(wl)] = (wl, routed, core_wl)
        return routed, core_wl

    def _evaluate_gemms(self, wl: Workload, pts: Points) -> list[LayerBatch]:
        """:meth:`evaluate_layers`, with every dense product of n > 1 vectors also evaluated in its
        other forms (FC, 1x1 conv, MatMul) and the best by :meth:`gemm_ranker` kept per point (:mod:`archmodels.gemm`)."""
        out = self.evaluate_layers(wl, pts)
        forms, swaps = self._gemm_forms(wl)
        if not swaps:
            return out  # no layer has another form (the steps below would leave ``out`` as it is)
        alts = [dict(a) for a in forms]  # filled with LayerBatches below: this call's own dicts
        for form, idx, swapped in swaps:
            for i, lb in zip(idx, self.evaluate_layers(swapped, pts)):
                if form in alts[i]:
                    alts[i][form] = lb
        fused = _fused_into(out, {wl.layers[i].name for i, a in enumerate(alts) if a})
        rank = self.gemm_ranker(pts)
        for i, a in enumerate(alts):
            if a:
                gemm.pick(out[i], a, fused.get(wl.layers[i].name, np.zeros(out[i].n, dtype=bool)), rank)
        return out

    def gemm_ranker(self, pts: Points) -> Callable[[LayerBatch], tuple[np.ndarray, np.ndarray]]:
        """How :meth:`_evaluate_gemms` ranks a product's forms at ``pts``: a function of a form's LayerBatch giving
        (first value, tie-breaker) per point, smaller is better (built once per call: every product's forms share
        it). Default: the fastest, then the least energy; a model with a mapping criterion ranks by it."""
        return gemm.fastest

    def _gemm_forms(self, wl: Workload) -> tuple[list[dict[str, Any]], list[tuple[str, list[int], Workload]]]:
        """(``gemm.forms`` of each layer of ``wl`` (empty dicts when GEMM_FORMS is off), and per form some layer
        has: (form, the indices of the layers its workload holds, that workload)); remembered per workload
        object, as :meth:`_routing` (the forms depend on the layer shapes only). The form workloads are the same
        objects every call, so a model's per-workload tables (keyed by the layers' identities) serve them."""
        memo = self.__dict__.setdefault("_forms_memo", {})
        hit = memo.get(id(wl))
        if hit is not None and hit[0] is wl:
            return hit[1], hit[2]
        forms = [gemm.forms(layer) if self.GEMM_FORMS else {} for layer in wl.layers]
        swaps = []
        for form in gemm.FORMS if any(forms) else ():
            if not any(form in a for a in forms):
                continue
            if self.GEMM_FORMS_CONTEXT:
                idx = list(range(len(forms)))
                swapped = Workload(wl.name, tuple(a.get(form, layer) for a, layer in zip(forms, wl.layers)), wl.breaks)
            else:
                idx = [i for i, a in enumerate(forms) if form in a]
                cut = {wl.layers[i].name for i, j in zip(idx, idx[1:] + [-1]) if j != i + 1}
                swapped = Workload(wl.name, tuple(forms[i][form] for i in idx), wl.breaks | cut)
            swaps.append((form, idx, swapped))
        if len(memo) >= _ROUTING_MAX:
            memo.clear()
        memo[id(wl)] = (wl, forms, swaps)
        return forms, swaps

    def evaluate(self, workload: Workload | str, **params: Any) -> dict[str, Any]:
        """One design point -> the contract dictionary (a batch of one)."""
        return self.evaluate_batch(workload, self.params.points([params])).point(0)

    def evaluate_points(self, workload: Workload | str, rows: Sequence[Mapping[str, Any]]) -> BatchResult:
        """Evaluate a list of (partial) parameter dicts in one batch."""
        return self.evaluate_batch(workload, self.params.points(rows))

    def validation_metric(self, metric: str, workload: str | None, params: dict[str, Any],
                          case: dict[str, Any], section: dict[str, Any]) -> Any:
        """A calibration metric outside the contract (e.g. an ordering), or NotImplemented."""
        return NotImplemented

    @classmethod
    def metric_names(cls) -> dict[str, list[str]]:
        """Known metric names: ``total`` and ``layer`` keys (contract + model)."""
        return {
            "total": [m.name for m in TOTAL_METRICS] + [m.name for m in cls.TOTAL_METRICS],
            "layer": ["macs", "vector_ops"] + [m.name for m in LAYER_METRICS] + [m.name for m in cls.LAYER_METRICS],
        }


#: a LayerBatch's kind (its ``kind`` property: its layer's), read in C
_layer_kind = attrgetter("layer.kind")
#: a model's SUPPORTS as a set, made once per tuple (a C-level cache)
_as_set = lru_cache(maxsize=None)(frozenset)


def _model_by_ref(ref: str) -> Model:
    from . import get_model  # the registry imports this module

    return get_model(ref)


def _fused_into(layers: list[LayerBatch], names: set[str]) -> dict[str, np.ndarray]:
    """Per layer name in ``names``: the points where some layer runs fused into it (``fused_into`` label)."""
    out: dict[str, np.ndarray] = {}
    if not names:
        return out
    for lb in layers:
        arr = fused_into_of(lb)
        if arr is None:
            continue  # no layer runs fused into another here
        for name in set(arr.tolist()) & names:
            out[name] = out[name] | (arr == name) if name in out else (arr == name)
    return out


def add_static_energy(layers: list[LayerBatch], static_power_w) -> None:
    """Charge each layer its leakage: ``static_energy_j`` = static power x layer time, added to ``energy_j``.

    One product and one sum over (layers x points) for the layers of each :func:`~archmodels.layerarrays.layer_batches`
    call, or when the layers' arrays stack (the same element-wise operations as layer by layer; each layer keeps
    its row), else layer by layer."""
    power = np.asarray(static_power_w, dtype=float)
    calls: dict[int, tuple[Any, list[LayerBatch]]] = {}  # the layers of each layerarrays.layer_batches call
    rest: list[LayerBatch] = []
    first = layers[0].__dict__.get("_shared") if layers else None
    if first is not None and first.point_values is not None and power.shape in ((), (1,)):  # one point's numbers
        columns = first.point_columns(layers, ("time_s", "energy_j"))  # (layerarrays.point_batches)
        if columns is not None:
            p = float(power.item())  # the float64 the product below reads
            static = [p * t for t in columns[0]]
            if first.add_point_metrics(layers, static_energy_j=static, energy_j=list(map(add, columns[1], static))):
                return
    if first is not None and first.whole(layers):  # the layers of one call, in its order (a study's trial, as a rule)
        calls[id(first)] = (first, layers)
    else:
        for lb in layers:
            shared = lb.__dict__.get("_shared")
            if shared is None:
                rest.append(lb)
            else:
                calls.setdefault(id(shared), (shared, []))[1].append(lb)
    for shared, some in calls.values():  # each call's layers at once (element-wise: the same values in any grouping)
        cube = shared.cube(some, ("time_s", "energy_j"))
        if cube is not None and power.shape in ((), cube.shape[2:]):
            static = power * cube[0]
            if shared.add_metrics(some, static_energy_j=static, energy_j=cube[1] + static):
                continue
        rest.extend(some)
    if not rest:
        return
    layers = rest
    times = [lb.metrics["time_s"] for lb in layers]
    # one layer: its product and sum as they are (a stack of one row copies its time and energy: the same values)
    t = stacked(times) if len(layers) > 1 else None
    e = stacked([lb.metrics["energy_j"] for lb in layers]) if t is not None else None
    if e is not None and e.shape == t.shape and power.shape in ((), t.shape[1:]):
        static = power * t
        energy = e + static
        for lb, s_row, e_row in zip(layers, static, energy):
            lb.metrics["static_energy_j"] = s_row
            lb.metrics["energy_j"] = e_row
        return
    for lb, time_s in zip(layers, times):
        static = power * time_s
        lb.metrics["static_energy_j"] = static
        lb.metrics["energy_j"] = lb.metrics["energy_j"] + static

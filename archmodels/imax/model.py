"""IMAX: linear-array CGRA running dense and sparse matrix products (spec `imax.md`).

What is modelled (details and every assumption: ``docs/models/imax.md``):

* **Mappings** (§3-§4): a sparse A (SpMM/SpMV layers) in the CSR or JDS
  layout of ``workloads/formats.py`` on the IVJ or IVS schedule, or the
  same matrix dense; dense layers (matmul, FC, convolutions lowered with
  im2col by ``workloads/lowering.py``) always run dense. The chain has H
  MAC units (dense: every usable unit; IVJ: 2 fewer; IVS: sets of 2 offset
  units + 16 MAC units).
* **LMM schedule** (§5): exhaustive AGRP/BGRP/CGRP search under
  constraints 4.4.1-4.4.10 (``archmodels/imax/schedule.py``), or AGRP = 1
  with ``lmm_opt`` off.
* **Per start** states DRAIN, CONF, REGV, RANGE, LOAD, EXEC (§1), in that
  order (no overlap on one chip): bytes over the host link (values,
  indices, padding, JDS margins and permutation; B broadcast once per start
  thanks to address-range snooping; an LMM range that did not change is not
  re-sent), PIO words (``PIO_WORD_BYTES`` each on the link), both at the
  fitted ``LINK_EFFICIENCY`` of ``link_gbps``; EXEC from the stored rows of
  each block (one row iteration = ``cols`` cycles, ``cols x 2`` MACs per
  unit, ``ceil(BGRP / (cols x 2))`` iterations per row) plus the pipeline
  fill of every block pass. A sparse start covers ``cols x 2`` B columns
  (4.4.9), a dense one every B column the LMM holds (§3). WAIT is link
  contention with several chips (0 with one).
* **Multi-chip** (§1: the third loop level): B/C column groups split over
  ``nchip`` chips (4.4.5, 4.4.10); A broadcast to all.
* ``speedup_vs_dense``: the same matrix run dense on the same IMAX, every
  other parameter equal. Energy from the technology table (28 nm); area
  from it too, anchored on the 13.3 mm^2 die (§2).

Batch evaluation (issue 15; ``docs/profile/imax.md``): the points are grouped
once per call by their structure (format, mapping, units, cols, lmm_kb,
nchip, lmm_opt), and clock, link bandwidth and voltage are computed once and
shared by all layers. Per product, one numpy pass over the configurations
finds those without a schedule from the tile counts alone and writes their
reasons; the others get their candidates and counts for all configurations
at once (``plans.py``: dense A in closed form, sparse A in both formats and
all tilings side by side, the Margins from each tile's sorted row
nonzeros), and clock and link bandwidth enter only the choice among
candidates and the times, numpy over all (point, candidate) pairs. A call
with a few configurations takes the cached scalar schedules of
``schedule.py`` instead; a batch of one point (a study asking one point at a
time) screens each product in Python numbers (``_screen``, cached) before
it. The dense reference of a sparse product is planned only where it is not
the run itself (format dense) and may exist (``nchip`` divides n). All paths
give the same numbers bit for bit (tested).
"""

from __future__ import annotations

import ctypes
import functools
import operator
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from workloads import Workload
from workloads.layers import Conv2D, Layer, SpMM
from workloads.lowering import as_matmuls

from . import costs as C
from . import plans as P
from . import schedule as S
from .. import tech
from .. import vector
from ..base import Model
from ..memo import IdentityMemo
from ..params import Param, Points, batch_size
from ..result import (ENERGY_PART_TOTALS, ENERGY_PARTS, LayerBatch, Metric, _div, _float_seq, _seq, layer_sums,
                      metric_of, row_sum)

FORMATS = ("dense", "csr", "jds")
SCHEDULES = ("ivj", "ivs")
STATES = ("DRAIN", "CONF", "REGV", "RANGE", "LOAD", "EXEC", "WAIT")
_STRUCT = ("units", "cols", "lmm_kb", "nchip")

_LAYER_METRICS = (
    Metric("speedup_vs_dense", "1", "time of the same matrix run dense (same parameters) / this time"),
    Metric("dense_time_s", "s", "time of the same matrix run dense (same parameters)"),
    Metric("lmm_utilization", "1", "A half of each LMM reserved by the schedule: AGRP blocks of all rows "
           "(CSR, dense; spec §5 4.4.2), the largest packed group (JDS)"),
    Metric("lmm_utilization_unoptimized", "1", "the same with AGRP = 1 (before the LMM optimisation)"),
    Metric("mac_units", "", "MAC units of the chain per chip (H)", integer=True),
    Metric("agrp", "blocks", "AGRP: A blocks an A group holds (JDS: the most one packed group holds)",
           integer=True),
    Metric("bgrp", "columns", "B columns per start (BGRP)", integer=True),
    Metric("cgrp", "columns", "C columns held in the last unit (CGRP = BGRP, 4.4.8)", integer=True),
    Metric("starts", "", "starts of one chip", integer=True),
    Metric("a_groups", "", "A groups loaded", integer=True),
    Metric("b_groups", "", "B groups per chip per A group", integer=True),
    Metric("blocks", "", "blocks of H slots over all tiles", integer=True),
    Metric("row_tiles", "", "row tiles of A (1 unless rows overflow half an LMM)", integer=True),
    Metric("col_tiles", "", "column tiles of A (1 unless a B column overflows half an LMM)", integer=True),
    Metric("stored_slots", "", "A slots sent to the LMMs (nonzeros + padding; dense: elements)", integer=True),
    Metric("padding_slots", "", "stored slots that are padding", integer=True),
    Metric("dram_a_bytes", "B", "A (values, indices, padding, JDS permutation) read from host memory"),
    Metric("dram_b_bytes", "B", "B slabs read from host memory"),
    Metric("dram_c_partial_bytes", "B", "C partial sums read back (later A groups / column tiles)"),
    Metric("dram_c_bytes", "B", "C groups drained to host memory"),
    Metric("compute_energy_j", "J", "FMAs issued, padding included (at the clock's supply)"),
    Metric("sram_energy_j", "J", "LMM bytes accessed (at the clock's supply)"),
    Metric("dram_energy_j", "J", "host-memory reads and writes (technology-table row `dram`)"),
)

_TOTAL_METRICS = (
    Metric("speedup_vs_dense", "1", "sum of dense times / sum of times over the layers", combine="time_mean"),
    Metric("dense_time_s", "s", "sum over layers of the dense time"),
    Metric("lmm_utilization", "1", "time-weighted mean over layers", combine="time_mean"),
    Metric("lmm_utilization_unoptimized", "1", "time-weighted mean over layers", combine="time_mean"),
    Metric("mac_units", "", "largest MAC-unit count of a layer's chain, per chip", integer=True, combine="max"),
    Metric("starts", "", "sum over layers", integer=True),
    *ENERGY_PART_TOTALS,
)


class ImaxModel(Model):
    name = "imax"
    title = "IMAX linear-array CGRA: dense/sparse matrix products, LMM scheduling, multi-chip"
    spec = "imax.md"
    DOC_PAGE = "docs/models/imax.md"
    STATE_DOCS = {  # docs/models/imax.md, "Time: states per start"; they run one after another
        "DRAIN": "results (C groups) read back over the link when the C range changes",
        "CONF": "the mapping's PIO configuration words, once per product",
        "REGV": "register PIO words (loop and group bases) at the starts that change them",
        "RANGE": "every logical PE's LMM range (start + length) written by PIO, every start",
        "LOAD": "A entries, B slabs and C partial sums sent over the link into the LMMs",
        "EXEC": "the chain's iterations, with a pipeline fill at every start and pause",
        "WAIT": "link contention between chips (0 with one chip)",
    }
    #: a layer's cost does not depend on its neighbours (no fusion, no on-chip chaining): the other GEMM forms
    #: of a product are costed on the swapped layers alone (base.Model._evaluate_gemms)
    GEMM_FORMS_CONTEXT = False
    SUPPORTS = ("conv", "pool", "fc", "matmul", "spmm", "spmv", "vector")
    VECTOR_KINDS = ("vector", "pool")
    AREA_ANCHOR = "the IMAX die in 28 nm: 13.3 mm^2 with 64 units x 64 KB LMM (spec imax.md §2) -- fitted, by construction"

    def runs_as_vector(self, layer) -> bool:
        """Pooling, vector layers and depthwise convolutions: a depthwise conv lowered to products
        would be one single-row product per channel, each paying its PIO states per B group; as a
        stream, each output is kh x kw multiply-adds of one channel on the units' FMAs."""
        depthwise = isinstance(layer, Conv2D) and layer.groups > 1 and layer.ic_per_group == layer.oc_per_group == 1
        return depthwise or super().runs_as_vector(layer)

    def vector_unit(self, pts: Points) -> vector.VectorUnit:
        """Vector layers and pooling on the units' ALUs: 2-way SIMD FP32 per unit per cycle
        (spec §1) on every chip, streamed over the host link at its fitted efficiency (LOAD and
        DRAIN); an ALU pass costs an FP32 multiply-add (as the model's MACs)."""
        clock_hz = pts["clock_mhz"] * 1e6
        return vector.VectorUnit("CGRA ALUs", pts["units"] * 2 * pts["nchip"] * clock_hz, clock_hz, 4.0,
                                 pts["link_gbps"] * 1e9 * C.LINK_EFFICIENCY,
                                 vector.per_node(lambda nd: tech.mac_energy_pj("fp32", nd), pts["tech_nm"])
                                 * _clock_costs(pts).energy_scale,
                                 *tech.dram_pj_per_byte(pts["dram"]))

    PARAMS = (
        Param("units", "int", 64, 8, 1024, doc="stages of the linear array (4 run loop control and the C output)"),
        Param("cols", "choice", 4, choices=(1, 2, 4, 8), doc="logical columns = multithreading ways (W)"),
        Param("lmm_kb", "int", 64, 4, 4096, unit="KB", doc="local memory per unit"),
        Param("clock_mhz", "float", 150.0, 10, 2000, unit="MHz", doc="IMAX clock"),
        Param("nchip", "int", 1, 1, 64, doc="chips; B/C column groups are split over them"),
        Param("link_gbps", "float", 1.818, 0.01, 1000, unit="GB/s",
              doc="host link bandwidth, theoretical (prototype: 3 GTH lanes, 5 Gb/s, 64b/66b); "
                  "DMA and PIO get the fitted LINK_EFFICIENCY of it"),
        Param("tech_nm", "choice", 28, choices=tech.NODES_NM, unit="nm", doc="node for energy and area"),
        Param("dram", "choice", "ddr4", choices=tech.DRAM_NAMES,
              doc="host memory type for DRAM energy (technology table; assumption: DDR4)"),
        Param("format", "choice", "csr", choices=FORMATS, knob=True,
              doc="layout of a sparse A (dense layers always run dense)"),
        Param("schedule", "choice", "ivj", choices=SCHEDULES, knob=True,
              doc="sparse schedule: index+value joined (ivj) or separate (ivs)"),
        Param("lmm_opt", "bool", True, knob=True,
              doc="LMM optimisation: A kept, AGRP/BGRP/CGRP searched (off: A re-sent per B group, AGRP = 1)"),
    )
    LAYER_METRICS = _LAYER_METRICS
    TOTAL_METRICS = _TOTAL_METRICS

    def check_config(self, pts: Points) -> tuple[np.ndarray, np.ndarray]:
        """The clock must not exceed the node's maximum (technology table). One point whose clock is feasible
        (a study's trial, mostly): ``tech.clock_check``'s answer from the clock costs the evaluation keeps
        (:func:`_clock_costs`, read again by the layers and the totals) instead of computing them once more."""
        if len(pts["clock_mhz"]) == 1:
            cc = _clock_costs(pts)
            if cc.feasible.all():
                return cc.feasible.copy(), _filled(1, "")
        return tech.clock_check(pts["clock_mhz"], pts["tech_nm"])

    # ------------------------------------------------------------ layers
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        batch = _Batch.of(pts)
        dense = {}  # the distinct dense products of the workload: all planned and timed in one pass
        for layer in workload.layers:
            if not isinstance(layer, SpMM) and (prods := _matmuls(layer)):
                dense.setdefault((prods[0].m, prods[0].k, prods[0].n, None), None)
        runs = dict(zip(dense, self._runs(list(dense), batch, False))) if dense else {}
        return [self._layer(layer, batch, runs) for layer in workload.layers]

    def _layer(self, layer: Layer, batch: _Batch, runs: dict[tuple, dict]) -> LayerBatch:
        sparse = isinstance(layer, SpMM)
        if sparse:
            key, reps = (layer.m, layer.k, layer.n, layer), 1
            if batch.n == 1:
                r = self._runs([key], batch, True)[0]
                dense_time = self._dense_reference(key, batch, r) * reps
            else:
                r, dense_time = self._sparse_runs(key, batch)
        else:
            prods = _matmuls(layer)
            if not prods:  # pooling: not a matrix product
                lb = LayerBatch(layer, batch.n)
                _fill_nan(lb)
                return lb
            key, reps = (prods[0].m, prods[0].k, prods[0].n, None), len(prods)
            r = runs[key]
            dense_time = r["time"] * reps
        if batch.n == 1:  # one point: its line (no broadcast), the run's shared flag negated without a numpy call
            lb = LayerBatch(layer, batch.n)
            lb.infeasible(_YES if r["ok"] is _NO else _NO if r["ok"] is _YES else ~r["ok"], r["reason"][0])
        else:  # a sparse layer's run is its own; a dense product's may serve several layers
            lb = _run_layer_batch(layer, r["ok"], r["reason"], own=sparse)
        self._fill(lb, layer, r, reps, dense_time, batch)
        grp = batch.groups(sparse)
        lb.labels["format"] = grp.fmt
        lb.labels["mapping"] = grp.mapping
        return lb

    def _runs(self, keys: list[tuple], batch: _Batch, sparse: bool, reasons: bool = True) -> list[dict]:
        """Schedule and time the products ``keys`` (m, k, n, sparse layer or None) for every point, all
        (product, configuration) pairs at once; ``sparse``: A in the points' format and schedule (one
        product), else dense; ``reasons``: write why a point has no schedule (off for the dense reference
        run of a sparse product, whose reasons nobody reads)."""
        if batch.n == 1:
            return [_run_one(key, batch, sparse, reasons) for key in keys]
        grp = batch.groups(sparse)
        out = self._runs_on(keys, grp.uniq, grp.inv, batch.nchip, batch.clock_hz, batch.bw,
                            batch.n if reasons else 0)
        return [_run_part(out, i * batch.n, (i + 1) * batch.n) for i in range(len(keys))]

    def _sparse_runs(self, key: tuple, batch: _Batch) -> tuple[dict, np.ndarray]:
        """The run of the sparse product ``key`` at each point of a batch of several and its dense reference
        (:meth:`_dense_reference`: the time of the same matrix run dense on the same configuration), both in
        one pass: the configurations of the reference runs join those of the points' own runs (a point whose
        format is dense has its reference's configuration), so one :func:`schedule.configurations`, one
        planning and one choice serve both. The reference is planned where it is not the run itself and may
        exist (``nchip`` divides n), as :meth:`_dense_reference` does; NaN elsewhere."""
        n = batch.n
        grp = batch.groups(True)
        own = grp.columns[0] == 0  # format code 0: dense
        need = S.nonzero_at(~own & (key[2] % batch.nchip == 0))
        if len(need):  # the reference configurations: the points' structure, format and mapping dense (codes 0)
            first, point_cfg, distinct = S.distinct_columns_joined(grp.columns, need, 2)
            uniq = distinct.T  # (_rows_at's layout: the configurations' numbers column by column, contiguous)
            # the runs: the points', then their references' (of points ``need``)
            out = self._runs_on([key], uniq, point_cfg, batch.nchip, batch.clock_hz, batch.bw, n, point_refs=need)
        else:
            out = self._runs_on([key], grp.uniq, grp.inv, batch.nchip, batch.clock_hz, batch.bw, n)
        run = _run_part(out, 0, n)
        dense_time = np.where(own, run["time"], np.nan)
        dense_time[need] = out["time"][n:]
        return run, dense_time

    def _runs_on(self, keys: list[tuple], uniq: np.ndarray, inv: np.ndarray, nchip: np.ndarray, clock_hz: np.ndarray,
                 bw: np.ndarray, with_reasons: int, point_refs: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """:meth:`_runs` of the products ``keys`` on points whose configurations are rows ``inv`` of ``uniq``
        (:class:`_Groups`' columns: the mapping by its code), with those points' ``nchip``, clock and link
        bandwidth, over (product, point) pairs, product-major: ``ok``, ``H``, ``reason`` and ``time`` (NaN without
        a schedule) over every pair, ``at`` the pairs with a schedule, and every other number of
        :data:`_RUN_NAMES` only at those pairs (:func:`_store_choice`; random points mostly have no schedule, and
        their numbers would all be NaN). Reasons are written for the first ``with_reasons`` points of each
        product (the others read ""). ``point_refs``: one product whose last ``len(point_refs)`` points are those
        rows of ``nchip``, ``clock_hz`` and ``bw`` (a sparse layer's dense references), the others their first rows:
        they are read at the points with a schedule only, not gathered for every point beforehand."""
        n, nk = len(inv), len(keys)
        G = len(uniq)
        if nk == 1:  # one product (a sparse layer): its configurations as they are, m and k one number each
            rows, prod, pair_cfg = uniq, np.zeros(G, np.intp), None
            m, k, n_ = keys[0][:3]
            cfg = S.configurations(m, k, np.broadcast_to(np.int64(n_), (G,)), None, *rows[:, 2:6].T,
                                   mapping_codes=rows[:, 1], caps_where_divisible=True)
        else:
            rows = np.tile(uniq, (nk, 1))  # (product, configuration) pairs, product-major
            prod = np.repeat(np.arange(nk), G)
            mkn = np.array([key[:3] for key in keys], dtype=np.int64)[prod]
            # what depends on the configuration alone computed once per configuration, gathered per pair
            pair_cfg = np.tile(np.arange(G), nk)
            cfg = S.configurations(mkn[:, 0], mkn[:, 1], mkn[:, 2], None, *uniq[:, 2:6].T, mapping_codes=uniq[:, 1],
                                   pair_cfg=pair_cfg, caps_where_divisible=True)
        none = S.unschedulable_divisible_caps(cfg)  # surely no schedule: reasons from the tile counts, no tiles built
        plans, feasible = _Plans.build(keys, prod, rows, cfg, ~none)
        if nk > 1:
            inv = (np.arange(nk)[:, None] * G + inv[None, :]).ravel()  # pair of each (product, point)
        out = {"H": S.gather(cfg["H"].astype(float), inv), "ok": S.gather(feasible, inv), "time": _filled_nan(nk * n)}
        if with_reasons and nk == 1 and G >= with_reasons:  # one product on about a configuration a point (random
            # points): each point's line written at the point, not per configuration then gathered per point
            out["reason"] = self._reasons_at(keys, prod, rows, cfg, none, feasible, inv[:with_reasons], n)
        elif with_reasons:
            want = None
            if with_reasons < n:  # the configurations those points read
                want = np.zeros(len(rows), bool)
                want[inv.reshape(nk, n)[:, :with_reasons]] = True
            out["reason"] = self._reasons(keys, prod, rows, cfg, none, feasible, want, pair_cfg)[inv]
        else:
            out["reason"] = _filled(nk * n, "")
        sel = S.nonzero_at(out["ok"])
        out["at"] = sel
        if len(sel):
            at = sel % n if nk > 1 else sel  # the point of each (product, point) pair
            if point_refs is not None:  # (``sel`` increasing: the points' own runs, then the references')
                own = n - len(point_refs)
                cut = int(sel.searchsorted(own))
                at = np.concatenate((sel[:cut], point_refs[sel[cut:] - own]))
            _store_choice(out, plans, inv, sel, S.gather(nchip, at), S.gather(clock_hz, at), S.gather(bw, at))
        else:
            out.update(zip(_AT_NAMES, np.empty((len(_AT_NAMES), 0))))
        return out

    def _dense_reference(self, key: tuple, batch: _Batch, run: dict[str, np.ndarray]) -> np.ndarray:
        """The time of product ``key`` run dense at each point (the reference of a sparse product; NaN without
        a schedule). A point whose format is dense takes the time of its own ``run`` (the same configuration
        and product: that very run). Of the others only those whose ``nchip`` divides n are planned:
        elsewhere 4.4.10 leaves no BGRP (:func:`schedule.unschedulable`), and random points mostly fall there."""
        if batch.n == 1:
            return run["time"] if batch.groups(True).row[0] == 0 else _dense_time_one(key, batch)
        grp = batch.groups(True)
        own = grp.columns[0] == 0  # format code 0: dense
        need = S.nonzero_at(~own & (key[2] % batch.nchip == 0))
        out = np.where(own, run["time"], np.nan)
        if len(need):
            out[need] = self._runs([key[:3] + (None,)], batch.subset(need), False, reasons=False)[0]["time"]
        return out

    @staticmethod
    def _reasons(keys: list[tuple], prod: np.ndarray, rows: np.ndarray, cfg: dict[str, np.ndarray],
                 none: np.ndarray, feasible: np.ndarray, want: np.ndarray | None = None,
                 config: np.ndarray | None = None) -> np.ndarray:
        """Why each (product, configuration) pair without a schedule has none (``no_schedule_reason``);
        ``want``: only those pairs (the others ""); ``config``: the configuration of each pair when there are
        several products (their lines' (nchip, lmm_kb) tails written once per configuration)."""
        reasons = _filled(len(rows), "")
        if want is not None:
            none, feasible = none & want, feasible | ~want
        for g in S.nonzero_at(~feasible & ~none):
            reasons[g] = S.no_schedule_reason(_schedule(keys[prod[g]], rows[g]).problem)
        bad = S.nonzero_at(cfg["error"] & none)
        if len(bad):
            reasons[bad] = _build_error_lines(rows, cfg, bad)
        plain = S.nonzero_at(none & ~cfg["error"])
        if len(plain):
            reasons[plain] = S.no_schedule_reasons({name: cfg[name][plain] for name in S.LIMIT_NAMES},
                                                   shared=len(keys) > 1, config=None if config is None else config[plain])
        return reasons

    @staticmethod
    def _reasons_at(keys: list[tuple], prod: np.ndarray, rows: np.ndarray, cfg: dict[str, np.ndarray],
                    none: np.ndarray, feasible: np.ndarray, at: np.ndarray, size: int) -> np.ndarray:
        """``_reasons(...)[at]`` over ``size`` lines, "" past ``len(at)``: the line of configuration ``at[i]`` at i
        (``none``, ``feasible`` per configuration, as :meth:`_reasons`), written at the lines themselves -- the flags
        gathered at ``at`` (bytes), no object array over the configurations filled, scattered into and gathered
        (-0.08 M instructions measured at 4,096 points). The same texts; a configuration that several lines read gets one
        text each (the caller takes this path when there are about as many configurations as lines)."""
        none, feasible, error = S.gather(none, at), S.gather(feasible, at), S.gather(cfg["error"], at)
        reasons = _filled(size, "")
        for i in S.nonzero_at(~feasible & ~none):
            g = at[i]
            reasons[i] = S.no_schedule_reason(_schedule(keys[prod[g]], rows[g]).problem)
        bad = S.nonzero_at(error & none)
        if len(bad):
            reasons[bad] = _build_error_lines(rows, cfg, at[bad])
        plain = S.nonzero_at(none & ~error)
        if len(plain):
            conf = S.gather(at, plain)
            reasons[plain] = S.no_schedule_reasons({name: _limit_at(cfg[name], conf) for name in S.LIMIT_NAMES},
                                                   shared=len(keys) > 1)
        return reasons

    def _fill(self, lb: LayerBatch, layer: Layer, r: dict, reps: int, dense_time: np.ndarray, batch: _Batch) -> None:
        if r["ok"] is _NO or not r["ok"].any():  # no point has a schedule: all NaN but the chain, the dense reference
            _fill_nan(lb, mac_units=r["H"], dense_time_s=dense_time)
            return
        if r["ok"] is _YES:  # one point with a schedule (_chosen_one's run)
            _fill_one(lb, layer, r, reps, dense_time, batch)
            return
        _fill_at(lb, layer, r, reps, dense_time, batch)

    # ------------------------------------------------------------ totals
    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        n = batch_size(pts)
        if n == 1:  # one point (a study's trial): the same operations on Python numbers
            return _totals_one(pts, layers)
        cc = _clock_costs(pts)  # its area factor is tech.logic_area_factor of these clocks: not computed again
        nodes = tech.node_masks(pts["tech_nm"])
        if len(nodes) == 1:  # one node (a study at a fixed node, one point): no selection
            u, kb, nc, f = pts["units"], pts["lmm_kb"], pts["nchip"], pts["clock_mhz"]
            logic, lmm = C.area_parts_mm2(u, kb, nc, int(nodes[0][0]), f, cc.area_factor)
            area, static = logic + lmm, tech.static_power_w(logic, nc * u * kb, int(nodes[0][0]), cc.vdd_ratio)
        else:  # each node's formulas over every point, each point's taken at its node (no gathers, scatters)
            u, kb, nc, f = pts["units"], pts["lmm_kb"], pts["nchip"], pts["clock_mhz"]
            sram_kb = nc * u * kb
            for i, (node, sel) in enumerate(nodes):
                logic, lmm = C.area_parts_mm2(u, kb, nc, int(node), f, cc.area_factor)
                a, s = logic + lmm, tech.static_power_w(logic, sram_kb, int(node), cc.vdd_ratio)
                area, static = (a, s) if i == 0 else (np.where(sel, a, area), np.where(sel, s, static))
        base = {"area_mm2": area, "hw_mac_units": (pts["nchip"] * pts["units"] * C.SIMD).astype(float),
                "static_power_w": static}
        if not layers:
            return base

        if len(layers) == 1:  # one layer (an SpMM workload): the sums are its rows (row_sum of one row: a copy)
            tot_time, dense_time, util, util_unopt, starts, chain = _one_layer_sums(layers[0])
        else:
            # [layers, metric, points] in one stack; sums over layers one layer after the other (row_sum, every
            # metric at once: the same additions): a point alone gives the bits it gives in a batch (a sum over
            # axis 0 adds a (layers x 1) column pairwise from 8 layers, the rows of a batch in order)
            cube = np.array([[lb.metrics[k] for k in _TOTAL_INPUTS] for lb in layers], dtype=float)
            time = cube[:, :1]
            sums = row_sum(np.concatenate((cube[:, :2], time * cube[:, 2:4], cube[:, 4:5]), axis=1))
            tot_time, dense_time, util, util_unopt, starts = sums
            chain = None
        with np.errstate(divide="ignore", invalid="ignore"):
            out = {
                **base,
                "speedup_vs_dense": dense_time / tot_time,
                "dense_time_s": dense_time,
                "lmm_utilization": util / tot_time,
                "lmm_utilization_unoptimized": util_unopt / tot_time,
                "starts": starts,
            }
        # the largest chain of a layer, NaN layers skipped (all NaN: NaN); chains are >= 0
        out["mac_units"] = np.fmax.reduce(cube[:, 5], axis=0) if chain is None else chain
        parts = _one_layer_parts(layers[0], n) if len(layers) == 1 else None
        out.update(parts or layer_sums(layers, ENERGY_PARTS, n, from_zero=True))  # (from zero, as _totals_one's)
        return out


#: the layer metrics model_totals reads, in the order of its stack
_TOTAL_INPUTS = ("time_s", "dense_time_s", "lmm_utilization", "lmm_utilization_unoptimized", "starts", "mac_units")


def _one_layer_sums(lb: LayerBatch) -> tuple[np.ndarray, ...]:
    """:meth:`ImaxModel.model_totals`' sums over the layers of a workload of one layer ``lb``, and its largest chain:
    its time, dense time, busy LMM time (time x utilization, both kinds), starts and chain as float64 arrays --
    the values of the stack's ``row_sum`` of one layer (a copy of each row) and of ``np.fmax.reduce`` over one layer
    (its row), without the [1, 6, points] stack, its concatenation and the copy of the block (~0.5 MB moved at 4,096
    points). The time is the layer's own row (model_totals only divides by it); the others, which the totals keep,
    are new arrays. The busy times are the stack's very product, the time row broadcast over the two utilization rows (a
    contiguous 1-D product may pick the other NaN where a NaN meets a NaN of the opposite sign: numpy's SIMD tail)."""
    time, dense, util, util_unopt, starts, chain = (np.asarray(metric_of(lb, k), dtype=float) for k in _TOTAL_INPUTS)
    busy, busy_unopt = (time[None, None] * S.stack_rows((util, util_unopt))[None])[0]
    return time, dense.copy(), busy, busy_unopt, starts.copy(), chain.copy()


def _one_layer_parts(lb: LayerBatch, n: int) -> dict[str, np.ndarray] | None:
    """``layer_sums([lb], ENERGY_PARTS, n, from_zero=True)`` of a workload of one layer: each energy part's row added
    to 0.0 (the sum's one addition, a zero row and the layer's: the same bits, as new float64 arrays) without the
    [parts, 2, points] cube of a zero layer and the layer, its copy and its sum (~0.5 M instructions a call at 4,096
    points); None when a part is not an array of ``n`` points (then ``layer_sums``)."""
    rows = [np.asarray(metric_of(lb, k), dtype=float) for k in ENERGY_PARTS]
    if any(r.shape != (n,) for r in rows):
        return None
    return {k: np.add(_ZERO, r) for k, r in zip(ENERGY_PARTS, rows)}


#: 0.0 as a read-only 0-d float64 array (what the zero row's elements are; no conversion of a Python float a call)
_ZERO = np.array(0.0)
_ZERO.flags.writeable = False


def _totals_one(pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
    """:meth:`ImaxModel.model_totals` of one point: its very operations in their order on Python numbers
    (integer products exact as int64's; float +, -, *, / IEEE doubles as float64's, a division by zero as
    numpy's, ``result._div``; sums layer after layer as ``row_sum``, ``result._seq``), the area and leakage from
    the same formulas on Python numbers (numpy scalars), the largest chain as ``np.fmax.reduce``. Each total is
    a (1,) view of one read-only float array (the layout of ``result``'s one-point totals): ~40 numpy calls fewer."""
    cc = _clock_costs(pts)
    node = int(pts["tech_nm"][0])
    u, kb, nc, f = (pts[k].item(0) for k in ("units", "lmm_kb", "nchip", "clock_mhz"))
    logic, lmm = C.area_parts_mm2(u, kb, nc, node, f, cc.area_factor.item(0))
    area, static = logic + lmm, tech.static_power_w(logic, nc * u * kb, node, cc.vdd_ratio.item(0))
    values = [area, nc * u * C.SIMD, static]
    names = _BASE_TOTALS
    if layers:
        rows = [[float(metric_of(lb, k).item(0)) for k in _TOTAL_INPUTS] for lb in layers]  # no lazy dict built
        time, dense, util, util_unopt, starts, chain = zip(*rows)
        tot_time, dense_time = _seq(time), _seq(dense)
        busy, busy_unopt = _seq(map(operator.mul, time, util)), _seq(map(operator.mul, time, util_unopt))
        largest = functools.reduce(_fmax, chain)
        values += [_div(dense_time, tot_time), dense_time, _div(busy, tot_time), _div(busy_unopt, tot_time),
                   _seq(starts), largest]
        values += [_float_seq([float(metric_of(lb, k).item(0)) for lb in layers], 0.0) for k in ENERGY_PARTS]
        names = _ONE_TOTALS
    block = np.array(values, dtype=float).reshape(-1, 1)
    block.flags.writeable = False  # (the result's totals hand its rows out as they are: no read-only view per key)
    return dict(zip(names, block))


def _fmax(a: float, b: float) -> float:
    """``np.fmax`` of two Python floats (NaN only when both are; chains are >= 0: no signed zeros to order)."""
    if b != b:
        return a
    if a != a:
        return b
    return a if a >= b else b


#: the keys of model_totals, in its order: without layers, with them
_BASE_TOTALS = ("area_mm2", "hw_mac_units", "static_power_w")
_ONE_TOTALS = _BASE_TOTALS + ("speedup_vs_dense", "dense_time_s", "lmm_utilization", "lmm_utilization_unoptimized",
                              "starts", "mac_units", *ENERGY_PARTS)


@dataclass
class _Groups:
    """Points grouped by their structural parameters for one kind of product (sparse A or dense)."""

    fmt: np.ndarray  # format label per point (object)
    mapping: np.ndarray  # mapping label per point (object)
    columns: np.ndarray | None  # [7, points]: format code, mapping code, units, cols, lmm_kb, nchip, lmm_opt
    row: tuple = ()  # a batch of one point: its row of ``uniq`` in Python numbers (then only it, no arrays)
    _distinct: tuple | None = None  # (uniq, inv), found when first read

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        if self._distinct is None:
            first, inv = S.distinct_rows(self.columns)  # in the order of np.unique over the rows
            self._distinct = (np.ascontiguousarray(self.columns[:, first].T), inv)
        return self._distinct

    @property
    def uniq(self) -> np.ndarray:
        """[groups, 7]: the distinct rows of ``columns``, in increasing order."""
        return self._rows()[0]

    @property
    def inv(self) -> np.ndarray:
        """The group of each point."""
        return self._rows()[1]

    @property
    def mapping_names(self) -> np.ndarray:
        """The mapping name of each group (the runs read the mapping codes of ``uniq``)."""
        return _MAPPING_NAMES[self.uniq[:, 1]]


@dataclass
class _Batch:
    """What every layer of one ``evaluate_layers`` call shares: the points' per-point numbers (clock, link
    bandwidth, voltage energy scale, technology nodes) and their structural groups, computed once."""

    pts: Points
    n: int
    clock_hz: np.ndarray
    bw: np.ndarray
    nchip: np.ndarray
    vscale: np.ndarray
    nodes: list[tuple[int, np.ndarray]]
    _groups: dict[bool, _Groups] = field(default_factory=dict)
    _dram_pj: tuple[np.ndarray, np.ndarray] | None = None
    _dram_codes: tuple[np.ndarray | None] | None = None  # (the points' DRAM codes, or None for other names,)
    _one_struct: tuple[int, ...] | None = None  # a batch of one point: its structural values (_one_group)

    def dram_energy_j(self, read_bytes: np.ndarray, write_bytes: np.ndarray,
                      at: np.ndarray | None = None) -> np.ndarray:
        """``tech.dram_energy_j`` at the points' DRAM types (``at``: of those points only), their pJ per byte looked
        up once per batch (not once per layer: the lookup walks the points' names in Python)."""
        if at is not None and self._dram_pj is None and self.pts["dram"].ndim == 1:  # those points' codes only: the
            # table read at them (the values of every point's pJ gathered at ``at``, without the gathers over all)
            if self._dram_codes is None:
                self._dram_codes = (_choice_codes(self.pts["dram"], tech.DRAM_NAMES),)
            codes = self._dram_codes[0]
            if codes is not None:
                table, codes = _dram_table(), codes[at]
                return (np.asarray(read_bytes, dtype=float) * table[0][codes]
                        + np.asarray(write_bytes, dtype=float) * table[1][codes]) * 1e-12
        if self._dram_pj is None:
            self._dram_pj = _dram_pj_per_byte(self.pts["dram"])
        read_pj, write_pj = self._dram_pj
        if at is not None:
            read_pj, write_pj = read_pj[at], write_pj[at]
        return (np.asarray(read_bytes, dtype=float) * read_pj + np.asarray(write_bytes, dtype=float) * write_pj) * 1e-12

    @classmethod
    def of(cls, pts: Points) -> _Batch:
        if len(pts["tech_nm"]) == 1:  # one point: its node, and every point of the batch at it
            nodes = [(pts["tech_nm"].item(0), _YES)]
        else:
            nodes = tech.node_masks(pts["tech_nm"])
        return cls(pts, batch_size(pts), pts["clock_mhz"] * 1e6, C.link_bytes_per_s(pts["link_gbps"]),
                   np.asarray(pts["nchip"], dtype=np.int64),
                   _clock_costs(pts).energy_scale, nodes)

    def subset(self, idx: np.ndarray) -> _Batch:
        """The points ``idx`` of this batch as a batch of their own (their structural groups found anew)."""
        return _Batch({k: v[idx] for k, v in self.pts.items()}, len(idx), self.clock_hz[idx], self.bw[idx],
                      self.nchip[idx], self.vscale[idx], [(node, sel[idx]) for node, sel in self.nodes])

    def groups(self, sparse: bool) -> _Groups:
        if sparse not in self._groups and self.n == 1:
            self._groups[sparse] = self._one_group(sparse)
        if sparse not in self._groups:
            pts = self.pts
            if sparse:  # codes: FORMATS dense, csr, jds; C.MAPPINGS dense, ivj, ivs (checked parameter values)
                fmt = pts["format"].astype(object)
                fcode, scode = _choice_codes(pts["format"], FORMATS), _choice_codes(pts["schedule"], SCHEDULES)
                if fcode is not None and scode is not None:  # the mapping labels from the codes (one gather)
                    mcode = np.minimum(fcode, 1) * (1 + scode)  # dense: 0, else 1 + ivs
                    mapping = _MAPPING_LABELS[mcode]
                else:  # names outside the declared choices, or many string objects: compared by value
                    dense = fmt == "dense"
                    mapping = pts["schedule"].astype(object)  # a copy: "dense" written where the format is dense
                    mapping[dense] = "dense"
                    sparse_ = (~dense).astype(np.int64)
                    fcode = sparse_ + (fmt == "jds")  # 0 dense, else 1 + jds (the formats exclude each other)
                    mcode = sparse_ * (1 + (mapping == "ivs"))
            else:
                fmt, mapping = _filled(self.n, "dense"), _filled(self.n, "dense")
                fcode = mcode = np.zeros(self.n, np.int64)
            columns = np.empty((2 + len(_STRUCT) + 1, self.n), np.int64)
            columns[0], columns[1] = fcode, mcode
            for i, p in enumerate(_STRUCT):
                columns[2 + i] = pts[p]
            columns[-1] = pts["lmm_opt"]
            self._groups[sparse] = _Groups(fmt, mapping, columns)
        return self._groups[sparse]


    def _one_group(self, sparse: bool) -> _Groups:
        """:meth:`groups` of a batch of one point, from its Python values: its labels (shared read-only arrays)
        and its row of ``uniq`` as Python numbers, all the one-point path reads (no ``uniq``, ``inv`` arrays:
        a study asking one point at a time calls this twice per point)."""
        pts = self.pts
        fmt = pts["format"][0] if sparse else "dense"
        mapping = "dense" if fmt == "dense" else pts["schedule"][0]
        mcode = C.MAPPINGS.index(mapping) if mapping in C.MAPPINGS else 0
        if self._one_struct is None:  # units, cols, lmm_kb, nchip, lmm_opt: shared by both kinds of product
            self._one_struct = tuple(int(pts[p][0]) for p in _STRUCT) + (int(pts["lmm_opt"][0]),)
        row = (FORMATS.index(fmt) if fmt in FORMATS else 0, mcode) + self._one_struct
        return _Groups(*_one_labels(fmt, mapping), None, row)


@dataclass
class _Plans:
    """The candidates of several configurations, flattened: configuration g owns candidates
    ``first[g] .. first[g] + count[g] - 1`` (fastest-first tie order; configuration after configuration unless
    ``starts`` says where each begins), with their counts ``feats``, AGRP and BGRP; ``per`` holds each
    configuration's :data:`plans.PROBLEM_NUMBERS` (at row ``per_row[g]`` when given)."""

    count: np.ndarray
    feats: dict[str, np.ndarray]
    agrp: np.ndarray
    bgrp: np.ndarray
    per: dict[str, np.ndarray]
    block: np.ndarray | None = None  # [schedule.FEATURES, candidates] float64 whose rows are ``feats``, if any
    starts: np.ndarray | None = None  # the first candidate of each configuration, when not in configuration order
    per_row: np.ndarray | None = None  # the row of ``per`` of each configuration, when not its own index

    @property
    def first(self) -> np.ndarray:
        return np.cumsum(self.count) - self.count if self.starts is None else self.starts

    @classmethod
    def build(cls, keys: list[tuple], prod: np.ndarray, rows: np.ndarray, cfg: dict[str, np.ndarray],
              live: np.ndarray) -> tuple[_Plans, np.ndarray]:
        """Plans of the (product ``keys[prod[g]]``, configuration ``rows[g]``) pairs where ``live`` (and
        which of them have a schedule): dense ones in closed form, sparse ones over each tiling, both for
        all pairs at once (:mod:`.plans`); a sparse configuration with an empty tile, and every pair when
        there are only a few, by the cached :func:`schedule.schedule`."""
        parts, later = [], []
        if live.sum() <= _FEW_CONFIGS:  # a few configurations (one-point studies): cached scalar schedules
            later = np.flatnonzero(live).tolist()
            live = np.zeros_like(live)
        n_of, sparse = cfg["n"], rows[:, 0] > 0  # format code 0: dense
        groups = _groups_by_kind(S.nonzero_at(live), sparse, n_of)
        if (len(groups) == 2 and not groups[0][1] and groups[1][1] and groups[0][2] == groups[1][2]
                and groups[0][0][-1] < groups[1][0][0]):  # one sparse product and dense runs of it (an SpMM batch)
            parts.append(cls._mixed(keys, prod, rows, cfg, groups, later))
            groups = []
        for at, sp, n in groups:
            sub = {name: v[at] if np.ndim(v) else v for name, v in cfg.items()}
            opt = rows[at, 6].astype(bool)
            if not sp:
                m, k = (np.array([key[i] for key in keys], dtype=np.int64)[prod[at]] for i in (0, 1))
                parts.append((at, P.dense_plans(m, k, n, sub, opt)))
                continue
            # one sparse product: every format and mapping at once
            d = P.sparse_plans(keys[0][3], _FORMAT_NAMES[rows[at, 0]], _MAPPING_NAMES[rows[at, 1]], n, sub, opt)
            parts.append((at, d))
            later += at[d["fallback"]].tolist()
        feasible = live.copy()
        for g in later:
            sch = _schedule(keys[prod[g]], rows[g])
            feasible[g] = sch.feasible
            if sch.feasible:
                parts.append((np.array([g]), P.from_schedule(sch)))
        d = P.merge_in_place(len(rows), parts)
        return cls(d["count"], d["feats"], d["agrp"], d["bgrp"], d["per"], d.get("block"), d.get("first"),
                   d.get("per_row")), feasible

    @staticmethod
    def _mixed(keys: list[tuple], prod: np.ndarray, rows: np.ndarray, cfg: dict[str, np.ndarray], groups: list,
               later: list) -> tuple[np.ndarray, dict]:
        """:meth:`build`'s part of a dense group and a sparse group of one B column count n (the sparse product's
        runs and its dense ones: an SpMM batch), both planned in one pass (:func:`plans.mixed_plans`); the sparse
        configurations with an empty tile appended to ``later``. The dense indices precede the sparse ones."""
        (at_d, _, n), (at_s, _, _) = groups
        at = np.concatenate((at_d, at_s))
        sub = {name: S.gather(cfg[name], at) for name in P.PLAN_INPUTS}  # (only what the plans read)
        m, k = (np.array([key[i] for key in keys], dtype=np.int64)[prod[at_d]] for i in (0, 1))
        d, idx, fallback = P.mixed_plans(keys[0][3], _FORMAT_NAMES[rows[at_s, 0]], _MAPPING_NAMES[rows[at_s, 1]], n,
                                         m, k, len(at_d), sub, rows[at, 6].astype(bool))
        later += at_s[fallback].tolist()
        return at[idx], d


def _rows_at(columns: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The rows [len(idx), columns] of the points ``idx`` of ``columns`` ([columns, points]): a column-major view of
    the gathered columns (the values of ``np.ascontiguousarray(columns[:, idx].T)`` without the transposing copy;
    the runs read the configurations' numbers column by column, contiguous here)."""
    return columns.take(idx, axis=1).T


def _groups_by_kind(live: np.ndarray, sparse: np.ndarray, n_of: np.ndarray) -> list[tuple[np.ndarray, bool, int]]:
    """(the indices among ``live`` with A sparse or not and B columns n, that sparse flag, n) for each such
    (sparse, n) in increasing order: one int64 code per live index ((sparse, n) in mixed radix: the same order;
    its distinct values by :func:`schedule.unique_index_inverse`) and one compare per group over the live
    indices only (not three over every configuration per group, nor a Python tuple per live configuration)."""
    if not len(live):
        return []
    sp, n = sparse[live], np.asarray(n_of, dtype=np.int64)[live] if np.ndim(n_of) else np.full(len(live), n_of)
    lo, hi = int(np.minimum.reduce(n)), int(np.maximum.reduce(n))  # (the ufuncs: no Python-level .min, .max)
    if lo == hi >= 0:  # one n (a sparse layer's batch): the dense indices, then the sparse ones (no sort)
        return [(at, s, lo) for at, s in ((live[~sp], False), (live[sp], True)) if len(at)]
    if lo < 0:  # (B columns are positive; any other value by the tuples)
        pairs = sorted(set(zip(sp.tolist(), n.tolist())))
        return [(live[(sp == s) & (n == v)], s, v) for s, v in pairs]
    code = sp * np.int64(hi + 1) + n
    first, inv = S.unique_index_inverse(code)  # the distinct codes in increasing order, each index's
    return [(live[inv == j], c > hi, c - (hi + 1) if c > hi else c) for j, c in enumerate(code[first].tolist())]


#: ``as_matmuls`` of a layer, remembered by the layer's identity (a study evaluates the same layer objects every
#: trial; lowering a convolution builds its products anew, twice per layer and call); a tuple of frozen layers
_matmuls: IdentityMemo[tuple] = IdentityMemo(as_matmuls, size=1024)


#: the counts of the chosen candidate a run keeps: those :meth:`ImaxModel._fill` reads (the PIO words, pauses and
#: execution cycles enter only the state times)
_RUN_FEATURES = ("starts", "a_groups", "a_bytes", "b_bytes", "c_load_bytes", "c_drain_bytes", "issued_macs",
                 "lmm_exec_bytes", "b_groups")
#: the per-point results of one product (:meth:`ImaxModel._runs`): counts, choice, LMM use, state times
_RUN_NAMES = _RUN_FEATURES + ("time", "agrp", "bgrp", "H", "util", "util_unopt", "blocks", "row_tiles", "col_tiles",
                              "slots") + STATES
#: the counts of the chosen candidates read to store a choice: the kept ones, the timed ones, AGRP and the A group
_CHOSEN_FEATURES = tuple(k for k in S.FEATURES if k in set(_RUN_FEATURES + S.TIMING_FEATURES
                                                            + ("a_group_slots", "a_group_blocks")))


def _run_one(key: tuple, batch: _Batch, sparse: bool, reasons: bool) -> dict[str, np.ndarray]:
    """:meth:`ImaxModel._runs` of product ``key`` on a batch of one point (a study asking one point at a
    time): the screen of :func:`schedule.unschedulable` and its reason in Python numbers (:func:`_screen`,
    cached), else the cached scalar schedule timed as the batched path times a few configurations. The same
    numbers and reasons as the batched path (tested)."""
    row = batch.groups(sparse).row
    fmt, mapping = FORMATS[row[0]], C.MAPPINGS[row[1]]
    H, why = _screen(*key[:3], fmt, mapping, *row[2:6])
    if why is None:
        sch = S.cached_schedule(key, fmt, mapping, *row[2:6], bool(row[6]))
        if not sch.feasible:
            why = S.no_schedule_reason(sch.problem)
    if why is not None:  # no schedule: what _layer and _fill read of it (every other number NaN)
        return {"H": np.array([float(H)]), "ok": _NO, "reason": np.array([why if reasons else ""], dtype=object),
                "time": _NAN}
    return _chosen_one(P.from_schedule(sch), H, int(batch.nchip[0]), batch.clock_hz, batch.bw)


def _chosen_one(plan: dict, H: int, nchip: int, clock_hz: np.ndarray, bw: np.ndarray) -> dict[str, np.ndarray]:
    """The run of one point on the candidates of ``plan`` (:func:`plans.from_schedule`): :func:`_store_one`'s
    numbers (every candidate timed once, the fastest one's counts, state cycles, AGRP, BGRP and LMM use) read
    as Python numbers and written as the (1,) rows of one array -- the same element-wise operations (a product
    of integers as int64's, float * and / as float64's) with ~60 numpy calls fewer."""
    feats, per = plan["feats"], {k: v.item(0) for k, v in plan["per"].items()}
    st = S.timing(feats, nchip, clock_hz, bw)
    i = int(np.argmin(st["time"]))
    vals = {k: feats[k].item(i) for k in _ONE_FEATURES}
    clock = clock_hz.item(0)
    reserved = (vals["a_group_slots"] * per["urb"] if per["jds"]
                else float(per["tile_rows"] * plan["agrp"].item(i) * per["urb"]))
    vals.update(time=st["time"].item(i), agrp=vals["a_group_blocks"], bgrp=float(plan["bgrp"].item(i)), H=float(H),
                util=reserved / per["half"], **{k: float(per[k]) for k in _PER_RUN})
    vals.update((name, st[name].item(i) * clock) for name in STATES)
    out = dict(zip(_RUN_NAMES, np.array([vals[k] for k in _RUN_NAMES], dtype=float).reshape(-1, 1)))
    out["ok"], out["reason"] = _YES, _EMPTY
    return out


#: the numbers of a batched run (:meth:`ImaxModel._runs_on`) kept only at the points with a schedule (its ``at``)
_AT_NAMES = tuple(k for k in _RUN_NAMES if k not in ("time", "H"))


def _limit_at(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` of a configurations' limit (:data:`schedule.LIMIT_NAMES`) for the reason lines, which only read it:
    a broadcast array (one value: a one-product run's n) as its value broadcast to ``idx`` (read-only, the same
    values, no gather), else :func:`schedule.gather`."""
    if a.ndim == 1 and len(a) and a.strides[0] == 0:
        return np.broadcast_to(a[:1], idx.shape)
    return S.gather(a, idx)


def _build_error_lines(rows: np.ndarray, cfg: dict[str, np.ndarray], bad: np.ndarray) -> np.ndarray:
    """The lines (objects) of configurations ``bad`` (rows of ``rows``, ``cfg``) with a build error: too few units or
    LMM (``configurations`` found no H or no tiling): the line names (mapping, cols, units) when H < 1, else lmm_kb
    only: one line per distinct such key, asked of the cached build_error with only what it reads (the same text; a
    batch meets the same few keys)."""
    mc, units, cols, kb = rows[bad][:, 1:5].T
    no_h = cfg["H"][bad] < 1
    first, inv = S.distinct_rows((no_h, np.where(no_h, mc, 0), np.where(no_h, cols, 0),
                                  np.where(no_h, units, 0), np.where(no_h, 0, kb)))
    lines = [S.build_error(C.MAPPINGS[mc], units, cols, 0, 0) if no else S.build_error("dense", 0, 0, kb, 1)
             for no, mc, units, cols, kb in zip(no_h[first].tolist(), *rows[bad[first]][:, 1:5].T.tolist())]
    return np.array(lines, dtype=object)[inv]


def _run_layer_batch(layer: Layer, ok: np.ndarray, reason: np.ndarray, own: bool) -> LayerBatch:
    """``LayerBatch(layer, len(ok))`` after ``.infeasible(~ok, reason)`` for a batched run's ``ok`` (bool) and
    ``reason`` (objects), which is "" wherever ``ok`` (:meth:`ImaxModel._runs_on` writes reasons only for pairs
    without a schedule): a copy of ``ok`` as the flags and ``reason`` as the reasons (copied unless ``own``: the
    run is this layer's alone and nothing reads its reasons after), the same arrays without a fill of "" and the
    infeasible points' reasons gathered and scattered once more."""
    return LayerBatch(layer, len(ok), feasible=ok.copy(), reason=reason if own else reason.copy())


def _run_part(out: dict[str, np.ndarray], lo: int, hi: int) -> dict[str, np.ndarray]:
    """The run of pairs ``lo`` .. ``hi - 1`` of :meth:`ImaxModel._runs_on`'s ``out`` (one product's points) in the
    same form: the numbers over every pair sliced, those kept at ``at`` cut to the pairs in range (``at`` is
    increasing) and ``at`` made relative to ``lo``."""
    at = out["at"]
    i, j = (0, len(at)) if lo == 0 and hi >= len(out["ok"]) else at.searchsorted((lo, hi)).tolist()
    run = {k: out[k][lo:hi] for k in ("H", "ok", "reason", "time")}
    run["at"] = at[i:j] - lo if lo else at[i:j]
    run.update((k, out[k][i:j]) for k in _AT_NAMES)
    return run


#: the problem numbers a run keeps as they are (_write_choice)
_PER_RUN = ("util_unopt", "blocks", "row_tiles", "col_tiles", "slots")
#: the counts of its fastest candidate _chosen_one reads
_ONE_FEATURES = _RUN_FEATURES + ("a_group_slots", "a_group_blocks")


def _dense_time_one(key: tuple, batch: _Batch) -> np.ndarray:
    """The time of product ``key`` run dense on a batch of one point (the reference of a sparse product):
    :func:`_run_one`'s ``time`` without its other numbers; NaN at once where ``nchip`` does not divide n
    (4.4.10 leaves no BGRP: :func:`schedule.unschedulable`)."""
    m, k, n = key[:3]
    row = batch.groups(False).row
    if n % row[5] != 0 or _screen(m, k, n, "dense", "dense", *row[2:6])[1] is not None:
        return _NAN
    sch = S.cached_schedule((m, k, n, None), "dense", "dense", *row[2:6], bool(row[6]))
    if not sch.feasible:
        return _NAN
    t = S.timing(sch.feats, int(batch.nchip[0]), batch.clock_hz, batch.bw)["time"]
    return t[[np.argmin(t)]]


@lru_cache(maxsize=16)
def _one_labels(fmt: str, mapping: str) -> tuple[np.ndarray, np.ndarray]:
    """The format and mapping labels of a batch of one point (read-only: shared by the batches that ask)."""
    return _frozen(np.array([fmt], dtype=object)), _frozen(np.array([mapping], dtype=object))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


#: a one-point run without a schedule: not feasible, time NaN (read-only: shared by every such run); a one-point
#: batch's node mask
_NO, _NAN, _YES = _frozen(np.array([False])), _frozen(np.array([np.nan])), _frozen(np.array([True]))
_EMPTY = _frozen(np.array([""], dtype=object))  # the reason of a one-point run with a schedule


@lru_cache(maxsize=4096)
def _screen(m: int, k: int, n: int, fmt: str, mapping: str, units: int, cols: int, lmm_kb: int,
            nchip: int) -> tuple[int, str | None]:
    """(H, why no schedule exists or None) of an m x k x n product on one configuration from its tile counts
    alone: :func:`schedule.unschedulable` and :func:`schedule.no_schedule_reasons` (whose ``jds_top`` is -1)
    of one configuration, or the build error; None when a schedule may exist."""
    return S.screen(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip)


_FORMAT_NAMES, _MAPPING_NAMES = np.array(FORMATS), np.array(C.MAPPINGS)
#: the mapping label of each mapping code (object: gathered into a batch's labels)
_MAPPING_LABELS = _frozen(np.array(C.MAPPINGS, dtype=object))

#: past this many distinct string objects in an object array, :func:`_choice_codes` compares by value
_CHOICE_OBJECTS_MAX = 8
#: up to this many elements (one point: a study's trial), :func:`_choice_codes` looks each one up (~1 us; the
#: pointer view alone costs ~10 us)
_CHOICE_BY_VALUE_MAX = 64


def _choice_codes(values: np.ndarray, names: tuple[str, ...]) -> np.ndarray | None:
    """The index in ``names`` of each element of ``values`` (a 1-D object array of strings: a choice
    parameter's points) as int64, or None when an element is not one of ``names`` (or is no string).

    Why: comparing an object array with a string costs ~15 ns an element (a Python comparison each); the
    points of a batch hold a few string objects (the parameter's declared choices, shared by every row), so
    the elements are grouped by the identity of their object instead -- the object pointers the array holds,
    read as integers (one integer comparison an element), and one dict lookup per distinct object. Equal
    pointers are the same object, so the codes are those of comparing by value. Past
    :data:`_CHOICE_OBJECTS_MAX` distinct objects (strings made one by one, e.g. read from a file), a lookup
    per element."""
    index = _name_index(names)
    n = values.size
    if n <= _CHOICE_BY_VALUE_MAX or values.dtype != object or values.ndim != 1 or not values.flags.c_contiguous:
        return _codes_by_value(values, index)
    codes = np.empty(n, np.int64)
    if n == 0:
        return codes
    ptr = np.ctypeslib.as_array((ctypes.c_ssize_t * n).from_address(values.ctypes.data))  # a view: values alive
    if (by_names := _codes_of_names(ptr, names)) is not None:
        return by_names
    todo = np.ones(n, bool)
    i = 0
    for _ in range(_CHOICE_OBJECTS_MAX):
        obj = values[i]
        code = index.get(obj) if type(obj) is str else None
        if code is None:
            return None
        same = ptr == ptr[i]
        codes[same] = code
        todo &= ~same
        i = int(np.argmax(todo))
        if not todo[i]:
            return codes
    return _codes_by_value(values, index)


def _codes_of_names(ptr: np.ndarray, names: tuple[str, ...]) -> np.ndarray | None:
    """:func:`_choice_codes` when every element is one of the ``names`` objects themselves (the declared choices a
    batch's rows share), from the elements' pointers ``ptr``: the sum over names of (index x whether the element is
    that object) -- one compare and one count per name, an addition per name past the first, no masked assignment
    (~7 us each at 4,096 elements) nor a search for the next object; None when some element is another object
    (or the names are not distinct objects), for the general path."""
    if len(set(map(id, names))) != len(names):
        return None
    small = len(names) <= 256  # the sum in one byte an element (a bool mask read as uint8), widened once at the end:
    codes, found = None, 0  # no int64 cast and product of every mask (~17 instructions an element each)
    for i, name in enumerate(names):
        same = ptr == id(name)
        k = int(np.count_nonzero(same))
        if not k:
            continue
        found += k
        if i:
            term = same.view(np.uint8) * np.uint8(i) if small else same * np.int64(i)
            codes = term if codes is None else np.add(codes, term, out=codes)
        if found == len(ptr):
            return codes.astype(np.int64, copy=False) if codes is not None else np.zeros(len(ptr), np.int64)
    return None


def _codes_by_value(values: np.ndarray, index: dict[str, int]) -> np.ndarray | None:
    """:func:`_choice_codes` by a dict lookup per element."""
    try:
        return np.fromiter(map(index.__getitem__, values.tolist()), np.int64, values.size)
    except (KeyError, TypeError):
        return None


@lru_cache(maxsize=16)
def _name_index(names: tuple[str, ...]) -> dict[str, int]:
    """{name: its index} of a tuple of names."""
    return {name: i for i, name in enumerate(names)}


def _dram_pj_per_byte(dram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``tech.dram_pj_per_byte`` of the points' DRAM names: the (read, write) pJ per byte of each declared name
    (``tech.DRAM_NAMES``, looked up once there), gathered by each point's code (:func:`_choice_codes`: by the
    identity of the points' few string objects, not a dict lookup per point); ``tech.dram_pj_per_byte``
    itself for other names."""
    table = _dram_table()
    rows = _choice_codes(dram, tech.DRAM_NAMES)
    if rows is None:
        return tech.dram_pj_per_byte(dram)
    return table[0][rows].reshape(dram.shape), table[1][rows].reshape(dram.shape)


@lru_cache(maxsize=1)
def _dram_table() -> tuple[np.ndarray, np.ndarray]:
    """(read pJ/B, write pJ/B) of each name of ``tech.DRAM_NAMES``."""
    return tech.dram_pj_per_byte(np.array(tech.DRAM_NAMES, dtype=object))


def _filled_nan(n: int) -> np.ndarray:
    """``np.full(n, np.nan)``: from :data:`_NAN_BY_PRODUCT` elements on, NaN times a row of ones (numpy's SIMD loop of
    a number and an array, ~1.6 instructions an element against the fill's ~3.8: -7 k a row of 4,096, ~35 rows a
    call; NaN x 1 is that very NaN, so the same bits), else a fill."""
    if n >= _NAN_BY_PRODUCT:
        return np.multiply(_NAN, _ones(n))
    out = np.empty(n)
    out.fill(np.nan)
    return out


#: rows of at least this many elements are filled with NaN by a product (its call costs ~1.5 k instructions more)
_NAN_BY_PRODUCT = 1024
#: NaN as a read-only 0-d float64 array (what ``np.nan`` becomes in a ufunc call)
_NAN = np.array(np.nan)
_NAN.flags.writeable = False
_ONES = np.ones(0)
_ONES.flags.writeable = False


def _ones(n: int) -> np.ndarray:
    """A read-only row of ``n`` ones: a view of one buffer, grown (to a power of two) when a longer row is asked."""
    global _ONES
    if len(_ONES) < n:
        _ONES = np.ones(1 << (n - 1).bit_length())
        _ONES.flags.writeable = False
    return _ONES[:n]


def _filled(n: int, text: str) -> np.ndarray:
    """``np.full(n, text, dtype=object)`` (the same array; np.full takes ~0.2 ms for 4096 objects, this ~10 us)."""
    out = np.empty(n, dtype=object)
    out.fill(text)
    return out

#: up to this many configurations in a call, plans come from the cached scalar schedules (a study asking
#: one point at a time revisits configurations; the batched pass's fixed numpy cost is larger than a hit)
_FEW_CONFIGS = 4


def _schedule(key: tuple, row: np.ndarray) -> S.Schedule:
    """The cached scalar schedule of product ``key`` on the configuration ``row`` of ``_Groups.uniq``."""
    return S.cached_schedule(key, FORMATS[row[0]], C.MAPPINGS[row[1]], *(int(x) for x in row[2:6]), bool(row[6]))


_CLOCK_COSTS: dict[tuple, tech.ClockCosts] = {}


def _clock_costs(pts: Points) -> tech.ClockCosts:
    """``tech.clock_costs`` of the points' clocks and nodes. One point's are kept here by its clock and node as
    Python numbers (one evaluation asks for them per layer batch, vector unit and totals); a batch's are kept by
    ``tech.clock_costs`` itself (its arrays compared bit for bit)."""
    clock, node = pts["clock_mhz"], pts["tech_nm"]
    if not (type(clock) is np.ndarray and type(node) is np.ndarray and clock.shape == node.shape == (1,)):
        return tech.clock_costs(clock, node)
    key = (float(clock.item(0)), node.item(0))
    if key not in _CLOCK_COSTS:
        if len(_CLOCK_COSTS) >= 8:
            _CLOCK_COSTS.pop(next(iter(_CLOCK_COSTS)))
        _CLOCK_COSTS[key] = tech.clock_costs(clock, node)
    return _CLOCK_COSTS[key]


def _store_choice(out: dict[str, np.ndarray], plans: _Plans, inv: np.ndarray, sel: np.ndarray,
                  nchip: np.ndarray, clock_hz: np.ndarray, bw: np.ndarray) -> None:
    """The fastest candidate of configuration ``inv[k]`` of ``plans`` for each point k of ``sel``, its counts,
    times and LMM use stored in ``out`` (all points at once): its time at ``sel`` of ``out["time"]``, the other
    numbers of :data:`_AT_NAMES` as new arrays over ``sel`` (what :meth:`ImaxModel._runs_on` returns); ``nchip``,
    ``clock_hz``, ``bw``: those of the points ``sel``."""
    n_cand, first, feats = plans.count, plans.first, plans.feats
    g = inv[sel]
    cand = np.empty(len(sel), dtype=np.int64)
    sizes = np.bincount(g, minlength=len(n_cand))
    alone = sizes >= (_BIG_GROUP if np.count_nonzero(sizes) > _FEW_CONFIGS else 1)
    big = alone[g]
    for grp in S.nonzero_at(alone):  # many points on one configuration (or few configurations): one by one
        at = np.flatnonzero(g == grp)
        own = {k: v[first[grp]:first[grp] + n_cand[grp]][None, :] for k, v in feats.items()}
        t = S.timing(own, int(nchip[at[0]]), clock_hz[at][:, None], bw[at][:, None])["time"]
        cand[at] = first[grp] + np.argmin(t, axis=1)
    few = S.nonzero_at(~big)  # the others: every (point, candidate) pair at once
    st = {} if len(few) == len(sel) else None  # every point timed by _fastest: its chosen pairs' times kept
    if len(few):
        gf = S.gather(g, few)
        cand[few] = _fastest(feats, S.gather(first, gf), S.gather(n_cand, gf), S.gather(nchip, few),
                             S.gather(clock_hz, few), S.gather(bw, few), plans.block,
                             states=st)
    chosen = _columns(feats, cand, _CHOSEN_FEATURES, plans.block)
    if not st:  # (some point timed on its own configuration's candidates, or none: the chosen ones timed again)
        st = S.timing(chosen, nchip, clock_hz, bw)
    at = _choice_numbers(plans, g, cand, chosen, st, clock_hz)
    out["time"][sel] = st["time"]
    out.update((k, at[k]) for k in _AT_NAMES)


def _choice_numbers(plans: _Plans, g: np.ndarray, cand: np.ndarray, chosen: dict[str, np.ndarray],
                    st: dict[str, np.ndarray], clock_hz: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`_write_choice`'s numbers of points on configurations ``g`` with candidates ``cand`` as new float64
    arrays over those points (every number of :data:`_AT_NAMES`; what writing them into NaN rows of a block gives
    when every point is written: no block filled with NaN, then copied into)."""
    out = {k: chosen[k] for k in _RUN_FEATURES}  # gathers of float64 counts: arrays of their own
    for name in STATES:
        out[name] = st[name] * clock_hz
    out["agrp"] = chosen["a_group_blocks"]
    out["bgrp"] = S.gather(plans.bgrp, cand).astype(np.float64)
    at = g if plans.per_row is None else S.gather(plans.per_row, g)
    per = {k: S.gather(v, at) for k, v in plans.per.items()}
    reserved = np.where(per["jds"], chosen["a_group_slots"] * per["urb"],
                        per["tile_rows"] * S.gather(plans.agrp, cand) * per["urb"])
    out["util"] = np.asarray(reserved / per["half"], dtype=np.float64)
    for name in _PER_RUN:
        out[name] = per[name].astype(np.float64)
    return out


def _store_one(out: dict[str, np.ndarray], plans: _Plans, nchip: int, clock_hz: np.ndarray, bw: np.ndarray) -> None:
    """:func:`_store_choice` of a batch of one point on one configuration: every candidate timed once, the
    fastest one's times taken from there (the same element-wise numbers as timing it again). The reference
    :func:`_chosen_one` is tested against (the one-point path itself uses that)."""
    st = S.timing(plans.feats, nchip, clock_hz, bw)
    cand = np.array([np.argmin(st["time"])])
    zero = np.zeros(1, np.int64)
    _write_choice(out, plans, zero, zero, cand, {k: v[cand] for k, v in plans.feats.items()},
                  {k: v[cand] for k, v in st.items()}, clock_hz)


def _write_choice(out: dict[str, np.ndarray], plans: _Plans, sel: np.ndarray, g: np.ndarray, cand: np.ndarray,
                  chosen: dict[str, np.ndarray], st: dict[str, np.ndarray], clock_hz: np.ndarray) -> None:
    """Store in ``out`` at points ``sel`` (on configurations ``g``) their candidates ``cand`` of ``plans``:
    its counts ``chosen`` (those of :data:`_RUN_FEATURES` kept), state times ``st`` [s] as cycles of ``clock_hz``,
    AGRP, BGRP and LMM use."""
    for k in _RUN_FEATURES:
        out[k][sel] = chosen[k]
    for name in STATES:
        out[name][sel] = st[name] * clock_hz
    out["time"][sel] = st["time"]
    out["agrp"][sel] = chosen["a_group_blocks"]
    out["bgrp"][sel] = plans.bgrp[cand]
    at = g if plans.per_row is None else plans.per_row[g]
    per = {k: v[at] for k, v in plans.per.items()}
    reserved = np.where(per["jds"], chosen["a_group_slots"] * per["urb"],
                        per["tile_rows"] * plans.agrp[cand] * per["urb"])
    out["util"][sel] = reserved / per["half"]
    for name in _PER_RUN:
        out[name][sel] = per[name]


#: points of one schedule from which its candidates are timed for those points alone; smaller groups are timed
#: all at once, every (point, candidate) pair (a grid study's ~170 schedules of 16-50 points each cost ~0.4
#: as much at once as one by one)
_BIG_GROUP = 256
def _columns(feats: dict[str, np.ndarray], idx: np.ndarray, names: tuple[str, ...],
             block: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """``{k: feats[k][idx] for k in names}``: the counts ``names`` of the candidates ``idx``. With ``block`` (the
    [schedule.FEATURES, candidates] array whose rows are ``feats``), the columns ``idx`` of its rows from the first
    to the last of ``names`` (:func:`_feature_span`: the timed counts are 11 consecutive rows of 19) taken in one
    call (the same values: a gather copies them) -- a dict of rows of that array, every count of ``names`` in it;
    else one gather per count."""
    if block is None:
        return {k: feats[k][idx] for k in names}
    lo, hi = _feature_span(names)
    return dict(zip(S.FEATURES[lo:hi], block[lo:hi].take(idx, axis=1)))


@lru_cache(maxsize=16)
def _feature_span(names: tuple[str, ...]) -> tuple[int, int]:
    """(first, last + 1) of the rows of ``names`` in :data:`schedule.FEATURES`."""
    at = [S.FEATURES.index(k) for k in names]
    return min(at), max(at) + 1


def _fastest(feats: dict[str, np.ndarray], first: np.ndarray, count: np.ndarray, nchip: np.ndarray,
             clock_hz: np.ndarray, bw: np.ndarray, block: np.ndarray | None = None,
             max_pairs: int = 1 << 20, states: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Index into ``feats`` of the fastest of candidates ``first[k]`` .. ``first[k] + count[k] - 1`` for each
    point k (the first one among equal times, as ``np.argmin``), points in chunks of at most ``max_pairs``
    (point, candidate) pairs; ``block``: the array whose rows are ``feats`` (:func:`_columns`). ``states``: a dict
    to receive each point's state times and time at its fastest candidate (:func:`schedule.timing` of every pair
    is element-wise: the numbers timing the chosen candidates alone gives), taken from the pairs' timing."""
    out = np.empty(len(first), dtype=np.int64)
    ends = count.cumsum()
    lo = 0
    while lo < len(first):
        hi = max(lo + 1, int(ends.searchsorted(ends[lo] - count[lo] + max_pairs, side="right")))
        c = count[lo:hi]
        start = c.cumsum() - c
        local = np.arange(np.add.reduce(c)) - start.repeat(c)
        pair = np.arange(hi - lo).repeat(c)
        idx = first[lo:hi].repeat(c) + local
        st = S.timing(_columns(feats, idx, S.TIMING_FEATURES, block), S.gather(nchip[lo:hi], pair),
                      S.gather(clock_hz[lo:hi], pair), S.gather(bw[lo:hi], pair))
        t = st["time"]
        best = np.minimum.reduceat(t, start).repeat(c)
        hit = (t == best) | (np.isnan(t) & np.isnan(best))
        at = np.minimum.reduceat(np.where(hit, local, np.maximum.reduce(c)), start)
        out[lo:hi] = first[lo:hi] + at
        if states is not None:
            if lo == 0 and hi == len(first):  # one chunk (always, short of a million pairs): the gathers themselves
                states.update((k, S.gather(v, start + at)) for k, v in st.items())
            else:
                for k, v in st.items():
                    states.setdefault(k, np.empty(len(first)))[lo:hi] = v[start + at]
        lo = hi
    return out


def _fill_nan(lb: LayerBatch, **known: np.ndarray) -> None:
    """Every metric and state NaN but those ``known`` (what :meth:`ImaxModel._fill` gives points without a
    schedule, in its order)."""
    if lb.n == 1:  # one point: the block from one list (the same float64 values as writing the rows)
        vals = [np.nan] * (len(_NAN_METRICS) + 1)
        for name, value in known.items():
            vals[_NAN_METRICS.index(name)] = value.item(0) if type(value) is np.ndarray else value
        block = np.array(vals, dtype=float).reshape(-1, 1)
    else:
        block = np.full((len(_NAN_METRICS) + 1, lb.n), np.nan)  # a row per metric (as lb.set's copies), one for states
        for name, value in known.items():
            block[_NAN_METRICS.index(name)] = value
    lb.metrics.update(zip(_NAN_METRICS, block))
    for s in STATES:
        lb.states[s] = block[-1]


def _fill_at(lb: LayerBatch, layer: Layer, r: dict, reps: int, dense_time: np.ndarray, batch: _Batch) -> None:
    """:meth:`ImaxModel._fill` of a batch run (:meth:`ImaxModel._runs_on`'s form: numbers kept at the points
    ``r["at"]`` with a schedule): the metrics of those points from their numbers alone (the same element-wise
    operations in the same order as over every point), each written into a NaN array over all points -- a point
    without a schedule gets NaN everywhere (every number it would be computed from is NaN) but its chain and
    dense reference, as :func:`_fill_nan` -- in lb.set's key order, then the states."""
    at = r["at"]
    pts = batch.pts
    nchip = pts["nchip"][at].astype(float)
    clock_hz = batch.clock_hz[at]
    g = dict(r, time=r["time"][at], H=r["H"][at])
    time_s, reads, writes, issued, lmm_bytes = _run_flows(g, nchip, reps)
    energy = np.full(len(at), np.nan)  # every point here has its node: all set below
    fma_j, lmm_j = np.full(len(at), np.nan), np.full(len(at), np.nan)  # the parts (compute, SRAM)
    vscale, lmm_kb = batch.vscale[at], pts["lmm_kb"][at]
    for node, mask in batch.nodes:
        sel = S.nonzero_at(mask[at]) if len(batch.nodes) > 1 else slice(None)
        fma, lmm = C.energy_terms_pj(issued[sel], lmm_bytes[sel], lmm_kb[sel], int(node))
        v = vscale[sel]
        energy[sel] = C.on_chip_pj(fma, lmm, v) * 1e-12
        fma_j[sel], lmm_j[sel] = fma * v * 1e-12, lmm * v * 1e-12
    dram_j = batch.dram_energy_j(reads, writes, at)
    energy = energy + dram_j
    cycles = time_s * clock_hz
    with np.errstate(divide="ignore", invalid="ignore"):
        util = layer.macs / (cycles * nchip * pts["units"][at] * C.SIMD)
        speedup = dense_time[at] / time_s
    slots = _rep(g["slots"], reps)  # (_rep: x * 1 is x; every value below is copied into its own row)
    useful = float(getattr(layer, "nnz", 0)) if isinstance(layer, SpMM) else np.nan
    padding = slots - useful if isinstance(layer, SpMM) else np.where(np.isnan(slots), np.nan, 0.0)
    values = [cycles, time_s, util, reads, writes, energy, speedup, None, g["util"], g["util_unopt"], None,
              g["agrp"], g["bgrp"], g["bgrp"], _rep(g["starts"], reps), _rep(g["a_groups"], reps), g["b_groups"],
              _rep(g["blocks"], reps), g["row_tiles"], g["col_tiles"], slots, padding, _rep(g["a_bytes"], reps),
              _rep(nchip * g["b_bytes"], reps), _rep(nchip * g["c_load_bytes"], reps), writes, fma_j, lmm_j, dram_j]
    values += [_rep(g[s], reps) for s in STATES]
    # the rows of one block filled with NaN at once (one fill instead of one a row: ~3 k instructions a row fewer;
    # with dse.procs.tune_malloc the ~1 MB block comes from freed heap memory, no fresh pages), a row a metric
    block = _filled_nan(sum(v is not None for v in values) * lb.n).reshape(-1, lb.n)
    rows, i = [], 0
    for v in values:
        if v is None:
            rows.append(None)
            continue
        row = block[i]
        row[at] = v
        rows.append(row)
        i += 1
    rows[_DENSE_ROW], rows[_CHAIN_ROW] = dense_time.astype(float), r["H"].astype(float)  # every point
    lb.metrics.update(zip(_NAN_METRICS, rows))
    lb.states.update(zip(STATES, rows[len(_NAN_METRICS):]))


def _run_flows(r, nchip, reps):
    """(time [s], DRAM read bytes, DRAM write bytes, issued MACs, LMM bytes) of a run repeated ``reps`` times: its
    numbers ``r`` (time, a/b/c bytes, issued MACs, H, ...) and ``nchip`` as arrays over points (the batch) or Python
    numbers (one point, :func:`_fill_one`): the same operations either way."""
    time_s = _rep(r["time"], reps)
    reads = _rep(r["a_bytes"] + nchip * (r["b_bytes"] + r["c_load_bytes"]), reps)
    writes = _rep(nchip * r["c_drain_bytes"], reps)
    issued = _rep(nchip * r["issued_macs"], reps)
    lmm_bytes = _rep(nchip * (r["lmm_exec_bytes"] + r["a_bytes"] + r["b_bytes"] * r["H"]
                              + r["c_load_bytes"] + r["c_drain_bytes"]), reps)
    return time_s, reads, writes, issued, lmm_bytes


def _rep(x, reps: int):
    """``x * reps`` (a run repeated ``reps`` times), or ``x`` itself when ``reps`` is 1: the same bits (x * 1 == x for
    every float, NaN and -0.0 included) without a pass over the points (~a dozen a layer); what a layer keeps of it
    is copied (``LayerBatch.set``)."""
    return x if reps == 1 else x * reps


def _fill_one(lb: LayerBatch, layer: Layer, r: dict, reps: int, dense_time: np.ndarray, batch: _Batch) -> None:
    """:meth:`ImaxModel._fill` of one point with a schedule: its operations in their order on Python numbers (float
    +, -, *, / IEEE doubles as float64's, a division by zero as numpy's, ``result._div``; the energy formulas on
    Python numbers), every metric and state a (1,) row of one array (in lb.set's order: the same keys, the same
    values) -- ~70 numpy calls fewer per layer."""
    g = {k: r[k].item(0) for k in _FILL_INPUTS}
    pts = batch.pts
    nchip = float(pts["nchip"].item(0))
    time_s, reads, writes, issued, lmm_bytes = _run_flows(g, nchip, reps)
    fma, lmm = C.energy_terms_pj(issued, lmm_bytes, pts["lmm_kb"].item(0), int(batch.nodes[0][0]))
    v = batch.vscale.item(0)
    energy = float(C.on_chip_pj(fma, lmm, v)) * 1e-12
    dram_j = batch.dram_energy_j(reads, writes).item(0)
    energy = energy + dram_j
    cycles = time_s * batch.clock_hz.item(0)
    util = _div(layer.macs, cycles * nchip * pts["units"].item(0) * C.SIMD)
    dense = dense_time.item(0)
    slots = g["slots"] * reps
    if isinstance(layer, SpMM):
        padding = slots - float(getattr(layer, "nnz", 0))
    else:
        padding = np.nan if slots != slots else 0.0
    values = [cycles, time_s, util, reads, writes, energy, _div(dense, time_s), dense, g["util"], g["util_unopt"],
              g["H"], g["agrp"], g["bgrp"], g["bgrp"], g["starts"] * reps, g["a_groups"] * reps, g["b_groups"],
              g["blocks"] * reps, g["row_tiles"], g["col_tiles"], slots, padding, g["a_bytes"] * reps,
              nchip * g["b_bytes"] * reps, nchip * g["c_load_bytes"] * reps, writes, float(fma * v) * 1e-12,
              float(lmm * v) * 1e-12, dram_j]
    values += [g[s] * reps for s in STATES]
    block = np.array(values, dtype=float).reshape(-1, 1)
    lb.metrics.update(zip(_NAN_METRICS, block))
    lb.states.update(zip(STATES, block[len(_NAN_METRICS):]))


#: the numbers of a run _fill_one reads
_FILL_INPUTS = ("time", "a_bytes", "b_bytes", "c_load_bytes", "c_drain_bytes", "issued_macs", "lmm_exec_bytes", "H",
                "slots", "util", "util_unopt", "agrp", "bgrp", "starts", "a_groups", "b_groups", "blocks", "row_tiles",
                "col_tiles") + STATES


#: the metrics of a layer without a schedule, in the order ImaxModel._fill sets them
_NAN_METRICS = ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j") + tuple(
    m.name for m in _LAYER_METRICS)
#: the rows of the dense reference and of the chain in _fill_at's block (set at every point)
_DENSE_ROW, _CHAIN_ROW = _NAN_METRICS.index("dense_time_s"), _NAN_METRICS.index("mac_units")

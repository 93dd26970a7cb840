"""EMAXV and EMAXVR: CGRAs with a local memory per PE (spec `emax.md`).

EMAXV (§2) runs one loop per start and keeps partial sums in DRAM; EMAXVR
(§3) runs 3-deep loop nests per start, broadcasts vertically and
horizontally, and adds a scratchpad (SPM) for partial sums and staged
inputs. Per layer the model

1. builds every mapping the CGRA rules allow (:mod:`archmodels.emax.mapper`;
   rejected ones carry a reason),
2. schedules each (:mod:`archmodels.emax.traffic`: starts, SPM bands, pool
   fusion, DRAM/SPM/LMM traffic by data kind),
3. times it per state (:mod:`archmodels.emax.timing`) and costs it
   (:mod:`archmodels.emax.cost`), vectorised over design points,
4. picks the best plan per point by the ``criterion`` knob (time by default;
   plans within :data:`TIE_RTOL` of the best are ties, broken by DRAM bytes,
   then by candidate order).

Structural work (mappings, schedules) depends only on :data:`STRUCT`
parameters and is done once per unique combination: the mapper per layer and
combination, the schedules as numpy over every (layer, combination, context,
mapping) row of a chunk of combinations (both cached). Everything that depends on
clock, bandwidth, latency, bus width or the technology node is numpy over
(plan, design point) pairs, all layers and combinations of a chunk at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from collections.abc import Callable, Iterable
from itertools import chain
from operator import itemgetter
from typing import Any, ClassVar

import numpy as np

from workloads import Workload
from workloads.layers import Conv2D, Pool

from . import cost
from .. import num, tech
from .. import vector
from ..base import Model
from . import mapper as _mapper
from .mapper import (ConvShape, FCShape, Hw, conv_table, fc_candidates, fc_table,
                     mapping_columns, shape_of)
from .mapper import HW_NUMBERS, HwList, Indexed, KnobAt, _rows_of, coded_reasons, hw_field, new_hw
from .explain import (EXPLAIN_KEYS, PLAN_TEXTS, RATIO_KEYS, LazyTextColumns, runner_text, schedule_text, verdicts,
                      verdicts_coded)
from . import timing
from .timing import STATES, Link, pair_dram_reads, pair_states, pair_states_both
from .traffic import (KINDS, PIN_PREFIX, PINS, PSUM_HOMES, Concat, PlanTable, Rows, concat, emaxv_plans,
                      emaxvr_plans, fc_plans)
from ..layerarrays import PointsMemo, layer_batches
from ..memo import IdentityMemo, SizedLRU, by_identity
from ..params import Param, Points, batch_size
from ..result import LayerBatch, Metric, layer_sums, row_sum, seqsum

#: plans whose criterion value is within this fraction of the best count as ties (then fewer DRAM bytes win);
#: fitted (archmodels/fitted.py): least mean error over the 12 EMAXVR DRAM-byte figures, smallest of the ties
TIE_RTOL = 0.015
#: ``criterion=time_then_dram``: the time a designer gives up for less DRAM traffic (a stated preference, not
#: fitted: plans within 10 % of the fastest count as ties, then the least DRAM traffic wins)
TIME_THEN_DRAM_RTOL = 0.10
#: ``dram``: plans whose DRAM bytes differ by less than this (relative) move the same bytes, summed in another
#: order (float rounding, ~1e-16 per addition); the faster one wins, not the one with the rounding error
DRAM_SAME_RTOL = 1e-9
CRITERIA = ("time", "energy", "dram", "edp", "time_then_dram")
#: parameters that decide mappings and schedules (planned once per unique combination)
STRUCT = ("rows", "cols", "lmm_kb", "spm_kb", "dtype_bits", "pattern", "loop_order", "pool_fusion", "pool_schedule",
          "psum_home", "halo", "ic_loop", "band_size", "oc_tile", "criterion")
_STRUCT_DEFAULTS = {"loop_order": "auto", "pool_fusion": False, "pool_schedule": "after_conv", "psum_home": "auto",
                    "halo": "auto", "ic_loop": "auto", "band_size": 0, "oc_tile": 0}
#: criteria under which the mapper also tries the smaller channels-per-start tiles (mapper.oc_tiles): those that
#: rank plans by DRAM traffic first; the others take the most channels that fit (fewest starts)
TILE_SEARCH_CRITERIA = ("dram",)
#: the schedule pins of :data:`STRUCT` (``auto`` / 0 = searched), passed to the EMAXVR plan builder
PIN_KEYS = ("psum_home", "halo", "ic_loop", "band_size")
DRAM_KIND_KEYS = (("input", "read"), ("weight", "read"), ("psum", "read"), ("psum", "write"),
                  ("output", "write"), ("spill", "read"), ("spill", "write"))
#: label keys whose strings are built when read (:class:`~archmodels.emax.explain.LazyText`), by text function
LAZY_TEXTS = {"schedule": schedule_text, **PLAN_TEXTS, "runner_up": runner_text}
#: structural combinations x layers planned together (bounds the size of the plan tables; with the mapper as numpy
#: over a chunk, 2,048 runs random points ~1.2-1.3x faster than 512, peak memory +40 MB on 400 VGG16 points;
#: 4,096: EMAXVR VGG16 +7-12 %, EMAXV VGG16-conv +8-12 % over 2,048 on 2,048 random points, peak RSS of one batch
#: 347 -> 388 MB and 147 -> 157 MB; 8,192 once the results stopped keeping each chunk's data movement (the texts'
#: tables, :meth:`_Results.add`): EMAXVR VGG16 +10 % over 4,096, peak RSS of a 2,048-point batch 218 -> 293 MB,
#: 16,384: +22 % but 451 MB)
CHUNK = 8192
#: :data:`CHUNK` per architecture where it differs: an EMAXV (layer, combination) pair has a few plans (no SPM, one
#: context, one schedule: ~3 on VGG16-conv, against ~50 EMAXVR rows in 4 contexts), so a chunk of 8x as many pairs
#: holds fewer plans than an EMAXVR chunk, and the chunk's fixed costs (numpy calls per chunk, the mapper's and the
#: builders' per-call work) are paid 8x less often: a 2,048-point VGG16-conv batch is one chunk (~1.3x the
#: throughput of 7 chunks, peak RSS 120 -> 131 MB)
CHUNK_OF = {"emaxv": 32768}
#: how much larger than :data:`CHUNK_OF` / :data:`CHUNK` a chunk may grow so that a batch runs in fewer chunks of
#: equal size (EMAXV: a 2,048-point VGG16-conv batch in one chunk of 2,048 combinations, not 1,820 + 228; 4,096
#: points in two of 2,048, not 1,820 + 1,820 + 456): each chunk pays the same numpy calls whatever its size
CHUNK_SLACK_OF = {"emaxv": 0.25}


def _chunk_step(arch: str, n_keys: int, n_layers: int) -> int:
    """Structural combinations per chunk for a batch of ``n_keys`` of them on ``n_layers`` layers: :data:`CHUNK_OF`
    (or :data:`CHUNK`) (layer, combination) pairs, or with :data:`CHUNK_SLACK_OF` the fewest chunks of at most that
    much more, as equal as they come (the chunk size changes no number: a memory / speed trade)."""
    step = max(1, CHUNK_OF.get(arch, CHUNK) // max(1, n_layers))
    slack = CHUNK_SLACK_OF.get(arch, 0.0)
    if slack <= 0 or n_keys <= step:
        return step
    count = -(-n_keys // max(1, int(step * (1 + slack))))  # (the fewest chunks of at most (1 + slack) x step)
    return -(-n_keys // count)


def _common_params(lmm_kb: float, dtype_bits: int) -> list[Param]:
    return [
        Param("rows", "int", 64, 4, 512, unit="", doc="PE rows (the thesis: 64)"),
        Param("cols", "choice", 4, choices=(2, 4, 8, 16), unit="", doc="PE columns = FSM buses (built: 4)"),
        Param("lmm_kb", "float", lmm_kb, 0.25, 1024, unit="KB", doc="local memory per PE"),
        Param("clock_mhz", "float", 240.0, 50, 2000, unit="MHz", doc="array clock"),
        Param("dtype_bits", "choice", dtype_bits, choices=(16, 32), unit="bit",
              doc="16 = fixed point (LDDHR pairs), 32 = float"),
        Param("dram_gbps", "float", 17.064, 0.1, 1000, unit="GB/s", doc="external memory bandwidth (DDR3-2133 x 64 bit)"),
        Param("dram_latency_ns", "float", 62.5, 0, 10000, unit="ns",
              doc="external read latency (15 cycles at 240 MHz: 2 CDC + 10 controller + 3 CAS)"),
        Param("fsm_bus_bits", "choice", 128, choices=(32, 64, 128, 256, 512), unit="bit", doc="width of each FSM bus"),
        Param("tech_nm", "choice", 28, choices=tech.NODES_NM, unit="nm", doc="technology node for energy and area"),
        Param("dram", "choice", "ddr3l", choices=tech.DRAM_NAMES,
              doc="external memory type for DRAM energy (technology table; the thesis board: DDR3L)"),
        Param("criterion", "choice", "time", choices=CRITERIA,
              doc="what the mapper minimises per layer: time (ties within TIE_RTOL = 1.5 % go to less DRAM traffic), energy, "
                  "dram, edp (energy x time), time_then_dram (within 10 % of the fastest, the least DRAM traffic)",
              knob=True),
    ]


def _oc_tile_param() -> Param:
    """EMAXVR's channels-per-start knob (EMAXV runs one output channel per start: nothing to tile)."""
    return Param("oc_tile", "int", 0, 0, 4096, unit="", knob=True,
                 doc="at most this many output channels per start (rounded down to whole OC iterations); 0 = "
                     "searched: the most that fit the LMM, and under criterion=dram also the smaller tiles that can "
                     "move fewer DRAM bus words")


def _metrics() -> tuple[Metric, ...]:
    m = [
        Metric("starts", "", "starts of one sweep over the output (EMAXV: IC/ICpar x OC x OH; EMAXVR: IC/ICpar per group)", integer=True),
        Metric("activations", "", "array activations actually run = starts x SPM bands", integer=True),
        Metric("bands", "", "bands the outermost loop is split into so partial sums fit the SPM", integer=True),
        Metric("passes", "", "input-channel (and kernel-row) passes", integer=True),
        Metric("parallelism", "MAC/cycle", "MAC (or MAX) units busy per iteration", integer=True),
        Metric("icpar", "", "input channels side by side", integer=True),
        Metric("alus_used", "", "ALUs holding an instruction during EXEC", integer=True),
        Metric("rows_used", "", "PE rows the mapping occupies", integer=True),
        Metric("ideal_time_s", "s", "operations / parallelism / clock"),
        Metric("overhead_fraction", "1", "(LMMI + REGV + PRE_POST_EXEC) / cycles"),
        Metric("load_fraction_of_exec", "1", "LMM load transfer cycles (LOAD + PLOAD, hidden or not) / EXEC"),
        Metric("mac_utilization", "1", "operations (MACs, or MAX of a pooling layer) / (cycles x PEs): busy share over the run"),
        Metric("alu_occupancy", "1", "ALUs holding an instruction / PEs: the thesis's static 'utilization' (loop counters and "
               "address units included; not a time share)"),
        Metric("pload_cycles", "cycles", "transfer cycles of loads overlapped with EXEC (hidden part included)"),
        Metric("pdrain_cycles", "cycles", "transfer cycles of drains overlapped with EXEC (hidden part included)"),
    ]
    for kind, d in DRAM_KIND_KEYS:
        m.append(Metric(f"dram_{kind}_{d}_bytes", "B", f"DRAM {d}s of {kind} data"))
    m += [
        Metric("spm_read_bytes", "B", "SPM bytes read (staged inputs/weights, partial sums, pooled results)"),
        Metric("spm_write_bytes", "B", "SPM bytes written"),
        Metric("spm_need_bytes", "B", "peak SPM occupancy of the schedule"),
        Metric("lmm_read_bytes", "B", "LMM bytes read by loads and drains"),
        Metric("lmm_write_bytes", "B", "LMM bytes written by transfers and stores"),
        Metric("dram_access_per_op", "B/op", "DRAM bytes / (2 x MACs): one MAC = 2 operations"),
        Metric("dram_compulsory_bytes", "B", "inputs read + weights + outputs left in DRAM, each once (no mapping "
               "moves less; 0 for what stays in the SPM between layers)"),
        Metric("dram_traffic_ratio", "1", "DRAM bytes / dram_compulsory_bytes (1 = every datum moved once)"),
        Metric("runner_up_time_ratio", "1", "time of the runner-up plan (best other plan by the criterion) / chosen"),
        Metric("runner_up_dram_ratio", "1", "DRAM bytes of the runner-up plan / chosen"),
        Metric("runner_up_energy_ratio", "1", "energy of the runner-up plan / chosen"),
        Metric("dram_energy_j", "J", "DRAM read/write energy (technology-table row `dram`; DDR3L: spec §5)"),
        Metric("compute_energy_j", "J", "MAC/MAX and other ALU operations"),
        Metric("sram_energy_j", "J", "LMM and SPM accesses"),
        Metric("dram_power_w", "W", "DRAM read/write power over the layer's time"),
    ]
    return tuple(m)


def _total_metrics() -> tuple[Metric, ...]:
    return (
        Metric("starts", "", "sum over layers", integer=True),
        Metric("activations", "", "sum over layers", integer=True),
        Metric("ideal_time_s", "s", "sum over layers"),
        Metric("overhead_fraction", "1", "(LMMI + REGV + PRE_POST_EXEC) / cycles over the workload", combine="time_mean"),
        Metric("mac_utilization", "1", "MACs / (cycles x PEs) over the workload", combine="time_mean"),
        Metric("dram_access_per_op", "B/op", "DRAM bytes / (2 x MACs)", combine="macs_mean"),
        Metric("dram_compulsory_bytes", "B", "sum over layers"),
        Metric("dram_traffic_ratio", "1", "DRAM bytes / compulsory bytes over the workload"),
        Metric("dram_power_w", "W", "DRAM read/write power over the run (spec §5 method)", combine="time_mean"),
        Metric("compute_energy_j", "J", "sum over layers"),
        Metric("sram_energy_j", "J", "sum over layers"),
        Metric("dram_energy_j", "J", "sum over layers"),
        Metric("spm_read_bytes", "B", "sum over layers"),
        Metric("spm_write_bytes", "B", "sum over layers"),
        Metric("pes", "", "rows x cols", integer=True, combine="max"),
        Metric("peak_macs_per_s", "MAC/s", "PEs x clock", combine="max"),
        Metric("pe_logic_area_mm2", "mm2", "PE logic", combine="max"),
        Metric("lmm_area_mm2", "mm2", "all LMMs", combine="max"),
        Metric("spm_area_mm2", "mm2", "scratchpad", combine="max"),
    )


@dataclass(frozen=True)
class Plans:
    """The plans of every layer i for a list of structural combinations: combination k may run rows
    ``start[i, k]`` .. ``start[i, k] + count[i, k] - 1`` of ``table``; else it is fused into layer
    ``fused_into[i][k]`` or ``reason[i][k]`` says why no plan fits. ``missing``: the (layer, combination) pairs
    with a reason, layer by layer, as (layers, combinations, reasons as objects)."""

    table: PlanTable
    start: np.ndarray
    count: np.ndarray
    fused_into: list[list[str | None]]
    missing: tuple[np.ndarray, np.ndarray, np.ndarray]

    @cached_property
    def reason(self) -> list[list[str]]:
        """Per layer and combination the reason of :attr:`missing` (``""`` where none), built when read (the choice
        reads :attr:`missing`)."""
        reason = num.objects(self.count.shape, "")
        li, ki, why = self.missing
        if len(why):
            reason[li, ki] = why
        return reason.tolist()


class _EmaxBase(Model):
    spec = "emax.md"
    DOC_PAGE = "docs/models/emax.md"
    STATE_DOCS = {  # docs/models/emax.md, "Time"
        "CONF": "configuring the PE array, once per layer (1 cycle per PE used; assumption)",
        "LMMI": "fixed overhead of every start (activation) of the array (fitted: EMAXV AlexNet C1)",
        "LOAD": "transfers into the LMMs before EXEC (EMAXV: every start; EMAXVR: the first data)",
        "REGV": "setting loop counters and constants (EMAXV: the weights too) at 1 register per cycle",
        "EXEC": "the array's iterations, with a bubble at every innermost-loop end",
        "PRE_POST_EXEC": "pipeline fill and drain of every start, 2 cycles per PE row used",
        "DRAIN": "results out of the LMMs after EXEC (EMAXV: every start; EMAXVR: the last)",
        "PLOAD": "EMAXVR: loads that overlap EXEC, only the part EXEC could not hide",
        "PDRAIN": "EMAXVR: drains that overlap EXEC, only the part EXEC could not hide",
        "POOL": "the pooling pass fused after the convolution",
    }
    AREA_ANCHOR = ("none published for EMAX (spec emax.md §6): PE logic from the IMAX 28 nm die's fitted PE overhead "
                   "(tech.PE_LOGIC_OVERHEAD), SRAM from bit-cell area")
    SUPPORTS = ("conv", "pool", "fc", "matmul", "vector")
    ARCH: ClassVar[str]

    def vector_unit(self, pts: Points) -> vector.VectorUnit:
        """Vector layers on the CGRA's ALUs: one operation per PE per cycle, streamed from and to
        DRAM over the external link; an ALU pass costs an add, bytes the DRAM row's energy (DDR3L: spec §5)."""
        clock_hz = pts["clock_mhz"] * 1e6
        bits = pts["dtype_bits"]
        add_pj = tech.per_point(lambda b, nd: cost.op_energies_pj(b, nd)[1], bits, pts["tech_nm"])
        add_pj = add_pj * tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).energy_scale
        return vector.VectorUnit("CGRA ALUs", pts["rows"] * pts["cols"] * clock_hz, clock_hz, bits / 8,
                                 pts["dram_gbps"] * 1e9, add_pj, *tech.dram_pj_per_byte(pts["dram"]))
    LAYER_METRICS = _metrics()
    TOTAL_METRICS = _total_metrics()

    def check_config(self, pts: Points) -> tuple[np.ndarray, np.ndarray]:
        """The clock must not exceed the node's maximum (technology table)."""
        return tech.clock_check(pts["clock_mhz"], pts["tech_nm"])

    def gemm_ranker(self, pts: Points) -> Callable[[LayerBatch], tuple[np.ndarray, np.ndarray]]:
        """A product's forms (FC, 1x1 conv, MatMul) ranked by the point's ``criterion``, as its plans are: the
        criterion's value, then time (criteria dram and energy) or energy (the others); energy with leakage
        (the points' leakage and criteria taken once for every form of every product)."""
        crit = np.asarray(pts["criterion"], dtype=object)
        static_w = _rank_static_w(pts, batch_size(pts))
        by_time = (crit == "dram") | (crit == "energy")
        if len(crit) and (crit == crit[0]).all():  # one criterion (one design point): ranked as a string
            crit = crit[0]

        def rank(lb: LayerBatch) -> tuple[np.ndarray, np.ndarray]:
            m = lb.metrics
            energy = m["energy_j"] + static_w * m["time_s"]  # leakage is added to layers later
            first = _primary(crit, m["time_s"], energy, m["dram_read_bytes"] + m["dram_write_bytes"])
            # a point without an energy (a clock above the node's maximum: infeasible) ranks by time, as by default
            return np.where(np.isnan(first), m["time_s"], first), np.where(by_time, m["time_s"], energy)

        return rank

    # ---------------------------------------------------------------- evaluation
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        n = batch_size(pts)
        cols = [pts[k] if k in pts else num.objects(n, _STRUCT_DEFAULTS[k]) for k in STRUCT[:-1]]
        crit = np.asarray(pts["criterion"], dtype=object)
        # the tile search (a few points: np.isin's == per element, without its ~15 us of setup)
        cols.append(np.array([c in TILE_SEARCH_CRITERIA for c in crit.tolist()], dtype=bool).reshape(crit.shape)
                    if crit.size <= 64 else np.isin(crit, TILE_SEARCH_CRITERIA))
        members: list[list[int]] | None = None  # each combination's points (None: point i is combination i)
        keys: list[tuple] | KeyColumns
        if KEY_COLUMNS and n > PLANS_CACHE_KEYS and _distinct(cols[_DISTINCT_BY]):
            # (every point its own combination: the columns themselves, no tuples)
            keys = KeyColumns(cols, {i: _STRUCT_DEFAULTS[k] for i, k in enumerate(STRUCT[:-1]) if k not in pts})
        else:
            every = list(zip(*[c.tolist() for c in cols]))
            keys = list(dict.fromkeys(every))  # the distinct combinations, in order of first appearance
            if len(keys) != n:  # (each point its own combination, random points: no grouping loop, no lists)
                groups: dict[tuple, list[int]] = {}
                for i, key in enumerate(every):
                    groups.setdefault(key, []).append(i)
                members = list(groups.values())
        link = Link(pts["clock_mhz"], pts["fsm_bus_bits"], pts["dram_gbps"], pts["dram_latency_ns"],
                    pts.get("spm_gbps", np.full(n, 15.36)), pts.get("spm_latency_ns", np.full(n, 1000 / 240)),
                    pts["dtype_bits"] // 8, pts["cols"])
        pp = _PointConsts(pts, n)
        macs = np.array([float(m) for m in _layer_macs(_canonical(workload))])
        out = _Results(len(workload.layers), n)
        out.pending_upto *= PENDING_SCALE_OF.get(self.ARCH, 1)
        step = _chunk_step(self.ARCH, len(keys), len(workload.layers))
        for lo, grp in zip(range(0, len(keys), step), _Groups.chunks(members, step, n)):
            plans = workload_plans(self.ARCH, workload, keys[lo:lo + step] if isinstance(keys, KeyColumns) else
                                   tuple(keys[lo:lo + step]))
            _choose(plans, grp, link, pp, macs, out)
        return out.batches(workload.layers)

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        n = batch_size(pts)

        # sequential sums from zero, layer after layer (a point gives the same bits alone or in a batch):
        # one stack and one accumulate for every key (layer_sums)
        sums = layer_sums(layers, _SUMMED_KEYS, n, from_zero=True)
        tot = sums.__getitem__

        shared = getattr(layers[0], "_shared", None) if layers else None  # layers of one layer_batches call

        def state_sum(names):  # layer after layer, the states of a layer in the order of names
            zero = np.zeros(n)
            rows = shared.states_stack(layers, names, from_zero=True) if shared is not None else None
            if rows is not None:
                return row_sum(rows)
            return seqsum([zero] + [lb.states.get(s, zero) for lb in layers for s in names], n)

        area = _area_static(pts)
        cycles, time_s = tot("cycles"), tot("time_s")
        wl_layers = workload.layers
        same = len(layers) == len(wl_layers) and all(lb.layer is layer for lb, layer in zip(layers, wl_layers))
        macs = float(sum(_layer_macs(_canonical(workload))) if same else sum(lb.layer.macs for lb in layers))
        dram = tot("dram_read_bytes") + tot("dram_write_bytes")
        pes = (pts["rows"] * pts["cols"]).astype(float)
        static = area["static_power_w"]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = {
                "area_mm2": area["area_mm2"],
                "hw_mac_units": pes,
                "static_power_w": static,
                "starts": tot("starts"),
                "activations": tot("activations"),
                "ideal_time_s": tot("ideal_time_s"),
                "overhead_fraction": state_sum(("LMMI", "REGV", "PRE_POST_EXEC")) / cycles,
                "mac_utilization": macs / (cycles * pes),
                "dram_access_per_op": dram / (2 * macs) if macs else np.full(n, np.nan),
                "dram_compulsory_bytes": tot("dram_compulsory_bytes"),
                "dram_traffic_ratio": dram / tot("dram_compulsory_bytes"),
                "dram_power_w": tot("dram_energy_j") / time_s,
                "compute_energy_j": tot("compute_energy_j"),
                "sram_energy_j": tot("sram_energy_j"),
                "dram_energy_j": tot("dram_energy_j"),
                "spm_read_bytes": tot("spm_read_bytes"),
                "spm_write_bytes": tot("spm_write_bytes"),
                "pes": pes,
                "peak_macs_per_s": pes * pts["clock_mhz"] * 1e6,
                "pe_logic_area_mm2": area["pe_logic_area_mm2"],
                "lmm_area_mm2": area["lmm_area_mm2"],
                "spm_area_mm2": area["spm_area_mm2"],
            }
        return out

    # ---------------------------------------------------------------- calibration hook
    def validation_metric(self, metric: str, workload: str | None, params: dict[str, Any],
                          case: dict[str, Any], section: dict[str, Any]) -> Any:
        """DRAM power saved by the SPM (spec §5 method), from two model runs."""
        if metric == "dram_power_saved_w":
            rows = [params, {**params, "spm_kb": 0.0}]  # with the SPM, without it (EMAXV-style traffic)
        elif metric == "dram_power_saved_spm128_to_256_w":
            rows = [{**params, "spm_kb": 256.0}, {**params, "spm_kb": 128.0}]
        else:
            return NotImplemented
        if "spm_kb" not in self.params:
            return NotImplemented
        r = self.evaluate_points(workload or "alexnet-conv", rows)
        t = r.totals
        saved_r = t["dram_read_bytes"][1] - t["dram_read_bytes"][0]
        saved_w = t["dram_write_bytes"][1] - t["dram_write_bytes"][0]
        run_time = t["time_s"][1] if metric.endswith("128_to_256_w") else t["time_s"][0]
        return float(cost.dram_power_saved_w(saved_r, saved_w, run_time))


class EmaxvModel(_EmaxBase):
    name = "emaxv"
    ARCH = "emaxv"
    title = "EMAXV: CGRA, one loop per start, LMM per PE, no SPM"
    PARAMS = tuple(_common_params(2.0, 32) + [
        Param("spm_kb", "float", 0.0, 0, 0, unit="KB", doc="EMAXV has no scratchpad (only 0)"),
        Param("pattern", "choice", "auto", choices=("auto", "single"), doc="mapping pattern (EMAXV: single loop)",
              knob=True),
    ])


class EmaxvrModel(_EmaxBase):
    name = "emaxvr"
    ARCH = "emaxvr"
    title = "EMAXVR: CGRA, 3-deep loops per start, multi-direction broadcast, SPM"
    PARAMS = tuple(_common_params(1.0, 16) + [
        Param("spm_kb", "float", 128.0, 0, 65536, unit="KB", doc="scratchpad between LMMs and DRAM (0 = none)"),
        Param("spm_gbps", "float", 15.36, 0.1, 10000, unit="GB/s", doc="SPM bandwidth (256 bit at 480 MHz)"),
        Param("spm_latency_ns", "float", 1000 / 240, 0, 10000, unit="ns", doc="SPM read latency (1 cycle at 240 MHz)"),
        Param("pattern", "choice", "auto", choices=("auto", "A", "B", "pairs"),
              doc="mapping pattern: A kernel row per CGRA row, B kernel per column, pairs 2 OC x 2 pixels", knob=True),
        Param("loop_order", "choice", "auto", choices=("auto", "OW,OC,OH", "OW,OH,OC"),
              doc="loop nest of a start, innermost first", knob=True),
        Param("pool_fusion", "bool", True, doc="run a pooling layer that follows a conv fused with it (needs an SPM)",
              knob=True),
        Param("pool_schedule", "choice", "after_conv", choices=("after_conv", "per_band"),
              doc="fused pooling after the whole conv (thesis) or per finished band", knob=True),
        Param("psum_home", "choice", "auto", choices=PINS["psum_home"],
              doc="where partial sums live between input-channel passes (auto = searched)", knob=True),
        Param("halo", "choice", "auto", choices=PINS["halo"],
              doc="kernel-halo rows of an output-row band: kept in the SPM or re-read from DRAM (auto = searched)",
              knob=True),
        Param("ic_loop", "choice", "auto", choices=PINS["ic_loop"],
              doc="input-channel passes: outer = one start per pass (thesis), inner = inside the start over one "
                  "output row (auto = searched)", knob=True),
        Param("band_size", "int", 0, 0, 4096, unit="", doc="at most this many output rows (or channels) per SPM "
              "band; 0 = the largest that fits", knob=True),
        _oc_tile_param(),
    ])


# -------------------------------------------------------------------- per-layer evaluation
def _area_static(pts: Points) -> dict[str, np.ndarray]:
    """:func:`cost.area_mm2` of ``pts`` and the leakage ``static_power_w`` of the PE logic and every LMM and
    the SPM at the clock's supply [W] (spec emax.md §6 area, the technology table's leakage). Read-only arrays,
    remembered for the last few point sets (:class:`PointsMemo`): plan ranking and the totals both ask."""
    names = tuple(k for k in _AREA_KEYS if k in pts)  # EMAXV has no SPM parameter
    memo = _AREA_MEMOS.get(names)
    if memo is None:
        memo = _AREA_MEMOS[names] = PointsMemo(_area_static_computed, names)
    return memo(pts)


def _area_static_computed(pts: Points) -> dict[str, np.ndarray]:
    """:func:`_area_static`, computed (one design point in Python numbers: :func:`_area_static_one`)."""
    n = batch_size(pts)
    if n == 1 and cost._one_value(pts["tech_nm"]):
        return _area_static_one(pts)
    spm_kb = pts.get("spm_kb", np.zeros(n))
    area = cost.area_mm2(pts["rows"], pts["cols"], pts["lmm_kb"], spm_kb, pts["dtype_bits"], pts["tech_nm"],
                         pts["clock_mhz"])
    sram_kb = (pts["rows"] * pts["cols"]).astype(float) * pts["lmm_kb"] + spm_kb
    vdd = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).vdd_ratio
    if n and cost._one_value(pts["tech_nm"]):  # one node (one design point): every point at once, no selection
        static = np.asarray(tech.static_power_w(area["pe_logic_area_mm2"], sram_kb, int(pts["tech_nm"][0]), vdd),
                            dtype=float)
        return {**area, "static_power_w": static}
    static = np.empty(n)
    # node by node over its points (a product of two NaN picks its sign by numpy's loop: not over every point); the
    # nodes by tech.node_masks (no np.unique sort; the same nodes in the same order, the same selections)
    for nd, at in tech.node_masks(pts["tech_nm"]):
        static[at] = tech.static_power_w(area["pe_logic_area_mm2"][at], sram_kb[at], nd, vdd[at])
    return {**area, "static_power_w": static}


def _area_static_one(pts: Points) -> dict[str, np.ndarray]:
    """:func:`_area_static_computed` of one point from its numbers: the same operations in the same order as
    :func:`cost.area_mm2` and :func:`tech.static_power_w` on one-element arrays (the clock's area factor and supply
    from :func:`tech.clock_costs`' one-point path, SRAM areas from :func:`tech.sram_area_mm2`'s float path: the same
    bits, tests/test_clock.py and tests/test_emax_one_point4.py)."""
    rows, cols, nd = int(pts["rows"][0]), int(pts["cols"][0]), int(pts["tech_nm"][0])
    lmm_kb = float(pts["lmm_kb"][0])
    spm_kb = float(pts["spm_kb"][0]) if "spm_kb" in pts else 0.0
    clock = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"])
    pes = float(rows) * cols
    logic = pes * tech.pe_logic_area_mm2(cost.dtype_name(int(pts["dtype_bits"][0])), nd) * float(clock.area_factor[0])
    lmm = pes * tech.sram_area_mm2(lmm_kb, nd)
    spm = tech.sram_area_mm2(spm_kb, nd)
    static = tech.static_power_w(logic, float(rows * cols) * lmm_kb + spm_kb, nd, float(clock.vdd_ratio[0]))
    return {"pe_logic_area_mm2": np.array([logic]), "lmm_area_mm2": np.array([lmm]), "spm_area_mm2": np.array([spm]),
            "area_mm2": np.array([logic + lmm + spm]), "static_power_w": np.array([float(static)])}


#: the parameters :func:`_area_static` depends on, and its memo per set of them present
_AREA_KEYS = ("rows", "cols", "lmm_kb", "spm_kb", "dtype_bits", "tech_nm", "clock_mhz")
_AREA_MEMOS: dict[tuple[str, ...], PointsMemo] = {}


def _rank_static_w(pts: Points, n: int) -> np.ndarray:
    """:func:`_area_static`'s leakage as plans and forms are ranked: 0 where it is undefined (a clock above the node's
    maximum: the point is infeasible, its plans are still ranked, by their dynamic energy)."""
    static = _area_static(pts)["static_power_w"]
    return np.where(np.isfinite(static), static, 0.0)


class _PointConsts:
    """What the cost of a plan needs per design point besides the link: criterion, PEs, energy constants."""

    def __init__(self, pts: Points, n: int):
        self.criterion = np.asarray(pts["criterion"], dtype=object)
        #: the criterion every point has (one design point, a batch under one criterion), else None: the choice
        #: then compares no text per pair (:func:`_primary` and :func:`select` take it as a plain string)
        self.only = self.criterion[0] if n and (self.criterion == self.criterion[0]).all() else None
        self.pes = (pts["rows"] * pts["cols"]).astype(float)
        spm_kb = pts.get("spm_kb", np.zeros(n))
        self.spm_kb = np.asarray(spm_kb, dtype=float)
        self.dram_rd_pj, self.dram_wr_pj = tech.dram_pj_per_byte(pts["dram"])
        bits, node = pts["dtype_bits"], pts["tech_nm"]
        vscale = tech.clock_costs(pts["clock_mhz"], node).energy_scale  # (V / V_nom)^2 of the clock
        #: leakage [W]: a plan's energy as its criterion ranks it includes leakage x its time
        self.static_w = _rank_static_w(pts, n)
        if n == 1 and cost._one_value(node):  # one design point: Python numbers (tech's float paths, the same bits)
            nd, v = int(node[0]), float(vscale[0])
            mac, add = cost.op_energies_pj(int(bits[0]), nd)
            self.mac_pj, self.add_pj = np.array([mac * v]), np.array([add * v])
            self.lmm_pj = np.array([tech.sram_energy_pj_per_byte(float(pts["lmm_kb"][0]), nd) * v])
            self.spm_pj = np.array([tech.sram_energy_pj_per_byte(float(self.spm_kb[0]), nd) * v])
            return
        if n and cost._one_value(node) and cost._one_value(bits):  # one node and data type (one design point):
            nd = int(node[0])  # every point at once, no selection (the same values, element by element)
            mac, add = cost.op_energies_pj(int(bits[0]), nd)
            self.mac_pj, self.add_pj = np.full(n, mac, dtype=float) * vscale, np.full(n, add, dtype=float) * vscale
            self.lmm_pj = np.asarray(tech.sram_energy_pj_per_byte(pts["lmm_kb"], nd), dtype=float) * vscale
            self.spm_pj = np.asarray(tech.sram_energy_pj_per_byte(self.spm_kb, nd), dtype=float) * vscale
            return
        # several nodes or data types (a random batch): each node's values over every point, each point's picked
        # (cost.by_node: no np.unique, no selection and scatter per node and type; the same values)
        masks, is16 = tech.node_masks(node), bits == 16
        self.lmm_pj = cost.by_node(masks, lambda nd: tech.sram_energy_pj_per_byte(pts["lmm_kb"], nd), (n,))
        self.spm_pj = cost.by_node(masks, lambda nd: tech.sram_energy_pj_per_byte(self.spm_kb, nd), (n,))
        self.mac_pj, self.add_pj = (
            cost.by_node(masks, lambda nd: cost.by_dtype(is16, lambda dt: cost.dtype_energies_pj(dt, nd)[j]), (n,))
            for j in (0, 1))
        for arr in (self.mac_pj, self.add_pj, self.lmm_pj, self.spm_pj):
            arr *= vscale

    @cached_property
    def criterion_codes(self) -> tuple[list[str], np.ndarray]:
        """The distinct criteria (in order of first appearance) and each point's position among them."""
        crit = self.criterion.tolist()
        codes = {c: i for i, c in enumerate(dict.fromkeys(crit))}  # (in C, not a setdefault per point)
        return list(codes), np.fromiter(map(codes.__getitem__, crit), dtype=np.int64, count=len(crit))

    def criterion_mask(self, name: str) -> np.ndarray:
        """Which points rank by criterion ``name`` (``criterion == name``, from :attr:`criterion_codes`, once)."""
        masks = self.__dict__.setdefault("_masks", {})
        m = masks.get(name)
        if m is None:
            names, code = self.criterion_codes
            m = masks[name] = code == names.index(name) if name in names else np.zeros(len(code), bool)
        return m

    def pair_criteria(self, pts: np.ndarray) -> str | _Criteria:
        """The criterion of pairs at points ``pts``: the string every point has, else per pair (:class:`_Criteria`)."""
        return self.only if self.only is not None else _Criteria(self.criterion_mask, pts)

    def energy_j(self, cols: dict[str, np.ndarray], pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(compute, SRAM) energy of plan columns ``cols`` at points ``pts``."""
        return (cost.compute_energy_j(cols, self.mac_pj[pts], self.add_pj[pts]),
                cost.sram_energy_j(cols, self.lmm_pj[pts], self.spm_pj[pts], self.spm_kb[pts]))


#: whether the expansions of counts (points per combination, plans per pair, mappings per request, rows per mapping)
#: take their shortcut where every count is 0 or 1 (a random EMAXV batch: one point per combination, one plan per
#: (layer, point)): a gather or compress for the repeats, aranges and cumulative sums (False: the general expansion
#: everywhere, as before; the same integers either way, tests/test_emax_batched15.py)
ONE_EACH_SHORTCUTS = True


def _one_each(counts: np.ndarray) -> bool:
    """Every count is 0 or 1 (counts >= 0) and :data:`ONE_EACH_SHORTCUTS` is on."""
    return ONE_EACH_SHORTCUTS and int(counts.max(initial=0)) <= 1


class _Groups:
    """The points of each structural combination (``idx[k]``: combination k's points) as one flat array, so the
    points of a list of combinations are gathered at once (a random batch has one point per combination: a list of
    ~4,000 one-element arrays per chunk)."""

    def __init__(self, idx: list[np.ndarray]):
        lens = np.array([len(a) for a in idx], dtype=np.int64)
        self._set(idx[0] if len(idx) == 1 else np.concatenate(idx) if idx else np.zeros(0, np.int64), lens)

    def _set(self, flat: np.ndarray, lens: np.ndarray) -> None:
        self.lens = lens
        self.one = len(lens) == 1  # one combination (a design point): its points (read only) as they are
        #: one point per combination (a random batch's): the points of ks are ``flat[ks]``, one each
        self.single = ONE_EACH_SHORTCUTS and len(lens) > 1 and bool((lens == 1).all())
        self.flat = flat
        self.offs = np.cumsum(lens) - lens

    @classmethod
    def chunks(cls, groups: list[list[int]] | None, step: int, n: int = 0) -> list[_Groups]:
        """``_Groups`` of each ``step`` combinations of ``groups`` (each combination's points, a list), as
        ``_Groups([np.array(v) for v in groups[lo:lo + step]])``: every point listed in one array at once, each chunk
        its slice (a random batch has one point per combination: ~2,000 one-element arrays built and concatenated).
        ``groups`` None: ``n`` combinations, point i the only one of combination i (``[[0], [1], ...]``, without
        its ~2,000 lists: each a Python object the garbage collector counts)."""
        if groups is None:
            lens, flat = np.ones(n, dtype=np.int64), np.arange(n, dtype=np.int64)
        else:
            lens = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
            flat = np.fromiter(chain.from_iterable(groups), dtype=np.int64, count=int(lens.sum()))
        ends = np.cumsum(lens).tolist()
        out = []
        for lo in range(0, len(lens), step):
            hi = min(lo + step, len(lens))
            g = cls.__new__(cls)
            g._set(flat[(ends[lo - 1] if lo else 0):ends[hi - 1]], lens[lo:hi])
            out.append(g)
        return out

    def take(self, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The points of combinations ``ks`` in that order (``np.concatenate([idx[k] for k in ks])``) and how many
        each has."""
        if self.one:  # every k is 0: its points once per entry of ks
            return (np.repeat(self.flat[None], len(ks), axis=0).reshape(-1),
                    np.full(len(ks), len(self.flat), dtype=np.int64))
        if self.single:  # (each length 1, offset k: the general gather below picks flat[ks], without its repeat)
            return self.flat[ks], np.ones(len(ks), dtype=np.int64)
        n = self.lens[ks]
        ends = np.cumsum(n)
        return self.flat[np.repeat(self.offs[ks] - (ends - n), n) + np.arange(int(ends[-1]) if len(ends) else 0)], n


class _Results:
    """Every layer's arrays over all points (``[layers, points]``), filled chunk by chunk of structural
    combinations: one array operation per key and chunk for all layers."""

    def __init__(self, nl: int, n: int):
        self.nl, self.n = nl, n
        #: the kept values' bound (:data:`PENDING_BYTES_UPTO`; a model's batch: times its :data:`PENDING_SCALE_OF`)
        self.pending_upto = PENDING_BYTES_UPTO
        names = _all_metric_names()  # every metric a plan gives: one allocation for all
        #: the metrics, then the states: [key, layer, point] (one scatter per chunk for every key). Not filled with
        #: NaN first (16 MB a 2,048-point VGG16 batch): every (layer, point) is run, fused or without a plan in
        #: exactly one chunk, and :meth:`add` writes each such cell of every key (NaN where a pair has no plan or
        #: its plan no value); :attr:`done` marks them, and :meth:`batches` sets NaN anywhere none wrote
        #: (a small batch, one design point's: filled first, its few NaN cheaper than a scatter per key)
        self.filled = nl * n <= CUBE_FILL_UPTO
        self.cube = np.full((len(names) + len(STATES), nl, n), np.nan) if self.filled else \
            np.empty((len(names) + len(STATES), nl, n))
        self.done = np.zeros((nl, n), bool) if not self.filled else None
        #: the cube's row of each key as :func:`_plan_metrics` names it (states as ``state:NAME``)
        self.row = _cube_rows()
        self.metrics: dict[str, np.ndarray] = {k: self.cube[self.row[k]] for k in names}  # (in the names' order)
        self.names: list[list[str] | None] = [None] * nl  # per layer: metric keys as its first chunk set them
        self.states = dict(zip(STATES, self.cube[len(names):]))
        #: per chunk its pairs' cube values, written into a key's row when the key is first read (:meth:`fill`; a
        #: batch's own steps read ~15 of the ~55 keys): (the pairs' cells (:func:`_scatter_index`), the infeasible
        #: pairs' cells or None, the values by key; a key without a value gets NaN)
        self.pending: list[tuple[np.ndarray, np.ndarray | None, dict[str, np.ndarray]]] = []
        self.written: set[int] = set()  # the cube rows written from every chunk so far
        self.pending_bytes = 0  # the values :attr:`pending` holds (at most :attr:`pending_upto`, then all written)
        self.undone: np.ndarray | None = None  # the cells no chunk wrote (:meth:`batches`), NaN in every key
        self.labels = {k: num.objects((nl, n), None) for k in _EAGER_LABELS}  # (np.full: ~2x slower for objects)
        self.texts: dict[str, LazyTextColumns] = {}
        for k, fn in LAZY_TEXTS.items():  # the texts of the chosen plan share one set of arrays
            owner = _TEXT_OWNER[k]
            self.texts[k] = LazyTextColumns(nl, n, fn, self.texts[owner] if owner != k else None)
        self.feasible = np.ones((nl, n), bool)
        self.reason = num.objects((nl, n), "")  # (np.full of a text: a new str per element, ~10x slower)

    def add(self, p: Plans, grp: _Groups, layer_of: np.ndarray, at: np.ndarray, which: list[int],
            res: dict[str, np.ndarray], labels: dict[str, np.ndarray], plans: dict[str, np.ndarray]) -> None:
        """Combination k of ``p`` at its points (``grp``): per layer fused, infeasible (``p.reason``), or ran:
        (layer, point) pairs ``(layer_of, at)`` of layers ``which`` got the metrics ``res`` (states as
        ``state:NAME``), ``labels`` and the texts of :data:`LAZY_TEXTS` of plans ``plans[key]`` of ``p.table`` (-1:
        none, shown as ``-``; a key of :data:`_TEXT_OWNER`: its own and the texts sharing its plans)."""
        f_layer: list[int] = []  # (layer, combination) pairs fused, and the layer they are fused into
        f_k: list[int] = []
        f_into: list[str] = []
        ran: list[str] | None = None  # the metric keys of res (the same for every layer: built once)
        for i in range(self.nl):
            if self.names[i] is None:  # metric key order: as the first combination set them (read-only lists)
                if p.count[i, 0] > 0:
                    if ran is None:  # every metric name in _all_metric_names' order, then any other key: the
                        # order of a layer without a plan too, so a point's keys do not depend on its batch
                        names = _all_metric_names()
                        ran = [k for k in names if k in res]
                        ran += [k for k in res if not k.startswith("state:") and k not in names]
                        for k in ran:  # (every metric name is in the cube: only keys beyond it)
                            if k not in self.metrics:
                                self.metrics[k] = np.full((self.nl, self.n), np.nan)
                    self.names[i] = ran
                else:
                    self.names[i] = list(_all_metric_names())
            into_i = p.fused_into[i]
            if into_i.count(None) < len(into_i):  # some combination fused this layer
                fused = [k for k, f in enumerate(into_i) if f is not None]
                f_layer += [i] * len(fused)
                f_k += fused
                f_into += [into_i[k] for k in fused]
        r_layer, r_k, r_why = p.missing
        flat_r = None  # the cells of the infeasible pairs, NaN in every key of the cube (below, key by key)
        if len(r_k):  # infeasible: every point of each such pair at once
            rp, cnt = grp.take(r_k)
            flat_r = np.repeat(r_layer, cnt) * self.n + rp  # (flat positions: one index, not two)
            self.feasible.reshape(-1)[flat_r] = False
            self.reason.reshape(-1)[flat_r] = np.repeat(r_why, cnt)
            if self.filled:  # (the cube is NaN already)
                flat_r = None
            else:
                self.done.reshape(-1)[flat_r] = True
        if f_k:  # fused into the layer before: zeros, and its name
            fp, cnt = grp.take(np.array(f_k, dtype=np.int64))
            fl, into = np.repeat(np.array(f_layer, dtype=np.int64), cnt), np.repeat(_objects(f_into), cnt)
            self.cube[:, fl, fp] = 0.0
            if not self.filled:
                self.done[fl, fp] = True
            for k in self.metrics.keys() - self.row.keys():  # metrics outside the cube
                self.metrics[k][fl, fp] = 0.0
            for k in _TEXT_OWNERS:
                self.texts[k].fill(fl, fp, "-")
            self.labels["fused_into"][fl, fp] = into
            self.labels["mapping"][fl, fp] = np.array([f"fused into {f}" for f in into], dtype=object)
            for k in ("loop_order", "runner_up_lost"):
                self.labels[k][fl, fp] = "-"
        flat = layer_of * self.n + at  # positions in the [layers, points] arrays
        to = _scatter_index(flat, self.nl * self.n)
        # the cube's keys are written when first read (:meth:`fill`), those read already (none, as a rule) now
        if self.filled:  # a small batch (one design point): every key now, into a cube that is NaN already (its
            cube = self.cube.reshape(len(self.cube), -1)  # writes cost less than keeping them; no hook for the layers)
            for k, j in self.row.items():
                v = res.get(k)
                if v is not None:
                    cube[j][to] = _value(v)
        else:
            entry = (to, flat_r, {k: v for k, v in res.items() if k in self.row})
            if self.written:
                self._write(entry, sorted(self.written))
            if len(self.written) < len(self.row):
                self.pending.append(entry)
                self.pending_bytes += sum(v.nbytes for v in entry[2].values())
                if self.pending_bytes > self.pending_upto:  # (bounded memory: chunks would keep a whole result's
                    self.fill(self.row)  # values alive beside the cube; the keys read later written now, as before)
            self.done.reshape(-1)[to] = True
        for k, v in res.items():
            if k not in self.row:
                (self.states[k[6:]] if k.startswith("state:") else self.metrics[k]).reshape(-1)[to] = _value(v)
        for k, v in labels.items():
            self.labels[k].reshape(-1)[to] = v
        if plans:
            # the texts read plan and label columns only (explain._READS): they keep a table without the data
            # movement (the chunk's transfer matrices and sub-tables die with the chunk, not with the results)
            tab = p.table
            texts_tab = PlanTable(tab.plan, tab.label, tab.src, ())
            for k, rows in plans.items():
                self.texts[k].use_index(flat, to)
                self.texts[k].put(which, layer_of, at, texts_tab, rows, flat)

    def batches(self, layers) -> list[LayerBatch]:
        """Every layer's results: row ``i`` of every array for layer ``i`` (:func:`layer_batches`: views, the
        dicts built when first read; a layer's metric keys in the order its first combination set them;
        ``reason`` is set where ``feasible`` is False only)."""
        if not self.filled and not self.done.all():  # (cells no chunk wrote: NaN, as a cube filled first holds)
            self.undone = np.flatnonzero(~self.done)
            cube = self.cube.reshape(len(self.cube), -1)
            for j in self.written if self.pending else range(len(cube)):  # (nothing kept: no key written later)
                cube[j][self.undone] = np.nan
            self.done[:] = True
        labels = {k: self.labels[k] if k in self.labels else self.texts[k] for k in _LABEL_ORDER}
        return layer_batches(layers, range(self.nl), self.n, self.metrics, self.states, labels, self.feasible,
                             self.reason, row_keys=self.names, ready=self.fill if self.pending else None)

    def fill(self, keys: Iterable[str]) -> None:
        """Write the cube rows of the metrics ``keys`` (states as ``state:NAME``; keys outside the cube: nothing to
        do) from every chunk where not written yet: the values the layers' arrays then hold (:func:`layer_batches`
        calls it before it reads a key). Every chunk's pairs and infeasible cells are distinct cells, so the
        order of the chunks' writes does not matter."""
        row, written = self.row, self.written
        new = [j for j in map(row.get, keys) if j is not None and j not in written]
        if not new:
            return
        new = sorted(set(new))
        written.update(new)
        for entry in self.pending:
            self._write(entry, new)
        if self.undone is not None:
            cube = self.cube.reshape(len(self.cube), -1)
            for j in new:
                cube[j][self.undone] = np.nan
        if len(written) == len(row):  # every key written: the chunks' values are no longer needed
            self.pending, self.pending_bytes = [], 0

    def _write(self, entry: tuple[np.ndarray, np.ndarray | None, dict[str, np.ndarray]], rows: list[int]) -> None:
        """Cube rows ``rows`` of one chunk (``entry``, :attr:`pending`): the infeasible cells NaN, then a scatter of
        the pairs' values (NaN where the plans give none), key by key: each row's ~300 KB is in the cache for
        both (NaN at random places first for every key, then the scatters, read every row from memory twice)."""
        to, flat_r, res = entry
        cube = self.cube.reshape(len(self.cube), -1)
        keys = _cube_keys()
        for j in rows:
            if flat_r is not None:
                cube[j][flat_r] = np.nan
            v = res.pop(keys[j], None)  # (each chunk's value written once: dropped then; computed then if deferred)
            cube[j][to] = np.nan if v is None else _value(v)


#: (layer, point) cells up to which :class:`_Results` fills its cube with NaN first (one design point, small
#: batches: one fill costs less than NaN written key by key where a layer has no plan)
CUBE_FILL_UPTO = 512

#: the chunks' values :class:`_Results` keeps to write a key when it is first read; above it every key is written at
#: once (a 2,048-point EMAXV VGG16-conv batch keeps ~15 MB; EMAXVR's larger networks, whose FC layers' forms read
#: every key anyway, peaked ~100 MB higher keeping all of them)
PENDING_BYTES_UPTO = 16 << 20
#: :data:`PENDING_BYTES_UPTO` times this per architecture where it differs: a 2,048-point EMAXV VGG16-conv chunk keeps
#: ~14 MB (at most 53 keys x 18 layers x 2,048 points x 8 B = 15.6 MB), so with 32 MiB a 4,096-point batch's two chunks
#: are kept and its ~38 keys nobody reads never written (16 MiB wrote every key of both chunks when the second came:
#: ~7 % of the batch; peak RSS 176 -> 174 MB). EMAXVR keeps 16 MiB: 32 MiB raised a 2,048-point ResNet-50 batch's
#: peak RSS 775 -> 818 MB (its FC layers' forms read every key anyway)
PENDING_SCALE_OF = {"emaxv": 2}

#: positions from which :func:`_scatter_index` scatters increasing positions by a mask
SCATTER_MASK_FROM = 4096


def _scatter_index(flat: np.ndarray, size: int) -> np.ndarray:
    """An index that writes values to positions ``flat`` of an array of ``size`` elements in the order given
    (``a[index] = values``): ``flat`` itself, or, for many strictly increasing positions (a chunk's pairs, layer by
    layer, points in order), a boolean mask of them (its True positions in increasing order are ``flat``: the
    same writes, ~25 % cheaper per key than an integer scatter)."""
    if len(flat) < SCATTER_MASK_FROM or not (flat[1:] > flat[:-1]).all():
        return flat
    mask = np.zeros(size, bool)
    mask[flat] = True
    return mask


#: the layer metrics :meth:`_EmaxBase.model_totals` sums
_SUMMED_KEYS = ("cycles", "time_s", "dram_read_bytes", "dram_write_bytes", "starts", "activations", "ideal_time_s",
                "dram_compulsory_bytes", "dram_energy_j", "spm_read_bytes", "spm_write_bytes", "compute_energy_j",
                "sram_energy_j")

#: per-layer label keys in the contract's order; the texts of :data:`LAZY_TEXTS` are built when read
_LABEL_KEYS = ("mapping", "loop_order", "schedule", "fused_into") + EXPLAIN_KEYS
_EAGER_LABELS = tuple(k for k in _LABEL_KEYS if k not in LAZY_TEXTS)
#: per text of :data:`LAZY_TEXTS`, the text whose plans it reads (and whose arrays it shares): the chosen plan's
#: texts read the plans of ``schedule``, the runner-up's its own
_TEXT_OWNER = {k: "schedule" if k in ("schedule", *PLAN_TEXTS) else k for k in LAZY_TEXTS}
_TEXT_OWNERS = tuple(dict.fromkeys(_TEXT_OWNER.values()))
#: the order of a layer's ``labels`` dict: ``fused_into`` first (as ``LayerBatch.__init__`` puts it), then the rest
_LABEL_ORDER = ("fused_into",) + tuple(k for k in _LABEL_KEYS if k != "fused_into")


def _choose(p: Plans, grp: _Groups, link: Link, pp: _PointConsts, macs: np.ndarray, out: _Results) -> None:
    """Choose a plan per point and layer (the points of combination k, ``grp``, may run combination k's plans) and
    store the chosen plans' metrics and labels in ``out`` (one per layer)."""
    tab = p.table
    li, ki = np.nonzero(p.count > 0)  # layer by layer
    pts, n_pts = grp.take(ki)
    single = grp.single and _one_each(p.count)  # one point per combination, one plan per pair (EMAXV)
    if single:  # (the expansion below with every count 1: each pair its own candidate, its plan p.start[li, ki])
        start, pair_pt, pair_row = np.arange(len(li)), pts, p.start[li, ki]
    else:
        cand = np.repeat(p.count[li, ki], n_pts)  # candidate plans of each (layer, point)
        start = np.cumsum(cand) - cand
        local = np.arange(cand.sum()) - np.repeat(start, cand)
        pair_pt = np.repeat(pts, cand)
        pair_row = np.repeat(np.repeat(p.start[li, ki], n_pts), cand) + local
    res: dict[str, np.ndarray] = {}
    labels: dict[str, np.ndarray] = {}
    plans: dict[str, np.ndarray] = {}
    if len(pts):
        at = timing._Take(pair_row, timing._every(tab, pair_row))  # (one design point: every plan, in order)
        cols = {k: at(tab.plan[k]) for k in cost.ENERGY_COLUMNS}
        e_comp, e_sram = pp.energy_j(cols, pair_pt)
        # up to TIME_ALL_UPTO pairs every pair is timed at once, for the choice and the report (the pruning would
        # spare few pairs, and one design point pays numpy's cost per call three times); else the pruning first,
        # then the pairs it keeps, then the chosen ones
        every = len(pair_row) <= TIME_ALL_UPTO
        st_all, report = pair_states_both(tab, pair_row, pair_pt, link) if every else (None, None)
        # (one candidate per point, as on EMAXV: nothing to prune)
        crit = pp.pair_criteria(pair_pt)
        keep = (_within_bound(tab, pair_row, pair_pt, link, crit, e_comp + e_sram, start,
                              pp.dram_rd_pj[pair_pt], pp.dram_wr_pj[pair_pt], pp.static_w[pair_pt], st_all)
                if len(pair_row) > len(start) else
                np.ones(len(pair_row), bool))
        kept = None
        if not keep.all():
            cnt = np.add.reduceat(keep.astype(np.int64), start)
            start = np.cumsum(cnt) - cnt
            pair_row, pair_pt, e_comp, e_sram = pair_row[keep], pair_pt[keep], e_comp[keep], e_sram[keep]
            kept = np.flatnonzero(keep)
        if every:
            st = st_all if kept is None else {k: _rows_of(v, kept) for k, v in st_all.items()}
        else:
            st = pair_states(tab, pair_row, pair_pt, link, for_choice=True)
        cycles = sum(st[s] for s in STATES)
        t = cycles / link.at(link.clock_hz, pair_pt)
        en = (cost.dram_energy_j(st["_dram_read"], st["_dram_write"], link.at(pp.dram_rd_pj, pair_pt),
                                 link.at(pp.dram_wr_pj, pair_pt))
              + (e_comp + e_sram) + pp.static_w[pair_pt] * t)  # the whole energy: a slower plan leaks longer
        dr = st["_dram_read"] + st["_dram_write"]
        if pp.only is None:
            crit = pp.pair_criteria(pair_pt)
        by = _primary(crit, t, en, dr)
        pick = start + select(crit, t, en, dr, start, by)
        # one candidate per (layer, point) (EMAXV): pick is 0, 1, 2, ...: the picked values are the pairs' own arrays
        at_pick = timing._Take(pick, len(start) == len(pair_row))
        rows = at_pick(pair_row)
        picked = None if report is None else {k: at_pick(v) if kept is None else _rows_of(v, at_pick(kept))
                                              for k, v in report.items()}
        # (a small batch's cube is filled at once, every key written now: nothing to defer)
        defer = DEFER_UNREAD and not out.filled
        res = _plan_metrics(tab, rows, pts, link, pp, at_pick(e_comp), at_pick(e_sram),
                            macs[li] if grp.single else np.repeat(macs[li], n_pts), picked, defer)
        ru = runner_up(crit, t, en, dr, start, pick, by)
        has = ru >= 0
        ru_at = np.where(has, ru, pick)
        with np.errstate(divide="ignore", invalid="ignore"):
            if defer:  # (when read: the same expression; ``ru_at`` and ``has`` are new arrays, never written)
                ratios = {k: _Deferred(lambda v=v: np.where(has, v[ru_at] / at_pick(v), np.nan), len(ru_at))
                          for k, v in zip(RATIO_KEYS, (t, dr, en))}
            else:
                ratios = {k: np.where(has, v[ru_at] / at_pick(v), np.nan) for k, v in zip(RATIO_KEYS, (t, dr, en))}
        res.update(ratios)
        if DEFER_UNREAD and not has.any():  # no runner-up anywhere (EMAXV: one candidate per pair): every verdict
            worse = more_dram = np.zeros(len(has), bool)  # is "no other plan", whatever these two say
        else:
            rtol = _first_rtol(crit, False)
            rtol = rtol if isinstance(crit, str) else at_pick(rtol)
            worse, more_dram = by[ru_at] > at_pick(by) * (1 + rtol) + 1e-30, dr[ru_at] > at_pick(dr) * (1 + 1e-3)
        if pp.only is not None:
            verdict = verdicts(pp.only, worse, more_dram, ~has)
        else:
            names, code = pp.criterion_codes
            verdict = verdicts_coded(names, code[pts], worse, more_dram, ~has)
        at = timing._Take(rows, timing._every(tab, rows))
        labels = {"mapping": at(tab.label["name"]), "loop_order": at(tab.label["order_name"]),
                  "runner_up_lost": verdict}
        plans = {"schedule": rows, "runner_up": np.where(has, pair_row[ru_at], -1)}  # (see _TEXT_OWNER)
    # (the layers present, increasing: li is layer by layer; many pairs: by bincount)
    which = (sorted(set(li.tolist())) if len(li) < 256 else
             np.flatnonzero(np.bincount(li, minlength=len(p.count))).tolist())
    out.add(p, grp, li if grp.single else np.repeat(li, n_pts), pts, which, res, labels, plans)


#: (plan, point) pairs up to which :func:`_choose` times every pair at once instead of pruning first: the pruning
#: spares few pairs (a layer has a handful of plans per point), so one pass is faster at every size measured (one
#: point 1.3x, 512 random points 1.1x, a 20,000-point sweep of one structure 1.5x); above it, the pruning bounds
#: the memory (that sweep: +8 % peak RSS timed at once)
TIME_ALL_UPTO = 1 << 20


def _within_bound(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link, criterion: np.ndarray | str,
                  e_other: np.ndarray, start: np.ndarray, dram_rd_pj: np.ndarray,
                  dram_wr_pj: np.ndarray, static_w: np.ndarray,
                  timed: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Which (plan, point) pairs may still be chosen: an exact pruning before the per-state timing.

    A lower bound of each pair's criterion value comes from what needs no transfer timing: cycles of
    CONF + LMMI + REGV + EXEC + PRE_POST_EXEC + the pooling pass (the transfer states only add), DRAM
    bytes before bus-word rounding (rounding only adds). Per point, the pair with the lowest bound is
    timed exactly; pairs whose bound exceeds that value by more than the criterion's tie tolerance cannot
    be within the tolerance of the best, so :func:`select` would never pick them (nor count them as ties).
    ``timed``: :func:`pair_states` (for the choice) of every pair, if known.
    """
    # constants read at call time: the fit (archmodels/emax/fit.py) varies them
    at = timing._Take(rows, timing._every(tab, rows))  # (one design point: every plan, in order)
    c = {k: at(tab.plan[k]) for k in ("iterations", "loop_ends", "activations", "rows_used", "regs", "has_pool",
                                      "pool_regs", "pool_rows_used", "pool_iterations", "pool_loop_ends",
                                      "dram_exact", "dram_write")}
    clock = link.clock_hz[pts]
    pool = np.where(c["has_pool"] > 0, timing.START_OVERHEAD_CYCLES + np.ceil(c["pool_regs"] / timing.REGV_REGS_PER_CYCLE)
                    + timing.PIPE_CYCLES_PER_ROW * c["pool_rows_used"] + c["pool_iterations"]
                    + c["pool_loop_ends"] * timing.LOOP_END_BUBBLE_CYCLES, 0.0)
    cycles = (c["rows_used"] * link.cols[pts] * timing.CONF_CYCLES_PER_PE + c["activations"] * timing.START_OVERHEAD_CYCLES
              + c["activations"] * np.ceil(c["regs"] / timing.REGV_REGS_PER_CYCLE) + c["iterations"]
              + c["loop_ends"] * timing.LOOP_END_BUBBLE_CYCLES + c["activations"] * timing.PIPE_CYCLES_PER_ROW * c["rows_used"]
              + pool)
    t_lb = cycles / clock
    d_lb = c["dram_exact"]
    e_lb = cost.dram_energy_j(d_lb - c["dram_write"], c["dram_write"], dram_rd_pj, dram_wr_pj) + e_other + static_w * t_lb
    lb = _primary(criterion, t_lb, e_lb, d_lb)
    cnt = np.diff(np.append(start, len(rows)))
    low = np.minimum.reduceat(lb, start)
    first = np.flatnonzero(lb == np.repeat(low, cnt))
    seg = np.searchsorted(start, first, side="right") - 1
    probe = start.copy()  # a segment without a finite bound is timed at its own first pair
    probe[seg[::-1]] = first[::-1]
    st = (pair_states(tab, rows[probe], pts[probe], link, for_choice=True) if timed is None else
          {k: timed[k][probe] for k in (*STATES, "_dram_read", "_dram_write")})
    t = sum(st[s] for s in STATES) / clock[probe]
    dr = st["_dram_read"] + st["_dram_write"]
    en = (cost.dram_energy_j(st["_dram_read"], st["_dram_write"], dram_rd_pj[probe], dram_wr_pj[probe]) + e_other[probe]
          + static_w[probe] * t)
    crit = criterion if isinstance(criterion, str) else criterion[probe]
    ref = _primary(crit, t, en, dr) * (1 + _first_rtol(crit, False))
    keep = ~(lb > np.repeat(ref * (1 + 1e-9), cnt))  # NaN bounds or references prune nothing
    keep[probe] = True
    return keep


class _Criteria:
    """Each pair's criterion as masks, one per criterion asked about, each gathered once from the points' masks
    (:meth:`_PointConsts.criterion_mask`) when first asked: the choice's functions compare a pair's criterion with a
    name ~15 times a chunk, and an object array compares text per element (~15 ns each)."""

    __slots__ = ("_of_points", "_at", "_masks")

    def __init__(self, of_points: Callable[[str], np.ndarray], at: np.ndarray):
        self._of_points, self._at, self._masks = of_points, at, {}

    def eq(self, name: str) -> np.ndarray:
        """Which pairs rank by criterion ``name``."""
        m = self._masks.get(name)
        if m is None:
            m = self._masks[name] = self._of_points(name)[self._at]
        return m

    def __getitem__(self, at) -> _Criteria:
        return _Criteria(self._of_points, self._at[at])


def _is(criterion: np.ndarray | _Criteria, name: str) -> np.ndarray:
    """``criterion == name`` per pair (``criterion``: an object array of names, or :class:`_Criteria`)."""
    return criterion.eq(name) if isinstance(criterion, _Criteria) else criterion == name


def _primary(criterion: np.ndarray | str, time_s: np.ndarray, energy_j: np.ndarray, dram_b: np.ndarray) -> np.ndarray:
    """The value each pair's criterion ranks plans by (``criterion`` a string: every pair's; the array ranked by, not
    a copy)."""
    if isinstance(criterion, str):
        if criterion == "edp":
            return energy_j * time_s
        return energy_j if criterion == "energy" else dram_b if criterion == "dram" else time_s
    # (np.select's choice, the first condition that holds, as nested wheres: no stacked copies of the choices)
    return np.where(_is(criterion, "energy"), energy_j,
                    np.where(_is(criterion, "dram"), dram_b, np.where(_is(criterion, "edp"), energy_j * time_s, time_s)))


def runner_up(criterion: np.ndarray | str, time_s: np.ndarray, energy_j: np.ndarray, dram_b: np.ndarray,
              start: np.ndarray, pick: np.ndarray, by: np.ndarray | None = None) -> np.ndarray:
    """Per point, the pair index of the best other plan by the point's criterion (-1 if none differs).

    Plans with the chosen plan's time and DRAM bytes (the same schedule reached another way) do not count.
    ``by``: :func:`_primary` of the pairs, if known.
    """
    if len(start) == len(time_s):  # one candidate per point: itself, unless it has its own time and bytes (no other)
        # (_close(x, x) is exactly ~isnan(x): |x - x| = 0 is within the tolerance of a finite x, inf == inf, NaN
        # is close to nothing)
        same = ~np.isnan(time_s) & ~np.isnan(dram_b)
        v = np.where(same, np.inf, _primary(criterion, time_s, energy_j, dram_b) if by is None else by)
        return np.where(np.isfinite(v), np.arange(len(v)), -1)
    return _runner_up_pairs(criterion, time_s, energy_j, dram_b, start, pick, by)


def _runner_up_pairs(criterion: np.ndarray | str, time_s: np.ndarray, energy_j: np.ndarray, dram_b: np.ndarray,
                     start: np.ndarray, pick: np.ndarray, by: np.ndarray | None = None) -> np.ndarray:
    """:func:`runner_up` over the pairs (any number of candidates per point; the reference of its shortcut)."""
    cnt = np.diff(np.append(start, len(time_s)))
    same = _close(time_s, np.repeat(time_s[pick], cnt)) & _close(dram_b, np.repeat(dram_b[pick], cnt))
    v = np.where(same, np.inf, _primary(criterion, time_s, energy_j, dram_b) if by is None else by)
    best = np.minimum.reduceat(v, start) if len(v) else np.zeros(0)
    at = np.flatnonzero(v == np.repeat(best, cnt))
    first = np.full(len(start), -1, dtype=np.int64)
    seg = np.searchsorted(start, at, side="right") - 1
    first[seg[::-1]] = at[::-1]  # the first pair of each segment that attains its best
    return np.where(np.isfinite(best), first, -1)


def _close(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``np.isclose(x, y, rtol=1e-9, atol=0)`` of float arrays, its comparisons written out (without the
    function's per-call argument checks)."""
    with np.errstate(invalid="ignore"):
        return (np.abs(x - y) <= 1e-9 * np.abs(y)) & np.isfinite(y) | (x == y)


def select(criterion: np.ndarray | str, time_s: np.ndarray, energy_j: np.ndarray, dram_b: np.ndarray,
           start: np.ndarray, by: np.ndarray | None = None) -> np.ndarray:
    """Position of the chosen plan among each point's candidates.

    Arrays over (point, candidate) pairs, a point's candidates contiguous from ``start[point]``. The
    criterion picks the plans within :data:`TIE_RTOL` of the best (:data:`TIME_THEN_DRAM_RTOL` of the
    fastest for ``time_then_dram``; exactly the least traffic for ``dram``; ``edp`` = energy x time); among them the fewest DRAM bytes
    (within 0.1 %) win, then the lowest energy (time for the energy criterion), then the first candidate.
    ``criterion`` a string: every pair's; ``by``: :func:`_primary` of the pairs, if known.
    """
    if len(start) == len(time_s):  # one candidate per point (EMAXV's layers): it is chosen, within the tolerances or
        return np.zeros(len(start), dtype=np.int64)  # not (none left: the first candidate)
    return _select_pairs(criterion, time_s, energy_j, dram_b, start, by)


def _select_pairs(criterion: np.ndarray | str, time_s: np.ndarray, energy_j: np.ndarray, dram_b: np.ndarray,
                  start: np.ndarray, by: np.ndarray | None = None) -> np.ndarray:
    """:func:`select` over the pairs (any number of candidates per point; the reference of its shortcut)."""
    if by is None:
        by = _primary(criterion, time_s, energy_j, dram_b)
    if isinstance(criterion, str):
        second = time_s if criterion == "dram" else dram_b
        third = time_s if criterion == "energy" else energy_j
    else:
        second = np.where(_is(criterion, "dram"), time_s, dram_b)
        third = np.where(_is(criterion, "energy"), time_s, energy_j)
    cnt = np.diff(np.append(start, len(time_s)))
    ok = np.ones(len(time_s), bool)
    for metric, rtol in ((by, _first_rtol(criterion, True)), (second, 1e-3), (third, 0.0)):
        # NaN (e.g. energy at a clock above the node's fmax) ranks last; a level where no candidate has a
        # finite value decides nothing (before, it emptied the set and the first candidate won, which
        # depended on which candidates the batch's pruning had kept: batch != scalar)
        v = np.where(ok & ~np.isnan(metric), metric, np.inf)
        best = np.repeat(np.minimum.reduceat(v, start), cnt)
        ok &= (v <= best * (1 + rtol) + 1e-30) | ~np.isfinite(best)
    local = np.arange(len(time_s)) - np.repeat(start, cnt)
    first = np.minimum.reduceat(np.where(ok, local, len(time_s)), start)
    return np.where(first == len(time_s), 0, first)  # none left: the first candidate


def _first_rtol(criterion: np.ndarray | str, exact_dram: bool) -> np.ndarray | float:
    """The tie tolerance of each pair's criterion (a float for a criterion string): :data:`TIME_THEN_DRAM_RTOL` for
    ``time_then_dram``, else :data:`TIE_RTOL`; with ``exact_dram`` (:func:`select`), ``dram`` asks for the least
    traffic: no tie tolerance on it (trading traffic for time is time_then_dram's job) beyond float rounding
    (:data:`DRAM_SAME_RTOL`); TIE_RTOL was fitted on the time criterion's calibration cases."""
    if isinstance(criterion, str):
        return (TIME_THEN_DRAM_RTOL if criterion == "time_then_dram" else
                DRAM_SAME_RTOL if exact_dram and criterion == "dram" else TIE_RTOL)
    if not exact_dram:
        return np.where(_is(criterion, "time_then_dram"), TIME_THEN_DRAM_RTOL, TIE_RTOL)
    return np.select([_is(criterion, "time_then_dram"), _is(criterion, "dram")], [TIME_THEN_DRAM_RTOL, DRAM_SAME_RTOL],
                     TIE_RTOL)


@lru_cache(maxsize=1)
def _cube_rows() -> dict[str, int]:
    """The row of each metric (then ``state:NAME``) in :attr:`_Results.cube`."""
    return {k: j for j, k in enumerate(_cube_keys())}


@lru_cache(maxsize=1)
def _cube_keys() -> tuple[str, ...]:
    """The key of each row of :attr:`_Results.cube`: the metrics :meth:`_EmaxBase.model_totals` sums over the layers
    (:data:`_SUMMED_KEYS`, in that order: consecutive planes, which :func:`archmodels.result.layer_sums` sums where
    they lie instead of stacking a copy of them), every other metric, then ``state:NAME``."""
    names = _all_metric_names()
    summed = tuple(k for k in _SUMMED_KEYS if k in names)
    return summed + tuple(k for k in names if k not in summed) + tuple("state:" + s for s in STATES)


@lru_cache(maxsize=1)
def _all_metric_names() -> tuple[str, ...]:
    return ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j") + tuple(
        m.name for m in _metrics())


#: the plan columns :func:`_plan_metrics` reports (the others are gathered for no pair)
_REPORTED_PLAN_COLUMNS = ("dram_write", "starts", "activations", "bands", "passes", "macs", "icpar", "alus",
                          "rows_used", "ops", "spm_read", "spm_write", "spm_need", "lmm_read", "lmm_write",
                          "compulsory", "write_kind")


#: whether :func:`_plan_metrics` and :func:`_choose` leave the metrics no later step of a batch reads (ratios,
#: fractions, the runner-up's ratios) to be computed when their cube row is written (:class:`_Deferred`), and
#: :func:`_choose` skips the runner-up's comparisons where no pair has a runner-up; False: every value computed at
#: once, as before (the same values either way, tests/test_emax_batched16.py). A batch whose cube is filled at once
#: (:data:`CUBE_FILL_UPTO`: one design point) defers nothing: every key is written with its chunk
DEFER_UNREAD = True


class _Deferred:
    """A metric's values computed when :class:`_Results` first writes its cube row (a key is read), not when its
    chunk is chosen: a batch's own steps read ~15 of the ~55 keys, and each ratio or fraction nobody reads cost one
    to four numpy passes over the chunk's ~33 k pairs. ``nbytes``: what the values take once computed (the kept-values
    bound counts them as before)."""

    __slots__ = ("_fn", "nbytes")

    def __init__(self, fn: Callable[[], np.ndarray], n: int):
        self._fn, self.nbytes = fn, 8 * n

    def __call__(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):  # (as where they were computed before)
            return self._fn()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The values (numpy asks when the deferred value is written into an array as it is)."""
        a = self()
        return a if dtype is None else a.astype(dtype, copy=False)


def _value(v: np.ndarray | _Deferred) -> np.ndarray:
    """The values of a metric as :func:`_plan_metrics` gives it (computed now if :class:`_Deferred`)."""
    return v() if type(v) is _Deferred else v


def _plan_metrics(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link, pp: _PointConsts,
                  e_comp: np.ndarray, e_sram: np.ndarray, macs: np.ndarray,
                  st: dict[str, np.ndarray] | None = None, defer: bool = False) -> dict[str, np.ndarray]:
    """Every metric of plan ``rows[k]`` at point ``pts[k]`` of a layer of ``macs[k]`` MACs (states as
    ``state:NAME``; ``st``: :func:`pair_states` of these pairs for the report, if known; ``defer``: the metrics no
    step of a batch reads as :class:`_Deferred`, see :data:`DEFER_UNREAD`)."""
    if st is None:
        st = pair_states(tab, rows, pts, link, for_choice=False)
    cycles = sum(st[s] for s in STATES)
    time_s = cycles / link.at(link.clock_hz, pts)
    rd, dram_r = pair_dram_reads(tab, rows, pts, link)
    at = timing._Take(rows, timing._every(tab, rows))  # (EMAXV, one design point: every plan in order, no copies)
    p = {k: at(tab.plan[k]) for k in _REPORTED_PLAN_COLUMNS}
    dram_w = p["dram_write"]
    e_dram = cost.dram_energy_j(dram_r, dram_w, link.at(pp.dram_rd_pj, pts), link.at(pp.dram_wr_pj, pts))
    n = len(rows)
    if defer:  # (the values when written: the same expressions of the same arrays)
        def later(fn: Callable[[], np.ndarray]) -> _Deferred | np.ndarray:
            return _Deferred(fn, n)
    else:
        def later(fn: Callable[[], np.ndarray]) -> _Deferred | np.ndarray:
            return fn()
    pes_of = lambda: pp.pes[pts]  # noqa: E731 (the PEs gathered where a deferred value needs them)
    ops, alus, compulsory = p["ops"], p["alus"], p["compulsory"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "cycles": cycles,
            "time_s": time_s,
            "utilization": later(lambda: macs / (cycles * pes_of())),
            "dram_read_bytes": dram_r,
            "dram_write_bytes": dram_w,
            "energy_j": e_dram + e_comp + e_sram,
            "starts": p["starts"],
            "activations": p["activations"],
            "bands": p["bands"],
            "passes": p["passes"],
            "parallelism": p["macs"],
            "icpar": p["icpar"],
            "alus_used": p["alus"],
            "rows_used": p["rows_used"],
            "ideal_time_s": p["ops"] / p["macs"] / link.at(link.clock_hz, pts),
            "overhead_fraction": later(lambda: (st["LMMI"] + st["REGV"] + st["PRE_POST_EXEC"]) / cycles),
            "load_fraction_of_exec": later(lambda: (st["LOAD"] + st["_pload_total"]) / st["EXEC"]),
            "mac_utilization": later(lambda: ops / (cycles * pes_of())),
            "alu_occupancy": later(lambda: alus / pes_of()),
            "pload_cycles": st["_pload_total"],
            "pdrain_cycles": st["_pdrain_total"],
            "spm_read_bytes": p["spm_read"],
            "spm_write_bytes": p["spm_write"],
            "spm_need_bytes": p["spm_need"],
            "lmm_read_bytes": p["lmm_read"],
            "lmm_write_bytes": p["lmm_write"],
            "dram_access_per_op": later(lambda: np.where(macs != 0, (dram_r + dram_w) / (2 * macs), np.nan)),
            "dram_compulsory_bytes": compulsory,
            "dram_traffic_ratio": later(lambda: np.where(compulsory > 0, (dram_r + dram_w) / compulsory, np.nan)),
            "dram_energy_j": e_dram,
            "compute_energy_j": e_comp,
            "sram_energy_j": e_sram,
            "dram_power_w": later(lambda: e_dram / time_s),
        }
    for kind, d in DRAM_KIND_KEYS:
        out[f"dram_{kind}_{d}_bytes"] = (rd if d == "read" else p["write_kind"])[:, KINDS.index(kind)]
    for s in STATES:
        out["state:" + s] = st[s]
    return out


# -------------------------------------------------------------------- workload planning (structural)
#: the contexts a layer may be planned in: (input resident in the SPM, output kept in the SPM for the next layer)
CONTEXTS = ((False, False), (False, True), (True, False), (True, True))


def _hw(arch: str, key: tuple) -> Hw:
    rows, cols, lmm_kb, spm_kb, bits = key[:5]
    return Hw(arch, int(rows), int(cols), int(round(lmm_kb * 1024)), int(round(spm_kb * 1024)), int(bits) // 8,
              int(key[13]), int(bool(key[14])))


def _fusable(conv, pool) -> bool:
    return (isinstance(conv, Conv2D) and isinstance(pool, Pool) and pool.channels == conv.out_ch
            and pool.in_h == conv.out_h and pool.in_w == conv.out_w)


@lru_cache(maxsize=64)
def _first_equal(workload: Workload) -> Workload:
    """The first workload object seen equal to ``workload`` (by value: a workload built anew for each call, e.g. a
    product's other GEMM forms, finds the entries of the first in the caches below)."""
    return workload


#: each workload object's first equal (:func:`_first_equal`), looked up by identity: the caches keyed by a workload
#: (:func:`_shapes`, :func:`_layer_macs`, :func:`_fusable_layers`, :func:`workload_plans`) take that one, by identity
#: (a workload hashes every layer's fields, several us, on each lookup by value)
_canonical = IdentityMemo(_first_equal)


@by_identity()
def _fusable_layers(workload: Workload) -> tuple[int, ...]:
    """The layers i whose next layer is a pooling that may run fused with them (:func:`_fusable`, no break between)."""
    layers = workload.layers
    return tuple(i for i in range(len(layers) - 1)
                 if _fusable(layers[i], layers[i + 1]) and layers[i].name not in workload.breaks)


@by_identity()
def _layer_macs(workload: Workload) -> tuple[int, ...]:
    """Each layer's MACs (a property computed when read: read once per workload object)."""
    return tuple(layer.macs for layer in workload.layers)


@by_identity()
def _shapes(workload: Workload) -> tuple[ConvShape | FCShape | None, ...]:
    return tuple(shape_of(layer) for layer in workload.layers)


def _conv_pattern(sh: ConvShape, pattern: str) -> str:
    """The pattern knob as the mapper takes it for a conv or pooling layer (pooling cannot run ``pairs``)."""
    return pattern if not (sh.op == "max" and pattern == "pairs") else "auto"


def _spm_tiles(mhw: Hw, hw: Hw, sh) -> Hw:
    """The mapper's view of a layer under a DRAM-traffic search: the narrower tiles that only shrink an SPM unit
    (``tile_search`` 2) are tried where the SPM cannot hold the layer's input and output whole."""
    if not mhw.tile_search or not isinstance(sh, ConvShape) or sh.op != "mac" or not hw.spm_bytes:
        return mhw
    whole = sh.groups * (sh.oc * sh.oh * sh.ow + sh.ic * sh.h * sh.w) * hw.elem_bytes
    return replace(mhw, tile_search=2) if whole > hw.spm_bytes else mhw


class _Same:
    """An object as a cache key by its identity (see :data:`_canonical`)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj


#: whether a batch whose points are every one its own structural combination (:func:`_distinct`) passes the
#: combinations to the planning as the points' columns (:class:`KeyColumns`) instead of tuples (False: tuples, as
#: before; the same plans, tests/test_emax_batched17.py)
KEY_COLUMNS = True
#: the column of :data:`STRUCT` whose values, all distinct, prove every point its own combination (the LMM size: a
#: continuous parameter, distinct in a random batch)
_DISTINCT_BY = STRUCT.index("lmm_kb")


def _distinct(col: np.ndarray) -> bool:
    """No two values of numeric column ``col`` compare equal (sorted, no two neighbours equal: -0.0 and 0.0 are
    equal, NaN equals nothing, as Python's ``==`` has it), so no two points' :data:`STRUCT` tuples are equal either
    (``dict.fromkeys`` of them keeps every one, in point order); False for other columns."""
    if not isinstance(col, np.ndarray) or col.ndim != 1 or col.dtype.kind not in "fiu":
        return False
    s = np.sort(col)
    return bool((s[1:] != s[:-1]).all())


class KeyColumns:
    """Structural combinations as the columns of their :data:`STRUCT` values (``cols[i]``: the i-th value of every
    combination, in order), for a batch whose every point is its own combination: combination j is the tuple of
    element j of every column as ``tolist`` gives it (what :meth:`_EmaxBase.evaluate_layers` builds with ``zip``
    and ``dict.fromkeys`` otherwise), built only when asked for (iteration: the caches' keys, EMAXVR's pins);
    the planning reads the columns themselves (:func:`_arrays`, :func:`_key_list`, :func:`_knob_texts`).
    ``const``: the columns of a default value (a parameter the model does not have) by position, and that value."""

    __slots__ = ("cols", "const")

    def __init__(self, cols: list[np.ndarray], const: dict[int, Any] | None = None):
        self.cols, self.const = cols, const if const is not None else {}

    def __len__(self) -> int:
        return len(self.cols[0])

    def __getitem__(self, k: slice) -> KeyColumns:
        if not isinstance(k, slice):
            raise TypeError("KeyColumns: slices only")
        return KeyColumns([c[k] for c in self.cols], self.const)

    def __iter__(self):
        return zip(*[c.tolist() for c in self.cols])


def _key_list(keys: tuple[tuple, ...] | KeyColumns, i: int) -> list:
    """The i-th :data:`STRUCT` value of every combination ``keys``, as a list."""
    if isinstance(keys, KeyColumns):
        return keys.cols[i].tolist()
    return list(map(itemgetter(i), keys))  # (~3x zip's speed)


def _key_array(keys: tuple[tuple, ...] | KeyColumns, i: int, dtype=None) -> np.ndarray:
    """``np.array(_key_list(keys, i), dtype=dtype)``: a :class:`KeyColumns` numeric column as it is (``asarray``;
    the same values as numpy converting its ``tolist``; read only, by ``astype`` and arithmetic), a column of one
    default value as ``np.full`` of it in the dtype numpy gives the value (EMAXV's ``oc_tile``)."""
    if isinstance(keys, KeyColumns):
        if i in keys.const:
            v = keys.const[i]
            return np.full(len(keys), v, dtype=np.array([v], dtype=dtype).dtype)
        if keys.cols[i].dtype.kind in "biuf":
            return np.asarray(keys.cols[i], dtype=dtype)
    return np.array(_key_list(keys, i), dtype=dtype)


def workload_plans(arch: str, workload: Workload, keys: tuple[tuple, ...] | KeyColumns) -> Plans:
    """Plans of every layer for each structural combination ``keys`` (tuples of :data:`STRUCT` values), remembered
    (:func:`_workload_plans`) by the workload (its first equal object, :data:`_canonical`) and the keys, for up to
    :data:`PLANS_CACHE_KEYS` combinations; one combination alone (a study's design point) in a cache of its own,
    :data:`ONE_STRUCTURE_PLANS_BYTES` deep."""
    if len(keys) > PLANS_CACHE_KEYS:
        return _workload_plans.__wrapped__(arch, _Same(_canonical(workload)), keys)
    keys = tuple(keys)  # (the caches' keys: tuples, also of a few combinations given as KeyColumns)
    if len(keys) == 1:
        return _one_structure_plans(arch, _Same(_canonical(workload)), keys)
    return _workload_plans(arch, _Same(_canonical(workload)), keys)


#: chunks of up to this many structural combinations are remembered (one design point again, a small batch
#: again); larger ones, a batch of random points', never recur, and each remembered one kept its plan tables
#: alive (32 of them: ~130 MB on VGG16 with 2,048 random EMAXVR points a batch)
PLANS_CACHE_KEYS = 16


@lru_cache(maxsize=32)  # a chunk of combinations evaluated again (a repeated small batch)
def _workload_plans(arch: str, same: _Same, keys: tuple[tuple, ...]) -> Plans:
    """Plans of every layer of workload ``same.obj`` for each structural combination ``keys``.

    A pooling layer right after a convolution runs fused with it (EMAXVR with an SPM and ``pool_fusion``)
    if the pooling can be mapped. A layer's output stays in the SPM for the next layer when both have
    plans for it (unbanded, partial sums in the SPM), neither needs a narrower mapping for it, and it
    saves DRAM traffic over writing the output and reading it back.
    """
    workload = same.obj
    layers, shapes, lt = workload.layers, _shapes(workload), _layer_table(workload)
    nl, nk = len(layers), len(keys)
    hws, mhws = _arrays(arch, keys)  # mhws: the mapper's view: mappings do not depend on the SPM
    pattern, order, fusion, sched = (_key_list(keys, i) for i in range(5, 9))
    columns = isinstance(hws, HwList)  # (many combinations: their arrays' fields as columns; one: as objects)
    if columns:
        vr_spm_at = (hws.numbers["spm_bytes"] > 0) & (arch == "emaxvr")
        vr_spm = vr_spm_at.tolist()
    else:
        vr_spm = [arch == "emaxvr" and h.spm_bytes > 0 for h in hws]
    fused_at = np.zeros((nl, nk), bool)  # layer i runs fused into layer i - 1
    pooled = np.zeros((nl, nk), bool)  # layer i runs the pooling of layer i + 1 fused
    # a pooling layer after a conv is fused if it can be mapped (any pattern and loop order)
    pairs = [(i, k) for k in range(nk) if vr_spm[k] and fusion[k] for i in _fusable_layers(workload)]
    pool_maps, pool_req = {}, np.zeros(0, np.int64)  # (no pooling layer to fuse: EMAXV, no SPM, fusion off)
    fused_arr = num.objects((nl, nk), None)
    if pairs:
        pool_tab = conv_table(arch, [shapes[i + 1] for i, _ in pairs],
                              Indexed(mhws, np.array([k for _, k in pairs], dtype=np.int64)) if columns else
                              [mhws[k] for _, k in pairs],
                              ["auto"] * len(pairs), ["auto"] * len(pairs))
        pool_maps, pool_req = pool_tab.cols, pool_tab.req
        got = np.unique(pool_req)
        pi, pk = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)[got].T
        pooled[pi, pk] = True
        fused_at[pi + 1, pk] = True
        fused_arr[pi + 1, pk] = lt.names[pi]
    fused: list[list[str | None]] = fused_arr.tolist()
    ctxs = [len(CONTEXTS) if vr_spm[k] else 1 for k in range(nk)]
    # (only the EMAXVR builder reads the schedule pins: an EMAXV chunk lists none)
    pins = [dict(zip(PIN_KEYS, k[9:13])) for k in keys] if arch != "emaxv" else []
    li, ki = np.nonzero(lt.has_shape[:, None] & ~fused_at)  # the (layer, combination) pairs run, layer by layer
    maps, owner, src, why = _mapping_rows(arch, shapes, lt, li, ki, hws, mhws, pattern, order)
    edges = None
    if arch == "emaxvr" and any(vr_spm) and SKIP_UNREAD_PLANS:  # each combination's first and last layer run, which the chaining (greedy)
        # never makes resident and never keeps (the dynamic programming reads every context: see _unread_rows)
        ran = lt.has_shape[:, None] & ~fused_at
        greedy = (vr_spm_at & (hws.numbers["tile_search"] == 0) if columns else
                  np.array([vr_spm[k] and not hws[k].tile_search for k in range(nk)], dtype=bool))
        edges = (ran.argmax(axis=0), nl - 1 - ran[::-1].argmax(axis=0), greedy & ran.any(axis=0))
    planned = _context_plans(arch, shapes, li, ki, maps, owner, src, hws, ctxs, pooled, [s == "per_band" for s in sched],
                             pins, _pool_passes(shapes, pooled, hws, pool_maps, pool_req, pairs), edges)
    resident, keep = np.zeros((nl, nk), bool), np.zeros((nl, nk), bool)
    if columns:
        search = hws.numbers["tile_search"] != 0
        dp = np.flatnonzero(vr_spm_at & search)
    else:
        dp = np.array([k for k in range(nk) if vr_spm[k] and hws[k].tile_search], dtype=np.int64)
    if len(dp) >= CHAIN_DP_NUMPY_FROM:
        _chain_least_dram_np(dp, layers, shapes, fused_at, pooled, planned, resident, keep)
    else:
        for k in dp.tolist():
            _chain_least_dram(k, layers, shapes, [f[k] for f in fused], pooled[:, k], planned, resident[:, k], keep[:, k])
    _chain(np.flatnonzero(vr_spm_at & ~search) if columns else
           np.array([k for k in range(nk) if vr_spm[k] and not hws[k].tile_search], dtype=np.int64), layers, shapes,
           fused_at, pooled, planned, resident, keep)

    def rejections(ii: np.ndarray, kk: np.ndarray) -> list[tuple[bool, tuple[str, ...]]] | tuple[np.ndarray, ...]:
        # layers without a plan: why (coded, mapper.coded_reasons; a few pairs, one design point's: as a list)
        pos = np.full((nl, nk), -1, dtype=np.int64)
        pos[li, ki] = np.arange(len(li))  # each pair's position among the pairs run
        has = lt.has_shape[ii]
        few = len(ii) <= REASONS_ONE_BY_ONE_UPTO
        if has.all():
            return why(pos[ii, kk]) if few else why.coded(pos[ii, kk])
        known = iter(why(pos[ii[has], kk[has]]))
        out = [next(known) if h else (False, (f"{arch} does not run {layers[i].kind} layers",))
               for i, h in zip(ii.tolist(), has.tolist())]
        return out if few else coded_reasons(out)

    return _final_plans(planned, rejections, lt, fused, fused_at, resident, keep)


#: one structural combination's plans are remembered apart, deeper, bounded by the bytes they keep alive
#: (:class:`~archmodels.memo.SizedLRU`, sizes by :func:`~archmodels.memo.nbytes_of` when stored): a study over a
#: few discrete sizes revisits its structures (``studies/emaxvr_dse_vgg16.yaml`` has 1,536; 2,000 NSGA-II trials
#: of one point each, seed 0, visit 667 of them; the former bound, 128 entries, re-planned 1,353 of the 2,000).
#: Counted when stored (measured, random points): ~0.06 MB a structure on EMAXVR VGG16, ~0.13 MB on ResNet-50 and
#: MobileNet-v2, ~0.01 MB on EMAXV VGG16-conv; the sub-tables the choice builds on first read add ~60 %. So 64 MB
#: hold ~1,000 VGG16 structures and keep ~100 MB alive (docs/profile/emax.md, "A study's structures")
ONE_STRUCTURE_PLANS_BYTES = 64 * 2**20
_one_structure_plans = SizedLRU(_workload_plans.__wrapped__, ONE_STRUCTURE_PLANS_BYTES)


def _plans_cache_clear() -> None:
    _workload_plans.cache_clear()
    _one_structure_plans.cache_clear()


def _plans_cache_info():
    """Both caches' counts added (hits, misses, currsize; maxsize: the chunk cache's entries)."""
    a, b = _workload_plans.cache_info(), _one_structure_plans.cache_info()
    return type(a)(a.hits + b.hits, a.misses + b.misses, a.maxsize, a.currsize + b.currsize)


workload_plans.cache_clear = _plans_cache_clear  # type: ignore[attr-defined]
workload_plans.cache_info = _plans_cache_info  # type: ignore[attr-defined]


def _hw_floats(hws: list[Hw], name: str) -> np.ndarray:
    """Field ``name`` of every array as floats (an :class:`HwList`: its column converted)."""
    return hws.numbers[name].astype(float) if isinstance(hws, HwList) else \
        np.array([getattr(h, name) for h in hws], dtype=float)


#: combinations from which :func:`_arrays` gives its arrays' fields as columns (:class:`HwList`; fewer, one design
#: point's: plain lists, read object by object as before, fewer numpy calls)
HW_COLUMNS_FROM = 16


def _arrays(arch: str, keys: tuple[tuple, ...]) -> tuple[HwList | list[Hw], HwList | list[Hw]]:
    """Each combination's array (:func:`_hw`) and the mapper's view of it (no SPM: mappings do not depend on it).
    From :data:`HW_COLUMNS_FROM` combinations as :class:`HwList`: the fields as columns, converted by numpy (the same
    numbers as :func:`_arrays_listed`), the objects built only when read (the planning reads the columns); fewer as
    plain lists (:func:`_arrays_listed`)."""
    if len(keys) < HW_COLUMNS_FROM:
        return _arrays_listed(arch, keys)
    n = len(keys)
    # (STRUCT values as np.array of their list gives them: KeyColumns' numeric columns as they are)
    col = {i: _key_array(keys, i, float if i in (2, 3) else None) for i in (0, 1, 2, 3, 4, 13, 14)}
    table = np.empty((len(HW_NUMBERS), n), dtype=np.int64)  # (rows contiguous: the columns)
    table[0] = col[0].astype(np.int64)  # rows, as int(): toward zero
    table[1] = col[1].astype(np.int64)  # cols
    table[2] = np.rint(col[2] * 1024)  # lmm bytes, as int(round(lmm_kb * 1024)): half to even
    table[3] = np.rint(col[3] * 1024)  # spm bytes
    np.floor_divide(col[4].astype(np.int64), 8, out=table[4])  # element bytes, int(bits) // 8
    table[5] = col[13].astype(np.int64)  # oc_cap
    table[6] = col[14].astype(bool)  # tile search, int(bool(...))
    table.flags.writeable = False  # (its rows, the columns, read-only with it)
    numbers = dict(zip(HW_NUMBERS, table))
    no_spm = np.zeros(n, dtype=np.int64)
    no_spm.flags.writeable = False
    hws = HwList(None, numbers, arch)
    # without an SPM the array is its own mapper view (an immutable value: one object, not two equal ones)
    at = np.arange(n)
    return hws, HwList(None, dict(numbers, spm_bytes=no_spm), arch, hws, np.where(table[3] == 0, at, -1))


def _arrays_listed(arch: str, keys: tuple[tuple, ...]) -> tuple[list[Hw], list[Hw]]:
    """:func:`_arrays` as plain lists of objects, built field by field (``dataclasses.replace`` inspects the fields
    on every call): one design point's few combinations."""
    hws, mhws = [], []
    for key in keys:  # (as _hw)
        rows, cols, lmm_kb, spm_kb, bits = key[:5]
        rows, cols, lmm, bits, cap, search = int(rows), int(cols), int(round(lmm_kb * 1024)), int(bits), int(key[13]), \
            int(bool(key[14]))
        spm = int(round(spm_kb * 1024))
        hw = new_hw(arch, rows, cols, lmm, spm, bits // 8, cap, search)
        hws.append(hw)
        # without an SPM the array is its own mapper view (an immutable value: one object, not two equal ones)
        mhws.append(hw if spm == 0 else new_hw(arch, rows, cols, lmm, 0, bits // 8, cap, search))
    return hws, mhws


@dataclass(frozen=True)
class _LayerTable:
    """Per layer of a workload, what planning a chunk reads of it, as arrays (one gather per chunk instead of a
    look-up per (layer, combination)): a mapper shape at all, a conv or pooling shape (the first layer of an
    equal shape, its position among them), an FC shape, a pooling (MAX) shape, a MAC conv shape and its input and output elements per group set
    (:func:`_spm_tiles`), the layer names."""

    has_shape: np.ndarray
    conv: np.ndarray
    same: np.ndarray
    conv_at: np.ndarray
    conv_shapes: list
    fc: np.ndarray
    pool: np.ndarray
    mac: np.ndarray
    whole: np.ndarray
    names: np.ndarray


@by_identity()
def _layer_table(workload: Workload) -> _LayerTable:
    """:class:`_LayerTable` of ``workload`` (by identity: its first equal object, :data:`_canonical`)."""
    shapes = _shapes(workload)
    conv = np.array([isinstance(sh, ConvShape) for sh in shapes], dtype=bool)
    conv_at = np.full(len(shapes), -1, dtype=np.int64)
    conv_at[conv] = np.arange(int(conv.sum()))
    names = np.empty(len(shapes), dtype=object)
    names[:] = [layer.name for layer in workload.layers]
    first: dict = {}
    same = np.array([first.setdefault(sh, i) for i, sh in enumerate(shapes)], dtype=np.int64)
    return _LayerTable(np.array([sh is not None for sh in shapes], dtype=bool), conv, same, conv_at,
                       [sh for sh in shapes if isinstance(sh, ConvShape)],
                       np.array([isinstance(sh, FCShape) for sh in shapes], dtype=bool),
                       np.array([isinstance(sh, ConvShape) and sh.op == "max" for sh in shapes], dtype=bool),
                       np.array([isinstance(sh, ConvShape) and sh.op == "mac" for sh in shapes], dtype=bool),
                       np.array([sh.groups * (sh.oc * sh.oh * sh.ow + sh.ic * sh.h * sh.w)
                                 if isinstance(sh, ConvShape) else 0 for sh in shapes], dtype=np.int64),
                       names)


def _first_of(key: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """For keys ``key`` (ints in 0 .. top - 1): the position of each distinct key's first occurrence, in key order,
    and the rank of each element's key among them (``np.unique``'s ``return_index`` and ``return_inverse``, by a
    table of the keys instead of a sort: a few cheap operations for one design point's handful of keys)."""
    first = np.full(top, len(key), dtype=np.int64)
    np.minimum.at(first, key, np.arange(len(key)))
    present = first < len(key)
    rank = np.cumsum(present) - 1
    return first[present], rank[key]


def _conv_pairs(li: np.ndarray, ki: np.ndarray, conv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(li[conv], ki[conv])`` for the increasing positions ``conv``: ``li`` and ``ki`` themselves when ``conv`` is
    every position (every layer a conv one: no gathers)."""
    return (li, ki) if len(conv) == len(li) else (li[conv], ki[conv])


def _knob_texts(pattern: list, order: list) -> tuple[np.ndarray, np.ndarray] | None:
    """The pattern and loop-order knobs of a chunk's combinations as fixed-width text, ``np.array(pattern)`` and
    ``np.array(order)``, when every value of both is a ``str``; else None (objects): :func:`_knob_codes`' texts
    at its positions (the same dtype, the longest value's width, and texts)."""
    codes = _knob_codes(pattern, order)
    return None if codes is None else tuple(t[at] for t, at in codes)


def _knob_codes(pattern: list, order: list) -> tuple[tuple[np.ndarray, np.ndarray], ...] | None:
    """The pattern and loop-order knobs of a chunk's combinations, each as its distinct values (fixed-width text,
    in order of first appearance) and every value's position among them, when every value of both is a ``str``
    (the numpy mapper compares them in C, :class:`~archmodels.emax.mapper.KnobAt`); else None (objects): no
    per-element conversion; a list of one value (EMAXV's loop order, a default) as that text and zeros."""
    out = []
    for values in (pattern, order):
        if not set(map(type, values)) <= {str}:
            return None
        if values and values.count(values[0]) == len(values):  # (one value: list.count compares in C)
            out.append((np.array(values[:1]), np.zeros(len(values), dtype=np.int64)))
            continue
        distinct = dict.fromkeys(values)
        at = {v: j for j, v in enumerate(distinct)}
        out.append((np.array(list(distinct)), np.fromiter(map(at.__getitem__, values), np.int64, len(values))))
    return out[0], out[1]


def _mapping_rows(arch: str, shapes, lt: _LayerTable, li: np.ndarray, ki: np.ndarray, hws: list[Hw], mhws: list[Hw],
                  pattern: list[str], order: list[str]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray,
                                                               Callable[[np.ndarray], list[tuple]]]:
    """The candidate mappings of every (layer ``li[j]``, combination ``ki[j]``) pair: columns (as
    :func:`~archmodels.emax.mapper.mapping_columns` gives them), the pair j of each mapping (in pair order) and the
    row of the columns it reads (pairs asking the mapper the same share rows), and for pairs j whether the mapper
    found a mapping and the reasons of the ones it rejected. Conv and pooling layers through the mapper over all of
    them at once (:func:`~archmodels.emax.mapper.conv_table`, the requests' shapes, arrays and knobs gathered by
    position, :func:`_spm_tiles` as arrays), once per distinct (layer shape, combination): equal layers (VGG16's
    C6-C7, C9-C10, C11-C13) share the request; FC layers through :func:`~archmodels.emax.mapper.fc_table`."""
    nk = len(hws)
    conv = np.flatnonzero(lt.conv[li])
    fc = np.flatnonzero(lt.fc[li])
    # the conv requests, once per (first layer of an equal shape, combination): the mapper's answer depends on the
    # shape's value, the array and the knobs only
    lc, kc = _conv_pairs(li, ki, conv)
    key = lt.same[lc] * nk + kc
    first, inv = _first_of(key, len(lt.same) * nk)
    rl, rk = lc[first], kc[first]
    # _spm_tiles: under a DRAM-traffic search, the narrower tiles (tile_search 2) where the SPM cannot hold a MAC
    # layer's input and output whole
    spm = hw_field(hws, "spm_bytes")
    m_search = hw_field(mhws, "tile_search")
    wide = ((m_search != 0) & (spm > 0))[rk] & lt.mac[rl]
    wide &= lt.whole[rl] * hw_field(hws, "elem_bytes")[rk] > spm[rk]
    views = mhws
    if wide.any():
        if isinstance(mhws, HwList):  # (the narrower views' fields as columns too; objects built when read)
            wants = np.zeros(nk, bool)
            wants[rk[wide]] = True
            cols = {f: np.concatenate([v, np.where(wants, 2, v) if f == "tile_search" else v])
                    for f, v in mhws.numbers.items()}
            for v in cols.values():
                v.flags.writeable = False
            at = np.arange(nk)  # (view nk + k: the array itself where it needs no narrower tiles)
            views = HwList(None, cols, mhws.arch, mhws, np.concatenate([at, np.where(wants, -1, at)]))
        else:
            need = set(rk[wide].tolist())
            views = list(mhws) + [replace(mhws[k], tile_search=2) if k in need else mhws[k] for k in range(nk)]
    # the knobs per request: fixed-width text gathered from the combinations' (compared in C by the numpy mapper;
    # objects for the scalar one, which reads them one by one)
    codes = _knob_codes(pattern, order) if len(rk) >= _mapper.TABLE_NUMPY_FROM else None  # (compared in C)
    if codes is not None:  # (each request's combination's text, by its position among the chunk's few texts)
        pats, ords = (KnobAt(texts, at[rk]) for texts, at in codes)
        pats = pats.replaced(lt.pool[rl] & (pats == "pairs"), "auto")  # _conv_pattern: pooling cannot run pairs
    else:
        pats, ords = np.array(pattern, dtype=object)[rk], np.array(order, dtype=object)[rk]
        pats[lt.pool[rl] & (pats == "pairs")] = "auto"
    tab = conv_table(arch, Indexed(lt.conv_shapes, lt.conv_at[rl]), Indexed(views, rk + nk * wide), pats, ords)
    # each conv pair's rows: its request's (the rows of a request are contiguous, requests in order)
    n_u = np.bincount(tab.req, minlength=len(first))
    n_r = n_u[inv]
    if _one_each(n_u):  # at most one mapping per request (EMAXV): the pairs with one, their request's row
        has = n_r.astype(bool)
        src, owner = (np.cumsum(n_u) - n_u)[inv][has], conv[has]
    else:
        ends = np.cumsum(n_r)
        src = np.repeat((np.cumsum(n_u) - n_u)[inv] - (ends - n_r), n_r) + np.arange(int(ends[-1]) if len(ends) else 0)
        owner = np.repeat(conv, n_r)
    cols = tab.cols

    def why_listed(js: np.ndarray, coded: bool = False) -> list[tuple[bool, tuple[str, ...]]] | tuple:
        js = np.asarray(js, dtype=np.int64)
        conv_pos = np.full(len(li), -1, dtype=np.int64)
        conv_pos[conv] = inv
        at = conv_pos[js]
        if (at >= 0).all():
            return tab.rejections_coded(at) if coded else tab.rejections(at)
        if coded:  # the conv requests' reasons as arrays, the FC ones' listed (few), merged in pair order
            is_conv = at >= 0
            fcs = [fc_candidates(shapes[li[j]], mhws[ki[j]]) for j in js[~is_conv].tolist()]
            return _mapper.merged_reasons(is_conv, tab.rejections_coded(at[is_conv]),
                                  coded_reasons([(bool(maps), tuple(x.reason for x in rej)) for maps, rej in fcs]))
        convs = iter(tab.rejections(at[at >= 0]))
        out = []
        for j, r in zip(js.tolist(), at.tolist()):
            if r >= 0:
                out.append(next(convs))
            else:
                maps, rej = fc_candidates(shapes[li[j]], mhws[ki[j]])
                out.append((bool(maps), tuple(x.reason for x in rej)))
        return coded_reasons(out) if coded else out

    why = _Why(lambda js: why_listed(js, True), why_listed)
    if not len(fc):
        return cols, owner, src, why
    fc_cols, fc_req = fc_table(Indexed(shapes, li[fc]), Indexed(mhws, ki[fc]))
    both = np.concatenate([owner, fc[fc_req]])
    rank = np.argsort(both, kind="stable")
    src = np.concatenate([src, len(tab.req) + np.arange(len(fc_req))])[rank]
    return {k: np.concatenate([v, fc_cols[k]]) for k, v in cols.items()}, both[rank], src, why


class _Why:
    """For pairs ``js`` (positions among the pairs :func:`_mapping_rows` was given): whether the mapper found a
    mapping and the reasons of the ones it rejected, as a list of (flag, texts) (``why(js)``) or as arrays
    (``why.coded(js)``, :func:`~archmodels.emax.mapper.coded_reasons`: no tuple per pair)."""

    __slots__ = ("coded", "_listed")

    def __init__(self, coded: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]],
                 listed: Callable[[np.ndarray], list[tuple[bool, tuple[str, ...]]]]):
        self.coded, self._listed = coded, listed

    def __call__(self, js: np.ndarray) -> list[tuple[bool, tuple[str, ...]]]:
        return self._listed(js)


@dataclass(frozen=True)
class _Planned:
    """Every layer's plans in every context of every combination: rows ``start[s]`` on (``count[s]``) of
    ``table`` for segment s = (layer x combinations + combination) x len(:data:`CONTEXTS`) + context, and
    per segment what the chaining decision looks at, over all its plans and over the chainable ones
    (unbanded, partial sums in the SPM)."""

    table: PlanTable | Concat
    start: np.ndarray
    count: np.ndarray
    chainable: np.ndarray  # per plan
    segment: np.ndarray  # per plan its segment (plans of a segment contiguous)
    n_seg: int
    runs: bool  # (segments contiguous and many plans: the statistics by reduceat, else ufunc.at)
    n_comb: int

    @cached_property
    def _stats(self) -> tuple[np.ndarray, ...]:
        """Per segment, over all its plans and over the chainable ones: the plan count, the largest MACs and the
        least DRAM bytes. Computed when the chaining first reads them (an EMAXV chunk, with no SPM, never does)."""
        column = self.table.column if isinstance(self.table, Concat) else self.table.plan.__getitem__
        seg, nseg = self.segment, self.n_seg
        stats = []
        plan_macs, plan_dram = column("macs"), column("dram_exact")
        for sel in (np.ones(len(seg), bool), self.chainable):
            s, m, d = seg[sel], plan_macs[sel], plan_dram[sel]
            n_sel = np.bincount(s, minlength=nseg + 1)[:nseg]
            macs = np.full(nseg + 1, -np.inf)
            dram = np.full(nseg + 1, np.inf)
            if self.runs and len(s):  # each segment's largest MACs and least DRAM bytes over its run of plans
                at = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
                macs[s[at]] = np.maximum(macs[s[at]], np.maximum.reduceat(m, at))
                dram[s[at]] = np.minimum(dram[s[at]], np.minimum.reduceat(d, at))
            else:
                np.maximum.at(macs, s, m)
                np.minimum.at(dram, s, d)
            stats += [n_sel, macs[:nseg], dram[:nseg]]
        return tuple(stats)

    n_all = property(lambda self: self._stats[0])
    macs_all = property(lambda self: self._stats[1])
    dram_all = property(lambda self: self._stats[2])
    n_chain = property(lambda self: self._stats[3])
    macs_chain = property(lambda self: self._stats[4])
    dram_chain = property(lambda self: self._stats[5])

    @cached_property
    def lists(self) -> tuple[list, ...]:
        """The statistics as lists, in field order (read value by value)."""
        return tuple(a.tolist() for a in (self.n_all, self.macs_all, self.dram_all, self.n_chain, self.macs_chain,
                                          self.dram_chain))

    def seg(self, i: int, k: int) -> int:
        """The first segment of layer i and combination k."""
        return (i * self.n_comb + k) * len(CONTEXTS)


def _context_plans(arch: str, shapes, run_l: np.ndarray, run_k: np.ndarray, mc: dict[str, np.ndarray],
                   owner: np.ndarray, src: np.ndarray, hws: list[Hw], ctxs: list[int], pooled: np.ndarray,
                   per_band: list[bool], pins: list[dict[str, Any]], passes: _PoolPasses,
                   edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> _Planned:
    """The plans of every (layer ``run_l[j]``, combination ``run_k[j]``) pair run (not fused), for each combination
    k in its first ``ctxs[k]`` contexts: its candidate mappings are rows ``src[m]`` of ``mc`` for the mappings m
    whose ``owner`` is its pair j (:func:`_mapping_rows`); ``passes``: the fused pooling passes
    (:func:`_pool_passes`); ``edges``: per combination its first and last layer run and whether the greedy chaining
    decides it (:func:`_unread_rows`: those contexts are not planned)."""
    nl, nk = len(shapes), len(hws)
    n_maps = np.bincount(owner, minlength=len(run_l)).astype(np.int64)
    first = np.cumsum(n_maps) - n_maps
    seg0 = (run_l * nk + run_k) * len(CONTEXTS)
    # rows: each (layer, combination)'s mappings once per context, context by context
    per = n_maps * np.array(ctxs, dtype=np.int64)[run_k]
    if _one_each(per):  # one mapping in one context per pair at most (EMAXV): position 0 in each
        owner_row = np.flatnonzero(per)
        row_map, row_seg = first[owner_row], seg0[owner_row]
    else:
        owner_row = np.repeat(np.arange(len(per)), per)
        at = np.arange(len(owner_row)) - np.repeat(np.cumsum(per) - per, per)  # position within its (layer, combination)
        m_of = np.maximum(n_maps, 1)[owner_row]
        row_map = first[owner_row] + at % m_of
        row_seg = seg0[owner_row] + at // m_of
    if edges is not None:
        read = ~_unread_rows(row_seg, nk, *edges)
        if not read.all():
            row_map, row_seg = row_map[read], row_seg[read]
    # the rows of conv and pooling layers first, then those of FC layers (each in the order above): each builder's
    # rows are a slice (the builders' tables are concatenated in that order)
    is_fc = np.array([isinstance(sh, FCShape) for sh in shapes], dtype=bool)[row_seg // len(CONTEXTS) // nk]
    n_conv = len(is_fc) - int(is_fc.sum())
    if 0 < n_conv < len(is_fc):
        by_builder = np.argsort(is_fc, kind="stable")
        row_map, row_seg = row_map[by_builder], row_seg[by_builder]
    row_mapping = row_map  # each row's mapping (position in owner)
    row_map = _rows_of(src, row_map)  # (one gather of the mapper's columns per row)
    ctx = row_seg % len(CONTEXTS)
    lk = row_seg // len(CONTEXTS)  # layer * nk + combination: the flat position in [layers, combinations] arrays
    ki = lk % nk
    li = lk // nk
    # every row's columns as (table, row of it) sources, gathered when a builder reads them (traffic.Rows): the
    # mapper's columns, the combination's numbers and pins, the context's flags, the (layer, combination)'s pooling
    # pass; the first source holding a column gives it
    by_comb = dict(cols=_hw_floats(hws, "cols"), spm=_hw_floats(hws, "spm_bytes"), elem=_hw_floats(hws, "elem_bytes"),
                   per_band=np.array(per_band, dtype=bool))
    pin_cols = {}
    if arch != "emaxv":  # (only the EMAXVR builder reads the schedule pins, the band size and the search flag)
        by_comb.update(band_size=np.array([int(p["band_size"]) for p in pins], dtype=np.int64),
                       dram_search=hw_field(hws, "tile_search") != 0)
        pin_cols = {PIN_PREFIX + name: np.array([str(p[name]) for p in pins], dtype=str)  # (fixed-width text:
                    for name in PINS}  # compared in C)
    by_ctx = dict(resident=np.array([c[0] for c in CONTEXTS]), keep=np.array([c[1] for c in CONTEXTS]))
    if arch != "emaxv" and SKIP_UNREAD_PLANS:  # the contexts of which the chaining reads or keeps the chainable plans only: input resident
        # and output kept (2), input resident under a DRAM-traffic search (1; its dynamic programming): the EMAXVR
        # builder plans them without the others (traffic.emaxvr_plans' ``chained_only``)
        by_ctx["chained_only"] = np.array([2 * (r and k) + (r and not k) for r, k in CONTEXTS], dtype=np.int8)
    by_lk = dict(has_pool=pooled.reshape(-1))
    pass_cols = {name: v.reshape(-1) for name, v in passes.cols.items()}
    sources = [(pass_cols, lk), (pin_cols, ki), (by_comb, ki), (by_ctx, ctx), (by_lk, lk), (mc, row_map)]
    if arch == "emaxv" and SKIP_POOL_SOURCES and not passes.n and not pooled.any():  # (see SKIP_POOL_SOURCES)
        sources = [src_ for src_ in sources if src_[0] is not pass_cols and src_[0] is not by_lk]
    # the same sources per mapping (the context's flags absent), by what indexes them: the mapping's (layer,
    # combination), its combination, its mapper row (:func:`_name_mappings`)
    per_mapping = [(pass_cols, "lk"), (pin_cols, "ki"), (by_comb, "ki"), (by_lk, "lk"), (mc, "row")]
    lazy = len(row_seg) >= ROWS_LAZY_FROM
    # (few rows, one design point's: every column gathered at once, fewer Python steps than Rows' look-ups)
    r = {} if lazy else {k: v[idx] for d, idx in reversed(sources) for k, v in d.items()}
    nseg = nl * nk * len(CONTEXTS)
    tables = []
    for (lo, hi), build in (((0, n_conv), emaxv_plans if arch == "emaxv" else emaxvr_plans),
                            ((n_conv, len(row_seg)), fc_plans)):
        use = np.flatnonzero(np.bincount(li[lo:hi], minlength=nl))  # the layers present, in order
        extra = passes.n if build is emaxvr_plans else 0  # the fused pooling passes ride along (one builder call)
        if not len(use) and not extra:
            continue
        shape = np.searchsorted(use, li[lo:hi])
        at = np.arange(lo, hi)
        if extra:  # the passes' rows after the layers' (their shapes after the layers')
            shape = np.concatenate([shape, passes.rows["shape"] + len(use)])
            at = np.append(at, np.full(extra, len(row_seg)))  # the passes' plans: segment nseg (no segment)
        if lazy:
            sub = Rows({"shape": shape}, [(d, idx[lo:hi]) for d, idx in sources], passes.rows if extra else None, extra)
            if build is emaxvr_plans:
                _name_mappings(sub, row_mapping[lo:hi], owner, src, run_l, run_k, nk, use, per_mapping, passes.rows,
                               extra)
        else:
            sub = {name: v[lo:hi] for name, v in r.items()}
            if extra:
                sub = {name: np.concatenate([v, passes.rows[name]]) for name, v in sub.items()}
            sub["shape"] = shape
        # (EMAXVR: the rows of the resident contexts whose non-chainable plans nothing reads are planned without them)
        tab = build([shapes[i] for i in use.tolist()] + (passes.shapes if extra else []), sub)
        if extra:
            _fill_pool_passes(tab, len(at) - extra, passes, li[lo:hi], ki[lo:hi])
        tables.append((tab, at[tab.src]))
    # several builders' tables: concatenated when the final plans are taken (Concat; one design point's few plans:
    # at once, fewer calls), the statistics' columns now
    tab = (tables[0][0] if len(tables) == 1 else Concat([t for t, _ in tables]) if lazy else
           concat([t for t, _ in tables])) if tables else _empty_table()
    column = tab.column if isinstance(tab, Concat) else tab.plan.__getitem__
    row_seg = np.append(row_seg, nseg)
    seg = row_seg[np.concatenate([rows for _, rows in tables])] if tables else np.zeros(0, np.int64)
    full = np.bincount(seg, minlength=nseg + 1)
    count = full[:nseg]
    if len(seg) and not (seg[1:] < seg[:-1]).any():  # segments in order (as the builders list them): each one's
        start = np.cumsum(count)  # first plan follows the plans before, no sort; 0 where empty, as np.where(full > 0,
        start -= count  # np.cumsum(full) - full, 0) gave it: a product by the mask, in place (np.where with a scalar
        start *= count > 0  # over the ~150 k segments of an EMAXV chunk, 3 of 4 empty, cost ~6x as much)
        n_first = int(np.count_nonzero(full))
    else:
        start = np.zeros(nseg + 1, dtype=np.int64)
        first, at = np.unique(seg, return_index=True)
        start[first] = at  # a segment's plans are contiguous
        start = start[:nseg]
        n_first = len(first)
    chainable = (column("bands") == 1) & (column("psum_home") != PSUM_HOMES.index("dram"))
    # segments contiguous (and a table larger than one design point's: there ufunc.at costs less)
    runs = len(seg) >= REDUCEAT_FROM and int(np.count_nonzero(seg[1:] != seg[:-1])) + 1 == n_first
    return _Planned(tab, start, count, chainable, seg, nseg, runs, n_comb=nk)  # (the chaining's statistics: lazy)


#: whether :func:`_context_plans` gives the EMAXV builders (which fuse no pooling) no pooling-pass columns and no
#: ``has_pool``: they take them absent, as 0.0 and False (``traffic._plan_cols``' defaults; the same plan columns),
#: instead of gathering zeros for every row (False: gathered, as before; tests/test_emax_batched20.py)
SKIP_POOL_SOURCES = True

#: whether :func:`_context_plans` leaves out the EMAXVR plans no step reads (:func:`_unread_rows`, the builder's
#: ``chained_only``): ~11 % of a random VGG16 batch's plans, priced for nothing before (False: every plan, as before;
#: the same values either way, tests/test_emax_batched_paths11.py)
SKIP_UNREAD_PLANS = True


def _unread_rows(row_seg: np.ndarray, nk: int, first: np.ndarray, last: np.ndarray, greedy: np.ndarray) -> np.ndarray:
    """Which rows (segment ``row_seg``: (layer x ``nk`` + combination) x len(:data:`CONTEXTS`) + context) no step reads
    a plan of: under the greedy chaining (``greedy[k]``; :func:`_chain`, :func:`_chain_one`), the first layer run
    (``first[k]``) of a combination is never made resident (its input comes from no layer run before it) and its
    last (``last[k]``) never keeps its output (no layer run after it), so the chaining reads no statistic of those
    contexts and the final plans take none of them. (The dynamic programming reads every context's plan count.)"""
    ctx = row_seg % len(CONTEXTS)
    lk = row_seg // len(CONTEXTS)
    k, layer = lk % nk, lk // nk
    res, keep = _rows_of(np.array([c[0] for c in CONTEXTS]), ctx), _rows_of(np.array([c[1] for c in CONTEXTS]), ctx)
    return greedy[k] & ((res & (layer == first[k])) | (keep & (layer == last[k])))


def _name_mappings(sub: Rows, mapping: np.ndarray, owner: np.ndarray, src: np.ndarray, run_l: np.ndarray,
                   run_k: np.ndarray, nk: int, use: np.ndarray, sources: list[tuple[dict, str]], tail: dict,
                   n_tail: int) -> None:
    """Give a builder's rows ``sub`` (of mappings ``mapping``, positions in ``owner``; then ``n_tail`` rows of
    ``tail``, each its own mapping) their mappings as a table without the context (``sub.maps``: ``sources``, each
    indexed by the mapping's ``"lk"`` (layer x combinations + combination), ``"ki"`` (combination) or ``"row"``
    (mapper row)) and each row's position in it (``sub.at_map``): :func:`emaxvr_plans` computes what does not depend
    on the context once per mapping (a mapping is planned in up to 4 contexts)."""
    seen = np.zeros(len(owner), bool)  # (np.unique's sorted values and inverse, without its sort)
    seen[mapping] = True
    has = np.flatnonzero(seen)
    at = (np.cumsum(seen) - 1)[mapping]
    pair = owner[has]
    li, ki = run_l[pair], run_k[pair]
    by = {"lk": li * nk + ki, "ki": ki, "row": src[has]}
    shape = np.searchsorted(use, li)
    maps = Rows({"shape": np.concatenate([shape, tail["shape"] + len(use)]) if n_tail else shape},
                [(d, by[kind]) for d, kind in sources], tail if n_tail else None, n_tail)
    sub.maps = maps
    sub.at_map = np.concatenate([at, len(has) + np.arange(n_tail)]) if n_tail else at


#: planned plans from which :func:`_context_plans` takes each segment's largest MACs and least DRAM bytes by
#: ``reduceat`` over its run of plans instead of ``ufunc.at``
REDUCEAT_FROM = 4096


@dataclass(frozen=True)
class _PoolPasses:
    """The fused pooling passes of a chunk: layer i (of layer i + 1's pooling) runs one per combination k with
    ``pooled[i, k]``: the widest pooling mapping on the same array, run as one start without an SPM. ``cols``: per
    pass column ``[layers, combinations]`` (0 where none; ``pool_iterations`` and ``pool_loop_ends`` come from the
    pass's schedule, filled by :func:`_fill_pool_passes`); ``rows``: the passes as :func:`emaxvr_plans` rows, planned
    in the same builder call as the layers' rows (numpy's cost per call dominates one design point)."""

    cols: dict[str, np.ndarray]
    rows: dict[str, np.ndarray]
    shapes: list[ConvShape]  # each pooling shape once (rows name them by ``rows["shape"]``)
    li: np.ndarray
    ki: np.ndarray

    @property
    def n(self) -> int:
        return len(self.li)


def _pool_passes(shapes, pooled: np.ndarray, hws: list[Hw], maps: dict[str, np.ndarray], req: np.ndarray,
                 pairs: list[tuple[int, int]]) -> _PoolPasses:
    """The fused pooling passes (:class:`_PoolPasses`) of ``pooled``. ``maps``: the pooling mappings (columns) of
    request ``req`` = position in ``pairs`` of its (layer i, combination)."""
    names = ("pool_oh", "pool_ow", "pool_ops", "pool_iterations", "pool_loop_ends", "pool_rows_used", "pool_regs")
    li, ki = np.nonzero(pooled)
    if not len(li):  # no pass: every column 0, one array for all (read only: the passes' columns are filled, by
        zero = np.zeros(pooled.shape)  # _fill_pool_passes, only where there are passes)
        zero.flags.writeable = False
        return _PoolPasses(dict.fromkeys(names, zero), {}, [], li, ki)
    out = {name: np.zeros(pooled.shape) for name in names}
    # the rows name each pooling shape once (a pass per (layer, combination) would list ~1,000 equal shapes a chunk,
    # which the builder's per-(shape, x) look-ups then treat as distinct): the layers in order (np.nonzero lists
    # them layer by layer), each pass its layer's
    slot = np.unique(li)
    shape = np.searchsorted(slot, li)
    pools = [shapes[i + 1] for i in slot.tolist()]
    # each request's first mapping of the most MAC units (a request's rows are contiguous, requests in order)
    macs = maps["macs"]
    has, lo = np.unique(req, return_index=True)
    top = np.repeat(np.maximum.reduceat(macs, lo), np.diff(np.append(lo, len(req))))
    at_top = np.flatnonzero(macs == top)
    first = np.full(len(pairs), -1, dtype=np.int64)
    first[has] = at_top[np.searchsorted(req[at_top], has)]
    where = np.full(pooled.shape, -1, dtype=np.int64)  # each (layer, combination)'s position in pairs (distinct)
    where[tuple(np.array(pairs, dtype=np.int64).reshape(len(pairs), 2).T)] = np.arange(len(pairs))
    best = first[where[li, ki]]
    r = {k: v[best] for k, v in maps.items()}
    n = len(best)
    r.update(shape=shape, cols=_hw_floats(hws, "cols")[ki], spm=np.zeros(n),
             elem=_hw_floats(hws, "elem_bytes")[ki], resident=np.zeros(n, bool),
             keep=np.zeros(n, bool), has_pool=np.zeros(n, bool), per_band=np.zeros(n, bool), pool_oh=np.zeros(n),
             pool_ow=np.zeros(n))
    # the columns a layer's row has besides, as the builder takes them absent: no pins, no band size, no pass
    r.update(band_size=np.zeros(n, np.int64), dram_search=np.zeros(n, bool), chained_only=np.zeros(n, np.int8),
             **{PIN_PREFIX + name: np.full(n, "auto") for name in PINS},
             **{name: np.zeros(n) for name in names if name not in r})
    out["pool_oh"][li, ki] = np.array([p.oh for p in pools])[shape]
    out["pool_ow"][li, ki] = np.array([p.ow for p in pools])[shape]
    out["pool_ops"][li, ki] = np.array([p.groups * p.oh * p.ow * p.kh * p.kw for p in pools])[shape]
    out["pool_rows_used"][li, ki] = r["rows_used"]
    out["pool_regs"][li, ki] = r["regs"]
    return _PoolPasses(out, r, pools, li, ki)


def _fill_pool_passes(tab: PlanTable, n_rows: int, passes: _PoolPasses, li: np.ndarray, ki: np.ndarray) -> None:
    """After one :func:`emaxvr_plans` call over ``n_rows`` layer rows (layer ``li``, combination ``ki`` each) and
    then the passes' rows: the pass columns ``pool_iterations`` and ``pool_loop_ends`` (each pass's first schedule)
    into ``passes.cols`` and into the layer rows' plans of ``tab`` (the builder only carries them)."""
    n = passes.n
    first = np.minimum(np.searchsorted(tab.src, n_rows + np.arange(n)), len(tab) - 1)  # each pass's first schedule
    if not len(tab) or (tab.src[first] != n_rows + np.arange(n)).any():
        raise IndexError("list index out of range")  # a pooling mapping without a schedule
    own = tab.src < n_rows
    # each layer plan's (layer, combination) as a flat position: one gather of the plans' entries (not the [li, ki]
    # entries of every row, then the plans')
    at = (li * passes.cols["pool_iterations"].shape[1] + ki)[tab.src[own]]
    for name, col in (("pool_iterations", "iterations"), ("pool_loop_ends", "loop_ends")):
        passes.cols[name][passes.li, passes.ki] = tab.plan[col][first]
        v = tab.plan[name]
        v[own] = passes.cols[name].reshape(-1)[at]


def _chain_least_dram(k: int, layers, shapes, fused: list, pooled: np.ndarray, planned: _Planned,
                      resident: np.ndarray, keep: np.ndarray) -> None:
    """:func:`_chain` for a DRAM-traffic search (``criterion=dram``): which outputs stay in the SPM is decided
    for the whole layer chain at once, by dynamic programming over (layer, input in the SPM or not), to minimise
    the sum of the layers' least exact DRAM bytes, instead of pair by pair from the first layer (a greedy choice
    a larger memory can turn against the rest of the chain). Ties keep the output in DRAM."""
    n_all, _, dram_all, n_chain, _, dram_chain = planned.lists
    run = [i for i in range(len(layers)) if fused[i] is None and shapes[i] is not None]
    if not run:
        return
    linked = [b == a + 1 + (1 if pooled[a] else 0)
              and _out_elems(layers[a], shapes[a + 1] if pooled[a] else None) == layers[b].input_elems
              for a, b in zip(run, run[1:])] + [False]

    inf = np.inf
    # best[r]: least bytes of the layers so far with the next layer's input in the SPM (r = 1) or not (r = 0)
    best, back = (0.0, inf), []
    for j, i in enumerate(run):
        s = planned.seg(i, k)  # contexts (resident, keep) at s + 2 * resident + keep
        c = [dram_all[s + x] if n_all[s + x] else inf for x in (0, 1)] + \
            [dram_chain[s + x] if n_chain[s + x] else inf for x in (2, 3)]
        if c == [inf] * 4:
            c[0] = 0.0  # no plan in any context: the layer is infeasible, the chain goes on around it
        nxt, arg = [inf, inf], [0, 0]
        for res in (0, 1):
            for kept in ((0, 1) if linked[j] else (0,)):
                v = best[res] + c[2 * res + kept]
                if v < nxt[kept]:
                    nxt[kept], arg[kept] = v, res
        back.append(arg)
        best = tuple(nxt)
    r = 0  # the last layer keeps nothing
    for j in range(len(run) - 1, -1, -1):
        keep[run[j]] = bool(r)
        r = back[j][r]
        resident[run[j]] = bool(r)


#: DRAM-traffic searches from which :func:`_chain_least_dram_np` decides as numpy (below: one by one)
CHAIN_DP_NUMPY_FROM = 8


def _chain_least_dram_np(ks: np.ndarray, layers, shapes, fused: np.ndarray, pooled: np.ndarray, planned: _Planned,
                         resident: np.ndarray, keep: np.ndarray) -> None:
    """:func:`_chain_least_dram` of every combination of ``ks`` at once (numpy over the combinations, layer by
    layer; ``fused``, ``pooled``, ``resident``, ``keep``: [layer, combination]): the same sums, comparisons and
    ties, so the same decisions."""
    p, nl, n = planned, len(layers), len(ks)
    has = np.array([sh is not None for sh in shapes], dtype=bool)
    run = ~fused[:, ks] & has[:, None]  # [layer, k of ks]: layer i is run by combination k
    # the next layer run after a, and whether a's output (after its fused pooling) is that layer's input
    nxt = np.full((nl + 1, n), -1, dtype=np.int64)
    for a in range(nl - 1, -1, -1):
        nxt[a] = np.where(run[a], a, nxt[a + 1])
    nxt = nxt[1:]  # nxt[a]: the first layer run after a (-1: none)
    ins = np.array([layer.input_elems for layer in layers], dtype=np.int64)
    plain = np.array([_out_elems(layer, None) for layer in layers], dtype=np.int64)
    pool = np.array([_out_elems(layers[a], shapes[a + 1]) if a + 1 < nl and isinstance(shapes[a + 1], ConvShape)
                     else -1 for a in range(nl)], dtype=np.int64)
    pk = pooled[:, ks]
    out = np.where(pk, pool[:, None], plain[:, None])
    linked = run & (nxt >= 0) & (nxt == np.arange(nl)[:, None] + 1 + pk) & (out == ins[np.maximum(nxt, 0)])
    inf = np.inf
    # each layer's least DRAM bytes per context (resident, keep) at s + 2 * resident + keep: [context, layer, k]
    s = (np.arange(nl)[:, None] * p.n_comb + ks[None, :]) * len(CONTEXTS)
    c_all = np.stack([np.where(p.n_all[s + x] > 0, p.dram_all[s + x], inf) for x in (0, 1)]
                     + [np.where(p.n_chain[s + x] > 0, p.dram_chain[s + x], inf) for x in (2, 3)])
    c_all[0] = np.where((c_all == inf).all(axis=0), 0.0, c_all[0])  # no plan in any context: the chain goes on
    best0, best1 = np.zeros(n), np.full(n, inf)
    back0, back1 = np.zeros((nl, n), dtype=np.int64), np.zeros((nl, n), dtype=np.int64)
    for a in range(nl):
        on = run[a]
        if not on.any():
            continue
        c = c_all[:, a]
        nexts, args = [], []
        for kept in (0, 1):
            v0, v1 = best0 + c[kept], best1 + c[2 + kept]
            m = np.where(v0 < inf, v0, inf)
            take1 = v1 < m
            nexts.append(np.where(take1, v1, m))
            args.append(take1.astype(np.int64))
        nexts[1] = np.where(linked[a], nexts[1], inf)
        args[1] = np.where(linked[a], args[1], 0)
        back0[a], back1[a] = args
        best0, best1 = np.where(on, nexts[0], best0), np.where(on, nexts[1], best1)
    r = np.zeros(n, dtype=np.int64)  # the last layer keeps nothing
    for a in range(nl - 1, -1, -1):
        on = run[a]
        if not on.any():
            continue
        keep[a, ks[on]] = r[on].astype(bool)
        r = np.where(on, np.where(r == 1, back1[a], back0[a]), r)
        resident[a, ks[on]] = r[on].astype(bool)


def _chain(ks: np.ndarray, layers, shapes, fused: np.ndarray | list[list[str | None]], pooled: np.ndarray,
           planned: _Planned, resident: np.ndarray, keep: np.ndarray) -> None:
    """Decide which layers of combinations ``ks`` leave their output in the SPM for the next (see
    :func:`workload_plans`): sets ``keep[a, k]`` and ``resident[b, k]`` of the next layer b run, pair by pair from
    the first layer (numpy over the combinations; below :data:`CHAIN_NUMPY_FROM`, one by one: :func:`_chain_one`).
    ``fused``: [layer, combination] True where the layer runs fused into the one before (or, as lists, the name
    of that layer, None where not fused)."""
    p, nl = planned, len(layers)
    if not isinstance(fused, np.ndarray):
        fused = np.array([[f is not None for f in row] for row in fused], dtype=bool).reshape(nl, -1)
    if len(ks) < CHAIN_NUMPY_FROM:
        for k in ks.tolist():
            _chain_one(k, layers, shapes, [None if not f else True for f in fused[:, k].tolist()], pooled[:, k],
                       planned, resident[:, k], keep[:, k])
        return
    if nl < 2:
        return
    run = ~fused[:, ks]
    ins = np.array([layer.input_elems for layer in layers], dtype=np.int64)
    has_shape = np.array([sh is not None for sh in shapes], dtype=bool)
    # every pair (a, b = the next layer run) at once, [a, k], for layer a's input in the SPM or not (r = 1, 0):
    # whether keeping a's output for b is allowed and saves DRAM traffic; then layer by layer, as a's input was
    # decided (one gather per pair and layer instead of ~30 operations per layer)
    a_of = np.arange(nl - 1)[:, None]
    b = np.where(run[1:], a_of + 1, a_of + 2)  # (a pooling layer fused into a is skipped; the next is never fused)
    plain = np.array([_out_elems(layer, None) for layer in layers[:-1]], dtype=np.int64)
    pool = np.array([_out_elems(layers[a], shapes[a + 1]) if isinstance(shapes[a + 1], ConvShape) else -1
                     for a in range(nl - 1)], dtype=np.int64)
    out = np.where(pooled[:-1][:, ks], pool[:, None], plain[:, None])
    on = run[:-1] & (b < nl) & has_shape[:-1, None]
    b = np.minimum(b, nl - 1)
    on &= has_shape[b] & (out == ins[b])
    sa, sb = (a_of * p.n_comb + ks) * len(CONTEXTS), (b * p.n_comb + ks) * len(CONTEXTS)
    cb, fb = sb + 2, sb  # contexts (resident, keep) at s + 2 * resident + keep
    b_ok = p.n_chain[cb] > 0
    b_narrower = p.macs_chain[cb] < np.where(p.n_all[fb] > 0, p.macs_all[fb], 0)
    b_separate = np.where(p.n_all[fb] > 0, p.dram_all[fb], p.dram_chain[cb])
    oks, errs = [], []
    for r, (n_k, macs_k, dram_k) in enumerate(((p.n_all, p.macs_all, p.dram_all),
                                                (p.n_chain, p.macs_chain, p.dram_chain))):
        ka, fa = sa + 2 * r + 1, sa + 2 * r
        ok = (n_k[ka] > 0) & b_ok
        # ... and only if neither layer must fall back to a narrower mapping for it
        ok &= ~((macs_k[ka] < np.where(p.n_all[fa] > 0, p.macs_all[fa], 0)) | b_narrower)
        errs.append(ok & (p.n_all[fa] == 0))  # no plan of layer a without keeping its output
        # chain only if it saves DRAM traffic over producing to DRAM and reading back
        oks.append(ok & (dram_k[ka] + p.dram_chain[cb] < p.dram_all[fa] + b_separate))
    for a in np.flatnonzero(on.any(axis=1)).tolist():
        res_a = resident[a, ks]
        on_a = on[a]
        if (on_a & np.where(res_a, errs[1][a], errs[0][a])).any():
            raise ValueError("min() arg is an empty sequence")
        dec = on_a & np.where(res_a, oks[1][a], oks[0][a])
        keep[a, ks[dec]] = True
        resident[b[a, dec], ks[dec]] = True


#: builder rows from which :func:`_context_plans` hands the builders their columns as :class:`traffic.Rows` (each
#: gathered when first read, rows of it taken in one gather); below (one design point's ~40-180 rows), every column
#: at once: fewer Python steps
ROWS_LAZY_FROM = 2048

#: combinations from which :func:`_chain` decides as numpy (below: one by one)
CHAIN_NUMPY_FROM = 8


def _chain_one(k: int, layers, shapes, fused: list, pooled: np.ndarray, planned: _Planned, resident: np.ndarray,
               keep: np.ndarray) -> None:
    """:func:`_chain` for combination ``k`` alone (``fused``, ``pooled``, ``resident``, ``keep``: its column), in
    Python: cheaper than numpy for a few combinations (one design point)."""
    n_all, macs_all, dram_all, n_chain, macs_chain, dram_chain = planned.lists
    order_idx = [i for i in range(len(layers)) if fused[i] is None]
    for a, b in zip(order_idx, order_idx[1:]):
        pool = shapes[a + 1] if pooled[a] else None
        if shapes[a] is None or shapes[b] is None or _out_elems(layers[a], pool) != layers[b].input_elems:
            continue
        sa, sb = planned.seg(a, k), planned.seg(b, k)
        ka, fa = sa + CONTEXTS.index((bool(resident[a]), True)), sa + CONTEXTS.index((bool(resident[a]), False))
        cb, fb = sb + CONTEXTS.index((True, False)), sb + CONTEXTS.index((False, False))
        kept = (n_chain, macs_chain, dram_chain) if resident[a] else (n_all, macs_all, dram_all)
        if not kept[0][ka] or not n_chain[cb]:
            continue
        # ... and only if neither layer must fall back to a narrower mapping for it
        if kept[1][ka] < (macs_all[fa] if n_all[fa] else 0) or macs_chain[cb] < (macs_all[fb] if n_all[fb] else 0):
            continue
        # chain only if it saves DRAM traffic over producing to DRAM and reading back
        if not n_all[fa]:
            raise ValueError("min() arg is an empty sequence")  # no plan of layer a without keeping its output
        chained = kept[2][ka] + dram_chain[cb]
        separate = dram_all[fa] + (dram_all[fb] if n_all[fb] else dram_chain[cb])
        if chained < separate:
            keep[a] = True
            resident[b] = True


def _final_plans(p: _Planned,
                 rejections: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]],
                 lt: _LayerTable, fused: list[list[str | None]], fused_at: np.ndarray, resident: np.ndarray,
                 keep: np.ndarray) -> Plans:
    """Each (layer, combination)'s plans in its decided context (resident: the plans the chaining counted on);
    for the (layer, combination) pairs without one (not fused: ``fused_at`` False), the reasons ``rejections``
    gives (per pair of layers and combinations, coded (:func:`~archmodels.emax.mapper.coded_reasons`): whether the
    mapper found a mapping, the reasons of the ones it rejected)."""
    nl, nk = resident.shape
    ctx = 2 * resident.astype(np.int64) + keep  # the position in CONTEXTS
    seg = (np.arange(nl)[:, None] * nk + np.arange(nk)[None, :]) * len(CONTEXTS) + ctx
    start, count = p.start[seg].ravel(), p.count[seg].ravel()
    if _one_each(count):  # one plan per (layer, combination) at most (EMAXV): its start, no repeats
        owner = np.flatnonzero(count)
        rows = start[owner]
    else:
        rows = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count) + np.repeat(start, count)
        owner = np.repeat(np.arange(nl * nk), count)
    if resident.any():  # (no layer resident, as on EMAXV: every plan of the decided contexts stays)
        sel = ~resident.ravel()[owner] | p.chainable[rows]
        rows, owner = rows[sel], owner[sel]
        count = np.bincount(owner, minlength=nl * nk)
    ni, nk_ = np.nonzero((count.reshape(nl, nk) == 0) & ~fused_at)
    texts = _reason_texts(lt.conv[ni], rejections(ni, nk_))
    return Plans(p.table.take(rows), (np.cumsum(count) - count).reshape(nl, nk), count.reshape(nl, nk), fused,
                 (ni, nk_, texts))


#: pairs without a plan up to which :func:`_reason_texts` joins each pair's texts one by one
REASONS_ONE_BY_ONE_UPTO = 16


def _reason_texts(conv: np.ndarray, why: list[tuple[bool, tuple[str, ...]]] | tuple[np.ndarray, ...]) -> np.ndarray:
    """The reason text of each pair without a plan (objects) from its layer being a conv (or pooling) layer and
    the mapper's answer ``why`` (a list of (has a mapping, reason texts), or coded:
    :func:`~archmodels.emax.mapper.coded_reasons`): its rejected mappings' reasons, once each, joined by ``; `` (a
    conv layer with a mapping: and ``no schedule fits the SPM``; none: ``no mapping fits``). Coded, a pair with one
    reason and no such addition (a random batch's usual case) is that text itself (as the join of its one text gives
    it), gathered at once; the others (and a list: a few pairs, one design point's) one by one."""
    if isinstance(why, list):
        return _objects(_joined(conv.tolist(), why))
    fits, given, ends = why
    n = len(fits)
    lo = ends - np.diff(ends, prepend=0)
    alone = np.flatnonzero((ends - lo == 1) & ~(fits & conv))
    one = given[lo[alone]]
    alone = alone[one != ""]  # (an empty text would read "no mapping fits": below)
    out = np.empty(n, dtype=object)
    out[alone] = given[lo[alone]]
    done = np.zeros(n, bool)
    done[alone] = True
    rest = np.flatnonzero(~done)
    if len(rest):
        texts, starts, stops = given.tolist(), lo[rest].tolist(), ends[rest].tolist()
        out[rest] = _objects(_joined(conv[rest].tolist(), [(f, tuple(texts[a:b])) for f, a, b in
                                                            zip(fits[rest].tolist(), starts, stops)]))
    return out


def _joined(conv: list[bool], why: list[tuple[bool, tuple[str, ...]]]) -> list[str]:
    """:func:`_reason_texts` pair by pair (Python lists)."""
    got = []
    for c, (f, rej) in zip(conv, why):
        if f and c:
            rej += ("no schedule fits the SPM",)
        got.append((rej[0] if len(rej) == 1 else "; ".join(dict.fromkeys(rej))) or "no mapping fits")
    return got


def _objects(values: list) -> np.ndarray:
    """``values`` as a 1-d object array, element for element (``np.array`` would turn texts into fixed-width text)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _out_elems(layer, pool: ConvShape | None) -> int:
    if pool is not None:
        return pool.groups * pool.oh * pool.ow
    return layer.output_elems


def _empty_table() -> PlanTable:
    """A table without plans (no combination plans any layer)."""
    r = mapping_columns([])
    r.update(shape=np.zeros(0, np.int64), cols=np.zeros(0), spm=np.zeros(0), elem=np.zeros(0))
    return emaxv_plans([], r)

"""EMAXV and EMAXVR: CGRAs with a local memory per PE (spec `emax.md`).

EMAXV (§2) runs one loop per start and keeps partial sums in DRAM; EMAXVR
(§3) runs 3-deep loop nests per start, broadcasts vertically and
horizontally, and adds a scratchpad (SPM) for partial sums and staged
inputs. Per layer the model

1. builds every mapping the CGRA rules allow (:mod:`archmodels.emax_mapper`;
   rejected ones carry a reason),
2. schedules each (:mod:`archmodels.emax_traffic`: starts, SPM bands, pool
   fusion, DRAM/SPM/LMM traffic by data kind),
3. times it per state (:mod:`archmodels.emax_timing`) and costs it
   (:mod:`archmodels.emax_cost`), vectorised over design points,
4. picks the best plan per point by the ``criterion`` knob (time by default;
   plans within :data:`TIE_RTOL` of the best are ties, broken by DRAM bytes,
   then by candidate order).

Structural work (mappings, schedules) depends only on :data:`STRUCT`
parameters and is cached per unique combination; everything that depends on
clock, bandwidth, latency or bus width is numpy over the points.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from workloads import Workload
from workloads.layers import Conv2D, Pool

from . import emax_cost as cost
from . import tech
from .base import Model
from .emax_mapper import ConvShape, FCShape, Hw, Rejected, conv_candidates, fc_candidates, shape_of
from .emax_timing import STATES, Link, dram_read_bytes, layer_state_cycles, state_cycles
from .emax_traffic import Ctx, Plan, PoolPass, conv_plans, fc_plan
from .params import Param, Points, batch_size
from .result import LayerBatch, Metric

#: plans whose criterion value is within this fraction of the best count as ties (then fewer DRAM bytes win)
TIE_RTOL = 0.03
#: parameters that decide mappings and schedules (cached per unique combination)
STRUCT = ("rows", "cols", "lmm_kb", "spm_kb", "dtype_bits", "tech_nm", "pattern", "loop_order",
          "pool_fusion", "pool_schedule")
_STRUCT_DEFAULTS = {"loop_order": "auto", "pool_fusion": False, "pool_schedule": "after_conv"}
DRAM_KIND_KEYS = (("input", "read"), ("weight", "read"), ("psum", "read"), ("psum", "write"),
                  ("output", "write"), ("spill", "read"), ("spill", "write"))


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
        Param("criterion", "choice", "time", choices=("time", "energy", "dram"), doc="what the mapper minimises",
              knob=True),
    ]


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
        Metric("mac_utilization", "1", "operations / (cycles x PEs): busy share over the whole run"),
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
        Metric("dram_energy_j", "J", "DDR3L read/write energy (spec §5)"),
        Metric("compute_energy_j", "J", "MAC/MAX and other ALU operations"),
        Metric("sram_energy_j", "J", "LMM and SPM accesses"),
        Metric("dram_power_w", "W", "DDR3L read/write power over the layer's time"),
    ]
    return tuple(m)


def _total_metrics() -> tuple[Metric, ...]:
    return (
        Metric("starts", "", "sum over layers", integer=True),
        Metric("activations", "", "sum over layers", integer=True),
        Metric("ideal_time_s", "s", "sum over layers"),
        Metric("overhead_fraction", "1", "(LMMI + REGV + PRE_POST_EXEC) / cycles over the workload"),
        Metric("mac_utilization", "1", "MACs / (cycles x PEs) over the workload"),
        Metric("dram_access_per_op", "B/op", "DRAM bytes / (2 x MACs)"),
        Metric("dram_power_w", "W", "DDR3L read/write power over the run (spec §5)"),
        Metric("dram_energy_j", "J", "sum over layers"),
        Metric("spm_read_bytes", "B", "sum over layers"),
        Metric("spm_write_bytes", "B", "sum over layers"),
        Metric("pes", "", "rows x cols", integer=True),
        Metric("peak_macs_per_s", "MAC/s", "PEs x clock"),
        Metric("pe_logic_area_mm2", "mm2", "PE logic"),
        Metric("lmm_area_mm2", "mm2", "all LMMs"),
        Metric("spm_area_mm2", "mm2", "scratchpad"),
    )


@dataclass(frozen=True)
class LayerPlans:
    """The plans a layer may run with, in its context (or why none fits)."""

    plans: tuple[Plan, ...]
    rejected: tuple[Rejected, ...]
    fused_into: str | None = None
    ctx: Ctx = Ctx()


class _EmaxBase(Model):
    spec = "emax.md"
    SUPPORTS = ("conv", "pool", "fc", "matmul")
    ARCH: ClassVar[str]
    LAYER_METRICS = _metrics()
    TOTAL_METRICS = _total_metrics()

    # ---------------------------------------------------------------- evaluation
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        n = batch_size(pts)
        lbs = [LayerBatch(layer, n) for layer in workload.layers]
        store = [_LayerArrays(n) for _ in workload.layers]
        cols = [pts[k] if k in pts else np.full(n, _STRUCT_DEFAULTS[k], dtype=object) for k in STRUCT]
        groups: dict[tuple, list[int]] = {}
        for i, key in enumerate(zip(*[c.tolist() for c in cols])):
            groups.setdefault(key, []).append(i)
        for key, idx_list in groups.items():
            idx = np.array(idx_list)
            wplans = workload_plans(self.ARCH, workload, key)
            sub = {k: v[idx] for k, v in pts.items()}
            link = Link(sub["clock_mhz"], sub["fsm_bus_bits"], sub["dram_gbps"], sub["dram_latency_ns"],
                        sub.get("spm_gbps", np.full(len(idx), 15.36)),
                        sub.get("spm_latency_ns", np.full(len(idx), 1000 / 240)), key[4] // 8, key[1])
            for li, lp in enumerate(wplans):
                store[li].fill(idx, lp, link, key, sub["criterion"], workload.layers[li])
        for lb, st in zip(lbs, store):
            st.apply(lb)
        return lbs

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        n = batch_size(pts)

        def tot(key):  # sequential sums: a point gives the same bits alone or in a batch
            return sum((lb.metrics[key] for lb in layers), np.zeros(n))

        def state_sum(names):
            return sum((lb.states[s] for lb in layers for s in names), np.zeros(n))

        area = cost.area_mm2(pts["rows"], pts["cols"], pts["lmm_kb"], pts.get("spm_kb", np.zeros(n)),
                             pts["dtype_bits"], pts["tech_nm"])
        cycles, time_s = tot("cycles"), tot("time_s")
        macs = float(sum(lb.layer.macs for lb in layers))
        dram = tot("dram_read_bytes") + tot("dram_write_bytes")
        pes = (pts["rows"] * pts["cols"]).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = {
                "area_mm2": area["area_mm2"],
                "starts": tot("starts"),
                "activations": tot("activations"),
                "ideal_time_s": tot("ideal_time_s"),
                "overhead_fraction": state_sum(("LMMI", "REGV", "PRE_POST_EXEC")) / cycles,
                "mac_utilization": macs / (cycles * pes),
                "dram_access_per_op": dram / (2 * macs) if macs else np.full(n, np.nan),
                "dram_power_w": tot("dram_energy_j") / time_s,
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
    ])


# -------------------------------------------------------------------- per-layer arrays
class _LayerArrays:
    """Metric arrays of one layer over all points, filled group by group."""

    def __init__(self, n: int):
        self.n = n
        self.metrics: dict[str, np.ndarray] = {}
        self.states = {s: np.full(n, np.nan) for s in STATES}
        self.labels = {k: np.full(n, None, dtype=object) for k in ("mapping", "loop_order", "schedule", "fused_into")}
        self.feasible = np.ones(n, bool)
        self.reason = np.full(n, "", dtype=object)

    def _put(self, key, idx, values):
        if key not in self.metrics:
            self.metrics[key] = np.full(self.n, np.nan)
        self.metrics[key][idx] = values

    def fill(self, idx, lp: LayerPlans, link: Link, key: tuple, criterion: np.ndarray, layer) -> None:
        """Choose a plan per point of a structural group and store its metrics."""
        if lp.fused_into is not None:
            for k in _all_metric_names():
                self._put(k, idx, 0.0)
            for s in STATES:
                self.states[s][idx] = 0.0
            self.labels["fused_into"][idx] = lp.fused_into
            self.labels["mapping"][idx] = f"fused into {lp.fused_into}"
            self.labels["loop_order"][idx] = self.labels["schedule"][idx] = "-"
            return
        if not lp.plans:
            for k in _all_metric_names():
                self._put(k, idx, np.nan)
            why = "; ".join(dict.fromkeys(r.reason for r in lp.rejected)) or "no mapping fits"
            self.feasible[idx] = False
            self.reason[idx] = why
            return
        st = layer_state_cycles(lp.plans, link)
        lmm_kb, spm_kb, bits, node = key[2:6]
        cycles = sum(st[s] for s in STATES)
        t = cycles / link.clock_hz[None, :]
        e_dram = cost.dram_energy_j(st["_dram_read"], st["_dram_write"])
        e_fix = np.array([cost.compute_energy_j(p, bits, node) + cost.sram_energy_j(p, lmm_kb, spm_kb, node)
                          for p in lp.plans])[:, None]
        en = e_dram + e_fix
        dr = st["_dram_read"] + st["_dram_write"]
        choice = select(np.asarray(criterion, dtype=object), t, en, dr)
        for c in np.unique(choice):  # full metrics only for the plans some point chose
            pick = choice == c
            sub = idx[pick]
            res = _evaluate_plan(lp.plans[c], _score(lp.plans[c], link, key), link, key, layer)
            for k, v in res.items():
                v = v[pick]
                if k.startswith("state:"):
                    self.states[k[6:]][sub] = v
                else:
                    self._put(k, sub, v)
            plan = lp.plans[c]
            self.labels["mapping"][sub] = plan.mapping.name
            self.labels["loop_order"][sub] = plan.mapping.order_name
            self.labels["schedule"][sub] = plan.schedule

    def apply(self, lb: LayerBatch) -> None:
        lb.set(**self.metrics)
        for s, v in self.states.items():
            lb.states[s] = v
        for k, v in self.labels.items():
            lb.labels[k] = v
        if (~self.feasible).any():
            lb.infeasible(~self.feasible, self.reason)


def select(criterion: np.ndarray, time_s: np.ndarray, energy_j: np.ndarray, dram_b: np.ndarray) -> np.ndarray:
    """Index of the chosen plan per point ([plans, points] arrays).

    The criterion picks the plans within :data:`TIE_RTOL` of the best; among them the fewest DRAM bytes
    (within 0.1 %) win, then the lowest energy (time for the energy criterion), then the first candidate.
    """
    by = {"time": time_s, "energy": energy_j, "dram": dram_b}
    second = {"time": dram_b, "energy": dram_b, "dram": time_s}
    third = {"time": energy_j, "energy": time_s, "dram": energy_j}
    out = np.zeros(time_s.shape[1], dtype=int)
    for name in np.unique(criterion):
        sel = criterion == name
        ok = np.ones((time_s.shape[0], int(sel.sum())), bool)
        for metric, rtol in ((by[name], TIE_RTOL), (second[name], 1e-3), (third[name], 0.0)):
            v = np.where(ok, metric[:, sel], np.inf)
            ok &= v <= v.min(axis=0) * (1 + rtol) + 1e-30
        out[sel] = np.argmax(ok, axis=0)
    return out


@lru_cache(maxsize=1)
def _all_metric_names() -> tuple[str, ...]:
    return ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j") + tuple(
        m.name for m in _metrics())


def _score(plan: Plan, link: Link, key: tuple) -> dict[str, Any]:
    """What the mapper compares plans on (time, energy, DRAM bytes), over the points of a group."""
    rows, cols, lmm_kb, spm_kb, bits, node = key[:6]
    st = state_cycles(plan, link)
    cycles = sum(st[s] for s in STATES)
    rd = dram_read_bytes(plan, link)
    wr = plan.dram_write_bytes()
    zero = np.zeros_like(link.clock_hz)
    dram_r = zero + sum(rd.values())
    dram_w = zero + sum(wr.values())
    e_dram = cost.dram_energy_j(dram_r, dram_w)
    e_comp = cost.compute_energy_j(plan, bits, node)
    e_sram = cost.sram_energy_j(plan, lmm_kb, spm_kb, node)
    return {"st": st, "cycles": cycles, "time_s": cycles / link.clock_hz, "rd": rd, "wr": wr,
            "dram_read_bytes": dram_r, "dram_write_bytes": dram_w, "e_dram": e_dram, "e_comp": e_comp,
            "e_sram": e_sram, "energy_j": e_dram + e_comp + e_sram}


def _evaluate_plan(plan: Plan, sc: dict[str, Any], link: Link, key: tuple, layer) -> dict[str, np.ndarray]:
    """Every metric of one plan over the points of a structural group."""
    rows, cols = key[:2]
    m = plan.mapping
    st, cycles, time_s, rd, wr = sc["st"], sc["cycles"], sc["time_s"], sc["rd"], sc["wr"]
    dram_r, dram_w, e_dram, e_comp, e_sram = (sc[k] for k in ("dram_read_bytes", "dram_write_bytes", "e_dram",
                                                               "e_comp", "e_sram"))
    zero = np.zeros_like(link.clock_hz)
    pes = rows * cols
    macs = float(layer.macs)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "cycles": cycles,
            "time_s": time_s,
            "utilization": zero + m.alus / pes,
            "dram_read_bytes": dram_r,
            "dram_write_bytes": dram_w,
            "energy_j": e_dram + e_comp + e_sram,
            "starts": zero + plan.starts,
            "activations": zero + plan.activations,
            "bands": zero + plan.bands,
            "passes": zero + plan.passes,
            "parallelism": zero + m.macs,
            "icpar": zero + m.icpar,
            "alus_used": zero + m.alus,
            "rows_used": zero + m.rows_used,
            "ideal_time_s": plan.ops / m.macs / link.clock_hz,
            "overhead_fraction": (st["LMMI"] + st["REGV"] + st["PRE_POST_EXEC"]) / cycles,
            "load_fraction_of_exec": (st["LOAD"] + st["_pload_total"]) / st["EXEC"],
            "mac_utilization": plan.ops / (cycles * pes),
            "pload_cycles": st["_pload_total"],
            "pdrain_cycles": st["_pdrain_total"],
            "spm_read_bytes": zero + plan.spm_read,
            "spm_write_bytes": zero + plan.spm_write,
            "spm_need_bytes": zero + plan.spm_need,
            "lmm_read_bytes": zero + plan.lmm_read,
            "lmm_write_bytes": zero + plan.lmm_write,
            "dram_access_per_op": (dram_r + dram_w) / (2 * macs) if macs else zero + np.nan,
            "dram_energy_j": e_dram,
            "compute_energy_j": zero + e_comp,
            "sram_energy_j": zero + e_sram,
            "dram_power_w": e_dram / time_s,
        }
    for kind, d in DRAM_KIND_KEYS:
        out[f"dram_{kind}_{d}_bytes"] = zero + (rd.get(kind, 0.0) if d == "read" else wr.get(kind, 0.0))
    for s in STATES:
        out["state:" + s] = st[s]
    return out


# -------------------------------------------------------------------- workload planning (structural, cached)
def _hw(arch: str, key: tuple) -> Hw:
    rows, cols, lmm_kb, spm_kb, bits = key[:5]
    return Hw(arch, int(rows), int(cols), int(round(lmm_kb * 1024)), int(round(spm_kb * 1024)), int(bits) // 8)


def _fusable(conv, pool) -> bool:
    return (isinstance(conv, Conv2D) and isinstance(pool, Pool) and pool.channels == conv.out_ch
            and pool.in_h == conv.out_h and pool.in_w == conv.out_w)


@lru_cache(maxsize=1024)
def workload_plans(arch: str, workload: Workload, key: tuple) -> tuple[LayerPlans, ...]:
    """Plans of every layer for one structural parameter combination (see module docstring)."""
    hw = _hw(arch, key)
    pattern, order, fusion, sched = key[6:10]
    layers = workload.layers
    shapes = [shape_of(layer) for layer in layers]
    n = len(layers)
    fused: list[str | None] = [None] * n
    pool_of: list[ConvShape | None] = [None] * n
    vr_spm = arch == "emaxvr" and hw.spm_bytes > 0
    if vr_spm and fusion:
        for i in range(n - 1):
            if _fusable(layers[i], layers[i + 1]) and conv_candidates(shapes[i + 1], hw)[0]:
                fused[i + 1] = layers[i].name
                pool_of[i] = shapes[i + 1]
    cache: dict[tuple, LayerPlans] = {}

    def plans(i: int, resident: bool, keep: bool) -> LayerPlans:
        k = (i, resident, keep)
        if k not in cache:
            cache[k] = _layer_plans(shapes[i], hw, pattern, order,
                                    Ctx(resident, keep, pool_of[i], sched), layers[i].kind)
        return cache[k]

    resident = [False] * n
    keep = [False] * n
    order_idx = [i for i in range(n) if fused[i] is None]
    if vr_spm:
        for a, b in zip(order_idx, order_idx[1:]):
            if shapes[a] is None or shapes[b] is None or _out_elems(layers[a], pool_of[a]) != _in_elems(layers[b]):
                continue
            kept = plans(a, resident[a], True).plans
            if resident[a]:
                kept = tuple(p for p in kept if p.bands == 1 and p.psum_home != "dram")
            consumer = [p for p in plans(b, True, False).plans if p.bands == 1 and p.psum_home != "dram"]
            if not kept or not consumer:
                continue
            # ... and only if neither layer must fall back to a narrower mapping for it
            free_a, free_b = plans(a, resident[a], False).plans, plans(b, False, False).plans
            if (max(p.mapping.macs for p in kept) < max((p.mapping.macs for p in free_a), default=0)
                    or max(p.mapping.macs for p in consumer) < max((p.mapping.macs for p in free_b), default=0)):
                continue
            # chain only if it saves DRAM traffic over producing to DRAM and reading back
            chained = min(map(dram_exact, kept)) + min(map(dram_exact, consumer))
            separate = min(map(dram_exact, plans(a, resident[a], False).plans)) + min(
                map(dram_exact, plans(b, False, False).plans or consumer))
            if chained < separate:
                keep[a] = True
                resident[b] = True
    out = []
    for i in range(n):
        if fused[i] is not None:
            out.append(LayerPlans((), (), fused[i]))
        elif resident[i]:  # the plans the chaining decision counted on: unbanded, partial sums in the SPM
            lp = plans(i, True, keep[i])
            out.append(LayerPlans(tuple(p for p in lp.plans if p.bands == 1 and p.psum_home != "dram"),
                                  lp.rejected, None, lp.ctx))
        else:
            out.append(plans(i, resident[i], keep[i]))
    return tuple(out)


def dram_exact(plan: Plan) -> float:
    """DRAM bytes of a plan before bus-word rounding (for structural decisions)."""
    x = sum(v for v in plan.dram_write_bytes().values()) + sum(n for _, n in plan.host_reads)
    return x + sum(c * b for _, c, b in plan.dram_read_groups())


def _out_elems(layer, pool: ConvShape | None) -> int:
    if pool is not None:
        return pool.groups * pool.oh * pool.ow
    return layer.output_elems


def _in_elems(layer) -> int:
    return layer.input_elems


@lru_cache(maxsize=16384)
def _layer_plans(sh, hw: Hw, pattern: str, order: str, ctx: Ctx, kind: str) -> LayerPlans:
    if sh is None:
        return LayerPlans((), (Rejected("-", f"{hw.arch} does not run {kind} layers"),), None, ctx)
    if isinstance(sh, FCShape):
        maps, rej = fc_candidates(sh, hw)
        plans = [p for p in (fc_plan(sh, m, hw, ctx) for m in maps) if p is not None]
        return LayerPlans(tuple(plans), tuple(rej), None, ctx)
    pat = pattern if not (sh.op == "max" and pattern == "pairs") else "auto"
    maps, rej = conv_candidates(sh, hw, pat, order)
    pool_pass = _pool_pass(ctx.pool, hw) if ctx.pool is not None else None
    plans = [p for m in maps for p in conv_plans(sh, m, hw, ctx, pool_pass)]
    if not plans and maps:
        rej = list(rej) + [Rejected("-", "no schedule fits the SPM")]
    return LayerPlans(tuple(plans), tuple(rej), None, ctx)


def _pool_pass(pool: ConvShape, hw: Hw) -> PoolPass:
    """The fused pooling pass: the widest pooling mapping on the same array."""
    maps, _ = conv_candidates(pool, hw)
    best = max(maps, key=lambda m: m.macs)
    p = conv_plans(pool, best, Hw(hw.arch, hw.rows, hw.cols, hw.lmm_bytes, 0, hw.elem_bytes), Ctx())[0]
    ops = pool.groups * pool.oh * pool.ow * pool.kh * pool.kw
    return PoolPass(ops, p.iterations, p.loop_ends, best.rows_used, best.regs, best.macs)


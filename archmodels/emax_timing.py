"""Per-state cycles of a :class:`~archmodels.emax_traffic.Plan`, vectorised over design points.

States (spec `emax.md` §1): CONF, LMMI, LOAD, REGV, EXEC, PRE_POST_EXEC,
DRAIN, and the part of PLOAD/PDRAIN that EXEC could not hide; ``POOL`` is
the fused pooling pass. The spec's time model is ``t = t'_o * N + t_m + t_e``
with ``t'_o = LMMI + REGV + PRE_POST_EXEC`` per start.

Constants and where they come from
----------------------------------
* :data:`HANDSHAKE_CYCLES` = 2: every transfer pays a 2-cycle address + data
  handshake (spec §3, memory model of the simulator).
* Memory read latency: a parameter (default 15 EMAX cycles at 240 MHz =
  62.5 ns for DDR3, 1 cycle for the SPM; spec §3); paid by every read
  transfer (spec §3 item 2: the broadcast pays "the bus handshake and memory
  latency once"). Writes: no latency (spec: write latency ignored).
* :data:`PIPE_CYCLES_PER_ROW` = 2: latency of one PE row of a non-
  multithreaded EMAX array (spec `imax.md` §1: "a unit's latency is 8 cycles
  instead of 2"); PRE_POST_EXEC = rows used x 2 per start.
* :data:`REGV_REGS_PER_CYCLE` = 1 and :data:`CONF_CYCLES_PER_PE` = 1:
  assumptions (not published): REGV and CONF write one register / one PE
  configuration per cycle. CONF runs once per layer (later starts reuse the
  mapping: spec §2 "CONF is ~0 %").
* :data:`START_OVERHEAD_CYCLES` (fitted): the fixed LMMI cost of a start
  (the FSM setting the transfer table and starting the array), fitted once
  on EMAXV AlexNet C1 (33.1 ms for 15,840 starts, spec §2). With REGV and
  PRE_POST_EXEC it makes ``t'_o`` (~400 cycles per EMAXV start, ~340 per
  EMAXVR start).
* :data:`LOOP_END_BUBBLE_CYCLES` (fitted): idle cycles at each end of the
  innermost loop of a multi-loop start (the loop-end notification and the
  AEX address jump), fitted once on the EMAXVR AlexNet conv+pool time
  (0.017 s, spec §4). Single-loop EMAXV starts pay it once per start.

A transfer of ``b`` bytes moves ``(b + bus - elem) / bus`` bus words on
average (rows start at any element offset inside a bus word; spec §2
"reads move whole bus words"); one bus moves one word per cycle; DRAM and
SPM bandwidth cap every phase.
"""

from __future__ import annotations

import math

import numpy as np

from .emax_traffic import Plan

HANDSHAKE_CYCLES = 2
PIPE_CYCLES_PER_ROW = 2
REGV_REGS_PER_CYCLE = 1
CONF_CYCLES_PER_PE = 1
START_OVERHEAD_CYCLES = 213  # fitted: EMAXV AlexNet C1 time (archmodels/emax_fit.py)
LOOP_END_BUBBLE_CYCLES = 2  # fitted: EMAXVR AlexNet conv+pool time (archmodels/emax_fit.py)

STATES = ("CONF", "LMMI", "LOAD", "REGV", "EXEC", "PRE_POST_EXEC", "DRAIN", "PLOAD", "PDRAIN", "POOL")


class Link:
    """Per-point transfer parameters (arrays over the points of a batch)."""

    def __init__(self, clock_mhz, fsm_bus_bits, dram_gbps, dram_latency_ns, spm_gbps, spm_latency_ns, elem_bytes,
                 cols):
        f = np.asarray(clock_mhz, dtype=float) * 1e6
        self.clock_hz = f
        self.bus_bytes = np.asarray(fsm_bus_bits, dtype=float) / 8.0
        self.dram_bpc = np.asarray(dram_gbps, dtype=float) * 1e9 / f
        self.spm_bpc = np.asarray(spm_gbps, dtype=float) * 1e9 / f
        self.lat_dram = np.ceil(np.asarray(dram_latency_ns, dtype=float) * f / 1e9 - 1e-9)
        self.lat_spm = np.ceil(np.asarray(spm_latency_ns, dtype=float) * f / 1e9 - 1e-9)
        self.elem = float(elem_bytes)
        self.cols = int(cols)

    def words(self, nbytes: float, aligned: bool = False) -> np.ndarray:
        """Bus words moved by one transfer of ``nbytes``: activation rows start at any element
        offset (average tail), weight blocks are laid out aligned by the host."""
        if aligned:
            return np.ceil(nbytes / self.bus_bytes - 1e-9)
        return np.maximum(nbytes, nbytes + self.bus_bytes - self.elem) / self.bus_bytes


def dram_read_bytes(plan: Plan, link: Link) -> dict[str, np.ndarray]:
    """DRAM bytes read per data kind, reads rounded to whole bus words; host reads exact."""
    out: dict[str, np.ndarray] = {}
    for kind, count, each in plan.dram_read_groups():
        out[kind] = out.get(kind, 0.0) + count * link.words(each, kind == "weight") * link.bus_bytes
    for kind, nbytes in plan.host_reads:
        out[kind] = out.get(kind, 0.0) + nbytes
    return out


def _phase_table(plan: Plan, phase: str) -> tuple[np.ndarray, ...] | None:
    """Columns of the transfers of one phase (count, bytes, rounds, read, dram, weight) as [X, 1] arrays,
    built once per plan (kept on the plan object: plans are immutable)."""
    tables = plan.__dict__.get("_phase_tables")
    if tables is None:
        tables = {}
        object.__setattr__(plan, "_phase_tables", tables)
    if phase not in tables:
        tables[phase] = _build_table(plan, phase)
    return tables[phase]


def _build_table(plan: Plan, phase: str) -> tuple[np.ndarray, ...] | None:
    xs = [x for x in plan.xfers if x.phase == phase and x.count > 0]
    stage = list(plan.stage_reads) if phase == "pload" else []
    if not xs and not stage:
        return None
    col = lambda v: np.array(v, dtype=float)[:, None]  # noqa: E731
    return (col([x.count for x in xs]), col([x.bytes_each for x in xs]),
            col([x.bursts * math.ceil(x.per_burst / x.par - 1e-9) for x in xs]),
            col([not x.write for x in xs]), col([x.src == "dram" for x in xs]), col([x.kind == "weight" for x in xs]),
            col([s[1] for s in stage]), col([s[2] for s in stage]), col([s[0] == "weight" for s in stage]))


def _words(link: Link, nbytes: np.ndarray, aligned: np.ndarray) -> np.ndarray:
    bus = link.bus_bytes[None, :]
    return np.where(aligned > 0, np.ceil(nbytes / bus - 1e-9), np.maximum(nbytes, nbytes + bus - link.elem) / bus)


def phase_cycles(plan: Plan, phase: str, link: Link) -> np.ndarray:
    """Cycles of one transfer phase: the transfers spread over the FSM buses (but a group's
    transfers of one burst use at most ``par`` buses), capped by DRAM and SPM bandwidth."""
    tab = _phase_table(plan, phase)
    if tab is None:
        return np.zeros_like(link.clock_hz)
    count, each, rounds, read, dram, weight, s_count, s_each, s_weight = tab
    words = _words(link, each, weight)
    lat = read * np.where(dram > 0, link.lat_dram[None, :], link.lat_spm[None, :])
    cost = HANDSHAKE_CYCLES + lat + words
    work = (count * cost).sum(axis=0)
    longest = (rounds * cost).max(axis=0, initial=0.0)
    moved = count * np.where(read > 0, words * link.bus_bytes[None, :], each)
    dram_b = (moved * dram).sum(axis=0)
    spm_b = (moved * (1 - dram)).sum(axis=0)
    if len(s_count):  # DRAM -> SPM staging runs beside the FSM buses, limited by DRAM bandwidth
        st = (s_count * _words(link, s_each, s_weight) * link.bus_bytes[None, :]).sum(axis=0)
        dram_b = dram_b + st
        spm_b = spm_b + st
    bus = np.maximum(work / link.cols, longest)
    return np.maximum.reduce([bus, dram_b / link.dram_bpc, spm_b / link.spm_bpc])


def state_cycles(plan: Plan, link: Link) -> dict[str, np.ndarray]:
    """Cycles per state of a layer run with ``plan`` (arrays over points)."""
    m = plan.mapping
    zero = np.zeros_like(link.clock_hz)
    exec_c = zero + plan.iterations + plan.loop_ends * LOOP_END_BUBBLE_CYCLES
    ppe = zero + plan.activations * PIPE_CYCLES_PER_ROW * m.rows_used
    st = {
        "CONF": zero + m.rows_used * link.cols * CONF_CYCLES_PER_PE,
        "LMMI": zero + plan.activations * START_OVERHEAD_CYCLES,
        "LOAD": phase_cycles(plan, "load", link),
        "REGV": zero + plan.activations * np.ceil(m.regs / REGV_REGS_PER_CYCLE),
        "EXEC": exec_c,
        "PRE_POST_EXEC": ppe,
        "DRAIN": phase_cycles(plan, "drain", link),
    }
    pl = phase_cycles(plan, "pload", link)
    pd = phase_cycles(plan, "pdrain", link)
    exposed = np.maximum(0.0, pl + pd - (exec_c + ppe))
    share = np.divide(pl, pl + pd, out=np.zeros_like(pl), where=(pl + pd) > 0)
    st["PLOAD"] = exposed * share
    st["PDRAIN"] = exposed - st["PLOAD"]
    st["POOL"] = pool_cycles(plan, link) if plan.pool is not None else zero
    st["_pload_total"] = pl
    st["_pdrain_total"] = pd
    return st


def pool_cycles(plan: Plan, link: Link) -> np.ndarray:
    """The fused pooling pass: one start whose EXEC overlaps its own transfers."""
    p = plan.pool
    compute = p.iterations + p.loop_ends * LOOP_END_BUBBLE_CYCLES
    xfer = phase_cycles(plan, "pool", link)
    return START_OVERHEAD_CYCLES + np.ceil(p.regs / REGV_REGS_PER_CYCLE) + PIPE_CYCLES_PER_ROW * p.rows_used \
        + np.maximum(compute, xfer)



PHASES = ("load", "drain", "pload", "pdrain", "pool")


def _layer_table(plans: tuple[Plan, ...]) -> dict[str, np.ndarray]:
    """The transfers of all plans of a layer as one table, rows grouped by (plan, phase)."""
    cols: dict[str, list] = {k: [] for k in ("count", "each", "rounds", "read", "dram", "weight", "seg")}
    stage: dict[str, list] = {k: [] for k in ("count", "each", "weight", "plan")}
    for i, plan in enumerate(plans):
        for j, phase in enumerate(PHASES):
            for x in plan.xfers:
                if x.phase != phase or x.count <= 0:
                    continue
                cols["count"].append(x.count)
                cols["each"].append(x.bytes_each)
                cols["rounds"].append(x.bursts * math.ceil(x.per_burst / x.par - 1e-9))
                cols["read"].append(not x.write)
                cols["dram"].append(x.src == "dram")
                cols["weight"].append(x.kind == "weight")
                cols["seg"].append(i * len(PHASES) + j)
        for kind, count, each in plan.stage_reads:
            if count > 0:
                stage["count"].append(count)
                stage["each"].append(each)
                stage["weight"].append(kind == "weight")
                stage["plan"].append(i)
    out = {f"x_{k}": np.array(v, dtype=float if k != "seg" else int) for k, v in cols.items()}
    out.update({f"s_{k}": np.array(v, dtype=float if k != "plan" else int) for k, v in stage.items()})
    for k in ("iterations", "loop_ends", "activations"):
        out[k] = np.array([getattr(p, k) for p in plans], dtype=float)[:, None]
    out["rows_used"] = np.array([p.mapping.rows_used for p in plans], dtype=float)[:, None]
    out["host"] = np.array([sum(b for _, b in p.host_reads) for p in plans], dtype=float)[:, None]
    out["regs"] = np.array([math.ceil(p.mapping.regs / REGV_REGS_PER_CYCLE) for p in plans], dtype=float)[:, None]
    pools = [p.pool for p in plans]
    out["has_pool"] = np.array([q is not None for q in pools], dtype=float)[:, None]
    out["pool_compute"] = np.array([q.iterations + q.loop_ends * LOOP_END_BUBBLE_CYCLES if q else 0.0 for q in pools])[:, None]
    out["pool_fixed"] = np.array([START_OVERHEAD_CYCLES + math.ceil(q.regs / REGV_REGS_PER_CYCLE)
                                  + PIPE_CYCLES_PER_ROW * q.rows_used if q else 0.0 for q in pools])[:, None]
    return out


def layer_state_cycles(plans: tuple[Plan, ...], link: Link) -> dict[str, np.ndarray]:
    """:func:`state_cycles` of every plan of a layer at once: arrays [plans, points]."""
    t = _layer_table(plans)
    n_pl, n_pts = len(plans), len(link.clock_hz)
    nseg = n_pl * len(PHASES)
    bus_b = link.bus_bytes[None, :]
    work = np.zeros((nseg, n_pts))
    longest = np.zeros((nseg, n_pts))
    dram_b = np.zeros((nseg, n_pts))
    spm_b = np.zeros((nseg, n_pts))
    dram_rd = np.zeros((n_pl, n_pts)) + t["host"]
    dram_wr = np.zeros((n_pl, n_pts))
    if len(t["x_count"]):
        c, each = t["x_count"][:, None], t["x_each"][:, None]
        read, dram = t["x_read"][:, None], t["x_dram"][:, None]
        words = _words(link, each, t["x_weight"][:, None])
        cost = HANDSHAKE_CYCLES + read * np.where(dram > 0, link.lat_dram[None, :], link.lat_spm[None, :]) + words
        moved = c * np.where(read > 0, words * bus_b, each)
        seg = t["x_seg"]
        np.add.at(work, seg, c * cost)
        np.maximum.at(longest, seg, t["x_rounds"][:, None] * cost)
        np.add.at(dram_b, seg, moved * dram)
        np.add.at(spm_b, seg, moved * (1 - dram))
        np.add.at(dram_rd, seg // len(PHASES), moved * dram * read)
        np.add.at(dram_wr, seg // len(PHASES), moved * dram * (1 - read))
    if len(t["s_count"]):
        st_b = t["s_count"][:, None] * _words(link, t["s_each"][:, None], t["s_weight"][:, None]) * bus_b
        seg = t["s_plan"] * len(PHASES) + PHASES.index("pload")
        np.add.at(dram_b, seg, st_b)
        np.add.at(spm_b, seg, st_b)
        np.add.at(dram_rd, t["s_plan"], st_b)
    bus = np.maximum(work / link.cols, longest)
    ph = np.maximum.reduce([bus, dram_b / link.dram_bpc[None, :], spm_b / link.spm_bpc[None, :]])
    ph = ph.reshape(n_pl, len(PHASES), n_pts)
    zero = np.zeros((n_pl, n_pts))
    exec_c = zero + t["iterations"] + t["loop_ends"] * LOOP_END_BUBBLE_CYCLES
    ppe = zero + t["activations"] * PIPE_CYCLES_PER_ROW * t["rows_used"]
    pl, pd = ph[:, 2], ph[:, 3]
    exposed = np.maximum(0.0, pl + pd - (exec_c + ppe))
    share = np.divide(pl, pl + pd, out=np.zeros_like(pl), where=(pl + pd) > 0)
    st = {
        "CONF": zero + t["rows_used"] * link.cols * CONF_CYCLES_PER_PE,
        "LMMI": zero + t["activations"] * START_OVERHEAD_CYCLES,
        "LOAD": ph[:, 0],
        "REGV": zero + t["activations"] * t["regs"],
        "EXEC": exec_c,
        "PRE_POST_EXEC": ppe,
        "DRAIN": ph[:, 1],
        "PLOAD": exposed * share,
        "PDRAIN": exposed - exposed * share,
        "POOL": t["has_pool"] * (t["pool_fixed"] + np.maximum(t["pool_compute"], ph[:, 4])),
        "_pload_total": pl,
        "_pdrain_total": pd,
        "_dram_read": dram_rd,
        "_dram_write": dram_wr,
    }
    return st

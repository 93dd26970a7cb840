"""Per-state cycles of plans (:class:`~archmodels.emax.traffic.PlanTable`), vectorised over (plan, design point) pairs.

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

import numpy as np

from .traffic import KINDS, PHASES, PlanTable

HANDSHAKE_CYCLES = 2
PIPE_CYCLES_PER_ROW = 2
REGV_REGS_PER_CYCLE = 1
CONF_CYCLES_PER_PE = 1
START_OVERHEAD_CYCLES = 213  # fitted: EMAXV AlexNet C1 time (archmodels/emax/fit.py)
LOOP_END_BUBBLE_CYCLES = 2  # fitted: EMAXVR AlexNet conv+pool time (archmodels/emax/fit.py)

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
        self.elem = np.broadcast_to(np.asarray(elem_bytes, dtype=float), f.shape)
        self.cols = np.broadcast_to(np.asarray(cols, dtype=float), f.shape)


def words(nbytes: np.ndarray, aligned: np.ndarray, bus: np.ndarray, elem: np.ndarray) -> np.ndarray:
    """Bus words moved by one transfer of ``nbytes``: activation rows start at any element offset
    (average tail), weight blocks are laid out aligned by the host."""
    return np.where(aligned > 0, np.ceil(nbytes / bus - 1e-9), np.maximum(nbytes, nbytes + bus - elem) / bus)


def _entry_words(each: np.ndarray, weight: np.ndarray, e: np.ndarray, pt: np.ndarray, link: Link) -> np.ndarray:
    """:func:`words` of sub-table entries ``e`` at points ``pt``; once per entry when every point shares the
    bus width and element size (the usual batch), else per (entry, point)."""
    bus, elem = link.bus_bytes[pt], link.elem[pt]
    if len(pt) and (bus == bus[0]).all() and (elem == elem[0]).all():
        used, inv = np.unique(e, return_inverse=True)
        return words(each[used], weight[used], bus[:1], elem[:1])[inv.reshape(-1)]
    return words(each[e], weight[e], bus, elem)


def _expand(sub: dict[str, np.ndarray], n_plans: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pair, entry) index pairs: every entry of sub-table ``sub`` of the plan of each pair, in table order."""
    per = np.bincount(sub["plan"], minlength=n_plans)
    start = np.cumsum(per) - per
    cnt = per[rows]
    pair = np.repeat(np.arange(len(rows)), cnt)
    entry = np.repeat(start[rows] - (np.cumsum(cnt) - cnt), cnt) + np.arange(cnt.sum())
    return pair, entry


def _sums(n: int, *parts: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per segment 0..n-1, the sum of the (segment, value) entries of ``parts``, added one by one in order."""
    seg = np.concatenate([p[0] for p in parts])
    return np.bincount(seg, weights=np.concatenate([p[1] for p in parts]), minlength=n).astype(float)


def _maxima(n: int, seg: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Per segment 0..n-1, the largest of 0 and its values (``seg`` sorted)."""
    out = np.zeros(n)
    if len(seg):
        at = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
        out[seg[at]] = np.maximum(0.0, np.maximum.reduceat(vals, at))
    return out


_STATE_COLS = ("iterations", "loop_ends", "activations", "rows_used", "regs", "has_pool", "pool_regs", "pool_rows_used",
               "pool_iterations", "pool_loop_ends")


def pair_states(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link, for_choice: bool) -> dict[str, np.ndarray]:
    """Cycles per state of plan ``rows[k]`` of ``tab`` at design point ``pts[k]`` (arrays over pairs k).

    Each transfer phase spreads its transfers over the FSM buses (a group's transfers of one burst use
    at most ``par`` buses), capped by DRAM and SPM bandwidth; DRAM -> SPM staging runs beside the buses
    in the PLOAD phase, limited by DRAM bandwidth. ``for_choice`` (what the mapper compares plans on):
    staged reads are added one by one after the bus transfers, and DRAM bytes by direction are returned
    as ``_dram_read``/``_dram_write``; otherwise (the chosen plan's report) their sum is added at once.
    """
    return _pair_states(tab, rows, pts, link, (for_choice,))[0]


def pair_states_both(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link
                     ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """:func:`pair_states` of the same pairs for the choice and for the report, the transfers expanded and
    priced once (every value is per pair: the same bits as two calls, or as calls on a subset of the pairs)."""
    choice, report = _pair_states(tab, rows, pts, link, (True, False))
    return choice, report


def _pair_states(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link,
                 variants: tuple[bool, ...]) -> list[dict[str, np.ndarray]]:
    """:func:`pair_states` for each ``for_choice`` of ``variants`` (the shared part computed once)."""
    n, nph = len(rows), len(PHASES)
    x = tab.xfer
    pair, e = _expand(x, len(tab), rows)
    pt = pts[pair]
    bus = link.bus_bytes[pt]
    count, each, read, dram = x["count"][e], x["each"][e], x["read"][e], x["dram"][e]
    w = _entry_words(x["each"], x["weight"], e, pt, link)
    cost = HANDSHAKE_CYCLES + read * np.where(dram > 0, link.lat_dram[pt], link.lat_spm[pt]) + w
    moved = count * np.where(read > 0, w * bus, each)
    seg = pair * nph + x["phase"][e]
    work = _sums(n * nph, (seg, count * cost))
    longest = _maxima(n * nph, seg, x["rounds"][e] * cost)
    s = tab.stage
    s_pair, s_e = _expand(s, len(tab), rows)
    s_pt = pts[s_pair]
    st_b = s["count"][s_e] * words(s["each"][s_e], s["weight"][s_e], link.bus_bytes[s_pt], link.elem[s_pt]) \
        * link.bus_bytes[s_pt]
    s_seg = s_pair * nph + PHASES.index("pload")
    ptr = np.repeat(pts, nph)
    bus_cols, dram_bpc, spm_bpc = link.cols[ptr], link.dram_bpc[ptr], link.spm_bpc[ptr]
    col = {k: tab.plan[k][rows] for k in _STATE_COLS}
    exec_c = col["iterations"] + col["loop_ends"] * LOOP_END_BUBBLE_CYCLES
    ppe = col["activations"] * PIPE_CYCLES_PER_ROW * col["rows_used"]
    pool_fixed = START_OVERHEAD_CYCLES + np.ceil(col["pool_regs"] / REGV_REGS_PER_CYCLE) \
        + PIPE_CYCLES_PER_ROW * col["pool_rows_used"]
    pool_compute = col["pool_iterations"] + col["pool_loop_ends"] * LOOP_END_BUBBLE_CYCLES
    fixed = {
        "CONF": col["rows_used"] * link.cols[pts] * CONF_CYCLES_PER_PE,
        "LMMI": col["activations"] * START_OVERHEAD_CYCLES,
        "REGV": col["activations"] * np.ceil(col["regs"] / REGV_REGS_PER_CYCLE),
    }
    results = []
    for for_choice in variants:
        out: dict[str, np.ndarray] = {}
        if for_choice:
            dram_b = _sums(n * nph, (seg, moved * dram), (s_seg, st_b))
            spm_b = _sums(n * nph, (seg, moved * (1 - dram)), (s_seg, st_b))
            out["_dram_read"] = _sums(n, (np.arange(n), tab.plan["host"][rows]), (pair, moved * dram * read),
                                      (s_pair, st_b))
            out["_dram_write"] = _sums(n, (pair, moved * dram * (1 - read)))
        else:
            staged = _sums(n * nph, (s_seg, st_b))
            dram_b = _sums(n * nph, (seg, moved * dram)) + staged
            spm_b = _sums(n * nph, (seg, moved * (1 - dram))) + staged
        bus_c = np.maximum(work / bus_cols, longest)
        ph = np.maximum.reduce([bus_c, dram_b / dram_bpc, spm_b / spm_bpc]).reshape(n, nph)
        pl, pd = ph[:, 2], ph[:, 3]
        exposed = np.maximum(0.0, pl + pd - (exec_c + ppe))
        share = np.divide(pl, pl + pd, out=np.zeros_like(pl), where=(pl + pd) > 0)
        st = {
            "CONF": fixed["CONF"],
            "LMMI": fixed["LMMI"],
            "LOAD": ph[:, 0],
            "REGV": fixed["REGV"],
            "EXEC": exec_c,
            "PRE_POST_EXEC": ppe,
            "DRAIN": ph[:, 1],
            "PLOAD": exposed * share,
            "PDRAIN": exposed - exposed * share,
            "POOL": np.where(col["has_pool"] > 0, pool_fixed + np.maximum(pool_compute, ph[:, 4]), 0.0),
            "_pload_total": pl,
            "_pdrain_total": pd,
        }
        st.update(out)
        results.append(st)
    return results


def pair_dram_reads(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link) -> tuple[np.ndarray, np.ndarray]:
    """DRAM bytes read per data kind ([pairs, kinds], reads rounded to whole bus words, host reads exact)
    and their total, summed kind by kind in the order the plan names them."""
    n, nk = len(rows), len(KINDS)
    r, h = tab.read, tab.host
    pair, e = _expand(r, len(tab), rows)
    pt = pts[pair]
    bus = link.bus_bytes[pt]
    h_pair, h_e = _expand(h, len(tab), rows)
    out = _sums(n * (nk + 1),
                (pair * (nk + 1) + r["kind"][e], r["count"][e] * words(r["each"][e], r["weight"][e], bus, link.elem[pt]) * bus),
                (h_pair * (nk + 1) + h["kind"][h_e], h["bytes"][h_e])).reshape(n, nk + 1)
    order = tab.read_order[rows]
    total = np.zeros(n)
    for j in range(nk):
        total = total + out[np.arange(n), order[:, j]]
    return out[:, :nk], total

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

import math
from typing import Any

import numpy as np

from .mapper import _rows_of, rows_getter  # noqa: F401 (_rows_of: patched here by tests)
from .traffic import KINDS, PHASES, PlanTable, _Moves

HANDSHAKE_CYCLES = 2
PIPE_CYCLES_PER_ROW = 2
REGV_REGS_PER_CYCLE = 1
CONF_CYCLES_PER_PE = 1
START_OVERHEAD_CYCLES = 213  # fitted: EMAXV AlexNet C1 time (archmodels/emax/fit.py)
LOOP_END_BUBBLE_CYCLES = 2  # fitted: EMAXVR AlexNet conv+pool time (archmodels/emax/fit.py)

STATES = ("CONF", "LMMI", "LOAD", "REGV", "EXEC", "PRE_POST_EXEC", "DRAIN", "PLOAD", "PDRAIN", "POOL")


#: pairs from which :meth:`Link.at` keeps its gathers (an EMAXV chunk: ~33 k; one design point: tens)
AT_KEPT_FROM = 1024


class Link:
    """Per-point transfer parameters (arrays over the points of a batch)."""

    def __init__(self, clock_mhz, fsm_bus_bits, dram_gbps, dram_latency_ns, spm_gbps, spm_latency_ns, elem_bytes,
                 cols):
        args = (clock_mhz, fsm_bus_bits, dram_gbps, dram_latency_ns, spm_gbps, spm_latency_ns, elem_bytes, cols)
        self._gathered: tuple[np.ndarray, dict[Any, tuple[Any, np.ndarray]]] | None = None
        if all(np.shape(a) == (1,) for a in args):  # one design point: Python numbers, the same operations
            self._one(*(float(np.asarray(a, dtype=float)[0]) for a in args))
            return
        f = np.asarray(clock_mhz, dtype=float) * 1e6
        self.clock_hz = f
        self.bus_bytes = np.asarray(fsm_bus_bits, dtype=float) / 8.0
        self.dram_bpc = np.asarray(dram_gbps, dtype=float) * 1e9 / f
        self.spm_bpc = np.asarray(spm_gbps, dtype=float) * 1e9 / f
        self.lat_dram = np.ceil(np.asarray(dram_latency_ns, dtype=float) * f / 1e9 - 1e-9)
        self.lat_spm = np.ceil(np.asarray(spm_latency_ns, dtype=float) * f / 1e9 - 1e-9)
        self.elem = np.broadcast_to(np.asarray(elem_bytes, dtype=float), f.shape)
        self.cols = np.broadcast_to(np.asarray(cols, dtype=float), f.shape)

    def at(self, a: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """``a[pts]`` of a per-point array ``a`` (the link's or :class:`_PointConsts`'), gathered once per array for
        the last ``pts`` object asked about: an EMAXV chunk's choice, timing and metrics gather the clock, bus, element
        size, columns and DRAM energies at the same pairs' points two or three times. The answer is shared: read it,
        never write into it. Fewer than :data:`AT_KEPT_FROM` pairs (one design point's): gathered each time, as
        before (the memo's bookkeeping costs more than the gather)."""
        if len(pts) < AT_KEPT_FROM:
            return a[pts]
        memo = self._memo(pts)
        got = memo.get(id(a))
        if got is None:
            got = memo[id(a)] = (a, a[pts])  # (``a`` kept: its id stays its own while the memo holds it)
        return got[1]

    def _memo(self, pts: np.ndarray) -> dict[Any, tuple[Any, np.ndarray]]:
        """The values kept for the pairs ``pts`` (a new, empty memo for a new ``pts`` object)."""
        memo = self._gathered
        if memo is None or memo[0] is not pts:
            memo = self._gathered = (pts, {})
        return memo[1]

    def _one(self, clock_mhz: float, bus_bits: float, dram_gbps: float, dram_latency_ns: float, spm_gbps: float,
             spm_latency_ns: float, elem: float, cols: float) -> None:
        """The arrays of one point from its numbers (``np.ceil`` as :func:`_ceil`): the same bits as the numpy path."""
        f = clock_mhz * 1e6
        self.clock_hz = np.array([f])
        self.bus_bytes = np.array([bus_bits / 8.0])
        self.dram_bpc = np.array([dram_gbps * 1e9 / f])
        self.spm_bpc = np.array([spm_gbps * 1e9 / f])
        self.lat_dram = np.array([_ceil(dram_latency_ns * f / 1e9 - 1e-9)])
        self.lat_spm = np.array([_ceil(spm_latency_ns * f / 1e9 - 1e-9)])
        self.elem = np.array([elem])
        self.cols = np.array([cols])


def words(nbytes: np.ndarray, aligned: np.ndarray, bus: np.ndarray, elem: np.ndarray) -> np.ndarray:
    """Bus words moved by one transfer of ``nbytes``: activation rows start at any element offset
    (average tail), weight blocks are laid out aligned by the host."""
    return np.where(aligned > 0, np.ceil(nbytes / bus - 1e-9), np.maximum(nbytes, nbytes + bus - elem) / bus)


def _words_of(nbytes: np.ndarray, weight: float, bus: np.ndarray, elem: np.ndarray) -> np.ndarray:
    """:func:`words` of transfers of one kind (``weight`` a number, 1.0 = a weight block; ``nbytes``, ``bus`` and
    ``elem`` of one shape): only the branch ``np.where`` would take for every element (the same values)."""
    return np.ceil(nbytes / bus - 1e-9) if weight > 0 else np.maximum(nbytes, nbytes + bus - elem) / bus


def _column_words(b: _Moves, j: int, pts: np.ndarray, link: Link) -> np.ndarray:
    """:func:`_words_of` of read column ``j`` of block ``b`` at the pairs' points ``pts`` (its transfers' bus words;
    weight 1 for kind 1), once per (block, column) and ``pts`` object: an EMAXV chunk's choice prices the transfer
    columns (:func:`_dense_flows`) and its report the same columns' reads (:func:`_dense_reads`). Shared: only read."""
    memo = link._memo(pts)
    key = ("words", id(b), j)
    got = memo.get(key)
    if got is None:  # (``b`` kept: its id stays its own while the memo holds it)
        got = memo[key] = (b, _words_of(b.col("rd_each", j), 1.0 if b.rd_kind[j] == 1 else 0.0, link.at(link.bus_bytes, pts),
                                        link.at(link.elem, pts)))
    return got[1]


def _entry_words(each: np.ndarray, weight: np.ndarray, e: np.ndarray, pt: np.ndarray, link: Link) -> np.ndarray:
    """:func:`words` of sub-table entries ``e`` at points ``pt``; once per entry when every point shares the
    bus width and element size (the usual batch), else per (entry, point)."""
    bus, elem = link.bus_bytes[pt], link.elem[pt]
    if len(pt) and (bus == bus[0]).all() and (elem == elem[0]).all():
        if len(e) <= len(each):  # no more entries than the table lists (one design point: each entry once)
            return words(each[e], weight[e], bus[:1], elem[:1])
        used, inv = np.unique(e, return_inverse=True)
        return words(each[used], weight[used], bus[:1], elem[:1])[inv.reshape(-1)]
    return words(each[e], weight[e], bus, elem)


def _expand(sub: dict[str, np.ndarray], n_plans: int, rows: np.ndarray,
            every: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(pair, entry) index pairs: every entry of sub-table ``sub`` of the plan of each pair, in table order.
    ``every``: ``rows`` are the table's plans in order (:func:`_every`; one design point): pair k is plan k, so the
    pairs are the entries' plans (listed in plan order) and the entries all of them."""
    if every:
        return sub["plan"], np.arange(len(sub["plan"]))
    per = np.bincount(sub["plan"], minlength=n_plans)
    start = np.cumsum(per) - per
    cnt = per[rows]
    pair = np.repeat(np.arange(len(rows)), cnt)
    entry = np.repeat(start[rows] - (np.cumsum(cnt) - cnt), cnt) + np.arange(cnt.sum())
    return pair, entry


class _Take:
    """``a[idx]`` of arrays ``a``, or ``a`` itself when ``every`` (idx is 0, 1, ..., len(a) - 1: the same values, no
    copy; the arrays taken are only read)."""

    def __init__(self, idx: np.ndarray, every: bool):
        self.idx, self.every, self.rows = idx, every, rows_getter(idx)  # (one design point's: a[idx], no call)

    def __call__(self, a: np.ndarray) -> np.ndarray:
        return a if self.every else self.rows(a, self.idx)


def _every(tab: PlanTable, rows: np.ndarray) -> bool:
    """Whether the pairs ``rows`` are the plans of ``tab``, each once, in order (one design point's choice)."""
    return len(rows) == len(tab) and bool((rows == np.arange(len(rows))).all())


def _sums(n: int, *parts: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per segment 0..n-1, the sum of the (segment, value) entries of ``parts``, added one by one in order (float64:
    np.bincount's sums with weights; one part is passed as it is)."""
    if len(parts) == 1:
        return np.bincount(parts[0][0], weights=parts[0][1], minlength=n).astype(float, copy=False)
    seg = np.concatenate([p[0] for p in parts])
    return np.bincount(seg, weights=np.concatenate([p[1] for p in parts]), minlength=n).astype(float, copy=False)


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
    """:func:`pair_states` for each ``for_choice`` of ``variants`` (the shared part computed once): the transfers'
    sums in Python numbers for a few pairs of a few transfers each (:func:`_few_flows`), else from the transfer
    sub-tables (:func:`_entry_flows`; the same bits)."""
    if _few(tab, rows):
        flows = _few_flows(tab, rows, pts, link, variants)
    else:
        block = _dense(tab, rows)
        parts = _dense_parts(tab, rows) if block is None else None
        flows = (_dense_flows(block, tab.plan["host"], pts, link, variants) if block is not None else
                 _entry_flows(tab, rows, pts, link, variants) if parts is None else
                 _parts_flows(parts, _Take(rows, _every(tab, rows))(tab.plan["host"]), pts, link, variants))
    return _states(tab, rows, pts, link, variants, flows)


#: transfer and host columns up to which :func:`_dense` lets every plan's sums be taken over the block's [plans,
#: columns] matrices column by column (EMAXV: 4 transfer columns and a host read) instead of listing the transfers
#: first (``PlanTable.xfer``, ``read``: nonzero, gathers, bincount)
DENSE_COLUMNS_UPTO = 8


def _dense(tab: PlanTable, rows: np.ndarray) -> _Moves | None:
    """The table's one block, when the pairs ``rows`` are its plans, each once, in order (:func:`_every`), all in
    one :class:`_Moves` block (its rows the table's plans in order) of few columns (:data:`DENSE_COLUMNS_UPTO`):
    an EMAXV chunk's choice (one candidate per (layer, point)); else None."""
    if len(tab.moves) != 1:
        return None
    block, at = tab.moves[0]
    if (not isinstance(block, _Moves) or block.width("rd_on") + block.width("h_on") > DENSE_COLUMNS_UPTO
            or len(at) != len(tab) or not _every(tab, rows) or not (at == np.arange(len(at))).all()):
        return None
    return block


#: pairs from which :func:`_dense_parts` prices the transfers column by column over the blocks' [plans, columns]
#: matrices whatever their width (EMAXVR: ~20 columns, ~10 of them used by a plan; a chunk's choice prices ~20 k
#: pairs, its report ~6 k) instead of listing them first (nonzero, ~10 gathers, bincount); below (one design
#: point's ~50 pairs), the sub-tables: fewer numpy calls
DENSE_PAIRS_FROM = 1024


def _dense_parts(tab: PlanTable, rows: np.ndarray, reads: bool = False
                 ) -> list[tuple[_Moves, np.ndarray | slice | None]] | None:
    """The pairs ``rows`` block by block, when there are :data:`DENSE_PAIRS_FROM` or more and every block is a
    :class:`_Moves`: per block holding pairs, (its rows of those pairs as a block, in pair order: the block itself
    when they are its rows in order; the pairs' positions: None when they are every pair in order, a slice when
    consecutive); else None. ``reads``: only the DRAM and host reads' matrices gathered (:func:`_reads_of`)."""
    if len(rows) < DENSE_PAIRS_FROM or not all(isinstance(b, _Moves) for b, _ in tab.moves):
        return None
    take = _reads_of if reads else _Moves.take
    if len(tab.moves) == 1 and len(tab.moves[0][1]) == len(tab):  # (at increases: the block's rows are the plans)
        block = tab.moves[0][0]
        return [(block if _every(tab, rows) else take(block, rows), None)]
    which = np.full(len(tab), -1, dtype=np.int64)
    local = np.empty(len(tab), dtype=np.int64)
    for b, (_, at) in enumerate(tab.moves):
        which[at] = b
        local[at] = np.arange(len(at))
    wb, lr = which[rows], local[rows]
    if (wb < 0).any():  # (a plan in no block moves nothing: the sub-tables list none of it)
        return None
    parts = []
    for b, (block, _) in enumerate(tab.moves):
        sel = np.flatnonzero(wb == b)
        if not len(sel):
            continue
        r = lr[sel]
        whole = len(r) == len(block.rd_on) and bool((r == np.arange(len(r))).all())
        at = (None if len(sel) == len(rows) else slice(int(sel[0]), int(sel[-1]) + 1)
              if int(sel[-1]) - int(sel[0]) + 1 == len(sel) else sel)  # (sel increases)
        parts.append((block if whole else take(block, r), at))
    return parts


def _reads_of(block: _Moves, rows: np.ndarray) -> _Moves:
    """Plans ``rows`` of ``block`` with the matrices :func:`_dense_reads` and :func:`_read_order` read gathered (the
    DRAM reads, the host reads); the transfers' matrices empty (none of their rows is read)."""
    return _Moves(block.xfer_on[:0], block.phase, block.write, block.bursts[:0], block.per_burst[:0], block.par[:0],
                  block.dram[:0], block.rd_on[rows], block.rd_count[rows], block.rd_each[rows], block.rd_kind,
                  block.h_on[rows], block.h_bytes[rows], block.h_kind)


def _at(a: np.ndarray, sel: np.ndarray | slice | None) -> np.ndarray:
    """``a[sel]``, or ``a`` itself for None (every pair, in order)."""
    return a if sel is None else a[sel]


def _scatter(parts: list[tuple[np.ndarray, np.ndarray | slice | None]], n: int, width: int) -> np.ndarray:
    """Per-pair values of the parts (``width`` per pair, flat pair by pair) at their pairs' positions (None:
    every pair, in order; a slice: consecutive ones) in one flat array of ``n`` pairs."""
    if len(parts) == 1 and parts[0][1] is None:
        return parts[0][0]
    out = np.empty((n, width))
    for v, sel in parts:
        out[slice(None) if sel is None else sel] = v.reshape(-1, width)
    return out.reshape(-1)


def _parts_flows(parts: list[tuple[_Moves, np.ndarray | slice | None]], host: np.ndarray, pts: np.ndarray, link: Link,
                 variants: tuple[bool, ...]) -> dict[str, np.ndarray]:
    """:func:`_entry_flows` of the pairs block by block (:func:`_dense_parts`; ``host``: the pairs' host bytes),
    each block's pairs column by column (:func:`_dense_flows`: the same bits per pair), put at their positions;
    ``dram_r`` and ``spm_r`` unless no pair stages a byte, as :func:`_entry_flows` decides."""
    n, nph = len(pts), len(PHASES)
    got = []
    for block, sel in parts:
        got.append((_dense_flows(block, _at(host, sel), _at(pts, sel), link, variants, always=True), sel))
    out = {k: _scatter([(f[k], sel) for f, sel in got], n, 1 if k in ("_dram_read", "_dram_write") else nph)
           for k in got[0][0]}
    if False in variants and _same_sums(variants, out):
        del out["dram_r"], out["spm_r"]
    return out


def _dense_flows(b: _Moves, host: np.ndarray, pts: np.ndarray, link: Link,
                 variants: tuple[bool, ...], always: bool = False) -> dict[str, np.ndarray]:
    """:func:`_entry_flows` of every plan of block ``b`` (pair k = plan k at point ``pts[k]``; ``host``: the plans'
    host bytes) column by column over its matrices: each (pair, phase) sum from 0.0 adds the phase's transfer columns
    in slot order, then (PLOAD) the staging columns, as the sub-tables list them; a column a plan does not use adds
    +0.0 (a sum from 0.0 is never -0.0: x + 0.0 is x) and gives -inf to the longest burst (the maximum of the values
    in the same order; none: 0.0 as :func:`_maxima`). The same bits as the sub-tables' bincounts. ``always``: the
    report's ``dram_r`` and ``spm_r`` even if no plan stages a byte (:func:`_parts_flows` decides over every block)."""
    n, nph = len(pts), len(PHASES)
    ns = len(b.phase)
    bus, elem = link.at(link.bus_bytes, pts), link.at(link.elem, pts)
    lat_d, lat_s = link.lat_dram[pts], link.lat_spm[pts]
    choice, report = True in variants, False in variants
    # each phase's sums from 0.0, as 1-D arrays (None: no column yet, 0.0): a phase's first column 0.0 + v, then
    # in place; the [pairs, phases] results written column by column at the end (:func:`_by_pair`)
    work: list = [None] * nph
    dram_x: list = [None] * nph
    spm_x: list = [None] * nph
    longest: list = [None] * nph
    rd, wr = 0.0 + host, None  # (the host's reads first: a sum from 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (columns a plan does not use: discarded)
        for j in np.argsort(b.phase, kind="stable").tolist():  # phase by phase, slot order within a phase
            ph = int(b.phase[j])
            on = b.col("xfer_on", j)
            read = 0.0 if b.write[j] else 1.0
            count, each = b.col("rd_count", j), b.col("rd_each", j)
            dram = b.col("dram", j).astype(float)
            w = _column_words(b, j, pts, link)  # (_words_of(each, 1.0 if kind 1 else 0.0, bus, elem))
            # (``read`` is 1.0 or 0.0 for the whole column: x * 1.0 is x, bit for bit, NaN included, so a read
            # column skips its multiplications by 1.0, and each column's ``np.where(read > 0, ...)`` is one branch)
            lat = np.where(dram > 0, lat_d, lat_s)
            cost = HANDSHAKE_CYCLES + (lat if read > 0 else read * lat) + w
            moved = count * (w * bus if read > 0 else each)
            rounds = b.col("bursts", j) * np.ceil(b.col("per_burst", j) / b.col("par", j) - 1e-9)
            md = moved * dram
            if work[ph] is None:
                work[ph] = 0.0 + np.where(on, count * cost, 0.0)
                dram_x[ph] = 0.0 + np.where(on, md, 0.0)
                spm_x[ph] = 0.0 + np.where(on, moved * (1 - dram), 0.0)
            else:  # (the phase's own arrays: added in place)
                work[ph] += np.where(on, count * cost, 0.0)
                dram_x[ph] += np.where(on, md, 0.0)
                spm_x[ph] += np.where(on, moved * (1 - dram), 0.0)
            r = np.where(on, rounds * cost, -np.inf)
            longest[ph] = r if longest[ph] is None else np.maximum(longest[ph], r)
            rd = rd + np.where(on, md if read > 0 else md * read, 0.0)
            wr = _plus(wr, np.where(on, md * (1 - read) if read > 0 else md, 0.0))
        stage = [np.where(b.col("rd_on", j), _read_bytes(b, j, bus, elem), 0.0)  # staging reads (on: a positive
                 for j in range(ns, b.width("rd_on"))]                              # count), in order
        staged = None
        for v in stage:
            staged = _plus(staged, v)
    if wr is None:
        wr = np.zeros(n)
    longest = [None if v is None else np.maximum(0.0, v) for v in longest]
    out = {"work": _by_pair(work, n), "longest": _by_pair(longest, n)}
    if choice:
        if stage:  # the staging reads after the phase's transfers (PLOAD), one by one, and after the reads
            dc, sc = list(dram_x), list(spm_x)
            rd_c = rd
            for v in stage:
                dc[_PLOAD_AT] = _plus(dc[_PLOAD_AT], v)
                sc[_PLOAD_AT] = _plus(sc[_PLOAD_AT], v)
                rd_c = rd_c + v
            out["dram_c"], out["spm_c"], out["_dram_read"] = _by_pair(dc, n), _by_pair(sc, n), rd_c
        else:
            out["dram_c"], out["spm_c"], out["_dram_read"] = _by_pair(dram_x, n), _by_pair(spm_x, n), rd
        out["_dram_write"] = wr
    if report:
        if stage:
            st: list = [None] * nph
            st[_PLOAD_AT] = staged
            out["staged"] = _by_pair(st, n)
        else:  # no staging column (EMAXV): every sum is the +0.0 it starts from, as np.zeros gives it (no transposing
            out["staged"] = np.zeros(n * nph)  # copy of a [phases, pairs] matrix of zeros)
        if always or not _same_sums(variants, out):
            out["dram_r"] = _by_pair(dram_x, n)
            out["spm_r"] = _by_pair(spm_x, n)
    return out


def _by_pair(rows: list[np.ndarray | None], n: int) -> np.ndarray:
    """The [pairs, phases] matrix of the phases' arrays over the pairs (None: 0.0), flat pair by pair: each phase
    written into its column (the same bits as a [phases, pairs] matrix's ``.T.reshape(-1)``, whose transposing copy
    loops over 5 elements at a time)."""
    out = np.empty((n, len(rows)))
    for ph, v in enumerate(rows):
        out[:, ph] = 0.0 if v is None else v
    return out.reshape(-1)


_PLOAD_AT = PHASES.index("pload")


def _plus(acc: np.ndarray | None, v: np.ndarray) -> np.ndarray:
    """``acc + v``, where None is a sum from 0.0 not started: ``0.0 + v`` (the bits of ``np.zeros(n) + v``: 0.0 is
    never NaN, so no two NaN meet, and 0.0 + x is x but for -0.0), without the zeros."""
    return 0.0 + v if acc is None else acc + v


def _read_bytes(b: _Moves, j: int, bus: np.ndarray, elem: np.ndarray) -> np.ndarray:
    """Bytes each plan of block ``b`` reads by read column ``j`` (count x bus words x bus), as the sub-tables
    price a read entry (``PlanTable.read``: ``words(each, weight, ...)``, weight 1 for kind 1)."""
    return b.col("rd_count", j) * _words_of(b.col("rd_each", j), 1.0 if b.rd_kind[j] == 1 else 0.0, bus, elem) * bus


def _entry_flows(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link,
                 variants: tuple[bool, ...]) -> dict[str, np.ndarray]:
    """Per (pair, phase) the transfers' bus work, longest burst and DRAM / SPM bytes, and per pair the DRAM
    bytes read and written (the sums :func:`_states` needs for ``variants``; [pairs x phases] flat, pair by pair),
    from the sub-tables of every transfer: each sum from 0.0, its entries added one by one in table order
    (np.bincount)."""
    n, nph = len(rows), len(PHASES)
    x = tab.xfer
    every = _every(tab, rows)
    pair, e = _expand(x, len(tab), rows, every)
    pt = pts[pair]
    bus = link.bus_bytes[pt]
    at = _Take(e, every)
    count, each, read, dram = at(x["count"]), at(x["each"]), at(x["read"]), at(x["dram"])
    w = _entry_words(x["each"], x["weight"], e, pt, link)
    cost = HANDSHAKE_CYCLES + read * np.where(dram > 0, link.lat_dram[pt], link.lat_spm[pt]) + w
    moved = count * np.where(read > 0, w * bus, each)
    seg = pair * nph + at(x["phase"])
    work = _sums(n * nph, (seg, count * cost))
    longest = _maxima(n * nph, seg, at(x["rounds"]) * cost)
    s = tab.stage
    s_pair, s_e = _expand(s, len(tab), rows, every)
    s_pt = pts[s_pair]
    at = _Take(s_e, every)
    st_b = at(s["count"]) * words(at(s["each"]), at(s["weight"]), link.bus_bytes[s_pt], link.elem[s_pt]) \
        * link.bus_bytes[s_pt]
    s_seg = s_pair * nph + PHASES.index("pload")
    out = {"work": work, "longest": longest}
    if True in variants:
        out["dram_c"] = _sums(n * nph, (seg, moved * dram), (s_seg, st_b))
        out["spm_c"] = _sums(n * nph, (seg, moved * (1 - dram)), (s_seg, st_b))
        host = _Take(rows, every)(tab.plan["host"])
        out["_dram_read"] = _sums(n, (np.arange(n), host), (pair, moved * dram * read), (s_pair, st_b))
        out["_dram_write"] = _sums(n, (pair, moved * dram * (1 - read)))
    if False in variants:
        out["staged"] = _sums(n * nph, (s_seg, st_b))
        if not _same_sums(variants, out):
            out["dram_r"] = _sums(n * nph, (seg, moved * dram))
            out["spm_r"] = _sums(n * nph, (seg, moved * (1 - dram)))
    return out


def _same_sums(variants: tuple[bool, ...], flows: dict[str, np.ndarray]) -> bool:
    """Whether the report's states are the choice's (both asked, no staging read moves a byte): the choice adds the
    staging reads among the transfers' sums, the report adds their sum after; with every staging value +-0.0 both
    give the transfers' sum (a sum from 0.0 is never -0.0, and x + +-0.0 is x then)."""
    return True in variants and False in variants and not flows["staged"].any()


#: (pair, column) cells up to which :func:`_pair_states` and :func:`pair_dram_reads` sum the transfers in Python
#: numbers (:func:`_few_flows`, :func:`_few_reads`): one EMAXV design point (~18 plans of 4 transfer columns) pays
#: more for the sub-tables' ~60 numpy calls than for a loop over its transfers; EMAXVR's point (~54 plans of ~20
#: columns, ~500 transfers) does not
FEW_CELLS = 160


def _few(tab: PlanTable, rows: np.ndarray) -> bool:
    """Whether the pairs ``rows`` of ``tab`` have few transfer cells and every block is a :class:`_Moves`."""
    if not len(rows) or not all(isinstance(b, _Moves) for b, _ in tab.moves):
        return False
    if len(tab.moves) == 1:  # (one block, as a rule: no generator)
        b = tab.moves[0][0]
        return len(rows) * (b.width("rd_on") + b.width("h_on")) <= FEW_CELLS
    return len(rows) * max(b.width("rd_on") + b.width("h_on") for b, _ in tab.moves) <= FEW_CELLS


def _ceil(x: float) -> float:
    """``np.ceil`` of a Python float (-0.0 for x in (-1, 0], infinities and NaN as they are)."""
    if x - x != 0:
        return x
    r = float(math.ceil(x))
    return r if r != 0 else math.copysign(0.0, x)


def _max(a: float, b: float) -> float:
    """``np.maximum`` of two Python floats (NaN wins; a tie, e.g. 0.0 and -0.0, gives ``b``, as numpy does)."""
    return a if a > b or a != a else b


def _word(nbytes: float, aligned: float, bus: float, elem: float) -> float:
    """:func:`words` of one transfer in Python numbers."""
    return _ceil(nbytes / bus - 1e-9) if aligned > 0 else _max(nbytes, nbytes + bus - elem) / bus


class _Lists:
    """A block's [plans, columns] matrices as Python lists (rows ``lr``), and its per-column numbers."""

    def __init__(self, block: _Moves, lr: np.ndarray | None):
        ns = len(block.phase)
        self.ns = ns
        self.by_phase = np.argsort(block.phase, kind="stable").tolist()  # the sub-tables' order of a plan's transfers
        self.phase = block.phase.tolist()
        self.read = [0.0 if w else 1.0 for w in block.write.tolist()]
        self.weight = [1.0 if k == 1 else 0.0 for k in block.rd_kind.tolist()]
        #: per transfer column in the sub-tables' order: (column, phase, read, weight); the staging columns
        self.xfer_cols = [(j, self.phase[j], self.read[j], self.weight[j]) for j in self.by_phase]
        self.stage_cols = range(ns, block.rd_on.shape[1])
        self.rd_kind = block.rd_kind.tolist()
        self.h_kind = block.h_kind.tolist()
        if lr is None:  # every row, in order
            self.on, self.count, self.each = block.xfer_on.tolist(), block.rd_count.tolist(), block.rd_each.tolist()
            self.rd_on, self.dram = block.rd_on.tolist(), block.dram.tolist()
            self.bursts, self.per_burst, self.par = block.bursts.tolist(), block.per_burst.tolist(), block.par.tolist()
            self.h_on, self.h_bytes = block.h_on.tolist(), block.h_bytes.tolist()
            return
        self.on, self.count, self.each = (block.xfer_on[lr].tolist(), block.rd_count[lr].tolist(),
                                          block.rd_each[lr].tolist())
        self.rd_on = block.rd_on[lr].tolist()
        self.dram = block.dram[lr].tolist()
        self.bursts, self.per_burst, self.par = (block.bursts[lr].tolist(), block.per_burst[lr].tolist(),
                                                 block.par[lr].tolist())
        self.h_on, self.h_bytes = block.h_on[lr].tolist(), block.h_bytes[lr].tolist()


def _few_blocks(tab: PlanTable, rows: np.ndarray) -> list[tuple[_Lists, int]]:
    """Per pair, (its block's lists, its row in them)."""
    if len(tab.moves) == 1:
        block, at = tab.moves[0]
        if len(at) == len(tab):  # (at increases: the block's rows are the table's plans)
            every = len(rows) == len(at) and bool((rows == np.arange(len(rows))).all())
            lists = _Lists(block, None if every else rows)
            return [(lists, i) for i in range(len(rows))]
    which = np.empty(len(tab), dtype=np.int64)
    local = np.empty(len(tab), dtype=np.int64)
    for b, (_, at) in enumerate(tab.moves):
        which[at] = b
        local[at] = np.arange(len(at))
    wb, lr = which[rows], local[rows]
    out: list = [None] * len(rows)
    for b, (block, _) in enumerate(tab.moves):
        sel = np.flatnonzero(wb == b)
        if len(sel):
            lists = _Lists(block, lr[sel])
            for i, k in enumerate(sel.tolist()):
                out[k] = (lists, i)
    return out


def _few_flows(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link,
               variants: tuple[bool, ...]) -> dict[str, np.ndarray]:
    """:func:`_entry_flows` in Python numbers, pair by pair from its block's rows: a pair's transfers in the
    sub-table's order (phase by phase, each phase in slot order; then the staging reads), every sum from 0.0 adding
    the same numbers in the same order (IEEE double either way; ``np.ceil`` and ``np.maximum`` as :func:`_ceil` and
    :func:`_max`)."""
    nph = len(PHASES)
    pload = PHASES.index("pload")
    choice, report = True in variants, False in variants
    bus_l, elem_l = link.bus_bytes[pts].tolist(), link.elem[pts].tolist()
    lat_d, lat_s = link.lat_dram[pts].tolist(), link.lat_spm[pts].tolist()
    host = tab.plan["host"][rows].tolist()
    keys = ["work", "longest"] + ["dram_c", "spm_c"] * choice + ["staged", "dram_r", "spm_r"] * report
    table = []  # per pair: the per-phase sums of keys, then its DRAM bytes read and written
    ceil, copysign = math.ceil, math.copysign
    for k, (b, i) in enumerate(_few_blocks(tab, rows)):
        bus, elem, l_dram, l_spm = bus_l[k], elem_l[k], lat_d[k], lat_s[k]
        on, count, each, dram = b.on[i], b.count[i], b.each[i], b.dram[i]
        bursts, per_burst, par = b.bursts[i], b.per_burst[i], b.par[i]
        work, longest, dram_x, spm_x = [0.0] * nph, [None] * nph, [0.0] * nph, [0.0] * nph
        rd, wr = 0.0 + host[k], 0.0
        for j, ph, read, weight in b.xfer_cols:
            if not on[j]:
                continue
            c, e = count[j], each[j]
            dr = 1.0 if dram[j] else 0.0
            if weight > 0:  # words(): np.ceil(e / bus - 1e-9) (see _ceil)
                x = e / bus - 1e-9
                w = x if x - x != 0 else (float(ceil(x)) or copysign(0.0, x))
            else:  # np.maximum(e, e + bus - elem) / bus (see _max)
                y = e + bus - elem
                w = (e if e > y or e != e else y) / bus
            cost = HANDSHAKE_CYCLES + read * (l_dram if dr > 0 else l_spm) + w
            moved = c * (w * bus if read > 0 else e)
            work[ph] += c * cost
            x = per_burst[j] / par[j] - 1e-9
            r = bursts[j] * (x if x - x != 0 else (float(ceil(x)) or copysign(0.0, x))) * cost
            v = longest[ph]
            longest[ph] = r if v is None else (v if v > r or v != v else r)
            md = moved * dr
            dram_x[ph] += md
            spm_x[ph] += moved * (1 - dr)
            rd += md * read
            wr += md * (1 - read)
        staged = [count[j] * _word(each[j], b.weight[j], bus, elem) * bus  # staging reads (on: a positive count)
                  for j in b.stage_cols if b.rd_on[i][j]]
        row = work + [0.0 if v is None else _max(0.0, v) for v in longest]
        if choice:
            if staged:
                dram_x_c, spm_x_c = list(dram_x), list(spm_x)
                for v in staged:
                    dram_x_c[pload] += v
                    spm_x_c[pload] += v
                    rd += v
                row += dram_x_c + spm_x_c
            else:
                row += dram_x + spm_x
        if report:
            st = [0.0] * nph
            for v in staged:
                st[pload] += v
            row += st + dram_x + spm_x
        row.append(rd)
        row.append(wr)
        table.append(row)
    m = np.array(table, dtype=float).reshape(len(rows), len(keys) * nph + 2)
    flows = {k: m[:, j * nph:(j + 1) * nph].reshape(-1) for j, k in enumerate(keys)}
    if choice:
        flows["_dram_read"], flows["_dram_write"] = m[:, -2].copy(), m[:, -1].copy()
    return flows


#: pairs from which :func:`_states` gathers each pair's link numbers once and repeats them over its phases (below:
#: gathered per phase, one call fewer)
STATES_REPEAT_FROM = 64


def _states(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link, variants: tuple[bool, ...],
            flows: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """The states of :func:`_pair_states` from the transfers' sums ``flows`` (:func:`_entry_flows`)."""
    n, nph = len(rows), len(PHASES)
    work, longest = flows["work"], flows["longest"]
    # each pair's link numbers repeated over its phases (gathered once per pair, not per phase; contiguous arrays:
    # numpy's loops as before, whose maximum of 0.0 and -0.0 a broadcast operand's loop may answer otherwise)
    if n >= STATES_REPEAT_FROM:
        bus_cols, dram_bpc, spm_bpc = (np.repeat(link.at(v, pts), nph) for v in (link.cols, link.dram_bpc, link.spm_bpc))
    else:  # (a few pairs, one design point's: fewer numpy calls)
        ptr = np.repeat(pts, nph)
        bus_cols, dram_bpc, spm_bpc = link.cols[ptr], link.dram_bpc[ptr], link.spm_bpc[ptr]
    at = _Take(rows, _every(tab, rows))
    col = {k: at(tab.plan[k]) for k in _STATE_COLS}
    exec_c = col["iterations"] + col["loop_ends"] * LOOP_END_BUBBLE_CYCLES
    ppe = col["activations"] * PIPE_CYCLES_PER_ROW * col["rows_used"]
    pool_fixed = START_OVERHEAD_CYCLES + np.ceil(col["pool_regs"] / REGV_REGS_PER_CYCLE) \
        + PIPE_CYCLES_PER_ROW * col["pool_rows_used"]
    pool_compute = col["pool_iterations"] + col["pool_loop_ends"] * LOOP_END_BUBBLE_CYCLES
    fixed = {
        "CONF": col["rows_used"] * link.at(link.cols, pts) * CONF_CYCLES_PER_PE,
        "LMMI": col["activations"] * START_OVERHEAD_CYCLES,
        "REGV": col["activations"] * np.ceil(col["regs"] / REGV_REGS_PER_CYCLE),
    }
    results = []
    same = _same_sums(variants, flows)
    for for_choice in variants:
        if same and not for_choice:
            continue
        out: dict[str, np.ndarray] = {}
        if for_choice:
            dram_b, spm_b = flows["dram_c"], flows["spm_c"]
            out["_dram_read"], out["_dram_write"] = flows["_dram_read"], flows["_dram_write"]
        else:
            staged = flows["staged"]
            dram_b = flows["dram_r"] + staged
            spm_b = flows["spm_r"] + staged
        bus_c = np.maximum(work / bus_cols, longest)
        # (np.maximum.reduce of the three, row after row: the same pairs, without stacking them first)
        ph = np.maximum(np.maximum(bus_c, dram_b / dram_bpc), spm_b / spm_bpc).reshape(n, nph)
        pl, pd = ph[:, 2], ph[:, 3]
        both = pl + pd
        exposed = np.maximum(0.0, both - (exec_c + ppe))
        share = np.divide(pl, both, out=np.zeros_like(pl), where=both > 0)
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
    if same:  # the report: the choice's states (its arrays), without the DRAM bytes by direction
        results.insert(variants.index(False), {k: results[0][k] for k in _STATE_KEYS})
    return results


#: the keys of a :func:`_pair_states` dict, in order (then ``_dram_read``, ``_dram_write`` for the choice)
_STATE_KEYS = STATES + ("_pload_total", "_pdrain_total")


def pair_dram_reads(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link) -> tuple[np.ndarray, np.ndarray]:
    """DRAM bytes read per data kind ([pairs, kinds], reads rounded to whole bus words, host reads exact)
    and their total, summed kind by kind in the order the plan names them (a few pairs of few transfers in
    Python numbers, :func:`_few_reads`: the same bits)."""
    if _few(tab, rows):
        return _few_reads(tab, rows, pts, link)
    block = _dense(tab, rows)
    if block is not None:
        return _dense_reads(block, pts, link)
    n, nk = len(rows), len(KINDS)
    parts = _dense_parts(tab, rows, reads=True)
    if parts is not None:  # block by block, column by column (the same bits per pair), at the pairs' positions
        got = [(_dense_reads(block, _at(pts, sel), link), sel) for block, sel in parts]
        return (_scatter([(v[0], sel) for v, sel in got], n, nk).reshape(n, nk),
                _scatter([(v[1], sel) for v, sel in got], n, 1))
    r, h = tab.read, tab.host
    every = _every(tab, rows)
    pair, e = _expand(r, len(tab), rows, every)
    pt = pts[pair]
    bus = link.bus_bytes[pt]
    h_pair, h_e = _expand(h, len(tab), rows, every)
    at, h_at = _Take(e, every), _Take(h_e, every)  # (every plan in order: the sub-tables as they are)
    out = _sums(n * (nk + 1),
                (pair * (nk + 1) + at(r["kind"]), at(r["count"]) * words(at(r["each"]), at(r["weight"]), bus, link.elem[pt]) * bus),
                (h_pair * (nk + 1) + h_at(h["kind"]), h_at(h["bytes"]))).reshape(n, nk + 1)
    order = _Take(rows, every)(tab.read_order)
    named = out.ravel()[np.arange(n)[:, None] * (nk + 1) + order]  # [pair, j]: its j-th named kind's bytes
    total = np.zeros(n)
    for j in range(nk):
        total = total + named[:, j]
    return out[:, :nk], total


def _dense_reads(b: _Moves, pts: np.ndarray, link: Link) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pair_dram_reads` of every plan of block ``b`` (pair k = plan k, :func:`_dense`) column by column: per
    kind from 0.0 its read columns in order (transfers, then staging), then its host columns, a column a plan does
    not read adding +0.0; the total kind by kind in the plan's first-named order (:meth:`_Moves.read_order`)."""
    n, nk = len(pts), len(KINDS)
    bus = link.at(link.bus_bytes, pts)
    by_kind: list = [None] * (nk + 1)  # (each kind's sum from 0.0: its first column 0.0 + v, then in place)

    def add(k: int, v: np.ndarray) -> None:
        if by_kind[k] is None:
            by_kind[k] = 0.0 + v
        else:
            by_kind[k] += v

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (columns a plan does not read: discarded)
        for j in range(b.width("rd_on")):  # (_read_bytes, the words of each column once per chunk)
            add(int(b.rd_kind[j]), np.where(b.col("rd_on", j),
                                            b.col("rd_count", j) * _column_words(b, j, pts, link) * bus, 0.0))
    for j in range(b.width("h_on")):
        add(int(b.h_kind[j]), np.where(b.col("h_on", j), b.col("h_bytes", j), 0.0))
    out = _by_pair(by_kind, n).reshape(n, nk + 1)  # [pair, kind] (kinds without a column: 0.0)
    blocks = _kind_blocks(b)
    if blocks is not None:  # every plan names its kinds in an order within ``blocks`` (EMAXV's blocks)
        total = None
        for k in blocks:  # (a strided column, as the gathered one below: numpy's loop for it keeps NaN signs alike)
            total = _plus(total, out[:, k])
        return out[:, :nk], np.zeros(n) if total is None else total
    named = out.ravel()[np.arange(n)[:, None] * (nk + 1) + _read_order(b)]  # [pair, j]: its j-th named kind's bytes
    total = np.zeros(n)
    for j in range(nk):
        total = total + named[:, j]
    return out[:, :nk], total


def _kind_blocks(b: _Moves) -> list[int] | None:
    """The kinds of a block's named columns (reads, then host reads) in column order, when each kind's columns are
    contiguous (EMAXV: input, psum, psum, output, then the weight's host read); else None. Then every plan names
    its kinds in this order (its first column of a kind lies in the kind's run), with the kinds it does not name
    in between: their bytes are exactly +0.0 (sums from 0.0 of +0.0 where a column is not read), and adding +0.0
    to a running total from 0.0 (never -0.0) gives it back bit for bit, NaN included. So the total summed kind by
    kind in this order is :func:`_dense_reads`' total in each plan's first-named order (:meth:`_Moves.read_order`),
    without finding each plan's order. (Two NaNs of different signs meeting keep the sign numpy's loop picks: a
    contiguous operand's SIMD loop may pick the other one, so the caller adds strided columns, as before.)"""
    kinds = b.rd_kind.tolist() + b.h_kind.tolist()
    runs = [k for j, k in enumerate(kinds) if j == 0 or kinds[j - 1] != k]
    if len(set(runs)) != len(runs) or not all(0 <= k < len(KINDS) for k in runs):
        return None
    return [int(k) for k in runs]


def _read_order(b: _Moves) -> np.ndarray:
    """:meth:`_Moves.read_order` of a block (:func:`_dense`, :func:`_dense_parts`): a plan's order depends only on
    which columns it names (reads, then host reads) and their kinds, so it is found once per distinct set of named
    columns (a code of one bit per column: a few of them in a chunk) and gathered per plan."""
    if b.rd_on.shape[1] + b.h_on.shape[1] > 62:  # (a code would not fit an int64)
        return b.read_order()
    ons = [b.rd_on[:, j] for j in range(b.rd_on.shape[1])] + [b.h_on[:, j] for j in range(b.h_on.shape[1])]
    kinds = b.rd_kind.tolist() + b.h_kind.tolist()
    code = np.zeros(len(b.rd_on), dtype=np.int64)
    for j, on in enumerate(ons):
        code |= on.astype(np.int64) << j
    if len(ons) <= READ_ORDER_TABLE_UPTO:
        present = np.flatnonzero(np.bincount(code, minlength=1 << len(ons)))
        at = np.zeros(1 << len(ons), dtype=np.int64)
        at[present] = np.arange(len(present))
        inv = at[code]
    else:  # (many columns, EMAXVR's ~25: the distinct codes by a sort, not a table of 2^columns)
        present, inv = np.unique(code, return_inverse=True)
    return _order_of_named([(present >> j) & 1 > 0 for j in range(len(ons))], kinds, len(present))[inv.reshape(-1)]


#: named columns up to which :func:`_read_order` finds the distinct sets of named columns by a table of every set
#: (2^columns entries) instead of a sort
READ_ORDER_TABLE_UPTO = 12


def _order_of_named(ons: list[np.ndarray], kinds: list[int], n: int) -> np.ndarray:
    """Per row, the kinds its named columns (``ons[j]``: which rows name column j, of kind ``kinds[j]``) name, in
    first-named order, padded with len(KINDS): each kind's first named column by one ``where`` per column from the
    last to the first, then a stable sort of the positions (:meth:`_Moves.read_order`'s numbers)."""
    nk, big = len(KINDS), len(ons)
    pos = np.full((nk, n), big, dtype=np.int64)
    for j in range(big - 1, -1, -1):  # a kind's earlier column named by a row overwrites its later ones
        pos[kinds[j]] = np.where(ons[j], j, pos[kinds[j]])
    pos = pos.T
    order = np.argsort(pos, axis=1, kind="stable")
    # (pos taken in argsort order is pos sorted: np.sort, as _Moves.entries)
    return np.where(np.sort(pos, axis=1) == big, nk, order)


def _few_reads(tab: PlanTable, rows: np.ndarray, pts: np.ndarray, link: Link) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pair_dram_reads` in Python numbers, pair by pair from its block's rows: per kind from 0.0 its reads in
    column order (transfers in slot order, then staging), then its host reads, as the sub-tables list them; the
    kinds' order of a plan from the first column naming each (:meth:`~archmodels.emax.traffic._Moves.read_order`)."""
    nk = len(KINDS)
    bus_l, elem_l = link.bus_bytes[pts].tolist(), link.elem[pts].tolist()
    by_kind: list[list[float]] = []
    total: list[float] = []
    for k, (b, i) in enumerate(_few_blocks(tab, rows)):
        bus, elem = bus_l[k], elem_l[k]
        got = [0.0] * (nk + 1)
        first: list[int] = []  # kinds in first-named order
        rd_on, count, each = b.rd_on[i], b.count[i], b.each[i]
        for j, kind in enumerate(b.rd_kind):
            if rd_on[j]:
                got[kind] += count[j] * _word(each[j], b.weight[j], bus, elem) * bus
                if kind not in first:
                    first.append(kind)
        for j, kind in enumerate(b.h_kind):
            if b.h_on[i][j]:
                got[kind] += b.h_bytes[i][j]
                if kind not in first:
                    first.append(kind)
        t = 0.0
        for kind in first + [nk] * (nk - len(first)):
            t = t + got[kind]
        by_kind.append(got[:nk])
        total.append(t)
    return np.array(by_kind, dtype=float).reshape(len(rows), nk), np.array(total, dtype=float)

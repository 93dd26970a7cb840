"""Schedules and data movement of mapped layers: SPM plan, DRAM/SPM/LMM traffic.

A *plan* is a mapping (:mod:`archmodels.emax.mapper`) plus how its data
moves (spec `emax.md` §2, §3): which starts run, where partial sums live
between input-channel passes, what the scratchpad (SPM) holds, and every
group of LMM transfers with its size, count, source and state. Plans are
structural (no clock, bandwidth or bus width); :mod:`archmodels.emax.timing`
turns them into cycles and rounds DRAM reads to bus words.

The builders (:func:`emaxv_plans`, :func:`emaxvr_plans`, :func:`fc_plans`)
take one layer shape and many rows (a mapping with its hardware and
context, e.g. every structural combination of a batch) and return a
:class:`PlanTable`: numpy over the rows, one rule set for all of them.

Data movement rules
-------------------
* EMAXV (§2): each start computes one output row segment of one output
  channel for one input-channel pass. The input rows of a (pass, output
  row) stay in the LMMs across the output-channel starts; each kernel row
  is transferred once per CGRA row holding its loads (no vertical
  broadcast). Partial sums go to DRAM and back between passes; weights are
  register constants (REGV), read once by the host.
* EMAXVR (§3): broadcast sends each input row once per use. Without an SPM
  everything comes from DRAM: input rows are re-read for every output row
  that uses them (kernel height / stride times) and partial sums go to DRAM
  between passes. With an SPM, partial sums stay in the SPM and inputs are
  staged so that DRAM is read once per accumulation unit.
* If the SPM cannot hold the partial sums of a group (plus the staged
  inputs), the outermost loop of the start is split into *bands*; each band
  runs all passes before the next. Output-row bands re-read the weights
  (unless they are staged in the SPM) and the input rows of the kernel halo;
  output-channel bands re-read the input. ``starts`` counts the starts of
  one sweep over the output (the thesis's count, IC/ICpar per group);
  ``activations`` = starts x bands is what the array actually runs and pays
  the per-start overhead for.
* Fused pooling (§3.1 "the conv result in SPM is pooled"): with the default
  ``after_conv`` schedule the pooling pass runs after the convolution's last
  start over its whole result; the part of the result that did not stay in
  the SPM was written to DRAM and is read back (``spill``). Only the pooled
  output goes to DRAM. ``per_band`` (not built in the papers) pools each
  band while it is still in the SPM.
* A layer's final output stays in the SPM for the next layer when both fit
  (decided by :mod:`archmodels.emax`); the next layer then reads its input
  from the SPM.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from . import mapper as _mapper
from .mapper import ConvShape, FCShape, SlotColumns, _rows_of, nonzero_2d, rows_getter

KINDS = ("input", "weight", "psum", "output", "spill")
PHASES = ("load", "drain", "pload", "pdrain", "pool")
#: where the partial sums of a plan live between passes (``psum_home`` column codes)
PSUM_HOMES = ("-", "spm", "dram")
_LOAD, _DRAIN, _PLOAD, _PDRAIN, _POOL = range(len(PHASES))
_NONE, _SPM, _DRAM = range(len(PSUM_HOMES))


# ---------------------------------------------------------------- plans as columns
@dataclass(frozen=True)
class _Moves:
    """The data movement of a block of plans (one builder call) as [plans, columns] matrices: what
    :class:`PlanTable` lists as entry tables, kept unexpanded because most plans are planned in a context
    that no combination ends up using; a table expands only the plans it keeps (:meth:`PlanTable.take`)."""

    xfer_on: np.ndarray  # [plans, slots]: the transfers with a positive count
    phase: np.ndarray  # per slot: its :data:`PHASES` index
    write: np.ndarray  # per slot
    bursts: np.ndarray  # [plans, slots]
    per_burst: np.ndarray
    par: np.ndarray
    dram: np.ndarray
    rd_on: np.ndarray  # [plans, slots + stages]: DRAM reads that move bus words (transfers, then staging)
    rd_count: np.ndarray
    rd_each: np.ndarray
    rd_kind: np.ndarray  # per slot, then per stage
    h_on: np.ndarray  # [plans, hosts]
    h_bytes: np.ndarray
    h_kind: np.ndarray  # per host

    def col(self, name: str, j: int) -> np.ndarray:
        """Column ``j`` of matrix ``name`` (``getattr(self, name)[:, j]``; a block of :func:`_column_moves`: without
        building the matrix)."""
        m = self.__dict__.get(name)
        return m[:, j] if m is not None else self.__dict__["_lazy"].col(name, j)

    def width(self, name: str) -> int:
        """The columns of matrix ``name``."""
        m = self.__dict__.get(name)
        return m.shape[1] if m is not None else self.__dict__["_lazy"].width(name)

    def __getattr__(self, name: str):
        # (only for a field not set: a block of :func:`_column_moves` read whole builds every matrix, once, as
        # :meth:`_SlotMoves.take` of every plan does)
        lazy = self.__dict__.get("_lazy")
        if lazy is None or name not in _Moves.__dataclass_fields__:
            raise AttributeError(name)
        full = lazy.full()
        for f in _Moves.__dataclass_fields__:
            if f not in self.__dict__:
                object.__setattr__(self, f, getattr(full, f))
        return self.__dict__[name]

    def take(self, rows: np.ndarray) -> _Moves:
        """The plans ``rows``, in that order."""
        return _Moves(self.xfer_on[rows], self.phase, self.write, self.bursts[rows], self.per_burst[rows],
                      self.par[rows], self.dram[rows], self.rd_on[rows], self.rd_count[rows], self.rd_each[rows],
                      self.rd_kind, self.h_on[rows], self.h_bytes[rows], self.h_kind)

    def xfer(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(plan row, columns) of the transfers with a positive count, phase by phase, in slot order within a
        phase: the slots taken phase by phase, row by row (np.nonzero lists a row's entries left to right)."""
        by_phase = np.argsort(self.phase, kind="stable")
        r, jj = np.nonzero(self.xfer_on[:, by_phase])
        j = by_phase[jj]
        kind = self.rd_kind[j]
        rounds = _pick(self.bursts, r, j) * np.ceil(_pick(self.per_burst, r, j) / _pick(self.par, r, j) - 1e-9)
        return r, {"phase": self.phase[j], "count": _pick(self.rd_count, r, j), "each": _pick(self.rd_each, r, j),
                   "rounds": rounds, "read": (~self.write[j]).astype(float), "dram": _pick(self.dram, r, j).astype(float),
                   "weight": (kind == 1).astype(float)}

    def stage(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        ns = len(self.phase)
        r, j = np.nonzero(self.rd_on[:, ns:])
        return r, {"count": _pick(self.rd_count, r, ns + j), "each": _pick(self.rd_each, r, ns + j),
                   "weight": (self.rd_kind[ns + j] == 1).astype(float)}

    def read(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        r, j = np.nonzero(self.rd_on)
        return r, {"kind": self.rd_kind[j], "count": _pick(self.rd_count, r, j), "each": _pick(self.rd_each, r, j),
                   "weight": (self.rd_kind[j] == 1).astype(float)}

    def host(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        r, j = np.nonzero(self.h_on)
        return r, {"kind": self.h_kind[j], "bytes": _pick(self.h_bytes, r, j)}

    def entries(self) -> dict:
        """:meth:`xfer`, :meth:`stage`, :meth:`read`, :meth:`host` and :meth:`read_order` in one pass (the same
        bits; every plan table reads all five): the DRAM reads listed once (staging is their tail columns, in the
        same order), the order of the kinds from the listed reads and host reads (the first column of each kind a
        plan names: its first listed entry of the kind, reads before host reads) instead of a pass per kind over
        the [plans, columns] matrices."""
        ns, nk, n = len(self.phase), len(KINDS), len(self.rd_on)
        by_phase = np.argsort(self.phase, kind="stable")
        xr, jj = np.nonzero(self.xfer_on[:, by_phase])
        xj = by_phase[jj]
        at = _At(xr, xj)
        rounds = at(self.bursts) * np.ceil(at(self.per_burst) / at(self.par) - 1e-9)
        xfer = (xr, {"phase": self.phase[xj], "count": at(self.rd_count), "each": at(self.rd_each), "rounds": rounds,
                     "read": (~self.write[xj]).astype(float), "dram": at(self.dram).astype(float),
                     "weight": (self.rd_kind[xj] == 1).astype(float)})
        r, j = np.nonzero(self.rd_on)
        kind = self.rd_kind[j]
        at = _At(r, j)
        count, each = at(self.rd_count), at(self.rd_each)
        weight = (kind == 1).astype(float)
        st = j >= ns
        hr, hj = np.nonzero(self.h_on)
        h_kind = self.h_kind[hj]
        big = self.rd_on.shape[1] + self.h_on.shape[1]
        pos = np.full(n * nk, big, dtype=np.int64)
        np.minimum.at(pos, np.concatenate([r * nk + kind, hr * nk + h_kind]),
                      np.concatenate([j, hj + self.rd_on.shape[1]]))
        pos = pos.reshape(n, nk)
        order = np.argsort(pos, axis=1, kind="stable")
        return {"xfer": xfer,
                "stage": (r[st], {"count": count[st], "each": each[st], "weight": weight[st]}),
                "read": (r, {"kind": kind, "count": count, "each": each, "weight": weight}),
                "host": (hr, {"kind": h_kind, "bytes": _pick(self.h_bytes, hr, hj)}),
                # (pos taken in argsort order is pos sorted: np.sort, one call, not take_along_axis)
                "read_order": np.where(np.sort(pos, axis=1) == big, nk, order)}

    def read_order(self) -> np.ndarray:
        """Per plan, the kinds its reads (then host reads) name, in first-named order, padded with len(KINDS)."""
        named = np.concatenate([self.rd_on, self.h_on], axis=1)
        named_kind = np.concatenate([self.rd_kind, self.h_kind]).astype(np.int64)
        big = named.shape[1]
        pos = np.full((len(named), len(KINDS)), big, dtype=np.int64)
        for k in range(len(KINDS)):  # the first column of each kind a plan names
            at = np.flatnonzero(named_kind == k)
            if len(at):
                m = named[:, at]
                pos[:, k] = np.where(m.any(axis=1), at[m.argmax(axis=1)], big)
        order = np.argsort(pos, axis=1, kind="stable")
        return np.where(np.take_along_axis(pos, order, axis=1) == big, len(KINDS), order)


def _is_every(rows: np.ndarray, moves: tuple) -> bool:
    """Whether taking plans ``rows`` of a table with blocks ``moves`` takes every plan in order (rows 0, 1, ...; each
    block's plans increasing and, for a :class:`_SlotMoves`, as many as it plans), so :meth:`PlanTable.take` gives
    the table's own columns (:meth:`PlanTable._every`)."""
    if not (rows == np.arange(len(rows))).all():
        return False
    return all((not isinstance(b, _SlotMoves) or b.n == len(at)) and not (np.diff(at) <= 0).any() for b, at in moves)


def _pick(m: np.ndarray, r: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``m[r, j]`` of a matrix as one flat take (numpy's two-array fancy indexing costs ~4x more on large tables)."""
    if len(r) < 1024:
        return m[r, j]
    if m.flags.f_contiguous:
        return np.take(m.ravel(order="F"), j * m.shape[0] + r)
    if m.flags.c_contiguous:
        return np.take(m.ravel(), r * m.shape[1] + j)
    return m[r, j]


class _At:
    """Entries ``(r, j)`` of [plans, columns] matrices: ``m[r, j]`` of each matrix as one flat index into its memory
    (computed once per layout and width, then one gather: numpy's two-array fancy indexing costs ~4x more)."""

    def __init__(self, r: np.ndarray, j: np.ndarray):
        self.r, self.j = r, j
        self.flat: dict[tuple[bool, int], np.ndarray] = {}

    def __call__(self, m: np.ndarray) -> np.ndarray:
        f = m.flags.f_contiguous
        if not (f or m.flags.c_contiguous):
            return m[self.r, self.j]
        key = (f, len(m) if f else m.shape[1])
        flat = self.flat.get(key)
        if flat is None:
            flat = self.flat[key] = self.j * key[1] + self.r if f else self.r * key[1] + self.j
        return m.ravel(order="F" if f else "C")[flat]


@dataclass(frozen=True)
class PlanTable:
    """Plans (a mapping plus its schedule and data movement) as numpy columns, one row per plan.

    ``plan``: numbers of each plan (``write_kind``: DRAM bytes written per :data:`KINDS` entry;
    ``dram_exact``: DRAM bytes before bus-word rounding, for structural decisions). ``label``:
    mapping name, loop order, where partial sums live, band dimension, staged weights. ``src``: the
    input row (mapping x context) a plan was built from. ``moves``: the data movement, per block of
    plans (a :class:`_Moves` and which plan each of its rows is, increasing). Sub-tables, built when
    first read, list their plan in ``plan``, their data kind as an index into :data:`KINDS`, entries of
    one plan together and plans in order: ``xfer``: transfers with a positive count, phase by phase
    (:data:`PHASES`), each phase in the plan's order; ``stage``: DRAM -> SPM staging reads with a
    positive count; ``read``: every DRAM read that moves bus words, bus transfers first, then staging;
    ``host``: the host's own reads. ``read_order``: per plan, the kinds its reads (then host reads)
    name, in first-named order, padded with ``len(KINDS)``.
    """

    plan: dict[str, np.ndarray]
    label: dict[str, np.ndarray]
    src: np.ndarray
    moves: tuple[tuple[_Moves, np.ndarray], ...]

    def __len__(self) -> int:
        return len(self.src)

    def take(self, rows: np.ndarray) -> PlanTable:
        """The plans ``rows`` (distinct), in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == len(self) and _is_every(rows, self.moves):
            return self._every()
        return PlanTable({k: v[rows] for k, v in self.plan.items()}, {k: v[rows] for k, v in self.label.items()},
                         self.src[rows], self._take_moves(rows))

    def _take_moves(self, rows: np.ndarray) -> tuple[tuple[_Moves, np.ndarray], ...]:
        """The ``moves`` of :meth:`take` of plans ``rows`` (int64, distinct)."""
        if len(rows) == len(self) and _is_every(rows, self.moves):
            return self._every().moves
        new = np.full(len(self), -1, dtype=np.int64)
        new[rows] = np.arange(len(rows))
        moves = []
        for block, at in self.moves:
            to = new[at]
            keep = np.flatnonzero(to >= 0)
            keep = keep[np.argsort(to[keep], kind="stable")]
            # (a block's every plan in order: as the table's own whole take gives it, :attr:`_SlotMoves._all`)
            whole = isinstance(block, _SlotMoves) and len(keep) == block.n and bool((keep == np.arange(block.n)).all())
            moves.append((block._all if whole else block.take(keep), to[keep]))
        return tuple(moves)

    def _every(self) -> PlanTable:
        """:meth:`take` of every plan in order: the same columns (not copies: tables are only read once built), each
        block's matrices as ``take`` builds them (a :class:`_SlotMoves` block's :attr:`~_SlotMoves._all`, its
        ``take`` of every row; a :class:`_Moves` block as it is). An EMAXV chunk keeps every plan it builds (one
        context, no pruning before the choice): the copy of ~50 columns and the matrices was ~6 % of its batch."""
        return PlanTable(dict(self.plan), dict(self.label), self.src,
                         tuple((block._all if isinstance(block, _SlotMoves) else block, at) for block, at in self.moves))

    def _entries(self, part: str) -> dict[str, np.ndarray]:
        """Sub-table ``part`` of every block, plans in order."""
        got = []
        for block, at in self.moves:
            r, cols = getattr(block, part)()
            got.append((at[r], cols))
        plan = np.concatenate([p for p, _ in got]) if got else np.zeros(0, np.int64)
        out = {k: np.concatenate([c[k] for _, c in got]) for k in got[0][1]} if got else {}
        if len(got) > 1 and (np.diff(plan) < 0).any():  # blocks interleave: plans in order, entries of a plan kept
            o = np.argsort(plan, kind="stable")
            plan, out = plan[o], {k: v[o] for k, v in out.items()}
        return {"plan": plan, **out}

    def _read_order(self) -> np.ndarray:
        """:attr:`read_order` block by block (the reference :attr:`_parts` is tested against)."""
        out = np.empty((len(self), len(KINDS)), dtype=np.int64)
        for block, at in self.moves:
            out[at] = block.read_order()
        return out

    @cached_property
    def _parts(self) -> dict:
        """The sub-tables and ``read_order``, every block's in one pass (:meth:`_Moves.entries`): the same bits as
        :meth:`_entries` part by part and :meth:`_read_order`."""
        got = [(at, block.entries()) for block, at in self.moves]
        # blocks one after another (each block's plans increase): entries come in plan order, as _entries finds
        tops = [(int(at[0]), int(at[-1])) for at, _ in got if len(at)]
        ordered = all(a[1] < b[0] for a, b in zip(tops, tops[1:]))
        out = {}
        for part in ("xfer", "stage", "read", "host"):
            if not got:
                out[part] = {"plan": np.zeros(0, np.int64)}
                continue
            plan = np.concatenate([at[e[part][0]] for at, e in got]) if len(got) > 1 else got[0][0][got[0][1][part][0]]
            cols = {k: np.concatenate([e[part][1][k] for _, e in got]) for k in got[0][1][part][1]} if len(got) > 1 \
                else got[0][1][part][1]
            if not ordered and (np.diff(plan) < 0).any():  # blocks interleave: plans in order, a plan's entries kept
                o = np.argsort(plan, kind="stable")
                plan, cols = plan[o], {k: v[o] for k, v in cols.items()}
            out[part] = {"plan": plan, **cols}
        order = np.empty((len(self), len(KINDS)), dtype=np.int64)
        for at, e in got:
            order[at] = e["read_order"]
        out["read_order"] = order
        return out

    @cached_property
    def xfer(self) -> dict[str, np.ndarray]:
        return self._parts["xfer"]

    @cached_property
    def stage(self) -> dict[str, np.ndarray]:
        return self._parts["stage"]

    @cached_property
    def read(self) -> dict[str, np.ndarray]:
        return self._parts["read"]

    @cached_property
    def host(self) -> dict[str, np.ndarray]:
        return self._parts["host"]

    @cached_property
    def read_order(self) -> np.ndarray:
        return self._parts["read_order"]


@dataclass
class _Slot:
    """One transfer a schedule may make (``on``: per plan whether it does), fields as in a spec transfer."""

    kind: str
    write: bool
    phase: int  # one of :data:`PHASES` for every plan
    dram: bool | np.ndarray  # else SPM
    bursts: np.ndarray
    per_burst: np.ndarray | float
    each: np.ndarray | float
    par: np.ndarray | float
    on: np.ndarray | bool = True


def _split_first(kind: str, dram, bursts, per_burst, each, par, on=True) -> list[_Slot]:
    """The first burst is loaded before EXEC (LOAD); the rest overlap EXEC (PLOAD)."""
    bursts, per_burst = np.asarray(bursts, dtype=float), np.asarray(per_burst, dtype=float)
    ok = on & ~(bursts <= 0) & ~(per_burst <= 0)
    first = np.where(bursts < 1.0, bursts, 1.0)
    return [_Slot(kind, False, _LOAD, dram, first, per_burst, each, par, ok),
            _Slot(kind, False, _PLOAD, dram, bursts - first, per_burst, each, par, ok & (bursts > first))]


def _chunks(oc, chunk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunks, full chunks, channels of the last chunk) of ``oc`` output channels in chunks of ``chunk`` channels."""
    oc, chunk = np.asarray(oc, dtype=np.int64), np.asarray(chunk, dtype=np.int64)
    z, full = _cdiv(oc, np.maximum(chunk, 1)), oc // np.maximum(chunk, 1)
    return z, full, oc - full * chunk


def _chunk_split(total, count, oc, chunk, split=None):
    """(chunks, full chunks, channels of the last chunk, bytes per transfer of a full chunk and of the last one)
    for ``count`` transfers moving ``total`` bytes of ``oc`` output channels in chunks of ``chunk`` channels, each
    chunk with the same number of transfers (``count`` / chunks) carrying its own channels' bytes. ``split``:
    :func:`_chunks` of (oc, chunk) if known."""
    z, full, rest = _chunks(oc, chunk) if split is None else split
    oc, chunk = np.asarray(oc, dtype=np.int64), np.asarray(chunk, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_chunk = count / z  # transfers of each chunk
        each_full = np.where(z > 1, total * chunk / oc / per_chunk, total / count)
        each_rest = total * rest / oc / per_chunk
    return z, full, rest, each_full, each_rest


def _by_chunk(kind: str, dram, bursts, per_burst, count, total, oc, chunk, par, on=True, split=None) -> list[_Slot]:
    """``bursts`` bursts of ``per_burst`` transfers (``count`` in all) moving ``total`` bytes, one output-channel
    chunk's data per burst: ``oc // chunk`` full chunks of ``chunk`` channels come first (the first burst loads
    before EXEC, the rest overlap it), then the last chunk of the ``oc % chunk`` channels left (PLOAD). Each
    transfer carries its own chunk's bytes, so bus words are rounded per chunk, not over an average chunk.
    ``split``: :func:`_chunks` of (oc, chunk) if known."""
    z, full, rest, each_full, each_rest = _chunk_split(total, count, oc, chunk, split)
    bursts = np.asarray(bursts, dtype=float)
    return _split_first(kind, dram, np.where(z > 1, bursts / z * full, bursts), per_burst, each_full, par, on) + [
        _Slot(kind, False, _PLOAD, dram, bursts / z, per_burst, each_rest, par, on & (rest > 0) & (bursts > 0))]


def _split_last(kind: str, dram, bursts, per_burst, each, par, on=True) -> list[_Slot]:
    """Results drain during EXEC (PDRAIN) except the last burst (DRAIN)."""
    bursts = np.asarray(bursts, dtype=float)
    ok = on & ~(bursts <= 0)
    last = np.where(bursts < 1.0, bursts, 1.0)
    return [_Slot(kind, True, _DRAIN, dram, last, per_burst, each, par, ok),
            _Slot(kind, True, _PDRAIN, dram, bursts - last, per_burst, each, par, ok & (bursts > last))]


def _matrix(values: list, n: int, dtype=float) -> np.ndarray:
    """Columns ``values`` (arrays over the n plans, or scalars) as an [n, len(values)] matrix (column-major:
    each column is written and read whole)."""
    out = np.empty((n, len(values)), dtype=dtype, order="F")
    for j, v in enumerate(values):
        out[:, j] = v
    return out


def _hcat(mats: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(mats, axis=1)`` (the same values and dtype) column-major, as :func:`_matrix` builds them:
    the columns are copied and read whole (the dense pricing reads a block column by column)."""
    out = np.empty((mats[0].shape[0], sum(m.shape[1] for m in mats)), dtype=np.result_type(*mats), order="F")
    j = 0
    for m in mats:
        out[:, j:j + m.shape[1]] = m
        j += m.shape[1]
    return out


def _in_order(m: np.ndarray) -> np.ndarray:
    """Row sums of ``m`` added column by column, left to right (0 for no column)."""
    if not m.shape[1]:
        return np.zeros(len(m))
    out = m[:, 0].astype(float)
    for j in range(1, m.shape[1]):
        out += m[:, j]
    return out


def _row_sums(delivered: np.ndarray, stored: np.ndarray, written: np.ndarray, kind: np.ndarray,
              reads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(:func:`_in_order` of ``delivered``, of ``stored``, ``[plans, kinds]``: of the columns of ``written`` whose
    ``kind`` is each of :data:`KINDS`, of ``reads``) for [plans, slots] matrices (``reads``: [plans, slots +
    stages]), added in one pass over the columns: x + (-0.0) is x for every x (+-0.0, infinities and NaN included),
    so a sum's other columns are -0.0 (a kind without a column: 0.0, as :func:`_in_order` gives it)."""
    n, ns = written.shape
    nc, nk = reads.shape[1], len(KINDS)
    if not ns:
        return _in_order(delivered), _in_order(stored), np.zeros((n, nk)), _in_order(reads)
    terms = np.full((nc, 3 + nk, n), -0.0)  # [column, sum, plan]: each column's terms contiguous
    terms[:ns, 0] = delivered.T
    terms[:ns, 1] = stored.T
    member = kind[:, None] == np.arange(nk)  # [slot, kind]
    terms[:ns, 2:2 + nk] = np.where(member[:, :, None], written.T[:, None, :], -0.0)
    terms[:, 2 + nk] = reads.T
    acc = terms[0].copy()
    for j in range(1, nc):
        acc += terms[j]
    acc[2:2 + nk][~member.any(axis=0)] = 0.0
    return acc[0], acc[1], np.ascontiguousarray(acc[2:2 + nk].T), acc[2 + nk]


def _sum_in_order(terms: list, n: int, zeros: bool, out: np.ndarray | None = None) -> np.ndarray:
    """:func:`_in_order` of a matrix whose columns are ``terms`` (float arrays or scalars over the n plans) and, if
    ``zeros``, columns of 0.0 anywhere among them, without building it: x + 0.0 only turns -0.0 into 0.0, wherever
    it is added in a chain of sums, so the zero columns are one ``+ 0.0`` at the end (none if there is no term).
    ``out``: written there (a float64 array of n), else a new array. Two contiguous float64 terms first: one sum
    into the result (the loop ``np.array(first)`` then ``+=`` ran, on the same contiguous operands), no copy."""
    if not terms:
        if out is None:
            return np.zeros(n)
        out[...] = 0.0
        return out
    first, rest = terms[0], terms[1:]
    if rest and _contiguous_floats(first, n) and _contiguous_floats(rest[0], n):
        out = np.add(first, rest[0], out=out)
        rest = rest[1:]
    elif out is not None:
        out[...] = first
    else:
        out = np.array(first, dtype=float) if np.ndim(first) else np.full(n, first, dtype=float)
    for t in rest:
        out += t
    if zeros:
        out += 0.0
    return out


def _contiguous_floats(v, n: int) -> bool:
    """Whether ``v`` is a contiguous float64 array of ``n`` elements."""
    return isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (n,) and v.flags.c_contiguous


def _per_plan(v, keep: np.ndarray | None, n: int, dtype=float,
              fills: dict[tuple[str, bytes], np.ndarray] | None = None) -> np.ndarray:
    """Column ``v`` (an array over the candidate plans, or a scalar) at the plans ``keep`` (None: all n). ``fills``:
    a scalar's column is shared with the table's other columns of the same scalar (the same dtype and bytes: one
    read-only array, e.g. an EMAXV table's ~15 columns of 0.0), not filled once per column."""
    a = np.asarray(v, dtype=dtype)
    if not a.ndim:
        if fills is None:
            return np.full(n if keep is None else len(keep), a, dtype=dtype)
        key = (a.dtype.str, a.tobytes())
        got = fills.get(key)
        if got is None:
            got = fills[key] = np.full(n if keep is None else len(keep), a, dtype=dtype)
            got.flags.writeable = False
        return got
    return a if keep is None else a[keep]


def _float(v) -> np.ndarray | float:
    """Column ``v`` as the float column of a plan matrix holds it (a scalar stays a scalar)."""
    a = np.asarray(v, dtype=float)
    return a if a.ndim else float(a)


def _bool(v) -> np.ndarray | bool:
    """Column ``v`` as the boolean column of a plan matrix holds it (a scalar stays a scalar)."""
    a = np.asarray(v, dtype=bool)
    return a if a.ndim else bool(a)


def _fill_columns(out: np.ndarray, values: tuple, rows: np.ndarray | None,
                  taken: dict[int, tuple[np.ndarray, np.ndarray]]) -> None:
    """``out[:, j] = values[j][rows]`` for every j (a scalar: ``out[:, j] = value``; ``rows`` None: the whole
    column), each array gathered once per id (``taken``: id -> (array, its rows) as the first gather left them, in
    the array's own dtype): straight into ``out``'s column when the dtypes agree (``np.take`` with ``mode="wrap"``,
    unbuffered, the same values as ``v[rows]`` for every valid index), else gathered and then assigned, as before."""
    for j, v in enumerate(values):
        if not isinstance(v, np.ndarray) or rows is None:
            out[:, j] = v
            continue
        hit = taken.get(id(v))
        if hit is not None and hit[0] is v:
            out[:, j] = hit[1]
        elif v.dtype == out.dtype and v.ndim == 1:
            col = out[:, j]
            np.take(v, rows, out=col, mode="wrap")
            taken[id(v)] = (v, col)
        else:
            g = v[rows]
            taken[id(v)] = (v, g)
            out[:, j] = g


@dataclass(frozen=True)
class _SlotMoves:
    """The data movement of one builder call kept as its slot columns (arrays over the plans, or scalars), the
    [plans, columns] matrices of :class:`_Moves` built only for the plans a table keeps (:meth:`take`): most
    plans are planned in a context that no combination ends up using."""

    n: int
    on: tuple  # per slot: the transfers with a positive count (count > 0 is applied when built)
    bursts: tuple
    per_burst: tuple
    each: tuple
    dram: tuple
    par: tuple
    phase: np.ndarray
    write: np.ndarray
    rd_kind: np.ndarray
    s_on: tuple  # per stage: on and a positive count
    s_count: tuple
    s_each: tuple
    h_on: tuple
    h_bytes: tuple
    h_kind: np.ndarray

    def take(self, rows: np.ndarray, every: bool = False) -> _Moves:
        """The plans ``rows``, in that order, as matrices (those :func:`_assemble` built for every plan); ``every``:
        ``rows`` are every plan in order (:attr:`_all`: the columns as they are, no gathers). Each column is gathered
        straight into its matrix column (:func:`_fill_columns`), the transfer and staging columns of the DRAM reads'
        matrices side by side in one matrix: the same values, no second copy (a kept plans' table gathers ~40
        columns of ~100 k plans a chunk)."""
        m, ns, nst = len(rows), len(self.phase), len(self.s_on)
        taken: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id -> (column, its rows): slots share columns
        sel = None if every else rows

        def mat(values, dtype=float, out=None):
            out = np.empty((m, len(values)), dtype=dtype, order="F") if out is None else out
            _fill_columns(out, values, sel, taken)
            return out

        on, bursts, per_burst, dram = mat(self.on, bool), mat(self.bursts), mat(self.per_burst), mat(self.dram, bool)
        rd_count = np.empty((m, ns + nst), order="F")
        count = np.multiply(bursts, per_burst, out=rd_count[:, :ns])
        mat(self.s_count, out=rd_count[:, ns:])
        rd_each = np.empty((m, ns + nst), order="F")
        mat(self.each, out=rd_each[:, :ns])
        mat(self.s_each, out=rd_each[:, ns:])
        rd_on = np.empty((m, ns + nst), dtype=bool, order="F")
        np.logical_and(on & dram & ~self.write, count > 0, out=rd_on[:, :ns])
        mat(self.s_on, bool, out=rd_on[:, ns:])
        return _Moves(on & (count > 0), self.phase, self.write, bursts, per_burst, mat(self.par), dram, rd_on, rd_count,
                      rd_each, self.rd_kind, mat(self.h_on, bool), mat(self.h_bytes), self.h_kind)

    @cached_property
    def _all(self) -> _Moves:
        """:meth:`take` of every plan: from :data:`COLUMN_MOVES_FROM` plans as :func:`_column_moves` (the matrices'
        columns one by one when read, the matrices whole only when read whole)."""
        if self.n >= COLUMN_MOVES_FROM:
            return _column_moves(self)
        return self.take(np.arange(self.n), every=True)

    def xfer(self):
        return self._all.xfer()

    def stage(self):
        return self._all.stage()

    def read(self):
        return self._all.read()

    def host(self):
        return self._all.host()

    def read_order(self):
        return self._all.read_order()

    def entries(self):
        return self._all.entries()


#: plans from which a :class:`_SlotMoves` block taken whole is read column by column, :func:`_column_moves` (below, one design point's few
#: plans: the matrices at once, as before)
COLUMN_MOVES_FROM = 1024


def _column(v, dtype, n: int) -> np.ndarray:
    """Slot column ``v`` (an array over the n plans, or a scalar) as a matrix column of ``dtype`` holds it
    (``out[:, j] = v``): an array of that dtype and shape as it is (read only), else converted or broadcast into a
    new one."""
    if isinstance(v, np.ndarray) and v.shape == (n,):
        return np.asarray(v, dtype=dtype)
    out = np.empty(n, dtype=dtype)
    out[:] = v
    return out


def _column_moves(slots: _SlotMoves) -> _Moves:
    """:meth:`_SlotMoves.take` of every plan read column by column: a :class:`_Moves` whose matrices are not set,
    its :meth:`~_Moves.col` answered by :class:`_LazyColumns` (a matrix read whole builds them all, once)."""
    m = _Moves.__new__(_Moves)
    for k in ("phase", "write", "rd_kind", "h_kind"):
        object.__setattr__(m, k, getattr(slots, k))
    object.__setattr__(m, "_lazy", _LazyColumns(slots))
    return m


class _LazyColumns:
    """The matrices of :meth:`_SlotMoves.take` of every plan column by column (:meth:`col`): each matrix column as
    ``take`` writes it, from the slot columns (an array of the matrix's dtype: itself, no copy; ``rd_on`` and
    ``xfer_on`` of a transfer column by the same elementwise operations on the same columns; the counts from the
    bursts' and per-burst matrices, :meth:`_counts`), once per column. An EMAXV chunk's choice reads its ~30 columns
    one by one (:func:`~archmodels.emax.timing._dense_flows`, ``_dense_reads``): ``take`` copied every slot column
    into the matrices first."""

    __slots__ = ("slots", "cols", "count", "_full")

    def __init__(self, slots: _SlotMoves):
        self.slots, self.cols, self.count, self._full = slots, {}, None, None

    def full(self) -> _Moves:
        """Every matrix, as ``take`` of every plan builds them."""
        if self._full is None:
            self._full = self.slots.take(np.arange(self.slots.n), every=True)
        return self._full

    def _counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bursts, per-burst and count matrices of the transfer columns, as ``take`` builds them: the count is
        one product of the two [plans, slots] matrices (numpy's loop over a block and over a column may pick
        different NaNs where two of opposite signs meet: the block's product, as before)."""
        if self.count is None:
            s = self.slots
            bursts, per_burst = (np.empty((s.n, len(s.phase)), order="F") for _ in range(2))
            _fill_columns(bursts, s.bursts, None, {})
            _fill_columns(per_burst, s.per_burst, None, {})
            self.count = (bursts, per_burst, np.multiply(bursts, per_burst, out=np.empty_like(bursts, order="F")))
        return self.count

    def width(self, name: str) -> int:
        s = self.slots
        ns = len(s.phase)
        if name in ("rd_on", "rd_count", "rd_each"):
            return ns + len(s.s_on)
        if name in ("h_on", "h_bytes"):
            return len(s.h_on)
        return ns

    def col(self, name: str, j: int) -> np.ndarray:
        got = self.cols.get((name, j))
        if got is not None:
            return got
        s = self.slots
        n, ns = s.n, len(s.phase)
        if name == "xfer_on":  # on & (count > 0)
            v = self.col("on", j) & (self.col("rd_count", j) > 0)
        elif name in ("on", "dram"):
            v = _column(getattr(s, name)[j], bool, n)
        elif name == "par":
            v = _column(s.par[j], float, n)
        elif name in ("bursts", "per_burst"):
            v = self._counts()[name == "per_burst"][:, j]
        elif name == "rd_count":  # transfers: bursts x per_burst; then the staging counts
            v = self._counts()[2][:, j] if j < ns else _column(s.s_count[j - ns], float, n)
        elif name == "rd_each":
            v = _column(s.each[j], float, n) if j < ns else _column(s.s_each[j - ns], float, n)
        elif name == "rd_on":  # transfers: on & dram & ~write, and a positive count; then the staging's
            v = (np.logical_and(self.col("on", j) & self.col("dram", j) & ~s.write[j], self.col("rd_count", j) > 0)
                 if j < ns else _column(s.s_on[j - ns], bool, n))
        elif name == "h_on":
            v = _column(s.h_on[j], bool, n)
        elif name == "h_bytes":
            v = _column(s.h_bytes[j], float, n)
        else:
            raise KeyError(name)
        self.cols[(name, j)] = v
        return v


#: plans from which :func:`_assemble` sums slot by slot as columns (below: over [plans, slots] matrices, fewer numpy
#: calls: one design point's tables)
ASSEMBLE_COLUMNS_FROM = 2048


def _assemble(n: int, ok: np.ndarray, src: np.ndarray, cols: dict[str, np.ndarray], label: dict[str, np.ndarray],
              slots: list[_Slot], stages: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
              hosts: list[tuple[str, np.ndarray, np.ndarray]], load_bytes_per_iter: np.ndarray) -> PlanTable:
    """The :class:`PlanTable` of ``n`` candidate plans, of which those with ``ok`` exist.

    ``slots``: the transfers in the order a schedule lists them; ``stages``: (kind, count, bytes each,
    on); ``hosts``: (kind, bytes, on). Adds the sums every plan carries (LMM traffic, DRAM writes per
    kind, the exact DRAM bytes), each summed in list order. From :data:`ASSEMBLE_COLUMNS_FROM` plans slot by slot
    as columns (:func:`_assemble_columns`), else over [plans, slots] matrices (:func:`_assemble_matrices`): the
    same bits.
    """
    build = _assemble_columns if n >= ASSEMBLE_COLUMNS_FROM else _assemble_matrices
    return build(n, ok, src, cols, label, slots, stages, hosts, load_bytes_per_iter)


def _assemble_matrices(n: int, ok: np.ndarray, src: np.ndarray, cols: dict[str, np.ndarray],
                       label: dict[str, np.ndarray], slots: list[_Slot], stages: list, hosts: list,
                       load_bytes_per_iter: np.ndarray) -> PlanTable:
    """:func:`_assemble` over [plans, slots] matrices built for every plan (few numpy calls: small tables)."""
    on = _matrix([s.on for s in slots], n, bool)
    bursts, per_burst = _matrix([s.bursts for s in slots], n), _matrix([s.per_burst for s in slots], n)
    count = bursts * per_burst
    each = _matrix([s.each for s in slots], n)
    dram = _matrix([s.dram for s in slots], n, bool)
    write = np.array([s.write for s in slots], dtype=bool)
    kind = np.array([KINDS.index(s.kind) for s in slots], dtype=np.int64)
    phase = np.array([s.phase for s in slots], dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        nbytes = np.where(on, count * each, 0.0)
    moved = np.where(phase != _POOL, nbytes, 0.0)
    written = np.where(dram & write, nbytes, 0.0)
    host = _in_order(_matrix([np.where(h_on, nb, 0.0) for _, nb, h_on in hosts], n))
    # DRAM reads that move bus words: transfers (slot order), then staging
    s_on = _matrix([s_on & (c > 0) for _, c, _, s_on in stages], n, bool)
    rd_on = np.concatenate([on & dram & ~write & (count > 0), s_on], axis=1)
    rd_count = np.concatenate([count, _matrix([c for _, c, _, _ in stages], n)], axis=1)
    rd_each = np.concatenate([each, _matrix([e for _, _, e, _ in stages], n)], axis=1)
    rd_kind = np.concatenate([kind, [KINDS.index(k) for k, *_ in stages]]).astype(np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        delivered, stored, write_kind, read_sum = _row_sums(np.where(write, 0.0, moved), np.where(write, moved, 0.0),
                                                            written, kind, np.where(rd_on, rd_count * rd_each, 0.0))
    cols = dict(cols)
    cols.update(lmm_read=cols["iterations"] * load_bytes_per_iter + stored, lmm_write=delivered + stored, host=host,
                dram_write=_in_order(write_kind), write_kind=write_kind)
    cols["dram_exact"] = cols["dram_write"] + host + read_sum
    keep = np.flatnonzero(ok)
    every = None if len(keep) == n else keep  # every candidate exists: columns as they are
    moves = _Moves(on & (count > 0), phase, write, bursts, per_burst, _matrix([s.par for s in slots], n), dram, rd_on,
                   rd_count, rd_each, rd_kind, _matrix([h for _, _, h in hosts], n, bool),
                   _matrix([b for _, b, _ in hosts], n), np.array([KINDS.index(k) for k, *_ in hosts], dtype=np.int64))
    return PlanTable({k: _per_plan(v, every, n) for k, v in cols.items()},
                     {k: _per_plan(v, every, n, None) for k, v in label.items()}, src[keep],
                     ((moves if every is None else moves.take(keep), np.arange(len(keep))),))


def _assemble_columns(n: int, ok: np.ndarray, src: np.ndarray, cols: dict[str, np.ndarray],
                      label: dict[str, np.ndarray], slots: list[_Slot], stages: list, hosts: list,
                      load_bytes_per_iter: np.ndarray) -> PlanTable:
    """:func:`_assemble` slot by slot as columns (the [plans, slots] matrices of the data movement are built for the
    plans a table keeps: :class:`_SlotMoves`; most plans are planned in a context no combination ends up using)."""
    seen: dict[tuple[int, object], tuple[object, object]] = {}  # (id, conversion) -> (column, converted)

    def once(conv, v):  # conv(v), once per column object (slots share columns: ~4 of 10 are repeats)
        if not isinstance(v, np.ndarray):
            return conv(v)
        hit = seen.get((id(v), conv))
        if hit is None or hit[0] is not v:
            hit = seen[(id(v), conv)] = (v, conv(v))
        return hit[1]

    on = [once(_bool, s.on) for s in slots]
    bursts = [once(_float, s.bursts) for s in slots]
    per_burst = [once(_float, s.per_burst) for s in slots]
    each = [once(_float, s.each) for s in slots]
    dram = [once(_bool, s.dram) for s in slots]
    write = np.array([s.write for s in slots], dtype=bool)
    kind = np.array([KINDS.index(s.kind) for s in slots], dtype=np.int64)
    phase = np.array([s.phase for s in slots], dtype=np.int64)
    delivered, stored, written, reads = [], [], [[] for _ in KINDS], []
    no_delivered = no_stored = no_read = False
    no_written = [False] * len(KINDS)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(len(slots)):
            count = bursts[j] * per_burst[j]
            product = count * each[j]
            nbytes = _where0(on[j], product)
            if phase[j] == _POOL:  # moved: 0 (a zero column of the delivered and stored sums)
                no_delivered = no_stored = True
            elif write[j]:
                stored.append(nbytes)
                no_delivered = True
            else:
                delivered.append(nbytes)
                no_stored = True
            if write[j]:  # DRAM writes by kind: the slots of the kind, 0 where not a DRAM write
                written[kind[j]].append(_where0(dram[j], nbytes))
            else:
                no_written[kind[j]] = True
            if write[j]:
                no_read = True
            else:
                reads.append(np.where(on[j] & dram[j] & (count > 0), product, 0.0))
        s_on = [_bool(s_on & (c > 0)) for _, c, _, s_on in stages]
        s_count = [_float(c) for _, c, _, _ in stages]
        s_each = [_float(e) for _, _, e, _ in stages]
        reads += [np.where(o, c * e, 0.0) for o, c, e in zip(s_on, s_count, s_each)]
        read_sum = _sum_in_order(reads, n, no_read)
    delivered = _sum_in_order(delivered, n, no_delivered)
    stored = _sum_in_order(stored, n, no_stored)
    write_kind = np.empty((n, len(KINDS)), dtype=float, order="F")
    for k in range(len(KINDS)):
        _sum_in_order(written[k], n, no_written[k], out=write_kind[:, k])
    h_on = [_bool(h) for _, _, h in hosts]
    h_bytes = [_float(b) for _, b, _ in hosts]
    host = _sum_in_order([np.where(h, b, 0.0) for h, b in zip(h_on, h_bytes)], n, False)
    rd_kind = np.concatenate([kind, [KINDS.index(k) for k, *_ in stages]]).astype(np.int64)
    cols = dict(cols)
    cols.update(lmm_read=cols["iterations"] * load_bytes_per_iter + stored, lmm_write=delivered + stored, host=host,
                dram_write=_sum_in_order([write_kind[:, k] for k in range(len(KINDS))], n, False), write_kind=write_kind)
    cols["dram_exact"] = cols["dram_write"] + host + read_sum
    keep = np.flatnonzero(ok)
    every = None if len(keep) == n else keep  # every candidate exists: columns as they are
    moves = _SlotMoves(n, tuple(on), tuple(bursts), tuple(per_burst), tuple(each), tuple(dram),
                       tuple(once(_float, s.par) for s in slots), phase, write, rd_kind, tuple(s_on), tuple(s_count),
                       tuple(s_each), tuple(h_on), tuple(h_bytes), np.array([KINDS.index(k) for k, *_ in hosts],
                                                                            dtype=np.int64))
    fills: dict[tuple[str, bytes], np.ndarray] = {}  # (the scalar columns' arrays, one per value: many plans)
    return PlanTable({k: _per_plan(v, every, n, float, fills) for k, v in cols.items()},
                     {k: _per_plan(v, every, n, None, fills) for k, v in label.items()}, src[keep],
                     ((moves if every is None else moves.take(keep), np.arange(len(keep))),))


def _where0(on, x):
    """``np.where(on, x, 0.0)``; a float64 array ``x`` itself when ``on`` is the scalar True (the same values and
    bits: no copy; ``x`` is only read afterwards). :func:`_assemble_columns`' slots with a scalar ``on`` or ``dram``
    (~1 in 10 and ~4 in 10 of a VGG16 call's)."""
    if on is True and type(x) is np.ndarray and x.dtype == np.float64:
        return x
    return np.where(on, x, 0.0)


# ---------------------------------------------------------------- layer shapes as columns
@lru_cache(maxsize=65536)
def _rows_sum(sh: ConvShape, bands: int) -> int:
    """Input rows read by ``bands`` output-row bands (kernel halo rows counted once per band)."""
    size = math.ceil(sh.oh / bands)
    return sum(sh.input_rows(a, min(sh.oh, a + size)) for a in range(0, sh.oh, size))


@lru_cache(maxsize=65536)
def _cols_sum(sh: ConvShape, ow_seg: int) -> int:
    return sum(sh.input_cols(i, min(sh.ow, i + ow_seg)) for i in range(0, sh.ow, ow_seg))


_CONV = ("groups", "ic", "oc", "kh", "kw", "stride", "h", "w", "oh", "ow", "kh_ext", "kw_ext")
_FC = ("inputs", "outputs", "batch")


def shape_columns(shapes: Sequence[ConvShape | FCShape], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The numbers of layer shape ``shapes[idx[k]]`` per row k (integers; ``mac`` as booleans)."""
    conv = isinstance(shapes[0], ConvShape) if shapes else True
    names = _CONV + ("mac", "vk", "rows_all", "touched") if conv else _FC
    # the [numbers, shapes] table of the shape list (cached: a workload's builder calls list the same shapes), then
    # one gather of every column at once (each column a row of it)
    out = dict(zip(names, _shape_table(tuple(shapes), len(names))[:, np.asarray(idx, dtype=np.int64)]))
    if conv:
        out["mac"] = out["mac"].astype(bool)
    return out


@lru_cache(maxsize=64)
def _shape_table(shapes: tuple[ConvShape | FCShape, ...], k: int) -> np.ndarray:
    """[k numbers, shapes] int64: :func:`_shape_numbers` of each shape (one cached tuple per shape: a pooling pass
    lists one shape per request, many repeats), read only."""
    tab = np.array([_shape_numbers(sh) for sh in shapes], dtype=np.int64).reshape(len(shapes), k).T.copy()
    tab.flags.writeable = False
    return tab


@lru_cache(maxsize=4096)
def _shape_numbers(sh: ConvShape | FCShape) -> tuple[int, ...]:
    """A row of :func:`shape_columns`: conv: :data:`_CONV`, MAC (1) or MAX (0), valid kernel rows, input rows
    read, input elements touched (:func:`_touched_inputs`); FC: :data:`_FC`."""
    if isinstance(sh, FCShape):
        return tuple(getattr(sh, k) for k in _FC)
    return tuple(getattr(sh, k) for k in _CONV) + (int(sh.op == "mac"), sh.valid_kernel_rows(), sh.input_rows(0, sh.oh),
                                                   _touched_inputs(sh))


def _lookup(fn, shapes: Sequence[ConvShape], idx: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``fn(shapes[idx[k]], x[k])`` for every row k, ``fn`` called once per distinct (shape, x) pair (x >= 0):
    a dense table over (shape, x) when it is not much larger than the rows (no sort), else np.unique."""
    x = np.asarray(x, dtype=np.int64)
    span = int(x.max()) + 1 if len(x) else 1
    key = np.asarray(idx, dtype=np.int64) * span + x
    size = len(shapes) * span
    if size <= 4 * len(key) + 4096 and (not len(x) or x.min() >= 0):
        seen = np.zeros(size, bool)
        seen[key] = True
        pairs = np.flatnonzero(seen)
        table = np.zeros(size, dtype=np.int64)
        table[pairs] = [fn(shapes[i], v) for i, v in zip((pairs // span).tolist(), (pairs % span).tolist())]
        return table[key]
    pairs, inv = np.unique(key, return_inverse=True)
    return np.array([fn(shapes[i], int(v)) for i, v in zip(pairs // span, pairs % span)],
                    dtype=np.int64)[inv.reshape(-1)]


def _cdiv(a, b):
    """Ceiling of the integer quotient a / b."""
    return -(-a // b)


def _select(conds: list, choices: list, default):
    """``np.select(conds, choices, default)`` as nested ``np.where`` (the first true condition's choice): the same
    values, in the choices' common type, at ~1/5 of ``np.select``'s fixed cost (~14 us a call on a small table)."""
    out = np.asarray(default)
    kind = np.result_type(*(np.asarray(c) for c in choices), out)
    for c, v in zip(conds[::-1], choices[::-1]):
        out = np.where(c, v, out)
    return out.astype(kind, copy=False)


def _ints(r: dict[str, np.ndarray], *keys: str) -> list[np.ndarray]:
    return [np.asarray(r[k], dtype=np.int64) for k in keys]


#: where a plan puts its data (booleans; see :func:`placement`)
_PLACEMENT = ("ic_inner", "halo_dram", "halo_kept", "stage_in", "in_res", "keep")


def _plan_cols(r: dict[str, np.ndarray], **cols) -> dict[str, np.ndarray]:
    """Columns every plan has: its counts plus the mapping numbers and the fused pooling pass."""
    out = {k: r[k] for k in ("rows_used", "regs", "alus", "macs", "icpar", "khpar", "oc_par", "px_par", "gpar",
                             "ow_seg", "oc_chunk")}
    out.update({k: False for k in _PLACEMENT})  # schedules without an SPM place nothing there
    other = cols.pop("other_ops", None)  # (given: computed per mapping)
    out.update(cols)
    out["other_ops"] = np.maximum(0, r["alus"] - r["macs"]) * cols["iterations"] if other is None else other
    for k in ("ops", "iterations", "loop_ends", "regs", "rows_used"):
        out[f"pool_{k}"] = r.get(f"pool_{k}", 0.0)
    out["has_pool"] = r.get("has_pool", False)
    return out


def _label(r: dict[str, np.ndarray], band_dim) -> dict[str, np.ndarray]:
    """Label columns of plans: names (objects, from the mapper) and short fixed-width texts (band dimension,
    input mode), kept as they are: converting every planned row to objects is paid for plans never used."""
    return {"name": r["name"], "order_name": r["order_name"], "band_dim": np.asarray(band_dim), "mode": r["mode"]}


# ---------------------------------------------------------------- EMAXV (single loop)
def emaxv_plans(shapes: Sequence[ConvShape], r: dict[str, np.ndarray]) -> PlanTable:
    """EMAXV single-loop schedule (spec §2) of every row of ``r``: everything through DRAM, nothing overlapped.

    ``r``: :func:`~archmodels.emax.mapper.mapping_columns` plus ``shape`` (index into ``shapes``), ``cols``,
    ``spm`` (bytes), ``elem`` (bytes).
    """
    n = len(r["icpar"])
    # the shapes' own products once per shape (a few), gathered per row: int64 products are exact modulo 2**64 in
    # any grouping, so g * passes * oc * oh * ow per row is (g * oc * oh * ow)[shape] * passes, bit for bit
    sid = np.asarray(r["shape"], dtype=np.int64)
    x = dict(zip(_CONV + ("mac", "vk", "rows_all", "touched"), _shape_table(tuple(shapes), len(_CONV) + 4)))
    g, ic, oc, kh, kw, oh, ow, vk = (x[k] for k in ("groups", "ic", "oc", "kh", "kw", "oh", "ow", "vk"))
    g_oh = g * oh
    g_oh_oc = g_oh * oc
    g_oc_oh_ow = g * oc * oh * ow
    g_ic_vk = g * ic * vk
    e, c, icpar, khpar, ow_seg, dup = _ints(r, "elem", "cols", "icpar", "khpar", "ow_seg", "dup_rows")
    ic_r, kh_r, ow_r = ic[sid], kh[sid], ow[sid]
    passes = _cdiv(ic_r, icpar) * _cdiv(kh_r, khpar)
    n_seg = _cdiv(ow_r, ow_seg)
    col_bytes = _lookup(_cols_sum, shapes, sid, ow_seg) * e
    g_oh_oc_r = g_oh_oc[sid]
    starts = g_oh_oc_r * passes * n_seg  # g * passes * oh * n_seg * oc
    iters = g_oc_oh_ow[sid] * passes  # g * passes * oc * oh * ow
    ops = (g_oc_oh_ow * ic * kh * kw)[sid]
    # inputs: per (pass, output row, segment) the valid kernel rows of the pass's channels, once per load row
    g_ic_vk_r = g_ic_vk[sid]
    in_xfers = g_ic_vk_r * n_seg * dup
    in_bursts = g_oh[sid] * passes * n_seg  # g * passes * oh * n_seg
    in_bytes = g_ic_vk_r * col_bytes * dup
    psum_rows = g_oh_oc_r * (passes - 1) * n_seg  # g * (passes - 1) * oc * oh * n_seg
    out_rows = g_oh_oc_r * n_seg  # g * oc * oh * n_seg
    with np.errstate(divide="ignore", invalid="ignore"):
        row = ow_r * e / n_seg
        slots = [
            _Slot("input", False, _LOAD, True, in_bursts, in_xfers / in_bursts, in_bytes / in_xfers, c),
            _Slot("psum", False, _LOAD, True, psum_rows, 1, row, 1),
            _Slot("psum", True, _DRAIN, True, psum_rows, 1, row, 1),
            _Slot("output", True, _DRAIN, True, out_rows, 1, row, 1),
        ]
    mac = x["mac"].astype(bool)[sid]
    weights = np.where(mac, (g * oc * ic * kh * kw + g * oc)[sid] * e, 0.0)
    cols = _plan_cols(r, iterations=iters, loop_ends=starts, activations=starts, ops=ops, passes=passes,
                      starts=starts, bands=1, spm_read=0.0, spm_write=0.0, spm_need=0.0, mac=mac,
                      compulsory=conv_compulsory_bytes(x["touched"][sid], e, weights, g_oc_oh_ow[sid] * e),
                      band_len=oh[sid], n_seg=n_seg,
                      psum_home=np.where(passes > 1, _DRAM, _NONE), stage_w=False)
    return _assemble(n, np.ones(n, bool), np.arange(n), cols, _label(r, "-"), slots, [], [("weight", weights, True)],
                     r["load_bytes_per_iter"])


# ---------------------------------------------------------------- EMAXVR (loop nests, SPM)
#: the schedules tried per mapping, in order: (stage weights in the SPM, partial sums in DRAM, halo rows of an
#: output-row band re-read from DRAM instead of kept in the SPM, input-channel loop inside the start). The first
#: three are the thesis's schedules (spec §3.1); the others widen the tiling space (issue 12).
VR_VARIANTS = ((False, False, False, False), (True, False, False, False), (False, True, False, False),
               (False, False, True, False), (True, False, True, False),
               (False, False, False, True), (True, False, False, True), (False, False, True, True),
               (True, False, True, True))
#: user pins of the schedule (``r`` columns; ``auto`` = searched): where partial sums live, where halo rows
#: come from, where the input-channel loop sits, and the band size (0 = the largest that fits)
PINS = {"psum_home": ("auto", "spm", "dram"), "halo": ("auto", "spm", "dram"), "ic_loop": ("auto", "outer", "inner")}
PIN_PREFIX = "pin_"


def emaxvr_plans(shapes: Sequence[ConvShape], r: dict[str, np.ndarray]) -> PlanTable:
    """Every EMAXVR schedule (:data:`VR_VARIANTS`) of every row of ``r`` that fits (see module docstring).

    ``r``: as for :func:`emaxv_plans`, plus the context (``resident``: the input is in the SPM; ``keep``:
    leave the output there; ``has_pool``: run the fused pooling pass after the convolution, ``per_band``
    if per band, its output ``pool_oh`` x ``pool_ow`` and ``pool_*`` numbers). Plans come row by row,
    variants in order; ``src`` names the row. A :class:`Rows` ``r`` may name its mappings (``r.maps``: the rows
    without their context, ``r.at_map``: each row's): what does not depend on the context is then computed once
    per mapping (a mapping is planned in up to 4 contexts) and gathered. A row with ``chained_only`` 2, or 1 and
    ``dram_search``, gets its chainable plans only (unbanded, partial sums not in DRAM): of such a row (input resident
    and output kept; input resident under a DRAM-traffic search) the chaining reads and keeps no other
    (:func:`~archmodels.emax.model._context_plans`), so the others are dropped before their traffic is priced.
    """
    mr, mrow = (r, None) if getattr(r, "maps", None) is None else (r.maps, r.at_map)
    # the numbers and rules that do not depend on the context, per mapping (:func:`_vr_maps`)
    xm = shape_columns(shapes, np.asarray(mr["shape"], dtype=np.int64))
    pins = _pin_masks(mr, len(mr["icpar"]))
    mp = _vr_maps(shapes, mr, xm, pins)
    flags = np.array(VR_VARIANTS, dtype=bool)
    row, out = _vr_rows(r, mp, mrow)
    if mrow is not None and len(mrow) >= PACK_FROM:  # (the same pairs from the rows' variants as bits)
        rep, var = _allowed_bits(mp["allowed"], mrow, row)
    else:
        allowed = mp["allowed"].copy() if mrow is None else mp["allowed"][mrow]
        # partial sums go to DRAM by choice not when the output stays in the SPM unpooled
        allowed[:, flags[:, 1]] &= (~(row["keep"] & ~row["has_pool"]))[:, None]
        # ... and the SPM plan's rules that do not depend on the variant (:func:`_vr_rows`)
        allowed &= ~row["bad"][:, None]
        allowed[:, flags[:, 2]] &= row["halo_rows"][:, None]
        allowed[:, flags[:, 3]] &= row["inner_ok"][:, None]
        # (the narrower tiles of a tile search are planned in every context: they also let a layer stage its input or
        # keep its output in the SPM beside its partial sums; tests/test_properties, VGG16 counterexamples)
        rep, var = nonzero_2d(allowed)
    mrep = rep if mrow is None else _rows_of(mrow, rep)
    # the SPM plan of every (row, variant) from its row's numbers; the schedules that fit get the columns the
    # traffic reads (each gathered once, when first read: most of a row's columns are not read)
    stage_w, psum_dram, halo_dram, ic_inner = _variant_flags(var)
    pin_cols = {f"pin_{k}": m for k, m in pins.items()}
    # the boolean columns the SPM plan reads per (row, variant): its mapping's (pins, rules) and its row's
    m_bools = dict(pin_cols, needs_unit=mp["needs_unit"], sized=mp["sized"], dram_search=mp["dram_search"])
    r_bools = {k: row[k] for k in ("keep_all", "no_spm", "free")}
    if "chained_only" in r:  # the rows that get their chainable plans only
        code = np.asarray(r["chained_only"])
        r_bools["only_chainable"] = (code == 2) | (code == 1) & (mp["dram_search"] if mrow is None else
                                                                 _rows_of(mp["dram_search"], mrow))
    v = _Gather((m_bools, mrep), (r_bools, rep), stage_w=stage_w, psum_dram=psum_dram, halo_dram=halo_dram,
                ic_inner=ic_inner)
    if len(rep) >= PACK_FROM:  # (each source's columns in one gather: their bits)
        v.gather_bools(*m_bools, *r_bools)
    else:  # (one design point's: each by indexing, every one read)
        v.update(**{k: c[mrep] for k, c in m_bools.items()}, **{k: c[rep] for k, c in r_bools.items()})
    ok = _vr_spm_plan(v, row, mp, rep, mrep)
    if "only_chainable" in r_bools:
        ok &= ~(v["only_chainable"] & ((v["bands"] != 1) | (v["psum_home"] == _DRAM)))
    ok_at = np.flatnonzero(ok)
    sel = _rows_of(rep, ok_at)
    msel = _rows_of(mrep, ok_at)
    fit = _Gather((v.got, ok_at), (out, sel), (mp, msel), (xm, msel), (pin_cols, msel), (mr, msel),
                  (r, sel), src=sel)
    # the traffic's counts that do not depend on the SPM plan: per mapping and gathered, or (rows of one design
    # point, not named by mapping) per plan: fewer numpy calls
    if mrow is None:
        fit.update(**_vr_counts(shapes, fit, fit, fit))
    else:
        fit.sources = ((_vr_counts(shapes, mr, xm, mp), msel),) + fit.sources
    if len(ok_at) >= PACK_FROM:  # the boolean columns the traffic reads, each source's in one gather
        fit.gather_bools(*_VR_TRAFFIC_BOOLS)
    return _vr_traffic(shapes, fit)


#: the boolean columns :func:`_vr_traffic` reads (:meth:`_Gather.gather_bools`)
_VR_TRAFFIC_BOOLS = ("stage_w", "halo_dram", "ic_inner", "has_pool", "per_band_pool", "mac", "m_one", "stage_in",
                     "keep", "resident")


_FLAG_COLUMNS = tuple(np.array(VR_VARIANTS, dtype=bool).T.copy())

#: every variant of :data:`VR_VARIANTS` as bits (variant j: bit j), and those with each flag
_ALL_BITS = (1 << len(VR_VARIANTS)) - 1
_FLAG_BITS = tuple(sum(1 << j for j, on in enumerate(col) if on) for col in _FLAG_COLUMNS)
#: [bits, variant]: bit j of each number below 2 ** len(VR_VARIANTS), read only
_BIT_ROWS = ((np.arange(1 << len(VR_VARIANTS))[:, None] >> np.arange(len(VR_VARIANTS))) & 1).astype(bool)
_BIT_ROWS.flags.writeable = False


def _allowed_bits(allowed: np.ndarray, mrow: np.ndarray, row: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`emaxvr_plans`' (row, variant) pairs (``nonzero_2d`` of its [row, variant] mask) with each row's variants
    as the bits of one number: the mappings' ``allowed`` [mapping, variant] rules packed (:func:`_packed`), gathered
    per row (``mrow``), cleared by the row's rules (:func:`_vr_rows`' ``row``), then the [row, variant] mask of those
    numbers (rows of :data:`_BIT_ROWS`) and its nonzero entries: the same pairs (row by row, variants in order) as the
    boolean mask's gather and masking (one gather of ~2 bytes a row, not of 9 booleans by fancy indexing)."""
    b = _packed(list(allowed.T)).take(mrow)
    # partial sums go to DRAM by choice not when the output stays in the SPM unpooled; then the SPM plan's rules
    # that do not depend on the variant
    for clear, bits in ((row["keep"] & ~row["has_pool"], _FLAG_BITS[1]), (row["bad"], _ALL_BITS),
                        (~row["halo_rows"], _FLAG_BITS[2]), (~row["inner_ok"], _FLAG_BITS[3])):
        b &= ~np.multiply(np.asarray(clear, dtype=bool).view(np.uint8), bits, dtype=b.dtype)
    return nonzero_2d(_BIT_ROWS.take(b, axis=0))


def _variant_flags(var: np.ndarray) -> tuple[np.ndarray, ...]:
    """The flags of schedule variants ``var`` (indices into :data:`VR_VARIANTS`), one boolean column per flag:
    each gathered from its own column (a gather of [variant, flag] rows, then its columns, costs ~5x as much); from
    :data:`PACK_FROM` variants the flags' bits in one gather (:func:`_bits_of`)."""
    if len(var) >= PACK_FROM:
        return tuple(_bits_of(_VARIANT_BITS.take(var), range(len(_FLAG_COLUMNS))))
    return tuple(col[var] for col in _FLAG_COLUMNS)


#: from this many rows :func:`_gather_bools` and :func:`_variant_flags` gather boolean columns as the bits of one
#: column (below: each column gathered, fewer numpy calls: one design point's few rows)
PACK_FROM = 1024


def _packed(cols: Sequence[np.ndarray]) -> np.ndarray:
    """Boolean columns ``cols`` (at most 16, of one length) as one unsigned column, bit i = ``cols[i]``."""
    code = np.zeros(len(cols[0]), dtype=np.uint8 if len(cols) <= 8 else np.uint16)
    for i, c in enumerate(cols):
        code |= np.left_shift(c, i, dtype=code.dtype)
    return code


def _bits_of(code: np.ndarray, bits) -> list[np.ndarray]:
    """Bit i of ``code`` as a boolean column, for each i of ``bits``."""
    return [np.bitwise_and(code, 1 << i, dtype=code.dtype) != 0 for i in bits]


#: bit f of variant j: flag f of :data:`VR_VARIANTS` [j]
_VARIANT_BITS = _packed([col for col in _FLAG_COLUMNS])


def _gather_bools(cols: dict[str, np.ndarray], at: np.ndarray) -> dict[str, np.ndarray]:
    """``{k: c[at]}`` for 1-D boolean columns ``cols`` of one length (at most 16): their bits packed into one column,
    gathered once and tested (numpy's gather costs ~13 instructions an element, a bit test ~0.4): the same
    booleans. A column that is not boolean is gathered alone."""
    bools = [k for k, c in cols.items() if c.dtype == bool and c.ndim == 1]
    out = {k: _rows_of(c, at) for k, c in cols.items() if k not in bools}
    if bools:
        out.update(zip(bools, _bits_of(_rows_of(_packed([cols[k] for k in bools]), at), range(len(bools)))))
    return out


class _Gather:
    """Columns by name: ``given`` ones, else ``np.asarray(d[k])[at]`` of the first source ``(d, at)`` holding
    ``k``, gathered when first read (:func:`emaxvr_plans`: a row's columns are gathered per (row, schedule)
    variant and again per schedule that fits; most are read by neither step). ``got``: what is known so far."""

    def __init__(self, *sources: tuple[dict, np.ndarray], **given: np.ndarray):
        self.sources = sources
        self.got: dict[str, np.ndarray] = dict(given)

    def __getitem__(self, k: str) -> np.ndarray:
        if k in self.got:
            return self.got[k]
        for d, at in self.sources:
            if k in d:
                if isinstance(d, Rows):
                    a = d.take_rows(k, at)
                else:  # (:func:`_rows_of` inline: one design point's few rows by indexing, no call)
                    b = np.asarray(d[k])
                    a = b.take(at, axis=0) if at.size >= _mapper.TAKE_FROM and b.ndim else b[at]
                self.got[k] = a
                return a
        raise KeyError(k)

    def __contains__(self, k: str) -> bool:
        return k in self.got or any(k in d for d, _ in self.sources)

    def eq(self, k: str, value: str) -> np.ndarray:
        """``self[k] == value`` (of a :class:`Rows` source: compared on its source table, then gathered)."""
        if k not in self.got:
            for d, at in self.sources:
                if k in d:
                    if isinstance(d, Rows):
                        return d.eq_rows(k, value, at)
                    break
        return np.asarray(self[k]) == value

    def get(self, k: str, default=None):
        return self[k] if k in self else default

    def update(self, **cols: np.ndarray) -> None:
        self.got.update(cols)

    def gather_bools(self, *keys: str) -> None:
        """Gather columns ``keys`` now (those not known yet; absent ones skipped), the boolean ones of one source
        (not a :class:`Rows`) in one gather (:func:`_gather_bools`): the same columns ``self[k]`` gives. A source
        with one of them is left to ``self[k]`` (packing its bits costs more than the gather it saves)."""
        by: dict[int, list[str]] = {}
        for k in keys:
            if k not in self.got:
                for j, (d, _) in enumerate(self.sources):
                    if k in d:
                        by.setdefault(j, []).append(k)
                        break
        for j, ks in by.items():
            d, at = self.sources[j]
            if len(ks) > 1 and not isinstance(d, Rows):
                self.got.update(_gather_bools({k: np.asarray(d[k]) for k in ks}, at))


class Rows:
    """A builder's row columns (what :func:`emaxvr_plans`, :func:`emaxv_plans` and :func:`fc_plans` take as ``r``),
    each gathered when first read from the smaller table it comes from: column ``k`` is ``given[k]``, or
    ``base[k][index]`` of the first source ``(base, index)`` holding ``k``, followed by the ``tail`` rows (full
    columns; every column of a source must be there too). The same values and types as the columns gathered and
    concatenated at once (the gather commutes with the concatenation); a column never read is never gathered, and
    :class:`_Gather` takes rows of a column in one gather (the indices composed) without building it whole."""

    def __init__(self, given: dict[str, np.ndarray], sources: list[tuple[dict, np.ndarray]],
                 tail: dict[str, np.ndarray] | None = None, n_tail: int = 0):
        self.given, self.sources, self.tail, self.n_tail = given, sources, tail, n_tail
        self.got: dict[str, np.ndarray] = {}
        self._base: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}  # column -> (base, index, source)
        self._full: dict[tuple[int, int], np.ndarray] = {}  # (source, base length) -> index with the tail's rows
        #: (source, base length, id(at)) -> (at, idx[at])
        self._taken: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._eqs: dict[tuple[str, str], np.ndarray] = {}  # (column, value) -> base == value
        #: the rows' mappings without their context (a Rows of the same sources but the context's) and each row's
        #: position in it, when the caller names them (:func:`emaxvr_plans` computes per mapping what it can)
        self.maps: Rows | None = None
        self.at_map: np.ndarray | None = None

    def _of(self, k: str) -> tuple[np.ndarray, np.ndarray, int]:
        got = self._base.get(k)
        if got is not None:
            return got
        for j, (d, idx) in enumerate(self.sources):
            if k in d:
                b = np.asarray(d[k])
                if self.tail is not None:
                    full = self._full.get((j, len(b)))
                    if full is None:
                        full = self._full[(j, len(b))] = np.concatenate([idx, len(b) + np.arange(self.n_tail)])
                    b, idx = np.concatenate([b, np.asarray(self.tail[k])]), full
                got = self._base[k] = (b, idx, j)
                return got
        raise KeyError(k)

    def __getitem__(self, k: str) -> np.ndarray:
        if k in self.given:
            return self.given[k]
        a = self.got.get(k)
        if a is None:
            a = self._composed(k)
            if a is None:
                b, idx, _ = self._of(k)
                a = _rows_of(b, idx)
            self.got[k] = a
        return a

    def _composed(self, k: str) -> np.ndarray | None:
        """Column ``k`` of a :class:`~archmodels.emax.mapper.SlotColumns` source not built yet, in one gather (its
        :meth:`~archmodels.emax.mapper.SlotColumns.gather`: the same values as ``base[k][index]``); else None.
        Without tail rows only (the tail's rows follow the base's)."""
        if self.tail is not None or k in self._base:
            return None
        for d, idx in self.sources:
            if k in d:
                return d.gather(k, idx) if isinstance(d, SlotColumns) and not d.built(k) else None
        return None

    def take_rows(self, k: str, at: np.ndarray) -> np.ndarray:
        """``self[k][at]``, in one gather from the column's base when the column was not built."""
        if k in self.given or k in self.got:
            return _rows_of(np.asarray(self[k]), at)
        b, idx, j = self._of(k)
        return _rows_of(b, self._index_at(j, len(b), idx, at))

    def _index_at(self, j: int, nb: int, idx: np.ndarray, at: np.ndarray) -> np.ndarray:
        """``idx[at]`` for source j's columns of base length ``nb`` (kept while ``at`` is the same object)."""
        key = (j, nb, id(at))
        hit = self._taken.get(key)
        if hit is None or hit[0] is not at:
            hit = self._taken[key] = (at, idx[at])
        return hit[1]

    def __contains__(self, k: str) -> bool:
        return k in self.given or any(k in d for d, _ in self.sources)

    def _eq_base(self, k: str, value: str) -> tuple[np.ndarray, np.ndarray, int, int]:
        b, idx, j = self._of(k)
        m = self._eqs.get((k, value))
        if m is None:
            m = self._eqs[(k, value)] = b == value
        return m, idx, j, len(b)

    def eq(self, k: str, value: str) -> np.ndarray:
        """``np.asarray(self[k]) == value``, compared on the column's source table (a combination's pin: ~200
        entries, not every row; text compares cost ~6 ns an element) and gathered."""
        if k in self.given or k in self.got:
            return np.asarray(self[k]) == value
        m, idx, _, _ = self._eq_base(k, value)
        return m[idx]

    def eq_rows(self, k: str, value: str, at: np.ndarray) -> np.ndarray:
        """``self.eq(k, value)[at]``, in one gather."""
        if k in self.given or k in self.got:
            return np.asarray(self[k])[at] == value
        m, idx, j, nb = self._eq_base(k, value)
        return m[self._index_at(j, nb, idx, at)]

    def get(self, k: str, default=None):
        return self[k] if k in self else default


def _eq(r, k: str, value: str) -> np.ndarray:
    """``np.asarray(r[k]) == value`` per row (:class:`Rows` and :class:`_Gather` compare on their source tables)."""
    return r.eq(k, value) if isinstance(r, (Rows, _Gather)) else np.asarray(r[k]) == value


def _vr_maps(shapes: Sequence[ConvShape], m: dict[str, np.ndarray], x: dict[str, np.ndarray],
             pins: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The numbers of :func:`emaxvr_plans` that depend on a row's mapping, layer and hardware but not on its context
    (input resident, output kept) nor on the schedule variant, per row of ``m`` (the mappings; ``x``: their shape
    columns, ``pins``: their :func:`_pin_masks`): what :func:`_vr_rows`, :func:`_vr_spm_plan` and
    :func:`_vr_traffic` read (passes, segments, SPM units, result sizes, loop counts, ...) and ``allowed``: the
    [mapping, variant] rules a mapping decides alone."""
    g, ic, oc, kh, kw, stride, h, w, oh, ow, kh_ext, kw_ext = (x[k] for k in _CONV)
    e, S, icpar, khpar, gpar, ocp, ow_seg, oc_chunk, p_oh, p_ow = _ints(
        m, "elem", "spm", "icpar", "khpar", "gpar", "oc_par", "ow_seg", "oc_chunk", "pool_oh", "pool_ow")
    oh_out = _eq(m, "outer", "OH")
    rows_m, swap_m = _eq(m, "mode", "rows"), _eq(m, "mode", "swap")
    n0 = len(oh_out)

    def flag(k: str) -> np.ndarray:  # a boolean column of every row (absent: False), read only
        a = np.asarray(m.get(k, False), dtype=bool)
        return a if a.shape == (n0,) else np.broadcast_to(a, (n0,))

    has_pool, per_band = flag("has_pool"), flag("per_band")
    passes = _cdiv(ic, icpar) * _cdiv(kh, khpar)
    n_seg = _cdiv(ow, ow_seg)
    out_total = g * (oc * oh * ow * e)
    in_total = g * ic * h * w * e
    w_group = np.where(x["mac"], (oc * ic * kh * kw + oc) * e, 0)
    pooled_total = np.where(has_pool, g * oc * p_oh * p_ow * e, 0.0)
    per_band_pool = has_pool & per_band

    # ---- SPM plan: bands of the outermost loop so that one accumulation unit fits ----
    span = np.minimum(w, (ow_seg - 1) * stride + kw_ext)
    staged = np.where(rows_m, icpar * gpar * np.minimum(h, kh_ext + stride) * span * e,
                      np.where(swap_m, 2 * icpar * gpar * h * span * e, 0))
    units = np.where(oh_out, oh, _cdiv(oc, ocp))
    # one accumulation unit's SPM bytes as (per-mapping factor) x (what depends on the band count): integers, so
    # the product in any order is the same number (:func:`_unit_bytes`)
    unit = dict(oh_out=oh_out, oh=oh, oc_chunk=oc_chunk, units=units, ocp=ocp,
                a=gpar * np.minimum(oc, oc_chunk) * ow_seg * e, b=gpar * oh * ow_seg * e)
    needs_unit = (passes > 1) | per_band_pool
    unit_most = _unit_bytes(unit, units)  # one band per unit: the smallest SPM unit
    # a pinned band size (rows of an output-row band, channels of an output-channel band) only adds bands
    size = np.asarray(m.get("band_size", np.zeros(len(units))), dtype=np.int64)
    w_gpar = w_group * gpar

    # the rules a mapping decides alone (the same plans, fewer rows to plan): the widened schedules (halo from DRAM,
    # IC loop inside) only exist for output-row bands with an SPM; weights are staged only by multiply-accumulate
    # output-row mappings whose weights fit the SPM; partial sums go to DRAM by choice only with an SPM, several
    # passes, and not per-band pooled (nor when the output stays in the SPM unpooled: :func:`emaxvr_plans`)
    flags = np.array(VR_VARIANTS, dtype=bool)
    bands_ok = oh_out & (np.asarray(m["spm"]) > 0) & ~pins["psum_dram"]
    multi = (ic > np.asarray(m["icpar"])) | (kh > np.asarray(m["khpar"]))
    allowed = np.ones((n0, len(VR_VARIANTS)), bool)
    allowed[:, flags[:, 2]] &= (bands_ok & (kh_ext > stride) & ~pins["halo_spm"])[:, None]
    allowed[:, flags[:, 3]] &= (bands_ok & multi & ~pins["ic_outer"])[:, None]
    allowed[:, flags[:, 0]] &= (x["mac"] & oh_out & (S > 0) & ~(w_gpar > S))[:, None]
    allowed[:, flags[:, 1]] &= ((S > 0) & (passes > 1) & ~(has_pool & per_band))[:, None]

    return dict(
        allowed=allowed, unit=unit,
        # the SPM plan (:func:`_vr_rows`, :func:`_vr_spm_plan`)
        S=S, oh_out=oh_out, has_pool=has_pool, in_total=in_total, staged=staged, can_stage=(S > 0) & (staged > 0),
        smallest=np.where(needs_unit, unit_most, 0), halo_able=rows_m & oh_out & (kh_ext > stride),
        swap_spm=swap_m & (S > 0), inner_able=oh_out & needs_unit & (passes > 1),
        halo_size=ic * gpar * np.maximum(0, kh_ext - stride) * span * e, units=units, needs_unit=needs_unit,
        w_gpar=w_gpar, unit_most=unit_most, unit_one=_unit_bytes(unit, 1),
        size_bands=_cdiv(units, np.maximum(1, size // np.where(oh_out, 1, ocp))), sized=size > 0,
        dram_search=flag("dram_search"),
        # the traffic
        passes=passes, n_seg=n_seg, out_total=out_total, w_group=w_group, pooled_total=pooled_total,
        per_band_pool=per_band_pool)


def _vr_counts(shapes: Sequence[ConvShape], m: dict[str, np.ndarray], x: dict[str, np.ndarray],
               mp: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The counts of :func:`_vr_traffic` that do not depend on the SPM plan (``m_*``: loop counts, bytes per row,
    per burst, per chunk, ...), per row of ``m`` (``x``: its shape columns, ``mp``: its :func:`_vr_maps` numbers):
    per mapping for a :class:`Rows` whose mappings are named, else per plan (one design point: fewer numpy calls
    than per row and gathered)."""
    g, ic, oc, kh, kw, oh, ow = (x[k] for k in ("groups", "ic", "oc", "kh", "kw", "oh", "ow"))
    e, c, icpar, gpar, ocp, pxp, ow_seg, oc_chunk, klmm, p_oh, p_ow = _ints(
        m, "elem", "cols", "icpar", "gpar", "oc_par", "px_par", "ow_seg", "oc_chunk", "kernel_lmms", "pool_oh",
        "pool_ow")
    passes, n_seg, w_group = mp["passes"], mp["n_seg"], mp["w_group"]
    oh_out = _eq(m, "outer", "OH")
    g2 = _cdiv(g, gpar)
    z = _cdiv(oc, oc_chunk)
    oc_iters = oc // oc_chunk * _cdiv(oc_chunk, ocp) + np.where(oc % oc_chunk > 0, _cdiv(oc % oc_chunk, ocp), 0)
    seg_iters = (n_seg - 1) * _cdiv(ow_seg, pxp) + _cdiv(ow - (n_seg - 1) * ow_seg, pxp)
    iters = g2 * passes * oc_iters * oh * seg_iters
    pat_a = _eq(m, "pattern", "A")
    in_par = np.where(pat_a, np.maximum(1, c // 2), c)
    ic_passes = _cdiv(ic, icpar)
    ic_last = ic - (ic_passes - 1) * icpar
    with np.errstate(divide="ignore", invalid="ignore"):
        klmm_runs = np.where(ic_passes > 1, (klmm * (ic_passes - 1) + _cdiv(klmm * ic_last, icpar)) / ic_passes, klmm)
    n_chunks = np.ceil(g * w_group / 4096)
    gran = np.where(oh_out, 1, oh)
    bias_g = oc * e
    with np.errstate(divide="ignore", invalid="ignore"):
        w_stage_each = g * w_group / n_chunks
    chunks, full_chunks, last_chunk = _chunks(oc, oc_chunk)
    return dict(
        # the integer columns the traffic reads (converted here: per mapping, or once per plan)
        m_elem=e, m_cols=c, m_icpar=icpar, m_gpar=gpar, m_ocp=ocp, m_oc_chunk=oc_chunk,
        m_z=z, m_starts=g2 * z * n_seg * passes, m_iters=iters,
        m_loop_ends=g2 * passes * oc_iters * oh * n_seg, m_ops=g * oc * oh * ow * ic * kh * kw,
        m_row_b=_lookup(_cols_sum, shapes, m["shape"], ow_seg) / n_seg * e, m_in_par=in_par,
        m_deliv_rows=ic * x["vk"] * n_seg * z, m_deliv_swap=ic * x["vk"] * n_seg * oc_iters,
        m_regions=g * ic * n_seg * z,
        m_one=(n_seg == 1) & ~_eq(m, "mode", "resident"),
        m_bursts_rows=g2 * passes * z * n_seg * oh, m_bursts_swap=g2 * passes * n_seg * oc_iters * oh,
        m_w_net=g * (w_group - bias_g), m_klmm_runs=klmm_runs, m_n_chunks=n_chunks, m_w_stage_each=w_stage_each,
        m_w_bytes=g * w_group, m_w_par=np.where(pat_a, in_par, c), m_units_act=g2 * z * n_seg, m_bias=g * bias_g,
        m_psum_rows=g * (passes - 1) * oc * oh * n_seg / gran, m_out_rows=g * oc * oh * n_seg / gran,
        m_row_out=ow * e / n_seg * gran, m_o_par=np.where(pat_a, 1, c), m_per=np.maximum(1, gpar * ocp),
        m_chunk=(oh * ow * e).astype(float), m_prow=np.maximum(p_oh * p_ow * e, 1),
        m_other_ops=np.maximum(0, np.asarray(m["alus"]) - np.asarray(m["macs"])) * iters, m_chunks=chunks,
        m_full_chunks=full_chunks, m_last_chunk=last_chunk)

def _vr_rows(r: dict[str, np.ndarray], mp: dict[str, np.ndarray],
             mrow: np.ndarray | None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The SPM plan's numbers of every row of :func:`emaxvr_plans` that depend on its context but not on the schedule
    variant (computed once per row, not per (row, variant)), from its mapping's numbers ``mp`` (:func:`_vr_maps`;
    row k's mapping is ``mrow[k]``, or k if None): (what :func:`_vr_spm_plan` reads, the columns the traffic reads:
    staged inputs). ``bad``: rows no variant can plan (the output kept in the SPM pooled does not fit; a swapped plane
    neither staged nor resident with an SPM); ``halo_rows``: rows whose halo may come from DRAM; ``inner_ok``: rows
    whose input-channel loop may run inside a start."""

    # (many rows: the mapping's boolean columns in one gather, :func:`_gather_bools`)
    bools = {} if mrow is None or len(mrow) < PACK_FROM else _gather_bools(
        {k: mp[k] for k in ("has_pool", "can_stage", "halo_able", "swap_spm", "inner_able")}, mrow)

    def at(k: str) -> np.ndarray:  # mapping column k per row
        got = bools.get(k)
        return got if got is not None else mp[k] if mrow is None else _rows_of(mp[k], mrow)

    n0 = len(r["icpar"]) if mrow is None else len(mrow)

    def flag(k: str) -> np.ndarray:  # a boolean column of every row (absent: False), read only
        a = np.asarray(r.get(k, False), dtype=bool)
        return a if a.shape == (n0,) else np.broadcast_to(a, (n0,))

    in_res, keep = flag("resident"), flag("keep")
    S, has_pool, staged = at("S"), at("has_pool"), at("staged")
    resident = np.where(in_res, at("in_total"), 0.0)
    stage_in = at("can_stage") & ~in_res & (resident + staged + at("smallest") <= S)
    # output-row bands keep the kernel halo rows of every input channel so a band boundary re-reads nothing
    # (variant ``halo_dram``: re-read them from DRAM per band, which leaves the SPM to larger bands)
    halo_rows = stage_in & at("halo_able")
    keep_all = keep & ~has_pool  # the whole output stays: no bands
    keep_pooled = ~keep_all & keep & (at("pooled_total") > S - resident)
    no_spm = ~keep_all & ~keep_pooled & (S == 0)
    free = ~keep_all & ~keep_pooled & ~no_spm  # banded unless the partial sums go to DRAM or need no unit
    row = dict(keep=keep, has_pool=has_pool,
               # with an SPM, planes too large for the LMMs are staged (spec §3 item 3) or not swapped at all
               bad=keep_pooled | (at("swap_spm") & ~(stage_in | in_res)), halo_rows=halo_rows,
               # variant ``ic_inner`` needs output-row bands of several passes (:func:`_vr_spm_plan`)
               inner_ok=at("inner_able") & free,
               halo_kept=np.where(halo_rows, at("halo_size"), 0),
               fixed=resident + np.where(stage_in, staged, 0.0), keep_all=keep_all, no_spm=no_spm, free=free)
    out = dict(stage_in=stage_in)
    return row, out


def _unit_bytes(u: dict[str, np.ndarray], t, at=slice(None)) -> np.ndarray:
    """SPM bytes of one accumulation unit of rows ``at`` (of :func:`_vr_maps`' ``unit`` columns ``u``) split into
    ``t`` bands (per row of at, or one for all): ``gpar * min(oc, oc_chunk) * ceil(oh / t) * ow_seg * e`` for
    output-row bands, ``gpar * min(oc_chunk, ceil(units / t) * ocp) * oh * ow_seg * e`` for output-channel bands,
    the factors without t multiplied per mapping (``a``, ``b``; int64 products: any order gives the same number)."""
    oh_out, oh, oc_chunk, units, ocp, a, b = (u[k][at] for k in ("oh_out", "oh", "oc_chunk", "units", "ocp", "a", "b"))
    return np.where(oh_out, a * _cdiv(oh, t), b * np.minimum(oc_chunk, _cdiv(units, t) * ocp))


def _vr_spm_plan(v: _Gather, row: dict[str, np.ndarray], mp: dict[str, np.ndarray], rep: np.ndarray,
                 mrep: np.ndarray) -> np.ndarray:
    """Which (row, variant) pairs of ``v`` (row ``rep`` of :func:`_vr_rows`' ``row`` numbers, mapping ``mrep`` of
    :func:`_vr_maps`' ``mp``, the variant's flags) have a schedule; adds their SPM plan to ``v``: bands of the
    outermost loop so that one accumulation unit fits, where partial sums live, the SPM need. The rules a row
    decides alone were applied before (its variants are not planned)."""
    stage_w, psum_dram, halo_dram, ic_inner = (v[k] for k in ("stage_w", "psum_dram", "halo_dram", "ic_inner"))
    rows = rows_getter(rep)  # (:func:`_rows_of` of rep, mrep and their subsets; one design point's: a[at], no call)
    S, units, passes, n_seg = (rows(mp[k], mrep) for k in ("S", "units", "passes", "n_seg"))
    keep_all, no_spm, free, needs_unit = (v[k] for k in ("keep_all", "no_spm", "free", "needs_unit"))
    halo_keep = np.where(~halo_dram, rows(row["halo_kept"], rep), 0)
    fixed = rows(row["fixed"], rep) + np.where(stage_w, rows(mp["w_gpar"], mrep), 0.0)
    unit = mp["unit"]
    taken: dict[int, tuple] = {}  # id(at) -> (at, fixed[at], halo_keep[at], mrep[at]): the bisection asks the same rows

    def need(t: np.ndarray, at=slice(None)) -> np.ndarray:  # of the pairs ``at`` (t: per pair of at)
        hit = taken.get(id(at))
        if hit is None or hit[0] is not at:
            hit = taken[id(at)] = (at, rows(fixed, at), rows(halo_keep, at), _Units(unit, rows(mrep, at)))
        return hit[1] + np.where(t > 1, hit[2], 0.0) + hit[3](t)

    need_most = fixed + np.where(units > 1, halo_keep, 0.0) + rows(mp["unit_most"], mrep)  # need(units)
    need_one = fixed + 0.0 + rows(mp["unit_one"], mrep)  # need(1)
    in_dram = free & psum_dram  # an address choice (spec §3 item 3): more traffic
    banded = free & ~psum_dram & needs_unit
    plain = ~(keep_all | no_spm | in_dram | banded)
    t0 = _first_band_count(units, need, S, need_most, need_one)
    # variant ``ic_inner``: a start loops OW, OC and the input-channel passes over one output row, so the
    # partial sums of one row stay in the SPM and the passes share the start's overhead (band = 1 row)
    t0 = np.where(ic_inner, np.where(need_most <= S, units, 0), t0)
    # a pinned band size only adds bands
    t0 = np.where(v["sized"] & (t0 > 0), np.maximum(t0, rows(mp["size_bands"], mrep)), t0)
    t = np.maximum(t0, 1)
    out_total = rows(mp["out_total"], mrep)
    bad = keep_all & ((S == 0) | (fixed + out_total > S))
    bad |= banded & (t0 == 0)
    bad |= plain & (fixed > S)
    bands = np.where(banded, t, 1)
    psum_home = np.where(passes > 1, np.where(no_spm | in_dram, _DRAM, _SPM), np.where(in_dram, _DRAM, _NONE))
    at = np.flatnonzero(banded)
    need_t = np.zeros(len(t))
    need_t[at] = need(rows(t, at), at)
    spm_need = _select([keep_all, no_spm, in_dram, banded], [fixed + out_total, 0.0, fixed, need_t], fixed)
    # staging weights pays off in time only when they would be re-read; a DRAM-traffic search (``dram_search``)
    # also keeps it for weights read once: one stream of 4 KB reads rounds to fewer bus words than a transfer per LMM
    bad |= stage_w & (bands == 1) & (n_seg == 1) & ~v["dram_search"]
    bad |= halo_dram & (bands == 1)  # no band boundary: the same plan as keeping the halo
    bad |= _pinned_out(v, psum_home, (halo_keep > 0) & (bands > 1), ic_inner, passes)
    v.update(bands=bands, psum_home=psum_home, spm_need=spm_need, halo_keep=halo_keep)
    return ~bad


class _Units:
    """:func:`_unit_bytes` of fixed rows ``at`` for any band counts, their columns gathered once (the band-count
    bisection asks the same rows at several band counts)."""

    def __init__(self, u: dict[str, np.ndarray], at: np.ndarray):
        rows = rows_getter(at)  # (one design point's: a[at], no call)
        self.u = {k: rows(u[k], at) for k in ("oh_out", "oh", "oc_chunk", "units", "ocp", "a", "b")}

    def __call__(self, t) -> np.ndarray:
        return _unit_bytes(self.u, t)


def _pin_masks(r: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Per row of ``r``, which value each user pin (:data:`PINS`; absent = ``auto``) asks for."""
    out = {}
    for name, values in PINS.items():
        has = PIN_PREFIX + name in r
        for val in values[1:]:
            out[f"{name}_{val}"] = _eq(r, PIN_PREFIX + name, val) if has else np.zeros(n, bool)
    return {k.replace("ic_loop", "ic").replace("psum_home", "psum"): m for k, m in out.items()}


def _pinned_out(v: dict[str, np.ndarray], psum_home, halo_kept, ic_inner, passes) -> np.ndarray:
    """Plans a user pin excludes (the ``pin_*`` masks of :func:`_pin_masks`, repeated per plan)."""
    out = v["pin_psum_spm"] & (psum_home == _DRAM) | v["pin_psum_dram"] & (psum_home == _SPM)
    out |= v["pin_halo_dram"] & halo_kept | v["pin_halo_spm"] & np.asarray(v["halo_dram"], dtype=bool)
    out |= v["pin_ic_outer"] & ic_inner | v["pin_ic_inner"] & ~ic_inner & (passes > 1)
    return out


def _vr_traffic(shapes: Sequence[ConvShape], v: dict[str, np.ndarray]) -> PlanTable:
    """The counts and transfers of EMAXVR schedules ``v`` (rows that fit, with their SPM plan; the counts that do not
    depend on it, ``m_*``, from :func:`_vr_maps`)."""
    n = len(v["src"])
    g, ic, oc, oh = (v[k] for k in ("groups", "ic", "oc", "oh"))
    e, c, S, icpar, gpar, ocp, oc_chunk = (v[k] for k in ("m_elem", "m_cols", "S", "m_icpar", "m_gpar", "m_ocp",
                                                         "m_oc_chunk"))
    oh_out = _eq(v, "outer", "OH")
    rows_m, res_m, swap_m = (_eq(v, "mode", k) for k in ("rows", "resident", "swap"))
    in_res, keep, has_pool, mac, stage_w, stage_in = (
        np.asarray(v[k], dtype=bool) for k in ("resident", "keep", "has_pool", "mac", "stage_w", "stage_in"))
    bands, psum_home, halo_keep, passes, n_seg = (v[k] for k in ("bands", "psum_home", "halo_keep", "passes", "n_seg"))
    out_total, pooled_total, per_band_pool = (v[k] for k in ("out_total", "pooled_total", "per_band_pool"))
    z = v["m_z"]
    t_oh = np.where(oh_out, bands, 1)
    t_oc = np.where(oh_out, 1, bands)

    # ---- counts per group (bytes) and per group batch (starts, iterations) ----
    starts = v["m_starts"]
    runs = starts * bands  # (start, pass) runs: what the transfers are counted per
    ic_inner = np.asarray(v["ic_inner"], dtype=bool)
    activations = np.where(ic_inner, runs // np.maximum(passes, 1), runs)  # the passes of a row share a start
    rows_band_sum = _lookup(_rows_sum, shapes, v["shape"], t_oh)
    row_b = v["m_row_b"]  # bytes of one input row segment
    in_par = v["m_in_par"]
    halo = halo_keep != 0

    # inputs
    res_rows = ic * rows_band_sum * n_seg * z * t_oc
    deliveries = _select([rows_m, res_m], [v["m_deliv_rows"] * t_oc, res_rows], v["m_deliv_swap"]) * g
    touched = np.where(halo, v["rows_all"], rows_band_sum)
    dram_rows = _select([rows_m, res_m], [ic * touched * n_seg * z * t_oc, res_rows],
                          ic * rows_band_sum * n_seg * t_oc) * g
    spm_r = np.where(in_res | stage_in, deliveries * row_b, 0.0)
    spm_w = np.where(stage_in, dram_rows * row_b, 0.0)
    # full-width rows of a channel are contiguous: staged as one transfer per channel and band
    regions = v["m_regions"] * t_oc * np.where(halo, 1, t_oh)
    one = v["m_one"]
    stages = [("input", np.where(one, regions, dram_rows), np.where(one, dram_rows * row_b / regions, row_b), stage_in)]
    # at each output row (rows), each output row of each output-channel iteration (swap), once per start (resident)
    in_bursts = _select([rows_m, swap_m], [v["m_bursts_rows"], v["m_bursts_swap"]], runs)
    in_bursts = np.maximum(in_bursts, 1)
    # broadcast: each channel's rows needed at a burst go out as one transfer (spec §3 item 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_b = deliveries / in_bursts
        per = np.where(deliveries != 0, np.where(gpar * icpar < d_b, gpar * icpar, d_b), 0.0)
        each = np.where(per != 0, deliveries * row_b / (in_bursts * per), 0.0)
    slots = _split_first("input", ~(in_res | stage_in), in_bursts, per, each, in_par)

    # weights (one transfer per kernel LMM per start; re-read per output-row band and per segment)
    w_deliv = v["m_w_net"] * t_oh * n_seg
    # kernel LMMs per run: a partial last input-channel pass fills fewer of them (each still gets its taps' share)
    w_count = np.maximum(runs * v["m_klmm_runs"], 1)
    w_bytes = v["m_w_bytes"]
    stages.append(("weight", v["m_n_chunks"], v["m_w_stage_each"], stage_w))
    spm_w = spm_w + np.where(stage_w, w_bytes, 0.0)
    spm_r = spm_r + np.where(stage_w, w_deliv, 0.0)
    # each output-channel chunk moves its own weights: the full chunks, then the last, smaller one
    split = v["m_chunks"], v["m_full_chunks"], v["m_last_chunk"]
    slots += _by_chunk("weight", ~stage_w, runs, w_count / runs, w_count, w_deliv, oc, oc_chunk, v["m_w_par"], mac,
                       split)
    # bias: to the bottom PEs with the first pass of every accumulation unit
    units_act = v["m_units_act"] * bands
    slots += _by_chunk("weight", ~stage_w, units_act, 1, units_act, v["m_bias"] * t_oh * n_seg, oc, oc_chunk, 1, mac,
                       split)

    # partial sums between passes, and the final output rows: they move at each end of the OW loop (a row per
    # channel) when OH is the outer loop, or as the whole OH x OW block of a channel at each OH-loop end when
    # OC is outer (spec §3.1)
    psum_rows, out_rows, row_out = v["m_psum_rows"], v["m_out_rows"], v["m_row_out"]
    o_par = v["m_o_par"]
    per = v["m_per"]
    has_ps = psum_rows != 0
    ps_dram = psum_home != _SPM
    slots += _split_first("psum", ps_dram, psum_rows / per, per, row_out, o_par, has_ps)
    slots.append(_Slot("psum", True, _PDRAIN, ps_dram, psum_rows / per, per, row_out, o_par, has_ps))
    spm_r = spm_r + np.where(has_ps & ~ps_dram, psum_rows * row_out, 0.0)
    spm_w = spm_w + np.where(has_ps & ~ps_dram, psum_rows * row_out, 0.0)
    # the SPM keeps what it can of the result (and the kept pooled output)
    spill = np.where(has_pool & ~per_band_pool,
                     np.maximum(0.0, out_total - (S - np.where(keep, pooled_total, 0.0))), 0.0)
    to_spm = keep | has_pool
    in_spm = out_total - spill
    slots += _split_last("output", ~to_spm, np.where(to_spm, out_rows / per * in_spm / out_total, out_rows / per),
                         per, row_out, o_par)
    spm_w = spm_w + np.where(to_spm, in_spm, 0.0)
    slots += _split_last("spill", True, out_rows / per * spill / out_total, per, row_out, o_par, to_spm & (spill != 0))

    # the pooling pass reads the conv result plane by plane (SPM part + spilled part), writes pooled planes
    chunk = v["m_chunk"]
    prow = v["m_prow"]
    slots.append(_Slot("spill", False, _POOL, True, spill / chunk, 1, chunk, c, has_pool & (spill != 0)))
    slots.append(_Slot("output", False, _POOL, False, (out_total - spill) / chunk, 1, chunk, c, has_pool))
    spm_r = spm_r + np.where(has_pool, out_total - spill, 0.0)
    slots.append(_Slot("output", True, _POOL, ~keep, pooled_total / prow, 1, prow, c, has_pool))
    spm_w = spm_w + np.where(has_pool & keep, pooled_total, 0.0)

    out_once = np.where(keep, 0.0, np.where(has_pool, pooled_total, out_total))
    band_len = np.where(oh_out, _cdiv(oh, bands), np.minimum(oc, _cdiv(_cdiv(oc, ocp), bands) * ocp))
    compulsory = conv_compulsory_bytes(v["touched"], e, w_bytes, out_once, in_res)
    cols = _plan_cols(v, iterations=v["m_iters"], loop_ends=v["m_loop_ends"], activations=activations,
                      ops=v["m_ops"], passes=passes, compulsory=compulsory, band_len=band_len, n_seg=n_seg,
                      starts=starts, bands=bands, spm_read=spm_r, spm_write=spm_w, spm_need=v["spm_need"], mac=mac,
                      psum_home=psum_home, stage_w=stage_w, ic_inner=ic_inner, halo_dram=v["halo_dram"],
                      halo_kept=halo & (bands > 1), stage_in=stage_in, in_res=in_res, keep=keep,
                      other_ops=v["m_other_ops"])
    band_dim = _BAND_DIMS.take(np.asarray(oh_out, bool).view(np.uint8))
    return _assemble(n, np.ones(n, bool), v["src"], cols, _label(v, band_dim),
                     slots, stages, [], v["load_bytes_per_iter"])


#: the band dimension of an EMAXVR plan by its outer loop (OC, OH), as ``np.where(oh_out, "output-row",
#: "output-channel")`` gives it (the same fixed-width texts, one gather instead of a text choice per plan)
_BAND_DIMS = np.array(["output-channel", "output-row"])


def conv_compulsory_bytes(touched: np.ndarray, elem: np.ndarray, weight_bytes: np.ndarray, out_bytes: np.ndarray,
                          in_spm: np.ndarray | bool = False) -> np.ndarray:
    """DRAM bytes no schedule can avoid (issue 12): every input element the layer reads, every weight and every
    output element it leaves in DRAM, moved once. An input already in the SPM (chained from the previous
    layer) and an output kept there for the next layer cost nothing; ``out_bytes`` says what is left in DRAM.
    ``touched``: per row, its layer's input elements the output reads (:func:`_touched_inputs`, a
    :func:`shape_columns` column)."""
    return np.where(in_spm, 0.0, touched * elem) + weight_bytes + out_bytes


@lru_cache(maxsize=4096)
def _touched_inputs(sh: ConvShape) -> int:
    """Input elements (all groups and channels) inside the rows and columns the output reads."""
    return sh.groups * sh.ic * sh.input_rows(0, sh.oh) * sh.input_cols(0, sh.ow)


def _first_band_count(units: np.ndarray, need, budget: np.ndarray, need_most: np.ndarray,
                      need_one: np.ndarray) -> np.ndarray:
    """Smallest band count t in 1..units with need(t) <= budget (need is non-increasing), 0 if none.
    ``need(t, at)``: the need of rows ``at`` (an index) at t (per row of at); ``need_most``, ``need_one``:
    need(units), need(1). Bisection over the rows neither end decides (a few percent of them), numpy over those rows."""
    ones = np.ones_like(units)
    top, single = need_most > budget, need_one <= budget
    out = np.where(top, 0, np.where(single, 1, units))
    at = np.flatnonzero(~top & ~single)
    if len(at):
        lo, hi, b = ones[at], units[at], budget[at]  # need(lo) > budget >= need(hi)
        while True:
            go = hi - lo > 1
            if not go.any():
                break
            mid = (lo + hi) // 2
            fits = need(mid, at) <= b
            hi = np.where(go & fits, mid, hi)
            lo = np.where(go & ~fits, mid, lo)
        out[at] = hi
    return out


# ---------------------------------------------------------------- FC / dense products
def fc_plans(shapes: Sequence[FCShape], r: dict[str, np.ndarray]) -> PlanTable:
    """FC schedule (spec §3.1) of every row of ``r``: per (pass, chunk) load the weights, then one start per
    vector. ``r`` as for :func:`emaxvr_plans` (no pooling)."""
    n = len(r["icpar"])
    x = shape_columns(shapes, r["shape"])
    inputs, outputs, nb = x["inputs"], x["outputs"], x["batch"]
    e, c, S, icpar, oc_chunk = _ints(r, "elem", "cols", "spm", "icpar", "oc_chunk")
    pload = np.asarray(r["pload"], dtype=bool)
    in_res, keep = (np.asarray(r[k], dtype=bool) for k in ("resident", "keep"))
    passes = _cdiv(inputs, icpar)
    chunks = _cdiv(outputs, oc_chunk)
    starts = passes * chunks * nb
    iters = passes * outputs * nb
    w_bytes = (inputs * outputs + outputs) * e
    w_count = inputs * chunks  # one transfer per MAC PE's LMM per (pass, chunk): no broadcast
    pc = passes * chunks
    # with PLOAD the first chunk cannot overlap anything; each chunk moves its own weights (the full chunks of
    # every pass, then the last, smaller chunk), so bus words are rounded per chunk
    # (a MAC PE's LMM gets one weight per output of the chunk; the bias of the chunk goes to the bottom PE with
    # its first pass)
    _, full, rest, each_full, each_rest = _chunk_split(inputs * outputs * e, w_count, outputs, oc_chunk)
    n_full = np.where(chunks > 1, passes * full, pc)
    b_full = np.where(chunks > 1, full, 1)
    slots = [_Slot("weight", False, _LOAD, True, np.where(pload, 1, n_full), w_count / pc, each_full, c),
             _Slot("weight", False, _PLOAD, True, n_full - 1, w_count / pc, each_full, c, pload),
             _Slot("weight", False, _LOAD, True, passes, w_count / pc, each_rest, c, (rest > 0) & ~pload),
             _Slot("weight", False, _PLOAD, True, passes, w_count / pc, each_rest, c, (rest > 0) & pload),
             _Slot("weight", False, _LOAD, True, np.where(pload, 1, b_full), 1, oc_chunk * e, 1),
             _Slot("weight", False, _PLOAD, True, b_full - 1, 1, oc_chunk * e, 1, pload),
             _Slot("weight", False, _LOAD, True, 1, 1, rest * e, 1, (rest > 0) & ~pload),
             _Slot("weight", False, _PLOAD, True, 1, 1, rest * e, 1, (rest > 0) & pload)]
    psum_vec = outputs * nb * e
    res_in = np.where(in_res, inputs * nb * e, 0)
    psum_home = np.where(passes == 1, _NONE, np.where((0 < psum_vec) & (psum_vec <= S - res_in), _SPM, _DRAM))
    bad = keep & (S < psum_vec + res_in)
    row = outputs / chunks * e
    has_ps = passes > 1
    cnt = (passes - 1) * chunks * nb
    ps_dram = psum_home != _SPM
    slots.append(_Slot("psum", False, _LOAD, ps_dram, cnt, 1, row, 1, has_ps))
    slots.append(_Slot("psum", True, _DRAIN, ps_dram, cnt, 1, row, 1, has_ps))
    spm_r = np.where(has_ps & ~ps_dram, cnt * row, 0.0)
    spm_w = np.where(has_ps & ~ps_dram, cnt * row, 0.0)
    slots.append(_Slot("output", True, _DRAIN, ~keep, chunks * nb, 1, row, 1))
    spm_w = spm_w + np.where(keep, outputs * nb * e, 0.0)
    in_bytes = inputs * nb * e
    spm_r = spm_r + np.where(in_res, in_bytes, 0.0)
    cols = _plan_cols(r, iterations=iters, loop_ends=starts, activations=starts, ops=inputs * outputs * nb,
                      compulsory=np.where(in_res, 0.0, in_bytes) + w_bytes + np.where(keep, 0.0, outputs * nb * e),
                      band_len=outputs, n_seg=1,
                      passes=passes, starts=starts, bands=1, spm_read=spm_r, spm_write=spm_w,
                      spm_need=np.where(psum_home == _SPM, psum_vec, 0.0), mac=True, psum_home=psum_home,
                      stage_w=False)
    return _assemble(n, ~bad, np.arange(n), cols, _label(r, "-"), slots, [],
                     [("input", np.where(in_res, 0.0, in_bytes), True)], r["load_bytes_per_iter"])


def concat(tables: Sequence[PlanTable]) -> PlanTable:
    """The plans of ``tables`` one table after another (``src`` kept as is)."""
    offsets = np.cumsum([0] + [len(t) for t in tables])

    def cat(get) -> dict[str, np.ndarray]:
        return {k: np.concatenate([get(t)[k] for t in tables]) for k in get(tables[0])}

    return PlanTable(cat(lambda t: t.plan), cat(lambda t: t.label), np.concatenate([t.src for t in tables]),
                     tuple((block, at + o) for t, o in zip(tables, offsets) for block, at in t.moves))


class Concat:
    """Plan tables one after another, concatenated only when plans are taken (:meth:`take`): each table's plans
    taken, then the (smaller) results concatenated, when the plans asked come table by table; the same table as
    ``concat(tables).take(rows)`` (a chunk keeps about a third of its plans: concatenating every column of every plan
    first copied three times as much)."""

    def __init__(self, tables: Sequence[PlanTable]):
        self.tables = list(tables)
        self.offsets = np.cumsum([0] + [len(t) for t in self.tables])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def column(self, k: str) -> np.ndarray:
        """Plan column ``k`` of every plan (concatenated)."""
        return np.concatenate([t.plan[k] for t in self.tables])

    def take(self, rows: np.ndarray) -> PlanTable:
        """``concat(tables).take(rows)``."""
        rows = np.asarray(rows, dtype=np.int64)
        which = np.searchsorted(self.offsets[1:], rows, side="right")  # each row's table
        if len(rows) > 1 and (which[1:] < which[:-1]).any():  # rows going back to an earlier table
            return concat(self.tables).take(rows)
        cuts = np.searchsorted(which, np.arange(len(self.tables) + 1))
        parts = [(t, rows[a:b] - o) for t, a, b, o in zip(self.tables, cuts[:-1], cuts[1:], self.offsets)]
        # (as concat of each table's take: its columns gathered straight into the concatenated ones, one copy)
        at = np.cumsum([0] + [len(r) for _, r in parts])
        return PlanTable(_gathered([(t.plan, r) for t, r in parts]), _gathered([(t.label, r) for t, r in parts]),
                         np.concatenate([t.src[r] for t, r in parts]),
                         tuple((block, to + o) for (t, r), o in zip(parts, at) for block, to in t._take_moves(r)))


def _gathered(parts: list[tuple[dict[str, np.ndarray], np.ndarray]]) -> dict[str, np.ndarray]:
    """``{k: np.concatenate([cols[k][rows] for cols, rows in parts])}`` for the keys of the first part's columns:
    a column of the same dtype in every part gathered straight into its place in the result (``np.take`` with
    ``out``; ``mode="wrap"``: unbuffered, the same values as ``cols[k][rows]`` for every valid index), else as
    written."""
    n = sum(len(r) for _, r in parts)
    out = {}
    for k in parts[0][0]:
        cols = [c[k] for c, _ in parts]
        if any(c.dtype != cols[0].dtype or c.shape[1:] != cols[0].shape[1:] for c in cols):
            out[k] = np.concatenate([c[r] for c, (_, r) in zip(cols, parts)])
            continue
        o = np.empty((n,) + cols[0].shape[1:], dtype=cols[0].dtype)
        a = 0
        for c, (_, r) in zip(cols, parts):
            np.take(c, r, axis=0, out=o[a:a + len(r)], mode="wrap")
            a += len(r)
        out[k] = o
    return out


def schedule_label(tab: PlanTable, rows: np.ndarray) -> np.ndarray:
    """``psum:HOME[, N DIM bands][, weights staged]`` of plans ``rows``."""
    home = tab.plan["psum_home"][rows].astype(int)
    bands = tab.plan["bands"][rows].astype(int)
    out = []
    for h, b, dim, st in zip(home, bands, tab.label["band_dim"][rows], tab.plan["stage_w"][rows]):
        s = f"psum:{PSUM_HOMES[h]}"
        if b > 1:
            s += f", {b} {dim} bands"
        if st:
            s += ", weights staged"
        out.append(s)
    return np.array(out, dtype=object)

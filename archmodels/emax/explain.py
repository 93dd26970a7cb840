"""Why a plan was chosen: loop nest, tiles, where each datum lives, and the runner-up (issue 12).

The mapper (:func:`archmodels.emax.model._choose`) picks one plan per layer and design point; these
functions turn the chosen plan and the runner-up (the best other plan by the same criterion) into the
per-layer contract keys ``loop_nest``, ``tiles``, ``placement``, ``runner_up`` and ``runner_up_lost``
(``dse evaluate ... --explain`` prints them) and the ratios :data:`RATIO_KEYS`. Strings are built when read
(:class:`LazyText`) and once per distinct plan content (the columns each text function reads), not per
design point: a batch of many points pays for none until its contract dictionaries are built.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from ..num import objects
from .traffic import PSUM_HOMES, PlanTable

EXPLAIN_KEYS = ("loop_nest", "tiles", "placement", "runner_up", "runner_up_lost")
#: numeric companions: the runner-up's time, DRAM bytes and energy over the chosen plan's
RATIO_KEYS = ("runner_up_time_ratio", "runner_up_dram_ratio", "runner_up_energy_ratio")


#: per text function, the plan columns and labels its string reads (plans equal in these read the same,
#: whatever their row): the content key of :func:`by_content`
_READS: dict = {}


def _reads(nums: tuple[str, ...], labels: tuple[str, ...]):
    """Declare the plan columns ``nums`` and labels ``labels`` a text function reads."""
    def deco(fn):
        _READS[fn] = (nums, labels)
        return fn
    return deco


@_reads(("bands", "passes", "ic_inner", "band_len", "n_seg"), ("order_name", "band_dim"))
def loop_nest(tab: PlanTable, r: int) -> str:
    """The whole nest, outermost first: bands, input-channel passes, then the loops of one start."""
    p, lab = tab.plan, tab.label
    order = str(lab["order_name"][r]).split(",")
    bands, passes = int(p["bands"][r]), int(p["passes"][r])
    outer = []
    if bands > 1:
        outer.append(f"{bands} {lab['band_dim'][r]} bands")
    if bool(p["ic_inner"][r]):
        outer.append(f"{int(p['band_len'][r]) * bands} output rows (one per start)")
        return " > ".join(outer[1:] + [f"start[{','.join(order[:-1])},IC x{passes}]"])
    if passes > 1:
        outer.append(f"{passes} input-channel passes")
    if int(p["n_seg"][r]) > 1:
        outer.append(f"{int(p['n_seg'][r])} OW segments")
    return " > ".join(outer + [f"start[{','.join(reversed(order))}]" if len(order) > 1 else f"start[{order[0]}]"])


@_reads(("band_len", "ic_inner", "bands", "oc_chunk", "ow_seg", "icpar", "oc_par", "gpar", "px_par", "khpar"),
        ("band_dim",))
def tiles(tab: PlanTable, r: int) -> str:
    """Tile sizes: what one start (or band) covers along OH/OC/OW/IC, and per iteration."""
    p = tab.plan
    dim = tab.label["band_dim"][r]
    band = int(p["band_len"][r])
    parts = []
    if bool(p["ic_inner"][r]):
        parts.append("OH 1 per start")
    elif int(p["bands"][r]) > 1:
        parts.append(f"{'OH' if dim == 'output-row' else 'OC'} {band} per band")
    parts.append(f"OC {int(p['oc_chunk'][r])} per start")
    parts.append(f"OW {int(p['ow_seg'][r])} per segment")
    parts.append(f"IC {int(p['icpar'][r])} per pass")
    parts.append(f"per iteration {int(p['oc_par'][r]) * int(p['gpar'][r])} OC x {int(p['px_par'][r])} px x "
                 f"{int(p['icpar'][r])} IC x {int(p['khpar'][r])} kernel rows")
    return ", ".join(parts)


@_reads(("stage_in", "in_res", "keep", "stage_w", "halo_kept", "halo_dram", "has_pool", "bands", "psum_home"),
        ("mode", "band_dim"))
def placement(tab: PlanTable, r: int) -> str:
    """Where inputs, weights, partial sums and outputs live (LMM, SPM, DRAM) and how long."""
    p, mode = tab.plan, str(tab.label["mode"][r])
    b = {k: bool(p[k][r]) for k in ("stage_in", "in_res", "keep", "stage_w", "halo_kept", "halo_dram", "has_pool")}
    lmm_in = {"rows": "LMM rows swapped per output row", "resident": "LMM for the whole start",
              "swap": "LMM rows swapped per output row and OC iteration", "regs": "registers"}.get(mode, mode)
    src = "SPM (previous layer's output)" if b["in_res"] else (
        "DRAM -> SPM staged once" + (", band halo re-read from DRAM" if b["halo_dram"] else "")
        + (", band halo kept in the SPM" if b["halo_kept"] else "") if b["stage_in"] else
        "DRAM once per band" if int(p["bands"][r]) > 1 and tab.label["band_dim"][r] == "output-channel" else "DRAM")
    weights = "SPM (staged once)" if b["stage_w"] else ("DRAM once per band" if int(p["bands"][r]) > 1 else "DRAM")
    home = PSUM_HOMES[int(p["psum_home"][r])]
    psum = {"-": "none (one pass)", "spm": "SPM between passes", "dram": "DRAM between passes"}[home]
    if b["keep"]:
        out = "SPM (kept for the next layer)" + (" after the fused pooling" if b["has_pool"] else "")
    elif b["has_pool"]:
        out = "SPM (spill to DRAM), pooled output to DRAM"
    else:
        out = "DRAM"
    return f"input: {src} -> {lmm_in}; weights: {weights}; partial sums: {psum} (LMM double-buffered); output: {out}"


def verdicts(criterion: np.ndarray | str, worse: np.ndarray, more_dram: np.ndarray, none: np.ndarray) -> np.ndarray:
    """Why each runner-up lost, as one of a few phrases (numbers are in the ``runner_up_*_ratio`` metrics);
    ``criterion`` a string: every point's (the four phrases written once)."""
    if isinstance(criterion, str):
        return np.array(_phrases(criterion), dtype=object)[_verdict_at(worse, more_dram, none)]
    return np.select([none, worse, more_dram],
                     ["no other plan within the criterion's tolerance", "worse " + criterion.astype(str),
                      "tied on " + criterion.astype(str) + " (within the tolerance), more DRAM traffic"],
                     "tied on " + criterion.astype(str) + " and DRAM traffic, more energy or later in order"
                     ).astype(object)


def verdicts_coded(names: Sequence[str], code: np.ndarray, worse: np.ndarray, more_dram: np.ndarray,
                   none: np.ndarray) -> np.ndarray:
    """:func:`verdicts` of pairs under criteria ``names[code]`` (``code`` per pair): each criterion's four phrases
    written once, each pair's taken from that [criterion, phrase] table (no text built per pair: a batch of random
    points has every criterion, and building its phrases per pair cost ~10 % of an EMAXV batch)."""
    table = np.array([_phrases(str(c)) for c in names], dtype=object).reshape(len(names), 4)
    return table[code, _verdict_at(worse, more_dram, none)]


def _phrases(criterion: str) -> list[str]:
    """The four verdicts under ``criterion``, in :func:`_verdict_at`'s order."""
    return ["no other plan within the criterion's tolerance", "worse " + criterion,
            "tied on " + criterion + " (within the tolerance), more DRAM traffic",
            "tied on " + criterion + " and DRAM traffic, more energy or later in order"]


def _verdict_at(worse: np.ndarray, more_dram: np.ndarray, none: np.ndarray) -> np.ndarray:
    """Which of :func:`_phrases` each pair gets: no runner-up, worse, tied with more DRAM bytes, tied otherwise."""
    return np.where(none, 0, np.where(worse, 1, np.where(more_dram, 2, 3)))


def by_content(tab: PlanTable, rows: np.ndarray, fn) -> np.ndarray:
    """``fn(tab, row)`` for each of ``rows``, called once per distinct content: the columns ``fn`` reads
    (:data:`_READS`), remembered across calls (a study meets the same contents again and again)."""
    if not len(rows):
        return np.empty(0, dtype=object)
    rows, at = np.unique(np.asarray(rows, dtype=np.int64), return_inverse=True)  # distinct rows first (cheap)
    nums, labs = _READS[fn]
    key = np.empty((len(rows), len(nums) + len(labs)))
    for j, k in enumerate(nums):
        key[:, j] = tab.plan[k][rows]
    for j, k in enumerate(labs):
        key[:, len(nums) + j] = [_code(s) for s in tab.label[k][rows].tolist()]
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    memo = _MEMO.setdefault(fn, {})
    out = []
    for j in first.tolist():
        k = tuple(key[j].tolist())
        text = memo.get(k)
        if text is None:
            text = memo[k] = fn(tab, int(rows[j]))
        out.append(text)
    if len(memo) > 100_000:
        memo.clear()
    return np.array(out, dtype=object)[inv.reshape(-1)][at.reshape(-1)]


#: explanation strings by function and plan content (bounded: cleared past 100,000 entries)
_MEMO: dict = {}
#: label strings as numbers for the content keys (few distinct: mapping names, loop orders, modes)
_CODES: dict[str, int] = {}


def _code(s) -> int:
    c = _CODES.get(s)
    if c is None:
        c = _CODES[s] = len(_CODES)
    return c


def text_of(fn, tab: PlanTable, row: int) -> str:
    """``fn(tab, row)`` of one plan, remembered by content as in :func:`by_content` (the same key)."""
    nums, labs = _READS[fn]
    p, lab = tab.plan, tab.label
    key = tuple(float(p[k][row]) for k in nums) + tuple(float(_code(lab[k][row])) for k in labs)
    memo = _MEMO.setdefault(fn, {})
    text = memo.get(key)
    if text is None:
        text = memo[key] = fn(tab, row)
    return text


class LazyText:
    """A label column whose strings are built when read (issue 12's explanation keys cost a batch nothing
    until a point's contract dictionary asks for them).

    Point i shows ``fn(table, row)`` of the plan it was given with :meth:`put`, or the value set with
    ``column[at] = value``. Reading one point builds one string; ``np.asarray(column)`` builds them all
    once per distinct content (:func:`by_content`) and keeps the array.
    """

    def __init__(self, n: int, fn, _arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                 _tables: list[PlanTable] | None = None):
        self.fn = fn
        if _arrays is None:
            _arrays = (objects(n, None), np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64))
        self.fixed, self.part, self.row = _arrays  # part: which put() a point reads (-1: its fixed value)
        self.tables: list[PlanTable] = [] if _tables is None else _tables
        self._all: np.ndarray | None = None

    def put(self, at: np.ndarray, tab: PlanTable, rows: np.ndarray) -> None:
        """Points ``at`` read plan ``rows`` of ``tab``."""
        self.part[at] = len(self.tables)
        self.row[at] = rows
        self.tables.append(tab)
        self._all = None

    def __setitem__(self, at, value) -> None:
        self.fixed[at] = value
        self.part[at] = -1
        self._all = None

    def __len__(self) -> int:
        return len(self.fixed)

    def __getitem__(self, i):
        if self._all is None and isinstance(i, (int, np.integer)):
            part = int(self.part[i])
            return self.fixed[i] if part < 0 else text_of(self.fn, self.tables[part], int(self.row[i]))
        return np.asarray(self)[i]

    @staticmethod
    def choose(cond: np.ndarray, a: LazyText, b: LazyText) -> LazyText:
        """``np.where(cond, a, b)`` of two columns of one text function, still lazy: each point keeps the source
        it has in the column it is taken from (its fixed value, or a plan of one of the tables)."""
        cond = np.asarray(cond, dtype=bool)
        for every, col in ((cond.all(), a), (not cond.any(), b)):  # one column's points only (one design point)
            if every:
                return LazyText(len(cond), col.fn, (col.fixed.copy(), col.part.copy(), col.row.copy()),
                                list(col.tables))
        part = np.where(cond, a.part, np.where(b.part >= 0, b.part + len(a.tables), -1))
        return LazyText(len(part), a.fn, (np.where(cond, a.fixed, b.fixed), part, np.where(cond, a.row, b.row)),
                        a.tables + b.tables)

    def __array_function__(self, func, types, args, kwargs):
        """``np.where`` between two columns of one text function stays lazy (:meth:`choose`: a GEMM form picked
        per point, ``archmodels.gemm.pick``, builds no string); any other numpy function gets the strings."""
        if func is np.where and len(args) == 3 and not kwargs:
            c, a, b = args
            if isinstance(a, LazyText) and isinstance(b, LazyText) and a.fn is b.fn and not isinstance(c, LazyText):
                return LazyText.choose(c, a, b)
        return func(*_strings(args), **{k: _strings(v) for k, v in kwargs.items()})

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if self._all is None:
            out = self.fixed.copy()
            for part, tab in enumerate(self.tables):
                at = np.flatnonzero(self.part == part)
                if len(at):
                    out[at] = by_content(tab, self.row[at], self.fn)
            self._all = out
        return self._all if dtype is None else self._all.astype(dtype)


class _ColumnText(LazyText):
    """Column ``i`` of a :class:`LazyTextColumns`: its arrays are rows of the shared ones, taken when used (a
    layer's label dict holds one per text key; a study's trial reads none)."""

    def __init__(self, cols: LazyTextColumns, i: int):
        self.fn, self._cols, self._i, self._all = cols.fn, cols, i, None

    @property
    def fixed(self) -> np.ndarray:  # type: ignore[override]
        return self._cols.fixed[self._i]

    @property
    def part(self) -> np.ndarray:  # type: ignore[override]
        return self._cols.part[self._i]

    @property
    def row(self) -> np.ndarray:  # type: ignore[override]
        return self._cols.row[self._i]

    @property
    def tables(self) -> list[PlanTable]:  # type: ignore[override]
        return self._cols.tables[self._i]


def _strings(x):
    """``x`` with every :class:`LazyText` in it (nested in lists and tuples) as its array of strings."""
    if isinstance(x, LazyText):
        return np.asarray(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_strings(v) for v in x)
    return x


class LazyTextColumns:
    """``count`` :class:`LazyText` columns of ``n`` points (e.g. one per layer), their arrays rows of three
    shared (count x n) arrays: three allocations for all columns, :meth:`put` fills many columns in one
    scatter per array, and a column object is made only when asked for (a study's trial never asks).
    ``share``: the columns of another text function whose points read the same plans: these use its arrays and
    tables (filled and put once, through either)."""

    def __init__(self, count: int, n: int, fn, share: LazyTextColumns | None = None):
        self.n, self.fn = n, fn
        if share is None:
            self.fixed = objects((count, n), None)
            self.part, self.row = np.full((count, n), -1, dtype=np.int64), np.zeros((count, n), dtype=np.int64)
            self.tables: list[list[PlanTable]] = [[] for _ in range(count)]
            self._group: list[weakref.ref[LazyTextColumns]] = [weakref.ref(self)]
        else:
            self.fixed, self.part, self.row, self.tables = share.fixed, share.part, share.row, share.tables
            self._group = share._group
            self._group.append(weakref.ref(self))
        # the group and the columns made are held by weak references: a column holds its LazyTextColumns, so
        # strong ones both ways would be reference cycles, and a batch's plan tables would stay alive until a
        # full garbage collection (a loop of EMAXVR batches peaked at ~2x the memory of one)
        self._columns: list[weakref.ref[_ColumnText] | None] = [None] * count
        self._index: tuple[np.ndarray, np.ndarray] | None = None  # (flat, an index writing it: use_index)

    def __getitem__(self, i: int) -> LazyText:
        ref = self._columns[i]
        col = ref() if ref is not None else None
        if col is None:
            col = _ColumnText(self, i)
            self._columns[i] = weakref.ref(col)
        return col

    def __len__(self) -> int:
        return len(self._columns)

    def __iter__(self):
        return (self[i] for i in range(len(self._columns)))

    def fill(self, col_of: np.ndarray, at: np.ndarray, value: str) -> None:
        """Point ``at[j]`` of column ``col_of[j]`` shows ``value`` (``column[at] = value`` for many columns)."""
        self.fixed[col_of, at] = value
        self.part[col_of, at] = -1
        self._changed(set(col_of.tolist()))

    def _changed(self, columns) -> None:
        """Columns ``columns`` changed: the ones already made (of every text function sharing them) rebuild their
        strings when next read."""
        for group_ref in self._group:
            texts = group_ref()
            if texts is None:
                continue
            for i in columns:
                ref = texts._columns[i]
                col = ref() if ref is not None else None
                if col is not None:
                    col._all = None

    def use_index(self, flat: np.ndarray, to: np.ndarray) -> None:
        """``to`` writes the positions ``flat`` in their order (``a[to] = values`` as ``a[flat] = values``: a
        boolean mask of increasing positions): :meth:`put` given this ``flat`` object (the next chunk's, as a rule)
        writes by it."""
        self._index = (flat, to)

    def put(self, which: Sequence[int], col_of: np.ndarray, at: np.ndarray, tab: PlanTable, rows: np.ndarray,
            flat: np.ndarray | None = None) -> None:
        """Point ``at[j]`` of column ``col_of[j]`` reads plan ``rows[j]`` of ``tab`` (-1: none, shown as ``-``);
        ``which``: the columns of ``col_of``, each then holding ``tab`` (as :meth:`LazyText.put` for each
        column, then ``column[at] = "-"`` where a row is -1). ``flat``: ``col_of * n + at`` if known (the arrays are
        filled by flat position: one index, not two; where :meth:`use_index` gave an index for this ``flat``, by it
        where every row or none is -1: a chunk's chosen plans, EMAXV's runner-ups (none)), with one part number when
        the columns ``which`` share it (a fill, not a gather per point)."""
        part = np.array([len(t) for t in self.tables])
        for i in which:
            self.tables[i].append(tab)
        self._changed(which)
        if flat is None:
            flat = col_of * self.n + at
        fixed, part_of, row = (a.reshape(-1) for a in (self.fixed, self.part, self.row))  # (views: C-contiguous)
        has = rows >= 0
        kept, self._index = self._index, None  # (once: the chunk's arrays not kept alive with the texts)
        to = kept[1] if kept is not None and kept[0] is flat and kept[1] is not flat else None  # (a mask)
        if to is not None and has.all():  # (the chosen plans: every point has one)
            pw = part[list(which)]
            part_of[to] = pw[0] if len(pw) and (pw == pw[0]).all() else part[col_of]
            row[to] = rows
            return
        if to is not None and not has.any():  # (no point has one: "-" everywhere)
            fixed[to] = "-"
            part_of[to] = -1
            return
        if has.all():  # (the chosen plans: every point has one)
            part_of[flat] = part[col_of]
            row[flat] = rows
            return
        none = flat[~has]
        fixed[none] = "-"
        part_of[none] = -1
        part_of[flat[has]] = part[col_of[has]]
        row[flat[has]] = rows[has]


#: the explanation keys built from the chosen plan (the runner-up's from its own plan), by text function
PLAN_TEXTS = {"loop_nest": loop_nest, "tiles": tiles, "placement": placement}


#: what :func:`~archmodels.emax.traffic.schedule_label` reads
_SCHEDULE_READS = ("psum_home", "bands", "stage_w")


@_reads(_SCHEDULE_READS, ("name", "band_dim"))
def runner_text(tab: PlanTable, r: int) -> str:
    return f"{tab.label['name'][r]} {_schedule(tab, r)}"


@_reads(_SCHEDULE_READS, ("band_dim",))
def schedule_text(tab: PlanTable, r: int) -> str:
    from .traffic import schedule_label

    return str(schedule_label(tab, np.array([r]))[0])


def _schedule(tab: PlanTable, r: int) -> str:
    from .traffic import schedule_label

    return f"({schedule_label(tab, np.array([r]))[0]})"

"""EMAXV/EMAXVR instruction mapper: candidate mappings, fit checks, reasons.

A *mapping* places one layer's instructions on the CGRA (spec `emax.md`
§1, §2, §3.1): which PEs hold MACs, loads, loop counters and address
computations, how many input channels (``icpar``) and kernel rows
(``khpar``) run side by side, how many output channels / pixels one
iteration produces, the loop nest of a start, and how much of each PE's
local memory (LMM) it needs. :func:`candidates` builds every mapping the
CGRA rules allow for a layer and returns the ones that fit, plus the
rejected ones with the reason; the cost model picks among the fitting ones.

Rules (spec §1, §3.1)
---------------------
* ``cols`` PEs per row, one ALU each, at most 2 LMM load/store instructions
  per PE (two EAGs), so at most ``2 x cols`` per row; ``LDDHR`` reads two
  consecutive 16-bit values as one instruction.
* A loaded value is used one row below its load; MAD chains run downwards.
* EMAXV: one loop (OW) per start; row 1 holds the loop counter and the first
  loads; weights and bias are register constants. No vertical broadcast:
  a kernel row whose loads span several CGRA rows gets its input row once
  per such row.
* EMAXVR: up to 3 nested loops; row 1 loop counters, row 2 AEX address
  computations (+ the first loads); MACs from row 3; multi-direction
  broadcast (one transfer per distinct datum).
* Tail of a column chain: the merge of parallel column chains (a tree), the
  bottom PE (partial sum or bias add, clip shift, ReLU) and the store row.
* Pattern A: a kernel row on a CGRA row (input and kernel loads side by
  side, inputs in the left half of the columns). Pattern B: one kernel per
  column, vertical, the columns being different output channels that share
  the input. Pattern ``pairs``: 2 output channels x 2 adjacent pixels
  (LDDHR for 2 inputs and 2 kernel values, CCAT of two 16-bit results).
  FC: one loop over output channels, ``cols`` input channels per row,
  inputs as register constants.
* A kernel is split over passes (``khpar < KH``) only when no pattern can
  hold one input channel's whole kernel: the thesis's mappings never split
  a kernel that fits.
* EMAXV keeps one configuration for every start (CONF ~0 %), so its
  ``icpar`` divides the channel count; EMAXVR's last pass may be partial
  (C7: 256 channels in sets of 6).

LMM needs (bytes per PE, the largest role counts): data swapped during EXEC
or loaded for the next start (PLOAD) is double-buffered; EMAXV does not use
PLOAD/PDRAIN (spec §2), so nothing is doubled there.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping as AbcMapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from operator import attrgetter, getitem, itemgetter

import numpy as np

from workloads.layers import FC, Conv2D, Layer, MatMul, Pool

from ..num import objects

PATTERNS_V = ("single",)
PATTERNS_VR = ("A", "B", "pairs")
#: loop orders of a start, innermost first (EMAXVR; spec §3.1)
ORDERS_VR = (("OW", "OC", "OH"), ("OW", "OH", "OC"))
ORDER_NAMES = {("OW", "OC", "OH"): "OW,OC,OH", ("OW", "OH", "OC"): "OW,OH,OC", ("OW",): "OW", ("OC",): "OC"}
HEADER_ROWS = {"single": 1, "A": 2, "B": 2, "pairs": 2, "fc": 1}
LOOP_COUNTERS_VR = 3
AEX_STREAMS = {"mac": 4, "max": 2}  # input, weight, partial sum in, output (pooling: input, output)


@dataclass(frozen=True)
class ConvShape:
    """A convolution or pooling layer, per group (pooling = depthwise MAX)."""

    groups: int
    ic: int
    oc: int
    kh: int
    kw: int
    stride: int
    pad: int
    h: int
    w: int
    oh: int
    ow: int
    dil: int = 1
    op: str = "mac"

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        """The hash, computed once: shapes key every mapper and traffic cache. Numbers only (``op`` as a
        flag), so a pickled value stays right in another process (string hashes are per process)."""
        return hash((self.groups, self.ic, self.oc, self.kh, self.kw, self.stride, self.pad, self.h, self.w, self.oh,
                     self.ow, self.dil, self.op == "mac"))

    @cached_property
    def numbers(self) -> tuple[int, ...]:
        """The fields as numbers, in :data:`_SHAPE_FIELDS` order, then 1 for MAC (0 for MAX): a row of
        :func:`conv_table`'s request arrays."""
        return tuple(getattr(self, f) for f in _SHAPE_FIELDS) + (int(self.op == "mac"),)

    @property
    def kh_ext(self) -> int:
        return self.dil * (self.kh - 1) + 1

    @property
    def kw_ext(self) -> int:
        return self.dil * (self.kw - 1) + 1

    def valid_kernel_rows(self) -> int:
        """Kernel rows that fall inside the image, summed over all output rows."""
        return _valid_kernel_rows(self)

    def input_rows(self, oh0: int, oh1: int) -> int:
        """Distinct input rows read by output rows oh0..oh1-1."""
        lo = max(0, oh0 * self.stride - self.pad)
        hi = min(self.h, (oh1 - 1) * self.stride - self.pad + self.kh_ext)
        return max(0, hi - lo)

    def input_cols(self, ow0: int, ow1: int) -> int:
        lo = max(0, ow0 * self.stride - self.pad)
        hi = min(self.w, (ow1 - 1) * self.stride - self.pad + self.kw_ext)
        return max(0, hi - lo)


@dataclass(frozen=True)
class FCShape:
    """Fully connected layer or dense product: ``outputs`` x ``inputs`` on ``batch`` vectors."""

    inputs: int
    outputs: int
    batch: int


@lru_cache(maxsize=4096)
def _valid_kernel_rows(sh: ConvShape) -> int:
    n = 0
    for oh in range(sh.oh):
        base = oh * sh.stride - sh.pad
        lo = max(0, math.ceil(-base / sh.dil))
        hi = min(sh.kh, (sh.h - 1 - base) // sh.dil + 1)
        n += max(0, hi - lo)
    return n


def shape_of(layer: Layer) -> ConvShape | FCShape | None:
    """The mapper's view of a layer (None for kinds the models do not run)."""
    if isinstance(layer, Conv2D):
        return ConvShape(layer.groups, layer.ic_per_group, layer.oc_per_group, layer.kernel_h, layer.kernel_w,
                         layer.stride, layer.padding, layer.in_h, layer.in_w, layer.out_h, layer.out_w,
                         layer.dilation, "mac")
    if isinstance(layer, Pool):
        return ConvShape(layer.channels, 1, 1, layer.kernel, layer.kernel, layer.stride, layer.padding,
                         layer.in_h, layer.in_w, layer.out_h, layer.out_w, 1, "max")
    if isinstance(layer, FC):
        return FCShape(layer.inputs, layer.outputs, layer.batch)
    if type(layer) is MatMul:
        return FCShape(layer.k, layer.m, layer.n)
    return None


@dataclass(frozen=True)
class Hw:
    """The structural parameters a mapping depends on."""

    arch: str  # "emaxv" or "emaxvr"
    rows: int
    cols: int
    lmm_bytes: int
    spm_bytes: int
    elem_bytes: int
    oc_cap: int = 0  # at most this many output channels per start (0 = no cap: the most that fit)
    #: a DRAM-traffic search (``criterion=dram``): 1 = also the channel tiles that save bus words, 2 = also the
    #: narrower tiles that only shrink the partial sums of a start (for a layer the SPM cannot hold whole)
    tile_search: int = 0

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        """The hash, computed once (an array keys the mapper's caches for every layer); numbers only, as for
        :class:`ConvShape` (equal arrays of the two architectures share a hash, equality tells them apart)."""
        return hash((self.rows, self.cols, self.lmm_bytes, self.spm_bytes, self.elem_bytes, self.oc_cap, self.tile_search))

    @property
    def pes(self) -> int:
        return self.rows * self.cols

    @property
    def lddhr(self) -> bool:
        """LDDHR (two 16-bit values per instruction) applies to 16-bit data."""
        return self.elem_bytes == 2


_HW_FIELDS = tuple(f.name for f in fields(Hw))


def new_hw(arch: str, rows: int, cols: int, lmm_bytes: int, spm_bytes: int, elem_bytes: int, oc_cap: int,
           tile_search: int) -> Hw:
    """``Hw(...)`` (every field, in order) without the frozen dataclass's ``object.__setattr__`` per field (a
    chunk builds two per structural combination); the instance is the same (fields in ``__dict__``, in field
    order: :data:`_HW_FIELDS`)."""
    hw = object.__new__(Hw)
    d = hw.__dict__
    d["arch"] = arch
    d["rows"] = rows
    d["cols"] = cols
    d["lmm_bytes"] = lmm_bytes
    d["spm_bytes"] = spm_bytes
    d["elem_bytes"] = elem_bytes
    d["oc_cap"] = oc_cap
    d["tile_search"] = tile_search
    return hw


assert _HW_FIELDS == ("arch", "rows", "cols", "lmm_bytes", "spm_bytes", "elem_bytes", "oc_cap", "tile_search")

#: the integer fields of :class:`Hw`, as :class:`HwList` holds them
HW_NUMBERS = _HW_FIELDS[1:]


class HwList(Sequence):
    """A sequence of arrays (:class:`Hw`) with their integer fields as columns, ``numbers[field]`` (int64,
    read-only, element k = ``self[k].<field>``): the numpy mapper and the planners read a chunk's ~2,000 arrays'
    fields as arrays (:func:`hw_field`) instead of from each object, several times a chunk.

    The objects are built when first read (:func:`new_hw` of the columns' numbers; a random batch's planning reads
    few or none of them: ~2,000 objects a chunk not built, and fewer for the garbage collector to count), or given
    (``hws``). Object k is ``base[from_[k]]`` where ``from_[k] >= 0`` (an equal array of another list: the mapper's
    view of an array without an SPM is the array itself, as :func:`~archmodels.emax.model._arrays` builds it)."""

    __slots__ = ("numbers", "arch", "_objs", "_base", "_from")

    def __init__(self, hws: Sequence[Hw] | None, numbers: dict[str, np.ndarray], arch: str | None = None,
                 base: Sequence[Hw] | None = None, from_: np.ndarray | None = None):
        self.numbers = numbers  # (read-only arrays: the caller's)
        if hws is not None:
            self._objs: list = list(hws)
            kinds = {h.arch for h in self._objs}
            self.arch = next(iter(kinds)) if len(kinds) == 1 else None  # (one architecture: :func:`_archs`)
        else:
            self._objs = [None] * len(numbers["rows"])
            self.arch = arch
        self._base, self._from = base, from_

    def __len__(self) -> int:
        return len(self._objs)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self._objs)))]
        o = self._objs[k]
        if o is None:
            k = range(len(self._objs))[k]  # (an index as the list takes it: negative, numpy integers)
            f = -1 if self._from is None else int(self._from[k])
            o = self._objs[k] = self._base[f] if f >= 0 else \
                new_hw(self.arch, *(int(self.numbers[name][k]) for name in HW_NUMBERS))
        return o

    def __iter__(self):
        if None in self._objs:
            self._build_all()
        return iter(self._objs)

    def _build_all(self) -> None:
        """Every object not built yet, at once (the columns as Python numbers once, not element by element)."""
        cols = [self.numbers[name].tolist() for name in HW_NUMBERS]
        src = [-1] * len(self._objs) if self._from is None else self._from.tolist()
        objs, arch, base = self._objs, self.arch, self._base
        for k, o in enumerate(objs):
            if o is None:
                objs[k] = base[src[k]] if src[k] >= 0 else new_hw(arch, *(c[k] for c in cols))


def hw_field(hws: Sequence[Hw], name: str) -> np.ndarray:
    """Field ``name`` (an integer field) of every array of ``hws`` as int64 (an :class:`HwList`: its column;
    an :class:`Indexed` sequence of one: gathered by position)."""
    if type(hws) is list:  # (a plain list, one design point's arrays: no look-ups)
        return np.array([getattr(h, name) for h in hws], dtype=np.int64).reshape(len(hws))
    num = getattr(hws, "numbers", None)
    if num is not None:
        return num[name]
    if isinstance(hws, Indexed):
        num = getattr(hws.objs, "numbers", None)
        if num is not None:
            return num[name][hws.at]
    return np.array([getattr(h, name) for h in hws], dtype=np.int64).reshape(len(hws))


@dataclass(frozen=True)
class Mapping:
    """One placement of a layer on the CGRA (see module docstring)."""

    pattern: str  # single | A | B | pairs | fc
    order: tuple[str, ...]  # loop nest of a start, innermost first
    input_mode: str  # rows (swapped per output row) | resident (in LMM per start) | swap | regs
    icpar: int  # input channels per pass
    khpar: int  # kernel rows per pass
    gpar: int  # groups side by side (columns of depthwise layers)
    oc_par: int  # output channels per iteration (per group)
    px_par: int  # output pixels per iteration (per channel)
    macs: int  # MAC (or MAX) units busy per iteration = parallelism
    alus: int  # ALUs holding an instruction during EXEC
    rows_used: int
    mem_per_row: int  # largest number of load/store instructions in a row
    loads_per_iter: int  # LMM load instructions per iteration (all PEs)
    load_bytes_per_iter: int
    n_seg: int  # OW split into segments (LMM capacity)
    ow_seg: int
    oc_chunk: int  # output channels per start (LMM capacity of the kernel PEs)
    lmm_need: int  # bytes of the fullest LMM
    dup_rows: int  # CGRA rows that each receive a copy of an input row (no vertical broadcast)
    regs: int  # registers REGV sets per start
    kernel_lmms: int  # LMMs that receive their own weights per start
    pload: bool  # loads of the next start overlap EXEC

    @property
    def order_name(self) -> str:
        name = ORDER_NAMES.get(self.order)
        return ",".join(self.order) if name is None else name

    @property
    def name(self) -> str:
        return f"{self.pattern}[{self.order_name}]"

    @cached_property
    def numbers(self) -> tuple:
        """Every number field (:data:`_NUMBERS`), in order: a row of :func:`mapping_columns`."""
        return attrgetter(*_NUMBERS)(self)

    @cached_property
    def labels(self) -> tuple[str, str, str, str, str]:
        """(pattern, outer loop, input mode, name, loop order name): the texts of a row of :func:`mapping_columns`."""
        return _labels(self.pattern, self.order, self.input_mode)


@lru_cache(maxsize=256)
def _labels(pattern: str, order: tuple[str, ...], mode: str) -> tuple[str, str, str, str, str]:
    """:attr:`Mapping.labels` of a (pattern, loop order, input mode): the same for each of its mappings."""
    name = ORDER_NAMES.get(order)
    order_name = ",".join(order) if name is None else name
    return pattern, order[-1], mode, f"{pattern}[{order_name}]", order_name


_MAPPING_FIELDS = tuple(f.name for f in fields(Mapping))
_NUMBERS = tuple(f for f in _MAPPING_FIELDS if f not in ("pattern", "order", "input_mode"))
_NUMBERS_OF = itemgetter(*(_MAPPING_FIELDS.index(f) for f in _NUMBERS))  # a field tuple's numbers


def _mapping(*values) -> Mapping:
    """``Mapping(*values)`` (every field, in order) without the frozen dataclass's ``object.__setattr__`` per
    field: 8 us for its 22 fields, paid for every candidate mapping of every structure (the mapper's largest
    single cost); the instance is the same (fields in ``__dict__``, equal, hashable, picklable)."""
    m = object.__new__(Mapping)
    m.__dict__.update(zip(_MAPPING_FIELDS, values, strict=True))
    m.__dict__["numbers"] = _NUMBERS_OF(values)  # Mapping.numbers, from the values at hand
    m.__dict__["labels"] = _labels(values[0], values[1], values[2])  # Mapping.labels (cached per slot)
    return m


@dataclass(frozen=True)
class Rejected:
    name: str
    reason: str


def _tail_rows(pattern: str, cols: int) -> int:
    """Rows below the MACs: merge tree of column chains, bottom PE, store row."""
    if pattern in ("single", "A", "fc"):
        return math.ceil(math.log2(cols)) + 2 if cols > 1 else 2
    if pattern == "pairs":
        return 3  # bottom, CCAT, store
    return 2  # B: independent column chains: bottom, store


def _largest_divisor(n: int, limit: int) -> int:
    for d in range(min(n, limit), 0, -1):
        if n % d == 0:
            return d
    return 0


def _geometry(pattern: str, sh: ConvShape, hw: Hw) -> tuple[int, int, int, int]:
    """(gpar, oc_par, px_par, mac rows per (channel x kernel row)) of a pattern."""
    return _geometry_cols(pattern, sh, hw.cols)


@lru_cache(maxsize=16384)
def _geometry_cols(pattern: str, sh: ConvShape, c: int) -> tuple[int, int, int, int]:
    """:func:`_geometry` on ``c`` columns (all it depends on besides the layer)."""
    if pattern in ("single", "A"):
        return 1, 1, 1, math.ceil(sh.kw / c)
    if pattern == "pairs":
        ocp = min(c // 2, sh.oc)
        return 1, ocp, 2, sh.kw
    ocp = min(c, sh.oc)
    gpar = min(sh.groups, max(1, c // ocp)) if sh.oc < c else 1
    return gpar, ocp, 1, sh.kw


#: why ``pairs`` cannot run a layer
PAIRS_WHY = "pairs: needs 16-bit data (LDDHR), stride 1, an even column count and at least 2 output channels"


def _why_rows(pattern: str, code: int, sh: ConvShape, rows: int, avail: int, whole: int, rows_per_krow: int) -> str:
    """Why ``pattern`` gets no rows (:func:`_reduction_rows`): ``code`` 1 = the kernel must not be split, 2 = the
    header and tail take every row, 3 = not even one kernel row fits."""
    if code == 1:
        return (f"{pattern}: one channel's {sh.kh}x{sh.kw} kernel needs {whole} MAC rows, "
                f"{avail} of {rows} rows are free")
    if code == 2:
        return f"{pattern}: loop/address rows and the chain tail take {rows - avail} rows, array has {rows}"
    return f"{pattern}: one kernel row needs {rows_per_krow} MAC rows, {avail} of {rows} are free"


def _why_structure(code: int, mem_row: int, cols: int, rows_used: int, rows: int, alus: int) -> str:
    """Why a structure does not fit the array (after its pattern's name; :func:`_pattern_structure`): ``code``
    1 = memory instructions per row, 2 = rows, 3 = ALUs."""
    if code == 1:
        return f": {mem_row} memory instructions in a row, at most {2 * cols} (2 per PE)"
    if code == 2:
        return f": needs {rows_used} rows, array has {rows}"
    return f": needs {alus} ALUs, array has {rows * cols}"


def _why_lmm(pattern: str, order: tuple[str, ...], mode: str, code: int, need: int, step: int, lmm: int) -> str:
    """Why a structure does not fit the LMM (:func:`_fit_lmm`): ``code`` 1 = one OC iteration's weights do not
    (``need``: the kernel PE's bytes for every channel), 2 = not even ``step`` output pixels do (``need``: their
    bytes)."""
    if code == 1:
        return f"{pattern}[{ORDER_NAMES[order]}]: kernel PE needs {need} B per start, LMM has {lmm} B"
    return (f"{pattern}[{ORDER_NAMES[order]}/{mode}]: needs {need} B per LMM even for {step} output pixel(s), "
            f"LMM has {lmm} B")


@lru_cache(maxsize=1024)
def _reduction_rows(pattern: str, sh: ConvShape, arch: str, rows: int, cols: int,
                    split_ok: bool) -> tuple[int, int, int, str]:
    """(icpar, khpar, px_sets, reason) that fit the rows of an ``arch`` array of ``rows`` x ``cols`` PEs;
    icpar == 0 means rejected."""
    gpar, ocp, pxp, rows_per_krow = _geometry_cols(pattern, sh, cols)
    avail = rows - HEADER_ROWS[pattern] - _tail_rows(pattern, cols)
    whole = sh.kh * rows_per_krow
    if sh.op == "max" and pattern == "B":  # pooling: stack output pixels instead of channels
        sets = avail // whole
        if sets >= 1:
            return 1, sh.kh, min(sets, sh.ow), ""
    elif avail >= whole:
        icpar = min(sh.ic, avail // whole)
        if arch == "emaxv":
            icpar = _largest_divisor(sh.ic, icpar)
        return icpar, sh.kh, 1, ""
    khpar = avail // rows_per_krow
    code = 1 if not split_ok else 2 if avail < 1 else 3 if khpar < 1 else 0
    if code:
        return 0, 0, 0, _why_rows(pattern, code, sh, rows, avail, whole, rows_per_krow)
    return 1, khpar, 1, ""


def _lmm_need(pattern: str, order: tuple[str, ...], mode: str, sh: ConvShape, e: int, ow_seg: int,
              oc_chunk: int, ocp: int) -> tuple[int, int]:
    """(largest LMM need in bytes, kernel-PE need) for a conv-like mapping of ``e``-byte data."""
    span = min(sh.w + 2 * sh.pad, (ow_seg - 1) * sh.stride + sh.kw_ext)
    if pattern == "single":  # EMAXV: no PLOAD/PDRAIN, nothing double-buffered
        return max(span * e, ow_seg * e), 0
    inp = 2 * span * e * (sh.oh if mode == "resident" else 1)
    psum = 2 * ow_seg * e
    if sh.op == "max":
        ker = 0
    elif pattern == "A":  # 2 taps per kernel PE, every output channel of the start
        ker = 2 * 2 * oc_chunk * e
    else:  # 2 values per kernel PE per OC iteration (one LDDHR, or two plain loads)
        ker = 2 * 2 * math.ceil(oc_chunk / ocp) * e
    return max(inp, psum, ker), ker


@lru_cache(maxsize=16384)
def _whole_need(pattern, order, mode, sh: ConvShape, e: int, ocp: int, pxp: int) -> int:
    """LMM bytes of the widest tiling (one OW segment, every output channel in one start): any LMM at least
    this large holds it, so :func:`_fit_lmm` answers without searching (a function of the layer and the
    data size only: the breakpoint above which the LMM size no longer changes the mapping)."""
    return _lmm_need(pattern, order, mode, sh, e, sh.ow + sh.ow % 2 if pxp == 2 else sh.ow, sh.oc, ocp)[0]


def _fit_lmm(pattern, order, mode, sh, hw, ocp, pxp) -> tuple[int, int, int, str, int]:
    """(n_seg, ow_seg, oc_chunk, reason, LMM need): the fewest OW segments and most channels per start that fit
    (at most ``hw.oc_cap``, rounded down to whole OC iterations)."""
    lmm, e = hw.lmm_bytes, hw.elem_bytes
    if hw.oc_cap and hw.oc_cap < sh.oc and sh.op == "mac":
        unit = 1 if pattern == "A" else ocp
        capped = Hw(hw.arch, hw.rows, hw.cols, lmm, hw.spm_bytes, e)
        n_seg, ow_seg, oc_chunk, why, need = _fit_lmm(pattern, order, mode, sh, capped, ocp, pxp)
        cap = max(unit, hw.oc_cap // unit * unit)
        if n_seg and oc_chunk > cap:
            oc_chunk = cap
            need = _lmm_need(pattern, order, mode, sh, e, ow_seg, oc_chunk, ocp)[0]
        return n_seg, ow_seg, oc_chunk, why, need
    whole = _whole_need(pattern, order, mode, sh, e, ocp, pxp)
    if whole <= lmm:  # the need grows with the segment and the channels per start: the widest fits
        ow_seg = sh.ow + sh.ow % 2 if pxp == 2 else sh.ow
        return 1, ow_seg, sh.oc, "", whole
    oc_chunk = sh.oc
    _, ker = _lmm_need(pattern, order, mode, sh, e, 1, oc_chunk, ocp)
    if ker > lmm:
        per_iter = ker / math.ceil(oc_chunk / ocp) if pattern != "A" else ker / oc_chunk
        iters = int(lmm // per_iter)
        if iters < 1:
            return 0, 0, 0, _why_lmm(pattern, order, mode, 1, ker, 0, lmm), 0
        oc_chunk = iters * (ocp if pattern != "A" else 1)
    step = 2 if pxp == 2 else 1

    def seg(n_seg: int) -> int:  # output pixels per segment (pairs: an even number)
        ow_seg = math.ceil(sh.ow / n_seg)
        return ow_seg + ow_seg % step if step == 2 else ow_seg

    def fits(n_seg: int) -> bool:
        return _lmm_need(pattern, order, mode, sh, e, seg(n_seg), oc_chunk, ocp)[0] <= lmm

    # segments shrink as n_seg grows and the need grows with the segment: the first n_seg that fits, up to
    # the first whose segment is a single step (ceil(ow / n) <= step from n = ceil(ow / step) on)
    n_seg = _first(1, -(-sh.ow // step), fits)
    if n_seg:
        return n_seg, seg(n_seg), oc_chunk, "", _lmm_need(pattern, order, mode, sh, e, seg(n_seg), oc_chunk, ocp)[0]
    need, _ = _lmm_need(pattern, order, mode, sh, e, step, oc_chunk, ocp)
    return 0, 0, 0, _why_lmm(pattern, order, mode, 2, need, step, lmm), 0


def _first(lo: int, hi: int, ok) -> int:
    """The first n in lo..hi with ok(n), for ok False then True as n grows; 0 if none."""
    if ok(lo):
        return lo
    if not ok(hi):
        return 0
    while hi - lo > 1:  # ok(hi), not ok(lo)
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _pattern_structure(pattern, sh, hw, icpar, khpar, pxsets) -> tuple[tuple | None, str]:
    """A mapping's fields after (pattern, loop order, input mode) that depend on neither the LMM size nor the
    loop order and input mode (rows, ALUs, loads), or why the pattern cannot run: the reason after its name."""
    c = hw.cols
    gpar, ocp, pxp, rows_per_krow = _geometry(pattern, sh, hw)
    if pattern == "B" and sh.op == "max":
        pxp = pxsets
    mac_rows = icpar * khpar * rows_per_krow * (pxsets if sh.op == "max" and pattern == "B" else 1)
    rows_used = HEADER_ROWS[pattern] + mac_rows + _tail_rows(pattern, c)
    taps = icpar * khpar * sh.kw
    w = sh.op == "mac"
    if pattern == "single":
        ld = 0.5 if (hw.lddhr and sh.stride == 1) else 1.0
        per_krow = math.ceil(sh.kw * ld)
        mem_row = min(2 * c, per_krow)
        dup = math.ceil(per_krow / (2 * c))
        macs = taps
        chains = min(c, sh.kw)
        alus = macs + 1 + (chains - 1) + 1
        loads = icpar * khpar * per_krow
        load_bytes = taps * hw.elem_bytes
        regs = (macs + 1 if w else 0) + 2
        kernel_lmms = 0
    elif pattern == "A":
        mem_row = (2 if w else 1) * min(c, sh.kw)
        dup = 1
        macs = taps
        alus = macs + LOOP_COUNTERS_VR + AEX_STREAMS[sh.op] + (min(c, sh.kw) - 1) + 1
        loads = taps * (2 if w else 1)
        load_bytes = loads * hw.elem_bytes
        regs = 2 * LOOP_COUNTERS_VR + 3 * AEX_STREAMS[sh.op]
        kernel_lmms = math.ceil(taps / 2) if w else 0
    else:  # B, pairs
        kern_instr = (math.ceil(ocp / 2) if hw.lddhr else ocp) if w else 0
        mem_row = gpar * (1 + kern_instr)
        dup = 1
        macs = taps * gpar * ocp * pxp
        bottoms = gpar * ocp * pxp
        alus = macs + LOOP_COUNTERS_VR + AEX_STREAMS[sh.op] + bottoms + (ocp if pattern == "pairs" else 0)
        loads = mac_rows * mem_row
        load_bytes = loads * hw.elem_bytes * (2 if hw.lddhr else 1)
        regs = 2 * LOOP_COUNTERS_VR + 3 * AEX_STREAMS[sh.op]
        kernel_lmms = mac_rows * gpar * math.ceil(ocp / 2) if w else 0  # 2 values per kernel PE
    code = 1 if mem_row > 2 * c else 2 if rows_used > hw.rows else 3 if alus > hw.pes else 0
    if code:
        return None, _why_structure(code, mem_row, c, rows_used, hw.rows, alus)
    return (icpar, khpar, gpar, ocp, pxp, macs, alus, rows_used, mem_row, loads, load_bytes, dup, regs, kernel_lmms), ""


#: the widest FSM bus in bytes (512 bit): a weight transfer of a multiple of it fills whole bus words at every width
BUS_ALIGN_BYTES = 64
#: at most this many channels-per-start tiles per mapping when the tiles are searched (``Hw.tile_search``)
TILE_SEARCH_MAX = 8


def _balanced(oc: int, z: int, unit: int) -> int:
    """Channels per start of ``oc`` split evenly into ``z`` chunks: ceil(oc / z), rounded up to whole OC
    iterations of ``unit`` channels."""
    return -(-(-(-oc // z)) // unit) * unit


@lru_cache(maxsize=4096)  # (a tile search asks again for the same few layer sizes and fits: ~5,000 calls a batch)
def oc_tiles(pattern: str, oc: int, ocp: int, t_max: int, elem: int, per_unit: int = 2,
             spread: tuple[int, int] | None = None) -> tuple[int, ...]:
    """Output channels per start to try when the LMM cannot hold every channel (``t_max`` < ``oc``), beyond
    ``t_max`` itself (issue 12). A kernel LMM receives ``per_unit`` values per OC iteration of each chunk (FC:
    one weight per output), and DRAM reads move whole bus words per transfer, so the most channels that fit can
    waste a bus word per transfer that a smaller tile does not. Tried: the balanced tiles (``oc`` split evenly
    into 1, 2, ... more chunks than the fewest) up to the largest tile whose transfers fill whole words of the
    widest bus (:data:`BUS_ALIGN_BYTES`), and that tile: input re-reads and starts only grow with the chunk count.

    ``spread``: (values, kernel LMMs) of a start whose weights the plans spread evenly over LMMs that do not get
    ``per_unit`` each (pattern A with an odd tap count: 3 taps over 2 LMMs, 6 bytes per channel at 32 bit); its
    transfers fill whole words at another step (32 channels there, where the 2-value step gives 8), and that
    tile is tried too (VGG16 C7 at 256 channels: 64 per start moves the weights + 0.1 %, the 2-value 88 + 8 %)."""
    unit = 1 if pattern == "A" else ocp
    if t_max >= oc or t_max < unit:
        return (t_max,)
    step = max(1, BUS_ALIGN_BYTES // (per_unit * elem))  # OC iterations (pattern A: channels) per aligned transfer
    aligned = t_max // unit // step * step * unit
    out = [t_max]
    z, z_stop = -(-oc // t_max) - 1, (-(-oc // aligned) if aligned else oc)
    while z < z_stop and len(out) < TILE_SEARCH_MAX - (1 if aligned else 0):
        z += 1
        t = _balanced(oc, z, unit)
        if t <= t_max and t not in out:
            out.append(t)
    if aligned and aligned not in out:
        out.append(aligned)
    if spread is not None:  # the fewest OC iterations whose spread bytes are whole words
        values, lmms = spread
        step = BUS_ALIGN_BYTES * lmms // math.gcd(BUS_ALIGN_BYTES * lmms, values * elem)
        aligned = t_max // unit // step * step * unit
        if aligned and aligned not in out:
            out.append(aligned)
    return tuple(out)


#: OW segment counts beyond the fewest that fit listed first when the tiles are searched (the next powers of two,
#: alone and with every channel tile; then the narrower powers of two, alone and with every channel tile)
SEGMENT_SEARCH_MAX = 3


def ow_segments(ow: int, n_min: int, step: int, most: int | None = SEGMENT_SEARCH_MAX) -> tuple[int, ...]:
    """OW segments per output row to try (``n_min``: the fewest that fit the LMM; ``step``: output pixels per
    iteration): ``n_min`` and the next ``most`` powers of two above it (None: all), while a segment keeps
    at least one iteration. Narrower segments move more halo columns and weights but shrink the partial sums of
    a start, which can let a layer run without SPM bands or keep its output in the SPM for the next layer."""
    top = -(-ow // step)
    out, n = [n_min], 1
    while most is None or len(out) <= most:
        n *= 2
        if n > top:
            break
        if n > n_min:
            out.append(n)
    return tuple(out)


def _tiles(pattern: str, sh: ConvShape, hw: Hw, n_seg: int, ow_seg: int, oc_chunk: int, ocp: int,
           pxp: int, spread: tuple[int, int] | None = None) -> list[tuple[int, int]]:
    """(ow_seg, oc_chunk) of every tile of a structure whose LMM fit (:func:`_fit_lmm`) gave ``n_seg`` segments of
    ``ow_seg`` pixels and ``oc_chunk`` channels per start: that one and, with ``hw.tile_search``, the other segment
    counts of :func:`ow_segments` and channel tiles of :func:`oc_tiles`."""
    tiles = [(ow_seg, oc_chunk)]
    if hw.tile_search and sh.op == "mac" and hw.arch == "emaxvr":  # EMAXV: weights are register constants
        chans = [oc_chunk] + list(oc_tiles(pattern, sh.oc, ocp, oc_chunk, hw.elem_bytes, spread=spread)[1:])
        tiles += [(ow_seg, t) for t in chans[1:]]
        if hw.tile_search >= 2:
            step = 2 if pxp == 2 else 1
            segs = {ow_seg: n_seg}
            # every power of two above the fewest that fit: a smaller LMM fits no fewer segments, so its powers of
            # two are all here (the list depends on the LMM size only through its first count)
            for n in ow_segments(sh.ow, n_seg, step, None)[1:]:
                w = -(-sh.ow // n)
                segs.setdefault(w + w % step if step == 2 else w, n)
            narrower = list(segs)[1:]
            near, far = narrower[:SEGMENT_SEARCH_MAX], narrower[SEGMENT_SEARCH_MAX:]
            # fewer channels per start than the fit and its bus-word tiles (the balanced splits into 2, 4, 8
            # chunks): they move more weight words and starts but shrink a start's SPM unit
            unit = 1 if pattern == "A" else ocp
            for n in ow_segments(-(-sh.oc // unit), 1, 1)[1:]:
                t = _balanced(sh.oc, n, unit)
                if t < oc_chunk and t not in chans:
                    chans.append(t)
            # every narrower segment with every channel tile (each fits: the LMM need grows with both): a start's
            # partial sums shrink with both. Every power of two, not only the next ones (issue 12): a smaller LMM
            # combined its own next powers of two (narrower ones here) with its channel tiles, and a combination
            # missing at the larger LMM cost it the SPM chaining (VGG16 C2's 32 segments x 8 channels, +2.2 %).
            # Listed the next ones first, each tile alone before the combinations (the order of ties)
            tiles += [(w, oc_chunk) for w in near]
            tiles += [(ow_seg, t) for t in chans if (ow_seg, t) not in tiles]
            tiles += [(w, t) for w in near for t in chans[1:]]
            tiles += [(w, oc_chunk) for w in far]
            tiles += [(w, t) for w in far for t in chans[1:]]
    return tiles


def _weights_spread(pattern: str, macs: int, kernel_lmms: int) -> tuple[int, int] | None:
    """(taps, kernel LMMs) of a pattern-A start whose taps do not come 2 to an LMM: the plans spread a start's
    weights evenly over its kernel LMMs (:func:`~archmodels.emax.traffic._by_chunk`), so a transfer carries
    taps / LMMs values per channel (3 taps in 2 LMMs: 1.5) and aligns at another step (:func:`oc_tiles`)."""
    return (int(macs), int(kernel_lmms)) if pattern == "A" and kernel_lmms and macs != 2 * kernel_lmms else None


def _with_lmm(st: tuple, sh: ConvShape, hw: Hw, fit: tuple) -> tuple[Mapping, ...]:
    """The mappings of structure ``st`` (from :func:`_conv_structures`) with its LMM fit ``fit`` (:func:`_fit_lmm`)
    to ``hw``: one per tile of :func:`_tiles`."""
    return tuple(_mapping(*v) for v in _tile_values(st, sh, hw, fit))


def _tile_values(st: tuple, sh: ConvShape, hw: Hw, fit: tuple) -> list[tuple]:
    """Every field of each mapping of :func:`_with_lmm`, in :class:`Mapping`'s order (one tuple per tile)."""
    (pattern, order, mode, icpar, khpar, gpar, ocp, pxp, macs, alus, rows_used, mem_row, loads, load_bytes, dup,
     regs, kernel_lmms) = st
    n_seg, ow_seg, oc_chunk, _, need = fit
    e = hw.elem_bytes
    return [(pattern, order, mode, icpar, khpar, gpar, ocp, pxp, macs, alus, rows_used, mem_row, loads,
             load_bytes, n_seg if w == ow_seg else -(-sh.ow // w), w, t,
             need if (t, w) == (oc_chunk, ow_seg) else _lmm_need(pattern, order, mode, sh, e, w, t, ocp)[0],
             dup, regs, kernel_lmms, pattern != "single")
            for w, t in _tiles(pattern, sh, hw, n_seg, ow_seg, oc_chunk, ocp, pxp,
                               _weights_spread(pattern, macs, kernel_lmms))]


@lru_cache(maxsize=64)  # (as conv_candidates: hits come from within a point)
def _candidate_rows(sh: ConvShape, hw: Hw, pattern: str, order: str) -> tuple[tuple, tuple, tuple[bool, tuple[str, ...]]]:
    """:func:`conv_candidates` as :func:`mapping_columns` reads it, without building :class:`Mapping` objects (one
    design point's :func:`conv_table`): (each mapping's numbers, its five texts, (whether any fits, the rejected
    ones' reasons))."""
    nums, texts, why = [], [], []
    for item in _fitted(sh, hw, pattern, order):
        if isinstance(item, Rejected):
            why.append(item.reason)
            continue
        for v in _tile_values(item[1], sh, hw, item[2]):
            nums.append(v[3:])  # _NUMBERS: every field after pattern, order and input mode
            texts.append(_labels(v[0], v[1], v[2]))
    return tuple(nums), tuple(texts), (bool(nums), tuple(why))


@lru_cache(maxsize=65536)
def _more_tiles(pattern: str, sh: ConvShape, arch: str, elem: int, tile_search: int, n_seg: int, ow_seg: int,
                oc_chunk: int, ocp: int, pxp: int, spread: tuple[int, int] | None) -> tuple[tuple[int, int, int], ...]:
    """(n_seg, ow_seg, oc_chunk) of the tiles of :func:`_tiles` after the first, of a ``pattern`` structure whose LMM
    fit is the first: all they depend on besides the layer (random design points share them: their LMM sizes differ,
    their fits repeat; the loop order and input mode do not change them). Their LMM needs depend on the input mode:
    :func:`_tile_needs` over a chunk's tiles at once. A tuple of tuples of ints: the cache's answers are then objects
    the garbage collector stops tracking, not lists it walks at every full collection."""
    hw = Hw(arch, 0, 0, 0, 0, elem, 0, tile_search)  # what _tiles reads of the array
    return tuple((n_seg if w == ow_seg else -(-sh.ow // w), w, t)
                 for w, t in _tiles(pattern, sh, hw, n_seg, ow_seg, oc_chunk, ocp, pxp, spread)[1:])


def _tile_needs(is_a: np.ndarray, resident: np.ndarray, q: _Req | _ReqAt, ow_seg: np.ndarray, oc_chunk: np.ndarray,
                ocp: np.ndarray) -> np.ndarray:
    """:func:`_lmm_need`'s largest need of MAC-layer tiles of patterns A (``is_a``) or B / pairs, per row: requests
    ``q`` (their layer and element size), input mode resident or not, ``ow_seg`` pixels, ``oc_chunk`` channels per
    start and ``ocp`` channels per iteration (int64: the same integers as the Python function's; ``-(-a // b)`` for
    ``math.ceil(a / b)``, exact for these sizes)."""
    e = q.e
    span = np.minimum(q.w + 2 * q.pad, (ow_seg - 1) * q.stride + q.kw_ext)
    inp = 2 * span * e * np.where(resident, q.oh, 1)
    psum = 2 * ow_seg * e
    ker = np.where(is_a, 2 * 2 * oc_chunk * e, 2 * 2 * _cdiv(oc_chunk, np.maximum(ocp, 1)) * e)  # (B, pairs: ocp >= 1)
    return np.maximum(np.maximum(inp, psum), ker)


def _fitted(sh: ConvShape, hw: Hw, pattern: str, order: str):
    """Per (pattern, loop order, input mode) of :func:`_conv_structures`, in candidate order: a :class:`Rejected`,
    or (name, structure, LMM fit) for a structure that fits ``hw``'s LMM (:func:`_fit_lmm`)."""
    for item in _conv_structures(sh, hw.arch, hw.rows, hw.cols, hw.elem_bytes, pattern, order):
        if isinstance(item, Rejected):
            yield item
            continue
        name, st = item
        fit = _fit_lmm(st[0], st[1], st[2], sh, hw, st[6], st[7])
        yield (name, st, fit) if fit[0] else Rejected(name, fit[3])


#: the scalar mapper's caches of array-dependent answers stay small: a random design point's arrays (rows 4-512,
#: the LMM size, knobs) rarely recur, so their hits come from within one point (~20 % of requests, a pooling layer
#: asked twice; VGG16, ResNet50, MobileNetV2, AlexNet: the same hits at 32 entries as at 8,192); each cached answer is
#: ~10-20 Python objects the garbage collector walks (8,192 answers cost ~0.25 ms a one-point trial in collections
#: once the caches were full; answers kept for a few points only also die before they reach the older generations).
#: 64: more than one scalar conv_table call asks (< TABLE_NUMPY_FROM requests)
@lru_cache(maxsize=64)
def conv_candidates(sh: ConvShape, hw: Hw, pattern: str = "auto", order: str = "auto") -> tuple[tuple[Mapping, ...], tuple[Rejected, ...]]:
    """Every fitting mapping of a conv/pool layer, and the rejected ones with reasons.

    The structure of each (pattern, loop order, input mode) depends on the array alone and is planned once
    per array (:func:`_conv_structures`); only the LMM fit runs for each LMM size.
    """
    out: list[Mapping] = []
    rejected: list[Rejected] = []
    for item in _fitted(sh, hw, pattern, order):
        if isinstance(item, Rejected):
            rejected.append(item)
        else:
            out.extend(_with_lmm(item[1], sh, hw, item[2]))
    return tuple(out), tuple(rejected)


@lru_cache(maxsize=64)
def _conv_structures(sh: ConvShape, arch: str, rows: int, cols: int, elem: int, pattern: str, order: str) -> tuple:
    """In candidate order: a :class:`Rejected` or (name, structure) per (pattern, loop order, input mode) on an
    ``arch`` array of ``rows`` x ``cols`` PEs and ``elem``-byte data (the structure does not depend on the
    memory sizes; plain values as the key: cheaper to hash than an array)."""
    hw = Hw(arch, rows, cols, 0, 0, elem)
    pats = PATTERNS_V if hw.arch == "emaxv" else PATTERNS_VR
    if pattern != "auto":
        pats = tuple(p for p in pats if p == pattern)
    orders = [("OW",)] if hw.arch == "emaxv" else [o for o in ORDERS_VR if order in ("auto", ORDER_NAMES[o])]
    items: list = []
    allowed: list[str] = []
    every = PATTERNS_V if hw.arch == "emaxv" else PATTERNS_VR
    for p in pats:
        if p == "pairs":
            if sh.op != "mac" or sh.stride != 1 or not hw.lddhr or hw.cols % 2 or sh.oc < 2:
                items.append(Rejected(p, PAIRS_WHY))
                continue
        allowed.append(p)
    # a kernel is split only if no pattern of the architecture (knob or not) holds it whole
    whole_fits = any(_reduction_rows(p, sh, arch, rows, cols, False)[0] for p in every
                     if p != "pairs" or (sh.op == "mac" and sh.stride == 1 and hw.lddhr and not hw.cols % 2 and sh.oc >= 2))
    for p in allowed:
        icpar, khpar, pxsets, why = _reduction_rows(p, sh, arch, rows, cols, not whole_fits)
        if not icpar:
            items.append(Rejected(p, why))
            continue
        core, why = _pattern_structure(p, sh, hw, icpar, khpar, pxsets)  # the same for every loop order and mode
        for o in orders:
            modes = ["rows"] if o[-1] != "OC" else ["resident", "swap"]
            if hw.arch == "emaxv":
                modes = ["rows"]
            for mode in modes:
                name = f"{p}[{ORDER_NAMES[o]}/{mode}]"
                items.append(Rejected(name, f"{p}[{ORDER_NAMES[o]}]{why}") if core is None else (name, (p, o, mode) + core))
    return tuple(items)


# (small: keyed by the array, like conv_candidates; asked for the reasons of an FC layer without a plan)
@lru_cache(maxsize=256)
def fc_candidates(sh: FCShape, hw: Hw) -> tuple[tuple[Mapping, ...], tuple[Rejected, ...]]:
    """FC mapping (spec §3.1): one loop over outputs, ``cols`` inputs per row, inputs in registers."""
    values, rejected = _fc_values(sh, hw)
    return tuple(_mapping(*v) for v in values), tuple(rejected)


@lru_cache(maxsize=64)  # (as conv_candidates: hits come from within a point)
def _fc_rows(sh: FCShape, hw: Hw) -> tuple[tuple, tuple]:
    """:func:`fc_candidates`' mappings as :func:`mapping_columns` reads them (numbers, texts), without
    :class:`Mapping` objects (one design point's :func:`fc_table`)."""
    values, _ = _fc_values(sh, hw)
    return tuple(v[3:] for v in values), tuple(_labels(v[0], v[1], v[2]) for v in values)


def _fc_values(sh: FCShape, hw: Hw) -> tuple[list[tuple], list[Rejected]]:
    """Every field of each mapping of :func:`fc_candidates` (in :class:`Mapping`'s order), and the rejected ones."""
    c, e = hw.cols, hw.elem_bytes
    sets = hw.rows - HEADER_ROWS["fc"] - _tail_rows("fc", c)
    if sets < 1:
        return [], [Rejected("fc", f"fc: needs at least {HEADER_ROWS['fc'] + _tail_rows('fc', c) + 1} rows, array has {hw.rows}")]
    icpar = min(sh.inputs, sets * c)
    rows_used = HEADER_ROWS["fc"] + math.ceil(icpar / c) + _tail_rows("fc", c)
    out, rejected = [], []
    for pload in (False, True):
        per = hw.lmm_bytes // (e * (2 if pload else 1))
        name = f"fc[OC{'/pload' if pload else ''}]"
        if per < 1:
            rejected.append(Rejected(name, f"{name}: LMM {hw.lmm_bytes} B holds no weight"))
            continue
        oc_chunk = min(sh.outputs, per, hw.oc_cap or sh.outputs)
        alus = icpar + 1 + (min(c, icpar) - 1) + 1
        # a MAC PE's LMM receives one weight per output of the chunk (criterion=dram: the bus-word tiles too)
        tiles = oc_tiles("A", sh.outputs, 1, oc_chunk, e, per_unit=1) if hw.tile_search else (oc_chunk,)
        out.extend(("fc", ("OC",), "regs", icpar, 1, 1, 1, 1, icpar, alus, rows_used, c, icpar,
                    icpar * e, 1, 1, t, t * e * (2 if pload else 1), 1, icpar + 4, icpar, pload)
                   for t in tiles)
    return out, rejected


def mapping_columns(maps: Sequence[Mapping]) -> dict[str, np.ndarray]:
    """``maps`` as columns: every number, the pattern, outer loop, input mode, name and loop order name."""
    return _columns([m.numbers for m in maps], [m.labels for m in maps])


def _columns(nums: list[tuple], texts: list[tuple]) -> dict[str, np.ndarray]:
    """:func:`mapping_columns` of mappings given as their numbers (:attr:`Mapping.numbers`) and texts
    (:attr:`Mapping.labels`)."""
    nums = np.array(nums, dtype=float).reshape(len(nums), len(_NUMBERS))
    out = {k: nums[:, j] for j, k in enumerate(_NUMBERS)}
    labels = np.array(texts, dtype=object).reshape(len(texts), 5)
    out.update(zip(("pattern", "outer", "mode", "name", "order_name"), labels.T))
    for k in ("pattern", "outer", "mode"):  # compared per plan row: fixed-width text compares in C, not per object
        out[k] = out[k].astype(str)
    return out


# -------------------------------------------------------------------- the mapper over many requests at once
#: :class:`ConvShape` fields as the columns of :func:`conv_table` (``op`` as 1 = MAC, 0 = MAX)
_SHAPE_FIELDS = ("groups", "ic", "oc", "kh", "kw", "stride", "pad", "h", "w", "oh", "ow", "dil")


def _tail_rows_np(pattern: str, cols: np.ndarray) -> np.ndarray:
    """:func:`_tail_rows` of every column count (ceil(log2 c) is exact in floats for these small integers; looked
    up in a table of the counts up to the largest, cols >= 0)."""
    if pattern in ("single", "A", "fc"):
        top = int(cols.max()) + 1 if len(cols) else 1
        c = np.arange(top)
        return np.where(c > 1, np.ceil(np.log2(np.maximum(c, 1))).astype(np.int64) + 2, 2)[cols]
    return np.full(cols.shape, 3 if pattern == "pairs" else 2, dtype=np.int64)


class _Req:
    """The fields of many (layer shape, array) requests as int64 arrays (one element per request)."""

    def __init__(self, shapes: Sequence[ConvShape], hws: Sequence[Hw]):
        s = _by_object(shapes, attrgetter("numbers"), len(_SHAPE_FIELDS) + 1)
        for j, f in enumerate(_SHAPE_FIELDS):
            setattr(self, f, s[j])
        self.mac = s[-1].astype(bool)
        self.rows, self.cols, self.lmm, self.e, self.oc_cap, self.tile_search = _hw_fields(
            hws, ("rows", "cols", "lmm_bytes", "elem_bytes", "oc_cap", "tile_search"))
        self.lddhr = self.e == 2
        self.kw_ext = self.dil * (self.kw - 1) + 1


class Indexed(Sequence):
    """``objs[at[j]]`` for j = 0 .. len(at) - 1 as a read-only sequence: many requests naming a few objects (a
    chunk's layer shapes and arrays) by position, so the request arrays are gathered from one row per object
    (:func:`_by_object`) instead of built from a list of objects one by one."""

    __slots__ = ("objs", "at")

    def __init__(self, objs: Sequence, at: np.ndarray):
        self.objs, self.at = objs, at

    def __len__(self) -> int:
        return len(self.at)

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self.objs[a] for a in self.at[j].tolist()]
        return self.objs[self.at[j]]

    def __iter__(self):
        objs = self.objs
        return (objs[a] for a in self.at.tolist())


def _hw_fields(hws: Sequence[Hw], names: tuple[str, ...]) -> Sequence[np.ndarray]:
    """Fields ``names`` of every array of ``hws`` as int64 arrays: an :class:`Indexed` sequence of an
    :class:`HwList` gathers its columns, else :func:`_by_object` (the same numbers)."""
    if isinstance(hws, Indexed) and isinstance(hws.objs, HwList):
        return [hw_field(hws, k) for k in names]
    return _by_object(hws, attrgetter(*names), len(names))


def _by_object(objs: Sequence, numbers, k: int) -> np.ndarray:
    """[k, len(objs)] int64: ``numbers(obj)`` (k numbers) per object, computed once per distinct object (a batch's
    requests repeat each array once per layer and each layer shape once per array; objects told apart by ``id``,
    all alive while this runs; an :class:`Indexed` sequence: once per object it names by position)."""
    if isinstance(objs, Indexed):
        used = np.bincount(objs.at, minlength=len(objs.objs)).astype(bool).tolist()  # (others: zeros, not read)
        table = np.array([numbers(o) if u else (0,) * k for o, u in zip(objs.objs, used)],
                         dtype=np.int64).reshape(len(objs.objs), k).T
        return _take_columns(table, objs.at)
    ids = np.fromiter(map(id, objs), dtype=np.int64, count=len(objs))
    _, first, at = np.unique(ids, return_index=True, return_inverse=True)
    table = np.array([numbers(objs[i]) for i in first.tolist()], dtype=np.int64).reshape(len(first), k).T
    return _take_columns(table, at.reshape(-1))


def _take_columns(table: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``table[:, at]`` (the same values) as a C-contiguous array: ``np.take`` along axis 1 of a contiguous copy of
    the small table (an index over a transposed table gathered each element by a ``memcpy`` call: ~2.5x slower,
    and its rows came out strided)."""
    return np.take(np.ascontiguousarray(table), at, axis=1)


def _cdiv(a, b):
    return -(-a // b)


#: :func:`_largest_divisor_np` finds the distinct n by a table of the values up to this (layer channel counts: a
#: few hundred), not by a sort (np.unique: ~1 ms a chunk on an EMAXV batch's ~25 k requests)
DIVISOR_DENSE_UPTO = 1 << 16


def _largest_divisor_np(n: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """:func:`_largest_divisor` of every (n, limit) pair (n >= 1, limit >= 1): per distinct n, a table of the
    largest divisor at most each limit up to n (:func:`_divisor_table`), the tables laid end to end in increasing
    n and each pair read at its n's table's start + min(limit, n)."""
    if not len(n):
        return np.zeros(0, dtype=np.int64)
    top = int(n.max()) + 1
    if top <= DIVISOR_DENSE_UPTO:  # the distinct n (increasing) by a table of the values; each n's table start
        seen = np.zeros(top, bool)
        seen[n] = True
        vals = np.flatnonzero(seen)
        tables = [_divisor_table(v) for v in vals.tolist()]
        start = np.zeros(top, dtype=np.int64)
        start[vals] = np.cumsum([0] + [len(t) for t in tables[:-1]])
        return np.concatenate(tables)[start[n] + np.minimum(limit, n)]
    vals, inv = np.unique(n, return_inverse=True)
    tables = [_divisor_table(int(v)) for v in vals.tolist()]
    start = np.cumsum([0] + [len(t) for t in tables[:-1]])
    inv = inv.reshape(-1)
    return np.concatenate(tables)[start[inv] + np.minimum(limit, n)]


@lru_cache(maxsize=1024)
def _divisor_table(n: int) -> np.ndarray:
    """``_largest_divisor(n, k)`` for k = 0 .. n."""
    out = np.zeros(n + 1, dtype=np.int64)
    best = 0
    for k in range(1, n + 1):
        if n % k == 0:
            best = k
        out[k] = best
    return out


def _geometry_np(pattern: str, q: _Req) -> tuple[np.ndarray, ...]:
    """:func:`_geometry_cols` of every request (arrays)."""
    c, one = q.cols, np.ones_like(q.cols)
    if pattern in ("single", "A"):
        return one, one, one, _cdiv(q.kw, c)
    if pattern == "pairs":
        return one, np.minimum(c // 2, q.oc), 2 * one, q.kw
    ocp = np.minimum(c, q.oc)
    gpar = np.where(q.oc < c, np.minimum(q.groups, np.maximum(1, c // ocp)), 1)
    return gpar, ocp, one, q.kw


def _structure_np(pattern: str, q: _Req, split_ok: np.ndarray,
                  arch: str) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """:func:`_reduction_rows` and :func:`_pattern_structure` of every request: whether the pattern runs, its
    structure's fields (named as :class:`Mapping`'s), and why not (the arguments of :func:`_why_rows` and
    :func:`_why_structure`, ``rows_code`` and ``code`` 0 where it runs)."""
    gpar, ocp, pxp, rpk = _geometry_np(pattern, q)
    c, e, w = q.cols, q.e, q.mac
    tail = _tail_rows_np(pattern, c)
    avail = q.rows - HEADER_ROWS[pattern] - tail
    whole = q.kh * rpk
    fits = avail >= whole
    max_b = ~w & (pattern == "B")
    room = np.maximum(avail, 0)
    sets = room // whole  # (int64: computed once for both uses below, the same values)
    icpar = np.where(max_b, 1, np.minimum(q.ic, sets))
    if arch == "emaxv":
        icpar = _largest_divisor_np(q.ic, np.maximum(icpar, 1))
    pxsets = np.where(max_b, np.minimum(sets, q.ow), 1)
    split_khpar = room // rpk
    rows_code = np.where(fits, 0, np.where(~split_ok, 1, np.where(avail < 1, 2, np.where(split_khpar < 1, 3, 0))))
    icpar = np.where(fits, icpar, 1)
    khpar = np.where(fits, q.kh, split_khpar)
    pxsets = np.where(fits, pxsets, 1)
    if pattern == "B":
        pxp = np.where(max_b, pxsets, pxp)
    mac_rows = icpar * khpar * rpk * np.where(max_b, pxsets, 1)
    rows_used = HEADER_ROWS[pattern] + mac_rows + tail
    taps = icpar * khpar * q.kw
    zero = np.zeros_like(taps)
    if pattern == "single":
        per_krow = np.where(q.lddhr & (q.stride == 1), (q.kw + 1) // 2, q.kw)  # ceil(kw * 0.5) or kw
        mem_row = np.minimum(2 * c, per_krow)
        dup = _cdiv(per_krow, 2 * c)
        macs = taps
        alus = macs + 1 + (np.minimum(c, q.kw) - 1) + 1
        loads = icpar * khpar * per_krow
        load_bytes = taps * e
        regs = np.where(w, macs + 1, 0) + 2
        kernel_lmms = zero
    elif pattern == "A":
        aex = np.where(w, AEX_STREAMS["mac"], AEX_STREAMS["max"])
        mem_row = np.where(w, 2, 1) * np.minimum(c, q.kw)
        dup = zero + 1
        macs = taps
        alus = macs + LOOP_COUNTERS_VR + aex + (np.minimum(c, q.kw) - 1) + 1
        loads = taps * np.where(w, 2, 1)
        load_bytes = loads * e
        regs = 2 * LOOP_COUNTERS_VR + 3 * aex
        kernel_lmms = np.where(w, _cdiv(taps, 2), 0)
    else:  # B, pairs
        aex = np.where(w, AEX_STREAMS["mac"], AEX_STREAMS["max"])
        kern_instr = np.where(w, np.where(q.lddhr, _cdiv(ocp, 2), ocp), 0)
        mem_row = gpar * (1 + kern_instr)
        dup = zero + 1
        macs = taps * gpar * ocp * pxp
        bottoms = gpar * ocp * pxp
        alus = macs + LOOP_COUNTERS_VR + aex + bottoms + (ocp if pattern == "pairs" else 0)
        loads = mac_rows * mem_row
        load_bytes = loads * e * np.where(q.lddhr, 2, 1)
        regs = 2 * LOOP_COUNTERS_VR + 3 * aex
        kernel_lmms = np.where(w, mac_rows * gpar * _cdiv(ocp, 2), 0)
    code = np.where(mem_row > 2 * c, 1, np.where(rows_used > q.rows, 2, np.where(alus > q.rows * c, 3, 0)))
    core = dict(icpar=icpar, khpar=khpar, gpar=gpar, oc_par=ocp, px_par=pxp, macs=macs, alus=alus,
                rows_used=rows_used, mem_per_row=mem_row, loads_per_iter=loads, load_bytes_per_iter=load_bytes,
                dup_rows=dup, regs=regs + zero, kernel_lmms=kernel_lmms)
    why = dict(rows_code=rows_code, avail=avail, whole=whole, rpk=rpk, code=code, mem_row=mem_row,
               rows_used=rows_used, alus=alus)
    return (rows_code == 0) & (code == 0), core, why


def _lmm_need_np(pattern: str, resident: bool, q: _Req, ow_seg: np.ndarray, oc_chunk: np.ndarray,
                 ocp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_lmm_need` of every request (arrays; ``resident``: the input mode is ``resident``)."""
    e = q.e
    span = np.minimum(q.w + 2 * q.pad, (ow_seg - 1) * q.stride + q.kw_ext)
    if pattern == "single":
        return np.maximum(span * e, ow_seg * e), np.zeros_like(span)
    inp = 2 * span * e * (q.oh if resident else 1)
    psum = 2 * ow_seg * e
    ker = _kernel_need_np(pattern, q, oc_chunk, ocp)
    return np.maximum(np.maximum(inp, psum), ker), ker


def _fit_kernel_np(pattern: str, q: _Req, ocp: np.ndarray) -> tuple[np.ndarray, ...]:
    """The part of :func:`_fit_lmm_np` that does not depend on the input mode (the kernel PE's need does not): the
    kernel need of every channel, whether it exceeds the LMM, the OC iterations that fit then, the channels per
    start, and their kernel need. Computed once for both modes of a pattern."""
    lmm, unit = q.lmm, (np.ones_like(ocp) if pattern == "A" else ocp)
    ker = _kernel_need_np(pattern, q, q.oc, ocp)  # the kernel need does not depend on ow_seg or mode
    over = ker > lmm
    if not over.any():  # no kernel exceeds the LMM (EMAXV's single loop keeps none there): each np.where below picks
        # its second operand (int64 copies); floor(lmm / 1.0) is lmm as a float (read only where over, as the rest)
        return ker, over, lmm.astype(np.float64).astype(np.int64), np.array(q.oc, dtype=np.int64), ker.copy()
    per_iter = ker / np.where(over, (q.oc if pattern == "A" else _cdiv(q.oc, ocp)), 1)
    iters = np.floor_divide(lmm, np.where(over, per_iter, 1.0)).astype(np.int64)
    oc_chunk = np.where(over, iters * unit, q.oc)
    return ker, over, iters, oc_chunk, np.where(over, _kernel_need_np(pattern, q, oc_chunk, ocp), ker)


def _kernel_need_np(pattern: str, q: _Req, oc_chunk: np.ndarray, ocp: np.ndarray) -> np.ndarray:
    """``_lmm_need_np(pattern, False, q, q.ow, oc_chunk, ocp)[1]``, the kernel PE's need alone (which
    :func:`_lmm_need_np` takes from here), without the input and partial-sum terms (~9 numpy calls over the
    requests)."""
    if pattern == "single":
        return np.zeros_like(q.ow)  # (as _lmm_need_np's np.zeros_like(span): int64, one per request)
    e = q.e
    if pattern == "A":
        ker = 2 * 2 * oc_chunk * e
    else:
        ker = 2 * 2 * _cdiv(oc_chunk, ocp) * e
    return np.where(q.mac, ker, 0)


class _ReqAt:
    """The requests ``at`` of a :class:`_Req` (each field gathered when first read)."""

    def __init__(self, q: _Req, at: np.ndarray):
        self._q, self._at = q, at

    def __getattr__(self, k: str) -> np.ndarray:
        v = getattr(self._q, k)[self._at]
        setattr(self, k, v)
        return v


#: :func:`_fits_of_live` fits the live requests alone up to this share of the requests (an EMAXV chunk's one
#: pattern runs on most of its requests; EMAXVR's three on ~56 %, ~42 %, ~13 %)
LIVE_SUBSET_UPTO = 0.5


def _fits_of_live(pattern: str, q: _Req, ocp: np.ndarray, pxp: np.ndarray, live: np.ndarray,
                  modes: tuple[bool, ...] = (False, True)) -> dict[bool, tuple[np.ndarray, ...]]:
    """Per input mode of ``modes`` (resident or not; :func:`conv_table` asks only those a slot of the pattern
    runs: EMAXV's single loop never runs resident), :func:`_fit_lmm_np` of every request with ``live`` as given. Up to
    :data:`LIVE_SUBSET_UPTO` of them live (an EMAXVR pattern runs on ~1/3 of a chunk's requests: its knob and
    structure rule out the rest), computed on the live requests only and placed at their positions, 0 elsewhere,
    where :func:`conv_table` reads none of it (no mapping, and no fit reason: the LMM is asked only where the
    structure runs); the same numbers at every live request."""
    if np.count_nonzero(live) > LIVE_SUBSET_UPTO * len(live):  # most live: gathering them costs more than it saves
        shared = _fit_kernel_np(pattern, q, ocp)
        return {res: _fit_lmm_np(pattern, res, q, ocp, pxp, live, shared) for res in modes}
    at = np.flatnonzero(live)
    qs, ocp_s, pxp_s = _ReqAt(q, at), ocp[at], pxp[at]
    shared = _fit_kernel_np(pattern, qs, ocp_s)
    every = np.ones(len(at), bool)
    out = {}
    for res in modes:
        parts = []
        for v in _fit_lmm_np(pattern, res, qs, ocp_s, pxp_s, every, shared):
            full = np.zeros(len(live), dtype=v.dtype)
            full[at] = v
            parts.append(full)
        out[res] = tuple(parts)
    return out


def _fit_lmm_np(pattern: str, resident: bool, q: _Req, ocp: np.ndarray, pxp: np.ndarray,
                live: np.ndarray, shared: tuple[np.ndarray, ...] | None = None) -> tuple[np.ndarray, ...]:
    """:func:`_fit_lmm` of every request (arrays; n_seg 0 = no fit; ``live``: the requests to fit), and why not
    (the code and need of :func:`_why_lmm`, 0 where it fits). ``shared``: :func:`_fit_kernel_np` of the pattern
    (computed here if not given).

    The need grows with the segment and the segment shrinks as n_seg grows, so instead of searching, the
    widest segment that fits comes from each term of :func:`_lmm_need` and the fewest segments from it."""
    lmm, unit = q.lmm, (np.ones_like(ocp) if pattern == "A" else ocp)
    step = np.where(pxp == 2, 2, 1)
    ker_all, over, iters, oc_chunk, ker = shared if shared is not None else _fit_kernel_np(pattern, q, ocp)
    # the widest segment whose input span and partial sums fit (span = min(w + 2 pad, (seg - 1) stride + kw_ext))
    per_span, per_px = (q.e, q.e) if pattern == "single" else (2 * q.e * (q.oh if resident else 1), 2 * q.e)
    span_max = lmm // per_span
    px_max = span_max if per_px is per_span else lmm // per_px  # (the single loop: the same quotient, once)
    seg_max = np.where(q.w + 2 * q.pad <= span_max, px_max, np.minimum(px_max, (span_max - q.kw_ext) // q.stride + 1))
    pairs = bool((step == 2).any())  # (none: the even-segment steps below subtract 0 and keep ow_seg: int64, exact)
    if pairs:
        seg_max -= np.where(step == 2, seg_max % 2, 0)  # pairs: even segments
    found = live & (ker <= lmm) & ~(over & (iters < 1)) & (seg_max >= step)
    n_seg = np.where(found, _cdiv(q.ow, np.maximum(seg_max, 1)), 0)
    ow_seg = _cdiv(q.ow, np.maximum(n_seg, 1))
    if pairs:
        ow_seg = np.where(step == 2, ow_seg + ow_seg % 2, ow_seg)
    need = _lmm_need_np(pattern, resident, q, ow_seg, oc_chunk, ocp)[0]
    # at most oc_cap channels per start, in whole OC iterations
    cap = np.maximum(unit, q.oc_cap // unit * unit)
    capped = (n_seg > 0) & (q.oc_cap > 0) & (q.oc_cap < q.oc) & q.mac & (oc_chunk > cap)
    if capped.any():
        oc_chunk = np.where(capped, cap, oc_chunk)
        need = np.where(capped, _lmm_need_np(pattern, resident, q, ow_seg, oc_chunk, ocp)[0], need)
    code = np.where(live & over & (iters < 1), 1, np.where(live & (n_seg == 0), 2, 0))
    why_need = np.where(code == 1, ker_all, _lmm_need_np(pattern, resident, q, step, oc_chunk, ocp)[0])
    return n_seg, ow_seg, oc_chunk, need, code, why_need


def _slots(arch: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(pattern, loop order, input mode) of every structure :func:`_conv_structures` may list, in its order."""
    if arch == "emaxv":
        return tuple((p, ("OW",), "rows") for p in PATTERNS_V)
    return tuple((p, o, m) for p in PATTERNS_VR for o in ORDERS_VR for m in (["rows"] if o[-1] != "OC" else ["resident", "swap"]))


@dataclass(frozen=True)
class ConvTable:
    """:func:`conv_table`'s answer: the mappings of every request as columns, the request of each row, and what
    :meth:`rejections` needs."""

    cols: dict[str, np.ndarray]
    req: np.ndarray
    arch: str
    shapes: Sequence[ConvShape]
    hws: Sequence[Hw]
    pairs_why: np.ndarray | None = None  # per request: the pattern knob allows pairs, the layer cannot run them
    allowed: dict[str, np.ndarray] | None = None  # per pattern and request: the knob allows it and it may run
    why: dict[str, dict[str, np.ndarray]] | None = None  # per pattern: _structure_np's reasons
    slot_ok: np.ndarray | None = None  # [request, slot]: the loop-order knob allows the slot
    fit_code: np.ndarray | None = None  # [request, slot]: _why_lmm's code
    fit_need: np.ndarray | None = None  # [request, slot]: _why_lmm's need
    known: list[tuple[bool, tuple[str, ...]]] | None = None  # few requests: the answers, from conv_candidates

    def rejections(self, js: Sequence[int]) -> list[tuple[bool, tuple[str, ...]]]:
        """For each request j of ``js``: whether it has a mapping, and the reasons of the rejected ones in
        :func:`conv_candidates`'s order (the pairs rule first, then per pattern its rows, or per loop order and
        mode its structure or LMM fit). Built only for the requests whose layer gets no plan."""
        if self.known is not None:
            return [self.known[j] for j in js]
        return listed_reasons(*self.rejections_coded(js))

    def rejections_coded(self, js: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`rejections` as arrays (:func:`coded_reasons`): whether each request has a mapping, every
        reason text request by request (objects), and where each request's texts end (a cumulative count); no
        tuple per request (a random batch asks ~3.5 k (EMAXV) to ~12 k (EMAXVR) requests' reasons)."""
        if self.known is not None:
            return coded_reasons([self.known[j] for j in js])
        js = np.asarray(js, dtype=np.int64)
        # every reason a request may get, in order: a column per reason (0 = not given), then the texts of the
        # ones given only (a request gets one or two of the ~10 possible)
        slots = _slots(self.arch)
        cols, info = [self.pairs_why[js].astype(np.int8)], [(0, "", (), "", 0)]
        fits = np.zeros(len(js), bool)
        vals = {}
        for p, w in self.why.items():
            allowed = self.allowed[p][js]
            rows_code = w["rows_code"][js]
            cols.append((allowed & (rows_code != 0)).astype(np.int8))
            info.append((1, p, (), "", 0))
            runs = allowed & (rows_code == 0)
            code = w["code"][js]
            for sl, (q, o, mode) in enumerate(slots):
                if q != p:
                    continue
                on = runs & self.slot_ok[js, sl]
                lmm = self.fit_code[js, sl]
                fits |= on & (code == 0) & (lmm == 0)
                cols.append(np.where(on & (code != 0), 1, np.where(on & (code == 0) & (lmm != 0), 2, 0)).astype(np.int8))
                info.append((2, p, o, mode, sl))
            vals[p] = w
        given = np.stack(cols, axis=1)
        at, col = nonzero_2d(given)
        kind = given[at, col]
        texts = _why_texts(info, vals, at, col, kind, js, self.hws, self.shapes, self.fit_code, self.fit_need)
        return fits, texts, np.cumsum(np.bincount(at, minlength=len(js)))


#: from this many rows a gather is a ``take`` (:func:`_rows_of`): below it ``a[at]`` costs fewer instructions (the
#: method call's fixed cost, ~1,700 instructions, against ~2 fewer an element)
TAKE_FROM = 1024


def _rows_of(a: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``a[at]`` (rows ``at`` of ``a``): by ``take`` for an integer index of :data:`TAKE_FROM` rows or more (the same
    values and dtype, C order; numpy's take loop costs ~13 % fewer instructions an element and ~1/3 less time than
    the fancy-index gather), else by indexing (few rows: one design point; a boolean mask, a slice)."""
    if (type(at) is np.ndarray and at.size >= TAKE_FROM and at.ndim == 1 and at.dtype.kind in "iu"
            and isinstance(a, np.ndarray) and a.ndim):
        return a.take(at, axis=0)
    return a[at]


def rows_getter(at) -> Callable[[np.ndarray, object], np.ndarray]:
    """A function of ``(a, at)`` giving :func:`_rows_of` ``(a, at)`` for rows ``at`` and any of its subsets (or a
    slice): ``operator.getitem`` (``a[at]``: no Python call, no checks) where :func:`_rows_of` indexes whatever ``a``
    is (fewer than :data:`TAKE_FROM` rows: one design point's), else :func:`_rows_of`."""
    return _rows_of if type(at) is np.ndarray and at.size >= TAKE_FROM else getitem


def nonzero_2d(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a 2-D array: the same row and column indices (int64, row by row, left to right), from its
    flat indices divided by the row length; numpy's multi-dimensional nonzero costs ~3-4x as much on the builders'
    [rows, variants] and the mapper's [requests, slots] masks (a few hundred thousand entries a chunk)."""
    if a.ndim != 2 or not a.shape[1]:
        return np.nonzero(a)
    flat = np.flatnonzero(a)
    col = flat % a.shape[1]
    flat //= a.shape[1]  # (in place, not np.divmod: its int64 loop costs ~4x, and two index arrays live, not three)
    return flat, col


def coded_reasons(answers: Sequence[tuple[bool, tuple[str, ...]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Requests' (has a mapping, reason texts) answers as :meth:`ConvTable.rejections_coded` gives them: the flags
    (bool), every text request by request (objects) and each request's end among them (int64, cumulative)."""
    fits = np.array([f for f, _ in answers], dtype=bool).reshape(len(answers))
    flat = [t for _, rej in answers for t in rej]
    texts = np.empty(len(flat), dtype=object)
    texts[:] = flat
    return fits, texts, np.cumsum(np.array([len(rej) for _, rej in answers], dtype=np.int64).reshape(len(answers)))


def merged_reasons(first: np.ndarray, a: tuple[np.ndarray, np.ndarray, np.ndarray],
                   b: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two sets of coded reasons (:func:`coded_reasons`) as one, request by request: request i is the next of ``a``
    where ``first[i]``, else the next of ``b`` (a batch's conv requests and FC ones, in pair order; no tuple per
    request)."""
    n = len(first)
    fits = np.empty(n, dtype=bool)
    fits[first], fits[~first] = a[0], b[0]
    lens = np.empty(n, dtype=np.int64)
    lens[first], lens[~first] = np.diff(a[2], prepend=0), np.diff(b[2], prepend=0)
    ends = np.cumsum(lens)
    texts = np.empty(int(ends[-1]) if n else 0, dtype=object)
    for mask, (_, t, e) in ((first, a), (~first, b)):  # each set's texts at its requests' places, in order
        ln = lens[mask]
        texts[np.repeat(ends[mask] - ln, ln) + np.arange(len(t)) - np.repeat(e - ln, ln)] = t
    return fits, texts, ends


def listed_reasons(fits: np.ndarray, texts: np.ndarray, ends: np.ndarray) -> list[tuple[bool, tuple[str, ...]]]:
    """The (has a mapping, reason texts) answer of each request of coded reasons (:func:`coded_reasons`)."""
    texts, ends = texts.tolist(), ends.tolist()
    return [(f, tuple(texts[a:b])) for f, a, b in zip(fits.tolist(), [0] + ends[:-1], ends)]


def _picked(seq: Sequence, js: np.ndarray) -> list:
    """``[seq[j] for j in js]`` (an :class:`Indexed` sequence: by its positions, without a call per element)."""
    if isinstance(seq, Indexed):
        objs = seq.objs
        return [objs[a] for a in seq.at[js].tolist()]
    return [seq[j] for j in js.tolist()]


#: reason texts by what they say (:func:`_why_texts`): each a pure function of its numbers; a random batch asks
#: ~12 k texts of ~1-2 k distinct ones (EMAXV: ~10), so they are built once each. Bounded: emptied when full
_WHY_TEXTS: dict[tuple, str] = {}
WHY_TEXTS_MAX = 8192


def _why_texts(info: list[tuple], vals: dict[str, dict[str, np.ndarray]], at: np.ndarray, col: np.ndarray,
               kind: np.ndarray, js: np.ndarray, hws: Sequence[Hw], shapes: Sequence[ConvShape],
               fit_code: np.ndarray, fit_need: np.ndarray) -> list[str]:
    """The reason text of every given reason (request ``js[at[i]]``, reason column ``col[i]`` described by
    ``info[col[i]]``, ``kind[i]``: 1 = structure, 2 = LMM fit for a slot's reason), in the order of ``at``: what
    :meth:`ConvTable.rejections` built one call per text, here per reason column with every number gathered at
    once and each distinct text built once (:data:`_WHY_TEXTS`, keyed by everything its function reads)."""
    out = np.empty(len(at), dtype=object)
    memo = _WHY_TEXTS
    if len(memo) > WHY_TEXTS_MAX:
        memo.clear()
    hw_num: dict[str, np.ndarray] = {}
    sh_num: dict[str, np.ndarray] = {}

    def of_hw(k: str) -> np.ndarray:  # field k of each request's array (per request of js)
        v = hw_num.get(k)
        if v is None:
            v = hw_num[k] = _attr_of(hws, js, k)
        return v

    def of_sh(k: str) -> np.ndarray:
        v = sh_num.get(k)
        if v is None:
            v = sh_num[k] = _attr_of(shapes, js, k)
        return v

    for c in np.flatnonzero(np.bincount(col, minlength=len(info))).tolist():
        pos = np.flatnonzero(col == c)
        what, p, o, mode, sl = info[c]
        if what == 0:
            out[pos] = [PAIRS_WHY] * len(pos)
            continue
        r = at[pos]
        jr = js[r]
        w = vals[p]
        if what == 1:
            nums = [w[k][jr] for k in ("rows_code", "avail", "whole", "rpk")] + [of_hw("rows")[r], of_sh("kh")[r],
                                                                                 of_sh("kw")[r]]
            out[pos] = _texts_of_keys(nums, (1, p), lambda key: _why_rows(  # noqa: E731
                p, key[0], _Kernel(key[5], key[6]), key[4], key[1], key[2], key[3]), memo)
            continue
        g = kind[pos]
        for gk in (1, 2):
            sub = np.flatnonzero(g == gk)
            if not len(sub):
                continue
            rs, js_ = r[sub], jr[sub]
            if gk == 1:
                nums = [w["code"][js_], w["mem_row"][js_], of_hw("cols")[rs], w["rows_used"][js_], of_hw("rows")[rs],
                        w["alus"][js_]]
                head = f"{p}[{ORDER_NAMES[o]}]"
                tag = (2, p, o)
                build = lambda key: head + _why_structure(*key)  # noqa: E731
            else:
                nums = [fit_code[js_, sl], fit_need[js_, sl], np.where(w["pxp"][js_] == 2, 2, 1),
                        of_hw("lmm_bytes")[rs]]
                tag = (3, p, o, mode)
                build = lambda key: _why_lmm(p, o, mode, *key)  # noqa: E731
            out[pos[sub]] = _texts_of_keys([np.asarray(a) for a in nums], tag, build, memo)
    return out


#: reasons of one column from which :func:`_texts_of_keys` finds the distinct keys by numpy (a sort) instead of
#: looking every key up
TEXT_KEYS_NUMPY_FROM = 32


def _texts_of_keys(nums: list[np.ndarray], tag: tuple, build: Callable[[tuple], str],
                   memo: dict[tuple, str]) -> list | np.ndarray:
    """``build(key)`` of each key ``key`` = (``nums[0][i]``, ``nums[1][i]``, ...) as Python numbers, remembered in
    ``memo`` under ``tag + key``. Many int64 keys: each distinct key looked up (and built) once, found by one sort of
    the keys packed into one integer (each column's offset from its least value, mixed radix; or ``np.unique``
    over the rows when that could overflow), and every key's text gathered; the texts and the memo's entries are
    the ones key by key gives."""
    n = len(nums[0]) if nums else 0
    if n < TEXT_KEYS_NUMPY_FROM or any(a.dtype != np.int64 or a.shape != (n,) for a in nums):
        got = []
        for key in zip(*[a.tolist() for a in nums]):
            t = memo.get(tag + key)
            if t is None:
                t = memo[tag + key] = build(key)
            got.append(t)
        return got
    key = np.stack(nums, axis=1)
    lo = key.min(axis=0)
    span = key.max(axis=0).astype(float) - lo.astype(float) + 1
    if float(np.prod(span)) < 2.0 ** 62:  # (float products: an overflow cannot hide)
        mult = np.cumprod(np.concatenate(([1], span[:-1].astype(np.int64))))
        _, first, inv = np.unique((key - lo) @ mult, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    texts = np.empty(len(first), dtype=object)
    for i, k in enumerate(map(tuple, key[first].tolist())):
        t = memo.get(tag + k)
        if t is None:
            t = memo[tag + k] = build(k)
        texts[i] = t
    return texts[inv.reshape(-1)]


@dataclass(frozen=True)
class _Kernel:
    """The kernel height and width of a layer shape: what :func:`_why_rows` reads of it."""

    kh: int
    kw: int


def _attr_of(seq: Sequence, js: np.ndarray, name: str) -> np.ndarray:
    """``[getattr(seq[j], name) for j in js]`` as an int64 array (an :class:`Indexed` sequence: once per object)."""
    if isinstance(seq, Indexed):
        if isinstance(seq.objs, HwList) and name in HW_NUMBERS:
            return seq.objs.numbers[name][seq.at[js]]
        return np.array([getattr(o, name) for o in seq.objs], dtype=np.int64).reshape(-1)[seq.at[js]]
    return np.array([getattr(seq[j], name) for j in js.tolist()], dtype=np.int64).reshape(-1)


def _archs(hws: Sequence[Hw], js: np.ndarray) -> Sequence[str]:
    """``[hws[j].arch for j in js]``: one text repeated when the arrays share their architecture (a chunk's do)."""
    objs = hws.objs if isinstance(hws, Indexed) else hws
    if isinstance(objs, HwList) and objs.arch is not None:  # (one architecture, known without the objects)
        return itertools.repeat(objs.arch, len(js))
    kinds = {h.arch for h in objs}
    if len(kinds) == 1:
        return itertools.repeat(next(iter(kinds)), len(js))
    return [h.arch for h in _picked(hws, js)]


def _spreads(patterns: Sequence[str], slot: np.ndarray, macs: np.ndarray, lmms: np.ndarray) -> list:
    """:func:`_weights_spread` of each row (slot ``slot[k]`` of pattern ``patterns[slot[k]]``, ``macs[k]`` taps
    over ``lmms[k]`` kernel LMMs) as arrays: the test once over the rows, a tuple only where it holds."""
    is_a = np.array([p == "A" for p in patterns], dtype=bool)[slot]
    on = is_a & (lmms != 0) & (macs != 2 * lmms)
    out: list = [None] * len(slot)
    hit = np.flatnonzero(on)
    for k, m, n in zip(hit.tolist(), macs[hit].astype(np.int64).tolist(), lmms[hit].astype(np.int64).tolist()):
        out[k] = (m, n)
    return out


def _after_each(n: int, rows: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The order that puts ``lens[i]`` new rows right after row ``rows[i]`` (``rows`` increasing) of ``n`` rows,
    the new rows listed after the n in ``rows``' order: ``np.argsort(np.concatenate([np.arange(n),
    np.repeat(rows, lens)]), kind="stable")`` without the sort."""
    more = np.zeros(n, dtype=np.int64)
    more[rows] = lens
    start = np.arange(n) + np.cumsum(more) - more  # each old row's place: rows before it and their new rows
    order = np.empty(n + int(lens.sum()), dtype=np.int64)
    order[start] = np.arange(n)
    first = np.repeat(start[rows] + 1 - (np.cumsum(lens) - lens), lens)  # new row m goes to first[m] + m
    order[first + np.arange(len(first))] = n + np.arange(len(first))
    return order


#: requests from which :func:`conv_table` runs the mapper as numpy (below: one by one, cached)
TABLE_NUMPY_FROM = 40


#: the numbers of a mapping its LMM fit gives (:func:`_fit_lmm_np`'s first four)
_FIT_NUMBERS = ("n_seg", "ow_seg", "oc_chunk", "lmm_need")


class SlotColumns(AbcMapping):
    """:func:`conv_table`'s columns, each built when first read: a gathered column is ``base[at]`` (numbers converted
    to float: ``base[at].astype(float)``, as :func:`_slot_numbers` built every one; labels as they are; a base given
    as parts is their concatenation, made when the column is first read), the others as given. :meth:`gather` gives ``self[k][rows]`` of a column not built yet in one gather (the indices composed:
    ``base[at[rows]]``, the same values). An EMAXV chunk's builder reads 16 of its 24 columns, each at its plan rows
    (:class:`~archmodels.emax.traffic.Rows`): the other 8 are never built, the 16 gathered once instead of twice."""

    __slots__ = ("_got", "_src", "_keys", "_composed")

    def __init__(self) -> None:
        self._got: dict[str, np.ndarray] = {}
        self._src: dict[str, tuple[np.ndarray | list, np.ndarray, bool]] = {}  # key -> (base or parts, at, to float)
        self._keys: dict[str, None] = {}  # every key, in the order set (a dict's)
        self._composed: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def put(self, k: str, v: np.ndarray) -> None:
        """Column ``k`` is ``v``."""
        self._src.pop(k, None)
        self._got[k] = v
        self._keys[k] = None

    def lazy(self, k: str, base: np.ndarray | list[np.ndarray], at: np.ndarray, to_float: bool) -> None:
        """Column ``k`` is ``base[at]`` (``.astype(float)`` if ``to_float``), built when first read; ``base`` a list:
        ``np.concatenate(base)``, made then (an EMAXV chunk never reads 5 of its 22 number columns, whose patterns'
        and fits' parts were concatenated for nothing: ~3 MB a chunk)."""
        self._got.pop(k, None)
        self._src[k] = (base, at, to_float)
        self._keys[k] = None

    def _source(self, k: str) -> tuple[np.ndarray, np.ndarray, bool]:
        """Column ``k``'s (base, at, to float), its parts concatenated (once)."""
        base, at, to_float = src = self._src[k]
        if isinstance(base, list):
            src = self._src[k] = (np.concatenate(base), at, to_float)
        return src

    def built(self, k: str) -> bool:
        return k in self._got

    def __getitem__(self, k: str) -> np.ndarray:
        v = self._got.get(k)
        if v is None:
            base, at, to_float = self._source(k)
            v = self._got[k] = base[at].astype(float) if to_float else base[at]
        return v

    def gather(self, k: str, rows: np.ndarray) -> np.ndarray:
        """``self[k][rows]``: of a column not built, ``base[at[rows]]`` (converted as :meth:`__getitem__` does; each
        (``at``, ``rows``) pair composed once)."""
        if k in self._got:
            return self._got[k][rows]
        base, at, to_float = self._source(k)
        key = (id(at), id(rows))
        hit = self._composed.get(key)
        if hit is None or hit[0] is not at or hit[1] is not rows:
            hit = self._composed[key] = (at, rows, at[rows])
        v = base[hit[2]]
        return v.astype(float) if to_float else v

    def __contains__(self, k: object) -> bool:
        return k in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _slot_numbers(by_pattern: dict[str, list[np.ndarray]], by_fit: dict[str, list[np.ndarray]], at_pattern: np.ndarray,
                  at_fit: np.ndarray, pload: np.ndarray) -> SlotColumns:
    """The :data:`_NUMBERS` columns (float) of :func:`conv_table`'s rows: a structure's field of row k from pattern
    row ``at_pattern[k]`` (flat [pattern, request]), a fit's from ``at_fit[k]`` (flat [pattern x mode, request]),
    each gathered when first read (:class:`SlotColumns`), ``pload`` as given; a field none gives is 0."""
    out = SlotColumns()
    for f in _NUMBERS:
        got = by_fit.get(f) or by_pattern.get(f)
        if f == "pload":
            out.put(f, pload)
        elif not got:
            out.put(f, np.zeros(len(at_pattern)))
        else:
            out.lazy(f, list(got) if len(got) > 1 else got[0], at_fit if f in by_fit else at_pattern, True)
    return out


def _slot_labels(out: SlotColumns | dict[str, np.ndarray], labels: np.ndarray, slot: np.ndarray) -> None:
    """The texts of :func:`conv_table`'s rows (``labels``: [slot, (pattern, outer, mode, name, order_name)] objects;
    ``slot``: each row's) into ``out``: pattern, outer loop and mode as fixed-width text (as ``astype(str)`` of the
    objects gives it: as wide as the longest text present), name and order name as the objects; gathered when first
    read into a :class:`SlotColumns` (the name and order name contiguous: ``labels[slot][:, j]``'s values)."""
    present = np.zeros(len(labels), bool)
    present[slot] = True
    for j, k in enumerate(("pattern", "outer", "mode", "name", "order_name")):
        if k in ("pattern", "outer", "mode"):
            texts = [x[j] for x in labels.tolist()]
            wide = max([len(t) for t, on in zip(texts, present.tolist()) if on], default=1)
            base = np.array(texts, dtype=f"<U{wide}")
        else:
            base = labels[:, j]
        if isinstance(out, SlotColumns):
            out.lazy(k, base, slot, False)
        else:
            out[k] = base[slot]


def _knob(values: Sequence[str]) -> np.ndarray | KnobAt:
    """A knob's values per request as an array :func:`conv_table` compares with texts: fixed-width text or a
    :class:`KnobAt` as given (compared in C; :func:`~archmodels.emax.model._mapping_rows` names each request's
    combination's), else objects."""
    if isinstance(values, KnobAt) or isinstance(values, np.ndarray) and values.dtype.kind == "U":
        return values
    return np.array(values, dtype=object)


class KnobAt:
    """A knob's text per request, ``texts[at]``, as a few distinct texts (fixed-width text) and each request's
    position among them: ``knob == text`` compares the distinct texts and gathers the answers (a comparison of
    fixed-width texts costs ~2 ns a character; a chunk's ~25 k requests name a few texts)."""

    __slots__ = ("texts", "at")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, texts: np.ndarray, at: np.ndarray):
        self.texts, self.at = texts, at

    def __eq__(self, value) -> np.ndarray:  # type: ignore[override]
        return (self.texts == value)[self.at]

    def __len__(self) -> int:
        return len(self.at)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.texts[self.at]
        return out if dtype is None else out.astype(dtype)

    def __iter__(self):
        return iter(np.asarray(self).tolist())

    def replaced(self, where: np.ndarray, text: str) -> KnobAt:
        """The knob with ``text`` at the requests ``where`` (a boolean mask), the rest as they are."""
        if not where.any():
            return self
        texts = self.texts
        hit = np.flatnonzero(texts == text)
        if len(hit):
            code = int(hit[0])
        else:  # (a text not among them: added, cut to the texts' width as an assignment into the text array cut it)
            code = len(texts)
            texts = np.concatenate([texts, np.array([text], dtype=texts.dtype)])
        at = self.at.copy()
        at[where] = code
        return KnobAt(texts, at)


def conv_table(arch: str, shapes: Sequence[ConvShape], hws: Sequence[Hw], patterns: Sequence[str],
               orders: Sequence[str]) -> ConvTable:
    """:func:`mapping_columns` of ``conv_candidates(shapes[j], hws[j], patterns[j], orders[j])[0]`` for every
    request j (``arch`` arrays), concatenated in request order, and the request of each row.

    The mapper as numpy over all requests at once (random design points rarely share an array, so the per-call
    caches of :func:`conv_candidates` seldom hit): :func:`_conv_structures` and :func:`_fit_lmm` on arrays, a tile
    search's other tiles per fitted structure in Python (:func:`_tiles`). The reasons of the rejected ones are
    built when asked for (:meth:`ConvTable.rejections`). Fewer than :data:`TABLE_NUMPY_FROM` requests (one design
    point) go through :func:`conv_candidates` one by one: numpy's cost per call exceeds the scalar mapper's."""
    n = len(shapes)
    if n < TABLE_NUMPY_FROM:
        answers = [_candidate_rows(*a) for a in zip(shapes, hws, patterns, orders)]
        return ConvTable(_columns([x for a in answers for x in a[0]], [x for a in answers for x in a[1]]),
                         np.repeat(np.arange(n), [len(a[0]) for a in answers]), arch, shapes, hws,
                         known=[a[2] for a in answers])
    q = _Req(shapes, hws)
    pat_knob, ord_knob = _knob(patterns), _knob(orders)
    every = PATTERNS_V if arch == "emaxv" else PATTERNS_VR
    pairs_ok = q.mac & (q.stride == 1) & q.lddhr & (q.cols % 2 == 0) & (q.oc >= 2)
    geo = {p: _geometry_np(p, q) for p in every}
    whole_fits = np.zeros(n, bool)
    for p in every:
        whole_fits |= (q.rows - HEADER_ROWS[p] - _tail_rows_np(p, q.cols) >= q.kh * geo[p][3]) & (pairs_ok if p == "pairs" else True)
    slots = _slots(arch)
    # the numbers as the pattern (structure) or the pattern and input mode (LMM fit) give them, [kind, request] per
    # field, and which row of them each slot reads: written once per pattern, not per slot
    by_pattern: dict[str, list[np.ndarray]] = {}
    by_fit: dict[str, list[np.ndarray]] = {f: [] for f in _FIT_NUMBERS}
    slot_pat, slot_fit = np.zeros(len(slots), np.int64), np.zeros(len(slots), np.int64)
    # (every column written below, slot by slot: the slots are grouped by pattern in ``every``'s order)
    valid = np.empty((n, len(slots)), bool)
    slot_ok, fit_code, fit_need = (np.empty((n, len(slots)), t) for t in (bool, np.int64, np.int64))
    allowed, why = {}, {}
    j = 0
    for pi, p in enumerate(every):
        allowed[p] = (pat_knob == "auto") | (pat_knob == p)
        if p == "pairs":
            allowed[p] &= pairs_ok
        ok, core, why[p] = _structure_np(p, q, ~whole_fits, arch)
        why[p]["pxp"] = core["px_par"]
        ok &= allowed[p]
        # (the input modes the pattern's slots run: a mode none runs is not fitted, its place in by_fit is held by
        # the other's numbers, which no slot reads)
        modes = tuple(res for res in (False, True) if any(q_ == p and (m_ == "resident") == res for q_, _, m_ in slots))
        fit = _fits_of_live(p, q, core["oc_par"], core["px_par"], ok, modes)
        for f, v in core.items():
            by_pattern.setdefault(f, []).append(v if isinstance(v, np.ndarray) and v.shape == (n,)
                                                else np.broadcast_to(v, (n,)))
        for res in (False, True):
            for f, v in zip(_FIT_NUMBERS, fit[res] if res in fit else fit[modes[0]]):
                by_fit[f].append(v)
        while j < len(slots) and slots[j][0] == p:
            _, o, mode = slots[j]
            slot_ok[:, j] = (ord_knob == "auto") | (ord_knob == ORDER_NAMES[o]) if arch == "emaxvr" else True
            n_seg, ow_seg, oc_chunk, need, fit_code[:, j], fit_need[:, j] = fit[mode == "resident"]
            valid[:, j] = ok & slot_ok[:, j] & (n_seg > 0)
            slot_pat[j], slot_fit[j] = pi, 2 * pi + (mode == "resident")
            j += 1
    if j != len(slots):  # (a slot of a pattern out of order would leave its columns unwritten)
        raise AssertionError("slots not grouped by pattern")
    req, slot = nonzero_2d(valid)
    out = _slot_numbers(by_pattern, by_fit, slot_pat[slot] * n + req, slot_fit[slot] * n + req,
                        np.array([p != "single" for p, _, _ in slots], dtype=float)[slot])
    labels = np.array([(p, o[-1], m, f"{p}[{ORDER_NAMES[o]}]", ORDER_NAMES[o]) for p, o, m in slots], dtype=object)
    # a tile search's other tiles (:func:`_tiles`), each right after its structure's first
    search = ((q.tile_search > 0) & q.mac)[req] if arch == "emaxvr" else ()
    if np.any(search):
        extra = []
        rows = np.flatnonzero(search)
        jr = req[rows]
        # the tiles depend on the pattern, not on the loop order nor the input mode (their LMM needs do: computed
        # after, over every tile at once)
        fit = [out[k][rows].astype(np.int64).tolist() for k in ("n_seg", "ow_seg", "oc_chunk", "oc_par", "px_par")]
        archs = _archs(hws, jr)
        pats = [p for p, _, _ in slots]
        more_of = _more_tiles
        lens = []
        for sl, sh, a, e, ts, n_seg, ow_seg, oc_chunk, ocp, pxp, spread in zip(
                slot[rows].tolist(), _picked(shapes, jr), archs, q.e[jr].tolist(), q.tile_search[jr].tolist(), *fit,
                _spreads(pats, slot[rows], out["macs"][rows], out["kernel_lmms"][rows])):
            more = more_of(pats[sl], sh, a, e, ts, n_seg, ow_seg, oc_chunk, ocp, pxp, spread)
            lens.append(len(more))
            extra += more
        if extra:
            lens = np.array(lens, dtype=np.int64)
            at = np.repeat(rows, lens)
            ex = np.array(extra, dtype=np.int64).reshape(len(extra), 3)
            w, t = ex[:, 1], ex[:, 2]
            ext_slot = slot[at]
            parent_w, parent_t = out["ow_seg"][at].astype(np.int64), out["oc_chunk"][at].astype(np.int64)
            need = _tile_needs(np.array([p == "A" for p in pats], dtype=bool)[ext_slot],
                               np.array([m == "resident" for _, _, m in slots], dtype=bool)[ext_slot],
                               _ReqAt(q, req[at]), w, t, out["oc_par"][at].astype(np.int64))
            # (a tile equal to the fit's first has the fit's need)
            need = np.where((t == parent_t) & (w == parent_w), out["lmm_need"][at].astype(np.int64), need)
            new = {"n_seg": ex[:, 0].astype(float), "ow_seg": w.astype(float), "oc_chunk": t.astype(float),
                   "lmm_need": need.astype(float)}
            rank = _after_each(len(req), rows, lens)
            out = {k: _rows_of(np.concatenate([v, new[k] if k in new else _rows_of(v, at)]), rank)
                   for k, v in out.items()}
            req, slot = np.concatenate([req, req[at]])[rank], np.concatenate([slot, slot[at]])[rank]
    _slot_labels(out, labels, slot)
    pairs_why = (((pat_knob == "auto") | (pat_knob == "pairs")) & ~pairs_ok) if arch == "emaxvr" else np.zeros(n, bool)
    return ConvTable(out, req, arch, shapes, hws, pairs_why, allowed, why, slot_ok, fit_code, fit_need)


def fc_table(shapes: Sequence[FCShape], hws: Sequence[Hw]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """:func:`mapping_columns` of ``fc_candidates(shapes[j], hws[j])[0]`` for every request j, concatenated in
    request order, and the request of each row: the FC mapper as numpy over all requests (the bus-word tiles of a
    tile search per fitted mapping in Python, :func:`oc_tiles`); the reasons of the rejected ones come from
    :func:`fc_candidates`. Fewer than :data:`TABLE_NUMPY_FROM` requests (one design point): request by request
    (:func:`_fc_rows`), when any mapping fits (the texts' widths of an empty table are the numpy path's)."""
    n = len(shapes)
    if n < TABLE_NUMPY_FROM:
        answers = [_fc_rows(sh, hw) for sh, hw in zip(shapes, hws)]
        if any(nums for nums, _ in answers):
            return (_columns([x for a in answers for x in a[0]], [x for a in answers for x in a[1]]),
                    np.repeat(np.arange(n), [len(a[0]) for a in answers]))
    inputs, outputs = _by_object(shapes, attrgetter("inputs", "outputs"), 2)
    rows, c, lmm, e, oc_cap, search = _hw_fields(hws, ("rows", "cols", "lmm_bytes", "elem_bytes", "oc_cap",
                                                       "tile_search"))
    tail = _tail_rows_np("fc", c)
    sets = rows - HEADER_ROWS["fc"] - tail
    icpar = np.minimum(inputs, sets * c)
    per = np.stack([lmm // e, lmm // (2 * e)], axis=1)  # [request, pload]
    ok = (sets >= 1)[:, None] & (per >= 1)
    req, pl = nonzero_2d(ok)
    oc_chunk = np.minimum(np.minimum(outputs[req], per[req, pl]), np.where(oc_cap > 0, oc_cap, outputs)[req])
    t = oc_chunk
    if search.any():  # a tile search's bus-word tiles, each after its mapping's first
        at, tiles = [], []
        for r in np.flatnonzero(search[req] > 0).tolist():
            for x in oc_tiles("A", int(outputs[req[r]]), 1, int(oc_chunk[r]), int(e[req[r]]), per_unit=1)[1:]:
                at.append(r)
                tiles.append(x)
        if at:
            rank = np.argsort(np.concatenate([np.arange(len(req)), at]), kind="stable")
            req, pl = (np.concatenate([v, v[at]])[rank] for v in (req, pl))
            t = np.concatenate([t, tiles])[rank]
    ic, cc, ee, one = icpar[req], c[req], e[req], np.ones(len(req), dtype=np.int64)
    nums = dict(icpar=ic, khpar=one, gpar=one, oc_par=one, px_par=one, macs=ic, alus=ic + 1 + (np.minimum(cc, ic) - 1) + 1,
                rows_used=HEADER_ROWS["fc"] + _cdiv(ic, cc) + tail[req], mem_per_row=cc, loads_per_iter=ic,
                load_bytes_per_iter=ic * ee, n_seg=one, ow_seg=one, oc_chunk=t, lmm_need=t * ee * (1 + pl), dup_rows=one,
                regs=ic + 4, kernel_lmms=ic, pload=pl)
    out = {k: np.asarray(nums[k], dtype=float) for k in _NUMBERS}
    m = len(req)
    for k, v in (("pattern", "fc"), ("outer", "OC"), ("mode", "regs")):
        out[k] = np.full(m, v)
    for k in ("name", "order_name"):
        out[k] = objects(m, "fc[OC]" if k == "name" else "OC")
    return out, req

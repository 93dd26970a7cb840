"""IMAX LMM scheduling (spec `imax.md` §5): constraints, the exhaustive AGRP/BGRP/CGRP search.

The loop nest of one product C = A @ B on one chip with the LMM
optimisation (spec §5: A stays in LMM, B is the swapped operand):

    for each tile (row tile x column tile of A, see below):
      for each A group (AGRP consecutive blocks of H slots, kept in LMM):
        for each B group of this chip (BGRP columns of B, k_tile rows):
          start: DRAIN (previous C group), CONF (first start only), REGV,
                 RANGE, LOAD (what changed: B slab, C partial sums, A group),
                 EXEC (the group's blocks one after another, paused in
                 between to update the A-group control variables and base
                 address)

What one start covers depends on the mapping's 2-deep loop (spec §1: LOOP0,
LOOP1 in one start):

* **sparse** (IVJ, IVS): the loop runs over the stored rows of a block, so a
  start covers one SIMD execution width of B columns, ``BGRP <= W x 2``
  (4.4.9 as its text explains it): ``n / (W x 2)`` starts per A group.
* **dense** (§3): the loop runs over the rows and over the B columns held
  ("the last stage emits W partial sums per cycle ... repeating M/H times
  completes a row of C"): BGRP is bounded only by the LMM (4.4.4-4.4.7,
  4.4.10), so small products need far fewer starts than sparse ones.

A block pass takes ``stored rows x ceil(BGRP / (W x 2)) x W`` cycles plus the
pipeline fill of the chain (``imax_costs.fill_cycles``).

**LMM contents persist** (spec §5: "A ... stay in LMM across starts"): a
start loads an operand only when its range changed since the previous start
(the snooped DMA fills a unit's range; an unchanged range is not re-sent),
and the C group is drained only when the C range changes (or at the end).
So with one B group (``n = BGRP x nchip``, e.g. SpMV) B and C stay for the
whole tile, and the unoptimised order keeps an A that is a single block.

Before the optimisation (``lmm_opt`` off) A was the swapped operand (spec
§5: the optimisation makes B the swapped one; a public IMAX sparse-library
sample, GitHub taku2365/IMAX_sparse.cent ``sample/test/test024.c``, loops
``for top (B groups): for blk (A blocks)``): one block per start; every
block is re-sent for every B group when A has several blocks, while the B
slab and the C group stay in LMM for the whole B group. With one block
(high sparsity) nothing is re-sent: "AGRP = 1 already fits all of A" (§6).

A "block" is ``H`` slots of every stored row (see ``workloads/formats.py``);
unit ``h`` of the chain holds slot ``h``, so one row iteration runs the
whole chain. LMM halves (LMMSIZE): A groups take ``rows x AGRP`` row-blocks
of ``unit_row_bytes`` (``imax_costs.a_unit_row_bytes``: 4 dense, 8 IVJ, 64
in an IVS offset unit) in half of every unit; the B slab ``k x BGRP`` FP32
words in the other half (broadcast: one transfer feeds all units); the last
unit holds the C group ``rows x CGRP``.

Constraints (spec §5, with the two printed contradictions resolved as the
spec says): see :func:`violations`. Readings that are ours and documented:
(4.4.2) uses the bytes per row and block of the fullest unit (8 B IVJ as
printed, 4 B dense, 64 B IVS); with JDS, block ``b`` holds only its Margin
(``margin_b`` rows) per unit, so an A group is up to AGRP consecutive
blocks packed while their margins fit the A half (for CSR and dense every
block holds all rows and this is the printed 4.4.2); (4.4.6) sizes the C
group as the tile's rows x CGRP, the region the last unit actually holds
(the printed ``Ccolumn x CGRP`` is the same number for the thesis's square
matrices); (4.4.9) binds the sparse mappings only (above).

``lmm_opt`` on: exhaustive search of every feasible (AGRP, BGRP, CGRP) for
the least modelled time; equal times keep the larger AGRP, then the larger
BGRP (the LMM-fullest schedule). Off: AGRP = 1 in the swapped-A order above
and the largest feasible BGRP = CGRP (no search).

Tiles (an extension for matrices the spec's single-tile constraints cannot
hold): when even AGRP = 1 overflows half an LMM (rows x unit row bytes), A
is cut into equal row tiles; when even BGRP = 1 overflows (k x 4 bytes),
into equal column tiles, whose C partial sums are reloaded like those of
later A groups. The constraints then apply per tile. Square thesis matrices
up to 4096 (IVJ) / 8192 (dense) rows with 64 KB LMMs are one tile; IVS
holds 512 rows per tile (its offset units).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from workloads import formats

from . import costs as C


@dataclass(frozen=True)
class Tile:
    """One piece of A run as its own product: rows, columns, stored rows per block."""

    rows: int
    cols: int  # A columns in the tile = B rows it needs (Acolumn = Brow)
    margins: np.ndarray  # stored rows of each block
    widths: np.ndarray  # stored slots per row of each block (H; dense: columns of the block)
    first_k: bool  # first non-empty column tile of its rows: C starts from zero
    row_tile: int = 0  # index of the row range (C range and JDS permutation)
    col_tile: int = 0  # index of the column range (B slab range)

    @property
    def blocks(self) -> int:
        return len(self.margins)


@dataclass(frozen=True)
class Problem:
    """One product on one configuration: everything but clock and link bandwidth."""

    m: int
    k: int
    n: int
    fmt: str  # dense | csr | jds
    mapping: str  # dense | ivj | ivs
    H: int  # MAC units of the chain (slots per block)
    entry_bytes: int  # bytes sent per stored slot (4 dense, 8 sparse: value + index)
    unit_row_bytes: int  # A bytes per stored row and block in the fullest unit (4.4.2)
    units: int
    cols: int  # W
    lmm_bytes: int
    nchip: int
    tiles: tuple[Tile, ...] = ()
    row_tiles: int = 1
    col_tiles: int = 1
    error: str = ""  # why no schedule exists ("" when one may)

    @property
    def tile_rows(self) -> int:
        return -(-self.m // self.row_tiles)

    @property
    def tile_cols(self) -> int:
        return -(-self.k // self.col_tiles)

    @property
    def a_arrays(self) -> int:
        """DMA transfers per A group: IVS sends values and indices separately."""
        return 2 if self.mapping == "ivs" else 1

    @property
    def perm(self) -> bool:
        return self.fmt == "jds"

    @property
    def simd_limited(self) -> bool:
        """4.4.9 binds: a start covers one SIMD width of B columns (sparse mappings)."""
        return C.simd_bgrp_limited(self.mapping)

    @property
    def fill(self) -> int:
        """Pipeline fill of one block pass [cycles]."""
        return int(C.fill_cycles(self.units, self.cols, self.mapping))

    @property
    def slot_budget(self) -> int:
        """Row-blocks one unit holds in its A half (LMMSIZE / 2 / unit row bytes)."""
        return (self.lmm_bytes // 2) // self.unit_row_bytes

    @property
    def stored_slots(self) -> int:
        return int(sum((t.margins * t.widths).sum() for t in self.tiles))


# ---------------------------------------------------------------- building

def tiling(m: int, k: int, unit_row_bytes: int, lmm_bytes: int) -> tuple[int, int]:
    """(row tiles, column tiles): the fewest equal tiles AGRP = BGRP = 1 can hold (:func:`tilings` of one
    configuration in Python integers: a one-point study builds one per product)."""
    rows_max = min((lmm_bytes // 2) // unit_row_bytes, lmm_bytes // C.VALUE_BYTES)  # 4.4.2, 4.4.6
    cols_max = (lmm_bytes // 2) // C.VALUE_BYTES  # 4.4.4
    if rows_max < 1 or cols_max < 1:
        return 0, 0
    return -(-m // rows_max), -(-k // cols_max)


#: log2 of a value's bytes (a power of two): divisions by it are shifts
_VALUE_SHIFT = C.VALUE_BYTES.bit_length() - 1
assert 1 << _VALUE_SHIFT == C.VALUE_BYTES


def tilings(m: int, k: int, unit_row_bytes, lmm_bytes) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tiling` over arrays of configurations (0, 0 where one A row-block or B word overflows a half)."""
    urb, lmm = np.asarray(unit_row_bytes, dtype=np.int64), np.asarray(lmm_bytes, dtype=np.int64)
    return tilings_of_bounds(m, k, *tiling_bounds(urb, lmm))


def tiling_bounds(urb: np.ndarray, lmm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the most rows of an A tile, at least 1; the most columns, at least 1; whether both bounds are >= 1) of
    configurations of A unit-row bytes ``urb`` and LMM bytes ``lmm`` (int64): :func:`tilings`' part that does not
    depend on the product."""
    # x // 2**j as x >> j (numpy's int64 shift is arithmetic: floor division for any sign, ~20x cheaper than an
    # int64 floor division); (x // 2) // 4 == x // 8
    rows_max = np.minimum((lmm >> 1) // urb, lmm >> _VALUE_SHIFT)  # 4.4.2, 4.4.6
    cols_max = lmm >> (_VALUE_SHIFT + 1)  # 4.4.4
    ok = (rows_max >= 1) & (cols_max >= 1)
    return np.maximum(rows_max, 1), np.maximum(cols_max, 1), ok


def tilings_of_bounds(m, k, rows_max: np.ndarray, cols_max: np.ndarray,
                      ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`tilings` of an m x k product from :func:`tiling_bounds`: the tile counts where ``ok``, else 0 (integer
    counts times the flag: ``np.where(ok, count, 0)``'s values, without where's general loop)."""
    return ceil_div(m, rows_max) * ok, ceil_div(k, cols_max) * ok


#: below this, int64 numbers convert to float64 exactly and a float64 quotient rounds to neither neighbouring integer
_EXACT_QUOTIENT = 1 << 52


def ceil_div(a, b: np.ndarray) -> np.ndarray:
    """``-(-a // b)`` (ceil(a / b) as int64) of an integer ``a`` (a number or int64 array) and int64 ``b``: in float64
    when 0 <= a < 2**52 and b >= 1 everywhere -- a / b then lies at least 1/b from any integer it is not, more than
    the quotient's rounding (half an ulp, a 2**-53 part of a / b < 2**52 / b), so ceil of the rounded quotient is
    ceil(a / b) -- else the int64 expression. The same int64 values; the float path is ~5 instructions an element
    against ~22 for numpy's int64 floor division (its per-element checks and a hardware division each)."""
    if not (type(b) is np.ndarray and b.dtype == np.int64 and b.size and int(np.minimum.reduce(b, axis=None)) >= 1):
        return -(-a // b)
    if type(a) is np.ndarray:
        if not (a.dtype == np.int64 and a.size and int(np.minimum.reduce(a, axis=None)) >= 0
                and int(np.maximum.reduce(a, axis=None)) < _EXACT_QUOTIENT):
            return -(-a // b)
    elif not (isinstance(a, (int, np.integer)) and 0 <= a < _EXACT_QUOTIENT):
        return -(-a // b)
    q = np.true_divide(a, b)
    return np.ceil(q, out=q).astype(np.int64)


def _dense_tiles(m: int, k: int, rt: int, ct: int, H: int) -> tuple[Tile, ...]:
    out = []
    rows = _split(m, rt)
    cols = _split(k, ct)
    widths = {c: np.minimum(H, c - H * np.arange(-(-c // H))).astype(np.int64) for c in set(cols)}
    margins = {(r, c): np.full(len(widths[c]), r, dtype=np.int64) for r in set(rows) for c in set(cols)}
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            out.append(Tile(r, c, margins[r, c], widths[c], j == 0, i, j))
    return tuple(out)


def _split(total: int, parts: int) -> list[int]:
    """``parts`` near-equal sizes summing to ``total`` (the first ones one larger)."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def tile_row_nnz(mat: sp.csr_matrix, fmt: str, rt: int, ct: int) -> list[tuple[int, int, int, int, np.ndarray]]:
    """The tiles of a sparse A in run order: (row tile, column tile, rows, columns, nonzeros of each of its
    rows); JDS rows sorted by nonzeros first (the permutation), column tiles ``ceil(k / ct)`` wide."""
    m, k = mat.shape
    counts = _col_tile_counts(mat, ct)  # (m, ct)
    order = _col_tile_counts(mat, 0, jds=True) if fmt == "jds" else np.arange(m)
    w = -(-k // ct)
    out = []
    start = 0
    for i, r in enumerate(_split(m, rt)):
        rows = order[start:start + r]
        start += r
        out.extend((i, j, r, min(w, k - j * w), counts[rows, j]) for j in range(ct))
    return out


#: (id of the matrix, column tiles or -1 for the JDS row order) -> (the matrix, ``formats.row_nnz_by_col_tile`` or
#: ``formats.jds_order`` of its row nonzeros): a matrix's tilings share a few column tilings (random points meet
#: ~30-80 tilings of a matrix and ~5 column tilings)
_COL_COUNTS: dict[tuple, tuple[sp.csr_matrix, np.ndarray]] = {}
_COL_COUNTS_MAX = 64


def _col_tile_counts(mat: sp.csr_matrix, ct: int, jds: bool = False) -> np.ndarray:
    """``formats.row_nnz_by_col_tile(mat, ct)`` (``jds``: ``formats.jds_order`` of the row nonzeros, the sum of any
    column tiling's counts), remembered per (matrix, ct) (the entry holds the matrix: its id cannot name another
    one; the arrays are only read)."""
    key = (id(mat), -1 if jds else ct)
    hit = _COL_COUNTS.get(key)
    if hit is not None and hit[0] is mat:
        return hit[1]
    out = formats.jds_order(_col_tile_counts(mat, 1).sum(axis=1)) if jds else formats.row_nnz_by_col_tile(mat, ct)
    if len(_COL_COUNTS) >= _COL_COUNTS_MAX:
        _COL_COUNTS.clear()
    _COL_COUNTS[key] = (mat, out)
    return out


#: (id of the matrix, format, row tiles, column tiles) -> (the matrix, its tile_row_nnz): a study's points meet
#: a few tilings of its matrices; the chain length H, which varies most, enters only the Margins
_TILE_NNZ: dict[tuple, tuple[sp.csr_matrix, list]] = {}
_TILE_NNZ_MAX = 64


def _tile_row_nnz(mat: sp.csr_matrix, fmt: str, rt: int, ct: int) -> list[tuple[int, int, int, int, np.ndarray]]:
    """:func:`tile_row_nnz`, remembered for the last few (matrix, format, tiling) (the entry holds the matrix:
    its id cannot name another one; its arrays are only read)."""
    key = (id(mat), fmt, rt, ct)
    hit = _TILE_NNZ.get(key)
    if hit is not None and hit[0] is mat:
        return hit[1]
    out = tile_row_nnz(mat, fmt, rt, ct)
    if len(_TILE_NNZ) >= _TILE_NNZ_MAX:
        _TILE_NNZ.clear()
    _TILE_NNZ[key] = (mat, out)
    return out


def _sparse_tiles(mat: sp.csr_matrix, fmt: str, rt: int, ct: int, H: int) -> tuple[Tile, ...]:
    out = []
    first = True
    for i, j, r, cols, nnz in _tile_row_nnz(mat, fmt, rt, ct):
        first = first or j == 0
        margins = formats.block_margins(nnz, H, fmt)
        out.append(Tile(r, cols, margins, np.full(len(margins), H, dtype=np.int64), first and len(margins) > 0, i, j))
        first = first and len(margins) == 0
    return tuple(out)


def build(m: int, k: int, n: int, fmt: str, mapping: str, units: int, cols: int, lmm_kb: int, nchip: int,
          matrix: sp.csr_matrix | None = None, with_tiles: bool = True) -> Problem:
    """The tiles, blocks and margins of one product on one configuration (``with_tiles`` off: the tile
    counts only, enough for the constraints and :func:`no_schedule_reason`)."""
    H = int(C.mac_units(units, cols, mapping))
    e = C.VALUE_BYTES if fmt == "dense" else formats.SLOT_BYTES
    urb = C.a_unit_row_bytes(mapping, cols)
    lmm = int(lmm_kb) * 1024
    base = dict(m=m, k=k, n=n, fmt=fmt, mapping=mapping, H=H, entry_bytes=e, unit_row_bytes=urb,
                units=int(units), cols=int(cols), lmm_bytes=lmm, nchip=int(nchip))
    if H < 1:
        return Problem(**base, error=build_error(mapping, units, cols, lmm_kb, H))
    rt, ct = tiling(m, k, urb, lmm)
    if rt == 0:
        return Problem(**base, error=build_error(mapping, units, cols, lmm_kb, H))
    if not with_tiles:
        return Problem(**base, row_tiles=rt, col_tiles=ct)
    if fmt == "dense":
        tiles = _dense_tiles(m, k, rt, ct, H)
    else:
        if matrix is None:
            raise ValueError("a sparse format needs the matrix")
        tiles = _sparse_tiles(matrix, fmt, rt, ct, H)
    return Problem(**base, tiles=tiles, row_tiles=rt, col_tiles=ct)


@lru_cache(maxsize=4096)  # a batch asks for the same few lines (small units or LMMs) many times
def build_error(mapping: str, units: int, cols: int, lmm_kb: int, H: int) -> str:
    """Why :func:`build` fails on a configuration with ``H`` MAC units that it found no tiling for (or with
    no MAC unit): too few units for the mapping, or an LMM half below one A row-block or one B word."""
    if H < 1:
        need = {"dense": 1, "ivj": C.IVJ_LOAD_ONLY_UNITS + 1,
                "ivs": C.IVS_OFFSET_UNITS + int(C.ivs_offsets_per_set(cols))}[mapping]
        return (f"{mapping} needs at least {need + C.RESERVED_UNITS} units "
                f"({C.RESERVED_UNITS} reserved + {need}); units={units}")
    return f"lmm_kb={lmm_kb} cannot hold one A row-block and one B word per half"


# ---------------------------------------------------------------- A groups

def groups_of(p: Problem, t: Tile, agrp: int) -> list[range]:
    """The A groups of a tile: consecutive blocks, at most ``agrp`` each.

    CSR/dense: exactly ``agrp`` blocks per group (every block holds all rows).
    JDS: a group also closes when the next block's Margin would overflow the
    A half, so short tail blocks share one group.
    """
    if p.fmt != "jds":
        return [range(g, min(g + agrp, t.blocks)) for g in range(0, t.blocks, agrp)]
    out, start, used = [], 0, 0
    for b in range(t.blocks):
        m = int(t.margins[b])
        if b > start and (b - start >= agrp or used + m > p.slot_budget):
            out.append(range(start, b))
            start, used = b, 0
        used += m
    if t.blocks:
        out.append(range(start, t.blocks))
    return out


def group_counts(p: Problem, tiles: list[Tile], agrp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per tile and AGRP value ([tiles, values]): A groups, largest group's row-blocks per unit, AGRP as run.

    AGRP as run is AGRP itself for CSR/dense (the reservation of 4.4.2) and
    the most blocks one packed group holds for JDS (AGRP is then a cap):
    :func:`groups_of` for every AGRP value at once.
    """
    agrp = np.asarray(agrp, dtype=np.int64)
    if p.fmt != "jds":
        blocks = np.array([t.blocks for t in tiles], dtype=np.int64).reshape(-1, 1)
        rows = np.array([t.rows for t in tiles], dtype=np.int64).reshape(-1, 1)
        return -(-blocks // agrp), np.minimum(agrp, blocks) * rows, np.broadcast_to(agrp, (len(tiles), len(agrp)))
    out = np.zeros((3, len(tiles), len(agrp)), np.int64)
    for i, t in enumerate(tiles):
        out[:, i] = pack(t.margins.tolist(), t.blocks, p.slot_budget, agrp)
    return out[0], out[1], out[2]


def pack(margins, blocks, budget, agrp) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """JDS A groups of one tile (:func:`groups_of`) for arrays of configurations at once: (groups, largest
    group's row-blocks per unit, most blocks in a group). ``margins``: per block, the Margin (a number or an
    array over configurations, 0 past a configuration's ``blocks``); ``budget``: row-blocks of an A half."""
    agrp = np.asarray(agrp, dtype=np.int64)
    shape = np.broadcast_shapes(agrp.shape, np.shape(blocks))
    n, big, most, start, used = (np.zeros(shape, np.int64) for _ in range(5))
    for b, m in enumerate(margins):  # updated in place where a group closes (fewer numpy calls per block)
        live = b < blocks
        close = live & (b > start) & ((b - start >= agrp) | (used + m > budget))
        n += close
        np.maximum(big, used, out=big, where=close)
        np.maximum(most, b - start, out=most, where=close)
        start[close] = b
        used[close] = 0
        np.add(used, m, out=used, where=live)
    some = np.asarray(blocks) > 0
    return (n + some, np.where(some, np.maximum(big, used), big),
            np.where(some, np.maximum(most, blocks - start), most))


def pack_pairs(margins: np.ndarray, blocks: np.ndarray, budget: np.ndarray,
               agrp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pack` of (tile, configuration) pairs: ``margins`` [blocks, pairs] (0 past a pair's ``blocks``), the
    others one number per pair. The same greedy walk with fewer numpy calls per block: the pairs ordered by their
    blocks (most first), so that block b walks only the prefix of pairs that have it (views: no ``live`` mask),
    and without :func:`pack`'s ``b > start`` test, true at every b >= 1 (a group starts at an earlier block; at
    b = 0 nothing closes)."""
    order = (-blocks).argsort(kind="stable")
    nb, bud, ag = blocks[order], budget[order], agrp[order]
    m = margins.take(order, axis=1)
    P = len(nb)
    n, big, most, start, used = np.zeros((5, P), np.int64)
    ks = (-nb).searchsorted(-np.arange(len(m)), side="left").tolist()  # pairs with more than b blocks
    for b, k in enumerate(ks):
        if not k:
            break
        if k <= _PACK_TAIL:  # the few pairs with the most blocks: the rest of their walk in Python integers
            _pack_tail(m, nb, bud, ag, b, k, (n, big, most, start, used))
            break
        mb, u = m[b, :k], used[:k]
        if b:
            s = start[:k]
            d = b - s
            close = d >= ag[:k]
            close |= u + mb > bud[:k]
            n[:k] += close
            np.maximum(big[:k], u, out=big[:k], where=close)
            np.maximum(most[:k], d, out=most[:k], where=close)
            s[close] = b
            u[close] = 0
        u += mb
    some = nb > 0
    out = np.empty((3, P), np.int64)
    out[:, order] = (n + some, np.where(some, np.maximum(big, used), big),
                     np.where(some, np.maximum(most, nb - start), most))
    return out[0], out[1], out[2]


#: pack_pairs walks the last pairs (at most this many still have blocks) in Python integers: ~0.4 us per pair and
#: block instead of ~10 numpy calls per block (a random batch's longest Margins lists are a few pairs' own)
_PACK_TAIL = 16


def _pack_tail(m: np.ndarray, nb: np.ndarray, budget: np.ndarray, agrp: np.ndarray, b: int, k: int,
               state: tuple[np.ndarray, ...]) -> None:
    """:func:`pack_pairs`' walk of pairs 0 .. k - 1 from block ``b`` on, in Python integers (:func:`_pack_one`'s
    steps from the pairs' ``state``: groups, largest group, most blocks, start, used; updated in place)."""
    rows = [x[:k].tolist() for x in state]
    cols = m[b:, :k].T.tolist()
    for j, (blocks, bud, ag, col) in enumerate(zip(nb[:k].tolist(), budget[:k].tolist(), agrp[:k].tolist(), cols)):
        n, big, most, start, used = (r[j] for r in rows)
        for i, mm in enumerate(col[:blocks - b]):
            at = b + i
            if at > start and (at - start >= ag or used + mm > bud):
                n, big, most, start, used = n + 1, max(big, used), max(most, at - start), at, 0
            used += mm
        for r, v in zip(rows, (n, big, most, start, used)):
            r[j] = v
    for x, r in zip(state, rows):
        x[:k] = r


# ---------------------------------------------------------------- constraints

CONSTRAINTS = ("4.4.2", "4.4.3", "4.4.4", "4.4.5", "4.4.6", "4.4.7", "4.4.8", "4.4.9", "4.4.10")


def pad_of(acolumn, H):
    """(4.4.1) columns that pad Acolumn up to a multiple of H (scalars or arrays)."""
    return (-acolumn) % H


#: the names of a problem's limits that :func:`broken` and :func:`no_schedule_reasons` read (:func:`_limits`)
LIMIT_NAMES = ("arow", "acol", "n", "L", "H", "W", "N", "e", "simd", "jds_top")


def _limits(p: Problem) -> dict:
    """The names of the constraints for one problem (see :func:`broken`)."""
    jds_top = max((int(t.margins[0]) for t in p.tiles if t.blocks), default=0) if p.fmt == "jds" else -1
    return dict(arow=p.tile_rows, acol=p.tile_cols, n=p.n, L=p.lmm_bytes, H=p.H, W=p.cols, N=p.nchip,
                e=p.unit_row_bytes, simd=p.simd_limited, jds_top=jds_top)


def broken(lim: dict, agrp, bgrp, cgrp) -> dict[str, object]:
    """Whether (agrp, bgrp, cgrp) breaks each constraint (4.4.2)-(4.4.10), written as in the spec;
    scalars or arrays over configurations alike (``not (x <= y)`` as ``x > y``: the numbers are finite, and
    Python scalars stay Python bools, a few hundred ns each instead of a numpy call).

    ``lim`` names (from :func:`_limits`): Arow = Crow = tile rows, Acolumn =
    Brow = tile columns, Bcolumn = Ccolumn = n, LMMSIZE = L bytes, W = cols,
    N = nchip, e = unit row bytes (4.4.2: 8 IVJ, 4 dense, 64 IVS), simd =
    4.4.9 binds (sparse mappings), jds_top = the largest first-block Margin
    of a JDS tile (< 0: not JDS).
    """
    arow = crow = lim["arow"]
    acol = brow = lim["acol"]
    bcol = ccol = lim["n"]
    L, H, W, N, e, top = lim["L"], lim["H"], lim["W"], lim["N"], lim["e"], lim["jds_top"]
    pad = pad_of(acol, H)  # (4.4.1)
    return {
        # JDS with the Margin: every packed group fits iff every single block does
        "4.4.2": ((top >= 0) & (top * e > L / 2)) | ((top < 0) & (arow * agrp * e > L / 2)),
        "4.4.3": arow * agrp * 2 * H > arow * (acol + pad) * 2,
        "4.4.4": brow * bgrp * 4 > L / 2,
        "4.4.5": brow * bgrp * N > bcol * brow,  # Brow*BGRP <= Bcolumn*Brow/NCHIP
        "4.4.6": crow * cgrp * 4 > L,
        "4.4.7": ccol * cgrp * N > crow * ccol,  # Ccolumn*CGRP <= Crow*Ccolumn/NCHIP
        "4.4.8": bgrp != cgrp,
        "4.4.9": lim["simd"] & (bgrp > W * 2),  # printed "!=", resolved as the text says
        "4.4.10": bcol % (bgrp * N) != 0,  # printed "!= 0", resolved as the text says
    }


def violations(p: Problem, agrp: int, bgrp: int, cgrp: int) -> list[str]:
    """Constraints (4.4.2)-(4.4.10) that (agrp, bgrp, cgrp) breaks (:func:`broken`)."""
    flags = broken(_limits(p), agrp, bgrp, cgrp)
    return [c for c in CONSTRAINTS if flags[c]]


def _bgrp_cap(p: Problem) -> int:
    """Upper bound of BGRP from the constraints' own bounds (4.4.4-4.4.7, 4.4.9): :func:`bgrp_caps` of one
    problem in Python numbers."""
    return _cap(p.lmm_bytes, p.tile_rows, p.tile_cols, p.n, p.nchip, p.cols, p.simd_limited)


def _cap(L: int, rows: int, cols: int, n: int, nchip: int, W: int, simd: bool) -> int:
    """:func:`_bgrp_cap` of the numbers it reads."""
    hi = min(int((L / 2) // (cols * 4)), L // (rows * 4), n // nchip, rows // nchip)
    return min(hi, W * 2) if simd else hi


def screen(m: int, k: int, n: int, fmt: str, mapping: str, units: int, cols: int, lmm_kb: int,
           nchip: int) -> tuple[int, str | None]:
    """(H, why no schedule exists or None) of an m x k x n product on one configuration (Python integers) from
    its tile counts alone: :func:`build`'s error, else :func:`unschedulable` and the reason
    :func:`no_schedule_reason` gives it with the screen's limits (``jds_top`` -1) -- the numbers of
    ``build(..., with_tiles=False)`` without making the Problem (a one-point study screens every new point)."""
    H = int(C.mac_units(units, cols, mapping))
    urb = C.a_unit_row_bytes(mapping, cols)
    lmm = int(lmm_kb) * 1024
    rt, ct = tiling(m, k, urb, lmm) if H >= 1 else (0, 0)
    if rt == 0:
        return H, build_error(mapping, units, cols, lmm_kb, H)
    rows, tcols, simd = -(-m // rt), -(-k // ct), C.simd_bgrp_limited(mapping)
    if n % nchip != 0 or _cap(lmm, rows, tcols, n, nchip, cols, simd) < 1:
        return H, _reason_of(dict(arow=rows, acol=tcols, n=n, L=lmm, H=H, W=cols, N=nchip, e=urb, simd=simd,
                                  jds_top=-1))
    return H, None


def bgrp_caps(tile_rows, tile_cols, n: int, nchip, lmm_bytes, cols, simd_limited) -> np.ndarray:
    """:func:`_bgrp_cap` over arrays of configurations."""
    L = np.asarray(lmm_bytes, dtype=np.int64)
    # (L / 2) // (cols x 4) of _cap in integers: floor((L / 2) / d) == (L // 2) // d for integers L >= 0, d >= 1 (no
    # multiple of d lies in (L - 1) / 2 .. L / 2 when L is odd), float64-exact at these sizes
    # (L // 2) // (c x 4) == (L >> 3) // c and L // (r x 4) == (L >> 2) // r (floor of floors, c, r >= 1; both 0
    # for 0 as numpy's integer division by 0)
    hi = np.minimum(np.minimum((L >> 3) // tile_cols, (L >> 2) // tile_rows),
                    np.minimum(n // nchip, tile_rows // nchip))
    return np.where(simd_limited, np.minimum(hi, np.asarray(cols) * 2), hi)


def bgrp_caps_divisible(tile_rows: np.ndarray, tile_cols: np.ndarray, n, nchip: np.ndarray, lmm_bytes: np.ndarray,
                        cols: np.ndarray, simd_limited: np.ndarray) -> np.ndarray:
    """:func:`bgrp_caps` of the configurations whose ``nchip`` divides n (int64 arrays of one length; ``n`` one number
    or one per configuration), 0 elsewhere. Where ``nchip`` does not divide n no BGRP satisfies 4.4.10, so
    :func:`unschedulable` holds whatever the cap, and the cap is read nowhere else (the plans read live
    configurations only): on random points of the space ~7 in 8 configurations (nchip 1..64, n a power of two), whose
    four int64 floor divisions and five minima are skipped."""
    n_ = n if np.ndim(n) == 0 else np.asarray(n)
    at = nonzero_at(n_ % nchip == 0)
    out = np.zeros(len(nchip), np.int64)
    if len(at):
        out[at] = bgrp_caps(*(gather(x, at) for x in (tile_rows, tile_cols)), n_ if np.ndim(n_) == 0 else n_[at],
                            *(gather(x, at) for x in (nchip, lmm_bytes, cols, simd_limited)))
    return out


def candidates(p: Problem, lmm_opt: bool) -> tuple[np.ndarray, np.ndarray]:
    """Feasible (AGRP, BGRP) pairs (CGRP = BGRP by 4.4.8), most LMM-filling first.

    The ranges come from the constraints' own bounds, so the product of the
    two lists is the whole feasible set (checked against :func:`brute_force`).
    """
    a_max, b_list = candidate_ranges(p)
    a_vals = np.arange(1, max(a_max, 0) + 1)
    b_vals = np.array(b_list, dtype=np.int64)
    if not len(a_vals) or not len(b_vals):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if not lmm_opt:
        return np.array([1]), b_vals[-1:]
    return np.repeat(a_vals[::-1], len(b_vals)), np.tile(b_vals[::-1], len(a_vals))


def candidate_ranges(p: Problem) -> tuple[int, list[int]]:
    """(the largest AGRP, the feasible BGRPs in increasing order) of :func:`candidates`, in Python integers:
    AGRP from 4.4.3 and 4.4.2; BGRP the b up to the constraints' bound with ``n % (b x nchip) == 0`` (4.4.10),
    i.e. the divisors of ``n / nchip`` (none when ``nchip`` does not divide n)."""
    arow, acol = p.tile_rows, p.tile_cols
    L, H = p.lmm_bytes, p.H
    a_max = (acol + pad_of(acol, H)) // H  # 4.4.3
    if p.fmt != "jds" or "4.4.2" in violations(p, 1, 1, 1):
        a_max = min(a_max, int((L / 2) // (arow * p.unit_row_bytes)))  # 4.4.2
    b_hi = _bgrp_cap(p)
    if p.n % p.nchip != 0 or b_hi < 1:
        return a_max, []
    return a_max, [b for b in _divisors(p.n // p.nchip) if b <= b_hi]


@lru_cache(maxsize=1024)
def _divisors(q: int) -> tuple[int, ...]:
    """The divisors of ``q`` >= 1, increasing."""
    low = [d for d in range(1, math.isqrt(q) + 1) if q % d == 0]
    return tuple(low + [q // d for d in reversed(low) if d * d != q])


def no_schedule_reason(p: Problem, lim: dict | None = None) -> str:
    """One line naming the constraints that leave no (AGRP, BGRP, CGRP): :func:`no_schedule_reasons` of one
    problem in Python numbers (``lim``: its :func:`_limits`, or the screen's, whose ``jds_top`` is -1)."""
    if p.error:
        return p.error
    return _reason_of(_limits(p) if lim is None else lim)


def _reason_of(lim: dict) -> str:
    """:func:`no_schedule_reason` of a problem without a build error, from its limits ``lim``."""
    n, N = lim["n"], lim["N"]
    b_top = lim["W"] * 2 if lim["simd"] else min(max(n, 1), 4096)
    at = broken(lim, 1, b_top, b_top)  # 4.4.2, 4.4.3 at AGRP = 1 (they do not depend on BGRP), the others at b_top
    if n % N != 0:
        indivisible = True
    else:
        indivisible = any((n // N) % b != 0 for b in range(2, b_top + 1))
    flags = [indivisible if c == "4.4.10" else at[c] for c in CONSTRAINTS]
    return _reason_line(", ".join(c for c, bad in zip(CONSTRAINTS, flags) if bad), lim["arow"], lim["acol"], n, N,
                        lim["L"])


_REASON_HEAD = "no LMM schedule (AGRP, BGRP, CGRP) satisfies spec imax §5 constraints "


def _reason_line(broken_names: str, rows: int, cols: int, n: int, nchip: int, lmm_bytes: int) -> str:
    return f"{_REASON_HEAD}{broken_names} for a {rows}x{cols} tile, n={n}, nchip={nchip}, lmm_kb={lmm_bytes // 1024}"


def no_schedule_reasons(lim: dict[str, np.ndarray], shared: bool = False,
                        config: np.ndarray | None = None) -> np.ndarray:
    """:func:`no_schedule_reason` of configurations without a build error (``lim``: arrays of
    :func:`broken`'s names): the constraints AGRP = 1 breaks (4.4.2, 4.4.3) and those some BGRP = CGRP in
    1..b_top breaks. 4.4.4-4.4.7 and 4.4.9 bound a non-negative multiple of BGRP from above, so if any
    BGRP breaks one, ``b_top`` does; 4.4.8 holds for CGRP = BGRP; 4.4.10 (divisibility) is checked for
    every BGRP. Returns the lines as an object array; ``shared``: many configurations share their (nchip,
    lmm_kb) (several products of a network on the same points): each such tail is written once; ``config``:
    besides, a non-negative integer per line naming its point configuration, lines of one configuration
    having the same (nchip, lmm_kb) (the products of a network on one configuration): each configuration's tail
    is then written once from number-text tables, without sorting the lines' (nchip, lmm_kb) pairs."""
    N = np.asarray(lim["N"])
    n = np.broadcast_to(lim["n"], N.shape)
    b_top = np.where(lim["simd"], lim["W"] * 2, np.minimum(np.maximum(n, 1), 4096))  # np.clip(n, 1, 4096), cheaper
    flags = _reason_flags(lim, n, b_top)
    pattern = _broken_pattern(flags)
    # _reason_line, its head (up to "nchip=") written once per (pattern of broken constraints, tile, n)
    first, inv = distinct_rows_any((pattern, lim["arow"], lim["acol"], n))
    names = _PATTERN_NAMES
    heads = [f"{_REASON_HEAD}{names[code]} for a {r}x{c} tile, n={n_}, nchip=" for code, r, c, n_ in
             zip(pattern[first].tolist(), lim["arow"][first].tolist(), lim["acol"][first].tolist(), n[first].tolist())]
    L = lim["L"]
    # lmm_kb: L // 1024 as L >> 10 for int64 L (numpy's int64 shift is arithmetic: floor division by 2**10 for any
    # sign, the same values; an int64 floor division costs ~7x a shift)
    kb = L >> 10 if type(L) is np.ndarray and L.dtype == np.int64 else L // 1024
    if shared and config is not None and len(config):  # each configuration's tail once, by its code
        config = np.asarray(config, dtype=np.int64)
        used = np.zeros(int(config.max()) + 1, bool)
        used[config] = True
        of = np.zeros(len(used), np.int64)
        of[config] = np.arange(len(config))  # a line of each configuration (any: they share nchip and lmm_kb)
        at = of[used]
        tails = np.empty(len(used), dtype=object)
        tails[used] = _int_texts(N[at], ", lmm_kb=", SPACE_NCHIP + 1) + _int_texts(kb[at], "", SPACE_LMM_KB + 1)
        return np.array(heads, dtype=object)[inv] + tails[config]
    if shared:  # each (nchip, lmm_kb) tail written once, the lines joined by object additions (one C loop)
        tail_first, tail_inv = distinct_rows((N, kb))
        tails = [f"{N_}, lmm_kb={kb_}" for N_, kb_ in zip(N[tail_first].tolist(), kb[tail_first].tolist())]
        return np.array(heads, dtype=object)[inv] + np.array(tails, dtype=object)[tail_inv]
    # the head, "<nchip>, lmm_kb=" and "<lmm_kb>" taken from tables of texts, joined by object additions (one C
    # loop each: ~0.1 us a line; an f-string per line ~0.3 us): "<head><nchip>, lmm_kb=" written once per (head,
    # nchip) pair some line uses (a table over all pairs marks them, no sort), then one addition per line
    heads = np.array(heads, dtype=object)
    span = int(np.maximum.reduce(N)) + 1 if len(N) else 1
    if len(N) and int(np.minimum.reduce(N)) >= 0 and len(heads) * span <= _PAIR_TABLE_MAX:
        pair = inv * span + N
        used = np.zeros(len(heads) * span, bool)
        used[pair] = True
        at = nonzero_at(used)
        prefix = np.empty(len(used), dtype=object)
        prefix[at] = heads[at // span] + _int_texts(at % span, ", lmm_kb=", SPACE_NCHIP + 1)
        out = prefix[pair]
    else:
        out = heads[inv] + _int_texts(N, ", lmm_kb=", SPACE_NCHIP + 1)
    out += _int_texts(kb, "", SPACE_LMM_KB + 1)
    return out


#: the broken constraints' names of every pattern (bit i: :data:`CONSTRAINTS` [i] broken), joined as the reason
#: lines write them: one text per pattern, written once (not one generator per distinct pattern of each call)
_PATTERN_NAMES = tuple(", ".join(c for i, c in enumerate(CONSTRAINTS) if code >> i & 1)
                       for code in range(1 << len(CONSTRAINTS)))


def _broken_pattern(flags: list) -> np.ndarray:
    """Bit i set where constraint i is broken (``flags``: :func:`_reason_flags`, ``False`` for a constraint no
    configuration breaks), two calls a bit and no stack, in uint16 (9 constraints: a quarter of int64's bytes a pass;
    the same integers, widened once by :func:`distinct_rows`)."""
    pattern = np.asarray(flags[0]).astype(np.uint16)
    for i, flag in enumerate(flags[1:], 1):
        if flag is not False:  # 4.4.8 (CGRP = BGRP) never; 4.4.3 at AGRP = 1 without a build error neither
            pattern |= np.asarray(flag).astype(np.uint16) << np.uint16(i)
    return pattern


def _reason_flags(lim: dict[str, np.ndarray], n: np.ndarray, b_top: np.ndarray) -> list:
    """:func:`no_schedule_reasons`' flags, in :data:`CONSTRAINTS`' order: :func:`broken` at AGRP = 1 and BGRP =
    CGRP = ``b_top`` (4.4.2-4.4.9), then 4.4.10 for some BGRP in 1..b_top (:func:`_some_bgrp_indivisible`).
    Without a JDS Margin (``jds_top`` < 0 everywhere: every configuration of :func:`configurations`) the flags
    are ``broken``'s expressions with AGRP = 1 and CGRP = BGRP written in (the same integer and float
    operations on the same numbers, without the terms those values make constant)."""
    top = lim["jds_top"]
    if np.size(top) and np.max(top) >= 0:
        at = broken(lim, 1, b_top, b_top)
        flags = [at[c] for c in CONSTRAINTS[:-1]]
    else:
        arow = crow = lim["arow"]
        acol = brow = lim["acol"]
        bcol = ccol = n
        L, H, W, N, e = lim["L"], lim["H"], lim["W"], lim["N"], lim["e"]
        half = L / 2
        flags = [
            arow * e > half,  # 4.4.2 (no Margin: the rows of AGRP = 1 block)
            _agrp1_too_wide(arow, acol, H),  # 4.4.3
            brow * b_top * 4 > half,  # 4.4.4
            brow * b_top * N > bcol * brow,  # 4.4.5
            crow * b_top * 4 > L,  # 4.4.6
            ccol * b_top * N > crow * ccol,  # 4.4.7
            False,  # 4.4.8: CGRP = BGRP
            lim["simd"] & (b_top > W * 2),  # 4.4.9
        ]
    return flags + [_some_bgrp_indivisible(n, lim["N"], b_top)]


def _agrp1_too_wide(arow: np.ndarray, acol: np.ndarray, H: np.ndarray) -> np.ndarray | bool:
    """4.4.3 at AGRP = 1 without a Margin, ``arow 2 H > arow (acol + pad) 2`` (:func:`broken`'s expression with AGRP =
    1): False for every configuration when ``arow`` >= 0, ``acol`` >= 1 and ``H`` >= 1 (a tile of a configuration
    without a build error), since ``acol + pad`` = H ceil(acol / H) >= H; ``arow``, ``acol`` and ``H`` below 2**20
    keep both sides exact in int64. Then a constant (no pass: an int64 remainder and five products over the
    configurations), else the expression itself."""
    lo, hi = np.minimum.reduce, np.maximum.reduce  # (the ufuncs: no Python-level .min, .max)
    if (type(arow) is np.ndarray and type(acol) is np.ndarray and type(H) is np.ndarray and arow.dtype.kind == "i"
            and acol.dtype.kind == "i" and H.dtype.kind == "i" and arow.shape == acol.shape == H.shape
            and arow.ndim == 1 and len(arow) and int(lo(arow)) >= 0 and int(lo(acol)) >= 1 and int(lo(H)) >= 1
            and max(int(hi(arow)), int(hi(acol)), int(hi(H))) < 1 << 20):
        return False
    return arow * 2 * H > arow * (acol + pad_of(acol, H)) * 2


#: (head, nchip) pairs are tabled when there are at most this many
_PAIR_TABLE_MAX = 1 << 18


def _int_texts(values: np.ndarray, suffix: str, least: int = 0) -> np.ndarray:
    """``[f"{v}{suffix}" for v in values]`` as an object array: read from a table of the texts of 0 .. top
    (:func:`_int_text_table_of`; ``least``: the size a new table takes at least) when the values are small
    non-negative integers, else written one by one."""
    if len(values) and 0 <= int(np.minimum.reduce(values)) and (top := int(np.maximum.reduce(values))) < _INT_TEXTS_MAX:
        return _int_text_table_of(top, suffix, least)[values]
    return np.array([f"{v}{suffix}" for v in values.tolist()], dtype=object)


#: number texts are tabled up to this value (a table of 2**16 short strings is a few MB)
_INT_TEXTS_MAX = 1 << 16
#: the largest nchip and lmm_kb of ImaxModel's declared space: the reason lines' number-text tables cover them
SPACE_NCHIP, SPACE_LMM_KB = 64, 4096
#: suffix -> the largest table of :func:`_int_text_table` built for it so far (it serves every smaller number)
_INT_TABLES: dict[str, np.ndarray] = {}


def _int_text_table_of(top: int, suffix: str, least: int = 0) -> np.ndarray:
    """A table of the texts ``f"{v}{suffix}"`` of v = 0 .. at least ``top``: the suffix's table when it reaches
    ``top``, else a new one kept for the suffix: of ``least`` texts when that reaches ``top`` (the declared space's
    numbers: one table serves every point of it), else with headroom (the power of two at or above 1.5 x (top + 1),
    at least 64). A batch's largest number varies from call to call (lmm_kb up to 4,096: 4,090 in one call, 4,096
    in the next): one table serves them, not one per power of two met (~1,500 instructions a text to build)."""
    table = _INT_TABLES.get(suffix)
    if table is None or len(table) <= top:
        if suffix not in _INT_TABLES and len(_INT_TABLES) >= 8:
            _INT_TABLES.clear()
        size = least if top < least else max(64, 1 << (3 * (top + 1) // 2 - 1).bit_length())
        table = _INT_TABLES[suffix] = _int_text_table(size, suffix)
    return table


def _int_text_table(top: int, suffix: str) -> np.ndarray:
    """The texts ``f"{v}{suffix}"`` of v = 0 .. top - 1 (read-only: shared by every call)."""
    out = np.array([f"{v}{suffix}" for v in range(top)], dtype=object)
    out.flags.writeable = False
    return out


def gather(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` for a 1-D array ``a`` and integer indices ``idx`` that are all in range (the model's own indices):
    ``a.take(idx, mode="wrap")`` when ``a`` is contiguous -- the same elements (an index in range wraps to itself, a
    negative one counts from the end as with ``a[idx]``) without fancy indexing's bounds check per element (~11
    instead of ~16 instructions an element of a numeric array); a strided or broadcast ``a`` (which ``take`` would
    copy whole first) by ``a[idx]``."""
    return a.take(idx, mode="wrap") if a.ndim == 1 and a.flags.c_contiguous else a[idx]


def stack_rows(arrays, out: np.ndarray | None = None) -> np.ndarray:
    """``np.stack(arrays, out=out)`` (axis 0) of 1-D arrays of one length as one ``np.concatenate`` of them, reshaped
    (or written into ``out`` flattened when it is a C-contiguous array of their stack's shape, else into ``out`` as
    ``np.stack`` does, the arrays given a leading axis by ``a[None]``) -- the same values, dtype and casting
    (``np.stack`` is that concatenation of the arrays given a leading axis each, by Python-level indexing:
    ~2 k instructions an array); other inputs by ``np.stack`` itself."""
    n = None
    for a in arrays:
        if type(a) is not np.ndarray or a.ndim != 1 or (n is not None and len(a) != n):
            return np.stack(arrays, out=out)
        n = len(a)
    if n is None:
        return np.stack(arrays, out=out)
    if out is None:
        return np.concatenate(arrays).reshape(len(arrays), n)
    if type(out) is np.ndarray and out.shape == (len(arrays), n) and out.flags.c_contiguous:
        np.concatenate(arrays, out=out.reshape(-1))
        return out
    return np.concatenate([a[None] for a in arrays], out=out)  # (np.stack's own call; a[None] is expand_dims' view)


def nonzero_at(mask: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mask)``, of a 1-D array by its ``nonzero`` method (the same indices): ``np.flatnonzero``
    goes through three Python-level wrappers (~1 us a call, ~15 calls a batch)."""
    return mask.nonzero()[0] if type(mask) is np.ndarray and mask.ndim == 1 else np.flatnonzero(mask)


def distinct_rows(cols: tuple[np.ndarray, ...] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first index of each distinct row, row of each element) of the rows formed by non-negative integer
    columns ``cols`` (``np.unique(..., axis=0)``'s index and inverse): one int64 code per row (mixed radix,
    the first column most significant: the same order) when it fits, else ``np.unique`` over the rows.
    ``cols`` may be a 2-D int64 array whose rows are the columns (the radices then from one reduction)."""
    if type(cols) is np.ndarray and cols.ndim == 2 and cols.dtype == np.int64:
        radix = (np.maximum.reduce(cols, axis=1) + 1).tolist() if cols.shape[1] else [1] * len(cols)
        cols = list(cols)
    else:
        cols = [np.asarray(c, dtype=np.int64) for c in cols]
        radix = [int(np.maximum.reduce(c)) + 1 if len(c) else 1 for c in cols]  # (the ufunc: no Python-level .max)
    if math.prod(radix) < 1 << 62:
        return unique_index_inverse(_mixed_radix(cols, radix))
    _, first, inv = np.unique(np.stack(cols, axis=1), axis=0, return_index=True, return_inverse=True)
    return first, np.asarray(inv).reshape(-1)


def distinct_rows_any(cols: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(an index of each distinct row -- any of its elements, not necessarily the first --, the distinct row of each
    element) of the rows formed by integer columns ``cols``: :func:`distinct_rows`' inverse (the distinct rows in
    increasing lexicographic order) for callers that read the rows' values only. When the rows' codes with each
    column offset by its least value (mixed radix: the same order) span at most :data:`_TABLE_PER_ROW` per row, by a
    table over the codes (marked, the marks' ranks read back): no sort (~4x less time at 3,500 reason lines with ~60
    distinct heads); else :func:`distinct_rows`."""
    cols = [np.asarray(c, dtype=np.int64) for c in cols]
    n = len(cols[0]) if cols else 0
    if n == 0 or any(c.shape != (n,) for c in cols):
        return distinct_rows(cols)
    hi = [int(np.maximum.reduce(c)) for c in cols]  # (the ufuncs: no Python-level .min, .max)
    lo = [int(np.minimum.reduce(c)) for c in cols]
    radix = [top - least + 1 for top, least in zip(hi, lo)]
    top = math.prod(radix)
    if top > _TABLE_PER_ROW * n and min(lo) >= 0:  # wide columns first replaced by their ranks (the same order)
        cols, radix, lo = _ranked_wide(cols, radix, lo, n)
        top = math.prod(radix)
    if top > _TABLE_PER_ROW * n or min(lo) < 0:  # (distinct_rows' columns are non-negative: its answer otherwise)
        full = [x + 1 for x in hi]  # distinct_rows' own radices and codes, its maxima not found again
        return unique_index_inverse(_mixed_radix(cols, full)) if math.prod(full) < 1 << 62 else distinct_rows(cols)
    code = None
    for c, least, r in zip(cols, lo, radix):
        if r == 1:  # one value: no digit
            continue
        if code is None:
            code = c - least
        else:
            code *= r
            code += c
            code -= least
    if code is None:  # every row the same
        return np.zeros(1, np.intp), np.zeros(n, np.intp)
    used = np.zeros(top, bool)
    used[code] = True
    distinct = used.nonzero()[0]
    rank = np.empty(top, np.intp)
    rank[distinct] = np.arange(len(distinct))
    inv = gather(rank, code)
    first = np.empty(len(distinct), np.intp)
    first[inv] = np.arange(n)  # (where several elements write one entry, any of them: each is of that row)
    return first, inv


#: :func:`distinct_rows_any` tables codes spanning at most this many entries per row
_TABLE_PER_ROW = 16


def _ranked_wide(cols: list[np.ndarray], radix: list[int], lo: list[int],
                 n: int) -> tuple[list[np.ndarray], list[int], list[int]]:
    """:func:`distinct_rows_any`'s columns with the widest ones (largest span first, each spanning at most
    :data:`_TABLE_PER_ROW` entries per row) replaced by the rank of each value among the column's distinct values,
    until the rows' codes fit :func:`distinct_rows_any`'s table: a rank keeps the values' order (the rows' order
    too), and a column of few distinct values over a wide span (a tile's rows at n=1024) then takes few digits.
    Returns the columns, their radices and least values (0 for a ranked column)."""
    cols, radix, lo = list(cols), list(radix), list(lo)
    bound = _TABLE_PER_ROW * n
    for i in sorted(range(len(cols)), key=radix.__getitem__, reverse=True):
        if math.prod(radix) <= bound or radix[i] > bound:
            continue
        offset = cols[i] - lo[i]
        used = np.zeros(radix[i], bool)
        used[offset] = True
        distinct = used.nonzero()[0]
        rank = np.empty(radix[i], np.intp)
        rank[distinct] = np.arange(len(distinct))
        cols[i], radix[i], lo[i] = gather(rank, offset), len(distinct), 0
    return cols, radix, lo


def _mixed_radix(cols: list[np.ndarray], radix: list[int]) -> np.ndarray:
    """The int64 code of each row of the int64 columns ``cols`` in mixed radix ``radix`` (the first column most
    significant; the product of the radices below 2**62): ``code = code * r + c`` column after column, the same
    integer operations in one new array written in place (no temporary per column)."""
    if len(cols) == 1:
        return cols[0]
    code = cols[0] * radix[1]
    for c, r in zip(cols[1:-1], radix[2:]):
        code += c
        code *= r
    code += cols[-1]
    return code


def unique_index_inverse(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(code, return_index=True, return_inverse=True)[1:]`` of a 1-D integer array, computed as
    ``np.unique`` does it (a stable argsort, the first element of each run of equal values, the inverse from the
    runs' running count) without its generic wrapping (~50 us of ~135 at 4,096 elements: three per batch)."""
    return _unique_codes(code)[:2]


def _unique_codes(code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`unique_index_inverse` of ``code`` and its distinct values in increasing order (``code[first]``)."""
    n = len(code)
    order, ordered = _ordered(code)
    if n == 0:
        return order, np.empty(0, np.intp), ordered
    new = np.empty(n, bool)  # True where a run of equal values starts
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inv = np.empty(n, np.intp)
    if np.logical_and.reduce(new):  # every value distinct (random points' configurations): the runs' count is 0..n-1
        inv[order] = np.arange(n)
        return order, inv, ordered
    inv[order] = new.cumsum() - 1
    return order[new], inv, ordered[new]


def distinct_columns(block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, inv) of :func:`distinct_rows` of a 2-D int64 ``block`` whose rows are the columns, and the distinct
    rows' columns ``block.take(first, axis=1)`` (a new C-contiguous [columns, distinct] array). When every column is
    non-negative, below 2**b_j, and the b_j sum below 63, each row's code is its columns' bits side by side (the first
    column most significant: the order of the mixed-radix codes, so the same first and inv), and the distinct rows'
    columns are read back from their sorted codes by a shift and a mask per column (~14 numpy calls, against a take
    of every column at ~13 instructions an element); else distinct_rows and the take."""
    packed = _packed_codes(block)
    if packed is None:
        first, inv = distinct_rows(block)
        return first, inv, block.take(first, axis=1)
    code, bits = packed
    first, inv, distinct = _unique_codes(code)
    return first, inv, _unpacked(distinct, bits)


def distinct_columns_joined(block: np.ndarray, extra: np.ndarray, zeroed: int) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """:func:`distinct_columns` of ``block`` joined by its columns ``extra`` with their first ``zeroed`` rows set to 0
    (an SpMM batch's configurations and its dense references: format and mapping codes 0), without the joined
    block: the extra columns' codes are their columns' codes with the top bits masked off (the joined block's
    column maxima are the block's: zeros raise none), one gather of codes instead of a gather of every row and a
    copy of the whole block."""
    packed = _packed_codes(block)
    if packed is None or not len(extra):
        every = np.concatenate((block, block[:, extra]), axis=1)
        every[:zeroed, block.shape[1]:] = 0
        return distinct_columns(every)
    code, bits = packed
    ref = code[extra]
    ref &= (1 << sum(bits[zeroed:])) - 1
    first, inv, distinct = _unique_codes(np.concatenate((code, ref)))
    return first, inv, _unpacked(distinct, bits)


def _packed_codes(block: np.ndarray) -> tuple[np.ndarray, list[int]] | None:
    """(each row's columns' bits side by side, the first column most significant; each column's bit count) of a 2-D
    int64 block whose rows are the columns, or None when a value is negative or the bits do not fit 62."""
    rows, n = block.shape
    if not (rows and n and block.dtype == np.int64 and int(np.minimum.reduce(block, axis=None)) >= 0):
        return None
    bits = [int(t).bit_length() for t in np.maximum.reduce(block, axis=1).tolist()]
    if sum(bits) >= 63:
        return None
    code = block[0].copy()
    for j in range(1, rows):
        code <<= bits[j]
        code |= block[j]
    return code, bits


def _unpacked(codes: np.ndarray, bits: list[int]) -> np.ndarray:
    """The columns [len(bits), codes] (C-contiguous int64) of :func:`_packed_codes`' codes: a shift and a mask each."""
    out = np.empty((len(bits), len(codes)), np.int64)
    shift = 0
    for j in range(len(bits) - 1, -1, -1):
        np.right_shift(codes, shift, out=out[j])
        out[j] &= (1 << bits[j]) - 1
        shift += bits[j]
    return out


def _ordered(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``np.argsort(code, kind="stable")``, ``code`` in that order) of a 1-D integer array. Below
    :data:`_RADIX_MIN` elements of non-negative int64 codes with s spare low bits (s bits count the indices): each
    code and its index as one int64 ``code << s | index`` -- distinct numbers whose increasing order is the stable
    order of the codes -- sorted by value (``ndarray.sort``: numpy's SIMD sort of int64, ~0.33 M instructions at
    4,363 elements against ~0.77 M for the stable argsort's merge sort), the indices and codes read back from the
    bits (no gather of the codes). Else :func:`_stable_argsort` and a gather."""
    n = len(code)
    if 1 < n < _RADIX_MIN and type(code) is np.ndarray and code.dtype == np.int64 and code.ndim == 1:
        s = (n - 1).bit_length()
        if int(np.minimum.reduce(code)) >= 0 and int(np.maximum.reduce(code)) < 1 << (63 - s):
            key = code << s
            key |= np.arange(n)
            key.sort()
            return key & ((1 << s) - 1), key >> s
    order = _stable_argsort(code)
    return order, code[order]


#: from this many elements on, :func:`_stable_argsort` sorts non-negative codes by 16-bit digits
_RADIX_MIN = 1 << 14


def _stable_argsort(code: np.ndarray) -> np.ndarray:
    """``np.argsort(code, kind="stable")`` of a 1-D integer array. Long arrays of non-negative codes (a network's
    (product, configuration) pairs: ~40k) by 16-bit digits, least significant first: numpy's stable sort of uint16
    keys is a radix sort, and a stable sort by each digit in turn is the stable sort by the whole code (the same
    permutation; ~2-5x faster than the merge sort at 40k elements, no faster at a few thousand)."""
    if len(code) < _RADIX_MIN or code.dtype.kind not in "iu" or int(np.minimum.reduce(code)) < 0:
        return code.argsort(kind="stable")
    bits = int(code.max()).bit_length()
    order = np.argsort((code & 0xFFFF).astype(np.uint16), kind="stable")
    for shift in range(16, bits, 16):
        order = order[np.argsort(((code[order] >> shift) & 0xFFFF).astype(np.uint16), kind="stable")]
    return order


def _some_bgrp_indivisible(n: int, nchip: np.ndarray, b_top: np.ndarray) -> np.ndarray:
    """Whether ``n % (b x nchip) != 0`` for some b in 1..b_top (4.4.10): b = 1 when nchip does not divide
    n, else the smallest non-divisor of n / nchip (a small number) when it is at most b_top. The search for
    it runs on the configurations whose nchip divides n only (few of random points: no pass over all per b)."""
    out = n % nchip != 0
    if np.ndim(out) != 1:
        return _some_bgrp_indivisible_all(n, nchip, b_top)
    at = nonzero_at(~out)
    if len(at):
        pick = lambda x: x if np.ndim(x) == 0 else np.broadcast_to(x, out.shape)[at]  # noqa: E731  (a number as it is)
        out[at] = _some_bgrp_indivisible_all(pick(n) // pick(nchip), 1, pick(b_top))
    return out


def _some_bgrp_indivisible_all(n: int, nchip: np.ndarray, b_top: np.ndarray) -> np.ndarray:
    """:func:`_some_bgrp_indivisible` by one pass over every configuration per b."""
    out = n % nchip != 0
    q = n // nchip
    b = 2
    while True:
        open_ = ~out & (b <= b_top)
        if not open_.any():
            return out
        out = out | (open_ & (q % b != 0))
        b += 1


def configurations(m: int, k: int, n: int, mapping: np.ndarray, units: np.ndarray, cols: np.ndarray,
                   lmm_kb: np.ndarray, nchip: np.ndarray, mapping_codes: np.ndarray | None = None,
                   pair_cfg: np.ndarray | None = None, caps_where_divisible: bool = False) -> dict[str, np.ndarray]:
    """:func:`build`'s scalar numbers for arrays of configurations (``mapping`` holds names), no tiles:
    ``error`` where build fails, :func:`broken`'s names (``jds_top`` -1) and the BGRP bound ``b_hi``.
    ``mapping_codes``: each configuration's index in ``costs.MAPPINGS`` when the caller has it (the mappings found
    by integer compares instead of string compares, or read from ``costs.mapping_table``; ``mapping`` is then not
    read). ``pair_cfg``: the rows are (product, configuration) pairs, ``m``, ``k``, ``n`` given per pair and
    ``mapping`` .. ``mapping_codes`` per configuration, pair i being configuration ``pair_cfg[i]``: what depends
    on the configuration alone (H, A unit-row bytes, the SIMD flag, the tiling bounds) is computed once per
    configuration and gathered per pair. ``caps_where_divisible``: ``b_hi`` only where ``nchip`` divides n, 0
    elsewhere (:func:`bgrp_caps_divisible`: what :func:`unschedulable` and the plans read of it is the same)."""
    units, cols, nchip = (np.asarray(x, dtype=np.int64) for x in (units, cols, nchip))
    H, urb, simd = _mapping_numbers(mapping, units, cols, mapping_codes)
    lmm = np.asarray(lmm_kb, dtype=np.int64) * 1024
    rows_max, cols_max, ok = tiling_bounds(urb, lmm)
    if pair_cfg is not None:
        H, urb, simd, lmm, rows_max, cols_max, ok, units, cols, nchip = (
            a[pair_cfg] for a in (H, urb, simd, lmm, rows_max, cols_max, ok, units, cols, nchip))
    rt, ct = tilings_of_bounds(m, k, rows_max, cols_max, ok)
    tile_rows, tile_cols = ceil_div(m, np.maximum(rt, 1)), ceil_div(k, np.maximum(ct, 1))
    return dict(arow=tile_rows, acol=tile_cols, n=n, L=lmm, H=H, W=cols, N=nchip, e=urb, simd=simd,
                jds_top=_minus_ones(len(units)), error=(H < 1) | (rt == 0), rt=rt, ct=ct, units=units,
                b_hi=(bgrp_caps_divisible if caps_where_divisible else bgrp_caps)(tile_rows, tile_cols, n, nchip, lmm,
                                                                                   cols, simd))


#: a read-only int64 row of -1s that :func:`_minus_ones` hands out views of (grown to a power of two)
_MINUS_ONES = np.full(0, -1, np.int64)
_MINUS_ONES.flags.writeable = False


def _minus_ones(n: int) -> np.ndarray:
    """``np.full(n, -1)`` read-only: a view of one shared buffer (:func:`configurations`' ``jds_top``, which every
    reader only reads: no fill of a new row a call)."""
    global _MINUS_ONES
    if len(_MINUS_ONES) < n:
        _MINUS_ONES = np.full(1 << (n - 1).bit_length(), -1, np.int64)
        _MINUS_ONES.flags.writeable = False
    return _MINUS_ONES[:n]


def _mapping_numbers(mapping: np.ndarray, units: np.ndarray, cols: np.ndarray,
                     mapping_codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(H, A unit-row bytes, whether 4.4.9 binds) of configurations (int64 ``units``, ``cols``): gathered from
    ``costs.mapping_table`` by the mapping codes when they are given and the units and columns are small
    non-negative numbers, else computed per mapping over the configurations on it (:func:`_mapping_numbers_by_mask`,
    the same formulas)."""
    if mapping_codes is not None and len(units):
        codes = np.asarray(mapping_codes, dtype=np.int64)
        lo, hi = np.minimum.reduce, np.maximum.reduce  # (the ufuncs: no Python-level .min, .max)
        u_lo, u_hi, c_lo, c_hi = int(lo(units)), int(hi(units)), int(lo(cols)), int(hi(cols))
        if min(u_lo, c_lo, int(lo(codes))) >= 0 and int(hi(codes)) < len(C.MAPPINGS):
            # > the largest, powers of two, at least the declared space's (one table for every batch of it)
            u_top, c_top = max(_UNITS_TOP, 1 << u_hi.bit_length()), max(_COLS_TOP, 1 << c_hi.bit_length())
            if len(C.MAPPINGS) * u_top * c_top <= C.MAPPING_TABLE_MAX:
                H, urb, simd = C.mapping_table(u_top, c_top)
                # the unit-row bytes do not depend on the units, the flag on the mapping only: read from the
                # table's units-0 plane and its first entry of each mapping (small tables, no cache misses)
                code_cols = codes * c_top + cols
                urb_cols, simd_code = urb.reshape(-1, u_top, c_top)[:, 0, :].ravel(), simd[::u_top * c_top]
                return gather(H, (codes * u_top + units) * c_top + cols), gather(urb_cols, code_cols), simd_code[codes]
    return _mapping_numbers_by_mask(mapping, units, cols, mapping_codes)


#: the least units and columns bounds of ``costs.mapping_table`` (the space's units <= 1024, cols <= 8: one table,
#: whatever a batch's largest values)
_UNITS_TOP, _COLS_TOP = 2048, 16


def _mapping_numbers_by_mask(mapping: np.ndarray, units: np.ndarray, cols: np.ndarray,
                             mapping_codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_mapping_numbers` by the formulas over the configurations of each mapping (found by name, or by
    code when ``mapping_codes`` is given)."""
    H, urb = np.zeros(len(units), np.int64), np.ones(len(units), np.int64)
    simd = np.zeros(len(units), bool)
    for i, name in enumerate(C.MAPPINGS):
        at = mapping == name if mapping_codes is None else mapping_codes == i
        if not at.any():
            continue
        H[at] = C.mac_units(units[at], cols[at], name)
        urb[at] = C.a_unit_row_bytes(name, cols[at])
        simd[at] = C.simd_bgrp_limited(name)
    return H, urb, simd


def unschedulable(cfg: dict[str, np.ndarray]) -> np.ndarray:
    """Configurations (:func:`configurations`) for which :func:`candidates` is surely empty, from the tile
    counts alone (no tiles, no matrix): too few units or LMM for one row-block (``build``'s errors), no
    BGRP with ``n % (BGRP x nchip) == 0`` (4.4.10: none when ``nchip`` does not divide ``n``) or a BGRP
    bound below 1 (4.4.4-4.4.7, 4.4.9). The others may still have none."""
    return cfg["error"] | (cfg["n"] % cfg["N"] != 0) | (cfg["b_hi"] < 1)


def unschedulable_divisible_caps(cfg: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`unschedulable` of configurations built with ``caps_where_divisible`` (:func:`configurations`): their
    ``b_hi`` is 0 where ``nchip`` does not divide n, so ``b_hi < 1`` holds there and the remainder test adds
    nothing (one int64 remainder over the configurations fewer)."""
    return cfg["error"] | (cfg["b_hi"] < 1)


# ---------------------------------------------------------------- features and time

FEATURES = ("starts", "a_groups", "pauses", "a_bytes", "b_bytes", "c_load_bytes", "c_drain_bytes",
            "exec_cycles", "conf_words", "regv_words", "range_words", "load_desc_words",
            "drain_desc_words", "a_desc_words", "issued_macs", "lmm_exec_bytes", "b_groups", "a_group_slots",
            "a_group_blocks")


def _tile_order(p: Problem) -> list[tuple[Tile, bool, bool]]:
    """Non-empty tiles in run order with (B slab range new, last tile of its row range).

    With one B group the B slab of a tile equals the previous tile's when
    both use the same column range, and the C group stays in the last unit
    across all column tiles of a row range (drained at the row range's end).
    """
    run = [t for t in p.tiles if t.blocks]
    out = []
    for i, t in enumerate(run):
        b_new = i == 0 or run[i - 1].col_tile != t.col_tile
        last_of_rows = i == len(run) - 1 or run[i + 1].row_tile != t.row_tile
        out.append((t, b_new, last_of_rows))
    return out


def _tile_columns(p: Problem) -> tuple[list[Tile], dict[str, np.ndarray]]:
    """The tiles of :func:`_tile_order` and their numbers as [tiles, 1] columns."""
    order = _tile_order(p)
    tiles = [t for t, _, _ in order]
    cols = {
        "rows": [t.rows for t in tiles], "cols": [t.cols for t in tiles], "blocks": [t.blocks for t in tiles],
        "stored": [int(t.margins.sum()) for t in tiles], "slots": [int((t.margins * t.widths).sum()) for t in tiles],
        "top": [int(t.margins.max()) for t in tiles], "first_k": [t.first_k for t in tiles],
        "b_new": [b for _, b, _ in order], "last": [last for _, _, last in order],
    }
    return tiles, {k: np.array(v, dtype=np.int64).reshape(-1, 1) for k, v in cols.items()}


def _add_rows(f: dict[str, np.ndarray], key: str, rows: np.ndarray) -> None:
    """``f[key] +=`` the sum of the rows of ``rows`` ([tiles, candidates]). Every count is an integer far
    below 2**53, exact in float64 in any order, so one sum over the tiles has the bits of adding them
    tile after tile."""
    f[key] = f[key] + np.add.reduce(rows, axis=0)


def _tile_blocks(n_tiles: int, n_cand: int, budget: int = 1 << 18):
    """Slices of the tiles, so that tiles x candidates stay below ``budget`` per slice."""
    step = max(1, budget // max(1, n_cand))
    return [slice(lo, lo + step) for lo in range(0, n_tiles, step)]


@dataclass(frozen=True)
class Chain:
    """The numbers of a problem the counts use besides its tiles: scalars for one problem, or arrays over
    candidates of many (``plans``)."""

    n: object  # B columns
    nchip: object
    cols: object  # W
    units: object
    fill: object  # pipeline fill of a block pass [cycles]
    entry_bytes: object  # bytes sent per stored slot
    a_arrays: object  # DMA transfers per A group
    perm: object  # JDS: the permutation is sent (bool)

    @classmethod
    def of(cls, p: Problem) -> Chain:
        return cls(p.n, p.nchip, p.cols, p.units, p.fill, p.entry_bytes, p.a_arrays, p.perm)


def _exec_counts(ch: Chain, t: dict[str, np.ndarray], GB: np.ndarray, BG: np.ndarray,
                 f: dict[str, np.ndarray]) -> None:
    """EXEC of every block pass of tiles ``t`` (columns), for each B group (the same in both orders)."""
    W = ch.cols
    iters = -(-BG // (W * C.SIMD))  # LOOP0 iterations over the B columns of a stored row
    rows_stored, slots = t["stored"], t["slots"]
    _add_rows(f, "exec_cycles", GB * (rows_stored * iters * W + t["blocks"] * ch.fill))
    _add_rows(f, "issued_macs", GB * slots * BG)
    _add_rows(f, "lmm_exec_bytes", GB * (slots * (ch.entry_bytes + BG * C.VALUE_BYTES)
                                         + rows_stored * 2 * BG * C.VALUE_BYTES))


def _bc_counts(t: dict[str, np.ndarray], GB, BG, multi, c_groups, f: dict[str, np.ndarray]) -> None:
    """B slab loads, C drains and C partial-sum loads of tiles ``t`` (``c_groups`` C ranges each visits).

    Several B groups: every change of B group changes the B and C ranges.
    One B group: both stay (B across tiles of the same column range, C across
    the column tiles of the row range).
    """
    b_loads = np.where(multi, c_groups, t["b_new"])
    drains = np.where(multi, c_groups, t["last"])
    partial = np.where(multi, c_groups - np.where(t["first_k"] > 0, GB, 0), 0)
    _add_rows(f, "b_bytes", b_loads * t["cols"] * BG * C.VALUE_BYTES)
    _add_rows(f, "c_drain_bytes", drains * t["rows"] * BG * C.VALUE_BYTES)
    _add_rows(f, "c_load_bytes", partial * t["rows"] * BG * C.VALUE_BYTES)
    _add_rows(f, "load_desc_words", (b_loads + partial) * C.DMA_DESC_WORDS)
    _add_rows(f, "drain_desc_words", drains * C.DMA_DESC_WORDS)


def features(p: Problem, agrp: np.ndarray, bgrp: np.ndarray) -> dict[str, np.ndarray]:
    """Counts of one chip's run for each candidate (closed form of the loop nest).

    Bytes and PIO words are per chip except ``a_bytes``/``a_desc_words``,
    which one broadcast transfer serves for all chips. Tiles add up one
    after another (numpy over tiles x candidates).
    """
    AG = np.asarray(agrp, dtype=np.int64)
    tiles, tc = _tile_columns(p)
    f = {k: np.zeros(AG.shape, dtype=np.float64) for k in FEATURES}
    for part in _tile_blocks(len(tiles), len(AG)):
        tile_sums(f, Chain.of(p), {k: v[part] for k, v in tc.items()}, *group_counts(p, tiles[part], AG), bgrp)
    return finish(f, Chain.of(p), tc, bgrp, True)


def tile_sums(f: dict[str, np.ndarray], ch: Chain, t: dict[str, np.ndarray], GA, big, most, bgrp) -> None:
    """Add the counts of tiles ``t`` (columns [tiles, 1 or candidates]) with A groups ``GA`` ([tiles,
    candidates], their largest ``big`` and ``most``) to ``f`` (the optimised order)."""
    BG = np.asarray(bgrp, dtype=np.int64)
    GB = ch.n // (BG * ch.nchip)
    if len(GA):
        f["a_group_slots"] = np.maximum(f["a_group_slots"], big.max(axis=0))
        f["a_group_blocks"] = np.maximum(f["a_group_blocks"], most.max(axis=0))
    starts = GA * GB
    _add_rows(f, "starts", starts)
    _add_rows(f, "a_groups", GA)
    _add_rows(f, "pauses", GB * (t["blocks"] - GA))
    _bc_counts(t, GB, BG, GB > 1, starts, f)
    runs = t["blocks"] > 0  # every tile of a walk runs; tiles that pad a batch of tilings do not
    _add_rows(f, "a_desc_words", (GA * ch.a_arrays + np.where(ch.perm, runs, 0)) * C.DMA_DESC_WORDS)
    _exec_counts(ch, t, GB, BG, f)


def finish(f: dict[str, np.ndarray], ch: Chain, tc: dict[str, np.ndarray], bgrp, lmm_opt: bool) -> dict:
    """The counts that follow from the tile sums of ``f``: A bytes (optimised order), B groups, CONF,
    REGV (optimised: full at the first start of each A group, later starts of the group change only the
    B group; unoptimised: full every start) and RANGE words."""
    if lmm_opt:
        a_bytes = tc["slots"] * ch.entry_bytes + tc["rows"] * np.where(ch.perm, C.INDEX_BYTES, 0)
        f["a_bytes"] += np.cumsum(np.concatenate((np.zeros((1,) + a_bytes.shape[1:]), a_bytes.astype(np.float64))),
                                  axis=0)[-1]
    f["b_groups"] += ch.n // (np.asarray(bgrp, dtype=np.int64) * ch.nchip)
    f["conf_words"] += np.asarray(C.conf_words(ch.units, ch.cols), dtype=np.float64)
    regv = np.asarray(C.regv_words(ch.units, ch.cols), dtype=np.float64)
    f["regv_words"] = (f["a_groups"] * regv + (f["starts"] - f["a_groups"]) * C.B_GROUP_WORDS
                       + f["pauses"] * C.PAUSE_WORDS) if lmm_opt else f["starts"] * regv
    f["range_words"] = f["starts"] * np.asarray(C.range_words(ch.units, ch.cols), dtype=np.float64)
    return f


def features_swapped_a(p: Problem, bgrp: np.ndarray) -> dict[str, np.ndarray]:
    """Counts of the unoptimised order (one block per start, A swapped, B slab and C group kept)."""
    tiles, tc = _tile_columns(p)
    f = {k: np.zeros(np.shape(bgrp), dtype=np.float64) for k in FEATURES}
    for part in _tile_blocks(len(tiles), len(f["starts"])):
        tile_sums_swapped_a(f, Chain.of(p), {k: v[part] for k, v in tc.items()}, bgrp)
    return finish(f, Chain.of(p), tc, bgrp, False)


def tile_sums_swapped_a(f: dict[str, np.ndarray], ch: Chain, t: dict[str, np.ndarray], bgrp) -> None:
    """:func:`tile_sums` of the unoptimised order."""
    BG = np.asarray(bgrp, dtype=np.int64)
    GB = ch.n // (BG * ch.nchip)
    sends = np.where(t["blocks"] > 1, GB, np.ones_like(GB))  # a single block stays in LMM
    if len(t["top"]):
        f["a_group_slots"] = np.maximum(f["a_group_slots"], t["top"].max(axis=0))
        f["a_group_blocks"] = np.maximum(f["a_group_blocks"], 1)
    runs = t["blocks"] > 0  # every tile of a walk runs; tiles that pad a batch of tilings do not
    perm = np.where(ch.perm, runs, 0)
    _add_rows(f, "starts", GB * t["blocks"])
    _add_rows(f, "a_groups", GB * t["blocks"])
    _add_rows(f, "a_bytes", sends * t["slots"] * ch.entry_bytes + t["rows"] * C.INDEX_BYTES * perm)
    _add_rows(f, "a_desc_words", (sends * t["blocks"] * ch.a_arrays + perm) * C.DMA_DESC_WORDS)
    _bc_counts(t, GB, BG, GB > 1, GB * runs, f)
    _exec_counts(ch, t, GB, BG, f)


def point_features(p: Problem, agrp: list[int], bgrp: list[int], lmm_opt: bool) -> dict[str, np.ndarray]:
    """:func:`features` (``lmm_opt``) or :func:`features_swapped_a` of one problem in Python integers: the
    tiles' numbers summed once (per AGRP value), then each candidate's counts from those sums, one float64
    row per count. Every count is an integer far below 2**53 (exact in float64, as :func:`_add_rows` says), and
    a sum over tiles of (a candidate's factor x a tile's number) is that factor x the tile sum, exactly; the
    float steps (REGV, RANGE words) are the same IEEE operations in the same order. A one-point study meets a
    new configuration on most feasible trials: this costs ~10-20 numpy calls instead of ~250 (tested equal)."""
    tiles = _tile_order(p)
    fill, entry, arrays, perm = p.fill, p.entry_bytes, p.a_arrays, int(p.perm)
    W, n, nchip, VB, desc = p.cols, p.n, p.nchip, C.VALUE_BYTES, C.DMA_DESC_WORDS
    seen: dict[tuple[int, int], tuple[int, int, int]] = {}  # (stored, slots, top) of shared margins/widths
    rows_ = cols_ = blocks_ = stored_ = slots_ = top_ = fk_ = fk_rows = 0
    b_new_ = b_new_cols = last_ = last_rows = multi_slots = multi_blocks = 0
    margin_lists = []
    jds_groups = lmm_opt and p.fmt == "jds"
    for t, b_new, last in tiles:
        key = (id(t.margins), id(t.widths))
        if key not in seen:
            ms, ws = t.margins.tolist(), t.widths.tolist()
            seen[key] = (sum(ms), sum(map(operator.mul, ms, ws)), max(ms))
        stored, slots, top = seen[key]
        r, c, nb = t.rows, t.cols, t.blocks
        rows_ += r
        cols_ += c
        blocks_ += nb
        stored_ += stored
        slots_ += slots
        top_ = max(top_, top)
        if t.first_k:
            fk_ += 1
            fk_rows += r
        if b_new:
            b_new_ += 1
            b_new_cols += c
        if last:
            last_ += 1
            last_rows += r
        if nb > 1:
            multi_slots += slots
            multi_blocks += nb
        if jds_groups:
            margin_lists.append(t.margins.tolist())
    T = dict(tiles=len(tiles), rows=rows_, cols=cols_, blocks=blocks_, stored=stored_, slots=slots_, top=top_,
             fk=fk_, fk_rows=fk_rows, b_new=b_new_, b_new_cols=b_new_cols, last=last_, last_rows=last_rows,
             multi_slots=multi_slots, multi_blocks=multi_blocks)
    groups: dict[int, tuple[int, int, int, int, int]] = {}  # AGRP -> (sum GA, sum GA x cols, .. x rows, big, most)
    conf = float(C.conf_words(p.units, W))
    regv = float(C.regv_words(p.units, W))
    rng = float(C.range_words(p.units, W))
    a_bytes_opt = float(T["slots"] * entry + T["rows"] * (C.INDEX_BYTES if perm else 0))
    rows_out = []
    for a, b in zip(agrp, bgrp):
        GB = n // (b * nchip)
        multi = GB > 1
        iters = -(-b // (W * C.SIMD))
        if lmm_opt:
            if a not in groups:
                groups[a] = _group_sums(p, tiles, margin_lists, a)
            GA, GA_cols, GA_rows, big, most = groups[a]
            starts, a_groups, pauses = GB * GA, GA, GB * (T["blocks"] - GA)
            a_bytes = 0
            a_desc = (GA * arrays + perm * T["tiles"]) * desc
            c_groups, c_cols, c_rows = GA * GB, GA_cols * GB, GA_rows * GB  # sum over tiles of GA x GB (x cols, rows)
            slots_max, blocks_max = (big, most) if tiles else (0, 0)
        else:
            starts = a_groups = GB * T["blocks"]
            pauses = 0
            multi_slots, multi_blocks = T["multi_slots"], T["multi_blocks"]  # tiles of several blocks: A re-sent
            a_bytes = ((GB * multi_slots + (T["slots"] - multi_slots)) * entry + T["rows"] * C.INDEX_BYTES * perm)
            a_desc = ((GB * multi_blocks + (T["blocks"] - multi_blocks)) * arrays + perm * T["tiles"]) * desc
            c_groups, c_cols, c_rows = GB * T["tiles"], GB * T["cols"], GB * T["rows"]
            slots_max, blocks_max = (T["top"], 1) if tiles else (0, 0)
        if multi:  # _bc_counts: b loads and drains = C groups, partial sums = C groups - GB on first column tiles
            b_bytes = c_cols * b * VB
            drain_bytes = c_rows * b * VB
            load_bytes = (c_rows - GB * T["fk_rows"]) * b * VB
            load_desc = (2 * c_groups - GB * T["fk"]) * desc
            drain_desc = c_groups * desc
        else:
            b_bytes = T["b_new_cols"] * b * VB
            drain_bytes = T["last_rows"] * b * VB
            load_bytes = 0
            load_desc = T["b_new"] * desc
            drain_desc = T["last"] * desc
        exec_cycles = GB * (T["stored"] * iters * W + T["blocks"] * fill)
        issued = GB * T["slots"] * b
        lmm_exec = GB * (T["slots"] * (entry + b * VB) + T["stored"] * 2 * b * VB)
        f_starts, f_ag, f_pauses = float(starts), float(a_groups), float(pauses)
        regv_words = (f_ag * regv + (f_starts - f_ag) * C.B_GROUP_WORDS + f_pauses * C.PAUSE_WORDS) if lmm_opt \
            else f_starts * regv
        rows_out.append((starts, a_groups, pauses, a_bytes_opt if lmm_opt else float(a_bytes), b_bytes, load_bytes,
                         drain_bytes, exec_cycles, conf, regv_words, f_starts * rng, load_desc, drain_desc, a_desc,
                         issued, lmm_exec, GB, slots_max, blocks_max))
    return dict(zip(FEATURES, np.array(list(zip(*rows_out)), dtype=np.float64)))  # one C-contiguous row per count


def _group_sums(p: Problem, tiles: list, margin_lists: list[list[int]], agrp: int) -> tuple[int, int, int, int, int]:
    """Over the tiles ``tiles`` (:func:`_tile_order`) with cap ``agrp``: (A groups, A groups x columns, A groups x
    rows, the largest group's row-blocks per unit, the most blocks of a group) as :func:`group_counts` counts
    them (JDS: the packing of :func:`groups_of` on ``margin_lists``, each tile's Margins)."""
    ga = ga_cols = ga_rows = big = most = 0
    for i, (t, _, _) in enumerate(tiles):
        if p.fmt == "jds":
            g, bg, mo = _pack_one(margin_lists[i], p.slot_budget, agrp)
        else:
            g, bg, mo = -(-t.blocks // agrp), min(agrp, t.blocks) * t.rows, agrp
        ga, ga_cols, ga_rows = ga + g, ga_cols + g * t.cols, ga_rows + g * t.rows
        big, most = max(big, bg), max(most, mo)
    return ga, ga_cols, ga_rows, big, most


def _pack_one(margins: list[int], budget: int, agrp: int) -> tuple[int, int, int]:
    """:func:`pack` of one tile and one AGRP in Python integers: (groups, largest group's row-blocks, most blocks
    in a group)."""
    n = big = most = start = used = 0
    for b, m in enumerate(margins):
        if b > start and (b - start >= agrp or used + m > budget):
            n += 1
            big, most = max(big, used), max(most, b - start)
            start, used = b, 0
        used += m
    if not margins:
        return n, big, most
    return n + 1, max(big, used), max(most, len(margins) - start)


#: the counts :func:`timing` reads
TIMING_FEATURES = ("c_drain_bytes", "drain_desc_words", "conf_words", "regv_words", "range_words", "a_bytes", "b_bytes",
                   "c_load_bytes", "load_desc_words", "a_desc_words", "exec_cycles")


def timing(f: dict[str, np.ndarray], nchip, clock_hz, link_bytes_per_s) -> dict[str, np.ndarray]:
    """State times [s] of one chip and the wall time, broadcast over points x candidates.

    ``link_bytes_per_s`` is the effective host-link bandwidth
    (``imax_costs.link_bytes_per_s``): DMA bytes and PIO words
    (``PIO_WORD_BYTES`` each) cross it one after another, in the state
    order of §1 (no overlap with EXEC on one chip). Transfers and PIO of all
    chips share the link (chained boards); a chip's EXEC overlaps the other
    chips' transfers. Wall time = max(link busy time of all chips, one
    chip's serial time); the difference is WAIT.
    """
    bw = link_bytes_per_s
    pio = C.PIO_WORD_BYTES / bw
    st = {
        "DRAIN": f["c_drain_bytes"] / bw + f["drain_desc_words"] * pio,
        "CONF": f["conf_words"] * pio,
        "REGV": f["regv_words"] * pio,
        "RANGE": f["range_words"] * pio,
        "LOAD": (f["a_bytes"] + f["b_bytes"] + f["c_load_bytes"]) / bw
                + (f["load_desc_words"] + f["a_desc_words"]) * pio,
        "EXEC": f["exec_cycles"] / clock_hz,
    }
    chip = st["DRAIN"] + st["CONF"] + st["REGV"] + st["RANGE"] + st["LOAD"] + st["EXEC"]
    per_chip_link = chip - st["EXEC"] - f["a_bytes"] / bw - f["a_desc_words"] * pio
    link = nchip * per_chip_link + f["a_bytes"] / bw + f["a_desc_words"] * pio
    time = np.maximum(chip, link)
    st["WAIT"] = time - chip
    st["time"] = time
    return st


@dataclass
class Schedule:
    """The candidates of one problem and their features (cached per problem)."""

    problem: Problem
    lmm_opt: bool
    agrp: np.ndarray
    bgrp: np.ndarray
    feats: dict[str, np.ndarray] = field(default_factory=dict)
    plan: dict | None = None  # the same as ``plans.from_schedule`` uses, made on first use

    @property
    def feasible(self) -> bool:
        return len(self.agrp) > 0


def schedule(p: Problem, lmm_opt: bool) -> Schedule:
    """The candidates worth timing and their features: for each BGRP only the largest AGRP (dominance,
    :func:`dominant`)."""
    a_max, b_vals = candidate_ranges(p) if not p.error else (0, [])
    if a_max < 1 or not b_vals:
        return Schedule(p, lmm_opt, np.zeros(0, np.int64), np.zeros(0, np.int64))
    # candidates() then dominant(): the largest AGRP with every BGRP, largest first (or AGRP 1, the largest BGRP)
    A, B = ([a_max] * len(b_vals), b_vals[::-1]) if lmm_opt else ([1], b_vals[-1:])
    return Schedule(p, lmm_opt, np.array(A, dtype=np.int64), np.array(B, dtype=np.int64),
                    point_features(p, A, B, lmm_opt))


def dominant(agrp: np.ndarray) -> np.ndarray:
    """Candidates with the largest AGRP: for a fixed BGRP they are never slower than a smaller AGRP and
    win its ties, so the search needs no other.

    Every count the time depends on grows with the A groups per tile GA (starts, A and B/C range loads,
    descriptors, REGV: ``GA x (REGV words - 2) + 2 x GB x blocks`` with the pauses, RANGE) or does not
    depend on it (EXEC, CONF), and GA never grows with AGRP: ``ceil(blocks / AGRP)`` for CSR/dense; for
    JDS the greedy packing with a larger cap closes each group no earlier, its Margins falling block by
    block. Equal GA gives equal counts and a bitwise-equal time, and the search keeps the larger AGRP
    among equal times; a smaller GA costs at least one RANGE write per start more. (Checked against
    the brute force in the tests.)
    """
    return agrp == agrp.max()


def choose(s: Schedule, nchip, clock_hz: np.ndarray, link_bytes_per_s: np.ndarray) -> np.ndarray:
    """Index of the fastest candidate for each point (first = LMM-fullest among equal times)."""
    f = {k: v[None, :] for k, v in s.feats.items()}
    t = timing(f, nchip, np.asarray(clock_hz, float)[:, None], np.asarray(link_bytes_per_s, float)[:, None])
    return np.argmin(t["time"], axis=1)


# ---------------------------------------------------------------- reference (tests)

class _Lmm:
    """What the LMMs hold across starts, for the start-by-start reference walk."""

    def __init__(self, p: Problem, f: dict[str, float]):
        self.p, self.f = p, f
        self.a = self.b = self.c = self.perm = None
        self.c_rows = 0
        self.contributed: set = set()

    def a_range(self, key, slots: int, arrays: int) -> None:
        if key != self.a:
            self.a = key
            self.f["a_bytes"] += slots * self.p.entry_bytes
            self.f["a_desc_words"] += arrays * C.DMA_DESC_WORDS

    def perm_range(self, key, rows: int) -> None:
        if self.p.perm and key != self.perm:
            self.perm = key
            self.f["a_bytes"] += rows * C.INDEX_BYTES
            self.f["a_desc_words"] += C.DMA_DESC_WORDS

    def b_range(self, key, t: Tile, BG: int) -> None:
        if key != self.b:
            self.b = key
            self.f["b_bytes"] += t.cols * BG * C.VALUE_BYTES
            self.f["load_desc_words"] += C.DMA_DESC_WORDS

    def c_range(self, key, t: Tile, BG: int) -> None:
        if key != self.c:
            self.drain(BG)
            self.c, self.c_rows = key, t.rows
            if key in self.contributed:  # partial sums of an earlier A group / column tile
                self.f["c_load_bytes"] += t.rows * BG * C.VALUE_BYTES
                self.f["load_desc_words"] += C.DMA_DESC_WORDS
            self.contributed.add(key)

    def drain(self, BG: int) -> None:
        if self.c is not None:
            self.f["c_drain_bytes"] += self.c_rows * BG * C.VALUE_BYTES
            self.f["drain_desc_words"] += C.DMA_DESC_WORDS
            self.c = None


def _exec_block(p: Problem, t: Tile, b: int, BG: int, f: dict[str, float]) -> None:
    """One block pass of the chain over its stored rows (reference walk)."""
    W = p.cols
    for _row in range(int(t.margins[b])):
        f["exec_cycles"] += math.ceil(BG / (W * C.SIMD)) * W
        f["issued_macs"] += int(t.widths[b]) * BG
        f["lmm_exec_bytes"] += int(t.widths[b]) * (p.entry_bytes + BG * C.VALUE_BYTES) + 2 * BG * C.VALUE_BYTES
    f["exec_cycles"] += p.fill


def _start(p: Problem, f: dict[str, float], full_regv: bool = True) -> None:
    f["starts"] += 1
    f["regv_words"] += p.units * p.cols * C.REGV_WORDS_PER_PE if full_regv else C.B_GROUP_WORDS
    f["range_words"] += p.units * p.cols * C.RANGE_WORDS_PER_PE


def simulate(p: Problem, agrp: int, bgrp: int, lmm_opt: bool = True) -> dict[str, float]:
    """The same counts as :func:`features` (or :func:`features_swapped_a`), start by start."""
    W, BG = p.cols, bgrp
    GB = p.n // (BG * p.nchip)
    f = {k: 0.0 for k in FEATURES}
    f["b_groups"] = GB
    f["conf_words"] = p.units * W * C.CONF_WORDS_PER_PE
    lmm = _Lmm(p, f)
    for ti, t in enumerate(p.tiles):
        if t.blocks == 0:
            continue
        if not lmm_opt:
            for g in range(GB):
                for b in range(t.blocks):
                    _start(p, f)
                    f["a_groups"] += 1
                    f["a_group_slots"] = max(f["a_group_slots"], int(t.margins[b]))
                    f["a_group_blocks"] = 1
                    lmm.perm_range(ti, t.rows)
                    lmm.a_range((ti, b), int(t.margins[b] * t.widths[b]), p.a_arrays)
                    lmm.b_range((t.col_tile, g), t, BG)
                    lmm.c_range((t.row_tile, g), t, BG)
                    _exec_block(p, t, b, BG, f)
            continue
        for gi, blocks in enumerate(groups_of(p, t, agrp)):
            f["a_groups"] += 1
            f["a_group_slots"] = max(f["a_group_slots"], sum(int(t.margins[b]) for b in blocks))
            f["a_group_blocks"] = max(f["a_group_blocks"], len(blocks) if p.fmt == "jds" else agrp)
            slots = sum(int(t.margins[b] * t.widths[b]) for b in blocks)
            for g in range(GB):
                _start(p, f, full_regv=g == 0)
                lmm.perm_range(ti, t.rows)
                lmm.a_range((ti, gi), slots, p.a_arrays)
                lmm.b_range((t.col_tile, g), t, BG)
                lmm.c_range((t.row_tile, g), t, BG)
                for i, b in enumerate(blocks):
                    if i > 0:
                        f["pauses"] += 1
                        f["regv_words"] += C.PAUSE_WORDS
                    _exec_block(p, t, b, BG, f)
    lmm.drain(BG)
    return f


def brute_force(p: Problem, lmm_opt: bool, clock_hz: float, link_bytes_per_s: float,
                box: int = 64) -> tuple[int, int, int] | None:
    """Every (AGRP, BGRP, CGRP) in 1..box checked against the constraints one by one."""
    best = None
    for a in range(1, box + 1):
        if not lmm_opt and a != 1:
            break
        for b in range(1, box + 1):
            for c in range(1, box + 1):
                if violations(p, a, b, c):
                    continue
                if not lmm_opt:  # the rule without the optimisation: largest feasible BGRP
                    key = (-b,)
                else:
                    t = timing(simulate(p, a, b), p.nchip, clock_hz, link_bytes_per_s)["time"]
                    key = (t, -a, -b)
                if best is None or key < best[0]:
                    best = (key, (a, b, c))
    return None if best is None else best[1]


@lru_cache(maxsize=16384)  # a few KB each: candidates x counts
def cached_schedule(key: tuple, fmt: str, mapping: str, units: int, cols: int, lmm_kb: int, nchip: int,
                    lmm_opt: bool) -> Schedule:
    """:func:`schedule` of the product ``key`` = (m, k, n, sparse layer or None) on one configuration."""
    from workloads.parametric import matrix_of

    m, k, n, layer = key
    mat = matrix_of(layer) if (fmt != "dense" and layer is not None) else None
    p = build(m, k, n, fmt, mapping, units, cols, lmm_kb, nchip, mat)
    return schedule(p, lmm_opt)

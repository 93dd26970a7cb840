"""IMAX LMM scheduling (spec `imax.md` §5): constraints, the exhaustive AGRP/BGRP/CGRP search.

The loop nest of one product C = A @ B on one chip with the LMM
optimisation (spec §5: A stays in LMM, B is the swapped operand):

    for each tile (row tile x column tile of A, see below):
      for each A group (AGRP consecutive blocks of H slots, kept in LMM):
        LOAD the A group once (broadcast to every chip)
        for each B group of this chip (BGRP columns of B, k_tile rows):
          start: DRAIN (previous C group), CONF (first start only), REGV,
                 RANGE, LOAD (B slab; C partial sums unless first), EXEC
                 (the group's blocks one after another, paused in between
                 to update the A-group control variables and base address)

Before the optimisation (``lmm_opt`` off) A was the swapped operand (spec
§5: the optimisation makes B the swapped one; a public IMAX sparse-library
sample, GitHub taku2365/IMAX_sparse.cent ``sample/test/test024.c``, loops
``for top (B groups): for blk (A blocks)``): one block per start, every
block re-sent for every B group, while the B slab and the C group stay in
LMM for the whole B group (loaded once, drained once).

A "block" is ``H`` slots of every stored row (see ``workloads/formats.py``);
unit ``h`` of the chain holds slot ``h``, so one row iteration runs the
whole chain. LMM halves (LMMSIZE): A groups take ``rows x AGRP`` slots of
``entry_bytes`` in half of every unit; the B slab ``k x BGRP`` FP32 words in
the other half (broadcast: one transfer feeds all units); the last unit
holds the C group ``rows x CGRP``.

Constraints (spec §5, with the two printed contradictions resolved as the
spec says): see :func:`violations`. Three readings are ours and documented:
(4.4.2) uses the entry size of the mapping (8 B value + index for sparse,
4 B for dense, which has no index); with JDS, block ``b`` holds only its
Margin (``margin_b`` rows) per unit, so an A group is up to AGRP
consecutive blocks packed while their margins fit the A half (for CSR and
dense every block holds all rows and this is the printed 4.4.2); (4.4.6)
sizes the C group as the tile's rows x CGRP, the region the last unit
actually holds (the printed ``Ccolumn x CGRP`` is the same number for the
thesis's square matrices).

``lmm_opt`` on: exhaustive search of every feasible (AGRP, BGRP, CGRP) for
the least modelled time; equal times keep the larger AGRP, then the larger
BGRP (the LMM-fullest schedule). Off: AGRP = 1 in the swapped-A order above
and the largest feasible BGRP = CGRP (no search).

Tiles (an extension for matrices the spec's single-tile constraints cannot
hold): when even AGRP = 1 overflows half an LMM (rows x entry bytes), A is
cut into equal row tiles; when even BGRP = 1 overflows (k x 4 bytes), into
equal column tiles, whose C partial sums are reloaded like those of later
A groups. The constraints then apply per tile. Square thesis matrices up
to 4096 (sparse) / 8192 (dense) rows with 64 KB LMMs are one tile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from workloads import formats

from . import imax_costs as C


@dataclass(frozen=True)
class Tile:
    """One piece of A run as its own product: rows, columns, stored rows per block."""

    rows: int
    cols: int  # A columns in the tile = B rows it needs (Acolumn = Brow)
    margins: np.ndarray  # stored rows of each block
    widths: np.ndarray  # stored slots per row of each block (H; dense: columns of the block)
    first_k: bool  # first non-empty column tile of its rows: C starts from zero

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
    entry_bytes: int
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
    def slot_budget(self) -> int:
        """A slots one unit holds in its A half (LMMSIZE / 2 / entry bytes)."""
        return (self.lmm_bytes // 2) // self.entry_bytes

    @property
    def stored_slots(self) -> int:
        return int(sum((t.margins * t.widths).sum() for t in self.tiles))


# ---------------------------------------------------------------- building

def tiling(m: int, k: int, entry_bytes: int, lmm_bytes: int) -> tuple[int, int]:
    """(row tiles, column tiles): the fewest equal tiles AGRP = BGRP = 1 can hold."""
    rows_max = min((lmm_bytes // 2) // entry_bytes, lmm_bytes // C.VALUE_BYTES)  # 4.4.2, 4.4.6
    cols_max = (lmm_bytes // 2) // C.VALUE_BYTES  # 4.4.4
    if rows_max < 1 or cols_max < 1:
        return 0, 0
    return -(-m // rows_max), -(-k // cols_max)


def _dense_tiles(m: int, k: int, rt: int, ct: int, H: int) -> tuple[Tile, ...]:
    out = []
    rows = _split(m, rt)
    cols = _split(k, ct)
    for r in rows:
        for j, c in enumerate(cols):
            nb = -(-c // H)
            widths = np.minimum(H, c - H * np.arange(nb)).astype(np.int64)
            out.append(Tile(r, c, np.full(nb, r, dtype=np.int64), widths, j == 0))
    return tuple(out)


def _split(total: int, parts: int) -> list[int]:
    """``parts`` near-equal sizes summing to ``total`` (the first ones one larger)."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _sparse_tiles(mat: sp.csr_matrix, fmt: str, rt: int, ct: int, H: int) -> tuple[Tile, ...]:
    m, k = mat.shape
    counts = formats.row_nnz_by_col_tile(mat, ct)  # (m, ct)
    order = formats.jds_order(counts.sum(axis=1)) if fmt == "jds" else np.arange(m)
    w = -(-k // ct)
    out = []
    start = 0
    for r in _split(m, rt):
        rows = order[start:start + r]
        start += r
        first = True
        for j in range(ct):
            cols = min(w, k - j * w)
            margins = formats.block_margins(counts[rows, j], H, fmt)
            out.append(Tile(r, cols, margins, np.full(len(margins), H, dtype=np.int64), first and len(margins) > 0))
            first = first and len(margins) == 0
    return tuple(out)


def build(m: int, k: int, n: int, fmt: str, mapping: str, units: int, cols: int, lmm_kb: int, nchip: int,
          matrix: sp.csr_matrix | None = None) -> Problem:
    """The tiles, blocks and margins of one product on one configuration."""
    H = int(C.mac_units(units, cols, mapping))
    e = C.VALUE_BYTES if fmt == "dense" else formats.SLOT_BYTES
    lmm = int(lmm_kb) * 1024
    base = dict(m=m, k=k, n=n, fmt=fmt, mapping=mapping, H=H, entry_bytes=e, units=int(units),
                cols=int(cols), lmm_bytes=lmm, nchip=int(nchip))
    if H < 1:
        need = {"dense": 1, "ivj": C.IVJ_LOAD_ONLY_UNITS + 1,
                "ivs": C.IVS_OFFSET_UNITS + int(C.ivs_offsets_per_set(cols))}[mapping]
        return Problem(**base, error=f"{mapping} needs at least {need + C.RESERVED_UNITS} units "
                                     f"({C.RESERVED_UNITS} reserved + {need}); units={units}")
    rt, ct = tiling(m, k, e, lmm)
    if rt == 0:
        return Problem(**base, error=f"lmm_kb={lmm_kb} cannot hold one A slot and one B word per half")
    if fmt == "dense":
        tiles = _dense_tiles(m, k, rt, ct, H)
    else:
        if matrix is None:
            raise ValueError("a sparse format needs the matrix")
        tiles = _sparse_tiles(matrix, fmt, rt, ct, H)
    return Problem(**base, tiles=tiles, row_tiles=rt, col_tiles=ct)


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


def group_counts(p: Problem, t: Tile, agrp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per AGRP value: A groups, largest group's slots per unit, AGRP as run.

    AGRP as run is AGRP itself for CSR/dense (the reservation of 4.4.2) and
    the most blocks one packed group holds for JDS (AGRP is then a cap).
    """
    if p.fmt != "jds":
        return -(-t.blocks // agrp), np.minimum(agrp, t.blocks) * t.rows, agrp.copy()
    n, big, most = (np.empty(len(agrp), np.int64) for _ in range(3))
    for i, a in enumerate(agrp):
        gs = groups_of(p, t, int(a))
        n[i] = len(gs)
        big[i] = max(int(t.margins[g.start:g.stop].sum()) for g in gs)
        most[i] = max(len(g) for g in gs)
    return n, big, most


# ---------------------------------------------------------------- constraints

CONSTRAINTS = ("4.4.2", "4.4.3", "4.4.4", "4.4.5", "4.4.6", "4.4.7", "4.4.8", "4.4.9", "4.4.10")


def pad_of(acolumn: int, H: int) -> int:
    """(4.4.1) columns that pad Acolumn up to a multiple of H."""
    return 0 if acolumn % H == 0 else H - acolumn % H


def violations(p: Problem, agrp: int, bgrp: int, cgrp: int) -> list[str]:
    """Constraints (4.4.2)-(4.4.10) that (agrp, bgrp, cgrp) breaks, written as in the spec.

    Names: Arow = Crow = tile rows, Acolumn = Brow = tile columns, Bcolumn =
    Ccolumn = n, LMMSIZE = lmm bytes, W = cols, entry = 8 (sparse) or 4 (dense).
    """
    arow = crow = p.tile_rows
    acol = brow = p.tile_cols
    bcol = ccol = p.n
    L, H, W, N, e = p.lmm_bytes, p.H, p.cols, p.nchip, p.entry_bytes
    pad = pad_of(acol, H)  # (4.4.1)
    bad = []
    if p.fmt == "jds":  # with the Margin: every packed group fits iff every single block does
        if max((int(t.margins[0]) for t in p.tiles if t.blocks), default=0) * e > L / 2:
            bad.append("4.4.2")
    elif not arow * agrp * e <= L / 2:
        bad.append("4.4.2")
    if not arow * agrp * 2 * H <= arow * (acol + pad) * 2:
        bad.append("4.4.3")
    if not brow * bgrp * 4 <= L / 2:
        bad.append("4.4.4")
    if not brow * bgrp * N <= bcol * brow:  # Brow*BGRP <= Bcolumn*Brow/NCHIP
        bad.append("4.4.5")
    if not crow * cgrp * 4 <= L:
        bad.append("4.4.6")
    if not ccol * cgrp * N <= crow * ccol:  # Ccolumn*CGRP <= Crow*Ccolumn/NCHIP
        bad.append("4.4.7")
    if bgrp != cgrp:
        bad.append("4.4.8")
    if not bgrp <= W * 2:  # printed "!=", resolved as the text says
        bad.append("4.4.9")
    if bcol % (bgrp * N) != 0:  # printed "!= 0", resolved as the text says
        bad.append("4.4.10")
    return bad


def candidates(p: Problem, lmm_opt: bool) -> tuple[np.ndarray, np.ndarray]:
    """Feasible (AGRP, BGRP) pairs (CGRP = BGRP by 4.4.8), most LMM-filling first.

    The ranges come from the constraints' own bounds, so the product of the
    two lists is the whole feasible set (checked against :func:`brute_force`).
    """
    arow, acol, brow = p.tile_rows, p.tile_cols, p.tile_cols
    L, H = p.lmm_bytes, p.H
    a_max = (acol + pad_of(acol, H)) // H  # 4.4.3
    if p.fmt != "jds" or "4.4.2" in violations(p, 1, 1, 1):
        a_max = min(a_max, int((L / 2) // (arow * p.entry_bytes)))  # 4.4.2
    a_vals = np.arange(1, max(a_max, 0) + 1)
    b_hi = min(p.cols * 2, int((L / 2) // (brow * 4)), int(L // (p.tile_rows * 4)), p.n // p.nchip,
               p.tile_rows // p.nchip)
    b_vals = np.array([b for b in range(1, max(b_hi, 0) + 1) if p.n % (b * p.nchip) == 0], dtype=np.int64)
    if not len(a_vals) or not len(b_vals):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if not lmm_opt:
        return np.array([1]), b_vals[-1:]
    A, B = np.meshgrid(a_vals[::-1], b_vals[::-1], indexing="ij")
    return A.ravel(), B.ravel()


def no_schedule_reason(p: Problem) -> str:
    """One line naming the constraints that leave no (AGRP, BGRP, CGRP)."""
    if p.error:
        return p.error
    bad_a = violations(p, 1, 1, 1)
    a_part = [c for c in bad_a if c in ("4.4.2", "4.4.3")]
    b_fail = set()
    for b in range(1, p.cols * 2 + 1):
        b_fail.update(c for c in violations(p, 1, b, b) if c not in ("4.4.2", "4.4.3"))
    which = sorted(set(a_part) | b_fail, key=CONSTRAINTS.index)
    return (f"no LMM schedule (AGRP, BGRP, CGRP) satisfies spec imax §5 constraints {', '.join(which)} "
            f"for a {p.tile_rows}x{p.tile_cols} tile, n={p.n}, nchip={p.nchip}, lmm_kb={p.lmm_bytes // 1024}")


# ---------------------------------------------------------------- features and time

FEATURES = ("starts", "a_groups", "pauses", "a_bytes", "b_bytes", "c_load_bytes", "c_drain_bytes",
            "exec_cycles", "conf_words", "regv_words", "range_words", "load_desc_words",
            "drain_desc_words", "a_desc_words", "issued_macs", "lmm_exec_bytes", "b_groups", "a_group_slots",
            "a_group_blocks")


def features(p: Problem, agrp: np.ndarray, bgrp: np.ndarray) -> dict[str, np.ndarray]:
    """Counts of one chip's run for each candidate (closed form of the loop nest).

    Bytes and PIO words are per chip except ``a_bytes``/``a_desc_words``,
    which one broadcast transfer serves for all chips.
    """
    AG = np.asarray(agrp, dtype=np.int64)
    BG = np.asarray(bgrp, dtype=np.int64)
    W = p.cols
    GB = p.n // (BG * p.nchip)
    iters = -(-BG // (W * C.SIMD))  # LOOP0 count per row
    fill = int(C.fill_cycles(p.units, W))
    z = np.zeros(AG.shape, dtype=np.float64)
    f = {k: z.copy() for k in FEATURES}
    a_bytes = 0.0
    for t in p.tiles:
        if t.blocks == 0:
            continue
        GA, big, most = group_counts(p, t, AG)
        f["a_group_slots"] = np.maximum(f["a_group_slots"], big)
        f["a_group_blocks"] = np.maximum(f["a_group_blocks"], most)
        starts = GA * GB
        f["starts"] += starts
        f["a_groups"] += GA
        f["pauses"] += GB * (t.blocks - GA)
        f["b_bytes"] += starts * t.cols * BG * C.VALUE_BYTES
        f["c_drain_bytes"] += starts * t.rows * BG * C.VALUE_BYTES
        partial = starts - (GB if t.first_k else 0)
        f["c_load_bytes"] += partial * t.rows * BG * C.VALUE_BYTES
        f["load_desc_words"] += (starts + partial) * C.DMA_DESC_WORDS
        f["a_desc_words"] += (GA * p.a_arrays + (1 if p.perm else 0)) * C.DMA_DESC_WORDS
        rows_stored = int(t.margins.sum())
        slots = int((t.margins * t.widths).sum())
        f["exec_cycles"] += GB * (rows_stored * iters * W + t.blocks * fill)
        f["issued_macs"] += GB * slots * BG
        f["lmm_exec_bytes"] += GB * (slots * (p.entry_bytes + BG * C.VALUE_BYTES)
                                     + rows_stored * 2 * BG * C.VALUE_BYTES)
        a_bytes += slots * p.entry_bytes + (t.rows * C.INDEX_BYTES if p.perm else 0)
    f["a_bytes"] += a_bytes
    f["b_groups"] += GB
    f["drain_desc_words"] = f["starts"] * C.DMA_DESC_WORDS
    f["conf_words"] += float(C.conf_words(p.units, W))
    f["regv_words"] = f["starts"] * float(C.regv_words(p.units, W)) + f["pauses"] * C.PAUSE_WORDS
    f["range_words"] = f["starts"] * float(C.range_words(p.units, W))
    return f


def features_swapped_a(p: Problem, bgrp: np.ndarray) -> dict[str, np.ndarray]:
    """Counts of the unoptimised order (A re-sent per B group, one block per start)."""
    BG = np.asarray(bgrp, dtype=np.int64)
    W = p.cols
    GB = p.n // (BG * p.nchip)
    iters = -(-BG // (W * C.SIMD))
    fill = int(C.fill_cycles(p.units, W))
    z = np.zeros(BG.shape, dtype=np.float64)
    f = {k: z.copy() for k in FEATURES}
    for t in p.tiles:
        if t.blocks == 0:
            continue
        rows_stored = int(t.margins.sum())
        slots = int((t.margins * t.widths).sum())
        f["a_group_slots"] = np.maximum(f["a_group_slots"], int(t.margins.max()))
        f["a_group_blocks"] = np.maximum(f["a_group_blocks"], 1)
        f["starts"] += GB * t.blocks
        f["a_groups"] += GB * t.blocks
        f["a_bytes"] += GB * (slots * p.entry_bytes + (t.rows * C.INDEX_BYTES if p.perm else 0))
        f["a_desc_words"] += GB * (t.blocks * p.a_arrays + (1 if p.perm else 0)) * C.DMA_DESC_WORDS
        f["b_bytes"] += GB * t.cols * BG * C.VALUE_BYTES
        f["c_drain_bytes"] += GB * t.rows * BG * C.VALUE_BYTES
        partial = 0 if t.first_k else 1
        f["c_load_bytes"] += partial * GB * t.rows * BG * C.VALUE_BYTES
        f["load_desc_words"] += GB * (1 + partial) * C.DMA_DESC_WORDS
        f["drain_desc_words"] += GB * C.DMA_DESC_WORDS
        f["exec_cycles"] += GB * (rows_stored * iters * W + t.blocks * fill)
        f["issued_macs"] += GB * slots * BG
        f["lmm_exec_bytes"] += GB * (slots * (p.entry_bytes + BG * C.VALUE_BYTES)
                                     + rows_stored * 2 * BG * C.VALUE_BYTES)
    f["b_groups"] += GB
    f["conf_words"] += float(C.conf_words(p.units, W))
    f["regv_words"] = f["starts"] * float(C.regv_words(p.units, W))
    f["range_words"] = f["starts"] * float(C.range_words(p.units, W))
    return f


def timing(f: dict[str, np.ndarray], nchip, clock_hz, link_bytes_per_s, pio_word_s: float | None = None
           ) -> dict[str, np.ndarray]:
    """State times [s] of one chip and the wall time, broadcast over points x candidates.

    Transfers and PIO of all chips share the host link (chained boards); a
    chip's EXEC overlaps the other chips' transfers. Wall time = max(link
    busy time of all chips, one chip's serial time); the difference is WAIT.
    """
    bw = link_bytes_per_s
    pio = C.PIO_WORD_S if pio_word_s is None else pio_word_s
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

    @property
    def feasible(self) -> bool:
        return len(self.agrp) > 0


def schedule(p: Problem, lmm_opt: bool) -> Schedule:
    A, B = candidates(p, lmm_opt) if not p.error else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if not len(A):
        return Schedule(p, lmm_opt, A, B)
    return Schedule(p, lmm_opt, A, B, features(p, A, B) if lmm_opt else features_swapped_a(p, B))


def choose(s: Schedule, nchip, clock_hz: np.ndarray, link_bytes_per_s: np.ndarray) -> np.ndarray:
    """Index of the fastest candidate for each point (first = LMM-fullest among equal times)."""
    f = {k: v[None, :] for k, v in s.feats.items()}
    t = timing(f, nchip, np.asarray(clock_hz, float)[:, None], np.asarray(link_bytes_per_s, float)[:, None])
    return np.argmin(t["time"], axis=1)


# ---------------------------------------------------------------- reference (tests)

def _exec_block(p: Problem, t: Tile, b: int, BG: int, f: dict[str, float]) -> None:
    """One block pass of the chain over its stored rows (reference walk)."""
    W = p.cols
    for _row in range(int(t.margins[b])):
        f["exec_cycles"] += math.ceil(BG / (W * C.SIMD)) * W
        f["issued_macs"] += int(t.widths[b]) * BG
        f["lmm_exec_bytes"] += int(t.widths[b]) * (p.entry_bytes + BG * C.VALUE_BYTES) + 2 * BG * C.VALUE_BYTES
    f["exec_cycles"] += int(C.fill_cycles(p.units, W))


def _start(p: Problem, f: dict[str, float]) -> None:
    f["starts"] += 1
    f["regv_words"] += p.units * p.cols * C.REGV_WORDS_PER_PE
    f["range_words"] += p.units * p.cols * C.RANGE_WORDS_PER_PE


def simulate(p: Problem, agrp: int, bgrp: int, lmm_opt: bool = True) -> dict[str, float]:
    """The same counts as :func:`features` (or :func:`features_swapped_a`), start by start."""
    W, BG = p.cols, bgrp
    GB = p.n // (BG * p.nchip)
    f = {k: 0.0 for k in FEATURES}
    f["b_groups"] = GB
    f["conf_words"] = p.units * W * C.CONF_WORDS_PER_PE
    if not lmm_opt:
        for t in p.tiles:
            if t.blocks == 0:
                continue
            for _ in range(GB):
                f["b_bytes"] += t.cols * BG * C.VALUE_BYTES  # B slab and C group stay for the B group
                f["load_desc_words"] += C.DMA_DESC_WORDS
                if p.perm:
                    f["a_bytes"] += t.rows * C.INDEX_BYTES
                    f["a_desc_words"] += C.DMA_DESC_WORDS
                if not t.first_k:
                    f["c_load_bytes"] += t.rows * BG * C.VALUE_BYTES
                    f["load_desc_words"] += C.DMA_DESC_WORDS
                for b in range(t.blocks):
                    _start(p, f)
                    f["a_groups"] += 1
                    f["a_group_slots"] = max(f["a_group_slots"], int(t.margins[b]))
                    f["a_group_blocks"] = 1
                    f["a_bytes"] += int(t.margins[b] * t.widths[b]) * p.entry_bytes
                    f["a_desc_words"] += p.a_arrays * C.DMA_DESC_WORDS
                    _exec_block(p, t, b, BG, f)
                f["c_drain_bytes"] += t.rows * BG * C.VALUE_BYTES
                f["drain_desc_words"] += C.DMA_DESC_WORDS
        return f
    for t in p.tiles:
        if t.blocks == 0:
            continue
        if p.perm:
            f["a_bytes"] += t.rows * C.INDEX_BYTES
            f["a_desc_words"] += C.DMA_DESC_WORDS
        for gi, blocks in enumerate(groups_of(p, t, agrp)):
            f["a_groups"] += 1
            f["a_group_slots"] = max(f["a_group_slots"], sum(int(t.margins[b]) for b in blocks))
            f["a_group_blocks"] = max(f["a_group_blocks"], len(blocks) if p.fmt == "jds" else agrp)
            f["a_bytes"] += sum(int(t.margins[b] * t.widths[b]) * p.entry_bytes for b in blocks)
            f["a_desc_words"] += p.a_arrays * C.DMA_DESC_WORDS
            for _ in range(GB):
                _start(p, f)
                f["b_bytes"] += t.cols * BG * C.VALUE_BYTES
                f["load_desc_words"] += C.DMA_DESC_WORDS
                if not (t.first_k and gi == 0):
                    f["c_load_bytes"] += t.rows * BG * C.VALUE_BYTES
                    f["load_desc_words"] += C.DMA_DESC_WORDS
                for i, b in enumerate(blocks):
                    if i > 0:
                        f["pauses"] += 1
                        f["regv_words"] += C.PAUSE_WORDS
                    _exec_block(p, t, b, BG, f)
                f["c_drain_bytes"] += t.rows * BG * C.VALUE_BYTES
                f["drain_desc_words"] += C.DMA_DESC_WORDS
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

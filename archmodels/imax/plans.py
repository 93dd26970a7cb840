"""IMAX schedules of many configurations at once (spec `imax.md` §3-§5; issue 15).

Dense products in closed form (:func:`dense_plans`); sparse ones per tiling
(:func:`sparse_plans`: each tile's sorted row nonzeros give its Margins for
every chain length H, and the tile sums of ``schedule`` run over arrays).

A dense A cut into ``rt x ct`` equal tiles (``schedule._dense_tiles``) has
only two row sizes and two column sizes, every block of a tile holds all its
rows, and every tile is non-empty. The sums over tiles that
:func:`schedule.features` and :func:`schedule.features_swapped_a` walk tile
by tile are then products of a row sum and a column sum, written here in
closed form for arrays of configurations x candidates: no tile is built.
All counts are integers (exact in float64 at these sizes), so the numbers are
those of the walk, bit for bit (tested against it, and the golden outputs).

The candidates are those :func:`schedule.schedule` times: BGRP over the
divisors of ``n / nchip`` up to the constraints' bound (largest first) with
the largest AGRP (:func:`schedule.dominant`); AGRP = 1 and the largest BGRP
without the LMM optimisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workloads import formats

from . import costs as C
from . import schedule as S


@lru_cache(maxsize=256)
def _divisors(n: int) -> np.ndarray:
    d = np.arange(1, int(np.sqrt(n)) + 1)
    d = d[n % d == 0]
    return np.unique(np.concatenate([d, n // d]))


def _a_max(cfg: dict[str, np.ndarray], lmm_bound: np.ndarray) -> np.ndarray:
    """The largest AGRP: 4.4.3, and 4.4.2 where ``lmm_bound`` (CSR/dense; JDS: when even one block's
    Margin overflows, as :func:`schedule.candidates`)."""
    acol, H, L = cfg["acol"], cfg["H"], cfg["L"]
    a43 = (acol + S.pad_of(acol, H)) // H
    return np.where(lmm_bound, np.minimum(a43, ((L / 2) // (cfg["arow"] * cfg["e"])).astype(np.int64)), a43)


#: :func:`_candidates` reads d // N and whether N divides d from a table when every N is below this
_DIV_TABLE_MAX = 1 << 12


@lru_cache(maxsize=64)
def _divisor_table(n: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    """([top, divisors] int64, bool): row N holds ``d // N`` and ``d % N == 0`` for the divisors d of n, largest
    first (:func:`_candidates`' ``np.divmod`` of them by N, done once per n for N = 1 .. top - 1; row 0 is not
    read). Read-only: shared by every call."""
    divs = _divisors(n)[::-1]
    quot, rem = np.divmod(divs[None, :], np.maximum(np.arange(top, dtype=np.int64), 1)[:, None])
    whole = rem == 0
    quot.flags.writeable = whole.flags.writeable = False
    return quot, whole


def _candidates(n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray | bool, a_max: np.ndarray):
    """The candidates :func:`schedule.schedule` times, flattened: (count per configuration, owner, AGRP,
    BGRP per candidate). BGRP: divisors b of n / nchip up to the bound, largest first (4.4.10), with the
    largest AGRP (dominance); without the LMM optimisation AGRP = 1 and the largest BGRP only. ``lmm_opt``:
    per configuration, or one Python bool for all (fewer numpy calls)."""
    N = cfg["N"]
    # rows of the table, by N (the ufuncs' reductions: no Python-level .min, .max)
    if len(N) and int(np.minimum.reduce(N)) >= 1 and (top := int(np.maximum.reduce(N))) < _DIV_TABLE_MAX:
        quot, whole = _divisor_table(n, max(64, 1 << top.bit_length()))
        b = quot[N]
        ok = whole[N] & (b <= cfg["b_hi"][:, None])
    else:
        divs = _divisors(n)[::-1]
        b, rem = np.divmod(divs[None, :], N[:, None])  # a divisor d of n that N >= 1 divides: b = d / N >= 1
        ok = (rem == 0) & (b <= cfg["b_hi"][:, None])
    if lmm_opt is False:
        ok &= ok.cumsum(axis=1) == 1
    elif lmm_opt is not True:
        ok &= lmm_opt[:, None] | (ok.cumsum(axis=1) == 1)
    count = ok.sum(axis=1)
    g = np.arange(len(N)).repeat(count)
    if lmm_opt is True or lmm_opt is False:
        return count, g, S.gather(a_max, g) if lmm_opt else np.ones(len(g), np.int64), b[ok]
    return count, g, np.where(S.gather(lmm_opt, g), S.gather(a_max, g), 1), b[ok]


def _col_sum(ec, ct, c0, h) -> np.ndarray:
    """Sum over the column tiles of ``h(width)``: ``ec`` tiles of ``c0 + 1`` columns, the rest of ``c0``."""
    return ec * h(c0 + 1) + (ct - ec) * h(c0)


def dense_plans(m, k, n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> dict:
    """The candidates and their counts (``schedule.FEATURES``) of the dense products m x k x n (``m``, ``k``
    one number or one per configuration) for each schedulable configuration of ``cfg``
    (:func:`schedule.configurations`, all rows dense), flattened: ``count`` per configuration, then
    ``feats``, ``agrp``, ``bgrp`` per candidate and the configurations' problem numbers (``per``: tile
    rows, A bytes per row and block, half an LMM, blocks, tiles, slots)."""
    H, W, N, L, units = cfg["H"], cfg["W"], cfg["N"], cfg["L"], cfg["units"]
    rt, ct, arow = cfg["rt"], cfg["ct"], cfg["arow"]
    urb = C.a_unit_row_bytes("dense", 1)
    e = C.VALUE_BYTES
    count, g, AG, BG = _candidates(n, cfg, lmm_opt, _a_max(cfg, np.ones(len(H), bool)))
    opt = lmm_opt[g]
    m_cfg, k_cfg = np.broadcast_to(m, H.shape), np.broadcast_to(k, H.shape)
    m, k = m_cfg[g], k_cfg[g]
    H_, W_, rt_, ct_, units_ = H[g], W[g], rt[g], ct[g], units[g]
    c0, ec = np.divmod(k, ct_)
    GB = n // (BG * N[g])
    multi = GB > 1
    # sums over the column tiles (``_col_sum``: ec tiles of c0 + 1 columns, the rest of c0) of numbers of a tile's
    # width, each per-width number computed once for both widths and shared by the sums that read it (the same
    # integer operations on the same values as one _col_sum per sum: the same int64 results)
    c1, rest = c0 + 1, ct_ - ec
    col_sum = lambda h1, h0: ec * h1 + rest * h0  # noqa: E731
    B1, B0 = -(-c1 // H_), -(-c0 // H_)  # blocks of a column tile of each width
    SB = col_sum(B1, B0)
    # with the optimisation: A groups per column tile GA = ceil(blocks / AGRP); without: one block a start
    GA1, GA0 = -(-B1 // AG), -(-B0 // AG)
    SGA = np.where(opt, col_sum(GA1, GA0), SB)
    starts = GB * rt_ * SGA
    pauses = np.where(opt, GB * rt_ * (SB - SGA), 0)
    c_groups = np.where(opt, SGA, ct_)  # C ranges a row of tiles visits per B group
    b_cols = np.where(opt, col_sum(GA1 * c1, GA0 * c0), k)
    b_loads_cols = np.where(multi, rt_ * GB * b_cols, np.where(ct_ > 1, rt_, 1) * k)
    drains = np.where(multi, rt_ * GB * c_groups, rt_)  # tiles' C drains (one per row range with one B group)
    drain_rows = np.where(multi, GB * m * c_groups, m)
    partial_rows = np.where(multi, GB * m * (c_groups - 1), 0)
    b_loads = np.where(multi, rt_ * GB * c_groups, np.where(ct_ > 1, rt_ * ct_, 1))
    partial = np.where(multi, rt_ * GB * (c_groups - 1), 0)
    S1, S0 = np.where(B1 > 1, GB, 1), np.where(B0 > 1, GB, 1)  # unoptimised: A re-sent per B group
    a_bytes = np.where(opt, m * k * e, e * m * col_sum(S1 * c1, S0 * c0))
    a_desc = np.where(opt, rt_ * SGA, rt_ * col_sum(S1 * B1, S0 * B0))
    iters = -(-BG // (W_ * C.SIMD))
    fill = C.fill_cycles(units_, W_, "dense")
    f = {
        "starts": starts, "a_groups": np.where(opt, rt_ * SGA, starts), "pauses": pauses, "a_bytes": a_bytes,
        "b_bytes": b_loads_cols * BG * C.VALUE_BYTES, "c_load_bytes": partial_rows * BG * C.VALUE_BYTES,
        "c_drain_bytes": drain_rows * BG * C.VALUE_BYTES,
        "exec_cycles": GB * (m * SB * iters * W_ + rt_ * SB * fill),
        "load_desc_words": (b_loads + partial) * C.DMA_DESC_WORDS, "drain_desc_words": drains * C.DMA_DESC_WORDS,
        "a_desc_words": a_desc * C.DMA_DESC_WORDS, "issued_macs": GB * m * k * BG,
        "lmm_exec_bytes": GB * (m * k * (e + BG * C.VALUE_BYTES) + m * SB * 2 * BG * C.VALUE_BYTES),
        "b_groups": GB,
        # blocks of the widest column tile, ceil(k / ct) = c0 + (ec > 0) columns (ct >= 1: a schedulable tiling)
        "a_group_slots": np.where(opt, np.minimum(AG, np.where(ec > 0, B1, B0)), 1) * -(-m // rt_),
        "a_group_blocks": AG,
    }
    block = _count_block(f, len(g), units_ * W_, opt)
    half = L / 2
    per = {"jds": np.zeros(len(H), bool), "tile_rows": arow, "urb": np.full(len(H), urb), "half": half,
           "util_unopt": arow * urb / half, "blocks": rt * _col_sum(k_cfg % ct, ct, k_cfg // ct, lambda c: -(-c // H)),
           "row_tiles": rt, "col_tiles": ct, "slots": m_cfg * k_cfg}
    return {"count": count, "feats": dict(zip(S.FEATURES, block)), "agrp": AG, "bgrp": BG, "per": per,
            "block": block}


# ---------------------------------------------------------------- sparse A

@dataclass(frozen=True)
class _Tiling:
    """The tiles of a sparse A cut ``rt x ct`` (:func:`schedule.tile_row_nnz`, run order) as arrays over
    tiles, and every tile's row nonzeros sorted, tile after tile."""

    rows: np.ndarray  # rows of each tile
    cols: np.ndarray  # columns of each tile
    top: np.ndarray  # most nonzeros of a row of each tile (0 for a tile without rows)
    nonzero_rows: np.ndarray  # rows with a nonzero (JDS: the first block's Margin)
    first_k: np.ndarray  # first column tile of its rows
    b_new: np.ndarray  # a new B slab range (several column tiles, or the first tile)
    last: np.ndarray  # last column tile of its rows
    nz: np.ndarray  # the sorted row nonzeros of each tile, tile after tile
    most: int = 0  # the most nonzeros of a row of any tile (``top.max()``)
    narrow: bool = False  # a tile without columns


@lru_cache(maxsize=256)  # a few arrays of m x column tiles row counts per (matrix, format, tiling)
def _tiling(layer, fmt: str, rt: int, ct: int) -> _Tiling:
    """:func:`schedule.tile_row_nnz` of a sparse layer's matrix as a :class:`_Tiling`, for all tiles at once: the
    row tiles are consecutive ranges of the (JDS: permuted) rows, so sorting every count by (tile, count) gives
    each tile's sorted row nonzeros, tile after tile in run order (row tile, then column tile). One tiling alone:
    the reference :func:`_new_tiles` (every new tiling of a join at once) is tested against."""
    from workloads.parametric import matrix_of

    mat = matrix_of(layer)
    m, k = mat.shape
    counts = S._col_tile_counts(mat, ct)  # (m, ct)
    if fmt == "jds":
        counts = counts[S._col_tile_counts(mat, 0, jds=True)]
    rows = np.repeat(np.array(S._split(m, rt), dtype=np.int64), ct)  # rows of each tile, in run order
    T = rt * ct
    big = int(counts.max()) + 1 if counts.size else 1
    tile = np.repeat(np.arange(rt, dtype=np.int64), rows[::ct])[:, None] * ct + np.arange(ct)  # (m, ct)
    key = _sorted_keys(tile, counts, big, T)
    of, nz = np.divmod(key, big)
    ends = np.cumsum(rows) - 1
    j = np.tile(np.arange(ct), rt)
    w = -(-k // ct)
    cols, top = np.minimum(w, k - j * w).astype(np.int64), np.where(rows > 0, nz[ends], 0)
    return _Tiling(rows, cols, top, rows - np.bincount(of[nz == 0], minlength=T), j == 0,
                   (ct > 1) | (np.arange(T) == 0), j == ct - 1, nz, int(top.max()), bool((cols < 1).any()))


def _sorted_keys(tile: np.ndarray, counts: np.ndarray, big: int, T: int) -> np.ndarray:
    """``np.sort((tile * big + counts).ravel())`` (tiles below ``T``, counts below ``big``): numpy sorts uint16 keys
    by radix (stable), ~10-30x faster than an int64 sort of ten thousand keys; so by one 16-bit sort when every key
    fits, else by the counts then (stably) the tiles when each fits 16 bits, else the int64 sort. The sorted values
    are the same whatever the algorithm."""
    key = (tile * big + counts).ravel()
    if T * big <= 1 << 16:
        return np.sort(key.astype(np.uint16), kind="stable").astype(np.int64)
    if T <= 1 << 16 and big <= 1 << 16:
        order = np.argsort(counts.ravel().astype(np.uint16), kind="stable")
        order = order[np.argsort(np.broadcast_to(tile, counts.shape).ravel()[order].astype(np.uint16), kind="stable")]
        return key[order]
    return np.sort(key)


@dataclass(frozen=True)
class _Tiles:
    """The tiles of several tilings of one matrix side by side, then one empty tile (no rows, no columns)
    that pads the shorter tilings; a configuration reads its tiling's tiles through global tile indices
    (``gid``, [tile slots, configurations]). The row nonzeros of tile t sit at ``start[t]`` in ``shifted``,
    raised by ``t x shift`` (above every count): one ``np.searchsorted`` gives the Margins of every tile of
    every configuration, a query of tile t never reaching tile t + 1."""

    rows: np.ndarray
    cols: np.ndarray
    top: np.ndarray
    nonzero_rows: np.ndarray
    first_k: np.ndarray
    b_new: np.ndarray
    last: np.ndarray
    first: np.ndarray  # first tile of each tiling
    count: np.ndarray  # tiles of each tiling
    narrow: np.ndarray  # a tiling with a tile without columns
    start: np.ndarray
    shifted: np.ndarray
    shift: int
    keys: tuple = ()  # the tilings (format, rt, ct), in their order side by side

    def gid(self, which: np.ndarray) -> np.ndarray:
        """[tile slots, configurations]: the tiles of tiling ``which[c]`` of each configuration c, then the
        empty tile (as many slots as the most tiles of these tilings)."""
        slot = np.arange(int(self.count[which].max()))[:, None]
        return np.where(slot < self.count[which], self.first[which] + slot, len(self.rows) - 1)

    def margins(self, gid: np.ndarray, H: np.ndarray, nb: np.ndarray) -> np.ndarray:
        """[blocks, tile slots, configurations] (or [blocks, pairs] for 1-D ``gid``, ``H``, ``nb`` over (tile,
        configuration) pairs): the JDS Margin of each block (rows with more than b x H nonzeros), 0 past a
        tile's ``nb`` blocks (``formats.block_margins`` for every tile and H at once). Over pairs only the
        (block, pair) entries below the pair's blocks are searched (~10 % of the [most blocks, pairs] grid in a
        random batch: one pair's 36 blocks make every pair's rows 36 long), the rest of the grid 0;
        :meth:`margins_grid` searches every entry."""
        if np.ndim(gid) != 1 or not len(gid):
            return self.margins_grid(gid, H, nb)
        pair = np.arange(len(gid)).repeat(nb)
        b = np.arange(len(pair)) - (nb.cumsum() - nb).repeat(nb)  # the block of each entry
        g = gid[pair]
        q = np.minimum(b * H[pair], self.shift - 1) + g * self.shift
        out = np.zeros((int(np.maximum.reduce(nb)), len(gid)), np.int64)
        out[b, pair] = self.rows[g] - (self.shifted.searchsorted(q, side="right") - self.start[g])
        return out

    def margins_grid(self, gid: np.ndarray, H: np.ndarray, nb: np.ndarray) -> np.ndarray:
        """:meth:`margins` searching every entry of the grid (the reference of its pairs' path)."""
        b = np.arange(int(nb.max())).reshape((-1,) + (1,) * np.ndim(gid))
        q = np.minimum(b * H, self.shift - 1) + gid * self.shift
        inside = np.searchsorted(self.shifted, q, side="right") - self.start[gid]
        return np.where(b < nb, self.rows[gid] - inside, 0)


def _tiles(layer, keys: tuple[tuple[str, int, int], ...]) -> _Tiles:
    """The tilings ``keys`` (format, rt, ct) of a sparse layer's matrix side by side (:class:`_Tiles`)."""
    return _joined(layer, keys)[0]


def _joined(layer, keys: tuple[tuple[str, int, int], ...], base: tuple[_Tiles, np.ndarray] | None = None
            ) -> tuple[_Tiles, np.ndarray]:
    """(:func:`_tiles` of the tilings ``keys``, the buffer its ``shifted`` is a view of). With ``base`` (an earlier
    join and its buffer): its tilings first, their tiles at the indices they had, then ``keys``' -- only the new
    tilings' row counts written (into the buffer's free tail; a larger buffer when it is full), the old ones
    neither copied nor raised again. ``shift`` is above every count a row of the matrix can have (its columns),
    so every tiling met later fits the same shift; the Margins do not depend on it (a query stops at its tile's
    counts: :class:`_Tiles`). The new tilings are built together (:func:`_new_tiles`: the arrays
    :func:`_tiling` gives each one, side by side)."""
    from workloads.parametric import matrix_of

    mat = matrix_of(layer)
    counts = {(fmt, ct): None for fmt, _, ct in keys}  # each (format, column tiling)'s (m, ct) row counts
    for fmt, ct in counts:
        c = S._col_tile_counts(mat, ct)
        counts[fmt, ct] = c[S._col_tile_counts(mat, 0, jds=True)] if fmt == "jds" else c
    most = max([int(c.max()) for c in counts.values() if c.size] + [0])  # (every tiling's ``most``: each row is in a tile)
    if base is None:
        shift = max(int(layer.k), most) + 1
        t0, c0, old = 0, 0, None
    else:
        old, buf = base
        shift, t0, c0 = old.shift, len(old.rows) - 1, len(old.shifted)  # (the pad tile is the last)
        if most >= shift:  # (not met: a row's counts are at most the matrix's columns)
            return _joined(layer, tuple(old.keys) + tuple(keys))
    new, key = _new_tiles(mat.shape, keys, counts, t0, shift)
    pre = (lambda name: [getattr(old, name)[:-1]]) if old is not None else (lambda name: [])  # noqa: E731
    cat = lambda name, pad: np.concatenate(pre(name) + [new[name], np.array([pad])])  # noqa: E731
    rows = cat("rows", 0)
    new_rows = new["rows"]
    count = new["count"]
    first = t0 + np.cumsum(count) - count
    end = c0 + len(key)
    if old is None or end > len(buf):
        grown = np.empty(max(end, min(2 * end, max(_TILINGS_COUNTS, end)), 1 << 16), np.int64)
        grown[:c0] = old.shifted if old is not None else 0
        buf = grown
    if end > c0:
        np.take(key, new["order"], out=buf[c0:end], mode="clip")  # (valid indices; "clip" writes out unbuffered)
    start = np.concatenate(pre("start") + [c0 + np.cumsum(rows[t0:]) - rows[t0:]])
    if old is not None:
        count, first = np.concatenate((old.count, count)), np.concatenate((old.first, first))
    narrow = new["narrow"] if old is None else np.concatenate((old.narrow, new["narrow"]))
    shifted = buf[:end]
    # each new tile's largest count (its last sorted one) and rows without a nonzero (its counts equal to its
    # tile's shift: the new counts are sorted, tile after tile)
    low = np.arange(t0, t0 + len(new_rows)) * shift
    top = np.where(new_rows > 0, shifted[start[t0:-1] + new_rows - 1] - low, 0)
    nonzero = new_rows - (np.searchsorted(shifted[c0:], low, side="right") - (start[t0:-1] - c0))
    tiles = _Tiles(rows, cat("cols", 0), np.concatenate(pre("top") + [top, np.array([0])]),
                   np.concatenate(pre("nonzero_rows") + [nonzero, np.array([0])]), cat("first_k", False),
                   cat("b_new", False), cat("last", False), first, count, narrow, start, shifted, shift,
                   tuple(old.keys if old is not None else ()) + tuple(keys))
    return tiles, buf


def _new_tiles(shape: tuple[int, int], keys: tuple[tuple[str, int, int], ...], counts: dict[tuple, np.ndarray],
               t0: int, shift: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The tilings ``keys`` (format, rt, ct) of an m x k matrix, its (m, ct) row counts ``counts[format, ct]``
    (JDS: in the permuted row order), as the arrays :func:`_tiling` gives each, side by side, all tilings at once:
    per tile ``rows``, ``cols``, ``first_k``, ``b_new``, ``last``; per tiling ``count`` (tiles), ``narrow``; and
    the key ``count + tile x shift`` of every (tile, row) of every tiling (tiles numbered from ``t0``) with
    ``order``, the stable order that sorts them by tile -- tile after tile, each tile's counts increasing:
    ``key[order]`` is what :func:`_joined` writes. Each column of a (format, ct)'s counts is sorted once (stably,
    shared by every row tiling of it), its rows then take their tile numbers in each tiling (a gather from the
    tilings' row -> tile maps), and one stable sort by tile (a radix sort of 16-bit tile numbers) puts every
    tile's counts together, still increasing: the sorted values of :func:`_sorted_keys`, tile by tile."""
    m, k = shape
    rt = np.array([r for _, r, _ in keys], dtype=np.int64)
    ct = np.array([c for _, _, c in keys], dtype=np.int64)
    T = rt * ct
    first = np.cumsum(T) - T
    n_tiles = int(T.sum())
    of = np.repeat(np.arange(len(keys)), T)  # the tiling of each tile
    local = np.arange(n_tiles) - first[of]  # its index in its tiling (run order: row tile, then column tile)
    c_of, r_of = ct[of], rt[of]
    i = local // c_of
    j = local - i * c_of
    w = -(-k // c_of)
    rows = m // r_of + (i < m % r_of)  # (schedule._split: the first m % rt row tiles one row more)
    out = {"rows": rows, "cols": np.minimum(w, k - j * w), "first_k": j == 0, "b_new": (c_of > 1) | (local == 0),
           "last": j == c_of - 1, "count": T}
    out["narrow"] = np.logical_or.reduceat(out["cols"] < 1, first) if len(keys) else np.zeros(0, bool)
    by_group: dict[tuple, list[int]] = {}
    for x, (fmt, _, c) in enumerate(keys):
        by_group.setdefault((fmt, c), []).append(x)
    lead = np.flatnonzero(j == 0)  # each row tile's first tile, tiling after tiling
    tiles, vals = [], []
    for (fmt, c), xs in by_group.items():
        cnt = counts[fmt, c].T  # (ct, m)
        small = cnt.size and int(cnt.max()) < 1 << 16
        row = np.argsort(cnt.astype(np.uint16) if small else cnt, axis=1, kind="stable")  # each column's rows by count
        vals.append(np.take_along_axis(cnt, row, axis=1))
        at = lead[np.isin(of[lead], xs)]  # the row tiles of these tilings, in order
        tile_of_row = np.repeat(at, rows[at]).reshape(len(xs), m)  # each tiling's row -> its first-column tile
        tiles.append(tile_of_row[:, row] + np.arange(c)[:, None] if c > 1 else tile_of_row[:, row[0]][:, None])
    rel = np.concatenate([t.ravel() for t in tiles]) if tiles else np.zeros(0, np.int64)
    key = np.concatenate([((t + t0) * shift + v).ravel() for t, v in zip(tiles, vals)]) if tiles else rel
    # (more tiles than 16 bits hold: the stable sort by 16-bit digits, not the int64 merge sort -- ~25x slower)
    out["order"] = np.argsort(rel.astype(np.uint16), kind="stable") if n_tiles <= 1 << 16 else S._stable_argsort(rel)
    return out, key


def sparse_plans(layer, fmt, mapping, n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> dict:
    """:func:`dense_plans` for a sparse A in ``fmt`` (csr or jds) on ``mapping`` (ivj or ivs), names or
    arrays of names over the rows of ``cfg``: the tiles' Margins computed for all chain lengths H at once from
    each tile's sorted row nonzeros, configurations of all formats, mappings, tilings and ``lmm_opt`` values
    in one pass over their (tile, configuration) pairs (tiles of all tilings side by side, :class:`_Tiles`):
    each configuration's sums over its tiles first, then every candidate's counts from those sums, as
    :func:`schedule.point_features` does for one problem (every count an integer, exact in float64: the
    numbers of the tile walk, bit for bit; :func:`sparse_plans_padded`, the per-tile sums over padded
    [tile slots, candidates] arrays, is the reference it is tested against). Configurations with an empty
    tile (whose run order skips it) are left to :func:`schedule.schedule`: ``fallback``."""
    fallback, idx, pairs = _sparse_pairs(layer, fmt, mapping, cfg, lmm_opt)
    if len(idx):
        tiles, cp, tp, nbp, first, jds, ivs, sub, opt = pairs
        out = merge(len(cfg["H"]), [(idx, _pair_plans(tiles, cp, tp, nbp, first, jds, ivs, n, sub, opt))])
    else:
        out = merge(len(cfg["H"]), [])
    out["fallback"] = fallback
    return out


def mixed_plans(layer, fmt, mapping, n: int, m, k, nd: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray
                ) -> tuple[dict, np.ndarray, np.ndarray]:
    """:func:`dense_plans` of configurations ``:nd`` of ``cfg`` (products m x k x n, ``m``, ``k`` one number or one
    per configuration) and :func:`sparse_plans` of the others (``fmt``, ``mapping``: theirs, as there) in ONE pass
    over their candidates: the dense configurations' numbers in closed form (:func:`_dense_conf`) and the sparse
    ones' sums over their tiles (:func:`_pair_conf`) side by side in one [:data:`_CONF_ROWS`, configurations] block,
    then one :func:`_candidates` and every candidate's counts by the same integer formulas (:func:`_conf_plans`):
    the integer counts of each kind's own pass, so the same float64 bits (tested). (What an SpMM batch plans: its
    points' sparse runs and the dense references, or the points whose format is dense.) Returns (the plans of the
    configurations ``idx``, ``idx``: the dense ones then the sparse ones without an empty tile, in increasing
    order; ``fallback`` over the sparse ones, as :func:`sparse_plans`)."""
    dcfg = {key: cfg[key][:nd] for key in PLAN_INPUTS}
    scfg = {key: cfg[key][nd:] for key in PLAN_INPUTS}
    fallback, sidx, pairs = _sparse_pairs(layer, fmt, mapping, scfg, lmm_opt[nd:])
    dopt = lmm_opt[:nd]
    d_amax = _a_max(dcfg, np.ones(nd, bool))
    # both kinds' numbers written side by side into one block (dense columns, then sparse: no concatenation)
    conf = np.empty((len(_CONF_ROWS), nd + len(sidx)), np.int64)
    _dense_conf(m, k, dcfg, dopt, d_amax, out=conf[:, :nd])
    if not len(sidx):
        per = _per_numbers(conf, np.zeros(nd, bool), np.full(nd, _DENSE_URB), dcfg)
        return _conf_plans(n, dcfg, dopt, d_amax, conf, per), np.arange(nd), fallback
    _, s_amax = _pair_conf(*pairs, out=conf[:, nd:])
    sub, sopt = pairs[-2], pairs[-1]
    # the numbers of the planned configurations, dense then sparse: the given ones when none falls back
    joined = cfg if len(sidx) == len(fallback) else {key: np.concatenate((dcfg[key], sub[key])) for key in _PER_INPUTS}
    per = _per_numbers(conf, np.concatenate((np.zeros(nd, bool), pairs[5])),
                       np.concatenate((np.full(nd, _DENSE_URB), sub["e"])), joined)
    plans = _conf_plans(n, joined, np.concatenate((dopt, sopt)), np.concatenate((d_amax, s_amax)), conf, per)
    return plans, np.concatenate((np.arange(nd), nd + sidx)), fallback


#: the configuration numbers :func:`_per_numbers` and :func:`_candidates` read
_PER_INPUTS = ("arow", "L", "rt", "ct", "N", "b_hi")
#: A bytes of a dense row in a unit (4.4.2)
_DENSE_URB = C.a_unit_row_bytes("dense", 1)


def _per_numbers(conf: np.ndarray, jds: np.ndarray, urb: np.ndarray, cfg: dict[str, np.ndarray]) -> dict:
    """The problem numbers (:data:`PROBLEM_NUMBERS`) of configurations from their :data:`_CONF_ROWS` numbers
    ``conf``, JDS flags, A unit-row bytes ``urb`` and numbers ``cfg``: the LMM use without the optimisation is the
    largest tile's rows (JDS: its nonzero rows, ``TOPg``) x ``urb`` over half an LMM; blocks and slots the sums
    over the tiles."""
    half = cfg["L"] / 2
    return {"jds": jds, "tile_rows": cfg["arow"], "urb": urb, "half": half,
            "util_unopt": np.where(jds, conf[_TOPG], cfg["arow"]) * urb / half, "blocks": conf[_NB],
            "row_tiles": cfg["rt"], "col_tiles": cfg["ct"], "slots": conf[_SL]}


#: the numbers of ``schedule.configurations`` (arrays over configurations) that :func:`mixed_plans` reads
PLAN_INPUTS = ("arow", "acol", "L", "H", "W", "N", "e", "rt", "ct", "units", "b_hi")


def _dense_conf(m, k, cfg: dict[str, np.ndarray], opt: np.ndarray, a_max: np.ndarray,
                out: np.ndarray | None = None) -> np.ndarray:
    """:func:`_pair_conf`'s [:data:`_CONF_ROWS`, configurations] numbers of dense m x k products
    on configurations ``cfg`` in closed form, as :func:`dense_plans` sums them: a dense A cut ``rt x ct`` has row
    tiles summing to m (the largest ``ceil(m / rt)``) and ``ec`` column tiles of ``c0 + 1`` columns, the rest of
    ``c0``; a tile's blocks are ``ceil(width / H)``, its stored rows its rows x blocks. A dense slot is an element
    (``SL`` = m x k, of ``VALUE_BYTES``; ``MS`` the elements of the tiles of several blocks), no permutation, one A
    array. With these, :func:`_conf_plans`' formulas are :func:`dense_plans`' as integer identities (e.g. its A
    bytes without the optimisation ``e m (GB Xs + Xn)`` = ``(GB MS + (SL - MS)) e``, Xs + Xn = k). ``out``: an int64
    [:data:`_CONF_ROWS`, configurations] array to write them into (then returned), as :func:`_pair_conf`'s."""
    H, W, N, units = cfg["H"], cfg["W"], cfg["N"], cfg["units"]
    rt, ct = cfg["rt"], cfg["ct"]
    m, k = (x if np.shape(x) == H.shape else np.broadcast_to(x, H.shape) for x in (m, k))  # (an SpMM's: arrays)
    c0, ec = np.divmod(k, ct)
    c1, rest = c0 + 1, ct - ec
    B1, B0 = -(-c1 // H), -(-c0 // H)  # blocks of a column tile of each width
    SB = ec * B1 + rest * B0  # blocks of a row of tiles
    AG = np.where(opt, a_max, 1)
    GA1, GA0 = -(-B1 // AG), -(-B0 // AG)
    SGA = ec * GA1 + rest * GA0  # A groups of a row of tiles
    s1, s0 = B1 > 1, B0 > 1
    rmax = -(-m // rt)
    multi_ct = ct > 1
    zero, one = np.zeros(len(H), np.int64), np.ones(len(H), np.int64)
    conf = S.stack_rows((ct * m, rt * k, rt * SB, m * SB, m * k, rt, m, np.where(multi_ct, rt * ct, 1),
                     np.where(multi_ct, rt, 1) * k, rt, m, m * (ec * c1 * s1 + rest * c0 * s0),
                     rt * (ec * B1 * s1 + rest * B0 * s0), rt * SGA, rt * (ec * GA1 * c1 + rest * GA0 * c0), m * SGA,
                     rmax, np.minimum(AG, np.where(ec > 0, B1, B0)) * rmax, AG, N, W, units,
                     C.fill_cycles(units, W, "dense"), one, zero, opt, rt * ct, one * C.VALUE_BYTES), out=out)
    return conf


def _sparse_pairs(layer, fmt, mapping, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> tuple:
    """(``fallback``: the configurations of ``cfg`` with an empty tile, left to :func:`schedule.schedule`; ``idx``:
    the others; :func:`_pair_conf`'s arguments for those: their (tile, configuration) pairs, formats, mappings,
    numbers and ``lmm_opt``) of a sparse layer's configurations (:func:`sparse_plans`)."""
    G = len(cfg["H"])
    jds, ivs = np.asarray(fmt) == "jds", np.asarray(mapping) == "ivs"
    if jds.shape != (G,) or ivs.shape != (G,):  # (names for every configuration: the model's arrays of names)
        jds, ivs = np.broadcast_to(jds, (G,)), np.broadcast_to(ivs, (G,))
    rt, ct, H = cfg["rt"], cfg["ct"], cfg["H"]
    tiles, codes, (R, K), pos = _tilings_of(layer, set(zip(jds.tolist(), rt.tolist(), ct.tolist())))
    which = pos[codes.searchsorted((jds * R + rt) * K + ct)]  # each configuration's tiling
    cnt = tiles.count[which]  # tiles of each configuration (at least one)
    first = cnt.cumsum() - cnt  # first pair of each configuration: pairs configuration after configuration
    cp = np.arange(G).repeat(cnt)
    tp = np.arange(int(np.add.reduce(cnt))) - (first - tiles.first[which]).repeat(cnt)  # the tile of each pair
    nbp = -(-tiles.top[tp] // H[cp])  # blocks of each pair
    fallback = np.logical_or.reduceat(nbp == 0, first) | tiles.narrow[which] if G else np.zeros(0, bool)
    if fallback.any():  # the pairs of the other configurations
        keep = ~fallback[cp]
        idx = S.nonzero_at(~fallback)
        cp, tp, nbp = (np.cumsum(~fallback) - 1)[cp[keep]], tp[keep], nbp[keep]
        cnt = cnt[idx]
        first = np.cumsum(cnt) - cnt
    else:
        idx = np.arange(G)
    if not len(idx):
        return fallback, idx, None
    if len(idx) == G:  # every configuration (the common case): its numbers as they are, not gathered by idx
        sub, jd, iv, opt = dict(cfg), jds, ivs, lmm_opt
    else:
        sub = {key: v[idx] if np.ndim(v) else v for key, v in cfg.items()}
        jd, iv, opt = jds[idx], ivs[idx], lmm_opt[idx]
    # the pipeline fill of each configuration's block pass (per mapping, for the configurations on it)
    sub["fill"] = np.where(iv, C.fill_cycles(sub["units"], sub["W"], "ivs") if iv.any() else 0,
                           C.fill_cycles(sub["units"], sub["W"], "ivj") if not iv.all() else 0)
    return fallback, idx, (tiles, cp, tp, nbp, first, jd, iv, sub, opt)


def _pair_plans(tiles: _Tiles, cp: np.ndarray, tp: np.ndarray, nbp: np.ndarray, first: np.ndarray, jds: np.ndarray,
                ivs: np.ndarray, n: int, cfg: dict[str, np.ndarray], opt: np.ndarray) -> dict:
    """The plans of configurations without an empty tile from their (tile ``tp``, configuration ``cp``) pairs
    (configuration after configuration, the first of each at ``first``; ``nbp`` blocks each): per pair the
    numbers :func:`schedule.tile_sums` / :func:`schedule.tile_sums_swapped_a` read of a tile (JDS: the Margins,
    and with ``lmm_opt`` the packed A groups, :func:`schedule.pack_pairs`), summed per configuration in one
    ``np.add.reduceat`` (:func:`_pair_conf`); each candidate's counts then follow from its configuration's sums
    (:func:`_conf_plans`: a factor of the candidate times a sum over tiles is the sum of the per-tile products, in
    integers)."""
    conf, a_max = _pair_conf(tiles, cp, tp, nbp, first, jds, ivs, cfg, opt)
    return _conf_plans(n, cfg, opt, a_max, conf, _per_numbers(conf, jds.copy(), cfg["e"], cfg))


def _pair_conf(tiles: _Tiles, cp: np.ndarray, tp: np.ndarray, nbp: np.ndarray, first: np.ndarray, jds: np.ndarray,
               ivs: np.ndarray, cfg: dict[str, np.ndarray], opt: np.ndarray,
               out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the [:data:`_CONF_ROWS`, configurations] int64 numbers a candidate of each configuration reads, the largest
    AGRP of each) of sparse configurations from their (tile, configuration) pairs
    (:func:`_pair_plans`). ``out``: an int64 [:data:`_CONF_ROWS`, configurations] array (e.g. columns of a larger
    block) the numbers are written into and returned as, instead of a new array: the sums, maxima and rows go
    there directly (no concatenation of the three parts, nor of the block with another kind's)."""
    H, e, L = cfg["H"], cfg["e"], cfg["L"]
    rows = S.gather(tiles.rows, tp)
    Hp = S.gather(H, cp)
    stored, top = rows * nbp, rows
    jx = S.nonzero_at(jds[cp])  # the Margins of the JDS pairs only
    if len(jx):
        margins = tiles.margins(tp[jx], Hp[jx], nbp[jx])  # [blocks, JDS pairs]
        stored, top = stored.copy(), rows.copy()
        stored[jx] = margins.sum(axis=0)  # rows x their blocks = the Margins' sum
        top[jx] = tiles.nonzero_rows[tp[jx]]
    TOP = np.maximum.reduceat(top, first)
    a_max = _a_max(cfg, ~jds | (TOP * e > L / 2))
    all_opt, no_opt = bool(opt.all()), not opt.any()
    # A groups of each pair with the optimisation (AGRP = a_max of its configuration, every candidate's):
    # CSR ceil(blocks / AGRP); JDS packed (schedule.pack); without it they are not read
    AGp = np.where(opt, a_max, 1)[cp]
    GA, big, most = -(-nbp // AGp), np.minimum(AGp, nbp) * rows, AGp.copy()
    if len(jx) and not no_opt:
        at = jx if all_opt else jx[opt[cp[jx]]]
        m = margins if all_opt else np.take(margins, S.nonzero_at(opt[cp[jx]]), axis=1)
        budget = (L // 2) // e
        GA[at], big[at], most[at] = S.pack_pairs(m, nbp[at], budget[cp[at]], a_max[cp[at]])
    cols, fk, bn, la = (S.gather(x, tp) for x in (tiles.cols, tiles.first_k, tiles.b_new, tiles.last))
    several = nbp > 1  # tiles of several blocks: re-sent per B group without the optimisation
    slots = stored * Hp
    # every number of a configuration the candidates read (C-contiguous rows; the tiles of each configuration:
    # every one runs): sums over its tiles, maxima over them, its own numbers
    conf = np.empty((len(_CONF_ROWS), len(first)), np.int64) if out is None else out
    np.add.reduceat(S.stack_rows((rows, cols, nbp, stored, slots, fk, fk * rows, bn, bn * cols, la, la * rows,
                              several * slots, several * nbp, GA, GA * cols, GA * rows)), first, axis=1,
                    out=conf[:_N_SUMS])
    np.maximum.reduceat(S.stack_rows((top, big, most)), first, axis=1, out=conf[_N_SUMS:_N_SUMS + 3])
    S.stack_rows((cfg["N"], cfg["W"], cfg["units"], cfg["fill"], np.where(ivs, 2, 1), jds, opt,
              np.diff(np.append(first, len(cp))), np.full(len(first), formats.SLOT_BYTES)), out=conf[_N_SUMS + 3:])
    return conf, a_max


#: the rows of a configurations' number block (:func:`_pair_conf`, :func:`_dense_conf`): sums over its tiles of rows,
#: columns, blocks, stored rows, slots, first-column-tile rows (count, x rows), new-B-slab tiles (count, x columns),
#: last-column tiles (count, x rows), several-block tiles' slots and blocks, A groups (count, x columns, x rows);
#: the largest tile rows, A group slots and A group blocks; chips, threads, units, fill, A arrays, JDS, lmm_opt,
#: tiles, bytes of a stored slot
_CONF_ROWS = ("R", "Cs", "NB", "ST", "SL", "FK", "FKR", "BN", "BNC", "LA", "LAR", "MS", "MB", "GAs", "GAC", "GAR",
              "TOPg", "BIG", "MOST", "N", "W", "units", "fill", "arrays", "perm", "o", "TI", "sb")
_NB, _SL, _TOPG = (_CONF_ROWS.index(name) for name in ("NB", "SL", "TOPg"))
#: the rows of the block that are sums over the tiles (then three maxima: TOPg, BIG, MOST)
_N_SUMS = _TOPG


def _conf_plans(n: int, cfg: dict[str, np.ndarray], opt: np.ndarray, a_max: np.ndarray, conf: np.ndarray,
                per: dict[str, np.ndarray]) -> dict:
    """The plans of configurations from their numbers ``conf`` (:data:`_CONF_ROWS`), largest AGRP ``a_max`` and
    problem numbers ``per``: the candidates (:func:`_candidates`) and each one's counts from its configuration's
    numbers (integer formulas: the tile walk's counts, exact). What a count takes from the configuration alone is
    written once per configuration (:func:`_conf_terms`: ~2.5 candidates a configuration) and gathered at the
    candidates in one take; a candidate adds its B groups GB and BGRP (the same integers: products and sums of
    integers regrouped, far below 2**63). The terms are configuration-major ([configurations, 28]): the take copies
    a configuration's 224 bytes at once, then one transposing copy makes the count rows contiguous again (~0.35 M
    instructions fewer than a take of 28 rows element by element at ~1,600 candidates; the same array)."""
    all_opt, no_opt = bool(opt.all()), not opt.any()
    count, g, AG, BG = _candidates(n, cfg, True if all_opt else False if no_opt else opt, a_max)
    (N, X_st, X_ag, Y_ag, X_pa, A0, A1, Bm, Bs, Cl, Cd, LARv, STW, WS, NBF, LDm, BNd, DDm, LAd, D0, D1, SL, E0, E1,
     slots, most, pes, o) = np.ascontiguousarray(_conf_terms(conf).take(g, axis=0).T)
    o = o.astype(bool)
    GB = n // (BG * N)
    multi = GB > 1
    f = {
        "starts": GB * X_st, "a_groups": X_ag + GB * Y_ag, "pauses": GB * X_pa, "a_bytes": A0 + GB * A1,
        "b_bytes": np.where(multi, GB * Bm, Bs) * BG,
        "c_load_bytes": np.where(multi, GB * Cl, 0) * BG,
        "c_drain_bytes": np.where(multi, GB * Cd, LARv) * BG,
        "exec_cycles": GB * (STW * -(-BG // WS) + NBF),
        "load_desc_words": np.where(multi, GB * LDm, BNd),
        "drain_desc_words": np.where(multi, GB * DDm, LAd),
        "a_desc_words": D0 + GB * D1,
        "issued_macs": GB * SL * BG,
        "lmm_exec_bytes": GB * (E0 + BG * E1),
        "b_groups": GB,
        "a_group_slots": slots, "a_group_blocks": most,
    }
    block = _count_block(f, len(g), pes, o)
    return {"count": count, "feats": dict(zip(S.FEATURES, block)), "agrp": AG, "bgrp": BG, "per": per,
            "block": block}


def _conf_terms(conf: np.ndarray) -> np.ndarray:
    """[configurations, 28] int64 (C-contiguous: a configuration's terms side by side, for :func:`_conf_plans`' take
    of whole rows): what :func:`_conf_plans`' counts read of each configuration's numbers ``conf``
    (:data:`_CONF_ROWS`), in its order: per count, the configuration's terms of ``term0 + GB x term1`` (or of the
    several-B-group / one-B-group cases), the values (VB value bytes, desc DMA descriptor words, IB index bytes)
    with the optimisation ``o`` or without:

    starts ``GB (o ? GAs : NB)``; A groups ``(o ? GAs : 0) + GB (o ? 0 : NB)``; pauses ``GB (o ? NB - GAs : 0)``;
    A bytes ``A0 + GB A1``: ``o ? SL sb + R (perm ? IB : 0) : (SL - MS) sb + R IB perm`` and ``o ? 0 : MS sb``; B bytes
    ``(multi ? GB (o ? GAC : Cs) VB : BNC VB) BGRP``; C loads ``(multi ? GB ((o ? GAR : R) - FKR) VB : 0) BGRP``; C
    drains ``(multi ? GB (o ? GAR : R) VB : LAR VB) BGRP``; EXEC ``GB (ST W ceil(BGRP / (W SIMD)) + NB fill)``; load
    descriptors ``multi ? GB (2 (o ? GAs : TI) - FK) desc : BN desc``; drain descriptors ``multi ? GB (o ? GAs : TI)
    desc : LA desc``; A descriptors ``D0 + GB D1``: ``((o ? GAs : NB - MB) arrays + perm TI) desc`` and ``o ? 0 : MB
    arrays desc``; issued MACs ``GB SL BGRP``; LMM bytes ``GB (SL sb + BGRP (SL + 2 ST) VB)``; the A group slots
    and blocks; PEs ``units W``; ``o``."""
    (R, Cs, NB, ST, SL, FK, FKR, BN, BNC, LA, LAR, MS, MB, GAs, GAC, GAR, TOPg, BIG, MOST,
     N, W, units, fill, arrays, perm, o, TI, sb) = conf
    VB, desc = C.VALUE_BYTES, C.DMA_DESC_WORDS
    ob = o.astype(bool)
    zero = np.zeros(len(o), np.int64)
    x_cg = np.where(ob, GAs, TI)  # C groups over the tiles per B group (optimised: the A groups)
    x_cgr = np.where(ob, GAR, R)
    return np.stack((
        N, np.where(ob, GAs, NB), np.where(ob, GAs, zero), np.where(ob, zero, NB), np.where(ob, NB - GAs, zero),
        np.where(ob, SL * sb + R * np.where(perm, C.INDEX_BYTES, 0), (SL - MS) * sb + R * C.INDEX_BYTES * perm),
        np.where(ob, zero, MS * sb),
        np.where(ob, GAC, Cs) * VB, BNC * VB, (x_cgr - FKR) * VB, x_cgr * VB, LAR * VB,
        ST * W, W * C.SIMD, NB * fill,
        (2 * x_cg - FK) * desc, BN * desc, x_cg * desc, LA * desc,
        np.where(ob, GAs * arrays + perm * TI, (NB - MB) * arrays + perm * TI) * desc,
        np.where(ob, zero, MB * arrays * desc),
        SL, SL * sb, (SL + 2 * ST) * VB,
        np.where(ob, BIG, TOPg), np.where(ob, MOST, 1), units * W, o), axis=1)


#: the rows of :data:`schedule.FEATURES` before and after its three PIO word counts (conf, regv, range words)
_WORDS_AT = S.FEATURES.index("conf_words")
_HEAD_COUNTS, _TAIL_COUNTS = S.FEATURES[:_WORDS_AT], S.FEATURES[_WORDS_AT + 3:]
assert S.FEATURES[_WORDS_AT:_WORDS_AT + 3] == ("conf_words", "regv_words", "range_words")


def _count_block(f: dict[str, np.ndarray], n: int, pes: np.ndarray, opt: np.ndarray) -> np.ndarray:
    """[:data:`schedule.FEATURES`, n] float64: the integer counts ``f`` (every feature but the PIO words, arrays
    of n) cast to float64 in two ``np.stack`` calls (the cast ``astype(np.float64)`` makes, one count after the
    other), then the conf, regv and range words of ``pes`` = units x cols PEs per candidate, as
    ``costs.conf_words`` / ``regv_words`` / ``range_words`` and the regv formula of :func:`schedule.finish` (the
    same operations: ``units * cols`` computed once, then times each word count; ``opt``: each candidate's LMM
    optimisation). One block: the plans' counts
    are its rows, and the merge and the choice gather columns of it in one call each."""
    block = np.empty((len(S.FEATURES), n))
    S.stack_rows([f[k] for k in _HEAD_COUNTS], out=block[:_WORDS_AT])
    S.stack_rows([f[k] for k in _TAIL_COUNTS], out=block[_WORDS_AT + 3:])
    fs, fa = block[S.FEATURES.index("starts")], block[S.FEATURES.index("a_groups")]
    pauses = block[S.FEATURES.index("pauses")]
    block[_WORDS_AT] = pes * C.CONF_WORDS_PER_PE
    regv = (pes * C.REGV_WORDS_PER_PE).astype(np.float64)
    block[_WORDS_AT + 1] = np.where(opt, fa * regv + (fs - fa) * C.B_GROUP_WORDS + pauses * C.PAUSE_WORDS,
                                    fs * regv)
    block[_WORDS_AT + 2] = fs * (pes * C.RANGE_WORDS_PER_PE).astype(np.float64)
    return block


def sparse_plans_padded(layer, fmt, mapping, n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> dict:
    """:func:`sparse_plans` by per-tile sums over [tile slots, candidates] arrays (each configuration's tiles
    padded with the empty tile to the most of its group), configurations in four groups (``lmm_opt``, at most
    :data:`_FEW_TILES` tiles or more): the earlier path, kept as the reference :func:`sparse_plans` is tested
    against."""
    G = len(cfg["H"])
    jds = np.broadcast_to(np.asarray(fmt) == "jds", (G,))
    ivs = np.broadcast_to(np.asarray(mapping) == "ivs", (G,))
    rt, ct = cfg["rt"], cfg["ct"]
    tiles, codes, (R, K), pos = _tilings_of(layer, set(zip(jds.tolist(), rt.tolist(), ct.tolist())))
    which = pos[np.searchsorted(codes, (jds * R + rt) * K + ct)]  # each configuration's tiling
    gid = tiles.gid(which)
    H = cfg["H"]
    nb = -(-tiles.top[gid] // H)  # [tile slots, configs]
    fallback = ((nb == 0) & (gid < len(tiles.rows) - 1)).any(axis=0) | tiles.narrow[which]
    parts = []
    few = tiles.count[which] <= _FEW_TILES
    # the pipeline fill of each configuration's block pass, once for all of them (not per group and candidate)
    fills = [C.fill_cycles(cfg["units"], cfg["W"], mapping) if (ivs if mapping == "ivs" else ~ivs).any() else 0
             for mapping in ("ivj", "ivs")]
    cfg = dict(cfg, fill=np.where(ivs, fills[1], fills[0]))
    for opt in (False, True):
        for part in (few, ~few):  # most configurations have a few tiles: not padded to the most of any
            idx = np.flatnonzero(~fallback & (lmm_opt == opt) & part)
            if len(idx):
                slots = int(tiles.count[which[idx]].max())  # the tile slots these configurations use
                sub = {k: v[idx] if np.ndim(v) else v for k, v in cfg.items()}
                parts.append((idx, _sparse_group(tiles, _cols(gid[:slots], idx), jds[idx], ivs[idx], n, sub, opt,
                                                 H[idx], _cols(nb[:slots], idx))))
    out = merge(G, parts)
    out["fallback"] = fallback
    return out


#: the declared space's LMM sizes (KB), logical columns and sparse mappings (``ImaxModel.PARAMS``; tested equal):
#: what the tilings of its configurations range over
SPACE_LMM_KB, SPACE_COLS, SPACE_MAPPINGS = (4, 4096), (1, 2, 4, 8), ("ivj", "ivs")
#: a sparse layer met for the first time gets every tiling of the space at once when they hold at most this many
#: row counts side by side (spmm:n=512: 38 tilings, 19,456 counts; n=1024: 84, 122,880); else its batches' own
_SPACE_COUNTS = 1 << 18
#: LMM sizes of space_tilings' first block (spmm:n=512 and n=1024 reach (1, 1) within it)
_LMM_BLOCK = 256


@lru_cache(maxsize=64)
def space_tilings(m: int, k: int) -> tuple[frozenset[tuple[bool, int, int]], int]:
    """(every tiling (is JDS, rt, ct) that configurations of the declared space give an m x k sparse A: both
    formats, the mappings' A unit-row bytes for every column count, every LMM size -- :func:`schedule.tiling_bounds`
    and :func:`schedule.tilings_of_bounds` over them --, the sum of their column tiles). The bounds grow with the
    LMM, so the tilings shrink to (1, 1) and stay there: the LMM sizes are walked in blocks (:data:`_LMM_BLOCK`
    sizes, then 4x as many) until every unit-row size is at (1, 1), and along a block a tiling repeats over long runs, so only each
    run's first is kept before the distinct ones are taken (tested against every size one by one)."""
    urb = np.array(sorted({int(C.a_unit_row_bytes(mp, c)) for mp in SPACE_MAPPINGS for c in SPACE_COLS}), np.int64)
    pairs: set[tuple[int, int]] = set()
    lo, hi = SPACE_LMM_KB
    span = _LMM_BLOCK
    while lo <= hi:
        lmm = np.arange(lo, min(hi, lo + span - 1) + 1, dtype=np.int64) * 1024
        rows_max, cols_max, ok = S.tiling_bounds(urb[:, None], lmm[None, :])
        rt, ct = S.tilings_of_bounds(m, k, rows_max, cols_max, ok)
        code = rt * (int(ct.max()) + 1) + ct
        run = np.ones(code.shape, bool)
        run[:, 1:] = code[:, 1:] != code[:, :-1]
        pairs.update((r, c) for r, c, good in zip(rt[run].tolist(), ct[run].tolist(), ok[run].tolist()) if good)
        if ok[:, -1].all() and (rt[:, -1] == 1).all() and (ct[:, -1] == 1).all():
            break  # (every larger LMM: (1, 1), kept)
        lo, span = lo + len(lmm), 4 * span
    out = frozenset((j, r, c) for j in (False, True) for r, c in pairs)
    return out, sum(c for _, _, c in out)


#: id of a sparse layer -> (the layer, its tilings (is JDS, rt, ct), their :class:`_Tiles`, the tilings' codes in
#: increasing order, the codes' radices, each code's tiling (its position side by side), the buffer of the tiles'
#: row counts): the tilings a layer's batches met so far side by side, so that a batch whose tilings are all among
#: them builds nothing, and one that meets new ones adds only those (random points of the space meet ~20 of a
#: layer's ~40-80 tilings a call, a different set each call: a layer met first gets every tiling of the space,
#: :func:`space_tilings`, built together)
_TILINGS: dict[int, tuple] = {}
_TILINGS_MAX = 16  # layers
_TILINGS_PER_LAYER = 512  # past this many tilings of a layer, its entry restarts with a batch's own
_TILINGS_COUNTS = 1 << 22  # ... or past this many row counts side by side (rows x column tiles of each tiling)


def _tilings_of(layer, keys: set[tuple[bool, int, int]]) -> tuple[_Tiles, np.ndarray, tuple[int, int], np.ndarray]:
    """(:func:`_tiles` of a superset of the tilings ``keys`` (is JDS, rt, ct) of a sparse layer's matrix, the
    codes ``(is JDS x R + rt) x K + ct`` of its tilings in increasing order, (R, K), the position of each code's
    tiling among the tiles): the tilings met before are kept with the new ones (:data:`_TILINGS`), the new ones
    added after them (:func:`_joined`: the kept tiles neither copied nor rebuilt). A layer met for the first time
    gets every tiling of the declared space with the batch's own (:func:`space_tilings`, when they hold at most
    :data:`_SPACE_COUNTS` counts), all built in one pass: random points meet ~20 new tilings in a process's first
    call and a few more in each of the next ~10, each a join (~0.3-0.7 ms a call on spmm:n=512), where building
    all 38 at once costs ~0.4 ms once. A configuration reads its tiling's tiles at the position of its code; what
    the tiles hold does not depend on which other tilings sit beside them."""
    hit = _TILINGS.get(id(layer))
    if hit is not None and hit[0] is layer and keys <= hit[1]:
        return hit[2], hit[3], hit[4], hit[5]
    if hit is None or hit[0] is not layer:  # a layer met for the first time: every tiling of the space with its own
        space, space_cols = space_tilings(int(layer.m), int(layer.k))
        if layer.m * (space_cols + sum(ct for _, _, ct in keys - space)) <= min(_SPACE_COUNTS, _TILINGS_COUNTS):
            keys = keys | space
    known = hit[1] if hit is not None and hit[0] is layer and len(hit[1]) + len(keys) <= _TILINGS_PER_LAYER else set()
    every = frozenset(known | keys)
    if known and len(hit[2].shifted) + sum(ct for _, _, ct in keys - known) * layer.m > _TILINGS_COUNTS:
        every = frozenset(keys)  # a large matrix: its tilings are not all kept side by side
        known = set()
    new = tuple(("jds" if j else "csr", r, c) for j, r, c in sorted(every - known))
    tiles, buf = _joined(layer, new, (hit[2], hit[6]) if known else None)
    order = [(f == "jds", r, c) for f, r, c in tiles.keys]
    R, K = max(r for _, r, _ in order) + 1, max(c for _, _, c in order) + 1
    codes = np.array([(j * R + r) * K + c for j, r, c in order], dtype=np.int64)
    pos = np.argsort(codes, kind="stable")
    if hit is None and len(_TILINGS) >= _TILINGS_MAX:
        _TILINGS.clear()
    _TILINGS[id(layer)] = (layer, every, tiles, codes[pos], (R, K), pos, buf)
    return tiles, codes[pos], (R, K), pos


#: configurations with at most this many tiles are planned apart from those with more (whose tile slots would
#: pad theirs: one tiling of 64 tiles made every configuration's Margins, packing and sums 64 slots wide)
_FEW_TILES = 4


def _sparse_group(tiles: _Tiles, gid: np.ndarray, jds: np.ndarray, ivs: np.ndarray, n, cfg, opt: bool, H,
                  nb) -> dict:
    """The plans of configurations sharing ``lmm_opt`` (no empty tile), over their tiles ``gid``; ``jds``,
    ``ivs``: each configuration's format and mapping."""
    rows = tiles.rows[gid]
    stored, top = rows * nb, rows
    jx = np.flatnonzero(jds)  # the Margins of the JDS configurations only
    if len(jx):
        gid_j, nb_j = _cols(gid, jx), _cols(nb, jx)
        margins = tiles.margins(gid_j, H[jx], nb_j)
        top = rows.copy()
        stored[:, jx] = margins.sum(axis=0)  # rows x their blocks = the Margins' sum
        top[:, jx] = tiles.nonzero_rows[gid_j]
    a_max = _a_max(cfg, ~jds | (top.max(axis=0) * cfg["e"] > cfg["L"] / 2))
    count, g, AG, BG = _candidates(n, cfg, bool(opt), a_max)
    gid_g = _cols(gid, g)
    tc = {"rows": _cols(rows, g), "cols": tiles.cols[gid_g], "blocks": _cols(nb, g), "stored": _cols(stored, g),
          "slots": _cols(stored * H, g), "top": _cols(top, g), "first_k": tiles.first_k[gid_g],
          "b_new": tiles.b_new[gid_g], "last": tiles.last[gid_g]}
    W, units, iv, jd = cfg["W"][g], cfg["units"][g], ivs[g], jds[g]
    ch = S.Chain(n, cfg["N"][g], W, units, cfg["fill"][g], formats.SLOT_BYTES, np.where(iv, 2, 1), jd)
    f = dict(zip(S.FEATURES, np.zeros((len(S.FEATURES), len(g)))))  # rows of one block: one allocation
    if opt:
        GA, big = -(-tc["blocks"] // AG), np.minimum(AG, tc["blocks"]) * tc["rows"]
        most = np.broadcast_to(AG, gid_g.shape)
        cj = np.flatnonzero(jd)  # JDS candidates: packed groups
        if len(cj):
            # packed once per JDS configuration: its candidates share AGRP (the largest, a_max) and the packing
            # does not depend on BGRP
            budget = (cfg["L"] // 2) // cfg["e"]
            packed = S.pack(margins, nb_j, budget[jx], a_max[jx])
            at = np.searchsorted(jx, g[cj])
            most = most.copy()
            for out, p in zip((GA, big, most), packed):
                out[:, cj] = p[:, at]
        S.tile_sums(f, ch, tc, GA, big, most, BG)
    else:
        S.tile_sums_swapped_a(f, ch, tc, BG)
    S.finish(f, ch, tc, BG, opt)
    half = cfg["L"] / 2
    per = {"jds": jds.copy(), "tile_rows": cfg["arow"], "urb": cfg["e"], "half": half,
           "util_unopt": np.where(jds, top.max(axis=0), cfg["arow"]) * cfg["e"] / half, "blocks": nb.sum(axis=0),
           "row_tiles": cfg["rt"], "col_tiles": cfg["ct"], "slots": (stored * H).sum(axis=0)}
    return {"count": count, "feats": f, "agrp": AG, "bgrp": BG, "per": per}


def _cols(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[:, idx]`` as a C-contiguous array (``np.take``; ``a[:, idx]`` is laid out column-major, and the
    element-wise passes over [tiles, candidates] then run at about half speed)."""
    return np.take(a, idx, axis=1)


def merge(G: int, parts: list[tuple[np.ndarray, dict]]) -> dict:
    """Plans of groups of configurations (their indices among G) in configuration order."""
    if len(parts) == 1 and len(parts[0][0]) == G:  # one part covering every configuration in order
        return parts[0][1]
    count = np.zeros(G, np.int64)
    owner, per = [], {}
    for idx, d in parts:
        count[idx] = d["count"]
        owner.append(np.repeat(idx, d["count"]))
        for k, v in d["per"].items():
            if k not in per:  # (not setdefault: its default would be built for every part)
                per[k] = np.zeros(G, np.asarray(v).dtype)
            per[k][idx] = v
    if not parts:
        return {"count": count, "feats": {k: np.zeros(0) for k in S.FEATURES}, "agrp": np.zeros(0, np.int64),
                "bgrp": np.zeros(0, np.int64), "per": per}
    owner = np.concatenate(owner)
    order = slice(None) if (owner[1:] >= owner[:-1]).all() else np.argsort(owner, kind="stable")
    cat = lambda key: np.concatenate([d[key] for _, d in parts])[order]  # noqa: E731
    feats, block = _merged_feats([d["feats"] for _, d in parts], order, [d.get("block") for _, d in parts])
    out = {"count": count, "feats": feats, "agrp": cat("agrp"), "bgrp": cat("bgrp"), "per": per}
    if block is not None:
        out["block"] = block
    return out


def merge_in_place(G: int, parts: list[tuple[np.ndarray, dict]]) -> dict:
    """:func:`merge` without putting the candidates in configuration order: they stay part after part (each
    configuration's candidates are one part's, in their order), and ``first`` gives where each configuration's
    start (0 for those without candidates). The problem numbers stay part after part too: ``per`` holds them for
    the parts' configurations only, configuration g's at ``per_row[g]`` (one concatenation per number, not a zero
    array over every configuration and a scatter per part). The same candidates and numbers for each
    configuration; no argsort of the owners nor take of every count when the parts interleave (a network's dense
    parts, grouped by B columns n, own configurations spread over the pairs)."""
    if len(parts) == 1 and len(parts[0][0]) == G:  # one part covering every configuration in order
        return parts[0][1]
    if not parts:
        return merge(G, parts)
    count, first, row = np.zeros(G, np.int64), np.zeros(G, np.int64), np.zeros(G, np.int64)
    vals: dict[str, list] = {}
    off = rows = 0
    for idx, d in parts:
        c = np.asarray(d["count"], dtype=np.int64)
        count[idx] = c
        first[idx] = np.cumsum(c) - c + off
        off += int(c.sum())
        row[idx] = np.arange(rows, rows + len(idx))
        rows += len(idx)
        if d["per"].keys() != parts[0][1]["per"].keys():
            return merge(G, parts)  # (parts with other problem numbers: merge's zero-filled arrays)
        for k, v in d["per"].items():
            if type(v) is not np.ndarray or v.shape != idx.shape:  # (a number for every configuration of the part)
                v = np.broadcast_to(v, idx.shape)
            vals.setdefault(k, []).append(v)
    per = {k: _end_to_end(vs) for k, vs in vals.items()}
    cat = lambda key: _end_to_end([d[key] for _, d in parts])  # noqa: E731
    feats, block = _merged_feats([d["feats"] for _, d in parts], slice(None), [d.get("block") for _, d in parts])
    out = {"count": count, "first": first, "feats": feats, "agrp": cat("agrp"), "bgrp": cat("bgrp"), "per": per,
           "per_row": row}
    if block is not None:
        out["block"] = block
    return out


def _end_to_end(vs: list) -> np.ndarray:
    """The parts' arrays ``vs`` end to end in the dtype of the first (as merge's arrays, assigned part by part, hold
    them): ``np.concatenate``; one part's own array (a writeable ndarray, not a broadcast view) as it is -- a
    concatenation of one array is a copy of it (an SpMM batch's plans are one part: ~0.1 M instructions a call)."""
    if len(vs) == 1 and type(vs[0]) is np.ndarray and vs[0].flags.writeable:
        return vs[0]
    return (np.concatenate(vs) if all(v.dtype == vs[0].dtype for v in vs[1:]) else
            np.concatenate(vs, dtype=vs[0].dtype, casting="unsafe"))


def _merged_feats(feats: list[dict[str, np.ndarray]], order,
                  blocks: list[np.ndarray | None] | None = None) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """(each count of ``schedule.FEATURES`` over the candidates of every part (``feats``, part after part), in
    ``order``; the [FEATURES, candidates] block whose rows they are, or None): when every count is a float64 row
    (as every plan gives), all at once -- each part's counts stacked (or its ``blocks`` entry, a plan's own block
    of those rows: :func:`_count_block`), the parts concatenated, the candidates taken in order, one row per count
    (views of one block: ~4 numpy calls, not two per count) -- else count by count (the same values either way)."""
    if all(type(v) is np.ndarray and v.dtype == np.float64 and v.ndim == 1 for f in feats for v in f.values()):
        blocks = blocks or [None] * len(feats)
        if len(feats) == 1 and blocks[0] is not None:  # one part's own block as it is (a concatenation copies it)
            block = blocks[0]
        else:
            block = np.concatenate([np.stack([f[k] for k in S.FEATURES]) if b is None else b
                                    for f, b in zip(feats, blocks)], axis=1)
        if type(order) is not slice:
            block = np.take(block, order, axis=1)
        return dict(zip(S.FEATURES, block)), block
    return {k: np.concatenate([f[k] for f in feats])[order] for k in S.FEATURES}, None


#: a configuration's numbers besides its candidates' counts (LMM use, tiles, slots)
PROBLEM_NUMBERS = ("jds", "tile_rows", "urb", "half", "util_unopt", "blocks", "row_tiles", "col_tiles", "slots")


def from_schedule(sch: S.Schedule) -> dict:
    """The plans of one scalar schedule (see :func:`merge`), kept on the (cached) schedule."""
    if sch.plan is None:
        sch.plan = _plan_of(sch)
    return sch.plan


def _plan_of(sch: S.Schedule) -> dict:
    p = sch.problem
    half = p.lmm_bytes / 2
    first = max((int(t.margins[0]) for t in p.tiles if t.blocks), default=0)
    util_unopt = (first if p.fmt == "jds" else p.tile_rows) * p.unit_row_bytes / half
    numbers = (p.fmt == "jds", p.tile_rows, p.unit_row_bytes, half, util_unopt, sum(t.blocks for t in p.tiles),
               p.row_tiles, p.col_tiles, p.stored_slots)
    return {"count": np.array([len(sch.agrp)]), "feats": sch.feats, "agrp": sch.agrp, "bgrp": sch.bgrp,
            "per": {k: np.array([v]) for k, v in zip(PROBLEM_NUMBERS, numbers)}}

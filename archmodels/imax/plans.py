"""Dense-product schedules of many IMAX configurations at once (spec `imax.md` §3, §5; issue 15).

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

from functools import lru_cache

import numpy as np

from . import costs as C
from . import schedule as S


@lru_cache(maxsize=256)
def _divisors(n: int) -> np.ndarray:
    d = np.arange(1, int(np.sqrt(n)) + 1)
    d = d[n % d == 0]
    return np.unique(np.concatenate([d, n // d]))


def _col_sum(ec, ct, c0, h) -> np.ndarray:
    """Sum over the column tiles of ``h(width)``: ``ec`` tiles of ``c0 + 1`` columns, the rest of ``c0``."""
    return ec * h(c0 + 1) + (ct - ec) * h(c0)


def dense_plans(m: int, k: int, n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> dict:
    """The candidates and their counts (``schedule.FEATURES``) of the dense product m x k x n for each
    schedulable configuration of ``cfg`` (:func:`schedule.configurations`, all rows dense), flattened:
    ``count`` per configuration, then ``feats``, ``agrp``, ``bgrp`` per candidate and the configurations'
    problem numbers (``per``: tile rows, A bytes per row and block, half an LMM, blocks, tiles, slots)."""
    H, W, N, L, units = cfg["H"], cfg["W"], cfg["N"], cfg["L"], cfg["units"]
    rt, ct, arow, acol = cfg["rt"], cfg["ct"], cfg["arow"], cfg["acol"]
    urb = C.a_unit_row_bytes("dense", 1)
    e = C.VALUE_BYTES
    # candidates: (4.4.3, 4.4.2) the largest AGRP; BGRP: divisors b of n / nchip with b <= the bound
    a_max = np.minimum((acol + S.pad_of(acol, H)) // H, ((L / 2) // (arow * urb)).astype(np.int64))
    divs = _divisors(n)[::-1]
    b = divs[None, :] // N[:, None]
    ok = (divs[None, :] % N[:, None] == 0) & (b <= cfg["b_hi"][:, None]) & (b >= 1)
    ok &= lmm_opt[:, None] | (np.cumsum(ok, axis=1) == 1)  # without the optimisation: the largest BGRP only
    count = ok.sum(axis=1)
    g = np.repeat(np.arange(len(H)), count)
    BG = b[ok]
    AG = np.where(lmm_opt[g], a_max[g], 1)
    opt = lmm_opt[g]
    H_, W_, rt_, ct_, units_ = H[g], W[g], rt[g], ct[g], units[g]
    c0, ec = np.divmod(k, ct_)
    GB = n // (BG * N[g])
    multi = GB > 1
    blocks = lambda c: -(-c // H_)  # noqa: E731 - blocks of a column tile of width c
    SB = _col_sum(ec, ct_, c0, blocks)
    # with the optimisation: A groups per column tile GA = ceil(blocks / AGRP); without: one block a start
    SGA = np.where(opt, _col_sum(ec, ct_, c0, lambda c: -(-blocks(c) // AG)), SB)
    starts = GB * rt_ * SGA
    pauses = np.where(opt, GB * rt_ * (SB - SGA), 0)
    c_groups = np.where(opt, SGA, ct_)  # C ranges a row of tiles visits per B group
    b_cols = np.where(opt, _col_sum(ec, ct_, c0, lambda c: -(-blocks(c) // AG) * c), k)
    b_loads_cols = np.where(multi, rt_ * GB * b_cols, np.where(ct_ > 1, rt_, 1) * k)
    drains = np.where(multi, rt_ * GB * c_groups, rt_)  # tiles' C drains (one per row range with one B group)
    drain_rows = np.where(multi, GB * m * c_groups, m)
    partial_rows = np.where(multi, GB * m * (c_groups - 1), 0)
    b_loads = np.where(multi, rt_ * GB * c_groups, np.where(ct_ > 1, rt_ * ct_, 1))
    partial = np.where(multi, rt_ * GB * (c_groups - 1), 0)
    sends = lambda c: np.where(blocks(c) > 1, GB, 1)  # noqa: E731 - unoptimised: A re-sent per B group
    a_bytes = np.where(opt, m * k * e, e * m * _col_sum(ec, ct_, c0, lambda c: sends(c) * c))
    a_desc = np.where(opt, rt_ * SGA, rt_ * _col_sum(ec, ct_, c0, lambda c: sends(c) * blocks(c)))
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
        "b_groups": GB, "conf_words": C.conf_words(units_, W_),
        "a_group_slots": np.where(opt, np.minimum(AG, blocks(-(-k // ct_))), 1) * -(-m // rt_),
        "a_group_blocks": AG,
    }
    f = {key: np.asarray(v, dtype=np.float64) for key, v in f.items()}
    regv = C.regv_words(units_, W_).astype(np.float64)
    f["regv_words"] = np.where(opt, f["a_groups"] * regv + (f["starts"] - f["a_groups"]) * C.B_GROUP_WORDS
                               + f["pauses"] * C.PAUSE_WORDS, f["starts"] * regv)
    f["range_words"] = f["starts"] * C.range_words(units_, W_).astype(np.float64)
    half = L / 2
    per = {"jds": np.zeros(len(H), bool), "tile_rows": arow, "urb": np.full(len(H), urb), "half": half,
           "util_unopt": arow * urb / half, "blocks": rt * _col_sum(np.divmod(k, ct)[1], ct, k // ct,
                                                                       lambda c: -(-c // H)),
           "row_tiles": rt, "col_tiles": ct, "slots": np.full(len(H), m * k)}
    return {"count": count, "feats": {key: f[key] for key in S.FEATURES}, "agrp": AG, "bgrp": BG, "per": per}

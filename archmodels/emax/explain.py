"""Why a plan was chosen: loop nest, tiles, where each datum lives, and the runner-up (issue 12).

The mapper (:func:`archmodels.emax.model._choose`) picks one plan per layer and design point; these
functions turn the chosen plan and the runner-up (the best other plan by the same criterion) into the
per-layer contract keys ``loop_nest``, ``tiles``, ``placement``, ``runner_up`` and ``runner_up_lost``
(``dse evaluate ... --explain`` prints them) and the ratios :data:`RATIO_KEYS`. Strings are built once per distinct (plan, runner-up,
verdict), not per design point, so a batch of many points pays for a handful.
"""

from __future__ import annotations

import numpy as np

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


def verdicts(criterion: np.ndarray, worse: np.ndarray, more_dram: np.ndarray, none: np.ndarray) -> np.ndarray:
    """Why each runner-up lost, as one of a few phrases (numbers are in the ``runner_up_*_ratio`` metrics)."""
    return np.select([none, worse, more_dram],
                     ["no other plan within the criterion's tolerance", "worse " + criterion.astype(str),
                      "tied on " + criterion.astype(str) + " (within the tolerance), more DRAM traffic"],
                     "tied on " + criterion.astype(str) + " and DRAM traffic, more energy or later in order"
                     ).astype(object)


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


def explain_labels(tab: PlanTable, rows: np.ndarray, runner: np.ndarray, verdict: np.ndarray) -> dict[str, np.ndarray]:
    """The explain keys of chosen plans ``rows`` with runner-up plans ``runner`` (-1: none) and verdicts."""
    out = {"loop_nest": by_content(tab, rows, loop_nest), "tiles": by_content(tab, rows, tiles),
           "placement": by_content(tab, rows, placement)}
    ru = np.full(len(rows), "-", dtype=object)
    has = np.asarray(runner) >= 0
    ru[has] = by_content(tab, np.asarray(runner)[has], _runner_text)
    out["runner_up"] = ru
    out["runner_up_lost"] = np.asarray(verdict, dtype=object)
    return out


#: what :func:`~archmodels.emax.traffic.schedule_label` reads
_SCHEDULE_READS = ("psum_home", "bands", "stage_w")


@_reads(_SCHEDULE_READS, ("name", "band_dim"))
def _runner_text(tab: PlanTable, r: int) -> str:
    return f"{tab.label['name'][r]} {_schedule(tab, r)}"


@_reads(_SCHEDULE_READS, ("band_dim",))
def schedule_text(tab: PlanTable, r: int) -> str:
    from .traffic import schedule_label

    return str(schedule_label(tab, np.array([r]))[0])


def _schedule(tab: PlanTable, r: int) -> str:
    from .traffic import schedule_label

    return f"({schedule_label(tab, np.array([r]))[0]})"

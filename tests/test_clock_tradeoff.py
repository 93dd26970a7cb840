"""Clock costs something (docs/technology.md): the demo study's time-vs-area front uses the clock as a trade-off."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from archmodels import get_model
from dse import config
from dse.sweep import Grid

ROOT = Path(__file__).resolve().parents[1]


def _front(time_s: np.ndarray, area: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Indices of the feasible points no other feasible point beats in both time and area."""
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((area[idx], time_s[idx]))]
    out, best = [], np.inf
    for i in order:
        if area[i] < best:
            out.append(i)
            best = area[i]
    return np.array(out)


def test_quickstart_front_uses_more_than_the_top_clock():
    """A sweep of the quickstart space (every grid point, the study's constraint): the Pareto front of time and
    area holds several clocks, not only the upper bound, because logic synthesised near the node's nominal
    clock is larger (tech.logic_area_factor)."""
    study = config.load(ROOT / "studies" / "quickstart.yaml")
    grid = Grid.of(study)
    model = get_model(study.arch)
    rows = [{**study.fixed, **r} for r in grid.rows(np.arange(grid.size))]
    res = model.evaluate_points(study.workloads[0], rows)
    t, a = res.totals["time_s"], res.totals["area_mm2"]
    front = _front(t, a, res.feasible & (a <= 60))
    clocks = {rows[i]["clock_mhz"] for i in front}
    top = max(r["clock_mhz"] for r in rows)
    assert len(front) >= 10
    assert len(clocks) >= 3 and min(clocks) < top
    # the same sweep with the clock made free again (no synthesis penalty) puts every front point at the top
    import archmodels.tech as tech

    keep = tech.AREA_PENALTY_MAX
    try:
        tech.AREA_PENALTY_MAX = 0.0
        free = model.evaluate_points(study.workloads[0], rows)
    finally:
        tech.AREA_PENALTY_MAX = keep
    ft, fa = free.totals["time_s"], free.totals["area_mm2"]
    front_free = _front(ft, fa, free.feasible & (fa <= 60))
    assert {rows[i]["clock_mhz"] for i in front_free} == {top}  # the degenerate front of a free clock

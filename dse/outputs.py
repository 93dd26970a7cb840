"""Write a study's outputs: trials.csv, pareto.csv and the Pareto plot.

Kept apart from :mod:`dse.results` (tables, CSV, summaries) and
:mod:`dse.plots` (figures) so that both stay free of each other: this module
is the one place that uses both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from . import plots
from .results import Table, write_csv


def write_outputs(out_dir: Path, table: Table, prefix: str = "", title: str | None = None,
                  bounds: Sequence[plots.Bound] = ()) -> dict[str, Path]:
    """Write trials.csv, pareto.csv and pareto.png for ``table`` into ``out_dir``.

    ``title`` (model, workload, sampler) heads the plot; ``bounds`` are the
    study's constraints, drawn where they bound a plotted objective.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    front = table.pareto_mask()
    pareto_rows = [r for r, f in zip(table.rows, front) if f]
    if pareto_rows:
        first = table.objectives[0]
        rev = table.directions[0] == "maximize"
        pareto_rows.sort(key=lambda r: r[first], reverse=rev)
    paths = {
        "trials": out_dir / f"{prefix}trials.csv",
        "pareto": out_dir / f"{prefix}pareto.csv",
        "plot": out_dir / f"{prefix}pareto.png",
    }
    write_csv(paths["trials"], table.rows)
    write_csv(paths["pareto"], pareto_rows)
    plots.pareto_plot(paths["plot"], table, front, title=title, bounds=bounds)
    return paths

"""Write a study's outputs: trials.csv, pareto.csv and the Pareto plot.

Kept apart from :mod:`dse.results` (tables, CSV, summaries) and
:mod:`dse.plots` (figures) so that both stay free of each other: this module
is the one place that uses both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import plots
from .results import Table, read_meta, write_csv, write_meta

if TYPE_CHECKING:
    from .config import Study


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


def write_study_outputs(st: Study) -> tuple[Table, dict[str, Path]]:
    """Read a study's trials from its storage and write study.json and the outputs above."""
    from . import config, report, study as study_mod

    ost = study_mod.open_study(st, load_only=True)
    objectives = [o.metric for o in st.objectives]
    table = Table(study_mod.trial_rows(ost, objectives), objectives, [o.direction for o in st.objectives])
    copy = config.write_copy(st, st.out_dir)
    study_file = st.path
    if Path(st.path).resolve() == (st.out_dir / copy).resolve() and (st.out_dir / "study.json").exists():
        study_file = read_meta(st.out_dir).get("study_file", st.path)  # read through the copy: keep the original
    write_meta(st.out_dir, {
        "name": st.name, "study_file": study_file, "study_copy": copy, "arch": st.arch,
        "workloads": list(st.workloads), "storage": st.storage, "objectives": objectives,
        "directions": table.directions, "constraints": [c.key for c in st.constraints],
    })
    paths = write_outputs(st.out_dir, table, title=report.study_title(st), bounds=report.bounds_of(st))
    return table, paths

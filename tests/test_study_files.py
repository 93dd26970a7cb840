"""Every study shipped in studies/ loads against its model and runs (3 trials)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dse import config, study as study_mod

ROOT = Path(__file__).resolve().parents[1]
STUDIES = sorted((ROOT / "studies").glob("*.yaml"))


@pytest.mark.parametrize("path", STUDIES, ids=[p.stem for p in STUDIES])
def test_study_file_runs(path, tmp_path):
    overrides = {"n_trials": 3, "batch_size": 3, "n_jobs": 1, "results_dir": str(tmp_path), "storage": None,
                 "timeout": None}
    st = config.load(path, overrides)
    summary = study_mod.run(st, overrides, progress=False)
    from dse.worker import finite_size

    expect = min(3, finite_size(st) or 3)  # a paper configuration (all fixed) is one design
    assert summary.completed == expect
    from dse.cli import _write_study_outputs

    _write_study_outputs(st, summary.completed, summary.elapsed_s)
    with (tmp_path / st.name / "trials.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == expect
    assert all(r["total.time_s"] for r in rows)

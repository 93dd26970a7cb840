"""dse report: the HTML structure (no browser), the figures' units, the chosen points, Optuna's own tools."""

from __future__ import annotations

import base64
import csv
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst

from dse import config, report, results, study as study_mod
from dse.cli import _write_study_outputs
from dse.units import scale_for

from .conftest import write

SECTIONS = ("run", "pareto", "points", "breakdown", "convergence", "importance")

STUDY = """
name: {name}
arch: multicore
workload: fc2
space:
  cores: {{low: 1, high: 64, log: true}}
  ni: {{choices: [8, 16, 32]}}
  placement: [B, T1, TR1, T2, TR2]
  clock_mhz: {{low: 300, high: 1000, step: 50}}
  weight_buffer_kb: 512
  shm_kb: 1024
objectives:
{objectives}
constraints:
  - total.area_mm2 <= 30
sampler: {{name: nsga2, seed: 0, options: {{population_size: 20}}}}
n_trials: 60
batch_size: 20
results_dir: {results}
"""
TWO = "  - total.time_s: minimize\n  - total.area_mm2: minimize"
THREE = TWO + "\n  - total.energy_j: minimize"


class Page(HTMLParser):
    """Collects section ids, image sources, links, table rows and external references."""

    def __init__(self, text: str):
        super().__init__()
        self.sections: list[str] = []
        self.images: list[str] = []
        self.external: list[str] = []
        self.rows_in: dict[str, int] = {}
        self._section: str | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self._section = a.get("id")
            self.sections.append(self._section)
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "tr" and self._section:
            self.rows_in[self._section] = self.rows_in.get(self._section, 0) + 1
        for key in ("src", "href"):
            v = a.get(key) or ""
            if key in a and not (v.startswith("data:") or v.startswith("#")):
                self.external.append(v)
        if tag == "link":
            self.external.append(a.get("href", ""))


def run_study(tmp_path: Path, name: str, objectives: str = TWO):
    path = write(tmp_path / f"{name}.yaml", STUDY.format(name=name, objectives=objectives, results=tmp_path / "res"))
    st = config.load(path)
    summary = study_mod.run(st, progress=False)
    _write_study_outputs(st, summary.completed, summary.elapsed_s, report=True)
    return st


@pytest.fixture(scope="module")
def two_obj(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report2")
    st = run_study(tmp, "rep2")
    return st, st.out_dir / "report.html"


def _png(uri: str) -> bytes:
    assert uri.startswith("data:image/png;base64,"), uri[:40]
    data = base64.b64decode(uri.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return data


def test_report_has_every_section_and_only_embedded_images(two_obj):
    st, html = two_obj
    text = html.read_text()
    page = Page(text)
    assert page.sections == list(SECTIONS)
    assert page.external == []  # opens offline: no fetched resource
    # Pareto plot, three breakdowns (best time, best area, knee), convergence, importances
    assert len(page.images) >= 6
    for uri in page.images:
        assert len(_png(uri)) > 5_000
    assert "multicore" in text and "fc2" in text and "nsga2" in text
    assert "area ≤ 30 mm²" in text  # the constraint in human units
    assert f"dse run {st.path}" in text
    assert "optuna-dashboard" in text and "study.journal" in text


def test_report_table_lists_the_pareto_points(two_obj):
    st, html = two_obj
    with (st.out_dir / "pareto.csv").open() as fh:
        front = list(csv.DictReader(fh))
    page = Page(html.read_text())
    assert page.rows_in["points"] == len(front) + 1  # header + one row per Pareto point
    text = html.read_text()
    assert "time [µs]" in text or "time [ms]" in text  # human units, not time_s
    assert "area [mm²]" in text


def test_report_counts_match_storage(two_obj):
    st, html = two_obj
    ost = study_mod.open_study(st, load_only=True)
    rows = study_mod.trial_rows(ost, [o.metric for o in st.objectives])
    infeasible = sum(not r["feasible"] for r in rows)
    assert re.search(rf"{len(rows)} designs evaluated \({len(rows) - infeasible} feasible, {infeasible} infeasible\)",
                     html.read_text())
    assert "<code>" in html.read_text() and not re.search(r"<code>\w+=-?\d+\.0</code>", html.read_text())  # 1000, not 1000.0
    # the importances table names the objectives as its chart does
    assert "<th>time</th><th>area</th>" in html.read_text() and "<th>time_s</th>" not in html.read_text()


def test_three_objectives_get_scatter_matrix_and_parallel_coordinates(tmp_path):
    st = run_study(tmp_path, "rep3", THREE)
    text = (st.out_dir / "report.html").read_text()
    assert 'alt="Parallel coordinates"' in text
    assert Page(text).sections == list(SECTIONS)


def test_report_cli_points_and_errors(two_obj, run_cli, tmp_path):
    st, _ = two_obj
    n = study_mod.trial_rows(study_mod.open_study(st, load_only=True), ["total.time_s"])[0]["number"]
    out = tmp_path / "r.html"
    code, stdout, _ = run_cli("report", st.out_dir, "--points", str(n), "-o", out)
    assert code == 0 and str(out) in stdout
    assert f"trial {n} (chosen)" in out.read_text()
    code, _, err = run_cli("report", st.out_dir, "--points", "99999", "-o", tmp_path / "x.html")
    assert code == 2 and "no completed trial numbered 99999" in err and "Traceback" not in err
    assert not (tmp_path / "x.html").exists()
    code, _, err = run_cli("report", tmp_path)
    assert code == 2 and "has no study.json" in err


def test_sweep_writes_a_report(tmp_path, run_cli):
    path = write(tmp_path / "sw.yaml", """
name: sw
arch: multicore
workload: fc1
space:
  cores: [1, 2, 4, 8, 16]
  placement: [B, T1, TR2]
  ni: [8, 16]
objectives: [total.time_s, total.area_mm2]
constraints: [total.area_mm2 <= 40]
n_trials: 1
results_dir: %s
""" % (tmp_path / "res"))
    code, out, err = run_cli("sweep", path, "--no-progress", "--n-jobs", "1")
    assert code == 0, err
    html = tmp_path / "res" / "sw" / "sweep" / "report.html"
    assert f"report: {html}" in out
    page = Page(html.read_text())
    assert page.sections == list(SECTIONS)
    assert "grid sweep of 30 points" in html.read_text()


def test_no_report_flag(tmp_path, run_cli):
    path = write(tmp_path / "nr.yaml", STUDY.format(name="nr", objectives=TWO, results=tmp_path / "res")
                 .replace("n_trials: 60", "n_trials: 20"))
    code, out, _ = run_cli("run", path, "--no-progress", "--no-report")
    assert code == 0 and "report:" not in out
    assert not (tmp_path / "res" / "nr" / "report.html").exists()


# ---- chosen points: extremes and knee are Pareto points, the extremes are the best in each objective

@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.floats(1e-6, 1e3), hst.floats(1e-3, 1e2), hst.booleans()), min_size=1, max_size=40),
       hst.sampled_from(["minimize", "maximize"]))
def test_chosen_points_are_on_the_front(points, d2):
    rows = [{"number": i, "total.time_s": t, "total.area_mm2": a, "feasible": f} for i, (t, a, f) in enumerate(points)]
    table = results.Table(rows, ["total.time_s", "total.area_mm2"], ["minimize", d2])
    front = report.front_rows(table)
    chosen = report.choose_points(table, front)
    numbers = {r["number"] for r in front}
    assert {r["number"] for _, r in chosen} <= numbers
    if front:
        best_t = min(r["total.time_s"] for r in front)
        assert any(r["total.time_s"] == best_t for why, r in chosen if "best time" in why)
        assert len({r["number"] for _, r in chosen}) == len(chosen)  # no point listed twice


# ---- units: every axis reads between 1 and 1000 of its unit

@settings(max_examples=200, deadline=None)
@given(hst.floats(1e-11, 999.0), hst.sampled_from(["total.time_s", "total.energy_j", "total.power_w"]))
def test_si_prefix_puts_values_between_1_and_1000(v, metric):
    s = scale_for(metric, [v])
    assert 1.0 <= s(v) < 1000.0 * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(hst.floats(1.0, 1e12))
def test_byte_prefix(v):
    s = scale_for("total.dram_bytes", [v])
    assert 1.0 <= s(v) < 1000.0 * (1 + 1e-12)
    assert s.unit in ("B", "KB", "MB", "GB")


# ---- the Optuna ecosystem works on the stored study

def test_optuna_tools_open_the_stored_study(two_obj):
    """The journal opens with plain Optuna (as optuna-dashboard opens it) and optuna.visualization draws it."""
    import matplotlib

    matplotlib.use("Agg")
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    st, _ = two_obj
    storage = JournalStorage(JournalFileBackend(str(st.out_dir / "study.journal")))
    (summary,) = optuna.get_all_study_summaries(storage)
    assert summary.study_name == st.name
    ost = optuna.load_study(study_name=st.name, storage=storage)
    assert ost.user_attrs["arch"] == "multicore"
    assert ost.user_attrs["objectives"] == ["total.time_s", "total.area_mm2"]
    assert ost.user_attrs["constraints"] == ["total.area_mm2 <= 30"]
    t = ost.trials[0]
    assert set(t.user_attrs["dse"]["total"]) >= {"time_s", "area_mm2", "energy_j"}
    ax = optuna.visualization.matplotlib.plot_pareto_front(ost, target_names=["time_s", "area_mm2"])
    assert sum(len(c.get_offsets()) for c in ax.collections) == len(ost.trials)
    ax = optuna.visualization.matplotlib.plot_hypervolume_history(ost, reference_point=[1.0, 1e3])
    assert len(ax.lines[0].get_xdata()) == len(ost.trials)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_importances_rank_the_searched_parameters(two_obj):
    st, _ = two_obj
    src = report.load_source(st.out_dir)
    imps, note = report.importances(src)
    assert set(imps) == {"total.time_s", "total.area_mm2"}
    for imp in imps.values():
        assert set(imp) == {"cores", "ni", "placement", "clock_mhz"}
        assert np.isclose(sum(imp.values()), 1.0)
    assert "PED-ANOVA" in note

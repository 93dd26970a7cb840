"""dse compare: models that run a workload, published vs best-under-budget, resumable studies, bad input."""

from __future__ import annotations

import csv

import pytest

from dse import compare

from .test_report import Page


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    from dse.cli import main

    out = tmp_path_factory.mktemp("cmp") / "fc1"
    code = main(["compare", "fc1", "--arch", "emaxvr,multicore", "--trials", "20", "--budget", "area_mm2<=20",
                 "--out", str(out), "--no-progress"])
    assert code == 0
    return out


def _rows(out):
    with (out / "compare.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_published_and_best_per_model(compared):
    rows = _rows(compared)
    assert [(r["arch"], r["point"]) for r in rows] == [
        ("emaxvr", "published"), ("emaxvr", "best"), ("multicore", "published"), ("multicore", "best")]
    for r in rows:
        assert float(r["total.time_s"]) > 0
        if r["point"] == "best":
            assert r["feasible"] == "True"
            assert float(r["total.area_mm2"]) <= 20
            assert r["tech_nm"] == "28" and "tech_nm=28" in r["params"]
        else:
            assert r["params"] == "defaults"


def test_csv_carries_the_energy_parts(compared):
    """compare.csv's part columns are the designs' totals; on multicore (every part declared) with the leakage they
    add up to the energy."""
    rows = _rows(compared)  # (before test_second_run_resumes, which writes the csv of emaxvr alone)
    for col in ("total.compute_energy_j", "total.sram_energy_j", "total.dram_energy_j"):
        assert col in rows[0]
    mc = [r for r in rows if r["arch"] == "multicore" and r["feasible"] == "True"]
    assert mc
    for r in mc:
        parts = sum(float(r[c]) for c in ("total.compute_energy_j", "total.sram_energy_j", "total.dram_energy_j"))
        assert 0.0 < parts <= float(r["total.energy_j"]) * (1 + 1e-12)


def test_best_is_the_fastest_feasible_trial(compared):
    from dse import config, study as study_mod

    best = {r["arch"]: float(r["total.time_s"]) for r in _rows(compared) if r["point"] == "best"}
    for arch in ("emaxvr", "multicore"):
        st = config.load(compared / "studies" / f"{arch}_28nm_area20.yaml")
        rows = study_mod.trial_rows(study_mod.open_study(st, load_only=True), ["total.time_s"])
        assert len(rows) == 20
        assert best[arch] == pytest.approx(min(r["total.time_s"] for r in rows if r["feasible"]))


def test_compare_page_structure(compared):
    text = (compared / "compare.html").read_text()
    page = Page(text)
    assert page.sections == ["table", "charts", "energy", "pareto", "method"]
    assert page.external == []
    assert len(page.images) == 3 and all(s.startswith("data:image/png;base64,") for s in page.images)
    assert page.rows_in["table"] == 1 + 4
    assert "time [" in text and "area [mm²]" in text


def test_second_run_resumes(compared, run_cli):
    code, _, err = run_cli("compare", "fc1", "--arch", "emaxvr", "--trials", "20", "--budget", "area_mm2<=20",
                           "--out", compared, "--no-progress")
    assert code == 0, err
    from dse import config, study as study_mod

    st = config.load(compared / "studies" / "emaxvr_28nm_area20.yaml")
    assert len(study_mod.open_study(st, load_only=True).trials) == 20  # nothing re-run


def test_models_that_cannot_run_the_workload_are_left_out():
    can, skipped = compare.runnable("spmm:n=256,sparsity=0.9")
    assert "atomswitch" not in can and "spmm" in skipped["atomswitch"]
    assert "imax" in can
    can, _ = compare.runnable("alexnet")
    assert {"emaxv", "emaxvr", "imax", "rena", "multicore"} <= set(can)


def test_study_file_sets_the_node_and_budget():
    d = compare.study_dict("atomswitch", "lenet", 42.0, 14, 10, compare.Path("/tmp/x"))
    assert "tech_nm" not in d["space"]  # atomswitch has no node parameter (docs/report.md)
    assert d["space"]["chip_area_mm2"]["high"] == 42.0
    assert d["constraints"] == ["total.area_mm2 <= 42"]
    d = compare.study_dict("rena", "lenet", 42.0, 14, 10, compare.Path("/tmp/x"))
    assert d["space"]["tech_nm"] == 14


@pytest.mark.parametrize("workload, args, msg", [
    ("alexnet", ["--budget", "power_w<=3"], "write 'area_mm2<=X'"),
    ("alexnet", ["--arch", "nope"], "unknown; allowed:"),
    ("spmm:n=256,sparsity=0.9", ["--arch", "atomswitch"], "atomswitch cannot run spmm"),
    ("alexnet", ["--trials", "0"], "--trials must be >= 1"),
])
def test_bad_input_is_one_line(run_cli, tmp_path, workload, args, msg):
    code, _, err = run_cli("compare", workload, *args, "--out", tmp_path / "o", "--no-progress")
    assert code == 2 and msg in err and "Traceback" not in err
    assert not (tmp_path / "o" / "compare.html").exists()


def test_each_model_study_gets_a_report(compared, run_cli):
    code, out, err = run_cli("report", compared / "studies" / "multicore_28nm_area20")
    assert code == 0, err
    html = compared / "studies" / "multicore_28nm_area20" / "report.html"
    assert f"report: {html}" in out
    assert "area ≤ 20 mm²" in html.read_text()


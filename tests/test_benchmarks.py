"""`make bench`'s functions on tiny inputs: they run and fill every table column (no timing is asserted)."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import before_after, roofline, run, speed_report  # noqa: E402
from benchmarks.throughput import BATCH_COLUMNS, ONE_COLUMNS, Speed, measure_speed, ratio_text  # noqa: E402
from workloads import load_workload  # noqa: E402


def fake_speed(arch: str = "m", evals_per_s: float = 2e6, one_s: float = 1e-4, trial_s: float = 3e-4) -> Speed:
    layers = 10
    return Speed(arch, "vgg16", layers, 512, 0.5, layers / evals_per_s, layers / 4e7, one_s, one_s / 2, one_s * 1.5,
                 2e-5, layers / 8e7, 2e-6, trial_s)


def test_roofline_matches_its_formula_point_by_point():
    layers = list(load_workload("lenet").layers)
    sizes = roofline.LayerSizes.of(layers)
    p = roofline.random_params(7, np.random.default_rng(3))
    out = roofline.evaluate(sizes, p)
    for k in ("time_s", "energy_j", "dram_bytes", "area_mm2", "utilization", "power_w", "edp_js", "feasible"):
        assert np.shape(out[k]) == (7,), k
    i = 4  # one point by plain Python arithmetic
    t = e = 0.0
    ok = True
    for l in layers:
        w = p["bits"][i] / 8
        b = (l.input_elems + l.weight_elems + l.output_elems) * w
        lt = max((l.macs + l.vector_ops) / (p["pes"][i] * p["clock_hz"][i]), b / p["bw_b_per_s"][i])
        area = p["pes"][i] * roofline.AREA_MM2_PER_PE + p["buf_b"][i] * roofline.AREA_MM2_PER_B
        e += ((l.macs + l.vector_ops) * roofline.E_MAC_J * w * w + b * roofline.E_DRAM_J_PER_B
              + area * roofline.LEAK_W_PER_MM2 * lt)
        t += lt
        ok &= bool(p["buf_b"][i] >= l.weight_elems * w)
    assert out["time_s"][i] == pytest.approx(t, rel=1e-12)
    assert out["energy_j"][i] == pytest.approx(e, rel=1e-12)
    assert bool(out["feasible"][i]) == ok
    assert np.all((out["utilization"] > 0) & (out["utilization"] <= 1))
    stacked = roofline.evaluate_stacked(sizes, p)  # the same totals from (layers x points) arrays
    for k, v in out.items():
        np.testing.assert_allclose(stacked[k], v, rtol=1e-12, err_msg=k)


def test_measure_speed_fills_every_column_quick():
    s = measure_speed("atomswitch", "lenet", quick=True, batch=16)
    assert s.layers == len(load_workload("lenet").layers) and s.batch == 16
    for f in dataclasses.fields(Speed):
        v = getattr(s, f.name)
        if f.type == "float":
            assert np.isfinite(v) and v >= 0, f.name
    cols = s.columns()
    assert set(BATCH_COLUMNS) | set(ONE_COLUMNS) <= set(cols)
    assert all(cols[c] for c in cols)


def test_speed_section_tables_and_targets():
    fast, slow = fake_speed("fast", 2e6, 1e-4), fake_speed("slow", 5e4, 5e-3)
    before = {"fast": fake_speed("fast", 1e6, 2e-4), "slow": "failed: boom"}
    md = "\n".join(speed_report.speed_section([fast, slow], before, "baseline line", {"gone": "RuntimeError: x"}))
    assert "| " + " | ".join(BATCH_COLUMNS) + " |" in md and "| " + " | ".join(ONE_COLUMNS) + " |" in md
    assert "| fast | 2,000,000 | yes | 0.33x | yes |" in md  # 0.1 ms vs a 0.3 ms trial
    assert "| slow | 50,000 | no | 17x | no |" in md
    assert "| fast | 1,000,000 | 2,000,000 | 2.00x | 0.2 ms | 0.1 ms | 2.00x |" in md
    assert "| slow | failed: boom |" in md and "`gone`: not measured: RuntimeError: x" in md


def test_networks_section_rows():
    a, b = fake_speed("a", 2e6, 1e-3), fake_speed("b", 5e4, 5e-3)
    md = "\n".join(speed_report.networks_section("resnet50", [a, b], {"a": fake_speed("a", 1e6, 4e-3), "b": "failed: x"},
                                                  {"c": "RuntimeError: y"}))
    assert "`resnet50`" in md
    assert "| a | 10 | 1,000,000 | 2,000,000 | 4 ms | 1 ms | 4.00x | 3.33x |" in md
    assert "| b | 10 | failed: x | 50,000 | — | 5 ms | — | 17x |" in md and "`c`: not measured: RuntimeError: y" in md


def test_runs_section_before_missing_and_failed():
    a = speed_report.RunRate("q.yaml", "tpe", 1, 100, 2.0)
    b = speed_report.RunRate("q.yaml", "tpe", 1, 100, 4.0)
    bad = speed_report.RunRate("e.yaml", "nsga2", 40, 40, None, "KeyError: x")
    md = "\n".join(speed_report.runs_section([(b, a), (None, bad)], "no baseline", "n trials"))
    assert "| `q.yaml` | tpe | 1 | 100 | 25.0 | 50.0 | 2.00x |" in md
    assert "| `e.yaml` | nsga2 | 40 | 40 | — | failed: KeyError: x | — |" in md
    assert "*continued*" not in md


def test_runs_section_continued_study():
    b = speed_report.RunRate("q.yaml", "nsga2", 40, 100, 4.0, stored=5000)
    a = speed_report.RunRate("q.yaml", "nsga2", 40, 100, 1.0, stored=5000)
    md = "\n".join(speed_report.runs_section([(b, a)], "base", "n trials", "q nsga2 continued from 2,000 designs"))
    assert "| `q.yaml` continued | nsga2 | 40 | 100 | 25.0 | 100.0 | 4.00x |" in md
    assert "*continued*: q nsga2 continued from 2,000 designs, stored by this tree first" in md


def test_profile_section_verbatim(tmp_path):
    assert "No profile notes" in "\n".join(speed_report.profile_section(tmp_path / "none"))
    (tmp_path / "core.md").write_text("vdd_ratio: 30 % -> 2 %\n| a | b |\n")
    md = "\n".join(speed_report.profile_section(tmp_path))
    assert "### core (`docs/profile/core.md`)" in md and "vdd_ratio: 30 % -> 2 %\n| a | b |" in md


def test_ratio_text():
    assert [ratio_text(x) for x in (250.0, 2.5, 0.5, 0.004, 0.0, float("nan"))] == \
        ["250x", "2.50x", "0.50x", "1/250", "—", "—"]


def test_unknown_baseline_ref_is_reported_not_raised():
    """An unknown ref (or no git at all) raises Unavailable, which `run.main` turns into a 'skipped' line."""
    with pytest.raises(before_after.Unavailable, match="rev-parse|git is not available"):
        with before_after.worktree("no-such-ref-anywhere"):
            pass


def test_quick_bench_end_to_end_with_baseline(tmp_path):
    """--quick on one model with HEAD as baseline: worktree, both subprocesses, the markdown, cleanup."""
    try:
        before = before_after._git("worktree", "list")
    except before_after.Unavailable as exc:  # not a git checkout (e.g. an unpacked archive)
        pytest.skip(str(exc))
    out = tmp_path / "bench.md"
    assert run.main(["--quick", "--only", "throughput,profile", "--models", "atomswitch", "--baseline", "HEAD",
                     "--out", str(out)]) == 0
    md = out.read_text()
    assert "*Before* = `HEAD`" in md and "### Before and after" in md
    after_part = md.split("### Before and after", 1)[1]
    row = next(l for l in after_part.splitlines() if l.startswith("| atomswitch | "))
    assert row.count("|") == 11 and "—" not in row  # before and after both measured
    net = md.split("### A network with vector layers", 1)[1].split("###", 1)[0]
    row = next(l for l in net.splitlines() if l.startswith("| atomswitch | "))
    assert row.count("|") == 9 and "—" not in row  # resnet50, before and after both measured
    assert "## Profile" in md and "_Section times: throughput" in md
    assert before_after._git("worktree", "list") == before  # the temporary worktree is gone


def test_measure_speed_interleaves_optuna_trials_with_the_rows(monkeypatch):
    """Optuna's trial is measured in blocks between the one-point rows (as many trials as rows), so a slow moment
    of the machine weighs on both sides of the ratio; a full collection runs before each pair of blocks and never
    inside one; a given ``trial_s`` is kept and no trial runs."""
    import benchmarks.optuna_speed as optuna_speed
    import benchmarks.throughput as throughput
    import dse.objective as objective

    log: list[str] = []
    real_rows = objective.evaluate_rows

    def rows(st, batch, *a, **k):
        log.append("row")
        return real_rows(st, batch, *a, **k)

    def bare_trial(seed: int = 0):
        log.append("made")
        return lambda: log.append("trial")

    def collect(generation: int = 2):
        log.append("gc")
        return 0

    monkeypatch.setattr(objective, "evaluate_rows", rows)
    monkeypatch.setattr(optuna_speed, "bare_trial", bare_trial)
    monkeypatch.setattr(throughput.gc, "collect", collect)
    s = measure_speed("atomswitch", "lenet", quick=True, batch=16)
    seq = "".join({"row": "r", "trial": "t", "gc": "g"}[x] for x in log[log.index("made") + 1:])
    body, tail = seq[:seq.rindex("t") + 1], seq[seq.rindex("t") + 1:]
    assert tail == "r" * 6  # the defaults: one warm call and 5 timed, after the interleaved part
    blocks = re.findall(r"gr+t+", body)
    assert "".join(blocks) == body and len(blocks) >= 1
    assert all(b == "g" + "r" * 10 + "t" * 10 for b in blocks[:-1])
    k = blocks[-1].count("r")
    assert 1 <= k <= 10 and blocks[-1] == "g" + "r" * k + "t" * k
    assert 0 < s.trial_s < 1e-3  # the fake trial appends to a list: microseconds
    assert s.gc_between_n == len(blocks) and s.gc_between_s >= 0

    log.clear()
    s = measure_speed("atomswitch", "lenet", trial_s=0.125, quick=True, batch=16)
    assert s.trial_s == 0.125 and "made" not in log and "trial" not in log

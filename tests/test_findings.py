"""A stranger's read (2026-11-27): outputs that misled a first-time reader.

Infeasible totals that looked like numbers, multicore's breakdown that called DRAM-bound time COMPUTE, a
convergence axis in Optuna trial numbers under a text in designs, and spec files named that are not in the
repository."""

from __future__ import annotations

import pytest

import dse
from archmodels.testing import PER_TIME, _check_ranges

#: a small BERT layer: its matmul layers are ones atomswitch does not run (fast to evaluate)
BERT = "bert_encoder:seq=16,hidden=64,heads=2,ffn=128"


# ---- 1. infeasible totals: null, not 0 W and negative dynamic power ----
@pytest.mark.parametrize("arch, workload", [("atomswitch", BERT), ("rena", "spmv:n=512,sparsity=0.95"),
                                            ("multicore", "spmv:n=512,sparsity=0.95")])
def test_a_layer_the_design_cannot_run_leaves_every_per_time_total_null(arch, workload):
    r = dse.evaluate(arch, workload)
    t = r["total"]
    assert r["feasible"] is False and "does not run" in r["infeasible_reason"]
    assert t["time_s"] is None and t["energy_j"] is None
    # were utilization 0.0, power_w 0.0 and dynamic_power_w = -static_power_w (the 0 W fallback of a zero time)
    assert {k: t[k] for k in PER_TIME} == dict.fromkeys(PER_TIME)
    assert t["static_power_w"] > 0  # the configuration's leakage is known: it stays


def test_atomswitch_total_feasible_is_the_area_fit_and_says_so(run_cli):
    r = dse.evaluate("atomswitch", BERT)
    assert r["feasible"] is False and r["total"]["feasible"] == 1  # the key keeps its name and meaning
    code, out, _ = run_cli("models", "atomswitch")
    line = next(x for x in out.splitlines() if x.split()[:1] == ["feasible"])
    assert code == 0 and "area fit, not the point's feasibility" in line


def test_check_model_fails_a_per_time_total_made_up_for_a_null_time():
    p = dse.evaluate("atomswitch", BERT)
    _check_ranges(p, {}, BERT, _raise)  # the fixed totals pass
    p["total"]["power_w"] = 0.0
    with pytest.raises(AssertionError, match="time_s is null but power_w=0.0"):
        _check_ranges(p, {}, BERT, _raise)


def _raise(check: str, message: str, *_) -> None:
    raise AssertionError(f"[{check}] {message}")


# ---- 2. multicore's breakdown names what bounds a layer ----
def test_a_dram_bound_multicore_layer_reads_as_dram_wait_not_compute():
    from dse.plots import layer_breakdown

    # one core, FC3's 12.5 MB of weights > the 2 MB weight buffer: streamed from DRAM every inference
    r = dse.evaluate("multicore", "fc3", placement="B", cores=1)
    layer = r["layers"][0]
    st = layer["states"]
    assert layer["cycles"] == 310277.0  # the time is the model's as before: only its labels changed
    assert sum(st.values()) == pytest.approx(layer["cycles"], rel=1e-12)
    assert st["COMPUTE"] == layer["nfu_steps_per_core"] == 25600  # the NFU's own steps, not the whole phase
    assert st["DRAM_WAIT"] == 310277.0 - 25600 - st["FILL"] and st["SHM_WAIT"] == st["NOC_WAIT"] == 0.0
    by_state = {k: v[0] for k, v in layer_breakdown(r)["time_by_state"].items()}
    assert max(by_state, key=by_state.get) == "DRAM_WAIT"  # the chart's tallest part of the bar


def test_multicore_states_charge_the_wait_to_one_bounding_resource():
    for sets in ({"placement": "T1"}, {"placement": "TR2"}, {"mem_ports": 1, "noc_gbps": 100000.0}):
        for layer in dse.evaluate("multicore", "alexnet", **sets)["layers"]:
            st = layer["states"]
            waits = [k for k in ("SHM_WAIT", "NOC_WAIT", "DRAM_WAIT") if st[k] != 0.0]
            assert len(waits) <= 1 and sum(st.values()) == pytest.approx(layer["cycles"], rel=1e-12)


# ---- 3. the convergence plot and its text count designs evaluated, the budget's unit ----
def test_convergence_counts_designs_not_optuna_trial_numbers(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import numpy as np

    from dse import plots, report, results

    # 40 designs asked among 100 trials (the 60 others were repeats answered from earlier trials, not rows)
    rng = np.random.default_rng(0)
    rows = [{"number": int(n), "feasible": True, "total.time_s": float(a), "total.area_mm2": float(b)}
            for n, a, b in zip(sorted(rng.choice(100, 40, replace=False)), rng.random(40), rng.random(40))]
    table = results.Table(rows, ["total.time_s", "total.area_mm2"], ["minimize", "minimize"])
    drawn = {}
    real = plots.convergence_plot

    def spy(*args, **kw):
        drawn.update(real(*args, **kw))
        return drawn

    monkeypatch.setattr(plots, "convergence_plot", spy)
    _, note = report._convergence(SimpleNamespace(kind="study", table=table), tmp_path)
    assert drawn["x"][-1] == 40 and max(drawn["x"]) == 40  # was the last trial number (up to 99)
    assert "after 40 designs evaluated" in note and "by trial" not in note
    reached = int(note.split("was reached after ")[1].split(" designs")[0])
    assert reached <= 40 and reached in drawn["x"]
    assert plots.DESIGNS_AXIS == "designs evaluated (trials that are not repeats)"


# ---- 4. the repository's model documentation, not a spec file outside it ----
def test_models_name_the_repositorys_documentation(run_cli):
    from pathlib import Path

    from archmodels import get_model

    root = Path(__file__).resolve().parents[1]
    code, out, _ = run_cli("models")
    assert code == 0 and "(spec:" not in out
    for name in ("emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore"):
        page = get_model(name).DOC_PAGE
        assert (root / page).is_file() and f"({page})" in out
    _, one, _ = run_cli("models", "atomswitch")
    assert one.splitlines()[0].endswith("(docs/models/atomswitch.md; spec atom_switch.md, outside the repository)")

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

"""benchmarks/spikes/plans_per_eval.py: the plan counts behind one EMAX evaluation (issue 15's analysis of
EMAXVR's batched target, docs/profile/emax.md) count real plans and leave the model as they found it."""

import numpy as np

from archmodels import get_model
from archmodels.emax import model as emax_model
from archmodels.emax import traffic
from benchmarks.spikes import plans_per_eval as ppe
from workloads import load_workload


def test_counts_plans_and_restores_the_builders():
    before = {(m.__name__, k): getattr(m, k) for k in ppe.BUILDERS for m in (traffic, emax_model) if hasattr(m, k)}
    m = ppe.measure("emaxvr", "alexnet", points=24, calls=1, seed=3)
    after = {(mod.__name__, k): getattr(mod, k) for k in ppe.BUILDERS for mod in (traffic, emax_model)
             if hasattr(mod, k)}
    assert after == before
    assert m["evals"] == 24 * len(load_workload("alexnet").layers)
    # EMAXVR prices several schedules of several mappings per design point x layer before it chooses one
    assert m["rows"] >= m["plans"] > m["evals"]
    assert abs(m["ns_per_plan_at_1M"] * m["plans_per_eval"] - 1e3) < 1e-6  # 1 us an evaluation, shared by its plans


def test_counting_changes_no_number():
    model, wl = get_model("emaxvr"), load_workload("alexnet")
    pts = model.params.points(model.params.random_rows(12, np.random.default_rng(7)))
    plain = model.evaluate_batch(wl, pts).model_totals
    emax_model._plans_cache_clear()
    with ppe.counting_builders() as counts:
        counted = model.evaluate_batch(wl, pts).model_totals
    assert counts["emaxvr_plans plans"] > 0
    for k, v in plain.items():
        np.testing.assert_array_equal(np.asarray(counted[k]), np.asarray(v), err_msg=k)

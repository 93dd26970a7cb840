"""Spike (issue 15): the work behind one EMAX evaluation -- mapping plans priced per design point x layer.

Issue 15 counts a batched model's speed in design-point x layer evaluations. EMAX's mapper prices every candidate
mapping (and, on EMAXVR, every SPM schedule variant of it that fits) before it chooses one, so one evaluation is
several plans. This script counts them on the bench's case (fresh random points of the declared space, as
``benchmarks/throughput.py``): it wraps the three plan builders of ``archmodels.emax.traffic`` (``emaxv_plans``,
``emaxvr_plans``, ``fc_plans``), counts the rows they get and the plans they return, and times each call (CPU).
The numbers say what rate per plan a target in evaluations/s needs. Findings: docs/profile/emax.md, "The work
behind one evaluation".

Run from the repository root: ``PYTHONPATH=. .venv/bin/python benchmarks/spikes/plans_per_eval.py``
(``--cases emaxvr:vgg16:2048 emaxv:vgg16-conv:4096``, ``--calls 4``).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections import Counter
from collections.abc import Iterator

import numpy as np

from archmodels import get_model
from archmodels.emax import model as emax_model
from archmodels.emax import traffic
from workloads import load_workload

BUILDERS = ("emaxv_plans", "emaxvr_plans", "fc_plans")


@contextlib.contextmanager
def counting_builders() -> Iterator[Counter]:
    """The plan builders wrapped where the model calls them (its module imported them by name), counting the rows
    each gets and the plans each returns; restored on exit."""
    counts: Counter = Counter()
    saved = [(mod, name, getattr(mod, name)) for name in BUILDERS for mod in (traffic, emax_model)
             if hasattr(mod, name)]
    for name in BUILDERS:
        fn = getattr(traffic, name)

        def counted(shapes, r, _fn=fn, _name=name):
            table = _fn(shapes, r)
            counts[_name + " rows"] += len(r["shape"])
            counts[_name + " plans"] += len(table.src)
            return table

        for mod in (traffic, emax_model):
            if hasattr(mod, name):
                setattr(mod, name, counted)
    try:
        yield counts
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def measure(arch: str, workload: str, points: int, calls: int, seed: int = 1) -> dict[str, float]:
    """Plans per design point x layer and CPU per plan, over ``calls`` steady calls (one untimed call first)."""
    model, wl = get_model(arch), load_workload(workload)
    rng = np.random.default_rng(seed)
    with counting_builders() as counts:
        model.evaluate_batch(wl, model.params.points(model.params.random_rows(points, rng)))  # warm
        counts.clear()
        cpu = 0.0
        for _ in range(calls):
            pts = model.params.points(model.params.random_rows(points, rng))
            t = time.process_time()
            model.evaluate_batch(wl, pts)
            cpu += time.process_time() - t
    evals = calls * points * len(wl.layers)
    plans = sum(v for k, v in counts.items() if k.endswith(" plans"))
    rows = sum(v for k, v in counts.items() if k.endswith(" rows"))
    return {"evals": evals, "rows": rows, "plans": plans, "plans_per_eval": plans / evals,
            "evals_per_s": evals / cpu, "plans_per_s": plans / cpu, "cpu_ns_per_plan": cpu / plans * 1e9,
            "ns_per_plan_at_1M": 1e9 / (1e6 * plans / evals)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=["emaxv:vgg16-conv:4096", "emaxvr:vgg16:2048"],
                    help="arch:workload:points")
    ap.add_argument("--calls", type=int, default=4)
    o = ap.parse_args()
    print("| model | workload | points a call | builder rows / eval | plans / eval | evals/s (CPU) | plans/s (CPU) "
          "| CPU ns / plan | ns / plan for 1 M evals/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case in o.cases:
        arch, rest = case.split(":", 1)
        wl, n = rest.rsplit(":", 1)
        m = measure(arch, wl, int(n), o.calls)
        print(f"| {arch} | `{wl}` | {int(n):,} | {m['rows'] / m['evals']:.1f} | {m['plans_per_eval']:.1f} "
              f"| {m['evals_per_s']:,.0f} | {m['plans_per_s']:,.0f} | {m['cpu_ns_per_plan']:,.0f} "
              f"| {m['ns_per_plan_at_1M']:,.0f} |")


if __name__ == "__main__":
    main()

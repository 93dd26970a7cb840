"""Golden outputs: every model, every built-in workload, a fixed sample of
design points (infeasible ones included), every contract key, equal to what
was stored before the last structural or speed change (tests/golden/)."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from tests.golden.make_golden import PATH, compute


def _diff(path: str, want, got, out: list[str]) -> None:
    if len(out) >= 20:
        return
    if isinstance(want, dict) and isinstance(got, dict):
        if set(want) != set(got):
            out.append(f"{path}: keys differ: missing {sorted(set(want) - set(got))}, new {sorted(set(got) - set(want))}")
        for k in want.keys() & got.keys():
            _diff(f"{path}.{k}", want[k], got[k], out)
    elif isinstance(want, list) and isinstance(got, (list, tuple)):
        if len(want) != len(got):
            out.append(f"{path}: length {len(got)} != {len(want)}")
        for i, (a, b) in enumerate(zip(want, got)):
            _diff(f"{path}[{i}]", a, b, out)
    elif isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if not (math.isclose(want, got, rel_tol=1e-12, abs_tol=0.0) or (math.isnan(want) and math.isnan(got))):
            out.append(f"{path}: {got!r} != {want!r}")
    elif want != got:
        out.append(f"{path}: {got!r} != {want!r}")


@pytest.fixture(scope="module")
def golden():
    with gzip.open(PATH, "rt") as f:
        return json.load(f)


def test_golden_sample_covers_feasible_and_infeasible(golden):
    flags = [p["feasible"] for pts in golden.values() for p in pts]
    assert any(flags) and not all(flags)


def test_golden_outputs_unchanged(golden):
    got = json.loads(json.dumps(compute()))  # the same JSON round trip as stored
    assert set(got) == set(golden), "the golden cases changed: regenerate only on purpose"
    problems: list[str] = []
    for case in golden:
        _diff(case, golden[case], got[case], problems)
    assert not problems, "\n".join(problems)

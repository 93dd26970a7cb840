"""Measure issue 12's property on many random points: under ``criterion=dram`` more LMM (or SPM) never moves
more DRAM traffic.

``python docs/tools/dram_monotonicity.py N WORKLOAD`` draws N random points of EMAXVR's declared space (seed
12345), sets ``criterion=dram``, multiplies ``lmm_kb`` and ``spm_kb`` by 2 and by 4 (capped at the declared
maximum), and counts the pairs feasible at both sizes whose DRAM bytes grow; it prints the count and the
worst cases. The numbers in docs/validation/emax.md come from it (the property test in
tests/test_properties.py draws only a few points per run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from archmodels import get_model  # noqa: E402


def scan(n: int, workload: str, seed: int = 12345) -> tuple[int, list[tuple]]:
    """(pairs checked, violations as (key, factor, point index, bytes before, bytes after, relative growth))."""
    m = get_model("emaxvr")
    rows = [dict(r, criterion="dram") for r in m.params.random_rows(n, np.random.default_rng(seed))]
    checked, bad = 0, []
    for key in ("lmm_kb", "spm_kb"):
        hi = m.params.get(key).high
        for f in (2.0, 4.0):
            big = [dict(p, **{key: min(p[key] * f if p[key] > 0 else 64.0, hi)}) for p in rows]
            r0, r1 = m.evaluate_points(workload, rows), m.evaluate_points(workload, big)
            d0, d1 = r0.totals["dram_bytes"], r1.totals["dram_bytes"]
            ok = r0.feasible & r1.feasible
            checked += int(ok.sum())
            for i in np.flatnonzero(ok & (d1 > d0 * (1 + 1e-9))):
                bad.append((key, f, int(i), float(d0[i]), float(d1[i]), float(d1[i] / d0[i] - 1)))
    return checked, bad


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    wl = sys.argv[2] if len(sys.argv) > 2 else "vgg16-conv"
    checked, bad = scan(n, wl)
    print(f"{wl}: {checked} pairs feasible at both sizes, {len(bad)} with more DRAM traffic at the larger memory"
          + (f" (worst +{max(b[5] for b in bad):.1%})" if bad else ""))
    for b in sorted(bad, key=lambda b: -b[5])[:10]:
        print(f"  {b[0]} x{b[1]:g}, point {b[2]}: {b[3]:,.0f} -> {b[4]:,.0f} B (+{b[5]:.2%})")


if __name__ == "__main__":
    main()

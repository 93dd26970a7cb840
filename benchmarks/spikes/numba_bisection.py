"""Spike (issue 15, step 5): ``tech._bisect_vdd_ratio`` as a numba kernel against the numpy path -- bits and CPU time.

numba is not a project dependency: run this in a scratch venv with the project's numpy, from the repository root:
``python -m venv /tmp/nb && /tmp/nb/bin/pip install numba numpy==<the project's>`` then
``PYTHONPATH=. /tmp/nb/bin/python benchmarks/spikes/numba_bisection.py``. Findings: docs/profile/compiled.md.
"""

import time

import numba
import numpy as np

from archmodels import tech


@numba.njit(cache=True)
def _kernel(f, v0, vmax, vt, fnom, alpha):
    """The same 40 bisection steps per clock, scalar code (numba's ``**`` is libm's pow)."""
    out = np.empty_like(f)
    s0 = (v0 - vt) ** alpha / v0
    for i in range(f.size):
        r = f[i] / fnom
        t = (r if r > 1.0 else 1.0) * s0
        lo, hi = v0, vmax
        for _ in range(40):
            mid = (lo + hi) / 2
            if (mid - vt) ** alpha / mid < t:
                lo = mid
            else:
                hi = mid
        out[i] = hi / v0
    return out


def _cpu_s(fn, reps: int) -> float:
    t0 = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - t0) / reps


def main() -> None:
    rng = np.random.default_rng(0)
    args = {n: (tech._VDD[n], tech.VDD_MAX[n], tech.VT[n], tech.F_NOM_MHZ[n], tech.ALPHA) for n in tech.NODES_NM}
    t0 = time.perf_counter()
    _kernel(np.array([1000.5]), *args[28])
    print(f"first call (compile or load from cache): {time.perf_counter() - t0:.2f} s")
    for n in tech.NODES_NM:
        f = rng.uniform(tech.F_NOM_MHZ[n], tech.fmax_mhz(n), 1_000_000)
        a, b = tech._bisect_vdd_ratio(f, n), _kernel(f, *args[n])
        print(f"{n} nm: {int((a.view(np.int64) != b.view(np.int64)).sum())} of {f.size:,} ratios differ in bits")
        for m in (1, 150, 4096):
            x = f[:m].copy()
            reps = 200 if m < 1000 else 30
            ta = _cpu_s(lambda: tech._bisect_vdd_ratio(x, n), reps)
            tb = _cpu_s(lambda: _kernel(x, *args[n]), reps)
            print(f"  {m:>5} clocks: numpy {ta * 1e6:8.1f} us, numba {tb * 1e6:8.1f} us")


if __name__ == "__main__":
    main()

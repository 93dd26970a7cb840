"""Spike (issue 15, step 5): EMAXVR's ``traffic._vr_spm_plan`` as one numba loop against the numpy path -- bits and CPU.

The first spike (``numba_bisection.py``) measured a kernel with ``**``, whose bits numba cannot keep. This one takes a
step of the EMAX plan builders, exact operations only (integer arithmetic, float additions in the numpy path's
order, comparisons): the SPM plan of every (row, schedule variant) pair of an EMAXVR chunk, with its band-count
bisection, the gathers by row and mapping fused into the loop.

numba is not a project dependency: run this in a scratch venv with the project's numpy, from the repository root:
``python -m venv /tmp/nb && /tmp/nb/bin/pip install numba numpy==<the project's> pyyaml`` then
``PYTHONPATH=.:/tmp/nb/lib/python3.11/site-packages .venv/bin/python benchmarks/spikes/numba_vr_spm_plan.py``.
Findings: docs/profile/compiled.md.
"""

import time

import numba
import numpy as np

from archmodels import get_model
from archmodels.emax import traffic
from archmodels.emax.traffic import _DRAM, _NONE, _SPM, _Gather
from workloads import load_workload

OUT_KEYS = ("bands", "psum_home", "spm_need", "halo_keep")


@numba.njit(cache=False)  # (no cache: the first call shows the compile time)
def _unit(oh_out, oh, oc_chunk, units, ocp, a, b, t):
    """``traffic._unit_bytes`` of one pair at band count t (int64, exact)."""
    if oh_out:
        return a * (-(-oh // t))
    return b * min(oc_chunk, (-(-units // t)) * ocp)


@numba.njit(cache=False)
def spm_plan(stage_w, psum_dram, halo_dram, ic_inner, p_ps, p_pd, p_hd, p_hs, p_io, p_ii,
             keep_all_r, no_spm_r, free_r, halo_kept_r, fixed_r,
             S_m, units_m, passes_m, n_seg_m, needs_unit_m, w_gpar_m, unit_most_m, unit_one_m, sized_m,
             size_bands_m, out_total_m, dram_search_m, u_ohout, u_oh, u_occ, u_units, u_ocp, u_a, u_b,
             rep, mrep, ok, bands, psum_home, spm_need, halo_keep):
    """``traffic._vr_spm_plan`` pair by pair: the same operations, float additions in its order (``_r``: per builder
    row, gathered by ``rep``; ``_m``: per mapping, by ``mrep``; the others per pair)."""
    for i in range(len(rep)):
        r = rep[i]
        m = mrep[i]
        S = S_m[m]
        units = units_m[m]
        passes = passes_m[m]
        keep_all = keep_all_r[r]
        no_spm = no_spm_r[r]
        free = free_r[r]
        hk = halo_kept_r[r] if not halo_dram[i] else 0
        fixed = fixed_r[r] + (float(w_gpar_m[m]) if stage_w[i] else 0.0)
        hkf = float(hk)
        need_most = (fixed + (hkf if units > 1 else 0.0)) + float(unit_most_m[m])
        need_one = (fixed + 0.0) + float(unit_one_m[m])
        in_dram = free and psum_dram[i]
        banded = free and (not psum_dram[i]) and needs_unit_m[m]
        plain = not (keep_all or no_spm or in_dram or banded)
        Sf = float(S)
        if need_most > Sf:  # _first_band_count
            t0 = 0
        elif need_one <= Sf:
            t0 = 1
        else:
            lo = 1
            hi = units
            while hi - lo > 1:
                mid = (lo + hi) // 2
                unit = _unit(u_ohout[m], u_oh[m], u_occ[m], u_units[m], u_ocp[m], u_a[m], u_b[m], mid)
                if (fixed + (hkf if mid > 1 else 0.0)) + float(unit) <= Sf:
                    hi = mid
                else:
                    lo = mid
            t0 = hi
        if ic_inner[i]:
            t0 = units if need_most <= Sf else 0
        if sized_m[m] and t0 > 0:
            t0 = max(t0, size_bands_m[m])
        t = max(t0, 1)
        out_total = out_total_m[m]
        bad = keep_all and (S == 0 or fixed + float(out_total) > Sf)
        bad = bad or (banded and t0 == 0)
        bad = bad or (plain and fixed > Sf)
        bd = t if banded else 1
        if passes > 1:
            ph = 2 if (no_spm or in_dram) else 1
        else:
            ph = 2 if in_dram else 0
        need_t = 0.0
        if banded:
            unit = _unit(u_ohout[m], u_oh[m], u_occ[m], u_units[m], u_ocp[m], u_a[m], u_b[m], t)
            need_t = (fixed + (hkf if t > 1 else 0.0)) + float(unit)
        if keep_all:
            sn = fixed + float(out_total)
        elif no_spm:
            sn = 0.0
        elif in_dram:
            sn = fixed
        elif banded:
            sn = need_t
        else:
            sn = fixed
        bad = bad or (stage_w[i] and bd == 1 and n_seg_m[m] == 1 and not dram_search_m[m])
        bad = bad or (halo_dram[i] and bd == 1)
        hkept = hk > 0 and bd > 1
        pin = (p_ps[i] and ph == 2) or (p_pd[i] and ph == 1)  # _pinned_out
        pin = pin or (p_hd[i] and hkept) or (p_hs[i] and halo_dram[i])
        pin = pin or (p_io[i] and ic_inner[i]) or (p_ii[i] and (not ic_inner[i]) and passes > 1)
        ok[i] = not (bad or pin)
        bands[i] = bd
        psum_home[i] = ph
        spm_need[i] = sn
        halo_keep[i] = hk


def run_numba(c):
    """The kernel on the captured inputs (outputs allocated here, as the numpy path allocates its own)."""
    g, row, mp, u = c["got"], c["row"], c["mp"], c["mp"]["unit"]
    n = len(c["rep"])
    ok, sn = np.empty(n, bool), np.empty(n, np.float64)
    bands, ph, hk = (np.empty(n, np.int64) for _ in range(3))
    spm_plan(g["stage_w"], g["psum_dram"], g["halo_dram"], g["ic_inner"], g["pin_psum_spm"], g["pin_psum_dram"],
             g["pin_halo_dram"], g["pin_halo_spm"], g["pin_ic_outer"], g["pin_ic_inner"],
             row["keep_all"], row["no_spm"], row["free"], row["halo_kept"], row["fixed"],
             mp["S"], mp["units"], mp["passes"], mp["n_seg"], mp["needs_unit"], mp["w_gpar"], mp["unit_most"],
             mp["unit_one"], mp["sized"], mp["size_bands"], mp["out_total"], mp["dram_search"],
             u["oh_out"], u["oh"], u["oc_chunk"], u["units"], u["ocp"], u["a"], u["b"],
             c["rep"], c["mrep"], ok, bands, ph, sn, hk)
    return ok, dict(bands=bands, psum_home=ph, spm_need=sn, halo_keep=hk)


def run_numpy(c):
    v = _Gather(**c["got"])
    ok = traffic._vr_spm_plan(v, c["row"], c["mp"], c["rep"], c["mrep"])
    return ok, {k: v.got[k] for k in OUT_KEYS}


def capture(seed: int = 11, points: int = 2048, workload: str = "vgg16") -> dict:
    """The inputs of the largest ``_vr_spm_plan`` call of one random EMAXVR batch."""
    orig, caps = traffic._vr_spm_plan, []

    def spy(v, row, mp, rep, mrep):
        ok = orig(v, row, mp, rep, mrep)
        caps.append(dict(got={k: a for k, a in v.got.items() if k not in OUT_KEYS}, row=row, mp=mp, rep=rep,
                         mrep=mrep))
        return ok

    traffic._vr_spm_plan = spy
    try:
        model = get_model("emaxvr")
        model.evaluate_batch(load_workload(workload),
                             model.params.points(model.params.random_rows(points, np.random.default_rng(seed))))
    finally:
        traffic._vr_spm_plan = orig
    return max(caps, key=lambda c: len(c["rep"]))


def same_bits(a: tuple, b: tuple) -> bool:
    (ok_a, out_a), (ok_b, out_b) = a, b
    return np.array_equal(ok_a, ok_b) and all(
        np.asarray(out_a[k]).dtype == out_b[k].dtype and
        np.array_equal(np.asarray(out_a[k]).view(np.int64), out_b[k].view(np.int64)) for k in OUT_KEYS)


def median_s(fn, c, repeats: int, clock=time.process_time) -> float:
    ts = []
    for _ in range(repeats):
        t = clock()
        fn(c)
        ts.append(clock() - t)
    return sorted(ts)[repeats // 2]


def main() -> None:
    assert (_NONE, _SPM, _DRAM) == (0, 1, 2)
    c = capture()
    t = time.perf_counter()
    got = run_numba(c)
    print(f"first numba call (compiles): {time.perf_counter() - t:.2f} s")
    print(f"(row, variant) pairs: {len(c['rep'])}; identical bits: {same_bits(run_numpy(c), got)}")
    for _ in range(2):
        a, b = median_s(run_numpy, c, 15), median_s(run_numba, c, 15)
        print(f"chunk: numpy {a * 1e3:.2f} ms, numba {b * 1e3:.2f} ms, {a / b:.1f}x")
    small = dict(c, rep=c["rep"][:60], mrep=c["mrep"][:60], got={k: np.asarray(a)[:60] for k, a in c["got"].items()})
    print(f"60 pairs (one design point's size): identical bits: {same_bits(run_numpy(small), run_numba(small))}")
    a, b = (median_s(f, small, 2001, time.perf_counter) for f in (run_numpy, run_numba))
    print(f"60 pairs: numpy {a * 1e6:.1f} us, numba {b * 1e6:.1f} us (the call, its 5 outputs allocated), {a / b:.1f}x")
    for seed, wl in ((3, "resnet50"), (5, "alexnet"), (7, "mobilenet_v2")):  # other networks and points: the bits
        other = capture(seed, 1024, wl)
        print(f"{wl}, seed {seed}: {len(other['rep'])} pairs, identical bits: {same_bits(run_numpy(other), run_numba(other))}")


if __name__ == "__main__":
    main()

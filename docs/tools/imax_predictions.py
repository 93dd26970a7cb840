"""Write docs/validation/imax.md from real runs of the IMAX model.

    python docs/tools/imax_predictions.py [--out docs/validation/imax.md]

Sections: the calibration cases (``dse validate imax``), the scan behind the
one fitted constant (``LINK_EFFICIENCY``), the start counts behind the
dense/sparse difference, and the predictions issue 4 asks for
(speedup vs sparsity for sizes 64-1024, the state breakdown at sparsity 0.9,
LMM utilization before/after the optimisation, CSR vs JDS on biased rows,
dense-unoptimised / dense-optimised / sparse-optimised times at 1024),
each compared with what the thesis states (spec imax.md §6). Nothing here
is tuned: every number is printed as the model computes it.
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2]))

import argparse
import sys
from pathlib import Path

from archmodels import get_model
from archmodels.imax import costs as C
from dse import validate

SIZES = (64, 128, 256, 512, 1024)
SPARSITIES = (0.0, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99)
BIASES = (0.0, 0.25, 0.5, 0.75, 1.0)  # at sparsity 0.5, bias 1 already fills the densest rows
STATES = ("DRAIN", "CONF", "REGV", "RANGE", "LOAD", "EXEC", "WAIT")
M = get_model("imax")


def ev(workload: str, **params) -> dict:
    return M.evaluate(workload, **params)


def spmm(n: int, s: float, bias: float = 0.0) -> str:
    return f"spmm:n={n},sparsity={s}" + (f",bias={bias}" if bias else "")


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def f(x: float | None, d: int = 3) -> str:
    return "-" if x is None else f"{x:.{d}g}"


def calibration() -> str:
    rows = []
    for r in validate.run("imax"):
        pub = f"[{r.published[0]:g}, {r.published[1]:g}]" if isinstance(r.published, list) else f"{r.published:g}"
        err = f"{r.error * 100:+.1f} %" if r.error is not None else "in range" if r.ok else "out of range"
        ranged = isinstance(r.published, list) or not isinstance(r.rtol, (int, float))
        tol = "range" if ranged else f"{r.rtol * 100:.0f} %"
        rows.append([r.label, r.metric, f(r.model, 4), pub, err, tol, "PASS" if r.ok else "FAIL"])
    return table(["case", "metric", "model", "published", "error", "tolerance", "result"], rows)


CAL = ((64, 0.95), (128, 0.95), (256, 0.9), (512, 0.9), (1024, 0.9), (1024, 0.95))


def _cal_ok() -> bool:
    return all(r.ok for r in validate.run("imax"))


def _largest(states: dict) -> str:
    return max(states, key=states.get)


def efficiency_scan() -> str:
    """Every row a full re-run with another LINK_EFFICIENCY (the fitted constant)."""
    keep = C.LINK_EFFICIENCY
    rows = []
    try:
        for eff in (1.0, 0.8, 0.6, 0.45, 0.3, 0.2, 0.15, 0.12, 0.11, 0.1, 0.08):
            C.LINK_EFFICIENCY = eff
            sp = [ev(spmm(n, s))["total"]["speedup_vs_dense"] for n, s in CAL]
            d1024 = ev(spmm(1024, 0.9), format="dense")["layers"][0]["states"]
            d256 = ev(spmm(256, 0.9), format="dense")["layers"][0]["states"]
            mark = " (chosen)" if abs(eff - keep) < 1e-9 else ""
            rows.append([f"{eff:.3f}{mark}", f"{C.PIO_WORD_BYTES / (1.818e9 * eff) * 1e9:.1f}",
                         *(f"{x:.2f}" for x in sp), f"{d1024['EXEC'] / sum(d1024.values()):.2f}",
                         _largest(d256), "yes" if _cal_ok() else "no"])
    finally:
        C.LINK_EFFICIENCY = keep
    return table(["link efficiency", "PIO word [ns]"] + [f"{n} @{s}" for n, s in CAL]
                 + ["dense EXEC share 1024 @0.9", "largest dense state 256 @0.9", "all 7 calibration cases pass"],
                 rows)


def word_bytes_scan() -> str:
    """Sensitivity to the structural PIO word size (not refitted)."""
    keep = C.PIO_WORD_BYTES
    rows = []
    try:
        for wb in (8, 16, 32):
            C.PIO_WORD_BYTES = wb
            sp = [ev(spmm(n, s))["total"]["speedup_vs_dense"] for n, s in CAL]
            mark = " (model)" if wb == keep else ""
            rows.append([f"{wb}{mark}", *(f"{x:.2f}" for x in sp), "yes" if _cal_ok() else "no"])
    finally:
        C.PIO_WORD_BYTES = keep
    return table(["PIO word bytes"] + [f"{n} @{s}" for n, s in CAL] + ["all 7 calibration cases pass"], rows)


def starts_table() -> str:
    """Starts, B columns per start and bytes per start: dense (§3 loop) vs sparse (4.4.9)."""
    rows = []
    for n in SIZES:
        for label, params in (("dense", {"format": "dense"}), ("csr", {})):
            lay = ev(spmm(n, 0.9), **params)["layers"][0]
            per = (lay["dram_b_bytes"] + lay["dram_c_partial_bytes"] + lay["dram_c_bytes"]) / lay["starts"]
            rows.append([str(n), label, str(lay["starts"]), str(lay["bgrp"]), str(lay["agrp"]), str(lay["a_groups"]),
                         f"{lay['dram_a_bytes'] / 1e3:.0f}", f"{per / 1e3:.1f}",
                         f"{lay['states']['EXEC'] / lay['starts']:.0f}"])
    return table(["size", "run", "starts", "BGRP", "AGRP", "A groups", "A sent [KB]", "B + C per start [KB]",
                  "EXEC per start [cycles]"], rows)


def speedups(fmt: str) -> str:
    rows = []
    for n in SIZES:
        rows.append([str(n)] + [f"{ev(spmm(n, s), format=fmt)['total']['speedup_vs_dense']:.2f}" for s in SPARSITIES])
    return table(["size"] + [str(s) for s in SPARSITIES], rows)


def breakdown() -> str:
    rows = []
    for n in (1024, 512, 256):
        for label, params in (("dense", {"format": "dense"}), ("csr", {}), ("jds", {"format": "jds"})):
            lay = ev(spmm(n, 0.9), **params)["layers"][0]
            tot = sum(lay["states"].values())
            rows.append([str(n), label, f"{lay['time_s'] * 1e3:.2f}"]
                        + [f"{100 * lay['states'][s] / tot:.1f}" for s in STATES])
    return table(["size", "run", "time [ms]"] + [f"{s} %" for s in STATES], rows)


def high_sparsity() -> str:
    """Issue 12: time and state shares past sparsity 0.9 (CSR and JDS), n = 256, 512, 1024."""
    rows = []
    for n in (256, 512, 1024):
        for fmt in ("csr", "jds"):
            for sp in (0.9, 0.95, 0.99):
                r = ev(spmm(n, sp), format=fmt)
                lay = r["layers"][0]
                tot = sum(lay["states"].values())
                rows.append([str(n), fmt, str(sp), f"{r['total']['speedup_vs_dense']:.2f}", f"{lay['time_s'] * 1e3:.3f}"]
                            + [f"{100 * lay['states'][s] / tot:.1f}" for s in STATES])
    return table(["size", "format", "sparsity", "speedup", "time [ms]"] + [f"{s} %" for s in STATES], rows)


def lmm() -> str:
    rows = []
    for n in SIZES:
        on = ev(spmm(n, 0.9))["layers"][0]
        off = ev(spmm(n, 0.9), lmm_opt=False)["layers"][0]
        rows.append([str(n), f"{off['lmm_utilization']:.3f}", f"{on['lmm_utilization']:.3f}",
                     f"{on['agrp']}/{on['bgrp']}", str(on["a_groups"]), f"{off['time_s'] * 1e3:.2f}",
                     f"{on['time_s'] * 1e3:.2f}", f"{off['time_s'] / on['time_s']:.2f}"])
    return table(["size", "LMM util. unoptimised (AGRP=1)", "LMM util. optimised", "chosen AGRP/BGRP",
                  "A groups", "time unopt. [ms]", "time opt. [ms]", "gain"], rows)


def lmm_gain_vs_sparsity() -> str:
    rows = []
    for n in (1024, 512):
        cells = []
        for s in SPARSITIES:
            on = ev(spmm(n, s))["total"]["time_s"]
            off = ev(spmm(n, s), lmm_opt=False)["total"]["time_s"]
            cells.append(f"{off / on:.2f}")
        rows.append([str(n)] + cells)
    return table(["size"] + [str(s) for s in SPARSITIES], rows)


def bias() -> str:
    rows = []
    base = {}
    for b in BIASES:
        cells = [f"{b:g}"]
        for fmt in ("csr", "jds"):
            lay = ev(spmm(1024, 0.5, b), format=fmt)["layers"][0]
            base.setdefault(fmt, lay["time_s"])
            cells += [f"{lay['time_s'] * 1e3:.1f}", f"{lay['time_s'] / base[fmt]:.2f}", str(lay["blocks"]),
                      f"{lay['padding_slots'] / lay['stored_slots']:.2f}"]
        rows.append(cells)
    return table(["bias", "CSR time [ms]", "CSR vs bias 0", "CSR blocks", "CSR padding share",
                  "JDS time [ms]", "JDS vs bias 0", "JDS blocks", "JDS padding share"], rows)


def times_1024() -> str:
    rows = []
    d_off = ev(spmm(1024, 0.0), format="dense", lmm_opt=False)["total"]["time_s"]
    d_on = ev(spmm(1024, 0.0), format="dense")["total"]["time_s"]
    for s in (0.5, 0.9, 0.95, 0.99):
        csr = ev(spmm(1024, s))["total"]["time_s"]
        jds = ev(spmm(1024, s), format="jds")["total"]["time_s"]
        rows.append([str(s), f"{d_off * 1e3:.1f}", f"{d_on * 1e3:.1f}", f"{csr * 1e3:.1f}", f"{jds * 1e3:.1f}",
                     f"{d_on / csr:.2f}", f"{d_off / csr:.2f}"])
    return table(["sparsity", "dense unopt. [ms]", "dense opt. [ms]", "sparse opt. CSR [ms]",
                  "sparse opt. JDS [ms]", "dense opt. / CSR", "dense unopt. / CSR"], rows)


def schedules() -> str:
    rows = []
    for n, s in ((1024, 0.9), (1024, 0.5), (512, 0.9), (256, 0.9)):
        j = ev(spmm(n, s))["layers"][0]
        v = ev(spmm(n, s), schedule="ivs")["layers"][0]
        rows.append([f"{n} @{s}", f"{j['mac_units']} / {v['mac_units']}", f"{j['row_tiles']} / {v['row_tiles']}",
                     f"{j['agrp']} / {v['agrp']}", f"{j['a_groups']} / {v['a_groups']}",
                     f"{j['starts']} / {v['starts']}", f"{j['states']['EXEC']:.3g} / {v['states']['EXEC']:.3g}",
                     f"{j['time_s'] * 1e3:.2f} / {v['time_s'] * 1e3:.2f}"])
    return table(["matrix", "MAC units IVJ / IVS", "row tiles", "AGRP", "A groups", "starts", "EXEC [cycles]",
                  "time [ms]"], rows)


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _pairs(values: dict, fmt: str) -> str:
    return ", ".join(f"{k}: {fmt.format(*v)}" for k, v in values.items())


def statements() -> str:
    """Each published qualitative statement, the model's numbers, and whether they agree."""
    sp = {(n, s): ev(spmm(n, s))["total"]["speedup_vs_dense"] for n in SIZES for s in SPARSITIES}
    rows = []
    grows_s = all(sp[(n, a)] <= sp[(n, b)] + 1e-9 for n in SIZES for a, b in zip(SPARSITIES[1:], SPARSITIES[2:]))
    grows_n = all(sp[(a, s)] <= sp[(b, s)] + 1e-9 for s in (0.9, 0.95, 0.99) for a, b in zip(SIZES, SIZES[1:]))
    rows.append(["speedup grows with sparsity (0.3-0.99) and with size (0.9-0.99)",
                 f"monotone in sparsity: {grows_s}; in size: {grows_n}", _yes(grows_s and grows_n)])
    high = {n: (sp[(n, 0.9)], sp[(n, 0.99)]) for n in (256, 512, 1024)}
    rows.append(["more than 2x for sizes 256-1024 at high sparsity (0.9-0.99)", _pairs(high, "{:.2f}-{:.2f}"),
                 _yes(min(min(v) for v in high.values()) > 2)])
    small = max(sp[(n, s)] for n in (64, 128) for s in SPARSITIES)
    rows.append(["no speedup at 128 and below", f"max over sparsities: {small:.3f}", _yes(small <= 1.05)])
    shares = {}
    for n in (1024, 512, 256):
        for run, params in (("dense", {"format": "dense"}), ("csr", {})):
            st = ev(spmm(n, 0.9), **params)["layers"][0]["states"]
            tot = sum(st.values())
            shares[(n, run)] = {k: v / tot for k, v in st.items()}
    dom = [max(shares[(n, "dense")], key=shares[(n, "dense")].get) for n in (1024, 512, 256)]
    rows.append(["dense dominated by EXEC at 0.9 (1024, 512, 256)", f"largest state: {', '.join(dom)}",
                 _yes(all(d == "EXEC" for d in dom))])
    unopt = {}
    for n in (1024, 512, 256):
        st = ev(spmm(n, 0.0), format="dense", lmm_opt=False)["layers"][0]["states"]
        tot = sum(st.values())
        unopt[n] = (_largest(st), st["LOAD"] / tot, st["DRAIN"] / tot, st["EXEC"] / tot)
    load_ok = all(v[0] == "LOAD" for v in unopt.values())
    drain_ok = all(v[2] > v[3] for v in unopt.values())
    rows.append(["§1: dense products on 1 chip before the LMM optimisation: LOAD and DRAIN are the bottleneck "
                 "(1024, 512, 256)", _pairs(unopt, "largest {}, LOAD {:.2f}, DRAIN {:.2f}, EXEC {:.2f}"),
                 "yes" if load_ok and drain_ok else "partly: LOAD, not DRAIN" if load_ok else "**no**"])
    for state, claim, fmt in (("EXEC", "sparse EXEC share below half of dense's", "{:.2f} vs {:.2f}"),
                              ("DRAIN", "DRAIN share grows from dense to sparse", "{:.3f} vs {:.3f}")):
        vals = {n: (shares[(n, "csr")][state], shares[(n, "dense")][state]) for n in (1024, 512, 256)}
        ok = all(a < b / 2 for a, b in vals.values()) if state == "EXEC" else all(a > b for a, b in vals.values())
        rows.append([f"{claim} (sparse vs dense at 0.9)", _pairs(vals, fmt), _yes(ok)])
    util = {n: (ev(spmm(n, 0.9), lmm_opt=False)["total"]["lmm_utilization"],
                ev(spmm(n, 0.9))["total"]["lmm_utilization"]) for n in SIZES}
    before = max(u[0] for u in util.values())
    rows.append(["LMM utilization at most ~60 % before the optimisation (0.9)", f"max {before:.2f}",
                 _yes(before <= 0.65)])
    after_ok = min(util[1024][1], util[512][1]) >= 0.99 and all(util[n][1] < 0.99 for n in (64, 128, 256))
    rows.append(["100 % after it for 1024 and 512; smaller sizes fall back",
                 _pairs({n: (u[1],) for n, u in util.items()}, "{:.2f}"), _yes(after_ok)])

    def gain(n: int, s: float) -> float:
        return ev(spmm(n, s), lmm_opt=False)["total"]["time_s"] / ev(spmm(n, s))["total"]["time_s"]

    g = {n: (gain(n, 0.9), gain(n, 0.5)) for n in SIZES}
    faster = all(x > 1.0 + 1e-9 for v in g.values() for x in v)
    rows.append(["optimised schedule faster at every size (gain at sparsity 0.9 / 0.5)",
                 _pairs(g, "{:.2f}x / {:.2f}x") + " (1.00x: A is one block, nothing to group)", _yes(faster)])
    narrow = {n: (gain(n, 0.5), gain(n, 0.99)) for n in (512, 1024)}
    rows.append(["gain narrows at high sparsity", _pairs(narrow, "{:.2f}x at 0.5, {:.2f}x at 0.99"),
                 _yes(all(b < a for a, b in narrow.values()))])
    top = BIASES[-1]
    grow = {fmt: ev(spmm(1024, 0.5, top), format=fmt)["total"]["time_s"]
            / ev(spmm(1024, 0.5), format=fmt)["total"]["time_s"] for fmt in ("csr", "jds")}
    rows.append([f"JDS time grows far less than CSR's with row bias (1024, sparsity 0.5, bias 0 -> {top:g})",
                 f"CSR x{grow['csr']:.2f}, JDS x{grow['jds']:.2f}", _yes(grow["jds"] < 1.1 < grow["csr"])])
    iv = {f"{n} @{s}": (ev(spmm(n, s), schedule="ivs")["total"]["time_s"] / ev(spmm(n, s))["total"]["time_s"],)
          for n, s in ((1024, 0.5), (1024, 0.9), (512, 0.9))}
    rows.append(["IVJ better than IVS", "IVS / IVJ time: " + _pairs(iv, "{:.3f}"),
                 _yes(all(v[0] > 1 for v in iv.values()))])
    area = ev(spmm(64, 0.5))["total"]["area_mm2"]
    rows.append(["die 13.3 mm^2 at 28 nm with 64 units x 64 KB", f"{area:.2f} mm^2 (the anchor of tech.py)",
                 _yes(abs(area - 13.3) < 1e-9)])
    return table(["published statement", "model", "agrees"], rows)


def _exec_threshold(n: int) -> tuple[float, float, float]:
    """(speedup, dense EXEC / sparse EXEC, speedup below which the sparse EXEC share is under half)."""
    d = ev(spmm(n, 0.9), format="dense")["layers"][0]
    c = ev(spmm(n, 0.9))["layers"][0]
    ratio = d["states"]["EXEC"] / c["states"]["EXEC"]
    return d["time_s"] / c["time_s"], ratio, ratio / 2


def tradeoff() -> tuple[str, dict]:
    """Diagnostic: PIO cost and link efficiency varied independently (two free costs instead of one).

    Returns the table and the best 256 @0.9 speedup among the points that pass
    the three calibrated speedup cases.
    """
    keep = (C.PIO_WORD_BYTES, C.LINK_EFFICIENCY)
    rows, best = [], {"s256": 0.0}
    try:
        for eff in (1.0, 0.8, 0.6, 0.45, 0.3):
            for wb in (0, 2, 4, 8, 16):
                C.LINK_EFFICIENCY, C.PIO_WORD_BYTES = eff, wb
                s128, s256, s512, s1024 = (ev(spmm(n, s))["total"]["speedup_vs_dense"]
                                           for n, s in ((128, 0.95), (256, 0.9), (512, 0.9), (1024, 0.95)))
                ok = s128 <= 1.05 and 3.22 <= s1024 <= 5.98
                if ok and s256 > best["s256"]:
                    best = {"s256": s256, "eff": eff, "ns": wb / (1.818e9 * eff) * 1e9, "s512": s512}
                rows.append([f"{eff:.1f}", f"{wb / (1.818e9 * eff) * 1e9:.1f}", f"{s128:.2f}", f"{s256:.2f}",
                             f"{s512:.2f}", f"{s1024:.2f}", "yes" if ok else "no"])
    finally:
        C.PIO_WORD_BYTES, C.LINK_EFFICIENCY = keep
    return table(["link efficiency", "PIO word [ns]", "128 @0.95", "256 @0.9", "512 @0.9", "1024 @0.95",
                  "speedup calibration passes"], rows), best


def _with(eff: float, word_bytes: int, cases) -> dict:
    """Speedups with another link efficiency and PIO word size (a diagnostic, not a model setting)."""
    keep = (C.PIO_WORD_BYTES, C.LINK_EFFICIENCY)
    try:
        C.PIO_WORD_BYTES, C.LINK_EFFICIENCY = word_bytes, eff
        return {(n, s): ev(spmm(n, s))["total"]["speedup_vs_dense"] for n, s in cases}
    finally:
        C.PIO_WORD_BYTES, C.LINK_EFFICIENCY = keep


def _gain(n: int, s: float) -> float:
    return ev(spmm(n, s), lmm_opt=False)["total"]["time_s"] / ev(spmm(n, s))["total"]["time_s"]


def _exec95() -> float:
    d = ev(spmm(1024, 0.95), format="dense")["layers"][0]["states"]["EXEC"]
    return d / ev(spmm(1024, 0.95))["layers"][0]["states"]["EXEC"]


def disagreements(best: dict) -> str:
    """Why the statements marked **no** disagree, with the model's own numbers."""
    cases = ((128, 0.95), (256, 0.9), (512, 0.9), (1024, 0.95))
    sp = {c: ev(spmm(*c))["total"]["speedup_vs_dense"] for c in cases}
    free = _with(1.0, 0, cases)
    full = _with(1.0, C.PIO_WORD_BYTES, cases)
    half_word = _with(1.0, C.PIO_WORD_BYTES // 2, cases)
    lay = {(n, run): ev(spmm(n, 0.9), **params)["layers"][0] for n in (256, 1024)
           for run, params in (("dense", {"format": "dense"}), ("csr", {}))}
    d256, c256 = lay[(256, "dense")], lay[(256, "csr")]
    out = [
        f"* **More than 2x at 256 (and 512 at 0.9).** Model: 256 @0.9 {sp[(256, 0.9)]:.2f}, "
        f"512 @0.9 {sp[(512, 0.9)]:.2f}. At 256 both runs send the same B ({d256['dram_b_bytes'] / 1e3:.0f} KB) "
        f"and C ({d256['dram_c_bytes'] / 1e3:.0f} KB) over the link, and the sparse run needs "
        f"{c256['starts']} starts (one per W x 2 B columns, 4.4.9) against the dense run's "
        f"{d256['starts']} (BGRP {d256['bgrp']}, the §3 loop). With the theoretical link (efficiency 1.0) "
        f"256 @0.9 is {full[(256, 0.9)]:.2f}; with PIO free as well {free[(256, 0.9)]:.2f}, but then "
        f"128 @0.95 is {free[(128, 0.95)]:.2f} and 1024 @0.95 {free[(1024, 0.95)]:.2f}, outside both "
        "calibration bounds (<= 1.05, <= 5.98). The 128 bound alone leaves room (efficiency 1.0, "
        f"{C.PIO_WORD_BYTES // 2}-byte PIO words: 128 @0.95 {half_word[(128, 0.95)]:.2f}, 256 @0.9 "
        f"{half_word[(256, 0.9)]:.2f}, but 1024 @0.95 {half_word[(1024, 0.95)]:.2f}). What closes it is the "
        "1024 bound: bringing 1024 @0.95 under 5.98 takes host-link cost (per start and per byte) that weighs "
        f"more on the 256 product, where the sparse run has {c256['starts'] / d256['starts']:.0f} times the "
        "dense run's starts and the same B and C traffic, than on the 1024 one, where the dense run has "
        f"{lay[(1024, 'dense')]['starts'] / lay[(1024, 'csr')]['starts']:.0f} times the sparse starts. With the "
        "PIO cost and the link efficiency set independently (two free constants, diagnostic table below) "
        f"the best 256 @0.9 among the points passing the speedup calibration is {best['s256']:.2f} "
        f"(efficiency {best['eff']:.1f}, PIO word {best['ns']:.1f} ns; 512 @0.9 {best['s512']:.2f}).",
    ]
    keep = C.LINK_EFFICIENCY
    try:
        lows = {}
        for eff in (1.0, 0.6, 0.3, 0.15):
            C.LINK_EFFICIENCY = eff
            lows[eff] = ev(spmm(1024, 0.9))["total"]["speedup_vs_dense"]
    finally:
        C.LINK_EFFICIENCY = keep
    rows = []
    for n in (1024, 512, 256):
        spd, ratio, lim = _exec_threshold(n)
        rows.append(f"{n}: speedup {spd:.2f}, dense/sparse EXEC {ratio:.1f}, needs speedup < {lim:.2f}")
    eff_low = min(lows, key=lows.get)
    out.append(
        "* **Sparse EXEC share below half of dense's.** The sparse EXEC share is the dense one times "
        "speedup x (sparse EXEC / dense EXEC), so the statement holds only where the speedup is below half "
        "the EXEC ratio: " + "; ".join(rows) + f". Across link efficiencies 1.0-0.15 the 1024 @0.9 speedup "
        f"stays at or above {lows[eff_low]:.2f} (efficiency {eff_low:.2f}).")
    u = ev(spmm(1024, 0.0), format="dense", lmm_opt=False)["layers"][0]
    out.append(
        "* **§1, DRAIN as a bottleneck of the unoptimised dense run.** In the unoptimised order (A swapped, "
        "one block per start) the C group stays in the last unit for a whole B group, so C is drained once: "
        f"{u['dram_c_bytes'] / 1e6:.1f} MB at 1024 against {u['dram_a_bytes'] / 1e6:.0f} MB of A re-sent, "
        f"and DRAIN takes {u['states']['DRAIN'] / sum(u['states'].values()):.0%} of the time against LOAD's "
        f"{u['states']['LOAD'] / sum(u['states'].values()):.0%}.")
    ones = [f"{n} @{s}" for s in (0.9, 0.5) for n in SIZES if abs(_gain(n, s) - 1.0) < 1e-9]
    out.append(
        "* **Optimised schedule faster at every size.** Where A is a single block (" + ", ".join(ones)
        + ") the unoptimised order already keeps all of A in LMM (AGRP = 1 fits it, the reason the thesis "
        "gives for the narrowing gain), so both orders run the same starts and the gain is exactly 1.")
    return "\n".join(out)


def build() -> str:
    trade, best = tradeoff()
    parts = [
        "# IMAX — model vs published, and predictions",
        "",
        "Generated by `python docs/tools/imax_predictions.py` from runs of the model "
        "(`archmodels/imax/model.py`, spec `imax.md`); defaults unless stated: 64 units, 4 columns, "
        "64 KB LMM, 150 MHz, 1 chip, 1.818 GB/s link, CSR, IVJ, LMM optimisation on. Matrices are "
        "uniform random (seed 0) unless a bias is given. Every number below is the model's output; "
        "only `LINK_EFFICIENCY` was fitted (on the calibration cases).",
        "",
        "## Calibration (`dse validate imax`)",
        "",
        calibration(),
        "",
        "## The fitted constant: link efficiency",
        "",
        f"`LINK_EFFICIENCY` = {C.LINK_EFFICIENCY:.3f} (`archmodels/imax/costs.py`): DMA bytes and PIO words "
        f"({C.PIO_WORD_BYTES} bytes each) cross the board link at this fraction of `link_gbps`. Procedure "
        "(`archmodels/fitted.py`, the same for every fitted constant): the least relative error on its "
        "target, the 1024 @0.95 speedup 4.6, on a 0.05 grid refined to 0.005. The former rule, \"the largest "
        "value that passes\" (0.60, +28 % inside the 30 % tolerance), is gone; the fitted value is far below "
        "the wire rate, i.e. the host-side cost per transferred byte and PIO word (synchronous DMA set-up, "
        "driver calls) is much larger than the link time. Scan (each row a full re-run; speedups of sparse "
        "over dense):",
        "",
        efficiency_scan(),
        "",
        "Consequence of the refit, stated rather than hidden: at 0.60 two of the thesis's qualitative "
        "statements below agreed that no longer do (dense products dominated by EXEC at sparsity 0.9; the "
        "DRAIN share growing from dense to sparse). The one plotted figure pulls the link cost up, those "
        "statements pull it down; the fit uses the calibration figure only, as the procedure says, and no "
        "tolerance was changed. All 7 calibration cases still pass.",
        "",
        "The target is 1024 @0.95 (published 4.6, read off a plot, 30 %): the less the link costs, "
        f"the further the sparse run pulls ahead of the dense one (dense EXEC / sparse EXEC = {_exec95():.1f} "
        "there). Smaller efficiencies move it towards 4.6 and every product towards its transfers.",
        "",
        "Sensitivity to the structural PIO word size (efficiency kept at the fitted value; with 8-byte words a "
        "refit of the efficiency reaches 4.6 as well, so the one figure cannot tell the two apart):",
        "",
        word_bytes_scan(),
        "",
        "## Starts and transfers per start (sparsity 0.9)",
        "",
        "A sparse start covers one SIMD width of B columns (BGRP <= W x 2, constraint 4.4.9: the 2-deep loop "
        "runs over the stored rows of the A group's blocks); a dense start loops over the rows and over all "
        "the B columns the LMM holds (§3), so BGRP is bounded by the LMM only. Small dense products therefore "
        "need fewer starts than sparse ones; at large sizes the B slab (k x BGRP x 4 bytes <= LMMSIZE/2) "
        "limits both to the same BGRP, and the dense A, without index but with every element, needs more "
        "A groups.",
        "",
        starts_table(),
        "",
        "## Predictions (not fitted)",
        "",
        "### Speedup of sparse over dense vs sparsity (CSR, IVJ)",
        "",
        speedups("csr"),
        "",
        "Same with JDS:",
        "",
        speedups("jds"),
        "",
        "### Past sparsity 0.9: what stops the time falling (issue 12)",
        "",
        "Before this change n=256 ran 1.30x at 0.9, 0.95 and 0.99 alike, and REGV was 29 % of its time: every "
        "start rewrote all 4 registers of every logical PE (1,024 PIO words), although within an A group "
        "successive starts change only the B group, whose slab and C group land in the same LMM regions. That "
        "per-start cost is a schedule artifact: a start now rewrites all registers only at the first start of "
        "an A group (and after CONF) and otherwise the B and C group bases (`B_GROUP_WORDS` = 2); the "
        "start-by-start reference walk (`schedule.simulate`) does the same. `LINK_EFFICIENCY` was refitted by "
        "the one procedure of archmodels/fitted.py on the corrected schedule (0.165 -> 0.11). What is left past 0.9 is physical in the model "
        "and does not depend on A's nonzeros: the dense B slab loads and the dense C drains (LOAD, DRAIN), "
        "RANGE per start (the B range of every unit changes with each B group; 4.4.9 fixes the starts at "
        "n / (W x 2)), and EXEC, which iterates every stored row once per B group at W cycles whatever its "
        "nonzero count. With CSR every row is padded to H = 58 slots, so once the longest row fits one block "
        "the A bytes stop shrinking too; JDS drops empty rows and the Margin, hence its small further gain. "
        "The spec (§6) states > 2x for 256-1024 at high sparsity: 512 and 1024 reach it, 256 does not "
        "(an honest gap; nothing fitted to these curves).",
        "",
        high_sparsity(),
        "",
        "### State breakdown at sparsity 0.9 (share of cycles)",
        "",
        breakdown(),
        "",
        "### LMM utilization before/after the optimisation (sparsity 0.9)",
        "",
        lmm(),
        "",
        "Time gain of the optimisation (unoptimised / optimised time) vs sparsity:",
        "",
        lmm_gain_vs_sparsity(),
        "",
        "### CSR vs JDS on biased rows (1024 x 1024, sparsity 0.5)",
        "",
        bias(),
        "",
        "### 1024 x 1024: dense-unoptimised, dense-optimised, sparse-optimised times",
        "",
        times_1024(),
        "",
        "### IVJ vs IVS",
        "",
        f"IVS holds the indices of a set's {int(C.ivs_offsets_per_set(4))} slots in its first offset unit "
        f"({C.a_unit_row_bytes('ivs', 4)} bytes per row and block against {C.a_unit_row_bytes('ivj', 4)} for an "
        "IVJ unit), so its A groups hold fewer blocks and large matrices need row tiles.",
        "",
        schedules(),
        "",
        "## Against the thesis's other statements (spec imax.md §6, §1)",
        "",
        statements(),
        "",
        "### What still disagrees, and why",
        "",
        disagreements(best),
        "",
        "Diagnostic for the first item (not a model setting: PIO cost and link efficiency varied "
        "independently):",
        "",
        trade,
        "",
    ]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/validation/imax.md")
    args = ap.parse_args(argv)
    text = build()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

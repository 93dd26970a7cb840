"""Write docs/validation/imax.md from real runs of the IMAX model.

    python studies/imax_predictions.py [--out docs/validation/imax.md]

Sections: the calibration cases (``dse validate imax``), the scan behind the
one fitted constant (``PIO_WORD_S``), and the predictions issue 4 asks for
(speedup vs sparsity for sizes 64-1024, the state breakdown at sparsity 0.9,
LMM utilization before/after the optimisation, CSR vs JDS on biased rows,
dense-unoptimised / dense-optimised / sparse-optimised times at 1024),
each compared with what the thesis states (spec imax.md §6). Nothing here
is tuned: every number is printed as the model computes it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from archmodels import get_model
from archmodels import imax_costs as C
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


def pio_scan() -> str:
    keep = C.PIO_WORD_S
    rows = []
    try:
        for pio in (0.0, 0.05e-6, 0.1e-6, 0.15e-6, 0.2e-6, 0.3e-6, 0.5e-6):
            C.PIO_WORD_S = pio
            sp = [ev(spmm(n, 0.95))["total"]["speedup_vs_dense"] for n in (64, 128, 256, 1024)]
            d = ev(spmm(1024, 0.9), format="dense")["layers"][0]["states"]
            share = d["EXEC"] / sum(d.values())
            ok = sp[0] <= 1.05 and sp[1] <= 1.05 and abs(sp[3] / 4.6 - 1) <= 0.3
            rows.append([f"{pio * 1e6:.2f}", *(f"{x:.3f}" for x in sp), f"{share:.2f}", "yes" if ok else "no"])
    finally:
        C.PIO_WORD_S = keep
    return table(["PIO word [us]", "64 @0.95", "128 @0.95", "256 @0.95", "1024 @0.95",
                  "dense EXEC share 1024 @0.9", "all 3 speedup cases pass"], rows)


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
    for n, s in ((1024, 0.9), (1024, 0.5), (512, 0.9)):
        j = ev(spmm(n, s))["layers"][0]
        v = ev(spmm(n, s), schedule="ivs")["layers"][0]
        rows.append([f"{n} @{s}", str(j["mac_units"]), str(v["mac_units"]), f"{j['states']['EXEC']:.3g}",
                     f"{v['states']['EXEC']:.3g}", f"{j['time_s'] * 1e3:.2f}", f"{v['time_s'] * 1e3:.2f}"])
    return table(["matrix", "IVJ MAC units", "IVS MAC units", "IVJ EXEC [cycles]", "IVS EXEC [cycles]",
                  "IVJ time [ms]", "IVS time [ms]"], rows)


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

    g09 = {n: (gain(n, 0.9),) for n in SIZES}
    rows.append(["optimised schedule faster at every size (0.9)", _pairs(g09, "{:.2f}x"),
                 _yes(all(g[0] > 1.0 + 1e-9 for g in g09.values()))])
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


def build() -> str:
    parts = [
        "# IMAX — model vs published, and predictions",
        "",
        "Generated by `python studies/imax_predictions.py` from runs of the model "
        "(`archmodels/imax.py`, spec `imax.md`); defaults unless stated: 64 units, 4 columns, "
        "64 KB LMM, 150 MHz, 1 chip, 1.818 GB/s link, CSR, IVJ, LMM optimisation on. Matrices are "
        "uniform random (seed 0) unless a bias is given. Every number below is the model's output; "
        "only `PIO_WORD_S` was fitted (on the calibration cases).",
        "",
        "## Calibration (`dse validate imax`)",
        "",
        calibration(),
        "",
        "## The fitted constant: PIO word time",
        "",
        f"`PIO_WORD_S` = {C.PIO_WORD_S * 1e6:.2f} us (`archmodels/imax_costs.py`). Scan (each row a full re-run):",
        "",
        pio_scan(),
        "",
        "The two \"no speedup\" cases need the per-start host overhead to dominate 64- and 128-sized "
        "products (their sparse EXEC is a third of the dense one); the smallest value in 0.05 us steps "
        "that passes all three speedup cases with margin is 0.2 us. A side effect, recorded below: the "
        "same overhead makes REGV/RANGE the largest states of the 1024 dense product, where the thesis "
        "says EXEC dominates.",
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
        schedules(),
        "",
        "## Against the thesis's other statements (spec imax.md §6)",
        "",
        statements(),
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

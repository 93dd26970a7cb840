"""Tables for docs/validation/emax.md, generated from model runs.

``python docs/tools/emax_report.py`` prints, in Markdown: the calibration
cases (``dse validate``), the other published figures of spec `emax.md`
that are not calibration cases, and the predictions (VGG16 per layer,
128 vs 256 KB SPM). Nothing here is fitted.
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parents[2]))

from archmodels import get_model
from dse import validate

MIB = 2**20


def _layers(result, kinds=("conv", "fc", "pool")):
    return [lay for lay in result["layers"] if lay["kind"] in kinds and not lay["fused_into"]]


def calibration() -> str:
    return validate.markdown(validate.run("emaxv") + validate.run("emaxvr"))


def held_out() -> str:
    """Published figures of the spec that are not calibration cases, model vs paper."""
    v = get_model("emaxv").evaluate("alexnet-conv")
    vr = get_model("emaxvr").evaluate("alexnet-conv")
    vr256 = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=256.0)
    rows = ["| figure (spec emax.md) | layer | model | published |", "|---|---|---|---|"]
    util_v = {"C1": 49, "C4": 41, "C7": 58, "C8": 58, "C9": 58}
    for lay in _layers(v, ("conv",)):
        n = lay["name"]
        ld = (lay["states"]["LOAD"] + lay["states"]["DRAIN"]) / lay["cycles"]
        rows.append(f"| EMAXV ALU utilization §4 | {n} | {lay['alu_occupancy'] * 100:.0f} % | {util_v[n]} % |")
        rows.append(f"| EMAXV LMMI+REGV+PRE_POST_EXEC share §2 | {n} | {lay['overhead_fraction'] * 100:.0f} % | 76-88 % |")
        rows.append(f"| EMAXV LOAD+DRAIN share §2 | {n} | {ld * 100:.1f} % | 7-9 % |")
    pub_ov = {"C1": 1, "C4": 3, "C7": 2, "C8": 4, "C9": 5}
    pub_ld = {"C1": 2, "C4": 7, "C7": 11, "C8": 14, "C9": 18}
    for lay in _layers(vr, ("conv",)):
        n = lay["name"]
        st = lay["states"]
        other = 1 - (st["LOAD"] + st["DRAIN"] + st["EXEC"] + st["PLOAD"] + st["PDRAIN"]) / lay["cycles"]
        rows.append(f"| EMAXVR share outside LOAD+DRAIN+EXEC §4 | {n} | {other * 100:.1f} % | {pub_ov[n]} % |")
        rows.append(f"| EMAXVR DRAIN share §4 | {n} | {st['DRAIN'] / lay['cycles'] * 100:.2f} % | <= 1 % |")
        rows.append(f"| EMAXVR LMM loads / EXEC (hidden by PLOAD) §4 | {n} | {lay['load_fraction_of_exec'] * 100:.0f} % "
                    f"(exposed {st['PLOAD'] / st['EXEC'] * 100:.1f} %) | {pub_ld[n]} % |")
    avg = lambda r: sum(lay["alu_occupancy"] for lay in _layers(r, ("conv",))) / 5  # noqa: E731
    rows.append(f"| average ALU utilization §4 | C1-C9 | EMAXVR {avg(vr) * 100:.0f} %, EMAXV {avg(v) * 100:.0f} % | 80 %, 53 % |")
    c1v, c1r = v["layers"][0]["starts"], vr["layers"][0]["starts"]
    rows.append(f"| EMAXV/EMAXVR starts §3 | C1 | {c1v / c1r:.0f} | 5,280 |")
    for label, r, pub in (("128 KB", vr, 0.0059), ("256 KB", vr256, 0.0048)):
        rows.append(f"| DRAM access per op, SPM {label} §4 | AlexNet conv | {r['total']['dram_access_per_op']:.4f} "
                    f"({r['total']['dram_bytes'] / MIB / 2 / r['total']['macs'] * 1e6:.4f} with MiB) | {pub} |")
    m = get_model("emaxvr")
    t = m.evaluate_points("alexnet-conv", [{}, {"spm_kb": 0.0}, {"spm_kb": 256.0}]).totals
    rows.append(f"| reads saved by the SPM §5 | AlexNet conv | {(t['dram_read_bytes'][1] - t['dram_read_bytes'][0]) / MIB:.1f} MiB | 24.5 MB |")
    rows.append(f"| writes saved by the SPM §5 | AlexNet conv | {(t['dram_write_bytes'][1] - t['dram_write_bytes'][0]) / MIB:.1f} MiB | 21.0 MB |")
    rows.append(f"| reads saved 128 -> 256 KB §5 | AlexNet conv | {(t['dram_read_bytes'][0] - t['dram_read_bytes'][2]) / MIB:.2f} MiB | 1.1 MB |")
    rows.append(f"| writes saved 128 -> 256 KB §5 | AlexNet conv | {(t['dram_write_bytes'][0] - t['dram_write_bytes'][2]) / MIB:.2f} MiB | 0.24 MB |")
    full = m.evaluate("alexnet")
    for lay in full["layers"]:
        if lay["kind"] == "fc":
            rows.append(f"| FC LOAD share of time §3.1 | {lay['name']} | {lay['states']['LOAD'] / lay['cycles'] * 100:.0f} % | > 80 % |")
    vgg = m.evaluate("vgg16-conv")
    convs = _layers(vgg, ("conv",))
    worst_ov = max(1 - (lay["states"]["LOAD"] + lay["states"]["DRAIN"] + lay["states"]["EXEC"] + lay["states"]["PLOAD"]
                        + lay["states"]["PDRAIN"]) / lay["cycles"] for lay in convs)
    worst_dr = max(lay["states"]["DRAIN"] / lay["cycles"] for lay in convs)
    worst_ld = max(lay["load_fraction_of_exec"] for lay in convs)
    rows.append(f"| VGG16 share outside LOAD+DRAIN+EXEC §4 | worst layer | {worst_ov * 100:.1f} % | <= 3 % |")
    rows.append(f"| VGG16 DRAIN share §4 | worst layer | {worst_dr * 100:.2f} % | 1 % |")
    rows.append(f"| VGG16 LMM loads / EXEC §4 | worst layer | {worst_ld * 100:.0f} % | <= 18 % |")
    return "\n".join(rows)


def vgg16_table(workload: str = "vgg16", **params) -> str:
    r = get_model("emaxvr").evaluate(workload, **params)
    rows = ["| layer | mapping | schedule | starts (x bands) | parallelism | time [ms] | ALU occupancy | utilization | DRAM [MB] |",
            "|---|---|---|---|---|---|---|---|---|"]
    for lay in r["layers"]:
        if lay["fused_into"]:
            rows.append(f"| {lay['name']} | fused into {lay['fused_into']} | | | | | | | |")
            continue
        rows.append(f"| {lay['name']} | {lay['mapping']} | {lay['schedule']} | {lay['starts']} ({lay['activations']}) "
                    f"| {lay['parallelism']} | {lay['time_s'] * 1e3:.2f} | {lay['alu_occupancy']:.3f} "
                    f"| {lay['utilization']:.3f} | {lay['dram_bytes'] / 1e6:.2f} |")
    t = r["total"]
    rows.append(f"| **total** | | | {t['starts']} ({t['activations']}) | | {t['time_s'] * 1e3:.1f} | "
                f"| {t['utilization']:.3f} | {t['dram_bytes'] / 1e6:.1f} |")
    return "\n".join(rows) + (f"\n\nthroughput {t['macs_per_s'] / 1e9:.1f} GMAC/s, energy {t['energy_j'] * 1e3:.1f} mJ "
                              f"(DRAM {t['dram_energy_j'] * 1e3:.1f} mJ), DRAM power {t['dram_power_w'] * 1e3:.0f} mW, "
                              f"area {t['area_mm2']:.2f} mm2")


def spm_table() -> str:
    m = get_model("emaxvr")
    rows = ["| workload | SPM | time [ms] | DRAM read [MB] | DRAM write [MB] | DRAM [MB] | DRAM power [mW] | energy [mJ] |",
            "|---|---|---|---|---|---|---|---|"]
    for wl in ("alexnet-conv", "alexnet", "vgg16-conv", "vgg16"):
        for spm in (0.0, 128.0, 256.0):
            t = m.evaluate(wl, spm_kb=spm)["total"]
            rows.append(f"| {wl} | {spm:.0f} KB | {t['time_s'] * 1e3:.2f} | {t['dram_read_bytes'] / 1e6:.2f} "
                        f"| {t['dram_write_bytes'] / 1e6:.2f} | {t['dram_bytes'] / 1e6:.2f} | {t['dram_power_w'] * 1e3:.0f} "
                        f"| {t['energy_j'] * 1e3:.2f} |")
    return "\n".join(rows)


def vgg16_traffic() -> str:
    """Issue 12 predictions: EMAXVR VGG16 conv DRAM traffic per layer at 128 and 256 KB, against compulsory."""
    m = get_model("emaxvr")
    runs = {kb: m.evaluate("vgg16-conv", spm_kb=kb) for kb in (128.0, 256.0)}
    rows = ["| layer | mapping @128 KB | loop nest @128 KB | compulsory [MB] | DRAM @128 KB [MB] | ratio | "
            "mapping @256 KB | DRAM @256 KB [MB] | ratio |", "|---|---|---|---|---|---|---|---|---|"]
    a, b = (_layers(runs[kb], ("conv",)) for kb in (128.0, 256.0))
    for x, y in zip(a, b):
        rows.append(f"| {x['name']} | {x['mapping']} ({x['schedule']}) | {x['loop_nest']} "
                    f"| {x['dram_compulsory_bytes'] / 1e6:.2f} | {x['dram_bytes'] / 1e6:.2f} | {x['dram_traffic_ratio']:.2f} "
                    f"| {y['mapping']} ({y['schedule']}) | {y['dram_bytes'] / 1e6:.2f} | {y['dram_traffic_ratio']:.2f} |")
    lines = ["\n".join(rows), "", "| SPM | time [ms] | DRAM [MB] | compulsory [MB] | ratio | DRAM access per op [B/op] "
             "| overhead share | worst layer outside LOAD+DRAIN+EXEC | worst LMM loads / EXEC |", "|---|---|---|---|---|---|---|---|---|"]
    for kb, r in runs.items():
        t = r["total"]
        ovh = max(1 - (lay["states"]["LOAD"] + lay["states"]["DRAIN"] + lay["states"]["EXEC"]) / lay["cycles"]
                  for lay in _layers(r, ("conv",)))
        ld = max(lay["load_fraction_of_exec"] for lay in _layers(r, ("conv",)))
        lines.append(f"| {kb:.0f} KB | {t['time_s'] * 1e3:.1f} | {t['dram_bytes'] / 1e6:.1f} "
                     f"| {t['dram_compulsory_bytes'] / 1e6:.1f} | {t['dram_traffic_ratio']:.2f} "
                     f"| {t['dram_access_per_op']:.4f} | {t['overhead_fraction']:.3f} | {ovh * 100:.1f} % | {ld * 100:.0f} % |")
    return "\n".join(lines)


def vgg16_spm_power() -> str:
    """The thesis's §5 method (transfer time saved x DDR3L power / run time) applied to VGG16 conv."""
    m = get_model("emaxvr")
    base = m.params.defaults()
    out = ["| comparison | DRAM power saved [mW] |", "|---|---|"]
    for metric, text in (("dram_power_saved_w", "SPM 128 KB vs no SPM"),
                         ("dram_power_saved_spm128_to_256_w", "SPM 128 KB -> 256 KB")):
        w = m.validation_metric(metric, "vgg16-conv", base, {}, {})
        out.append(f"| {text} | {w * 1e3:.0f} |")
    return "\n".join(out)


def criteria_table() -> str:
    """VGG16 conv at 128 KB under each mapper criterion."""
    m = get_model("emaxvr")
    rows = ["| criterion | time [ms] | DRAM [MB] | energy [mJ] |", "|---|---|---|---|"]
    for c in ("time", "time_then_dram", "edp", "energy", "dram"):
        t = m.evaluate("vgg16-conv", criterion=c)["total"]
        rows.append(f"| {c} | {t['time_s'] * 1e3:.1f} | {t['dram_bytes'] / 1e6:.1f} | {t['energy_j'] * 1e3:.1f} |")
    return "\n".join(rows)


def spm_sweep() -> str:
    m = get_model("emaxvr")
    rows = ["| SPM [KB] | " + " | ".join(str(k) for k in (32, 64, 96, 128, 160, 192, 256, 512)) + " |",
            "|---|" + "---|" * 8]
    for c in ("time", "dram"):
        vals = [m.evaluate("vgg16-conv", spm_kb=float(k), criterion=c)["total"]["dram_bytes"] / 1e6
                for k in (32, 64, 96, 128, 160, 192, 256, 512)]
        rows.append(f"| DRAM [MB], criterion={c} | " + " | ".join(f"{v:.0f}" for v in vals) + " |")
    return "\n".join(rows)


def main() -> None:
    print("## Calibration cases\n")
    print(calibration())
    print("\n## Other published figures\n")
    print(held_out())
    print("\n## VGG16 (conv + pool + FC), default EMAXVR\n")
    print(vgg16_table())
    print("\n## VGG16 conv only, SPM 256 KB\n")
    print(vgg16_table("vgg16-conv", spm_kb=256.0))
    print("\n## SPM 0 / 128 / 256 KB\n")
    print(spm_table())
    print("\n## VGG16 conv DRAM traffic vs compulsory (issue 12)\n")
    print(vgg16_traffic())
    print("\n## VGG16 conv: DRAM power saved by the SPM (spec §5 method)\n")
    print(vgg16_spm_power())
    print("\n## VGG16 conv at 128 KB by criterion\n")
    print(criteria_table())
    print("\n## SPM sweep, VGG16 conv\n")
    print(spm_sweep())


if __name__ == "__main__":
    main()

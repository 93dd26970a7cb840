"""Build docs/technology.md: every number of the technology table (archmodels/tech.py) with its source.

Run by `make docs`; tests/test_docs.py checks the page is current.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

HEAD = """# Technology table

Every model takes energy, leakage, DRAM, clock and area costs from
`archmodels/tech.py`, so the same operation or the same byte moved costs the
same in every model (tests/test_conformance.py checks it). Every number below
is generated from the code (`python docs/tools/build_technology.py`, part of
`make docs`) and carries its source; numbers marked *assumption* are stated,
not published.

## Sources

* **[H14]** M. Horowitz, "Computing's energy problem (and what we can do about it)", ISSCC 2014 -- 45 nm, 0.9 V: arithmetic energy and area, SRAM 64-bit read energy (8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ).
* **[T28]** TSMC 28 nm high-density 6T SRAM bit cell, 0.127 µm². **[I14]** Natarajan et al., IEDM 2014 (Intel 14 nm): 0.0588 µm².
* **[IMAX]** IMAX die in 28 nm: 13.3 mm² with 64 units x 64 KB LMM (spec `imax.md` §2) -- anchors the PE logic overhead (fitted, docs/fitting.md).
* **[DDR3L]** Micron 1 Gb DDR3L x16 -093, 1.35 V: read 262.3 mW, write 546.6 mW per chip, 4 chips on a 64-bit DDR3-2133 bus (17.064 GB/s) -- the EMAX thesis's method (spec `emax.md` §5).
* **[DDR4]** Micron 8 Gb DDR4-2400 x8, 1.2 V: IDD4R = IDD4W = 145 mA, IDD3N = 55 mA (the IDD set Ramulator 2 ships); Micron TN-40-07 method: (IDD4 - IDD3N) x VDD over the chip's 2.4 GB/s.
* **[LP4]** H. Ha, "Understanding and improving the energy efficiency of DRAM", PhD thesis, Stanford 2018: LPDDR4 13-14 pJ/bit per access (activation and I/O included); midpoint used.
* **[HBM2]** M. O'Connor et al., "Fine-grained DRAM", MICRO 2017: HBM2 3.97 pJ/bit per access (activation, data movement, I/O).
* **[SN90]** T. Sakurai, A. R. Newton, IEEE JSSC 25(2), 1990: alpha-power law, gate delay ~ V / (V - V_t)^alpha, alpha ~ 1.3 for short channels.
* **[ZS02]** V. Zyuban, P. Strenski, ISLPED 2002: sizing for a tighter cycle raises area and energy steeply as the target approaches the fastest achievable delay.
* **[C7]** R. Balasubramonian et al., "CACTI 7", ACM TACO 14(2), 2017: SRAM leakage by device type (order of magnitude only).
* **[KR07]** I. Kuon, J. Rose, IEEE TCAD 26(2), 2007: an FPGA draws ~14x the dynamic power of standard cells for the same circuit.
* **[ReNA]** the ReNA FPGA port closes timing at 144 MHz with 4,096 of 5,760 DSP blocks (spec `rena.md` §4).

## Rules (assumptions stated)

* Node scaling from 45 nm: energy ~ L·V², logic area ~ L². Stillmaker & Baas (Integration 58, 2017) show such rules can be off by ~2x in deep submicron: compare designs at the same node.
* 16-bit integer multiply/add interpolated from [H14]'s 8/32-bit figures (multiplier ~ width², adder ~ width).
* SRAM read (= write) energy per 64-bit access = 10 pJ·√(size / 8 KB) at 45 nm (fits [H14]'s points within 13 %); macro array efficiency 0.5.
* **DRAM** is a property of the memory, not of the accelerator's node: one row per type, chosen with each model's `dram` parameter. The rows do not share a basis (below): DDR3L and DDR4 are read/write burst energy only, LPDDR4 and HBM2 whole accesses. EMAX's thesis figures are the DDR3L row.
* **Leakage** (*assumption*, the order CACTI 7 gives for low-power devices at 85 °C): static power = logic mm² x logic leakage + SRAM KB x SRAM leakage, x V / V_nom. `power_w` = `dynamic_power_w` + `static_power_w`; each layer is charged `static_energy_j` = static power x its time.
* **Clock** (*assumption* for the per-node numbers, shape from [SN90], [ZS02]): up to the nominal clock F_nom the supply is nominal; above it the supply rises along the alpha-power law up to V_max, which sets the node's maximum clock (above it a design is infeasible); dynamic energy on chip scales with (V / V_nom)²; logic synthesised for a clock above 0.6 x F_nom is larger, up to (1 + penalty) x at F_nom: factor = 1 + penalty x ((f / F_nom - 0.6) / 0.4)², clipped to [0, 1]. DRAM energy does not scale with the accelerator's clock.
* **FPGA** (ReNA's port): dynamic energy x [KR07]'s ratio, no voltage scaling; static power per device (*assumption*: Stratix 10 SX 2800 9 W, Arria 10 GX 1150 3.5 W, the order of Intel's Early Power Estimator for a full device); the clock a design closes at is `small_design_mhz / (1 + FMAX_CONGESTION x u)`, u the largest resource share, small-design clock an *assumption* (300 MHz Stratix 10, 250 MHz Arria 10), `FMAX_CONGESTION` fitted on [ReNA].
"""


def build() -> str:
    from archmodels import tech
    from archmodels.rena import fpga_devices as fd

    n = tech.NODES_NM
    out = [HEAD, "## Arithmetic and SRAM", "", "| quantity | " + " | ".join(f"{x} nm" for x in n) + " | source |",
           "|---|" + "---|" * len(n) + "---|"]
    for dt in tech.DTYPES:
        out.append(f"| MAC energy {dt} [pJ] | " + " | ".join(f"{tech.mac_energy_pj(dt, x):.3f}" for x in n) + " | [H14] scaled |")
    for dt in tech.DTYPES:
        out.append(f"| MAC area {dt} [µm²] | " + " | ".join(f"{tech.mac_area_mm2(dt, x) * 1e6:.0f}" for x in n) + " | [H14] scaled |")
    for kb in (1, 8, 64, 256, 1024, 4096):
        out.append(f"| SRAM {kb} KB energy [pJ/B] | " + " | ".join(f"{float(tech.sram_energy_pj_per_byte(kb, x)):.3f}" for x in n)
                   + " | [H14] fit |")
    out.append("| SRAM area [mm²/KB] | " + " | ".join(f"{float(tech.sram_area_mm2(1, x)):.5f}" for x in n) + " | [T28], [I14] |")
    out.append("| SRAM leakage [µW/KB] | " + " | ".join(f"{tech.SRAM_LEAK_UW_PER_KB[x]:g}" for x in n) + " | assumption [C7] |")
    out.append("| logic leakage [mW/mm²] | " + " | ".join(f"{tech.LOGIC_LEAK_MW_PER_MM2[x]:g}" for x in n) + " | assumption [C7] |")
    out.append(f"| PE logic overhead (x bare MAC area) | {tech.PE_LOGIC_OVERHEAD:.2f} | same | fitted on [IMAX] |")
    out += ["", "## Clock: voltage-frequency model per node", "",
            "| node | V_nom [V] | V_t [V] | V_max [V] | F_nom [MHz] | f_max [MHz] | V/V_nom at f_max | dynamic energy x at f_max "
            "| area x from | area x at F_nom |", "|---|---|---|---|---|---|---|---|---|---|"]
    for x in n:
        fm = tech.fmax_mhz(x)
        c = tech.clock_costs([fm], x)
        out.append(f"| {x} nm | {tech.VDD_NOM[x]} | {tech.VT[x]} | {tech.VDD_MAX[x]} | {tech.F_NOM_MHZ[x]:.0f} | {fm:.0f} "
                   f"| {c.vdd_ratio[0]:.3f} | {c.energy_scale[0]:.3f} | {tech.AREA_KNEE * tech.F_NOM_MHZ[x]:.0f} MHz "
                   f"| {1 + tech.AREA_PENALTY_MAX:.1f} |")
    out += ["", f"alpha = {tech.ALPHA} [SN90]. V_nom: 0.9 V at 28 nm, 0.8 V at 14 nm (assumption, as before); V_t, V_max, "
            "F_nom: assumption (published 28 nm accelerators run 606 MHz -- DaDianNao -- to 700 MHz -- TPU v1 -- at "
            "nominal supply, below F_nom).", "",
            "## DRAM rows", "", "| `dram` | read [pJ/B] | write [pJ/B] | basis | source |", "|---|---|---|---|---|"]
    for r in tech.DRAM_TYPES.values():
        out.append(f"| `{r.name}` | {r.read_pj_per_byte:.1f} | {r.write_pj_per_byte:.1f} | {r.basis} | {r.source} |")
    out += ["", f"For reference, [H14]'s DRAM figure is {tech.H14_DRAM_PJ_PER_BYTE:.0f} pJ/B (1.3-2.6 nJ per 64-bit "
            "access, midpoint), the value every model but EMAX used before the table had rows.", "",
            "## FPGA devices", "", "| device | node | static [W] | small-design clock [MHz] | f_max at 71 % DSP [MHz] |",
            "|---|---|---|---|---|"]
    for d in fd.DEVICES.values():
        out.append(f"| {d.name} | {d.node_nm} nm | {d.static_w:g} (assumption) | {d.small_design_mhz:g} (assumption) "
                   f"| {float(fd.fmax_mhz(d, 4096 / 5760)):.0f} |")
    out += ["", f"`FMAX_CONGESTION` = {fd.FMAX_CONGESTION:.4f} (fitted on [ReNA], docs/fitting.md); "
            f"dynamic energy ratio FPGA / standard cells = {tech.FPGA_DYNAMIC_ENERGY_RATIO:g} [KR07].", "",
            "## Known gaps", "",
            "* Absolute energies are indicative (classical scaling, mixed DRAM bases); leakage and the voltage-frequency "
            "numbers per node are assumptions, not fitted to any measurement of these systems -- they make the clock and "
            "large SRAMs cost something, their exact size is not validated.",
            "* The atom-switch model charges no clock cost (no figure for via-switch tiles).",
            "* Only IMAX publishes a die; EMAX, ReNA-ASIC and the multi-core model borrow its PE overhead (`dse models ARCH` "
            "prints each model's area anchor).", ""]
    return "\n".join(out)


if __name__ == "__main__":
    (ROOT / "docs" / "technology.md").write_text(build())
    print("wrote docs/technology.md")

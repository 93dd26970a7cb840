"""Findings of a stranger's read, round 2: the breakdown chart keeps vector layers' time and DRAM bytes
(docs/report.md), and the quickstart's cliff at 7 cores is what the model says and what README.md and the
study file explain."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dse
from dse import config
from dse.plots import layer_breakdown

ROOT = Path(__file__).resolve().parents[1]
HYBRID = str(ROOT / "examples" / "tiny_hybrid.onnx")  # conv, attention, softmax, LayerNorm, GELU, ...
VECTOR_UNIT = "vector unit: "  # the label of a vector layer's part of the bars (docs/report.md, "Breakdown")


# ---- 1. vector layers in the breakdown's "time by state" and "DRAM traffic by data kind" ----
def test_multicore_sigmoid_keeps_its_time_as_the_vector_unit_part():
    r = dse.evaluate("multicore", HYBRID)
    i, layer = next((i, l) for i, l in enumerate(r["layers"]) if l["name"] == "node_Sigmoid_14")
    assert layer["cycles"] == pytest.approx(198.574, abs=1e-3) and sum(layer["states"].values()) == 0.0
    by_state = {k: v[i] for k, v in layer_breakdown(r)["time_by_state"].items()}
    assert by_state[VECTOR_UNIT + "NFU lanes"] == layer["time_s"]  # drawn, not 0 as before
    assert sum(by_state.values()) == pytest.approx(layer["time_s"], rel=1e-12)


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore"])
def test_every_layer_bar_adds_up_to_its_time_dram_and_energy(arch):
    r = dse.evaluate(arch, HYBRID)
    layers = [l for l in r["layers"] if not l.get("fused_into")]
    b = layer_breakdown(r)
    for series, key in (("time_by_state", "time_s"), ("dram_by_kind", "dram_bytes"),
                        ("energy_by_component", "energy_j")):
        whole = np.array([l.get(key) or 0.0 for l in layers])
        np.testing.assert_allclose(sum(b[series].values()), whole, rtol=1e-9, err_msg=f"{arch} {series}")
    # the vector layers' part is named by the unit that ran them, and holds exactly their time
    unit = next(l["vector_unit"] for l in layers if l["kind"] == "vector")
    part = b["time_by_state"][VECTOR_UNIT + unit]
    vec = np.array([l["kind"] == "vector" for l in layers])
    np.testing.assert_array_equal(part[vec], [l["time_s"] for l in layers if l["kind"] == "vector"])
    assert "compulsory" not in b["dram_by_kind"]  # EMAX's lower bound is not a kind of traffic


def test_the_vector_part_is_drawn_grey_and_hatched(monkeypatch):
    from dse import plots

    drawn = {}
    monkeypatch.setattr(plots, "_save", lambda fig, path, dpi=110: drawn.setdefault("fig", fig))
    plots.breakdown_plot(Path("unused.png"), dse.evaluate("multicore", HYBRID))
    ax = drawn["fig"].axes[0]
    bars = {c.get_label(): c for c in ax.containers}
    vec = bars[VECTOR_UNIT + "NFU lanes"]
    assert vec.patches[0].get_hatch() == "xx" and "COMPUTE" in bars and bars["COMPUTE"].patches[0].get_hatch() is None
    assert sum(p.get_height() for p in vec.patches) > 0
    plots.plt.close(drawn["fig"])


# ---- 2. the quickstart's cliff: FC2's weights fit the 512 KB Weight Buffers from 7 cores ----
def test_quickstart_cliff_at_seven_cores_is_explained():
    study = config.load(ROOT / "studies" / "quickstart.yaml")
    assert study.fixed["weight_buffer_kb"] == 512
    weights = 1280 * 1280 * 2  # 16-bit
    assert 6 * 512 * 1024 < weights <= 7 * 512 * 1024
    for placement in ("B", "T1", "TR1", "T2", "TR2"):
        for cores in (1, 6, 7, 12):
            t = dse.evaluate("multicore", "fc2", **{**study.fixed, "cores": cores, "placement": placement,
                                                     "ni": 8, "no": 8, "clock_mhz": 600})["total"]
            if cores < 7 or placement == "B":  # weights streamed from DRAM every inference: 3.28 MB at 25.6 GB/s
                assert t["dram_bytes"] == weights and t["time_s"] == pytest.approx(weights / 25.6e9, rel=0.015)
            else:
                assert t["dram_bytes"] == 0 and t["time_s"] < 15e-6
    head = (ROOT / "studies" / "quickstart.yaml").read_text().split("\nname:")[0]
    readme = (ROOT / "README.md").read_text()
    for text in (head, readme):
        assert "cliff at 7 cores" in text and "128" in text
    assert readme.index("cliff at 7 cores") < readme.index("## A five-minute tour")  # next to `make demo`

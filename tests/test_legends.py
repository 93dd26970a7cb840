"""Chart keys cover no data: every legend of the report's and compare page's charts lies wholly on the figure
and outside every axes' data area (and off the other panels' labels), for 1 to 13 series and long labels
such as "vector unit: NFU lanes" (dse.plots.legend_outside: right of the axes; tight_layout makes room)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dse
from dse import compare, plots
from dse.plots import Bound
from dse.results import Table

ROOT = Path(__file__).resolve().parents[1]
HYBRID = str(ROOT / "examples" / "tiny_hybrid.onnx")


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plot functions save (kept open: ``plt.close`` only records them), closed afterwards."""
    close = plots.plt.close
    kept: list = []
    monkeypatch.setattr(plots.plt, "close", lambda fig=None: kept.append(fig))
    yield kept
    for f in kept:
        close(f)


def assert_keys_clear(fig) -> int:
    """Every legend of ``fig`` on the page and clear of every axes' data area and of the other axes'
    labels and titles; returns how many legends there are."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    owned = [(a, a.get_legend()) for a in fig.axes if a.get_legend() is not None]
    keys = owned + [(None, leg) for leg in fig.legends]
    page = fig.bbox
    for owner, leg in keys:
        lb = leg.get_window_extent(r)
        assert page.x0 - 0.5 <= lb.x0 and lb.x1 <= page.x1 + 0.5, (lb, page)  # the whole key is on the page
        assert page.y0 - 0.5 <= lb.y0 and lb.y1 <= page.y1 + 0.5, (lb, page)
        for a in fig.axes:
            assert not lb.overlaps(a.bbox), (a.get_title(), [t.get_text() for t in leg.get_texts()])
            if a is not owner:  # nor another panel's tick labels, axis labels or title
                other = a.get_legend()
                if other is not None:
                    other.set_in_layout(False)
                tight = a.get_tightbbox(r)
                if other is not None:
                    other.set_in_layout(True)
                assert not lb.overlaps(tight), (a.get_title(), [t.get_text() for t in leg.get_texts()])
    return len(keys)


def _result(n_states: int, n_layers: int = 16) -> dict:
    """A contract result whose bars all reach the top (a legend inside the axes must cover some), with a
    vector layer (its part: "vector unit: NFU lanes") and long state names."""
    states = [f"STATE_{i}_WAITING_ON_SOMETHING" for i in range(n_states)]
    layers = []
    for i in range(n_layers):
        vec = i % 7 == 3
        layers.append({
            "name": f"node_scaled_dot_product_attention_{i}", "kind": "vector" if vec else "conv",
            "vector_unit": "NFU lanes" if vec else None, "time_s": 1e-3,
            "states": {s: 0.0 if vec else 1.0 for s in states},
            "dram_bytes": 4e6, "dram_read_bytes": 3e6, "dram_write_bytes": 1e6,
            **({} if vec else {"dram_weight_read_bytes": 3e6, "dram_output_write_bytes": 1e6}),
            "energy_j": 2e-3, "compute_energy_j": 1e-3, "dram_energy_j": 1e-3, "utilization": 0.99,
        })
    return {"arch": "multicore", "workload": "synthetic", "layers": layers,
            "total": {"time_s": n_layers * 1e-3, "utilization": 0.99}}


@pytest.mark.parametrize("n_states", [1, 12])
def test_breakdown_keys_cover_no_bar(drawn, tmp_path, n_states):
    plots.breakdown_plot(tmp_path / "b.png", _result(n_states))
    (fig,) = drawn
    assert assert_keys_clear(fig) == 3  # time, DRAM and energy panels
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "vector unit: NFU lanes" in labels and len(labels) == n_states + 1


def test_breakdown_of_a_model_result(drawn, tmp_path):
    plots.breakdown_plot(tmp_path / "b.png", dse.evaluate("multicore", HYBRID))
    (fig,) = drawn
    assert assert_keys_clear(fig) >= 2


def _table(m: int, n: int = 300) -> Table:
    rng = np.random.default_rng(0)
    objs = ["total.time_s", "total.area_mm2", "total.energy_j"][:m]
    rows = [{"total.time_s": 10 ** rng.uniform(-6, -3), "total.area_mm2": rng.uniform(1, 60),
             "total.energy_j": rng.uniform(1e-6, 1e-4), "feasible": bool(rng.random() < 0.8)} for _ in range(n)]
    return Table(rows, objs, ["minimize"] * m)


@pytest.mark.parametrize("m", [1, 2, 3])
def test_pareto_keys_cover_no_point(drawn, tmp_path, m):
    t = _table(m)
    plots.pareto_plot(tmp_path / "p.png", t, t.pareto_mask(), title="t",
                      bounds=[Bound("total.area_mm2", "<=", 40.0), Bound("total.time_s", "<=", 5e-4)])
    (fig,) = drawn
    assert assert_keys_clear(fig) == 1


def test_convergence_and_importance_keys_cover_no_data(drawn, tmp_path):
    t = _table(2)
    plots.convergence_plot(tmp_path / "c.png", t.values(), t.feasible(), t.objectives, t.directions)
    plots.importance_plot(tmp_path / "i.png", {o: {"cores": 0.5, "ni": 0.3, "input_buffer_entries": 0.2}
                                               for o in ("total.time_s", "total.area_mm2", "total.energy_j")})
    assert [assert_keys_clear(f) for f in drawn] == [1, 1]


def test_compare_time_vs_area_key_covers_no_point(drawn, tmp_path):
    entries = []
    for k, arch in enumerate(["emaxvr", "rena", "multicore", "imax", "atomswitch", "emaxv"]):
        t = _table(2, 80)
        p = {"time_s": 2e-4 * (k + 1), "area_mm2": 10.0 + k, "feasible": k % 2 == 0, "reason": "",
             "energy_j": 1e-3, "compute_energy_j": 1e-4 * k, "sram_energy_j": 2e-4, "dram_energy_j": 3e-4,
             "static_power_w": 0.1}
        entries.append(compare.Entry(arch, arch, published=p, best=p, table=t))
    compare._figures(entries, 30.0, tmp_path)
    bars, pareto, shares = drawn
    assert assert_keys_clear(pareto) == 1
    assert assert_keys_clear(shares) == 1  # (where the energy goes: the key right of the 100 % bars)


def test_the_key_lists_only_what_the_bars_show():
    """A state that is zero on every layer (multicore's DRAM_WAIT on an on-chip design) is not in the key; the
    others keep their colours."""
    fig, ax = plots.plt.subplots()
    try:
        series = {"COMPUTE": np.array([3.0, 1.0]), "DRAM_WAIT": np.zeros(2), "MERGE": np.array([0.0, 2.0])}
        plots._stacked(ax, ["a", "b"], series, "time_s", "time by state")
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["MERGE", "COMPUTE"]  # top of the stack first
        colours = [p.patches[0].get_facecolor() for p in ax.containers]
        assert len(set(colours)) == 3  # (the zero series drawn in its own colour: the palette's order is kept)
    finally:
        plots.plt.close(fig)

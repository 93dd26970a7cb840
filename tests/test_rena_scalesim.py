"""ReNA convolution cycles against the stored SCALE-Sim runs, and the ReNA study file."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from archmodels import get_model
from dse import config
from dse.objective import evaluate_rows
from workloads import load_workload

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "benchmarks" / "data" / "scalesim"  # copy of ../shared/reference/scalesim


def test_conv_cycles_agree_with_scalesim_output_stationary():
    with open(REF / "vgg16_os_per_layer.csv") as f:
        runs = [r for r in csv.DictReader(f) if r["layer"].startswith("conv")]
    convs = [l for l in load_workload("vgg16-conv").layers if l.kind == "conv"]
    out = get_model("rena").evaluate("vgg16-conv", target="fpga")
    ours = {l["name"]: l["compute_cycles"] for l in out["layers"]}
    ratios = []
    for layer, run in zip(convs, runs, strict=True):
        window = layer.ic_per_group * 9
        tiles = math.ceil(layer.out_h * layer.out_w / 64) * math.ceil(layer.out_ch / 64)
        assert int(run["total_cycles"]) == tiles * (window + 126) - 1  # the README's closed form
        ratios.append(ours[layer.name] / int(run["total_cycles"]))
    # deep layers: ceil(T/64) passes of 64 + 8 cycles vs T + 126 per fold -> within 10 %
    assert all(0.9 <= r <= 1.1 for r in ratios[1:]), ratios
    # C1 (T = 27): one 64-step pass per fold vs 27 + 126: ReNA about half
    assert 0.4 < ratios[0] < 0.55
    total_ours = sum(ours[l.name] for l in convs)
    total_ss = sum(int(r["total_cycles"]) for r in runs)
    assert total_ours == pytest.approx(total_ss, rel=0.05)
    # DRAM bursts make the FPGA port about 3x slower than SCALE-Sim's stall-free count
    with_dram = sum(l["cycles"] for l in out["layers"] if l["kind"] == "conv")
    assert 2.7 < with_dram / total_ss < 3.3


def test_study_file_loads_and_evaluates():
    st = config.load(ROOT / "studies" / "rena_fpga_dse.yaml")
    assert st.arch == "rena" and [o.metric for o in st.objectives] == ["total.fps", "total.dsp", "total.logic"]
    rows = [dict(pb_rows=64, pb_cols=64, mults_per_pb=1, clock_mhz=144.0, dram_channels=3),
            dict(pb_rows=128, pb_cols=128, mults_per_pb=2, clock_mhz=200.0, dram_channels=4)]
    ev = evaluate_rows(st, rows)
    assert ev.feasible.tolist() == [True, False]  # 16,384 DSP blocks > 5,760
    assert ev.values[0].tolist() == pytest.approx([7.2749, 4096, 303_615], rel=1e-4)
    assert np.all(np.isfinite(ev.values))

"""The default sampler follows the measured search quality (dse/samplers.py)."""

from __future__ import annotations

import pytest

from dse import config, samplers as defaults

from .conftest import write

BODY = """
name: d
arch: {arch}
workload: {workload}
space:
  {space}
objectives: [total.time_s, total.area_mm2]
n_trials: {n}
batch_size: {batch}
"""


def _load(tmp_path, arch="emaxvr", workload="alexnet-conv", space="rows: {low: 16, high: 128, step: 16}\n  spm_kb: [0, 64, 128, 256, 512]", n=2, batch=1):
    return config.load(write(tmp_path / "d.yaml", BODY.format(arch=arch, workload=workload, space=space, n=n, batch=batch)))


@pytest.fixture
def torch_present(monkeypatch):
    monkeypatch.setattr(defaults, "find_spec", lambda name: object())


@pytest.fixture
def torch_absent(monkeypatch):
    monkeypatch.setattr(defaults, "find_spec", lambda name: None)


def test_small_budget_on_small_grid_uses_measured_best(tmp_path, torch_present):
    st = _load(tmp_path)  # 40-point grid, 2 trials = 5 %
    assert (st.sampler, st.sampler_explicit) == ("gp", False)
    assert "measured best" in st.sampler_why


def test_multicore_measured_best_is_tpe(tmp_path, torch_present):
    st = _load(tmp_path, arch="multicore", workload="fc1", space="cores: {low: 1, high: 40}\n  ni: [8, 16]")
    assert st.sampler == "tpe"


def test_without_torch_falls_back_to_tpe(tmp_path, torch_absent):
    st = _load(tmp_path)
    assert st.sampler == "tpe" and "PyTorch is not installed" in st.sampler_why


def test_batches_fall_back_to_tpe(tmp_path, torch_present):
    assert _load(tmp_path, batch=2).sampler == "tpe"


@pytest.mark.parametrize("n,space", [
    (3, "rows: {low: 16, high: 128, step: 16}\n  spm_kb: [0, 64, 128, 256, 512]"),   # 7.5 % of the grid
    (2, "rows: {low: 16, high: 128, step: 16}\n  clock_mhz: {low: 100, high: 500}"),  # continuous: no grid
])
def test_outside_the_measured_regime_keeps_tpe(tmp_path, torch_present, n, space):
    assert _load(tmp_path, n=n, space=space).sampler == "tpe"


def test_explicit_sampler_wins(tmp_path, torch_present):
    path = write(tmp_path / "e.yaml", BODY.format(arch="emaxvr", workload="alexnet-conv", space="rows: [16, 32]",
                                                  n=1, batch=1) + "sampler: nsga2\n")
    st = config.load(path)
    assert (st.sampler, st.sampler_explicit) == ("nsga2", True)

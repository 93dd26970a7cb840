"""Bad input: each hole of issue 14 item 7, and a fuzz test over malformed study files.

Every bad study file must end in one line ``dse: error: FILE: ...``, exit
code 2, no traceback, and nothing written.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from dse.cli import main

from .conftest import write

GOOD = {
    "name": "fz",
    "arch": "multicore",
    "workload": "fc1",
    "space": {"cores": {"low": 1, "high": 32}, "placement": ["T1", "TR2"], "clock_mhz": {"low": 300, "high": 900, "step": 100}},
    "objectives": [{"total.time_s": "minimize"}, {"total.area_mm2": "minimize"}],
    "constraints": ["total.area_mm2 <= 40"],
    "sampler": {"name": "tpe", "seed": 1},
    "n_trials": 5,
}


def run_bad(capsys, folder: Path, text: str, *extra: str) -> str:
    """Run the study text; assert the one-line error contract; return the line."""
    path = write(folder / "bad.yaml", text)
    code = main(["run", str(path), "--no-progress", *extra])
    out, err = capsys.readouterr()
    assert code == 2, (text, out, err)
    assert out == "", out  # no header line before the error
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dse: error: ") and "Traceback" not in err, err
    assert not (folder / "results").exists(), "nothing may be written"
    return lines[0]


def body(**changes) -> dict:
    out = yaml.safe_load(yaml.safe_dump(GOOD))
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def text_of(data: dict, folder: Path) -> str:
    return yaml.safe_dump({**data, "results_dir": str(folder / "results")}, sort_keys=False)


@pytest.mark.parametrize("changes,expected", [
    ({"seed": -1, "sampler": "tpe"}, ["seed", "greater than or equal to 0"]),
    ({"sampler": {"name": "tpe", "seed": -5}}, ["sampler", "seed"]),
    ({"space": {"cores": {"low": 1, "high": float("nan")}}}, ["space.cores", "high", "finite"]),
    ({"space": {"clock_mhz": float("nan")}}, ["space.clock_mhz", "nan", "allowed: 50..3000"]),
    ({"space": {"clock_mhz": {"choices": [300.0, float("inf")]}}}, ["space.clock_mhz", "inf"]),
    ({"n_trials": 10**23}, ["n_trials", "less than or equal"]),
    ({"n_trials": 1e23}, ["n_trials"]),
    ({"objectives": ["total.time_s", {"total.time_s": "maximize"}]}, ["objectives.1", "repeats objectives.0"]),
    ({"constraints": ["total.area_mm2 <= 40", "total.area_mm2 <= 40"]}, ["constraints.1", "repeats"]),
    ({"constraints": [{"metric": "total.area_mm2", "op": "<=", "bound": float("nan")}]}, ["constraints.0", "finite"]),
    ({"constraints": ["total.area_mm2 <= 1e999"]}, ["constraints.0", "finite"]),
    ({"timeout": float("inf")}, ["timeout", "finite"]),
    ({"storage": "foo://bar"}, ["storage", "not understood", "sqlite:///PATH"]),
    ({"sampler": {"name": "tpe", "options": {"bogus": 1}}}, ["sampler.options", "bogus"]),
    ({"arch": "imax", "workload": "spmm:n=100000000", "space": {}, "constraints": [],
      "objectives": ["total.time_s"]}, ["workload", "nonzeros", "at most"]),
    ({"arch": "imax", "workload": "spmm:n=64,sparsity=0.5,seed=-3", "space": {}, "constraints": [],
      "objectives": ["total.time_s"]}, ["seed=-3", ">= 0"]),
])
def test_input_holes_are_one_line_errors(tmp_path, capsys, changes, expected):
    line = run_bad(capsys, tmp_path, text_of(body(**changes), tmp_path))
    assert str(tmp_path / "bad.yaml") in line
    for part in expected:
        assert part in line, line


def test_bad_database_storage_prints_no_header(tmp_path, capsys):
    line = run_bad(capsys, tmp_path, text_of(body(storage="postgresql://nobody@127.0.0.1:1/x"), tmp_path))
    assert "cannot open" in line and "bad.yaml" in line


def test_gp_without_torch_prints_no_header(tmp_path, capsys):
    pytest.importorskip("optuna")
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("PyTorch is installed here")
    line = run_bad(capsys, tmp_path, text_of(body(sampler="gp"), tmp_path))
    assert "needs PyTorch" in line


@pytest.mark.parametrize("flag", [["--n-jobs", "0"], ["--n-trials", "0"], ["--n-jobs", "-2"]])
def test_bad_command_line_overrides(tmp_path, capsys, flag):
    run_bad(capsys, tmp_path, text_of(body(), tmp_path), *flag)


def test_unknown_key_in_a_network_layer(tmp_path, capsys):
    net = write(tmp_path / "net.yaml", "input: [3, 16, 16]\nlayers:\n"
                "  - {name: c1, type: conv, out_ch: 8, kernel: 3, strides: 2}\n")
    line = run_bad(capsys, tmp_path, text_of(body(workload=str(net)), tmp_path))
    assert "layers.0" in line and "strides" in line and "unknown key" in line


def test_evaluate_check_exits_1_on_an_infeasible_design(run_cli):
    code, out, err = run_cli("evaluate", "atomswitch", "lenet", "--check")
    assert code == 1 and "INFEASIBLE" in out and "infeasible" in err
    assert run_cli("evaluate", "atomswitch", "lenet", "--set", "chip_area_mm2=150", "--check")[0] == 0
    assert run_cli("evaluate", "atomswitch", "lenet")[0] == 0  # without --check: the exit code is unchanged


# -- fuzz: malformed study files ------------------------------------------------------------------

junk = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
BAD_VALUES = {  # values that are wrong for the key whatever else the file says
    "name": st.one_of(st.text(min_size=1, max_size=8).filter(lambda s: any(not (c.isascii() and (c.isalnum() or c in "_.-")) for c in s)),
                      st.integers(), st.lists(st.integers(), max_size=2)),
    "arch": st.text(max_size=10).filter(lambda s: s not in ("multicore", "emaxv", "emaxvr", "imax", "rena", "atomswitch")),
    "n_trials": st.one_of(st.integers(max_value=0), st.integers(min_value=10**8 + 1),
                          st.floats().filter(lambda x: not math.isfinite(x) or x != int(x)), st.text(max_size=4)),
    "seed": st.one_of(st.integers(max_value=-1), st.integers(min_value=2**32), st.floats(allow_nan=True).filter(lambda x: not math.isfinite(x) or x != int(x))),
    "batch_size": st.one_of(st.integers(max_value=0), st.integers(min_value=4097)),
    "n_jobs": st.integers(max_value=0),
    "timeout": st.one_of(st.floats(max_value=0), st.just(float("nan")), st.just(float("inf"))),
    "objectives": st.one_of(st.just([]), st.lists(st.text(max_size=8).map(lambda s: "total.x" + s), min_size=1, max_size=2)),
    "combine": st.text(max_size=6).filter(lambda s: s not in ("sum", "worst")),
    "storage": st.text(min_size=1, max_size=12).filter(lambda s: not s.startswith(("journal:", "sqlite:///", "postgresql", "mysql")) and not s.endswith((".journal", ".log"))),
    "space.cores": st.one_of(
        st.builds(lambda a, b: {"low": a, "high": b}, st.integers(2, 1024), st.integers(1, 1024)).filter(lambda d: d["low"] > d["high"]),
        st.builds(lambda a: {"low": 1, "high": a}, st.one_of(st.integers(min_value=1025), st.just(float("nan")), st.floats(1.01, 1023.9).filter(lambda x: x != int(x)))),
        st.builds(lambda k: {"low": 1, "high": 8, k: 1}, st.text(min_size=1, max_size=6).filter(lambda k: k not in ("low", "high", "step", "log", "points"))),
        st.just({"choices": []}), st.just(float("nan")), st.integers(max_value=0), st.integers(min_value=1025),
    ),
    "space.clock_mhz": st.one_of(st.just(float("nan")), st.just(float("-inf")), st.floats(max_value=49.9), st.text(max_size=5)),
    "space.placement": st.lists(st.text(max_size=4).filter(lambda s: s not in ("B", "T1", "TR1", "T2", "TR2")), min_size=1, max_size=3),
}
UNKNOWN_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10).filter(
    lambda k: k not in {"name", "arch", "workload", "workloads", "combine", "space", "objectives", "constraints", "sampler",
                        "seed", "n_trials", "timeout", "n_jobs", "batch_size", "storage", "heartbeat_interval",
                        "grace_period", "results_dir"})


@st.composite
def malformed(draw):
    data = body()
    kind = draw(st.sampled_from(["bad value", "unknown key", "missing key"]))
    if kind == "bad value":
        key = draw(st.sampled_from(sorted(BAD_VALUES)))
        value = draw(BAD_VALUES[key])
        if key.startswith("space."):
            data["space"][key[6:]] = value
        else:
            data[key] = value
    elif kind == "unknown key":
        data[draw(UNKNOWN_KEYS)] = draw(junk)
    else:
        del data[draw(st.sampled_from(["name", "arch", "workload", "objectives", "n_trials"]))]
    if draw(st.booleans()):  # and maybe a second, independent defect
        data[draw(UNKNOWN_KEYS)] = draw(junk)
    return data


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=malformed())
def test_fuzz_malformed_study_files(capsys, data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            text = text_of(data, folder)
        except yaml.YAMLError:
            return
        run_bad(capsys, folder, text)

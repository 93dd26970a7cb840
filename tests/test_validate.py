"""`dse validate`: model vs published figures, exit code 1 outside tolerance."""

from __future__ import annotations

from dse import validate


def test_multicore_validates(run_cli):
    code, out, _ = run_cli("validate", "multicore")
    assert code == 0
    assert "11/11 cases within tolerance" in out
    assert "T1 == TR1 < TR2 < T2 < B" in out


def test_out_of_tolerance_exits_1(run_cli, monkeypatch):
    real = validate.calibration()
    bad = {"multicore": dict(real["multicore"])}
    bad["multicore"]["cases"] = [{"placement": "B", "metric": "shm_reads_per_core", "value": 1000, "rtol": 0.0}]
    monkeypatch.setattr(validate, "calibration", lambda: bad)
    code, out, _ = run_cli("validate", "multicore")
    assert code == 1 and "FAIL" in out and "+5.6%" in out


def test_calibration_copy_matches_shared_reference():
    """The package copy must not drift from the shared calibration file (when present)."""
    import pathlib

    from workloads import yamlio

    import pytest

    shared = pathlib.Path(__file__).resolve().parents[2] / "shared" / "reference" / "calibration.yaml"
    if not shared.exists():
        pytest.skip("the shared calibration file is not next to this checkout")
    assert yamlio.load(shared.read_text()) == validate.calibration()


def test_unknown_arch(run_cli):
    code, _, err = run_cli("validate", "tpu")
    assert code == 2 and "unknown architecture 'tpu'" in err

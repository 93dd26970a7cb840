"""Every fitted constant is the result of its registered fit (archmodels/fitted.py), by the one procedure."""

from __future__ import annotations

import pytest

from archmodels import calibration, fitted


@pytest.mark.parametrize("c", fitted.REGISTRY, ids=lambda c: c.name)
def test_stored_value_is_the_refit(c):
    refit = c.fit()
    assert refit == pytest.approx(c.value, rel=1e-9, abs=1e-12), f"{c.name}: stored {c.value}, fit gives {refit}"
    errs = c.errors()
    assert errs and all(e >= 0 for e in errs.values())


def test_every_fitted_calibration_case_names_a_registered_constant():
    cal = calibration.load()
    notes = {c.get("basis_note") for body in cal.values() for c in body.get("cases", []) if c.get("basis") == "fitted"}
    assert notes <= set(fitted.REGISTRY_BY_NAME)
    for c in fitted.REGISTRY:
        if c.kind == "fitted" and c.errors is not None:
            assert c.targets and c.source and c.procedure


def test_grid_fit_minimises_the_error_and_breaks_ties_low(monkeypatch):
    """The procedure itself: least mean error, smallest of equal ones (not the largest value that passes)."""
    import archmodels.tech as tech

    monkeypatch.setattr(tech, "_PROBE", 0.0, raising=False)
    probe = fitted.Fitted("probe", "archmodels.tech", "_PROBE", "t", "s", "p", lambda: 0.0,
                          lambda: {"a": abs(tech._PROBE - 0.3), "b": max(0.0, 0.2 - tech._PROBE)})
    assert fitted.grid_fit(probe, [0.0, 0.1, 0.2, 0.3, 0.4]) == 0.3
    flat = fitted.Fitted("flat", "archmodels.tech", "_PROBE", "t", "s", "p", lambda: 0.0,
                         lambda: {"a": 0.0 if tech._PROBE >= 0.2 else 1.0})
    assert fitted.grid_fit(flat, [0.4, 0.2, 0.3, 0.1]) == 0.2


def test_sensitivity_moves_the_targets():
    c = fitted.REGISTRY_BY_NAME["LINK_EFFICIENCY"]
    rows = dict((v, fitted.mean_error(e)) for v, e in fitted.sensitivity(c))
    assert rows[c.value] < 0.01 < rows[0.6] < rows[1.0]  # the old "largest that passes" value was +28 %

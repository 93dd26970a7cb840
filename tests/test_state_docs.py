"""Every model says what its layer states mean (``Model.STATE_DOCS``): ``dse models ARCH`` prints it, the report's
breakdown lists the states its figures show, ``check_model`` fails a state emitted without a line.

A stranger's read of the quickstart report (2026-11-27) found MERGE, FILL and NOC_WAIT in the breakdown with no
word on what they are anywhere but the model pages."""

from __future__ import annotations

import html
import re

import pytest

import dse
from archmodels import get_model, names
from archmodels.testing import check_model

BUILT_IN = ("emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore")


def _code_states(name: str) -> tuple[str, ...]:
    """The states the model's code declares (the tuples its layers' ``states`` are built from)."""
    if name.startswith("emax"):
        from archmodels.emax import timing
        return timing.STATES
    if name == "imax":
        from archmodels.imax import model
        return model.STATES
    if name == "rena":
        from archmodels.rena import model
        return model._STATES
    if name == "multicore":
        from archmodels.multicore import model
        return model._STATES
    return ("STREAM", "LOAD", "DRAM_STALL", "FILL")  # atomswitch/layers.py writes them inline


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_model_documents_exactly_its_states(name):
    m = get_model(name)
    assert set(m.STATE_DOCS) == set(_code_states(name))
    assert all(isinstance(d, str) and 10 < len(d) < 120 for d in m.STATE_DOCS.values())


@pytest.mark.parametrize("name, workload", [("emaxvr", "alexnet"), ("imax", "spmm:n=256,sparsity=0.9"),
                                            ("rena", "lenet"), ("atomswitch", "lenet"), ("multicore", "vgg16")])
def test_the_states_a_model_emits_are_documented(name, workload):
    r = dse.evaluate(name, workload)
    emitted = {s for layer in r["layers"] for s in layer["states"]}
    assert emitted and emitted <= set(get_model(name).STATE_DOCS)


def test_check_model_fails_a_state_without_a_line():
    model = get_model("multicore")
    check_model(model, ["fc2"], n_points=2)  # passes as declared
    docs = dict(model.STATE_DOCS)
    del docs["MERGE"]
    model.STATE_DOCS = docs  # (this instance only)
    with pytest.raises(AssertionError, match=r"states \['MERGE'\] have no line in STATE_DOCS"):
        check_model(model, ["fc2"], n_points=2)


def test_models_prints_the_states(run_cli):
    code, out, _ = run_cli("models", "multicore")
    lines = out.splitlines()
    at = lines.index("layer states (cycles; the breakdown's time by state):")
    shown = [x.split()[0] for x in lines[at + 1:]]
    assert code == 0 and shown == list(get_model("multicore").STATE_DOCS)


def test_a_plugin_model_without_state_docs_still_lists_and_checks():
    assert all(get_model(n).STATE_DOCS for n in names() if n in BUILT_IN)
    from archmodels.base import Model
    assert Model.STATE_DOCS == {}  # the default: no check, no section


def test_the_report_explains_the_states_its_breakdowns_show(tmp_path):
    from tests.test_report import run_study

    st = run_study(tmp_path, "states")
    text = (st.out_dir / "report.html").read_text()
    part = text[text.index('id="breakdown"'):text.index('id="convergence"')]
    assert "What the states mean" in part
    rows = dict(re.findall(r"<tr><th>(\w+)</th><td>([^<]*)</td></tr>", part))
    docs = get_model("multicore").STATE_DOCS
    assert rows and all(html.unescape(v) == docs[k] for k, v in rows.items())
    assert "COMPUTE" in rows  # every chosen design computes
    assert list(rows) == [s for s in docs if s in rows]  # the model's order

"""Optuna interop (issue 14 item 8): a study's storage read as optuna-dashboard reads it."""

from __future__ import annotations

import io
import json
import sys

import optuna
import pytest
from optuna.trial import TrialState

from .test_study import make_study


@pytest.fixture
def study_storage(tmp_path, run_cli):
    path = make_study(tmp_path, n=20, sampler="random",
                      extra="")  # objectives time, area; constraint area <= 40
    assert run_cli("run", path, "--no-progress")[0] == 0
    journal = tmp_path / "results" / "s" / "study.journal"
    return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(journal)))


def test_optuna_api_sees_names_constraints_and_metric_attrs(study_storage):
    study = optuna.load_study(study_name="s", storage=study_storage)
    assert study.metric_names == ["total.time_s", "total.area_mm2"]
    names = study.user_attrs["constraint_names"]
    assert names == ["total.area_mm2 <= 40", "feasible"]
    trials = [t for t in study.get_trials(states=(TrialState.COMPLETE,)) if "repeat_of" not in t.user_attrs]
    assert len(trials) == 20
    for t in trials:
        total = t.user_attrs["dse"]["total"]
        for key in ("time_s", "area_mm2", "energy_j", "dram_bytes"):
            assert t.user_attrs[f"total.{key}"] == total[key]  # each its own attribute
        cons = {names[int(k)]: v for k, v in t.constraints.items()}
        assert cons["total.area_mm2 <= 40"] == pytest.approx(total["area_mm2"] - 40)
        assert cons["feasible"] == (0.0 if t.user_attrs["dse"]["feasible"] else 1.0)
        assert t.values == [total["time_s"], total["area_mm2"]]


def _get(app, path: str) -> dict:
    env = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": "after=0", "wsgi.input": io.BytesIO(),
           "wsgi.errors": sys.stderr, "SERVER_NAME": "localhost", "SERVER_PORT": "0", "wsgi.url_scheme": "http"}
    status = []
    body = b"".join(app(env, lambda s, h, exc_info=None: status.append(s)))
    assert status[0].startswith("200"), (status, body[:200])
    return json.loads(body)


def test_optuna_dashboard_shows_names_constraints_and_metrics(study_storage):
    dashboard = pytest.importorskip("optuna_dashboard")  # the dev extra installs it
    app = dashboard.wsgi(study_storage)
    (summary,) = _get(app, "/api/studies")["study_summaries"]
    detail = _get(app, f"/api/studies/{summary['study_id']}")
    assert detail["objective_names"] == ["total.time_s", "total.area_mm2"]
    attrs = {a["key"]: a["sortable"] for a in detail["union_user_attrs"]}
    for key in ("total.time_s", "total.area_mm2", "total.energy_j", "total.dram_bytes"):
        assert attrs.get(key) is True, attrs  # numeric: the dashboard can sort and plot it
    over = [t for t in detail["trials"] if t["state"] == "Complete"
            and float(dict((a["key"], a["value"]) for a in t["user_attrs"]).get("total.area_mm2", 0)) > 40]
    assert over, "the space must contain designs above the area bound"
    for t in detail["trials"]:
        assert len(t["constraints"]) == 2  # shown for every trial
    assert all(t["constraints"][0] > 0 for t in over)

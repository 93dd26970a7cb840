"""dse.replay: a journal opened from its JSON snapshot holds exactly what a full replay holds, reads what was
appended after the snapshot, and falls back to the full replay whenever the snapshot does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.storages.journal import JournalFileBackend, JournalStorage

from dse import replay, storage as storage_mod


def _fill(storage: JournalStorage, name: str, n: int) -> None:
    study = optuna.create_study(study_name=name, storage=storage, directions=["minimize", "maximize"],
                                sampler=optuna.samplers.RandomSampler(seed=len(name)))
    study.set_user_attr("fixed", {"a": [1, 2], "b": None})
    study._storage.set_study_system_attr(study._study_id, "k", {"x": 1.5})
    for i in range(n):
        t = study.ask()
        t.suggest_int("cores", 1, 64, log=True)
        t.suggest_float("clock", 100.0, 1000.0, step=50.0)
        t.suggest_float("kb", 0.5, 1024.0, log=True)
        t.suggest_categorical("mode", [None, True, "pairs", 2.5])
        t.set_user_attr("dse", {"total": {"time_s": 1e-3 * i, "bad": float("inf")}, "reason": None})
        t.storage.set_trial_system_attr(t._trial_id, "constraints", [0.0, float(i % 3) - 1])
        if i % 7 == 3:
            t.storage.set_trial_intermediate_value(t._trial_id, 1, 0.5)
            study.tell(t, state=optuna.trial.TrialState.FAIL)
        elif i % 11 != 5:  # (a few stay RUNNING)
            study.tell(t, [float(i), -float(i)])
    study.enqueue_trial({"cores": 4, "mode": "pairs"}, user_attrs={"retry_of": 1})  # WAITING


def _state(storage: JournalStorage) -> tuple:
    r = storage._replay_result
    return (r.log_number_read, r._next_study_id, {k: s.__dict__ for k, s in r._studies.items()},
            r._study_id_to_trial_ids, r._trial_id_to_study_id, {k: t.__dict__ for k, t in r._trials.items()})


def _head(snap: Path) -> dict:
    return json.loads(snap.read_text().split("\n", 1)[0])


def _open(path: Path) -> JournalStorage:
    storage_mod._OPEN_JOURNALS.clear()  # a new process
    return storage_mod._journal(path)


def _replayed(path: Path) -> tuple:
    return _state(JournalStorage(JournalFileBackend(str(path))))


@pytest.fixture
def journal(tmp_path) -> Path:
    path = tmp_path / "study.journal"
    storage = _open(path)
    _fill(storage, "one", 40)
    _fill(storage, "two", 15)
    optuna.delete_study(study_name="two", storage=storage)  # its trials stay in the replay
    _fill(storage, "three", 5)
    return path


def test_restored_equals_replayed_and_reads_what_came_after(journal):
    full = _replayed(journal)
    out = replay.save(_open(journal))
    assert out == replay.path_of(journal) and _head(out)["version"] == replay.VERSION  # JSON
    json.loads(out.read_text().split("\n", 1)[1])
    restored = _open(journal)
    assert restored._backend._log_number_offset.get(full[0]) is not None  # it started from the snapshot
    assert _state(restored) == full
    _fill(_open(journal), "four", 6)  # another process appends after the snapshot
    assert _state(_open(journal)) == _replayed(journal)
    # the restored storage works on: a trial told through it is what a replay sees
    study = optuna.load_study(study_name="one", storage=_open(journal))
    t = study.ask({"cores": IntDistribution(1, 64, log=True), "clock": FloatDistribution(100.0, 1000.0, step=50.0),
                   "kb": FloatDistribution(0.5, 1024.0, log=True),
                   "mode": CategoricalDistribution([None, True, "pairs", 2.5])})
    study.tell(t, [1.0, 2.0])
    assert _state(_open(journal)) == _replayed(journal)


@pytest.mark.parametrize("change", ["replaced", "truncated", "edited", "corrupt", "version"])
def test_a_snapshot_that_does_not_fit_is_not_used(journal, tmp_path, change):
    replay.save(_open(journal))
    snap = replay.path_of(journal)
    if change == "replaced":  # another journal at the same path, longer than the old one
        journal.unlink()
        other = _open(journal)
        for name in ("a", "b", "c", "d"):
            _fill(other, name, 40)
    elif change == "truncated":
        data = journal.read_bytes()
        journal.write_bytes(data[:len(data) // 2].rsplit(b"\n", 1)[0] + b"\n")
    elif change == "edited":  # same length, a record before the snapshot's end changed
        data = bytearray(journal.read_bytes())
        end = _head(snap)["journal"]["end"]
        at = data.rindex(b'"worker_id"', 0, end - 10)
        data[at + 14] = ord("0") if data[at + 14] != ord("0") else ord("1")
        journal.write_bytes(bytes(data))
    elif change == "corrupt":
        snap.write_text(snap.read_text()[:1000])
    else:
        head, body = snap.read_text().split("\n", 1)
        d = json.loads(head)
        d["journal"]["optuna"] = "0.0.1"
        snap.write_text(json.dumps(d) + "\n" + body)
    restored = _open(journal)
    assert restored._backend._log_number_offset.get(restored._replay_result.log_number_read) is not None
    assert len(restored._backend._log_number_offset) > 2  # every record was read: the full replay
    assert _state(restored) == _replayed(journal)


def test_dse_run_saves_it(tmp_path, run_cli):
    from .test_study import make_study

    path = make_study(tmp_path, n=12)
    assert run_cli("run", path, "--no-progress", "--no-report")[0] == 0
    journal = tmp_path / "results" / "s" / "study.journal"
    assert replay.path_of(journal).exists()
    restored = _open(journal)
    assert len(restored._backend._log_number_offset) == 2  # nothing after the snapshot: no record read
    assert _state(restored) == _replayed(journal)


def test_a_recent_snapshot_is_not_written_again(journal):
    snap = replay.save(_open(journal))
    end = _head(snap)["journal"]["end"]
    _fill(_open(journal), "few", 1)  # a little more: the snapshot there is recent enough
    assert journal.stat().st_size - end <= replay.REWRITE_GROWTH * journal.stat().st_size
    replay.save(_open(journal))
    assert _head(snap)["journal"]["end"] == end
    assert _state(_open(journal)) == _replayed(journal)  # restored, then the records after it
    _fill(_open(journal), "many", 30)
    replay.save(_open(journal))
    assert _head(snap)["journal"]["end"] == journal.stat().st_size


def test_reading_with_nothing_new_skips_the_file_and_reads_what_comes_after(journal, monkeypatch):
    """HeldBackend.read_logs answers 'nothing appended' from a stat, and yields exactly Optuna's records otherwise
    (another process's appends, a partly written last line) -- the same as Optuna's own reader."""
    mine, theirs = replay.HeldBackend(str(journal)), JournalFileBackend(str(journal))
    assert list(mine.read_logs(0)) == list(theirs.read_logs(0))
    n = max(mine._log_number_offset)
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    assert list(mine.read_logs(n)) == [] and opened == []  # nothing new: the file is not opened
    monkeypatch.undo()
    other = JournalStorage(JournalFileBackend(str(journal)))  # another process appends
    _fill(other, "four", 3)
    with open(journal, "ab") as fh:
        fh.write(b'{"op_code": 0, "worker_id": "half-writ')  # a record being written
    assert list(mine.read_logs(n)) == list(theirs.read_logs(n)) != []
    assert mine._log_number_offset == theirs._log_number_offset

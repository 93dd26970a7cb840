"""dse.replay.IndexedReplay: ``get_all_trials`` by state gives Optuna's own answer (the same trial objects, in
the same order) after any sequence of trial records, from two storages writing one journal, and after a
snapshot's restore."""

from __future__ import annotations

import itertools

import optuna
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from optuna.storages.journal._storage import JournalOperation as Op, JournalStorageReplayResult
from optuna.trial import TrialState

from dse import replay, storage as storage_mod

from .test_replay import _fill, _open, _replayed, _state

S = list(TrialState)
#: the state filters asked: every single state, every pair, all five, Optuna's usual containers
QUERIES = ([(s,) for s in S] + list(itertools.combinations(S, 2)) + [tuple(S), [TrialState.COMPLETE],
           {TrialState.COMPLETE, TrialState.RUNNING}, frozenset({TrialState.WAITING}), None])


def _same_as_optuna(storage) -> None:
    """Every query of :data:`QUERIES` on every study: Optuna's walk and the index give the very same objects."""
    r = storage._replay_result
    assert isinstance(r, replay.IndexedReplay)
    with storage._thread_lock:
        storage._sync_with_backend()
        for sid in r._studies:
            for q in QUERIES:
                want = JournalStorageReplayResult.get_all_trials(r, sid, q)
                got = r.get_all_trials(sid, q)
                assert len(got) == len(want), (sid, q)
                assert all(map(lambda a, b: a is b, got, want)), (sid, q)


# one step: (which storage, what): ask, tell COMPLETE/FAIL/PRUNED the k-th unfinished trial, enqueue (WAITING),
# set an attribute of a running trial, tell a finished one again (refused), ask after enqueue (WAITING -> RUNNING)
STEP = st.tuples(st.integers(0, 1), st.sampled_from(["ask", "complete", "fail", "prune", "enqueue", "attr",
                                                      "again", "add"]), st.integers(0, 30))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=60), insert_max=st.sampled_from([0, 2, 64]))
def test_the_index_answers_as_optunas_walk(tmp_path_factory, steps, insert_max, monkeypatch):
    monkeypatch.setattr(replay.IndexedReplay, "INSERT_MAX", insert_max)  # both ways of merging unfinished trials
    path = tmp_path_factory.mktemp("j") / "study.journal"
    a = _open(path)
    storage_mod._OPEN_JOURNALS.clear()
    b = storage_mod._journal(path)  # a second process's storage on the same file
    studies = [optuna.create_study(study_name="s", storage=a, directions=["minimize"]),
               optuna.load_study(study_name="s", storage=b)]
    other = optuna.create_study(study_name="other", storage=b)  # a second study in the journal
    other.enqueue_trial({"x": 1})
    for who, what, k in steps:
        study = studies[who]
        # the trials as the other storage sees them: the acting one writes without reading the file first, so
        # its records may follow records of the other it has not read yet
        seen = studies[1 - who].get_trials(deepcopy=False)
        open_ = [t for t in seen if not t.state.is_finished()]
        done = [t for t in seen if t.state.is_finished()]
        if what == "ask":
            study.ask().suggest_int("x", 0, 9)
        elif what == "enqueue":
            study.enqueue_trial({"x": k % 10})
        elif what == "add":  # a trial made finished (Study.add_trial)
            study.add_trial(optuna.trial.create_trial(params={}, distributions={}, value=float(k)))
        elif what == "again":
            if done:
                t = done[k % len(done)]
                with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
                    study._storage.set_trial_state_values(t._trial_id, TrialState.COMPLETE, [0.0])
        elif open_:
            t = open_[k % len(open_)]
            if what == "attr":
                study._storage.set_trial_user_attr(t._trial_id, "k", k)
            else:
                state = {"complete": TrialState.COMPLETE, "fail": TrialState.FAIL, "prune": TrialState.PRUNED}[what]
                study._storage.set_trial_state_values(t._trial_id, state,
                                                      [float(k)] if state == TrialState.COMPLETE else None)
        _same_as_optuna(a)
        _same_as_optuna(b)
    for storage in (a, b):  # each storage's replay (records it wrote taken from its lines) is the file's
        with storage._thread_lock:
            storage._sync_with_backend()
        assert _state(storage) == _replayed(path)


def test_a_storage_applies_its_own_records_without_reading_the_file_back(tmp_path, monkeypatch):
    """What it wrote is applied from its lines; what another storage wrote in between is read from the file."""
    from optuna.storages.journal import JournalFileBackend

    reads = []
    real = JournalFileBackend.read_logs
    monkeypatch.setattr(JournalFileBackend, "read_logs", lambda self, n: reads.append(n) or real(self, n))
    path = tmp_path / "study.journal"
    a = _open(path)
    study = optuna.create_study(study_name="s", storage=a, directions=["minimize"])
    reads.clear()
    for i in range(5):
        t = study.ask()
        t.suggest_float("x", 0, 1)
        study.tell(t, float(i))
    assert reads == []  # every record applied from the lines written
    storage_mod._OPEN_JOURNALS.clear()
    b = storage_mod._journal(path)
    optuna.load_study(study_name="s", storage=b).enqueue_trial({"x": 0.5})  # another process's record
    reads.clear()
    t = study.ask()  # a reads b's record before it writes
    assert reads
    optuna.load_study(study_name="s", storage=b).enqueue_trial({"x": 0.25})
    reads.clear()
    a.set_trial_user_attr(t._trial_id, "k", 1)  # a's record follows b's, which a has not read: the file is read
    assert reads
    # a's record, then b's before a reads again (two processes at once): a applies its lines, then reads b's
    a._backend.append_logs([{"op_code": Op.SET_TRIAL_USER_ATTR, "worker_id": a._replay_result.worker_id,
                             "trial_id": t._trial_id, "user_attr": {"k": 2}}])
    b.set_trial_user_attr(t._trial_id, "j", 3)
    with a._thread_lock:
        a._sync_with_backend()  # (what a write's own read does)
        assert a._replay_result.get_trial(t._trial_id).user_attrs == {"k": 2, "j": 3}
    study.tell(t, 1.0)
    assert _state(a) == _replayed(path)
    assert [t.system_attrs.get("fixed_params") for t in a.get_all_trials(study._study_id)[-2:]] == [
        {"x": 0.5}, {"x": 0.25}]  # b's trials (the first run by a)


def test_a_restored_replay_is_indexed_and_answers_as_optunas_walk(tmp_path):
    path = tmp_path / "study.journal"
    storage = _open(path)
    _fill(storage, "one", 40)  # COMPLETE, FAIL, RUNNING and WAITING trials
    _fill(storage, "two", 15)
    optuna.delete_study(study_name="two", storage=storage)
    _same_as_optuna(storage)
    assert replay.save(storage) is not None
    restored = _open(path)
    assert isinstance(restored._replay_result, replay.IndexedReplay)
    assert restored._replay_result._state_of is None  # filled from the snapshot, not from records
    _same_as_optuna(restored)
    _fill(restored, "three", 12)  # records after the snapshot
    _same_as_optuna(restored)
    with pytest.raises(KeyError):
        restored._replay_result.get_all_trials(1, (TrialState.COMPLETE,))  # the deleted study, as Optuna


def test_a_finished_trial_is_not_replaced_by_the_replay(tmp_path):
    """What the index relies on: Optuna's replay refuses every record for a finished trial."""
    storage = _open(tmp_path / "study.journal")
    study = optuna.create_study(storage=storage)
    t = study.ask()
    study.tell(t, 1.0)
    r = storage._replay_result
    before = r._trials[t._trial_id]
    for log in ({"op_code": Op.SET_TRIAL_USER_ATTR, "trial_id": t._trial_id, "worker_id": "x", "user_attr": {"a": 1}},
                {"op_code": Op.SET_TRIAL_SYSTEM_ATTR, "trial_id": t._trial_id, "worker_id": "x", "system_attr": {"a": 1}},
                {"op_code": Op.SET_TRIAL_PARAM, "trial_id": t._trial_id, "worker_id": "x", "param_name": "p",
                 "param_value_internal": 0.0, "distribution": "{}"},
                {"op_code": Op.SET_TRIAL_STATE_VALUES, "trial_id": t._trial_id, "worker_id": "x", "state": 0, "values": None,
                 "datetime_start": "2026-01-01T00:00:00"}):
        r.apply_logs([log])  # another worker's records: ignored
        assert r._trials[t._trial_id] is before

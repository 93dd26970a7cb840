"""A journal's replay, saved as JSON next to it, so that opening a large study does not replay every record.

Opening an Optuna journal replays every record it holds: ~15 per trial (the trial, each parameter and
attribute, the tell), ~0.7 ms per trial here, 7 s at 10,000 trials, paid by every process that opens the
study (each `dse run`, each of its workers, `dse plot`, `dse report`). Optuna's own snapshot hook pickles
the replay; a pickle in a results folder that others share would run code when loaded. Here the replay
(studies and trials as :class:`~optuna.trial.FrozenTrial` data, how many records it holds and where they
end in the file) is written as JSON (``study.journal.replay.json``) at the end of ``dse run`` and
``dse worker``; an open restores it and replays only the records written after it.

A snapshot is used only for the journal it was taken from: the same file (device, inode), at least as
long, with the same first record (it names the random id of the process that made the journal) and the
same last 4 KB before the snapshot's end (a journal is only appended to), by the same Optuna version;
otherwise (or if it cannot be read) the journal is replayed whole, as without one. Restoring
it fills Optuna's replay structures (private to Optuna 5's journal storage); tests/test_replay.py
compares a restored storage with a replayed one, field by field.
"""

from __future__ import annotations

import hashlib
import json
import os
from bisect import bisect_left
from collections.abc import Container
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import distribution_to_json, json_to_distribution
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.storages.journal._storage import NOT_FOUND_MSG, JournalStorageReplayResult
from optuna.study._frozen import FrozenStudy
from optuna.study._study_direction import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from .results import write_text_atomic

VERSION = 2  # 2: a header line (what the snapshot is of), then the replay
TAIL_BYTES = 4096  # the journal bytes before a snapshot's end that must be unchanged
#: a snapshot is written anew only when the journal grew by more than this share since the one there (writing
#: it costs about what replaying that share does; a run that adds a few trials to a large study skips it)
REWRITE_GROWTH = 0.1


def path_of(journal: str | Path) -> Path:
    return Path(f"{journal}.replay.json")


class HeldBackend(JournalFileBackend):
    """A journal file whose records are not read while ``held``: lets :class:`JournalStorage` be made without its
    replay, so that a snapshot is restored first (:func:`open_journal`)."""

    held = False

    def read_logs(self, log_number_from: int):
        if self.held:
            return iter(())
        # nothing appended since the records read: Optuna's reader would open the file, find no byte past the
        # known offset and yield nothing; a stat answers that without opening it (a journal storage asks
        # before every read and after every write, ~50 times a trial)
        end = self._log_number_offset.get(log_number_from)
        if end is not None and os.stat(self._file_path).st_size == end:
            return iter(())
        return super().read_logs(log_number_from)


class IndexedReplay(JournalStorageReplayResult):
    """Optuna's journal replay, answering ``get_all_trials(study, states)`` without a walk over the study.

    Optuna's replay filters every trial of the study by state at each call, a Python loop (~0.45 ms at 4,400
    trials here); a study's ask calls it three to four times (the WAITING trials, the sampler's COMPLETE ones,
    dse's count), so in a long study it was a fifth of a trial (docs/profile/study_loop.md). Here the trials
    created and those given a state are noted as the records are applied, and the next call files them by
    (study, state): a finished trial (COMPLETE, FAIL, PRUNED) is never changed or replaced by the replay
    (Optuna's ``_trial_exists_and_updatable`` refuses it), so it is kept as its object, in trial order; the
    unfinished ones (RUNNING, WAITING; their objects are replaced as they change) by id. A study's trial ids
    ascend in its trial order (an id is the number of trials replayed before it), so the answer is Optuna's
    list: the same trial objects in the same order (tests/test_replay_index.py)."""

    #: unfinished trials put into a finished state's list one by one up to this many, else all ids sorted
    INSERT_MAX = 64

    def __init__(self, worker_id_prefix: str) -> None:
        super().__init__(worker_id_prefix)
        self._moved: list[int] = []  # trials created or given a state since they were last filed
        self._state_of: dict[int, TrialState] | None = None  # None: nothing filed yet
        self._done: dict[tuple[int, TrialState], tuple[list[int], list[FrozenTrial]]] = {}  # ids, objects
        self._open: dict[tuple[int, TrialState], set[int]] = {}

    def _apply_create_trial(self, log: dict[str, Any]) -> None:
        n = len(self._trials)
        super()._apply_create_trial(log)
        if len(self._trials) > n:
            self._moved.append(n)  # Optuna's id of the trial made: the number of trials before it

    def _apply_set_trial_state_values(self, log: dict[str, Any]) -> None:
        super()._apply_set_trial_state_values(log)
        self._moved.append(log["trial_id"])  # (its state is read when it is filed)

    def _file(self) -> None:
        """File the trials created or given a state since the last call by (study, state)."""
        trials, state_of = self._trials, self._state_of
        if state_of is None:  # first call (a restored replay fills the trials without the records)
            state_of = self._state_of = {}
            moved = sorted(trials)
        else:
            moved = self._moved
        study_of = self._trial_id_to_study_id
        for tid in moved:
            trial = trials.get(tid)
            study = study_of.get(tid)
            if trial is None or study is None:
                continue
            old, new = state_of.get(tid), trial.state
            if old is new:
                continue
            if old is not None:
                if old.is_finished():  # (never: a finished trial keeps its state)
                    ids, objs = self._done[study, old]
                    i = bisect_left(ids, tid)
                    del ids[i], objs[i]
                else:
                    self._open[study, old].discard(tid)
            if new.is_finished():
                ids, objs = self._done.setdefault((study, new), ([], []))
                i = bisect_left(ids, tid)  # the end, as a rule
                ids.insert(i, tid)
                objs.insert(i, trial)
            else:
                self._open.setdefault((study, new), set()).add(tid)
            state_of[tid] = new
        self._moved = []

    def get_all_trials(self, study_id: int, states: Container[TrialState] | None) -> list[FrozenTrial]:
        if study_id not in self._studies:
            raise KeyError(NOT_FOUND_MSG)
        trials = self._trials
        if states is None:
            return list(map(trials.__getitem__, self._study_id_to_trial_ids[study_id]))
        if self._moved or self._state_of is None:
            self._file()
        done, unfinished = [], set()
        for s in TrialState:
            if s in states:
                if s.is_finished():
                    part = self._done.get((study_id, s))
                    if part and part[0]:
                        done.append(part)
                else:
                    unfinished |= self._open.get((study_id, s), set())
        if len(done) <= 1 and len(unfinished) <= self.INSERT_MAX:
            ids, out = done[0] if done else ((), [])
            out = out[:]
            for k, tid in enumerate(sorted(unfinished)):  # each after the finished trials before it
                out.insert(bisect_left(ids, tid) + k, trials[tid])
            return out
        return list(map(trials.__getitem__, sorted(chain(unfinished, *(part[0] for part in done)))))


def open_journal(backend: HeldBackend) -> JournalStorage:
    """``JournalStorage(backend)``, restored from the journal's snapshot when one fits (see module doc), with
    an :class:`IndexedReplay`."""
    backend.held = True
    try:
        storage = JournalStorage(backend)
    finally:
        backend.held = False
    with storage._thread_lock:
        storage._replay_result = IndexedReplay(storage._worker_id_prefix)
        try:
            restore(storage, backend)
        except Exception:  # a snapshot that does not fit or cannot be read: replay the whole journal
            storage._replay_result = IndexedReplay(storage._worker_id_prefix)
            backend._log_number_offset = {0: 0}
        storage._sync_with_backend()
    return storage


def _fingerprint(path: str, end: int) -> dict[str, Any]:
    st = os.stat(path)
    with open(path, "rb") as fh:
        first = fh.readline(4096)
        fh.seek(max(0, end - TAIL_BYTES))
        tail = fh.read(min(end, TAIL_BYTES))
    return {"dev": st.st_dev, "ino": st.st_ino, "first": hashlib.sha256(first).hexdigest(),
            "tail": hashlib.sha256(tail).hexdigest(), "end": end, "optuna": optuna.__version__}


def save(storage: JournalStorage) -> Path | None:
    """Write the snapshot of ``storage``'s replay (after reading what other processes appended); None when the
    storage is not a journal file. Written to a temporary file and renamed: a reader sees an old or a new one."""
    backend = getattr(storage, "_backend", None)
    if not isinstance(backend, JournalFileBackend):
        return None
    with storage._thread_lock:
        storage._sync_with_backend()
        r = storage._replay_result
        n = r.log_number_read
        end = backend._log_number_offset.get(n)
        if end is None:
            return None
        out = path_of(backend._file_path)
        old = _header(out)
        if old is not None and end - old["journal"]["end"] <= REWRITE_GROWTH * end and _fits(old, backend):
            return out  # the one there is recent enough
        dists: dict[Any, int] = {}  # each distinct distribution once (trials hold equal ones)
        trials = [_trial_dict(t, r._trial_id_to_study_id.get(i), dists) for i, t in r._trials.items()]
        head = {"version": VERSION, "journal": _fingerprint(backend._file_path, end), "log_number_read": n}
        body = {"next_study_id": r._next_study_id, "studies": [_study_dict(s) for s in r._studies.values()],
                "study_trials": {str(k): v for k, v in r._study_id_to_trial_ids.items()},
                "distributions": [distribution_to_json(d) for d in dists], "trials": trials}
        text = json.dumps(head, separators=(",", ":")) + "\n" + json.dumps(body, separators=(",", ":"))
    write_text_atomic(out, text)
    return out


def _header(snap: Path) -> dict[str, Any] | None:
    """The first line of snapshot ``snap`` (what it is of), None if there is none of this version."""
    try:
        with open(snap, "rb") as fh:
            head = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    return head if isinstance(head, dict) and head.get("version") == VERSION else None


def _fits(head: dict[str, Any], backend: JournalFileBackend) -> bool:
    """Whether the snapshot with header ``head`` was taken from this journal (see module doc)."""
    j = head["journal"]
    return os.stat(backend._file_path).st_size >= j["end"] and _fingerprint(backend._file_path, j["end"]) == j


def restore(storage: JournalStorage, backend: JournalFileBackend) -> bool:
    """Fill ``storage``'s replay from the journal's snapshot if one fits; True if it did."""
    snap = path_of(backend._file_path)
    head = _header(snap)
    if head is None or not _fits(head, backend):
        return False
    with open(snap, "rb") as fh:
        fh.readline()
        data = json.loads(fh.read())
    j = head["journal"]
    r = IndexedReplay(storage._worker_id_prefix)
    r._next_study_id = data["next_study_id"]
    for s in data["studies"]:
        r._studies[s["study_id"]] = FrozenStudy(
            study_name=s["name"], direction=None, user_attrs=s["user_attrs"], system_attrs=s["system_attrs"],
            study_id=s["study_id"], directions=[StudyDirection(d) for d in s["directions"]])
    r._study_id_to_trial_ids = {int(k): list(v) for k, v in data["study_trials"].items()}
    dists = [json_to_distribution(d) for d in data["distributions"]]
    for t in data["trials"]:
        r._trials[t["id"]] = _trial(t, dists)
        if t["study"] is not None:
            r._trial_id_to_study_id[t["id"]] = t["study"]
    r.log_number_read = head["log_number_read"]
    storage._replay_result = r
    backend._log_number_offset = {0: 0, r.log_number_read: j["end"]}
    return True


def _study_dict(s: FrozenStudy) -> dict[str, Any]:
    return {"study_id": s._study_id, "name": s.study_name, "directions": [d.value for d in s.directions],
            "user_attrs": s.user_attrs, "system_attrs": s.system_attrs}


def _when(d: datetime | None) -> str | None:
    return None if d is None else d.isoformat()


def _trial_dict(t: FrozenTrial, study: int | None, dists: dict[Any, int]) -> dict[str, Any]:
    dist = t.distributions
    return {"id": t._trial_id, "study": study, "number": t.number, "state": t.state.value,
            "values": t.values, "start": _when(t.datetime_start), "complete": _when(t.datetime_complete),
            "dist": {k: dists.setdefault(d, len(dists)) for k, d in dist.items()},
            "params": {k: dist[k].to_internal_repr(v) for k, v in t.params.items()},
            "user_attrs": t.user_attrs, "system_attrs": t.system_attrs,
            "intermediate": {str(k): v for k, v in t.intermediate_values.items()}}


def _trial(d: dict[str, Any], dists: list) -> FrozenTrial:
    dist = {k: dists[i] for k, i in d["dist"].items()}
    return FrozenTrial(
        number=d["number"], state=TrialState(d["state"]), value=None, values=d["values"],
        datetime_start=None if d["start"] is None else datetime.fromisoformat(d["start"]),
        datetime_complete=None if d["complete"] is None else datetime.fromisoformat(d["complete"]),
        params={k: dist[k].to_external_repr(v) for k, v in d["params"].items()}, distributions=dist,
        user_attrs=d["user_attrs"], system_attrs=d["system_attrs"],
        intermediate_values={int(k): v for k, v in d["intermediate"].items()}, trial_id=d["id"])

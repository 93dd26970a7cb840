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
from datetime import datetime
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import distribution_to_json, json_to_distribution
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.storages.journal._storage import JournalStorageReplayResult
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


def open_journal(backend: HeldBackend) -> JournalStorage:
    """``JournalStorage(backend)``, restored from the journal's snapshot when one fits (see module doc)."""
    backend.held = True
    try:
        storage = JournalStorage(backend)
    finally:
        backend.held = False
    with storage._thread_lock:
        try:
            restore(storage, backend)
        except Exception:  # a snapshot that does not fit or cannot be read: replay the whole journal
            storage._replay_result = JournalStorageReplayResult(storage._worker_id_prefix)
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
    r = JournalStorageReplayResult(storage._worker_id_prefix)
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

"""The bulk paths of a sweep's output (chunk JSON, rows, trials.csv written and read back, the report's rows)
give what the value-by-value code they replaced gave: the old code is kept here as the oracle."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dse import config, report, results
from dse.results import Table, read_csv, write_csv
from dse.sweep import Grid, finite_or_none, run_sweep

from .conftest import write
from .test_sweep import SWEEP


# ------------------------------------------------------------------ the replaced code (oracles)

def _old_write_csv(path, rows):
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys and k != "values":
                keys.append(k)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in keys})


def _old_read_csv(path):
    with path.open(newline="") as fh:
        return [{k: results._parse(v) for k, v in r.items()} for r in csv.DictReader(fh)]


def _old_values(rows, objectives):
    out = np.full((len(rows), len(objectives)), np.nan)
    for i, r in enumerate(rows):
        for j, m in enumerate(objectives):
            v = r.get(m)
            out[i, j] = np.nan if v is None else float(v)
    return out


def _typed(rows):
    """Rows with each value's type next to it (1 == 1.0 == True in Python; the files tell them apart)."""
    return [{k: (type(v).__name__, repr(v)) for k, v in r.items()} for r in rows]


# ------------------------------------------------------------------ cells and columns

_TEXT = ["", "True", "False", "1", "-0", "+5", "1_000", "12345678901234567", "99999999999999999999", "1e5", "1E5",
         "1.0", "nan", "inf", "-inf", "Infinity", "3.5", "x", " 7", "0.1", "1e-05", "300", "B", "a,b", 'q"q']
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**18, 10**18),
                    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(_TEXT), st.text(max_size=6))
_KEYS = st.sampled_from(["number", "param.a", "param.b", "total.time_s", "values", "infeasible_reason", "z"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(_KEYS, _VALUES, max_size=6), max_size=8))
def test_write_csv_writes_what_the_dict_writer_wrote(tmp_path_factory, rows):
    d = tmp_path_factory.mktemp("w")
    write_csv(d / "new.csv", rows)
    _old_write_csv(d / "old.csv", rows)
    assert (d / "new.csv").read_bytes() == (d / "old.csv").read_bytes()


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.lists(st.lists(st.sampled_from(_TEXT), min_size=1, max_size=5), max_size=12))
def test_read_csv_parses_as_value_by_value_parsing(tmp_path_factory, width, body):
    """Same values and types as csv.DictReader + _parse, also for ragged rows and mixed columns."""
    path = tmp_path_factory.mktemp("r") / "t.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([f"c{i}" for i in range(width)])
        w.writerows(body)
    try:
        want = _typed(_old_read_csv(path))
    except TypeError:  # a short row: DictReader's None fields do not parse (the old code failed too)
        return
    assert _typed(read_csv(path)) == want


def test_read_csv_columns_of_one_kind(tmp_path):
    """Columns of floats, integers, long integers (parsed through a float), empties and text."""
    rows = [{"f": 0.1 * i, "i": i - 50, "big": 10**17 + i, "e": (None if i % 3 else 1e-5 * i), "s": f"r{i}"}
            for i in range(100)]
    write_csv(tmp_path / "t.csv", rows)
    assert _typed(read_csv(tmp_path / "t.csv")) == _typed(_old_read_csv(tmp_path / "t.csv"))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                                   st.floats(allow_nan=True)), min_size=2, max_size=2), max_size=10))
def test_table_values_as_the_loop(cells):
    rows = [{"a": x, "b": y} for x, y in cells]
    got, want = Table(rows, ["a", "b"], ["minimize"] * 2).values(), _old_values(rows, ["a", "b"])
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20), st.integers(1, 4))
def test_finite_or_none_as_the_loop(xs, width):
    a = np.array(xs, dtype=float)
    assert finite_or_none(a) == [None if not np.isfinite(x) else float(x) for x in a]
    m = np.resize(a, (len(xs), width)) if xs else np.empty((0, width))
    assert finite_or_none(m) == [[None if not np.isfinite(x) else float(x) for x in row] for row in m]


def test_violation_sums_as_per_row():
    """The chunk's violation column is summed per row as before, bit for bit (numpy's pairwise order included)."""
    rng = np.random.default_rng(0)
    for k in range(1, 12):
        v = rng.standard_normal((500, k + 1)) * 10.0 ** rng.integers(-8, 30, (500, k + 1))
        v[rng.random(v.shape) < 0.2] = 1e30
        per_row = [float(np.maximum(row[:-1], 0).sum()) for row in v]
        assert np.maximum(v[:, :-1], 0).sum(axis=1).tolist() == per_row


# ------------------------------------------------------------------ a sweep end to end

@pytest.fixture
def study(tmp_path):
    return config.load(write(tmp_path / "sw.yaml", SWEEP.replace("RESULTS", str(tmp_path / "results"))))


def test_sweep_rows_equal_their_csv_read_back(study, tmp_path):
    table, paths, _ = run_sweep(study, n_jobs=1, chunk=97, out_dir=tmp_path / "s", progress=False)
    assert table.csv_exact
    assert _typed(table.rows) == _typed(read_csv(paths["trials"]))
    assert not all(r["feasible"] for r in table.rows)  # constraint violations (and None objectives) included


def test_sweep_with_reasons_reads_back(tmp_path):
    """Text that stays text (the reasons of designs the model rejects) and None totals read back the same."""
    st_ = config.load(Path(__file__).resolve().parents[1] / "studies" / "atomswitch_lenet_area.yaml")
    table, paths, _ = run_sweep(st_, n_jobs=1, chunk=128, out_dir=tmp_path / "s", progress=False)
    assert table.csv_exact and any(r["infeasible_reason"] for r in table.rows)
    assert _typed(table.rows) == _typed(read_csv(paths["trials"])) == _typed(_old_read_csv(paths["trials"]))
    _old_write_csv(tmp_path / "old.csv", table.rows)
    assert (tmp_path / "old.csv").read_bytes() == paths["trials"].read_bytes()


def _old_chunk(study, grid, idx):
    """A chunk as the JSON sweeps wrote before the binary chunk files (value by value)."""
    from dse.objective import evaluate_columns

    cols = grid.columns(idx)
    ev = evaluate_columns(study, cols)
    return {
        "index": [int(i) for i in idx],
        "params": {n: cols[n].tolist() for n in grid.names},
        "totals": {k: [None if not np.isfinite(x) else float(x) for x in v] for k, v in ev.totals.items()},
        "objectives": [[None if not np.isfinite(x) else float(x) for x in row] for row in ev.values],
        "model_feasible": [bool(x) for x in ev.feasible],
        "violation": [float(np.maximum(row[:-1], 0).sum()) if len(row) > 1 else 0.0 for row in ev.violations],
        "reason": [r or None for r in ev.reason],
    }


def test_sweep_chunks_hold_what_the_json_chunks_held(study, tmp_path):
    """A chunk file read back (arrays, parameters decoded from the indices) equals the JSON chunk of the
    value-by-value code, read back: the same values of the same types."""
    from dse.sweep import _read_chunk, chunk_lists

    run_sweep(study, n_jobs=1, chunk=97, out_dir=tmp_path / "s", progress=False)
    grid = Grid.of(study)
    got = chunk_lists(grid, _read_chunk(tmp_path / "s" / "chunks", 1))
    want = json.loads(json.dumps(_old_chunk(study, grid, np.arange(97, 194, dtype=np.int64))))
    assert json.dumps(got) == json.dumps(want)
    assert _typed([got["params"]]) == _typed([want["params"]])


def test_sweep_resumes_from_json_chunks_of_earlier_versions(study, tmp_path):
    """Chunks finished by a sweep before the binary files (JSON) are read, not evaluated again, and give the
    same trials.csv."""
    _, p, _ = run_sweep(study, n_jobs=1, chunk=97, out_dir=tmp_path / "s", progress=False)
    full = p["trials"].read_bytes()
    grid, cdir = Grid.of(study), tmp_path / "s" / "chunks"
    for i in (0, 3, 9):  # as a sweep of an earlier version would have left them
        idx = np.arange(97 * i, min(97 * (i + 1), grid.size), dtype=np.int64)
        old = _old_chunk(study, grid, idx)
        old["totals"]["time_s"][0] = 12345.0  # a marker: this chunk must come from the file
        (cdir / f"chunk_{i:06d}.npz").unlink()
        (cdir / f"chunk_{i:06d}.json").write_text(json.dumps(old))
    table, p, _ = run_sweep(study, n_jobs=1, chunk=97, out_dir=tmp_path / "s", progress=False)
    assert [r["total.time_s"] for r in table.rows if r["total.time_s"] == 12345.0] == [12345.0] * 3
    assert not (cdir / "chunk_000003.npz").exists()
    assert p["trials"].read_bytes() != full
    for i in (0, 3, 9):
        (cdir / f"chunk_{i:06d}.json").unlink()
    _, p, _ = run_sweep(study, n_jobs=1, chunk=97, out_dir=tmp_path / "s", progress=False)
    assert p["trials"].read_bytes() == full


def test_values_that_would_not_read_back_as_themselves():
    """Text such as "8" is written as 8 and read back as the integer 8; a sweep with such a grid value or reason
    (or chunks with different totals) does not claim its rows equal the file, so the report reads the file."""
    from dse.sweep import _reads_back

    assert [results.csv_stable(v) for v in (None, 1.5, float("nan"), True, 7, 2**53, "B", "layer x: 3 > 2")] == \
        [True, True, True, True, True, False, True, True]
    assert not any(map(results.csv_stable, ("", "8", "1e5", "True", "nan", np.int64(3), [1])))
    part = {"totals": {"time_s": [1.0]}, "reason": [None]}
    assert _reads_back(Grid(["p"], [["B", "T1"]]), [part, part])
    assert not _reads_back(Grid(["p"], [["8", "16"]]), [part])
    assert not _reads_back(Grid(["p"], [["B"]]), [{**part, "reason": ["inf"]}])
    assert not _reads_back(Grid(["p"], [["B"]]), [part, {**part, "totals": {"area_mm2": [1.0]}}])


def test_report_from_the_sweeps_rows_equals_the_report_from_its_file(tmp_path, run_cli):
    """`dse sweep` hands its rows to the report; the page is the one `dse report` writes from the folder."""
    path = write(tmp_path / "sw.yaml", SWEEP.replace("RESULTS", str(tmp_path / "results")))
    assert run_cli("sweep", path, "--no-progress")[0] == 0
    out = tmp_path / "results" / "sw" / "sweep"
    from_sweep = (out / "report.html").read_text()
    report.build(out, output=out / "again.html")
    again = (out / "again.html").read_text()

    def strip(page):  # the generation time is the one difference
        return "\n".join(line for line in page.splitlines() if "generated " not in line)

    assert strip(from_sweep) == strip(again)


def test_chunks_as_returned_equal_their_files(study, tmp_path):
    """The parent builds rows from the chunks the workers return; rows from the files read back are the same."""
    from dse.sweep import _read_chunk, chunk_lists, table_from_chunks

    table, _, _ = run_sweep(study, n_jobs=2, chunk=97, out_dir=tmp_path / "s", progress=False)
    grid, cdir = Grid.of(study), tmp_path / "s" / "chunks"
    assert len(list(cdir.glob("chunk_*.npz"))) == 10
    again = table_from_chunks(study, [chunk_lists(grid, _read_chunk(cdir, i)) for i in range(10)])
    assert _typed(table.rows) == _typed(again.rows)

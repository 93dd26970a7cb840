"""Distributed studies and sweeps on existing engines (issue 7 §3).

* several `dse worker` processes on one PostgreSQL study (a real server on
  loopback, started here): exactly the budget of COMPLETE trials;
* a worker killed mid-batch: its trials go stale (no heartbeat), are failed
  and retried by the remaining worker;
* `dse sweep --backend dask`: a Dask LocalCluster of 2 workers gives the
  same rows as the local sweep.

Without a PostgreSQL server or the dask/psycopg packages these tests skip,
unless DSE_REQUIRE_INTEGRATION=1 (set by .ci/run), where they fail.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from optuna.trial import TrialState

from dse import config, study as study_mod, worker

from .conftest import ROOT, write
from .pgserver import PostgresServer

REQUIRED = os.environ.get("DSE_REQUIRE_INTEGRATION") == "1"


def _unavailable(why: str):
    if REQUIRED:
        pytest.fail(f"integration test cannot run: {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def pg_url():
    try:
        import psycopg  # noqa: F401  (driver present?)
    except ImportError:
        _unavailable("psycopg (PostgreSQL driver) not installed")
    try:
        server = PostgresServer()
        url = server.start()
    except (RuntimeError, subprocess.CalledProcessError, FileNotFoundError) as exc:
        _unavailable(f"no PostgreSQL server: {exc}")
    yield url
    server.stop()


STUDY = """
name: {name}
arch: multicore
workload: fc2
space:
  cores: {{low: 1, high: 64}}
  placement: [B, T1, TR1, T2, TR2]
  ni: [8, 16, 32]
  clock_mhz: {{low: 300, high: 1000}}
objectives: [total.time_s, total.area_mm2]
sampler: {{name: nsga2, seed: 0}}
n_trials: {n}
batch_size: {batch}
storage: {url}
heartbeat_interval: 1
grace_period: 2
results_dir: {results}
"""


def _study(tmp_path, url, name, n, batch):
    return write(tmp_path / f"{name}.yaml", STUDY.format(name=name, n=n, batch=batch, url=url,
                                                        results=tmp_path / "results"))


def _worker(path, wid):
    return subprocess.Popen([sys.executable, "-m", "dse.cli", "worker", str(path), "--worker-id", str(wid)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _trials(path):
    st = config.load(path)
    return study_mod.open_study(st, load_only=True).get_trials(deepcopy=False)


def test_workers_share_one_postgres_study(tmp_path, pg_url):
    path = _study(tmp_path, pg_url, "pgshare", n=90, batch=4)
    procs = [_worker(path, w) for w in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    trials = _trials(path)
    assert len(worker.first_designs(trials)) == 90  # distinct designs (two workers may evaluate one at once)
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING, TrialState.FAIL)]
    assert len({t.number for t in trials}) == len(trials)
    told = [int(o[0].split(":")[1].split()[0]) for o in outs]  # "worker i: N trials evaluated"
    assert sum(told) == sum(t.state == TrialState.COMPLETE for t in trials)  # new designs and repeats
    assert sum(1 for n in told if n > 0) >= 2  # the work was shared


def test_runs_and_a_worker_share_one_postgres_study(tmp_path, pg_url):
    """Two `dse run` and a `dse worker` at once (issue 14 item 1): the exact budget, no traceback."""
    path = _study(tmp_path, pg_url, "pgruns", n=90, batch=4)
    run = [sys.executable, "-m", "dse.cli", "run", str(path), "--no-progress"]
    procs = [subprocess.Popen(run, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)] + [_worker(path, 3)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 and "Traceback" not in o[1] for p, o in zip(procs, outs)), outs
    trials = _trials(path)
    assert len(worker.first_designs(trials)) == 90  # distinct designs (two runs may evaluate one at once)
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]


def test_killed_worker_trials_are_failed_and_retried(tmp_path, pg_url):
    path = _study(tmp_path, pg_url, "pgkill", n=120, batch=100)
    victim = _worker(path, 1)
    deadline = time.time() + 120
    while time.time() < deadline:  # wait until the victim holds a batch of running trials
        time.sleep(0.2)
        try:
            running = [t for t in _trials(path) if t.state == TrialState.RUNNING]
        except Exception:
            continue
        if len(running) >= 20:
            break
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    orphans = {t.number: t.params for t in _trials(path) if t.state == TrialState.RUNNING}
    assert orphans, "the victim must die holding running trials"
    survivor = _worker(path, 2)
    out, err = survivor.communicate(timeout=300)
    assert survivor.returncode == 0, err
    trials = _trials(path)
    assert len(worker.first_designs(trials)) == 120
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    failed = {t.number for t in trials if t.state == TrialState.FAIL}
    assert set(orphans) <= failed
    # a retry carries the same parameters: Optuna's heartbeat retry ("failed_trial") or, for a
    # trial killed before its first heartbeat, the stall fallback ("retry_of")
    retried = {}
    for t in trials:
        if t.state == TrialState.COMPLETE:
            origin = t.system_attrs.get("failed_trial", t.user_attrs.get("retry_of"))
            if origin is not None:
                retried[origin] = t
    assert set(orphans) <= set(retried)
    for number, params in orphans.items():
        if params:  # (a trial killed before its parameters were sampled has none to carry over)
            assert retried[number].params == params


SWEEP = """
name: dask
arch: multicore
workload: fc1
space:
  cores: {low: 1, high: 24}
  placement: [B, T1, TR1, T2, TR2]
  ni: [8, 16]
objectives: [total.time_s, total.area_mm2]
n_trials: 1
results_dir: RESULTS
"""


def test_dask_sweep_equals_local_sweep(tmp_path):
    try:
        from distributed import LocalCluster
    except ImportError:
        _unavailable("dask.distributed not installed")
    from dse.sweep import run_sweep

    st = config.load(write(tmp_path / "d.yaml", SWEEP.replace("RESULTS", str(tmp_path / "results"))))
    _, local, _ = run_sweep(st, n_jobs=1, chunk=40, out_dir=tmp_path / "local", progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        _, remote, _ = run_sweep(st, chunk=40, backend="dask", scheduler=cluster.scheduler_address,
                                 out_dir=tmp_path / "dask", progress=False)
    assert remote["trials"].read_text() == local["trials"].read_text()
    assert remote["pareto"].read_text() == local["pareto"].read_text()

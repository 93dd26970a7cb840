"""Peers side by side in one run: ZigZag and accel-dse on literally the same ResNet-18 ONNX file.

ZigZag (``zigzag-dse`` from PyPI, pinned below) runs in its own venv
(:mod:`benchmarks.peer_venv`) through :mod:`benchmarks.peer_zigzag_run`; in
the same run accel-dse evaluates that file on every available model, one
design point per call and batched (the method of :mod:`benchmarks.throughput`).
MAESTRO's published rate is a reference line only: it is not run here.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


from archmodels import available, get_model
from benchmarks import peer_venv, throughput
from benchmarks.onnx_nets import resnet18_inferred
from benchmarks.throughput import Throughput
from workloads import load_workload

HERE = Path(__file__).resolve().parent
VENV = HERE / ".peers" / "zigzag-venv"
# zigzag-dse 3.9.1 imports `six` (zigzag/parser/upgraded_validator.py) without declaring it.
ZIGZAG_REQUIREMENTS = ["zigzag-dse==3.9.1", "six==1.17.0"]
ACCELERATOR, MAPPING, LPF_LIMIT = "tpu_like", "tpu_like", 1
PROBE = 128  # random points of the probe call that sizes accel-dse's batches
MAESTRO_DESIGNS_PER_S = 0.17e6
MAESTRO_CITE = ("H. Kwon et al., \"MAESTRO: A Data-Centric Approach to Understand Reuse, Performance, and Hardware "
                "Cost of DNN Mappings\", IEEE Micro 40(3), 2020 (extends \"Understanding Reuse, Performance, and "
                "Hardware Cost of DNN Dataflows: A Data-Centric Approach\", MICRO 2019)")


@dataclass
class ZigZagRun:
    env: peer_venv.PeerEnv
    wall_s: float = 0.0  # the whole subprocess, interpreter start-up included
    result: dict = field(default_factory=dict)
    error: str | None = None

    @property
    def startup_s(self) -> float:
        """Interpreter and venv start-up plus result writing: wall time not spent importing or evaluating."""
        return self.wall_s - self.result["import_s"] - self.result["eval_s"]

    @property
    def evals_per_s(self) -> float:  # design point x layer
        return len(self.result["layers"]) / self.result["eval_s"]


@dataclass
class AccelRow:
    arch: str
    t: Throughput | None  # None when the model raised on the network (``error``)
    feasible_share: float = 0.0  # of the probe points
    default: dict | None = None  # the contract dictionary of the default design point
    error: str | None = None


@dataclass
class Comparison:
    onnx_macs: int
    zigzag: ZigZagRun
    accel: list[AccelRow]
    emaxvr_vgg16: Throughput | None
    seconds: float


def run_zigzag(onnx_path: Path, work: Path, timeout_s: float = 300) -> ZigZagRun:
    """Install (or reuse) ZigZag's venv and evaluate ``onnx_path`` there; errors are recorded, not raised."""
    run = ZigZagRun(peer_venv.ensure(VENV, ZIGZAG_REQUIREMENTS))
    if run.env.error:
        run.error = f"ZigZag could not be installed: {run.env.error}"
        return run
    out = work / "zigzag.json"
    # -I: isolated mode, so nothing of accel-dse's (script directory, PYTHONPATH) is importable there
    cmd = [str(run.env.python), "-I", str(HERE / "peer_zigzag_run.py"), str(onnx_path), ACCELERATOR, MAPPING,
           str(out), str(LPF_LIMIT)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=work)
    except subprocess.TimeoutExpired:
        run.error = f"ZigZag did not finish ResNet-18 within {timeout_s:.0f} s"
        return run
    run.wall_s = time.perf_counter() - t0
    if proc.returncode != 0:
        run.error = f"ZigZag failed (exit {proc.returncode}): {peer_venv.tail(proc.stderr)}"
        return run
    run.result = json.loads(out.read_text())
    return run


def measure_adaptive(arch: str, workload: str, quick: bool, budget_s: float = 1.0) -> AccelRow:
    """accel-dse throughput with an adaptively sized batch (:func:`throughput.measure_adaptive`)."""
    t, feasible = throughput.measure_adaptive(arch, workload, quick, budget_s)
    return AccelRow(arch, t, feasible)


def measure_accel(onnx_path: Path, quick: bool) -> list[AccelRow]:
    """accel-dse on the same file, every available model: scalar, batched, default point, feasible share."""
    wl = load_workload(str(onnx_path))
    rows = []
    for arch in available():
        try:
            row = measure_adaptive(arch, str(onnx_path), quick)
            model = get_model(arch)
            row.default = model.evaluate(wl, **model.params.defaults())
        except Exception as exc:  # a model under development must not sink the whole benchmark
            row = AccelRow(arch, None, error=f"{type(exc).__name__}: {exc}"[:300])
        rows.append(row)
        print(f"peers: accel-dse {arch} on resnet18.onnx: " + (row.error or f"{row.t.batch_evals_per_s:,.0f} "
              f"evals/s batched ({row.t.batch_size} points)"), flush=True)
    return rows


def compare(quick: bool, emaxvr_vgg16: Throughput | None = None) -> Comparison:
    """Everything in one run. ``emaxvr_vgg16``: the throughput section's measurement, measured here if absent."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dse-peers-") as tmp:
        onnx_path = Path(resnet18_inferred(Path(tmp) / "resnet18.onnx"))
        zz = run_zigzag(onnx_path, Path(tmp))
        print(f"peers: ZigZag {zz.error or 'evaluated ResNet-18 in %.1f s' % zz.result['eval_s']}", flush=True)
        accel = measure_accel(onnx_path, quick)
        macs = load_workload(str(onnx_path)).macs
    if emaxvr_vgg16 is None and "emaxvr" in available():
        try:
            emaxvr_vgg16 = measure_adaptive("emaxvr", "vgg16", quick).t
        except Exception as exc:  # reported as a missing line
            print(f"peers: emaxvr on vgg16 failed: {type(exc).__name__}: {exc}", flush=True)
    return Comparison(macs, zz, accel, emaxvr_vgg16, time.perf_counter() - t0)

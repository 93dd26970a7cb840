"""Workload models: the layer IR, built-in networks, parametric matrix
products, sparse matrices, and users' own workload files.

``load_workload(spec)`` turns what a user types (a built-in name, a
parametric string, or a file path) into a :class:`Workload`.
"""

from __future__ import annotations

from pathlib import Path

from workloads.errors import UserError, allowed

from .layers import FC, KINDS, Conv2D, Layer, MatMul, Pool, SparsePattern, SpMM, SpMV, Workload
from .networks import BUILTINS, builtin

__all__ = [
    "FC", "KINDS", "Conv2D", "Layer", "MatMul", "Pool", "SparsePattern", "SpMM", "SpMV",
    "Workload", "BUILTINS", "builtin", "load_workload", "FORMS",
]

FORMS = "a built-in name, 'matmul:n=..', 'spmm:n=..,sparsity=..', 'spmv:..', or a .yaml/.mtx/.onnx file"

_CACHE: dict[str, Workload] = {}


def load_workload(spec: str | Workload) -> Workload:
    """Resolve a workload spec; results are cached per spec string."""
    if isinstance(spec, Workload):
        return spec
    if spec in _CACHE:
        return _CACHE[spec]
    wl = _load(spec)
    _CACHE[spec] = wl
    return wl


def _load(spec: str) -> Workload:
    if spec in BUILTINS:
        return builtin(spec)
    head = spec.partition(":")[0]
    from . import parametric

    if head in parametric.KINDS:
        return parametric.parse(spec)
    suffix = Path(spec).suffix.lower()
    if suffix in (".yaml", ".yml", ".mtx", ".onnx") and not Path(spec).is_file():
        raise UserError(f"workload file {spec} not found")
    if suffix in (".yaml", ".yml"):
        from . import userfile

        return userfile.load(spec)
    if suffix == ".mtx":
        wl = parametric.parse(f"spmv:file={spec}")
        return Workload(spec, wl.layers)
    if suffix == ".onnx":
        try:
            from . import onnx_import
        except ImportError:
            raise UserError(f"workload {spec}: ONNX import is not available in this version") from None
        return onnx_import.load(spec)
    raise UserError(f"unknown workload '{spec}'; allowed: {allowed(BUILTINS)}, or {FORMS}")

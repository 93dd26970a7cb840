"""Parameterised architecture models and their registry.

``get_model(name)`` returns the model registered under ``name``; models are
imported on first use so that ``dse`` starts fast. Each entry is
``name -> "module:Class"``. A registered name whose module is not in this
version yet is reported as such (``available()`` lists the others).
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

from workloads.errors import UserError, allowed

from .base import Model

REGISTRY: dict[str, str] = {
    "emaxv": "archmodels.emax:EmaxvModel",
    "emaxvr": "archmodels.emax:EmaxvrModel",
    "imax": "archmodels.imax:ImaxModel",
    "rena": "archmodels.rena:RenaModel",
    "atomswitch": "archmodels.atomswitch:AtomSwitchModel",
    "multicore": "archmodels.multicore:MulticoreModel",
}

_INSTANCES: dict[str, Model] = {}


def available() -> list[str]:
    """Registered models whose implementation is present."""
    return [n for n, target in REGISTRY.items() if find_spec(target.partition(":")[0]) is not None]


def get_model(name: str) -> Model:
    """The model registered as ``name`` (one shared instance per process)."""
    if name not in _INSTANCES:
        if name not in REGISTRY:
            raise UserError(f"unknown architecture '{name}'; allowed: {allowed(available())}")
        if name not in available():
            raise UserError(f"architecture '{name}' is not implemented in this version; available: {allowed(available())}")
        module, _, cls = REGISTRY[name].partition(":")
        _INSTANCES[name] = getattr(import_module(module), cls)()
    return _INSTANCES[name]


def names() -> list[str]:
    return available()


__all__ = ["Model", "REGISTRY", "available", "get_model", "names"]

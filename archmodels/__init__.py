"""Parameterised architecture models and their registry.

``get_model(ref)`` returns one shared model instance per process for ``ref``,
which is one of

* a built-in name (``REGISTRY``: ``name -> "module:Class"``; ``available()``
  lists those whose module is present in this version);
* a name an installed package registers in the ``accel_dse.models``
  entry-point group (``plugins()``), e.g. in its ``pyproject.toml``::

      [project.entry-points."accel_dse.models"]
      mysystolic = "mypackage.model:MySystolic"

* a file and a class, ``path/to/model.py:ClassName`` (relative to the
  current directory; study files resolve it next to the study file first,
  see :func:`resolve_path_ref`). The file is imported as a module of its
  own, once per process.

Models are imported on first use so that ``dse`` starts fast. A model
obtained here pickles as its reference (:meth:`Model.__reduce_ex__`), so
joblib/Dask workers re-import it, from the same file, instead of receiving
a copy. Bad references raise :class:`~workloads.errors.UserError` (one
line naming the file and what is wrong).
"""

from __future__ import annotations

import inspect
import sys
from importlib import import_module
from importlib.util import find_spec, module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType

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
ENTRY_POINT_GROUP = "accel_dse.models"

_INSTANCES: dict[str, Model] = {}
_PATH_MODULES: dict[Path, ModuleType] = {}


def available() -> list[str]:
    """Built-in models whose implementation is present (what the project tests, validates and benchmarks)."""
    return [n for n, target in REGISTRY.items() if find_spec(target.partition(":")[0]) is not None]


def plugins() -> dict[str, str]:
    """Models installed packages register: name -> ``module:Class`` (built-in names win)."""
    from importlib import metadata  # only when a name is not built in: dse starts faster
    return {ep.name: ep.value for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name not in REGISTRY}


def names() -> list[str]:
    """Every model name ``get_model`` accepts: built-in, then installed plugins."""
    return available() + sorted(plugins())


def is_path_ref(ref: str) -> bool:
    """``path/to/model.py:ClassName`` (rather than a registered name)?"""
    path, sep, cls = ref.rpartition(":")
    return bool(sep) and path.endswith(".py") and cls.isidentifier()


def resolve_path_ref(ref: str, base_dir: Path | None = None) -> str:
    """``file.py:Class`` with the file made absolute: next to ``base_dir`` if it is there, else from the cwd."""
    path, _, cls = ref.rpartition(":")
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = base_dir / p if base_dir is not None and (base_dir / p).exists() else Path.cwd() / p
    return f"{p.resolve()}:{cls}"


def get_model(ref: str) -> Model:
    """The model ``ref`` names (see module docstring); one shared instance per process."""
    key = resolve_path_ref(ref) if is_path_ref(ref) else ref
    if key not in _INSTANCES:
        model = _instantiate(_model_class(key, ref), ref)
        model._ref = key
        _INSTANCES[key] = model
    return _INSTANCES[key]


def _model_class(key: str, ref: str) -> type:
    if is_path_ref(key):
        return _class_from_file(key, ref)
    target = REGISTRY.get(key) or plugins().get(key)
    if target is None:
        hint = " or path/to/model.py:ClassName" if key.endswith(".py") or ":" in key else ""
        raise UserError(f"unknown architecture '{key}'; allowed: {allowed(names())}{hint}")
    if key in REGISTRY and key not in available():
        raise UserError(f"architecture '{key}' is not implemented in this version; available: {allowed(available())}")
    module, _, cls = target.partition(":")
    try:
        obj = getattr(import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"architecture '{key}' (entry point {target} in group {ENTRY_POINT_GROUP}) "
                        f"cannot be loaded: {type(exc).__name__}: {exc}") from None
    return _checked_class(obj, f"architecture '{key}' ({target})")


def _class_from_file(key: str, ref: str) -> type:
    path_text, _, cls = key.rpartition(":")
    path = Path(path_text)
    if not path.is_file():
        raise UserError(f"{path}: no such model file (arch '{ref}': give path/to/model.py:ClassName)")
    module = _PATH_MODULES.get(path)
    if module is None:
        import hashlib

        # a top-level module name of its own per file (two model.py files never collide; pickle finds it)
        name = f"_accel_dse_user_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
        spec = spec_from_file_location(name, path)
        module = module_from_spec(spec)
        sys.modules[name] = module  # before exec: dataclasses and pickling look the module up
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # the user's file: report it in one line
            sys.modules.pop(name, None)
            line = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) else ""
            raise UserError(f"{path}: cannot import the model file{line}: {type(exc).__name__}: {exc}") from None
        _PATH_MODULES[path] = module
    obj = getattr(module, cls, None)
    if obj is None:
        found = [n for n, o in vars(module).items()
                 if inspect.isclass(o) and issubclass(o, Model) and o.__module__ == module.__name__]
        raise UserError(f"{path}: no class '{cls}' (arch '{ref}'); Model classes in the file: {allowed(found) or 'none'}")
    return _checked_class(obj, f"{path}: '{cls}'")


def _checked_class(obj: object, what: str) -> type:
    if not (inspect.isclass(obj) and issubclass(obj, Model)):
        raise UserError(f"{what} is not a subclass of archmodels.Model")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise UserError(f"{what} does not implement {missing}")
    return obj


def _instantiate(cls: type, ref: str) -> Model:
    try:
        return cls()
    except UserError:
        raise
    except Exception as exc:  # e.g. a missing PARAMS or name, a bad Param default
        raise UserError(f"architecture '{ref}': cannot create {cls.__name__}: {type(exc).__name__}: {exc}") from None


__all__ = ["ENTRY_POINT_GROUP", "Model", "REGISTRY", "available", "get_model", "is_path_ref", "names", "plugins",
           "resolve_path_ref"]

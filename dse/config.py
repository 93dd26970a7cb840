"""Study files: the YAML schema, and its checks against the chosen model.

A study file names an architecture, one or more workloads, a search space
over the model's parameters, objectives, constraints, a sampler and a
budget (see ``docs/studies.md``). Schema errors and model mismatches are
reported as one line naming the file, the key and the allowed values.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from archmodels import get_model, is_path_ref, resolve_path_ref
from archmodels.base import Model
from archmodels.params import Param
from workloads import Workload, file_kind, load_workload, split_file_options, with_skip_unknown

from workloads import yamlio
from workloads.errors import UserError, allowed, pydantic_message

SAMPLERS = ("tpe", "nsga2", "nsga3", "random", "grid", "gp")
MAX_SEED = 2**32 - 1 - 4096  # NumPy seeds are 32-bit; worker i uses seed + i
MAX_TRIALS = 100_000_000  # far beyond any storage's reach (~50 trials/s on a journal)
MAX_JOBS = 1024
COMBINE = ("sum", "worst")


class RangeSpec(BaseModel):
    """``{low, high[, step][, log][, points]}``: an int or float range."""

    model_config = ConfigDict(extra="forbid")
    low: float = Field(allow_inf_nan=False)
    high: float = Field(allow_inf_nan=False)
    step: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    log: bool = False
    points: int | None = Field(default=None, ge=2, description="grid points for a float range without step")


class ChoiceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    choices: list[Any] = Field(min_length=1)


class ObjectiveSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    metric: str
    direction: Literal["minimize", "maximize"] = "minimize"


class ConstraintSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    metric: str
    op: Literal["<=", ">="]
    bound: float = Field(allow_inf_nan=False)


class SamplerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Literal["tpe", "nsga2", "nsga3", "random", "grid", "gp"] | None = None
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    options: dict[str, Any] = Field(default_factory=dict)


_CONSTRAINT_RE = re.compile(r"^\s*([\w.+\-\[\]]+)\s*(<=|>=)\s*([-+0-9.eE]+)\s*$")


class StudyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    arch: str
    workload: str | None = None
    workloads: list[str] | None = None
    combine: Literal["sum", "worst"] = "sum"
    space: dict[str, Any] = Field(default_factory=dict)
    objectives: list[Any] = Field(min_length=1)
    constraints: list[Any] = Field(default_factory=list)
    sampler: Any = None
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    n_trials: int | None = Field(default=None, ge=1, le=MAX_TRIALS)
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    n_jobs: int = Field(default=1, ge=1, le=MAX_JOBS)
    batch_size: int = Field(default=1, ge=1, le=4096)
    storage: str | None = None
    heartbeat_interval: int = Field(default=5, ge=1, description="seconds, RDB storages")
    grace_period: int = Field(default=20, ge=1, description="seconds without heartbeat before a trial is failed")
    results_dir: str = "results"
    skip_unknown: bool = Field(default=False, description="ONNX workloads: cost unknown operators as zero")


@dataclass(frozen=True)
class Dim:
    """One searched dimension, resolved against the model parameter."""

    name: str
    kind: Literal["int", "float", "choice", "fixed"]
    low: float | None = None
    high: float | None = None
    step: float | None = None
    log: bool = False
    points: int | None = None
    choices: tuple = ()
    value: Any = None

    def describe(self) -> str:
        """What Optuna sees of this dimension (its distribution), for the study fingerprint."""
        if self.kind == "fixed":
            return f"= {self.value!r}"
        if self.kind == "choice":
            return f"choices {list(self.choices)!r}"
        text = f"{self.kind} {self.low:g}..{self.high:g}"
        if self.step:
            text += f" step {self.step:g}"
        return text + (" log" if self.log else "")

    def fits(self, value: Any) -> bool:
        """True when ``value`` is a point of this dimension (fixed: equal; range: inside, on the step)."""
        if self.kind == "fixed":
            return value == self.value
        if self.kind == "choice":
            return any(value == c and type(value) is type(c) for c in self.choices)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not self.low <= value <= self.high:
            return False
        if self.kind == "int" and int(value) != value:
            return False
        if self.step:
            k = (value - self.low) / self.step
            return abs(k - round(k)) < 1e-9
        return True

    def grid(self) -> list[Any]:
        """The values of this dimension on a grid (sweeps, the grid sampler): exactly what the file says.

        An int range gives every integer from low to high by ``step`` (``log``
        only changes how Optuna samples it, not the grid); a float range
        needs ``step`` or ``points`` (ValueError otherwise).
        """
        import numpy as np

        if self.kind == "fixed":
            return [self.value]
        if self.kind == "choice":
            return list(self.choices)
        if self.kind == "int" and not self.points:
            return list(range(int(self.low), int(self.high) + 1, int(self.step or 1)))
        if self.step:
            n = int(round((self.high - self.low) / self.step))
            return [float(self.low + i * self.step) for i in range(n + 1) if self.low + i * self.step <= self.high + 1e-9]
        if not self.points:
            raise ValueError(f"the float range of '{self.name}' has no grid: give 'step' or 'points'")
        vals = np.geomspace(self.low, self.high, self.points) if self.log else np.linspace(self.low, self.high, self.points)
        if self.kind == "int":
            return sorted({int(round(v)) for v in vals})
        return [float(v) for v in vals]


@dataclass(frozen=True)
class Objective:
    metric: str
    direction: Literal["minimize", "maximize"]


@dataclass(frozen=True)
class Constraint:
    metric: str
    op: Literal["<=", ">="]
    bound: float

    @property
    def key(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"

    def violation(self, value):
        """<= 0 when satisfied (Optuna's convention), the distance otherwise."""
        return value - self.bound if self.op == "<=" else self.bound - value


@dataclass(frozen=True)
class Study:
    """A validated study: everything the runner and the sweep need."""

    path: str
    name: str
    arch: str
    model: Model
    workloads: tuple[str, ...]
    combine: str
    dims: tuple[Dim, ...]
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...]
    sampler: str | None
    sampler_explicit: bool
    seed: int | None
    sampler_options: dict[str, Any]
    n_trials: int | None
    timeout: float | None
    n_jobs: int
    batch_size: int
    storage: str | None
    results_dir: Path
    heartbeat_interval: int = 5
    grace_period: int = 20
    sampler_why: str = "named in the study file"

    @property
    def out_dir(self) -> Path:
        return self.results_dir / self.name

    @property
    def fixed(self) -> dict[str, Any]:
        return {d.name: d.value for d in self.dims if d.kind == "fixed"}

    @cached_property
    def fixed_row(self) -> dict[str, Any]:
        """Every model parameter at the study's fixed value or its default, checked once per study (derived
        values are filled per row, as they may depend on a searched parameter)."""
        return self.model.params.checked(self.fixed)

    @property
    def searched(self) -> tuple[Dim, ...]:
        return tuple(d for d in self.dims if d.kind != "fixed")

    def identity(self) -> dict[str, Any]:
        """What defines the study's trials: a run whose file differs must not append to it.

        Stored in the Optuna study (user attribute ``fingerprint``) and
        compared on every open (:func:`dse.study.open_study`). Budget,
        sampler, seed, jobs, batch size and storage may change freely.
        """
        return {
            "arch": self.arch,
            "workloads": list(self.workloads),
            "combine": self.combine,
            "space": {d.name: d.describe() for d in self.dims},
            "objectives": [f"{o.metric} {o.direction}" for o in self.objectives],
            "constraints": [c.key for c in self.constraints],
        }

    def fingerprint(self) -> str:
        """Hash of what determines evaluated values (model, workloads, space, metrics)."""
        import hashlib

        text = repr((self.arch, self.workloads, self.combine, self.dims, self.objectives, self.constraints))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def grid_size(self) -> int:
        n = 1
        for d in self.dims:
            n *= len(d.grid())
        return n


def load(path: str | Path, overrides: dict[str, Any] | None = None) -> Study:
    """Read, schema-check and model-check a study file."""
    path = Path(path)
    where = f"{path}: "
    try:
        raw = yamlio.load(path.read_text())
    except OSError as exc:
        raise UserError(f"{path}: cannot read study file: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise UserError(f"{path}: a study file is a mapping of keys (name, arch, workload, space, objectives, ...)")
    raw.update(overrides or {})
    try:
        sf = StudyFile.model_validate(raw)
    except ValidationError as exc:
        raise UserError(where + pydantic_message(exc, StudyFile.model_fields)) from None
    return _resolve(sf, path)


def _resolve(sf: StudyFile, path: Path) -> Study:
    where = f"{path}: "
    arch = resolve_path_ref(sf.arch, path.parent) if is_path_ref(sf.arch) else sf.arch  # file.py:Class
    try:
        model = get_model(arch)
    except UserError as exc:
        raise UserError(f"{where}arch: {exc}") from None
    if (sf.workload is None) == (sf.workloads is None):
        raise UserError(f"{where}give exactly one of 'workload' (a name) or 'workloads' (a list)")
    names = tuple([sf.workload] if sf.workload else sf.workloads or [])
    if sf.skip_unknown:
        names = tuple(with_skip_unknown(w) for w in names)
    if not names:
        raise UserError(f"{where}workloads: the list is empty")
    wls = []
    for i, w in enumerate(names):
        key = "workload" if sf.workload else f"workloads.{i}"
        try:
            wls.append(load_workload(_relative(w, path)))
        except UserError as exc:
            raise UserError(f"{where}{key}: {exc}") from None
    names = tuple(_relative(w, path) for w in names)

    dims = tuple(_dim(model.params.get(k, f"{where}space: "), v, f"{where}space.{k}: ") for k, v in sf.space.items())
    objectives = tuple(_objective(o, i, model, wls, where) for i, o in enumerate(sf.objectives))
    constraints = tuple(_constraint(c, i, model, wls, where) for i, c in enumerate(sf.constraints))
    for key, items, ident in (("objectives", objectives, lambda o: o.metric), ("constraints", constraints, lambda c: c.key)):
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            if ident(item) in seen:
                raise UserError(f"{where}{key}.{i}: '{ident(item)}' repeats {key}.{seen[ident(item)]}; "
                                "each may appear once")
            seen[ident(item)] = i

    from .storage import ALLOWED, understood

    if not understood(sf.storage):
        raise UserError(f"{where}storage: '{sf.storage}' is not understood; allowed: {ALLOWED}")
    sampler, seed, options = _sampler(sf.sampler, where)
    explicit = sampler is not None
    seed = seed if seed is not None else sf.seed
    study = Study(
        path=str(path), name=sf.name, arch=sf.arch, model=model, workloads=names, combine=sf.combine,
        dims=dims, objectives=objectives, constraints=constraints, sampler=sampler, sampler_explicit=explicit,
        seed=seed, sampler_options=options, n_trials=sf.n_trials, timeout=sf.timeout, n_jobs=sf.n_jobs,
        batch_size=sf.batch_size, storage=sf.storage, results_dir=Path(sf.results_dir),
        heartbeat_interval=sf.heartbeat_interval, grace_period=sf.grace_period,
    )
    if not explicit:
        import dataclasses

        from .samplers import default_sampler

        name, why = default_sampler(sf.arch, _finite_grid_size(study), study.n_trials, study.batch_size)
        study = dataclasses.replace(study, sampler=name, sampler_why=why)
    if study.sampler == "gp" and study.batch_size > 1:
        raise UserError(f"{where}batch_size: the gp sampler takes no batches; allowed: 1")
    if study.sampler == "grid":
        for d in study.searched:
            if d.kind == "float" and not d.step and not d.points:
                raise UserError(f"{where}space.{d.name}: a float range needs 'step' or 'points' for the grid sampler")
    if study.n_trials is None and study.timeout is None and study.sampler != "grid":
        raise UserError(f"{where}n_trials: give n_trials and/or timeout (only the grid sampler has a natural budget)")
    return study


def _finite_grid_size(study: Study) -> int | None:
    """Grid size when every searched dimension is exactly a grid the samplers see, else None."""
    for d in study.searched:
        if d.kind == "float" and (d.step is None or d.log):
            return None
        if d.kind == "int" and d.log:
            return None
    return study.grid_size()


#: the study file as run, kept in its results folder (:func:`write_copy`)
STUDY_COPY = "study.yaml"


def write_copy(study: Study, out_dir: Path) -> str:
    """Write the study file as run into its results folder (``study.yaml``): its keys as written, with the
    study's name and its workloads as the study resolved them (so the copy defines the same study); return the
    file name (recorded in ``study.json``). ``dse plot`` and ``dse report`` read the folder through it once
    the study file is edited, moved or deleted (:func:`load_folder`). A copy read back is not copied again."""
    path = Path(study.path)
    if path.resolve() == (Path(out_dir) / STUDY_COPY).resolve():
        return STUDY_COPY
    raw = {k: v for k, v in yamlio.load(path.read_text()).items() if k not in ("workload", "workloads")}
    out = {"name": study.name, **{k: v for k, v in raw.items() if k != "name"}, "workloads": list(study.workloads)}
    text = (f"# the study file {study.path} as dse last ran it into this folder (read by dse plot and dse report "
            "once that file is edited or gone)\n" + yaml.safe_dump(out, sort_keys=False))
    Path(out_dir).mkdir(parents=True, exist_ok=True)  # (a database study's folder may not exist yet)
    from .results import write_text_atomic

    write_text_atomic(Path(out_dir) / STUDY_COPY, text)  # (processes sharing the study: a reader sees one whole)
    return STUDY_COPY


def load_folder(out_dir: Path, meta: dict[str, Any], command: str) -> Study:
    """The study of results folder ``out_dir`` (its ``study.json`` is ``meta``): through the study file it
    records while that file defines the same study as the copy kept in the folder (its relative paths, a model
    file's too, resolve next to it), else through the copy (:func:`write_copy`); a folder written before copies
    needs its study file."""
    from .results import folder_overrides

    over = folder_overrides(out_dir, meta)
    original = Path(meta.get("study_file") or "")
    copy = Path(out_dir) / meta["study_copy"] if meta.get("study_copy") else None
    if copy is not None and not copy.exists():
        copy = None
    if original.is_file():
        try:
            now = load(original, over)
        except UserError:
            if copy is None:
                raise
        else:  # the same study as the copy (or no copy, or a copy that does not load here): the file
            if copy is None:
                return now
            try:
                kept = load(copy, over)
            except UserError:
                return now
            return now if kept.identity() == now.identity() else kept
    if copy is None:
        raise UserError(f"{command}: the study file {meta.get('study_file')} recorded in {out_dir}/study.json is gone")
    return load(copy, over)


def _relative(workload: str, study_path: Path) -> str:
    """Workload files are looked up next to the study file first (options after the name kept)."""
    path, options = split_file_options(workload)
    p = Path(path)
    if file_kind(path) and not p.is_absolute() and not p.exists():
        cand = study_path.parent / p
        if cand.exists():
            return str(cand) + (f":{options}" if options else "")
    return workload


def _dim(param: Param, spec: Any, where: str) -> Dim:
    name = param.name
    if isinstance(spec, dict):
        cls = ChoiceSpec if "choices" in spec else RangeSpec
        keys = "choices" if cls is ChoiceSpec else "low, high, step, log, points"
        spec = _validated(cls, spec, where[:-2] + f" (keys: {keys}): ", name_keys=False)
    if isinstance(spec, ChoiceSpec) or isinstance(spec, list):
        raw = spec.choices if isinstance(spec, ChoiceSpec) else spec
        if not raw:
            raise UserError(f"{where}empty choices")
        vals = tuple(_finite(param.check(_maybe_num(v, param), where), param, where) for v in raw)
        return Dim(name, "choice", choices=vals)
    if isinstance(spec, RangeSpec):
        if param.kind not in ("int", "float"):
            raise UserError(f"{where}'{name}' is a {param.kind} parameter; give choices: [{param.allowed_text}]")
        if spec.low > spec.high:
            raise UserError(f"{where}low={spec.low:g} is above high={spec.high:g}")
        for key in ("low", "high"):
            v = getattr(spec, key)
            if (param.low is not None and v < param.low) or (param.high is not None and v > param.high):
                raise UserError(f"{where}{key}={v:g} is outside the model's range {param.allowed_text} for '{name}'")
        if param.kind == "int":
            for key in ("low", "high", "step"):
                v = getattr(spec, key)
                if v is not None and float(v) != int(v):
                    raise UserError(f"{where}{key}={v} must be an integer: '{name}' is an int parameter")
        if spec.log and spec.step is not None:
            raise UserError(f"{where}'step' and 'log' cannot be combined")
        if spec.log and spec.low <= 0:
            raise UserError(f"{where}log range needs low > 0")
        return Dim(name, param.kind, low=spec.low, high=spec.high, step=spec.step, log=spec.log, points=spec.points)
    return Dim(name, "fixed", value=_finite(param.check(_maybe_num(spec, param), where), param, where))


def _finite(value: Any, param: Param, where: str) -> Any:
    """NaN and infinity pass the model's range checks (comparisons are false): reject them here."""
    if isinstance(value, float) and not math.isfinite(value):
        raise UserError(f"{where}{param.name}={value} is not a number; allowed: {param.allowed_text}")
    return value


def _maybe_num(v: Any, param: Param) -> Any:
    """YAML reads ``16`` as int; a float parameter accepts it."""
    if param.kind == "float" and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    return v


def check_metric(metric: str, model: Model, workloads: list[Workload], where: str) -> str:
    """Validate a metric path: ``total.KEY`` or ``layers.NAME.KEY``."""
    known = model.metric_names()
    head, _, rest = metric.partition(".")
    if head == "total" and rest in known["total"]:
        return metric
    if head == "layers":
        lname, _, key = rest.rpartition(".")
        layer_names = [layer.name for wl in workloads for layer in wl.layers]
        if lname not in layer_names:
            raise UserError(f"{where}unknown layer '{lname}' in '{metric}'; allowed: {allowed(layer_names)}")
        if key not in known["layer"]:
            raise UserError(f"{where}unknown layer metric '{key}' in '{metric}'; allowed: {allowed(known['layer'])}")
        return metric
    opts = [f"total.{k}" for k in known["total"]] + ["layers.NAME.KEY"]
    raise UserError(f"{where}unknown metric '{metric}'; allowed: {', '.join(opts)}")


def _validated(cls, data: Any, where: str, name_keys: bool = True):
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{where}{pydantic_message(exc, cls.model_fields if name_keys else None)}") from None


def _sampler(spec: Any, where: str) -> tuple[str | None, int | None, dict[str, Any]]:
    """``sampler: NAME`` or ``sampler: {name, seed, options}``."""
    w = f"{where}sampler: "
    if spec is None:
        return None, None, {}
    if isinstance(spec, str):
        if spec not in SAMPLERS:
            raise UserError(f"{w}unknown sampler '{spec}'; allowed: {allowed(SAMPLERS)}")
        return spec, None, {}
    if isinstance(spec, dict):
        if spec.get("name") is not None and spec["name"] not in SAMPLERS:
            raise UserError(f"{w}unknown sampler '{spec['name']}'; allowed: {allowed(SAMPLERS)}")
        s = _validated(SamplerSpec, spec, w)
        return s.name, s.seed, s.options
    raise UserError(f"{w}give a name ({allowed(SAMPLERS)}) or {{name, seed, options}}")


def _objective(o: Any, i: int, model: Model, wls: list[Workload], where: str) -> Objective:
    w = f"{where}objectives.{i}: "
    if isinstance(o, str):
        o = ObjectiveSpec(metric=o)
    elif isinstance(o, dict) and "metric" in o:
        o = _validated(ObjectiveSpec, o, w)
    elif isinstance(o, dict) and len(o) == 1:
        ((metric, direction),) = o.items()
        if direction not in ("minimize", "maximize"):
            raise UserError(f"{w}direction '{direction}' for {metric}; allowed: minimize, maximize")
        o = ObjectiveSpec(metric=str(metric), direction=direction)
    else:
        raise UserError(f"{w}write 'METRIC: minimize|maximize', 'METRIC', or {{metric, direction}}")
    return Objective(check_metric(o.metric, model, wls, w), o.direction)


def _constraint(c: Any, i: int, model: Model, wls: list[Workload], where: str) -> Constraint:
    w = f"{where}constraints.{i}: "
    if isinstance(c, str):
        m = _CONSTRAINT_RE.match(c)
        if not m:
            raise UserError(f"{w}'{c}' is not 'METRIC <= BOUND' or 'METRIC >= BOUND'")
        try:
            c = ConstraintSpec(metric=m.group(1), op=m.group(2), bound=float(m.group(3)))
        except (ValueError, ValidationError):
            raise UserError(f"{w}'{c}': the bound must be a finite number") from None
    elif isinstance(c, dict):
        c = _validated(ConstraintSpec, c, w)
    else:
        raise UserError(f"{w}write 'METRIC <= BOUND', 'METRIC >= BOUND' or {{metric, op, bound}}")
    return Constraint(check_metric(c.metric, model, wls, w), c.op, c.bound)

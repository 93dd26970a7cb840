"""Declared parameters of a model and the arrays of design points built from them.

A *design point* is one value per parameter. A batch of ``P`` points is a
:data:`Points` mapping: parameter name -> numpy array of length ``P``
(int64, float64, bool, or object for string choices). Every model evaluates
batches; a single point is a batch of one, so the scalar and batch paths are
one code path and give identical numbers.
"""

from __future__ import annotations

import math

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from workloads.errors import UserError, allowed

Points = dict[str, np.ndarray]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One parameter: type, default, allowed range or choices, unit, doc.

    ``knob=True`` marks a mapping knob (how a workload is mapped) rather than
    a hardware parameter; both are searchable the same way.
    """

    name: str
    kind: Literal["int", "float", "choice", "bool"]
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    unit: str = ""
    doc: str = ""
    knob: bool = False

    def __post_init__(self) -> None:
        # the bounds as numbers for :meth:`check`'s fast path (None: unbounded); not fields (eq, repr, hash)
        object.__setattr__(self, "_lo", -math.inf if self.low is None else self.low)
        object.__setattr__(self, "_hi", math.inf if self.high is None else self.high)
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"param {self.name}: choice without choices")
        self.check(self.default, "default")

    @property
    def allowed_text(self) -> str:
        if self.kind == "choice":
            return allowed(self.choices)
        if self.kind == "bool":
            return "true, false"
        return f"{_fmt(self.low)}..{_fmt(self.high)}"

    def parse(self, text: str, where: str = "") -> Any:
        """Convert a command-line string (``--set key=value``) and check it."""
        if self.kind == "bool":
            low = text.strip().lower()
            if low in _TRUE | _FALSE:
                return self.check(low in _TRUE, where)
        elif self.kind == "choice":
            for c in self.choices:
                if str(c) == text.strip():
                    return c
        else:
            cast = int if self.kind == "int" else float
            try:
                return self.check(cast(text), where)
            except ValueError:
                pass
        raise UserError(f"{where}{self.name}={text!r} is not valid; allowed: {self.allowed_text}")

    def check(self, value: Any, where: str = "") -> Any:
        """Return ``value`` coerced to this parameter's type, or raise UserError."""
        t = type(value)  # the common case first: a Python number of the right kind within bounds (a study's trial)
        if (t is float and self.kind == "float") or (t is int and self.kind == "int"):
            if self._lo <= value <= self._hi and (t is int or math.isfinite(value)):
                return value
        if self.kind == "choice":
            for c in self.choices:
                if value == c and type(value) is not bool:
                    return c
            raise self._bad(value, where)
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise self._bad(value, where)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise self._bad(value, where)
        if not math.isfinite(float(value)):  # NaN and inf: no parameter takes them
            raise self._bad(value, where)
        if self.kind == "int":
            if float(value) != int(value):
                raise self._bad(value, where)
            value = int(value)
        else:
            value = float(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise self._bad(value, where)
        return value

    def _bad(self, value: Any, where: str) -> UserError:
        """The one-line error for an invalid ``value`` (built only when raised: checks run per trial)."""
        return UserError(f"{where}{self.name}={value!r} is not valid; allowed: {self.allowed_text}")

    def dtype(self):
        if self.kind == "int":
            return np.int64
        if self.kind == "float":
            return np.float64
        if self.kind == "bool":
            return np.bool_
        if all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in self.choices):
            return np.int64
        if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in self.choices):
            return np.float64
        return object


def _fmt(x: float | None) -> str:
    if x is None:
        return "inf"
    return str(int(x)) if float(x).is_integer() else str(x)


class ParamSet:
    """The ordered parameters of a model, with validation and batching helpers."""

    def __init__(self, params: Sequence[Param], owner: str):
        self.params = tuple(params)
        self.owner = owner
        self.by_name = {p.name: p for p in self.params}
        self._dtypes = tuple(p.dtype() for p in self.params)
        # :meth:`_stack_one`: the parameters of each dtype, in order (one array per dtype), and where each sits
        names: dict[Any, list[str]] = {}
        slots = []
        for p, dt in zip(self.params, self._dtypes):
            group = names.setdefault(dt, [])
            slots.append((list(names).index(dt), len(group)))
            group.append(p.name)
        self._blocks = tuple((dt, tuple(group)) for dt, group in names.items())
        self._slots = tuple(slots)
        self.names = tuple(p.name for p in self.params)
        if len(self.by_name) != len(self.params):
            raise ValueError(f"{owner}: duplicate parameter names")

    def __iter__(self):
        return iter(self.params)

    def __contains__(self, name: str) -> bool:
        return name in self.by_name

    def get(self, name: str, where: str = "") -> Param:
        try:
            return self.by_name[name]
        except KeyError:
            raise UserError(
                f"{where}unknown parameter '{name}' for {self.owner}; allowed: {allowed(self.by_name)}"
            ) from None

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
        """All parameters, defaults filled in, every value checked, derived values filled (:meth:`derive`)."""
        return self.derive(self.checked(values, where))

    def checked(self, values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
        """All parameters, defaults filled in, every value checked (no derived values yet)."""
        out = self.defaults()
        for key, value in values.items():
            out[key] = self.get(key, where).check(value, where)
        return out

    def derive(self, row: dict[str, Any]) -> dict[str, Any]:
        """Fill values a model derives from others in a checked row (e.g. an ``auto`` default that depends on
        another parameter); here none. Overridden by parameter sets that have such values."""
        return row

    def parse_sets(self, items: Iterable[str], where: str = "--set ") -> dict[str, Any]:
        """Parse ``key=value`` strings from the command line."""
        out: dict[str, Any] = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep:
                raise UserError(f"{where}'{item}' is not key=value")
            out[key.strip()] = self.get(key.strip(), where).parse(value, where)
        return out

    def points(self, rows: Sequence[Mapping[str, Any]], where: str = "") -> Points:
        """A batch of design points from a list of (partial) parameter dicts."""
        return self.stack([self.resolve(r, where) for r in rows])

    def stack(self, full: Sequence[Mapping[str, Any]]) -> Points:
        """A batch of design points from rows already resolved (:meth:`resolve`: every parameter, checked)."""
        if len(full) == 1:  # one point (a study's trial): every int and every float parameter in one array each
            return self._stack_one(full[0])
        return {p.name: np.array([r[p.name] for r in full], dtype=dt) for p, dt in zip(self.params, self._dtypes)}

    def _stack_one(self, row: Mapping[str, Any]) -> Points:
        """:meth:`stack` of one row: the parameters of each dtype (int64, float64, bool, object) as one-element
        slices of one array of that dtype (one numpy call per dtype instead of one per parameter; the same values
        and dtypes)."""
        arrays = [np.array([row[name] for name in group], dtype=dt) for dt, group in self._blocks]
        return {p.name: arrays[b][i:i + 1] for p, (b, i) in zip(self.params, self._slots)}

    def random_rows(self, n: int, rng: np.random.Generator, fixed: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """``n`` random design points over the declared ranges (log-uniform for wide ranges).

        For tests and benchmarks that must cover a model's whole space,
        infeasible corners included.
        """
        fixed = dict(fixed or {})
        cols: dict[str, list[Any]] = {}
        for p in self.params:
            if p.name in fixed:
                cols[p.name] = [fixed[p.name]] * n
            elif p.kind in ("choice", "bool"):
                vals = list(p.choices) if p.kind == "choice" else [False, True]
                cols[p.name] = [vals[i] for i in rng.integers(0, len(vals), n)]
            else:
                lo, hi = float(p.low), float(p.high)
                if lo > 0 and hi / lo > 100:
                    x = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
                else:
                    x = rng.uniform(lo, hi, n)
                cols[p.name] = [int(min(max(round(v), lo), hi)) for v in x] if p.kind == "int" else [float(v) for v in x]
        return [{k: v[i] for k, v in cols.items()} for i in range(n)]

    def point(self, pts: Points, i: int) -> dict[str, Any]:
        """Design point ``i`` of a batch as plain Python values."""
        return {p.name: _py(pts[p.name][i]) for p in self.params}


def _py(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def batch_size(pts: Points) -> int:
    return len(next(iter(pts.values()))) if pts else 1

"""Helpers for models that cost every layer of a workload at once, as arrays over (layers x points).

A model turns its workload into integer columns (one row per layer, shape ``(rows, 1)``) once per
layer tuple, and broadcasts them against the per-point parameter arrays (shape ``(points,)``):
one numpy expression then costs every layer of every point, instead of a Python loop over layers
(issue 15). Elementwise arithmetic gives the very bits the per-layer loop gave, as long as each
expression keeps the loop's order of operations.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from itertools import chain
from operator import call, is_

import numpy as np

from workloads.layers import Layer

from .result import LayerBatch, _float_seq


def column(values: Iterable[int]) -> np.ndarray:
    """Integers as a read-only ``(rows, 1)`` int64 column (shared by every evaluation of a workload)."""
    col = np.array(list(values), dtype=np.int64).reshape(-1, 1)
    col.setflags(write=False)
    return col


def full(x, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` as a float array of exactly ``shape`` (a copy only when it must be broadcast or cast)."""
    x = np.asarray(x, dtype=float)
    return x if x.shape == shape else np.broadcast_to(x, shape).copy()


def stack_rows(blocks: Sequence, rows: Sequence[int], n: int, dtype=None) -> np.ndarray:
    """Blocks of ``rows[i]`` layers each (arrays broadcastable to (rows[i], n)) stacked into one (layers x points)
    array (of ``dtype``; default: the blocks' common type)."""
    out = np.empty((sum(rows), n), dtype=dtype or np.result_type(*blocks))
    start = 0
    for block, r in zip(blocks, rows):
        out[start:start + r] = block
        start += r
    return out


def groups(*keys: np.ndarray) -> list[tuple[tuple, np.ndarray | slice]]:
    """Distinct combinations of per-point keys (Python values) and the points that have each.

    The selector is ``slice(None)`` when every point shares one combination (a single point,
    or a study with fixed node and width), so callers index without copying.
    """
    cols = [np.asarray(k).tolist() for k in keys]
    combos = sorted(set(zip(*cols)))
    if len(combos) == 1:
        return [(combos[0], slice(None))]
    arrays = [np.asarray(k) for k in keys]
    return [(combo, np.logical_and.reduce([a == v for a, v in zip(arrays, combo)])) for combo in combos]


def per_node(fn, values, nodes) -> np.ndarray:
    """``fn(values of the points at node, node)`` for each distinct technology node of the points (arrays over
    points): e.g. SRAM energy per byte, which takes one node per call."""
    values = np.asarray(values)
    out = np.empty(values.shape)
    for (node,), sel in groups(nodes):
        out[sel] = fn(values[sel], int(node))
    return out


def _content(a: np.ndarray) -> tuple:
    """An array's values as a hashable key (object arrays by their values, not their pointers)."""
    a = np.asarray(a)
    return (a.dtype.str, a.shape, tuple(a.tolist()) if a.dtype == object else a.tobytes())


class PointsMemo:
    """``fn(pts)`` for the last few distinct point sets, keyed by the values of the parameters ``names``.

    One evaluation asks a model for the same per-point numbers several times (feasibility, layers, totals:
    e.g. ReNA's FPGA resources); the memo answers the repeats. The key is the parameters' values, so a point
    set changed in place is a new key; the arrays handed out are read-only (shared by the repeats). ``fn``
    must depend on ``names`` only and return a dict of arrays. Batches above ``max_points`` are not kept.
    """

    def __init__(self, fn: Callable[[dict], dict[str, np.ndarray]], names: Sequence[str], size: int = 8,
                 max_points: int = 1 << 16) -> None:
        self.fn, self.names, self.size, self.max_points = fn, tuple(names), size, max_points
        self.memo: dict[tuple, dict[str, np.ndarray]] = {}

    def __call__(self, pts: dict) -> dict[str, np.ndarray]:
        first = pts[self.names[0]]
        if (first.size if type(first) is np.ndarray else np.size(first)) > self.max_points:
            return self.fn(pts)
        key = tuple(_content(pts[k]) for k in self.names)
        hit = self.memo.get(key)
        if hit is None:
            hit = dict(self.fn(pts))
            for k, v in hit.items():
                hit[k] = v = np.asarray(v)
                v.flags.writeable = False
            if len(self.memo) >= self.size:
                del self.memo[next(iter(self.memo))]  # the oldest entry
            self.memo[key] = hit
        return hit


def layer_batches(layers: Sequence[Layer], row: Sequence[int], n: int, metrics: dict[str, np.ndarray],
                  states: dict[str, np.ndarray], labels: dict[str, np.ndarray] | None = None,
                  feasible: np.ndarray | None = None, reason: np.ndarray | None = None,
                  row_keys: Sequence[Sequence[str]] | None = None,
                  ready: Callable[[Sequence[str]], None] | None = None) -> list[LayerBatch | None]:
    """One :class:`LayerBatch` per layer whose ``row`` is >= 0 (None for the others), holding row ``r``
    of the (rows x points) arrays: views, each layer its own row (writable ``feasible`` / ``reason``
    rows, as :meth:`LayerBatch.infeasible` updates them in place). The ``metrics``, ``states`` and
    ``labels`` dicts are built on first access (:class:`_RowLayerBatch`); until some layer builds its
    ``metrics``, sums over the layers read the (rows x points) arrays whole (:meth:`_SharedRows.cube`),
    as a study's one-point path does. ``row_keys[r]``: the metric keys of row ``r``, in its dict's order
    (default: every key of ``metrics``); ``labels`` may hold ``fused_into`` (else a column of None) and
    sequences of per-row label objects. Change a layer's metrics through its dict (``lb.metrics[key] = ...``,
    which builds it), never by assigning ``lb.metrics`` itself: the sums would not see it. ``ready(keys)``, if
    given, is called before the values of metric keys ``keys`` (states as ``state:NAME``) are first read: the
    arrays given may be written then (a model that fills a key's array only when some step reads it)."""
    rows = max(row, default=-1) + 1
    shared = _SharedRows(n, rows, dict(metrics), states, labels or {}, row_keys)
    shared.feasible, shared.reason = feasible, reason
    if ready is not None:
        shared.ready = ready
    new = object.__new__
    out: list[LayerBatch | None] = []
    for layer, r in zip(layers, row):
        if r < 0:
            out.append(None)
            continue
        lb = new(_RowLayerBatch)  # LayerBatch.__init__'s fields: layer here, the others from the shared rows (lazy)
        lb.__dict__.update(layer=layer, _row=r, _shared=shared)
        out.append(lb)
    made = [lb for lb in out if lb is not None]
    # weak references: each layer holds its shared rows, so strong ones back would be a reference cycle per
    # call, freed (with every row array) only by a full garbage collection
    shared.batches = [weakref.ref(lb) for lb in made]
    order = [lb._row for lb in made]
    if len(set(order)) != rows:  # some row is not one layer's: the arrays are not the layers' (never seen)
        shared.split = True
    elif order != list(range(rows)):
        shared.order, shared.inverse = np.array(order), np.argsort(order)
    return out


def point_batches(layers: Sequence[Layer], row: Sequence[int], columns: Sequence[Sequence[float]],
                  metric_keys: Sequence[str], state_keys: Sequence[str], labels: dict[str, np.ndarray] | None = None,
                  feasible: np.ndarray | None = None, reason: np.ndarray | None = None) -> list[LayerBatch | None]:
    """:func:`layer_batches` of one point whose values are Python numbers: ``columns[i]`` holds key i's values over
    the rows, in row order, for the keys ``metric_keys`` then ``state_keys``. The (keys x rows x 1) array the layers
    hold is written from them when some value is first read (:meth:`_SharedRows._ready`; a study's trial reads
    none), and sums over the layers add the Python numbers themselves (:meth:`_SharedRows.point_columns`): the
    values the array would hold (a Python float is a float64; an int converts as numpy converts it)."""
    rows = max(row, default=-1) + 1
    nm = len(metric_keys)
    block = np.empty((nm + len(state_keys), rows, 1))
    out = layer_batches(layers, row, 1, dict(zip(metric_keys, block)), dict(zip(state_keys, block[nm:])), labels,
                        feasible, reason)
    shared = next((lb._shared for lb in out if lb is not None), None)
    if shared is not None:
        shared.pending = [(block, columns)]
        shared.point_values = dict(zip(metric_keys, columns))
    else:  # no layer holds a row: written now (nothing will ask)
        _write(block, columns)
    return out


def _write(target: np.ndarray, columns: Sequence[Sequence[float]]) -> None:
    """Write ``columns`` (one sequence of Python numbers per plane, over the rows) into the C-ordered ``target``."""
    target.reshape(-1)[:] = np.fromiter(chain.from_iterable(columns), float, target.size)


def dict_keys(lb: LayerBatch, part: str) -> Sequence[str]:
    """The keys of ``lb``'s ``part`` dict (``metrics``, ``states`` or ``labels``) in its order; for a layer of
    :func:`layer_batches`, read from the shared rows where that dict is not built yet (it is not built for this)."""
    d = lb.__dict__
    shared = d.get("_shared")
    if shared is None or part in d:
        return getattr(lb, part)
    if part == "metrics":
        return shared.keys_of(d["_row"])
    if part == "states":
        return shared.states
    return list(shared.labels) if "fused_into" in shared.labels else ["fused_into", *shared.labels]


def fused_into_of(lb: LayerBatch) -> np.ndarray | None:
    """``lb.labels["fused_into"]``, or None where it is surely all None (a :func:`layer_batches` layer whose call
    gave no such label and whose labels dict is not built: nothing to read)."""
    d = lb.__dict__
    shared = d.get("_shared")
    if shared is not None and "labels" not in d and "fused_into" not in shared.labels:
        return None
    return lb.labels["fused_into"]


def point_columns(rows: Sequence[Sequence[float]], width: int) -> np.ndarray:
    """One point's per-layer values (``rows[i]``: the ``width`` values of layer i, Python numbers) as one
    (values x layers x 1) float array: one (layers x 1) column per value, views of a single array."""
    block = np.fromiter(chain.from_iterable(rows), float, len(rows) * width)
    return block.reshape(len(rows), width).T.reshape(width, len(rows), 1)


#: values from which :class:`_SharedRows` writes a stack with a zero layer in place (one copy of the values, not a
#: stack and a concatenation); fewer (one design point's) as a stack and a concatenation: fewer numpy calls
IN_PLACE_FROM = 4096


class _SharedRows:
    """The (rows x points) metric, state and label arrays of one :func:`layer_batches` call, split into row
    views once, when a layer first asks (its ``fused_into`` labels: one object array, made then)."""

    #: True once the metrics are split into the layers' dicts (they may then change): :meth:`whole` gives up
    split = False
    #: the rows of the layers in their order, and its inverse permutation (None: rows are in layer order)
    order: np.ndarray | None = None
    inverse: np.ndarray | None = None

    def __init__(self, n: int, rows: int, metrics: dict[str, np.ndarray], states: dict[str, np.ndarray],
                 labels: dict, row_keys: Sequence[Sequence[str]] | None = None) -> None:
        self.n, self.rows, self.metrics, self.states, self.labels = n, rows, metrics, states, labels
        self.row_keys = row_keys
        self.added: list[str] = []  # keys :meth:`add_metrics` gave every row (after a row's own keys)
        self.touched: set[str] = set()  # ``feasible`` / ``reason`` once some layer read or set its own

    #: the (rows x points) ``feasible`` and ``reason`` arrays given to :func:`layer_batches` (None: all feasible)
    feasible: np.ndarray | None = None
    reason: np.ndarray | None = None
    #: :func:`layer_batches`' ``ready``: called with metric keys (states as ``state:NAME``) before their values are
    #: read (None: the arrays hold them already)
    ready: Callable[[Sequence[str]], None] | None = None

    def __getstate__(self) -> dict:
        """Copied (``copy.deepcopy``) with every value written first and no hook: a copy's arrays are copies, which a
        later write through :attr:`ready` would not reach."""
        self._ready(self.metrics)
        self._ready(self.states, "state:")
        state = dict(self.__dict__)
        state.pop("ready", None)
        return state

    #: one point's values by metric key (:func:`point_batches`, :meth:`add_point_metrics`): Python numbers over the
    #: rows, in row order, what the key's array holds (or will hold once :attr:`pending` is written); None: none
    point_values: dict[str, Sequence[float]] | None = None
    #: (array, columns) pairs of :attr:`point_values` not written into their arrays yet (None: none)
    pending: list[tuple[np.ndarray, Sequence[Sequence[float]]]] | None = None

    def _ready(self, keys, prefix: str = "") -> None:
        """Tell :attr:`ready` that the values of ``keys`` (metrics; states with ``prefix`` ``state:``) are read;
        first write the arrays of one point's values not written yet (all of them: a first read, one numpy call
        per array)."""
        if self.pending:
            pending, self.pending = self.pending, None
            for target, columns in pending:
                _write(target, columns)
        if self.ready is not None:
            self.ready([prefix + k for k in keys] if prefix else list(keys))

    @cached_property
    def feasible_rows(self) -> list[np.ndarray]:
        """Each row's writable ``feasible`` view (made when a layer first asks)."""
        return list(np.ones((self.rows, self.n), dtype=bool) if self.feasible is None else self.feasible)

    @cached_property
    def reason_rows(self) -> list[np.ndarray]:
        """Each row's writable ``reason`` view."""
        return list(np.full((self.rows, self.n), "", dtype=object) if self.reason is None else self.reason)

    @cached_property
    def metric_rows(self) -> dict[str, list[np.ndarray]]:
        self._ready(self.metrics)
        self.split = True
        return {k: list(a) for k, a in self.metrics.items()}

    def keys_of(self, r: int) -> Sequence[str]:
        """Row ``r``'s metric keys in its dict's order."""
        if self.row_keys is None:
            return list(self.metrics)
        own = self.row_keys[r]
        return [*own, *(k for k in self.added if k not in own)] if self.added else own

    def _every_row_has(self, keys: Sequence[str]) -> bool:
        """Whether every row has each metric of ``keys`` (its own key, or one :meth:`add_metrics` gave every row)."""
        return self.row_keys is None or all(k in self._common_keys or k in self.added for k in keys)

    @cached_property
    def _common_keys(self) -> set[str]:
        """The metric keys every row has."""
        if self.row_keys is None:
            return set(self.metrics)
        return set(self.row_keys[0]).intersection(*self.row_keys[1:]) if self.row_keys else set()

    @cached_property
    def state_rows(self) -> list[tuple[str, list[np.ndarray]]]:
        self._ready(self.states, "state:")
        return [(k, list(a)) for k, a in self.states.items()]

    @cached_property
    def label_rows(self) -> list[tuple[str, list]]:
        rows = [(k, list(a)) for k, a in self.labels.items()]
        if "fused_into" in self.labels:
            return rows
        return [("fused_into", list(np.full((self.rows, self.n), None, dtype=object)))] + rows

    def whole(self, layers: Sequence) -> bool:
        """Whether ``layers`` are this call's layers, in their order, and no layer's ``metrics`` dict exists
        yet (so the (rows x points) arrays are what the layers hold; a ``metrics`` dict is only made by
        the cached property, which sets :attr:`split`)."""
        batches = self.batches
        if self.split or len(layers) != len(batches):
            return False
        # every reference still alive and naming the very layer at that place (`is`, element by element, in C)
        return all(map(is_, map(call, batches), layers))

    def point_columns(self, layers: Sequence, keys: Sequence[str]) -> list[Sequence[float]] | None:
        """One point's values of the metrics ``keys`` over ``layers``, in their order, as Python numbers
        (:attr:`point_values`): what the layers' arrays hold; None where :meth:`whole` is False, the rows are not in
        the layers' order or some key has no such values."""
        values = self.point_values
        if values is None or self.order is not None or not self.whole(layers):
            return None
        try:
            return [values[k] for k in keys]
        except KeyError:
            return None

    def point_sums(self, layers: Sequence, keys: Sequence[str], from_zero: bool = False) -> list[float] | None:
        """The sums over ``layers`` of one point's metrics ``keys`` (:meth:`point_columns`), layer after layer from
        the first (``from_zero``: from 0.0): the additions :func:`archmodels.result.row_sum` makes on the arrays
        (-0.0 + x is x for every double), as Python floats; None where :meth:`point_columns` is None."""
        columns = self.point_columns(layers, keys)
        if columns is None:
            return None
        start = 0.0 if from_zero else -0.0
        return [_float_seq(c, start) for c in columns]

    def add_point_metrics(self, layers: Sequence, **columns: Sequence[float]) -> bool:
        """:meth:`add_metrics` of one point's values (Python numbers over ``layers``, in their order): each key's
        (rows x 1) array written when some value is first read; False (nothing set) where :meth:`point_columns`
        would be None."""
        if self.point_values is None or self.order is not None or not self.whole(layers):
            return False
        pending = self.pending if self.pending is not None else []
        for k, col in columns.items():
            a = np.empty((self.rows, 1))
            self._set_metric(k, a)
            pending.append((a, (col,)))
            self.point_values[k] = col
        self.pending = pending
        return True

    def untouched(self, layers: Sequence, field: str) -> bool:
        """Whether ``layers`` are this call's layers (:meth:`whole`) and none has read or set its ``field``
        (``feasible`` or ``reason``): the (rows x points) array given is then what every layer holds."""
        return field not in self.touched and self.whole(layers)

    def all_feasible(self, layers: Sequence) -> bool | None:
        """Whether every one of ``layers`` is feasible at every point, read from the array given (no row views
        made); None where :meth:`untouched` is False."""
        if not self.untouched(layers, "feasible"):
            return None
        if self.feasible is None:
            return True
        return bool(self.feasible.all() if type(self.feasible) is np.ndarray else np.all(self.feasible))

    def first_infeasible(self, layers: Sequence) -> tuple[int, str] | bool | None:
        """One point's first infeasible layer of ``layers``: (its index, its reason), or False where every layer is
        feasible, read from the arrays given (no row views made); None where the rows are not in the layers' order,
        there is more than one point, or :meth:`untouched` is False for ``feasible`` or ``reason``."""
        if self.n != 1 or self.order is not None or "reason" in self.touched or not self.untouched(layers, "feasible"):
            return None
        if self.feasible is None:
            return False
        flags, why = self.feasible, self.reason
        if type(flags) is not np.ndarray or flags.shape != (self.rows, 1) or \
                (why is not None and (type(why) is not np.ndarray or why.shape != (self.rows, 1))):
            return None
        try:
            r = flags[:, 0].tolist().index(False)
        except ValueError:
            return False
        return r, ("" if why is None else why[r, 0])

    def feasible_stack(self, layers: Sequence) -> np.ndarray | None:
        """The ``feasible`` flags of ``layers`` as one (layers x points) bool array, layers in their order (a fresh
        array); None where :meth:`whole` is False or some layer's ``feasible`` was read or set (it may differ)."""
        if not self.untouched(layers, "feasible"):
            return None
        if self.feasible is None:
            return np.ones((self.rows, self.n), dtype=bool)
        out = np.array(self.feasible, dtype=bool)
        if out.shape != (self.rows, self.n):
            return None
        return out if self.order is None else out[self.order]

    def cube(self, layers: Sequence, keys: Sequence[str], from_zero: bool = False) -> np.ndarray | None:
        """The metrics ``keys`` of ``layers`` as one float (keys x layers x points) array, layers in their
        order (a zero layer first if ``from_zero``), straight from the (rows x points) arrays; None where
        :meth:`whole` is False or a key is not a float array of that shape."""
        if not self.whole(layers):
            return None
        if not self._every_row_has(keys):
            return None  # some layer has no such metric (its dict would raise KeyError)
        return self._stack(self.metrics, keys, 1 if from_zero else 0)

    def planes(self, layers: Sequence, keys: Sequence[str]) -> np.ndarray | None:
        """The metrics ``keys`` of ``layers`` as a (keys x layers x points) view, no copy, where their (rows x points)
        arrays are consecutive planes of one C-ordered array in the order of ``keys`` (EMAX's results cube) and
        ``layers`` are this call's in row order; else None. The view holds what :meth:`cube` would copy, in a
        layout whose rows (keys x points for one layer) numpy adds as it adds the copy's."""
        if self.order is not None or not self.whole(layers):
            return None
        if not self._every_row_has(keys):
            return None
        arrays = self._arrays(self.metrics, keys)
        if not arrays:
            return None
        base = arrays[0].base
        if type(base) is not np.ndarray or base.ndim != 3 or base.shape[1:] != (self.rows, self.n) or \
                base.dtype != np.float64 or not base.flags.c_contiguous:
            return None
        plane = self.rows * self.n * 8
        at = base.ctypes.data
        start, rest = divmod(arrays[0].ctypes.data - at, plane)
        if rest or not all(a.base is base and a.ctypes.data == at + (start + i) * plane
                           for i, a in enumerate(arrays)):
            return None
        self._ready(keys)
        return base[start:start + len(keys)]

    def metric_row(self, r: int, key: str) -> np.ndarray:
        """Row ``r``'s metric ``key`` (KeyError if the row has none): the view its dict would hold, for a layer
        whose dict is not built (:func:`archmodels.result.metric_of`)."""
        if self.row_keys is not None and key not in self.keys_of(r):
            raise KeyError(key)
        self._ready((key,))
        return self.metrics[key][r]

    def gather(self, keys: Sequence[str], rows: Sequence[int]) -> np.ndarray:
        """The metrics ``keys`` of ``rows`` (raw row indices) as one (keys x rows x points) float array: what the
        rows' dicts would hold, for layers whose dicts are not built (where :meth:`has_arrays`)."""
        self._ready(keys)
        return np.array([self.metrics[k] for k in keys])[:, rows]

    def has_arrays(self, keys: Sequence[str], n: int) -> bool:
        """Whether every row has the metrics ``keys`` as rows of float (rows x ``n``) arrays (so :meth:`gather`
        gives the values the layers' dicts would hold, for layers whose dicts are not built)."""
        shape = (self.rows, n)
        if not self._every_row_has(keys):
            return False
        arrays = [self.metrics.get(k) for k in keys]
        return all(type(a) is np.ndarray and a.shape == shape and a.dtype == np.float64 for a in arrays)

    def _arrays(self, source: dict[str, np.ndarray], keys: Sequence[str]) -> list[np.ndarray] | None:
        """``source[k]`` for ``keys``; None where some key is missing or not a float array of the (rows x points)
        shape."""
        shape = (self.rows, self.n)
        arrays = [source.get(k) for k in keys]
        if any(type(a) is not np.ndarray or a.shape != shape or a.dtype != np.float64 for a in arrays):
            return None
        return arrays

    def _stack(self, source: dict[str, np.ndarray], keys: Sequence[str], zeros: int = 0) -> np.ndarray | None:
        """``source[k]`` for ``keys`` as one (keys x layers x points) float array, layers in their order, after
        ``zeros`` layers of zeros; None where some key is missing or not a float array of the (rows x points)
        shape."""
        arrays = self._arrays(source, keys)
        if arrays is None:
            return None
        self._ready(keys, "" if source is self.metrics else "state:")
        if self.order is not None:  # (rows not in the layers' order: never seen)
            cube = np.array(arrays).take(self.order, axis=1)
            return np.concatenate((np.zeros((len(keys), zeros, self.n)), cube), axis=1) if zeros else cube
        if not zeros or len(keys) * self.rows * self.n < IN_PLACE_FROM:
            cube = np.array(arrays)  # every array has that one shape (np.stack costs 4x more)
            return np.concatenate((np.zeros((len(keys), zeros, self.n)), cube), axis=1) if zeros else cube
        # the zero layers and each key's rows written in place: one copy of the values (a stack, then a
        # concatenation with the zeros, copied them twice)
        cube = np.empty((len(keys), zeros + self.rows, self.n))
        cube[:, :zeros] = 0.0
        for plane, a in zip(cube, arrays):
            plane[zeros:] = a
        return cube

    def add_metrics(self, layers: Sequence, **arrays: np.ndarray) -> bool:
        """Set metrics of every layer at once: (layers x points) arrays, rows in the layers' order (replacing
        a key keeps its place, as in the layers' dicts); False (nothing set) where :meth:`whole` is False."""
        if not self.whole(layers):
            return False
        values = self.point_values
        for k, a in arrays.items():
            self._set_metric(k, a if self.order is None else a[self.inverse])
            if values is not None:
                values.pop(k, None)  # the array is the key's value now
        return True

    def _set_metric(self, k: str, a: np.ndarray) -> None:
        """Set every row's metric ``k`` to the (rows x points) array ``a`` (a new key after the rows' own)."""
        if k not in self.metrics or (self.row_keys is not None and k not in self._common_keys and k not in self.added):
            self.added.append(k)
        self.metrics[k] = a

    def states_stack(self, layers: Sequence, names: Sequence[str], from_zero: bool = False) -> np.ndarray | None:
        """The states ``names`` of ``layers`` as one float ((layers x names) x points) array, layer after
        layer, a layer's states in the order of ``names`` (a zero row first if ``from_zero``); None where
        :meth:`whole` is False or some state is not a float array of the (rows x points) shape."""
        if not self.whole(layers) or "state_rows" in self.__dict__:  # a layer's states dict exists: it may differ
            return None
        arrays = self._arrays(self.states, names)
        if arrays is None:
            return None
        self._ready(names, "state:")
        if len(names) * self.rows * self.n < IN_PLACE_FROM:  # (a few values: two numpy calls fewer)
            cube = np.array(arrays) if self.order is None else np.array(arrays).take(self.order, axis=1)
            rows = cube.transpose(1, 0, 2).reshape(-1, self.n)
            return np.concatenate((np.zeros((1, self.n)), rows)) if from_zero else rows
        lead = 1 if from_zero else 0
        out = np.empty((lead + self.rows * len(names), self.n))
        out[:lead] = 0.0
        by_layer = out[lead:].reshape(self.rows, len(names), self.n)  # (a view: each state written in place once)
        for j, a in enumerate(arrays):
            by_layer[:, j] = a if self.order is None else a[self.order]
        return out


class _RowField:
    """A layer's ``feasible`` or ``reason``: its row's writable view of the shared array, made when first read;
    assignable. Reading or setting it tells the shared rows (:attr:`_SharedRows.touched`), which then stop
    answering for the layers from the whole array."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.rows = name, f"{name}_rows"

    def __get__(self, lb, owner=None):
        if lb is None:
            return self
        d = lb.__dict__
        value = d.get(self.name)
        if value is None and "_shared" in d:
            shared = d["_shared"]
            shared.touched.add(self.name)
            value = d[self.name] = getattr(shared, self.rows)[d["_row"]]
        return value

    def __set__(self, lb, value) -> None:
        d = lb.__dict__
        if "_shared" in d:  # (a copy made by LayerBatch.__init__ has no shared rows)
            d["_shared"].touched.add(self.name)
        d[self.name] = value


class _RowLayerBatch(LayerBatch):
    """A :class:`LayerBatch` made by :func:`layer_batches`: its ``n``, ``feasible``, ``reason`` and its ``metrics``,
    ``states`` and ``labels`` are its row's views (put into dicts), each made on first access (then an ordinary
    attribute: assignable, mutable)."""

    _row: int
    _shared: _SharedRows

    @cached_property
    def n(self) -> int:  # type: ignore[override]
        return self._shared.n

    feasible = _RowField()  # type: ignore[assignment]
    reason = _RowField()  # type: ignore[assignment]

    @cached_property
    def metrics(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        r, shared = self._row, self._shared
        rows = shared.metric_rows
        return {k: rows[k][r] for k in shared.keys_of(r)}

    @cached_property
    def states(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        r = self._row
        return {k: v[r] for k, v in self._shared.state_rows}

    @cached_property
    def labels(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        r = self._row
        return {k: v[r] for k, v in self._shared.label_rows}

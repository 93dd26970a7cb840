"""EMAX batched results, twelfth round (issue 15): ``_Results.add`` writes each key's infeasible cells right after its
scatter (one pass over the key's row, not a second one at random places), and the feasibility and reasons by flat
position; a random batch's combinations (one point each) handed to ``_Groups.chunks`` without a list per point;
``layerarrays``' stacks with a zero layer written in place (``_SharedRows.cube(from_zero=True)``,
``states_stack(from_zero=True)``). Each compared with the general path (the code before this round) bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import model as em
from archmodels.emax.traffic import PlanTable
from archmodels import layerarrays
from archmodels.layerarrays import layer_batches
from workloads import load_workload

from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths9 import _VALUE

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reference_add(self, p, grp, layer_of, at, which, res, labels, plans) -> None:
    """``_Results.add`` as it was before this round (tenth round's code): the infeasible cells' NaN key by key first,
    then the scatters; feasibility and reasons by (layer, point)."""
    f_layer, f_k, f_into = [], [], []
    ran = None
    for i in range(self.nl):
        if self.names[i] is None:
            if p.count[i, 0] > 0:
                if ran is None:
                    names = em._all_metric_names()
                    ran = [k for k in names if k in res]
                    ran += [k for k in res if not k.startswith("state:") and k not in names]
                    for k in ran:
                        if k not in self.metrics:
                            self.metrics[k] = np.full((self.nl, self.n), np.nan)
                self.names[i] = ran
            else:
                self.names[i] = list(em._all_metric_names())
        into_i = p.fused_into[i]
        if into_i.count(None) < len(into_i):
            fused = [k for k, f in enumerate(into_i) if f is not None]
            f_layer += [i] * len(fused)
            f_k += fused
            f_into += [into_i[k] for k in fused]
    r_layer, r_k, r_why = p.missing
    if len(r_k):
        rp, cnt = grp.take(r_k)
        rl = np.repeat(r_layer, cnt)
        self.feasible[rl, rp] = False
        self.reason[rl, rp] = np.repeat(r_why, cnt)
        if not self.filled:
            flat_r = rl * self.n + rp
            cube = self.cube.reshape(len(self.cube), -1)
            for row in cube:
                row[flat_r] = np.nan
            self.done.reshape(-1)[flat_r] = True
    if f_k:
        fp, cnt = grp.take(np.array(f_k, dtype=np.int64))
        fl, into = np.repeat(np.array(f_layer, dtype=np.int64), cnt), np.repeat(em._objects(f_into), cnt)
        self.cube[:, fl, fp] = 0.0
        if not self.filled:
            self.done[fl, fp] = True
        for k in self.metrics.keys() - self.row.keys():
            self.metrics[k][fl, fp] = 0.0
        for k in em._TEXT_OWNERS:
            self.texts[k].fill(fl, fp, "-")
        self.labels["fused_into"][fl, fp] = into
        self.labels["mapping"][fl, fp] = np.array([f"fused into {f}" for f in into], dtype=object)
        for k in ("loop_order", "runner_up_lost"):
            self.labels[k][fl, fp] = "-"
    flat = layer_of * self.n + at
    to = em._scatter_index(flat, self.nl * self.n)
    in_cube = [k for k in res if k in self.row]
    cube = self.cube.reshape(len(self.cube), -1)
    for k in in_cube:
        cube[self.row[k]][to] = res[k]
    if not self.filled:
        if len(in_cube) < len(self.row):
            for k, j in self.row.items():
                if k not in res:
                    cube[j][to] = np.nan
        self.done.reshape(-1)[to] = True
    for k, v in res.items():
        if k not in self.row:
            (self.states[k[6:]] if k.startswith("state:") else self.metrics[k]).reshape(-1)[to] = v
    for k, v in labels.items():
        self.labels[k].reshape(-1)[to] = v
    if plans:
        tab = p.table
        texts_tab = PlanTable(tab.plan, tab.label, tab.src, ())
        for k, rows in plans.items():
            self.texts[k].put(which, layer_of, at, texts_tab, rows, flat)


def _results(arch: str, wl: str, rows: list[dict], add, chunk: int | None = None, fill_upto: int | None = None):
    """(the ``_Results`` of a batch of ``rows`` as ``batches`` reads it, the batch's contract dictionaries) with
    ``_Results.add`` = ``add``; the cube's cells no chunk wrote set to a sentinel first (they must all be written)."""
    m = get_model(arch)
    got = []
    real_init, real_batches = em._Results.__init__, em._Results.batches

    def init(self, nl, n):
        real_init(self, nl, n)
        if not self.filled:
            self.cube[...] = 12345.0  # (np.empty's garbage: any value must be overwritten)

    def batches(self, layers):
        out = real_batches(self, layers)
        got.append(self)
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em._Results, "add", add), mock.patch.object(em._Results, "__init__", init), \
            mock.patch.object(em._Results, "batches", batches), \
            mock.patch.object(em, "CUBE_FILL_UPTO", em.CUBE_FILL_UPTO if fill_upto is None else fill_upto), \
            mock.patch.dict(em.CHUNK_OF, {arch: chunk or em.CHUNK_OF.get(arch, em.CHUNK)}):
        r = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    assert len(got) >= 1
    return got[-1], [_dump(r.point(i)) for i in range(r.n)]


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint64)


def _assert_same_results(x, y) -> None:
    assert x.filled == y.filled
    assert np.array_equal(_bits(x.cube), _bits(y.cube))  # NaN payloads and -0.0 too
    assert sorted(x.metrics) == sorted(y.metrics)
    for k in x.metrics:
        assert np.array_equal(_bits(np.asarray(x.metrics[k], float)), _bits(np.asarray(y.metrics[k], float))), k
    assert x.names == y.names
    assert np.array_equal(x.feasible, y.feasible) and x.reason.tolist() == y.reason.tolist()
    assert x.done is None if y.done is None else np.array_equal(x.done, y.done)
    for k in x.labels:
        assert x.labels[k].tolist() == y.labels[k].tolist(), k
    for k in x.texts:
        a, b = x.texts[k], y.texts[k]
        assert a.fixed.tolist() == b.fixed.tolist() and np.array_equal(a.part, b.part) and np.array_equal(a.row, b.row)


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), mixed=st.booleans(),
       wl=st.sampled_from(["vgg16-conv", "alexnet", "lenet"]), small=st.booleans())
def test_results_add_equals_the_reference_add(seed, arch, mixed, wl, small):
    """A batch's results (every key's cube row bit for bit, feasibility, reasons, done flags, labels, texts' arrays,
    key orders) and contract dictionaries are the reference ``add``'s: random points (EMAXV: every pair has a plan or
    a reason) and mixed ones (no plan: reasons; criterion=dram; fused pooling), one chunk or several (``small``:
    chunks of a few combinations, so a chunk with no plan for any pair of a layer), a cube filled first or not."""
    m = get_model(arch)
    n = 90 if arch == "emaxv" else 24
    rows = _rows(arch, n, seed) if mixed else m.params.random_rows(n, np.random.default_rng(seed))
    for fill_upto in (None, 1 << 62):
        chunk = 40 if small else None
        got, got_d = _results(arch, wl, rows, em._Results.add, chunk, fill_upto)
        want, want_d = _results(arch, wl, rows, _reference_add, chunk, fill_upto)
        _assert_same_results(got, want)
        assert got_d == want_d


def test_results_add_of_many_pairs_with_missing_ones_equals_the_reference_add():
    """A random EMAXV VGG16-conv batch large enough for the mask scatter (SCATTER_MASK_FROM positions) and with layers
    without a plan at some points (the infeasible cells' NaN written key by key after the scatter): the reference's
    results, checked to have both."""
    m = get_model("emaxv")
    rows = m.params.random_rows(400, np.random.default_rng(12))
    seen = []
    real_scatter = em._scatter_index

    def spy(flat, size):
        out = real_scatter(flat, size)
        seen.append(out.dtype == bool)
        return out

    with mock.patch.object(em, "_scatter_index", spy):
        got, got_d = _results("emaxv", "vgg16-conv", rows, em._Results.add)
    want, want_d = _results("emaxv", "vgg16-conv", rows, _reference_add)
    assert any(seen) and not got.feasible.all() and got.feasible.any()
    _assert_same_results(got, want)
    assert got_d == want_d


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 300), step=st.integers(1, 120))
def test_groups_chunks_of_one_point_per_combination_equal_the_lists(n, step):
    """``_Groups.chunks(None, step, n)`` (point i is combination i) equals the chunks of ``[[0], [1], ...]``: every
    array, dtype and flag."""
    got = em._Groups.chunks(None, step, n)
    want = em._Groups.chunks([[i] for i in range(n)], step)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        for f in ("flat", "lens", "offs"):
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and np.array_equal(x, y), f
        assert a.one == b.one
        ks = np.arange(len(b.lens))[::-1].copy()
        for x, y in zip(a.take(ks), b.take(ks)):
            assert np.array_equal(x, y)


@st.composite
def _shared_case(draw):
    """A layer_batches call of ``rows`` layers (rows in order or permuted) and ``n`` points: metric and state arrays of
    any values (-0.0, NaN, infinities)."""
    rows, n = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    keys = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True))
    arr = lambda: np.array(draw(st.lists(_VALUE, min_size=rows * n, max_size=rows * n)), dtype=float).reshape(rows, n)
    metrics = {k: arr() for k in keys}
    states = {k: arr() for k in keys}
    order = draw(st.permutations(range(rows))) if draw(st.booleans()) else list(range(rows))
    return rows, n, keys, metrics, states, list(order)


@settings(max_examples=60, deadline=None)
@given(case=_shared_case())
def test_stacks_with_a_zero_layer_equal_the_concatenations(case):
    """``cube(from_zero=True)`` equals a zero layer concatenated before ``cube()`` and ``states_stack(from_zero=True)``
    a zero row before ``states_stack()``, bit for bit (rows in the layers' order or not), and both equal the layers'
    own dicts stacked."""
    rows, n, keys, metrics, states, order = case
    layers = load_workload("alexnet").layers[:rows]
    for in_place_from in (0, 1 << 62):  # written in place (many values) or stacked and concatenated (few)
        with mock.patch.object(layerarrays, "IN_PLACE_FROM", in_place_from):
            out = layer_batches(layers, order, n, metrics, states)
            shared = out[0]._shared
            want = shared.cube(out, keys)
            got = shared.cube(out, keys, from_zero=True)
            assert got.shape == (len(keys), rows + 1, n)
            assert np.array_equal(_bits(got), _bits(np.concatenate((np.zeros((len(keys), 1, n)), want), axis=1)))
            want_s = shared.states_stack(out, keys)
            got_s = shared.states_stack(out, keys, from_zero=True)
            assert np.array_equal(_bits(got_s), _bits(np.concatenate((np.zeros((1, n)), want_s))))
            layer_wise = np.array([[metrics[k][r] for r in order] for k in keys])  # each layer's row, in layer order
            assert np.array_equal(_bits(want), _bits(layer_wise))
            state_wise = np.array([states[k][r] for r in order for k in keys]).reshape(-1, n)
            assert np.array_equal(_bits(want_s), _bits(state_wise))


def test_stacks_of_a_missing_or_non_float_key_are_none():
    layers = load_workload("alexnet").layers[:2]
    out = layer_batches(layers, [0, 1], 3, {"a": np.ones((2, 3)), "i": np.ones((2, 3), dtype=np.int64)},
                        {"s": np.ones((2, 3))})
    shared = out[0]._shared
    assert shared.cube(out, ("a", "i"), from_zero=True) is None and shared.cube(out, ("a", "x"), True) is None
    assert shared.states_stack(out, ("s", "t"), from_zero=True) is None


def test_cube_keys_written_when_first_read_and_no_chunk_cells_are_nan():
    """A batch writes into its cube only the keys some step read (the totals' and the leakage's: pending chunks hold
    the rest); reading a layer's metrics writes the others; cells no chunk wrote read NaN in every key (a _Results
    given no chunk at all)."""
    m = get_model("emaxv")
    rows = m.params.random_rows(300, np.random.default_rng(4))
    seen = []
    real = em._Results.batches

    def batches(self, layers):
        seen.append(self)
        return real(self, layers)

    em.workload_plans.cache_clear()
    with mock.patch.object(em._Results, "batches", batches):
        r = m.evaluate_points("vgg16-conv", rows)
    em.workload_plans.cache_clear()
    (res,) = seen
    keys = em._cube_keys()
    written = {keys[j] for j in res.written}
    assert "time_s" in written and "state:LMMI" in written and "energy_j" in written
    assert "lmm_read_bytes" not in written and res.pending and len(written) < len(keys)
    _ = r.layers[3].metrics  # every metric of every layer (the rows are split once)
    assert set(range(len(em._all_metric_names()))) <= res.written and res.pending  # (the states summed: too)
    _ = r.layers[3].states
    assert len(res.written) == len(keys) and not res.pending
    empty = em._Results(4, 300)
    empty.cube[...] = 7.0
    empty.names = [list(em._all_metric_names())] * 4  # (as a layer without a plan lists them)
    for lb in empty.batches(load_workload("vgg16-conv").layers[:4]):
        assert all(np.isnan(v).all() for v in lb.metrics.values()) and all(np.isnan(v).all() for v in lb.states.values())


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), mixed=st.booleans(),
       read=st.lists(st.sampled_from(em._cube_keys()), max_size=6))
def test_keys_read_between_chunks_are_written_by_later_chunks_at_once(seed, arch, mixed, read):
    """A key read (``fill``) before the last chunk is added: the later chunks write it when added; the results equal
    the reference ``add``'s."""
    m = get_model(arch)
    n = 60 if arch == "emaxv" else 16
    rows = _rows(arch, n, seed) if mixed else m.params.random_rows(n, np.random.default_rng(seed))
    real_add = em._Results.add

    def add_then_read(self, *args):
        real_add(self, *args)
        self.fill(read)

    got, got_d = _results(arch, "vgg16-conv", rows, add_then_read, chunk=40)
    want, want_d = _results(arch, "vgg16-conv", rows, _reference_add, chunk=40)
    _assert_same_results(got, want)
    assert got_d == want_d


@settings(max_examples=40, deadline=None)
@given(case=_shared_case())
def test_layers_of_arrays_filled_when_read_equal_them_filled_first(case):
    """layer_batches with ``ready`` (arrays filled by it, key by key, when first read) gives every reader what the
    arrays filled first give: sums (cube, from zero), states stacks, one layer's metric, gathers of layers from
    several calls, the layers' dicts; and ``ready`` is told each key before it is read."""
    from archmodels.result import _layer_cube, layer_sums, metric_of

    rows, n, keys, metrics, states, order = case
    layers = load_workload("alexnet").layers[:rows]
    asked: list[str] = []
    lazy_m = {k: np.full((rows, n), 12345.0) for k in metrics}
    lazy_s = {k: np.full((rows, n), 12345.0) for k in states}

    def ready(names):
        for name in names:
            asked.append(name)
            src, dst = (states, lazy_s) if name.startswith("state:") else (metrics, lazy_m)
            dst[name.removeprefix("state:")][...] = src[name.removeprefix("state:")]

    def both():
        return (layer_batches(layers, order, n, metrics, states),
                layer_batches(layers, order, n, lazy_m, lazy_s, ready=ready))

    eager, lazy = both()
    for from_zero in (False, True):
        a, b = layer_sums(eager, keys, n, from_zero), layer_sums(lazy, keys, n, from_zero)
        assert all(np.array_equal(_bits(a[k]), _bits(b[k])) for k in keys)
    assert set(asked) == set(keys)
    eager, lazy = both()
    for lazy_a in (lazy_m, lazy_s):
        for v in lazy_a.values():
            v[...] = 12345.0
    asked.clear()
    a, b = eager[0]._shared.states_stack(eager, keys, True), lazy[0]._shared.states_stack(lazy, keys, True)
    assert np.array_equal(_bits(a), _bits(b)) and set(asked) == {"state:" + k for k in keys}
    k0 = keys[-1]
    assert np.array_equal(_bits(metric_of(eager[-1], k0)), _bits(metric_of(lazy[-1], k0)))
    mixed_e, mixed_l = [eager[0]], [lazy[0]]
    if rows > 1:  # a layer of another call between them: the rows gathered per call
        other = layer_batches(layers[1:2], [0], n, {k: v[:1] for k, v in metrics.items()}, {})
        mixed_e, mixed_l = [eager[0], other[0], *eager[1:]], [lazy[0], other[0], *lazy[1:]]
    ce, cl = _layer_cube(mixed_e, keys, n), _layer_cube(mixed_l, keys, n)
    assert ce is not None and np.array_equal(_bits(ce), _bits(cl))
    for x, y in zip(eager, lazy):
        assert list(x.metrics) == list(y.metrics) and list(x.states) == list(y.states)
        for k in x.metrics:
            assert np.array_equal(_bits(x.metrics[k]), _bits(y.metrics[k])), k
        for k in x.states:
            assert np.array_equal(_bits(x.states[k]), _bits(y.states[k])), k


@pytest.mark.parametrize("bound", [0, 200_000])
def test_results_beyond_the_pending_bound_are_written_at_once_and_equal_the_reference(bound):
    """Past PENDING_BYTES_UPTO of kept values every key is written (and the later chunks' at once): nothing kept, the
    reference's results (checked to flush: no chunk kept after the batch, every key written)."""
    rows = _rows("emaxv", 120, 5)
    seen = []
    real = em._Results.batches

    def batches(self, layers):
        seen.append((list(self.pending), set(self.written)))
        return real(self, layers)

    with mock.patch.object(em, "PENDING_BYTES_UPTO", bound), mock.patch.object(em._Results, "batches", batches):
        got, got_d = _results("emaxv", "vgg16-conv", rows, em._Results.add, chunk=60)
    want, want_d = _results("emaxv", "vgg16-conv", rows, _reference_add, chunk=60)
    assert seen and not seen[0][0] and len(seen[0][1]) == len(em._cube_keys())
    _assert_same_results(got, want)
    assert got_d == want_d


def test_a_deep_copy_of_a_batch_holds_every_value():
    """``copy.deepcopy`` of a batch's layers before any key beyond the totals' is read: the copies hold the values the
    original's layers read (every key written before the copy: its arrays are copies, not views of the cube)."""
    import copy

    m = get_model("emaxv")
    rows = m.params.random_rows(300, np.random.default_rng(8))
    em.workload_plans.cache_clear()
    r = m.evaluate_points("vgg16-conv", rows)
    layers = copy.deepcopy(r.layers)
    em.workload_plans.cache_clear()
    for lb, orig in zip(layers, r.layers):
        for k in orig.metrics:
            assert np.array_equal(_bits(np.asarray(lb.metrics[k], float)), _bits(np.asarray(orig.metrics[k], float))), k
        for k in orig.states:
            assert np.array_equal(_bits(lb.states[k]), _bits(orig.states[k])), k

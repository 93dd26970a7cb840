"""Issue 15, fourteenth round: one point's layers keep their values as Python numbers (``layerarrays.point_batches``)
and the sums over them (``result.layer_sums``, ``base.add_static_energy``, ``BatchResult.totals``) add those numbers
without making arrays; the (values x layers x 1) array the layers hold is written when some value is first read.
The former path (``point_columns`` then ``layer_batches``; kept here as the oracle, verbatim but for names) gives
the very numbers: every total, layer metric, state, feasibility, reason and the contract (NaN equal to NaN: a NaN's
sign is not part of the one-point path's contract, as in tests/test_speed_paths.py).
"""

from __future__ import annotations

import copy
import math
from operator import is_

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model, num
from archmodels import result as R
from archmodels.base import add_static_energy
from archmodels.layerarrays import layer_batches, point_batches, point_columns
from archmodels.multicore import model as MC
from archmodels.rena import model as RM
from dse import objective
from workloads import load_workload
from workloads.errors import UserError
from workloads.layers import FC

M = get_model("multicore")


def _same(a, b) -> bool:
    """Equal bits (0.0 and -0.0 apart), NaN equal to NaN."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _all_same(x, y) -> bool:
    x, y = np.asarray(x, dtype=float).reshape(-1), np.asarray(y, dtype=float).reshape(-1)
    return x.shape == y.shape and all(_same(a, b) for a, b in zip(x.tolist(), y.tolist()))


# ---- the former one-point hand-over (main at d177553), verbatim but for names: the oracle ----
def _old_point_layers(workload, t, pts):
    k = MC.config(pts)
    costed = [MC.layer_costs(counts(shape, k), sizes, k)
              for counts, shape, sizes in t.points]  # (values, fits, need_kb) of each distinct layer
    of = t.point_of
    rows = len(of)
    block = point_columns([costed[j][0] for j in of], len(MC._VALUES))
    ok = reason = None  # every layer fits (layer_batches: all feasible, no reason)
    if not all([c[1] for c in costed]):  # (set element by element: a few layers, not a list of every layer)
        ok, reason = np.ones((rows, 1), dtype=bool), num.objects((rows, 1), "")
        for j, (_, fits, need_kb) in enumerate(costed):
            if not fits:  # each layer of this shape, in workload order: the batch's reason
                why = MC._SHM_REASON % (need_kb, k.shm_kb)
                for r in t.point_at[j]:
                    ok[r, 0], reason[r, 0] = False, why
    return layer_batches(workload.layers, t.point_row, 1, dict(zip(MC._METRICS, block)),
                         dict(zip(MC._STATES, block[len(MC._METRICS):])),
                         {"placement": num.objects((rows, 1), pts["placement"].item(0))}, ok, reason)


def _old_rena_point_costs(t, p):
    cfg, c = p.cfg, p.costing
    costs = [RM.layer_costs(flow(cfg, *args), macs, pool_ops, c) for flow, args, macs, pool_ops in t.calls]
    rows = [costs[j] for j in t.point_call]
    block = point_columns(rows, len(RM._VALUES))
    k = len(RM._METRICS)
    return (dict(zip(RM._METRICS, block[:k])), dict(zip(RM._STATES, block[k:-1])),
            RM._BOUND[block[-1].astype(np.intp)])


def _old_rena_layers(self, workload, pts):
    """The former one-point branch of ``RenaModel.evaluate_layers`` (the batch: as it is)."""
    t = RM._table_of(workload.layers)
    if not t.rows:
        return _RENA_LAYERS(self, workload, pts)
    metrics, states, bound = _old_rena_point_costs(t, RM._point(pts))
    return layer_batches(workload.layers, t.point_row, 1, metrics, states, {"bound": bound})


_RENA_LAYERS = RM.RenaModel.evaluate_layers


def _old_whole(batches, layers) -> bool:
    return all(map(is_, [ref() for ref in batches], layers))


def _old_way(model, wl, pts):
    """Evaluate one point the former way (``point_columns`` and ``layer_batches``)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(MC.MulticoreModel, "_point_layers", staticmethod(_old_point_layers))
        m.setattr(RM.RenaModel, "evaluate_layers", _old_rena_layers)
        return model.evaluate_batch(wl, pts)


# ---- random values: NaN of both signs, zeros of both signs, infinities, ints ----
_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, 3.5e-9, 1e300, math.inf, -math.inf, math.nan, -math.nan, 7, 2**40 + 1])
_VALUE = st.one_of(_SPECIAL, st.floats(-1e12, 1e12, allow_nan=False))
_KEYS = ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j", "extra")
_STATE_KEYS = ("A", "B")
_COLUMNS = st.integers(1, 24).flatmap(
    lambda rows: st.lists(st.lists(_VALUE, min_size=rows, max_size=rows), min_size=9, max_size=9))


def _both(columns):
    """(new layers, former layers) of one point whose values are ``columns`` (keys x rows)."""
    rows = len(columns[0])
    layers = [FC(f"fc{i}", 4 + i, 3) for i in range(rows)]
    new = point_batches(layers, range(rows), columns, _KEYS, _STATE_KEYS)
    block = point_columns(list(zip(*columns)), len(columns))
    old = layer_batches(layers, range(rows), 1, dict(zip(_KEYS, block)), dict(zip(_STATE_KEYS, block[len(_KEYS):])))
    return new, old


@settings(max_examples=150, deadline=None)
@given(_COLUMNS, st.booleans(), st.one_of(_VALUE, st.just(np.array([2.5])), st.just(np.array(-0.0))))
def test_point_batches_sums_equal_the_array_path(columns, from_zero, power):
    new, old = _both(columns)
    keys = ("cycles", "time_s", "energy_j", "extra")
    got, want = R.layer_sums(new, keys, 1, from_zero), R.layer_sums(old, keys, 1, from_zero)
    assert list(got) == list(want)
    for k in keys:
        assert got[k].shape == want[k].shape == (1,) and got[k].dtype == want[k].dtype, k
        assert _all_same(got[k], want[k]), (k, got[k], want[k])
        assert not got[k].flags.writeable  # (a result hands it out as it is)
    add_static_energy(new, power)
    add_static_energy(old, power)
    tot = {"area_mm2": np.array([1.5]), "hw_mac_units": np.array([8.0]), "static_power_w": np.asarray(power, float),
           "extra_energy_j": np.array([0.25])}
    res = [R.BatchResult("x", "w", {"a": np.array([1])}, ("a",), lbs, tot, np.array([True]), np.array([""], object))
           for lbs in (new, old)]
    assert list(res[0].totals) == list(res[1].totals)
    for k, v in res[0].totals.items():
        assert v.shape == (1,) and _all_same(v, res[1].totals[k]), k
    for a, b in zip(new, old):  # every layer's arrays, read after the sums (written then)
        assert list(a.metrics) == list(b.metrics) and list(a.states) == list(b.states)
        for k in b.metrics:
            assert a.metrics[k].shape == (1,) and _all_same(a.metrics[k], b.metrics[k]), k
        for k in b.states:
            assert _all_same(a.states[k], b.states[k]), k


@settings(max_examples=40, deadline=None)
@given(_COLUMNS)
def test_point_batches_arrays_written_on_first_read_whichever_path(columns):
    for read in ("metrics", "states", "cube", "copy", "row"):
        new, old = _both(columns)
        shared = new[0]._shared
        assert shared.pending  # nothing written yet
        if read == "metrics":
            got = [lb.metrics["energy_j"] for lb in new]
        elif read == "states":
            got = [lb.states["B"] for lb in new]
        elif read == "cube":
            got = shared.cube(new, ("energy_j",))[0]
        elif read == "copy":
            got = [lb.metrics["energy_j"] for lb in copy.deepcopy(new)]
        else:
            got = [R.metric_of(lb, "energy_j") for lb in new]
        want = [lb.states["B"] if read == "states" else lb.metrics["energy_j"] for lb in old]
        assert _all_same(np.array(got), np.array(want)), read
        if read != "copy":
            assert not shared.pending


@pytest.mark.parametrize("value", [-0.0, 0.0, math.nan, -math.nan, math.inf])
@pytest.mark.parametrize("rows", [1, 3])
def test_point_sums_of_signed_zeros_and_nans(value, rows):
    new, old = _both([[value] * rows] * 9)
    for from_zero in (False, True):
        got, want = R.layer_sums(new, _KEYS, 1, from_zero), R.layer_sums(old, _KEYS, 1, from_zero)
        assert all(_all_same(got[k], want[k]) for k in _KEYS), (from_zero, got, want)


def test_point_values_dropped_when_an_array_replaces_them():
    columns = [[float(i + 10 * k) for i in range(5)] for k in range(9)]
    new, _ = _both(columns)
    shared = new[0]._shared
    assert shared.point_sums(new, ("energy_j",)) == [sum(columns[5])]
    assert shared.add_metrics(new, energy_j=np.full((5, 1), 2.0))
    assert shared.point_columns(new, ("energy_j",)) is None and shared.point_sums(new, ("cycles",)) is not None
    assert R.layer_sums(new, ("energy_j",), 1)["energy_j"].tolist() == [10.0]
    assert shared.point_columns(new[::-1], ("cycles",)) is None
    new[0].metrics  # a layer's dict built: the values may change there, no sums from the Python numbers
    assert shared.point_columns(new, ("cycles",)) is None


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.data())
def test_whole_equals_the_former_check(rows, data):
    layers = [FC(f"fc{i}", 4, 3) for i in range(rows)]
    lbs = layer_batches(layers, range(rows), 1, {"a": np.zeros((rows, 1))}, {})
    shared = lbs[0]._shared
    asked = data.draw(st.permutations(lbs))
    if data.draw(st.booleans()):
        asked = asked[:-1]
    assert shared.whole(asked) == (len(asked) == rows and _old_whole(shared.batches, asked))
    other = layer_batches(layers, range(rows), 1, {"a": np.zeros((rows, 1))}, {})
    assert not shared.whole(other)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["multicore", "rena", "atomswitch"]),
       st.sampled_from(["vgg16", "alexnet", "resnet50", "mobilenet_v2", "fc2", "lenet", "bert_encoder"]))
def test_trial_equals_the_former_path(seed, arch, wl):
    model, w = get_model(arch), load_workload(wl)
    for row in model.params.random_rows(8, np.random.default_rng(seed)):
        pts = model.params.points([row])
        new, old = model.evaluate_batch(w, pts), _old_way(model, w, pts)
        # a study's order: totals, feasibility, reason first (nothing written yet), then the contract
        assert list(new.totals) == list(old.totals)
        for k, v in new.totals.items():
            assert v.shape == (1,) and _all_same(v, old.totals[k]), (k, row)
        assert new.feasible.tolist() == old.feasible.tolist() and new.reason.tolist() == old.reason.tolist()
        assert list(new.model_totals) == list(old.model_totals)
        for k, v in new.model_totals.items():
            assert v.shape == old.model_totals[k].shape and v.dtype == old.model_totals[k].dtype, k
            assert _all_same(v, old.model_totals[k]), k
            if k not in R._CONTRACT_TOTALS:  # the model's own totals: read-only, as the former views
                assert not new.totals[k].flags.writeable and not old.totals[k].flags.writeable, k
        assert new.point(0) == old.point(0)
        two = model.evaluate_batch(w, model.params.points([row, row]))  # the batch path: the same totals
        for k, v in new.totals.items():
            assert _all_same(v, two.totals[k][:1]), (k, row)
        assert all(a.labels["bound"].tolist() == b.labels["bound"].tolist() for a, b in zip(new.layers, old.layers)
                   if "bound" in b.labels)


# ---- small cuts: num.max_of, the supported kinds, combine_totals, the row checks ----
def _old_max_of(a, b, c, d=None):
    if type(a) is not float:
        return np.maximum.reduce([a, b, c] if d is None else [a, b, c, d])
    b, c = float(b), float(c)
    m = a if a > b or a != a else b  # pairwise, left to right, as the reduce; equal: the later one, as numpy
    m = m if m > c or m != m else c
    if d is None:
        return m
    d = float(d)
    return m if m > d or m != m else d


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUE, min_size=4, max_size=4), st.booleans())
def test_max_of_equals_the_former_form(xs, four):
    a, b, c, d = xs
    a = float(a)
    args = (a, b, c, d) if four else (a, b, c)
    got, want = num.max_of(*args), _old_max_of(*args)
    assert type(got) is float and _same(got, want)


@pytest.mark.parametrize("arch, wl", [("multicore", "spmv:n=64,sparsity=0.9"), ("multicore", "lenet"),
                                      ("atomswitch", "bert_encoder")])
@pytest.mark.parametrize("as_list", [False, True])
def test_unsupported_layers_still_reported(arch, wl, as_list, monkeypatch):
    model = get_model(arch)
    if as_list:  # a model of the user's may declare a list
        monkeypatch.setattr(type(model), "SUPPORTS", list(model.SUPPORTS))
    res = model.evaluate_batch(wl, model.params.points([{}, {"cores": 2} if arch == "multicore" else {}]))
    bad = [lb for lb in res.layers if lb.kind not in model.SUPPORTS]
    assert (not bad) == bool(res.feasible.all())
    for lb in bad:
        assert lb.reason.tolist() == [f"{model.name} does not run {lb.kind} layers"] * 2 and not lb.feasible.any()


def test_combine_totals_converts_other_float_dtypes():
    res = M.evaluate_points("lenet", [{}])
    big = np.array([1.5], dtype=">f8")
    res.totals["extra"] = big
    got = objective.combine_totals([res], "sum", {})
    assert got["extra"].dtype == np.float64 and got["extra"].tolist() == [1.5] and got["extra"] is not big
    assert all(got[k] is v for k, v in res.totals.items() if k != "extra")


def test_evaluate_rows_checks_each_value(tmp_path):
    from benchmarks.throughput import point_study
    study = point_study("multicore", "lenet", tmp_path)
    row = M.params.random_rows(1, np.random.default_rng(1))[0]
    assert objective.evaluate_rows(study, [row]).totals["time_s"].shape == (1,)
    for bad in ({**row, "cores": 0}, {**row, "nope": 1}, {**row, "placement": "X"}):
        with pytest.raises(UserError):
            objective.evaluate_rows(study, [bad])


# ---- one point's reason from the layers' arrays (_SharedRows.first_infeasible) ----
def _old_reason(self):
    out = self.reason_config.copy()
    if self.feasible.all():
        return out  # no layer has anything to say (the common case)
    if self.n == 1:  # one point: its configuration's reason, else the first infeasible layer's
        lb = next((lb for lb in self.layers if not lb.feasible[0]), None) if out[0] == "" else None
        if lb is not None:
            out[0] = f"layer {lb.name}: {lb.reason[0]}"
        return out
    raise AssertionError("one point only")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12), st.booleans(), st.sampled_from(["", "clock too high"]),
       st.sampled_from(["none", "given", "no reason", "touched"]))
def test_one_point_reason_equals_the_former_form(flags, config_ok, config_why, how):
    rows = len(flags)
    layers = [FC(f"fc{i}", 4, 3) for i in range(rows)]

    def result():
        ok = np.array(flags).reshape(-1, 1)
        why = num.objects((rows, 1), "")
        why[~ok] = [f"too big {i}" for i in np.flatnonzero(~ok[:, 0])]
        given_ = {"none": (None, None), "given": (ok, why), "no reason": (ok, None), "touched": (ok, why)}[how]
        lbs = layer_batches(layers, range(rows), 1, {"time_s": np.ones((rows, 1))}, {}, None, *given_)
        if how == "touched":
            lbs[-1].infeasible(np.array([True]), "late")
        return R.BatchResult("x", "w", {"a": np.array([1])}, ("a",), lbs, {}, np.array([config_ok]),
                             np.array(["" if config_ok else config_why], dtype=object))
    got, want = result(), result()
    assert got.reason.tolist() == _old_reason(want).tolist()
    assert got.feasible.tolist() == want.feasible.tolist()

"""The shared fast paths (issue 15) give the numbers of the plain paths they replace.

Memos (the supply voltage of a clock, a batch's clock costs, a workload's routing), the study's
one-point path (parameters checked once per study) and the cheaper result building must never
return a result computed for something else: each is compared here with an uncached computation.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import available, get_model, tech
from archmodels.result import LayerBatch
from dse import config
from dse.objective import evaluate_rows
from dse.sweep import Grid
from workloads import load_workload
from workloads.errors import UserError
from workloads.layers import FC, Workload


def _plain_vdd_ratio(f: np.ndarray, node: int) -> np.ndarray:
    """The bisection over every clock, no memo (the formula before the memo)."""
    f = np.asarray(f, dtype=float)
    v = np.ones(f.shape)
    above = f > tech.F_NOM_MHZ[node]
    if above.any():
        v[above] = tech._bisect_vdd_ratio(f[above], node)
    return np.where(f <= tech.fmax_mhz(node) * (1 + 1e-9), v, np.nan)


clocks = st.lists(st.one_of(st.floats(1.0, 3000.0), st.sampled_from([1000.0, 1500.0, float("nan")])),
                  min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(node=st.sampled_from(tech.NODES_NM), f=clocks, clear=st.booleans())
def test_vdd_ratio_memo_returns_the_bisection_bits(node, f, clear):
    if clear:
        tech._VDD_MEMO.clear()
    want = _plain_vdd_ratio(np.array(f), node)
    for _ in range(2):  # a miss, then a hit
        got = tech.vdd_ratio(np.array(f), node)
        assert np.array_equal(got, want, equal_nan=True)
    for x, w in zip(f, want):  # one point at a time (the study path) gives the batch's bits
        assert np.array_equal(tech.vdd_ratio(x, node), w, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(f=clocks, nodes=st.lists(st.sampled_from(tech.NODES_NM), min_size=12, max_size=12))
def test_clock_costs_memo_is_keyed_by_clocks_and_nodes(f, nodes):
    f = np.array(f)
    nd = np.array(nodes[:len(f)])
    for node_arg in (nd, nd[::-1].copy(), 28, 14):  # same clocks, other nodes: never the other's answer
        c = tech.clock_costs(f, node_arg)
        n_arr = np.broadcast_to(np.asarray(node_arg), f.shape)
        v = np.array([_plain_vdd_ratio(np.array([x]), int(n))[0] for x, n in zip(f, n_arr)])
        a = np.array([tech.logic_area_factor(x, int(n)) for x, n in zip(f, n_arr)])
        assert np.array_equal(c.vdd_ratio, v, equal_nan=True)
        assert np.array_equal(c.energy_scale, v ** 2, equal_nan=True)
        assert np.array_equal(c.area_factor, a, equal_nan=True)
        assert np.array_equal(c.feasible, ~np.isnan(v))
        assert not c.vdd_ratio.flags.writeable  # a shared answer cannot be altered by a caller


def test_dram_rows_by_name():
    names = np.array(["ddr4", "hbm2", "ddr3l", "lpddr4", "ddr4"], dtype=object)
    read, write = tech.dram_pj_per_byte(names)
    assert read.tolist() == [tech.DRAM_TYPES[x].read_pj_per_byte for x in names]
    assert write.tolist() == [tech.DRAM_TYPES[x].write_pj_per_byte for x in names]
    r0, w0 = tech.dram_pj_per_byte("ddr3l")
    assert r0.shape == () and float(w0) == tech.DRAM_TYPES["ddr3l"].write_pj_per_byte


def test_layer_batch_set_copies_and_broadcasts():
    lb = LayerBatch(FC("f", inputs=4, outputs=4), 3)
    src = np.array([1, 2, 3])
    lb.set(a=src, b=2, c=np.float64(0.5), d=np.array([7.0]), e=True)
    src[0] = 99  # the stored metric is a copy
    assert lb.metrics["a"].tolist() == [1.0, 2.0, 3.0] and lb.metrics["a"].dtype == float
    assert lb.metrics["b"].tolist() == [2.0] * 3 and lb.metrics["c"].tolist() == [0.5] * 3
    assert lb.metrics["d"].tolist() == [7.0] * 3 and lb.metrics["e"].tolist() == [1.0] * 3
    lb.infeasible(np.array([False, True, False]), "first")
    lb.infeasible(np.array([False, False, False]), "none")
    lb.infeasible(np.array([False, True, True]), np.array(["x", "second", "third"], dtype=object))
    assert lb.feasible.tolist() == [True, False, False] and lb.reason.tolist() == ["", "first", "third"]


def _rows(study, n: int, seed: int = 0):
    grid = Grid.of(study)
    return grid.rows(np.random.default_rng(seed).integers(0, grid.size, n))


@pytest.mark.parametrize("path, n", [("studies/quickstart.yaml", 40), ("studies/emaxvr_dse_vgg16.yaml", 6),
                                     ("studies/imax_dse.yaml", 6), ("studies/rena_fpga_dse.yaml", 30),
                                     ("studies/atomswitch_lenet_area.yaml", 30)])
def test_one_row_at_a_time_equals_the_batch(path, n):
    st_ = config.load(path)
    rows = _rows(st_, n)
    batch = evaluate_rows(st_, rows)
    assert batch.feasible.any() or n < 10
    for i, row in enumerate(rows):
        one = evaluate_rows(st_, [row])  # one point: dse.objective._evaluated_one
        assert one.values.shape == (1, batch.values.shape[1]) and one.violations.shape == (1, batch.violations.shape[1])
        assert one.values[0].tobytes() == batch.values[i].tobytes()  # the same bits (infinities, -0.0)
        assert one.violations[0].tobytes() == batch.violations[i].tobytes()
        assert one.feasible[0] == batch.feasible[i] and one.reason[0] == batch.reason[i]
        for key, arr in batch.totals.items():
            assert np.array_equal(one.totals[key], arr[i:i + 1], equal_nan=True), key


def test_study_rows_are_checked_like_the_model_checks_them():
    st_ = config.load("studies/quickstart.yaml")
    model = st_.model
    with pytest.raises(UserError) as mine:
        evaluate_rows(st_, [{"cores": 0}])
    with pytest.raises(UserError) as plain:
        model.params.resolve({**st_.fixed, "cores": 0})
    assert str(mine.value) == str(plain.value)
    with pytest.raises(UserError, match="unknown parameter 'nope'"):
        evaluate_rows(st_, [{"nope": 1}])
    # a row may override a fixed value, as the model's own resolve allows
    row = {"cores": 4, "shm_kb": 512}
    ev = evaluate_rows(st_, [row])
    ref = model.evaluate_batch(st_.workloads[0], model.params.points([{**st_.fixed, **row}]))
    assert np.array_equal(ev.totals["time_s"], ref.totals["time_s"])


def test_routing_memo_never_serves_another_workload():
    model = get_model("multicore")
    pts = model.params.points([{}])
    a = Workload("same", (FC("x", inputs=256, outputs=128),))
    b = Workload("same", (FC("x", inputs=1024, outputs=512),))
    ta = model.evaluate_batch(a, pts).totals["time_s"][0]
    tb = model.evaluate_batch(b, pts).totals["time_s"][0]
    assert tb > ta  # four times the MACs; not a's cached routing
    assert model.evaluate_batch(Workload("same", b.layers), pts).totals["time_s"][0] == tb


@pytest.mark.parametrize("arch, wl", [("multicore", "vgg16"), ("rena", "lenet"), ("atomswitch", "lenet")])
def test_contract_dictionary_is_plain_json(arch, wl):
    model = get_model(arch)
    res = model.evaluate_points(load_workload(wl), model.params.random_rows(4, np.random.default_rng(3)))
    for i in range(res.n):
        d = res.point(i)
        json.dumps(d, allow_nan=False)  # Python numbers only, no NaN (None instead)
        for lay in d["layers"]:
            assert all(type(v) in (int, float, str, bool, type(None), dict) for v in lay.values())
        assert d["total"]["time_s"] is None or math.isclose(d["total"]["time_s"], float(res.totals["time_s"][i]))


@pytest.mark.parametrize("arch", ["emaxv", "emaxvr", "imax", "rena", "atomswitch", "multicore"])
def test_gemm_forms_without_context_only_where_it_changes_nothing(arch, monkeypatch):
    """A model that evaluates alternative GEMM forms on the swapped layers alone (GEMM_FORMS_CONTEXT
    False) must give what the whole-workload evaluation gives (EMAXVR would not: SPM chaining). At
    1ae54d5+ emaxv, imax, rena, atomswitch and multicore gave equal golden outputs with False."""
    model = get_model(arch)
    cls = type(model)
    wl = load_workload("bert_encoder")
    pts = model.params.points(model.params.random_rows(12, np.random.default_rng(5)))
    results = {}
    for flag in (True, False):
        monkeypatch.setattr(cls, "GEMM_FORMS_CONTEXT", flag)
        res = model.evaluate_batch(wl, pts)
        results[flag] = [res.point(i) for i in range(res.n)]
    monkeypatch.undo()
    if not cls.GEMM_FORMS_CONTEXT:  # the model's claim: its layers' costs do not depend on their neighbours
        assert json.dumps(results[False]) == json.dumps(results[True])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_every_numeric_parameter_refuses_non_finite_values_in_one_line(value):
    """NaN/inf in a study file or --set is bad input (UserError), never a ValueError from int() or a silent NaN."""
    from workloads.errors import UserError

    for arch in available():
        for p in get_model(arch).params:
            if p.kind in ("int", "float"):
                with pytest.raises(UserError, match=p.name):
                    p.check(value)


_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, 3.5e-9, 1e300, float("inf"), -float("inf"), float("nan")])
_VALUE = st.one_of(_SPECIAL, st.floats(min_value=-1e3, max_value=1e12, allow_nan=False))


def _result(layer_values: list[list[float]], model: dict[str, float], n: int):
    from archmodels.result import BatchResult

    layers = []
    for i, vals in enumerate(layer_values):
        lb = LayerBatch(FC(f"f{i}", 8, 4), n)
        lb.set(**{k: np.full(n, v) for k, v in zip(("cycles", "time_s", "dram_read_bytes", "dram_write_bytes",
                                                    "energy_j", "utilization"), vals)})
        layers.append(lb)
    totals = {k: np.full(n, v) for k, v in model.items()}
    return BatchResult("x", "w", {"p": np.zeros(n)}, ("p",), layers, totals, np.ones(n, bool), np.full(n, "", object))


@settings(max_examples=300, deadline=None)
@given(layer_values=st.lists(st.lists(_VALUE, min_size=6, max_size=6), min_size=1, max_size=9),
       area=_VALUE, units=_VALUE, static=_VALUE, extra=_VALUE)
def test_one_point_totals_are_the_array_path_bits(layer_values, area, units, static, extra):
    """A point alone (totals on Python floats) == the same point in a batch of two (numpy), bit for bit,
    special values included (zero, negative zero and infinite times, NaN)."""
    model = {"area_mm2": area, "hw_mac_units": units, "static_power_w": static, "extra_energy_j": extra}
    with np.errstate(all="ignore"):  # the array path on inf - inf, 1e300 x 1e300 ...
        one, two = _result(layer_values, model, 1).totals, _result(layer_values, model, 2).totals
    assert list(one) == list(two)
    for k in one:
        assert one[k].shape == (1,) and one[k].dtype == np.float64, k
        a, b = one[k][0], two[k][0]
        assert (a == b and math.copysign(1, a) == math.copysign(1, b)) or (math.isnan(a) and math.isnan(b)), (k, a, b)


def test_identity_memo_serves_the_same_objects_only():
    """IdentityMemo: the same object (or, by_items, a new tuple of the same objects) is served from the memo;
    equal but other objects are computed again; a full memo starts over."""
    from archmodels.memo import IdentityMemo

    calls = []
    memo = IdentityMemo(lambda x: calls.append(x) or len(calls), size=2)
    a, b, c = [1], [1], [2]
    assert memo(a) == 1 and memo(a) == 1 and memo(b) == 2  # b == a, but another object
    assert memo(c) == 3 and len(memo.memo) == 1  # the third entry found the memo full
    items = IdentityMemo(lambda xs: calls.append(xs) or len(calls), by_items=True)
    first = items((a, b))
    assert items([a, b]) == first and items((a, c)) != first and items((b, a)) != first


@pytest.mark.parametrize("arch", available())
def test_one_row_stacks_as_in_a_batch(arch):
    """ParamSet.stack of one row (the parameters of each dtype as slices of one array) gives each parameter the
    values and dtype of the general path (that row stacked with others, then taken alone)."""
    params = get_model(arch).params
    rows = [params.resolve(r) for r in params.random_rows(20, np.random.default_rng(5))]
    batch = params.stack(rows + rows[:1])  # two or more rows: one array per parameter
    for i, row in enumerate(rows):
        one = params.stack([row])
        assert list(one) == list(batch) == list(params.names)
        for k, arr in one.items():
            assert arr.shape == (1,) and arr.dtype == batch[k].dtype, (arch, k)
            assert arr.tolist() == batch[k][i:i + 1].tolist(), (arch, k)


_CHECK_VALUES = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                          st.sampled_from([np.float64(2.0), np.int64(3), "x", None, np.bool_(True)]))


@settings(max_examples=300, deadline=None)
@given(value=_CHECK_VALUES, lo=st.one_of(st.none(), st.integers(-50, 50)), span=st.integers(0, 100),
       kind=st.sampled_from(["int", "float"]), unbounded_high=st.booleans())
def test_param_check_fast_path_equals_the_general_rules(value, lo, span, kind, unbounded_high):
    """Param.check's fast path (a Python int or float within bounds) accepts and returns exactly what the general
    rules do: bools, numpy scalars, NaN, infinities, non-integral floats for an int, out-of-range values."""
    from archmodels.params import Param

    high = None if unbounded_high else (0 if lo is None else lo) + span
    p = Param("x", kind, 0 if lo is None or lo <= 0 <= (high if high is not None else 1e9) else lo,
              low=lo, high=high)

    def general(v):  # the rules without the fast path (Param.check before it)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise UserError("bad")
        if not math.isfinite(float(v)):
            raise UserError("bad")
        if kind == "int":
            if float(v) != int(v):
                raise UserError("bad")
            v = int(v)
        else:
            v = float(v)
        if (lo is not None and v < lo) or (high is not None and v > high):
            raise UserError("bad")
        return v

    try:
        want = general(value)
    except UserError:
        with pytest.raises(UserError):
            p.check(value)
        return
    got = p.check(value)
    assert got == want and type(got) is type(want)


def test_one_row_equals_the_batch_where_metrics_are_not_finite(tmp_path):
    """A point whose time is NaN (atomswitch runs no MatMul): its objectives take their worst infinity and its
    violations BIG on the one-point path (`dse.objective._evaluated_one`) bit for bit as in a batch."""
    path = tmp_path / "nan.yaml"
    path.write_text("name: nan\narch: atomswitch\nworkloads: [lenet, 'matmul:m=30,k=20,n=5']\n"
                    "space:\n  fold: {low: 1, high: 8}\n  clock_mhz: [50, 100]\n"
                    "objectives:\n  - total.time_s: minimize\n  - total.fps: maximize\n"
                    "constraints:\n  - total.time_s <= 1\n  - total.fps >= 10\n  - total.area_mm2 <= 60\nn_trials: 8\n")
    st_ = config.load(path)
    rows = _rows(st_, 8)
    batch = evaluate_rows(st_, rows)
    assert np.isinf(batch.values).all() and (batch.violations[:, :2] == 1e30).all()  # the case under test
    for i, row in enumerate(rows):
        one = evaluate_rows(st_, [row])
        assert one.values[0].tobytes() == batch.values[i].tobytes()
        assert one.violations[0].tobytes() == batch.violations[i].tobytes()

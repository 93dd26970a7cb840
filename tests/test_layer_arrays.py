"""rena, multicore and atomswitch cost every layer at once over (layers x points) (archmodels/layerarrays.py).

What could go wrong there, tested on random points of the declared space (infeasible ones included):
a layer read from another layer's row, a per-workload table served for a different structure,
a batch whose points leak into each other, a padded SRAM slot or channel share that is not an
exact zero.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from archmodels import get_model
from archmodels.atomswitch.energy import stages_energy_j
from archmodels.atomswitch.layers import (LayerCols, StageGroup, conv_stage, group_costs, stack_groups, stage_groups,
                                         tables)
from archmodels.layerarrays import groups
from archmodels.multicore.model import layer_table as multicore_table
from archmodels.rena.dram import bursts, dram_cycles, stream_channels
from archmodels.rena.model import layer_table as rena_table
from workloads import Workload, load_workload
from workloads.layers import FC, Conv2D

SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(0, 2**31 - 1)
# conv + pool + FC, grouped/depthwise convs, matrix products with vector layers between them, a sparse product
NETWORKS = ["alexnet", "mobilenet_v2", "bert_encoder:seq=32,hidden=64,heads=2,ffn=128", "spmm:n=128,sparsity=0.9"]


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
    return a.shape == b.shape and a.tolist() == b.tolist()


def _assert_same_layer(x, y, where: str) -> None:
    assert list(x.metrics) == list(y.metrics), where
    for key in x.metrics:
        assert _same(x.metrics[key], y.metrics[key]), (where, key)
    assert set(x.states) == set(y.states), where
    for key in x.states:
        assert _same(x.states[key], y.states[key]), (where, key)
    assert set(x.labels) == set(y.labels), where
    for key in x.labels:
        assert _same(x.labels[key], y.labels[key]), (where, key)
    assert _same(x.feasible, y.feasible) and _same(x.reason, y.reason), where


def _rows(model, seed: int, n: int):
    rows = model.params.random_rows(n, np.random.default_rng(seed))
    return rows + [model.params.defaults()]


@pytest.mark.parametrize("arch", ["rena", "multicore"])
@pytest.mark.parametrize("network", ["alexnet", "mobilenet_v2"])
@SETTINGS
@given(seed=SEEDS)
def test_a_layer_alone_equals_the_same_layer_in_its_network(arch, network, seed):
    """Layers of these models are independent: each row of the stacked arrays must be its own layer's."""
    model = get_model(arch)
    wl = load_workload(network)
    pts = model.params.points(_rows(model, seed, 8))
    whole = model.evaluate_layers(wl, pts)
    for layer, lb in zip(wl.layers, whole):
        alone = model.evaluate_layers(Workload(f"only-{layer.name}", (layer,)), pts)[0]
        _assert_same_layer(alone, lb, f"{arch} {network} {layer.name}")


@pytest.mark.parametrize("arch", ["rena", "multicore", "atomswitch"])
@pytest.mark.parametrize("network", NETWORKS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS)
def test_every_layer_of_a_batch_equals_its_point_alone(arch, network, seed):
    """batch == scalar for every layer metric, state, label and reason, not only for the totals."""
    model = get_model(arch)
    rows = _rows(model, seed, 5)
    batch = model.evaluate_points(network, rows)
    for i, row in enumerate(rows):
        one = model.evaluate_points(network, [row])
        for lb_batch, lb_one in zip(batch.layers, one.layers):
            picked = type(lb_one)(lb_one.layer, 1, {k: v[i:i + 1] for k, v in lb_batch.metrics.items()},
                                  {k: v[i:i + 1] for k, v in lb_batch.states.items()},
                                  {k: v[i:i + 1] for k, v in lb_batch.labels.items()},
                                  lb_batch.feasible[i:i + 1], lb_batch.reason[i:i + 1])
            _assert_same_layer(lb_one, picked, f"{arch} {network} point {i} {lb_one.name}")


@pytest.mark.parametrize("table", [rena_table, multicore_table])
def test_layer_tables_are_bounded_and_keyed_by_the_layer_shapes(table):
    small = (Conv2D("C1", in_ch=3, out_ch=8, kernel_h=3, kernel_w=3, in_h=16, in_w=16), FC("F1", inputs=64, outputs=10))
    wider = (Conv2D("C1", in_ch=3, out_ch=16, kernel_h=3, kernel_w=3, in_h=16, in_w=16), FC("F1", inputs=64, outputs=10))
    a, b = table(small), table(wider)
    assert a is table(small) and a is not b
    assert int(a.rows) == int(b.rows) == 2
    assert table.cache_info().maxsize is not None
    # the same names with other shapes give other numbers: the cache never answers for another structure
    for arch in ("rena", "multicore"):
        m = get_model(arch)
        pts = m.params.points([{}])
        first = m.evaluate_layers(Workload("net", small), pts)[0].metrics["energy_j"][0]
        other = m.evaluate_layers(Workload("net", wider), pts)[0].metrics["energy_j"][0]
        again = m.evaluate_layers(Workload("net", small), pts)[0].metrics["energy_j"][0]
        assert first == again != other


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS, layers=st.integers(1, 4), points=st.integers(1, 40))
def test_rena_channel_loads_equal_the_channel_map(seed, layers, points):
    """The share-matrix form of dram_cycles equals the busiest channel of stream_channels, point by point."""
    rng = np.random.default_rng(seed)
    x, w1, w2 = (rng.integers(0, 10**7, (layers, points)).astype(float) for _ in range(3))
    channels, mults = rng.integers(1, 17, points), rng.integers(1, 3, points)
    burst = rng.uniform(64, 400, points)
    got = dram_cycles(x, w1, w2, channels, mults, burst)
    load = {"X": bursts(x), "W1": bursts(w1), "W2": bursts(w2), "I": np.zeros_like(x)}
    for j in range(points):
        for r in range(layers):
            want = max(sum(load[s][r, j] * share for s, share in chan.items())
                       for chan in stream_channels(int(channels[j]), int(mults[j])))
            assert got[r, j] == max(want, 0.0) * burst[j]


def test_stacked_stage_energy_equals_each_stage_alone():
    """Groups with fewer SRAM accesses than others get exact zeros in the padded slots."""
    model = get_model("atomswitch")
    wl = load_workload("lenet")
    pts = model.params.points(model.params.random_rows(16, np.random.default_rng(3)) + [model.params.defaults()])
    t = tables(wl)
    c = model._ctx(t.max_multipliers, pts)
    costs = group_costs(t.groups, c)
    assert len({len(k.sram) for k in costs}) > 1  # the groups differ in their SRAM accesses

    def energy(f):
        return stages_energy_j(f["mac_ops"], f["add_ops"], f["compare_ops"], f["sram_words"], f["sram_bank_words"],
                               f["dram_read_bytes"], f["dram_write_bytes"], pts["value_bits"], pts["dram"])

    stacked = energy(stack_groups(costs, t.order.positions, len(t.order.index), c.n))
    for cost, at in zip(costs, t.order.positions):
        alone = energy(stack_groups([cost], [slice(0, cost.rows)], cost.rows, c.n))
        for part_stacked, part_alone in zip(stacked, alone, strict=True):  # energy, compute, SRAM, DRAM
            assert np.array_equal(np.broadcast_to(part_stacked, stacked[0].shape)[at],
                                  np.broadcast_to(part_alone, alone[0].shape))


def test_atomswitch_layer_alone_equals_its_stage_group_row():
    """One stage costed alone (its group of one) equals its row in the group of every stage of its role."""
    model = get_model("atomswitch")
    wl = load_workload("vgg16-conv")
    pts = model.params.points(model.params.random_rows(12, np.random.default_rng(5)))
    c = model._ctx(tables(wl).max_multipliers, pts)
    g = stage_groups(wl)["conv"]
    group = conv_stage(g, c)
    for j, i in enumerate(g.index):
        one = StageGroup(g.role, (i,), LayerCols((wl.layers[i],)), g.reads_network_input[j:j + 1],
                         g.writes_network_output[j:j + 1], g.full_multipliers[j:j + 1], g.activation[j:j + 1],
                         g.activation_stage[j:j + 1])
        alone = conv_stage(one, c)
        for key in ("cycles", "multipliers", "memory_words", "delay_words", "dram_read_bytes", "add_ops"):
            a = np.broadcast_to(getattr(alone, key), (1, c.n))[0]
            b = np.broadcast_to(getattr(group, key), (g.rows, c.n))[j]
            assert np.array_equal(a, b), (wl.layers[i].name, key)


def test_groups_select_every_point_once():
    a = np.array([28, 14, 28, 28, 14])
    b = np.array(["x", "y", "x", "y", "y"], dtype=object)
    seen = np.zeros(len(a), dtype=int)
    for (x, y), sel in groups(a, b):
        assert (a[sel] == x).all() and (b[sel] == y).all()
        seen[sel] += 1
    assert (seen == 1).all()
    assert groups(np.array([16]), np.array([28])) == [((16, 28), slice(None))]


@pytest.mark.parametrize("ok", [None, "given"])
@pytest.mark.parametrize("touch", ["infeasible", "assign", "in_place", "none"])
def test_feasibility_read_from_the_shared_rows_sees_every_layer_change(ok, touch):
    """BatchResult.feasible / .reason read a layer_batches call's flags whole until some layer reads or sets its
    own (layerarrays._RowField): a change made through any layer must still show."""
    from archmodels.layerarrays import layer_batches
    from archmodels.result import BatchResult

    layers = load_workload("lenet").layers
    rows, n = len(layers), 1
    metrics = {k: np.ones((rows, n)) for k in ("cycles", "time_s", "dram_read_bytes", "dram_write_bytes",
                                              "energy_j", "utilization")}
    given_ok = np.ones((rows, n), dtype=bool) if ok else None
    out = layer_batches(layers, list(range(rows)), n, metrics, {}, None, given_ok)
    if touch == "infeasible":
        out[3].infeasible(np.array([True]), "too big")
    elif touch == "assign":
        out[3].feasible, out[3].reason = np.array([False]), np.array(["too big"], dtype=object)
    elif touch == "in_place":
        out[3].feasible[0], out[3].reason[0] = False, "too big"
    res = BatchResult(arch="x", workload="lenet", points={"p": np.zeros(n)}, param_names=("p",), layers=out,
                      model_totals={"area_mm2": 1.0, "hw_mac_units": 1.0}, feasible_config=np.array([True]),
                      reason_config=np.array([""], dtype=object))
    if touch == "none":
        assert res.feasible.tolist() == [True] and res.reason.tolist() == [""]
    else:
        assert res.feasible.tolist() == [False]
        assert res.reason.tolist() == [f"layer {layers[3].name}: too big"]


@pytest.mark.parametrize("from_zero", [False, True])
def test_layer_cube_of_layers_from_several_calls_equals_their_dicts(from_zero):
    """result._layer_cube over layers of two layer_batches calls (rows in another order, one layer's dict built
    and changed) and a plain LayerBatch gathers exactly what each layer's metrics dict holds, in layer order."""
    from archmodels.layerarrays import layer_batches
    from archmodels.result import LayerBatch, _layer_cube

    rng = np.random.default_rng(9)
    layers = load_workload("alexnet").layers
    n, keys = 3, ("time_s", "energy_j")
    a = layer_batches(layers[:4], [2, 0, 3, 1], n, {k: rng.random((4, n)) for k in keys}, {})
    b = layer_batches(layers[4:7], [0, 1, 2], n, {k: rng.random((3, n)) for k in keys}, {})
    plain = LayerBatch(layers[7], n).set(time_s=rng.random(n), energy_j=rng.random(n))
    b[1].metrics["energy_j"] = b[1].metrics["energy_j"] * 2.0  # a layer's own dict, changed
    mixed = [a[0], b[0], plain, a[1], a[2], b[1], a[3], b[2]]
    cube = _layer_cube(mixed, keys, n, from_zero)
    want = np.array([[lb.metrics[k] for lb in mixed] for k in keys])
    if from_zero:
        want = np.concatenate((np.zeros((len(keys), 1, n)), want), axis=1)
    assert cube.shape == want.shape and np.array_equal(cube, want)

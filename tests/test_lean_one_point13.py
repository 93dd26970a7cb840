"""Issue 15, thirteenth round: the lean models' one-point path (a study's trial) after its cuts gives the very
numbers of the batch path, bit for bit, and of the twelfth round's formulas (kept here as oracles, verbatim).

ReNA: the flows read their products of the layer alone (``conv_products``, ``fc_products``, ``pool_products``)
from the workload's table, as floats; the configuration holds the filters per tile, the MAC cycles per pass and
the float conversion; MACs and pooling ops of one point's calls are floats; one point's DRAM channels are looked
up once (``dram.point_channels``) and costed by ``dram.point_dram_cycles`` (bursts inline, no I stream); the
layer energy is written in ``layer_costs``; MAC and add energies once per (width, node).

multicore: one point's parameter values (``config``, ``model_totals``, ``vector_unit``) read by C-level maps.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.num import as_float, as_int, maximum, minimum, where, zeros_like
from archmodels.rena import dram, flows, model as RM
from archmodels.testing import assert_alone_equals_batch
from workloads import load_workload

from tests.test_lean_one_point11 import _CONFIG, _FLOWS, _same
from tests.test_multicore_one_point12 import M as MULTICORE, _rows as _multicore_rows

RENA = get_model("rena")
_WORKLOADS = ["vgg16", "alexnet", "resnet50", "mobilenet_v2", "fc2", "lenet", "bert_encoder",
              "matmul:m=300,k=200,n=50"]


# ---- the twelfth round's ReNA formulas (base26, 6194737), verbatim but for names: the oracles ----
def _old_conv_flow(cfg, groups, filters, window, pixels):
    n, mcol, mul, tpv = cfg.rows, cfg.cols, cfg.mults, cfg.tpv
    filter_tiles = -(-filters // (n * mul))
    pixel_tiles = -(-pixels // mcol)
    chunks = -(-window // n)
    tiles = groups * filter_tiles * pixel_tiles
    passes = tiles * chunks
    pass_cycles, unload_per_tile, fill = cfg.conv_pass
    compute = passes * pass_cycles + tiles * unload_per_tile + fill
    last = filters - (filter_tiles - 1) * n * mul
    f1 = (filter_tiles - 1) * n + minimum(n, last)
    f2 = filters - f1
    vb = cfg.value_bytes
    return (as_float(compute), as_float(passes * n * tpv), as_float(passes), groups * filter_tiles * window * pixels * vb,
            _float_like(groups * filters * pixels, passes) * vb,
            (groups * pixel_tiles * f1 * window * vb, groups * pixel_tiles * f2 * window * vb))


def _old_fc_flow(cfg, inputs, outputs, batch):
    ring = cfg.pbs
    tpv, mcol = cfg.tpv, cfg.cols
    full = inputs // ring
    rem = inputs % ring
    has_rem = rem > 0
    rem_safe = where(has_rem, rem, 1)
    rings = where(has_rem, ring // rem_safe, 1)
    groups = -(-outputs // ring)
    last_group = outputs - (groups - 1) * ring
    per_pass = rings * rem_safe
    rem_passes = where(has_rem, (groups - 1) * -(-ring // per_pass) + -(-last_group // per_pass), 0)
    steps = groups * full * ring + rem_passes * rem
    loads = groups * full + rem_passes
    shapes = as_int(full > 0) + as_int(has_rem)
    per_vector = (shapes * tpv * mcol + loads * (tpv * mcol + flows.CONTROL_CYCLES) + steps * (tpv * mcol + 1)
                  + groups * tpv * mcol)
    vb = cfg.value_bytes
    x_in = (groups * full * ring + rem_passes * rings * rem) * vb
    routing = shapes * ring * vb
    return (as_float(batch * per_vector), as_float(batch * steps), as_float(batch * steps), batch * x_in,
            _float_like(batch * outputs, steps) * vb, (batch * inputs * outputs * vb + routing, zeros_like(steps)))


def _old_pool_flow(cfg, input_elems, output_elems):
    compute = as_float(-(-input_elems // cfg.rows) * cfg.tpv + flows.CONTROL_CYCLES)
    zero = zeros_like(compute)
    vb = cfg.value_bytes
    return (compute, zero, zero, _float_like(input_elems, compute) * vb, _float_like(output_elems, compute) * vb,
            (zero, zero))


def _float_like(x, like):
    """The twelfth round's ``num.float_like``."""
    if type(like) in (int, float, bool):
        return float(x)
    return np.broadcast_to(np.asarray(x, dtype=float), like.shape)


def _old_dram_cycles(x_bytes: float, w1_bytes: float, w2_bytes: float, channels: int, mults: int, burst_cyc: float):
    """The twelfth round's one-point branch of ``dram.dram_cycles``."""
    load = (dram.bursts(x_bytes), dram.bursts(w1_bytes), dram.bursts(w2_bytes), 0.0)
    busiest = 0.0
    for terms in dram.channel_terms(channels, mults):
        total = 0
        for i, sh in terms:
            total = total + load[i] * sh
        if not (busiest >= total or busiest != busiest):
            busiest = total
    return busiest * burst_cyc


def _old_layer_energy_j(macs, pool_ops, read, write, r):
    chip = macs * r.mac_pj
    chip = chip + 2.0 * (read + write) * r.sram_pj
    chip = chip + pool_ops * r.add_pj
    chip = chip * r.chip_scale
    return chip * r.vscale * 1e-12 + (read * r.dram_read_pj + write * r.dram_write_pj) * 1e-12


def _without_parts(values: tuple) -> tuple:
    """:func:`RM.layer_costs`' values without the energy parts added after the twelfth round (2026-11-27; checked
    in tests/test_energy_parts.py): the values the twelfth round's form gives."""
    k = RM._METRICS.index("compute_energy_j")
    assert RM._METRICS[k:] == ("compute_energy_j", "sram_energy_j", "dram_energy_j")
    return values[:k] + values[k + 3:]


def _old_layer_costs(f, macs, pool_ops, c):
    compute, mac, _, x_read, x_write, (w1, w2) = f
    burst = c.burst
    dram_ = _old_dram_cycles(x_read + x_write, w1, w2, c.channels, c.mults, burst)
    cycles = maximum(compute, dram_) + burst
    read = x_read + w1 + w2
    return (cycles, cycles / c.clock_hz, macs / (cycles * c.pbs * c.mults), read, x_write,
            _old_layer_energy_j(macs, pool_ops, read, x_write, c.energy), compute, dram_, f[2], mac, compute - mac,
            cycles - compute, dram_ > compute)


_OLD = {flows.conv_flow: _old_conv_flow, flows.fc_flow: _old_fc_flow, flows.pool_flow: _old_pool_flow}
_PRODUCTS = {flows.conv_flow: flows.conv_products, flows.fc_flow: flows.fc_products,
             flows.pool_flow: flows.pool_products}


def _fields(f) -> tuple:
    return (f.compute_cycles, f.mac_cycles, f.passes, f.x_read_bytes, f.x_write_bytes, tuple(f.w_bytes))


def _bits(x) -> bytes:
    """The float64 bits a value ends as in a layer's metric arrays (ints, bools and floats alike)."""
    return np.float64(x).tobytes()


# ---- the flows ----
@settings(max_examples=300, deadline=None)
@given(_CONFIG, st.data())
def test_rena_flows_with_table_products_equal_the_round12_flows(config, data):
    """Each flow with its layer products given (one point: Python floats) == computing them itself == the twelfth
    round's flow, value and type; on (1 x 1) arrays with product columns too. The configuration's filters per tile,
    MAC cycles per pass and float conversion are its own products."""
    rows, cols, mults, tpv, shared, vb = config
    cfg_py = flows.ArrayConfig(rows, cols, mults, tpv, shared, vb)
    cfg_np = flows.ArrayConfig(*(np.array([v]) for v in config))
    assert (cfg_py.tile_filters, cfg_py.pass_macs, cfg_py.to_float) == (rows * mults, rows * tpv, float)
    assert cfg_np.to_float is as_float
    for fn, args in _FLOWS:
        a = data.draw(args)
        products = _PRODUCTS[fn](*a)
        assert all(type(p) is float for p in products)
        got = fn(cfg_py, *a, products)
        want = _OLD[fn](cfg_py, *a)
        assert _fields(got) == _fields(fn(cfg_py, *a)) == want
        assert all(type(v) is float for v in (*_fields(got)[:5], *got.w_bytes))
        cols_ = [np.array([[v]]) for v in a]
        arr = fn(cfg_np, *cols_, _PRODUCTS[fn](*cols_))
        _same(got, arr)
        old_arr = _OLD[fn](cfg_np, *cols_)
        assert [np.asarray(v).item() for v in (*_fields(arr)[:5], *arr.w_bytes)] == [
            np.asarray(v).item() for v in (*old_arr[:5], *old_arr[5])]


def test_rena_flow_columns_equal_the_round12_flows():
    """Layers as (rows x 1) columns with their product columns, over many points == the twelfth round's flows on
    the same columns, element for element (the batch path)."""
    rng = np.random.default_rng(13)
    n = 200
    cols = [rng.integers(1, 1025, n), rng.integers(1, 1025, n), rng.integers(1, 3, n), rng.choice([1, 2, 4, 8, 16], n),
            rng.random(n) < 0.5, rng.choice([1.0, 2.0], n)]
    cfg = flows.ArrayConfig(*cols)
    shapes = {flows.conv_flow: rng.integers(1, 5000, (12, 4)), flows.fc_flow: rng.integers(1, 30000, (6, 3)),
              flows.pool_flow: rng.integers(1, 10**7, (6, 2))}
    for fn, layer_args in shapes.items():
        layer_cols = [a.reshape(-1, 1) for a in layer_args.T]
        got = fn(cfg, *layer_cols, _PRODUCTS[fn](*layer_cols))
        want = _OLD[fn](cfg, *layer_cols)
        for g, w in zip((*_fields(got)[:5], *got.w_bytes), (*want[:5], *want[5])):
            g, w = np.broadcast_arrays(g, w)
            assert g.dtype == w.dtype == np.float64 and g.shape == (len(layer_args), n)
            assert g.tobytes() == w.tobytes()


def test_rena_table_products_equal_the_layers():
    """The table's product columns are the products functions of its argument columns; one point's calls carry
    the layer's ints, the same products as Python floats, and float MACs and pooling ops."""
    for wl in _WORKLOADS:
        t = RM.layer_table(load_workload(wl).layers)
        for fn, cols in ((flows.conv_flow, t.conv), (flows.fc_flow, t.fc), (flows.pool_flow, t.pool)):
            if not cols:
                continue
            *layer_cols, products = cols
            want = _PRODUCTS[fn](*layer_cols)
            assert all(p.dtype == np.float64 and p.tobytes() == q.tobytes() for p, q in zip(products, want))
        for fn, args, macs, pool_ops in t.calls:
            *ints, products = args
            assert all(type(v) is int for v in ints) and products == _PRODUCTS[fn](*ints)
            assert all(type(p) is float for p in products) and type(macs) is float and type(pool_ops) is float


# ---- DRAM ----
_BYTES = st.one_of(st.integers(0, 10**12).map(float), st.sampled_from([0.0, 4096.0, 4097.0, 1e300]),
                   st.floats(0.0, 1e18), st.sampled_from([math.nan, math.inf]))


@settings(max_examples=500, deadline=None)
@given(_BYTES, _BYTES, _BYTES, st.integers(1, 16), st.integers(1, 2), st.floats(1.0, 400.0))
def test_rena_point_dram_cycles_equal_the_round12_loop_and_arrays(x, w1, w2, channels, mults, burst):
    """One point's DRAM cycles (channels looked up once, bursts inline, no I stream) == the twelfth round's loop
    over every channel, and == the array path, bit for bit (NaN and infinite bytes too)."""
    got = dram.point_dram_cycles(x, w1, w2, dram.point_channels(channels, mults), burst)
    want = _old_dram_cycles(x, w1, w2, channels, mults, burst)
    arr = dram.dram_cycles(np.array([[x]]), np.array([[w1]]), np.array([[w2]]), np.array([channels]),
                           np.array([mults]), np.array([burst])).item()
    assert type(got) is float
    assert _bits(got) == _bits(want) == _bits(arr)
    assert _bits(dram.dram_cycles(x, w1, w2, channels, mults, burst)) == _bits(want)


def test_rena_point_channels_keep_every_stream_but_instructions():
    """point_channels holds each channel of channel_terms once, without the I stream and empty channels."""
    for channels in range(1, 17):
        for mults in (1, 2):
            single, several = dram.point_channels(channels, mults)
            want = [tuple(t for t in chan if dram.STREAMS[t[0]] != "I") for chan in dram.channel_terms(channels, mults)]
            want = [chan for chan in want if chan]
            assert sorted([(s,) for s in single] + list(several)) == sorted(want)
            assert all(len(chan) > 1 for chan in several)


# ---- layer costs ----
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(_WORKLOADS))
def test_rena_layer_costs_equal_the_round12_form_bit_for_bit(seed, wl):
    """Every distinct costed layer of random points: layer_costs of one point == the twelfth round's (old flows,
    old DRAM loop, old energy) == the batch path's (layers x points) arrays, value by value."""
    rows = RENA.params.random_rows(10, np.random.default_rng(seed)) + [{}, {"target": "fpga"}]
    t = RM.layer_table(load_workload(wl).layers)
    if not t.calls:
        return
    pts = RENA.params.points(rows)
    cfg, eff = RENA._config(pts)
    c = RM.Costing(cfg.pbs, cfg.mults, pts["dram_channels"], eff["burst"], eff["clock_hz"],
                   RENA._energy_rates(pts, cfg, eff["vscale"]))
    for j, row in enumerate(rows):
        p = RM._point(RENA.params.points([row]))
        for fn, args, macs, pool_ops in t.calls:
            got = _without_parts(RM.layer_costs(fn(p.cfg, *args), macs, pool_ops, p.costing))
            want = _old_layer_costs(_OLD[fn](p.cfg, *args[:-1]), int(macs), int(pool_ops), p.costing)
            assert [_bits(v) for v in got] == [_bits(v) for v in want], (fn.__name__, args)
            cols_ = [np.array([[v]]) for v in args[:-1]]
            batch = _without_parts(RM.layer_costs(fn(cfg, *cols_, _PRODUCTS[fn](*cols_)), np.array([[macs]]),
                                                  np.array([[pool_ops]]), c))
            assert [_bits(v) for v in got] == [_bits(np.broadcast_to(v, (1, len(rows)))[0, j]) for v in batch]


# ---- the whole path ----
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(_WORKLOADS))
def test_rena_each_point_alone_equals_the_batch(seed, wl):
    """A study's trial (one point alone) gives exactly what the point gets inside a batch: every metric, state,
    reason, label and total, and the contract dictionary."""
    rows = RENA.params.random_rows(10, np.random.default_rng(seed))
    rows += [{}, {"target": "fpga"}, {"target": "asic", "array_ports": "separate", "transfer_bits": 16},
             {"dram_channels": 1, "mults_per_pb": 2}, {"dram_channels": 2, "mults_per_pb": 2}]
    assert_alone_equals_batch(RENA, wl, rows)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["vgg16", "bert_encoder", "resnet50"]))
def test_multicore_each_point_alone_equals_the_batch(seed, wl):
    """multicore: one point's configuration, totals and vector unit from its values read by C-level maps give
    exactly what the point gets inside a batch (bert_encoder: vector layers, so vector_unit too)."""
    assert_alone_equals_batch(MULTICORE, wl, _multicore_rows(4, seed))


def test_rena_op_energies_equal_the_technology_table():
    """_op_pj: the technology table's MAC and add energies of each width and node, as Python floats."""
    from archmodels import tech
    for bits in (8, 16):
        for node in tech.NODES_NM:
            dtype = tech.dtype_of(bits)
            got = RM._op_pj(bits, node)
            assert got == (float(tech.mac_energy_pj(dtype, node)), float(tech.op_energy_pj("add", dtype, node)))
            assert all(type(v) is float for v in got)

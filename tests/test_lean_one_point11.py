"""Issue 15, eleventh round: the lean models' one-point path (a study's trial) after its plumbing cuts gives the
very numbers of the batch path, bit for bit.

ReNA: the convolution flow reads its per-array pass, unload and fill cycles from the configuration
(``ArrayConfig.conv_pass``, made once per configuration instead of once per layer); ceiling divisions are
written inline; the byte counts are floats without ``as_float``; the ASIC area reads the technology table's PE
and MAC areas once per width and node (``resources._pe_mac_mm2``).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodels import get_model, tech
from archmodels.rena import flows, resources as res
from archmodels.testing import assert_alone_equals_batch

RENA = get_model("rena")

_CONFIG = st.tuples(st.integers(1, 1024), st.integers(1, 1024), st.integers(1, 2), st.sampled_from([1, 2, 4, 8, 16]),
                    st.booleans(), st.sampled_from([1.0, 2.0]))
_FLOWS = (
    (flows.conv_flow, st.tuples(st.integers(1, 64), st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 50176))),
    (flows.fc_flow, st.tuples(st.integers(1, 30000), st.integers(1, 30000), st.integers(1, 8))),
    (flows.pool_flow, st.tuples(st.integers(1, 10**7), st.integers(1, 10**7))),
)


def _same(got, want) -> None:
    """A flow of Python numbers equals the flow of one-element arrays, value and float type."""
    for key in ("compute_cycles", "mac_cycles", "passes", "x_read_bytes", "x_write_bytes"):
        a, b = getattr(got, key), getattr(want, key)
        assert type(a) is float and np.asarray(b).dtype == np.float64, key
        assert a == np.asarray(b).item(), key
    assert all(type(w) is float for w in got.w_bytes)
    assert tuple(got.w_bytes) == tuple(np.asarray(w).item() for w in want.w_bytes)


@settings(max_examples=300, deadline=None)
@given(_CONFIG, st.data())
def test_rena_flows_python_numbers_equal_arrays(config, data):
    """Each flow on one point's Python numbers == on (1 x 1) arrays; the configuration's conv_pass == the
    formulas it holds (overlapped / serial pass, unload per tile, fill), on numbers and on arrays."""
    rows, cols, mults, tpv, shared, vb = config
    cfg_py = flows.ArrayConfig(rows, cols, mults, tpv, shared, vb)
    cfg_np = flows.ArrayConfig(*(np.array([v]) for v in config))
    serial, overlapped = tpv * (cols + rows * mults) + 8, tpv * max(cols, rows) + 8
    want_pass = ((serial, tpv * cols * mults, 0) if shared else (overlapped, 0, 2 * tpv * cols))
    assert cfg_py.conv_pass == want_pass and all(type(v) is int for v in cfg_py.conv_pass)
    assert tuple(int(v.item()) for v in cfg_np.conv_pass) == want_pass
    for fn, args in _FLOWS:
        a = data.draw(args)
        _same(fn(cfg_py, *a), fn(cfg_np, *(np.array([[v]]) for v in a)))


def test_rena_flows_batch_columns_equal_each_layer_alone():
    """Layers as (rows x 1) columns over points == each layer of each point alone in Python numbers."""
    rng = np.random.default_rng(11)
    n = 64
    cols = [rng.integers(1, 1025, n), rng.integers(1, 1025, n), rng.integers(1, 3, n), rng.choice([1, 2, 4, 8, 16], n),
            rng.random(n) < 0.5, rng.choice([1.0, 2.0], n)]
    cfg_np = flows.ArrayConfig(*cols)
    shapes = {flows.conv_flow: rng.integers(1, 3000, (9, 4)), flows.fc_flow: rng.integers(1, 30000, (5, 3)),
              flows.pool_flow: rng.integers(1, 10**6, (5, 2))}
    for fn, layer_args in shapes.items():
        batch = fn(cfg_np, *(a.reshape(-1, 1) for a in layer_args.T))
        for j in range(n):
            cfg_py = flows.ArrayConfig(*(c[j].item() for c in cols))
            for r, a in enumerate(layer_args):
                got = fn(cfg_py, *(int(v) for v in a))
                for key in ("compute_cycles", "mac_cycles", "passes", "x_read_bytes", "x_write_bytes"):
                    assert getattr(got, key) == np.broadcast_to(getattr(batch, key), (len(layer_args), n))[r, j], key
                assert got.w_bytes == tuple(np.broadcast_to(w, (len(layer_args), n))[r, j] for w in batch.w_bytes)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 1024 * 1024), st.integers(1, 2), st.sampled_from([8, 16]), st.sampled_from(tech.NODES_NM),
       st.floats(0.1, 3000.0))
def test_rena_asic_area_equals_the_technology_table(pbs, mults, bits, node, clock):
    """The once-per-(width, node) PE and MAC areas give the technology table's numbers, on numbers and arrays."""
    dtype = tech.dtype_of(bits)
    assert res._pe_mac_mm2(bits, node) == (tech.pe_logic_area_mm2(dtype, node, 1.0), tech.mac_area_mm2(dtype, node))
    got = res.asic_area_parts_mm2(pbs, mults, bits, node, clock)
    want = res.asic_area_parts_mm2(np.array([pbs]), np.array([mults]), bits, node, np.array([clock]))
    assert {k: float(v) for k, v in got.items()} == {k: v.item() for k, v in want.items()}
    pe = tech.pe_logic_area_mm2(dtype, node, 1.0) + (mults - 1) * tech.mac_area_mm2(dtype, node)
    assert got["logic"] == float(np.asarray(pbs * pe) * res.logic_area_factor(clock, node))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["vgg16", "alexnet", "fc2", "matmul:m=300,k=200,n=50"]))
def test_rena_point_alone_equals_the_batch(seed, wl):
    """Random points of the whole declared space, each alone == in a batch (metrics, states, totals, reasons)."""
    rows = RENA.params.random_rows(12, np.random.default_rng(seed))
    rows += [{}, {"target": "fpga"}, {"target": "asic", "array_ports": "separate", "transfer_bits": 16}]
    assert_alone_equals_batch(RENA, wl, rows)


MULTICORE = get_model("multicore")


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["vgg16", "fc2", "mobilenet_v2"]))
def test_multicore_point_alone_equals_the_batch(seed, wl):
    """Multicore: the one-point path's placement labels (``num.objects``, one fill) and every number equal the
    batch's, for random points of the whole declared space and each placement."""
    rows = MULTICORE.params.random_rows(8, np.random.default_rng(seed))
    rows += [{**rows[0], "placement": p} for p in ("B", "T1", "TR1", "T2", "TR2")]
    batch = assert_alone_equals_batch(MULTICORE, wl, rows)
    for i, row in enumerate(rows[-5:], len(rows) - 5):
        one = MULTICORE.evaluate_points(wl, [row])
        labels = [lb.labels["placement"] for lb in one.layers]
        assert all(got.dtype == object and got.shape == (1,) for got in labels)
        costed = [got[0] for got in labels if got[0] is not None]  # (vector layers: no placement, as in the batch)
        assert costed and set(costed) == {row["placement"]} == {batch.points["placement"][i]}

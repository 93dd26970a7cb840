"""atomswitch's one-point path, eleventh round (issue 15): the model totals of one point from the Python floats its
stages keep, and the leakage on Python numbers, give the very bits of the array path."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.atomswitch import energy as E
from archmodels.atomswitch import model as AM
from archmodels.atomswitch import layers as L
from archmodels.atomswitch.layers import plan
from archmodels.testing import assert_alone_equals_batch
from workloads import load_workload

M = get_model("atomswitch")

#: convolutions, fused and lone pools, FC layers; vector layers (the host fallback) and unsupported ones
WORKLOADS = ("lenet", "alexnet", "vgg16", "fc2", "mobilenet_v2", "bert_encoder", "matmul:m=300,k=500,cols=7")


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space, some with a tiny or a huge chip (infeasible / feasible)."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    return rows + [{**r, "chip_area_mm2": a} for r in rows[:3] for a in (0.01, 1e6)]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), wl=st.sampled_from(WORKLOADS))
def test_each_point_alone_equals_the_batch(seed, wl):
    assert_alone_equals_batch(M, wl, _rows(12, seed))


def _plain(layers):
    """The layers without the Python sizes the one-point path keeps: model_totals then takes the array path."""
    out = []
    for lb in layers:
        d = dict(lb.__dict__)
        d.pop("_sizes", None)
        new = object.__new__(type(lb))
        new.__dict__.update(d)
        out.append(new)
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), wl=st.sampled_from(("lenet", "alexnet", "vgg16", "fc2", "mobilenet_v2")))
def test_point_totals_equal_the_array_path(seed, wl):
    """model_totals of one point from the stages' ``_sizes`` == from their metric arrays (layer_sums), key order
    and bits."""
    w = load_workload(wl)
    for row in _rows(3, seed):
        pts = M.params.points([row])
        layers = M.evaluate_layers(w, pts)
        # the fast path is taken when every layer is a stage of the array (mobilenet_v2 has others)
        assert (AM._point_sizes(layers) is not None) == all(s.role != "unsupported" for s in plan(w))
        fast = M.model_totals(w, pts, layers)
        slow = M.model_totals(w, pts, _plain(layers))
        assert list(fast) == list(slow)
        for k in fast:
            assert fast[k].shape == slow[k].shape == (1,), k
            assert fast[k].tobytes() == slow[k].tobytes(), (k, fast[k], slow[k])


def test_point_sizes_need_every_layer():
    """A layer without Python sizes (unsupported, vector) sends model_totals to the array path."""
    w = load_workload("lenet")
    pts = M.params.points([{}])
    layers = M.evaluate_layers(w, pts)
    assert AM._point_sizes(_plain(layers)[:1] + layers[1:]) is None
    assert AM._point_sizes(M.evaluate_layers(w, M.params.points([{}, {}]))) is None  # a batch keeps none


sizes = st.one_of(st.floats(0, 1e12), st.integers(0, 2**40).map(float), st.sampled_from([0.0, 1.0, 3e9]))


@settings(max_examples=300, deadline=None)
@given(mults=sizes, words=sizes, bits=st.sampled_from([8, 16, 32]))
def test_static_power_on_numbers_equals_arrays(mults, words, bits):
    got = E.static_power_w(mults, words, bits)
    assert type(got) is float
    want = E.static_power_w(np.array([mults]), np.array([words]), np.array([bits]))
    assert np.array([got]).tobytes() == want.tobytes()
    mixed = E.static_power_w(np.array([mults, 1.0]), np.array([words, 2.0]), np.array([bits, 8 if bits != 8 else 16]))
    assert np.array([got]).tobytes() == mixed[:1].tobytes()  # the several-widths path too


@pytest.mark.parametrize("wl", ["lenet", "vgg16"])
def test_study_trial_totals_equal_the_batch(wl):
    """The contract totals of one point (the study's trial) are those of the same point inside a batch."""
    rows = _rows(8, 5)
    batch = M.evaluate_points(wl, rows)
    for i, r in enumerate(rows):
        one = M.evaluate_points(wl, [r])
        for k, v in one.totals.items():
            assert v.tobytes() == batch.totals[k][i:i + 1].astype(v.dtype).tobytes(), (i, k)


@settings(max_examples=200, deadline=None)
@given(banks=st.lists(st.one_of(st.integers(1, 2**31), st.floats(0, 1e9)), min_size=1, max_size=30),
       nbytes=st.sampled_from([1.0, 2.0, 4.0]), clear=st.booleans())
def test_point_sram_pj_equals_the_array_call(banks, nbytes, clear):
    """One point's SRAM energies (Python floats, remembered) == the one numpy call over all banks, memo empty
    or filled."""
    if clear:
        E._SRAM_PJ.clear()
    got = E.point_sram_pj(banks, nbytes)
    want = E.sram_pj_per_byte(np.array([float(b) for b in banks]), nbytes)
    assert np.array(got).tobytes() == want.tobytes()
    assert np.array(E.point_sram_pj(banks, nbytes)).tobytes() == want.tobytes()  # from the memo
    assert len(E._SRAM_PJ) <= E._SRAM_PJ_MAX


@pytest.mark.parametrize("bits", [8, 16, 32])
def test_point_rates_equal_the_array_rates(bits):
    """energy_rates of one point (remembered) == the same point's rates in a two-point batch."""
    for dram in M.params.get("dram").choices:
        one = E.energy_rates(np.array([bits]), np.array([dram], dtype=object))
        pair = E.energy_rates(np.array([bits, 8 if bits != 8 else 16]), np.array([dram, dram], dtype=object))
        for f in ("nbytes", "mac_pj", "add_pj", "read_pj", "write_pj"):
            a, b = getattr(one, f), np.broadcast_to(getattr(pair, f), (2,))[0]
            assert type(a) is float and np.float64(a).tobytes() == np.float64(b).tobytes(), (bits, dram, f)


def _cost_fields(k):
    sram = [(a.words, a.bank_words) for a in k.sram]
    return [(name, np.asarray(v).tolist()) for name, v in
            [*k.states.items(), *((f, getattr(k, f)) for f in L.STACKED), ("channels_phys", k.channels_phys)]] + \
        [("sram", np.asarray(w).tolist(), np.asarray(b).tolist()) for w, b in sram]


@pytest.mark.parametrize("wl", ["lenet", "alexnet", "vgg16", "resnet50", "mobilenet_v2"])
def test_conv_shape_made_with_the_group_equals_one_made_per_call(wl):
    """conv_stage with the stage group's ConvShape (made once per workload) == with one made in the call, on the
    one-point rows (Python numbers) and on the groups (arrays over stages x points); the shape is read-only."""
    w = load_workload(wl)
    t = L.tables(w)
    rows = _rows(6, 11)
    for r in rows:
        c = M._ctx(t.max_multipliers, M.params.points([r]))
        for g in t.rows:
            if g is not None and g.role == "conv":
                assert g.shape is not None
                assert _cost_fields(L.conv_stage(g, c)) == _cost_fields(L.conv_stage(replace(g, shape=None), c))
    c = M._ctx(t.max_multipliers, M.params.points(rows))
    g = t.groups.get("conv")
    if g is not None:
        assert _cost_fields(L.conv_stage(g, c)) == _cost_fields(L.conv_stage(replace(g, shape=None), c))
        assert not g.shape.pixels.flags.writeable

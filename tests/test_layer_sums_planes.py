"""``result.layer_sums`` summing consecutive planes where they lie (``layerarrays._SharedRows.planes``, issue 15).

EMAX's results cube holds the keys its model totals add (``_SUMMED_KEYS``) as consecutive planes, so
``layer_sums`` adds them in place instead of stacking a (keys x layers x points) copy first. The former path (the
copy, then ``row_sum``) is the oracle: bit for bit, NaNs of both signs and -0.0 included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model, layerarrays
from archmodels.layerarrays import layer_batches
from archmodels.result import ROW_LOOP_FROM, _cube_sums, _layer_cube, layer_sums
from workloads import load_workload

LAYERS = list(load_workload("vgg16-conv").layers)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.int64)


def _former(layers, keys, n, from_zero):
    """The former ``layer_sums`` (a stack, then the sums), verbatim but for names."""
    cube = _layer_cube(layers, keys, n, from_zero)
    assert cube is not None
    return dict(zip(keys, _cube_sums(cube)))


def _cube(rng, planes: int, rows: int, n: int) -> np.ndarray:
    cube = rng.standard_normal((planes, rows, n))
    u = rng.random(cube.shape)
    cube[u < 0.25] = np.nan
    cube[(u >= 0.25) & (u < 0.5)] = -np.nan  # (NaNs of both signs meet: the sign a sum keeps is checked)
    cube[(u >= 0.5) & (u < 0.55)] = -0.0
    cube[(u >= 0.55) & (u < 0.57)] = np.inf
    return cube


def _layers(cube: np.ndarray, names: list[str]):
    rows, n = cube.shape[1:]
    metrics = {k: cube[j] for j, k in enumerate(names)}
    return layer_batches(LAYERS[:rows], range(rows), n, metrics, {}), metrics


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 18), n=st.sampled_from([1, 3, 100, 130, 257, 1000, 4099]),
       extra=st.integers(0, 3), start=st.integers(0, 3), k=st.integers(1, 11), from_zero=st.booleans())
def test_planes_sum_as_the_copy(seed, rows, n, extra, start, k, from_zero):
    """Any consecutive run of planes: the same bits as the copy's sums (the oracle, on copies of the arrays)."""
    rng = np.random.default_rng(seed)
    start = min(start, extra)
    names = [f"m{j}" for j in range(k + extra)]
    cube = _cube(rng, k + extra, rows, n)
    layers, metrics = _layers(cube, names)
    keys = names[start:start + k]
    want = _former(_layers(cube.copy(), names)[0], keys, n, from_zero)
    used = layers[0]._shared.planes(layers, keys) is not None
    assert used
    got = layer_sums(layers, keys, n, from_zero)
    assert list(got) == keys
    for key in keys:
        assert np.array_equal(_bits(got[key]), _bits(want[key])), key
    assert np.array_equal(_bits(cube), _bits(np.stack([metrics[j] for j in names])))  # nothing written


def test_planes_only_where_they_lie_so():
    """A view (no copy) of consecutive planes in the keys' order; None for other orders, gaps, other bases."""
    rng = np.random.default_rng(3)
    names = ["a", "b", "c", "d"]
    cube = _cube(rng, 4, 5, 300)
    layers, _ = _layers(cube, names)
    shared = layers[0]._shared
    view = shared.planes(layers, ["b", "c", "d"])
    assert view is not None and np.shares_memory(view, cube) and view.shape == (3, 5, 300)
    assert shared.planes(layers, ["c", "b"]) is None  # order
    assert shared.planes(layers, ["a", "c"]) is None  # gap
    assert shared.planes(layers[:4], ["a", "b"]) is None  # not the call's layers
    other, _ = _layers(cube.copy(), names)
    mixed = layer_batches(LAYERS[:5], range(5), 300, {"a": cube[0], "b": other[0]._shared.metrics["b"]}, {})
    assert mixed[0]._shared.planes(mixed, ["a", "b"]) is None  # two bases
    cols = np.asfortranarray(cube)
    f_layers, _ = _layers(cols, names)
    assert f_layers[0]._shared.planes(f_layers, ["a", "b"]) is None  # not C-ordered
    assert ROW_LOOP_FROM > 1  # (below it layer_sums keeps the copy: row_sum's accumulate)


def test_emax_batches_sum_their_planes(monkeypatch):
    """EMAXV and EMAXVR batches: the model totals' sums come from the planes, equal to the copy's, and the
    contract totals too."""
    seen = []
    planes = layerarrays._SharedRows.planes
    monkeypatch.setattr(layerarrays._SharedRows, "planes",
                        lambda self, layers, keys: seen.append(planes(self, layers, keys)) or seen[-1])
    from archmodels.emax.model import _SUMMED_KEYS

    for arch, wl in (("emaxv", "vgg16-conv"), ("emaxvr", "alexnet")):
        model, work = get_model(arch), load_workload(wl)
        rng = np.random.default_rng(5)
        res = model.evaluate_batch(work, model.params.points(model.params.random_rows(60, rng)))
        assert seen and seen[-1] is not None
        want = _former(res.layers, _SUMMED_KEYS, 60, True)
        got = layer_sums(res.layers, _SUMMED_KEYS, 60, from_zero=True)
        for key in _SUMMED_KEYS:
            assert np.array_equal(_bits(got[key]), _bits(want[key])), (arch, key)

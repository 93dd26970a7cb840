"""archmodels.num: numpy's elementwise functions on Python numbers (a model's one-point path) give numpy's
results on arrays (its batch path), NaN, infinities and signed zeros included, and Python numbers out."""

from __future__ import annotations

import math

import numpy as np

from archmodels.num import ceil, ceil_div, max_of, maximum, minimum, objects, where


def _same(a: float, b: float) -> bool:
    return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (math.isnan(a) and math.isnan(b))


def test_helpers_give_numpy_results_on_python_numbers():
    nan = math.nan
    xs = [0.0, -0.0, 1.0, 2.5, -3.0, 7, 3, nan, 1e300, math.inf]
    for a in xs:
        for b in xs:
            want_min, want_max = np.minimum(np.array([a]), b)[0], np.maximum(np.array([a]), b)[0]
            assert _same(float(minimum(a, b)), float(want_min)) and _same(float(maximum(a, b)), float(want_max))
            assert _same(float(where(a < b, a, b)), float(np.where(np.array([a]) < b, a, b)[0]))
            for c in xs[:5] + [nan]:
                want = np.maximum.reduce([np.array([float(a)]), np.array([b]), np.array([c]), np.array([2.0])])[0]
                got = max_of(float(a), b, c, 2.0)
                assert type(got) is float and _same(got, float(want))
                arr = max_of(np.array([float(a)]), np.array([b]), np.array([c]), np.array([2.0]))
                assert _same(float(arr[0]), float(want))
    for x in [0.0, 0.5, 1.0, 2.0000001, 4097.0, 1e17 + 0.5, 12345.999, math.inf, nan]:
        got = ceil(x)
        assert type(got) is float and _same(got, float(np.ceil(np.array([x]))[0]))
    for a in range(1, 60):
        for b in (1, 2, 7, 16, 1024):
            assert ceil_div(a, b) == int(ceil_div(np.array([a]), np.array([b]))[0]) == math.ceil(a / b)


def test_helpers_on_many_random_values():
    rng = np.random.default_rng(7)
    n = np.concatenate([np.arange(1, 2100), rng.integers(1, 1 << 40, 2000)])
    assert [ceil_div(int(a), int(b)) for a, b in zip(n, n[::-1])] == ceil_div(n, n[::-1]).tolist()
    x, y = rng.uniform(0, 1e6, 500), rng.uniform(0, 1e6, 500)
    assert [ceil(float(a) / float(b)) for a, b in zip(x, y)] == np.ceil(x / y).tolist()
    assert [maximum(float(a), float(b)) for a, b in zip(x, y)] == np.maximum(x, y).tolist()
    assert [minimum(float(a), float(b)) for a, b in zip(x, y)] == np.minimum(x, y).tolist()
    assert [where(bool(a > b), float(a), 0.0) for a, b in zip(x, y)] == np.where(x > y, x, 0.0).tolist()


def test_objects_is_np_full_of_objects():
    """num.objects: np.full(shape, value, dtype=object), element for element and in shape (0-d, 1-d, 2-d)."""
    for shape in ((), 0, 1, 4096, (3, 5)):
        for value in ("", "clock above the maximum", None, 3):
            got, want = objects(shape, value), np.full(shape, value, dtype=object)
            assert got.dtype == want.dtype == object and got.shape == want.shape
            assert got.tolist() == want.tolist() and all(g is value for g in got.reshape(-1))

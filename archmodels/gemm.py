"""One GEMM, one cost: the equivalent forms of a matrix product, and the choice between them.

A product Y[n x m] = X[n x k] W[k x m] with n > 1 is the same computation
written three ways: an FC layer of k inputs and m outputs over a batch of n
vectors (a token-wise Linear), a 1x1 convolution from k to m channels over
an n-pixel plane, or a ``MatMul(m, k, n)``. Each model maps each form with
its own rules; a mapper that meets one of them may run it as any other, so
every form is evaluated and, per design point, the fastest feasible one is
kept (ties: fewer joules). The layer keeps its own kind and MACs and reports
the form it ran as (``gemm_form``). Products with n = 1 (a single vector, the
FC layers the papers measure) keep the model's own path: the specs say how
FC runs there (ReNA's ring, EMAX's FC mapping).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from workloads.layers import FC, Conv2D, Layer, MatMul

from .result import LayerBatch, metric_of

FORMS = ("fc", "conv", "matmul")


def _plane(pixels: int) -> tuple[int, int]:
    """(h, w) with h * w = pixels, as square as the divisors allow."""
    h = max(d for d in range(1, math.isqrt(pixels) + 1) if pixels % d == 0)
    return h, pixels // h


def shape(layer: Layer) -> tuple[int, int, int] | None:
    """(inputs k, outputs m, vectors n) of a dense product with n > 1, else None."""
    if isinstance(layer, FC):
        k, m, n = layer.inputs, layer.outputs, layer.batch
    elif isinstance(layer, Conv2D):
        if (layer.kernel_h, layer.kernel_w, layer.stride, layer.padding, layer.groups) != (1, 1, 1, 0, 1):
            return None
        k, m, n = layer.in_ch, layer.out_ch, layer.in_h * layer.in_w
    elif type(layer) is MatMul and layer.batch == 1:
        k, m, n = layer.k, layer.m, layer.n
    else:
        return None
    return (k, m, n) if n > 1 else None


def forms(layer: Layer) -> dict[str, Layer]:
    """The other forms of ``layer`` (same name), empty when it is not a product with n > 1."""
    kmn = shape(layer)
    if kmn is None:
        return {}
    k, m, n = kmn
    h, w = _plane(n)
    every = {
        "fc": FC(layer.name, inputs=k, outputs=m, batch=n, activation=getattr(layer, "activation", None)),
        "conv": Conv2D(layer.name, in_ch=k, out_ch=m, in_h=h, in_w=w, activation=getattr(layer, "activation", None)),
        "matmul": MatMul(layer.name, m=m, k=k, n=n),
    }
    return {f: lay for f, lay in every.items() if f != own_form(layer)}


_OWN_FORM = {"fc": "fc", "conv": "conv"}


def own_form(layer: Layer) -> str:
    return _OWN_FORM.get(layer.kind, "matmul")


def fastest(lb: LayerBatch) -> tuple[np.ndarray, np.ndarray]:
    """The default rank of a form: time, then energy."""
    return metric_of(lb, "time_s"), metric_of(lb, "energy_j")


def _all_of(better: np.ndarray, a, b):
    """``np.where(better, a, b)`` where ``better`` is all true: a copy of ``a`` when it is an array of ``b``'s
    dtype and shape (the same values and dtype ``np.where`` gives, one copy instead of a selection), else
    ``np.where`` itself (other dtypes, lazy text columns)."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape:
        return a.copy()
    return np.where(better, a, b)


def pick(base: LayerBatch, alts: dict[str, LayerBatch], keep: np.ndarray,
         rank: Callable[[LayerBatch], tuple[np.ndarray, np.ndarray]] = fastest) -> LayerBatch:
    """Per point, the best feasible of ``base`` and ``alts`` by ``rank`` (a first value, ties within 1e-9
    broken by a second; :func:`fastest` by default; a model whose mapping criterion ranks by something else
    passes its own), not where ``keep`` (e.g. a later layer is fused into this one as written). Returns ``base``
    updated in place."""
    n = base.n
    form = np.full(n, own_form(base.layer), dtype=object) if n > 1 else np.array([own_form(base.layer)], dtype=object)
    first, second = rank(base)
    one = n == 1  # one point (a study's trial): the comparisons on Python floats, the same rule
    if one:
        best_t1 = float(first[0]) if base.feasible[0] else math.inf
        best_e1 = float(second[0])
    else:
        best_t = np.where(base.feasible, first, np.inf)
        best_e = second.copy()
    for name, alt in alts.items():
        first, second = rank(alt)
        if one:
            t1 = float(first[0]) if alt.feasible[0] and not keep[0] else math.inf
            e1 = float(second[0])
            if not (t1 < best_t1 * (1 - 1e-9) or (t1 <= best_t1 * (1 + 1e-9) and e1 < best_e1 and math.isfinite(t1))):
                continue
            better = np.ones(1, dtype=bool)
            best_t1, best_e1 = t1, e1
        else:
            t = np.where(alt.feasible & ~keep, first, np.inf)
            better = (t < best_t * (1 - 1e-9)) | ((t <= best_t * (1 + 1e-9)) & (second < best_e)
                                                 & np.isfinite(t))
            if not better.any():
                continue
        where = _all_of if one else np.where  # one point: the better form wins it whole
        for key, arr in base.metrics.items():
            if key in alt.metrics:
                base.metrics[key] = where(better, alt.metrics[key], arr)
        for key in set(base.states) | set(alt.states):
            a = alt.states.get(key, np.zeros(n))
            base.states[key] = where(better, a, base.states.get(key, np.zeros(n)))
        for key, arr in alt.labels.items():
            if key in base.labels and key != "fused_into":
                base.labels[key] = where(better, arr, base.labels[key])
        base.feasible = where(better, alt.feasible, base.feasible)
        base.reason = where(better, alt.reason, base.reason)
        form = np.where(better, name, form)
        if not one:
            best_t = np.where(better, t, best_t)
            best_e = np.where(better, second, best_e)
    base.labels["gemm_form"] = form
    return base

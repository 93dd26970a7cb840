"""Lowering of CNN layers to dense matrix products (im2col).

Used by models that only run matrix products (IMAX) so that they can be
compared with the CNN accelerators on the same networks. A convolution of
``G`` groups becomes ``G`` products ``W_g[oc/G x (ic/G * kh * kw)] @
X_g[(ic/G * kh * kw) x (oh * ow)]``; an FC layer becomes ``W[out x in] @
X[in x batch]``. MAC counts are preserved exactly.
"""

from __future__ import annotations

from .layers import FC, Conv2D, Layer, MatMul


def as_matmuls(layer: Layer) -> tuple[MatMul, ...]:
    """The matrix products equivalent to ``layer`` (empty for pooling)."""
    if isinstance(layer, MatMul):
        return (layer,)
    if isinstance(layer, FC):
        return (MatMul(layer.name, m=layer.outputs, k=layer.inputs, n=layer.batch),)
    if isinstance(layer, Conv2D):
        shape = dict(m=layer.oc_per_group, k=layer.ic_per_group * layer.kernel_h * layer.kernel_w,
                     n=layer.out_h * layer.out_w)
        if layer.groups == 1:
            return (MatMul(layer.name, **shape),)
        return tuple(MatMul(f"{layer.name}.g{g}", **shape) for g in range(layer.groups))
    return ()

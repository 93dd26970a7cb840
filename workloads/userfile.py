"""A user's own workload: a YAML file of layers, validated by a schema.

```yaml
name: tinynet            # optional, defaults to the file name
input: [3, 32, 32]       # channels, height, width (needed when the first layer is conv/pool)
layers:
  - {name: c1, type: conv, out_ch: 16, kernel: 3, padding: 1}
  - {name: p1, type: pool, kernel: 2, stride: 2, mode: max}
  - {name: f1, type: fc, outputs: 10}
  - {name: mm, type: matmul, m: 64, k: 64, n: 64, batch: 12}
  - {name: sm, type: vector, op: softmax, elems: 49152, rows: 768}
```

A ``vector`` layer is work without MACs (``workloads.layers.Vector``):
``op`` is an elementwise op (``add``, ``gelu``, ...; inputs default to the
previous output's size), ``softmax`` or ``layer_norm`` over ``elems`` in
``rows`` rows, or ``reduce_sum|max|min|mean`` of ``elems`` to ``rows``.
``elems`` defaults to the previous layer's output size.

Shapes flow from layer to layer: a conv/pool takes the previous output's
(channels, height, width); an fc takes its element count. Any inferred field
can be given explicitly (``in_ch``, ``in_h``, ``in_w``, ``inputs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workloads import yamlio
from workloads.errors import UserError, pydantic_message

from .layers import (ELEMENTWISE_OPS, FC, Conv2D, Layer, MatMul, Pool, Workload, elementwise, layer_norm, reduction,
                     softmax)


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class ConvSpec(_Base):
    type: Literal["conv"]
    out_ch: int = Field(ge=1)
    kernel: int | None = Field(default=None, ge=1)
    kernel_h: int | None = Field(default=None, ge=1)
    kernel_w: int | None = Field(default=None, ge=1)
    stride: int = Field(default=1, ge=1)
    padding: int = Field(default=0, ge=0)
    groups: int = Field(default=1, ge=1)
    dilation: int = Field(default=1, ge=1)
    in_ch: int | None = Field(default=None, ge=1)
    in_h: int | None = Field(default=None, ge=1)
    in_w: int | None = Field(default=None, ge=1)
    activation: Literal["relu"] | None = None


class PoolSpec(_Base):
    type: Literal["pool"]
    kernel: int = Field(ge=1)
    stride: int | None = Field(default=None, ge=1)
    padding: int = Field(default=0, ge=0)
    mode: Literal["max", "avg"] = "max"
    channels: int | None = Field(default=None, ge=1)
    in_h: int | None = Field(default=None, ge=1)
    in_w: int | None = Field(default=None, ge=1)


class FCSpec(_Base):
    type: Literal["fc"]
    outputs: int = Field(ge=1)
    inputs: int | None = Field(default=None, ge=1)
    batch: int = Field(default=1, ge=1)
    activation: Literal["relu"] | None = None


class MatMulSpec(_Base):
    type: Literal["matmul"]
    m: int = Field(ge=1)
    k: int = Field(ge=1)
    n: int = Field(ge=1)
    batch: int = Field(default=1, ge=1)


VECTOR_OPS = tuple(ELEMENTWISE_OPS) + ("softmax", "layer_norm", "reduce_sum", "reduce_max", "reduce_min",
                                       "reduce_mean")


class VectorSpec(_Base):
    type: Literal["vector"]
    op: Literal[VECTOR_OPS]  # type: ignore[valid-type]
    elems: int | None = Field(default=None, ge=1)
    in_elems: int | None = Field(default=None, ge=1)
    rows: int = Field(default=1, ge=1)


LayerSpec = Annotated[Union[ConvSpec, PoolSpec, FCSpec, MatMulSpec, VectorSpec], Field(discriminator="type")]


class WorkloadFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    input: tuple[int, int, int] | None = None
    layers: list[LayerSpec] = Field(min_length=1)


def load(path: str | Path) -> Workload:
    """Read and shape-check a workload YAML file."""
    path = Path(path)
    try:
        raw = yamlio.load(path.read_text())
    except OSError as exc:
        raise UserError(f"{path}: cannot read workload file: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    try:
        spec = WorkloadFile.model_validate(raw)
    except ValidationError as exc:
        raise UserError(f"{path}: {pydantic_message(exc, WorkloadFile.model_fields)}") from None
    layers: list[Layer] = []
    shape: tuple[int, int, int] | None = spec.input  # (channels, h, w) flowing through
    for i, ls in enumerate(spec.layers):
        where = f"{path}: layers.{i} ({ls.name})"
        try:
            layer, shape = _build(ls, shape, where)
        except ValueError as exc:
            raise UserError(f"{where}: {exc}") from None
        layers.append(layer)
    try:
        return Workload(spec.name or path.stem, tuple(layers))
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from None


def _need(value, inferred, key: str, where: str):
    if value is not None:
        return value
    if inferred is None:
        raise UserError(f"{where}: {key} cannot be inferred (no previous layer and no 'input'); give it")
    return inferred


def _build(ls, shape, where):
    c, h, w = shape if shape else (None, None, None)
    if isinstance(ls, ConvSpec):
        kh = ls.kernel_h or ls.kernel
        kw = ls.kernel_w or ls.kernel
        if kh is None or kw is None:
            raise UserError(f"{where}: kernel (or kernel_h and kernel_w) is required")
        layer = Conv2D(
            ls.name, in_ch=_need(ls.in_ch, c, "in_ch", where), out_ch=ls.out_ch,
            kernel_h=kh, kernel_w=kw, in_h=_need(ls.in_h, h, "in_h", where),
            in_w=_need(ls.in_w, w, "in_w", where), stride=ls.stride, padding=ls.padding,
            groups=ls.groups, dilation=ls.dilation, activation=ls.activation,
        )
        return layer, (layer.out_ch, layer.out_h, layer.out_w)
    if isinstance(ls, PoolSpec):
        layer = Pool(
            ls.name, channels=_need(ls.channels, c, "channels", where),
            in_h=_need(ls.in_h, h, "in_h", where), in_w=_need(ls.in_w, w, "in_w", where),
            kernel=ls.kernel, stride=ls.stride or ls.kernel, padding=ls.padding, mode=ls.mode,
        )
        return layer, (layer.channels, layer.out_h, layer.out_w)
    if isinstance(ls, FCSpec):
        flat = c * h * w if shape else None
        layer = FC(ls.name, inputs=_need(ls.inputs, flat, "inputs", where), outputs=ls.outputs,
                   batch=ls.batch, activation=ls.activation)
        return layer, (layer.outputs, 1, 1)
    if isinstance(ls, VectorSpec):
        flat = c * h * w if shape else None
        elems = _need(ls.elems, flat, "elems", where)
        if ls.op == "softmax":
            layer = softmax(ls.name, elems, ls.rows)
        elif ls.op == "layer_norm":
            layer = layer_norm(ls.name, elems, ls.rows)
        elif ls.op.startswith("reduce_"):
            return reduction(ls.name, ls.op, elems, ls.rows), (ls.rows, 1, 1)
        else:
            layer = elementwise(ls.name, ls.op, elems, in_elems=ls.in_elems)
        return layer, (shape if shape and flat == elems else (elems, 1, 1))
    layer = MatMul(ls.name, m=ls.m, k=ls.k, n=ls.n, batch=ls.batch)
    return layer, (layer.m, 1, layer.n)

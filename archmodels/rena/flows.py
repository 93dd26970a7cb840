"""ReNA's processing flows on the PB array: compute cycles and DRAM bytes per layer.

Pure functions over numpy arrays of design points (spec ``rena.md`` §2-§3), or over Python numbers for one
layer of one point (the one-point path, :mod:`archmodels.num`: the same formulas, the same values).
Time spent waiting for DRAM is added by :mod:`archmodels.rena.dram`; the
model combines the two as ``max(compute, dram)`` (the transfer part runs
independently of the array, §3).

Notation: an N x M array (``rows`` x ``cols``), ``m`` multipliers per PB,
``tpv`` transfers per value on a buffer <-> array lane (``ceil(bits /
transfer_bits)``: 1 on the FPGA port, 4 on the ASIC, §3), one lane per array
row.

Convolution (§2, Figure 6) -- tiling
------------------------------------
* Array **rows = filters**: all PBs of a row use the same weight at each step,
  so a row computes one filter (per multiplier: the second multiplier of a
  PB computes a second filter with the same input, §3), ``N * m`` filters per
  tile.
* Array **columns = output pixels**: ``M`` pixels per tile.
* A **pass** loads ``N`` window elements of each column's pixel into the
  column's PBs (``M`` cycles per lane), then ``N`` shift-and-MAC steps (the
  inputs circulate down the column, each row receives one weight per step),
  so a pass MACs a chunk of ``N`` window elements. A window of ``T``
  elements takes ``ceil(T / N)`` passes; the partial sums stay in the PBs
  between the passes of a tile, and the tile's outputs leave to the left
  once (``M`` cycles per lane), after its last pass.
* Overlap: with separate input, weight and output ports (the FPGA port, §3)
  load, MAC and unload of consecutive passes overlap, a pass costs
  ``tpv * max(M, N)`` plus the control cycles, and only the first load and
  the last unload of a layer show. With one shared buffer <-> array
  interface (our reading of the ASIC's "4 transfers of 2 bits", §3) the
  input load and the weight feed of a pass take turns on it, and the unload
  of a tile too.
* Data: every pass streams its input chunk (``N x M`` values, X channel)
  and its weights (``N x N`` per multiplier, W channel) from DRAM -- the
  transfer part "talks to DRAM all the time" (§3); outputs are written once.
  Groups run one after the other.

Fully connected (§2, Figure 7) -- tiling
----------------------------------------
* The routing data sets every PB's next PB so that the whole array (``R = N
  x M`` PBs) forms one ring (``M`` cycles per lane to shift it in; once per
  ring shape).
* **Outputs are stationary**: each PB accumulates one output neuron; an
  output group holds ``R`` outputs. Inputs are loaded in chunks of ``R``
  values (one per PB) and passed along the ring ``R`` times; before every
  step each PB receives its own weight, column by column (``M`` cycles per
  lane, then one MAC cycle). A last chunk of ``r < R`` inputs uses rings of
  ``r`` PBs (``R // r`` copies of the chunk), ``r`` steps per ring pass.
  Only one multiplier per PB is used (§3: FC cannot use the second one).
* Data: every weight crosses from DRAM once (W channel, multiplier 1's
  stream); inputs (one copy per ring) and outputs on the X channel. A batch
  runs vector by vector.

Pooling
-------
Not described in the paper. Assumed to run in the output unit as a
separate streaming pass: the input is read from DRAM, compared one value
per lane per transfer, and the output written back (no MACs).

Matrix products (``matmul``) run as the convolution flow with ``T = k``
window elements, ``m`` rows as filters and ``n`` columns as pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..num import as_float, as_int, ceil_div, maximum, minimum, where, zeros_like

#: control cycles per pass or per ring load: the controller issues one
#: micro-code instruction per sequence of operations (§3) and switches the PBs'
#: I/O control modules between phases -- "64 x 3 cycles plus a few control
#: cycles" (§2). Not published; an assumption (hidden by DRAM on the FPGA).
CONTROL_CYCLES = 8


__all__ = ["CONTROL_CYCLES", "ArrayConfig", "Flow", "ceil_div", "conv_flow", "conv_products", "fc_flow", "fc_products",
           "pool_flow", "pool_products"]


@dataclass(slots=True)
class ArrayConfig:
    """The PB array and its buffer <-> array lanes (arrays over design points, or Python numbers for one point).
    Read-only by convention: not frozen, whose __init__ costs ~5x as much on the one-point path (issue 15)."""

    rows: np.ndarray | int
    cols: np.ndarray | int
    mults: np.ndarray | int
    tpv: np.ndarray | int  # transfers per value on a lane
    shared: np.ndarray | bool  # one buffer <-> array interface for input, weight, output
    value_bytes: np.ndarray | float
    #: (cycles of a pass, unload cycles per tile, first-load-and-last-unload cycles) of :func:`conv_flow`: they
    #: depend on the array and its lanes alone, not on the layer, so they are made once with the configuration
    #: (one point's 17 distinct VGG16 layers, or a batch's points) and read by every convolution layer
    conv_pass: tuple = field(init=False, repr=False, compare=False)
    #: filters of a full tile (``rows x mults``) and MAC cycles of a pass (``rows x tpv``) of :func:`conv_flow`: made
    #: once with the configuration too (integer products: the same values in any order)
    tile_filters: np.ndarray | int = field(init=False, repr=False, compare=False)
    pass_macs: np.ndarray | int = field(init=False, repr=False, compare=False)
    #: :func:`~archmodels.num.as_float` of the flows' counts, chosen once with the configuration: ``float`` for one
    #: point in Python ints (the value ``as_float`` gives, without its type test per call), ``as_float`` else
    to_float: Callable[[Any], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n, mcol, mul, tpv = self.rows, self.cols, self.mults, self.tpv
        overlapped = tpv * maximum(mcol, n) + CONTROL_CYCLES
        serial = tpv * (mcol + n * mul) + CONTROL_CYCLES
        self.conv_pass = (where(self.shared, serial, overlapped),
                          where(self.shared, tpv * mcol * mul, 0),  # unload per tile: hidden behind passes when
                          # ports are separate
                          where(self.shared, 0, 2 * tpv * mcol))  # fill: first load, last unload
        self.tile_filters = n * mul
        self.pass_macs = n * tpv
        self.to_float = float if type(n) is int else as_float

    @property
    def pbs(self) -> np.ndarray | int:
        return self.rows * self.cols


@dataclass(slots=True)
class Flow:
    """Compute cycles and DRAM bytes of one layer (arrays over points), or of several layers given as
    ``(layers, 1)`` columns (arrays over layers x points), or of one layer of one point (Python floats)."""

    compute_cycles: np.ndarray  # array + lanes, DRAM assumed infinitely fast
    mac_cycles: np.ndarray  # cycles the array spends in MAC steps
    passes: np.ndarray  # conv: load/MAC/unload passes; fc: ring steps; pool: 0
    x_read_bytes: np.ndarray  # inputs (X channel)
    x_write_bytes: np.ndarray  # outputs (X channel)
    w_bytes: tuple[np.ndarray, np.ndarray]  # weights of multiplier 1, multiplier 2


def conv_products(groups, filters, window, pixels) -> tuple:
    """What :func:`conv_flow` multiplies of the layer alone, as floats: (``groups x window``, ``groups x window x
    pixels``, ``groups x filters x pixels``). Made once per layer with the workload's table (Python floats for one
    point, float columns for a batch), not once per layer and point. The values are those of the integer products
    the flow had: a product of integers below 2**53 is an exact float, and multiplying it by another such integer
    rounds the exact product once, as converting the integer product to a float does."""
    gw = groups * window
    return as_float(gw), as_float(gw * pixels), as_float(groups * filters * pixels)


def conv_flow(cfg: ArrayConfig, groups: int, filters: int, window: int, pixels: int, products: tuple | None = None
              ) -> Flow:
    """Convolution (or matrix product) of ``groups`` x (``filters`` x ``window``) @ (``window`` x ``pixels``);
    ``products``: :func:`conv_products` of the layer (computed here if not given)."""
    # Ceiling divisions are written -(-a // b): num.ceil_div's expression, exact on ints and int arrays alike,
    # without its call (issue 15: the one-point path costs layer after layer in Python numbers)
    gw, gwp, gfp = conv_products(groups, filters, window, pixels) if products is None else products
    n, mcol, tile_filters = cfg.rows, cfg.cols, cfg.tile_filters
    filter_tiles = -(-filters // tile_filters)
    pixel_tiles = -(-pixels // mcol)
    chunks = -(-window // n)
    tiles = groups * filter_tiles * pixel_tiles
    passes = tiles * chunks

    pass_cycles, unload_per_tile, fill = cfg.conv_pass  # shared ports: input load and weight feed take turns
    compute = passes * pass_cycles + tiles * unload_per_tile + fill

    # filters on multiplier 1: N of every full tile, up to N of the last one
    last = filters - (filter_tiles - 1) * tile_filters
    f1 = (filter_tiles - 1) * n + minimum(n, last)
    f2 = filters - f1
    vb = cfg.value_bytes  # a float (bits / 8.0): the byte counts below are floats (no as_float needed)
    to_float = cfg.to_float
    return Flow(  # positional (fields in order: compute, MAC cycles, passes, X read, X write, weights)
        to_float(compute),
        to_float(passes * cfg.pass_macs),
        to_float(passes),
        filter_tiles * gwp * vb,  # groups x filter tiles x window x pixels values
        gfp * vb,  # groups x filters x pixels values (a batch: its (rows x 1) column x the points' widths)
        (pixel_tiles * f1 * gw * vb, pixel_tiles * f2 * gw * vb),  # groups x pixel tiles x f x window
    )


def fc_products(inputs, outputs, batch) -> tuple:
    """What :func:`fc_flow` multiplies of the layer alone, as floats: (``batch x outputs``, ``batch x inputs x
    outputs``), made once per layer (see :func:`conv_products`)."""
    bo = batch * outputs
    return as_float(bo), as_float(batch * inputs * outputs)


def fc_flow(cfg: ArrayConfig, inputs: int, outputs: int, batch: int, products: tuple | None = None) -> Flow:
    """Fully connected layer, ``inputs`` -> ``outputs``, ``batch`` vectors one by one; ``products``:
    :func:`fc_products` of the layer (computed here if not given)."""
    bo, bio = fc_products(inputs, outputs, batch) if products is None else products
    ring = cfg.pbs
    tpv, mcol = cfg.tpv, cfg.cols
    full = inputs // ring  # chunks of a whole ring
    rem = inputs % ring  # last, shorter chunk
    has_rem = rem > 0
    rem_safe = where(has_rem, rem, 1)
    rings = where(has_rem, ring // rem_safe, 1)  # copies of the short chunk
    groups = -(-outputs // ring)  # output-stationary groups of up to R outputs (ceil_div, as in conv_flow)
    last_group = outputs - (groups - 1) * ring
    per_pass = rings * rem_safe
    rem_passes = where(has_rem, (groups - 1) * -(-ring // per_pass) + -(-last_group // per_pass), 0)
    steps = groups * full * ring + rem_passes * rem
    loads = groups * full + rem_passes  # ring loads of an input chunk
    shapes = as_int(full > 0) + as_int(has_rem)  # ring configurations to route

    lane = tpv * mcol  # cycles to move one value per lane across the array's columns
    per_vector = (shapes * lane  # routing data, bucket-brigade
                  + loads * (lane + CONTROL_CYCLES)  # input chunk into the ring
                  + steps * (lane + 1)  # weights column by column, then MAC and pass
                  + groups * lane)  # unload the outputs
    vb = cfg.value_bytes
    x_in = (groups * full * ring + rem_passes * rings * rem) * vb
    routing = shapes * ring * vb  # read once from the weight memory, not per vector
    to_float = cfg.to_float
    mac = to_float(batch * steps)  # MAC cycles, and ring steps (the same values: read-only, one object)
    return Flow(  # positional, as in conv_flow; the byte counts are floats (x value_bytes): no as_float needed
        to_float(batch * per_vector),
        mac,
        mac,
        batch * x_in,
        bo * vb,  # batch x outputs values
        (bio * vb + routing, zeros_like(mac)),
    )


def pool_products(input_elems, output_elems) -> tuple:
    """What :func:`pool_flow` multiplies of the layer alone, as floats: (input elements, output elements)."""
    return as_float(input_elems), as_float(output_elems)


def pool_flow(cfg: ArrayConfig, input_elems: int, output_elems: int, products: tuple | None = None) -> Flow:
    """A pooling layer streamed through the output unit (one value per lane per transfer); ``products``:
    :func:`pool_products` of the layer (computed here if not given)."""
    ie, oe = pool_products(input_elems, output_elems) if products is None else products
    compute = cfg.to_float(-(-input_elems // cfg.rows) * cfg.tpv + CONTROL_CYCLES)  # ceil_div, as in conv_flow
    zero = zeros_like(compute)
    vb = cfg.value_bytes
    return Flow(compute, zero, zero, ie * vb, oe * vb, (zero, zero))  # positional, as in conv_flow

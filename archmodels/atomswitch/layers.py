"""How the layers of a workload map onto the atom-switch circuits, over a batch of design points.

Dataflow (spec `atom_switch.md` §2, the open points of §5 stated here)
----------------------------------------------------------------------
* **Stages.** Every layer is resident on the chip at once (a fully spatial
  design); an image runs through the stages one after the other. A stage
  streams its input from the previous stage's on-chip buffer (the first
  stage from outside, i.e. DRAM) at ``pixels_per_clock`` values per clock per
  input channel, all input channels in parallel.
* **Convolution.** One circuit (kh x kw MACs + delay lines) per (output
  channel, input channel) pair, an adder tree per output channel over its
  input channels, outputs written to the conv output buffer of
  out_h x out_w x out_ch words (the paper's count, §4). Padding zeros are
  inserted into the stream; a stride > 1 keeps every stride-th window (the
  circuit computes all of them).
* **Pooling after a convolution** is part of the same stream
  (``fused_into``): one pool circuit per physical output channel with a line
  memory (I/2 words for 2x2/2), results stored in the conv buffer (they need
  a quarter of it). A pool that does not follow a convolution streams its
  input from the previous buffer and writes its own output buffer.
* **Fully connected** (and the ReLU fused into it): a column of MACs, one per
  output neuron; the input vector streams past them ``pixels_per_clock``
  values per clock (each neuron then has that many multipliers and an adder
  tree), each MAC reading its weight from its own weight memory
  (inputs words per neuron) and accumulating. ReLU is a comparator stage.
* **Folding** (the paper never folds, §5): ``fold`` time-multiplexes a layer's
  circuits over passes (output channels first, then input channels, see
  :func:`~archmodels.atomswitch.circuits.fold_split`; FC: neurons per MAC).
  Each pass re-streams the input; a folded convolution reloads its
  coefficients (kh x kw clocks through the MAC chain) before every pass from
  a weight memory holding all its coefficients (or from DRAM with
  ``weight_store = dram``). ``fold_policy``: ``uniform`` folds every layer by
  ``fold``; ``balanced`` folds the layer with the most multipliers by
  ``fold`` and every other layer only as far as needed to stay under the
  same multiplier count.
* **DRAM.** The network input is read from DRAM once per pass of the first
  stage, the last layer's output is written to DRAM; with
  ``weight_store = dram`` FC weights and folded conv coefficients stream from
  DRAM. A stage never waits for DRAM unless its bytes per pass exceed what
  ``dram_gbps`` delivers in the pass (the excess is the ``DRAM_STALL`` state).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

import numpy as np

from workloads import Workload
from workloads.layers import FC, Conv2D, Layer, Pool

from ..layerarrays import column
from ..memo import by_identity
from ..num import ceil, maximum, minimum, where
from .circuits import (
    STAGES,
    conv_fill_cycles,
    delay_line_words,
    fc_fill_cycles,
    fold_split,
    pool_line_words,
    pool_tail_cycles,
    stream_cycles,
)

Role = Literal["conv", "fused_pool", "pool", "fc", "unsupported"]


@dataclass(frozen=True)
class Stage:
    """A layer and its place in the dataflow (independent of the design point)."""

    layer: Layer
    role: Role
    reads_network_input: bool  # first layer: its input streams from DRAM
    writes_network_output: bool  # last layer: its output goes to DRAM
    conv: Conv2D | None = None  # the convolution a fused pool streams with

    @property
    def full_multipliers(self) -> int:
        """Multipliers at full parallelism, one value per clock (the paper's count)."""
        L = self.layer
        if self.role == "conv":
            return L.out_ch * L.ic_per_group * L.kernel_h * L.kernel_w
        if self.role == "fc":
            return L.outputs
        return 0


@lru_cache(maxsize=64)
def plan(workload: Workload) -> tuple[Stage, ...]:
    """Roles of the layers: a pool right after the convolution producing its input is fused."""
    layers = workload.layers
    out: list[Stage] = []
    for i, L in enumerate(layers):
        first, last = i == 0, i == len(layers) - 1
        prev = layers[i - 1] if i else None
        if isinstance(L, Conv2D):
            out.append(Stage(L, "conv", first, last))
        elif isinstance(L, Pool):
            fused = (isinstance(prev, Conv2D) and prev.out_ch == L.channels
                     and prev.out_h == L.in_h and prev.out_w == L.in_w)
            out.append(Stage(L, "fused_pool" if fused else "pool", first, last, prev if fused else None))
        elif type(L) is FC:
            out.append(Stage(L, "fc", first, last))
        else:
            out.append(Stage(L, "unsupported", first, last))
    return tuple(out)


@dataclass
class Ctx:
    """Per-point arrays every stage uses; on the one-point path (:meth:`one`) Python numbers."""

    n: int
    clock_hz: np.ndarray | float
    bytes_per_value: np.ndarray | float
    ppc: np.ndarray | int  # pixels per clock
    fold: np.ndarray | int
    balanced: np.ndarray | bool  # fold_policy == balanced
    dram_weights: np.ndarray | bool  # weight_store == dram
    chip_weights: np.ndarray | bool  # weight_store == chip (not dram_weights)
    dram_bytes_per_cycle: np.ndarray | float
    max_multipliers: int  # largest full_multipliers over the workload
    ones: np.ndarray | float = 1.0  # float ones over the points: a per-stage value times this is per point
    int_ones: np.ndarray | int = 1  # the same, int64

    @property
    def one(self) -> bool:
        """The one-point path: every field a Python number, the stage formulas computed in Python."""
        return type(self.ones) is float


@dataclass
class SramAccess:
    """``words`` accesses to memories of ``bank_words`` words each (for energy)."""

    words: np.ndarray
    bank_words: np.ndarray | float


@dataclass
class StageCost:
    """The stages of one group over the batch: sizes, cycles by state, traffic and activity
    (arrays over stages x points, or broadcastable to them)."""

    states: dict[str, np.ndarray]
    multipliers: np.ndarray
    circuits: np.ndarray
    passes: np.ndarray
    memory_words: np.ndarray
    delay_words: np.ndarray
    dram_read_bytes: np.ndarray
    dram_write_bytes: np.ndarray
    mac_ops: np.ndarray
    add_ops: np.ndarray
    compare_ops: np.ndarray
    adders: np.ndarray | int = 0  # adders outside the MACs: channel trees, partial sums, lane trees
    comparators: np.ndarray | int = 0  # pooling and ReLU comparators
    sram: list[SramAccess] = field(default_factory=list)
    channels_phys: np.ndarray | None = None  # output channels computed per pass (a fused pool's circuits)
    index: tuple[int, ...] = ()  # the stages' positions in the plan (set by group_costs / point_costs)
    fused_into: tuple[str, ...] | None = None  # fused pools: the convolution each streams with

    @property
    def rows(self) -> int:
        return len(self.index)

    @property
    def cycles(self) -> np.ndarray | float:
        out = 0
        for arr in self.states.values():  # in order, whatever the batch size
            out = out + arr
        return out if type(out) is int or type(out) is float else np.asarray(out)


class LayerCols:
    """Attributes of several layers as read-only (rows, 1) int64 columns, each built on first use,
    so that the stage formulas below read ``L.out_ch`` for a whole group of layers at once."""

    def __init__(self, layers: tuple[Layer, ...]):
        self._layers = layers

    def __getattr__(self, name: str) -> np.ndarray:
        """The column of attribute ``name``; kept as an instance attribute, so built once."""
        if name.startswith("_"):
            raise AttributeError(name)
        col = column(getattr(layer, name) for layer in self._layers)
        setattr(self, name, col)
        return col

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(layer.name for layer in self._layers)


class LayerVals:
    """One layer's attributes as Python numbers, each read on first use: :class:`LayerCols` of a single
    layer on the one-point path (a layer's sizes are properties, computed on every read)."""

    def __init__(self, layer: Layer):
        self._layer = layer

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._layer, name)
        setattr(self, name, value)
        return value

    @property
    def names(self) -> tuple[str]:
        return (self._layer.name,)


@dataclass(frozen=True)
class StageGroup:
    """The stages of one role as columns (one row per stage): what the stage formulas read. On the one-point
    path (:func:`stage_rows`) a single stage, its fields Python numbers."""

    role: Role
    index: tuple[int, ...]  # the stages' positions in the plan
    layer: LayerCols | LayerVals
    reads_network_input: np.ndarray | bool  # bool column
    writes_network_output: np.ndarray | bool  # bool column
    full_multipliers: np.ndarray | int
    activation: np.ndarray | int  # 0/1: the layer has an activation (its ReLU comparisons)
    activation_stage: np.ndarray | int  # 0/1: the layer's activation is not None (the ReLU pipeline stage)
    conv: LayerCols | LayerVals | None = None  # fused pools: the convolution each streams with
    conv_row: np.ndarray | None = None  # fused pools: that convolution's row in the conv group (None: one stage)
    shape: ConvShape | None = None  # convolutions: :func:`conv_shape`, made with the group (None: made per call)

    @property
    def rows(self) -> int:
        return len(self.index)


@dataclass(frozen=True)
class ConvShape:
    """What :func:`conv_stage` reads of its layers alone, whatever the design point: columns over the group's stages,
    or one stage's Python numbers. Made once per stage group (cached per workload), not on every call."""

    width: np.ndarray | int  # streamed row width (padding included)
    height: np.ndarray | int
    pixels: np.ndarray | int  # streamed pixels per input channel
    kernel: np.ndarray | int  # kh x kw
    macs_fired: np.ndarray | int  # multiplier firings: every multiplier once per streamed pixel of its channel
    relu: np.ndarray | int  # ReLU comparisons
    lines: np.ndarray | int  # delay-line shifts (one per line per clock)
    delay_line: np.ndarray | int  # delay-line registers of one circuit
    out_px: np.ndarray | int  # out_h x out_w (the output buffer's bank)
    in_px: np.ndarray | int  # in_h x in_w (the previous buffer's bank)
    line_bank: np.ndarray | int  # a delay line's bank: max(width - kw, 1)


def conv_shape(g: StageGroup) -> ConvShape:
    """The :class:`ConvShape` of the convolutions of ``g`` (its layer columns, or one layer's numbers)."""
    L = g.layer
    kh, kw = L.kernel_h, L.kernel_w
    width, height = L.in_w + 2 * L.padding, L.in_h + 2 * L.padding
    pixels = width * height
    values = dict(
        width=width, height=height, pixels=pixels, kernel=kh * kw,
        macs_fired=L.weight_elems * pixels,
        relu=L.output_elems * g.activation,
        lines=(kh - 1) * L.weight_elems // (kh * kw) * pixels,
        delay_line=delay_line_words(kh, kw, width, L.dilation),
        out_px=L.out_h * L.out_w, in_px=L.in_h * L.in_w, line_bank=maximum(width - kw, 1),
    )
    for v in values.values():  # kept with the group and read by every call: read-only, as the layer columns
        if type(v) is np.ndarray:
            v.flags.writeable = False
    return ConvShape(**values)


#: the roles costed by the stage formulas, in the order their groups are evaluated (a fused pool after its conv)
ROLES: tuple[Role, ...] = ("conv", "fused_pool", "pool", "fc")


@lru_cache(maxsize=64)
def stage_groups(workload: Workload) -> dict[Role, StageGroup]:
    """The plan's stages grouped by role, as columns (cached per workload like :func:`plan`)."""
    stages = plan(workload)
    conv_index = [i for i, st in enumerate(stages) if st.role == "conv"]
    out: dict[Role, StageGroup] = {}
    for role in ROLES:
        index = tuple(i for i, st in enumerate(stages) if st.role == role)
        if not index:
            continue
        group = [stages[i] for i in index]
        acts = [getattr(st.layer, "activation", None) for st in group]
        g = StageGroup(
            role, index, LayerCols(tuple(st.layer for st in group)),
            column(st.reads_network_input for st in group).astype(bool),
            column(st.writes_network_output for st in group).astype(bool),
            column(st.full_multipliers for st in group),
            column(bool(a) for a in acts), column(a is not None for a in acts),
            LayerCols(tuple(st.conv for st in group)) if role == "fused_pool" else None,
            # a fused pool streams with the convolution right before it (plan)
            np.array([conv_index.index(i - 1) for i in index]) if role == "fused_pool" else None,
        )
        out[role] = replace(g, shape=conv_shape(g)) if role == "conv" else g
    return out


@lru_cache(maxsize=64)
def stage_rows(workload: Workload) -> tuple[StageGroup | None, ...]:
    """Every stage of the plan on its own (None: unsupported), its fields Python numbers: what the stage
    formulas read on the one-point path (cached per workload like :func:`plan`)."""
    stages = plan(workload)
    out: list[StageGroup | None] = []
    for i, st in enumerate(stages):
        if st.role == "unsupported":
            out.append(None)
            continue
        act = getattr(st.layer, "activation", None)
        g = StageGroup(st.role, (i,), LayerVals(st.layer), bool(st.reads_network_input),
                       bool(st.writes_network_output), int(st.full_multipliers), int(bool(act)),
                       int(act is not None), LayerVals(st.conv) if st.role == "fused_pool" else None)
        out.append(replace(g, shape=conv_shape(g)) if st.role == "conv" else g)
    return tuple(out)


def layer_fold(stage: Stage | StageGroup, c: Ctx, max_fold) -> np.ndarray:
    """This layer's folding factor under the point's policy, clipped to 1..max_fold."""
    balanced = -(-(c.fold * stage.full_multipliers) // max(c.max_multipliers, 1))  # ceil_div of ints / int arrays
    f = where(c.balanced, balanced, c.fold)
    return minimum(maximum(f, 1), max_fold)  # np.clip(f, 1, max_fold), without its call overhead


def _dram_stream(stream, bytes_per_pass, c: Ctx):
    """Stream clocks per pass, stretched when DRAM cannot deliver the pass's bytes in time."""
    if type(bytes_per_pass) is not float:
        bytes_per_pass = np.asarray(bytes_per_pass, dtype=float)
    return maximum(stream, ceil(bytes_per_pass / c.dram_bytes_per_cycle))


# The stage formulas: one call per role, every array over (stages of the group x points). An access a stage
# does not make (the input read from the previous buffer, by the first stage) is an SRAM slot of zero words.

def conv_stage(g: StageGroup, c: Ctx) -> StageCost:
    """Convolutions: (oc, ic) circuits + adder trees, folded over passes (module doc)."""
    L = g.layer
    s = g.shape if g.shape is not None else conv_shape(g)  # the layers' own values (made with the group)
    reads, writes = g.reads_network_input, g.writes_network_output
    ic, oc, kh, kw = L.ic_per_group, L.out_ch, L.kernel_h, L.kernel_w
    pixels = s.pixels
    b = c.bytes_per_value
    f = layer_fold(g, c, oc * ic)
    oc_p, ic_p, oc_passes, ic_passes = fold_split(f, oc, ic)
    passes = oc_passes * ic_passes
    folded = passes > 1
    circuits = oc_p * ic_p
    coeffs = circuits * kh * kw  # coefficients of one pass

    stream = stream_cycles(pixels, c.ppc)
    in_bytes_pass = where(reads, (L.input_elems / ic_passes) * b, 0.0)
    stream_eff = _dram_stream(stream, in_bytes_pass, c)
    load = where(c.dram_weights, maximum(s.kernel, ceil(coeffs * b / c.dram_bytes_per_cycle)), s.kernel)
    load = where(folded, load, 0)
    fill = conv_fill_cycles(ic_p, g.activation_stage, ic_passes > 1)

    weight_words = where(folded & c.chip_weights, L.weight_elems, 0)  # folded coefficients in on-chip memory
    dram_rd = where(reads, oc_passes * L.input_elems * b, 0.0) \
        + where(folded & c.dram_weights, L.weight_elems * b, 0.0)
    dram_wr = where(writes, L.output_elems * b, 0.0)

    # activity: every multiplier fires once per streamed pixel of its channel (s.macs_fired)
    tree_adds = oc * (ic_p - 1) * ic_passes * pixels
    psum_adds = (ic_passes - 1) * L.output_elems
    sram = [
        SramAccess(L.output_elems + 2 * psum_adds, s.out_px),  # buffer writes (+ partial sums)
        SramAccess(2.0 * s.lines, s.line_bank),  # delay lines as circular buffers: 1 write + 1 read
        SramAccess(weight_words, passes * kh * kw),  # coefficient reloads
        SramAccess(where(reads, 0, oc_passes * L.input_elems), s.in_px),  # input from the previous buffer
    ]
    ones = c.ones
    return StageCost(
        states={"STREAM": passes * stream, "DRAM_STALL": passes * (stream_eff - stream), "LOAD": passes * load,
                "FILL": fill * c.int_ones},
        multipliers=coeffs * c.ppc, circuits=circuits, passes=passes,
        memory_words=L.output_elems + weight_words,
        delay_words=circuits * s.delay_line * c.int_ones,
        dram_read_bytes=dram_rd * ones, dram_write_bytes=dram_wr * ones,
        mac_ops=s.macs_fired * ones, add_ops=tree_adds + psum_adds * 1.0,
        compare_ops=s.relu * ones, sram=sram, channels_phys=oc_p,
        adders=oc_p * c.ppc * ((ic_p - 1) + (ic_passes > 1)),
        comparators=oc_p * c.ppc * g.activation_stage,
    )


def pool_stage(g: StageGroup, c: Ctx, conv_cost: StageCost | None) -> StageCost:
    """Pools fused with their convolutions (``conv_cost``: the conv group's, or on the one-point path the
    convolution's own) or stages of their own."""
    L = g.layer
    b = c.bytes_per_value
    line = pool_line_words(L.out_w, L.kernel, L.stride)
    ones = c.int_ones
    zeros = 0.0 * c.ones
    dram_wr = where(g.writes_network_output, L.output_elems * b * ones, 0.0)
    sram = [SramAccess(2.0 * L.output_elems * ones, line),  # line memory: a write and a read per output
            SramAccess(1.0 * L.output_elems * ones, L.out_h * L.out_w)]  # pooled result into a buffer
    if conv_cost is not None:
        oc_p, passes = conv_cost.channels_phys, conv_cost.passes  # one pool circuit per physical output channel
        if g.conv_row is not None:
            oc_p, passes = oc_p[g.conv_row], passes[g.conv_row]
        conv = g.conv
        tail = pool_tail_cycles(conv.out_h, conv.out_w, conv.stride, conv.in_w + 2 * conv.padding,
                                L.out_h, L.out_w, L.kernel, L.stride, L.padding, c.ppc)
        return StageCost(
            states={"FILL": tail * ones},
            multipliers=0 * ones, circuits=oc_p, passes=passes,
            memory_words=oc_p * line, delay_words=0 * ones,
            dram_read_bytes=zeros, dram_write_bytes=dram_wr,
            mac_ops=zeros, add_ops=zeros, compare_ops=L.ops * c.ones,
            sram=sram, comparators=2 * oc_p * c.ppc,
        )
    reads = g.reads_network_input
    width, height = L.in_w + 2 * L.padding, L.in_h + 2 * L.padding
    stream = stream_cycles(width * height, c.ppc)
    in_bytes = where(reads, L.input_elems * b, 0.0)
    stream_eff = _dram_stream(stream, in_bytes, c)
    sram.append(SramAccess(where(reads, 0.0, 1.0 * L.input_elems * ones), L.in_h * L.in_w))
    return StageCost(
        states={"STREAM": stream * ones, "DRAM_STALL": stream_eff - stream, "FILL": STAGES.pool * ones},
        multipliers=0 * ones, circuits=L.channels * ones, passes=ones,
        memory_words=(L.channels * line + L.output_elems) * ones, delay_words=0 * ones,
        dram_read_bytes=in_bytes * ones, dram_write_bytes=dram_wr,
        mac_ops=zeros, add_ops=zeros, compare_ops=L.ops * c.ones, sram=sram,
        comparators=2 * L.channels * c.ppc,
    )


def fc_stage(g: StageGroup, c: Ctx) -> StageCost:
    """Fully connected layers: a column of neuron MACs fed by the input stream (module doc)."""
    L = g.layer
    reads = g.reads_network_input
    b = c.bytes_per_value
    f = layer_fold(g, c, L.outputs)
    phys, _, passes, _ = fold_split(f, L.outputs, 1)
    values = L.inputs * L.batch  # streamed per pass
    stream = stream_cycles(values, c.ppc)
    bytes_pass = where(reads, values * b, 0.0) + where(c.dram_weights, phys * values * b, 0.0)
    stream_eff = _dram_stream(stream, bytes_pass, c)
    fill = fc_fill_cycles(c.ppc, g.activation_stage)
    weight_words = where(c.dram_weights, 0, L.weight_elems)
    dram_rd = where(reads, passes * values * b, 0.0) \
        + where(c.dram_weights, L.weight_elems * L.batch * b, 0.0)
    dram_wr = where(g.writes_network_output, L.output_elems * b, 0.0)
    ones = c.ones
    sram = [SramAccess(where(c.dram_weights, 0, L.macs), L.inputs),  # each MAC reads its weight
            SramAccess(L.output_elems * ones, L.outputs),  # results into the output buffer
            SramAccess(where(reads, 0, passes * values), L.inputs)]  # input from the previous buffer
    return StageCost(
        states={"STREAM": passes * stream, "DRAM_STALL": passes * (stream_eff - stream),
                "FILL": fill * c.int_ones},
        multipliers=phys * c.ppc, circuits=phys, passes=passes,
        memory_words=weight_words + L.output_elems, delay_words=0 * c.int_ones,
        dram_read_bytes=dram_rd * ones, dram_write_bytes=dram_wr * ones,
        mac_ops=L.macs * ones,
        add_ops=L.outputs * (c.ppc - 1) * stream * 1.0,  # lane adder tree of every neuron, every clock
        compare_ops=L.output_elems * g.activation * ones, sram=sram,
        adders=phys * (c.ppc - 1), comparators=phys * g.activation_stage,
    )


def group_costs(groups: dict[Role, StageGroup], c: Ctx) -> list[StageCost]:
    """The cost of every stage group, arrays over (stages of the group x points), in :data:`ROLES` order."""
    out: dict[Role, StageCost] = {}
    for role, g in groups.items():  # ROLES order: a fused pool's convolution is costed before it
        if role == "conv":
            k = conv_stage(g, c)
        elif role == "fc":
            k = fc_stage(g, c)
        else:
            k = pool_stage(g, c, out["conv"] if role == "fused_pool" else None)
        k.index, k.fused_into = g.index, g.conv.names if g.conv is not None else None
        out[role] = k
    return list(out.values())


def point_costs(rows: tuple[StageGroup | None, ...], c: Ctx) -> list[StageCost]:
    """The cost of every supported stage on the one-point path (:func:`stage_rows`), Python numbers, in plan order."""
    out: list[StageCost] = []
    conv = None
    for g in rows:
        if g is None:
            continue
        role = g.role
        if role == "conv":
            k = conv = conv_stage(g, c)
        elif role == "fc":
            k = fc_stage(g, c)
        else:  # a fused pool streams with the convolution right before it (plan)
            k = pool_stage(g, c, conv if role == "fused_pool" else None)
        k.index, k.fused_into = g.index, g.conv.names if g.conv is not None else None
        out.append(k)
    return out


@dataclass(frozen=True)
class StackOrder:
    """The supported stages, and the rows of the batch path's stacked (stages x points) arrays: group after group
    (:func:`stage_groups`, ROLES order), each group's rows contiguous (slices: cheaper to fill than index arrays)."""

    index: tuple[int, ...]  # plan positions of the supported stages, in plan order
    positions: tuple[slice, ...]  # per group: its rows in the stacked arrays
    plan_rows: np.ndarray | None  # the stacked rows in plan order (None: the group order is the plan order)
    macs: np.ndarray  # (rows, 1) MACs of each stacked row (batch path)
    macs_list: tuple[int, ...]  # MACs of each supported stage as Python ints, plan order (one-point path)


@lru_cache(maxsize=64)
def stack_order(workload: Workload) -> StackOrder:
    """The rows of the stacked stage arrays (cached per workload like :func:`plan`)."""
    stages = plan(workload)
    index = tuple(i for i, st in enumerate(stages) if st.role != "unsupported")
    stacked = [i for g in stage_groups(workload).values() for i in g.index]  # plan positions, group after group
    positions, start = [], 0
    for g in stage_groups(workload).values():
        positions.append(slice(start, start + g.rows))
        start += g.rows
    plan_rows = None if stacked == list(index) else np.array([stacked.index(i) for i in index])
    return StackOrder(index, tuple(positions), plan_rows, column(stages[i].layer.macs for i in stacked),
                      tuple(int(stages[i].layer.macs) for i in index))


#: StageCost fields stacked (besides cycles and the SRAM slots), as the layer metrics and energy read them
STACKED = ("multipliers", "circuits", "passes", "memory_words", "delay_words", "dram_read_bytes",
           "dram_write_bytes", "mac_ops", "add_ops", "compare_ops", "adders", "comparators")


def stack_groups(costs: list[StageCost], positions: tuple, rows: int, n: int) -> dict[str, np.ndarray]:
    """The stage groups' costs (arrays broadcastable to (group rows x points)) as (stages x points) float arrays
    (``positions``: each group's rows, :class:`StackOrder`). ``sram_words`` / ``sram_bank_words``: one such
    array per SRAM slot, a stage with fewer accesses padded with zeros. One array per field, not one block for
    all: a block of a large batch is a fresh allocation of many pages every call."""
    def stack(values) -> np.ndarray:
        out = np.empty((rows, n))
        for value, at in zip(values, positions):
            out[at] = value
        return out

    slots = max(len(k.sram) for k in costs)
    out = {"cycles": stack(k.cycles for k in costs)}
    for name in STACKED:
        out[name] = stack(getattr(k, name) for k in costs)
    words = [stack(k.sram[s].words if s < len(k.sram) else 0.0 for k in costs) for s in range(slots)]
    banks = [stack(k.sram[s].bank_words if s < len(k.sram) else 0.0 for k in costs) for s in range(slots)]
    out["sram_words"], out["sram_bank_words"] = words, banks
    return out


@dataclass(frozen=True)
class Tables:
    """What the model reads of a workload whatever the design point: built once per workload object."""

    stages: tuple[Stage, ...]  # :func:`plan`
    groups: dict[Role, StageGroup]  # :func:`stage_groups` (batches)
    rows: tuple[StageGroup | None, ...]  # :func:`stage_rows` (one point)
    order: StackOrder  # :func:`stack_order`
    max_multipliers: int  # largest full_multipliers of the stages (the balanced fold's reference)


@by_identity()
def tables(workload: Workload) -> Tables:
    """The :class:`Tables` of ``workload``, remembered by the object's identity (the lru caches above hash the
    whole workload, every layer, on each call)."""
    stages = plan(workload)
    return Tables(stages, stage_groups(workload), stage_rows(workload), stack_order(workload),
                  max((s.full_multipliers for s in stages), default=1))

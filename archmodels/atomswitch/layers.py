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

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import numpy as np

from workloads import Workload
from workloads.layers import FC, Conv2D, Layer, Pool

from .circuits import (
    STAGES,
    ceil_div,
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
    """Per-point arrays every stage uses."""

    n: int
    clock_hz: np.ndarray
    bytes_per_value: np.ndarray
    ppc: np.ndarray  # pixels per clock
    fold: np.ndarray
    balanced: np.ndarray  # bool: fold_policy == balanced
    dram_weights: np.ndarray  # bool: weight_store == dram
    dram_bytes_per_cycle: np.ndarray
    max_multipliers: int  # largest full_multipliers over the workload


@dataclass
class SramAccess:
    """``words`` accesses to memories of ``bank_words`` words each (for energy)."""

    words: np.ndarray
    bank_words: np.ndarray | float


@dataclass
class StageCost:
    """One layer over the batch: sizes, cycles by state, traffic and activity (arrays)."""

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
    fused_into: str | None = None
    channels_phys: np.ndarray | None = None  # output channels computed per pass (a fused pool's circuits)

    @property
    def cycles(self) -> np.ndarray:
        out = 0
        for arr in self.states.values():  # in order, whatever the batch size
            out = out + arr
        return np.asarray(out)


def layer_fold(stage: Stage, c: Ctx, max_fold: int) -> np.ndarray:
    """This layer's folding factor under the point's policy, clipped to 1..max_fold."""
    balanced = ceil_div(c.fold * stage.full_multipliers, max(c.max_multipliers, 1))
    f = np.where(c.balanced, balanced, c.fold)
    return np.clip(f, 1, max_fold)


def _dram_stream(stream, bytes_per_pass, c: Ctx):
    """Stream clocks per pass, stretched when DRAM cannot deliver the pass's bytes in time."""
    dram = np.ceil(np.asarray(bytes_per_pass, dtype=float) / c.dram_bytes_per_cycle)
    return np.maximum(stream, dram)


def conv_stage(st: Stage, c: Ctx) -> StageCost:
    """A convolution: (oc, ic) circuits + adder trees, folded over passes (module doc)."""
    L: Conv2D = st.layer
    ic, oc, kh, kw = L.ic_per_group, L.out_ch, L.kernel_h, L.kernel_w
    width, height = L.in_w + 2 * L.padding, L.in_h + 2 * L.padding
    pixels = width * height
    b = c.bytes_per_value
    f = layer_fold(st, c, oc * ic)
    oc_p, ic_p, oc_passes, ic_passes = fold_split(f, oc, ic)
    passes = oc_passes * ic_passes
    folded = passes > 1
    circuits = oc_p * ic_p
    coeffs = circuits * kh * kw  # coefficients of one pass

    stream = stream_cycles(pixels, c.ppc)
    in_bytes_pass = (L.input_elems / ic_passes) * b if st.reads_network_input else np.zeros(c.n)
    stream_eff = _dram_stream(stream, in_bytes_pass, c)
    load = np.where(c.dram_weights, np.maximum(kh * kw, np.ceil(coeffs * b / c.dram_bytes_per_cycle)), kh * kw)
    load = np.where(folded, load, 0)
    fill = conv_fill_cycles(ic_p, L.activation is not None, ic_passes > 1)

    weight_words = np.where(folded & ~c.dram_weights, L.weight_elems, 0)
    dram_rd = (oc_passes * L.input_elems * b if st.reads_network_input else 0.0) \
        + np.where(folded & c.dram_weights, L.weight_elems * b, 0.0)
    dram_wr = L.output_elems * b if st.writes_network_output else np.zeros(c.n)

    # activity: every multiplier fires once per streamed pixel of its channel
    macs_fired = L.weight_elems * pixels
    tree_adds = oc * (ic_p - 1) * ic_passes * pixels
    psum_adds = (ic_passes - 1) * L.output_elems
    relu = L.output_elems if L.activation else 0
    lines = (kh - 1) * L.weight_elems // (kh * kw) * pixels  # delay-line shifts (one per line per clock)
    sram = [
        SramAccess(L.output_elems + 2 * psum_adds, L.out_h * L.out_w),  # buffer writes (+ partial sums)
        SramAccess(2.0 * lines, max(width - kw, 1)),  # delay lines as circular buffers: 1 write + 1 read
        SramAccess(np.where(folded & ~c.dram_weights, L.weight_elems, 0), passes * kh * kw),  # coefficient reloads
    ]
    if not st.reads_network_input:
        sram.append(SramAccess(oc_passes * L.input_elems, L.in_h * L.in_w))  # input from the previous buffer
    return StageCost(
        states={"STREAM": passes * stream, "DRAM_STALL": passes * (stream_eff - stream), "LOAD": passes * load,
                "FILL": fill * np.ones(c.n, dtype=np.int64)},
        multipliers=coeffs * c.ppc, circuits=circuits, passes=passes,
        memory_words=L.output_elems + weight_words,
        delay_words=circuits * delay_line_words(kh, kw, width, L.dilation) * np.ones(c.n, dtype=np.int64),
        dram_read_bytes=dram_rd * np.ones(c.n), dram_write_bytes=dram_wr * np.ones(c.n),
        mac_ops=np.full(c.n, float(macs_fired)), add_ops=tree_adds + psum_adds * 1.0,
        compare_ops=np.full(c.n, float(relu)), sram=sram, channels_phys=oc_p,
        adders=oc_p * c.ppc * ((ic_p - 1) + (ic_passes > 1)),
        comparators=oc_p * c.ppc * int(L.activation is not None),
    )


def pool_stage(st: Stage, c: Ctx, conv_cost: StageCost | None) -> StageCost:
    """A pool fused with its convolution (``conv_cost`` given) or a stage of its own."""
    L: Pool = st.layer
    b = c.bytes_per_value
    line = pool_line_words(L.out_w, L.kernel, L.stride)
    ones = np.ones(c.n, dtype=np.int64)
    dram_wr = L.output_elems * b * ones if st.writes_network_output else np.zeros(c.n)
    sram = [SramAccess(2.0 * L.output_elems * ones, line),  # line memory: a write and a read per output
            SramAccess(1.0 * L.output_elems * ones, L.out_h * L.out_w)]  # pooled result into a buffer
    if conv_cost is not None:
        oc_p = conv_cost.channels_phys  # one pool circuit per physical output channel
        conv = st.conv
        tail = pool_tail_cycles(conv.out_h, conv.out_w, conv.stride, conv.in_w + 2 * conv.padding,
                                L.out_h, L.out_w, L.kernel, L.stride, L.padding, c.ppc)
        return StageCost(
            states={"FILL": tail * ones},
            multipliers=0 * ones, circuits=oc_p, passes=conv_cost.passes,
            memory_words=oc_p * line, delay_words=0 * ones,
            dram_read_bytes=np.zeros(c.n), dram_write_bytes=dram_wr,
            mac_ops=np.zeros(c.n), add_ops=np.zeros(c.n), compare_ops=np.full(c.n, float(L.ops)),
            sram=sram, fused_into=st.conv.name, comparators=2 * oc_p * c.ppc,
        )
    width, height = L.in_w + 2 * L.padding, L.in_h + 2 * L.padding
    stream = stream_cycles(width * height, c.ppc)
    in_bytes = L.input_elems * b if st.reads_network_input else np.zeros(c.n)
    stream_eff = _dram_stream(stream, in_bytes, c)
    if not st.reads_network_input:
        sram.append(SramAccess(1.0 * L.input_elems * ones, L.in_h * L.in_w))
    return StageCost(
        states={"STREAM": stream * ones, "DRAM_STALL": stream_eff - stream, "FILL": STAGES.pool * ones},
        multipliers=0 * ones, circuits=L.channels * ones, passes=ones,
        memory_words=(L.channels * line + L.output_elems) * ones, delay_words=0 * ones,
        dram_read_bytes=in_bytes * ones, dram_write_bytes=dram_wr,
        mac_ops=np.zeros(c.n), add_ops=np.zeros(c.n), compare_ops=np.full(c.n, float(L.ops)), sram=sram,
        comparators=2 * L.channels * c.ppc,
    )


def fc_stage(st: Stage, c: Ctx) -> StageCost:
    """A fully connected layer: a column of neuron MACs fed by the input stream (module doc)."""
    L: FC = st.layer
    b = c.bytes_per_value
    f = layer_fold(st, c, L.outputs)
    phys, _, passes, _ = fold_split(f, L.outputs, 1)
    values = L.inputs * L.batch  # streamed per pass
    stream = stream_cycles(values, c.ppc)
    bytes_pass = (values * b if st.reads_network_input else 0.0) + np.where(c.dram_weights, phys * values * b, 0.0)
    stream_eff = _dram_stream(stream, bytes_pass, c)
    fill = fc_fill_cycles(c.ppc, L.activation is not None)
    weight_words = np.where(c.dram_weights, 0, L.weight_elems)
    dram_rd = (passes * values * b if st.reads_network_input else 0.0) \
        + np.where(c.dram_weights, L.weight_elems * L.batch * b, 0.0)
    dram_wr = L.output_elems * b if st.writes_network_output else np.zeros(c.n)
    sram = [SramAccess(np.where(c.dram_weights, 0, L.macs), L.inputs),  # each MAC reads its weight
            SramAccess(np.full(c.n, float(L.output_elems)), L.outputs)]  # results into the output buffer
    if not st.reads_network_input:
        sram.append(SramAccess(passes * values, L.inputs))
    return StageCost(
        states={"STREAM": passes * stream, "DRAM_STALL": passes * (stream_eff - stream),
                "FILL": fill * np.ones(c.n, dtype=np.int64)},
        multipliers=phys * c.ppc, circuits=phys, passes=passes,
        memory_words=weight_words + L.output_elems, delay_words=np.zeros(c.n, dtype=np.int64),
        dram_read_bytes=dram_rd * np.ones(c.n), dram_write_bytes=dram_wr * np.ones(c.n),
        mac_ops=np.full(c.n, float(L.macs)),
        add_ops=L.outputs * (c.ppc - 1) * stream * 1.0,  # lane adder tree of every neuron, every clock
        compare_ops=np.full(c.n, float(L.output_elems if L.activation else 0)), sram=sram,
        adders=phys * (c.ppc - 1), comparators=phys * int(L.activation is not None),
    )

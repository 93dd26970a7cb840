"""Circuits of the atom-switch streaming CNN (spec `atom_switch.md` §2): sizes and latencies.

Pure functions over numpy arrays (layer sizes may be (layers, 1) columns) or plain Python numbers (the
one-point path: one layer, one design point, no numpy call) that the model :mod:`archmodels.atomswitch`
combines, plus a register-level reference simulator of the same circuits (:func:`simulate_conv_pool`)
that the tests run on small inputs to check the closed forms.

The convolution circuit (after Farabet et al., CNP, FPL 2009)
--------------------------------------------------------------
A kh x kw kernel is kh rows of kw MACs. The input image streams in one
pixel per clock into an input register and is broadcast to every MAC. Each
MAC multiplies it by its coefficient (product register) and adds the
partial sum arriving from the previous MAC (partial-sum register), so a
partial sum moves one MAC per clock. After the kw MACs of a row it passes a
delay line of ``I - kw`` registers (I = streamed row width) to the next row:
the path from the first MAC to the last is then exactly as long as the
kernel window in the stream, so the sum of window (y, x) leaves the last MAC
two clocks (product + accumulate) after the window's last pixel entered.
The bias is the initial partial sum of the first MAC (no extra stage).

Latency after the last pixel of the stream (:data:`STAGES`, one place):
product register, partial-sum register, one clock per level of the adder
tree that sums the circuits of one output channel over input channels,
one clock to add the stored partial sum when input channels are folded
over several passes, one clock for a fused ReLU, and the two comparator
stages of the 2x2 streaming max pool (spec Figure 3.2: pair compare, then
compare with the line memory).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..num import as_int, maximum, minimum, plain


@dataclass(frozen=True)
class StageCycles:
    """Clock cycles of each pipeline stage after the stream (the model's only latency constants).

    One register per stage at 100 MHz (10 ns): a pipelined multiplier
    (product register, as in a DSP block), an adder, a comparator. These are
    circuit assumptions, not fitted: the spec (§5) leaves the fill open.
    """

    product: int = 1  # multiplier output register
    accumulate: int = 1  # adder + partial-sum register of a MAC
    adder_level: int = 1  # one level of the input-channel adder tree
    partial_sum: int = 1  # add the partial sum stored by earlier input-channel passes
    activation: int = 1  # ReLU: compare with 0
    pool: int = 2  # streaming max pool: pair compare, then compare with the line memory


STAGES = StageCycles()


# maximum / minimum / where / ceil / ceil_div: numpy's functions on arrays, Python on Python numbers (..num)


def tree_depth(n):
    """Levels of a binary adder tree over ``n`` inputs: ceil(log2 n), 0 for n <= 1."""
    if type(n) is int:
        return (n - 1).bit_length() if n > 1 else 0  # the bit length below, of a Python int
    n = np.maximum(np.asarray(n, dtype=np.int64), 1)
    # exact for integers: bit length of n - 1
    return np.where(n > 1, np.floor(np.log2(np.maximum(n - 1, 1))).astype(np.int64) + 1, 0)


def stream_cycles(pixels, pixels_per_clock):
    """Clocks to stream ``pixels`` values into the input register(s), ``pixels_per_clock`` at a time."""
    return -(-pixels // pixels_per_clock)  # ceil_div of ints or int arrays, without the call


def conv_fill_cycles(tree_inputs, activation: bool, folded_inputs):
    """Clocks from the last streamed pixel to the last convolution output (see :data:`STAGES`).

    ``tree_inputs``: input-channel circuits summed per output channel;
    ``folded_inputs``: True where input channels take several passes.
    """
    s = STAGES
    return (s.product + s.accumulate + s.adder_level * tree_depth(tree_inputs)
            + s.partial_sum * as_int(folded_inputs) + s.activation * as_int(activation))


def fc_fill_cycles(pixels_per_clock, activation: bool):
    """Clocks after the last input value of an FC stage: MAC, adder tree over the lanes, ReLU."""
    s = STAGES
    return s.product + s.accumulate + s.adder_level * tree_depth(pixels_per_clock) + s.activation * as_int(activation)


def pool_tail_cycles(conv_out_h, conv_out_w, conv_stride, stream_width, pool_out_h, pool_out_w, kernel, stride,
                     padding, pixels_per_clock=1):
    """Clocks a fused pool adds after the convolution's last output.

    The pool's last output is latched ``STAGES.pool`` clocks after the last
    conv output it uses. When the pool windows do not reach the last conv row
    or column (odd sizes), that output left the circuit earlier by its
    distance in the stream, and the pool may finish before the convolution.
    """
    y_used = minimum(stride * (pool_out_h - 1) + kernel - 1 - padding, conv_out_h - 1)
    x_used = minimum(stride * (pool_out_w - 1) + kernel - 1 - padding, conv_out_w - 1)
    gap_pixels = conv_stride * ((conv_out_h - 1 - y_used) * stream_width + (conv_out_w - 1 - x_used))
    if not (plain(gap_pixels) and plain(pixels_per_clock)):
        gap_pixels, pixels_per_clock = np.asarray(gap_pixels), np.asarray(pixels_per_clock)
    return maximum(STAGES.pool - gap_pixels // pixels_per_clock, 0)


def delay_line_words(kh, kw, width, dilation=1):
    """Delay-line registers of one convolution circuit over a stream ``width`` pixels wide.

    kh - 1 lines of ``width - kw`` registers between the kh MAC rows (spec
    §2). With dilation d the MACs of a row are d pixels apart (d - 1 extra
    registers between neighbours) and rows d lines apart.
    """
    d = dilation
    between_macs = kh * (kw - 1) * (d - 1)
    between_rows = (kh - 1) * (d * width - (kw - 1) * d - 1)
    return between_macs + between_rows


def pool_line_words(out_w, kernel, stride):
    """Line-memory words of one streaming pool channel.

    2x2/2: one running maximum per output column, I/2 words (spec §2). A
    window taller than the stride overlaps ceil(k/s) output rows, each
    needing its own row of running maxima.
    """
    return -(-kernel // stride) * out_w


def fold_split(fold, out_ch, in_ch):
    """Physical circuits and passes for folding factor ``fold`` (arrays over points).

    Full parallelism is one circuit per (output channel, input channel) pair.
    Folding first time-multiplexes output channels (each pass computes
    ``oc_phys`` channels from the whole input); a fold beyond ``out_ch``
    also splits the input channels (each pass adds ``ic_phys`` channels to
    stored partial sums). Returns (oc_phys, ic_phys, oc_passes, ic_passes).
    """
    fold = maximum(fold if type(fold) is int else np.asarray(fold, dtype=np.int64), 1)
    oc_target = minimum(fold, out_ch)
    # ceiling divisions of ints or int arrays as -(-a // b): num.ceil_div's expression, without the call
    oc_phys = -(-out_ch // oc_target)
    oc_passes = -(-out_ch // oc_phys)
    ic_target = minimum(-(-fold // oc_passes), in_ch)
    ic_phys = -(-in_ch // ic_target)
    ic_passes = -(-in_ch // ic_phys)
    return oc_phys, ic_phys, oc_passes, ic_passes


# ---------------------------------------------------------------------------
# Register-level reference (tests only): the same circuits, clock by clock.
# ---------------------------------------------------------------------------

@dataclass
class SimResult:
    """What :func:`simulate_conv_pool` observed."""

    conv: np.ndarray  # (H - kh + 1, W - kw + 1), summed over input channels
    conv_done: int  # clock edge that latched the last convolution output
    pool: np.ndarray | None
    pool_done: int | None  # clock edge that latched the last pooled output
    delay_registers: int  # delay-line registers of one circuit
    line_memory_words: int  # pooling line memory of one channel


_EMPTY = (0.0, None)  # (value, tag): a register holding no pixel / no window yet


def simulate_conv_pool(image: np.ndarray, kernels: np.ndarray, pool: bool = True) -> SimResult:
    """Clock the circuits of spec §2 on ``image`` (C, H, W) with ``kernels`` (C, kh, kw).

    One pixel per clock per input channel: edge e latches pixel e - 1 into
    the input register. Every register is computed from the values held
    before the edge. Each value carries a tag: a product the index of its
    pixel, a partial sum the index of its window's first pixel, so the
    simulator *observes* which window leaves the last MAC (and asserts that
    every MAC sees the pixel its window needs: the delay lines are the right
    length). Windows that wrap around a row are computed and dropped, as in
    the hardware. With ``pool``, the 2x2/2 streaming max pool of Figure 3.2
    follows.
    """
    image = np.asarray(image, dtype=float)
    kernels = np.asarray(kernels, dtype=float)
    C, H, W = image.shape
    _, kh, kw = kernels.shape
    line = W - kw
    n_pix = H * W
    depth = int(tree_depth(C))
    widths = [-(-C // 2 ** (lv + 1)) for lv in range(depth)]

    x_reg = [_EMPTY] * C
    prod = [[[_EMPTY] * kw for _ in range(kh)] for _ in range(C)]
    acc = [[[_EMPTY] * kw for _ in range(kh)] for _ in range(C)]
    delays = [[deque([_EMPTY] * line) for _ in range(kh - 1)] for _ in range(C)]
    tree = [[_EMPTY] * w for w in widths]
    oh, ow = H - kh + 1, W - kw + 1
    conv = np.full((oh, ow), np.nan)
    stream: list[tuple[int, int, int, float]] = []  # (edge that latched it, y, x, value)

    for edge in range(1, n_pix + 8 + depth + kh * W):
        new_x = [(image[c].flat[edge - 1], edge - 1) if edge <= n_pix else _EMPTY for c in range(C)]
        new_prod = [[[(x_reg[c][0] * kernels[c, i, j], x_reg[c][1]) for j in range(kw)] for i in range(kh)]
                    for c in range(C)]
        new_acc = []
        for c in range(C):
            rows = []
            for i in range(kh):
                row = []
                for j in range(kw):
                    p_val, p_idx = prod[c][i][j]
                    if i == 0 and j == 0:
                        incoming = (0.0, p_idx)  # a window starts here (the bias would enter here)
                    elif j > 0:
                        incoming = acc[c][i][j - 1]
                    else:
                        incoming = delays[c][i - 1][-1] if line > 0 else acc[c][i - 1][kw - 1]
                    in_val, start = incoming
                    if p_idx is None or start is None:
                        row.append(_EMPTY)
                        continue
                    assert p_idx == start + i * W + j, "delay line of the wrong length"
                    row.append((p_val + in_val, start))
                rows.append(row)
            new_acc.append(rows)
        # adder tree over input channels: one level per edge
        new_tree = []
        src = [acc[c][kh - 1][kw - 1] for c in range(C)]
        for lv in range(depth):
            level = []
            for k in range(widths[lv]):
                a = src[2 * k]
                b = src[2 * k + 1] if 2 * k + 1 < len(src) else (0.0, a[1])
                level.append((a[0] + b[0], a[1] if a[1] == b[1] else None))
            new_tree.append(level)
            src = tree[lv]
        result = tree[depth - 1][0] if depth else acc[0][kh - 1][kw - 1]  # latched at edge - 1
        for c in range(C):
            for i in range(kh - 1):
                if line > 0:
                    delays[c][i].appendleft(acc[c][i][kw - 1])
                    delays[c][i].pop()
        x_reg, prod, acc, tree = new_x, new_prod, new_acc, new_tree
        value, start = result
        if start is not None:
            y, x = divmod(start, W)
            if y < oh and x < ow:  # otherwise the window wrapped around a row: dropped
                conv[y, x] = value
                stream.append((edge - 1, y, x, value))

    res = SimResult(conv=conv, conv_done=max(e for e, *_ in stream), pool=None, pool_done=None,
                    delay_registers=(kh - 1) * line, line_memory_words=0)
    if pool:
        res.pool, res.pool_done, res.line_memory_words = _simulate_pool(stream, oh, ow)
    return res


def _simulate_pool(stream: list[tuple[int, int, int, float]], oh: int, ow: int):
    """2x2/2 streaming max pool (spec Figure 3.2) on the timed stream of conv outputs.

    First row of a pair: compare 2 adjacent values and store the larger in a
    line memory of ow/2 words. Second row: compare the 2 adjacent values
    (pair register, one edge), compare the larger with the stored value and
    latch the output (one more edge).
    """
    mem: list[float | None] = [None] * (ow // 2)
    out = np.full((oh // 2, ow // 2), np.nan)
    done = 0
    held = None  # register holding the left value of a pair
    for edge, y, x, v in stream:
        if y >= 2 * (oh // 2) or x >= 2 * (ow // 2):
            continue
        if x % 2 == 0:
            held = v
            continue
        pair_edge = edge + 1  # comparator 1 -> pair register (or line memory on the first row)
        pair = max(held, v)
        if y % 2 == 0:
            mem[x // 2] = pair
        else:
            out_edge = pair_edge + 1  # comparator 2 -> output register
            out[y // 2, x // 2] = max(pair, mem[x // 2])
            done = max(done, out_edge)
    return out, done, len(mem)

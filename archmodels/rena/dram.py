"""ReNA's DRAM transfer part: streams, channels and burst timing (spec ``rena.md`` §3).

The transfer part runs independently of the PB array and keeps DRAM busy
all the time, so a layer takes ``max(compute, dram)`` -- DRAM is hidden when
the array is slower, and sets the pace when the bursts are (FC layers).

Streams and channels
--------------------
DRAM holds inputs/outputs (X), weights (W) and instructions (I), one DDR4
channel each on the FPGA port; the 2-multiplier variant's second weight
stream shares the instruction channel through a selector (§3). So the
streams, in order, are ``X, W1[, W2], I``; with ``c`` channels:

* ``c`` >= number of streams: one channel per stream; every extra channel
  stripes another stream, alternately X and W1 (X first), which divides its
  bursts between its channels;
* fewer channels: the first ``c - 1`` streams get one each and the rest
  share the last (``c = 3``, 2 multipliers: ``X | W1 | W2 + I``, the paper's
  design).

Instruction traffic is one micro-code word per sequence of operations (§3),
negligible: the I stream occupies its channel but adds no bursts.

Bursts
------
One request moves ``BURST_BYTES`` = 512 bit x 64 beats = 4 KB (§3) and
occupies its channel ``burst_cycles`` accelerator cycles: 205 measured on
the FPGA (§3); never less than the channel's peak rate allows
(``BURST_BYTES / dram_gbps`` seconds). A stream's bytes of a layer are packed
into ``ceil(bytes / BURST_BYTES)`` requests.
"""

from __future__ import annotations

import numpy as np

BURST_BYTES = 512 // 8 * 64  # 512-bit x 64-beat burst (spec §3)


def burst_cycles(nominal_cycles, dram_gbps, clock_hz):
    """Cycles a burst occupies its channel: the nominal count, floored by the peak rate."""
    peak = BURST_BYTES / (np.asarray(dram_gbps, float) * 1e9) * np.asarray(clock_hz, float)
    return np.maximum(np.asarray(nominal_cycles, float), peak)


def bursts(nbytes):
    """Requests needed for ``nbytes`` of one stream in one layer."""
    return np.ceil(np.asarray(nbytes, float) / BURST_BYTES)


def stream_channels(channels: int, mults: int) -> list[dict[str, float]]:
    """Channel map: one dict per channel, stream name -> share of its bursts on that channel."""
    streams = ["X", "W1"] + (["W2"] if mults >= 2 else []) + ["I"]
    if channels >= len(streams):
        extra = channels - len(streams)
        stripes = {"X": 1 + (extra + 1) // 2, "W1": 1 + extra // 2}
        out = [{s: 1.0 / stripes.get(s, 1)} for s in streams]
        out += [{"X": 1.0 / stripes["X"]}] * (stripes["X"] - 1)
        out += [{"W1": 1.0 / stripes["W1"]}] * (stripes["W1"] - 1)
        return out
    own = [{s: 1.0} for s in streams[: channels - 1]]
    return own + [{s: 1.0 for s in streams[channels - 1:]}]


def dram_cycles(x_bytes, w1_bytes, w2_bytes, channels, mults, burst_cyc):
    """Cycles the busiest channel needs for a layer's streams (arrays over points).

    ``channels`` and ``mults`` are small integers: the channel map is built
    once per distinct pair and applied to the points that share it.
    """
    load = {"X": bursts(x_bytes), "W1": bursts(w1_bytes), "W2": bursts(w2_bytes), "I": np.zeros(np.shape(x_bytes))}
    out = np.zeros(np.shape(x_bytes))
    pairs = np.stack([np.asarray(channels), np.asarray(mults)], axis=1)
    for c, m in np.unique(pairs, axis=0):
        sel = (pairs[:, 0] == c) & (pairs[:, 1] == m)
        busiest = np.zeros(int(sel.sum()))
        for chan in stream_channels(int(c), int(m)):
            busiest = np.maximum(busiest, sum(load[s][sel] * share for s, share in chan.items()))
        out[sel] = busiest
    return out * burst_cyc

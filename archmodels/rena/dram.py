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

import math
from functools import lru_cache

import numpy as np

from ..layerarrays import groups
from ..num import maximum

BURST_BYTES = 512 // 8 * 64  # 512-bit x 64-beat burst (spec §3)


def burst_cycles(nominal_cycles, dram_gbps, clock_hz):
    """Cycles a burst occupies its channel: the nominal count, floored by the peak rate (arrays over points, or
    one point's Python floats)."""
    if type(nominal_cycles) is float and type(dram_gbps) is float and type(clock_hz) is float:
        return maximum(nominal_cycles, BURST_BYTES / (dram_gbps * 1e9) * clock_hz)
    peak = BURST_BYTES / (np.asarray(dram_gbps, float) * 1e9) * np.asarray(clock_hz, float)
    return np.maximum(np.asarray(nominal_cycles, float), peak)


def bursts(nbytes):
    """Requests needed for ``nbytes`` of one stream in one layer (a float for a Python float)."""
    if type(nbytes) is float:
        requests = nbytes / BURST_BYTES
        try:
            return float(math.ceil(requests))  # ..num.ceil, without its call
        except (ValueError, OverflowError):  # NaN, infinities
            return requests
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


#: the streams of :func:`stream_channels`, in the order a channel's shares are summed
STREAMS = ("X", "W1", "W2", "I")


@lru_cache(maxsize=128)
def channel_shares(channels: int, mults: int) -> tuple[tuple[float, ...], ...]:
    """The distinct rows of :func:`share_table` (striped channels repeat a row; the busiest channel does not
    depend on repeats or order), as Python floats."""
    return tuple(dict.fromkeys(map(tuple, share_table(channels, mults).tolist())))


@lru_cache(maxsize=128)
def channel_terms(channels: int, mults: int) -> tuple[tuple[tuple[int, float], ...], ...]:
    """:func:`channel_shares` as the (stream index, share) of each stream on the channel, in stream order."""
    return tuple(tuple((i, sh) for i, sh in enumerate(chan) if sh) for chan in channel_shares(channels, mults))


@lru_cache(maxsize=128)
def point_channels(channels: int, mults: int) -> tuple[tuple[tuple[int, float], ...], tuple[tuple[tuple[int, float], ...], ...]]:
    """:func:`channel_terms` as one point's :func:`point_dram_cycles` reads them: (the channels that carry one stream,
    as its (stream index, share); the channels that carry several, as :func:`channel_terms` does), without the I
    stream, which adds no bursts, and without channels left empty. The busiest channel is the same: a load is a
    whole number of bursts (>= +0.0, or NaN / infinite), so a channel's sum ``0 + a x s + ...`` equals ``a x s +
    ...``, adding the I stream's ``0.0 x s`` changes no bit, and an empty channel's 0 never exceeds the start, 0.0."""
    single, several = [], []
    for terms in channel_terms(channels, mults):
        terms = tuple((i, sh) for i, sh in terms if STREAMS[i] != "I")
        if len(terms) == 1:
            single.append(terms[0])
        elif terms:
            several.append(terms)
    return tuple(single), tuple(several)


def point_dram_cycles(x_bytes: float, w1_bytes: float, w2_bytes: float, chans, burst_cyc: float) -> float:
    """:func:`dram_cycles` of one layer of one point (Python floats), its channels given as
    :func:`point_channels` (looked up once per point, not once per layer)."""
    try:  # bursts() of each stream on Python floats, without its three calls (finite bytes)
        load = (float(math.ceil(x_bytes / BURST_BYTES)), float(math.ceil(w1_bytes / BURST_BYTES)),
                float(math.ceil(w2_bytes / BURST_BYTES)))
    except (ValueError, OverflowError):  # NaN, infinities: bursts() itself
        load = (bursts(x_bytes), bursts(w1_bytes), bursts(w2_bytes))
    single, several = chans
    busiest = 0.0
    for i, sh in single:  # the channels in any order: the maximum does not depend on it (NaN wins either way)
        total = load[i] * sh
        if not (busiest >= total or busiest != busiest):  # busiest = np.maximum(busiest, total), NaN included
            busiest = total
    for terms in several:
        total = 0  # sum(): from the int 0, the channel's streams in order
        for i, sh in terms:
            total = total + load[i] * sh
        if not (busiest >= total or busiest != busiest):
            busiest = total
    return busiest * burst_cyc


@lru_cache(maxsize=128)
def share_table(channels: int, mults: int) -> np.ndarray:
    """:func:`stream_channels` as a (channel, stream) matrix of shares (0: the stream is not on the channel)."""
    table = np.array([[chan.get(s, 0.0) for s in STREAMS] for chan in stream_channels(channels, mults)])
    table.setflags(write=False)
    return table


def dram_cycles(x_bytes, w1_bytes, w2_bytes, channels, mults, burst_cyc):
    """Cycles the busiest channel needs for a layer's streams (arrays over points, or layers x points).

    ``channels`` and ``mults`` are small integers per point: each point gets the share matrix of
    its pair (:func:`share_table`), and every channel's load is the sum of its streams' bursts x
    shares, in stream order (a stream not on the channel adds an exact zero: bursts are finite).
    One layer of one point: Python floats (bytes, burst cycles) and ints (channels, mults).
    """
    if type(x_bytes) is float:  # one layer of one point: the single-pair loop, on Python floats
        return point_dram_cycles(x_bytes, w1_bytes, w2_bytes, point_channels(channels, mults), burst_cyc)
    load = (bursts(x_bytes), bursts(w1_bytes), bursts(w2_bytes), np.zeros(np.shape(x_bytes)))
    pairs = groups(channels, mults)
    busiest = np.zeros(np.shape(x_bytes))
    if len(pairs) == 1:  # one (channels, mults) pair for every point (one point, fixed sizes): its table's numbers,
        # each distinct channel once (striped channels repeat a row; the maximum does not depend on repeats or order)
        (c, m), _ = pairs[0]
        for chan in channel_shares(int(c), int(m)):
            busiest = np.maximum(busiest, sum(ld * sh for ld, sh in zip(load, chan) if sh))
        return busiest * burst_cyc
    shares = np.zeros((max(int(c) for (c, _), _ in pairs), len(STREAMS), np.shape(x_bytes)[-1]))
    for (c, m), sel in pairs:  # shares[channel, stream, point]
        shares[:int(c), :, sel] = share_table(int(c), int(m))[:, :, None]
    for chan in shares:
        busiest = np.maximum(busiest, sum(ld * sh for ld, sh in zip(load, chan) if sh.any()))
    return busiest * burst_cyc

"""Schedules and data movement of a mapped layer: SPM plan, DRAM/SPM/LMM traffic.

A :class:`Plan` is a mapping (:mod:`archmodels.emax_mapper`) plus how its
data moves (spec `emax.md` §2, §3): which starts run, where partial sums
live between input-channel passes, what the scratchpad (SPM) holds, and
every group of LMM transfers with its size, count, source and state. Plans
are structural (no clock, bandwidth or bus width); :mod:`archmodels.emax_timing`
turns them into cycles and :func:`dram_read_bytes` rounds reads to bus words.

Data movement rules
-------------------
* EMAXV (§2): each start computes one output row segment of one output
  channel for one input-channel pass. The input rows of a (pass, output
  row) stay in the LMMs across the output-channel starts; each kernel row
  is transferred once per CGRA row holding its loads (no vertical
  broadcast). Partial sums go to DRAM and back between passes; weights are
  register constants (REGV), read once by the host.
* EMAXVR (§3): broadcast sends each input row once per use. Without an SPM
  everything comes from DRAM: input rows are re-read for every output row
  that uses them (kernel height / stride times) and partial sums go to DRAM
  between passes. With an SPM, partial sums stay in the SPM and inputs are
  staged so that DRAM is read once per accumulation unit.
* If the SPM cannot hold the partial sums of a group (plus the staged
  inputs), the outermost loop of the start is split into *bands*; each band
  runs all passes before the next. Output-row bands re-read the weights
  (unless they are staged in the SPM) and the input rows of the kernel halo;
  output-channel bands re-read the input. ``starts`` counts the starts of
  one sweep over the output (the thesis's count, IC/ICpar per group);
  ``activations`` = starts x bands is what the array actually runs and pays
  the per-start overhead for.
* Fused pooling (§3.1 "the conv result in SPM is pooled"): with the default
  ``after_conv`` schedule the pooling pass runs after the convolution's last
  start over its whole result; the part of the result that did not stay in
  the SPM was written to DRAM and is read back (``spill``). Only the pooled
  output goes to DRAM. ``per_band`` (not built in the papers) pools each
  band while it is still in the SPM.
* A layer's final output stays in the SPM for the next layer when both fit
  (decided by :mod:`archmodels.emax`); the next layer then reads its input
  from the SPM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .emax_mapper import ConvShape, FCShape, Hw, Mapping

KINDS = ("input", "weight", "psum", "output", "spill")


@dataclass(frozen=True)
class Ctx:
    """How a layer connects to its neighbours through the SPM."""

    input_resident: bool = False  # the whole input is in the SPM (left there by the previous layer)
    keep_output: bool = False  # leave the final (pooled) output in the SPM for the next layer
    pool: ConvShape | None = None  # fused pooling pass run after this convolution
    pool_schedule: str = "after_conv"


@dataclass(frozen=True)
class Xfer:
    """A group of identical FSM-bus transfers between LMMs and DRAM or SPM."""

    kind: str
    src: str  # dram | spm: where the data lives outside the LMMs
    write: bool  # LMM -> memory
    phase: str  # load | pload | pdrain | drain | pool
    bursts: float  # occasions on which the transfers happen
    per_burst: float  # transfers per occasion (spread over ``par`` buses)
    bytes_each: float
    par: int

    @property
    def count(self) -> float:
        return self.bursts * self.per_burst

    @property
    def bytes(self) -> float:
        return self.count * self.bytes_each


@dataclass(frozen=True)
class PoolPass:
    """The fused pooling pass run after a convolution (or per band)."""

    ops: float  # MAX operations
    iterations: float
    loop_ends: float
    rows_used: int
    regs: int
    macs: int  # MAX units busy per iteration


@dataclass(frozen=True)
class Plan:
    """A mapping with its schedule and data movement (structural numbers, whole layer)."""

    mapping: Mapping
    ops: float  # MACs (or MAX operations) of the layer
    passes: int
    starts: float
    activations: float
    bands: int
    band_dim: str
    iterations: float
    loop_ends: float
    xfers: tuple[Xfer, ...]
    stage_reads: tuple[tuple[str, float, float], ...] = ()  # DRAM -> SPM: (kind, transfers, bytes each)
    host_reads: tuple[tuple[str, float], ...] = ()  # register constants read by the host: (kind, bytes)
    spm_read: float = 0.0
    spm_write: float = 0.0
    lmm_read: float = 0.0
    lmm_write: float = 0.0
    psum_home: str = "-"
    stage_w: bool = False
    spm_need: float = 0.0
    pool: PoolPass | None = None
    keep_output: bool = False
    op: str = "mac"  # mac, or max for pooling

    @property
    def schedule(self) -> str:
        s = f"psum:{self.psum_home}"
        if self.bands > 1:
            s += f", {self.bands} {self.band_dim} bands"
        if self.stage_w:
            s += ", weights staged"
        return s

    def dram_write_bytes(self) -> dict[str, float]:
        out = dict.fromkeys(KINDS, 0.0)
        for x in self.xfers:
            if x.src == "dram" and x.write:
                out[x.kind] += x.bytes
        return out

    def dram_read_groups(self) -> list[tuple[str, float, float]]:
        """(kind, transfers, bytes each) of every DRAM read that moves bus words."""
        g = [(x.kind, x.count, x.bytes_each) for x in self.xfers if x.src == "dram" and not x.write and x.count > 0]
        return g + [s for s in self.stage_reads if s[1] > 0]


# ---------------------------------------------------------------- conv-like layers
def _bands(n: int, t: int) -> list[tuple[int, int]]:
    size = math.ceil(n / t)
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def _segments(sh: ConvShape, m: Mapping) -> list[tuple[int, int]]:
    return [(i, min(sh.ow, i + m.ow_seg)) for i in range(0, sh.ow, m.ow_seg)]


@lru_cache(maxsize=65536)
def _rows_sum(sh: ConvShape, bands: int) -> int:
    """Input rows read by ``bands`` output-row bands (kernel halo rows counted once per band)."""
    return sum(sh.input_rows(a, b) for a, b in _bands(sh.oh, bands))


@lru_cache(maxsize=65536)
def _cols_sum(sh: ConvShape, ow_seg: int) -> int:
    return sum(sh.input_cols(i, min(sh.ow, i + ow_seg)) for i in range(0, sh.ow, ow_seg))


@lru_cache(maxsize=16384)
def conv_plans(sh: ConvShape, m: Mapping, hw: Hw, ctx: Ctx, pool_pass: PoolPass | None = None) -> list[Plan]:
    """Every schedule of a conv/pool mapping (one, or with/without staged weights)."""
    if m.pattern == "single":
        return [_emaxv_plan(sh, m, hw)]
    out = []
    for stage_w, psum_dram in ((False, False), (True, False), (False, True)):
        if psum_dram and hw.spm_bytes == 0:
            continue  # without an SPM the partial sums are in DRAM anyway
        p = _emaxvr_plan(sh, m, hw, ctx, stage_w, pool_pass, psum_dram)
        if p is not None:
            out.append(p)
    return out


def _emaxv_plan(sh: ConvShape, m: Mapping, hw: Hw) -> Plan:
    """EMAXV single-loop schedule (spec §2): everything through DRAM, nothing overlapped."""
    e, c, g = hw.elem_bytes, hw.cols, sh.groups
    passes = math.ceil(sh.ic / m.icpar) * math.ceil(sh.kh / m.khpar)
    segs = _segments(sh, m)
    n_seg = len(segs)
    vk = sh.valid_kernel_rows()
    col_bytes = sum(sh.input_cols(a, b) for a, b in segs) * e
    starts = g * passes * sh.oh * n_seg * sh.oc
    iters = g * passes * sh.oc * sh.oh * sh.ow
    ops = g * sh.oc * sh.oh * sh.ow * sh.ic * sh.kh * sh.kw
    # inputs: per (pass, output row, segment) the valid kernel rows of the pass's channels, once per load row
    in_xfers = g * sh.ic * vk * n_seg * m.dup_rows
    in_bursts = g * passes * sh.oh * n_seg
    in_bytes = g * sh.ic * vk * col_bytes * m.dup_rows
    psum_rows = g * (passes - 1) * sh.oc * sh.oh * n_seg
    out_rows = g * sh.oc * sh.oh * n_seg
    xf = [
        Xfer("input", "dram", False, "load", in_bursts, in_xfers / in_bursts, in_bytes / in_xfers, c),
        Xfer("psum", "dram", False, "load", psum_rows, 1, sh.ow * e / n_seg, 1),
        Xfer("psum", "dram", True, "drain", psum_rows, 1, sh.ow * e / n_seg, 1),
        Xfer("output", "dram", True, "drain", out_rows, 1, sh.ow * e / n_seg, 1),
    ]
    weights = (g * sh.oc * sh.ic * sh.kh * sh.kw + g * sh.oc) * e if sh.op == "mac" else 0.0
    delivered = sum(x.bytes for x in xf if not x.write)
    stored = sum(x.bytes for x in xf if x.write)
    return Plan(m, ops, passes, starts, starts, 1, "-", iters, starts, tuple(xf),
                host_reads=(("weight", weights),), lmm_read=iters * m.load_bytes_per_iter + stored,
                lmm_write=delivered + stored, psum_home="dram" if passes > 1 else "-", op=sh.op)


def _emaxvr_plan(sh: ConvShape, m: Mapping, hw: Hw, ctx: Ctx, stage_w: bool, pool_pass: PoolPass | None,
                 psum_dram: bool = False) -> Plan | None:
    e, c, S = hw.elem_bytes, hw.cols, hw.spm_bytes
    mac = sh.op == "mac"
    outer = m.order[-1]
    g, gpar = sh.groups, m.gpar
    g2 = math.ceil(g / gpar)
    passes = math.ceil(sh.ic / m.icpar) * math.ceil(sh.kh / m.khpar)
    segs = _segments(sh, m)
    n_seg = len(segs)
    z = math.ceil(sh.oc / m.oc_chunk)
    oc_iters = sum(math.ceil(min(m.oc_chunk, sh.oc - i) / m.oc_par) for i in range(0, sh.oc, m.oc_chunk))
    out_g = sh.oc * sh.oh * sh.ow * e
    out_total = g * out_g
    in_total = g * sh.ic * sh.h * sh.w * e
    w_group = (sh.oc * sh.ic * sh.kh * sh.kw + sh.oc) * e if mac else 0.0
    pooled_total = (g * sh.oc * ctx.pool.oh * ctx.pool.ow * e) if ctx.pool is not None else 0.0
    per_band_pool = ctx.pool is not None and ctx.pool_schedule == "per_band"
    if stage_w and (not mac or outer != "OH" or S == 0 or w_group * gpar > S):
        return None
    if psum_dram and (passes == 1 or per_band_pool or stage_w or (ctx.keep_output and ctx.pool is None)):
        return None

    # ---- SPM plan: bands of the outermost loop so that one accumulation unit fits ----
    resident = in_total if ctx.input_resident else 0.0
    span = min(sh.w, (m.ow_seg - 1) * sh.stride + sh.kw_ext)
    if m.input_mode == "rows":  # rolling window of the pass's input rows
        staged = m.icpar * gpar * min(sh.h, sh.kh_ext + sh.stride) * span * e
    elif m.input_mode == "swap":  # the pass's input planes (and the next pass's)
        staged = 2 * m.icpar * gpar * sh.h * span * e
    else:
        staged = 0.0
    units = sh.oh if outer == "OH" else math.ceil(sh.oc / m.oc_par)

    def unit_bytes(t: int) -> float:
        if outer == "OH":
            return gpar * min(sh.oc, m.oc_chunk) * math.ceil(sh.oh / t) * m.ow_seg * e
        return gpar * min(m.oc_chunk, math.ceil(units / t) * m.oc_par) * sh.oh * m.ow_seg * e

    needs_unit = passes > 1 or per_band_pool
    smallest = unit_bytes(units) if needs_unit else 0.0
    stage_in = (S > 0 and staged > 0 and not ctx.input_resident and resident + staged + smallest <= S)
    if m.input_mode == "swap" and S > 0 and not (stage_in or ctx.input_resident):
        return None  # with an SPM, planes too large for the LMMs are staged (spec §3 item 3) or not swapped at all
    # output-row bands keep the kernel halo rows of every input channel so a band boundary re-reads nothing
    halo_keep = (sh.ic * gpar * max(0, sh.kh_ext - sh.stride) * span * e
                 if (stage_in and m.input_mode == "rows" and outer == "OH") else 0.0)
    fixed = resident + (staged if stage_in else 0.0) + (w_group * gpar if stage_w else 0.0)
    bands, psum_home = 1, ("spm" if passes > 1 else "-")
    if ctx.keep_output and ctx.pool is None:  # the whole output stays: no bands
        need = fixed + out_total
        if S == 0 or need > S:
            return None
        spm_need = need
    elif ctx.keep_output and pooled_total > S - resident:
        return None
    elif S == 0:
        psum_home = "dram" if passes > 1 else "-"
        spm_need = 0.0
    elif psum_dram:  # partial sums in DRAM (an address choice, spec §3 item 3): no bands, more traffic
        psum_home = "dram"
        spm_need = fixed
    elif needs_unit:
        def need(t: int) -> float:
            return fixed + (halo_keep if t > 1 else 0.0) + unit_bytes(t)

        t = _first_band_count(units, need, S)
        if t == 0:
            return None
        bands = t
        spm_need = need(t)
    else:
        if fixed > S:
            return None
        spm_need = fixed
    if stage_w and bands == 1 and n_seg == 1:
        return None  # staging weights only pays off when they would be re-read
    t_oh = bands if outer == "OH" else 1
    t_oc = bands if outer == "OC" else 1

    # ---- counts per group (bytes) and per group batch (starts, iterations) ----
    starts = g2 * z * n_seg * passes
    activations = starts * bands
    iters = g2 * passes * oc_iters * sh.oh * sum(math.ceil((b - a) / m.px_par) for a, b in segs)
    loop_ends = g2 * passes * oc_iters * sh.oh * n_seg
    ops = g * sh.oc * sh.oh * sh.ow * sh.ic * sh.kh * sh.kw
    cols_sum = _cols_sum(sh, m.ow_seg)
    rows_band_sum = _rows_sum(sh, t_oh)
    vk = sh.valid_kernel_rows()
    row_b = cols_sum / n_seg * e  # bytes of one input row segment
    in_par = max(1, c // 2) if m.pattern == "A" else c
    xf: list[Xfer] = []
    stage: list[tuple[str, float, float]] = []
    spm_r = spm_w = 0.0

    # inputs
    if m.input_mode == "rows":
        deliveries = sh.ic * vk * n_seg * z * t_oc
        touched = sh.input_rows(0, sh.oh) if halo_keep else rows_band_sum
        dram_rows = sh.ic * touched * n_seg * z * t_oc
    elif m.input_mode == "resident":
        deliveries = sh.ic * rows_band_sum * n_seg * z * t_oc
        dram_rows = deliveries
    else:  # swap: re-streamed for every output-channel iteration
        deliveries = sh.ic * vk * n_seg * oc_iters
        dram_rows = sh.ic * rows_band_sum * n_seg * t_oc
    deliveries *= g
    dram_rows *= g
    if ctx.input_resident:
        in_src = "spm"
        spm_r += deliveries * row_b
    elif stage_in:
        in_src = "spm"
        # full-width rows of a channel are contiguous: staged as one transfer per channel and band
        regions = g * sh.ic * n_seg * z * t_oc * (t_oh if not halo_keep else 1)
        if n_seg == 1 and m.input_mode != "resident":
            stage.append(("input", regions, dram_rows * row_b / regions))
        else:
            stage.append(("input", dram_rows, row_b))
        spm_w += dram_rows * row_b
        spm_r += deliveries * row_b
    else:
        in_src = "dram"
    if m.input_mode == "rows":  # at each output row
        in_bursts = g2 * passes * z * n_seg * sh.oh
    elif m.input_mode == "swap":  # at each output row of each output-channel iteration
        in_bursts = g2 * passes * n_seg * oc_iters * sh.oh
    else:  # once per start
        in_bursts = activations
    in_bursts = max(in_bursts, 1)
    # broadcast: each channel's rows needed at a burst go out as one transfer (spec §3 item 2)
    per = min(deliveries / in_bursts, gpar * m.icpar) if deliveries else 0.0
    each = deliveries * row_b / (in_bursts * per) if per else 0.0
    xf += _split_first("input", in_src, False, in_bursts, per, each, in_par, activations)

    # weights (one transfer per kernel LMM per start; re-read per output-row band and per segment)
    if mac:
        bias_g = sh.oc * e
        w_deliv_bytes = g * (w_group - bias_g) * t_oh * n_seg
        w_count = max(activations * m.kernel_lmms, 1)
        w_src = "spm" if stage_w else "dram"
        if stage_w:
            n_chunks = math.ceil(g * w_group / 4096)
            stage.append(("weight", n_chunks, g * w_group / n_chunks))
            spm_w += g * w_group
            spm_r += w_deliv_bytes
        xf += _split_first("weight", w_src, False, activations, w_count / activations, w_deliv_bytes / w_count,
                           in_par if m.pattern == "A" else c, activations)
        # bias: to the bottom PEs with the first pass of every accumulation unit
        units_act = g2 * z * n_seg * bands
        xf += _split_first("weight", w_src, False, units_act, 1, g * bias_g * t_oh * n_seg / units_act, 1, activations)

    # partial sums between passes, and the final output rows
    # partial sums / outputs move at each end of the OW loop (a row per channel) when OH is the outer
    # loop, or as the whole OH x OW block of a channel at each OH-loop end when OC is outer (spec §3.1)
    gran = sh.oh if outer == "OC" else 1
    psum_rows = g * (passes - 1) * sh.oc * sh.oh * n_seg / gran
    out_rows = g * sh.oc * sh.oh * n_seg / gran
    row_out = sh.ow * e / n_seg * gran
    o_par = 1 if m.pattern == "A" else c
    if psum_rows:
        src = "spm" if psum_home == "spm" else "dram"
        per = max(1, gpar * m.oc_par)
        xf += _split_first("psum", src, False, psum_rows / per, per, row_out, o_par, activations)
        xf.append(Xfer("psum", src, True, "pdrain", psum_rows / per, per, row_out, o_par))
        if src == "spm":
            spm_r += psum_rows * row_out
            spm_w += psum_rows * row_out
    spill = 0.0
    per = max(1, gpar * m.oc_par)
    if ctx.pool is not None and not per_band_pool:  # the SPM keeps what it can of the result (and the kept pooled output)
        spill = max(0.0, out_total - (S - (pooled_total if ctx.keep_output else 0.0)))
    if ctx.keep_output or ctx.pool is not None:
        in_spm = out_total - spill
        xf += _split_last("output", "spm", out_rows / per * in_spm / out_total, per, row_out, o_par)
        spm_w += in_spm
        if spill:
            xf += _split_last("spill", "dram", out_rows / per * spill / out_total, per, row_out, o_par)
    else:
        xf += _split_last("output", "dram", out_rows / per, per, row_out, o_par)

    pool = None
    if ctx.pool is not None:
        pool = pool_pass
        # the pooling pass reads the conv result plane by plane (SPM part + spilled part), writes pooled planes
        chunk = float(sh.oh * sh.ow * e)
        if spill:
            xf.append(Xfer("spill", "dram", False, "pool", spill / chunk, 1, chunk, c))
        xf.append(Xfer("output", "spm", False, "pool", (out_total - spill) / chunk, 1, chunk, c))
        spm_r += out_total - spill
        prow = ctx.pool.oh * ctx.pool.ow * e
        dst = "spm" if ctx.keep_output else "dram"
        xf.append(Xfer("output", dst, True, "pool", pooled_total / prow, 1, prow, c))
        if dst == "spm":
            spm_w += pooled_total
    delivered = sum(x.bytes for x in xf if not x.write and x.phase != "pool")
    stored = sum(x.bytes for x in xf if x.write and x.phase != "pool")
    return Plan(m, ops, passes, starts, activations, bands, {"OH": "output-row", "OC": "output-channel"}[outer],
                iters, loop_ends, tuple(xf), tuple(stage), spm_read=spm_r, spm_write=spm_w,
                lmm_read=iters * m.load_bytes_per_iter + stored, lmm_write=delivered + stored,
                psum_home=psum_home, stage_w=stage_w, spm_need=spm_need, pool=pool, keep_output=ctx.keep_output,
                op=sh.op)


def _first_band_count(units: int, need, budget: float) -> int:
    """Smallest band count t in 1..units with need(t) <= budget (need is non-increasing), 0 if none."""
    if need(units) > budget:
        return 0
    if need(1) <= budget:
        return 1
    lo, hi = 1, units  # need(lo) > budget >= need(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if need(mid) <= budget:
            hi = mid
        else:
            lo = mid
    return hi


def _split_first(kind, src, write, bursts, per_burst, bytes_each, par, activations) -> list[Xfer]:
    """The first burst is loaded before EXEC (LOAD); the rest overlap EXEC (PLOAD)."""
    if bursts <= 0 or per_burst <= 0:
        return []
    first = min(1.0, bursts)
    out = [Xfer(kind, src, write, "load", first, per_burst, bytes_each, par)]
    if bursts > first:
        out.append(Xfer(kind, src, write, "pload", bursts - first, per_burst, bytes_each, par))
    return out


def _split_last(kind, dst, bursts, per_burst, bytes_each, par) -> list[Xfer]:
    """Results drain during EXEC (PDRAIN) except the last burst (DRAIN)."""
    if bursts <= 0:
        return []
    last = min(1.0, bursts)
    out = [Xfer(kind, dst, True, "drain", last, per_burst, bytes_each, par)]
    if bursts > last:
        out.append(Xfer(kind, dst, True, "pdrain", bursts - last, per_burst, bytes_each, par))
    return out


# ---------------------------------------------------------------- FC / dense products
@lru_cache(maxsize=4096)
def fc_plan(sh: FCShape, m: Mapping, hw: Hw, ctx: Ctx) -> Plan | None:
    """FC schedule (spec §3.1): per (pass, chunk) load the weights, then one start per vector."""
    e, c, S = hw.elem_bytes, hw.cols, hw.spm_bytes
    passes = math.ceil(sh.inputs / m.icpar)
    chunks = math.ceil(sh.outputs / m.oc_chunk)
    n = sh.batch
    starts = passes * chunks * n
    iters = passes * sh.outputs * n
    w_bytes = (sh.inputs * sh.outputs + sh.outputs) * e
    w_count = sh.inputs * chunks  # one transfer per MAC PE's LMM per (pass, chunk): no broadcast
    xf = [Xfer("weight", "dram", False, "load" if not m.pload else "pload", passes * chunks,
               w_count / (passes * chunks), w_bytes / w_count, c)]
    if m.pload:  # the first chunk cannot overlap anything
        first = Xfer("weight", "dram", False, "load", 1, w_count / (passes * chunks), w_bytes / w_count, c)
        xf = [first, Xfer("weight", "dram", False, "pload", passes * chunks - 1, first.per_burst, first.bytes_each, c)]
    psum_vec = sh.outputs * n * e
    psum_home = "-" if passes == 1 else ("spm" if 0 < psum_vec <= S - (sh.inputs * n * e if ctx.input_resident else 0) else "dram")
    if ctx.keep_output and S < psum_vec + (sh.inputs * n * e if ctx.input_resident else 0):
        return None
    row = sh.outputs / chunks * e
    spm_r = spm_w = 0.0
    if passes > 1:
        cnt = (passes - 1) * chunks * n
        xf.append(Xfer("psum", psum_home, False, "load", cnt, 1, row, 1))
        xf.append(Xfer("psum", psum_home, True, "drain", cnt, 1, row, 1))
        if psum_home == "spm":
            spm_r += cnt * row
            spm_w += cnt * row
    dst = "spm" if ctx.keep_output else "dram"
    xf.append(Xfer("output", dst, True, "drain", chunks * n, 1, row, 1))
    if dst == "spm":
        spm_w += sh.outputs * n * e
    in_bytes = sh.inputs * n * e
    host = (("input", 0.0 if ctx.input_resident else in_bytes),)
    if ctx.input_resident:
        spm_r += in_bytes
    delivered = sum(x.bytes for x in xf if not x.write)
    stored = sum(x.bytes for x in xf if x.write)
    return Plan(m, sh.inputs * sh.outputs * n, passes, starts, starts, 1, "-", iters, starts, tuple(xf),
                host_reads=host, spm_read=spm_r, spm_write=spm_w,
                lmm_read=iters * m.load_bytes_per_iter + stored, lmm_write=delivered + stored,
                psum_home=psum_home, spm_need=psum_vec if psum_home == "spm" else 0.0, keep_output=ctx.keep_output)

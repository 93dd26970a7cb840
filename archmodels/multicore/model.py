"""Multi-core shared-memory NN accelerator with task placement (spec `multicore.md`).

DaDianNao-like: ``cores`` cores share one on-chip shared memory (SHM); each
core has an Input Buffer (IB), a Weight Buffer (WB), an Output Buffer (OB)
and an NFU that, per step, MACs one input chunk (``ni`` values) into ``no``
neurons (§1). A layer is placed on the cores with one of the paper's
placements (§2): ``B`` (one core), ``T1`` (neuron grouping), ``T2`` (input
grouping + merge), and ``TR1``/``TR2`` (the same with IB reuse).

Counting rule (derived from the published FC1 table, §4)
--------------------------------------------------------
For each output chunk a core computes, it reads every input chunk of its
input group that is not in the IB, plus **one head read** (the bias / initial
value chunk; the paper notes "one extra read per output chunk"), and writes
the output (T1, B) or partial-sum (T2) chunk. The T2 merge costs **one read
and one write per output chunk the core owns** in the paper's count.
FC1 (512 x 512, 16 cores, ni = no = 16, 16 entries) then gives exactly
B 32x(32+1)=1056/32, T1 2x(32+1)=66/2, T2 32x(2+1)+2=98/32+2=34,
TR2 2+32+2=36/34 -- the published table.

The paper's count leaves out the partial sums each core gathers from the
other cores during the merge. They are real traffic, so the model reports
them separately (``shm_merge_reads_per_core`` = owned chunks x cores) and
charges their bytes to time and energy, while ``shm_reads_per_core`` keeps
the paper's counting rule.

Input Buffer policy
-------------------
The IB is a fully associative buffer of ``input_buffer_entries`` chunks with
LRU (default) or FIFO replacement. Input chunks are read in the same order
for every output chunk (a cyclic pattern), for which both policies give the
classic result: all chunks hit after the first pass when the group fits,
and none ever hit when it does not (§1: "with more chunks than entries,
sequential reading never reuses"). :func:`simulate_misses` runs the policy
chunk by chunk; the model uses the closed form :func:`cyclic_misses`, and a
test checks the two agree. Without reuse (B, T1, T2) every chunk is read.

Cycle model (§5 leaves it open; stated here)
--------------------------------------------
A layer runs as phases separated by a barrier (compute; merge for T2/TR2).
A phase takes ``max(port, nfu, network, dram) + fill`` cycles, where

* ``port`` = SHM accesses of the busiest core / ``mem_ports`` (each port
  issues one chunk access per cycle; reads are prefetched into the IB and
  writes leave through the OB, so they overlap the NFU, §1);
* ``nfu`` = NFU steps of the busiest core (IPC 1; one step = one input chunk
  x one output chunk; a merge step adds one partial-sum chunk);
* ``network`` = bytes moved by all cores / network bytes per cycle
  (``noc_gbps`` at ``clock_mhz``), the resource the cores share;
* ``dram`` = weight bytes streamed from DRAM / DRAM bytes per cycle (only
  when a core's weights exceed its WB);
* ``fill`` = network + memory latency + NFU pipeline depth (3 stages:
  multiply, adder tree, activation, as in DianNao).

States (the breakdown): the compute phase as ``COMPUTE`` (the NFU steps),
then the cycles beyond them under the term that bounds it (``SHM_WAIT``,
``NOC_WAIT`` or ``DRAM_WAIT``), ``FILL``; the merge phase as ``MERGE``.

With FC1's figures this gives T1 == TR1 < TR2 < T2 < B: the network carries
every core's chunks, so TR2's 34 partial-sum writes cost more than the
input reuse saves, as the paper explains.

Other layers: a matmul ``C[m x n] = A[m x k] B`` runs as an FC layer of k
inputs and m neurons over n vectors; a convolution is lowered the same way
per group (k = ic/G x kh x kw, m = oc/G, n = oh x ow); a pooling layer reads
its input chunks and writes its output chunks once, one NFU step per output
chunk per window element. Data start in SHM (§3); DRAM traffic comes only
from weights that do not fit the WBs, streamed every inference, and from a
layer whose feature maps do not fit the SHM: it is split into tiles along
its output rows (:func:`shm_tiling`), reading its input from DRAM once (plus
the rows a window re-reads at each tile border) and writing its output once,
at ``dram_gbps`` alongside the other phase limits.

Evaluation (issue 15)
---------------------
One set of formulas (:func:`fc_counts`, :func:`pool_counts`, :func:`layer_costs` (time, traffic, energy),
:func:`shm_tiling_of`, :func:`chip_area_static`) serves two paths: a batch runs them once over arrays of
(layers x points); a single point (a study's trial) runs them layer by layer on Python numbers, each distinct
layer shape once, and puts the results into one array (a numpy call on a one-point array costs about as much as
20 Python operations). Small helpers (:func:`where`, :func:`minimum`, :func:`maximum`, :func:`max_of`,
:func:`ceil`) give numpy's result on either; ``tests/test_multicore_speed_paths.py`` checks that each point alone
gives the very numbers it gets inside a batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workloads import Workload
from workloads.layers import FC, Conv2D, Layer, MatMul, Pool

from .. import num, tech
from .. import vector
from ..base import Model
from ..layerarrays import column, full, groups, layer_batches, per_node, point_batches, stack_rows
from ..memo import IdentityMemo
from ..clock import clock_reason, logic_area_factor
from ..clock import point_clock as _point_clock
from ..num import ceil, max_of, maximum, minimum, where
from ..params import Param, Points, batch_size
from ..result import ENERGY_PART_TOTALS, ENERGY_PARTS, LAYER_METRICS, LayerBatch, Metric, layer_sums

PLACEMENTS = ("B", "T1", "TR1", "T2", "TR2")
NFU_PIPELINE_STAGES = 3  # DianNao NFU: NFU-1 multiply, NFU-2 adder tree, NFU-3 activation


#: Input Buffer replacement policies (:func:`cyclic_misses`)
IB_POLICIES = ("lru", "fifo")

#: one point's parameter values: ``.item()`` of each one-element array (as ``.item(0)``), mapped in C
_item = np.ndarray.item

#: :func:`archmodels.clock.point_clock` of the last few (clock, node) pairs: a trial asks for its point's three
#: times (feasibility, layers, totals)
point_clock = lru_cache(maxsize=8)(_point_clock)


# ---- Python numbers or arrays ----
# The formulas below run on Python numbers (one point, layer by layer: a numpy call costs ~20 Python operations)
# or on numpy arrays over (layers x points) (a batch). The helpers of ..num give numpy's result either way:
# Python +, -, *, / on floats are IEEE doubles like float64, and integer arithmetic is exact in both (counts
# stay far below 2**53, where int64 and float64 hold them exactly).

def cyclic_misses(n_chunks, passes, entries, policy="lru"):
    """IB misses when ``n_chunks`` chunks are read in order ``passes`` times.

    LRU and FIFO agree on a cyclic pattern: if the chunks fit, only the first
    pass misses; otherwise every access misses (Python numbers or arrays).
    """
    if policy not in IB_POLICIES:
        raise ValueError(f"unknown IB policy {policy}")
    return _cyclic_misses(n_chunks, passes, entries)


def _cyclic_misses(n_chunks, passes, entries):
    """:func:`cyclic_misses` of either policy (their closed form is one)."""
    return where(n_chunks <= entries, n_chunks, n_chunks * passes)


def simulate_misses(n_chunks: int, passes: int, entries: int, policy: str = "lru") -> int:
    """Reference: run the replacement policy access by access; return misses."""
    buf: list[int] = []  # front = next victim
    misses = 0
    for _ in range(passes):
        for c in range(n_chunks):
            if c in buf:
                if policy == "lru":
                    buf.remove(c)
                    buf.append(c)
                continue
            misses += 1
            if len(buf) >= entries:
                buf.pop(0)
            buf.append(c)
    return misses


def placement_order(cycles: dict[str, float], rel_tol: float = 1e-9) -> str:
    """Placements from fastest to slowest; equal cycle counts joined by ``==``."""
    items = sorted(cycles.items(), key=lambda kv: (kv[1], PLACEMENTS.index(kv[0])))
    out = items[0][0]
    for (_, prev), (name, cyc) in zip(items, items[1:]):
        out += (" == " if abs(cyc - prev) <= rel_tol * max(abs(prev), 1.0) else " < ") + name
    return out


def tiling_geometry(layer: Layer) -> tuple[int, int, int]:
    """(output rows, input rows, halo) along which :func:`shm_tiling` splits ``layer``; the halo: the input rows
    a window re-reads at a tile border (window - stride, at least 0)."""
    if isinstance(layer, (Conv2D, Pool)):
        window = layer.dilation * (layer.kernel_h - 1) + 1 if isinstance(layer, Conv2D) else layer.kernel
        return layer.out_h, layer.in_h, max(window - layer.stride, 0)
    rows = layer.batch if isinstance(layer, FC) else getattr(layer, "n", 1)
    return rows, rows, 0


def shm_tiling(layer: Layer, need_kb, shm_kb, vbytes):
    """(tiles, DRAM read bytes, DRAM write bytes, feasible) of a layer whose feature maps need
    ``need_kb`` of shared memory.

    A layer that fits runs from SHM as in the paper (no feature-map DRAM traffic). One that does
    not is split into the fewest tiles that fit, along its output rows (conv, pool) or vectors
    (FC, matmul): its input is read from DRAM once, plus the rows a convolution window re-reads
    at each tile border (kernel - stride per border), and its output is written once.
    Infeasible only when one output row (vector) with its inputs does not fit.
    """
    return shm_tiling_of(layer.input_elems, layer.output_elems, *tiling_geometry(layer), need_kb, shm_kb, vbytes)


def shm_tiling_of(input_elems, output_elems, rows, in_rows, halo, need_kb, shm_kb, vbytes):
    """:func:`shm_tiling` from the layer's sizes and :func:`tiling_geometry`: Python numbers (one layer of one
    point) or arrays over (layers x points)."""
    fits = need_kb <= shm_kb
    if fits is True:  # a layer of one point that fits: what the lines below give (rows >= 1)
        return _FITS
    some_fit = fits is not False  # arrays: the layers x points that fit take one tile and no DRAM traffic (where)
    row_in_kb = input_elems / in_rows * vbytes / 1024.0
    room = shm_kb - halo * row_in_kb  # what a tile may use beside its halo
    tiles = ceil(need_kb / maximum(room, 1e-9))
    if some_fit:
        tiles = where(fits, 1.0, tiles)
    ok = fits | ((room > 0) & (tiles <= rows))
    tiles = minimum(tiles, rows)
    halo_rows = halo * (tiles - 1)
    rd = input_elems * vbytes * (1.0 + halo_rows / in_rows)
    wr = output_elems * vbytes
    if some_fit:
        rd, wr = where(fits, 0.0, rd), where(fits, 0.0, wr)
    return tiles, rd, wr, ok


#: :func:`shm_tiling_of` of a layer of one point that fits the SHM (one tile, no feature-map DRAM traffic)
_FITS = (1.0, 0.0, 0.0, True)


def as_fc(layer: Layer) -> tuple[int, int, int, int] | None:
    """(inputs, neurons, vectors, groups) of an FC-like layer, None otherwise."""
    if isinstance(layer, FC):
        return layer.inputs, layer.outputs, layer.batch, 1
    if isinstance(layer, Conv2D):
        k = layer.ic_per_group * layer.kernel_h * layer.kernel_w
        return k, layer.oc_per_group, layer.out_h * layer.out_w, layer.groups
    if type(layer) is MatMul:
        return layer.k, layer.m, layer.n, 1
    return None


#: what a layer's cost reads of it, in :func:`layer_costs`' order: input_elems, output_elems, fm_elems (the two
#: summed), macs, pool_ops, then :func:`tiling_geometry` (rows, input rows, halo)
SIZES = ("input_elems", "output_elems", "fm_elems", "macs", "pool_ops", "rows", "in_rows", "halo")


def layer_sizes(layer: Layer) -> tuple[int, ...]:
    """The :data:`SIZES` of a costed layer, Python ints (``fm_elems``: the input and output feature maps, summed
    once per layer here rather than once per layer and point)."""
    ie, oe = int(layer.input_elems), int(layer.output_elems)
    return (ie, oe, ie + oe, int(layer.macs), int(layer.ops) if isinstance(layer, Pool) else 0,
            *map(int, tiling_geometry(layer)))


@dataclass(frozen=True)
class LayerTable:
    """A workload's layers as integer columns (one row per costed layer, shape (rows, 1)).

    Built once per layer tuple (:func:`layer_table`) so that one array expression over
    (layers x points) replaces a Python loop over layers. Costed rows are the FC-like layers
    (:func:`as_fc`) in workload order, then the pooling layers; ``row[i]`` is layer i's row,
    -1 for a layer the model does not run (sparse products). The one-point path reads the same
    layers as Python ints: ``points`` the distinct ones (layers of one shape are costed once), ``point_of`` the
    costed layers in workload order, ``point_row[i]`` layer i's position in that order.
    """

    fc: tuple[np.ndarray, ...]  # the FC-like rows' fc_shape (inputs, neurons, groups, reps, weights, psum unit)
    pool: tuple[np.ndarray, ...]  # the pooling rows' pool_shape (input_elems, output_elems, channels, kernel^2)
    sizes: dict[str, np.ndarray]  # every costed row: the SIZES, by name
    row: tuple[int, ...]
    #: the costed layers' distinct rows (one-point path: each costed once) as the calls :func:`layer_costs` makes
    #: of them: (:func:`_fc_counts` or :func:`_pool_counts`, its shape tuple, the layer's :data:`SIZES`)
    points: tuple[tuple, ...]
    point_of: tuple[int, ...]  # the costed layers in workload order: their row in ``points``
    point_row: tuple[int, ...]
    point_at: tuple[tuple[int, ...], ...]  # each row of ``points``: its layers' positions in ``point_of``

    @property
    def rows(self) -> int:
        return len(self.sizes["macs"])


def _point_counts(layer: Layer) -> tuple:
    """(:func:`_fc_counts` or :func:`_pool_counts`, the layer's shape) as one point's row holds them: what is divided
    (the // ceilings) as Python ints, what only multiplies counts or meets floats as Python floats (groups,
    repetitions, weights and partial sums per core; the pooling window). Python's float op float skips the
    int-to-float step of int op float and large ints' slower arithmetic; the values are the same: integers below
    2**53 are exact floats, and so are their sums and products (the counts stay far below it), and numpy converts
    the int64 columns to float64 the same way. The sizes (:func:`layer_sizes`) are all floats for this reason."""
    if isinstance(layer, Pool):
        ie, oe, channels, window = pool_shape(int(layer.input_elems), int(layer.output_elems), int(layer.channels),
                                              int(layer.kernel))
        return _pool_counts, (ie, oe, channels, float(window))
    inputs, neurons, *products = fc_shape(*map(int, as_fc(layer)))
    return _fc_counts, (inputs, neurons, *map(float, products))


@lru_cache(maxsize=64)
def layer_table(layers: tuple[Layer, ...]) -> LayerTable:
    """The :class:`LayerTable` of ``layers`` (cached: it depends on the layer shapes only)."""
    fcs = [i for i, layer in enumerate(layers) if not isinstance(layer, Pool) and as_fc(layer) is not None]
    pools = [i for i, layer in enumerate(layers) if isinstance(layer, Pool)]
    order = fcs + pools
    row = [-1] * len(layers)
    for r, i in enumerate(order):
        row[i] = r
    costed = [layers[i] for i in order]
    in_order = sorted(order)
    point_row = [-1] * len(layers)
    for r, i in enumerate(in_order):
        point_row[i] = r
    point_rows = [(*_point_counts(layers[i]), tuple(map(float, layer_sizes(layers[i])))) for i in in_order]
    points = {r: None for r in point_rows}  # distinct rows, in order of first use
    at = {r: j for j, r in enumerate(points)}
    sizes = [layer_sizes(x) for x in costed]
    return LayerTable(
        fc=tuple(column(v) for v in zip(*[fc_shape(*as_fc(layers[i])) for i in fcs])) if fcs else (),
        pool=tuple(column(v) for v in zip(*[pool_shape(layers[i].input_elems, layers[i].output_elems,
                                                       layers[i].channels, layers[i].kernel) for i in pools]))
        if pools else (),
        sizes={name: column(v) for name, v in zip(SIZES, zip(*sizes))} if costed else
        {name: column([]) for name in SIZES},
        row=tuple(row),
        points=tuple(points),
        point_of=tuple(at[r] for r in point_rows),
        point_row=tuple(point_row),
        point_at=tuple(tuple(i for i, x in enumerate(point_rows) if at[x] == j) for j in range(len(points))),
    )


#: :func:`layer_table` of a layer tuple, looked up by the layers' identities first (a study evaluates the same
#: layer objects every trial, and the same swapped GEMM forms in a new tuple each time; the lru cache hashes
#: every layer on each call)
table_of = IdentityMemo(lambda layers: layer_table(tuple(layers)), by_items=True)


@dataclass(slots=True)
class Config:
    """What the layer formulas read of a design point: Python numbers (one point) or arrays over points (a
    batch), made by :func:`config` with the same expressions either way."""

    cores: object
    ni: object
    no: object
    is_b: object  # placement B (one core)
    is_t2: object  # placement T2 or TR2 (input grouping + merge)
    in_split: object  # cores the inputs are split over: cores for T2 / TR2, else 1
    out_split: object  # cores the neurons are split over: cores for T1 / TR1, else 1
    psum_cores: object  # cores holding partial sums in SHM: cores for T2 / TR2, else 0
    reuse: object  # Input Buffer reuse (TR1, TR2, or input_reuse)
    entries: object  # Input Buffer entries
    reuse_entries: object  # IB entries that reuse chunks: ``entries`` with reuse, else -1 (no chunk count fits)
    vbytes: object  # bytes per value
    in_chunk_b: object  # bytes of an input chunk (ni values)
    out_chunk_b: object  # bytes of an output chunk (no values)
    ports: object  # SHM accesses per cycle (a float: counts divided by it as numpy divides int arrays)
    noc_bpc: object  # network bytes per cycle
    dram_bpc: object  # DRAM bytes per cycle
    fill: object  # cycles of a phase beside its busiest resource (latencies + NFU pipeline), a float
    wb_bytes: object  # Weight Buffer per core [B]
    shm_kb: object
    clock_hz: object
    mac_units: object  # cores x ni x no, a float
    mac_pj: object  # energies at nominal supply [pJ]: a MAC, an add, a byte of IB / OB / WB / SHM
    add_pj: object
    ib_pj: object
    ob_pj: object
    wb_pj: object
    shm_pj: object
    vscale: object  # dynamic energy at the clock's supply / at nominal (tech.clock_costs)
    dram_read_pj: object  # DRAM energy per byte read / written [pJ/B]
    dram_write_pj: object


@lru_cache(maxsize=64)
def _op_pj(bits: int, node: int) -> tuple[float, float]:
    """(MAC, add) energy [pJ] of ``bits``-wide integers at ``node`` (technology table), once per width and node."""
    dt = tech.dtype_of(bits)
    return tech.mac_energy_pj(dt, node), tech.op_energy_pj("add", dt, node)


@lru_cache(maxsize=64)
def _pe_mm2(bits: int, node: int) -> float:
    """A PE's logic area [mm2] of ``bits``-wide integers at ``node`` (technology table), once per width and node."""
    return tech.pe_logic_area_mm2(tech.dtype_of(bits), node, 1.0)


def config(pts: Points) -> Config:
    """The :class:`Config` of the points ``pts``: Python numbers for one point, else arrays over points."""
    one = batch_size(pts) == 1
    p = dict(zip(pts, map(_item, pts.values()))) if one else pts  # each value's .item(), in C loops
    policies = {p["ib_policy"]} if one else set(pts["ib_policy"].tolist())
    if not policies <= set(IB_POLICIES):
        raise ValueError(f"unknown IB policy {sorted(policies - set(IB_POLICIES))[0]}")
    cores, ni, no = p["cores"], p["ni"], p["no"]
    pl = p["placement"]
    vbytes = p["value_bits"] / 8.0
    clock_hz = p["clock_mhz"] * 1e6
    ib_kb = p["input_buffer_entries"] * ni * vbytes / 1024
    ob_kb = p["output_buffer_entries"] * no * vbytes / 1024
    bits, node = p["value_bits"], p["tech_nm"]
    if one:  # the technology table's numbers of the one node and width
        vscale = point_clock(p["clock_mhz"], node).energy_scale
        dram = tech.DRAM_TYPES[p["dram"]]  # the row tech.dram_pj_per_byte reads
        dram_read_pj, dram_write_pj = dram.read_pj_per_byte, dram.write_pj_per_byte
        mac_pj, add_pj = _op_pj(bits, node)
        ib_pj, ob_pj, wb_pj, shm_pj = (tech.sram_energy_pj_per_byte(float(kb), node)  # Python floats: as an array
                                       for kb in (ib_kb, ob_kb, p["weight_buffer_kb"], p["shm_kb"]))
    else:
        vscale = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).energy_scale  # the memo of check_config's call
        dram_read_pj, dram_write_pj = tech.dram_pj_per_byte(pts["dram"])
        mac_pj = tech.per_point(lambda b, nd: tech.mac_energy_pj(tech.dtype_of(b), nd), bits, node)
        add_pj = tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd), bits, node)
        ib_pj, ob_pj, wb_pj, shm_pj = (per_node(tech.sram_energy_pj_per_byte, kb, node)
                                       for kb in (ib_kb, ob_kb, p["weight_buffer_kb"], p["shm_kb"]))
    is_b, is_t2 = pl == "B", (pl == "T2") | (pl == "TR2")
    reuse, entries = (pl == "TR1") | (pl == "TR2") | p["input_reuse"], p["input_buffer_entries"]
    # positional, in the fields' order (keywords cost ~1 us a point: each is looked up among the 31 names)
    return Config(
        cores, ni, no, is_b, is_t2,
        where(is_t2, cores, 1), where(is_t2 | is_b, 1, cores), where(is_t2, cores, 0),  # in_split, out_split, psum_cores
        reuse, entries, where(reuse, entries, -1),  # reuse, entries, reuse_entries
        vbytes, ni * vbytes, no * vbytes, p["mem_ports"] * 1.0,  # vbytes, in_chunk_b, out_chunk_b, ports
        p["noc_gbps"] * 1e9 / clock_hz, p["dram_gbps"] * 1e9 / clock_hz,  # noc_bpc, dram_bpc
        (p["noc_latency_cycles"] + p["mem_latency_cycles"] + NFU_PIPELINE_STAGES) * 1.0,  # fill (a float: it only
        p["weight_buffer_kb"] * 1024.0, p["shm_kb"], clock_hz, cores * ni * no * 1.0,  # meets floats; mac_units too)
        mac_pj, add_pj, ib_pj, ob_pj, wb_pj, shm_pj, vscale, dram_read_pj, dram_write_pj,
    )


# ---- chunk counts of the busiest core (spec §1, §2; the counting rule of the module doc) ----
def fc_shape(inputs, neurons, vectors, groups) -> tuple:
    """What :func:`_fc_counts` reads of an FC-like layer: (inputs, neurons, groups, repetitions = vectors x groups,
    weights = inputs x neurons x groups, partial sums per core = neurons x vectors x groups). The products depend
    on the layer alone: made once per layer (its table), not once per layer and point."""
    return inputs, neurons, groups, vectors * groups, inputs * neurons * groups, neurons * vectors * groups


def fc_counts(inputs, neurons, vectors, groups, k: Config) -> tuple:
    """:data:`COUNTS` (chunk reads, writes, NFU steps, ...) of an FC-like layer under each point's placement
    (§2): Python numbers (one layer of one point) or arrays over (layers x points)."""
    return _fc_counts(fc_shape(inputs, neurons, vectors, groups), k)


def _fc_counts(shape: tuple, k: Config) -> tuple:
    """:func:`fc_counts` of a layer's :func:`fc_shape`."""
    # Ceiling divisions are written -(-a // b) (exact on ints and int arrays alike, no helper call: issue 15), and
    # the placement's choices are read from the Config's per-point splits (dividing by 1 keeps a value).
    inputs, neurons, groups, reps, weight_elems, psum_unit = shape
    cores, is_t2 = k.cores, k.is_t2
    # inputs / neurons handled by the busiest core: inputs split over the cores by T2 / TR2, neurons by T1 / TR1
    in_vals = -(-inputs // k.in_split)
    out_vals = -(-neurons // k.out_split)
    in_ch = -(-in_vals // k.ni)
    out_ch = -(-out_vals // k.no)
    active = where(k.is_b, 1, minimum(cores, where(is_t2, inputs, neurons)))
    misses = _cyclic_misses(in_ch, out_ch, k.reuse_entries)  # no reuse: no group fits (-1 entries), all read
    reads = misses + out_ch  # + one head read per output chunk
    writes = out_ch
    owned = -(-neurons // cores // k.no) * is_t2  # T2: the output chunks of a core's ceil(neurons / cores); else 0
    merge = owned * reps
    gather = owned * cores * reps
    return (reads * reps, writes * reps, in_ch * out_ch * reps,  # reads, writes, nfu
            merge, merge, gather, gather,  # the T2 merge
            active, misses * reps, weight_elems,  # active, in_chunk_reads, weight_elems
            in_vals * out_vals * groups,  # weights_per_core (B: all; T1: its neurons' share; T2: its inputs' share)
            k.psum_cores * psum_unit)  # psum_elems (T2 / TR2 only; integers: the product in any order)


def pool_shape(input_elems, output_elems, channels, kernel) -> tuple:
    """What :func:`_pool_counts` reads of a pooling layer: its sizes, channels and window elements (kernel^2, once
    per layer)."""
    return input_elems, output_elems, channels, kernel * kernel


def pool_counts(input_elems, output_elems, channels, kernel, k: Config) -> tuple:
    """:data:`COUNTS` of a pooling layer (channels split over the cores; no weights, no merge): Python numbers
    or arrays, as :func:`fc_counts`."""
    return _pool_counts(pool_shape(input_elems, output_elems, channels, kernel), k)


def _pool_counts(shape: tuple, k: Config) -> tuple:
    """:func:`pool_counts` of a layer's :func:`pool_shape`."""
    input_elems, output_elems, channels, window = shape
    active = where(k.is_b, 1, minimum(k.cores, channels))
    in_ch = -(-input_elems // active // k.ni)  # ceil(ceil(input_elems / active) / ni), as in fc_counts
    out_ch = -(-output_elems // active // k.no)
    return in_ch, out_ch, out_ch * window, 0, 0, 0, 0, active, in_ch, 0, 0, 0  # nfu: integers, in any order


#: the chunk counts of a layer's busiest core, in the order :func:`fc_counts` and :func:`pool_counts` give them
COUNTS = ("reads", "writes", "nfu", "merge_reads", "merge_writes", "merge_psum_reads", "merge_nfu", "active",
          "in_chunk_reads", "weight_elems", "weights_per_core", "psum_elems")

#: the model's layer metrics as :func:`layer_costs` gives them, in the order a LayerBatch holds them
_METRICS = ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j", "shm_tiles",
            "shm_reads_per_core", "shm_writes_per_core", "shm_merge_reads_per_core", "nfu_steps_per_core",
            "shm_read_bytes", "shm_write_bytes", "active_cores", "compute_energy_j", "sram_energy_j", "dram_energy_j")

#: a layer's states: the compute phase split by what bounds it, then the merge phase. COMPUTE: the busiest core's
#: NFU steps; SHM_WAIT / NOC_WAIT / DRAM_WAIT: the cycles beyond them while the SHM ports, the network or DRAM
#: bound the phase (only the bounding one is non-zero); FILL: the phase's latencies and NFU pipeline; MERGE: the
#: T2/TR2 merge phase after the barrier (0 without one)
_STATES = ("COMPUTE", "SHM_WAIT", "NOC_WAIT", "DRAM_WAIT", "FILL", "MERGE")
#: what :func:`layer_costs` gives of a layer: its metrics, then its states (cycles)
_VALUES = (*_METRICS, *_STATES)


# ---- time, traffic, energy (the cycle model of the module doc; spec §5) ----
def layer_costs(c: tuple, sizes: tuple, k: Config):
    """(values in :data:`_VALUES` order: metrics, then the :data:`_STATES` cycles; feasible; SHM need [KB]) of layers
    with chunk counts ``c`` (:data:`COUNTS`) and :data:`SIZES` ``sizes``: Python numbers (one layer of one
    point) or arrays over (layers x points)."""
    (reads, writes, nfu, merge_reads, merge_writes, merge_psum_reads, merge_nfu, active, in_chunk_reads,
     weight_elems, weights_per_core, psum_elems) = c
    input_elems, output_elems, fm_elems, macs, pool_ops, rows, in_rows, halo = sizes
    vbytes, out_chunk_b = k.vbytes, k.out_chunk_b
    core_rd_b = in_chunk_reads * k.in_chunk_b + (reads - in_chunk_reads) * out_chunk_b
    core_wr_b = writes * out_chunk_b
    merge_rd_b = (merge_reads + merge_psum_reads) * out_chunk_b
    merge_wr_b = merge_writes * out_chunk_b

    # weights that do not fit a core's WB stream from DRAM every inference
    spill = weights_per_core * vbytes > k.wb_bytes
    # SHM holds the layer's input and output feature maps (+ T2 partial sums); when they do
    # not fit, the layer runs in tiles staged through SHM from and to DRAM (shm_tiles)
    need_kb = (fm_elems + psum_elems) * vbytes / 1024.0  # fm_elems: input_elems + output_elems
    tiles, fm_rd, fm_wr, tile_ok = _FITS if (need_kb <= k.shm_kb) is True else shm_tiling_of(  # (no call: it fits)
        input_elems, output_elems, rows, in_rows, halo, need_kb, k.shm_kb, vbytes)
    dram_rd = weight_elems * vbytes * spill + fm_rd  # x * False: 0.0 (x >= 0), x * True: x, as np.where
    port_c = (reads + writes) / k.ports
    noc_c = active * (core_rd_b + core_wr_b) / k.noc_bpc
    dram_c = (dram_rd + fm_wr) / k.dram_bpc
    bound = max_of(port_c, nfu, noc_c, dram_c)
    compute = bound + k.fill
    # the breakdown: the NFU's steps, then the cycles beyond them charged to the resource that bounds the phase
    # (the largest; ties to the SHM ports, then the network), so that a DRAM-bound layer does not read as compute
    wait = bound - nfu
    shm_bound = (port_c >= noc_c) & (port_c >= dram_c)
    noc_bound = (noc_c > port_c) & (noc_c >= dram_c)
    shm_wait = where(shm_bound, wait, 0.0)
    noc_wait = where(noc_bound, wait, 0.0)
    dram_wait = wait - shm_wait - noc_wait  # exactly one of the three holds the wait (the others are 0.0)
    has_merge = merge_reads > 0
    if has_merge is False:  # a layer of one point without merge (no call)
        merge = 0.0
    else:
        merge = max_of(
            (merge_reads + merge_psum_reads + merge_writes) / k.ports,
            merge_nfu,
            active * (merge_rd_b + merge_wr_b) / k.noc_bpc,
        ) + k.fill
        if has_merge is not True:  # arrays: layers x points without merge take 0.0 (one point with merge: as is)
            merge = where(has_merge, merge, 0.0)
    cycles = compute + merge
    shm_rd = active * (core_rd_b + merge_rd_b)
    shm_wr = active * (core_wr_b + merge_wr_b)
    # on-chip dynamic energy at nominal supply [pJ]: MACs + IB/WB/OB accesses per NFU step + SHM bytes
    ni, no = k.ni, k.no
    steps = nfu * active
    steps_in = steps * ni  # input values read from the IB (x no: weights read from the WB)
    e = macs * k.mac_pj
    e = e + merge_nfu * active * no * k.add_pj
    e = e + pool_ops * k.add_pj  # zero for layers other than pooling
    compute_pj = e  # the arithmetic; then the buffers' and the shared memory's accesses (the same sum, in order)
    ib = steps_in * vbytes * k.ib_pj
    wb = steps_in * no * vbytes * k.wb_pj * (weight_elems > 0)
    ob = steps * no * vbytes * k.ob_pj
    shm = (shm_rd + shm_wr) * k.shm_pj
    e = e + ib
    e = e + wb
    e = e + ob
    e = e + shm
    to_j = k.vscale * 1e-12
    dram_j = (dram_rd * k.dram_read_pj + fm_wr * k.dram_write_pj) * 1e-12  # tech.dram_energy_j
    energy_j = e * k.vscale * 1e-12 + dram_j
    values = (cycles, cycles / k.clock_hz, macs / (cycles * k.mac_units), dram_rd, fm_wr, energy_j, tiles,
              reads + merge_reads, writes + merge_writes, merge_psum_reads, nfu + merge_nfu, shm_rd, shm_wr, active,
              compute_pj * to_j, (ib + wb + ob + shm) * to_j, dram_j,
              nfu * 1.0, shm_wait, noc_wait, dram_wait, k.fill, merge)
    return values, tile_ok, need_kb


#: why a layer cannot run, % (need [KB], SHM [KB]): one output row (vector) with its inputs does not fit the SHM
_SHM_REASON = "shared memory too small: needs %.0f KB, and one output row (vector) does not fit %.0f KB"


class MulticoreModel(Model):
    name = "multicore"
    title = "Multi-core shared-memory NN accelerator (task placement)"
    spec = "multicore.md"
    DOC_PAGE = "docs/models/multicore.md"
    STATE_DOCS = {  # docs/models/multicore.md: the compute phase split by what bounds it, then the merge
        "COMPUTE": "NFU steps of the busiest core",
        "SHM_WAIT": "cycles beyond the NFU steps while the shared memory's ports bound the phase",
        "NOC_WAIT": "cycles beyond the NFU steps while the core <-> shared memory network bounds the phase",
        "DRAM_WAIT": "cycles beyond the NFU steps while DRAM (weights that do not fit, feature-map tiles) bounds the phase",
        "FILL": "network and memory latency plus the NFU pipeline of the compute phase",
        "MERGE": "T2/TR2: gathering and adding the cores' partial sums after the barrier (0 otherwise)",
    }
    #: a layer's cost does not depend on its neighbours (no fusion, no on-chip chaining): the other GEMM forms
    #: of a product are costed on the swapped layers alone (base.Model._evaluate_gemms)
    GEMM_FORMS_CONTEXT = False
    SUPPORTS = ("conv", "pool", "fc", "matmul", "vector")

    def vector_unit(self, pts: Points) -> vector.VectorUnit:
        """Vector layers on the NFUs: each core's No output lanes do one operation per cycle;
        activations stay in the shared memory when they fit (streamed over the network at
        ``noc_gbps``), else they go through DRAM; an operation costs an add. One point: the same expressions on
        Python numbers (the technology table's rows of its node and width, as :func:`config`), as one-point arrays."""
        if batch_size(pts) == 1:
            p = dict(zip(_VECTOR_PARAMS, map(_item, map(pts.__getitem__, _VECTOR_PARAMS))))
            clock_hz, node = p["clock_mhz"] * 1e6, p["tech_nm"]
            vscale = point_clock(p["clock_mhz"], node).energy_scale
            dram = tech.DRAM_TYPES[p["dram"]]  # the row tech.dram_pj_per_byte reads
            shm_pj = np.array([tech.sram_energy_pj_per_byte(float(pts["shm_kb"].item(0)), int(node))])  # one node
            one = [p["cores"] * p["no"] * clock_hz, clock_hz, p["value_bits"] / 8, p["dram_gbps"] * 1e9,
                   _op_pj(p["value_bits"], node)[1] * vscale, dram.read_pj_per_byte, dram.write_pj_per_byte,
                   p["noc_gbps"] * 1e9]
            ops, clock, vbytes, dram_bps, add_pj, rd_pj, wr_pj, noc_bps = (np.array([v], dtype=float) for v in one)
            return vector.VectorUnit("NFU lanes", ops, clock, vbytes, dram_bps, add_pj, rd_pj, wr_pj,
                                     onchip_kb=pts["shm_kb"], onchip_bytes_per_s=noc_bps,
                                     onchip_pj_per_byte=shm_pj * vscale)
        clock_hz = pts["clock_mhz"] * 1e6
        add_pj = tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd),
                                pts["value_bits"], pts["tech_nm"])
        shm_pj = per_node(tech.sram_energy_pj_per_byte, pts["shm_kb"], pts["tech_nm"])
        vscale = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).energy_scale
        return vector.VectorUnit("NFU lanes", pts["cores"] * pts["no"] * clock_hz, clock_hz, pts["value_bits"] / 8,
                                 pts["dram_gbps"] * 1e9, add_pj * vscale, *tech.dram_pj_per_byte(pts["dram"]),
                                 onchip_kb=pts["shm_kb"],
                                 onchip_bytes_per_s=pts["noc_gbps"] * 1e9, onchip_pj_per_byte=shm_pj * vscale)
    AREA_ANCHOR = ("none published (spec multicore.md): NFU logic from the IMAX 28 nm die's fitted PE overhead, "
                   "buffers and shared memory from SRAM bit cells")

    def check_config(self, pts: Points):
        """The clock must not exceed the node's maximum (technology table; one point: :func:`point_clock`)."""
        if batch_size(pts) == 1:
            node = pts["tech_nm"].item(0)
            ok = point_clock(pts["clock_mhz"].item(0), node).feasible
            return np.array([ok]), np.array(["" if ok else clock_reason(int(node))], dtype=object)
        return tech.clock_check(pts["clock_mhz"], pts["tech_nm"])

    PARAMS = (
        Param("cores", "int", 16, 1, 1024, unit="", doc="number of cores"),
        Param("clock_mhz", "float", 606.0, 50, 3000, unit="MHz", doc="core clock"),
        Param("ni", "int", 16, 1, 1024, unit="values", doc="inputs read per NFU step (input chunk size)"),
        Param("no", "int", 16, 1, 1024, unit="neurons", doc="neurons computed per NFU step (output chunk size)"),
        Param("input_buffer_entries", "int", 16, 1, 65536, unit="chunks", doc="Input Buffer entries (one chunk each)"),
        Param("output_buffer_entries", "int", 16, 1, 65536, unit="chunks", doc="Output Buffer entries (one chunk each)"),
        Param("noc_gbps", "float", 100.0, 0.1, 100000, unit="GB/s", doc="core <-> shared memory network bandwidth"),
        Param("noc_latency_cycles", "int", 1, 0, 1000, unit="cycles", doc="network latency"),
        Param("mem_latency_cycles", "int", 1, 0, 1000, unit="cycles", doc="shared memory latency"),
        Param("mem_ports", "int", 1, 1, 64, unit="", doc="shared-memory accesses a core issues per cycle"),
        Param("value_bits", "choice", 16, choices=(8, 16, 32), unit="bit", doc="fixed-point width of data and weights"),
        Param("weight_buffer_kb", "float", 2048.0, 0, 1e6, unit="KB", doc="Weight Buffer per core (DaDianNao: 2 MB eDRAM per tile)"),
        Param("shm_kb", "float", 4096.0, 1, 1e7, unit="KB", doc="shared memory size (DaDianNao central eDRAM: 4 MB)"),
        Param("dram_gbps", "float", 25.6, 0.1, 10000, unit="GB/s", doc="DRAM bandwidth for weights that do not fit the WB"),
        Param("tech_nm", "choice", 28, choices=tech.NODES_NM, unit="nm", doc="technology node for energy and area"),
        Param("dram", "choice", "ddr4", choices=tech.DRAM_NAMES,
              doc="external memory type for DRAM energy (technology table; assumption: DDR4)"),
        Param("placement", "choice", "TR2", choices=PLACEMENTS, doc="task placement (B, T1, TR1, T2, TR2)", knob=True),
        Param("input_reuse", "bool", False, doc="Input Buffer reuse for B/T1/T2 too (TR1/TR2 always reuse)", knob=True),
        Param("ib_policy", "choice", "lru", choices=("lru", "fifo"), doc="Input Buffer replacement policy", knob=True),
    )
    LAYER_METRICS = (
        Metric("shm_reads_per_core", "chunks", "SHM chunk reads of the busiest core, the paper's counting rule", integer=True),
        Metric("shm_writes_per_core", "chunks", "SHM chunk writes of the busiest core", integer=True),
        Metric("shm_merge_reads_per_core", "chunks", "partial-sum chunks gathered in the T2 merge (not in the paper's count)", integer=True),
        Metric("nfu_steps_per_core", "steps", "NFU steps of the busiest core", integer=True),
        Metric("shm_read_bytes", "B", "SHM bytes read by all cores"),
        Metric("shm_write_bytes", "B", "SHM bytes written by all cores"),
        Metric("active_cores", "", "cores with work", integer=True),
        Metric("shm_tiles", "", "tiles the layer is split into so its feature maps fit the SHM (1: it fits)",
               integer=True),
        Metric("compute_energy_j", "J", "MACs, merge and pooling adds (at the clock's supply)"),
        Metric("sram_energy_j", "J", "Input/Weight/Output Buffer accesses and shared-memory bytes (at the clock's supply)"),
        Metric("dram_energy_j", "J", "DRAM reads and writes (technology-table row `dram`)"),
    )
    TOTAL_METRICS = (
        Metric("shm_reads_per_core", "chunks", "sum over layers", integer=True),
        Metric("shm_writes_per_core", "chunks", "sum over layers", integer=True),
        Metric("shm_read_bytes", "B", "sum over layers"),
        Metric("shm_write_bytes", "B", "sum over layers"),
        Metric("mac_units", "", "multipliers on chip (cores x ni x no)", integer=True, combine="max"),
        *ENERGY_PART_TOTALS,
    )

    def validation_metric(self, metric, workload, params, case, section):
        """``cycle_order``: placements sorted by total cycles, e.g. ``T1 == TR1 < TR2``."""
        if metric != "cycle_order":
            return NotImplemented
        rows = [{**params, "placement": p} for p in PLACEMENTS]
        cycles = self.evaluate_points(workload, rows).totals["cycles"]
        return placement_order(dict(zip(PLACEMENTS, cycles)))

    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        """Every layer at once: chunk counts, cycles and energy as arrays over (layers x points); one point
        layer by layer in Python numbers (:meth:`_point_layers`), the same formulas."""
        n = batch_size(pts)
        t = table_of(workload.layers)
        if t.rows and n == 1:
            out = self._point_layers(workload, t, pts)
        elif t.rows:
            metrics, states, ok, need_kb = self._costs(t, pts)
            reason = num.objects(ok.shape, "")
            if not ok.all():
                bad = ~ok
                shm_kb = np.broadcast_to(pts["shm_kb"], ok.shape)[bad]
                reason[bad] = [_SHM_REASON % xy for xy in zip(need_kb[bad].tolist(), shm_kb.tolist())]
            placement = np.broadcast_to(pts["placement"].astype(object), ok.shape).copy()
            out = layer_batches(workload.layers, t.row, n, metrics, states, {"placement": placement}, ok, reason)
        else:
            out = [None] * len(workload.layers)
        for i, layer in enumerate(workload.layers) if not t.rows or -1 in t.row else ():  # (else: none is None)
            if out[i] is None:  # sparse products: not a DaDianNao-style workload (reported infeasible by the base class)
                lb = out[i] = LayerBatch(layer, n)
                lb.labels["placement"] = pts["placement"].astype(object)
                lb.set(**{m.name: np.nan for m in (*LAYER_METRICS, *self.LAYER_METRICS) if m.name != "dram_bytes"})
        return out

    @staticmethod
    def _point_layers(workload: Workload, t: LayerTable, pts: Points) -> list[LayerBatch | None]:
        """:meth:`evaluate_layers` of one point: each distinct costed layer by :func:`fc_counts` /
        :func:`pool_counts` and :func:`layer_costs` on Python numbers (a numpy call on a one-point array costs
        ~20 Python operations), then their values over the layers, in workload order (:func:`point_batches`: one
        (values x layers x 1) array, written when first read)."""
        k = config(pts)
        costed = [layer_costs(counts(shape, k), sizes, k)
                  for counts, shape, sizes in t.points]  # (values, fits, need_kb) of each distinct layer
        of = t.point_of
        rows = len(of)
        columns = list(zip(*[costed[j][0] for j in of]))  # each value over the layers (layerarrays.point_batches)
        ok = reason = None  # every layer fits (layer_batches: all feasible, no reason)
        if not all([c[1] for c in costed]):  # (set element by element: a few layers, not a list of every layer)
            ok, reason = np.ones((rows, 1), dtype=bool), num.objects((rows, 1), "")
            for j, (_, fits, need_kb) in enumerate(costed):
                if not fits:  # each layer of this shape, in workload order: the batch's reason
                    why = _SHM_REASON % (need_kb, k.shm_kb)
                    for r in t.point_at[j]:
                        ok[r, 0], reason[r, 0] = False, why
        return point_batches(workload.layers, t.point_row, columns, _METRICS, _STATES,
                             {"placement": num.objects((rows, 1), pts["placement"].item(0))}, ok, reason)

    def _costs(self, t: LayerTable, pts: Points):
        """(metrics, states, feasible, need_kb) of the costed rows of ``t``, arrays over (rows x points)."""
        n = batch_size(pts)
        k = config(pts)
        parts = []
        if t.fc:
            parts.append((len(t.fc[0]), _fc_counts(t.fc, k)))
        if t.pool:
            parts.append((len(t.pool[0]), _pool_counts(t.pool, k)))
        c = tuple(stack_rows([p[j] for _, p in parts], [rows for rows, _ in parts], n) for j in range(len(COUNTS)))
        values, tile_ok, need_kb = layer_costs(c, tuple(t.sizes[name] for name in SIZES), k)
        metrics, states = values[:len(_METRICS)], values[len(_METRICS):]
        shape = metrics[0].shape
        return ({name: full(v, shape) for name, v in zip(_METRICS, metrics)},
                {name: full(v, shape) for name, v in zip(_STATES, states)},
                np.broadcast_to(tile_ok, shape).copy(), np.broadcast_to(need_kb, shape))

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict:
        """Chip area and leakage (:func:`chip_area_static`: per node and width of the points; one point in Python
        numbers), MAC units, and the SHM totals summed over the layers."""
        n = batch_size(pts)
        if n == 1:
            p = dict(zip(_CHIP_PARAMS, map(_item, map(pts.__getitem__, _CHIP_PARAMS))))  # .item() in C loops
            clock, node = pts["clock_mhz"].item(0), p["tech_nm"]
            pc = point_clock(clock, node)
            area, static = chip_area_static(*(p[k] for k in _CHIP_PARAMS), pc.area_factor, pc.vdd_ratio)
            mac_units = float(p["cores"] * p["ni"] * p["no"])
            block = np.array([[area], [static], [mac_units], [mac_units]])
            block.flags.writeable = False  # (the result's totals hand them out as they are: no read-only views)
            area, static, hw_mac_units, mac_units = block
        else:
            clock, vdd = pts["clock_mhz"], tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).vdd_ratio
            area, static = np.zeros(n), np.zeros(n)
            for (node, bits), sel in groups(pts["tech_nm"], pts["value_bits"]):
                area[sel], static[sel] = chip_area_static(*(pts[k][sel] for k in _CHIP_PARAMS[:-2]), node, bits,
                                                          logic_area_factor(clock[sel], node), vdd[sel])
            hw_mac_units = (pts["cores"] * pts["ni"] * pts["no"]).astype(float)
            mac_units = (pts["cores"] * pts["ni"] * pts["no"]).astype(float)
        return {
            "area_mm2": area,
            "hw_mac_units": hw_mac_units,
            "static_power_w": static,
            **layer_sums(layers, ("shm_reads_per_core", "shm_writes_per_core", "shm_read_bytes", "shm_write_bytes"), n),
            "mac_units": mac_units,
            **layer_sums(layers, ENERGY_PARTS, n, from_zero=True),
        }


#: the parameters :meth:`MulticoreModel.vector_unit` reads of one point
_VECTOR_PARAMS = ("clock_mhz", "tech_nm", "value_bits", "cores", "no", "dram_gbps", "noc_gbps", "dram")

#: the parameters :func:`chip_area_static` reads, in its order
_CHIP_PARAMS = ("cores", "ni", "no", "input_buffer_entries", "output_buffer_entries", "value_bits",
                "weight_buffer_kb", "shm_kb", "tech_nm", "value_bits")


def chip_area_static(cores, ni, no, ib_entries, ob_entries, value_bits, weight_buffer_kb, shm_kb, node: int,
                     bits: int, area_factor, vdd_ratio):
    """(area [mm2], static power [W]) of the chip: per core the NFU (``ni`` x ``no`` PEs' logic synthesised for
    the clock: ``area_factor``) and its IB, OB and WB SRAMs, plus the SHM (§1); leakage of that logic and SRAM
    at supply ``vdd_ratio`` (technology table). Python numbers (one point) or arrays over points at one
    technology node and width."""
    vbytes = value_bits / 8.0
    nfu = _pe_mm2(bits, node) * ni * no * area_factor
    buf_kb = (ib_entries * ni + ob_entries * no) * vbytes / 1024
    if type(buf_kb) is float:  # one point: its three SRAMs on Python floats (the bits of the array path)
        buf_mm2, wb_mm2, shm_mm2 = (tech.sram_area_mm2(float(kb), node) for kb in (buf_kb, weight_buffer_kb, shm_kb))
    else:
        buf_mm2, wb_mm2, shm_mm2 = (tech.sram_area_mm2(kb, node) for kb in (buf_kb, weight_buffer_kb, shm_kb))
    per_core = nfu + buf_mm2 + wb_mm2
    area = cores * per_core + shm_mm2
    sram_kb = cores * (buf_kb + weight_buffer_kb) + shm_kb
    return area, tech.static_power_w(cores * nfu, sram_kb, int(node), vdd_ratio)

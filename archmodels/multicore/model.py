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
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workloads import Workload
from workloads.layers import FC, Conv2D, Layer, MatMul, Pool

from .. import tech
from .. import vector
from ..base import Model
from ..layerarrays import column, full, groups, layer_batches, per_node, stack_rows
from ..params import Param, Points, batch_size
from ..result import LAYER_METRICS, LayerBatch, Metric, layer_sums

PLACEMENTS = ("B", "T1", "TR1", "T2", "TR2")
NFU_PIPELINE_STAGES = 3  # DianNao NFU: NFU-1 multiply, NFU-2 adder tree, NFU-3 activation


def cyclic_misses(n_chunks, passes, entries, policy="lru"):
    """IB misses when ``n_chunks`` chunks are read in order ``passes`` times.

    LRU and FIFO agree on a cyclic pattern: if the chunks fit, only the first
    pass misses; otherwise every access misses (vectorised over arrays).
    """
    if policy not in ("lru", "fifo"):
        raise ValueError(f"unknown IB policy {policy}")
    n_chunks, passes, entries = np.asarray(n_chunks), np.asarray(passes), np.asarray(entries)  # np.where broadcasts
    return np.where(n_chunks <= entries, n_chunks, n_chunks * passes)


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


def _ceil_div(a, b):
    return -(-np.asarray(a) // np.asarray(b))


def tiling_geometry(layer: Layer) -> tuple[int, int, int, int]:
    """(output rows, input rows, stride, window) along which :func:`shm_tiling` splits ``layer``."""
    if isinstance(layer, (Conv2D, Pool)):
        window = layer.dilation * (layer.kernel_h - 1) + 1 if isinstance(layer, Conv2D) else layer.kernel
        return layer.out_h, layer.in_h, layer.stride, window
    rows = layer.batch if isinstance(layer, FC) else getattr(layer, "n", 1)
    return rows, rows, 1, 1


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


def shm_tiling_of(input_elems, output_elems, rows, in_rows, stride, window, need_kb, shm_kb, vbytes):
    """:func:`shm_tiling` from the layer's sizes and :func:`tiling_geometry` (arrays: layers x points)."""
    need_kb, shm_kb = np.asarray(need_kb, dtype=float), np.asarray(shm_kb, dtype=float)
    fits = need_kb <= shm_kb
    row_in_kb = input_elems / in_rows * vbytes / 1024.0
    room = shm_kb - np.maximum(window - stride, 0) * row_in_kb  # what a tile may use beside its halo
    tiles = np.where(fits, 1.0, np.ceil(need_kb / np.maximum(room, 1e-9)))
    ok = fits | ((room > 0) & (tiles <= rows))
    tiles = np.minimum(tiles, rows)
    halo_rows = np.maximum(window - stride, 0) * (tiles - 1)
    rd = np.where(fits, 0.0, input_elems * vbytes * (1.0 + halo_rows / in_rows))
    wr = np.where(fits, 0.0, output_elems * vbytes)
    return tiles, rd, wr, ok


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


@dataclass(frozen=True)
class LayerTable:
    """A workload's layers as integer columns (one row per costed layer, shape (rows, 1)).

    Built once per layer tuple (:func:`layer_table`) so that one array expression over
    (layers x points) replaces a Python loop over layers. Costed rows are the FC-like layers
    (:func:`as_fc`) in workload order, then the pooling layers; ``row[i]`` is layer i's row,
    -1 for a layer the model does not run (sparse products).
    """

    fc: tuple[np.ndarray, ...]  # inputs, neurons, vectors, groups of the FC-like rows
    pool: tuple[np.ndarray, ...]  # input_elems, output_elems, channels, kernel of the pooling rows
    sizes: dict[str, np.ndarray]  # every costed row: input_elems, output_elems, macs, pool_ops
    geometry: tuple[np.ndarray, ...]  # every costed row: tiling_geometry
    row: tuple[int, ...]

    @property
    def rows(self) -> int:
        return len(self.sizes["macs"])


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
    return LayerTable(
        fc=tuple(column(v) for v in zip(*[as_fc(layers[i]) for i in fcs])) if fcs else (),
        pool=tuple(column(v) for v in zip(*[(layers[i].input_elems, layers[i].output_elems, layers[i].channels,
                                               layers[i].kernel) for i in pools])) if pools else (),
        sizes={"input_elems": column([x.input_elems for x in costed]),
               "output_elems": column([x.output_elems for x in costed]),
               "macs": column([x.macs for x in costed]),
               "pool_ops": column([x.ops if isinstance(x, Pool) else 0 for x in costed])},
        geometry=tuple(column(v) for v in zip(*[tiling_geometry(x) for x in costed])) if costed else (),
        row=tuple(row),
    )


class MulticoreModel(Model):
    name = "multicore"
    title = "Multi-core shared-memory NN accelerator (task placement)"
    spec = "multicore.md"
    #: a layer's cost does not depend on its neighbours (no fusion, no on-chip chaining): the other GEMM forms
    #: of a product are costed on the swapped layers alone (base.Model._evaluate_gemms)
    GEMM_FORMS_CONTEXT = False
    SUPPORTS = ("conv", "pool", "fc", "matmul", "vector")

    def vector_unit(self, pts: Points) -> vector.VectorUnit:
        """Vector layers on the NFUs: each core's No output lanes do one operation per cycle;
        activations stay in the shared memory when they fit (streamed over the network at
        ``noc_gbps``), else they go through DRAM; an operation costs an add."""
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
        """The clock must not exceed the node's maximum (technology table)."""
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
    )
    TOTAL_METRICS = (
        Metric("shm_reads_per_core", "chunks", "sum over layers", integer=True),
        Metric("shm_writes_per_core", "chunks", "sum over layers", integer=True),
        Metric("shm_read_bytes", "B", "sum over layers"),
        Metric("shm_write_bytes", "B", "sum over layers"),
        Metric("mac_units", "", "multipliers on chip (cores x ni x no)", integer=True, combine="max"),
    )

    def validation_metric(self, metric, workload, params, case, section):
        """``cycle_order``: placements sorted by total cycles, e.g. ``T1 == TR1 < TR2``."""
        if metric != "cycle_order":
            return NotImplemented
        rows = [{**params, "placement": p} for p in PLACEMENTS]
        cycles = self.evaluate_points(workload, rows).totals["cycles"]
        return placement_order(dict(zip(PLACEMENTS, cycles)))

    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        """Every layer at once: chunk counts, cycles and energy as arrays over (layers x points)."""
        n = batch_size(pts)
        t = layer_table(workload.layers)
        if t.rows:
            metrics, states, ok, need_kb = self._costs(t, pts)
            reason = np.full(ok.shape, "", dtype=object)
            if not ok.all():
                bad = ~ok
                shm_kb = np.broadcast_to(pts["shm_kb"], ok.shape)[bad]
                reason[bad] = [f"shared memory too small: needs {x:.0f} KB, and one output row (vector) "
                               f"does not fit {y:.0f} KB" for x, y in zip(need_kb[bad].tolist(), shm_kb.tolist())]
            placement = np.broadcast_to(pts["placement"].astype(object), ok.shape).copy()
            out = layer_batches(workload.layers, t.row, n, metrics, states, {"placement": placement}, ok, reason)
        else:
            out = [None] * len(workload.layers)
        for i, layer in enumerate(workload.layers):
            if out[i] is None:  # sparse products: not a DaDianNao-style workload (reported infeasible by the base class)
                lb = out[i] = LayerBatch(layer, n)
                lb.labels["placement"] = pts["placement"].astype(object)
                lb.set(**{m.name: np.nan for m in (*LAYER_METRICS, *self.LAYER_METRICS) if m.name != "dram_bytes"})
        return out

    # ---- chunk counts (per busiest core; arrays over layers x points) ----
    @staticmethod
    def _fc_counts(inputs, neurons, vectors, groups, pts: Points) -> dict:
        cores, ni, no = pts["cores"], pts["ni"], pts["no"]
        pl = pts["placement"]
        is_b, is_t2 = pl == "B", (pl == "T2") | (pl == "TR2")
        reuse = (pl == "TR1") | (pl == "TR2") | pts["input_reuse"]
        # inputs / neurons handled by the busiest core
        in_vals = np.where(is_t2, _ceil_div(inputs, cores), inputs)
        out_vals = np.where(is_t2 | is_b, neurons, _ceil_div(neurons, cores))
        in_ch = _ceil_div(in_vals, ni)
        out_ch = _ceil_div(out_vals, no)
        active = np.where(is_b, 1, np.minimum(cores, np.where(is_t2, inputs, neurons)))
        misses = np.where(
            reuse,
            MulticoreModel._misses(in_ch, out_ch, pts["input_buffer_entries"], pts["ib_policy"]),
            in_ch * out_ch,
        )
        reads = misses + out_ch  # + one head read per output chunk
        writes = out_ch
        owned = np.where(is_t2, _ceil_div(_ceil_div(neurons, cores), no), 0)
        reps = vectors * groups
        return dict(
            reads=reads * reps, writes=writes * reps, nfu=in_ch * out_ch * reps,
            merge_reads=owned * reps, merge_writes=owned * reps,
            merge_psum_reads=owned * cores * reps, merge_nfu=owned * cores * reps,
            active=active, in_chunk_reads=misses * reps,
            weight_elems=inputs * neurons * groups,
            weights_per_core=np.where(is_b, inputs * neurons, np.where(is_t2, in_vals * neurons, out_vals * inputs)) * groups,
            psum_elems=np.where(is_t2, cores * neurons * vectors * groups, 0),
        )

    @staticmethod
    def _misses(in_ch, out_ch, entries, policy):
        out = np.empty(np.shape(in_ch), dtype=np.int64)
        for (pol,), sel in groups(policy):
            out[:, sel] = cyclic_misses(in_ch[:, sel], out_ch[:, sel], entries[sel], pol)
        return out

    @staticmethod
    def _pool_counts(input_elems, output_elems, channels, kernel, pts: Points) -> dict:
        cores, ni, no = pts["cores"], pts["ni"], pts["no"]
        is_b = pts["placement"] == "B"
        active = np.where(is_b, 1, np.minimum(cores, channels))
        in_ch = _ceil_div(_ceil_div(input_elems, active), ni)
        out_ch = _ceil_div(_ceil_div(output_elems, active), no)
        zero = np.zeros_like(cores)
        return dict(
            reads=in_ch, writes=out_ch, nfu=out_ch * kernel * kernel,
            merge_reads=zero, merge_writes=zero, merge_psum_reads=zero, merge_nfu=zero,
            active=active, in_chunk_reads=in_ch,
            weight_elems=0, weights_per_core=zero,
            psum_elems=zero,
        )

    # ---- time, traffic, energy ----
    def _costs(self, t: LayerTable, pts: Points):
        """(metrics, states, feasible, need_kb) of the costed rows of ``t``, arrays over (rows x points)."""
        n = batch_size(pts)
        parts = []
        if t.fc:
            parts.append((len(t.fc[0]), self._fc_counts(*t.fc, pts)))
        if t.pool:
            parts.append((len(t.pool[0]), self._pool_counts(*t.pool, pts)))
        c = {k: stack_rows([p[k] for _, p in parts], [rows for rows, _ in parts], n) for k in parts[0][1]}
        sz = t.sizes
        vbytes = pts["value_bits"] / 8.0
        ni, no, cores = pts["ni"], pts["no"], pts["cores"]
        clock_hz = pts["clock_mhz"] * 1e6
        noc_bpc = pts["noc_gbps"] * 1e9 / clock_hz
        dram_bpc = pts["dram_gbps"] * 1e9 / clock_hz
        fill = pts["noc_latency_cycles"] + pts["mem_latency_cycles"] + NFU_PIPELINE_STAGES
        ports = pts["mem_ports"]

        in_chunk_b, out_chunk_b = ni * vbytes, no * vbytes
        core_rd_b = c["in_chunk_reads"] * in_chunk_b + (c["reads"] - c["in_chunk_reads"]) * out_chunk_b
        core_wr_b = c["writes"] * out_chunk_b
        merge_rd_b = (c["merge_reads"] + c["merge_psum_reads"]) * out_chunk_b
        merge_wr_b = c["merge_writes"] * out_chunk_b
        active = c["active"]

        # weights that do not fit a core's WB stream from DRAM every inference
        spill = c["weights_per_core"] * vbytes > pts["weight_buffer_kb"] * 1024.0
        # SHM holds the layer's input and output feature maps (+ T2 partial sums); when they do
        # not fit, the layer runs in tiles staged through SHM from and to DRAM (shm_tiles)
        need_kb = (sz["input_elems"] + sz["output_elems"] + c["psum_elems"]) * vbytes / 1024.0
        tiles, fm_rd, fm_wr, tile_ok = shm_tiling_of(sz["input_elems"], sz["output_elems"], *t.geometry,
                                                     need_kb, pts["shm_kb"], vbytes)
        dram_rd = np.where(spill, c["weight_elems"] * vbytes, 0.0) + fm_rd
        compute = np.maximum.reduce([
            (c["reads"] + c["writes"]) / ports,
            c["nfu"],
            active * (core_rd_b + core_wr_b) / noc_bpc,
            (dram_rd + fm_wr) / dram_bpc,
        ]) + fill
        has_merge = c["merge_reads"] > 0
        merge = np.where(has_merge, np.maximum.reduce([
            (c["merge_reads"] + c["merge_psum_reads"] + c["merge_writes"]) / ports,
            c["merge_nfu"],
            active * (merge_rd_b + merge_wr_b) / noc_bpc,
        ]) + fill, 0.0)
        cycles = compute + merge
        time_s = cycles / clock_hz
        mac_units = cores * ni * no
        util = sz["macs"] / (cycles * mac_units)

        shm_rd = active * (core_rd_b + merge_rd_b)
        shm_wr = active * (core_wr_b + merge_wr_b)
        vscale = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).energy_scale  # once for every layer
        energy_j = (self._energy_pj(sz, c, pts, vbytes, shm_rd, shm_wr) * vscale * 1e-12
                    + tech.dram_energy_j(dram_rd, fm_wr, pts["dram"]))
        shape = cycles.shape
        metrics = dict(
            cycles=cycles, time_s=time_s, utilization=util, dram_read_bytes=dram_rd,
            dram_write_bytes=fm_wr, energy_j=energy_j, shm_tiles=tiles,
            shm_reads_per_core=c["reads"] + c["merge_reads"], shm_writes_per_core=c["writes"] + c["merge_writes"],
            shm_merge_reads_per_core=c["merge_psum_reads"], nfu_steps_per_core=c["nfu"] + c["merge_nfu"],
            shm_read_bytes=shm_rd, shm_write_bytes=shm_wr, active_cores=active,
        )
        states = {"COMPUTE": compute.astype(float), "MERGE": merge.astype(float)}
        return ({k: full(v, shape) for k, v in metrics.items()}, {k: full(v, shape) for k, v in states.items()},
                np.broadcast_to(tile_ok, shape).copy(), np.broadcast_to(need_kb, shape))

    @staticmethod
    def _energy_pj(sz, c, pts, vbytes, shm_rd, shm_wr):
        """On-chip dynamic energy at nominal supply: MACs + IB/WB/OB accesses per NFU step + SHM bytes.

        Energies per operation and per SRAM byte are per-point arrays (technology table at each
        point's node and width), so one expression covers every layer and point."""
        ni, no, nodes, bits = pts["ni"], pts["no"], pts["tech_nm"], pts["value_bits"]
        mac_pj = tech.per_point(lambda b, nd: tech.mac_energy_pj(tech.dtype_of(b), nd), bits, nodes)
        add_pj = tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd), bits, nodes)
        ib_kb = pts["input_buffer_entries"] * ni * vbytes / 1024
        ob_kb = pts["output_buffer_entries"] * no * vbytes / 1024
        ib_pj, ob_pj, wb_pj, shm_pj = (per_node(tech.sram_energy_pj_per_byte, kb, nodes)
                                       for kb in (ib_kb, ob_kb, pts["weight_buffer_kb"], pts["shm_kb"]))
        steps = c["nfu"] * c["active"]
        e = sz["macs"] * mac_pj
        e = e + c["merge_nfu"] * c["active"] * no * add_pj
        e = e + sz["pool_ops"] * add_pj  # zero for layers other than pooling
        e = e + steps * ni * vbytes * ib_pj
        e = e + steps * ni * no * vbytes * wb_pj * (c["weight_elems"] > 0)
        e = e + steps * no * vbytes * ob_pj
        e = e + (shm_rd + shm_wr) * shm_pj
        return e

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict:
        cores, ni, no = pts["cores"], pts["ni"], pts["no"]
        vbytes = pts["value_bits"] / 8.0
        area, static = np.zeros(len(cores)), np.zeros(len(cores))
        clock = pts["clock_mhz"]
        vdd = tech.clock_costs(clock, pts["tech_nm"]).vdd_ratio
        for (node, bits), sel in groups(pts["tech_nm"], pts["value_bits"]):
            dt = tech.dtype_of(bits)
            nfu = tech.pe_logic_area_mm2(dt, node, 1.0) * ni[sel] * no[sel] * tech.logic_area_factor(clock[sel], node)
            buf_kb = (pts["input_buffer_entries"][sel] * ni[sel] + pts["output_buffer_entries"][sel] * no[sel]) * vbytes[sel] / 1024
            per_core = nfu + tech.sram_area_mm2(buf_kb, node) + tech.sram_area_mm2(pts["weight_buffer_kb"][sel], node)
            area[sel] = cores[sel] * per_core + tech.sram_area_mm2(pts["shm_kb"][sel], node)
            sram_kb = cores[sel] * (buf_kb + pts["weight_buffer_kb"][sel]) + pts["shm_kb"][sel]
            static[sel] = tech.static_power_w(cores[sel] * nfu, sram_kb, int(node), vdd[sel])

        return {
            "area_mm2": area,
            "hw_mac_units": (cores * ni * no).astype(float),
            "static_power_w": static,
            **layer_sums(layers, ("shm_reads_per_core", "shm_writes_per_core", "shm_read_bytes", "shm_write_bytes"),
                         len(cores)),
            "mac_units": (cores * ni * no).astype(float),
        }

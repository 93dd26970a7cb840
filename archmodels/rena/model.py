"""ReNA: a PB-array CNN accelerator, as ASIC and as FPGA port (spec ``rena.md``).

An ``pb_rows`` x ``pb_cols`` array of processing blocks (PBs, one MAC per
cycle per multiplier, 8-bit fixed point) runs convolution and fully
connected layers on the same structure by reconfiguring the connections
(§1-§2). A DRAM transfer part streams inputs/outputs, weights and
instructions on their own DDR4 channels, independently of the array (§3).

One layer = ``max(compute, dram) + one burst`` cycles, where

* ``compute`` is the processing flow of :mod:`archmodels.rena.flows`
  (convolution: load / shift-and-MAC / unload passes, overlapped in steady
  state when the array has separate ports; FC: ring set-up, input load,
  per-step weight delivery column by column), with the buffer <-> array
  lanes moving ``transfer_bits`` per transfer (4 x 2 bit on the ASIC, 1 x 8
  bit on the FPGA);
* ``dram`` is what the busiest DRAM channel needs for the layer's bursts
  (:mod:`archmodels.rena.dram`; 205 cycles per 4 KB burst measured on the
  FPGA) -- the transfer part overlaps with compute but can never be faster
  than the bursts, which makes FC layers DRAM-bound;
* one burst latency before the first pass can start.

Targets: ``fpga`` (the D5005 port) adds ``dsp``, ``bram_mb``, ``logic`` from
per-PB and per-buffer costs (:mod:`archmodels.rena.resources`) and marks a
design infeasible when it exceeds the ``device`` (:mod:`archmodels.rena.fpga_devices`);
``asic`` gives area and energy from the technology table at ``tech_nm``.
Per-target defaults (clock, burst cycles, transfer width, ports) apply to
parameters left at 0 / ``auto`` and are shown resolved in the results.

Evaluation (issue 15): a batch of points costs every layer at once over (layers x points) numpy
arrays (each flow over all its layers, then :func:`layer_costs`); one point alone -- a study's trial --
costs its distinct layers one after the other in Python numbers (:meth:`RenaModel._point_costs`) and
checks its configuration and makes its totals from one :class:`_Point` of Python numbers. Both run the
same formula functions (:mod:`archmodels.num` dispatches numpy's elementwise functions on the type
of their arguments) and give the same bits (``tests/test_rena_speed_paths.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Callable

import numpy as np

from workloads import Workload
from workloads.layers import FC, Conv2D, Layer, MatMul, Pool

from . import resources as res
from .. import num, tech
from .. import vector
from ..base import Model
from ..layerarrays import PointsMemo, column, full, groups, layer_batches, per_node, point_batches, stack_rows
from ..memo import IdentityMemo
from ..clock import clock_reason, node_max_clock_mhz, point_clock, vdd_ratio
from .fpga_devices import DEFAULT_DEVICE, DEVICES, FpgaDevice, fmax_mhz
from ..params import Param, ParamSet, Points, batch_size
from .dram import burst_cycles, dram_cycles, point_channels, point_dram_cycles
from .flows import ArrayConfig, Flow, ceil_div, conv_flow, conv_products, fc_flow, fc_products, pool_flow, pool_products
from ..num import maximum, minimum
from ..result import ENERGY_PART_TOTALS, ENERGY_PARTS, LayerBatch, Metric, layer_sums

#: Defaults per target for parameters left at 0 / "auto" (spec §1, §3, §5).
TARGET_DEFAULTS: dict[str, dict[str, Any]] = {
    # FPGA port: 144 MHz measured clock (§4), 205 cycles per burst measured
    # (§3), 1 x 8-bit buffer -> array transfers and separate 512-bit input,
    # weight and output ports (§3).
    "fpga": {"clock_mhz": 144.0, "dram_burst_cycles": 205.0, "transfer_bits": 8, "array_ports": "separate"},
    # ASIC: 350 MHz (§1), 4 x 2-bit transfers (§3). Assumptions: one shared
    # buffer <-> array interface (the ASIC is described with a single "4
    # transfers of 2 bits" feed; the FPGA port is the one that gets separate
    # ports), and a transfer part that streams one 512-bit beat per cycle
    # (64 cycles per burst, floored by the DDR4 peak rate) -- the paper gives
    # no DRAM figure for the ASIC.
    "asic": {"clock_mhz": 350.0, "dram_burst_cycles": 64.0, "transfer_bits": 2, "array_ports": "shared"},
}
_AUTO = {"clock_mhz": 0.0, "dram_burst_cycles": 0.0, "transfer_bits": 0, "array_ports": "auto"}


class _RenaParams(ParamSet):
    """Parameters whose 0 / ``auto`` value means "the target's default"."""

    def derive(self, row: dict[str, Any]) -> dict[str, Any]:
        for key, auto in _AUTO.items():
            if row[key] == auto:
                row[key] = TARGET_DEFAULTS[row["target"]][key]
        return row


#: the ``bound`` label by index (False: the array sets the pace, True: DRAM)
_BOUND = np.array(["array", "dram"], dtype=object)


def _nan(n: int) -> np.ndarray:
    return np.full(n, np.nan)


def _device_attr(pts: Points, attr: str) -> np.ndarray:
    """A device property per point (looked up once per distinct device)."""
    out = np.zeros(batch_size(pts))
    for (name,), sel in groups(pts["device"]):
        out[sel] = getattr(DEVICES[name], attr)
    return out


@dataclass(frozen=True)
class LayerTable:
    """A workload's layers as integer columns for the flows (one row per costed layer, shape (rows, 1)).

    Built once per layer tuple (:func:`layer_table`). Costed rows of a batch are the layers run as the
    convolution flow (convolutions, dense matrix products), then the FC layers, then pooling;
    ``row[i]`` is layer i's row, -1 for a layer ReNA does not run (sparse products). One point's rows are
    the costed layers in layer order (``point_row``, ``point_call``, ``calls``).
    """

    conv: tuple[np.ndarray, ...]  # conv_flow's groups, filters, window, pixels, then its products (conv_products)
    fc: tuple[np.ndarray, ...]  # fc_flow's inputs, outputs, batch, then its products (fc_products)
    pool: tuple[np.ndarray, ...]  # pool_flow's input_elems, output_elems, then its products (pool_products)
    macs: np.ndarray  # every costed row
    pool_ops: np.ndarray  # every costed row (zero but for pooling)
    row: tuple[int, ...]
    #: the one-point path's rows are the costed layers in layer order (its arrays need no reordering into layer
    #: order for sums): ``point_row[i]`` is layer i's row there (-1 for a layer ReNA does not run); ``calls`` the
    #: distinct (flow, the flow's layer arguments, MACs, pooling ops) of the rows, and ``point_call`` each row's
    #: index into them (layers of one shape, e.g. VGG16's conv5_1..5_3, are costed once per point). The layer
    #: arguments are Python ints followed by the flow's products of the layer alone (Python floats, as the
    #: columns' products); MACs and pooling ops are Python floats (they only meet floats: :func:`layer_costs`)
    calls: tuple[tuple[Callable[..., Flow], tuple[int, ...], int, int], ...] = ()
    point_call: tuple[int, ...] = ()
    point_row: tuple[int, ...] = ()

    @property
    def rows(self) -> int:
        return len(self.macs)


def _flow_args(layer: Layer) -> tuple[str, tuple[int, ...]] | None:
    """(flow, its layer arguments) of a layer, None for a layer ReNA does not run."""
    if isinstance(layer, Conv2D):
        window = layer.ic_per_group * layer.kernel_h * layer.kernel_w
        return "conv", (layer.groups, layer.oc_per_group, window, layer.out_h * layer.out_w)
    if isinstance(layer, FC):
        return "fc", (layer.inputs, layer.outputs, layer.batch)
    if isinstance(layer, Pool):
        return "pool", (layer.input_elems, layer.output_elems)
    if isinstance(layer, MatMul) and layer.kind == "matmul":
        return "conv", (1, layer.m, layer.k, layer.n)
    return None  # sparse products: not a ReNA workload


@lru_cache(maxsize=64)
def layer_table(layers: tuple[Layer, ...]) -> LayerTable:
    """The :class:`LayerTable` of ``layers`` (cached: it depends on the layer shapes only)."""
    args = [_flow_args(layer) for layer in layers]
    by_flow = {f: [i for i, a in enumerate(args) if a is not None and a[0] == f] for f in ("conv", "fc", "pool")}
    order = by_flow["conv"] + by_flow["fc"] + by_flow["pool"]
    row = [-1] * len(layers)
    for r, i in enumerate(order):
        row[i] = r

    def cols(flow: str) -> tuple[np.ndarray, ...]:
        """The flow's argument columns, then its products' columns (made by the products function on them)."""
        if not by_flow[flow]:
            return ()
        layer_cols = tuple(column(v) for v in zip(*[args[i][1] for i in by_flow[flow]]))
        return (*layer_cols, _PRODUCTS[flow](*layer_cols))

    costed = [i for i, a in enumerate(args) if a is not None]
    macs = {i: int(layers[i].macs) for i in costed}
    pool_ops = {i: int(layers[i].ops) if isinstance(layers[i], Pool) else 0 for i in costed}
    distinct: dict[tuple, int] = {}
    keys = [(_FLOWS[args[i][0]], _point_args(args[i][0], args[i][1]), float(macs[i]), float(pool_ops[i]))
            for i in costed]
    point_call = tuple(distinct.setdefault(key, len(distinct)) for key in keys)
    point_row = [-1] * len(layers)
    for r, i in enumerate(costed):
        point_row[i] = r
    return LayerTable(cols("conv"), cols("fc"), cols("pool"), column(macs[i] for i in order),
                      column(pool_ops[i] for i in order), tuple(row), tuple(distinct), point_call, tuple(point_row))


_FLOWS = {"conv": conv_flow, "fc": fc_flow, "pool": pool_flow}
_PRODUCTS = {"conv": conv_products, "fc": fc_products, "pool": pool_products}


def _point_args(flow: str, layer_args: tuple[int, ...]) -> tuple:
    """A flow's arguments for one point (:attr:`LayerTable.calls`): the layer's Python ints, then the flow's
    products of the layer alone (a tuple of Python floats)."""
    ints = tuple(int(a) for a in layer_args)
    return (*ints, _PRODUCTS[flow](*ints))

#: :func:`layer_table` of a layer tuple, looked up by the tuple's identity first (a study evaluates the same
#: workload object every trial; layer_table's lru_cache hashes every layer: ~4 us for VGG16, ~16 us for ResNet-50)
_table_of = IdentityMemo(layer_table)


class RenaModel(Model):
    name = "rena"
    title = "ReNA PB-array CNN accelerator (ASIC and FPGA port)"
    spec = "rena.md"
    DOC_PAGE = "docs/models/rena.md"
    STATE_DOCS = {  # docs/models/rena.md, "States per layer"
        "MAC": "shift-and-MAC steps of the array",
        "TRANSFER": "loads, unloads, weight delivery and control not hidden behind MAC steps",
        "DRAM_WAIT": "cycles beyond the array's own spent waiting for DRAM bursts",
    }
    #: a layer's cost does not depend on its neighbours (no fusion, no on-chip chaining): the other GEMM forms
    #: of a product are costed on the swapped layers alone (base.Model._evaluate_gemms)
    GEMM_FORMS_CONTEXT = False
    SUPPORTS = ("conv", "pool", "fc", "matmul", "vector")
    AREA_ANCHOR = ("FPGA: the published resource table (spec rena.md §4: DSP, BRAM, ALMs; fitted per PB); ASIC: none "
                   "published -- PE logic from the IMAX 28 nm die's fitted PE overhead, buffers from SRAM bit cells")

    def vector_unit(self, pts: Points) -> vector.VectorUnit:
        """Vector layers on the PB array: one operation per PB per cycle, values entering and
        leaving at the array's edge (one per row per cycle each way, as inputs are loaded and
        outputs unloaded, spec §2) and bounded by DRAM (all channels); an operation costs an add,
        on the FPGA x the FPGA/ASIC energy ratio, bytes the DRAM energy. One point: the same formulas on the
        point's Python numbers (:class:`_Point`)."""
        if batch_size(pts) == 1:
            return _point(pts).vector_unit(pts["tech_nm"].item(0), pts["dram_gbps"].item(0), pts["dram"].item(0))
        cfg, eff = self._config(pts)
        clock_hz = eff["clock_hz"]
        edge = cfg.rows * cfg.value_bytes * clock_hz * 2
        add_pj = tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd), pts["bits"], pts["tech_nm"])
        add_pj = np.where(pts["target"] == "fpga", add_pj * tech.FPGA_DYNAMIC_ENERGY_RATIO, add_pj)
        return vector.VectorUnit("PB array", cfg.rows * cfg.cols * clock_hz, clock_hz, cfg.value_bytes,
                                 np.minimum(pts["dram_channels"] * pts["dram_gbps"] * 1e9, edge), add_pj * eff["vscale"],
                                 *tech.dram_pj_per_byte(pts["dram"]))

    PARAMS = (
        Param("pb_rows", "int", 64, 1, 1024, doc="PB array rows (filters of a conv tile; one buffer lane per row)"),
        Param("pb_cols", "int", 64, 1, 1024, doc="PB array columns (output pixels of a conv tile)"),
        Param("mults_per_pb", "choice", 1, choices=(1, 2), doc="multipliers per PB (2: same input x two weights)"),
        Param("clock_mhz", "float", 0.0, 0, 3000, unit="MHz", doc="array clock; 0 = target default (fpga 144, asic 350)"),
        Param("target", "choice", "asic", choices=("asic", "fpga"), doc="ReNA ASIC or its FPGA port"),
        Param("bits", "choice", 8, choices=(8, 16), unit="bit", doc="fixed-point width of data and weights"),
        Param("dram_channels", "int", 3, 1, 16, doc="DRAM channels used (X, W, I; the D5005 has 4)"),
        Param("dram_gbps", "float", 19.2, 0.1, 1000, unit="GB/s", doc="peak bandwidth per channel (DDR4-2400 x 64 bit)"),
        Param("dram_burst_cycles", "float", 0.0, 0, 1e6, unit="cycles",
              doc="cycles a 4 KB burst occupies its channel; 0 = target default (fpga 205 measured, asic 64)"),
        Param("transfer_bits", "choice", 0, choices=(0, 1, 2, 4, 8, 16), unit="bit",
              doc="bits per buffer<->array transfer per lane; 0 = target default (fpga 8, asic 2)"),
        Param("array_ports", "choice", "auto", choices=("auto", "separate", "shared"),
              doc="separate input/weight/output ports (fpga) or one shared interface (asic)"),
        Param("device", "choice", DEFAULT_DEVICE, choices=tuple(DEVICES), doc="FPGA device (target fpga)"),
        Param("tech_nm", "choice", 28, choices=tech.NODES_NM, unit="nm", doc="ASIC technology node (energy, area)"),
        Param("dram", "choice", "ddr4", choices=tech.DRAM_NAMES,
              doc="external memory type for DRAM energy (technology table; the D5005 board: DDR4-2400)"),
    )
    LAYER_METRICS = (
        Metric("compute_cycles", "cycles", "array and lanes alone (DRAM infinitely fast)"),
        Metric("dram_cycles", "cycles", "bursts of the busiest DRAM channel"),
        Metric("passes", "", "conv: load/MAC/unload passes; fc: ring steps", integer=True),
        Metric("compute_energy_j", "J", "MACs and pooling comparisons (x the FPGA/ASIC ratio on the FPGA, at the clock's supply)"),
        Metric("sram_energy_j", "J", "bytes written into and read out of the buffers (same scaling)"),
        Metric("dram_energy_j", "J", "DRAM reads and writes (technology-table row `dram`)"),
    )
    TOTAL_METRICS = (
        Metric("dsp", "blocks", "FPGA DSP blocks (target fpga)", integer=True, combine="max"),
        Metric("bram_mb", "Mbit", "FPGA block RAM, Mbit = 2^20 bit (target fpga)", combine="max"),
        Metric("logic", "ALM", "FPGA logic in ALMs (target fpga)", integer=True, combine="max"),
        Metric("mac_units", "", "multipliers in the array, PBs x mults_per_pb (the paper's parallelism)", integer=True, combine="max"),
        Metric("fmax_mhz", "MHz", "FPGA: clock the design closes at, falling with device utilization (target fpga)",
               combine="min"),
        Metric("compute_cycles", "cycles", "sum over layers"),
        Metric("dram_cycles", "cycles", "sum over layers"),
        *ENERGY_PART_TOTALS,
    )

    def __init__(self) -> None:
        super().__init__()
        self.params = _RenaParams(self.PARAMS, self.name)

    # ---- effective parameters ----
    @staticmethod
    def _resolved(pts: Points) -> dict[str, np.ndarray]:
        """Per-target defaults for points built without :meth:`_RenaParams.resolve` (read-only arrays,
        remembered for the last few point sets: feasibility, layers and totals each ask)."""
        return _RESOLVED(pts)

    @staticmethod
    def _resolve_auto(pts: Points) -> dict[str, np.ndarray]:
        """:meth:`_resolved`, computed."""
        fpga = pts["target"] == "fpga"
        out = {}
        for key, auto in _AUTO.items():
            dflt = np.where(fpga, TARGET_DEFAULTS["fpga"][key], TARGET_DEFAULTS["asic"][key])
            out[key] = np.where(pts[key] == auto, dflt, pts[key])
        return out

    def _config(self, pts: Points) -> tuple[ArrayConfig, dict[str, np.ndarray]]:
        eff = self._resolved(pts)
        clock_hz = eff["clock_mhz"].astype(float) * 1e6
        cfg = ArrayConfig(
            rows=pts["pb_rows"].astype(np.int64), cols=pts["pb_cols"].astype(np.int64),
            mults=pts["mults_per_pb"].astype(np.int64),
            tpv=ceil_div(pts["bits"].astype(np.int64), eff["transfer_bits"].astype(np.int64)),
            shared=eff["array_ports"] == "shared", value_bytes=pts["bits"] / 8.0,
        )
        burst = burst_cycles(eff["dram_burst_cycles"].astype(float), pts["dram_gbps"], clock_hz)
        # on-chip energy scale of the clock (V^2, technology table); the FPGA's supply is fixed
        asic = pts["target"] == "asic"
        vscale = (np.where(asic, tech.clock_costs(clock_hz / 1e6, pts["tech_nm"]).energy_scale, 1.0) if asic.any()
                  else np.ones(asic.shape))  # FPGA points only: the scale is 1 (no clock costs to look up)
        return cfg, {"clock_hz": clock_hz, "burst": burst, "vscale": vscale}

    # ---- layers ----
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        """Every layer at once: the flows, DRAM bursts and energy as arrays over (layers x points); one point
        alone layer after layer in Python numbers (:meth:`_point_costs`, the same formulas)."""
        n = batch_size(pts)
        t = _table_of(workload.layers)
        if t.rows and n == 1:
            columns, bound = self._point_costs(t, _point(pts))
            out = point_batches(workload.layers, t.point_row, columns, _METRICS, _STATES, {"bound": bound})
        elif t.rows:
            metrics, states, bound = self._costs(t, pts)
            out = layer_batches(workload.layers, t.row, n, metrics, states, {"bound": bound})
        else:
            out = [None] * len(workload.layers)
        for i, layer in enumerate(workload.layers):
            if out[i] is None:  # sparse products: not a ReNA workload (reported infeasible by the base class)
                nan = _nan(n)
                out[i] = LayerBatch(layer, n).set(
                    cycles=nan, time_s=nan, utilization=nan, dram_read_bytes=nan, dram_write_bytes=nan,
                    energy_j=nan, compute_cycles=nan, dram_cycles=nan, passes=nan, compute_energy_j=nan,
                    sram_energy_j=nan, dram_energy_j=nan)
        return out

    def _costs(self, t: LayerTable, pts: Points):
        """(metrics, states, bound label) of the costed rows of ``t``, arrays over (rows x points): each flow over
        all its rows at once, stacked, then :func:`layer_costs` over (rows x points)."""
        n = batch_size(pts)
        cfg, eff = self._config(pts)
        flows = [(len(cols[0]), fn(cfg, *cols)) for fn, cols in ((conv_flow, t.conv), (fc_flow, t.fc), (pool_flow, t.pool))
                 if cols]

        def stack(get):
            return stack_rows([get(f) for _, f in flows], [rows for rows, _ in flows], n)

        f = Flow(compute_cycles=stack(lambda f: f.compute_cycles), mac_cycles=stack(lambda f: f.mac_cycles),
                 passes=stack(lambda f: f.passes), x_read_bytes=stack(lambda f: f.x_read_bytes),
                 x_write_bytes=stack(lambda f: f.x_write_bytes),
                 w_bytes=(stack(lambda f: f.w_bytes[0]), stack(lambda f: f.w_bytes[1])))
        c = Costing(cfg.pbs, cfg.mults, pts["dram_channels"], eff["burst"], eff["clock_hz"],
                    self._energy_rates(pts, cfg, eff["vscale"]))
        values = layer_costs(f, t.macs, t.pool_ops, c)
        shape = values[0].shape
        metrics = {k: full(v, shape) for k, v in zip(_METRICS, values)}
        states = {k: full(v, shape) for k, v in zip(_STATES, values[len(_METRICS):])}
        return metrics, states, _BOUND[values[-1].astype(np.intp)]

    @staticmethod
    def _point_costs(t: LayerTable, p: _Point):
        """:meth:`_costs` of one point: each distinct costed layer's flow and :func:`layer_costs` in Python numbers
        (pure functions: a layer of the same shape gets the same values), the rows in layer order (``t.point_row``):
        (the metrics' and states' values over the rows, Python numbers (:func:`point_batches`), the bound labels as
        a (rows x 1) array)."""
        cfg, c = p.cfg, p.costing
        costs = [layer_costs(flow(cfg, *args), macs, pool_ops, c) for flow, args, macs, pool_ops in t.calls]
        columns = list(zip(*[costs[j] for j in t.point_call]))
        bound = columns.pop()  # the bound flag (a bool: 0 / 1)
        return columns, _BOUND[np.fromiter(bound, np.intp, len(bound))].reshape(-1, 1)

    # ---- energy ----
    @staticmethod
    def _energy_rates(pts: Points, cfg: ArrayConfig, vscale: np.ndarray) -> EnergyRates:
        """:class:`EnergyRates` of the points (arrays over points): the technology table at ``tech_nm`` (ASIC) or
        at the device's node (FPGA: 28 nm entries for nodes the table lacks) x the FPGA/ASIC dynamic-energy
        ratio [KR07]; the SRAM of each buffer's size; DRAM of the table's row ``dram``."""
        fpga = pts["target"] == "fpga"
        node = np.where(fpga, _device_attr(pts, "node_nm"), pts["tech_nm"]) if fpga.any() else pts["tech_nm"]
        known = np.logical_or.reduce([node == nd for nd in tech.NODES_NM])  # np.isin(node, NODES_NM), fewer calls
        node = np.where(known, node, max(tech.NODES_NM)).astype(np.int64)
        mac_pj = tech.per_point(lambda b, nd: tech.mac_energy_pj(tech.dtype_of(b), nd), pts["bits"], node)
        add_pj = tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd), pts["bits"], node)
        buffer_kb = res.buffer_bits(cfg.pbs, pts["bits"]) / 8 / 1024 / res.N_BUFFERS
        sram_pj = per_node(tech.sram_energy_pj_per_byte, buffer_kb, node)
        return EnergyRates(mac_pj, add_pj, sram_pj, np.where(fpga, tech.FPGA_DYNAMIC_ENERGY_RATIO, 1.0), vscale,
                           *tech.dram_pj_per_byte(pts["dram"]))

    # ---- configuration: FPGA resources and device limits ----
    @staticmethod
    def resources(pts: Points) -> dict[str, np.ndarray]:
        """``dsp``, ``bram_mb``, ``logic``, ``fmax_mhz`` of the FPGA port (NaN for ASIC points; read-only
        arrays, remembered for the last few point sets: feasibility and totals both ask)."""
        return _point(pts).resource_arrays if batch_size(pts) == 1 else _RESOURCES(pts)

    @staticmethod
    def _resources(pts: Points) -> dict[str, np.ndarray]:
        """:meth:`resources`, computed."""
        pbs = pts["pb_rows"] * pts["pb_cols"]
        fpga = pts["target"] == "fpga"
        if not fpga.any():  # ASIC points only: every resource is NaN (what the np.where below gives them)
            return {key: _nan(len(pbs)) for key in _RESOURCE_KEYS}
        dsp = np.full(len(pbs), np.nan)
        devices = groups(pts["device"])
        for (dev,), sel in devices:
            dsp[sel] = res.dsp_blocks(pbs[sel], pts["mults_per_pb"][sel], pts["bits"][sel], DEVICES[dev])
        bram = res.bram_mbit(pbs, pts["bits"])
        logic = np.round(res.logic_alms(pbs, pts["mults_per_pb"], pts["bits"]))
        fmax = np.full(len(pbs), np.nan)
        for (dev,), sel in devices:
            d = DEVICES[dev]
            share = np.maximum.reduce([dsp[sel] / d.dsp_blocks, bram[sel] / d.bram_mbit, logic[sel] / d.alms])
            fmax[sel] = fmax_mhz(d, share)
        return {
            "dsp": np.where(fpga, dsp, np.nan),
            "bram_mb": np.where(fpga, bram, np.nan),
            "logic": np.where(fpga, logic, np.nan),
            "fmax_mhz": np.where(fpga, fmax, np.nan),
        }

    def check_config(self, pts: Points) -> tuple[np.ndarray, np.ndarray]:
        """FPGA points must fit their device (DSP blocks, M20K bits, ALMs, board DRAM channels) and close timing
        at their clock; ASIC points' clock must not exceed the node's maximum."""
        n = batch_size(pts)
        if n == 1:
            reason = _point(pts).config_reason
            return np.array([reason == ""]), np.array([reason], dtype=object)
        reason = num.objects(n, "")
        r = self.resources(pts)
        fpga = pts["target"] == "fpga"
        clock = self._resolved(pts)["clock_mhz"].astype(float)
        if not fpga.all():  # the node's clock limit binds ASIC points only
            ok_asic, why_asic = tech.clock_check(clock, pts["tech_nm"])
            reason[~fpga & ~ok_asic] = why_asic[~fpga & ~ok_asic]
        fmax = r["fmax_mhz"]
        slow = fpga & (clock > fmax * (1 + 1e-9))
        if slow.any():
            reason[slow] = np.char.mod(_TIMING, fmax[slow]).astype(object)
        for dev_name in sorted(set(pts["device"][fpga].tolist())):
            dev = DEVICES[dev_name]
            sel = fpga & (pts["device"] == dev_name)
            limits = device_limits(dev, r["dsp"], r["bram_mb"], r["logic"], pts["dram_channels"])
            code = sum((over & sel).astype(int) << k for k, (over, _) in enumerate(limits))
            reason[code > 0] = ""  # device limits first
            for c in sorted(set(code[code > 0].tolist())):
                what = ", ".join(text for k, (_, text) in enumerate(limits) if c >> k & 1)
                reason[code == c] = f"exceeds the {dev.name}: {what}"
        return reason == "", reason

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        n = batch_size(pts)
        if n == 1:
            return _point(pts).totals(layers)
        pbs = pts["pb_rows"] * pts["pb_cols"]
        area, static = _nan(n), np.zeros(n)
        asic = pts["target"] == "asic"
        clock = self._resolved(pts)["clock_mhz"].astype(float)
        for (node, bits, is_asic), sel in groups(pts["tech_nm"], pts["bits"], asic):
            if not is_asic:
                continue
            vdd = tech.clock_costs(clock, pts["tech_nm"]).vdd_ratio  # (remembered: one computation per batch)
            parts = res.asic_area_parts_mm2(pbs[sel], pts["mults_per_pb"][sel], int(bits), int(node), clock[sel])
            area[sel] = parts["logic"] + parts["sram"]
            sram_kb = res.buffer_bits(pbs[sel], pts["bits"][sel]) / 8.0 / 1024.0
            static[sel] = tech.static_power_w(parts["logic"], sram_kb, int(node), vdd[sel])
        if not asic.all():  # FPGA points: the device's static power
            static = np.where(asic, static, _device_attr(pts, "static_w"))

        # layer by layer from zero (one stack for both keys when the layers stack): the same rounding for any batch
        sums = layer_sums(layers, _SUMMED, n, from_zero=True)
        return {
            "area_mm2": area,  # the FPGA is a fixed die: its cost is dsp / bram_mb / logic
            "hw_mac_units": (pbs * pts["mults_per_pb"]).astype(float),
            "static_power_w": static,
            **self.resources(pts),
            "mac_units": (pbs * pts["mults_per_pb"]).astype(float),
            **sums,
        }


#: the layer metrics and states of :func:`layer_costs`, in its order (then the bound flag)
_METRICS = ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j", "compute_cycles",
            "dram_cycles", "passes", "compute_energy_j", "sram_energy_j", "dram_energy_j")
_STATES = ("MAC", "TRANSFER", "DRAM_WAIT")
_VALUES = (*_METRICS, *_STATES, "dram_bound")
#: the FPGA resources (:meth:`RenaModel.resources`) and the layer metrics the totals sum
_RESOURCE_KEYS = ("dsp", "bram_mb", "logic", "fmax_mhz")
_SUMMED = ("compute_cycles", "dram_cycles", *ENERGY_PARTS)
_TIMING = "timing: clock above the %.0f MHz the design closes at"


@dataclass(slots=True)
class EnergyRates:
    """Energy per operation and per byte of a design point (arrays over points, or one point's Python floats;
    read-only by convention: not frozen, whose __init__ costs twice as much on the one-point path)."""

    mac_pj: np.ndarray | float  # one MAC
    add_pj: np.ndarray | float  # one pooling comparison (an add)
    sram_pj: np.ndarray | float  # a byte written into or read out of a buffer
    chip_scale: np.ndarray | float  # FPGA/ASIC dynamic-energy ratio on the FPGA, 1 on the ASIC
    vscale: np.ndarray | float  # the clock's (V / V_nom)^2 (ASIC), 1 (FPGA: fixed supply)
    dram_read_pj: np.ndarray | float  # a byte read from DRAM
    dram_write_pj: np.ndarray | float  # a byte written to DRAM


@dataclass(slots=True)
class Costing:
    """The numbers of a design point every layer's :func:`layer_costs` uses (arrays over points, or Python
    numbers of one point)."""

    pbs: np.ndarray | int
    mults: np.ndarray | int
    channels: np.ndarray | int  # DRAM channels
    burst: np.ndarray | float  # cycles a burst occupies its channel
    clock_hz: np.ndarray | float
    energy: EnergyRates
    #: one point: :func:`~archmodels.rena.dram.point_channels` of its (channels, mults), looked up once for all its
    #: layers (None: a batch, :func:`dram_cycles` per (channels, mults) pair)
    point_channels: tuple | None = None


def layer_costs(f: Flow, macs, pool_ops, c: Costing) -> tuple:
    """A layer's metrics (:data:`_METRICS`), states (:data:`_STATES`) and whether DRAM sets its pace, from its
    flow: ``max(compute, dram) + one burst`` cycles (module doc; spec §2-§3). Arrays over (layers x points), or
    one layer of one point in Python numbers.

    Energy: MACs + every DRAM byte written into and read out of a buffer (x the clock's (V / V_nom)^2) + DRAM
    [J]. Shifts between PB registers are not modelled; leakage is the model's static power. The DRAM part is
    ``tech.dram_energy_j`` of the rates. (Written here rather than in a function of its own: one call less per
    layer on the one-point path, issue 15.)
    """
    compute, mac, x_read, x_write, (w1, w2) = f.compute_cycles, f.mac_cycles, f.x_read_bytes, f.x_write_bytes, f.w_bytes
    burst = c.burst
    chans = c.point_channels
    if chans is None:
        dram = dram_cycles(x_read + x_write, w1, w2, c.channels, c.mults, burst)
        top = maximum(compute, dram)
    else:  # one point: its channels looked up once; num.maximum's expression on Python floats, without its call
        dram = point_dram_cycles(x_read + x_write, w1, w2, chans, burst)
        top = compute if compute > dram or compute != compute else dram
    cycles = top + burst
    read = x_read + w1 + w2
    write = x_write
    r = c.energy
    mac_pj = macs * r.mac_pj
    sram_pj = 2.0 * (read + write) * r.sram_pj
    pool_pj = pool_ops * r.add_pj  # zero for layers other than pooling
    chip = mac_pj + sram_pj
    chip = chip + pool_pj
    chip = chip * r.chip_scale
    dram_j = (read * r.dram_read_pj + write * r.dram_write_pj) * 1e-12
    energy = chip * r.vscale * 1e-12 + dram_j
    to_j = r.chip_scale * r.vscale * 1e-12  # the components: the same terms, apart
    return (cycles, cycles / c.clock_hz, macs / (cycles * c.pbs * c.mults), read, write, energy, compute, dram,
            f.passes, (mac_pj + pool_pj) * to_j, sram_pj * to_j, dram_j, mac, compute - mac, cycles - compute,
            dram > compute)


def device_limits(dev: FpgaDevice, dsp, bram_mb, logic, channels) -> tuple[tuple[Any, str], ...]:
    """(exceeded, what) of each limit of ``dev`` (arrays over points, or one point's numbers), in reason order."""
    return (
        (dsp > dev.dsp_blocks, f"DSP blocks ({dev.dsp_blocks})"),
        (bram_mb > dev.bram_mbit, f"block RAM ({dev.bram_mbit:.1f} Mbit)"),
        (logic > dev.alms, f"logic ({dev.alms} ALMs)"),
        (channels > dev.dram_channels, f"DRAM channels ({dev.dram_channels} on the {dev.board})"),
    )


@dataclass
class _Point:
    """One design point in Python numbers, parameters resolved (:data:`TARGET_DEFAULTS`): what a study's one-point
    evaluation costs its layers, checks its configuration and makes its totals with (each the formulas of the
    batch path on Python numbers, :mod:`archmodels.num`). Read-only by convention (remembered by :func:`_point`)."""

    fpga: bool
    device: FpgaDevice
    bits: int
    pbs: int
    mults: int
    channels: int
    tech_nm: int
    clock_mhz: float  # resolved
    cfg: ArrayConfig
    costing: Costing
    resources: dict[str, float]  # :data:`_RESOURCE_KEYS`, NaN for an ASIC point

    @cached_property
    def resource_arrays(self) -> dict[str, np.ndarray]:
        """:attr:`resources` as read-only one-point arrays (as :meth:`RenaModel.resources` hands out; an ASIC
        point's NaNs shared by all)."""
        return _read_only_arrays(self.resources) if self.fpga else _ASIC_RESOURCES

    @cached_property
    def config_reason(self) -> str:
        """Why the configuration is infeasible ("" if it is not): :meth:`RenaModel.check_config` of the point."""
        if not self.fpga:  # the node's clock limit
            return "" if self.clock_mhz <= node_max_clock_mhz(self.tech_nm) else clock_reason(self.tech_nm)
        r, dev = self.resources, self.device
        limits = device_limits(dev, r["dsp"], r["bram_mb"], r["logic"], self.channels)
        if any(over for over, _ in limits):  # device limits first
            return f"exceeds the {dev.name}: " + ", ".join(text for over, text in limits if over)
        return _TIMING % r["fmax_mhz"] if self.clock_mhz > r["fmax_mhz"] * (1 + 1e-9) else ""

    def vector_unit(self, tech_nm: int, dram_gbps: float, dram: str) -> vector.VectorUnit:
        """:meth:`RenaModel.vector_unit` of the point (Python numbers; the add's energy at the ASIC node parameter,
        as the array path takes it, also for FPGA points)."""
        cfg, c = self.cfg, self.costing
        clock_hz = c.clock_hz
        edge = cfg.rows * cfg.value_bytes * clock_hz * 2
        add_pj = _op_pj(self.bits, tech_nm)[1]
        if self.fpga:
            add_pj = add_pj * tech.FPGA_DYNAMIC_ENERGY_RATIO
        read_pj, write_pj = tech.dram_pj_per_byte(dram)
        return vector.VectorUnit("PB array", cfg.rows * cfg.cols * clock_hz, clock_hz, cfg.value_bytes,
                                 minimum(self.channels * dram_gbps * 1e9, edge), add_pj * c.energy.vscale,
                                 float(read_pj), float(write_pj))

    def totals(self, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        """:meth:`RenaModel.model_totals` of the point (one-point arrays)."""
        if self.fpga:  # the FPGA is a fixed die: its cost is dsp / bram_mb / logic; static power the device's
            area, static = np.nan, self.device.static_w
        else:
            parts = res.asic_area_parts_mm2(self.pbs, self.mults, self.bits, self.tech_nm, self.clock_mhz)
            area = parts["logic"] + parts["sram"]
            sram_kb = res.buffer_bits(self.pbs, self.bits) / 8.0 / 1024.0
            static = tech.static_power_w(parts["logic"], sram_kb, self.tech_nm, vdd_ratio(self.clock_mhz, self.tech_nm))
        macs = float(self.pbs * self.mults)
        sums = layer_sums(layers, _SUMMED, 1, from_zero=True)  # (one point's Python numbers: layerarrays.point_batches)
        mac_units = np.array([macs])
        mac_units.flags.writeable = False  # (the result's totals hand it out as it is: no read-only view made)
        return {"area_mm2": np.array([area], dtype=float), "hw_mac_units": np.array([macs]),
                "static_power_w": np.array([static], dtype=float), **self.resource_arrays,
                "mac_units": mac_units, **sums}


def _read_only_arrays(values: dict[str, float]) -> dict[str, np.ndarray]:
    """Each value as a read-only one-point array."""
    out = {}
    for k, v in values.items():
        out[k] = a = np.array([v])
        a.flags.writeable = False
    return out


_ASIC_RESOURCES = _read_only_arrays(dict.fromkeys(_RESOURCE_KEYS, np.nan))
#: the parameters a :class:`_Point` is made of, and the last few points made (keyed by those values)
_PARAM_NAMES = tuple(p.name for p in RenaModel.PARAMS)
_POINTS: dict[tuple, _Point] = {}
_item = np.ndarray.item
_POINTS_MAX = 8


def _point(pts: Points) -> _Point:
    """The :class:`_Point` of a one-point batch (remembered: feasibility, layers and totals each ask)."""
    key = tuple(map(_item, map(pts.__getitem__, _PARAM_NAMES)))  # each parameter's .item(), in C loops
    hit = _POINTS.get(key)
    if hit is None:
        if len(_POINTS) >= _POINTS_MAX:
            _POINTS.clear()  # (not the oldest entry alone: two threads could both pick it)
        _POINTS[key] = hit = _make_point(dict(zip(_PARAM_NAMES, key)))
    return hit


@lru_cache(maxsize=64)
def _op_pj(bits: int, node: int) -> tuple[float, float]:
    """(MAC, add) energy [pJ] of ``bits``-wide values at ``node`` (technology table) as Python floats: the numbers
    of the batch path's ``tech.per_point`` calls, looked up once per width and node (a trial asks once)."""
    dtype = tech.dtype_of(bits)
    return float(tech.mac_energy_pj(dtype, node)), float(tech.op_energy_pj("add", dtype, node))


def _make_point(v: dict[str, Any]) -> _Point:
    """:class:`_Point` of one point's parameter values: :meth:`RenaModel._resolve_auto`, :meth:`RenaModel._config`,
    :meth:`RenaModel._energy_rates` and :meth:`RenaModel._resources` on Python numbers."""
    target = v["target"]
    fpga = target == "fpga"
    dflt = TARGET_DEFAULTS["fpga" if fpga else "asic"]
    eff = {k: dflt[k] if v[k] == auto else v[k] for k, auto in _AUTO.items()}
    bits, rows, cols, mults = int(v["bits"]), int(v["pb_rows"]), int(v["pb_cols"]), int(v["mults_per_pb"])
    tech_nm, dev, pbs = int(v["tech_nm"]), DEVICES[v["device"]], rows * cols
    clock_mhz = float(eff["clock_mhz"])
    clock_hz = clock_mhz * 1e6
    cfg = ArrayConfig(rows, cols, mults, -(-bits // int(eff["transfer_bits"])),  # positional; ceil_div's expression
                      eff["array_ports"] == "shared", bits / 8.0)
    burst = burst_cycles(float(eff["dram_burst_cycles"]), float(v["dram_gbps"]), clock_hz)
    # on-chip energy scale of the clock (V^2, technology table); the FPGA's supply is fixed
    vscale = 1.0 if fpga else point_clock(clock_hz / 1e6, tech_nm).energy_scale
    node = dev.node_nm if fpga else tech_nm
    if node not in tech.NODES_NM:
        node = max(tech.NODES_NM)
    buffer_kb = res.buffer_bits(pbs, bits) / 8 / 1024 / res.N_BUFFERS
    dram = tech.DRAM_TYPES[v["dram"]]  # the rows of tech.dram_pj_per_byte
    energy = EnergyRates(*_op_pj(bits, node), tech.sram_energy_pj_per_byte(float(buffer_kb), node),
                         tech.FPGA_DYNAMIC_ENERGY_RATIO if fpga else 1.0, vscale,
                         dram.read_pj_per_byte, dram.write_pj_per_byte)
    channels = int(v["dram_channels"])
    costing = Costing(pbs, mults, channels, burst, clock_hz, energy, point_channels(channels, mults))
    if fpga:
        dsp = res.dsp_blocks(pbs, mults, bits, dev)
        bram = res.bram_mbit(pbs, bits)
        logic = float(round(res.logic_alms(pbs, mults, bits)))  # np.round: halves to even, as round()
        share = maximum(maximum(dsp / dev.dsp_blocks, bram / dev.bram_mbit), logic / dev.alms)
        resources = {"dsp": dsp, "bram_mb": bram, "logic": logic, "fmax_mhz": fmax_mhz(dev, share)}
    else:
        resources = dict.fromkeys(_RESOURCE_KEYS, np.nan)
    return _Point(fpga, dev, bits, pbs, mults, channels, tech_nm, clock_mhz, cfg, costing, resources)


_RESOLVED = PointsMemo(RenaModel._resolve_auto, ["target", *_AUTO])
_RESOURCES = PointsMemo(RenaModel._resources, ["pb_rows", "pb_cols", "mults_per_pb", "bits", "device", "target"])

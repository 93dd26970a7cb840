"""Atom-switch (via-switch) reconfigurable array: a fully spatial streaming CNN (spec `atom_switch.md`).

The array has one multiplier per tile (5,319 um^2, §1). A network is laid
out as circuits: per convolution one kh x kw MAC array with delay lines per
(output channel, input channel) pair plus an adder tree over input
channels, a streaming 2x2 max pool with an I/2-word line memory per
channel, and a column of MACs per FC layer (§2; mapping and dataflow in
:mod:`archmodels.atomswitch.layers`, circuit formulas and the register-level
reference in :mod:`archmodels.atomswitch.circuits`).

Cycles come from the circuit: stream length (one pixel per clock) per pass,
plus coefficient reloads when folded, plus the pipeline fill of the stages
after the last pixel (product and accumulate registers, adder-tree levels,
ReLU, two pooling comparators). For LeNet conv1+pool1 that is
784 + 2 + 2 = 788 clocks against the published 793 (§4).

Area: tiles (= multipliers) x ``tile_um2`` plus memory words (buffers, line
memories, delay lines, weight memories) x ``value_bits`` x
``memory_bit_um2``, times ``1 + overhead_frac`` for crossbar / I/O. The
whole network is resident, so the area it needs (``min_chip_area_mm2``) is
the sum over layers; a point is feasible when that fits ``chip_area_mm2``,
the chip whose silicon is the contract's ``area_mm2``. ``tiles_in_area`` is
the paper's count: chip area / tile area (§4).
"""

from __future__ import annotations

import numpy as np

from workloads import Workload

from .. import tech
from .. import vector
from .energy import DEVICE_NODE_NM, stages_energy_j, static_power_w
from .layers import Ctx, Stage, StageCost, conv_stage, fc_stage, plan, pool_stage, stage_groups
from ..base import Model
from ..layerarrays import column, full, layer_batches, stack_rows
from ..params import Param, Points, batch_size
from ..result import LayerBatch, Metric, layer_sums

#: Host fallback for vector layers (no such unit on the array): the spec's CPU reference
#: (atom_switch.md §3: Caffe on an Intel Core i5-6300U) ran the 500-element ReLU in 0.04 ms,
#: i.e. 12.5 M elementwise operations per second, framework overhead included.
HOST_OPS_PER_S = 500 / 0.04e-3
#: the i5-6300U's thermal design power (Intel ARK, 15 W), drawn while the host runs them
HOST_POWER_W = 15.0

#: Default area of one memory bit: a 28 nm high-density SRAM cell over the
#: array efficiency of the technology table (0.127 / 0.5 = 0.254 um^2).
DEFAULT_BIT_UM2 = float(tech.sram_area_mm2(1.0 / 8192.0, DEVICE_NODE_NM)) * 1e6

FOLD_POLICIES = ("balanced", "uniform")
WEIGHT_STORES = ("chip", "dram")


class AtomSwitchModel(Model):
    name = "atomswitch"
    title = "Atom-switch reconfigurable array (streaming conv + pool circuits)"
    spec = "atom_switch.md"
    SUPPORTS = ("conv", "pool", "fc", "vector")
    #: a spatial design: each layer is its own circuit and the network's area is planned over all of
    #: them, so a product's form (conv or FC circuit) is not a per-layer speed choice; matrix products
    #: of two activations are not run (the weights are programmed into the switches)
    GEMM_FORMS = False

    def vector_unit(self, pts: Points) -> vector.VectorUnit:
        """The atom-switch array has no vector unit: vector layers fall back to the host CPU
        at the rate and power of :data:`HOST_OPS_PER_S` / :data:`HOST_POWER_W`, streamed over DRAM."""
        clock_hz = pts["clock_mhz"] * 1e6
        return vector.VectorUnit("host CPU", HOST_OPS_PER_S, clock_hz, pts["value_bits"] / 8, pts["dram_gbps"] * 1e9,
                                 HOST_POWER_W / HOST_OPS_PER_S * 1e12, *tech.dram_pj_per_byte(pts["dram"]))
    VALIDATION_ALIASES = {"area_mm2": "chip_area_mm2"}
    AREA_ANCHOR = "the published tile: one multiplier per 5,319 um^2 tile (spec atom_switch.md §1, §4)"

    PARAMS = (
        Param("clock_mhz", "float", 100.0, 1, 1000, unit="MHz", doc="array clock (paper: 100 MHz)"),
        Param("tile_um2", "float", 5319.0, 100, 1e6, unit="um2",
              doc="area of one tile = one multiplier, crossbar overlaid (Hotate et al., FPL 2016; spec §1)"),
        Param("chip_area_mm2", "float", 100.0, 0.01, 1e6, unit="mm2",
              doc="chip area (budget): feasible when min_chip_area_mm2 fits; paper's examples 25 and 100"),
        Param("memory_bit_um2", "float", round(DEFAULT_BIT_UM2, 6), 0.001, 100, unit="um2",
              doc="area of one memory bit (assumption: 28 nm SRAM cell / array efficiency, tech table)"),
        Param("overhead_frac", "float", 0.0, 0, 10, unit="1",
              doc="crossbar / I-O area on top of tiles and memory (assumption: 0, crossbar is inside the tile)"),
        Param("value_bits", "choice", 16, choices=(8, 16, 32), unit="bit", doc="width of a data / coefficient word"),
        Param("pixels_per_clock", "int", 1, 1, 64, unit="px/clk",
              doc="input values streamed per clock per channel (paper: 1); circuits replicated that many times"),
        Param("dram_gbps", "float", 12.8, 0.1, 10000, unit="GB/s",
              doc="DRAM bandwidth for the network input, output and weight_store=dram"),
        Param("fold", "int", 1, 1, 65536, doc="folding factor: passes the largest layer is time-multiplexed over (1 = the paper's full parallelism)", knob=True),
        Param("fold_policy", "choice", "balanced", choices=FOLD_POLICIES,
              doc="balanced: other layers fold only to the largest one's multiplier count; uniform: every layer by fold",
              knob=True),
        Param("weight_store", "choice", "chip", choices=WEIGHT_STORES,
              doc="FC weights and folded conv coefficients: on-chip memory words or streamed from DRAM", knob=True),
        Param("dram", "choice", "ddr4", choices=tech.DRAM_NAMES,
              doc="external memory type for DRAM energy (technology table; assumption: DDR4)"),
    )
    LAYER_METRICS = (
        Metric("multipliers", "", "multipliers of the layer's circuits (= tiles)", integer=True),
        Metric("tiles", "", "tiles used (one multiplier per tile)", integer=True),
        Metric("memory_words", "words", "conv output buffer / pool line memory / FC weights+outputs / folded coefficients", integer=True),
        Metric("delay_words", "words", "delay-line registers of the conv circuits (not in the paper's memory count)", integer=True),
        Metric("area_mm2", "mm2", "tiles + memory + delay lines, with overhead_frac"),
        Metric("adders", "", "adders outside the MACs (channel trees, partial sums); not charged in area", integer=True),
        Metric("comparators", "", "pooling and ReLU comparators; not charged in area", integer=True),
        Metric("circuits", "", "physical circuits: conv (oc, ic) circuits, pool channels, FC neuron MACs", integer=True),
        Metric("passes", "", "passes the layer is folded over (1 = unfolded)", integer=True),
    )
    TOTAL_METRICS = (
        Metric("min_chip_area_mm2", "mm2", "chip area the whole network needs (sum of layer areas)", combine="max"),
        Metric("feasible", "1", "1 when min_chip_area_mm2 <= chip_area_mm2, else 0", integer=True, combine="min"),
        Metric("tiles_in_area", "", "tiles that fit chip_area_mm2: chip area / tile area (spec §4)", integer=True, combine="max"),
        Metric("tiles", "", "tiles the network uses", integer=True, combine="max"),
        Metric("multipliers", "", "multipliers of the network", integer=True, combine="max"),
        Metric("memory_words", "words", "memory words of the network (sum of the layers' memory_words)", integer=True, combine="max"),
        Metric("delay_words", "words", "delay-line registers of the network", integer=True, combine="max"),
    )

    # ---- layers ----
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        """Every stage of a role in one call (:func:`stage_groups`), arrays over (stages x points)."""
        stages = plan(workload)
        groups = stage_groups(workload)
        c = self._ctx(stages, pts)
        costs: dict[str, StageCost] = {}
        for role, g in groups.items():  # ROLES order: a fused pool's convolution is costed before it
            if role == "conv":
                costs[role] = conv_stage(g, c)
            elif role == "fc":
                costs[role] = fc_stage(g, c)
            else:
                costs[role] = pool_stage(g, c, costs["conv"] if role == "fused_pool" else None)
        row = [-1] * len(stages)
        for r, i in enumerate(i for g in groups.values() for i in g.index):
            row[i] = r
        rows = [g.rows for g in groups.values()]
        out = layer_batches([st.layer for st in stages], row, c.n,
                            self._metrics(list(costs.values()), rows, pts, c), {}) if costs else [None] * len(stages)
        for role, g in groups.items():
            states = {name: full(arr, (g.rows, c.n)) for name, arr in costs[role].states.items()}
            for j, i in enumerate(g.index):
                out[i].states = {name: arr[j] for name, arr in states.items()}
                if role == "fused_pool":
                    out[i].labels["fused_into"] = np.full(c.n, g.conv.names[j], dtype=object)
        for i, st in enumerate(stages):
            if out[i] is None:
                out[i] = self._unsupported(st, c.n)
        self._mark_fit(out, pts)
        self._utilization(out, c.n)
        return out

    @staticmethod
    def _metrics(costs: list[StageCost], rows: list[int], pts: Points, c: Ctx) -> dict[str, np.ndarray]:
        """The layer metrics of the stage groups ``costs`` (``rows`` stages each), arrays over (stages x points)."""
        def stack(get) -> np.ndarray:
            return stack_rows([get(cost) for cost in costs], rows, c.n, dtype=float)

        cycles = stack(lambda k: k.cycles)
        multipliers = stack(lambda k: k.multipliers)
        memory_words, delay_words = stack(lambda k: k.memory_words), stack(lambda k: k.delay_words)
        word_um2 = pts["value_bits"] * pts["memory_bit_um2"]
        area_um2 = multipliers * pts["tile_um2"] + (memory_words + delay_words) * word_um2
        return dict(
            cycles=cycles, time_s=cycles / c.clock_hz,
            utilization=np.full(cycles.shape, np.nan),  # set once all layers are known
            dram_read_bytes=stack(lambda k: k.dram_read_bytes), dram_write_bytes=stack(lambda k: k.dram_write_bytes),
            energy_j=stages_energy_j(costs, rows, pts["value_bits"], pts["dram"]),
            multipliers=multipliers, tiles=multipliers.copy(), memory_words=memory_words,
            delay_words=delay_words, area_mm2=area_um2 * (1.0 + pts["overhead_frac"]) * 1e-6,
            adders=stack(lambda k: k.adders), comparators=stack(lambda k: k.comparators),
            circuits=stack(lambda k: k.circuits), passes=stack(lambda k: k.passes),
        )

    @staticmethod
    def _utilization(layers: list[LayerBatch], n: int) -> None:
        """Busy multipliers / all multipliers of the resident network over each layer's time (contract)."""
        if not layers:
            return
        total = np.cumsum([lb.metrics["multipliers"] for lb in layers], axis=0)[-1]  # layer by layer
        cycles = np.array([lb.metrics["cycles"] for lb in layers])
        macs = column(lb.layer.macs for lb in layers)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.where(total > 0, macs / (cycles * total), 0.0)
        util = np.where(cycles > 0, u, np.where(np.isnan(cycles), np.nan, 0.0))
        for lb, row in zip(layers, util):
            lb.metrics["utilization"] = row

    @staticmethod
    def _ctx(stages: tuple[Stage, ...], pts: Points) -> Ctx:
        clock_hz = pts["clock_mhz"] * 1e6
        return Ctx(
            n=batch_size(pts), clock_hz=clock_hz, bytes_per_value=pts["value_bits"] / 8.0,
            ppc=pts["pixels_per_clock"], fold=pts["fold"], balanced=pts["fold_policy"] == "balanced",
            dram_weights=pts["weight_store"] == "dram",
            dram_bytes_per_cycle=pts["dram_gbps"] * 1e9 / clock_hz,
            max_multipliers=max((s.full_multipliers for s in stages), default=1),
        )

    @staticmethod
    def _unsupported(st: Stage, n: int) -> LayerBatch:
        """A layer kind the array does not run: no circuits; the base class marks it infeasible."""
        lb = LayerBatch(st.layer, n)
        nan, zero = np.full(n, np.nan), np.zeros(n)
        lb.set(cycles=nan, time_s=nan, utilization=nan, dram_read_bytes=nan, dram_write_bytes=nan, energy_j=nan,
               multipliers=zero, tiles=zero, memory_words=zero, delay_words=zero, area_mm2=zero,
               adders=zero, comparators=zero, circuits=zero, passes=zero)
        return lb

    @staticmethod
    def _mark_fit(layers: list[LayerBatch], pts: Points) -> None:
        """Infeasible where a layer alone, or the network up to a layer, exceeds ``chip_area_mm2``."""
        if not layers:
            return
        chip = pts["chip_area_mm2"]
        areas = np.array([lb.metrics["area_mm2"] for lb in layers])
        cum = np.cumsum(areas, axis=0)
        before = np.vstack([np.zeros((1, areas.shape[1])), cum[:-1]])
        alone = areas > chip
        overflow = (cum > chip) & (before <= chip) & ~alone
        for i in np.flatnonzero(alone.any(axis=1) | overflow.any(axis=1)):
            _infeasible(layers[i], alone[i], "this layer alone needs", areas[i], chip)
            _infeasible(layers[i], overflow[i], "the network up to this layer needs", cum[i], chip)

    # ---- totals ----
    #: layer metrics summed into model totals
    _SUMMED = ("area_mm2", "tiles", "multipliers", "memory_words", "delay_words")

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        n = batch_size(pts)

        # layer by layer from zero (one stack for all keys when the layers stack), so that a batch of one sums
        # in the same order as a large batch
        total = layer_sums(layers, self._SUMMED, n, from_zero=True)
        need = total["area_mm2"]
        chip = pts["chip_area_mm2"]
        mults, words = total["multipliers"], total["memory_words"] + total["delay_words"]
        return {
            "area_mm2": chip.astype(float),
            "hw_mac_units": mults,
            "static_power_w": static_power_w(mults, words, pts["value_bits"]),
            "min_chip_area_mm2": need,
            "feasible": (need <= chip).astype(float),
            "tiles_in_area": np.floor(chip * 1e6 / pts["tile_um2"] + 1e-9),
            **{k: total[k] for k in ("tiles", "multipliers", "memory_words", "delay_words")},
        }


def _infeasible(lb: LayerBatch, mask: np.ndarray, what: str, need: np.ndarray, chip: np.ndarray) -> None:
    """Mark ``mask`` infeasible; reason strings are formatted only for the points that get them."""
    new = mask & lb.feasible
    if not new.any():
        return
    reason = np.full(lb.n, "", dtype=object)
    reason[new] = [f"{what} %.4g mm2 > chip_area_mm2 %.4g" % (x, y) for x, y in zip(need[new].tolist(), chip[new].tolist())]
    lb.infeasible(new, reason)

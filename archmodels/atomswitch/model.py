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

import math
from functools import cached_property

import numpy as np

from workloads import Workload

from .. import num, tech
from .. import vector
from .energy import DEVICE_NODE_NM, energy_rates, point_sram_pj, stage_energy_j, stages_energy_j, static_power_w
from .layers import Ctx, Stage, StageCost, group_costs, point_costs, stack_groups, tables
from ..base import Model
from ..params import Param, Points, batch_size
from ..result import ENERGY_PART_TOTALS, ENERGY_PARTS, LayerBatch, Metric, layer_sums

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
    DOC_PAGE = "docs/models/atomswitch.md"
    STATE_DOCS = {  # docs/models/atomswitch.md, "Cycles"
        "STREAM": "pixels streamed through the circuit, passes x ceil(pixels / pixels per clock)",
        "LOAD": "coefficient reloads of a folded convolution before every pass",
        "DRAM_STALL": "clocks a pass waits because DRAM cannot deliver its bytes in the stream time",
        "FILL": "pipeline stages after the last pixel",
    }
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
        Metric("compute_energy_j", "J", "MACs, adds and comparisons (technology table at the device node)"),
        Metric("sram_energy_j", "J", "accesses to the stage memories (conv output buffers, pool line memories, FC weights and outputs, folded coefficients)"),
        Metric("dram_energy_j", "J", "DRAM reads and writes (technology-table row `dram`)"),
    )
    TOTAL_METRICS = (
        Metric("min_chip_area_mm2", "mm2", "chip area the whole network needs (sum of layer areas)", combine="max"),
        Metric("feasible", "1", "area fit, not the point's feasibility: 1 when min_chip_area_mm2 <= "
               "chip_area_mm2, else 0; a layer the array does not run (matmul, sparse) adds no area and makes the "
               "point's top-level feasible false whatever this says", integer=True, combine="min"),
        Metric("tiles_in_area", "", "tiles that fit chip_area_mm2: chip area / tile area (spec §4)", integer=True, combine="max"),
        Metric("tiles", "", "tiles the network uses", integer=True, combine="max"),
        Metric("multipliers", "", "multipliers of the network", integer=True, combine="max"),
        Metric("memory_words", "words", "memory words of the network (sum of the layers' memory_words)", integer=True, combine="max"),
        Metric("delay_words", "words", "delay-line registers of the network", integer=True, combine="max"),
        *ENERGY_PART_TOTALS,
    )

    # ---- layers ----
    def evaluate_layers(self, workload: Workload, pts: Points) -> list[LayerBatch]:
        """Every stage of a role in one call (:func:`stage_groups`), arrays over (stages x points), stacked into
        one array per metric; a single point stage by stage in Python numbers (:func:`stage_rows`: a numpy call
        costs ~20 Python operations), its metrics put into one array at the end. The same formulas either way."""
        t = tables(workload)
        stages, order = t.stages, t.order
        c = self._ctx(t.max_multipliers, pts)
        out: list[LayerBatch | None] = [None] * len(stages)
        if order.index:  # some stage runs on the array
            sizes = None
            if c.one:
                costs = point_costs(t.rows, c)
                metrics, sizes = self._point_metrics(costs, pts, c, order.macs_list)
                areas = [s[0] for s in sizes]
            else:
                costs = group_costs(t.groups, c)
                fields = stack_groups(costs, order.positions, len(order.index), c.n)
                metrics = _row_dicts(self._metrics(fields, pts, c, order.macs, order.plan_rows))
                areas = fields["area_mm2"] if order.plan_rows is None else fields["area_mm2"][order.plan_rows]
            out = _stage_batches(stages, costs, metrics, c.n, sizes)
            self._mark_fit([out[i] for i in order.index], areas, pts["chip_area_mm2"])
        for i, st in enumerate(stages):
            if out[i] is None:
                out[i] = self._unsupported(st, c.n)
        return out

    @staticmethod
    def _metrics(f: dict[str, np.ndarray], pts: Points, c: Ctx, macs: np.ndarray,
                 plan_rows: np.ndarray | None) -> dict[str, np.ndarray]:
        """The layer metrics (:data:`_METRICS`) from the stacked stage costs ``f`` (arrays over stages x points;
        ``plan_rows``: its rows in plan order, None when in plan order); puts the stages' ``area_mm2`` into ``f``
        too (for :meth:`_mark_fit`)."""
        cycles, multipliers = f["cycles"], f["multipliers"]
        word_um2 = pts["value_bits"] * pts["memory_bit_um2"]
        f["area_mm2"] = area = area_mm2(multipliers, f["memory_words"], f["delay_words"], pts["tile_um2"], word_um2,
                                        pts["overhead_frac"])
        in_plan = multipliers if plan_rows is None else multipliers[plan_rows]
        total = np.add.accumulate(in_plan, axis=0)[-1]  # layer by layer (an unsupported layer has none)
        energy, compute_j, sram_j, dram_j = stages_energy_j(
            f["mac_ops"], f["add_ops"], f["compare_ops"], f["sram_words"], f["sram_bank_words"],
            f["dram_read_bytes"], f["dram_write_bytes"], pts["value_bits"], pts["dram"])
        return dict(zip(_METRICS, (
            cycles, cycles / c.clock_hz, utilization(macs, cycles, total), f["dram_read_bytes"],
            f["dram_write_bytes"], energy, multipliers, multipliers.copy(), f["memory_words"], f["delay_words"], area,
            f["adders"], f["comparators"], f["circuits"], f["passes"],
            *(x if np.shape(x) == cycles.shape else np.full(cycles.shape, x)  # (no SRAM slot at all: 0.0)
              for x in (compute_j, sram_j, dram_j)))))

    @staticmethod
    def _point_metrics(costs: list[StageCost], pts: Points, c: Ctx,
                       macs: tuple[int, ...]) -> tuple[list[dict[str, np.ndarray]], list[_Sizes]]:
        """:meth:`_metrics` of one point from its stage costs (Python numbers, plan order), the same formulas on
        Python floats (each cost made a float first, as stacking makes it a float64): per stage its metrics as
        arrays of one point; and per stage its (area_mm2, multipliers, memory_words, delay_words) as the Python
        floats those arrays hold (:func:`_point_sizes`)."""
        tile_um2, overhead = pts["tile_um2"].item(0), pts["overhead_frac"].item(0)
        word_um2 = pts["value_bits"].item(0) * pts["memory_bit_um2"].item(0)
        rates = energy_rates(pts["value_bits"], pts["dram"])
        sram_pj = point_sram_pj([a.bank_words for k in costs for a in k.sram], rates.nbytes)
        total = 0.0
        for k in costs:
            total = total + float(k.multipliers)
        rows, sizes, at = [], [], 0
        for k, m in zip(costs, macs):
            cycles, mult, words = float(k.cycles), float(k.multipliers), float(k.memory_words)
            delay, rd, wr = float(k.delay_words), float(k.dram_read_bytes), float(k.dram_write_bytes)
            area = area_mm2(mult, words, delay, tile_um2, word_um2, overhead)
            slots = len(k.sram)  # the padded slots of the stacked path add exact zeros
            energy, compute_j, sram_j, dram_j = stage_energy_j(
                float(k.mac_ops), float(k.add_ops), float(k.compare_ops), [float(a.words) for a in k.sram],
                sram_pj[at:at + slots], rd, wr, rates)
            at += slots
            rows.append((cycles, cycles / c.clock_hz, utilization(m, cycles, total), rd, wr, energy, mult, mult,
                         words, delay, area, k.adders, k.comparators, k.circuits, k.passes, compute_j, sram_j, dram_j))
            sizes.append((area, mult, words, delay, compute_j, sram_j, dram_j))
        block = np.array(rows, dtype=float).reshape(len(rows), len(_METRICS), 1)
        return [dict(zip(_METRICS, b)) for b in block], sizes

    @staticmethod
    def _ctx(max_multipliers: int, pts: Points) -> Ctx:
        """The per-point inputs of the stage formulas: Python numbers for a single point (the one-point path)."""
        n = batch_size(pts)
        if n == 1:
            clock_hz = pts["clock_mhz"].item() * 1e6
            dram_weights = pts["weight_store"].item() == "dram"
            return Ctx(
                n=1, clock_hz=clock_hz, bytes_per_value=pts["value_bits"].item() / 8.0,
                ppc=int(pts["pixels_per_clock"].item()), fold=int(pts["fold"].item()),
                balanced=pts["fold_policy"].item() == "balanced", dram_weights=dram_weights,
                chip_weights=not dram_weights, dram_bytes_per_cycle=pts["dram_gbps"].item() * 1e9 / clock_hz,
                max_multipliers=max_multipliers,
            )
        clock_hz = pts["clock_mhz"] * 1e6
        dram_weights = pts["weight_store"] == "dram"
        return Ctx(
            n=n, clock_hz=clock_hz, bytes_per_value=pts["value_bits"] / 8.0,
            ppc=pts["pixels_per_clock"], fold=pts["fold"], balanced=pts["fold_policy"] == "balanced",
            dram_weights=dram_weights, chip_weights=~dram_weights,
            dram_bytes_per_cycle=pts["dram_gbps"] * 1e9 / clock_hz,
            max_multipliers=max_multipliers, ones=np.ones(n), int_ones=np.ones(n, dtype=np.int64),
        )

    @staticmethod
    def _unsupported(st: Stage, n: int) -> LayerBatch:
        """A layer kind the array does not run: no circuits; the base class marks it infeasible."""
        lb = LayerBatch(st.layer, n)
        nan, zero = np.full(n, np.nan), np.zeros(n)
        lb.set(cycles=nan, time_s=nan, utilization=nan, dram_read_bytes=nan, dram_write_bytes=nan, energy_j=nan,
               multipliers=zero, tiles=zero, memory_words=zero, delay_words=zero, area_mm2=zero,
               adders=zero, comparators=zero, circuits=zero, passes=zero, compute_energy_j=nan, sram_energy_j=nan,
               dram_energy_j=nan)
        return lb

    @staticmethod
    def _mark_fit(layers: list[LayerBatch], areas: np.ndarray | list[float], chip: np.ndarray) -> None:
        """Infeasible where a layer alone, or the network up to a layer, exceeds ``chip_area_mm2``.

        ``layers``: the supported layers in plan order, ``areas`` theirs (stages x points, or one point's list;
        an unsupported layer has no area, so it neither adds to the running sum nor overflows)."""
        if type(areas) is list:  # one point: the same comparisons and running sum in Python
            chip_mm2 = chip.item(0)
            before = 0.0
            for lb, area in zip(layers, areas):
                cum = before + area
                if area > chip_mm2:
                    _infeasible_one(lb, "this layer alone needs %.4g mm2 > chip_area_mm2 %.4g" % (area, chip_mm2))
                elif cum > chip_mm2 and before <= chip_mm2:
                    _infeasible_one(lb, "the network up to this layer needs %.4g mm2 > chip_area_mm2 %.4g"
                                    % (cum, chip_mm2))
                before = cum
            return
        cum = np.add.accumulate(areas, axis=0)
        alone = areas > chip
        over = cum > chip
        if not (alone.any() or over.any()):
            return  # everything fits (the running sum is largest at the last layer)
        before = np.vstack([np.zeros((1, areas.shape[1])), cum[:-1]])
        overflow = over & (before <= chip) & ~alone
        flagged = alone | overflow
        # the chip area as text once per point that gets a reason (a point often gets one from several layers)
        chip_text = num.objects(chip.shape, "")
        some = flagged.any(axis=0)
        chip_text[some] = ["%.4g" % y for y in chip[some].tolist()]
        for i in np.flatnonzero(flagged.any(axis=1)).tolist():
            _infeasible(layers[i], alone[i], "this layer alone needs", areas[i], chip_text)
            _infeasible(layers[i], overflow[i], "the network up to this layer needs", cum[i], chip_text)

    # ---- totals ----
    #: layer metrics summed into model totals
    _SUMMED = ("area_mm2", "tiles", "multipliers", "memory_words", "delay_words", *ENERGY_PARTS)

    def model_totals(self, workload: Workload, pts: Points, layers: list[LayerBatch]) -> dict[str, np.ndarray]:
        n = batch_size(pts)
        sizes = _point_sizes(layers) if n == 1 else None
        if sizes is not None:  # one point, every layer a stage of it: the same sums and formulas on Python floats
            return self._point_totals(pts, *sizes)

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
            "tiles_in_area": _tiles_in_area(pts),
            **{k: total[k] for k in ("tiles", "multipliers", "memory_words", "delay_words", *ENERGY_PARTS)},
        }

    @staticmethod
    def _point_totals(pts: Points, need: float, mults: float, words: float, delay: float, compute_j: float,
                      sram_j: float, dram_j: float) -> dict[str, np.ndarray]:
        """:meth:`model_totals` of one point from its layers' summed sizes (:func:`_point_sizes`): the same
        values (Python floats are float64), each total a (1,) view of one array; ``tiles_in_area`` as a batch's."""
        chip_mm2 = pts["chip_area_mm2"].item(0)
        power = static_power_w(mults, words + delay, pts["value_bits"].item(0))
        block = np.array([chip_mm2, mults, power, need, 1.0 if need <= chip_mm2 else 0.0, mults, words, delay,
                          compute_j, sram_j, dram_j])
        block.flags.writeable = False  # (the result's totals hand them out as they are: no read-only views made)
        area, hw, static, need_a, feasible, tiles, words_a, delay_a, *parts = block.reshape(-1, 1)
        return {
            "area_mm2": area,
            "hw_mac_units": hw,
            "static_power_w": static,
            "min_chip_area_mm2": need_a,
            "feasible": feasible,
            "tiles_in_area": _tiles_in_area(pts),
            "tiles": tiles, "multipliers": hw, "memory_words": words_a, "delay_words": delay_a,
            **dict(zip(ENERGY_PARTS, parts)),
        }


def _tiles_in_area(pts: Points) -> np.ndarray:
    """Tiles that fit ``chip_area_mm2`` (spec §4): chip area / tile area, rounded down."""
    return np.floor(pts["chip_area_mm2"] * 1e6 / pts["tile_um2"] + 1e-9)


#: a stage's (area_mm2, multipliers, memory_words, delay_words, compute_energy_j, sram_energy_j, dram_energy_j) on
#: the one-point path, as its metrics hold them
_Sizes = tuple[float, float, float, float, float, float, float]


def _point_sizes(layers: list[LayerBatch]) -> _Sizes | None:
    """The sums over ``layers`` (one point) of area_mm2, multipliers (= tiles), memory_words, delay_words and the
    three energy parts, layer by layer from zero as :func:`layer_sums`, from the Python floats each one-point stage
    keeps (``_sizes``, :func:`_stage_batches`); None when some layer has none (an unsupported or vector layer)."""
    need = mults = words = delay = compute_j = sram_j = dram_j = 0.0
    for lb in layers:
        s = lb.__dict__.get("_sizes")
        if s is None:
            return None
        need = need + s[0]
        mults = mults + s[1]
        words = words + s[2]
        delay = delay + s[3]
        compute_j = compute_j + s[4]
        sram_j = sram_j + s[5]
        dram_j = dram_j + s[6]
    return need, mults, words, delay, compute_j, sram_j, dram_j


#: the layer metrics of a stage, in the order its LayerBatch holds them
_METRICS = ("cycles", "time_s", "utilization", "dram_read_bytes", "dram_write_bytes", "energy_j", "multipliers",
            "tiles", "memory_words", "delay_words", "area_mm2", "adders", "comparators", "circuits", "passes",
            "compute_energy_j", "sram_energy_j", "dram_energy_j")


def area_mm2(multipliers, memory_words, delay_words, tile_um2, word_um2, overhead_frac):
    """Area of a stage [mm2]: tiles (one multiplier each) plus memory and delay-line words, times
    ``1 + overhead_frac`` (module doc; spec §1, §4). Python floats or arrays."""
    area_um2 = multipliers * tile_um2 + (memory_words + delay_words) * word_um2
    return area_um2 * (1.0 + overhead_frac) * 1e-6


def utilization(macs, cycles, total_multipliers):
    """Busy multipliers / all multipliers of the resident network over the stage's time (contract): MACs /
    (cycles x the network's multipliers); 0 without multipliers or cycles, NaN for NaN cycles. Python floats
    (one stage of one point) or arrays over (stages x points)."""
    if type(cycles) is float:
        if cycles > 0:
            return macs / (cycles * total_multipliers) if total_multipliers > 0 else 0.0
        return math.nan if math.isnan(cycles) else 0.0
    if (total_multipliers > 0).all() and (cycles > 0).all():
        return macs / (cycles * total_multipliers)  # what the expression below gives, without its masks
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(total_multipliers > 0, macs / (cycles * total_multipliers), 0.0)
    return np.where(cycles > 0, u, np.where(np.isnan(cycles), np.nan, 0.0))


def _infeasible(lb: LayerBatch, mask: np.ndarray, what: str, need: np.ndarray, chip_text: np.ndarray) -> None:
    """Mark ``mask`` infeasible; reason strings are formatted only for the points that get them (``chip_text``:
    each point's ``chip_area_mm2`` as ``%.4g`` text)."""
    new = mask & lb.feasible
    if not new.any():
        return
    reason = num.objects(lb.n, "")
    template = what + " %.4g mm2 > chip_area_mm2 %s"
    reason[new] = [template % pair for pair in zip(need[new].tolist(), chip_text[new].tolist())]
    lb.infeasible(new, reason)


def _infeasible_one(lb: LayerBatch, reason: str) -> None:
    """``lb.infeasible`` of a one-point layer's only point: the first reason wins (Python, no mask arrays)."""
    feasible = lb.feasible
    if feasible[0]:
        lb.reason[0] = reason
        feasible[0] = False


class _StageBatch(LayerBatch):
    """A stage's :class:`LayerBatch`: its ``states`` (and ``fused_into`` label) built from its stage cost on first
    access on the one-point path (a study never reads them), then ordinary attributes. A batch builds them with
    the layer: their allocation then keeps glibc from trimming the heap at the end of the call and faulting it in
    again on the next (measured, lenet, 16,384 points: ~7,000 -> ~450 page faults, 3.4 -> 2.4 us per point)."""

    _src: tuple[dict, int, int, str | None]  # (the stage cost's states, its rows, this stage's row, fused into)

    @cached_property
    def states(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        states, rows, j, _ = self._src
        if self.n == 1 and rows == 1:  # one point: the stage's Python numbers (np.broadcast_to costs ~5 us)
            return {name: np.array([value], dtype=float).reshape(1) for name, value in states.items()}
        return {name: np.broadcast_to(np.asarray(arr, dtype=float), (rows, self.n))[j].copy()
                for name, arr in states.items()}

    @cached_property
    def labels(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        return {"fused_into": num.objects(self.n, self._src[3])}


def _row_dicts(metrics: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Per row of the (stages x points) ``metrics``: its metrics (views)."""
    metric_rows = [(k, list(a)) for k, a in metrics.items()]  # every array's rows as views, made once
    return [{k: v[r] for k, v in metric_rows} for r in range(len(metric_rows[0][1]))]


def _stage_batches(stages: tuple[Stage, ...], costs: list[StageCost], metrics: list[dict[str, np.ndarray]],
                   n: int, sizes: list[_Sizes] | None = None) -> list[LayerBatch | None]:
    """One :class:`_StageBatch` per supported stage (None for the others) holding the metrics of its row (the
    stages of ``costs`` in order), and writable ``feasible`` / ``reason`` rows (as :meth:`LayerBatch.infeasible`
    updates them in place). One point: each also keeps its row of ``sizes`` (``_sizes``, for
    :func:`_point_sizes`; the metrics are not changed before :meth:`AtomSwitchModel.model_totals` reads it)."""
    rows = len(metrics)
    feasible = list(np.ones((rows, n), dtype=bool))
    reason = list(num.objects((rows, n), ""))
    out: list[LayerBatch | None] = [None] * len(stages)
    new = object.__new__
    r = -1
    for k in costs:
        for j, i in enumerate(k.index):
            r += 1
            lb = new(_StageBatch)  # the fields LayerBatch.__init__ would set, but states and labels (lazy)
            lb.__dict__.update(layer=stages[i].layer, n=n, metrics=metrics[r],
                               feasible=feasible[r], reason=reason[r],
                               _src=(k.states, k.rows, j, k.fused_into[j] if k.fused_into is not None else None))
            if sizes is not None:
                lb._sizes = sizes[r]
            elif n > 1:  # a batch: built now (see the class doc)
                lb.states, lb.labels  # cached properties: computed and kept
            out[i] = lb
    return out

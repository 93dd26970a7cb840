"""Issue 15, twelfth round: multicore's one-point path (a study's trial) after restructuring its per-layer formulas
into equivalent ones gives the very bits of the round-11 forms, and each point alone the very numbers of the batch.

What changed (archmodels/multicore/model.py): the products that depend on a layer alone are made once per layer in
its table (:func:`fc_shape`: repetitions, weights, partial sums per core; :func:`pool_shape`: window elements;
``fm_elems``: input + output feature maps), integer products taken in another order (exact: no int64 overflow at
these sizes); the one-point rows hold a layer's sizes as floats, and the configuration its fill cycles and MAC units
as floats (they only ever meet floats); the energy's ``steps x ni`` is made once; the configuration is built
positionally. The round-11 forms are kept below as the oracles, verbatim.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model, tech
from archmodels.multicore import model as MC
from archmodels.num import max_of, minimum, where  # the oracles' helpers
from archmodels.testing import assert_alone_equals_batch
from workloads import load_workload

M = get_model("multicore")


# ---- the oracles: the round-11 forms (08d1ea0), verbatim but for their docstrings ----
def _old_fc_counts(inputs, neurons, vectors, groups, k) -> tuple:
    """The round-11 form (the oracle): ``fc_counts`` as it stood at 08d1ea0."""
    # Ceiling divisions are written -(-a // b) (exact on ints and int arrays alike, no helper call: issue 15), and
    # the placement's choices are read from the Config's per-point splits (dividing by 1 keeps a value).
    cores, is_t2 = k.cores, k.is_t2
    # inputs / neurons handled by the busiest core: inputs split over the cores by T2 / TR2, neurons by T1 / TR1
    in_vals = -(-inputs // k.in_split)
    out_vals = -(-neurons // k.out_split)
    in_ch = -(-in_vals // k.ni)
    out_ch = -(-out_vals // k.no)
    active = where(k.is_b, 1, minimum(cores, where(is_t2, inputs, neurons)))
    misses = MC._cyclic_misses(in_ch, out_ch, k.reuse_entries)  # no reuse: no group fits (-1 entries), all read
    reads = misses + out_ch  # + one head read per output chunk
    writes = out_ch
    owned = -(-neurons // cores // k.no) * is_t2  # T2: the output chunks of a core's ceil(neurons / cores); else 0
    reps = vectors * groups
    merge = owned * reps
    gather = owned * cores * reps
    return (reads * reps, writes * reps, in_ch * out_ch * reps,  # reads, writes, nfu
            merge, merge, gather, gather,  # the T2 merge
            active, misses * reps, inputs * neurons * groups,  # active, in_chunk_reads, weight_elems
            in_vals * out_vals * groups,  # weights_per_core (B: all; T1: its neurons' share; T2: its inputs' share)
            k.psum_cores * neurons * vectors * groups)  # psum_elems (T2 / TR2 only)


def _old_pool_counts(input_elems, output_elems, channels, kernel, k) -> tuple:
    """The round-11 form (the oracle): ``pool_counts`` as it stood at 08d1ea0."""
    active = where(k.is_b, 1, minimum(k.cores, channels))
    in_ch = -(-input_elems // active // k.ni)  # ceil(ceil(input_elems / active) / ni), as in fc_counts
    out_ch = -(-output_elems // active // k.no)
    return in_ch, out_ch, out_ch * kernel * kernel, 0, 0, 0, 0, active, in_ch, 0, 0, 0


def _old_layer_costs(c: tuple, input_elems, output_elems, macs, pool_ops, rows, in_rows, halo, k):
    """The round-11 form (the oracle): ``layer_costs`` as it stood at 08d1ea0."""
    (reads, writes, nfu, merge_reads, merge_writes, merge_psum_reads, merge_nfu, active, in_chunk_reads,
     weight_elems, weights_per_core, psum_elems) = c
    vbytes, out_chunk_b = k.vbytes, k.out_chunk_b
    core_rd_b = in_chunk_reads * k.in_chunk_b + (reads - in_chunk_reads) * out_chunk_b
    core_wr_b = writes * out_chunk_b
    merge_rd_b = (merge_reads + merge_psum_reads) * out_chunk_b
    merge_wr_b = merge_writes * out_chunk_b

    # weights that do not fit a core's WB stream from DRAM every inference
    spill = weights_per_core * vbytes > k.wb_bytes
    # SHM holds the layer's input and output feature maps (+ T2 partial sums); when they do
    # not fit, the layer runs in tiles staged through SHM from and to DRAM (shm_tiles)
    need_kb = (input_elems + output_elems + psum_elems) * vbytes / 1024.0
    tiles, fm_rd, fm_wr, tile_ok = MC._FITS if (need_kb <= k.shm_kb) is True else MC.shm_tiling_of(  # (no call: it fits)
        input_elems, output_elems, rows, in_rows, halo, need_kb, k.shm_kb, vbytes)
    dram_rd = weight_elems * vbytes * spill + fm_rd  # x * False: 0.0 (x >= 0), x * True: x, as np.where
    compute = max_of(
        (reads + writes) / k.ports,
        nfu,
        active * (core_rd_b + core_wr_b) / k.noc_bpc,
        (dram_rd + fm_wr) / k.dram_bpc,
    ) + k.fill
    has_merge = merge_reads > 0
    merge = 0.0 if has_merge is False else where(has_merge, max_of(  # (a layer of one point without merge: 0.0)
        (merge_reads + merge_psum_reads + merge_writes) / k.ports,
        merge_nfu,
        active * (merge_rd_b + merge_wr_b) / k.noc_bpc,
    ) + k.fill, 0.0)
    cycles = compute + merge
    shm_rd = active * (core_rd_b + merge_rd_b)
    shm_wr = active * (core_wr_b + merge_wr_b)
    # on-chip dynamic energy at nominal supply [pJ]: MACs + IB/WB/OB accesses per NFU step + SHM bytes
    ni, no = k.ni, k.no
    steps = nfu * active
    e = macs * k.mac_pj
    e = e + merge_nfu * active * no * k.add_pj
    e = e + pool_ops * k.add_pj  # zero for layers other than pooling
    e = e + steps * ni * vbytes * k.ib_pj
    e = e + steps * ni * no * vbytes * k.wb_pj * (weight_elems > 0)
    e = e + steps * no * vbytes * k.ob_pj
    e = e + (shm_rd + shm_wr) * k.shm_pj
    energy_j = (e * k.vscale * 1e-12
                + (dram_rd * k.dram_read_pj + fm_wr * k.dram_write_pj) * 1e-12)  # tech.dram_energy_j
    values = (cycles, cycles / k.clock_hz, macs / (cycles * k.mac_units), dram_rd, fm_wr, energy_j, tiles,
              reads + merge_reads, writes + merge_writes, merge_psum_reads, nfu + merge_nfu, shm_rd, shm_wr, active,
              compute, merge)
    return values, tile_ok, need_kb



def _old_config(pts):
    """The round-11 form (the oracle): ``config`` as it stood at 08d1ea0 (keywords; fill and MAC units ints)."""
    one = MC.batch_size(pts) == 1
    p = {k: v.item(0) for k, v in pts.items()} if one else pts
    policies = {p["ib_policy"]} if one else set(pts["ib_policy"].tolist())
    if not policies <= set(MC.IB_POLICIES):
        raise ValueError(f"unknown IB policy {sorted(policies - set(MC.IB_POLICIES))[0]}")
    cores, ni, no = p["cores"], p["ni"], p["no"]
    pl = p["placement"]
    vbytes = p["value_bits"] / 8.0
    clock_hz = p["clock_mhz"] * 1e6
    ib_kb = p["input_buffer_entries"] * ni * vbytes / 1024
    ob_kb = p["output_buffer_entries"] * no * vbytes / 1024
    bits, node = p["value_bits"], p["tech_nm"]
    if one:  # the technology table's numbers of the one node and width
        vscale = MC.point_clock(p["clock_mhz"], node).energy_scale
        dram = tech.DRAM_TYPES[p["dram"]]  # the row tech.dram_pj_per_byte reads
        dram_read_pj, dram_write_pj = dram.read_pj_per_byte, dram.write_pj_per_byte
        mac_pj, add_pj = MC._op_pj(bits, node)
        ib_pj, ob_pj, wb_pj, shm_pj = (tech.sram_energy_pj_per_byte(float(kb), node)  # Python floats: as an array
                                       for kb in (ib_kb, ob_kb, p["weight_buffer_kb"], p["shm_kb"]))
    else:
        vscale = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"]).energy_scale  # the memo of check_config's call
        dram_read_pj, dram_write_pj = tech.dram_pj_per_byte(pts["dram"])
        mac_pj = tech.per_point(lambda b, nd: tech.mac_energy_pj(tech.dtype_of(b), nd), bits, node)
        add_pj = tech.per_point(lambda b, nd: tech.op_energy_pj("add", tech.dtype_of(b), nd), bits, node)
        ib_pj, ob_pj, wb_pj, shm_pj = (MC.per_node(tech.sram_energy_pj_per_byte, kb, node)
                                       for kb in (ib_kb, ob_kb, p["weight_buffer_kb"], p["shm_kb"]))
    is_b, is_t2 = pl == "B", (pl == "T2") | (pl == "TR2")
    reuse, entries = (pl == "TR1") | (pl == "TR2") | p["input_reuse"], p["input_buffer_entries"]
    return MC.Config(
        cores=cores, ni=ni, no=no, is_b=is_b, is_t2=is_t2, in_split=where(is_t2, cores, 1),
        out_split=where(is_t2 | is_b, 1, cores), psum_cores=where(is_t2, cores, 0),
        reuse=reuse, entries=entries, reuse_entries=where(reuse, entries, -1),
        vbytes=vbytes, in_chunk_b=ni * vbytes, out_chunk_b=no * vbytes, ports=p["mem_ports"] * 1.0,
        noc_bpc=p["noc_gbps"] * 1e9 / clock_hz, dram_bpc=p["dram_gbps"] * 1e9 / clock_hz,
        fill=p["noc_latency_cycles"] + p["mem_latency_cycles"] + MC.NFU_PIPELINE_STAGES,
        wb_bytes=p["weight_buffer_kb"] * 1024.0, shm_kb=p["shm_kb"], clock_hz=clock_hz, mac_units=cores * ni * no,
        mac_pj=mac_pj, add_pj=add_pj, ib_pj=ib_pj, ob_pj=ob_pj, wb_pj=wb_pj, shm_pj=shm_pj, vscale=vscale,
        dram_read_pj=dram_read_pj, dram_write_pj=dram_write_pj,
    )


# ---- helpers ----
#: the energy parts (compute, SRAM, DRAM) added after the round-11 metrics on 2026-11-27 (tests/test_energy_parts.py
#: checks them); the metrics the round-11 form gives are the others
_PARTS = ("compute_energy_j", "sram_energy_j", "dram_energy_j")
_NM = len(MC._METRICS) - len(_PARTS)
assert MC._METRICS[_NM:] == _PARTS


def _as_round11(values: tuple) -> tuple[list, object]:
    """(the values the round-11 form also gives, the compute-phase cycles) of :func:`MC.layer_costs`' values: the
    metrics and MERGE as they were; the compute phase, one COMPUTE state then, split into the states that add up
    to it since 2026-11-27 (the breakdown names what bounds it; tests/test_findings.py)."""
    states = dict(zip(MC._STATES, values[_NM + len(_PARTS):]))
    compute = sum(states[s] for s in MC._STATES if s != "MERGE")
    return [*values[:_NM], states["MERGE"]], compute


def _round11_split(values: tuple) -> tuple[list, object]:
    """The oracle's values as :func:`_as_round11` splits the new ones: (metrics and MERGE, COMPUTE)."""
    return [*values[:_NM], values[-1]], values[-2]


def _bits(x) -> bytes:
    """The float64 bits a value ends as in a layer's metric arrays (ints, bools and floats alike)."""
    return np.float64(x).tobytes()


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space, then the first with each placement, with and without reuse."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    return rows + [{**rows[0], "placement": p, "input_reuse": u} for p in MC.PLACEMENTS for u in (False, True)]


_FC = st.tuples(st.integers(1, 50_000), st.integers(1, 50_000), st.integers(1, 50_000), st.integers(1, 64))
_POOL = st.tuples(st.integers(1, 10**7), st.integers(1, 10**7), st.integers(1, 4096), st.integers(1, 8))
_WORKLOADS = ["vgg16", "alexnet", "resnet50", "mobilenet_v2", "fc2", "lenet", "bert_encoder",
              "matmul:m=300,k=200,n=50"]


# ---- the configuration ----
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_config_equals_the_round11_form(seed):
    """config (positional; fill and MAC units as floats) holds the oracle's values in every field, bit for bit, for
    one point (Python numbers) and for a batch (arrays of the same dtype, but those two now float64)."""
    rows = _rows(8, seed)
    names = list(MC.Config.__dataclass_fields__)
    for pts in [M.params.points(rows), *(M.params.points([r]) for r in rows)]:
        got, want = MC.config(pts), _old_config(pts)
        for name in names:
            a, b = getattr(got, name), getattr(want, name)
            if isinstance(b, np.ndarray):
                assert a.shape == b.shape and a.tobytes() == (b.astype(float) if name in ("fill", "mac_units")
                                                             else b).tobytes(), name
            else:
                assert _bits(a) == _bits(b) and type(a) is (float if name in ("fill", "mac_units") else type(b)), name


# ---- the counts ----
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(_FC, min_size=1, max_size=4), st.lists(_POOL, min_size=1, max_size=4))
def test_counts_equal_the_round11_forms_on_numbers_and_arrays(seed, fcs, pools):
    """fc_counts / pool_counts (and _fc_counts / _pool_counts of the layer's shape, as the table holds it) give the
    oracle's numbers: Python ints for one point, the same int64 arrays over (layers x points)."""
    rows = _rows(6, seed)
    k_all = MC.config(M.params.points(rows))
    for shapes, new, inner, make, old in ((fcs, MC.fc_counts, MC._fc_counts, MC.fc_shape, _old_fc_counts),
                                          (pools, MC.pool_counts, MC._pool_counts, MC.pool_shape, _old_pool_counts)):
        cols = [np.array(v, dtype=np.int64).reshape(-1, 1) for v in zip(*shapes)]
        want = old(*cols, k_all)
        for got in (new(*cols, k_all), inner(make(*cols), k_all)):
            for a, b in zip(got, want, strict=True):
                a, b = np.broadcast_to(a, (len(shapes), len(rows))), np.broadcast_to(b, (len(shapes), len(rows)))
                assert a.dtype == b.dtype and np.array_equal(a, b)
        for r in rows:
            k = MC.config(M.params.points([r]))
            for s in shapes:
                ref = old(*s, k)
                for got in (new(*s, k), inner(make(*s), k)):
                    assert got == ref and [type(v) for v in got] == [type(v) for v in ref], (s, r)


# ---- the costs ----
def _layer_args(layer):
    """(counts' oracle on one point, the new counts function and shape, the layer's SIZES as the table has them)."""
    if isinstance(layer, MC.Pool):
        return (lambda k: _old_pool_counts(layer.input_elems, layer.output_elems, layer.channels, layer.kernel, k),
                MC._pool_counts, MC.pool_shape(layer.input_elems, layer.output_elems, layer.channels, layer.kernel))
    return (lambda k: _old_fc_counts(*MC.as_fc(layer), k), MC._fc_counts, MC.fc_shape(*MC.as_fc(layer)))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(_WORKLOADS))
def test_layer_costs_equal_the_round11_form_bit_for_bit(seed, wl):
    """layer_costs (SIZES tuple; the one-point rows' sizes as floats) gives the oracle's values,
    feasibility and SHM need, bit for bit, for each costed layer of a network alone on one point, and over the
    table's (layers x points) arrays."""
    t = MC.table_of(load_workload(wl).layers)
    layers = [x for x in load_workload(wl).layers if isinstance(x, MC.Pool) or MC.as_fc(x) is not None]
    rows = _rows(5, seed)
    for r in rows:
        k = MC.config(M.params.points([r]))
        for layer in layers:
            old_counts, counts, shape = _layer_args(layer)
            ie, oe = layer.input_elems, layer.output_elems
            pool_ops = layer.ops if isinstance(layer, MC.Pool) else 0
            want = _old_layer_costs(old_counts(k), ie, oe, layer.macs, pool_ops, *MC.tiling_geometry(layer), k)
            sizes = MC.layer_sizes(layer)
            assert sizes == (ie, oe, ie + oe, layer.macs, pool_ops, *MC.tiling_geometry(layer))
            row = (counts, *MC._point_counts(layer)[1:], tuple(map(float, sizes)))
            assert row in t.points and t.points[t.points.index(row)] == row  # the very row the one-point path costs
            point_counts = counts(row[1], k)
            assert point_counts == counts(shape, k) == old_counts(k)  # float shape: the same values
            got = MC.layer_costs(point_counts, row[2], k)
            (same, compute), (same_want, compute_want) = _as_round11(got[0]), _round11_split(want[0])
            assert [_bits(v) for v in same] == [_bits(v) for v in same_want], (layer.name, r)
            assert compute == pytest.approx(compute_want, rel=1e-12, abs=0.0), (layer.name, r)
            assert got[1] is want[1] and _bits(got[2]) == _bits(want[2])
    # arrays: the table's columns over all points
    pts = M.params.points(rows)
    k = MC.config(pts)
    parts = []
    if t.fc:
        parts.append((len(t.fc[0]), MC._fc_counts(t.fc, k)))
    if t.pool:
        parts.append((len(t.pool[0]), MC._pool_counts(t.pool, k)))
    c = tuple(MC.stack_rows([p[j] for _, p in parts], [n for n, _ in parts], len(rows)) for j in range(len(MC.COUNTS)))
    sz = t.sizes
    got = MC.layer_costs(c, tuple(sz[name] for name in MC.SIZES), k)
    want = _old_layer_costs(c, sz["input_elems"], sz["output_elems"], sz["macs"], sz["pool_ops"], sz["rows"],
                            sz["in_rows"], sz["halo"], k)
    shape = (t.rows, len(rows))
    (same, compute), (same_want, compute_want) = _as_round11(got[0]), _round11_split(want[0])
    for a, b in zip([*same, got[1], got[2]], [*same_want, want[1], want[2]], strict=True):
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    np.testing.assert_allclose(np.broadcast_to(compute, shape), np.broadcast_to(compute_want, shape), rtol=1e-12)


def test_table_products_equal_the_layers():
    """The table's per-layer products are the layers' own (FC-like: reps, weights, partial sums per core; pooling:
    window elements; fm_elems), in the costed rows' order, for the batch columns and the one-point rows."""
    for wl in _WORKLOADS:
        layers = load_workload(wl).layers
        t = MC.table_of(layers)
        fcs = [x for x in layers if not isinstance(x, MC.Pool) and MC.as_fc(x) is not None]
        pools = [x for x in layers if isinstance(x, MC.Pool)]
        for x, *col in zip(fcs, *(c.ravel().tolist() for c in t.fc)):
            i, n, v, g = MC.as_fc(x)
            assert tuple(col) == (i, n, g, v * g, i * n * g, n * v * g)
        for x, *col in zip(pools, *(c.ravel().tolist() for c in t.pool)):
            assert tuple(col) == (x.input_elems, x.output_elems, x.channels, x.kernel ** 2)
        for x, *col in zip(fcs + pools, *(t.sizes[name].ravel().tolist() for name in MC.SIZES)):
            assert tuple(col) == MC.layer_sizes(x)
        costed = [x for x in layers if isinstance(x, MC.Pool) or MC.as_fc(x) is not None]
        assert len(t.point_of) == len(costed) and len(t.points) == len(set(t.points)) <= len(costed)
        assert sorted(r for at in t.point_at for r in at) == list(range(len(costed)))  # each layer once
        assert all(t.point_of[r] == j for j, at in enumerate(t.point_at) for r in at)
        for x, j in zip(costed, t.point_of):
            counts, shape, sizes = t.points[j]
            assert sizes == MC.layer_sizes(x) and all(type(v) is float for v in sizes)
            assert (counts, shape) == ((MC._pool_counts, MC.pool_shape(x.input_elems, x.output_elems, x.channels,
                                                                       x.kernel)) if isinstance(x, MC.Pool)
                                       else (MC._fc_counts, MC.fc_shape(*MC.as_fc(x))))
            # divided (// ceilings): ints; only multiplied: floats
            assert [type(v) for v in shape] == [int, int, int, float] if isinstance(x, MC.Pool) else \
                [int, int, float, float, float, float]


# ---- the whole path ----
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(_WORKLOADS))
def test_each_point_alone_equals_the_batch(seed, wl):
    """A study's trial (one point alone) gives exactly what the point gets inside a batch: every metric, state,
    reason, label and total, and the contract dictionary."""
    assert_alone_equals_batch(M, wl, _rows(6, seed))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_one_point_infeasible_layers_as_in_the_batch(seed):
    """One point's feasibility and reason arrays (set layer by layer where a shape does not fit) equal the batch's
    rows: the same layers infeasible, the same reason texts, "" elsewhere; points with no such layer give none."""
    w = load_workload("vgg16")
    rows = _rows(30, seed)
    batch = M.evaluate_layers(w, M.params.points(rows))
    seen = set()
    for i, r in enumerate(rows):
        one = M.evaluate_layers(w, M.params.points([r]))
        flags = [bool(lb.feasible[0]) for lb in one]
        seen.add(all(flags))
        assert flags == [bool(lb.feasible[i]) for lb in batch]
        assert [lb.reason[0] for lb in one] == [lb.reason[i] for lb in batch]
    assert seen == {True, False}


def test_fits_and_tiles_both_occur():
    """The random points these tests draw reach both branches of layer_costs (fitting layers and tiled ones, some
    infeasible), on numbers and arrays."""
    t = MC.table_of(load_workload("vgg16").layers)
    fits = set()
    for r in _rows(40, 3):
        k = MC.config(M.params.points([r]))
        for counts, shape, sizes in t.points:
            _, ok, need = MC.layer_costs(counts(shape, k), sizes, k)
            fits.add((need <= k.shm_kb, ok))
    assert fits == {(True, True), (False, True), (False, False)}

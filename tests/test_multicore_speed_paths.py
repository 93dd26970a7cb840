"""The multicore model's one-point path (issue 15: each layer costed in Python numbers) gives the very numbers of
the batch path (the same formulas over arrays of layers x points)."""

from __future__ import annotations


import numpy as np
import pytest

from archmodels import get_model
from archmodels.testing import assert_alone_equals_batch
from archmodels.multicore import model as MC

M = get_model("multicore")


def _rows(n: int, seed: int) -> list[dict]:
    """Random points of the whole declared space, and some with each placement (infeasible ones included)."""
    rows = M.params.random_rows(n, np.random.default_rng(seed))
    return rows + [{**r, "placement": p} for r in rows[:4] for p in MC.PLACEMENTS]



@pytest.mark.parametrize("wl", ["vgg16", "fc2", "matmul:m=300,k=500,cols=7", "mobilenet_v2"])
def test_each_point_alone_equals_the_batch_states_and_reasons(wl):
    rows = _rows(100, 21)
    batch = assert_alone_equals_batch(M, wl, rows)
    assert batch.feasible.any() and not batch.feasible.all()
    assert any("shared memory too small" in r for r in batch.reason)  # a layer's own reason, too


def _reference_fc_counts(inputs, neurons, vectors, groups, cores, ni, no, pl, input_reuse, entries):
    """fc_counts as first written (placement choices by np.where, the IB's cyclic misses with and without
    reuse, weights per core per placement): the spec's counting rule, one Python point."""
    is_b, is_t2 = pl == "B", pl in ("T2", "TR2")
    reuse = pl in ("TR1", "TR2") or input_reuse
    cdiv = lambda a, b: -(-a // b)  # noqa: E731
    in_vals = cdiv(inputs, cores) if is_t2 else inputs
    out_vals = neurons if (is_t2 or is_b) else cdiv(neurons, cores)
    in_ch, out_ch = cdiv(in_vals, ni), cdiv(out_vals, no)
    active = 1 if is_b else min(cores, inputs if is_t2 else neurons)
    misses = MC.cyclic_misses(in_ch, out_ch, entries) if reuse else in_ch * out_ch
    owned = cdiv(cdiv(neurons, cores), no) if is_t2 else 0
    reps = vectors * groups
    wpc = (inputs * neurons if is_b else in_vals * neurons if is_t2 else out_vals * inputs) * groups
    return ((misses + out_ch) * reps, out_ch * reps, in_ch * out_ch * reps, owned * reps, owned * reps,
            owned * cores * reps, owned * cores * reps, active, misses * reps, inputs * neurons * groups, wpc,
            cores * neurons * vectors * groups if is_t2 else 0)


def test_fc_counts_equal_the_reference_counting_on_numbers_and_arrays():
    """Config's per-point splits (in_split, out_split, psum_cores, reuse_entries) and the inline ceiling
    divisions give the counts of the placement-by-placement rule, on Python numbers and on arrays."""
    rng = np.random.default_rng(3)
    rows = M.params.random_rows(300, rng)
    rows += [{**r, "placement": p, "input_reuse": u} for r in rows[:10] for p in MC.PLACEMENTS for u in (False, True)]
    shapes = [(int(a), int(b), int(c), int(d)) for a, b, c, d in rng.integers(1, 3000, (20, 4))]
    shapes += [(1, 1, 1, 1), (4096, 1000, 1, 1), (3, 64, 50176, 1), (9, 1, 12544, 32)]
    pts = M.params.points(rows)
    kb = MC.config(pts)
    for s in shapes:
        arrays = MC.fc_counts(*s, kb)
        for i, r in enumerate(rows):
            ref = _reference_fc_counts(*s, r["cores"], r["ni"], r["no"], r["placement"], r["input_reuse"],
                                       r["input_buffer_entries"])
            one = MC.fc_counts(*s, MC.config(M.params.points([r])))
            assert one == ref, (s, r)
            assert all(type(v) is int for v in one)
            assert [int(np.broadcast_to(a, (len(rows),))[i]) for a in arrays] == list(ref)


def test_shm_tiling_of_one_point_equals_arrays():
    """shm_tiling_of on Python numbers (a fitting layer: the one-tile values without computing them; one that
    does not: no selection) equals its array form element by element, and tiling_geometry's halo."""
    from workloads.layers import Conv2D, Pool
    conv = Conv2D("c", in_ch=3, out_ch=8, kernel_h=5, kernel_w=5, in_h=40, in_w=40, stride=2, padding=1, dilation=2)
    assert MC.tiling_geometry(conv) == (conv.out_h, 40, 7)
    assert MC.tiling_geometry(Pool("p", channels=4, in_h=8, in_w=8, kernel=2, stride=3))[2] == 0
    rng = np.random.default_rng(5)
    for _ in range(200):
        ie, oe = (int(x) for x in rng.integers(1, 10**6, 2))
        rows, halo = int(rng.integers(1, 300)), int(rng.integers(0, 6))
        in_rows = rows + halo
        need = float(np.exp(rng.uniform(0, 12)))
        shm = np.exp(rng.uniform(0, 12, 16))
        vb = float(rng.choice([1.0, 2.0, 4.0]))
        arrays = MC.shm_tiling_of(ie, oe, rows, in_rows, halo, need, shm, vb)
        for j, s in enumerate(shm.tolist()):
            one = MC.shm_tiling_of(ie, oe, rows, in_rows, halo, need, s, vb)
            assert type(one[3]) is bool and all(type(v) in (int, float) for v in one[:3])  # tiles: rows if fewer
            assert one == tuple(a[j].item() for a in arrays)


def test_vector_unit_of_one_point_equals_its_row_of_a_batch():
    """vector_unit's one-point branch (Python numbers, technology-table rows) gives the batch's values, and a
    network with vector layers gives the same numbers alone as in a batch."""
    rows = _rows(60, 8)
    batch = M.vector_unit(M.params.points(rows))
    for i, r in enumerate(rows):
        one = M.vector_unit(M.params.points([r]))
        for f in ("ops_per_s", "clock_hz", "elem_bytes", "dram_bytes_per_s", "op_energy_pj", "dram_read_pj_per_byte",
                  "dram_write_pj_per_byte", "onchip_kb", "onchip_bytes_per_s", "onchip_pj_per_byte"):
            a, b = getattr(one, f), getattr(batch, f)
            assert type(a) is np.ndarray and a.shape == (1,) and a.dtype == b.dtype, f
            assert a[0] == b[i] or (np.isnan(a[0]) and np.isnan(b[i])), (f, r)  # NaN: clock above the node's
    assert_alone_equals_batch(M, "bert_encoder", rows[:30])

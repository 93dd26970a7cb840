"""IMAX batched paths of issue 15's sixth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import tech
from archmodels.imax import model as IM
from archmodels.imax import schedule as S
from workloads import load_workload

from .test_imax_batched4 import _rows, random_limits
from .test_imax_batched5 import M, _same


def _fresh(values: list) -> np.ndarray:
    """An object array of new string objects equal to ``values`` (not the declared choices' objects: as rows
    read from a file would hold)."""
    return np.array(["".join(list(v)) if type(v) is str else v for v in values], dtype=object)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(tech.DRAM_NAMES), min_size=0, max_size=60), st.sampled_from(["shared", "fresh", "mixed"]))
def test_choice_codes_equal_the_names_index(names, objects):
    """_choice_codes (by the identity of the elements' objects, or by value past a few objects) == the index of
    each name, whether the elements share the declared strings' objects, are new objects, or both."""
    if objects == "shared":
        values = np.array(names, dtype=object)
    elif objects == "fresh":
        values = _fresh(names)
    else:
        values = np.array([v if i % 3 else "".join(list(v)) for i, v in enumerate(names)], dtype=object)
    for by_value_max in (0, IM._CHOICE_BY_VALUE_MAX):  # by identity from the first element on; short arrays by value
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(IM, "_CHOICE_BY_VALUE_MAX", by_value_max)
            got = IM._choice_codes(values, tech.DRAM_NAMES)
        assert got is not None and got.dtype == np.int64
        assert got.tolist() == [tech.DRAM_NAMES.index(v) for v in names]


def test_choice_codes_none_for_other_values_and_by_value_for_other_layouts(monkeypatch):
    monkeypatch.setattr(IM, "_CHOICE_BY_VALUE_MAX", 0)  # the identity path even for these short arrays
    names = IM.FORMATS
    for bad in (["csr", "coo"], ["csr", 3], [None, "jds"], ["coo"]):
        assert IM._choice_codes(np.array(bad, dtype=object), names) is None
    # "coo" after more than _CHOICE_OBJECTS_MAX distinct objects: found by the lookup per element
    many = _fresh(["csr", "jds", "dense"] * 5)
    assert IM._choice_codes(np.append(many, "coo"), names) is None
    assert IM._choice_codes(many, names).tolist() == [1, 2, 0] * 5
    strided = np.array(["jds", "x", "csr", "x", "dense", "x"], dtype=object)[::2]  # not contiguous
    assert IM._choice_codes(strided, names).tolist() == [2, 1, 0]
    assert IM._choice_codes(np.array(["jds", "csr"]), names).tolist() == [2, 1]  # a unicode array
    assert IM._choice_codes(np.array([], dtype=object), names).tolist() == []


def _fresh_points(pts: dict) -> dict:
    """The points with every choice parameter's strings as new objects."""
    return {k: _fresh(v.tolist()) if v.dtype == object else v for k, v in pts.items()}


@pytest.mark.parametrize("sparse", [True, False])
def test_groups_by_identity_codes_equal_by_value(sparse):
    """_Batch.groups with the codes by identity == with the strings compared by value (new string objects,
    more of them than _CHOICE_OBJECTS_MAX, and with the identity path switched off): labels, codes, rows."""
    pts = M.params.points(M.params.random_rows(500, np.random.default_rng(4)))
    a = IM._Batch.of(pts).groups(sparse)
    b = IM._Batch.of(_fresh_points(pts)).groups(sparse)
    for other in (b,):
        _same(a.fmt, other.fmt)
        _same(a.mapping, other.mapping)
        _same(a.columns, other.columns)
        _same(a.uniq, other.uniq)
        _same(a.inv, other.inv)
    assert a.mapping.tolist() == [("dense" if f == "dense" else s) if sparse else "dense"
                                  for f, s in zip(pts["format"].tolist(), pts["schedule"].tolist())]


def test_groups_codes_by_value_when_identity_is_off(monkeypatch):
    pts = M.params.points(M.params.random_rows(300, np.random.default_rng(8)))
    a = IM._Batch.of(pts).groups(True)
    monkeypatch.setattr(IM, "_choice_codes", lambda values, names: None)  # the compare-by-value path
    b = IM._Batch.of(pts).groups(True)
    for name in ("fmt", "mapping", "columns", "uniq", "inv"):
        _same(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("fresh", [False, True])
def test_dram_pj_per_byte_equals_tech(fresh):
    dram = np.array(list(tech.DRAM_NAMES) * 30, dtype=object)[np.random.default_rng(2).permutation(120)]
    dram = _fresh(dram.tolist()) if fresh else dram
    for got, want in zip(IM._dram_pj_per_byte(dram), tech.dram_pj_per_byte(dram)):
        _same(got, want)


@pytest.mark.parametrize("wl", ["spmm:n=96,sparsity=0.9", "alexnet-conv"])
def test_batch_of_new_string_objects_equals_the_batch_of_declared_ones(wl):
    """A batch whose choice strings are new objects (codes by value) == the same points holding the declared
    strings (codes by identity): every metric, state, label, total and reason, bit for bit."""
    w = load_workload(wl)
    pts = M.params.points(_rows(200, 21, (1, 2, 3, 4)))
    a, b = M.evaluate_batch(w, pts), M.evaluate_batch(w, _fresh_points(pts))
    _same(a.feasible, b.feasible)
    _same(a.reason, b.reason)
    for la, lb_ in zip(a.layers, b.layers):
        assert list(la.metrics) == list(lb_.metrics) and list(la.labels) == list(lb_.labels)
        for k in la.metrics:
            _same(la.metrics[k], lb_.metrics[k])
        for k in la.states:
            _same(la.states[k], lb_.states[k])
        for k in la.labels:
            _same(np.asarray(la.labels[k], dtype=object), np.asarray(lb_.labels[k], dtype=object))
    assert list(a.totals) == list(b.totals)
    for k in a.totals:
        _same(a.totals[k], b.totals[k])


def _reference_flags(lim: dict, n: np.ndarray, b_top: np.ndarray) -> list:
    """The flags no_schedule_reasons read before this round: broken() at AGRP = 1, BGRP = CGRP = b_top, and the
    4.4.10 search over every configuration."""
    at = S.broken(lim, 1, b_top, b_top)
    return [S._some_bgrp_indivisible_all(n, lim["N"], b_top) if c == "4.4.10" else at[c] for c in S.CONSTRAINTS]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 400), st.booleans())
def test_reason_flags_equal_broken(seed, G, margins):
    """_reason_flags (broken()'s expressions with AGRP = 1 and CGRP = BGRP written in; 4.4.10's search on the
    configurations whose nchip divides n) == broken() + the search over all, flag for flag; with JDS Margins
    (jds_top >= 0 somewhere) broken() itself."""
    rng = np.random.default_rng(seed)
    _, lim = random_limits(rng, G)
    if margins and len(lim["N"]):
        lim["jds_top"] = np.where(rng.random(len(lim["N"])) < 0.5, rng.integers(0, 400, len(lim["N"])), -1)
    N = np.asarray(lim["N"])
    n = np.broadcast_to(lim["n"], N.shape)
    b_top = np.where(lim["simd"], lim["W"] * 2, np.minimum(np.maximum(n, 1), 4096))
    got, want = S._reason_flags(lim, n, b_top), _reference_flags(lim, n, b_top)
    assert len(got) == len(want) == len(S.CONSTRAINTS)
    for c, g, w in zip(S.CONSTRAINTS, got, want):
        assert np.array_equal(np.broadcast_to(g, N.shape), np.broadcast_to(w, N.shape)), c


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(1, 64), st.integers(1, 4096)), min_size=1, max_size=50),
       st.booleans())
def test_some_bgrp_indivisible_on_the_divisible_ones_equals_over_all(rows, one_n):
    n, nchip, b_top = (np.array(c, dtype=np.int64) for c in zip(*rows))
    if one_n:
        n = int(n[0])
    _same(S._some_bgrp_indivisible(n, nchip, b_top), S._some_bgrp_indivisible_all(n, nchip, b_top))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300), st.booleans())
def test_no_schedule_reasons_equal_the_scalar_lines(seed, G, shared):
    ok, lim = random_limits(np.random.default_rng(seed), G)
    lines = S.no_schedule_reasons(lim, shared=shared)
    p = S.build(96, 96, 96, "dense", "dense", 64, 4, 64, 1, with_tiles=False)  # only its error is read
    for g in range(int(ok.sum())):
        one = {k: (v[g].item() if np.ndim(v) else v) for k, v in lim.items()}
        assert S.no_schedule_reason(p, one) == lines[g]


@pytest.mark.parametrize("wl, sparse", [("spmm:n=96,sparsity=0.9", True), ("spmm:m=300,k=200,n=16,sparsity=0.97", True),
                                        ("spmm:n=96,sparsity=0.9", False)])
def test_one_product_runs_equal_the_several_products_path(wl, sparse):
    """_runs_on of one product (its configurations as they are, m and k numbers, no tiling of the points'
    arrays) == the path of several products (the same product twice), every number, flag and reason."""
    layer = load_workload(wl).layers[0]
    key = (layer.m, layer.k, layer.n, layer if sparse else None)
    pts = M.params.points(_rows(300, 5, (1, 2, 4, 8)))
    alone = M._runs([key], IM._Batch.of(pts), sparse)[0]
    twice = M._runs([key, key], IM._Batch.of(pts), sparse)
    assert alone["ok"].any() and not alone["ok"].all()
    for got in twice:
        assert list(got) == list(alone)
        for name in alone:
            _same(got[name], alone[name])


@pytest.mark.parametrize("wl", ["spmm:n=96,sparsity=0.9", "alexnet-conv"])
def test_model_totals_of_several_nodes_equal_each_node_alone(wl):
    """model_totals of a batch at two nodes (each node's area and leakage over every point, taken at the points'
    node) == of each node's points as a batch of their own (one node: no selection), bit for bit."""
    w = load_workload(wl)
    pts = M.params.points(_rows(240, 13, (1, 2, 4)))
    assert len(set(pts["tech_nm"].tolist())) == 2
    res = M.evaluate_batch(w, pts)
    every = M.model_totals(w, pts, res.layers)
    for node in set(pts["tech_nm"].tolist()):
        at = np.flatnonzero(pts["tech_nm"] == node)
        sub = {k: v[at] for k, v in pts.items()}
        alone = M.model_totals(w, sub, M.evaluate_batch(w, sub).layers)
        assert list(alone) == list(every)
        for k in every:
            _same(every[k][at], alone[k])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300), st.sampled_from(["number", "arrays"]))
def test_configurations_by_mapping_codes_equal_by_names(seed, G, mk):
    """schedule.configurations with the mappings' codes (integer compares) == with their names, every number and
    dtype; m, k as one number or one per configuration."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, G)
    names = np.array(IM.C.MAPPINGS)[codes]
    m, k = (int(rng.integers(1, 900)), int(rng.integers(1, 900))) if mk == "number" else \
        (rng.integers(1, 900, G), rng.integers(1, 900, G))
    args = (rng.integers(1, 1024, G), rng.choice([1, 2, 4, 8], G), rng.integers(1, 4097, G), rng.integers(1, 65, G))
    a = S.configurations(m, k, 96, names, *args)
    b = S.configurations(m, k, 96, None, *args, mapping_codes=codes)
    assert list(a) == list(b)
    for key in a:
        _same(np.atleast_1d(a[key]), np.atleast_1d(b[key]))


def _arrays(lb) -> list[np.ndarray]:
    return [a for a in list(lb.metrics.values()) + list(lb.states.values()) if isinstance(a, np.ndarray)]


def test_layers_of_one_product_share_no_arrays():
    """The layers of a network whose products repeat (one run shared by them; numbers of a run repeated once are
    not multiplied by 1) hold arrays of their own: no metric or state of a layer overlaps another layer's."""
    w = load_workload("vgg16")
    res = M.evaluate_batch(w, M.params.points(_rows(64, 3, (1, 2, 4))))
    arrays = [_arrays(lb) for lb in res.layers]
    assert len(res.layers) > 3
    for i in range(len(arrays)):
        for j in range(i):
            assert not any(np.may_share_memory(a, b) for a in arrays[i] for b in arrays[j]), (i, j)


def test_batch_clock_costs_kept_by_their_arrays_equal_the_technology_table():
    """_clock_costs of batches (kept by tech.clock_costs per set of clocks and nodes, compared bit for bit) == the
    costs computed anew: new sets, sets seen before, the same clocks at other nodes, a clock changed in place, -0.0
    against 0.0."""
    rng = np.random.default_rng(6)
    sets = [{"clock_mhz": rng.uniform(10, 2000, 300), "tech_nm": rng.choice([28, 14], 300)} for _ in range(11)]
    sets.append({"clock_mhz": sets[0]["clock_mhz"].copy(), "tech_nm": np.where(sets[0]["tech_nm"] == 28, 14, 28)})
    changed = {k: v.copy() for k, v in sets[1].items()}
    changed["clock_mhz"][-1] += 1.0
    zeros = [{"clock_mhz": np.array([z, 150.0]), "tech_nm": np.array([28, 28])} for z in (0.0, -0.0)]
    for pts in sets + [changed] + zeros + sets[::-1] + zeros[::-1]:
        got = IM._clock_costs(pts)
        kept = list(tech._CLOCK_MEMO)
        tech._CLOCK_MEMO.clear()
        want = tech.clock_costs(pts["clock_mhz"], pts["tech_nm"])  # computed anew
        tech._CLOCK_MEMO[:] = kept
        for name in ("vdd_ratio", "energy_scale", "area_factor", "feasible"):
            _same(getattr(got, name), getattr(want, name))
        assert IM._clock_costs(pts) is got  # kept
    assert len(tech._CLOCK_MEMO) <= tech._CLOCK_MEMO_MAX


@settings(max_examples=40, deadline=None)
@given(m=st.integers(10, 200), k=st.integers(10, 200), sparsity=st.sampled_from([0.5, 0.9, 0.99, 0.999]),
       seed=st.integers(0, 30), tilings=st.lists(st.tuples(st.booleans(), st.integers(1, 6), st.integers(1, 4)),
                                                 min_size=1, max_size=4, unique=True),
       pairs=st.integers(1, 60), rng_seed=st.integers(0, 10_000))
def test_pair_margins_equal_the_grid(m, k, sparsity, seed, tilings, pairs, rng_seed):
    """_Tiles.margins over (tile, configuration) pairs (only the entries below each pair's blocks searched) ==
    margins_grid (every entry of the [most blocks, pairs] grid searched, 0 past a pair's blocks), bit for bit."""
    from archmodels.imax import plans as P
    from workloads.parametric import parse

    layer = parse(f"spmm:m={m},k={k},n=16,sparsity={sparsity},seed={seed}").layers[0]
    tiles = P._tiles(layer, tuple(("jds" if j else "csr", min(rt, m), min(ct, k)) for j, rt, ct in sorted(tilings)))
    rng = np.random.default_rng(rng_seed)
    gid = rng.integers(0, len(tiles.rows), pairs)  # the last tile: the empty one (no rows)
    H = rng.integers(1, 40, pairs)
    nb = -(-tiles.top[gid] // H)
    if rng.random() < 0.3:
        nb = np.maximum(nb, 1)
    if not nb.any():
        return
    _same(tiles.margins(gid, H, nb), tiles.margins_grid(gid, H, nb))

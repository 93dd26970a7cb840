"""IMAX batched paths of issue 15's fourth round: each equals the path it replaced, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import model as IM
from archmodels.imax import schedule as S
from workloads import load_workload

M = get_model("imax")


def _rows(n: int, seed: int, divisors: tuple[int, ...]) -> list[dict]:
    """Random points of the declared space, half of them with ``nchip`` dividing n and small structures (so that
    many schedule and many share a configuration)."""
    rng = np.random.default_rng(seed)
    rows = M.params.random_rows(n, rng)
    for row in rows[::2]:
        row["nchip"] = int(rng.choice(divisors))
        row["units"] = int(rng.choice([8, 16, 24, 40, 64]))
        row["lmm_kb"] = int(rng.choice([4, 8, 16, 64, 256]))
    return rows


def _same(a: np.ndarray, b: np.ndarray) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == object:
        assert a.tolist() == b.tolist()
    else:
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), (a, b)


@pytest.mark.parametrize("wl, divisors, n", [("spmm:n=96,sparsity=0.9", (1, 2, 3, 4, 8), 300),
                                             ("spmm:m=300,k=200,n=16,sparsity=0.97", (1, 2, 4), 200),
                                             ("spmm:n=512,sparsity=0.9", (1, 2, 4, 8, 16), 400),
                                             ("spmm:n=96,sparsity=0.9", (1, 2, 3), 3)])
def test_sparse_run_with_its_reference_equals_the_two_runs(wl, divisors, n):
    """_sparse_runs (the run and the dense reference in one pass) == _runs + _dense_reference (the reference
    planned on the subset of points as a batch of its own): every number, flag and reason, bit for bit."""
    layer = load_workload(wl).layers[0]
    pts = M.params.points(_rows(n, 7, divisors))
    key = (layer.m, layer.k, layer.n, layer)
    run, dense = M._sparse_runs(key, IM._Batch.of(pts))
    batch = IM._Batch.of(pts)
    want = M._runs([key], batch, True)[0]
    want_dense = M._dense_reference(key, batch, want)
    assert set(run) == set(want)
    for name in want:
        _same(run[name], want[name])
    _same(dense, want_dense)
    assert np.isfinite(dense).any() and want["ok"].any()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 70_000), min_size=0, max_size=40), st.sampled_from(["", ", lmm_kb="]))
def test_int_texts_equal_f_strings(values, suffix):
    """schedule._int_texts (a table of number texts, or one by one past it) == one f-string per value."""
    got = S._int_texts(np.array(values, dtype=np.int64), suffix)
    assert got.dtype == object and got.tolist() == [f"{v}{suffix}" for v in values]


def test_int_texts_negative_values_written_one_by_one():
    assert S._int_texts(np.array([-3, 5]), "x").tolist() == ["-3x", "5x"]


def random_limits(rng: np.random.Generator, G: int) -> tuple[np.ndarray, dict]:
    """(which of G random configurations built, the limits of those that did): random products, mappings,
    units, cols, LMM sizes (4-4096 KB) and chips."""
    cfg = S.configurations(rng.integers(1, 900, G), rng.integers(1, 900, G), 96, rng.choice(["dense", "ivj", "ivs"], G),
                           rng.integers(1, 1024, G), rng.choice([1, 2, 4, 8], G), rng.integers(4, 4097, G),
                           rng.integers(1, 65, G))
    ok = ~cfg["error"]
    return ok, {k: v[ok] if np.ndim(v) else v for k, v in cfg.items()}


@pytest.mark.parametrize("pair_table", [True, False])
def test_no_schedule_reasons_equal_the_scalar_lines_many_lmm_sizes(pair_table, monkeypatch):
    """The lines joined from number-text tables (lmm_kb up to 4096, several tables; "<head><nchip>, lmm_kb=" per
    used pair, or without that table) == no_schedule_reason."""
    if not pair_table:
        monkeypatch.setattr(S, "_PAIR_TABLE_MAX", 0)
    ok, lim = random_limits(np.random.default_rng(9), 600)
    lines = S.no_schedule_reasons(lim)
    p = S.build(96, 96, 96, "dense", "dense", 64, 4, 64, 1, with_tiles=False)  # only its error is read
    for g in range(int(ok.sum())):
        one = {k: (v[g].item() if np.ndim(v) else v) for k, v in lim.items()}
        assert S.no_schedule_reason(p, one) == lines[g]


def _plans_equal(a: dict, b: dict) -> None:
    for key in ("count", "agrp", "bgrp", "fallback"):
        _same(a[key], b[key])
    for key in S.FEATURES:
        _same(a["feats"][key], b["feats"][key])
    assert set(a["per"]) == set(b["per"])
    for key in a["per"]:
        _same(a["per"][key], b["per"][key])


def test_sparse_plans_on_kept_tilings_equal_those_on_a_batch_s_own():
    """plans.sparse_plans reading its tilings from the layer's kept superset (_tilings_of: tilings of earlier
    batches beside them, some with many more tiles) == on a _Tiles of this batch's tilings alone."""
    from archmodels.imax import plans as P
    from workloads.parametric import parse

    layer = parse("spmm:m=150,k=260,cols=48,sparsity=0.9,bias=1.5,seed=4").layers[0]
    rng = np.random.default_rng(12)

    def configs(G, lmm_hi):
        fmt, mapping = rng.choice(["csr", "jds"], G), rng.choice(["ivj", "ivs"], G)
        cfg = S.configurations(150, 260, 48, mapping, rng.integers(8, 90, G), rng.choice([1, 2, 4, 8], G),
                               rng.integers(1, lmm_hi, G), rng.choice([1, 2, 4], G))
        live = np.flatnonzero(~S.unschedulable(cfg))
        return (fmt[live], mapping[live], {k: v[live] if np.ndim(v) else v for k, v in cfg.items()},
                rng.random(len(live)) < 0.5)

    P._TILINGS.clear()
    early = configs(200, 3)  # small LMMs: many tiles
    P.sparse_plans(layer, early[0], early[1], 48, early[2], early[3])
    later = configs(200, 12)
    kept = P.sparse_plans(layer, later[0], later[1], 48, later[2], later[3])
    assert len(P._TILINGS[id(layer)][1]) > len(set(zip(later[0].tolist(), later[2]["rt"].tolist(),
                                                         later[2]["ct"].tolist())))
    P._TILINGS.clear()
    alone = P.sparse_plans(layer, later[0], later[1], 48, later[2], later[3])
    _plans_equal(kept, alone)
    again = P.sparse_plans(layer, later[0], later[1], 48, later[2], later[3])  # every tiling kept: nothing built
    _plans_equal(again, alone)


def test_sparse_plans_kept_tilings_bounded(monkeypatch):
    """Past _TILINGS_COUNTS row counts side by side, a layer's entry restarts with the batch's own tilings (the
    plans the same)."""
    from archmodels.imax import plans as P
    from workloads.parametric import parse

    layer = parse("spmm:m=150,k=260,cols=48,sparsity=0.9,bias=1.5,seed=4").layers[0]
    rng = np.random.default_rng(13)
    G = 200
    fmt, mapping = rng.choice(["csr", "jds"], G), rng.choice(["ivj", "ivs"], G)
    cfg = S.configurations(150, 260, 48, mapping, rng.integers(8, 90, G), rng.choice([1, 2, 4, 8], G),
                           rng.integers(1, 12, G), rng.choice([1, 2, 4], G))
    live = np.flatnonzero(~S.unschedulable(cfg))
    cfg = {k: v[live] if np.ndim(v) else v for k, v in cfg.items()}
    opt = rng.random(len(live)) < 0.5
    half = len(live) // 2
    P._TILINGS.clear()
    want = P.sparse_plans(layer, fmt[live], mapping[live], 48, cfg, opt)
    P._TILINGS.clear()
    monkeypatch.setattr(P, "_TILINGS_COUNTS", 0)
    part = {k: v[:half] if np.ndim(v) else v for k, v in cfg.items()}
    P.sparse_plans(layer, fmt[live][:half], mapping[live][:half], 48, part, opt[:half])
    first = P._TILINGS[id(layer)][1]
    got = P.sparse_plans(layer, fmt[live], mapping[live], 48, cfg, opt)
    own = set(zip((fmt[live] == "jds").tolist(), cfg["rt"].tolist(), cfg["ct"].tolist()))
    assert first < own  # the second batch met new tilings: the bound decided what was kept
    assert P._TILINGS[id(layer)][1] == own
    _plans_equal(got, want)


@pytest.mark.parametrize("sparse", [True, False])
def test_groups_columns_and_distinct_rows(sparse):
    """_Batch.groups: the code columns (format 0 dense / 1 csr / 2 jds, mapping 0 dense / 1 ivj / 2 ivs, then the
    structure) and, read lazily, the distinct rows in np.unique's order with each point's group."""
    rows = _rows(500, 3, (1, 2, 4))
    pts = M.params.points(rows)
    grp = IM._Batch.of(pts).groups(sparse)
    fmt = pts["format"]
    dense = (fmt == "dense") | (not sparse)
    fcode = np.where(dense, 0, np.where(fmt == "jds", 2, 1))
    mcode = np.where(dense, 0, np.where(pts["schedule"] == "ivs", 2, 1))
    want = np.stack([fcode, mcode] + [pts[p].astype(np.int64) for p in ("units", "cols", "lmm_kb", "nchip", "lmm_opt")])
    assert grp.columns.dtype == np.int64 and np.array_equal(grp.columns, want)
    assert set(fcode.tolist()) == ({0, 1, 2} if sparse else {0})
    uniq, inv = np.unique(want.T, axis=0, return_inverse=True)
    assert np.array_equal(grp.uniq, uniq) and np.array_equal(grp.inv, inv.reshape(-1))
    assert grp.mapping_names.tolist() == [("dense", "ivj", "ivs")[c] for c in uniq[:, 1]]
    assert grp.fmt.tolist() == [f if not d else "dense" for f, d in zip(fmt.tolist(), dense.tolist())]


def test_node_masks_equal_distinct_nodes():
    """tech.node_masks (was imax's model._node_masks): tech.distinct's nodes in order with each one's points,
    also for one node and for a node outside tech.NODES_NM (the np.unique path)."""
    from archmodels import tech

    rng = np.random.default_rng(4)
    for nodes in (np.array(tech.NODES_NM), np.array(tech.NODES_NM[:1]), np.array(list(tech.NODES_NM) + [7])):
        a = rng.choice(nodes, 300)
        got = tech.node_masks(a)
        assert [n for n, _ in got] == tech.distinct(a)
        for n, sel in got:
            assert type(n) is int and np.array_equal(sel, a == n)


def test_dram_pj_per_byte_equals_tech():
    """model._dram_pj_per_byte == tech.dram_pj_per_byte bit for bit (object and str arrays); an unknown name
    raises as tech does."""
    from archmodels import tech

    names = np.random.default_rng(2).choice(np.array(tech.DRAM_NAMES, dtype=object), 257)
    for arr in (names, names.astype(str)):
        for got, want in zip(IM._dram_pj_per_byte(arr), tech.dram_pj_per_byte(arr)):
            _same(got, want)
    with pytest.raises(KeyError):
        IM._dram_pj_per_byte(np.array(["ddr4", "nope"], dtype=object))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 60), k=st.integers(1, 70), rt=st.integers(1, 9), ct=st.integers(1, 9),
       fmt=st.sampled_from(["csr", "jds"]), sparsity=st.sampled_from([0.3, 0.9, 0.99]), seed=st.integers(0, 20))
def test_tiling_of_all_tiles_at_once_equals_the_tile_list(m, k, rt, ct, fmt, sparsity, seed):
    """plans._tiling (one sort of every count by (tile, count)) == schedule.tile_row_nnz tile by tile (sorted row
    nonzeros, largest, rows with a nonzero, columns, first / new-B / last flags), tilings with empty and narrow
    tiles included."""
    from archmodels.imax import plans as P
    from workloads.parametric import matrix_of, parse

    layer = parse(f"spmm:m={m},k={k},cols=8,sparsity={sparsity},bias=1.5,seed={seed}").layers[0]
    got = P._tiling(layer, fmt, rt, ct)
    tiles = S.tile_row_nnz(matrix_of(layer), fmt, rt, ct)
    nz = [np.sort(nnz) for *_, nnz in tiles]
    assert got.rows.tolist() == [r for _, _, r, _, _ in tiles]
    assert got.cols.tolist() == [c for _, _, _, c, _ in tiles]
    assert got.top.tolist() == [int(z[-1]) if len(z) else 0 for z in nz]
    assert got.nonzero_rows.tolist() == [int((z > 0).sum()) for z in nz]
    assert got.first_k.tolist() == [j == 0 for _, j, *_ in tiles]
    assert got.last.tolist() == [j == ct - 1 for _, j, *_ in tiles]
    assert got.b_new.tolist() == [ct > 1 or i == 0 for i in range(len(tiles))]
    _same(got.nz, np.concatenate(nz).astype(np.int64))
    assert got.most == max(int(z[-1]) if len(z) else 0 for z in nz)
    assert got.narrow == any(c < 1 for _, _, _, c, _ in tiles)
    for a in (got.rows, got.cols, got.top, got.nonzero_rows):
        assert a.dtype == np.int64


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 64), st.integers(1, 1 << 23),
                          st.sampled_from([1, 2, 4, 8]), st.booleans()), min_size=1, max_size=30),
       st.integers(1, 5000))
def test_bgrp_caps_equal_the_scalar_cap(rows, n):
    """schedule.bgrp_caps (integer floor divisions) == _cap (the float (L / 2) // ...) for every configuration,
    odd LMM byte counts included."""
    tr, tc, N, L, W, simd = (np.array(c) for c in zip(*rows))
    got = S.bgrp_caps(tr, tc, n, N, L, W, simd)
    assert got.dtype == np.int64
    assert got.tolist() == [S._cap(int(l), int(r), int(c), n, int(nc), int(w), bool(s))
                            for r, c, nc, l, w, s in rows]

"""EMAX batched paths, eleventh round (issue 15): the choice's and the report's transfer sums column by column over
each block's matrices for many pairs of any width and several blocks (``timing._dense_parts``, ``_parts_flows``, the
dense ``pair_dram_reads``; ``_read_order`` by a sort past ``READ_ORDER_TABLE_UPTO`` columns); the EMAXVR plans no
step reads left out before they are priced (the builder's ``chained_only`` rows, ``model._unread_rows``). Each fast
path is compared with the general one bit for bit, and checked to happen."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import timing, traffic
from archmodels.emax import model as em

from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths9 import _VALUE, _bits_equal, _tables

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _evaluate_spied(target, name: str, spy, arch: str, wl: str, rows: list[dict]) -> None:
    """Evaluate ``rows`` of ``wl`` on ``arch`` from empty plan caches with ``target.name`` replaced by ``spy``."""
    em.workload_plans.cache_clear()
    with mock.patch.object(target, name, spy):
        get_model(arch).evaluate_points(wl, rows)
    em.workload_plans.cache_clear()


def _chosen_tables(arch: str, wl: str, n: int, seed: int) -> list[tuple]:
    """(table, pairs, points, link) of every choice's pricing (``timing._pair_states``) while ``n`` random points
    of ``wl`` are evaluated (caches cleared): the kept plans of a chunk, in blocks (conv and pooling, FC)."""
    got = []
    real = timing._pair_states

    def spy(tab, rows, pts, link, variants):
        got.append((tab, rows, pts, link))
        return real(tab, rows, pts, link, variants)

    _evaluate_spied(timing, "_pair_states", spy, arch, wl, _rows(arch, n, seed) if seed % 2 else
                    get_model(arch).params.random_rows(n, np.random.default_rng(seed)))
    return got


def _general_flows(tab, rows, pts, link, variants):
    """The sub-tables' sums (``_entry_flows`` on a fresh table: its sub-tables built from its blocks)."""
    fresh = traffic.PlanTable(tab.plan, tab.label, tab.src, tab.moves)
    return timing._entry_flows(fresh, rows, pts, link, variants)


def _general_reads(tab, rows, pts, link):
    fresh = traffic.PlanTable(tab.plan, tab.label, tab.src, tab.moves)
    with mock.patch.object(timing, "_dense_parts", lambda *a, **k: None), \
            mock.patch.object(timing, "_few", lambda tab, rows: False):
        return timing.pair_dram_reads(fresh, rows, pts, link)


def _same_flows(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for k in want:
        assert _bits_equal(got[k], want[k]), k


_CASES = [("emaxvr", "vgg16", 40, 3), ("emaxvr", "alexnet", 30, 4), ("emaxvr", "resnet50", 12, 7),
          ("emaxv", "vgg16", 120, 5)]


@pytest.mark.parametrize("arch,wl,n,seed", _CASES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_dense_parts_of_every_pair_equal_the_sub_tables(arch, wl, n, seed):
    """The pairs a batch's choice prices (every kept plan in order: EMAXVR's two blocks of ~20 and ~11 columns),
    column by column block by block (_parts_flows; pair_dram_reads of the same pairs) equal the sub-tables'
    bincounts bit for bit, every key, every variant."""
    seen = 0
    for tab, rows, pts, link in _chosen_tables(arch, wl, n, seed):
        with mock.patch.object(timing, "DENSE_PAIRS_FROM", 1):
            parts = timing._dense_parts(tab, rows)
        if parts is None:  # (a block not a _Moves: none in a batch's choice)
            continue
        seen += 1
        host = timing._Take(rows, timing._every(tab, rows))(tab.plan["host"])
        for variants in ((True, False), (True,), (False,)):
            _same_flows(timing._parts_flows(parts, host, pts, link, variants),
                        _general_flows(tab, rows, pts, link, variants))
        with mock.patch.object(timing, "DENSE_PAIRS_FROM", 1), mock.patch.object(timing, "_few", lambda t, r: False):
            got = timing.pair_dram_reads(tab, rows, pts, link)
        want = _general_reads(tab, rows, pts, link)
        assert all(_bits_equal(a, b) for a, b in zip(got, want))
    assert seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), case=st.sampled_from(_CASES[:3]))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_dense_parts_of_any_pairs_equal_the_sub_tables(data, case):
    """Pairs of any plans (a subset, repeats, any order, one block's only; points anywhere, several bus widths): the
    blocks' rows gathered per pair (_dense_parts) give the sub-tables' sums and DRAM reads bit for bit."""
    calls = _chosen_tables(*case)
    tab, _, pts0, link = calls[data.draw(st.integers(0, len(calls) - 1))]
    n = data.draw(st.integers(1, 3 * len(tab)))
    rows = np.array(data.draw(st.lists(st.integers(0, len(tab) - 1), min_size=n, max_size=n)), dtype=np.int64)
    if data.draw(st.booleans()):
        rows = np.sort(rows)
    pts = pts0[np.array(data.draw(st.lists(st.integers(0, len(pts0) - 1), min_size=n, max_size=n)), dtype=np.int64)]
    if data.draw(st.booleans()):  # several bus widths and element sizes
        bus = link.bus_bytes.copy()
        bus[::2] = 64.0
        link = timing.Link(link.clock_hz / 1e6, bus * 8, link.dram_bpc * link.clock_hz / 1e9, np.zeros(len(bus)),
                           link.spm_bpc * link.clock_hz / 1e9, np.zeros(len(bus)),
                           np.where(np.arange(len(bus)) % 3 == 0, 4.0, link.elem), link.cols)
    variants = data.draw(st.sampled_from([(True, False), (True,), (False,)]))
    with mock.patch.object(timing, "DENSE_PAIRS_FROM", 1):
        parts = timing._dense_parts(tab, rows)
        assert parts is not None
        host = tab.plan["host"][rows]
        _same_flows(timing._parts_flows(parts, host, pts, link, variants),
                    _general_flows(tab, rows, pts, link, variants))
        with mock.patch.object(timing, "_few", lambda t, r: False):
            got = timing.pair_dram_reads(tab, rows, pts, link)
    assert all(_bits_equal(a, b) for a, b in zip(got, _general_reads(tab, rows, pts, link)))


def test_dense_parts_only_for_many_pairs_of_moves_blocks():
    """_dense_parts: from DENSE_PAIRS_FROM pairs, every block a _Moves; a block holding every pair in order is
    itself (no copy), a block holding a few gathered, pairs' positions None when a block holds every pair."""
    tab, rows, _, _ = next(c for c in _chosen_tables("emaxvr", "vgg16", 40, 3) if len(c[0].moves) > 1)
    assert timing._every(tab, rows)
    with mock.patch.object(timing, "DENSE_PAIRS_FROM", len(rows) + 1):
        assert timing._dense_parts(tab, rows) is None
    with mock.patch.object(timing, "DENSE_PAIRS_FROM", 1):
        parts = timing._dense_parts(tab, rows)
        assert [b for b, _ in parts] == [b for b, _ in tab.moves]  # (every plan: the blocks themselves)
        assert all(sel is not None for _, sel in parts)
        one = tab.moves[0][1][:5]
        (b, sel), = timing._dense_parts(tab, one)
        assert sel is None and len(b.xfer_on) == 5
        slot = traffic.PlanTable(tab.plan, tab.label, tab.src,
                                 ((_tables("emaxvr", "vgg16", 40, 11)[0].moves[0][0], tab.moves[0][1]),))
        assert timing._dense_parts(slot, one) is None  # (a _SlotMoves block: the sub-tables)


def test_a_batch_prices_its_choice_by_dense_parts():
    """A random EMAXVR batch's choice and report go through _parts_flows and the dense DRAM reads (checked to
    happen), and the batch equals itself priced by the sub-tables (DENSE_PAIRS_FROM out of reach)."""
    m = get_model("emaxvr")
    rows = m.params.random_rows(60, np.random.default_rng(21))
    hits = []
    real = timing._parts_flows

    def spy(*a, **k):
        hits.append(1)
        return real(*a, **k)

    em.workload_plans.cache_clear()
    with mock.patch.object(timing, "DENSE_PAIRS_FROM", 64), mock.patch.object(timing, "_parts_flows", spy):
        fast = m.evaluate_points("vgg16", rows)
    em.workload_plans.cache_clear()
    with mock.patch.object(timing, "DENSE_PAIRS_FROM", 1 << 62):
        slow = m.evaluate_points("vgg16", rows)
    em.workload_plans.cache_clear()
    assert hits
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]


@st.composite
def _wide_blocks(draw):
    """A random block of up to 40 read and host columns (past READ_ORDER_TABLE_UPTO), kinds named in any order."""
    n = draw(st.integers(1, 30))
    ns, n_st, n_h = draw(st.integers(1, 24)), draw(st.integers(0, 8)), draw(st.integers(0, 8))
    flags = lambda cols: np.array(draw(st.lists(st.booleans(), min_size=n * cols, max_size=n * cols)), bool).reshape(n, cols)
    mat = lambda cols: np.array(draw(st.lists(_VALUE, min_size=n * cols, max_size=n * cols)), dtype=float).reshape(n, cols)
    rd_kind = np.array(draw(st.lists(st.integers(0, 4), min_size=ns + n_st, max_size=ns + n_st)), dtype=np.int64)
    h_kind = np.array(draw(st.lists(st.integers(0, 4), min_size=n_h, max_size=n_h)), dtype=np.int64)
    x = mat(ns)
    return traffic._Moves(flags(ns), np.zeros(ns, np.int64), np.zeros(ns, bool), x, x, x, flags(ns), flags(ns + n_st),
                          mat(ns + n_st), mat(ns + n_st), rd_kind, flags(n_h), mat(n_h), h_kind)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(b=_wide_blocks(), table=st.booleans())
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_read_order_of_wide_blocks_equals_the_blocks(b, table):
    """timing._read_order by a sort of the codes (many columns) or a table of every code equals _Moves.read_order
    and the sub-tables' order."""
    with mock.patch.object(timing, "READ_ORDER_TABLE_UPTO", 64 if table and b.rd_on.shape[1] + b.h_on.shape[1] <= 16
                           else 0):
        got = timing._read_order(b)
    assert got.dtype == np.int64 and np.array_equal(got, b.read_order())
    assert np.array_equal(got, b.entries()["read_order"])


# ---------------------------------------------------------------- the plans no step reads
def _planned(arch: str, wl: str, rows: list[dict], skip: bool) -> list:
    """Every chunk's (_Planned, resident, keep, Plans) while ``rows`` of ``wl`` are evaluated, SKIP_UNREAD_PLANS
    ``skip``."""
    got = []
    real = em._final_plans

    def spy(p, rejections, lt, fused, fused_at, resident, keep):
        out = real(p, rejections, lt, fused, fused_at, resident, keep)
        got.append((p, resident.copy(), keep.copy(), out))
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "SKIP_UNREAD_PLANS", skip), mock.patch.object(em, "_final_plans", spy):
        batch = get_model(arch).evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    return got, batch


@SLOW
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet", "resnet50", "lenet"]),
       mixed=st.booleans())
def test_a_batch_without_the_unread_plans_equals_it_with_them(seed, wl, mixed):
    """Random points (and mixed: small arrays and LMMs, criterion=dram: the dynamic programming, fused pooling)
    give every point the same contract dictionary with the unread plans left out as with every plan planned; the
    same chaining decisions, the same kept plans (every column, label and source row) and each segment's
    statistics the chaining reads; fewer plans planned (checked)."""
    m = get_model("emaxvr")
    rows = _rows("emaxvr", 24, seed) if mixed else m.params.random_rows(24, np.random.default_rng(seed))
    fast, fb = _planned("emaxvr", wl, rows, True)
    slow, sb = _planned("emaxvr", wl, rows, False)
    assert [_dump(fb.point(i)) for i in range(fb.n)] == [_dump(sb.point(i)) for i in range(sb.n)]
    assert len(fast) == len(slow)
    fewer = 0
    for (pf, rf, kf, of), (ps, rs, ks, os_) in zip(fast, slow):
        assert np.array_equal(rf, rs) and np.array_equal(kf, ks)
        assert np.array_equal(of.start, os_.start) and np.array_equal(of.count, os_.count)
        a, b = of.table, os_.table
        assert a.plan.keys() == b.plan.keys() and all(_bits_equal(a.plan[k], b.plan[k]) for k in b.plan)
        assert all(a.label[k].tolist() == b.label[k].tolist() for k in b.label)
        fewer += len(ps.table) - len(pf.table)
        # the chainable plans' statistics are those of every plan, but in the contexts left out whole (a first layer
        # run made resident, a last one keeping its output: no plan at all there now); every plan's statistics
        # the same in the contexts neither resident nor kept
        gone = (pf.n_all == 0) & (ps.n_all > 0)
        assert not gone.reshape(-1, 4)[:, 0].any()
        for stat in ("n_chain", "macs_chain", "dram_chain"):
            x, y = getattr(pf, stat), getattr(ps, stat)
            assert _bits_equal(x[~gone], y[~gone]), stat
        for stat in ("n_all", "macs_all", "dram_all"):
            x, y = getattr(pf, stat).reshape(-1, 4)[:, 0], getattr(ps, stat).reshape(-1, 4)[:, 0]
            assert _bits_equal(x, y), stat
    assert fewer > 0


def test_unread_rows_are_the_greedy_edges():
    """_unread_rows: the resident contexts of a combination's first layer run and the kept contexts of its last,
    under the greedy chaining only."""
    nk = 2
    first, last, greedy = np.array([1, 0]), np.array([4, 3]), np.array([True, False])
    seg = np.arange(6 * nk * 4)
    got = em._unread_rows(seg, nk, first, last, greedy)
    ctx, lk = seg % 4, seg // 4
    k, layer = lk % nk, lk // nk
    want = (k == 0) & (((layer == 1) & (ctx >= 2)) | ((layer == 4) & (ctx % 2 == 1)))
    assert np.array_equal(got, want)


def _builder_calls(n: int, seed: int) -> list:
    """(shapes, rows) of every EMAXVR builder call while ``n`` mixed points of VGG16 are evaluated."""
    calls = []
    real = traffic.emaxvr_plans

    def spy(shapes, r):
        calls.append((shapes, r))
        return real(shapes, r)

    _evaluate_spied(em, "emaxvr_plans", spy, "emaxvr", "vgg16", _rows("emaxvr", n, seed))
    return calls


def test_chained_only_rows_get_their_chainable_plans():
    """The builder with ``chained_only`` plans of such rows exactly their chainable plans of the builder without
    it (same columns bit for bit, in order), and the other rows' plans unchanged."""
    calls = _builder_calls(30, 5)
    real = traffic.emaxvr_plans
    seen = 0
    for shapes, r in calls:
        if "chained_only" not in r:
            continue
        code_all = np.asarray(r["chained_only"])
        zeros = np.zeros(len(code_all), np.int8)
        if isinstance(r, traffic.Rows):  # (the same rows, chained_only 0: a first source giving it)
            n_base = len(code_all) - r.n_tail
            plain = traffic.Rows(r.given, [({"chained_only": zeros[:n_base]}, np.arange(n_base))] + list(r.sources),
                                 r.tail, r.n_tail)
            plain.maps, plain.at_map = r.maps, r.at_map
        else:
            plain = {**r, "chained_only": zeros}
        got, full = real(shapes, r), real(shapes, plain)
        code = code_all[full.src]
        search = np.asarray(r["dram_search"], dtype=bool)[full.src]
        only = (code == 2) | (code == 1) & search
        chainable = (full.plan["bands"] == 1) & (full.plan["psum_home"] != traffic.PSUM_HOMES.index("dram"))
        keep = np.flatnonzero(~only | chainable)
        seen += len(full) - len(keep)
        assert np.array_equal(got.src, full.src[keep])
        for k in full.plan:
            assert _bits_equal(got.plan[k], np.asarray(full.plan[k])[keep]), k
    assert seen


def test_reads_of_gathers_the_read_matrices_and_parts_name_consecutive_pairs_by_slices():
    """_reads_of: the DRAM and host reads' matrices of the rows asked as take gives them (the transfers' empty);
    a batch's every plan in order: each block's pairs consecutive, named by a slice."""
    tab, rows, _, _ = next(c for c in _chosen_tables("emaxvr", "vgg16", 40, 3) if len(c[0].moves) > 1)
    b = tab.moves[0][0]
    r = np.array([3, 1, 4, 1, 5, 0], dtype=np.int64)
    got, want = timing._reads_of(b, r), b.take(r)
    for f in ("rd_on", "rd_count", "rd_each", "rd_kind", "h_on", "h_bytes", "h_kind"):
        x, y = getattr(got, f), getattr(want, f)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), f
    assert got.xfer_on.shape == (0, b.xfer_on.shape[1])
    with mock.patch.object(timing, "DENSE_PAIRS_FROM", 1):
        parts = timing._dense_parts(tab, rows)
    assert all(isinstance(sel, slice) for _, sel in parts)
    assert sum(sel.stop - sel.start for _, sel in parts) == len(rows)

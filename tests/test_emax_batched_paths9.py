"""EMAX batched paths, ninth round (issue 15): a plan table taking every plan in order gives its own columns
(``traffic.PlanTable.take`` -> ``PlanTable._every``, ``traffic._is_every``: an EMAXV chunk keeps every plan it
builds). Each fast path is compared with the general one bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import model as em
from archmodels.emax import traffic

from .test_emax_batched_paths5 import _dump, _rows, _same_tables

_CAUGHT: dict = {}


def _tables(arch: str, wl: str, n: int, seed: int) -> list:
    """Every builder table (conv and pooling, FC) planned while ``n`` random points of ``wl`` are evaluated (caches
    cleared): large ones hold :class:`traffic._SlotMoves` blocks, one point's :class:`traffic._Moves`."""
    key = (arch, wl, n, seed)
    if key not in _CAUGHT:
        got = []

        def spy(real):
            def f(*args):
                out = real(*args)
                got.append(out)
                return out
            return f

        em.workload_plans.cache_clear()
        with mock.patch.object(em, "emaxvr_plans", spy(traffic.emaxvr_plans)), \
                mock.patch.object(em, "emaxv_plans", spy(traffic.emaxv_plans)), \
                mock.patch.object(em, "fc_plans", spy(traffic.fc_plans)):
            get_model(arch).evaluate_points(wl, _rows(arch, n, seed))
        em.workload_plans.cache_clear()
        _CAUGHT[key] = got
    return _CAUGHT[key]


def _general_take(tab: traffic.PlanTable, rows: np.ndarray) -> traffic.PlanTable:
    with mock.patch.object(traffic, "_is_every", lambda rows, moves: False):
        return tab.take(rows)


def _same_blocks(got: traffic.PlanTable, want: traffic.PlanTable) -> None:
    """The two tables' data movement blocks: the same matrices (values, dtypes, shapes), the same plan rows."""
    assert len(got.moves) == len(want.moves)
    for (a, at_a), (b, at_b) in zip(got.moves, want.moves):
        assert type(a) is traffic._Moves and type(b) is traffic._Moves
        assert np.array_equal(at_a, at_b)
        for f in traffic._Moves.__dataclass_fields__:
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True), f


@pytest.mark.parametrize("arch,wl,n", [("emaxv", "vgg16-conv", 200), ("emaxv", "vgg16", 1), ("emaxvr", "alexnet", 40),
                                       ("emaxvr", "vgg16", 1), ("emaxv", "lenet", 60)])
def test_take_of_every_plan_equals_the_general_take(arch, wl, n):
    """PlanTable.take of every plan in order (the table's own columns, each block's matrices as take builds them)
    equals the general take (every column gathered, every block taken row by row): every plan column (dtype and
    bits), label, source row, entry table and block matrix; tables with _SlotMoves blocks (a batch's) and with
    _Moves blocks (one point's), conv, pooling and FC builders'."""
    kinds = set()
    for tab in _tables(arch, wl, n, 5):
        rows = np.arange(len(tab))
        got, want = tab.take(rows), _general_take(tab, rows)
        _same_tables(got, want)
        _same_blocks(got, want)
        kinds |= {type(b).__name__ for b, _ in tab.moves}
        for (b, _), (g, _) in zip(tab.moves, got.moves):
            if isinstance(b, traffic._Moves):
                assert g is b  # (a _Moves block as it is, so the one-point paths see _Moves: timing._few)
        # the columns are the table's own (read only), in dicts of their own
        assert got.plan is not tab.plan and all(got.plan[k] is v for k, v in tab.plan.items())
    assert kinds


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_take_of_other_rows_is_the_general_take(data):
    """Rows that are not every plan in order (a permutation, a subset, repeats left out: take's rows are distinct,
    reversed, every plan but one) are taken by the general path: _is_every says no, the result equals it."""
    tab = _tables("emaxv", "vgg16-conv", 200, 5)[0]
    n = len(tab)
    kind = data.draw(st.sampled_from(["perm", "subset", "reversed", "drop_last", "drop_first"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    rows = {"perm": rng.permutation(n), "subset": np.sort(rng.choice(n, int(rng.integers(0, n)), replace=False)),
            "reversed": np.arange(n)[::-1].copy(), "drop_last": np.arange(n - 1), "drop_first": np.arange(1, n)}[kind]
    if kind == "perm" and (rows == np.arange(n)).all():
        rows = rows[::-1].copy()
    assert not (len(rows) == n and traffic._is_every(rows, tab.moves))
    got, want = tab.take(rows), _general_take(tab, rows)
    _same_tables(got, want)
    _same_blocks(got, want)


def test_is_every_checks_the_blocks():
    """_is_every: rows 0..n-1 only, each block's plan rows increasing, a _SlotMoves block planning as many plans as
    it has rows (else its matrices of every plan would not be the rows' own)."""
    tab = next(t for t in _tables("emaxv", "vgg16-conv", 200, 5)
               if any(isinstance(b, traffic._SlotMoves) for b, _ in t.moves))
    rows = np.arange(len(tab))
    assert traffic._is_every(rows, tab.moves)
    assert not traffic._is_every(rows[::-1], tab.moves)
    (block, at), *rest = tab.moves
    swapped = at.copy()
    if len(at) > 1:
        swapped[[0, 1]] = swapped[[1, 0]]
        assert not traffic._is_every(rows, ((block, swapped), *rest))
    if isinstance(block, traffic._SlotMoves):
        assert not traffic._is_every(rows, ((block, at[:-1]), *rest))


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16-conv", "vgg16", "lenet"]))
def test_a_batch_taking_every_plan_equals_the_general_take(seed, wl):
    """A batch of random EMAXV points (every chunk keeps every plan) gives every point the contract dictionary it
    gets with the general take."""
    m = get_model("emaxv")
    rows = _rows("emaxv", 30, seed)
    em.workload_plans.cache_clear()
    fast = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    with mock.patch.object(traffic, "_is_every", lambda rows, moves: False):
        slow = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 40), step=st.integers(1, 12))
def test_group_chunks_equal_the_groups_of_each_chunk(data, n, step):
    """_Groups.chunks (every point in one array, each chunk its slice) gives, chunk by chunk, what _Groups of the
    chunk's point arrays gives: the points and counts of any combinations taken, the one-combination case included."""
    groups = [data.draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=4)) for _ in range(n)]
    chunks = em._Groups.chunks(groups, step)
    assert len(chunks) == len(range(0, n, step))
    for lo, got in zip(range(0, n, step), chunks):
        want = em._Groups([np.array(v) for v in groups[lo:lo + step]])
        assert got.one == want.one and got.lens.tolist() == want.lens.tolist()
        assert got.flat.dtype == want.flat.dtype and got.flat.tolist() == want.flat.tolist()
        ks = np.array(data.draw(st.lists(st.integers(0, len(want.lens) - 1), max_size=8)), dtype=np.int64)
        (gp, gn), (wp, wn) = got.take(ks), want.take(ks)
        assert gp.dtype == wp.dtype and gp.tolist() == wp.tolist() and gn.tolist() == wn.tolist()


@settings(max_examples=80, deadline=None)
@given(data=st.data(), size=st.integers(1, 20_000), sort=st.booleans(), obj=st.booleans())
def test_scatter_index_writes_as_the_positions(data, size, sort, obj):
    """a[_scatter_index(flat, size)] = v writes what a[flat] = v writes: distinct positions in any order, above and
    below SCATTER_MASK_FROM, float and object arrays (a mask only for strictly increasing positions)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    flat = rng.choice(size, int(rng.integers(0, size + 1)), replace=False)
    if sort:
        flat = np.sort(flat)
    v = rng.random(len(flat))
    a, b = (np.full(size, None, dtype=object), np.full(size, None, dtype=object)) if obj else \
        (np.full(size, np.nan), np.full(size, np.nan))
    vals = v.astype(object) if obj else v
    to = em._scatter_index(flat, size)
    if to.dtype == bool:
        assert len(flat) >= em.SCATTER_MASK_FROM and (np.diff(flat) > 0).all()
    a[to] = vals
    b[flat] = vals
    assert a.tolist() == b.tolist() if obj else np.array_equal(a, b, equal_nan=True)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16-conv", "alexnet", "lenet"]), mixed=st.booleans())
@example(seed=3, arch="emaxv", wl="vgg16-conv", mixed=False)
def test_a_batch_equals_it_without_the_every_plan_and_mask_paths(seed, arch, wl, mixed):
    """A batch of random points gives every point the contract dictionary it gets with every gather taken by
    position (timing._every never true: _plan_metrics' columns, the labels, pair_dram_reads' sub-tables) and the
    results scattered by position (no mask); random points of the declared space (EMAXV: one plan per (layer,
    point), so the choice reads every plan in order: checked to happen) or ``mixed`` with small arrays, LMMs and
    criterion=dram (layers without a plan, several candidates)."""
    m = get_model(arch)
    n = 300 if arch == "emaxv" else 60
    rows = _rows(arch, n, seed) if mixed else m.params.random_rows(n, np.random.default_rng(seed))
    real, hits = em.timing._every, []

    def spy(tab, r):
        out = real(tab, r)
        hits.append(out)
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "SCATTER_MASK_FROM", 1), mock.patch.object(em.timing, "_every", spy):
        fast = m.evaluate_points(wl, rows)  # (every chunk's increasing pairs by a mask)
    em.workload_plans.cache_clear()
    with mock.patch.object(em.timing, "_every", lambda tab, rows: False), \
            mock.patch.object(em, "SCATTER_MASK_FROM", 1 << 62):
        slow = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    if arch == "emaxv" and wl == "vgg16-conv" and not mixed:
        assert sum(hits) >= 6  # (the choice, its states, flows, DRAM reads, metrics and labels: every plan in order)
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """The same values bit for bit where they are numbers (signs of zeros included), NaN where the other is NaN
    (of either sign: a sum of two NaNs keeps its first operand's, and the dense sums and ``np.bincount`` add in
    different orders; the contract prints NaN without a sign)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
        return False
    numbers = ~np.isnan(a)
    return np.array_equal(np.signbit(a[numbers]), np.signbit(b[numbers]))


_SPECIAL = st.sampled_from([0.0, -0.0, 1.0, 3.0, 0.5, 7.25, 1e300, np.inf, np.nan, -2.0])
_VALUE = st.one_of(_SPECIAL, st.floats(0.0, 1e6, allow_nan=False), st.integers(0, 4096).map(float))


@st.composite
def _blocks(draw):  # noqa: C901
    """A random [plans, columns] block of every plan (some columns unused per plan), its host bytes, points and link:
    phases in any order, reads and writes, weights and other kinds, staging columns, host reads, special values."""
    n = draw(st.integers(1, 12))
    ns, n_st, n_h = draw(st.integers(1, 4)), draw(st.integers(0, 2)), draw(st.integers(0, 2))  # (<= 8 columns)
    mat = lambda cols: np.array(draw(st.lists(_VALUE, min_size=n * cols, max_size=n * cols)), dtype=float).reshape(n, cols)
    flags = lambda cols: np.array(draw(st.lists(st.booleans(), min_size=n * cols, max_size=n * cols)), bool).reshape(n, cols)
    phase = np.array(draw(st.lists(st.integers(0, 4), min_size=ns, max_size=ns)), dtype=np.int64)
    write = np.array(draw(st.lists(st.booleans(), min_size=ns, max_size=ns)), bool)
    rd_kind = np.array(draw(st.lists(st.integers(0, 4), min_size=ns + n_st, max_size=ns + n_st)), dtype=np.int64)
    h_kind = np.array(draw(st.lists(st.integers(0, 4), min_size=n_h, max_size=n_h)), dtype=np.int64)
    bursts, per_burst, par, each_x, each_s = mat(ns), mat(ns), mat(ns), mat(ns), mat(n_st)
    dram = flags(ns)
    count = bursts * per_burst
    xfer_on = flags(ns) & (count > 0)
    rd_on = np.concatenate([xfer_on & dram & ~write, flags(n_st)], axis=1)
    block = traffic._Moves(xfer_on, phase, write, bursts, per_burst, par, dram, rd_on,
                           np.concatenate([count, mat(n_st)], axis=1), np.concatenate([each_x, each_s], axis=1), rd_kind,
                           flags(n_h), mat(n_h), h_kind)
    host = np.array(draw(st.lists(_VALUE, min_size=n, max_size=n)), dtype=float)
    n_pts = draw(st.integers(1, 4))
    same_bus = draw(st.booleans())
    pick = lambda xs: [draw(st.sampled_from(xs)) for _ in range(n_pts)]
    link = em.Link(np.array(pick([50.0, 240.0, 1000.0])), np.array(pick([64.0] if same_bus else [32.0, 64.0, 512.0])),
                   np.array(pick([0.1, 12.8, 1000.0])), np.array(pick([0.0, 62.5, 10000.0])),
                   np.array(pick([0.1, 15.36, 10000.0])), np.array(pick([0.0, 4.0, 1000.0])),
                   np.array(pick([2.0] if same_bus else [2.0, 4.0])), np.array(pick([2.0, 8.0])))
    pts = np.array([draw(st.integers(0, n_pts - 1)) for _ in range(n)], dtype=np.int64)
    tab = traffic.PlanTable({"host": host}, {}, np.arange(n), ((block, np.arange(n)),))
    return tab, pts, link


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_blocks(), variants=st.sampled_from([(True, False), (True,), (False,)]))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the sub-tables' own: infinities and NaN on purpose)
def test_dense_flows_and_reads_equal_the_sub_tables(case, variants):
    """Every plan of one block in order (_dense): the transfers' sums column by column over the matrices
    (_dense_flows, _dense_reads) equal the sub-tables' bincounts (_entry_flows, the general pair_dram_reads) bit for
    bit: every key, both variants, staging and host reads, NaN, infinities, -0.0, unused columns holding any value,
    one or several bus widths."""
    from archmodels.emax import timing

    tab, pts, link = case
    rows = np.arange(len(tab))
    block = timing._dense(tab, rows)
    assert block is tab.moves[0][0]
    want = timing._entry_flows(tab, rows, pts, link, variants)
    got = timing._dense_flows(block, tab.plan["host"], pts, link, variants)
    assert sorted(got) == sorted(want)
    for k in want:
        assert _bits_equal(got[k], want[k]), k
    with mock.patch.object(timing, "_few", lambda tab, rows: False):  # (not the one-point paths: a batch's)
        with mock.patch.object(timing, "_dense", lambda tab, rows: None):
            want_r = timing.pair_dram_reads(tab, rows, pts, link)
        got_r = timing.pair_dram_reads(tab, rows, pts, link)
    assert len(got_r) == 2 and all(_bits_equal(a, b) for a, b in zip(got_r, want_r))


def test_dense_only_for_every_plan_of_one_small_block():
    """_dense: the pairs every plan in order, one _Moves block of the table's plans in order, few columns; else
    the sub-tables (None)."""
    from archmodels.emax import timing

    tab = _tables("emaxv", "vgg16-conv", 200, 5)[0].take(np.arange(len(_tables("emaxv", "vgg16-conv", 200, 5)[0])))
    rows = np.arange(len(tab))
    assert timing._dense(tab, rows) is tab.moves[0][0]
    assert timing._dense(tab, rows[:-1]) is None and timing._dense(tab, rows[::-1].copy()) is None
    (b, at), = tab.moves
    assert timing._dense(traffic.PlanTable(tab.plan, tab.label, tab.src, ((b, at[::-1].copy()),)), rows) is None
    with mock.patch.object(timing, "DENSE_COLUMNS_UPTO", 1):
        assert timing._dense(tab, rows) is None
    vr = next(t for t in _tables("emaxvr", "alexnet", 40, 5) if len(t) > 64).take(np.arange(64))
    assert timing._dense(vr, np.arange(64)) is None  # (EMAXVR: ~30 columns)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_blocks())
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_read_order_column_by_column_equals_the_blocks(case):
    """timing._read_order (one where per column) equals _Moves.read_order and the sub-tables' read_order
    (_Moves.entries) of random blocks: kinds named by reads and host reads, in any order, some by none."""
    from archmodels.emax import timing

    tab, _, _ = case
    b = tab.moves[0][0]
    got = timing._read_order(b)
    assert got.dtype == np.int64 and np.array_equal(got, b.read_order())
    assert np.array_equal(got, b.entries()["read_order"])


def test_read_order_of_a_batch_block():
    """The same on an EMAXV batch's block (every kind named or not)."""
    from archmodels.emax import timing

    for tab in _tables("emaxv", "vgg16-conv", 200, 5):
        b = tab.take(np.arange(len(tab))).moves[0][0]
        assert np.array_equal(timing._read_order(b), b.read_order())

"""EMAX batched paths, twelfth round, second part (issue 15): ``traffic._SlotMoves.take`` gathers each slot column
straight into its matrix column (``traffic._fill_columns``: ``np.take(..., out=)``) and writes the transfer and
staging columns of the DRAM reads' matrices side by side in one matrix, instead of gathering each column, copying it
into a matrix, then concatenating the matrices. Compared bit for bit (values, dtypes, shapes, memory layout) with the
previous implementation, kept here as the reference, on every ``take`` of real batches and on synthetic blocks."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import model as em
from archmodels.emax import traffic

from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths11 import _evaluate_spied


def _reference_take(b: traffic._SlotMoves, rows: np.ndarray, every: bool = False) -> traffic._Moves:
    """``_SlotMoves.take`` as it was before this round's second part: gather, copy into a matrix, concatenate."""
    m = len(rows)
    taken: dict = {}

    def pick(v):
        if not isinstance(v, np.ndarray) or every:
            return v
        hit = taken.get(id(v))
        if hit is None or hit[0] is not v:
            hit = taken[id(v)] = (v, v[rows])
        return hit[1]

    def mat(values, dtype=float):
        return traffic._matrix([pick(v) for v in values], m, dtype)

    on, bursts, per_burst, each, dram = (mat(b.on, bool), mat(b.bursts), mat(b.per_burst), mat(b.each),
                                         mat(b.dram, bool))
    count = bursts * per_burst
    rd_on = traffic._hcat([on & dram & ~b.write & (count > 0), mat(b.s_on, bool)])
    rd_count = traffic._hcat([count, mat(b.s_count)])
    rd_each = traffic._hcat([each, mat(b.s_each)])
    return traffic._Moves(on & (count > 0), b.phase, b.write, bursts, per_burst, mat(b.par), dram, rd_on, rd_count,
                          rd_each, b.rd_kind, mat(b.h_on, bool), mat(b.h_bytes), b.h_kind)


def _same_moves(got: traffic._Moves, want: traffic._Moves) -> None:
    """Every matrix the same bit for bit (NaN payloads and zero signs included), dtype, shape and layout."""
    for name in traffic._Moves.__dataclass_fields__:
        g, w = getattr(got, name), getattr(want, name)
        assert g.dtype == w.dtype and g.shape == w.shape, name
        assert g.flags.f_contiguous == w.flags.f_contiguous, name
        assert g.tobytes(order="F") == w.tobytes(order="F"), name


def _takes(arch: str, wl: str, rows: list[dict]) -> int:
    """Evaluate ``rows`` of ``wl`` with every ``_SlotMoves.take`` checked against the reference (also on a few
    other row selections of the same block); the number of takes checked."""
    seen = 0
    real = traffic._SlotMoves.take
    rng = np.random.default_rng(len(rows))

    def spy(self, r, every=False):
        nonlocal seen
        seen += 1
        got = real(self, r, every)
        _same_moves(got, _reference_take(self, r, every))
        for sel in (rng.permutation(self.n)[: self.n // 3], np.arange(self.n)[::-1][:17], np.zeros(0, np.int64)):
            _same_moves(real(self, sel), _reference_take(self, sel))
        return got

    _evaluate_spied(traffic._SlotMoves, "take", spy, arch, wl, rows)
    return seen


@pytest.mark.parametrize("arch,wl,n,seed,mixed", [("emaxvr", "vgg16", 300, 1, False), ("emaxvr", "alexnet", 200, 2, True),
                                                  ("emaxvr", "resnet50", 60, 3, True), ("emaxv", "vgg16", 300, 4, True),
                                                  ("emaxvr", "vgg16", 3, 5, False)])
def test_slot_moves_take_equals_the_reference_on_batches(arch, wl, n, seed, mixed):
    """Every take of a random or mixed batch (and of other selections of the same blocks) equals the reference."""
    rows = _rows(arch, n, seed) if mixed else get_model(arch).params.random_rows(n, np.random.default_rng(seed))
    assert _takes(arch, wl, rows) or n < 10  # (takes happened; a few points' tables may be built as matrices)


def test_whole_batch_unchanged_with_the_reference_take():
    """A batch evaluated with the reference take gives the same contract values."""
    m = get_model("emaxvr")
    rows = _rows("emaxvr", 80, 7)
    em.workload_plans.cache_clear()
    got = m.evaluate_points("vgg16", rows)
    em.workload_plans.cache_clear()
    with mock.patch.object(traffic._SlotMoves, "take", _reference_take):
        want = m.evaluate_points("vgg16", rows)
    em.workload_plans.cache_clear()
    assert [_dump(got.point(i)) for i in range(got.n)] == [_dump(want.point(i)) for i in range(want.n)]


_VALUES = st.sampled_from([0.0, -0.0, 1.0, 3.0, 0.5, 1e300, np.inf, np.nan, -2.0, 7.0])


@st.composite
def _blocks(draw):
    """A synthetic _SlotMoves: columns shared between slots and between matrices of different dtypes (int, float,
    bool arrays), scalars, no stages or hosts sometimes; and rows to take."""
    n = draw(st.integers(0, 12))
    ns, nst, nh = draw(st.integers(0, 5)), draw(st.integers(0, 3)), draw(st.integers(0, 2))
    pool = [np.array(draw(st.lists(_VALUES, min_size=n, max_size=n)), dtype=float),
            np.array(draw(st.lists(st.integers(-3, 9), min_size=n, max_size=n)), dtype=np.int64),
            np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)]
    scal = st.sampled_from([0.0, 1.0, 2.5, True, False, 3])

    def cols(k):
        return tuple(draw(st.one_of(st.sampled_from(pool), scal)) for _ in range(k))

    b = traffic._SlotMoves(n, cols(ns), cols(ns), cols(ns), cols(ns), cols(ns), cols(ns),
                           np.array(draw(st.lists(st.integers(0, 4), min_size=ns, max_size=ns)), dtype=np.int64),
                           np.array(draw(st.lists(st.booleans(), min_size=ns, max_size=ns)), dtype=bool),
                           np.array(draw(st.lists(st.integers(0, 3), min_size=ns + nst, max_size=ns + nst)),
                                    dtype=np.int64),
                           cols(nst), cols(nst), cols(nst), cols(nh), cols(nh),
                           np.array(draw(st.lists(st.integers(0, 3), min_size=nh, max_size=nh)), dtype=np.int64))
    rows = np.array(draw(st.lists(st.integers(0, n - 1), max_size=15, unique=True)) if n else [], dtype=np.int64)
    return b, rows


@settings(max_examples=300, deadline=None)
@given(case=_blocks())
def test_slot_moves_take_equals_the_reference_on_synthetic_blocks(case):
    """Any block, any distinct rows in any order, and every row (``every``): the reference's matrices."""
    b, rows = case
    with np.errstate(invalid="ignore", over="ignore"):
        _same_moves(b.take(rows), _reference_take(b, rows))
        _same_moves(b.take(np.arange(b.n), every=True), _reference_take(b, np.arange(b.n), every=True))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_fill_columns_equals_gather_then_assign(data):
    """``_fill_columns`` of arrays of any dtype into a matrix of any dtype (shared arrays gathered once) equals
    ``out[:, j] = v[rows]``; negative rows index as numpy does."""
    n = data.draw(st.integers(1, 10))
    pool = [np.arange(n, dtype=float) * -1.5, np.arange(n, dtype=np.int64) - 2, np.arange(n) % 2 == 0]
    values = data.draw(st.lists(st.one_of(st.sampled_from(pool), st.sampled_from([0.0, 2.0, True])), max_size=6))
    rows = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=8)), dtype=np.int64)
    for dtype in (float, bool, np.int64):
        out = np.empty((len(rows), len(values)), dtype=dtype, order="F")
        traffic._fill_columns(out, tuple(values), rows, {})
        want = np.empty_like(out)
        for j, v in enumerate(values):
            want[:, j] = v[rows] if isinstance(v, np.ndarray) else v
        assert np.array_equal(out, want)


def _same_columns(got: dict, want: dict) -> None:
    """The same keys in the same order, each column of the same dtype, shape and values (bit for bit)."""
    assert list(got) == list(want)
    for k in want:
        g, w = got[k], want[k]
        assert g.dtype == w.dtype and g.shape == w.shape, k
        if w.dtype == object:
            assert g.tolist() == w.tolist(), k
        else:
            assert g.tobytes() == w.tobytes(), k


def _same_tables(got: traffic.PlanTable, want: traffic.PlanTable) -> None:
    _same_columns(got.plan, want.plan)
    _same_columns(got.label, want.label)
    assert got.src.dtype == want.src.dtype and np.array_equal(got.src, want.src)
    assert len(got.moves) == len(want.moves)
    for (gb, ga), (wb, wa) in zip(got.moves, want.moves):
        assert type(gb) is type(wb) and ga.dtype == wa.dtype and np.array_equal(ga, wa)
        _same_moves(gb, wb)


@pytest.mark.parametrize("arch,wl,n,seed,mixed", [("emaxvr", "vgg16", 300, 11, False), ("emaxvr", "alexnet", 200, 12, True),
                                                  ("emaxvr", "vgg16", 150, 13, True)])
def test_concat_take_equals_concatenating_then_taking(arch, wl, n, seed, mixed):
    """Every ``Concat.take`` of a batch (and other selections of the same tables: every plan, a table's plans only,
    none, increasing subsets, rows going back: the slow path) equals ``concat(tables).take(rows)``."""
    rows = _rows(arch, n, seed) if mixed else get_model(arch).params.random_rows(n, np.random.default_rng(seed))
    seen = 0
    real = traffic.Concat.take
    rng = np.random.default_rng(seed)

    def spy(self, r):
        nonlocal seen
        seen += 1
        got = real(self, r)
        _same_tables(got, traffic.concat(self.tables).take(r))
        n_all, first = len(self), len(self.tables[0])
        for sel in (np.arange(n_all), np.arange(first), np.arange(first, n_all), np.zeros(0, np.int64),
                    np.sort(rng.permutation(n_all)[: n_all // 4]), rng.permutation(n_all)[:50]):
            _same_tables(real(self, sel), traffic.concat(self.tables).take(sel))
        return got

    _evaluate_spied(traffic.Concat, "take", spy, arch, wl, rows)
    assert seen


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_gathered_equals_concatenating_the_gathers(data):
    """``_gathered`` of columns of the same or different dtypes and widths (floats, ints, bools, texts, objects,
    2-D) in any number of parts, any rows (negative ones too), equals ``np.concatenate`` of the gathers."""
    kinds = [lambda n: np.arange(n) * -0.5, lambda n: np.arange(n, dtype=np.int64), lambda n: np.arange(n) % 3 == 0,
             lambda n: np.array([f"t{i}" * (1 + i % 3) for i in range(n)]), lambda n: np.array([(i,) for i in range(n)] +
             [None], dtype=object)[:n], lambda n: np.arange(2 * n, dtype=float).reshape(n, 2),
             lambda n: np.arange(n, dtype=np.int32)]
    parts = []
    for _ in range(data.draw(st.integers(1, 3))):
        n = data.draw(st.integers(1, 8))
        cols = {k: kinds[data.draw(st.sampled_from(options))](n)
                for k, options in (("a", [0]), ("b", [1, 6]), ("c", [3]), ("d", [4]), ("e", [2, 1]), ("f", [5]))}
        parts.append((cols, np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=6)), dtype=np.int64)))
    want = {k: np.concatenate([c[k][r] for c, r in parts]) for k in parts[0][0]}
    _same_columns(traffic._gathered(parts), want)

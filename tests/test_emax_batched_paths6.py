"""EMAX batched paths, sixth round (issue 15): the EMAXVR builder computes what does not depend on a row's context
once per mapping (``traffic.Rows.maps`` / ``at_map``, named by ``model._name_mappings``; ``traffic._vr_maps``) and
gathers it; one accumulation unit's SPM bytes as a per-mapping factor times the band-dependent one
(``traffic._unit_bytes``, ``traffic._Units``). Each fast path is compared with the general one bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import model as em
from archmodels.emax import traffic

from .test_emax_batched_paths5 import SLOW, _rows, _same_tables


def _without_maps(r: traffic.Rows) -> traffic.Rows:
    """The same rows, their mappings not named (every row its own mapping: the general path)."""
    return traffic.Rows(r.given, r.sources, r.tail, r.n_tail)


def _builder_calls(arch: str, wl: str, rows: list[dict]) -> list[tuple]:
    """(shapes, rows, whether its mappings were named) of every EMAXVR builder call while ``rows`` of ``wl`` are
    evaluated (caches cleared); a call with named mappings is also built with every row its own mapping and the two
    tables compared during the call (:func:`_same_tables`; the fused pooling passes' columns are filled in after)."""
    seen = []
    real = traffic.emaxvr_plans

    def spy(shapes, r):
        named = isinstance(r, traffic.Rows) and r.maps is not None
        general = real(shapes, _without_maps(r)) if named else None
        out = real(shapes, r)
        if named:
            _same_tables(out, general)
        seen.append((shapes, r, named))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(em, "emaxvr_plans", spy)
        em.workload_plans.cache_clear()
        get_model(arch).evaluate_points(wl, rows)
        em.workload_plans.cache_clear()
    return seen


@SLOW
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet", "resnet50"]),
       pins=st.booleans())
def test_builder_per_mapping_equals_per_row(seed, wl, pins):
    """emaxvr_plans with the rows' mappings named (what does not depend on the context computed once per mapping,
    gathered per row) gives the table it gives with every row its own mapping: every plan column (dtype and bits),
    label, source row and entry table; random points (some with small arrays and LMMs, some under criterion=dram,
    fused pooling passes in the same call, user pins of the schedule if ``pins``)."""
    rows = _rows("emaxvr", 40, seed)
    if pins:
        rng = np.random.default_rng(seed)
        for r in rows:
            r.update(psum_home=str(rng.choice(["auto", "spm", "dram"])), halo=str(rng.choice(["auto", "spm", "dram"])),
                     ic_loop=str(rng.choice(["auto", "outer", "inner"])), band_size=int(rng.choice([0, 0, 1, 3, 16])))
    calls = _builder_calls("emaxvr", wl, rows)
    named = [r for _, r, named in calls if named]  # (each table compared with the general one in the call)
    assert named  # the batch's rows are Rows with their mappings named
    for r in named:
        assert len(r.at_map) == len(r["icpar"]) and r.at_map.max() < len(r.maps["icpar"])
        assert len(r.maps["icpar"]) < len(r["icpar"])  # fewer mappings than rows (contexts)


def test_named_mappings_are_the_rows_mappings():
    """Rows.maps at Rows.at_map gives every column a row has except the context's (each row's mapping, layer,
    combination, pins and pooling pass): the same values and types as the rows' own columns."""
    calls = _builder_calls("emaxvr", "vgg16", _rows("emaxvr", 30, 3))
    r = next(r for _, r, named in calls if named)
    assert r.n_tail  # fused pooling passes ride along (each its own mapping)
    for k in ("shape", "icpar", "oc_chunk", "name", "mode", "outer", "spm", "elem", "band_size", "pin_halo",
              "has_pool", "pool_oh", "alus", "macs", "kernel_lmms"):
        a, b = np.asarray(r.maps[k])[r.at_map], np.asarray(r[k])
        assert a.dtype == b.dtype and a.tolist() == b.tolist(), k
    assert "resident" in r and "keep" in r and "resident" not in r.maps and "keep" not in r.maps


def test_a_batch_with_named_mappings_equals_one_without(monkeypatch):
    """A batch planned with the rows' mappings named gives every point the contract dictionary it gets without
    (model._name_mappings a no-op), for both pooling schedules and fused passes."""
    for wl in ("vgg16", "lenet"):
        m = get_model("emaxvr")
        rows = _rows("emaxvr", 30, 29)
        out = []
        for name in (True, False):
            if not name:
                monkeypatch.setattr(em, "_name_mappings", lambda *a: None)
            em.workload_plans.cache_clear()
            b = m.evaluate_points(wl, rows)
            out.append([json.dumps(b.point(i), sort_keys=True, default=str) for i in range(b.n)])
        em.workload_plans.cache_clear()
        monkeypatch.undo()
        assert out[0] == out[1], wl


def _unit_bytes_former(u: dict, t, at=slice(None)) -> np.ndarray:
    """One accumulation unit's SPM bytes as the builder wrote it before this round (every factor per row)."""
    oh_out, gpar, oc, oc_chunk, oh, ow_seg, e, units, ocp = (u[k][at] for k in ("oh_out", "gpar", "oc", "oc_chunk",
                                                                               "oh", "ow_seg", "e", "units", "ocp"))
    return np.where(oh_out, gpar * np.minimum(oc, oc_chunk) * traffic._cdiv(oh, t) * ow_seg * e,
                    gpar * np.minimum(oc_chunk, traffic._cdiv(units, t) * ocp) * oh * ow_seg * e)


_INT = st.integers(1, 2**40)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n=st.integers(1, 12), big=st.booleans())
def test_unit_bytes_by_factors_equal_the_product_of_every_factor(data, n, big):
    """_unit_bytes (a per-mapping factor times the band-dependent one) and _Units (rows taken once) equal the product
    of every factor per row, for band counts per row or one for all, any rows taken, products that overflow int64
    included (int64 products wrap alike in any order)."""
    ints = (lambda: st.integers(1, 2**40)) if big else (lambda: st.integers(1, 600))

    def col(dtype=np.int64):
        return np.array(data.draw(st.lists(ints(), min_size=n, max_size=n)), dtype=dtype)

    gpar, oc, oc_chunk, oh, ow_seg, e, ocp = (col() for _ in range(7))
    oh_out = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    units = np.where(oh_out, oh, traffic._cdiv(oc, ocp))
    former = dict(oh_out=oh_out, gpar=gpar, oc=oc, oc_chunk=oc_chunk, oh=oh, ow_seg=ow_seg, e=e, units=units, ocp=ocp)
    with np.errstate(over="ignore"):
        u = dict(oh_out=oh_out, oh=oh, oc_chunk=oc_chunk, units=units, ocp=ocp,
                 a=gpar * np.minimum(oc, oc_chunk) * ow_seg * e, b=gpar * oh * ow_seg * e)
        at = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n)), dtype=np.int64)
        t = np.array(data.draw(st.lists(st.integers(1, 700), min_size=len(at), max_size=len(at))), dtype=np.int64)
        for tt in (t, 1):
            want = _unit_bytes_former(former, tt, at)
            got = traffic._unit_bytes(u, tt, at)
            assert got.dtype == want.dtype and got.tolist() == want.tolist()
            assert traffic._Units(u, at)(tt).tolist() == want.tolist()
        want = _unit_bytes_former(former, units)
        assert traffic._unit_bytes(u, units).tolist() == want.tolist()


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n=st.integers(1, 10))
def test_chunk_split_from_known_chunks_equals_the_split(data, n):
    """_chunk_split given _chunks of (oc, chunk) (computed once per mapping) equals it computing them: chunks, full
    chunks, the last chunk and the bytes per transfer, bit for bit (chunk 0, one chunk, counts 0 included)."""
    def col(lo, hi, dtype):
        return np.array(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), dtype=dtype)

    oc, chunk = col(1, 2048, np.int64), col(0, 300, np.int64)
    total, count = col(0, 10**9, float), col(0, 5000, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = traffic._chunk_split(total, count, oc, chunk)
        got = traffic._chunk_split(total, count, oc, chunk, traffic._chunks(oc, chunk))
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def _put_former(cols, col_of: np.ndarray, at: np.ndarray, part: np.ndarray, rows: np.ndarray) -> None:
    """LazyTextColumns.put's scatters as written before this round (two index arrays per scatter)."""
    has = rows >= 0
    if has.all():
        cols.part[col_of, at] = part[col_of]
        cols.row[col_of, at] = rows
        return
    none = ~has
    cols.fixed[col_of[none], at[none]] = "-"
    cols.part[col_of[none], at[none]] = -1
    c, a = col_of[has], at[has]
    cols.part[c, a] = part[c]
    cols.row[c, a] = rows[has]


@settings(max_examples=80, deadline=None)
@given(data=st.data(), count=st.integers(1, 5), n=st.integers(1, 9), puts=st.integers(1, 3))
def test_lazy_text_columns_put_by_flat_position_equals_two_indices(data, count, n, puts):
    """LazyTextColumns.put filling its arrays by flat position (given or computed) leaves them as the scatters by
    (column, point) did: fixed texts, which put each point reads and its plan row, for any pairs (each at most
    once a put), plans or none (-1), several puts after one another."""
    from archmodels.emax import explain

    tab = object()
    got = explain.LazyTextColumns(count, n, explain.tiles)
    ref = explain.LazyTextColumns(count, n, explain.tiles)
    for _ in range(puts):
        cells = data.draw(st.lists(st.tuples(st.integers(0, count - 1), st.integers(0, n - 1)), unique=True,
                                   max_size=count * n))
        col_of = np.array([c for c, _ in cells], dtype=np.int64)
        at = np.array([a for _, a in cells], dtype=np.int64)
        rows = np.array(data.draw(st.lists(st.integers(-1, 50), min_size=len(cells), max_size=len(cells))),
                        dtype=np.int64)
        which = sorted(set(col_of.tolist()))
        part = np.array([len(t) for t in ref.tables])
        for i in which:
            ref.tables[i].append(tab)
        _put_former(ref, col_of, at, part, rows)
        given = data.draw(st.booleans())
        got.put(which, col_of, at, tab, rows, col_of * n + at if given else None)
    assert got.fixed.tolist() == ref.fixed.tolist()
    assert got.part.tolist() == ref.part.tolist() and got.row.tolist() == ref.row.tolist()
    assert [len(t) for t in got.tables] == [len(t) for t in ref.tables]

"""EMAXV/EMAXVR data movement: traffic identities, SPM effects, pool fusion, bus rounding."""

from __future__ import annotations

import pytest

from archmodels import get_model
from archmodels.emax.model import DRAM_KIND_KEYS
from workloads import Workload, load_workload
from workloads.layers import Conv2D

ALEX = load_workload("alexnet-conv")
KIND_KEYS = [f"dram_{k}_{d}_bytes" for k, d in DRAM_KIND_KEYS]


def _one(layer) -> Workload:
    return Workload(f"one-{layer.name}", (layer,))


def _layer(result, name):
    return next(lay for lay in result["layers"] if lay["name"] == name)


def test_emaxv_c1_traffic_composition():
    """Spec §2: inputs KH/s x 2 (no vertical broadcast), partial sums (IC/ICpar - 1) x output each way."""
    r = get_model("emaxv").evaluate(_one(ALEX.layer("C1")))
    c1 = r["layers"][0]
    out = 96 * 55 * 55 * 4
    assert c1["dram_output_write_bytes"] == out
    assert c1["dram_psum_write_bytes"] == 2 * out
    # reads move whole 16-byte bus words; rows start at any 4-byte offset: (b + 16 - 4) / 16 words
    assert c1["dram_psum_read_bytes"] == pytest.approx(2 * 96 * 55 * (220 + 12))
    assert c1["dram_input_read_bytes"] == pytest.approx(3 * 55 * 11 * 2 * (908 + 12))
    assert c1["dram_weight_read_bytes"] == (96 * 3 * 121 + 96) * 4  # register constants, read once by the host


@pytest.mark.parametrize("arch,wl,sets", [
    ("emaxv", "alexnet-conv", {}), ("emaxvr", "alexnet", {}), ("emaxvr", "alexnet-conv", {"spm_kb": 0.0}),
    ("emaxvr", "vgg16-conv", {"spm_kb": 256.0}), ("emaxvr", "lenet", {"cols": 8, "rows": 16}),
])
def test_kinds_add_up_to_dram_totals(arch, wl, sets):
    r = get_model(arch).evaluate(wl, **sets)
    for lay in r["layers"]:
        reads = sum(lay[k] for k in KIND_KEYS if k.endswith("_read_bytes"))
        writes = sum(lay[k] for k in KIND_KEYS if k.endswith("_write_bytes"))
        assert reads == pytest.approx(lay["dram_read_bytes"], rel=1e-12, abs=1e-6)
        assert writes == pytest.approx(lay["dram_write_bytes"], rel=1e-12, abs=1e-6)


@pytest.mark.parametrize("arch,spm", [("emaxv", 0.0), ("emaxvr", 0.0), ("emaxvr", 32.0), ("emaxvr", 128.0),
                                      ("emaxvr", 4096.0)])
@pytest.mark.parametrize("name", ["C1", "C4", "C7"])
def test_dram_at_least_compulsory(arch, spm, name):
    layer = ALEX.layer(name)
    model = get_model(arch)
    bits = 16 if arch == "emaxvr" else 32
    r = model.evaluate(_one(layer), spm_kb=spm, dtype_bits=bits)["layers"][0]
    e = bits // 8
    compulsory = (layer.input_elems + layer.weight_elems + layer.output_elems) * e
    assert r["dram_bytes"] >= compulsory
    assert r["dram_weight_read_bytes"] >= layer.weight_elems * e
    assert r["dram_output_write_bytes"] == layer.output_elems * e


def test_spm_removes_partial_sum_traffic():
    c7 = _one(ALEX.layer("C7"))
    m = get_model("emaxvr")
    no_spm = m.evaluate(c7, spm_kb=0.0)["layers"][0]
    spm = m.evaluate(c7, spm_kb=128.0)["layers"][0]
    out = 384 * 13 * 13 * 2
    passes = no_spm["passes"]
    assert passes > 1
    assert no_spm["dram_psum_write_bytes"] == (passes - 1) * out
    assert no_spm["dram_psum_read_bytes"] >= (passes - 1) * out
    assert spm["dram_psum_read_bytes"] == spm["dram_psum_write_bytes"] == 0
    assert spm["spm_write_bytes"] >= (passes - 1) * out  # they went to the SPM instead
    assert spm["dram_bytes"] < no_spm["dram_bytes"]


def test_fused_pool_writes_only_the_pooled_output():
    r = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=128.0)
    c1, p3 = _layer(r, "C1"), _layer(r, "P3")
    assert p3["fused_into"] == "C1" and p3["dram_bytes"] == 0 and p3["time_s"] == 0
    assert c1["dram_output_write_bytes"] == 96 * 27 * 27 * 2
    # the conv result that did not stay in the 128 KB SPM is written out and read back (after_conv schedule)
    assert c1["dram_spill_write_bytes"] == 96 * 55 * 55 * 2 - 128 * 1024
    assert c1["states"]["POOL"] > 0


def test_per_band_pooling_avoids_the_spill():
    m = get_model("emaxvr")
    after = _layer(m.evaluate("alexnet-conv"), "C1")
    per_band = _layer(m.evaluate("alexnet-conv", pool_schedule="per_band"), "C1")
    assert per_band["dram_spill_write_bytes"] == 0 < after["dram_spill_write_bytes"]
    assert per_band["dram_bytes"] < after["dram_bytes"]


def test_no_fusion_without_spm_or_when_disabled():
    m = get_model("emaxvr")
    for sets in ({"spm_kb": 0.0}, {"pool_fusion": False}):
        r = m.evaluate("alexnet-conv", **sets)
        p3 = _layer(r, "P3")
        assert p3["fused_into"] is None and p3["dram_input_read_bytes"] >= 96 * 55 * 55 * 2
    assert all(lay["fused_into"] is None for lay in get_model("emaxv").evaluate("alexnet-conv")["layers"])


def test_activations_chain_through_a_large_spm():
    """256 KB: C7's output stays in the SPM and C8 reads it there (spec §4 traffic at 256 KB)."""
    r = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=256.0)
    c7, c8 = _layer(r, "C7"), _layer(r, "C8")
    assert c7["dram_output_write_bytes"] == 0 and c8["dram_input_read_bytes"] == 0
    r128 = get_model("emaxvr").evaluate("alexnet-conv", spm_kb=128.0)
    assert _layer(r128, "C8")["dram_input_read_bytes"] >= 384 * 13 * 13 * 2


def test_wider_bus_rounds_reads_up_not_writes():
    c1 = _one(ALEX.layer("C1"))
    m = get_model("emaxv")
    narrow = m.evaluate(c1, fsm_bus_bits=64)["layers"][0]
    wide = m.evaluate(c1, fsm_bus_bits=512)["layers"][0]
    assert wide["dram_psum_read_bytes"] > narrow["dram_psum_read_bytes"]
    assert wide["dram_write_bytes"] == narrow["dram_write_bytes"]


def test_grouped_and_strided_conv_shapes_run():
    layer = Conv2D("dw", in_ch=64, out_ch=64, groups=64, kernel_h=3, kernel_w=3, in_h=28, in_w=28, stride=2, padding=1)
    for arch in ("emaxv", "emaxvr"):
        r = get_model(arch).evaluate(_one(layer))
        lay = r["layers"][0]
        assert r["feasible"] and lay["dram_output_write_bytes"] == layer.output_elems * (4 if arch == "emaxv" else 2)
        assert 0 < lay["utilization"] <= 1


# ---------------------------------------------------------------- speed paths (issue 15): the same bits
from unittest import mock  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from archmodels.emax import traffic  # noqa: E402
from archmodels.emax.traffic import PlanTable, _in_order, _matrix  # noqa: E402

SPEED = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_bits(a, b, what: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    if a.dtype == object:
        assert a.tolist() == b.tolist(), what
    else:
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), what  # -0.0 and NaN too


def _same_tables(t: PlanTable, ref: PlanTable) -> None:
    assert list(t.plan) == list(ref.plan) and list(t.label) == list(ref.label)
    for k in ref.plan:
        _same_bits(t.plan[k], ref.plan[k], k)
    for k in ref.label:
        _same_bits(t.label[k], ref.label[k], k)
    _same_bits(t.src, ref.src, "src")
    rows = np.arange(len(ref))[::-1][::2].copy()  # a table keeps some plans, in another order
    for a, b in ((t, ref), (t.take(rows), ref.take(rows))):
        for part in ("xfer", "stage", "read", "host"):
            got, want = getattr(a, part), getattr(b, part)
            assert list(got) == list(want), part
            for k in want:
                _same_bits(got[k], want[k], f"{part}.{k}")
        _same_bits(a.read_order, b.read_order, "read_order")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["alexnet", "vgg16", "mobilenet_v2"]))
def test_plan_sums_by_slot_equal_the_matrices(seed, arch, wl):
    """_assemble_columns (the sums slot by slot, the data movement's matrices only for the plans a table keeps: large
    tables) gives every plan column, label and entry table bit for bit as _assemble_matrices (the [plans, slots]
    matrices of every plan: small tables), for every builder call of random points (pooling passes and FC layers
    included)."""
    from archmodels.emax import model

    calls = []
    real = traffic._assemble

    def spy(*args):
        calls.append(args)
        return real(*args)

    m = get_model(arch)
    rows = m.params.random_rows(6, np.random.default_rng(seed))
    model.workload_plans.cache_clear()
    with mock.patch.object(traffic, "_assemble", spy):
        m.evaluate_points(wl, rows)
    assert calls
    for args in calls:
        _same_tables(traffic._assemble_columns(*args), traffic._assemble_matrices(*args))


@SPEED
@given(cols=st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.25, 3e300, float("inf"), float("-inf"),
                                               float("nan"), 7.0]), min_size=4, max_size=4), max_size=6),
       zero_at=st.lists(st.integers(0, 7), max_size=4))
def test_sum_of_columns_with_zero_columns_equals_the_matrix_sum(cols, zero_at):
    """_sum_in_order (the zero columns as one + 0.0 at the end) equals _in_order over the matrix with the zero
    columns where they stand, bit for bit (-0.0, infinities and NaN included)."""
    n = 4
    terms = [np.array(c) for c in cols]
    full = list(terms)
    for z in sorted(zero_at, reverse=True):
        full.insert(min(z, len(full)), np.zeros(n))
    with np.errstate(invalid="ignore", over="ignore"):
        got = traffic._sum_in_order(terms, n, bool(zero_at))
        want = _in_order(_matrix(full, n))
        _same_bits(got, want, "sum")


@SPEED
@given(units=st.lists(st.integers(1, 600), min_size=1, max_size=30), seed=st.integers(0, 2**31 - 1))
def test_band_count_by_bisection_of_the_open_rows_equals_the_smallest(units, seed):
    """_first_band_count (bisection over the rows neither end decides) gives the smallest t in 1..units whose
    need fits, 0 if none, for needs that fall with t."""
    rng = np.random.default_rng(seed)
    units = np.array(units, dtype=np.int64)
    fixed = rng.integers(0, 1000, len(units)).astype(float)
    per = rng.integers(1, 5000, len(units))
    budget = rng.integers(0, 200_000, len(units))

    def need(t, at=slice(None)):
        return fixed[at] + per[at] * -(-units[at] // t)

    got = traffic._first_band_count(units, need, budget, need(units), need(np.ones_like(units)))
    for k in range(len(units)):
        fits = [t for t in range(1, int(units[k]) + 1) if fixed[k] + per[k] * -(-int(units[k]) // t) <= budget[k]]
        assert got[k] == (fits[0] if fits else 0)


@SPEED
@given(idx=st.lists(st.integers(0, 4), max_size=40), xs=st.lists(st.integers(0, 300), max_size=40))
def test_lookup_by_dense_table_equals_one_call_per_row(idx, xs):
    """_lookup answers fn(shape, x) per row, by the dense table or by np.unique."""
    k = min(len(idx), len(xs))
    idx, xs = np.array(idx[:k], dtype=np.int64), np.array(xs[:k], dtype=np.int64)
    shapes = list(ALEX.layers[:5])

    def fn(sh, x):
        return sh.output_elems * 1000 + x

    want = [fn(shapes[i], int(x)) for i, x in zip(idx, xs)]
    assert traffic._lookup(fn, shapes, idx, xs).tolist() == want
    big = [shapes[0]] * 10_000  # a table much larger than the rows: the np.unique path
    assert traffic._lookup(fn, big, idx * 2000, xs).tolist() == [fn(big[0], int(x)) for x in xs]


def test_gather_reads_sources_in_order_when_first_read():
    """_Gather: given columns first, then the first source holding the name, gathered at its index once."""
    a, b = {"x": np.arange(5), "y": np.arange(5) * 10}, {"x": np.arange(5) * 100, "z": np.arange(5) * 7}
    g = traffic._Gather((a, np.array([4, 0])), (b, np.array([1, 1])), w=np.array([9]))
    assert g["x"].tolist() == [4, 0] and g["z"].tolist() == [7, 7] and g["w"].tolist() == [9]
    assert "y" in g and "q" not in g and g.get("q", 3) == 3 and g.get("y").tolist() == [40, 0]
    assert g["x"] is g["x"]  # gathered once
    g.update(x=np.array([1]))
    assert g["x"].tolist() == [1]
    with pytest.raises(KeyError):
        g["q"]


def _builder_tables(seed: int, arch: str, wl: str, n: int = 4) -> list[PlanTable]:
    """Every builder's table of ``n`` random points of ``wl`` (one point alone, then the batch), planned anew."""
    from archmodels.emax import model

    tables = []
    real = traffic._assemble

    def spy(*args):
        tables.append(real(*args))
        return tables[-1]

    m = get_model(arch)
    rows = m.params.random_rows(n, np.random.default_rng(seed))
    model.workload_plans.cache_clear()
    with mock.patch.object(traffic, "_assemble", spy):
        m.evaluate_points(wl, rows[:1])
        m.evaluate_points(wl, rows)
    return tables


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["alexnet", "vgg16", "mobilenet_v2"]))
def test_sub_tables_in_one_pass_equal_part_by_part(seed, arch, wl):
    """PlanTable's sub-tables and read_order built in one pass (_parts, _Moves.entries) equal them built part by part
    (_entries, _read_order), bit for bit: every builder table of random points, a part of it in another order, and
    tables concatenated (blocks one after another, and interleaved by a take)."""
    tables = _builder_tables(seed, arch, wl)
    assert tables
    rng = np.random.default_rng(seed)
    cases = []
    for t in tables:
        cases += [t, t.take(rng.permutation(len(t))[: len(t) // 2])]
    both = traffic.concat(tables[:2])
    cases += [both, both.take(rng.permutation(len(both)))]
    for t in cases:
        for part in ("xfer", "stage", "read", "host"):
            got, want = getattr(t, part), t._entries(part)
            assert list(got) == list(want), part
            for k in want:
                _same_bits(got[k], want[k], f"{part}.{k}")
        _same_bits(t.read_order, t._read_order(), "read_order")


_SPECIAL = st.sampled_from([0.0, -0.0, 1.5, -2.25, 3e300, float("inf"), float("-inf"), float("nan"), 7.0])


@SPEED
@given(slots=st.integers(0, 9), stages=st.integers(0, 3), n=st.integers(1, 4), data=st.data())
def test_row_sums_in_one_pass_equal_column_by_column(slots, stages, n, data):
    """_row_sums (every sum of a small table in one pass over the columns, other columns -0.0) equals _in_order of
    each sum's own columns, bit for bit (-0.0 and infinities included; a kind without a column sums to 0.0), NaN
    where it has NaN. (The sign of a NaN made of two NaNs is numpy's choice per array length: ``a += b`` keeps b's
    on one element, a's on more, so it is compared as NaN.)"""
    def mat(cols):
        return np.array(data.draw(st.lists(st.lists(_SPECIAL, min_size=n, max_size=n), min_size=cols, max_size=cols)),
                        dtype=float).reshape(cols, n).T.copy()

    delivered, stored, written, reads = mat(slots), mat(slots), mat(slots), mat(slots + stages)
    kind = np.array(data.draw(st.lists(st.integers(0, len(traffic.KINDS) - 1), min_size=slots, max_size=slots)),
                    dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        got = traffic._row_sums(delivered, stored, written, kind, reads)
        want = (_in_order(delivered), _in_order(stored),
                np.stack([_in_order(written[:, kind == k]) for k in range(len(traffic.KINDS))], axis=1),
                _in_order(reads))
    for g, w, what in zip(got, want, ("delivered", "stored", "write_kind", "reads")):
        assert (np.isnan(g) == np.isnan(w)).all(), what
        _same_bits(np.where(np.isnan(g), np.nan, g), np.where(np.isnan(w), np.nan, w), what)


@pytest.mark.parametrize("wl", ["alexnet", "vgg16", "mobilenet_v2"])
def test_shape_columns_from_the_cached_table_equal_each_shape(wl):
    """shape_columns (the shape list's cached table, every column gathered at once) equals each row's shape numbers
    (_shape_numbers; touched inputs = _touched_inputs), as fresh writable columns, the cached table read only."""
    from archmodels.emax.model import _shapes

    shapes = [sh for sh in _shapes(load_workload(wl)) if sh is not None]
    for kind in (traffic.ConvShape, traffic.FCShape):
        some = [sh for sh in shapes if isinstance(sh, kind)]
        if not some:
            continue
        idx = np.random.default_rng(3).integers(0, len(some), 50)
        for _ in range(2):  # built, then from the cache
            got = traffic.shape_columns(some, idx)
            names = list(got)
            for r, i in enumerate(idx.tolist()):
                want = traffic._shape_numbers(some[i])
                assert [int(got[k][r]) for k in names] == list(want)
                if kind is traffic.ConvShape:
                    assert got["touched"][r] == traffic._touched_inputs(some[i]) and got["mac"].dtype == bool
            for v in got.values():
                assert v.flags.writeable and len(v) == len(idx)
        assert not traffic._shape_table(tuple(some), len(names)).flags.writeable

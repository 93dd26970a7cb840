"""EMAXV/EMAXVR mapper: candidate mappings follow the CGRA rules of spec emax.md §1-§3.1."""

from __future__ import annotations

import itertools

import pytest

from archmodels.emax.mapper import Hw, conv_candidates, fc_candidates, shape_of
from workloads import load_workload

ALEX = load_workload("alexnet-conv")
VGG = load_workload("vgg16-conv")
EMAXV = Hw("emaxv", 64, 4, 2048, 0, 4)
EMAXVR = Hw("emaxvr", 64, 4, 1024, 128 * 1024, 2)


def _by_pattern(maps):
    out = {}
    for m in maps:
        out.setdefault(m.pattern, []).append(m)
    return out


def test_emaxv_c1_single_loop_mapping():
    maps, _ = conv_candidates(shape_of(ALEX.layer("C1")), EMAXV)
    (m,) = maps
    assert (m.pattern, m.order, m.icpar, m.macs) == ("single", ("OW",), 1, 121)
    assert m.dup_rows == 2  # 11 loads per kernel row, 8 per CGRA row: spans 2 rows, no vertical broadcast
    assert m.alus == 126 and m.rows_used <= 64


@pytest.mark.parametrize("layer,icpar", [("C4", 4), ("C7", 16), ("C8", 16), ("C9", 16)])
def test_emaxv_icpar_is_the_largest_divisor_that_fits(layer, icpar):
    sh = shape_of(ALEX.layer(layer))
    (m,) = conv_candidates(sh, EMAXV)[0]
    assert m.icpar == icpar and sh.ic % icpar == 0 and m.rows_used <= 64
    rows_per_channel = sh.kh * -(-sh.kw // 4)
    bigger = [d for d in range(icpar + 1, sh.ic + 1) if sh.ic % d == 0]
    assert 1 + rows_per_channel * bigger[0] + 4 > 64  # the next divisor would not fit


def test_emaxvr_c1_pattern_b_rejected_with_a_reason():
    maps, rejected = conv_candidates(shape_of(ALEX.layer("C1")), EMAXVR)
    pats = _by_pattern(maps)
    assert "B" not in pats
    reasons = [r.reason for r in rejected if r.name == "B"]
    assert reasons and "121 MAC rows" in reasons[0] and "64" in reasons[0]
    a = pats["A"][0]
    assert (a.icpar, a.macs, a.alus) == (1, 121, 132)  # 11 taps x 11 kernel rows; 132/256 = 0.52


@pytest.mark.parametrize("layer,icpar,macs", [("C4", 2, 200), ("C7", 6, 216), ("C8", 6, 216), ("C9", 6, 216)])
def test_emaxvr_pattern_b_sets(layer, icpar, macs):
    maps, _ = conv_candidates(shape_of(ALEX.layer(layer)), EMAXVR)
    b = _by_pattern(maps)["B"][0]
    assert (b.icpar, b.macs, b.oc_par) == (icpar, macs, 4)
    sh = shape_of(ALEX.layer(layer))
    assert b.rows_used <= 64 < b.rows_used + sh.kh * sh.kw  # one more channel set would not fit


def test_pairs_need_lddhr_and_stride_one():
    _, rej32 = conv_candidates(shape_of(VGG.layer("C2")), Hw("emaxvr", 64, 4, 1024, 131072, 4))
    assert any(r.name == "pairs" and "LDDHR" in r.reason for r in rej32)
    _, rej_s4 = conv_candidates(shape_of(ALEX.layer("C1")), EMAXVR)
    assert any(r.name == "pairs" and "stride 1" in r.reason for r in rej_s4)
    maps, _ = conv_candidates(shape_of(VGG.layer("C2")), EMAXVR)
    p = _by_pattern(maps)["pairs"][0]
    assert (p.macs, p.oc_par, p.px_par) == (216, 2, 2)


def test_lmm_capacity_rejects_with_reason():
    tiny = Hw("emaxvr", 64, 4, 8, 0, 2)  # not even one 3-value input span (x2 buffers) fits
    maps, rejected = conv_candidates(shape_of(ALEX.layer("C7")), tiny)
    assert not maps
    assert any("LMM" in r.reason for r in rejected)


def test_small_lmm_splits_the_output_row():
    sh = shape_of(ALEX.layer("C1"))
    (m,) = conv_candidates(sh, Hw("emaxv", 64, 4, 512, 0, 4))[0]
    assert m.n_seg > 1 and m.lmm_need <= 512
    assert m.n_seg == min(n for n in range(1, 56) if ((-(-55 // n)) - 1) * 4 * 4 + 11 * 4 <= 512)


def test_kernel_split_only_when_no_pattern_fits():
    sh = shape_of(ALEX.layer("C1"))
    maps, _ = conv_candidates(sh, Hw("emaxvr", 16, 4, 1024, 131072, 2))
    assert maps and all(m.khpar < sh.kh for m in maps)
    maps64, _ = conv_candidates(sh, EMAXVR)
    assert all(m.khpar == sh.kh for m in maps64)


@pytest.mark.parametrize("arch,rows,cols,lmm", list(itertools.product(("emaxv", "emaxvr"), (16, 64, 128), (4, 8), (512, 1024, 65536))))
def test_every_accepted_mapping_obeys_the_rules(arch, rows, cols, lmm):
    hw = Hw(arch, rows, cols, lmm, 131072 if arch == "emaxvr" else 0, 2)
    for layer in ALEX.layers + VGG.layers[:4]:
        maps, rejected = conv_candidates(shape_of(layer), hw)
        assert maps or rejected
        for m in maps:
            assert m.rows_used <= rows
            assert m.mem_per_row <= 2 * cols
            assert m.alus <= rows * cols and m.macs <= m.alus
            assert m.lmm_need <= lmm
            assert len(m.order) <= (1 if arch == "emaxv" else 3)


def test_fc_mapping_236_inputs_in_parallel():
    maps, _ = fc_candidates(shape_of(load_workload("alexnet").layer("FC11")), EMAXVR)
    m = maps[0]
    assert (m.icpar, m.oc_chunk, m.order) == (236, 512, ("OC",))  # 59 rows x 4; 1 KB / 2 B weights per PE


# ---------------------------------------------------------------- speed paths (issue 15): the same answers
import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from archmodels.emax import mapper  # noqa: E402
from archmodels.emax.mapper import ConvShape  # noqa: E402

SPEED = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONV_SHAPES = sorted({sh for wl in ("alexnet", "vgg16", "mobilenet_v2", "resnet50")
                      for sh in map(shape_of, load_workload(wl).layers) if isinstance(sh, ConvShape)}, key=repr)


@SPEED
@given(pairs=st.lists(st.tuples(st.integers(1, 2048), st.integers(1, 5000)), min_size=1, max_size=40))
def test_largest_divisor_by_table_equals_the_loop(pairs):
    n, limit = (np.array(v, dtype=np.int64) for v in zip(*pairs))
    assert mapper._largest_divisor_np(n, limit).tolist() == [mapper._largest_divisor(a, b) for a, b in pairs]


@SPEED
@given(cols=st.lists(st.integers(0, 64), min_size=1, max_size=20), pattern=st.sampled_from(["single", "A", "B", "pairs", "fc"]))
def test_tail_rows_by_table_equals_the_formula(cols, pattern):
    got = mapper._tail_rows_np(pattern, np.array(cols, dtype=np.int64))
    assert got.dtype == np.int64 and got.tolist() == [mapper._tail_rows(pattern, c) for c in cols]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_mapper_table_of_shared_objects_equals_one_by_one(seed, arch):
    """conv_table as a batch asks it (every layer of a few arrays: the same shape and array objects repeated,
    numbers taken once per object; a tile search's extra tiles cached) lists what conv_candidates lists request
    by request, texts of the same width, twice (the tile cache warm the second time)."""
    rng = np.random.default_rng(seed)
    arrays = [Hw(arch, int(rng.integers(4, int(rng.choice([16, 64, 513])))), int(rng.choice([2, 4, 8, 16])),
                 int(round(float(np.exp(rng.uniform(np.log(16), np.log(2**21)))))), 0, int(rng.choice([2, 4])),
                 int(rng.choice([0, 0, int(rng.integers(1, 4097))])), int(rng.choice([0, 1, 2]))) for _ in range(5)]
    layers = [CONV_SHAPES[i] for i in rng.integers(0, len(CONV_SHAPES), 10)]
    shapes = [sh for _ in arrays for sh in layers]
    hws = [hw for hw in arrays for _ in layers]
    n = len(shapes)
    pats = ["auto"] * n if arch == "emaxv" else [str(rng.choice(["auto", "A", "B"])) for _ in range(n)]
    orders = ["auto"] * n
    maps = [mapper.conv_candidates(*a)[0] for a in zip(shapes, hws, pats, orders)]
    ref = mapper.mapping_columns([m for ms in maps for m in ms])
    for _ in range(2):
        tab = mapper.conv_table(arch, shapes, hws, pats, orders)
        assert tab.req.tolist() == np.repeat(np.arange(n), [len(ms) for ms in maps]).tolist()
        assert list(tab.cols) == list(ref)
        for k, v in ref.items():
            assert tab.cols[k].dtype == v.dtype and np.array_equal(tab.cols[k], v), k


@pytest.mark.parametrize("hw", [EMAXV, EMAXVR, Hw("emaxvr", 20, 8, 512, 0, 4, 0, 2)])
def test_mapping_labels_cached_per_slot_equal_the_fields(hw):
    """Mapping.labels (set when _mapping builds it, cached per (pattern, order, mode)) equals the texts of its fields,
    and a Mapping built field by field (dataclass __init__) computes the same; mapping_columns reads them."""
    import dataclasses

    maps = [m for layer in VGG.layers for m in conv_candidates(shape_of(layer), hw)[0]]
    maps += list(fc_candidates(mapper.FCShape(4096, 1000, 1), hw)[0])
    assert maps
    for m in maps:
        want = (m.pattern, m.order[-1], m.input_mode, m.name, m.order_name)
        assert m.labels == want
        assert dataclasses.replace(m).labels == want  # built by __init__: computed when read
    cols = mapper.mapping_columns(maps)
    assert cols["name"].tolist() == [m.name for m in maps]
    assert cols["order_name"].tolist() == [m.order_name for m in maps]
    for k, attr in (("pattern", "pattern"), ("mode", "input_mode")):
        want = np.array([getattr(m, attr) for m in maps], dtype=object).astype(str)
        assert cols[k].dtype == want.dtype and cols[k].tolist() == want.tolist()


def test_scalar_mapper_caches_keyed_by_the_array_stay_small():
    """The scalar mapper's caches of answers keyed by the array are small (random points' arrays rarely recur; a full
    cache of 8,192 answers made the garbage collector's full collections cost ~0.25 ms a one-point trial)."""
    for f in (mapper.conv_candidates, mapper._conv_structures, mapper.fc_candidates, mapper._candidate_rows,
              mapper._fc_rows):
        assert f.cache_info().maxsize <= 256
    assert mapper._reduction_rows.cache_info().maxsize <= 1024


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_one_point_table_without_mapping_objects_equals_mapping_columns(seed, arch):
    """conv_table below TABLE_NUMPY_FROM requests (_candidate_rows: numbers and texts, no Mapping objects) equals
    mapping_columns of conv_candidates request by request (every column, dtype and value), with the same request of
    each row and the same answers (fits, reasons), for random arrays (tile searches, caps, knobs) on VGG16's and
    MobileNetV2's layers."""
    rng = np.random.default_rng(seed)
    shapes = [s for wl in ("vgg16", "mobilenet_v2") for s in (shape_of(x) for x in load_workload(wl).layers)
              if isinstance(s, ConvShape)]
    n = int(rng.integers(1, mapper.TABLE_NUMPY_FROM))
    sh = [shapes[i] for i in rng.integers(0, len(shapes), n)]
    hws = [Hw(arch, int(rng.integers(4, 80)), int(rng.choice([2, 4, 8, 16])), int(rng.choice([64, 512, 2048, 65536])),
              0, int(rng.choice([2, 4])), int(rng.choice([0, 0, 8, 24])), int(rng.integers(0, 3))) for _ in range(n)]
    pats = [str(rng.choice(["auto", "A", "B", "pairs"])) if arch == "emaxvr" else "auto" for _ in range(n)]
    ords = [str(rng.choice(["auto", "OW,OC,OH", "OW,OH,OC"])) if arch == "emaxvr" else "auto" for _ in range(n)]
    mapper._candidate_rows.cache_clear()
    tab = mapper.conv_table(arch, sh, hws, pats, ords)
    answers = [conv_candidates(*a) for a in zip(sh, hws, pats, ords)]
    want = mapper.mapping_columns([m for maps, _ in answers for m in maps])
    assert list(tab.cols) == list(want)
    for k, v in want.items():
        assert tab.cols[k].dtype == v.dtype and tab.cols[k].tolist() == v.tolist(), k
    assert tab.req.tolist() == [j for j, (maps, _) in enumerate(answers) for _ in maps]
    assert tab.rejections(range(n)) == [(bool(maps), tuple(x.reason for x in rej)) for maps, rej in answers]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_one_point_fc_table_equals_the_numpy_table(seed, arch):
    """fc_table below TABLE_NUMPY_FROM requests (_fc_rows, request by request) equals the numpy table (every column,
    dtype and value, the request of each row), for random arrays (tile searches, caps) on FC layers and products."""
    rng = np.random.default_rng(seed)
    shapes = [mapper.FCShape(4096, 1000, 1), mapper.FCShape(25088, 4096, 1), mapper.FCShape(236, 10, 3),
              mapper.FCShape(64, 64, 49)]
    n = int(rng.integers(1, 12))
    sh = [shapes[i] for i in rng.integers(0, len(shapes), n)]
    hws = [Hw(arch, int(rng.integers(2, 80)), int(rng.choice([2, 4, 8, 16])), int(rng.choice([1, 2, 64, 2048, 65536])),
              0, int(rng.choice([2, 4])), int(rng.choice([0, 0, 8, 24])), int(rng.integers(0, 3))) for _ in range(n)]
    got, got_req = mapper.fc_table(sh, hws)
    from unittest import mock

    with mock.patch.object(mapper, "TABLE_NUMPY_FROM", 0):
        want, want_req = mapper.fc_table(sh, hws)
    assert list(got) == list(want) and got_req.tolist() == want_req.tolist()
    for k, v in want.items():
        assert got[k].dtype == v.dtype and got[k].tolist() == v.tolist(), k

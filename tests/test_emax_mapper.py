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

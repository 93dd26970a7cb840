"""EMAX batched paths, fourteenth round (issue 15): the report's staged sums without a staging column as
``np.zeros`` (``timing._dense_flows``); EMAXV's builder computing each layer shape's own products once per shape and
gathering them (``traffic.emaxv_plans``); the mapper's kernel need alone and its no-kernel-over-the-LMM shortcut
(``mapper._kernel_need_np``, ``mapper._fit_kernel_np``). Each compared with the code before this round bit for bit."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper, timing, traffic
from archmodels.emax import model as em
from archmodels.emax.traffic import (_DRAIN, _DRAM, _LOAD, _NONE, _Slot, _assemble, _cdiv, _cols_sum, _ints, _label,
                                     _lookup, _plan_cols, conv_compulsory_bytes, shape_columns)

from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths9 import _blocks
from .test_emax_batched_paths11 import _chosen_tables

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same(a, b) -> bool:
    """The same array exactly: dtype, shape and bytes (objects: equal lists); scalars equal and of one type."""
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return type(a) is type(b) and (a == b or (a != a and b != b))
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tolist() == b.tolist() if a.dtype == object else a.tobytes() == b.tobytes()


# ---------------------------------------------------------------- _dense_flows: the staged sums
def _staged_former(b: traffic._Moves, pts: np.ndarray, link: em.Link) -> np.ndarray:
    """The report's staged sums as _dense_flows built them before this round: a [phases, pairs] matrix of zeros, the
    staging reads' sums in the PLOAD row, copied transposed."""
    n, nph, ns = len(pts), len(timing.PHASES), len(b.phase)
    bus, elem = link.bus_bytes[pts], link.elem[pts]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        staged = np.zeros(n)
        for j in range(ns, b.rd_on.shape[1]):
            staged = staged + np.where(b.rd_on[:, j], timing._read_bytes(b, j, bus, elem), 0.0)
    st_ = np.zeros((nph, n))
    st_[timing._PLOAD_AT] = staged
    return st_.T.reshape(-1)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=_blocks(), variants=st.sampled_from([(True, False), (False,)]), always=st.booleans())
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_staged_sums_equal_the_former_matrix(case, variants, always):
    """With or without staging columns (NaN, infinities, -0.0 among them): the report's staged sums are the former
    transposed matrix's exactly (dtype, shape, bytes, C order), and the choice's keys are unchanged."""
    tab, pts, link = case
    (b, _), = tab.moves
    out = timing._dense_flows(b, tab.plan["host"], pts, link, variants, always)
    want = _staged_former(b, pts, link)
    assert _same(out["staged"], want) and out["staged"].flags.c_contiguous
    if b.rd_on.shape[1] == len(b.phase):  # no staging column: every sum +0.0
        assert not np.signbit(out["staged"]).any() and not out["staged"].any()


def test_a_random_emaxv_batch_takes_the_no_staging_path():
    """A random EMAXV batch's choice prices blocks without staging columns (the new branch), EMAXVR's some with."""
    for arch, wl in (("emaxv", "vgg16-conv"), ("emaxvr", "vgg16")):
        stages = []
        for tab, rows, pts, link in _chosen_tables(arch, wl, 60, 2):
            for b, _ in tab.moves:
                b = b._all if isinstance(b, traffic._SlotMoves) else b
                stages.append(b.rd_on.shape[1] - len(b.phase))
        assert stages and (max(stages) == 0 if arch == "emaxv" else max(stages) > 0)


# ---------------------------------------------------------------- emaxv_plans: the shapes' own products
def _emaxv_plans_former(shapes, r) -> traffic.PlanTable:
    """traffic.emaxv_plans before this round: every product per row, every shape column gathered."""
    n = len(r["icpar"])
    x = shape_columns(shapes, r["shape"])
    g, ic, oc, kh, kw, oh, ow = (x[k] for k in ("groups", "ic", "oc", "kh", "kw", "oh", "ow"))
    e, c, icpar, khpar, ow_seg, dup = _ints(r, "elem", "cols", "icpar", "khpar", "ow_seg", "dup_rows")
    passes = _cdiv(ic, icpar) * _cdiv(kh, khpar)
    n_seg = _cdiv(ow, ow_seg)
    vk = x["vk"]
    col_bytes = _lookup(_cols_sum, shapes, r["shape"], ow_seg) * e
    starts = g * passes * oh * n_seg * oc
    iters = g * passes * oc * oh * ow
    ops = g * oc * oh * ow * ic * kh * kw
    in_xfers = g * ic * vk * n_seg * dup
    in_bursts = g * passes * oh * n_seg
    in_bytes = g * ic * vk * col_bytes * dup
    psum_rows = g * (passes - 1) * oc * oh * n_seg
    out_rows = g * oc * oh * n_seg
    with np.errstate(divide="ignore", invalid="ignore"):
        row = ow * e / n_seg
        slots = [
            _Slot("input", False, _LOAD, True, in_bursts, in_xfers / in_bursts, in_bytes / in_xfers, c),
            _Slot("psum", False, _LOAD, True, psum_rows, 1, row, 1),
            _Slot("psum", True, _DRAIN, True, psum_rows, 1, row, 1),
            _Slot("output", True, _DRAIN, True, out_rows, 1, row, 1),
        ]
    weights = np.where(x["mac"], (g * oc * ic * kh * kw + g * oc) * e, 0.0)
    cols = _plan_cols(r, iterations=iters, loop_ends=starts, activations=starts, ops=ops, passes=passes,
                      starts=starts, bands=1, spm_read=0.0, spm_write=0.0, spm_need=0.0, mac=x["mac"],
                      compulsory=conv_compulsory_bytes(x["touched"], e, weights, g * oc * oh * ow * e),
                      band_len=oh, n_seg=n_seg,
                      psum_home=np.where(passes > 1, _DRAM, _NONE), stage_w=False)
    return _assemble(n, np.ones(n, bool), np.arange(n), cols, _label(r, "-"), slots, [], [("weight", weights, True)],
                     r["load_bytes_per_iter"])


def _same_tables(a: traffic.PlanTable, b: traffic.PlanTable) -> None:
    assert list(a.plan) == list(b.plan) and list(a.label) == list(b.label)
    for k in a.plan:
        assert _same(a.plan[k], b.plan[k]), k
    for k in a.label:
        assert _same(a.label[k], b.label[k]), k
    assert _same(a.src, b.src) and len(a.moves) == len(b.moves)
    for (x, at_x), (y, at_y) in zip(a.moves, b.moves):
        assert type(x) is type(y) and _same(at_x, at_y)
        for f in dataclasses.fields(x):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if isinstance(u, tuple):
                assert len(u) == len(v) and all(_same(p, q) for p, q in zip(u, v)), f.name
            else:
                assert _same(u, v), f.name


#: the mapping columns emaxv_plans reads (numbers, then texts)
_R_KEYS = ("shape", "icpar", "elem", "cols", "khpar", "ow_seg", "dup_rows", "load_bytes_per_iter", "rows_used", "regs",
           "alus", "macs", "oc_par", "px_par", "gpar", "oc_chunk", "pool_ops", "pool_iterations", "pool_loop_ends",
           "pool_regs", "pool_rows_used", "has_pool", "name", "order_name", "mode")
_CAUGHT: dict = {}


def _builder_calls(wl: str, n: int, seed: int) -> list[tuple]:
    """(shapes, mapping columns as a plain dict) of every emaxv_plans call while a batch of ``wl`` is evaluated, each
    table checked against the former builder on the way."""
    key = (wl, n, seed)
    if key not in _CAUGHT:
        got = []
        real = traffic.emaxv_plans

        def spy(shapes, r):
            out = real(shapes, r)
            _same_tables(out, _emaxv_plans_former(shapes, r))
            got.append((list(shapes), {k: np.asarray(r[k]) for k in _R_KEYS if k in r}))
            return out

        rows = _rows("emaxv", n, seed) if seed % 2 else get_model("emaxv").params.random_rows(n, np.random.default_rng(seed))
        em.workload_plans.cache_clear()
        with mock.patch.object(em, "emaxv_plans", spy):
            get_model("emaxv").evaluate_points(wl, rows)
        em.workload_plans.cache_clear()
        _CAUGHT[key] = got
    return _CAUGHT[key]


@pytest.mark.parametrize("wl,n,seed", [("vgg16-conv", 600, 0), ("alexnet", 300, 1), ("mobilenet_v2", 200, 3),
                                       ("resnet50", 150, 4), ("vgg16", 1, 5), ("alexnet", 3, 6)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_emaxv_plans_equal_the_former_builder(wl, n, seed):
    """Every EMAXV builder table of a batch (large: columns; one point: matrices; groups, pooling, reasons) equals the
    former builder's: every plan and label column, the sources, the data movement's columns or matrices."""
    calls = _builder_calls(wl, n, seed)
    assert calls


_BIG = st.one_of(st.integers(1, 8), st.integers(1, 2**40), st.sampled_from([2**31, 2**32 + 1, 2**62, 2**63 - 1]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), which=st.integers(0, 10**6))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_emaxv_plans_products_regrouped_equal_modulo_2_64(data, which):
    """A batch's mapping columns with the per-row numbers replaced by any int64 (products that overflow, zeros
    dividing): the per-shape products gathered then multiplied give the former per-row products' bits (int64
    multiplication is exact modulo 2**64 in any grouping), and every derived float column equals too."""
    shapes, r = _builder_calls("alexnet", 300, 1)[0] if which % 2 else _builder_calls("mobilenet_v2", 200, 3)[0]
    sel = np.array(data.draw(st.lists(st.integers(0, len(r["icpar"]) - 1), min_size=1, max_size=40)), dtype=np.int64)
    r = {k: v[sel] for k, v in r.items()}  # (some rows, in any order, repeated)
    n = len(sel)
    for k in data.draw(st.lists(st.sampled_from(["icpar", "khpar", "ow_seg", "dup_rows", "elem", "cols"]), max_size=4)):
        values = st.integers(1, 4096) if k == "ow_seg" else st.one_of(_BIG, st.just(0))  # (ow_seg: segments' columns)
        r[k] = np.array(data.draw(st.lists(values, min_size=n, max_size=n)), dtype=np.int64)
    _same_tables(traffic.emaxv_plans(shapes, r), _emaxv_plans_former(shapes, r))


# ---------------------------------------------------------------- the mapper's kernel fit
def _kernel_need_former(pattern, q, oc_chunk, ocp):
    """The kernel need as mapper._lmm_need_np wrote it before this round (it now calls _kernel_need_np)."""
    span = np.minimum(q.w + 2 * q.pad, (q.ow - 1) * q.stride + q.kw_ext)
    if pattern == "single":
        return np.zeros_like(span)
    ker = 2 * 2 * oc_chunk * q.e if pattern == "A" else 2 * 2 * mapper._cdiv(oc_chunk, ocp) * q.e
    return np.where(q.mac, ker, 0)


def _fit_kernel_former(pattern, q, ocp):
    """mapper._fit_kernel_np before this round."""
    lmm, unit = q.lmm, (np.ones_like(ocp) if pattern == "A" else ocp)
    ker = _kernel_need_former(pattern, q, q.oc, ocp)
    over = ker > lmm
    per_iter = ker / np.where(over, (q.oc if pattern == "A" else mapper._cdiv(q.oc, ocp)), 1)
    iters = np.floor_divide(lmm, np.where(over, per_iter, 1.0)).astype(np.int64)
    oc_chunk = np.where(over, iters * unit, q.oc)
    return ker, over, iters, oc_chunk, np.where(over, _kernel_need_former(pattern, q, oc_chunk, ocp), ker)


@st.composite
def _requests(draw):
    """Requests as _Req fields (int64 arrays): small and large LMMs (kernels over it or not), MAC and MAX layers,
    every pattern, 1-32 channels per start."""
    n = draw(st.integers(1, 40))
    ints = lambda lo, hi: np.array(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)), dtype=np.int64)
    q = SimpleNamespace(lmm=ints(0, 1 << draw(st.sampled_from([6, 12, 20, 40]))), ow=ints(1, 300), oc=ints(1, 4096),
                        e=ints(1, 4), mac=np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool),
                        w=ints(1, 300), pad=ints(0, 3), stride=ints(1, 4), kw_ext=ints(1, 11), oh=ints(1, 300))
    return draw(st.sampled_from(["single", "A", "B", "pairs"])), q, ints(1, 32)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_requests())
def test_fit_kernel_equals_the_former(case):
    """_kernel_need_np (which _lmm_need_np now calls) is the former kernel need, and _fit_kernel_np (with and
    without a kernel over the LMM) the former function's five arrays exactly (dtype, shape, bytes)."""
    pattern, q, ocp = case
    assert _same(mapper._kernel_need_np(pattern, q, q.oc, ocp), _kernel_need_former(pattern, q, q.oc, ocp))
    got, want = mapper._fit_kernel_np(pattern, q, ocp), _fit_kernel_former(pattern, q, ocp)
    assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want))


def test_batches_take_both_kernel_fit_branches():
    """The requests of EMAXV and EMAXVR batches: the shortcut (no kernel over the LMM: every EMAXV request) and the
    full path both run, each equal to the former function."""
    seen = set()
    real = mapper._fit_kernel_np

    def spy(pattern, q, ocp):
        got, want = real(pattern, q, ocp), _fit_kernel_former(pattern, q, ocp)
        assert all(_same(a, b) for a, b in zip(got, want))
        seen.add((pattern, bool(got[1].any())))
        return got

    for arch, wl in (("emaxv", "vgg16-conv"), ("emaxvr", "alexnet")):
        em.workload_plans.cache_clear()
        with mock.patch.object(mapper, "_fit_kernel_np", spy):
            get_model(arch).evaluate_points(wl, _rows(arch, 60, 3))
    em.workload_plans.cache_clear()
    assert ("single", False) in seen and any(over for _, over in seen)


def _fit_lmm_former(pattern, resident, q, ocp, pxp, live, shared=None):
    """mapper._fit_lmm_np before this round."""
    lmm, unit = q.lmm, (np.ones_like(ocp) if pattern == "A" else ocp)
    step = np.where(pxp == 2, 2, 1)
    ker_all, over, iters, oc_chunk, ker = shared if shared is not None else _fit_kernel_former(pattern, q, ocp)
    per_span, per_px = (q.e, q.e) if pattern == "single" else (2 * q.e * (q.oh if resident else 1), 2 * q.e)
    span_max = lmm // per_span
    seg_max = np.where(q.w + 2 * q.pad <= span_max, lmm // per_px,
                       np.minimum(lmm // per_px, (span_max - q.kw_ext) // q.stride + 1))
    seg_max -= np.where(step == 2, seg_max % 2, 0)
    found = live & (ker <= lmm) & ~(over & (iters < 1)) & (seg_max >= step)
    n_seg = np.where(found, mapper._cdiv(q.ow, np.maximum(seg_max, 1)), 0)
    ow_seg = mapper._cdiv(q.ow, np.maximum(n_seg, 1))
    ow_seg = np.where(step == 2, ow_seg + ow_seg % 2, ow_seg)
    need = mapper._lmm_need_np(pattern, resident, q, ow_seg, oc_chunk, ocp)[0]
    cap = np.maximum(unit, q.oc_cap // unit * unit)
    capped = (n_seg > 0) & (q.oc_cap > 0) & (q.oc_cap < q.oc) & q.mac & (oc_chunk > cap)
    if capped.any():
        oc_chunk = np.where(capped, cap, oc_chunk)
        need = np.where(capped, mapper._lmm_need_np(pattern, resident, q, ow_seg, oc_chunk, ocp)[0], need)
    code = np.where(live & over & (iters < 1), 1, np.where(live & (n_seg == 0), 2, 0))
    why_need = np.where(code == 1, ker_all, mapper._lmm_need_np(pattern, resident, q, step, oc_chunk, ocp)[0])
    return n_seg, ow_seg, oc_chunk, need, code, why_need


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_requests(), data=st.data())
def test_fit_lmm_equals_the_former(case, data):
    """_fit_lmm_np (the single loop's one quotient; no pairs step: no even-segment steps) equals the former function's
    six arrays exactly: every pattern, resident or not, pairs steps or none, channel caps, live or not."""
    pattern, q, ocp = case
    n = len(ocp)
    q.oc_cap = np.array(data.draw(st.lists(st.integers(0, 512), min_size=n, max_size=n)), dtype=np.int64)
    pxp = np.array(data.draw(st.lists(st.integers(1, 2) if data.draw(st.booleans()) else st.just(1), min_size=n,
                                      max_size=n)), dtype=np.int64)
    live = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    resident = data.draw(st.booleans())
    got = mapper._fit_lmm_np(pattern, resident, q, ocp, pxp, live)
    want = _fit_lmm_former(pattern, resident, q, ocp, pxp, live)
    assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want))



def _structure_former(pattern: str, q, split_ok: np.ndarray,
                      arch: str) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """mapper._structure_np before this round (``np.maximum(avail, 0) // whole`` computed twice)."""
    gpar, ocp, pxp, rpk = mapper._geometry_np(pattern, q)
    c, e, w = q.cols, q.e, q.mac
    tail = mapper._tail_rows_np(pattern, c)
    avail = q.rows - mapper.HEADER_ROWS[pattern] - tail
    whole = q.kh * rpk
    fits = avail >= whole
    max_b = ~w & (pattern == "B")
    icpar = np.where(max_b, 1, np.minimum(q.ic, np.maximum(avail, 0) // whole))
    if arch == "emaxv":
        icpar = mapper._largest_divisor_np(q.ic, np.maximum(icpar, 1))
    pxsets = np.where(max_b, np.minimum(np.maximum(avail, 0) // whole, q.ow), 1)
    split_khpar = np.maximum(avail, 0) // rpk
    rows_code = np.where(fits, 0, np.where(~split_ok, 1, np.where(avail < 1, 2, np.where(split_khpar < 1, 3, 0))))
    icpar = np.where(fits, icpar, 1)
    khpar = np.where(fits, q.kh, split_khpar)
    pxsets = np.where(fits, pxsets, 1)
    if pattern == "B":
        pxp = np.where(max_b, pxsets, pxp)
    mac_rows = icpar * khpar * rpk * np.where(max_b, pxsets, 1)
    rows_used = mapper.HEADER_ROWS[pattern] + mac_rows + tail
    taps = icpar * khpar * q.kw
    zero = np.zeros_like(taps)
    if pattern == "single":
        per_krow = np.where(q.lddhr & (q.stride == 1), (q.kw + 1) // 2, q.kw)  # ceil(kw * 0.5) or kw
        mem_row = np.minimum(2 * c, per_krow)
        dup = mapper._cdiv(per_krow, 2 * c)
        macs = taps
        alus = macs + 1 + (np.minimum(c, q.kw) - 1) + 1
        loads = icpar * khpar * per_krow
        load_bytes = taps * e
        regs = np.where(w, macs + 1, 0) + 2
        kernel_lmms = zero
    elif pattern == "A":
        aex = np.where(w, mapper.AEX_STREAMS["mac"], mapper.AEX_STREAMS["max"])
        mem_row = np.where(w, 2, 1) * np.minimum(c, q.kw)
        dup = zero + 1
        macs = taps
        alus = macs + mapper.LOOP_COUNTERS_VR + aex + (np.minimum(c, q.kw) - 1) + 1
        loads = taps * np.where(w, 2, 1)
        load_bytes = loads * e
        regs = 2 * mapper.LOOP_COUNTERS_VR + 3 * aex
        kernel_lmms = np.where(w, mapper._cdiv(taps, 2), 0)
    else:  # B, pairs
        aex = np.where(w, mapper.AEX_STREAMS["mac"], mapper.AEX_STREAMS["max"])
        kern_instr = np.where(w, np.where(q.lddhr, mapper._cdiv(ocp, 2), ocp), 0)
        mem_row = gpar * (1 + kern_instr)
        dup = zero + 1
        macs = taps * gpar * ocp * pxp
        bottoms = gpar * ocp * pxp
        alus = macs + mapper.LOOP_COUNTERS_VR + aex + bottoms + (ocp if pattern == "pairs" else 0)
        loads = mac_rows * mem_row
        load_bytes = loads * e * np.where(q.lddhr, 2, 1)
        regs = 2 * mapper.LOOP_COUNTERS_VR + 3 * aex
        kernel_lmms = np.where(w, mac_rows * gpar * mapper._cdiv(ocp, 2), 0)
    code = np.where(mem_row > 2 * c, 1, np.where(rows_used > q.rows, 2, np.where(alus > q.rows * c, 3, 0)))
    core = dict(icpar=icpar, khpar=khpar, gpar=gpar, oc_par=ocp, px_par=pxp, macs=macs, alus=alus,
                rows_used=rows_used, mem_per_row=mem_row, loads_per_iter=loads, load_bytes_per_iter=load_bytes,
                dup_rows=dup, regs=regs + zero, kernel_lmms=kernel_lmms)
    why = dict(rows_code=rows_code, avail=avail, whole=whole, rpk=rpk, code=code, mem_row=mem_row,
               rows_used=rows_used, alus=alus)
    return (rows_code == 0) & (code == 0), core, why


def test_structure_equals_the_former():
    """_structure_np (the LMM-free rows' sets once) equals the former function on every request of EMAXV and EMAXVR
    batches (small arrays with reasons, every pattern): the same arrays exactly, key by key."""
    seen = set()
    real = mapper._structure_np

    def spy(pattern, q, split_ok, arch):
        got, want = real(pattern, q, split_ok, arch), _structure_former(pattern, q, split_ok, arch)
        assert _same(got[0], want[0])
        for a, b in zip(got[1:], want[1:]):
            assert list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
        seen.add((arch, pattern))
        return got

    for arch, wl in (("emaxv", "vgg16-conv"), ("emaxv", "alexnet"), ("emaxvr", "alexnet"), ("emaxvr", "vgg16")):
        em.workload_plans.cache_clear()
        with mock.patch.object(mapper, "_structure_np", spy):
            get_model(arch).evaluate_points(wl, _rows(arch, 80, 5))
    em.workload_plans.cache_clear()
    assert {p for a, p in seen if a == "emaxvr"} >= {"A", "B"} and ("emaxv", "single") in seen


# ---------------------------------------------------------------- whole batches
@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16-conv", "alexnet", "resnet50"]))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_batch_equals_it_with_the_former_code(seed, arch, wl):
    """Mixed points (small arrays with reasons, criterion=dram, fused pooling): the contract dictionaries equal those
    of the former builder and kernel fit."""
    rows = _rows(arch, 40, seed)
    m = get_model(arch)
    em.workload_plans.cache_clear()
    fast = m.evaluate_points(wl, rows)
    with mock.patch.object(em, "emaxv_plans", _emaxv_plans_former), \
            mock.patch.object(mapper, "_fit_kernel_np", _fit_kernel_former), \
            mock.patch.object(mapper, "_fit_lmm_np", _fit_lmm_former), \
            mock.patch.object(mapper, "_structure_np", _structure_former):
        em.workload_plans.cache_clear()
        slow = m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    assert [_dump(fast.point(i)) for i in range(fast.n)] == [_dump(slow.point(i)) for i in range(slow.n)]

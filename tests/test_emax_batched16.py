"""EMAX batched, sixteenth round (issue 15): each change compared with the code before it (kept here as the oracle,
verbatim but for names) bit for bit."""

from __future__ import annotations

from contextlib import ExitStack
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import cost, timing
from archmodels.emax import model as em
from archmodels.emax.timing import KINDS, STATES, Link
from archmodels.result import metric_of
from workloads import load_workload

from .test_emax_batched_paths5 import _rows


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=float)).view(np.int64)


# ------------------------------------------------------------------ Link.at: per-point gathers once per pairs array
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_link_at_equals_the_gather_and_keeps_it_for_one_pairs_array(data):
    """``link.at(a, pts)`` is ``a[pts]`` bit for bit (NaN and infinities of either sign included), for the link's
    arrays and any other per-point array; asked again with the same ``pts`` object it gives the very array gathered;
    a new ``pts`` object (even of equal values) is gathered anew, and two arrays at one ``pts`` keep their own."""
    n = data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    kept_from = data.draw(st.sampled_from([0, 30]))  # (pairs from which the gathers are kept)
    with mock.patch.object(timing, "AT_KEPT_FROM", kept_from):
        _link_at_case(data, n, rng, kept_from)


def _link_at_case(data, n, rng, kept_from):
    link = Link(*(rng.choice([100.0, 200.0, 333.0], n) for _ in range(6)), 2.0, 8.0)
    other = rng.standard_normal(n) * rng.choice([1.0, np.nan, np.inf, -np.inf, -0.0], n)
    for _ in range(3):
        pts = rng.integers(0, n, data.draw(st.integers(0, 60)))
        arrays = (link.clock_hz, link.bus_bytes, link.elem, link.cols, link.dram_bpc, other)
        got = [link.at(a, pts) for a in arrays]
        for a, g in zip(arrays, got):
            assert g.dtype == a.dtype and np.array_equal(_bits(g), _bits(a[pts]))
            if len(pts) >= kept_from:
                assert link.at(a, pts) is g  # (kept: gathered once)
            else:  # (a few pairs: gathered each time)
                assert link.at(a, pts) is not g and np.array_equal(_bits(link.at(a, pts)), _bits(g))
        fresh = pts.copy()
        again = link.at(other, fresh)
        assert again is not got[-1] and np.array_equal(_bits(again), _bits(other[pts]))
        assert link.at(link.clock_hz, fresh) is not got[0]  # (the former pairs' gathers dropped)
        assert np.array_equal(_bits(link.at(link.clock_hz, fresh)), _bits(link.clock_hz[pts]))


# ------------------------------------------------------------------ the oracle: _plan_metrics before this round
def _plan_metrics_former(tab, rows, pts, link, pp, e_comp, e_sram, macs, st=None, defer=False):
    if st is None:
        st = timing.pair_states(tab, rows, pts, link, for_choice=False)
    cycles = sum(st[s] for s in STATES)
    time_s = cycles / link.clock_hz[pts]
    rd, dram_r = timing.pair_dram_reads(tab, rows, pts, link)
    at = timing._Take(rows, timing._every(tab, rows))  # (EMAXV, one design point: every plan in order, no copies)
    p = {k: at(tab.plan[k]) for k in em._REPORTED_PLAN_COLUMNS}
    dram_w = p["dram_write"]
    e_dram = cost.dram_energy_j(dram_r, dram_w, pp.dram_rd_pj[pts], pp.dram_wr_pj[pts])
    pes = pp.pes[pts]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "cycles": cycles,
            "time_s": time_s,
            "utilization": macs / (cycles * pes),
            "dram_read_bytes": dram_r,
            "dram_write_bytes": dram_w,
            "energy_j": e_dram + e_comp + e_sram,
            "starts": p["starts"],
            "activations": p["activations"],
            "bands": p["bands"],
            "passes": p["passes"],
            "parallelism": p["macs"],
            "icpar": p["icpar"],
            "alus_used": p["alus"],
            "rows_used": p["rows_used"],
            "ideal_time_s": p["ops"] / p["macs"] / link.clock_hz[pts],
            "overhead_fraction": (st["LMMI"] + st["REGV"] + st["PRE_POST_EXEC"]) / cycles,
            "load_fraction_of_exec": (st["LOAD"] + st["_pload_total"]) / st["EXEC"],
            "mac_utilization": p["ops"] / (cycles * pes),
            "alu_occupancy": p["alus"] / pes,
            "pload_cycles": st["_pload_total"],
            "pdrain_cycles": st["_pdrain_total"],
            "spm_read_bytes": p["spm_read"],
            "spm_write_bytes": p["spm_write"],
            "spm_need_bytes": p["spm_need"],
            "lmm_read_bytes": p["lmm_read"],
            "lmm_write_bytes": p["lmm_write"],
            "dram_access_per_op": np.where(macs != 0, (dram_r + dram_w) / (2 * macs), np.nan),
            "dram_compulsory_bytes": p["compulsory"],
            "dram_traffic_ratio": np.where(p["compulsory"] > 0, (dram_r + dram_w) / p["compulsory"], np.nan),
            "dram_energy_j": e_dram,
            "compute_energy_j": e_comp,
            "sram_energy_j": e_sram,
            "dram_power_w": e_dram / time_s,
        }
    for kind, d in em.DRAM_KIND_KEYS:
        out[f"dram_{kind}_{d}_bytes"] = (rd if d == "read" else p["write_kind"])[:, KINDS.index(kind)]
    for s in STATES:
        out["state:" + s] = st[s]
    return out


def _former():
    """The code before this round patched in: plain gathers for ``Link.at``, the former ``_plan_metrics``, every
    value computed at once (``DEFER_UNREAD`` False: the runner-up ratios' former expression)."""
    stack = ExitStack()
    stack.enter_context(mock.patch.object(Link, "at", lambda self, a, pts: a[pts]))
    stack.enter_context(mock.patch.object(em, "_plan_metrics", _plan_metrics_former))
    stack.enter_context(mock.patch.object(em, "DEFER_UNREAD", False))
    stack.enter_context(mock.patch.object(timing, "_column_words", _column_words_former))
    return stack


def _column_words_former(b, j, pts, link):
    """The words of a read column as :func:`timing._dense_flows` and :func:`timing._read_bytes` computed them."""
    weight = 1.0 if b.rd_kind[j] == 1 else 0.0
    return timing._words_of(b.rd_each[:, j], weight, link.bus_bytes[pts], link.elem[pts])


def test_column_words_are_the_former_words_once_per_chunk():
    """Over an EMAXV chunk's block (its transfer columns, write and read, of several kinds), ``_column_words`` is the
    former ``_words_of`` of the column bit for bit, kept for one pairs array (the very array asked again), computed
    anew for a new pairs array."""
    m = get_model("emaxv")
    rows = _rows("emaxv", 300, 11)
    seen = []
    real = timing._dense_flows

    def spy(b, host, pts, link, variants, always=False):
        seen.append((b, pts, link))
        return real(b, host, pts, link, variants, always)

    em.workload_plans.cache_clear()
    with mock.patch.object(timing, "_dense_flows", spy):
        m.evaluate_batch(load_workload("vgg16-conv"), m.params.points(rows))
    em.workload_plans.cache_clear()
    assert seen
    for b, pts, link in seen:
        assert b.rd_on.shape[1] >= 2 and len({int(k) for k in b.rd_kind}) >= 2
        for j in range(b.rd_on.shape[1]):
            got = timing._column_words(b, j, pts, link)
            assert np.array_equal(_bits(got), _bits(_column_words_former(b, j, pts, link)))
            assert timing._column_words(b, j, pts, link) is got
            again = timing._column_words(b, j, pts.copy(), link)
            assert again is not got and np.array_equal(_bits(again), _bits(got))


#: the labels compared (the plan texts are built from the chosen plans' rows, which the metrics' test compares)
LABELS = ("runner_up_lost", "mapping", "loop_order", "fused_into")


def _everything(arch: str, wl: str, rows: list[dict]):
    """Every layer's metrics (keys in order), states, feasibility and reasons, and the totals, as bits."""
    m = get_model(arch)
    em.workload_plans.cache_clear()
    r = m.evaluate_batch(load_workload(wl), m.params.points(rows))
    em.workload_plans.cache_clear()
    layers = [(list(lb.metrics), {k: _bits(v) for k, v in lb.metrics.items()},
               {k: _bits(v) for k, v in lb.states.items()}, lb.feasible.copy(),
               list(map(str, lb.reason)) + [str(v) for k in LABELS for v in lb.labels[k]])
              for lb in r.layers]
    totals = {k: _bits(v) if np.asarray(v).dtype.kind in "fiub" else list(map(str, v))
              for k, v in r.model_totals.items()}
    return layers, totals


def _same(got, want) -> None:
    (gl, gt), (wl, wt) = got, want
    assert len(gl) == len(wl) and list(gt) == list(wt)
    for (gk, gm, gs, gf, gr), (wk, wm, ws, wf, wr) in zip(gl, wl):
        assert gk == wk and list(gs) == list(ws)
        for k in wm:
            assert np.array_equal(gm[k], wm[k]), k
        for k in ws:
            assert np.array_equal(gs[k], ws[k]), k
        assert np.array_equal(gf, wf) and gr == wr
    for k in wt:
        assert np.array_equal(np.asarray(gt[k]), np.asarray(wt[k])), k


@pytest.mark.parametrize("arch,wl,n,seed", [("emaxv", "vgg16-conv", 4096, 3),  # two chunks, the values kept
                                            ("emaxv", "vgg16-conv", 20, 4),  # a cube filled at once
                                            ("emaxv", "vgg16", 300, 5),  # FC layers' forms
                                            ("emaxv", "alexnet", 1, 6),  # one design point
                                            ("emaxvr", "alexnet", 24, 7)])
def test_batches_equal_the_former_metrics(arch, wl, n, seed):
    """Whole batches (random points; a third with small arrays and LMMs: layers without a plan, NaN; criterion dram)
    give what the former code gives, every metric, state, reason and total bit for bit and keys in order."""
    rows = _rows(arch, n, seed)
    got = _everything(arch, wl, rows)
    with _former():
        want = _everything(arch, wl, rows)
    _same(got, want)


def test_unread_metrics_are_computed_only_when_read():
    """A 4,096-point EMAXV batch computes none of its deferred values by the time it returns (its own steps read other
    keys); reading every key computes each one per chunk, and gives what they were (the test above)."""
    calls = []
    real = em._Deferred.__call__
    with mock.patch.object(em._Deferred, "__call__", lambda self: calls.append(1) or real(self)):
        m = get_model("emaxv")
        em.workload_plans.cache_clear()
        r = m.evaluate_batch(load_workload("vgg16-conv"), m.params.points(_rows("emaxv", 4096, 8)))
        assert not calls
        for lb in r.layers:
            metric_of(lb, "utilization"), metric_of(lb, "runner_up_time_ratio")
        assert len(calls) == 2 * 2  # (two keys of two chunks)
        for lb in r.layers:
            dict(lb.metrics)
        assert len(calls) == 2 * 11  # (8 metrics and 3 runner-up ratios of two chunks, once each)
    made = []
    real_init = em._Deferred.__init__
    with mock.patch.object(em._Deferred, "__init__", lambda self, fn, n: made.append(1) or real_init(self, fn, n)):
        m.evaluate_batch(load_workload("vgg16-conv"), m.params.points(_rows("emaxv", 20, 8)))  # (a cube filled at once)
        assert not made
        m.evaluate_batch(load_workload("vgg16-conv"), m.params.points(_rows("emaxv", 200, 8)))
        assert len(made) == 11
    em.workload_plans.cache_clear()


# ------------------------------------------------------------------ _dense_flows: a column's read or write branch
def _dense_flows_former(b, host: np.ndarray, pts: np.ndarray, link,
                 variants: tuple[bool, ...], always: bool = False) -> dict[str, np.ndarray]:
    """The former :func:`timing._dense_flows`."""
    n, nph = len(pts), len(timing.PHASES)
    ns = len(b.phase)
    bus, elem = link.at(link.bus_bytes, pts), link.at(link.elem, pts)
    lat_d, lat_s = link.lat_dram[pts], link.lat_spm[pts]
    choice, report = True in variants, False in variants
    work, dram_x, spm_x = np.zeros((nph, n)), np.zeros((nph, n)), np.zeros((nph, n))
    longest: list = [None] * nph
    rd, wr = 0.0 + host, np.zeros(n)  # (the host's reads first: a sum from 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (columns a plan does not use: discarded)
        for j in np.argsort(b.phase, kind="stable").tolist():  # phase by phase, slot order within a phase
            ph = int(b.phase[j])
            on = b.xfer_on[:, j]
            read = 0.0 if b.write[j] else 1.0
            count, each = b.rd_count[:, j], b.rd_each[:, j]
            dram = b.dram[:, j].astype(float)
            w = timing._column_words(b, j, pts, link)  # (timing._words_of(each, 1.0 if kind 1 else 0.0, bus, elem))
            cost = timing.HANDSHAKE_CYCLES + read * np.where(dram > 0, lat_d, lat_s) + w
            moved = count * np.where(read > 0, w * bus, each)
            rounds = b.bursts[:, j] * np.ceil(b.per_burst[:, j] / b.par[:, j] - 1e-9)
            work[ph] += np.where(on, count * cost, 0.0)
            r = np.where(on, rounds * cost, -np.inf)
            longest[ph] = r if longest[ph] is None else np.maximum(longest[ph], r)
            md = moved * dram
            dram_x[ph] += np.where(on, md, 0.0)
            spm_x[ph] += np.where(on, moved * (1 - dram), 0.0)
            rd = rd + np.where(on, md * read, 0.0)
            wr = wr + np.where(on, md * (1 - read), 0.0)
        stage = [np.where(b.rd_on[:, j], timing._read_bytes(b, j, bus, elem), 0.0)  # staging reads (on: a positive
                 for j in range(ns, b.rd_on.shape[1])]                          # count), in order
        staged = np.zeros(n)
        for v in stage:
            staged = staged + v
    longest = np.stack([np.zeros(n) if v is None else np.maximum(0.0, v) for v in longest], axis=1).reshape(-1)
    out = {"work": work.T.reshape(-1), "longest": longest}
    if choice:
        if stage:  # the staging reads after the phase's transfers (PLOAD), one by one, and after the reads
            dc, sc = dram_x.copy(), spm_x.copy()
            rd_c = rd
            for v in stage:
                dc[timing._PLOAD_AT] += v
                sc[timing._PLOAD_AT] += v
                rd_c = rd_c + v
            out["dram_c"], out["spm_c"], out["_dram_read"] = dc.T.reshape(-1), sc.T.reshape(-1), rd_c
        else:
            out["dram_c"], out["spm_c"], out["_dram_read"] = dram_x.T.reshape(-1), spm_x.T.reshape(-1), rd
        out["_dram_write"] = wr
    if report:
        if stage:
            st = np.zeros((nph, n))
            st[timing._PLOAD_AT] = staged
            out["staged"] = st.T.reshape(-1)
        else:  # no staging column (EMAXV): every sum is the +0.0 it starts from, as np.zeros gives it (no transposing
            out["staged"] = np.zeros(n * nph)  # copy of a [phases, pairs] matrix of zeros)
        if always or not timing._same_sums(variants, out):
            out["dram_r"] = dram_x.T.reshape(-1)
            out["spm_r"] = spm_x.T.reshape(-1)
    return out



_BLOCK: list = []


def _a_block():
    """An EMAXV VGG16-conv chunk's block as ``_dense_flows`` got it: (block, host bytes, points, link)."""
    if not _BLOCK:
        m = get_model("emaxv")
        real = timing._dense_flows

        def spy(b, host, pts, link, variants, always=False):
            _BLOCK.append((b, host, pts, link))
            return real(b, host, pts, link, variants, always)

        em.workload_plans.cache_clear()
        with mock.patch.object(timing, "_dense_flows", spy):
            m.evaluate_batch(load_workload("vgg16-conv"), m.params.points(_rows("emaxv", 200, 12)))
        em.workload_plans.cache_clear()
    return _BLOCK[0]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), odd=st.sampled_from([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, -3.0]))
def test_dense_flows_equal_the_former_flows(seed, odd):
    """``_dense_flows`` (a read column without its multiplications by 1.0, one branch of ``np.where(read > 0, ...)``)
    equals the former code bit for bit on an EMAXV chunk's block (read and write columns), at random points whose
    link numbers (latencies, bandwidths, clocks, bus widths, element sizes) are sometimes NaN of either sign,
    infinite, -0.0 or negative; both variants."""
    b, host, pts0, _ = _a_block()
    assert not b.write.all() and b.write.any()
    rng = np.random.default_rng(seed)
    n = 64
    with np.errstate(all="ignore"):
        args = [np.where(rng.random(n) < 0.15, odd, rng.choice([100.0, 150.0, 400.0], n)) for _ in range(6)]
        args += [np.where(rng.random(n) < 0.15, odd, 2.0), 8.0]
        link_a, link_b = Link(*args), Link(*args)  # (two links: no memo shared)
    pts = rng.integers(0, n, len(pts0))
    with np.errstate(all="ignore"):
        got = timing._dense_flows(b, host, pts, link_a, (True, False))
        want = _dense_flows_former(b, host, pts, link_b, (True, False))
    assert list(got) == list(want)
    for k in want:
        assert np.array_equal(_bits(got[k]), _bits(want[k])), k


def test_a_deferred_value_written_as_it_is_gives_its_values():
    """Code writing a metric's value into an array as it is (``cube[j][to] = v``, as the earlier rounds' reference
    adds do) gets the deferred values, as numpy asks them of ``__array__``, in any dtype asked."""
    a = np.array([1.0, -0.0, np.nan, -np.inf, 3.5])
    d = em._Deferred(lambda: a / 1.0, len(a))
    out = np.full(7, 9.0)
    out[[0, 2, 3, 4, 6]] = d
    assert np.array_equal(_bits(out[[0, 2, 3, 4, 6]]), _bits(a)) and out[1] == 9.0 and d.nbytes == a.nbytes
    assert np.array_equal(np.asarray(d, dtype=np.float32), a.astype(np.float32), equal_nan=True)

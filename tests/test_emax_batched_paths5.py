"""EMAX batched paths, fifth round (issue 15): a chunk's points gathered by one index (``_Groups``), the reasons of
(layer, combination) pairs without a plan handed over as arrays (``Plans.missing``), runner-up verdicts from a
[criterion, phrase] table (``verdicts_coded``), fused pooling passes naming each pooling shape once, ``oc_tiles``
cached. Each fast path is compared with the former form bit for bit."""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import explain, mapper, traffic
from archmodels.emax import model as em

from .test_emax_batched_paths4 import structure_keys

SLOW = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 40))
def test_verdicts_coded_equal_the_per_pair_phrases(data, n):
    """verdicts_coded (each pair's phrase from a [criterion, phrase] table) equals verdicts over the per-pair
    criterion array, text for text and as Python strings, for any mix of criteria (in any order of first
    appearance), outcomes and sizes."""
    names = data.draw(st.lists(st.sampled_from(em.CRITERIA), min_size=1, max_size=len(em.CRITERIA), unique=True))
    code = np.array(data.draw(st.lists(st.integers(0, len(names) - 1), min_size=n, max_size=n)), dtype=np.int64)
    flags = [np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool) for _ in range(3)]
    crit = np.empty(n, dtype=object)
    crit[:] = [names[c] for c in code.tolist()]
    want = explain.verdicts(crit, *flags)
    got = explain.verdicts_coded(names, code, *flags)
    assert got.dtype == want.dtype == object and got.shape == want.shape
    assert got.tolist() == want.tolist() and all(type(x) is str for x in got.tolist())


def test_point_criterion_codes_name_each_points_criterion():
    """_PointConsts.criterion_codes: the distinct criteria in order of first appearance, each point's position."""
    m = get_model("emaxvr")
    pts = m.params.points(m.params.random_rows(300, np.random.default_rng(11)))
    names, code = em._PointConsts(pts, 300).criterion_codes
    assert len(set(names)) == len(names) and code.dtype == np.int64
    assert [names[c] for c in code.tolist()] == list(pts["criterion"])
    assert names == list(dict.fromkeys(pts["criterion"]))


@settings(max_examples=80, deadline=None)
@given(sizes=st.lists(st.integers(0, 4), min_size=1, max_size=12), data=st.data())
def test_groups_take_equals_concatenating_the_combinations_points(sizes, data):
    """_Groups.take equals np.concatenate of the combinations' point arrays (and their sizes), for any list of
    combinations (repeats, empty groups, one combination)."""
    rng = np.random.default_rng(len(sizes))
    idx = [np.sort(rng.choice(100, s, replace=False)).astype(np.int64) for s in sizes]
    ks = np.array(data.draw(st.lists(st.integers(0, len(sizes) - 1), max_size=30)), dtype=np.int64)
    pts, n = em._Groups(idx).take(ks)
    want = np.concatenate([idx[k] for k in ks]) if len(ks) else np.zeros(0, np.int64)
    assert pts.dtype == want.dtype == np.int64 and pts.tolist() == want.tolist()
    assert n.dtype == np.int64 and n.tolist() == [len(idx[k]) for k in ks.tolist()]


def _rows(arch: str, n: int, seed: int) -> list[dict]:
    """Random points, some with arrays and LMMs small enough that layers get no plan (reasons), some under
    criterion=dram (tile searches), pooling fused where the model allows it."""
    m = get_model(arch)
    rng = np.random.default_rng(seed)
    rows = m.params.random_rows(n, rng)
    for r in rows[: n // 3]:
        r.update(rows=int(rng.choice([4, 8, 12])), lmm_kb=float(rng.choice([1.0, 2.0, 4.0])))
    for r in rows[n // 3: n // 2]:
        r["criterion"] = "dram"
    return rows


@SLOW
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16", "alexnet", "lenet"]))
def test_batch_of_random_points_equals_each_point_alone(seed, arch, wl):
    """Points without a plan for some layers (their reasons scattered from Plans.missing), fused pooling layers and
    every criterion in one batch give each point what it gets alone: feasibility and reasons per layer, and the
    whole contract dictionary (every metric, label and text; keys compared sorted: a layer without a plan lists its
    metric keys in the order of the chunk's first combination, as before this round), through _Groups, the
    missing-pair scatter, the per-key cube scatter and the coded verdicts."""
    m = get_model(arch)
    rows = _rows(arch, 24, seed)
    batch = m.evaluate_points(wl, rows)
    assert not all(lb.feasible.all() for lb in batch.layers)  # some layers got no plan: their reasons were scattered
    for i, row in enumerate(rows):
        one = m.evaluate_points(wl, [row])
        for lb_one, lb in zip(one.layers, batch.layers, strict=True):
            assert bool(lb_one.feasible[0]) == bool(lb.feasible[i]) and lb_one.reason[0] == lb.reason[i], (i, lb.name)
        assert _dump(one.point(0)) == _dump(batch.point(i)), i


def _dump(d: dict) -> str:
    return json.dumps(d, sort_keys=True, default=str)


def test_plans_missing_lists_the_reasons_layer_by_layer():
    """Plans.missing names exactly the (layer, combination) pairs with a reason, layer by layer, with that reason."""
    m = get_model("emaxvr")
    rows = _rows("emaxvr", 40, 3)
    seen = []
    real = em._final_plans

    def spy(*args):
        out = real(*args)
        seen.append(out)
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "_final_plans", spy):
        m.evaluate_points("vgg16", rows)
    em.workload_plans.cache_clear()
    assert seen
    for p in seen:
        li, ki, why = p.missing
        want = [(i, k, w) for i, row in enumerate(p.reason) for k, w in enumerate(row) if w]
        assert why.dtype == object and list(zip(li.tolist(), ki.tolist(), why.tolist())) == want
    assert any(len(p.missing[0]) for p in seen)


@SLOW
@given(seed=st.integers(0, 2**31 - 1), wl=st.sampled_from(["vgg16", "alexnet"]))
def test_pool_passes_name_each_shape_once_and_plan_as_one_shape_per_pass(seed, wl):
    """The fused pooling passes list each pooling shape once, their rows naming it by position: the shape of every
    pass is its layer's pooling shape, and the builder plans the passes (and every layer row riding along) exactly
    as with one shape listed per pass (the former listing): every plan column, label and entry table."""
    m = get_model("emaxvr")
    rows = [dict(r, pool_fusion=True) for r in m.params.random_rows(30, np.random.default_rng(seed))]
    seen = []
    real = em._pool_passes

    def spy(shapes, *args):
        out = real(shapes, *args)
        seen.append((shapes, out))
        return out

    em.workload_plans.cache_clear()
    with mock.patch.object(em, "_pool_passes", spy):
        m.evaluate_points(wl, rows)
    em.workload_plans.cache_clear()
    checked = 0
    for shapes, passes in seen:
        if not passes.n:
            continue
        at = passes.rows["shape"]
        assert at.dtype == np.int64 and len(set(map(id, passes.shapes))) == len(passes.shapes)
        assert [passes.shapes[a] for a in at.tolist()] == [shapes[i + 1] for i in passes.li.tolist()]
        one_each = dict(passes.rows, shape=np.arange(passes.n))
        got = traffic.emaxvr_plans(passes.shapes, {k: v.copy() for k, v in passes.rows.items()})
        want = traffic.emaxvr_plans([passes.shapes[a] for a in at.tolist()], one_each)
        _same_tables(got, want)
        checked += 1
    assert checked


def _same_tables(got: traffic.PlanTable, want: traffic.PlanTable) -> None:
    assert list(got.plan) == list(want.plan) and list(got.label) == list(want.label)
    for k, v in want.plan.items():
        assert got.plan[k].dtype == v.dtype and np.array_equal(got.plan[k], v, equal_nan=True), k
    for k, v in want.label.items():
        assert got.label[k].tolist() == v.tolist(), k
    assert got.src.tolist() == want.src.tolist()
    for part in ("xfer", "stage", "read", "host"):
        a, b = getattr(got, part), getattr(want, part)
        assert list(a) == list(b)
        for k in b:
            assert np.array_equal(a[k], b[k], equal_nan=True), (part, k)
    assert np.array_equal(got.read_order, want.read_order)


@settings(max_examples=200, deadline=None)
@given(pattern=st.sampled_from(["A", "B", "pairs"]), oc=st.integers(1, 1024), ocp=st.integers(1, 8),
       t_max=st.integers(0, 1100), elem=st.sampled_from([1, 2, 4]), per_unit=st.sampled_from([1, 2]),
       spread=st.one_of(st.none(), st.tuples(st.integers(1, 9), st.integers(1, 5))))
def test_cached_oc_tiles_equal_the_function(pattern, oc, ocp, t_max, elem, per_unit, spread):
    """oc_tiles (cached) answers what the function computes, asked again or not."""
    want = mapper.oc_tiles.__wrapped__(pattern, oc, ocp, t_max, elem, per_unit, spread)
    assert mapper.oc_tiles(pattern, oc, ocp, t_max, elem, per_unit, spread) == want
    assert mapper.oc_tiles(pattern, oc, ocp, t_max, elem, per_unit, spread) == want
    assert mapper.oc_tiles.cache_info().maxsize == 4096


def test_one_combination_groups_take_as_the_general_path():
    """A design point alone (one combination) takes its points without concatenating: the same points and sizes as
    the general path over a list holding the same combination twice."""
    idx = [np.array([0], dtype=np.int64)]
    ks = np.zeros(7, dtype=np.int64)
    one, general = em._Groups(idx), em._Groups(idx + [np.array([5], dtype=np.int64)])
    assert one.one and not general.one
    for (a, n), (b, m) in ((one.take(ks), general.take(ks)), (one.take(ks[:0]), general.take(ks[:0]))):
        assert a.tolist() == b.tolist() and n.tolist() == m.tolist() and a.dtype == b.dtype and n.dtype == m.dtype


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n_tail=st.integers(0, 5), lazy_first=st.booleans())
def test_rows_equal_the_columns_gathered_and_concatenated_at_once(data, n_tail, lazy_first):
    """traffic.Rows (each column gathered from its source when first read, rows of it taken in one composed
    gather) equals the columns gathered whole, the first source holding a name winning, then concatenated with the
    tail rows: every value, dtype (numbers, booleans, fixed-width and object texts) and rows taken by _Gather; its
    comparisons with a value (made on the source table, then gathered) equal the columns' comparisons."""
    rng = np.random.default_rng(n_tail)
    n_a, n_b, n = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)), data.draw(st.integers(0, 12))
    texts = np.empty(n_a, dtype=object)
    texts[:] = [f"m{i}" for i in range(n_a)]
    a = {"x": rng.random(n_a), "k": rng.integers(0, 9, n_a), "name": texts, "both": rng.random(n_a)}
    b = {"flag": rng.random(n_b) < 0.5, "pin": np.array(["auto", "spm", "dram"][:n_b] + ["x"] * (n_b - 3))[:n_b],
         "both": rng.random(n_b)}
    ia = np.array(data.draw(st.lists(st.integers(0, n_a - 1), min_size=n, max_size=n)), dtype=np.int64)
    ib = np.array(data.draw(st.lists(st.integers(0, n_b - 1), min_size=n, max_size=n)), dtype=np.int64)
    tail_texts = np.empty(n_tail, dtype=object)
    tail_texts[:] = ["pool"] * n_tail
    tail = {"x": rng.random(n_tail), "k": np.zeros(n_tail, np.int64), "name": tail_texts,
            "both": rng.random(n_tail), "flag": np.zeros(n_tail, bool), "pin": np.full(n_tail, "auto")}
    sources = [(b, ib), (a, ia)]
    want = {k: v[idx] for d, idx in reversed(sources) for k, v in d.items()}
    if n_tail:
        want = {k: np.concatenate([v, tail[k]]) for k, v in want.items()}
    want["shape"] = np.arange(n + n_tail)
    rows = traffic.Rows({"shape": want["shape"]}, sources, tail if n_tail else None, n_tail)
    at = np.array(data.draw(st.lists(st.integers(0, max(0, n + n_tail - 1)), max_size=15 if n + n_tail else 0)),
                  dtype=np.int64)
    g = traffic._Gather((rows, at))
    for k in (["x", "pin"] if lazy_first else []) + list(want):  # some columns built whole before rows are taken
        got = rows[k] if lazy_first and k in ("x", "pin") else g[k]
        ref = want[k] if lazy_first and k in ("x", "pin") else want[k][at]
        assert got.dtype == ref.dtype and got.tolist() == ref.tolist(), k
    for k, value in (("pin", "auto"), ("pin", "spm"), ("name", "m1"), ("name", "pool"), ("x", 0.5)):
        # compared on the source table, then gathered (Rows.eq, Rows.eq_rows through _Gather.eq), before or after
        # the column was built
        assert traffic._eq(g, k, value).tolist() == (want[k][at] == value).tolist(), k
        assert traffic._eq(rows, k, value).tolist() == (want[k] == value).tolist(), k
        assert traffic._eq(dict(want), k, value).tolist() == (want[k] == value).tolist(), k
    for k in want:
        assert rows[k].dtype == want[k].dtype and rows[k].tolist() == want[k].tolist(), k
        assert k in rows and rows.get(k) is rows[k]
    assert traffic._eq(rows, "pin", "dram").tolist() == (want["pin"] == "dram").tolist()
    assert traffic._eq(g, "pin", "dram").tolist() == (want["pin"][at] == "dram").tolist()
    assert "absent" not in rows and rows.get("absent", 3) == 3


def test_lazy_rows_plan_as_every_column_at_once(monkeypatch):
    """A batch planned with the builders' columns as traffic.Rows (from any number of rows) gives every point the
    same contract dictionary as with every column gathered at once (Rows off)."""
    for arch, wl in (("emaxvr", "vgg16"), ("emaxv", "alexnet"), ("emaxvr", "lenet")):
        m = get_model(arch)
        rows = _rows(arch, 30, 17)
        out = []
        for lazy_from in (0, 1 << 60):
            monkeypatch.setattr(em, "ROWS_LAZY_FROM", lazy_from)
            em.workload_plans.cache_clear()
            b = m.evaluate_points(wl, rows)
            out.append([_dump(b.point(i)) for i in range(b.n)])
        em.workload_plans.cache_clear()
        assert out[0] == out[1], (arch, wl)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n_pts=st.integers(1, 6), n=st.integers(1, 30))
def test_pair_criteria_masks_rank_as_the_per_pair_names(data, n_pts, n):
    """_Criteria (each pair's criterion as masks gathered from the points' masks) ranks, selects, finds the
    runner-up and gives the tolerances exactly as the per-pair object array of names, also after taking pairs."""
    crits = data.draw(st.lists(st.sampled_from(em.CRITERIA), min_size=n_pts, max_size=n_pts))
    pts_crit = np.empty(n_pts, dtype=object)
    pts_crit[:] = crits
    m = get_model("emaxvr")
    pts = m.params.points(m.params.random_rows(n_pts, np.random.default_rng(n)))
    pts["criterion"] = pts_crit
    pp = em._PointConsts(pts, n_pts)
    assert pp.criterion_mask("dram").tolist() == (pts_crit == "dram").tolist()
    pair_pt = np.array(data.draw(st.lists(st.integers(0, n_pts - 1), min_size=n, max_size=n)), dtype=np.int64)
    obj = pts_crit[pair_pt]
    masks = em._Criteria(pp.criterion_mask, pair_pt)
    values = st.one_of(st.floats(0, 10), st.just(float("nan")), st.just(float("inf")), st.just(-0.0), st.just(1.0))
    t, e, d = (np.array(data.draw(st.lists(values, min_size=n, max_size=n))) for _ in range(3))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=4)) if n > 1 else []))
    start = np.array([0] + cuts, dtype=np.int64)
    # (inf x 0 in the drawn values gives NaN, as it may in a plan)
    with np.errstate(invalid="ignore"):
        _rank_alike(obj, masks, t, e, d, start)


def _rank_alike(obj, masks, t, e, d, start) -> None:
    for a, b in ((obj, masks), (obj[::-1], masks[::-1]), (obj[start], masks[start])):
        k = len(a)
        assert np.array_equal(em._primary(a, t[:k], e[:k], d[:k]), em._primary(b, t[:k], e[:k], d[:k]), equal_nan=True)
        for exact in (False, True):
            ra, rb = (np.broadcast_to(em._first_rtol(c, exact), (k,)) for c in (a, b))
            assert np.array_equal(ra, rb)
    sel_a = em._select_pairs(obj, t, e, d, start)
    assert sel_a.tolist() == em._select_pairs(masks, t, e, d, start).tolist()
    pick = start + sel_a
    ru = [em._runner_up_pairs(c, t, e, d, start, pick).tolist() for c in (obj, masks)]
    assert ru[0] == ru[1]


def test_an_array_without_an_spm_is_its_own_mapper_view():
    """_arrays hands the mapper the array itself when it has no SPM (equal to the view it built before: the same
    fields and hash), and a view without the SPM otherwise."""
    from dataclasses import replace
    for arch in ("emaxv", "emaxvr"):
        keys = structure_keys(arch, 60, 5)
        if arch == "emaxvr":
            keys += tuple(k[:3] + (0.0,) + k[4:] for k in keys[:5])  # arrays without an SPM
        hws, mhws = em._arrays(arch, keys)
        for key, hw, mhw in zip(keys, hws, mhws):
            want = replace(em._hw(arch, key), spm_bytes=0)
            assert mhw == want and hash(mhw) == hash(want) and mhw.spm_bytes == 0
            assert (mhw is hw) == (hw.spm_bytes == 0)
        assert any(mhw is hw for hw, mhw in zip(hws, mhws))


def test_slot_columns_converted_and_taken_once_per_object_equal_the_matrices():
    """_assemble_columns converts each slot column object once (slots share columns) and _SlotMoves.take gathers
    each once: on an EMAXVR batch's builder calls (several slots sharing int columns) the table, its kept plans'
    entry tables and read order equal _assemble_matrices' bit for bit, and shared columns stay shared."""
    from tests.test_emax_traffic import _same_tables

    calls = []
    real = traffic._assemble

    def spy(*args):
        calls.append(args)
        return real(*args)

    rows = get_model("emaxvr").params.random_rows(12, np.random.default_rng(4))
    em.workload_plans.cache_clear()
    with mock.patch.object(traffic, "_assemble", spy):
        get_model("emaxvr").evaluate_points("vgg16", rows)
    em.workload_plans.cache_clear()
    shared = 0
    for args in calls:
        slots = args[5]
        ids = [id(s.par) for s in slots if isinstance(s.par, np.ndarray)]
        shared += len(ids) - len(set(ids))
        got = traffic._assemble_columns(*args)
        _same_tables(got, traffic._assemble_matrices(*args))
        (moves, _), = got.moves
        if isinstance(moves, traffic._SlotMoves):
            pars = [p for p, s in zip(moves.par, slots) if isinstance(s.par, np.ndarray)]
            assert len({id(p) for p in pars}) == len(set(ids))  # converted once per column object
    assert shared


def test_concat_taken_table_by_table_equals_concatenated_then_taken():
    """traffic.Concat.take (each table's plans taken, then the results concatenated, when the plans come table by
    table; else concatenated first) equals concat(tables).take(rows): every plan column, label, source row and entry
    table, for a conv and an FC builder's tables of a random batch, rows in any order (table by table or not, one
    table only, none)."""
    from tests.test_emax_traffic import _same_tables

    tables = _builder_tables()
    both, whole = traffic.Concat(tables), traffic.concat(tables)
    n, n0 = len(both), len(tables[0])
    assert n == len(whole)
    rng = np.random.default_rng(12)
    cases = [np.zeros(0, np.int64), np.arange(n0), np.arange(n0, n), np.arange(n)[::-1].copy()]
    for size in (1, 5, 40, n // 2):
        rows = rng.choice(n, size, replace=False)
        cases += [rows, np.sort(rows)]  # (sorted: table by table, as the final plans come, the FC layers last)
    for rows in cases:
        _same_tables(both.take(rows), whole.take(rows))
    for k in ("bands", "macs", "dram_exact"):
        assert np.array_equal(both.column(k), whole.plan[k], equal_nan=True)


_TABLES: list = []


def _builder_tables() -> list:
    """An EMAXVR batch's first conv-and-pooling table and first FC table (captured once)."""
    if not _TABLES:
        got = {}

        def spy(name, real):
            def f(*args):
                out = real(*args)
                got.setdefault(name, out)
                return out
            return f

        em.workload_plans.cache_clear()
        with mock.patch.object(em, "emaxvr_plans", spy("conv", traffic.emaxvr_plans)), \
                mock.patch.object(em, "fc_plans", spy("fc", traffic.fc_plans)):
            get_model("emaxvr").evaluate_points("vgg16", get_model("emaxvr").params.random_rows(
                6, np.random.default_rng(8)))
        em.workload_plans.cache_clear()
        _TABLES.extend([got["conv"], got["fc"]])
    return _TABLES


def test_random_points_alone_equal_the_batch_keys_in_the_same_order():
    """testing.assert_alone_equals_batch on random points of both EMAX models: a layer without a plan and a layer
    with one list their metric keys in one order (_all_metric_names'), so a point's keys do not depend on the
    batch it is in (before, the first combination of a chunk set a layer's order: random samples failed)."""
    from archmodels import testing

    for arch, wl in (("emaxv", "vgg16"), ("emaxvr", "alexnet")):
        m = get_model(arch)
        testing.assert_alone_equals_batch(m, wl, m.params.random_rows(24, np.random.default_rng(1)))

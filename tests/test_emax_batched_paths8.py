"""EMAX batched paths, eighth round (issue 15): the mapper's reason texts of a chunk's rejected requests
(``mapper.ConvTable.rejections``) built per reason column with the numbers gathered at once and each distinct text
once (``mapper._why_texts``, ``mapper._WHY_TEXTS``); the tile search's other tiles cached without their LMM needs,
computed after over every tile (``mapper._more_tiles``, ``mapper._tile_needs``); chunks of structural combinations
sized per architecture (``model.CHUNK_OF``). Each fast path is compared with the general one bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodels import get_model
from archmodels.emax import mapper
from archmodels.emax import model as em
from archmodels.emax.mapper import Hw, Indexed

from .test_emax_batched_paths5 import _dump, _rows
from .test_emax_batched_paths7 import SHAPES


def _requests(arch: str, seed: int) -> tuple:
    """Random requests of a chunk (>= TABLE_NUMPY_FROM: the numpy mapper), many of them without a mapping: small
    arrays, tiny LMMs, pattern and loop-order knobs, tile searches; as lists and by position."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(mapper.TABLE_NUMPY_FROM, 120))
    arrays = [Hw(arch, int(rng.integers(4, int(rng.choice([16, 64, 129])))), int(rng.choice([2, 4, 8, 16])),
                 int(round(float(np.exp(rng.uniform(np.log(16), np.log(2**18)))))), 0, int(rng.choice([2, 4])),
                 int(rng.choice([0, 0, int(rng.integers(1, 600))])), int(rng.choice([0, 1, 2])))
              for _ in range(int(rng.integers(1, 8)))]
    s_at, h_at = rng.integers(0, len(SHAPES), n), rng.integers(0, len(arrays), n)
    if arch == "emaxv":
        pats, ords = ["auto"] * n, ["auto"] * n
    else:
        pats = [str(rng.choice(["auto", "auto", "A", "B", "pairs"])) for _ in range(n)]
        pats = [p if not (SHAPES[a].op == "max" and p == "pairs") else "auto" for p, a in zip(pats, s_at.tolist())]
        ords = [str(rng.choice(["auto", "OW,OC,OH", "OW,OH,OC"])) for _ in range(n)]
    return n, arrays, s_at, h_at, pats, ords


def _table_and_asks(arch: str, seed: int, indexed: bool) -> tuple:
    """(the numpy mapper's table of :func:`_requests`, the scalar mapper's rejected list per request, a random
    subset of the requests in random order with repeats)."""
    n, arrays, s_at, h_at, pats, ords = _requests(arch, seed)
    shapes, hws = [SHAPES[a] for a in s_at], [arrays[b] for b in h_at]
    sh, hw = (Indexed(SHAPES, s_at), Indexed(arrays, h_at)) if indexed else (shapes, hws)
    tab = mapper.conv_table(arch, sh, hw, np.array(pats, dtype=object), np.array(ords, dtype=object))
    want = [mapper._candidate_rows(*a)[2] for a in zip(shapes, hws, pats, ords)]
    rng = np.random.default_rng(seed + 1)
    js = rng.permutation(n)[: int(rng.integers(0, n + 1))]
    return tab, want, np.concatenate([js, js[: len(js) // 3]])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]), indexed=st.booleans(),
       memo=st.sampled_from(["empty", "warm", "full"]))
def test_rejections_per_column_equal_the_scalar_mapper(seed, arch, indexed, memo):
    """ConvTable.rejections of the numpy mapper (texts per reason column, each distinct text built once and kept in
    _WHY_TEXTS) gives every request what the scalar mapper gives it (conv_candidates' own rejected list): whether a
    mapping fits and every reason text, in order and of the same type; any subset of requests in any order,
    repeats included; the texts' memo empty, warm (a second ask), or over its bound (emptied)."""
    tab, want, js = _table_and_asks(arch, seed, indexed)
    if memo == "empty":
        mapper._WHY_TEXTS.clear()
    elif memo == "full":
        mapper._WHY_TEXTS.update({("x", i): "x" for i in range(mapper.WHY_TEXTS_MAX + 1)})
    for _ in range(2 if memo == "warm" else 1):
        got = tab.rejections(js)
        assert len(got) == len(js)
        for j, (fits, why) in zip(js.tolist(), got):
            assert (fits, why) == want[j], j
            assert type(fits) is bool and all(type(t) is str for t in why)
    assert len(mapper._WHY_TEXTS) <= mapper.WHY_TEXTS_MAX + 64 * 16


def test_rejections_of_no_request_and_every_reason_kind():
    """No request: no answer; a chunk whose requests get every kind of reason (the pairs rule, a pattern's rows, a
    structure, an LMM fit) gives the scalar mapper's texts."""
    tab = mapper.conv_table("emaxvr", [SHAPES[0]] * 40, [Hw("emaxvr", 64, 4, 2048, 0, 4)] * 40,
                            np.array(["auto"] * 40, dtype=object), np.array(["auto"] * 40, dtype=object))
    assert tab.rejections(np.zeros(0, np.int64)) == []
    kinds = set()
    for seed in range(12):
        n, arrays, s_at, h_at, pats, ords = _requests("emaxvr", seed)
        shapes, hws = [SHAPES[a] for a in s_at], [arrays[b] for b in h_at]
        tab = mapper.conv_table("emaxvr", shapes, hws, np.array(pats, dtype=object), np.array(ords, dtype=object))
        got = tab.rejections(np.arange(n))
        for j, a in enumerate(zip(shapes, hws, pats, ords)):
            assert got[j] == mapper._candidate_rows(*a)[2]
            for t in got[j][1]:
                kinds.add("pairs" if t == mapper.PAIRS_WHY else "lmm" if " B" in t else
                          "rows" if "rows" in t.split(":")[-1] and "[" not in t.split(":")[0] else "structure")
    assert kinds == {"pairs", "lmm", "rows", "structure"}


MAC_SHAPES = [s for s in SHAPES if s.op == "mac"]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(0, 30))
def test_tile_needs_equal_lmm_need_row_by_row(data, n):
    """_tile_needs (a chunk's other tiles' LMM needs as int64 arrays) equals _lmm_need's largest need of each row as a
    Python int: patterns A, B and pairs, both input-mode kinds (resident or not), any segment width, channels per
    start and per iteration, 2- or 4-byte data, MAC layers of several CNNs."""
    shapes = [data.draw(st.sampled_from(MAC_SHAPES)) for _ in range(n)]
    pats = [data.draw(st.sampled_from(["A", "B", "pairs"])) for _ in range(n)]
    modes = [data.draw(st.sampled_from(["rows", "resident", "swap"])) for _ in range(n)]
    e = [data.draw(st.sampled_from([2, 4])) for _ in range(n)]
    w = [data.draw(st.integers(1, max(1, sh.ow))) for sh in shapes]
    ocp = [1 if p == "A" else data.draw(st.integers(1, 8)) for p in pats]
    t = [data.draw(st.integers(1, 4096)) for _ in range(n)]
    hws = [Hw("emaxvr", 64, 4, 2048, 0, x) for x in e]
    q = mapper._Req(shapes, hws)
    got = mapper._tile_needs(np.array([p == "A" for p in pats], dtype=bool),
                             np.array([m == "resident" for m in modes], dtype=bool), q,
                             np.array(w, dtype=np.int64).reshape(n), np.array(t, dtype=np.int64).reshape(n),
                             np.array(ocp, dtype=np.int64).reshape(n))
    want = [mapper._lmm_need(p, ("OW", "OC", "OH"), m, sh, x, a, b, c)[0]
            for p, m, sh, x, a, b, c in zip(pats, modes, shapes, e, w, t, ocp)]
    assert got.dtype == np.int64 and got.tolist() == want


def test_more_tiles_are_the_tiles_after_the_first():
    """_more_tiles (cached by pattern, without the input mode and the fit's need) lists _tiles' other tiles with their
    segment counts, as tuples (read only, not tracked by the garbage collector once collected)."""
    sh = next(s for s in MAC_SHAPES if s.oc >= 64 and s.ow >= 28)
    sizes = []
    for ts in (1, 2):
        for p, ocp, pxp in (("A", 1, 1), ("B", 4, 1), ("pairs", 2, 2)):
            got = mapper._more_tiles(p, sh, "emaxvr", 2, ts, 1, sh.ow, sh.oc, ocp, pxp, None)
            hw = Hw("emaxvr", 0, 0, 0, 0, 2, 0, ts)
            tiles = mapper._tiles(p, sh, hw, 1, sh.ow, sh.oc, ocp, pxp, None)
            assert type(got) is tuple and got == tuple((1 if w == sh.ow else -(-sh.ow // w), w, t) for w, t in tiles[1:])
            sizes.append(len(got))
    assert max(sizes) > 0


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), arch=st.sampled_from(["emaxv", "emaxvr"]),
       wl=st.sampled_from(["vgg16", "alexnet", "lenet"]), per_chunk=st.integers(1, 7))
def test_a_batch_in_small_chunks_equals_it_in_one(seed, arch, wl, per_chunk):
    """A batch planned in chunks of a few structural combinations gives every point the contract dictionary it gets
    planned in one chunk (the chunk size is a memory / speed trade only: CHUNK, CHUNK_OF), layers without a plan,
    fused pools and every criterion included."""
    m = get_model(arch)
    rows = _rows(arch, 24, seed)
    n_layers = len(m.evaluate_points(wl, rows[:1]).layers)
    out = []
    with pytest.MonkeyPatch.context() as mp:
        for size in (10**6, per_chunk * n_layers):
            mp.setattr(em, "CHUNK_OF", {arch: size})
            em._workload_plans.cache_clear()
            b = m.evaluate_points(wl, rows)
            out.append([_dump(b.point(i)) for i in range(b.n)])
    assert out[0] == out[1]


def test_texts_keep_the_plan_and_label_columns_without_the_data_movement(monkeypatch):
    """The lazy texts of a batch's layers keep each chunk's plan and label columns (the same arrays the choice read)
    but not its data movement (no transfer blocks, no cached sub-tables): what they read (explain._READS) is there,
    and the texts equal those of each point alone (tests/test_emax_batched_paths5 compares them)."""
    from archmodels.emax import explain

    seen = []
    real = explain.LazyTextColumns.put

    def put(self, which, col_of, at, tab, rows, flat=None):
        seen.append(tab)
        return real(self, which, col_of, at, tab, rows, flat)

    monkeypatch.setattr(explain.LazyTextColumns, "put", put)
    em._workload_plans.cache_clear()
    b = get_model("emaxvr").evaluate_points("vgg16", _rows("emaxvr", 20, 4))
    assert seen and all(t.moves == () and "_parts" not in t.__dict__ for t in seen)
    for fn, (nums, labs) in explain._READS.items():
        assert all(k in seen[0].plan for k in nums) and all(k in seen[0].label for k in labs), fn
    for lb in b.layers:  # every text of every point built from the kept columns
        for k in ("schedule", "loop_nest", "tiles", "placement", "runner_up"):
            got = [lb.labels[k][i] for i in np.flatnonzero(lb.feasible).tolist()]  # (none where infeasible)
            assert all(isinstance(t, str) and t for t in got), (lb.name, k)


@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 512), cols=st.sampled_from([2, 4, 8, 16]), lmm=st.integers(0, 2**20), spm=st.integers(0, 2**26),
       e=st.sampled_from([2, 4]), cap=st.integers(0, 4096), ts=st.integers(0, 2), arch=st.sampled_from(["emaxv", "emaxvr"]))
def test_new_hw_is_the_dataclass(rows, cols, lmm, spm, e, cap, ts, arch):
    """new_hw (fields written into the instance's dict) gives the Hw the dataclass builds: equal, the same hash, the
    same fields in the same order, immutable."""
    a, b = mapper.new_hw(arch, rows, cols, lmm, spm, e, cap, ts), Hw(arch, rows, cols, lmm, spm, e, cap, ts)
    assert a == b and hash(a) == hash(b) and list(a.__dict__.items()) == list(b.__dict__.items())
    with pytest.raises(Exception):
        a.rows = 1

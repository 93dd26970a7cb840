"""IMAX batched paths of issue 15's fourteenth round: each equals the code it replaced (kept below verbatim, but for
names and docstrings, as the oracle), bit for bit and dtype for dtype."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodels import get_model
from archmodels.imax import costs as C
from archmodels.imax import model as IM
from archmodels.imax import plans as P
from archmodels.imax import schedule as S
from workloads import load_workload

M = get_model("imax")


def _same(a, b) -> None:
    """Equal arrays (NaN where NaN), the same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


# ---------------------------------------------------------------- the former code (oracles)


def _columns_former(feats: dict[str, np.ndarray], idx: np.ndarray, names: tuple[str, ...],
             block: np.ndarray | None = None) -> dict[str, np.ndarray]:
    if block is None:
        return {k: feats[k][idx] for k in names}
    return dict(zip(S.FEATURES, np.take(block, idx, axis=1)))


def _groups_by_kind_former(live: np.ndarray, sparse: np.ndarray, n_of: np.ndarray) -> list[tuple[np.ndarray, bool, int]]:
    if not len(live):
        return []
    sp, n = sparse[live], np.asarray(n_of, dtype=np.int64)[live] if np.ndim(n_of) else np.full(len(live), n_of)
    lo, hi = int(n.min()), int(n.max())
    if lo < 0:  # (B columns are positive; any other value by the tuples)
        pairs = sorted(set(zip(sp.tolist(), n.tolist())))
        return [(live[(sp == s) & (n == v)], s, v) for s, v in pairs]
    code = sp * np.int64(hi + 1) + n
    first, inv = _unique_index_inverse_former(code)  # the distinct codes in increasing order, each index's
    return [(live[inv == j], c > hi, c - (hi + 1) if c > hi else c) for j, c in enumerate(code[first].tolist())]


def _mapping_numbers_former(mapping: np.ndarray, units: np.ndarray, cols: np.ndarray,
                     mapping_codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if mapping_codes is not None and len(units):
        codes = np.asarray(mapping_codes, dtype=np.int64)
        u_lo, u_hi, c_lo, c_hi = int(units.min()), int(units.max()), int(cols.min()), int(cols.max())
        if min(u_lo, c_lo, int(codes.min())) >= 0 and int(codes.max()) < len(C.MAPPINGS):
            # > the largest, powers of two, at least the declared space's (one table for every batch of it)
            u_top, c_top = max(S._UNITS_TOP, 1 << u_hi.bit_length()), max(S._COLS_TOP, 1 << c_hi.bit_length())
            if len(C.MAPPINGS) * u_top * c_top <= C.MAPPING_TABLE_MAX:
                H, urb, simd = C.mapping_table(u_top, c_top)
                at = (codes * u_top + units) * c_top + cols
                return H[at], urb[at], simd[at]
    return S._mapping_numbers_by_mask(mapping, units, cols, mapping_codes)


def _fastest_former(feats: dict[str, np.ndarray], first: np.ndarray, count: np.ndarray, nchip: np.ndarray,
             clock_hz: np.ndarray, bw: np.ndarray, block: np.ndarray | None = None,
             max_pairs: int = 1 << 20, states: dict[str, np.ndarray] | None = None) -> np.ndarray:
    out = np.empty(len(first), dtype=np.int64)
    ends = np.cumsum(count)
    lo = 0
    while lo < len(first):
        hi = max(lo + 1, int(np.searchsorted(ends, ends[lo] - count[lo] + max_pairs, side="right")))
        c = count[lo:hi]
        start = np.cumsum(c) - c
        local = np.arange(c.sum()) - np.repeat(start, c)
        pair = np.repeat(np.arange(hi - lo), c)
        idx = np.repeat(first[lo:hi], c) + local
        st = S.timing(_columns_former(feats, idx, S.TIMING_FEATURES, block), nchip[lo:hi][pair], clock_hz[lo:hi][pair],
                      bw[lo:hi][pair])
        t = st["time"]
        best = np.repeat(np.minimum.reduceat(t, start), c)
        hit = (t == best) | (np.isnan(t) & np.isnan(best))
        at = np.minimum.reduceat(np.where(hit, local, c.max()), start)
        out[lo:hi] = first[lo:hi] + at
        if states is not None:
            if lo == 0 and hi == len(first):  # one chunk (always, short of a million pairs): the gathers themselves
                states.update((k, v[start + at]) for k, v in st.items())
            else:
                for k, v in st.items():
                    states.setdefault(k, np.empty(len(first)))[lo:hi] = v[start + at]
        lo = hi
    return out


def _pack_pairs_former(margins: np.ndarray, blocks: np.ndarray, budget: np.ndarray,
               agrp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.argsort(-blocks, kind="stable")
    nb, bud, ag = blocks[order], budget[order], agrp[order]
    m = np.take(margins, order, axis=1)
    P = len(nb)
    n, big, most, start, used = np.zeros((5, P), np.int64)
    ks = np.searchsorted(-nb, -np.arange(len(m)), side="left").tolist()  # pairs with more than b blocks
    for b, k in enumerate(ks):
        if not k:
            break
        if k <= S._PACK_TAIL:  # the few pairs with the most blocks: the rest of their walk in Python integers
            S._pack_tail(m, nb, bud, ag, b, k, (n, big, most, start, used))
            break
        mb, u = m[b, :k], used[:k]
        if b:
            s = start[:k]
            d = b - s
            close = d >= ag[:k]
            close |= u + mb > bud[:k]
            n[:k] += close
            np.maximum(big[:k], u, out=big[:k], where=close)
            np.maximum(most[:k], d, out=most[:k], where=close)
            s[close] = b
            u[close] = 0
        u += mb
    some = nb > 0
    out = np.empty((3, P), np.int64)
    out[:, order] = (n + some, np.where(some, np.maximum(big, used), big),
                     np.where(some, np.maximum(most, nb - start), most))
    return out[0], out[1], out[2]


def _candidates_former(n: int, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray | bool, a_max: np.ndarray):
    N = cfg["N"]
    if len(N) and int(N.min()) >= 1 and (top := int(N.max())) < P._DIV_TABLE_MAX:  # rows of the table, by N
        quot, whole = P._divisor_table(n, max(64, 1 << top.bit_length()))
        b = quot[N]
        ok = whole[N] & (b <= cfg["b_hi"][:, None])
    else:
        divs = P._divisors(n)[::-1]
        b, rem = np.divmod(divs[None, :], N[:, None])  # a divisor d of n that N >= 1 divides: b = d / N >= 1
        ok = (rem == 0) & (b <= cfg["b_hi"][:, None])
    if lmm_opt is False:
        ok &= np.cumsum(ok, axis=1) == 1
    elif lmm_opt is not True:
        ok &= lmm_opt[:, None] | (np.cumsum(ok, axis=1) == 1)
    count = ok.sum(axis=1)
    g = np.repeat(np.arange(len(N)), count)
    if lmm_opt is True or lmm_opt is False:
        return count, g, a_max[g] if lmm_opt else np.ones(len(g), np.int64), b[ok]
    return count, g, np.where(lmm_opt[g], a_max[g], 1), b[ok]


def _margins_former(self, gid: np.ndarray, H: np.ndarray, nb: np.ndarray) -> np.ndarray:
    if np.ndim(gid) != 1 or not len(gid):
        return self.margins_grid(gid, H, nb)
    pair = np.repeat(np.arange(len(gid)), nb)
    b = np.arange(len(pair)) - np.repeat(np.cumsum(nb) - nb, nb)  # the block of each entry
    g = gid[pair]
    q = np.minimum(b * H[pair], self.shift - 1) + g * self.shift
    out = np.zeros((int(nb.max()), len(gid)), np.int64)
    out[b, pair] = self.rows[g] - (np.searchsorted(self.shifted, q, side="right") - self.start[g])
    return out


def _sparse_pairs_former(layer, fmt, mapping, cfg: dict[str, np.ndarray], lmm_opt: np.ndarray) -> tuple:
    G = len(cfg["H"])
    jds, ivs = np.asarray(fmt) == "jds", np.asarray(mapping) == "ivs"
    if jds.shape != (G,) or ivs.shape != (G,):  # (names for every configuration: the model's arrays of names)
        jds, ivs = np.broadcast_to(jds, (G,)), np.broadcast_to(ivs, (G,))
    rt, ct, H = cfg["rt"], cfg["ct"], cfg["H"]
    tiles, codes, (R, K), pos = P._tilings_of(layer, set(zip(jds.tolist(), rt.tolist(), ct.tolist())))
    which = pos[np.searchsorted(codes, (jds * R + rt) * K + ct)]  # each configuration's tiling
    cnt = tiles.count[which]  # tiles of each configuration (at least one)
    first = np.cumsum(cnt) - cnt  # first pair of each configuration: pairs configuration after configuration
    cp = np.repeat(np.arange(G), cnt)
    tp = np.arange(int(cnt.sum())) - np.repeat(first - tiles.first[which], cnt)  # the tile of each pair
    nbp = -(-tiles.top[tp] // H[cp])  # blocks of each pair
    fallback = np.logical_or.reduceat(nbp == 0, first) | tiles.narrow[which] if G else np.zeros(0, bool)
    if fallback.any():  # the pairs of the other configurations
        keep = ~fallback[cp]
        idx = S.nonzero_at(~fallback)
        cp, tp, nbp = (np.cumsum(~fallback) - 1)[cp[keep]], tp[keep], nbp[keep]
        cnt = cnt[idx]
        first = np.cumsum(cnt) - cnt
    else:
        idx = np.arange(G)
    if not len(idx):
        return fallback, idx, None
    if len(idx) == G:  # every configuration (the common case): its numbers as they are, not gathered by idx
        sub, jd, iv, opt = dict(cfg), jds, ivs, lmm_opt
    else:
        sub = {key: v[idx] if np.ndim(v) else v for key, v in cfg.items()}
        jd, iv, opt = jds[idx], ivs[idx], lmm_opt[idx]
    # the pipeline fill of each configuration's block pass (per mapping, for the configurations on it)
    sub["fill"] = np.where(iv, C.fill_cycles(sub["units"], sub["W"], "ivs") if iv.any() else 0,
                           C.fill_cycles(sub["units"], sub["W"], "ivj") if not iv.all() else 0)
    return fallback, idx, (tiles, cp, tp, nbp, first, jd, iv, sub, opt)


def _int_texts_former(values: np.ndarray, suffix: str, least: int = 0) -> np.ndarray:
    if len(values) and 0 <= int(values.min()) and (top := int(values.max())) < S._INT_TEXTS_MAX:
        return S._int_text_table_of(top, suffix, least)[values]
    return np.array([f"{v}{suffix}" for v in values.tolist()], dtype=object)


def _unique_index_inverse_former(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(code)
    order = _stable_argsort_former(code)
    if n == 0:
        return order, np.empty(0, np.intp)
    ordered = code[order]
    new = np.empty(n, bool)  # True where a run of equal values starts
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inv = np.empty(n, np.intp)
    inv[order] = np.cumsum(new) - 1
    return order[new], inv


def _stable_argsort_former(code: np.ndarray) -> np.ndarray:
    if len(code) < S._RADIX_MIN or code.dtype.kind not in "iu" or int(code.min()) < 0:
        return np.argsort(code, kind="stable")
    bits = int(code.max()).bit_length()
    order = np.argsort((code & 0xFFFF).astype(np.uint16), kind="stable")
    for shift in range(16, bits, 16):
        order = order[np.argsort(((code[order] >> shift) & 0xFFFF).astype(np.uint16), kind="stable")]
    return order


def _codes_of_names_former(ptr: np.ndarray, names: tuple[str, ...]) -> np.ndarray | None:
    if len(set(map(id, names))) != len(names):
        return None
    codes, found = None, 0
    for i, name in enumerate(names):
        same = ptr == id(name)
        k = int(np.count_nonzero(same))
        if not k:
            continue
        found += k
        if i:
            codes = same * np.int64(i) if codes is None else np.add(codes, same * np.int64(i), out=codes)
        if found == len(ptr):
            return codes if codes is not None else np.zeros(len(ptr), np.int64)
    return None


# ---------------------------------------------------------------- the tests


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 40), st.sampled_from(["one", "array-one", "several", "negative"]))
def test_groups_by_kind_equals_the_sort(seed, G, how):
    """One n (an SpMM batch: dense indices, then sparse ones, without a sort) and the other cases as before."""
    rng = np.random.default_rng(seed)
    live = np.sort(rng.choice(max(G, 1) * 2, size=G, replace=False)).astype(np.intp)
    sparse = rng.random(max(G, 1) * 2) < rng.random()
    n_of = {"one": 512, "array-one": np.full(max(G, 1) * 2, 64, np.int64),
            "several": rng.choice([16, 512, 1024], max(G, 1) * 2),
            "negative": rng.choice([-3, 5], max(G, 1) * 2)}[how]
    new, old = IM._groups_by_kind(live, sparse, n_of), _groups_by_kind_former(live, sparse, n_of)
    assert len(new) == len(old)
    for (a, s, n), (a0, s0, n0) in zip(new, old):
        _same(a, a0)
        assert bool(s) == bool(s0) and n == n0 and type(n) is type(n0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 300), st.sampled_from([(0, 1024, 0, 8), (1, 3000, 1, 20), (0, 9, 0, 64)]))
def test_mapping_numbers_small_tables_equal_the_grid(seed, G, bounds):
    """H from the table, the unit-row bytes from its units-0 plane, the flag per mapping: the grid's gathers."""
    rng = np.random.default_rng(seed)
    u_lo, u_hi, c_lo, c_hi = bounds
    units, cols = rng.integers(u_lo, u_hi + 1, G), rng.integers(c_lo, c_hi + 1, G)
    codes = rng.integers(0, len(C.MAPPINGS), G)
    names = np.array(C.MAPPINGS, dtype=object)[codes]
    for got, want in zip(S._mapping_numbers(names, units, cols, codes), _mapping_numbers_former(names, units, cols, codes)):
        _same(got, want)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 50), st.integers(0, 80))
def test_rows_at_equals_the_transposed_copy(seed, n, k):
    rng = np.random.default_rng(seed)
    columns = rng.integers(0, 1000, (7, n))
    idx = rng.integers(0, n, k) if n else np.zeros(0, np.intp)
    got, want = IM._rows_at(columns, idx), np.ascontiguousarray(columns[:, idx].T)
    _same(got, want)
    for j in range(7):  # (the column reads of the runs)
        _same(got[:, j], want[:, j])


def _random_feats(rng, n_cand: int, nan: bool) -> tuple[dict, np.ndarray]:
    block = rng.integers(0, 1000, (len(S.FEATURES), n_cand)).astype(np.float64)
    if nan and n_cand:
        block[:, rng.random(n_cand) < 0.2] = np.nan
    return dict(zip(S.FEATURES, block)), block


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 30), st.booleans(), st.booleans(), st.sampled_from([1 << 20, 7, 1]))
def test_fastest_equals_the_former(seed, points, nan, with_block, max_pairs):
    """Ties (equal counts), NaN times, chunks of a few pairs, the states."""
    rng = np.random.default_rng(seed)
    count = rng.integers(1, 6, points)
    first = np.cumsum(count) - count
    feats, block = _random_feats(rng, int(count.sum()), nan)
    feats["exec_cycles"][::3] = feats["exec_cycles"][0]  # (some equal times)
    nchip = rng.integers(1, 9, points).astype(float)
    clock, bw = rng.uniform(1e8, 1e9, points), rng.uniform(1e8, 1e10, points)
    b = block if with_block else None
    s1, s0 = {}, {}
    _same(IM._fastest(feats, first, count, nchip, clock, bw, b, max_pairs, s1),
          _fastest_former(feats, first, count, nchip, clock, bw, b, max_pairs, s0))
    assert s1.keys() == s0.keys()
    for k in s0:
        _same(s1[k], s0[k])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 60), st.integers(1, 40))
def test_pack_pairs_equals_the_former(seed, pairs, most):
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, most + 1, pairs)
    margins = rng.integers(0, 50, (max(most, 1), pairs))
    margins[np.arange(max(most, 1))[:, None] >= blocks[None, :]] = 0
    budget, agrp = rng.integers(1, 200, pairs), rng.integers(1, 12, pairs)
    for got, want in zip(S.pack_pairs(margins, blocks, budget, agrp), _pack_pairs_former(margins, blocks, budget, agrp)):
        _same(got, want)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 40), st.sampled_from([512, 1024, 96, 7]),
       st.sampled_from(["all", "none", "mixed"]), st.booleans())
def test_candidates_equal_the_former(seed, G, n, opt, big_nchip):
    """The divisor table's path and the divmod path (an nchip past the table), lmm_opt one bool or per configuration."""
    rng = np.random.default_rng(seed)
    N = rng.integers(1, 70, G) if not big_nchip else rng.integers(1, P._DIV_TABLE_MAX + 5, G)
    cfg = {"N": N, "b_hi": rng.integers(0, 40, G)}
    a_max = rng.integers(1, 9, G)
    lmm = {"all": True, "none": False, "mixed": rng.random(G) < 0.5}[opt]
    for got, want in zip(P._candidates(n, cfg, lmm, a_max), _candidates_former(n, cfg, lmm, a_max)):
        _same(got, want)


def _captured(workloads: tuple[str, ...], points: int = 400) -> list[tuple]:
    """The arguments of every ``_sparse_pairs`` call of batches of random points on sparse workloads."""
    seen = []
    real = P._sparse_pairs

    def spy(*args):
        seen.append(args)
        return real(*args)

    P._sparse_pairs = spy
    try:
        for i, w in enumerate(workloads):
            rows = M.params.random_rows(points, np.random.default_rng(100 + i))
            M.evaluate_batch(load_workload(w), M.params.points(rows))
    finally:
        P._sparse_pairs = real
    assert seen
    return seen


_SPARSE = ("spmm:n=512,sparsity=0.9", "spmm:n=256,sparsity=0.999", "spmm:m=300,k=200,n=16,sparsity=0.97")


def test_sparse_pairs_and_margins_equal_the_former():
    """Real batches' sparse configurations (fallbacks included): every output of ``_sparse_pairs`` and the JDS
    Margins of its pairs, against the former code on the same inputs."""
    for args in _captured(_SPARSE):
        new, old = P._sparse_pairs(*args), _sparse_pairs_former(*args)
        _same(new[0], old[0])
        _same(new[1], old[1])
        assert (new[2] is None) == (old[2] is None)
        if new[2] is None:
            continue
        tiles, cp, tp, nbp, first, jd, iv, sub, opt = new[2]
        for a, b in zip(new[2][1:7], old[2][1:7]):
            _same(a, b)
        assert sub.keys() == old[2][7].keys()
        for k in sub:
            _same(sub[k], old[2][7][k])
        _same(opt, old[2][8])
        jx = S.nonzero_at(jd[cp])
        if len(jx):
            H = sub["H"][cp[jx]]
            _same(tiles.margins(tp[jx], H, nbp[jx]), _margins_former(tiles, tp[jx], H, nbp[jx]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 200), st.sampled_from([70, 5000, 1 << 17]), st.booleans())
def test_int_texts_equal_the_former(seed, n, top, negative):
    rng = np.random.default_rng(seed)
    values = rng.integers(-3 if negative else 0, top, n)
    _same(S._int_texts(values, ", lmm_kb=", 65), _int_texts_former(values, ", lmm_kb=", 65))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0, 1, 50, 3000, S._RADIX_MIN + 7]), st.sampled_from([3, 1 << 20, 1 << 40]),
       st.booleans())
def test_unique_index_inverse_equals_the_former(seed, n, top, negative):
    """Short codes (numpy's sort) and long ones (16-bit digits), negative codes (numpy's sort again)."""
    rng = np.random.default_rng(seed)
    code = rng.integers(-top if negative else 0, top, n)
    for got, want in zip(S.unique_index_inverse(code), _unique_index_inverse_former(code)):
        _same(got, want)
    _same(S._stable_argsort(code), _stable_argsort_former(code))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 300), st.sampled_from([2, 3, 4, 300]), st.booleans())
def test_codes_of_names_equal_the_former(seed, n, k, stranger):
    """The choice codes from the elements' pointers (one byte an element, widened at the end; more than 256 names
    in int64): the former int64 sums, and None when an element is another object."""
    import ctypes

    rng = np.random.default_rng(seed)
    names = tuple(f"name{i}" for i in range(k))
    values = np.array([names[i] for i in rng.integers(0, k, n)], dtype=object)
    if stranger and n:
        values[rng.integers(0, n)] = "".join(["name", "x"])  # (a string object outside the names)
    ptr = np.ctypeslib.as_array((ctypes.c_ssize_t * max(n, 1)).from_address(values.ctypes.data))[:n]
    got, want = IM._codes_of_names(ptr, names), _codes_of_names_former(ptr, names)
    assert (got is None) == (want is None)
    if want is not None:
        _same(got, want)

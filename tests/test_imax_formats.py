"""IMAX sparse layouts (workloads/formats.py) against scipy and numpy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from workloads import formats, sparse
from workloads.parametric import matrix_of, parse


@pytest.mark.parametrize("fmt", formats.FORMATS)
@pytest.mark.parametrize("shape,sparsity,bias,H", [
    ((40, 40, 6), 0.8, 0.0, 7),   # square, uniform rows
    ((37, 53, 5), 0.6, 2.0, 5),   # rectangular, biased rows
    ((60, 25, 1), 0.9, 1.0, 4),   # SpMV-like: B is a vector column
])
def test_layout_product_equals_numpy(fmt, shape, sparsity, bias, H):
    m, k, n = shape
    A = sparse.generate(m, k, sparsity, bias, 11)
    B = np.random.default_rng(1).normal(size=(k, n))
    L = formats.layout(A, H, fmt)
    np.testing.assert_allclose(L.matmul(B), A.toarray() @ B, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(L.matmul(B[:, 0]), A.toarray() @ B[:, 0], rtol=1e-5, atol=1e-5)


def test_layouts_agree_with_scipy_on_a_matrix_market_round_trip(tmp_path):
    A = sparse.generate(30, 45, 0.7, 1.5, 4)
    path = tmp_path / "a.mtx"
    sparse.write_mtx(path, A, "fixture")
    back = sparse.read_mtx(str(path))
    assert (back != A).nnz == 0
    B = np.random.default_rng(2).normal(size=(45, 3))
    ref = (back @ B)  # scipy's own product
    for fmt in formats.FORMATS:
        np.testing.assert_allclose(formats.layout(back, 6, fmt).matmul(B), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fmt", formats.FORMATS)
def test_margins_from_counts_match_the_built_layout(fmt):
    A = sparse.generate(80, 90, 0.7, 2.5, 3)
    L = formats.layout(A, 9, fmt)
    counts = np.diff(A.indptr)
    np.testing.assert_array_equal(L.margins, formats.block_margins(counts, 9, fmt))
    assert L.slots == int((formats.block_margins(counts, 9, fmt) * 9).sum())


def test_jds_keeps_padding_out_and_csr_pads_to_the_longest_row():
    A = sparse.generate(100, 100, 0.5, 3.0, 0)  # very uneven rows
    counts = np.diff(A.indptr)
    csr, jds = formats.layout(A, 8, "csr"), formats.layout(A, 8, "jds")
    assert csr.slots == 100 * (-(-counts.max() // 8)) * 8
    assert A.nnz <= jds.slots < csr.slots
    # JDS: rows sorted by count, margins non-increasing, first block holds every non-empty row
    assert list(counts[jds.perm]) == sorted(counts, reverse=True)
    assert np.all(np.diff(jds.margins) <= 0) and jds.margins[0] == (counts > 0).sum()


def test_empty_rows_and_empty_matrix():
    A = sp.csr_matrix(np.array([[0, 0, 0], [1, 0, 2], [0, 0, 0]], dtype=np.float32))
    B = np.arange(6, dtype=float).reshape(3, 2)
    for fmt in formats.FORMATS:
        np.testing.assert_allclose(formats.layout(A, 2, fmt).matmul(B), A.toarray() @ B)
    Z = sp.csr_matrix((4, 5), dtype=np.float32)
    assert formats.block_margins(np.diff(Z.indptr), 3, "jds").size == 0
    assert formats.layout(Z, 3, "csr").slots == 0


def test_row_counts_per_column_tile():
    A = sparse.generate(50, 70, 0.6, 1.0, 9)
    t = formats.row_nnz_by_col_tile(A, 3)
    w = -(-70 // 3)
    dense = A.toarray() != 0
    for j in range(3):
        np.testing.assert_array_equal(t[:, j], dense[:, j * w:(j + 1) * w].sum(axis=1))


def test_biased_generation_is_reproducible_and_uneven():
    a = matrix_of(parse("spmm:n=200,sparsity=0.5,bias=3,seed=7").layers[0])
    b = sparse.generate(200, 200, 0.5, 3.0, 7)
    assert (a != b).nnz == 0
    counts = np.diff(a.indptr)
    uni = np.diff(sparse.generate(200, 200, 0.5, 0.0, 7).indptr)
    assert counts.std() > 3 * uni.std()
    assert abs(a.nnz / 200 ** 2 - 0.5) < 0.03


def test_bad_format_is_refused():
    with pytest.raises(ValueError, match="allowed: csr, jds"):
        formats.block_margins(np.array([1, 2]), 4, "coo")

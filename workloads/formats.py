"""IMAX sparse layouts of a matrix A: CSR and JDS with per-block Margin (spec `imax.md` §4).

IMAX multiplies a sparse A (m x k) by a dense B on a chain of ``H`` MAC
units. Unit ``h`` of the chain holds slot ``h`` of every row of a block:
a row's nonzeros, packed to the left with their column index, are cut into
blocks of ``H`` slots, and the last block of a row is padded with zero
entries (value 0, index 0); e.g. H = 60 and 150 nonzeros -> 3 blocks (as
in a public IMAX sparse library, GitHub taku2365/IMAX_sparse.cent). One
slot is 8 bytes on IMAX (32-bit value + 32-bit index, spec §5).

* **CSR** keeps the rows in order. A start runs a fixed 2-deep loop (rows x
  B columns, spec §1), so every row runs as many blocks as the longest row;
  shorter rows are padded up to it. CSR "cannot be blocked" and degrades
  when rows are uneven.
* **JDS** sorts the rows by nonzero count (a counting sort, descending and
  stable) and stores block ``b`` (slots ``b*H .. b*H+H-1``, column-major)
  only for the first ``margin_b`` rows, those that reach it: ``margin_b`` =
  number of rows with more than ``b*H`` nonzeros. The Margin keeps the
  padding of short rows out of the transfer. The last unit undoes the
  permutation for free (it writes row ``perm[i]``).

The layouts are built from the real matrix and can multiply (``matmul``),
so a test can check them against scipy; the cost model only needs
:func:`block_margins`, which gives the same margins from row counts alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

FORMATS = ("csr", "jds")
SLOT_BYTES = 8  # 32-bit value + 32-bit column index per stored slot (IVJ word; IVS: two arrays)


def _check(fmt: str, H: int) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown sparse format '{fmt}'; allowed: {', '.join(FORMATS)}")
    if H < 1:
        raise ValueError(f"chain length H={H} must be >= 1")


def block_margins(row_nnz: np.ndarray, H: int, fmt: str) -> np.ndarray:
    """Rows stored in each block of ``H`` slots (the per-block Margin), from row counts.

    CSR: all rows in every block up to the longest row's. JDS: the rows
    reaching the block. An all-zero matrix has no block.
    """
    _check(fmt, H)
    row_nnz = np.asarray(row_nnz, dtype=np.int64)
    top = int(row_nnz.max()) if row_nnz.size else 0
    nblocks = -(-top // H)
    if fmt == "csr":
        return np.full(nblocks, row_nnz.size, dtype=np.int64)
    starts = np.arange(nblocks, dtype=np.int64) * H
    srt = np.sort(row_nnz)
    return (row_nnz.size - np.searchsorted(srt, starts, side="right")).astype(np.int64)


def jds_order(row_nnz: np.ndarray) -> np.ndarray:
    """Row permutation of JDS: by nonzero count, descending; ties keep row order."""
    row_nnz = np.asarray(row_nnz, dtype=np.int64)
    return np.argsort(-row_nnz, kind="stable")


def _packed(A: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    A.sort_indices()
    return np.diff(A.indptr).astype(np.int64), A.indices.astype(np.int32), A.data.astype(np.float32)


def _slot_arrays(A: sp.csr_matrix, rows: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Values and indices of ``rows`` packed left into ``width`` slots (zero padded)."""
    counts, indices, data = _packed(A)
    indptr = np.concatenate(([0], np.cumsum(counts)))
    vals = np.zeros((len(rows), width), dtype=np.float32)
    idx = np.zeros((len(rows), width), dtype=np.int32)
    c = counts[rows]
    r = np.repeat(np.arange(len(rows)), c)
    pos = np.arange(c.sum()) - np.repeat(np.cumsum(c) - c, c)
    src = np.repeat(indptr[rows], c) + pos
    vals[r, pos] = data[src]
    idx[r, pos] = indices[src]
    return vals, idx


@dataclass(frozen=True)
class ImaxCSR:
    """CSR as IMAX stores it: every row padded to the longest row's blocks."""

    shape: tuple[int, int]
    H: int
    values: np.ndarray  # (m, blocks * H) float32
    indices: np.ndarray  # (m, blocks * H) int32, 0 in padding
    nnz: int

    @classmethod
    def from_matrix(cls, A: sp.spmatrix, H: int) -> ImaxCSR:
        _check("csr", H)
        A = sp.csr_matrix(A)
        counts = np.diff(A.indptr)
        width = -(-int(counts.max() if counts.size else 0) // H) * H
        vals, idx = _slot_arrays(A, np.arange(A.shape[0]), width)
        return cls(tuple(A.shape), H, vals, idx, int(A.nnz))

    @property
    def margins(self) -> np.ndarray:
        return np.full(self.values.shape[1] // self.H, self.shape[0], dtype=np.int64)

    @property
    def slots(self) -> int:
        return int(self.values.size)

    @property
    def bytes(self) -> int:
        return self.slots * SLOT_BYTES

    def matmul(self, B: np.ndarray) -> np.ndarray:
        """A @ B from the stored slots (padding multiplies B's row 0 by zero)."""
        B = np.asarray(B, dtype=np.float64)
        vec = B.ndim == 1
        B2 = B[:, None] if vec else B
        C = np.einsum("rs,rsn->rn", self.values.astype(np.float64), B2[self.indices])
        return C[:, 0] if vec else C


@dataclass(frozen=True)
class ImaxJDS:
    """JDS as IMAX stores it: sorted rows, blocks of H slots, each kept to its Margin."""

    shape: tuple[int, int]
    H: int
    perm: np.ndarray  # stored row i is matrix row perm[i]
    blocks: tuple[tuple[np.ndarray, np.ndarray], ...]  # per block: values, indices (margin_b x H)
    nnz: int

    @classmethod
    def from_matrix(cls, A: sp.spmatrix, H: int) -> ImaxJDS:
        _check("jds", H)
        A = sp.csr_matrix(A)
        counts = np.diff(A.indptr).astype(np.int64)
        perm = jds_order(counts)
        margins = block_margins(counts, H, "jds")
        vals, idx = _slot_arrays(A, perm, len(margins) * H)
        blocks = tuple(
            (vals[:mb, b * H:(b + 1) * H].copy(), idx[:mb, b * H:(b + 1) * H].copy())
            for b, mb in enumerate(margins)
        )
        return cls(tuple(A.shape), H, perm, blocks, int(A.nnz))

    @property
    def margins(self) -> np.ndarray:
        return np.array([v.shape[0] for v, _ in self.blocks], dtype=np.int64)

    @property
    def slots(self) -> int:
        return int(sum(v.size for v, _ in self.blocks))

    @property
    def bytes(self) -> int:
        """Stored slots plus the permutation vector (one 32-bit word per row)."""
        return self.slots * SLOT_BYTES + 4 * self.shape[0]

    def matmul(self, B: np.ndarray) -> np.ndarray:
        """A @ B block by block; each block's rows are scattered back through ``perm``."""
        B = np.asarray(B, dtype=np.float64)
        vec = B.ndim == 1
        B2 = B[:, None] if vec else B
        C = np.zeros((self.shape[0], B2.shape[1]))
        for vals, idx in self.blocks:
            rows = self.perm[:vals.shape[0]]
            C[rows] += np.einsum("rs,rsn->rn", vals.astype(np.float64), B2[idx])
        return C[:, 0] if vec else C


def layout(A: sp.spmatrix, H: int, fmt: str) -> ImaxCSR | ImaxJDS:
    """The IMAX layout ``fmt`` (csr or jds) of ``A`` for a chain of ``H`` MAC units."""
    _check(fmt, H)
    return ImaxCSR.from_matrix(A, H) if fmt == "csr" else ImaxJDS.from_matrix(A, H)


def row_nnz_by_col_tile(A: sp.spmatrix, n_tiles: int) -> np.ndarray:
    """Nonzeros of each row within each of ``n_tiles`` equal column ranges: (m, n_tiles).

    Tile ``j`` covers columns ``[j*w, (j+1)*w)`` with ``w = ceil(k / n_tiles)``.
    """
    A = A if sp.isspmatrix_csr(A) else sp.csr_matrix(A)
    m, k = A.shape
    if n_tiles <= 1:
        return np.diff(A.indptr).astype(np.int64)[:, None]
    w = -(-k // n_tiles)
    rows = np.repeat(np.arange(m), np.diff(A.indptr))
    tile = A.indices // w
    return np.bincount(rows * n_tiles + tile, minlength=m * n_tiles).reshape(m, n_tiles).astype(np.int64)

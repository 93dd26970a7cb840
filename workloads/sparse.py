"""Sparse matrices for SpMM/SpMV workloads: generated from a seed or read.

Generated matrices (spec `workloads.md`, "Matrix products"):

* ``uniform``: every entry is nonzero with probability ``1 - sparsity``.
* ``biased``: row ``i`` has density ``d_i = d * exp(bias * u_i) / mean``, with
  ``u_i`` uniform in [-1, 1] (clipped to [0, 1] and renormalised), so the
  densest and sparsest rows differ by up to ``exp(2 * bias)`` while the
  overall sparsity stays ``sparsity``. ``bias = 0`` is uniform.

Both are reproducible: the same (shape, sparsity, bias, seed) gives the same
matrix on every machine (numpy's PCG64 generator). Matrix Market files
(``.mtx``, the SuiteSparse collection's format) are read with scipy.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp


def row_densities(m: int, sparsity: float, bias: float, rng: np.random.Generator) -> np.ndarray:
    """Per-row probability of a nonzero; mean ``1 - sparsity``."""
    density = 1.0 - sparsity
    if bias <= 0.0:
        return np.full(m, density)
    weights = np.exp(bias * rng.uniform(-1.0, 1.0, size=m))
    d = density * weights / weights.mean()
    for _ in range(50):  # clip at 1 and hand the excess to the other rows
        over = d > 1.0
        if not over.any():
            break
        excess = (d[over] - 1.0).sum()
        d[over] = 1.0
        free = ~over & (d < 1.0)
        d[free] += excess * d[free] / d[free].sum()
    return np.minimum(d, 1.0)


@lru_cache(maxsize=32)
def generate(m: int, k: int, sparsity: float, bias: float = 0.0, seed: int = 0) -> sp.csr_matrix:
    """A reproducible random sparse ``m x k`` matrix (CSR, float32 values)."""
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {sparsity}")
    rng = np.random.default_rng(seed)
    dens = row_densities(m, sparsity, bias, rng)
    counts = rng.binomial(k, dens)
    indptr = np.concatenate(([0], np.cumsum(counts)))
    indices = np.empty(indptr[-1], dtype=np.int32)
    for i, c in enumerate(counts):
        indices[indptr[i]:indptr[i + 1]] = np.sort(rng.choice(k, size=c, replace=False))
    data = rng.uniform(-1.0, 1.0, size=indptr[-1]).astype(np.float32)
    return sp.csr_matrix((data, indices, indptr), shape=(m, k))


@lru_cache(maxsize=32)
def read_mtx(path: str) -> sp.csr_matrix:
    """A Matrix Market file (``.mtx`` or gzipped ``.mtx.gz``) as CSR.

    Pattern-only files get values of 1. Explicit zeros (entries stored with
    value 0) are kept as nonzeros: the hardware streams every stored entry.
    Complex matrices are refused (``ValueError``): the models run real
    arithmetic, and a complex product would need 4 real MACs per entry.
    """
    field = scipy.io.mminfo(path)[4]
    if field == "complex":
        raise ValueError("complex matrices are not supported (the models run real arithmetic; "
                         "split it into real and imaginary parts)")
    mat = scipy.io.mmread(path)
    mat = sp.csr_matrix(mat, dtype=np.float32)
    mat.sum_duplicates()
    return mat


def write_mtx(path: str | Path, mat: sp.spmatrix, comment: str = "") -> None:
    """Write ``mat`` in Matrix Market coordinate format."""
    scipy.io.mmwrite(str(path), sp.coo_matrix(mat), comment=comment)

"""Helpers shared by the tests of the assignment solvers (tests/test_assignment*.py,
tests/test_batch_assignment.py): random weighted inputs and SciPy's reference cost."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm


def random_sparse(rng, m, n, density, *, kind="int", perm=False, high=100):
    """m x n CSR with integer weights 1..high-1 (or floats in [0.5, 100)), a
    full matching planted with `perm`."""
    nnz = int(density * m * n)
    rows = rng.integers(0, m, nnz)
    cols = rng.integers(0, n, nnz)
    if perm:
        k = min(m, n)
        rows = np.concatenate([rows, rng.permutation(m)[:k]])
        cols = np.concatenate([cols, rng.permutation(n)[:k]])
    w = rng.integers(1, high, rows.size) if kind == "int" else rng.uniform(0.5, 100.0, rows.size)
    A = sp.coo_matrix((w, (rows, cols)), shape=(m, n)).tocsr()
    A.sum_duplicates()
    return A


def scipy_cost(A, maximize=False):
    """SciPy's optimal cost, or None when it finds no full matching."""
    try:
        r, c = scipy_mwfbm(A, maximize=maximize)
    except ValueError:
        return None
    return A[r, c].sum()


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))

#!/usr/bin/env python3
"""Structural rank of a sparse matrix, with gpumatch and with SciPy.

The structural rank of a sparse matrix is the size of a maximum matching of
its rows and columns: the largest rank any matrix with the same pattern can
have.  A square matrix whose structural rank is below its size is
*structurally singular*: no choice of values makes it invertible, so a sparse
LU factorisation would fail.  This example

* reads a Matrix Market file given on the command line (``.mtx``/``.mtx.gz``),
  or generates a random sparse matrix when none is given (mean degree 2 by
  default, which is structurally singular);
* computes the structural rank with gpumatch (GPU when available, NumPy
  otherwise: ``--backend``) and with ``scipy.sparse.csgraph.structural_rank``,
  and prints both with their times;
* says whether the matrix is structurally singular and how many rows and
  columns a maximum matching leaves unmatched.

Every stored entry counts as a nonzero, explicit zeros included (scipy's
rule); ``--nonzero`` drops stored zeros first (MATLAB ``sprank``).

    python examples/structural_rank.py                       # generated matrix
    python examples/structural_rank.py matrix.mtx.gz --backend numpy
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

try:
    import gpumatch  # noqa: F401
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np
import scipy.sparse.csgraph as csgraph

from gpumatch.backends import resolve_backend, synchronize, to_numpy, warm_up
from gpumatch.generators import random_bipartite
from gpumatch.io import read_matrix_market
from gpumatch.matching import maximum_bipartite_matching


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?", help="Matrix Market file (default: a generated matrix)")
    p.add_argument("--backend", choices=("auto", "numpy", "cupy", "numba"), default="auto")
    p.add_argument("--size", type=int, default=100_000, help="rows = columns of the generated matrix")
    p.add_argument("--degree", type=float, default=2.0, help="mean entries per row of the generated matrix")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nonzero", action="store_true", help="drop explicitly stored zeros (MATLAB sprank)")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    """Run the example; returns the ranks, the unmatched counts and the times."""
    args = parse_args(argv)
    if args.file:
        A = read_matrix_market(args.file)
        label = args.file
    else:
        A = random_bipartite(args.size, args.size, args.degree, seed=args.seed)
        label = f"random {args.size} x {args.size}, mean degree {args.degree:g} (seed {args.seed})"
    if args.nonzero:
        A = A.copy()
        A.eliminate_zeros()
    m, n = A.shape
    backend = resolve_backend(args.backend)
    print(f"matrix: {label}: {m} x {n}, {A.nnz} stored entries")

    # load the engine once (on the first run after an install, compile it), outside the timing
    print(f"loading the {backend} engine: {warm_up(backend, ['matching']):.2f} s (once per process)")
    t0 = time.perf_counter()
    row_of_col = maximum_bipartite_matching(A, perm_type="row", backend=backend)
    synchronize(backend)
    t_ours = time.perf_counter() - t0
    row_of_col = to_numpy(row_of_col)
    rank = int((row_of_col >= 0).sum())

    t0 = time.perf_counter()
    rank_scipy = int(csgraph.structural_rank(A))
    t_scipy = time.perf_counter() - t0

    matched_rows = np.zeros(m, dtype=bool)
    matched_rows[row_of_col[row_of_col >= 0]] = True
    unmatched_rows = int(m - matched_rows.sum())
    unmatched_cols = int(n - rank)
    singular = rank < min(m, n)

    print(f"gpumatch ({backend}): structural rank {rank}  in {t_ours:.3f} s")
    print(f"scipy              : structural rank {rank_scipy}  in {t_scipy:.3f} s"
          f"  ({'same' if rank == rank_scipy else 'DIFFERENT'})")
    if singular:
        kind = "structurally singular" if m == n else "structurally rank-deficient"
        print(f"{kind}: {unmatched_rows} of {m} rows and {unmatched_cols} of {n} columns are unmatched")
    else:
        print("full structural rank" + (" (structurally nonsingular)" if m == n else "")
              + f"; unmatched: {unmatched_rows} rows, {unmatched_cols} columns")
    return {
        "shape": (m, n),
        "rank": rank,
        "scipy_rank": rank_scipy,
        "singular": singular,
        "unmatched_rows": unmatched_rows,
        "unmatched_cols": unmatched_cols,
        "time_gpumatch": t_ours,
        "time_scipy": t_scipy,
        "backend": backend,
    }


if __name__ == "__main__":
    out = main()
    sys.exit(0 if out["rank"] == out["scipy_rank"] else 1)

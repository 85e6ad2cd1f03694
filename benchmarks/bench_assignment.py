"""Weighted bipartite matching: gpumatch's engines against scipy (and OR-Tools when importable).

The family of issue 64: a random sparse ``n x n`` matrix with ``k`` entries per
row on average plus the entries of a random permutation (so a perfect matching
exists), integer weights drawn uniformly from 1..999.  Every solver's total
weight is checked equal to scipy's; gpumatch's duals are checked by
:func:`gpumatch.testing.check_assignment`.

Usage::

    python benchmarks/bench_assignment.py                 # n = 10000
    python benchmarks/bench_assignment.py --n 10000 100000 --repeat 3
    python benchmarks/bench_assignment.py --dense 2000    # dense linear_sum_assignment too

Times are the best of ``--repeat`` runs, after one warm-up call that loads
(or compiles) the Numba engine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp


def random_instance(n: int, per_row: int = 10, seed: int = 0) -> sp.csr_matrix:
    """``n x n`` CSR: ``per_row * n`` random entries plus a random permutation's, weights 1..999."""
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.integers(0, n, per_row * n), np.arange(n)])
    cols = np.concatenate([rng.integers(0, n, per_row * n), rng.permutation(n)])
    w = rng.integers(1, 1000, rows.size)
    A = sp.coo_matrix((w, (rows, cols)), shape=(n, n)).tocsr()
    A.sum_duplicates()
    A.data = np.minimum(A.data, 999)      # a duplicate pair keeps a weight in 1..999
    return A


def best_of(fn, repeat: int):
    out, best = None, float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def ortools_solver():
    try:
        from ortools.graph.python import linear_sum_assignment as ort  # type: ignore[import-not-found]
    except ImportError:
        return None

    def solve(A):
        C = A.tocoo()
        s = ort.SimpleLinearSumAssignment()
        s.add_arcs_with_cost(C.row, C.col + A.shape[0], C.data)
        if s.solve() != s.OPTIMAL:
            raise RuntimeError("OR-Tools found no optimal assignment")
        return int(s.optimal_cost())
    return solve


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[10_000])
    p.add_argument("--per-row", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dense", type=int, nargs="*", default=[], help="sizes of dense linear_sum_assignment runs")
    p.add_argument("--no-scipy-above", type=int, default=10**9, help="skip scipy for larger n")
    args = p.parse_args(argv)

    import scipy.optimize
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

    import gpumatch
    from gpumatch.testing import check_assignment

    gpumatch.min_weight_full_bipartite_matching(random_instance(50, seed=1))   # load / compile the engine
    ort = ortools_solver()
    print(f"{'input':<34}{'solver':<34}{'time (s)':>10}{'cost':>14}{'vs scipy':>10}")
    for n in args.n:
        A = random_instance(n, args.per_row, seed=n)
        name = f"sparse {n}x{n} nnz={A.nnz}"
        ref = None
        t_ref = None
        if n <= args.no_scipy_above:
            (r, c), t_ref = best_of(lambda: scipy_mwfbm(A), args.repeat)
            ref = int(A[r, c].sum())
            print(f"{name:<34}{'scipy (LAPJVsp)':<34}{t_ref:>10.3f}{ref:>14}{1.0:>10.2f}")
        (r, c), t = best_of(lambda: gpumatch.min_weight_full_bipartite_matching(A, backend="numba"), args.repeat)
        cost = int(A[r, c].sum())
        assert ref is None or cost == ref, (cost, ref)
        ratio = f"{t_ref / t:>10.2f}" if t_ref else f"{'-':>10}"
        print(f"{name:<34}{'gpumatch numba (min_weight_full)':<34}{t:>10.3f}{cost:>14}{ratio}")
        res, t = best_of(lambda: gpumatch.assignment(A, backend="numba"), args.repeat)
        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=cost)
        ratio = f"{t_ref / t:>10.2f}" if t_ref else f"{'-':>10}"
        print(f"{name:<34}{'gpumatch numba (assignment+duals)':<34}{t:>10.3f}{res.cost:>14}{ratio}")
        if ort is not None:
            oc, t = best_of(lambda: ort(A), args.repeat)
            assert oc == cost, (oc, cost)
            ratio = f"{t_ref / t:>10.2f}" if t_ref else f"{'-':>10}"
            print(f"{name:<34}{'OR-Tools (cost scaling)':<34}{t:>10.3f}{oc:>14}{ratio}")
        else:
            print(f"{name:<34}{'OR-Tools':<34}{'skipped (not installed)':>34}")
    for n in args.dense:
        C = np.random.default_rng(n).integers(1, 1000, (n, n))
        name = f"dense {n}x{n}"
        (r, c), t_ref = best_of(lambda: scipy.optimize.linear_sum_assignment(C), args.repeat)
        ref = int(C[r, c].sum())
        print(f"{name:<34}{'scipy linear_sum_assignment':<34}{t_ref:>10.3f}{ref:>14}{1.0:>10.2f}")
        (r, c), t = best_of(lambda: gpumatch.linear_sum_assignment(C), args.repeat)
        cost = int(C[r, c].sum())
        assert cost == ref, (cost, ref)
        print(f"{name:<34}{'gpumatch linear_sum_assignment':<34}{t:>10.3f}{cost:>14}{t_ref / t:>10.2f}")


if __name__ == "__main__":
    main()

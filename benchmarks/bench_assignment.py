"""Weighted bipartite matching: gpumatch's engine against scipy and OR-Tools, in one run.

The family of issue 64: a random sparse ``n x n`` matrix with ``k`` entries per
row on average plus the entries of a random permutation (so a perfect matching
exists), integer weights drawn uniformly from 1..999.  Every solver's total
weight is checked equal to scipy's; gpumatch's duals are checked by
:func:`gpumatch.testing.check_assignment`.  OR-Tools'
``SimpleLinearSumAssignment`` (cost scaling push-relabel) runs when
``ortools`` imports, else its line says it was skipped; its time includes
handing it the arcs (about 5 % of it), as gpumatch's includes validating the
input.

Usage::

    python benchmarks/bench_assignment.py                 # n = 10000
    python benchmarks/bench_assignment.py --n 10000 100000 --repeat 3
    python benchmarks/bench_assignment.py --dense 2000    # dense linear_sum_assignment too
    python benchmarks/bench_assignment.py --batch 10000 20   # batch.linear_sum_assignment of 10000 20x20

The 2-core figures of ``RESULTS.md`` come from
``NUMBA_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_assignment.py ...``.
Times are the median of ``--repeat`` runs, after one warm-up call that loads
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


def rounds(solvers, repeat: int):
    """Time every ``(label, fn)`` of `solvers` `repeat` times, one call of each
    in turn per round (so that a slow spell of a shared machine falls on all
    of them); returns ``{label: (last result, median seconds)}``."""
    times = {label: [] for label, _ in solvers}
    out = {}
    for _ in range(max(1, repeat)):
        for label, fn in solvers:
            t0 = time.perf_counter()
            out[label] = fn()
            times[label].append(time.perf_counter() - t0)
    return {label: (out[label], float(np.median(times[label]))) for label, _ in solvers}


def ortools_solver():
    try:
        from ortools.graph.python import linear_sum_assignment as ort  # type: ignore[import-not-found]
    except ImportError:
        return None

    def solve(A):
        # left and right nodes are numbered apart: arc (i, j) joins left i to right j
        C = A.tocoo()
        s = ort.SimpleLinearSumAssignment()
        s.add_arcs_with_cost(C.row.astype(np.int32), C.col.astype(np.int32), C.data.astype(np.int64))
        if s.solve() != s.OPTIMAL:
            raise RuntimeError("OR-Tools found no optimal assignment")
        return int(s.optimal_cost())
    return solve


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="*", default=[10_000])
    p.add_argument("--per-row", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dense", type=int, nargs="*", default=[], help="sizes of dense linear_sum_assignment runs")
    p.add_argument("--no-scipy-above", type=int, default=10**9, help="skip scipy for larger n")
    p.add_argument("--batch", type=int, nargs=2, action="append", default=[], metavar=("K", "N"),
                   help="batch.linear_sum_assignment of K random N x N float matrices against a loop "
                        "of scipy calls (repeatable)")
    args = p.parse_args(argv)

    import scipy.optimize
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

    import gpumatch
    import gpumatch.batch
    from gpumatch.testing import check_assignment

    gpumatch.min_weight_full_bipartite_matching(random_instance(50, seed=1))   # load / compile the engine
    gpumatch.linear_sum_assignment(np.ones((3, 3), dtype=np.int64))
    ort = ortools_solver()
    if ort is None:
        print("OR-Tools is not installed (pip install ortools): its lines are skipped")
    print(f"{'input':<34}{'solver':<34}{'time (s)':>10}{'cost':>14}{'vs scipy':>10}")

    def report(name, results, ref_label):
        t_ref = results[ref_label][1] if ref_label in results else None
        for label, (cost, t) in results.items():
            ratio = f"{t_ref / t:>10.2f}" if t_ref else f"{'-':>10}"
            print(f"{name:<34}{label:<34}{t:>10.3f}{cost:>14}{ratio}")

    for n in args.n:
        A = random_instance(n, args.per_row, seed=n)
        name = f"sparse {n}x{n} nnz={A.nnz}"
        total = lambda rc: int(A[rc[0], rc[1]].sum())  # noqa: E731
        solvers = []
        if n <= args.no_scipy_above:
            solvers.append(("scipy (LAPJVsp)", lambda: total(scipy_mwfbm(A))))
        solvers.append(("gpumatch numba (min_weight_full)",
                        lambda: total(gpumatch.min_weight_full_bipartite_matching(A, backend="numba"))))
        solvers.append(("gpumatch numba (assignment+duals)", lambda: gpumatch.assignment(A, backend="numba")))
        if ort is not None:
            solvers.append(("OR-Tools (cost scaling)", lambda: ort(A)))
        results = rounds(solvers, args.repeat)
        res, t = results["gpumatch numba (assignment+duals)"]
        cost = results["gpumatch numba (min_weight_full)"][0]
        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=cost)
        results["gpumatch numba (assignment+duals)"] = (res.cost, t)
        assert len({c for c, _ in results.values()}) == 1, {k: c for k, (c, _) in results.items()}
        report(name, results, "scipy (LAPJVsp)")
    for n in args.dense:
        C = np.random.default_rng(n).integers(1, 1000, (n, n))
        total = lambda rc: int(C[rc[0], rc[1]].sum())  # noqa: E731
        results = rounds([("scipy linear_sum_assignment", lambda: total(scipy.optimize.linear_sum_assignment(C))),
                          ("gpumatch linear_sum_assignment", lambda: total(gpumatch.linear_sum_assignment(C)))],
                         args.repeat)
        assert len({c for c, _ in results.values()}) == 1, results
        report(f"dense {n}x{n}", results, "scipy linear_sum_assignment")
    for k, n in args.batch:
        C = np.random.default_rng(k * n).random((k, n, n))
        gpumatch.batch.linear_sum_assignment(C[:2])             # load / compile the stack kernel

        def loop():
            return float(sum(C[t][scipy.optimize.linear_sum_assignment(C[t])].sum() for t in range(k)))

        def stacked():
            _, cols = gpumatch.batch.linear_sum_assignment(C)
            return float(np.take_along_axis(C, cols[:, :, None], axis=2).sum())

        results = rounds([("scipy, a loop", loop), ("gpumatch batch.linear_sum_assignment", stacked)], args.repeat)
        a, b = (c for c, _ in results.values())
        assert abs(a - b) <= 1e-9 * max(1.0, abs(a)), results
        results = {label: (f"{c:.4f}", t) for label, (c, t) in results.items()}
        report(f"batch {k} x {n}x{n}", results, "scipy, a loop")


if __name__ == "__main__":
    main()

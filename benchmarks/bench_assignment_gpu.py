"""The GPU engine of the assignment problem (issue 64): times of its three paths on one device.

* sparse: ``min_weight_full_bipartite_matching`` and ``assignment`` (with the
  exact dual certificate) on the family of ``bench_assignment.py`` (a random
  ``n x n`` CSR, 10 entries per row plus a planted permutation, integer
  weights 1..999), the matrix already on the device (cupyx CSR);
* dense: ``linear_sum_assignment`` of an ``n x n`` CuPy array of integers 1..999;
* batched: ``k`` dense ``n x n`` problems in one ``(k, n, n)`` CuPy array
  (``gpumatch.batch.linear_sum_assignment``, one launch, a block per problem).

Each case runs once to compile the kernels (not timed), then ``--repeat``
times; the time is the median, by CUDA events around the call (the call
returns its result on the device, so the events cover all of its work) and
by the host clock.  Every result is checked: the sparse one by its dual
certificate (``gpumatch.testing.check_assignment``, which proves it optimal
without a reference solver) and its cost against the other call's; dense
and batched costs against SciPy (or gpumatch's CPU engine above
``--scipy-max``).  The issue's targets are printed beside the times.

Usage (on a machine with a CUDA device and CuPy)::

    python benchmarks/bench_assignment_gpu.py                       # all cases at the issue's sizes
    python benchmarks/bench_assignment_gpu.py --sparse 100000 --dense --batch --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bench_assignment import random_instance   # the same inputs as the CPU benchmark (this folder is on sys.path)

#: The issue's targets (seconds) on one H200.
TARGETS = {("sparse", 100_000): 0.09, ("sparse", 1_000_000): 1.0, ("dense", 5000): 0.2,
           ("batch", (16, 300)): 0.002, ("batch", (1000, 100)): 0.010}


def timed(fn, repeat: int):
    """``(result, median event seconds, median host seconds)`` of `repeat` calls after one warm-up."""
    import cupy as cp

    out = fn()
    cp.cuda.get_current_stream().synchronize()
    ev, wall = [], []
    for _ in range(repeat):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        t0 = time.perf_counter()
        start.record()
        out = fn()
        end.record()
        end.synchronize()
        wall.append(time.perf_counter() - t0)
        ev.append(cp.cuda.get_elapsed_time(start, end) / 1000.0)
    return out, statistics.median(ev), statistics.median(wall)


def line(case, what, t_ev, t_wall, target, note=""):
    goal = f"{target:.3f}" if target is not None else "-"
    ok = "" if target is None else ("ok" if t_ev <= target else "MISSED")
    print(f"{case:<30}{what:<34}{t_ev:>10.4f}{t_wall:>10.4f}{goal:>9}  {ok:<7}{note}", flush=True)


def bench_sparse(n, repeat):
    import cupyx.scipy.sparse as cpx

    import gpumatch
    from gpumatch.testing import check_assignment

    A = random_instance(n, seed=n)
    Ad = cpx.csr_matrix(A.astype(np.float64))   # cupyx sparse holds no integers (exact below 2**53)
    case = f"sparse {n}x{n} nnz={A.nnz}"
    (r, c), t_ev, t_wall = timed(lambda: gpumatch.min_weight_full_bipartite_matching(Ad, backend="cupy"), repeat)
    cost = int(A[r.get(), c.get()].sum())
    line(case, "min_weight_full (cupy)", t_ev, t_wall, TARGETS.get(("sparse", n)), f"cost {cost}")
    res, t_ev, t_wall = timed(lambda: gpumatch.assignment(Ad, backend="cupy"), repeat)
    cert = check_assignment(A, res.row_ind.get(), res.col_ind.get(), res.u.get(), res.v.get(), expected_cost=cost)
    st = res.stats
    line(case, "assignment + duals (cupy)", t_ev, t_wall, None,
         f"optimal={cert.optimal} phases={st.get('phases')} rounds={st.get('rounds')} "
         f"updates={st.get('updates')} host searches={st.get('host_searches')}")


def bench_dense(n, repeat, scipy_max):
    import cupy as cp

    import gpumatch

    C = np.random.default_rng(n).integers(1, 1000, (n, n))
    Cd = cp.asarray(C)
    (r, c), t_ev, t_wall = timed(lambda: gpumatch.linear_sum_assignment(Cd, backend="cupy"), repeat)
    cost = int(C[r.get(), c.get()].sum())
    if n <= scipy_max:
        import scipy.optimize

        r0, c0 = scipy.optimize.linear_sum_assignment(C)
        ref, who = int(C[r0, c0].sum()), "scipy"
    else:
        r0, c0 = gpumatch.linear_sum_assignment(C, backend="numba")
        ref, who = int(C[r0, c0].sum()), "gpumatch numba"
    assert cost == ref, (cost, ref)
    line(f"dense {n}x{n}", "linear_sum_assignment (cupy)", t_ev, t_wall, TARGETS.get(("dense", n)),
         f"cost {cost} = {who}'s")


def bench_batch(k, n, repeat):
    import cupy as cp
    import scipy.optimize

    from gpumatch import batch

    C = np.random.default_rng(k * n).integers(1, 1000, (k, n, n))
    Cd = cp.asarray(C)
    (r, c), t_ev, t_wall = timed(lambda: batch.linear_sum_assignment(Cd), repeat)
    r, c = r.get(), c.get()
    for b in range(k):
        r0, c0 = scipy.optimize.linear_sum_assignment(C[b])
        assert C[b][r[b], c[b]].sum() == C[b][r0, c0].sum(), b
    line(f"batch {k} x {n}x{n}", "batch.linear_sum_assignment (cupy)", t_ev, t_wall, TARGETS.get(("batch", (k, n))),
         "every cost = scipy's")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sparse", type=int, nargs="*", default=None, help="sizes n of the sparse runs")
    p.add_argument("--dense", type=int, nargs="*", default=None, help="sizes n of the dense runs")
    p.add_argument("--batch", nargs="*", default=None, help="batches as KxN, e.g. 16x300")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--scipy-max", type=int, default=5000, help="largest dense n checked against scipy")
    args = p.parse_args(argv)
    everything = args.sparse is None and args.dense is None and args.batch is None
    sparse = [100_000, 1_000_000] if args.sparse == [] or (everything and args.sparse is None) else args.sparse or []
    dense = [5000] if args.dense == [] or (everything and args.dense is None) else args.dense or []
    batch = ["16x300", "1000x100"] if args.batch == [] or (everything and args.batch is None) else args.batch or []

    import gpumatch
    from gpumatch import _backend

    if not _backend.cupy_available():
        raise SystemExit("needs CuPy and a CUDA device")
    print(f"device: {_backend.device_name()}; gpumatch {gpumatch.__version__}")
    print(f"{'input':<30}{'solver':<34}{'event (s)':>10}{'host (s)':>10}{'target':>9}")
    for n in sparse:
        bench_sparse(n, args.repeat)
    for n in dense:
        bench_dense(n, args.repeat, args.scipy_max)
    for spec in batch:
        k, n = (int(t) for t in spec.lower().split("x"))
        bench_batch(k, n, args.repeat)


if __name__ == "__main__":
    main()

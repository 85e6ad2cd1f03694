"""Structured matrices on the GPU (issue 61): where each one's time goes.

For each family (shuffled cycles, staircases, block-triangular Jacobians,
ladders, thinned blocks, and random, grid and R-MAT graphs for scale), one
``gpumatch.bipartite_matching(..., backend="cupy")`` call on a cupyx CSR
already on the device: one warm-up, then the median of ``--repeat`` runs
timed by CUDA events around the call, with the statistics of the last run
that say which mechanism finished it (the chain rule and its cycles, G-PR,
augmenting phases, walks, or the host engine, and why).  With ``--host``,
the compiled CPU engine (``backend="numba"``) on the same machine, median
of three, and the two sizes must agree.

Usage (on a machine with a CUDA device and CuPy)::

    python benchmarks/bench_structured_gpu.py --host
    python benchmarks/bench_structured_gpu.py --only cycle,stair --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp

from gpumatch import generators as G
from gpumatch.matching import bipartite_matching

N = 300_000
CASES = {
    "cycle 300k": lambda: G.cycles(N, 1, permute=True, seed=1),
    "100 cycles": lambda: G.cycles(N, 100, permute=True, seed=1),
    "3-cycles": lambda: G.cycles(N, N // 3, permute=True, seed=1),
    "stair w6 p": lambda: G.staircase(N, N, width=6, permute=True),
    "stair w3 p": lambda: G.staircase(N, N, width=3, permute=True),
    "stair w6 unperm": lambda: G.staircase(N, N, width=6),
    "stair w6 100k p": lambda: G.staircase(100_000, 100_000, width=6, permute=True),
    "stair 101k x 100k p": lambda: G.staircase(101_000, 100_000, permute=True),
    "jac 120k": lambda: G.block_triangular(120_000),
    "jac 481k": lambda: G.block_triangular(480_000),
    "jac 1.92M": lambda: G.block_triangular(1_920_000),
    "ladder 300k": lambda: G.bidiagonal(N, permute=True),
    "bdiag3 d.5 p": lambda: G.block_diagonal(N, 3, density=0.5, permute=True),
    "random 1M d5": lambda: G.random_bipartite(1_000_000, 1_000_000, 5),
    "grid 1000": lambda: G.grid(1000, 1000, drop=0.1),
    "rmat 20": lambda: G.rmat(20, 8),
}
KEYS = ("finished_by", "chain_rounds", "chain_cycle_rounds", "relabel_steps", "global_relabels", "max_level",
        "aug_phases", "aug_levels", "aug_truncated", "walk_rounds", "host_fresh", "time_host")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated parts of case names to run (default: all)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs after the warm-up (median)")
    p.add_argument("--host", action="store_true", help="also time the compiled CPU engine on this machine")
    args = p.parse_args(argv)
    import cupy as cp
    import cupyx.scipy.sparse as cpx

    only = [o for o in args.only.split(",") if o]
    bipartite_matching(cpx.csr_matrix(G.block_triangular(2000)), backend="cupy")   # compile and load
    for name, make in CASES.items():
        if only and not any(o in name for o in only):
            continue
        A = sp.csr_matrix(make()).astype(np.float64)
        Ad = cpx.csr_matrix(A)
        times = []
        for rep in range(args.repeat + 1):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            res = bipartite_matching(Ad, backend="cupy")
            end.record()
            end.synchronize()
            if rep:
                times.append(cp.cuda.get_elapsed_time(start, end))
        stats = {k: (round(res.stats[k], 4) if isinstance(res.stats[k], float) else res.stats[k])
                 for k in KEYS if k in res.stats}
        line = f"{name:20s} gpu {statistics.median(times):9.2f} ms size {res.size}"
        if args.host:
            host = []
            for _ in range(3):
                t = time.perf_counter()
                h = bipartite_matching(A, backend="numba")
                host.append((time.perf_counter() - t) * 1e3)
            if h.size != res.size:
                raise SystemExit(f"{name}: the GPU matched {res.size}, the host {h.size}")
            line += f"  host numba {statistics.median(host):8.2f} ms"
        print(line, stats, flush=True)
        if res.stats.get("switch_reason"):
            print("    reason:", res.stats["switch_reason"], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

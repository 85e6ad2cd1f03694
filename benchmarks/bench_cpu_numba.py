"""The CPU inputs of issue 46: gpumatch-numba against scipy, igraph and OR-Tools.

Runs each solver the way ``gpumatch bench`` does (its solver classes: one
warm-up, then the median of ``--repeats`` timed runs; gpumatch end to end
from a SciPy matrix to a SciPy result, igraph and OR-Tools their solve call
on a graph built beforehand) on the inputs of the issue's table, and checks
every answer against scipy's size or value (on meshes the reference is
scipy's max flow on the unit network).

    python benchmarks/bench_cpu_numba.py [--repeats 3] [--solvers gpumatch-numba,scipy,igraph,ortools]

``--threads 1,2,4,8,16`` times the Numba matching engine instead, per
Numba thread count, on random 1M x 1M d5, Delaunay 1M and the 1000 x 1000
grid (``--filter`` selects among them): ``bipartite_matching(A,
backend="numba")`` from the SciPy matrix, the median of ``--repeats`` runs
after a warm-up, for each path of ``--paths``:

* ``default``: the engine's own choice (``_cpu.TUNING`` as shipped);
* ``serial``: Karp–Sipser + Pothen–Fan+ (the multi-threaded path off);
* ``ks+msbfs``: serial Karp–Sipser + the multi-threaded MS-BFS;
* ``parallel``: the multi-threaded path (multi-threaded Karp–Sipser from
  2 threads on, then MS-BFS).

Columns: end to end, ``time_init`` (the initial matching), ``time_augment``
(the search), what is left of the end-to-end time (validation, transpose,
result), the initial matching's size, the search's phases and augmenting
paths, and the size against the reference (scipy's Hopcroft–Karp, or its
max flow on the unit network for the meshes); the warm-up's matching is
also checked with ``gpumatch.testing.check_matching`` (a matching of the
graph, proved maximum by a König cover).

    python benchmarks/bench_cpu_numba.py --threads 1,2,4,8,16 [--paths default,serial,ks+msbfs,parallel]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import scipy.sparse as sp

from gpumatch import bench, csr
from gpumatch import generators as G


def unit(A):
    A = sp.csr_matrix(A)
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr, A.indices, A.shape)
    V = ip.shape[0] - 1
    return sp.csr_matrix((cap, ix, ip), shape=(V, V)), s, t


INPUTS = [
    ("genrmf(16, 16, 100, 1000) flow", "flow", lambda: G.genrmf(16, 16, 100, 1000, seed=0)),
    ("genrmf(32, 32, 100, 1000) flow", "flow", lambda: G.genrmf(32, 32, 100, 1000, seed=0)),
    ("washington_rlg(128, 256, 10000) flow", "flow", lambda: G.washington_rlg(128, 256, 10000, seed=0)),
    ("unit network, random 100k x 100k d5", "flow", lambda: unit(G.random_bipartite(100_000, 100_000, 5, seed=1))),
    ("unit network, random 50k x 50k d5", "flow", lambda: unit(G.random_bipartite(50_000, 50_000, 5, seed=1))),
    ("unit network, Delaunay 50k", "flow", lambda: unit(G.delaunay(50_000, seed=1))),
    ("matching, random 200k d5", "matching", lambda: G.random_bipartite(200_000, 200_000, 5, seed=1)),
    ("matching, triangular 1500 (permuted)", "matching", lambda: G.triangular(1500, permute=True, seed=1)),
    ("matching, Delaunay 200k", "matching", lambda: G.delaunay(200_000, seed=1)),
]


THREAD_INPUTS = [
    ("random 1M x 1M d5", lambda: G.random_bipartite(1_000_000, 1_000_000, 5, seed=1)),
    ("Delaunay 1M", lambda: G.delaunay(1_000_000, seed=1)),
    ("grid 1000 x 1000 (10% dropped)", lambda: G.grid(1000, 1000, drop=0.1, seed=1)),
]

#: TUNING overrides of each ``--paths`` entry (None: as shipped).
PATHS = {
    "default": None,
    "serial": {"parallel_min_nnz": None},
    "ks+msbfs": {"parallel_min_nnz": 0, "parallel_min_threads": 1, "parallel_init": False},
    "parallel": {"parallel_min_nnz": 0, "parallel_min_threads": 1, "parallel_init": True},
}


def reference(problem, data, name):
    from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

    if problem == "flow":
        C, s, t = data
        return int(maximum_flow(sp.csr_matrix(C).astype(np.int32), s, t, method="dinic").flow_value)
    if "Delaunay" in name or "grid" in name:
        C, s, t = unit(data)
        return int(maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value)
    return int((maximum_bipartite_matching(sp.csr_matrix(data), perm_type="row") >= 0).sum())


def threads_table(threads, paths, repeats, filt):
    """The ``--threads`` mode: one table per input, a line per path and thread count."""
    import time

    import numba

    from gpumatch.matching import _cpu, bipartite_matching
    from gpumatch.testing import check_matching

    shipped = dict(_cpu.TUNING)
    skipped = [t for t in threads if t > numba.config.NUMBA_NUM_THREADS]
    threads = [t for t in threads if t <= numba.config.NUMBA_NUM_THREADS]
    print(f"Numba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} threads available"
          + (f" (skipping {skipped}; set NUMBA_NUM_THREADS)" if skipped else "")
          + f"; TUNING as shipped: {shipped}")
    try:
        for name, make in THREAD_INPUTS:
            if filt not in name:
                continue
            A = sp.csr_matrix(make())
            t0 = time.perf_counter()
            ref = reference("matching", A, name)
            print(f"\n### {name}: {A.shape[0]} x {A.shape[1]}, {A.nnz} edges; reference size {ref} "
                  f"({time.perf_counter() - t0:.1f} s)\n")
            print("| path | threads | e2e s | init s | search s | other s | init size | phases | paths | "
                  "size | algorithm |")
            print("|---|---|---|---|---|---|---|---|---|---|---|")
            for path in paths:
                for nt in threads:
                    _cpu.TUNING.clear()
                    _cpu.TUNING.update(shipped)
                    _cpu.TUNING.update(PATHS[path] or {})
                    numba.set_num_threads(nt)
                    res = bipartite_matching(A, backend="numba")      # warm-up (compilation, page faults)
                    try:      # a matching of A, maximum (König cover), of the reference's size
                        check_matching(A, res.col_to_row, "row", expected_size=ref)
                        ok = ""
                    except AssertionError as exc:
                        ok = f" WRONG ({str(exc)[:80]})"
                    rows = []
                    for _ in range(repeats):
                        t0 = time.perf_counter()
                        res = bipartite_matching(A, backend="numba")
                        e2e = time.perf_counter() - t0
                        st = res.stats
                        rows.append((e2e, st["time_init"], st["time_augment"],
                                     e2e - st["time_init"] - st["time_augment"]))
                        if res.size != ref and not ok:
                            ok = f" WRONG (!= {ref})"
                    med = np.median(np.array(rows), axis=0)
                    print(f"| {path} | {nt} | {med[0]:.4f} | {med[1]:.4f} | {med[2]:.4f} | {med[3]:.4f} | "
                          f"{st['initial_size']} | {st['aug_phases']} | {st['aug_paths']} | {res.size}{ok} | "
                          f"{st['algorithm']} |", flush=True)
        print("\nthreads: Python threads running compiled slices (gpumatch/_cpu_threads.py), "
              "as many as numba.get_num_threads()")
    finally:
        _cpu.TUNING.clear()
        _cpu.TUNING.update(shipped)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--solvers", default="gpumatch-numba,scipy,igraph,ortools")
    p.add_argument("--filter", default="")
    p.add_argument("--threads", default="", help="comma-separated Numba thread counts: time the Numba "
                   "matching engine per thread count instead (see the module notes)")
    p.add_argument("--paths", default="default,serial,ks+msbfs,parallel",
                   help=f"with --threads: which of {', '.join(PATHS)}")
    args = p.parse_args(argv)
    if args.threads:
        paths = [x for x in args.paths.split(",") if x]
        bad = [x for x in paths if x not in PATHS]
        if bad:
            p.error(f"--paths: unknown {bad}; choose from {list(PATHS)}")
        threads_table([int(x) for x in args.threads.split(",")], paths, args.repeats, args.filter)
        return
    solvers = [s for s in args.solvers.split(",") if bench.solver_available(s)[0]]
    print("| input | " + " | ".join(solvers) + " |")
    print("|---|" + "---|" * len(solvers))
    for name, problem, make in INPUTS:
        if args.filter not in name:
            continue
        data = make()
        ref = reference(problem, data, name)
        cells = []
        for solver in solvers:
            if solver == "scipy" and problem == "matching" and "Delaunay" in name:
                cells.append("(minutes: scipy #26147)")
                continue
            runner = bench._SOLVER_CLASSES[solver](problem, data)
            runner.setup()
            runner.warmup()
            times = []
            for _ in range(args.repeats):
                res, t, _ = runner.solve()
                times.append(t)
            got = int(res[0]) if problem == "flow" else int((np.asarray(res) >= 0).sum())
            ok = "" if got == ref else f" WRONG ({got} != {ref})"
            cells.append(f"{statistics.median(times):.4f} s{ok}")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

"""The CPU inputs of issue 46: gpumatch-numba against scipy, igraph and OR-Tools.

Runs each solver the way ``gpumatch bench`` does (its solver classes: one
warm-up, then the median of ``--repeats`` timed runs; gpumatch end to end
from a SciPy matrix to a SciPy result, igraph and OR-Tools their solve call
on a graph built beforehand) on the inputs of the issue's table, and checks
every answer against scipy's size or value (on meshes the reference is
scipy's max flow on the unit network).

    python benchmarks/bench_cpu_numba.py [--repeats 3] [--solvers gpumatch-numba,scipy,igraph,ortools]
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


def reference(problem, data, name):
    from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

    if problem == "flow":
        C, s, t = data
        return int(maximum_flow(sp.csr_matrix(C).astype(np.int32), s, t, method="dinic").flow_value)
    if "Delaunay" in name:
        return int(maximum_flow(*(lambda c: (c[0].astype(np.int32), c[1], c[2]))(unit(data)), method="dinic").flow_value)
    return int((maximum_bipartite_matching(sp.csr_matrix(data), perm_type="row") >= 0).sum())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--solvers", default="gpumatch-numba,scipy,igraph,ortools")
    p.add_argument("--filter", default="")
    args = p.parse_args(argv)
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

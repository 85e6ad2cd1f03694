#!/usr/bin/env python3
"""NetworkX's own algorithms against the gpumatch backend, through NetworkX's API.

    pip install -e ".[networkx]"                 # the backend's entry points
    python benchmarks/bench_networkx.py          # 10k, 100k and 1M edges, matching and flow
    python benchmarks/bench_networkx.py --sizes 10k,100k --out bench_out/networkx_cpu.md
    python benchmarks/bench_networkx.py --solver-backend cupy --out bench_out/networkx_h100.md   # GPU machine

Each case builds a NetworkX graph (not timed) and times, in one process:

* ``networkx``: the plain call, NetworkX's default algorithm
  (``bipartite.maximum_matching`` = Hopcroft-Karp; ``maximum_flow_value``
  = preflow-push), stopped after ``--nx-budget`` seconds;
* ``gpumatch 1st``: the same call with ``backend="gpumatch"`` on a graph
  that has not been converted yet: conversion to CSR (read every edge of
  the NetworkX graph once) plus the solve;
* ``gpumatch cached``: the call again (median of ``--repeats``): NetworkX
  finds the converted graph in ``G.__networkx_cache__``, so this is the
  solve plus the conversion of the answer back to NetworkX objects;
* ``conversion``: the conversion alone (the part of the first call that a
  faster solver does not shrink).

gpumatch runs on ``--solver-backend`` ("auto": the GPU when CuPy finds one,
else the compiled CPU engine, Numba), set through ``nx.config.backends.gpumatch.backend``; a warm-up
call on a small graph comes first so that no timing includes the compile of
the CUDA kernels.  Every answer is checked against SciPy on the same CSR
(matching size: ``scipy.sparse.csgraph.maximum_bipartite_matching``; flow
value: ``scipy.sparse.csgraph.maximum_flow``), the matching for being one,
and against NetworkX's answer where NetworkX finished.

Inputs (seeded, from :mod:`gpumatch.generators`): matching on random
bipartite graphs with 5 edges per top node (``random_bipartite(k, k, 5)``,
nodes labelled ``("r", i)`` / ``("c", j)``), flow on Washington random level
graphs (``washington_rlg(rows, cols, 1000)``, integer capacities, a
``DiGraph`` with integer nodes).
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import platform
import signal
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import networkx as nx  # noqa: E402

from gpumatch import _backend, generators  # noqa: E402

# size label -> (random_bipartite k, washington_rlg (rows, cols)): about that many edges
SIZES = {
    "10k": (2_000, (32, 100)),
    "100k": (20_000, (100, 300)),
    "1M": (200_000, (320, 1000)),
}


class _OverBudget(Exception):
    pass


def _alarm(signum, frame):
    raise _OverBudget


def timed(fn, budget=None):
    """(seconds, result); result None when stopped by the budget."""
    if budget:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, budget)
    t0 = time.perf_counter()
    try:
        out = fn()
    except _OverBudget:
        return time.perf_counter() - t0, None
    finally:
        if budget:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return time.perf_counter() - t0, out


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------


def matching_case(k):
    A = generators.random_bipartite(k, k, 5, seed=0).tocoo()
    G = nx.Graph()
    G.add_nodes_from(("r", i) for i in range(A.shape[0]))
    G.add_nodes_from(("c", j) for j in range(A.shape[1]))
    G.add_edges_from(zip((("r", i) for i in A.row.tolist()), (("c", j) for j in A.col.tolist())))
    top = {("r", i) for i in range(A.shape[0])}

    def call(**kw):
        return nx.bipartite.maximum_matching(G, top, **kw)

    def check(M, ref):
        assert all(M[M[u]] == u for u in M), "not a matching"
        assert all(G.has_edge(u, v) for u, v in M.items()), "a pair that is not an edge"
        assert len(M) // 2 == ref, f"size {len(M) // 2}, SciPy {ref}"

    def reference():
        from scipy.sparse.csgraph import maximum_bipartite_matching

        return int((maximum_bipartite_matching(A.tocsr(), perm_type="column") >= 0).sum())

    def same(a, b):
        return len(a) == len(b)

    return G, call, check, reference, same, f"random_bipartite({k}, {k}, 5)"


def flow_case(rows, cols):
    C, s, t = generators.washington_rlg(rows, cols, 1000, seed=0)
    C = C.tocoo()
    G = nx.DiGraph()
    G.add_nodes_from(range(C.shape[0]))
    G.add_edges_from(zip(C.row.tolist(), C.col.tolist(), ({"capacity": c} for c in C.data.tolist())))

    def call(**kw):
        return nx.maximum_flow_value(G, s, t, **kw)

    def check(value, ref):
        assert value == ref, f"flow value {value}, SciPy {ref}"

    def reference():
        from scipy.sparse.csgraph import maximum_flow

        return int(maximum_flow(sp.csr_array(C.tocsr().astype(np.int32)), s, t).flow_value)

    def same(a, b):
        return a == b

    return G, call, check, reference, same, f"washington_rlg({rows}, {cols}, 1000)"


def run_case(problem, size, args):
    k, (rows, cols) = SIZES[size]
    G, call, check, reference, same, name = matching_case(k) if problem == "matching" else flow_case(rows, cols)
    row = {"problem": problem, "input": name, "nodes": G.number_of_nodes(), "edges": G.number_of_edges()}
    ref = reference()

    from gpumatch.nx import interface

    G.__networkx_cache__.clear()
    t_conv, gg = timed(lambda: interface.convert_from_nx(G))
    if problem == "flow":
        t_caps, _ = timed(lambda: gg.capacities("capacity"))
        t_conv += t_caps
    row["conversion"] = t_conv

    G.__networkx_cache__.clear()
    t_first, ans = timed(lambda: call(backend="gpumatch"))
    check(ans, ref)
    cached = []
    for _ in range(args.repeats):
        t, ans = timed(lambda: call(backend="gpumatch"))
        check(ans, ref)
        cached.append(t)
    row["gpumatch 1st"], row["gpumatch cached"] = t_first, statistics.median(cached)

    if args.nx_budget > 0:
        t_nx, ans_nx = timed(lambda: call(), budget=args.nx_budget)
        row["networkx"] = t_nx if ans_nx is not None else None
        if ans_nx is not None:
            assert same(ans_nx, ans), "NetworkX's answer differs"
    else:
        row["networkx"] = None
    row["check"] = "ok (SciPy" + (", NetworkX)" if row["networkx"] is not None else ")")
    return row


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------


def _s(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def table(rows, budget):
    out = ["| problem | input | nodes | edges | networkx s | gpumatch 1st s | gpumatch cached s | conversion s "
           "| speed-up 1st | speed-up cached | check |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        nxs = r["networkx"]
        nxtxt = _s(nxs) if nxs is not None else (f"> {budget:g}" if budget > 0 else "not run")
        sp1 = f"{nxs / r['gpumatch 1st']:.1f}x" if nxs else "-"
        sp2 = f"{nxs / r['gpumatch cached']:.1f}x" if nxs else "-"
        out.append(f"| {r['problem']} | `{r['input']}` | {r['nodes']:,} | {r['edges']:,} | {nxtxt} | "
                   f"{_s(r['gpumatch 1st'])} | {_s(r['gpumatch cached'])} | {_s(r['conversion'])} | "
                   f"{sp1} | {sp2} | {r['check']} |")
    return "\n".join(out)


def machine(solver):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    desc = f"{cpu}, {os.cpu_count()} logical CPUs"
    if solver == "cupy":
        desc += f", GPU {_backend.device_name()}"
    try:
        desc += f", load average {os.getloadavg()[0]:.1f} at start"
    except OSError:
        pass
    return desc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1M", help="comma-separated, of: " + ", ".join(SIZES))
    ap.add_argument("--problems", default="matching,flow", help="matching, flow or both")
    ap.add_argument("--solver-backend", default="auto", choices=["auto", "numpy", "cupy", "numba"],
                    help="nx.config.backends.gpumatch.backend (default auto)")
    ap.add_argument("--repeats", type=int, default=3, help="timed cached calls, median reported (default 3)")
    ap.add_argument("--nx-budget", type=float, default=1800.0,
                    help="seconds NetworkX may take per call before it is stopped (0: do not run it)")
    ap.add_argument("--out", help="also write the report (Markdown) to this file")
    args = ap.parse_args(argv)

    if "gpumatch" not in nx.utils.backends.backends:
        sys.exit('the gpumatch NetworkX backend is not installed: pip install -e ".[networkx]"')
    warnings.filterwarnings("ignore", message="Note: conversions to backend graphs are saved to cache")
    solver = _backend.resolve_backend(args.solver_backend)
    nx.config.backends.gpumatch.backend = solver

    # warm-up: CUDA kernels compile (and are cached) outside the timings
    matching_case(200)[1](backend="gpumatch")
    flow_case(8, 10)[1](backend="gpumatch")

    rows = []
    for size in args.sizes.split(","):
        for problem in args.problems.split(","):
            r = run_case(problem, size.strip(), args)
            rows.append(r)
            print(f"{problem} {size}: networkx {_s(r['networkx'])} s, gpumatch 1st {_s(r['gpumatch 1st'])} s, "
                  f"cached {_s(r['gpumatch cached'])} s, conversion {_s(r['conversion'])} s", flush=True)

    import scipy

    cmd = " ".join(["python benchmarks/bench_networkx.py", *(sys.argv[1:] if argv is None else argv)])
    head = [
        f"Command: `{cmd}`",
        "",
        f"Run {datetime.date.today().isoformat()} on {machine(solver)}; gpumatch backend `{solver}`; "
        f"Python {platform.python_version()}, NetworkX {nx.__version__}, NumPy {np.__version__}, "
        f"SciPy {scipy.__version__}.",
        "",
    ]
    report = "\n".join(head) + "\n" + table(rows, args.nx_budget) + "\n"
    print()
    print(report)
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(report)


if __name__ == "__main__":
    main()

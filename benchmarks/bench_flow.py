#!/usr/bin/env python3
"""Benchmark of gpumatch.flow.maximum_flow (push-relabel) against scipy's Dinic.

    python benchmarks/bench_flow.py                      # all cases, both layouts
    python benchmarks/bench_flow.py --cases rand200k,genrmf_32x256 --repeats 5

Cases: the unit-capacity networks (s -> rows -> cols -> t) of six bipartite
families and four DIMACS-style capacity networks, as in the max-flow issue,
with the published GPU times of ECL-MaxFlow for reference.  The GPU time is
the median of ``--repeats`` runs of the solver after one warm-up run
(arrays already on the device, two phases, the per-arc flow included; the
conversion to a sparse matrix is not timed).  scipy's Dinic and the NumPy
backend run in child processes in parallel, stopped at their time-outs.
Every GPU result is certified with gpumatch.testing.check_flow.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import pathlib
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

# name: (builder, published GPU seconds)
CASES = {
    "rand200k_d5": ("bip", ("random_bipartite", (200_000, 200_000, 5, 0)), 0.078),
    "genrmf_32x256": ("net", ("genrmf", (32, 256, 100, 10000, 0)), 1.15),
    "rlg_512x1024": ("net", ("washington_rlg", (512, 1024, 10000, 0)), 1.14),
    "rand1M_d5": ("bip", ("random_bipartite", (1_000_000, 1_000_000, 5, 0)), 0.32),
    "delaunay1M": ("bip", ("delaunay", (1_000_000, 0)), 0.85),
    "rmat20_8": ("bip", ("rmat", (20, 8)), 3.5),
    "rect1Mx500k_d3": ("bip", ("random_bipartite", (1_000_000, 500_000, 3, 0)), 0.82),
    "grid1000_drop10": ("bip", ("grid", (1000, 1000, 0.1, 0)), 3.7),
    "genrmf_64x64": ("net", ("genrmf", (64, 64, 100, 10000, 0)), 2.15),
    "rlg_1024x1024": ("net", ("washington_rlg", (1024, 1024, 10000, 0)), 1.25),
}


def build(name):
    """(capacity csr int64, source, sink) of a case, on the host."""
    from gpumatch import csr, generators

    kind, (fn, args), _ = CASES[name]
    out = getattr(generators, fn)(*args)
    if kind == "net":
        C, s, t = out
        return sp.csr_matrix(C).astype(np.int64), int(s), int(t)
    A = sp.csr_matrix(out)
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.shape)
    V = ip.shape[0] - 1
    return sp.csr_matrix((cap, ix, ip), shape=(V, V)), int(s), int(t)


def _child(name, what, q):
    try:
        C, s, t = build(name)
        t0 = time.perf_counter()
        if what == "scipy":
            from scipy.sparse.csgraph import maximum_flow

            v = maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value
        else:
            from gpumatch.flow._maxflow import _solve

            v = _solve(C.indptr, C.indices, C.data, s, t, "numpy")[0]
        q.put((name, what, time.perf_counter() - t0, int(v)))
    except Exception as exc:  # pragma: no cover - reported in the table
        q.put((name, what, None, repr(exc)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--layouts", default="reverse_csr,bcsr")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scipy-timeout", type=float, default=60.0)
    ap.add_argument("--numpy-cases", default="rand200k_d5,genrmf_32x256,rlg_512x1024")
    ap.add_argument("--numpy-timeout", type=float, default=120.0)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--tile", type=int, default=None)
    ap.add_argument("--cycles", type=int, default=None)
    ap.add_argument("--tuning", default="", help="extra TUNING entries, e.g. batch=32,freq=2000,adaptive=0")
    ap.add_argument("--variants", default="",
                    help="';'-separated TUNING variants also timed (first layout), e.g. 'greedy=0;cycles=16'")
    ap.add_argument("--variant-cases", default="", help="cases the variants run on (default: all)")
    args = ap.parse_args(argv)
    names = [c for c in args.cases.split(",") if c]
    layouts = [x for x in args.layouts.split(",") if x]
    bad = [x for x in layouts if x not in ("reverse_csr", "bcsr")]
    if bad:
        ap.error(f"unknown layout(s) {bad}: choose from reverse_csr, bcsr")

    # CPU references first, in child processes (before CUDA is initialised here)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = []
    if args.scipy_timeout > 0:
        procs += [(n, "scipy", ctx.Process(target=_child, args=(n, "scipy", q))) for n in names]
    numpy_names = [n for n in args.numpy_cases.split(",") if n in names]
    if args.numpy_timeout > 0:
        procs += [(n, "numpy", ctx.Process(target=_child, args=(n, "numpy", q))) for n in numpy_names]
    t_start = time.perf_counter()
    for *_, p in procs:
        p.start()

    from gpumatch import _backend
    from gpumatch.flow import _maxflow
    from gpumatch.testing import check_flow

    _maxflow.TUNING["max_iterations"] = 300_000
    if args.tile:
        _maxflow.TUNING["tile"] = args.tile
    if args.cycles:
        _maxflow.TUNING["cycles"] = args.cycles
    def parse(spec):
        out = {}
        for item in filter(None, spec.split(",")):
            key, val = item.split("=")
            out[key] = None if val == "none" else int(val)
        return out

    _maxflow.TUNING.update(parse(args.tuning))
    variants = [v for v in args.variants.split(";") if v]
    variant_cases = set(filter(None, args.variant_cases.split(","))) or set(names)
    gpu = _backend.cupy_available()
    rows = []
    for name in names:
        C, s, t = build(name)
        V, E = C.shape[0], C.nnz
        row = {"case": name, "V": V, "E": E, "published": CASES[name][2]}
        if gpu:
            cp = _backend.cp
            ip, ix, cap = cp.asarray(C.indptr), cp.asarray(C.indices), cp.asarray(C.data)
            for layout in layouts:
                _maxflow._solve(ip, ix, cap, s, t, "cupy", layout)  # warm-up (compiles)
                times = []
                for _ in range(args.repeats):
                    cp.cuda.get_current_stream().synchronize()
                    t0 = time.perf_counter()
                    value, arc_flow, side, stats = _maxflow._solve(ip, ix, cap, s, t, "cupy", layout)
                    cp.cuda.get_current_stream().synchronize()
                    times.append(time.perf_counter() - t0)
                ok = "-"
                if not args.no_check:
                    f = cp.asnumpy(arc_flow)
                    rr = np.repeat(np.arange(V), np.diff(C.indptr))
                    F = sp.coo_matrix((np.concatenate([f, -f]), (np.concatenate([rr, C.indices]),
                                                                  np.concatenate([C.indices, rr]))),
                                      shape=(V, V)).tocsr()
                    try:
                        check_flow(C, s, t, F, int(value))
                        ok = "ok"
                    except AssertionError as exc:
                        ok = f"FAIL {str(exc)[:60]}"
                row[layout] = statistics.median(times)
                row[layout + "_stats"] = (stats["iterations"], stats["phase2_iterations"], stats["global_relabels"],
                                          stats["relabel_period"], {k: round(v, 3) for k, v in stats["time"].items()})
                row[layout + "_check"] = ok
                row["value"] = int(value)
            for spec in variants if name in variant_cases else ():
                saved = dict(_maxflow.TUNING)
                _maxflow.TUNING.update(parse(spec))
                try:
                    _maxflow._solve(ip, ix, cap, s, t, "cupy", layouts[0])
                    times = []
                    for _ in range(args.repeats):
                        cp.cuda.get_current_stream().synchronize()
                        t0 = time.perf_counter()
                        value, _, _, stats = _maxflow._solve(ip, ix, cap, s, t, "cupy", layouts[0])
                        cp.cuda.get_current_stream().synchronize()
                        times.append(time.perf_counter() - t0)
                    print(f"#   variant {spec}: {statistics.median(times):.4f}s value={int(value)} "
                          f"(it={stats['iterations']}, p2={stats['phase2_iterations']}, gr={stats['global_relabels']}) "
                          f"{ {k: round(v, 3) for k, v in stats['time'].items()} }", flush=True)
                finally:
                    _maxflow.TUNING.clear()
                    _maxflow.TUNING.update(saved)
        rows.append(row)
        print(f"# {name}: V={V} E={E} " + " ".join(
            f"{lay}={row.get(lay, float('nan')):.4f}s[{row.get(lay + '_check')}] {row.get(lay + '_stats')}"
            for lay in layouts), flush=True)

    # collect the CPU references
    ref = {}
    for n, what, p in procs:
        left = max(0.0, (args.scipy_timeout if what == "scipy" else args.numpy_timeout) - (time.perf_counter() - t_start))
        p.join(left)
        if p.is_alive():
            p.terminate()
            p.join()
    while not q.empty():
        n, what, tm, v = q.get()
        ref[(n, what)] = (tm, v)

    def fmt(x):
        return "-" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))

    print()
    print("| case | V | E | " + " | ".join(f"GPU {lay} (s)" for lay in layouts)
          + " | NumPy (s) | scipy Dinic (s) | speed-up vs scipy | published GPU (s) | check |")
    print("|" + "---|" * (8 + len(layouts)))
    for row in rows:
        n = row["case"]
        sc = ref.get((n, "scipy"))
        npy = ref.get((n, "numpy"))
        best = min((row[lay] for lay in layouts if lay in row), default=None)
        if sc and sc[0] is not None:
            sc_s = f"{sc[0]:.2f}" + ("" if sc[1] == row.get("value") else f" (value {sc[1]}!)")
            speed = f"{sc[0] / best:.0f}x" if best else "-"
        else:
            sc_s = f"> {args.scipy_timeout:.0f}" if n in names and args.scipy_timeout > 0 else "-"
            speed = f"> {args.scipy_timeout / best:.0f}x" if best and args.scipy_timeout > 0 else "-"
        if npy and npy[0] is not None:
            np_s = f"{npy[0]:.2f}"
        elif n in numpy_names and args.numpy_timeout > 0:
            np_s = f"> {args.numpy_timeout:.0f}"
        else:
            np_s = "-"
        print(f"| {n} | {row['V']} | {row['E']} | " + " | ".join(fmt(row.get(lay)) for lay in layouts)
              + f" | {np_s} | {sc_s} | {speed} | {row['published']} | "
              + ",".join(str(row.get(lay + "_check")) for lay in layouts) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

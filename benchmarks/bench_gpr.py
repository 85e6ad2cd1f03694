#!/usr/bin/env python3
"""Benchmark of G-PR matching (gpumatch.matching) against scipy.

    python benchmarks/bench_gpr.py                  # all inputs, GPU if present
    python benchmarks/bench_gpr.py --only random200k --numpy
    python benchmarks/bench_gpr.py --scipy-all      # also run scipy on meshes/grids (minutes)

For each seeded generated input: scipy's maximum_bipartite_matching time
(skipped on Delaunay/grid unless --scipy-all: scipy issue #26147), the GPU
solve time (graph already on the device, result left on the device; median
of --repeats after one warm-up, CUDA-synchronised), the host->device transfer
time reported separately, optionally the NumPy backend time, and a check of
every result (valid matching and a König cover of the same size).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm  # noqa: E402

from gpumatch import _backend, generators  # noqa: E402
from gpumatch.matching import bipartite_matching  # noqa: E402
from gpumatch.testing import check_matching  # noqa: E402

INPUTS = {
    "random1M": (lambda: generators.random_bipartite(1_000_000, 1_000_000, 5, seed=1), True),
    "delaunay1M": (lambda: generators.delaunay(1_000_000, seed=1), False),
    "rmat20": (lambda: generators.rmat(20, 8, seed=1), True),
    "rect1Mx500k": (lambda: generators.random_bipartite(1_000_000, 500_000, 3, seed=1), True),
    "grid1000": (lambda: generators.grid(1000, 1000, 0.1, seed=1), False),
    "random200k": (lambda: generators.random_bipartite(200_000, 200_000, 5, seed=1), True),
}


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None, help="input names: " + ", ".join(INPUTS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--numpy", action="store_true", help="also time the NumPy backend")
    ap.add_argument("--numpy-max-nnz", type=int, default=10**8, help="skip NumPy above this many edges")
    ap.add_argument("--scipy-all", action="store_true", help="run scipy on meshes and grids too")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--relabel-k", type=float, default=0.7)
    ap.add_argument("--shrink", type=int, default=512)
    args = ap.parse_args(argv)
    gpu = _backend.cupy_available()
    print(f"device: {_backend.device_name() or 'none (NumPy only)'}")
    rows = []
    for name in args.only or list(INPUTS):
        make, scipy_ok = INPUTS[name]
        t_gen, A = timed(make)
        line = {"input": name, "shape": A.shape, "nnz": A.nnz, "gen_s": t_gen}
        ref = None
        if scipy_ok or args.scipy_all:
            t_sc, perm = timed(lambda: scipy_mbm(A, perm_type="row"))
            ref = int((perm >= 0).sum())
            line["scipy_s"] = t_sc
        kw = dict(relabel_k=args.relabel_k, shrink_threshold=args.shrink)
        if gpu:
            cp = _backend.cp
            import cupyx.scipy.sparse as cpx

            t0 = time.perf_counter()
            G = cpx.csr_matrix(A)
            cp.cuda.get_current_stream().synchronize()
            line["h2d_s"] = time.perf_counter() - t0
            res = bipartite_matching(G, backend="cupy", **kw)  # warm-up (compiles kernels)
            times = []
            for _ in range(args.repeats):
                cp.cuda.get_current_stream().synchronize()
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                res = bipartite_matching(G, backend="cupy", **kw)
                stop.record()
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
                if not args.no_check:
                    check_matching(A, cp.asnumpy(res.col_to_row), expected_size=ref)
            line["gpu_s"] = statistics.median(times)
            line["gpu_size"] = res.size
            line["gpu_stats"] = res.stats
        if args.numpy and A.nnz <= args.numpy_max_nnz:
            t_np, res_np = timed(lambda: bipartite_matching(A, backend="numpy", **kw))
            line["numpy_s"] = t_np
            line["numpy_stats"] = res_np.stats
            if not args.no_check:
                check_matching(A, res_np.col_to_row, expected_size=ref)
        rows.append(line)
        _print_line(line)
    print()
    print(f"{'input':<13}{'m x n':>20}{'nnz':>10}{'scipy s':>10}{'gpu ms':>10}{'x scipy':>9}"
          f"{'h2d ms':>9}{'numpy s':>9}{'np/scipy':>9}")
    for r in rows:
        sc, g, npy = r.get("scipy_s"), r.get("gpu_s"), r.get("numpy_s")
        print(f"{r['input']:<13}{'%d x %d' % r['shape']:>20}{r['nnz']:>10}"
              f"{_f(sc, 1, '.2f'):>10}{_f(g, 1e3, '.1f'):>10}{_f(sc / g if sc and g else None, 1, '.0f'):>9}"
              f"{_f(r.get('h2d_s'), 1e3, '.1f'):>9}{_f(npy, 1, '.2f'):>9}"
              f"{_f(npy / sc if sc and npy else None, 1, '.2f'):>9}")
    return 0


def _f(x, scale, fmt):
    return "-" if x is None else format(x * scale, fmt)


def _print_line(line):
    short = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in line.items()
             if not k.endswith("stats")}
    print(short, flush=True)
    for k in ("gpu_stats", "numpy_stats"):
        if k in line:
            print("   ", k, {a: (round(b, 4) if isinstance(b, float) else b) for a, b in line[k].items()},
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())

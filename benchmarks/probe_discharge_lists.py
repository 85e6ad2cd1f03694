#!/usr/bin/env python3
"""Worklist lengths and the time per discharge iteration in forced dynamic max-flow repairs (CuPy, needs a GPU).

    python benchmarks/probe_discharge_lists.py washington_rlg 1e-3 dec,mixed
    python benchmarks/probe_discharge_lists.py genrmf 1e-4 dec,mixed "discharge_loop=512,discharge_coop=0"

Builds the benchmark's network (``bench_dynamic.flow_cases``), solves it
with :class:`gpumatch.MaxFlowSolver` (``time_budget=None``), then repairs
three batches of each kind of the given fraction of the arcs, drawn as
``bench_dynamic.py`` draws them.  Every call of the discharge launcher is
timed between device syncs; each repair prints its time, its discharge
calls, iterations and their time, then per class of worklist length the
calls, iterations, time, microseconds per iteration and how many calls
ran in the one-block loop.  The optional last argument overrides
``REPAIR`` keys (``key=value,...``; the second command above is the
setting before round 21: the one-block loop up to 512 vertices and no
cooperative discharge).  The syncs add some microseconds per call.
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

EDGES = [0, 1, 8, 32, 64, 128, 256, 512, 1024, 4096, 1 << 40]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    import cupy as cp

    import bench_dynamic as B
    from gpumatch.flow import MaxFlowSolver

    name = argv[0] if argv else "washington_rlg"
    frac = float(argv[1]) if len(argv) > 1 else 1e-3
    kinds = (argv[2] if len(argv) > 2 else "dec,mixed").split(",")
    if len(argv) > 3:
        B.apply_overrides(argv[3])
    cases = {n: (C, s, t) for n, C, s, t, _ in B.flow_cases(False)}
    C0, s, t = cases[name]
    sync = cp.cuda.Device().synchronize
    C = C0.copy()
    solver = MaxFlowSolver(B.to_dev(C, "cupy"), s, t, backend="cupy", rebuild_fraction=1.0, time_budget=None)
    sync()
    t0 = time.perf_counter()
    solver.solve()
    sync()
    print(f"first solve (from scratch) {1e3 * (time.perf_counter() - t0):.1f} ms")
    K = solver._K
    log = []

    class Timed:
        """The launcher module, with `discharge` timed between syncs."""

        def __getattr__(self, attr):
            return getattr(K, attr)

        def discharge(self, ctx, st, work, it, target, other, hlimit, k=1):
            n = int(work.shape[0])
            loop = (ctx.k_discharge_coop is None and ctx.k_discharge_loop is not None
                    and n <= ctx.discharge_loop_max)
            sync()
            t0 = time.perf_counter()
            out = K.discharge(ctx, st, work, it, target, other, hlimit, k)
            sync()
            log.append((n, out[1], time.perf_counter() - t0, loop))
            return out

    solver._K = Timed()
    for kind, b, T, res in B.forced_repairs(solver, C, kinds, frac, before=log.clear):
        a = np.array(log, dtype=float).reshape(-1, 4)
        print(f"{name} {kind} {frac} b{b}: repair {T * 1e3:.1f} ms, discharge calls {len(log)}, "
              f"iters {int(a[:, 1].sum())}, time {a[:, 2].sum() * 1e3:.1f} ms, "
              f"relabels {res.stats.get('global_relabels')}", flush=True)
        for lo, hi in zip(EDGES[:-1], EDGES[1:]):
            m = (a[:, 0] > lo) & (a[:, 0] <= hi)
            if m.any():
                it, tm = a[m, 1].sum(), a[m, 2].sum()
                print(f"   n in ({lo},{hi}]: calls {int(m.sum())}, iters {int(it)}, {tm * 1e3:.1f} ms, "
                      f"{tm * 1e6 / max(it, 1):.1f} us/iter, loop {int(a[m, 3].sum())}", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the relabels of forced dynamic max-flow repairs cost per BFS level (CuPy, needs a GPU).

    python benchmarks/probe_bfs_levels.py genrmf 1e-4
    python benchmarks/probe_bfs_levels.py washington_rlg 1e-3

Builds the benchmark's network (``bench_dynamic.flow_cases``), solves it
with :class:`gpumatch.MaxFlowSolver` (``time_budget=None``), then repairs
three decreases and three mixed batches of the given fraction of the arcs,
drawn as ``bench_dynamic.py`` draws them.  Every BFS of a relabel is timed
between device syncs.  Each repair prints its time, its BFS count, their
time and levels, and the microseconds per level over the BFS of more than
8 levels.  It runs three times: with ``TUNING["bfs_coop"]`` on (each BFS in
one cooperative launch), off (a launch per level, or the one-block loop
for short frontiers), and on again.  The syncs add some microseconds per BFS.
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    import cupy as cp

    import bench_dynamic as B
    from gpumatch.flow import MaxFlowSolver, _maxflow

    name = argv[0] if argv else "genrmf"
    frac = float(argv[1]) if len(argv) > 1 else 1e-4
    cases = {n: (C, s, t) for n, C, s, t, _ in B.flow_cases(False)}
    C0, s, t = cases[name]
    sync = cp.cuda.Device().synchronize
    for coop in (True, False, True):
        _maxflow.TUNING["bfs_coop"] = coop
        C = C0.copy()
        solver = MaxFlowSolver(B.to_dev(C, "cupy"), s, t, backend="cupy", rebuild_fraction=1.0, time_budget=None)
        solver.solve()
        sync()
        log = []
        bfs = solver._bfs

        def timed(ctx, st, frontier, level, watch=None):
            sync()
            t0 = time.perf_counter()
            out = bfs(ctx, st, frontier, level, watch)
            sync()
            log.append((out[0] - level, time.perf_counter() - t0))
            return out

        solver._bfs = timed
        for kind, b, T, res in B.forced_repairs(solver, C, ("dec", "mixed"), frac, before=log.clear):
            lv = np.array([x[0] for x in log], dtype=np.int64)
            tm = np.array([x[1] for x in log])
            small = lv <= 8
            print(f"coop={coop} {name} {kind} {frac} b{b}: repair {T * 1e3:.1f} ms, BFS {len(log)} "
                  f"({tm.sum() * 1e3:.1f} ms, {lv.sum()} levels, "
                  f"{tm[~small].sum() * 1e6 / max(1, lv[~small].sum()):.2f} us/level over BFS of >8 levels; "
                  f"{small.sum()} BFS of <=8 levels {tm[small].sum() * 1e3:.1f} ms), "
                  f"phases {res.stats.get('phases')}", flush=True)


if __name__ == "__main__":
    main()

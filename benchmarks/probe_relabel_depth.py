#!/usr/bin/env python3
"""How deep the relabels of a dynamic max-flow repair go (NumPy backend, no GPU needed).

    python benchmarks/probe_relabel_depth.py                  # GENRMF(32, 256), 0.01 % decreases
    python benchmarks/probe_relabel_depth.py --frac 1e-4 --kind mixed --variant "period_depth=1"

Builds the benchmark's GENRMF network (``bench_dynamic.flow_cases``), solves
it with :class:`gpumatch.MaxFlowSolver` on NumPy, then repairs ``--batches``
batches drawn as ``bench_dynamic.py`` draws them (``new_capacities``) and
prints, for each repair, its discharge iterations, global relabels and
phases, and one tuple per BFS of a relabel: whether it started from the
far targets, the levels it ran, whether it stopped early, and the lengths
of its watch list and of its first frontier.  Every value is checked
against a solve from scratch.  The NumPy twin's schedule is not the GPU's
(its flows circulate less, and the relabel-ratio rule is timed), so its
counts show the shape of a repair, not the H100's numbers.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frac", type=float, default=1e-4, help="batch size as a fraction of the arcs")
    ap.add_argument("--kind", default="dec", choices=("inc", "dec", "mixed"))
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", default="", help="overrides as in bench_dynamic.py --flow-repair (one set)")
    args = ap.parse_args(argv)

    import bench_dynamic as B
    from gpumatch import generators as G
    from gpumatch.flow import MaxFlowSolver, maximum_flow

    B.apply_overrides(args.variant)
    C, s, t = G.genrmf(32, 256, 100, 10000, seed=0)
    C = sp.csr_matrix(C).astype(np.int64)
    coo_r = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
    solver = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=1.0, time_budget=None)
    log = []
    bfs = solver._bfs

    def logged(ctx, st, frontier, level, watch=None):
        out = bfs(ctx, st, frontier, level, watch)
        log.append((level >= solver._far_level, out[0] - level, out[1], 0 if watch is None else len(watch),
                    len(frontier)))
        return out

    solver._bfs = logged
    solver.solve()
    frames = solver._side.reshape(256, -1).mean(axis=1)
    print(f"# genrmf(32, 256): source side = frames 0..{int(np.nonzero(frames > 0.5)[0].max())}"
          f" of 256 (share of each frame on it, every 16th: {np.round(frames[::16], 2).tolist()})")
    rng = np.random.default_rng(args.seed)
    for b in range(args.batches):
        k = max(1, int(round(args.frac * C.nnz)))
        pos = rng.choice(C.nnz, size=k, replace=False)
        new = B.new_capacities(rng, C.data[pos], args.kind, 10000)
        C.data[pos] = new
        del log[:]
        solver.update_capacities(coo_r[pos], C.indices[pos], new)
        res = solver.solve()
        ok = int(res.flow_value) == int(maximum_flow(C, s, t, backend="numpy").flow_value)
        st = res.stats
        print(f"batch {b} ({k} arcs, {args.kind}): value ok {ok}, iterations {st['iterations']}, "
              f"relabels {st['global_relabels']}, phases {st.get('phases')}")
        print(f"   BFS (far, levels, stopped early, watched, frontier): {log}", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How far local searches from the kept cut would go where a repair needs a new cut (NumPy, any machine).

    python benchmarks/probe_local_cut.py                           # unit network, mixed batches
    python benchmarks/probe_local_cut.py --cases washington --kinds dec,mixed

When a repaired flow's value falls short of the kept cut's capacity,
:class:`gpumatch.MaxFlowSolver` finds a new minimum cut with a BFS from the
sink over the whole network.  A cheaper candidate would start from the
kept cut ``S`` and its *open* arcs (residual arcs from ``S`` to ``T``):

* *grow*: ``Y``, what the open arcs' heads reach inside ``T``; if the sink
  is not in ``Y``, ``S + Y`` has no residual arc out of it and is the
  source side of a minimum cut;
* *shrink*: ``Z``, what reaches the open arcs' tails inside ``S``; if the
  source is not in ``Z``, ``S - Z`` is one.

This probe replays the batches of ``bench_dynamic.py --only flow`` (same
seed, order of kinds and sizes) on the NumPy backend and, before each BFS
for a new cut, prints both searches' levels and sizes, whether each one
hits its terminal (then it proves nothing), and the sink BFS's levels and
reach.  Each kind starts from a solve from scratch of the capacities the
benchmark has then (its batches of 1 % and 10 % are solved from scratch
too), so the flows are the NumPy twin's, not the GPU's: the sizes tell
whether a local search could stay small, not what it would cost there.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def _reach(V, src, dst, seeds, allowed):
    """BFS along the arcs ``src -> dst`` from `seeds`, entering only `allowed`:
    ``(levels, reached mask, frontier sizes)``."""
    G = sp.csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(V, V))
    seen = np.zeros(V, dtype=bool)
    seen[seeds] = True
    front, widths = np.unique(seeds), []
    while front.size:
        widths.append(int(front.size))
        nb = np.unique(G[front].indices)
        nb = nb[allowed[nb] & ~seen[nb]]
        seen[nb] = True
        front = nb
    return len(widths), seen, widths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="unit", help="comma-separated prefixes of the networks")
    ap.add_argument("--kinds", default="mixed", help="comma-separated kinds of batch")
    ap.add_argument("--up-to", type=float, default=0.0011, help="batches of at most this fraction of the arcs")
    args = ap.parse_args(argv)

    import bench_dynamic as B
    from gpumatch.flow import _dynamic as D

    kinds = set(args.kinds.split(","))
    sink_bfs = D.MaxFlowSolver._sink_bfs
    log = []

    def probe(self):
        S = np.asarray(self._side).copy()
        E, V = self._E, self._V
        tail, head = self._tail_p[:E], self._head_p[:E]
        cap, flow = self._cap_p[:E], self._L["flow"]
        fwd, back = cap - flow > 0, flow > 0
        src = np.concatenate([tail[fwd], head[back]])       # residual arcs src -> dst
        dst = np.concatenate([head[fwd], tail[back]])
        open_ = S[src] & ~S[dst]
        ly, Y, wy = _reach(V, src, dst, dst[open_], ~S)
        lz, Z, wz = _reach(V, dst, src, src[open_], S)
        side = sink_bfs(self)
        lt, R, _ = _reach(V, dst, src, np.array([self.sink]), np.ones(V, dtype=bool))
        log.append(f"open arcs {int(open_.sum())}; grow: {ly} levels, {int(Y.sum())} vertices, sink reached "
                   f"{bool(Y[self.sink])}, first widths {wy[:6]}; shrink: {lz} levels, {int(Z.sum())} vertices, "
                   f"source reached {bool(Z[self.source])}, first widths {wz[:6]}; sink BFS: {lt} levels, reaches "
                   f"{int(R.sum())}; |S| {int(S.sum())} -> {int(np.asarray(side).sum())}")
        return side

    D.MaxFlowSolver._sink_bfs = probe
    for name, C, s, t, batches in B.flow_replay([c for c in args.cases.split(",") if c]):
        solver = None
        for kind, frac, rep, rows, cols, new in batches:
            if kind not in kinds or frac > args.up_to:
                solver = None       # (C follows every batch; the next kind starts from scratch)
                continue
            if solver is None:
                t0 = time.perf_counter()
                solver = D.MaxFlowSolver(C.copy(), s, t, backend="numpy", time_budget=None)
                solver.solve()
                print(f"# {name} {kind}: solve from scratch {time.perf_counter() - t0:.1f} s", flush=True)
            del log[:]
            solver.update_capacities(rows, cols, new)
            st = solver.solve().stats
            print(f"## {name} {kind} {frac:g} rep{rep}: cut {st.get('cut')}", flush=True)
            for line in log:
                print("   " + line, flush=True)


if __name__ == "__main__":
    main()

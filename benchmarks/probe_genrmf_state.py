#!/usr/bin/env python3
"""Where the benchmark's GENRMF repairs have to move flow, from a given state (CuPy, needs a GPU).

    python benchmarks/probe_genrmf_state.py --watch mixed:0.001:1,mixed:0.001:2
    python benchmarks/probe_genrmf_state.py --scratch-at inc:0.001:1,mixed:0.0001:1 --watch mixed:0.001:1

Replays the GENRMF flow batches of ``bench_dynamic.py --only flow`` (same
seed, order of kinds and sizes, so the same arcs and capacities; the other
networks' batches are drawn and skipped) on a
:class:`gpumatch.MaxFlowSolver` with ``time_budget=None``: every batch is
repaired to its end, except those of ``--scratch-at``, which are solved
from scratch, as a budgeted benchmark run does with the repairs it
abandoned (so that the later repairs start from the flows that run's
repairs started from), and those above the solver's ``rebuild_fraction``.
Batches are ``kind:fraction:rep`` triples, as ``trace_dynamic.py`` prints
them.

For each batch of ``--watch`` it prints, with the network's frames (the
GENRMF network is ``b`` frames of ``a x a`` grids in series, so all the
flow crosses every frame boundary):

* the four frame boundaries of least capacity (the minimum cut's is the
  first) and where the kept cut lies;
* the excesses and deficits that the update left, the largest with their
  frame and side of the kept cut;
* what is left of them after the detour pass, and at the start of each
  push-relabel phase;
* the heights of the excess after the first three relabels of each phase
  (the length of the residual paths it still has to go);

and then the repair's time (the probe's read-backs included) and phases.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

#: the benchmark's GENRMF network (``bench_dynamic.flow_cases``): frames of A x A, FRAMES of them
A, FRAMES = 32, 256
FRAME = A * A
#: whether the wrapped steps print (only in the repairs of the watched batches)
_ON = [False]


def _boundaries(C):
    """Capacity of each frame boundary k -> k + 1 (host CSR)."""
    coo = C.tocoo()
    inter = (coo.col // FRAME) == (coo.row // FRAME) + 1
    return np.bincount(coo.row[inter] // FRAME, weights=coo.data[inter], minlength=FRAMES - 1)


def _imbalances(tag, excess, side, n=6):
    """One line: the excesses and deficits of `excess` (terminals left out)
    by size, each as (frame, units, side of the kept cut)."""
    import cupy as cp

    ex = cp.asnumpy(excess).copy()
    ex[[0, FRAMES * FRAME - 1]] = 0
    side = cp.asnumpy(side)
    pos, neg = np.nonzero(ex > 0)[0], np.nonzero(ex < 0)[0]

    def listed(vs):
        return [(int(v // FRAME), int(abs(ex[v])), "S" if side[v] else "T") for v in vs[np.argsort(-abs(ex[vs]))[:n]]]
    print(f"   [{tag}] excess at {pos.shape[0]} vertices, {int(ex[pos].sum())} units: {listed(pos)}; "
          f"deficits at {neg.shape[0]}, {int(-ex[neg].sum())} units: {listed(neg)}", flush=True)


def _instrument(D):
    """Print the imbalances after the detour pass and at each phase's
    start, and the excess's heights after a phase's first three relabels."""
    import cupy as cp

    run, detour, relabel = D._Phase.run, D.MaxFlowSolver._detour_pass, D._Phase.relabel
    seen = {}

    def traced_run(self, before=None):
        if _ON[0]:
            _imbalances(f"phase {self.name} starts", self.st["excess"], self.s._side)
        return run(self, before)

    def traced_detour(self, *a, **k):
        out = detour(self, *a, **k)
        if _ON[0]:
            _imbalances("after the detour pass", self._excess, self._side)
        return out

    def traced_relabel(self, force_full=False):
        out = relabel(self, force_full)
        if not _ON[0]:
            return out
        n = seen.get(id(self), 0)
        seen[id(self)] = n + 1
        if n < 3:
            ex = cp.asnumpy(self.st["excess"]).copy()
            ex[[0, FRAMES * FRAME - 1]] = 0
            h = cp.asnumpy(self.st["height"])
            side = cp.asnumpy(self.s._side)
            xs = np.nonzero(ex > 0)[0][:10]
            print(f"   [phase {self.name} relabel {n}] excess (frame, units, height, side): "
                  f"{[(int(x // FRAME), int(ex[x]), int(h[x]), 'S' if side[x] else 'T') for x in xs]}", flush=True)
        return out

    D._Phase.run, D.MaxFlowSolver._detour_pass, D._Phase.relabel = traced_run, traced_detour, traced_relabel


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch-at", default="", help="comma-separated 'kind:frac:rep' batches solved from scratch")
    ap.add_argument("--watch", default="mixed:0.001:1", help="comma-separated 'kind:frac:rep' batches to probe")
    args = ap.parse_args(argv)

    import cupy as cp

    import bench_dynamic as B
    from gpumatch.flow import _dynamic as D

    scratch_at, watch = B.parse_batches(args.scratch_at), B.parse_batches(args.watch)

    _, C, s, t, batches = next(B.flow_replay(("genrmf",)))
    assert C.shape[0] == FRAMES * FRAME
    solver = D.MaxFlowSolver(B.to_dev(C, "cupy"), s, t, backend="cupy", time_budget=None)
    solver.solve()
    last = max(watch, default=None, key=lambda b: (B.KINDS.index(b[0]), b[1], b[2]))
    _instrument(D)
    for kind, frac, rep, rows, cols, new in batches:
        key = (kind, frac, rep)
        solver.update_capacities(cp.asarray(rows), cp.asarray(cols), cp.asarray(new))
        if key not in watch:
            if key in scratch_at:
                B.solve_from_scratch(solver)
            else:
                solver.solve()
            if key == last:
                break
            continue
        side = cp.asnumpy(solver._side)
        whole = int(np.argmin(np.bincount(np.nonzero(side)[0] // FRAME, minlength=FRAMES) == FRAME))
        bounds = _boundaries(C)
        least = np.argsort(bounds)[:4]
        print(f"## genrmf {kind} {frac:g} rep{rep} (scratch at {sorted(scratch_at)})", flush=True)
        print(f"   kept cut: frames 0..{whole - 1} on the source side, its capacity {solver._cap_cut} (pushes across it: "
              f"{solver._pushed}); boundaries of least capacity {[(int(k), int(bounds[k])) for k in least]}")
        _imbalances("after the update", solver._excess, solver._side)
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        _ON[0] = True
        try:
            st = solver.solve().stats
            cp.cuda.Device().synchronize()
        finally:
            _ON[0] = False
        print(f"   repair {(time.perf_counter() - t0) * 1e3:.1f} ms, value {solver._cap_cut}, cut {st.get('cut')}, "
              f"phases {st.get('phases')}", flush=True)
        if key == last:
            break


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the pushes across the kept cut of the benchmark's batches can use (CuPy, needs a GPU).

    python benchmarks/probe_cut_pushes.py                       # RLG and GENRMF, inc and mixed batches
    python benchmarks/probe_cut_pushes.py --cases washington --kinds mixed --bound

Replays the flow batches of ``bench_dynamic.py --only flow`` (same seed,
order of kinds and sizes, so the same arcs and capacities) on a
:class:`gpumatch.MaxFlowSolver` with ``time_budget=None``.  Before each
batch of ``--kinds`` of at most ``--up-to`` of the arcs it lists the
increases of saturated arcs ``u -> v`` of the kept cut (the pushes of
``update_capacities``), each with its increase ``d``, the room of its tail
(what ``u`` can still take in from the source side) and of its head (what
``v`` can still pass on into the sink side) one to four arcs away, as
``REPAIR["push_bound"]`` counts it (``push_bound_hops`` is the number of
arcs), and, after the forced repair, how much more flow the arc carries
(``df``) and how much the value moved (``dF``).  Without ``--bound`` the
solver pushes every increase whole (``push_bound`` 0), so ``df`` shows
what a maximum flow used of the whole push.  The rooms are computed on the
host (``_dynamic._side_room``, the NumPy twin of the solver's kernel) from a
copy of the flow and excesses before the batch's other changes.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="washington,genrmf", help="comma-separated prefixes of the networks")
    ap.add_argument("--kinds", default="inc,mixed", help="comma-separated kinds of batch to list")
    ap.add_argument("--up-to", type=float, default=0.0011, help="list batches of at most this fraction of the arcs")
    ap.add_argument("--bound", action="store_true", help="keep the solver's push_bound (default: pushes go whole)")
    args = ap.parse_args(argv)

    import cupy as cp

    import bench_dynamic as B
    from gpumatch.flow import _dynamic as D

    if not args.bound:
        D.REPAIR["push_bound"] = 0
    only = [c for c in args.cases.split(",") if c]
    kinds = set(args.kinds.split(","))
    sync = cp.cuda.Device().synchronize
    for name, C, s, t, batches in B.flow_replay(only):
        sv = D.MaxFlowSolver(B.to_dev(C, "cupy"), s, t, backend="cupy", time_budget=None)
        sv.solve()
        for kind, frac, rep, rows, cols, new in batches:
            r, c, nw = cp.asarray(rows), cp.asarray(cols), cp.asarray(new)
            if frac > args.up_to or kind not in kinds:
                sv.update_capacities(r, c, nw)
                sv.solve()
                continue
            H = {key: cp.asnumpy(x) for key, x in
                 (("indptr", sv._L["indptr"]), ("in_indptr", sv._L["in_indptr"]),
                  ("in_to_out", sv._L["in_to_out"]), ("tail", sv._tail_p), ("head", sv._head_p),
                  ("cap", sv._cap_p), ("flow", sv._flow_p), ("side", sv._side), ("excess", sv._excess))}
            at = cp.asnumpy(sv._arc_of[cp.searchsorted(sv._keys, r * np.int64(sv._V) + c)])
            u, v = H["tail"][at], H["head"][at]
            old, f0 = H["cap"][at], H["flow"][at]
            push = H["side"][u] & ~H["side"][v] & (new > old) & (f0 == old)
            rows = []
            for i in np.flatnonzero(push):
                d = int(new[i] - old[i])
                rooms = [(D._side_room(H, int(u[i]), -1, h, True, d, s),
                          D._side_room(H, int(v[i]), -1, h, False, d, t)) for h in (1, 2, 3, 4)]
                rows.append((int(at[i]), d, rooms))
            v0 = int(sv.solve().flow_value)
            sync()
            t0 = time.perf_counter()
            sv.update_capacities(r, c, nw)
            res = sv.solve()
            sync()
            ms = (time.perf_counter() - t0) * 1e3
            flow = cp.asnumpy(sv._flow_p)
            items = "; ".join(f"d={d} rooms(tail, head) by hops {rooms} df={int(flow[a] - H['flow'][a])}"
                              for a, d, rooms in rows)
            print(f"## {name} {kind} {frac:g} rep{rep}: {ms:.1f} ms dF={int(res.flow_value) - v0} "
                  f"pushes {len(rows)}: {items}", flush=True)
        del sv
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()

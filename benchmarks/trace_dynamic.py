#!/usr/bin/env python3
"""Replay the flow batches of ``bench_dynamic.py`` and show where each repair spends its time (GPU).

    python benchmarks/trace_dynamic.py                                # all three networks
    python benchmarks/trace_dynamic.py --cases unit --variant "paths.few=0" --paths

The batches are those of ``bench_dynamic.py --only flow`` (same generator
seed, same order of kinds and sizes, so the same arcs and capacities), but
the solver runs with ``time_budget=None``: every repair of a batch of at
most ``--up-to`` of the arcs runs to its end (larger ones go through the
solver's usual switch to a solve from scratch, untimed).  Each such repair
prints its time, the time budget the benchmark's solver would give it
(0.25 of the fastest solve from scratch seen, with the output plan), its mode, phases and
augmenting-path passes, and a call tree of the solver's steps, each timed
between two device syncs (so the sum is above the unsynced time).
``--paths`` also prints the levels of every augmenting-path pass
(``gpumatch.flow._paths.TRACE``); ``--discharge`` prints, per repair, the
push-relabel discharge calls grouped by the kernel that ran them
(cooperative or one launch per iteration) and the length of their
worklists, with the iterations and the time per iteration, and the
duration and depth of every BFS of the relabels (each call timed between
two device syncs).  ``--variant`` overrides ``REPAIR``
keys, ``paths.*`` keys of ``_paths.LIMITS``, ``tuning.*`` keys of
``_maxflow.TUNING`` and ``small.*`` keys of ``REPAIR["small"]``, as in
``profile_dynamic.py``.  ``--scratch-at`` solves the listed batches from
scratch instead (those a budgeted benchmark run abandoned), so that the
later repairs start from the flows that run's repairs started from.
``--no-tree`` leaves the solver's steps alone
and prints the repair times alone, as the benchmark's solver sees them.
No reference solves are run: the benchmark checks the values.
"""

from __future__ import annotations

import argparse
import collections
import functools
import pathlib
import sys
import time


sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

#: the solver's steps timed in the call tree
SOLVER_STEPS = ("_repair", "_excess_phase", "_deficit_phase", "_sink_bfs", "_path_pass", "_unwind", "_far_return",
                "_sealed", "_imbalance", "_value", "_saturate_source", "_flow_matrix", "_bfs", "_excess_left",
                "_unlabeled_excess", "_signs")
PHASE_STEPS = ("run", "relabel", "_relabel_split", "_relabel_full", "_tier", "active")


def _instrument(D, cp, tree):
    """Wrap the steps above; each call appends ``(depth, tag, ms)`` to `tree`."""
    depth = [0]

    def sync():
        cp.cuda.Device().synchronize()

    def wrap(cls, name):
        f = getattr(cls, name)

        @functools.wraps(f)
        def timed(*a, **k):
            sync()
            t0, d, i = time.perf_counter(), depth[0], len(tree)
            depth[0] += 1
            tree.append(None)
            try:
                return f(*a, **k)
            finally:
                sync()
                depth[0] = d
                tag = name + (f":{a[1]}" if name == "_path_pass" else
                              f":{a[0].name}" if name in ("run", "relabel", "_relabel_split", "_relabel_full") else "")
                tree[i] = (d, tag, (time.perf_counter() - t0) * 1e3)
        setattr(cls, name, timed)

    for n in SOLVER_STEPS:
        wrap(D.MaxFlowSolver, n)
    for n in PHASE_STEPS:
        wrap(D._Phase, n)
    return sync


def _instrument_discharge(D, cp, calls, searches):
    """Wrap the CUDA discharge launcher and the solver's BFS: each call
    appends ``(list length, cooperative, iterations, seconds)`` to `calls`
    or ``(ms, levels)`` to `searches`, timed between two device syncs."""
    from gpumatch.flow import _pr_cupy as K

    def sync():
        cp.cuda.Device().synchronize()

    discharge = K.discharge

    @functools.wraps(discharge)
    def timed_discharge(ctx, st, work, it, target, other, hlimit, k=1):
        n = int(work.shape[0])
        sync()
        t0 = time.perf_counter()
        out = discharge(ctx, st, work, it, target, other, hlimit, k)
        sync()
        coop = ctx.k_discharge_coop is not None and n <= ctx.discharge_coop_max
        calls.append((n, coop, out[1], time.perf_counter() - t0))
        return out
    K.discharge = timed_discharge

    bfs = D.MaxFlowSolver._bfs

    @functools.wraps(bfs)
    def timed_bfs(self, ctx, st, frontier, level, watch=None):
        sync()
        t0 = time.perf_counter()
        out = bfs(self, ctx, st, frontier, level, watch)
        sync()
        searches.append(((time.perf_counter() - t0) * 1e3, out[0] - level))
        return out
    D.MaxFlowSolver._bfs = timed_bfs


#: upper bounds of the worklist length classes of ``--discharge``
_LIST_CLASSES = (32, 1024, 8192, 65536)


def _discharge_summary(calls):
    """One line: the discharge calls of `calls` by kernel and list length class."""
    if not calls:
        return "none"
    groups = collections.defaultdict(lambda: [0, 0, 0.0])
    for n, coop, ran, sec in calls:
        rank = next((i for i, b in enumerate(_LIST_CLASSES) if n <= b), len(_LIST_CLASSES))
        g = groups[("coop" if coop else "launches", rank)]
        g[0] += 1
        g[1] += ran
        g[2] += sec

    def size(rank):
        return f"<={_LIST_CLASSES[rank]}" if rank < len(_LIST_CLASSES) else f">{_LIST_CLASSES[-1]}"
    return "; ".join(f"{kind} list {size(rank)}: {c} calls, {it} iterations, {sec * 1e3:.1f} ms "
                     f"({sec / max(it, 1) * 1e6:.1f} us each)" for (kind, rank), (c, it, sec) in sorted(groups.items()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="unit,washington,genrmf",
                    help="comma-separated prefixes of the networks to trace (the others' batches are drawn and "
                         "skipped, so that the batches stay those of the benchmark)")
    ap.add_argument("--up-to", type=float, default=0.0011, help="trace batches of at most this fraction of the arcs")
    ap.add_argument("--variant", default="",
                    help="'key=value,...' overrides of REPAIR, paths.* LIMITS, tuning.* TUNING and small.* "
                         "REPAIR['small']")
    ap.add_argument("--paths", action="store_true", help="print the levels of every augmenting-path pass")
    ap.add_argument("--discharge", action="store_true",
                    help="per repair: discharge calls by kernel and worklist length (iterations, time per "
                         "iteration) and every relabel BFS (time, levels)")
    ap.add_argument("--scratch-at", default="",
                    help="comma-separated 'kind:frac:rep' batches solved from scratch instead (untimed), as the "
                         "benchmark does with those its time budget abandoned, so that the later repairs start "
                         "from the flows that the benchmark's repairs start from")
    ap.add_argument("--no-tree", action="store_true",
                    help="time whole repairs only: no syncs between the steps, so the times are those the "
                         "benchmark's solver would see (without its budget)")
    args = ap.parse_args(argv)

    import cupy as cp

    import bench_dynamic as B
    from gpumatch.flow import _dynamic as D, _paths as P

    B.apply_overrides(args.variant)
    if args.variant:
        print(f"# overrides {args.variant}", flush=True)
    tree = []
    if args.no_tree:
        def sync():
            cp.cuda.Device().synchronize()
    else:
        sync = _instrument(D, cp, tree)
    if args.paths:
        timed_pass = D.MaxFlowSolver._path_pass

        def traced_pass(self, name, L, excess, mask, target, other, **kw):
            P.TRACE = []
            try:
                return timed_pass(self, name, L, excess, mask, target, other, **kw)
            finally:
                rec, P.TRACE = P.TRACE, None
                side = "all" if mask is None else int(mask.sum())
                print(f"     pass {name} (mask {side}, target {target}): " +
                      "; ".join(f"{tuple(x[:5])} {x[5] * 1e3:.2f} ms" for x in rec), flush=True)
        D.MaxFlowSolver._path_pass = traced_pass

    calls, searches = [], []
    if args.discharge:
        _instrument_discharge(D, cp, calls, searches)

    only = [c for c in args.cases.split(",") if c]
    scratch_at = B.parse_batches(args.scratch_at)
    for name, C, s, t, batches in B.flow_replay(only):
        solver = D.MaxFlowSolver(B.to_dev(C, "cupy"), s, t, backend="cupy", time_budget=None)
        solver.solve()
        print(f"# {name}: fastest solve from scratch seen {solver._t_scratch * 1e3:.1f} ms, output plan "
              f"{solver._t_plan * 1e3:.1f} ms", flush=True)
        for kind, frac, rep, rows, cols, new in batches:
            r, c, nw = cp.asarray(rows), cp.asarray(cols), cp.asarray(new)
            if frac > args.up_to or (kind, frac, rep) in scratch_at:
                solver.update_capacities(r, c, nw)
                if frac <= args.up_to:
                    mode = B.solve_from_scratch(solver).stats.get("mode")
                    print(f"## {name} {kind} {frac:g} rep{rep}: from scratch ({mode})", flush=True)
                else:
                    solver.solve()
                continue
            del tree[:]
            del calls[:], searches[:]
            ms, st = B.timed_update(solver, r, c, nw, sync)
            print(f"## {name} {kind} {frac:g} rep{rep}: {ms:.1f} ms (budget {0.25 * solver._t_reference() * 1e3:.1f})"
                  f" mode {st.get('mode')} settings {st.get('repair_settings')} cut {st.get('cut')}"
                  f" fallback {st.get('fallback')} relabels {st.get('global_relabels')}"
                  f" (split {st.get('split_relabels', 0)}) phases {st.get('phases')}"
                  f" paths {[p[:5] for p in st.get('path_passes', [])]}"
                  f" detours {[d[:6] + (round(d[6] * 1e3, 1),) for d in st.get('detours', [])]}",
                  flush=True)
            if args.discharge:
                print("   discharge:", _discharge_summary(calls))
                print("   relabel BFS:", "; ".join(f"{ms:.2f} ms {lv} levels" for ms, lv in searches) or "none")
            if args.no_tree:
                continue
            top = [f"{'  ' * d}{tag} {t_ms:.2f}" for d, tag, t_ms in tree if d <= 2 and t_ms > 0.3]
            print("   tree:", " | ".join(top[:40]))
            agg = collections.defaultdict(lambda: [0, 0.0])
            for _, tag, t_ms in tree:
                agg[tag][0] += 1
                agg[tag][1] += t_ms
            print("   sums:", ", ".join(f"{key} x{n} {v:.1f}" for key, (n, v) in
                                        sorted(agg.items(), key=lambda x: -x[1][1])[:14]), flush=True)
        del solver
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()

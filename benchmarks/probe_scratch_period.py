#!/usr/bin/env python3
"""Which relabel period of the dynamic solver's solves from scratch makes its later repairs cheap (GPU).

    python benchmarks/probe_scratch_period.py                       # all networks, all variants
    python benchmarks/probe_scratch_period.py --cases genrmf --variants adaptive,fixed --rounds 2

Replays the flow batches of ``bench_dynamic.py --only flow`` (same seed and
order) on a :class:`~gpumatch.flow.MaxFlowSolver` without a time budget,
once per variant of the relabel period that the solver's solves from
scratch use (its first solve and the solves of the batches past its
``rebuild_fraction``).  For each variant it prints the time of each such
solve from scratch and of each repair of a batch of at most ``--up-to`` of
the arcs, timed between device syncs.  The variants:

* ``default``: as :func:`~gpumatch.flow.maximum_flow` solves (the
  adaptive period, which stops adapting where the preflow runs mostly round
  anti-parallel pairs of arcs: ``TUNING["pairs_share"]``);
* ``adaptive``: the adaptive period without that watch;
* ``fixed``: the period of ``TUNING["freq"]`` in both phases, no early
  relabels (``REPAIR["scratch_adaptive"] = False``);
* ``p1fixed`` / ``p2fixed``: fixed in phase 1 (towards the sink) or phase 2
  (the return to the source) only;
* ``cap300``: adaptive with the period capped at 300 iterations;
* ``noearly``: adaptive without the early relabels of
  ``TUNING["relabel_time_ratio"]``;
* ``fixed50`` / ``fixed200``: as ``fixed``, with a period of 50 or 200
  iterations (``TUNING["freq"]``).

The variants run interleaved, ``--rounds`` times each, so that each one's
times can be compared with the others' on the same machine.  The output
ends with a table per network: the medians of the solves from scratch of
the 1 % and 10 % batches, and the sum over the repairs.

``--solves NAMES`` times instead ``_maxflow._solve`` alone (what
:func:`~gpumatch.flow.maximum_flow` runs) with its default period
(adaptive, with the pair watch of ``TUNING["pairs_share"]``) and with
fixed ones (``--periods``), interleaved, ``--rounds`` times, on networks
of ``bench_flow.py`` (``genrmf_32x256``, ...) and on the segmentation
network of ``examples/min_cut_segmentation.py`` (``segN``: an N x N image,
noise 90; its grid arcs come in anti-parallel pairs), with the share of
their arcs that have an anti-parallel partner; beside each time, the
share of the flow's mass that runs round anti-parallel pairs and the
number of global relabels (of the last round).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gpumatch import csr  # noqa: E402

VARIANTS = ("default", "adaptive", "fixed", "p1fixed", "p2fixed", "cap300", "noearly", "fixed50", "fixed200")


@contextlib.contextmanager
def period_variant(name):
    """Run the solver's solves from scratch with the relabel period of variant `name` inside the block."""
    from gpumatch.flow import _dynamic as D, _maxflow as M

    keep_pr, keep_t, keep_r = M._push_relabel, dict(M.TUNING), dict(D.REPAIR)

    def phase_pr(K, ctx, st, xp, target, other, hlimit, idt, freq, stats, backend, adaptive=None):
        # the first call of a solve is phase 1 (`stats` is fresh), the second phase 2
        phase = 2 if stats.get("_phase1_done") else 1
        stats["_phase1_done"] = True
        fixed = (name == "p1fixed" and phase == 1) or (name == "p2fixed" and phase == 2)
        return keep_pr(K, ctx, st, xp, target, other, hlimit, idt, freq, stats, backend,
                       False if fixed else adaptive)

    try:
        if name != "default":
            M.TUNING["pairs_share"] = None
        if name in ("fixed", "fixed50", "fixed200"):
            D.REPAIR["scratch_adaptive"] = False
            if name != "fixed":
                M.TUNING["freq"] = int(name[len("fixed"):])
        elif name in ("p1fixed", "p2fixed"):
            M._push_relabel = phase_pr
        elif name == "cap300":
            M.TUNING["max_freq"] = 300
        elif name == "noearly":
            M.TUNING["relabel_time_ratio"] = None
        elif name not in ("adaptive", "default"):
            raise ValueError(f"unknown variant {name!r}")
        yield
    finally:
        M._push_relabel = keep_pr
        M.TUNING.clear()
        M.TUNING.update(keep_t)
        D.REPAIR.clear()
        D.REPAIR.update(keep_r)


def _network(name):
    """(host capacity CSR, source, sink) of a ``bench_flow.py`` case or ``segN``."""
    import scipy.sparse as sp

    if name.startswith("seg"):
        root = pathlib.Path(__file__).resolve().parent.parent / "examples"
        sys.path.insert(0, str(root))
        import min_cut_segmentation as M

        n = int(name[3:])
        _, img = M.synthetic_image(n, n, 90.0, seed=0)
        C, s, t = M.segmentation_network(img, 90.0, 1.0)
        return sp.csr_matrix(C), s, t
    import bench_flow

    return bench_flow.build(name)


def paired_share(C):
    """Share of the stored off-diagonal arcs of `C` whose reverse arc is stored too."""
    C = C.tocsr()
    C.sort_indices()
    n = int((np.repeat(np.arange(C.shape[0]), np.diff(C.indptr)) != C.indices).sum())
    return 2 * csr.antiparallel_pairs(C.indptr, C.indices, C.shape[0])[0].shape[0] / n if n else 0.0


def solve_times(names, periods, rounds):
    """Median ms of ``_maxflow._solve`` per network, with its default period and fixed at each of `periods`."""
    import cupy as cp

    from gpumatch.flow import _maxflow as M

    sync = cp.cuda.Device().synchronize
    print("| network | vertices | arcs | paired | default | " + " | ".join(f"fixed {p}" for p in periods) + " |")
    print("|---|---|---|---|---|" + "---|" * len(periods))
    for name in names:
        C, s, t = _network(name)
        C.sort_indices()
        ip, ix, cap = cp.asarray(C.indptr), cp.asarray(C.indices), cp.asarray(C.data.astype(np.int64))
        runs = [(None, None)] + [(False, p) for p in periods]
        times = collections.defaultdict(list)
        values = set()
        k, p = csr.antiparallel_pairs(ip, ix, C.shape[0])
        cyc = {}
        M._solve(ip, ix, cap, s, t, "cupy")          # warm-up
        for _ in range(rounds):
            for adaptive, freq in runs:
                sync()
                t0 = time.perf_counter()
                v, f, _, st = M._solve(ip, ix, cap, s, t, "cupy", adaptive=adaptive, freq=freq)
                sync()
                times[freq].append((time.perf_counter() - t0) * 1e3)
                values.add(int(v))
                mass = float(f.sum())
                cyc[freq] = (2 * float(cp.minimum(f[k], f[p]).sum()) / max(mass, 1.0), st["global_relabels"])
        assert len(values) == 1, values
        print(f"| {name} | {C.shape[0]} | {C.nnz} | {paired_share(C):.2f} | "
              + " | ".join(f"{np.median(times[f]):.0f} ({cyc[f][0]:.2f}, {cyc[f][1]})" for _, f in runs) + " |",
              flush=True)


def cycle_trajectory(names, rounds):
    """Per network: after each global relabel of an adaptive ``_maxflow._solve`` (without the pair
    watch), the share of the preflow's mass that runs round anti-parallel pairs (printed as
    ``relabel:share`` every few relabels)."""
    import cupy as cp

    from gpumatch.flow import _maxflow as M

    build, relabel, share = M._build_rcsr, M._global_relabel, M.TUNING.get("pairs_share")
    cur = {}

    def build_spy(xp, indptr, indices, cap, V):
        L = build(xp, indptr, indices, cap, V)
        k, p = csr.antiparallel_pairs(indptr, indices, V)
        cur.update(L=L, k=k, p=p, seen=[])
        return L

    def relabel_spy(*a, **kw):
        out = relabel(*a, **kw)
        f = cur["L"]["flow"]
        mass = float(f.sum())
        cur["seen"].append(2 * float(xp_min(f[cur["k"]], f[cur["p"]]).sum()) / max(mass, 1.0))
        return out

    xp_min = cp.minimum
    M._build_rcsr, M._global_relabel = build_spy, relabel_spy
    M.TUNING["pairs_share"] = None
    try:
        for name in names:
            C, s, t = _network(name)
            C.sort_indices()
            ip, ix, cap = cp.asarray(C.indptr), cp.asarray(C.indices), cp.asarray(C.data.astype(np.int64))
            for rnd in range(rounds):
                M._solve(ip, ix, cap, s, t, "cupy")
                seen = cur["seen"]
                step = max(1, len(seen) // 12)
                print(f"{name} round {rnd}: {len(seen)} relabels; share after relabel: "
                      + " ".join(f"{i + 1}:{x:.2f}" for i, x in enumerate(seen) if i % step == 0 or i == len(seen) - 1),
                      flush=True)
    finally:
        M._build_rcsr, M._global_relabel = build, relabel
        M.TUNING["pairs_share"] = share


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="unit,washington,genrmf", help="comma-separated prefixes of the networks")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated variants (see above)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds of all variants")
    ap.add_argument("--up-to", type=float, default=0.0011, help="repair batches of at most this fraction")
    ap.add_argument("--quiet", action="store_true", help="print the tables only")
    ap.add_argument("--solves", default=None,
                    help="comma-separated networks (bench_flow.py cases, segN): time _maxflow._solve alone")
    ap.add_argument("--periods", default="100,200,400", help="with --solves: the fixed periods to time")
    ap.add_argument("--trajectory", default=None,
                    help="comma-separated networks (as --solves): the 2-cycle share of the preflow after each "
                         "global relabel of an adaptive solve")
    args = ap.parse_args(argv)
    if args.trajectory:
        cycle_trajectory([n for n in args.trajectory.split(",") if n], args.rounds)
        return
    if args.solves:
        solve_times([n for n in args.solves.split(",") if n], [int(p) for p in args.periods.split(",")],
                    args.rounds)
        return

    import cupy as cp

    import bench_dynamic as B
    from gpumatch.flow import _dynamic as D

    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            ap.error(f"unknown variant {v!r}; choose from {', '.join(VARIANTS)}")
    sync = cp.cuda.Device().synchronize
    tables = {}
    for name, C, s, t, batches in B.flow_replay([c for c in args.cases.split(",") if c]):
        data0 = C.data.copy()
        batches = list(batches)      # drawn once: every variant replays the same ones
        C.data[:] = data0
        Cd = B.to_dev(C, "cupy")
        res = collections.defaultdict(lambda: collections.defaultdict(list))
        for rnd in range(args.rounds):
            for v in variants:
                with period_variant(v):
                    sync()
                    t0 = time.perf_counter()
                    solver = D.MaxFlowSolver(Cd, s, t, backend="cupy", time_budget=None)
                    solver.solve()
                    sync()
                    res[v]["first"].append(time.perf_counter() - t0)
                    for kind, frac, rep, rows, cols, new in batches:
                        ms, st = B.timed_update(solver, cp.asarray(rows), cp.asarray(cols), cp.asarray(new), sync)
                        if frac > args.up_to:
                            res[v][f"{kind} {frac:g} scratch"].append(ms)
                        else:
                            res[v][f"{kind} {frac:g} rep{rep}"].append(ms)
                            res[v]["repairs"].append(ms)
                        if not args.quiet:
                            print(f"{name} r{rnd} {v:8s} {kind:5s} {frac:<7g} rep{rep} {ms:8.1f} ms "
                                  f"{st.get('mode')} relabels {st.get('global_relabels')}", flush=True)
                    del solver
                    cp.get_default_memory_pool().free_all_blocks()
        tables[name] = res
    for name, res in tables.items():
        keys = [k for k in next(iter(res.values())) if k not in ("first", "repairs")]
        print(f"\n### {name}: medians over rounds (ms); 'repairs' is the sum of the repairs of one round")
        print("| batch | " + " | ".join(variants) + " |")
        print("|---|" + "---|" * len(variants))
        print("| first solve | " + " | ".join(f"{np.median(res[v]['first']) * 1e3:.0f}" for v in variants) + " |")
        for k in keys:
            print(f"| {k} | " + " | ".join(f"{np.median(res[v][k]):.1f}" for v in variants) + " |")
        print("| repairs (sum) | " + " | ".join(
            f"{np.sum(res[v]['repairs']) / args.rounds:.0f}" for v in variants) + " |")


if __name__ == "__main__":
    main()

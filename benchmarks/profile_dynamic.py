#!/usr/bin/env python3
"""Where the time of a dynamic update + solve goes (GPU), step by step with syncs.

    python benchmarks/profile_dynamic.py [--only matching|flow] [--size 1000000]

Matching: the steps of ``MatchingSolver.add_edges`` / ``remove_edges`` and of
``solve`` for 0.01 % batches of ``random_bipartite(size, size, 5)``.  Flow:
the phases of ``MaxFlowSolver.solve`` for 0.01 % batches of the unit network
of the same graph, one global relabel and the output build alone.  Medians
of a few batches; every step is synced, so the sum is above the unsynced
total.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def _timer(cp):
    def tick(label, acc):
        cp.cuda.Device().synchronize()
        now = time.perf_counter()
        acc.setdefault(label, []).append(now - tick.last)
        tick.last = now
    tick.last = time.perf_counter()
    return tick


def _report(title, acc):
    print(f"## {title}")
    for k, v in acc.items():
        print(f"  {k:<28s} median {np.median(v) * 1e3:8.3f} ms   (n={len(v)}, min {min(v) * 1e3:.3f})")


def profile_matching(size, reps):
    import cupy as cp
    import cupyx.scipy.sparse as cpx

    from gpumatch import csr as _csr, generators as G
    from gpumatch.matching import MatchingSolver, bipartite_matching

    A = sp.csr_matrix(G.random_bipartite(size, size, 5, seed=0))
    A.sort_indices()
    m = n = size
    keys = (np.repeat(np.arange(m, dtype=np.int64), np.diff(A.indptr)) * n + A.indices).astype(np.int64)
    Ad = cpx.csr_matrix(A.astype(np.float64))
    solver = MatchingSolver(Ad, backend="cupy", rebuild_fraction=1.0)
    solver.solve()
    bipartite_matching(Ad, backend="cupy")
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        bipartite_matching(Ad, backend="cupy")
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    print(f"# scratch bipartite_matching: median {np.median(ts) * 1e3:.2f} ms")
    rng = np.random.default_rng(3)
    tick = _timer(cp)
    for frac in (1e-4, 1e-3):
        k = max(1, int(frac * keys.shape[0]))
        acc = {}
        for rep in range(reps + 1):
            a = {} if rep == 0 else acc
            rem = np.sort(keys[rng.choice(keys.shape[0], size=k, replace=False)])
            keep = np.ones(keys.shape[0], dtype=bool)
            keep[np.searchsorted(keys, rem)] = False
            keys = keys[keep]
            r, c = cp.asarray(rem // n), cp.asarray(rem % n)
            # primitives on the solver's arrays (results dropped)
            rs, cs = r, c
            cp.cuda.Device().synchronize()
            tick.last = time.perf_counter()
            t0 = time.perf_counter()
            pos, found = _csr.locate_entries(solver._rptr, solver._rind, rs, cs)
            a.setdefault("locate (launch only)", []).append(time.perf_counter() - t0)
            tick("locate (synced)", a)
            t0 = time.perf_counter()
            _csr.delete_entries(solver._rptr, solver._rind, pos)
            a.setdefault("delete_entries (launch only)", []).append(time.perf_counter() - t0)
            tick("delete_entries (synced)", a)
            t0 = time.perf_counter()
            _csr.insert_entries(solver._rptr, solver._rind, pos, rs, cs)
            a.setdefault("insert_entries (launch only)", []).append(time.perf_counter() - t0)
            tick("insert_entries (synced)", a)
            x = cp.empty(1, dtype=np.int64)
            tick.last = time.perf_counter()
            x.get()
            tick("empty sync + 8-byte read", a)
            # the public calls
            tick.last = time.perf_counter()
            solver.remove_edges(r, c)
            tick("remove_edges", a)
            solver.solve()
            tick("solve after remove", a)
            solver.add_edges(r, c)
            tick("add_edges (same edges back)", a)
            res = solver.solve()
            tick("solve after add", a)
            if rep:
                for key in ("aug_phases", "aug_levels", "aug_paths", "time_augment"):
                    acc.setdefault("solve stat " + key + " (/1e3)", []).append(res.stats.get(key, 0) / 1e3)
            keys = np.sort(np.concatenate([keys, rem]))
        _report(f"matching, random {size} d5, batch {k} edges", acc)
    import cProfile
    import pstats

    k = max(1, int(1e-4 * keys.shape[0]))
    rem = np.sort(keys[rng.choice(keys.shape[0], size=k, replace=False)])
    r, c = cp.asarray(rem // n), cp.asarray(rem % n)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(10):
        solver.remove_edges(r, c)
        solver.add_edges(r, c)
        cp.cuda.Device().synchronize()
    pr.disable()
    print("## cProfile of 10 x (remove_edges + add_edges), host time (tottime, then cumulative)")
    pstats.Stats(pr).sort_stats("tottime").print_stats(14)
    pstats.Stats(pr).sort_stats("cumulative").print_stats(30)


def profile_flow(size, reps):
    """Phases of ``MaxFlowSolver.solve`` per case, batch kind and size (GPU, synced steps).

    Environment (all optional): ``PROFILE_FLOW_CASES`` (comma list of
    ``unit``, ``rlg``, ``genrmf``; default ``unit``), ``PROFILE_FLOW_FRACS``
    (default ``1e-4``), ``PROFILE_FLOW_KINDS`` (default ``inc,dec``; also
    ``mixed``, ``inc1`` and ``dec1``: capacities +1 / -1 as this script
    did before), ``PROFILE_FLOW_VARIANTS`` (``;``-separated
    ``key=value,...`` overrides of ``gpumatch.flow._dynamic.REPAIR``, the
    empty string for the defaults, ``base`` for the solver of
    ``PROFILE_FLOW_BASELINE``, a Python file defining ``MaxFlowSolver``,
    e.g. an older version of ``_dynamic.py``; a key ``paths.NAME`` sets
    ``gpumatch.flow._paths.LIMITS[NAME]`` instead, e.g. ``paths.back=0``
    for forward path trees alone, and ``tuning.NAME`` sets
    ``gpumatch.flow._maxflow.TUNING[NAME]``, e.g. ``tuning.bfs_coop=False``,
    for the repairs and a from-scratch time of their own), ``PROFILE_FLOW_BUDGET``
    (seconds, default 240).  Every (kind, size) series ends with a check
    of the value against ``maximum_flow``.
    """
    import importlib.util
    import os

    import cupy as cp
    import cupyx.scipy.sparse as cpx

    from gpumatch import csr, generators as G
    from gpumatch.flow import MaxFlowSolver, maximum_flow
    from gpumatch.flow import _dynamic as FD
    from gpumatch.flow import _maxflow as FM
    from gpumatch.flow import _paths as FP
    from bench_dynamic import apply_overrides, new_capacities   # benchmarks/ is this script's folder

    env = os.environ.get
    cases = [c for c in env("PROFILE_FLOW_CASES", "unit").split(",") if c]
    fracs = [float(f) for f in env("PROFILE_FLOW_FRACS", "1e-4").split(",") if f]
    kinds = [k for k in env("PROFILE_FLOW_KINDS", "inc,dec").split(",") if k]
    variants = env("PROFILE_FLOW_VARIANTS", "").split(";")
    deadline = time.perf_counter() + float(env("PROFILE_FLOW_BUDGET", "240"))
    base_cls = None
    if env("PROFILE_FLOW_BASELINE"):
        spec = importlib.util.spec_from_file_location("_profile_baseline", env("PROFILE_FLOW_BASELINE"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        base_cls = mod.MaxFlowSolver
    defaults = dict(FD.REPAIR)
    path_defaults = dict(FP.LIMITS)
    tuning_defaults = dict(FM.TUNING)

    def restore():
        for table, saved in ((FD.REPAIR, defaults), (FP.LIMITS, path_defaults), (FM.TUNING, tuning_defaults)):
            table.clear()
            table.update(saved)

    def build(case):
        if case == "unit":
            A = sp.csr_matrix(G.random_bipartite(size, size, 5, seed=0))
            ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices.astype(np.int64),
                                                           A.shape)
            V = ip.shape[0] - 1
            return sp.csr_matrix((cap, ix, ip), shape=(V, V)).astype(np.int64), int(s), int(t), 1
        if case == "rlg":
            C, s, t = G.washington_rlg(512, 1024, 10000, seed=0)
        else:
            C, s, t = G.genrmf(32, 256, 100, 10000, seed=0)
        return sp.csr_matrix(C).astype(np.int64), int(s), int(t), 10000

    def sync():
        cp.cuda.Device().synchronize()

    def scratch_time(Cd, s, t, n=3):
        ts = []
        for _ in range(n):
            sync()
            t0 = time.perf_counter()
            res = maximum_flow(Cd, s, t, backend="cupy")
            sync()
            ts.append(time.perf_counter() - t0)
        return float(np.median(ts)), int(res.flow_value)

    for case in cases:
        C0, s, t, maxcap = build(case)
        C0.sort_indices()
        Cd = cpx.csr_matrix(C0.astype(np.float64))
        maximum_flow(Cd, s, t, backend="cupy")
        t_scr, _ = scratch_time(Cd, s, t)
        V = C0.shape[0]
        print(f"# {case}: {V} vertices, {C0.nnz} arcs; scratch maximum_flow median {t_scr * 1e3:.2f} ms", flush=True)
        coo_r = np.repeat(np.arange(V), np.diff(C0.indptr))
        for var in variants:
            if time.perf_counter() > deadline:
                print("# budget spent", flush=True)
                return
            restore()
            cls = MaxFlowSolver
            label = var or "default"
            if var == "base":
                if base_cls is None:
                    continue
                cls = base_cls
            elif var:
                if apply_overrides(var):
                    maximum_flow(Cd, s, t, backend="cupy")
                    print(f"## variant {label}: scratch maximum_flow median {scratch_time(Cd, s, t)[0] * 1e3:.2f} ms",
                          flush=True)
            C = C0.copy()
            sync()
            t0 = time.perf_counter()
            solver = cls(cpx.csr_matrix(C.astype(np.float64)), s, t, backend="cupy", rebuild_fraction=1.0,
                         time_budget=None)
            sync()
            t_init = time.perf_counter() - t0
            t0 = time.perf_counter()
            solver.solve()
            sync()
            t_first = time.perf_counter() - t0
            print(f"## variant {label}: init {t_init * 1e3:.1f} ms, first solve {t_first * 1e3:.1f} ms", flush=True)
            rng = np.random.default_rng(5)
            for kind in kinds:
                for frac in fracs:
                    if time.perf_counter() > deadline:
                        print("# budget spent", flush=True)
                        return
                    k = max(1, int(round(frac * C.nnz)))
                    acc = {}
                    for rep in range(reps + 1):
                        pos = rng.choice(C.nnz, size=k, replace=False)
                        new = new_capacities(rng, C.data[pos], kind, maxcap)
                        C.data[pos] = new
                        r, c, nw = cp.asarray(coo_r[pos]), cp.asarray(C.indices[pos].astype(np.int64)), cp.asarray(new)
                        sync()
                        t0 = time.perf_counter()
                        solver.update_capacities(r, c, nw)
                        sync()
                        t1 = time.perf_counter()
                        res = solver.solve()
                        sync()
                        t2 = time.perf_counter()
                        if rep == 0:
                            continue  # warm-up of this kind
                        st = res.stats
                        acc.setdefault("update ms", []).append((t1 - t0) * 1e3)
                        acc.setdefault("solve ms", []).append((t2 - t1) * 1e3)
                        acc.setdefault("total ms", []).append((t2 - t0) * 1e3)
                        acc.setdefault("relabels", []).append(st.get("global_relabels", 0))
                        acc.setdefault("iterations", []).append(st.get("iterations", 0))
                        acc.setdefault("split relabels", []).append(st.get("split_relabels", 0))
                        for key, v in st.get("time", {}).items():
                            acc.setdefault("t." + key + " ms", []).append(v * 1e3)
                        for ph in st.get("phases", []):
                            name, its, grs, sec = ph[:4]
                            acc.setdefault(f"phase {name} ms", []).append(sec * 1e3)
                            acc.setdefault(f"phase {name} relabels", []).append(grs)
                            acc.setdefault(f"phase {name} iterations", []).append(its)
                            if len(ph) >= 6:
                                acc.setdefault(f"phase {name} relabel ms", []).append(ph[4] * 1e3)
                                acc.setdefault(f"phase {name} calls", []).append(ph[5])
                        passes = {}   # the augmenting-path passes of each phase, summed
                        for name, phases, levels, paths, amount, sec in st.get("path_passes", []):
                            tot = passes.setdefault(name, [0.0, 0, 0])
                            tot[0] += sec * 1e3
                            tot[1] += levels
                            tot[2] += paths
                        unw = st.get("unwinds", [])
                        if unw:   # the flow cancelling: calls, rounds and time, summed
                            acc.setdefault("unwind calls", []).append(len(unw))
                            acc.setdefault("unwind rounds", []).append(sum(u[1] for u in unw))
                            acc.setdefault("unwind ms", []).append(sum(u[3] for u in unw) * 1e3)
                        for name, (ms, levels, paths) in passes.items():
                            acc.setdefault(f"paths {name} ms", []).append(ms)
                            acc.setdefault(f"paths {name} levels", []).append(levels)
                            acc.setdefault(f"paths {name} paths", []).append(paths)
                        tag = f"{st.get('mode')}/{st.get('repair', '-')}/{st.get('cut', '-')}" + \
                            ("/F" if st.get("fallback") else "")
                        acc.setdefault("modes", []).append(tag)
                    sync()
                    ref = maximum_flow(cpx.csr_matrix(C.astype(np.float64)), s, t, backend="cupy")
                    ok = int(ref.flow_value) == int(res.flow_value)
                    print(f"### {case} {label} {kind} {frac * 100:g}% ({k} arcs): "
                          f"{'ok' if ok else 'MISMATCH'}; modes {sorted(set(acc.get('modes', [])))}", flush=True)
                    for key, v in acc.items():
                        if key == "modes":
                            continue
                        print(f"    {key:<26s} median {np.median(v):9.3f}  min {min(v):9.3f}  max {max(v):9.3f}"
                              f"  (n={len(v)})", flush=True)
        restore()
        # one global relabel from the sink, the output build and the value alone (default solver)
        solver = MaxFlowSolver(Cd, s, t, backend="cupy", rebuild_fraction=1.0, time_budget=None)
        solver.solve()
        solver._contexts()
        acc = {}
        tick = _timer(cp)
        for _ in range(5):
            sync()
            tick.last = time.perf_counter()
            solver._sink_bfs()
            tick("global relabel from sink", acc)
            solver._flow_matrix()
            tick("flow matrix build", acc)
            solver._value()
            tick("value", acc)
        _report(f"flow pieces ({case})", acc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("matching", "flow"))
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args()
    if a.only in (None, "matching"):
        profile_matching(a.size, a.reps)
    if a.only in (None, "flow"):
        profile_flow(a.size, a.reps)


if __name__ == "__main__":
    main()

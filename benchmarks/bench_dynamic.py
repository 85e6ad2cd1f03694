#!/usr/bin/env python3
"""Benchmark of the dynamic solvers: update + solve against a solve from scratch.

    python benchmarks/bench_dynamic.py                   # GPU sizes (cupy when present)
    python benchmarks/bench_dynamic.py --small --backend numpy

For each case a solver is built and solved once; then, for each kind of
batch (``inc``: capacities raised / edges added, ``dec``: lowered /
removed, ``mixed``) and each batch size (0.01 %, 0.1 %, 1 %, 10 % of the
arcs or edges), ``--repeats`` batches (default 3) are applied one after
the other to the same solver (changes accumulate), each timed as
``update + solve`` (``--rebuild-fraction`` for
matching, ``--flow-rebuild-fraction`` for flow: default 1, so no switch by
batch size; ``default`` runs with the solver's default switch; ``--steps`` times the update and the solve
apart and prints their phases; the flow solver's ``time_budget`` guard stays on
and may abandon a repair for a solve from scratch: ``--log`` records the
mode and the phases of every batch), then the updated graph is solved from scratch with
``maximum_flow`` / ``bipartite_matching`` (graph already on the device).
The two values / sizes must agree; a row shows the medians of the
batches' dynamic and scratch times (push-relabel from scratch varies by up
to a third from run to run on RLG and GENRMF), and ``speedup`` is their
ratio.

On the GPU each timed part (update + solve, and the solve from scratch)
starts right after GPU work: about 2 ms of unrelated work runs and is
synced before it (:func:`settle`, not timed).  After ~50 ms without GPU
work (the host building a batch and its reference graph, or asleep) the
first half millisecond of GPU work runs slower: on an H100 a 0.1 %
matching update took 0.79 ms after a 50 ms sleep and 0.78 ms after 50 ms
of NumPy work, against 0.32 ms after 3 ms of GPU work (0.49 ms after the
NumPy work and then the GPU work; a second machine did not repeat the
GPU-work rows: the point is that both parts start alike).  Without this
only the dynamic part paid that: the solve from scratch ran right after
it.  ``--gpu-idle`` measures that way.
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

FRACS = (1e-4, 1e-3, 1e-2, 1e-1)
LOG = []
#: Run :func:`settle` before each timed part (``--gpu-idle`` turns it off).
SETTLE = True
_SETTLE_BUF = []
KINDS = ("inc", "dec", "mixed")


def flow_cases(small):
    from gpumatch import csr, generators as G

    if small:
        A = sp.csr_matrix(G.random_bipartite(20_000, 20_000, 5, seed=0))
        rlg = G.washington_rlg(64, 128, 10000, seed=0)
        rmf = G.genrmf(8, 32, 100, 10000, seed=0)
    else:
        A = sp.csr_matrix(G.random_bipartite(1_000_000, 1_000_000, 5, seed=0))
        rlg = G.washington_rlg(512, 1024, 10000, seed=0)
        rmf = G.genrmf(32, 256, 100, 10000, seed=0)
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.shape)
    V = ip.shape[0] - 1
    unit = sp.csr_matrix((cap, ix, ip), shape=(V, V))
    return [("unit_bipartite", unit, int(s), int(t), 1),
            ("washington_rlg", sp.csr_matrix(rlg[0]).astype(np.int64), int(rlg[1]), int(rlg[2]), 10000),
            ("genrmf", sp.csr_matrix(rmf[0]).astype(np.int64), int(rmf[1]), int(rmf[2]), 10000)]


def to_dev(C, backend):
    if backend == "cupy":
        import cupyx.scipy.sparse as cpx

        return cpx.csr_matrix(C.astype(np.float64))
    return C


def sync(backend):
    if backend == "cupy":
        import cupy as cp

        cp.cuda.Device().synchronize()


def settle(backend):
    """Synchronize; on the GPU with :data:`SETTLE`, first keep it busy for
    about 2 ms of unrelated work (elementwise passes over a 64 MB buffer),
    so that the timed part after it starts right after GPU work, as a solve
    from scratch right after another solve does (module docstring)."""
    if backend == "cupy" and SETTLE:
        import cupy as cp

        if not _SETTLE_BUF:
            _SETTLE_BUF.append(cp.ones(1 << 24, dtype=cp.float32))
        buf = _SETTLE_BUF[0]
        for _ in range(48):
            buf *= 1.0
    sync(backend)


def arr(a, backend):
    if backend == "cupy":
        import cupy as cp

        return cp.asarray(a)
    return a


def bench_flow(small, backend, rng, rows_out, deadline, rebuild_fraction="1", repeats=1):
    from gpumatch.flow import MaxFlowSolver, maximum_flow

    for name, C, s, t, maxcap in flow_cases(small):
        C.sort_indices()
        coo_r = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
        kw = {} if rebuild_fraction == "default" else {"rebuild_fraction": float(rebuild_fraction)}
        solver = MaxFlowSolver(to_dev(C, backend), s, t, backend=backend, **kw)
        name = f"{name} (rf={rebuild_fraction})"
        solver.solve()
        maximum_flow(to_dev(C, backend), s, t, backend=backend)  # warm-up (compile)
        for kind in KINDS:
            for frac in FRACS:
                if time.perf_counter() > deadline:
                    print(f"# time budget spent: stopping at flow {name} {kind} {frac}", flush=True)
                    return
                k = max(1, int(round(frac * C.nnz)))
                # `repeats` batches of this kind and size (changes accumulate);
                # the row shows the medians of their dynamic and scratch times
                reps = [_flow_batch(solver, C, coo_r, s, t, maxcap, kind, frac, k, rng, backend, name)
                        for _ in range(repeats)]
                row = ("flow", name, C.nnz, kind, frac, k, float(np.median([r[0] for r in reps])),
                       float(np.median([r[1] for r in reps])), all(r[2] for r in reps))
                rows_out.append(row)
                _print(row)


def new_capacities(rng, old, kind, maxcap):
    """New capacities of a batch of arcs whose capacities are `old`: ``inc``
    raises each by 1 to `maxcap`, ``dec`` lowers each by as much (not below
    0), ``mixed`` draws them from 0 to 2 `maxcap`; ``inc1`` / ``dec1``
    raise / lower by one."""
    k = old.shape[0]
    if kind == "inc":
        return old + rng.integers(1, maxcap + 1, size=k)
    if kind == "dec":
        return np.maximum(old - rng.integers(1, maxcap + 1, size=k), 0)
    if kind == "inc1":
        return old + 1
    if kind == "dec1":
        return np.maximum(old - 1, 0)
    return rng.integers(0, 2 * maxcap + 1, size=k)


def draw_batch(rng, C, kind, k, maxcap):
    """One batch of `k` distinct arcs of `C` as the benchmark draws it:
    ``(positions in C.data, new capacities)``."""
    pos = rng.choice(C.nnz, size=k, replace=False)
    return pos, new_capacities(rng, C.data[pos], kind, maxcap)


def replay_batches(rng, C, maxcap, repeats=3):
    """The flow batches of this benchmark's sequence on `C` (host CSR, its
    capacities updated in place), drawn from `rng` as the benchmark draws
    them: yields ``(kind, frac, rep, positions in C.data, new capacities)``."""
    for kind in KINDS:
        for frac in FRACS:
            k = max(1, int(round(frac * C.nnz)))
            for rep in range(repeats):
                pos, new = draw_batch(rng, C, kind, k, maxcap)
                C.data[pos] = new
                yield kind, frac, rep, pos, new


def flow_replay(prefixes, small=False):
    """The flow networks of this benchmark whose names start with one of
    `prefixes`, each with the batches the benchmark draws for it (the seed
    of :func:`main`, the order of :func:`bench_flow`): yields ``(name, C,
    s, t, batches)``, `C` the host CSR (sorted; its capacities follow the
    batches as they are drawn), `batches` yielding ``(kind, frac, rep,
    rows, cols, new capacities)`` (int64 host arrays).  The batches of the
    networks left out, and those a caller leaves untaken, are drawn all the
    same, so that every network's batches are the benchmark's."""
    rng = np.random.default_rng(0)
    for name, C, s, t, maxcap in flow_cases(small):
        C.sort_indices()
        coo_r = np.repeat(np.arange(C.shape[0], dtype=np.int64), np.diff(C.indptr))
        batches = ((kind, frac, rep, coo_r[pos], C.indices[pos].astype(np.int64), new)
                   for kind, frac, rep, pos, new in replay_batches(rng, C, maxcap))
        if any(name.startswith(p) for p in prefixes):
            yield name, C, s, t, batches
        for _ in batches:
            pass


def forced_repairs(solver, C, kinds, frac, before=None, batches=3, seed=7, maxcap=10000):
    """The probes' batches on a CuPy `solver` of `C` (host CSR, updated in
    place): `batches` of each kind in `kinds`, of `frac` of the arcs each.
    Yields ``(kind, batch, seconds, result)`` of each update + solve, timed
    between device syncs; ``before()`` runs just before the timed part."""
    import cupy as cp

    sync = cp.cuda.Device().synchronize
    coo_r = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
    rng = np.random.default_rng(seed)
    for kind in kinds:
        for b in range(batches):
            pos, new = draw_batch(rng, C, kind, max(1, int(round(frac * C.nnz))), maxcap)
            C.data[pos] = new
            if before is not None:
                before()
            sync()
            t0 = time.perf_counter()
            solver.update_capacities(cp.asarray(coo_r[pos]), cp.asarray(C.indices[pos].astype(np.int64)),
                                     cp.asarray(new))
            res = solver.solve()
            sync()
            yield kind, b, time.perf_counter() - t0, res


def timed_update(solver, rows, cols, new, sync):
    """``update_capacities`` + ``solve`` of a flow solver between two ``sync()`` calls:
    ``(milliseconds, result stats)``."""
    sync()
    t0 = time.perf_counter()
    solver.update_capacities(rows, cols, new)
    st = solver.solve().stats
    sync()
    return (time.perf_counter() - t0) * 1e3, st


def _flow_batch(solver, C, coo_r, s, t, maxcap, kind, frac, k, rng, backend, name):
    """One batch: update + solve, then the reference solve from scratch; returns (t_dyn, t_scr, ok)."""
    from gpumatch.flow import maximum_flow

    pos, new = draw_batch(rng, C, kind, k, maxcap)
    r, c, new = arr(coo_r[pos], backend), arr(C.indices[pos].astype(np.int64), backend), arr(new, backend)
    C.data[pos] = _host(new)
    settle(backend)
    t0 = time.perf_counter()
    solver.update_capacities(r, c, new)
    res = solver.solve()
    sync(backend)
    t_dyn = time.perf_counter() - t0
    Cd = to_dev(C, backend)
    settle(backend)
    t0 = time.perf_counter()
    ref = maximum_flow(Cd, s, t, backend=backend)
    sync(backend)
    t_scr = time.perf_counter() - t0
    ok = int(res.flow_value) == int(ref.flow_value)
    LOG.append({"case": name, "kind": kind, "frac": frac, "t_dyn": t_dyn, "t_scr": t_scr,
                "mode": res.stats.get("mode"), "phases": res.stats.get("phases"),
                "fallback": res.stats.get("fallback"), "time": res.stats.get("time"),
                "path_passes": res.stats.get("path_passes"),
                "iterations": res.stats.get("iterations"),
                "relabels": res.stats.get("global_relabels"),
                "scratch_iterations": ref.stats.get("iterations"),
                "scratch_relabels": ref.stats.get("global_relabels"),
                "scratch_time": ref.stats.get("time")})
    return t_dyn, t_scr, ok


def _host(a):
    return a.get() if hasattr(a, "get") else a


def bench_matching(small, backend, rng, rows_out, deadline, warm_init, rebuild_fraction="1", steps=False,
                   relabel_k=0.7, warm_method="augment", repeats=1):
    from gpumatch import generators as G
    from gpumatch.matching import MatchingSolver, bipartite_matching

    m = n = 20_000 if small else 1_000_000
    A = sp.csr_matrix(G.random_bipartite(m, n, 5, seed=0))
    A.sort_indices()
    keys = (np.repeat(np.arange(m, dtype=np.int64), np.diff(A.indptr)) * n + A.indices).astype(np.int64)
    kw = {} if rebuild_fraction == "default" else {"rebuild_fraction": float(rebuild_fraction)}
    solver = MatchingSolver(to_dev(A, backend), backend=backend, warm_init=warm_init, relabel_k=relabel_k,
                            warm_method=warm_method, **kw)
    rf = solver.rebuild_fraction   # (the default depends on the backend)
    solver.solve()
    bipartite_matching(to_dev(A, backend), backend=backend)   # warm-up (compile)
    # warm-up of the update kernels and of a warm-started solve: two edges out and back
    e = keys[:2]
    solver.remove_edges(arr(e // n, backend), arr(e % n, backend))
    solver.solve()
    solver.add_edges(arr(e // n, backend), arr(e % n, backend))
    solver.solve()
    name = f"random_bipartite_{m}_d5"
    label = (f"{name} ({warm_method}, {warm_init}, rf={rebuild_fraction}"
             + (f", k={relabel_k:g})" if relabel_k != 0.7 else ")"))
    rng = np.random.default_rng(1)
    for kind in KINDS:
        for frac in FRACS:
            if time.perf_counter() > deadline:
                print(f"# time budget spent: stopping at matching {kind} {frac}", flush=True)
                return
            reps = []
            for _ in range(repeats):
                keys, one = _matching_batch(solver, keys, rng, kind, frac, m, n, backend, steps, name, label,
                                            warm_init, rf, relabel_k, warm_method)
                reps.append(one)
            # medians of the batches' dynamic and scratch times
            t_dyn = float(np.median([r[6] for r in reps]))
            t_scr = float(np.median([r[7] for r in reps]))
            row = reps[0][:6] + (t_dyn, t_scr, all(r[8] for r in reps))
            rows_out.append(row)
            _print(row)


def _matching_batch(solver, keys, rng, kind, frac, m, n, backend, steps, name, label, warm_init, rf, relabel_k,
                    warm_method):
    """One batch of `kind` and size `frac`: update + solve, then the scratch reference; returns (keys, row)."""
    from gpumatch.matching import bipartite_matching

    k = max(1, int(round(frac * keys.shape[0])))
    n_rem = {"inc": 0, "dec": k, "mixed": k // 2}[kind]
    rem = np.sort(keys[rng.choice(keys.shape[0], size=n_rem, replace=False)]) if n_rem else keys[:0]
    draw = 2 * (k - n_rem) + 8
    cand = np.unique(rng.integers(0, m, size=draw) * n + rng.integers(0, n, size=draw))
    at = np.minimum(np.searchsorted(keys, cand), keys.shape[0] - 1)
    cand = cand[keys[at] != cand]
    add = np.sort(rng.permutation(cand)[:k - n_rem])
    # keys stay sorted and unique: drop by position, insert by position (no re-sort)
    keep = np.ones(keys.shape[0], dtype=bool)
    keep[np.searchsorted(keys, rem)] = False
    keys = keys[keep]
    keys = np.insert(keys, np.searchsorted(keys, add), add)
    rr, rc, ar, ac = (arr(x, backend) for x in (rem // n, rem % n, add // n, add % n))
    rows = keys // n
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    Ad = sp.csr_matrix((np.ones(keys.shape[0], dtype=np.float64), (keys - rows * n).astype(np.int32),
                        indptr.astype(np.int32)), shape=(m, n))
    Ad = to_dev(Ad, backend)
    settle(backend)
    ts = time.perf_counter()
    solver.remove_edges(rr, rc)
    if steps:
        sync(backend)
    t_rem = time.perf_counter() - ts
    solver.add_edges(ar, ac)
    if steps:
        sync(backend)
    t1 = time.perf_counter()
    res = solver.solve()
    sync(backend)
    t2 = time.perf_counter()
    t_dyn = t2 - ts
    settle(backend)
    t0 = time.perf_counter()
    ref = bipartite_matching(Ad, backend=backend)
    sync(backend)
    t_scr = time.perf_counter() - t0
    row = ("matching", label, int(keys.shape[0]), kind, frac, k, t_dyn, t_scr,
           res.size == ref.size and res.size == int((_host(ref.col_to_row) >= 0).sum()))
    st = res.stats
    LOG.append({"case": name, "warm_init": warm_init, "warm_method": warm_method, "rebuild_fraction": rf,
                "relabel_k": relabel_k, "kind": kind, "frac": frac,
                "t_dyn": t_dyn, "t_update": t1 - ts, "t_remove": t_rem, "t_solve": t2 - t1, "t_scr": t_scr,
                "stats": st, "scratch_stats": ref.stats})
    if steps:
        print(f"#   {kind} {frac * 100:g}%: update {(t1 - ts) * 1e3:.2f} ms (remove {t_rem * 1e3:.2f}, "
              f"synced), solve {(t2 - t1) * 1e3:.2f} ms "
              f"[{st['mode']}: augment phases {st.get('aug_phases', 0)}, paths {st.get('aug_paths', 0)}, "
              f"levels {st.get('aug_levels', 0)}, loops {st.get('aug_loop_launches', 0)}, "
              f"seeds {st.get('aug_seeds', 0)}, met {st.get('aug_met', 0)}, "
              f"back levels {st.get('aug_back_levels', 0)}, orphan deaths {st.get('aug_orphan_deaths', 0)}, "
              f"closings {st.get('aug_closings', 0)}, certificate {st.get('aug_certificate')}, "
              f"released {st.get('aug_released', 0)}, "
              f"repairs {st.get('aug_reparented', 0)}+{st.get('aug_orphaned', 0)}, "
              f"incremental {st.get('aug_incremental', False)}, "
              f"augment {st.get('time_augment', 0) * 1e3:.2f} ms, relabels {st['global_relabels']}, "
              f"push iterations {st['push_iterations']}]; scratch {t_scr * 1e3:.2f} ms", flush=True)
        if st.get("aug_trace"):
            _print_trace(st["aug_trace"])
    return keys, row


def _print_trace(trace):
    """One line per phase of a traced cooperative augment: microseconds of the
    dissolves, the seed, each level (search / backward frontier after it) and the flips."""
    t_prev = None
    lines = {}
    for phase, step, a, b, now in trace:
        dt = 0.0 if t_prev is None else (now - t_prev) / 1e3
        t_prev = now
        what = {-4: "start", -5: f"adopt{'(push)' if b else ''} {dt:.0f}us ({a})",
                -1: f"dissolve {dt:.0f}us (released {a})", -2: f"seed {dt:.0f}us ({a}/{b})",
                -3: f"flips {dt:.0f}us ({a} paths, {b} met)"}.get(step, f"L{step} {dt:.0f}us ({a}/{b})")
        lines.setdefault(phase, []).append(what)
    for phase, parts in lines.items():
        print(f"#     phase {phase}: " + ", ".join(parts), flush=True)


def _print(row):
    prob, name, nnz, kind, frac, k, t_dyn, t_scr, ok = row
    print(f"| {prob} | {name} | {nnz} | {kind} | {frac * 100:g}% | {k} | {t_dyn * 1e3:.1f} | {t_scr * 1e3:.1f} | "
          f"{t_scr / max(t_dyn, 1e-9):.2f} | {'ok' if ok else 'MISMATCH'} |", flush=True)


def parse_overrides(text):
    """``'a=1,b=True,c=None'`` -> ``{'a': 1, 'b': True, 'c': None}`` (ints, floats, booleans, None)."""
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, _, v = item.partition("=")
        if v in ("True", "False", "None"):
            out[key] = {"True": True, "False": False, "None": None}[v]
        else:
            out[key] = float(v) if any(c in v for c in ".e") else int(v)
    return out


def parse_batches(text):
    """``'mixed:0.001:1,inc:0.001:0'`` -> ``{('mixed', 0.001, 1), ('inc', 0.001, 0)}``: batches of the
    benchmark's sequence as ``(kind, fraction of the arcs, repeat)``, as the flow tools print them."""
    out = set()
    for item in filter(None, (x.strip() for x in text.split(","))):
        kind, frac, rep = item.split(":")
        out.add((kind, float(frac), int(rep)))
    return out


def solve_from_scratch(solver):
    """``solver.solve()`` from scratch whatever its batch (as after an abandoned repair); returns the result."""
    keep, solver.rebuild_fraction = solver.rebuild_fraction, 0.0   # no batch is within a fraction 0 of the arcs
    try:
        return solver.solve()
    finally:
        solver.rebuild_fraction = keep


def apply_overrides(text):
    """Set the overrides of `text` (see :func:`parse_overrides`): a key ``paths.NAME`` sets
    ``gpumatch.flow.dynamic._paths.LIMITS[NAME]``, ``detour.NAME`` ``gpumatch.flow.dynamic._detour.LIMITS[NAME]``,
    ``tuning.NAME`` sets ``gpumatch.flow._maxflow.TUNING[NAME]``,
    ``small.NAME`` the settings of small batches (``REPAIR["small"][NAME]``), any other
    ``gpumatch.flow.dynamic._dynamic.REPAIR``; returns whether a ``tuning.*`` key was set."""
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _detour, _dynamic, _paths

    tuned = False
    for key, v in parse_overrides(text).items():
        if key.startswith("paths."):
            _paths.LIMITS[key[len("paths."):]] = v
        elif key.startswith("detour."):
            _detour.LIMITS[key[len("detour."):]] = v
        elif key.startswith("tuning."):
            _maxflow.TUNING[key[len("tuning."):]] = v
            tuned = True
        elif key.startswith("small."):
            _dynamic.REPAIR["small"] = {**_dynamic.REPAIR["small"], key[len("small."):]: v}
        else:
            _dynamic.REPAIR[key] = v
    return tuned


#: The ``--aug-*`` switches of the matching runs: (argument, attribute of
#: gpumatch.matching._augment, its value from the switch's text, help text);
#: ``aug_coop`` sets COOPERATIVE and COOPERATIVE_BLOCKS_PER_SM together.
AUG_SWITCHES = (
    ("aug_loop_max", "LOOP_MAX", int,
     "comma-separated values of gpumatch.matching._augment.LOOP_MAX to run (frontiers of at most this many rows "
     "run in the one-block BFS loop)"),
    ("aug_coop", "COOPERATIVE", lambda v: int(v) > 0,
     "comma-separated: 0 runs the augmenting phases with a launch per step, n > 0 in one cooperative launch of n "
     "blocks per SM (gpumatch.matching._augment.COOPERATIVE*)"),
    ("aug_back", "BACK_RATIO", float,
     "comma-separated values of gpumatch.matching._augment.BACK_RATIO to run (0: search trees alone; r > 0: "
     "backward trees from the free columns too, a level while their frontier is at most r times the search "
     "side's)"),
    ("aug_defer", "DEFER_CLOSING", lambda v: int(v) > 0,
     "comma-separated: 1 defers the closing of the augmenting phases, 0 closes in every phase "
     "(gpumatch.matching._augment.DEFER_CLOSING)"),
    ("aug_wait", "SEARCH_WAIT", float,
     "comma-separated values of gpumatch.matching._augment.SEARCH_WAIT to run (0: the search side never waits; "
     "r > 0: in a search phase it waits a level while its frontier is more than r times the backward one)"),
    ("aug_push", "ADOPT_PUSH", lambda v: int(v) > 0,
     "comma-separated: 1 runs a closing phase's adoption passes after the first from the rows that joined last "
     "(push), 0 every pass over all columns (gpumatch.matching._augment.ADOPT_PUSH)"),
    ("aug_back_cert", "BACK_CERTIFICATE", lambda v: int(v) > 0,
     "comma-separated: 1 lets a search phase whose backward trees closed on their own prove the matching "
     "maximum (the forest is then dropped), 0 only the forest (gpumatch.matching._augment.BACK_CERTIFICATE)"))


def set_aug_switches(values):
    """Set the :data:`AUG_SWITCHES` whose text in `values` (in their order) is not empty, and say so."""
    from gpumatch.matching import _augment

    for (_, attr, conv, _), text in zip(AUG_SWITCHES, values):
        if not text:
            continue
        value = conv(text)
        setattr(_augment, attr, value)
        extra = ""
        if attr == "COOPERATIVE":
            _augment.COOPERATIVE_BLOCKS_PER_SM = max(1, int(text))
            extra = f", blocks per SM {max(1, int(text))}"
        shown = f"{value:g}" if isinstance(value, float) else value
        print(f"# augment {attr} = {shown}{extra}", flush=True)


def main(argv=None):
    global SETTLE, FRACS, KINDS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="small instances (CPU smoke run)")
    ap.add_argument("--backend", default="auto", choices=("auto", "numpy", "cupy"))
    ap.add_argument("--only", choices=("flow", "matching"), default=None)
    ap.add_argument("--warm-init", default="auto",
                    help="comma-separated warm_init values of MatchingSolver to run (auto, none, greedy, karp_sipser)")
    ap.add_argument("--rebuild-fraction", default="1",
                    help="comma-separated rebuild_fraction values of MatchingSolver to run ('default': the "
                         "solver's default; 1: never from scratch by batch size)")
    ap.add_argument("--flow-rebuild-fraction", default="1",
                    help="rebuild_fraction of MaxFlowSolver ('default': the solver's default switch to a "
                         "solve from scratch; 1: always dynamic)")
    ap.add_argument("--flow-back", default=None,
                    help="comma-separated values of gpumatch.flow.dynamic._paths.LIMITS['back'] to run (0: the repair's "
                         "augmenting-path passes grow forward trees alone; r > 0: backward trees from the "
                         "deficits and the terminal's neighbours too)")
    ap.add_argument("--flow-repair", default=None,
                    help="';'-separated sets of 'key=value,...' overrides to run in turn (an empty set: the "
                         "defaults): keys of gpumatch.flow.dynamic._dynamic.REPAIR, 'paths.KEY' of _paths.LIMITS, "
                         "'tuning.KEY' of _maxflow.TUNING, 'small.KEY' of REPAIR['small'], e.g. "
                         "'max_period=16,early_stop=True;paths.coop=False'")
    ap.add_argument("--relabel-k", default="0.7",
                    help="comma-separated relabel_k values of MatchingSolver to run (global-relabel frequency of "
                         "the warm-started solves)")
    ap.add_argument("--warm-method", default="augment",
                    help="comma-separated warm_method values of MatchingSolver to run (augment, gpr)")
    for dest, _, _, text in AUG_SWITCHES:
        ap.add_argument("--" + dest.replace("_", "-"), default=None, help=text)
    ap.add_argument("--aug-trace", type=int, default=0,
                    help="with --steps on the GPU: record up to this many steps of each cooperative augment "
                         "(gpumatch.matching._augment.TRACE_STEPS) and print the time per phase and level")
    ap.add_argument("--repeats", type=int, default=3,
                    help="batches per (kind, size), for flow and matching; the row shows the medians of their "
                         "dynamic and scratch times")
    ap.add_argument("--steps", action="store_true",
                    help="matching: time the update and the solve apart (one more sync) and print the phases")
    ap.add_argument("--gpu-idle", action="store_true",
                    help="time each part right after the host's work, without first keeping the GPU busy "
                         "(settle); the way rounds 1-17 measured")
    ap.add_argument("--fracs", default=None,
                    help="comma-separated batch sizes, as fractions of the edges or arcs (default "
                         + ",".join(f"{f:g}" for f in FRACS) + ")")
    ap.add_argument("--kinds", default=None,
                    help="comma-separated kinds of batch (default " + ",".join(KINDS) + ")")
    ap.add_argument("--log", default=None, help="write per-batch statistics (JSON lines) to this file")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds; later cases are skipped")
    args = ap.parse_args(argv)
    from gpumatch import _backend

    SETTLE = not args.gpu_idle
    if args.fracs:
        FRACS = tuple(float(f) for f in args.fracs.split(","))
    if args.kinds:
        KINDS = tuple(args.kinds.split(","))
    backend = _backend.resolve_backend(args.backend)
    if args.aug_trace:
        from gpumatch.matching import _augment

        _augment.TRACE_STEPS = args.aug_trace
    print(f"# backend {backend}, device {_backend.device_name() if backend == 'cupy' else 'cpu'}"
          + (f", timed parts start on a {'settled' if SETTLE else 'idle'} GPU" if backend == "cupy" else ""))
    print("| problem | graph | arcs/edges | kind | batch | changes | dynamic ms | scratch ms | speedup "
          "| check |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    rows = []
    deadline = time.perf_counter() + args.budget
    if args.only in (None, "flow"):
        from gpumatch.flow.dynamic import _dynamic as FD, _maxflow as FM, _paths as FP

        defaults = [(d, dict(d)) for d in (FD.REPAIR, FP.LIMITS, FM.TUNING)]
        for frf, fb, fr in itertools.product(args.flow_rebuild_fraction.split(","), (args.flow_back or "").split(","),
                                             (args.flow_repair or "").split(";")):
            for d, saved in defaults:
                d.clear()
                d.update(saved)
            if fr:
                apply_overrides(fr)
                print(f"# flow overrides {fr}", flush=True)
            if fb:
                FP.LIMITS["back"] = float(fb)
                print(f"# flow paths LIMITS['back'] = {float(fb):g}", flush=True)
            bench_flow(args.small, backend, rng, rows, deadline, frf, max(1, args.repeats))
    if args.only in (None, "matching"):
        for rf in args.rebuild_fraction.split(","):
            for wi in args.warm_init.split(","):
                for rk in args.relabel_k.split(","):
                    for wm in args.warm_method.split(","):
                        for values in itertools.product(*((getattr(args, name) or "").split(",")
                                                          for name, *_ in AUG_SWITCHES)):
                            set_aug_switches(values)
                            bench_matching(args.small, backend, rng, rows, deadline, wi, rf, args.steps, float(rk),
                                           wm, max(1, args.repeats))
    if args.log:
        import json

        with open(args.log, "w") as fh:
            for r in LOG:
                fh.write(json.dumps(r, default=str) + "\n")
    bad = [r for r in rows if not r[-1]]
    if bad:
        print(f"# {len(bad)} MISMATCH(ES)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

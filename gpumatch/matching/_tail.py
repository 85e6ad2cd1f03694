"""The tail after G-PR (:mod:`gpumatch.matching._driver`), on the device
and on the NumPy twin: augmenting-path phases in chunks, push-relabel
walks, the level caps on deep searches, and the hand-over to the compiled
CPU engine.  The plans are :data:`HOST_FINISH` (the device's) and
:data:`HOST_FINISH_NUMPY`; :func:`tail_plan` picks one for a backend.  The
driver calls :func:`augment_in_chunks` once G-PR stalls, and
:func:`deep_levels` / :func:`finish_on_host` for the caps on G-PR's own
relabels; `kern` is the backend's kernel set
(:func:`gpumatch.matching._driver.kernels_for`).
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np

from .. import _backend
from ._kernels_numpy import REACH_CHECK

__all__ = ["HOST_FINISH", "HOST_FINISH_BACKENDS", "HOST_FINISH_NUMPY", "tail_plan", "host_estimate",
           "deep_levels", "augment_in_chunks", "walks", "finish_on_host"]

#: The tail after G-PR on the device (``backend="cupy"``, see
#: :data:`HOST_FINISH_BACKENDS`).  Where augmenting paths are long
#: (shuffled block-triangular Jacobians, permuted chains) each
#: augmenting-path phase is a BFS of hundreds of levels that flips a few
#: paths, and the phases number in the thousands.  The phases run in
#: chunks (``chunk`` phases, then twice as many each time).  A tail that a
#: first chunk does not finish goes to push-relabel walks (``walks``;
#: ``walk.cu``, :func:`walks`): one thread carries each free column down
#: rows of least label, an atomic exchange at each step, at most
#: ``walk_cap`` times the relabel's depth in pushes, and a global relabel
#: between the rounds proves the end.  Where G-PR's relabels measured
#: distances of ``long_level`` or more (a phase is then a BFS of thousands
#: of levels), the walks start at once.  H200, block-triangular Jacobians
#: of 120k / 481k / 1.9M rows: 0.125 / 0.50 / 2.8 s by phases alone, 0.045 /
#: 0.077 / 0.16 s with the walks (5-6 rounds), 0.042 / 0.062 / 0.128 s with
#: ``walk_cap`` 2 rather than 4 (a walk that has not met a free row within
#: twice the depth is usually circling among its block's rows).
#:
#: The host (the compiled CPU engine, :mod:`gpumatch.matching._cpu`:
#: Karp–Sipser on top of the pairs, then Pothen–Fan+ / push-relabel) takes
#: the matching when the device's projected time passes the host's
#: estimate, ``fixed_s + entry_s * (nnz + m + n)`` (the copies both ways
#: included; None: never): without walks, after a chunk, from the columns
#: still to match (at most the active columns G-PR handed over less the
#: paths flipped since) at the last chunk's paths and seconds per phase;
#: with walks, from the third round at the rate of the rounds so far, or at
#: once when one relabel takes half the estimate (a chain of millions of
#: rows: a BFS of 10^5 levels and more; at ``level_s`` seconds per level,
#: the walks' relabels stop at that depth).  Random graphs, meshes and R-MAT
#: graphs converge within 12 phases (benchmarks/results), inside the first
#: chunk.  ``entry_s``: the engine's time per entry on the H200's host (16
#: cores) ran 25 ns (random 1M d5) to 175 ns (a permuted chain of 300k) and
#: 420 ns (a Jacobian of 1.9M rows).
#:
#: Deep searches before that: G-PR's global relabels together, and the
#: first chunk of phases, may each spend ``deep_share`` of the host's
#: estimate, counted in BFS levels (at least ``long_level``) at
#: ``level_s`` (a relabel's level) and ``aug_level_s`` (a phase's level,
#: both sides and a grid barrier) each; a relabel or a chunk that reaches
#: its cap stops there (the chunk flips the paths it found) and the host
#: finishes.  Where one augmenting path is tens of thousands of levels
#: long, the device would otherwise spend seconds on a tail that a
#: depth-first search walks in milliseconds: H200, shuffled staircases of
#: 300k rows, width 6 (7 phases of 40k levels) 1.36 -> 0.11 s, width 3
#: (G-PR's relabels 400k levels) 0.72 -> 0.07 s, with the host solving from
#: scratch; the host alone 0.07 and 0.05 s.  Jacobians, grids, random and
#: R-MAT graphs stay far below the caps (relabels of at most 520 levels in
#: all, first chunks of at most 7400).  H200: 1.4 us per relabel level
#: (staircase of width 3), 5.2-7.5 us per phase level (width 6).
HOST_FINISH = {"chunk": 16, "long_level": 1024, "fixed_s": 0.005, "entry_s": 150e-9, "walks": True,
               "walk_cap": 2, "level_s": 2e-6, "deep_share": 0.1, "aug_level_s": 5e-6}
#: The backends whose driver hands the tail to the host by the device's
#: plan :data:`HOST_FINISH` (tests add ``"numpy"`` to run that plan without
#: a GPU).
HOST_FINISH_BACKENDS = ("cupy",)
#: The tail's plan on the NumPy backend (None: the NumPy twin's phases
#: always finish, as they do when Numba does not import).  The kernels stay
#: twins of the device's; only this host-side choice differs.  A phase on
#: NumPy costs about ``level_s`` per BFS level (150-600 us on 5k-100k-row
#: graphs of a 2-core CPU, Python's overhead per level), so chains and
#: Jacobians, whose phases are hundreds of levels deep, ran 100x SciPy's
#: time and more (a shuffled ladder of 20k rows: 1.7 s in 4 phases).  The
#: compiled CPU engine takes the matching when the first phase alone would
#: cost more than the engine's estimate (``max_level * level_s``, from
#: G-PR's last exact relabel) or, after each chunk of phases, when the
#: columns left project past it at the phases' measured paths and levels.
#: The clock is the level count, not the wall time: the NumPy twin is
#: deterministic, and so is its hand-over.  Random graphs and meshes finish
#: by their own phases (a few levels each).
HOST_FINISH_NUMPY = {"chunk": 1, "fixed_s": 0.005, "entry_s": 150e-9, "walks": False, "phase_level_s": 150e-6}


def host_estimate(st, plan) -> float:
    """The host engine's estimated seconds for `st` under `plan`
    (``fixed_s + entry_s * (nnz + m + n)``; inf without ``entry_s``)."""
    if plan is None or plan.get("entry_s") is None:
        return math.inf
    return float(plan["fixed_s"]) + float(plan["entry_s"]) * (int(st.rind.shape[0]) + st.m + st.n)


def deep_levels(st, plan, level_key):
    """BFS levels the device may spend in one kind of deep search before
    the host takes over: ``deep_share`` of :func:`host_estimate` at
    ``plan[level_key]`` seconds per level, and at least ``long_level``
    (:data:`HOST_FINISH`); None (no cap) for a plan without ``deep_share``."""
    host_s = host_estimate(st, plan)
    if not math.isfinite(host_s) or plan.get("deep_share") is None:
        return None
    return max(int(plan.get("long_level") or 0), int(float(plan["deep_share"]) * host_s / float(plan[level_key])))


def tail_plan(backend):
    """The plan of the tail after G-PR on `backend`: :data:`HOST_FINISH`,
    :data:`HOST_FINISH_NUMPY` (NumPy, with Numba importable) or None."""
    if backend in HOST_FINISH_BACKENDS:
        return HOST_FINISH
    if backend == "numpy" and HOST_FINISH_NUMPY is not None and _backend.numba_available():
        return HOST_FINISH_NUMPY
    return None


_SUMMED = ("aug_phases", "aug_paths", "aug_levels", "aug_met", "aug_back_levels", "aug_orphan_deaths",
           "aug_closings", "aug_loop_launches")


def augment_in_chunks(st, kern, limit, n_active, plan, stats):
    """The tail after G-PR (:data:`HOST_FINISH`): augmenting-path phases in
    chunks; where they do not converge within the first chunk (or the
    relabels measured long distances), push-relabel walks (:func:`walks`);
    the host engine where the device's projected time passes the host's
    estimate.  Returns the phases' statistics, summed."""
    from . import _augment

    chunk = max(1, int(plan["chunk"]))
    long = int(stats.get("max_level", 0)) >= int(plan.get("long_level") or 1 << 62)
    use_walks = bool(plan.get("walks"))
    if long:
        chunk = 1
    host_s = host_estimate(st, plan)    # no entry_s: inf, never to the host
    first_cap = deep_levels(st, plan, "aug_level_s") if plan.get("aug_level_s") else None
    total: dict = {}
    # (NumPy, HOST_FINISH_NUMPY) a modelled clock: seconds per BFS level of a phase
    level_s = plan.get("phase_level_s")
    if level_s is not None and int(stats.get("max_level", 0)) * float(level_s) > host_s:
        finish_on_host(st, kern, stats, f"NumPy tail: G-PR's relabels measured distances of {int(stats['max_level'])} "
                                   f"levels, a phase of about {int(stats['max_level']) * float(level_s):.3f} s "
                                   f"against {host_s:.3f} s on the host")
        return dict(aug_converged=True, aug_certificate=None)
    while not (use_walks and long):
        budget = min(chunk, limit - total.get("aug_phases", 0))
        _backend.synchronize(st.backend)
        t = time.perf_counter()
        astats = _augment.augment(st, max_phases=budget, max_levels=first_cap if not total else None)
        _backend.synchronize(st.backend)
        t = time.perf_counter() - t
        if level_s is not None:
            t = float(level_s) * int(astats.get("aug_levels", 0) or 0)
        _add_phase_stats(total, astats)
        if astats.get("aug_converged") or total["aug_phases"] >= limit:
            return total
        if astats.get("aug_truncated"):   # a deep first chunk (HOST_FINISH, deep_share): the host finishes
            stats.update(total)
            finish_on_host(st, kern, stats, f"device tail: the first {total['aug_phases']} augmenting phases passed "
                                       f"{total['aug_levels']} BFS levels in {t:.3f} s ({total['aug_paths']} "
                                       f"paths), the cap for {plan['deep_share']:g} of the host's estimate "
                                       f"({host_s:.3f} s)", fresh=True)
            return dict(total, aug_converged=True, aug_certificate=None)
        if use_walks:
            break
        phases = max(1, int(astats.get("aug_phases", 0)))
        paths = int(astats.get("aug_paths", 0))
        left = max(1, n_active - total["aug_paths"])
        projected = left / max(paths / phases, 1.0 / phases) * (t / phases)
        if projected > host_s:
            where = "device" if level_s is None else "NumPy"
            reason = (f"{where} tail: {total['aug_phases']} augmenting phases flipped {total['aug_paths']} "
                      f"paths ({paths} in the last {phases}, {t / phases * 1e3:.2f} ms each); up to {left} "
                      f"columns left, projected {projected:.3f} s on the device against {host_s:.3f} s on "
                      f"the host")
            stats.update(total)
            finish_on_host(st, kern, stats, reason)
            return dict(total, aug_converged=True, aug_certificate=None)
        chunk *= 2
    stats.update(total)
    _augment.release(st)     # (invalidated: the walks need its memory more; a later phase builds a new one)
    how = walks(st, kern, plan, stats, host_s)
    if how == "maximum":
        return dict(total, aug_converged=True, aug_certificate=None)
    if how.startswith("host"):
        finish_on_host(st, kern, stats, how[len("host: "):])
        return dict(total, aug_converged=True, aug_certificate=None)
    # the walks stalled: the augmenting-path phases finish (they converge)
    return _add_phase_stats(total, _augment.augment(st, max_phases=limit))


def _add_phase_stats(total, astats):
    """Add one :func:`~gpumatch.matching._augment.augment` call's statistics
    to `total` (counts summed, outcomes from the latest call, the rest from
    the first) and return it."""
    for k in _SUMMED:
        total[k] = total.get(k, 0) + int(astats.get(k, 0) or 0)
    for k, v in astats.items():
        if k not in _SUMMED:
            total.setdefault(k, v)
            if k in ("aug_converged", "aug_certificate", "aug_cooperative", "aug_incremental"):
                total[k] = v
    return total


def walks(st, kern, plan, stats, host_s):
    """Rounds of push-relabel walks (``walk.cu``): exact labels and the free
    columns they reach (``relabel_collect``), then one walk per such
    column, each carrying its column (and the ones it displaces) down rows
    of least label until a free row, at most ``walk_cap`` times the
    relabel's depth in pushes; the mates follow.  Ends when a relabel finds
    no free column reachable (``"maximum"``: Berge), when two rounds in a
    row added no pair (``"stalled"``), or, from the third round, when the
    columns left at the rate measured so far project past `host_s`, or as
    soon as one relabel took half of `host_s` (``"host: <why>"``)."""
    t0 = time.perf_counter()
    first = prev = None
    stalls = 0
    stats.setdefault("walk_rounds", 0)
    stats.setdefault("walk_pushes", 0)
    stats.setdefault("walk_relabels", 0)
    # a relabel is a BFS of one launch or barrier per level: at ``level_s`` each, one of more than
    # this many steps (two levels each) would take half the host's estimate
    cap_steps = (None if not math.isfinite(host_s) else
                 max(REACH_CHECK, int(0.5 * host_s / (2.0 * float(plan.get("level_s", 2e-6))))))
    while True:
        t_r = time.perf_counter()
        # (reads the counts back: synchronises); a BFS past half the host's estimate stops there
        max_level, active = kern.relabel_collect(st, fix=True, max_steps=cap_steps)
        t_r = time.perf_counter() - t_r
        stats["walk_relabels"] += 1   # (``global_relabels`` stays G-PR's own count, one per ``active_history`` entry)
        stats["max_level"] = max(stats["max_level"], int(max_level))
        if st.extra.get("bfs_truncated"):
            return (f"host: device walks: a global relabel passed {2 * cap_steps} levels in {t_r:.3f} s, "
                    f"against {host_s:.3f} s on the host")
        length = int(active.shape[0])
        size = st.m - st.extra["free_rows"]
        if length == 0:
            stats["finished_by"] = "walks"
            st.extra["final_labels"] = True   # exact labels of the final matching: its König cover
            return "maximum"
        if t_r > 0.5 * host_s:   # a relabel as dear as half the host's whole finish (a BFS of 10^5+ levels: chains)
            return (f"host: device walks: a global relabel of {int(max_level)} levels took {t_r:.3f} s; "
                    f"{length} reachable free columns left, against {host_s:.3f} s on the host")
        if first is None:
            first = size
        if prev is not None and size <= prev:
            stalls += 1
            if stalls >= 2:
                return "stalled"
        else:
            stalls = 0
        elapsed = time.perf_counter() - t0
        if stats["walk_rounds"] >= 2 and size > first:
            projected = length * elapsed / (size - first)
            if projected > host_s:
                return (f"host: device walks: {stats['walk_rounds']} rounds matched {size - first} columns in "
                        f"{elapsed:.3f} s; {length} reachable free columns left, projected {projected:.3f} s "
                        f"on the device against {host_s:.3f} s on the host")
        cap = max(64, int(plan.get("walk_cap", 4)) * int(max_level))
        pushes, _ = kern.walk(st, active, cap)
        kern.walk_mates(st)
        stats["walk_rounds"] += 1
        stats["walk_pushes"] += int(pushes)
        prev = size


def finish_on_host(st, kern, stats, reason, fresh=False):
    """Finish the matching of a device state with the compiled CPU engine:
    the graph and the pairs are copied to the host, Karp–Sipser runs on top
    of the pairs, then Pothen–Fan+ / push-relabel (or the multi-threaded
    search on large graphs), and the maximum matching is copied back.

    With `fresh` the host solves from the empty matching instead, as its
    own backend does (the degree-one rule first): after a deep search
    (:data:`HOST_FINISH`, ``deep_share``) the device's pairs cut the
    degree-one cascades that solve such graphs on the host (the H200's
    host, a shuffled staircase of width 6 and 300k rows: ``time_host`` 156
    ms from the pairs, 46 ms from scratch, in two runs)."""
    from . import _augment, _cpu

    t0 = time.perf_counter()
    rind = _backend.to_numpy(st.rind)
    if fresh:   # (the device's pairs stay there)
        mu_row, mu_col = np.full(st.m, -1, dtype=rind.dtype), np.full(st.n, -1, dtype=rind.dtype)
    else:
        kern.fix_matching(st)   # only mutual pairs go over
        mu_row, mu_col = _backend.to_numpy(st.mu_row), _backend.to_numpy(st.mu_col)
    host = SimpleNamespace(m=st.m, n=st.n, rptr=_backend.to_numpy(st.rptr), rind=rind, cptr=_backend.to_numpy(st.cptr),
                           cind=_backend.to_numpy(st.cind), mu_row=mu_row, mu_col=mu_col)
    stats["host_fresh"] = bool(fresh)
    t1 = time.perf_counter()
    hstats = _cpu.run(host, init="greedy" if fresh else "karp_sipser")
    t2 = time.perf_counter()
    st.mu_row[...] = st.xp.asarray(host.mu_row)
    st.mu_col[...] = st.xp.asarray(host.mu_col)
    _augment.invalidate(st)
    stats["finished_by"] = "host"
    stats["switch_reason"] = (stats.get("switch_reason") or "") + ("; " if stats.get("switch_reason") else "") + reason
    stats["host_algorithm"] = hstats["algorithm"]
    stats["time_host_copy"] = (t1 - t0) + (time.perf_counter() - t2)
    stats["time_host"] = t2 - t1

"""The Numba backend of matching (``backend="numba"``): solves, the König
cover and the warm-up of the multi-threaded path.

The engine of :func:`gpumatch.matching.maximum_bipartite_matching`,
:func:`~gpumatch.matching.structural_rank`,
:func:`~gpumatch.matching.bipartite_matching` and
:class:`~gpumatch.matching.MatchingSolver` when ``backend="numba"`` (and of
``backend="auto"`` without a usable GPU).  Its sequential algorithms
(Karp–Sipser, Pothen–Fan+, push-relabel, the König cover) are in
:mod:`gpumatch._cpu_match`, below both solvers because maximum flow on unit
bipartite networks runs them too; their names are re-exported here.  The
multi-threaded Karp–Sipser and MS-BFS are in
:mod:`gpumatch.matching._cpu_parallel`.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from .. import _cpu_csr
from .._cpu_degree_one import degree_one
from .._cpu_match import (_S_GRAFTS, _S_PATHS, _S_PHASES, _S_PUSHES, _S_RELABELS, _S_WORK, TUNING,  # noqa: F401 (re-exported)
                          augment, free_degree, free_pair, global_relabel, greedy, initial_matching,
                          karp_sipser, konig_cover, least_degree_free_row, level_min, parallel_threads, pothen_fan,
                          push_relabel, row_search, greedy_probe)
from . import _cpu_parallel

__all__ = ["TUNING", "parallel_threads", "level_min", "degree_one", "initial_matching", "row_search", "karp_sipser",
           "greedy", "pothen_fan", "global_relabel", "push_relabel", "augment", "konig_cover", "run", "ensure_csc",
           "konig_cover_masks", "warm_up_threaded", "low_degree_share", "greedy_probe"]


def run(st, *, init="greedy", initial_col=None, parallel=True, **_ignored) -> dict:
    """Maximum matching of a :class:`~gpumatch.matching._driver.GPRState` on NumPy arrays, in place.

    The state may come without its CSC (``make_state(g, csc=False)``):
    it is built (:func:`ensure_csc`) unless the degree-one rule alone
    matches the smaller side.

    `init`: ``"greedy"`` runs Karp–Sipser's degree-one rule, a greedy pass
    (each free column takes its first free row) and then Karp–Sipser on the
    vertices left free (:func:`initial_matching`), ``"karp_sipser"`` the
    same without the greedy pass, ``"none"`` nothing (the multi-threaded
    path runs its Karp–Sipser for both); applied on top of `initial_col`
    (a validated warm start).  When the matching then covers the smaller
    side it is maximum and no search runs.  Then Pothen–Fan+, or on the
    multi-threaded path (:data:`TUNING`, :func:`parallel_threads`; never
    without `parallel`) the multi-threaded Karp–Sipser and MS-BFS; there,
    when at least ``TUNING["serial_init_share"]`` of the rows have at most
    two entries (chains: ladders, staircases), the serial initial matching
    runs in place of the multi-threaded Karp–Sipser (the degree-one rule
    peels a chain from its ends, where slices of the graph cut it: the
    shuffled ladder of 1M rows 0.63-0.73 s -> 0.12-0.13 s, staircase 500k
    0.29-0.35 -> 0.08 s, 2-core VM); else, with ``TUNING["greedy_probe"]``,
    a greedy pass over the rows (:func:`greedy_probe`) first, which gives
    up (undone) once more than ``TUNING["row_search_free"]`` of the smaller
    side stays free; where it does not, the search from the rows finishes
    without the CSC nor the threads.  Where it gives up and fewer than
    ``TUNING["greedy_first_share"]`` of the rows and of the columns have at
    most two entries (bands, meshes: no cascades for Karp–Sipser), a greedy
    pass over the columns runs before the threads' Karp–Sipser, after the
    degree-one rule (``TUNING["threads_degree_one"]``: a staircase cascades
    from its corner).  On the serial path, where fewer than
    ``TUNING["serial_bfs_share"]`` have, the search is MS-BFS on one thread
    instead of Pothen–Fan+.  Options
    of G-PR (`relabel_k`, `shrink_threshold`) are accepted and ignored.
    Returns the statistics (the keys of G-PR's where they apply).
    """
    t0 = time.perf_counter()
    if initial_col is not None:
        cols = np.flatnonzero(initial_col >= 0)
        rows = initial_col[cols]
        st.mu_col[cols] = rows
        st.mu_row[rows] = cols
    nnz = int(st.rind.shape[0])
    work = bool(st.m and st.n and nnz)
    nt = parallel_threads(nnz) if work and parallel else 0
    # chains: the serial initial matching (the degree-one rule, no CSC) before the threads' search
    rows_low = low_degree_share(st.m, st.rptr) if nt else None   # (the threads' path reads it twice)
    serial_init = bool(nt) and init != "none" and rows_low >= TUNING["serial_init_share"]
    threads_ks = nt >= 2 and TUNING["parallel_init"] and not serial_init
    first = "Karp-Sipser"
    ones = 0
    probed = False
    ruled = not threads_ks   # whether the cycle rule ran (the serial initial matching runs it)
    if work and init != "none" and threads_ks and TUNING["greedy_probe"]:
        # a greedy pass over the rows (the CSR) that gives up, undone, once more than row_search_free of
        # the smaller side stays free: where it does not, no CSC nor threads' Karp-Sipser is needed
        probed = greedy_probe(st.m, st.n, st.rptr, st.rind, st.mu_row, st.mu_col,
                              int(TUNING["row_search_free"] * min(st.m, st.n)))
        first = "greedy"
    if (nt and not serial_init and not probed) or init == "none":   # (else built when needed)
        ensure_csc(st)
    if work and init != "none" and not probed:
        if threads_ks:
            parts = []
            if init == "greedy" and _no_low_degree(st, TUNING["greedy_first_share"], rows_low):
                # (no cascades for the threads' Karp-Sipser to start: bands, meshes.)  With
                # threads_degree_one, the exact degree-one rule first, as on the serial path: a vertex of
                # degree one can start a cascade through the whole graph (a staircase of any width, from
                # its corner), which the greedy pass and the threads' slices would cut into long paths
                if TUNING["threads_degree_one"]:
                    ones, st.cptr, st.cind = degree_one(st.m, st.n, st.rptr, st.rind, st.mu_row, st.mu_col,
                                                        st.cptr, st.cind, cycles=TUNING["cycle_rule"])
                    ruled = True
                    parts += ["degree-one"] if ones else []
                if int(np.count_nonzero(st.mu_col >= 0)) < min(st.m, st.n):
                    greedy(st.m, st.n, st.cptr, st.cind, st.mu_row, st.mu_col)
                    parts.append("greedy")
            if not parts or int(np.count_nonzero(st.mu_col >= 0)) < min(st.m, st.n):
                _cpu_parallel.karp_sipser_parallel(st.m, st.n, st.rptr, st.rind, st.cptr, st.cind, st.mu_row,
                                                   st.mu_col, nt)
                parts.append(f"Karp-Sipser ({nt} threads)")
            first = " + ".join(parts)
        else:   # (builds the CSC only if the degree-one rule leaves work)
            first, ones, st.cptr, st.cind = initial_matching(st.m, st.n, st.rptr, st.rind, st.mu_row, st.mu_col,
                                                             st.cptr, st.cind, greedy_first=init == "greedy",
                                                             few_free=not nt)
    initial = int(np.count_nonzero(st.mu_col >= 0))
    t1 = time.perf_counter()
    raw = np.zeros(6, dtype=np.int64)
    search = "Pothen-Fan+"
    if work and initial == min(st.m, st.n):   # every vertex of the smaller side matched: maximum
        search = "none"
    elif work and st.cptr is None and row_search(st.m, st.n, st.rptr, st.rind, st.mu_row, st.mu_col, raw):
        search = "Pothen-Fan+ from the rows"    # (few left free: no CSC needed)
    elif work:
        rows_first = st.cptr is None            # (then the search from the rows ran out of its pass)
        ensure_csc(st)
        # the serial path: MS-BFS on one thread where Pothen-Fan+'s depth-first paths wander (bands, meshes)
        bfs = nt or int(_no_low_degree(st, TUNING["serial_bfs_share"]))
        if bfs:   # MS-BFS on `bfs` threads (one: inline)
            search = f"MS-BFS ({bfs} threads)"
            factor = TUNING["pf_budget"]
            code = _cpu_parallel.ms_bfs(st.m, st.n, st.cptr, st.cind, st.mu_row, st.mu_col, raw, bfs,
                                        level_min(bfs), bool(TUNING["parallel_handover"]),
                                        rptr=st.rptr, rind=st.rind, graft=int(TUNING["parallel_graft"]),
                                        budget=None if factor is None else int(factor * (st.m + st.n)))
            # past a budget (long paths), the threads' path tries the exact rules from scratch (the serial
            # path ran them first; not under init="none": a warm start stays the search's start)
            probe = (lambda: _exact_probe(st)) if nt and init != "none" and TUNING["cycle_rule"] and not ruled \
                else None
            if code == _cpu_parallel._R_BUDGET and probe is not None:
                got = probe()
                search += got
                if got.endswith("(maximum)"):
                    code = 0
            if code:   # handed over (narrow levels: Pothen-Fan+ first) or past its budget (push-relabel)
                search += " then " + augment(st.m, st.n, st.rptr, st.rind, st.cptr, st.cind, st.mu_row,
                                             st.mu_col, raw, pf=code != _cpu_parallel._R_BUDGET,
                                             probe=None if code == _cpu_parallel._R_BUDGET else probe)
        else:
            search = augment(st.m, st.n, st.rptr, st.rind, st.cptr, st.cind, st.mu_row, st.mu_col, raw)
        if rows_first:
            search = "Pothen-Fan+ from the rows, then " + search
    t2 = time.perf_counter()
    return {"backend": "numba", "initial_size": initial, "push_iterations": 0, "global_relabels": 0,
            "max_level": 0, "time_init": t1 - t0, "time_relabel": 0.0, "time_push": 0.0, "time_fix": 0.0,
            "time_augment": t2 - t1, "finished_by": "augmenting-paths", "switch_reason": None,
            "active_history": [], "algorithm": f"{first} + {search}" if init != "none" else search,
            "aug_phases": int(raw[_S_PHASES]), "aug_paths": int(raw[_S_PATHS]), "aug_grafts": int(raw[_S_GRAFTS]),
            "pr_relabels": int(raw[_S_RELABELS]), "pr_pushes": int(raw[_S_PUSHES]), "aug_work": int(raw[_S_WORK]),
            "degree_one_pairs": ones}


def _exact_probe(st) -> str:
    """After the threads' search ran past a budget (long augmenting paths),
    the exact rules from an empty matching: the degree-one rule with the
    cycle rule (:func:`gpumatch._cpu_degree_one.degree_one`), serial, on
    arrays of its own.  Their pairs replace the matching of `st` when they
    cover at least half the smaller side (a shuffled block triangular
    Jacobian is matched outright, where the search would need paths through
    its chains of blocks), then a greedy pass over the columns adds to
    them.  Returns what to add to the algorithm's name: ``" then
    degree-one (maximum)"`` when they cover the smaller side, ``" then
    degree-one + greedy"``, or ``""`` (`st` unchanged)."""
    mu_row = np.full(st.m, -1, st.mu_row.dtype)
    mu_col = np.full(st.n, -1, st.mu_col.dtype)
    pairs, _, _ = degree_one(st.m, st.n, st.rptr, st.rind, mu_row, mu_col, st.cptr, st.cind, cycles=True)
    if 2 * pairs < min(st.m, st.n):
        return ""
    st.mu_row[:] = mu_row
    st.mu_col[:] = mu_col
    if pairs == min(st.m, st.n):
        return " then degree-one (maximum)"
    greedy(st.m, st.n, st.cptr, st.cind, st.mu_row, st.mu_col)
    return " then degree-one + greedy"


def _no_low_degree(st, share, rows=None) -> bool:
    """Whether fewer than `share` of the rows and of the columns of `st`
    (its CSC built) have at most two entries: no cascades for Karp–Sipser,
    and Pothen–Fan+'s depth-first paths wander (bands, meshes).  `rows`:
    the rows' share when already known."""
    if share is None:
        return False
    rows = low_degree_share(st.m, st.rptr) if rows is None else rows
    return max(rows, low_degree_share(st.n, st.cptr)) < share


def low_degree_share(m, rptr) -> float:
    """The share of the `m` rows of the CSR pointers `rptr` (or columns of
    the CSC's) with at most two entries (what decides
    ``TUNING["serial_init_share"]`` and ``TUNING["greedy_first_share"]``)."""
    if m == 0:
        return 0.0
    return float(np.count_nonzero(np.diff(rptr) <= 2)) / m


def ensure_csc(st) -> None:
    """Give `st` its CSC (``cptr``, ``cind``: the rows of each column,
    ascending) if :func:`~gpumatch.matching._driver.make_state` left it
    out (``csc=False``)."""
    if st.cptr is None:
        st.cptr, st.cind = _cpu_csr.transpose(st.m, st.n, st.rptr, st.rind)


def warm_up_threaded(index_dtype=np.int32) -> bool:
    """Load (or compile, on a cold cache) the multi-threaded path's compiled
    functions on a small random graph, as a solve of a large one would.

    A small solve never takes that path (:data:`TUNING`), so a warm-up by a
    small solve would leave its first use inside a large solve.  This runs
    the greedy probe, the multi-threaded Karp–Sipser, then MS-BFS with every level handed to
    the threads and the hand-over to Pothen–Fan+, and the parallel
    transpose where :mod:`gpumatch._cpu_csr` would use it, with
    `index_dtype` indices.  Returns False (nothing run) where the path
    never runs: fewer Numba threads than ``TUNING["parallel_min_threads"]``,
    ``parallel_min_nnz`` None, or a thread of gpumatch's own pool.
    """
    nt = parallel_threads(TUNING["parallel_min_nnz"] or 0) if TUNING["parallel_min_nnz"] is not None else 0
    if nt < 2:
        return False
    rng = np.random.default_rng(0)
    m = n = 2000
    deg = 3
    rind = np.sort(rng.integers(0, n, size=(m, deg)), axis=1)
    keep = np.ones((m, deg), dtype=bool)
    keep[:, 1:] = rind[:, 1:] != rind[:, :-1]
    rptr = np.zeros(m + 1, dtype=index_dtype)
    np.cumsum(keep.sum(axis=1), out=rptr[1:])
    rind = rind[keep].astype(index_dtype)
    if int(numba.get_num_threads()) >= max(2, int(_cpu_csr.TUNING["transpose_min_threads"])):
        _cpu_csr.transpose_parallel(m, n, rptr, rind, nt)
    cptr, cind = _cpu_csr.transpose_serial(m, n, rptr, rind)
    mu_row = np.full(m, -1, dtype=index_dtype)
    mu_col = np.full(n, -1, dtype=index_dtype)
    greedy_probe(m, n, rptr, rind, mu_row, mu_col, 0)    # (gives up here: the matching stays empty)
    mu_row.fill(-1)
    mu_col.fill(-1)
    _cpu_parallel.karp_sipser_parallel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, nt)
    raw = np.zeros(6, dtype=np.int64)
    if _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, 1, True, rptr=rptr, rind=rind,
                            graft=int(TUNING["parallel_graft"])):
        augment(m, n, rptr, rind, cptr, cind, mu_row, mu_col, raw)
    # push-relabel, as a search past its budget runs it
    mu_row.fill(-1)
    mu_col.fill(-1)
    push_relabel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, raw)
    # the path from an empty matching too (MS-BFS alone, as without parallel_init)
    mu_row.fill(-1)
    mu_col.fill(-1)
    _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, 1, False, rptr=rptr, rind=rind,
                         graft=int(TUNING["parallel_graft"]))
    return True


def konig_cover_masks(st):
    """König cover (rows, columns masks) of the maximum matching in `st`."""
    zr = np.empty(st.m, dtype=np.bool_)
    zc = np.empty(st.n, dtype=np.bool_)
    if not konig_cover(st.m, st.n, st.rptr, st.rind, st.mu_row, st.mu_col, zr, zc):  # pragma: no cover
        raise RuntimeError("matching is not maximum: a free column is reachable")
    return ~zr, zc

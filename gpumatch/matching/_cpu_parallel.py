"""Multi-threaded path of the CPU engine (Python threads, compiled slices).

Taken by :func:`gpumatch.matching._cpu.run` in place of serial
Karp–Sipser + Pothen–Fan+ on large graphs when Numba has several threads
(:data:`gpumatch.matching._cpu.TUNING`), in two stages:

* :func:`karp_sipser_parallel`: the initial matching.  Each thread runs
  serial Karp–Sipser on its slice of the rows and columns, on shared arrays
  with plain stores (Numba has no compare-and-swap on the CPU); after the
  threads join, the pairs that both sides agree on are kept (see the notes
  above the function).  It leaves about as many pairs to the search as the
  serial heuristic (random 1M x 1M d5: 3 for serial Karp–Sipser, 1 to 10
  with 2 to 16 slices).
* :func:`ms_bfs`: the augmenting-path search, phases of a *multi-source
  BFS* (MS-BFS) with *tree grafting*, after Azad, Buluç and Pothen [1]_.
  A phase grows one alternating BFS tree per free column, level by level;
  the columns of a wide level are split between the threads (a narrow one
  is expanded by one thread, in the compiled loop of the phases), and each
  tree stops growing once it reaches a free row.  The trees' augmenting
  paths are then applied.  The trees that found none stay as they are for
  the next phase (they already hold every row they can reach); the rows of
  the others are renewed, and a renewed row next to a column of a kept
  tree is grafted onto it, from where that tree grows on.  Without it, the
  last phase of a search, the one that proves the matching maximum,
  re-grew a forest over the whole graph: random 1M x 1M d5, whose free
  columns are mostly ones that no maximum matching covers, spent half its
  search there (948k columns of 1.9M); with it, that phase expands almost
  nothing (search on 2 threads 0.16-0.17 -> 0.08-0.10 s).  When the kept
  trees hold few rows against the renewed ones (a perfect matching's
  search, Delaunay meshes), a fresh forest is cheaper and is grown
  instead.  On meshes, whose BFS levels are narrow and many, it hands the
  search over to Pothen–Fan+ (``handover``).

Claims, and why the result is exact: a row joins a tree by a
compare-and-swap on its ``visited`` stamp (:func:`_claim`, LLVM's
``cmpxchg``: Numba has no atomics on the CPU), so exactly one column of
one tree claims it, however many threads reach it in the same level.  The
trees are therefore vertex-disjoint, a row's ``parent`` and its mate's
``root`` are written by that one thread, a column enters a level at most
once, and the paths of one phase never meet (the augmentation still
checks each path against its tree).  The one benign race left is on
``leaf``: two threads may each find a free row for one tree, and either
store is a leaf of that tree.  A phase that finds no free row has grown
every kept tree as far as alternating paths go from every free column
(the kept trees' roots are all the free columns), which proves the
matching maximum (Berge).

Threads: the work is cut into slices, ``fn(k, nt, ...)`` compiled with
``nogil=True`` for slice ``k`` of ``nt``, that
:func:`gpumatch._cpu_threads.run_slices` runs at once on Python threads
(the caller's and a pool's); a round returns when every slice has, and
that join is the only barrier.  There are ``min(nt,
numba.get_num_threads())`` threads, `nt` being the engine's choice
(:func:`gpumatch.matching._cpu.parallel_threads`: ``numba.get_num_threads()``,
so ``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` steer it).  Nothing
here is compiled with Numba's ``parallel=True``: with ``prange`` the three
multi-threaded functions took 2.1-3.7 s each to compile on a cold cache,
and the first call on a 1M-edge graph with an empty Numba cache took 8.5
s, against 3.1 s now (2-core CPU, median of 5); the threads also run from
any thread and in a forked child.  A round costs about 50 µs of thread
hand-over on a 2-core CPU, and more on more threads (each pool thread
takes the GIL in turn to start its slice:
:func:`gpumatch._cpu_threads.round_cost`), which is why only MS-BFS levels
of at least :func:`gpumatch.matching._cpu.level_min` columns go to the
threads (grid 1000 x 1000: 70-220 such rounds a search).

Measured end to end (``bipartite_matching(A, backend="numba")`` as
``benchmarks/bench_cpu_numba.py --threads 1,2`` times it; 2-core CPU, 2
threads, the median over 6 processes of the median of 5 runs), serial
path against this one: random 1M x 1M d5 1.47 s against 0.50 s
(Karp–Sipser 0.70 -> 0.30 s, search 0.72 -> 0.17 s); Delaunay 1M 1.41
against 0.81 s (0.70 -> 0.26 s, 0.69 -> 0.49 s); grid 1000 x 1000 0.31
against 0.34 s (0.060 -> 0.032 s, 0.24 -> 0.29 s).  Against the
``prange`` version, run alternately with it: random and Delaunay the same
within the noise (0.49 and 0.85 s then), the grid 20-25 ms slower (0.31 s
then): about 220 wide levels, each paying the thread hand-over that
``prange``'s spinning threads did not.  With serial Karp–Sipser before
it, MS-BFS (then on ``prange``) on the 16-core device host took 0.25 s on
2 threads and 0.053 s on 16 for random 1M d5, against 0.70 s for
Pothen–Fan+.  With grafting and compare-and-swap claims (the same
measure, 2 rounds of 7 runs, alternating with the version before them):
random 1M d5 0.43-0.44 -> 0.39-0.41 s (search 0.15-0.17 -> 0.084-0.089
s), Delaunay 1M 0.78-0.82 -> 0.75-0.77 s, grid 0.35-0.37 -> 0.33-0.37 s
(serial 0.32-0.33 s: the grid still ties at best on 2 threads); the
first call on an empty Numba cache 3.0 -> 3.5 s.

References
----------
.. [1] A. Azad, A. Buluç and A. Pothen, "Computing maximum cardinality
   matchings in parallel on bipartite graphs via tree-grafting", IEEE TPDS
   28(1), 2017. :doi:`10.1109/TPDS.2016.2546258`
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import _cpu_threads
from .._cpu_csr import transpose_serial
from .._cpu_match import free_degree, free_pair, least_degree_free_row

__all__ = ["ms_bfs", "karp_sipser_parallel"]


@intrinsic
def _claim(typingctx, arr, idx, old, new):
    """``arr[idx] = new`` if it still holds `old`, atomically (LLVM's
    ``cmpxchg``): True for the one thread that did.  Numba has no
    compare-and-swap on the CPU; this is one instruction (``lock cmpxchg``
    on x86) inlined into the caller."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        arrty = sig.args[0]
        ary = context.make_array(arrty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arrty, ary, [args[1]])
        o = context.cast(builder, args[2], sig.args[2], arrty.dtype)
        v = context.cast(builder, args[3], sig.args[3], arrty.dtype)
        return builder.extract_value(builder.cmpxchg(ptr, o, v, "monotonic", "monotonic"), 1)

    return types.boolean(arr, idx, old, new), codegen


@numba.njit(cache=True, nogil=True)
def _expand(frontier, lo, hi, base, cptr, cind, mu_row, visited, parent, root, cvis, leaf, epoch, nxt, atomic):
    """Expand the columns ``frontier[lo:hi]`` of a BFS level (top-down):
    each unvisited row of a column joins the column's tree (claimed with a
    compare-and-swap when `atomic`, so exactly one column, of one tree,
    gets it), its mate goes to ``nxt[base:]``.  A tree stops growing once
    it has a free row (its leaf).  Returns how many new columns."""
    cnt = 0
    for i in range(lo, hi):
        c = frontier[i]
        rt = root[c]
        if leaf[rt] >= 0:
            continue                  # this tree has its augmenting path
        for p in range(cptr[c], cptr[c + 1]):
            r = cind[p]
            v = visited[r]
            if v == epoch:
                continue
            if atomic:
                if not _claim(visited, r, v, epoch):
                    continue          # another thread's column took it
            else:
                visited[r] = epoch
            parent[r] = c
            c2 = mu_row[r]
            if c2 < 0:
                leaf[rt] = r          # (two threads may each find one: either is a leaf of rt)
                break
            root[c2] = rt
            cvis[c2] = epoch
            nxt[base + cnt] = c2
            cnt += 1
    return cnt


@numba.njit(cache=True, nogil=True)
def _expand_slice(k, nt, frontier, nf, cptr, cind, mu_row, visited, parent, root, cvis, leaf, epoch, nxt, counts):
    """Slice `k` of `nt` of a wide BFS level (one thread's share): the
    k-th slice of ``frontier[:nf]``, its new columns to ``nxt[k * stride:]``
    (`stride`: ``nxt``'s length over `nt`), their number to ``counts[k]``."""
    stride = nxt.shape[0] // nt
    counts[k] = _expand(frontier, nf * k // nt, nf * (k + 1) // nt, k * stride, cptr, cind, mu_row, visited, parent,
                        root, cvis, leaf, epoch, nxt, True)


# ``_bfs_run``'s state between its calls (an int64 array) ...
_PHASE, _LEVEL, _NR, _NF, _WIDE, _NARROW, _MODE, _EPOCH, _GRAFTS, _WORK, _BUDGET = range(11)
# ... where it goes on from (``_MODE``) ...
_M_PHASE, _M_LEVEL, _M_GATHER = range(3)
# ... and why it returned
_R_MAXIMUM, _R_HANDOVER, _R_WIDE, _R_BUDGET = range(4)


@numba.njit(cache=True, nogil=True)
def _bfs_run(m, n, rptr, rind, cptr, cind, mu_row, mu_col, stats, nt, par_min, handover, graft, state, visited,
             parent, root, cvis, leaf, renew, frontier, nxt, counts, roots):
    """The MS-BFS phases of :func:`ms_bfs`, serially, until a level of at
    least `par_min` columns is next (with ``nt > 1``: returns ``_R_WIDE``
    with ``frontier[:state[_NF]]`` to expand, by :func:`_expand_slice` on
    the threads; the next call goes on from there) or the search ends
    (``_R_MAXIMUM``, ``_R_HANDOVER``).  `state` keeps the phase, level,
    counts and the epoch of ``visited`` / ``cvis`` between the calls."""
    phase = state[_PHASE]
    level = state[_LEVEL]
    nr = state[_NR]
    nf = state[_NF]
    wide = state[_WIDE]                   # columns expanded in levels of at least par_min, and in the others
    narrow = state[_NARROW]
    mode = state[_MODE]
    epoch = np.int32(state[_EPOCH])
    stride = nxt.shape[0] // nt
    code = _R_MAXIMUM
    while True:
        if mode == _M_GATHER:             # the next level (no column twice: each row has one claimer)
            level += 1
            nf = 0
            for k in range(nt):
                b = k * stride
                for j in range(counts[k]):
                    frontier[nf] = nxt[b + j]
                    nf += 1
            mode = _M_LEVEL
        elif mode == _M_PHASE:            # a fresh forest: one tree per free column, every row unvisited
            phase += 1
            epoch += 1
            nr = 0
            for c in range(n):
                if mu_col[c] < 0 and cptr[c + 1] > cptr[c]:
                    root[c] = c
                    cvis[c] = epoch
                    leaf[c] = -1
                    roots[nr] = c
                    nr += 1
            if nr == 0:
                code = _R_MAXIMUM
                break
            nf = nr
            for i in range(nr):           # (loops, not slice stores: these cost 1.4 s of compilation)
                frontier[i] = roots[i]
            wide = 0
            narrow = 0
            mode = _M_LEVEL
        elif nf > 0:                      # expand a level
            if nf >= par_min:
                wide += nf
            else:
                narrow += nf
            mode = _M_GATHER
            if nt > 1 and nf >= par_min:
                code = _R_WIDE            # for the threads
                break
            for k in range(1, nt):
                counts[k] = 0
            zero = np.int64(0)            # (not a literal 0: the same specialisation as _expand_slice's)
            counts[0] = _expand(frontier, zero, nf, zero, cptr, cind, mu_row, visited, parent, root, cvis, leaf,
                                epoch, nxt, False)
        else:
            # the forest is grown: apply each tree's path (the trees are
            # vertex-disjoint, so the paths are; checked all the same)
            paths = 0
            for i in range(nr):
                r = leaf[roots[i]]
                if r < 0:
                    continue
                ok = True
                x = r
                while True:                # check: a path of the tree, down to its root
                    c = parent[x]
                    if root[c] != roots[i]:
                        ok = False
                        break
                    x = mu_col[c]
                    if x < 0:
                        break
                if not ok:                 # pragma: no cover - exclusive claims keep the trees apart
                    leaf[roots[i]] = -1
                    continue
                x = r
                while True:                # flip: each column takes the row below it
                    c = parent[x]
                    nx_ = mu_col[c]
                    mu_col[c] = x
                    mu_row[x] = c
                    if nx_ < 0:
                        break
                    x = nx_
                paths += 1
            stats[0] += 1
            stats[1] += paths
            if paths == 0:
                code = _R_MAXIMUM
                break
            state[_WORK] += wide + narrow
            if handover and narrow > wide:
                code = _R_HANDOVER
                mode = _M_PHASE
                break
            if 0 <= state[_BUDGET] < state[_WORK]:
                code = _R_BUDGET
                mode = _M_PHASE
                break
            # tree grafting: keep the trees that found no path (active),
            # renew the rows of the others, and graft onto an active tree
            # each renewed row next to one of its columns
            kept = 0
            for i in range(nr):            # the roots left: the active trees'
                if leaf[roots[i]] < 0:
                    roots[kept] = roots[i]
                    kept += 1
            nr = kept
            na = 0                         # rows of active trees, and renewable ones, in a sample
            nrn = 0
            step = max(1, m // 4096)
            if graft and nr:
                for r in range(0, m, step):
                    if visited[r] == epoch:
                        if leaf[root[parent[r]]] >= 0:
                            nrn += 1
                        else:
                            na += 1
            if not graft or nr == 0 or na * graft < nrn:
                mode = _M_PHASE            # few active rows: a fresh forest
                continue
            nrn = 0
            for r in range(m):
                if visited[r] == epoch and leaf[root[parent[r]]] >= 0:
                    visited[r] = 0         # renewable (0: no epoch; epochs start at 1)
                    renew[nrn] = r
                    nrn += 1
            phase += 1
            state[_GRAFTS] += 1
            nf = 0
            for i in range(nrn):           # bottom-up: an active column next to the row takes it
                r = renew[i]
                for p in range(rptr[r], rptr[r + 1]):
                    c = rind[p]
                    if cvis[c] != epoch:
                        continue
                    rt = root[c]
                    if leaf[rt] >= 0:
                        continue
                    visited[r] = epoch
                    parent[r] = c
                    c2 = mu_row[r]
                    if c2 < 0:
                        leaf[rt] = r
                    else:
                        root[c2] = rt
                        cvis[c2] = epoch
                        frontier[nf] = c2
                        nf += 1
                    break
            wide = 0
            narrow = 0
            mode = _M_LEVEL
    state[_PHASE] = phase
    state[_LEVEL] = level
    state[_NR] = nr
    state[_NF] = nf
    state[_WIDE] = wide
    state[_NARROW] = narrow
    state[_MODE] = mode
    state[_EPOCH] = epoch
    return code


def ms_bfs(m, n, cptr, cind, mu_row, mu_col, stats, nt, par_min, handover=False, *, rptr=None, rind=None, graft=5,
           budget=None):
    """MS-BFS phases from every free column, with tree grafting, until a
    phase reaches no free row.  A level of at least `par_min` columns is
    split between `nt` slices, run on ``min(nt, numba.get_num_threads())``
    threads (:func:`gpumatch._cpu_threads.run_slices`); a smaller one is
    expanded by one, in the compiled loop of the phases (:func:`_bfs_run`),
    which returns to Python only for a wide level (a round of the threads
    costs more than it saves on a small level).

    `cptr` / `cind`: the rows of each column; `rptr` / `rind` the columns
    of each row (for grafting; computed when not given); `mu_row` /
    `mu_col` a consistent matching, extended in place.  ``stats[0]`` +=
    phases, ``stats[1]`` += augmenting paths, ``stats[2]`` += phases that
    grafted (rather than grew a fresh forest).

    After a phase that augmented, the trees that found no augmenting path
    stay (their rows and columns keep their tree), the rows of the others
    are renewed, and a renewed row next to a column of a kept tree is
    grafted onto it; the next phase grows the kept trees from there.  With
    fewer kept rows than renewed ones over `graft` (0: never), the next
    phase grows a fresh forest from every free column instead.

    With `handover`, the search stops after a phase that augmented and
    expanded more columns in narrow levels (fewer than `par_min` columns)
    than in wide ones, and returns ``_R_HANDOVER`` (1): the matching is
    then not proved maximum, and the caller finishes it with Pothen–Fan+.
    With a `budget` (columns expanded, over all phases), the search stops
    after a phase that augmented once the phases have expanded more, and
    returns ``_R_BUDGET`` (3): long augmenting paths, where a phase costs
    a search of much of the graph for a few paths, and the caller
    finishes with push-relabel.  Returns ``_R_MAXIMUM`` (0, falsy) when a
    phase found no augmenting path (the matching is maximum).
    """
    nt = max(1, int(nt))
    threads = min(nt, int(numba.get_num_threads()))
    if rptr is None:
        rptr, rind = transpose_serial(n, m, cptr, cind)
    visited = np.zeros(m, np.int32)       # epoch stamp: the row is in a tree
    parent = np.empty(m, np.int32)        # column that reached the row
    root = np.empty(n, np.int32)          # tree of each column in a tree
    cvis = np.zeros(n, np.int32)          # epoch stamp: the column is in a tree
    leaf = np.full(n, -1, np.int32)       # free row found by each tree (by root)
    renew = np.empty(m, np.int32)
    frontier = np.empty(n, np.int32)
    nxt = np.empty(n * nt, np.int32)      # slice k's new columns at nxt[k * n:]
    counts = np.zeros(nt, np.int64)
    roots = np.empty(n, np.int32)
    state = np.zeros(11, np.int64)
    state[_BUDGET] = -1 if budget is None else int(budget)
    par_min = int(par_min)
    handover = bool(handover)
    graft = int(graft)
    while True:
        code = _bfs_run(m, n, rptr, rind, cptr, cind, mu_row, mu_col, stats, nt, par_min, handover, graft, state,
                        visited, parent, root, cvis, leaf, renew, frontier, nxt, counts, roots)
        if code != _R_WIDE:
            stats[2] += state[_GRAFTS]
            return code
        _cpu_threads.run_slices(nt, _expand_slice, frontier, int(state[_NF]), cptr, cind, mu_row, visited, parent,
                                root, cvis, leaf, np.int32(state[_EPOCH]), nxt, counts, threads=threads)


# ---------------------------------------------------------------------------
# multi-threaded Karp–Sipser (the initial matching of the parallel path)
# ---------------------------------------------------------------------------
#
# Arrays (all shared by the threads unless said otherwise):
#
# * ``mu_row`` (m) / ``mu_col`` (n): the matching, written with plain stores;
# * ``deg`` (m + n): free degree of each vertex (rows ``0..m-1``, columns
#   ``m..m+n-1``), a heuristic only: plain read-modify-write decrements;
# * ``stack`` (per thread, its own allocation): the thread's degree-one
#   vertices still to process (a vertex goes on the stack of the thread whose
#   decrement left it one free neighbour).
#
# Thread mapping: thread k owns the k-th slice of the rows and the k-th
# slice of the columns (contiguous ranges, which keeps a mesh's threads
# apart).  It runs the serial algorithm of ``_cpu.karp_sipser`` on them, in
# two stages with a barrier between them (two rounds of the threads, joined
# between them; a round before them counts the degrees): first its
# degree-one rows and columns, then each free column of its slice takes its
# free row of least degree; after every pair, the degree-one vertices that
# the pair made are paired first (depth first, on the thread's stack).  A
# cascade crosses into any slice.  The barrier keeps serial Karp–Sipser's
# order where it matters most: no free column chooses before every
# degree-one vertex of the start is paired (without it, a slice that runs
# late, as on a busy machine, found its degree-one rows' only columns
# taken: random 1M d5 cut into 4 slices on 2 threads left 6760 pairs to the
# search instead of 1 to 7).  Odd slices sweep their columns downwards: on
# a mesh numbered row by row, a slice sweeping upwards into its upper
# neighbour's region, which that neighbour's cascades have already paired
# in their own pattern, strands free columns there; sweeping towards each
# other (or apart) does not.  Grid 1000 x 1000 (10 % dropped), with the
# slices emulated perfectly concurrent, one pair at a time: 16 slices leave
# 572 pairs fewer than serial Karp–Sipser instead of 1828, 2 slices 175
# more instead of 159 fewer; random and Delaunay graphs (numbered without
# locality) do not care.
#
# Benign races: two threads may pair the same row or column at about the
# same time (each saw it free), and two decrements of one degree may lose
# one (the degree stays too high) or count one neighbour twice.  Neither
# makes the run wrong, only the heuristic less exact: the degrees steer the
# choices and are never trusted (a vertex's free neighbour is looked up in
# ``mu_row`` / ``mu_col``), and after the threads join (a barrier), a last
# round (``_ks_agree``) keeps exactly the pairs stored both ways
# (``mu_row[r] == c`` and ``mu_col[c] == r``) and frees the rest, which
# leaves a consistent matching of stored entries for the search to extend.  On random 1M x 1M d5 such
# conflicts drop a pair or none.


@numba.njit(cache=True, nogil=True)
def _ks_pair(m, r, c, rptr, rind, cptr, cind, mu_row, mu_col, deg, stack, top):
    """Pair row `r` with column `c`; each free neighbour loses a degree, and
    those left with one go on `stack` (dropped when it is full: a missed
    forced move, nothing else).  Returns the new stack top."""
    mu_row[r] = c
    mu_col[c] = r
    cap = stack.shape[0]
    for p in range(rptr[r], rptr[r + 1]):
        x = rind[p]
        if mu_col[x] < 0:
            d = deg[m + x] - 1            # (benign race: see above)
            deg[m + x] = d
            if d == 1 and top < cap:
                stack[top] = m + x
                top += 1
    for p in range(cptr[c], cptr[c + 1]):
        x = cind[p]
        if mu_row[x] < 0:
            d = deg[x] - 1
            deg[x] = d
            if d == 1 and top < cap:
                stack[top] = x
                top += 1
    return top


@numba.njit(cache=True, nogil=True)
def _ks_share(k, nt, stage, m, n, rptr, rind, cptr, cind, mu_row, mu_col, deg):
    """One stage of Karp–Sipser on thread `k`'s slice of the rows and columns (of `nt`).

    Stage 1: each degree-one row, then column, of the slice is paired with
    its free neighbour.  Stage 2: each free column of the slice (upwards,
    downwards in odd slices) takes its free row of least degree.  After
    every pair, the degree-one vertices that it made (on the thread's
    stack) are paired first, depth first.  One call site of ``_ks_pair``.
    """
    stack = np.empty(max(1024, (m + n) // nt) + 1, deg.dtype)
    top = 0
    rlo, rhi = m * k // nt, m * (k + 1) // nt
    clo, chi = n * k // nt, n * (k + 1) // nt
    v1 = rlo if rlo < rhi else m + clo    # stage 1 scan: rows rlo..rhi-1, then columns
    if stage != 1:
        v1 = m + chi
    down = (k & 1) == 1                   # stage 2 scan of the free columns: odd slices downwards
    if stage == 2:
        nxt = chi - 1 if down else clo
    else:
        nxt = clo - 1 if down else chi    # (done)
    while True:
        r = -1
        c = -1
        while top > 0 and r < 0:
            top -= 1
            v = stack[top]
            if deg[v] == 1:
                r, c = free_pair(v, m, rptr, rind, cptr, cind, mu_row, mu_col)
        if r < 0 and v1 < m + chi:
            while v1 < m + chi:
                v = v1
                v1 += 1
                if v1 == rhi:
                    v1 = m + clo
                if deg[v] == 1 and ((v < m and mu_row[v] < 0) or (v >= m and mu_col[v - m] < 0)):
                    stack[0] = v
                    top = 1
                    break
            if top > 0:
                continue
        if r < 0:
            if down:
                while nxt >= clo and (mu_col[nxt] >= 0 or deg[m + nxt] <= 0):
                    nxt -= 1
                if nxt < clo:
                    break
            else:
                while nxt < chi and (mu_col[nxt] >= 0 or deg[m + nxt] <= 0):
                    nxt += 1
                if nxt == chi:
                    break
            c = nxt
            r = least_degree_free_row(c, cptr, cind, mu_row, deg)
            if r < 0:                     # its rows were taken meanwhile
                deg[m + c] = 0
                continue
        top = _ks_pair(m, r, c, rptr, rind, cptr, cind, mu_row, mu_col, deg, stack, top)


@numba.njit(cache=True, nogil=True)
def _ks_degrees(k, nt, fresh, m, n, rptr, rind, cptr, cind, mu_row, mu_col, deg):
    """Slice `k` of `nt`: the free degrees of its rows and columns (with
    `fresh`, no pair yet: the degrees, no scan of the edges)."""
    for r in range(m * k // nt, m * (k + 1) // nt):
        if fresh:
            deg[r] = rptr[r + 1] - rptr[r]
        else:
            deg[r] = free_degree(r, rptr, rind, mu_col) if mu_row[r] < 0 else 0
    for c in range(n * k // nt, n * (k + 1) // nt):
        if fresh:
            deg[m + c] = cptr[c + 1] - cptr[c]
        else:
            deg[m + c] = free_degree(c, cptr, cind, mu_row) if mu_col[c] < 0 else 0


@numba.njit(cache=True, nogil=True)
def _ks_agree(k, nt, m, n, mu_row, mu_col, dropped):
    """Slice `k` of `nt`, after the stages: keep the pairs of its rows and
    columns stored both ways, free the rest (``dropped[k]``: columns freed).

    Race-free although the slices run at once: each entry is written by
    its own slice only, a pair stored both ways is never written (an entry
    changes only when the other side disagrees, and neither side of such a
    pair changes first), and an entry that disagrees keeps disagreeing (the
    other side can only turn to -1), so each decision is the one that two
    passes one after the other would take."""
    for r in range(m * k // nt, m * (k + 1) // nt):
        c = mu_row[r]
        if c >= 0 and mu_col[c] != r:
            mu_row[r] = -1
    cnt = 0
    for c in range(n * k // nt, n * (k + 1) // nt):
        r = mu_col[c]
        if r >= 0 and mu_row[r] != c:
            mu_col[c] = -1
            cnt += 1
    dropped[k] = cnt


def karp_sipser_parallel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, nt):
    """Karp–Sipser on `nt` slices, on top of the pairs in `mu_row` / `mu_col`.

    Each slice runs the serial algorithm (:func:`gpumatch.matching._cpu.karp_sipser`)
    on its share of the rows and columns, on shared arrays with plain
    stores, on ``min(nt, numba.get_num_threads())`` threads
    (:func:`gpumatch._cpu_threads.run_slices`): a round for the degrees,
    one per stage (the join between rounds is the barrier), then one that
    keeps the pairs that both sides agree on (the header comment above says
    why that is exact).

    Parameters
    ----------
    m, n : int
        Rows and columns.
    rptr, rind, cptr, cind : ndarray
        The CSR (columns of each row) and CSC (rows of each column) patterns.
    mu_row, mu_col : ndarray
        A consistent matching (``-1``: free), extended in place.
    nt : int
        Slices, at least 1.

    Returns
    -------
    int
        Columns whose pair the consistency pass dropped (their row had
        been paired again by another thread): free again, for the search.
    """
    nt = max(1, int(nt))
    threads = min(nt, int(numba.get_num_threads()))
    deg = np.empty(m + n, cptr.dtype)
    fresh = not bool((mu_row >= 0).any())
    _cpu_threads.run_slices(nt, _ks_degrees, fresh, m, n, rptr, rind, cptr, cind, mu_row, mu_col, deg,
                            threads=threads)
    for stage in (1, 2):                  # a barrier between the stages
        _cpu_threads.run_slices(nt, _ks_share, stage, m, n, rptr, rind, cptr, cind, mu_row, mu_col, deg,
                                threads=threads)
    dropped = np.zeros(nt, np.int64)
    _cpu_threads.run_slices(nt, _ks_agree, m, n, mu_row, mu_col, dropped, threads=threads)
    return int(dropped.sum())

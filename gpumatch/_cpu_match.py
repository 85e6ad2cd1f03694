"""Compiled CPU maximum bipartite matching: the sequential engine (Numba).

The engine of :func:`gpumatch.matching.maximum_bipartite_matching`,
:func:`~gpumatch.matching.structural_rank`,
:func:`~gpumatch.matching.bipartite_matching` and
:class:`~gpumatch.matching.MatchingSolver` when ``backend="numba"`` (and of
``backend="auto"`` without a usable GPU), through
:mod:`gpumatch.matching._cpu`, and of maximum flow on unit bipartite
networks (:mod:`gpumatch.flow._cpu_unit`): it sits below both solvers, so
that flow and matching meet here and not in each other.  Sequential CPU
algorithms that win on a CPU, after Duff, Kaya and Uçar [1]_:

* ``greedy_cover``: from an empty matching (no CSC, not tall), a greedy
  pass over the rows first, kept when it matches every non-empty row
  (maximum by counting: a ladder shuffled by rows only, 17-24 -> 3-6 ms
  at 300k rows); else undone, or carried on where no vertex has one entry;
* ``degree_one`` (:mod:`gpumatch._cpu_degree_one`): Karp–Sipser's
  degree-one rule alone, first (exact: it never lengthens a later
  augmenting path), on the CSR and compact records
  (the CSC is built only when needed, :func:`initial_matching`): shuffled
  ladders and staircases are matched by it alone, with no greedy pass and
  no search (the shuffled ladder of 300k rows end to end 0.24 s -> 21-24
  ms on a 2-core VM, column-shuffled 29 -> 11-15 ms);
* ``greedy`` then ``karp_sipser``: a greedy pass (each free column takes
  its first free row), then the Karp–Sipser heuristic [2]_ on the vertices
  it left free (a vertex with one free neighbour left is matched to it;
  when there is none, a free column takes its free row of least remaining
  degree), O(nnz).  Karp–Sipser from an empty matching touches both
  adjacencies of every pair it makes; the greedy pass first is 5-10x
  cheaper on shuffled inputs (a 2-core CPU: arrowhead and block-diagonal
  100k 27-64 -> 3 ms, banded 40 -> 18 ms, a block-triangular Jacobian of
  120k rows 0.17 -> 0.16 s end to end of the serial engine; a shuffled
  chain of 300k rows, which Karp–Sipser alone solves by its degree-one
  rule, 0.14-0.26 -> 0.19-0.23 s);
* ``pothen_fan`` (:mod:`gpumatch._cpu_augment`, with ``push_relabel``,
  re-exported here): Pothen–Fan+ [3]_ (PF+): phases of vertex-disjoint
  depth-first searches for augmenting paths from every free column, with
  *lookahead* (a column first looks for a free row among its remaining
  rows, each row looked at once per column over the whole run) and
  *fairness* (the searches scan the rows of a column forwards in odd phases
  and backwards in even ones).  The run stops after a phase that finds no
  augmenting path, which proves the matching maximum (Berge).
* ``push_relabel``: push-relabel with global relabels [4]_, which takes
  over from Pothen–Fan+ once its phases have looked at more than
  ``TUNING["pf_budget"]`` times ``nnz + m + n`` edges (``augment``).  Where
  augmenting paths are long (shuffled block-triangular Jacobians: a phase
  of Pothen–Fan+ there searches most of the graph for one or two paths)
  its exact labels lead each free column along a shortest path: the
  Jacobian of 120k rows and 481k entries 6.9 -> 0.2 s, of 481k rows 214 ->
  0.7 s (serial, 2-core CPU).  Random graphs and meshes finish within the
  budget, as before.

On graphs of at least 1M edges with at least 2 Numba threads
(:data:`TUNING`, :func:`parallel_threads`) both stages run multi-threaded
instead (:mod:`gpumatch.matching._cpu_parallel`): Karp–Sipser on slices of
the graph, then a multi-source BFS (MS-BFS) with tree grafting that hands
over to PF+ on meshes (and to push-relabel past its budget), on Python
threads running compiled code without the GIL
(:mod:`gpumatch._cpu_threads`; ``numba.get_num_threads()`` of them).
Random 1M x 1M d5 on 2 threads: 0.39-0.41 s end to end instead of 1.3-1.4 s.

A König cover for ``certificate=True`` comes from one alternating BFS from
the free rows (``konig_cover``).  The dynamic solver keeps its surviving
pairs and runs PF+ (then push-relabel) from its free columns (serially, whatever the size; a
solve from scratch takes the multi-threaded path where it applies).

All functions are ``numba.njit(cache=True)``; they specialise on the index
dtype of the graph (int32 for every graph below 2**31 entries).

References
----------
.. [1] I. S. Duff, K. Kaya and B. Uçar, "Design, implementation, and analysis
   of maximum transversal algorithms", ACM Trans. Math. Softw. 38(2), 2011.
   :doi:`10.1145/2049673.2049677`
.. [2] R. M. Karp and M. Sipser, "Maximum matchings in sparse random graphs",
   FOCS 1981. :doi:`10.1109/SFCS.1981.21`
.. [3] A. Pothen and C.-J. Fan, "Computing the block triangular form of a
   sparse matrix", ACM Trans. Math. Softw. 16(4), 1990.
   :doi:`10.1145/98267.98287`
.. [4] K. Kaya, J. Langguth, F. Manne and B. Uçar, "Push-relabel based
   algorithms for the maximum transversal problem", Computers & Operations
   Research 40(5), 2013. :doi:`10.1016/j.cor.2012.12.009`
"""

from __future__ import annotations

import numba
import numpy as np

from . import _cpu_csr, _cpu_threads
from ._cpu_augment import (_S_GRAFTS, _S_PATHS, _S_PHASES, _S_PUSHES, _S_RELABELS, _S_WORK,  # noqa: F401 (re-exported)
                           global_relabel, pothen_fan, push_relabel)   # the searches (their module)
from ._cpu_degree_one import degree_one

__all__ = ["TUNING", "parallel_threads", "level_min", "initial_matching", "greedy_cover", "greedy_probe", "row_search", "karp_sipser", "greedy", "pothen_fan", "global_relabel",
           "push_relabel", "augment", "konig_cover"]

#: When the engine runs multi-threaded (:func:`parallel_threads`): on
#: graphs with at least ``parallel_min_nnz`` edges (None: never) when Numba
#: has at least ``parallel_min_threads`` threads (``numba.get_num_threads()``:
#: ``NUMBA_NUM_THREADS``, or ``numba.set_num_threads`` in the calling
#: thread), from any thread (Python threads of :mod:`gpumatch._cpu_threads`,
#: not Numba's ``parallel=True``; a thread of gpumatch's own pool stays
#: serial).  The multi-threaded path replaces Karp–Sipser by
#: :func:`gpumatch.matching._cpu_parallel.karp_sipser_parallel` (with
#: ``parallel_init``; never on one thread) and Pothen–Fan+ by the MS-BFS of
#: :func:`~gpumatch.matching._cpu_parallel.ms_bfs`, whose BFS levels of at
#: least :func:`level_min` columns (``parallel_level_min`` on 2 threads)
#: are split between the threads; with ``parallel_handover``, Pothen–Fan+
#: finishes the search once MS-BFS's levels turn narrow (meshes);
#: ``parallel_graft`` steers its tree grafting.
#:
#: What the default (1M edges, 2 threads) trades.  The serial path is
#: Karp–Sipser (memory-latency bound: 0.6-0.9 s on random 1M x 1M d5) +
#: Pothen–Fan+ (0.6-0.7 s there); the multi-threaded one splits both between
#: the threads, but the matching it returns (a maximum one) may differ from
#: run to run.  End to end (``benchmarks/bench_cpu_numba.py --threads 1,2``,
#: 2-core CPU, median of 5, then over 6 processes): random 1M d5 1.47 ->
#: 0.50 s, Delaunay 1M 1.41 -> 0.81 s, grid 1000 x 1000 0.31 -> 0.34 s (the
#: search hands over to Pothen–Fan+; the grid's ~220 wide levels pay a
#: thread hand-over each).  The 1M-edge threshold is conservative: on 2
#: threads the path already wins or ties at 250k-300k edges (random 50k d5
#: 6.7 -> 4.6 ms, Delaunay 50k 9.2 -> 9.0 ms, grid 300 x 300 11.3 -> 7.5
#: ms), but its matching varies from run to run and small graphs gain little
#: in absolute terms.  On one thread MS-BFS after serial Karp–Sipser beats
#: Pothen–Fan+ on random graphs (1.33 -> 1.04 s) but not on Delaunay (1.38
#: -> 1.70 s) or the grid (0.32 -> 0.47 s), so one thread stays serial.
#: ``parallel_level_min``: a round of the threads costs about 50 µs of
#: hand-over (a thread pool's wake-up and join, 2-core CPU), a level of 4096
#: grid columns about 0.1 ms of work; handing only levels of 8192 / 16384 /
#: 32768 columns to the threads (MS-BFS on 2 threads after serial
#: Karp–Sipser, median of 7, the hand-over rule unchanged) made grid 1000 x
#: 1000 0.13-0.15 -> 0.14-0.18 / 0.18 / 0.22 s and Delaunay 1M 0.55-0.59
#: -> 0.61 / 0.60 / 0.70 s, random 1M d5 flat (0.22 s); 2048 ties with
#: 4096 on the grid.
#: Since then the claims of MS-BFS are compare-and-swaps (no column twice
#: in a level) and the phases graft; 4096 stays the 2-thread value (a
#: sweep of 4096 / 8192 / 16384 / 32768 on the three inputs was within the
#: noise of this 2-core VM, where one configuration's Delaunay run spans
#: 0.60-1.58 s; the grid's best was 16384: 0.23-0.30 s against 0.32-0.41
#: s at 4096).  On more threads :func:`level_min` scales it by the round
#: cost measured in the process (:func:`gpumatch._cpu_threads.round_cost`:
#: 22-29 / 43-67 / 98-115 / 172-191 µs on 2 / 4 / 8 / 16 threads of the
#: 2-core CPU, each pool thread taking the GIL in turn) over the share of
#: a level the threads save (``1 - 1/nt``): about 10k-17k columns on 16
#: threads, so that a mesh's many mid-width levels stay on one thread.
#: ``parallel_graft``: after a phase, MS-BFS keeps the trees that found no
#: path and grafts the renewed rows onto them when the kept trees hold at
#: least 1 / ``parallel_graft`` as many rows as the renewed ones (counted
#: on a sample of 4096 rows), else it grows a fresh forest; 0: never
#: graft.  Random 1M d5 (2 threads): its last phase, the proof, no longer
#: re-grows a forest over the graph (search 0.16-0.17 -> 0.08-0.10 s);
#: Delaunay 1M never grafts at 5 (a perfect matching: few rows stay in
#: kept trees), and grafting whatever the ratio (10**6) expanded 3.29M
#: columns against 3.31M, no faster; the grid grafts twice before its
#: hand-over (1.47M columns and 77 thread rounds against 1.60M and 218).
#: ``parallel_max_threads``: at most this many threads (more are not used).
#: On the 16-core host of the H100 (``NUMBA_NUM_THREADS=16
#: benchmarks/bench_cpu_numba.py --threads 1,2,4,8,16 --paths
#: serial,parallel --repeats 3``, end to end, serial against 2 / 4 / 8 / 16
#: threads): random 1M d5 1.35 s against 0.71 / 0.33 / 0.20 / 0.14 s,
#: Delaunay 1M 1.32 s against 1.09 / 0.69 / 0.66 / 0.69 s, but grid 1000 x
#: 1000 0.47 s against 0.56 / 0.59 / 0.69 / 0.99 s (the more slices, the
#: more each wide level's hand-over costs: 218 rounds a search then, each
#: dearer with each thread; the multi-threaded Karp–Sipser's loss is small,
#: 633 / 728 / 870 / 1170 pairs left to the search with 2 / 4 / 8 / 16
#: slices against 806 for the serial one).  8 keeps most of the gain and
#: halves the grid's loss at 16 (measured before :func:`level_min` scaled
#: the levels and MS-BFS grafted).
#: ``pf_budget``: the search's work before push-relabel takes over
#: (:func:`augment`): Pothen–Fan+ may look at ``pf_budget * (nnz + m + n)``
#: edges, MS-BFS expand ``pf_budget * (m + n)`` columns, counted over their
#: phases and checked after each phase that augmented (None: never hand
#: over).  Random graphs, meshes and grids finish within 2 (random 100k d5:
#: 2.3 edges per entry in its one phase that augments); the Jacobians reach
#: it after 3-7 phases instead of 694 (120k rows) or 2448 (481k rows).
#: ``row_search_free``: when the Numba matching has no CSC yet (it builds
#: one only when needed: :func:`initial_matching`), a greedy pass over the
#: rows that leaves at most this fraction of the smaller side free hands
#: over to :func:`row_search` (Pothen–Fan+ from the free rows, on the CSR,
#: within one pass's work) instead of building the CSC for Karp–Sipser:
#: arrowhead 100k leaves 2 rows free (scipy's whole solve takes 4.8 ms,
#: the transpose alone 2-3 ms of ours).
#: ``greedy_probe``: on the multi-threaded path, where the threads'
#: Karp–Sipser would run, a greedy pass over the rows first
#: (:func:`greedy_probe`, undone when it leaves more than
#: ``row_search_free`` free): block-diagonal and arrowhead patterns of
#: 500k rows then need neither the CSC nor the threads.
#: ``serial_init_share``: on the multi-threaded path, when at least this
#: share of the rows have at most two entries, the serial initial matching
#: (:func:`initial_matching`: the degree-one rule first) replaces the
#: multi-threaded Karp–Sipser, whose slices cut chains that the rule
#: peels from their ends (the search stays multi-threaded).  Random d5
#: graphs have about 12% such rows, meshes none.
#: ``greedy_cover``: without a CSC, from an empty matching, on a graph
#: with no more rows than columns, :func:`initial_matching` runs its greedy
#: pass over the rows first (:func:`greedy_cover`), up to the first row it
#: leaves free; one that leaves none is maximum by counting, and neither
#: the CSC, nor the column counts, nor the degree-one rule are needed.  A
#: bidiagonal ladder shuffled by rows only (its columns in order: each
#: row's first column is free when its turn comes) 300k: 16-24 -> 4-6 ms
#: end to end (SciPy 6-11 ms), unshuffled 10-13 -> 3-4 ms, block-diagonal
#: 100k 4.4-5.9 -> 3.3-4.3 ms.  Where it stops, the graph's vertices of
#: one entry decide: the pass is undone (the degree-one rule first), or
#: carried on (the rule would match nothing: no pass is lost).
#: ``greedy_first_share``: on the multi-threaded path, when fewer than
#: this share of the rows, and of the columns, have at most two entries,
#: a greedy pass (each free column takes its first free row) runs before
#: the threads' Karp–Sipser.  Karp–Sipser pays through its cascades, which
#: start at vertices of low degree; without them (bands, meshes) nearly
#: every pair it makes is a choice, at about a microsecond each (two
#: arrays of every neighbour read at random), where the greedy pass
#: streams.  2-core VM, end to end, two A/Bs: permuted tridiagonal 500k
#: 0.39 -> 0.09-0.12 s (SciPy 0.13), pentadiagonal 0.39-0.46 -> 0.16-0.18,
#: Delaunay 500k 0.71-0.90 -> 0.32-0.39, 1M 2.0 -> 0.79; random d5 graphs
#: (12 % of the columns) keep Karp–Sipser, which a greedy pass first would
#: cost 1.5x.
#: ``serial_bfs_share``: on the serial path, where fewer than this share of
#: the rows and of the columns have at most two entries, the search is
#: MS-BFS on one thread (shortest augmenting paths, level by level) instead
#: of Pothen–Fan+, whose depth-first paths wander along bands and meshes:
#: permuted tridiagonal 100k / 300k 21 / 114 -> 12 / 54 ms (SciPy 17 / 77),
#: Delaunay 100k 43 -> 24 ms (SciPy 34), grid 300² 15 -> 12 ms; random
#: graphs keep Pothen–Fan+ (MS-BFS costs them 10-25 %).
#: ``chain_choices``: where at least half the rows have two entries
#: (chains, and cycles, which have no vertex of degree one to start the
#: degree-one rule), :func:`initial_matching` lets a row of two free
#: columns take one of them once the rule has stopped, and the rule goes
#: on from the other (:func:`gpumatch._cpu_degree_one.degree_one`).
#: ``threads_degree_one``: where ``greedy_first_share`` sends the threads'
#: path to a greedy pass, the exact degree-one rule runs before it (as on
#: the serial path): a vertex of degree one can start a cascade through the
#: whole graph (a shuffled staircase of any width, from its corner column),
#: which the greedy pass and the threads' slices cut into long augmenting
#: paths.  2-core VM, 500k rows, one process, alternating, median of 6:
#: staircases of width 6 / 3 0.72 / 0.20 -> 0.19 / 0.12 s (matched by the
#: rule alone); bands, Delaunay and the grid within the noise (no vertex of
#: degree one: the rule costs a pass over the pointers).
#: ``cycle_rule``: the degree-one rule goes on with the cycle rule
#: (``cycles`` of :func:`gpumatch._cpu_degree_one.degree_one`): rows of two
#: free columns whose edges close a cycle take all of its columns.  A
#: shuffled Jacobian of 120k rows is matched by the rules alone: 82-117 ->
#: 33-39 ms (2-core VM, median of 7, alternating); thinned 3 x 3 blocks
#: 100k pay 4-5 ms for it (14-20 -> 18-24 ms), others within the noise.  On
#: the threads' path (from 1M entries) the rules run from scratch only once
#: the search has spent its budget (``_exact_probe`` in
#: :mod:`gpumatch.matching._cpu`): run first there, their serial pass cost
#: random 1M x 1M of degree 5 a tenth more (0.81 -> 0.90 s).
TUNING: dict = {"greedy_cover": True, "parallel_min_nnz": 1_000_000, "parallel_min_threads": 2, "parallel_max_threads": 8,
                "parallel_init": True, "parallel_level_min": 4096, "parallel_handover": True,
                "parallel_graft": 5, "pf_budget": 2.0, "row_search_free": 0.001, "serial_init_share": 0.5,
                "greedy_probe": True, "greedy_first_share": 0.05, "serial_bfs_share": 0.05, "chain_choices": True,
                "threads_degree_one": True, "cycle_rule": True}


def parallel_threads(nnz: int) -> int:
    """Threads of the multi-threaded path for a graph of `nnz` edges under
    :data:`TUNING`; 0 for the serial path (Karp–Sipser + Pothen–Fan+)."""
    par = TUNING["parallel_min_nnz"]
    if par is None or nnz < par:
        return 0
    if _cpu_threads.in_worker():      # a thread of gpumatch's own pool: no pool round from it
        return 0
    nt = int(numba.get_num_threads())
    cap = TUNING.get("parallel_max_threads")
    if cap is not None:
        nt = min(nt, max(1, int(cap)))
    return nt if nt >= max(1, int(TUNING["parallel_min_threads"])) else 0


def level_min(nt: int) -> int:
    """The fewest columns of an MS-BFS level that :func:`run` hands to `nt`
    threads: ``TUNING["parallel_level_min"]`` on 2 threads, scaled on more
    by what a round of the threads costs there against 2
    (:func:`gpumatch._cpu_threads.round_cost`, measured in this process)
    over what a level gains (``1 - 1/nt`` of its time, against ``1/2``)."""
    base = max(1, int(TUNING["parallel_level_min"]))
    if nt <= 2:
        return base
    r2 = _cpu_threads.round_cost(2)
    scale = _cpu_threads.round_cost(nt) / r2 * 0.5 / (1.0 - 1.0 / nt) if r2 > 0 else 1.0
    return int(base * max(1.0, scale))


@numba.njit(cache=True, nogil=True)
def greedy(m, n, cptr, cind, mu_row, mu_col):
    """Each free column takes its first free row (one pass)."""
    for c in range(n):
        if mu_col[c] >= 0:
            continue
        for p in range(cptr[c], cptr[c + 1]):
            r = cind[p]
            if mu_row[r] < 0:
                mu_row[r] = c
                mu_col[c] = r
                break


@numba.njit(cache=True, nogil=True)
def _ks_match(m, r, c, rptr, rind, cptr, cind, mu_row, mu_col, deg, queue, qt):
    """Match row r and column c; their free neighbours lose a degree
    (vertices left with one go on the queue).  Returns the new queue end."""
    mu_row[r] = c
    mu_col[c] = r
    for p in range(rptr[r], rptr[r + 1]):
        x = rind[p]
        if mu_col[x] < 0:
            deg[m + x] -= 1
            if deg[m + x] == 1:
                queue[qt] = m + x
                qt += 1
    for p in range(cptr[c], cptr[c + 1]):
        x = cind[p]
        if mu_row[x] < 0:
            deg[x] -= 1
            if deg[x] == 1:
                queue[qt] = x
                qt += 1
    return qt


@numba.njit(cache=True, nogil=True)
def free_pair(v, m, rptr, rind, cptr, cind, mu_row, mu_col):
    """``(row, column)``: the free vertex `v` (row `v` if ``v < m``, else
    column ``v - m``) and its first free neighbour, or ``(-1, -1)`` when `v`
    is matched or has none (Karp–Sipser's degree-one step)."""
    if v < m:
        if mu_row[v] < 0:
            for p in range(rptr[v], rptr[v + 1]):
                if mu_col[rind[p]] < 0:
                    return v, rind[p]
    elif mu_col[v - m] < 0:
        for p in range(cptr[v - m], cptr[v - m + 1]):
            if mu_row[cind[p]] < 0:
                return cind[p], v - m
    return -1, -1


@numba.njit(cache=True, nogil=True)
def free_degree(v, ptr, ind, mu_nbr):
    """Free neighbours of vertex `v` of one side (``ptr``/``ind``: its
    side's adjacency; ``mu_nbr``: the mates of the other side)."""
    d = 0
    for p in range(ptr[v], ptr[v + 1]):
        if mu_nbr[ind[p]] < 0:
            d += 1
    return d


@numba.njit(cache=True, nogil=True)
def least_degree_free_row(c, cptr, cind, mu_row, deg):
    """The free row of column `c` of least ``deg`` (the first of ties), or -1
    (Karp–Sipser's step when no degree-one vertex is left)."""
    r = -1
    bd = 0
    for p in range(cptr[c], cptr[c + 1]):
        x = cind[p]
        if mu_row[x] < 0 and (r < 0 or deg[x] < bd):
            r = x
            bd = deg[x]
    return r


@numba.njit(cache=True, nogil=True)
def karp_sipser(m, n, rptr, rind, cptr, cind, mu_row, mu_col):
    """Karp–Sipser on top of the pairs already in `mu_row` / `mu_col`.

    Vertex ids: rows ``0..m-1``, columns ``m..m+n-1``; ``deg`` counts free
    neighbours.  Degree-one vertices are matched first (a maximum matching
    of the rest contains such an edge); when none is left, the next free
    column takes its free row of least degree.
    """
    deg = np.zeros(m + n, np.int64)
    queue = np.empty(m + n + 1, np.int64)
    qt = 0
    fresh = True      # no pair yet: the free degrees are the degrees (no scan of the edges)
    for r in range(m):
        if mu_row[r] >= 0:
            fresh = False
            break
    for r in range(m):
        if mu_row[r] < 0:
            d = rptr[r + 1] - rptr[r] if fresh else free_degree(r, rptr, rind, mu_col)
            deg[r] = d
            if d == 1:
                queue[qt] = r
                qt += 1
    for c in range(n):
        if mu_col[c] < 0:
            d = cptr[c + 1] - cptr[c] if fresh else free_degree(c, cptr, cind, mu_row)
            deg[m + c] = d
            if d == 1:
                queue[qt] = m + c
                qt += 1
    qh = 0
    nxt = 0
    while True:
        # the next pair: a degree-one vertex and its free neighbour, else the
        # next free column and its free row of least degree (one call site of
        # _ks_match, so that it compiles once)
        r = -1
        c = -1
        while qh < qt and r < 0:
            v = queue[qh]
            qh += 1
            if deg[v] == 1:
                r, c = free_pair(v, m, rptr, rind, cptr, cind, mu_row, mu_col)
        if r < 0:
            while nxt < n and (mu_col[nxt] >= 0 or deg[m + nxt] == 0):
                nxt += 1
            if nxt == n:
                break
            c = nxt
            r = least_degree_free_row(c, cptr, cind, mu_row, deg)
            if r < 0:  # pragma: no cover - deg[c] > 0 says a free row exists
                deg[m + c] = 0
                continue
        qt = _ks_match(m, r, c, rptr, rind, cptr, cind, mu_row, mu_col, deg, queue, qt)


@numba.njit(cache=True, nogil=True)
def _greedy_cover(m, rptr, rind, mu_row, mu_col, out):
    """:func:`greedy_cover`'s pass; ``out[0]``: the row it stopped at (``m``: the end)."""
    out[0] = 0
    for r in range(m):
        if mu_row[r] >= 0:
            return -2                      # not from an empty matching
    for r in range(m):
        c = -1
        for p in range(rptr[r], rptr[r + 1]):
            if mu_col[rind[p]] < 0:
                c = rind[p]
                break
        if c >= 0:
            mu_row[r] = c
            mu_col[c] = r
        elif rptr[r + 1] > rptr[r]:        # a non-empty row left free: not proven maximum
            out[0] = r
            return -1
    out[0] = m
    return 1


@numba.njit(cache=True, nogil=True)
def _undo_rows(stop, mu_row, mu_col):
    """Free the rows before `stop` and their columns."""
    for r in range(stop):
        c = mu_row[r]
        if c >= 0:
            mu_col[c] = -1
            mu_row[r] = -1


@numba.njit(cache=True, nogil=True)
def _has_degree_one(m, n, rptr, cnt, low=1):
    """Whether a row (pointers `rptr`) or a column (:func:`gpumatch._cpu_csr.column_counts` `cnt`) has one entry
    (or a row one to `low`: two for the cycle rule, whose edges are rows of two entries)."""
    for r in range(m):
        if 1 <= rptr[r + 1] - rptr[r] <= low:
            return True
    for c in range(n):
        if cnt[c + 1] == 1:
            return True
    return False


def greedy_cover(m, rptr, rind, mu_row, mu_col):
    """A greedy pass over the rows (each row takes its first free column, the
    CSR alone) from an empty matching, up to the first non-empty row that
    finds no free column.  Returns ``(status, stop)``: status 1 when it
    matched every non-empty row, which proves the matching maximum (no
    matching has more pairs than non-empty rows); -1 when it stopped at
    row `stop` (its pairs, all on rows before `stop`, stay: the caller
    carries the pass on or frees them, :func:`_undo_rows`); -2 when
    `mu_row` already had pairs (nothing done)."""
    out = np.zeros(1, np.int64)
    status = _greedy_cover(m, rptr, rind, mu_row, mu_col, out)
    return int(status), int(out[0])


def initial_matching(m, n, rptr, rind, mu_row, mu_col, cptr=None, cind=None, greedy_first=True, few_free=True):
    """The serial engine's initial matching, on top of the pairs in
    `mu_row` / `mu_col`: :func:`degree_one` (exact), then, unless that
    matched the whole smaller side, a :func:`greedy` pass (with
    `greedy_first`) and :func:`karp_sipser` on the vertices left.

    Without a CSC, from an empty matching with `greedy_first`, on a graph
    with no more rows than columns (a tall one leaves rows free), the
    greedy pass over the rows comes first instead (:func:`greedy_cover`,
    ``TUNING["greedy_cover"]``), up to the first row it leaves free: when
    there is none the count proves the matching maximum and nothing else
    runs (``"greedy (maximum)"``: a ladder shuffled by rows only, a
    block-diagonal pattern).  Else the pass is undone where a vertex has
    one entry (the degree-one rule then runs first, as above: a greedy pass
    breaks the chains that it peels, and a ladder shuffled by columns then
    needs long augmenting paths), and carried on as the greedy pass above
    where none has (the rule would match nothing).

    The CSC (`cptr`, `cind`) is built here when not given, and only when
    needed: not when the degree-one rule matches the smaller side (a
    shuffled ladder or staircase), nor when the greedy pass, over the rows
    of the CSR then, leaves at most ``TUNING["row_search_free"]`` of the
    smaller side free (Karp–Sipser is then skipped: the caller searches
    from the free rows, :func:`row_search`; not without `few_free`).  Returns ``(name, pairs of the
    degree-one rule, cptr, cind)``, the last two None when no CSC was
    built nor given.
    """
    counts = None
    probed = False
    # rows of two entries make most of the graph (chains, cycles): after the degree-one rule, a row of
    # two free columns takes one of them and the rule goes on from the other (``choices``)
    chains = TUNING["chain_choices"] and m > 0 and float(np.count_nonzero(np.diff(rptr) == 2)) >= 0.5 * m
    if greedy_first and cptr is None and TUNING["greedy_cover"] and 0 < m <= n:
        status, stop = greedy_cover(m, rptr, rind, mu_row, mu_col)
        if status == 1:
            return "greedy (maximum)", 0, None, None
        if status == -1:
            counts = _cpu_csr.column_counts(m, n, rptr, rind)
            if chains or _has_degree_one(m, n, rptr, counts, 2 if TUNING["cycle_rule"] else 1):
                _undo_rows(stop, mu_row, mu_col)    # the degree-one rule first, on the whole graph
            else:
                probed = True                       # the rule would match nothing: the pass goes on below
    if cptr is None and counts is None:
        counts = _cpu_csr.column_counts(m, n, rptr, rind)
    ones = 0
    if not probed:
        ones, cptr, cind = degree_one(m, n, rptr, rind, mu_row, mu_col, cptr, cind, counts, choices=chains,
                                      cycles=TUNING["cycle_rule"])
        if ones and int(np.count_nonzero(mu_col >= 0)) >= min(m, n):
            return "degree-one", ones, cptr, cind
    name = "degree-one + " if ones else ""
    if greedy_first:   # a cheap first pass; Karp-Sipser then decides among the vertices left
        if cptr is None:    # each free row takes its first free column (the CSR)
            greedy(n, m, rptr, rind, mu_col, mu_row)
        else:
            greedy(m, n, cptr, cind, mu_row, mu_col)
        name += "greedy"
        left = min(m, n) - int(np.count_nonzero(mu_col >= 0))
        if cptr is None and few_free and left <= TUNING["row_search_free"] * min(m, n):
            return name, ones, None, None     # (covered, or few left: the search from the rows)
        name += " + "
    if cptr is None:
        cptr, cind = _cpu_csr.transpose(m, n, rptr, rind, counts=counts)
    karp_sipser(m, n, rptr, rind, cptr, cind, mu_row, mu_col)
    return name + "Karp-Sipser", ones, cptr, cind


@numba.njit(cache=True, nogil=True)
def _greedy_probe(m, n, rptr, rind, mu_row, mu_col, max_free, taken):
    fails = 0
    made = 0
    limit = max_free + m - min(m, n)      # rows that a tall graph must leave free, and max_free more
    for r in range(m):
        if mu_row[r] >= 0 or rptr[r + 1] == rptr[r]:
            continue
        c = -1
        for p in range(rptr[r], rptr[r + 1]):
            if mu_col[rind[p]] < 0:
                c = rind[p]
                break
        if c < 0:
            fails += 1
            if fails > limit:             # give up: undo the pairs made
                for i in range(made):
                    x = taken[i]
                    mu_col[mu_row[x]] = -1
                    mu_row[x] = -1
                return False
            continue
        mu_row[r] = c
        mu_col[c] = r
        taken[made] = r
        made += 1
    return True


def greedy_probe(m, n, rptr, rind, mu_row, mu_col, max_free):
    """A greedy pass over the rows (each free row takes its first free
    column, the CSR alone) that gives up once more than `max_free` rows
    beyond ``m - min(m, n)`` found no free column; then its pairs are
    undone and it returns False (the matching is as it was).  True: the
    pass ran to its end, at most `max_free` short of a side (block-diagonal
    and arrowhead patterns), False on random graphs and meshes, at about
    40% of a pass there (a greedy pass fails late, once most columns are
    taken)."""
    return bool(_greedy_probe(m, n, rptr, rind, mu_row, mu_col, int(max_free), np.empty(m, rind.dtype)))


def row_search(m, n, rptr, rind, mu_row, mu_col, raw):
    """Pothen–Fan+ from the free rows, over the CSR alone (the roles of
    rows and columns swapped), within one pass's worth of work
    (``nnz + m + n`` edges looked at).  Returns True when it proved the
    matching maximum, False when the budget ran out first (the matching
    is still valid; :func:`augment` finishes it, with the CSC)."""
    return not pothen_fan(n, m, rptr, rind, mu_col, mu_row, raw, int(rptr[m]) + m + n)


def augment(m, n, rptr, rind, cptr, cind, mu_row, mu_col, raw, pf=True, probe=None):
    """Extend a consistent matching to a maximum one (serially):
    Pothen–Fan+ while its phases stay cheap, then :func:`push_relabel`.
    `probe`: called when Pothen–Fan+ runs out of its budget, before
    push-relabel; it may replace the matching and returns what to add to
    the name (ending in ``"(maximum)"``: push-relabel is not needed).

    Pothen–Fan+ is the fastest search where augmenting paths are short
    (random graphs, meshes: a few phases).  Where they are long, each of
    its phases may search most of the graph for a handful of paths; once
    its phases have looked at more than ``TUNING["pf_budget"]`` times
    ``nnz + m + n`` edges, :func:`push_relabel` takes the free columns
    left; without `pf`, push-relabel runs alone.  `raw`: the statistics
    slots (``_S_*``).  Returns the name of what ran.
    """
    if not pf:
        push_relabel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, raw)
        return "push-relabel"
    nnz = int(rptr[m])
    factor = TUNING["pf_budget"]
    budget = -1 if factor is None else int(factor * (nnz + m + n))
    if pothen_fan(m, n, cptr, cind, mu_row, mu_col, raw, budget):
        got = probe() if probe is not None else ""
        if got.endswith("(maximum)"):
            return "Pothen-Fan+" + got
        push_relabel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, raw)
        return "Pothen-Fan+" + got + " then push-relabel"
    return "Pothen-Fan+"


@numba.njit(cache=True, nogil=True)
def konig_cover(m, n, rptr, rind, mu_row, mu_col, zr, zc):
    """Alternating BFS from the free rows (row -> any column, column -> its
    row): ``zr`` / ``zc`` mark what it reaches.  Returns False when it
    reaches a free column (the matching is then not maximum)."""
    queue = np.empty(m + 1, np.int64)
    qt = 0
    for r in range(m):
        zr[r] = False
    for c in range(n):
        zc[c] = False
    for r in range(m):
        if mu_row[r] < 0:
            zr[r] = True
            queue[qt] = r
            qt += 1
    qh = 0
    while qh < qt:
        r = queue[qh]
        qh += 1
        for p in range(rptr[r], rptr[r + 1]):
            c = rind[p]
            if not zc[c]:
                zc[c] = True
                r2 = mu_col[c]
                if r2 < 0:
                    return False
                if not zr[r2]:
                    zr[r2] = True
                    queue[qt] = r2
                    qt += 1
    return True

"""Dynamic maximum bipartite matching: re-solve after batches of edge changes.

:class:`MatchingSolver` keeps, on its backend, the graph as a sorted CSR
*and* its transpose (CSC), and the current matching.  A batch of added or
removed edges patches both patterns in place of a re-sort or a transpose
(:func:`gpumatch.csr.locate_entries_pair`,
:func:`~gpumatch.csr.edit_entries_pair`: one bandwidth-bound pass over
both patterns, two launches on the GPU); adding edges keeps the matching
valid and removing a matched edge unmatches its two endpoints
(:func:`~gpumatch.csr.unmatch_pairs`).  The next :meth:`MatchingSolver.solve`
starts from the surviving pairs and runs augmenting-path phases
(:mod:`gpumatch.matching._augment`: disjoint alternating BFS trees, each
stopping at its first free column).  The trees of the last converged
phase are kept between solves as a Koenig certificate of maximality; a
batch only breaks the trees it touches, so the next solve grows trees
from the broken ones and the edges that left the forest, not from every
free row through the whole graph.  G-PR warm-started from the same pairs
is the other ``warm_method``.
"""

from __future__ import annotations

import threading
import time
from typing import Literal

import numpy as np

from .. import _backend
from .._typing import Array, Backend, GraphLike, IndexLike, PermType, SparseMatrix
from .. import csr as _csr
from .. import _validation
from .._validation import as_csr_graph, as_index_array, check_option, index_dtype_for, small_on_cpu
from . import _augment, _driver, _small
from . import api as _api

__all__ = ["MatchingSolver"]

_WARM_INITS = ("auto", "none", "greedy", "karp_sipser")
_WARM_METHODS = ("augment", "gpr")
#: Augmenting-path phases of a warm-started solve before it hands over to
#: G-PR (``warm_method="augment"``).
MAX_AUGMENT_PHASES = 32


def _raise_presence(xp, found, rs, cs, adding):
    """ValueError naming the first edge of a sorted batch that is (adding) or is not in the graph."""
    i = int(xp.flatnonzero(found if adding else ~found)[0])
    state = "already in the graph" if adding else "not in the graph"
    raise ValueError(f"edge ({int(rs[i])}, {int(cs[i])}) is {state}")


def _check_batch_host(r, c, m, n):
    """Range checks of a batch on the host (ValueError naming the first bad index)."""
    for what, a, hi_ in (("rows", r, m), ("cols", c, n)):
        if a.shape[0] and (a.min() < 0 or a.max() >= hi_):
            lo, hi = int(a.min()), int(a.max())
            raise ValueError(f"{what}: index {lo if lo < 0 else hi} is out of range [0, {hi_})")


def _check_order_host(r, c, m, n):
    """Check a batch on the host: ValueError naming the first bad index or repeated edge."""
    _check_batch_host(r, c, m, n)
    wn = np.int64(max(n, 1))
    ks = np.sort(r * wn + c)
    if (ks[1:] == ks[:-1]).any():
        i = int(np.flatnonzero(ks[1:] == ks[:-1])[0])
        raise ValueError(f"edge ({int(ks[i] // wn)}, {int(ks[i] % wn)}) appears more than once in the batch")


def _run_gpr(st, **kw):
    """G-PR on the solver's state."""
    return _driver.run_gpr(st, **kw)


#: Default of ``MatchingSolver(rebuild_fraction=...)`` on the GPU (see its
#: docstring; 0.5 until 0.7.1, when a first batch removing 20 % of the edges
#: of random 1M d5 ran 0.52x a solve from scratch).
REBUILD_FRACTION = 0.15

#: The same on the CPU engines ("numba", "numpy"), whose warm solves keep no
#: forest between solves.
REBUILD_FRACTION_CPU = 0.02

#: The CPU engines' second switch, with the default ``rebuild_fraction``: a
#: batch that changed more than this fraction of the edges starts from
#: scratch, whatever its pairs to repair.  Edges added between matched
#: vertices repair nothing but open new augmenting paths, and each phase of
#: a warm solve searches from every free column through most of the graph:
#: 2-core CPU, random 1M x 1M d5, edges added in batches of 2 / 5 / 10 /
#: 20 %, warm solves 0.29-0.30 / 0.40-0.87 / 0.34-0.49 / 0.65 s in 4-7
#: phases against 0.44-0.50 / 0.62 s from scratch on the kept CSC.
REBUILD_EDGES_CPU = 0.03

#: The least cap on the pairs to repair that the Numba engine's switch
#: learns (a fraction of ``min(m, n)``; see ``MatchingSolver._learn``).
LEARNT_CAP_FLOOR = 0.001

#: ``warm_init="auto"``: a warm solve runs the greedy pass first when the
#: pairs to repair exceed this fraction of ``min(m, n)`` (see MatchingSolver).
WARM_GREEDY_FRACTION = 0.05


class MatchingSolver:
    """Maximum bipartite matching that is re-solved after batches of edge changes.

    Parameters
    ----------
    graph : sparse matrix or array, or tuple
        The ``m x n`` bipartite graph, as for
        :func:`~gpumatch.matching.maximum_bipartite_matching`: every stored
        entry (explicit zeros included) is an edge.  The shape is fixed.
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        Where the state lives and G-PR runs.  Results are CuPy arrays for
        CuPy/cupyx input and NumPy arrays otherwise.  With ``"numba"``
        solves from scratch run Karp–Sipser + Pothen–Fan+ and dynamic ones
        Pothen–Fan+ from the surviving pairs (``warm_method`` does not
        apply there).  ``"auto"`` on a machine without a GPU keeps a small
        graph (at most :data:`gpumatch.matching._small.SMALL_MAX` rows,
        columns and entries together) on ``"numpy"`` while the Numba engine
        is not loaded in the process: its start-up (about half a second)
        costs far more than such solves.  The solver moves to ``"numba"``
        at the first :meth:`solve` after the graph grows past that size or
        the engine is loaded, or once the small solves of the process have
        spent about that start-up (:attr:`backend` says which runs).
    rebuild_fraction : float, optional
        When the pairs to repair since the last solve exceed this fraction
        of ``min(m, n)``, :meth:`solve` starts from scratch (greedy initial
        matching, on the kept arrays) instead of from the surviving pairs.
        Pairs to repair: matched edges removed, and edges added at a vertex
        that was free.  Edges added between matched vertices never count:
        the matching stays valid and only the free vertices search.
        Default (None): :data:`REBUILD_FRACTION` (0.15) on the GPU and
        :data:`REBUILD_FRACTION_CPU` (0.02) on the CPU engines, where a
        batch that changed more than :data:`REBUILD_EDGES_CPU` (3 %) of the
        edges also starts from scratch.  On an H200, for
        ``random_bipartite(10**6, 10**6, 5)``: after additions of any size
        (0.01-80 % of the edges) warm starts (``warm_init="auto"``) were
        1.3-5x faster than a solve from scratch; after removals a warm
        start's augmenting phases grow with the pairs freed (a first batch
        removing 20 % of the edges: 32 phases, then G-PR for the last
        column, 0.52x), so past 0.15 a from-scratch solve on the kept arrays
        runs, 0.80-1.05x for batches of 20-40 % of the edges (the update of
        millions of edges costs 1-3 ms of it).  On a 2-core CPU (Numba),
        where each phase of a warm solve searches from every free vertex,
        warm starts were level with a solve from scratch at about 2 % of
        ``min(m, n)`` in pairs to repair and 3 % of the edges
        (``benchmarks/bench_dynamic.py``, ``benchmarks/RESULTS.md``); there
        the default switch also learns from the solver's own solves: after
        a warm solve slower than a solve from scratch would have been (by
        the last one's time per edge), warm solves take at most half its
        pairs to repair, and never fewer than :data:`LEARNT_CAP_FLOOR`
        (0.1 %) of ``min(m, n)`` (on a sparse graph with many free vertices,
        each warm phase crosses the graph).
    warm_init : {"auto", "none", "greedy", "karp_sipser"}, optional
        Initial-matching heuristic run on top of the surviving pairs before
        a warm solve's search (``init`` of
        :func:`~gpumatch.matching.bipartite_matching`).  ``"none"``: after a
        small batch the greedy pass over every vertex finds next to nothing.
        Default ``"auto"``: ``"greedy"`` when the pairs to repair exceed
        :data:`WARM_GREEDY_FRACTION` (0.05) of ``min(m, n)``, else
        ``"none"``: thousands of freed pairs are rematched faster by the
        greedy pass than one augmenting path each (H200, random 1M d5,
        40 % of the edges removed: 1.14 -> 1.18x, mixed batches of 40 %
        0.88 -> 1.02x a solve from scratch).
    relabel_k : float, optional
        G-PR's global-relabel frequency in the warm-started solves (a
        relabel after ``ceil(relabel_k * maxLevel)`` push iterations), as
        in :func:`~gpumatch.matching.bipartite_matching`.
    warm_method : {"augment", "gpr"}, optional
        How a warm-started solve finds the missing paths.  ``"augment"``
        (default): augmenting-path phases, each a BFS of vertex-disjoint
        trees from the free rows that stop at their first free column,
        until a phase proves the matching maximum (G-PR finishes if
        :data:`MAX_AUGMENT_PHASES` do not suffice).  ``"gpr"``: G-PR from the
        surviving pairs, whose global relabels are BFS from every free row
        to the end.  On the H100 benchmark the two were level after
        additions and ``"augment"`` won after removals (0.01 %: 2.8x
        against 2.0x).

    Attributes
    ----------
    shape : tuple of int
    backend : str
        The resolved backend.

    Notes
    -----
    Adding an edge never invalidates a matching; removing a matched edge
    frees both endpoints.  The surviving pairs are a matching of the new
    graph at most (number of removed matched edges + number of added edges)
    short of maximum, so a few augmenting paths finish the job: the same
    incremental principle as dynamic push-relabel max flow [2]_ (G-PR [1]_
    from the surviving pairs with ``warm_method="gpr"``).  The solver keeps
    the CSR and its transpose on the backend and patches both per batch
    (O(nnz) passes, no sort of the edge set, no transpose, no validation of
    its own arrays; small batches are checked and ordered on the host).
    With ``warm_method="augment"`` the trees of the last converged phase
    are kept between solves: every free row with an edge is in a tree, no
    free column is, and a tree's rows only have edges into tree columns,
    so (rows outside the trees) + (tree columns) is a vertex cover of the
    matching's size (Koenig), which proves the matching maximum.  A batch
    breaks that only where it touches, and the next solve searches only
    there: a removed tree edge is replaced by another edge into the tree
    where one exists; a removed matched edge flips its tree's path at once
    (the tree is then kept as a certificate only, and grows only to be
    closed again); a tree that cannot be repaired, or that an added edge
    opens to a column outside the forest, is regrown; a new free row grows
    a tree.  Each phase also grows backward trees from the free columns,
    which the search trees meet halfway; where those backward trees close
    on their own (they stay small while the search trees hold most of the
    graph, as on random graphs after edges were added), they prove the
    matching maximum from the columns' side instead, the forest is dropped
    and the next solve grows trees from every free row.  On the GPU each
    solve runs all its phases in one cooperative launch where the device
    allows it.  What stays per solve is the depth of the trees it regrows
    (a BFS level per step); past `rebuild_fraction` a from-scratch solve is
    used.

    Several maximum matchings may exist; which one is returned may vary.

    Thread safety: one solver may be shared by several threads.  Its
    methods that read or change its state (:meth:`add_edges`,
    :meth:`remove_edges`, :meth:`solve`, :meth:`matching`, :meth:`graph`,
    :attr:`num_edges`) hold a lock of the solver, so calls from different
    threads take turns, each on the state the previous one left; a
    thread's batch and its next ``solve`` are two calls, and another
    thread's batch may come between them (hold a lock of your own around
    the pair to keep it together).  Different solvers share nothing and run
    in parallel.

    References
    ----------
    .. [1] M. Deveci, K. Kaya, B. Uçar, Ü. V. Çatalyürek, "A Push-Relabel-Based
       Maximum Cardinality Bipartite Matching Algorithm on GPUs", ICPP 2013,
       pp. 21-29. :doi:`10.1109/ICPP.2013.21`
    .. [2] S. Kannappan, A. Kumar and R. Nasre, "Scalable Maxflow Processing
       for Dynamic Graphs" (preprint also titled "Efficient Dynamic MaxFlow
       Computation on GPUs").

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch.matching import MatchingSolver
    >>> A = sp.csr_matrix([[1, 1, 0], [1, 0, 0], [0, 0, 0]])
    >>> solver = MatchingSolver(A, backend="numpy")
    >>> solver.solve().size
    2
    >>> solver.add_edges([2], [2])
    >>> res = solver.solve()
    >>> res.size, res.col_to_row.tolist()
    (3, [1, 0, 2])
    >>> solver.remove_edges([1, 0], [0, 0])
    >>> solver.solve().size
    2
    >>> solver.matching("column").tolist()
    [1, -1, 2]
    """

    @_backend.device_entry
    def __init__(self, graph: GraphLike, *, backend: Backend = "auto", rebuild_fraction: float | None = None,
                 warm_init: Literal["auto", "none", "greedy", "karp_sipser"] = "auto", relabel_k: float = 0.7,
                 warm_method: Literal["augment", "gpr"] = "augment") -> None:
        self._lock = threading.RLock()  # (see "Thread safety" above)
        check_option("warm_init", warm_init, _WARM_INITS)
        check_option("warm_method", warm_method, _WARM_METHODS)
        self.warm_method = warm_method
        _api._check_params("none", relabel_k, 512)
        self.relabel_k = float(relabel_k)
        if rebuild_fraction is not None and (
                isinstance(rebuild_fraction, bool)
                or not isinstance(rebuild_fraction, (int, float, np.integer, np.floating))
                or not rebuild_fraction >= 0):
            raise ValueError(f"rebuild_fraction must be a non-negative number, got {rebuild_fraction!r}")
        self.warm_init = warm_init
        # a small graph under "auto" without a GPU: the NumPy engine until it grows or Numba is loaded
        self._small = small_on_cpu(graph, backend, _small.SMALL_MAX)
        g = as_csr_graph(graph, "numpy" if self._small else backend)
        self.backend = g.backend
        # (the CPU engines' switch by the edges changed: with the default only)
        self._rebuild_edges = None if rebuild_fraction is not None or g.backend == "cupy" else REBUILD_EDGES_CPU
        if rebuild_fraction is None:
            rebuild_fraction = REBUILD_FRACTION if g.backend == "cupy" else REBUILD_FRACTION_CPU
        self.rebuild_fraction = float(rebuild_fraction)
        self.shape = g.shape
        self._cupy_out = g.cupy_out
        self._xp = _backend.get_xp(g.backend)
        m, n = g.shape
        idx = np.dtype(index_dtype_for(m + n + 2, g.nnz + 1))
        if np.dtype(g.index_dtype).itemsize == 8:  # keep 64-bit graphs 64-bit, as make_state
            idx = np.dtype(np.int64)
        xp = self._xp
        self._rptr, self._rind = g.indptr.astype(idx), g.indices.astype(idx)   # copies: never the caller's
        # the one transpose of the solver's life, with the rows of each
        # column sorted (the batches' edits search them); later batches
        # patch both patterns
        if g.backend == "numba":   # the compiled counting transpose (rows come out sorted)
            from .. import _cpu_csr

            self._cptr, self._cind = _cpu_csr.transpose(m, n, self._rptr, self._rind)
        elif xp is np:
            import scipy.sparse as sp

            t = sp.csr_matrix((np.ones(g.nnz, dtype=np.int8), self._rind, self._rptr), shape=(m, n)).tocsc()
            t.sort_indices()
            self._cptr, self._cind = t.indptr.astype(idx), t.indices.astype(idx)
        else:
            cptr, cind = _csr.transpose(self._rptr, self._rind, n)
            self._cptr, self._cind = cptr.astype(idx, copy=False), cind.astype(idx, copy=False)
            _csr.warm_sort()   # a first large batch must not pay the sort's start-up
        self._mu_row = xp.full(m, -1, dtype=idx)
        self._mu_col = xp.full(n, -1, dtype=idx)
        self._st = None
        self._pending = 0
        # pairs a warm solve may have to repair since the last solve (matched
        # edges removed, edges added at a free vertex), counted on the device
        self._repairs = xp.zeros(1, dtype=np.uint64)
        self._t_update = 0.0
        self._solved = False
        self._result = None
        # the Numba engine's default switch, learnt from its own solves (_learn)
        self._repair_cap = float("inf")
        self._scratch_per_edge = None
        self._last_repairs = 0
        self._capped = False

    # ------------------------------------------------------------------

    @property
    @_backend.serialized
    def num_edges(self) -> int:
        """Current number of edges."""
        return int(self._rind.shape[0])

    def _state(self):
        """The G-PR state over the kept arrays (built once, then re-pointed)."""
        arrays = (self._rptr, self._rind, self._cptr, self._cind, self._mu_row, self._mu_col)
        st = self._st
        if st is None:
            st = self._st = _driver.state_from_arrays(*arrays, self.backend)
        else:
            st.rptr, st.rind, st.cptr, st.cind, st.mu_row, st.mu_col = arrays
        return st

    @_backend.serialized
    def graph(self) -> SparseMatrix:
        """The current graph as a CSR matrix (scipy, or cupyx for CuPy input), values 1.

        A copy: changing it changes nothing in the solver (use
        :meth:`add_edges` and :meth:`remove_edges`).
        """
        indptr, cols, shape = self._rptr, self._rind, self.shape
        data = self._xp.ones(cols.shape[0], dtype=np.float64)
        if self._cupy_out:
            cpx = _backend.cpx_sparse
            cp = _backend.cp
            return cpx.csr_matrix((cp.asarray(data), cp.array(cols, copy=True), cp.array(indptr, copy=True)),
                                  shape=shape)
        import scipy.sparse as sp

        host = lambda a: a.copy() if isinstance(a, np.ndarray) else _backend.to_numpy(a)  # noqa: E731
        return sp.csr_matrix((_backend.to_numpy(data), host(cols), host(indptr)), shape=shape)

    def _batch(self, rows, cols, adding):
        """Validate a batch and find it in both patterns (ValueError on any
        problem; nothing changes).

        Returns None for an empty batch, else ``(pos, segs, vals)``: the
        batch located in the CSR and in the CSC at once
        (:func:`gpumatch.csr.locate_entries_pair`: 2k positions, segments
        and indices, the CSR's in row-major order, then the CSC's in
        column-major order); the batch's rows and columns in row-major
        order are ``segs[:k]`` and ``vals[:k]``.  A batch of at most
        :data:`gpumatch.csr.RANK_BATCH` edges is ordered, checked and
        located in one launch and one read-back
        (:func:`gpumatch.csr.locate_batch_pair`); a larger one is sorted
        and checked on the device (:func:`gpumatch.csr.sort_batch_pair`:
        on an H100 sorting on the device beat sorting on the host at
        20 000 edges already, 0.89 against 0.98 ms, and 1.0 against 2.1 ms
        at 50 000), by pre-built kernels around CuPy's sort: no kernel is
        compiled on a first large batch."""
        xp = self._xp
        m, n = self.shape
        r = as_index_array(rows, "rows", self.backend)
        c = as_index_array(cols, "cols", self.backend)
        if r.shape[0] != c.shape[0]:
            raise ValueError(f"rows and cols must have the same length, got {r.shape[0]} and {c.shape[0]}")
        k = int(r.shape[0])
        if k == 0:
            return None
        pats = ((self._rptr, self._rind), (self._cptr, self._cind))
        if xp is np or k <= _csr.RANK_BATCH:
            # ordered, checked and located together: on the GPU one launch
            # and one read-back
            locate = _csr.locate_batch_pair
            if self.backend == "numba":   # the compiled twin (one pass each step)
                from .. import _cpu_csr_edit

                locate = _cpu_csr_edit.locate_batch_pair
            pos, segs, vals, (bad, dup, miss) = locate(pats, r, c, self.shape, present=not adding)
            if bad or dup:   # the host checks name the first bad index or repeated edge
                _check_order_host(_backend.to_numpy(r).astype(np.int64), _backend.to_numpy(c).astype(np.int64),
                                  m, n)
                raise RuntimeError("batch check: the device and the host disagree")   # pragma: no cover
            if miss:
                _, found = _csr.locate_entries(self._rptr, self._rind, segs[:k], vals[:k])
                _raise_presence(xp, found, segs[:k], vals[:k], adding)
            return pos, segs, vals
        # the batch in row-major and in column-major order, checked (two
        # pre-built launches around two sorts, one read-back)
        segs, vals, (bad, dup) = _csr.sort_batch_pair(r, c, self.shape)
        if bad:   # the host check names the first bad index
            _check_batch_host(_backend.to_numpy(r), _backend.to_numpy(c), m, n)
        if dup:
            _check_order_host(_backend.to_numpy(r).astype(np.int64), _backend.to_numpy(c).astype(np.int64), m, n)
            raise RuntimeError("batch check: the device and the host disagree")   # pragma: no cover
        pos, misses = _csr.locate_entries_pair(pats, ((segs[:k], vals[:k]), (segs[k:], vals[k:])),
                                               present=not adding)
        if misses:
            _, found = _csr.locate_entries(self._rptr, self._rind, segs[:k], vals[:k])
            _raise_presence(xp, found, segs[:k], vals[:k], adding)
        return pos, segs, vals

    def _edit(self, pos, segs=None, vals=None):
        """Both patterns with the located batch deleted (`segs` None) or
        inserted: :func:`gpumatch.csr.edit_entries_pair`, or its compiled
        twin on the ``"numba"`` backend."""
        edit = _csr.edit_entries_pair
        if self.backend == "numba":
            from .. import _cpu_csr_edit

            edit = _cpu_csr_edit.edit_entries_pair
        return edit(((self._rptr, self._rind), (self._cptr, self._cind)), pos, segs, vals)

    def _widen(self, nnz):
        """Switch every kept index array to int64 when `nnz` edges need it."""
        m, n = self.shape
        idx = np.dtype(index_dtype_for(m + n + 2, nnz + 1))
        if idx.itemsize <= np.dtype(self._rind.dtype).itemsize:
            return
        self._rptr, self._rind, self._cptr, self._cind, self._mu_row, self._mu_col = (
            a.astype(idx) for a in (self._rptr, self._rind, self._cptr, self._cind, self._mu_row, self._mu_col))
        self._st = None

    @_backend.serialized
    @_backend.device_entry
    def add_edges(self, rows: IndexLike, cols: IndexLike) -> None:
        """Add the edges ``(rows[i], cols[i])``.

        Raises
        ------
        ValueError
            Different lengths, non-integer or out-of-range indices, an edge
            twice in the batch, or an edge that is already in the graph; the
            graph and matching are then unchanged.
        """
        t0 = time.perf_counter()
        found = self._batch(rows, cols, adding=True)
        if found is None:
            return
        pos, segs, vals = found
        k = int(pos.shape[0]) // 2
        self._widen(self.num_edges + k)
        (self._rptr, self._rind), (self._cptr, self._cind) = self._edit(pos, segs, vals)
        self._pending += k
        if not self._past_edges():   # (else the next solve starts from scratch: nothing to count or patch)
            if self._st is not None:
                _augment.note_added(self._st, segs[:k], vals[:k])
            _csr.count_free_ends(self._mu_row, self._mu_col, segs[:k], vals[:k], self._repairs)
        self._result = None
        self._t_update += time.perf_counter() - t0

    @_backend.serialized
    @_backend.device_entry
    def remove_edges(self, rows: IndexLike, cols: IndexLike) -> None:
        """Remove the edges ``(rows[i], cols[i])``; a removed matched edge frees both endpoints.

        Raises
        ------
        ValueError
            Different lengths, non-integer or out-of-range indices, an edge
            twice in the batch, or an edge that is not in the graph; the
            graph and matching are then unchanged.
        """
        t0 = time.perf_counter()
        found = self._batch(rows, cols, adding=False)
        if found is None:
            return
        pos, segs, vals = found
        k = int(pos.shape[0]) // 2
        r, c = segs[:k], vals[:k]
        self._pending += k
        # past the CPU engines' edge switch the next solve starts from scratch:
        # the pairs and the kept forest are dropped there, so neither is kept up
        keep = not self._past_edges()
        if keep and self._st is not None:
            _augment.note_removed(self._st, r, c)
        if keep:
            _csr.unmatch_pairs(self._mu_row, self._mu_col, r, c, self._repairs)
        (self._rptr, self._rind), (self._cptr, self._cind) = self._edit(pos)
        if keep and self._st is not None:   # new parents and flips around the removals, on the new graph
            _augment.repair_removed(self._state(), r, c)
        self._result = None
        self._t_update += time.perf_counter() - t0

    @_backend.serialized
    @_backend.device_entry
    def solve(self) -> _api.MatchingResult:
        """Maximum matching of the current graph, warm-started from the previous one.

        Returns
        -------
        MatchingResult
            ``row_to_col``, ``col_to_row`` (int32, -1 unmatched), ``size``
            and ``stats`` (with ``warm_init``: the heuristic a warm solve ran,
            None from scratch; ``mode``: ``"scratch"``, ``"dynamic"`` or
            ``"cached"``; ``batch``, the edges changed
            since the last solve; with ``warm_method="augment"``,
            ``aug_phases``, ``aug_paths``, ``aug_levels`` and
            ``aug_converged`` of the augmenting phases; ``time_total`` of the solve and
            ``time_update`` of the updates since the last solve, host
            seconds without a device sync; ``aug_certificate``: whether the
            kept forest or the backward trees proved the matching maximum).
        """
        if self._result is not None:
            # nothing changed since: the same matching in new arrays (a
            # caller may have written into the last result's)
            res = self._result
            return _api.MatchingResult(self._out(self._mu_row), self._out(self._mu_col), res.size,
                                       dict(res.stats, mode="cached"))
        if self._small and (_validation.small_path_closed() or sum(self.shape) + self.num_edges > _small.SMALL_MAX):
            self._small = False        # the same host arrays serve the compiled engine from here on
            self.backend = "numba"
            self._st = None
        if self.backend == "numba":   # the compiled CPU engine (Pothen-Fan+ from the surviving pairs)
            return _numba_solve(self)
        if self._small:               # its seconds count against the small solves' budget
            return _validation.charged_small(self._solve_here)
        return self._solve_here()

    def _plan(self):
        """``(scratch, warm_init)`` of the next solve: from scratch at the
        first solve, with more pairs to repair (see ``rebuild_fraction``)
        than ``rebuild_fraction * min(m, n)``, or (CPU engines, default
        switch) after batches that changed more than
        :data:`REBUILD_EDGES_CPU` of the edges or with more pairs to repair
        than the cap the Numba engine learnt (:meth:`_learn`); ``warm_init``
        with ``"auto"`` resolved (one host read of the device count)."""
        if not self._solved:
            return True, "none"
        repairs = int(self._repairs[0])
        side = max(min(self.shape), 1)
        init = self.warm_init
        if init == "auto":
            init = "greedy" if repairs > WARM_GREEDY_FRACTION * side else "none"
        past = self._past_edges()
        fixed = repairs > self.rebuild_fraction * side
        capped = self._rebuild_edges is not None and repairs > self._repair_cap
        self._last_repairs = repairs
        self._capped = capped and not (past or fixed)   # from scratch by the learnt cap alone
        return past or fixed or capped, init

    def _learn(self, scratch, seconds):
        """The Numba engine's default switch, from the solver's own solves:
        a solve from scratch gives its seconds per edge; a warm solve that
        took longer than one from scratch would have (those seconds per edge
        times the edges now) caps the pairs to repair of the warm solves
        that follow at half of its own (never below
        :data:`LEARNT_CAP_FLOOR` of ``min(m, n)``: one slow solve must not
        send small batches to solves from scratch), and one that took under
        a quarter of it, with at least half the cap's pairs, doubles the
        cap, as does a solve from scratch that the cap alone decided (so a
        warm solve is tried again)."""
        if self._rebuild_edges is None:
            return
        nnz = max(int(self._rind.shape[0]), 1)
        if scratch:
            self._scratch_per_edge = seconds / nnz
            if self._capped:
                self._repair_cap *= 2
        elif self._scratch_per_edge is not None:
            estimate = self._scratch_per_edge * nnz
            if seconds > estimate:
                floor = LEARNT_CAP_FLOOR * max(min(self.shape), 1)
                self._repair_cap = max(1, floor, self._last_repairs // 2)
            elif seconds < 0.25 * estimate and self._last_repairs >= self._repair_cap / 2:
                self._repair_cap *= 2

    def _past_edges(self):
        """Whether the batches since the last solve changed more than
        :data:`REBUILD_EDGES_CPU` of the edges (CPU engines, default switch):
        the next solve then starts from scratch, so the batches that follow
        neither unmatch, nor count pairs to repair, nor patch the kept
        forest."""
        return (self._rebuild_edges is not None and self._solved
                and self._pending > self._rebuild_edges * max(int(self._rind.shape[0]), 1))

    def _out(self, a):
        """A result array: an int32 copy of `a`, as the input's kind (NumPy or CuPy)."""
        return _backend.output_like(a.astype(np.int32, copy=True), self._cupy_out)

    def _solve_here(self) -> _api.MatchingResult:
        """:meth:`solve` on the NumPy or CuPy engine (G-PR and the augmenting phases)."""
        t0 = time.perf_counter()
        m, n = self.shape
        scratch, init = self._plan()
        st = self._state()
        if scratch:
            _augment.invalidate(st)
            st.mu_row.fill(-1)
            st.mu_col.fill(-1)
            gstats = _run_gpr(st, init="greedy", fresh=True)
        elif self.warm_method == "augment":
            gstats = self._augment(st, init)
        else:
            _augment.invalidate(st)
            gstats = _run_gpr(st, init=init, relabel_k=self.relabel_k)
        # the cooperative augment counted the matched columns on its way out
        size = gstats.get("aug_matched")
        if size is None:
            size = int(_backend.reduce(st.mu_col >= 0, "sum"))
        stats = self._closed(gstats, scratch, init)
        res = _api.MatchingResult(self._out(self._mu_row), self._out(self._mu_col), int(size), stats)
        stats["time_total"] = time.perf_counter() - t0
        self._result = _api.MatchingResult(None, None, int(size), dict(stats))   # (for a cached solve)
        return res

    def _closed(self, stats, scratch, init):
        """A solve's `stats` with what every solve reports (``mode``,
        ``warm_init``, ``batch``, ``time_update``); the batches' counts are
        reset and the solver is marked solved (both engines' solves end
        here)."""
        stats = dict(stats, mode="scratch" if scratch else "dynamic", batch=self._pending,
                     time_update=self._t_update, warm_init=None if scratch else init)
        self._pending = 0
        self._repairs.fill(0)
        self._t_update = 0.0
        self._solved = True
        return stats

    def _augment(self, st, init):
        """Warm-started solve by augmenting-path phases after the heuristic
        `init` (G-PR finishes if they do not converge)."""
        kern = _driver.kernels_for(self.backend)
        t0 = time.perf_counter()
        if init != "none":   # the heuristics change pairs behind the kept forest's back
            _augment.invalidate(st)
            if init == "greedy":
                _driver.greedy(st, kern)
            else:
                _driver.karp_sipser(st, kern)
            kern.fix_matching(st)
        t1 = time.perf_counter()
        astats = _augment.augment(st, max_phases=MAX_AUGMENT_PHASES, incremental=True)
        stats = dict(backend=self.backend, push_iterations=0, global_relabels=0, time_init=t1 - t0,
                     time_relabel=0.0, time_push=0.0, **astats)
        if not astats["aug_converged"]:
            stats.pop("aug_matched", None)   # G-PR changes it
            gstats = _run_gpr(st, init="none", relabel_k=self.relabel_k)
            stats.update({k: v for k, v in gstats.items() if k not in ("time_init",)})
        return stats

    @_backend.serialized
    def matching(self, perm_type: PermType = "row") -> Array:
        """The current maximum matching in scipy's format (solving first if needed).

        Parameters
        ----------
        perm_type : {"row", "column"}
            ``"row"``: for each column its row (length n); ``"column"``: for
            each row its column (length m); -1 unmatched.

        Returns
        -------
        ndarray or cupy.ndarray of int32
        """
        check_option("perm_type", perm_type, _api.PERM_TYPES)
        res = self.solve()
        return res.col_to_row if perm_type == "row" else res.row_to_col


def _numba_solve(solver):
    """:meth:`MatchingSolver.solve <gpumatch.matching.MatchingSolver.solve>` on the Numba backend.

    From scratch (first solve, or more pairs to repair than
    ``rebuild_fraction`` allows): :func:`gpumatch.matching._cpu.run`
    (Karp–Sipser + Pothen–Fan+, or the multi-threaded path on large
    graphs).  Otherwise the surviving pairs are kept and Pothen–Fan+, or
    the threads' MS-BFS on large graphs, searches augmenting paths from the
    free columns (after ``warm_init``'s heuristic, when it resolves to one,
    serially then); its last phase, which finds none, proves the matching
    maximum.  The batches' edits of the kept CSR and CSC run compiled
    (:mod:`gpumatch._cpu_csr_edit`).
    """
    from . import _cpu   # imports Numba: only the "numba" backend loads it

    t0 = time.perf_counter()
    scratch, init = solver._plan()
    st = solver._state()
    if scratch:
        st.mu_row.fill(-1)
        st.mu_col.fill(-1)
        stats = _cpu.run(st, init="greedy")
    else:
        # from the pairs as they stand, the threads' search where the engine would use them
        stats = _cpu.run(st, init=init, parallel=init == "none")
    size = int(np.count_nonzero(st.mu_col >= 0))
    stats = dict(solver._closed(stats, scratch, init), aug_converged=True)
    res = _api.MatchingResult(solver._mu_row.astype(np.int32, copy=True), solver._mu_col.astype(np.int32, copy=True),
                              size, stats)
    stats["time_total"] = time.perf_counter() - t0
    solver._learn(scratch, stats["time_total"])
    solver._result = res
    return res

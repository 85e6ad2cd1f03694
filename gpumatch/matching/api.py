"""Public matching functions: scipy-compatible wrappers around the G-PR driver."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .. import _backend, _memory
from .._typing import Array, Backend, GraphLike, IndexLike, PermType
from .._validation import as_csr_graph, as_index_array, check_option
from . import _driver, _small

__all__ = ["maximum_bipartite_matching", "structural_rank", "bipartite_matching", "MatchingResult"]

PERM_TYPES = ("row", "column")
METHODS = ("gpr", "flow")
INITS = ("greedy", "karp_sipser", "none")

@dataclass
class MatchingResult:
    """A maximum matching of a bipartite graph, both ways.

    Attributes
    ----------
    row_to_col : array of int32, length m
        Column matched to each row, -1 if the row is unmatched (scipy's
        ``perm_type="column"`` format).
    col_to_row : array of int32, length n
        Row matched to each column, -1 if unmatched (scipy's
        ``perm_type="row"`` format).
    size : int
        Number of matched pairs.
    stats : dict
        ``backend``, ``initial_size``, ``push_iterations``,
        ``global_relabels``, ``max_level``, the time in seconds of each
        phase (``time_init``, ``time_relabel``, ``time_push``,
        ``time_fix``), ``finished_by`` (``"push-relabel"``, or
        ``"augmenting-paths"`` when augmenting-path phases finished the
        tail after a few push phases or the progress watch handed over;
        then also ``switch_reason``, ``aug_phases``, ``aug_paths`` and
        ``time_augment``) and ``active_history`` (the active columns
        found by each global relabel).
    cover_rows, cover_cols : array of bool or None
        With ``certificate=True``: a minimum vertex cover (König), as masks
        over rows and columns.  Every edge has an endpoint in it and it has
        ``size`` vertices, which proves the matching maximum.  Then
        ``stats["cover_source"]`` says where it came from: ``"labels"``
        (the last global relabel's search, which found no free column),
        ``"forest"`` or ``"backward"`` (the last augmenting phase's closed
        search trees, or its closed trees grown from the free columns) or
        ``"bfs"`` (a search of its own after the solve).
    """

    row_to_col: Any
    col_to_row: Any
    size: int
    stats: dict = field(default_factory=dict)
    cover_rows: Any = None
    cover_cols: Any = None


def _check_params(init, relabel_k, shrink_threshold):
    check_option("init", init, INITS)
    if isinstance(relabel_k, bool) or not isinstance(relabel_k, numbers.Real) or not (relabel_k > 0) \
            or not np.isfinite(relabel_k):
        raise ValueError(f"relabel_k must be a positive finite number, got {relabel_k!r}")
    if isinstance(shrink_threshold, bool) or not isinstance(shrink_threshold, numbers.Integral) \
            or shrink_threshold < 0:
        raise ValueError(f"shrink_threshold must be a non-negative integer, got {shrink_threshold!r}")


def _initial_col_to_row(initial, g, perm_type, idx):
    """Validate a warm start and return it as col_to_row (dtype `idx`) on the graph's backend."""
    xp = g.xp
    m, n = g.m, g.n
    if isinstance(initial, MatchingResult):
        initial, perm_type = initial.col_to_row, "row"
    arr = as_index_array(initial, "initial", g.backend)
    length, other = (n, m) if perm_type == "row" else (m, n)
    side, oside = ("column", "row") if perm_type == "row" else ("row", "column")
    if arr.shape[0] != length:
        raise ValueError(f"initial (perm_type={perm_type!r}) must have length {length} (one entry per "
                         f"{side}), got {arr.shape[0]}")
    arr = arr.astype(np.int64, copy=False)
    if arr.shape[0]:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < -1 or hi >= other:
            bad = lo if lo < -1 else hi
            raise ValueError(f"initial: value {bad} is not -1 or a {oside} index in [0, {other})")
    mine = xp.flatnonzero(arr >= 0)
    theirs = arr[mine]
    if theirs.shape[0]:
        counts = xp.bincount(theirs, minlength=other)
        if int(counts.max()) > 1:
            dup = int(xp.argmax(counts))
            raise ValueError(f"initial is not a matching: {oside} {dup} is matched more than once")
    rows, cols = (theirs, mine) if perm_type == "row" else (mine, theirs)
    if rows.shape[0]:
        # Edge test: key row * n + col against the sorted keys of all edges.
        nnz = g.nnz
        erow = _driver._csr.segment_owner(g.indptr.astype(np.int64), nnz)
        ekeys = erow * max(n, 1) + g.indices.astype(np.int64)
        keys = rows * max(n, 1) + cols
        at = xp.searchsorted(ekeys, keys)
        at = xp.minimum(at, max(nnz - 1, 0))
        ok = (ekeys[at] == keys) if nnz else xp.zeros(keys.shape[0], dtype=bool)
        if not bool(ok.all()):
            k = int(xp.flatnonzero(~ok)[0])
            raise ValueError(f"initial is not a matching of the graph: ({int(rows[k])}, {int(cols[k])}) "
                             "is not a stored entry (row, column)")
    col_to_row = xp.full(n, -1, dtype=idx)
    col_to_row[cols] = rows.astype(idx, copy=False)
    return col_to_row


def _solve(graph, backend, initial, init, relabel_k, shrink_threshold, perm_type="row", certificate=False):
    if initial is None and _small.wanted(graph, backend):   # "auto" on a CPU, a small input: no Numba start-up
        return _small.solve(graph, certificate)
    g = as_csr_graph(graph, backend)
    if g.backend == "cupy":   # before the solve allocates: a clear error instead of CuPy's OutOfMemoryError
        need = _memory.memory_estimate(g.shape, g.nnz, "matching", "cupy", certificate, include_input=False)
        _memory.check_device_memory(need, f"a matching of a {g.m} x {g.n} graph with {g.nnz} entries")
    st = _driver.make_state(g, csc=g.backend != "numba")   # the Numba engine builds its CSC when it needs it
    initial_col = None if initial is None else _initial_col_to_row(initial, g, perm_type, st.idx)
    if st.backend == "numba":  # the compiled CPU engine (Karp-Sipser + Pothen-Fan+)
        from . import _cpu   # imports Numba: only the "numba" backend loads it

        stats = _cpu.run(st, init=init, initial_col=initial_col)
        if certificate:
            stats["cover_source"] = "bfs"   # (the engine's own alternating search)
        return g, st, stats, (_cpu.konig_cover_masks(st) if certificate else (None, None))
    stats = _driver.run_gpr(st, init=init, initial_col=initial_col, relabel_k=float(relabel_k),
                            shrink_threshold=int(shrink_threshold), fresh=True)
    _driver.release_scratch(st, keep_cover=certificate)     # (a static solve: only the certificate is left)
    cover = _driver.konig_cover_masks(st) if certificate else (None, None)
    if certificate:
        stats["cover_source"] = st.extra.pop("cover_source")
    return g, st, stats, cover


@_backend.device_entry
def maximum_bipartite_matching(graph: GraphLike, perm_type: PermType = "row", *,
                               method: Literal["gpr", "flow"] = "gpr", backend: Backend = "auto",
                               initial: IndexLike | MatchingResult | None = None,
                               init: Literal["greedy", "karp_sipser", "none"] = "greedy", relabel_k: float = 0.7,
                               shrink_threshold: int = 512) -> Array:
    """Maximum cardinality matching of a bipartite graph (drop-in for scipy).

    The rows and the columns of the ``m x n`` sparse matrix `graph` are the
    two sides of a bipartite graph; each stored entry ``(i, j)`` is an edge.
    Stored entries are edges *including explicit zeros*, exactly as in
    :func:`scipy.sparse.csgraph.maximum_bipartite_matching`; call
    ``graph.eliminate_zeros()`` first for MATLAB ``sprank`` semantics.

    Parameters
    ----------
    graph : sparse matrix or array, or tuple
        scipy.sparse CSR/CSC/COO, cupyx.scipy.sparse CSR/CSC/COO, or
        ``(indptr, indices, shape)`` CSR arrays (NumPy or CuPy).
    perm_type : {"row", "column"}, optional
        ``"row"`` (default): return, for each column, its matched row
        (length n).  ``"column"``: for each row, its matched column
        (length m).
    method : {"gpr", "flow"}, optional
        ``"gpr"``: G-PR push-relabel [1]_.  ``"flow"``: maximum flow on the
        unit network (:mod:`gpumatch.flow`).
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        Where to run; ``"auto"`` uses the GPU when CuPy finds one, else
        ``"numba"``: the compiled CPU engine (Karp–Sipser + Pothen–Fan+ [2]_,
        multi-threaded from 1M edges when Numba has several threads, where
        the matching returned may vary from run to run; it ignores
        `relabel_k` and `shrink_threshold`, and ``init="greedy"`` runs
        Karp–Sipser's degree-one rule, a greedy pass, then Karp–Sipser
        there; no search runs when that matches a whole side); a small
        input there (at most 8192 rows, columns and entries, no `initial`)
        goes to SciPy's Hopcroft–Karp instead while the engine is not
        loaded, which spares a new process Numba's start-up.
    initial : array of int, optional
        Warm start: a matching in the format of the return value for
        `perm_type` (or a :class:`MatchingResult`).  It must be a matching
        of `graph` (right length, stored entries only, no vertex twice),
        else ``ValueError``, whatever the `method`; ``method="flow"``
        checks it but starts from an empty matching.
    init : {"greedy", "karp_sipser", "none"}, optional
        Initial-matching heuristic, applied on top of `initial`.
    relabel_k : float, optional
        A global relabel runs after ``ceil(relabel_k * maxLevel)`` push
        iterations (maxLevel: largest label of the previous relabel).
    shrink_threshold : int, optional
        The active-column list is compacted when longer than this.

    Returns
    -------
    perm : ndarray or cupy.ndarray of int32
        The matching, -1 for unmatched vertices.  CuPy output for GPU
        input, NumPy output otherwise (whichever backend ran).

    Raises
    ------
    TypeError
        Dense or unsupported input.
    ValueError
        Malformed graph, unknown option value, or an invalid `initial`.

    See Also
    --------
    bipartite_matching : both directions, statistics and a certificate.
    structural_rank

    Notes
    -----
    G-PR [1]_ keeps a matching and labels ψ (alternating distances to a free
    row).  Every unmatched column pushes to its neighbour row of minimum ψ,
    taking the row from its current column, which becomes unmatched; a BFS
    from the free rows makes the labels exact every few iterations and
    ends the run when no free column is reachable.  On the GPU each push
    iteration is a claim (every active column names its row; one claim per
    row survives) then a push by the surviving claims, without atomics.
    A progress watch hands over to augmenting-path phases (vertex-disjoint
    alternating BFS trees) when the active columns stop halving over a few
    global relabels, so every input finishes: at most
    ``4 (log2 n + 2)`` relabels, then at most ``2 a + 4`` phases for ``a``
    active columns, each O(nnz) work.  Far fewer are typical.

    Several maximum matchings may exist; which one is returned may vary
    between runs and backends (the size does not).

    References
    ----------
    .. [1] M. Deveci, K. Kaya, B. Uçar, Ü. V. Çatalyürek, "A Push-Relabel-Based
           Maximum Cardinality Bipartite Matching Algorithm on GPUs", 42nd
           International Conference on Parallel Processing (ICPP), 2013,
           pp. 21-29. :doi:`10.1109/ICPP.2013.21`
    .. [2] I. S. Duff, K. Kaya and B. Uçar, "Design, implementation, and
           analysis of maximum transversal algorithms", ACM Trans. Math.
           Softw. 38(2), 2011. :doi:`10.1145/2049673.2049677`

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch.matching import maximum_bipartite_matching
    >>> A = sp.csr_matrix([[1, 1, 0], [1, 0, 0], [0, 0, 0]])
    >>> perm = maximum_bipartite_matching(A, backend="numpy")
    >>> int((perm >= 0).sum()), perm.dtype.name
    (2, 'int32')
    >>> perm.tolist()
    [1, 0, -1]
    >>> int((maximum_bipartite_matching(A, backend="numba") >= 0).sum())
    2
    """
    check_option("perm_type", perm_type, PERM_TYPES)
    check_option("method", method, METHODS)
    _check_params(init, relabel_k, shrink_threshold)
    if method == "flow":
        g = as_csr_graph(graph, backend)
        if initial is not None:   # checked as for "gpr" (a bad one is an error), not used
            _initial_col_to_row(initial, g, perm_type, g.index_dtype)
        from ..flow._maxflow import matching_by_flow   # flow, a layer below, loads only for this method

        row_to_col, col_to_row = matching_by_flow(g)
        out = col_to_row if perm_type == "row" else row_to_col
        return _backend.output_like(out, g.cupy_out).astype(np.int32, copy=False)
    g, st, _, _ = _solve(graph, backend, initial, init, relabel_k, shrink_threshold, perm_type)
    out = st.mu_col if perm_type == "row" else st.mu_row
    return _backend.output_like(out.astype(np.int32, copy=False), g.cupy_out)


@_backend.device_entry
def structural_rank(graph: GraphLike, *, backend: Backend = "auto") -> int:
    """Structural rank of a sparse matrix: its maximum matching size.

    Same result as :func:`scipy.sparse.csgraph.structural_rank`: stored
    entries count, explicit zeros included.

    Parameters
    ----------
    graph : sparse matrix or array, or tuple
        As in :func:`maximum_bipartite_matching`.
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        As in :func:`maximum_bipartite_matching`.

    Returns
    -------
    int

    Notes
    -----
    Computed with G-PR [1]_.

    References
    ----------
    .. [1] M. Deveci, K. Kaya, B. Uçar, Ü. V. Çatalyürek, "A Push-Relabel-Based
           Maximum Cardinality Bipartite Matching Algorithm on GPUs", 42nd
           International Conference on Parallel Processing (ICPP), 2013,
           pp. 21-29. :doi:`10.1109/ICPP.2013.21`

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch.matching import structural_rank
    >>> structural_rank(sp.csr_matrix([[1, 1, 0], [1, 0, 0], [1, 0, 0]]), backend="numpy")
    2
    """
    _, st, _, _ = _solve(graph, backend, None, "greedy", 0.7, 512)
    return int(_backend.reduce(st.mu_col >= 0, "sum"))


@_backend.device_entry
def bipartite_matching(graph: GraphLike, *, backend: Backend = "auto",
                       initial: IndexLike | MatchingResult | None = None,
                       init: Literal["greedy", "karp_sipser", "none"] = "greedy", certificate: bool = False,
                       relabel_k: float = 0.7, shrink_threshold: int = 512) -> MatchingResult:
    """Maximum bipartite matching with both directions, statistics and a certificate.

    Parameters
    ----------
    graph : sparse matrix or array, or tuple
        As in :func:`maximum_bipartite_matching`; stored entries are edges,
        explicit zeros included, as in scipy.
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        As in :func:`maximum_bipartite_matching` (``"numba"``: Karp–Sipser +
        Pothen–Fan+, whose statistics are ``aug_phases`` and ``aug_paths``,
        and ``degree_one_pairs``, the pairs of the degree-one rule).
    initial : array of int or MatchingResult, optional
        Warm start: for each column its row (-1 unmatched), length n, or a
        previous :class:`MatchingResult`.  Invalid ones raise ``ValueError``.
    init : {"greedy", "karp_sipser", "none"}, optional
        Initial-matching heuristic, applied on top of `initial`.
    certificate : bool, optional
        Also return a König vertex cover (``cover_rows``, ``cover_cols``)
        of the matching's size, found by one alternating BFS.
    relabel_k, shrink_threshold
        As in :func:`maximum_bipartite_matching`.

    Returns
    -------
    MatchingResult
        Arrays on the GPU (CuPy) for GPU input, NumPy otherwise.

    Notes
    -----
    Several maximum matchings may exist; which one is returned may vary
    between runs and backends.  Algorithm: G-PR [1]_.

    References
    ----------
    .. [1] M. Deveci, K. Kaya, B. Uçar, Ü. V. Çatalyürek, "A Push-Relabel-Based
           Maximum Cardinality Bipartite Matching Algorithm on GPUs", 42nd
           International Conference on Parallel Processing (ICPP), 2013,
           pp. 21-29. :doi:`10.1109/ICPP.2013.21`

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch.matching import bipartite_matching
    >>> A = sp.csr_matrix([[1, 1], [1, 0], [1, 0]])
    >>> res = bipartite_matching(A, backend="numpy", certificate=True)
    >>> res.size, res.row_to_col.tolist(), res.col_to_row.tolist()
    (2, [1, 0, -1], [1, 0])
    >>> int(res.cover_rows.sum() + res.cover_cols.sum())
    2
    """
    _check_params(init, relabel_k, shrink_threshold)
    if not isinstance(certificate, (bool, np.bool_)):
        raise ValueError(f"certificate must be True or False, got {certificate!r}")
    g, st, stats, (cr, cc) = _solve(graph, backend, initial, init, relabel_k, shrink_threshold,
                                    "row", bool(certificate))
    out = lambda a: None if a is None else _backend.output_like(a, g.cupy_out)  # noqa: E731
    size = int(_backend.reduce(st.mu_col >= 0, "sum"))
    return MatchingResult(
        row_to_col=out(st.mu_row.astype(np.int32, copy=False)),
        col_to_row=out(st.mu_col.astype(np.int32, copy=False)),
        size=size, stats=stats, cover_rows=out(cr), cover_cols=out(cc))

"""Public assignment functions: scipy-compatible wrappers around the compiled engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .. import _backend
from .._typing import Array, Backend, GraphLike, SparseMatrix
from .._validation import check_option
from ._checks import check_int_range as _check_int_range
from ._checks import device_check_invalid as _device_check_invalid
from ._checks import device_numeric as _device_numeric
from ._problems import _as_maximize, _dense_problem, _sparse_problem
from ._solve import _exact_sum, _maximum_matching, _solve, _weights_of

__all__ = ["min_weight_full_bipartite_matching", "linear_sum_assignment", "assignment", "AssignmentResult"]


@dataclass
class AssignmentResult:
    """A minimum-cost (or maximum-weight) assignment and its certificate.

    Attributes
    ----------
    row_ind, col_ind : ndarray of int64
        The matched pairs, sorted by row.
    cost : int or float
        Total weight of the matched entries, in the caller's weights (not
        negated for ``maximize=True``): a Python ``int`` for integer or
        boolean input (summed exactly, never wrapped), else a ``float``.
    u : ndarray, length m
        Row potentials (int64 for integer input, else float64).
    v : ndarray, length n
        Column potentials.  Together with `u` they prove the assignment
        optimal (see Notes of :func:`assignment` and
        :func:`gpumatch.testing.check_assignment`).
    size : int
        Number of matched pairs.
    full : bool
        True when the matching covers the smaller side (a full matching).
    maximize : bool
        The `maximize` option the problem was solved with.
    stats : dict
        ``backend``, ``engine``, ``transposed`` (the engine ran on the
        transpose because ``m > n``) and ``rows_left_free`` (``full=False``).
    """

    row_ind: Any
    col_ind: Any
    cost: Any
    u: Any
    v: Any
    size: int
    full: bool
    maximize: bool = False
    stats: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _engine_backend(backend) -> str:
    """The engine that runs for `backend`: ``"numba"`` (the compiled CPU
    engine), ``"cupy"`` (the GPU auction) or ``"numpy"`` (its NumPy twin).
    ``"auto"`` is the compiled CPU engine, for CuPy input too (the results
    go back to the device); the GPU runs on request.  (On the H200 the GPU
    auction takes 0.15 s on a random sparse 100k x 100k problem with 1.1M
    entries and 1.1 s at 1M x 1M, the CPU engine 0.38 s and 11.9 s on the
    same machine's 16-core host; smaller problems, where the GPU's fixed
    costs weigh more, have not been compared.)  Every engine needs
    Numba (the GPU engine's host finish is compiled): RuntimeError
    without."""
    check_option("backend", backend, _backend.BACKENDS)
    if backend == "auto":
        backend = "numba"
    if backend == "cupy":
        _backend.resolve_backend("cupy")       # RuntimeError without a device
    _backend.resolve_backend("numba")          # RuntimeError without Numba
    return backend


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------


@_backend.device_entry
def min_weight_full_bipartite_matching(biadjacency: GraphLike, maximize: bool = False, *,
                                       backend: Backend = "auto") -> tuple[Array, Array]:
    r"""Minimum weight full matching of a bipartite graph (drop-in for scipy).

    Same signature, results and errors as
    :func:`scipy.sparse.csgraph.min_weight_full_bipartite_matching`: the rows
    and columns of the sparse ``m x n`` matrix `biadjacency` are the two
    sides of a bipartite graph, each stored non-zero entry ``(i, j)`` an edge
    of weight ``biadjacency[i, j]``, and the matching returned covers the
    smaller side (``min(m, n)`` pairs) with the least total weight.

    As in scipy, explicit zeros are *not* edges: they are removed, with
    scipy's ``UserWarning`` ("explicit zero weights are removed before
    matching").  Add a constant to every weight to use zero-weight edges.
    Duplicate entries of COO or non-canonical CSR input are summed.

    Parameters
    ----------
    biadjacency : sparse matrix or array
        scipy.sparse (or cupyx.scipy.sparse) CSR, CSC or COO; integer,
        boolean or floating-point weights.  The input is never densified
        and never written into.
    maximize : bool, optional
        Find a maximum weight full matching instead.
    backend : {"auto", "numba", "numpy", "cupy"}, optional
        ``"numba"``: the compiled CPU engine (below).  ``"cupy"``: the GPU
        engine, an auction with epsilon scaling whose result the host makes
        exact (see Notes).  ``"numpy"``: the same GPU algorithm run by its
        NumPy twin (slow; for testing).  ``"auto"``: the compiled CPU
        engine, for CuPy input too (the GPU auction is not yet faster: see
        ``benchmarks/RESULTS.md``).  Output follows input (CuPy arrays for
        CuPy input) whichever engine ran.

    Returns
    -------
    row_ind, col_ind : ndarray
        The matched pairs; ``biadjacency[row_ind, col_ind].sum()`` is the
        total weight.  As in scipy, the row indices are sorted; for
        ``m <= n`` they are ``numpy.arange(m)`` (int64) and `col_ind` has
        the input's index dtype (int32 normally); for ``m > n`` it is the
        other way round.

    Raises
    ------
    ValueError
        No full matching exists ("no full matching exists", scipy's
        message); a NaN weight, or ``-inf`` (``+inf`` with `maximize`).
    TypeError
        Dense input or an unsupported sparse format, as scipy; complex
        weights (scipy drops their imaginary part with a warning).
    OverflowError
        Integer weights too large to solve exactly in int64 (see Notes).
    RuntimeError
        ``backend="cupy"`` without a usable CUDA device, or no Numba (every
        engine needs it).

    See Also
    --------
    assignment : the same solve with its cost, dual certificate and a
        maximum-cardinality mode.
    linear_sum_assignment : dense cost matrices.
    gpumatch.maximum_bipartite_matching : unweighted matching.

    Notes
    -----
    The engine is a shortest augmenting path method with dual potentials
    after Jonker and Volgenant [1]_ (LAPJVsp is its sparse form, used by
    scipy): two passes of augmenting row reduction, then one Dijkstra search
    on reduced costs from each row still free, over the entries it reaches
    (a heap, so a search costs the part of the graph it explores), stopped
    at the first free column.  A maximum matching (gpumatch's compiled
    matching engine) first tells whether a full matching exists at all.
    Square inputs start from column prices found by a few phases of
    Bertsekas' forward auction with epsilon scaling [3]_: near-optimal
    prices leave the row reduction few rows unmatched and make the searches
    short, where from zero prices the last searches each cross most of the
    graph.  The answer and its potentials come from the exact phases, so
    they do not depend on the auction being accurate.  A full matching costs
    at most ``min(m, n)`` searches of ``O(nnz log nnz)`` each; far less is
    typical.

    The GPU engine (``backend="cupy"``) is Bertsekas' forward auction with
    epsilon scaling [3]_, Jacobi-parallel [4]_: every unassigned row bids
    for its best column at once, each column goes to its largest bid (a
    64-bit ``atomicMax`` on the packed key ``(bid, row)``), and global price
    updates after Goldberg and Kennedy [5]_ steer the last rows of each
    phase toward the free columns.  Integer weights are scaled by
    ``min(m, n) + 1``, so that the last phase (``eps = 1``) proves the
    matching optimal; the host then lowers the prices until every matched
    pair is exactly tight (linear time), matches any row the auction left
    by shortest augmenting paths, and the answer is as exact as the CPU
    engine's.  A maximum matching by gpumatch's GPU engine checks
    feasibility first.  Module :mod:`gpumatch.lap._driver` has the details.

    Integer weights are solved exactly in int64 when
    ``max|w| * (4 min(m, n) + 8) < 2**62`` (the prices never pass that
    bound), else ``OverflowError`` (scipy solves such inputs in float64,
    inexactly).  ``+inf`` (``-inf`` with `maximize`) marks a forbidden
    pair and is dropped, as in :func:`scipy.optimize.linear_sum_assignment`
    (scipy's sparse function does arithmetic with it); NaN is rejected.

    Several optimal matchings may exist; which one is returned may differ
    from scipy's (the total weight does not).

    References
    ----------
    .. [1] R. Jonker and A. Volgenant, "A shortest augmenting path algorithm
           for dense and sparse linear assignment problems", Computing 38,
           325-340, 1987. :doi:`10.1007/BF02278710`
    .. [2] R. M. Karp, "An algorithm to solve the m x n assignment problem in
           expected time O(mn log n)", Networks 10(2), 143-152, 1980.
           :doi:`10.1002/net.3230100205`
    .. [3] D. P. Bertsekas, "The auction algorithm: a distributed relaxation
           method for the assignment problem", Annals of Operations Research
           14, 105-123, 1988. :doi:`10.1007/BF02186476`
    .. [4] D. P. Bertsekas and D. A. Castañon, "Parallel synchronous and
           asynchronous implementations of the auction algorithm", Parallel
           Computing 17(6-7), 707-732, 1991.
           :doi:`10.1016/S0167-8191(05)80062-6`
    .. [5] A. V. Goldberg and R. Kennedy, "An efficient cost scaling
           algorithm for the assignment problem", Mathematical Programming
           71, 153-177, 1995. :doi:`10.1007/BF01585996`

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import min_weight_full_bipartite_matching
    >>> A = sp.csr_array([[3, 3, 6], [4, 3, 5], [10, 1, 8]])
    >>> row_ind, col_ind = min_weight_full_bipartite_matching(A)
    >>> col_ind.tolist(), int(A[row_ind, col_ind].sum())
    ([0, 2, 1], 9)
    >>> row_ind, col_ind = min_weight_full_bipartite_matching(sp.csr_array([[0, 1], [3, 1], [1, 4]]))
    >>> row_ind.tolist(), col_ind.tolist()
    ([0, 2], [1, 0])
    """
    maximize = _as_maximize(maximize)
    engine = _engine_backend(backend)
    indptr, indices, c, (m, n), cupy_out, _ = _sparse_problem(biadjacency, maximize)
    rows, cols, _, _, transposed, _ = _solve(indptr, indices, c, (m, n), True, "no full matching exists",
                                             engine=engine)
    idx = np.int32 if max(m, n) <= np.iinfo(np.int32).max else np.int64
    if transposed:
        rows = rows.astype(idx)
    else:
        cols = cols.astype(idx)
    return _backend.output_like(rows, cupy_out), _backend.output_like(cols, cupy_out)


@_backend.device_entry
def linear_sum_assignment(cost_matrix: npt.ArrayLike | Array, maximize: bool = False, *,
                          backend: Backend = "auto") -> tuple[Array, Array]:
    r"""Solve the linear sum assignment problem of a dense cost matrix (drop-in for scipy).

    Same semantics, results and errors as
    :func:`scipy.optimize.linear_sum_assignment`: each row is assigned to at
    most one column and each column to at most one row, ``min(m, n)``
    pairs in all, of least total cost.  ``inf`` (``-inf`` with `maximize`)
    marks a forbidden pair.

    Parameters
    ----------
    cost_matrix : array_like, 2-D
        The cost matrix (NumPy array, nested list, or CuPy array).  Integer
        and boolean costs are solved exactly in int64; floating-point costs
        in float64.
    maximize : bool, optional
        Maximise the total instead.
    backend : {"auto", "numba", "numpy", "cupy"}, optional
        ``"numba"``: the compiled CPU engine.  ``"cupy"``: the dense GPU
        auction, the matrix validated and solved on the device (see Notes).
        ``"numpy"``: its NumPy twin.  ``"auto"``: the CPU engine (the
        results follow the input's module; the GPU auction is not yet
        faster, see ``benchmarks/RESULTS.md``).

    Returns
    -------
    row_ind, col_ind : ndarray of int64
        Row indices (sorted; ``arange(m)`` when ``m <= n``) and the matched
        column of each; ``cost_matrix[row_ind, col_ind].sum()`` is the
        optimum.  CuPy arrays for CuPy input.

    Raises
    ------
    ValueError
        Not 2-D ("expected a matrix (2-D array), got a ... array"), NaN or
        ``-inf`` (``+inf`` with `maximize`) entries ("matrix contains
        invalid numeric entries"), no assignment of finite cost ("cost
        matrix is infeasible"), or sparse input.
    TypeError
        Complex, string or object entries.
    OverflowError
        Integer costs too large to solve exactly in int64 (scipy solves
        them in float64, inexactly).
    RuntimeError
        ``backend="cupy"`` without a usable CUDA device.

    See Also
    --------
    min_weight_full_bipartite_matching : sparse input.
    assignment : the cost, the dual certificate, sparse or dense input.

    Notes
    -----
    Shortest augmenting paths after Jonker and Volgenant [1]_, as in
    :func:`min_weight_full_bipartite_matching`, with their dense search:
    the columns kept in one array split into settled, to-scan and the rest,
    each new least distance found by one pass over the rest (``O(n)`` per
    settled column, no heap).  The row reduction reads a CSR view of the
    finite entries; a square matrix starts from the column minima as prices
    (their column reduction).  ``O(n^2)`` per search, ``O(n^3)`` in the
    worst case.

    On the GPU (``backend="cupy"``) the auction of
    :func:`min_weight_full_bipartite_matching` runs on the matrix itself,
    a warp reading each bidding row, and returns the device's answer:
    integer costs exactly optimal (scaled by ``min(m, n) + 1``, see there),
    float costs within ``min(m, n) * eps`` of the optimum, with ``eps``
    about ``2**-40`` times the largest cost or cost range (or ``2**-44``
    times the largest price, where that is more).  A wide matrix
    (``m < n <= 5 m``) gets ``n - m`` rows of zeros; a wider one, integer
    costs too large to scale, or an auction that cannot finish, is solved
    on the host by the CPU engine.

    References
    ----------
    .. [1] R. Jonker and A. Volgenant, "A shortest augmenting path algorithm
           for dense and sparse linear assignment problems", Computing 38,
           325-340, 1987. :doi:`10.1007/BF02278710`

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch import linear_sum_assignment
    >>> cost = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    >>> row_ind, col_ind = linear_sum_assignment(cost)
    >>> col_ind.tolist(), int(cost[row_ind, col_ind].sum())
    ([1, 0, 2], 5)
    >>> linear_sum_assignment([[np.inf, 1.0], [np.inf, 2.0]])
    Traceback (most recent call last):
    ...
    ValueError: cost matrix is infeasible
    """
    maximize = _as_maximize(maximize)
    engine = _engine_backend(backend)
    if engine != "numba":
        return _lsa_auction(cost_matrix, maximize, engine)
    indptr, indices, c, (m, n), cupy_out, _, dense = _dense_problem(cost_matrix, maximize)
    rows, cols, _, _, _, _ = _solve(indptr, indices, c, (m, n), True, "cost matrix is infeasible", dense)
    return _backend.output_like(rows, cupy_out), _backend.output_like(cols, cupy_out)


def _lsa_auction(cost_matrix, maximize, engine):
    """:func:`linear_sum_assignment` by the dense auction, the matrix kept on
    the engine's device: validated there, solved there (integers exactly,
    floats to the auction's tolerance), copied to the host only where the
    auction cannot finish (then the compiled CPU engine answers)."""
    from . import _driver

    if sp.issparse(cost_matrix) or _backend.is_cupy_sparse(cost_matrix):
        raise ValueError("cost_matrix must be a dense array; for sparse input use "
                         "min_weight_full_bipartite_matching or assignment")
    cupy_out = _backend.is_cupy_array(cost_matrix)
    xp = _backend.get_xp(engine)
    a = xp.asarray(cost_matrix if cupy_out or engine == "cupy" else np.asarray(cost_matrix))
    if a.ndim != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {a.ndim} array")
    C = _device_numeric(a, xp, "cost_matrix")
    m, n = (int(t) for t in C.shape)
    if C.dtype.kind == "f":
        _device_check_invalid(C, xp, maximize)
    else:
        _check_int_range(C, min(m, n), "weights")
    if maximize:
        C = -C                    # a copy: the caller's array is never written
    transposed = m > n
    if transposed:
        C = C.T
        m, n = n, m
    C = xp.ascontiguousarray(C)
    x = None
    if m and C.dtype.kind == "f" and not bool(xp.isfinite(C).all()):
        fin = _backend.to_numpy(xp.isfinite(C))     # forbidden pairs: a full assignment must exist
        ptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(fin.sum(axis=1), out=ptr[1:])
        if int((_maximum_matching(ptr, np.nonzero(fin)[1], m, n) >= 0).sum()) < m:
            raise ValueError("cost matrix is infeasible")
    if m:
        x = None
        # The forward auction proves a square problem optimal; m < n gets n - m
        # rows of zeros (they take the columns nobody needs) where that at most
        # quintuples the matrix, else the host engine answers.
        if m == n or n <= 5 * m:
            Cs = C if m == n else xp.concatenate([C, xp.zeros((n - m, n), dtype=C.dtype)])
            x, _ = _driver.solve_dense(Cs, engine)
        if x is None:             # the auction could not finish: the compiled CPU engine
            x = xp.asarray(linear_sum_assignment(_backend.to_numpy(C), backend="numba")[1])
        x = x[:m].astype(np.int64)
    else:
        x = xp.zeros(0, dtype=np.int64)
    rows = xp.arange(m, dtype=np.int64)
    if transposed:
        rows, x = xp.sort(x), xp.argsort(x).astype(np.int64)
    return _backend.output_like(rows, cupy_out), _backend.output_like(x, cupy_out)


@_backend.device_entry
def assignment(A: SparseMatrix | npt.ArrayLike | Array, maximize: bool = False, *, full: bool = True,
               backend: Backend = "auto") -> AssignmentResult:
    r"""Optimal assignment with its cost and a dual certificate of optimality.

    Parameters
    ----------
    A : sparse matrix or array, or dense array_like
        Sparse input (scipy/cupyx CSR, CSC or COO) follows
        :func:`min_weight_full_bipartite_matching`: stored non-zero entries
        are the edges (explicit zeros removed with scipy's warning).  Dense
        input follows :func:`linear_sum_assignment`: every entry is an
        edge, zeros included, and ``inf`` (``-inf`` with `maximize`) is a
        forbidden pair.
    maximize : bool, optional
        Maximise the total weight instead.
    full : bool, optional
        True (default): the matching must cover the smaller side, else
        ``ValueError`` (as scipy).  False: return a maximum-cardinality
        matching of least weight among them when no full matching exists
        (scipy issue #14041); `size` says how many pairs.
    backend : {"auto", "numba", "numpy", "cupy"}, optional
        As for :func:`min_weight_full_bipartite_matching`.

    Returns
    -------
    AssignmentResult
        ``row_ind, col_ind`` (int64, sorted by row), ``cost`` (exact Python
        ``int`` for integer weights), the potentials ``u`` (rows) and ``v``
        (columns), ``size``, ``full``, ``stats``.

    Raises
    ------
    ValueError
        ``full=True`` and no full matching exists; invalid weights (NaN,
        ``-inf``, or ``+inf`` with `maximize`); an unknown `backend`.
    TypeError, OverflowError, RuntimeError
        As for :func:`min_weight_full_bipartite_matching`.

    Notes
    -----
    **The certificate.**  With reduced costs ``r_ij = c_ij - u_i - v_j``
    over the stored (finite) entries, a minimisation result satisfies

    * ``r_ij >= 0`` on every entry and ``r_ij = 0`` on every matched one;
    * among the columns that some maximum matching leaves free (those that
      alternating paths reach from a free column), every free column's
      ``v`` is at least every matched column's ``v`` of its connected
      component; the same for rows and ``u``.

    Then any matching ``M'`` of the same size costs at least
    ``sum(u over its rows) + sum(v over its columns)``, which the second
    condition bounds below by the same sum over the returned matching,
    which equals its cost: the returned matching is optimal.  With
    `maximize` the potentials are those of the negated problem, negated
    back: ``r_ij <= 0`` everywhere and the order conditions flip.
    :func:`gpumatch.testing.check_assignment` checks all of it.

    Integer weights are exact (int64, see
    :func:`min_weight_full_bipartite_matching` for the range).  With float
    weights the engine's arithmetic rounds: the reduced costs hold to a
    tolerance of about ``1e-9 * max(1, max|c|, max|u|, max|v|)`` in
    practice (the default of ``check_assignment``), and the cost equals
    scipy's to the same relative tolerance.  Float weights that are all
    whole numbers (sparse input, as cupyx matrices must carry integers) are
    solved as integers, exactly.

    **``full=False``.**  A maximum matching of size ``k`` comes first
    (gpumatch's unweighted engine); it need not be of least weight.  The
    rows that some maximum matching leaves free are those its alternating
    paths reach from its free rows, and the same for columns.  Each such
    row gets ``m_j - k_j`` extra columns of weight 0, those of its connected
    component ``j`` (``m_j`` rows, ``k_j`` of them matched), and, when that
    adds at most about ``nnz`` entries, each such column ``n_j - k_j`` extra
    rows of weight 0 (a square problem, which the auction prices speed up).
    A full matching of the extended matrix holds exactly ``k`` real pairs,
    and the cheapest one the cheapest maximum matching; one solve finds it.
    Many small components (tracking) keep the extension small.

    References
    ----------
    .. [1] R. Jonker and A. Volgenant, "A shortest augmenting path algorithm
           for dense and sparse linear assignment problems", Computing 38,
           325-340, 1987. :doi:`10.1007/BF02278710`
    .. [2] D. F. Crouse, "On implementing 2D rectangular assignment
           algorithms", IEEE Trans. Aerospace and Electronic Systems 52(4),
           1679-1696, 2016. :doi:`10.1109/TAES.2016.140952`

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import assignment
    >>> A = sp.csr_array([[3, 3, 6], [4, 3, 5], [10, 1, 8]])
    >>> res = assignment(A)
    >>> res.col_ind.tolist(), res.cost
    ([0, 2, 1], 9)
    >>> bool((A.toarray()[res.row_ind, res.col_ind] - res.u - res.v[res.col_ind] == 0).all())
    True

    Rows 0 and 1 both have only column 0: no full matching exists, but the
    cheapest matching of the largest size does.

    >>> B = sp.csr_array([[5, 0, 0], [2, 0, 0], [7, 1, 0]])
    >>> res = assignment(B, full=False)
    >>> res.row_ind.tolist(), res.col_ind.tolist(), res.cost, res.full
    ([1, 2], [0, 1], 3, False)
    """
    maximize = _as_maximize(maximize)
    if not isinstance(full, (bool, np.bool_)):
        raise ValueError(f"full must be True or False, got {full!r}")
    engine = _engine_backend(backend)
    sparse = sp.issparse(A) or _backend.is_cupy_sparse(A)
    if sparse:
        indptr, indices, c, (m, n), cupy_out, kind = _sparse_problem(A, maximize, name="A")
        dense = None
        what = "no full matching exists"
    else:
        indptr, indices, c, (m, n), cupy_out, kind, dense = _dense_problem(A, maximize)
        what = "cost matrix is infeasible"
    info = {}
    rows, cols, u, v, transposed, nfree = _solve(indptr, indices, c, (m, n), bool(full), what,
                                                 None if sparse else dense, engine, info)
    vals = _weights_of(indptr, indices, c, rows, cols)
    cost = _exact_sum(vals)
    if maximize:
        cost = -cost
        u, v = -u, -v
        if isinstance(cost, float) and cost == 0.0:
            cost = 0.0
    size = int(rows.shape[0])
    out = lambda a: _backend.output_like(a, cupy_out)  # noqa: E731
    stats = {"backend": engine, "engine": "shortest augmenting paths (Jonker-Volgenant)",
             "transposed": transposed, "rows_left_free": int(nfree)}
    if engine != "numba":
        stats.update(info)
        stats["engine"] = info.get("engine", "auction (Jacobi, epsilon scaling) + host finish")
    return AssignmentResult(out(rows), out(cols), cost, out(u), out(v), size, size == min(m, n),
                            maximize, stats)

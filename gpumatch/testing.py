"""Certificates for matchings and flows.

A maximum matching or a maximum flow is not unique, so gpumatch's tests never
compare a result with a stored answer.  They check it instead:

* :func:`check_matching` verifies that a matching is a set of edges of the
  graph with no shared endpoint, then proves it maximum with a König vertex
  cover of the same size (:func:`konig_cover`).
* :func:`check_assignment` verifies that a weighted matching is a matching of
  the stored entries, of the right size, and, given dual potentials, proves
  it of least weight with them.
* :func:`check_flow` verifies skew symmetry, capacity bounds and flow
  conservation, then proves the flow maximum with an s-t cut whose capacity
  equals the flow value.

A failed check raises ``AssertionError`` with a message that names the
offending vertex, edge or augmenting path, so these functions work as plain
asserts inside ``pytest`` tests.  Malformed *arguments* (a dense graph where a
sparse one is required, a source out of range, ...) raise ``ValueError`` or
``TypeError`` as usual.

All checks are vectorised NumPy/SciPy and run on the CPU; CuPy and cupyx
inputs are copied to the host first.  Graphs with about a million vertices
and several million edges are verified in a few seconds.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from . import _backend
from ._typing import Array, GraphLike, IndexLike, PermType, SparseMatrix
from ._validation import as_csr_graph, check_option, square_capacity_graph

__all__ = [
    "MatchingCertificate",
    "FlowCertificate",
    "check_matching",
    "konig_cover",
    "check_flow",
    "check_assignment",
    "AssignmentCertificate",
]

_PATH_SHOWN = 12  # vertices of an augmenting path printed in full
_I64_MAX = np.iinfo(np.int64).max


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchingCertificate:
    """What :func:`check_matching` proved.

    Attributes
    ----------
    size : int
        Number of matched pairs (the maximum matching cardinality).
    cover_rows : ndarray of int64
        Sorted row indices of a minimum vertex cover.
    cover_cols : ndarray of int64
        Sorted column indices of the same cover.  Every edge has its row in
        `cover_rows` or its column in `cover_cols`, and
        ``len(cover_rows) + len(cover_cols) == size`` (König's theorem).
    """

    size: int
    cover_rows: np.ndarray
    cover_cols: np.ndarray


@dataclass(frozen=True)
class FlowCertificate:
    """What :func:`check_flow` proved.

    Attributes
    ----------
    value : int
        Net flow out of the source (the maximum flow value).
    source_side : ndarray of bool
        ``source_side[v]`` is True for the vertices reachable from the source
        in the residual graph: the source side of a minimum s-t cut.
    cut_capacity : int
        Total capacity of the arcs leaving the source side; equals `value`.
    """

    value: int
    source_side: np.ndarray
    cut_capacity: int


# ---------------------------------------------------------------------------
# matching
# ---------------------------------------------------------------------------


def _host_vector(a, what: str) -> np.ndarray:
    """`a` as a 1-D NumPy array, copied from the device when needed."""
    arr = _backend.to_numpy(a)
    if arr.ndim != 1:
        raise AssertionError(f"{what} must be one-dimensional, got shape {arr.shape}")
    return arr


def _validate_matching(g, matching, perm_type: str):
    """Check length, dtype, range, uniqueness and edges; return ``(row_to_col, col_to_row)``."""
    m, n = g.shape
    if perm_type == "row":
        own, other, n_own, n_other = "column", "row", n, m
    else:
        own, other, n_own, n_other = "row", "column", m, n
    arr = _host_vector(matching, "matching")
    if arr.dtype.kind not in "iu":
        raise AssertionError(f"matching must have an integer dtype, got {arr.dtype}")
    if arr.shape[0] != n_own:
        raise AssertionError(
            f"with perm_type={perm_type!r} the matching must have one entry per {own} "
            f"(length {n_own}), got length {arr.shape[0]}"
        )
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:
        big = np.flatnonzero(arr > np.uint64(np.iinfo(np.int64).max))
        if big.size:  # would wrap to a negative int64 (2**64 - 1 to -1, "unmatched")
            i = int(big[0])
            raise AssertionError(
                f"matching[{i}] = {int(arr[i])} is out of range: {own} {i} must be matched to -1 "
                f"or a {other} index in [0, {n_other})"
            )
    arr = arr.astype(np.int64, copy=False)
    bad = np.flatnonzero((arr < -1) | (arr >= n_other))
    if bad.size:
        i = int(bad[0])
        raise AssertionError(
            f"matching[{i}] = {int(arr[i])} is out of range: {own} {i} must be matched to -1 "
            f"or a {other} index in [0, {n_other})"
        )
    mine = np.flatnonzero(arr >= 0)
    theirs = arr[mine]
    # no vertex of the other side used twice
    order = np.argsort(theirs, kind="stable")
    srt = theirs[order]
    dup = np.flatnonzero(srt[1:] == srt[:-1])
    if dup.size:
        k = int(dup[0])
        a, b = int(mine[order[k]]), int(mine[order[k + 1]])
        raise AssertionError(f"{other} {int(srt[k])} is matched twice ({own}s {a} and {b})")
    rows, cols = (theirs, mine) if perm_type == "row" else (mine, theirs)
    # every matched pair is a stored entry (explicit zeros included)
    if rows.size:
        indptr = g.indptr.astype(np.int64, copy=False)
        indices = g.indices.astype(np.int64, copy=False)
        width = np.int64(max(n, 1))
        edge_rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr))
        keys = edge_rows * width + indices  # sorted: canonical CSR
        want = rows * width + cols
        pos = np.searchsorted(keys, want)
        pos_c = np.minimum(pos, max(keys.shape[0] - 1, 0))
        found = (pos < keys.shape[0]) & (keys[pos_c] == want) if keys.shape[0] else np.zeros(want.shape, bool)
        missing = np.flatnonzero(~found)
        if missing.size:
            j = int(missing[0])
            r, c = int(rows[j]), int(cols[j])
            if perm_type == "row":
                msg = f"column {c} is matched to row {r} but ({r}, {c}) is not an edge"
            else:
                msg = f"row {r} is matched to column {c} but ({r}, {c}) is not an edge"
            raise AssertionError(msg)
    row_to_col = np.full(m, -1, dtype=np.int64)
    col_to_row = np.full(n, -1, dtype=np.int64)
    row_to_col[rows] = cols
    col_to_row[cols] = rows
    return row_to_col, col_to_row


def _alternating_search(g, row_to_col, col_to_row):
    """Alternating BFS from every unmatched row.

    Vertices ``0..m-1`` are rows, ``m..m+n-1`` columns and ``m+n`` a super
    source joined to every unmatched row.  Rows lead to all their columns,
    matched columns lead back to their mate.  Returns ``(reached, pred)`` as
    given by :func:`scipy.sparse.csgraph.breadth_first_order`.
    """
    m, n = g.shape
    indptr = g.indptr.astype(np.int64, copy=False)
    free_rows = np.flatnonzero(row_to_col < 0)
    matched_cols = col_to_row >= 0
    col_deg = matched_cols.astype(np.int64)
    counts = np.concatenate([np.diff(indptr), col_deg, [free_rows.size]])
    big_indptr = np.zeros(m + n + 2, dtype=np.int64)
    np.cumsum(counts, out=big_indptr[1:])
    big_indices = np.concatenate([
        g.indices.astype(np.int64, copy=False) + m,
        col_to_row[matched_cols],
        free_rows,
    ])
    nv = m + n + 1
    idt = np.int32 if max(nv, big_indices.shape[0]) < np.iinfo(np.int32).max else np.int64
    adj = sp.csr_matrix(
        (np.ones(big_indices.shape[0], dtype=np.float64), big_indices.astype(idt), big_indptr.astype(idt)),
        shape=(nv, nv),
    )
    order, pred = breadth_first_order(adj, m + n, directed=True, return_predecessors=True)
    return order, pred


def _describe_path(path, m):
    names = [f"row {v}" if v < m else f"column {v - m}" for v in path]
    if len(names) > _PATH_SHOWN:
        names = names[:_PATH_SHOWN // 2] + ["..."] + names[-_PATH_SHOWN // 2:]
    return " -> ".join(names)


def _konig(g, row_to_col, col_to_row):
    m, n = g.shape
    order, pred = _alternating_search(g, row_to_col, col_to_row)
    reached = np.zeros(m + n + 1, dtype=bool)
    reached[order] = True
    z_rows = reached[:m]
    z_cols = reached[m:m + n]
    free_hit = np.flatnonzero(z_cols & (col_to_row < 0))
    if free_hit.size:
        # walk the BFS tree back from the free column to a free row
        v = int(free_hit[0]) + m
        path = [v]
        while pred[v] != m + n:
            v = int(pred[v])
            path.append(v)
        path.reverse()
        raise AssertionError(
            f"matching is not maximum: there is an augmenting path of {len(path) - 1} edges "
            f"from unmatched row {path[0]} to unmatched column {path[-1] - m} "
            f"({_describe_path(path, m)})"
        )
    cover_rows = np.flatnonzero(~z_rows).astype(np.int64)
    cover_cols = np.flatnonzero(z_cols).astype(np.int64)
    return cover_rows, cover_cols


@_backend.device_entry
def konig_cover(graph: GraphLike, row_to_col: IndexLike) -> tuple[np.ndarray, np.ndarray]:
    """Minimum vertex cover built from a maximum matching (König's theorem).

    Let Z be the set of vertices reachable from the unmatched rows by
    alternating paths (any edge from a row to a column, then the matched edge
    from that column back to a row).  When the matching is maximum, no
    unmatched column is in Z and ``(rows not in Z) ∪ (columns in Z)`` is a
    vertex cover with exactly one vertex per matched pair.

    Parameters
    ----------
    graph : sparse matrix or tuple
        Bipartite graph, rows against columns: anything
        :func:`gpumatch._validation.as_csr_graph` accepts.  Every stored
        entry is an edge, explicit zeros included.
    row_to_col : array_like of int, length m
        For each row its matched column, or -1 (scipy's
        ``perm_type="column"`` format).  CuPy arrays are accepted.

    Returns
    -------
    cover_rows, cover_cols : ndarray of int64
        Sorted indices of the rows and the columns in the cover.

    Raises
    ------
    AssertionError
        If `row_to_col` is not a matching of `graph` or is not maximum (the
        message names an augmenting path).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch.testing import konig_cover
    >>> A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [1, 0, 0]]))
    >>> rows, cols = konig_cover(A, np.array([1, 0, -1]))
    >>> rows.tolist(), cols.tolist()
    ([0], [0])
    """
    g = as_csr_graph(graph, "numpy", name="graph")
    r2c, c2r = _validate_matching(g, row_to_col, "column")
    return _konig(g, r2c, c2r)


@_backend.device_entry
def check_matching(graph: GraphLike, matching: IndexLike, perm_type: PermType = "row", *,
                   expected_size: int | None = None) -> MatchingCertificate:
    """Verify that `matching` is a maximum matching of `graph`.

    The checks, in order: the array has the right length and an integer
    dtype; every value is -1 or a valid index of the other side; no vertex is
    matched twice; every matched pair is an edge; a König vertex cover of the
    same size as the matching exists, which proves the matching maximum; and
    the size equals `expected_size` when given.

    Parameters
    ----------
    graph : sparse matrix or tuple
        ``m x n`` bipartite graph, rows against columns: scipy.sparse CSR,
        CSC or COO, cupyx sparse, or ``(indptr, indices, shape)``.  Every
        stored entry is an edge, explicit zeros included (scipy's rule).
    matching : array_like of int
        In the format of :func:`scipy.sparse.csgraph.maximum_bipartite_matching`:
        with ``perm_type="row"`` an array of length n giving, for each column,
        its matched row; with ``perm_type="column"`` an array of length m
        giving, for each row, its matched column; -1 marks unmatched vertices.
        CuPy arrays are accepted.
    perm_type : {"row", "column"}
        Which of the two formats `matching` uses.
    expected_size : int, optional
        Known maximum matching size (for example scipy's).

    Returns
    -------
    MatchingCertificate
        The matching size and a minimum vertex cover of the same size.

    Raises
    ------
    AssertionError
        If any check fails; the message names the offending vertex, edge or
        augmenting path.
    ValueError, TypeError
        If `graph` or `perm_type` is malformed.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from scipy.sparse.csgraph import maximum_bipartite_matching
    >>> from gpumatch.testing import check_matching
    >>> A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]]))
    >>> cert = check_matching(A, maximum_bipartite_matching(A, perm_type="row"))
    >>> cert.size
    3
    >>> check_matching(A, np.array([0, -1, 2]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: matching is not maximum: there is an augmenting path ...
    """
    check_option("perm_type", perm_type, ("row", "column"))
    g = as_csr_graph(graph, "numpy", name="graph")
    r2c, c2r = _validate_matching(g, matching, perm_type)
    size = int(np.count_nonzero(r2c >= 0))
    cover_rows, cover_cols = _konig(g, r2c, c2r)
    _verify_cover(g, cover_rows, cover_cols, size)
    expected = None if expected_size is None else _exact_number(expected_size, "expected_size")
    if expected is not None and size != expected:
        raise AssertionError(f"matching has size {size} but the expected size is {expected!r}")
    return MatchingCertificate(size, cover_rows, cover_cols)


def _verify_cover(g, cover_rows, cover_cols, size):
    """Independent check that the cover covers every edge and has the matching's size."""
    m, n = g.shape
    in_rows = np.zeros(m, dtype=bool)
    in_rows[cover_rows] = True
    in_cols = np.zeros(n, dtype=bool)
    in_cols[cover_cols] = True
    edge_rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(g.indptr.astype(np.int64)))
    uncovered = np.flatnonzero(~in_rows[edge_rows] & ~in_cols[g.indices])
    if uncovered.size:  # pragma: no cover - impossible by König's construction
        k = int(uncovered[0])
        raise AssertionError(f"vertex cover misses edge ({int(edge_rows[k])}, {int(g.indices[k])})")
    if cover_rows.size + cover_cols.size != size:  # pragma: no cover - idem
        raise AssertionError(
            f"vertex cover has {cover_rows.size + cover_cols.size} vertices but the matching has size {size}"
        )


# ---------------------------------------------------------------------------
# flow
# ---------------------------------------------------------------------------


def _int64_values(vals, what):
    """Cast values to int64; raise AssertionError for non-integral ones."""
    vals = np.asarray(vals)
    if vals.dtype.kind == "u" and vals.dtype.itemsize == 8:
        big = np.flatnonzero(vals > np.uint64(_I64_MAX))
        if big.size:
            raise AssertionError(f"{what} holds {int(vals[big[0]])}, beyond int64")
    if vals.dtype.kind in "iu":
        return vals.astype(np.int64, copy=False)
    if vals.dtype.kind == "b":
        return vals.astype(np.int64)
    if vals.dtype.kind != "f":
        raise AssertionError(f"{what} must hold integers, got dtype {vals.dtype}")
    bad = np.flatnonzero(~np.isfinite(vals) | (vals != np.round(vals)))
    if bad.size:
        raise AssertionError(f"{what} holds a non-integral value {vals[bad[0]]!r}")
    big = np.flatnonzero((vals >= 2.0 ** 63) | (vals < -2.0 ** 63))
    if big.size:
        raise AssertionError(f"{what} holds {float(vals[big[0]])!r}, beyond int64")
    return vals.astype(np.int64)


def _flow_matrix(flow, nv):
    """The flow as a canonical int64 CSR matrix on the host, without zeros.

    Duplicate entries are summed exactly (a sum past int64 is no flow);
    the value ``-2**63`` is refused (no capacity bounds its negation).
    """
    if _backend.is_cupy_sparse(flow):
        flow = flow.get()
    if sp.issparse(flow):
        F = sp.csr_matrix(flow)
    else:
        dense = _backend.to_numpy(flow)
        if dense.ndim != 2:
            raise AssertionError(f"flow must be a square matrix, got shape {dense.shape}")
        F = sp.csr_matrix(dense)
    if F.shape != (nv, nv):
        raise AssertionError(f"flow has shape {F.shape} but the capacity matrix has shape {(nv, nv)}")
    data = np.array(_int64_values(F.data, "flow"), copy=True)   # (eliminate_zeros below writes into it)
    try:
        g = as_csr_graph(sp.csr_matrix((data, F.indices.copy(), F.indptr.copy()), shape=F.shape), "numpy",
                         name="flow", with_data=True)
    except OverflowError as exc:
        raise AssertionError(str(exc)) from None
    F = sp.csr_matrix((g.data, g.indices, g.indptr), shape=F.shape)
    F.eliminate_zeros()
    low = np.flatnonzero(F.data == np.iinfo(np.int64).min)
    if low.size:
        u, v = _entry_at(F, int(low[0]))
        raise AssertionError(f"flow[{u}, {v}] = {int(F.data[low[0]])} is below every capacity's negation "
                             f"(flow[{v}, {u}] would be 2**63)")
    return F


def _capacity_matrix(capacity):
    g = square_capacity_graph(capacity)
    data = g.data
    rows = np.repeat(np.arange(g.m, dtype=np.int64), np.diff(g.indptr.astype(np.int64)))
    cols = g.indices.astype(np.int64)
    keep = (rows != cols) & (data != 0)  # self-loops carry no flow
    return sp.csr_matrix((data[keep], (rows[keep], cols[keep])), shape=g.shape)


def _entry_at(M, k):
    """(row, col) of the `k`-th stored entry of a CSR matrix."""
    return int(np.searchsorted(M.indptr, k, side="right")) - 1, int(M.indices[k])


def _keys(M):
    """Sorted keys ``row * n + col`` of a canonical CSR matrix."""
    rows = np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr.astype(np.int64)))
    return rows * np.int64(max(M.shape[1], 1)) + M.indices.astype(np.int64)


def _lookup(keys, values, want):
    """``values`` at the sorted `keys` equal to `want` (0 where absent), and the mask of those present."""
    if keys.shape[0] == 0:
        return np.zeros(want.shape[0], dtype=np.int64), np.zeros(want.shape[0], dtype=bool)
    at = np.minimum(np.searchsorted(keys, want), keys.shape[0] - 1)
    found = keys[at] == want
    return np.where(found, values[at], 0), found


def _row_sums_exact(M):
    """Exact row sums of an int64 CSR matrix as ``(carry, low)``: the sum
    of row i is ``carry[i] * 2**32 + low[i]`` with ``0 <= low < 2**32``
    (sums of the high and low 32 bits of the values are exact in int64)."""
    ptr = M.indptr.astype(np.int64)

    def sums(x):
        cs = np.concatenate([[0], np.cumsum(x, dtype=np.int64)])
        return cs[ptr[1:]] - cs[ptr[:-1]]

    hi, lo = sums(M.data >> 32), sums(M.data & 0xFFFFFFFF)
    return hi + (lo >> 32), lo & 0xFFFFFFFF


def _exact_number(x, what):
    """A claimed number (Python, NumPy or CuPy scalar) as a Python int or
    float, so that comparing it with an int is exact (3.9 is not 3)."""
    if _backend.is_cupy_array(x) or isinstance(x, np.ndarray):
        x = _backend.to_numpy(x)
        if x.ndim != 0:
            raise TypeError(f"{what} must be a number, got an array of shape {x.shape}")
        x = x.item()
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, (numbers.Integral, numbers.Real)):
        raise TypeError(f"{what} must be a number, got {x!r}")
    return int(x) if isinstance(x, numbers.Integral) else float(x)


@_backend.device_entry
def check_flow(capacity: GraphLike, source: int, sink: int, flow: SparseMatrix | Array,
               value: int | None = None) -> FlowCertificate:
    """Verify that `flow` is a maximum s-t flow for `capacity`.

    The checks, in order: skew symmetry (``flow[u, v] == -flow[v, u]``);
    capacity bounds (``flow[u, v] <= capacity[u, v]``, with capacity 0 where
    there is no arc; the lower bound ``flow[u, v] >= -capacity[v, u]`` follows
    by skew symmetry); conservation at every vertex other than the source and
    the sink; the net flow out of the source equals the net flow into the
    sink (and `value` when given); no augmenting path in the residual graph;
    and the capacity of the resulting s-t cut equals the flow value.

    Parameters
    ----------
    capacity : sparse matrix
        Square matrix of non-negative integer capacities, ``capacity[u, v]``
        for the arc ``u -> v``.  Duplicate entries (parallel arcs) are summed,
        anti-parallel arcs are kept apart, self-loops are ignored.
    source, sink : int
        Distinct vertex indices.
    flow : sparse matrix or array
        The flow as :func:`scipy.sparse.csgraph.maximum_flow` returns it
        (``MaximumFlowResult.flow``): skew-symmetric, ``flow[u, v]`` is the
        net flow from u to v.  scipy or cupyx sparse, or a dense NumPy/CuPy
        array for small cases.
    value : int, optional
        Claimed flow value, for example ``MaximumFlowResult.flow_value``;
        it must equal the flow's value exactly (a float with a fraction
        never does).

    Returns
    -------
    FlowCertificate
        The flow value, the source side of a minimum cut and its capacity.

    Raises
    ------
    AssertionError
        If any check fails; the message names the offending vertex, arc or
        augmenting path.
    ValueError, TypeError
        If `capacity`, `source` or `sink` is malformed.

    Notes
    -----
    Every comparison and sum is exact: capacities up to ``2**63 - 1`` and
    totals beyond int64 give no wrapped differences or sums, and the
    claimed `value` is compared as it is (``3.9`` is not the value of a
    flow of 3).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from scipy.sparse.csgraph import maximum_flow
    >>> from gpumatch.testing import check_flow
    >>> C = sp.csr_matrix(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    >>> res = maximum_flow(C, 0, 2)
    >>> cert = check_flow(C, 0, 2, res.flow, res.flow_value)
    >>> cert.value, cert.source_side.tolist()
    (4, [True, True, False])
    """
    C = _capacity_matrix(capacity)
    nv = C.shape[0]
    for what, v in (("source", source), ("sink", sink)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{what} must be an integer, got {v!r}")
        if not 0 <= int(v) < nv:
            raise ValueError(f"{what} {int(v)} is out of range for a graph of {nv} vertices")
    s, t = int(source), int(sink)
    if s == t:
        raise ValueError(f"source and sink must differ, both are {s}")
    claimed = None if value is None else _exact_number(value, "value")
    F = _flow_matrix(flow, nv)
    # Every test below compares values or sums them exactly: capacities up
    # to 2**63 - 1 must not wrap (C - F, F + F.T and row sums in int64 can).
    kF, kC = _keys(F), _keys(C)
    Fu = np.repeat(np.arange(nv, dtype=np.int64), np.diff(F.indptr.astype(np.int64)))
    Fv = F.indices.astype(np.int64)

    # skew symmetry
    diag = np.flatnonzero(Fu == Fv)
    if diag.size:
        u = int(Fu[diag[0]])
        raise AssertionError(f"flow is not antisymmetric (skew symmetric): flow[{u}, {u}] = "
                             f"{int(F.data[diag[0]])}, must be 0")
    back, found = _lookup(kF, F.data, Fv * np.int64(max(nv, 1)) + Fu)   # flow[v, u] of each entry (u, v)
    bad = np.flatnonzero(~found | (back != -F.data))
    if bad.size:
        k = int(bad[0])
        u, v = int(Fu[k]), int(Fv[k])
        raise AssertionError(
            f"flow is not antisymmetric (skew symmetric): flow[{u}, {v}] = {int(F.data[k])} "
            f"but flow[{v}, {u}] = {int(back[k])}"
        )

    # capacity bounds (flow[u, v] >= -capacity[v, u] follows by skew symmetry)
    cap_at_f, _ = _lookup(kC, C.data, kF)
    over = np.flatnonzero(F.data > cap_at_f)
    if over.size:
        k = int(over[0])
        u, v = int(Fu[k]), int(Fv[k])
        raise AssertionError(
            f"capacity violated: flow[{u}, {v}] = {int(F.data[k])} exceeds capacity[{u}, {v}] = {int(cap_at_f[k])}"
        )

    # conservation and value (exact row sums)
    carry, low = _row_sums_exact(F)
    net = lambda x: (int(carry[x]) << 32) + int(low[x])  # noqa: E731
    inner = (carry != 0) | (low != 0)
    inner[[s, t]] = False
    bad = np.flatnonzero(inner)
    if bad.size:
        v = int(bad[0])
        raise AssertionError(f"flow conservation violated at vertex {v}: net outflow is {net(v)}, expected 0")
    flow_value = net(s)
    if net(t) != -flow_value:
        raise AssertionError(  # pragma: no cover - implied by skew symmetry and conservation
            f"net flow out of the source is {flow_value} but net flow into the sink is {-net(t)}"
        )
    if claimed is not None and claimed != flow_value:
        raise AssertionError(f"flow value is {flow_value} (net outflow of source {s}) but {claimed!r} was claimed")

    # residual graph (capacity[u, v] > flow[u, v]) and cut
    f_at_c, _ = _lookup(kF, F.data, kC)
    _, f_in_c = _lookup(kC, C.data, kF)
    res_keys = np.concatenate([kC[C.data > f_at_c], kF[~f_in_c & (F.data < 0)]])
    width = np.int64(max(nv, 1))
    R = sp.csr_matrix((np.ones(res_keys.shape[0]), (res_keys // width, res_keys % width)), shape=(nv, nv))
    order, pred = breadth_first_order(R, s, directed=True, return_predecessors=True)
    side = np.zeros(nv, dtype=bool)
    side[order] = True
    if side[t]:
        path = [t]
        while path[-1] != s:
            path.append(int(pred[path[-1]]))
        path.reverse()
        bottleneck = min(int(C[a, b]) - int(F[a, b]) for a, b in zip(path[:-1], path[1:]))
        shown = [str(v) for v in path]
        if len(shown) > _PATH_SHOWN:
            shown = shown[:_PATH_SHOWN // 2] + ["..."] + shown[-_PATH_SHOWN // 2:]
        raise AssertionError(
            f"augmenting path exists, flow not maximum: {' -> '.join(shown)} "
            f"({len(path) - 1} arcs, residual capacity {bottleneck})"
        )
    Cc = C.tocoo()
    crossing = Cc.data[side[Cc.row] & ~side[Cc.col]]
    cut = (int((crossing >> 32).sum(dtype=np.int64)) << 32) + int((crossing & 0xFFFFFFFF).sum(dtype=np.int64))
    if cut != flow_value:  # pragma: no cover - max-flow min-cut theorem
        raise AssertionError(f"cut capacity {cut} differs from the flow value {flow_value}")
    return FlowCertificate(flow_value, side, cut)


# ---------------------------------------------------------------------------
# assignment (weighted matching)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AssignmentCertificate:
    """What :func:`check_assignment` proved.

    Attributes
    ----------
    size : int
        Number of matched pairs.
    cost : int or float
        Total weight of the matched entries (an exact Python ``int`` for
        integer weights).
    optimal : bool
        True when potentials were given and proved the matching optimal.
    max_violation : int or float
        Largest violation of the dual conditions found (0 for integers;
        below the tolerance for floats), 0 without potentials.
    """

    size: int
    cost: int | float
    optimal: bool
    max_violation: int | float


def _reached_rows(indptr, indices, row_to_col, col_to_row):
    """Rows that alternating paths reach from the free rows (free rows included)."""
    m = row_to_col.shape[0]
    g = as_csr_graph((indptr, indices, (m, col_to_row.shape[0])), "numpy", name="graph")
    order, _ = _alternating_search(g, row_to_col, col_to_row)
    mark = np.zeros(m + col_to_row.shape[0] + 1, dtype=bool)
    mark[order] = True
    return mark[:m]


@_backend.device_entry
def check_assignment(A: SparseMatrix | npt.ArrayLike, row_ind: IndexLike, col_ind: IndexLike,
                     u: IndexLike | None = None, v: IndexLike | None = None, *, maximize: bool = False,
                     full: bool = True, expected_cost: float | None = None,
                     rtol: float = 1e-9) -> AssignmentCertificate:
    r"""Verify a weighted matching and, given potentials, prove it optimal.

    The checks, in order: `row_ind` and `col_ind` are one-dimensional
    integer arrays of one length, in range, with no row and no column twice;
    every pair is an edge (sparse `A`: a stored non-zero entry; dense `A`: a
    finite entry, the rules of :func:`gpumatch.assignment`); the size is
    ``min(m, n)`` (`full`) or maximum (a König cover, as
    :func:`check_matching`); the cost equals `expected_cost` when given;
    and with potentials `u` (rows) and `v` (columns), the dual conditions
    of :func:`gpumatch.assignment` hold: reduced costs
    ``c_ij - u_i - v_j >= 0`` on every entry, ``= 0`` on matched ones, and
    among the vertices that alternating paths reach from a free vertex of
    the same side, every free one's potential is at least every matched
    one's (all signs flipped with `maximize`).  These conditions prove that
    no matching of the same size weighs less.

    Parameters
    ----------
    A : sparse matrix or dense array_like
        The weights, as given to :func:`gpumatch.assignment`.
    row_ind, col_ind : array_like of int
        The matched pairs.
    u, v : array_like, optional
        Row and column potentials (lengths m and n); both or neither.
    maximize : bool, optional
        The matching claims the largest weight.
    full : bool, optional
        True: the matching must cover the smaller side.  False: it must be
        of maximum cardinality.
    expected_cost : int or float, optional
        The cost the matching must have (exact for integers, to `rtol`
        for floats), e.g. scipy's.
    rtol : float, optional
        Float tolerance of the dual conditions and of `expected_cost`,
        relative to ``max(1, max|c|, max|u|, max|v|)``.  Integer weights
        and integer potentials are checked exactly.

    Returns
    -------
    AssignmentCertificate

    Raises
    ------
    AssertionError
        A check fails; the message names the row, column or entry.
    ValueError, TypeError
        Malformed arguments (lengths of `u`/`v`, one of them missing,
        weights the solvers reject).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import assignment
    >>> from gpumatch.testing import check_assignment
    >>> A = sp.csr_array([[3, 3, 6], [4, 3, 5], [10, 1, 8]])
    >>> res = assignment(A)
    >>> cert = check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=9)
    >>> cert.cost, cert.optimal
    (9, True)
    >>> check_assignment(A, [0, 1, 2], [0, 1, 2], res.u, res.v)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: matched entry ... not 0: the potentials do not prove this matching optimal
    """
    import warnings

    from .lap import _problems, _solve

    if (u is None) != (v is None):
        raise ValueError("give both potentials u and v, or neither")
    maximize = bool(maximize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # the solvers' explicit-zero warning
        if sp.issparse(A) or _backend.is_cupy_sparse(A):
            indptr, indices, c, (m, n), _, _ = _problems._sparse_problem(A, maximize, name="A")
        else:
            indptr, indices, c, (m, n), _, _, _ = _problems._dense_problem(A, maximize)
    rows = _host_vector(row_ind, "row_ind")
    cols = _host_vector(col_ind, "col_ind")
    for arr, what in ((rows, "row_ind"), (cols, "col_ind")):
        if arr.size and arr.dtype.kind not in "iu":
            raise AssertionError(f"{what} must hold integers, got dtype {arr.dtype}")
    if rows.shape != cols.shape:
        raise AssertionError(f"row_ind and col_ind differ in length: {rows.shape[0]} and {cols.shape[0]}")
    rows = rows.astype(np.int64)
    cols = cols.astype(np.int64)
    for arr, what, bound in ((rows, "row", m), (cols, "column", n)):
        bad = np.flatnonzero((arr < 0) | (arr >= bound))
        if bad.size:
            raise AssertionError(f"{what} index {int(arr[bad[0]])} (pair {int(bad[0])}) is out of range [0, {bound})")
        counts = np.bincount(arr, minlength=bound)
        if arr.size and counts.max() > 1:
            raise AssertionError(f"{what} {int(np.argmax(counts))} is matched more than once")
    keys = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr)) * max(n, 1) + indices.astype(np.int64)
    want = rows * max(n, 1) + cols
    at = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
    missing = np.flatnonzero(keys[at] != want) if keys.size else np.arange(want.size)
    if missing.size:
        k = int(missing[0])
        raise AssertionError(f"pair ({int(rows[k])}, {int(cols[k])}) is not an edge (a stored non-zero, finite "
                             "entry)")
    r2c = np.full(m, -1, dtype=np.int64)
    c2r = np.full(n, -1, dtype=np.int64)
    r2c[rows] = cols
    c2r[cols] = rows
    size = int(rows.size)
    if full and size != min(m, n):
        raise AssertionError(f"the matching has {size} pairs, not min(m, n) = {min(m, n)}: it is not full")
    if not full:
        _konig(as_csr_graph((indptr, indices, (m, n)), "numpy", name="A"), r2c, c2r)
    vals = c[at] if size else c[:0]
    cost = _solve._exact_sum(vals)
    if maximize:
        cost = -cost
    is_int = c.dtype.kind == "i"
    scale = max(1.0, float(np.abs(c).max()) if c.size else 0.0)
    if expected_cost is not None:
        if not isinstance(expected_cost, numbers.Real):
            raise TypeError(f"expected_cost must be a number, got {expected_cost!r}")
        if not math.isfinite(expected_cost):     # NaN would compare as no difference
            raise ValueError(f"expected_cost must be finite, got {expected_cost!r}")
        tol = 0 if is_int and isinstance(expected_cost, numbers.Integral) else rtol * max(scale, abs(expected_cost))
        if abs(cost - expected_cost) > tol:
            raise AssertionError(f"the matching costs {cost}, not the expected {expected_cost}")
    if u is None:
        return AssignmentCertificate(size, cost, False, 0)
    uu = _backend.to_numpy(u)
    vv = _backend.to_numpy(v)
    if uu.ndim != 1 or uu.shape[0] != m or vv.ndim != 1 or vv.shape[0] != n:
        raise ValueError(f"u must have length m = {m} and v length n = {n}, got shapes {uu.shape} and {vv.shape}")
    exact = is_int and uu.dtype.kind in "iu" and vv.dtype.kind in "iu"
    if exact:
        uu = uu.astype(np.int64)
        vv = vv.astype(np.int64)
    else:
        uu = uu.astype(np.float64)
        vv = vv.astype(np.float64)
        c = c.astype(np.float64)
        for pot, what, side in ((uu, "u", "row"), (vv, "v", "column")):
            bad = np.flatnonzero(~np.isfinite(pot))
            if bad.size:    # NaN would pass every comparison below
                raise ValueError(f"{what} must hold finite numbers, found {float(pot[bad[0]])} at {side} {int(bad[0])}")
    if maximize:
        uu, vv = -uu, -vv
    tol = 0 if exact else rtol * max(scale, float(np.abs(uu).max(initial=0)), float(np.abs(vv).max(initial=0)))
    erow = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr))
    red = c - uu[erow] - vv[indices]
    worst = 0
    if red.size:
        k = int(np.argmin(red))
        worst = max(worst, -red[k])
        if red[k] < -tol:
            sign = -1 if maximize else 1
            raise AssertionError(f"entry ({int(erow[k])}, {int(indices[k])}) has reduced cost {sign * red[k]}, "
                                 f"{'above' if maximize else 'below'} 0: the potentials are not feasible")
    if size:
        rm = red[at]
        k = int(np.argmax(np.abs(rm)))
        worst = max(worst, abs(rm[k]))
        if abs(rm[k]) > tol:
            sign = -1 if maximize else 1
            raise AssertionError(f"matched entry ({int(rows[k])}, {int(cols[k])}) has reduced cost {sign * rm[k]}, "
                                 "not 0: the potentials do not prove this matching optimal")
    # free vertices reachable from free vertices of their side must not be undercut by matched ones of
    # their connected component (another maximum matching swaps a free vertex for a matched one only
    # along an alternating path, inside one component)
    B = sp.csr_matrix((np.ones(indices.size, dtype=np.int8), indices, indptr), shape=(m, n))
    T = B.T.tocsr()
    ncomp, comp = connected_components(sp.bmat([[None, B], [T, None]], format="csr"), directed=False)
    for side, pot, mate, reach, cp_ in (("row", uu, r2c, _reached_rows(indptr, indices, r2c, c2r), comp[:m]),
                                        ("column", vv, c2r, _reached_rows(T.indptr, T.indices, c2r, r2c), comp[m:])):
        free = reach & (mate < 0)
        held = reach & (mate >= 0)
        if not (free.any() and held.any()):
            continue
        # per component, in the potentials' own type (exact for integers): the least free, the largest held
        has_lo = np.zeros(ncomp, dtype=bool)
        has_hi = np.zeros(ncomp, dtype=bool)
        has_lo[cp_[free]] = True
        has_hi[cp_[held]] = True
        both = has_lo & has_hi
        if not both.any():
            continue
        big = np.iinfo(pot.dtype).max if pot.dtype.kind in "iu" else np.inf
        lo = np.full(ncomp, big, dtype=pot.dtype)
        hi = np.full(ncomp, -big, dtype=pot.dtype)
        np.minimum.at(lo, cp_[free], pot[free])
        np.maximum.at(hi, cp_[held], pot[held])
        cand = np.flatnonzero(both)
        j = int(cand[np.argmax(hi[cand] - lo[cand])])
        a = int(np.flatnonzero(held & (cp_ == j) & (pot == hi[j]))[0])
        b = int(np.flatnonzero(free & (cp_ == j) & (pot == lo[j]))[0])
        gap = pot[a] - pot[b]
        worst = max(worst, gap)
        if gap > tol:
            raise AssertionError(f"matched {side} {a} has a larger potential than free {side} {b} that "
                                 f"alternating paths connect it with: the potentials do not prove optimality")
    if not exact:
        worst = float(worst)
    else:
        worst = int(worst)
    return AssignmentCertificate(size, cost, True, max(worst, 0) if exact else max(worst, 0.0))

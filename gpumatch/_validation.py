"""Input checks and the canonical CSR form shared by every solver.

Every public entry point validates its input here, in one flat ordered pass,
before any work is done.  The result is a :class:`CSRGraph`: a CSR pattern
with sorted column indices and merged duplicates, on the backend that will
run.  Two widths, each int32 or int64 (never a silent wrap): the column
indices (vertex ids) are int32 while the rows and columns fit int32, the
row pointers (entry offsets) int32 while the number of stored entries does
(:func:`gpumatch.csr.offset_dtype_for`), and never narrower than the ids.  A
graph of 4e9 entries over 1.6e9 vertices is int64 pointers over int32
indices: 4 bytes an entry less than int64 throughout.

Stored entries are edges, explicit zeros included (scipy's rule for
``maximum_bipartite_matching``).  Callers that want MATLAB ``sprank``
semantics call ``A.eliminate_zeros()`` first.

The caller's arrays are never written into, and read-only ones are fine:
a canonical CSR comes through as it is (no copy), anything else is sorted
and merged in new arrays.  Integer values of duplicate entries are summed
exactly in int64 (``OverflowError`` past it, never a wrap).
"""

from __future__ import annotations

import numbers
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import _backend
from .csr import (csr_from_keys, index_dtype_for, offset_dtype_for, pattern_summary,  # noqa: F401 (re-exported)
                  segment_owner, widest)

__all__ = [
    "CSRGraph",
    "as_csr_graph",
    "check_option",
    "index_dtype_for",
    "offset_dtype_for",
    "graph_dtypes",
    "square_capacity_graph",
    "as_index_array",
    "small_on_cpu",
    "charge_small",
    "small_path_closed",
    "charged_small",
    "SMALL_ON_CPU",
    "INT32_MAX",
]

INT32_MAX = np.iinfo(np.int32).max
INT64_MAX = np.iinfo(np.int64).max
_ACCEPTED = "scipy.sparse CSR, CSC or COO (matrix or array), cupyx.scipy.sparse CSR/CSC/COO, or an (indptr, indices, shape) tuple"


def check_option(name: str, value: Any, allowed) -> Any:
    """Raise ``ValueError`` listing `allowed` when `value` is not one of them.

    Examples
    --------
    >>> from gpumatch._validation import check_option
    >>> check_option("perm_type", "row", ("row", "column"))
    'row'
    """
    allowed = tuple(allowed)
    try:
        ok = value in allowed
    except TypeError:  # unhashable/uncomparable values
        ok = False
    if not ok or not isinstance(value, type(allowed[0])):
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


@dataclass
class CSRGraph:
    """A validated, canonical CSR graph on one backend.

    Attributes
    ----------
    indptr, indices : array
        CSR pattern, column indices sorted and unique within each row.
    shape : tuple of int
        ``(m, n)``.
    backend : str
        ``"numpy"`` or ``"cupy"``: where `indptr`/`indices` live.
    cupy_out : bool
        True when the caller's input lived on the GPU (outputs follow it).
    data : array or None
        Values aligned with `indices` (duplicates summed), when requested.
    kind : str
        ``"scipy"``, ``"cupyx"`` or ``"tuple"``: what the caller passed.
    fmt : str
        The caller's sparse format (``"csr"``, ``"csc"``, ``"coo"``, ``"tuple"``).
    sparray : bool
        True when the caller passed a ``scipy.sparse`` *array* (not matrix).
    """

    indptr: Any
    indices: Any
    shape: tuple
    backend: str
    cupy_out: bool
    data: Any = None
    kind: str = "scipy"
    fmt: str = "csr"
    sparray: bool = False

    @property
    def xp(self):
        return _backend.get_xp(self.backend)

    @property
    def m(self) -> int:
        return int(self.shape[0])

    @property
    def n(self) -> int:
        return int(self.shape[1])

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    @property
    def index_dtype(self):
        """dtype of the vertex ids (`indices`)."""
        return self.indices.dtype

    @property
    def offset_dtype(self):
        """dtype of the entry offsets (`indptr`): int64 past ``2**31`` entries
        even where the ids stay int32."""
        return self.indptr.dtype


def graph_dtypes(m: int, n: int, nnz: int) -> tuple:
    """``(id dtype, offset dtype)`` of a canonical ``m x n`` pattern with
    `nnz` stored entries: ids int32 while ``m + 1`` and ``n + 1`` fit int32,
    offsets int32 while `nnz` does (:func:`gpumatch.csr.offset_dtype_for`),
    never narrower than the ids.

    Examples
    --------
    >>> from gpumatch._validation import graph_dtypes
    >>> [str(d) for d in graph_dtypes(800_000_000, 800_000_000, 4_000_000_000)]
    ['int32', 'int64']
    """
    idt = index_dtype_for(m + 1, n + 1)
    return idt, widest(offset_dtype_for(nnz), idt)


def _check_shape(shape, name):
    """``(m, n)`` as Python ints: TypeError for a non-integer dimension (as
    scipy), ValueError for another length, a negative dimension or a shape
    whose ``m * n`` does not fit int64 (the coordinate keys' range)."""
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a pair of integers (m, n), got {shape!r}") from None
    if len(dims) != 2:
        raise ValueError(f"{name}: shape must be a pair of integers (m, n), got {shape!r}")
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
            raise TypeError(f"{name}: shape must be a pair of integers (m, n), got {shape!r} "
                            f"({type(d).__name__} {d!r} is not an integer)")
    m, n = (int(d) for d in dims)
    if m < 0 or n < 0:
        raise ValueError(f"{name}: shape must be non-negative, got {(m, n)}")
    if m * n > INT64_MAX:
        raise ValueError(f"{name}: shape {(m, n)} is too large: m * n must fit int64")
    return m, n


def _check_pattern_arrays(indptr, indices, shape, name, *, csc=False, compiled=False):
    """Validate raw CSR arrays (NumPy or CuPy); raise ValueError naming the problem.

    Returns ``(indptr, indices, canonical)``, `canonical` telling whether the
    indices already strictly increase within every row.  On CuPy the checks
    cost one kernel and one read-back (:func:`gpumatch.csr.pattern_summary`).
    With `csc` the arrays are a CSC matrix's (`shape` is then its transpose's)
    and the messages speak of columns and row indices.  With `compiled` (the
    ``"numba"`` backend, which has Numba imported) NumPy arrays are summarised
    by the compiled one-pass :func:`gpumatch._cpu_csr.pattern_summary`.
    """
    xp = _backend.cp if _backend.is_cupy_array(indptr) or _backend.is_cupy_array(indices) else np
    indptr = xp.asarray(indptr)
    indices = xp.asarray(indices)
    m, n = shape
    seg, idx, count = ("n", "row", "rows") if csc else ("m", "column", "columns")
    for arr, what in ((indptr, "indptr"), (indices, "indices")):
        if arr.ndim != 1:
            raise ValueError(f"{name}: {what} must be one-dimensional, got {arr.ndim} dimensions")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"{name}: {what} must have an integer dtype, got {arr.dtype}")
    if indptr.shape[0] != m + 1:
        raise ValueError(f"{name}: indptr must have length {seg} + 1 = {m + 1}, got {indptr.shape[0]}")
    if compiled and xp is np:
        from . import _cpu_csr   # imports Numba: only the "numba" backend loads it

        summary = _cpu_csr.pattern_summary(indptr, indices)
    else:
        summary = pattern_summary(indptr, indices)
    if summary.first != 0:
        raise ValueError(f"{name}: indptr[0] must be 0, got {summary.first}")
    if summary.decreasing:
        raise ValueError(f"{name}: indptr must be non-decreasing (malformed indptr)")
    if summary.last != indices.shape[0]:
        raise ValueError(
            f"{name}: indptr[-1] = {summary.last} does not match the number of indices {indices.shape[0]}"
        )
    if summary.min_index is not None:
        if summary.min_index < 0:
            raise ValueError(f"{name}: {idx} indices must be non-negative, found {summary.min_index}")
        if summary.max_index >= n:
            raise ValueError(f"{name}: {idx} index {summary.max_index} is out of range for {n} {count}")
    return indptr, indices, summary.canonical


def _canonical_generic(xp, indptr, indices, shape, data, want_data, canonical=False):
    """Sort and merge duplicates with array ops (NumPy or CuPy alike).

    An input already known to be `canonical` (from the validation pass) is
    returned as it is, so device-resident graphs pay no sort on every call.
    """
    m, n = shape
    nnz = indices.shape[0]
    if canonical:
        return indptr, indices, data
    rows = segment_owner(indptr.astype(np.int64), nnz)
    keys = rows * np.int64(max(n, 1)) + indices.astype(np.int64)
    return csr_from_keys(keys, m, n, data if want_data else None)


def as_csr_graph(graph, backend: str = "auto", *, name: str = "graph", with_data: bool = False,
                 data_dtype=None) -> CSRGraph:
    """Validate `graph` and return its canonical CSR form on `backend`.

    Parameters
    ----------
    graph : sparse matrix/array or tuple
        scipy.sparse CSR/CSC/COO (matrix or array), cupyx.scipy.sparse
        CSR/CSC/COO, or ``(indptr, indices, shape)`` (NumPy or CuPy arrays).
    backend : {"auto", "numpy", "cupy"}
        Where the canonical arrays should live.
    name : str
        Name used in error messages.
    with_data : bool
        Keep the stored values (duplicates summed), e.g. capacities:
        integers and booleans as int64, floats as float64.  Tuples carry
        no values: every entry then has value 1.
    data_dtype : dtype, optional
        Cast the kept values to this dtype.

    Returns
    -------
    CSRGraph

    Raises
    ------
    TypeError
        Dense input ("graph must be sparse"), an unsupported sparse format,
        a tuple's shape that is not a pair of integers.
    ValueError
        Malformed arrays, out-of-range or negative indices, bad options.
    OverflowError
        With `with_data`: a uint64 value or a sum of duplicate integer
        entries beyond int64.

    Notes
    -----
    The returned arrays may be the caller's own (a canonical CSR, or an
    already canonical tuple): callers read them and never write into them.

    Widths (:func:`graph_dtypes`): `indices` int32 while the rows and the
    columns fit int32, `indptr` int64 only past ``2**31 - 1`` entries.  An
    ``(indptr, indices, shape)`` tuple of int64 `indptr` and int32
    `indices` past that size comes through without a copy, on NumPy and on
    CuPy alike (the way to hand over a graph too large for
    ``cupyx.scipy.sparse``, whose indices are int32 throughout).  int64
    `indices` are narrowed to int32 where the ids fit, except for a host
    graph past ``2**31`` entries solved on the host (a second copy there).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch._validation import as_csr_graph
    >>> g = as_csr_graph(sp.coo_matrix(([1, 1, 1], ([0, 0, 1], [1, 1, 0])), shape=(2, 2)), "numpy")
    >>> g.indptr.tolist(), g.indices.tolist()
    ([0, 1, 2], [1, 0])
    """
    name_b = _backend.resolve_backend(backend)
    cupy_out = _backend.is_cupy_input(graph)
    sparray = False
    if isinstance(graph, tuple):
        if len(graph) != 3:
            raise TypeError(f"{name}: a tuple input must be (indptr, indices, shape), got a tuple of length {len(graph)}")
        indptr, indices, shape = graph
        shape = _check_shape(shape, name)
        indptr, indices, canonical = _check_pattern_arrays(indptr, indices, shape, name,
                                                           compiled=name_b == "numba")
        kind, fmt = "tuple", "tuple"
        xp = _backend.cp if _backend.is_cupy_array(indices) or _backend.is_cupy_array(indptr) else np
        if xp is not np:
            indptr = xp.asarray(indptr)
            indices = xp.asarray(indices)
        data = xp.ones(indices.shape[0], dtype=np.int64) if with_data else None
        indptr, indices, data = _canonical_generic(xp, indptr, indices, shape, data, with_data, canonical)
    elif sp.issparse(graph):
        fmt = graph.format
        sparray = isinstance(graph, sp.sparray) if hasattr(sp, "sparray") else False
        if fmt not in ("csr", "csc", "coo"):
            raise TypeError(f"{name} must be in CSR, CSC or COO format, got {fmt.upper()}; accepted: {_ACCEPTED}")
        shape = _check_shape(graph.shape, name)
        kind = "scipy"
        indptr, indices, data = _canonical_scipy(graph, shape, name, with_data, compiled=name_b == "numba",
                                                 device=name_b == "cupy")
    elif _backend.is_cupy_sparse(graph):
        fmt = graph.format
        if fmt not in ("csr", "csc", "coo"):
            raise TypeError(f"{name} must be in CSR, CSC or COO format, got {fmt.upper()}; accepted: {_ACCEPTED}")
        shape = _check_shape(graph.shape, name)
        kind = "cupyx"
        indptr, indices, data = _canonical_cupyx(graph, shape, name, with_data)
    else:   # one wording for every solver: "<argument> must be sparse, got <type>; accepted: ..."
        raise TypeError(f"{name} must be sparse, got {type(graph).__name__}; accepted: {_ACCEPTED}")

    m, n = shape
    nnz = int(indices.shape[0])
    idt, odt = graph_dtypes(m, n, nnz)
    if np.dtype(indices.dtype) == np.int64 and idt == np.int32 and _keep_wide(indices, name_b, nnz):
        idt = odt = np.dtype(np.int64)
    indptr = _cast_to(indptr, odt, name_b)
    indices = _cast_to(indices, idt, name_b)
    if data is not None:
        data = _backend.to_backend(data, name_b)
        if data_dtype is not None:
            data = data.astype(data_dtype, copy=False)
    return CSRGraph(indptr, indices, (m, n), name_b, cupy_out, data, kind, fmt, sparray)


def _keep_wide(indices, backend, nnz):
    """Whether int64 column indices whose values fit int32 stay int64: only
    for a graph past ``2**31`` entries whose index array stays on the host,
    where narrowing would be a second copy of the whole array beside the
    caller's.  Every other case narrows: a small array is a cheap copy, and
    one going to the device is copied anyway (narrowed on the host first:
    the device then holds half the bytes, and never both widths)."""
    if nnz < INT32_MAX:
        return False
    return backend != "cupy" and not _backend.is_cupy_array(indices)


def _cast_to(a, dt, backend):
    """`a` on `backend` in dtype `dt`: narrowed on the host before a copy to
    the device (never both widths on the device at once), the caller's own
    array where it already is so."""
    dt = np.dtype(dt)
    if backend == "cupy" and not _backend.is_cupy_array(a) and np.dtype(a.dtype) != dt:
        a = np.asarray(a).astype(dt)
    a = _backend.to_backend(a, backend)
    return a.astype(dt, copy=False)


def _exact_values(data, nnz, name):
    """Stored values ready to be summed exactly: int64 for integers and
    booleans (uint64 beyond int64 raises OverflowError), float64 for
    floats, anything else as it is.  The caller's array when it already
    has that dtype (it is only read)."""
    data = np.asarray(data)
    if data.ndim != 1 or data.shape[0] != nnz:
        raise ValueError(f"{name}: data must be one-dimensional with one value per stored entry ({nnz}), "
                         f"got shape {data.shape}")
    kind = data.dtype.kind
    if kind == "u" and data.dtype.itemsize == 8 and nnz and int(data.max()) > INT64_MAX:
        raise OverflowError(f"{name}: value {int(data.max())} does not fit int64")
    if kind in "iub":
        return data.astype(np.int64, copy=False)
    if kind == "f":
        return data.astype(np.float64, copy=False)
    return data


def _summed_exactly(make, values, name):
    """``make(values)``: a new scipy CSR of the caller's entries with
    `values`, duplicates summed and indices sorted.  Integer sums that pass
    the int64 range raise OverflowError naming the entry: the sums of the
    high and the low 32 bits of the values are exact in int64, and tell.
    They are only computed when a sum can wrap at all: when the largest
    magnitude times the largest possible group passes int64.
    """
    A = make(values)
    A.sum_duplicates()
    merged = values.shape[0] - A.nnz          # entries folded into others: no group has more than merged + 1
    if values.dtype.kind == "i" and merged and \
            max(-int(values.min()), int(values.max())) * (merged + 1) > INT64_MAX:   # a sum may have wrapped
        hi, lo = make(values >> 32), make(values & 0xFFFFFFFF)
        hi.sum_duplicates()
        lo.sum_duplicates()
        carry = hi.data + (lo.data >> 32)                          # the exact sum's high 32 bits
        bad = np.flatnonzero((carry > np.iinfo(np.int32).max) | (carry < np.iinfo(np.int32).min))
        if bad.size:
            k = int(bad[0])
            row = int(np.searchsorted(A.indptr, k, side="right")) - 1
            total = (int(hi.data[k]) << 32) + int(lo.data[k])
            raise OverflowError(f"{name}: the duplicate entries at ({row}, {int(A.indices[k])}) sum to {total}, "
                                "which does not fit int64")
    return A


def _canonical_scipy(graph, shape, name, with_data, compiled=False, device=False):
    """Canonical CSR arrays of a scipy sparse matrix or array, never written
    into: a canonical CSR gives its own arrays back, anything else new ones
    (read-only inputs are fine).  `compiled`: see :func:`_check_pattern_arrays`.

    With `device` (the arrays are going to the GPU anyway) a CSR's arrays
    are copied there first and checked by the summary kernel: one read-back
    instead of several passes of host temporaries over every index (about a
    third of a whole matching's host time on 0.1-2M edges).  They come back
    as CuPy arrays when canonical; otherwise the host path below sorts and
    merges as usual.
    """
    m, n = shape
    fmt = graph.format
    if device and fmt == "csr" and _device_ready(graph, m, n):
        cp = _backend.cp
        indptr, indices, canonical = _check_pattern_arrays(cp.asarray(graph.indptr), cp.asarray(graph.indices),
                                                           (m, n), name)
        if canonical:
            data = _exact_values(graph.data, indices.shape[0], name) if with_data else None
            return indptr, indices, data
    if fmt == "coo":
        row = np.asarray(graph.row if hasattr(graph, "row") else graph.coords[0])
        col = np.asarray(graph.col if hasattr(graph, "col") else graph.coords[1])
        for arr, what in ((row, "row"), (col, "column")):
            if arr.ndim != 1 or arr.shape[0] != row.shape[0] or arr.dtype.kind not in "iu":
                raise ValueError(f"{name}: COO {what} indices must be a one-dimensional integer array "
                                 "with one index per stored entry")
        if row.size:
            if row.min() < 0 or col.min() < 0:
                raise ValueError(f"{name}: indices must be non-negative, found a negative index")
            if row.max() >= m:
                raise ValueError(f"{name}: row index {int(row.max())} is out of range for {m} rows")
            if col.max() >= n:
                raise ValueError(f"{name}: column index {int(col.max())} is out of range for {n} columns")
        nnz, canonical = row.shape[0], False
    elif fmt == "csc":
        _, _, canonical = _check_pattern_arrays(graph.indptr, graph.indices, (n, m), name + " (CSC)", csc=True,
                                                compiled=compiled)
        nnz = graph.indices.shape[0]
    else:
        _, _, canonical = _check_pattern_arrays(graph.indptr, graph.indices, (m, n), name, compiled=compiled)
        nnz = graph.indices.shape[0]
    data = _exact_values(graph.data, nnz, name) if with_data else None
    if fmt == "csr" and canonical:
        return graph.indptr, graph.indices, data
    if fmt == "csr":   # copies: sum_duplicates sorts in place (`v` may be the caller's data)
        make = lambda v: sp.csr_matrix((v.copy(), graph.indices.copy(), graph.indptr.copy()),  # noqa: E731
                                       shape=(m, n))
    elif fmt == "csc":
        make = lambda v: sp.csc_matrix((v, graph.indices, graph.indptr), shape=(m, n)).tocsr()  # noqa: E731
    else:
        make = lambda v: sp.coo_matrix((v, (row, col)), shape=(m, n)).tocsr()  # noqa: E731
    if not with_data:
        # pattern only: a value of 1 on every stored entry keeps explicit zeros as edges
        A = make(np.ones(nnz, dtype=np.int8))
        A.sum_duplicates()
        return A.indptr, A.indices, None
    A = _summed_exactly(make, data, name)
    return A.indptr, A.indices, A.data


def _device_ready(graph, m, n) -> bool:
    """A scipy CSR whose arrays the GPU summary can read as they are:
    one-dimensional host arrays already in the graph's widths
    (:func:`graph_dtypes`: int32 ids, and int32 pointers or int64 ones past
    ``2**31`` entries), so that nothing is narrowed on the device (which
    would hold both widths at once); others are narrowed on the host first."""
    arrays = (graph.indptr, graph.indices)
    if not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in arrays):
        return False
    idt, odt = graph_dtypes(m, n, int(graph.indices.shape[0]))
    return graph.indptr.dtype == odt and graph.indices.dtype == idt


def _canonical_cupyx(graph, shape, name, with_data):
    cp = _backend.cp
    m, n = shape
    if graph.format == "coo":
        row, col = graph.row, graph.col
        if row.size:
            if int(row.min()) < 0 or int(col.min()) < 0:
                raise ValueError(f"{name}: indices must be non-negative, found a negative index")
            if int(row.max()) >= m:
                raise ValueError(f"{name}: row index {int(row.max())} is out of range for {m} rows")
            if int(col.max()) >= n:
                raise ValueError(f"{name}: column index {int(col.max())} is out of range for {n} columns")
        order = cp.lexsort(cp.stack([col, row]))
        row = row[order]
        counts = cp.bincount(row, minlength=m) if row.size else cp.zeros(m, dtype=cp.int64)
        indptr = cp.zeros(m + 1, dtype=cp.int64)
        cp.cumsum(counts, out=indptr[1:])
        indices = col[order]
        data = graph.data[order] if with_data else None
        canonical = False  # duplicates are merged by the generic pass
    else:
        if graph.format == "csc":
            _check_pattern_arrays(graph.indptr, graph.indices, (n, m), name + " (CSC)", csc=True)
            graph = graph.tocsr()
            canonical = pattern_summary(graph.indptr, graph.indices).canonical
        else:
            _, _, canonical = _check_pattern_arrays(graph.indptr, graph.indices, (m, n), name)
        indptr, indices = graph.indptr, graph.indices
        data = graph.data if with_data else None
    return _canonical_generic(cp, indptr, indices, (m, n), data, with_data, canonical)


def square_capacity_graph(capacity, *, name: str = "capacity") -> CSRGraph:
    """Canonical NumPy CSR of a square capacity matrix with int64 values.

    Integer dtypes (and floats that hold whole numbers) are accepted;
    anything else (NaN and infinities included), a non-square shape or a
    negative capacity raises ``ValueError``; a value or a sum of duplicate
    entries beyond int64 raises ``OverflowError``.  Used by the DIMACS
    writer and the flow certificate, which both need exact non-negative
    integer capacities on the host.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch._validation import square_capacity_graph
    >>> square_capacity_graph(sp.csr_matrix([[0, 2.0], [0, 0]])).data.tolist()
    [2]
    """
    g = as_csr_graph(capacity, "numpy", name=name, with_data=True)
    if g.m != g.n:
        raise ValueError(f"{name} must be a square matrix, got shape {g.shape}")
    data = g.data
    if data.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(data) | (data != np.round(data)))
        if bad.size:
            raise ValueError(f"{name} must hold integers, found {float(data[bad[0]])!r}")
        big = np.flatnonzero((data >= 2.0 ** 63) | (data < -2.0 ** 63))
        if big.size:
            raise OverflowError(f"{name}: value {float(data[big[0]])!r} does not fit int64")
    elif data.dtype.kind not in "iub":
        raise ValueError(f"{name} must hold integers, got dtype {data.dtype}")
    data = data.astype(np.int64)
    if data.size and int(_backend.reduce(data, "min")) < 0:
        raise ValueError(f"{name} must be non-negative, found {int(data.min())}")
    g.data = data
    return g


def _extent(graph):
    """``m + n + nnz`` of a SciPy sparse input or a ``(indptr, indices,
    shape)`` tuple of NumPy arrays, or None (anything else, or malformed:
    the full validation decides)."""
    try:
        if sp.issparse(graph):
            m, n = graph.shape
            return int(m) + int(n) + int(graph.nnz)
        if isinstance(graph, tuple) and len(graph) == 3 and not _backend.is_cupy_input(graph):
            _, indices, (m, n) = graph
            return int(m) + int(n) + int(np.shape(indices)[0])
    except Exception:
        return None
    return None


#: The small-input path of ``backend="auto"`` on a CPU (:func:`small_on_cpu`):
#: ``budget_s``, the seconds of small solves by SciPy after which a process
#: runs them on the Numba engine after all (None: no bound); ``spent_s``,
#: the seconds spent so far (:func:`charge_small`).  The budget is about
#: Numba's start-up (0.43-0.67 s on a 2-core CPU, warm cache): once the
#: small path has cost that much, loading the engine would have been
#: cheaper (warm, it is 3-6x faster on these inputs: 0.14 against 0.45 ms
#: on a random 200 x 200 matrix, 0.19 against 1.25 ms on a 216-vertex
#: GENRMF flow), so a process of many small solves loses at most about
#: that start-up against one that loaded Numba first.
SMALL_ON_CPU: dict = {"budget_s": 0.5, "spent_s": 0.0}


def _engine_loaded() -> bool:
    """True once the Numba engine is loaded in this process (every
    ``"numba"`` solve loads its compiled CSR checks first)."""
    return "gpumatch._cpu_csr" in sys.modules


def charge_small(seconds: float) -> None:
    """Add the seconds of one small solve to ``SMALL_ON_CPU["spent_s"]``."""
    SMALL_ON_CPU["spent_s"] += float(seconds)


def small_path_closed() -> bool:
    """True once the Numba engine is loaded in this process or the small
    solves have spent :data:`SMALL_ON_CPU`'s budget: from then on
    ``"auto"`` runs the engine on small inputs too."""
    budget = SMALL_ON_CPU.get("budget_s")
    return _engine_loaded() or (budget is not None and SMALL_ON_CPU["spent_s"] >= budget)


def charged_small(call):
    """``call()``, its seconds added to the small solves' budget (:func:`charge_small`)."""
    t0 = time.perf_counter()
    try:
        return call()
    finally:
        charge_small(time.perf_counter() - t0)


def small_on_cpu(graph, backend: str, limit) -> bool:
    """True when `backend` is ``"auto"``, no GPU is usable and `graph` (a
    SciPy sparse input or a NumPy index tuple) has at most `limit` rows,
    columns and entries together (`limit` None: never), while the Numba
    engine is not loaded and the small solves have not spent
    :data:`SMALL_ON_CPU`'s budget.  The solvers then take SciPy's compiled
    routines instead of the Numba engine, whose start-up in a new process
    costs far more than such a solve (issue 62:
    :mod:`gpumatch.matching._small`).  Reads only the shape and the entry
    count: no validation, no import of Numba.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch._validation import small_on_cpu
    >>> small_on_cpu(sp.eye(10, format="csr"), "numba", 100)
    False
    """
    if backend != "auto" or limit is None or small_path_closed():
        return False
    extent = _extent(graph)
    if extent is None or extent > limit:
        return False
    return not _backend.cupy_available()


def as_index_array(a, what: str, backend: str):
    """A user-given list of vertex ids as a one-dimensional integer array on `backend`.

    Accepts NumPy or CuPy arrays and sequences (an empty sequence becomes an
    empty int64 array); anything else, or another shape or dtype, raises
    ``ValueError`` naming `what`.  The dtype is kept (callers widen as
    needed), but for uint64, which becomes int64: a value beyond int64
    raises ``ValueError`` instead of wrapping to a negative id.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._validation import as_index_array
    >>> as_index_array([3, 1], "rows", "numpy").tolist()
    [3, 1]
    >>> as_index_array(np.array([2**64 - 1], dtype=np.uint64), "rows", "numpy")
    Traceback (most recent call last):
    ...
    ValueError: rows: value 18446744073709551615 is out of range (beyond int64)
    """
    if not (_backend.is_cupy_array(a) or isinstance(a, np.ndarray)):
        try:
            a = np.asarray(a)
        except Exception:
            raise ValueError(f"{what} must be a one-dimensional integer array") from None
        if a.size == 0:
            a = a.astype(np.int64)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"{what} must be a one-dimensional integer array, got shape {a.shape} "
                         f"and dtype {a.dtype}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8:
        if a.shape[0] and int(a.max()) > INT64_MAX:
            raise ValueError(f"{what}: value {int(a.max())} is out of range (beyond int64)")
        a = a.astype(np.int64)
    return _backend.to_backend(a, backend)

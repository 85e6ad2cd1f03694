"""Shared CSR utilities for both solvers, on NumPy and CuPy alike.

Each function takes arrays of one backend (all NumPy or all CuPy) and returns
arrays of the same backend, with identical results on both.  Where CuPy has
the primitive (``cumsum``, ``searchsorted``, ``argsort``, ``unique``,
boolean indexing, cuSPARSE's transpose) the GPU path uses it; what CuPy has
no primitive for (the segmented arg-min of :func:`first_min_neighbor`, the
incremental edits of :mod:`gpumatch._csr_edit`) has a CUDA twin in
``csr.cu``.

Graphs are plain CSR arrays here: ``indptr`` (length ``m + 1``) and
``indices`` (length ``nnz``), as produced by
:func:`gpumatch._validation.as_csr_graph`.

Examples
--------
>>> import numpy as np
>>> from gpumatch import csr
>>> indptr, indices = np.array([0, 2, 3]), np.array([0, 2, 1])
>>> t_indptr, t_indices = csr.transpose(indptr, indices, 3)
>>> t_indptr.tolist(), t_indices.tolist()
([0, 1, 2, 3], [0, 1, 0])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _backend, _cuda
from ._backend import array_module
from ._cuda import VALUE_TYPES as _VALUE_TYPES
# The incremental edits of a canonical pattern (the dynamic solvers' patching)
# live in gpumatch._csr_edit, below this module; they are part of its interface.
from ._csr_edit import (RANK_BATCH, delete_entries, edit_entries_pair, insert_entries,  # noqa: F401
                        locate_batch_pair, locate_entries, locate_entries_pair, sort_batch_pair,
                        unmatch_pairs, count_free_ends, warm_sort)

#: Largest value an int32 index can hold (sizes at or above it need int64).
INT32_MAX = int(np.iinfo(np.int32).max)

#: Entry counts at or above this get int64 *offsets* (:func:`offset_dtype_for`:
#: pointer arrays and entry positions), while vertex ids stay int32 as long
#: as they fit (:func:`index_dtype_for`).  ``INT32_MAX`` in use; the test
#: suite lowers it (monkeypatch) so that the mixed layout, int64 offsets over
#: int32 ids, runs on small graphs.  Read at call time by every caller.
OFFSET_LIMIT = INT32_MAX

__all__ = [
    "array_module",
    "degrees",
    "segment_owner",
    "segment_offsets",
    "expand_segments",
    "transpose",
    "reverse_arc_index",
    "antiparallel_pairs",
    "bipartite_flow_network",
    "compact",
    "first_min_neighbor",
    "bfs_expand",
    "unique_sorted",
    "pattern_summary",
    "PatternSummary",
    "csr_from_keys",
    "index_dtype_for",
    "offset_dtype_for",
    "widest",
    "locate_entries",
    "delete_entries",
    "insert_entries",
    "unmatch_pairs",
]


def index_dtype_for(*sizes: int) -> np.dtype:
    """int32 when every size fits below ``2**31 - 1``, else int64.

    The dtype of vertex ids (row and column indices, mates, labels) of a
    graph with `sizes` vertices per side; :func:`offset_dtype_for` picks
    the dtype of its entry offsets separately."""
    return np.dtype(np.int32) if max((int(s) for s in sizes), default=0) < INT32_MAX else np.dtype(np.int64)


def offset_dtype_for(*counts: int) -> np.dtype:
    """dtype of entry offsets (``indptr``, the transpose's pointers, entry
    positions): int32 when every count is below :data:`OFFSET_LIMIT`
    (``2**31 - 1``), else int64.

    A graph of more than ``2**31 - 1`` stored entries whose rows and columns
    fit int32 keeps int32 ids (:func:`index_dtype_for`) with int64 offsets:
    4 bytes per entry less than an all-int64 layout.

    Examples
    --------
    >>> from gpumatch.csr import index_dtype_for, offset_dtype_for
    >>> str(index_dtype_for(800_000_001)), str(offset_dtype_for(4_000_000_001))
    ('int32', 'int64')
    """
    return np.dtype(np.int32) if max((int(c) for c in counts), default=0) < OFFSET_LIMIT else np.dtype(np.int64)


def widest(*dtypes) -> np.dtype:
    """The widest of integer `dtypes` (offsets are never narrower than ids)."""
    return max((np.dtype(d) for d in dtypes), key=lambda d: d.itemsize)


def degrees(indptr):
    """Number of stored entries of each row: ``indptr[1:] - indptr[:-1]``.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import degrees
    >>> degrees(np.array([0, 2, 2, 5])).tolist()
    [2, 0, 3]
    """
    return indptr[1:] - indptr[:-1]


def segment_owner(offsets, total: int):
    """For ``k in range(total)``, the segment ``s`` with ``offsets[s] <= k < offsets[s+1]``.

    `offsets` is a CSR-style pointer array (non-decreasing, ``offsets[0] = 0``);
    empty segments own nothing.  This replaces ``repeat(arange, counts)``,
    which CuPy lacks for array counts.
    """
    xp = array_module(offsets)
    k = xp.arange(total, dtype=offsets.dtype)
    return xp.searchsorted(offsets[1:], k, side="right").astype(offsets.dtype, copy=False)


def segment_offsets(owners, n_segments: int):
    """CSR-style pointers of sorted segment ids: the inverse of :func:`segment_owner`.

    ``offsets[s]`` is where segment ``s`` starts in the non-decreasing
    `owners` (the first position whose owner is at least ``s``), so empty
    segments get an empty range; int64.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import segment_offsets
    >>> segment_offsets(np.array([0, 0, 2, 2, 2]), 4).tolist()
    [0, 2, 2, 5, 5]
    """
    xp = array_module(owners)
    starts = xp.searchsorted(owners, xp.arange(n_segments + 1, dtype=np.int64), side="left")
    return starts.astype(np.int64, copy=False)


def expand_segments(indptr, vertices):
    """Positions of all stored entries of the rows `vertices`, in order.

    Returns
    -------
    owner : array
        For each position, the index *into `vertices`* of its row.
    positions : array
        The positions into ``indices`` (row by row, in CSR order).
    """
    xp = array_module(indptr, vertices)
    starts = indptr[vertices]
    lens = indptr[vertices + 1] - starts
    offsets = xp.zeros(vertices.shape[0] + 1, dtype=indptr.dtype)
    xp.cumsum(lens, out=offsets[1:])
    total = int(offsets[-1])
    owner = segment_owner(offsets, total)
    positions = xp.arange(total, dtype=indptr.dtype) - offsets[owner] + starts[owner]
    return owner, positions


def transpose(indptr, indices, n_cols: int, *, return_perm: bool = False):
    """Transpose a CSR pattern (equivalently: CSR ↔ CSC).

    The rows of each column come out ascending, whatever the order of the
    columns within a row.

    Parameters
    ----------
    indptr, indices : array
        CSR pattern of an ``m × n_cols`` matrix; the column indices of a
        row need not be sorted (no duplicates).
    n_cols : int
        Number of columns.
    return_perm : bool
        Also return ``perm``: ``perm[k]`` is the CSR position of the
        ``k``-th entry of the transpose.

    Returns
    -------
    t_indptr, t_indices[, perm]
        CSR pattern of the ``n_cols × m`` transpose, indices sorted:
        `t_indptr` (and `perm`, entry positions) in the dtype of `indptr`,
        `t_indices` (row ids) in the dtype of `indices`, which must hold
        the row ids too (int64 offsets over int32 ids stay so).

    Notes
    -----
    On the GPU, 32-bit patterns of at most :data:`TRANSPOSE_BLOCK_ENTRIES`
    entries go through cuSPARSE's csr2cscEx2 (:func:`_transpose_cusparse`);
    larger ones and patterns with 64-bit pointers over 32-bit ids (past
    ``2**31`` entries) through it too, a block of rows at a time
    (:func:`_transpose_blocked`; without `return_perm`), and any other
    through a counting transpose (:func:`_transpose_counting`: about
    20 bytes a device entry less than the sort of ``(column, row)`` keys it
    replaces).  On the host, SciPy's CSR → CSC conversion (a counting
    transpose in C++, O(nnz)): on a 2-core CPU, random 1M d5 (5M
    entries) 43 ms against 318 ms for the key sort, 58 against 474 ms on
    R-MAT 20.
    """
    xp = array_module(indptr, indices)
    m = indptr.shape[0] - 1
    if xp is np:
        return _transpose_scipy(indptr, indices, m, n_cols, return_perm)
    out = None
    if int(indices.shape[0]) <= TRANSPOSE_BLOCK_ENTRIES:
        out = _transpose_cusparse(indptr, indices, n_cols, return_perm)
    if out is None and not return_perm:
        out = _transpose_blocked(indptr, indices, m, n_cols)
    if out is not None:
        return out
    return _transpose_counting(indptr, indices, m, n_cols, return_perm)


#: Most entries of the long columns (more than ``GM_T_SHORT`` = 64 rows,
#: which the kernel leaves) that :func:`_transpose_counting` sorts in one
#: batch, as a share of all entries (at least the longest column).  A batch
#: holds about 40 bytes per entry while it sorts.
TRANSPOSE_SORT_SHARE = 1 / 16
_T_SHORT = 64


#: Most entries that one cuSPARSE transpose takes (a row block of
#: :func:`_transpose_blocked`).  cuSPARSE's pointers are 32-bit, and on an
#: H200 (cuSPARSE 13) a block of 2**31 - 1 entries failed with an internal
#: error where one of 2.1e9 passed: 2**30 keeps a margin.  The tests lower
#: it so that small patterns take several blocks.  Read at call time.
TRANSPOSE_BLOCK_ENTRIES = 1 << 30


def _transpose_blocked(indptr, indices, m, n_cols):
    """:func:`transpose` (no permutation) of a device pattern with int32
    ids (pointers of either width), or None where it does not apply (64-bit
    ids, an empty side) or cuSPARSE is not available.

    The rows are cut into blocks of at most :data:`TRANSPOSE_BLOCK_ENTRIES`
    entries (a longer row makes a block of its own); cuSPARSE transposes
    each with 32-bit pointers (:func:`_transpose_cusparse`), and the blocks,
    in row order, are appended to the columns of the whole transpose
    (``gpumatch_csr_t_merge``), so the rows of a column stay ascending.  On
    an H200, random 800M x 800M of degree 5 (4.0B entries, four blocks):
    560 ms against 915 for :func:`_transpose_counting`; 640M entries with
    the pointers forced wide (one block): 66 against 146 ms.

    Device memory beyond the output: the blocks' transposes (4 bytes an
    entry, plus 4 a column per block, in two allocations) until they are
    merged, one block's cuSPARSE work at a time, and one cursor per column.
    With the permutation (max flow's arc maps) the counting transpose stays:
    the blocks would hold 4 bytes an entry more, at the point where a
    network's solve is near its memory peak."""
    nnz = int(indices.shape[0])
    if not (nnz and m and n_cols) or indices.dtype != np.int32 or max(m, n_cols) >= INT32_MAX:
        return None
    pdt = np.dtype(indptr.dtype)
    cp = _backend.cp
    limit = max(1, int(TRANSPOSE_BLOCK_ENTRIES))
    blocks = []   # (first row, last row + 1, first entry, last entry + 1)
    r0 = 0
    while r0 < m:
        p0 = int(indptr[r0])
        r1 = int(cp.searchsorted(indptr, cp.asarray([p0 + limit], dtype=np.int64), side="right")[0]) - 1
        r1 = min(max(r1, r0 + 1), m)
        p1 = int(indptr[r1])
        if p1 > p0:
            blocks.append((r0, r1, p0, p1))
        r0 = r1
    # the blocks' transposes side by side in two arrays (one allocation each:
    # freed whole after the merge, the pool reuses them for the solve's arrays)
    stage_ptr = cp.empty((len(blocks), n_cols + 1), dtype=np.int32)
    stage_ind = cp.empty(nnz, dtype=np.int32)
    for i, (r0, r1, p0, p1) in enumerate(blocks):
        bptr = (indptr[r0:r1 + 1] - p0).astype(np.int32)
        if _transpose_cusparse(bptr, indices[p0:p1], n_cols, False, out=(stage_ptr[i], stage_ind[p0:p1])) is None:
            return None   # pragma: no cover - no cuSPARSE (or 64-bit ids): the counting transpose
        del bptr
    if len(blocks) == 1 and blocks[0][0] == 0:   # one block: only the pointers change width
        return stage_ptr[0].astype(pdt, copy=False), stage_ind
    t_indptr = cp.zeros(n_cols + 1, dtype=pdt)
    for i in range(len(blocks)):
        t_indptr[1:] += cp.diff(stage_ptr[i])
    t_indptr = cp.cumsum(t_indptr, dtype=pdt)
    t_indices = cp.empty(nnz, dtype=np.int32)
    cursor = t_indptr[:-1].copy()
    long_cols = cp.empty(n_cols, dtype=np.int32)
    nlong = cp.zeros(1, dtype=np.uint64)
    defines = (("PTR_T", _VALUE_TYPES[pdt]), ("IND_T", _VALUE_TYPES[np.dtype(np.int32)]))
    merge = _cuda.get_kernel("csr.cu", "gpumatch_csr_t_merge", defines)
    merge_long = _cuda.get_kernel("csr.cu", "gpumatch_csr_t_merge_long", defines)
    grid = (max(1, min((n_cols + _cuda.BLOCK - 1) // _cuda.BLOCK, 65536)),)
    for i, (r0, _, p0, p1) in enumerate(blocks):
        bptr, bind = stage_ptr[i], stage_ind[p0:p1]
        nlong.fill(0)
        merge(grid, (_cuda.BLOCK,), (bptr, bind, np.int64(n_cols), np.int64(r0), cursor, t_indices, long_cols, nlong))
        count = int(nlong.get()[0])
        if count:
            merge_long((min(count, 65536),), (_cuda.BLOCK,), (bptr, bind, np.int64(r0), cursor, t_indices, long_cols,
                                                               np.int64(count)))
    return t_indptr, t_indices


def _transpose_counting(indptr, indices, m, n_cols, return_perm):
    """:func:`transpose` of a device pattern by a counting transpose
    (``gpumatch_csr_t_*`` of ``csr.cu``): column counts, a prefix sum, an
    atomic scatter of every row to its column's next slot, then the rows of
    each column sorted: in the kernel for columns of at most 64 entries, in
    batches of CuPy sorts for longer ones.  Device memory beyond the output:
    one cursor per column, and a sort batch of at most
    :data:`TRANSPOSE_SORT_SHARE` of the entries (or the longest column)."""
    cp = _backend.cp
    nnz = int(indices.shape[0])
    pdt, idt = np.dtype(indptr.dtype), np.dtype(indices.dtype)
    t_indptr = cp.zeros(n_cols + 1, dtype=pdt)
    t_indices = cp.empty(nnz, dtype=idt)
    perm = cp.empty(nnz if return_perm else 1, dtype=pdt)
    if nnz and m and n_cols:
        defines = (("PTR_T", _VALUE_TYPES[pdt]), ("IND_T", _VALUE_TYPES[idt]))
        get = lambda name: _cuda.get_kernel("csr.cu", name, defines)  # noqa: E731
        grid = (max(1, min((max(nnz, m, n_cols) + _cuda.BLOCK - 1) // _cuda.BLOCK, 65536)),)
        get("gpumatch_csr_t_count")(grid, (_cuda.BLOCK,), (indices, np.int64(nnz), t_indptr))
        t_indptr = cp.cumsum(t_indptr, dtype=pdt)
        cursor = t_indptr[:-1].copy()
        get("gpumatch_csr_t_scatter")(grid, (_cuda.BLOCK,), (indptr, indices, np.int64(m), cursor, t_indices,
                                                              perm, np.int32(return_perm)))
        del cursor
        get("gpumatch_csr_t_sort_short")(grid, (_cuda.BLOCK,), (t_indptr, np.int64(n_cols), t_indices, perm,
                                                                 np.int32(return_perm)))
        _sort_long_columns(t_indptr, t_indices, perm if return_perm else None, m)
    if return_perm:
        return t_indptr, t_indices, perm[:nnz]
    return t_indptr, t_indices


def _sort_long_columns(t_indptr, t_indices, perm, m):
    """Sort the rows (and `perm` along) of the columns of more than 64
    entries of a device transpose, in batches (:data:`TRANSPOSE_SORT_SHARE`)."""
    cp = _backend.cp
    deg = t_indptr[1:] - t_indptr[:-1]
    cols = cp.flatnonzero(deg > _T_SHORT)
    if cols.shape[0] == 0:
        return
    lens = deg[cols].astype(np.int64)
    ends = cp.cumsum(lens)
    budget = max(int(int(t_indices.shape[0]) * TRANSPOSE_SORT_SHARE), int(lens.max()))
    lo, width = 0, np.int64(max(m, 1))
    host_ends = ends.get()
    while lo < cols.shape[0]:
        before = int(host_ends[lo - 1]) if lo else 0
        hi = int(np.searchsorted(host_ends, before + budget, side="right"))
        hi = max(hi, lo + 1)
        owner, pos = expand_segments(t_indptr.astype(np.int64, copy=False), cols[lo:hi].astype(np.int64))
        key = owner.astype(np.int64) * width + t_indices[pos].astype(np.int64)
        order = cp.argsort(key)
        del key
        t_indices[pos] = t_indices[pos[order]]
        if perm is not None:
            perm[pos] = perm[pos[order]]
        del owner, pos, order
        lo = hi


def _transpose_scipy(indptr, indices, m, n_cols, return_perm):
    """:func:`transpose` of a host pattern by SciPy's CSR → CSC conversion,
    which walks the rows in order and deals each entry to the next free
    slot of its column (rows ascending within a column).  With
    `return_perm` the values are the entries' CSR positions, which come out
    permuted: the permutation."""
    import scipy.sparse as sp

    dt, it = indptr.dtype, indices.dtype
    nnz = indices.shape[0]
    vals = np.arange(nnz, dtype=dt) if return_perm else np.ones(nnz, dtype=np.int8)
    t = sp.csr_matrix((vals, indices, indptr), shape=(m, n_cols)).tocsc()
    t_indptr, t_indices = t.indptr.astype(dt, copy=False), t.indices.astype(it, copy=False)
    if return_perm:
        return t_indptr, t_indices, t.data.astype(dt, copy=False)
    return t_indptr, t_indices


def _transpose_cusparse(indptr, indices, n_cols, return_perm, out=None):
    """:func:`transpose` of a 32-bit device pattern by cuSPARSE's csr2cscEx2
    (a stable counting transpose over the rows: the rows of a column come
    out sorted, whatever the order of the columns within a row; the tests
    check both, unsorted rows included), or None where it does not apply
    (64-bit indices, an empty side) or is not available.

    With `return_perm` the values moved are the entries' CSR positions,
    which come out permuted: the permutation.  On an H100, R-MAT 24 (133M
    entries): 10.1 ms, about 11 with the permutation, level with cupyx's
    ``tocsc``; the sort below takes several times that.  The symbolic
    action (no values moved) took 4.3 ms but is not used: see below.
    `out`: the arrays to write the transpose to (int32, ``n_cols + 1`` and
    ``nnz``; without `return_perm`)."""
    nnz = int(indices.shape[0])
    m = int(indptr.shape[0]) - 1
    if not (nnz and m and n_cols) or indptr.dtype != np.int32 or indices.dtype != np.int32:
        return None
    cp = _backend.cp
    try:
        cs = _backend.cusparse()
        handle = cp.cuda.device.get_cusparse_handle()
    except Exception:  # pragma: no cover - no cuSPARSE: the sort
        return None
    # from here on an error is raised, not hidden by the fallback: after a
    # device fault the context is lost and the sort would only fail later
    t_indptr, t_indices = out if out is not None else (cp.empty(n_cols + 1, dtype=np.int32),
                                                       cp.empty(nnz, dtype=np.int32))
    perm = cp.empty(nnz, dtype=np.int32)
    # Always the numeric action with real value arrays on both sides, as
    # CuPy's own tocsc calls it: without `return_perm` the column indices
    # stand in for the CSR values and the moved copy is dropped.  The
    # symbolic action faults in cuSPARSE 13 on an H100 (internal error,
    # then an illegal address) on a 32 x 47 random pattern right after a
    # 423 x 326 one in one process, with a NULL or a real CSC value array,
    # a zeroed or a padded work buffer alike; each pattern alone is fine.
    # The numeric action passes that pair and 3000 random small patterns
    # (tests/test_matching.py -k long_loop); narrower value types (8- or
    # 16-bit) gain nothing measurable.
    pos = cp.arange(nnz, dtype=np.int32) if return_perm else indices
    # CUDA_R_32F: the values are only moved, so the 32-bit words arrive
    # intact (cuSPARSE 13 rejects CUDA_R_32I here with an internal error);
    # CUSPARSE_ACTION_NUMERIC, index base 0, CUSPARSE_CSR2CSC_ALG1
    args = (handle, m, n_cols, nnz, pos.data.ptr, indptr.data.ptr, indices.data.ptr, perm.data.ptr,
            t_indptr.data.ptr, t_indices.data.ptr, 0, 1, 0, 1)
    size = cs.csr2cscEx2_bufferSize(*args)
    buf = cp.empty(max(int(size), 1), dtype=np.int8)
    cs.csr2cscEx2(*args, buf.data.ptr)
    return (t_indptr, t_indices, perm) if return_perm else (t_indptr, t_indices)


def reverse_arc_index(indptr, indices, n_vertices: int):
    """Incoming-arc lists of a directed CSR graph, with the map between arcs.

    For arc ``v → u`` stored at out-position ``k`` (``indices[k] = u``):
    ``out_to_in[k]`` is where it appears in ``u``'s incoming list, and
    ``in_to_out[out_to_in[k]] == k``.  ``in_indices[j]`` is the tail of the
    ``j``-th incoming arc.  Push-relabel stores the flow of the forward arc
    only and reaches it from the head through ``in_to_out``.

    Returns
    -------
    in_indptr, in_indices, in_to_out, out_to_in : arrays
    """
    xp = array_module(indptr, indices)
    in_indptr, in_indices, in_to_out = transpose(indptr, indices, n_vertices, return_perm=True)
    out_to_in = xp.empty_like(in_to_out)
    out_to_in[in_to_out] = xp.arange(in_to_out.shape[0], dtype=in_to_out.dtype)
    return in_indptr, in_indices, in_to_out, out_to_in


def antiparallel_pairs(indptr, indices, n_vertices: int):
    """The anti-parallel pairs of arcs of a directed CSR graph.

    The graph's rows must have sorted, distinct columns (canonical CSR).
    A pair is two stored arcs ``u -> v`` and ``v -> u`` with ``u != v``;
    self-loops pair with nothing.

    Returns
    -------
    k, p : arrays of int64
        Positions in `indices` of the two arcs of each pair, ``k < p``
        (``k`` ascending).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import antiparallel_pairs
    >>> # arcs 0->1, 0->2, 1->0, 2->2
    >>> k, p = antiparallel_pairs(np.array([0, 2, 3, 4]), np.array([1, 2, 0, 2]), 3)
    >>> k.tolist(), p.tolist()
    ([0], [2])
    """
    xp = array_module(indptr, indices)
    E = int(indices.shape[0])
    if E == 0:
        return xp.zeros(0, dtype=np.int64), xp.zeros(0, dtype=np.int64)
    rows = segment_owner(indptr.astype(np.int64), E)
    cols = indices.astype(np.int64)
    V = np.int64(max(n_vertices, 1))
    key = rows * V + cols                                   # ascending: canonical CSR
    rkey = cols * V + rows
    pos = xp.minimum(xp.searchsorted(key, rkey), E - 1)
    # (a self-loop finds itself: pos == its own position, not after it)
    k = xp.nonzero((key[pos] == rkey) & (xp.arange(E) < pos))[0].astype(np.int64, copy=False)
    return k, pos[k].astype(np.int64, copy=False)


def bipartite_flow_network(indptr, indices, shape):
    """Unit-capacity flow network of a bipartite graph.

    Vertices: rows ``0..m-1``, columns ``m..m+n-1``, super source ``m+n``,
    super sink ``m+n+1``.  Arcs: source → every row, row ``i`` → column
    ``m + j`` for every stored entry ``(i, j)``, every column → sink; all of
    capacity 1.  The maximum flow value equals the maximum matching size.

    Returns
    -------
    net_indptr, net_indices, capacity, source, sink
        Directed CSR (sorted indices) of ``m + n + 2`` vertices, int64
        capacities, and the terminal ids.  Vertex ids int32 while ``m + n
        + 2`` fits, pointers int64 only past ``2**31`` arcs
        (:func:`offset_dtype_for`).
    """
    xp = array_module(indptr, indices)
    m, n = int(shape[0]), int(shape[1])
    nnz = indices.shape[0]
    V = m + n + 2
    E = nnz + n + m
    idt = index_dtype_for(V + 1)
    odt = widest(offset_dtype_for(2 * E + 1), idt)   # (2E: the flow solver's bidirectional layout)
    deg = (indptr[1:] - indptr[:-1]).astype(odt)
    counts = xp.concatenate([deg, xp.ones(n, dtype=odt), xp.asarray([m, 0], dtype=odt)])
    net_indptr = xp.zeros(V + 1, dtype=odt)
    xp.cumsum(counts, out=net_indptr[1:])
    net_indices = xp.concatenate([
        indices.astype(idt) + m,                      # row -> column arcs
        xp.full(n, m + n + 1, dtype=idt),             # column -> sink
        xp.arange(m, dtype=idt),                      # source -> rows
    ])
    capacity = xp.ones(E, dtype=np.int64)
    return net_indptr, net_indices, capacity, m + n, m + n + 1


def compact(values, keep):
    """Stream compaction: ``values[keep]``, order preserved.

    This is the "shrink" primitive of the active lists.  Both backends use
    their own boolean indexing: on an H100, CuPy's took 0.07-0.10 ms for
    10^4-10^6 elements where a scan + scatter kernel of this package took
    0.07-0.08 ms, and less at 10^7 (0.19 against 0.24 ms), so the package
    keeps no kernel of its own for it.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import compact
    >>> compact(np.array([5, 6, 7, 8]), np.array([True, False, True, True])).tolist()
    [5, 7, 8]
    """
    return values[keep.astype(bool, copy=False)]


def _exact_sum(xp, c) -> int:
    """Exact Python-int sum of non-negative int64 values (no wrap)."""
    if c.shape[0] == 0:
        return 0
    hi = int((c >> 32).sum())
    lo = int((c & 0xFFFFFFFF).sum())
    return (hi << 32) + lo


def first_min_neighbor(indptr, indices, labels, vertices, *, stop_at=None):
    """For each vertex of `vertices`, its first neighbour of minimum label.

    This is the scan of G-PR's push step: scan the stored entries of row
    ``v`` in order, keep the first of minimum ``labels[u]``; with `stop_at`
    given, stop early once a label ``<= stop_at[i]`` is seen (no smaller one
    can help).  Rows without entries give neighbour ``-1`` and label
    ``INT64_MAX`` cast to the label dtype's maximum.

    Returns
    -------
    neighbor : array (indices' dtype), min_label : array (labels' dtype)
    """
    xp = array_module(indptr, indices, labels, vertices)
    k = vertices.shape[0]
    big = np.iinfo(labels.dtype).max
    if xp is np:
        owner, pos = expand_segments(indptr, vertices)
        nb = indices[pos]
        lab = labels[nb]
        if stop_at is not None:
            # Entries after the first one at or below the stop level are not read.
            hit = lab <= stop_at[owner]
            first_hit = np.full(k, np.iinfo(np.int64).max, dtype=np.int64)
            idx = np.nonzero(hit)[0]
            np.minimum.at(first_hit, owner[idx], idx)
            seen = np.arange(pos.shape[0]) <= first_hit[owner]
            lab = np.where(seen, lab, big)
        min_label = np.full(k, big, dtype=labels.dtype)
        np.minimum.at(min_label, owner, lab)
        is_min = lab == min_label[owner]
        first = np.full(k, np.iinfo(np.int64).max, dtype=np.int64)
        idx = np.nonzero(is_min)[0]
        np.minimum.at(first, owner[idx], idx)
        neighbor = np.full(k, -1, dtype=indices.dtype)
        has = first < np.iinfo(np.int64).max
        neighbor[has] = nb[first[has]]
        return neighbor, min_label
    neighbor = xp.empty(k, dtype=indices.dtype)
    min_label = xp.empty(k, dtype=labels.dtype)
    # pointers in their own width (OFF: int64 past 2**31 entries), ids in the indices' (IDX)
    defines = (("IDX", _VALUE_TYPES[np.dtype(indices.dtype)]), ("OFF", _VALUE_TYPES[np.dtype(indptr.dtype)]),
               ("LABEL_T", _VALUE_TYPES[np.dtype(labels.dtype)]))
    kern = _cuda.get_kernel("csr.cu", "gpumatch_first_min_neighbor", defines)
    stop = stop_at if stop_at is not None else xp.full(k, -1 if labels.dtype.kind == "i" else 0, dtype=labels.dtype)
    kern(_cuda.grid_for(k), (_cuda.BLOCK,),
         (indptr, indices, labels, vertices.astype(indices.dtype, copy=False),
          stop, np.int32(stop_at is not None), neighbor, min_label, np.int64(k)))
    return neighbor, min_label


def bfs_expand(indptr, indices, frontier, visited):
    """One level of a frontier BFS: unvisited neighbours of `frontier`.

    Parameters
    ----------
    frontier : array of vertex ids
    visited : bool array over the target vertices

    Returns
    -------
    next_frontier : array
        Sorted, unique ids ``u`` with ``visited[u]`` False that are a
        neighbour of some vertex of `frontier`.  `visited` is not changed:
        the caller marks (it may also want to set levels or parents).
    """
    if frontier.shape[0] == 0:
        return indices[:0].copy()
    _, pos = expand_segments(indptr, frontier)
    nb = indices[pos]
    nb = nb[~visited[nb]]
    return unique_sorted(nb)


def unique_sorted(values):
    """Sorted unique values, by a sort and a neighbour mask.

    Same result as ``xp.unique(values)``; written out because a sort plus a
    mask is many times faster than ``numpy.unique`` on large integer arrays
    with some NumPy versions.
    """
    xp = array_module(values)
    if values.shape[0] == 0:
        return values.copy()
    s = xp.sort(values)
    keep = xp.empty(s.shape[0], dtype=bool)
    keep[0] = True
    xp.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


class PatternSummary(NamedTuple):
    """What input validation needs to know about raw CSR arrays.

    ``decreasing``: some ``indptr[i+1] < indptr[i]``; ``out_of_range``: some
    row reaches outside ``[0, nnz)``; ``min_index``/``max_index`` over the
    rows that could be read (None when there are none); ``canonical``: the
    indices strictly increase within every row.
    """

    first: int
    last: int
    decreasing: bool
    out_of_range: bool
    min_index: int | None
    max_index: int | None
    canonical: bool


def pattern_summary(indptr, indices) -> PatternSummary:
    """Summarise raw CSR arrays in one pass (one device read-back on CuPy).

    The arrays are not trusted: rows whose pointers are decreasing or
    reach outside ``indices`` are flagged and not read.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import pattern_summary
    >>> pattern_summary(np.array([0, 2, 3]), np.array([4, 1, 2]))
    PatternSummary(first=0, last=3, decreasing=False, out_of_range=False, min_index=1, max_index=4, canonical=False)
    """
    xp = array_module(indptr, indices)
    m = indptr.shape[0] - 1
    nnz = indices.shape[0]
    if xp is np:
        starts, ends = indptr[:-1].astype(np.int64), indptr[1:].astype(np.int64)
        bad_order = ends < starts
        bad_range = ~bad_order & ((starts < 0) | (ends > nnz))
        lo = hi = None
        canonical = True
        if not bad_order.any() and not bad_range.any() and nnz and m:
            # rows are contiguous: together they read indices[span_lo:span_hi]
            span_lo, span_hi = int(starts[0]), int(ends[-1])
            read = indices[span_lo:span_hi]
            if read.shape[0]:
                lo, hi = int(read.min()), int(read.max())
            if read.shape[0] > 1:
                row_start = np.zeros(read.shape[0], dtype=bool)
                row_start[starts[starts < span_hi] - span_lo] = True
                canonical = bool(np.all((read[1:] > read[:-1]) | row_start[1:]))
        elif nnz:  # malformed pointers: report them; the index range is not needed
            canonical = False
        return PatternSummary(int(indptr[0]), int(indptr[-1]), bool(bad_order.any()), bool(bad_range.any()),
                              lo, hi, canonical)
    def _typed(a):
        return a if np.dtype(a.dtype) in (np.dtype(np.int32), np.dtype(np.int64)) else a.astype(np.int64)

    indptr, indices = _typed(indptr), _typed(indices)
    out = xp.asarray(np.array([0, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0, 0, 0], dtype=np.int64))
    defines = (("PTR_T", _VALUE_TYPES[np.dtype(indptr.dtype)]), ("IND_T", _VALUE_TYPES[np.dtype(indices.dtype)]))
    kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_summary", defines)
    blocks = max(1, min((max(m, nnz) + _cuda.BLOCK - 1) // _cuda.BLOCK, 2048))
    kern((blocks,), (_cuda.BLOCK,), (indptr, indices, np.int64(m), np.int64(nnz), out))
    flags, lo, hi, descents, first, last = (int(v) for v in out.get())
    read_any = lo <= hi
    return PatternSummary(first, last, bool(flags & 1), bool(flags & 2),
                          lo if read_any else None, hi if read_any else None, descents <= 0)


def csr_from_keys(keys, n_rows: int, n_cols: int, values=None):
    """CSR of entries given by coordinate keys ``row * n_cols + col``, duplicates merged.

    Parameters
    ----------
    keys : int64 array
        One key per entry, in any order, possibly repeated.
    n_rows, n_cols : int
        Shape of the matrix.
    values : array, optional
        One value per key; the values of repeated keys are summed.

    Returns
    -------
    indptr, indices, data
        int64 CSR arrays with sorted, unique indices; `data` is None without
        `values`.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import csr_from_keys
    >>> ip, ix, d = csr_from_keys(np.array([4, 0, 4]), 2, 3, np.array([1, 2, 5]))
    >>> ip.tolist(), ix.tolist(), d.tolist()
    ([0, 1, 2], [0, 1], [2, 6])
    """
    xp = array_module(keys, values) if values is not None else array_module(keys)
    width = np.int64(max(n_cols, 1))
    if values is None:
        keys, data = unique_sorted(keys), None
    else:
        order = xp.argsort(keys, kind="stable") if xp is np else xp.argsort(keys)
        keys, values = keys[order], values[order]
        first = xp.ones(keys.shape[0], dtype=bool)
        if keys.shape[0]:
            xp.not_equal(keys[1:], keys[:-1], out=first[1:])
        segment = xp.cumsum(first) - 1
        data = xp.zeros(int(segment[-1]) + 1 if keys.shape[0] else 0, dtype=values.dtype)
        xp.add.at(data, segment, values)
        keys = keys[first]
    rows = keys // width
    cols = keys - rows * width
    indptr = segment_offsets(rows, n_rows)   # the keys are sorted, so are their rows
    return indptr, cols, data

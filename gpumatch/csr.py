"""Shared CSR utilities for both solvers, on NumPy and CuPy alike.

Each function takes arrays of one backend (all NumPy or all CuPy) and returns
arrays of the same backend, with identical results on both.  Where CuPy has
the primitive (``cumsum``, ``searchsorted``, ``argsort``, ``unique``) the
GPU path uses it; the two kernels without a CuPy primitive (the scatter of
:func:`compact` and the segmented arg-min of :func:`first_min_neighbor`) have
a CUDA twin in ``csr.cu``.

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

from . import _backend

__all__ = [
    "array_module",
    "degrees",
    "segment_owner",
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
    "locate_entries",
    "delete_entries",
    "insert_entries",
    "unmatch_pairs",
]


def array_module(*arrays):
    """``cupy`` if any argument is a CuPy array, else ``numpy``."""
    for a in arrays:
        if _backend.is_cupy_array(a):
            return _backend.cp
    return np


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

    Parameters
    ----------
    indptr, indices : array
        CSR pattern of an ``m × n_cols`` matrix, column indices sorted
        within each row.
    n_cols : int
        Number of columns.
    return_perm : bool
        Also return ``perm``: ``perm[k]`` is the CSR position of the
        ``k``-th entry of the transpose.

    Returns
    -------
    t_indptr, t_indices[, perm]
        CSR pattern of the ``n_cols × m`` transpose, indices sorted.
    """
    xp = array_module(indptr, indices)
    nnz = indices.shape[0]
    m = indptr.shape[0] - 1
    rows = segment_owner(indptr, nnz)
    # Key (column, row) is unique, so any sort (stable or not) gives one order.
    key = indices.astype(np.int64) * max(m, 1) + rows.astype(np.int64)
    perm = xp.argsort(key).astype(indptr.dtype, copy=False)
    counts = xp.bincount(indices, minlength=n_cols) if nnz else xp.zeros(n_cols, dtype=np.int64)
    t_indptr = xp.zeros(n_cols + 1, dtype=indptr.dtype)
    xp.cumsum(counts, out=t_indptr[1:])
    t_indices = rows[perm]
    if return_perm:
        return t_indptr, t_indices, perm
    return t_indptr, t_indices


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
        capacities, and the terminal ids.
    """
    xp = array_module(indptr, indices)
    m, n = int(shape[0]), int(shape[1])
    nnz = indices.shape[0]
    V = m + n + 2
    E = nnz + n + m
    from ._validation import index_dtype_for

    idt = index_dtype_for(V + 1, E + 1)
    deg = (indptr[1:] - indptr[:-1]).astype(idt)
    counts = xp.concatenate([deg, xp.ones(n, dtype=idt), xp.asarray([m, 0], dtype=idt)])
    net_indptr = xp.zeros(V + 1, dtype=idt)
    xp.cumsum(counts, out=net_indptr[1:])
    net_indices = xp.concatenate([
        indices.astype(idt) + m,                      # row -> column arcs
        xp.full(n, m + n + 1, dtype=idt),             # column -> sink
        xp.arange(m, dtype=idt),                      # source -> rows
    ])
    capacity = xp.ones(E, dtype=np.int64)
    return net_indptr, net_indices, capacity, m + n, m + n + 1


def compact(values, keep):
    """Stream compaction: ``values[keep]`` computed by an exclusive prefix sum.

    This is the "shrink" primitive of the active lists: each kept element
    is written at position ``scan[i]`` of the output, where ``scan`` is the
    exclusive prefix sum of `keep`.  Order is preserved.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import compact
    >>> compact(np.array([5, 6, 7, 8]), np.array([True, False, True, True])).tolist()
    [5, 7, 8]
    """
    xp = array_module(values, keep)
    keep = keep.astype(bool, copy=False)
    count = keep.shape[0]
    if count == 0:
        return values[:0].copy()
    scan = xp.cumsum(keep, dtype=np.int64)  # inclusive
    total = int(scan[-1])
    out = xp.empty(total, dtype=values.dtype)
    if xp is np:
        out[scan[keep] - 1] = values[keep]
        return out
    from . import _cuda

    kern = _cuda.get_kernel("csr.cu", "gpumatch_compact_scatter", _defines_for(values))
    kern(_cuda.grid_for(count), (_cuda.BLOCK,),
         (values, keep.view(np.uint8), scan, out, np.int64(count)))
    return out


_VALUE_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
                np.dtype(np.float32): "float", np.dtype(np.float64): "double",
                np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "bool"}


def _defines_for(values, extra=()):
    t = _VALUE_TYPES.get(np.dtype(values.dtype))
    if t is None:
        raise TypeError(f"compact: unsupported dtype {values.dtype}")
    return (("VALUE_T", t),) + tuple(extra)


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
    from . import _cuda

    neighbor = xp.empty(k, dtype=indices.dtype)
    min_label = xp.empty(k, dtype=labels.dtype)
    defines = (("IDX", _VALUE_TYPES[np.dtype(indices.dtype)]), ("LABEL_T", _VALUE_TYPES[np.dtype(labels.dtype)]))
    kern = _cuda.get_kernel("csr.cu", "gpumatch_first_min_neighbor", defines)
    stop = stop_at if stop_at is not None else xp.full(k, -1 if labels.dtype.kind == "i" else 0, dtype=labels.dtype)
    kern(_cuda.grid_for(k), (_cuda.BLOCK,),
         (indptr.astype(indices.dtype, copy=False), indices, labels, vertices.astype(indices.dtype, copy=False),
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
    from . import _cuda

    def _typed(a):
        return a if np.dtype(a.dtype) in (np.dtype(np.int32), np.dtype(np.int64)) else a.astype(np.int64)

    indptr, indices = _typed(indptr), _typed(indices)
    out = xp.asarray(np.array([0, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0, 0, 0], dtype=np.int64))
    defines = (("PTR_T", _VALUE_TYPES[np.dtype(indptr.dtype)]), ("IND_T", _VALUE_TYPES[np.dtype(indices.dtype)]))
    kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_summary", defines)
    blocks = max(1, min((m + _cuda.BLOCK - 1) // _cuda.BLOCK, 1024))
    kern((blocks,), (_cuda.BLOCK,), (indptr, indices, np.int64(m), np.int64(nnz), out))
    flags, lo, hi, unsorted, first, last = (int(v) for v in out.get())
    read_any = lo <= hi
    return PatternSummary(first, last, bool(flags & 1), bool(flags & 2),
                          lo if read_any else None, hi if read_any else None, not unsorted)


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
        data = xp.zeros(int(first.sum()), dtype=values.dtype)
        xp.add.at(data, segment, values)
        keys = keys[first]
    rows = keys // width
    cols = keys - rows * width
    counts = xp.bincount(rows, minlength=n_rows) if keys.shape[0] else xp.zeros(n_rows, dtype=np.int64)
    indptr = xp.zeros(n_rows + 1, dtype=np.int64)
    xp.cumsum(counts, out=indptr[1:])
    return indptr, cols, data


# ---------------------------------------------------------------------------
# Incremental edits of a canonical CSR pattern (the dynamic solvers keep the
# pattern and its transpose sorted and patch both after each batch instead
# of re-sorting or re-transposing: each edit is one O(nnz) pass).


def _ptr_ind_defines(indptr, indices):
    return (("PTR_T", _VALUE_TYPES[np.dtype(indptr.dtype)]), ("IND_T", _VALUE_TYPES[np.dtype(indices.dtype)]))


def locate_entries(indptr, indices, segments, values):
    """Where the entries ``(segments[i], values[i])`` are in a sorted CSR pattern, or would go.

    Parameters
    ----------
    indptr, indices : array
        CSR pattern with sorted indices within each segment (row).
    segments, values : int64 array
        The queries.  A segment outside ``[0, len(indptr) - 1)`` is
        answered ``pos = 0``, ``found = False`` (validate before trusting).

    Returns
    -------
    pos : int64 array
        First position of the segment whose index is ``>= values[i]`` (the
        segment's end when there is none): the entry's position when it is
        present, the insertion point otherwise.
    found : bool array

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import locate_entries
    >>> pos, found = locate_entries(np.array([0, 2, 3]), np.array([1, 4, 0]), np.array([0, 0, 1]), np.array([4, 2, 5]))
    >>> pos.tolist(), found.tolist()
    ([1, 1, 3], [True, False, False])
    """
    xp = array_module(indptr, indices, segments, values)
    k = segments.shape[0]
    nseg = indptr.shape[0] - 1
    segments = segments.astype(np.int64, copy=False)
    values = values.astype(np.int64, copy=False)
    if xp is np:
        ok = (segments >= 0) & (segments < nseg)
        s = np.where(ok, segments, 0)
        lo = np.where(ok, indptr[s], 0).astype(np.int64)
        end = np.where(ok, indptr[np.minimum(s + 1, nseg)], 0).astype(np.int64)
        hi = end.copy()
        while True:  # vectorised binary search, one step per round
            live = lo < hi
            if not live.any():
                break
            mid = (lo + hi) >> 1
            below = live & (indices[np.minimum(mid, max(indices.shape[0] - 1, 0))] < values) if indices.shape[0] \
                else np.zeros(k, dtype=bool)
            lo = np.where(below, mid + 1, lo)
            hi = np.where(live & ~below, mid, hi)
        found = np.zeros(k, dtype=bool)
        inside = lo < end
        found[inside] = indices[lo[inside]] == values[inside]
        return lo, found
    from . import _cuda

    pos = xp.empty(k, dtype=np.int64)
    found = xp.empty(k, dtype=np.uint8)
    if k:
        kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_locate", _ptr_ind_defines(indptr, indices))
        kern(_cuda.grid_for(k), (_cuda.BLOCK,),
             (indptr, indices, np.int64(nseg), segments, values, np.int64(k), pos, found))
    return pos, found.view(bool)


def delete_entries(indptr, indices, positions):
    """Remove the entries at `positions` from a CSR pattern.

    Parameters
    ----------
    indptr, indices : array
        CSR pattern.
    positions : int64 array
        Strictly increasing positions into `indices`.

    Returns
    -------
    new_indptr, new_indices
        The pattern without those entries (same dtypes; the order of the
        others is kept, so a sorted pattern stays sorted).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import delete_entries
    >>> ip, ix = delete_entries(np.array([0, 2, 3]), np.array([1, 4, 0]), np.array([0, 2]))
    >>> ip.tolist(), ix.tolist()
    ([0, 1, 1], [4])
    """
    xp = array_module(indptr, indices, positions)
    positions = positions.astype(np.int64, copy=False)
    k = positions.shape[0]
    count = indices.shape[0]
    if xp is np:
        # entries removed before the start of each row
        new_indptr = indptr - np.searchsorted(positions, indptr.astype(np.int64), side="left").astype(indptr.dtype)
        keep = np.ones(count, dtype=bool)
        keep[positions] = False
        return new_indptr, indices[keep]
    from . import _cuda

    new_indptr = _shift_ptr(indptr, positions, by_position=True)
    out = xp.empty(count - k, dtype=indices.dtype)
    if count:
        kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_delete_scatter", _defines_for(indices))
        kern(_edit_grid(count), (_cuda.BLOCK,), (indices, np.int64(count), positions, np.int64(k), out))
    return new_indptr, out


def insert_entries(indptr, indices, positions, segments, values):
    """Insert entries into a CSR pattern.

    Parameters
    ----------
    indptr, indices : array
        CSR pattern.
    positions : int64 array
        Non-decreasing: entry ``j`` goes just before old position
        ``positions[j]`` (``len(indices)``: at the end); equal positions
        keep the order of `values`.  With the insertion points of
        :func:`locate_entries` and a batch sorted by (segment, value), a
        sorted pattern stays sorted.
    segments : int64 array
        Non-decreasing: the segment (row) of each new entry.
    values : array
        The new indices.

    Returns
    -------
    new_indptr, new_indices

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import insert_entries
    >>> ip, ix = insert_entries(np.array([0, 2, 3]), np.array([1, 4, 0]), np.array([1, 2, 3]),
    ...                         np.array([0, 0, 1]), np.array([2, 5, 3]))
    >>> ip.tolist(), ix.tolist()
    ([0, 4, 6], [1, 2, 4, 5, 0, 3])
    """
    xp = array_module(indptr, indices, positions, segments, values)
    positions = positions.astype(np.int64, copy=False)
    k = positions.shape[0]
    count = indices.shape[0]
    nseg = indptr.shape[0] - 1
    values = values.astype(indices.dtype, copy=False)
    if xp is np:
        before = np.searchsorted(segments.astype(np.int64, copy=False), np.arange(nseg + 1, dtype=np.int64),
                                 side="left")
        new_indptr = indptr + before.astype(indptr.dtype)
        out = np.empty(count + k, dtype=indices.dtype)
        dest = positions + np.arange(k, dtype=np.int64)
        mark = np.zeros(count + k, dtype=bool)
        mark[dest] = True
        out[dest] = values
        out[~mark] = indices
        return new_indptr, out
    from . import _cuda

    new_indptr = _shift_ptr(indptr, segments.astype(np.int64, copy=False), by_position=False)
    out = xp.empty(count + k, dtype=indices.dtype)
    if count + k:
        kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_insert_scatter", _defines_for(indices))
        kern(_edit_grid(count + k), (_cuda.BLOCK,),
             (indices, np.int64(count), positions, values, np.int64(k), out))
    return new_indptr, out


#: Slots per thread of the CUDA edit kernels (``GM_EDIT_ITEMS`` in csr.cu).
_EDIT_ITEMS = 8


def _edit_grid(count):
    """Grid of the CUDA edit kernels: a block per tile of ``BLOCK * _EDIT_ITEMS`` slots."""
    from . import _cuda

    return _cuda.grid_for(count, _cuda.BLOCK * _EDIT_ITEMS)


def _shift_ptr(indptr, keys, by_position):
    """CUDA: the row pointers after deleting the sorted positions `keys`
    (`by_position`) or inserting entries into the sorted rows `keys`."""
    from . import _cuda

    out = _backend.cp.empty_like(indptr)
    count = indptr.shape[0]
    kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_shift_ptr", _ptr_ind_defines(indptr, indptr))
    kern(_edit_grid(count), (_cuda.BLOCK,),
         (indptr, np.int64(count), keys, np.int64(keys.shape[0]), np.int32(1 if by_position else 0), out))
    return out


def locate_entries_pair(patterns, queries, present):
    """:func:`locate_entries` in two sorted patterns of the same number of
    entries (a graph's CSR and CSC), and a count of the first one's misses.

    Parameters
    ----------
    patterns : ((indptr0, indices0), (indptr1, indices1))
        Both with the same dtypes and the same number of entries.
    queries : ((segments0, values0), (segments1, values1))
        int64 arrays, k queries for each pattern.
    present : bool
        Whether pattern 0's queries should be present (a removal) or absent
        (an insertion).

    Returns
    -------
    pos : int64 array
        2k positions: pattern 0's, then pattern 1's.
    misses : int
        Queries of pattern 0 that are not as `present` says (on the GPU one
        launch and one read-back for everything).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import locate_entries_pair
    >>> csr = (np.array([0, 2, 3]), np.array([0, 1, 1]))      # edges (0,0) (0,1) (1,1)
    >>> csc = (np.array([0, 1, 3]), np.array([0, 0, 1]))
    >>> pos, misses = locate_entries_pair((csr, csc), ((np.array([1]), np.array([0])),
    ...                                                (np.array([0]), np.array([1]))), present=False)
    >>> pos.tolist(), misses
    ([2, 1], 0)
    """
    (p0, i0), (p1, i1) = patterns
    (s0, v0), (s1, v1) = queries
    xp = array_module(p0, i0, p1, i1, s0, v0)
    k = int(s0.shape[0])
    if xp is np or k == 0:
        pos0, found = locate_entries(p0, i0, s0, v0)
        pos1, _ = locate_entries(p1, i1, s1, v1)
        return xp.concatenate([pos0, pos1]), int((found != present).sum())
    from . import _cuda

    pos = xp.empty(2 * k, dtype=np.int64)
    miss = xp.zeros(1, dtype=np.uint64)
    kern = _cuda.get_kernel("csr.cu", "gpumatch_csr_locate_pair", _ptr_ind_defines(p0, i0))
    kern((int(_cuda.grid_for(k)[0]), 2), (_cuda.BLOCK,),
         (p0, i0, np.int64(p0.shape[0] - 1), s0, v0, p1, i1, np.int64(p1.shape[0] - 1), s1, v1, np.int64(k), pos,
          np.int32(1 if present else 0), miss))
    return pos, int(miss.get()[0])


#: Largest batch :func:`locate_batch_pair` orders on the GPU by counting
#: ranks (O(k^2) compares); callers sort larger ones themselves.
RANK_BATCH = 1 << 14
_RANK_TILE = 256   # threads per block of gpumatch_batch_locate_pair: a warp per edge
_RANK_WARPS = _RANK_TILE // 32


def locate_batch_pair(patterns, rows, cols, shape, present):
    """Order a batch of edges both ways, check it and locate it in a graph's
    CSR and CSC: on the GPU one launch and one read-back in all.

    Parameters
    ----------
    patterns : ((indptr0, indices0), (indptr1, indices1))
        The ``m x n`` graph's sorted CSR and its sorted CSC (same dtypes).
    rows, cols : int64 arrays
        k edges, in any order.  On the GPU at most :data:`RANK_BATCH`.
    shape : (m, n)
    present : bool
        Whether the edges should be in the graph (a removal) or not (an
        insertion).

    Returns
    -------
    pos : int64 array
        2k positions as :func:`locate_entries_pair` returns them.
    segs, vals : int64 arrays
        2k each: the edges sorted by (row, col) as rows and columns, then
        sorted by (col, row) as columns and rows (the queries of
        :func:`locate_entries_pair` and the inserts of
        :func:`edit_entries_pair`).
    problems : tuple of three ints
        Edges with an index out of range, edges that appear more than once
        (each copy counted), edges that are not as `present` says.  When
        any count is nonzero the other outputs are meaningless (but the
        caller's arrays are untouched).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import locate_batch_pair
    >>> csr = (np.array([0, 2, 3]), np.array([0, 1, 1]))      # edges (0,0) (0,1) (1,1)
    >>> csc = (np.array([0, 1, 3]), np.array([0, 0, 1]))
    >>> # add (1, 0) and (0, 0); (0, 0) is already there
    >>> pos, segs, vals, problems = locate_batch_pair((csr, csc), np.array([1, 0]), np.array([0, 0]),
    ...                                               (2, 2), present=False)
    >>> segs.tolist(), vals.tolist(), problems
    ([0, 1, 0, 0], [0, 0, 0, 1], (0, 0, 1))
    """
    (p0, i0), (p1, i1) = patterns
    xp = array_module(p0, i0, p1, i1, rows, cols)
    m, n = (int(x) for x in shape)
    k = int(rows.shape[0])
    rows = rows.astype(np.int64, copy=False)
    cols = cols.astype(np.int64, copy=False)
    if xp is np:
        bad = (rows < 0) | (rows >= m) | (cols < 0) | (cols >= n)
        r, c = np.where(bad, 0, rows), np.where(bad, 0, cols)
        kr, kc = np.where(bad, -1, r * max(n, 1) + c), np.where(bad, -1, c * max(m, 1) + r)
        o_r, o_c = np.argsort(kr, kind="stable"), np.argsort(kc, kind="stable")
        ks = kr[o_r]
        first = np.ones(k, dtype=bool)
        first[1:] = ks[1:] != ks[:-1]
        last = np.ones(k, dtype=bool)
        last[:-1] = ks[1:] != ks[:-1]
        dup = int(((~first | ~last) & (ks >= 0)).sum())
        segs = np.concatenate([r[o_r], c[o_c]])
        vals = np.concatenate([c[o_r], r[o_c]])
        pos0, found = locate_entries(p0, i0, segs[:k], vals[:k])
        pos1, _ = locate_entries(p1, i1, segs[k:], vals[k:])
        miss = int(((found != present) & ~bad[o_r]).sum())
        return np.concatenate([pos0, pos1]), segs, vals, (int(bad.sum()), dup, miss)
    if k > RANK_BATCH:
        raise ValueError(f"locate_batch_pair: {k} edges, more than RANK_BATCH = {RANK_BATCH} on the GPU")
    from . import _cuda

    segs = xp.empty(2 * k, dtype=np.int64)
    vals = xp.empty(2 * k, dtype=np.int64)
    pos = xp.empty(2 * k, dtype=np.int64)
    problems = xp.zeros(3, dtype=np.uint64)
    if k:
        kern = _cuda.get_kernel("csr.cu", "gpumatch_batch_locate_pair", _ptr_ind_defines(p0, i0))
        # blocks of GM_RANK_TILE threads (the kernel's shared tiles), a warp per edge
        kern(_cuda.grid_for(k, _RANK_WARPS), (_RANK_TILE,),
             (rows, cols, np.int64(k), np.int64(m), np.int64(n), p0, i0, p1, i1, segs, vals, pos,
              np.int32(1 if present else 0), problems))
    return pos, segs, vals, tuple(int(x) for x in problems.get())


def edit_entries_pair(patterns, positions, segments=None, values=None):
    """Delete, or insert, k entries in each of two patterns at once (the
    CSR and CSC of a graph): :func:`delete_entries` / :func:`insert_entries`
    twice, on the GPU in two launches.

    Parameters
    ----------
    patterns : ((indptr0, indices0), (indptr1, indices1))
        Same dtypes, same number of entries.
    positions : int64 array
        2k positions (pattern 0's, then pattern 1's), as
        :func:`locate_entries_pair` returns them.
    segments, values : int64 arrays or None
        None: delete.  Otherwise 2k each: the sorted segments and the new
        indices of the inserted entries (pattern 0's, then pattern 1's).

    Returns
    -------
    ((new_indptr0, new_indices0), (new_indptr1, new_indices1))

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import edit_entries_pair
    >>> csr = (np.array([0, 2, 3]), np.array([0, 1, 1]))
    >>> csc = (np.array([0, 1, 3]), np.array([0, 0, 1]))
    >>> (a, b), (c, d) = edit_entries_pair((csr, csc), np.array([1, 1]))   # drop edge (0, 1)
    >>> a.tolist(), b.tolist(), c.tolist(), d.tolist()
    ([0, 1, 2], [0, 1], [0, 1, 2], [0, 1])
    """
    (p0, i0), (p1, i1) = patterns
    xp = array_module(p0, i0, p1, i1, positions)
    k = int(positions.shape[0]) // 2
    if xp is np or k == 0:
        if segments is None:
            return (delete_entries(p0, i0, positions[:k]), delete_entries(p1, i1, positions[k:]))
        return (insert_entries(p0, i0, positions[:k], segments[:k], values[:k]),
                insert_entries(p1, i1, positions[k:], segments[k:], values[k:]))
    from . import _cuda

    count = int(i0.shape[0])
    if int(i1.shape[0]) != count or p0.dtype != p1.dtype or i0.dtype != i1.dtype:
        raise ValueError("edit_entries_pair: the two patterns must have the same entries count and dtypes")
    defines = _ptr_ind_defines(p0, i0)
    out_p0, out_p1 = xp.empty_like(p0), xp.empty_like(p1)
    new_count = count - k if segments is None else count + k
    out_i0, out_i1 = xp.empty(new_count, dtype=i0.dtype), xp.empty(new_count, dtype=i1.dtype)
    n_ptr = max(int(p0.shape[0]), int(p1.shape[0]))
    _cuda.get_kernel("csr.cu", "gpumatch_csr_shift_ptr_pair", defines)(
        (_edit_grid(n_ptr)[0], 2), (_cuda.BLOCK,),
        (p0, np.int64(p0.shape[0]), p1, np.int64(p1.shape[0]), positions if segments is None else segments,
         np.int64(k), np.int32(1 if segments is None else 0), out_p0, out_p1))
    if count + k:
        _cuda.get_kernel("csr.cu", "gpumatch_csr_edit_scatter_pair", defines)(
            (_edit_grid(count + k)[0], 2), (_cuda.BLOCK,),
            (i0, i1, np.int64(count), positions, positions if segments is None else values, np.int64(k),
             np.int32(0 if segments is None else 1), out_i0, out_i1))
    return (out_p0, out_i0), (out_p1, out_i1)


def unmatch_pairs(mate_row, mate_col, rows, cols):
    """Unmatch, in place, the pairs ``(rows[i], cols[i])`` that are matched.

    `mate_row` (length m) and `mate_col` (length n) hold a consistent
    matching (-1 = free); the pairs must be distinct and in range.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import unmatch_pairs
    >>> mr, mc = np.array([1, 0]), np.array([1, 0])
    >>> unmatch_pairs(mr, mc, np.array([0, 1]), np.array([0, 0]))
    >>> mr.tolist(), mc.tolist()
    ([1, -1], [-1, 0])
    """
    xp = array_module(mate_row, mate_col, rows, cols)
    rows = rows.astype(np.int64, copy=False)
    cols = cols.astype(np.int64, copy=False)
    k = rows.shape[0]
    if k == 0:
        return
    if xp is np:
        hit = (mate_col[cols] == rows) & (mate_row[rows] == cols)
        mate_col[cols[hit]] = -1
        mate_row[rows[hit]] = -1
        return
    from . import _cuda

    kern = _cuda.get_kernel("csr.cu", "gpumatch_unmatch_pairs", _ptr_ind_defines(mate_row, mate_row))
    kern(_cuda.grid_for(k), (_cuda.BLOCK,), (rows, cols, np.int64(k), mate_row, mate_col))


def counting_transpose(indptr, indices, n_cols: int, *, sort_rows: bool = True):
    """Transpose a CSR pattern by counting (histogram, prefix sum, scatter).

    Cheaper than :func:`transpose` (no global sort, no permutation).  On
    the GPU the scatter claims the slots of a column by atomics, so the
    rows of a column come out in a schedule-dependent order; with
    `sort_rows` (the default) each column is then sorted on its own (a
    thread per column of at most 32 entries, a warp up to 1024, a block
    beyond: bitonic networks in place), which gives exactly the arrays of
    :func:`transpose`.  Without it **the rows of a column are in an
    unspecified order** (same sets, same pointers).  The NumPy path is a
    stable counting sort: rows ascending either way.

    Parameters
    ----------
    indptr, indices : array
        CSR pattern of an ``m × n_cols`` matrix (32- or 64-bit integers of
        one dtype, ``indptr[0] = 0``, ``indptr[m] = len(indices)``).
    n_cols : int
        Number of columns.
    sort_rows : bool
        Sort the rows of each column (GPU; always so on NumPy).

    Returns
    -------
    t_indptr, t_indices
        CSR pattern of the ``n_cols × m`` transpose, in the dtype of
        `indices`.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import counting_transpose
    >>> ti, tx = counting_transpose(np.array([0, 2, 3]), np.array([0, 2, 1]), 3)
    >>> ti.tolist(), tx.tolist()
    ([0, 1, 2, 3], [0, 1, 0])
    """
    xp = array_module(indptr, indices)
    nnz = int(indices.shape[0])
    m = int(indptr.shape[0]) - 1
    dt = indices.dtype
    t_indptr = xp.zeros(n_cols + 1, dtype=dt)
    if xp is np:
        if nnz:
            t_indptr[1:] = np.cumsum(np.bincount(indices, minlength=n_cols), dtype=dt)
            rows = np.repeat(np.arange(m, dtype=dt), np.diff(indptr))
            t_indices = rows[np.argsort(indices, kind="stable")]
        else:
            t_indices = indices[:0].copy()
        return t_indptr, t_indices
    t_indices = xp.empty(nnz, dtype=dt)
    if nnz == 0:
        return t_indptr, t_indices
    from . import _cuda

    indptr = indptr.astype(dt, copy=False)
    defines = (("IDX", _VALUE_TYPES[np.dtype(dt)]),)
    count = xp.zeros(max(n_cols, 1), dtype=dt)
    blocks = _grid_stride_blocks(nnz)
    _cuda.get_kernel("csr.cu", "gpumatch_count_columns", defines)(
        (blocks,), (_cuda.BLOCK,), (indices, count, np.int64(nnz)))
    xp.cumsum(count[:n_cols], dtype=dt, out=t_indptr[1:])
    _cuda.get_kernel("csr.cu", "gpumatch_transpose_scatter", defines)(
        (blocks,), (_cuda.BLOCK,), (indptr, indices, t_indptr, count, t_indices, np.int64(m), np.int64(nnz)))
    if sort_rows and n_cols:
        # `count` is all zeros again: reuse it as the list of longer columns
        counts = xp.zeros(2, dtype=np.uint64)
        _cuda.get_kernel("csr.cu", "gpumatch_sort_columns_light", defines)(
            (_grid_stride_blocks(n_cols),), (_cuda.BLOCK,), (t_indptr, t_indices, count, counts, np.int64(n_cols)))
        sms = _grid_stride_blocks(1 << 62) // 16
        _cuda.get_kernel("csr.cu", "gpumatch_sort_columns_medium", defines)(
            (sms * 8,), (_cuda.BLOCK,), (t_indptr, t_indices, count, counts))
        _cuda.get_kernel("csr.cu", "gpumatch_sort_columns_big", defines)(
            (sms * 2,), (1024,), (t_indptr, t_indices, count, counts, np.int64(n_cols)))
    return t_indptr, t_indices


def _grid_stride_blocks(count: int) -> int:
    """Blocks of a grid-stride kernel over `count` items: enough to fill the
    device (16 blocks of ``BLOCK`` threads per SM), no more than needed."""
    from . import _cuda

    sms = _SMS.get("n")
    if sms is None:
        sms = _SMS["n"] = int(_backend.cp.cuda.Device().attributes["MultiProcessorCount"])
    return max(1, min(sms * 16, (int(count) + _cuda.BLOCK - 1) // _cuda.BLOCK))


_SMS: dict = {}

"""Incremental edits of a canonical CSR pattern, on NumPy and CuPy alike.

The dynamic solvers keep a pattern and its transpose sorted and patch both
after each batch of added and removed entries instead of re-sorting or
re-transposing: each edit is one O(nnz) pass.  The public names are
re-exported by :mod:`gpumatch.csr`; the CUDA twins are in ``csr.cu``.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _backend, _cuda
from ._backend import array_module
from ._cuda import VALUE_TYPES as _VALUE_TYPES
from ._cuda import value_defines as _defines_for

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
    return _cuda.grid_for(count, _cuda.BLOCK * _EDIT_ITEMS)


def _shift_ptr(indptr, keys, by_position):
    """CUDA: the row pointers after deleting the sorted positions `keys`
    (`by_position`) or inserting entries into the sorted rows `keys`."""
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
    rows, cols = as_int64(rows), as_int64(cols)
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


def as_int64(a):
    """`a` (int64 ids) as int64 without a copy, or a widened copy; CuPy int32
    goes through ``gpumatch_widen_index`` (a pre-built kernel: CuPy's
    ``astype`` compiles one on a machine's first use)."""
    if np.dtype(a.dtype) == np.int64:
        return a
    if _backend.is_cupy_array(a) and np.dtype(a.dtype) == np.int32 and a.flags.c_contiguous:
        out = _backend.cp.empty(a.shape[0], dtype=np.int64)
        if a.shape[0]:
            _cuda.get_kernel("csr.cu", "gpumatch_widen_index", _BATCH_DEFINES)(
                _cuda.grid_for(a.shape[0]), (_cuda.BLOCK,), (a, out, np.int64(a.shape[0])))
        return out
    return a.astype(np.int64)


#: The ``csr.cu`` specialisation of the batch kernels (their arrays are
#: int64 whatever the graph's widths): one of the pre-built ones.
_BATCH_DEFINES = (("PTR_T", "int"), ("IND_T", "int"))


def sort_batch_pair(rows, cols, shape):
    """A batch of edges in row-major and in column-major order, checked: the
    ordering step of a batch larger than :data:`RANK_BATCH` (on the GPU two
    launches around two sorts, and one read-back).

    Parameters
    ----------
    rows, cols : int arrays
        k edges, in any order.
    shape : (m, n)

    Returns
    -------
    segs, vals : int64 arrays
        2k each, as :func:`locate_batch_pair` returns them.
    problems : tuple of two ints
        Edges with an index out of range, and repeated edges (each repeat
        after the first counted once); when either is nonzero `segs` and
        `vals` are meaningless.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import sort_batch_pair
    >>> segs, vals, problems = sort_batch_pair(np.array([1, 0, 0]), np.array([0, 1, 0]), (2, 2))
    >>> segs.tolist(), vals.tolist(), problems
    ([0, 0, 1, 0, 0, 1], [0, 1, 0, 0, 1, 0], (0, 0))
    """
    xp = array_module(rows, cols)
    m, n = (int(x) for x in shape)
    k = int(rows.shape[0])
    rows, cols = as_int64(rows), as_int64(cols)
    wn, wm = max(n, 1), max(m, 1)
    if xp is np:
        bad = (rows < 0) | (rows >= m) | (cols < 0) | (cols >= n)
        ks = np.sort(np.where(bad, -1, rows * wn + cols))
        kc = np.sort(np.where(bad, -1, cols * wm + rows))
        dup = int(((ks[1:] == ks[:-1]) & (ks[1:] >= 0)).sum()) if k > 1 else 0
        segs = np.concatenate([ks // wn, kc // wm])
        vals = np.concatenate([ks % wn, kc % wm])
        return segs, vals, (int(bad.sum()), dup)
    key_r = xp.empty(k, dtype=np.int64)
    key_c = xp.empty(k, dtype=np.int64)
    segs = xp.empty(2 * k, dtype=np.int64)
    vals = xp.empty(2 * k, dtype=np.int64)
    problems = xp.zeros(3, dtype=np.uint64)
    if k:
        grid = _cuda.grid_for(k)
        _cuda.get_kernel("csr.cu", "gpumatch_batch_keys", _BATCH_DEFINES)(
            grid, (_cuda.BLOCK,), (rows, cols, np.int64(k), np.int64(m), np.int64(n), key_r, key_c, problems))
        key_r.sort()   # (CuPy's sort: Thrust, compiled with CuPy)
        key_c.sort()
        _cuda.get_kernel("csr.cu", "gpumatch_batch_split", _BATCH_DEFINES)(
            grid, (_cuda.BLOCK,), (key_r, key_c, np.int64(k), np.int64(m), np.int64(n), segs, vals, problems))
    bad, dup, _ = (int(x) for x in problems.get())
    return segs, vals, (bad, dup)


@functools.lru_cache(maxsize=None)
def warm_sort():
    """Start CuPy's sort (Thrust) once per process, on a two-entry array: its
    first call takes 20-30 ms (its start-up; nothing is compiled), which a
    dynamic solver would otherwise pay inside its first batch past
    :data:`RANK_BATCH`.  A no-op without CuPy or after the first call."""
    if _backend.cp is not None:
        _backend.cp.zeros(2, dtype=np.int64).sort()


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


def _pairs(mate_row, mate_col, rows, cols):
    """``(xp, rows, cols, k)``: the array module and the pairs as int64."""
    xp = array_module(mate_row, mate_col, rows, cols)
    rows = rows.astype(np.int64, copy=False)
    return xp, rows, cols.astype(np.int64, copy=False), int(rows.shape[0])


def unmatch_pairs(mate_row, mate_col, rows, cols, count=None):
    """Unmatch, in place, the pairs ``(rows[i], cols[i])`` that are matched.

    `mate_row` (length m) and `mate_col` (length n) hold a consistent
    matching (-1 = free); the pairs must be distinct and in range.  When
    `count` (a one-entry uint64 array of the same kind) is given, the
    number of pairs unmatched is added to it (on the GPU without a host
    read).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import unmatch_pairs
    >>> mr, mc = np.array([1, 0]), np.array([1, 0])
    >>> count = np.zeros(1, dtype=np.uint64)
    >>> unmatch_pairs(mr, mc, np.array([0, 1]), np.array([0, 0]), count)
    >>> mr.tolist(), mc.tolist(), int(count[0])
    ([1, -1], [-1, 0], 1)
    """
    xp, rows, cols, k = _pairs(mate_row, mate_col, rows, cols)
    if k == 0:
        return
    if xp is np:
        hit = (mate_col[cols] == rows) & (mate_row[rows] == cols)
        mate_col[cols[hit]] = -1
        mate_row[rows[hit]] = -1
        if count is not None:
            count[0] += np.uint64(np.count_nonzero(hit))
        return
    if count is None:
        count = xp.zeros(1, dtype=np.uint64)
    kern = _cuda.get_kernel("csr.cu", "gpumatch_unmatch_pairs", _ptr_ind_defines(mate_row, mate_row))
    kern(_cuda.grid_for(k), (_cuda.BLOCK,), (rows, cols, np.int64(k), mate_row, mate_col, count))


def count_free_ends(mate_row, mate_col, rows, cols, count):
    """Add to `count` (a one-entry uint64 array) the number of pairs
    ``(rows[i], cols[i])`` with a free end in the matching `mate_row` /
    `mate_col` (-1 = free): an edge added there may lengthen it.  On the GPU
    without a host read.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.csr import count_free_ends
    >>> count = np.zeros(1, dtype=np.uint64)
    >>> count_free_ends(np.array([0, -1]), np.array([0, -1]), np.array([0, 1]), np.array([0, 1]), count)
    >>> int(count[0])   # (1, 1) has free ends, (0, 0) none
    1
    """
    xp, rows, cols, k = _pairs(mate_row, mate_col, rows, cols)
    if k == 0:
        return
    if xp is np:
        count[0] += np.uint64(np.count_nonzero((mate_row[rows] < 0) | (mate_col[cols] < 0)))
        return
    kern = _cuda.get_kernel("csr.cu", "gpumatch_count_free_ends", _ptr_ind_defines(mate_row, mate_row))
    kern(_cuda.grid_for(k), (_cuda.BLOCK,), (rows, cols, np.int64(k), mate_row, mate_col, count))

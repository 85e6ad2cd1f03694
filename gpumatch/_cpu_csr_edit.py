"""Compiled twins of the NumPy paths of :mod:`gpumatch._csr_edit`, for the
``"numba"`` backend: a dynamic solver's batch located in its sorted CSR and
CSC, and both patterns edited, each step one compiled pass.

The NumPy paths take many vectorised passes over the batch and the pattern
(a binary search one round per level over the whole batch, stable argsorts,
masks over every entry); on a 2-core CPU, removing 10 % of the edges of a
random 1M x 1M graph of degree 5 (500k edges) took 0.56 s there, about as
long as a solve from scratch.  Same arguments and results as
:func:`gpumatch._csr_edit.locate_batch_pair` and
:func:`gpumatch._csr_edit.edit_entries_pair` on NumPy arrays.

The module imports Numba: only the ``"numba"`` backend imports it.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _csr_edit

__all__ = ["locate_batch_pair", "edit_entries_pair"]


@numba.njit(cache=True, nogil=True)
def _locate(indptr, indices, segs, vals, pos, found):
    """For each query ``(segs[i], vals[i])``: the first position of its
    segment whose index is ``>= vals[i]`` (the insertion point), and
    whether the entry is there; a segment out of range gives 0, False."""
    nseg = indptr.shape[0] - 1
    for i in range(segs.shape[0]):
        s = segs[i]
        if s < 0 or s >= nseg:
            pos[i] = 0
            found[i] = False
            continue
        lo = indptr[s]
        end = indptr[s + 1]
        hi = end
        v = vals[i]
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        pos[i] = lo
        found[i] = lo < end and indices[lo] == v


@numba.njit(cache=True, nogil=True)
def _repeats(keys):
    """Entries of the sorted `keys` (>= 0) whose key appears more than once
    (each copy counted)."""
    k = keys.shape[0]
    dup = 0
    for i in range(k):
        if keys[i] < 0:
            continue
        if (i > 0 and keys[i - 1] == keys[i]) or (i + 1 < k and keys[i + 1] == keys[i]):
            dup += 1
    return dup


def locate_batch_pair(patterns, rows, cols, shape, present):
    """:func:`gpumatch._csr_edit.locate_batch_pair` on NumPy arrays, compiled.

    Parameters and results as there; when a problem count is nonzero the
    other outputs are meaningless (an edge out of range gets segment -1
    here, as in :func:`gpumatch._csr_edit.sort_batch_pair`, and 0 there).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._cpu_csr_edit import locate_batch_pair
    >>> csr = (np.array([0, 2, 3]), np.array([0, 1, 1]))      # edges (0,0) (0,1) (1,1)
    >>> csc = (np.array([0, 1, 3]), np.array([0, 0, 1]))
    >>> pos, segs, vals, problems = locate_batch_pair((csr, csc), np.array([1, 0]), np.array([0, 0]),
    ...                                               (2, 2), present=False)
    >>> segs.tolist(), vals.tolist(), problems
    ([0, 1, 0, 0], [0, 0, 0, 1], (0, 0, 1))
    """
    (p0, i0), (p1, i1) = patterns
    # the batch ordered both ways and its out-of-range edges counted by the
    # NumPy path of sort_batch_pair (an edge out of range: segment -1)
    segs, vals, (nbad, _) = _csr_edit.sort_batch_pair(np.asarray(rows), np.asarray(cols), shape)
    k = segs.shape[0] // 2
    keys = segs[:k] * max(int(shape[1]), 1) + vals[:k]    # row-major keys again, -1 out of range
    pos = np.empty(2 * k, np.int64)
    found = np.empty(2 * k, np.bool_)
    _locate(p0, i0, segs[:k], vals[:k], pos[:k], found[:k])
    _locate(p1, i1, segs[k:], vals[k:], pos[k:], found[k:])
    miss = int(np.count_nonzero((found[:k] != bool(present)) & (keys >= 0)))
    return pos, segs, vals, (nbad, int(_repeats(keys)), miss)


@numba.njit(cache=True, nogil=True)
def _shifted_ptr(indptr, keys, by_position, sign):
    """``indptr[i] + sign * (number of keys below the bound)``, the bound
    being ``indptr[i]`` (`by_position`: keys are entry positions) or ``i``
    (keys are segments); `keys` non-decreasing (the ``_shift_ptr`` of
    :mod:`gpumatch._csr_edit` in one merge pass)."""
    nptr = indptr.shape[0]
    k = keys.shape[0]
    new_indptr = np.empty(nptr, indptr.dtype)
    j = 0
    for i in range(nptr):
        bound = indptr[i] if by_position else i
        while j < k and keys[j] < bound:
            j += 1
        new_indptr[i] = indptr[i] + sign * j
    return new_indptr


@numba.njit(cache=True, nogil=True)
def _delete(indptr, indices, positions):
    """The pattern without the entries at the strictly increasing `positions`."""
    k = positions.shape[0]
    count = indices.shape[0]
    new_indptr = _shifted_ptr(indptr, positions, True, -1)   # entries removed before each segment start
    out = np.empty(count - k, indices.dtype)
    w = 0
    p = 0
    for j in range(k + 1):            # the runs between removed positions
        stop = positions[j] if j < k else count
        while p < stop:
            out[w] = indices[p]
            w += 1
            p += 1
        p += 1
    return new_indptr, out


@numba.njit(cache=True, nogil=True)
def _insert(indptr, indices, positions, segments, values):
    """The pattern with ``values[j]`` inserted just before old position
    ``positions[j]`` (non-decreasing; `segments` non-decreasing)."""
    k = positions.shape[0]
    count = indices.shape[0]
    new_indptr = _shifted_ptr(indptr, segments, False, 1)    # entries inserted in segments before i
    out = np.empty(count + k, indices.dtype)
    w = 0
    j = 0
    for p in range(count + 1):
        while j < k and positions[j] == p:
            out[w] = values[j]
            w += 1
            j += 1
        if p < count:
            out[w] = indices[p]
            w += 1
    return new_indptr, out


def edit_entries_pair(patterns, positions, segments=None, values=None):
    """:func:`gpumatch._csr_edit.edit_entries_pair` on NumPy arrays, compiled
    (same arguments and results).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._cpu_csr_edit import edit_entries_pair, locate_batch_pair
    >>> csr = (np.array([0, 1, 2]), np.array([0, 1]))          # edges (0, 0) and (1, 1)
    >>> csc = (np.array([0, 1, 2]), np.array([0, 1]))
    >>> pos, segs, vals, _ = locate_batch_pair((csr, csc), np.array([1]), np.array([0]), (2, 2), False)
    >>> (a, b), (c, d) = edit_entries_pair((csr, csc), pos, segs, vals)   # add edge (1, 0)
    >>> a.tolist(), b.tolist(), c.tolist(), d.tolist()
    ([0, 1, 3], [0, 0, 1], [0, 2, 3], [0, 1, 1])
    """
    (p0, i0), (p1, i1) = patterns
    positions = positions.astype(np.int64, copy=False)
    k = int(positions.shape[0]) // 2
    if segments is None:
        return _delete(p0, i0, positions[:k]), _delete(p1, i1, positions[k:])
    segments = segments.astype(np.int64, copy=False)
    v0 = values[:k].astype(i0.dtype)
    v1 = values[k:].astype(i1.dtype)
    return (_insert(p0, i0, positions[:k], segments[:k], v0), _insert(p1, i1, positions[k:], segments[k:], v1))

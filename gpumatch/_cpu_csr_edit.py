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

The batch is ordered by one compiled pass of keys, NumPy's sorts and a
split without divisions (:func:`_sorted_pair`); the CSR's steps and
the CSC's are independent, and on a pattern of at least
:data:`PAIR_THREADS_MIN` entries they run at once on two threads
(:func:`gpumatch._cpu_threads.run_slices`; the compiled steps and NumPy's
sort release the GIL).  2-core CPU, 500k edges added to random 1M x 1M d5
(5M entries): ``add_edges`` 118 -> 81 ms; 4M keys ordered both ways:
0.29-0.40 -> 0.12-0.16 s.

The module imports Numba: only the ``"numba"`` backend imports it.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _cpu_threads

__all__ = ["locate_batch_pair", "edit_entries_pair", "PAIR_THREADS_MIN"]

#: Entries (CSR and CSC together) from which the two patterns' steps run on
#: two threads at once (where Numba has two); below, one after the other (a
#: round of the threads costs about 50 us).
PAIR_THREADS_MIN = 1 << 20


def _pair_slice(k, nt, fn, args, out):
    """Slice ``k`` of :func:`_both`: ``fn`` on the ``k``-th pattern's arguments."""
    out[k] = fn(*args[k])


def _both(fn, args0, args1, work, minimum=PAIR_THREADS_MIN):
    """``(fn(*args0), fn(*args1))``: the CSR's and the CSC's step (or the
    batch's two orders), on two threads when `work` reaches `minimum`."""
    out = [None, None]
    threads = 2 if work >= minimum and numba.get_num_threads() >= 2 else 1
    _cpu_threads.run_slices(2, _pair_slice, fn, (args0, args1), out, threads=threads)
    return out[0], out[1]


@numba.njit(cache=True, nogil=True)
def _locate(indptr, indices, segs, vals, pos, present):
    """For each query ``(segs[i], vals[i])``: the first position of its
    segment whose index is ``>= vals[i]`` (the insertion point; 0 for a
    segment out of range); returns the number of queries in range whose
    entry is there (`present` False) or is not (`present` True).  The
    queries come in ascending order, so a query of the segment of the one
    before searches from that one's position on: a step at a time over at
    most 16 entries, else by halves."""
    nseg = indptr.shape[0] - 1
    prev = -1
    at = 0
    miss = 0
    for i in range(segs.shape[0]):
        s = segs[i]
        if s < 0 or s >= nseg:
            pos[i] = 0
            continue
        end = indptr[s + 1]
        lo = at if s == prev else indptr[s]
        hi = end
        v = vals[i]
        if hi - lo <= 16:
            while lo < hi and indices[lo] < v:
                lo += 1
            hi = lo
        while lo < hi:
            mid = (lo + hi) >> 1
            if indices[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        pos[i] = lo
        if (lo < end and indices[lo] == v) != present:
            miss += 1
        prev = s
        at = lo
    return miss


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


@numba.njit(cache=True, nogil=True)
def _batch_keys(rows, cols, m, n, key_r, key_c):
    """Row-major and column-major keys of the batch (-1 for an edge out of
    range); returns the number of such edges."""
    wn = max(n, 1)
    wm = max(m, 1)
    bad = 0
    for i in range(rows.shape[0]):
        r = rows[i]
        c = cols[i]
        if r < 0 or r >= m or c < 0 or c >= n:
            key_r[i] = -1
            key_c[i] = -1
            bad += 1
        else:
            key_r[i] = r * wn + c
            key_c[i] = c * wm + r
    return bad


@numba.njit(cache=True, nogil=True)
def _split(keys, w, segs, vals):
    """``segs, vals = keys // w, keys % w`` for the sorted `keys` (floor
    division: a key of -1 gives segment -1; `segs` may be `keys`), without
    a division: the segment only grows (a 64-bit division costs about 40
    cycles; 2-core CPU, 4M keys: 95 -> 12 ms)."""
    q = -1
    base = -w           # q * w
    for i in range(keys.shape[0]):
        key = keys[i]
        while key >= base + w:
            q += 1
            base += w
        segs[i] = q
        vals[i] = key - base


def _sorted_pair(rows, cols, shape):
    """The batch in row-major and in column-major order, as the NumPy path
    of :func:`gpumatch._csr_edit.sort_batch_pair` gives it, compiled, its
    two sorts (NumPy's, which release the GIL) on two threads:
    ``(segs, vals, bad, dup)``, the out-of-range edges and the repeated
    ones (:func:`_repeats`).  The keys are split in place (on a 2-core VM
    the first touch of fresh memory costs about as much as the passes
    themselves: 20-70 ms per 64 MB).  2-core CPU, 4M edges: 0.12-0.16 s,
    0.29-0.40 s by the NumPy path.

    Examples
    --------
    >>> import numpy as np
    >>> segs, vals, bad, dup = _sorted_pair(np.array([1, 0, 0]), np.array([0, 1, 0]), (2, 2))
    >>> segs.tolist(), vals.tolist(), bad, dup
    ([0, 0, 1, 0, 0, 1], [0, 1, 0, 0, 1, 0], 0, 0)
    """
    m, n = (int(x) for x in shape)
    k = int(rows.shape[0])
    keys = np.empty((2, k), np.int64)
    bad = int(_batch_keys(rows, cols, m, n, keys[0], keys[1]))
    _both(np.ndarray.sort, (keys[0],), (keys[1],), k, PAIR_THREADS_MIN // 8)
    dup = int(_repeats(keys[0]))
    segs = keys.reshape(2 * k)
    vals = np.empty(2 * k, np.int64)
    _split(segs[:k], max(n, 1), segs[:k], vals[:k])
    _split(segs[k:], max(m, 1), segs[k:], vals[k:])
    return segs, vals, bad, dup


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
    segs, vals, nbad, dup = _sorted_pair(np.asarray(rows), np.asarray(cols), shape)
    k = segs.shape[0] // 2
    pos = np.empty(2 * k, np.int64)
    present = bool(present)
    miss, _ = _both(_locate, (p0, i0, segs[:k], vals[:k], pos[:k], present),
                    (p1, i1, segs[k:], vals[k:], pos[k:], present), 2 * int(i0.shape[0]))
    return pos, segs, vals, (nbad, dup, int(miss))


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
    entries = 2 * int(i0.shape[0])
    if segments is None:
        return _both(_delete, (p0, i0, positions[:k]), (p1, i1, positions[k:]), entries)
    segments = segments.astype(np.int64, copy=False)
    v0 = values[:k].astype(i0.dtype)
    v1 = values[k:].astype(i1.dtype)
    return _both(_insert, (p0, i0, positions[:k], segments[:k], v0), (p1, i1, positions[k:], segments[k:], v1),
                 entries)

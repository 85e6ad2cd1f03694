"""Compiled CSR helpers of the ``"numba"`` backend.

:func:`pattern_summary` is :func:`gpumatch.csr.pattern_summary` (what the
input validation checks) in three compiled loops instead of about eight
NumPy passes with their temporaries: random 1M x 1M d5 on a 2-core CPU, 2 ms against
5.5 ms (Delaunay 1M: 2.6 against 5.9 ms).

:func:`transpose` builds the CSC (rows of each column, ascending) that the
CPU engines search from, in place of scipy's ``tocsc`` (which also moves a
value array): a counting sort, split between threads when there are
enough of them (:data:`TUNING`; Python threads running compiled slices,
:mod:`gpumatch._cpu_threads`, not Numba's ``parallel=True``).  Random 1M
x 1M d5 (5M edges) on a 2-core CPU: 28 ms serial against 42 ms for
scipy's ``tocsc`` (Delaunay 1M: 34 against 52 ms).

The module imports Numba: only the ``"numba"`` backend imports it.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _cpu_threads
from . import csr as _csr

__all__ = ["TUNING", "pattern_summary", "column_counts", "transpose", "transpose_counted", "transpose_serial",
           "transpose_parallel"]

#: ``transpose_min_threads``: :func:`transpose` splits the work between
#: ``numba.get_num_threads()`` threads when there are at least this many
#: (each thread keeps a count per column, so it also uses at most
#: ``nnz // n`` threads: the counts take no more memory than the CSC's
#: indices).  On 2 threads the parallel version about ties with the serial
#: one (random 1M d5 on a 2-core CPU, median of 9: 24 ms against 27 ms, 36
#: ms on one thread; Delaunay 1M 32.5 against 33 ms): it makes four rounds
#: of the threads and three passes over ``threads x n`` counts where the
#: serial one makes one pass over ``n``.
TUNING: dict = {"transpose_min_threads": 4}


#: Index dtypes that :func:`pattern_summary` compiles for (others go to NumPy).
_SUMMARY_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


@numba.njit(cache=True, nogil=True)
def _summary(indptr, indices):
    """One pass of :func:`pattern_summary`: ``(decreasing, out_of_range,
    read, lo, hi, canonical)``, `read` telling whether any index was read
    (`lo` / `hi` are meaningless otherwise).

    The loops index views from 0 (``starts[r]``, ``cur[i]`` and ``prev[i]``
    rather than ``indptr[r + 1]`` or ``indices[p - 1]``): an index that may
    be negative makes Numba add a wrap-around test that keeps LLVM from
    vectorising the loop (5 ms instead of 0.3 ms over 5M indices).
    """
    m = indptr.shape[0] - 1
    nnz = indices.shape[0]
    starts = indptr[:m]
    ends = indptr[1:]
    ndec = 0
    noor = 0
    for r in range(m):                    # (branch-free: it vectorises)
        a = starts[r]
        b = ends[r]
        ndec += b < a
        noor += (b >= a) & ((a < 0) | (b > nnz))
    dec = ndec > 0
    oor = noor > 0
    read = False
    lo = 0
    hi = 0
    canonical = True
    if not dec and not oor and nnz > 0 and m > 0:
        a0 = indptr[0]                    # rows are contiguous: they read indices[a0:b0]
        b0 = indptr[m]
        if b0 > a0:
            read = True
            lo = indices[a0]
            hi = lo
            cur = indices[a0 + 1:b0]
            prev = indices[a0:b0 - 1]
            desc = 0                      # descents over the whole span ...
            for i in range(cur.shape[0]):
                v = cur[i]
                lo = min(lo, v)
                hi = max(hi, v)
                desc += prev[i] >= v
            for r in range(m - 1):        # ... less those where a row starts (at ends[r] = starts[r + 1])
                q = ends[r]
                if starts[r] < q < b0:
                    desc -= indices[q - 1] >= indices[q]
            canonical = desc == 0
    elif nnz > 0:
        canonical = False                 # malformed pointers: the index range is not needed
    return dec, oor, read, lo, hi, canonical


def pattern_summary(indptr, indices):
    """:func:`gpumatch.csr.pattern_summary` of NumPy CSR arrays, compiled
    (the same :class:`~gpumatch.csr.PatternSummary`); dtypes other than
    int32 / int64, and an empty `indptr`, go to the NumPy version.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._cpu_csr import pattern_summary
    >>> pattern_summary(np.array([0, 2, 3]), np.array([4, 1, 2]))
    PatternSummary(first=0, last=3, decreasing=False, out_of_range=False, min_index=1, max_index=4, canonical=False)
    """
    if indptr.dtype not in _SUMMARY_DTYPES or indices.dtype not in _SUMMARY_DTYPES or indptr.shape[0] == 0:
        return _csr.pattern_summary(indptr, indices)
    dec, oor, read, lo, hi, canonical = _summary(indptr, indices)
    return _csr.PatternSummary(int(indptr[0]), int(indptr[-1]), bool(dec), bool(oor), int(lo) if read else None,
                               int(hi) if read else None, bool(canonical))


@numba.njit(cache=True, nogil=True)
def column_counts(m, n, rptr, rind):
    """``cnt`` of length ``n + 1`` in `rptr`'s dtype: ``cnt[c + 1]`` is the
    number of entries of column ``c`` (``cnt[0] = 0``), the first pass of
    :func:`transpose_serial` (a caller that needs the degrees first hands
    them on to :func:`transpose`)."""
    cnt = np.zeros(n + 1, rptr.dtype)
    for p in range(rptr[m]):
        cnt[rind[p] + 1] += 1
    return cnt


@numba.njit(cache=True, nogil=True)
def transpose_counted(m, n, rptr, rind, cnt):
    """:func:`transpose_serial` from the :func:`column_counts` `cnt`, which
    becomes the CSC's pointers (in place)."""
    nnz = rptr[m]
    cptr = cnt
    for c in range(n):
        cptr[c + 1] += cptr[c]
    pos = cptr[:n].copy()                 # next free slot of each column
    cind = np.empty(nnz, rind.dtype)
    for r in range(m):
        for p in range(rptr[r], rptr[r + 1]):
            c = rind[p]
            cind[pos[c]] = r
            pos[c] += 1
    return cptr, cind


@numba.njit(cache=True, nogil=True)
def transpose_serial(m, n, rptr, rind):
    """CSC ``(cptr, cind)`` of the CSR pattern ``(rptr, rind)`` of an
    ``m x n`` matrix, the rows of each column ascending (one counting sort).
    Both come back in `rptr`'s / `rind`'s dtypes."""
    return transpose_counted(m, n, rptr, rind, column_counts(m, n, rptr, rind))


@numba.njit(cache=True, nogil=True)
def _tr_count(k, nt, n, rptr, rind, bounds, cnt):
    """Round 1, slice `k` of `nt`: the edges of row block `k` per column, in
    ``cnt[k * n:(k + 1) * n]``."""
    base = k * n
    for c in range(n):
        cnt[base + c] = 0
    for p in range(rptr[bounds[k]], rptr[bounds[k + 1]]):
        cnt[base + rind[p]] += 1


@numba.njit(cache=True, nogil=True)
def _tr_offsets(k, nt, n, cnt, cptr, part):
    """Round 2, column slice `k`: per column, each block's offset within
    it (the blocks one after the other) and the column's end, counted from
    the slice's start; the slice's edges to ``part[k + 1]``."""
    s = 0
    for c in range(n * k // nt, n * (k + 1) // nt):
        for j in range(nt):
            t = cnt[j * n + c]
            cnt[j * n + c] = s
            s += t
        cptr[c + 1] = s
    part[k + 1] = s


@numba.njit(cache=True, nogil=True)
def _tr_shift(k, nt, n, cnt, cptr, part):
    """Round 3, column slice `k`: add the slice's start (``part[k]``, the
    edges of the slices before it) to its columns' ends and offsets."""
    off = part[k]
    for c in range(n * k // nt, n * (k + 1) // nt):
        cptr[c + 1] += off
        for j in range(nt):
            cnt[j * n + c] += off


@numba.njit(cache=True, nogil=True)
def _tr_scatter(k, nt, n, rptr, rind, bounds, cnt, cind):
    """Round 4, row block `k`: its edges to their slots (``cnt[k * n + c]``:
    the block's next slot in column ``c``)."""
    base = k * n
    for r in range(bounds[k], bounds[k + 1]):
        for p in range(rptr[r], rptr[r + 1]):
            c = rind[p]
            q = cnt[base + c]
            cind[q] = r
            cnt[base + c] = q + 1


def transpose_parallel(m, n, rptr, rind, nt):
    """:func:`transpose_serial` in `nt` slices, on ``min(nt,
    numba.get_num_threads())`` threads (:func:`gpumatch._cpu_threads.run_slices`).

    Four rounds of the threads.  Block k of the rows (blocks of about
    ``nnz / nt`` edges) counts its edges per column in its own row of
    ``cnt`` (``nt x n``); two rounds over column slices turn the counts
    into each block's first slot in each column (the blocks one after the
    other, so the rows of a column stay ascending); block k then writes its
    edges there.  No two threads write one slot, so there is no race.
    """
    nt = max(1, int(nt))
    threads = min(nt, int(numba.get_num_threads()))
    nnz = int(rptr[m])
    bounds = np.searchsorted(rptr[: m + 1], nnz * np.arange(nt + 1, dtype=np.int64) // nt)  # blocks of rows
    bounds[0] = 0
    bounds[nt] = m
    cnt = np.empty(nt * n, rptr.dtype)     # cnt[k * n + c]: block k's edges, then slots, of column c
    cptr = np.empty(n + 1, rptr.dtype)
    cptr[0] = 0
    part = np.zeros(nt + 1, np.int64)     # edges of each column slice, then where it starts
    cind = np.empty(nnz, rind.dtype)
    _cpu_threads.run_slices(nt, _tr_count, n, rptr, rind, bounds, cnt, threads=threads)
    _cpu_threads.run_slices(nt, _tr_offsets, n, cnt, cptr, part, threads=threads)
    np.cumsum(part, out=part)
    _cpu_threads.run_slices(nt, _tr_shift, n, cnt, cptr, part, threads=threads)
    _cpu_threads.run_slices(nt, _tr_scatter, n, rptr, rind, bounds, cnt, cind, threads=threads)
    return cptr, cind


def transpose(m, n, rptr, rind, counts=None):
    """CSC ``(cptr, cind)`` of an ``m x n`` CSR pattern, rows of each column
    ascending, in the dtypes of `rptr` / `rind` (NumPy arrays, the same
    dtype).  Parallel (:func:`transpose_parallel`) with at least
    ``TUNING["transpose_min_threads"]`` Numba threads, else serial (from
    `counts`, the :func:`column_counts` of the pattern, when given: it
    becomes the pointers).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._cpu_csr import transpose
    >>> cptr, cind = transpose(2, 3, np.array([0, 2, 3]), np.array([0, 2, 1]))
    >>> cptr.tolist(), cind.tolist()
    ([0, 1, 2, 3], [0, 1, 0])
    """
    nnz = int(rind.shape[0])
    nt = min(int(numba.get_num_threads()), nnz // max(n, 1))
    if nt >= max(2, int(TUNING["transpose_min_threads"])):
        return transpose_parallel(m, n, rptr, rind, nt)
    if counts is not None:
        return transpose_counted(m, n, rptr, rind, counts)
    return transpose_serial(m, n, rptr, rind)

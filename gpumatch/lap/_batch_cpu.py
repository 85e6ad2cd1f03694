"""Many dense assignment problems of one shape in one call (Numba, threads).

:func:`solve_stack` solves every ``costs[t]`` of a ``(k, m, n)`` stack with
the dense engine of :func:`gpumatch.lap._cpu.solve_dense` (shortest
augmenting paths after Jonker and Volgenant), one problem after another on
each thread.  The problems are independent, so the stack is cut into
``nt`` slices (problem ``t`` goes to slice ``t % nt``) that
:func:`gpumatch._cpu_threads.run_slices` runs at once on Python threads;
the compiled slice releases the GIL.  (Numba's ``parallel=True`` /
``prange`` would do the same split; the package keeps to its own threads,
see :mod:`gpumatch._cpu_threads` for why.)

Each problem is copied into a per-problem matrix in minimisation form (the
transpose when ``m > n``, negated for ``maximize``), which the engine
reads row by row; the caller's stack is only read.  The copy also checks
the entries, so a bad problem is reported by its index without a separate
pass over the stack: ``status[t]`` is :data:`OK`, :data:`INFEASIBLE` (no
assignment of finite cost), :data:`INVALID` (NaN, or the infinity that
cannot be a forbidden pair) or :data:`TOO_LARGE` (integer costs past the
exact int64 range of the engine, as for a single problem).
"""

from __future__ import annotations

import numba
import numpy as np

from .. import _cpu_threads
from . import _cpu

__all__ = ["solve_stack", "OK", "INFEASIBLE", "INVALID", "TOO_LARGE", "PARALLEL_MIN_WORK"]

OK, INFEASIBLE, INVALID, TOO_LARGE = 0, 1, 2, 3

#: Least ``k * m * n`` (entries of the stack) handed to more than one
#: thread: a round of the threads costs some tens of microseconds
#: (:func:`gpumatch._cpu_threads.round_cost`), about what one thread takes
#: for a few thousand entries.
PARALLEL_MIN_WORK = 1 << 14


@numba.njit(cache=True, nogil=True)
def _solve_one(C, t, m, n, maximize, transposed, limit, full_ptr, full_idx, row_out, col_out):
    """Solve ``C[t]`` (engine shape ``m <= n``); write its pairs; return its status."""
    D = np.empty((m, n), dtype=C.dtype)
    forbidden = 0
    is_float = C.dtype.kind == "f"
    for i in range(m):
        for j in range(n):
            a = C[t, j, i] if transposed else C[t, i, j]
            if not is_float and (a > limit or a < -limit):
                return TOO_LARGE
            if maximize:
                a = -a
            if is_float:
                if a != a or a == -np.inf:
                    return INVALID
                if a == np.inf:
                    forbidden += 1
            D[i, j] = a
    if m == 0:
        return OK
    if forbidden == 0:
        indptr = full_ptr
        indices = full_idx
        cost = D.reshape(m * n)
    else:   # the CSR view of the allowed pairs, for the row reduction
        indptr = np.zeros(m + 1, dtype=np.int64)
        indices = np.empty(m * n - forbidden, dtype=full_idx.dtype)
        cost = np.empty(m * n - forbidden, dtype=C.dtype)
        p = 0
        for i in range(m):
            for j in range(n):
                if D[i, j] < np.inf:
                    indices[p] = j
                    cost[p] = D[i, j]
                    p += 1
            indptr[i + 1] = p
    x = np.full(m, -1, dtype=np.int64)
    y = np.full(n, -1, dtype=np.int64)
    v = np.zeros(n, dtype=C.dtype)
    if m == n:      # start prices of a square problem, as a single solve's
        _cpu.dense_column_minima(D, v)
    if _cpu.solve_dense(indptr, indices, cost, D, m, n, 2, x, y, v) < 0:
        return INFEASIBLE
    if not transposed:
        for i in range(m):
            row_out[t, i] = i
            col_out[t, i] = x[i]
    else:   # engine columns are the problem's rows: in their order, the rows come sorted
        p = 0
        for j in range(n):
            if y[j] >= 0:
                row_out[t, p] = j
                col_out[t, p] = y[j]
                p += 1
    return OK


@numba.njit(cache=True, nogil=True)
def _solve_slice(k, nt, C, lo, hi, maximize, transposed, limit, full_ptr, full_idx, row_out, col_out, status):
    """Problems ``lo + k, lo + k + nt, ...`` below `hi` of the stack."""
    if transposed:
        m, n = C.shape[2], C.shape[1]
    else:
        m, n = C.shape[1], C.shape[2]
    for t in range(lo + k, hi, nt):
        status[t] = _solve_one(C, t, m, n, maximize, transposed, limit, full_ptr, full_idx, row_out, col_out)


def solve_stack(C, maximize, *, threads=None, chunk=None, progress=None):
    """Solve every ``C[t]`` of a C-contiguous ``(k, M, N)`` int64 or float64 stack.

    Returns ``(row_ind, col_ind, status)``: int64 arrays of shape
    ``(k, min(M, N))`` holding each problem's pairs as
    :func:`gpumatch.linear_sum_assignment` returns them (rows sorted), ``-1``
    for a problem whose status is not :data:`OK`, and the int8 statuses.
    `threads`: at most this many (default ``numba.get_num_threads()``);
    `chunk`: problems per call of the threads, after each of which
    ``progress(done)`` is called (default: all at once).
    """
    K, M, N = C.shape
    transposed = M > N
    m, n = (N, M) if transposed else (M, N)
    row_out = np.full((K, m), -1, dtype=np.int64)
    col_out = np.full((K, m), -1, dtype=np.int64)
    status = np.zeros(K, dtype=np.int8)
    if K == 0:
        return row_out, col_out, status
    idx_t = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    full_ptr = np.arange(m + 1, dtype=np.int64) * n
    full_idx = np.tile(np.arange(n, dtype=idx_t), m)
    # the int64 bound of a single problem (gpumatch.lap._checks.INT_BOUND): max|c| * (4 m + 8) < 2**62
    limit = np.int64((2 ** 62 - 1) // (4 * m + 8))
    nt = int(numba.get_num_threads()) if threads is None else max(1, int(threads))
    if K * M * N < PARALLEL_MIN_WORK:
        nt = 1
    step = K if chunk is None else max(1, int(chunk))
    for lo in range(0, K, step):
        hi = min(K, lo + step)
        _cpu_threads.run_slices(min(nt, hi - lo), _solve_slice, C, lo, hi, bool(maximize), transposed, limit,
                                full_ptr, full_idx, row_out, col_out, status)
        if progress is not None:
            progress(hi - lo)
    return row_out, col_out, status

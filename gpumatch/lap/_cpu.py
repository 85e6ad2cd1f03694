"""Compiled CPU engine of the sparse linear assignment problem (Numba).

A shortest augmenting path solver with dual potentials in the manner of
Jonker and Volgenant's LAPJV and its sparse form LAPJVsp (Computing 38,
1987), written for CSR input:

1. *Augmenting row reduction* (two passes): every free row takes the column
   of least reduced cost ``c_ij - v_j``; when that column is strictly better
   than the row's second choice its price ``v_j`` drops by the difference,
   so the row holds it tightly, and the row it displaces is served next.
   Prices only ever drop, and only on columns that are matched just after.
2. *Shortest augmenting paths*: from each row still free, Dijkstra on the
   reduced costs over alternating paths (a binary heap with lazy deletion,
   so a search costs the entries it reaches, not ``n``), stopped at the
   first free column it settles; the settled columns' prices drop by their
   distance short of the path's length, and the path is flipped.

The row potentials are implicit: ``u_i = c_{i,x_i} - v_{x_i}`` for a matched
row.  Invariants: ``c_ij - u_i - v_j >= 0`` for every entry of every matched
row, ``= 0`` on its matched entry, and a column that is free has never had
its price lowered (it is still 0), while every price is ``<= 0``.  With
``m <= n`` this makes the matched columns' prices no larger than the free
ones', which is the complementary slackness of the rectangular problem.

Square problems get their start prices from :func:`auction_prices`
(Bertsekas' forward auction with epsilon scaling): prices near the optimal
duals leave the row reduction few rows to miss and make the searches short,
where the searches from zero prices each cross most of the graph once few
free columns are left (10 times fewer searches, 20 times less time on the
random sparse family of issue 64 at 100k rows).

:func:`solve_dense` is the same method for a dense matrix, with Jonker
and Volgenant's heap-free dense search; a square one starts from the column
minima (:func:`dense_column_minima`, their column reduction).

All functions are ``numba.njit(cache=True, nogil=True)``; they specialise on
the cost dtype (int64 for exact integer costs, float64) and on the index
dtype.  The engine needs ``m <= n`` (the caller transposes).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["solve", "solve_dense", "auction_prices", "column_minima", "dense_column_minima", "alternating_reach",
           "matched_costs", "finish"]


@numba.njit(cache=True, nogil=True)
def _push(hd, hj, size, d, j):
    """Insert (d, j) into the binary min-heap of `size` items; return the new size."""
    k = size
    while k > 0:
        parent = (k - 1) >> 1
        if hd[parent] <= d:
            break
        hd[k] = hd[parent]
        hj[k] = hj[parent]
        k = parent
    hd[k] = d
    hj[k] = j
    return size + 1


@numba.njit(cache=True, nogil=True)
def _pop(hd, hj, size):
    """Remove the root of the heap (read by the caller first); return the new size."""
    size -= 1
    d = hd[size]
    j = hj[size]
    k = 0
    while True:
        c = 2 * k + 1
        if c >= size:
            break
        if c + 1 < size and hd[c + 1] < hd[c]:
            c += 1
        if hd[c] >= d:
            break
        hd[k] = hd[c]
        hj[k] = hj[c]
        k = c
    if size > 0:
        hd[k] = d
        hj[k] = j
    return size


@numba.njit(cache=True, nogil=True)
def _row_reduction(indptr, indices, cost, m, x, y, v, cx, free, nfree, passes):
    """Augmenting row reduction over the free rows ``free[:nfree]``; return
    how many rows are still free (listed at the head of `free`)."""
    budget = 8 * m + 64   # immediate re-serves of a displaced row, after which it waits for the next pass
    for _ in range(passes):
        k = 0
        prev = nfree
        nfree = 0
        while k < prev:
            i = free[k]
            k += 1
            j1 = -1
            j2 = -1
            u1 = cost.dtype.type(0)
            u2 = cost.dtype.type(0)
            c1 = cost.dtype.type(0)
            c2 = cost.dtype.type(0)
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                h = cost[p] - v[j]
                if j1 < 0 or h < u1:
                    j2, u2, c2 = j1, u1, c1
                    j1, u1, c1 = j, h, cost[p]
                elif j2 < 0 or h < u2:
                    j2, u2, c2 = j, h, cost[p]
            if j1 < 0:               # an empty row: left to the search, which reports it
                free[nfree] = i
                nfree += 1
                continue
            i0 = y[j1]
            strict = j2 >= 0 and u1 < u2
            if strict:
                v[j1] -= u2 - u1     # the row now holds j1 by exactly its margin
            elif i0 >= 0 and j2 >= 0:
                j1, c1 = j2, c2      # a tie: take the second column instead of displacing
                i0 = y[j1]
            x[i] = j1
            y[j1] = i
            cx[i] = c1
            if i0 >= 0:
                x[i0] = -1
                if strict and budget > 0:
                    budget -= 1
                    k -= 1
                    free[k] = i0
                else:
                    free[nfree] = i0
                    nfree += 1
    return nfree


@numba.njit(cache=True, nogil=True)
def solve(indptr, indices, cost, m, n, skip_failed, arr_passes, x, y, v, failed):
    """Minimum-cost matching of all rows (``m <= n``) of a CSR cost matrix.

    Parameters
    ----------
    indptr, indices, cost : CSR arrays; `cost` int64 or float64, finite.
    skip_failed : bool
        False: stop at the first row that no augmenting path reaches and
        return ``-1 - row``.  True: leave such rows free (the matching is
        then a maximum one, but not necessarily of least cost among them).
    arr_passes : int
        Passes of augmenting row reduction before the searches.
    x, y : int64 arrays of -1, lengths m and n; filled with the matching.
    v : zeros of the cost dtype, length n; filled with the column prices.
    failed : int64 array of length m; its head lists the rows left free.

    Returns
    -------
    int
        The number of rows left free (``skip_failed``), or ``-1 - row``.
    """
    cx = np.zeros(m, dtype=cost.dtype)
    free = np.arange(m)
    nfree = _row_reduction(indptr, indices, cost, m, x, y, v, cx, free, m, arr_passes)
    return _search_free(indptr, indices, cost, n, skip_failed, x, y, v, cx, free, nfree, failed)


@numba.njit(cache=True, nogil=True)
def _search_free(indptr, indices, cost, n, skip_failed, x, y, v, cx, free, nfree, failed):
    """The shortest augmenting path phase of :func:`solve`: one search from
    each row ``free[:nfree]``.  Needs ``c_ij - v_j >= cx_i - v_{x_i}`` on
    every entry of every matched row (``cx``: its matched cost) and, with
    ``m < n``, every free column's price at 0 and all prices ``<= 0``."""
    nnz = indices.shape[0]
    hd = np.empty(nnz + 1, dtype=cost.dtype)
    hj = np.empty(nnz + 1, dtype=np.int64)
    d = np.zeros(n, dtype=cost.dtype)
    pcost = np.zeros(n, dtype=cost.dtype)
    pred = np.zeros(n, dtype=np.int64)
    seen = np.full(n, -1, dtype=np.int64)     # search that last reached the column
    done = np.full(n, -1, dtype=np.int64)     # search that settled it
    scanned = np.empty(n, dtype=np.int64)
    nfailed = 0
    for t in range(nfree):
        s = free[t]
        size = 0
        end = -1                    # the nearest free column reached so far, and its distance
        mu = cost.dtype.type(0)
        for p in range(indptr[s], indptr[s + 1]):
            j = indices[p]
            h = cost[p] - v[j]
            if seen[j] != t or h < d[j]:
                seen[j] = t
                d[j] = h
                pred[j] = s
                pcost[j] = cost[p]
                if y[j] < 0:        # free columns wait outside the heap: only the nearest matters
                    if end < 0 or h < mu:
                        end = j
                        mu = h
                else:
                    size = _push(hd, hj, size, h, j)
        nsc = 0
        while size > 0:
            dj = hd[0]
            if end >= 0 and dj >= mu:
                break               # no column left to settle is nearer than the free one (ties: take it)
            j = hj[0]
            size = _pop(hd, hj, size)
            if done[j] == t or dj > d[j]:
                continue          # settled already, or a stale copy
            done[j] = t
            scanned[nsc] = j
            nsc += 1
            i = y[j]
            base = dj - (cx[i] - v[j])    # dj - u_i
            for p in range(indptr[i], indptr[i + 1]):
                j2 = indices[p]
                if done[j2] == t:
                    continue
                h = base + cost[p] - v[j2]
                if seen[j2] != t or h < d[j2]:
                    seen[j2] = t
                    d[j2] = h
                    pred[j2] = i
                    pcost[j2] = cost[p]
                    if y[j2] < 0:
                        if end < 0 or h < mu:
                            end = j2
                            mu = h
                    else:
                        size = _push(hd, hj, size, h, j2)
        if end < 0:
            if not skip_failed:
                return -1 - s
            failed[nfailed] = s
            nfailed += 1
            continue
        for k in range(nsc):        # prices: settled columns drop by what they are short of mu
            j = scanned[k]
            v[j] += d[j] - mu
        j = end
        while True:                 # flip the path
            i = pred[j]
            y[j] = i
            nxt = x[i]
            x[i] = j
            cx[i] = pcost[j]
            if i == s:
                break
            j = nxt
    return nfailed


@numba.njit(cache=True, nogil=True)
def alternating_reach(indptr, indices, m, x, y, free_rows):
    """Rows reachable from `free_rows` by alternating paths (edge to a column,
    matched edge back to a row), the free rows included: the rows that some
    maximum matching leaves free when ``x`` is a maximum matching."""
    mark = np.zeros(m, dtype=np.bool_)
    queue = np.empty(m, dtype=np.int64)
    head = 0
    tail = 0
    for r in free_rows:
        if not mark[r]:
            mark[r] = True
            queue[tail] = r
            tail += 1
    while head < tail:
        i = queue[head]
        head += 1
        for p in range(indptr[i], indptr[i + 1]):
            k = y[indices[p]]
            if k >= 0 and not mark[k]:
                mark[k] = True
                queue[tail] = k
                tail += 1
    return mark



@numba.njit(cache=True, nogil=True)
def column_minima(indices, cost, v):
    """``v[j] = min_i cost[i, j]`` over the stored entries of every column that has one."""
    seen = np.zeros(v.shape[0], dtype=np.bool_)
    for p in range(indices.shape[0]):
        j = indices[p]
        if not seen[j] or cost[p] < v[j]:
            v[j] = cost[p]
            seen[j] = True


@numba.njit(cache=True, nogil=True)
def dense_column_minima(C, v):
    """``v[j] = min_i C[i, j]`` over the finite entries of every column that has one.

    Jonker and Volgenant's column reduction: start prices for a square dense
    problem, where any prices are valid.  From them the row reduction
    leaves fewer rows to search for: 20-40 % less time than from zero
    prices on random float matrices of 8 x 8 to 2000 x 2000 (2-core CPU).
    """
    m, n = C.shape
    have = np.zeros(n, dtype=np.bool_)
    for i in range(m):
        for j in range(n):
            a = C[i, j]
            if a < np.inf and (not have[j] or a < v[j]):
                v[j] = a
                have[j] = True


@numba.njit(cache=True, nogil=True)
def auction_prices(indptr, indices, cost, m, n, v, eps0, factor, eps_min, floor, budget):
    """Column prices by forward auction with epsilon scaling (square problems).

    Each phase starts with every row free and the prices of the last one;
    a free row bids for its column of least ``c_ij - v_j``, lowering that
    price by its margin over the second best plus ``eps``, and takes the
    column from its owner, who bids next.  ``eps`` starts at `eps0` and is
    divided by `factor` after each phase down to `eps_min`.  Only `v` is
    kept: prices that are near the optimal duals make the exact phases of
    :func:`solve` that follow short.  Stops early (keeping the prices) when
    the bids pass `budget` or a price would pass `floor`, which a problem
    without a full matching reaches.
    """
    x = np.empty(m, dtype=np.int64)
    y = np.empty(n, dtype=np.int64)
    queue = np.empty(m, dtype=np.int64)
    eps = eps0
    bids = 0
    while True:
        x[:] = -1
        y[:] = -1
        for i in range(m):
            queue[i] = i
        head = 0
        count = m           # rows in the circular queue
        while count > 0:
            i = queue[head]
            head += 1
            if head == m:
                head = 0
            count -= 1
            j1 = -1
            j2 = -1
            w1 = cost.dtype.type(0)
            w2 = cost.dtype.type(0)
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                h = cost[p] - v[j]
                if j1 < 0 or h < w1:
                    j2, w2 = j1, w1
                    j1, w1 = j, h
                elif j2 < 0 or h < w2:
                    j2, w2 = j, h
            if j1 < 0:
                return False
            step = (w2 - w1 if j2 >= 0 else cost.dtype.type(0)) + eps
            if v[j1] - step < floor:
                return False
            v[j1] -= step
            k = y[j1]
            y[j1] = i
            x[i] = j1
            if k >= 0:
                x[k] = -1
                tail = head + count
                if tail >= m:
                    tail -= m
                queue[tail] = k
                count += 1
            bids += 1
            if bids > budget:
                return False
        if eps <= eps_min:
            return True
        eps = eps // factor if cost.dtype.kind == "i" else eps / factor
        if eps < eps_min:
            eps = eps_min


@numba.njit(cache=True, nogil=True)
def solve_dense(indptr, indices, cost, C, m, n, arr_passes, x, y, v):
    """:func:`solve` for a dense ``m x n`` cost matrix `C` (``m <= n``).

    The row reduction reads the CSR view ``(indptr, indices, cost)`` of the
    allowed entries; the searches read `C` itself, where a forbidden pair is
    ``+inf`` (float costs only).  A search keeps the columns in one array
    split into settled, to-scan (at the current least distance) and the
    rest, and finds each new least distance by one pass over the rest, as
    Jonker and Volgenant's dense LAPJV does: ``O(n)`` per settled column
    without a heap, and every column at the least distance is checked for
    being free before any is scanned (integer costs tie often).

    Returns 0, or ``-1 - row`` for a row that no augmenting path reaches.
    """
    cx = np.zeros(m, dtype=cost.dtype)
    free = np.arange(m)
    nfree = _row_reduction(indptr, indices, cost, m, x, y, v, cx, free, m, arr_passes)
    d = np.empty(n, dtype=C.dtype)
    pred = np.empty(n, dtype=np.int64)
    cols = np.arange(n)
    for t in range(nfree):
        s = free[t]
        for j in range(n):
            d[j] = C[s, j] - v[j]
            pred[j] = s
            cols[j] = j
        lo = 0
        hi = 0
        end = -1
        mn = C.dtype.type(0)
        while end < 0:
            if lo == hi:
                # the least distance among the columns not reached yet, and all columns at it
                mn = d[cols[hi]]
                hi += 1
                for k in range(hi, n):
                    j = cols[k]
                    h = d[j]
                    if h <= mn:
                        if h < mn:
                            hi = lo
                            mn = h
                        cols[k] = cols[hi]
                        cols[hi] = j
                        hi += 1
                if not (mn < np.inf):
                    return -1 - s
                for k in range(lo, hi):
                    if y[cols[k]] < 0:
                        end = cols[k]
                        break
                if end >= 0:
                    break
            j1 = cols[lo]
            lo += 1
            i = y[j1]
            u1 = C[i, j1] - v[j1] - mn
            for k in range(hi, n):
                j = cols[k]
                h = C[i, j] - v[j] - u1
                if h < d[j]:
                    d[j] = h
                    pred[j] = i
                    if h == mn:
                        if y[j] < 0:
                            end = j
                            break
                        cols[k] = cols[hi]
                        cols[hi] = j
                        hi += 1
        for k in range(lo):             # settled columns: prices drop by what they are short of mn
            j = cols[k]
            v[j] += d[j] - mn
        j = end
        while True:
            i = pred[j]
            y[j] = i
            nxt = x[i]
            x[i] = j
            if i == s:
                break
            j = nxt
    return 0


@numba.njit(cache=True, nogil=True)
def matched_costs(indptr, indices, cost, x):
    """``cost`` of the entry ``(i, x[i])`` of every row (0 for a free row)."""
    m = x.shape[0]
    out = np.zeros(m, dtype=cost.dtype)
    for i in range(m):
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] == x[i]:
                out[i] = cost[p]
                break
    return out


@numba.njit(cache=True, nogil=True)
def entry_costs(indptr, indices, cost, rows, cols):
    """``cost`` of the entry ``(rows[k], cols[k])`` of a canonical CSR (each
    row's columns ascending, unique, the entry present): a binary search in
    each row's columns."""
    out = np.empty(rows.shape[0], dtype=cost.dtype)
    for k in range(rows.shape[0]):
        lo = indptr[rows[k]]
        hi = indptr[rows[k] + 1]
        j = cols[k]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if indices[mid] <= j:
                lo = mid
            else:
                hi = mid
        out[k] = cost[lo]
    return out


@numba.njit(cache=True, nogil=True)
def whole_values(c, out):
    """Whether every value of the float array `c` is a whole number of
    magnitude at most ``2**53`` (NaN and infinities are not), each written
    as int64 into `out` (meaningful only then); and the largest ``|c|``.
    One pass without early exit, which the compiler vectorises."""
    big = 0.0
    whole = True
    for k in range(c.shape[0]):
        t = c[k]
        a = abs(t)
        whole &= (t == np.floor(t)) & (a <= 9007199254740992.0)
        big = max(big, a)
        out[k] = np.int64(t) if a <= 9007199254740992.0 else 0
    return whole, big


@numba.njit(cache=True, nogil=True)
def value_flags(c, bad_value):
    """The weights `c` in one vectorised pass, a second only when one is not
    finite: ``(zeros, first, infinite)``: whether any is 0, the position of
    the first NaN or `bad_value` (-1 when none), and whether any is
    infinite."""
    zeros = False
    special = False
    for k in range(c.shape[0]):
        t = c[k]
        zeros |= t == 0
        special |= not (abs(t) < np.inf)
    infinite = False
    if special:
        for k in range(c.shape[0]):
            t = c[k]
            if t != t or t == bad_value:
                return zeros, k, infinite
            infinite |= t == np.inf or t == -np.inf
    return zeros, -1, infinite


@numba.njit(cache=True, nogil=True)
def repair_seeds(k, nt, indptr, indices, cost, x, v, cx, tol, seeds):
    """Slice `k` of `nt` (a block of rows) of the rows that :func:`finish`'s
    repair must start from: ``seeds[i] = 1`` for each matched row ``i`` with
    an entry ``c_ij - v_j < u_i - tol`` (``u_i = cx_i - v_{x_i}``), else 0.
    Read-only on the prices, so the slices run on threads at once
    (:func:`gpumatch._cpu_threads.run_slices`)."""
    m = x.shape[0]
    lo = m * k // nt
    hi = m * (k + 1) // nt
    for i in range(lo, hi):
        seeds[i] = 0
        if x[i] < 0:
            continue
        u = cx[i] - v[x[i]]
        for p in range(indptr[i], indptr[i + 1]):
            if cost[p] - v[indices[p]] < u - tol:
                seeds[i] = 1
                break


@numba.njit(cache=True, nogil=True)
def finish(indptr, indices, cost, m, n, x, y, v, tptr, tind, tol, budget, cx_given, seeds):
    """Exact assignment from a near-optimal partial one: the host finish of
    the GPU auction (:mod:`gpumatch.lap._driver`).

    `x`, `y` (int64, -1 free) hold a partial matching and `v` (cost dtype,
    all ``<= 0``) prices under which every matched row is within a small
    ``eps`` of its best column.  Three steps make them exact:

    1. *repair*: label-correcting on the columns (a queue of rows): while a
       matched row ``i`` has an entry with ``c_ij - v_j < u_i - tol``
       (``u_i = c_{i,x_i} - v_{x_i}``), lower ``v_j`` to ``c_ij - u_i``,
       which raises the ``u`` of the row holding ``j``, queued in turn.
       With ``m < n`` the free columns are first set to 0 and never
       lowered.  Stops after `budget` entries read;
    2. *cleanup*: every matched row still not at its best column is
       unassigned (``m < n``: its column's price goes to 0, and the rows
       with an entry there, found through the transpose ``tptr, tind``,
       are checked again).  Skipped when the repair's queue ran dry
       without leaving a row at a free column it could not lower: every
       matched row is then at its best column (a row leaves the queue
       satisfied, and a later change that could undo it, a lower price
       of its own column, queues it again);
    3. the free rows are matched by :func:`_search_free`.

    `cx_given`: the cost of every matched row's entry (the auction's), or
    an empty array (then read from the CSR).  `seeds`: the rows the repair
    starts from (:func:`repair_seeds`, computed on threads, on prices whose
    free columns the caller already set to 0 when ``m < n``), or an empty
    array (every matched row).  Either start gives the same prices: a row
    that satisfies its entries stays so until its own column's price drops,
    which queues it.

    Returns ``(status, info, cx)``: status as :func:`solve` without
    ``skip_failed`` (0, or ``-1 - row``), ``info = [entries read by the
    repair, rows unassigned by the cleanup, searches]``, and the cost of
    each row's matched entry (0 for a row left free).
    """
    rect = m < n
    info = np.zeros(3, dtype=np.int64)
    if cx_given.shape[0] == m:
        cx = cx_given.copy()
        for i in range(m):
            if x[i] < 0:
                cx[i] = 0
    else:
        cx = np.zeros(m, dtype=cost.dtype)
        for i in range(m):
            if x[i] >= 0:
                for p in range(indptr[i], indptr[i + 1]):
                    if indices[p] == x[i]:
                        cx[i] = cost[p]
                        break
    if rect:
        for j in range(n):
            if y[j] < 0:
                v[j] = 0
    queue = np.empty(m, dtype=np.int64)
    inq = np.zeros(m, dtype=np.bool_)
    head = 0
    count = 0
    seeded = seeds.shape[0] == m
    for i in range(m):
        if x[i] >= 0 and (not seeded or seeds[i] != 0):
            queue[count] = i
            inq[i] = True
            count += 1
    work = 0
    stuck = False            # a row left at a free column that stays at 0
    while count > 0 and work < budget:
        i = queue[head]
        head += 1
        if head == m:
            head = 0
        count -= 1
        inq[i] = False
        if x[i] < 0:
            continue
        u = cx[i] - v[x[i]]
        work += indptr[i + 1] - indptr[i] + 1
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            t = cost[p] - u
            if t < v[j] - tol:
                k = y[j]
                if k < 0 and rect:
                    stuck = True        # a free column stays at 0: the cleanup unassigns row i
                    continue
                v[j] = t
                if k >= 0 and k != i and not inq[k]:
                    tail = head + count
                    if tail >= m:
                        tail -= m
                    queue[tail] = k
                    inq[k] = True
                    count += 1
    info[0] = work
    # cleanup: a stack of rows to check (every matched row, then those near a freed column)
    check = count > 0 or stuck
    stack = np.empty(m + indices.shape[0] if check else 0, dtype=np.int64)
    top = 0
    if check:
        for i in range(m):
            if x[i] >= 0:
                stack[top] = i
                top += 1
    while top > 0:
        top -= 1
        i = stack[top]
        if x[i] < 0:
            continue
        u = cx[i] - v[x[i]]
        bad = False
        for p in range(indptr[i], indptr[i + 1]):
            if cost[p] - v[indices[p]] < u - tol:
                bad = True
                break
        if not bad:
            continue
        j0 = x[i]
        x[i] = -1
        y[j0] = -1
        cx[i] = 0
        info[1] += 1
        if rect and v[j0] != 0:
            v[j0] = 0
            for q in range(tptr[j0], tptr[j0 + 1]):
                k = tind[q]
                if x[k] >= 0 and top < stack.shape[0]:
                    stack[top] = k
                    top += 1
    free = np.empty(m, dtype=np.int64)
    nfree = 0
    for i in range(m):
        if x[i] < 0:
            free[nfree] = i
            nfree += 1
    info[2] = nfree
    failed = np.empty(1, dtype=np.int64)
    status = _search_free(indptr, indices, cost, n, False, x, y, v, cx, free, nfree, failed)
    return status, info, cx

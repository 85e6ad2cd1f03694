"""Karp–Sipser's degree-one rule, and the cycle rule after it, compiled
(Numba): the first step of the CPU matching engine's initial matching
(:mod:`gpumatch._cpu_match`, ``initial_matching``).

While a free vertex has exactly one free neighbour, the two are matched.
The rule is exact, so it never lengthens a later augmenting path; run before
a greedy pass it peels chains of degree-two vertices (shuffled bidiagonal
ladders, staircases) from their ends, which a greedy pass would break into
pieces joined by long augmenting paths.  The cycle rule, exact too, matches
the cycles that rows of two free columns close (Karp–Sipser's degree-two
reduction where it closes): shuffled block triangular Jacobians, block by
block.  :func:`degree_one` is the entry; ``_d1_records``, ``_d1_walk``,
``_d2_queue``, ``_d2_close``, ``_close_rounds``, ``_d2_choose``,
``_d2_rounds`` and ``_d1_pairs`` are its compiled steps.

All functions are ``numba.njit(cache=True)``; they specialise on the index
dtype of the graph.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _cpu_csr

__all__ = ["degree_one"]


@numba.njit(cache=True, nogil=True)
def _d1_records(m, n, rptr, rind, cdeg, mu_row, mu_col, state, choices=False, low=1):
    """The records and queue of :func:`degree_one`, or None (no vertex of
    degree one, or of degree at most `low`, in a graph without pairs: a
    pass over the pointers and `cdeg`, the columns' degrees).  ``state``:
    ``[queue head, queue end, pairs, pending column, its partner, q2 head,
    q2 end, joins since the last closure, their budget]``, set here but for
    the last four (:func:`_d2_queue`, :func:`_d2_close`)."""
    nv = m + n
    fresh = True
    for r in range(m):
        if mu_row[r] >= 0:
            fresh = False
            break
    if fresh and not choices:   # any vertex of degree one (or up to `low`)? (the pointers only)
        ones = 0
        for r in range(m):
            d = rptr[r + 1] - rptr[r]
            ones += 1 <= d <= low
        for c in range(n):
            ones += 1 <= cdeg[c] <= low
        if ones == 0:
            return None
    queue = np.empty(nv, rind.dtype)
    if fresh:
        rec = np.empty(2 * nv, rind.dtype)
        # the columns' XORs by a scatter into an array of their own (n ids,
        # which stays in cache where the columns' half of the records would
        # not: 1.8 against 8 ms on the 300k ladder, 2-core VM); degrees from `cdeg`
        cx = np.zeros(n, rind.dtype)
        for r in range(m):
            fx = 0
            for p in range(rptr[r], rptr[r + 1]):
                c = rind[p]
                fx ^= c + m
                cx[c] ^= r
            rec[2 * r] = rptr[r + 1] - rptr[r]
            rec[2 * r + 1] = fx
        for c in range(n):
            rec[2 * (m + c)] = cdeg[c]
            rec[2 * (m + c) + 1] = cx[c]
    else:
        rec = np.zeros(2 * nv, rind.dtype)
        for r in range(m):   # free degrees and XORs; the columns' by a scatter of the same
            fx = 0
            fd = 0
            rfree = mu_row[r] < 0
            for p in range(rptr[r], rptr[r + 1]):
                c = rind[p]
                if mu_col[c] < 0:
                    fx ^= c + m
                    fd += 1
                    if rfree:
                        w = 2 * (m + c)
                        rec[w] += 1
                        rec[w + 1] ^= r
            if rfree:
                rec[2 * r] = fd
                rec[2 * r + 1] = fx
            else:
                rec[2 * r] = -1
                rec[2 * r + 1] = mu_row[r] + m
    qt = 0
    for v in range(nv):
        if v >= m and mu_col[v - m] >= 0:
            rec[2 * v] = -1
            rec[2 * v + 1] = mu_col[v - m]
        if rec[2 * v] == 1:
            queue[qt] = v
            qt += 1
    state[0] = 0
    state[1] = qt
    state[2] = 0
    state[3] = -1
    return rec, queue


@numba.njit(cache=True, nogil=True)
def _d1_walk(m, rptr, rind, cptr, cind, rec, queue, state, q2):
    """The walk of :func:`degree_one` from ``state`` (see
    :func:`_d1_records`).  Returns True when it stopped for want of the
    CSC (an empty `cptr`): a matched column with two or more other free
    rows must tell them, and ``state`` keeps where to resume.  A row whose
    free degree falls to two goes on `q2` (``state[6]``: its end), unless
    `q2` is empty (the cycle rule off)."""
    qh = state[0]
    qt = state[1]
    pairs = state[2]
    u = state[3]
    v = state[4]
    q2t = state[6]
    close = q2.shape[0] > 0
    while True:
        if u >= m:               # a matched column's other free rows lose it
            if cptr.shape[0] == 0:
                state[0] = qh
                state[1] = qt
                state[2] = pairs
                state[3] = u
                state[4] = v
                state[6] = q2t
                return True
            for p in range(cptr[u - m], cptr[u - m + 1]):
                w = cind[p]
                d = rec[2 * w]
                if d > 0 and w != v:
                    rec[2 * w] = d - 1
                    rec[2 * w + 1] ^= u
                    if d == 2:
                        queue[qt] = w
                        qt += 1
                    elif d == 3 and close:
                        q2[q2t] = w
                        q2t += 1
        u = -1
        if qh >= qt:
            break
        v = queue[qh]
        qh += 1
        if rec[2 * v] != 1:      # matched, or its last free neighbour went
            continue
        u = rec[2 * v + 1]       # its one free neighbour
        du = rec[2 * u]          # u's free degree, v included
        if du <= 0:  # pragma: no cover - every matched vertex told its free neighbours
            rec[2 * v] = 0
            continue
        rec[2 * v] = -1          # matched: the partner in place of the XOR
        rec[2 * u] = -1
        rec[2 * u + 1] ^= v      # (u's free neighbours but v, then its partner)
        pairs += 1
        # v has no other free neighbour; u's other free ones (w) lose u
        # (inline rather than a helper: 1.4x faster on a shuffled chain)
        if du == 2:              # one other: the XOR names it
            w = rec[2 * u + 1]
            d = rec[2 * w]
            if d > 0:
                rec[2 * w] = d - 1
                rec[2 * w + 1] ^= u
                if d == 2:
                    queue[qt] = w
                    qt += 1
                elif d == 3 and close and w < m:
                    q2[q2t] = w
                    q2t += 1
        if du <= 2:
            rec[2 * u + 1] = v
            u = -1
            continue
        rec[2 * u + 1] = v
        if u < m:
            for p in range(rptr[u], rptr[u + 1]):
                w = rind[p] + m
                d = rec[2 * w]
                if d > 0 and w != v:
                    rec[2 * w] = d - 1
                    rec[2 * w + 1] ^= u
                    if d == 2:
                        queue[qt] = w
                        qt += 1
            u = -1
        # else: a column with other free rows, at the top of the loop
    state[0] = qh
    state[1] = qt
    state[2] = pairs
    state[3] = -1
    state[6] = q2t
    return False


@numba.njit(cache=True, nogil=True)
def _take(rec, queue, qt, v, a, b):
    """Free vertex `v` of free degree two, free neighbours `a` and `b`,
    takes `a`: `b` loses `v` (on the queue when left with one free
    neighbour), and `v` goes on the queue as a degree-one vertex whose
    neighbour is `a` (the walk pairs them).  Returns the queue's new end."""
    d = rec[2 * b]
    rec[2 * b] = d - 1
    rec[2 * b + 1] ^= v
    if d == 2:
        queue[qt] = b
        qt += 1
    rec[2 * v] = 1
    rec[2 * v + 1] = a
    queue[qt] = v
    return qt + 1


@numba.njit(cache=True, nogil=True)
def _d2_choose(m, rptr, rind, rec, queue, state, start):
    """A choice once the degree-one rule has stopped: the first row from
    `start` on with two entries, both free columns, takes the one of
    smaller free degree (its record then names it as a degree-one row's
    does, and it goes on the queue); the other column loses the row (on
    the queue when it is left with one free row).  Returns the next row to
    look at, or -1 when there is none."""
    qt = state[1]
    for r in range(start, m):
        if rptr[r + 1] - rptr[r] != 2 or rec[2 * r] != 2:
            continue
        a = rind[rptr[r]] + m
        b = rind[rptr[r] + 1] + m
        if rec[2 * b] < rec[2 * a]:
            a, b = b, a
        state[1] = _take(rec, queue, qt, r, a, b)   # (b's degree >= 2: the rule left no vertex of degree one)
        return r + 1
    return -1


@numba.njit(cache=True, nogil=True)
def _d2_rounds(m, rptr, rind, cptr, cind, rec, queue, state, start, q2):
    """Choices (:func:`_d2_choose`), each followed by the walk it starts,
    until no choice is left (returns -1) or a walk stops for want of the
    CSC (returns the row the next choice looks from; ``state`` keeps the
    walk's place).  One compiled loop: a cycle of degree-two vertices costs
    a choice, and a graph of many short cycles (small blocks) makes tens of
    thousands of them."""
    while True:
        start = _d2_choose(m, rptr, rind, rec, queue, state, start)
        if start < 0:
            return -1
        if _d1_walk(m, rptr, rind, cptr, cind, rec, queue, state, q2):
            return start


@numba.njit(cache=True, nogil=True)
def _d2_queue(m, rec, q2, state):
    """The first entries of `q2`: every free row of free degree two
    (``state[5]``, ``state[6]``: its head and end)."""
    t = 0
    for v in range(m):
        if rec[2 * v] == 2:
            q2[t] = v
            t += 1
    state[5] = 0
    state[6] = t


@numba.njit(cache=True, nogil=True)
def _find(parent, x):
    """The root of `x` in the disjoint-set forest `parent` (path halving)."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@numba.njit(cache=True, nogil=True)
def _d2_close(m, rptr, rind, rec, queue, state, q2, parent):
    """The cycle rule of :func:`degree_one`, from `q2`'s head (rows): each
    row ``v`` still of free degree two, with free columns ``a`` and ``b``,
    joins their sets in `parent` (a forest over the columns: the edges of
    such rows) unless they are in one set already; then ``v`` closes a
    cycle and takes ``a`` (on the queue as a degree-one vertex whose
    neighbour is ``a``; ``b`` loses ``v``).  Returns 1 after such a closure
    (the walk must run before the next), 0 when `q2` is spent or
    ``state[7]``, the joins since the last closure, passes ``state[8]``
    (the budget)."""
    q2h = state[5]
    q2t = state[6]
    qt = state[1]
    while q2h < q2t:
        v = q2[q2h]
        if rec[2 * v] != 2:      # matched, or its degree fell again since
            q2h += 1
            continue
        a = -1                   # its first free neighbour; the XOR gives the other
        for p in range(rptr[v], rptr[v + 1]):
            w = rind[p] + m
            if rec[2 * w] > 0:
                a = w
                break
        q2h += 1
        b = rec[2 * v + 1] ^ a
        ra = _find(parent, a - m)
        rb = _find(parent, b - m)
        if ra != rb:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
            state[7] += 1
            if state[7] > state[8]:
                q2h = q2t
                break
            continue
        state[7] = 0
        state[1] = _take(rec, queue, qt, v, a, b)   # a cycle
        state[5] = q2h
        state[6] = q2t
        return 1
    state[5] = q2h
    return 0


@numba.njit(cache=True, nogil=True)
def _d1_pairs(m, n, rec, mu_row, mu_col):
    """Write the pairs of the records (``rec[2v] == -1``, partner in
    ``rec[2v + 1]``) into `mu_row` / `mu_col` (one pass in order)."""
    for r in range(m):
        if rec[2 * r] == -1:
            mu_row[r] = rec[2 * r + 1] - m
    for c in range(n):
        if rec[2 * (m + c)] == -1:
            mu_col[c] = rec[2 * (m + c) + 1]


def _walk(m, n, rptr, rind, cptr, cind, rec, queue, state, counts, q2):
    """:func:`_d1_walk` to exhaustion, the CSC built when it asks for it;
    returns ``(cptr, cind)``."""
    if cptr is None and _d1_walk(m, rptr, rind, np.empty(0, rptr.dtype), np.empty(0, rind.dtype), rec, queue,
                                 state, q2):
        cptr, cind = _cpu_csr.transpose(m, n, rptr, rind, counts=counts)
    if cptr is not None:
        _d1_walk(m, rptr, rind, cptr, cind, rec, queue, state, q2)
    return cptr, cind


def _close(m, n, rptr, rind, cptr, cind, rec, queue, state, counts, q2):
    """The cycle rule (:func:`_d2_close`) until `q2` is spent (or its
    budget), each closure followed by its walk; the CSC built when a walk
    needs it.  Returns ``(cptr, cind)``."""
    parent = np.arange(n, dtype=rind.dtype)   # over the columns (vertex id m + c is column c)
    empty_p, empty_i = np.empty(0, rptr.dtype), np.empty(0, rind.dtype)
    while True:
        if _close_rounds(m, rptr, rind, empty_p if cptr is None else cptr, empty_i if cptr is None else cind,
                         rec, queue, state, q2, parent) == 0:
            return cptr, cind
        if cptr is None:
            cptr, cind = _cpu_csr.transpose(m, n, rptr, rind, counts=counts)
        _d1_walk(m, rptr, rind, cptr, cind, rec, queue, state, q2)   # (resumes a walk that stopped for it)


@numba.njit(cache=True, nogil=True)
def _close_rounds(m, rptr, rind, cptr, cind, rec, queue, state, q2, parent):
    """Closures (:func:`_d2_close`), each followed by its walk, in one
    compiled loop (a Jacobian makes one per diagonal block) until `q2` is
    spent (returns 0) or a walk needs the CSC (returns 2; ``state`` keeps
    the walk's place)."""
    while True:
        code = _d2_close(m, rptr, rind, rec, queue, state, q2, parent)
        if code != 1:
            return code
        if _d1_walk(m, rptr, rind, cptr, cind, rec, queue, state, q2):
            return 2


def degree_one(m, n, rptr, rind, mu_row, mu_col, cptr=None, cind=None, counts=None, choices=False, cycles=True):
    """Karp–Sipser's degree-one rule alone, to exhaustion: while a free
    vertex has exactly one free neighbour, match the two.  Returns
    ``(pairs made, cptr, cind)``.

    The rule is exact (a maximum matching of what is left plus such a pair
    is a maximum matching), so it never makes a later augmenting path
    longer; run before a greedy pass it peels chains of degree-two vertices
    (shuffled bidiagonal ladders, staircases) from their ends, where the
    greedy pass would break them into pieces joined by long augmenting
    paths.  Vertex ids: rows ``0..m-1``, columns ``m..m+n-1``.  Each vertex
    has a record of two ids in a compact array of the index dtype
    (``rec[2v]``: free degree, -1 once matched; ``rec[2v + 1]``: XOR of its
    free neighbours, which *is* the free neighbour once the degree is one,
    then its partner).  A matched vertex with one other free neighbour
    names it by the same XOR, without reading its adjacency, so following
    a shuffled chain costs two random reads per pair (the two records, 8
    bytes per vertex: 4.8 MB for a ladder of 300k rows, against 9.6 MB for
    four ids per vertex, 34 -> 18 ms on a 2-core VM, median of 9, three
    interleaved rounds); the pairs go to `mu_row` / `mu_col` in one pass at
    the end.

    The records come from the CSR alone (the columns' by one scatter of
    the entries); the CSC (`cptr`, `cind`) is needed only once a matched
    column with two or more other free rows must tell them, and is built
    then (from `counts`, the :func:`gpumatch._cpu_csr.column_counts`, when
    given) unless given.  It comes back (None if never needed nor given).
    On top of the pairs already in `mu_row` / `mu_col`; without pairs, a
    graph with no vertex of degree one costs one pass over the pointers.

    With `choices`, once the rule has stopped, a row with two entries,
    both free, takes the column of smaller free degree and the rule goes on
    (:func:`_d2_choose`), until no such row is left: a cycle of degree-two
    vertices (no end to start from) is then matched from one choice.  A
    choice is a heuristic, not exact (the search that follows repairs);
    its pairs are counted with the rule's.

    With `cycles` (before any choice), the cycle rule, exact too: each free
    row of free degree two is an edge between its two free columns, a
    forest of such edges is kept (disjoint sets over the columns), and a
    row whose edge would close a cycle in it takes one of its two columns;
    the degree-one rule then matches the rest of the cycle and the trees on
    it.  Such a component has as many edges as vertices, and its rows have
    no other free column, so in some maximum matching they take all of its
    columns (Karp–Sipser's degree-two reduction, carried out where it
    closes).  When a vertex of a component is matched elsewhere, every edge
    at it loses an end and the degree-one rule matches the whole piece cut
    off, so a set's free columns stay joined and the test of one set is
    exact.  Shuffled block triangular Jacobians are matched outright, from
    the first block on (its rows have only their block's columns; then each
    later block's rows lose their earlier columns), with no augmenting path.
    Rows only: a column's edge would need the CSC, and the rows of one of
    the two triangular orders always start the cascade.  The rule stops
    after ``max(1024, (m + n) / 20)`` joins in a row without a closure (a
    random graph's rows of two entries rarely close one; a Jacobian's close
    one every few hundred joins at most), and the gate above counts rows of
    degree two as well.
    """
    if cptr is not None:
        cdeg = np.diff(cptr)
    else:
        if counts is None:
            counts = _cpu_csr.column_counts(m, n, rptr, rind)
        cdeg = counts[1:]
    state = np.zeros(9, np.int64)
    state[8] = max(1024, (m + n) // 20)   # the cycle rule's budget: joins in a row without a closure
    got = _d1_records(m, n, rptr, rind, cdeg, mu_row, mu_col, state, choices, 2 if cycles else 1)
    if got is None:
        return 0, cptr, cind
    rec, queue = got
    no_q2 = np.empty(0, rind.dtype)
    q2 = no_q2
    if cycles:
        q2 = np.empty(m, rind.dtype)
        _d2_queue(m, rec, q2, state)
    cptr, cind = _walk(m, n, rptr, rind, cptr, cind, rec, queue, state, counts, q2)
    # (a matching that covers the smaller side leaves no row with two free columns: no scan for one;
    # the rule's pairs reach mu_row only at the end)
    before = int(np.count_nonzero(mu_row >= 0)) if choices or cycles else 0
    if cycles and before + int(state[2]) < min(m, n):
        cptr, cind = _close(m, n, rptr, rind, cptr, cind, rec, queue, state, counts, q2)
    start = 0
    while choices and before + int(state[2]) < min(m, n):
        no_csc = cptr is None
        start = _d2_rounds(m, rptr, rind, np.empty(0, rptr.dtype) if no_csc else cptr,
                           np.empty(0, rind.dtype) if no_csc else cind, rec, queue, state, start, no_q2)
        if start < 0:
            break
        cptr, cind = _walk(m, n, rptr, rind, cptr, cind, rec, queue, state, counts, no_q2)   # builds the CSC
    _d1_pairs(m, n, rec, mu_row, mu_col)
    return int(state[2]), cptr, cind

"""NumPy twins of the auction kernels in ``auction.cu``.

Each function has the signature and meaning of its CUDA twin in
:mod:`gpumatch.lap._kernels_cuda`; the driver (:mod:`gpumatch.lap._driver`)
is the same for both.  The auction is Jacobi-parallel: in a round every
bidding row reads the prices of the round's start, and the bids on one
column are settled by the largest key, whatever the order of the atomics,
so these twins reproduce the GPU's prices and assignment exactly (only the
order of the rows inside a list differs, which nothing reads).

The state ``st`` is a :class:`gpumatch.lap._driver.AuctionState`; its
``counts`` hold ``[list 0 length, list 1 length, bid columns (parity 0),
bid columns (parity 1), assigned rows, price-floor flag, round, a price
update's change flag]``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["refresh", "bid", "resolve", "rounds", "update", "update_start", "update_sweep", "update_apply", "batch_dense",
           "KEY_ROW_BITS", "KEY_INT_CAP"]

#: The bid key is ``(bid << 32) | row``: the row in the low 32 bits.
KEY_ROW_BITS = 32
#: Integer bids above this count as this much in the key (the winner
#: still pays its own bid; a smaller key only decides who wins).
KEY_INT_CAP = 2 ** 31 - 1


# ---------------------------------------------------------------------------
# helpers (device functions in auction.cu)
# ---------------------------------------------------------------------------


def _h(st, c, cols):
    """``h = c' - v_j`` (``c' = (c - cmin) * scale`` for integers, ``c`` for
    floats; a forbidden dense entry stays ``+inf``)."""
    if st.kind == "i":
        return (c - st.cmin) * st.scale - st.v[cols]
    with np.errstate(invalid="ignore"):
        return c - st.v[cols]


def _reduced(st, rows, with_cost=False):
    """Owner (index into `rows`), column and ``h`` (:func:`_h`) of every
    entry of the listed rows, and the segment offsets (and the costs)."""
    if st.dense:
        k = rows.shape[0]
        owner = np.repeat(np.arange(k, dtype=np.int64), st.n)
        cols = np.tile(np.arange(st.n, dtype=np.int64), k)
        c = st.C[rows].reshape(-1)
        offs = np.arange(k + 1, dtype=np.int64) * st.n
    else:
        starts = st.indptr[rows]
        lens = st.indptr[rows + 1] - starts
        offs = np.zeros(rows.shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=offs[1:])
        owner = np.repeat(np.arange(rows.shape[0], dtype=np.int64), lens)
        pos = np.arange(offs[-1], dtype=np.int64) - offs[owner] + starts[owner]
        cols = st.indices[pos].astype(np.int64)
        c = st.cost[pos]
    h = _h(st, c, cols)
    if with_cost:
        return owner, cols, h, offs, c
    return owner, cols, h, offs


def _segment_min(vals, offs, empty):
    out = np.full(offs.shape[0] - 1, empty, dtype=vals.dtype)
    nonempty = offs[1:] > offs[:-1]
    if vals.shape[0]:
        red = np.minimum.reduceat(vals, np.minimum(offs[:-1], vals.shape[0] - 1))
        out[nonempty] = red[nonempty]
    return out


def best_two(st, rows):
    """Per listed row: ``(j1, w1, w2, c1)``, the least ``h`` and its column
    (the smallest column among ties; -1 for a row without an allowed
    entry), the least ``h`` over the other entries (``inf`` if none), and
    the cost of entry ``j1``.  Integer ``inf`` is the largest int64."""
    inf = st.inf
    owner, cols, h, offs, c = _reduced(st, rows, with_cost=True)
    w1 = _segment_min(h, offs, inf)
    big_col = np.int64(np.iinfo(np.int64).max)
    j1 = _segment_min(np.where((h == w1[owner]) & (h < inf), cols, big_col), offs, big_col)
    j1 = np.where(j1 == big_col, -1, j1)
    at = cols == j1[owner]
    w2 = _segment_min(np.where(at, inf, h), offs, inf)
    c1 = np.zeros(rows.shape[0], dtype=c.dtype)
    c1[owner[at]] = c[at]
    return j1, w1, w2, c1


def bid_amount(st, w1, w2, eps):
    """``min(w2 - w1, big) + eps`` (``big + eps`` without a second entry)."""
    has2 = w2 < st.inf
    diff = np.where(has2, w2 - np.where(has2, w1, 0), st.big)
    return np.minimum(diff, st.big) + eps


def bid_key(st, delta, rows):
    """The packed 64-bit key of each bid: an order-preserving 31-bit image of
    the bid in the high half, the row in the low half."""
    if st.kind == "i":
        hi = np.minimum(delta, KEY_INT_CAP).astype(np.uint64)
    else:
        hi = delta.astype(np.float64).view(np.uint64) >> np.uint64(32)
    return (hi << np.uint64(KEY_ROW_BITS)) | rows.astype(np.uint64)


def _append(st, which, items):
    k = int(st.counts[which])
    st.lists[which, k:k + items.shape[0]] = items
    st.counts[which] = k + items.shape[0]


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------


def refresh(st, eps, r):
    """gpumatch_lap_refresh: start of a phase.  Every assigned row whose
    column is more than `eps` worse than its best (``h(x_i) - w1 > eps``,
    ``h(x_i)`` from ``cx``) is unassigned; every unassigned row is then appended to list ``r & 1``
    (whose length the driver set to 0)."""
    par = r & 1
    held = np.flatnonzero(st.x >= 0)
    if held.shape[0]:
        owner, cols, h, offs = _reduced(st, held)
        w1 = _segment_min(h, offs, st.inf)
        hx = _h(st, st.cx[held], st.x[held].astype(np.int64))
        drop = held[hx - w1 > eps]
        if drop.shape[0]:
            st.owner[st.x[drop]] = -1
            st.x[drop] = -1
            st.counts[4] -= drop.shape[0]
    _append(st, par, np.flatnonzero(st.x < 0).astype(st.lists.dtype))


def bid(st, eps, r):
    """gpumatch_lap_bid: every row of list ``r & 1`` that is still unassigned
    bids for its best column: ``bid_delta[i] = min(w2 - w1, big) + eps``,
    ``keys[j1] = max(keys[j1], key)``; the first bid on a column lists it
    in ``bidcols`` (count ``counts[2 + par]``), and the row goes on list
    ``1 - par`` (winners are skipped next round).  Resets the other
    parity's bid-column count.  ``cx[i]`` gets the cost of entry ``j1``."""
    par = r & 1
    st.counts[2 + (1 - par)] = 0
    lst = st.lists[par, :int(st.counts[par])]
    rows = lst[st.x[lst] < 0].astype(np.int64)
    if rows.shape[0] == 0:
        return
    j1, w1, w2, c1 = best_two(st, rows)
    ok = j1 >= 0                       # a row without an allowed entry never bids (infeasible input)
    rows, j1, w1, w2, c1 = rows[ok], j1[ok], w1[ok], w2[ok], c1[ok]
    delta = bid_amount(st, w1, w2, eps)
    st.bid_delta[rows] = delta
    st.cx[rows] = c1
    fresh = np.unique(j1[st.keys[j1] == 0])
    np.maximum.at(st.keys, j1, bid_key(st, delta, rows))
    k = int(st.counts[2 + par])
    st.bidcols[k:k + fresh.shape[0]] = fresh
    st.counts[2 + par] = k + fresh.shape[0]
    _append(st, 1 - par, rows.astype(st.lists.dtype))


def resolve(st, r):
    """gpumatch_lap_resolve: each column bid on goes to the row of the
    largest key, at its price minus that row's bid; the row it held is
    unassigned and appended to list ``1 - par``.  Sets the price-floor flag
    when a price passes ``floor``; resets the length of list ``par``."""
    par = r & 1
    cols = st.bidcols[:int(st.counts[2 + par])].astype(np.int64)
    key = st.keys[cols]
    st.keys[cols] = 0
    win = (key & np.uint64(0xFFFFFFFF)).astype(np.int64)
    nv = st.v[cols] - st.bid_delta[win]
    if (nv < st.floor).any():
        st.counts[5] = 1
    st.v[cols] = nv
    old = st.owner[cols].astype(np.int64)
    st.owner[cols] = win
    st.x[win] = cols
    disp = old[old >= 0]
    st.x[disp] = -1
    st.counts[4] += int((old < 0).sum())
    st.counts[par] = 0
    _append(st, 1 - par, disp.astype(st.lists.dtype))


def rounds(st, eps, r, max_rounds, stop_at):
    """gpumatch_lap_rounds (one block that loops): rounds of :func:`bid` and
    :func:`resolve` from round `r` until at most `stop_at` rows are
    unassigned, the price floor is passed, or `max_rounds` rounds ran;
    ``counts[6]`` gets the next round's number."""
    done = 0
    while done < max_rounds and st.m - int(st.counts[4]) > stop_at and not st.counts[5]:
        bid(st, eps, r)
        resolve(st, r)
        r += 1
        done += 1
    st.counts[6] = r


def _transpose(st):
    """``(cptr, crow, ccost)``: the rows of each column and the entries' costs
    in column order (built once per auction)."""
    got = st.extra.get("csc")
    if got is None:
        from .. import csr

        cptr, crow, perm = csr.transpose(st.indptr, st.indices, st.n, return_perm=True)
        got = st.extra["csc"] = (cptr.astype(np.int64, copy=False), crow.astype(np.int64), st.cost[perm])
    return got


def update(st, eps, lmax, sweeps):
    """gpumatch_lap_update_dial: a whole global price update by Dial's
    buckets over the transpose.  The distances ``d`` (0 on the free columns,
    at most `lmax`) are the least solution of ``d_{x_i} <= d_j + l_ij`` over
    the entries of the assigned rows (``l_ij = floor((h_ij - h_{i,x_i} +
    eps) / eps)``, at least 0, at most `lmax`), found level by level: level
    ``k`` gathers the columns with ``d == k``, then relaxes their entries,
    and the columns dropped to ``k`` by an entry of length 0 are the next
    frontier, until it is empty.  Then ``v_j -= d_j * eps``.  Returns the
    steps (a gather or a non-empty frontier's relaxation each), as the
    kernel does; None for dense input (the driver then sweeps, as on the
    GPU).  `sweeps` is not used: the buckets always converge."""
    if st.dense:
        return None
    from .. import csr

    cptr, crow, ccost = _transpose(st)
    d = np.where(st.owner < 0, 0, lmax).astype(np.int64)
    steps = 0
    for k in range(lmax):
        front = np.flatnonzero(d == k)
        steps += 1
        while front.shape[0]:
            owner, pos = csr.expand_segments(cptr, front)
            j = front[owner]
            i = crow[pos]
            ki = st.x[i].astype(np.int64)
            ok = (ki >= 0) & (ki != j)
            j, ki, c, ci = j[ok], ki[ok], ccost[pos[ok]], st.cx[i[ok]]
            if st.kind != "i":
                keep = c < np.inf
                j, ki, c, ci = j[keep], ki[keep], c[keep], ci[keep]
            r = np.maximum(_h(st, c, j) - _h(st, ci, ki) + eps, 0)
            q = r // eps if st.kind == "i" else np.floor(r / eps)
            nd = k + np.minimum(q, lmax).astype(np.int64)
            near = nd < lmax
            ki, nd = ki[near], nd[near]
            zero = np.unique(ki[nd == k])
            front = zero[d[zero] > k]
            np.minimum.at(d, ki, nd)
            steps += 1
    st.v -= d.astype(st.v.dtype) * eps
    return steps


def update_start(st, lmax):
    """gpumatch_lap_update_start: the distances of a global price update
    start at 0 on the free columns and `lmax` on the others (both buffers)."""
    st.dist[:] = lmax
    st.dist[:, st.owner < 0] = 0


def update_sweep(st, eps, lmax, par):
    """gpumatch_lap_update_sweep: one Jacobi sweep of Bellman-Ford toward the
    free columns.  For every assigned row ``i`` (column ``k = x_i``) and
    entry ``j != k``: ``l_ij = floor((h_ij - h_ik + eps) / eps)`` (>= 0 by
    eps-complementary slackness; at most `lmax`), and
    ``dist[1-par][k] = min(dist[par][k], min_j dist[par][j] + l_ij)``;
    ``counts[7]`` = 1 when a distance dropped (the driver set it to 0)."""
    held = np.flatnonzero(st.x >= 0)
    old, new = st.dist[par], st.dist[1 - par]
    if held.shape[0] == 0:
        return
    owner, cols, h, offs = _reduced(st, held)
    k = st.x[held].astype(np.int64)
    hx = _h(st, st.cx[held], k)
    ok = (cols != k[owner]) & (h < st.inf)
    with np.errstate(invalid="ignore"):
        r = h - hx[owner] + eps
    if st.kind == "i":
        ell = np.clip(r // eps, 0, lmax)
    else:
        ell = np.clip(np.floor(r / eps), 0, lmax)
    cand = np.where(ok, old[cols] + ell.astype(np.int64), np.int64(lmax))
    best = np.minimum(_segment_min(cand, offs, np.int64(lmax)), old[k])
    new[k] = best
    if (best < old[k]).any():
        st.counts[7] = 1


def update_apply(st, eps, par):
    """gpumatch_lap_update_apply: ``v_j -= dist[par][j] * eps``: each column
    gets more expensive by its distance to a free column, which keeps every
    assigned row within eps of its best column (the distances satisfy
    ``d_k <= d_j + l_ij``)."""
    st.v -= st.dist[par].astype(st.v.dtype) * eps


def batch_dense(bt):
    """gpumatch_lap_batch_dense: one block per problem runs the whole
    epsilon-scaling auction of its dense square problem (the phases of
    :func:`gpumatch.lap._driver.run_phases` with no early phase ends and no
    host tail); a problem whose ``status`` is already 1 is skipped, and one
    the auction does not finish gets ``status`` 1.  The twin runs the same steps problem by problem with the
    kernels above; ``bt`` is a :class:`gpumatch.lap._driver.BatchState`."""
    import sys

    twins = sys.modules[__name__]
    for b in range(bt.k):
        if bt.status[b]:
            continue                    # left to the host from the start
        st = bt.problem_state(b)
        bt.status[b] = 0 if bt.solve_one(st, twins) else 1
        bt.x[b] = st.x

"""NumPy twins of the G-PR kernels in ``gpr.cu``.

Each function has the signature and meaning of its CUDA twin in
:mod:`gpumatch.matching._kernels_cuda`.  The CUDA kernels are racy by design;
each NumPy twin runs one legal schedule of its kernel: every thread does all
its reads, then every thread does all its writes, in slot order (so NumPy's
last-write-wins fancy assignment is the race outcome "the last writer
wins").  The driver (:mod:`gpumatch.matching._driver`) is the same for both.

The state ``st`` is a :class:`gpumatch.matching._driver.GPRState`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["greedy_round", "greedy_degree", "fix_matching", "global_relabel", "relabel_collect", "push",
           "fixup", "count_active", "push_loop", "collect_active", "list_start", "list_step", "list_length",
           "list_array"]

#: Columns longer than this take the first free row in ``greedy_degree``
#: (GPR_HEAVY of ``gpr.cu``).
HEAVY = 32


def _expand(ptr, verts):
    """Owner (index into `verts`), CSR position, and segment offsets of the
    stored entries of the vertices `verts`."""
    starts = ptr[verts]
    lens = ptr[verts + 1] - starts
    offs = np.zeros(verts.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offs[1:])
    owner = np.repeat(np.arange(verts.shape[0], dtype=np.int64), lens)
    pos = np.arange(offs[-1], dtype=np.int64) - offs[owner] + starts[owner]
    return owner, pos, offs, lens


def _window_scan(ptr, ind, labels, verts, stop, inf, lo, hi):
    """One window of the scan: entries ``[lo, hi)`` of each listed vertex.

    Returns, per vertex, the first position with label ``<= stop`` (or -1)
    and the first minimum of the window (its position and label)."""
    k = verts.shape[0]
    lens = hi - lo
    offs = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(lens, out=offs[1:])
    owner = np.repeat(np.arange(k, dtype=np.int64), lens)
    pos = np.arange(offs[-1], dtype=np.int64) - offs[owner] + lo[owner]
    lab = labels[ind[pos]]
    seg = offs[:-1]
    hit_pos = np.full(k, -1, dtype=np.int64)
    hidx = np.flatnonzero(lab <= stop[owner])
    if hidx.shape[0]:
        ho = owner[hidx]
        first = np.ones(hidx.shape[0], dtype=bool)
        first[1:] = ho[1:] != ho[:-1]
        hit_pos[ho[first]] = pos[hidx[first]]
    wmin = np.minimum.reduceat(lab, seg) if lab.shape[0] else np.zeros(k, dtype=labels.dtype)
    midx = np.flatnonzero(lab == wmin[owner])
    mo = owner[midx]
    first = np.ones(midx.shape[0], dtype=bool)
    first[1:] = mo[1:] != mo[:-1]
    min_pos = np.empty(k, dtype=np.int64)
    min_pos[mo[first]] = pos[midx[first]]
    return hit_pos, min_pos, wmin


def first_min_stop(ptr, ind, labels, verts, stop, inf):
    """The scan of the push kernel, vectorised.

    For each ``v`` of `verts`, scan its entries in order keeping the first
    neighbour of minimum label and stop after the first label ``<= stop``;
    labels ``>= inf`` never count.  Returns ``(neighbor, label)``: ``-1`` and
    `inf` when nothing was found, exactly as the CUDA loop.  The scan runs
    in windows of doubling width, so a vertex that stops early costs only
    the entries before its stop, as on the GPU.
    """
    k = verts.shape[0]
    nb = np.full(k, -1, dtype=ind.dtype)
    best = np.full(k, inf, dtype=labels.dtype)
    if k == 0:
        return nb, best
    start = ptr[verts].astype(np.int64)
    end = ptr[verts + 1].astype(np.int64)
    bpos = np.full(k, -1, dtype=np.int64)
    todo = np.flatnonzero(end > start)
    width = 16
    done_off = 0
    while todo.shape[0]:
        lo = start[todo] + done_off
        hi = np.minimum(end[todo], lo + width)
        hit_pos, min_pos, wmin = _window_scan(ptr, ind, labels, verts[todo], stop[todo], inf, lo, hi)
        hit = hit_pos >= 0
        better = (wmin < best[todo]) & ~hit
        upd = todo[better]
        best[upd] = wmin[better]
        bpos[upd] = min_pos[better]
        # A hit ends the scan there: every earlier entry has a label above
        # the stop level, so the hit is the first minimum of the prefix.
        th = todo[hit]
        bpos[th] = hit_pos[hit]
        best[th] = labels[ind[hit_pos[hit]]]
        done_off += width
        width *= 2
        todo = todo[~hit & (end[todo] > start[todo] + done_off)]
    ok = best < inf
    nb[ok] = ind[bpos[ok]]
    best[~ok] = inf
    return nb, best


def greedy_round(st):
    """Every unmatched column takes the first free row of its list (all read
    the free rows first, then all write; the last writer keeps a row), then
    the losers are rolled back."""
    v = np.flatnonzero(st.mu_col < 0).astype(st.idx, copy=False)
    if v.shape[0] == 0:
        return
    taken = (st.mu_row >= 0).astype(st.idx)
    u, lab = first_min_stop(st.cptr, st.cind, taken, v, np.zeros(v.shape[0], dtype=st.idx), 1)
    ok = u >= 0
    v, u = v[ok], u[ok]
    st.mu_row[u] = v
    st.mu_col[v] = u
    lost = st.mu_row[u] != v
    st.mu_col[v[lost]] = -1


def greedy_degree(st):
    """Degree-aware greedy (twin of three CUDA launches).

    Schedule: (1) free rows of degree one propose to their column, the
    first proposer (lowest row) of a free column wins; (2) free columns of
    degree one, then (3) all free columns, in rounds: every free column
    reads the free rows, picks its free row of least degree (the first;
    columns longer than ``HEAVY`` the first free row), the lowest proposer
    of a row wins the CAS, the losers retry in the next round with fresh
    reads, until no column finds a free row."""
    rdeg = np.diff(st.rptr)
    u = np.flatnonzero((st.mu_row < 0) & (rdeg == 1))
    if u.shape[0]:
        c = st.rind[st.rptr[u]]
        free = st.mu_col[c] < 0
        u, c = u[free], c[free]
        c, first = np.unique(c, return_index=True)
        u = u[first]
        st.mu_col[c] = u
        st.mu_row[u] = c
    cdeg = np.diff(st.cptr)
    big = np.iinfo(st.idx).max
    for max_deg in (1, None):
        part = (cdeg >= 1) if max_deg is None else (cdeg == max_deg)
        heavy_col = cdeg > HEAVY
        while True:
            v = np.flatnonzero((st.mu_col < 0) & part).astype(st.idx, copy=False)
            if v.shape[0] == 0:
                break
            free = st.mu_row < 0
            key = np.where(free, rdeg, big).astype(st.idx)
            zero = np.where(free, 0, big).astype(st.idx)
            u = np.full(v.shape[0], -1, dtype=st.idx)
            hv = heavy_col[v]
            for sel, lab in ((~hv, key), (hv, zero)):
                if sel.any():
                    w = v[sel]
                    nb, best = first_min_stop(st.cptr, st.cind, lab, w, np.ones(w.shape[0], dtype=st.idx), big)
                    u[sel] = np.where(best < big, nb, -1)
            part[v[u < 0]] = False  # no free row: the column gives up
            ok = u >= 0
            if not ok.any():
                break
            v, u = v[ok], u[ok]
            u, first = np.unique(u, return_index=True)  # v ascending: lowest proposer wins
            v = v[first]
            st.mu_row[u] = v
            st.mu_col[v] = u


def fix_matching(st):
    """FixMatching on both sides: rows whose column does not point back, then
    columns whose row does not point back (and dropped columns) become -1.
    (The CUDA twin does both sides in one launch: same result.)"""
    r = np.flatnonzero(st.mu_row >= 0)
    c = st.mu_row[r]
    st.mu_row[r[st.mu_col[c] != r]] = -1
    mc = st.mu_col
    bad = mc < 0
    ok = ~bad
    cols = np.flatnonzero(ok)
    bad[cols[st.mu_row[mc[cols]] != cols]] = True
    mc[bad] = -1


def global_relabel(st):
    """Exact labels by a level-synchronous BFS from the free rows over a
    frontier worklist; returns the largest finite label (maxLevel).  Free
    rows without entries get label 0 but start no search (they reach
    nothing); ``st.extra["free_rows"]`` counts all free rows."""
    inf = st.inf
    free = st.mu_row < 0
    st.psi_row[:] = np.where(free, 0, inf)
    st.psi_col[:] = inf
    st.extra["free_rows"] = int(np.count_nonzero(free))
    frontier = np.flatnonzero(free & (st.rptr[1:] > st.rptr[:-1]))
    st.extra["roots_est"] = int(frontier.shape[0])
    level = 0
    max_level = 0
    while frontier.shape[0]:
        _, pos, _, _ = _expand(st.rptr, frontier)
        cols = st.rind[pos]
        cols = cols[st.psi_col[cols] == inf]
        if cols.shape[0] == 0:
            break
        # Deduplicate without sorting: the last writer of each column keeps it.
        slot = st.extra.get("bfs_slot")
        if slot is None:
            slot = st.extra["bfs_slot"] = np.empty(st.n, dtype=np.int64)
        ar = np.arange(cols.shape[0])
        slot[cols] = ar
        cols = cols[slot[cols] == ar]
        st.psi_col[cols] = level + 1
        max_level = level + 1
        rows = st.mu_col[cols]
        rows = rows[rows >= 0]
        if rows.shape[0]:
            st.psi_row[rows] = level + 2
            max_level = level + 2
        frontier = rows
        level += 2
    return max_level


def relabel_collect(st, fix=False):
    """:func:`global_relabel` (after :func:`fix_matching` when `fix`) then
    :func:`collect_active`; returns ``(max_level, active)``."""
    if fix:
        fix_matching(st)
    return global_relabel(st), collect_active(st)


def collect_active(st):
    """The free columns that the last global relabel reached, in order."""
    return np.flatnonzero((st.mu_col < 0) & (st.psi_col < st.inf)).astype(st.idx, copy=False)


def push(st, active, it, out=None):
    """One push iteration over `active` (Ac); returns the next list (Ap),
    written into `out` when given (a buffer of the same length).

    Schedule: slots in order; a column listed twice is processed by its
    first slot only (the stamp ``iA``); all scans read the labels and the
    matching before any push writes."""
    nxt = np.full(active.shape[0], -1, dtype=active.dtype) if out is None else out
    if out is not None:
        nxt.fill(-1)
    slots = np.flatnonzero(active >= 0)
    v = active[slots]
    keep = st.stamp[v] != it
    slots, v = slots[keep], v[keep]
    uniq, first = np.unique(v, return_index=True)
    if uniq.shape[0] != v.shape[0]:
        first.sort()
        slots, v = slots[first], v[first]
    st.stamp[v] = it
    u0 = st.mu_col[v]
    matched = np.zeros(v.shape[0], dtype=bool)
    has = u0 >= 0
    matched[has] = st.mu_row[u0[has]] == v[has]
    slots, v = slots[~matched], v[~matched]
    u, best = first_min_stop(st.cptr, st.cind, st.psi_row, v, st.psi_col[v] - 1, st.inf)
    ok = u >= 0
    # reads
    vs, us, bs, ss = v[ok], u[ok], best[ok], slots[ok]
    w = st.mu_row[us]
    # writes
    st.mu_row[us] = vs
    st.mu_col[vs] = us
    st.psi_col[vs] = bs + 1
    st.psi_row[us] = bs + 2
    nxt[ss] = np.where(w != vs, w, -1)
    st.mu_col[v[~ok]] = -2
    return nxt


def fixup(st, active, nxt):
    """Columns whose row kept another column go back to their slot, unmatched."""
    slots = np.flatnonzero(active >= 0)
    v = active[slots]
    u = st.mu_col[v]
    has = u >= 0
    lost = np.zeros(v.shape[0], dtype=bool)
    lost[has] = st.mu_row[u[has]] != v[has]
    st.mu_col[v[lost]] = -1
    nxt[slots[lost]] = v[lost]


def count_active(active):
    """Number of non-empty slots (a host value)."""
    return int(np.count_nonzero(active >= 0))


def push_loop(st, active, it, iters):
    """Up to `iters` iterations of :func:`push` + :func:`fixup` (stamps `it`,
    `it` + 1, ...), stopping after the first that leaves the list empty;
    returns the number of iterations run.  The CUDA twin runs them in one
    launch of one block; this is the same per-iteration loop."""
    spare = None
    done = 0
    while done < iters:
        nxt = push(st, active, it + done, spare)
        fixup(st, active, nxt)
        spare, active = active, nxt
        done += 1
        if count_active(active) == 0:
            break
    return done


def list_start(st, active):
    """Make `active` (a dense list of columns) the current list of
    :func:`list_step`."""
    st.extra["list_np"] = np.asarray(active).copy()


def list_step(st, it):
    """One :func:`push` (stamp `it`) and :func:`fixup` over the current
    list, then the list shrinks to its non-empty slots, in slot order (the
    CUDA twin appends them in an unspecified order, fused with the fix-up,
    and keeps the length on the device)."""
    active = st.extra["list_np"]
    if active.shape[0] == 0:
        return
    nxt = push(st, active, it)
    fixup(st, active, nxt)
    st.extra["list_np"] = nxt[nxt >= 0]


def list_length(st):
    """Length of the current list (a host value)."""
    return int(st.extra["list_np"].shape[0])


def list_array(st):
    """The current list as an array."""
    return st.extra["list_np"]

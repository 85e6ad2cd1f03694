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

__all__ = ["greedy_round", "greedy_degree", "fix_matching", "global_relabel", "relabel_collect", "claim",
           "push", "count_active", "push_loop", "collect_active", "list_start", "list_step", "list_length",
           "list_array", "walk", "walk_mates", "chain_count", "chain_init", "chain_jump", "chain_match",
           "cycle_init", "cycle_min", "cycle_rank_init", "cycle_rank", "cycle_match"]

#: Rounds of ``greedy_degree``'s proposals at most (per part: degree-one
#: columns, then all).  Each round costs a scan of the free columns' lists;
#: the CUDA twin retries by CAS instead of rounds.  On dense blocks where
#: many columns want the same row a round may add only a few pairs; the
#: cap keeps the heuristic O(rounds * nnz) and leaves the rest to G-PR.
GREEDY_ROUNDS = 16


#: BFS steps (one step: a column level and a row level) a global relabel
#: runs before it first looks whether it has reached every free column
#: (:func:`unreached`); then it looks after each further quarter of its
#: depth.  A shallow BFS never looks; a deep one (chains, bands, shuffled
#: Jacobians: 10^4..10^5 levels beyond the last free column) stops there.
REACH_CHECK = 256


def first_check(st):
    """The BFS step of a relabel's first look at the free columns it has
    not reached: step 0 after a relabel that ran :data:`REACH_CHECK` steps
    or more (the matching may now be complete: no BFS at all), else
    :data:`REACH_CHECK`; never (no early stop) on a state with
    ``st.extra["exact_bfs"]`` set, whose caller reads the labels as the
    exact alternating reachability (the minimum cut of a unit network:
    :mod:`gpumatch.flow._unit`)."""
    if st.extra.get("exact_bfs"):
        return np.iinfo(np.int64).max
    return 0 if st.extra.get("bfs_depth", 0) >= REACH_CHECK else REACH_CHECK


def next_check(step):
    """The next look after one at `step` (a quarter of the depth on, at
    least :data:`REACH_CHECK` steps: the looks cost a fifth of the BFS at
    most)."""
    return step + max(REACH_CHECK, step // 4)


#: Vertices per slice of :func:`unreached` and :func:`fill_lower_bounds`:
#: their masks are temporaries, kept to a few tens of MB on any graph.
REACH_SLICE = 1 << 24


def unreached(st):
    """Free columns with entries that the running BFS has not labelled (either
    backend's arrays): 0 means every augmenting path's free end has its
    exact label, so the BFS can stop."""
    total = 0
    for a in range(0, st.n, REACH_SLICE):
        b = min(st.n, a + REACH_SLICE)
        has = st.cptr[a + 1:b + 1] > st.cptr[a:b]   # (not cached: the dynamic solver re-points the state's arrays)
        total += int(st.xp.count_nonzero((st.mu_col[a:b] < 0) & has & (st.psi_col[a:b] >= st.inf)))
    return total


def fill_lower_bounds(st, step):
    """After a BFS stopped with the rows of label ``2 step`` as its frontier
    (not expanded), give the vertices it did not reach the least labels they
    can have: ``2 step + 1`` to matched columns and ``2 step + 2`` to rows.
    Labels stay valid lower bounds of the distances (push-relabel needs no
    more); free columns stay unreached (none has entries: see
    :func:`unreached`), so no new active column appears."""
    xp = st.xp
    inf = st.inf
    for a in range(0, st.m, REACH_SLICE):
        pr = st.psi_row[a:a + REACH_SLICE]
        pr[...] = xp.where(pr >= inf, pr.dtype.type(2 * step + 2), pr)
    for a in range(0, st.n, REACH_SLICE):
        pc = st.psi_col[a:a + REACH_SLICE]
        pc[...] = xp.where((pc >= inf) & (st.mu_col[a:a + REACH_SLICE] >= 0), pc.dtype.type(2 * step + 1), pc)


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


def _window_scan(ind, labels, start, length, off, stop, lo, hi):
    """One window of the scan: entries ``[lo, hi)`` of the scan order of
    each listed vertex (entry ``k`` is CSR position
    ``start + (off + k) % length``).

    Returns, per vertex, the first position with label ``<= stop`` (or -1)
    and the first minimum of the window (its position and label)."""
    k = start.shape[0]
    lens = hi - lo
    offs = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(lens, out=offs[1:])
    owner = np.repeat(np.arange(k, dtype=np.int64), lens)
    q = np.arange(offs[-1], dtype=np.int64) - offs[owner] + lo[owner] + off[owner]
    q -= np.where(q >= length[owner], length[owner], 0)
    pos = start[owner] + q
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


def first_min_stop(ptr, ind, labels, verts, stop, inf, rotate=False):
    """The scan of the claim kernel, vectorised.

    For each ``v`` of `verts`, scan its entries in order keeping the first
    neighbour of minimum label and stop after the first label ``<= stop``;
    labels ``>= inf`` never count.  With `rotate`, the scan of ``v`` starts
    at its entry ``v mod deg(v)`` and wraps around (``gpr_rot`` of
    ``gpr.cu``).  Returns ``(neighbor, label)``: ``-1`` and `inf` when
    nothing was found, exactly as the CUDA loop.  The scan runs in windows
    of doubling width, so a vertex that stops early costs only the entries
    before its stop, as on the GPU.
    """
    k = verts.shape[0]
    nb = np.full(k, -1, dtype=ind.dtype)
    best = np.full(k, inf, dtype=labels.dtype)
    if k == 0:
        return nb, best
    start = ptr[verts].astype(np.int64)
    length = ptr[verts + 1].astype(np.int64) - start
    if rotate:
        off = np.asarray(verts, dtype=np.int64) % np.maximum(length, 1)
    else:
        off = np.zeros(k, dtype=np.int64)
    bpos = np.full(k, -1, dtype=np.int64)
    todo = np.flatnonzero(length > 0)
    width = 16
    done_off = 0
    while todo.shape[0]:
        lo = np.full(todo.shape[0], done_off, dtype=np.int64)
        hi = np.minimum(length[todo], done_off + width)
        hit_pos, min_pos, wmin = _window_scan(ind, labels, start[todo], length[todo], off[todo], stop[todo],
                                              lo, hi)
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
        todo = todo[~hit & (length[todo] > done_off)]
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


#: ``GPR_HEAVY`` of ``gpr.cu``: the columns of more entries are greedy's last pass.
GREEDY_HEAVY = 32


def greedy_degree(st):
    """Degree-aware greedy (twin of four CUDA launches).

    Schedule: (1) free rows of degree one propose to their column, the
    first proposer (lowest row) of a free column wins; (2) free columns of
    degree one, then (3) all free columns, in rounds: every free column
    reads the free rows and picks its free row of least degree (the first
    in its rotated scan order, ``gpr_rot``), the lowest proposer of a row
    wins the CAS, the losers retry in the next round with fresh reads,
    until no column finds a free row (the CAS loop of the CUDA twin: a
    maximal matching among the columns taking part).  The rounds stop
    early after :data:`GREEDY_ROUNDS`; G-PR matches what is left.  The
    columns of more than :data:`GREEDY_HEAVY` entries take their turn after
    the others (the CUDA twin's fourth launch)."""
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
    for lo, hi in ((1, 1), (1, GREEDY_HEAVY), (GREEDY_HEAVY + 1, None)):
        part = (cdeg >= lo) if hi is None else ((cdeg >= lo) & (cdeg <= hi))
        for _ in range(GREEDY_ROUNDS):
            v = np.flatnonzero((st.mu_col < 0) & part).astype(st.idx, copy=False)
            if v.shape[0] == 0:
                break
            key = np.where(st.mu_row < 0, rdeg, big).astype(st.idx)
            u, best = first_min_stop(st.cptr, st.cind, key, v, np.ones(v.shape[0], dtype=st.idx), big,
                                     rotate=True)
            u = np.where(best < big, u, -1)
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


def global_relabel(st, max_steps=None):
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
    check = first_check(st)
    st.extra["bfs_truncated"] = False
    while frontier.shape[0]:
        step = level // 2
        if max_steps is not None and step >= max_steps:   # the caller's cap: labels left partial
            st.extra["bfs_truncated"] = True
            break
        if step >= check:   # a deep BFS: stop once it has reached every free column (as the CUDA twin)
            if unreached(st) == 0:
                fill_lower_bounds(st, step)
                break
            check = next_check(step)
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
    st.extra["bfs_depth"] = level // 2
    return max_level


def relabel_collect(st, fix=False, max_steps=None):
    """:func:`global_relabel` (after :func:`fix_matching` when `fix`) then
    :func:`collect_active`; returns ``(max_level, active)``.  With
    `max_steps`, a BFS still going after that many steps stops there and
    sets ``st.extra["bfs_truncated"]`` (the labels are then partial: the
    caller must not trust them)."""
    if fix:
        fix_matching(st)
    return global_relabel(st, max_steps), collect_active(st)


def collect_active(st):
    """The free columns that the last global relabel reached, in order."""
    return np.flatnonzero((st.mu_col < 0) & (st.psi_col < st.inf)).astype(st.idx, copy=False)


def claim(st, active, out=None):
    """The claim phase of one push iteration over `active` (Ac); returns the
    row each slot's column claimed (-1: empty slot, or the column found no
    reachable row and is dropped, ``mu_col = -2``), written into `out` when
    given (a buffer of the same length).

    Schedule: every scan reads the labels of the start of the iteration
    (the CUDA twin writes no row label in this phase either); of the
    columns claiming one row, the last in slot order keeps the claim (one
    outcome of the CUDA twin's racing writes)."""
    target = np.full(active.shape[0], -1, dtype=active.dtype) if out is None else out
    if out is not None:
        target.fill(-1)
    slots = np.flatnonzero(active >= 0)
    v = active[slots]
    u, best = first_min_stop(st.cptr, st.cind, st.psi_row, v, st.psi_col[v] - 1, st.inf, rotate=True)
    ok = u >= 0
    st.mu_col[v[~ok]] = -2
    v, u, slots = v[ok], u[ok], slots[ok]
    st.psi_col[v] = best[ok] + 1
    st.claim[u] = v
    target[slots] = u
    return target


def push(st, active, nxt):
    """The push phase after :func:`claim`: the column whose claim survived
    takes its row (``w = mu(u); mu(u) = v; mu(v) = u; psi(u) = psi(v) + 1``)
    and its slot hands on `w`; a column whose claim lost stays in its slot.
    `nxt` holds the targets and becomes Ap in place."""
    slots = np.flatnonzero((active >= 0) & (nxt >= 0))
    v, u = active[slots], nxt[slots]
    win = st.claim[u] == v
    vw, uw = v[win], u[win]
    w = st.mu_row[uw]
    st.mu_row[uw] = vw
    st.mu_col[vw] = uw
    st.psi_row[uw] = st.psi_col[vw] + 1
    nxt[slots[win]] = w
    nxt[slots[~win]] = v[~win]


def count_active(active):
    """Number of non-empty slots (a host value)."""
    return int(np.count_nonzero(active >= 0))


def push_loop(st, active, iters):
    """Up to `iters` iterations of :func:`claim` + :func:`push`, stopping
    after the first that leaves the list empty; returns the number of
    iterations run.  The CUDA twin runs them in one launch of one block;
    this is the same per-iteration loop."""
    spare = None
    done = 0
    while done < iters:
        nxt = claim(st, active, spare)
        push(st, active, nxt)
        spare, active = active, nxt
        done += 1
        if count_active(active) == 0:
            break
    return done


def list_start(st, active):
    """Make `active` (a dense list of columns) the current list of
    :func:`list_step`."""
    st.extra["list_np"] = np.asarray(active).copy()


def list_step(st):
    """One :func:`claim` + :func:`push` over the current list, then the list
    shrinks to its non-empty slots, in slot order (the CUDA twin appends
    them in an unspecified order, fused with the push, and keeps the length
    on the device)."""
    active = st.extra["list_np"]
    if active.shape[0] == 0:
        return
    nxt = claim(st, active)
    push(st, active, nxt)
    st.extra["list_np"] = nxt[nxt >= 0]


def list_length(st):
    """Length of the current list (a host value)."""
    return int(st.extra["list_np"].shape[0])


def list_array(st):
    """The current list as an array."""
    return st.extra["list_np"]


def walk(st, active, cap):
    """Twin of ``gpumatch_walk`` (``walk.cu``): one walk per listed column,
    the threads one after another (a legal schedule of the atomic
    exchanges: each walk sees the ones before it done).  Each column takes
    its row of least label, the row is relabelled to the second-least + 2,
    and the walk goes on with the row's old mate until a free row, a column
    with no reachable row, or `cap` pushes.  Returns ``(pushes, walks that
    reached a free row)``."""
    inf = st.inf
    cptr, cind, mu_row, psi = st.cptr, st.cind, st.mu_row, st.psi_row
    pushes = done = 0
    for c in np.asarray(active).tolist():
        steps = 0
        while c >= 0 and steps < cap:
            rows = cind[cptr[c]:cptr[c + 1]]
            if rows.shape[0] == 0:
                break
            labels = psi[rows]
            k = int(np.argmin(labels))
            l1 = int(labels[k])
            if l1 >= inf:
                break
            l2 = int(np.partition(labels, 1)[1]) if labels.shape[0] > 1 else inf
            best = int(rows[k])
            old = int(mu_row[best])
            mu_row[best] = c
            psi[best] = inf if l2 >= inf - 2 else l2 + 2
            steps += 1
            c = old
        pushes += steps
        done += int(c < 0 and steps > 0)
    return pushes, done


def walk_mates(st):
    """Twin of ``gpumatch_walk_mates``: ``mu_col`` from ``mu_row``."""
    st.mu_col.fill(-1)
    rows = np.flatnonzero(st.mu_row >= 0)
    st.mu_col[st.mu_row[rows]] = rows


# ---------------------------------------------------------------------------
# The chain rule (``chain.cu``): Karp–Sipser's degree-one rule along chains of
# degree-two vertices, by pointer jumping.  Vertices in one range: row u is
# u, column c is m + c; records as the CUDA header describes (64-bit words:
# far, dist, cont, done).

_CH_DONE = np.uint64(1 << 63)
_CH_CONT = np.uint64(1 << 62)
_CH_DIST = np.uint64((1 << 30) - 1)
_CH_LOW = np.uint64(0xFFFFFFFF)
_CH_CYCLE = np.uint64(0xFFFFFFFF)


def _chain_lists(st):
    """``(deg, first, second)`` of every vertex in the one range: its list's
    length and its first two entries as unified ids (-1 where missing)."""
    m = st.m
    rdeg, cdeg = np.diff(st.rptr).astype(np.int64), np.diff(st.cptr).astype(np.int64)
    deg = np.concatenate([rdeg, cdeg])
    out = []
    for k in (0, 1):
        ent = np.full(deg.shape[0], -1, dtype=np.int64)
        r = np.flatnonzero(rdeg > k)
        ent[r] = st.rind[st.rptr[r] + k].astype(np.int64) + m
        c = np.flatnonzero(cdeg > k)
        ent[m + c] = st.cind[st.cptr[c] + k]
        out.append(ent)
    return deg, out[0], out[1]


def chain_count(st):
    """Twin of ``gpumatch_chain_count``: ``(interior, pendants)``, the
    vertices of degree two whose neighbours both have degree one or two,
    and the vertices of degree one."""
    deg, a0, a1 = _chain_lists(st)
    in_s = (deg == 1) | (deg == 2)
    two = np.flatnonzero(deg == 2)
    interior = int(np.count_nonzero(in_s[a0[two]] & in_s[a1[two]]))
    return interior, int(np.count_nonzero(deg == 1))


def chain_init(st):
    """Twin of ``gpumatch_chain_init``: the first chain records, ``u64[2V]``."""
    deg, a0, a1 = _chain_lists(st)
    V = deg.shape[0]
    in_s = (deg == 1) | (deg == 2)
    P = np.repeat(np.arange(V, dtype=np.uint64) | _CH_DONE, 2)
    for s, ent in ((0, a0), (1, a1)):
        v = np.flatnonzero(in_s & (deg > s))
        w = ent[v]
        keep = in_s[w]
        v, w = v[keep], w[keep]
        cont = (a0[w] == v).astype(np.uint64)
        P[2 * v + s] = w.astype(np.uint64) | np.uint64(1 << 32) | (cont << np.uint64(62))
    return P


def chain_jump(st, P, rounds=1):
    """Twin of `rounds` launches of ``gpumatch_chain_jump`` (each round
    synchronous: all reads, then all writes); ``(live, progress)`` of the
    last: a record is still not done, a record became done."""
    V = np.uint64(P.shape[0] // 2)
    live = progress = False
    for _ in range(rounds):
        i = np.flatnonzero((P & _CH_DONE) == 0)
        if i.shape[0] == 0:
            return False, False
        w = P[i]
        x = P[2 * (w & _CH_LOW) + ((w >> np.uint64(62)) & np.uint64(1))]
        far = x & _CH_LOW
        dist = ((w >> np.uint64(32)) & _CH_DIST) + ((x >> np.uint64(32)) & _CH_DIST)
        rec = far | (dist << np.uint64(32)) | (x & (_CH_CONT | _CH_DONE))
        rec[(far == _CH_CYCLE) | (dist >= V)] = _CH_DONE | _CH_CYCLE
        P[i] = rec
        done = (rec & _CH_DONE) != 0
        live, progress = not bool(done.all()), bool(done.any())
    return live, progress


def chain_match(st, P):
    """Twin of ``gpumatch_chain_match``: the rule's pairs into the empty
    matching.  The claims of vertices outside S go to the lowest claimant
    (the threads in id order)."""
    m = st.m
    deg, a0, a1 = _chain_lists(st)
    in_s = (deg == 1) | (deg == 2)
    v = np.flatnonzero(in_s)
    r0, r1 = P[2 * v], P[2 * v + 1]
    e0, e1 = (r0 & _CH_LOW).astype(np.int64), (r1 & _CH_LOW).astype(np.int64)
    ok = ((r0 & r1 & _CH_DONE) != 0) & (e0 != int(_CH_CYCLE)) & (e1 != int(_CH_CYCLE))
    v, r0, r1, e0, e1 = v[ok], r0[ok], r1[ok], e0[ok], e1[ok]
    p0, p1 = deg[e0] == 1, deg[e1] == 1
    start = p0 | p1
    s = np.where(p0 & p1, ((e0 == e1) | (e1 < e0)).astype(np.int64), np.where(p0, 0, 1))
    dist = (np.where(s == 1, r1, r0) >> np.uint64(32)) & _CH_DIST
    k = np.where((dist & np.uint64(1)) == 1, s, 1 - s)
    take = start & (k < deg[v])
    v, k = v[take], k[take]
    w = np.where(k == 0, a0[v], a1[v])
    inner = in_s[w]
    rows = v < m
    a, b = v[inner & rows], w[inner & rows]
    st.mu_row[a] = b - m
    a, b = v[inner & ~rows], w[inner & ~rows]
    st.mu_col[a - m] = b
    v, w = v[~inner], w[~inner]          # claims of vertices outside S: the lowest claimant wins
    w, first = np.unique(w, return_index=True)
    v = v[first]
    rows = v < m
    st.mu_row[v[rows]] = w[rows] - m
    st.mu_col[w[rows] - m] = v[rows]
    st.mu_col[v[~rows] - m] = w[~rows]
    st.mu_row[w[~rows]] = v[~rows] - m



# Cycles (``chain.cu``, its cycle section): pass A finds each cycle's least
# vertex id, pass B every state's steps to it; records as the CUDA header
# describes.

_CY_NONE = np.uint64(0xFFFFFFFFFFFFFFFF)
_CY_FOUND = np.uint64(1 << 63)
_CY_DIST = np.uint64((1 << 31) - 1)


def _cycle_steps(st, v, a0, a1):
    """The states one step from (v, 0) and (v, 1) (``cy_step``), and the
    vertices they reach: ``(state0, state1, w0, w1)``."""
    out = []
    for ent in (a0, a1):
        w = ent[v]
        c = (a0[w] == v).astype(np.uint64)
        out.append((np.uint64(2) * w.astype(np.uint64) + c, w))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def cycle_init(st, P):
    """Twin of ``gpumatch_cycle_init``: pass A's first records in `P`; the
    number of vertices on cycles."""
    deg, a0, a1 = _chain_lists(st)
    rec = P[0::2]
    cyc = (((rec & _CH_DONE) == 0) | ((rec & _CH_LOW) == _CH_CYCLE)) & (deg == 2)
    v = np.flatnonzero(cyc)
    s0, s1, w0, w1 = _cycle_steps(st, v, a0, a1)
    P.fill(_CY_NONE)
    P[2 * v] = s0 | (w0.astype(np.uint64) << np.uint64(32))
    P[2 * v + 1] = s1 | (w1.astype(np.uint64) << np.uint64(32))
    return int(v.shape[0])


def cycle_min(st, P, rounds=1):
    """Twin of `rounds` launches of ``gpumatch_cycle_min`` (synchronous
    rounds); True when a least id changed in the last one."""
    i = np.flatnonzero(P != _CY_NONE)
    changed = False
    for _ in range(rounds if i.shape[0] else 0):
        rec = P[i]
        x = P[(rec & _CH_LOW).astype(np.int64)]
        low = np.minimum(rec >> np.uint64(32), x >> np.uint64(32))
        P[i] = (x & _CH_LOW) | (low << np.uint64(32))
        changed = bool(np.any(low != (rec >> np.uint64(32))))
    return changed


def cycle_rank_init(st, P):
    """Twin of ``gpumatch_cycle_rank_init``: pass B's first records."""
    deg, a0, a1 = _chain_lists(st)
    v = np.flatnonzero(P[0::2] != _CY_NONE)
    r = np.minimum(P[2 * v] >> np.uint64(32), P[2 * v + 1] >> np.uint64(32)).astype(np.int64)
    s0, s1, w0, w1 = _cycle_steps(st, v, a0, a1)
    for s, state, w in ((0, s0, w0), (1, s1, w1)):
        P[2 * v + s] = np.where(w == r, _CY_FOUND | np.uint64(1 << 32) | (state & np.uint64(1)),
                                state | np.uint64(1 << 32))


def cycle_rank(st, P, rounds=1):
    """Twin of `rounds` launches of ``gpumatch_cycle_rank`` (synchronous);
    True when a record is still not found after the last one."""
    live = False
    for _ in range(rounds):
        i = np.flatnonzero((P & _CY_FOUND) == 0)
        if i.shape[0] == 0:
            return False
        rec = P[i]
        x = P[(rec & _CH_LOW).astype(np.int64)]
        dist = ((rec >> np.uint64(32)) & _CY_DIST) + ((x >> np.uint64(32)) & _CY_DIST)
        found = (x & _CY_FOUND) != 0
        P[i] = np.where(found, _CY_FOUND | (dist << np.uint64(32)) | (x & np.uint64(1)),
                        (x & _CH_LOW) | (dist << np.uint64(32)))
        live = not bool(found.all())
    return live


def cycle_match(st, P):
    """Twin of ``gpumatch_cycle_match``: every cycle's pairs into the matching."""
    m = st.m
    deg, a0, a1 = _chain_lists(st)
    v = np.flatnonzero(P[0::2] != _CY_NONE)
    r0, r1 = P[2 * v], P[2 * v + 1]
    ok = ((r0 & r1 & _CY_FOUND) != 0) & ((r0 & np.uint64(1)) != (r1 & np.uint64(1)))
    v, r0, r1 = v[ok], r0[ok], r1[ok]
    b = np.where((r0 & np.uint64(1)) != 0, 0, 1)
    i = (np.where(b == 1, r1, r0) >> np.uint64(32)) & _CY_DIST
    k = np.where((i & np.uint64(1)) != 0, b, 1 - b)
    w = np.where(k == 0, a0[v], a1[v])
    rows = v < m
    st.mu_row[v[rows]] = w[rows] - m
    st.mu_col[v[~rows] - m] = w[~rows]
"""NumPy twins of the push-relabel kernels in ``pr.cu``.

Each function is one legal schedule of its racy CUDA twin: every active
vertex reads heights, residual capacities and its excess first, then all
writes happen together (synchronous push-relabel).  A vertex pushes only
along an arc to a strictly lower neighbour, so the two ends of one arc never
push on it in the same step, and the writes commute.

Both layouts are seen here through one *slot* view: vertex ``u`` owns slots
``slot_ptr[u]:slot_ptr[u+1]``, each with a neighbour, a residual capacity
and the slot of the reverse direction.  For the reverse CSR the slots of
``u`` are its out-arcs then its in-arcs (the CUDA kernel's order, so ties go
the same way); for the bidirectional CSR they are its merged entries.
"""

from __future__ import annotations

import numpy as np

from .. import csr

_KEY_INF = np.iinfo(np.int64).max


class _RCSRSlots:
    """Slot view of the reverse-CSR layout (flow stored per forward arc)."""

    def __init__(self, L):
        indptr, in_indptr = L["indptr"], L["in_indptr"]
        E = L["indices"].shape[0]
        V = indptr.shape[0] - 1
        self.L = L
        self.slot_ptr = (indptr + in_indptr).astype(np.int64)
        owner_out = csr.segment_owner(indptr.astype(np.int64), E)
        owner_in = csr.segment_owner(in_indptr.astype(np.int64), E)
        out_slot = np.arange(E, dtype=np.int64) + in_indptr[owner_out]
        in_slot = np.arange(E, dtype=np.int64) + indptr[owner_in + 1]
        n_slots = 2 * E
        self.nbr = np.empty(n_slots, dtype=np.int64)
        self.arc = np.empty(n_slots, dtype=np.int64)
        self.fwd = np.empty(n_slots, dtype=bool)
        self.nbr[out_slot] = L["indices"]
        self.nbr[in_slot] = L["in_indices"]
        self.arc[out_slot] = np.arange(E)
        self.arc[in_slot] = L["in_to_out"]
        self.fwd[out_slot] = True
        self.fwd[in_slot] = False
        self.V = V

    def resid(self, pos):
        k = self.arc[pos]
        f = self.L["flow"][k]
        return np.where(self.fwd[pos], self.L["cap"][k] - f, f)

    def rev_resid(self, pos):
        """Residual capacity of the reverse direction (neighbour -> owner)."""
        k = self.arc[pos]
        f = self.L["flow"][k]
        return np.where(self.fwd[pos], f, self.L["cap"][k] - f)

    def push(self, pos, d):
        k = self.arc[pos]
        np.add.at(self.L["flow"], k, np.where(self.fwd[pos], d, -d))


class _BCSRSlots:
    """Slot view of the bidirectional CSR (residual per entry, partner index)."""

    def __init__(self, L):
        self.L = L
        self.slot_ptr = L["bptr"].astype(np.int64)
        self.nbr = L["bnbr"]
        self.V = self.slot_ptr.shape[0] - 1

    def resid(self, pos):
        return self.L["resid"][pos]

    def rev_resid(self, pos):
        return self.L["resid"][self.L["partner"][pos]]

    def push(self, pos, d):
        np.add.at(self.L["resid"], pos, -d)
        np.add.at(self.L["resid"], self.L["partner"][pos], d)


def has_dropped(indptr, indices, cap, tile=None, cycles=None) -> bool:
    """Whether the network has a self-loop or an arc of capacity <= 0 (the
    twin of ``gpumatch_pr_has_dropped``; `tile` and `cycles` are the CUDA
    module's settings, unused here)."""
    rows = csr.segment_owner(indptr.astype(np.int64), indices.shape[0])
    return bool(((indices == rows) | (cap <= 0)).any())


def prepare(L, layout):
    """Per-solve context of the NumPy kernels."""
    return _RCSRSlots(L) if layout == "rcsr" else _BCSRSlots(L)


def discharge(ctx, st, work, it, target, other, hlimit, k=1):
    """Up to `k` synchronous discharge steps, the first over `work`.

    Returns ``(next worklist, steps run)``; the worklist is sorted and
    distinct: vertices that still hold excess below `hlimit` and
    non-terminal vertices that received flow.
    """
    ran = 0
    while ran < k and work.shape[0]:
        work = _discharge_step(ctx, st, work, target, other, hlimit)
        ran += 1
    return work, ran


def _segmented_exclusive_cumsum(x, owner, n_owner):
    """Exclusive prefix sums of `x` within each run of equal `owner` (owners sorted)."""
    cs = np.cumsum(x)
    excl = cs - x
    starts = np.zeros(n_owner, dtype=x.dtype)
    first = np.ones(owner.shape[0], dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    starts[owner[first]] = excl[first]
    return excl - starts[owner]


def _discharge_step(ctx, st, work, target, other, hlimit):
    """One synchronous discharge operation of every vertex of `work` (CYCLES = 1).

    Each live vertex pushes its excess down its residual arcs to lower
    neighbours in slot order (multi-push: every such arc gets
    ``min(r, excess left)``), and relabels to one above its lowest residual
    neighbour if excess is left (to `hlimit` without residual arcs), as one
    tile of the CUDA kernel does with the same reads.
    """
    height, excess = st["height"], st["excess"]
    u = work.astype(np.int64)
    ex = excess[u]
    hu = height[u].astype(np.int64)
    live = (ex > 0) & (hu < hlimit)
    u, ex, hu = u[live], ex[live], hu[live]
    if u.shape[0] == 0:
        return work[:0]
    owner, pos = csr.expand_segments(ctx.slot_ptr, u)
    r = ctx.resid(pos)
    nbr = ctx.nbr[pos]
    hv = height[nbr].astype(np.int64)
    want = np.where((r > 0) & (hv < hu[owner]), np.minimum(r, ex[owner]), 0)
    if want.shape[0] and float(want.astype(np.float64).sum()) >= 2.0 ** 62:
        want = want.astype(object)  # exact (slow) sums for huge capacities
    excl = _segmented_exclusive_cumsum(want, owner, u.shape[0])
    d = np.clip(ex[owner] - excl, 0, want).astype(np.int64)
    want = want.astype(np.int64)
    pushed = np.zeros(u.shape[0], dtype=np.int64)
    np.add.at(pushed, owner, d)
    rem = ex - pushed
    local = pos - ctx.slot_ptr[u][owner]
    key = np.where(r - d > 0, (hv << 32) | local, _KEY_INF)
    best = np.full(u.shape[0], _KEY_INF, dtype=np.int64)
    np.minimum.at(best, owner, key)
    none = best == _KEY_INF
    hmin = best >> 32
    # writes (all reads are done)
    on = d > 0
    ctx.push(pos[on], d[on])
    np.add.at(excess, nbr[on], d[on])
    excess[u] -= pushed
    rel = rem > 0
    new_h = np.where(none, hlimit, np.minimum(hmin + 1, hlimit))
    height[u[rel]] = new_h[rel].astype(height.dtype)
    cand = np.concatenate([u, nbr[on]])
    keep = (excess[cand] > 0) & (height[cand] < hlimit) & (cand != target) & (cand != other)
    return np.unique(cand[keep]).astype(work.dtype, copy=False)


def bfs_level(ctx, st, frontier, level, k=1):
    """Up to `k` BFS levels of the global relabel from `frontier` (height `level`).

    Returns ``(next frontier, levels run)``.
    """
    ran = 0
    while ran < k and frontier.shape[0]:
        frontier = _bfs_step(ctx, st, frontier, level + ran)
        ran += 1
    return frontier, ran


def bfs_levels(step, ctx, st, frontier, level, watch=None, k=1, max_levels=None):
    """`bfs_run` by calls of ``step(ctx, st, frontier, level, k)`` (a
    ``bfs_level``), the watch checked after each; shared by both twins.
    With `max_levels`, stops once that many levels ran (the frontier left
    is then not empty)."""
    h, ran = st["height"], 0
    while frontier.shape[0] and (max_levels is None or ran < max_levels):
        frontier, r = step(ctx, st, frontier, level + ran, k if max_levels is None else min(k, max_levels - ran))
        ran += r
        if watch is not None and frontier.shape[0] and not bool((h[watch] < 0).any()):
            return frontier, ran, True
    return frontier, ran, False


def bfs_run(ctx, st, frontier, level, watch=None, k=1, max_levels=None):
    """BFS levels from `frontier` (height `level`) until the frontier is
    empty or, with `watch` (vertex ids), every watched vertex has a height
    while the frontier is not empty, or `max_levels` levels ran; returns
    ``(frontier left, levels run, stopped by the watch)``.  Here the watch
    is checked after every level (`k` is the CUDA twin's)."""
    return bfs_levels(bfs_level, ctx, st, frontier, level, watch, 1, max_levels)


def _bfs_step(ctx, st, frontier, level):
    """Label (height ``level + 1``) the unreached vertices with a residual arc into `frontier`."""
    height = st["height"]
    _, pos = csr.expand_segments(ctx.slot_ptr, frontier.astype(np.int64))
    ok = ctx.rev_resid(pos) > 0
    v = ctx.nbr[pos][ok]
    v = np.unique(v[height[v] == -1])
    height[v] = level + 1
    return v.astype(frontier.dtype, copy=False)


def greedy(ctx, st, heads, sink_arc, source, sink):
    """Greedy start (reverse CSR): send the heads' excess to the sink along paths of one or two arcs.

    One legal schedule of ``gpumatch_pr_greedy_rcsr``: the threads advance
    in lock step, one arc per round; in a round all read first, then the
    claims of one sink arc are served in head order (an exclusive prefix
    sum of the wanted amounts against the arc's residual capacity).
    """
    L = ctx.L
    indptr, indices, cap, flow = L["indptr"], L["indices"], L["cap"], L["flow"]
    excess = st["excess"]
    u = heads.astype(np.int64)
    u = u[(u != sink) & (excess[u] > 0)]
    e = excess[u].copy()
    cur = indptr[u].astype(np.int64)
    end = indptr[u + 1].astype(np.int64)
    live = cur < end
    u, e, cur, end = u[live], e[live], cur[live], end[live]
    while u.shape[0]:
        p = cur
        v = indices[p].astype(np.int64)
        k = np.where(v == sink, p, sink_arc[v].astype(np.int64))
        want = np.minimum(cap[p] - flow[p], e)
        ok = (v != source) & (k >= 0) & (want > 0)
        ui, pi, ki, wi = np.nonzero(ok)[0], p[ok], k[ok], want[ok]
        if ki.shape[0]:
            order = np.lexsort((ui, ki))          # claims grouped by arc, in head order
            ui, pi, ki, wi = ui[order], pi[order], ki[order], wi[order]
            excl = _excl_by_group(wi, ki)
            got = np.clip(cap[ki] - flow[ki] - excl, 0, wi)
            np.add.at(flow, ki, got)
            fwd = (ki != pi) & (got > 0)
            flow[pi[fwd]] += got[fwd]
            excess[sink] += got.sum()
            np.subtract.at(e, ui, got)
        cur = cur + 1
        live = (e > 0) & (cur < end)
        excess[u[~live]] = e[~live]
        u, e, cur, end = u[live], e[live], cur[live], end[live]


def return_excess(ctx, st, xs, src_arc, source):
    """Quick return (reverse CSR): send the excess of `xs` back to the source along paths of one or two arcs.

    One legal schedule of ``gpumatch_pr_return_rcsr``, in rounds as in
    :func:`greedy`: the claims on one source arc are served in the order
    of `xs` against its flow.
    """
    L = ctx.L
    flow, in_indptr, in_indices, in_to_out = L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"]
    excess = st["excess"]
    x = xs.astype(np.int64)
    e = excess[x].copy()
    cur = in_indptr[x].astype(np.int64)
    end = in_indptr[x + 1].astype(np.int64)
    live = (e > 0) & (cur < end)
    x, e, cur, end = x[live], e[live], cur[live], end[live]
    while x.shape[0]:
        u = in_indices[cur].astype(np.int64)
        k = in_to_out[cur].astype(np.int64)
        a = np.where(u == source, k, src_arc[u].astype(np.int64))
        want = np.minimum(flow[k], e)
        ok = (a >= 0) & (want > 0)
        xi, ki, ai, wi = np.nonzero(ok)[0], k[ok], a[ok], want[ok]
        if ai.shape[0]:
            order = np.lexsort((xi, ai))
            xi, ki, ai, wi = xi[order], ki[order], ai[order], wi[order]
            got = np.clip(flow[ai] - _excl_by_group(wi, ai), 0, wi)
            np.subtract.at(flow, ai, got)
            two = (ai != ki) & (got > 0)
            flow[ki[two]] -= got[two]
            excess[source] += got.sum()
            np.subtract.at(e, xi, got)
        cur = cur + 1
        live = (e > 0) & (cur < end)
        excess[x[~live]] = e[~live]
        x, e, cur, end = x[live], e[live], cur[live], end[live]


def unwind(ctx, st, xs, source, other, max_rounds):
    """Send the excess of `xs` back to `source` along the arcs that brought it (reverse CSR).

    One legal schedule of ``gpumatch_pr_unwind_rcsr``, a round at a time:
    every listed vertex takes its excess first and is marked seen, then
    cancels flow on its in-arcs (never on an arc from `other`), those from
    vertices not seen in this call first, each group in order, and hands the
    excess to their tails; the tails (not `source`) whose excess is
    positive are the next round's list.  Returns ``(rounds run, vertices
    still listed)``.
    """
    L = ctx.L
    flow, in_indptr, in_indices, in_to_out = L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"]
    excess = st["excess"]
    seen = np.zeros(excess.shape[0], dtype=bool)
    x = xs.astype(np.int64)
    rounds = 0
    while x.shape[0] and rounds < max_rounds:
        rounds += 1
        e = excess[x].copy()
        x, e = x[e > 0], e[e > 0]
        excess[x] = 0
        seen[x] = True
        oo, js = csr.expand_segments(in_indptr, x)
        order = np.lexsort((seen[in_indices[js]], oo))   # unseen tails first, in order, per vertex
        oo, js = oo[order], js[order]
        u = in_indices[js].astype(np.int64)
        k = in_to_out[js].astype(np.int64)
        f = np.where(u == other, 0, flow[k])
        take = np.clip(e[oo] - _excl_by_group(f, oo), 0, f)
        flow[k] -= take
        np.add.at(excess, u, take)
        placed = np.zeros_like(e)
        np.add.at(placed, oo, take)
        excess[x] += e - placed
        nxt = np.unique(u[take > 0])
        x = nxt[(nxt != source) & (excess[nxt] > 0)]
    return rounds, int(x.shape[0])


def walk(ctx, st, work, target, other, max_steps):
    """Carry the excess of each vertex of `work` down one path of admissible arcs (reverse CSR).

    One legal schedule of ``gpumatch_pr_walk_rcsr``, the carriers in lock
    step, one arc per round: each takes its vertex's excess, picks the
    admissible slot (residual > 0, lower neighbour) of largest residual
    (the first on ties) and claims ``min(load, residual)`` on it, claims on
    one arc served in carrier order; what the arc cannot take stays where
    the carrier is.  The loads arriving at a vertex are added in carrier
    order and each carrier takes back the positive part of its own add
    (``min(got, max(0, excess after it))``), so a deficit absorbs what
    reaches it first; a carrier that gets nothing back, reaches a terminal,
    finds no admissible arc or has walked `max_steps` arcs leaves its load.
    """
    height, excess = st["height"], st["excess"]
    x = work.astype(np.int64)
    x = x[(x != target) & (x != other)]
    load = excess[x].copy()
    excess[x] = 0
    keep = load > 0
    excess[x[~keep]] += load[~keep]
    x, load = x[keep], load[keep]
    steps = 0
    while x.shape[0] and steps < max_steps:
        steps += 1
        owner, pos = csr.expand_segments(ctx.slot_ptr, x)
        r = ctx.resid(pos)
        ok = (r > 0) & (height[ctx.nbr[pos]] < height[x][owner])
        order = np.lexsort((pos, -np.where(ok, r, 0), owner))
        head = np.ones(order.shape[0], dtype=bool)
        head[1:] = owner[order[1:]] != owner[order[:-1]]
        pick = order[head & ok[order]]
        slot = np.full(x.shape[0], -1, dtype=np.int64)
        slot[owner[pick]] = pos[pick]
        stay = slot < 0
        np.add.at(excess, x[stay], load[stay])
        ci = np.nonzero(~stay)[0]
        p, arc = slot[ci], ctx.arc[slot[ci]]
        by_arc = np.lexsort((ci, arc))
        ci, p, arc = ci[by_arc], p[by_arc], arc[by_arc]
        want = load[ci]
        got = np.clip(ctx.resid(p) - _excl_by_group(want, arc), 0, want)
        ctx.push(p, got)
        np.add.at(excess, x[ci], want - got)      # what the arc could not take stays
        moved = got > 0
        ci, p, got = ci[moved], p[moved], got[moved]
        y = ctx.nbr[p]
        by_y = np.lexsort((ci, y))
        ci, y, got = ci[by_y], y[by_y], got[by_y]
        after = excess[y] + _excl_by_group(got, y) + got   # what y holds after each add
        back = np.where((y == target) | (y == other), 0, np.clip(after, 0, got))
        np.add.at(excess, y, got - back)
        on = back > 0
        x, load = y[on], back[on]
    np.add.at(excess, x, load)


def _excl_by_group(x, key):
    """Exclusive prefix sums of `x` within runs of equal `key` (keys sorted)."""
    cs = np.cumsum(x)
    excl = cs - x
    if x.shape[0] == 0:
        return excl
    first = np.ones(x.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    run = np.cumsum(first) - 1
    return excl - excl[first][run]


# ---------------------------------------------------------------------------
# set-up and output: twins of the kernels of pr_setup.cu
# ---------------------------------------------------------------------------


def source_capacity(indices, cap, ps, pe) -> int:
    """Exact total of ``cap[ps:pe]`` (non-negative int64) as a Python int."""
    return csr._exact_sum(np, cap[ps:pe])


def saturate_source(L, st, ps, pe):
    """The initial preflow: every arc out of the source, ``ps:pe``, full (reverse CSR; heads distinct)."""
    L["flow"][ps:pe] = L["cap"][ps:pe]
    st["excess"][L["indices"][ps:pe]] += L["cap"][ps:pe]


def init_heights(st, idt, target, other, hlimit):
    """Labels before a global relabel: 0 at `target`, `hlimit` at `other`, -1 elsewhere."""
    h = st["height"]
    h.fill(-1)
    h[target] = 0
    h[other] = hlimit


def finish_heights(st, idt, hlimit):
    """Vertices the relabel's BFS did not reach (-1) get `hlimit`."""
    h = st["height"]
    h[h == -1] = hlimit


def active(st, idt, target, hlimit, skip=-1):
    """Vertices with excess below `hlimit`, `target` and `skip` excepted (ascending)."""
    mask = (st["excess"] > 0) & (st["height"] < hlimit)
    mask[target] = False
    if skip >= 0:
        mask[skip] = False
    return np.nonzero(mask)[0].astype(idt)


def pair_index(indptr, indices, V):
    """``(partner, pairs, paired)``: for each arc of a canonical CSR the
    position of its anti-parallel arc (itself for a self-loop, -1 if none),
    the number of anti-parallel pairs and of arcs with a partner."""
    k, p = csr.antiparallel_pairs(indptr, indices, V)
    rows = csr.segment_owner(indptr.astype(np.int64), indices.shape[0])
    loops = np.nonzero(indices == rows)[0]
    partner = np.full(indices.shape[0], -1, dtype=indptr.dtype)   # arc positions: the offset width
    partner[k], partner[p], partner[loops] = p, k, loops
    return partner, int(k.shape[0]), 2 * int(k.shape[0]) + int(loops.shape[0])


def pair_share(flow, partner):
    """``(mass, paired)``: all flow, and the flow round anti-parallel pairs (floats)."""
    k = np.nonzero(partner.astype(np.int64) > np.arange(partner.shape[0]))[0]
    return float(flow.sum()), float(np.minimum(flow[k], flow[partner[k]]).sum())


def flow_matrix(indptr, indices, arc_flow, V):
    """CSR ``(indptr, indices, data)`` of the skew-symmetric flow matrix
    ``F - F^T`` of a canonical network with flow `arc_flow` per arc."""
    rows = csr.segment_owner(indptr.astype(np.int64), indices.shape[0])
    cols = indices.astype(np.int64)
    key = np.concatenate([rows, cols]) * np.int64(max(V, 1)) + np.concatenate([cols, rows])
    return csr.csr_from_keys(key, V, V, np.concatenate([arc_flow, -arc_flow]))

"""Detour pass of a dynamic max-flow repair (NumPy and CUDA twins).

A decrease of an arc ``u -> v`` below its flow leaves a *pair*: an excess
at the tail ``u`` and the same deficit at the head ``v``.  Where the flow's
value does not change, nearly every such arc has a detour close by, and
re-routing the flow round it (a path from ``u`` to ``v`` in the residual
network) repairs the pair without moving any other imbalance.  The pair
passes of :func:`gpumatch.flow.dynamic._paths.route` do that with vertex-disjoint
trees, one per pair, which cut each other off where pairs share a
neighbourhood; what they leave drifts to the nearest deficit under
push-relabel and costs as much as a solve from scratch.  This pass gives
every pair its own search instead:

* the pairs along chains of cut arcs ``u -> v -> w`` (``u -> w``, ...)
  join them (:func:`_chain`), for where the middle vertex is left with
  nothing to fill;
* every open pair runs a bidirectional BFS over the residual network
  (forward from ``u``, backward into ``v``), inside the pair's side of the
  kept minimum cut; the shorter frontier grows a level at a time, and the
  first level in which the two sides meet gives up to ``paths`` paths (one
  per meeting vertex).  The side's terminal may be a meeting vertex (the
  excess goes into the source and as much comes out of it again, or
  through the sink: the value stays) but the searches never grow from it
  (its arcs would flood them), so the pairs next to a terminal, whose
  detours run through it, find them too;
* the pair pushes along its paths one after the other (the bottleneck,
  capped by what is left of its tail's excess and its head's deficit:
  pairs may share a tail or a head), and searches again, until it has
  nothing left to move (at most ``searches`` searches; then it waits for
  the next round);
* a search uses only the arcs whose residual is at least the pair's
  *threshold*: at first the pair's whole excess (one path would do; a BFS
  takes its arcs as they come, and a path of the narrowest of them moved
  a tenth of what a wide one did in the replays below), capped by what it
  still has to move, and ``scale`` times less after a search without a
  path.  Where a side of that search ran out of vertices (short of its
  terminal), no path over arcs of more than the largest residual below
  the threshold of an arc out of that side exists: the threshold falls to
  at most that, and where that is 0 the pair drops out at once;
* a pair whose search found no path at threshold 1 (a side ran out of
  vertices, or the search outgrew ``ball`` vertices or ``levels`` levels a
  side) drops out; when no pair is left open, those that dropped out
  search once more if flow moved since the first of them did (a push may
  have opened a path for them); the rounds end when no pair is left, or
  after ``rounds``.

On the GPU a round is one launch and one read-back: a block per pair at a
time (its visited sets are hash tables in global memory, so pairs search
independently) loops over the pair's searches and pushes; pairs that
search at once may find the same residual, so a push reserves its arcs
with atomics and takes them all back where one would overflow (the pair
then waits for the next round; ``flow/detour.cu``).  The NumPy twin runs
the pairs one after the other.

The flow moves only inside one side of the kept cut, so the cut stays
saturated; what the pass leaves is still a pseudo-flow that the repair's
later phases finish, so the pass never has to succeed.
"""

from __future__ import annotations

import numpy as np

from ... import _backend, _cuda, csr
from ._paths import _push, _resid

#: ``rounds``: rounds at most; ``paths``: paths per search at most (from its
#: meeting level; 32 at most on the GPU); ``ball``: vertices a side of a
#: search may visit (a power of two; on the GPU every block keeps, per
#: side, that many entries and a table of twice as many slots, 40 bytes a
#: vertex: 5 MiB a block at 65 536); ``levels``: BFS levels a side at most;
#: ``scale``: the factor by which a pair's threshold falls after a search
#: without a path (1: no thresholds, every search takes any residual);
#: ``searches``: searches per pair and round at most.
#: Replays of the H100 benchmark's first 0.1 % decrease on the NumPy solver
#: (round 24 of ``benchmarks/results/h100_dynamic.md``): on GENRMF the
#: rounds placed 962 130 of the 972 233 cut units in 9 rounds (332
#: searches), and with ``ball`` 65 536 970 874 (all but the one arc cut
#: across the kept cut); without thresholds 39 rounds and 1 913 searches.
#: On RLG 99.3 % in 11 rounds.  The push-relabel iterations of the repair
#: fell from 13 481 to 411 on GENRMF and from 6 636 to 1 030 on RLG.
#: Since round 26 a round serves every pair to its end: on the three RLG
#: 0.1 % decreases of the benchmark's sequence (NumPy) one round of
#: 1 565-1 611 searches (14 at most for one pair) where 12-26 rounds had
#: run 1 884-2 001; on the H100 the pass took 6-11 ms in 2-3 rounds where
#: it had taken ~17 ms.
LIMITS = {"rounds": 32, "paths": 8, "ball": 65536, "levels": 64, "scale": 4, "searches": 64}

#: Steps a path may have (a longer one is not pushed; a search whose paths
#: are all longer drops its pair).  Searches of 64 levels a side find paths
#: of 128 steps at most.
PATH_STEPS = 256

#: Chains of up to ``CHAIN_STEPS + 1`` cut arcs make pairs of their own (:func:`_chain`).
CHAIN_STEPS = 2

#: Blocks per multiprocessor of ``gpumatch_dt_route`` (1024 threads each).
BLOCKS_PER_SM = 1
_BLOCK = 1024

# the order of the statistics of a round (``DT_*`` of flow/detour.cu)
_STATS = ("steps", "searched", "found", "won", "dropped", "paths", "amount", "open", "late")


def _first_threshold(need, scale):
    """The residual a pair's first search asks of its arcs: its excess
    (one path would do), if `scale` is more than 1."""
    return int(need) if scale > 1 else 1


def _take(excess, x, want, sign):
    """Reserve up to `want` of ``sign * excess[x]`` (the twin of ``dt_take``)."""
    got = min(int(want), int(sign * excess[x]))
    if got <= 0:
        return 0
    excess[x] -= sign * got
    return got


class _Numpy:
    """NumPy twin of ``flow/detour.cu`` (one legal schedule: the searches
    of a round one after the other, the pushes in pair order)."""

    def __init__(self, V, idt):
        self.V = V
        # per side: the search that last visited a vertex, and its entry there
        self.seen = [np.zeros(V, dtype=np.int64), np.zeros(V, dtype=np.int64)]
        self.entry = [np.zeros(V, dtype=np.int64), np.zeros(V, dtype=np.int64)]
        self.stamp = 0

    def start(self, n, side, source, sink):
        self.state = np.zeros(n, dtype=np.int8)
        self.thr = np.zeros(n, dtype=np.int64)
        self.side = side
        # per side of the cut, the vertices a path may enter (the side's
        # terminal too, which a search reaches but never leaves by a step of
        # its own: a meeting there routes the pair's flow through it)
        self.inside = (~side, side)
        self.ends = (source, sink)

    def reopen(self):
        """Every closed pair searches again, at threshold 1 (those with
        nothing left to move close again at once)."""
        self.thr[self.state != 0] = 1
        self.state[...] = 0

    def _expand(self, L, d, F, thr, inside):
        """Candidate steps of side `d` from the vertices `F` with a residual
        of at least `thr`: ``(index into F, next vertex, step code, the
        largest residual below thr of an arc into `inside`)``."""
        flow, cap = L["flow"], L["cap"]
        oo, ps = csr.expand_segments(L["indptr"], F)
        ps = ps.astype(np.int64)
        oi, js = csr.expand_segments(L["in_indptr"], F)
        ks = L["in_to_out"][js].astype(np.int64)
        if d == 0:    # x -> w along out-arc p, or cancelling in-arc k
            r_out, r_in = cap[ps] - flow[ps], flow[ks]
            code = np.concatenate([ps, -ks - 1])
        else:         # w -> x along in-arc k of x, or cancelling out-arc p of x
            r_out, r_in = flow[ps], cap[ks] - flow[ks]
            code = np.concatenate([-ps - 1, ks])
        res = np.concatenate([r_out, r_in])
        w = np.concatenate([L["indices"][ps], L["in_indices"][js]]).astype(np.int64)
        keep = res >= thr
        low = res[~keep & inside[w]]
        below = int(low.max()) if low.shape[0] else 0
        return np.concatenate([oo, oi])[keep], w[keep], code[keep], max(below, 0)

    def search(self, L, inside, u, v, thr, H, max_levels, meets):
        """One search over the arcs with a residual of at least `thr`:
        ``(paths, bound)``, the paths arrays of step codes from `u` to `v`
        (or []), and where there are none and a side ran out of vertices
        short of its terminal, `bound`: the largest residual below `thr` of
        an arc out of that side (no path over arcs of more exists), else
        None."""
        self.stamp += 1
        st = self.stamp
        ep = [[np.array([-1], dtype=np.int64)], [np.array([-1], dtype=np.int64)]]
        ec = [[np.zeros(1, dtype=np.int64)], [np.zeros(1, dtype=np.int64)]]
        front = [np.array([u], dtype=np.int64), np.array([v], dtype=np.int64)]
        fent = [np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)]   # their entries
        cnt, lev = [1, 1], [0, 0]
        for d, r in ((0, u), (1, v)):
            self.seen[d][r] = st
            self.entry[d][r] = 0
        found = None
        term = [False, False]      # has the side reached its terminal?
        below = [0, 0]             # per side, the largest residual below thr met
        while True:
            n0, n1 = front[0].shape[0], front[1].shape[0]
            if (n0 == 0 and (n1 == 0 or not term[0])) or (n1 == 0 and not term[1]):
                # a side ran out (one that reached the terminal may wait there)
                out = [below[k] for k, n in ((0, n0), (1, n1)) if n == 0 and not term[k]]
                return [], (min(out) if out else None)
            d = 1 if n0 == 0 else 0 if n1 == 0 else 0 if n0 <= n1 else 1
            if lev[d] >= max_levels:
                return [], None
            o = 1 - d
            src, w, code, low = self._expand(L, d, front[d], thr, inside)
            below[d] = max(below[d], low)
            ok = inside[w] & (self.seen[d][w] != st)
            src, w, code = src[ok], w[ok], code[ok]
            _, firsts = np.unique(w, return_index=True)
            firsts = np.sort(firsts)
            # (H - 1 entries at most, as on the GPU, where the last is the terminal's)
            over = firsts.shape[0] > H - 1 - cnt[d]
            firsts = firsts[:max(H - 1 - cnt[d], 0)]
            src, w, code = src[firsts], w[firsts], code[firsts]
            idx = cnt[d] + np.arange(w.shape[0], dtype=np.int64)
            self.seen[d][w] = st
            self.entry[d][w] = idx
            ep[d].append(fent[d][src])
            ec[d].append(code)
            cnt[d] += w.shape[0]
            lev[d] += 1
            # a terminal is a meeting point, never a vertex to grow from
            go = (w != self.ends[0]) & (w != self.ends[1])
            term[d] = term[d] or not go.all()
            front[d], fent[d] = w[go], idx[go]
            m = np.flatnonzero(self.seen[o][w] == st)[:meets]
            if m.shape[0]:
                found = (d, idx[m], self.entry[o][w[m]])
                break
            if over:
                return [], None
        d, mine, theirs = found
        P = [np.concatenate(ep[0]), np.concatenate(ep[1])]
        C = [np.concatenate(ec[0]), np.concatenate(ec[1])]
        paths = []
        for a, b in zip(mine, theirs):
            fe, be = (a, b) if d == 0 else (b, a)
            half = []
            e = int(fe)
            while P[0][e] >= 0:
                half.append(C[0][e])
                e = int(P[0][e])
            half.reverse()
            e = int(be)
            while P[1][e] >= 0:
                half.append(C[1][e])
                e = int(P[1][e])
            paths.append(np.array(half, dtype=np.int64))
        return paths, None

    def round(self, L, excess, tails, heads, lim):
        """One round: every open pair, in order, searches and pushes until
        it is done (see ``gpumatch_dt_route``); returns the round's
        statistics (see ``_STATS``)."""
        stats = dict.fromkeys(_STATS, 0)
        H, levels, meets = int(lim["ball"]), int(lim["levels"]), int(lim["paths"])
        scale, most = int(lim["scale"]), int(lim["searches"])
        cap, flow = L["cap"], L["flow"]
        for i in range(tails.shape[0]):
            if self.state[i] != 0:
                continue
            u, v = int(tails[i]), int(heads[i])
            inside = self.inside[int(self.side[u])]
            th, searches = int(self.thr[i]), 0
            while True:
                need = min(int(excess[u]), -int(excess[v]))
                if need <= 0:
                    verdict = "closed"
                    break
                if searches >= most:
                    verdict = "open"
                    break
                if th <= 0:
                    th = _first_threshold(need, scale)
                now = min(th, need)
                searches += 1
                stats["searched"] += 1
                paths, bound = self.search(L, inside, u, v, now, H, levels, meets)
                if not paths:
                    nxt = max(now // scale, 1) if now > 1 else 0    # narrower paths next
                    if bound is not None:
                        nxt = min(nxt, bound)
                    if nxt <= 0:
                        verdict = "dropped"
                        break
                    th = nxt
                    continue
                stats["found"] += 1
                pushed = fits = sum_dd = 0
                for p in paths:
                    if p.shape[0] > PATH_STEPS:
                        continue
                    fits += 1
                    dm = int(_resid(cap, flow, p).min())
                    if dm <= 0:
                        continue
                    got = _take(excess, u, dm, 1)
                    dd = _take(excess, v, got, -1)
                    excess[u] += got - dd
                    if dd <= 0:
                        break
                    _push(flow, p, np.full(p.shape[0], dd, dtype=np.int64))
                    pushed += 1
                    sum_dd += dd
                    stats["paths"] += 1
                    stats["amount"] += dd
                    stats["steps"] += p.shape[0]
                if pushed:
                    stats["won"] += 1
                    if stats["dropped"]:
                        stats["late"] += sum_dd
                    continue
                verdict = "dropped" if fits == 0 else "open"
                break
            if verdict == "open":
                self.thr[i] = th
                stats["open"] += 1
            else:
                self.state[i] = 1
                stats["dropped"] += verdict == "dropped"
        return stats


class _Cuda:
    """Launcher of the ``flow/detour.cu`` kernel (one launch and one read-back per round)."""

    def __init__(self, V, idt):
        cp = _backend.cp
        self.k_route = _cuda.get_kernel("flow/detour.cu", "gpumatch_dt_route", _cuda.index_defines(idt))
        self.V = V
        self.grid = int(cp.cuda.Device().attributes["MultiProcessorCount"]) * BLOCKS_PER_SM
        self.H = None                     # the tables, allocated on first use
        self.stats = cp.zeros(len(_STATS) + 1, dtype=np.int64)   # + the kernel's work counter
        self.stamp_used = 0
        self.sbuf = None

    def _tables(self, H):
        cp = _backend.cp
        if self.H != H:
            g = self.grid
            self.keys = cp.zeros(g * 2 * 2 * H, dtype=np.uint64)
            self.hidx = cp.empty(g * 2 * 2 * H, dtype=np.int32)
            self.ev = cp.empty(g * 2 * H, dtype=np.int32)
            self.ep = cp.empty(g * 2 * H, dtype=np.int32)
            self.ec = cp.empty(g * 2 * H, dtype=np.int64)
            self.stamps = cp.zeros(g, dtype=np.uint32)
            self.H, self.stamp_used = H, 0

    def start(self, n, side, source, sink):
        cp = _backend.cp
        self.state = cp.zeros(max(n, 1), dtype=np.int32)
        self.thr = cp.zeros(max(n, 1), dtype=np.int64)
        self.side = side.view(np.uint8) if side.dtype == np.bool_ else side.astype(np.uint8)
        self.ends = (np.int64(source), np.int64(sink))

    def reopen(self):
        """Every closed pair searches again, at threshold 1."""
        cp = _backend.cp
        self.thr[...] = cp.where(self.state != 0, 1, self.thr)
        self.state.fill(0)

    def round(self, L, excess, tails, heads, lim):
        cp = _backend.cp
        n = int(tails.shape[0])
        meets, levels, scale = min(int(lim["paths"]), 32), int(lim["levels"]), max(int(lim["scale"]), 1)
        most = max(int(lim["searches"]), 1)
        H = _ball(lim, self.V)
        self._tables(H)
        per_block = n * most              # (a block may run every search of the round)
        if self.stamp_used + per_block >= (1 << 32) - 1:
            # the blocks' stamps would wrap: start the tables afresh
            self.keys.fill(0)
            self.stamps.fill(0)
            self.stamp_used = 0
        self.stamp_used += per_block
        if self.sbuf is None or self.sbuf.shape[0] < self.grid * meets * PATH_STEPS:
            self.sbuf = cp.empty(self.grid * meets * PATH_STEPS, dtype=np.int64)
        self.stats.fill(0)
        net = (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"])
        self.k_route((min(self.grid, n),), (_BLOCK,),
                     net + (self.side,) + self.ends + (tails, heads, np.int64(n), excess, self.state, self.thr,
                            np.int32(scale), np.int32(min(most, 2 ** 31 - 1)), self.sbuf, np.int32(PATH_STEPS),
                            self.keys, self.hidx, self.ev, self.ep, self.ec, self.stamps, np.int32(H),
                            np.int32(levels), np.int32(meets), self.stats))
        return dict(zip(_STATS, (int(x) for x in self.stats.get())))


def _chain(xp, tails, heads, steps=CHAIN_STEPS):
    """The pairs with those along chains of cut arcs added: where the head
    ``v`` of a pair ``u -> v`` is the tail of another, ``v -> w``, the pair
    ``u -> w`` joins them, and so on for chains of up to ``steps + 1`` arcs.
    Where the cut of ``v -> w`` took at least as much out of ``v`` as that
    of ``u -> v`` brought short, ``v`` is left with no deficit of its own
    and ``u -> v`` has nothing to fill; the excess of ``u`` then goes round
    both arcs to the deficit of ``w``.

    >>> import numpy as np
    >>> t, h = _chain(np, np.array([0, 1, 5]), np.array([1, 2, 6]))
    >>> t.tolist(), h.tolist()
    ([0, 1, 5, 0], [1, 2, 6, 2])
    """
    n = int(tails.shape[0])
    if n < 2:
        return tails, heads
    order = xp.argsort(tails, kind="stable")   # (a head that several pairs start from: the first, on both backends)
    by_tail = tails[order]
    ts, hs = [tails], [heads]
    t, h = tails, heads
    for _ in range(steps):
        at = xp.minimum(xp.searchsorted(by_tail, h), n - 1)
        on = by_tail[at] == h
        t, h = t[on], heads[order[at]][on]
        if t.shape[0] == 0:
            break
        ts.append(t)
        hs.append(h)
    return (xp.concatenate(ts), xp.concatenate(hs)) if len(ts) > 1 else (tails, heads)


#: Pair lists of at most this many pairs are chained and filtered on the
#: host (:func:`_pairs`): on the GPU the sort, searches and boolean
#: indexing of :func:`_chain` and the filter cost ~1 ms of launches and
#: read-backs, which an H100 spent even where no pair was left (unit
#: mixed 0.01 % repairs, round 26 of ``benchmarks/results/h100_dynamic.md``).
HOST_PAIRS = 1 << 14


def _pairs(xp, tails, heads, side, source, sink):
    """The pairs the pass serves: those of :func:`_chain`, less those
    whose ends lie on two sides of the kept cut, coincide, or touch a
    terminal.

    >>> import numpy as np
    >>> side = np.array([True, True, True, False, False])
    >>> t, h = _pairs(np, np.array([1, 2, 2]), np.array([2, 3, 0]), side, 0, 4)
    >>> t.tolist(), h.tolist()
    ([1], [2])
    """
    n = int(tails.shape[0])
    if xp is not np and n <= HOST_PAIRS:
        # one read-back of the pairs and their ends' sides, the rest on the host
        both = xp.concatenate([tails, heads])
        packed = _backend.to_numpy(xp.stack([both, side[both].astype(np.int64)]))
        t, h = _chain(np, packed[0, :n], packed[0, n:])
        ends, where = np.unique(packed[0], return_index=True)
        sd = packed[1, where]
        st, sh = sd[np.searchsorted(ends, t)], sd[np.searchsorted(ends, h)]
    else:
        t, h = _chain(xp, tails, heads)
        st, sh = side[t], side[h]
    ok = (t != h) & (st == sh)
    for x in (source, sink):
        ok &= (t != x) & (h != x)
    return xp.asarray(t[ok]), xp.asarray(h[ok])


def _ball(lim, V):
    """Vertices a side of a search may visit: ``lim["ball"]`` rounded up to
    a power of two, at most the network's (rounded up)."""
    want = max(int(lim["ball"]), 2)
    cap = 1 << max(int(V) - 1, 1).bit_length()
    return min(1 << (want - 1).bit_length(), cap)


def buffers(backend, V, idt):
    """Work arrays of the pass for a network of `V` vertices (kept by the solver)."""
    return _Cuda(V, idt) if backend == "cupy" else _Numpy(V, idt)


def reroute(bufs, L, excess, side, tails, heads, source, sink, check=None, limits=None):
    """Re-route the excess of each pair's tail to its head along residual
    paths inside the pair's side of the kept cut (see the module
    docstring); in place on ``L["flow"]`` and `excess`.

    Parameters
    ----------
    bufs : from :func:`buffers`
    L : dict
        Reverse-CSR residual network (``indptr``, ``indices``, ``cap``,
        ``flow``, ``in_indptr``, ``in_indices``, ``in_to_out``).
    excess : int64 array
        Per vertex; positive: excess, negative: a deficit.
    side : bool array
        The source side of the kept minimum cut; a pair's paths stay on
        its tail's side (a pair whose ends lie on two sides is skipped).
    tails, heads : int64 arrays
        The pairs (the tail and head of each arc cut below its flow); a
        tail may appear in several pairs, as may a head.
    source, sink : int
        The terminals; a path passes through its side's one at most (pairs
        at them are skipped).
    check : callable, optional
        Called before every round (the solver's time budget).
    limits : dict, optional
        Overrides of :data:`LIMITS`.

    Returns
    -------
    dict
        ``rounds``, ``searches``, ``paths`` (pushed), ``amount`` (flow
        moved), ``dropped`` (pairs whose search found no path), ``pairs``
        (taken part) and ``open`` (pairs left open for another round
        after the last: every path they found was taken meanwhile, or
        they ran out of ``searches``).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.flow import _maxflow
    >>> from gpumatch.flow.dynamic import _detour
    >>> # 0 -> 1 -> 2 -> 3 and the detour 1 -> 4 -> 2, capacity 5 each; the
    >>> # arc 1 -> 2 carried 5 and now has capacity 2: 3 units go round it
    >>> L = _maxflow._build_rcsr(np, np.array([0, 1, 3, 4, 4, 5]), np.array([1, 2, 4, 3, 2]),
    ...                          np.array([5, 2, 5, 5, 5]), 5)
    >>> L["flow"] = np.array([5, 2, 0, 5, 0])
    >>> excess = np.array([0, 3, -3, 0, 0])
    >>> side = np.array([True, True, True, False, True])
    >>> st = _detour.reroute(_detour.buffers("numpy", 5, np.int64), L, excess, side,
    ...                      np.array([1]), np.array([2]), 0, 3)
    >>> L["flow"].tolist(), excess.tolist(), st["amount"]
    ([5, 2, 3, 5, 3], [0, 0, 0, 0, 0], 3)
    """
    lim = dict(LIMITS, **(limits or {}))
    xp = csr.array_module(excess)
    V = excess.shape[0]
    stats = {"rounds": 0, "searches": 0, "paths": 0, "amount": 0, "dropped": 0, "pairs": 0, "open": 0}
    if V >= (1 << 31) - 1 or int(lim["rounds"]) <= 0:
        return stats      # (the GPU tables hold 32-bit vertices)
    tails, heads = _pairs(xp, xp.asarray(tails, dtype=np.int64), xp.asarray(heads, dtype=np.int64), side, source,
                          sink)
    n = int(tails.shape[0])
    stats["pairs"] = n
    if n == 0:
        return stats
    bufs.start(n, side, source, sink)
    moved = None     # flow moved since the first pair dropped out (None: none did)
    for _ in range(int(lim["rounds"])):
        if check is not None:
            check()
        st = bufs.round(L, excess, tails, heads, lim)
        stats["rounds"] += 1
        stats["searches"] += st["searched"]
        stats["paths"] += st["paths"]
        stats["amount"] += st["amount"]
        stats["dropped"] += st["dropped"]
        stats["open"] = st["open"]
        if moved is not None:
            moved += st["amount"]
        elif st["dropped"]:
            moved = st["late"]        # (what the round pushed after its first drop)
        if st["open"] == 0:
            if not moved:
                break
            # the pushes since a pair found nothing may have opened a path
            # for it (flow cancelled next to it, a terminal's arc freed):
            # the pairs that dropped out search once more, at threshold 1
            bufs.reopen()
            moved = None
    return stats

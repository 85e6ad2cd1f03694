"""Series reduction of a flow network: chains of vertices with one arc in
and one arc out become one arc (NumPy and CuPy alike).

A vertex other than the terminals with exactly one arc in, ``u -> v``, and
exactly one arc out, ``v -> w``, passes on whatever reaches it: the flow
through it is the same on both arcs.  A chain ``u -> v1 -> ... -> vk -> w``
of such vertices is therefore one arc ``u -> w`` whose capacity is the
least capacity along it.  Push-relabel moves a unit of excess one arc per
iteration, and its global relabels are one BFS level per arc, so a network
made of long chains (a path, a layered network whose layers are joined by
chains) costs it a step per vertex of the longest chain; the contracted
network has none of them.

Every series vertex learns the far end of its chain downstream and the
least capacity on the way by pointer jumping (``log2`` of the chain's
length rounds of array operations).  Chains that close into a cycle of
series vertices carry no flow and are dropped; chains that return to their
start (``u -> ... -> u``) too; parallel arcs that the contraction makes
between the same two vertices are merged (capacities summed) and their
flow is handed back to them in order.  The flow of every arc of a chain is
the flow of the arc that enters it, and a chain vertex ``v`` can reach the
sink in the residual network when the chain carries flow and its start
can (back along the chain), or when no arc between ``v`` and the chain's
end is saturated and the end can: so the source side (the vertices that
cannot reach the sink, as push-relabel reports it) follows from the
contracted network's.

The driver (:func:`gpumatch.flow._maxflow._solve_on`) contracts when series
vertices are at least :data:`MIN_SHARE` of all vertices, solves the
contracted network and expands the answer (``stats["series"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import csr

__all__ = ["MIN_SHARE", "Reduction", "bytes_needed", "reduce"]

#: Contract when the series vertices are at least this share of all
#: vertices (the contraction costs a few passes over the arcs plus one over
#: the series vertices per doubling of the longest chain).
MIN_SHARE = 1 / 16


@dataclass
class Reduction:
    """A contracted network (``indptr``, ``indices``, ``cap``, ``source``,
    ``sink`` over ``V`` vertices) and what :meth:`expand` needs to map its
    answer back."""

    V: int
    indptr: Any
    indices: Any
    cap: Any
    source: int
    sink: int
    stats: dict
    _xp: Any
    _E: int
    _series: Any
    _far: Any
    _low: Any
    _tail: Any
    _indptr: Any
    _newid: Any
    _arcs: Any
    _order: Any
    _group: Any
    _group_start: Any
    _caps: Any
    _cycle: Any
    _heads: Any

    def expand(self, arc_flow, source_side):
        """The original network's arc flows and source side from the
        contracted network's."""
        xp = self._xp
        series, far, low, tail = self._series, self._far, self._low, self._tail
        # merged parallel arcs: their flow to the members in order, each up to its capacity
        csum = xp.cumsum(self._caps)
        before = csum - self._caps                             # exclusive prefix sums
        if self._caps.shape[0]:
            before = before - before[self._group_start][self._group]
        member = xp.clip(arc_flow.astype(np.int64)[self._group] - before, 0, self._caps)
        flow = xp.zeros(self._E, dtype=np.int64)
        flow[self._arcs[self._order]] = member
        # each chain arc carries the flow of the arc that enters its chain
        sv = xp.flatnonzero(series & ~self._cycle)
        heads = self._heads
        in_arc = xp.full(series.shape[0], -1, dtype=np.int64)
        in_arc[heads] = xp.arange(self._E, dtype=np.int64)    # unique where the head is a series vertex
        prev = tail[in_arc[sv]]
        first = xp.arange(series.shape[0], dtype=np.int64)
        first[sv] = xp.where(series[prev], prev, sv)
        for _ in range(int(series.shape[0]).bit_length() + 2):   # chains settle in log2(length) rounds
            nxt = first[first]
            if not bool((nxt != first).any()):
                break
            first = nxt
        entry = in_arc[first[sv]]
        chain_flow = flow[entry]
        flow[self._indptr[sv]] = chain_flow
        # the source side: the vertices that cannot reach the sink
        kept = xp.flatnonzero(~series)
        reach = xp.zeros(series.shape[0], dtype=bool)
        reach[kept] = ~source_side.astype(bool)[self._newid[kept]]
        start = tail[entry]
        reach[sv] = ((chain_flow > 0) & reach[start]) | ((low[sv] > chain_flow) & reach[far[sv]])
        return flow, ~reach


def bytes_needed(V, E) -> int:
    """Device bytes :func:`reduce` and :meth:`Reduction.expand` hold at most
    besides the network: about ten int64 arrays per vertex and sixteen per
    arc (an upper bound; the contracted network is smaller)."""
    return 8 * (10 * int(V) + 16 * int(E))


def reduce(xp, V, indptr, indices, cap, source, sink):
    """Contract the series chains of a network without self-loops or arcs
    of capacity 0; None when series vertices are fewer than
    :data:`MIN_SHARE` of the vertices (or merged capacities could pass
    ``2**62``)."""
    E = int(indices.shape[0])
    if E == 0 or V < 3:
        return None
    # the gate on the arrays as they are (no wider copies when it says no)
    series = (xp.bincount(indices, minlength=V) == 1) & ((indptr[1:] - indptr[:-1]) == 1)
    series[source] = False
    series[sink] = False
    count = int(series.sum())
    if count < MIN_SHARE * V:
        return None
    ip = indptr.astype(np.int64)
    heads = indices.astype(np.int64)
    caps = cap.astype(np.int64)
    if float(caps.astype(np.float64).sum()) >= 2.0 ** 62:   # merged sums must stay exact
        return None
    sv = xp.flatnonzero(series)
    far = xp.arange(V, dtype=np.int64)
    far[sv] = heads[ip[sv]]
    low = xp.zeros(V, dtype=np.int64)
    low[sv] = caps[ip[sv]]
    live = sv[series[far[sv]]]
    rounds = 0
    limit = int(V).bit_length() + 2     # a chain of L vertices: ceil(log2 L) rounds; a cycle never ends
    while live.shape[0] and rounds < limit:
        f = far[live]
        low[live] = xp.minimum(low[live], low[f])
        far[live] = far[f]
        live = live[series[far[live]]]
        rounds += 1
    cycle = xp.zeros(V, dtype=bool)
    cycle[live] = True
    # arcs out of the vertices that stay, their heads moved to the chains' ends
    tail = csr.segment_owner(ip, E).astype(np.int64)
    arcs = xp.flatnonzero(~series[tail])
    h = heads[arcs]
    into = series[h]
    w = xp.where(into, far[h], h)
    c = xp.where(into, xp.minimum(caps[arcs], low[h]), caps[arcs])
    t = tail[arcs]
    ok = w != t                                    # a chain back to its start: no flow
    arcs, t, w, c = arcs[ok], t[ok], w[ok], c[ok]
    keep = ~series
    newid = xp.cumsum(keep.astype(np.int64)) - 1
    V2 = int(keep.sum())
    t2, w2 = newid[t], newid[w]
    key = t2 * V2 + w2
    order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
    key = key[order]
    caps_sorted = c[order]
    first = xp.ones(key.shape[0], dtype=bool)
    if key.shape[0] > 1:
        first[1:] = key[1:] != key[:-1]
    group = xp.cumsum(first.astype(np.int64)) - 1
    starts = xp.flatnonzero(first)
    csum = xp.cumsum(caps_sorted)
    if key.shape[0]:
        ends = xp.concatenate([starts[1:], xp.asarray([key.shape[0]], dtype=starts.dtype)]) - 1
        gcap = csum[ends] - xp.concatenate([xp.zeros(1, dtype=np.int64), csum[starts[1:] - 1]])
    else:                                          # every arc was inside a chain back to its start
        gcap = xp.zeros(0, dtype=np.int64)
    gkey = key[starts]
    g_tail = gkey // max(V2, 1)
    g_head = gkey % max(V2, 1)
    indptr2 = csr.segment_offsets(g_tail, V2)
    red = Reduction(V=V2, indptr=indptr2, indices=g_head, cap=gcap, source=int(newid[source]),
                    sink=int(newid[sink]), stats={"contracted": count, "rounds": rounds,
                                                  "cycles": int(cycle.sum()), "arcs": int(gkey.shape[0])},
                    _xp=xp, _E=E, _series=series, _far=far, _low=low, _tail=tail, _indptr=ip, _newid=newid,
                    _arcs=arcs, _order=order, _group=group, _group_start=starts, _caps=caps_sorted, _cycle=cycle,
                    _heads=heads)
    return red

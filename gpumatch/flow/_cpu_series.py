"""Series reduction for the CPU engine: chains of vertices contracted to one arc.

A vertex other than the terminals is a *series vertex* when, counting only
arcs of positive capacity that are not self-loops, exactly one arc enters it
and exactly one leaves it.  By conservation both arcs carry the same flow,
so a maximal chain of series vertices

    u -> v_1 -> v_2 -> ... -> v_k -> w      (u, w not series vertices)

carries one flow ``f`` on all of its ``k + 1`` arcs, at most the smallest of
their capacities: for the flow problem it is one arc ``u -> w`` of that
capacity (dropped when ``w == u``: a self-loop carries nothing).  The engine
solves the *reduced network* (the other vertices, renumbered in order, their
other arcs, and one arc per chain) and the result is expanded:

* every arc of a chain carries the flow of the chain's arc (0 for a chain
  that closes on itself and for a cycle of series vertices that no other
  vertex enters);
* the minimum cut as the engine reports it (the source side is every vertex
  that cannot reach the sink in the residual network): inside a chain of
  flow ``f``, ``v_i`` reaches the sink forwards when every arc from
  ``v_i`` on has residual capacity (the smallest of their capacities is
  above ``f``) and ``w`` reaches it, and backwards when ``f > 0`` (every arc
  of the chain has a residual reverse arc) and ``u`` reaches it; a cycle of
  series vertices reaches nothing.  Reachability between the other vertices
  is the same in both networks (a chain's arc has residual capacity exactly
  when all of the chain's arcs have, in either direction).

This is the series rule of the series-parallel reductions (e.g. Ahuja,
Magnanti and Orlin [1]_, the contraction of a path of degree-2 vertices):
on a network that is mostly chains (a path, a pipeline, the subdivided arcs
of a road or circuit graph) the push-relabel engine would otherwise push
every unit along every chain, one discharge per vertex.  It is taken only
when the measured share of series vertices reaches ``TUNING["series"]`` (in
:mod:`gpumatch.flow._cpu`); counting them costs one pass over the arcs.

References
----------
.. [1] R. K. Ahuja, T. L. Magnanti and J. B. Orlin, *Network Flows: Theory,
   Algorithms, and Applications*, Prentice Hall, 1993 (network
   transformations).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["count", "reduce", "expand"]


@numba.njit(cache=True, nogil=True)
def _one_arc(V, indptr, indices, cap, s, t, indeg, outarc, succ):
    """``outarc[v]``: the one arc out of `v` (arcs of positive capacity, not
    self-loops), -1 without one, -2 with more; ``indeg[v]``: the number of
    arcs into `v`, up to 2; ``succ[v]``: the head of its out-arc for a
    series vertex, else -1.  Returns the number of series vertices."""
    for v in range(V):
        indeg[v] = 0
    for u in range(V):
        o = -1
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            if v == u or cap[a] <= 0:
                continue
            o = a if o == -1 else -2
            if indeg[v] < 2:
                indeg[v] += 1
        outarc[u] = o
    k = 0
    for v in range(V):
        if indeg[v] == 1 and outarc[v] >= 0 and v != s and v != t:
            succ[v] = indices[outarc[v]]
            k += 1
        else:
            succ[v] = -1
    return k


def count(V, indptr, indices, cap, source, sink):
    """``(k, arcs)``: the number of series vertices of the int64 CSR network,
    and the arrays of :func:`_one_arc` that :func:`reduce` takes."""
    indeg = np.empty(V, dtype=np.int8)
    outarc = np.empty(V, dtype=np.int64)
    succ = np.empty(V, dtype=np.int32)     # vertex ids: V < 2**30 (the engine's bound)
    k = _one_arc(V, indptr, indices, cap, source, sink, indeg, outarc, succ)
    return int(k), (outarc, succ)


@numba.njit(cache=True, nogil=True)
def _contract(V, indptr, indices, cap, outarc, succ, nid, ptr2, ind2, cap2, orig2,
              carcs, ctail, ccap, cstart, cred, cends):
    """The reduced network (``ptr2`` / ``ind2`` / ``cap2``; ``orig2[k]``: the
    arc that reduced arc ``k`` starts with) and the chains: chain ``c``'s arcs
    in order are ``carcs[cstart[c]:cstart[c + 1]]`` (``ctail``, ``ccap``:
    their tails and capacities), its reduced arc ``cred[c]`` (-1: it closes
    on itself), its ends ``cends[2 c]`` (the tail) and ``cends[2 c + 1]``
    (the head).  A chain is followed by ``succ`` alone (one dependent load a
    vertex: the ids are in no order along it).  Returns ``(V2, E2, chains)``."""
    V2 = 0
    for u in range(V):
        if succ[u] >= 0:
            nid[u] = -1
        else:
            nid[u] = V2
            V2 += 1
    k = 0
    c = 0
    p = 0
    ptr2[0] = 0
    for u in range(V):
        nu = nid[u]
        if nu < 0:
            continue
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            if v == u or cap[a] <= 0:
                continue
            if succ[v] < 0:
                ind2[k] = nid[v]
                cap2[k] = cap[a]
                orig2[k] = a
                k += 1
                continue
            # a chain: follow the series vertices to the next other vertex
            cstart[c] = p
            m = cap[a]
            carcs[p] = a
            ctail[p] = u
            ccap[p] = m
            p += 1
            x = v
            y = succ[x]
            while y >= 0:
                b = outarc[x]
                cb = cap[b]
                carcs[p] = b
                ctail[p] = x
                ccap[p] = cb
                p += 1
                if cb < m:
                    m = cb
                x = y
                y = succ[x]
            cends[2 * c] = u
            cends[2 * c + 1] = x
            if x == u:
                cred[c] = -1
            else:
                cred[c] = k
                ind2[k] = nid[x]
                cap2[k] = m
                orig2[k] = a
                k += 1
            c += 1
        ptr2[nu + 1] = k
    cstart[c] = p
    return V2, k, c


def reduce(V, indptr, indices, cap, source, sink, arcs):
    """Contract the chains of series vertices (`arcs`: from :func:`count`).
    Returns ``(net, plan)``: ``net = (V2, indptr, indices, cap, source,
    sink)``, the reduced int64 CSR network (rows not sorted; parallel arcs
    kept), and the `plan` that :func:`expand` takes."""
    outarc, succ = arcs
    E = indices.shape[0]
    nid = np.empty(V, dtype=np.int32)
    ptr2 = np.empty(V + 1, dtype=np.int64)
    ind2 = np.empty(E, dtype=np.int64)
    cap2 = np.empty(E, dtype=np.int64)
    orig2 = np.empty(E, dtype=np.int64)
    carcs = np.empty(E, dtype=np.int64)
    ctail = np.empty(E, dtype=np.int32)
    ccap = np.empty(E, dtype=np.int64)
    cstart = np.empty(V + 1, dtype=np.int64)
    cred = np.empty(V, dtype=np.int64)
    cends = np.empty(2 * V, dtype=np.int64)
    V2, E2, nc = _contract(V, indptr, indices, cap, outarc, succ, nid, ptr2, ind2, cap2, orig2,
                           carcs, ctail, ccap, cstart, cred, cends)
    V2, E2, nc = int(V2), int(E2), int(nc)
    net = (V2, ptr2[:V2 + 1], ind2[:E2], cap2[:E2], int(nid[source]), int(nid[sink]))
    plan = (nid, orig2[:E2], carcs, ctail, ccap, cstart[:nc + 1], cred[:nc], cends[:2 * nc], nc)
    return net, plan


@numba.njit(cache=True, nogil=True)
def _expand(V, nid, orig2, carcs, ctail, ccap, cstart, cred, cends, nc, flow2, side2, arc_flow, side):
    for a in range(arc_flow.shape[0]):
        arc_flow[a] = 0
    for k in range(orig2.shape[0]):
        arc_flow[orig2[k]] = flow2[k]
    for v in range(V):
        n = nid[v]
        side[v] = side2[n] if n >= 0 else True   # series vertices on no chain: a cycle, which reaches nothing
    for c in range(nc):
        r = cred[c]
        f = flow2[r] if r >= 0 else 0
        ru = not side2[nid[cends[2 * c]]]        # the chain's ends reach the sink
        rw = not side2[nid[cends[2 * c + 1]]]
        back = f > 0 and ru
        p0, p1 = cstart[c], cstart[c + 1]
        m = ccap[p1 - 1]
        for p in range(p1 - 1, p0, -1):          # arcs from the last back to the second
            arc_flow[carcs[p]] = f
            if ccap[p] < m:
                m = ccap[p]
            side[ctail[p]] = not ((rw and m > f) or back)
        arc_flow[carcs[p0]] = f


def expand(V, E, plan, flow2, side2):
    """``(arc_flow, source_side)`` of the network of `V` vertices and `E`
    arcs from those of the reduced network (:func:`reduce`'s `plan`)."""
    nid, orig2, carcs, ctail, ccap, cstart, cred, cends, nc = plan
    arc_flow = np.empty(E, dtype=np.int64)
    side = np.empty(V, dtype=np.bool_)
    _expand(V, nid, orig2, carcs, ctail, ccap, cstart, cred, cends, nc,
            np.asarray(flow2, dtype=np.int64), np.asarray(side2, dtype=np.bool_), arc_flow, side)
    return arc_flow, side

"""Unit bipartite networks on the CPU engine: maximum flow by maximum matching.

A network is a *unit bipartite network* when, counting only arcs of
positive capacity that are not self-loops,

* every arc out of the source ``s`` has capacity 1 and leads to a vertex of
  ``L`` (not the sink); every arc into the sink ``t`` has capacity 1 and
  comes from a vertex of ``R`` (not the source); ``L`` and ``R`` are
  disjoint;
* every other arc goes from ``L`` to ``R`` (any positive capacity), and no
  arc enters ``s`` or leaves ``t``.

This is what :func:`gpumatch.csr.bipartite_flow_network` builds from a
bipartite graph, and what users who reduce an assignment or matching
problem to a flow write by hand.  Each vertex of ``L`` then receives at most
one unit and each vertex of ``R`` sends at most one, so an integral flow is
a matching of the graph ``L x R`` and the flow value is the maximum
matching size (the integrality theorem).  The CPU engine recognises the
structure from the arcs (never from a name), runs its matching engine
(the degree-one rule, greedy, Karp–Sipser, Pothen–Fan+ and push-relabel, :mod:`gpumatch._cpu_match`, the
engine of the Numba matching backend) on ``L x R``,
and writes the matching back as a flow:

* ``s -> u`` and ``v -> t`` carry 1 when ``u`` / ``v`` is matched, ``u -> v``
  carries 1 when ``(u, v)`` is a matched pair, every other arc 0;
* the minimum cut, as the push-relabel engine reports it (the source side is
  every vertex that cannot reach ``t`` in the residual network), comes from
  one alternating BFS from the free vertices of ``R`` (König): a free ``v``
  reaches ``t``; ``u`` reaches a reached ``v`` through the residual arc
  ``u -> v``; a reached matched ``u`` is reached from its partner through
  the reverse of their matched arc.  A free ``u`` that reaches ``t`` would
  be an augmenting path: the search rules that out (Pothen–Fan+'s last
  phase, or push-relabel's labels), and the BFS checks it again.

On the unit networks of the benchmarks this is 4-6x faster end to end
than the push-relabel engine.  ``TUNING["unit_matching"] = False`` (in
:mod:`gpumatch.flow._cpu`) turns it off.
"""

from __future__ import annotations

import numba
import numpy as np

from .. import _cpu_match as mcpu   # the matching engine, below flow and matching both

__all__ = ["detect", "solve_unit"]


@numba.njit(cache=True, nogil=True)
def _detect(V, indptr, indices, cap, s, t, part):
    """Classify the vertices (``part``: 1 ``L``, 2 ``R``, 0 neither) and
    check the structure of a unit bipartite network.  Returns
    ``(ok, m, n, nnz)``: the sizes of ``L`` and ``R`` and the number of
    ``L -> R`` arcs (``ok`` False: not a unit bipartite network)."""
    for u in range(V):
        part[u] = 0
    m = 0
    for a in range(indptr[s], indptr[s + 1]):
        v = indices[a]
        if v == s or cap[a] == 0:
            continue
        if cap[a] != 1 or v == t:
            return False, 0, 0, 0
        part[v] = 1
        m += 1
    n = 0
    for u in range(V):          # the arcs into t mark R
        if u == s or u == t:
            continue
        for a in range(indptr[u], indptr[u + 1]):
            if indices[a] == t and cap[a] > 0:
                if cap[a] != 1 or part[u] == 1:
                    return False, 0, 0, 0
                part[u] = 2
                n += 1
    nnz = 0
    for u in range(V):          # every other arc goes from L to R
        if u == s:
            continue
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            if v == u or cap[a] == 0 or v == t:
                continue
            if part[u] != 1 or part[v] != 2:
                return False, 0, 0, 0
            nnz += 1
    return True, m, n, nnz


@numba.njit(cache=True, nogil=True)
def _biadjacency(V, indptr, indices, cap, t, part, local, m, n, nnz, rptr, rind, cptr, cind):
    """Rows ``L``, columns ``R`` (local ids in vertex order, in ``local``):
    the row-wise (``rptr`` / ``rind``) and column-wise (``cptr`` / ``cind``)
    patterns of the ``L -> R`` arcs, int32 as the matching engine takes them."""
    i = 0
    j = 0
    for u in range(V):
        if part[u] == 1:
            local[u] = i
            i += 1
        elif part[u] == 2:
            local[u] = j
            j += 1
        else:
            local[u] = -1
    k = 0
    rptr[0] = 0
    for c in range(n + 1):
        cptr[c] = 0
    for u in range(V):
        if part[u] != 1:
            continue
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            if part[v] == 2 and cap[a] > 0:
                c = local[v]
                rind[k] = c
                cptr[c + 1] += 1
                k += 1
        rptr[local[u] + 1] = k
    for c in range(n):
        cptr[c + 1] += cptr[c]
    pos = cptr[:n].copy()
    for r in range(m):
        for p in range(rptr[r], rptr[r + 1]):
            c = rind[p]
            cind[pos[c]] = r
            pos[c] += 1


@numba.njit(cache=True, nogil=True)
def _flow_and_cut(V, indptr, indices, cap, s, t, part, local, mu_row, mu_col, zr, zc, arc_flow, source_side):
    """Arc flows of the matching and the source side of the minimum cut
    (the vertices that cannot reach ``t``), from the rows ``zr`` and columns
    ``zc`` that the alternating BFS from the free columns reached."""
    for a in range(indices.shape[0]):
        arc_flow[a] = 0
    for a in range(indptr[s], indptr[s + 1]):
        v = indices[a]
        if v != s and cap[a] > 0 and mu_row[local[v]] >= 0:
            arc_flow[a] = 1
    for u in range(V):
        p = part[u]
        if p == 1:
            r = mu_row[local[u]]
            if r >= 0:
                for a in range(indptr[u], indptr[u + 1]):
                    v = indices[a]
                    if part[v] == 2 and cap[a] > 0 and local[v] == r:
                        arc_flow[a] = 1
                        break
        elif p == 2 and mu_col[local[u]] >= 0:
            for a in range(indptr[u], indptr[u + 1]):
                if indices[a] == t:
                    arc_flow[a] = 1
                    break
    for u in range(V):
        p = part[u]
        if p == 1:
            source_side[u] = not zr[local[u]]
        elif p == 2:
            source_side[u] = not zc[local[u]]
        else:
            source_side[u] = True
    source_side[t] = False


def detect(V, indptr, indices, cap, source, sink):
    """``(part, m, n, nnz)`` when the int64 CSR network is a unit bipartite
    network (``part`` marks ``L`` with 1 and ``R`` with 2), else None.

    The source's arcs are looked at first in NumPy: a network with a source
    arc of capacity above 1 (most general networks) is turned down without
    loading the compiled check (a few ms of a new process's start-up)."""
    ps, pe = int(indptr[source]), int(indptr[source + 1])
    c = cap[ps:pe]
    if bool((c > 1).any()):
        return None
    part = np.empty(V, dtype=np.int8)
    ok, m, n, nnz = _detect(V, indptr, indices, cap, source, sink, part)
    return (part, int(m), int(n), int(nnz)) if ok else None


def solve_unit(V, indptr, indices, cap, source, sink, found):
    """Maximum flow of a unit bipartite network (`found`: :func:`detect`'s
    answer) by maximum matching.  Returns ``(value, arc_flow, source_side,
    stats)`` where `stats` has the matching engine's counters."""
    part, m, n, nnz = found
    local = np.empty(V, dtype=np.int64)
    rptr = np.empty(m + 1, dtype=np.int32)
    rind = np.empty(nnz, dtype=np.int32)
    cptr = np.empty(n + 1, dtype=np.int32)
    cind = np.empty(nnz, dtype=np.int32)
    _biadjacency(V, indptr, indices, cap, sink, part, local, m, n, nnz, rptr, rind, cptr, cind)
    mu_row = np.full(m, -1, dtype=np.int32)
    mu_col = np.full(n, -1, dtype=np.int32)
    raw = np.zeros(6, dtype=np.int64)
    algorithm, ones = "none", 0
    if m and n and nnz:
        algorithm, ones, _, _ = mcpu.initial_matching(m, n, rptr, rind, mu_row, mu_col, cptr, cind)
        if np.count_nonzero(mu_col >= 0) < min(m, n):   # else maximum already
            algorithm += " + " + mcpu.augment(m, n, rptr, rind, cptr, cind, mu_row, mu_col, raw)
    # the free columns reach t directly: the König BFS of the matching engine
    # from the free columns (its sides swapped) finds what else does
    zr = np.empty(m, dtype=np.bool_)
    zc = np.empty(n, dtype=np.bool_)
    if not mcpu.konig_cover(n, m, cptr, cind, mu_col, mu_row, zc, zr):  # pragma: no cover - would be a bug
        raise RuntimeError("numba unit bipartite flow: an augmenting path was left; please report this input")
    arc_flow = np.empty(indices.shape[0], dtype=np.int64)
    side = np.empty(V, dtype=np.bool_)
    _flow_and_cut(V, indptr, indices, cap, source, sink, part, local, mu_row, mu_col, zr, zc, arc_flow, side)
    value = np.int64(np.count_nonzero(mu_row >= 0))
    return value, arc_flow, side, {"aug_phases": int(raw[0]), "aug_paths": int(raw[1]), "left": m, "right": n,
                                   "degree_one_pairs": ones, "algorithm": algorithm}

"""NetworkX's ``bipartite.minimum_weight_full_matching`` on gpumatch's assignment engine.

NetworkX builds a dense ``|U| x |V|`` matrix of the edge weights (``inf``
where there is no edge) and hands it to
:func:`scipy.optimize.linear_sum_assignment`.  gpumatch solves the same
problem on the edges alone (:mod:`gpumatch.lap`, its shortest augmenting
paths with sparse searches), with the same rules:

* the two node sets follow ``bipartite.sets``: ``top_nodes`` against the
  rest (a top node that is not in ``G`` is a row without edges), or the two
  colour classes of a connected bipartite graph, with NetworkX's errors;
  no top node at all is NetworkX's ``NetworkXError("row_order is empty
  list")``;
* only edges between the two sets count (an edge inside one set is
  ignored, as ``biadjacency_matrix`` ignores it);
* an edge's weight is ``d.get(weight, 1)``, so a missing attribute (or
  ``weight=None``) weighs 1; every edge is a candidate, weight 0 included;
  ``inf`` is no edge at all; NaN and ``-inf`` raise scipy's ``ValueError``
  ("matrix contains invalid numeric entries");
* when no matching covers the smaller set, ``ValueError("cost matrix is
  infeasible")``, scipy's message.

Integer weights are solved exactly in int64 (NetworkX rounds them to
float64 on the way to scipy; beyond the engine's exact int64 range gpumatch
does the same).  Declined, so that NetworkX runs instead: directed graphs,
multigraphs (NetworkX keeps the weight of one parallel edge, in an order of
its matrix assembly), weights that are not real numbers, and
``backend="cupy"``, which has no assignment engine yet.  Several optimal
matchings may exist; which one is returned may differ from NetworkX's
(the total weight does not).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from ..lap import _checks, _solve
from ._flow import solver_backend
from ._graph import declined
from ._matching import _Bipartite, _colouring

__all__ = ["minimum_weight_full_matching"]


def _sides(G, top_nodes):
    """``(the _Bipartite of the two sets, top nodes that are not in G)``."""
    if top_nodes is None:
        return G.derived(("bipartite", None), lambda: _Bipartite(G, _colouring(G))), 0
    X = set(top_nodes)       # NetworkX's bipartite.sets; unhashable nodes raise its TypeError
    top = np.zeros(G.n, dtype=bool)
    index = G.index
    extra = 0
    for x in X:
        i = index.get(x)
        if i is None:
            extra += 1
        else:
            top[i] = True
    return _Bipartite(G, top), extra


def _weights(G, weight):
    """Every arc's ``d.get(weight, 1)`` as int64 or float64; declined if not real numbers."""
    raw = [d.get(weight, 1) for nbrs in G.graph._adj.values() for d in nbrs.values()]
    try:
        vals = np.asarray(raw) if raw else np.zeros(0, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise declined("edge weights that are not all numbers") from None
    kind = vals.dtype.kind
    if kind == "u" and vals.size and int(vals.max()) > np.iinfo(np.int64).max:
        return vals.astype(np.float64)
    if kind in "iub":
        return vals.astype(np.int64)
    if kind == "f":
        return vals.astype(np.float64)
    raise declined(f"edge weights that are not all real numbers (NumPy reads them as {vals.dtype})")


def minimum_weight_full_matching(G, top_nodes=None, weight="weight"):
    if G.is_directed():
        raise declined("directed graphs")
    if G.is_multigraph():
        raise declined("multigraphs")
    backend = solver_backend()
    if backend == "cupy":
        raise declined("backend='cupy' (gpumatch has no GPU assignment engine yet)")
    bip, extra = _sides(G, top_nodes)
    top = bip.top
    indptr, indices, (m_in, n) = bip.biadjacency
    m = m_in + extra
    if m == 0:
        raise nx.NetworkXError("row_order is empty list")
    arcs = np.flatnonzero(top[G.rows] & ~top[G.indices])   # the arcs of bip.biadjacency, in its order
    w = _weights(G, weight)[arcs]
    if w.dtype.kind == "f":
        bad = np.isnan(w) | (w == -np.inf)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(f"matrix contains invalid numeric entries: {float(w[k])!r} on the edge "
                             f"({G.labels[G.rows[arcs[k]]]!r}, {G.labels[G.indices[arcs[k]]]!r})")
        keep = np.isfinite(w)
        if not keep.all():               # inf: no edge, as in NetworkX's matrix
            rows = np.repeat(np.arange(m_in, dtype=np.int64), np.diff(indptr))[keep]
            indices, w = indices[keep], w[keep]
            indptr = np.zeros(m_in + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=m_in), out=indptr[1:])
    elif w.size:
        k = min(m, n)
        big = max(-int(w.min()), int(w.max()))
        if big * (4 * k + 8) >= _checks.INT_BOUND:   # past int64's exact range: float64, as NetworkX
            w = w.astype(np.float64)
    if extra:                            # top nodes that are not in G: rows without edges
        indptr = np.concatenate([indptr, np.full(extra, indptr[-1], dtype=indptr.dtype)])
    rows, cols, _, _, _, _ = _solve._solve(np.asarray(indptr, dtype=np.int64), indices, w, (m, n), True,
                                         "cost matrix is infeasible")
    labels = G.labels
    left = labels[bip.row_nodes[rows]].tolist()
    right = labels[bip.col_nodes[cols]].tolist()
    out = dict(zip(left, right))
    out.update(zip(right, left))
    return out

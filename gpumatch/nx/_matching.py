"""NetworkX's bipartite matching and vertex cover on gpumatch's G-PR matching.

The two node sets follow ``networkx.bipartite.sets``: with ``top_nodes``,
those nodes against the rest; without, the two colour classes of the
graph, which must be connected (else ``AmbiguousSolution``; the null graph
raises ``NetworkXPointlessConcept``) and bipartite (else ``NetworkXError``),
the class of the first node being the top one, as NetworkX colours it.
The matching is :func:`gpumatch.bipartite_matching` on the biadjacency
matrix (top nodes as rows).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.sparse import csgraph
import scipy.sparse as sp

from ..matching import bipartite_matching as _gm_bipartite_matching
from ._flow import solver_backend
from ._graph import declined

__all__ = ["hopcroft_karp_matching", "eppstein_matching", "to_vertex_cover"]


class _Bipartite:
    """The biadjacency of a bipartition: top nodes as rows, the others as columns."""

    def __init__(self, G, top):
        self.top = top
        self.row_nodes = np.flatnonzero(top)
        self.col_nodes = np.flatnonzero(~top)
        rank = np.zeros(G.n, dtype=np.int64)
        rank[self.row_nodes] = np.arange(self.row_nodes.shape[0])
        rank[self.col_nodes] = np.arange(self.col_nodes.shape[0])
        self.rank = rank
        rows, cols = G.rows, G.indices
        same = top[rows] == top[cols]
        self.inside = bool(same.any())  # an edge inside one side: not bipartite for these sets
        arcs = np.flatnonzero(top[rows] & ~top[cols])  # each edge once, from its top end
        m = self.row_nodes.shape[0]
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(np.bincount(rank[rows[arcs]], minlength=m), out=indptr[1:])
        self.biadjacency = (indptr, rank[cols[arcs]], (m, self.col_nodes.shape[0]))


def _colouring(G):
    """NetworkX's bipartite colouring of a connected graph: True = top."""
    n = G.n
    if n == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    A = sp.csr_array((np.ones(G.indices.shape[0], dtype=np.int8), G.indices, G.indptr), shape=(n, n))
    ncomp, _ = csgraph.connected_components(A, directed=True, connection="weak")
    if ncomp > 1:
        raise nx.AmbiguousSolution("Disconnected graph: Ambiguous solution for bipartite sets.")
    # two-colouring through the bipartite double cover: arcs (u, v') and (u', v);
    # G is bipartite iff no node u is joined to its copy u'
    rows, cols = G.rows, G.indices
    D = sp.csr_array((np.ones(2 * rows.shape[0], dtype=np.int8),
                      (np.concatenate([rows, rows + n]), np.concatenate([cols + n, cols]))), shape=(2 * n, 2 * n))
    _, label = csgraph.connected_components(D, directed=False)
    if np.any(label[:n] == label[n:]):
        raise nx.NetworkXError("Graph is not bipartite.")
    if rows.shape[0] == 0:  # a single isolated node: NetworkX colours isolates 0 (bottom)
        return np.zeros(n, dtype=bool)
    return label[:n] == label[0]


def _bipartite(G, top_nodes):
    if G.is_directed():
        raise declined("directed graphs")
    if top_nodes is None:
        return G.derived(("bipartite", None), lambda: _Bipartite(G, _colouring(G)))
    top = np.zeros(G.n, dtype=bool)
    index = G.index
    for x in set(top_nodes):
        i = index.get(x)
        if i is None:
            raise declined(f"top_nodes holds {x!r}, which is not a node of G")
        top[i] = True
    bip = _Bipartite(G, top)
    if bip.inside:
        raise declined("an edge joins two nodes of the same side of top_nodes (G is not bipartite for them)")
    return bip


def _matched_pairs(G, bip, res):
    r2c = np.asarray(res.row_to_col)
    rows = np.flatnonzero(r2c >= 0)
    labels = G.labels
    left = labels[bip.row_nodes[rows]].tolist()
    right = labels[bip.col_nodes[r2c[rows]]].tolist()
    return left, right


def hopcroft_karp_matching(G, top_nodes=None):
    bip = _bipartite(G, top_nodes)
    res = _gm_bipartite_matching(bip.biadjacency, backend=solver_backend())
    left, right = _matched_pairs(G, bip, res)
    out = dict(zip(left, right))
    out.update(zip(right, left))
    return out


def eppstein_matching(G, top_nodes=None):
    return hopcroft_karp_matching(G, top_nodes)


def _initial(G, bip, matching):
    """The given matching as a warm start (for each column its row), or None."""
    index, top, rank = G.index, bip.top, bip.rank
    col_to_row = np.full(bip.col_nodes.shape[0], -1, dtype=np.int64)
    try:
        items = list(matching.items())
    except AttributeError:
        return None
    for a, b in items:
        i, j = index.get(a), index.get(b)
        if i is None or j is None or top[i] == top[j]:
            continue
        if not top[i]:
            i, j = j, i
        col_to_row[rank[j]] = rank[i]
    return col_to_row


def to_vertex_cover(G, matching, top_nodes=None):
    bip = _bipartite(G, top_nodes)
    initial = None
    try:
        initial = _initial(G, bip, matching)
    except TypeError:  # unhashable entries: no warm start
        initial = None
    backend = solver_backend()
    try:
        res = _gm_bipartite_matching(bip.biadjacency, backend=backend, initial=initial, certificate=True)
    except ValueError:  # the given matching is not a matching of G: start from scratch
        res = _gm_bipartite_matching(bip.biadjacency, backend=backend, certificate=True)
    labels = G.labels
    cover = labels[bip.row_nodes[np.asarray(res.cover_rows, dtype=bool)]].tolist()
    cover += labels[bip.col_nodes[np.asarray(res.cover_cols, dtype=bool)]].tolist()
    return set(cover)

"""NetworkX's maximum-flow functions on gpumatch's push-relabel solver.

Each function takes a :class:`~gpumatch.nx._graph.GpumatchGraph` (NetworkX
converts the caller's graph) and follows NetworkX's contract: its errors in
its order (missing nodes, equal terminals, multigraphs, an infinite-capacity
path), its rules for capacities (missing = infinite; not > 0 = no arc;
undirected edges = two arcs), its return types.  The flow itself comes from
:func:`gpumatch.maximum_flow` (or :func:`gpumatch.minimum_cut` where only
the value and the cut are needed), on the backend of
``nx.config.backends.gpumatch.backend``.

Minimum cuts: NetworkX's source side is the set of nodes that cannot reach
the sink in the residual network of the maximum flow; gpumatch's
``source_side`` has the same definition, and that set is the same for every
maximum flow, so the partitions agree exactly, not only in value.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from ..flow import maximum_flow as _gm_maximum_flow
from ..flow import minimum_cut as _gm_minimum_cut
from ._graph import declined, flow_network

__all__ = [
    "maximum_flow", "maximum_flow_value", "minimum_cut", "minimum_cut_value",
    "preflow_push", "edmonds_karp", "dinitz", "shortest_augmenting_path", "boykov_kolmogorov",
    "FLOW_FUNC_OPTIONS",
]

#: Keyword options of NetworkX's five maximum-flow functions beyond
#: ``(G, s, t, capacity, value_only)``, as the interface functions forward
#: them.  ``residual`` and ``cutoff`` are declined when not None; the others
#: only tune NetworkX's algorithm and have no meaning for gpumatch's.
FLOW_FUNC_OPTIONS = {
    "preflow_push": ("residual", "global_relabel_freq"),
    "edmonds_karp": ("residual", "cutoff"),
    "dinitz": ("residual", "cutoff"),
    "shortest_augmenting_path": ("residual", "two_phase", "cutoff"),
    "boykov_kolmogorov": ("residual", "cutoff"),
}


def solver_backend() -> str:
    """``nx.config.backends.gpumatch.backend`` ("auto" when unset)."""
    cfg = getattr(nx.config.backends, "gpumatch", None)
    return "auto" if cfg is None else cfg.get("backend", "auto")


def known_flow_func(flow_func):
    """The name of NetworkX's maximum-flow function `flow_func`, or None."""
    from networkx.algorithms import flow as nxflow

    for name in FLOW_FUNC_OPTIONS:
        if flow_func is getattr(nxflow, name, None):
            return name
    return None


# ---------------------------------------------------------------------------
# checks and solve
# ---------------------------------------------------------------------------


def _check_terminals(G, s, t):
    if s not in G:
        raise nx.NetworkXError(f"node {str(s)} not in graph")
    if t not in G:
        raise nx.NetworkXError(f"node {str(t)} not in graph")
    if s == t:
        raise nx.NetworkXError("source and sink are the same node")


def _check_relabel_freq(global_relabel_freq):
    if global_relabel_freq is not None and global_relabel_freq < 0:
        raise nx.NetworkXError("global_relabel_freq must be nonnegative.")


def _network(G, s, t, capacity):
    """Capacities, capacity CSR and terminal indices; raises NetworkX's errors."""
    if G.is_multigraph():
        raise nx.NetworkXError("MultiGraph and MultiDiGraph not supported (yet).")
    cap = G.capacities(capacity)
    if cap.reason is not None:
        raise declined(cap.reason)
    C, C_inf = G.derived(("network", capacity), lambda: flow_network(G, cap))
    si, ti = G.index[s], G.index[t]
    if C_inf is not None:
        reach = csgraph.breadth_first_order(C_inf, si, directed=True, return_predecessors=False)
        if np.any(reach == ti):
            raise nx.NetworkXUnbounded("Infinite capacity path, flow unbounded above.")
    return cap, C, si, ti


def _solve(G, s, t, capacity, *, with_flow):
    cap, C, si, ti = _network(G, s, t, capacity)
    try:
        if with_flow:
            res = _gm_maximum_flow(C, si, ti, backend=solver_backend())
            res.flow.sort_indices()  # (a no-op: gpumatch returns it sorted; the lookups below rely on it)
            return cap, C, res.flow_value, res.source_side, res.flow
        res = _gm_minimum_cut(C, si, ti, backend=solver_backend())
        return cap, C, res.cut_value, res.source_side, None
    except OverflowError as exc:  # flow out of the source beyond int64
        raise declined(str(exc)) from exc


def _lookup(keys_sorted, values, keys, default=0):
    """``values[i]`` where ``keys_sorted[i] == key``, else `default`, for each key."""
    if keys_sorted.shape[0] == 0:
        return np.full(keys.shape[0], default, dtype=values.dtype)
    pos = np.minimum(np.searchsorted(keys_sorted, keys), keys_sorted.shape[0] - 1)
    return np.where(keys_sorted[pos] == keys, values[pos], default)


def _csr_keys(M, n):
    """Row-major keys ``row * n + col`` of a CSR with sorted indices."""
    rows = np.repeat(np.arange(M.shape[0], dtype=np.int64), np.diff(M.indptr))
    return rows * n + M.indices.astype(np.int64), rows


def _check_flow_func(name, flow_func, kwargs):
    """NetworkX's checks of ``flow_func`` and ``**kwargs`` in the interface functions."""
    if flow_func is None:
        if kwargs:
            raise nx.NetworkXError(
                "You have to explicitly set a flow_func if you need to pass parameters via kwargs.")
        return
    if not callable(flow_func):
        raise nx.NetworkXError("flow_func has to be callable.")
    ff = known_flow_func(flow_func)
    if ff is None:
        raise declined("a custom flow_func (its own result is what the caller asked for)")
    if name.startswith("minimum_cut") and kwargs.get("cutoff") is not None and ff == "preflow_push":
        raise nx.NetworkXError("cutoff should not be specified.")
    unknown = set(kwargs) - set(FLOW_FUNC_OPTIONS[ff])
    if unknown:
        raise declined(f"options {sorted(unknown)} that {ff} does not take")
    for opt in ("residual", "cutoff"):
        if kwargs.get(opt) is not None:
            raise declined(f"{opt}= (see can_run)")


# ---------------------------------------------------------------------------
# flow values, flow dicts and cuts
# ---------------------------------------------------------------------------


def _interface(name, flowG, _s, _t, capacity, flow_func, kwargs, *, with_flow):
    _check_flow_func(name, flow_func, kwargs)
    _check_terminals(flowG, _s, _t)
    if known_flow_func(flow_func) == "preflow_push":
        _check_relabel_freq(kwargs.get("global_relabel_freq", 1))
    return _solve(flowG, _s, _t, capacity, with_flow=with_flow)


def maximum_flow(flowG, _s, _t, capacity="capacity", flow_func=None, **kwargs):
    cap, _, value, _, F = _interface("maximum_flow", flowG, _s, _t, capacity, flow_func, kwargs, with_flow=True)
    G = flowG
    n = G.n
    keysF, _ = _csr_keys(F, n)
    # the net flow of every arc of G, in G's adjacency order (0 for arcs that carry nothing)
    net = _lookup(keysF, F.data.astype(np.int64), G.rows * n + G.indices)
    vals = cap.flows_to_user(np.maximum(net, 0))  # NetworkX's untouched entries are int 0
    it = iter(vals)
    flow_dict = {u: dict(zip(nbrs, it)) for u, nbrs in G.graph._adj.items()}
    return cap.scalar_to_user(value), flow_dict


def maximum_flow_value(flowG, _s, _t, capacity="capacity", flow_func=None, **kwargs):
    cap, _, value, _, _ = _interface("maximum_flow_value", flowG, _s, _t, capacity, flow_func, kwargs,
                                     with_flow=False)
    return cap.scalar_to_user(value)


def minimum_cut(flowG, _s, _t, capacity="capacity", flow_func=None, **kwargs):
    cap, _, value, side, _ = _interface("minimum_cut", flowG, _s, _t, capacity, flow_func, kwargs,
                                        with_flow=False)
    labels = flowG.labels
    side = np.asarray(side, dtype=bool)
    return cap.scalar_to_user(value), (set(labels[side].tolist()), set(labels[~side].tolist()))


def minimum_cut_value(flowG, _s, _t, capacity="capacity", flow_func=None, **kwargs):
    cap, _, value, _, _ = _interface("minimum_cut_value", flowG, _s, _t, capacity, flow_func, kwargs,
                                     with_flow=False)
    return cap.scalar_to_user(value)


# ---------------------------------------------------------------------------
# residual networks
# ---------------------------------------------------------------------------


def _residual_network(name, G, s, t, capacity, residual, cutoff, *, trees=False, relabel_freq=None):
    if residual is not None:
        raise declined("residual= (see can_run)")
    if cutoff is not None:
        raise declined("cutoff= (see can_run)")
    _check_terminals(G, s, t)
    if name == "preflow_push":
        _check_relabel_freq(relabel_freq)
    cap, C, value, _, F = _solve(G, s, t, capacity, with_flow=True)
    n = G.n
    # R's arcs are exactly the flow matrix's entries: every kept arc and its reverse
    keysF, rowsF = _csr_keys(F, n)
    colsF = F.indices.astype(np.int64)
    flows = F.data.astype(np.int64)
    Cs = C.sorted_indices() if not C.has_sorted_indices else C
    keysC, _ = _csr_keys(Cs, n)
    capR = _lookup(keysC, Cs.data.astype(np.int64), keysF)  # scaled; solver_inf on infinite arcs
    is_inf = np.zeros(keysF.shape[0], dtype=bool)
    if cap.infinite.any():
        inf_keys = np.sort(G.rows[cap.infinite] * n + G.indices[cap.infinite])
        is_inf = _lookup(inf_keys, np.ones(inf_keys.shape[0], dtype=bool), keysF, default=False)
    # R's capacity of an infinite arc is NetworkX's R.graph["inf"], 3 * total: past int64 for a
    # total above a third of it, so it is set in the list, never in an int64 array
    cap_list = cap.to_user(capR)
    for i in np.flatnonzero(is_inf).tolist():
        cap_list[i] = cap.inf_value
    labels = G.labels
    R = nx.DiGraph()
    R.__networkx_cache__ = None  # as NetworkX's own residual networks: no caching
    R.add_nodes_from(G.nodes)
    R.add_edges_from(zip(labels[rowsF].tolist(), labels[colsF].tolist(),
                         ({"capacity": c, "flow": f} for c, f in zip(cap_list, cap.to_user(flows)))))
    R.graph["inf"] = cap.inf_value
    R.graph["flow_value"] = cap.scalar_to_user(value)
    if trees:
        # residual arcs: an infinite arc always has room left (its flow is at most total < 3 * total)
        R.graph["trees"] = _search_trees(G, rowsF, colsF, (capR - flows > 0) | is_inf, s, t)
    R.graph["algorithm"] = name
    return R


def _search_trees(G, rows, cols, pos, s, t):
    """Breadth-first trees of the residual network (`pos`: the arcs with
    residual capacity): from `s` along residual arcs, and to `t` (each node
    mapped to its parent; the roots to None)."""
    n = G.n
    Res = sp.csr_array((np.ones(int(pos.sum()), dtype=np.int8), (rows[pos], cols[pos])), shape=(n, n))
    labels = G.labels

    def tree(M, root):
        order, pred = csgraph.breadth_first_order(M, G.index[root], directed=True, return_predecessors=True)
        parents = labels[pred[order[1:]]].tolist()
        out = {root: None}
        out.update(zip(labels[order[1:]].tolist(), parents))
        return out

    return tree(Res, s), tree(Res.T.tocsr(), t)


def preflow_push(G, s, t, capacity="capacity", residual=None, global_relabel_freq=1, value_only=False):
    return _residual_network("preflow_push", G, s, t, capacity, residual, None, relabel_freq=global_relabel_freq)


def edmonds_karp(G, s, t, capacity="capacity", residual=None, value_only=False, cutoff=None):
    return _residual_network("edmonds_karp", G, s, t, capacity, residual, cutoff)


def dinitz(G, s, t, capacity="capacity", residual=None, value_only=False, cutoff=None):
    return _residual_network("dinitz", G, s, t, capacity, residual, cutoff)


def shortest_augmenting_path(G, s, t, capacity="capacity", residual=None, value_only=False, two_phase=False,
                             cutoff=None):
    return _residual_network("shortest_augmenting_path", G, s, t, capacity, residual, cutoff)


def boykov_kolmogorov(G, s, t, capacity="capacity", residual=None, value_only=False, cutoff=None):
    return _residual_network("boykov_kolmogorov", G, s, t, capacity, residual, cutoff, trees=True)

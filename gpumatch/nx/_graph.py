"""The backend graph: a NetworkX graph's nodes and arcs as CSR, built once.

:class:`GpumatchGraph` is what ``convert_from_nx`` returns.  It keeps the
node labels (``nodes``, ``index``) and the arcs of the adjacency in
NetworkX's own order as CSR (``indptr``, ``indices``); everything else a
function needs (capacities, the flow network, the two node sets of a
bipartite graph) is derived on first use and kept on the object.  NetworkX
caches the object in ``G.__networkx_cache__`` (unless caching is off), so a
second call on an unchanged graph converts nothing; NetworkX clears that
cache when the graph is changed through its methods.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from operator import methodcaller

import numpy as np
import scipy.sparse as sp

__all__ = ["GpumatchGraph", "Capacities", "declined", "flow_network"]

_INF = float("inf")
_I64_MAX = int(np.iinfo(np.int64).max)
_EXACT_FLOAT = 2**53  # integers below this are exact in float64


def declined(reason):
    """NotImplementedError that NetworkX treats as "this backend can't run it"."""
    return NotImplementedError(f"gpumatch declines: {reason}")


def _exact_sum(a) -> int:
    """Exact Python-int sum of non-negative int64 values (no wrap-around)."""
    if a.size == 0:
        return 0
    return (int((a >> 32).sum()) << 32) + int((a & 0xFFFFFFFF).sum())


class GpumatchGraph:
    """A NetworkX graph as gpumatch sees it.

    Attributes
    ----------
    graph : networkx.Graph
        The original graph (read, never changed).
    nodes : list
        Node labels in ``G``'s order; node ``i`` of the CSR is ``nodes[i]``.
    index : dict
        Label -> position in ``nodes``.
    indptr, indices : int64 arrays
        The adjacency (successors for directed graphs; both directions of
        every edge for undirected ones), one entry per ``G[u][v]`` in
        NetworkX's iteration order.  Multigraphs: one entry per neighbour.
    """

    __networkx_backend__ = "gpumatch"

    def __init__(self, G):
        self.graph = G
        self.nodes = list(G)
        n = len(self.nodes)
        self.index = dict(zip(self.nodes, range(n)))
        adj = G._adj
        deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(deg, out=self.indptr[1:])
        nnz = int(self.indptr[-1])
        self._derived = {}
        indices = None
        if not G.is_directed() and type(adj) is dict:
            indices = _heads_by_shared_data(adj, self.rows, nnz)
        if indices is None:  # one dict lookup of the neighbour's label per arc
            indices = np.fromiter(map(self.index.__getitem__, itertools.chain.from_iterable(adj.values())),
                                  dtype=np.int64, count=nnz)
        self.indices = indices

    # -- what NetworkX and our functions ask of a graph ---------------------
    def is_directed(self):
        return self.graph.is_directed()

    def is_multigraph(self):
        return self.graph.is_multigraph()

    def __contains__(self, node):
        return node in self.graph

    def __len__(self):
        return len(self.nodes)

    def __repr__(self):
        return f"GpumatchGraph({len(self.nodes)} nodes, {self.indices.shape[0]} arcs, of {type(self.graph).__name__})"

    @property
    def n(self) -> int:
        return len(self.nodes)

    def derived(self, key, build):
        """``build()`` once per key; the result is kept with the graph."""
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = build()
            return value

    @property
    def rows(self):
        """Tail of every arc (int64, length nnz)."""
        return self.derived("rows", lambda: np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr)))

    @property
    def labels(self):
        """Node labels as an object array (tuples stay whole)."""
        return self.derived("labels", lambda: np.fromiter(self.nodes, dtype=object, count=self.n))

    def capacities(self, name):
        """The :class:`Capacities` of the edge attribute `name` (cached)."""
        return self.derived(("capacities", name), lambda: Capacities(self, name))


def _heads_by_shared_data(adj, rows, nnz):
    """The neighbour index of every arc of an undirected graph, without hashing labels.

    NetworkX stores an undirected edge's data once: ``G._adj[u][v]`` and
    ``G._adj[v][u]`` are the same dict (the same key dict in a multigraph),
    and a self-loop's appears once, in ``G._adj[u]``.  So the two arcs of an
    edge are the two entries that hold the same object, and each one's
    neighbour is the other's owner: sorting the objects' ids pairs them.
    That is several times faster than looking every neighbour's label up in
    a dict (labels such as tuples hash and compare slowly, and the lookups
    jump around a large table).  Returns None, and the caller looks labels
    up, unless the pairing is exactly what that invariant gives: every id
    twice at two different owners, or once at a node that has a self-loop
    (at most one per node).
    """
    if nnz == 0:
        return np.zeros(0, dtype=np.int64)
    ids = np.fromiter(map(id, itertools.chain.from_iterable(map(methodcaller("values"), adj.values()))),
                      dtype=np.int64, count=nnz)
    order = np.argsort(ids, kind="stable")
    sid = ids[order]
    starts = np.flatnonzero(np.concatenate(([True], sid[1:] != sid[:-1])))
    runs = np.diff(np.append(starts, nnz))
    if runs.max() > 2:
        return None
    single = order[starts[runs == 1]]
    if single.shape[0]:
        owners = rows[single]
        if np.unique(owners).shape[0] != owners.shape[0]:
            return None
        nodes = list(adj)
        if not all(nodes[u] in adj[nodes[u]] for u in owners.tolist()):
            return None
    a = order[starts[runs == 2]]
    b = order[starts[runs == 2] + 1]
    if np.any(rows[a] == rows[b]):
        return None
    heads = np.empty(nnz, dtype=np.int64)
    heads[a] = rows[b]
    heads[b] = rows[a]
    heads[single] = rows[single]
    return heads


class Capacities:
    """Edge capacities of one attribute, made exact integers for gpumatch's solver.

    NetworkX's rules: an edge without the attribute (or with ``inf``) has
    infinite capacity; an edge whose capacity is not ``> 0`` (zero,
    negative, NaN) and a self-loop carry no flow.  gpumatch solves with
    int64 capacities, so the finite ones are scaled by ``2**shift`` (the
    smallest power of two that makes every one an integer: exact for any
    float, whose fraction is binary) and the flows scaled back.  Exactness
    needs ``3 * total`` below ``2**53`` for floats (so that every flow, the
    flow value and NetworkX's ``R.graph["inf"]`` are exact floats; then
    NetworkX's own float sums are exact too) and ``total + 1`` within int64
    for integers when some arcs are infinite (the solver's stand-in for
    infinity is ``total + 1``; gpumatch itself checks that the flow out of
    the source fits int64).  Capacities outside these rules make ``reason``
    a string, and the calling function declines (NetworkX runs instead).

    Attributes
    ----------
    reason : str or None
        Why gpumatch cannot solve with these capacities, or None.
    integral : bool
        All finite capacities are integers (int, bool, NumPy integers):
        flows are returned as ints, else as floats.
    shift : int
        Scale exponent (0 for integers).
    kept : bool array, per arc
        Arcs that carry flow: capacity > 0, not a self-loop.
    infinite : bool array, per arc
        Kept arcs of infinite capacity.
    scaled : int64 array, per arc
        ``capacity * 2**shift`` for kept finite arcs, 0 elsewhere.
    total : int
        Scaled sum of the finite capacities of the kept edges, each edge once
        (as NetworkX's ``build_residual_network`` sums them).
    inf_value : int or float
        ``R.graph["inf"]`` exactly as NetworkX computes it: ``3 * total``
        (in the caller's units) or 1 when that is 0.
    value_type : type
        The type of a nonzero flow value as NetworkX's arithmetic makes it:
        ``0 + c1 + c2 + ...`` over the finite capacities, so ``int`` or
        ``float`` for Python numbers and the promoted NumPy scalar type
        (``np.float32``, ``np.int64``, ...) when the capacities are NumPy
        scalars.  A zero flow value is NetworkX's untouched ``0`` (an int).
        Exact when the capacities share one type; with mixed types NetworkX's
        own types depend on the order of its arithmetic (one path's flows may
        stay int while another's become float), and this is their promotion.
    """

    def __init__(self, g: GpumatchGraph, name):
        self.reason = None
        self.integral = True
        self.shift = 0
        nnz = g.indices.shape[0]
        self.scaled = np.zeros(nnz, dtype=np.int64)
        self.total = 0
        self.inf_value = 1
        self.value_type = int
        adj = g.graph._adj
        if name is None:  # capacity=None: no edge has the attribute, all are infinite
            vals = np.full(nnz, _INF)
            raw = None
        else:
            raw = [d.get(name, _INF) for nbrs in adj.values() for d in nbrs.values()]
            try:
                vals = np.asarray(raw) if nnz else np.zeros(0)
            except (TypeError, ValueError, OverflowError):
                vals = np.zeros(0, dtype=object)
        not_loop = g.rows != g.indices
        kind = vals.dtype.kind
        if kind == "b":
            vals, kind = vals.astype(np.int64), "i"
        if kind == "u":
            if vals.size and int(vals.max()) > _I64_MAX:
                return self._decline(g, "capacities beyond the int64 range")
            vals, kind = vals.astype(np.int64), "i"
        if kind == "i":
            self.kept = (vals > 0) & not_loop
            self.infinite = np.zeros(nnz, dtype=bool)
            finite_ints = vals
        elif kind == "f":
            self.kept = (vals > 0) & not_loop  # NaN and -inf are not > 0
            self.infinite = self.kept & np.isinf(vals)
            finite = self.kept & ~self.infinite
            fin_list = finite.tolist()
            self.integral = all(isinstance(v, (int, np.integer)) for v in itertools.compress(raw, fin_list)) \
                if raw is not None else True
            if self.integral:
                x = vals[finite]
                if x.size and float(x.max()) >= _EXACT_FLOAT:  # float64 may have rounded them: read exactly
                    try:
                        exact = np.fromiter(itertools.compress(raw, fin_list), dtype=np.int64)
                    except OverflowError:
                        return self._decline(g, "capacities beyond the int64 range")
                    finite_ints = np.zeros(nnz, dtype=np.int64)
                    finite_ints[finite] = exact
                else:
                    finite_ints = np.where(finite, vals, 0).astype(np.int64)
            else:
                return self._floats(g, vals, finite, raw)
        else:
            return self._decline(g, f"capacities that are not all numbers (NumPy reads them as {vals.dtype})")
        finite = self.kept & ~self.infinite
        self.value_type = _value_type(raw, finite, float if kind == "f" and not self.integral else int)
        self.scaled = np.where(finite, finite_ints, 0).astype(np.int64)
        arc_total = _exact_sum(self.scaled)
        self.total = arc_total if g.is_directed() else arc_total // 2
        if self.infinite.any() and self.total + 1 > _I64_MAX:  # solver_inf must fit
            return self._decline(g, "infinite capacities beside finite ones whose sum is beyond the int64 range")
        self.inf_value = 3 * self.total or 1

    def _decline(self, g, reason):
        self.reason = reason
        nnz = g.indices.shape[0]
        self.kept = np.zeros(nnz, dtype=bool)
        self.infinite = np.zeros(nnz, dtype=bool)

    def _floats(self, g, vals, finite, raw):
        """Scale non-integral float capacities by the smallest exact power of two."""
        self.integral = False
        self.value_type = _value_type(raw, finite, float)
        x = vals[finite]
        shift = 0
        if x.size:
            mant, expo = np.frexp(x)  # x = mant * 2**expo, 0.5 <= mant < 1
            m = np.ldexp(mant, 53).astype(np.int64)  # 53-bit integer mantissa
            low = (m & -m).astype(np.float64)  # its lowest set bit, a power of two
            trailing = np.frexp(low)[1] - 1
            # x = (m >> trailing) * 2**(expo - 53 + trailing): fraction bits = 53 - expo - trailing
            shift = max(0, int((53 - expo - trailing).max()))
        scaled = np.ldexp(x, shift)
        if x.size and not (float(scaled.max()) < _EXACT_FLOAT):
            return self._decline(g, "float capacities that do not scale exactly to integers below 2**53 "
                                    f"(they need 2**{shift})")
        self.shift = shift
        self.scaled = np.zeros(vals.shape[0], dtype=np.int64)
        self.scaled[finite] = scaled.astype(np.int64)
        arc_total = _exact_sum(self.scaled)
        self.total = arc_total if g.is_directed() else arc_total // 2
        if 3 * self.total >= _EXACT_FLOAT:
            return self._decline(g, "float capacities whose scaled sum is not below 2**53 / 3, where flows "
                                    "would no longer be exact floats")
        self.inf_value = 3 * math.ldexp(self.total, -shift) if self.total else 1

    # -- units ----------------------------------------------------------------
    def to_user(self, a):
        """Scaled integers (int64 array) -> list of the caller's numbers."""
        if self.integral:
            return a.tolist()
        return np.ldexp(a.astype(np.float64), -self.shift).tolist()

    def scalar_to_user(self, v):
        """A flow value (scaled integer) as NetworkX returns it: ``0`` (int)
        when zero, else a number of type ``value_type``."""
        v = int(v)
        if v == 0:
            return 0  # NetworkX's untouched excess (or empty sum) is the int 0, whatever the capacities
        x = v if self.integral else math.ldexp(v, -self.shift)
        return _as_type(x, self.value_type)

    def flows_to_user(self, a):
        """Non-negative arc flows (scaled int64 array) -> list as in NetworkX's
        flow dict: ``0`` (int) where nothing flows, else ``value_type``."""
        t = self.value_type
        if t is int or t is float:
            vals = self.to_user(a)
            return vals if self.integral else [v if v else 0 for v in vals]
        x = a if self.integral else np.ldexp(a.astype(np.float64), -self.shift)
        try:
            with np.errstate(over="raise"):
                typed = x.astype(t) if np.can_cast(x.dtype, t, "same_kind") else None
        except FloatingPointError:
            typed = None
        if typed is None or (self.integral and np.any(typed != x)):
            return [v if v else 0 for v in self.to_user(a)]  # not representable: the exact Python number
        return [v if v else 0 for v in typed]

    @property
    def solver_inf(self) -> int:
        """Scaled capacity given to infinite arcs in the solver: more than all
        finite capacities together, so no minimum cut uses one."""
        return self.total + 1


def _value_type(raw, finite, default):
    """The type of ``0 + c`` summed over the finite kept capacities `raw`
    (`finite` a bool mask over it), as NetworkX's flow arithmetic makes it.

    One sample of each distinct type decides (NumPy's promotion does not
    depend on the values, and Python numbers are "weak"); `default` when
    there is nothing to sum or a type is neither a Python nor a NumPy number.
    """
    if raw is None:
        return default
    types = set(map(type, itertools.compress(raw, finite.tolist())))
    if not types:
        return default
    if not all(t in (int, bool, float) or issubclass(t, (np.number, np.bool_)) for t in types):
        return default
    try:
        return type(functools.reduce(operator.add, (t(1) for t in types), 0))
    except (TypeError, ValueError, OverflowError):
        return default


def _as_type(x, t):
    """`x` (an exact int or float) as type `t`, or `x` itself where `t`
    cannot hold it (a wrapped or rounded-to-infinity value would be wrong)."""
    if t is int or t is float or t is bool:
        return x
    try:
        with np.errstate(over="raise"):
            y = t(x)
    except (OverflowError, FloatingPointError, ValueError, TypeError):
        return x
    if isinstance(y, np.integer) and int(y) != x:
        return x
    if isinstance(y, np.floating) and not np.isfinite(y):
        return x
    return y


def flow_network(g: GpumatchGraph, cap: Capacities):
    """The kept arcs as an int64 capacity CSR for gpumatch, and the infinite ones.

    Returns ``(C, C_inf)``: ``C`` the scaled capacities (infinite arcs get
    ``cap.solver_inf``), ``C_inf`` the pattern of the infinite arcs (None
    when there is none).
    """
    n = g.n
    keep = np.flatnonzero(cap.kept)
    rows = g.rows[keep]
    cols = g.indices[keep]
    w = cap.scaled[keep]
    if cap.infinite.any():  # (else solver_inf is never used, and may be past int64: finite sums are not bounded)
        w = np.where(cap.infinite[keep], np.int64(cap.solver_inf), w)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    C = sp.csr_array((w.astype(np.int64), cols, indptr), shape=(n, n))
    C_inf = None
    if cap.infinite.any():
        inf = np.flatnonzero(cap.infinite)
        C_inf = sp.csr_array((np.ones(inf.shape[0], dtype=np.int8), (g.rows[inf], g.indices[inf])), shape=(n, n))
    return C, C_inf


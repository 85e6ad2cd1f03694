"""Strongly connected components in a topological order, two ways.

The fine Dulmage–Mendelsohn blocks are the strongly connected components
(SCCs) of a directed graph on the matched pairs, listed so that every arc
between two components goes from an earlier one to a later one (then the
permuted matrix is block upper triangular).  Both functions here return, for
each node, its block number ``0 .. nblocks-1`` in such an order.

* :func:`tarjan_scc` (host): :func:`scipy.sparse.csgraph.connected_components`
  with ``connection="strong"``, a compiled iterative Tarjan/Pearce search,
  O(V + E).  Its labels come out in *reverse* topological order (a component
  is labelled when it is finished, sinks first); we reverse them, after
  checking the order on every arc (one vectorised pass), and fall back to a
  topological sort of the condensation (:func:`topological_levels`) should a
  SciPy version ever label differently.
* :func:`fwbw_scc` (for the GPU): a driver written once over the array module
  ``xp`` of its inputs; its two kernels, ``trim`` and ``reach``, come as CUDA
  (``scc.cu``, launched by ``_scc_cuda.py``) and NumPy twins
  (``_scc_numpy.py``).  It keeps each node in a *group* (``key``): a set of
  whole components that is already ordered with respect to every other
  group.  Rounds of

  1. *trim*: an active node with no in-arc (or no out-arc) from an active
     node of its group is a component by itself, the first (last) of its
     group; repeated while a pass removes many nodes;
  2. *forward–backward*: in every group one pivot (largest in·out degree)
     searches forward and backward inside its group; F ∩ B is the pivot's
     component, and the group splits into B∖F, F∩B, the rest, F∖B, in this
     order (no arc goes backwards: F is closed under successors, B under
     predecessors);

  refine the groups until every node is done.  The order lives in ``key``:
  each pass appends one base-4 digit to every key (the node's part: 0..3;
  done nodes append 0), so comparing keys compares the whole history of
  splits, and a group is the set of active nodes of one key.  When the keys
  would overflow 62 bits they are replaced by their dense ranks (one sort).
  Components found by the trim share their key with the other trimmed nodes
  of their part: the block number breaks those ties by node id.
  What is left when few nodes remain (:data:`HOST_FINISH`), or after
  :data:`MAX_ROUNDS` rounds, or when a search runs past :data:`MAX_LEVELS`
  levels (long chains of small components, where level-synchronous searches
  crawl), is finished on the host by :func:`tarjan_scc` on the subgraph of
  the remaining groups.

References: L. K. Fleischer, B. Hendrickson, A. Pinar, "On identifying
strongly connected components in parallel", IPDPS workshops 2000,
doi:10.1007/3-540-45591-4_68 (forward–backward); W. McLendon III et al.,
"Finding strongly connected components in distributed graphs", J. Parallel
Distrib. Comput. 65(8), 2005, doi:10.1016/j.jpdc.2005.03.007 (trimming);
S. Hong, N. C. Rodia, K. Olukotun, "On fast parallel detection of strongly
connected components (SCC) in small-world graphs", SC13,
doi:10.1145/2503210.2503246 (trim, then forward–backward on the giant
component, then the small rest); D. J. Pearce, "A space-efficient algorithm
for finding strongly connected components", Inf. Process. Lett. 116(1),
2016, doi:10.1016/j.ipl.2015.08.010 (SciPy's host algorithm).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _backend
from .. import csr as _csr

__all__ = ["SCCState", "tarjan_scc", "fwbw_scc", "topological_levels", "check_block_order"]

#: Finish on the host (:func:`tarjan_scc`) once at most this many nodes are
#: active: a round on the device costs a few launches and host reads, the
#: host search about a microsecond a node.
HOST_FINISH = 16384
#: Forward–backward rounds on the device at most, then the host finishes.
MAX_ROUNDS = 12
#: Levels of one forward–backward search at most (both directions run in
#: the same launches), then the host finishes: a path-like group of d levels
#: costs d launches, the host search O(V + E) once.
MAX_LEVELS = 8192
#: Trim passes in a row at most, and the share of the active nodes a pass
#: must remove for another pass to follow.
TRIM_PASSES = 8
TRIM_SHARE = 0.01
#: Base-4 digits a key may hold before it is compacted (4**31 < 2**63).
_MAX_DIGITS = 31


@dataclass
class SCCState:
    """Arrays of one :func:`fwbw_scc` run (all on one backend)."""

    k: int
    xp: Any
    fptr: Any
    find: Any
    bptr: Any
    bind: Any
    key: Any
    done: Any
    extra: dict = field(default_factory=dict)


def kernels_for(xp):
    """The kernel set (module) for the array module `xp`."""
    if xp is np:
        from . import _scc_numpy as k
    else:
        from . import _scc_cuda as k
    return k


# ---------------------------------------------------------------------------
# host: Tarjan / Pearce through SciPy
# ---------------------------------------------------------------------------


def _tails(ptr, count):
    return np.repeat(np.arange(ptr.shape[0] - 1, dtype=np.int64), np.diff(ptr))[:count]


def check_block_order(block, ptr, ind) -> bool:
    """True when no arc of the CSR graph goes from a later block to an earlier one."""
    if ind.shape[0] == 0:
        return True
    xp = _csr.array_module(block, ptr, ind)
    heads = block[ind]
    if xp is np:
        # per row the smallest block its arcs reach: no tails array to build
        nonempty = ptr[1:] > ptr[:-1]
        starts = ptr[:-1][nonempty]
        lowest = np.minimum.reduceat(heads, starts)
        return bool((block[:ptr.shape[0] - 1][nonempty] <= lowest).all())
    tails = _csr.segment_owner(ptr, ind.shape[0])
    return bool((block[tails] <= heads).all())


def topological_levels(ncomp, labels, ptr, ind):
    """A topological order of the components of a graph (sources first).

    Kahn's algorithm by levels on the condensation: returns for each
    component its position, so that every arc between two components goes
    from a smaller to a larger position.  A vectorised pass per level: the
    fallback of :func:`tarjan_scc`, not its usual path.
    """
    tails = _tails(ptr, ind.shape[0])
    a, b = labels[tails], labels[ind]
    cross = a != b
    a, b = a[cross], b[cross]
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    cptr = np.zeros(ncomp + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=ncomp), out=cptr[1:])
    indeg = np.bincount(b, minlength=ncomp)
    pos = np.full(ncomp, -1, dtype=np.int64)
    frontier = np.flatnonzero(indeg == 0)
    nxt = 0
    while frontier.shape[0]:
        pos[frontier] = np.arange(nxt, nxt + frontier.shape[0])
        nxt += frontier.shape[0]
        starts, lens = cptr[frontier], cptr[frontier + 1] - cptr[frontier]
        owner = np.repeat(np.arange(frontier.shape[0]), lens)
        heads = b[np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens) + starts[owner]]
        np.subtract.at(indeg, heads, 1)
        frontier = np.unique(heads[indeg[heads] == 0])
    if nxt != ncomp:  # pragma: no cover - the condensation of a graph has no cycle
        raise RuntimeError("topological_levels: the component graph has a cycle")
    return pos


def tarjan_scc(ptr, ind, k):
    """Blocks of a CSR graph on `k` nodes (NumPy arrays) in topological order.

    Returns
    -------
    block : int64 array of length `k`
        Component number of each node, ``0 .. nblocks-1``; an arc between two
        components goes from the smaller number to the larger.
    nblocks : int
    stats : dict
        ``scc_order``: ``"reversed labels"`` (SciPy's finishing order,
        checked) or ``"levels"`` (the fallback).
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    if k == 0:
        return np.zeros(0, dtype=np.int64), 0, {"scc_order": "empty"}
    # the search never reads the values: np.zeros costs no page until touched
    G = sp.csr_matrix((np.zeros(ind.shape[0]), ind, ptr), shape=(k, k))
    ncomp, labels = connected_components(G, directed=True, connection="strong")
    labels = labels.astype(np.int64, copy=False)
    block = (ncomp - 1) - labels
    if check_block_order(block, ptr, ind):
        return block, int(ncomp), {"scc_order": "reversed labels"}
    pos = topological_levels(int(ncomp), labels, ptr, ind)  # pragma: no cover - not SciPy's behaviour today
    return pos[labels], int(ncomp), {"scc_order": "levels"}  # pragma: no cover


# ---------------------------------------------------------------------------
# device-style: trim + forward-backward, one driver for both kernel sets
# ---------------------------------------------------------------------------


def _append_digit(st, digit):
    """``key = 4 * key + digit`` for every node (done nodes: digit 0)."""
    xp = st.xp
    if st.extra["digits"] >= _MAX_DIGITS:
        _compact_keys(st)
    st.key *= 4
    st.key += xp.where(st.done_before, 0, digit).astype(np.int64, copy=False)
    st.extra["digits"] += 1


def _argsort_stable(xp, a):
    """Stable argsort on both backends (CuPy's sort is always stable)."""
    return np.argsort(a, kind="stable") if xp is np else xp.argsort(a)


def _lexsort2(xp, primary, secondary):
    """Order by `primary`, ties by `secondary` (two stable sorts; no Thrust lexsort)."""
    first = _argsort_stable(xp, secondary)
    return first[_argsort_stable(xp, primary[first])]


def _dense_rank(xp, values):
    """Dense ranks (0, 1, ...) of `values`, order kept; and their count."""
    k = values.shape[0]
    if k == 0:
        return values.copy(), 0
    order = xp.argsort(values)
    s = values[order]
    step = xp.zeros(k, dtype=np.int64)
    step[1:] = s[1:] != s[:-1]
    rank = xp.empty(k, dtype=np.int64)
    rank[order] = xp.cumsum(step)
    return rank, int(rank[order[-1]]) + 1


def _compact_keys(st):
    """Replace the keys by their dense ranks (one sort); the order is kept."""
    st.key[...], count = _dense_rank(st.xp, st.key)
    st.extra["digits"] = max(1, int(count - 1).bit_length() // 2 + 1)
    st.extra["compactions"] = st.extra.get("compactions", 0) + 1


def _trim_passes(st, kern, active, stats):
    """Trim passes while they remove at least :data:`TRIM_SHARE` of the
    active nodes; returns the active count."""
    for _ in range(TRIM_PASSES):
        if active == 0:
            break
        cls, removed = kern.trim(st)
        stats["trim_passes"] += 1
        if removed == 0:
            break
        st.done_before = st.done.copy()
        trimmed = (cls == 0) | (cls == 2)
        _append_digit(st, cls)                       # source 0, kept 1, sink 2
        st.done |= trimmed
        st.single |= trimmed
        stats["trimmed"] += removed
        active -= removed
        if removed < TRIM_SHARE * (active + removed):
            break
    return active


def _pivots(st, deg_score):
    """One active node per group: the one of largest ``deg_score``."""
    xp = st.xp
    act = xp.flatnonzero(~st.done)
    if act.shape[0] == 0:
        return act
    keys = st.key[act]
    order = _lexsort2(xp, keys, -deg_score[act])
    ks = keys[order]
    first = xp.empty(ks.shape[0], dtype=bool)
    first[0] = True
    xp.not_equal(ks[1:], ks[:-1], out=first[1:])
    return act[order[first]]


def _host_finish(st, stats):
    """Finish the active nodes with :func:`tarjan_scc` on the host, on the
    subgraph of arcs inside their groups; their keys get the components'
    order, and they are done."""
    xp = st.xp
    k = st.k
    active = ~st.done
    local = xp.cumsum(active, dtype=np.int64) - 1       # local id of each active node
    nodes = xp.flatnonzero(active)
    tails = st.extra.get("tails_dev")
    if tails is None:
        tails = st.extra["tails_dev"] = (_tails(st.fptr, st.find.shape[0]) if xp is np
                                         else _csr.segment_owner(st.fptr, st.find.shape[0]))
    heads = st.find
    keep = active[tails] & active[heads] & (st.key[tails] == st.key[heads]) & (tails != heads)
    src = local[tails[keep]]
    dst = local[heads[keep]]
    nk = int(nodes.shape[0])
    stats["host_nodes"] += nk
    stats["host_arcs"] += int(src.shape[0])
    src_h, dst_h = _backend.to_numpy(src), _backend.to_numpy(dst)
    order = np.argsort(src_h, kind="stable")
    ptr = np.zeros(nk + 1, dtype=np.int64)
    np.cumsum(np.bincount(src_h, minlength=nk), out=ptr[1:])
    block, ncomp, hstats = tarjan_scc(ptr, dst_h[order].astype(np.int32 if nk < 2**31 else np.int64), nk)
    stats["scc_order"] = hstats["scc_order"]
    # keys of the finished nodes: (rank of their group, their component), order kept
    rank, _ = _dense_rank(xp, st.key)
    sub = xp.zeros(k, dtype=np.int64)
    sub[nodes] = xp.asarray(block)
    st.key[...] = rank * max(ncomp, 1) + sub
    st.extra["digits"] = _MAX_DIGITS       # compact before the next digit (there is none)
    st.done[...] = True


def fwbw_scc(fptr, find, k, *, bptr=None, bind=None, host_finish=None, max_rounds=None, max_levels=None):
    """Blocks of a CSR graph in topological order by trim + forward–backward.

    Parameters
    ----------
    fptr, find : arrays (NumPy or CuPy)
        CSR of the graph on `k` nodes (indices of one integer dtype).
    k : int
    bptr, bind : arrays, optional
        CSR of the transpose (computed when not given).
    host_finish, max_rounds, max_levels : int, optional
        Override :data:`HOST_FINISH`, :data:`MAX_ROUNDS`, :data:`MAX_LEVELS`.

    Returns
    -------
    block : int64 array (the backend of the inputs), nblocks : int, stats : dict
        As :func:`tarjan_scc`; ``stats`` counts ``rounds``, ``trim_passes``,
        ``trimmed``, ``levels``, ``host_nodes``/``host_arcs`` (finished on
        the host) and why the host took over (``host_reason``).
    """
    xp = _csr.array_module(fptr, find)
    host_finish = HOST_FINISH if host_finish is None else int(host_finish)
    max_rounds = MAX_ROUNDS if max_rounds is None else int(max_rounds)
    max_levels = MAX_LEVELS if max_levels is None else int(max_levels)
    stats = {"scc_method": "fwbw", "rounds": 0, "trim_passes": 0, "trimmed": 0, "levels": 0,
             "host_nodes": 0, "host_arcs": 0, "host_reason": None, "scc_order": "keys"}
    if k == 0:
        return xp.zeros(0, dtype=np.int64), 0, stats
    if bptr is None:
        bptr, bind = _csr.transpose(fptr, find.astype(fptr.dtype, copy=False), k)
    find = find.astype(fptr.dtype, copy=False)
    bind = bind.astype(fptr.dtype, copy=False)
    bptr = bptr.astype(fptr.dtype, copy=False)
    st = SCCState(k=k, xp=xp, fptr=fptr, find=find, bptr=bptr, bind=bind,
                  key=xp.zeros(k, dtype=np.int64), done=xp.zeros(k, dtype=bool))
    st.single = xp.zeros(k, dtype=bool)              # a component found by the trim
    st.done_before = st.done
    st.extra["digits"] = 0
    kern = kernels_for(xp)
    deg = (fptr[1:] - fptr[:-1]).astype(np.int64) * (bptr[1:] - bptr[:-1]).astype(np.int64)

    active = k
    if active > host_finish:
        active = _trim_passes(st, kern, active, stats)
    while active:
        if active <= host_finish:
            stats["host_reason"] = f"{active} active nodes (host_finish={host_finish})"
            break
        if stats["rounds"] >= max_rounds:
            stats["host_reason"] = f"max_rounds={max_rounds} reached with {active} active nodes"
            break
        pivots = _pivots(st, deg)
        mark, levels, complete = kern.reach(st, pivots, max_levels)
        stats["levels"] += int(levels)
        if not complete:
            stats["host_reason"] = f"a search ran past max_levels={max_levels} with {active} active nodes"
            break
        stats["rounds"] += 1
        st.done_before = st.done.copy()
        fw = (mark & 1) != 0
        bw = (mark & 2) != 0
        # parts: B\F 0, F&B 1 (the pivot's component: done), neither 2, F\B 3
        digit = xp.where(bw, xp.where(fw, 1, 0), xp.where(fw, 3, 2))
        _append_digit(st, digit)
        scc = fw & bw & ~st.done
        st.done |= scc
        active -= int(xp.count_nonzero(scc))
        if active > host_finish:
            active = _trim_passes(st, kern, active, stats)
    if active:
        _host_finish(st, stats)
    # blocks: dense ranks of (key, node id for trimmed singletons)
    tie = xp.where(st.single, xp.arange(k, dtype=np.int64), -1)
    order = _lexsort2(xp, st.key, tie)
    ks, ts = st.key[order], tie[order]
    step = xp.zeros(k, dtype=np.int64)
    step[1:] = (ks[1:] != ks[:-1]) | (ts[1:] != ts[:-1])
    block = xp.empty(k, dtype=np.int64)
    block[order] = xp.cumsum(step)
    nblocks = int(block[order[-1]]) + 1
    stats["compactions"] = st.extra.get("compactions", 0)
    return block, nblocks, stats

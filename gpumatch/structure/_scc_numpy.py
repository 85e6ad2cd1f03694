"""NumPy twins of the SCC kernels in ``scc.cu``.

Each function has the signature and meaning of its CUDA twin in
:mod:`gpumatch.structure._scc_cuda`; the driver
(:func:`gpumatch.structure._scc.fwbw_scc`) calls one set or the other.  The
state ``st`` is a :class:`gpumatch.structure._scc.SCCState`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["trim", "reach"]


def _tails(ptr, count):
    """The tail (row) of every stored arc of a CSR graph."""
    return np.repeat(np.arange(ptr.shape[0] - 1, dtype=np.int64), np.diff(ptr))[:count]


def trim(st):
    """One trim pass; returns ``(cls, count)``.

    ``cls[v]``: 0 = active node without an active in-neighbour of its group
    (self-loops do not count), 2 = with in- but without out-neighbours,
    1 = with both, 3 = done; `count` = nodes of class 0 or 2.  Same result
    as the CUDA twin (which stops each scan at the first arc that counts).
    """
    k = st.k
    find = st.find
    src = st.extra.get("tails")
    if src is None:
        src = st.extra["tails"] = _tails(st.fptr, find.shape[0])
    done = st.done
    key = st.key
    ok = ~done[src] & ~done[find] & (key[src] == key[find]) & (src != find)
    has_out = np.zeros(k, dtype=bool)
    has_out[src[ok]] = True
    has_in = np.zeros(k, dtype=bool)
    has_in[find[ok]] = True
    cls = np.where(has_in, np.where(has_out, 1, 2), 0).astype(np.uint8)
    cls[done] = 3
    return cls, int(np.count_nonzero((cls == 0) | (cls == 2)))


def _expand(ptr, ind, verts):
    """Heads of the arcs of the nodes `verts`, and the index into `verts` of each tail."""
    starts = ptr[verts].astype(np.int64)
    lens = ptr[verts + 1].astype(np.int64) - starts
    offs = np.zeros(verts.shape[0] + 1, dtype=np.int64)
    np.cumsum(lens, out=offs[1:])
    owner = np.repeat(np.arange(verts.shape[0], dtype=np.int64), lens)
    pos = np.arange(offs[-1], dtype=np.int64) - offs[owner] + starts[owner]
    return owner, ind[pos]


def reach(st, pivots, max_levels):
    """Forward and backward breadth-first searches from `pivots` (one per
    group), restricted to the active nodes of the pivot's group.

    Returns ``(mark, levels, complete)``: ``mark[v]`` has bit 1 when ``v``
    is reached forward, bit 2 backward (the pivots have both); `levels` the
    number of levels run (the deeper of the two searches); `complete` False
    when the searches were cut at `max_levels` (then `mark` is partial).
    Same marks as the CUDA twin, which expands both searches one level per
    launch.
    """
    mark = np.zeros(st.k, dtype=np.int32)
    mark[pivots] = 3
    deepest = 0
    for bit, ptr, ind in ((1, st.fptr, st.find), (2, st.bptr, st.bind)):
        frontier = np.asarray(pivots, dtype=np.int64)
        level = 0
        while frontier.shape[0]:
            if level >= max_levels:
                return mark, level, False
            owner, heads = _expand(ptr, ind, frontier)
            ok = ~st.done[heads] & (st.key[heads] == st.key[frontier][owner]) & ((mark[heads] & bit) == 0)
            frontier = np.unique(heads[ok])
            mark[frontier] |= bit
            level += 1
        deepest = max(deepest, level)
    return mark, deepest, True

"""Unit bipartite networks on the device backends: maximum flow by G-PR matching.

The twin of :mod:`gpumatch.flow._cpu_unit` for ``backend="cupy"`` (and
``"numpy"``, which runs the same array code): its module docstring defines
a *unit bipartite network* and says why its maximum flow is a maximum
matching of ``L x R``.  The same rules decide here, from the arcs only:
the source's arcs all of capacity 1 into ``L``, the sink's all of capacity
1 from ``R``, ``L`` and ``R`` disjoint, every other arc ``L -> R`` (any
positive capacity), nothing into the source or out of the sink.  Two rules
only matter on non-canonical arrays (canonical ones have no parallel arcs):
two arcs ``s -> u`` or two arcs ``v -> t`` are turned down (``u`` could
then receive two units), while parallel ``L -> R`` arcs are kept (each
``u`` still receives one unit at most).

Everything runs as array operations on the backend's arrays
(:func:`detect`, :func:`solve_unit`): on CuPy only scalars come back to the
host (three reads in the detection), never the network.  The steps:

1. :func:`detect`: mark ``L`` (heads of the source's arcs) and ``R`` (tails
   of the sink's arcs) in a byte per vertex, then check every arc against
   the marks with one gather per endpoint;
2. the ``L x R`` pattern: ``L`` and ``R`` renumbered in vertex order (a
   prefix sum of the marks), the ``L -> R`` arcs in network order are then
   its CSR rows already (sorted columns when the network's are; a
   non-canonical network's pattern is sorted and made unique);
3. G-PR (:func:`gpumatch.matching._driver.run_gpr`: greedy start, push
   phases, its augmenting-path tail and hand-overs) on a state built by
   :func:`~gpumatch.matching._driver.make_state`, rows ``L``, as
   :func:`gpumatch.bipartite_matching` runs it;
4. the flow: ``s -> u`` and ``v -> t`` carry 1 when ``u`` / ``v`` is
   matched; of the arcs ``u -> v`` of a matched pair, the first one in
   network order carries 1 (parallel arcs: exactly one); every other arc 0;
5. the minimum cut as push-relabel reports it (the source side is every
   vertex that cannot reach ``t`` in the residual network): the global
   relabel's BFS of G-PR on the mirrored state (rows ``R``, over the same
   arrays) from the free vertices of ``R``, with its early stop off
   (``exact_bfs``: labels are exact reachability).  A reached free ``u``
   would be an augmenting path: the BFS checks that none is.

``TUNING["unit_matching"] = False`` (:mod:`gpumatch.flow._tuning`) turns
the route off; :func:`gpumatch.flow._maxflow._solve` takes ``unit=False``
where a caller needs push-relabel itself (``method="flow"`` of the
matching API, the dynamic solver's solves from scratch).
"""

from __future__ import annotations

import time

import numpy as np

from .. import _backend, _memory, csr
from .._validation import CSRGraph, index_dtype_for, offset_dtype_for
from ..matching import _driver   # the G-PR engine, a layer below flow (docs/developer/layers.rst)

__all__ = ["detect", "solve_unit", "route"]


def _host_ints(xp, *values):
    """Scalars of the backend as Python ints, in one read-back."""
    return [int(x) for x in _backend.to_numpy(xp.stack([xp.asarray(v, dtype=np.int64) for v in values]))]


def detect(xp, V, indptr, indices, cap, source, sink, ps, pe):
    """Whether the network is a unit bipartite network.

    Parameters
    ----------
    xp : module
        NumPy or CuPy, that of the arrays.
    V : int
        Number of vertices.
    indptr, indices, cap : arrays
        CSR of the network with no self-loop and no arc of capacity 0
        (:func:`gpumatch.flow._maxflow._solve_on` drops them first).
    source, sink : int
    ps, pe : int
        ``indptr[source]`` and ``indptr[source + 1]`` (read already).

    Returns
    -------
    dict or None
        None when the network is not a unit bipartite network, else the
        arrays the solve reuses: ``part`` (int8 per vertex: 1 ``L``, 2
        ``R``, 0 neither), ``rows`` (tail of each arc), ``middle`` (mask of
        the ``L -> R`` arcs), ``heads`` (the source's arc heads: ``L``),
        ``sink_arcs`` (positions of the arcs into the sink) and ``tails``
        (their tails: ``R``), ``ps`` (the source's first arc), and the
        sizes ``m``, ``n`` and ``nnz`` (``L -> R`` arcs).

    Notes
    -----
    Two reads of the device: whether the source's arcs fit (a look at
    ``deg(s)`` entries, which turns most general networks down before any
    pass over all the arcs), then the verdict and the three sizes.  At
    its peak it holds a byte per vertex and about ``2 o + 8`` bytes per arc
    (``o``: the offset width), the arc tails of
    :func:`gpumatch.csr.segment_owner` being built: less than push-relabel's
    layout, whose need :func:`gpumatch.flow._maxflow._solve_on` checked.
    """
    E = int(indices.shape[0])
    heads = indices[ps:pe]
    hs = xp.sort(heads)
    bad = xp.any(cap[ps:pe] != 1) | xp.any(heads == sink) | xp.any(hs[1:] == hs[:-1])
    if bool(bad):
        return None
    del hs
    part = xp.zeros(V, dtype=np.int8)
    part[heads] = 1
    rows = csr.segment_owner(indptr, E)
    into_t = indices == sink
    sink_arcs = xp.nonzero(into_t)[0]
    tails = rows[sink_arcs]                 # sorted (CSR order): parallel arcs are neighbours
    # (an arc s -> t was turned down above; t -> t is a self-loop, dropped)
    bad = xp.any(cap[sink_arcs] != 1) | xp.any(part[tails] == 1) | xp.any(tails[1:] == tails[:-1])
    part[tails] = 2
    # every other arc goes from L to R: that also rules out arcs into s
    # (s is in neither) and out of t (nor is t)
    middle = ~into_t
    del into_t
    middle[ps:pe] = False
    bad = bad | xp.any(middle & ((part[rows] != 1) | (part[indices] != 2)))
    flag, m, n, nnz = _host_ints(xp, bad, xp.count_nonzero(part == 1), xp.count_nonzero(part == 2),
                                 xp.count_nonzero(middle))
    if flag:
        return None
    return {"part": part, "rows": rows, "middle": middle, "heads": heads, "sink_arcs": sink_arcs,
            "tails": tails, "ps": ps, "m": m, "n": n, "nnz": nnz}


def _biadjacency(xp, backend, found, indices):
    """The ``L x R`` pattern as a :class:`~gpumatch._validation.CSRGraph`
    (rows ``L``, columns ``R``, both numbered in vertex order), and for the
    write-back: the local ids of the heads (``L``) and tails (``R``), the
    positions of the ``L -> R`` arcs and their local rows and columns.
    Consumes `found`'s per-arc and per-vertex arrays."""
    part, m, n, nnz = found.pop("part"), found["m"], found["n"], found["nnz"]
    idt = index_dtype_for(m + 1, n + 1)
    odt = csr.widest(offset_dtype_for(nnz + 1), idt)
    lid = (xp.cumsum(part == 1, dtype=np.int64) - 1).astype(idt)
    rid = (xp.cumsum(part == 2, dtype=np.int64) - 1).astype(idt)
    del part
    arcs = xp.nonzero(found.pop("middle"))[0]
    k_rows = lid[found.pop("rows")[arcs]]   # non-decreasing: L is numbered in vertex order
    k_cols = rid[indices[arcs]]
    l_heads, r_tails = lid[found["heads"]], rid[found["tails"]]
    del lid, rid
    # canonical networks give sorted unique columns per row; other arrays
    # (unsorted rows, parallel arcs) get a sorted unique pattern
    if nnz > 1 and bool(xp.any((k_rows[1:] == k_rows[:-1]) & (k_cols[1:] <= k_cols[:-1]))):
        w = max(n, 1)
        keys = csr.unique_sorted(k_rows.astype(np.int64) * w + k_cols)
        p_rows, p_cols = keys // w, (keys % w).astype(idt)
        del keys
    else:
        p_rows, p_cols = k_rows, k_cols
    g = CSRGraph(csr.segment_offsets(p_rows, m).astype(odt), p_cols, (m, n), backend, False)
    return g, l_heads, r_tails, arcs, k_rows, k_cols


def solve_unit(xp, backend, V, indptr, indices, cap, source, sink, found):
    """Maximum flow of a unit bipartite network (`found`: :func:`detect`'s
    answer, consumed) by G-PR.

    Returns ``(value, arc_flow, source_side, stats)`` with the contract of
    :func:`gpumatch.flow._maxflow._solve` (`arc_flow` aligned with
    `indices`); `stats` has the sizes of ``L`` and ``R`` (``left``,
    ``right``), the algorithm, G-PR's statistics (``matching``) and the
    times (``setup``: the pattern and its transpose; ``phase1``: G-PR;
    ``extract``: the cut and the arc flows).
    """
    t0 = time.perf_counter()
    g, l_heads, r_tails, arcs, k_rows, k_cols = _biadjacency(xp, backend, found, indices)
    st = _driver.make_state(g)
    del g
    _backend.synchronize(backend)
    t1 = time.perf_counter()
    mstats = _driver.run_gpr(st, fresh=True)   # an empty matching: the chain rule may run
    _driver.release_scratch(st)
    _backend.synchronize(backend)
    t2 = time.perf_counter()
    mu_row, mu_col = st.mu_row, st.mu_col      # consistent: run_gpr ends with FixMatching (both sides)
    # the cut: what reaches t in the residual network, by the BFS from the
    # free vertices of R on the mirrored state (rows R, columns L)
    mirror = _driver.state_from_arrays(st.cptr, st.cind, st.rptr, st.rind, mu_col, mu_row, backend)
    del st
    mirror.extra["exact_bfs"] = True
    _driver.kernels_for(backend).global_relabel(mirror)
    reach_r = mirror.psi_row < mirror.inf
    reach_l = mirror.psi_col < mirror.inf
    del mirror
    if bool(xp.any(reach_l & (mu_row < 0))):  # pragma: no cover - would be a bug
        raise RuntimeError("unit bipartite flow: the matching left an augmenting path; please report this input")
    side = xp.ones(V, dtype=bool)
    side[found["heads"]] = ~reach_l[l_heads]
    side[found["tails"]] = ~reach_r[r_tails]
    side[sink] = False
    del reach_l, reach_r
    # the flow: one unit along s -> u -> v -> t for each matched pair (u, v)
    arc_flow = xp.zeros(int(indices.shape[0]), dtype=np.int64)
    ps = found["ps"]
    arc_flow[ps:ps + l_heads.shape[0]] = mu_row[l_heads] >= 0
    arc_flow[found["sink_arcs"]] = mu_col[r_tails] >= 0
    hit = xp.nonzero(mu_row[k_rows] == k_cols)[0]     # arcs of matched pairs, in network order
    h_rows = k_rows[hit]
    first = xp.ones(hit.shape[0], dtype=bool)
    first[1:] = h_rows[1:] != h_rows[:-1]              # the first of parallel arcs u -> v carries the unit
    arc_flow[arcs[hit[first]]] = 1
    value = xp.sum(mu_col >= 0, dtype=np.int64)
    t3 = time.perf_counter()
    stats = {"left": found["m"], "right": found["n"], "matching": mstats,
             "algorithm": f"unit bipartite network: G-PR (finished by {mstats['finished_by']})",
             "time": {"setup": t1 - t0, "phase1": t2 - t1, "phase2": 0.0, "extract": t3 - t2}}
    return value, arc_flow, side, stats


def route(xp, backend, V, E, indptr, indices, cap, source, sink, ps, pe, t_start):
    """A unit bipartite network solved by G-PR matching (for ``_maxflow._solve_on``):
    ``(value, arc_flow, source_side, stats)`` over the given arcs, or None (not
    one, or on CuPy its matching would not fit the free memory: push-relabel
    runs, whose need was checked)."""
    found = detect(xp, V, indptr, indices, cap, source, sink, ps, pe)
    if found is None:
        return None
    if backend == "cupy":
        need = max(_memory.unit_flow_phases(V, E, found["m"], found["n"], found["nnz"], "cupy",
                                            include_input=False).values())
        need -= _memory.graph_bytes(*(a for k, a in found.items() if not isinstance(a, int) and k != "heads"))
        try:
            _memory.check_device_memory(need, f"a unit bipartite network of {V} vertices solved by matching")
        except _memory.DeviceMemoryError:
            return None
    t0 = time.perf_counter()
    value, arc_flow, side, ust = solve_unit(xp, backend, V, indptr, indices, cap, source, sink, found)
    times = ust.pop("time")
    times["setup"] += t0 - t_start
    stats = {"iterations": 0, "phase2_iterations": 0, "global_relabels": 0, "relabel_period": None,
             "pairs_fixed": False, "backend": backend, "method": "unit_matching", "time": times}
    stats.update(ust)
    return value, arc_flow, side, stats

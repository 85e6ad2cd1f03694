"""Maximum flow and minimum cut by two-phase push-relabel (GPU and NumPy).

The host-side driver here is shared by both kernel twins
(:mod:`gpumatch.flow._pr_numpy` and :mod:`gpumatch.flow._pr_cupy`, whose CUDA
source is ``pr.cu``): only the kernels differ, the loop, the relabel schedule
and the termination test are written once.

Phase 1 computes a maximum *preflow*: push-relabel towards the sink over an
active-vertex worklist, with a periodic global relabel (a BFS from the sink
over reverse residual arcs).  Phase 1 ends when a global relabel leaves no
active vertex below height ``V``; the excess left at vertices that cannot
reach the sink is then returned to the source by phase 2, the same
push-relabel run towards the source, so the result is a valid flow and not
only a value.
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np
import scipy.sparse as sp

from .. import _backend, _memory, csr
from ..csr import _exact_sum  # noqa: F401  (in csr: the kernel twins below this driver use it too)
from .._typing import Backend, GraphLike
from .._validation import as_csr_graph, index_dtype_for, offset_dtype_for, small_on_cpu
from . import _scipy
from ._result import MaximumFlowResult, MinimumCutResult  # the public result types (re-exported)
from ._tuning import TUNING  # the flow solvers' tuning lives in one place

__all__ = ["MaximumFlowResult", "MinimumCutResult", "maximum_flow", "minimum_cut", "matching_by_flow"]

METHODS = ("push_relabel", "dinic", "edmonds_karp")
LAYOUTS = ("reverse_csr", "bcsr")
_I64_MAX = np.iinfo(np.int64).max



def _check_vertex(what, v, nv):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    v = int(v)
    return v


def _capacity_graph(csgraph, backend):
    """Validated int64 capacity CSR (scipy's checks and messages, in scipy's order).

    Duplicate entries are summed exactly: a sum past int64 raises
    OverflowError (:func:`gpumatch._validation.as_csr_graph`).
    """
    if sp.issparse(csgraph) or _backend.is_cupy_sparse(csgraph):
        dt = np.dtype(csgraph.dtype)
        if dt.kind == "f" and _backend.is_cupy_sparse(csgraph):
            # cupyx sparse matrices hold only bool/float/complex values: accept
            # floats that are exact integers (|x| <= 2**53), as a float flow
            exact = 2.0 ** 53
            d = csgraph.data
            if d.size and not bool(_backend.reduce((d == _backend.cp.round(d)) & (abs(d) <= exact), "all")):
                raise ValueError("graph capacities must be integers")
            g = as_csr_graph(csgraph, backend, name="csgraph", with_data=True)
            if g.m != g.n:
                raise ValueError("graph must be specified as a square matrix.")
            # duplicates summed past float64's integers
            if g.nnz and float(_backend.reduce(abs(g.data), "max")) > exact:
                raise OverflowError("csgraph: duplicate entries sum past 2**53, beyond the integers that "
                                    "a float64 (cupyx sparse) holds exactly")
            g.data = g.data.astype(np.int64)
            if g.nnz and int(_backend.reduce(g.data, "min")) < 0:
                raise ValueError("graph capacities must be non-negative")
            return g
        if dt.kind not in "iub":
            raise ValueError("graph capacities must be integers")
        if csgraph.shape[0] != csgraph.shape[1]:
            raise ValueError("graph must be specified as a square matrix.")
    g = as_csr_graph(csgraph, backend, name="csgraph", with_data=True, data_dtype=np.int64)
    if g.m != g.n:
        raise ValueError("graph must be specified as a square matrix.")
    if g.nnz and int(_backend.reduce(g.data, "min")) < 0:
        raise ValueError("graph capacities must be non-negative")
    return g


def _check_terminals(source, sink, nv):
    source = _check_vertex("source", source, nv)
    sink = _check_vertex("sink", sink, nv)
    if source == sink:
        raise ValueError("source and sink vertices must differ")
    if not 0 <= source < nv:
        raise ValueError(f"source value ({source}) must be between 0 and {nv - 1}")
    if not 0 <= sink < nv:
        raise ValueError(f"sink value ({sink}) must be between 0 and {nv - 1}")
    return source, sink


def _check_method(method, layout):
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"{method} method is not supported yet. (choose one of {METHODS})")
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


# ---------------------------------------------------------------------------
# layouts
# ---------------------------------------------------------------------------


def _build_rcsr(xp, indptr, indices, cap, V):
    in_indptr, in_indices, in_to_out = csr.transpose(indptr, indices, V, return_perm=True)
    return {"indptr": indptr, "indices": indices, "cap": cap, "flow": xp.zeros_like(cap),
            "in_indptr": in_indptr, "in_indices": in_indices, "in_to_out": in_to_out}


def _build_bcsr(xp, indptr, indices, cap, V, idt, odt):
    """Bidirectional CSR: merged sorted neighbour lists, residual per entry, partner."""
    E = indices.shape[0]
    rows = csr.segment_owner(indptr.astype(np.int64), E)
    cols = indices.astype(np.int64)
    Vl = np.int64(max(V, 1))
    fkey = rows * Vl + cols                       # forward entries (sorted: canonical CSR)
    keys = xp.concatenate([fkey, cols * Vl + rows])
    caps = xp.concatenate([cap, xp.zeros_like(cap)])
    order = xp.argsort(keys, kind="stable") if xp is np else xp.argsort(keys)
    keys, caps = keys[order], caps[order]
    first = xp.ones(keys.shape[0], dtype=bool)
    if keys.shape[0]:
        first[1:] = keys[1:] != keys[:-1]
    ukeys = keys[first]
    # merged capacity = sum over the (at most two) duplicates: forward cap + 0
    cs = xp.cumsum(caps)
    last = xp.nonzero(xp.concatenate([first[1:], xp.ones(1, dtype=bool)]))[0] if keys.shape[0] else first[:0]
    seg = cs[last]
    resid = seg - xp.concatenate([xp.zeros(1, dtype=seg.dtype), seg[:-1]]) if seg.shape[0] else seg
    brow = ukeys // Vl
    bnbr = ukeys - brow * Vl
    counts = xp.bincount(brow, minlength=V) if ukeys.shape[0] else xp.zeros(V, dtype=np.int64)
    bptr = xp.zeros(V + 1, dtype=np.int64)
    xp.cumsum(counts, out=bptr[1:])
    # partner of (u, v) is (v, u): binary search in the sorted key array
    partner = xp.searchsorted(ukeys, bnbr * Vl + brow)
    entry_of_arc = xp.searchsorted(ukeys, fkey)
    # pointers and entry positions (partner) in the offset width, neighbours in the id width
    return {"bptr": bptr.astype(odt), "bnbr": bnbr.astype(idt), "resid": resid.astype(np.int64),
            "partner": partner.astype(odt), "cap_entry": resid.copy(), "entry_of_arc": entry_of_arc}


# ---------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------


def _tile(V, E) -> int:
    """Lanes per vertex of the CuPy kernels: ``TUNING["tile"]``, else by the mean degree."""
    tile = TUNING.get("tile")
    if tile is None:
        mean = (2.0 * E) / max(V, 1)
        tile = 8 if mean <= 12 else (16 if mean <= 40 else 32)
    return tile


def _prepare_kernels(backend, L, lay, V, E, terminals=(), discharge_loop=None, discharge_coop=None):
    """The kernel twin's per-solve context.

    On CuPy the lane-group size follows the mean degree, and vertices of
    more than ``TUNING["hub_degree"]`` arcs get a block each (`terminals`,
    the source and the sink, are never discharged); `discharge_loop` and
    `discharge_coop` override ``TUNING["discharge_loop"]`` and
    ``TUNING["discharge_coop"]``.
    """
    K = _kernels(backend)
    if backend == "cupy":
        tile = _tile(V, E)
        if discharge_loop is None:
            discharge_loop = TUNING.get("discharge_loop", 0)
        if discharge_coop is None:
            discharge_coop = TUNING.get("discharge_coop", 0)
        return K.prepare(L, lay, tile=tile, cycles=TUNING.get("cycles", 8),
                         hub_degree=TUNING.get("hub_degree"), terminals=terminals,
                         bfs_loop=TUNING.get("bfs_loop", 0), discharge_loop=discharge_loop,
                         bfs_coop=bool(TUNING.get("bfs_coop", False)), discharge_coop=discharge_coop)
    return K.prepare(L, lay)


def _next_relabel_period(freq, t_gr, t_dis):
    """Adapt the global-relabel period: keep relabels at about a third of the discharge time."""
    if t_gr > 0.5 * t_dis:
        return min(int(freq * 1.5) + 1, TUNING.get("max_freq") or (1 << 20))
    if t_gr < 0.2 * t_dis:
        return max(int(freq / 1.5), 10)
    return freq


def _kernels(backend):
    if backend == "cupy":
        from . import _pr_cupy as K
    else:
        from . import _pr_numpy as K
    return K


def _global_relabel(K, ctx, st, xp, target, other, hlimit, idt, max_levels=None):
    """Exact heights: BFS distance to `target` over reverse residual arcs (``hlimit`` if unreachable).

    With `max_levels` (the host finish, ``TUNING["host_finish"]``), a BFS
    still going after that many levels raises :class:`_HostFinish`."""
    K.init_heights(st, idt, target, other, hlimit)
    frontier = xp.asarray([target], dtype=idt)
    left, level, _ = K.bfs_run(ctx, st, frontier, 0, None, max(1, int(TUNING.get("batch", 1))), max_levels)
    if max_levels is not None and left.shape[0]:
        raise _HostFinish(f"a global relabel was still going after {level} levels (a path-like network), "
                          f"past the host's estimate")
    K.finish_heights(st, idt, hlimit)
    return level


class _PairWatch:
    """The share of a preflow's mass that runs round anti-parallel pairs of arcs (``TUNING["pairs_share"]``).

    `L` is the reverse-CSR layout (canonical: sorted columns per row); the
    pairs are searched on the first call of :meth:`share` (``K.pair_index``).
    """

    def __init__(self, K, L, V):
        self.K, self.L, self.V = K, L, V
        self.partner = None
        self.pairs = 0

    def share(self):
        """Flow round pairs over all flow (0.0 without flow), or None when no arc has an anti-parallel partner."""
        L = self.L
        if self.partner is None:
            self.partner, self.pairs, _ = self.K.pair_index(L["indptr"], L["indices"], self.V)
        if self.pairs == 0:
            return None
        mass, paired = self.K.pair_share(L["flow"], self.partner)
        return 2.0 * paired / mass if mass > 0 else 0.0


class _HostFinish(Exception):
    """Raised inside a device solve to hand the network to the host engine (``TUNING["host_finish"]``)."""


def _push_relabel(K, ctx, st, xp, target, other, hlimit, idt, freq, stats, backend, adaptive=None, pairs=None):
    """One push-relabel phase: discharge the worklist towards `target` until no vertex is active.

    Terminates only right after a global relabel that finds no active vertex,
    so the final heights are exact distances to `target`.  `adaptive`
    (None: ``TUNING["adaptive"]``) adapts the relabel period to the times;
    with `pairs` (a :class:`_PairWatch`) it stops adapting once the preflow
    runs mostly round anti-parallel pairs (``TUNING["pairs_share"]``).
    """
    adaptive = TUNING.get("adaptive", True) if adaptive is None else bool(adaptive)
    adaptive = adaptive and not stats.get("pairs_fixed")
    share = TUNING.get("pairs_share")
    watch = pairs if share is not None else None
    guard = TUNING.get("max_iterations")
    batch = max(1, int(TUNING.get("batch", 1)))
    it0 = stats["iterations"]
    acc = stats.get("_t")  # seconds spent in relabels and discharges (read-backs synchronise)
    deadline = stats.get("_deadline")
    max_levels = None if deadline is None else max(64, int(deadline[0] / deadline[2]))

    def relabel():
        """Global relabel, then the new worklist; returns ``(work, seconds)``."""
        t0 = time.perf_counter()
        _global_relabel(K, ctx, st, xp, target, other, hlimit, idt, max_levels)
        stats["global_relabels"] += 1
        w = K.active(st, idt, target, hlimit)
        t = time.perf_counter() - t0
        if acc is not None:
            acc["relabel"] = acc.get("relabel", 0.0) + t
        return w, t

    work, t_gr = relabel()
    since = 0
    t_win = time.perf_counter()
    peak = 0                                  # most active vertices in this relabel window
    while True:
        if work.shape[0] == 0 and since == 0:
            break
        peak = max(peak, int(work.shape[0]))
        # relabel at the end of the period, or early once the discharges
        # since the last relabel took `relabel_time_ratio` times as long as
        # it did (a global relabel is then cheap next to them; it puts the
        # vertices that cannot reach the target out of play at once)
        ratio = TUNING.get("relabel_time_ratio")
        early = adaptive and ratio and since > 0 and time.perf_counter() - t_win > ratio * t_gr
        if work.shape[0] == 0 or since >= freq or early:
            t_dis = time.perf_counter() - t_win
            t_it = t_dis / since if since else 0.0
            work, t_gr = relabel()
            if deadline is not None and work.shape[0] and time.perf_counter() - deadline[3] > deadline[4] * deadline[0]:
                raise _HostFinish(f"the device ran past {deadline[4]:g} x the host's estimate of "
                                  f"{deadline[0]:.3f} s with {int(work.shape[0])} active vertices")
            if deadline is not None and since and peak <= deadline[1] and work.shape[0]:
                # the heights are exact now: the excess furthest from the
                # target needs at least that many more discharge iterations
                h = int(st["height"][work].max())
                projected = min(h, hlimit) * t_it
                if projected > deadline[0]:
                    raise _HostFinish(
                        f"at most {peak} active vertices in the last window and excess {h} arcs from the "
                        f"target: projected {projected:.3f} s at {t_it * 1e6:.1f} us per iteration, against "
                        f"{deadline[0]:.3f} s for the host engine")
            peak = 0
            if acc is not None:
                acc["discharge"] = acc.get("discharge", 0.0) + t_dis
            if adaptive and since >= freq:
                freq = _next_relabel_period(freq, t_gr, t_dis)
            if adaptive and watch is not None and stats["global_relabels"] >= int(TUNING.get("pairs_after") or 0):
                got = watch.share()
                if got is None:
                    watch = None                     # no pairs: nothing to watch
                elif got >= share:
                    adaptive, freq = False, int(TUNING.get("pairs_freq") or freq)
                    stats["pairs_fixed"] = True
            since = 0
            t_win = time.perf_counter()
            continue
        if guard is not None and stats["iterations"] - it0 > guard:
            raise RuntimeError(f"push-relabel did not finish within {guard} iterations")
        k = max(1, min(batch, freq - since))
        work, ran = K.discharge(ctx, st, work, stats["_stamp"], target, other, hlimit, k)
        stats["_stamp"] += k
        stats["iterations"] += ran
        since += ran
    return freq


def _greedy_start(K, ctx, st, xp, L, heads, source, sink, V, idt):
    """Send the excess of the source's heads straight on to the sink (paths u -> t, u -> v -> t).

    The preflow stays valid (the source's arcs stay saturated) and the
    global relabel that opens phase 1 computes exact heights for it; on the
    unit network of a bipartite graph this is a greedy matching.
    """
    ib, ie = int(L["in_indptr"][sink]), int(L["in_indptr"][sink + 1])
    if ie == ib:
        return
    sink_arc = xp.full(V, -1, dtype=L["in_to_out"].dtype)   # arc positions (offset width)
    sink_arc[L["in_indices"][ib:ie]] = L["in_to_out"][ib:ie]
    K.greedy(ctx, st, heads, sink_arc, source, sink)


def _direct_return(xp, L, st, source, sink):
    """Return stranded excess along the residual arcs u -> s of the source's entries (bidirectional CSR)."""
    ex = st["excess"]
    b0, b1 = int(L["bptr"][source]), int(L["bptr"][source + 1])
    heads = L["bnbr"][b0:b1]
    hx = ex[heads]
    part = L["partner"][b0:b1]
    d = xp.maximum(xp.minimum(hx, L["resid"][part]), 0)
    d[heads == sink] = 0
    L["resid"][part] -= d
    L["resid"][b0:b1] += d
    ex[heads] = hx - d
    ex[source] += d.sum()


#: A residual pair of the bidirectional CSR holds ``cap(u, v) + cap(v, u)``:
#: each capacity must stay below ``2**62`` for that to fit int64.
_BCSR_OVERFLOW = "capacities of 2**62 or more overflow layout='bcsr'; use layout='reverse_csr'"


def _solve(indptr, indices, cap, source, sink, backend, layout="reverse_csr", adaptive=None, freq=None, unit=True):
    """Two-phase push-relabel on canonical CSR arrays of one backend.

    Returns ``(value, arc_flow, source_side, stats)`` with `arc_flow`
    aligned with `indices` (0 on self-loops and zero-capacity arcs).
    `adaptive`: as in :func:`_push_relabel` (None: ``TUNING["adaptive"]``);
    `freq`: the first global relabel period (None: ``TUNING["freq"]`` or
    its formula).  A device solve whose relabels run deeper, or whose
    measured progress projects longer, than ``TUNING["host_finish"]``'s
    estimate of the host engine (or that runs past twice that estimate) is
    finished by the host engine.  A unit bipartite network is solved by
    matching instead (:mod:`gpumatch.flow._unit`, ``TUNING["unit_matching"]``)
    unless `unit` is False: callers that need push-relabel itself."""
    plan = _host_plan(backend)
    if plan is None:
        return _solve_on(indptr, indices, cap, source, sink, backend, layout, adaptive, freq, None, unit)
    t0 = time.perf_counter()
    V, nnz = int(indptr.shape[0] - 1), int(indices.shape[0])
    deadline = (float(plan["fixed_s"]) + float(plan["entry_s"]) * (V + nnz), int(plan["tiny"]),
                float(plan["level_s"]), t0, float(plan["backstop"]))
    try:
        return _solve_on(indptr, indices, cap, source, sink, backend, layout, adaptive, freq, deadline, unit)
    except _HostFinish as why:
        t1 = time.perf_counter()
        h = [_backend.to_numpy(a) for a in (indptr, indices, cap)]
        value, arc_flow, side, stats = _solve_on(*h, source, sink, "numba", layout, None, None, None)
        xp = _backend.get_xp(backend)
        out = (xp.asarray(value), xp.asarray(arc_flow), xp.asarray(side))
        stats = dict(stats, backend=backend, finished_by="host", switch_reason=str(why), time_device=t1 - t0,
                     time_host=time.perf_counter() - t1, host_method=stats.get("method"))
        return (*out, stats)


def _host_plan(backend):
    """``TUNING["host_finish"]`` for a solve on `backend`, or None (no host
    finish): the device's keys on one of its ``backends``; on NumPy, when
    Numba imports, with its ``numpy`` keys in place."""
    plan = TUNING.get("host_finish")
    if backend == "numba" or not plan:
        return None
    if backend in plan.get("backends", ()):
        return plan
    if backend == "numpy" and plan.get("numpy") is not None and _backend.numba_available():
        return dict(plan, **plan["numpy"])
    return None


def _on_input_arcs(xp, arc_flow, kept, nnz):
    """Flows of the kept arcs (positions `kept`, or all when None) back on all `nnz` input arcs."""
    if kept is None:
        return arc_flow
    out = xp.zeros(nnz, dtype=np.int64)
    out[kept] = arc_flow
    return out


def _solve_on(indptr, indices, cap, source, sink, backend, layout, adaptive, freq, deadline, unit=True):
    """:func:`_solve` on one backend; `deadline`: ``(host seconds, tiny, seconds per BFS level, start,
    backstop)`` of the host finish, or None; `unit`: try the routes around push-relabel (device
    backends): the unit bipartite route (the Numba engine has its own, :mod:`gpumatch.flow._cpu_unit`)
    and the contraction of series chains (:mod:`gpumatch.flow._series`, ``TUNING["series"]``)."""
    if backend == "numba":  # the compiled CPU engine (highest-label push-relabel)
        from . import _cpu

        if int(indptr.shape[0] - 1) >= (1 << 30):
            raise ValueError("graphs with 2**30 or more vertices are not supported")
        ps, pe = int(indptr[source]), int(indptr[source + 1])
        c = cap[ps:pe][(indices[ps:pe] != source) & (cap[ps:pe] > 0)]
        if _exact_sum(np, c) > _I64_MAX:
            raise OverflowError("the total capacity out of the source does not fit int64")
        if layout == "bcsr":  # the engine runs its own layout, but the contract is the layout's, on every backend
            big = np.flatnonzero(cap > _I64_MAX // 2)
            if big.size and np.any(indices[big] != np.searchsorted(indptr, big, side="right") - 1):
                raise OverflowError(_BCSR_OVERFLOW)
        return _cpu.solve(indptr, indices, cap, source, sink, layout)
    xp = _backend.get_xp(backend)
    t_start = time.perf_counter()
    V = int(indptr.shape[0] - 1)
    nnz = int(indices.shape[0])
    if V >= (1 << 30):
        raise ValueError("graphs with 2**30 or more vertices are not supported")
    if backend == "cupy":   # before the solve allocates (the network's own arrays are there already)
        need = _memory.memory_estimate((V, V), nnz, "flow", "cupy", layout=layout, flow_matrix=False,
                                       include_input=False)
        _memory.check_device_memory(need, f"a maximum flow on a network of {V} vertices and {nnz} arcs")
    # Self-loops and arcs of capacity <= 0 carry no flow and are dropped;
    # most networks have none, and then the arrays are taken as they are
    # (the solve writes none of them: the kernels read them through const
    # pointers; at 4e9 arcs a copy of the indices and capacities is 48 GB).
    # Two widths: vertex ids (idt, int32: V < 2**30) and arc positions (odt:
    # pointers, in_to_out, partner; int64 past 2**31 entries of the
    # bidirectional layout's 2E).
    idt = index_dtype_for(V + 1)
    odt = csr.widest(offset_dtype_for(2 * nnz + 1), idt)
    s_indptr, s_indices = indptr.astype(odt, copy=False), indices.astype(idt, copy=False)
    kept = None
    if not _kernels(backend).has_dropped(s_indptr, s_indices, cap, _tile(V, nnz), TUNING.get("cycles", 8)):
        E = nnz
        s_cap = cap
    else:
        rows = csr.segment_owner(indptr.astype(np.int64), nnz)
        keep = (indices.astype(np.int64) != rows) & (cap > 0)
        kept = xp.nonzero(keep)[0]
        E = int(kept.shape[0])
        odt = csr.widest(offset_dtype_for(2 * E + 1), idt)
        k_rows = rows[kept]
        s_indptr = csr.segment_offsets(k_rows, V).astype(odt)   # k_rows is sorted (CSR order)
        s_indices = indices[kept].astype(idt)
        s_cap = cap[kept]
        del rows, keep, k_rows
    ps, pe = int(s_indptr[source]), int(s_indptr[source + 1])
    if _kernels(backend).source_capacity(s_indices, s_cap, ps, pe) > _I64_MAX:
        raise OverflowError("the total capacity out of the source does not fit int64")
    lay = "rcsr" if layout == "reverse_csr" else "bcsr"
    if lay == "bcsr" and E and int(s_cap.max()) > _I64_MAX // 2:
        raise OverflowError(_BCSR_OVERFLOW)   # the layout's contract, whichever route solves
    if unit and TUNING.get("unit_matching", True) and V:
        from . import _unit

        got = _unit.route(xp, backend, V, E, s_indptr, s_indices, s_cap, source, sink, ps, pe, t_start)
        if got is not None:
            value, f, side, stats = got
            stats["layout"] = layout
            return value, _on_input_arcs(xp, f, kept, nnz), side, stats
    if unit and TUNING.get("series", True):
        from . import _series

        red = None
        try:
            if backend == "cupy":   # its arrays must fit beside the network: else push-relabel, whose need was checked
                _memory.check_device_memory(_series.bytes_needed(V, E), f"series reduction of {V} vertices")
            red = _series.reduce(xp, V, s_indptr, s_indices, s_cap, source, sink)
        except _memory.DeviceMemoryError:
            pass
        if red is not None:   # chains of one-in one-out vertices contracted (flow/_series.py)
            value, f, side, stats = _solve_on(red.indptr, red.indices, red.cap, red.source, red.sink, backend,
                                              layout, adaptive, freq, deadline, unit=True)
            f, side = red.expand(f, side)
            stats = dict(stats, series=dict(red.stats, vertices=V))
            return value, _on_input_arcs(xp, f, kept, nnz), side, stats
    if lay == "rcsr":
        L = _build_rcsr(xp, s_indptr, s_indices, s_cap, V)
    else:
        L = _build_bcsr(xp, s_indptr, s_indices, s_cap, V, idt, odt)
    st = {"height": xp.zeros(V, dtype=np.int32), "excess": xp.zeros(V, dtype=np.int64)}
    # initial preflow: saturate every arc out of the source (heads are distinct)
    if lay == "rcsr":
        _kernels(backend).saturate_source(L, st, ps, pe)
    else:
        b0, b1 = int(L["bptr"][source]), int(L["bptr"][source + 1])
        d = L["resid"][b0:b1].copy()
        L["resid"][b0:b1] = 0
        L["resid"][L["partner"][b0:b1]] += d
        st["excess"][L["bnbr"][b0:b1]] += d
    ctx = _prepare_kernels(backend, L, lay, V, E, (source, sink))
    K = _kernels(backend)
    freq = freq or TUNING.get("freq") or max(100, int(V * V / (1000.0 * max(E, 1))))
    stats = {"iterations": 0, "phase2_iterations": 0, "global_relabels": 0, "_stamp": 0,
             "backend": backend, "layout": layout, "method": "push_relabel", "pairs_fixed": False, "_t": {}}
    if deadline is not None:
        stats["_deadline"] = deadline
    times = stats["_t"]
    profile = bool(TUNING.get("profile"))
    if profile:
        _backend.synchronize(backend)
        times["init"] = time.perf_counter() - t_start
    if lay == "rcsr" and TUNING.get("greedy", True) and pe > ps:
        _greedy_start(K, ctx, st, xp, L, s_indices[ps:pe], source, sink, V, idt)
        if profile:
            _backend.synchronize(backend)
            times["greedy"] = time.perf_counter() - t_start - times["init"]
    _backend.synchronize(backend)
    t1 = time.perf_counter()
    times["setup"] = t1 - t_start
    if deadline is not None:  # the host finish's clock starts once the kernels are built (a first call compiles them)
        stats["_deadline"] = deadline[:3] + (t1,) + deadline[4:]
    # Phase 1: maximum preflow towards the sink.
    pairs = _PairWatch(K, L, V) if lay == "rcsr" else None
    freq = _push_relabel(K, ctx, st, xp, sink, source, V, idt, freq, stats, backend, adaptive, pairs)
    source_side = st["height"] >= V
    value = st["excess"][sink].copy()
    _backend.synchronize(backend)
    t2 = time.perf_counter()
    times["phase1"] = t2 - t1
    # Phase 2: return the stranded excess to the source.
    def stranded():
        """Vertices other than the terminals with excess left."""
        return K.active(st, idt, sink, np.iinfo(np.int32).max, source)

    left = stranded()
    if TUNING.get("direct_return", True) and pe > ps and left.shape[0]:
        if lay == "rcsr":
            src_arc = xp.full(V, -1, dtype=odt)     # arc positions
            src_arc[s_indices[ps:pe]] = xp.arange(ps, pe, dtype=odt)
            K.return_excess(ctx, st, left, src_arc, source)
        else:
            _direct_return(xp, L, st, source, sink)
        left = stranded()
        if profile:
            _backend.synchronize(backend)
            times["return"] = time.perf_counter() - t2
    if left.shape[0]:
        it0 = stats["iterations"]
        _push_relabel(K, ctx, st, xp, source, sink, V, idt, freq, stats, backend, adaptive, pairs)
        stats["phase2_iterations"] = stats["iterations"] - it0
        if stranded().shape[0]:  # pragma: no cover - would be a bug
            raise RuntimeError("push-relabel phase 2 left excess at a vertex; please report this")
    _backend.synchronize(backend)
    t3 = time.perf_counter()
    times["phase2"] = t3 - t2
    if lay == "rcsr":
        f_kept = L["flow"]
    else:
        e = L["entry_of_arc"]
        f_kept = xp.maximum(L["cap_entry"][e] - L["resid"][e], 0)
    # (without dropped arcs, one flow per stored arc already: L is not kept past this call)
    arc_flow = _on_input_arcs(xp, f_kept.astype(np.int64, copy=False), kept, nnz)
    stats["relabel_period"] = int(freq)
    stats["time"] = times
    del stats["_stamp"], stats["_t"]
    stats.pop("_deadline", None)
    return value, arc_flow, source_side, stats


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------


def _flow_matrix(g, arc_flow):
    """Skew-symmetric CSR of the caller's kind with the input pattern plus its transpose."""
    V = g.n
    if g.backend == "numba":  # a merge of the sorted rows of A and A^T, compiled (no sort)
        from ._cpu import antisymmetric_csr

        indptr, ucol, data = antisymmetric_csr(V, g.indptr, g.indices, arc_flow)
    else:
        indptr, ucol, data = _kernels(g.backend).flow_matrix(g.indptr, g.indices, arc_flow, V)
    idt = index_dtype_for(V + 1)
    odt = csr.widest(offset_dtype_for(int(ucol.shape[0]) + 1), idt)
    indptr, ucol = indptr.astype(odt, copy=False), ucol.astype(idt, copy=False)
    if g.cupy_out:
        cpx = _backend.cpx_sparse
        cp = _backend.cp
        # cupyx sparse holds no integers: float64 (exact below 2**53)
        return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.asarray(ucol), cp.asarray(indptr)),
                              shape=(V, V))
    data, ucol, indptr = (_backend.to_numpy(a) for a in (data, ucol, indptr))
    cls = sp.csr_array if g.sparray else sp.csr_matrix
    out = cls((data, ucol, indptr), shape=(V, V))
    out.has_sorted_indices = True
    return out


def _small_flow(csgraph, source, sink, layout):
    """``(g, result)``: `csgraph` validated on NumPy, and SciPy's Dinic of
    the small network (:func:`gpumatch.flow._scipy.small_flow`; None when
    its capacities do not fit int32: the engine solves it)."""
    t0 = time.perf_counter()
    g = _capacity_graph(csgraph, "numpy")
    source, sink = _check_terminals(source, sink, g.n)
    return g, _scipy.small_flow(g, source, sink, layout, t0)


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------


@_backend.device_entry
def maximum_flow(csgraph: GraphLike, source: int, sink: int, *,
                 method: Literal["push_relabel", "dinic", "edmonds_karp"] = "push_relabel",
                 backend: Backend = "auto", layout: Literal["reverse_csr", "bcsr"] = "reverse_csr"
                 ) -> MaximumFlowResult:
    """Maximum flow from `source` to `sink` by push-relabel, on the GPU or with NumPy.

    A drop-in for :func:`scipy.sparse.csgraph.maximum_flow` that also
    returns a minimum cut and statistics.

    Parameters
    ----------
    csgraph : sparse matrix or array
        Square matrix of integer capacities, ``csgraph[u, v]`` for the arc
        ``u -> v``: scipy.sparse CSR, CSC or COO (matrix or array),
        cupyx.scipy.sparse CSR/CSC/COO, or an ``(indptr, indices, shape)``
        tuple (unit capacities).  Parallel arcs are summed, anti-parallel
        arcs both kept, self-loops ignored.
    source, sink : int
        Distinct vertex indices.
    method : {"push_relabel", "dinic", "edmonds_karp"}
        ``"push_relabel"`` runs gpumatch's solver on `backend`;
        ``"dinic"`` and ``"edmonds_karp"`` delegate to scipy on the host
        (capacities and the flow value must then fit int32).
    backend : {"auto", "numpy", "cupy", "numba"}
        Where push-relabel runs; output follows the input's device.
        ``"auto"``: the GPU when CuPy finds one, else ``"numba"``, the
        compiled CPU engine: sequential highest-label push-relabel with gap
        and global relabelling (Cherkassky and Goldberg [5]_; both layouts
        run its own residual layout there; a network of mostly chains of
        vertices with one arc in and one out is solved with each chain
        contracted to one arc, ``stats["series_vertices"]``); a small network there (at most
        8192 for ``2 V + nnz``, capacities within int32) goes to SciPy's
        Dinic instead while the engine is not loaded, which spares a new
        process Numba's start-up (``stats["backend"] == "scipy"``).
    layout : {"reverse_csr", "bcsr"}
        Residual-graph layout: out-arcs plus a reverse-arc index with one
        flow value per arc (default), or a bidirectional CSR with a residual
        per direction.  Results are equally valid; speed differs.
        ``"bcsr"`` needs every capacity below ``2**62`` (a residual pair
        holds the capacities of both directions), on every backend.

    Returns
    -------
    MaximumFlowResult
        ``flow_value``, ``flow`` (skew-symmetric CSR, int64),
        ``source_side`` (minimum cut) and ``stats``.

    Raises
    ------
    TypeError
        Dense input, unsupported sparse format, non-integer vertex ids.
    ValueError
        Non-integer capacities ("graph capacities must be integers", also
        for NaN), negative capacities, a non-square matrix, equal or
        out-of-range terminals (scipy's messages), unknown options.
    OverflowError
        When the capacity out of the source does not fit int64, or with
        ``layout="bcsr"`` when a capacity is ``2**62`` or more.

    Notes
    -----
    Two-phase push-relabel [1]_ with the lock-free concurrency of Hong [2]_
    and the GPU organisation of ECL-MaxFlow [3]_ and WBPR [4]_: a worklist of
    active vertices, a tile of threads per vertex choosing the lowest
    residual neighbour, a global relabel (BFS from the sink) every
    ``max(100, V**2 / (1000 E))`` iterations to start with, adapted to the
    measured times, and a second phase that returns the excess stranded at
    vertices that cannot reach the sink to the source.  The NumPy backend
    runs the synchronous schedule of the same kernels.  Work is
    ``O(V**2 E)`` in the worst case; global relabels make it far smaller in
    practice.

    A *unit bipartite network* (every arc out of the source of capacity 1
    into a set ``L``, every arc into the sink of capacity 1 from a disjoint
    set ``R``, every other arc from ``L`` to ``R``, nothing into the source
    or out of the sink; what :func:`gpumatch.csr.bipartite_flow_network`
    builds) is recognised from its arcs on every backend and solved as a
    maximum matching of ``L x R`` instead, by G-PR on NumPy and CuPy and by
    the matching engine on Numba (``stats["method"] == "unit_matching"``):
    push-relabel moves the units of a long augmenting path one arc per
    iteration.  The cut is the one push-relabel reports (the source side:
    the vertices that cannot reach the sink).

    Differences from scipy: the flow matrix is int64 (scipy's is int32 and
    wraps for large capacities); negative capacities raise instead of being
    silently treated as zero flow; CSC and COO are accepted.  Several
    maximum flows exist and which one is returned may vary from run to run
    on the GPU.

    References
    ----------
    .. [1] A. V. Goldberg and R. E. Tarjan, "A new approach to the
       maximum-flow problem", J. ACM 35(4), 1988. :doi:`10.1145/48014.61051`
    .. [2] B. Hong, "A lock-free multi-threaded algorithm for the maximum
       flow problem", IEEE IPDPS 2008. :doi:`10.1109/IPDPS.2008.4536326`
    .. [3] B. VanAusdal and M. Burtscher, "ECL-MaxFlow: a fast GPU
       push-relabel maximum flow code", 2025.
    .. [4] S.-H. Hsieh et al., "Engineering a workload-balanced push-relabel
       algorithm for massive graphs on GPUs" (WBPR), 2024.
    .. [5] B. V. Cherkassky and A. V. Goldberg, "On implementing the
       push-relabel method for the maximum flow problem", Algorithmica
       19(4), 1997. :doi:`10.1007/PL00009180`

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch.flow import maximum_flow
    >>> C = sp.csr_array(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    >>> res = maximum_flow(C, 0, 2, backend="numpy")
    >>> int(res.flow_value)
    4
    >>> res.flow.toarray().tolist()
    [[0, 2, 2], [-2, 0, 2], [-2, -2, 0]]
    >>> res.source_side.tolist()
    [True, True, False]
    >>> int(maximum_flow(C, 0, 2, backend="numba").flow_value)
    4
    """
    _check_method(method, layout)
    small = None
    if method == "push_relabel" and small_on_cpu(csgraph, backend, _scipy.SMALL_MAX):   # no Numba start-up
        g, small = _small_flow(csgraph, source, sink, layout)
    if small is None:
        backend_r = _backend.resolve_backend(backend)
        g = _capacity_graph(csgraph, "numpy" if method != "push_relabel" else backend_r)
    source, sink = _check_terminals(source, sink, g.n)
    if small is not None:
        value, arc_flow, side, stats = small
    elif method != "push_relabel":
        value, arc_flow, side, stats = _scipy.host_method(g, source, sink, method)
        stats["time"] = {}
    else:
        if g.backend == "cupy":   # the solve and the flow matrix after it (which sorts 2 nnz keys)
            need = _memory.memory_estimate(g.shape, g.nnz, "flow", "cupy", layout=layout, include_input=False)
            _memory.check_device_memory(need, f"maximum_flow on a network of {g.n} vertices and {g.nnz} arcs")
        value, arc_flow, side, stats = _solve(g.indptr, g.indices, g.data, source, sink, g.backend, layout)
    t0 = time.perf_counter()
    flow = _flow_matrix(g, arc_flow)
    side = _backend.output_like(side, g.cupy_out)
    stats.setdefault("time", {})["output"] = time.perf_counter() - t0
    value = np.int64(_backend.to_numpy(value))
    return MaximumFlowResult(value, flow, side, stats)


@_backend.device_entry
def minimum_cut(csgraph: GraphLike, source: int, sink: int, *, backend: Backend = "auto",
                layout: Literal["reverse_csr", "bcsr"] = "reverse_csr") -> MinimumCutResult:
    """Minimum `source`-`sink` cut: its capacity, source side and arcs.

    Parameters
    ----------
    csgraph, source, sink, backend, layout
        As in :func:`maximum_flow`.

    Returns
    -------
    MinimumCutResult
        ``cut_value``, ``source_side`` (bool mask) and the cut arcs
        ``cut_rows -> cut_cols`` (stored arcs of positive capacity from the
        source side to the sink side); unpacks as
        ``value, side, (rows, cols)``.

    Notes
    -----
    Computed by :func:`maximum_flow`; the source side is the set of vertices
    that cannot reach the sink in the final residual graph, so the cut is
    the minimum cut closest to the sink.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch.flow import minimum_cut
    >>> C = sp.csr_array(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    >>> value, side, (rows, cols) = minimum_cut(C, 0, 2, backend="numpy")
    >>> int(value), rows.tolist(), cols.tolist()
    (4, [0, 1], [2, 2])
    """
    _check_method("push_relabel", layout)
    small = None
    if small_on_cpu(csgraph, backend, _scipy.SMALL_MAX):   # SciPy's Dinic, as in maximum_flow
        g, small = _small_flow(csgraph, source, sink, layout)
    if small is None:
        g = _capacity_graph(csgraph, _backend.resolve_backend(backend))
    source, sink = _check_terminals(source, sink, g.n)
    if small is not None:
        value, _, side, _ = small
    else:
        value, _, side, _ = _solve(g.indptr, g.indices, g.data, source, sink, g.backend, layout)
    rows = csr.segment_owner(g.indptr, g.nnz)
    cols = g.indices
    cut = side[rows] & ~side[cols] & (g.data > 0)
    out = lambda a: _backend.output_like(a, g.cupy_out)  # noqa: E731
    return MinimumCutResult(np.int64(_backend.to_numpy(value)), out(side), out(rows[cut]), out(cols[cut]))


def matching_by_flow(g, *, layout="reverse_csr"):
    """Maximum bipartite matching of a CSR pattern through its unit flow network.

    Parameters
    ----------
    g : CSRGraph
        Validated ``m x n`` pattern (:func:`gpumatch._validation.as_csr_graph`).
    layout : {"reverse_csr", "bcsr"}
        As in :func:`maximum_flow`.

    Returns
    -------
    row_to_col, col_to_row : arrays on ``g.backend``
        Index dtype of `g`; ``-1`` marks an unmatched vertex.

    Notes
    -----
    Runs push-relabel on :func:`gpumatch.csr.bipartite_flow_network`
    (source -> rows -> columns -> sink, unit capacities); the rows -> columns
    arcs that carry flow form a maximum matching.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch._validation import as_csr_graph
    >>> from gpumatch.flow import matching_by_flow
    >>> g = as_csr_graph(sp.csr_matrix(np.array([[1, 1], [1, 0]])), "numpy")
    >>> r2c, c2r = matching_by_flow(g)
    >>> r2c.tolist(), c2r.tolist()
    ([1, 0], [1, 0])
    """
    _check_method("push_relabel", layout)
    xp = g.xp
    m, n = g.m, g.n
    net_indptr, net_indices, cap, s, t = csr.bipartite_flow_network(g.indptr, g.indices, g.shape)
    # push-relabel itself (unit=False): the unit route would run G-PR, the other method
    _, arc_flow, _, _ = _solve(net_indptr, net_indices, cap, s, t, g.backend, layout, unit=False)
    nnz = g.nnz
    pos = xp.nonzero(arc_flow[:nnz] > 0)[0]
    rows = csr.segment_owner(g.indptr, nnz)[pos].astype(g.indices.dtype)
    cols = g.indices[pos]
    row_to_col = xp.full(m, -1, dtype=g.indices.dtype)
    col_to_row = xp.full(n, -1, dtype=g.indices.dtype)
    row_to_col[rows] = cols
    col_to_row[cols] = rows
    return row_to_col, col_to_row

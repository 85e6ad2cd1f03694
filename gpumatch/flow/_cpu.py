"""Compiled CPU maximum flow (``backend="numba"``): highest-label push-relabel.

The engine of :func:`gpumatch.flow.maximum_flow`, :func:`~gpumatch.flow.minimum_cut`
and :class:`~gpumatch.flow.MaxFlowSolver` when ``backend="numba"`` (and of
``backend="auto"`` on a machine without a usable GPU).  It does not mirror the
GPU kernels: a sequential CPU wins with the textbook serial algorithm,
push-relabel with the *highest-label* selection rule and the two heuristics
of Cherkassky and Goldberg [1]_ (HIPR):

* ``global_relabel``: exact heights by a BFS from the target over reverse
  residual arcs, at the start and whenever the relabel work since the last
  one passes ``freq * (6 V + A)`` (A: residual arcs);
* ``gap`` relabelling: when a relabel empties a height level, every vertex
  above it is cut off from the target at once (height ``V``);
* ``discharge`` of the highest active vertex through its current arc,
  relabelling to one above its lowest residual neighbour.

Two phases give a valid flow, not only its value: phase 1 computes a maximum
preflow towards the sink; phase 2 runs the same engine towards the source and
returns the excess stranded on the source side.  A final BFS from the sink
gives the minimum cut (the vertices that cannot reach it).

Two networks skip the engine's own layout (:func:`solve`): a unit bipartite
network is solved by matching (:mod:`gpumatch.flow._cpu_unit`), and a
network of mostly *series* vertices (one arc in, one arc out) by its reduced
network, each chain contracted to one arc (:mod:`gpumatch.flow._cpu_series`).

Warm starts (the dynamic solver) start from any *pseudoflow*: arc flows
within capacity with excess (inflow above outflow) or deficit at some
vertices.  Deficits go first, by the same engine on the transposed residual
network (deficit moves against residual arcs and is filled from the source,
else cancelled towards the sink, or absorbed by an excess on its way); then
phase 1 pushes the rest, and the source's residual arcs are saturated only
towards vertices that can still reach the sink (the others keep a valid
height ``V`` without it), so a small change costs work near the change, not
a new solve.  In every phase vertices with a deficit are targets too: they
sit at height 0 and absorb excess.

Layout: a residual CSR of ``2 E`` slots, two per arc (the forward slot at
the tail, the reverse slot at the head), each with its head, the index of
its partner slot and its residual capacity; the flow of arc ``a`` is the
residual of its reverse slot.  A vertex's forward slots come first, then
its reverse slots (2.1x fewer discharges on RLG than slots in the order of
their heads); the forward slots are rotated by a hash of the vertex.  The
order decides which admissible arc a discharge tries first, and the sorted
rows of a canonical CSR send the excess of every grid vertex the same way
(1.7-2.4x more discharges on GENRMF).

All engines are ``numba.njit(cache=True)``, compiled once per machine for
one set of array types (int64 capacities, flows and slot indices; int32
vertex ids and heights, which halves the memory that the discharge loop
reads at random; graphs have fewer than 2**30 vertices), so one
specialisation serves every graph.

References
----------
.. [1] B. V. Cherkassky and A. V. Goldberg, "On implementing the push-relabel
   method for the maximum flow problem", Algorithmica 19(4), 1997, pp. 390-410.
   :doi:`10.1007/PL00009180`
.. [2] A. V. Goldberg and R. E. Tarjan, "A new approach to the maximum-flow
   problem", J. ACM 35(4), 1988. :doi:`10.1145/48014.61051`
"""

from __future__ import annotations

import time

import numba
import numpy as np

from . import _cpu_series, _cpu_unit

__all__ = ["TUNING", "build_residual", "arc_flows", "max_flow", "solve", "warm_solve", "solver_solve"]

#: ``freq``: a global relabel runs once the relabel work (12 + degree per
#: relabel, as in HIPR) since the last one passes ``freq * (6 V + A)``
#: (1.0: 10-20 % faster than 0.5 on GENRMF, RLG and unit networks; 2.0
#: loses again on GENRMF 32).
#: ``greedy``: start with the augmenting paths of at most three arcs from
#: the source (:func:`_greedy_paths`).  ``unit_matching``: solve a unit
#: bipartite network by maximum matching (:mod:`gpumatch.flow._cpu_unit`).
#: ``rotate``: each vertex's out-arcs rotated by a hash of the vertex in
#: the residual layout (:func:`build_residual`), which breaks the bias of
#: sorted rows (on the grid frames of GENRMF every discharge otherwise
#: tries the same direction first): 1.7-2.4x fewer discharges on GENRMF.
#: ``series``: contract the chains of series vertices (one arc in, one
#: out; :mod:`gpumatch.flow._cpu_series`) when they are at least this share
#: of the vertices (None: never).  Counting them is one pass over the arcs;
#: the contraction and the expansion about three more, against a discharge
#: per series vertex and unit of flow saved (a path of 100k vertices: 27 ms
#: of push-relabel become 4 ms).
TUNING: dict = {"freq": 1.0, "greedy": True, "unit_matching": True, "rotate": True, "series": 0.25}

_ALPHA = 6
_BETA = 12

# stats slots of the engines (an int64 array)
_S_PUSHES, _S_RELABELS, _S_GLOBAL, _S_GAPS, _S_DISCHARGES, _S_PHASE2 = range(6)
_NSTATS = 8


@numba.njit(cache=True, nogil=True)
def build_residual(V, indptr, indices, cap, flow, keep_zero, rotate):
    """Residual CSR of a network (two slots per arc) and each arc's forward slot.

    Each vertex's slots are its out-arcs (forward slots) first, then the
    reverse slots of its in-arcs in the order of their tails.  The forward
    slots of ``u`` keep the cyclic order of `indices`; with `rotate` they
    start at the out-arc ``(u * 2654435761) % outdeg(u)`` (a multiplicative
    hash), so that neighbouring vertices of a grid do not all try the same
    direction first.  Self-loops get no slots (slot -1); zero-capacity arcs
    neither, unless `keep_zero` (the dynamic solver, whose capacities may
    grow later).
    """
    E = indices.shape[0]
    deg = np.zeros(V, np.int64)
    outdeg = np.zeros(V, np.int64)
    for u in range(V):
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            if v != u and (keep_zero or cap[a] > 0):
                outdeg[u] += 1
                deg[u] += 1
                deg[v] += 1
    bptr = np.zeros(V + 1, np.int64)
    for u in range(V):
        bptr[u + 1] = bptr[u] + deg[u]
    A = bptr[V]
    rpos = np.empty(V, np.int64)     # next reverse slot of each vertex
    for u in range(V):
        rpos[u] = bptr[u] + outdeg[u]
    head = np.empty(A, np.int32)
    rev = np.empty(A, np.int64)
    resid = np.empty(A, np.int64)
    slot = np.full(E, -1, np.int64)
    for u in range(V):
        m = outdeg[u]
        k = (u * 2654435761) % m if rotate and m > 0 else 0   # u's first out-arc goes to slot bptr[u] + k
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            if v != u and (keep_zero or cap[a] > 0):
                f = bptr[u] + k
                k += 1
                if k == m:
                    k = 0
                b = rpos[v]
                rpos[v] += 1
                head[f] = v
                head[b] = u
                rev[f] = b
                rev[b] = f
                resid[f] = cap[a] - flow[a]
                resid[b] = flow[a]
                slot[a] = f
    return bptr, head, rev, resid, slot


@numba.njit(cache=True, nogil=True)
def arc_flows(slot, rev, resid):
    """Flow of every arc: the residual of its reverse slot (0 without a slot)."""
    E = slot.shape[0]
    out = np.zeros(E, np.int64)
    for a in range(E):
        f = slot[a]
        if f >= 0:
            out[a] = resid[rev[f]]
    return out


@numba.njit(cache=True, nogil=True)
def _global_relabel(V, bptr, head, rev, resid, excess, height, target, other, saturate,
                    afirst, anext, ifirst, inext, iprev, cur, queue, old_dmax):
    """Exact heights (BFS from the target and the deficits over reverse residual
    arcs; unreached: ``V``), optionally saturate `other`'s residual arcs towards
    reached vertices, and rebuild the active and inactive lists of every
    level.  Returns ``(amax, dmax)``: the highest active level and the
    highest level in use."""
    n = V
    for h in range(min(old_dmax + 1, n)):
        afirst[h] = -1
        ifirst[h] = -1
    for u in range(V):
        height[u] = n
    qt = 0
    height[target] = 0
    queue[qt] = target
    qt += 1
    for u in range(V):
        if excess[u] < 0 and u != other and u != target:
            height[u] = 0
            queue[qt] = u
            qt += 1
    qh = 0
    while qh < qt:
        w = queue[qh]
        qh += 1
        hw1 = height[w] + 1
        for a in range(bptr[w], bptr[w + 1]):
            x = head[a]
            if height[x] == n and x != other and resid[rev[a]] > 0:
                height[x] = hw1
                queue[qt] = x
                qt += 1
    if saturate:
        # `other` is the source at height V: its residual arcs must lead to
        # height V - 1 or more, so saturate those towards reached vertices
        for a in range(bptr[other], bptr[other + 1]):
            d = resid[a]
            if d > 0:
                x = head[a]
                if height[x] < n:
                    resid[a] = 0
                    resid[rev[a]] += d
                    excess[x] += d
                    excess[other] -= d
    # the lists in vertex order, not BFS order: later discharges then walk
    # the arrays in address order within a level
    amax = -1
    dmax = 0
    for u in range(V):
        h = height[u]
        if h >= n or u == target:
            continue
        cur[u] = bptr[u]
        if excess[u] > 0:
            anext[u] = afirst[h]
            afirst[h] = u
            if h > amax:
                amax = h
        else:
            f = ifirst[h]
            inext[u] = f
            iprev[u] = -1
            if f >= 0:
                iprev[f] = u
            ifirst[h] = u
        if h > dmax:
            dmax = h
    return amax, dmax


@numba.njit(cache=True, nogil=True)
def _phase(V, bptr, head, rev, resid, excess, height, target, other, saturate, freq, stats):
    """Highest-label push-relabel towards `target` until no vertex below height
    ``V`` has excess.  `other` (the opposite terminal) is never active and
    sits at height ``V``; with `saturate` it is the source, whose residual
    arcs are saturated at every global relabel towards vertices that reach
    the target.  Vertices with a deficit (negative excess) absorb excess."""
    n = V
    afirst = np.full(max(n, 1), -1, np.int32)
    ifirst = np.full(max(n, 1), -1, np.int32)
    anext = np.empty(V, np.int32)
    inext = np.empty(V, np.int32)
    iprev = np.empty(V, np.int32)
    cur = np.empty(V, np.int64)
    queue = np.empty(V, np.int32)
    limit = freq * (_ALPHA * V + bptr[V])
    work = 0.0
    pushes = 0
    relabels = 0
    discharges = 0
    amax = -1
    dmax = n - 1
    relabel = True
    while True:
        if relabel:   # (one call site: compiles once)
            amax, dmax = _global_relabel(V, bptr, head, rev, resid, excess, height, target, other, saturate,
                                         afirst, anext, ifirst, inext, iprev, cur, queue, dmax)
            stats[_S_GLOBAL] += 1
            work = 0.0
            relabel = False
        if amax < 0:
            break
        u = afirst[amax]
        if u < 0:
            amax -= 1
            continue
        afirst[amax] = anext[u]
        hu = amax
        discharges += 1
        # --- discharge u ---
        while True:
            ex = excess[u]
            a = cur[u]
            end = bptr[u + 1]
            hm1 = hu - 1
            while a < end:
                r = resid[a]
                if r > 0:
                    v = head[a]
                    if height[v] == hm1:
                        d = ex if ex < r else r
                        resid[a] = r - d
                        resid[rev[a]] += d
                        exv = excess[v]
                        if v != target and exv <= 0 and exv + d > 0:
                            # v becomes active: from the inactive list to the active one
                            nx = inext[v]
                            pv = iprev[v]
                            if pv >= 0:
                                inext[pv] = nx
                            else:
                                ifirst[hm1] = nx
                            if nx >= 0:
                                iprev[nx] = pv
                            anext[v] = afirst[hm1]
                            afirst[hm1] = v
                        excess[v] = exv + d
                        ex -= d
                        pushes += 1
                        if ex == 0:
                            break
                a += 1
            excess[u] = ex
            if ex == 0:
                cur[u] = a
                f = ifirst[hu]
                inext[u] = f
                iprev[u] = -1
                if f >= 0:
                    iprev[f] = u
                ifirst[hu] = u
                if hu > amax:
                    amax = hu
                break
            # --- relabel u ---
            relabels += 1
            b0 = bptr[u]
            work += _BETA + (end - b0)
            newh = n
            besta = end
            for b in range(b0, end):
                if resid[b] > 0:
                    hv1 = height[head[b]] + 1
                    if hv1 < newh:
                        newh = hv1
                        besta = b
            if hu > 0 and afirst[hu] < 0 and ifirst[hu] < 0:
                # --- gap: nothing is left at level hu, so nothing above reaches the target ---
                for h in range(hu + 1, dmax + 1):
                    w = ifirst[h]
                    while w >= 0:
                        height[w] = n
                        w = inext[w]
                    ifirst[h] = -1
                    afirst[h] = -1
                height[u] = n
                dmax = hu - 1
                amax = hu - 1     # the pushes at hu went to hu - 1; nothing is active above
                stats[_S_GAPS] += 1
                break
            if newh >= n:
                height[u] = n
                if amax < hu - 1:
                    amax = hu - 1
                break
            if amax < hu - 1:
                amax = hu - 1     # the pushes at hu went to hu - 1
            hu = newh
            height[u] = hu
            cur[u] = besta
            if hu > dmax:
                dmax = hu
        if work > limit:
            relabel = True
    stats[_S_PUSHES] += pushes
    stats[_S_RELABELS] += relabels
    stats[_S_DISCHARGES] += discharges


@numba.njit(cache=True, nogil=True)
def _reach(V, bptr, head, rev, resid, target, mark):
    """mark[v] = True for every vertex that reaches `target` in the residual network."""
    queue = np.empty(V, np.int64)
    for u in range(V):
        mark[u] = False
    mark[target] = True
    queue[0] = target
    qt = 1
    qh = 0
    while qh < qt:
        w = queue[qh]
        qh += 1
        for a in range(bptr[w], bptr[w + 1]):
            x = head[a]
            if not mark[x] and resid[rev[a]] > 0:
                mark[x] = True
                queue[qt] = x
                qt += 1


@numba.njit(cache=True, nogil=True)
def _count_active(V, excess, s, t, sign):
    c = 0
    for u in range(V):
        if u != s and u != t and sign * excess[u] > 0:
            c += 1
    return c


@numba.njit(cache=True, nogil=True)
def _greedy_paths(V, bptr, head, rev, resid, excess, s, t):
    """Augment along the residual paths ``s -> t``, ``s -> u -> t`` and
    ``s -> u -> v -> t`` (one scan of the source's arcs and their heads'):
    on the unit network of a bipartite graph this is a greedy matching, and
    it leaves the push-relabel phases a fraction of the work."""
    tslot = np.full(V, -1, np.int64)      # slot of the arc v -> t with residual, per v
    for b in range(bptr[t], bptr[t + 1]):
        c = rev[b]
        if resid[c] > 0:
            tslot[head[b]] = c
    for a in range(bptr[s], bptr[s + 1]):
        d = resid[a]
        if d == 0:
            continue
        u = head[a]
        if u == t:
            resid[a] = 0
            resid[rev[a]] += d
            excess[t] += d
            excess[s] -= d
            continue
        c = tslot[u]
        if c >= 0 and resid[c] > 0:
            x = d if d < resid[c] else resid[c]
            resid[a] -= x
            resid[rev[a]] += x
            resid[c] -= x
            resid[rev[c]] += x
            excess[t] += x
            excess[s] -= x
            d -= x
        b = bptr[u]
        while d > 0 and b < bptr[u + 1]:
            v = head[b]
            rb = resid[b]
            if rb > 0 and v != s and v != t:
                c = tslot[v]
                if c >= 0 and resid[c] > 0:
                    x = d if d < rb else rb
                    if resid[c] < x:
                        x = resid[c]
                    resid[a] -= x
                    resid[rev[a]] += x
                    resid[b] -= x
                    resid[rev[b]] += x
                    resid[c] -= x
                    resid[rev[c]] += x
                    excess[t] += x
                    excess[s] -= x
                    d -= x
            b += 1


@numba.njit(cache=True, nogil=True)
def max_flow(V, bptr, head, rev, resid, excess, s, t, freq, greedy, stats, reach_t):
    """Maximum flow from the pseudoflow in `resid` / `excess` (in place).

    Returns 0 on success; on return `reach_t` marks the vertices that reach
    the sink in the final residual network (the complement is the source
    side of a minimum cut).  Error codes (bugs, never expected): 1 a deficit
    left, 2 excess left after phase 2, 3 an augmenting path left.
    """
    height = np.empty(V, np.int32)
    A = resid.shape[0]
    deficits = _count_active(V, excess, s, t, -1) > 0
    # 0. deficits: the same engine on the transposed residual network, where
    # a deficit is an excess: filled from the source (step 0), else
    # cancelled towards the sink (step 1); or absorbed by an excess on the way
    rT = np.empty(A if deficits else 0, np.int64)
    exT = np.empty(V if deficits else 0, np.int64)
    if deficits:
        for a in range(A):
            rT[a] = resid[rev[a]]
        for u in range(V):
            exT[u] = -excess[u]
    elif greedy:
        _greedy_paths(V, bptr, head, rev, resid, excess, s, t)
    for step in range(4):     # (one call site of _phase: it compiles once)
        transposed = step < 2
        if transposed and not deficits:
            continue
        if step == 1 and _count_active(V, exT, s, t, 1) == 0:
            continue
        if step == 2 and deficits:
            for a in range(A):
                resid[rev[a]] = rT[a]
            for u in range(V):
                excess[u] = -exT[u]
            if _count_active(V, excess, s, t, -1) > 0:
                return 1
        if step == 3 and _count_active(V, excess, s, t, 1) == 0:
            continue
        # step 2: the maximum preflow towards the sink; step 3: the excess
        # stranded on the source side goes back to the source
        target = s if step == 0 or step == 3 else t
        other = t if target == s else s
        before = stats[_S_DISCHARGES]
        _phase(V, bptr, head, rev, rT if transposed else resid, exT if transposed else excess, height,
               target, other, step == 2, freq, stats)
        if step == 3:
            stats[_S_PHASE2] += stats[_S_DISCHARGES] - before
    if _count_active(V, excess, s, t, 1) > 0:
        return 2
    _reach(V, bptr, head, rev, resid, t, reach_t)
    if reach_t[s]:
        return 3
    return 0


_ERRORS = {1: "a deficit was left", 2: "excess was left after phase 2", 3: "an augmenting path was left"}


def _run(V, L, excess, s, t, stats):
    """Run :func:`max_flow` on the layout `L` (dict); returns the source side mask."""
    reach = np.empty(V, dtype=np.bool_)
    code = max_flow(V, L["bptr"], L["head"], L["rev"], L["resid"], excess, s, t, float(TUNING["freq"]),
                    bool(TUNING["greedy"]), stats, reach)
    if code:  # pragma: no cover - would be a bug
        raise RuntimeError(f"numba push-relabel: {_ERRORS.get(code, code)}; please report this input")
    return ~reach


def _stats_dict(raw, times, layout):
    return {"iterations": int(raw[_S_DISCHARGES]), "phase2_iterations": int(raw[_S_PHASE2]),
            "global_relabels": int(raw[_S_GLOBAL]), "pushes": int(raw[_S_PUSHES]),
            "relabels": int(raw[_S_RELABELS]), "gaps": int(raw[_S_GAPS]), "relabel_period": None,
            "pairs_fixed": False, "backend": "numba", "layout": layout, "method": "push_relabel",
            "algorithm": "highest-label push-relabel (HIPR)", "time": times}


def solve(indptr, indices, cap, source, sink, layout="reverse_csr", series=True):
    """Two-phase highest-label push-relabel on canonical CSR arrays (NumPy).

    Same contract as ``gpumatch.flow._maxflow._solve``: returns ``(value,
    arc_flow, source_side, stats)`` with `arc_flow` aligned with `indices`
    (0 on self-loops and zero-capacity arcs).  Both layouts run the same
    residual CSR here; `layout` is only reported.  A unit bipartite network
    is solved by matching (``TUNING["unit_matching"]``); with `series`, a
    network of mostly series vertices by its reduced network
    (``TUNING["series"]``; ``stats["series_vertices"]`` counts the
    contracted vertices).
    """
    t0 = time.perf_counter()
    V = int(indptr.shape[0] - 1)
    ip = np.asarray(indptr, dtype=np.int64)
    ix = np.asarray(indices, dtype=np.int64)
    cp = np.asarray(cap, dtype=np.int64)
    if TUNING["unit_matching"] and V:
        found = _cpu_unit.detect(V, ip, ix, cp, source, sink)
        if found is not None:   # a unit bipartite network: maximum flow = maximum matching
            t1 = time.perf_counter()
            value, arc_flow, side, ust = _cpu_unit.solve_unit(V, ip, ix, cp, source, sink, found)
            t2 = time.perf_counter()
            raw = np.zeros(_NSTATS, dtype=np.int64)
            stats = _stats_dict(raw, {"setup": t1 - t0, "phase1": t2 - t1, "phase2": 0.0, "extract": 0.0}, layout)
            stats.update(ust, method="unit_matching", algorithm="unit bipartite network: " + ust.pop("algorithm"))
            return value, arc_flow, side, stats
    share = TUNING.get("series")
    if series and share is not None and V > 2:
        k, arcs = _cpu_series.count(V, ip, ix, cp, source, sink)
        if k and k >= share * V:   # mostly chains: solve the reduced network, then expand
            (V2, ip2, ix2, cp2, s2, t2), plan = _cpu_series.reduce(V, ip, ix, cp, source, sink, arcs)
            del arcs
            t1 = time.perf_counter()
            value, flow2, side2, stats = solve(ip2, ix2, cp2, s2, t2, layout, series=False)
            t2 = time.perf_counter()
            arc_flow, side = _cpu_series.expand(V, ix.shape[0], plan, flow2, side2)
            times = stats["time"]
            times["setup"] += t1 - t0
            times["extract"] = times.get("extract", 0.0) + time.perf_counter() - t2
            stats.update(series_vertices=k, series_chains=int(plan[-1]), reduced_vertices=V2,
                         reduced_arcs=int(ix2.shape[0]))
            return value, arc_flow, side, stats
    zero = np.zeros(ix.shape[0], dtype=np.int64)
    bptr, head, rev, resid, slot = build_residual(V, ip, ix, cp, zero, False, bool(TUNING["rotate"]))
    L = {"bptr": bptr, "head": head, "rev": rev, "resid": resid}
    excess = np.zeros(V, dtype=np.int64)
    raw = np.zeros(_NSTATS, dtype=np.int64)
    t1 = time.perf_counter()
    side = _run(V, L, excess, source, sink, raw)
    t2 = time.perf_counter()
    arc_flow = arc_flows(slot, rev, resid)
    value = np.int64(excess[sink])
    times = {"setup": t1 - t0, "phase1": t2 - t1, "phase2": 0.0, "extract": time.perf_counter() - t2}
    return value, arc_flow, side, _stats_dict(raw, times, layout)


def warm_solve(state, cap, flow, excess, source, sink):
    """Re-maximise a pseudoflow of the dynamic solver in place.

    `state` is a dict kept by the caller between solves (the residual
    layout over the solver's arcs, built on first use); `cap` and `flow`
    are the per-arc capacities and flows (the flow is updated), `excess`
    the imbalance of every vertex that the batches left (zeroed on
    return).  Returns ``(source_side, stats)``.
    """
    t0 = time.perf_counter()
    V = int(excess.shape[0])
    if "bptr" not in state:
        ip = np.asarray(state["indptr"], dtype=np.int64)
        ix = np.asarray(state["indices"], dtype=np.int64)
        bptr, head, rev, resid, slot = build_residual(V, ip, ix, cap, flow, True, bool(TUNING["rotate"]))
        state.update(bptr=bptr, head=head, rev=rev, resid=resid, slot=slot)
    else:
        _load_residual(state["slot"], state["rev"], state["resid"], cap, flow)
    ex = excess.astype(np.int64, copy=True)
    ex[source] = 0
    ex[sink] = 0
    raw = np.zeros(_NSTATS, dtype=np.int64)
    t1 = time.perf_counter()
    side = _run(V, state, ex, source, sink, raw)
    t2 = time.perf_counter()
    flow[...] = arc_flows(state["slot"], state["rev"], state["resid"])
    excess.fill(0)
    times = {"setup": t1 - t0, "phase1": t2 - t1, "phase2": 0.0, "extract": time.perf_counter() - t2}
    return side, _stats_dict(raw, times, "reverse_csr")


@numba.njit(cache=True, nogil=True)
def _load_residual(slot, rev, resid, cap, flow):
    for a in range(slot.shape[0]):
        f = slot[a]
        if f >= 0:
            resid[f] = cap[a] - flow[a]
            resid[rev[f]] = flow[a]


def solver_solve(solver):
    """:meth:`MaxFlowSolver.solve <gpumatch.flow.MaxFlowSolver.solve>` on the Numba backend.

    The solver's arrays stay the state (capacities, the per-arc flow, the
    imbalances that :meth:`~gpumatch.flow.MaxFlowSolver.update_capacities`
    left where a capacity dropped below its flow or an arc of the last cut
    gained capacity); the residual layout over its arcs is built once and
    reloaded from them per solve.  A dynamic solve re-maximises that
    pseudoflow (:func:`warm_solve`); a solve from scratch (the first one,
    or more than ``rebuild_fraction`` of the arcs changed) starts from the
    zero flow.  ``time_budget`` does not apply: the warm start is never
    abandoned.
    """

    t_start = time.perf_counter()
    pending = solver._pending
    stats = {"batch": pending, "cut_pushes": solver._pushed}
    if not solver._solved:
        scratch, reason = True, "first solve"
    elif pending > solver.rebuild_fraction * max(solver._nnz, 1):
        scratch, reason = True, "rebuild_fraction"
    else:
        scratch, reason = False, None
    E = solver._E
    L = solver._L
    cap, flow, excess = solver._cap_p[:E], solver._flow_p[:E], solver._excess
    state = getattr(solver, "_cpu_state", None)
    if state is None:
        state = solver._cpu_state = {"indptr": L["indptr"], "indices": L["indices"]}
    if scratch:
        flow.fill(0)
        excess.fill(0)
        stats["mode"], stats["scratch_reason"] = "scratch", reason
    else:
        stats["mode"] = "dynamic"
        stats["repair"] = "phases" if bool((excess != 0).any()) else "none"
    side, est = warm_solve(state, cap, flow, excess, solver.source, solver.sink)
    times = est.pop("time")
    stats.update(est)
    value = solver._value()
    if scratch:
        t_scr = time.perf_counter() - t_start
        solver._t_scratch = t_scr if solver._t_scratch is None else min(solver._t_scratch, t_scr)
    return solver._publish(value, side, stats, times, t_start)


@numba.njit(cache=True, nogil=True)
def _antisymmetric(V, indptr, indices, arc_flow):
    """The pattern of A + A^T and the values F - F^T, row by row (both
    inputs sorted per row: a merge, no sort): ``(ptr, ind, val, k)``, `ind`
    of the dtype of `indices`, the first `k` entries of `ind` and `val` in
    use.  The transpose is built once; one merge fills buffers of ``2 E``
    (``k < 2 E`` only where arcs are anti-parallel)."""
    E = indices.shape[0]
    # the transpose by counting: its rows come out sorted
    tptr = np.zeros(V + 1, np.int64)
    for a in range(E):
        tptr[indices[a] + 1] += 1
    for v in range(V):
        tptr[v + 1] += tptr[v]
    tpos = tptr[:V].copy()
    trow = np.empty(E, indices.dtype)
    tval = np.empty(E, np.int64)
    for u in range(V):
        for a in range(indptr[u], indptr[u + 1]):
            v = indices[a]
            k = tpos[v]
            tpos[v] += 1
            trow[k] = u
            tval[k] = arc_flow[a]
    ptr = np.empty(V + 1, np.int64)
    ind = np.empty(2 * E, indices.dtype)
    val = np.empty(2 * E, np.int64)
    k = 0
    ptr[0] = 0
    for u in range(V):
        a, ae = indptr[u], indptr[u + 1]
        b, be = tptr[u], tptr[u + 1]
        while a < ae and b < be:
            i = indices[a]
            j = trow[b]
            if i < j:
                ind[k] = i
                val[k] = arc_flow[a]
                a += 1
            elif j < i:
                ind[k] = j
                val[k] = -tval[b]
                b += 1
            else:
                ind[k] = i
                val[k] = arc_flow[a] - tval[b]
                a += 1
                b += 1
            k += 1
        while a < ae:
            ind[k] = indices[a]
            val[k] = arc_flow[a]
            a += 1
            k += 1
        while b < be:
            ind[k] = trow[b]
            val[k] = -tval[b]
            b += 1
            k += 1
        ptr[u + 1] = k
    return ptr, ind, val, k


def antisymmetric_csr(V, indptr, indices, arc_flow):
    """``(indptr, indices, data)`` of the skew-symmetric flow matrix with the
    pattern of the canonical CSR `indptr` / `indices` plus its transpose (what
    ``gpumatch.flow._maxflow._flow_matrix`` builds by a sort of keys)."""
    ptr, ind, val, k = _antisymmetric(V, np.asarray(indptr), np.asarray(indices), arc_flow)
    if k < ind.shape[0]:   # anti-parallel arcs shared entries: no buffer past the matrix
        ind, val = ind[:k].copy(), val[:k].copy()
    return ptr, ind, val

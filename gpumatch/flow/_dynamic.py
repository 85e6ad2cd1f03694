"""Dynamic maximum flow: re-solve after a batch of capacity changes.

:class:`MaxFlowSolver` keeps the residual network of one graph (reverse-CSR
layout, one flow value per arc) on its backend between solves.  A batch of
capacity changes turns the previous maximum flow into a *pseudo-flow*:

* where a capacity drops below the flow on its arc, the flow is cut to the
  new capacity, which leaves an excess at the tail and a deficit at the head;
* where a *saturated* arc gains capacity, the new residual is pushed along it
  at once (excess at the head, deficit at the tail).  An arc that was not
  saturated cannot lie on a minimum cut, so raising it changes nothing.

The next :meth:`MaxFlowSolver.solve` repairs and re-maximises the
pseudo-flow with the push-relabel kernels of :mod:`gpumatch.flow`, in
phases that each start with an exact global relabel towards their sinks:

A1. excess to the sink;  A2. excess left to the deficits (extra sinks of
height 0);  B. excess left back to the source;  D1. deficits filled from the
source;  D2. deficits left filled by cancelling flow towards the sink.  D1
and D2 are push-relabel on the transposed network, where a deficit is an
excess.  The flow is then valid; a BFS from the sink decides: if the source
cannot reach the sink the flow is maximum (and the BFS gives the minimum
cut), else phase F saturates the source arcs whose head reaches the sink and
runs the two phases of a full solve from the valid flow.

Two guards keep a dynamic solve from costing more than a solve from scratch:
past ``rebuild_fraction`` changed arcs the solver starts from scratch, and a
repair that runs longer than ``time_budget`` times the last from-scratch
solve is abandoned for one.
"""

from __future__ import annotations

import time

import numpy as np

from .. import _backend, csr
from .._validation import as_index_array, index_dtype_for
from . import _maxflow as _mf

__all__ = ["MaxFlowSolver"]


def _scatter_add(xp, a, idx, vals):
    """``a[idx] += vals`` with repeated indices accumulated (both backends)."""
    xp.add.at(a, idx, vals)  # cupy.add.at is what the deprecated cupyx.scatter_add calls


class _OverBudget(Exception):
    """The dynamic repair ran past its time budget (the solver then starts from scratch)."""


def _relabel(K, ctx, st, xp, targets, blocked, hlimit, batch, deadline=None):
    """Exact heights: BFS distance to the set `targets` over reverse residual arcs."""
    h = st["height"]
    h.fill(-1)
    h[targets] = 0
    if blocked is not None:
        h[blocked] = hlimit
    frontier = targets
    level = 0
    while frontier.shape[0]:
        if deadline is not None and time.perf_counter() > deadline:
            raise _OverBudget()
        frontier, ran = K.bfs_level(ctx, st, frontier, level, batch)
        level += ran
    h[h == -1] = hlimit
    return level


class _Phase:
    """One push-relabel run towards a set of height-0 vertices (sinks)."""

    def __init__(self, solver, ctx, st, sinks_fn, terminals, blocked, name=""):
        self.name = name
        self.s = solver
        self.ctx, self.st = ctx, st
        self.sinks_fn = sinks_fn          # () -> array of height-0 vertices
        self.terminals = terminals        # (target, other) passed to the kernel
        self.blocked = blocked            # vertex held at height hlimit, or None

    def relabel(self):
        s = self.s
        t0 = time.perf_counter()
        _relabel(s._K, self.ctx, self.st, s._xp, self.sinks_fn(), self.blocked, s._V, s._batch, s._deadline)
        s._stats["global_relabels"] += 1
        return time.perf_counter() - t0

    def active(self):
        s, xp = self.s, self.s._xp
        mask = (self.st["excess"] > 0) & (self.st["height"] < s._V)
        mask[s.source] = False
        mask[s.sink] = False
        return xp.nonzero(mask)[0].astype(s._idt)

    def run(self, before=None):
        """Relabel, call `before` (may add excess), discharge until no vertex is active.

        Heights are exact after the first relabel and valid (a lower bound on
        the distance to the sinks) afterwards; the phase ends when no vertex
        below height V holds excess.
        """
        s = self.s
        tun = _mf.TUNING
        adaptive = tun.get("adaptive", True)
        guard = tun.get("max_iterations")
        freq = s._freq
        gr0 = s._stats["global_relabels"]
        t_run = time.perf_counter()
        self.relabel()
        if before is not None:
            before()
        work = self.active()
        since = 0
        it0 = s._stats["iterations"]
        t_win = time.perf_counter()
        target, other = self.terminals
        while True:
            if work.shape[0] == 0:
                # no global relabel to confirm the end (the next phase starts
                # with its own): a scan of the excesses catches any vertex the
                # worklist lost; heights stay valid, so a vertex at height V
                # really cannot reach a sink of this phase
                work = self.active()
                if work.shape[0] == 0:
                    break
            if since >= freq:
                t_dis = time.perf_counter() - t_win
                t_gr = self.relabel()
                work = self.active()
                if adaptive and since >= freq:
                    freq = _mf._next_relabel_period(freq, t_gr, t_dis)
                since = 0
                t_win = time.perf_counter()
                continue
            if guard is not None and s._stats["iterations"] - it0 > guard:
                raise RuntimeError(f"push-relabel did not finish within {guard} iterations")
            if s._deadline is not None and time.perf_counter() > s._deadline:
                raise _OverBudget()
            k = max(1, min(s._batch, freq - since))
            work, ran = s._K.discharge(self.ctx, self.st, work, s._stamp, target, other, s._V, k)
            s._stamp += k
            s._stats["iterations"] += ran
            since += ran
        s._freq = freq
        s._stats.setdefault("phases", []).append(
            (self.name, s._stats["iterations"] - it0, s._stats["global_relabels"] - gr0,
             round(time.perf_counter() - t_run, 4)))
        return s._stats["iterations"] - it0


class MaxFlowSolver:
    """Maximum flow that is re-solved after batches of capacity changes.

    The solver keeps the graph, its capacities and the current flow on the
    backend (the GPU for ``"cupy"``).  :meth:`update_capacities` changes the
    capacities of existing arcs; the next :meth:`solve` starts from the
    previous maximum flow instead of from zero, which is much faster than
    :func:`~gpumatch.flow.maximum_flow` when the batch is small.

    Parameters
    ----------
    csgraph : sparse matrix or array
        Square matrix of non-negative integer capacities, as for
        :func:`~gpumatch.flow.maximum_flow`.  Its stored entries (explicit
        zeros included) are the arcs whose capacities can change later; the
        pattern itself is fixed.
    source, sink : int
        Distinct vertex indices.
    backend : {"auto", "numpy", "cupy"}, optional
        Where the state lives and push-relabel runs; output follows the
        input's kind, as in :func:`~gpumatch.flow.maximum_flow`.
    layout : {"reverse_csr"}, optional
        Residual layout; only ``"reverse_csr"`` (one flow value per arc,
        kept between solves) is supported by the dynamic solver.
    rebuild_fraction : float, optional
        When the arcs changed since the last solve exceed this fraction of
        all arcs, :meth:`solve` starts from scratch.  Default 0.002: on an
        H100 the repair won (up to 3x) at 0.01 % and mostly at 0.1 % of the
        arcs changed, and lost beyond (``benchmarks/bench_dynamic.py``).
    time_budget : float or None, optional
        A repair still running after ``time_budget`` times the duration of
        the last from-scratch solve is abandoned and the solve restarts from
        scratch (``stats["mode"] == "dynamic->scratch"``), so that a dynamic
        solve costs at most about ``1 + time_budget`` from-scratch solves.
        Default 0.25; None disables the guard.

    Attributes
    ----------
    source, sink : int
    shape : tuple of int
    backend : str
        The resolved backend.

    Notes
    -----
    Following Kannappan, Kumar and Nasre [1]_, the previous maximum flow is
    kept and repaired instead of recomputed.  A decrease below the flow on
    an arc cuts that flow to the new capacity (excess at the tail, deficit
    at the head); an increase of a saturated arc pushes the new residual
    along it (excess at the head, deficit at the tail).  :meth:`solve` then
    runs push-relabel from the excesses to the sink, then to the deficits
    (extra sinks of height 0), returns what is left to the source, fills the
    deficits from the source and then by cancelling flow towards the sink
    (push-relabel on the transposed network, where a deficit is an excess).
    A BFS from the sink over the residual network proves the flow maximum
    and gives the minimum cut; if the source still reaches the sink, the
    source arcs that lead to it are saturated and the two phases of a full
    solve finish the job.  The result is always a valid maximum flow.

    Each phase starts with a global relabel (a BFS over the whole residual
    network), so a dynamic solve costs a few BFS plus work proportional to
    the part of the network the changes reach.  Where augmenting paths are
    long (unit networks of bipartite graphs, GENRMF) that work can exceed a
    solve from scratch; `rebuild_fraction` and `time_budget` bound the loss.

    References
    ----------
    .. [1] S. Kannappan, A. Kumar and R. Nasre, "Scalable Maxflow Processing
       for Dynamic Graphs" (batched increments and decrements of capacities
       by push-relabel on GPUs; preprint also titled "Efficient Dynamic
       MaxFlow Computation on GPUs").

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch.flow import MaxFlowSolver
    >>> C = sp.csr_array(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    >>> solver = MaxFlowSolver(C, 0, 2, backend="numpy")
    >>> int(solver.solve().flow_value)
    4
    >>> solver.update_capacities([1], [2], [5])     # arc 1 -> 2: 2 to 5
    >>> int(solver.solve().flow_value)
    5
    >>> solver.update_capacities([0, 0], [1, 2], [1, 0])
    >>> res = solver.solve()
    >>> int(res.flow_value), res.flow.toarray().tolist()
    (1, [[0, 1, 0], [-1, 0, 1], [0, -1, 0]])
    """

    def __init__(self, csgraph, source, sink, *, backend="auto", layout="reverse_csr", rebuild_fraction=0.002,
                 time_budget=0.25):
        _mf._check_method("push_relabel", layout)
        if layout != "reverse_csr":
            raise ValueError(f"MaxFlowSolver supports layout='reverse_csr' only, got {layout!r}")
        if isinstance(rebuild_fraction, bool) or not isinstance(rebuild_fraction, (int, float, np.integer,
                                                                                     np.floating)) \
                or not rebuild_fraction >= 0:
            raise ValueError(f"rebuild_fraction must be a non-negative number, got {rebuild_fraction!r}")
        self.rebuild_fraction = float(rebuild_fraction)
        if time_budget is not None and (isinstance(time_budget, bool) or not isinstance(
                time_budget, (int, float, np.integer, np.floating)) or not time_budget >= 0):
            raise ValueError(f"time_budget must be None or a non-negative number, got {time_budget!r}")
        self.time_budget = None if time_budget is None else float(time_budget)
        self._t_scratch = None
        self._deadline = None
        backend_r = _backend.resolve_backend(backend)
        g = _mf._capacity_graph(csgraph, backend_r)
        self.source, self.sink = _mf._check_terminals(source, sink, g.n)
        self._g = g
        self.backend = g.backend
        self.shape = g.shape
        xp = self._xp = _backend.get_xp(g.backend)
        V = self._V = g.n
        if V >= (1 << 30):
            raise ValueError("graphs with 2**30 or more vertices are not supported")
        nnz = self._nnz = g.nnz
        self._data = g.data.astype(np.int64, copy=True)       # capacities of all stored entries
        rows = csr.segment_owner(g.indptr.astype(np.int64), nnz)
        cols = g.indices.astype(np.int64)
        self._keys = rows * np.int64(max(V, 1)) + cols         # sorted (canonical CSR)
        keep = cols != rows                                     # self-loops carry no flow
        kept = self._kept = xp.nonzero(keep)[0]
        E = self._E = int(kept.shape[0])
        self._arc_of = xp.full(nnz, -1, dtype=np.int64)        # stored entry -> arc id
        self._arc_of[kept] = xp.arange(E, dtype=np.int64)
        idt = self._idt = index_dtype_for(V + 1, 2 * E + 1)
        counts = xp.bincount(rows[kept], minlength=V) if E else xp.zeros(V, dtype=np.int64)
        indptr = xp.zeros(V + 1, dtype=np.int64)
        xp.cumsum(counts, out=indptr[1:])
        indptr = indptr.astype(idt)
        indices = g.indices[kept].astype(idt)
        cap = self._data[kept].copy()
        self._check_source_total(cap, indptr)
        L = self._L = _mf._build_rcsr(xp, indptr, indices, cap, V)
        self._tails = rows[kept]
        self._heads = cols[kept]
        # transposed network (phase D): arc j of the transposed CSR is the
        # reverse of forward arc in_to_out[j]
        in_to_out = L["in_to_out"].astype(np.int64)
        out_to_in = xp.empty_like(in_to_out)
        out_to_in[in_to_out] = xp.arange(E, dtype=np.int64)
        self._t_of = in_to_out
        self._LT = {"indptr": L["in_indptr"], "indices": L["in_indices"], "cap": cap[in_to_out],
                    "flow": xp.zeros_like(cap), "in_indptr": L["indptr"], "in_indices": L["indices"],
                    "in_to_out": out_to_in.astype(L["in_to_out"].dtype)}
        self._K = _mf._kernels(self.backend)
        self._ctx = None
        self._ctxT = None
        self._batch = max(1, int(_mf.TUNING.get("batch", 1)))
        self._freq = _mf.TUNING.get("freq") or max(100, int(V * V / (1000.0 * max(E, 1))))
        self._stamp = 0
        self._excess = xp.zeros(V, dtype=np.int64)
        self._height = xp.zeros(V, dtype=np.int32)
        self._pending = 0          # arcs changed since the last solve
        self._solved = False
        self._result = None
        self._stats = {}

    # ------------------------------------------------------------------
    # helpers
    # ------------------------------------------------------------------

    def _check_source_total(self, cap, indptr):
        ps, pe = int(indptr[self.source]), int(indptr[self.source + 1])
        if _mf._exact_sum(self._xp, cap[ps:pe]) > _mf._I64_MAX:
            raise OverflowError("the total capacity out of the source does not fit int64")

    def _prepare(self, L):
        return _mf._prepare_kernels(self.backend, L, "rcsr", self._V, self._E, (self.source, self.sink))

    def _as_index(self, a, what, length=None):
        arr = as_index_array(a, what, self.backend)
        if length is not None and arr.shape[0] != length:
            raise ValueError(f"rows, cols and new_capacities must have the same length, got {length} and "
                             f"{arr.shape[0]} ({what})")
        if arr.dtype == np.uint64 and arr.shape[0] and int(arr.max()) > _mf._I64_MAX:
            raise ValueError(f"{what}: value {int(arr.max())} does not fit int64")
        return arr.astype(np.int64, copy=False)

    def _locate(self, rows, cols):
        """Stored-entry positions of the arcs ``rows -> cols`` (ValueError if one is not an arc)."""
        xp, V, nnz = self._xp, self._V, self._nnz
        for what, a in (("rows", rows), ("cols", cols)):
            if a.shape[0]:
                lo, hi = int(a.min()), int(a.max())
                if lo < 0 or hi >= V:
                    bad = lo if lo < 0 else hi
                    raise ValueError(f"{what}: vertex {bad} is out of range [0, {V})")
        keys = rows * np.int64(max(V, 1)) + cols
        if keys.shape[0] > 1:
            sk = xp.sort(keys)
            dup = sk[1:] == sk[:-1]
            if bool(dup.any()):
                k = int(sk[1:][dup][0])
                raise ValueError(f"arc ({k // max(V, 1)}, {k % max(V, 1)}) appears more than once in the batch")
        if not nnz:
            if keys.shape[0]:
                raise ValueError(f"({int(rows[0])}, {int(cols[0])}) is not an arc of the graph")
            return keys
        at = xp.minimum(xp.searchsorted(self._keys, keys), nnz - 1)
        ok = self._keys[at] == keys
        if not bool(ok.all()):
            k = int(xp.flatnonzero(~ok)[0])
            raise ValueError(f"({int(rows[k])}, {int(cols[k])}) is not an arc of the graph "
                             "(only the capacities of stored entries can change)")
        return at

    # ------------------------------------------------------------------
    # public
    # ------------------------------------------------------------------

    @property
    def num_arcs(self) -> int:
        """Number of stored entries (arcs, self-loops included)."""
        return self._nnz

    def capacities(self):
        """The current capacity matrix (CSR of the input's kind, int64 values)."""
        g = self._g
        data = self._data
        if g.cupy_out:
            import cupyx.scipy.sparse as cpx

            cp = _backend.cp
            return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.asarray(g.indices),
                                   cp.asarray(g.indptr)), shape=g.shape)
        import scipy.sparse as sp

        cls = sp.csr_array if g.sparray else sp.csr_matrix
        return cls((_backend.to_numpy(data), _backend.to_numpy(g.indices), _backend.to_numpy(g.indptr)),
                   shape=g.shape)

    def update_capacities(self, rows, cols, new_capacities):
        """Set the capacities of a batch of existing arcs ``rows[i] -> cols[i]``.

        Parameters
        ----------
        rows, cols : array_like of int
            Tails and heads of stored arcs (NumPy or CuPy arrays, or lists),
            each arc at most once per batch.
        new_capacities : array_like of int
            Their new non-negative integer capacities (increase or decrease).

        Raises
        ------
        ValueError
            Different lengths, non-integer or negative capacities, a vertex
            out of range, an arc that is not a stored entry, or one arc twice.
            The whole batch is checked first: on error nothing changes.
        OverflowError
            When the capacity out of the source would not fit int64.

        Notes
        -----
        Where a capacity drops below the current flow on its arc, the flow is
        cut to the new capacity at once (excess at the tail, deficit at the
        head); the next :meth:`solve` repairs and re-maximises it.
        """
        rows = self._as_index(rows, "rows")
        cols = self._as_index(cols, "cols", rows.shape[0])
        caps = self._as_index(new_capacities, "new_capacities", rows.shape[0])
        xp = self._xp
        if caps.shape[0] and int(caps.min()) < 0:
            raise ValueError(f"new_capacities must be non-negative, got {int(caps.min())}")
        pos = self._locate(rows, cols)
        if rows.shape[0] == 0:
            return
        arc = self._arc_of[pos]
        sel = arc >= 0
        arc, c = arc[sel], caps[sel]
        L = self._L
        # the source's total capacity after the batch must fit int64
        ps, pe = int(L["indptr"][self.source]), int(L["indptr"][self.source + 1])
        if pe > ps:
            at_src = (arc >= ps) & (arc < pe)
            if bool(at_src.any()):
                newcap = L["cap"][ps:pe].copy()
                newcap[arc[at_src] - ps] = c[at_src]
                if _mf._exact_sum(xp, newcap) > _mf._I64_MAX:
                    raise OverflowError("the total capacity out of the source would not fit int64")
        # --- all checks passed: apply ---
        self._data[pos] = caps
        f = L["flow"][arc]
        old = L["cap"][arc]
        # a cut below the flow moves the flow down to the new capacity; an
        # increase on a saturated arc pushes the new residual at once (only
        # saturated arcs can lie on a minimum cut): either way the tail
        # gains `d` and the head loses it (d < 0: the reverse)
        d = xp.where(f > c, f - c, xp.where((c > old) & (f == old), old - c, 0))
        L["cap"][arc] = c
        L["flow"][arc] = f - d
        moved = d != 0
        if bool(moved.any()):
            _scatter_add(xp, self._excess, self._tails[arc[moved]], d[moved])
            _scatter_add(xp, self._excess, self._heads[arc[moved]], -d[moved])
        self._pending += int(rows.shape[0])
        self._result = None

    def solve(self):
        """Maximum flow for the current capacities, from the previous flow when there is one.

        Returns
        -------
        MaximumFlowResult
            As :func:`~gpumatch.flow.maximum_flow` returns it: ``flow_value``,
            ``flow`` (skew-symmetric CSR), ``source_side`` (minimum cut) and
            ``stats``, with ``stats["mode"]`` ``"scratch"``, ``"dynamic"`` or
            ``"cached"`` (nothing changed since the last solve).
        """
        if self._result is not None:
            res = self._result
            stats = dict(res.stats)
            stats["mode"] = "cached"
            return _mf.MaximumFlowResult(res.flow_value, res.flow, res.source_side, stats)
        xp, V = self._xp, self._V
        t_start = time.perf_counter()
        self._stats = stats = {"iterations": 0, "phase2_iterations": 0, "global_relabels": 0,
                               "backend": self.backend, "layout": "reverse_csr", "method": "push_relabel",
                               "batch": self._pending}
        times = {}
        scratch = (not self._solved) or self._pending > self.rebuild_fraction * max(self._nnz, 1)
        if not scratch:
            stats["mode"] = "dynamic"
            self._deadline = None
            if self.time_budget is not None and self._t_scratch is not None:
                self._deadline = t_start + self.time_budget * self._t_scratch
            try:
                self._repair(times)
            except _OverBudget:
                stats["mode"] = "dynamic->scratch"
                stats["time_abandoned"] = time.perf_counter() - t_start
                scratch = True
        if scratch:
            stats.setdefault("mode", "scratch")
            t_s = time.perf_counter()
            L = self._L
            value, f, side_scratch, sst = _mf._solve(L["indptr"], L["indices"], L["cap"], self.source, self.sink,
                                          self.backend, "reverse_csr")
            L["flow"][...] = f
            self._excess.fill(0)
            for key in ("iterations", "phase2_iterations", "global_relabels"):
                stats[key] = sst.get(key, 0)
            times.update(sst.get("time", {}))
            stats["relabel_period"] = sst.get("relabel_period")
            if sst.get("relabel_period"):
                self._freq = int(sst["relabel_period"])
            _backend.synchronize(self.backend)
            self._t_scratch = time.perf_counter() - t_s
        _backend.synchronize(self.backend)
        t0 = time.perf_counter()
        # minimum cut: vertices that cannot reach the sink in the residual network
        if self._ctx is None:
            self._ctx = self._prepare(self._L)
        st = {"height": self._height, "excess": self._excess}
        if scratch:
            source_side = side_scratch
        else:
            if stats.get("fallback"):
                _relabel(self._K, self._ctx, st, xp, xp.asarray([self.sink], dtype=self._idt), None, V,
                         self._batch)
                stats["global_relabels"] += 1
            source_side = self._height >= V
        if not bool(source_side[self.source]):  # pragma: no cover - would be a bug
            raise RuntimeError("dynamic max flow left an augmenting path; please report this")
        value = self._value()
        arc_flow = xp.zeros(self._nnz, dtype=np.int64)
        arc_flow[self._kept] = self._L["flow"]
        flow = self._flow_matrix(arc_flow)
        side = _backend.output_like(source_side, self._g.cupy_out)
        times["output"] = time.perf_counter() - t0
        times["total"] = time.perf_counter() - t_start
        stats["time"] = times
        self._pending = 0
        self._solved = True
        self._result = _mf.MaximumFlowResult(np.int64(value), flow, side, stats)
        return self._result

    def _flow_matrix(self, arc_flow):
        """Skew-symmetric flow CSR (as :func:`maximum_flow`), with the fixed pattern's sort cached."""
        g, xp, V = self._g, self._xp, max(self._V, 1)
        if getattr(self, "_plan", None) is None:
            rows = csr.segment_owner(g.indptr.astype(np.int64), self._nnz)
            cols = g.indices.astype(np.int64)
            key = xp.concatenate([rows * V + cols, cols * V + rows])
            order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
            key = key[order]
            n2 = key.shape[0]
            last = xp.ones(n2, dtype=bool)
            if n2:
                last[:-1] = key[1:] != key[:-1]
            ends = xp.nonzero(last)[0]
            ukey = key[ends]
            urow = ukey // V
            counts = xp.bincount(urow, minlength=self._V) if n2 else xp.zeros(self._V, dtype=np.int64)
            indptr = xp.zeros(self._V + 1, dtype=np.int64)
            xp.cumsum(counts, out=indptr[1:])
            idt = index_dtype_for(self._V + 1, int(ukey.shape[0]) + 1)
            self._plan = (order, ends, indptr.astype(idt), (ukey - urow * V).astype(idt))
        order, ends, indptr, ucol = self._plan
        v = xp.concatenate([arc_flow, -arc_flow])[order]
        if v.shape[0]:
            seg = xp.cumsum(v)[ends]
            data = seg.copy()
            data[1:] -= seg[:-1]
        else:
            data = v
        shape = (self._V, self._V)
        if g.cupy_out:
            import cupyx.scipy.sparse as cpx

            cp = _backend.cp
            return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.asarray(ucol), cp.asarray(indptr)),
                                  shape=shape)
        import scipy.sparse as sp

        data, ucol, indptr = (_backend.to_numpy(a) for a in (data, ucol, indptr))
        cls = sp.csr_array if g.sparray else sp.csr_matrix
        out = cls((data, ucol.copy(), indptr.copy()), shape=shape)
        out.has_sorted_indices = True
        return out

    # ------------------------------------------------------------------
    # the repair
    # ------------------------------------------------------------------

    def _value(self) -> int:
        L, t = self._L, self.sink
        a, b = int(L["in_indptr"][t]), int(L["in_indptr"][t + 1])
        inflow = int(L["flow"][L["in_to_out"][a:b].astype(np.int64)].sum()) if b > a else 0
        a, b = int(L["indptr"][t]), int(L["indptr"][t + 1])
        outflow = int(L["flow"][a:b].sum()) if b > a else 0
        return inflow - outflow

    def _inner(self, mask):
        mask[self.source] = False
        mask[self.sink] = False
        return mask

    def _repair(self, times):
        """Turn the pseudo-flow into a maximum flow (phases A1, A2, B, D1, D2, then F if needed)."""
        xp, V, L = self._xp, self._V, self._L
        s, t = self.source, self.sink
        idt = self._idt
        if self._ctx is None:
            self._ctx = self._prepare(L)
        st = {"height": self._height, "excess": self._excess}
        stats = self._stats
        one = lambda v: (lambda: xp.asarray([v], dtype=idt))  # noqa: E731
        both = lambda: xp.asarray([s, t], dtype=idt)  # noqa: E731

        def deficits():
            return xp.nonzero(self._inner(self._excess < 0))[0].astype(idt)

        def has(sign):
            m = self._excess > 0 if sign > 0 else self._excess < 0
            return bool(self._inner(m).any())

        t0 = time.perf_counter()
        # A1: excess to the sink; A2: what is left to the deficits
        if has(1):
            _Phase(self, self._ctx, st, one(t), (t, s), s, "A1").run()
            if has(1) and has(-1):
                _Phase(self, self._ctx, st, deficits, (t, s), s, "A2").run()
        t1 = time.perf_counter()
        times["phase1"] = t1 - t0
        # B: excess left returns to the source
        if has(1):
            stats["phase2_iterations"] += _Phase(self, self._ctx, st, one(s), (s, t), t, "B").run()
            if has(1):  # pragma: no cover - would be a bug
                raise RuntimeError("dynamic max flow could not return an excess to the source; please report this")
        t2 = time.perf_counter()
        times["phase2"] = t2 - t1
        # D1: deficits filled from the source, D2: by cancelling flow to the sink
        if has(-1):
            self._fill_deficits(one(s), t)
            if has(-1):
                self._fill_deficits(both, None)
            if has(-1):  # pragma: no cover - would be a bug
                raise RuntimeError("dynamic max flow could not fill a deficit; please report this")
        t3 = time.perf_counter()
        times["phase3"] = t3 - t2
        # F: if the sink is still reachable from the source, saturate the
        # source arcs that lead to it and run the two phases of a full solve
        _relabel(self._K, self._ctx, st, xp, one(t)(), None, V, self._batch)
        stats["global_relabels"] += 1
        stats["fallback"] = False
        if int(self._height[s]) < V:
            stats["fallback"] = True
            _Phase(self, self._ctx, st, one(t), (t, s), s, "F1").run(before=self._saturate_source)
            if has(1):
                stats["phase2_iterations"] += _Phase(self, self._ctx, st, one(s), (s, t), t, "F2").run()
        times["fallback"] = time.perf_counter() - t3
        stats["relabel_period"] = int(self._freq)

    def _saturate_source(self):
        """Saturate the residual arcs out of the source whose head has a height below V."""
        xp, V, L, s = self._xp, self._V, self._L, self.source
        h = self._height
        a, b = int(L["indptr"][s]), int(L["indptr"][s + 1])
        if b > a:
            k = xp.arange(a, b, dtype=np.int64)
            head = L["indices"][a:b].astype(np.int64)
            r = L["cap"][a:b] - L["flow"][a:b]
            on = (r > 0) & (h[head] < V)
            if bool(on.any()):
                L["flow"][k[on]] += r[on]
                _scatter_add(xp, self._excess, head[on], r[on])
        a, b = int(L["in_indptr"][s]), int(L["in_indptr"][s + 1])
        if b > a:
            k = L["in_to_out"][a:b].astype(np.int64)
            tail = L["in_indices"][a:b].astype(np.int64)
            r = L["flow"][k]
            on = (r > 0) & (h[tail] < V)
            if bool(on.any()):
                L["flow"][k[on]] -= r[on]
                _scatter_add(xp, self._excess, tail[on], r[on])

    def _fill_deficits(self, sinks_fn, blocked):
        """Push-relabel on the transposed network, where deficits are excesses, towards `sinks_fn()`."""
        L, LT = self._L, self._LT
        LT["cap"][...] = L["cap"][self._t_of]
        LT["flow"][...] = L["flow"][self._t_of]
        if self._ctxT is None:
            self._ctxT = self._prepare(LT)
        stT = {"height": self._height, "excess": -self._excess}
        s, t = self.source, self.sink
        it = _Phase(self, self._ctxT, stT, sinks_fn, (s, t), blocked, "D" if blocked is None else "D1").run()
        self._stats["phase3_iterations"] = self._stats.get("phase3_iterations", 0) + it
        L["flow"][self._t_of] = LT["flow"]
        self._excess[...] = -stT["excess"]

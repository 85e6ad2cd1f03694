"""Dynamic maximum flow: re-solve after a batch of capacity changes.

:class:`MaxFlowSolver` keeps the residual network of one graph (reverse-CSR
layout, one flow value per arc) on its backend between solves, together
with the source side ``S`` of a minimum cut of the last maximum flow.  The
cut is what makes small batches cheap.  For a maximum flow every arc from
``S`` to ``T`` (the rest) is saturated and every arc from ``T`` to ``S``
carries nothing, and :meth:`MaxFlowSolver.update_capacities` keeps it so:

* a capacity that drops below the flow on its arc cuts the flow to the new
  capacity (excess at the tail, deficit at the head); an arc of ``S -> T``
  stays saturated that way;
* an increase on an arc of ``S -> T`` pushes the new residual along it at
  once (excess at the head, deficit at the tail), so that arc stays
  saturated too; any other change of capacity leaves the flow alone (an arc
  of ``T -> S`` carries nothing, whatever its capacity).
* Except that such a push is first bounded by what can use it a few arcs
  away (``REPAIR["push_bound"]``): what the tail can still take in from
  ``S`` and the head pass on into ``T``.  The rest stays residual across
  the cut, where pushing it would only have sent it back.

So after every batch the flow still saturates the cut ``S`` (but for the
rest of bounded pushes), whose new capacity the solver keeps up to date.
If no vertex is left with an excess or a deficit, the flow is valid, and
if its value equals the capacity of ``S`` it is maximum and ``S`` still a
minimum cut: :meth:`MaxFlowSolver.solve` has nothing to do but build its
output (after a bounded push, the BFS from the sink below decides).
Otherwise it repairs the pseudo-flow with the push-relabel kernels of
:mod:`gpumatch.flow` in two phases:

X. every excess goes to the sink or to a deficit on the sink side ``T``
   (height 0), else to the source or to a deficit on the source side
   (height ``V - 1``), so excess that can stay in ``T`` never crosses the
   cut;
D. every deficit is filled from the source (height 0), else by cancelling
   flow towards the sink (height ``V - 1``): push-relabel on the transposed
   network, where a deficit is an excess.

Before phase X, the excess of each arc whose capacity fell below its flow
may first go round that arc to the arc's own deficit, along augmenting
paths that pair the two (``REPAIR["pair"]``: small batches); where the
flow's value does not change this leaves the phases little to do.
Excess on the source side and deficits on the sink side first go straight
to their terminal along paths of one or two arcs where they can (no BFS).
Then each phase routes what it can along augmenting paths
(:mod:`gpumatch.flow.dynamic._paths`: disjoint BFS trees from every imbalance,
inside one side of the cut, then across it only for what that side cannot
place), and push-relabel finishes the rest; a relabel runs the BFS from
the far targets only when some excess needs them.  Both phases always
succeed (an excess can flow back to where it came from, a deficit can
cancel the flow that left it).

If the new flow value equals the capacity of ``S``, ``S`` is still a
minimum cut and the flow maximum; only otherwise a BFS from the sink
computes the new cut, and if the source still reaches the sink, phase F
first augments along paths from the source itself (a pass that finds none
proves the flow maximum and gives the cut); where those passes stop at
their limits, it saturates the source arcs whose head reaches the sink,
routes that excess along augmenting paths to the sink and back, and runs
the two phases of a full solve from there for anything left.

Two guards keep a dynamic solve from costing much more than a solve from
scratch: past ``rebuild_fraction`` changed arcs the solver starts from
scratch, and a repair that runs longer than ``time_budget`` times the
fastest from-scratch solve seen is abandoned for one (and larger batches
then start from scratch at once for a while).
"""

from __future__ import annotations

import threading
import time
from typing import Literal

import numpy as np

from ... import _backend, csr
from ..._typing import Backend, GraphLike, SparseMatrix
from ... import _validation
from ..._validation import as_index_array, index_dtype_for, small_on_cpu
from .. import _scipy
from .. import _maxflow as _mf
from . import _paths

from ._repair import REPAIR, _RELABEL_KEYS, _OverBudget, _Phase, _RepairMixin, _host_copy, _pair_min, _pairing  # noqa: F401
from ._update import _UpdateMixin, _side_room  # noqa: F401
from ._warmup import _warm_batches, _warm_network  # noqa: F401

__all__ = ["MaxFlowSolver"]


class MaxFlowSolver(_UpdateMixin, _RepairMixin):
    """Maximum flow that is re-solved after batches of capacity changes.

    The solver keeps the graph, its capacities, the current flow and the
    source side of a minimum cut on the backend (the GPU for ``"cupy"``).
    :meth:`update_capacities` changes the capacities of existing arcs; the
    next :meth:`solve` starts from the previous maximum flow instead of from
    zero, which is much faster than :func:`~gpumatch.flow.maximum_flow` when
    the batch is small.

    Parameters
    ----------
    csgraph : sparse matrix or array
        Square matrix of non-negative integer capacities, as for
        :func:`~gpumatch.flow.maximum_flow`.  Its stored entries (explicit
        zeros included) are the arcs whose capacities can change later; the
        pattern itself is fixed.
    source, sink : int
        Distinct vertex indices.
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        Where the state lives and push-relabel runs; output follows the
        input's kind, as in :func:`~gpumatch.flow.maximum_flow`.  With
        ``"numba"`` a dynamic solve re-maximises the previous flow as the
        batches left it (deficits first, then highest-label push-relabel
        from that preflow; ``gpumatch/flow/_cpu.py``); `time_budget` does
        not apply there.  ``"auto"`` on a machine without a GPU keeps a
        small network (``2 V + arcs`` at most 8192) on ``"numpy"`` while the
        Numba engine is not loaded and the small solves of the process have
        not spent about its start-up (half a second); then it moves to
        ``"numba"`` (:attr:`backend` says which runs).
    layout : {"reverse_csr"}, optional
        Residual layout; only ``"reverse_csr"`` (one flow value per arc,
        kept between solves) is supported by the dynamic solver.
    rebuild_fraction : float, optional
        When the arcs changed since the last solve exceed this fraction of
        all arcs, :meth:`solve` starts from scratch.  Default 0.002: on an
        H100 repairs of 0.01 % and 0.1 % of the arcs won where the batch
        stays local, repairs of 1 % never did (see the notes).
    time_budget : float or None, optional
        A repair still running after ``time_budget`` times the duration of
        the fastest from-scratch solve seen so far (with the assembly of
        the flow matrix's pattern, which :func:`maximum_flow` does on every
        call and this solver once, in its first solve) is abandoned and the
        solve restarts from scratch (``stats["mode"] ==
        "dynamic->scratch"``), so that a dynamic solve costs at most about
        ``1 + time_budget`` from-scratch solves.  After that, batches
        larger than the abandoned one start from scratch at once
        (``stats["scratch_reason"] == "abandoned before"``; the bound
        doubles at each use, so that such repairs are tried again later,
        and goes away once a batch at least as large is repaired in time).
        Default 0.25: an abandoned repair then cost at most about 1.5
        solves from scratch as ``maximum_flow`` times them on an H100
        (whose times vary by up to a quarter from run to run); None
        disables the guard.

    Attributes
    ----------
    source, sink : int
    shape : tuple of int
    backend : str
        The resolved backend.

    Notes
    -----
    Following Kannappan, Kumar and Nasre [1]_, the previous maximum flow is
    kept and repaired instead of recomputed, here guided by the last
    minimum cut ``S`` (see :mod:`gpumatch.flow.dynamic._dynamic`).  A decrease below
    the flow on an arc cuts that flow to the new capacity (excess at the
    tail, deficit at the head); an increase of an arc from ``S`` to its
    complement pushes the new residual along it (excess at the head, deficit
    at the tail), as much of it as the arc's ends can use a few arcs away
    (the rest stays residual across the cut); other changes leave the flow
    as it is, and the cut stays saturated (but for those rests).
    :meth:`solve` then moves every excess to the sink or a deficit,
    preferring those on the sink side of the cut, else back towards the
    source, and fills every deficit from the source, else by
    cancelling flow towards the sink: first along augmenting paths that
    stay on one side of the cut (:mod:`gpumatch.flow.dynamic._paths`: disjoint BFS
    trees from every imbalance, a few passes), then by push-relabel for
    whatever those left (on the transposed network for the deficits).
    When the resulting value equals the updated capacity of ``S``, the
    flow is maximum and ``S`` still a minimum cut, with no BFS;
    a batch that leaves no excess nor deficit (for example increases of arcs
    off the cut, or decreases to at least the flow) needs no push-relabel at
    all (``stats["repair"] == "none"``).  Otherwise a BFS from the sink
    finds the new cut, and if an augmenting path is left, augmenting paths
    from the source come first (``REPAIR["f_root"]``), then, if they stop at
    their limits, the source arcs that lead to the sink are saturated and
    the two phases of a full solve finish the job.  The result is always a
    valid maximum flow; ``source_side`` is the source side of a minimum cut
    (after a repair that kept the cut, the previous one; after phase F's
    passes from the source, what the source reaches).

    Speed: each path pass and each push-relabel phase costs a BFS over the
    part of the residual network that the imbalances reach, so a dynamic
    solve costs a few BFS plus work proportional to that part.  Where
    many changes cross the cut or augmenting paths are long, that work can
    exceed a solve from scratch; `rebuild_fraction` and `time_budget`
    bound the loss.  On an H100 (``benchmarks/bench_dynamic.py``: the unit
    network of ``random_bipartite(10**6, 10**6, 5)``,
    ``washington_rlg(512, 1024, 10000)``, ``genrmf(32, 256, 100, 10000)``;
    75-95, 220-340 and 400-640 ms from scratch), update + solve of 0.01 %
    of the arcs took 7-21 ms on the unit network, 28-63 ms for RLG
    decreases and mixed batches, 75-85 ms for GENRMF mixed batches, and
    under 1 ms where the batch missed the cut (RLG and GENRMF increases);
    of 0.1 %, 16-23 ms for unit increases.  Repairs of 0.1 % unit
    decreases and mixed batches (30-45 ms), of GENRMF decreases, of 1 % of
    the arcs, and of networks changed by earlier large batches ran out of
    time.

    Thread safety: one solver may be shared by several threads.  Its
    methods that read or change its state (:meth:`update_capacities`,
    :meth:`solve`, :meth:`capacities`) hold a lock of the solver, so calls
    from different threads take turns, each on the state the previous one
    left; a thread's ``update_capacities`` and its next ``solve`` are two
    calls, and another thread's update may come between them (hold a lock
    of your own around the pair to keep it together).  Different solvers
    share nothing and run in parallel.

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

    @_backend.device_entry
    def __init__(self, csgraph: GraphLike, source: int, sink: int, *, backend: Backend = "auto",
                 layout: Literal["reverse_csr"] = "reverse_csr", rebuild_fraction: float = 0.002,
                 time_budget: float | None = 0.25) -> None:
        self._lock = threading.RLock()  # (see "Thread safety" above)
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
        self._t_plan = 0.0       # seconds the first solve spent on the output's plan (_flow_matrix)
        self._deadline = None
        # a small network under "auto" without a GPU: the NumPy engine until Numba is loaded or the
        # small solves have spent about its start-up (then the same arrays serve the compiled engine)
        self._small = small_on_cpu(csgraph, backend, _scipy.SMALL_MAX)
        backend_r = "numpy" if self._small else _backend.resolve_backend(backend)
        g = _mf._capacity_graph(csgraph, backend_r)
        self.source, self.sink = _mf._check_terminals(source, sink, g.n)
        # the solver's own pattern: a canonical input's arrays come through
        # validation as they are, and the caller may change them later
        g.indptr, g.indices = g.indptr.copy(), g.indices.copy()
        self._g = g
        self.backend = g.backend
        self.shape = g.shape
        xp = self._xp = _backend.get_xp(g.backend)
        V = self._V = g.n
        if V >= (1 << 30):
            raise ValueError("graphs with 2**30 or more vertices are not supported")
        # two tiers of targets in the repair phases: near ones at height 0,
        # far ones at V - 1; a vertex at 2 V - 1 cannot reach either (no
        # simple path has V arcs), and every height stays below 2**31 - 1
        self._far_level = V - 1
        self._hlimit2 = 2 * V - 1
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
        indptr = csr.segment_offsets(rows[kept], V).astype(idt)   # rows[kept] is sorted (CSR order)
        indices = g.indices[kept].astype(idt)
        # per-arc arrays carry one dummy slot at index E: an update of a
        # self-loop writes there, so a batch needs no compaction (no sync)
        self._cap_p = xp.zeros(E + 1, dtype=np.int64)
        self._cap_p[:E] = self._data[kept]
        self._flow_p = xp.zeros(E + 1, dtype=np.int64)      # flow_p[E] stays 0
        cap = self._cap_p[:E]
        s, t = self.source, self.sink
        self._s_out = (int(indptr[s]), int(indptr[s + 1]))
        self._src_total = _mf._exact_sum(xp, cap[self._s_out[0]:self._s_out[1]])
        if self._src_total > _mf._I64_MAX:
            raise OverflowError("the total capacity out of the source does not fit int64")
        L = self._L = _mf._build_rcsr(xp, indptr, indices, cap, V)
        L["flow"] = self._flow_p[:E]
        self._tail_p = xp.zeros(E + 1, dtype=np.int64)
        self._tail_p[:E] = rows[kept]
        self._head_p = xp.zeros(E + 1, dtype=np.int64)
        self._head_p[:E] = cols[kept]
        self._s_in = (int(L["in_indptr"][s]), int(L["in_indptr"][s + 1]))
        self._t_out = (int(indptr[t]), int(indptr[t + 1]))
        a, b = int(L["in_indptr"][t]), int(L["in_indptr"][t + 1])
        self._t_in_arcs = L["in_to_out"][a:b].astype(np.int64)
        # transposed network (phase D): arc j of the transposed CSR is the
        # reverse of forward arc in_to_out[j]; its capacities follow every
        # update, its flows are copied in and out around phase D
        in_to_out = L["in_to_out"].astype(np.int64)
        out_to_in = xp.empty_like(in_to_out)
        out_to_in[in_to_out] = xp.arange(E, dtype=np.int64)
        self._t_of = in_to_out
        self._oti_p = xp.full(E + 1, E, dtype=np.int64)       # arc -> transposed position (E: dummy)
        self._oti_p[:E] = out_to_in
        self._capT_p = xp.zeros(E + 1, dtype=np.int64)
        self._capT_p[:E] = cap[in_to_out]
        self._LT = {"indptr": L["in_indptr"], "indices": L["in_indices"], "cap": self._capT_p[:E],
                    "flow": xp.zeros(E, dtype=np.int64), "in_indptr": L["indptr"], "in_indices": L["indices"],
                    "in_to_out": out_to_in.astype(L["in_to_out"].dtype)}
        self._K = _mf._kernels(self.backend)
        self._ctx = None
        self._ctxT = None
        self._batch = max(1, int(_mf.TUNING.get("batch", 1)))
        self._stamp = 0
        self._bfs_depth = 0                      # levels of the deepest BFS of the last relabel
        self._excess = xp.zeros(V, dtype=np.int64)
        self._height = xp.zeros(V, dtype=np.int32)
        self._side = xp.zeros(V, dtype=bool)    # source side of the last minimum cut
        self._cap_cut = 0                        # its capacity under the current capacities
        self._moved = False                      # an update moved flow since the last solve
        self._pending = 0                        # arcs changed since the last solve
        self._pushed = 0                         # of those, arcs of the kept cut that pushed new flow across it
        self._reroute = []                       # (arc slots, cuts) of the batches since then (_pairing)
        self._cut_flow = 0                       # the flow those batches cut, in all
        self._paired_flow = 0                    # and on arcs the pair passes take (_pairs_worth)
        self._rep = REPAIR                       # the REPAIR settings of the repair under way
        self._solved = False
        self._result = None
        self._plan = None
        self._abandon_at = None                  # smallest batch whose repair ran out of time
        self._claim = None                       # duplicate stamps of the CUDA batch check
        self._pbufs = None                       # work arrays of the augmenting-path pass
        self._pairs = None                       # anti-parallel pairs of arcs (_cancel_2cycles)
        self._dbufs = None                       # work arrays of the detour pass (_detour_pass)
        self._circulates = False                 # an unwind ran out of rounds: the flow circulates (_unwind)
        self._cut_arcs = None                    # (side, arcs S -> T, arcs T -> S) of _sealed
        self._lsteps = None                      # steps of the phases' relabels (_labels)
        self._flags = None                       # read-back of _signs (GPU)
        self._batch_id = 0
        self._stats = {}
        if self.backend == "cupy":
            # compile here, not inside the first (timed) solve
            self._contexts()
            if REPAIR.get("paths"):
                self._pbufs = _paths.buffers(self.backend, V, idt)
            _warm_up(self.backend)

    # ------------------------------------------------------------------
    # helpers
    # ------------------------------------------------------------------

    def _prepare(self, L):
        return _mf._prepare_kernels(self.backend, L, "rcsr", self._V, self._E, (self.source, self.sink),
                                    discharge_loop=int(REPAIR.get("discharge_loop") or 0),
                                    discharge_coop=int(REPAIR.get("discharge_coop") or 0))

    def _contexts(self):
        """Kernel contexts of the network and of its transposed (compiled on first use)."""
        xp, V, L, idt = self._xp, self._V, self._L, self._idt
        if self._ctx is None:
            self._ctx = self._prepare(L)
            # out-position of the arc source -> u (-1 if none), for the direct return
            self._src_arc = xp.full(V, -1, dtype=idt)
            a, b = self._s_out
            self._src_arc[L["indices"][a:b]] = xp.arange(a, b, dtype=idt)
        if self._ctxT is None:
            self._ctxT = self._prepare(self._LT)
            # the same for the sink in the transposed network (its arcs t -> u are the arcs u -> t)
            self._sink_arcT = xp.full(V, -1, dtype=idt)
            a, b = int(L["in_indptr"][self.sink]), int(L["in_indptr"][self.sink + 1])
            self._sink_arcT[L["in_indices"][a:b]] = xp.arange(a, b, dtype=idt)

    def _as_index(self, a, what, length=None):
        arr = as_index_array(a, what, self.backend)
        if length is not None and arr.shape[0] != length:
            raise ValueError(f"rows, cols and new_capacities must have the same length, got {length} and "
                             f"{arr.shape[0]} ({what})")
        return arr.astype(np.int64, copy=False)

    # ------------------------------------------------------------------
    # public
    # ------------------------------------------------------------------

    @property
    def num_arcs(self) -> int:
        """Number of stored entries (arcs, self-loops included)."""
        return self._nnz

    @_backend.serialized
    def capacities(self) -> SparseMatrix:
        """The current capacity matrix (CSR of the input's kind, int64 values).

        A copy: changing it changes nothing in the solver (use
        :meth:`update_capacities`).
        """
        g = self._g
        data = self._data
        if g.cupy_out:
            cpx = _backend.cpx_sparse
            cp = _backend.cp
            return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.array(g.indices, copy=True),
                                   cp.array(g.indptr, copy=True)), shape=g.shape)
        import scipy.sparse as sp

        cls = sp.csr_array if g.sparray else sp.csr_matrix
        return cls((_host_copy(data), _host_copy(g.indices), _host_copy(g.indptr)), shape=g.shape)

    @_backend.serialized
    @_backend.device_entry
    def solve(self) -> _mf.MaximumFlowResult:
        """Maximum flow for the current capacities, from the previous flow when there is one.

        Returns
        -------
        MaximumFlowResult
            As :func:`~gpumatch.flow.maximum_flow` returns it: ``flow_value``,
            ``flow`` (skew-symmetric CSR), ``source_side`` (a minimum cut) and
            ``stats``, with ``stats["mode"]`` ``"scratch"``, ``"dynamic"``,
            ``"dynamic->scratch"`` (a repair abandoned at its time budget) or
            ``"cached"`` (nothing changed since the last solve).  A dynamic
            solve also reports ``stats["repair"]``: ``"none"`` when the batch
            left no excess nor deficit (the previous flow was still maximum),
            else ``"phases"``; and ``stats["cut"]``: ``"kept"`` when the
            previous minimum cut still is one, ``"bfs"`` when a BFS found the
            new one; and ``stats["repair_settings"]``: ``"small"`` when the
            batch was small enough for ``REPAIR["small"]`` (at most
            ``REPAIR["small_batch"]`` times the arcs), ``"pushed"`` when a
            larger batch pushed flow across the kept cut and
            ``REPAIR["pushed_relabels"]`` gave it the relabel schedule of
            ``REPAIR["small"]``, else ``"default"``;
            and, where a push-relabel phase ran, ``stats["longest_period"]``:
            the most discharge iterations it allowed between two global
            relabels (``REPAIR["max_period"]``, or more with
            ``REPAIR["period_depth"]``); with ``REPAIR["walk"]``,
            ``stats["walks"]``: the walks run after relabels; and where
            augmenting-path passes ran, ``stats["path_passes"]``: per call
            ``(phase, passes, levels, paths, amount, seconds)``, phase
            ``"P"`` for the passes over pairs (``REPAIR["pair"]``), which
            re-route each cut arc's excess to its own deficit; where the
            detour pass ran instead (``REPAIR["detour"]``),
            ``stats["detours"]``: per call ``(pairs, rounds, searches,
            paths, amount, dropped, seconds)``.
            ``stats["batch"]`` counts the arcs changed since the last solve,
            and ``stats["cut_pushes"]`` those among them whose increase
            pushed new flow across the kept minimum cut (see
            ``REPAIR["period_depth_pushed"]``).
            A solve from scratch reports why in
            ``stats["scratch_reason"]``: ``"first solve"``,
            ``"rebuild_fraction"``, ``"time_budget"`` or ``"abandoned
            before"``.
        """
        if self._result is not None:
            # nothing changed since: the same answer in new arrays (a caller
            # may have written into the last result's)
            res = self._result
            stats = dict(res.stats)
            stats["mode"] = "cached"
            return _mf.MaximumFlowResult(res.flow_value, self._flow_matrix(),
                                         _backend.output_like(self._side.copy(), self._g.cupy_out), stats)
        if self._small and _validation.small_path_closed():
            self._small = False
            self.backend = "numba"
        if self.backend == "numba":   # the compiled CPU engine: push-relabel from the previous flow
            from .. import _cpu

            return _cpu.solver_solve(self)
        if self._small:               # its seconds count against the small solves' budget
            return _validation.charged_small(self._solve_here)
        return self._solve_here()

    def _solve_here(self) -> _mf.MaximumFlowResult:
        """:meth:`solve` on the NumPy or CuPy engine (push-relabel and the repair phases)."""
        t_start = time.perf_counter()
        self._stats = stats = {"iterations": 0, "phase2_iterations": 0, "global_relabels": 0,
                               "backend": self.backend, "layout": "reverse_csr", "method": "push_relabel",
                               "batch": self._pending, "cut_pushes": self._pushed}
        times = {}
        pending = self._pending
        if not self._solved:
            scratch, reason = True, "first solve"
        elif pending > self.rebuild_fraction * max(self._nnz, 1):
            scratch, reason = True, "rebuild_fraction"
        elif self._abandon_at is not None and pending > self._abandon_at:
            # a smaller batch already ran out of time: do not pay for a
            # repair and a solve from scratch again; the bound doubles at
            # each use, so that repairs of such batches are tried again later
            scratch, reason = True, "abandoned before"
            self._abandon_at *= 2
        else:
            scratch, reason = False, None
        if not scratch:
            stats["mode"] = "dynamic"
            small = pending <= float(REPAIR.get("small_batch") or 0) * max(self._nnz, 1)
            self._rep = dict(REPAIR, **(REPAIR.get("small") or {})) if small else REPAIR
            stats["repair_settings"] = "small" if small else "default"
            if not small and self._pushed and REPAIR.get("pushed_relabels"):
                # flow pushed across the kept cut: the relabel schedule of small batches
                small_keys = REPAIR.get("small") or {}
                self._rep = dict(REPAIR, **{k: small_keys[k] for k in _RELABEL_KEYS if k in small_keys})
                stats["repair_settings"] = "pushed"
            self._deadline = None
            if self._ctx is None:
                # the NumPy solver's one-off set-up (the GPU's runs in the
                # constructor): not part of the repair the budget is for
                self._contexts()
            if self.time_budget is not None and self._t_scratch is not None:
                self._deadline = t_start + self.time_budget * self._t_reference()
            try:
                value, side = self._repair(times)
            except _OverBudget:
                stats["mode"] = "dynamic->scratch"
                stats["time_abandoned"] = time.perf_counter() - t_start
                scratch, reason = True, "time_budget"
                self._abandon_at = pending if self._abandon_at is None else min(self._abandon_at, pending)
            else:
                if self._abandon_at is not None and pending >= self._abandon_at:
                    # a batch as large as the abandoned one was repaired in
                    # time: that one was an outlier, not the batch size
                    self._abandon_at = None
            finally:
                self._deadline = None
                self._rep = REPAIR
        if scratch:
            stats.setdefault("mode", "scratch")
            stats["scratch_reason"] = reason
            t_s = time.perf_counter()
            L = self._L
            # push-relabel even on a unit bipartite network (unit=False): the
            # time budget of the repairs is measured against this solve
            _, f, side, sst = _mf._solve(L["indptr"], L["indices"], L["cap"], self.source, self.sink,
                                         self.backend, "reverse_csr",
                                         adaptive=None if REPAIR.get("scratch_adaptive", True) else False,
                                         unit=False)
            L["flow"][...] = f
            if REPAIR.get("cancel_2cycles"):
                self._cancel_2cycles()
            self._excess.fill(0)
            for key in ("iterations", "phase2_iterations", "global_relabels"):
                stats[key] = sst.get(key, 0)
            times.update(sst.get("time", {}))
            stats["relabel_period"] = sst.get("relabel_period")
            stats["pairs_fixed"] = sst.get("pairs_fixed", False)
            _backend.synchronize(self.backend)
            t_scr = time.perf_counter() - t_s
            # the fastest one: a first solve may include one-time costs
            self._t_scratch = t_scr if self._t_scratch is None else min(self._t_scratch, t_scr)
            value = self._value()
        return self._publish(value, side, stats, times, t_start)

    def _publish(self, value, side, stats, times, t_start):
        """End a solve (every backend): keep the new cut and value, reset the
        batch bookkeeping, and return the result (the caller's copies; a
        cached solve rebuilds them from the kept state)."""
        t0 = time.perf_counter()
        self._side = side
        self._cap_cut = value
        self._moved = False
        flow = self._flow_matrix()
        side_out = _backend.output_like(side.copy(), self._g.cupy_out)
        times["output"] = time.perf_counter() - t0
        times["total"] = time.perf_counter() - t_start
        stats["time"] = times
        self._pending = 0
        self._pushed = 0
        self._reroute = []
        self._cut_flow = self._paired_flow = 0
        self._solved = True
        self._result = _mf.MaximumFlowResult(np.int64(value), None, None, dict(stats))   # (for a cached solve)
        return _mf.MaximumFlowResult(np.int64(value), flow, side_out, stats)

    def _flow_matrix(self):
        """Skew-symmetric flow CSR (as :func:`maximum_flow`), from a plan of the fixed pattern.

        The plan (built once) sorts the pattern plus its transpose; each
        output entry then reads the flow of its arc (negated for a
        transposed one), and the few entries that hold both ``u -> v`` and
        the reverse of ``v -> u`` add the second arc's flow.
        """
        g, xp = self._g, self._xp
        if self._plan is None:
            t0 = time.perf_counter()
            self._plan = self._output_plan()
            _backend.synchronize(self.backend)
            self._t_plan = time.perf_counter() - t0
        e_arc, e_neg, p_arc, p_neg, p_at, indptr, ucol = self._plan
        fp = self._flow_p
        x = fp[e_arc]
        data = xp.where(e_neg, -x, x)
        if p_at.shape[0]:
            y = fp[p_arc]
            data[p_at] += xp.where(p_neg, -y, y)
        shape = (self._V, self._V)
        if g.cupy_out:
            cpx = _backend.cpx_sparse
            cp = _backend.cp
            # copies of the plan's pattern: the result is the caller's to change
            return cpx.csr_matrix((cp.asarray(data).astype(cp.float64), cp.array(ucol, copy=True),
                                   cp.array(indptr, copy=True)), shape=shape)
        import scipy.sparse as sp

        data, ucol, indptr = (_backend.to_numpy(a) for a in (data, ucol, indptr))
        cls = sp.csr_array if g.sparray else sp.csr_matrix
        out = cls((data, ucol.copy(), indptr.copy()), shape=shape)
        out.has_sorted_indices = True
        return out

    def _output_plan(self):
        g, xp, V, nnz, E = self._g, self._xp, max(self._V, 1), self._nnz, self._E
        rows = csr.segment_owner(g.indptr.astype(np.int64), nnz)
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
        # sorted position -> the arc whose flow it shows (E: a self-loop, flow 0) and its sign;
        # a key occurs at most twice (u -> v and the reverse of v -> u), as a run of two
        adt = index_dtype_for(E + 2)
        ent = order % max(nnz, 1)
        neg = order >= nnz
        arc = self._arc_of[ent] if nnz else ent
        arc = xp.where(arc < 0, E, arc).astype(adt)
        pair = xp.nonzero(~last)[0]              # first of a run of two; its key ends at pair + 1
        p_at = (xp.cumsum(last) - 1)[pair + 1] if pair.shape[0] else pair
        return (arc[ends], neg[ends], arc[pair], neg[pair], p_at, indptr.astype(idt),
                (ukey - urow * V).astype(idt))

    # ------------------------------------------------------------------
    # the repair
    # ------------------------------------------------------------------

    def _value(self) -> int:
        """Net flow into the sink (one read-back)."""
        xp, flow = self._xp, self._L["flow"]
        a, b = self._t_out
        total = xp.zeros((), dtype=np.int64)
        if self._t_in_arcs.shape[0]:
            total = total + flow[self._t_in_arcs].sum()
        if b > a:
            total = total - flow[a:b].sum()
        return int(total)

    def _t_reference(self):
        """Seconds of a solve from scratch as :func:`maximum_flow` runs it,
        for the time budget: the fastest one seen here, plus the assembly
        of the output's pattern, which ``maximum_flow`` does on every call
        and this solver once (its first solve; ``_output_plan``: on an
        H100 12 ms for the benchmark's unit network, where ``maximum_flow``
        spent 12 ms on its output and the solver 52-56 ms on the rest).
        That one is timed once, so it counts for no more than a solve, in
        case a one-time cost slowed it."""
        return self._t_scratch + min(self._t_plan, self._t_scratch)

    def _check_budget(self):
        """Raise :class:`_OverBudget` once the repair's deadline has passed."""
        if self._deadline is not None and time.perf_counter() > self._deadline:
            raise _OverBudget()


# ---------------------------------------------------------------------------
# one-time warm-up of the CUDA paths (per device and process); its network
# and batches are in _warmup.py
# ---------------------------------------------------------------------------

_WARMED = set()



def _warm_up(backend):
    """Solve a six-vertex network, then repair a small one, once per device and process.

    On CuPy the first solve of a process compiles (or loads from CuPy's
    cache) the element-wise kernels a from-scratch solve and a repair use;
    doing it here keeps that one-time cost out of the from-scratch time
    that sets the repair's time budget, and out of the first repair (which
    would run out of that budget while compiling).
    """
    if backend != "cupy":
        return
    cp = _backend.cp
    dev = int(cp.cuda.Device().id)
    if dev in _WARMED:
        return
    _WARMED.add(dev)   # before the solver below, whose constructor calls this
    # 0 -> 1 -> 2 -> 3 -> 4 -> 5 (sink) with a bottleneck at 4 -> 5 and a
    # side arc 1 -> 5: the greedy start, phase 1, the direct return and
    # phase 2 (excess stranded three arcs from the source) all run
    indptr = cp.asarray([0, 1, 3, 4, 5, 6, 6], dtype=np.int32)
    indices = cp.asarray([1, 2, 5, 3, 4, 5], dtype=np.int32)
    cap = cp.asarray([9, 9, 1, 9, 9, 1], dtype=np.int64)
    _mf._solve(indptr, indices, cap, 0, 5, "cupy", "reverse_csr")
    # repairs of a small grid network reach the path passes, both
    # push-relabel phases and the cut's BFS
    C = _warm_network()
    solver = MaxFlowSolver(C, 16, 17, backend="cupy", rebuild_fraction=1.0, time_budget=None)
    solver.solve()
    # (C follows the solver's capacities).  The detour pass goes off for
    # these runs, which would leave the later steps little to do, and runs
    # alone last, where either settings use it (its kernels and
    # element-wise steps compile on first use); so do the bounds on the
    # pushes across the cut, whose excess reaches both phases here
    saved = dict(REPAIR)
    detour = int((REPAIR.get("small") or {}).get("detour") or REPAIR.get("detour") or 0)
    try:
        REPAIR.update(detour=0, push_bound=False, small=dict(saved.get("small") or {}, detour=0))
        _warm_batches(solver, C, cp.asarray)
        if saved.get("small_batch") and saved.get("small"):
            # and with the settings of small batches (the early-stopping
            # relabels' reductions took 4-5 s each to compile on a fresh CuPy
            # cache), without the path passes, which would leave the phases
            # little to do; once without the passes over pairs, which would
            # leave the phases' first steps nothing to do (a kernel of them then
            # compiled during the first real repair: 3.5-4.5 s on a fresh cache),
            # and once with them (their element-wise steps compile on first use)
            for pair in (0, max(1, int(saved["small"].get("pair") or 0))):
                REPAIR.update(small_batch=1.0, paths=False, pair_min=1,
                              small=dict(saved["small"], pair=pair, detour=0))
                _warm_batches(solver, C, cp.asarray)
        if detour or saved.get("push_bound"):
            REPAIR.update(small_batch=1.0, paths=False, pair_min=1, push_bound=saved.get("push_bound"),
                          small=dict(saved.get("small") or {}, detour=detour))
            _warm_batches(solver, C, cp.asarray)
    finally:
        REPAIR.clear()
        REPAIR.update(saved)
    # the fallback F's passes from the source (one, which finds the flow
    # maximum) and the comparison that gives their cut: compiled inside the
    # first repair with a phase F, ~0.35 s on an H100 with a fresh cache
    if REPAIR.get("paths") and REPAIR.get("f_root"):
        solver._root_pass(solver._cap_cut - 1, 1)
        _ = solver._pbufs.owner == solver.source
    # the fallback F's saturation of the source arcs, which the batches
    # above need not reach: its element-wise kernels compiled mid-repair
    # took 0.2-0.3 s on an H100 (the solver is thrown away after this)
    solver._height.fill(0)
    solver._saturate_source()
    # two more element-wise steps the batches above need not reach, each
    # ~0.1 s to compile on a fresh CuPy cache: the lazy far targets'
    # heights of a complete relabel (``h[far] = hlimit`` in
    # _Phase._relabel_full, on a list of the relabel steps of two vertices
    # or more: the scalar broadcast over a list of one is another kernel;
    # compiled inside the first RLG repair with a phase, whose budget is
    # ~35 ms), and the value's subtraction of a sink's out-arcs' flow (the
    # warm network's sink has none)
    far = solver._label_steps().lists[1][:2]
    far[...] = cp.arange(2, dtype=far.dtype)
    solver._height[far] = solver._hlimit2
    int(cp.zeros((), dtype=np.int64) - solver._L["flow"][:1].sum())

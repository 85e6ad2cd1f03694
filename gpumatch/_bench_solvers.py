"""Solvers of :mod:`gpumatch.bench`: how each one is set up, warmed up and timed."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from . import _backend


# ---------------------------------------------------------------------------
# solvers
# ---------------------------------------------------------------------------


def _module_available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def solver_available(solver: str) -> tuple[bool, str]:
    """Whether `solver` can run here, and why not."""
    if solver == "gpumatch-cupy":
        return (True, "") if _backend.cupy_available() else (False, "no usable CuPy/CUDA device")
    if solver in ("gpumatch-numpy", "scipy"):
        return True, ""
    if solver == "gpumatch-numba":
        return (True, "") if _backend.numba_available() else (False, "Numba does not import")
    if solver == "igraph":
        return (True, "") if _module_available("igraph") else (False, "python-igraph is not installed")
    if solver == "ortools":
        return (True, "") if _module_available("ortools") else (False, "OR-Tools is not installed")
    return False, f"unknown solver {solver!r}"


def _col_to_row_from_pairs(rows, cols, n):
    out = np.full(n, -1, dtype=np.int32)
    out[np.asarray(cols, dtype=np.int64)] = np.asarray(rows, dtype=np.int64)
    return out


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


class _Solve:
    """One solver on one input: ``setup()`` once, then ``solve()`` -> (result, seconds, e2e seconds)."""

    device_input = False

    def __init__(self, problem, data):
        self.problem = problem
        self.data = data

    def setup(self):  # pragma: no cover - overridden where needed
        pass

    def warmup(self):
        """First run; returns (result, seconds, stats or None)."""
        res, t, _ = self.solve()
        return res, t, None


class _ScipySolve(_Solve):
    def setup(self):
        if self.problem == "flow":
            self.C32 = _int32_capacity(self.data[0])

    def solve(self):
        from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

        if self.problem == "matching":
            res, t = _timed(lambda: maximum_bipartite_matching(self.data, perm_type="row"))
            return res, t, t
        C, s, tt = self.data
        res, t = _timed(lambda: maximum_flow(self.C32, s, tt, method="dinic"))
        return (int(res.flow_value), res.flow), t, t


def _int32_capacity(C):
    C = sp.csr_matrix(C)
    if C.nnz and (C.data.max() > np.iinfo(np.int32).max or C.data.min() < 0):
        raise OverflowError("capacities do not fit scipy's int32 maximum_flow")
    return sp.csr_matrix((C.data.astype(np.int32), C.indices, C.indptr), shape=C.shape)


class _NumpySolve(_Solve):
    backend = "numpy"

    def solve(self):
        if self.problem == "matching":
            from .matching import maximum_bipartite_matching

            res, t = _timed(lambda: maximum_bipartite_matching(self.data, "row", backend=self.backend))
            return res, t, t
        from .flow import maximum_flow

        C, s, tt = self.data
        res, t = _timed(lambda: maximum_flow(C, s, tt, backend=self.backend))
        return (int(res.flow_value), res.flow), t, t

    def warmup(self):
        if self.problem == "matching":
            try:
                from .matching import bipartite_matching
            except ImportError:
                return super().warmup()
            res, t = _timed(lambda: bipartite_matching(self.data, backend=self.backend))
            return res.col_to_row, t, getattr(res, "stats", None)
        from .flow import maximum_flow

        C, s, tt = self.data
        res, t = _timed(lambda: maximum_flow(C, s, tt, backend=self.backend))
        return (int(res.flow_value), res.flow), t, getattr(res, "stats", None)


class _NumbaSolve(_NumpySolve):
    """gpumatch's compiled CPU engine; the warm-up run compiles it (or loads it from Numba's cache)."""

    backend = "numba"


class _CupySolve(_Solve):
    """gpumatch on the GPU: device-resident input timed with CUDA events."""

    def setup(self):
        cp = _backend.cp
        cpx = _backend.cpx_sparse
        if self.problem == "flow":
            # cupyx.scipy.sparse has no integer dtypes and maximum_flow wants integer capacities:
            # the flow solve is timed from the SciPy matrix (host-to-device copy included).
            self.device_input = False
            self.note = "flow timed from the SciPy matrix (cupyx sparse has no integer capacities)"
            return
        A = self.data
        host = A if A.dtype in (np.float32, np.float64, np.bool_) else A.astype(np.float32)
        self.transfer_times = []
        for _ in range(3):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            dev = cpx.csr_matrix(host)
            end.record()
            end.synchronize()
            self.transfer_times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
        self.dev = dev
        self.device_input = True

    def _call(self, graph, stats=False):
        if self.problem == "matching":
            if stats:
                from .matching import bipartite_matching

                res = bipartite_matching(graph, backend="cupy")
                return res.col_to_row, getattr(res, "stats", None)
            from .matching import maximum_bipartite_matching

            return maximum_bipartite_matching(graph, "row", backend="cupy"), None
        from .flow import maximum_flow

        _, s, t = self.data
        res = maximum_flow(graph, s, t, backend="cupy")
        return (int(res.flow_value), res.flow), getattr(res, "stats", None)

    def _device_solve(self, stats=False):
        cp = _backend.cp
        start, end = cp.cuda.Event(), cp.cuda.Event()
        if self.device_input:
            graph = self.dev
        else:
            graph = self.data[0] if self.problem == "flow" else self.data
        start.record()
        res, st = self._call(graph, stats)
        end.record()
        end.synchronize()
        return res, cp.cuda.get_elapsed_time(start, end) / 1e3, st

    def warmup(self):
        t0 = time.perf_counter()
        res, _, st = self._device_solve(stats=True)
        _backend.synchronize("cupy")
        return res, time.perf_counter() - t0, st

    def solve(self):
        res, t, _ = self._device_solve()
        if not self.device_input:  # already timed from the host matrix: that is end to end
            return res, t, t
        t0 = time.perf_counter()
        self._call(self.data)
        _backend.synchronize("cupy")
        return res, t, time.perf_counter() - t0


class _IgraphSolve(_Solve):
    def setup(self):
        import igraph

        if self.problem == "matching":
            A = sp.coo_matrix(self.data)
            m, n = A.shape
            self.mn = (m, n)
            edges = np.column_stack([A.row, A.col.astype(np.int64) + m]).tolist()
            self.g = igraph.Graph.Bipartite([False] * m + [True] * n, edges)
        else:
            C, s, t = self.data
            C = sp.coo_matrix(C)
            keep = C.row != C.col
            self.arcs = (C.row[keep].astype(np.int64), C.col[keep].astype(np.int64))
            self.g = igraph.Graph(n=C.shape[0], edges=np.column_stack(self.arcs).tolist(), directed=True)
            self.caps = C.data[keep].astype(np.int64).tolist()

    def solve(self):
        t_setup = 0.0
        if self.problem == "matching":
            mt, t = _timed(lambda: self.g.maximum_bipartite_matching())
            m, n = self.mn
            mate = np.asarray(mt.matching, dtype=np.int64)
            res = np.where(mate[m:] >= 0, mate[m:], -1).astype(np.int32)
            return res, t, t + t_setup
        C, s, tt = self.data
        fl, t = _timed(lambda: self.g.maxflow(s, tt, capacity=self.caps))
        flow = _antisymmetric(self.arcs, np.asarray(fl.flow, dtype=np.int64), C.shape[0])
        return (int(round(fl.value)), flow), t, t


class _OrtoolsSolve(_Solve):
    def setup(self):
        if self.problem == "matching":
            from .csr import bipartite_flow_network

            A = sp.csr_matrix(self.data)
            self.mn = A.shape
            ip, ix, cap, s, t = bipartite_flow_network(A.indptr, A.indices, A.shape)
            tails = np.repeat(np.arange(ip.shape[0] - 1, dtype=np.int64), np.diff(ip))
            self.net = (tails, ix.astype(np.int64), cap.astype(np.int64), s, t)
        else:
            C, s, t = self.data
            C = sp.coo_matrix(C)
            keep = C.row != C.col
            self.net = (C.row[keep].astype(np.int64), C.col[keep].astype(np.int64),
                        C.data[keep].astype(np.int64), s, t)

    def solve(self):
        from ortools.graph.python import max_flow

        tails, heads, caps, s, t = self.net
        t0 = time.perf_counter()
        smf = max_flow.SimpleMaxFlow()
        arcs = smf.add_arcs_with_capacity(tails, heads, caps)
        t1 = time.perf_counter()
        status = smf.solve(int(s), int(t))
        t2 = time.perf_counter()
        if status != smf.OPTIMAL:
            raise RuntimeError(f"OR-Tools max flow returned status {status}")
        flows = np.asarray(smf.flows(arcs), dtype=np.int64)
        e2e = time.perf_counter() - t0
        if self.problem == "matching":
            m, n = self.mn
            sel = (flows > 0) & (tails < m) & (heads >= m) & (heads < m + n)
            res = _col_to_row_from_pairs(tails[sel], heads[sel] - m, n)
            return res, t2 - t1, e2e
        C = self.data[0]
        return (int(smf.optimal_flow()), _antisymmetric((tails, heads), flows, C.shape[0])), t2 - t1, e2e


def _antisymmetric(arcs, flows, nv):
    u, v = arcs
    F = sp.csr_matrix((flows, (u, v)), shape=(nv, nv), dtype=np.int64)
    return (F - F.T).tocsr()


_SOLVER_CLASSES = {
    "gpumatch-cupy": _CupySolve,
    "gpumatch-numba": _NumbaSolve,
    "gpumatch-numpy": _NumpySolve,
    "scipy": _ScipySolve,
    "igraph": _IgraphSolve,
    "ortools": _OrtoolsSolve,
}

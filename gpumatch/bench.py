"""Benchmark runner: gpumatch against SciPy (and optional peers) on one machine.

Run it as ``python -m gpumatch bench ...`` (or ``benchmarks/run.py``, a thin
wrapper).  For every input x solver it

1. builds the input once (generated family, Matrix Market / DIMACS file, or a
   corpus entry);
2. runs the solver once as a warm-up (for ``gpumatch-cupy`` this includes
   compiling the CUDA kernels: the excess over the median is reported as
   ``compile_s``);
3. runs it ``--repeats`` more times and keeps the median;
4. checks **every** result with :mod:`gpumatch.testing` (a König cover proves a
   matching maximum, a cut proves a flow maximum) and against the reference
   size/value; a wrong result is reported as ``status="wrong"`` and its time
   does not count.

GPU timing: the graph is copied to the device once
(``cupyx.scipy.sparse.csr_matrix``; that copy is ``transfer_s``), the solve on
the device-resident graph is timed with CUDA events (``median_s``), and the
end-to-end time from the SciPy matrix (copy in, solve, copy out) is
``e2e_s``.  CPU solvers run in a forked child process so that ``--timeout``
can stop one that hangs (SciPy's Hopcroft-Karp takes minutes on some meshes and
grids, scipy issue #26147); reference sizes for those come from
``scipy.sparse.csgraph.maximum_flow`` on the unit network instead.

Output, in ``--out``: ``results.jsonl`` (one JSON record per input x solver),
``results.md`` (the Markdown table that is also printed) and, when matplotlib
is installed, ``time_vs_size.png``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import multiprocessing
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy
import scipy.sparse as sp

from . import _backend

__all__ = ["SOLVERS", "SUITES", "BenchInput", "add_arguments", "main", "markdown_table", "run"]

SOLVERS = ("gpumatch-cupy", "gpumatch-numba", "gpumatch-numpy", "scipy", "igraph", "ortools")
DEFAULT_SOLVERS = "gpumatch-cupy,gpumatch-numba,gpumatch-numpy,scipy"
MESH_FAMILIES = ("delaunay", "grid", "mesh")
PROBLEMS = ("matching", "flow")


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class BenchInput:
    """One benchmark input; `build` returns a CSR matrix (matching) or (C, s, t) (flow)."""

    name: str
    family: str
    problem: str
    build: Callable[[], Any]
    reference: int | None = None
    ref_source: str | None = None
    params: dict = dataclasses.field(default_factory=dict)


def _gen(fn_name, **kwargs):
    def build():
        from . import generators

        return getattr(generators, fn_name)(**kwargs)

    return build


def _m(name, family, fn, **kw):
    return BenchInput(name, family, "matching", _gen(fn, **kw), params={"generator": fn, **kw})


def _f(name, family, fn, **kw):
    return BenchInput(name, family, "flow", _gen(fn, **kw), params={"generator": fn, **kw})


def _unit(name, family, fn, **kw):
    """Flow input: the unit-capacity network (s -> rows -> columns -> t) of a matching input."""
    make = _gen(fn, **kw)

    def build():
        from . import csr

        A = sp.csr_matrix(make())
        indptr, indices, capacity, s, t = csr.bipartite_flow_network(A.indptr, A.indices, A.shape)
        V = indptr.shape[0] - 1
        return sp.csr_matrix((capacity, indices, indptr), shape=(V, V)), s, t

    return BenchInput(name, family, "flow", build, params={"generator": fn, "network": "unit", **kw})


def _suite_small():
    return [
        _m("random_2k_d5", "random", "random_bipartite", m=2000, n=2000, degree=5),
        _m("random_2k_d2", "random", "random_bipartite", m=2000, n=2000, degree=2),
        _m("delaunay_2k", "delaunay", "delaunay", npoints=2000),
        _m("rmat_11_8", "rmat", "rmat", scale=11, edge_factor=8),
        _m("rect_2k_1k_d3", "rect", "random_bipartite", m=2000, n=1000, degree=3),
        _m("grid_40x40_drop0.1", "grid", "grid", nx=40, ny=40, drop=0.1),
        _f("genrmf_4_8", "genrmf", "genrmf", a=4, b=8, c1=100, c2=10000),
        _f("washington_16x32_C100", "washington", "washington_rlg", rows=16, cols=32, max_cap=100),
        _unit("unit_random_2k_d5", "random", "random_bipartite", m=2000, n=2000, degree=5),
    ]


def _suite_medium():
    return [
        _m("random_100k_d5", "random", "random_bipartite", m=100_000, n=100_000, degree=5),
        _m("delaunay_100k", "delaunay", "delaunay", npoints=100_000),
        _m("rmat_17_8", "rmat", "rmat", scale=17, edge_factor=8),
        _m("rect_100k_50k_d3", "rect", "random_bipartite", m=100_000, n=50_000, degree=3),
        _m("grid_300x300_drop0.1", "grid", "grid", nx=300, ny=300, drop=0.1),
        _f("genrmf_16_16", "genrmf", "genrmf", a=16, b=16, c1=100, c2=10000),
        _f("washington_128x256_C10000", "washington", "washington_rlg", rows=128, cols=256, max_cap=10000),
    ]


def _suite_standard():
    # The inputs of the performance issues (matching and max flow).
    return [
        _m("random_1M_d5", "random", "random_bipartite", m=1_000_000, n=1_000_000, degree=5),
        _m("delaunay_1M", "delaunay", "delaunay", npoints=1_000_000),
        _m("rmat_20_8", "rmat", "rmat", scale=20, edge_factor=8),
        _m("rect_1M_500k_d3", "rect", "random_bipartite", m=1_000_000, n=500_000, degree=3),
        _m("grid_1000x1000_drop0.1", "grid", "grid", nx=1000, ny=1000, drop=0.1),
        _m("random_200k_d5", "random", "random_bipartite", m=200_000, n=200_000, degree=5),
        _f("genrmf_64_64", "genrmf", "genrmf", a=64, b=64, c1=100, c2=10000),
        _f("genrmf_32_256", "genrmf", "genrmf", a=32, b=256, c1=100, c2=10000),
        _f("washington_512x1024_C10000", "washington", "washington_rlg", rows=512, cols=1024, max_cap=10000),
        _f("washington_1024x1024_C10000", "washington", "washington_rlg", rows=1024, cols=1024, max_cap=10000),
        # unit-capacity networks of the matching inputs (the flow issue's first six inputs)
        _unit("unit_random_1M_d5", "random", "random_bipartite", m=1_000_000, n=1_000_000, degree=5),
        _unit("unit_delaunay_1M", "delaunay", "delaunay", npoints=1_000_000),
        _unit("unit_rmat_20_8", "rmat", "rmat", scale=20, edge_factor=8),
        _unit("unit_rect_1M_500k_d3", "rect", "random_bipartite", m=1_000_000, n=500_000, degree=3),
        _unit("unit_grid_1000x1000_drop0.1", "grid", "grid", nx=1000, ny=1000, drop=0.1),
        _unit("unit_random_200k_d5", "random", "random_bipartite", m=200_000, n=200_000, degree=5),
    ]


def _suite_hard():
    # Inputs that once made G-PR slow or stall (robustness, not speed records):
    # long alternating paths, power-law hubs, thin rectangles, grids, meshes,
    # and the corpus's directed social network when a corpus is found.
    out = [
        _m("triangular_1500", "triangular", "triangular", n=1500),
        _m("triangular_1500_perm", "triangular", "triangular", n=1500, permute=True, seed=1),
        _m("triangular_1500_lower_perm", "triangular", "triangular", n=1500, lower=True, permute=True, seed=2),
        _m("bidiagonal_100k_perm", "path", "bidiagonal", n=100_000, permute=True),
        _m("rmat_18_8_perm", "rmat", "rmat", scale=18, edge_factor=8, permute=True),
        _m("thin_1M_100_d2", "rect", "random_bipartite", m=1_000_000, n=100, degree=2),
        _m("thin_100_1M_d2", "rect", "random_bipartite", m=100, n=1_000_000, degree=2),
        _m("grid_300x300_drop0.1", "grid", "grid", nx=300, ny=300, drop=0.1),
        _m("delaunay_200k", "delaunay", "delaunay", npoints=200_000),
    ]
    corpus = default_corpus_path()
    if corpus is not None:
        manifest = json.loads((corpus / "manifest.json").read_text())
        for e in manifest:
            if e.get("file", "").endswith("soc-slashdot0902-directed.mtx.gz"):
                out.append(_file_input(corpus / e["file"], "corpus", e.get("max_matching_stored"), "manifest"))
    return out


SUITES = {"small": _suite_small, "medium": _suite_medium, "standard": _suite_standard, "hard": _suite_hard}

_MATRIX_SUFFIXES = (".mtx", ".mtx.gz")
_FLOW_SUFFIXES = (".max", ".max.gz")


def _strip_suffix(name: str) -> str:
    low = name.lower()
    for suf in _MATRIX_SUFFIXES + _FLOW_SUFFIXES:
        if low.endswith(suf):
            return name[: -len(suf)]
    return name


def _file_input(path: pathlib.Path, family="file", reference=None, ref_source=None, source_sink=None):
    low = path.name.lower()
    if low.endswith(_MATRIX_SUFFIXES):
        def build(p=path):
            from .io import read_matrix_market

            return read_matrix_market(p)

        problem = "matching"
    else:
        def build(p=path, st=source_sink):
            from .io import read_dimacs_max

            C, s, t = read_dimacs_max(p)
            if st is not None:
                s, t = int(st[0]), int(st[1])
            return C, s, t

        problem = "flow"
    return BenchInput(_strip_suffix(path.name), family, problem, build, reference, ref_source,
                      params={"file": path.name})


def dir_inputs(path) -> list:
    """Inputs for every .mtx/.mtx.gz/.max/.max.gz file in `path` (sorted by name)."""
    path = pathlib.Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"--dir: {str(path)!r} is not a directory")
    files = sorted(p for p in path.iterdir()
                   if p.is_file() and p.name.lower().endswith(_MATRIX_SUFFIXES + _FLOW_SUFFIXES))
    return [_file_input(p) for p in files]


def default_corpus_path() -> pathlib.Path | None:
    """``$GPUMATCH_CORPUS``, else ``shared/corpus`` beside the repository (or the cwd)."""
    env = os.environ.get("GPUMATCH_CORPUS")
    candidates = [pathlib.Path(env)] if env else []
    here = pathlib.Path(__file__).resolve().parent.parent
    candidates += [here.parent / "shared" / "corpus", pathlib.Path.cwd().parent / "shared" / "corpus",
                   pathlib.Path.cwd() / "shared" / "corpus"]
    for c in candidates:
        if (c / "manifest.json").is_file():
            return c
    return None


def corpus_inputs(path=None, max_nnz=None) -> list:
    """Inputs for the entries of a corpus ``manifest.json`` with their reference answers."""
    path = pathlib.Path(path) if path else default_corpus_path()
    if path is None or not (path / "manifest.json").is_file():
        raise FileNotFoundError("--corpus: no corpus found (manifest.json); set GPUMATCH_CORPUS or pass a path")
    manifest = json.loads((path / "manifest.json").read_text())
    out = []
    for e in manifest:
        nnz = e.get("nnz_stored")
        if max_nnz is not None and nnz is not None and nnz > max_nnz:
            continue
        if e.get("kind") == "matching":
            inp = _file_input(path / e["file"], "corpus", e.get("max_matching_stored"), "manifest")
        elif e.get("kind") == "maxflow":
            inp = _file_input(path / e["file"], "corpus", e.get("max_flow"), "manifest", e.get("source_sink"))
        else:
            continue
        out.append(inp)
    return out


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
        import cupyx.scipy.sparse as cpx

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


# ---------------------------------------------------------------------------
# checks and references
# ---------------------------------------------------------------------------


def _light_matching_check(A, match, expected):
    """Validity (edges, no shared endpoint) and size == expected, without a cover."""
    match = _backend.to_numpy(match).astype(np.int64)
    m, n = A.shape
    assert match.shape == (n,), f"matching has length {match.shape}, expected ({n},)"
    cols = np.flatnonzero(match >= 0)
    rows = match[cols]
    assert rows.size == 0 or rows.max() < m, "matched row out of range"
    assert np.unique(rows).size == rows.size, "a row is matched twice"
    A = sp.csr_matrix(A)
    keys = np.repeat(np.arange(m, dtype=np.int64), np.diff(A.indptr)) * max(n, 1) + A.indices
    keys.sort()
    want = rows * max(n, 1) + cols
    pos = np.searchsorted(keys, want)
    pos = np.minimum(pos, max(keys.size - 1, 0))
    assert keys.size == 0 and want.size == 0 or bool(np.all(keys[pos] == want)), "a matched pair is not an edge"
    size = int(cols.size)
    if expected is not None:
        assert size == expected, f"matching size {size} differs from the reference {expected}"
    return size


def make_checker(inp: BenchInput, data, mode: str, reference):
    """Return check(result) -> size/value; raises AssertionError on a wrong result."""
    from . import testing

    if inp.problem == "matching":
        def check(res):
            if mode == "light" and reference is not None:
                return _light_matching_check(data, res, reference)
            return testing.check_matching(data, res, "row", expected_size=reference).size

        return check
    C, s, t = data

    def check_flow(res):
        value, flow = res
        if mode == "light" and reference is not None:
            assert int(value) == reference, f"flow value {value} differs from the reference {reference}"
            return int(value)
        cert = testing.check_flow(C, s, t, flow, int(value))
        if reference is not None:
            assert int(cert.value) == reference, f"flow value {cert.value} differs from the reference {reference}"
        return int(cert.value)

    return check_flow


def flow_reference(A) -> int:
    """Maximum matching size of `A` via scipy's maximum_flow (Dinic) on the unit network."""
    from scipy.sparse.csgraph import maximum_flow

    from .csr import bipartite_flow_network

    A = sp.csr_matrix(A)
    ip, ix, cap, s, t = bipartite_flow_network(A.indptr, A.indices, A.shape)
    V = ip.shape[0] - 1
    N = sp.csr_matrix((cap.astype(np.int32), ix, ip), shape=(V, V))
    return int(maximum_flow(N, s, t, method="dinic").flow_value)


# ---------------------------------------------------------------------------
# measurement
# ---------------------------------------------------------------------------


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist() if x.size <= 64 else f"<array of {x.size}>"
    if _backend.is_cupy_array(x):
        return _jsonable(_backend.to_numpy(x))
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


def measure(solver: str, inp: BenchInput, data, check, repeats: int, budget: float | None) -> dict:
    """Warm up, repeat, check every result; returns the timing part of a record."""
    out: dict = {"status": "ok", "ok": False, "times_s": [], "e2e_times_s": []}
    runner = _SOLVER_CLASSES[solver](inp.problem, data)
    (_, setup_s) = _timed(runner.setup)
    out["setup_s"] = setup_s
    if getattr(runner, "transfer_times", None):
        out["transfer_s"] = statistics.median(runner.transfer_times)
    out["device_input"] = bool(runner.device_input) if solver == "gpumatch-cupy" else None
    t_start = time.perf_counter()
    res, warm_s, stats = runner.warmup()
    out["warmup_s"] = warm_s
    if solver == "gpumatch-cupy":
        out["device_input"] = bool(runner.device_input)
    if stats is not None:
        out["stats"] = _jsonable(stats)
    if getattr(runner, "note", None):
        _add_note(out, runner.note)
    try:
        out["result"] = check(res)
    except AssertionError as exc:
        out.update(status="wrong", error=_one_line(exc), phase="warmup")
        return out
    for i in range(repeats):
        elapsed = time.perf_counter() - t_start  # wall time so far: runs and checks
        if budget and elapsed + elapsed / (i + 1) > budget:
            _add_note(out, f"{i} of {repeats} repeats: one more would pass the --budget of {budget:g} s"
                      + ("; the time is the warm-up run's" if i == 0 else ""))
            break
        res, t, e2e = runner.solve()
        try:
            value = check(res)
        except AssertionError as exc:
            out.update(status="wrong", error=_one_line(exc), phase=f"repeat {len(out['times_s']) + 1}")
            out["times_s"], out["e2e_times_s"] = [], []
            return out
        if value != out["result"]:
            out.update(status="wrong", error=f"result {value} differs from the warm-up's {out['result']}")
            out["times_s"], out["e2e_times_s"] = [], []
            return out
        out["times_s"].append(t)
        out["e2e_times_s"].append(e2e)
    times = out["times_s"] or [warm_s]
    out["median_s"] = statistics.median(times)
    out["e2e_s"] = statistics.median(out["e2e_times_s"]) if out["e2e_times_s"] else warm_s
    if solver == "gpumatch-cupy" and out["times_s"]:
        out["compile_s"] = max(0.0, warm_s - out["median_s"])
    out["ok"] = True
    return out


def _add_note(rec: dict, text: str) -> None:
    rec["note"] = f"{rec['note']}; {text}" if rec.get("note") else text


def _one_line(exc) -> str:
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, AssertionError) else str(exc)
    text = " ".join(text.split())
    return text[:500]


def _child_main(fn, conn):
    # A forked child of a process that holds a CUDA context must not free device memory:
    # no cyclic garbage collection here (reference counting still frees host objects).
    import gc

    gc.disable()
    try:
        conn.send(fn())
    except BaseException as exc:  # report, never hang the parent
        conn.send({"status": "error", "ok": False, "error": _one_line(exc),
                   "traceback": traceback.format_exc(limit=6)})
    finally:
        conn.close()


def run_with_timeout(fn, timeout: float | None) -> dict:
    """Run `fn` in a forked child, killed after `timeout` seconds (in-process without fork)."""
    if not timeout or "fork" not in multiprocessing.get_all_start_methods():
        return _guarded(fn)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(fn, send), daemon=True)
    proc.start()
    send.close()
    try:
        if recv.poll(timeout):
            try:
                out = recv.recv()
            except EOFError:
                out = {"status": "error", "ok": False, "error": f"solver process died (exit code {proc.exitcode})"}
        else:
            out = {"status": "timeout", "ok": False, "error": f"no result within {timeout:g} s"}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    if out.get("status") == "error" and proc.exitcode not in (0, None) and "error" not in out:
        out["error"] = f"solver process died (exit code {proc.exitcode})"
    return out


def _guarded(fn) -> dict:
    try:
        return fn()
    except Exception as exc:
        return {"status": "error", "ok": False, "error": _one_line(exc), "traceback": traceback.format_exc(limit=6)}


# ---------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------


def git_revision() -> tuple[str | None, bool | None]:
    """``git rev-parse HEAD`` of the checkout holding this package and whether tracked files
    changed since; ``(None, None)`` outside git or without git."""
    here = pathlib.Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                             timeout=10, check=False)
        if rev.returncode != 0:
            return None, None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=10, check=False)
        return rev.stdout.strip(), (bool(dirty.stdout.strip()) if dirty.returncode == 0 else None)
    except (OSError, subprocess.SubprocessError):
        return None, None


def environment() -> dict:
    from . import __version__

    env = {
        "gpumatch": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "cupy": None,
        "cuda_runtime": None,
        "cuda_driver": None,
        "gpu": None,
        "cpu": _cpu_name(),
        "host": platform.node(),
    }
    env["git_rev"], env["git_dirty"] = git_revision()
    if _backend.cp is not None:
        env["cupy"] = _backend.cp.__version__
        if _backend.cupy_available():
            rt = _backend.cp.cuda.runtime
            env["cuda_runtime"] = _cuda_version(rt.runtimeGetVersion())
            env["cuda_driver"] = _cuda_version(rt.driverGetVersion())
            env["gpu"] = _backend.device_name()
    for mod in ("igraph", "ortools"):
        if _module_available(mod):
            try:
                env[mod] = __import__(mod).__version__
            except Exception:
                env[mod] = "installed"
    return env


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} threads)"
    except OSError:
        pass
    return platform.processor() or platform.machine()


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------


def _fmt_t(x):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 1:
        return f"{x:.2f}"
    if x >= 0.01:
        return f"{x:.3f}"
    return f"{x:.2e}"


def _fmt_speed(x):
    return "—" if x is None else (f"{x:.1f}×" if x >= 1 else f"{x:.2f}×")


def markdown_table(records: list) -> str:
    """Markdown table of `records` (one row per input x solver)."""
    head = ("| problem | input | shape | nnz | solver | median s | e2e s | transfer s | compile s "
            "| size/value | ok | vs scipy | vs scipy e2e |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in records:
        status = "yes" if r.get("ok") else r.get("status", "no")
        shape = "×".join(str(s) for s in r.get("shape") or [])
        lines.append("| " + " | ".join([
            r.get("problem", ""), r.get("input", ""), shape, f"{r.get('nnz', 0):,}", r.get("solver", ""),
            _fmt_t(r.get("median_s")), _fmt_t(r.get("e2e_s")), _fmt_t(r.get("transfer_s")),
            _fmt_t(r.get("compile_s")), "—" if r.get("result") is None else f"{r['result']:,}", status,
            _fmt_speed(r.get("speedup_vs_scipy")), _fmt_speed(r.get("speedup_e2e_vs_scipy")),
        ]) + " |")
    return "\n".join(lines) + "\n"


def save_plot(records: list, path) -> str | None:
    """Log-log plot of median time vs stored entries, one line per solver; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    problems = [p for p in PROBLEMS if any(r.get("problem") == p and r.get("ok") for r in records)]
    if not problems:
        return None
    fig, axes = plt.subplots(1, len(problems), figsize=(6 * len(problems), 4.5), squeeze=False)
    for ax, prob in zip(axes[0], problems):
        for solver in SOLVERS:
            pts = sorted((r["nnz"], r["median_s"]) for r in records
                         if r.get("problem") == prob and r.get("solver") == solver and r.get("ok")
                         and r.get("median_s"))
            if pts:  # markers only: the inputs are different families, not one scaling series
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o", alpha=0.8, label=solver)
        ax.set_xlabel("stored entries (edges / arcs)")
        ax.set_ylabel("median solve time (s)")
        ax.set_title(f"{prob}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the runner's options to `p` (shared by ``gpumatch bench`` and benchmarks/run.py)."""
    src = p.add_argument_group("inputs (default: --suite small)")
    src.add_argument("--suite", choices=sorted(SUITES), action="append",
                     help="generated families: 'small' (quick CPU run), 'medium', 'standard' "
                          "(the issue inputs, ~1M vertices: for a GPU machine); repeatable")
    src.add_argument("--dir", action="append", metavar="PATH",
                     help="folder of .mtx/.mtx.gz (matching) and .max/.max.gz (flow) files; repeatable")
    src.add_argument("--corpus", nargs="?", const="", metavar="PATH",
                     help="the shared test corpus (manifest.json with reference answers); "
                          "default location: $GPUMATCH_CORPUS or ../shared/corpus")
    src.add_argument("--filter", metavar="TEXT", help="only inputs whose name contains TEXT")
    src.add_argument("--max-nnz", type=int, metavar="N", help="skip inputs with more than N stored entries")
    p.add_argument("--problem", choices=("matching", "flow", "both"), default="both")
    p.add_argument("--solvers", default=DEFAULT_SOLVERS,
                   help=f"comma-separated, from {', '.join(SOLVERS)} (default: {DEFAULT_SOLVERS}); "
                        "solvers that cannot run here (no GPU, peer not installed) are skipped with a note")
    p.add_argument("--repeats", type=int, default=3, help="timed runs after the warm-up (median reported)")
    p.add_argument("--out", default="bench_out", metavar="DIR", help="output folder (default: bench_out)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="SEC",
                   help="hard per input x solver limit: CPU solvers run in a child process that is "
                        "stopped after SEC (status 'timeout'); 0 = no limit, in-process")
    p.add_argument("--budget", type=float, default=120.0, metavar="SEC",
                   help="soft per input x solver budget: no further repeat is started when it would pass "
                        "SEC (a solver slower than SEC is timed on its warm-up run alone; 0 = no limit)")
    p.add_argument("--scipy-mesh-limit", type=int, default=20_000, metavar="ROWS",
                   help="skip scipy's maximum_bipartite_matching on mesh/grid families above this many "
                        "rows (scipy #26147); the reference then comes from scipy's maximum_flow")
    p.add_argument("--check", choices=("full", "light"), default="full",
                   help="'full': certificate (König cover / min cut) for every result; 'light': "
                        "validity and size/value against the reference")
    p.add_argument("--no-plot", action="store_true", help="do not write time_vs_size.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


class _OneLineErrors(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(prog="gpumatch bench") -> argparse.ArgumentParser:
    p = _OneLineErrors(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example: python -m gpumatch bench --suite standard --repeats 5")
    return add_arguments(p)


def collect_inputs(args) -> list:
    inputs = []
    suites = args.suite or ([] if (args.dir or args.corpus is not None) else ["small"])
    for s in suites:
        inputs += SUITES[s]()
    for d in args.dir or []:
        inputs += dir_inputs(d)
    if args.corpus is not None:
        inputs += corpus_inputs(args.corpus or None, args.max_nnz)
    if args.problem != "both":
        inputs = [i for i in inputs if i.problem == args.problem]
    if args.filter:
        inputs = [i for i in inputs if args.filter in i.name]
    return inputs


def parse_solvers(text: str) -> list:
    solvers = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in solvers if s not in SOLVERS]
    if bad:
        raise ValueError(f"unknown solver(s) {', '.join(bad)}; choose from {', '.join(SOLVERS)}")
    if not solvers:
        raise ValueError("--solvers is empty")
    return list(dict.fromkeys(solvers))


def _shape_nnz(problem, data):
    A = data if problem == "matching" else data[0]
    return [int(s) for s in A.shape], int(A.nnz)


def bench_input(inp: BenchInput, solvers: list, args, env: dict, log=print) -> list:
    """All records of one input."""
    base = {"input": inp.name, "family": inp.family, "problem": inp.problem, "params": _jsonable(inp.params)}
    try:
        data, build_s = _timed(inp.build)
    except Exception as exc:
        return [{**base, "solver": s, "status": "error", "ok": False, "error": f"build: {_one_line(exc)}", **env}
                for s in solvers]
    shape, nnz = _shape_nnz(inp.problem, data)
    base.update(shape=shape, nnz=nnz, build_s=build_s)
    if args.max_nnz is not None and nnz > args.max_nnz:
        log(f"skip {inp.name}: {nnz} stored entries > --max-nnz {args.max_nnz}")
        return []
    timeout = args.timeout or None
    reference, ref_source = inp.reference, inp.ref_source
    guard_scipy = (inp.problem == "matching" and inp.family in MESH_FAMILIES
                   and shape[0] > args.scipy_mesh_limit)

    def unit_flow_reference():
        got = run_with_timeout(lambda: {"status": "ok", "value": _timed(lambda: flow_reference(data))}, timeout)
        if got.get("status") == "ok":
            base["reference_s"] = got["value"][1]
            return got["value"][0], "scipy maximum_flow (unit network)"
        log(f"{inp.name}: no reference size ({got.get('status')}: {got.get('error', '')})")
        return None, None

    # A full check proves maximality by itself (König cover); only the light
    # check needs a reference size when scipy's matching does not provide one.
    if (reference is None and inp.problem == "matching" and args.check != "full"
            and (guard_scipy or "scipy" not in solvers)):
        reference, ref_source = unit_flow_reference()
    order = sorted(solvers, key=lambda s: s != "scipy")  # scipy first: its certified size is the reference
    records = []
    for solver in order:
        rec = {**base, "solver": solver}
        if solver == "scipy" and guard_scipy:
            rec.update(status="skipped", ok=False, reference_s=base.get("reference_s"),
                       note=f"scipy maximum_bipartite_matching skipped on a {inp.family} input above "
                            f"{args.scipy_mesh_limit} rows (scipy #26147)")
            records.append(rec)
            continue
        check = make_checker(inp, data, args.check, reference)
        fn = (lambda s=solver, c=check: measure(s, inp, data, c, args.repeats, args.budget))
        got = _guarded(fn) if solver == "gpumatch-cupy" else run_with_timeout(fn, timeout)
        rec.update(got)
        if solver == "scipy" and reference is None:
            if rec.get("ok"):
                reference, ref_source = rec["result"], "scipy (certified)"
            elif inp.problem == "matching":  # timed out or failed: fall back to the unit network
                reference, ref_source = unit_flow_reference()
        records.append(rec)
    scipy_rec = next((r for r in records if r["solver"] == "scipy" and r.get("ok")), None)
    for rec in records:
        for key in ("median_s", "e2e_s", "transfer_s", "compile_s", "warmup_s", "result"):
            rec.setdefault(key, None)
        rec["size" if inp.problem == "matching" else "value"] = rec["result"]
        rec.setdefault("reference_s", base.get("reference_s"))
        rec["reference"] = reference
        rec["ref_source"] = ref_source
        if rec.get("ok") and reference is not None and rec.get("result") != reference:
            rec.update(ok=False, status="wrong", error=f"result {rec.get('result')} != reference {reference}")
        for key in ("median_s", "e2e_s"):
            name = "speedup_vs_scipy" if key == "median_s" else "speedup_e2e_vs_scipy"
            rec[name] = (scipy_rec[key] / rec[key] if scipy_rec and rec.get("ok") and rec.get(key) else None)
        rec.update({k: v for k, v in env.items()})
        rec["timestamp"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    order_idx = {s: i for i, s in enumerate(solvers)}
    records.sort(key=lambda r: order_idx[r["solver"]])
    return records


def run(args) -> int:
    """Run the benchmark described by parsed `args`; returns the exit code."""
    solvers = parse_solvers(args.solvers)
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}")
    inputs = collect_inputs(args)
    if not inputs:
        raise ValueError("no inputs selected (check --suite/--dir/--corpus/--problem/--filter)")
    notes = []
    usable = []
    for s in solvers:
        ok, why = solver_available(s)
        (usable.append(s) if ok else notes.append(f"note: solver {s} skipped: {why}"))
    for n in notes:
        print(n, file=sys.stderr)
    if not usable:
        raise RuntimeError("none of the requested solvers can run here")
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    jsonl = out_dir / "results.jsonl"
    env = environment()
    records = []
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None
    bar = None if (args.quiet or tqdm is None) else tqdm(total=len(inputs), unit="input", file=sys.stderr)
    log = (bar.write if bar is not None else (lambda msg: print(msg, file=sys.stderr)))
    with open(jsonl, "w") as fh:
        for inp in inputs:
            if bar is not None:
                bar.set_description(inp.name)
            recs = bench_input(inp, usable, args, env, log)
            for r in recs:
                fh.write(json.dumps(_jsonable({k: v for k, v in r.items() if k != "traceback"})) + "\n")
                if r.get("status") in ("wrong", "error"):
                    log(f"{r['input']} / {r['solver']}: {r['status']}: {r.get('error', '')}")
            fh.flush()
            records += recs
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    table = markdown_table(records)
    header = (f"gpumatch bench — {env['gpu'] or 'no GPU'}; CPU {env['cpu']}; numpy {env['numpy']}, "
              f"scipy {env['scipy']}, cupy {env['cupy']}, CUDA {env['cuda_runtime']}; "
              f"git {env['git_rev']}{' (modified)' if env['git_dirty'] else ''}; repeats {args.repeats}; check {args.check}\n\n")
    (out_dir / "results.md").write_text(header + table)
    print()
    print(header + table)
    if not args.no_plot:
        png = save_plot(records, out_dir / "time_vs_size.png")
        print(f"plot: {png}" if png else "plot: skipped (matplotlib is not installed)")
    print(f"records: {jsonl}  table: {out_dir / 'results.md'}")
    bad = [r for r in records if r.get("status") in ("wrong", "error")]
    return 1 if bad else 0


def main(argv=None) -> int:
    """``python -m gpumatch bench`` / ``benchmarks/run.py`` entry point (errors: one line, exit 1)."""
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        print("benchmark interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        print(f"{build_parser().prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

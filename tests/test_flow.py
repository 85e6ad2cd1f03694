"""Tests of gpumatch.flow: every flow is certified by gpumatch.testing.check_flow.

Values are compared with scipy's Dinic where scipy is exact (int32
capacities); flows are never compared (they are not unique).  On the GPU each
input is solved several times, since the kernels are racy by design.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

from gpumatch import _backend
from gpumatch._validation import as_csr_graph
from gpumatch.io import read_matrix_market
from gpumatch.flow import matching_by_flow, maximum_flow, minimum_cut
from gpumatch.testing import check_flow

from conftest import certified_loop_in_child, corpus_manifest

LAYOUTS = ["reverse_csr", "bcsr"]


@pytest.fixture(autouse=True)
def _iteration_guard():
    """Turn a livelock into a failure instead of a hang."""
    from gpumatch.flow import _maxflow

    old = _maxflow.TUNING.get("max_iterations")
    _maxflow.TUNING["max_iterations"] = 200_000
    yield
    _maxflow.TUNING["max_iterations"] = old
CPU_CORPUS_NNZ = 20_000  # the NumPy backend runs the corpus instances up to this size


def repeats(backend):
    return 5 if backend == "cupy" else 1


def solve_checked(C, s, t, backend, layout="reverse_csr", expected=None):
    """Solve `repeats` times; certify every flow and its cut; return the value."""
    values = set()
    for _ in range(repeats(backend)):
        res = maximum_flow(C, s, t, backend=backend, layout=layout)
        cert = check_flow(C, s, t, res.flow, res.flow_value)
        assert isinstance(res.flow_value, np.int64)
        side = _backend.to_numpy(res.source_side)
        assert side.dtype == bool and side[s] and not side[t]
        # the returned source side is a minimum cut: its capacity is the value
        Cc = sp.csr_matrix(C).astype(np.int64)
        coo = Cc.tocoo()
        cut = side[coo.row] & ~side[coo.col] & (coo.row != coo.col)
        assert int(coo.data[cut].sum()) == int(res.flow_value) == cert.value
        values.add(int(res.flow_value))
    assert len(values) == 1
    value = values.pop()
    if expected is not None:
        assert value == expected
    return value


def scipy_value(C, s, t):
    return int(sp_maximum_flow(sp.csr_matrix(C).astype(np.int32), s, t, method="dinic").flow_value)


def random_graph(seed, n, density, hi, lo=0):
    rng = np.random.default_rng(seed)
    m = int(density * n)
    r = rng.integers(0, n, m)
    c = rng.integers(0, n, m)
    w = rng.integers(lo, hi, m, endpoint=True)
    s, t = (int(x) for x in rng.choice(n, 2, replace=False))
    return sp.coo_matrix((w, (r, c)), shape=(n, n)).tocsr(), s, t


# ---------------------------------------------------------------------------
# small and random graphs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_small_example(backend, layout):
    C = sp.csr_array(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    res = maximum_flow(C, 0, 2, backend=backend, layout=layout)
    assert int(res.flow_value) == 4
    assert isinstance(res.flow, sp.csr_array)
    assert res.flow.toarray().tolist() == [[0, 2, 2], [-2, 0, 2], [-2, -2, 0]]
    assert repr(res) == "MaximumFlowResult with value of 4"
    assert set(res.stats) >= {"iterations", "global_relabels", "time"}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("hi", [1, 10, 1000])
def test_random_matches_scipy(backend, layout, seed, hi):
    n = [5, 20, 60, 200, 500, 1000][seed]
    C, s, t = random_graph(seed, n, 4.0, hi, lo=1 if hi == 1 else 0)
    solve_checked(C, s, t, backend, layout, expected=scipy_value(C, s, t))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", range(3))
def test_capacities_near_2_31(backend, layout, seed):
    C, s, t = random_graph(100 + seed, 300, 5.0, 2**31 - 1, lo=2**31 - 1000)
    value = solve_checked(C, s, t, backend, layout)
    assert value > np.iinfo(np.int32).max  # beyond int32: scipy would wrap
    # int64 arithmetic: the same graph with capacities halved has half the value
    # only approximately; compare with scipy on a scaled copy instead
    small = C.copy()
    small.data = small.data // 2**16
    solve_checked(small, s, t, backend, layout, expected=scipy_value(small, s, t))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sink_unreachable(backend, layout):
    C = sp.csr_matrix(np.array([[0, 5, 0, 0], [0, 0, 3, 0], [4, 0, 0, 0], [0, 0, 7, 0]]))
    assert solve_checked(C, 0, 3, backend, layout, expected=0) == 0
    res = maximum_flow(C, 0, 3, backend=backend, layout=layout)
    assert abs(res.flow).sum() == 0 if not sp.issparse(res.flow) else abs(res.flow).sum() == 0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_parallel_antiparallel_selfloops(backend, layout):
    r = [0, 0, 0, 1, 2, 1, 1, 2, 3, 2, 1]
    c = [1, 1, 2, 2, 1, 3, 1, 3, 3, 2, 0]
    w = [2, 3, 4, 6, 1, 2, 9, 5, 8, 3, 7]
    C = sp.coo_matrix((w, (r, c)), shape=(4, 4))
    expected = scipy_value(C.tocsr(), 0, 3)
    assert solve_checked(C, 0, 3, backend, layout, expected=expected) == 7
    res = maximum_flow(C, 0, 3, backend=backend, layout=layout)
    F = res.flow
    assert (F + F.T).count_nonzero() == 0
    # pattern = input pattern plus transpose (diagonal entries kept as zeros), as scipy
    ref = sp_maximum_flow(C.tocsr().astype(np.int32), 0, 3)
    assert F.indptr.tolist() == ref.flow.indptr.tolist()
    assert F.indices.tolist() == ref.flow.indices.tolist()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("what", ["none", "zeros", "loops", "both"])
def test_dropped_arcs_set_up(backend, layout, seed, what):
    """Explicit zero capacities and self-loops (dropped by the set-up) or
    none (the arrays taken as they are): the same value as scipy, a valid
    flow that is 0 on every dropped arc."""
    rng = np.random.default_rng(seed)
    C, s, t = random_graph(seed, 60, 4.0, 9, lo=1)
    C.setdiag(0)
    C.eliminate_zeros()                          # no self-loop, no zero to begin with
    C = C.tolil()
    if what in ("zeros", "both"):
        C[s, int(rng.integers(60))] = 0          # explicit zeros, one of them out of the source
        C[int(rng.integers(60)), t] = 0
    if what in ("loops", "both"):
        for v in (0, 59, s, int(rng.integers(60))):
            C[v, v] = 5
    C = C.tocsr()
    if what in ("zeros", "both"):
        C.data[rng.integers(C.nnz, size=3)] = 0  # kept as stored zeros
    assert solve_checked(C, s, t, backend, layout, expected=scipy_value(C, s, t)) >= 0
    from gpumatch.flow import _maxflow

    g = as_csr_graph(C, "numpy", with_data=True)
    dropped = bool(((g.indices == np.repeat(np.arange(60), np.diff(g.indptr))) | (g.data <= 0)).any())
    assert dropped == (what != "none")
    K = _maxflow._kernels("cupy" if backend == "cupy" else "numpy")
    xp = _backend.get_xp("cupy" if backend == "cupy" else "numpy")
    ip, ix, cap = (xp.asarray(a) for a in (g.indptr.astype(np.int32), g.indices.astype(np.int32),
                                            g.data.astype(np.int64)))
    assert K.has_dropped(ip, ix, cap, 8, 8) == dropped


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("kind", ["matrix", "array"])
def test_formats_and_output_kind(backend, fmt, kind):
    C, s, t = random_graph(7, 50, 4.0, 20)
    A = (sp.csr_matrix(C) if kind == "matrix" else sp.csr_array(C)).asformat(fmt)
    res = maximum_flow(A, s, t, backend=backend)
    assert isinstance(res.flow, sp.csr_matrix if kind == "matrix" else sp.csr_array)
    assert res.flow.dtype == np.int64
    assert isinstance(res.source_side, np.ndarray)
    check_flow(C, s, t, res.flow, res.flow_value)
    assert int(res.flow_value) == scipy_value(C, s, t)


@pytest.mark.gpu
def test_cupyx_input_gives_cupyx_output():
    import cupy as cp
    import cupyx.scipy.sparse as cpx

    C, s, t = random_graph(8, 100, 4.0, 20)
    with pytest.raises(ValueError, match="integers"):
        maximum_flow(cpx.csr_matrix(C.astype(np.float64) * 0.5), s, t)
    for backend in ("cupy", "numpy"):
        res = maximum_flow(cpx.csr_matrix(C.astype(np.float64)), s, t, backend=backend)
        assert cpx.isspmatrix_csr(res.flow)
        assert isinstance(res.source_side, cp.ndarray)
        check_flow(C, s, t, res.flow, res.flow_value)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint32, np.uint64, np.bool_])
def test_integer_dtypes(dtype):
    C, s, t = random_graph(9, 40, 4.0, 1 if dtype == np.bool_ else 100, lo=0)
    C.data = np.minimum(C.data, 1 if dtype == np.bool_ else 100)  # duplicates were summed
    res = maximum_flow(C.astype(dtype), s, t, backend="numpy")
    assert int(res.flow_value) == scipy_value(C.astype(dtype).astype(np.int64), s, t)


@pytest.mark.parametrize("method", ["dinic", "edmonds_karp"])
def test_host_methods(method):
    C, s, t = random_graph(10, 80, 4.0, 50)
    res = maximum_flow(C, s, t, method=method)
    check_flow(C, s, t, res.flow, res.flow_value)
    assert int(res.flow_value) == scipy_value(C, s, t)
    assert res.stats["method"] == method
    side = res.source_side
    coo = C.tocoo()
    assert int(coo.data[side[coo.row] & ~side[coo.col]].sum()) == int(res.flow_value)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_minimum_cut(backend, layout):
    C, s, t = random_graph(11, 200, 4.0, 30)
    value, side, (rows, cols) = minimum_cut(C, s, t, backend=backend, layout=layout)
    rows, cols, side = (_backend.to_numpy(a) for a in (rows, cols, side))
    assert int(value) == scipy_value(C, s, t)
    assert side[rows].all() and not side[cols].any()
    assert int(np.asarray(C[rows, cols]).sum()) == int(value)


# ---------------------------------------------------------------------------
# errors (scipy's messages where scipy has them)
# ---------------------------------------------------------------------------


def test_errors():
    C = sp.csr_array(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    with pytest.raises(ValueError, match="source and sink vertices must differ"):
        maximum_flow(C, 1, 1, backend="numpy")
    with pytest.raises(ValueError, match=r"source value \(-1\) must be between 0 and 2"):
        maximum_flow(C, -1, 2, backend="numpy")
    with pytest.raises(ValueError, match=r"sink value \(3\) must be between 0 and 2"):
        maximum_flow(C, 0, 3, backend="numpy")
    with pytest.raises(ValueError, match="graph capacities must be integers"):
        maximum_flow(C.astype(float), 0, 2, backend="numpy")
    with pytest.raises(ValueError, match="graph capacities must be integers"):
        maximum_flow(sp.csr_array(np.array([[0, np.nan], [0, 0]])), 0, 1, backend="numpy")
    with pytest.raises(ValueError, match="non-negative"):
        maximum_flow(sp.csr_array(np.array([[0, -1], [0, 0]])), 0, 1, backend="numpy")
    with pytest.raises(ValueError, match="square matrix"):
        maximum_flow(sp.csr_array(np.ones((2, 3), dtype=int)), 0, 1, backend="numpy")
    with pytest.raises(ValueError, match="method is not supported"):
        maximum_flow(C, 0, 2, method="foo")
    with pytest.raises(ValueError, match="layout"):
        maximum_flow(C, 0, 2, layout="foo")
    with pytest.raises(ValueError, match="backend"):
        maximum_flow(C, 0, 2, backend="foo")
    with pytest.raises(TypeError):
        maximum_flow(np.ones((2, 2), dtype=int), 0, 1)
    with pytest.raises(TypeError):
        maximum_flow(C, 0.0, 2, backend="numpy")
    big = sp.csr_array((np.array([2**62, 2**62, 2**62], dtype=np.int64), np.array([1, 2, 3]), np.array([0, 3, 3, 3, 3])),
                       shape=(4, 4))
    with pytest.raises(OverflowError):
        maximum_flow(big, 0, 3, backend="numpy")
    huge = sp.csr_array((np.array([2**63], dtype=np.uint64), np.array([1]), np.array([0, 1, 1])), shape=(2, 2))
    with pytest.raises(OverflowError):
        maximum_flow(huge, 0, 1, backend="numpy")


# ---------------------------------------------------------------------------
# corpus and generated families
# ---------------------------------------------------------------------------


def _entries(kind):
    return [e for e in corpus_manifest() if e["kind"] == kind]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("entry", _entries("maxflow"), ids=lambda e: e["file"])
def test_corpus_maxflow(backend, corpus_dir, entry, layout):
    from gpumatch.io import read_dimacs_max

    C, s, t = read_dimacs_max(corpus_dir / entry["file"])
    assert [s, t] == entry["source_sink"]
    solve_checked(C, s, t, backend, layout, expected=entry["max_flow"])


def _unit_network(A):
    """Capacity matrix of the s -> rows -> cols -> t unit network of pattern A."""
    from gpumatch import csr

    g = as_csr_graph(A, "numpy")
    ip, ix, cap, s, t = csr.bipartite_flow_network(g.indptr, g.indices, g.shape)
    V = ip.shape[0] - 1
    return sp.csr_matrix((cap, ix, ip), shape=(V, V)), s, t, g


@pytest.mark.parametrize("entry", _entries("matching"), ids=lambda e: e["file"])
def test_corpus_matching_as_flow(backend, corpus_dir, entry):
    if backend == "numpy" and entry["nnz_stored"] > CPU_CORPUS_NNZ:
        pytest.skip("CPU subset: large corpus instances run on the GPU")
    A = read_matrix_market(corpus_dir / entry["file"])
    C, s, t, g = _unit_network(A)
    solve_checked(C, s, t, backend, expected=entry["max_matching_stored"])
    gb = as_csr_graph(A, backend)
    for _ in range(2 if backend == "cupy" else 1):
        r2c, c2r = matching_by_flow(gb)
        r2c, c2r = _backend.to_numpy(r2c), _backend.to_numpy(c2r)
        _check_matching_arrays(g, r2c, c2r, entry["max_matching_stored"])


def _check_matching_arrays(g, r2c, c2r, size):
    rows = np.nonzero(r2c >= 0)[0]
    assert rows.shape[0] == size
    assert (c2r[r2c[rows]] == rows).all()
    assert int((c2r >= 0).sum()) == size
    # every matched pair is an edge
    A = sp.csr_matrix((np.ones(g.nnz), g.indices, g.indptr), shape=g.shape)
    assert (np.asarray(A[rows, r2c[rows]]).ravel() > 0).all()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("args", [(4, 4, 1, 100, 0), (6, 3, 10, 1000, 1), (3, 12, 1, 10000, 2)])
def test_genrmf(backend, layout, args):
    from gpumatch.generators import genrmf

    C, s, t = genrmf(*args)
    solve_checked(C, s, t, backend, layout, expected=scipy_value(C, s, t))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("args", [(8, 8, 100, 0), (16, 32, 10000, 1), (32, 16, 1, 2)])
def test_washington_rlg(backend, layout, args):
    from gpumatch.generators import washington_rlg

    C, s, t = washington_rlg(*args)
    solve_checked(C, s, t, backend, layout, expected=scipy_value(C, s, t))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", range(4))
def test_matching_by_flow_random(backend, layout, seed):
    rng = np.random.default_rng(seed)
    m, n = [(30, 40), (200, 150), (500, 500), (1, 7)][seed]
    k = 3 * max(m, n)
    A = sp.coo_matrix((np.ones(k), (rng.integers(0, m, k), rng.integers(0, n, k))), shape=(m, n)).tocsr()
    size = int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum())
    g = as_csr_graph(A, backend)
    gn = as_csr_graph(A, "numpy")
    for _ in range(repeats(backend)):
        r2c, c2r = matching_by_flow(g, layout=layout)
        assert r2c.dtype == g.indices.dtype and r2c.shape == (m,) and c2r.shape == (n,)
        _check_matching_arrays(gn, _backend.to_numpy(r2c), _backend.to_numpy(c2r), size)


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_larger_random(backend, layout):
    C, s, t = random_graph(12, 20000, 6.0, 100)
    solve_checked(C, s, t, backend, layout, expected=scipy_value(C, s, t))


# ---------------------------------------------------------------------------
# hub vertices (CUDA: a block per hub, BFS levels in segments)
# ---------------------------------------------------------------------------


@pytest.fixture
def hub_degree():
    """Set ``TUNING["hub_degree"]`` for one test (restored afterwards)."""
    from gpumatch.flow import _maxflow

    old = _maxflow.TUNING.get("hub_degree")
    yield lambda d: _maxflow.TUNING.__setitem__("hub_degree", d)
    _maxflow.TUNING["hub_degree"] = old


def broom_graph(seed, leaves, hi):
    """source -> hub -> `leaves` middle vertices (some linked) -> sink: one vertex of huge degree."""
    rng = np.random.default_rng(seed)
    n = leaves + 3
    s, hub, t = 0, 1, n - 1
    mid = np.arange(2, leaves + 2)
    r = [np.array([s]), np.full(leaves, hub), mid, rng.choice(mid, leaves), mid[: leaves // 2]]
    c = [np.array([hub]), mid, np.full(leaves, t), rng.choice(mid, leaves), np.full(leaves // 2, hub)]
    w = [np.array([hi * leaves // 3]), rng.integers(1, hi, leaves, endpoint=True),
         rng.integers(0, hi, leaves, endpoint=True), rng.integers(1, hi, leaves, endpoint=True),
         rng.integers(1, hi, leaves // 2, endpoint=True)]
    C = sp.coo_matrix((np.concatenate(w), (np.concatenate(r), np.concatenate(c))), shape=(n, n)).tocsr()
    return C, s, t


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("hi", [1, 1000])
def test_hub_vertex(backend, seed, hi):
    """A vertex of several thousand arcs (above the default hub degree) and terminals of high degree."""
    C, s, t = broom_graph(seed, [3000, 5000, 9000][seed], hi)
    solve_checked(C, s, t, backend, expected=scipy_value(C, s, t))


@pytest.mark.parametrize("degree", [0, 3, 16])
@pytest.mark.parametrize("case", ["random", "genrmf", "rlg", "unit_rmat"])
def test_low_hub_degree(backend, hub_degree, degree, case):
    """With a low hub degree most vertices take the block-per-hub path: same values, valid flows."""
    from gpumatch import csr, generators

    hub_degree(degree)
    if case == "random":
        C, s, t = random_graph(7, 400, 5.0, 1000)
    elif case == "genrmf":
        C, s, t = generators.genrmf(4, 6, 10, 1000, 3)
    elif case == "rlg":
        C, s, t = generators.washington_rlg(16, 16, 10000, 4)
    else:
        A = sp.csr_matrix(generators.rmat(10, 8, seed=5))
        ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices.astype(np.int64),
                                                       A.shape)
        V = ip.shape[0] - 1
        C = sp.csr_matrix((cap, ix, ip), shape=(V, V))
    solve_checked(C, s, t, backend, expected=scipy_value(C, s, t))


def _launcher_network(case, seed):
    """The random, genrmf or broom network (`case`) of the launcher-mode tests."""
    from gpumatch import generators

    if case == "random":
        return random_graph(seed, 3000, 4.0, 100)
    if case == "genrmf":
        return generators.genrmf(6, 20, 10, 1000, 5)
    return broom_graph(4, 4000, 50)


def _kernel_network(case, seed, rng):
    """The random, genrmf (a deep BFS: about 200 levels) or broom network
    (`case`) of the kernel tests as an int64 CSR without duplicates or
    zeros, with a random flow from `rng` (about half the arcs carry some)
    and the residual distances to the sink: ``(C, s, t, flow, dist)``."""
    from gpumatch import generators

    if case == "random":
        C, s, t = random_graph(seed, 3000, 3.0, 100)
    elif case == "genrmf":
        C, s, t = generators.genrmf(5, 40, 10, 1000, 6)
    else:
        C, s, t = broom_graph(2, 5000, 50)
    C = sp.csr_matrix(C).astype(np.int64)
    C.sum_duplicates()
    C.eliminate_zeros()
    flow = (C.data * rng.random(C.nnz) * (rng.random(C.nnz) < 0.5)).astype(np.int64)
    return C, s, t, flow, _residual_distances(C, flow, t)


@pytest.mark.gpu
@pytest.mark.parametrize("loop_max", [0, 4, 2048])
@pytest.mark.parametrize("case", ["random", "genrmf", "broom"])
def test_bfs_loop_modes(monkeypatch, loop_max, case):
    """The persistent one-block BFS, the multi-block levels, and their hand-overs give the same values
    (with the cooperative BFS off, which otherwise runs every level)."""
    pytest.importorskip("cupy")
    from gpumatch.flow import _maxflow

    monkeypatch.setitem(_maxflow.TUNING, "bfs_loop", loop_max)
    monkeypatch.setitem(_maxflow.TUNING, "bfs_coop", False)
    C, s, t = _launcher_network(case, 8)
    solve_checked(C, s, t, "cupy", expected=scipy_value(C, s, t))


@pytest.mark.gpu
@pytest.mark.parametrize("modes", [(0, 1 << 20), (2048, 64), (2048, 0)], ids=["coop", "coop_short", "loop"])
@pytest.mark.parametrize("case", ["random", "genrmf", "broom"])
def test_discharge_coop_modes(monkeypatch, hub_degree, modes, case):
    """Solves whose discharge iterations run in the cooperative launch
    (over every list, or over lists of at most 64 vertices with multi-block
    launches past that) or in the one-block loop where it is off certify
    the maximum flow scipy finds (with a hub that can hold excess, the
    cooperative kernel stays off and the loop and launches serve)."""
    pytest.importorskip("cupy")
    from gpumatch.flow import _maxflow

    loop_max, coop_max = modes
    monkeypatch.setitem(_maxflow.TUNING, "discharge_loop", loop_max)
    monkeypatch.setitem(_maxflow.TUNING, "discharge_coop", coop_max)
    C, s, t = _launcher_network(case, 9)
    if case == "broom":
        hub_degree(64)
    solve_checked(C, s, t, "cupy", expected=scipy_value(C, s, t))


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["random", "genrmf", "broom"])
@pytest.mark.parametrize("k", [1, 3, 40])
def test_discharge_coop_kernel(hub_degree, monkeypatch, case, k):
    """`k` iterations of the cooperative discharge from a preflow with
    exact heights keep what every discharge keeps: flows within their
    capacities, each vertex's excess its initial excess plus its net
    inflow (never negative), heights that only rise, and every vertex
    left active (excess, below `hlimit`, not a terminal) on the list
    returned; on a network with a hub the kernel is not used."""
    cp = pytest.importorskip("cupy")
    from gpumatch.flow import _maxflow, _pr_cupy

    monkeypatch.setitem(_maxflow.TUNING, "discharge_coop", 1 << 20)
    rng = np.random.default_rng(k + 11)
    C, s, t, flow, dist = _kernel_network(case, 13, rng)
    if case == "broom":
        hub_degree(64)
    V = C.shape[0]
    rows = np.repeat(np.arange(V), np.diff(C.indptr))
    hlimit = V
    height = np.where(dist < 0, hlimit, dist).astype(np.int32)
    excess0 = np.zeros(V, dtype=np.int64)
    excess0[rng.choice(V, size=V // 10, replace=False)] = rng.integers(1, 500, V // 10)
    excess0[[s, t]] = 0
    L = _maxflow._build_rcsr(cp, cp.asarray(C.indptr.astype(np.int64)), cp.asarray(C.indices.astype(np.int64)),
                             cp.asarray(C.data), V)
    L["flow"][...] = cp.asarray(flow)
    ctx = _maxflow._prepare_kernels("cupy", L, "rcsr", V, C.nnz, (s, t))
    assert (ctx.k_discharge_coop is None) == (case == "broom")
    st = {"height": cp.asarray(height), "excess": cp.asarray(excess0)}
    active = lambda ex, h: (ex > 0) & (h < hlimit) & (np.arange(V) != s) & (np.arange(V) != t)  # noqa: E731
    work = cp.asarray(np.flatnonzero(active(excess0, height)), dtype=ctx.idt)
    out, ran = _pr_cupy.discharge(ctx, st, work, 0, t, s, hlimit, k)
    assert 1 <= ran <= k and (ran == k or out.shape[0] == 0 or case == "broom")
    f = cp.asnumpy(L["flow"])
    ex = cp.asnumpy(st["excess"])
    h = cp.asnumpy(st["height"])
    assert ((f >= 0) & (f <= C.data)).all()
    d = f - flow
    net = np.bincount(C.indices, d, minlength=V) - np.bincount(rows, d, minlength=V)
    inner = (np.arange(V) != s) & (np.arange(V) != t)
    np.testing.assert_array_equal(ex[inner], excess0[inner] + net[inner].astype(np.int64))
    assert (ex[inner] >= 0).all()
    assert ((h >= height) & (h <= hlimit)).all()       # a relabel only lifts
    left = np.flatnonzero(active(ex, h))
    assert np.isin(left, cp.asnumpy(out)).all()
    assert np.count_nonzero(d) > 0


def _residual_distances(C, flow, target):
    """Residual BFS distances to `target` by scipy (-1: unreachable): v -> w is
    residual where an arc v -> w has spare capacity or an arc w -> v carries flow."""
    from scipy.sparse.csgraph import shortest_path

    C = sp.csr_matrix(C)
    V = C.shape[0]
    rows = np.repeat(np.arange(V), np.diff(C.indptr))
    fwd = C.data - flow > 0
    back = flow > 0
    r = np.concatenate([rows[fwd], C.indices[back]])
    c = np.concatenate([C.indices[fwd], rows[back]])
    R = sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(V, V))
    d = shortest_path(R.T.tocsr(), unweighted=True, indices=target)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@pytest.mark.gpu
@pytest.mark.parametrize("coop", [True, False], ids=["coop", "levels"])
@pytest.mark.parametrize("case", ["random", "genrmf", "broom"])
@pytest.mark.parametrize("watched", [0, 1, 40])
def test_bfs_run_heights(hub_degree, monkeypatch, coop, case, watched):
    """``bfs_run`` (the cooperative one-launch BFS, or launches per level)
    labels exactly the residual distances scipy finds; with a watch list it
    stops once every watched vertex has a height, at most one level after
    the NumPy twin, with every vertex of that distance or less labelled."""
    cp = pytest.importorskip("cupy")
    from gpumatch.flow import _maxflow, _pr_cupy, _pr_numpy

    monkeypatch.setitem(_maxflow.TUNING, "bfs_coop", coop)
    rng = np.random.default_rng(watched + 7)
    C, s, t, flow, dist = _kernel_network(case, 11, rng)
    if case == "broom":
        hub_degree(64)                                     # the hub's arcs go by segments
    V = C.shape[0]
    ip, ix = C.indptr.astype(np.int64), C.indices.astype(np.int64)
    L = _maxflow._build_rcsr(cp, cp.asarray(ip), cp.asarray(ix), cp.asarray(C.data), V)
    L["flow"][...] = cp.asarray(flow)
    ctx = _maxflow._prepare_kernels("cupy", L, "rcsr", V, C.nnz, (s, t))
    assert (ctx.k_bfs_coop is not None) == coop
    Ln = _maxflow._build_rcsr(np, ip, ix, C.data, V)
    Ln["flow"][...] = flow
    ctxn = _pr_numpy.prepare(Ln, "rcsr")
    reach = np.flatnonzero(dist > 0)
    watch = rng.choice(reach, size=min(watched, reach.shape[0]), replace=False) if watched else None
    h = cp.full(V, -1, dtype=cp.int32)
    h[t] = 0
    hn = np.full(V, -1, dtype=np.int32)
    hn[t] = 0
    start = np.array([t])
    _, ran, stopped = _pr_cupy.bfs_run(ctx, {"height": h}, cp.asarray(start, dtype=ctx.idt), 0,
                                       None if watch is None else cp.asarray(watch), 8)
    _, ran_n, stopped_n = _pr_numpy.bfs_run(ctxn, {"height": hn}, start.astype(Ln["indptr"].dtype), 0, watch)
    h = cp.asnumpy(h)
    if watch is None:
        # the last level finds nothing (launches per level count a group's
        # launches after the frontier ran empty too)
        assert not stopped and (ran == dist.max() + 1 if coop else ran >= dist.max() + 1)
        np.testing.assert_array_equal(h, dist)
        np.testing.assert_array_equal(hn, dist)
        return
    # the levels the watch needs: up to the farthest watched vertex (the
    # frontier then holds the vertices of that distance: never empty)
    need = int(dist[watch].max())
    assert (ran_n, stopped_n) == (need, True)
    assert (h[watch] >= 0).all()
    assert ran >= need and stopped == (ran <= dist.max())
    if coop:
        assert ran <= need + 1
    within = dist <= ran
    np.testing.assert_array_equal(h[within], dist[within])
    assert (h[~within] == -1).all()


@pytest.mark.parametrize("case", ["genrmf", "rlg", "no_watch"])
def test_pairs_stop_the_adaptive_period(backend, monkeypatch, case):
    """``TUNING["pairs_share"]``: on GENRMF, whose frames' arcs come in
    anti-parallel pairs that the preflow runs round, the period stops
    adapting at the first check past ``pairs_after`` and stays at
    ``pairs_freq`` for the rest of the solve (both phases); on RLG (no
    pairs) and with the watch off it adapts to the end.  The flows are
    maximum either way."""
    from gpumatch import generators
    from gpumatch.flow import _maxflow

    monkeypatch.setitem(_maxflow.TUNING, "freq", 7)
    monkeypatch.setitem(_maxflow.TUNING, "pairs_after", 3)
    monkeypatch.setitem(_maxflow.TUNING, "pairs_freq", 50)
    monkeypatch.setitem(_maxflow.TUNING, "relabel_time_ratio", None)
    monkeypatch.setitem(_maxflow.TUNING, "host_finish", None)  # the device's own period is under test
    if case == "no_watch":
        monkeypatch.setitem(_maxflow.TUNING, "pairs_share", None)
    calls = []

    def spy(freq, t_gr, t_dis):
        calls.append(freq)
        return freq + 1

    monkeypatch.setattr(_maxflow, "_next_relabel_period", spy)
    C, s, t = (generators.washington_rlg(16, 32, 100, seed=2) if case == "rlg"
               else generators.genrmf(6, 20, 10, 1000, 5))
    if backend == "cupy":
        import cupyx.scipy.sparse as cpx

        C = cpx.csr_matrix(sp.csr_matrix(C).astype(np.float64))
    res = maximum_flow(C, s, t, backend=backend)
    C_host = sp.csr_matrix(C.get() if backend == "cupy" else C).astype(np.int64)
    assert int(res.flow_value) == scipy_value(C_host, s, t)
    check_flow(C_host, s, t, res.flow, res.flow_value)
    relabels = res.stats["global_relabels"]
    if case == "genrmf":
        assert res.stats["pairs_fixed"] and res.stats["relabel_period"] == 50
        assert 0 < len(calls) < relabels
        if backend == "numpy":   # (on the GPU the share at a given relabel varies with the races)
            # adapted only until the first check (after the 3rd relabel), fixed after it
            assert len(calls) <= 3 < relabels
    else:
        # (the spy adds one per call; the period reported is phase 1's last)
        assert not res.stats["pairs_fixed"] and 7 < res.stats["relabel_period"] < 50
        assert len(calls) >= 4


@pytest.mark.gpu
def test_a_long_loop_of_small_gpu_flows_in_one_process(tmp_path):
    # As the loop of small matchings (test_matching.py): a thousand single
    # calls, each certified, in a child process.  Random capacitated
    # networks of 100..1000 arcs, source 0, sink V-1.
    certified_loop_in_child("""
        k = int(rng.integers(100, 1001))
        V = int(rng.integers(max(k // 6, 3), max(k // 3, 4)))
        u, v = rng.integers(0, V, k), rng.integers(0, V, k)
        C = sp.coo_matrix((rng.integers(1, 100, k).astype(np.int64), (u, v)), shape=(V, V)).tocsr()
        C.sum_duplicates()
        r = gpumatch.maximum_flow(C, 0, V - 1, backend="cupy")
        check_flow(C, 0, V - 1, r.flow, r.flow_value)
    """, 1000, tmp_path)

"""The compiled CPU engine (``backend="numba"``): every public function, checked by certificates.

Matchings are checked with ``check_matching`` (a König cover of the same
size) and their size against scipy's Hopcroft–Karp, or, on meshes and grids
(where Hopcroft–Karp can take minutes), against scipy's maximum flow on the
unit network; flows with ``check_flow`` (valid, and a cut of equal capacity)
and their value against scipy's Dinic.  The solvers are checked after every
batch of changes.  No timings are asserted.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

import gpumatch
from gpumatch import _backend, csr
from gpumatch import generators as G
from gpumatch.flow import MaxFlowSolver, maximum_flow, minimum_cut
from gpumatch.matching import MatchingSolver, bipartite_matching, maximum_bipartite_matching, structural_rank
from gpumatch.testing import check_flow, check_matching

from _dynamic_common import _apply, _capacity_batch  # noqa: E402  (tests/ is on sys.path)

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


def _seed(*words):
    return zlib.crc32("/".join(words).encode())


def _unit_network(A):
    A = sp.csr_matrix(A)
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr, A.indices, A.shape)
    V = ip.shape[0] - 1
    return sp.csr_matrix((np.asarray(cap), np.asarray(ix), np.asarray(ip)), shape=(V, V)), s, t


def _scipy_value(C, s, t):
    C = sp.csr_matrix(C, dtype=np.int64, copy=True)
    C.setdiag(0)
    C.eliminate_zeros()
    return int(sp_maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value)


def _reference_size(A, mesh):
    """scipy's matching size, from the unit network's max flow on meshes and grids."""
    if mesh:
        return _scipy_value(*_unit_network(A))
    return int((sp_matching(sp.csr_matrix(A), perm_type="row") >= 0).sum())


MATCHING_GRAPHS = {
    "random": (lambda: G.random_bipartite(3000, 3000, 3, seed=1), False),
    "random_sparse": (lambda: G.random_bipartite(2000, 2000, 1.5, seed=2), False),
    "rect_tall": (lambda: G.random_bipartite(3000, 500, 2, seed=3), False),
    "rect_wide": (lambda: G.random_bipartite(400, 3000, 2, seed=4), False),
    "delaunay": (lambda: G.delaunay(4000, seed=5), True),
    "grid": (lambda: G.grid(50, 60, drop=0.1, seed=6), True),
    "rmat": (lambda: G.rmat(12, 8, seed=7), False),
    "triangular_perm": (lambda: G.triangular(300, permute=True, seed=8), False),
    "bidiagonal_perm": (lambda: G.bidiagonal(5000, permute=True, seed=9), False),
    "empty_rows": (lambda: sp.csr_matrix((50, 40), dtype=np.int8), False),
}


@pytest.fixture(scope="module", params=sorted(MATCHING_GRAPHS))
def matching_case(request):
    make, mesh = MATCHING_GRAPHS[request.param]
    A = sp.csr_matrix(make())
    return request.param, A, _reference_size(A, mesh)


@pytest.mark.parametrize("perm_type", ["row", "column"])
def test_maximum_bipartite_matching(matching_case, perm_type):
    _, A, ref = matching_case
    perm = maximum_bipartite_matching(A, perm_type, backend="numba")
    assert perm.dtype == np.int32 and isinstance(perm, np.ndarray)
    assert perm.shape[0] == (A.shape[1] if perm_type == "row" else A.shape[0])
    check_matching(A, perm, perm_type, expected_size=ref)


@pytest.mark.parametrize("init", ["greedy", "karp_sipser", "none"])
def test_bipartite_matching_certificate(matching_case, init):
    _, A, ref = matching_case
    res = bipartite_matching(A, backend="numba", init=init, certificate=True)
    assert res.size == ref == int((res.col_to_row >= 0).sum())
    assert res.stats["backend"] == "numba"
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    check_matching(A, res.row_to_col, "column", expected_size=ref)
    # the König cover: as many vertices as pairs, and every edge has an endpoint in it
    cr, cc = res.cover_rows, res.cover_cols
    assert int(cr.sum() + cc.sum()) == res.size
    coo = A.tocoo()
    assert (cr[coo.row] | cc[coo.col]).all()


def test_structural_rank(matching_case):
    _, A, ref = matching_case
    assert structural_rank(A, backend="numba") == ref


def test_warm_start_from_a_partial_matching(matching_case):
    name, A, ref = matching_case
    full = maximum_bipartite_matching(A, "row", backend="numba")
    rng = np.random.default_rng(_seed(name))
    part = full.copy()
    part[rng.random(part.shape[0]) < 0.5] = -1
    for init in ("none", "greedy"):
        res = bipartite_matching(A, backend="numba", initial=part, init=init)
        assert res.size == ref
    res = bipartite_matching(A, backend="numba", initial=bipartite_matching(A, backend="numba"))
    assert res.size == ref


def test_matching_explicit_zeros_are_edges():
    A = sp.csr_matrix((np.array([0.0, 0.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2))
    assert structural_rank(A, backend="numba") == 2


def test_matching_by_flow_method():
    A = G.random_bipartite(500, 400, 3, seed=11)
    perm = maximum_bipartite_matching(A, method="flow", backend="numba")
    check_matching(A, perm, expected_size=_reference_size(A, False))


def test_int64_graphs():
    """An int64 index tuple (kept int64 by the engine's dtype dispatch) gives the same sizes."""
    A = sp.csr_matrix(G.random_bipartite(300, 300, 3, seed=12))
    g = (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.shape)
    ref = _reference_size(A, False)
    assert structural_rank(g, backend="numba") == ref


# ---------------------------------------------------------------------------
# maximum flow
# ---------------------------------------------------------------------------


def _random_network(seed, V, density, maxcap):
    rng = np.random.default_rng(seed)
    M = sp.random(V, V, density=density, random_state=seed, format="csr")
    M.data = rng.integers(0, maxcap + 1, M.nnz).astype(np.float64)
    return sp.csr_matrix(M.astype(np.int64))


FLOW_NETWORKS = {
    "genrmf": lambda: G.genrmf(5, 6, 1, 100, seed=1),
    "rlg": lambda: G.washington_rlg(8, 16, 100, seed=2),
    "unit_random": lambda: _unit_network(G.random_bipartite(800, 700, 3, seed=3)),
    "unit_delaunay": lambda: _unit_network(G.delaunay(1500, seed=4)),
    "unit_grid": lambda: _unit_network(G.grid(30, 30, drop=0.1, seed=5)),
}


@pytest.mark.parametrize("name", sorted(FLOW_NETWORKS))
@pytest.mark.parametrize("layout", ["reverse_csr", "bcsr"])
def test_maximum_flow_families(name, layout):
    C, s, t = FLOW_NETWORKS[name]()
    res = maximum_flow(C, s, t, backend="numba", layout=layout)
    assert res.flow.dtype == np.int64 and res.stats["backend"] == "numba"
    cert = check_flow(C, s, t, res.flow, int(res.flow_value))
    assert int(res.flow_value) == _scipy_value(C, s, t)
    # the reported cut: the source side cannot reach the sink, and its arcs carry the value
    side = res.source_side
    assert side[s] and not side[t]
    Cc = sp.csr_matrix(C).tocoo()
    cross = side[Cc.row] & ~side[Cc.col]
    assert int(Cc.data[cross].sum()) == int(res.flow_value) == int(cert.value)


@pytest.fixture
def flow_tuning():
    """Set keys of the CPU flow engine's ``TUNING`` for one test."""
    from gpumatch.flow import _cpu

    saved = dict(_cpu.TUNING)
    yield _cpu.TUNING.update
    _cpu.TUNING.clear()
    _cpu.TUNING.update(saved)


@pytest.mark.parametrize("rotate", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_maximum_flow_random_small(seed, rotate, flow_tuning):
    flow_tuning(rotate=rotate)
    rng = np.random.default_rng(seed)
    V = int(rng.integers(2, 40))
    C = _random_network(seed, V, float(rng.uniform(0.02, 0.5)), int(rng.choice([1, 5, 1000])))
    s, t = (int(x) for x in rng.choice(V, size=2, replace=False))
    res = maximum_flow(C, s, t, backend="numba")
    check_flow(C, s, t, res.flow, int(res.flow_value))
    assert int(res.flow_value) == _scipy_value(C, s, t)


@pytest.mark.parametrize("keep_zero", [True, False])
@pytest.mark.parametrize("rotate", [True, False])
def test_residual_layout(rotate, keep_zero):
    """Forward slots first (the row's order, rotated or not), then reverse slots by tail; partners agree."""
    from gpumatch.flow import _cpu

    C = _random_network(7, 60, 0.1, 5)
    C.setdiag(3)       # self-loops get no slot
    C = sp.csr_matrix(C)
    C.sort_indices()
    V = C.shape[0]
    ip, ix, cap = C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data.astype(np.int64)
    flow = np.minimum(cap, 1)
    bptr, head, rev, resid, slot = _cpu.build_residual(V, ip, ix, cap, flow, keep_zero, rotate)
    A = bptr[V]
    assert np.array_equal(rev[rev], np.arange(A))
    tail = np.repeat(np.arange(V), np.diff(bptr))
    assert np.array_equal(head[rev], tail)
    rows = np.repeat(np.arange(V), np.diff(ip))
    kept = (ix != rows) & ((cap > 0) | keep_zero)
    assert np.array_equal(slot >= 0, kept)
    f = slot[kept]
    assert np.array_equal(tail[f], rows[kept]) and np.array_equal(head[f], ix[kept])
    assert np.array_equal(resid[f], cap[kept] - flow[kept]) and np.array_equal(resid[rev[f]], flow[kept])
    is_fwd = np.zeros(A, bool)
    is_fwd[f] = True
    rotated = 0
    for u in range(V):
        fw = is_fwd[bptr[u]:bptr[u + 1]]
        m = int(fw.sum())
        assert fw[:m].all() and not fw[m:].any()      # forward slots first
        assert np.all(np.diff(tail[rev[bptr[u] + m:bptr[u + 1]]]) >= 0)  # reverse slots by tail
        out = ix[kept & (rows == u)]
        k = (u * 2654435761) % m if rotate and m else 0
        assert np.array_equal(head[bptr[u]:bptr[u] + m], np.roll(out, k))
        rotated += k > 0
    assert (rotated > 0) == rotate


def test_maximum_flow_matches_numpy_result_shape():
    C, s, t = G.genrmf(3, 4, 1, 50, seed=9)
    a = maximum_flow(sp.csr_array(C), s, t, backend="numba")
    b = maximum_flow(sp.csr_array(C), s, t, backend="numpy")
    assert type(a.flow) is type(b.flow) and a.flow.shape == b.flow.shape
    assert int(a.flow_value) == int(b.flow_value)
    assert isinstance(a.flow_value, np.int64)
    m = maximum_flow(sp.csr_matrix(C), s, t, backend="numba")
    assert isinstance(m.flow, sp.csr_matrix)


def test_maximum_flow_huge_capacities():
    """int64 capacities beyond int32 (scipy's limit), anti-parallel arcs and self-loops."""
    big = 2**40
    C = sp.csr_matrix(np.array([[5, big, big, 0], [3, 0, 1, big], [0, 2, 0, big], [0, 0, 0, 0]], dtype=np.int64))
    res = maximum_flow(C, 0, 3, backend="numba")
    assert int(res.flow_value) == 2 * big
    check_flow(C, 0, 3, res.flow, int(res.flow_value))


def test_minimum_cut():
    C, s, t = G.washington_rlg(6, 10, 50, seed=3)
    value, side, (rows, cols) = minimum_cut(C, s, t, backend="numba")
    assert int(value) == _scipy_value(C, s, t)
    C = sp.csr_matrix(C)
    assert int(np.asarray(C[rows, cols]).sum()) == int(value)
    assert side[rows].all() and not side[cols].any()


@pytest.mark.parametrize("case", ["overflow", "square", "float", "negative", "terminals", "same", "dense"])
def test_errors_match_the_numpy_backend(case):
    """Validation is shared: the Numba backend raises what NumPy raises, before any work."""
    big = np.iinfo(np.int64).max
    graphs = {
        "overflow": (sp.csr_matrix(np.array([[0, big, big], [0, 0, 1], [0, 0, 0]], dtype=np.int64)), 0, 2),
        "square": (sp.csr_matrix(np.ones((2, 3), dtype=np.int64)), 0, 1),
        "float": (sp.csr_matrix(np.array([[0, 1.5], [0, 0]])), 0, 1),
        "negative": (sp.csr_matrix(np.array([[0, -1], [0, 0]])), 0, 1),
        "terminals": (sp.csr_matrix(np.array([[0, 1], [0, 0]])), 0, 5),
        "same": (sp.csr_matrix(np.array([[0, 1], [0, 0]])), 1, 1),
        "dense": (np.array([[0, 1], [0, 0]]), 0, 1),
    }
    C, s, t = graphs[case]
    errs = []
    for backend in ("numpy", "numba"):
        with pytest.raises((ValueError, TypeError, OverflowError)) as info:
            maximum_flow(C, s, t, backend=backend)
        errs.append((type(info.value), str(info.value)))
    assert errs[0] == errs[1]


@pytest.mark.parametrize("fn", ["maximum_bipartite_matching", "structural_rank", "bipartite_matching"])
@pytest.mark.parametrize("case", ["dense", "bad_indptr", "bad_index", "bsr"])
def test_matching_errors_match_the_numpy_backend(fn, case):
    A = sp.csr_matrix(np.eye(3))
    graphs = {
        "dense": np.eye(3),
        "bad_indptr": (np.array([0, 2, 1, 3]), np.array([0, 1, 2]), (3, 3)),
        "bad_index": (np.array([0, 1, 2, 3]), np.array([0, 1, 7]), (3, 3)),
        "bsr": A.tobsr(),
    }
    errs = []
    for backend in ("numpy", "numba"):
        with pytest.raises((ValueError, TypeError)) as info:
            getattr(gpumatch, fn)(graphs[case], backend=backend)
        errs.append((type(info.value), str(info.value)))
    assert errs[0] == errs[1]


# ---------------------------------------------------------------------------
# the pseudoflow engine itself
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_warm_solve_from_any_pseudoflow(seed):
    """Arbitrary arc flows within capacity (excess and deficits anywhere)
    become a maximum flow."""
    from gpumatch.flow import _cpu

    rng = np.random.default_rng(seed)
    V = int(rng.integers(3, 30))
    C = _random_network(seed + 100, V, float(rng.uniform(0.05, 0.4)), 20)
    C.setdiag(0)
    C.eliminate_zeros()
    C.sort_indices()
    s, t = 0, V - 1
    cap = C.data.astype(np.int64)
    flow = (rng.random(cap.shape[0]) * (cap + 1)).astype(np.int64)
    flow = np.minimum(flow, cap)
    rows = np.repeat(np.arange(V), np.diff(C.indptr))
    excess = np.zeros(V, dtype=np.int64)
    np.add.at(excess, C.indices, flow)
    np.add.at(excess, rows, -flow)
    state = {"indptr": C.indptr, "indices": C.indices}
    side, stats = _cpu.warm_solve(state, cap, flow, excess, s, t)
    assert not excess.any()
    F = sp.csr_matrix((flow, C.indices, C.indptr), shape=(V, V))
    value = int(F[:, t].sum() - F[t, :].sum())
    check_flow(C, s, t, (F - F.T).tocsr(), value)
    assert value == _scipy_value(C, s, t)
    assert side[s] and not side[t]


# ---------------------------------------------------------------------------
# solvers
# ---------------------------------------------------------------------------


SOLVER_NETWORKS = {
    "rlg": (lambda: G.washington_rlg(6, 8, 20, seed=1), 20),
    "genrmf": (lambda: G.genrmf(4, 5, 1, 30, seed=2), 30),
    "unit_bipartite": (lambda: _unit_network(G.random_bipartite(60, 50, 3, seed=3)), 1),
}


@pytest.mark.parametrize("name", sorted(SOLVER_NETWORKS))
@pytest.mark.parametrize("kind", ["inc", "dec", "mixed"])
def test_max_flow_solver_batches(name, kind):
    make, maxcap = SOLVER_NETWORKS[name]
    C, s, t = make()
    C = sp.csr_matrix(C, dtype=np.int64)
    rng = np.random.default_rng(_seed(name, kind))
    solver = MaxFlowSolver(C, s, t, backend="numba", rebuild_fraction=1.0)
    assert solver.backend == "numba"
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    check_flow(C, s, t, res.flow, int(res.flow_value))
    for size in [1, 2, max(1, C.nnz // 100), max(1, C.nnz // 10), 1, C.nnz // 2, 3]:
        r, c, new = _capacity_batch(rng, C, kind, size, maxcap)
        solver.update_capacities(r, c, new)
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["mode"] == "dynamic"
        check_flow(C, s, t, res.flow, int(res.flow_value))
        assert int(res.flow_value) == _scipy_value(C, s, t)
        side = res.source_side
        Cc = C.tocoo()
        cross = side[Cc.row] & ~side[Cc.col] & (Cc.row != Cc.col)
        assert side[s] and not side[t] and int(Cc.data[cross].sum()) == int(res.flow_value)
        assert solver.solve().stats["mode"] == "cached"
    assert (solver.capacities() != C).nnz == 0


def test_max_flow_solver_rebuild_and_bad_updates():
    C, s, t = G.genrmf(3, 4, 1, 20, seed=5)
    C = sp.csr_matrix(C, dtype=np.int64)
    solver = MaxFlowSolver(C, s, t, backend="numba", rebuild_fraction=0.0)
    v0 = int(solver.solve().flow_value)
    coo = C.tocoo()
    u, v = next((u, v) for u in range(C.shape[0]) for v in range(C.shape[0]) if C[u, v] == 0 and (u, v) != (0, 0))
    with pytest.raises(ValueError, match="not an arc"):
        solver.update_capacities([u], [v], [1])
    with pytest.raises(ValueError):
        solver.update_capacities([coo.row[0]], [coo.col[0]], [-3])
    assert int(solver.solve().flow_value) == v0
    solver.update_capacities(coo.row[:3], coo.col[:3], [0, 0, 0])
    res = solver.solve()
    assert res.stats["mode"] == "scratch" and res.stats["scratch_reason"] == "rebuild_fraction"
    check_flow(_apply(C, coo.row[:3], coo.col[:3], np.zeros(3, np.int64)), s, t, res.flow, int(res.flow_value))


@pytest.mark.parametrize("name", ["random", "delaunay", "rect_wide"])
@pytest.mark.parametrize("warm_init", ["none", "karp_sipser"])
def test_matching_solver_batches(name, warm_init):
    make, mesh = MATCHING_GRAPHS[name]
    A = sp.csr_matrix(make(), dtype=np.float64)
    A.data[:] = 1
    rng = np.random.default_rng(_seed(name, warm_init))
    solver = MatchingSolver(A, backend="numba", rebuild_fraction=1.0, warm_init=warm_init)
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    check_matching(A, res.col_to_row, expected_size=_reference_size(A, mesh))
    m, n = A.shape
    for step in range(6):
        coo = A.tocoo()
        k = max(1, coo.nnz // [1000, 100, 10][step % 3])
        if step % 2 == 0:     # remove edges, matched ones among them
            pick = rng.choice(coo.nnz, size=k, replace=False)
            r, c = coo.row[pick], coo.col[pick]
            solver.remove_edges(r, c)
            A = A.tolil()
            A[r, c] = 0
            A = A.tocsr()
            A.eliminate_zeros()
        else:                 # add edges that are not there
            r = rng.integers(0, m, size=3 * k)
            c = rng.integers(0, n, size=3 * k)
            keys = np.unique(r * n + c)
            keys = keys[np.asarray(A[keys // n, keys % n]).ravel() == 0][:k]
            r, c = keys // n, keys % n
            solver.add_edges(r, c)
            A = (A + sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=A.shape)).tocsr()
        res = solver.solve()
        assert res.stats["mode"] == "dynamic"
        check_matching(A, res.col_to_row, expected_size=_reference_size(A, mesh))
        check_matching(A, solver.matching("column"), "column")
        assert solver.num_edges == A.nnz


def test_matching_solver_rebuild_fraction():
    A = G.random_bipartite(300, 300, 3, seed=21)
    solver = MatchingSolver(A, backend="numba", rebuild_fraction=0.0)
    solver.solve()
    coo = sp.coo_matrix(A)
    solver.remove_edges(coo.row[:5], coo.col[:5])
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    with pytest.raises(ValueError, match="not in the graph"):
        solver.remove_edges(coo.row[:1], coo.col[:1])


def test_auto_is_numba_without_a_gpu():
    if _backend.cupy_available():
        pytest.skip("a CUDA device is present")
    A = G.random_bipartite(5000, 5000, 3, seed=1)   # (past matching._small.SMALL_MAX: small ones go to SciPy)
    assert bipartite_matching(A).stats["backend"] == "numba"
    C, s, t = G.genrmf(12, 12, 1, 10, seed=1)   # (past flow._scipy.SMALL_MAX: small ones go to SciPy)
    assert maximum_flow(C, s, t).stats["backend"] == "numba"

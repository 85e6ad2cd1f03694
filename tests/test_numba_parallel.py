"""The multi-threaded MS-BFS (``matching/_cpu_parallel.py``) and the compiled CSR helpers of the CPU engine.

It is off by default; these tests switch it on for every graph
(``parallel_min_nnz = 0``) and split every BFS level between the threads
(``parallel_level_min = 1``) so that its races happen on small inputs too.
Each matching is checked with ``check_matching`` and a König cover of the
same size, and its size against scipy (its maximum flow on meshes).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import _backend
from gpumatch import generators as G
from gpumatch.matching import MatchingSolver, bipartite_matching
from gpumatch.testing import check_matching

from test_numba import _reference_size  # noqa: E402  (tests/ is on sys.path)

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


GRAPHS = {
    "random": (lambda: G.random_bipartite(3000, 3000, 3, seed=11), False),
    "random_sparse": (lambda: G.random_bipartite(3000, 3000, 1.3, seed=12), False),
    "rect_tall": (lambda: G.random_bipartite(3000, 600, 2, seed=13), False),
    "rect_wide": (lambda: G.random_bipartite(500, 3000, 2, seed=14), False),
    "delaunay": (lambda: G.delaunay(4000, seed=15), True),
    "grid": (lambda: G.grid(50, 60, drop=0.1, seed=16), True),
    "rmat": (lambda: G.rmat(12, 8, seed=17), False),
    "triangular_perm": (lambda: G.triangular(300, permute=True, seed=18), False),
    "bidiagonal_perm": (lambda: G.bidiagonal(3000, permute=True, seed=19), False),
    "empty_rows": (lambda: sp.csr_matrix((50, 40), dtype=np.int8), False),
}


@pytest.fixture
def parallel():
    import numba

    from gpumatch.matching import _cpu

    saved = dict(_cpu.TUNING)
    threads = numba.get_num_threads()
    _cpu.TUNING.update(parallel_min_nnz=0, parallel_level_min=1)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    yield
    _cpu.TUNING.update(saved)
    numba.set_num_threads(threads)


@pytest.mark.parametrize("init", ["karp_sipser", "none"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_ms_bfs_matching(name, init, parallel):
    make, mesh = GRAPHS[name]
    A = sp.csr_matrix(make())
    ref = _reference_size(A, mesh)
    res = bipartite_matching(A, backend="numba", init=init, certificate=True)
    assert res.size == ref
    if A.nnz:
        assert "MS-BFS" in res.stats["algorithm"]
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    cr, cc = res.cover_rows, res.cover_cols
    assert int(cr.sum() + cc.sum()) == res.size
    coo = A.tocoo()
    assert (cr[coo.row] | cc[coo.col]).all()


def test_ms_bfs_one_thread_and_serial_levels():
    """The same search without a parallel region (one slice per level)."""
    from gpumatch.matching import _cpu, _cpu_parallel

    A = sp.csr_matrix(G.random_bipartite(2000, 2000, 2, seed=20))
    Acsc = A.tocsc()
    m, n = A.shape
    cptr, cind = Acsc.indptr.astype(np.int32), Acsc.indices.astype(np.int32)
    for nt, level_min in ((1, 1), (2, 10**9)):
        mu_row = np.full(m, -1, dtype=np.int32)
        mu_col = np.full(n, -1, dtype=np.int32)
        _cpu.greedy(m, n, cptr, cind, mu_row, mu_col)
        raw = np.zeros(3, dtype=np.int64)
        _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, level_min)
        check_matching(A, mu_col, "row", expected_size=_reference_size(A, False))
        assert raw[0] >= 1


def test_dynamic_solver_with_ms_bfs(parallel):
    A = sp.csr_matrix(G.random_bipartite(1500, 1500, 2.5, seed=21))
    solver = MatchingSolver(A, backend="numba")
    solver.solve()
    coo = A.tocoo()
    rng = np.random.default_rng(21)
    drop = rng.choice(coo.nnz, size=200, replace=False)
    keep = np.ones(coo.nnz, dtype=bool)
    keep[drop] = False
    B = sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=A.shape)
    solver.remove_edges(coo.row[drop], coo.col[drop])
    res = solver.solve()
    check_matching(B, res.col_to_row, "row", expected_size=_reference_size(B, False))


# ---------------------------------------------------------------------------
# compiled CSR helpers (gpumatch/_cpu_csr.py)
# ---------------------------------------------------------------------------

TRANSPOSE_CASES = {
    "random": lambda: G.random_bipartite(700, 500, 4, seed=30),
    "tall": lambda: G.random_bipartite(900, 30, 2, seed=31),
    "wide": lambda: G.random_bipartite(30, 900, 2, seed=32),
    "empty_rows_cols": lambda: sp.block_diag([G.random_bipartite(50, 60, 3, seed=33), sp.csr_matrix((7, 9))]),
    "no_edges": lambda: sp.csr_matrix((5, 4)),
    "no_rows": lambda: sp.csr_matrix((0, 4)),
    "no_cols": lambda: sp.csr_matrix((4, 0)),
}


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", sorted(TRANSPOSE_CASES))
def test_transpose(name, dtype):
    from gpumatch import _cpu_csr

    A = sp.csr_matrix(TRANSPOSE_CASES[name]())
    A.sort_indices()
    m, n = A.shape
    rptr, rind = A.indptr.astype(dtype), A.indices.astype(dtype)
    ref = A.tocsc()
    ref.sort_indices()
    outs = [_cpu_csr.transpose_serial(m, n, rptr, rind), _cpu_csr.transpose(m, n, rptr, rind)]
    outs += [_cpu_csr.transpose_parallel(m, n, rptr, rind, nt) for nt in (1, 2, 3, 8)]
    for cptr, cind in outs:
        assert cptr.dtype == dtype and cind.dtype == dtype
        assert np.array_equal(cptr, ref.indptr) and np.array_equal(cind, ref.indices)


def test_make_state_transposes_with_the_compiled_counting_sort():
    """The Numba backend's state: the CSC of the graph, rows ascending, in the state's dtype."""
    from gpumatch._validation import as_csr_graph
    from gpumatch.matching import _driver

    A = sp.csr_matrix(G.random_bipartite(400, 300, 3, seed=36))
    ref = A.tocsc()
    ref.sort_indices()
    for dtype in (np.int32, np.int64):
        st = _driver.make_state(as_csr_graph((A.indptr.astype(dtype), A.indices.astype(dtype), A.shape), "numba"))
        assert st.cptr.dtype == st.idx and st.cind.dtype == st.idx
        assert np.array_equal(st.cptr, ref.indptr) and np.array_equal(st.cind, ref.indices)


def test_pattern_summary_matches_numpy():
    """The compiled summary equals gpumatch.csr.pattern_summary, malformed pointers included."""
    from gpumatch import _cpu_csr, csr

    rng = np.random.default_rng(34)
    for _ in range(400):
        m = int(rng.integers(0, 6))
        nnz = int(rng.integers(0, 10))
        if rng.random() < 0.7:
            indptr = np.sort(rng.integers(-1, nnz + 2, m + 1))
        else:
            indptr = rng.integers(-2, nnz + 3, m + 1)
        if rng.random() < 0.5:
            indptr[0] = 0
        indices = rng.integers(-3, 8, nnz)
        for dp in (np.int32, np.int64, np.uint16):
            for di in (np.int32, np.int64, np.int8):
                p, i = indptr.astype(dp), indices.astype(di)
                assert _cpu_csr.pattern_summary(p, i) == csr.pattern_summary(p, i), (p, i)
    A = sp.csr_matrix(G.random_bipartite(500, 400, 3, seed=35))
    assert _cpu_csr.pattern_summary(A.indptr, A.indices) == csr.pattern_summary(A.indptr, A.indices)

"""Tests of gpumatch.generators: shapes, determinism, promised structure."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

from gpumatch import generators as G
from gpumatch.testing import check_flow

PATTERNS = {
    "random_bipartite": lambda seed: G.random_bipartite(300, 200, 3.0, seed=seed),
    "delaunay": lambda seed: G.delaunay(300, seed=seed),
    "rmat": lambda seed: G.rmat(8, 4, seed=seed),
    "rmat_permuted": lambda seed: G.rmat(8, 4, seed=seed, permute=True),
    "grid": lambda seed: G.grid(15, 12, drop=0.3, seed=seed),
    "block_triangular": lambda seed: G.block_triangular(400, seed=seed),
    "banded_thinned": lambda seed: G.banded(300, 3, density=0.5, seed=seed),
    "banded_permuted": lambda seed: G.banded(300, 2, permute=True, seed=seed),
    "staircase_permuted": lambda seed: G.staircase(300, 200, width=3, permute=True, seed=seed),
    "arrowhead_permuted": lambda seed: G.arrowhead(300, width=2, permute=True, seed=seed),
    "block_diagonal_thinned": lambda seed: G.block_diagonal(300, 7, density=0.5, permute=True, seed=seed),
}
NETWORKS = {
    "genrmf": lambda seed: G.genrmf(4, 5, 1, 100, seed=seed),
    "washington_rlg": lambda seed: G.washington_rlg(10, 8, 100, seed=seed),
    "path_network": lambda seed: G.path_network(200, 1000, seed=seed),
}


def arrays(A):
    return A.indptr, A.indices, A.data


def canonical(A):
    """Sorted indices, no duplicates, int32 indices."""
    B = A.copy()
    B.sum_duplicates()
    return (A.has_sorted_indices and A.indices.dtype == np.int32 and A.indptr.dtype == np.int32
            and B.nnz == A.nnz)


# ---------------------------------------------------------------------------
# common properties
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_determinism(name):
    make = PATTERNS[name]
    A, B, C = make(5), make(5), make(6)
    assert isinstance(A, sp.csr_matrix) and canonical(A)
    assert A.dtype == np.float64 and np.all(A.data == 1.0)
    assert all(np.array_equal(x, y) for x, y in zip(arrays(A), arrays(B)))
    assert A.shape != C.shape or not all(np.array_equal(x, y) for x, y in zip(arrays(A), arrays(C)))


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_network_determinism_and_max_flow(name):
    make = NETWORKS[name]
    (A, s, t), (B, s2, t2), (C, _, _) = make(1), make(1), make(2)
    assert isinstance(A, sp.csr_matrix) and canonical(A) and A.dtype == np.int64
    assert (s, t) == (s2, t2) and s != t
    assert all(np.array_equal(x, y) for x, y in zip(arrays(A), arrays(B)))
    assert not all(np.array_equal(x, y) for x, y in zip(arrays(A), arrays(C)))
    assert A.diagonal().sum() == 0 and A.data.min() >= 1
    res = maximum_flow(A.astype(np.int32), s, t)
    assert res.flow_value > 0
    check_flow(A, s, t, res.flow, res.flow_value)


def test_seed_none_runs():
    assert G.random_bipartite(10, 10, 2.0, seed=None).shape == (10, 10)


# ---------------------------------------------------------------------------
# random_bipartite
# ---------------------------------------------------------------------------


def test_random_bipartite_degrees():
    m, n, d = 20000, 15000, 4.0
    A = G.random_bipartite(m, n, d, seed=0)
    assert A.shape == (m, n)
    mean = A.nnz / m
    expected = n * (1 - np.exp(-d / n))
    assert abs(mean - expected) < 0.05
    # Poisson: isolated rows with probability exp(-d)
    isolated = np.count_nonzero(np.diff(A.indptr) == 0) / m
    assert abs(isolated - np.exp(-d)) < 0.01


def test_random_bipartite_low_degree_leaves_isolated_vertices():
    A = G.random_bipartite(1000, 1000, 0.5, seed=1)
    assert np.count_nonzero(np.diff(A.indptr) == 0) > 0
    assert np.count_nonzero(np.bincount(A.indices, minlength=1000) == 0) > 0


@pytest.mark.parametrize("m, n", [(0, 0), (0, 5), (5, 0)])
def test_random_bipartite_empty_sides(m, n):
    A = G.random_bipartite(m, n, 3.0)
    assert A.shape == (m, n) and A.nnz == 0


def test_random_bipartite_zero_degree():
    assert G.random_bipartite(10, 10, 0.0).nnz == 0


# ---------------------------------------------------------------------------
# delaunay
# ---------------------------------------------------------------------------


def test_delaunay_structure():
    A, pts = G.delaunay(2000, seed=3, return_points=True)
    assert A.shape == (2000, 2000) and pts.shape == (2000, 2)
    assert (A != A.T).nnz == 0
    assert A.diagonal().sum() == 0
    deg = np.diff(A.indptr)
    assert deg.min() >= 2
    # planar triangulation: E = 3n - 3 - h, mean degree just below 6
    assert 5.8 < A.nnz / 2000 < 6.0
    # edges are short: no edge longer than the unit square's diagonal, most much shorter
    coo = A.tocoo()
    length = np.hypot(*(pts[coo.row] - pts[coo.col]).T)
    assert np.median(length) < 0.05


def test_delaunay_return_points_matches():
    A = G.delaunay(100, seed=8)
    B, pts = G.delaunay(100, seed=8, return_points=True)
    assert (A != B).nnz == 0
    assert np.array_equal(pts, np.random.default_rng(8).random((100, 2)))


# ---------------------------------------------------------------------------
# rmat
# ---------------------------------------------------------------------------


def test_rmat_shape_and_skew():
    A = G.rmat(12, 8, seed=0)
    nv = 4096
    assert A.shape == (nv, nv)
    assert 0.5 * 8 * nv < A.nnz <= 8 * nv
    deg = np.diff(A.indptr)
    assert deg.max() > 20 * deg.mean()  # power-law-like: vertex 0 is a hub
    assert deg[0] == deg.max()


def test_rmat_uniform_parameters_look_uniform():
    A = G.rmat(10, 16, a=0.25, b=0.25, c=0.25, seed=1)
    deg = np.diff(A.indptr)
    assert deg.max() < 3 * deg.mean()


def test_rmat_quadrant_a_only_gives_one_self_loop():
    A = G.rmat(5, 3, a=1.0, b=0.0, c=0.0, seed=0)
    assert A.nnz == 1 and A[0, 0] == 1  # every edge is (0, 0): self-loops kept, duplicates merged


def test_rmat_scale_zero():
    A = G.rmat(0, 4)
    assert A.shape == (1, 1) and A.nnz == 1


# ---------------------------------------------------------------------------
# grid
# ---------------------------------------------------------------------------


def test_grid_full():
    A = G.grid(7, 5)
    assert A.shape == (35, 35)
    assert A.nnz == 2 * (7 * 4 + 6 * 5)
    assert (A != A.T).nnz == 0 and A.diagonal().sum() == 0
    assert A[0, 1] == 1 and A[0, 5] == 1 and A[4, 5] == 0  # (0,4) and (1,0) are not neighbours
    assert np.diff(A.indptr).max() == 4


def test_grid_drop():
    full = G.grid(100, 100).nnz
    A = G.grid(100, 100, drop=0.25, seed=2)
    assert (A != A.T).nnz == 0
    assert abs(A.nnz / full - 0.75) < 0.02
    assert G.grid(10, 10, drop=1.0).nnz == 0


@pytest.mark.parametrize("nx, ny", [(0, 0), (1, 1), (1, 6), (0, 4)])
def test_grid_degenerate(nx, ny):
    A = G.grid(nx, ny)
    assert A.shape == (nx * ny, nx * ny)
    undirected = nx * (ny - 1) + (nx - 1) * ny if nx and ny else 0
    assert A.nnz == 2 * undirected


# ---------------------------------------------------------------------------
# genrmf
# ---------------------------------------------------------------------------


def test_genrmf_structure():
    a, b, c1, c2 = 4, 6, 5, 20
    C, s, t = G.genrmf(a, b, c1, c2, seed=4)
    frame = a * a
    nv = frame * b
    assert C.shape == (nv, nv) and (s, t) == (0, nv - 1)
    coo = C.tocoo()
    fu, fv = coo.row // frame, coo.col // frame
    inside = fu == fv
    # in-frame: grid neighbours both ways, capacity c2*a*a
    assert np.count_nonzero(inside) == b * 2 * 2 * a * (a - 1)
    assert np.all(coo.data[inside] == c2 * a * a)
    # between frames: only k -> k+1, one arc per vertex, a permutation, capacities in [c1, c2]
    between = ~inside
    assert np.all(fv[between] == fu[between] + 1)
    assert np.count_nonzero(between) == frame * (b - 1)
    assert np.all((coo.data[between] >= c1) & (coo.data[between] <= c2))
    assert np.array_equal(np.bincount(coo.row[between], minlength=nv)[: frame * (b - 1)], np.ones(frame * (b - 1)))
    assert np.array_equal(np.bincount(coo.col[between], minlength=nv)[frame:], np.ones(frame * (b - 1)))


def test_genrmf_single_frame():
    C, s, t = G.genrmf(2, 1, 1, 3)
    assert C.shape == (4, 4) and (s, t) == (0, 3)
    assert C.nnz == 8


# ---------------------------------------------------------------------------
# washington_rlg
# ---------------------------------------------------------------------------


def test_washington_rlg_structure():
    rows, cols, max_cap = 12, 9, 50
    C, s, t = G.washington_rlg(rows, cols, max_cap, seed=7)
    nv = rows * cols + 2
    assert C.shape == (nv, nv) and (s, t) == (0, nv - 1)
    # source and sink arcs
    assert np.array_equal(C[s].indices, np.arange(1, rows + 1))
    assert np.all(C[s].data == 3 * max_cap)
    CT = C.T.tocsr()
    assert np.array_equal(np.sort(CT[t].indices), np.arange(1 + rows * (cols - 1), 1 + rows * cols))
    assert np.all(CT[t].data == 3 * max_cap)
    assert CT[s].nnz == 0 and C[t].nnz == 0
    # level arcs: to the next level only, at most 3 per vertex, capacities summed over repeats
    inner = C[1:1 + rows * (cols - 1)].tocoo()
    tail = inner.row + 1
    assert np.all((inner.col - 1) // rows == (tail - 1) // rows + 1)
    per_vertex = np.bincount(inner.row, minlength=rows * (cols - 1))
    assert per_vertex.min() >= 1 and per_vertex.max() <= 3
    assert inner.data.min() >= 1 and inner.data.max() <= 3 * max_cap
    assert np.mean(per_vertex) > 2.5


def test_washington_rlg_one_level():
    C, s, t = G.washington_rlg(3, 1, 10)
    assert C.shape == (5, 5)
    res = maximum_flow(C.astype(np.int32), s, t)
    assert res.flow_value == 3 * 30


# ---------------------------------------------------------------------------
# structured families (issue 61): rank, shape and block structure
# ---------------------------------------------------------------------------


def unit_rank(A):
    """Structural rank from scipy's maximum_flow on the unit network s -> rows -> columns -> t."""
    A = sp.csr_matrix(A)
    m, n = A.shape
    coo = A.tocoo()
    s, t = m + n, m + n + 1
    tails = np.concatenate([np.full(m, s), coo.row, m + np.arange(n)])
    heads = np.concatenate([np.arange(m), m + coo.col, np.full(n, t)])
    N = sp.csr_matrix((np.ones(tails.size, dtype=np.int32), (tails, heads)), shape=(m + n + 2,) * 2)
    return int(maximum_flow(N, s, t).flow_value)


# (make(seed), documented structural rank)
STRUCTURED = {
    "block_triangular": (lambda seed: G.block_triangular(3000, seed=seed), 3000),
    "block_triangular_big_blocks": (lambda seed: G.block_triangular(2000, max_block=200, coupling=5, seed=seed), 2000),
    "block_triangular_identity": (lambda seed: G.block_triangular(500, max_block=1, seed=seed), 500),
    "banded": (lambda seed: G.banded(2000, 4, permute=True, seed=seed), 2000),
    "banded_sparse": (lambda seed: G.banded(2000, 4, density=0.1, permute=True, seed=seed), 2000),
    "banded_empty_band": (lambda seed: G.banded(2000, 4, density=0.0, permute=True, seed=seed), 2000),
    "staircase_tall": (lambda seed: G.staircase(3000, 2000, permute=True, seed=seed), 2000),
    "staircase_tall_width1": (lambda seed: G.staircase(3001, 997, width=1, permute=True, seed=seed), 997),
    "staircase_wide": (lambda seed: G.staircase(1500, 2000, width=1, permute=True, seed=seed), 1500),
    "staircase_square": (lambda seed: G.staircase(2000, 2000, width=3, permute=True, seed=seed), 2000),
    "arrowhead": (lambda seed: G.arrowhead(2000, width=3, permute=True, seed=seed), 2000),
    "block_diagonal": (lambda seed: G.block_diagonal(2003, 10, permute=True, seed=seed), 2003),
    "block_diagonal_thinned": (lambda seed: G.block_diagonal(2003, 10, density=0.2, permute=True, seed=seed), 2003),
}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_structured_rank_is_documented(name):
    make, rank = STRUCTURED[name]
    A = make(3)
    assert canonical(A) and A.dtype == np.float64 and np.all(A.data == 1.0)
    assert unit_rank(A) == rank


def test_block_triangular_rank_larger():
    A = G.block_triangular(30_000, seed=5)
    assert A.shape == (30_000, 30_000) and 3.7 < A.nnz / 30_000 < 4.0
    assert unit_rank(A) == 30_000


def test_block_triangular_blocks_are_the_fine_blocks():
    """The blocks returned are the strongly connected components of the matrix
    taken through its perfect matching, and they are ordered triangularly."""
    from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

    n = 5000
    A, rb, cb = G.block_triangular(n, max_block=12, coupling=3, seed=9, return_blocks=True)
    nb = rb.max() + 1
    assert rb.shape == cb.shape == (n,) and rb.min() == 0 and cb.max() == nb - 1
    sizes = np.bincount(rb, minlength=nb)
    assert np.array_equal(sizes, np.bincount(cb, minlength=nb))
    assert sizes.min() >= 1 and sizes.max() <= 12 and nb > n / 12
    coo = A.tocoo()
    assert np.all(cb[coo.col] <= rb[coo.row])        # block lower triangular
    below = cb[coo.col] < rb[coo.row]
    assert np.count_nonzero(below) > 2 * n            # coupling entries: about 3 per row outside block 0
    # digraph on rows: i -> mate(j) for every entry (i, j); its SCCs are the fine blocks
    mate = maximum_bipartite_matching(A, perm_type="row")
    assert np.all(mate >= 0)
    D = sp.csr_matrix((np.ones(A.nnz), (coo.row, mate[coo.col])), shape=(n, n))
    ncomp, label = connected_components(D, directed=True, connection="strong")
    assert ncomp == nb
    # the same partition: each component is exactly one block
    pairs = np.unique(np.stack([label, rb]), axis=1)
    assert pairs.shape[1] == nb


def test_block_triangular_unpermuted_shape():
    n = 300
    A, rb, cb = G.block_triangular(n, max_block=6, coupling=1, permute=False, seed=2, return_blocks=True)
    assert np.array_equal(rb, cb) and np.all(np.diff(rb) >= 0)  # consecutive blocks in order
    assert np.all(A.diagonal() == 1)
    upper = sp.triu(A, 1).tocoo()
    # above the diagonal only the cycle entries (i, i + 1) inside a block: L - 1 per block of L rows
    assert np.all(upper.col == upper.row + 1) and np.all(rb[upper.row] == rb[upper.col])
    assert upper.nnz == n - (rb.max() + 1)


def test_block_triangular_return_blocks_same_matrix():
    A = G.block_triangular(777, seed=4)
    B, rb, cb = G.block_triangular(777, seed=4, return_blocks=True)
    assert (A != B).nnz == 0
    C, rb2, cb2 = G.block_triangular(777, seed=4, permute=False, return_blocks=True)
    assert C.nnz == A.nnz and np.array_equal(np.bincount(rb), np.bincount(rb2))


def test_block_triangular_no_coupling_is_block_diagonal():
    A, rb, cb = G.block_triangular(1000, coupling=0, seed=1, return_blocks=True)
    coo = A.tocoo()
    assert np.all(rb[coo.row] == cb[coo.col])
    sizes = np.bincount(rb)
    # diagonal + cycle: two entries per row, one in a block of a single row
    assert A.nnz == 2 * 1000 - np.count_nonzero(sizes == 1)


@pytest.mark.parametrize("make", [
    lambda: G.block_triangular(0),
    lambda: G.banded(0, 3),
    lambda: G.staircase(0, 5),
    lambda: G.staircase(5, 0),
    lambda: G.arrowhead(0),
    lambda: G.block_diagonal(0, 4),
])
def test_structured_empty(make):
    A = make()
    assert A.nnz == 0 and 0 in A.shape


def test_banded_counts_and_band():
    n, k = 1000, 3
    A = G.banded(n, k)
    assert A.nnz == n * (2 * k + 1) - k * (k + 1)
    coo = A.tocoo()
    assert np.abs(coo.row - coo.col).max() == k
    assert (G.banded(5, 10) != sp.csr_matrix(np.ones((5, 5)))).nnz == 0  # band wider than the matrix
    assert (G.banded(50, 0) != sp.identity(50, format="csr")).nnz == 0
    thin = G.banded(20_000, 2, density=0.25, seed=1)
    assert np.all(thin.diagonal() == 1)
    assert abs((thin.nnz - 20_000) / (4 * 20_000) - 0.25) < 0.02


def test_banded_permutation_keeps_degrees():
    A, P = G.banded(500, 2), G.banded(500, 2, permute=True, seed=3)
    assert A.nnz == P.nnz
    assert np.array_equal(np.sort(np.diff(A.indptr)), np.sort(np.diff(P.indptr)))
    assert (A != P).nnz > 0


def test_staircase_shapes():
    assert (G.staircase(300, 300) != G.bidiagonal(300)).nnz == 0
    A = G.staircase(3000, 1000, width=2)
    assert np.array_equal(np.diff(A.indptr)[:-3], np.full(2997, 2))
    assert np.all(np.diff(A.indices[A.indptr[:-1]]) >= 0)  # start columns step down
    W = G.staircase(1000, 3000, width=4)
    assert np.all(np.diff(W.indices[W.indptr[:-1]]) == 3)


def test_arrowhead_counts():
    n, w = 1000, 3
    A = G.arrowhead(n, width=w)
    assert A.nnz == n + w * (2 * n - w - 1)
    deg = np.diff(A.indptr)
    assert np.all(deg[-w:] == n) and np.all(deg[:-w] == w + 1)
    assert np.all(np.bincount(A.indices, minlength=n)[-w:] == n)
    assert G.arrowhead(10, width=0).nnz == 10 and G.arrowhead(4, width=9).nnz == 16


def test_cycles_counts_and_degrees():
    A = G.cycles(1000, 7, permute=True, seed=3)
    assert A.shape == (1000, 1000) and A.nnz == 2000
    assert np.all(np.diff(A.indptr) == 2) and np.all(np.bincount(A.indices, minlength=1000) == 2)
    B = G.cycles(5, 5)           # ranges of one row: single entries
    assert (B != sp.identity(5, format="csr")).nnz == 0
    assert G.cycles(6, 3).nnz == 12 and G.cycles(0, 0).shape == (0, 0)
    # one cycle: the graph is connected
    from scipy.sparse.csgraph import connected_components
    C = G.cycles(500, 1, permute=True)
    assert connected_components(sp.bmat([[None, C], [C.T, None]]), directed=False)[0] == 1
    for bad in ((5, 0), (5, 6), (-1, 1)):
        with pytest.raises(ValueError):
            G.cycles(*bad)


def test_block_diagonal_counts():
    A = G.block_diagonal(103, 10)
    assert A.nnz == 10 * 100 + 3 * 3
    coo = A.tocoo()
    assert np.all(coo.row // 10 == coo.col // 10)
    thin = G.block_diagonal(20_000, 8, density=0.5, seed=2)
    assert np.all(thin.diagonal() == 1)
    assert abs((thin.nnz - 20_000) / (7 * 20_000) - 0.5) < 0.02
    assert (G.block_diagonal(30, 1) != sp.identity(30, format="csr")).nnz == 0


def test_path_network_is_one_path():
    n = 5000
    C, s, t = G.path_network(n, 50, seed=6)
    assert C.shape == (n, n) and C.nnz == n - 1 and s != t
    outdeg, indeg = np.diff(C.indptr), np.bincount(C.indices, minlength=n)
    assert outdeg[t] == 0 and indeg[s] == 0
    assert np.all(np.delete(outdeg, t) == 1) and np.all(np.delete(indeg, s) == 1)
    assert C.data.min() >= 1 and C.data.max() <= 50
    # walking from s visits every vertex once and ends at t
    v, seen = s, 1
    while v != t:
        v = C.indices[C.indptr[v]]
        seen += 1
    assert seen == n
    res = maximum_flow(C.astype(np.int32), s, t)
    assert res.flow_value == C.data.min()
    C2, s2, t2 = G.path_network(6, permute=False)
    assert (s2, t2) == (0, 5) and np.array_equal(C2.indices, np.arange(1, 6))


def test_structured_generators_are_fast_at_a_million_rows():
    import time

    t0 = time.perf_counter()
    A = G.block_triangular(1_000_000, seed=1)
    assert A.shape == (1_000_000, 1_000_000)
    B = G.banded(1_000_000, 2, permute=True)
    assert B.nnz == 5 * 1_000_000 - 6
    assert time.perf_counter() - t0 < 30  # a generous bound on a loaded 2-core machine


# ---------------------------------------------------------------------------
# argument validation
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, exc, match", [
    (lambda: G.random_bipartite(-1, 3, 2.0), ValueError, "m must be at least 0"),
    (lambda: G.random_bipartite(3, -2, 2.0), ValueError, "n must be at least 0"),
    (lambda: G.random_bipartite(3, 3, -1.0), ValueError, "degree"),
    (lambda: G.random_bipartite(3.5, 3, 1.0), TypeError, "m must be an integer"),
    (lambda: G.random_bipartite(3, 3, float("nan")), ValueError, "degree"),
    (lambda: G.delaunay(2), ValueError, "npoints must be at least 3"),
    (lambda: G.rmat(-1, 4), ValueError, "scale"),
    (lambda: G.rmat(41, 4), ValueError, "scale must be at most 40"),
    (lambda: G.rmat(4, -1), ValueError, "edge_factor"),
    (lambda: G.rmat(4, 4, a=0.5, b=0.4, c=0.3), ValueError, "a \\+ b \\+ c must be at most 1"),
    (lambda: G.rmat(4, 4, a=1.5), ValueError, "a must be in"),
    (lambda: G.grid(-1, 3), ValueError, "nx"),
    (lambda: G.grid(3, 3, drop=1.5), ValueError, "drop"),
    (lambda: G.grid(3, 3, drop=True), TypeError, "drop"),
    (lambda: G.genrmf(0, 3, 1, 2), ValueError, "a must be at least 1"),
    (lambda: G.genrmf(1, 1, 1, 2), ValueError, "at least 2 vertices"),
    (lambda: G.genrmf(2, 2, 5, 2), ValueError, "c1 must not exceed c2"),
    (lambda: G.genrmf(2, 2, -1, 2), ValueError, "c1"),
    (lambda: G.washington_rlg(0, 3, 5), ValueError, "rows"),
    (lambda: G.washington_rlg(3, 0, 5), ValueError, "cols"),
    (lambda: G.washington_rlg(3, 3, 0), ValueError, "max_cap"),
    (lambda: G.block_triangular(-1), ValueError, "n must be at least 0"),
    (lambda: G.block_triangular(10, max_block=0), ValueError, "max_block must be at least 1"),
    (lambda: G.block_triangular(10, coupling=-1), ValueError, "coupling must be at least 0"),
    (lambda: G.block_triangular(10.0), TypeError, "n must be an integer"),
    (lambda: G.banded(10, -1), ValueError, "bandwidth must be at least 0"),
    (lambda: G.banded(10, 2, density=1.5), ValueError, "density"),
    (lambda: G.staircase(-1, 3), ValueError, "m must be at least 0"),
    (lambda: G.staircase(3, 3, width=0), ValueError, "width must be at least 1"),
    (lambda: G.arrowhead(5, width=-1), ValueError, "width must be at least 0"),
    (lambda: G.block_diagonal(5, 0), ValueError, "block must be at least 1"),
    (lambda: G.block_diagonal(5, 2, density=-0.1), ValueError, "density"),
    (lambda: G.path_network(1), ValueError, "n must be at least 2"),
    (lambda: G.path_network(5, 0), ValueError, "max_cap must be at least 1"),
])
def test_argument_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

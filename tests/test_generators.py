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
}
NETWORKS = {
    "genrmf": lambda seed: G.genrmf(4, 5, 1, 100, seed=seed),
    "washington_rlg": lambda seed: G.washington_rlg(10, 8, 100, seed=seed),
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
])
def test_argument_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()

"""Random and mesh families of :mod:`gpumatch.generators`: bipartite graphs,
Delaunay meshes, R-MAT graphs, grids."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._common import _check_int, _check_real, _pattern


# ---------------------------------------------------------------------------
# matching families
# ---------------------------------------------------------------------------


def random_bipartite(m: int, n: int, degree: float, seed: int | None = 0) -> sp.csr_matrix:
    """Random bipartite graph with Poisson row degrees.

    Row ``i`` draws ``k_i ~ Poisson(degree)`` columns uniformly at random,
    with replacement; repeated columns are merged.  Rows with ``k_i = 0`` and
    columns nobody drew stay isolated, so the graph is usually structurally
    deficient for small `degree` (an isolated row appears with probability
    ``exp(-degree)``).

    Parameters
    ----------
    m, n : int
        Number of rows and columns (non-negative).
    degree : float
        Mean number of draws per row (non-negative).  After merging repeats
        the mean row degree is ``n * (1 - exp(-degree / n))``, slightly less
        than `degree`.
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``m x n`` float64 pattern of ones.

    Examples
    --------
    >>> from gpumatch.generators import random_bipartite
    >>> A = random_bipartite(1000, 800, 3.0, seed=1)
    >>> A.shape, bool(2.5 < A.nnz / 1000 < 3.5)
    ((1000, 800), True)
    """
    m = _check_int("m", m)
    n = _check_int("n", n)
    degree = _check_real("degree", degree, lo=0.0)
    rng = np.random.default_rng(seed)
    if n == 0 or m == 0:
        return sp.csr_matrix((m, n), dtype=np.float64)
    counts = rng.poisson(degree, size=m)
    rows = np.repeat(np.arange(m, dtype=np.int64), counts)
    cols = rng.integers(0, n, size=rows.shape[0], dtype=np.int64)
    return _pattern(rows, cols, m, n)


def _morton_key(pts, bits=16):
    """Z-order (Morton) key of points in the unit square."""
    scale = (1 << bits) - 1
    x = np.clip(pts[:, 0] * scale, 0, scale).astype(np.int64)
    y = np.clip(pts[:, 1] * scale, 0, scale).astype(np.int64)
    key = np.zeros(pts.shape[0], dtype=np.int64)
    for bit in range(bits):
        key |= ((x >> bit) & 1) << (2 * bit) | ((y >> bit) & 1) << (2 * bit + 1)
    return key


def delaunay(npoints: int, seed: int | None = 0, *, return_points: bool = False
             ) -> sp.csr_matrix | tuple[sp.csr_matrix, np.ndarray]:
    """Adjacency of the Delaunay triangulation of random points.

    The points are uniform in the unit square; two vertices are adjacent when
    they share a triangle edge.  Delaunay meshes are planar, with mean degree
    just below 6, and are a hard case for augmenting-path matchers.  Vertex
    ``i`` is the ``i``-th point drawn.  The time is dominated by Qhull
    (:class:`scipy.spatial.Delaunay`): about ten seconds for a million points.

    Parameters
    ----------
    npoints : int
        Number of points (at least 3).
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.
    return_points : bool, optional
        Also return the ``(npoints, 2)`` coordinates.

    Returns
    -------
    A : scipy.sparse.csr_matrix
        Symmetric ``npoints x npoints`` float64 pattern of ones, no diagonal.
    points : ndarray, optional
        The coordinates, when `return_points` is True.

    Examples
    --------
    >>> from gpumatch.generators import delaunay
    >>> A = delaunay(500, seed=0)
    >>> A.shape, (A != A.T).nnz, int(A.diagonal().sum())
    ((500, 500), 0, 0)
    """
    from scipy.spatial import Delaunay

    npoints = _check_int("npoints", npoints, minimum=3)
    rng = np.random.default_rng(seed)
    pts = rng.random((npoints, 2))
    # Qhull runs faster on spatially sorted input; vertex i is still point i.
    order = np.argsort(_morton_key(pts), kind="stable")
    tri = order[Delaunay(pts[order]).simplices]
    a = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    b = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    A = _pattern(np.concatenate([a, b]), np.concatenate([b, a]), npoints, npoints)
    return (A, pts) if return_points else A


def rmat(scale: int, edge_factor: int, a: float = 0.57, b: float = 0.19, c: float = 0.19, seed: int | None = 0, *,
         permute: bool = False) -> sp.csr_matrix:
    """R-MAT (recursive matrix) directed graph.

    Each of the ``edge_factor * 2**scale`` edges picks one quadrant of the
    adjacency matrix per bit level, with probabilities ``a`` (top left),
    ``b`` (top right), ``c`` (bottom left) and ``d = 1 - a - b - c`` (bottom
    right); the quadrant choices give the bits of the row and the column.
    The defaults are the Graph500 parameters.  Duplicate edges are merged;
    self-loops are kept (as the Graph500 generator does), so the matrix may
    have diagonal entries.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices (0 to 40).
    edge_factor : int
        Edges drawn per vertex before merging duplicates.
    a, b, c : float
        Quadrant probabilities; each in [0, 1] with ``a + b + c <= 1``.
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.
    permute : bool, optional
        Relabel the vertices by a random permutation, so that vertex id and
        degree are uncorrelated (Graph500 does this).  Default False.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``2**scale`` square float64 pattern of ones; row = tail, column = head.

    Examples
    --------
    >>> from gpumatch.generators import rmat
    >>> A = rmat(10, 8, seed=3)
    >>> A.shape, bool(A.nnz <= 8 * 1024)
    ((1024, 1024), True)
    """
    scale = _check_int("scale", scale)
    if scale > 40:
        raise ValueError(f"scale must be at most 40, got {scale}")
    edge_factor = _check_int("edge_factor", edge_factor)
    a = _check_real("a", a, 0.0, 1.0)
    b = _check_real("b", b, 0.0, 1.0)
    c = _check_real("c", c, 0.0, 1.0)
    if a + b + c > 1.0 + 1e-12:
        raise ValueError(f"a + b + c must be at most 1, got {a + b + c!r}")
    nv = 1 << scale
    nedges = edge_factor * nv
    rng = np.random.default_rng(seed)
    rows = np.zeros(nedges, dtype=np.int64)
    cols = np.zeros(nedges, dtype=np.int64)
    ab, abc = a + b, a + b + c
    for level in range(scale):
        u = rng.random(nedges, dtype=np.float32)
        bit = np.int64(1) << np.int64(level)
        # quadrants: [0, a) top left, [a, a+b) top right, [a+b, a+b+c) bottom left, rest bottom right
        rows |= np.where(u >= ab, bit, 0)
        cols |= np.where(((u >= a) & (u < ab)) | (u >= abc), bit, 0)
    if permute:
        perm = rng.permutation(nv)
        rows, cols = perm[rows], perm[cols]
    return _pattern(rows, cols, nv, nv)


def grid(nx: int, ny: int, drop: float = 0.0, seed: int | None = 0) -> sp.csr_matrix:
    """Adjacency of a 4-neighbour grid graph, with edges dropped at random.

    Vertex ``(x, y)``, ``0 <= x < nx``, ``0 <= y < ny``, has index
    ``x * ny + y`` and is joined to ``(x + 1, y)`` and ``(x, y + 1)``.  Each
    undirected edge is removed independently with probability `drop`.  Grids
    are a known slow case for scipy's Hopcroft-Karp matching.

    Parameters
    ----------
    nx, ny : int
        Grid dimensions (non-negative).
    drop : float
        Probability in [0, 1] of removing each edge.
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    scipy.sparse.csr_matrix
        Symmetric ``nx*ny x nx*ny`` float64 pattern of ones, no diagonal.

    Examples
    --------
    >>> from gpumatch.generators import grid
    >>> A = grid(3, 4)
    >>> A.shape, A.nnz // 2  # 3*3 + 2*4 undirected edges
    ((12, 12), 17)
    """
    nx = _check_int("nx", nx)
    ny = _check_int("ny", ny)
    drop = _check_real("drop", drop, 0.0, 1.0)
    rng = np.random.default_rng(seed)
    nv = nx * ny
    ids = np.arange(nv, dtype=np.int64).reshape(nx, ny)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    if drop > 0.0:
        keep = rng.random(u.shape[0]) >= drop
        u, v = u[keep], v[keep]
    return _pattern(np.concatenate([u, v]), np.concatenate([v, u]), nv, nv)

"""Reproducible graph families for tests and benchmarks.

Every generator takes a `seed` that is passed to
:func:`numpy.random.default_rng`: the same arguments and seed give identical
arrays on every run and machine with the same NumPy version.  All generators
are vectorised and build instances with about a million vertices in a few
seconds.

Matching families return a ``scipy.sparse.csr_matrix`` pattern (values 1.0,
sorted indices, no duplicates, int32 indices when they fit).  Flow families
return ``(capacity, source, sink)`` with an int64 ``csr_matrix`` of
capacities.

========================  ===================================================
:func:`random_bipartite`  Erdős–Rényi-like bipartite graph, Poisson row degrees
:func:`delaunay`          Delaunay triangulation of random points (a mesh)
:func:`rmat`              R-MAT / Kronecker power-law directed graph
:func:`grid`              4-neighbour grid, edges dropped at random
:func:`triangular`        all-ones triangular pattern (long alternating paths)
:func:`bidiagonal`        bidiagonal pattern: a path of 2n vertices
:func:`block_triangular`  shuffled block triangular "Jacobian" pattern
:func:`banded`            band pattern ``|i - j| <= bandwidth``
:func:`staircase`         rectangular staircase: rows on consecutive columns
:func:`arrowhead`         diagonal plus dense last rows and columns
:func:`block_diagonal`    dense (or thinned) square diagonal blocks
:func:`path_network`      max-flow network that is one long directed path
:func:`genrmf`            DIMACS GENRMF max-flow network (frames of grids)
:func:`washington_rlg`    Washington random level graph max-flow network
========================  ===================================================
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "random_bipartite",
    "delaunay",
    "rmat",
    "grid",
    "triangular",
    "bidiagonal",
    "block_triangular",
    "banded",
    "staircase",
    "arrowhead",
    "block_diagonal",
    "genrmf",
    "washington_rlg",
    "path_network",
]

_INT32_MAX = np.iinfo(np.int32).max


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _check_int(name, value, minimum=0):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def _check_real(name, value, lo=None, hi=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        lo_s = "-inf" if lo is None else f"{lo:g}"
        hi_s = "inf" if hi is None else f"{hi:g}"
        raise ValueError(f"{name} must be in [{lo_s}, {hi_s}], got {value!r}")
    return value


def _csr_from_keys(keys, m, n, data=None, dtype=np.float64):
    """CSR matrix from sorted, unique linear keys ``row * n + col``.

    With `data` (aligned with `keys`) those values are used, else ones.
    """
    width = max(n, 1)
    rows = keys // width
    cols = keys - rows * width
    idt = np.int32 if max(m + 1, n + 1, keys.shape[0]) < _INT32_MAX else np.int64
    indptr = np.zeros(m + 1, dtype=idt)
    if keys.shape[0]:
        np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    vals = np.ones(keys.shape[0], dtype=dtype) if data is None else data.astype(dtype, copy=False)
    return sp.csr_matrix((vals, cols.astype(idt), indptr), shape=(m, n))


def _pattern(rows, cols, m, n):
    """Pattern CSR (values 1.0) of the pairs, duplicates merged."""
    keys = np.sort(rows.astype(np.int64) * max(n, 1) + cols.astype(np.int64))
    if keys.shape[0] > 1:  # sort + mask: much faster than np.unique on large int arrays
        keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    return _csr_from_keys(keys, m, n)


def _capacities(rows, cols, caps, nv):
    """int64 capacity CSR of the arcs, parallel arcs summed."""
    keys = rows.astype(np.int64) * max(nv, 1) + cols.astype(np.int64)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    caps = caps.astype(np.int64)[order]
    first = np.ones(keys.shape[0], dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(first)
    summed = np.add.reduceat(caps, starts) if starts.size else caps[:0]
    return _csr_from_keys(keys[first], nv, nv, summed, np.int64)


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


def _permuted(rows, cols, m, n, permute, seed):
    # `seed` may also be a Generator already drawn from: default_rng returns it as is.
    if permute:
        rng = np.random.default_rng(seed)
        rows, cols = rng.permutation(m)[rows], rng.permutation(n)[cols]
    return _pattern(rows, cols, m, n)


def triangular(n: int, *, lower: bool = False, permute: bool = False, seed: int | None = 0) -> sp.csr_matrix:
    """All-ones triangular ``n x n`` pattern, optionally with rows and
    columns permuted at random.

    Upper triangular: row ``i`` holds columns ``i .. n-1``.  The diagonal is
    the only perfect matching, and a matching found greedily in index order
    leaves augmenting paths of length up to ``2n``: a hard case for
    push-relabel matching (and a trivial one for Hopcroft-Karp).

    Parameters
    ----------
    n : int
        Size (non-negative).
    lower : bool
        Lower instead of upper triangular.
    permute : bool
        Permute rows and columns independently at random.
    seed : int or None
        Seed for :func:`numpy.random.default_rng` (used with `permute`).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones with ``n (n + 1) / 2`` entries.

    Examples
    --------
    >>> from gpumatch.generators import triangular
    >>> triangular(3).toarray()
    array([[1., 1., 1.],
           [0., 1., 1.],
           [0., 0., 1.]])
    """
    n = _check_int("n", n)
    i, j = np.triu_indices(n)
    if lower:
        i, j = j, i
    return _permuted(i.astype(np.int64), j.astype(np.int64), n, n, permute, seed)


def bidiagonal(n: int, *, permute: bool = False, seed: int | None = 0) -> sp.csr_matrix:
    """Bidiagonal ``n x n`` pattern: entries ``(i, i)`` and ``(i, i + 1)``.

    As a bipartite graph it is one path through all ``2n`` vertices: the
    longest augmenting paths a matching can need.

    Parameters
    ----------
    n : int
        Size (non-negative).
    permute : bool
        Permute rows and columns independently at random.
    seed : int or None
        Seed for :func:`numpy.random.default_rng` (used with `permute`).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones with ``2n - 1`` entries.

    Examples
    --------
    >>> from gpumatch.generators import bidiagonal
    >>> bidiagonal(3).toarray()
    array([[1., 1., 0.],
           [0., 1., 1.],
           [0., 0., 1.]])
    """
    n = _check_int("n", n)
    i = np.arange(n, dtype=np.int64)
    rows = np.concatenate([i, i[:-1]])
    cols = np.concatenate([i, i[:-1] + 1])
    return _permuted(rows, cols, n, n, permute, seed)


def _block_sizes(rng, n, max_block):
    """Random block sizes in ``1 .. max_block`` summing to `n` (the last one cut to fit)."""
    chunks, total = [], 0
    while total < n:
        draw = rng.integers(1, max_block, size=max(16, 2 * (n - total) // (max_block + 1) + 16),
                            endpoint=True, dtype=np.int64)
        chunks.append(draw)
        total += int(draw.sum())
    sizes = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    ends = np.cumsum(sizes)
    nblocks = int(np.searchsorted(ends, n)) + 1 if n else 0
    sizes = sizes[:nblocks]
    if nblocks:
        sizes[-1] -= int(ends[nblocks - 1]) - n
    return sizes


def block_triangular(n: int, *, max_block: int = 29, coupling: int = 2, permute: bool = True,
                     seed: int | None = 0, return_blocks: bool = False
                     ) -> sp.csr_matrix | tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Shuffled block triangular pattern, like the structural Jacobian of a
    system of equations.

    The ``n`` rows and columns are cut into consecutive diagonal blocks of
    random sizes in ``1 .. max_block`` (the last one may be smaller).  Row
    ``i`` of a block that spans ``s .. s + L - 1`` holds

    * its diagonal entry ``(i, i)``;
    * the next column of its block, cyclically: ``(i, s + (i - s + 1) % L)``,
      so that each block is irreducible (a cycle through all its rows);
    * `coupling` columns drawn uniformly from the earlier blocks
      ``0 .. s - 1`` (repeats merged; rows of the first block have none).

    Rows and columns are then permuted at random (with `permute`).  The
    matrix has a perfect matching (the diagonal before the permutation), so
    its structural rank is `n`, and its fine block triangular form is known:
    the blocks above, in that order, are its irreducible diagonal blocks.
    Greedy and augmenting-path matchers meet long alternating paths here,
    running through chains of blocks.

    Parameters
    ----------
    n : int
        Number of rows and columns (non-negative).
    max_block : int, optional
        Largest block size (at least 1).  Sizes are uniform in
        ``1 .. max_block``.
    coupling : int, optional
        Entries drawn per row in earlier blocks (non-negative).
    permute : bool, optional
        Permute rows and columns independently at random.  Default True.
    seed : int or None, optional
        Seed for :func:`numpy.random.default_rng`.
    return_blocks : bool, optional
        Also return the block of every row and every column.

    Returns
    -------
    A : scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones with about ``(2 + coupling) n``
        entries.
    row_block, col_block : ndarray of int64, optional
        With `return_blocks`: the block number of each row and column of `A`
        (after the permutation).  Blocks are numbered ``0, 1, ...`` in
        triangular order: an entry ``(i, j)`` always has
        ``col_block[j] <= row_block[i]``, so ordering rows and columns by
        block gives a block lower triangular matrix whose diagonal blocks
        are square and irreducible.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.generators import block_triangular
    >>> A, rb, cb = block_triangular(1000, seed=2, return_blocks=True)
    >>> A.shape, bool(3.5 < A.nnz / 1000 < 4.0)
    ((1000, 1000), True)
    >>> coo = A.tocoo()
    >>> bool(np.all(cb[coo.col] <= rb[coo.row]))
    True
    >>> np.array_equal(np.bincount(rb), np.bincount(cb))   # square blocks
    True
    >>> block_triangular(5, max_block=5, coupling=0, permute=False, seed=1).toarray()
    array([[1., 1., 0., 0., 0.],
           [0., 1., 1., 0., 0.],
           [1., 0., 1., 0., 0.],
           [0., 0., 0., 1., 1.],
           [0., 0., 0., 1., 1.]])
    """
    n = _check_int("n", n)
    max_block = _check_int("max_block", max_block, minimum=1)
    coupling = _check_int("coupling", coupling)
    rng = np.random.default_rng(seed)
    sizes = _block_sizes(rng, n, max_block)
    starts = np.cumsum(sizes) - sizes
    block = np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)
    i = np.arange(n, dtype=np.int64)
    start, size = starts[block], sizes[block]
    cycle = start + (i - start + 1) % np.maximum(size, 1)
    rows = [i, i]
    cols = [i, cycle]
    if coupling and n:
        coupled = np.flatnonzero(start > 0)
        rows.append(np.repeat(coupled, coupling))
        cols.append((rng.random((coupled.shape[0], coupling)) * start[coupled, None]).astype(np.int64).ravel())
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    if permute:
        prow, pcol = rng.permutation(n), rng.permutation(n)
    else:
        prow = pcol = i
    A = _pattern(prow[rows], pcol[cols], n, n)
    if not return_blocks:
        return A
    row_block = np.empty(n, dtype=np.int64)
    col_block = np.empty(n, dtype=np.int64)
    row_block[prow] = block
    col_block[pcol] = block
    return A, row_block, col_block


def _thin(rng, rows, cols, density):
    """Keep each off-diagonal pair with probability `density`; diagonal pairs always."""
    if density >= 1.0:
        return rows, cols
    keep = (rows == cols) | (rng.random(rows.shape[0]) < density)
    return rows[keep], cols[keep]


def banded(n: int, bandwidth: int, *, density: float = 1.0, permute: bool = False,
           seed: int | None = 0) -> sp.csr_matrix:
    """Band pattern: entries ``(i, j)`` with ``|i - j| <= bandwidth``.

    Each off-diagonal entry of the band is kept with probability `density`;
    the diagonal is always kept, so the matrix has a perfect matching
    (structural rank `n`) whatever the density.  With ``bandwidth=0`` it is
    the identity pattern.  Permuted, a thin band is a chain of overlapping
    small blocks: alternating paths run along the whole band.

    Parameters
    ----------
    n : int
        Number of rows and columns (non-negative).
    bandwidth : int
        Half bandwidth ``k`` (non-negative): ``2k + 1`` diagonals.
    density : float, optional
        Probability in [0, 1] of keeping each off-diagonal entry.
    permute : bool, optional
        Permute rows and columns independently at random.  Default False.
    seed : int or None, optional
        Seed for :func:`numpy.random.default_rng` (used with `permute` or
        ``density < 1``).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones; with ``density=1`` it has
        ``n (2k + 1) - k (k + 1)`` entries when ``k < n``.

    Examples
    --------
    >>> from gpumatch.generators import banded
    >>> banded(4, 1).toarray()
    array([[1., 1., 0., 0.],
           [1., 1., 1., 0.],
           [0., 1., 1., 1.],
           [0., 0., 1., 1.]])
    >>> A = banded(10_000, 3, density=0.5, permute=True, seed=4)
    >>> A.shape, bool(3.9 < A.nnz / 10_000 < 4.1)
    ((10000, 10000), True)
    """
    n = _check_int("n", n)
    k = min(_check_int("bandwidth", bandwidth), max(n - 1, 0))
    density = _check_real("density", density, 0.0, 1.0)
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for d in range(-k, k + 1):
        r = np.arange(max(0, -d), min(n, n - d), dtype=np.int64)
        rows.append(r)
        cols.append(r + d)
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    rows, cols = _thin(rng, rows, cols, density)
    return _permuted(rows, cols, n, n, permute, rng)


def staircase(m: int, n: int, *, width: int = 2, permute: bool = False, seed: int | None = 0) -> sp.csr_matrix:
    """Rectangular staircase pattern: each row holds `width` consecutive
    columns, the start column stepping down the matrix.

    Row ``i`` holds columns ``lo_i .. lo_i + width - 1`` (those below `n`),
    with ``lo_i = floor(i n / m)``.  A tall matrix (``m > n``) has steps of
    one or more rows per column; a wide one (``m < n``) skips columns.  The
    structural rank is ``min(m, n)`` for every ``width >= 1``: row
    ``ceil(j m / n)`` starts at column ``j`` when ``m >= n``, and
    ``lo_i`` is strictly increasing when ``m <= n``.  With ``m = n`` and
    ``width = 2`` it is :func:`bidiagonal`.  A tall staircase leaves
    ``m - n`` rows unmatched, at the ends of paths that run along the stairs.

    Parameters
    ----------
    m, n : int
        Number of rows and columns (non-negative).
    width : int, optional
        Columns per row (at least 1).
    permute : bool, optional
        Permute rows and columns independently at random.  Default False.
    seed : int or None, optional
        Seed for :func:`numpy.random.default_rng` (used with `permute`).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``m x n`` float64 pattern of ones.

    Examples
    --------
    >>> from gpumatch.generators import staircase
    >>> staircase(6, 4).toarray()
    array([[1., 1., 0., 0.],
           [1., 1., 0., 0.],
           [0., 1., 1., 0.],
           [0., 0., 1., 1.],
           [0., 0., 1., 1.],
           [0., 0., 0., 1.]])
    """
    m = _check_int("m", m)
    n = _check_int("n", n)
    width = _check_int("width", width, minimum=1)
    if m == 0 or n == 0:
        return sp.csr_matrix((m, n), dtype=np.float64)
    lo = np.arange(m, dtype=np.int64) * n // m
    rows = np.repeat(np.arange(m, dtype=np.int64), width)
    cols = (lo[:, None] + np.arange(width, dtype=np.int64)[None, :]).ravel()
    keep = cols < n
    return _permuted(rows[keep], cols[keep], m, n, permute, seed)


def arrowhead(n: int, *, width: int = 1, permute: bool = False, seed: int | None = 0) -> sp.csr_matrix:
    """Arrowhead pattern: the diagonal plus `width` dense last rows and
    `width` dense last columns.

    The dense rows and columns are hubs of degree `n`; the diagonal is a
    perfect matching (structural rank `n`).

    Parameters
    ----------
    n : int
        Number of rows and columns (non-negative).
    width : int, optional
        Number of dense rows and of dense columns (non-negative; at most `n`
        are used).
    permute : bool, optional
        Permute rows and columns independently at random.  Default False.
    seed : int or None, optional
        Seed for :func:`numpy.random.default_rng` (used with `permute`).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones with ``n + w (2n - w - 1)``
        entries, ``w = min(width, n)``.

    Examples
    --------
    >>> from gpumatch.generators import arrowhead
    >>> arrowhead(4).toarray()
    array([[1., 0., 0., 1.],
           [0., 1., 0., 1.],
           [0., 0., 1., 1.],
           [1., 1., 1., 1.]])
    """
    n = _check_int("n", n)
    w = min(_check_int("width", width), n)
    i = np.arange(n, dtype=np.int64)
    dense = np.arange(n - w, n, dtype=np.int64)
    rows = np.concatenate([i, np.repeat(dense, n), np.tile(i, w)])
    cols = np.concatenate([i, np.tile(i, w), np.repeat(dense, n)])
    return _permuted(rows, cols, n, n, permute, seed)


def block_diagonal(n: int, block: int, *, density: float = 1.0, permute: bool = False,
                   seed: int | None = 0) -> sp.csr_matrix:
    """Block diagonal pattern with dense square blocks.

    Rows and columns ``b * block .. (b + 1) * block - 1`` form block ``b``
    (the last block holds the remaining ``n % block`` when `block` does not
    divide `n`).  Each off-diagonal entry of a block is kept with
    probability `density`; the diagonal is always kept, so the matrix has a
    perfect matching (structural rank `n`).

    Parameters
    ----------
    n : int
        Number of rows and columns (non-negative).
    block : int
        Block size (at least 1).
    density : float, optional
        Probability in [0, 1] of keeping each off-diagonal entry of a block.
    permute : bool, optional
        Permute rows and columns independently at random.  Default False.
    seed : int or None, optional
        Seed for :func:`numpy.random.default_rng` (used with `permute` or
        ``density < 1``).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones; with ``density=1`` it has
        ``q block**2 + r**2`` entries, ``n = q block + r``.

    Examples
    --------
    >>> from gpumatch.generators import block_diagonal
    >>> block_diagonal(5, 2).toarray()
    array([[1., 1., 0., 0., 0.],
           [1., 1., 0., 0., 0.],
           [0., 0., 1., 1., 0.],
           [0., 0., 1., 1., 0.],
           [0., 0., 0., 0., 1.]])
    """
    n = _check_int("n", n)
    block = _check_int("block", block, minimum=1)
    density = _check_real("density", density, 0.0, 1.0)
    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=np.int64)
    start = i // block * block
    end = np.minimum(start + block, n)
    cols = start[:, None] + np.arange(min(block, max(n, 1)), dtype=np.int64)[None, :]
    keep = cols < end[:, None]
    rows = np.broadcast_to(i[:, None], cols.shape)[keep]
    rows, cols = _thin(rng, rows, cols[keep], density)
    return _permuted(rows, cols, n, n, permute, rng)


# ---------------------------------------------------------------------------
# max-flow families
# ---------------------------------------------------------------------------


def genrmf(a: int, b: int, c1: int, c2: int, seed: int | None = 0) -> tuple[sp.csr_matrix, int, int]:
    """GENRMF max-flow network (Goldfarb and Grigoriadis; DIMACS generator).

    The network has `b` frames, each an ``a x a`` grid, ``a*a*b`` vertices
    in all; vertex ``(i, j)`` of frame ``k`` has index ``k*a*a + i*a + j``.
    Inside a frame, grid neighbours are joined in both directions with
    capacity ``c2 * a * a``.  Between frames ``k`` and ``k + 1``, vertex ``q``
    of frame ``k`` has one arc to vertex ``perm_k[q]`` of frame ``k + 1``,
    where ``perm_k`` is a random permutation (a new one for each ``k``), with
    capacity uniform in ``[c1, c2]``.

    Parameters
    ----------
    a : int
        Frame side (at least 1).
    b : int
        Number of frames (at least 1; ``a*a*b`` must be at least 2).
    c1, c2 : int
        Range of the inter-frame capacities, ``0 <= c1 <= c2``.
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    capacity : scipy.sparse.csr_matrix of int64
        ``a*a*b`` square capacity matrix.
    source : int
        Vertex 0, the first vertex of the first frame.
    sink : int
        Vertex ``a*a*b - 1``, the last vertex of the last frame.

    References
    ----------
    D. Goldfarb and M. D. Grigoriadis, "A computational comparison of the
    Dinic and network simplex methods for maximum flow", Annals of Operations
    Research 13 (1988).

    Examples
    --------
    >>> from gpumatch.generators import genrmf
    >>> C, s, t = genrmf(3, 4, 1, 10, seed=0)
    >>> C.shape, s, t, int(C.max())
    ((36, 36), 0, 35, 90)
    """
    a = _check_int("a", a, minimum=1)
    b = _check_int("b", b, minimum=1)
    c1 = _check_int("c1", c1)
    c2 = _check_int("c2", c2)
    if c1 > c2:
        raise ValueError(f"c1 must not exceed c2, got c1={c1}, c2={c2}")
    frame = a * a
    nv = frame * b
    if nv < 2:
        raise ValueError(f"the network needs at least 2 vertices, got a*a*b = {nv}")
    if c2 * frame > np.iinfo(np.int64).max:
        raise OverflowError(f"in-frame capacity c2*a*a = {c2 * frame} does not fit in int64")
    rng = np.random.default_rng(seed)
    # in-frame grid arcs, both directions
    pos = np.arange(frame, dtype=np.int64).reshape(a, a)
    pu = np.concatenate([pos[:, :-1].ravel(), pos[:-1, :].ravel()])
    pv = np.concatenate([pos[:, 1:].ravel(), pos[1:, :].ravel()])
    base = (np.arange(b, dtype=np.int64) * frame)[:, None]
    fu = (base + pu[None, :]).ravel()
    fv = (base + pv[None, :]).ravel()
    in_u = np.concatenate([fu, fv])
    in_v = np.concatenate([fv, fu])
    in_c = np.full(in_u.shape[0], c2 * frame, dtype=np.int64)
    # inter-frame arcs: one random permutation per pair of consecutive frames
    nlinks = b - 1
    perms = rng.permuted(np.tile(np.arange(frame, dtype=np.int64), (nlinks, 1)), axis=1)
    x_u = (base[:-1] + np.arange(frame, dtype=np.int64)[None, :]).ravel()
    x_v = (base[1:] + perms).ravel()
    x_c = rng.integers(c1, c2, size=x_u.shape[0], endpoint=True, dtype=np.int64)
    C = _capacities(np.concatenate([in_u, x_u]), np.concatenate([in_v, x_v]),
                    np.concatenate([in_c, x_c]), nv)
    return C, 0, nv - 1


def washington_rlg(rows: int, cols: int, max_cap: int, seed: int | None = 0) -> tuple[sp.csr_matrix, int, int]:
    """Washington random level graph (RLG) max-flow network.

    The vertices form `cols` levels of `rows` vertices each, plus a source
    and a sink: the source is vertex 0, vertex ``(level j, position i)`` has
    index ``1 + j*rows + i``, and the sink is vertex ``rows*cols + 1``.

    * Every vertex of level ``j < cols - 1`` has 3 arcs to vertices of level
      ``j + 1`` chosen uniformly at random with replacement (repeats become
      one arc with the capacities summed), each with capacity uniform in
      ``[1, max_cap]``.
    * The source has an arc of capacity ``3 * max_cap`` to every vertex of
      level 0, and every vertex of level ``cols - 1`` has an arc of capacity
      ``3 * max_cap`` to the sink.

    Parameters
    ----------
    rows : int
        Vertices per level (at least 1).
    cols : int
        Number of levels (at least 1).
    max_cap : int
        Largest random capacity (at least 1).
    seed : int or None
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    capacity : scipy.sparse.csr_matrix of int64
        ``rows*cols + 2`` square capacity matrix.
    source : int
        0.
    sink : int
        ``rows*cols + 1``.

    References
    ----------
    R. J. Anderson and J. C. Setubal, "Goldberg's algorithm for maximum flow
    in perspective: a computational study", in Network Flows and Matching:
    First DIMACS Implementation Challenge, DIMACS Series in Discrete
    Mathematics and Theoretical Computer Science 12, AMS (1993).

    Examples
    --------
    >>> from gpumatch.generators import washington_rlg
    >>> C, s, t = washington_rlg(4, 5, 100, seed=0)
    >>> C.shape, s, t, int(C[0].sum())
    ((22, 22), 0, 21, 1200)
    """
    rows = _check_int("rows", rows, minimum=1)
    cols = _check_int("cols", cols, minimum=1)
    max_cap = _check_int("max_cap", max_cap, minimum=1)
    if 3 * max_cap > np.iinfo(np.int64).max:
        raise OverflowError(f"3*max_cap = {3 * max_cap} does not fit in int64")
    rng = np.random.default_rng(seed)
    nv = rows * cols + 2
    source, sink = 0, nv - 1
    big = 3 * max_cap
    # level-to-level arcs
    tails = np.arange(1, 1 + rows * (cols - 1), dtype=np.int64)
    level = (tails - 1) // rows
    tails3 = np.repeat(tails, 3)
    heads3 = 1 + (np.repeat(level, 3) + 1) * rows + rng.integers(0, rows, size=tails3.shape[0], dtype=np.int64)
    caps3 = rng.integers(1, max_cap, size=tails3.shape[0], endpoint=True, dtype=np.int64)
    first = np.arange(1, 1 + rows, dtype=np.int64)
    last = np.arange(1 + rows * (cols - 1), 1 + rows * cols, dtype=np.int64)
    u = np.concatenate([np.full(rows, source, dtype=np.int64), tails3, last])
    v = np.concatenate([first, heads3, np.full(rows, sink, dtype=np.int64)])
    c = np.concatenate([np.full(rows, big, dtype=np.int64), caps3, np.full(rows, big, dtype=np.int64)])
    return _capacities(u, v, c, nv), source, sink



def path_network(n: int, max_cap: int = 100, *, permute: bool = True,
                 seed: int | None = 0) -> tuple[sp.csr_matrix, int, int]:
    """Max-flow network that is one directed path through all `n` vertices.

    The path visits the vertices in a random order (with `permute`, else
    ``0, 1, ..., n - 1``); its ``n - 1`` arcs have capacities uniform in
    ``[1, max_cap]``.  The source is the first vertex of the path and the
    sink the last, so the maximum flow is the smallest capacity, and every
    augmenting path has ``n - 1`` arcs: the longest a network of `n`
    vertices can have.

    Parameters
    ----------
    n : int
        Number of vertices (at least 2).
    max_cap : int, optional
        Largest capacity (at least 1).
    permute : bool, optional
        Shuffle the vertex ids.  Default True.
    seed : int or None, optional
        Seed for :func:`numpy.random.default_rng`.

    Returns
    -------
    capacity : scipy.sparse.csr_matrix of int64
        ``n x n`` capacity matrix with ``n - 1`` arcs.
    source : int
        The first vertex of the path.
    sink : int
        The last vertex of the path.

    Examples
    --------
    >>> from gpumatch.generators import path_network
    >>> C, s, t = path_network(5, 10, permute=False, seed=0)
    >>> s, t
    (0, 4)
    >>> C.toarray()
    array([[0, 9, 0, 0, 0],
           [0, 0, 7, 0, 0],
           [0, 0, 0, 6, 0],
           [0, 0, 0, 0, 3],
           [0, 0, 0, 0, 0]])
    >>> from scipy.sparse.csgraph import maximum_flow
    >>> C, s, t = path_network(1000, seed=3)
    >>> bool(maximum_flow(C.astype("int32"), s, t).flow_value == C.data.min())
    True
    """
    n = _check_int("n", n, minimum=2)
    max_cap = _check_int("max_cap", max_cap, minimum=1)
    rng = np.random.default_rng(seed)
    caps = rng.integers(1, max_cap, size=n - 1, endpoint=True, dtype=np.int64)
    order = rng.permutation(n) if permute else np.arange(n, dtype=np.int64)
    return _capacities(order[:-1], order[1:], caps, n), int(order[0]), int(order[-1])

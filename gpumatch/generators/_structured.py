"""Structured families of :mod:`gpumatch.generators`, with long augmenting
paths: triangular patterns, chains, cycles, block-triangular Jacobians,
bands, staircases, arrowheads, dense diagonal blocks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._common import _check_int, _check_real, _pattern, _permuted


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


def cycles(n: int, count: int = 1, *, permute: bool = False, seed: int | None = 0) -> sp.csr_matrix:
    """``n x n`` pattern whose bipartite graph is `count` disjoint even
    cycles: the rows and columns are cut into `count` near-equal ranges,
    and in a range of ``k`` rows row ``i`` holds columns ``i`` and ``i + 1``
    (``mod k``, from the range's start).

    Every vertex has degree two, so no vertex of degree one starts a
    degree-one rule: a matching found greedily leaves augmenting paths
    along the cycles.  A range of one row is a single entry.

    Parameters
    ----------
    n : int
        Size (non-negative).
    count : int
        Number of cycles, ``1 <= count <= n`` (any value when `n` is 0).
    permute : bool
        Permute rows and columns independently at random.
    seed : int or None
        Seed for :func:`numpy.random.default_rng` (used with `permute`).

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n x n`` float64 pattern of ones with ``2n`` entries (less one per
        range of a single row).

    Examples
    --------
    >>> from gpumatch.generators import cycles
    >>> cycles(3).toarray()
    array([[1., 1., 0.],
           [0., 1., 1.],
           [1., 0., 1.]])
    >>> cycles(4, 2).nnz
    8
    """
    n = _check_int("n", n)
    count = _check_int("count", count, 1 if n else 0)
    if n and count > n:
        raise ValueError(f"count must be at most n = {n}, got {count}")
    i = np.arange(n, dtype=np.int64)
    bounds = (np.arange(count + 1, dtype=np.int64) * n) // max(count, 1)
    block = np.searchsorted(bounds, i, side="right") - 1
    start, size = bounds[block], np.diff(bounds)[block]
    rows = np.concatenate([i, i])
    cols = np.concatenate([i, start + (i - start + 1) % size])
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

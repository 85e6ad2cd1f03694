"""Max-flow families of :mod:`gpumatch.generators`: GENRMF, Washington RLG,
one long path."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._common import _check_int, _capacities


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

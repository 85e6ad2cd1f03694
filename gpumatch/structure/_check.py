"""Certificates for the Dulmage–Mendelsohn decomposition and the block triangular form.

A decomposition is checked, not compared with a stored answer (permutations
are not unique).  :func:`check_dulmage_mendelsohn` verifies, on the host
with NumPy/SciPy, everything that makes ``A[p][:, q]`` a Dulmage–Mendelsohn
form:

1. ``p``, ``q`` are permutations; ``rr``, ``cc`` fit together
   (``|R1| = |C1|``, ``|R2| = |C2|``, ``|R3| = |C3|``);
2. the coarse blocks below the staircase are empty and the diagonals of
   ``A12``, ``A23``, ``A34`` are stored entries: a matching of
   ``structural_rank`` pairs, and rows ``R1 ∪ R2`` with columns ``C3``
   cover every entry (a König cover of the same size), which proves the
   rank;
3. every column of ``C1`` is reachable by an alternating path from an
   unmatched column, every row of ``R3`` from an unmatched row (the block
   structure of 2 shows that nothing else is): the coarse sets are exactly
   the reachability sets, hence the unique ones;
4. the fine blocks: the horizontal and vertical parts as the first and last
   blocks (when not empty), square blocks between them, and no entry below
   a diagonal block; each square block is one strongly connected component
   of the square part's graph (one SciPy search on the permuted matrix).

A failed check raises ``AssertionError`` naming the offending entry or set,
as :mod:`gpumatch.testing` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import _backend
from .._validation import as_csr_graph

__all__ = ["DMCertificate", "check_dulmage_mendelsohn", "check_block_triangular"]


@dataclass(frozen=True)
class DMCertificate:
    """What a check proved: the structural rank, the number of fine blocks
    and the number of square irreducible blocks."""

    structural_rank: int
    nblocks: int
    square_blocks: int


def _vec(a, what, length=None):
    a = np.asarray(_backend.to_numpy(a))
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"{what} must be a one-dimensional integer array, got {a.dtype} of shape {a.shape}")
    if length is not None and a.shape[0] != length:
        raise AssertionError(f"{what} has length {a.shape[0]}, expected {length}")
    return a.astype(np.int64)


def _check_perm(p, size, what):
    if p.shape[0] and (p.min() < 0 or p.max() >= size):
        raise AssertionError(f"{what} holds a value out of [0, {size})")
    counts = np.bincount(p, minlength=size)
    if counts.shape[0] != size or (counts != 1).any():
        bad = int(np.flatnonzero(counts != 1)[0])
        raise AssertionError(f"{what} is not a permutation: {bad} appears {int(counts[bad])} times")
    inv = np.empty(size, dtype=np.int64)
    inv[p] = np.arange(size)
    return inv


def _bounds(x, size, what, length):
    if x.shape[0] != length:
        raise AssertionError(f"{what} has length {x.shape[0]}, expected {length}")
    if x.shape[0] and (x[0] != 0 or x[-1] != size or (np.diff(x) < 0).any()):
        raise AssertionError(f"{what} = {x.tolist()[:12]} must rise from 0 to {size}")


def _permuted_entries(A, p, q):
    """Coordinates (in ``A[p][:, q]``) of the stored entries of `A`, explicit zeros included."""
    g = as_csr_graph(A, "numpy", name="A")
    m, n = g.shape
    pinv = _check_perm(p, m, "p")
    qinv = _check_perm(q, n, "q")
    rows = pinv[np.repeat(np.arange(m, dtype=np.int64), np.diff(g.indptr))]
    cols = qinv[g.indices.astype(np.int64)]
    return g, rows, cols


def _has_entries(rows, cols, n, qr, qc):
    """Which of the positions (qr, qc) are stored entries."""
    keys = np.sort(rows * max(n, 1) + cols)
    want = qr * max(n, 1) + qc
    at = np.minimum(np.searchsorted(keys, want), max(keys.shape[0] - 1, 0))
    return (keys[at] == want) if keys.shape[0] else np.zeros(want.shape[0], dtype=bool)


def _reach_all(tails, heads, nodes, seeds, what):
    """Every one of `nodes` nodes must be reachable from `seeds` along the arcs."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    if nodes == 0:
        return
    src = np.concatenate([tails, np.full(seeds.shape[0], nodes)])
    dst = np.concatenate([heads, seeds])
    G = sp.csr_matrix((np.ones(src.shape[0]), (src, dst)), shape=(nodes + 1, nodes + 1))
    reached = np.zeros(nodes + 1, dtype=bool)
    reached[breadth_first_order(G, nodes, directed=True, return_predecessors=False)] = True
    if not reached[:nodes].all():
        raise AssertionError(f"{what}: {int((~reached[:nodes]).sum())} of them are not reachable by an "
                             f"alternating path (the first: position {int(np.flatnonzero(~reached[:nodes])[0])})")


def _check_irreducible(rows, cols, lo_r, lo_c, size, starts, what):
    """The square block diagonal ``[lo_r, lo_r + size) x [lo_c, lo_c + size)``
    split at `starts` (relative): each block one SCC of the pairs' graph."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    if size == 0:
        return
    inside = (rows >= lo_r) & (rows < lo_r + size) & (cols >= lo_c) & (cols < lo_c + size)
    a, b = rows[inside] - lo_r, cols[inside] - lo_c
    G = sp.csr_matrix((np.ones(a.shape[0]), (a, b)), shape=(size, size))
    ncomp, labels = connected_components(G, directed=True, connection="strong")
    owner = np.repeat(np.arange(starts.shape[0] - 1), np.diff(starts))
    lo = np.full(starts.shape[0] - 1, np.iinfo(np.int64).max)
    hi = np.full(starts.shape[0] - 1, -1)
    np.minimum.at(lo, owner, labels)
    np.maximum.at(hi, owner, labels)
    split = np.flatnonzero(lo != hi)
    if split.shape[0]:
        k = int(split[0])
        raise AssertionError(f"{what}: block {k} (positions {int(starts[k])}..{int(starts[k + 1]) - 1}) is "
                             "reducible: it holds more than one strongly connected component")
    if ncomp != starts.shape[0] - 1:
        raise AssertionError(f"{what}: {starts.shape[0] - 1} blocks but {ncomp} strongly connected components "
                             "(a component is split over blocks)")


def check_dulmage_mendelsohn(A, result, *, expected_rank=None) -> DMCertificate:
    """Verify a Dulmage–Mendelsohn decomposition of `A` (see the module docstring).

    Parameters
    ----------
    A : sparse matrix or tuple
        The matrix (every stored entry counts, explicit zeros included).
    result : DulmageMendelsohnResult
        Or any object with ``p``, ``q``, ``r``, ``s``, ``rr``, ``cc`` and
        ``structural_rank`` (NumPy or CuPy arrays).
    expected_rank : int, optional
        Also require this structural rank.

    Returns
    -------
    DMCertificate

    Raises
    ------
    AssertionError
        When a property does not hold.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import dulmage_mendelsohn
    >>> from gpumatch.structure import check_dulmage_mendelsohn
    >>> A = sp.csr_matrix([[1, 1, 0], [0, 1, 0], [0, 1, 1]])
    >>> check_dulmage_mendelsohn(A, dulmage_mendelsohn(A, backend="numpy"))
    DMCertificate(structural_rank=3, nblocks=3, square_blocks=3)
    """
    p = _vec(result.p, "p")
    q = _vec(result.q, "q")
    g, rows, cols = _permuted_entries(A, p, q)
    m, n = g.shape
    rr = _vec(result.rr, "rr")
    cc = _vec(result.cc, "cc")
    _bounds(rr, m, "rr", 5)
    _bounds(cc, n, "cc", 5)
    n_r1, n_r2, n_r3 = rr[1] - rr[0], rr[2] - rr[1], rr[3] - rr[2]
    if (n_r1, n_r2, n_r3) != (cc[2] - cc[1], cc[3] - cc[2], cc[4] - cc[3]):
        raise AssertionError(f"coarse sizes do not pair up: rr = {rr.tolist()}, cc = {cc.tolist()}")
    rank = int(rr[3])
    if int(result.structural_rank) != rank:
        raise AssertionError(f"structural_rank = {result.structural_rank} but rr[3] = {rank}")
    if expected_rank is not None and rank != int(expected_rank):
        raise AssertionError(f"structural rank {rank}, expected {expected_rank}")

    # 2. the coarse staircase and the three zero-free diagonals
    rpart = np.searchsorted(rr[1:3], rows, side="right")       # 0: R1, 1: R2, 2: R3 and R0
    cpart = np.searchsorted(cc[2:4], cols, side="right")       # 0: C0 and C1, 1: C2, 2: C3
    bad = np.flatnonzero(rpart > cpart)
    if bad.shape[0]:
        k = int(bad[0])
        raise AssertionError(f"entry ({int(rows[k])}, {int(cols[k])}) of A[p][:, q] lies below the coarse "
                             f"staircase (rr = {rr.tolist()}, cc = {cc.tolist()})")
    t = np.arange(rank, dtype=np.int64)
    drow = t                                                   # R1, R2, R3 are rows 0 .. rank-1
    dcol = np.where(t < n_r1, cc[1] + t, np.where(t < n_r1 + n_r2, cc[2] + t - n_r1, cc[3] + t - n_r1 - n_r2))
    stored = _has_entries(rows, cols, n, drow, dcol)
    if not stored.all():
        k = int(np.flatnonzero(~stored)[0])
        raise AssertionError(f"diagonal position ({int(drow[k])}, {int(dcol[k])}) of A[p][:, q] is not a stored "
                             "entry (A12, A23 and A34 must have zero-free diagonals)")

    # 3. C1 reachable from C0, R3 from R0, by alternating paths
    h = (rpart == 0) & (cpart == 0)                            # entries of the horizontal part
    # column j -> row i -> its matched column cc[1] + (i - rr[0])
    _reach_all(cols[h], cc[1] + rows[h], int(cc[2]), np.arange(cc[1]), "columns C1")
    v = rpart == 2                                             # rows R3 and R0 (their entries are in C3)
    # row i -> column j -> its matched row rr[2] + (j - cc[3])
    _reach_all(rows[v] - rr[2], cols[v] - cc[3], int(m - rr[2]), np.arange(rr[3] - rr[2], m - rr[2]), "rows R3")

    # 4. fine blocks
    r = _vec(result.r, "r")
    s = _vec(result.s, "s")
    nb = r.shape[0] - 1
    if int(getattr(result, "nblocks", nb)) != nb:
        raise AssertionError(f"nblocks = {result.nblocks} but len(r) - 1 = {nb}")
    _bounds(r, m, "r", nb + 1)
    _bounds(s, n, "s", nb + 1)
    first = 1 if cc[2] > 0 else 0
    last = 1 if rr[2] < m else 0
    if first and (r[1] != rr[1] or s[1] != cc[2]):
        raise AssertionError(f"the first fine block must be the horizontal part: r[1] = {r[1]}, s[1] = {s[1]}")
    if last and (r[nb - 1] != rr[2] or s[nb - 1] != cc[3]):
        raise AssertionError(f"the last fine block must be the vertical part: r[-2] = {r[nb - 1]}, "
                             f"s[-2] = {s[nb - 1]}")
    mid_r, mid_s = r[first:nb - last + 1], s[first:nb - last + 1]
    if mid_r[0] != rr[1] or mid_r[-1] != rr[2] or mid_s[0] != cc[2] or mid_s[-1] != cc[3]:
        raise AssertionError("the square fine blocks must tile the square part exactly")
    sizes = np.diff(mid_r)
    if (sizes != np.diff(mid_s)).any() or (sizes <= 0).any():
        raise AssertionError("a fine block of the square part is empty or not square")
    rb = np.searchsorted(r, rows, side="right") - 1
    cb = np.searchsorted(s, cols, side="right") - 1
    bad = np.flatnonzero(rb > cb)
    if bad.shape[0]:
        k = int(bad[0])
        raise AssertionError(f"entry ({int(rows[k])}, {int(cols[k])}) of A[p][:, q] lies below the diagonal "
                             f"blocks (row block {int(rb[k])}, column block {int(cb[k])})")
    _check_irreducible(rows, cols, int(rr[1]), int(cc[2]), int(n_r2), mid_r - rr[1], "square part")
    return DMCertificate(structural_rank=rank, nblocks=nb, square_blocks=int(sizes.shape[0]))


def check_block_triangular(A, result, *, expected_rank=None) -> DMCertificate:
    """Verify a block triangular form of the square matrix `A`.

    ``A[p][:, q]`` must be block upper triangular with square diagonal
    blocks at ``r``, each one strongly connected component of the graph of
    ``A[p][:, q]`` (rows and columns paired by position), and its diagonal
    must hold ``structural_rank`` stored entries (all of them when the
    matrix is structurally nonsingular).  `expected_rank`, when given, must
    equal ``structural_rank``: without it a rank below n is not proved
    maximum.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import block_triangular_form
    >>> from gpumatch.structure import check_block_triangular
    >>> A = sp.csr_matrix([[1, 1], [0, 1]])
    >>> check_block_triangular(A, block_triangular_form(A, backend="numpy"))
    DMCertificate(structural_rank=2, nblocks=2, square_blocks=2)
    """
    p = _vec(result.p, "p")
    q = _vec(result.q, "q")
    g, rows, cols = _permuted_entries(A, p, q)
    n = g.n
    if g.m != n:
        raise ValueError(f"A must be square, got shape {g.shape}")
    rank = int(result.structural_rank)
    if expected_rank is not None and rank != int(expected_rank):
        raise AssertionError(f"structural rank {rank}, expected {expected_rank}")
    t = np.arange(n, dtype=np.int64)
    on_diag = int(_has_entries(rows, cols, n, t, t).sum())
    if on_diag != rank:
        raise AssertionError(f"the diagonal of A[p][:, q] holds {on_diag} stored entries, the structural rank "
                             f"is {rank}")
    r = _vec(result.r, "r")
    nb = r.shape[0] - 1
    if int(getattr(result, "nblocks", nb)) != nb:
        raise AssertionError(f"nblocks = {result.nblocks} but len(r) - 1 = {nb}")
    _bounds(r, n, "r", nb + 1)
    if n and (np.diff(r) <= 0).any():
        raise AssertionError("a diagonal block is empty")
    rb = np.searchsorted(r, rows, side="right") - 1
    cb = np.searchsorted(r, cols, side="right") - 1
    bad = np.flatnonzero(rb > cb)
    if bad.shape[0]:
        k = int(bad[0])
        raise AssertionError(f"entry ({int(rows[k])}, {int(cols[k])}) of A[p][:, q] lies below the diagonal "
                             f"blocks (row block {int(rb[k])}, column block {int(cb[k])})")
    _check_irreducible(rows, cols, 0, 0, n, r, "A[p][:, q]")
    return DMCertificate(structural_rank=rank, nblocks=nb, square_blocks=nb)

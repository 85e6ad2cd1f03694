"""Dulmage–Mendelsohn decomposition and block triangular form: the driver.

One host-side driver for every backend.  The steps and what runs them:

1. **Maximum matching** — :func:`gpumatch.bipartite_matching` on the
   requested backend (any name the matching API accepts is passed through).
2. **Coarse decomposition** — two alternating breadth-first searches: from
   the unmatched columns (column → any row of it → that row's matched
   column) they reach the columns ``C0`` (unmatched) and ``C1`` and the rows
   ``R1`` matched to ``C1``; from the unmatched rows (row → any column →
   that column's matched row) the rows ``R0`` (unmatched) and ``R3`` and the
   columns ``C3`` matched to ``R3``.  The rest, ``R2`` × ``C2``, is the
   square part, perfectly matched.  The sets do not depend on which maximum
   matching was found.
   *Host* (``reach="scipy"``, every non-CuPy backend): one compiled
   :func:`scipy.sparse.csgraph.breadth_first_order` per direction on the
   graph of alternating steps (x → mate of each neighbour of x) with a
   super source, O(m + n + nnz) whatever the depth.
   *Device* (``reach="gpr"``, CuPy): G-PR's global-relabel BFS
   (:mod:`gpumatch.matching`), the same kernel that certifies the matching,
   run from the free rows and, on the transposed state, from the free
   columns.
3. **Fine decomposition** — the strongly connected components of the square
   part's graph: one node per matched pair of ``R2`` × ``C2``, an arc from
   pair ``a`` to pair ``b`` when row(a) has an entry in column(b).  Listed in
   topological order they are the irreducible diagonal blocks, and the
   permuted matrix is block upper triangular.  *Host* (``scc="tarjan"``):
   SciPy's Pearce/Tarjan search (:func:`._scc.tarjan_scc`).  *Device*
   (``scc="fwbw"``): trim + forward–backward rounds on the GPU, the small
   rest on the host (:func:`._scc.fwbw_scc`).
4. **Assembly** — the permutations and the block boundaries in MATLAB
   ``dmperm``'s layout, 0-based, by array operations on the backend.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _backend
from .. import csr as _csr
from .._typing import Backend, GraphLike
from .._validation import as_csr_graph
from ..matching import _driver
from ..matching.api import bipartite_matching
from . import _scc

__all__ = ["DulmageMendelsohnResult", "BlockTriangularResult", "dulmage_mendelsohn", "block_triangular_form"]

REACH_ENGINES = ("scipy", "gpr")
SCC_ENGINES = ("tarjan", "fwbw")


def _host(a):
    return _backend.to_numpy(a)


def _fmt_blocks(sizes) -> str:
    """'12 blocks: largest 5000, 17, 3; 9 of size 1' style summary of square block sizes."""
    sizes = np.asarray(sizes)
    if sizes.size == 0:
        return "none"
    top = np.sort(sizes)[::-1]
    shown = ", ".join(str(int(x)) for x in top[:3]) + (", ..." if top.size > 3 else "")
    ones = int(np.count_nonzero(sizes == 1))
    return f"{sizes.size} (largest {shown}; {ones} of size 1)"


@dataclass(repr=False)
class DulmageMendelsohnResult:
    """The Dulmage–Mendelsohn decomposition of an ``m x n`` sparse matrix.

    ``B = A[p][:, q]`` is block upper triangular.  All indices are 0-based;
    the arrays are CuPy arrays for GPU input, NumPy otherwise.

    Attributes
    ----------
    p : int array, length m
        Row permutation.
    q : int array, length n
        Column permutation.
    r, s : int arrays, length ``nblocks + 1``
        Fine blocks: block ``k`` is ``B[r[k]:r[k+1], s[k]:s[k+1]]``.  The
        first block is the horizontal part (when it has columns), the last
        the vertical part (when it has rows), and every block between them
        is square, irreducible, with a zero-free diagonal.
    rr, cc : int arrays, length 5
        Coarse blocks (MATLAB ``dmperm``'s ``rr`` and ``cc``, 0-based):
        ``B[rr[0]:rr[1], cc[0]:cc[2]]`` is the horizontal (underdetermined)
        part, whose first columns ``cc[0]:cc[1]`` are the unmatched ones;
        ``B[rr[1]:rr[2], cc[2]:cc[3]]`` the square (well-determined) part,
        with a zero-free diagonal; ``B[rr[2]:rr[4], cc[3]:cc[4]]`` the
        vertical (overdetermined) part, whose last rows ``rr[3]:rr[4]`` are
        the unmatched ones.  ``B[rr[0]:rr[1], cc[1]:cc[2]]`` and
        ``B[rr[2]:rr[3], cc[3]:cc[4]]`` are square with zero-free diagonals
        too.  Every block below these is empty.
    structural_rank : int
        Size of a maximum matching (``rr[3] == cc[4] - cc[1]``).
    nblocks : int
        Number of fine blocks, ``len(r) - 1``.
    shape : tuple of int
        ``(m, n)``.
    stats : dict
        ``backend``, the engines used (``reach``, ``scc``), the time in
        seconds of each step (``time_matching``, ``time_coarse``,
        ``time_fine``, ``time_assemble``, ``time_total``) and the SCC
        engine's counters.
    """

    p: Any
    q: Any
    r: Any
    s: Any
    rr: Any
    cc: Any
    structural_rank: int
    nblocks: int
    shape: tuple
    stats: dict = field(default_factory=dict)

    def coarse_sizes(self) -> dict:
        """Sizes of the coarse sets: ``{"R1", "R2", "R3", "R0", "C0", "C1", "C2", "C3"}``."""
        rr = [int(x) for x in _host(self.rr)]
        cc = [int(x) for x in _host(self.cc)]
        return {"R1": rr[1] - rr[0], "R2": rr[2] - rr[1], "R3": rr[3] - rr[2], "R0": rr[4] - rr[3],
                "C0": cc[1] - cc[0], "C1": cc[2] - cc[1], "C2": cc[3] - cc[2], "C3": cc[4] - cc[3]}

    def square_block_sizes(self):
        """Sizes of the square (irreducible) fine blocks, in block order (a NumPy array)."""
        r = _host(self.r).astype(np.int64)
        s = _host(self.s).astype(np.int64)
        cc = _host(self.cc)
        rr = _host(self.rr)
        first = 1 if int(cc[2]) > 0 else 0
        last = self.nblocks - (1 if int(rr[2]) < self.shape[0] else 0)
        sizes = r[first + 1:last + 1] - r[first:last]
        assert np.array_equal(sizes, s[first + 1:last + 1] - s[first:last])
        return sizes

    def summary(self) -> str:
        """A few lines describing the coarse and fine blocks (what ``gpumatch dm`` prints)."""
        m, n = self.shape
        c = self.coarse_sizes()
        rank = self.structural_rank
        lines = [f"{m} x {n}, structural rank {rank}"
                 + ("" if rank < min(m, n) else (" (structurally nonsingular)" if m == n else " (full)"))]
        if rank < min(m, n) or m != n:
            lines.append(f"unmatched: {c['R0']} rows, {c['C0']} columns")
        lines.append("coarse blocks (rows x columns):")
        lines.append(f"  horizontal (underdetermined): {c['R1']} x {c['C0'] + c['C1']}"
                     f"  ({c['C0']} unmatched columns)")
        lines.append(f"  square (well-determined):     {c['R2']} x {c['C2']}")
        lines.append(f"  vertical (overdetermined):    {c['R3'] + c['R0']} x {c['C3']}"
                     f"  ({c['R0']} unmatched rows)")
        sizes = self.square_block_sizes()
        lines.append(f"fine blocks: {self.nblocks} in all; square irreducible blocks: {_fmt_blocks(sizes)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        c = self.coarse_sizes()
        sizes = self.square_block_sizes()
        big = int(sizes.max()) if sizes.size else 0
        return (f"DulmageMendelsohnResult(shape={tuple(self.shape)}, structural_rank={self.structural_rank}, "
                f"nblocks={self.nblocks}, rows R1/R2/R3/R0={c['R1']}/{c['R2']}/{c['R3']}/{c['R0']}, "
                f"columns C0/C1/C2/C3={c['C0']}/{c['C1']}/{c['C2']}/{c['C3']}, "
                f"square blocks={sizes.size}, largest={big})")


@dataclass(repr=False)
class BlockTriangularResult:
    """Block upper triangular form of a square sparse matrix.

    ``B = A[p][:, q]`` is block upper triangular with square diagonal
    blocks ``B[r[k]:r[k+1], r[k]:r[k+1]]``, each irreducible.  When ``A`` is
    structurally nonsingular the diagonal of ``B`` is zero-free; otherwise
    exactly ``structural_rank`` diagonal entries are stored entries (the
    other positions pair unmatched rows with unmatched columns).

    Attributes
    ----------
    p, q : int arrays, length n
        Row and column permutations.
    r : int array, length ``nblocks + 1``
        Block boundaries (rows and columns alike).
    nblocks : int
    structural_rank : int
    shape : tuple of int
    stats : dict
        As :class:`DulmageMendelsohnResult`.
    """

    p: Any
    q: Any
    r: Any
    nblocks: int
    structural_rank: int
    shape: tuple
    stats: dict = field(default_factory=dict)

    def block_sizes(self):
        """Sizes of the diagonal blocks, in order (a NumPy array)."""
        return np.diff(_host(self.r).astype(np.int64))

    def __repr__(self) -> str:
        sizes = self.block_sizes()
        big = int(sizes.max()) if sizes.size else 0
        return (f"BlockTriangularResult(shape={tuple(self.shape)}, structural_rank={self.structural_rank}, "
                f"nblocks={self.nblocks}, largest={big}, of size 1={int(np.count_nonzero(sizes == 1))})")


# ---------------------------------------------------------------------------
# steps
# ---------------------------------------------------------------------------


def _engines_for(name: str):
    """(array backend, reach engine, SCC engine) of a resolved backend name."""
    if name == "cupy":
        return "cupy", "gpr", "fwbw"
    return "numpy", "scipy", "tarjan"


def _clock(arrays: str) -> float:
    _backend.synchronize(arrays)
    return time.perf_counter()


def _maximum_matching(g, name: str):
    """A maximum matching of `g` on backend `name`: ``(mu_row, mu_col, stats)``
    in `g`'s index dtype and array module."""
    res = bipartite_matching((g.indptr, g.indices, g.shape), backend=name)
    xp = g.xp
    mu_row = xp.asarray(res.row_to_col).astype(g.indices.dtype, copy=False)
    mu_col = xp.asarray(res.col_to_row).astype(g.indices.dtype, copy=False)
    return mu_row, mu_col, res.stats


def _transpose(g):
    """CSC of `g`, pointers in the dtype of its `indptr` and row ids in that
    of its `indices` (int64 pointers over int32 ids past ``2**31`` entries;
    cuSPARSE or a counting transpose on the GPU, SciPy's counting transpose
    on the host: :func:`gpumatch.csr.transpose`)."""
    return _csr.transpose(g.indptr, g.indices, g.n)


def _reach_scipy(ptr, ind, mate, seeds):
    """Alternating reachability on the host.

    Nodes are the vertices ``x`` of one side (CSR `ptr`/`ind` to the other
    side); an alternating step goes from ``x`` to ``mate[y]`` for every
    neighbour ``y``.  Returns the mask of the nodes reached from the `seeds`
    (a mask; seeds count as reached) and whether a reached node has an
    unmatched neighbour (which would be an augmenting path: the matching was
    not maximum).
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    N = ptr.shape[0] - 1
    nnz = ind.shape[0]
    src = np.flatnonzero(seeds)
    heads = mate[ind]
    heads = np.where(heads >= 0, heads, N + 1)          # unmatched neighbour: a dead-end node N + 1
    itype = np.int32 if N + 2 < 2**31 and nnz + src.shape[0] < 2**31 else np.int64
    ext_ind = np.concatenate([heads.astype(itype, copy=False), src.astype(itype)])
    ext_ptr = np.empty(N + 3, dtype=itype)
    ext_ptr[:N + 1] = ptr
    ext_ptr[N + 1:] = nnz + src.shape[0]                # node N: the super source; N + 1: no arcs
    # the traversal never reads the values: np.zeros costs no page until touched
    G = sp.csr_matrix((np.zeros(ext_ind.shape[0]), ext_ind, ext_ptr), shape=(N + 2, N + 2))
    order = breadth_first_order(G, N, directed=True, return_predecessors=False)
    reached = np.zeros(N + 2, dtype=bool)
    reached[order] = True
    return reached[:N], bool(reached[N + 1])


def _reach_gpr(g, csc, mu_row, mu_col):
    """Both alternating searches with G-PR's global-relabel kernels (NumPy
    twin or CUDA): returns (rows reached from the free rows, columns reached
    from the free columns, whether a free vertex was reached from the other
    side)."""
    backend = g.backend
    kern = _driver.kernels_for(backend)
    cptr, cind = csc
    # exact_bfs: no early stop once no free vertex of the other side is left
    # to find (the relabel then gives the rest lower-bound labels, which
    # would read as reached)
    st = _driver.state_from_arrays(g.indptr, g.indices, cptr, cind, mu_row, mu_col, backend)
    st.extra["exact_bfs"] = True
    kern.global_relabel(st)
    rows_from_rows = st.psi_row < st.inf
    bad = bool((st.psi_col < st.inf)[mu_col < 0].any())
    mirror = _driver.state_from_arrays(cptr, cind, g.indptr, g.indices, mu_col, mu_row, backend)
    mirror.extra["exact_bfs"] = True
    kern.global_relabel(mirror)
    cols_from_cols = mirror.psi_row < mirror.inf
    bad = bad or bool((mirror.psi_col < mirror.inf)[mu_row < 0].any())
    return rows_from_rows, cols_from_cols, bad


def _coarse(g, mu_row, mu_col, reach):
    """Masks of the coarse sets: ``(row_set, col_set)``, int8 arrays with
    rows 1 = R1, 2 = R2, 3 = R3, 4 = R0 and columns 0 = C0, 1 = C1,
    2 = C2, 3 = C3."""
    xp = g.xp
    m, n = g.shape
    free_rows = mu_row < 0
    free_cols = mu_col < 0
    row_set = xp.full(m, 2, dtype=np.int8)
    col_set = xp.full(n, 2, dtype=np.int8)
    if not (bool(free_rows.any()) or bool(free_cols.any())):
        return row_set, col_set
    csc = _transpose(g)
    if reach == "scipy":
        rows_from_rows, bad1 = _reach_scipy(g.indptr, g.indices, mu_col, free_rows)
        cols_from_cols, bad2 = _reach_scipy(csc[0], csc[1], mu_row, free_cols)
        bad = bad1 or bad2
    else:
        rows_from_rows, cols_from_cols, bad = _reach_gpr(g, csc, mu_row, mu_col)
    if bad:  # pragma: no cover - would be a bug of the matching
        raise RuntimeError("dulmage_mendelsohn: the matching is not maximum (an augmenting path exists)")
    r3 = xp.flatnonzero(rows_from_rows & ~free_rows)
    c1 = xp.flatnonzero(cols_from_cols & ~free_cols)
    row_set[r3] = 3
    col_set[mu_row[r3]] = 3
    col_set[c1] = 1
    row_set[mu_col[c1]] = 1
    row_set[free_rows] = 4
    col_set[free_cols] = 0
    return row_set, col_set


def square_graph(ptr, ind, mu_col, rows, node_of_row):
    """The directed graph of the matched pairs (CSR, node = pair).

    Node ``v`` is the pair of row ``rows[v]`` (`rows` increasing; None:
    every row, ``v = i``) and its matched column; `node_of_row` maps a row
    to its node (-1: not in the graph).  An arc goes from the pair of row
    ``i`` to the pair of row ``mu_col[j]`` for every entry ``(i, j)``
    between two pairs of the graph.  Only the entries of `rows` are read,
    and they come out sorted by tail with no sort.  With every row in the
    graph (a perfect matching) the graph is the matrix's own CSR with its
    column indices renamed, self-loops included (the components steps
    ignore them); otherwise self-loops are dropped.
    """
    xp = _csr.array_module(ptr, ind, mu_col)
    if rows is None:
        return ptr, mu_col[ind]
    k = int(rows.shape[0])
    owner, pos = _csr.expand_segments(ptr, rows)      # owner: the node of each entry's row
    node_ext = xp.concatenate([node_of_row, xp.full(1, -1, dtype=node_of_row.dtype)])
    dst = node_ext[mu_col[ind[pos]]]                   # mu_col = -1 (unmatched column) reads the -1 slot
    keep = (dst >= 0) & (dst != owner)
    src = owner[keep]
    gptr = xp.zeros(k + 1, dtype=ptr.dtype)
    if k:
        xp.cumsum(xp.bincount(src, minlength=k), dtype=gptr.dtype, out=gptr[1:])
    return gptr, dst[keep].astype(ptr.dtype, copy=False)


def _scc_blocks(gptr, gind, k, scc, options):
    if scc == "tarjan":
        block, nb, st = _scc.tarjan_scc(_host(gptr), _host(gind), k)
        st = dict(st, scc_method="tarjan")
        return _backend.to_backend(block, "cupy" if _backend.is_cupy_array(gptr) else "numpy"), nb, st
    return _scc.fwbw_scc(gptr, gind, k, **(options or {}))


def _out_dtype(m, n):
    return np.int32 if max(m, n) < np.iinfo(np.int32).max else np.int64


def _decompose(g, mu_row, mu_col, *, reach="scipy", scc="tarjan", scc_options=None, stats=None):
    """The decomposition of the canonical graph `g` from a maximum matching
    (``mu_row``: row -> column, ``mu_col``: column -> row, -1 unmatched, on
    `g`'s backend).  `reach` and `scc` pick the engines (see the module
    docstring); every combination gives the same coarse sets and the same
    fine blocks (as sets), which the tests check."""
    if reach not in REACH_ENGINES:
        raise ValueError(f"reach must be one of {REACH_ENGINES}, got {reach!r}")
    if scc not in SCC_ENGINES:
        raise ValueError(f"scc must be one of {SCC_ENGINES}, got {scc!r}")
    xp = g.xp
    m, n = g.shape
    stats = {} if stats is None else stats
    stats.update(reach=reach, scc=scc)
    idt = g.indices.dtype
    mu_row = xp.asarray(mu_row).astype(idt, copy=False)
    mu_col = xp.asarray(mu_col).astype(idt, copy=False)

    t0 = _clock(g.backend)
    row_set, col_set = _coarse(g, mu_row, mu_col, reach)
    t1 = _clock(g.backend)

    # fine: SCCs of the square part, nodes = its rows in increasing order
    in_r2 = row_set == 2
    rows2 = xp.flatnonzero(in_r2).astype(idt, copy=False)
    k = int(rows2.shape[0])
    if k == m:
        # every row is in R2: no row is unmatched, so C3 is empty, and no
        # column of C0 has an entry (it would put its rows in R1): every
        # entry lies in R2 x C2 and the graph is A's own CSR, renamed
        gptr, gind = square_graph(g.indptr, g.indices, mu_col, None, None)
    else:
        node_of_row = xp.full(m, -1, dtype=idt)
        node_of_row[rows2] = xp.arange(k, dtype=idt)
        gptr, gind = square_graph(g.indptr, g.indices, mu_col, rows2, node_of_row)
    block, nb, sstats = _scc_blocks(gptr, gind, k, scc, scc_options)
    stats.update(sstats)
    stats["square_arcs"] = int(gind.shape[0])
    t2 = _clock(g.backend)

    # assembly: p = [R1, R2 by block, R3, R0], q = [C0, C1, C2 by block, C3]
    odt = _out_dtype(m, n)
    c0 = xp.flatnonzero(col_set == 0)
    c1 = xp.flatnonzero(col_set == 1)
    c3 = xp.flatnonzero(col_set == 3)
    r0 = xp.flatnonzero(row_set == 4)
    order = xp.argsort(block * max(k, 1) + xp.arange(k, dtype=np.int64))
    rows2 = rows2[order]
    p = xp.concatenate([mu_col[c1], rows2, mu_col[c3], r0]).astype(odt, copy=False)
    q = xp.concatenate([c0, c1, mu_row[rows2], c3]).astype(odt, copy=False)
    n0, n1, n3, nr0 = (int(a.shape[0]) for a in (c0, c1, c3, r0))
    rr = np.array([0, n1, n1 + k, n1 + k + n3, m], dtype=np.int64)
    cc = np.array([0, n0, n0 + n1, n0 + n1 + k, n], dtype=np.int64)
    if rr[4] != rr[3] + nr0 or cc[4] != cc[3] + n3:  # pragma: no cover - would be a bug
        raise RuntimeError("dulmage_mendelsohn: the coarse sets do not add up")
    offs = xp.zeros(nb + 1, dtype=np.int64)
    if nb:
        xp.cumsum(xp.bincount(block, minlength=nb), out=offs[1:])
    parts_r, parts_s = [], []
    if cc[2] > 0:                       # the horizontal part is one block
        parts_r.append(xp.zeros(1, dtype=np.int64))
        parts_s.append(xp.zeros(1, dtype=np.int64))
    parts_r.append(offs[:-1] + int(rr[1]))
    parts_s.append(offs[:-1] + int(cc[2]))
    if rr[2] < m:                       # the vertical part is one block
        parts_r.append(xp.full(1, int(rr[2]), dtype=np.int64))
        parts_s.append(xp.full(1, int(cc[3]), dtype=np.int64))
    parts_r.append(xp.full(1, m, dtype=np.int64))
    parts_s.append(xp.full(1, n, dtype=np.int64))
    r = xp.concatenate(parts_r).astype(odt, copy=False)
    s = xp.concatenate(parts_s).astype(odt, copy=False)
    t3 = _clock(g.backend)
    stats.update(time_coarse=t1 - t0, time_fine=t2 - t1, time_assemble=t3 - t2)
    out = lambda a: _backend.output_like(a, g.cupy_out)  # noqa: E731
    return DulmageMendelsohnResult(
        p=out(p), q=out(q), r=out(r), s=out(s),
        rr=out(xp.asarray(rr).astype(odt)), cc=out(xp.asarray(cc).astype(odt)),
        structural_rank=int(n1 + k + n3), nblocks=int(r.shape[0]) - 1, shape=(m, n), stats=stats)


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------


@_backend.device_entry
def dulmage_mendelsohn(A: GraphLike, *, backend: Backend = "auto") -> DulmageMendelsohnResult:
    """Dulmage–Mendelsohn decomposition of a sparse matrix (MATLAB ``dmperm``).

    Finds row and column permutations ``p``, ``q`` such that
    ``A[p][:, q]`` is block upper triangular: a coarse split into an
    underdetermined (horizontal), a well-determined (square) and an
    overdetermined (vertical) part, and the square part's fine split into
    irreducible diagonal blocks with zero-free diagonals.

    Parameters
    ----------
    A : sparse matrix or array, or tuple
        ``m x n``: scipy.sparse CSR/CSC/COO, cupyx.scipy.sparse, or
        ``(indptr, indices, shape)`` CSR arrays (NumPy or CuPy).  Every
        stored entry is an entry of the pattern, **explicit zeros
        included** (see Notes).
    backend : str, optional
        ``"auto"`` (default: the GPU when CuPy finds one), ``"numpy"``,
        ``"cupy"``, or any other backend the matching functions accept; the
        matching runs there, and every step after it runs on the GPU for
        ``"cupy"`` and on the host (NumPy/SciPy) otherwise.

    Returns
    -------
    DulmageMendelsohnResult
        ``p``, ``q``, ``r``, ``s``, ``rr``, ``cc`` (MATLAB's outputs,
        0-based; CuPy arrays for GPU input, NumPy otherwise),
        ``structural_rank``, ``nblocks``, ``shape`` and ``stats``.

    Raises
    ------
    TypeError
        Dense or unsupported input.
    ValueError
        Malformed input or an unknown `backend`.

    See Also
    --------
    block_triangular_form : square matrices, square blocks only.
    gpumatch.structural_rank

    Notes
    -----
    The layout of ``B = A[p][:, q]`` (MATLAB's ``[p,q,r,s,cc,rr] =
    dmperm(A)`` less one on every index)::

        columns:   cc[0]  cc[1]  cc[2]  cc[3]  cc[4]
        rr[0]      A11    A12    A13    A14          A12, A23, A34 square,
        rr[1]      0      0      A23    A24          zero-free diagonals;
        rr[2]      0      0      0      A34          A11: unmatched columns,
        rr[3]      0      0      0      A44          A44: unmatched rows
        rr[4]

    The sets of rows and columns of each coarse part are unique [1]_:
    columns ``C0 ∪ C1`` are those reachable from an unmatched column by an
    alternating path, rows ``R3 ∪ R0`` those reachable from an unmatched
    row, whatever maximum matching is used (which of them are the unmatched
    ones depends on the matching; their number does not).  The fine blocks of the square
    part (the strongly connected components of its graph of matched pairs)
    are unique as sets too; their order is one topological order of the
    block graph, and the order inside a set is unspecified, so ``p`` and
    ``q`` may differ from MATLAB's and between backends.  Like MATLAB, the
    horizontal part is one fine block (the first, when it has columns) and
    the vertical part one (the last, when it has rows).  The steps follow
    Pothen and Fan [2]_ and Davis [3]_.

    Explicit zeros: gpumatch treats every stored entry as an edge, as
    SciPy's ``maximum_bipartite_matching`` and ``structural_rank`` do.
    CSparse's ``cs_dmperm`` also reads only the pattern (a zero stored in
    it counts).  MATLAB does not keep stored zeros in its sparse matrices
    (they are squeezed out when the matrix is built or changed), so
    ``dmperm`` in MATLAB sees the nonzero pattern.  For MATLAB's answer on a SciPy matrix
    that stores zeros, call ``A.eliminate_zeros()`` first.

    Complexity: the maximum matching (see :func:`gpumatch.bipartite_matching`),
    then O(m + n + nnz) for the two searches, the graph of the square part,
    its strongly connected components (SciPy's Pearce search on the host;
    trim + forward-backward rounds on the GPU, whose level-synchronous
    searches cost one launch per level, with a host finish for what is left
    after :data:`gpumatch.structure._scc.MAX_ROUNDS` rounds or a search
    deeper than :data:`gpumatch.structure._scc.MAX_LEVELS`) and the
    assembly.

    References
    ----------
    .. [1] A. L. Dulmage, N. S. Mendelsohn, "Coverings of bipartite graphs",
           Canadian J. Math. 10, 1958, pp. 517-534.
           :doi:`10.4153/CJM-1958-052-0`
    .. [2] A. Pothen, C.-J. Fan, "Computing the block triangular form of a
           sparse matrix", ACM Trans. Math. Softw. 16(4), 1990, pp. 303-324.
           :doi:`10.1145/98267.98287`
    .. [3] T. A. Davis, "Direct Methods for Sparse Linear Systems", SIAM,
           2006, section 7.4. :doi:`10.1137/1.9780898718881`

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from gpumatch import dulmage_mendelsohn
    >>> A = sp.csr_matrix(np.array([[1, 0, 0, 0],
    ...                             [1, 1, 1, 0],
    ...                             [0, 1, 1, 0],
    ...                             [0, 0, 1, 1]]))
    >>> dm = dulmage_mendelsohn(A, backend="numpy")
    >>> dm.structural_rank, dm.nblocks, dm.p.tolist(), dm.r.tolist()
    (4, 3, [3, 1, 2, 0], [0, 1, 3, 4])
    >>> B = A[dm.p][:, dm.q].toarray()
    >>> bool((B.diagonal() != 0).all()), int(np.tril(B, -1).sum())  # one entry below: inside the 2 x 2 block
    (True, 1)

    A structurally singular matrix has a horizontal and a vertical part:

    >>> A = sp.csr_matrix(np.array([[1, 1, 1],
    ...                             [0, 0, 1],
    ...                             [0, 0, 1]]))
    >>> dm = dulmage_mendelsohn(A, backend="numpy")
    >>> dm.structural_rank, dm.rr.tolist(), dm.cc.tolist()
    (2, [0, 1, 1, 2, 3], [0, 1, 2, 2, 3])
    """
    t0 = time.perf_counter()
    name = _backend.resolve_backend(backend)
    arrays, reach, scc = _engines_for(name)
    g = as_csr_graph(A, arrays, name="A")
    mu_row, mu_col, mstats = _maximum_matching(g, name)
    t1 = _clock(arrays)
    stats = {"backend": name, "time_matching": t1 - t0, "matching": mstats}
    res = _decompose(g, mu_row, mu_col, reach=reach, scc=scc, stats=stats)
    stats["time_total"] = _clock(arrays) - t0
    return res


@_backend.device_entry
def block_triangular_form(A: GraphLike, *, backend: Backend = "auto") -> BlockTriangularResult:
    """Permute a square sparse matrix to block upper triangular form.

    Finds ``p``, ``q`` and block boundaries ``r`` such that
    ``B = A[p][:, q]`` is block upper triangular with irreducible square
    diagonal blocks ``B[r[k]:r[k+1], r[k]:r[k+1]]`` (the form sparse direct
    solvers such as KLU factorize block by block).  Where ``A`` is
    structurally nonsingular the diagonal of ``B`` is zero-free and the
    blocks are the fine Dulmage–Mendelsohn blocks.

    Parameters
    ----------
    A : sparse matrix or array, or tuple
        ``n x n``, as in :func:`dulmage_mendelsohn` (explicit zeros count as
        entries).
    backend : str, optional
        As in :func:`dulmage_mendelsohn`.

    Returns
    -------
    BlockTriangularResult
        ``p``, ``q``, ``r``, ``nblocks``, ``structural_rank``, ``shape``,
        ``stats``.

    Raises
    ------
    ValueError
        `A` is not square, is malformed, or `backend` is unknown.
    TypeError
        Dense or unsupported input.

    See Also
    --------
    dulmage_mendelsohn

    Notes
    -----
    A maximum matching gives the diagonal; the blocks are the strongly
    connected components of the graph of matched pairs, in topological
    order [1]_ [2]_ (SciPy's Pearce search on the host; trim +
    forward-backward on the GPU).  For a structurally singular ``A`` the matching is completed
    by pairing the unmatched rows with the unmatched columns (both in
    increasing order) before the components are found, as SuiteSparse's BTF
    does: ``B`` is still block upper triangular with square irreducible
    blocks, ``n - structural_rank`` of its diagonal positions are not stored
    entries, and the blocks then depend on that pairing.  Use
    :func:`dulmage_mendelsohn` for the unique coarse decomposition of such a
    matrix.

    References
    ----------
    .. [1] I. S. Duff, J. K. Reid, "An implementation of Tarjan's algorithm
           for the block triangularization of a matrix", ACM Trans. Math.
           Softw. 4(2), 1978, pp. 137-147. :doi:`10.1145/355780.355785`
    .. [2] A. Pothen, C.-J. Fan, "Computing the block triangular form of a
           sparse matrix", ACM Trans. Math. Softw. 16(4), 1990, pp. 303-324.
           :doi:`10.1145/98267.98287`

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from gpumatch import block_triangular_form
    >>> A = sp.csr_matrix(np.array([[1, 1, 0],
    ...                             [1, 1, 0],
    ...                             [1, 1, 1]]))
    >>> btf = block_triangular_form(A, backend="numpy")
    >>> btf.nblocks, btf.block_sizes().tolist()
    (2, [1, 2])
    >>> B = A[btf.p][:, btf.q].toarray()
    >>> bool(np.all(B.diagonal() != 0)), bool(B[1:, 0].sum() == 0)
    (True, True)
    """
    t0 = time.perf_counter()
    name = _backend.resolve_backend(backend)
    arrays, _, scc = _engines_for(name)
    g = as_csr_graph(A, arrays, name="A")
    if g.m != g.n:
        raise ValueError(f"block_triangular_form needs a square matrix, got shape {g.shape}; "
                         "use dulmage_mendelsohn for rectangular matrices")
    mu_row, mu_col, mstats = _maximum_matching(g, name)
    t1 = _clock(arrays)
    stats = {"backend": name, "time_matching": t1 - t0, "matching": mstats}
    return _btf(g, mu_row, mu_col, scc=scc, stats=stats, t_start=t0)


def _btf(g, mu_row, mu_col, *, scc="tarjan", scc_options=None, stats=None, t_start=None):
    """Block triangular form of the square graph `g` from a maximum matching."""
    xp = g.xp
    n = g.n
    idt = g.indices.dtype
    stats = {} if stats is None else stats
    stats["scc"] = scc
    mu_row = xp.asarray(mu_row).astype(idt, copy=True)
    mu_col = xp.asarray(mu_col).astype(idt, copy=True)
    t0 = _clock(g.backend)
    rank = int(xp.count_nonzero(mu_row >= 0))
    if rank < n:  # complete the matching: i-th free row with the i-th free column
        fr = xp.flatnonzero(mu_row < 0).astype(idt, copy=False)
        fc = xp.flatnonzero(mu_col < 0).astype(idt, copy=False)
        mu_row[fr] = fc
        mu_col[fc] = fr
    gptr, gind = square_graph(g.indptr, g.indices, mu_col, None, None)
    block, nb, sstats = _scc_blocks(gptr, gind, n, scc, scc_options)
    stats.update(sstats)
    stats["square_arcs"] = int(gind.shape[0])
    t1 = _clock(g.backend)
    odt = _out_dtype(n, n)
    p = xp.argsort(block * max(n, 1) + xp.arange(n, dtype=np.int64))
    q = mu_row[p]
    r = xp.zeros(nb + 1, dtype=np.int64)
    if nb:
        xp.cumsum(xp.bincount(block, minlength=nb), out=r[1:])
    t2 = _clock(g.backend)
    stats.update(time_fine=t1 - t0, time_assemble=t2 - t1)
    if t_start is not None:
        stats["time_total"] = t2 - t_start
    out = lambda a: _backend.output_like(a.astype(odt, copy=False), g.cupy_out)  # noqa: E731
    return BlockTriangularResult(p=out(p), q=out(q), r=out(r), nblocks=int(nb), structural_rank=rank,
                                 shape=(n, n), stats=stats)

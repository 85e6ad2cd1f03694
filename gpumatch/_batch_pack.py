"""Packing many problems into one solve (:mod:`gpumatch.batch`'s disjoint unions).

Matching: the block-diagonal graph of a pack of graphs; each block's share
of a maximum matching of the union is a maximum matching of that block.
Flow: a union of networks joined by a super source and a super sink (the
argument that every network's share is its own maximum flow, with the same
minimum cut as a single call, is in :func:`_pack_flow`).  Assignment: the
block-diagonal matrix of a pack, every block turned to have no more rows
than columns (:func:`_pack_assignment`).  The arrays are
built with the backend's array module (on the GPU for CuPy).  The members
of a pack that are canonical scipy CSR are checked together, vectorised
over the pack (:func:`_fast_graphs`).
"""

from __future__ import annotations


import numpy as np
import scipy.sparse as sp

from . import _backend
from . import flow as _flow
from . import matching as _matching
from ._validation import CSRGraph, index_dtype_for
from .csr import segment_owner
from .flow._maxflow import MaximumFlowResult
from .lap import _solve
from .lap import api as _lap

_I64_MAX = int(np.iinfo(np.int64).max)
#: Integers up to this size are exact in float64.
_F64_EXACT = 1 << 53


def _concat(xp, arrays, dtype):
    """Concatenate arrays of one backend or both onto `xp` (one upload for host parts)."""
    if xp is np or not any(_backend.is_cupy_array(a) for a in arrays):
        joined = np.concatenate([_backend.to_numpy(a).astype(dtype, copy=False) for a in arrays]) \
            if arrays else np.zeros(0, dtype=dtype)
        return xp.asarray(joined)
    return xp.concatenate([xp.asarray(a).astype(dtype, copy=False) for a in arrays])


def _offsets(sizes):
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(np.asarray(sizes, dtype=np.int64), out=off[1:])
    return off


def _fast_graphs(kind, members):
    """Host CSRGraphs of the members that are canonical scipy CSR, checked together.

    The checks of :func:`gpumatch._validation.as_csr_graph` (and, for flow,
    of the capacities), vectorised over the pack instead of a few Python
    calls per graph: pointers start at 0, end at the number of indices and
    never decrease; column indices are in range and strictly increase
    within each row (so there are no duplicates to merge); capacities are
    non-negative integers that fit int64.  Members of another kind, and any
    member that fails a check, are left to the per-problem validation,
    which canonicalises them or raises the single call's error.
    """
    cand = []
    for j, (_, obj, _, _, _) in enumerate(members):
        if not (sp.issparse(obj) and obj.format == "csr"):
            continue
        ip, ix = obj.indptr, obj.indices
        if not (isinstance(ip, np.ndarray) and isinstance(ix, np.ndarray) and ip.ndim == 1 and ix.ndim == 1
                and ip.dtype.kind in "iu" and ix.dtype.kind in "iu"):
            continue
        m, n = (int(x) for x in obj.shape)
        if ip.shape[0] != m + 1:
            continue
        if kind == "flow":
            d = obj.data
            if m != n or not isinstance(d, np.ndarray) or d.dtype.kind not in "iub" or d.shape != ix.shape:
                continue
        cand.append(j)
    if not cand:
        return {}
    objs = [members[j][1] for j in cand]
    P = len(cand)
    # pointers
    poff = _offsets([o.indptr.shape[0] for o in objs])
    ptr = np.concatenate([o.indptr.astype(np.int64, copy=False) for o in objs])
    nnz = np.asarray([o.indices.shape[0] for o in objs], dtype=np.int64)
    ok = (ptr[poff[:-1]] == 0) & (ptr[poff[1:] - 1] == nnz)
    if ptr.shape[0] > 1:
        dec = np.diff(ptr) < 0
        dec[poff[1:-1] - 1] = False  # steps from one graph's pointers to the next's
        if dec.any():
            ok &= np.bincount(np.searchsorted(poff[1:], np.flatnonzero(dec), side="right"), minlength=P) == 0
    keep = np.flatnonzero(ok)
    if keep.shape[0] < P:   # the pointers of the members left
        objs = [objs[k] for k in keep]
        if not objs:
            return {}
        P = len(objs)
        poff = _offsets([o.indptr.shape[0] for o in objs])
        ptr = np.concatenate([o.indptr.astype(np.int64, copy=False) for o in objs])
    eoff = _offsets([o.indices.shape[0] for o in objs])
    E = int(eoff[-1])
    if E:
        idx = np.concatenate([o.indices.astype(np.int64, copy=False) for o in objs])
        pid = segment_owner(eoff, E)
        ncols = np.asarray([o.shape[1] for o in objs], dtype=np.int64)
        bad = (idx < 0) | (idx >= ncols[pid])
        own = segment_owner(poff, ptr.shape[0])
        heads = np.ones(ptr.shape[0], dtype=bool)
        heads[poff[1:] - 1] = False  # each graph's last pointer is no row start
        starts = np.zeros(E + 1, dtype=bool)
        starts[(ptr + eoff[own])[heads]] = True
        bad[1:] |= (idx[1:] <= idx[:-1]) & ~starts[1:E]
        if kind == "flow":
            # as int64, a negative capacity and a uint64 one past int64 are both < 0
            dat = np.concatenate([o.data.astype(np.int64, copy=False) for o in objs])
            bad |= dat < 0
        good = np.bincount(pid[bad], minlength=P) == 0 if bad.any() else np.ones(P, dtype=bool)
    else:
        good = np.ones(P, dtype=bool)
    found = {}
    for k, o in zip(keep[good], (o for o, gd in zip(objs, good) if gd)):
        m, n = (int(x) for x in o.shape)
        data = o.data.astype(np.int64) if kind == "flow" else None
        found[cand[k]] = CSRGraph(o.indptr, o.indices, (m, n), "numpy", False, data, "scipy", "csr",
                                  isinstance(o, getattr(sp, "sparray", ())))
    return found


def _pack_matching(gs, perm_type, backend, resolved, options):
    """Solve the graphs `gs` (canonical CSRGraphs) as one block-diagonal graph; matchings in order."""
    xp = _backend.get_xp(resolved)
    roff = _offsets([g.m for g in gs])
    coff = _offsets([g.n for g in gs])
    eoff = _offsets([g.nnz for g in gs])
    M, N, E = int(roff[-1]), int(coff[-1]), int(eoff[-1])
    # block-diagonal CSR: row pointers shifted by the entries before each
    # block, column indices by the columns before it
    heads = _concat(xp, [g.indptr[:-1] for g in gs], np.int64)
    indices = _concat(xp, [g.indices for g in gs], np.int64)
    roff_x, coff_x, eoff_x = xp.asarray(roff), xp.asarray(coff), xp.asarray(eoff)
    heads += eoff_x[segment_owner(roff_x, M)]
    indices += coff_x[segment_owner(eoff_x, E)]
    idt = index_dtype_for(M + 1, N + 1, E + 1)
    indptr = xp.concatenate([heads, xp.asarray([E], dtype=np.int64)]).astype(idt)
    perm = _matching.maximum_bipartite_matching((indptr, indices.astype(idt), (M, N)), perm_type,
                                                backend=backend, **options)
    perm = xp.asarray(perm).astype(np.int64)
    # back to each graph's numbering: the matched vertex lies in the same block
    own, other = (coff, roff) if perm_type == "row" else (roff, coff)
    length = N if perm_type == "row" else M
    block = segment_owner(xp.asarray(own), length)
    local = xp.where(perm >= 0, perm - xp.asarray(other)[block], -1).astype(np.int32)
    host = None if all(g.cupy_out for g in gs) else _backend.to_numpy(local)
    out = []
    for i, g in enumerate(gs):
        a, b = int(own[i]), int(own[i + 1])
        if g.cupy_out:
            out.append(_backend.cp.asarray(local[a:b]).copy())
        else:
            out.append(host[a:b].copy())
    return out


def _pack_assignment(problems, backend):
    """Solve validated assignment problems as one; ``(row_ind, col_ind)`` per problem, in order.

    `problems`: ``(indptr, indices, cost, (m, n), cupy_out)`` as
    :func:`gpumatch.lap._problems._sparse_problem` gives them (canonical CSR, in
    minimisation form, zeros and forbidden pairs dropped).  A problem with
    more rows than columns is transposed, so every block has ``m_i <= n_i``
    and the block-diagonal matrix of the pack has no more rows than
    columns.  A full matching of it then covers every row, so it holds a
    full matching of every block (the blocks share no row or column), and
    its weight is the sum of theirs: it is least exactly when each block's
    is.  One :func:`gpumatch.min_weight_full_bipartite_matching` call
    solves the pack; a block without a full matching makes that call raise,
    and the caller then solves the problems one by one, so that the error
    names its problem.  Integer and floating-point problems are packed apart
    (integers stay exact).
    """
    out = [None] * len(problems)
    for kind in "if":
        members = [k for k, p in enumerate(problems) if p[2].dtype.kind == kind]
        if not members:
            continue
        blocks = []
        for k in members:
            indptr, indices, c, (m, n), _ = problems[k]
            flip = m > n
            if flip:
                indptr, indices, c = _solve._transpose(indptr, indices, c, m, n)
                m, n = n, m
            blocks.append((np.asarray(indptr, dtype=np.int64), indices, c, m, n, flip))
        roff = _offsets([b[3] for b in blocks])
        coff = _offsets([b[4] for b in blocks])
        eoff = _offsets([b[1].shape[0] for b in blocks])
        M, N, E = int(roff[-1]), int(coff[-1]), int(eoff[-1])
        indptr = np.concatenate([b[0][:-1] + eoff[i] for i, b in enumerate(blocks)] + [np.array([E])])
        indices = np.concatenate([b[1].astype(np.int64) + coff[i] for i, b in enumerate(blocks)]
                                 + [np.zeros(0, dtype=np.int64)])
        c = np.concatenate([b[2] for b in blocks] + [np.zeros(0, dtype=blocks[0][2].dtype)])
        idt = index_dtype_for(M + 1, N + 1, E + 1)
        joined = sp.csr_matrix((c, indices.astype(idt), indptr.astype(idt)), shape=(M, N))
        _, cols = _lap.min_weight_full_bipartite_matching(joined, backend=backend)
        cols = _backend.to_numpy(cols).astype(np.int64)
        for i, (k, b) in enumerate(zip(members, blocks)):
            m, n, flip = b[3], b[4], b[5]
            local = cols[roff[i]:roff[i + 1]] - coff[i]
            idx = np.int32 if max(m, n) <= np.iinfo(np.int32).max else np.int64
            if flip:    # the block's rows are the problem's columns
                order = np.argsort(local, kind="stable")
                rows, cc = local[order].astype(idx), order.astype(np.int64)
            else:
                rows, cc = np.arange(m, dtype=np.int64), local.astype(idx)
            cupy_out = problems[k][4]
            out[k] = (_backend.output_like(rows, cupy_out), _backend.output_like(cc, cupy_out))
    return out


def _segment_sums(xp, values, starts, ends):
    """Exact Python-int sums of non-negative int64 `values[starts[i]:ends[i]]` (hi/lo halves, no wrap)."""
    hi = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(values >> 32)])
    lo = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(values & 0xFFFFFFFF)])
    hs = _backend.to_numpy(hi[ends] - hi[starts])
    ls = _backend.to_numpy(lo[ends] - lo[starts])
    return [(int(h) << 32) + int(low) for h, low in zip(hs, ls)]


class _PackOverflow(Exception):
    """The joined capacities do not fit int64: the pack is solved one by one."""


def _pack_flow(problems, backend, resolved, options):
    """Solve networks ``(g, source, sink)`` as one; a MaximumFlowResult per network, in order.

    The joined network: the disjoint union of the networks (network i's
    vertices shifted by ``off_i``), a super source ``S`` with an arc
    ``S -> s_i`` of capacity ``c_i``, the capacity out of ``s_i`` (self-loops
    left out), and a super sink ``T`` with an arc ``t_i -> T`` of capacity
    ``c_i + 1``.

    Why each network gets its own maximum flow.  Let F be a maximum S-T flow
    of the joined network and f_i its restriction to network i (arcs inside
    it).  Conservation holds for f_i at every vertex of network i but s_i
    and t_i; summed over network i, the net flow out of s_i within it equals
    the net flow into t_i, which is F(S, s_i) = F(t_i, T) =: v_i.  So f_i is
    an s_i-t_i flow of value v_i, and v_i <= maxflow_i.  Conversely the sum
    of maximum flows g_i of the networks, with S and T arcs carrying
    maxflow_i <= c_i, is an S-T flow of value sum_i maxflow_i.  Since F is
    maximum, sum_i v_i >= sum_i maxflow_i, hence v_i = maxflow_i for every
    i: each f_i is a maximum flow of network i and its value is F(S, s_i).

    Why each network gets the same minimum cut as alone.  The solver
    returns as the source side the vertices that cannot reach T in the
    residual graph of F.  A residual path from v in network i to T cannot
    pass through S (S would then reach T, and F would not be maximum), so it
    stays in network i until it leaves by the arc t_i -> T, which is never
    saturated (it carries v_i <= c_i < c_i + 1).  So v reaches T iff v
    reaches t_i in the residual graph of f_i.  The set of vertices that can
    reach the sink in the residual graph is the same for every maximum flow
    (Picard and Queyranne, 1980), so it is exactly the source side that a
    single call returns for network i.

    The flow matrix of network i is the diagonal block of the joined flow
    matrix: net flows, pattern = network i's arcs plus their transposes,
    as a single call builds it.
    """
    xp = _backend.get_xp(resolved)
    P = len(problems)
    gs = [g for g, _, _ in problems]
    voff = _offsets([g.n for g in gs])
    eoff = _offsets([g.nnz for g in gs])
    N, E = int(voff[-1]), int(eoff[-1])
    S, T, VT = N, N + 1, N + 2
    src = voff[:-1] + np.asarray([s for _, s, _ in problems], dtype=np.int64)
    snk = voff[:-1] + np.asarray([t for _, _, t in problems], dtype=np.int64)
    voff_x, eoff_x = xp.asarray(voff), xp.asarray(eoff)
    src_x, snk_x = xp.asarray(src), xp.asarray(snk)

    heads = _concat(xp, [g.indptr[:-1] for g in gs], np.int64)
    heads += eoff_x[segment_owner(voff_x, N)]
    indptr = xp.concatenate([heads, xp.asarray([E], dtype=np.int64)])
    indices = _concat(xp, [g.indices for g in gs], np.int64)
    indices += voff_x[segment_owner(eoff_x, E)]
    cap = _concat(xp, [g.data for g in gs], np.int64)
    rows = segment_owner(indptr, E)

    # c_i: capacity out of s_i, exact; the pack is refused when the joined
    # network's source capacity (or c_i + 1) would not fit int64
    c = _segment_sums(xp, xp.where(indices != rows, cap, 0), indptr[src_x], indptr[src_x + 1])
    if sum(c) + P > _I64_MAX:
        raise _PackOverflow
    c_x = xp.asarray(np.asarray(c, dtype=np.int64))

    # the joined CSR: row t_i gains its arc to T at its end (T is the largest
    # index), row S lists the sources in order, row T is empty
    extra = xp.zeros(N, dtype=np.int64)
    extra[snk_x] = 1
    counts = (indptr[1:] - indptr[:-1]) + extra
    jptr = xp.zeros(VT + 1, dtype=np.int64)
    xp.cumsum(counts, out=jptr[1:N + 1])
    jptr[N + 1] = jptr[N] + P
    jptr[N + 2] = jptr[N + 1]
    EJ = E + 2 * P
    shift = jptr[:N] - indptr[:N]                  # arcs to T in the rows before
    pos = xp.arange(E, dtype=np.int64) + shift[rows]
    idt = index_dtype_for(VT + 1, EJ + 1)
    jind = xp.empty(EJ, dtype=np.int64)
    jcap = xp.empty(EJ, dtype=np.int64)
    jind[pos] = indices
    jcap[pos] = cap
    tpos = jptr[snk_x + 1] - 1
    jind[tpos] = T
    jcap[tpos] = c_x + 1
    spos = jptr[N] + xp.arange(P, dtype=np.int64)
    jind[spos] = src_x
    jcap[spos] = c_x

    if xp is not np and int(jcap.max()) < _F64_EXACT:
        cpx = _backend.cpx_sparse  # CuPy is there: xp is cupy
        joined = cpx.csr_matrix((jcap.astype(np.float64), jind.astype(idt), jptr.astype(idt)), shape=(VT, VT))
    else:
        # NumPy backends, or capacities that a float64 cupyx matrix cannot hold
        joined = sp.csr_matrix((_backend.to_numpy(jcap), _backend.to_numpy(jind).astype(idt),
                                _backend.to_numpy(jptr).astype(idt)), shape=(VT, VT))
        joined.has_sorted_indices = True
    res = _flow.maximum_flow(joined, S, T, backend=backend, **options)

    # split: each network's diagonal block of the joined flow matrix
    F = res.flow
    fxp = _backend.cp if _backend.is_cupy_sparse(F) else np
    fptr = F.indptr.astype(np.int64)
    fnnz = int(F.indices.shape[0])
    frow = segment_owner(fptr, fnnz)
    fcol = F.indices.astype(np.int64)
    values = F.data[int(fptr[S]):int(fptr[S + 1])]       # F(S, s_i), in order of i
    if int(values.shape[0]) != P:  # pragma: no cover - the pattern holds every S arc
        raise RuntimeError("batch: the joined flow lost an arc of the super source")
    keep = fxp.nonzero((frow < N) & (fcol < N))[0]
    krow = frow[keep]
    kcnt = fxp.bincount(krow, minlength=N) if keep.shape[0] else fxp.zeros(N, dtype=np.int64)
    kptr = fxp.zeros(N + 1, dtype=np.int64)
    fxp.cumsum(kcnt, out=kptr[1:])
    vo = fxp.asarray(voff)
    kcol = fcol[keep] - vo[segment_owner(vo, N)][krow]
    kdat = F.data[keep]
    side = res.source_side
    values = _backend.to_numpy(values).astype(np.int64)
    kptr_h = _backend.to_numpy(kptr)  # block bounds, read on the host
    if fxp is np or not all(g.cupy_out for g in gs):
        host = [kcol, kdat, side] if fxp is np else [_backend.to_numpy(a) for a in (kcol, kdat, side)]
    dev = [kptr, kcol, kdat, side] if fxp is not np else None
    stats = dict(res.stats, _vertices=VT, _arcs=EJ)
    out = []
    for i, g in enumerate(gs):
        a, b = int(voff[i]), int(voff[i + 1])
        n_i = b - a
        if g.cupy_out:  # CuPy in, CuPy out: a cupyx matrix of float64, as a single call gives
            cpx = _backend.cpx_sparse
            cp = _backend.cp
            ptr, col, dat, sd = (cp.asarray(x) for x in (dev or [kptr_h] + host))
            lo, hi = int(kptr_h[a]), int(kptr_h[b])
            idt_i = index_dtype_for(n_i + 1, hi - lo + 1)
            flow = cpx.csr_matrix((dat[lo:hi].astype(cp.float64), col[lo:hi].astype(idt_i),
                                   (ptr[a:b + 1] - ptr[a]).astype(idt_i)), shape=(n_i, n_i))
            side_i = sd[a:b].copy()
        else:
            col, dat, sd = host
            ptr = kptr_h
            lo, hi = int(ptr[a]), int(ptr[b])
            idt_i = index_dtype_for(n_i + 1, hi - lo + 1)
            cls = sp.csr_array if g.sparray else sp.csr_matrix
            flow = cls((dat[lo:hi].astype(np.int64), col[lo:hi].astype(idt_i),
                        (ptr[a:b + 1] - ptr[a]).astype(idt_i)), shape=(n_i, n_i))
            flow.has_sorted_indices = True
            side_i = sd[a:b].copy()
        out.append(MaximumFlowResult(np.int64(values[i]), flow, side_i, dict(stats)))
    return out

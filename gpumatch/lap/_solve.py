"""The assignment solve behind the public functions: the Numba engine (shortest
augmenting paths from auction start prices, the dense variant), or the GPU
auction and its host finish, on ``m <= n`` (the transpose otherwise); a
maximum matching first, and the extension that turns the cheapest maximum
matching into a full one (``full=False``); the potentials of the result."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import _backend
from ._checks import I64_MAX as _I64_MAX
from ._checks import INT_BOUND as _INT_BOUND
from ._checks import check_int_range as _check_int_range


def _transpose(indptr, indices, c, m, n):
    T = sp.csr_matrix((c, indices, indptr), shape=(m, n)).T.tocsr()
    return T.indptr.astype(np.int64, copy=False), T.indices, T.data


#: Epsilon scaling of the auction start prices: the first phase's ``eps`` is
#: ``max|c| / AUCTION_SCALING``, each next phase's the last one's divided by it.
#: On the random sparse family of issue 64 (weights 1..999), 16 and the
#: column-minima start took about 25 % fewer bids than the earlier first
#: ``eps`` of ``max|c| / 4``, factor 5 and zero prices (three phases instead
#: of four), and the exact phases that follow no longer.
AUCTION_SCALING = 16


def _narrowed(c, k):
    """`c` as int32 when every price and path length of the engine fits (the
    bound of :data:`_INT_BOUND` with ``2**30``), else `c` itself: the
    engine's random reads of prices and its heap then take half the cache."""
    if c.dtype.kind != "i" or c.size == 0:
        return c
    big = max(-int(c.min()), int(c.max()))
    if big * (4 * k + 8) >= 2 ** 30:
        return c
    return c.astype(np.int32)


def _run(indptr, indices, c, m, n, skip_failed, engine="numba", device=None):
    """The engine on ``m <= n`` (square problems start from the auction's
    prices).  Returns ``(x, y, u, v, status, failed)``, `u` and `v` of `c`'s
    dtype (`u` the row potentials of a full matching, :func:`_row_potentials`;
    not set when `status` < 0).  ``engine`` "cupy" or "numpy": the GPU
    auction (or its NumPy twin) then the exact host finish; `failed` is then
    its statistics."""
    if engine != "numba":
        from . import _driver

        x, v, cx, stats = _driver.solve_sparse(indptr, indices, c, m, n, engine, device=device)
        y = np.full(n, -1, dtype=np.int64)
        y[x[x >= 0]] = np.flatnonzero(x >= 0)
        return x, y, cx - v[x], v, 0, stats
    from . import _cpu

    work = _narrowed(c, m)
    x = np.full(m, -1, dtype=np.int64)
    y = np.full(n, -1, dtype=np.int64)
    v = np.zeros(n, dtype=work.dtype)
    failed = np.empty(m, dtype=np.int64)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    if m == n and m > 1 and not skip_failed:
        _auction_prices(indptr, indices, work, m, v)
    status = int(_cpu.solve(indptr, indices, work, m, n, bool(skip_failed), 2, x, y, v, failed))
    v = v.astype(c.dtype, copy=False)
    u = _row_potentials(indptr, indices, c, x, v) if status >= 0 and not skip_failed else None
    return x, y, u, v, status, failed


def _auction_prices(indptr, indices, c, m, v):
    """Start prices for a square problem from epsilon-scaling auction phases.

    Any prices are valid start prices of the exact engine on a square problem
    (every column ends matched, so no order between free and matched prices is
    needed); near-optimal ones make its searches short.  The prices start at
    the column minima (each column's least weight, as Jonker and Volgenant's
    column reduction), which leaves the first phase fewer bids than zero
    prices.  The first phase's ``eps`` is ``max|c| /``
    :data:`AUCTION_SCALING`, each next the last divided by it, down to 1
    (integers) or ``max|c| / (10 m)`` (floats).  The bids are capped
    (``10 nnz + m``) and prices kept above ``-2 (m + 1) max|c|``, which an
    input without a full matching reaches instead of ending; the exact
    engine then reports it.
    """
    from . import _cpu

    if c.size == 0:
        return
    _cpu.column_minima(indices, c, v)
    big = float(np.abs(c).max())
    f = AUCTION_SCALING
    T = c.dtype.type
    if c.dtype.kind == "i":
        R = int(big)
        eps0, eps_min, floor = T(max(1, R // f)), T(1), T(-2 * (m + 1) * max(R, 1))
    else:
        R = big if big > 0 else 1.0
        eps0, eps_min, floor = R / f, R / (10 * m), -2.0 * (m + 1) * R
    _cpu.auction_prices(indptr, indices, c, m, m, v, eps0, T(f), eps_min, floor, 10 * indices.shape[0] + m)


def _solve_dense(indptr, indices, c, dense, m, n, what):
    from . import _cpu

    x = np.full(m, -1, dtype=np.int64)
    y = np.full(n, -1, dtype=np.int64)
    v = np.zeros(n, dtype=c.dtype)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    if m == n:      # any prices are valid start prices of a square problem: the column minima
        _cpu.dense_column_minima(dense, v)
    if _cpu.solve_dense(indptr, indices, c, dense, m, n, 2, x, y, v) < 0:
        raise ValueError(what)
    return x, dense[np.arange(m), x] - v[x], v


def _solve_dense_auction(indptr, indices, c, dense, m, n, what, engine, stats):
    """:func:`_solve_dense` by the dense auction on `engine`, made exact (with
    its potentials) by the host finish on the CSR view of the finite entries."""
    from . import _driver

    if indices.shape[0] < dense.size:      # forbidden pairs: is there a full assignment at all?
        if int((_maximum_matching(indptr, indices, m, n) >= 0).sum()) < m:
            raise ValueError(what)
    if m == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=c.dtype), np.zeros(n, dtype=c.dtype)
    xp = _backend.get_xp(engine)
    st, status, info = _driver.auction_dense(xp.asarray(dense), engine)
    if st is None:       # integer costs too large to scale exactly: the host engine
        return _solve_dense(indptr, indices, c, dense, m, n, what)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    x, v, cx = _driver.finish_on_host(st, indptr, indices, c, m, n)
    if stats is not None:
        stats.update(info)
        stats.update(st.stats)
    return x, cx - v[x], v


def _maximum_matching(indptr, indices, m, n, device=None):
    """A maximum matching (row -> column, -1 free) by gpumatch's compiled
    matching engine, or its GPU engine on the device CSR ``device =
    (indptr, indices)``."""
    if indices.shape[0] == 0:
        return np.full(m, -1, dtype=np.int64)
    from ..matching.api import maximum_bipartite_matching

    if device is not None:
        r2c = maximum_bipartite_matching((device[0], device[1], (m, n)), perm_type="column", backend="cupy")
        return _backend.to_numpy(r2c).astype(np.int64)
    r2c = maximum_bipartite_matching((indptr, indices, (m, n)), perm_type="column", backend="numba")
    return np.asarray(r2c, dtype=np.int64)


def _dummies(members, comp, need):
    """Pairs ``(member, dummy)`` linking each of `members` to the dummies of
    its component (``need[j]`` dummies for component `j`, numbered from 0
    component by component), and the number of dummies."""
    first = np.zeros(need.shape[0] + 1, dtype=np.int64)
    np.cumsum(need, out=first[1:])
    k = need[comp[members]]
    owner = np.repeat(members, k)
    offs = np.arange(int(k.sum()), dtype=np.int64) - np.repeat(np.cumsum(k) - k, k)
    return owner, first[comp[owner]] + offs, int(first[-1])


def _extended(indptr, indices, c, m, n, dc_rows, dc_cols, ndc, dr_rows, dr_cols, ndr):
    """The CSR of ``[[C, D], [E, .]]`` with weight 0 on the dummy entries:
    row ``dc_rows[t]`` on dummy column ``n + dc_cols[t]`` (`ndc` of them), and
    dummy row ``m + dr_rows[t]`` on column ``dr_cols[t]`` (`ndr` of them)."""
    rows = np.concatenate([np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr)), dc_rows, m + dr_rows])
    cols = np.concatenate([indices.astype(np.int64), n + dc_cols, dr_cols])
    vals = np.concatenate([c, np.zeros(dc_rows.shape[0] + dr_rows.shape[0], dtype=c.dtype)])
    order = np.argsort(rows, kind="stable")   # real entries first in each row, in their order
    ext_ptr = np.zeros(m + ndr + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=m + ndr), out=ext_ptr[1:])
    return ext_ptr, cols[order], vals[order]


def _solve_min(indptr, indices, c, m, n, full, what, engine="numba", stats=None):
    """Solve the minimisation form with ``m <= n``.  Returns ``(x, u, v, rows_left_free)``
    or raises ValueError (`full`) when no matching covers every row.

    A maximum matching (the compiled matching engine, or the GPU one for the
    ``"cupy"`` engine: a small part of the time) comes first: it tells at
    once whether a full matching exists, and, when none does and `full` is
    False, how to reduce the cheapest maximum matching to a full one (see
    :func:`assignment`).
    """
    from . import _cpu

    device = None
    if engine == "cupy" and indices.shape[0]:   # one upload serves the matching and the auction
        cp = _backend.cp
        device = (cp.asarray(indptr), cp.asarray(indices), cp.asarray(c))
    x0 = _maximum_matching(indptr, indices, m, n, device)
    k = int((x0 >= 0).sum())
    if k == m:
        x, y, u, v, status, st = _run(indptr, indices, c, m, n, False, engine, device)
        if stats is not None and isinstance(st, dict):
            stats.update(st)
        if status < 0:   # pragma: no cover - a full matching exists
            raise AssertionError("internal error: the engine found no full matching where one exists")
        return x, u, v, 0
    if full:
        raise ValueError(what)
    # Every maximum matching leaves m_j - k_j rows and n_j - k_j columns free
    # in each connected component j (k_j: x0's pairs there), among the rows
    # (columns) that alternating paths of x0 reach from its free rows
    # (columns).  Those rows get their component's m_j - k_j dummy columns of
    # weight 0, and, when it costs at most about nnz more entries, those
    # columns get its n_j - k_j dummy rows (a square problem, which the
    # auction prices speed up).  Every full matching of the extension holds
    # exactly k real pairs, a maximum matching, and the cheapest one the
    # cheapest of them.  (Per component, the dummies cost the sum of
    # |free-able rows_j| x (m_j - k_j) entries, not |free-able rows| x (m - k):
    # a tracking problem's many small components stay small.)
    y0 = np.full(n, -1, dtype=np.int64)
    y0[x0[x0 >= 0]] = np.flatnonzero(x0 >= 0)
    zr = np.flatnonzero(_cpu.alternating_reach(indptr, indices, m, x0, y0, np.flatnonzero(x0 < 0)))
    B = sp.csr_matrix((np.ones(indices.shape[0], dtype=np.int8), indices, indptr), shape=(m, n))
    T = B.T.tocsr()
    zc = np.flatnonzero(_cpu.alternating_reach(T.indptr.astype(np.int64), T.indices, n, y0, x0,
                                               np.flatnonzero(y0 < 0)))
    from scipy.sparse.csgraph import connected_components

    ncomp, comp = connected_components(sp.bmat([[None, B], [T, None]], format="csr"), directed=False)
    comp_r, comp_c = comp[:m].astype(np.int64), comp[m:].astype(np.int64)
    need_c = np.bincount(comp_r[x0 < 0], minlength=ncomp)    # m_j - k_j
    need_r = np.bincount(comp_c[y0 < 0], minlength=ncomp)    # n_j - k_j
    dc_rows, dc_cols, ndc = _dummies(zr, comp_r, need_c)
    dr_cols, dr_rows, ndr = _dummies(zc, comp_c, need_r)
    if dr_cols.shape[0] > indices.shape[0] + m:
        dr_cols = dr_rows = np.zeros(0, dtype=np.int64)
        ndr = 0
    ext_ptr, ext_idx, ext_c = _extended(indptr, indices, c, m, n, dc_rows, dc_cols, ndc, dr_rows, dr_cols, ndr)
    x, y, u, v, status, st = _run(ext_ptr, ext_idx, ext_c, m + ndr, n + ndc, False, engine)
    if stats is not None and isinstance(st, dict):
        stats.update(st)
    if status < 0:   # pragma: no cover - the extended problem always has a full matching
        raise AssertionError("internal error: the extended assignment problem has no full matching")
    u = u[:m].copy()
    x = x[:m]
    return np.where(x >= n, -1, x), u, v[:n].copy(), m - k


def _row_potentials(indptr, indices, c, x, v):
    """``u_i = c_{i, x_i} - v_{x_i}`` (every row is matched here)."""
    m = x.shape[0]
    if m == 0:
        return np.zeros(0, dtype=c.dtype)
    from . import _cpu

    return _cpu.matched_costs(indptr, indices, c, x) - v[x]


def _whole(c, k):
    """Float weights `c` as int64 when every one is a whole number that the
    integer engines solve exactly for a matching of `k` pairs (the bound of
    :func:`gpumatch.lap._checks.check_int_range`, and at most ``2**53``),
    else None.  SciPy and cupyx matrices often carry integer weights as
    floats; solved as integers they are exact, and the GPU auction needs
    about half its phases (its float phases run down to ``2**-40`` of the
    cost range, the integer ones to 1)."""
    if c.dtype.kind != "f" or c.size == 0:
        return None
    from . import _cpu

    out = np.empty(c.shape[0], dtype=np.int64)
    whole, big = _cpu.whole_values(c, out)
    if not whole or big * (4 * k + 8) >= _INT_BOUND:
        return None
    return out


def _solve(indptr, indices, c, shape, full, what, dense=None, engine="numba", stats=None):
    """Rows and columns of the optimum, potentials, and whether the engine ran transposed.

    `dense`: the 2-D matrix of a dense input, whose full solves run the
    dense searches of :func:`gpumatch.lap._cpu.solve_dense` (``"numba"``)
    or the dense auction (``"cupy"``, ``"numpy"``).  `stats`: a dict that
    gets the engine's statistics.  Whole-valued float weights of a sparse
    input are solved as integers (:func:`_whole`); the potentials come back
    as floats."""
    m, n = shape
    ci = _whole(c, min(m, n) if full else m + n) if dense is None else None
    if ci is not None:
        rows, cols, u, v, transposed, nfree = _solve(indptr, indices, ci, shape, full, what, None, engine, stats)
        return rows, cols, u.astype(c.dtype), v.astype(c.dtype), transposed, nfree
    if c.dtype.kind == "i":   # full=False may solve an extension of up to m + n rows
        _check_int_range(c, min(m, n) if full else m + n, "weights")
    transposed = m > n
    if transposed:
        indptr, indices, c = _transpose(indptr, indices, c, m, n)
        m, n = n, m
        if dense is not None and full:
            dense = np.ascontiguousarray(dense.T)
    if dense is not None and full and engine != "numba":
        x, u, v = _solve_dense_auction(indptr, indices, c, dense, m, n, what, engine, stats)
        nfree = 0
    elif dense is not None and full:
        x, u, v = _solve_dense(indptr, indices, c, dense, m, n, what)
        nfree = 0
    else:
        x, u, v, nfree = _solve_min(indptr, indices, c, m, n, full, what, engine, stats)
    rows = np.flatnonzero(x >= 0)
    cols = x[rows]
    if transposed:
        rows, cols = cols, rows
        order = np.argsort(rows, kind="stable")
        rows, cols = rows[order], cols[order]
        u, v = v, u
    return rows.astype(np.int64), cols.astype(np.int64), u, v, transposed, nfree


def _weights_of(indptr, indices, c, rows, cols):
    """The weights of the entries ``(rows[k], cols[k])`` of a canonical CSR
    (sorted, unique columns per row)."""
    if rows.size == 0:
        return c[:0]
    from . import _cpu

    return _cpu.entry_costs(indptr, indices, c, rows, cols)


def _exact_sum(vals):
    if vals.dtype.kind == "i":
        big = int(np.abs(vals).max()) if vals.size else 0
        if big * max(vals.size, 1) < _I64_MAX:
            return int(vals.sum())
        return sum(int(t) for t in vals)
    return float(vals.sum())

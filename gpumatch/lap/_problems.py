"""Assignment inputs as the engines take them: a validated canonical CSR of the
finite weights (and the dense matrix), in minimisation form, integer weights as
int64 and the rest as float64, with scipy's errors."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from .. import _backend
from .._validation import as_csr_graph
from ._checks import device_numeric as _device_numeric
from ._checks import invalid_rule as _invalid_rule


def _as_maximize(maximize) -> bool:
    return bool(maximize)   # scipy takes any truthy value


def _numeric_values(data, what: str):
    """int64 (integers, booleans) or float64 values; TypeError for anything else."""
    return _device_numeric(data, np, what)


def _sparse_problem(graph, maximize, name="biadjacency"):
    """Validated CSR ``(indptr, indices, cost, (m, n), cupy_out, dtype_kind)``
    of a sparse input, in minimisation form, explicit zeros dropped with
    scipy's warning, the forbidden infinity dropped."""
    g = as_csr_graph(graph, "numpy", name=name, with_data=True)
    m, n = g.shape
    indptr = np.asarray(g.indptr, dtype=np.int64)
    indices = np.asarray(g.indices)
    c = _numeric_values(np.asarray(g.data), name)
    kind = c.dtype.kind
    keep = None
    from . import _cpu

    zeros, bad, infinite = _cpu.value_flags(c, np.inf if maximize else -np.inf)
    if bad >= 0:
        row = int(np.searchsorted(indptr, bad, side="right")) - 1
        raise ValueError(f"{name} contains invalid numeric entries: {float(c[bad])!r} at ({row}, {int(indices[bad])}) "
                         f"{_invalid_rule(maximize)}")
    if zeros:
        warnings.warn("explicit zero weights are removed before matching", UserWarning, stacklevel=3)
        keep = c != 0
    if kind == "f" and infinite:
        forbidden = np.isinf(c)
        keep = ~forbidden if keep is None else keep & ~forbidden
    if keep is not None:
        rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr))[keep]
        indices = indices[keep]
        c = c[keep]
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    if maximize:
        c = -c
    return indptr, indices, c, (m, n), g.cupy_out, kind


def _dense_matrix(cost_matrix, sparse_hint="min_weight_full_bipartite_matching or assignment"):
    """A dense cost matrix on the host as int64 or float64, and whether it was
    CuPy; ValueError for sparse input (naming `sparse_hint`) or not 2-D."""
    if sp.issparse(cost_matrix) or _backend.is_cupy_sparse(cost_matrix):
        raise ValueError(f"cost_matrix must be a dense array; for sparse input use {sparse_hint}")
    cupy_out = _backend.is_cupy_array(cost_matrix)
    a = np.asarray(_backend.to_numpy(cost_matrix) if cupy_out else cost_matrix)
    if a.ndim != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {a.ndim} array")
    return _numeric_values(a, "cost_matrix"), cupy_out


def _dense_problem(cost_matrix, maximize):
    """CSR of the finite entries of a dense cost matrix, in minimisation form, and
    the matrix itself in minimisation form (the caller's when it needs no change)."""
    c, cupy_out = _dense_matrix(cost_matrix)
    m, n = c.shape
    if c.dtype.kind == "f":
        invalid = np.isnan(c) | (c == (np.inf if maximize else -np.inf))
        if invalid.any():
            i, j = (int(t) for t in np.argwhere(invalid)[0])
            raise ValueError(f"matrix contains invalid numeric entries: {float(c[i, j])!r} at ({i}, {j}) "
                             f"{_invalid_rule(maximize)}")
        finite = np.isfinite(c)
        if finite.all():
            finite = None
    else:
        finite = None
    if finite is None:
        indptr = np.arange(m + 1, dtype=np.int64) * n
        idx = np.int32 if n <= np.iinfo(np.int32).max else np.int64
        indices = np.tile(np.arange(n, dtype=idx), m)
        vals = c.reshape(-1)
    else:
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(finite.sum(axis=1), out=indptr[1:])
        indices = np.nonzero(finite)[1]
        vals = c[finite]
    if maximize:
        vals = -vals          # the engine only reads `vals`: no copy otherwise
    if finite is None:
        dense = vals.reshape(m, n)
    else:
        dense = -c if maximize else c
    return indptr, indices, vals, (m, n), cupy_out, c.dtype.kind, dense

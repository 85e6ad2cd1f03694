"""Shared checks and CSR builders of :mod:`gpumatch.generators`."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

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


def _permuted(rows, cols, m, n, permute, seed):
    # `seed` may also be a Generator already drawn from: default_rng returns it as is.
    if permute:
        rng = np.random.default_rng(seed)
        rows, cols = rng.permutation(m)[rows], rng.permutation(n)[cols]
    return _pattern(rows, cols, m, n)

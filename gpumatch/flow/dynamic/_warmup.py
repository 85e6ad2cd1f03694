"""The network and the batches of the dynamic flow solver's one-time warm-up.

On CuPy the first solve of a process compiles (or loads from CuPy's cache)
the element-wise kernels that a solve from scratch and a repair use;
:func:`gpumatch.flow.dynamic._dynamic._warm_up` runs the small network of
:func:`_warm_network` through them once, with the batches of
:func:`_warm_batches`, so that this cost stays out of the time budget of
the first repairs.
"""

from __future__ import annotations

import numpy as np


def _warm_network():
    """A 4 x 4 grid (right, down and up arcs; source 16 -> left column,
    right column -> sink 17), capacities 1..9."""
    import scipy.sparse as sp

    r, c = [], []
    for i in range(16):
        if i % 4 < 3:
            r.append(i), c.append(i + 1)
        if i < 12:
            r += [i, i + 4]
            c += [i + 4, i]
    r += [16, 16, 16, 16, 3, 7, 11, 15]
    c += [0, 4, 8, 12, 17, 17, 17, 17]
    rng = np.random.default_rng(0)
    C = sp.csr_matrix((rng.integers(1, 10, size=len(r)), (r, c)), shape=(18, 18)).astype(np.int64)
    C.sort_indices()
    return C


def _warm_batches(solver, C, asarray, steps=6):
    """Batches of a third of the arcs of `C` (increases, decreases, mixed,
    in turn), each solved; returns the results."""
    rng = np.random.default_rng(1)
    rows = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
    out = []
    for step in range(steps):
        k = rng.choice(C.nnz, size=C.nnz // 3, replace=False)
        old = C.data[k]
        new = (old + rng.integers(1, 10, size=k.shape[0]) if step % 3 == 0 else
               np.maximum(old - rng.integers(1, 10, size=k.shape[0]), 0) if step % 3 == 1 else
               rng.integers(0, 19, size=k.shape[0]))
        C.data[k] = new
        solver.update_capacities(asarray(rows[k]), asarray(C.indices[k].astype(np.int64)), asarray(new))
        out.append(solver.solve())
    return out

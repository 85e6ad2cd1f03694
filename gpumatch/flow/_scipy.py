"""Maximum flow through SciPy's ``scipy.sparse.csgraph.maximum_flow`` (Dinic,
Edmonds–Karp) on the host, in gpumatch's contract: a flow per arc of the
caller's pattern and the source side of a minimum cut.

Used by :func:`gpumatch.maximum_flow` for ``method="dinic"`` and
``"edmonds_karp"``, and for small networks under ``backend="auto"`` on a
machine without a usable GPU (:func:`small_flow`, issue 62), which spares a
new process the Numba engine's start-up.  SciPy needs capacities and flow
values within int32 (:func:`fits_int32`).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .. import _backend, csr
from ..csr import _exact_sum
from .._validation import charge_small

__all__ = ["SMALL_MAX", "fits_int32", "host_method", "small_flow"]

#: Largest ``2 V + nnz`` that ``backend="auto"`` solves with SciPy's Dinic
#: (:func:`small_flow`) on a machine without a usable GPU, when the
#: capacities and the capacity out of the source fit int32 (None: never).
#: The Numba engine's first call in a process costs Numba's start-up, about
#: half a second on a 2-core CPU with a warm cache (issue 62,
#: :mod:`gpumatch.matching._small`), for a solve of microseconds; as there,
#: only while the engine is not loaded and the small solves have not spent
#: :data:`gpumatch._validation.SMALL_ON_CPU`'s budget.
SMALL_MAX = 8192


def fits_int32(data, indptr, source) -> bool:
    """True when every capacity `data` and the capacity out of `source` (the
    largest flow value) fit int32, as SciPy's maximum flow needs (host arrays)."""
    i32 = np.iinfo(np.int32).max
    ps, pe = int(indptr[source]), int(indptr[source + 1])
    return not ((data.shape[0] and int(data.max()) > i32) or _exact_sum(np, data[ps:pe]) > i32)


def host_method(g, source, sink, method):
    """Dinic / Edmonds-Karp through scipy on the host (int32 capacities, as scipy):
    ``(value, arc_flow, side, stats)``; OverflowError when they do not fit."""
    from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

    indptr, indices, data = (_backend.to_numpy(a) for a in (g.indptr, g.indices, g.data))
    V = g.n
    rows = csr.segment_owner(indptr.astype(np.int64), indices.shape[0])
    if not fits_int32(data, indptr, source):
        raise OverflowError(f"method={method!r} runs scipy, which needs capacities and flow values within int32; "
                            "use method='push_relabel'")
    C = sp.csr_matrix((data.astype(np.int32), indices.astype(np.int32), indptr.astype(np.int32)), shape=(V, V))
    res = sp_maximum_flow(C, source, sink, method=method)
    F = sp.csr_matrix(res.flow).astype(np.int64)
    F.sum_duplicates()
    # per-arc flow: split the net flow of each vertex pair over its (anti-parallel) arcs.
    # The net flow of each arc, looked up by key (F[rows, indices] is no
    # array when there is no arc: issue 45, item 4)
    width = np.int64(max(V, 1))
    fkeys = csr.segment_owner(F.indptr.astype(np.int64), F.nnz) * width + F.indices.astype(np.int64)
    keys = rows * width + indices.astype(np.int64)
    at = np.minimum(np.searchsorted(fkeys, keys), max(F.nnz - 1, 0))
    net = np.where(fkeys[at] == keys, F.data[at], 0) if F.nnz else np.zeros(keys.shape[0], dtype=np.int64)
    arc_flow = np.where(rows == indices, 0, np.clip(net, 0, None))
    arc_flow = np.minimum(arc_flow, data)
    # source side: vertices that cannot reach the sink in the residual graph
    R = (C.astype(np.int64) - F).tocsr()
    R.data[R.data < 0] = 0
    R.eliminate_zeros()
    from scipy.sparse.csgraph import breadth_first_order

    reach = breadth_first_order(R.T.tocsr(), sink, directed=True, return_predecessors=False)
    side = np.ones(V, dtype=bool)
    side[reach] = False
    return np.int64(res.flow_value), arc_flow, side, {"method": method, "backend": "numpy (scipy)"}


def small_flow(g, source, sink, layout, t0):
    """``(value, arc_flow, side, stats)`` of SciPy's Dinic on the small
    network `g` (validated on NumPy; :data:`SMALL_MAX`), or None when its
    capacities do not fit int32 (the engine solves it).  The seconds since
    `t0` count against :data:`gpumatch._validation.SMALL_ON_CPU`'s budget."""
    if not fits_int32(g.data, g.indptr, source):
        return None
    value, arc_flow, side, _ = host_method(g, source, sink, "dinic")
    stats = {"iterations": 0, "phase2_iterations": 0, "global_relabels": 0, "relabel_period": None,
             "pairs_fixed": False, "backend": "scipy", "layout": layout, "method": "dinic",
             "algorithm": "Dinic (scipy.sparse.csgraph)", "time": {}}
    charge_small(time.perf_counter() - t0)
    return value, arc_flow, side, stats

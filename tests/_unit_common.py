"""Helpers shared by the tests of unit bipartite networks solved by matching
(tests/test_numba_unit.py: the Numba engine; tests/test_unit_flow.py: the
device backends).

A unit network comes from :func:`gpumatch.csr.bipartite_flow_network`; the
edits of :func:`edit` move it one arc away from the structure (or, for
``keep_zero_arcs``, add only what is not an arc).  Every result is checked
by certificates (``check_flow``: a valid flow and a cut of equal capacity),
its value against scipy's Dinic, and the reported minimum cut by its
capacity.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

from gpumatch import _backend, csr
from gpumatch import generators as G
from gpumatch.testing import check_flow


#: Bipartite graphs whose unit networks both engines' tests solve (each test
#: file adds its own).
BASE_GRAPHS = {
    "random": lambda: G.random_bipartite(900, 800, 3, seed=1),
    "random_sparse": lambda: G.random_bipartite(700, 700, 1.2, seed=2),
    "rect_wide": lambda: G.random_bipartite(300, 1200, 2, seed=3),
    "triangular_perm": lambda: G.triangular(200, permute=True, seed=7),
    "empty_rows": lambda: sp.csr_matrix((30, 20), dtype=np.int8),
}

def unit_network(A, middle=1):
    """``(C, s, t)``: the unit network of the pattern `A` (scipy CSR, int64
    capacities), its ``L -> R`` arcs of capacity `middle`."""
    A = sp.csr_matrix(A)
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr, A.indices, A.shape)
    V = ip.shape[0] - 1
    C = sp.csr_matrix((np.asarray(cap, dtype=np.int64), np.asarray(ix), np.asarray(ip)), shape=(V, V))
    if middle != 1:   # the L -> R arcs: any positive capacity keeps the structure
        coo = C.tocoo()
        mid = (coo.row != s) & (coo.col != t)
        coo.data[mid] *= middle
        C = sp.csr_matrix(coo)
    return C, s, t


def scipy_value(C, s, t):
    C = sp.csr_matrix(C, dtype=np.int64, copy=True)
    C.setdiag(0)
    C.eliminate_zeros()
    return int(sp_maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value)


def check(C, s, t, res):
    """`res` (a ``MaximumFlowResult``, NumPy or CuPy) is a maximum flow of
    `C` of scipy's value, and its source side a cut of that capacity."""
    flow = res.flow.get() if hasattr(res.flow, "get") else res.flow
    cert = check_flow(C, s, t, flow, int(res.flow_value))
    assert int(res.flow_value) == scipy_value(C, s, t) == int(cert.value)
    side = _backend.to_numpy(res.source_side)
    assert side[s] and not side[t]
    coo = sp.csr_matrix(C).tocoo()
    assert int(coo.data[side[coo.row] & ~side[coo.col]].sum()) == int(res.flow_value)


def edit(C, s, t, case):
    """The unit network `C` with one change that breaks the structure (or, for
    the ``keep_*`` cases, one that does not)."""
    C = sp.lil_matrix(C)
    coo = sp.csr_matrix(C).tocoo()
    L = np.sort(coo.col[coo.row == s])
    R = np.sort(coo.row[coo.col == t])
    u, u2, v, v2 = int(L[0]), int(L[1]), int(R[0]), int(R[1])
    arcs = {"source_cap_2": [(s, u, 2)], "sink_cap_2": [(v, t, 2)], "left_to_left": [(u, u2, 1)],
            "right_to_left": [(v, u, 1)], "right_to_right": [(v, v2, 1)], "into_source": [(u, s, 1)],
            "out_of_sink": [(t, v, 1)], "source_to_sink": [(s, t, 1)], "left_is_right": [(u, t, 1)],
            # explicit zeros and self-loops are not arcs
            "keep_zero_arcs": [(v, u, 0), (t, s, 0), (u, u, 5), (v, v, 1)]}
    for i, j, value in arcs[case]:
        C[i, j] = value
    C = sp.csr_matrix(C)
    if case == "keep_zero_arcs":
        C[v, u] = 0    # lil drops zeros: store them in the CSR
        C[t, s] = 0
    return C


#: Edits that break the structure.
CASES = ["source_cap_2", "sink_cap_2", "left_to_left", "right_to_left", "right_to_right", "into_source",
         "out_of_sink", "source_to_sink", "left_is_right"]


def scattered_unit_network(A):
    """The unit network of `A` with its terminals and parts away from the
    first and last ids and isolated vertices between them: ``(C, s, t,
    isolated)``."""
    m, n = A.shape
    V = m + n + 8
    s, t = 3, m + n + 6     # L = 5 .. m + 4, R = m + 5 .. m + n + 4; 0, 1, 2, 4 and m + n + 5, 7 isolated
    rows = [s] * m + [5 + i for i in A.tocoo().row] + [5 + m + j for j in range(n)]
    cols = [5 + i for i in range(m)] + [5 + m + j for j in A.tocoo().col] + [t] * n
    C = sp.csr_matrix((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(V, V))
    return C, s, t, [0, 1, 2, 4, m + n + 5, m + n + 7]

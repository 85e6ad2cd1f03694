"""Unit bipartite networks on the CPU engine (``flow/_cpu_unit.py``): maximum flow by matching.

Every result is checked by certificates (``check_flow``: a valid flow and a
cut of equal capacity), its value against scipy's Dinic, and the reported
minimum cut by its capacity.  Networks one arc away from the structure must
not be recognised, and still get the right answer from push-relabel.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

from gpumatch import _backend, csr
from gpumatch import generators as G
from gpumatch.flow import maximum_flow, minimum_cut
from gpumatch.testing import check_flow

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


def _unit_network(A, middle=1):
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


def _scipy_value(C, s, t):
    C = sp.csr_matrix(C, dtype=np.int64, copy=True)
    C.setdiag(0)
    C.eliminate_zeros()
    return int(sp_maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value)


def _check(C, s, t, res):
    cert = check_flow(C, s, t, res.flow, int(res.flow_value))
    assert int(res.flow_value) == _scipy_value(C, s, t) == int(cert.value)
    side = res.source_side
    assert side[s] and not side[t]
    coo = sp.csr_matrix(C).tocoo()
    assert int(coo.data[side[coo.row] & ~side[coo.col]].sum()) == int(res.flow_value)


def _is_unit(C, s, t):
    from gpumatch.flow import _cpu_unit

    C = sp.csr_matrix(C)
    V = C.shape[0]
    return _cpu_unit.detect(V, C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data.astype(np.int64),
                            s, t) is not None


GRAPHS = {
    "random": lambda: G.random_bipartite(900, 800, 3, seed=1),
    "random_sparse": lambda: G.random_bipartite(700, 700, 1.2, seed=2),
    "rect_wide": lambda: G.random_bipartite(300, 1200, 2, seed=3),
    "delaunay": lambda: G.delaunay(2000, seed=4),
    "grid": lambda: G.grid(25, 30, drop=0.2, seed=5),
    "triangular_perm": lambda: G.triangular(200, permute=True, seed=6),
    "empty_rows": lambda: sp.csr_matrix((30, 20), dtype=np.int8),
}


@pytest.fixture
def unit_matching():
    """Run a test with the unit route off (push-relabel on the same networks)."""
    from gpumatch.flow import _cpu

    def set_(on):
        _cpu.TUNING["unit_matching"] = on

    yield set_
    _cpu.TUNING["unit_matching"] = True


@pytest.mark.parametrize("middle", [1, 3])
@pytest.mark.parametrize("route", [True, False])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_unit_networks(name, route, middle, unit_matching):
    C, s, t = _unit_network(GRAPHS[name](), middle)
    assert _is_unit(C, s, t)
    unit_matching(route)
    res = maximum_flow(C, s, t, backend="numba")
    _check(C, s, t, res)
    assert res.stats["algorithm"].startswith("unit bipartite") == route
    value, side, (rows, cols) = minimum_cut(C, s, t, backend="numba")
    assert int(value) == int(res.flow_value)
    assert side[rows].all() and not side[cols].any()
    assert int(sum(int(sp.csr_matrix(C)[r, c]) for r, c in zip(rows, cols))) == int(value)


def _edit(C, s, t, case):
    """The unit network `C` with one change that breaks the structure (or, for
    the ``keep_*`` cases, one that does not)."""
    C = sp.lil_matrix(C)
    coo = sp.csr_matrix(C).tocoo()
    L = np.sort(coo.col[coo.row == s])
    R = np.sort(coo.row[coo.col == t])
    u, u2, v, v2 = int(L[0]), int(L[1]), int(R[0]), int(R[1])
    if case == "source_cap_2":
        C[s, u] = 2
    elif case == "sink_cap_2":
        C[v, t] = 2
    elif case == "left_to_left":
        C[u, u2] = 1
    elif case == "right_to_left":
        C[v, u] = 1
    elif case == "right_to_right":
        C[v, v2] = 1
    elif case == "into_source":
        C[u, s] = 1
    elif case == "out_of_sink":
        C[t, v] = 1
    elif case == "source_to_sink":
        C[s, t] = 1
    elif case == "left_is_right":
        C[u, t] = 1
    elif case == "keep_zero_arcs":     # explicit zeros and self-loops are not arcs
        C[v, u] = 0
        C[t, s] = 0
        C[u, u] = 5
        C[v, v] = 1
    C = sp.csr_matrix(C)
    if case == "keep_zero_arcs":
        C[v, u] = 0    # lil drops zeros: store them in the CSR
        C[t, s] = 0
    return C


CASES = ["source_cap_2", "sink_cap_2", "left_to_left", "right_to_left", "right_to_right", "into_source",
         "out_of_sink", "source_to_sink", "left_is_right"]


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("case", CASES + ["keep_zero_arcs"])
def test_structure_is_recognised_exactly(case):
    C, s, t = _unit_network(G.random_bipartite(60, 50, 2.5, seed=7))
    C = _edit(C, s, t, case)
    assert _is_unit(C, s, t) == (case == "keep_zero_arcs")
    res = maximum_flow(C, s, t, backend="numba")
    _check(C, s, t, res)
    assert res.stats["algorithm"].startswith("unit bipartite") == (case == "keep_zero_arcs")


def test_isolated_vertices_and_terminals_anywhere():
    """Vertices outside L and R, and terminals that are not the first/last ids."""
    A = sp.csr_matrix(G.random_bipartite(40, 30, 2, seed=8))
    m, n = A.shape
    V = m + n + 8
    s, t = 3, m + n + 6     # L = 5 .. m + 4, R = m + 5 .. m + n + 4; 0, 1, 2, 4 and m + n + 5, 7 isolated
    rows = [s] * m + [5 + i for i in A.tocoo().row] + [5 + m + j for j in range(n)]
    cols = [5 + i for i in range(m)] + [5 + m + j for j in A.tocoo().col] + [t] * n
    C = sp.csr_matrix((np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(V, V))
    assert _is_unit(C, s, t)
    res = maximum_flow(C, s, t, backend="numba")
    _check(C, s, t, res)
    assert res.stats["algorithm"].startswith("unit bipartite")

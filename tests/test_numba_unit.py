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

from _unit_common import BASE_GRAPHS, CASES, check, edit, scattered_unit_network, unit_network  # tests/ is on sys.path
from gpumatch import _backend
from gpumatch import generators as G
from gpumatch.flow import maximum_flow, minimum_cut

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


def _is_unit(C, s, t):
    from gpumatch.flow import _cpu_unit

    C = sp.csr_matrix(C)
    V = C.shape[0]
    return _cpu_unit.detect(V, C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data.astype(np.int64),
                            s, t) is not None


GRAPHS = dict(BASE_GRAPHS,
              delaunay=lambda: G.delaunay(2000, seed=4),
              grid=lambda: G.grid(25, 30, drop=0.2, seed=5))


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
    C, s, t = unit_network(GRAPHS[name](), middle)
    assert _is_unit(C, s, t)
    unit_matching(route)
    res = maximum_flow(C, s, t, backend="numba")
    check(C, s, t, res)
    assert res.stats["algorithm"].startswith("unit bipartite") == route
    value, side, (rows, cols) = minimum_cut(C, s, t, backend="numba")
    assert int(value) == int(res.flow_value)
    assert side[rows].all() and not side[cols].any()
    assert int(sum(int(sp.csr_matrix(C)[r, c]) for r, c in zip(rows, cols))) == int(value)


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("case", CASES + ["keep_zero_arcs"])
def test_structure_is_recognised_exactly(case):
    C, s, t = unit_network(G.random_bipartite(60, 50, 2.5, seed=7))
    C = edit(C, s, t, case)
    assert _is_unit(C, s, t) == (case == "keep_zero_arcs")
    res = maximum_flow(C, s, t, backend="numba")
    check(C, s, t, res)
    assert res.stats["algorithm"].startswith("unit bipartite") == (case == "keep_zero_arcs")


def test_isolated_vertices_and_terminals_anywhere():
    """Vertices outside L and R, and terminals that are not the first/last ids."""
    A = sp.csr_matrix(G.random_bipartite(40, 30, 2, seed=8))
    C, s, t, _ = scattered_unit_network(A)
    assert _is_unit(C, s, t)
    res = maximum_flow(C, s, t, backend="numba")
    check(C, s, t, res)
    assert res.stats["algorithm"].startswith("unit bipartite")

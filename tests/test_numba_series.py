"""Series reduction on the CPU engine (``flow/_cpu_series.py``): chains of
vertices with one arc in and one out contracted to one arc, solved, expanded.

Every result is certified (capacities, conservation, value against SciPy, a
cut of the same value), and the source side must be exactly the vertices
that cannot reach the sink in the residual network of the returned flow, as
the engine reports it without the reduction.  The statistics say whether the
reduction ran.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

from gpumatch import _backend
from gpumatch import generators as G
from gpumatch.flow import maximum_flow, minimum_cut
from gpumatch.testing import check_flow

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


def _scipy_value(C, s, t):
    C = sp.csr_matrix(C, dtype=np.int64, copy=True)
    C.setdiag(0)
    C.eliminate_zeros()
    return int(sp_maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value)


def _cannot_reach(C, F, t):
    """The vertices that cannot reach `t` in the residual network of the net flow `F`."""
    V = C.shape[0]
    C = sp.csr_matrix(C, dtype=np.int64)
    R = (C - C.multiply(sp.eye(V, dtype=np.int64, format="csr")) - sp.csr_matrix(F)).tocoo()
    keep = R.data > 0
    RT = sp.csr_matrix((np.ones(int(keep.sum())), (R.col[keep], R.row[keep])), shape=(V, V))
    reached = np.zeros(V, dtype=bool)
    reached[breadth_first_order(RT, t, directed=True, return_predecessors=False)] = True
    return ~reached


def _check(C, s, t, res):
    cert = check_flow(C, s, t, res.flow, int(res.flow_value))
    assert int(res.flow_value) == _scipy_value(C, s, t) == int(cert.value)
    side = np.asarray(res.source_side)
    assert side.dtype == bool and side[s] and not side[t]
    np.testing.assert_array_equal(side, _cannot_reach(C, res.flow, t))
    coo = sp.csr_matrix(C).tocoo()
    cut = side[coo.row] & ~side[coo.col] & (coo.row != coo.col)
    assert int(coo.data[cut].sum()) == int(res.flow_value)


def _chain_network(seed, core=6, chains=12, hi=9):
    """A small random core network whose arcs are subdivided into chains of
    series vertices, plus the awkward cases: a chain from the source to the
    sink, parallel and anti-parallel chains, a chain that closes on its
    tail, a cycle of series vertices that nothing enters, a self-loop and a
    zero-capacity arc at series vertices, and chain arcs of equal capacity;
    vertex ids shuffled."""
    rng = np.random.default_rng(seed)
    rows, cols, caps = [], [], []
    nv = core

    def arc(u, v, c):
        rows.append(u), cols.append(v), caps.append(c)

    def chain(u, v, k, cap=None):
        nonlocal nv
        path = [u] + list(range(nv, nv + k)) + [v]
        nv += k
        for a, b in zip(path[:-1], path[1:]):
            arc(a, b, int(rng.integers(1, hi + 1)) if cap is None else cap)
        return path

    s, t = 0, 1
    for _ in range(2 * core):              # the core: plain arcs
        u, v = rng.integers(0, core, size=2)
        arc(int(u), int(v), int(rng.integers(0, hi + 1)))
    for _ in range(chains):                # chains between core vertices
        u, v = rng.integers(0, core, size=2)
        chain(int(u), int(v), int(rng.integers(1, 6)))
    chain(s, t, 4)                         # straight through
    chain(2, 3, 3), chain(2, 3, 2)         # parallel
    chain(3, 2, 2)                         # anti-parallel
    chain(4, 4, 3)                         # closes on its tail
    chain(5, 1, 5, cap=4)                  # equal capacities
    ring = list(range(nv, nv + 4))         # a cycle nothing enters
    nv += 4
    for a, b in zip(ring, ring[1:] + ring[:1]):
        arc(a, b, 3)
    p = chain(s, 2, 3)
    arc(p[1], p[1], 7)                     # a self-loop at a series vertex
    q = chain(2, t, 3)
    arc(q[2], q[1], 0)                     # a zero-capacity arc back along a chain
    perm = rng.permutation(nv)
    C = sp.csr_matrix((np.array(caps, dtype=np.int64), (perm[rows], perm[cols])), shape=(nv, nv))
    C.sum_duplicates()
    return C, int(perm[s]), int(perm[t])


@pytest.mark.parametrize("seed", range(12))
def test_chain_networks(seed):
    C, s, t = _chain_network(seed)
    res = maximum_flow(C, s, t, backend="numba")
    assert res.stats["series_vertices"] > 0
    assert res.stats["reduced_vertices"] + res.stats["series_vertices"] == C.shape[0]
    _check(C, s, t, res)


@pytest.mark.parametrize("seed", range(4))
def test_same_answer_without_the_reduction(seed, monkeypatch):
    from gpumatch.flow import _cpu

    C, s, t = _chain_network(seed, core=10, chains=30)
    on = maximum_flow(C, s, t, backend="numba")
    monkeypatch.setitem(_cpu.TUNING, "series", None)
    off = maximum_flow(C, s, t, backend="numba")
    assert "series_vertices" not in off.stats and on.stats["series_vertices"] > 0
    assert int(on.flow_value) == int(off.flow_value)
    # both report the minimum cut closest to the sink: the same one
    np.testing.assert_array_equal(on.source_side, off.source_side)
    _check(C, s, t, off)


@pytest.mark.parametrize("permute", [True, False])
@pytest.mark.parametrize("n", [3, 50, 20_000])
def test_path_is_one_arc(n, permute):
    C, s, t = G.path_network(n, max_cap=100, permute=permute, seed=n)
    res = maximum_flow(C, s, t, backend="numba")
    st = res.stats
    assert st["series_vertices"] == n - 2 and st["series_chains"] == 1
    assert st["reduced_vertices"] == 2 and st["reduced_arcs"] == 1
    assert int(res.flow_value) == int(C.data.min())
    F = res.flow.tocsr()
    assert np.all(np.asarray(F[C.nonzero()]).ravel() == int(C.data.min()))
    _check(C, s, t, res)
    value, side, (rows, cols) = minimum_cut(C, s, t, backend="numba")
    assert int(value) == int(C.data.min()) and int(C[rows, cols].sum()) == int(value)
    np.testing.assert_array_equal(side, res.source_side)


def test_chain_that_cannot_reach_the_sink():
    # s -> a -> b -> c, and s -> t: the chain ends at c, a dead end
    C = sp.csr_matrix((np.array([5, 2, 3, 4]), ([0, 2, 3, 4], [2, 3, 4, 1])), shape=(6, 6))
    C = C + sp.csr_matrix((np.array([7, 1]), ([0, 4], [1, 5])), shape=(6, 6))
    res = maximum_flow(C, 0, 1, backend="numba")
    _check(C, 0, 1, res)


def test_few_series_vertices_keep_the_plain_engine():
    C, s, t = G.genrmf(4, 4, 10, 100, seed=0)
    res = maximum_flow(C, s, t, backend="numba")
    assert "series_vertices" not in res.stats
    _check(C, s, t, res)

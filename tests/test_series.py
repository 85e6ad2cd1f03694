"""Series reduction of flow networks (``flow/_series.py``): chains of
vertices with one arc in and one arc out contracted before push-relabel on
the device backends.

Every answer is checked by its properties (a valid maximum flow of SciPy's
value, a source side whose cut has that capacity) and, where Numba
imports, the source side is the compiled engine's (the vertices that cannot
reach the sink).  The contraction's own counts are deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _unit_common import check  # tests/ is on sys.path
from gpumatch import _backend
from gpumatch import generators as G
from gpumatch.flow import _series, maximum_flow
from gpumatch.flow._tuning import TUNING

BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]


def _path(n, seed, low=1, high=100):
    rng = np.random.default_rng(seed)
    p = rng.permutation(n)
    caps = rng.integers(low, high, n - 1)
    C = sp.csr_matrix((caps, (p[:-1], p[1:])), shape=(n, n))
    return C, int(p[0]), int(p[-1])


def _chained(seed, layers=4, width=5, length=(1, 30)):
    """Layers of `width` hub vertices, consecutive layers joined by chains
    (random lengths and capacities; some pairs joined twice, some by a
    single arc), plus the awkward cases: a chain back to its own start, a
    2-cycle, a cycle of series vertices off to the side, a chain from the
    source straight to the sink; vertex ids shuffled."""
    rng = np.random.default_rng(seed)
    arcs = []
    nxt = [0]

    def new():
        nxt[0] += 1
        return nxt[0] - 1

    def chain(u, w, k):
        prev = u
        for _ in range(k):
            v = new()
            arcs.append((prev, v, int(rng.integers(1, 50))))
            prev = v
        arcs.append((prev, w, int(rng.integers(1, 50))))

    s, t = new(), new()
    hubs = [[new() for _ in range(width)] for _ in range(layers)]
    for h in hubs[0]:
        chain(s, h, int(rng.integers(*length)))
    for h in hubs[-1]:
        chain(h, t, int(rng.integers(*length)))
    for a, b in zip(hubs[:-1], hubs[1:]):
        for u in a:
            for w in rng.choice(b, size=3, replace=False):
                chain(u, int(w), int(rng.integers(0, length[1])))
                if rng.random() < 0.3:          # a parallel chain between the same hubs
                    chain(u, int(w), int(rng.integers(*length)))
    u = hubs[1][0]
    chain(u, u, 5)                              # back to its start
    v = new()
    arcs += [(hubs[2][1], v, 7), (v, hubs[2][1], 3)]   # a 2-cycle through a series vertex
    ring = [new() for _ in range(6)]
    arcs += [(ring[i], ring[(i + 1) % 6], 4) for i in range(6)]   # a cycle of series vertices
    chain(s, t, 4)
    V = nxt[0]
    r, c, d = (np.array(x) for x in zip(*arcs))
    C = sp.csr_matrix((d, (r, c)), shape=(V, V))
    p = rng.permutation(V)
    C = sp.csr_matrix(C[np.argsort(p)][:, np.argsort(p)])
    return C, int(p[s]), int(p[t])


CASES = {
    "path": lambda: _path(20_000, 1),
    "path-unit-caps": lambda: _path(5_000, 2, 1, 2),
    "chained": lambda: _chained(3),
    "chained-long": lambda: _chained(4, layers=6, width=8, length=(20, 200)),
    "chained-short": lambda: _chained(5, length=(1, 3)),
}


def _on(backend, C):
    if backend == "cupy":
        import cupyx.scipy.sparse as cpx

        return cpx.csr_matrix(sp.csr_matrix(C).astype(np.float64))
    return C


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_contracted_solve_is_a_maximum_flow(backend, name):
    C, s, t = CASES[name]()
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert res.stats["series"]["contracted"] > 0, res.stats
    if _backend.numba_available():   # the cut push-relabel reports: what cannot reach the sink
        want = maximum_flow(C, s, t, backend="numba").source_side
        assert np.array_equal(_backend.to_numpy(res.source_side), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_path_contracts_to_one_arc(backend):
    C, s, t = _path(4097, 7)
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    st = res.stats["series"]
    assert st["contracted"] == 4095 and st["arcs"] == 1 and st["rounds"] <= 13 and st["cycles"] == 0


def test_reduction_counts():
    """The odd cases of the chained family: the cycle's six vertices are
    found, the chain back to its start and the 2-cycle leave no arc."""
    C, s, t = _chained(3)
    ip, ix, cap = C.indptr, C.indices, C.data.astype(np.int64)
    red = _series.reduce(np, C.shape[0], ip, ix, cap, s, t)
    assert red.stats["cycles"] == 6
    assert red.V == C.shape[0] - red.stats["contracted"]
    assert red.indptr[-1] == red.stats["arcs"] == red.indices.shape[0]
    keys = np.repeat(np.arange(red.V), np.diff(red.indptr)) * red.V + red.indices
    assert np.all(np.diff(keys) > 0)             # merged: no parallel arcs, sorted
    assert not np.any(np.repeat(np.arange(red.V), np.diff(red.indptr)) == red.indices)   # no self-loops


@pytest.mark.parametrize("backend", BACKENDS)
def test_few_series_vertices_or_switch_off(backend, monkeypatch):
    """GENRMF has no chains worth contracting; the switch turns it off."""
    C, s, t = G.genrmf(5, 5, 10, 100, seed=1)
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    assert "series" not in res.stats
    monkeypatch.setitem(TUNING, "series", False)
    C, s, t = _path(3000, 3)
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert "series" not in res.stats

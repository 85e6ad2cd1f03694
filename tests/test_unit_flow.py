"""Unit bipartite networks on the device backends (``flow/_unit.py``): maximum flow by G-PR matching.

Each test runs on NumPy (the CUDA path's twin: the same array code) and, as a
``gpu``-marked twin, on CuPy.  Every result is checked by certificates
(``check_flow``: a valid flow and a cut of equal capacity), its value against
scipy's Dinic, and the reported cut by its capacity; where Numba imports,
the source side is also the Numba engine's (the vertices that cannot reach
the sink: one set for every maximum flow).  Networks one arc away from the
structure must not be recognised (the same verdict as the Numba engine's
detection), and still get the right answer from push-relabel.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _unit_common import BASE_GRAPHS, CASES, check, edit, scattered_unit_network, unit_network  # tests/ is on sys.path
from gpumatch import _backend, _memory
from gpumatch import generators as G
from gpumatch.flow import MaxFlowSolver, _maxflow, _unit, maximum_flow, minimum_cut
from gpumatch.flow._tuning import TUNING
from gpumatch.testing import check_flow

BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]

GRAPHS = dict(BASE_GRAPHS,
              ladder=lambda: G.bidiagonal(3000, permute=True, seed=4),
              block_triangular=lambda: G.block_triangular(2000, seed=5),
              grid=lambda: G.grid(25, 30, drop=0.2, seed=6))


@pytest.fixture
def unit_off():
    """Turn the device route off for one test."""
    TUNING["unit_matching"] = False
    yield
    TUNING["unit_matching"] = True


def _on(backend, C):
    """`C` as the backend's input: scipy for NumPy, cupyx (float capacities) for CuPy."""
    if backend == "numpy":
        return C
    return _backend.cpx_sparse.csr_matrix(C.astype(np.float64))


def _numba_side(C, s, t):
    if not _backend.numba_available():
        return None
    return maximum_flow(C, s, t, backend="numba").source_side


def _host_detect(C, s, t):
    """The Numba engine's verdict (``flow/_cpu_unit.py``), or None without Numba."""
    if not _backend.numba_available():
        return None
    from gpumatch.flow import _cpu_unit

    C = sp.csr_matrix(C)
    return _cpu_unit.detect(C.shape[0], C.indptr.astype(np.int64), C.indices.astype(np.int64),
                            C.data.astype(np.int64), s, t) is not None


@pytest.mark.parametrize("middle", [1, 3])
@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_unit_networks(backend, name, middle):
    C, s, t = unit_network(GRAPHS[name](), middle)
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert res.stats["method"] == "unit_matching" and res.stats["backend"] == backend
    assert res.stats["algorithm"].startswith("unit bipartite network: G-PR")
    assert res.stats["left"] == C.shape[0] - 2 - res.stats["right"]
    side = _backend.to_numpy(res.source_side)
    want = _numba_side(C, s, t)
    if want is not None:   # the cut closest to the sink, as push-relabel reports it
        assert np.array_equal(side, want)
    value, cut_side, (rows, cols) = minimum_cut(_on(backend, C), s, t, backend=backend)
    rows, cols, cut_side = (_backend.to_numpy(a) for a in (rows, cols, cut_side))
    assert int(value) == int(res.flow_value)
    assert np.array_equal(cut_side, side)
    coo = C.tocoo()
    sel = cut_side[coo.row] & ~cut_side[coo.col] & (coo.data > 0)
    assert sorted(zip(rows.tolist(), cols.tolist())) == sorted(zip(coo.row[sel].tolist(), coo.col[sel].tolist()))
    assert int(coo.data[sel].sum()) == int(value)


@pytest.mark.parametrize("name", ["random", "block_triangular"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_switch_turns_the_route_off(backend, name, unit_off):
    C, s, t = unit_network(GRAPHS[name](), 2)
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    # (a deep network's device solve may still go to the Numba engine, which has its own route)
    assert res.stats["method"] == "push_relabel" or res.stats.get("finished_by") == "host"


@pytest.mark.parametrize("backend", BACKENDS)
def test_bcsr_layout_and_its_contract(backend):
    C, s, t = unit_network(GRAPHS["random"]())
    res = maximum_flow(_on(backend, C), s, t, backend=backend, layout="bcsr")
    check(C, s, t, res)
    assert res.stats["method"] == "unit_matching" and res.stats["layout"] == "bcsr"
    if backend == "numpy":   # cupyx holds floats: 2**62 is not exact there
        coo = C.tocoo()
        coo.data[(coo.row != s) & (coo.col != t)] = 2 ** 62    # still a unit network, but past bcsr's range
        with pytest.raises(OverflowError, match="bcsr"):
            maximum_flow(sp.csr_matrix(coo), s, t, backend=backend, layout="bcsr")
        assert int(maximum_flow(sp.csr_matrix(coo), s, t, backend=backend).flow_value) == int(res.flow_value)


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
@pytest.mark.parametrize("case", CASES + ["keep_zero_arcs"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_structure_is_recognised_exactly(backend, case):
    C, s, t = unit_network(G.random_bipartite(60, 50, 2.5, seed=7))
    C = edit(C, s, t, case)
    unit = case == "keep_zero_arcs"
    assert _host_detect(C, s, t) in (None, unit)    # the Numba engine's rules, where it imports
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert res.stats["method"] == ("unit_matching" if unit else "push_relabel")


def _arrays(backend, *arrays):
    xp = _backend.get_xp(backend)
    return [xp.asarray(a) for a in arrays]


@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_and_unsorted_arcs(backend):
    """Arrays that are not canonical (the internal callers' own CSR): parallel
    L -> R arcs carry one unit between them, on the first arc of a matched
    pair; unsorted rows are fine."""
    C, s, t = unit_network(G.random_bipartite(200, 150, 2, seed=8), 2)
    V = C.shape[0]
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(V), np.diff(C.indptr))
    mid = (rows != s) & (C.indices != t)
    dup = np.flatnonzero(mid)[rng.random(int(mid.sum())) < 0.3]      # a second copy of 30 % of the L -> R arcs
    r = np.concatenate([rows, rows[dup]])
    c = np.concatenate([C.indices, C.indices[dup]])
    d = np.concatenate([C.data, np.ones(dup.size, dtype=np.int64)])
    order = np.lexsort((rng.random(r.size), r))                        # rows in order, entries shuffled
    r, c, d = r[order], c[order], d[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=V))]).astype(np.int64)
    ip, ix, cap = _arrays(backend, indptr, c.astype(np.int32), d)
    value, f, side, stats = _maxflow._solve(ip, ix, cap, s, t, backend)
    assert stats["method"] == "unit_matching"
    f = _backend.to_numpy(f)
    assert np.all((f >= 0) & (f <= d))
    keys = r.astype(np.int64) * V + c
    carried = np.bincount(np.unique(keys, return_inverse=True)[1], weights=f > 0)
    assert carried.max() <= 1                      # one arc of a group carries the unit
    for k in np.unique(keys[f > 0]):               # ... the first one in the arrays' order
        at = np.flatnonzero(keys == k)
        assert f[at[0]] == 1 and not f[at[1:]].any()
    summed = sp.csr_matrix((d, (r, c)), shape=(V, V))      # duplicates summed: the network the flow is of
    F = sp.csr_matrix((f.astype(np.int64), (r, c)), shape=(V, V))
    cert = check_flow(summed, s, t, F - F.T, int(value))
    assert int(value) == int(cert.value)
    side = _backend.to_numpy(side)
    cc = summed.tocoo()
    assert int(cc.data[side[cc.row] & ~side[cc.col]].sum()) == int(value)


@pytest.mark.parametrize("which", ["source", "sink"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_terminal_arcs_are_not_unit(backend, which):
    """Two arcs s -> u (or v -> t) of capacity 1 let u receive (v send) two
    units: not a unit network, though each arc has capacity 1."""
    C, s, t = unit_network(G.random_bipartite(40, 30, 2, seed=9))
    coo = C.tocoo()
    r, c, d = coo.row, coo.col, coo.data
    pick = np.flatnonzero(r == s)[0] if which == "source" else np.flatnonzero(c == t)[0]
    r, c, d = np.append(r, r[pick]), np.append(c, c[pick]), np.append(d, 1)
    order = np.argsort(r, kind="stable")
    r, c, d = r[order], c[order], d[order]
    V = C.shape[0]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=V))]).astype(np.int64)
    ip, ix, cap = _arrays(backend, indptr, c.astype(np.int32), d.astype(np.int64))
    assert _unit.detect(_backend.get_xp(backend), V, ip, ix, cap, s, t, int(indptr[s]), int(indptr[s + 1])) is None
    value, _, _, stats = _maxflow._solve(ip, ix, cap, s, t, backend)
    assert stats["method"] == "push_relabel"
    summed = sp.csr_matrix((d, (r, c)), shape=(V, V))
    assert int(value) == int(maximum_flow(summed, s, t, backend="numpy").flow_value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_deep_cut_search_is_exact(backend):
    """An n x (n + 1) staircase (every row matched, one column free, the
    chain through it n levels deep) beside a perfectly matched square
    ladder.  The cut's BFS from the free column walks the whole chain with
    no free row to find, where G-PR's relabel would stop early
    (``REACH_CHECK``) and give the ladder's vertices finite labels too; they
    cannot reach the sink (their component has no free column), so they
    must stay on the source side."""
    n, k = 1500, 400
    A = sp.block_diag([G.staircase(n, n + 1, width=2), G.bidiagonal(k, permute=True, seed=10)], format="csr")
    C, s, t = unit_network(A)
    m = n + k
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert res.stats["method"] == "unit_matching"
    side = _backend.to_numpy(res.source_side)
    chain = np.r_[0:n, m:m + n + 1]                          # the staircase's rows and columns
    square = np.r_[n:m, m + n + 1:m + n + 1 + k]             # the ladder's
    assert not side[chain].any() and side[square].all()
    want = _numba_side(C, s, t)
    if want is not None:
        assert np.array_equal(side, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_isolated_vertices_and_terminals_anywhere(backend):
    """Vertices outside L and R, and terminals that are not the first/last ids."""
    A = sp.csr_matrix(G.random_bipartite(40, 30, 2, seed=11))
    C, s, t, isolated = scattered_unit_network(A)
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert res.stats["method"] == "unit_matching"
    side = _backend.to_numpy(res.source_side)
    assert side[isolated].all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_source_arcs(backend):
    """A source without arcs: a unit network of value 0 (L is empty)."""
    C, s, t = unit_network(G.random_bipartite(20, 20, 2, seed=12))
    C = sp.lil_matrix(C)
    C[s, :] = 0
    C = sp.csr_matrix(C)
    C.eliminate_zeros()
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    assert res.stats["method"] == "push_relabel"   # L -> R arcs out of vertices that are not in L


@pytest.mark.parametrize("backend", BACKENDS)
def test_cupy_input_gives_cupy_output(backend):
    C, s, t = unit_network(GRAPHS["ladder"]())
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    assert res.stats["method"] == "unit_matching"
    assert _backend.is_cupy_array(res.source_side) == (backend == "cupy")
    check(C, s, t, res)


@pytest.mark.parametrize("backend", BACKENDS)
def test_push_relabel_callers_skip_the_route(backend, monkeypatch):
    """``method="flow"`` matchings and the dynamic solver's solves from scratch run push-relabel."""
    import gpumatch
    from gpumatch.flow.dynamic import _dynamic

    def refuse(*args, **kwargs):
        raise AssertionError("the unit route ran")

    # the dynamic solver's once-per-process warm-up is a plain maximum flow
    # (which asks the route); run it first, so the test does not depend on
    # whether an earlier test in the process made a MaxFlowSolver on the GPU
    _dynamic._warm_up(backend)
    monkeypatch.setattr(_unit, "route", refuse)
    A = G.random_bipartite(80, 70, 2, seed=13)
    perm = gpumatch.maximum_bipartite_matching(A, method="flow", backend=backend)
    assert int((_backend.to_numpy(perm) >= 0).sum()) == int(gpumatch.structural_rank(A, backend="numpy"))
    C, s, t = unit_network(A)
    solver = MaxFlowSolver(C, s, t, backend=backend)
    res = solver.solve()
    check(C, s, t, res)


def test_memory_phases_of_the_route():
    """The route's own phases, and its detection's peak below push-relabel's estimate."""
    V, E = 2_000_002, 9_000_000
    ph = _memory.unit_flow_phases(V, E, 1_000_000, 1_000_000, 7_000_000)
    assert {"unit pattern", "unit push-relabel", "unit certificate", "unit flow"} <= set(ph)
    assert all(b > 9 * E for b in ph.values())
    pr = _memory.memory_phases((V, V), E, "flow", flow_matrix=False)
    o = 4
    assert V + (2 * o + 8) * E + (V + 1) * o + 12 * E <= pr["push-relabel"]   # detect's peak and the input
    small = _memory.unit_flow_phases(V, E, 1_000_000, 1_000_000, 7_000_000, include_input=False)
    assert max(small.values()) < max(ph.values())


@pytest.mark.gpu
def test_route_falls_back_when_its_matching_does_not_fit(monkeypatch):
    C, s, t = unit_network(GRAPHS["random"]())
    real = _memory.check_device_memory

    def only_push_relabel(need, what):
        if "solved by matching" in what:
            raise _memory.DeviceMemoryError(what, need, 0)
        return real(need, what)

    monkeypatch.setattr(_memory, "check_device_memory", only_push_relabel)
    res = maximum_flow(_on("cupy", C), s, t, backend="cupy")
    check(C, s, t, res)
    assert res.stats["method"] == "push_relabel"


@pytest.mark.parametrize("backend", BACKENDS)
def test_chain_rule_matches_a_unit_ladder(backend):
    """The route's matching starts from an empty matching, so the chain rule
    runs on a permuted ladder's unit network and matches it outright (no
    push iteration)."""
    C, s, t = unit_network(GRAPHS["ladder"]())
    res = maximum_flow(_on(backend, C), s, t, backend=backend)
    check(C, s, t, res)
    ms = res.stats["matching"]
    assert ms["chain_rounds"] > 0 and ms["push_iterations"] == 0, ms
    assert int(res.flow_value) == 3000

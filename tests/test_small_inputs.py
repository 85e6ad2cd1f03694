"""Small matchings under ``backend="auto"`` on a CPU (issue 62): SciPy's
Hopcroft–Karp instead of the compiled engine, so that a first small solve
in a fresh process pays no Numba start-up.  Deterministic checks only (what
gets imported, what the results are), never a time."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_matching

import gpumatch
from gpumatch import _backend
from gpumatch import generators as G
from gpumatch.flow import _scipy as flow_scipy
from gpumatch.matching import _small
from gpumatch.testing import check_flow, check_matching

pytestmark = pytest.mark.skipif(_backend.cupy_available(), reason="'auto' runs on the GPU here")


@pytest.fixture(autouse=True)
def small_path_on(monkeypatch):
    """The small path as in a fresh process: the engine not loaded (the test
    process has loaded it), nothing spent of the budget."""
    from gpumatch import _validation

    monkeypatch.setattr(_validation, "_engine_loaded", lambda: False)
    monkeypatch.setitem(_validation.SMALL_ON_CPU, "spent_s", 0.0)


def test_small_solve_does_not_import_numba():
    """A fresh process: the first small matching, structural rank,
    certified matching, maximum flow and minimum cut import neither Numba
    nor the compiled engines; once the engine is loaded, "auto" runs it."""
    script = textwrap.dedent("""
        import sys
        import scipy.sparse as sp
        import gpumatch
        from gpumatch import testing
        A = sp.random(200, 200, density=0.02, format="csr", random_state=1)
        perm = gpumatch.maximum_bipartite_matching(A)
        testing.check_matching(A, perm)
        rank = gpumatch.structural_rank(A)
        res = gpumatch.bipartite_matching(A, certificate=True)
        assert rank == res.size == int((perm >= 0).sum()), (rank, res.size)
        assert res.stats["backend"] == "scipy", res.stats
        from gpumatch import generators as G
        C, s, t = G.genrmf(4, 4, 1, 100, seed=3)
        flow = gpumatch.maximum_flow(C, s, t)
        testing.check_flow(C, s, t, flow.flow, flow.flow_value)
        assert flow.stats["backend"] == "scipy" and gpumatch.minimum_cut(C, s, t).cut_value == flow.flow_value
        loaded = sorted(m for m in sys.modules if m == "numba" or m.startswith(("numba.", "gpumatch._cpu"))
                        or m.endswith("._cpu"))
        # once the engine is loaded (here by an explicit backend), "auto" runs it on small inputs too
        assert gpumatch.bipartite_matching(A, backend="numba").stats["backend"] == "numba"
        assert gpumatch.bipartite_matching(A).stats["backend"] == "numba"
        assert gpumatch.maximum_flow(C, s, t).stats["backend"] == "numba"
        print(loaded)
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout


INPUTS = {
    "random": lambda: sp.random(300, 250, density=0.03, format="csr", random_state=3),
    "ladder": lambda: G.bidiagonal(1000, permute=True, seed=1),
    "jacobian": lambda: G.block_triangular(1000, seed=1),
    "grid": lambda: G.grid(30, 30, 0.1, seed=4),
    "triangular": lambda: G.triangular(80, permute=True, seed=2),
    "empty_rows": lambda: sp.csr_matrix((np.ones(3), ([0, 0, 4], [1, 2, 2])), shape=(6, 3)),
    "no_entries": lambda: sp.csr_matrix((5, 4)),
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_small_path_results(name):
    """Same contract as the engine: a maximum matching of SciPy's size in
    both directions, its König cover, and explicit zeros are edges."""
    A = INPUTS[name]()
    assert A.shape[0] + A.shape[1] + A.nnz <= _small.SMALL_MAX
    res = gpumatch.bipartite_matching(A, certificate=True)
    assert res.stats["backend"] == "scipy"
    ref = int((scipy_matching(A) >= 0).sum())
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    check_matching(A, res.row_to_col, "column", expected_size=ref)
    assert res.size == ref == int(res.cover_rows.sum() + res.cover_cols.sum())
    assert res.row_to_col.dtype == res.col_to_row.dtype == np.int32
    for perm_type in ("row", "column"):
        out = gpumatch.maximum_bipartite_matching(A, perm_type)
        assert out.dtype == np.int32 and int((out >= 0).sum()) == ref
    assert gpumatch.structural_rank(A) == ref


def test_explicit_zeros_are_edges():
    A = sp.csr_matrix((np.array([0.0, 0.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2))
    assert gpumatch.structural_rank(A) == 2


def test_tuple_input_and_errors_as_the_engine():
    A = sp.random(50, 40, density=0.1, format="csr", random_state=1)
    perm = gpumatch.maximum_bipartite_matching((A.indptr, A.indices, A.shape))
    check_matching(A, perm, expected_size=int((scipy_matching(A) >= 0).sum()))
    with pytest.raises(ValueError, match="out of range"):
        gpumatch.maximum_bipartite_matching((np.array([0, 1]), np.array([7]), (1, 3)))
    with pytest.raises(TypeError):
        gpumatch.maximum_bipartite_matching(np.ones((3, 3)))


def test_only_auto_small_and_cold_takes_it():
    A = sp.random(50, 40, density=0.1, format="csr", random_state=1)
    assert _small.wanted(A, "auto")
    assert not _small.wanted(A, "numba") and not _small.wanted(A, "numpy")
    big = G.random_bipartite(3000, 3000, 3, seed=1)
    assert not _small.wanted(big, "auto")
    assert gpumatch.bipartite_matching(A, initial=np.full(40, -1)).stats["backend"] == "numba"


def _cut_capacity(C, side):
    C = sp.coo_matrix(C)
    keep = side[C.row] & ~side[C.col] & (C.row != C.col)
    return int(C.data[keep].astype(np.int64).sum())


NETWORKS = {
    "genrmf": lambda: G.genrmf(4, 4, 1, 100, seed=3),
    "path": lambda: G.path_network(1500, seed=3),
    "rlg": lambda: G.washington_rlg(12, 12, 50, seed=1),
    # anti-parallel arcs, a self-loop, a zero capacity and a duplicate entry (summed)
    "odd_arcs": lambda: (sp.csr_matrix((np.array([5, 3, 4, 7, 0, 2, 6, 1]), (np.array([0, 1, 1, 1, 2, 2, 0, 0]),
                                                                            np.array([1, 0, 1, 3, 3, 1, 2, 1]))),
                                       shape=(4, 4)), 0, 3),
    "no_arcs": lambda: (sp.csr_matrix((5, 5), dtype=np.int64), 0, 4),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_small_flow_results(name):
    """SciPy's Dinic under "auto": a valid maximum flow (capacity,
    conservation, skew symmetry) of SciPy's value, a minimum cut of that
    value, and the engine's output kinds."""
    from scipy.sparse.csgraph import maximum_flow as scipy_flow

    C, s, t = NETWORKS[name]()
    C = sp.csr_matrix(C)
    assert 2 * C.shape[0] + C.nnz <= flow_scipy.SMALL_MAX
    res = gpumatch.maximum_flow(C, s, t)
    assert res.stats["backend"] == "scipy" and res.stats["method"] == "dinic"
    value = int(res.flow_value)
    check_flow(C, s, t, res.flow, value)
    C32 = C.astype(np.int32)
    C32.setdiag(0)
    C32.eliminate_zeros()
    assert value == int(scipy_flow(C32, s, t).flow_value)
    assert res.flow.dtype == np.int64 and isinstance(res.flow, sp.csr_matrix)
    assert res.source_side.dtype == bool and res.source_side[s] and not res.source_side[t]
    assert _cut_capacity(C, res.source_side) == value
    engine = gpumatch.maximum_flow(C, s, t, backend="numba")
    assert int(engine.flow_value) == value and res.flow.shape == engine.flow.shape
    cut = gpumatch.minimum_cut(C, s, t)
    assert int(cut.cut_value) == value and np.array_equal(cut.source_side, res.source_side)


def test_small_flow_past_int32_runs_the_engine():
    C = sp.csr_matrix(np.array([[0, 2**40, 0], [0, 0, 2**33], [0, 0, 0]]))
    res = gpumatch.maximum_flow(C, 0, 2)
    assert int(res.flow_value) == 2**33 and res.stats["backend"] == "numba"
    check_flow(C, 0, 2, res.flow, int(res.flow_value))


def test_small_flow_errors_as_the_engine():
    C = sp.csr_matrix(np.array([[0, 1], [0, 0]]))
    for bad, exc in (((sp.csr_matrix(np.ones((2, 3))), 0, 1), ValueError), ((C, 0, 0), ValueError),
                     ((C, 0, 5), ValueError), ((sp.csr_matrix(np.array([[0, -1], [0, 0]])), 0, 1), ValueError),
                     ((sp.csr_matrix(np.array([[0, 1.5], [0, 0]])), 0, 1), ValueError)):
        with pytest.raises(exc) as small:
            gpumatch.maximum_flow(*bad)
        with pytest.raises(exc) as engine:
            gpumatch.maximum_flow(*bad, backend="numba")
        assert str(small.value) == str(engine.value)


def test_spent_budget_runs_the_engine(monkeypatch):
    """Once the small solves have cost about Numba's start-up, "auto" loads
    the engine after all (its warm calls are faster)."""
    from gpumatch import _validation

    A = sp.random(50, 40, density=0.1, format="csr", random_state=1)
    C, s, t = NETWORKS["genrmf"]()
    assert gpumatch.bipartite_matching(A).stats["backend"] == "scipy"
    assert 0.0 < _validation.SMALL_ON_CPU["spent_s"] < _validation.SMALL_ON_CPU["budget_s"]
    monkeypatch.setitem(_validation.SMALL_ON_CPU, "spent_s", _validation.SMALL_ON_CPU["budget_s"])
    assert gpumatch.bipartite_matching(A).stats["backend"] == "numba"
    assert gpumatch.maximum_flow(C, s, t).stats["backend"] == "numba"
    monkeypatch.setitem(_validation.SMALL_ON_CPU, "budget_s", None)
    assert gpumatch.bipartite_matching(A).stats["backend"] == "scipy"


def test_small_dynamic_solver_stays_off_numba_until_it_grows():
    """``MatchingSolver`` under "auto" on a small graph runs the NumPy
    engine (no Numba start-up) and moves to the compiled engine at the
    first solve after the graph grows past SMALL_MAX; every result has
    SciPy's size."""
    A = sp.random(60, 50, density=0.05, format="csr", random_state=5)
    s = gpumatch.matching.MatchingSolver(A)
    r = s.solve()
    assert s.backend == "numpy" and r.stats["backend"] == "numpy"
    assert r.size == int((scipy_matching(A, perm_type="column") >= 0).sum())
    check_matching(A, r.col_to_row, "row")
    B = sp.random(4000, 4000, density=0.0005, format="csr", random_state=6)   # grows to ~16k entries
    big = gpumatch.matching.MatchingSolver(sp.csr_matrix(np.zeros((4000, 4000))))
    assert big.backend == "numpy"
    coo = B.tocoo()
    big.add_edges(coo.row, coo.col)
    res = big.solve()
    assert big.backend == "numba" and res.stats.get("backend", "numba") != "numpy"
    assert res.size == int((scipy_matching(B, perm_type="column") >= 0).sum())


def test_small_dynamic_solver_uses_a_loaded_engine(monkeypatch):
    from gpumatch import _validation

    A = sp.random(60, 50, density=0.05, format="csr", random_state=7)
    s = gpumatch.matching.MatchingSolver(A)
    assert s.backend == "numpy"
    monkeypatch.setattr(_validation, "_engine_loaded", lambda: True)
    r = s.solve()
    assert s.backend == "numba" and r.size == int((scipy_matching(A, perm_type="column") >= 0).sum())


def test_small_dynamic_solver_leaves_numpy_when_the_budget_is_spent(monkeypatch):
    """Its NumPy solves count against the small solves' budget: once it is
    spent, the compiled engine takes over (many solves of a small graph)."""
    from gpumatch import _validation

    A = sp.random(60, 50, density=0.05, format="csr", random_state=8)
    s = gpumatch.matching.MatchingSolver(A)
    s.solve()
    assert s.backend == "numpy" and _validation.SMALL_ON_CPU["spent_s"] > 0
    monkeypatch.setitem(_validation.SMALL_ON_CPU, "spent_s", _validation.SMALL_ON_CPU["budget_s"])
    s.remove_edges(A.tocoo().row[:3], A.tocoo().col[:3])
    r = s.solve()
    assert s.backend == "numba"
    B = A.tolil()
    B[A.tocoo().row[:3], A.tocoo().col[:3]] = 0
    B = sp.csr_matrix(B)
    B.eliminate_zeros()
    assert r.size == int((scipy_matching(B, perm_type="column") >= 0).sum())


def test_small_flow_solver_stays_off_numba_until_the_budget_is_spent(monkeypatch):
    """``MaxFlowSolver`` under "auto" on a small network runs the NumPy
    engine, then the compiled one once the small solves' budget is spent or
    the engine is loaded; the flow stays maximum across the switch."""
    from gpumatch import _validation
    from gpumatch.flow import MaxFlowSolver

    C, s, t = G.genrmf(3, 3, 10, 100, seed=4)
    solver = MaxFlowSolver(C, s, t)
    r = solver.solve()
    assert solver.backend == "numpy" and r.stats["backend"] == "numpy"
    check_flow(C, s, t, r.flow, int(r.flow_value))
    assert _validation.SMALL_ON_CPU["spent_s"] > 0
    coo = sp.coo_matrix(C)
    new = coo.data.astype(np.int64) * 2
    solver.update_capacities(coo.row[:5], coo.col[:5], new[:5])
    monkeypatch.setitem(_validation.SMALL_ON_CPU, "spent_s", _validation.SMALL_ON_CPU["budget_s"])
    r2 = solver.solve()
    assert solver.backend == "numba"
    D = sp.lil_matrix(C)
    D[coo.row[:5], coo.col[:5]] = new[:5]
    D = sp.csr_matrix(D)
    check_flow(D, s, t, r2.flow, int(r2.flow_value))
    assert int(r2.flow_value) == int(flow_scipy_value(D, s, t))


def flow_scipy_value(C, s, t):
    from scipy.sparse.csgraph import maximum_flow

    C = sp.csr_matrix(C, dtype=np.int64)
    C.setdiag(0)
    C.eliminate_zeros()
    return maximum_flow(C.astype(np.int32), s, t).flow_value

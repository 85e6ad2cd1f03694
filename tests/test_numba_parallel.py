"""The multi-threaded path of the CPU engine (``matching/_cpu_parallel.py``) and its compiled helpers.

The path is off on small graphs and on fewer than 2 threads; these tests
switch it on for every graph (``parallel_min_nnz = 0``, ``parallel_min_threads
= 1``) and split every BFS level between the threads (``parallel_level_min
= 1``) so that its races happen on small inputs too, with 1 and 2 Numba
threads.  The multi-threaded Karp–Sipser is also called with more slices
than threads (each thread runs several in turn) to reach empty slices.  Each
initial matching is checked to be a matching of stored entries, each final
one with ``check_matching`` and a König cover of the same size, and its size
against scipy (its maximum flow on meshes).  The threads are Python threads
(``gpumatch/_cpu_threads.py``) running ``nogil`` compiled slices: the path
also runs from other threads than the main one and in a forked child, and
nothing is compiled with Numba's ``parallel=True``.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import _backend
from gpumatch import generators as G
from gpumatch.matching import MatchingSolver, bipartite_matching
from gpumatch.testing import check_matching

from test_numba import _reference_size  # noqa: E402  (tests/ is on sys.path)

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


def _chain(n):
    """Row i joined to columns i and i + 1: Karp–Sipser's degree-one cascade end to end."""
    rows = np.r_[np.arange(n), np.arange(n - 1)]
    cols = np.r_[np.arange(n), np.arange(1, n)]
    return sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, n))


def _star(n):
    """One row joined to every column, each column also to a row of its own (half of them)."""
    rows = np.r_[np.zeros(n, np.int64), 1 + np.arange(n // 2)]
    cols = np.r_[np.arange(n), np.arange(n // 2)]
    return sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(1 + n // 2, n))


GRAPHS = {
    "random": (lambda: G.random_bipartite(3000, 3000, 3, seed=11), False),
    "random_sparse": (lambda: G.random_bipartite(3000, 3000, 1.3, seed=12), False),
    "rect_tall": (lambda: G.random_bipartite(3000, 600, 2, seed=13), False),
    "rect_wide": (lambda: G.random_bipartite(500, 3000, 2, seed=14), False),
    "delaunay": (lambda: G.delaunay(4000, seed=15), True),
    "grid": (lambda: G.grid(50, 60, drop=0.1, seed=16), True),
    "rmat": (lambda: G.rmat(12, 8, seed=17), False),
    "triangular_perm": (lambda: G.triangular(300, permute=True, seed=18), False),
    "bidiagonal_perm": (lambda: G.bidiagonal(3000, permute=True, seed=19), False),
    "chain": (lambda: _chain(2000), False),
    "star": (lambda: _star(500), False),
    "single_column": (lambda: sp.csr_matrix(np.ones((40, 1))), False),
    "single_row": (lambda: sp.csr_matrix(np.ones((1, 40))), False),
    "empty_rows_cols": (lambda: sp.csr_matrix(sp.block_diag([G.random_bipartite(300, 200, 3, seed=20),
                                                              sp.csr_matrix((30, 40))])), False),
    "empty": (lambda: sp.csr_matrix((50, 40), dtype=np.int8), False),
}


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def parallel(request):
    """The multi-threaded path on every graph, with 1 or 2 Numba threads (TUNING and threads restored)."""
    import numba

    from gpumatch.matching import _cpu

    saved = dict(_cpu.TUNING)
    threads = numba.get_num_threads()
    nt = min(request.param, numba.config.NUMBA_NUM_THREADS)
    _cpu.TUNING.update(parallel_min_nnz=0, parallel_min_threads=1, parallel_init=True, parallel_level_min=1,
                       serial_init_share=2.0, greedy_probe=False)   # (the threads' initial matching on every graph)
    numba.set_num_threads(nt)
    yield nt
    _cpu.TUNING.clear()
    _cpu.TUNING.update(saved)
    numba.set_num_threads(threads)


def _csc(A):
    C = sp.csc_matrix(A)
    C.sort_indices()
    return C.indptr.astype(np.int32), C.indices.astype(np.int32)


def _patterns(A):
    """`A` as a sorted CSR, its shape, and its int32 CSR and CSC arrays (what the kernels take)."""
    A = sp.csr_matrix(A)
    A.sort_indices()
    m, n = A.shape
    return A, m, n, A.indptr.astype(np.int32), A.indices.astype(np.int32), *_csc(A)


def _check_pairs(A, mu_row, mu_col):
    """`mu_row` / `mu_col` are one matching seen from both sides, of stored entries; returns its size."""
    m, n = A.shape
    cols = np.flatnonzero(mu_col >= 0)
    rows = mu_col[cols]
    assert (mu_row >= -1).all() and (mu_row < n).all() and (mu_col >= -1).all() and (mu_col < m).all()
    assert np.unique(rows).shape[0] == rows.shape[0], "a row is matched twice"
    assert np.array_equal(mu_row[rows], cols), "mu_row does not mirror mu_col"
    assert int((mu_row >= 0).sum()) == cols.shape[0]
    A = sp.csr_matrix(A)
    A.sort_indices()
    keys = np.repeat(np.arange(m, dtype=np.int64), np.diff(A.indptr)) * max(n, 1) + A.indices
    assert np.isin(rows.astype(np.int64) * max(n, 1) + cols, keys).all(), "a pair is not an edge"
    return cols.shape[0]


@pytest.mark.parametrize("init", ["karp_sipser", "none"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_parallel_path_matching(name, init, parallel):
    make, mesh = GRAPHS[name]
    A = sp.csr_matrix(make())
    ref = _reference_size(A, mesh)
    res = bipartite_matching(A, backend="numba", init=init, certificate=True)
    assert res.size == ref
    if A.nnz:
        alg = res.stats["algorithm"]
        if res.stats["initial_size"] == min(A.shape):   # the initial matching covers a side: no search
            assert alg.endswith(" + none"), alg
        else:
            assert f"MS-BFS ({parallel} threads)" in alg
        assert (f"Karp-Sipser ({parallel} threads)" in alg) == (init != "none" and parallel > 1)
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    cr, cc = res.cover_rows, res.cover_cols
    assert int(cr.sum() + cc.sum()) == res.size
    coo = A.tocoo()
    assert (cr[coo.row] | cc[coo.col]).all()


@pytest.mark.parametrize("nt", [1, 2, 3, 7, 64])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_karp_sipser_parallel_is_a_matching(name, nt):
    """Any number of slices (more than rows or columns too): a matching of stored entries, no
    larger than the maximum; one slice is the serial algorithm, maximal (no free edge left)."""
    from gpumatch.matching import _cpu_parallel

    make, mesh = GRAPHS[name]
    A = sp.csr_matrix(make())
    A.sort_indices()
    m, n = A.shape
    cptr, cind = _csc(A)
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    dropped = _cpu_parallel.karp_sipser_parallel(m, n, A.indptr.astype(np.int32), A.indices.astype(np.int32),
                                                 cptr, cind, mu_row, mu_col, nt)
    size = _check_pairs(A, mu_row, mu_col)
    assert 0 <= dropped <= n
    assert size <= _reference_size(A, mesh)
    if nt == 1:
        assert dropped == 0
        coo = A.tocoo()
        assert not ((mu_row[coo.row] < 0) & (mu_col[coo.col] < 0)).any()


@pytest.mark.parametrize("name", ["grid", "delaunay", "random"])
def test_ms_bfs_hands_over_to_pothen_fan(name, parallel):
    """Every level narrow (``parallel_level_min`` above any level): the first phase that
    augments hands the search over to Pothen–Fan+, which finishes it (no work budget:
    from an empty matching Pothen–Fan+ would pass it and hand over to push-relabel)."""
    from gpumatch.matching import _cpu

    _cpu.TUNING.update(parallel_level_min=10**9, pf_budget=None)
    make, mesh = GRAPHS[name]
    A = sp.csr_matrix(make())
    ref = _reference_size(A, mesh)
    res = bipartite_matching(A, backend="numba", init="none")
    assert res.stats["algorithm"] == f"MS-BFS ({parallel} threads) then Pothen-Fan+"
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    _cpu.TUNING.update(parallel_handover=False)
    res = bipartite_matching(A, backend="numba", init="none")
    assert res.stats["algorithm"] == f"MS-BFS ({parallel} threads)"
    check_matching(A, res.col_to_row, "row", expected_size=ref)


def test_karp_sipser_parallel_keeps_a_warm_start():
    """Pairs given on entry stay; the degrees are then counted over free vertices."""
    from gpumatch.matching import _cpu, _cpu_parallel

    A, m, n, rptr, rind, cptr, cind = _patterns(G.random_bipartite(2000, 1800, 3, seed=21))
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    _cpu.greedy(m, n, cptr, cind, mu_row, mu_col)
    keep = np.flatnonzero(mu_col >= 0)[::3]
    start_col = np.full(n, -1, np.int32)
    start_col[keep] = mu_col[keep]
    for nt in (1, 2, 5):
        mu_col = start_col.copy()
        mu_row = np.full(m, -1, np.int32)
        mu_row[mu_col[keep]] = keep
        _cpu_parallel.karp_sipser_parallel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, nt)
        _check_pairs(A, mu_row, mu_col)
        assert np.array_equal(mu_col[keep], start_col[keep])
        raw = np.zeros(3, np.int64)
        _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, 1)
        check_matching(A, mu_col, "row", expected_size=_reference_size(A, False))


def test_karp_sipser_parallel_quality():
    """On a random graph the slices lose (almost) nothing against serial Karp–Sipser."""
    from gpumatch.matching import _cpu, _cpu_parallel

    A, m, n, rptr, rind, cptr, cind = _patterns(G.random_bipartite(20000, 20000, 5, seed=22))
    sizes = []
    for nt in (0, 2, 4):
        mu_row = np.full(m, -1, np.int32)
        mu_col = np.full(n, -1, np.int32)
        if nt:
            _cpu_parallel.karp_sipser_parallel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, nt)
        else:
            _cpu.karp_sipser(m, n, rptr, rind, cptr, cind, mu_row, mu_col)
        sizes.append(_check_pairs(A, mu_row, mu_col))
    ref = _reference_size(A, False)
    assert ref - sizes[0] <= 0.001 * ref
    assert all(ref - s <= 0.002 * ref for s in sizes[1:])


def test_ms_bfs_one_thread_and_serial_levels():
    """The same search without a parallel region (one slice per level)."""
    from gpumatch.matching import _cpu, _cpu_parallel

    A = sp.csr_matrix(G.random_bipartite(2000, 2000, 2, seed=20))
    m, n = A.shape
    cptr, cind = _csc(A)
    for nt, level_min in ((1, 1), (2, 10**9)):
        mu_row = np.full(m, -1, dtype=np.int32)
        mu_col = np.full(n, -1, dtype=np.int32)
        _cpu.greedy(m, n, cptr, cind, mu_row, mu_col)
        raw = np.zeros(3, dtype=np.int64)
        _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, level_min)
        check_matching(A, mu_col, "row", expected_size=_reference_size(A, False))
        assert raw[0] >= 1


def test_dynamic_solver_with_the_parallel_path(parallel):
    A = sp.csr_matrix(G.random_bipartite(1500, 1500, 2.5, seed=21))
    solver = MatchingSolver(A, backend="numba")
    res = solver.solve()
    assert "MS-BFS" in res.stats["algorithm"]
    check_matching(A, res.col_to_row, "row", expected_size=_reference_size(A, False))
    coo = A.tocoo()
    rng = np.random.default_rng(21)
    drop = rng.choice(coo.nnz, size=200, replace=False)
    keep = np.ones(coo.nnz, dtype=bool)
    keep[drop] = False
    B = sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=A.shape)
    solver.remove_edges(coo.row[drop], coo.col[drop])
    res = solver.solve()
    check_matching(B, res.col_to_row, "row", expected_size=_reference_size(B, False))
    # a few matched edges out: a warm solve, searched by the threads from the pairs left
    cols = np.flatnonzero(res.col_to_row >= 0)[:5]
    rows = res.col_to_row[cols]
    solver.remove_edges(rows, cols)
    B = B.tolil()
    B[rows, cols] = 0
    B = sp.csr_matrix(B)
    B.eliminate_zeros()
    res = solver.solve()
    assert res.stats["mode"] == "dynamic" and "MS-BFS" in res.stats["algorithm"], res.stats
    check_matching(B, res.col_to_row, "row", expected_size=_reference_size(B, False))


def test_parallel_threads_rule():
    """``parallel_threads``: the edge and thread thresholds and the thread cap of TUNING, None for never."""
    import numba

    from gpumatch.matching import _cpu

    saved = dict(_cpu.TUNING)
    nt = numba.get_num_threads()
    try:
        _cpu.TUNING.update(parallel_min_nnz=1000, parallel_min_threads=1, parallel_max_threads=None)
        assert _cpu.parallel_threads(999) == 0 and _cpu.parallel_threads(1000) == nt
        _cpu.TUNING.update(parallel_max_threads=1)        # a cap on the threads
        assert _cpu.parallel_threads(1000) == 1
        _cpu.TUNING.update(parallel_max_threads=None)
        _cpu.TUNING.update(parallel_min_threads=nt + 1)
        assert _cpu.parallel_threads(10**9) == 0
        _cpu.TUNING.update(parallel_min_nnz=None, parallel_min_threads=1)
        assert _cpu.parallel_threads(10**9) == 0
    finally:
        _cpu.TUNING.clear()
        _cpu.TUNING.update(saved)
    # as shipped: the serial path below 1M edges, whatever the threads
    assert _cpu.parallel_threads(10**5) == 0


def _solve_forced(A, nt):
    """`A` on the multi-threaded path with `nt` threads (``numba.set_num_threads`` is per thread)."""
    import numba

    numba.set_num_threads(nt)
    return bipartite_matching(A, backend="numba", certificate=True)


@pytest.fixture
def forced():
    """The multi-threaded path on every graph, every level split (TUNING restored); yields its threads."""
    import numba

    from gpumatch.matching import _cpu

    saved = dict(_cpu.TUNING)
    _cpu.TUNING.update(parallel_min_nnz=0, parallel_min_threads=1, parallel_init=True, parallel_level_min=1,
                       serial_init_share=2.0, greedy_probe=False)   # (the threads' initial matching on every graph)
    yield min(2, numba.config.NUMBA_NUM_THREADS)
    _cpu.TUNING.clear()
    _cpu.TUNING.update(saved)


def test_parallel_path_from_other_threads(forced):
    """From the threads of a thread pool, several calls at once (they share gpumatch's pool of
    threads): each takes the multi-threaded path and returns a maximum matching."""
    from concurrent.futures import ThreadPoolExecutor

    names = ["random", "delaunay", "grid", "chain", "rect_tall"]
    graphs = [sp.csr_matrix(GRAPHS[name][0]()) for name in names] * 2
    with ThreadPoolExecutor(3) as ex:
        results = list(ex.map(_solve_forced, graphs, [forced] * len(graphs)))
    for name, A, res in zip(names * 2, graphs, results):
        if res.stats["initial_size"] < min(A.shape):   # (else no search runs: the chain)
            assert f"MS-BFS ({forced} threads)" in res.stats["algorithm"]
        if forced > 1:
            assert f"Karp-Sipser ({forced} threads)" in res.stats["algorithm"]
        check_matching(A, res.col_to_row, "row", expected_size=_reference_size(A, GRAPHS[name][1]))


def test_serial_on_gpumatch_own_threads(forced):
    """On a thread of gpumatch's pool the engine takes the serial path and ``run_slices`` runs
    its slices in turn there (no round of the pool waits for the pool: no deadlock)."""
    from gpumatch import _cpu_threads
    from gpumatch.matching import _cpu

    got = {}

    def probe(k, nt):
        inner = []
        _cpu_threads.run_slices(3, lambda j, n3: inner.append(j))
        got[k] = (_cpu_threads.in_worker(), _cpu.parallel_threads(10**9), inner)

    import numba

    _cpu_threads.run_slices(2, probe)
    assert got[0][:2] == (False, numba.get_num_threads()) and sorted(got[0][2]) == [0, 1, 2]
    assert got[1] == (True, 0, [0, 1, 2])


def test_run_slices_waits_for_every_thread_and_raises():
    import time

    from gpumatch import _cpu_threads

    done = []

    def work(k, nt):
        if k == 0:
            raise ValueError("slice 0")
        time.sleep(0.05)
        done.append(k)

    with pytest.raises(ValueError, match="slice 0"):
        _cpu_threads.run_slices(4, work, threads=2)
    assert sorted(done) == [1, 3]     # the pool's thread ran its slices; the caller's stopped at slice 0


def _child_sizes(names):
    """In a forked child: the sizes and algorithms of the graphs `names` (TUNING as forked)."""
    out = []
    for name in names:
        A = sp.csr_matrix(GRAPHS[name][0]())
        res = _solve_forced(A, 2)
        check_matching(A, res.col_to_row, "row", expected_size=_reference_size(A, GRAPHS[name][1]))
        out.append((res.size, res.stats["algorithm"]))
    return out


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_parallel_path_in_a_forked_child(forced):
    """After the parent ran the multi-threaded path (its pool exists), a forked child runs it too
    (on a pool of its own: the parent's threads are not in the child)."""
    import multiprocessing

    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread")
    names = ["random", "grid"]
    here = _child_sizes(names)
    with multiprocessing.get_context("fork").Pool(1) as p:
        there = p.apply_async(_child_sizes, (names,)).get(timeout=300)
    assert [s for s, _ in there] == [s for s, _ in here]
    assert all("MS-BFS (2 threads)" in alg for _, alg in there)


def _cpu_modules():
    import importlib
    import pkgutil

    import gpumatch

    names = [m.name for m in pkgutil.walk_packages(gpumatch.__path__, "gpumatch.") if "_cpu" in m.name]
    return [importlib.import_module(name) for name in sorted(names)]


def test_nothing_compiled_with_numba_parallel():
    """No Numba ``parallel=True`` (parfors) in the CPU engines: it took 2-4 s a function to compile
    on a cold cache, and its threading layers do not run from two threads or after fork."""
    from numba.core.registry import CPUDispatcher

    mods = _cpu_modules()
    names = {m.__name__ for m in mods}
    assert {"gpumatch._cpu_csr", "gpumatch._cpu_threads", "gpumatch.matching._cpu",
            "gpumatch.matching._cpu_parallel"} <= names
    seen = 0
    for mod in mods:
        for name, fn in vars(mod).items():
            if isinstance(fn, CPUDispatcher):
                seen += 1
                assert not fn.targetoptions.get("parallel"), f"{mod.__name__}.{name} is compiled with parallel=True"
    assert seen >= 20


@pytest.mark.parametrize("name, serial", [("bidiagonal_perm", True), ("random_sparse", True), ("random", False),
                                          ("delaunay", False)])
def test_serial_initial_matching_on_chains(name, serial, parallel):
    """On the multi-threaded path, graphs whose rows mostly have at most two
    entries take the serial initial matching (the degree-one rule first);
    the search stays the threads' MS-BFS where one is needed."""
    from gpumatch.matching import _cpu

    _cpu.TUNING["serial_init_share"] = 0.5
    make, mesh = GRAPHS[name]
    A = sp.csr_matrix(make())
    assert (_cpu.low_degree_share(A.shape[0], A.indptr) >= 0.5) == serial
    res = bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=_reference_size(A, mesh))
    alg = res.stats["algorithm"]
    if serial:   # (both have vertices of degree one)
        assert alg.startswith("degree-one + "), alg
    assert (f"Karp-Sipser ({parallel} threads)" in alg) == (not serial and parallel > 1), alg
    if res.stats["initial_size"] < min(A.shape):
        assert f"MS-BFS ({parallel} threads)" in alg, alg


@pytest.mark.parametrize("name, greedy_first", [("band", True), ("delaunay", True), ("random", False),
                                                ("rmat", False)])
def test_greedy_first_without_low_degree_vertices(name, greedy_first, parallel):
    """On the multi-threaded path, where under 5 % of the rows and of the
    columns have at most two entries (no cascades for Karp–Sipser: bands,
    meshes), a greedy pass runs before the threads' Karp–Sipser; graphs with
    such vertices (random, power-law) keep Karp–Sipser alone.  Either way the
    matching is certified maximum."""
    from gpumatch.matching import _cpu

    make, mesh = (lambda: G.banded(3000, 1, permute=True, seed=24), True) if name == "band" else GRAPHS[name]
    A = sp.csr_matrix(make())
    C = sp.csc_matrix(A)
    low = max(_cpu.low_degree_share(A.shape[0], A.indptr), _cpu.low_degree_share(A.shape[1], C.indptr))
    assert (low < _cpu.TUNING["greedy_first_share"]) == greedy_first
    res = bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=_reference_size(A, mesh))
    alg = res.stats["algorithm"]
    if parallel > 1:   # (one thread: the serial initial matching)
        assert alg.startswith("greedy + Karp-Sipser (") == greedy_first, alg


@pytest.mark.parametrize("rule", [True, False])
def test_degree_one_cascade_before_the_greedy_pass(rule, parallel, monkeypatch):
    """A shuffled staircase of width 4 has under 5 % of vertices of degree at
    most two, so the threads' path takes the greedy pass first; its corner
    column has one entry, and the degree-one rule (``threads_degree_one``)
    cascades from there through the whole staircase: no greedy pass, no
    Karp–Sipser, no search.  Without it the greedy pass and the threads
    leave augmenting paths to the search.  Either way the matching is
    certified maximum."""
    from gpumatch.matching import _cpu

    monkeypatch.setitem(_cpu.TUNING, "threads_degree_one", rule)
    n = 3000
    A = sp.csr_matrix(G.staircase(n, n, width=4, permute=True, seed=5))
    res = bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=n)
    alg = res.stats["algorithm"]
    if parallel > 1:   # (one thread: the serial initial matching, the degree-one rule first there too)
        if rule:
            assert alg == "degree-one + none" and res.stats["degree_one_pairs"] == n, alg
        else:
            assert alg.startswith("greedy + Karp-Sipser (") and res.stats["degree_one_pairs"] == 0, alg


@pytest.mark.parametrize("name, bfs", [("band", True), ("delaunay", True), ("random", False), ("rmat", False)])
def test_serial_search_without_low_degree_vertices(name, bfs):
    """On the serial path, where under 5 % of the rows and of the columns
    have at most two entries (bands, meshes), the search is MS-BFS on one
    thread instead of Pothen–Fan+; the matching is certified maximum."""
    make, mesh = (lambda: G.banded(3000, 1, permute=True, seed=25), True) if name == "band" else GRAPHS[name]
    A = sp.csr_matrix(make())
    res = bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=_reference_size(A, mesh))
    alg = res.stats["algorithm"]
    assert "Karp-Sipser (" not in alg, alg   # (the serial initial matching)
    assert res.stats["initial_size"] < min(A.shape)   # (a search ran on each of these)
    assert ("MS-BFS (1 threads)" in alg) == bfs, alg
    assert ("Pothen-Fan+" in alg.split(" + ")[-1].split(" then ")[0]) == (not bfs), alg


def test_default_is_serial_on_small_graphs():
    A = G.random_bipartite(3000, 3000, 3, seed=23)
    res = bipartite_matching(A, backend="numba")
    assert res.stats["algorithm"] == "degree-one + greedy + Karp-Sipser + Pothen-Fan+"


# ---------------------------------------------------------------------------
# compiled CSR helpers (gpumatch/_cpu_csr.py)
# ---------------------------------------------------------------------------

TRANSPOSE_CASES = {
    "random": lambda: G.random_bipartite(700, 500, 4, seed=30),
    "tall": lambda: G.random_bipartite(900, 30, 2, seed=31),
    "wide": lambda: G.random_bipartite(30, 900, 2, seed=32),
    "empty_rows_cols": lambda: sp.block_diag([G.random_bipartite(50, 60, 3, seed=33), sp.csr_matrix((7, 9))]),
    "no_edges": lambda: sp.csr_matrix((5, 4)),
    "no_rows": lambda: sp.csr_matrix((0, 4)),
    "no_cols": lambda: sp.csr_matrix((4, 0)),
}


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", sorted(TRANSPOSE_CASES))
def test_transpose(name, dtype):
    from gpumatch import _cpu_csr

    A = sp.csr_matrix(TRANSPOSE_CASES[name]())
    A.sort_indices()
    m, n = A.shape
    rptr, rind = A.indptr.astype(dtype), A.indices.astype(dtype)
    ref = A.tocsc()
    ref.sort_indices()
    outs = [_cpu_csr.transpose_serial(m, n, rptr, rind), _cpu_csr.transpose(m, n, rptr, rind)]
    outs += [_cpu_csr.transpose_parallel(m, n, rptr, rind, nt) for nt in (1, 2, 3, 8)]
    for cptr, cind in outs:
        assert cptr.dtype == dtype and cind.dtype == dtype
        assert np.array_equal(cptr, ref.indptr) and np.array_equal(cind, ref.indices)


def test_make_state_transposes_with_the_compiled_counting_sort():
    """The Numba backend's state: the CSC of the graph, rows ascending, in the state's dtype."""
    from gpumatch._validation import as_csr_graph
    from gpumatch.matching import _driver

    A = sp.csr_matrix(G.random_bipartite(400, 300, 3, seed=36))
    ref = A.tocsc()
    ref.sort_indices()
    for dtype in (np.int32, np.int64):
        st = _driver.make_state(as_csr_graph((A.indptr.astype(dtype), A.indices.astype(dtype), A.shape), "numba"))
        assert st.cptr.dtype == st.idx and st.cind.dtype == st.idx
        assert np.array_equal(st.cptr, ref.indptr) and np.array_equal(st.cind, ref.indices)


def test_pattern_summary_matches_numpy():
    """The compiled summary equals gpumatch.csr.pattern_summary, malformed pointers included."""
    from gpumatch import _cpu_csr, csr

    rng = np.random.default_rng(34)
    for _ in range(400):
        m = int(rng.integers(0, 6))
        nnz = int(rng.integers(0, 10))
        if rng.random() < 0.7:
            indptr = np.sort(rng.integers(-1, nnz + 2, m + 1))
        else:
            indptr = rng.integers(-2, nnz + 3, m + 1)
        if rng.random() < 0.5:
            indptr[0] = 0
        indices = rng.integers(-3, 8, nnz)
        for dp in (np.int32, np.int64, np.uint16):
            for di in (np.int32, np.int64, np.int8):
                p, i = indptr.astype(dp), indices.astype(di)
                assert _cpu_csr.pattern_summary(p, i) == csr.pattern_summary(p, i), (p, i)
    A = sp.csr_matrix(G.random_bipartite(500, 400, 3, seed=35))
    assert _cpu_csr.pattern_summary(A.indptr, A.indices) == csr.pattern_summary(A.indptr, A.indices)


def test_claim_is_atomic():
    """``_claim`` (compare-and-swap): of two threads claiming every entry of one array, exactly one gets each."""
    import numba

    from gpumatch import _cpu_threads
    from gpumatch.matching._cpu_parallel import _claim

    @numba.njit(nogil=True)
    def claim_all(k, nt, v, owner, stamp):
        for i in range(v.shape[0]):
            old = v[i]
            if old != stamp and _claim(v, i, old, stamp):
                owner[i] += k + 1             # only the claimer writes: 1 or 2, never 3

    v = np.zeros(200_000, np.int32)
    owner = np.zeros(v.shape[0], np.int32)
    _cpu_threads.run_slices(2, claim_all, v, owner, np.int32(7), threads=2)
    assert (v == 7).all()
    assert ((owner == 1) | (owner == 2)).all()


@pytest.mark.parametrize("nt, level_min", [(1, 1), (2, 1), (2, 10**9)])
def test_ms_bfs_grafts(nt, level_min):
    """Tree grafting: the trees that found no path stay and take the renewed rows next to
    them.  A wide random graph (many columns that no maximum matching covers, so trees that
    never augment) after greedy: the search grafts, and ends maximum, as without grafting."""
    import numba

    from gpumatch.matching import _cpu, _cpu_parallel

    A, m, n, rptr, rind, cptr, cind = _patterns(G.random_bipartite(3000, 4000, 2, seed=23))
    ref = _reference_size(A, False)
    saved = numba.get_num_threads()
    numba.set_num_threads(min(nt, numba.config.NUMBA_NUM_THREADS))
    try:
        for graft, kw in ((5, {"rptr": rptr, "rind": rind}), (10**6, {}), (0, {"rptr": rptr, "rind": rind})):
            mu_row = np.full(m, -1, np.int32)
            mu_col = np.full(n, -1, np.int32)
            _cpu.greedy(m, n, cptr, cind, mu_row, mu_col)
            raw = np.zeros(3, np.int64)
            assert not _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, level_min, graft=graft, **kw)
            _check_pairs(A, mu_row, mu_col)
            check_matching(A, mu_col, "row", expected_size=ref)
            assert (raw[2] >= 1) == (graft > 0), (graft, raw)
            assert raw[1] == ref - int(np.count_nonzero(_greedy_col(m, n, cptr, cind) >= 0))
    finally:
        numba.set_num_threads(saved)


def _greedy_col(m, n, cptr, cind):
    from gpumatch.matching import _cpu

    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    _cpu.greedy(m, n, cptr, cind, mu_row, mu_col)
    return mu_col


def test_level_min_scales_with_the_round_cost():
    """``level_min``: the 2-thread value of TUNING on 2 threads or fewer, never less on more;
    ``round_cost`` measured once per thread count, 0 on one thread."""
    import numba

    from gpumatch import _cpu_threads
    from gpumatch.matching import _cpu

    base = _cpu.TUNING["parallel_level_min"]
    assert _cpu.level_min(1) == _cpu.level_min(2) == base
    assert _cpu_threads.round_cost(1) == 0.0
    c = _cpu_threads.round_cost(2)
    assert 0 < c < 1 and _cpu_threads.round_cost(2) == c
    if numba.config.NUMBA_NUM_THREADS >= 4:
        assert _cpu.level_min(4) >= base


@pytest.mark.parametrize("name, covers", [("blockdiag", True), ("random", False), ("delaunay", False),
                                          ("rect_tall", True)])
@pytest.mark.parametrize("warm", [False, True])
def test_greedy_probe_gives_up_and_undoes(name, covers, warm):
    """The greedy probe either runs to its end within max_free of a side,
    or gives up with the matching exactly as it was (a warm start kept)."""
    from gpumatch._cpu_match import greedy_probe

    A = G.block_diagonal(3000, 6, permute=True, seed=3) if name == "blockdiag" else GRAPHS[name][0]()
    A, m, n, rptr, rind, _, _ = _patterns(A)
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    if warm:
        for r in range(0, m, 11):
            if rptr[r + 1] > rptr[r] and mu_col[rind[rptr[r + 1] - 1]] < 0:
                mu_row[r] = rind[rptr[r + 1] - 1]
                mu_col[mu_row[r]] = r
    before = mu_row.copy(), mu_col.copy()
    max_free = 3
    assert greedy_probe(m, n, rptr, rind, mu_row, mu_col, max_free) == covers
    size = _check_pairs(A, mu_row, mu_col)
    if covers:
        assert size >= min(m, n) - max_free
    else:
        np.testing.assert_array_equal(mu_row, before[0])
        np.testing.assert_array_equal(mu_col, before[1])


def test_greedy_probe_finishes_without_the_threads(parallel):
    """Block-diagonal on the multi-threaded path: the probe covers it and
    neither the CSC nor the threads' Karp-Sipser runs."""
    from gpumatch.matching import _cpu

    _cpu.TUNING["greedy_probe"] = True
    A = sp.csr_matrix(G.block_diagonal(3000, 6, permute=True, seed=3))
    res = bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=int(_reference_size(A, False)))
    alg = res.stats["algorithm"]
    if parallel > 1:
        assert alg.startswith("greedy + "), alg
        assert "threads" not in alg, alg

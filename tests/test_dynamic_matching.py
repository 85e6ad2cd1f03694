"""Dynamic matching (MatchingSolver): batches of edge changes, the kept forest, augmenting phases."""
# ruff: noqa: F811  (the shared fixtures are imported by name and requested as parameters)

from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching

from gpumatch import generators as G
from gpumatch.matching import MatchingSolver
from gpumatch.testing import check_matching

from conftest import corpus_manifest
from _dynamic_common import (MATCHING_GRAPHS, _apply_edges, _augment_state, _check_forest, _check_launch, _check_matching_result, _check_two_sided, _cupyx, _edge_batch, _forest_host, _host, _random_pattern, _seed, _solver_with_forest, _to_backend)
from _dynamic_common import aug_launch, forest_only, two_sided  # noqa: F401  (fixtures)


@pytest.mark.parametrize("name", sorted(MATCHING_GRAPHS))
@pytest.mark.parametrize("kind", ["inc", "dec", "mixed"])
@pytest.mark.parametrize("warm_init,warm_method", [("auto", "augment"), ("none", "augment"), ("greedy", "augment"), ("none", "gpr"),
                                                   ("greedy", "gpr")])
def test_matching_batches(backend, name, kind, warm_init, warm_method):
    A = MATCHING_GRAPHS[name]
    rng = np.random.default_rng(_seed(name, kind))
    Ain = A if backend == "numpy" else _cupyx(A)
    solver = MatchingSolver(Ain, backend=backend, rebuild_fraction=1.0, warm_init=warm_init,
                            warm_method=warm_method)
    _check_matching_result(solver.solve(), A)
    for size in [1, 2, max(1, A.nnz // 1000), max(1, A.nnz // 100), max(1, A.nnz // 10), 1]:
        ar, ac, rr, rc = _edge_batch(rng, A, kind, size)
        solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
        solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
        A = _apply_edges(A, ar, ac, rr, rc)
        res = solver.solve()
        assert res.stats["mode"] == "dynamic"
        _check_matching_result(res, A)
        perm = solver.matching("column")
        perm = perm if isinstance(perm, np.ndarray) else perm.get()
        check_matching(A, perm, "column", expected_size=res.size)


def test_matching_rebuild_and_cache():
    A = MATCHING_GRAPHS["bipartite"]
    rng = np.random.default_rng(3)
    solver = MatchingSolver(A, backend="numpy", rebuild_fraction=0.05)
    assert solver.solve().stats["mode"] == "scratch"
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", A.nnz // 4)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    _check_matching_result(res, A)
    assert solver.solve().stats["mode"] == "cached"
    assert (solver.graph() != A).nnz == 0


@pytest.mark.parametrize("path", ["rank", "sort"])
def test_matching_bad_updates_leave_state(backend, path, monkeypatch):
    """Bad batches raise a message naming the problem and change nothing, on
    each path a batch can take on the GPU: ordered and checked in one
    launch (small), or sorted and checked by CuPy (NumPy has one path)."""
    from gpumatch import csr as _csr

    if path == "sort":
        monkeypatch.setattr(_csr, "RANK_BATCH", 0)
    A = MATCHING_GRAPHS["rect"]
    m, n = A.shape
    Ain = A if backend == "numpy" else _cupyx(A)
    solver = MatchingSolver(Ain, backend=backend)
    size0 = solver.solve().size
    coo = A.tocoo()
    r0, c0 = int(coo.row[0]), int(coo.col[0])
    missing = next((i, j) for i in range(m) for j in range(n) if A[i, j] == 0)
    bad_remove = [([r0, missing[0]], [c0, missing[1]], "not in the graph"), ([r0], [c0, c0], "same length"),
                  ([m], [0], f"rows: index {m} is out of range"), ([0], [-1], "cols: index -1 is out of range"),
                  ([r0, r0], [c0, c0], "more than once"), ([0.5], [1], "integer")]
    for r, c, msg in bad_remove:
        with pytest.raises(ValueError, match=msg):
            solver.remove_edges(r, c)
    for r, c, msg in [([missing[0], r0], [missing[1], c0], f"edge \\({r0}, {c0}\\) is already in the graph"),
                      ([0], [n], f"cols: index {n} is out of range"),
                      ([missing[0]] * 2, [missing[1]] * 2, "more than once")]:
        with pytest.raises(ValueError, match=msg):
            solver.add_edges(r, c)
    res = solver.solve()
    assert res.stats["mode"] == "cached" and res.size == size0
    assert solver.num_edges == A.nnz
    solver.remove_edges([r0], [c0])
    A2 = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([r0]), np.array([c0]))
    _check_matching_result(solver.solve(), A2)


def test_matching_corpus(backend, corpus_dir):
    from gpumatch.io import read_matrix_market

    entries = [e for e in corpus_manifest() if e["kind"] == "matching" and 1000 <= e["nnz_stored"] <= 6000]
    if not entries:
        pytest.skip("no small matching instances in the corpus")
    rng = np.random.default_rng(13)
    for e in entries[:2]:
        A = sp.csr_matrix(read_matrix_market(corpus_dir / e["file"]))
        A.sum_duplicates()
        Ain = A if backend == "numpy" else _cupyx(A)
        solver = MatchingSolver(Ain, backend=backend, rebuild_fraction=1.0)
        _check_matching_result(solver.solve(), A)
        for kind in ["dec", "mixed", "inc"]:
            ar, ac, rr, rc = _edge_batch(rng, A, kind, max(1, A.nnz // 100))
            solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
            solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
            A = _apply_edges(A, ar, ac, rr, rc)
            _check_matching_result(solver.solve(), A)


@pytest.mark.parametrize("name", sorted(MATCHING_GRAPHS) + ["mesh"])
def test_matching_kept_forest_certifies(backend, name, aug_launch, two_sided):
    """Long random sequences of batches (several calls between solves, both
    kinds, sizes from one edge to 10 %): after each solve the kept forest is a
    Koenig certificate, the solve was incremental and its matching is maximum;
    or the backward trees certified it (``BACK_CERTIFICATE``), the forest is
    dropped and the next solve starts from every free row."""
    A = MATCHING_GRAPHS[name] if name != "mesh" else sp.csr_matrix(G.delaunay(300, seed=2))
    A = sp.csr_matrix(A)
    A.sort_indices()
    rng = np.random.default_rng(_seed("forest", name))
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0,
                            warm_init="none")
    solver.solve()
    incremental = closings = backward = 0
    fresh = False   # the solve before certified from the backward side: this one starts afresh
    for step in range(14 if backend == "numpy" else 8):
        for _ in range(int(rng.integers(1, 4))):
            kind = ("inc", "dec", "mixed")[int(rng.integers(3))]
            size = int(rng.choice([1, 2, 5, max(1, A.nnz // 50), max(1, A.nnz // 10)]))
            ar, ac, rr, rc = _edge_batch(rng, A, kind, size)
            if rng.random() < 0.5:
                solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
                solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
            else:
                solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
                solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
            A = _apply_edges(A, ar, ac, rr, rc)
        res = solver.solve()
        assert res.stats["aug_converged"], step
        _check_launch(res.stats, backend, aug_launch)
        _check_two_sided(res.stats, two_sided)
        assert not (fresh and res.stats["aug_incremental"]), step
        incremental += res.stats["aug_incremental"] or fresh
        closings += res.stats.get("aug_closings", 0)
        _check_matching_result(res, A)
        fresh = res.stats["aug_certificate"] == "backward"
        backward += fresh
        if fresh:
            assert not solver._st.extra["augment"]["valid"]
        else:
            _check_forest(solver, A)
    assert incremental >= (13 if backend == "numpy" else 7)   # every solve but the first after G-PR
    from gpumatch.matching import _augment

    if two_sided > 0 and _augment.DEFER_CLOSING:   # the deferred closing phases ran (and certified)
        assert closings > 0 if not _augment.BACK_CERTIFICATE else closings + backward > 0
    if not _augment.BACK_CERTIFICATE:
        assert backward == 0


@pytest.mark.parametrize("what", ["tree_edge", "matched_edge", "open_tree"])
def test_matching_repairs_keep_trees(backend, aug_launch, forest_only, what):
    """Removing a live tree's parent edge where another parent exists, or one
    matched edge of a live tree, repairs the tree in place: the next solve
    regrows nothing (empty first frontier), the tree is kept (orphaned for a
    matched edge) and the forest still certifies a maximum matching.  A tree
    that an added edge left open (pending) is not orphaned but regrown."""
    solver, A = _solver_with_forest(backend)
    m, n = A.shape
    tree_row, root_col, parent, depth, tstate, mu_col = _forest_host(solver, m, n)
    csc = A.tocsc()
    pick = None
    for c in np.flatnonzero(root_col >= 0):
        t = root_col[c]
        if tstate[t] != 0:
            continue
        rows = csc.indices[csc.indptr[c]:csc.indptr[c + 1]]
        if what != "tree_edge":
            pick = (int(mu_col[c]), int(c), t)
            break
        other = [u for u in rows if u != parent[c] and tree_row[u] == t and depth[u] <= depth[parent[c]]]
        if other:
            pick = (int(parent[c]), int(c), t)
            break
    assert pick is not None, "the forest has no such column"
    r, c, t = pick
    size = solver.solve().size
    if what == "open_tree":   # first an edge from the tree to a column of no tree
        out = int(np.flatnonzero(root_col < 0)[0])
        solver.add_edges(_to_backend(np.array([t]), backend), _to_backend(np.array([out]), backend))
        A = _apply_edges(A, np.array([t]), np.array([out]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    solver.remove_edges(_to_backend(np.array([r]), backend), _to_backend(np.array([c]), backend))
    A = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([r]), np.array([c]))
    res = solver.solve()
    _check_launch(res.stats, backend, aug_launch)
    _check_matching_result(res, A)
    _check_forest(solver, A)
    if what == "open_tree":
        assert res.stats["aug_seeds"] > 0
        return
    assert res.stats["aug_seeds"] == 0 and res.stats["aug_paths"] == 0 and res.size == size
    tree_row2, root_col2, _, _, tstate2, _ = _forest_host(solver, m, n)
    assert root_col2[c] == t and tstate2[t] == (1 if what == "matched_edge" else 0)


def test_matching_dead_tree_is_released(backend, aug_launch, forest_only):
    """Two matched edges of one live tree removed in one batch kill the tree:
    the next solve's first phase releases exactly that tree's columns
    (``aug_released``, on every launch path), and the forest certifies the
    new maximum matching."""
    solver, A = _solver_with_forest(backend)
    m, n = A.shape
    tree_row, root_col, parent, depth, tstate, mu_col = _forest_host(solver, m, n)
    cols = np.flatnonzero(root_col >= 0)
    trees, counts = np.unique(root_col[cols], return_counts=True)
    live = [t for t, k in zip(trees, counts) if k >= 2 and tstate[t] == 0]
    assert live, "the forest has no live tree of two columns"
    t = live[0]
    c = np.flatnonzero(root_col == t)[:2]
    r = mu_col[c]
    solver.remove_edges(_to_backend(r, backend), _to_backend(c, backend))
    A = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), r, c)
    res = solver.solve()
    _check_launch(res.stats, backend, aug_launch)
    assert res.stats["aug_released"] == int((root_col == t).sum())
    _check_matching_result(res, A)
    _check_forest(solver, A)


@pytest.mark.parametrize("start", ["empty", "greedy"])
@pytest.mark.parametrize("loop_max", ["cooperative", 0, 3, 2048])
def test_augment_phases_reach_maximum(backend, start, loop_max, monkeypatch):
    """Augmenting-path phases from any consistent matching end at a maximum one
    (on the GPU: one cooperative launch, the default, or a launch per step
    with grid-wide levels only, short one-block loops or the default loops)."""
    from gpumatch.matching import _augment
    from gpumatch.matching._augment import augment

    if backend == "numpy" and loop_max != "cooperative":
        pytest.skip("LOOP_MAX and COOPERATIVE only steer the CUDA launches")
    monkeypatch.setattr(_augment, "COOPERATIVE", loop_max == "cooperative")
    if loop_max != "cooperative":
        monkeypatch.setattr(_augment, "LOOP_MAX", loop_max)

    graphs = dict(MATCHING_GRAPHS)
    graphs["mesh"] = sp.csr_matrix(G.delaunay(400, seed=5))
    graphs["rmat"] = sp.csr_matrix(G.rmat(9, 6, seed=6))
    graphs["empty_rows"] = sp.csr_matrix((np.ones(3), ([0, 0, 4], [1, 2, 2])), shape=(6, 4))
    graphs["no_edges"] = sp.csr_matrix((5, 3))
    for name, A in graphs.items():
        A = sp.csr_matrix(A)
        A.sort_indices()
        st = _augment_state(A, backend, start)
        stats = augment(st)
        assert stats["aug_converged"], name
        assert stats["aug_cooperative"] == (backend == "cupy" and loop_max == "cooperative")
        mu_row, mu_col = _host(st.mu_row), _host(st.mu_col)
        size = int((sp_matching(A, perm_type="row") >= 0).sum())
        check_matching(A, mu_col, "row", expected_size=size)
        if stats["aug_cooperative"]:
            assert stats["aug_matched"] == size, name
        matched = np.flatnonzero(mu_row >= 0)
        assert np.array_equal(mu_col[mu_row[matched]], matched), name   # both sides agree
        if start == "empty":
            assert stats["aug_paths"] == size, name


def test_augment_random_starts(backend, aug_launch, two_sided):
    """Many small random graphs, each from a random consistent partial matching:
    the phases' stopping rule (no flipped tree touched) never stops early."""
    from gpumatch.matching._augment import augment

    rng = np.random.default_rng(_seed("augment-random"))
    for trial in range(60 if backend == "numpy" else 20):
        m, n = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        A = _random_pattern(rng, m, n, int(rng.integers(1, 3 * (m + n))))
        st = _augment_state(A, backend, "empty")
        # a random partial matching: a random subset of a greedy one
        xp = np if backend == "numpy" else __import__("cupy")
        coo = A.tocoo()
        order = rng.permutation(coo.nnz)
        mr, mc = np.full(m, -1), np.full(n, -1)
        for e in order:
            r, c = coo.row[e], coo.col[e]
            if mr[r] < 0 and mc[c] < 0 and rng.random() < 0.7:
                mr[r], mc[c] = c, r
        st.mu_row[...] = xp.asarray(mr.astype(st.mu_row.dtype))
        st.mu_col[...] = xp.asarray(mc.astype(st.mu_col.dtype))
        stats = augment(st)
        assert stats["aug_converged"]
        _check_launch(stats, backend, aug_launch)
        _check_two_sided(stats, two_sided)
        size = int((sp_matching(A, perm_type="row") >= 0).sum())
        check_matching(A, _host(st.mu_col), "row", expected_size=size)
        assert stats["aug_paths"] == size - int((mr >= 0).sum()), trial


@pytest.mark.parametrize("back_cert", [False, True])
@pytest.mark.parametrize("k", [1, 2, 9, 40])
def test_augment_two_sided_meets_halfway(backend, aug_launch, k, back_cert, monkeypatch):
    """One augmenting path of 2k + 1 edges (rows 0..k, columns 0..k, row i + 1
    matched to column i; row 0 and column k free).  Searched from both ends
    it is found in about k / 2 levels, through the backward tree of column k
    (and the second phase closes the kept tree over the rows of that tree's
    path in one more level); from row 0 alone it takes k + 1 levels.  Either
    way the flip gives the perfect matching.  With ``BACK_CERTIFICATE`` the
    second phase, a search phase, proves it (no free column is left, so the
    backward side is empty and touched nothing) and the forest is dropped."""
    from gpumatch.matching import _augment

    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", back_cert)
    rows = np.concatenate([np.arange(k + 1), np.arange(1, k + 1)])
    cols = np.concatenate([np.arange(k + 1), np.arange(k)])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(k + 1, k + 1))
    A.sort_indices()
    for ratio, levels in ((1.0, k // 2 + 3), (0.0, k + 1)):
        monkeypatch.setattr(_augment, "BACK_RATIO", ratio)
        st = _augment_state(A, backend, "empty")
        xp = np if backend == "numpy" else __import__("cupy")
        mr = np.concatenate([[-1], np.arange(k)])
        mc = np.concatenate([np.arange(1, k + 1), [-1]])
        st.mu_row[...] = xp.asarray(mr.astype(st.mu_row.dtype))
        st.mu_col[...] = xp.asarray(mc.astype(st.mu_col.dtype))
        stats = _augment.augment(st)
        _check_launch(stats, backend, aug_launch)
        assert stats["aug_converged"] and stats["aug_paths"] == 1
        # the first phase finds the path, the second proves the matching
        # perfect; with the closing deferred a search phase that flips nothing
        # comes first and then the closing phase, unless that search phase
        # certifies from the backward side
        deferred = ratio > 0 and _augment.DEFER_CLOSING
        backward = deferred and back_cert
        assert stats["aug_phases"] == (3 if deferred and not backward else 2)
        assert stats.get("aug_closings", 0) == (1 if deferred and not backward else 0)
        assert stats["aug_certificate"] == ("backward" if backward else "forest")
        assert st.extra["augment"]["valid"] == (not backward)
        if ratio > 0:   # k = 1: the search tree reaches the free column itself, not through its tree
            assert stats["aug_met"] == (1 if k >= 2 else 0) and stats["aug_levels"] <= levels, stats
            assert stats["aug_back_levels"] >= 1
        else:
            assert stats["aug_met"] == 0 and stats["aug_levels"] == levels, stats
        check_matching(A, _host(st.mu_col), "row", expected_size=k + 1)
        assert (_host(st.extra["augment"]["root_col"]) >= -1).all()


def test_augment_cut_search_phase_is_closed_before_converging(backend, aug_launch, forest_only):
    """A search phase cut with a tree still growing leaves that tree open, so a
    later search phase cannot prove the matching maximum even when it releases
    nothing: the closing phase closes the tree first, and the kept forest is a
    certificate.  Rows 0 and 1 are free, column 0 is free; row 0's tree meets
    column 0's backward tree at once (it claims no column, so the next phase
    releases nothing), while row 1's tree grows down the chain 1 - c1 = 2 - c2
    = 3 - c3 = 4 (= matched) and is cut when no backward tree is left.  (With
    ``BACK_CERTIFICATE`` the second phase proves the matching maximum from
    the columns' side instead: no column is free after the flip.)"""
    from types import SimpleNamespace

    from gpumatch.matching import _augment

    rows = np.array([0, 1, 2, 2, 3, 3, 4])
    cols = np.array([0, 1, 1, 2, 2, 3, 3])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(5, 4))
    A.sort_indices()
    st = _augment_state(A, backend, "empty")
    xp = np if backend == "numpy" else __import__("cupy")
    st.mu_row[...] = xp.asarray(np.array([-1, -1, 1, 2, 3]).astype(st.mu_row.dtype))
    st.mu_col[...] = xp.asarray(np.array([-1, 2, 3, 4]).astype(st.mu_col.dtype))
    stats = _augment.augment(st)
    _check_launch(stats, backend, aug_launch)
    assert stats["aug_converged"] and stats["aug_paths"] == 1
    # search (flips row 0's path), search (flips nothing, releases nothing), closing
    assert stats["aug_phases"] == 3 and stats["aug_closings"] == 1, stats
    check_matching(A, _host(st.mu_col), "row", expected_size=4)
    _check_forest(SimpleNamespace(_st=st, _mu_row=st.mu_row, _mu_col=st.mu_col), A)


def test_matching_backward_certificate_needs_untouched_trees(backend, aug_launch, monkeypatch):
    """The backward certificate must not stand when the backward side touched
    a search tree.  Rows a, b both see only column x; row d sees columns y
    and z.  After a warm solve the forest holds the tree of the free one of
    a, b (x and its mate); removing the matched edge at x orphans that tree
    (its root takes x, the other row is freed inside it), and a new edge
    from the freed row to the free one of y, z is an augmenting path.  The
    next search phase's backward side runs out of frontier at once and
    flips nothing, but its first column is next to the orphaned tree's
    freed row: only a phase after it may find the path (size 3, not 2)."""
    from gpumatch.matching import _augment

    a, b, d, e = 0, 1, 2, 3
    x, y, z, w = 0, 1, 2, 3
    rows, cols = np.array([a, b, d, d, e]), np.array([x, x, y, z, w])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(4, 4))
    A.sort_indices()
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0,
                            warm_init="none")
    solver.solve()
    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", False)   # the warm solve keeps its forest
    solver.remove_edges(_to_backend(np.array([e]), backend), _to_backend(np.array([w]), backend))
    A = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([e]), np.array([w]))
    res = solver.solve()
    assert res.stats["aug_certificate"] == "forest" and res.size == 2
    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", True)
    mu_col = _host(solver._mu_col).astype(np.int64)
    held, free_col = int(mu_col[x]), (y if mu_col[y] < 0 else z)
    solver.remove_edges(_to_backend(np.array([held]), backend), _to_backend(np.array([x]), backend))
    _, _, _, _, tstate, _ = _forest_host(solver, 4, 4)
    assert tstate[a + b - held] == 1, "the tree was not orphaned"
    solver.add_edges(_to_backend(np.array([held]), backend), _to_backend(np.array([free_col]), backend))
    A = _apply_edges(A, np.array([held]), np.array([free_col]), np.array([held]), np.array([x]))
    res = solver.solve()
    _check_launch(res.stats, backend, aug_launch)
    assert res.stats["aug_paths"] == 1 and res.stats["aug_phases"] >= 2, res.stats
    _check_matching_result(res, A)
    assert res.size == 3


def test_augment_max_phases_and_handover(backend, aug_launch, monkeypatch):
    """A cap on the phases leaves a valid smaller matching; the solver then finishes with G-PR."""
    from gpumatch.matching import _dynamic
    from gpumatch.matching._augment import augment

    A = sp.csr_matrix(G.grid(12, 12, drop=0.1, seed=4))
    st = _augment_state(A, backend, "empty")
    stats = augment(st, max_phases=1)
    assert stats["aug_phases"] == 1 and not stats["aug_converged"] and stats["aug_paths"] > 0
    _check_launch(stats, backend, aug_launch)
    mu_row, mu_col = _host(st.mu_row), _host(st.mu_col)
    matched = np.flatnonzero(mu_col >= 0)      # a valid matching of that many edges
    assert matched.shape[0] == stats["aug_paths"]
    assert np.array_equal(mu_row[mu_col[matched]], matched)
    assert all(A[int(mu_col[c]), int(c)] for c in matched)
    monkeypatch.setattr(_dynamic, "MAX_AUGMENT_PHASES", 1)
    rng = np.random.default_rng(21)
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0,
                            warm_init="none")
    solver.solve()
    ar, ac, rr, rc = _edge_batch(rng, A, "dec", A.nnz // 5)
    solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["aug_phases"] == 1
    if not res.stats["aug_converged"]:
        assert res.stats["global_relabels"] >= 1
    _check_matching_result(res, A)


# ---------------------------------------------------------------------------
# issue 62: one solver shared by several threads
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bk", ["numpy", "numba", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_matching_solver_shared_by_threads(bk):
    """Four threads each add and remove edges then solve, on one solver
    (issue 62 checked it beside MaxFlowSolver: rows came out matched twice
    and batches hit IndexError).  The calls take turns: every result is a
    matching, and the final one is maximum for the final graph."""
    import threading

    from gpumatch import _backend

    if bk == "numba" and not _backend.numba_available():
        pytest.skip("Numba does not import")
    m = n = 1500
    solver = MatchingSolver(G.random_bipartite(m, n, 3, seed=1), backend=bk)
    solver.solve()
    errors, barrier = [], threading.Barrier(4)

    def work(k):
        rng = np.random.default_rng(k)
        barrier.wait()
        try:
            for i in range(25):
                rows, cols = rng.integers(0, m, 30), rng.integers(0, n, 30)
                try:
                    (solver.add_edges if i % 3 else solver.remove_edges)(rows, cols)
                except ValueError:   # an edge already there (or not there): the batch is refused whole
                    pass
                col_to_row = _host(solver.solve().col_to_row)
                matched = col_to_row[col_to_row >= 0]
                assert np.unique(matched).size == matched.size, "a row matched twice"
        except Exception as exc:  # noqa: BLE001 - any failure of a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)   # (a corrupted state can loop for ever: fail, do not hang)
    assert not any(th.is_alive() for th in threads), "a thread did not finish"
    assert not errors, errors
    A = solver.graph()
    check_matching(A, _host(solver.matching()), expected_size=int((sp_matching(A, perm_type="row") >= 0).sum()))


@pytest.mark.parametrize("bk", ["numpy", "numba"])
def test_cpu_switch_by_edges_changed(bk, monkeypatch):
    """On the CPU engines the default switch also starts from scratch after
    batches that changed more than REBUILD_EDGES_CPU of the edges (edges
    added between matched vertices repair nothing); those batches neither
    unmatch nor count (the next solve drops the pairs), and every result is
    maximum.  An explicit rebuild_fraction turns that switch off.  (The
    Numba switch's cap learnt from timings is off here: see
    test_numba_switch_learns_from_its_solves.)"""
    from gpumatch import _backend
    from gpumatch.matching import _dynamic

    if bk == "numba" and not _backend.numba_available():
        pytest.skip("Numba does not import")
    monkeypatch.setattr(_dynamic.MatchingSolver, "_learn", lambda self, scratch, seconds: None)
    A = G.random_bipartite(3000, 3000, 4, seed=5)
    rng = np.random.default_rng(_seed("cpu-switch", bk))
    solver = MatchingSolver(A, backend=bk)
    explicit = MatchingSolver(A, backend=bk, rebuild_fraction=1.0)
    assert solver.rebuild_fraction == _dynamic.REBUILD_FRACTION_CPU
    for s in (solver, explicit):
        _check_matching_result(s.solve(), A)
    cut = _dynamic.REBUILD_EDGES_CPU * A.nnz
    # (size of each batch, kind, whether the default switch starts from scratch)
    for size, kind, scratch in [(int(0.2 * cut), "inc", False), (int(2 * cut), "inc", True),
                                (int(0.2 * cut), "dec", False), (int(1.2 * cut), "dec", True),
                                (int(0.2 * cut), "mixed", False)]:
        ar, ac, rr, rc = _edge_batch(rng, A, kind, size)
        if kind == "dec" and scratch:      # two batches, the second past the cut: it leaves the pairs alone
            for s in (solver, explicit):
                s.remove_edges(rr[: size // 2], rc[: size // 2])
            assert not solver._past_edges()
            for s in (solver, explicit):
                s.remove_edges(rr[size // 2:], rc[size // 2:])
            assert solver._past_edges() and not explicit._past_edges()
        else:
            for s in (solver, explicit):
                s.remove_edges(rr, rc)
                s.add_edges(ar, ac)
        A = _apply_edges(A, ar, ac, rr, rc)
        assert solver._past_edges() == scratch
        res = solver.solve()
        assert res.stats["mode"] == ("scratch" if scratch else "dynamic"), (size, kind)
        _check_matching_result(res, A)
        res = explicit.solve()
        assert res.stats["mode"] == "dynamic"
        _check_matching_result(res, A)


def test_numba_switch_learns_from_its_solves():
    """The Numba engine's default switch caps the pairs to repair of warm
    solves at half those of a warm solve that took longer than a solve from
    scratch would have (by the last one's time per edge), and doubles the
    cap after a warm solve under a quarter of that with at least half the
    cap's pairs, and after a solve from scratch that the cap alone decided;
    the cap never goes below LEARNT_CAP_FLOOR of min(m, n); every answer
    stays maximum.  The times are set here, so that the test does not depend
    on the machine's speed."""
    from gpumatch import _backend
    from gpumatch.matching import _dynamic

    if not _backend.numba_available():
        pytest.skip("Numba does not import")
    A = G.random_bipartite(2000, 2000, 4, seed=11)
    solver = MatchingSolver(A, backend="numba")
    res = solver.solve()
    assert res.stats["mode"] == "scratch" and solver._scratch_per_edge is not None
    assert solver._repair_cap == float("inf")

    def remove_matched(k):
        nonlocal A, res
        cols = np.flatnonzero(res.col_to_row >= 0)[:k]
        rows = res.col_to_row[cols]
        solver.remove_edges(rows, cols)
        A = _apply_edges(A, rows[:0], cols[:0], rows, cols)
        res = solver.solve()
        _check_matching_result(res, A)
        return res.stats["mode"]

    solver._scratch_per_edge = 1e-15          # every warm solve is slower than this
    assert remove_matched(12) == "dynamic"
    assert solver._repair_cap == 6            # (the floor, 0.001 * 2000, is lower)
    assert remove_matched(8) == "scratch"     # 8 pairs to repair > 6: the cap alone decided,
    assert solver._repair_cap == 12           # so it doubles
    solver._scratch_per_edge = 1e3            # every warm solve is far under this
    assert remove_matched(6) == "dynamic"     # 6 >= 12 / 2: the cap doubles
    assert solver._repair_cap == 24
    assert remove_matched(2) == "dynamic"     # 2 < 24 / 2: the cap stays
    assert solver._repair_cap == 24
    solver._scratch_per_edge = 1e-15
    assert remove_matched(1) == "dynamic"     # slow, but the cap stays at the floor or above
    assert solver._repair_cap == max(1, int(_dynamic.LEARNT_CAP_FLOOR * 2000))
    explicit = MatchingSolver(A, backend="numba", rebuild_fraction=0.02)
    explicit.solve()
    explicit._scratch_per_edge = 1e-15
    cols = np.flatnonzero(res.col_to_row >= 0)[:12]
    explicit.remove_edges(res.col_to_row[cols], cols)
    assert explicit.solve().stats["mode"] == "dynamic"
    assert explicit._repair_cap == float("inf")   # an explicit rebuild_fraction does not learn

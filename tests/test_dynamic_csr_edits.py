"""Incremental CSR edits (gpumatch.csr) and the dynamic matching solver's kept arrays."""

from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import csr
from gpumatch import generators as G
from gpumatch.matching import MatchingSolver

from _dynamic_common import (MATCHING_GRAPHS, _apply_edges, _check_matching_result, _cupyx, _edge_batch, _random_pattern, _seed, _to_backend)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_csr_edits_match_rebuild(backend, dtype):
    """locate / delete / insert give the CSR that a rebuild from keys gives."""
    rng = np.random.default_rng(_seed("csr-edits", str(np.dtype(dtype))))
    m, n = 40, 30
    A = _random_pattern(rng, m, n, 300)
    ip = _to_backend(A.indptr.astype(dtype), backend)
    ix = _to_backend(A.indices.astype(dtype), backend)
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    coo = A.tocoo()
    keys = coo.row.astype(np.int64) * n + coo.col
    # delete a random subset (row-major order)
    dk = np.sort(rng.choice(keys, size=37, replace=False))
    pos, found = csr.locate_entries(ip, ix, _to_backend(dk // n, backend), _to_backend(dk % n, backend))
    assert host(found).all()
    ip2, ix2 = csr.delete_entries(ip, ix, pos)
    assert ip2.dtype == dtype and ix2.dtype == dtype
    left = np.setdiff1d(keys, dk)
    ref = sp.csr_matrix((np.ones(left.shape[0]), (left // n, left % n)), shape=(m, n))
    ref.sort_indices()
    assert host(ip2).tolist() == ref.indptr.tolist() and host(ix2).tolist() == ref.indices.tolist()
    # insert new keys, including whole new rows, row ends and row starts
    new = np.setdiff1d(np.unique(np.concatenate([rng.integers(0, m * n, size=60), [0, m * n - 1]])), left)
    pos, found = csr.locate_entries(ip2, ix2, _to_backend(new // n, backend), _to_backend(new % n, backend))
    assert not host(found).any()
    ip3, ix3 = csr.insert_entries(ip2, ix2, pos, _to_backend(new // n, backend), _to_backend(new % n, backend))
    allk = np.union1d(left, new)
    ref = sp.csr_matrix((np.ones(allk.shape[0]), (allk // n, allk % n)), shape=(m, n))
    ref.sort_indices()
    assert host(ip3).tolist() == ref.indptr.tolist() and host(ix3).tolist() == ref.indices.tolist()
    # out-of-range segments are answered "not found"
    pos, found = csr.locate_entries(ip3, ix3, _to_backend(np.array([-1, m]), backend),
                                    _to_backend(np.array([0, 0]), backend))
    assert not host(found).any()


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_csr_pair_edits_match_rebuild(backend, dtype):
    """locate_entries_pair / edit_entries_pair on a CSR and its CSC give the two
    patterns a rebuild from keys gives, and count the batch's misses."""
    rng = np.random.default_rng(_seed("csr-pair-edits", str(np.dtype(dtype))))
    m, n = 40, 30
    A = _random_pattern(rng, m, n, 300)
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    dev = lambda a: _to_backend(a, backend)  # noqa: E731

    def patterns(keys):
        R = sp.csr_matrix((np.ones(keys.shape[0]), (keys // n, keys % n)), shape=(m, n))
        R.sort_indices()
        T = R.tocsc()
        T.sort_indices()
        return ((R.indptr.astype(dtype), R.indices.astype(dtype)), (T.indptr.astype(dtype), T.indices.astype(dtype)))

    def queries(keys):
        kc = np.sort((keys % n) * m + keys // n)
        segs = np.concatenate([keys // n, kc // m]).astype(np.int64)
        vals = np.concatenate([keys % n, kc % m]).astype(np.int64)
        k = keys.shape[0]
        return dev(segs), dev(vals), ((dev(segs[:k]), dev(vals[:k])), (dev(segs[k:]), dev(vals[k:])))

    def same(pats, keys):
        for got, ref in zip(pats, patterns(keys)):
            assert [host(a).tolist() for a in got] == [a.tolist() for a in ref]

    coo = A.tocoo()
    keys = np.sort(coo.row.astype(np.int64) * n + coo.col)
    pats = tuple((dev(p), dev(i)) for p, i in patterns(keys))
    dk = np.sort(rng.choice(keys, size=37, replace=False))
    _, _, q = queries(dk)
    pos, misses = csr.locate_entries_pair(pats, q, present=True)
    assert misses == 0
    assert csr.locate_entries_pair(pats, q, present=False)[1] == dk.shape[0]
    pats = csr.edit_entries_pair(pats, pos)
    left = np.setdiff1d(keys, dk)
    same(pats, left)
    assert pats[0][1].dtype == dtype and pats[1][0].dtype == dtype
    new = np.setdiff1d(np.unique(np.concatenate([rng.integers(0, m * n, size=60), [0, m * n - 1]])), left)
    segs, vals, q = queries(new)
    pos, misses = csr.locate_entries_pair(pats, q, present=False)
    assert misses == 0
    both = np.concatenate([new[:5], left[:3]])       # five new edges and three present ones
    assert csr.locate_entries_pair(pats, queries(np.sort(both))[2], present=False)[1] == 3
    same(csr.edit_entries_pair(pats, pos, segs, vals), np.union1d(left, new))


def test_csr_edits_empty(backend):
    ip = _to_backend(np.zeros(4, dtype=np.int32), backend)
    ix = _to_backend(np.zeros(0, dtype=np.int32), backend)
    e = _to_backend(np.zeros(0, dtype=np.int64), backend)
    pos, found = csr.locate_entries(ip, ix, _to_backend(np.array([1, 2]), backend),
                                    _to_backend(np.array([0, 5]), backend))
    assert (pos if isinstance(pos, np.ndarray) else pos.get()).tolist() == [0, 0]
    ip2, ix2 = csr.delete_entries(ip, ix, e)
    assert ix2.shape[0] == 0
    ip3, ix3 = csr.insert_entries(ip, ix, pos, _to_backend(np.array([1, 2]), backend),
                                  _to_backend(np.array([0, 5]), backend))
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    assert host(ip3).tolist() == [0, 0, 1, 2] and host(ix3).tolist() == [0, 5]


def test_unmatch_pairs(backend):
    mr = _to_backend(np.array([2, -1, 0, 1], dtype=np.int32), backend)
    mc = _to_backend(np.array([2, 3, 0], dtype=np.int32), backend)
    csr.unmatch_pairs(mr, mc, _to_backend(np.array([0, 3, 1, 2]), backend),
                      _to_backend(np.array([2, 0, 1, 0]), backend))
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    assert host(mr).tolist() == [-1, -1, -1, 1] and host(mc).tolist() == [-1, 3, -1]


@pytest.mark.parametrize("transpose", [False, True])
def test_matching_kept_arrays(backend, transpose):
    """A Poisson random graph (free rows reach most of it, free columns
    little) and its transpose: warm-started solves stay maximum, the kept
    CSR and CSC stay sorted and equal to the graph, and an earlier result
    is not a view of the solver's state."""
    A = sp.csr_matrix(G.random_bipartite(3000, 3000, 5, seed=21))
    if transpose:
        A = sp.csr_matrix(A.T)
    rng = np.random.default_rng(_seed("kept", str(transpose)))
    Ain = A if backend == "numpy" else _cupyx(A)
    solver = MatchingSolver(Ain, backend=backend, rebuild_fraction=1.0)
    res = solver.solve()
    _check_matching_result(res, A)
    kept = res.col_to_row.copy()
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    for kind in ["dec", "inc", "mixed"]:
        ar, ac, rr, rc = _edge_batch(rng, A, kind, 40)
        solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
        solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
        A = _apply_edges(A, ar, ac, rr, rc)
        res2 = solver.solve()
        assert res2.stats["mode"] == "dynamic"
        _check_matching_result(res2, A)
        g = solver.graph()
        g = g if isinstance(g, sp.spmatrix) else g.get()
        assert (sp.csr_matrix(g) != A).nnz == 0
        T = sp.csc_matrix(A)
        T.sort_indices()   # the kept transpose stays sorted (the edits rely on it)
        assert host(solver._cptr).tolist() == T.indptr.tolist()
        assert host(solver._cind).tolist() == T.indices.tolist()
    assert (host(res.col_to_row) == host(kept)).all()


def test_matching_default_switch():
    """The solver starts from scratch when the pairs to repair (matched
    edges removed, edges added at a free vertex) pass the default rebuild
    fraction of min(m, n); edges added between matched vertices alone never
    make it start over."""
    from gpumatch.matching._dynamic import REBUILD_FRACTION, REBUILD_FRACTION_CPU

    A = sp.csr_matrix(G.random_bipartite(400, 400, 4, seed=5))
    rng = np.random.default_rng(9)
    assert MatchingSolver(A, backend="numpy").rebuild_fraction == REBUILD_FRACTION_CPU
    solver = MatchingSolver(A, backend="numpy", rebuild_fraction=REBUILD_FRACTION)   # the GPU's default
    res = solver.solve()
    # remove more matched pairs than the fraction allows
    cols = np.flatnonzero(res.col_to_row >= 0)[:int(REBUILD_FRACTION * 400) + 3]
    rows = res.col_to_row[cols]
    solver.remove_edges(rows, cols)
    A = _apply_edges(A, rows[:0], cols[:0], rows, cols)
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    _check_matching_result(res, A)
    # many edges added between matched vertices: warm, whatever the batch size
    matched_r = np.flatnonzero(res.row_to_col >= 0)
    matched_c = np.flatnonzero(res.col_to_row >= 0)
    have = set(zip(*A.nonzero()))
    cand = [(r, c) for r, c in zip(rng.choice(matched_r, 2000), rng.choice(matched_c, 2000)) if (r, c) not in have]
    cand = sorted(set(cand))[:int(0.5 * A.nnz)]
    ar, ac = np.array([r for r, _ in cand]), np.array([c for _, c in cand])
    assert ar.size > REBUILD_FRACTION * 400
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, ar[:0], ac[:0])
    res = solver.solve()
    assert res.stats["mode"] == "dynamic"
    _check_matching_result(res, A)
    assert res.stats["warm_init"] == "none"
    # a small mixed batch: warm, without the greedy pass
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", 1)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == "dynamic" and res.stats["warm_init"] == "none"
    _check_matching_result(res, A)
    # matched pairs removed past WARM_GREEDY_FRACTION, within the rebuild fraction: warm, greedy first
    from gpumatch.matching._dynamic import WARM_GREEDY_FRACTION

    k = int(WARM_GREEDY_FRACTION * 400) + 5
    assert k < REBUILD_FRACTION * 400
    cols = np.flatnonzero(res.col_to_row >= 0)[:k]
    rows = res.col_to_row[cols]
    solver.remove_edges(rows, cols)
    A = _apply_edges(A, rows[:0], cols[:0], rows, cols)
    res = solver.solve()
    assert res.stats["mode"] == "dynamic" and res.stats["warm_init"] == "greedy"
    _check_matching_result(res, A)


def test_matching_relabel_k():
    A = MATCHING_GRAPHS["grid"]
    with pytest.raises(ValueError):
        MatchingSolver(A, backend="numpy", relabel_k=0)
    rng = np.random.default_rng(17)
    solver = MatchingSolver(A, backend="numpy", rebuild_fraction=1.0, relabel_k=3.0)
    _check_matching_result(solver.solve(), A)
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", 12)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == "dynamic"
    _check_matching_result(res, A)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_sort_batch_pair(backend, dtype):
    """The large-batch ordering (``csr.sort_batch_pair``) gives the orders of
    ``locate_batch_pair`` and counts out-of-range and repeated edges."""
    rng = np.random.default_rng(_seed("sort-batch", str(np.dtype(dtype))))
    m, n = 300, 200
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    keys = rng.choice(m * n, size=500, replace=False)
    r, c = (keys // n).astype(dtype), (keys % n).astype(dtype)
    segs, vals, problems = csr.sort_batch_pair(_to_backend(r, backend), _to_backend(c, backend), (m, n))
    assert problems == (0, 0)
    order_r = np.lexsort((c, r))
    order_c = np.lexsort((r, c))
    assert host(segs).tolist() == np.concatenate([r[order_r], c[order_c]]).tolist()
    assert host(vals).tolist() == np.concatenate([c[order_r], r[order_c]]).tolist()
    # two repeats of one edge, one of another, and two edges out of range
    r2 = np.concatenate([r, r[:1], r[:1], r[5:6], [m, -1]]).astype(dtype)
    c2 = np.concatenate([c, c[:1], c[:1], c[5:6], [0, 3]]).astype(dtype)
    _, _, problems = csr.sort_batch_pair(_to_backend(r2, backend), _to_backend(c2, backend), (m, n))
    assert problems == (2, 3)


def test_large_batches_check_like_small_ones(backend):
    """A batch past RANK_BATCH (the sorted path on the GPU) is checked as a
    small one: an index out of range or a repeated edge raises ValueError
    naming it, and the graph is unchanged."""
    A = G.random_bipartite(400, 400, 3, seed=5)
    s = MatchingSolver(_to_backend(A, backend) if backend != "cupy" else _cupyx(A), backend=backend)
    size = s.solve().size
    k = csr.RANK_BATCH + 10
    rng = np.random.default_rng(3)
    r = rng.integers(0, 400, size=k)
    c = rng.integers(0, 400, size=k)
    r[7] = 400
    with pytest.raises(ValueError, match="400"):
        s.add_edges(_to_backend(r, backend), _to_backend(c, backend))
    r[7] = 0
    c[9], r[9] = c[8], r[8]
    with pytest.raises(ValueError, match="more than once"):
        s.add_edges(_to_backend(r, backend), _to_backend(c, backend))
    assert s.num_edges == A.nnz and s.solve().size == size


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("threads", [False, True])
def test_compiled_batch_edits_match_numpy(dtype, seed, threads, monkeypatch):
    """The ``"numba"`` backend's compiled locate_batch_pair / edit_entries_pair
    give the NumPy paths' results: positions, sorted batch and problem counts
    (out-of-range, repeated and absent or present edges), and the patterns a
    rebuild from keys gives after removing and adding a batch, including
    whole rows, the first and the last entry; `threads`: the CSR's and the
    CSC's steps on two threads (the path of large patterns)."""
    pytest.importorskip("numba")
    from gpumatch import _cpu_csr_edit

    if threads:
        monkeypatch.setattr(_cpu_csr_edit, "PAIR_THREADS_MIN", 0)

    rng = np.random.default_rng(_seed("compiled-edits", str(np.dtype(dtype)), str(seed)))
    m, n = (40, 30) if seed % 2 else (25, 60)
    A = _random_pattern(rng, m, n, 300)
    A.sort_indices()
    T = A.tocsc()
    T.sort_indices()
    pats = ((A.indptr.astype(dtype), A.indices.astype(dtype)), (T.indptr.astype(dtype), T.indices.astype(dtype)))
    coo = A.tocoo()
    keys = np.sort(coo.row.astype(np.int64) * n + coo.col)
    absent = np.setdiff1d(np.arange(m * n), keys)
    cases = [
        (rng.choice(keys, size=37, replace=False), True),                       # a removal
        (np.setdiff1d(np.concatenate([rng.choice(absent, size=50, replace=False), [0, m * n - 1]]), keys),
         False),                                                                 # an addition
        (np.concatenate([keys[:5], keys[:2]]), True),                           # repeated edges
        (np.concatenate([keys[:4], absent[:3]]), True),                         # absent edges in a removal
        (np.concatenate([absent[:4], keys[:3]]), False),                        # present edges in an addition
    ]
    for batch, present in cases:
        order = rng.permutation(batch.shape[0])
        r, c = (batch // n)[order], (batch % n)[order]
        got = _cpu_csr_edit.locate_batch_pair(pats, r, c, (m, n), present)
        ref = csr.locate_batch_pair(pats, r, c, (m, n), present)
        assert got[3] == ref[3]
        if not any(got[3]):
            for a, b in zip(got[:3], ref[:3]):
                assert a.tolist() == b.tolist()
    # out of range: counted, the arrays untouched
    r, c = np.array([0, m, 1, -1]), np.array([0, 0, n, 0])
    assert _cpu_csr_edit.locate_batch_pair(pats, r, c, (m, n), True)[3][0] == \
        csr.locate_batch_pair(pats, r, c, (m, n), True)[3][0] == 3

    def rebuilt(keys):
        R = sp.csr_matrix((np.ones(keys.shape[0]), (keys // n, keys % n)), shape=(m, n))
        R.sort_indices()
        C = R.tocsc()
        C.sort_indices()
        return [R.indptr.tolist(), R.indices.tolist(), C.indptr.tolist(), C.indices.tolist()]

    rem = rng.choice(keys, size=41, replace=False)
    pos, segs, vals, problems = _cpu_csr_edit.locate_batch_pair(pats, rem // n, rem % n, (m, n), True)
    assert not any(problems)
    after = _cpu_csr_edit.edit_entries_pair(pats, pos)
    assert [a.dtype for p in after for a in p] == [dtype] * 4
    left = np.setdiff1d(keys, rem)
    assert [a.tolist() for p in after for a in p] == rebuilt(left)
    assert [a.tolist() for p in after for a in p] == [a.tolist() for p in csr.edit_entries_pair(pats, pos) for a in p]
    new = np.setdiff1d(np.concatenate([rng.choice(absent, size=60, replace=False), rem[:7], [0, m * n - 1]]), left)
    pos, segs, vals, problems = _cpu_csr_edit.locate_batch_pair(after, new // n, new % n, (m, n), False)
    assert not any(problems)
    again = _cpu_csr_edit.edit_entries_pair(after, pos, segs, vals)
    assert [a.tolist() for p in again for a in p] == rebuilt(np.union1d(left, new))

"""Tests of the assignment entries of gpumatch.batch.

``batch.min_weight_full_bipartite_matching`` (sparse problems, packed into
block-diagonal solves) and ``batch.linear_sum_assignment`` (a ``(k, m, n)``
stack solved on the CPU threads, or a list of matrices).  Every result's
total is compared with scipy's for that problem alone and its rows with the
single call's (sorted; ``arange(m)`` when ``m <= n``); matchings themselves
are never compared (several optima may exist).  The Dask path is in
test_batch_dask.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

import gpumatch
from gpumatch import batch
from gpumatch.lap import _batch_cpu

from _lap_common import random_sparse  # noqa: E402

pytest.importorskip("numba")

CPU_BACKENDS = ["auto", "numba", "numpy"]


def sparse_inputs():
    rng = np.random.default_rng(64)
    gs = [random_sparse(rng, int(rng.integers(1, 15)), int(rng.integers(1, 15)), 0.3, perm=True,
                          kind="float" if i % 3 == 0 else "int") for i in range(30)]
    gs += [sp.csr_matrix((0, 4)), sp.csr_matrix((3, 0)), sp.csr_matrix((0, 0))]
    gs.append(random_sparse(rng, 9, 6, 0.4, perm=True).tocsc())
    gs.append(sp.csr_array(random_sparse(rng, 5, 8, 0.4, perm=True)).tocoo())
    gs.append(sp.csr_matrix(np.array([[True, False], [True, True]])))
    return gs


def check_sparse(A, got, maximize=False):
    r, c = got
    r0, c0 = scipy_mwfbm(A, maximize=maximize)
    assert r.dtype == r0.dtype and c.dtype == c0.dtype
    assert r.shape == c.shape == (min(A.shape),)
    assert np.all(np.diff(r) > 0)
    if A.shape[0] <= A.shape[1]:
        assert np.array_equal(r, r0)
    A = sp.csr_matrix(A)
    assert np.isclose(A[r, c].sum(), A[r0, c0].sum(), rtol=1e-12, atol=0)
    assert len(set(c.tolist())) == c.shape[0]


# ---------------------------------------------------------------------------
# sparse problems
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("name", CPU_BACKENDS)    # (not "backend": conftest's filter of that name)
def test_sparse_batch_equals_scipy_in_order(name, maximize):
    gs = sparse_inputs()
    got = batch.min_weight_full_bipartite_matching(gs, maximize, backend=name)
    assert len(got) == len(gs)
    for A, res in zip(gs, got):
        check_sparse(A, res, maximize)


def test_sparse_batch_packs_small_problems(monkeypatch):
    calls = []
    real = gpumatch.lap.api.min_weight_full_bipartite_matching

    def spy(graph, *args, **kwargs):
        calls.append(graph.shape)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(gpumatch.lap.api, "min_weight_full_bipartite_matching", spy)
    rng = np.random.default_rng(1)
    gs = [random_sparse(rng, 12, 9, 0.4, perm=True) for _ in range(20)] + [random_sparse(rng, 5, 7, 0.5, kind="float", perm=True)]
    got = batch.min_weight_full_bipartite_matching(gs)
    # the options check on a 1x1 graph, one pack of the integer problems
    # (transposed to 9 x 12 each), one of the float one alone
    assert calls[:2] == [(1, 1), (180, 240)] and len(calls) == 3
    for A, res in zip(gs, got):
        check_sparse(A, res)
    calls.clear()
    batch.min_weight_full_bipartite_matching(gs, pack_edges=0)
    assert len(calls) == 1 + len(gs)


def test_sparse_batch_infeasible_problem_is_named():
    rng = np.random.default_rng(2)
    gs = [random_sparse(rng, 6, 6, 0.4, perm=True) for _ in range(8)]
    gs[5] = sp.csr_matrix(np.array([[1, 0], [2, 0]]))                 # both rows only have column 0
    gs[6] = sp.csr_matrix(np.array([[1.0, np.nan], [2.0, 3.0]]))
    with pytest.raises(ValueError, match=r"^problem 5: no full matching exists") as info:
        batch.min_weight_full_bipartite_matching(gs)
    assert info.value.index == 5
    got = batch.min_weight_full_bipartite_matching(gs, errors="return")
    assert isinstance(got[5], ValueError) and got[5].index == 5
    with pytest.raises(ValueError) as single:
        gpumatch.min_weight_full_bipartite_matching(gs[6])
    assert str(got[6]) == f"problem 6: {single.value}"        # the single call's message
    for i in (0, 1, 2, 3, 4, 7):
        check_sparse(gs[i], got[i])


def test_sparse_batch_explicit_zeros_warn_and_inputs_stay():
    A = sp.csr_matrix((np.array([0., 5., 5., 0.]), np.array([0, 1, 0, 1]), np.array([0, 2, 4])), shape=(2, 2))
    B = sp.csr_matrix(np.array([[1, 2], [3, 1]]))
    saved = [a.copy() for a in (A.data, A.indices, A.indptr)]
    with pytest.warns(UserWarning, match="explicit zero weights are removed"):
        got = batch.min_weight_full_bipartite_matching([A, B, A])
    assert got[0][1].tolist() == got[2][1].tolist() == [1, 0] and got[1][1].tolist() == [0, 1]
    assert all(np.array_equal(a, b) for a, b in zip(saved, (A.data, A.indices, A.indptr)))


def test_sparse_batch_weights_too_large_for_a_pack_are_solved_alone():
    # each problem alone is within the exact int64 range; the joined one of
    # 200 rows is not, so the pack is solved one by one
    w = 2 ** 62 // (4 * 4 + 8) - 1
    A = sp.csr_matrix(np.array([[w, 1, 2, 3], [1, w, 3, 2], [2, 3, w, 1], [3, 2, 1, w]], dtype=np.int64))
    got = batch.min_weight_full_bipartite_matching([A] * 50, maximize=True)
    assert all(int(A[r, c].sum()) == 4 * w for r, c in got)


def test_sparse_batch_files_and_options(tmp_path):
    from gpumatch.io import write_matrix_market

    rng = np.random.default_rng(3)
    A = random_sparse(rng, 7, 7, 0.4, perm=True)
    write_matrix_market(tmp_path / "a.mtx", A)
    got = batch.min_weight_full_bipartite_matching([str(tmp_path / "a.mtx"), A])
    assert got[0][1].tolist() == got[1][1].tolist() or np.isclose(A[got[0]].sum(), A[got[1]].sum())
    if not batch._backend.cupy_available():
        with pytest.raises(RuntimeError, match="backend='cupy' was requested"):
            batch.min_weight_full_bipartite_matching([A], backend="cupy")
    with pytest.raises(ValueError, match="errors"):
        batch.min_weight_full_bipartite_matching([A], errors="ignore")
    with pytest.raises(TypeError, match="sequence of problems"):
        batch.min_weight_full_bipartite_matching(A)
    assert batch.min_weight_full_bipartite_matching([]) == []


# ---------------------------------------------------------------------------
# dense problems: a stack, or a list
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(40, 6, 6), (25, 4, 9), (25, 9, 4), (3, 1, 5), (3, 0, 4), (2, 4, 0), (0, 3, 3)])
@pytest.mark.parametrize("kind", ["int", "float"])
def test_stack_equals_scipy(kind, shape, maximize):
    rng = np.random.default_rng(sum(shape) + maximize)
    C = rng.integers(-9, 9, shape) if kind == "int" else rng.normal(size=shape)
    saved = C.copy()
    rows, cols = batch.linear_sum_assignment(C, maximize=maximize)
    assert np.array_equal(C, saved)
    k, m, n = shape
    assert rows.shape == cols.shape == (k, min(m, n)) and rows.dtype == cols.dtype == np.int64
    for t in range(k):
        r0, c0 = scipy_lsa(C[t], maximize=maximize)
        assert np.all(np.diff(rows[t]) > 0)
        if m <= n:
            assert np.array_equal(rows[t], r0)
        assert np.isclose(C[t][rows[t], cols[t]].sum(), C[t][r0, c0].sum(), rtol=1e-12, atol=1e-12)
        assert len(set(cols[t].tolist())) == cols.shape[1]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_stack_threads_give_the_same_answers(threads):
    rng = np.random.default_rng(threads)
    C = rng.integers(0, 50, (60, 12, 12))      # 8640 entries: below PARALLEL_MIN_WORK ...
    r1, c1, s1 = _batch_cpu.solve_stack(C, False, threads=1)
    big = np.ascontiguousarray(np.tile(C, (3, 1, 1)))   # ... and above it
    r2, c2, s2 = _batch_cpu.solve_stack(big, False, threads=threads, chunk=7)
    assert not s1.any() and not s2.any()
    costs = np.take_along_axis(C, c1[:, :, None], axis=2)[:, :, 0].sum(axis=1)
    costs2 = np.take_along_axis(big, c2[:, :, None], axis=2)[:, :, 0].sum(axis=1)
    assert np.array_equal(np.tile(costs, 3), costs2)


def test_stack_forbidden_pairs_and_errors():
    rng = np.random.default_rng(5)
    C = rng.uniform(0, 10, (6, 4, 4))
    C[0, 0, :3] = np.inf                      # allowed, with forbidden pairs
    C[2, :, :2] = np.inf                      # columns 0, 1 forbidden: infeasible
    C[4, 1, 2] = np.nan
    got = batch.linear_sum_assignment(C, errors="return")
    for t in (0, 1, 3, 5):
        r0, c0 = scipy_lsa(C[t])
        assert np.isclose(C[t][got[0][t], got[1][t]].sum(), C[t][r0, c0].sum())
    assert (got[0][[2, 4]] == -1).all() and (got[1][[2, 4]] == -1).all()
    with pytest.raises(ValueError, match=r"^problem 2: cost matrix is infeasible") as info:
        batch.linear_sum_assignment(C)
    assert info.value.index == 2
    C[2] = 1.0
    with pytest.raises(ValueError, match=r"^problem 4: matrix contains invalid numeric entries: .*nan.* at \(1, 2\)"):
        batch.linear_sum_assignment(C)
    with pytest.raises(ValueError, match=r"^problem 4: matrix contains invalid numeric entries"):
        batch.linear_sum_assignment(C.transpose(0, 2, 1))      # 4 x 4 still, another layout
    M = np.ones((3, 2, 3))
    M[1, 0, 0] = np.inf                                        # +inf is invalid when maximising
    with pytest.raises(ValueError, match=r"^problem 1: .*\+inf when maximizing"):
        batch.linear_sum_assignment(M, maximize=True)
    M[1, 0, 0] = -np.inf                                       # and -inf forbidden
    assert batch.linear_sum_assignment(M, maximize=True)[1][1, 0] != 0


def test_stack_integer_costs_are_exact_and_range_checked():
    big = 2 ** 52
    C = np.array([[big + 1, big + 2, big], [big, big + 1, big + 3], [big + 2, big, big + 1]], dtype=np.int64)
    rows, cols = batch.linear_sum_assignment(np.stack([C, C.T]))
    assert [int(C[rows[0], cols[0]].sum()), int(C.T[rows[1], cols[1]].sum())] == [3 * big, 3 * big]
    D = np.stack([C, np.full((3, 3), 2 ** 61)])
    with pytest.raises(OverflowError, match=r"^problem 1: .*too large"):
        batch.linear_sum_assignment(D)
    got = batch.linear_sum_assignment(D, errors="return")
    assert (got[1][1] == -1).all() and int(C[got[0][0], got[1][0]].sum()) == 3 * big
    b = np.array([[[True, False], [False, False]]])
    assert batch.linear_sum_assignment(b)[1].tolist() == [[1, 0]]
    assert batch.linear_sum_assignment(b, maximize=True)[1].tolist() == [[0, 1]]


def test_list_of_matrices_of_several_shapes():
    rng = np.random.default_rng(9)
    mats = [rng.integers(0, 20, (int(rng.integers(1, 7)), int(rng.integers(1, 7)))) for _ in range(30)]
    mats[3] = mats[3].astype(float)
    mats[4] = mats[4].tolist()                                   # nested lists
    got = batch.linear_sum_assignment(mats)
    assert len(got) == 30
    for C, (r, c) in zip(mats, got):
        C = np.asarray(C)
        r0, c0 = scipy_lsa(C)
        assert np.array_equal(r, r0) or C.shape[0] > C.shape[1]
        assert C[r, c].sum() == C[r0, c0].sum()


def test_list_errors_are_named():
    good = np.array([[1.0, 2.0], [2.0, 1.0]])
    items = [good, np.array([[np.inf, np.inf], [1.0, 2.0]]), np.ones(3), sp.csr_matrix(good),
             np.array([["a", "b"]]), good]
    got = batch.linear_sum_assignment(items, errors="return")
    assert got[0][1].tolist() == got[5][1].tolist() == [0, 1]
    assert isinstance(got[1], ValueError) and str(got[1]) == "problem 1: cost matrix is infeasible"
    assert isinstance(got[2], ValueError) and "problem 2: expected a matrix (2-D array), got a 1 array" == str(got[2])
    assert isinstance(got[3], ValueError) and "dense array" in str(got[3])
    assert isinstance(got[4], TypeError) and got[4].index == 4
    with pytest.raises(ValueError, match=r"^problem 1: cost matrix is infeasible"):
        batch.linear_sum_assignment(items)


def test_dense_batch_bad_arguments():
    with pytest.raises(ValueError, match="3-D array"):
        batch.linear_sum_assignment(np.ones((3, 3)))
    with pytest.raises(ValueError, match="3-D array"):
        batch.linear_sum_assignment(np.ones((2, 3, 3, 3)))
    with pytest.raises(TypeError, match="real numbers"):
        batch.linear_sum_assignment(np.ones((2, 3, 3), dtype=complex))
    with pytest.raises(TypeError, match="real numbers"):
        batch.linear_sum_assignment(np.empty((2, 3, 3), dtype=object))
    with pytest.raises(ValueError, match="errors"):
        batch.linear_sum_assignment(np.ones((2, 3, 3)), errors="skip")
    with pytest.raises(ValueError, match="progress"):
        batch.linear_sum_assignment(np.ones((2, 3, 3)), progress="yes")
    with pytest.raises(TypeError, match="sequence of problems"):
        batch.linear_sum_assignment("costs.npy")
    assert batch.linear_sum_assignment([]) == []


def test_dense_batch_read_only_and_strided_input():
    rng = np.random.default_rng(11)
    C = rng.normal(size=(10, 5, 7))
    C.setflags(write=False)
    r1, c1 = batch.linear_sum_assignment(C)
    r2, c2 = batch.linear_sum_assignment(C[:, :, ::-1])          # a view with negative strides
    for t in range(10):
        a = C[t][r1[t], c1[t]].sum()
        b = C[t][:, ::-1][r2[t], c2[t]].sum()
        assert np.isclose(a, b)


def test_dense_batch_progress_bar(capsys):
    pytest.importorskip("tqdm")
    C = np.random.default_rng(0).random((300, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, cols = batch.linear_sum_assignment(C, progress=True)
    err = capsys.readouterr().err
    assert "300/300" in err
    assert rows.shape == (300, 4)

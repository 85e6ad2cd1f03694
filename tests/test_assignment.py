"""Tests of weighted bipartite matching (gpumatch.lap).

Every result is checked by gpumatch.testing.check_assignment (a matching of
stored entries, of the right size, whose dual potentials prove it optimal)
and its cost compared with scipy's min_weight_full_bipartite_matching or
linear_sum_assignment; the matchings themselves are never compared (several
optima may exist).
"""

from __future__ import annotations

import importlib
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm
from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

import gpumatch
from gpumatch import AssignmentResult, assignment, linear_sum_assignment, min_weight_full_bipartite_matching
from gpumatch.lap import _solve
from gpumatch.testing import check_assignment

from _lap_common import close, random_sparse, scipy_cost
from _dynamic_common import _seed

pytest.importorskip("numba")


# ---------------------------------------------------------------------------
# against scipy, on random inputs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["int", "float"])
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(30, 30), (20, 35), (35, 20), (1, 6), (6, 1)])
def test_sparse_matches_scipy(kind, maximize, shape):
    rng = np.random.default_rng(_seed(str(kind), str(maximize), str(shape)))
    for trial in range(8):
        A = random_sparse(rng, *shape, rng.uniform(0.05, 0.5), kind=kind, perm=trial % 2 == 0)
        ref = scipy_cost(A, maximize)
        if ref is None:
            with pytest.raises(ValueError, match="no full matching exists"):
                min_weight_full_bipartite_matching(A, maximize)
            continue
        r, c = min_weight_full_bipartite_matching(A, maximize)
        assert r.shape == c.shape == (min(shape),)
        assert np.all(np.diff(r) > 0)
        got = A[r, c].sum()
        assert got == ref if kind == "int" else close(got, ref)
        res = assignment(A, maximize)
        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, expected_cost=ref)
        assert res.full and res.size == min(shape)


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(25, 25), (10, 30), (30, 10)])
def test_dense_matches_scipy(maximize, shape):
    rng = np.random.default_rng(sum(shape) + maximize)
    for trial in range(8):
        C = rng.integers(-50, 50, shape).astype(float) if trial % 2 else rng.normal(size=shape)
        if trial % 4 == 3:      # forbidden pairs
            C[rng.random(shape) < 0.4] = -np.inf if maximize else np.inf
        try:
            r0, c0 = scipy_lsa(C, maximize=maximize)
        except ValueError as exc:
            with pytest.raises(ValueError, match=str(exc)):
                linear_sum_assignment(C, maximize=maximize)
            continue
        r, c = linear_sum_assignment(C, maximize=maximize)
        assert r.dtype == c.dtype == np.int64
        assert np.array_equal(r, r0)            # sorted rows, arange(m) when m <= n
        assert close(C[r, c].sum(), C[r0, c0].sum())
        res = assignment(C, maximize)
        check_assignment(C, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize,
                         expected_cost=C[r0, c0].sum())


def test_integer_costs_are_exact():
    # weights around 2**52: float64 cannot tell the optima apart, int64 can
    big = 2 ** 52
    C = np.array([[big + 1, big + 2, big], [big, big + 1, big + 3], [big + 2, big, big + 1]], dtype=np.int64)
    res = assignment(C)
    assert res.cost == 3 * big and isinstance(res.cost, int)
    check_assignment(C, res.row_ind, res.col_ind, res.u, res.v, expected_cost=3 * big)
    assert res.u.dtype == res.v.dtype == np.int64


def test_cost_sum_never_wraps():
    # each weight fits int64 with room for the engine's bound, the matched sum needs Python ints
    w = 2 ** 62 // (4 * 600 + 8) - 1
    A = sp.csr_matrix(np.full((600, 600), w, dtype=np.int64))
    res = assignment(A)
    assert res.cost == 600 * w and res.cost > np.iinfo(np.int64).max // 2 ** 4


def test_overflow_is_reported():
    A = sp.csr_matrix(np.array([[2 ** 62, 1], [1, 2 ** 62]], dtype=np.int64))
    with pytest.raises(OverflowError, match="too large"):
        min_weight_full_bipartite_matching(A)


def test_docstring_examples_of_scipy():
    A = sp.csr_array([[1, 1, 1], [1, 0, 0], [0, 1, 0]])
    assert min_weight_full_bipartite_matching(A)[1].tolist() == [2, 0, 1]
    r, c = min_weight_full_bipartite_matching(sp.csr_array([[0, 1, 1], [0, 2, 3]]))
    assert r.tolist() == [0, 1] and c.tolist() == [2, 1]
    r, c = min_weight_full_bipartite_matching(sp.csr_array([[0, 1], [3, 1], [1, 4]]))
    assert r.tolist() == [0, 2] and c.tolist() == [1, 0]


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_result_dtypes_follow_scipy(shape):
    A = sp.csr_matrix(np.arange(1, shape[0] * shape[1] + 1).reshape(shape))
    ours = min_weight_full_bipartite_matching(A)
    theirs = scipy_mwfbm(A)
    assert [a.dtype for a in ours] == [a.dtype for a in theirs]


@pytest.mark.parametrize("shape", [(0, 0), (2, 0), (0, 3)])
def test_empty(shape):
    A = sp.csr_matrix(shape)
    ours = min_weight_full_bipartite_matching(A)
    theirs = scipy_mwfbm(A)
    assert [a.size for a in ours] == [0, 0]
    assert [a.dtype for a in ours] == [a.dtype for a in theirs]
    r, c = linear_sum_assignment(np.zeros(shape))
    assert r.size == c.size == 0
    res = assignment(A)
    assert res.size == 0 and res.cost == 0 and res.full


# ---------------------------------------------------------------------------
# scipy's conventions: explicit zeros, infinities, duplicates, formats
# ---------------------------------------------------------------------------


def test_explicit_zeros_are_not_edges():
    A = sp.csr_matrix((np.array([0., 5., 5., 0.]), np.array([0, 1, 0, 1]), np.array([0, 2, 4])), shape=(2, 2))
    with pytest.warns(UserWarning, match="explicit zero weights are removed before matching"):
        r, c = min_weight_full_bipartite_matching(A)
    assert c.tolist() == [1, 0]
    B = sp.csr_matrix((np.array([0., 0.]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="no full matching exists"):
        min_weight_full_bipartite_matching(B)
    # dense input: zeros are costs, as in linear_sum_assignment
    assert linear_sum_assignment(np.array([[0, 5], [5, 0]]))[1].tolist() == [0, 1]


def test_infinity_is_forbidden_and_nan_invalid():
    A = sp.csr_matrix(np.array([[1., np.inf], [2., 3.]]))
    assert min_weight_full_bipartite_matching(A)[1].tolist() == [0, 1]
    with pytest.raises(ValueError, match="no full matching"):
        min_weight_full_bipartite_matching(sp.csr_matrix(np.array([[np.inf, np.inf], [2., 3.]])))
    for bad, maximize in ((np.nan, False), (-np.inf, False), (np.inf, True)):
        with pytest.raises(ValueError, match="invalid numeric entries"):
            min_weight_full_bipartite_matching(sp.csr_matrix(np.array([[1., bad], [2., 3.]])), maximize)
        with pytest.raises(ValueError, match="invalid numeric entries"):
            linear_sum_assignment(np.array([[1., bad], [2., 3.]]), maximize)
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        linear_sum_assignment(np.array([[np.inf, np.inf], [1., 2.]]))
    assert linear_sum_assignment(np.array([[-np.inf, 1.], [1., 2.]]), maximize=True)[1].tolist() == [1, 0]


def test_duplicates_are_summed():
    # (0, 0) twice with 3 + 3 = 6: the off-diagonal (5 + 1) wins
    A = sp.coo_matrix((np.array([3, 3, 5, 1, 1]), (np.array([0, 0, 0, 1, 1]), np.array([0, 0, 1, 0, 1]))),
                      shape=(2, 2))
    assert min_weight_full_bipartite_matching(A)[1].tolist() == [1, 0]
    assert scipy_mwfbm(A)[1].tolist() == [1, 0]


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_formats_and_arrays(fmt):
    rng = np.random.default_rng(5)
    A = random_sparse(rng, 15, 18, 0.3, perm=True)
    ref = scipy_cost(A)
    for M in (A.asformat(fmt), sp.csr_array(A).asformat(fmt)):
        r, c = min_weight_full_bipartite_matching(M)
        assert A[r, c].sum() == ref


def test_bool_weights():
    A = sp.csr_matrix(np.array([[True, False], [True, True]]))
    r, c = min_weight_full_bipartite_matching(A)
    assert c.tolist() == [0, 1]


def test_errors_match_scipy_types():
    dense = np.array([[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        scipy_mwfbm(dense)
    with pytest.raises(TypeError, match="must be sparse"):
        min_weight_full_bipartite_matching(dense)
    with pytest.raises(TypeError, match="CSR, CSC or COO"):
        min_weight_full_bipartite_matching(sp.lil_matrix(dense))
    with pytest.raises(ValueError, match=r"expected a matrix \(2-D array\), got a 1 array"):
        linear_sum_assignment(np.array([1, 2]))
    with pytest.raises(ValueError, match="got a 3 array"):
        linear_sum_assignment(np.zeros((2, 2, 2)))
    for bad in (np.array([[1 + 1j, 2], [3, 4]]), np.array([["a", "b"], ["c", "d"]])):
        with pytest.raises(TypeError):
            scipy_lsa(bad)
        with pytest.raises(TypeError, match="real numbers"):
            linear_sum_assignment(bad)
    with pytest.raises(TypeError, match="real numbers"):
        min_weight_full_bipartite_matching(sp.csr_matrix(np.array([[1 + 1j, 2], [3, 4]])))
    with pytest.raises(ValueError, match="dense array"):
        linear_sum_assignment(sp.csr_matrix(dense))


def test_backend_option():
    A = sp.csr_matrix(np.array([[1, 2], [3, 1]]))
    for backend in ("auto", "numba", "numpy"):
        assert min_weight_full_bipartite_matching(A, backend=backend)[1].tolist() == [0, 1]
    if not gpumatch._backend.cupy_available():
        with pytest.raises(RuntimeError, match="backend='cupy' was requested"):
            assignment(A, backend="cupy")
    with pytest.raises(ValueError, match="backend must be one of"):
        assignment(A, backend="gpu")
    with pytest.raises(ValueError, match="full must be True or False"):
        assignment(A, full="yes")


@pytest.mark.parametrize("make", ["sparse", "dense"])
def test_caller_arrays_not_mutated(make):
    rng = np.random.default_rng(8)
    A = random_sparse(rng, 20, 25, 0.3, kind="float", perm=True)
    if make == "sparse":
        A = A.tocoo()
        saved = [a.copy() for a in (A.data, A.row, A.col)]
        for maximize in (False, True):
            min_weight_full_bipartite_matching(A, maximize)
            assignment(A, maximize)
        assert all(np.array_equal(a, b) for a, b in zip(saved, (A.data, A.row, A.col)))
    else:
        C = A.toarray()
        C[C == 0] = np.inf
        saved = C.copy()
        linear_sum_assignment(C)
        assignment(C)
        assert np.array_equal(C, saved)
        C.setflags(write=False)
        linear_sum_assignment(C)


# ---------------------------------------------------------------------------
# full=False: maximum cardinality, least weight (scipy #14041)
# ---------------------------------------------------------------------------


def brute_force_partial(C):
    """Least cost among maximum matchings of a small dense matrix (nan = no edge)."""
    from itertools import permutations
    m, n = C.shape
    best = (0, 0.0)
    if m > n:
        C = C.T
        m, n = n, m
    for perm in permutations(range(n), m):
        pairs = [(i, j) for i, j in enumerate(perm) if not np.isnan(C[i, j])]
        key = (-len(pairs), sum(C[i, j] for i, j in pairs))
        if key < (-best[0], best[1]) or best == (0, 0.0):
            best = (len(pairs), key[1])
    return best


def test_partial_small_example():
    B = sp.csr_matrix(np.array([[5, 0, 0], [2, 0, 0], [7, 1, 0]]))
    res = assignment(B, full=False)
    assert (res.size, res.cost, res.full) == (2, 3, False)
    check_assignment(B, res.row_ind, res.col_ind, res.u, res.v, full=False)
    with pytest.raises(ValueError, match="no full matching exists"):
        assignment(B)
    # the first pass matches row 0 to column 0; the cheapest maximum matching uses row 1
    C = sp.csr_matrix(np.array([[10], [1]]).T)
    res = assignment(C, full=False)
    assert res.cost == 1 and res.full


@pytest.mark.parametrize("maximize", [False, True])
def test_partial_against_brute_force(maximize):
    rng = np.random.default_rng(11 + maximize)
    for _ in range(40):
        m, n = rng.integers(1, 6, 2)
        mask = rng.random((m, n)) < 0.35
        W = rng.integers(1, 20, (m, n))
        A = sp.csr_matrix(np.where(mask, W, 0))
        C = np.where(mask, W.astype(float), np.nan)
        size, cost = brute_force_partial(-C if maximize else C)
        res = assignment(A, maximize, full=False)
        assert res.size == size == int((scipy_mbm(A, perm_type="column") >= 0).sum()) if A.nnz else res.size == 0
        assert res.cost == (-cost if maximize else cost)
        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, full=False)


def test_partial_random_medium():
    rng = np.random.default_rng(3)
    A = random_sparse(rng, 300, 260, 0.006)
    size = int((scipy_mbm(A, perm_type="column") >= 0).sum())
    res = assignment(A, full=False)
    assert res.size == size < 260
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, full=False)


# ---------------------------------------------------------------------------
# the certificate checker
# ---------------------------------------------------------------------------


def test_check_assignment_catches_errors():
    A = sp.csr_matrix(np.array([[4, 1, 3], [2, 9, 5], [3, 2, 2]]))
    res = assignment(A)
    cert = check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=res.cost)
    assert cert.optimal and cert.cost == res.cost == 5
    with pytest.raises(AssertionError, match="matched more than once"):
        check_assignment(A, [0, 1, 2], [0, 0, 1])
    with pytest.raises(AssertionError, match="not full"):
        check_assignment(A, [0, 1], [1, 0])
    with pytest.raises(AssertionError, match="expected"):
        check_assignment(A, res.row_ind, res.col_ind, expected_cost=4)
    with pytest.raises(AssertionError, match="below 0"):
        check_assignment(A, res.row_ind, res.col_ind, res.u + 1, res.v)
    with pytest.raises(AssertionError, match="reduced cost"):
        check_assignment(A, [0, 1, 2], [0, 1, 2], res.u, res.v)
    with pytest.raises(AssertionError, match="not an edge"):
        check_assignment(sp.csr_matrix(np.array([[1, 0], [0, 1]])), [0, 1], [1, 0])
    with pytest.raises(ValueError, match="both potentials"):
        check_assignment(A, res.row_ind, res.col_ind, res.u)
    # rectangular: a free column must not be cheaper than a matched one
    W = sp.csr_matrix(np.array([[1, 2]]))
    with pytest.raises(AssertionError, match="larger potential than free column"):
        check_assignment(W, [0], [1], np.array([0]), np.array([1, 2]))


# ---------------------------------------------------------------------------
# properties (hypothesis) and a medium-size sanity run
# ---------------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def weighted(draw):
    m = draw(st.integers(1, 7))
    n = draw(st.integers(1, 7))
    mask = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(m, n)
    if draw(st.booleans()):
        vals = draw(st.lists(st.integers(-5, 5).filter(bool), min_size=m * n, max_size=m * n))   # ties
    else:
        vals = draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False).filter(bool), min_size=m * n,
                             max_size=m * n))
    return sp.csr_matrix(np.where(mask, np.array(vals).reshape(m, n), 0)), draw(st.booleans())


@given(weighted())
def test_property_full_and_partial(case):
    A, maximize = case
    A.eliminate_zeros()
    ref = scipy_cost(A, maximize) if A.nnz else (0 if min(A.shape) == 0 else None)
    if ref is None:
        with pytest.raises(ValueError):
            assignment(A, maximize)
    else:
        res = assignment(A, maximize)
        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, expected_cost=ref)
    res = assignment(A, maximize, full=False)
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, full=False)


def test_medium_size_sanity():
    rng = np.random.default_rng(20_000)
    n = 20_000
    rows = np.concatenate([rng.integers(0, n, 9 * n), np.arange(n)])
    cols = np.concatenate([rng.integers(0, n, 9 * n), rng.permutation(n)])
    A = sp.coo_matrix((rng.integers(1, 1000, rows.size), (rows, cols)), shape=(n, n)).tocsr()
    assignment(sp.csr_matrix(np.array([[1]])))     # the engine loaded before timing
    t0 = time.perf_counter()
    res = assignment(A)
    elapsed = time.perf_counter() - t0
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v)
    assert elapsed < 30, elapsed        # generous: shared 2-core CI machines; about 1 s here


def test_warm_up_loads_the_assignment_engine():
    from gpumatch.backends import warm_up

    steps = []
    assert warm_up("auto", ["assignment"], progress=lambda step, sec: steps.append(step)) >= 0
    assert steps == ["assignment"]
    with pytest.raises(ValueError, match="'assignment'"):
        warm_up("auto", ["weights"])


def test_public_names():
    for name in ("min_weight_full_bipartite_matching", "linear_sum_assignment", "assignment", "AssignmentResult"):
        assert name in gpumatch.__all__ and hasattr(gpumatch, name)
    assert gpumatch.AssignmentResult is AssignmentResult
    assert callable(gpumatch.assignment)
    importlib.import_module("gpumatch.lap")      # the subpackage does not shadow the function
    assert callable(gpumatch.assignment)


@st.composite
def dense_costs(draw):
    """A small dense cost matrix: integers with ties, or floats; some pairs forbidden (inf)."""
    m = draw(st.integers(0, 7))
    n = draw(st.integers(0, 7))
    kind = draw(st.sampled_from(["ties", "int", "float"]))
    size = m * n
    if kind == "ties":
        vals = draw(st.lists(st.integers(-3, 3), min_size=size, max_size=size))
    elif kind == "int":
        vals = draw(st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=size, max_size=size))
    else:
        vals = draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False), min_size=size,
                             max_size=size))
    C = np.array(vals, dtype=np.int64 if kind != "float" else np.float64).reshape(m, n)
    if draw(st.booleans()):
        forbid = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool).reshape(m, n)
        C = C.astype(np.float64)
        maximize = draw(st.booleans())
        C[forbid] = -np.inf if maximize else np.inf
    else:
        maximize = draw(st.booleans())
    return C, maximize


def scipy_dense_cost(C, maximize):
    try:
        r, c = scipy_lsa(C, maximize=maximize)
    except ValueError:
        return None
    return C[r, c].sum()


@given(dense_costs())
def test_property_dense_against_scipy(case):
    """Dense input, square or rectangular, integer (ties) or float, forbidden pairs, infeasible
    ones: the same optimum or the same error as scipy, and the duals certify it."""
    C, maximize = case
    ref = scipy_dense_cost(C, maximize)
    if ref is None:
        with pytest.raises(ValueError, match="cost matrix is infeasible"):
            linear_sum_assignment(C, maximize=maximize)
        return
    r, c = linear_sum_assignment(C, maximize=maximize)
    assert r.shape == c.shape == (min(C.shape),)
    got = C[r, c].sum()
    assert got == ref if C.dtype.kind == "i" else close(got, ref)
    res = assignment(C, maximize)
    check_assignment(C, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, expected_cost=ref)


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 3), st.data())
def test_property_integers_near_the_int32_bound(m, n, offset, data):
    """Square problems narrow integer costs to int32 when the engine's bound allows
    (``max|c| * (4k + 8) < 2**30``): weights just below and above it give scipy's cost."""
    k = min(m, n)
    edge = 2 ** 30 // (4 * k + 8) // 2 - 2 + offset     # the weights of A reach 2 * edge + 1: the bound
    vals = data.draw(st.lists(st.sampled_from([edge, -edge, edge - 1, 1, 0, -1, edge // 2]),
                              min_size=m * n, max_size=m * n))
    C = np.array(vals, dtype=np.int64).reshape(m, n)
    A = sp.csr_matrix(C + edge + 1)                     # positive: every entry is an edge
    assert (_solve._narrowed(A.data, k).dtype == np.int32) == (int(A.data.max()) * (4 * k + 8) < 2 ** 30)
    maximize = data.draw(st.booleans())
    ref = scipy_cost(A, maximize)
    res = assignment(A, maximize)
    assert res.cost == int(ref)
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, expected_cost=int(ref))
    r, c = linear_sum_assignment(C, maximize=maximize)
    assert int(C[r, c].sum()) == int(C[scipy_lsa(C, maximize=maximize)].sum())


@st.composite
def stacks(draw):
    k = draw(st.integers(0, 6))
    m = draw(st.integers(0, 5))
    n = draw(st.integers(0, 5))
    size = k * m * n
    if draw(st.booleans()):
        C = np.array(draw(st.lists(st.integers(-4, 4), min_size=size, max_size=size)), dtype=np.int64)
    else:
        C = np.array(draw(st.lists(st.floats(-50, 50, allow_nan=False, allow_infinity=False), min_size=size,
                                   max_size=size)), dtype=np.float64)
        if size and draw(st.booleans()):
            C[np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)))] = np.inf
    return C.reshape(k, m, n), draw(st.booleans())


@given(stacks())
def test_property_batch_stack_against_scipy(case):
    """gpumatch.batch.linear_sum_assignment: each problem of a stack gets scipy's optimum
    (or, with errors="return", -1 rows exactly where scipy finds it infeasible)."""
    from gpumatch import batch

    C, maximize = case
    if maximize and C.dtype.kind == "f":
        C = np.where(np.isinf(C), -np.inf, C)
    rows, cols = batch.linear_sum_assignment(C, maximize=maximize, errors="return")
    k, m, n = C.shape
    assert rows.shape == cols.shape == (k, min(m, n))
    for t in range(k):
        ref = scipy_dense_cost(C[t], maximize)
        if ref is None:
            assert (rows[t] == -1).all() and (cols[t] == -1).all()
            continue
        assert np.array_equal(rows[t], scipy_lsa(C[t], maximize=maximize)[0]) or m > n
        got = C[t][rows[t], cols[t]].sum()
        assert got == ref if C.dtype.kind == "i" else close(got, ref)


def test_partial_many_components_stays_small():
    """5000 components of two rows competing for one column (``full=False``):
    each keeps its cheaper row.  The dummy columns are per component (one
    each, on its two rows): 10 000 extra entries, where one set shared by
    every row that may stay free would take 10 000 x 5000."""
    rng = np.random.default_rng(21)
    k = 5000
    w = rng.integers(1, 100, (k, 2))
    rows = np.arange(2 * k)
    cols = np.repeat(np.arange(k), 2)
    A = sp.csr_matrix((w.ravel(), (rows, cols)), shape=(2 * k, k))
    res = assignment(A, full=False)
    assert res.size == k and res.cost == int(w.min(axis=1).sum())
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, full=False)

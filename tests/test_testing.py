"""Tests of the certificates in gpumatch.testing: they accept correct answers
and reject planted wrong ones with a precise message."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

from gpumatch.io import read_matrix_market
from gpumatch import generators
from gpumatch.testing import (
    FlowCertificate,
    MatchingCertificate,
    check_flow,
    check_matching,
    konig_cover,
)

try:
    from ._corpus import corpus_dir
except ImportError:  # tests/ is not a package
    from _corpus import corpus_dir


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def unit_network_size(A):
    """Maximum matching size of A from scipy's max flow on the unit network
    (fast on meshes and grids, where Hopcroft-Karp can be slow)."""
    A = sp.csr_matrix(A)
    m, n = A.shape
    coo = A.tocoo()
    s, t = m + n, m + n + 1
    rows = np.concatenate([np.full(m, s), coo.row, m + np.arange(n)])
    cols = np.concatenate([np.arange(m), m + coo.col, np.full(n, t)])
    C = sp.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(m + n + 2,) * 2)
    C.data[:] = 1  # duplicates summed: reset to unit capacity
    return maximum_flow(C, s, t).flow_value


def col_to_row_from_row_to_col(r2c, n):
    c2r = np.full(n, -1, dtype=np.int32)
    matched = np.flatnonzero(r2c >= 0)
    c2r[r2c[matched]] = matched
    return c2r


def cover_covers(A, cert):
    coo = sp.coo_matrix(A)
    in_r = np.zeros(A.shape[0], bool)
    in_r[cert.cover_rows] = True
    in_c = np.zeros(A.shape[1], bool)
    in_c[cert.cover_cols] = True
    return bool(np.all(in_r[coo.row] | in_c[coo.col]))


# A 3x3 example: row 1 only reaches column 0, so the maximum matching is 3 only
# through row 0 -> column 1.
SMALL = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]]))


# ---------------------------------------------------------------------------
# check_matching: accepts
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(300, 300), (400, 250), (250, 400)])
@pytest.mark.parametrize("perm_type", ["row", "column"])
@pytest.mark.parametrize("degree", [1.0, 3.0])
def test_accepts_scipy_matching(shape, perm_type, degree):
    A = generators.random_bipartite(*shape, degree, seed=7)
    mt = maximum_bipartite_matching(A, perm_type=perm_type)
    size = int(np.count_nonzero(mt >= 0))
    cert = check_matching(A, mt, perm_type, expected_size=size)
    assert isinstance(cert, MatchingCertificate)
    assert cert.size == size
    assert cert.cover_rows.size + cert.cover_cols.size == size
    assert cover_covers(A, cert)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "tuple", "csr_array"])
def test_accepts_every_input_format(fmt):
    A = generators.random_bipartite(60, 50, 2.0, seed=3)
    mt = maximum_bipartite_matching(A, perm_type="row")
    if fmt == "tuple":
        graph = (A.indptr, A.indices, A.shape)
    elif fmt == "csr_array":
        graph = sp.csr_array(A)
    else:
        graph = A.asformat(fmt)
    assert check_matching(graph, mt).size == np.count_nonzero(mt >= 0)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint32])
def test_accepts_integer_dtypes(dtype):
    mt = np.array([1, 0, 2])  # a perfect matching: no -1 needed, so unsigned works too
    assert check_matching(SMALL, mt.astype(dtype)).size == 3
    assert check_matching(SMALL, mt.astype(dtype), "column").size == 3


def test_accepts_python_list():
    assert check_matching(SMALL, [1, 0, 2]).size == 3


def test_explicit_zeros_are_edges():
    # the only perfect matching uses the stored zero at (0, 1)
    A = sp.csr_matrix((np.array([1.0, 0.0, 1.0]), np.array([0, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    assert A.nnz == 3
    mt = maximum_bipartite_matching(A, perm_type="column")
    assert check_matching(A, mt, "column", expected_size=2).size == 2
    B = A.copy()
    B.eliminate_zeros()
    with pytest.raises(AssertionError, match=r"row 0 is matched to column 1 but \(0, 1\) is not an edge"):
        check_matching(B, mt, "column")


def test_explicit_zeros_random():
    rng = np.random.default_rng(0)
    A = generators.random_bipartite(200, 200, 2.5, seed=11)
    A.data = rng.integers(0, 2, A.nnz).astype(np.float64)  # about half stored zeros
    mt = maximum_bipartite_matching(A, perm_type="row")
    check_matching(A, mt, expected_size=np.count_nonzero(mt >= 0))
    B = A.copy()
    B.eliminate_zeros()
    mt_b = maximum_bipartite_matching(B, perm_type="row")
    check_matching(B, mt_b)


@pytest.mark.parametrize("shape", [(0, 0), (4, 0), (0, 4), (3, 5)])
def test_accepts_graphs_without_edges(shape):
    A = sp.csr_matrix(shape)
    cert = check_matching(A, np.full(shape[1], -1), "row", expected_size=0)
    assert cert.size == 0 and cert.cover_rows.size == 0 and cert.cover_cols.size == 0
    assert check_matching(A, np.full(shape[0], -1), "column").size == 0


@pytest.mark.parametrize("make", [
    lambda: generators.grid(20, 17, drop=0.2, seed=1),
    lambda: generators.delaunay(400, seed=2),
    lambda: generators.rmat(9, 4, seed=5),
])
def test_accepts_generated_families(make):
    A = make()
    ref = unit_network_size(A)
    mt = maximum_bipartite_matching(A, perm_type="column")
    assert check_matching(A, mt, "column", expected_size=ref).size == ref


def test_corpus_explicit_zero_trap():
    root = corpus_dir()
    if root is None:
        pytest.skip("test corpus not found (set GPUMATCH_CORPUS)")
    A = read_matrix_market(root / "matching" / "lagraph__test_FW_1000.mtx.gz")
    mt = maximum_bipartite_matching(A, perm_type="row")
    assert check_matching(A, mt, expected_size=1000).size == 1000
    B = A.copy()
    B.eliminate_zeros()
    mt_b = maximum_bipartite_matching(B, perm_type="row")
    assert check_matching(B, mt_b, expected_size=500).size == 500
    with pytest.raises(AssertionError, match="is not an edge"):
        check_matching(B, mt)


def test_large_random_is_quick():
    A = generators.random_bipartite(100_000, 90_000, 4.0, seed=0)
    mt = maximum_bipartite_matching(A, perm_type="row")
    assert check_matching(A, mt).size == np.count_nonzero(mt >= 0)


# ---------------------------------------------------------------------------
# check_matching: rejects
# ---------------------------------------------------------------------------


def test_rejects_wrong_length():
    with pytest.raises(AssertionError, match=r"one entry per column \(length 3\), got length 2"):
        check_matching(SMALL, np.array([1, 0]))
    A = sp.csr_matrix((2, 5))
    with pytest.raises(AssertionError, match=r"one entry per row \(length 2\), got length 5"):
        check_matching(A, np.full(5, -1), "column")


def test_rejects_float_and_2d():
    with pytest.raises(AssertionError, match="integer dtype"):
        check_matching(SMALL, np.array([1.0, 0.0, 2.0]))
    with pytest.raises(AssertionError, match="one-dimensional"):
        check_matching(SMALL, np.array([[1, 0, 2]]))


@pytest.mark.parametrize("bad", [-2, 3, 100])
def test_rejects_out_of_range(bad):
    with pytest.raises(AssertionError, match=rf"matching\[1\] = {bad} is out of range"):
        check_matching(SMALL, np.array([1, bad, 2]))


def test_rejects_vertex_matched_twice():
    A = sp.csr_matrix(np.ones((5, 5)))
    mt = np.array([0, 3, 2, -1, 3])  # row 3 used by columns 1 and 4
    with pytest.raises(AssertionError, match=r"row 3 is matched twice \(columns 1 and 4\)"):
        check_matching(A, mt)
    with pytest.raises(AssertionError, match=r"column 3 is matched twice \(rows 1 and 4\)"):
        check_matching(A, mt, "column")


def test_rejects_non_edge():
    # (row 2, column 0) is not an edge of SMALL
    with pytest.raises(AssertionError, match=r"column 0 is matched to row 2 but \(2, 0\) is not an edge"):
        check_matching(SMALL, np.array([2, 0, -1]))
    with pytest.raises(AssertionError, match=r"row 1 is matched to column 2 but \(1, 2\) is not an edge"):
        check_matching(SMALL, np.array([0, 2, -1]), "column")


def test_rejects_non_maximum_with_path():
    with pytest.raises(AssertionError, match=(
            r"not maximum: there is an augmenting path of 3 edges from unmatched row 1 "
            r"to unmatched column 1 \(row 1 -> column 0 -> row 0 -> column 1\)")):
        check_matching(SMALL, np.array([0, -1, 2]))


def test_rejects_empty_matching_of_nonempty_graph():
    with pytest.raises(AssertionError, match="augmenting path of 1 edges"):
        check_matching(SMALL, np.full(3, -1))


def test_rejects_planted_non_maximum_random():
    A = generators.random_bipartite(500, 500, 3.0, seed=4)
    mt = maximum_bipartite_matching(A, perm_type="row")
    mt[np.flatnonzero(mt >= 0)[0]] = -1  # unmatch one pair
    with pytest.raises(AssertionError, match="augmenting path"):
        check_matching(A, mt)


def test_rejects_wrong_expected_size():
    with pytest.raises(AssertionError, match="matching has size 3 but the expected size is 2"):
        check_matching(SMALL, np.array([1, 0, 2]), expected_size=2)


def test_argument_errors():
    with pytest.raises(ValueError, match="perm_type"):
        check_matching(SMALL, np.array([1, 0, 2]), "rows")
    with pytest.raises(TypeError, match="sparse"):
        check_matching(SMALL.toarray(), np.array([1, 0, 2]))


# ---------------------------------------------------------------------------
# konig_cover
# ---------------------------------------------------------------------------


def test_konig_cover_small():
    rows, cols = konig_cover(SMALL, np.array([1, 0, 2]))  # perfect: cover of size 3
    assert rows.size + cols.size == 3


def test_konig_cover_random_matches_size():
    A = generators.random_bipartite(300, 200, 1.5, seed=9)
    r2c = maximum_bipartite_matching(A, perm_type="column")
    rows, cols = konig_cover(A, r2c)
    assert rows.size + cols.size == np.count_nonzero(r2c >= 0)
    coo = A.tocoo()
    assert np.all(np.isin(coo.row, rows) | np.isin(coo.col, cols))
    # consistent with the row-format certificate
    cert = check_matching(A, col_to_row_from_row_to_col(r2c, A.shape[1]), "row")
    assert np.array_equal(cert.cover_rows, rows) and np.array_equal(cert.cover_cols, cols)


def test_konig_cover_rejects_non_maximum():
    with pytest.raises(AssertionError, match="augmenting path"):
        konig_cover(SMALL, np.array([0, -1, 2]))


# ---------------------------------------------------------------------------
# check_flow: accepts
# ---------------------------------------------------------------------------

# s=0 -> 1 (2), 1 -> 3 (2), 0 -> 2 (1), 2 -> 3 (3), 1 -> 2 (1); max flow 3
NET = sp.csr_matrix(np.array([
    [0, 2, 1, 0],
    [0, 0, 1, 2],
    [0, 0, 0, 3],
    [0, 0, 0, 0],
]))


def dense_flow(pairs, n=4):
    """Skew-symmetric dense flow from {(u, v): f}."""
    F = np.zeros((n, n), dtype=np.int64)
    for (u, v), f in pairs.items():
        F[u, v] += f
        F[v, u] -= f
    return F


MAX_NET = {(0, 1): 2, (1, 3): 2, (0, 2): 1, (2, 3): 1}


def random_network(nv, density, seed, maxcap=100):
    rng = np.random.default_rng(seed)
    C = sp.random(nv, nv, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, maxcap + 1, k)).astype(np.int32)
    C.setdiag(0)
    C.eliminate_zeros()
    return C


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["dinic", "edmonds_karp"])
def test_flow_accepts_scipy(seed, method):
    C = random_network(120, 0.05, seed)
    res = maximum_flow(C, 0, 119, method=method)
    cert = check_flow(C, 0, 119, res.flow, res.flow_value)
    assert isinstance(cert, FlowCertificate)
    assert cert.value == res.flow_value == cert.cut_capacity
    assert cert.source_side[0] and not cert.source_side[119]


def test_flow_accepts_dense_and_other_formats():
    F = dense_flow(MAX_NET)
    assert check_flow(NET, 0, 3, F, 3).value == 3
    assert check_flow(NET.tocoo(), 0, 3, sp.coo_matrix(F)).value == 3
    assert check_flow(NET.tocsc(), 0, 3, sp.csr_array(F), value=3).cut_capacity == 3


def test_flow_parallel_antiparallel_and_self_loops():
    # parallel arcs 0->1 (1 + 2) given as COO duplicates, anti-parallel 1<->2,
    # a self-loop at 1 (ignored)
    rows = [0, 0, 1, 2, 1, 2]
    cols = [1, 1, 2, 1, 1, 3]
    caps = [1, 2, 4, 5, 9, 2]
    C = sp.coo_matrix((caps, (rows, cols)), shape=(4, 4))
    res = maximum_flow(sp.csr_matrix(C).astype(np.int32), 0, 3)
    cert = check_flow(C, 0, 3, res.flow, res.flow_value)
    assert cert.value == 2
    F = dense_flow({(0, 1): 2, (1, 2): 2, (2, 3): 2})
    assert check_flow(C, 0, 3, F).value == 2
    with pytest.raises(AssertionError, match="flow\\[1, 1\\] = 3, must be 0"):
        F2 = F.copy()
        F2[1, 1] = 3
        check_flow(C, 0, 3, F2)


def test_flow_int64_beyond_int32():
    big = 2**31 - 1
    C = sp.csr_matrix(np.array([[0, big, big, 0], [0, 0, 0, big], [0, 0, 0, big], [0, 0, 0, 0]], dtype=np.int64))
    F = dense_flow({(0, 1): big, (1, 3): big, (0, 2): big, (2, 3): big})
    cert = check_flow(C, 0, 3, sp.csr_matrix(F), 2 * big)
    assert cert.value == 2 * big == cert.cut_capacity


def test_flow_zero_value():
    C = sp.csr_matrix(np.array([[0, 5, 0], [0, 0, 0], [0, 7, 0]]))
    cert = check_flow(C, 0, 2, np.zeros((3, 3), dtype=np.int64), 0)
    assert cert.value == 0 and cert.source_side.tolist() == [True, True, False]


@pytest.mark.parametrize("make", [
    lambda: generators.genrmf(4, 5, 1, 50, seed=3),
    lambda: generators.washington_rlg(8, 10, 100, seed=4),
])
def test_flow_accepts_generated(make):
    C, s, t = make()
    res = maximum_flow(C.astype(np.int32), s, t)
    assert check_flow(C, s, t, res.flow, res.flow_value).value == res.flow_value


# ---------------------------------------------------------------------------
# check_flow: rejects
# ---------------------------------------------------------------------------


def test_flow_rejects_capacity_violation():
    F = dense_flow({(0, 1): 3, (1, 3): 3, (0, 2): 1, (2, 3): 1})
    with pytest.raises(AssertionError, match=r"capacity violated: flow\[0, 1\] = 3 exceeds capacity\[0, 1\] = 2"):
        check_flow(NET, 0, 3, F)


def test_flow_rejects_flow_on_a_non_arc():
    F = dense_flow({**MAX_NET, (3, 2): 1, (2, 1): 1, (1, 3): 0})
    with pytest.raises(AssertionError, match=r"capacity violated: flow\[2, 1\] = 1 exceeds capacity\[2, 1\] = 0"):
        check_flow(NET, 0, 3, F)


def test_flow_rejects_broken_conservation():
    F = dense_flow({(0, 1): 2, (1, 3): 1, (0, 2): 1, (2, 3): 1})
    with pytest.raises(AssertionError, match=r"conservation violated at vertex 1: net outflow is -1"):
        check_flow(NET, 0, 3, F)


def test_flow_rejects_broken_antisymmetry():
    F = dense_flow(MAX_NET)
    F[1, 0] = 0
    with pytest.raises(AssertionError, match=r"not antisymmetric .*flow\[0, 1\] = 2 but flow\[1, 0\] = 0"):
        check_flow(NET, 0, 3, F)


def test_flow_rejects_wrong_value():
    with pytest.raises(AssertionError, match=r"flow value is 3 .* but 4 was claimed"):
        check_flow(NET, 0, 3, dense_flow(MAX_NET), 4)


def test_flow_rejects_non_maximum():
    F = dense_flow({(0, 1): 1, (1, 3): 1, (0, 2): 1, (2, 3): 1})
    with pytest.raises(AssertionError, match=r"augmenting path exists, flow not maximum: 0 -> 1 -> 3 "
                                             r"\(2 arcs, residual capacity 1\)"):
        check_flow(NET, 0, 3, F, 2)


def test_flow_rejects_planted_non_maximum_random():
    C = random_network(100, 0.06, 5)
    res = maximum_flow(C, 0, 99)
    assert res.flow_value > 0
    with pytest.raises(AssertionError, match="augmenting path exists"):
        check_flow(C, 0, 99, sp.csr_matrix((100, 100), dtype=np.int64), 0)


def test_flow_rejects_bad_flow_arrays():
    with pytest.raises(AssertionError, match=r"flow has shape \(3, 3\)"):
        check_flow(NET, 0, 3, np.zeros((3, 3)))
    F = dense_flow(MAX_NET).astype(float)
    F[0, 1], F[1, 0] = 1.5, -1.5
    with pytest.raises(AssertionError, match="non-integral"):
        check_flow(NET, 0, 3, F)


def test_flow_argument_errors():
    F = dense_flow(MAX_NET)
    with pytest.raises(ValueError, match="source and sink must differ"):
        check_flow(NET, 1, 1, F)
    with pytest.raises(ValueError, match="sink 4 is out of range"):
        check_flow(NET, 0, 4, F)
    with pytest.raises(TypeError, match="source must be an integer"):
        check_flow(NET, 0.0, 3, F)
    with pytest.raises(ValueError, match="square"):
        check_flow(sp.csr_matrix((3, 4)), 0, 2, F)
    with pytest.raises(ValueError, match="non-negative"):
        check_flow(sp.csr_matrix(np.array([[0, -1], [0, 0]])), 0, 1, np.zeros((2, 2)))

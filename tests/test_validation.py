"""Input validation and the canonical CSR form."""

import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import _backend
from gpumatch._validation import as_csr_graph, check_option, index_dtype_for


def _reference(A):
    B = sp.csr_matrix(A, copy=True)
    B.data = np.ones_like(B.data)
    B.sum_duplicates()
    B.sort_indices()
    return B


def _with_duplicates(seed=0, shape=(40, 30)):
    rng = np.random.default_rng(seed)
    r = rng.integers(0, shape[0], 200)
    c = rng.integers(0, shape[1], 200)
    r = np.r_[r, r[:20]]
    c = np.r_[c, c[:20]]
    return sp.coo_matrix((rng.integers(0, 3, r.size).astype(float), (r, c)), shape=shape)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_formats_give_the_same_canonical_pattern(fmt, container, backend):
    A = _with_duplicates()
    ref = _reference(A)
    g = as_csr_graph(container(A).asformat(fmt), backend)
    assert g.backend == backend
    assert g.shape == A.shape
    np.testing.assert_array_equal(_backend.to_numpy(g.indptr), ref.indptr)
    np.testing.assert_array_equal(_backend.to_numpy(g.indices), ref.indices)
    assert g.indices.dtype == np.int32


def test_explicit_zeros_are_edges():
    A = sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    g = as_csr_graph(A, "numpy")
    assert g.nnz == 2


def test_tuple_input_int64_and_unsorted(backend):
    indptr = np.array([0, 3, 3, 5], dtype=np.int64)
    indices = np.array([2, 0, 2, 1, 1], dtype=np.int64)
    g = as_csr_graph((indptr, indices, (3, 4)), backend)
    assert _backend.to_numpy(g.indptr).tolist() == [0, 2, 2, 3]
    assert _backend.to_numpy(g.indices).tolist() == [0, 2, 1]


def test_with_data_sums_duplicates():
    A = sp.coo_matrix(([3, 4, 5], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    g = as_csr_graph(A, "numpy", with_data=True)
    assert g.data.tolist() == [7, 5]


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (4, 4)])
def test_empty_inputs_are_valid(shape):
    g = as_csr_graph(sp.csr_matrix(shape), "numpy")
    assert g.shape == shape and g.nnz == 0 and g.indptr.shape[0] == shape[0] + 1


@pytest.mark.parametrize("dense", [np.eye(3), [[1, 0], [0, 1]], np.array([[1]])])
def test_dense_input_is_a_type_error(dense):
    with pytest.raises(TypeError, match=r"^graph must be sparse, got (ndarray|list); accepted: "):
        as_csr_graph(dense)


def _dense_calls():
    import gpumatch
    from gpumatch import io

    D = np.eye(3)
    return {
        "maximum_bipartite_matching": ("graph", lambda: gpumatch.maximum_bipartite_matching(D)),
        "structural_rank": ("graph", lambda: gpumatch.structural_rank(D)),
        "bipartite_matching": ("graph", lambda: gpumatch.bipartite_matching(D)),
        "MatchingSolver": ("graph", lambda: gpumatch.MatchingSolver(D)),
        "maximum_flow": ("csgraph", lambda: gpumatch.maximum_flow(D, 0, 1)),
        "minimum_cut": ("csgraph", lambda: gpumatch.minimum_cut(D, 0, 1)),
        "MaxFlowSolver": ("csgraph", lambda: gpumatch.MaxFlowSolver(D, 0, 1)),
        "dulmage_mendelsohn": ("A", lambda: gpumatch.dulmage_mendelsohn(D)),
        "block_triangular_form": ("A", lambda: gpumatch.block_triangular_form(D)),
        "write_matrix_market": ("A", lambda: io.write_matrix_market(io.__name__ + ".unused.mtx", D)),
    }


@pytest.mark.parametrize("solver", sorted(_dense_calls()))
def test_dense_input_reads_the_same_in_every_solver(solver):
    """One wording everywhere: "<argument> must be sparse, got <type>; accepted: ..."."""
    arg, call = _dense_calls()[solver]
    with pytest.raises(TypeError, match=rf"^{arg} must be sparse, got ndarray; accepted: "):
        call()


@pytest.mark.parametrize("fmt", ["lil", "dok", "bsr", "dia"])
def test_unsupported_sparse_formats_name_the_accepted_ones(fmt):
    A = sp.random(5, 5, density=0.4, format=fmt, random_state=0)
    with pytest.raises(TypeError, match=r"CSR, CSC or COO.*got " + fmt.upper()):
        as_csr_graph(A)


@pytest.mark.parametrize(
    "indptr, indices, shape, message",
    [
        ([0, 1, 3], [0, 5, 1], (2, 3), "column index 5 is out of range"),
        ([0, 1, 3], [0, -1, 1], (2, 3), "non-negative"),
        ([0, 2, 1], [0, 1], (2, 3), "non-decreasing"),
        ([1, 1, 2], [0, 1], (2, 3), r"indptr\[0\] must be 0"),
        ([0, 1], [0], (2, 3), "length m \\+ 1"),
        ([0, 1, 4], [0, 1], (2, 3), "does not match"),
        ([0, 1, 2], [0.0, 1.0], (2, 3), "integer dtype"),
        ([0, 1, 2], [0, 1], (2, -3), "non-negative"),
    ],
)
def test_malformed_tuples(indptr, indices, shape, message, backend):
    arrays = tuple(_backend.to_backend(np.asarray(a), backend) for a in (indptr, indices))
    with pytest.raises(ValueError, match=message):
        as_csr_graph(arrays + (shape,), backend)


def test_malformed_scipy_indices_are_caught():
    A = sp.csr_matrix((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), shape=(2, 3))
    with pytest.raises(ValueError, match="column index 7 is out of range"):
        as_csr_graph(A)


@pytest.mark.parametrize(
    "array, position, value, message",
    [
        ("indices", 1, 7, "column index 7 is out of range"),
        ("indices", 0, -1, "must be non-negative"),
        ("indptr", 1, 3, "non-decreasing"),
        ("indptr", 0, 1, r"indptr\[0\] must be 0"),
    ],
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_malformed_scipy_csr_names_the_problem_on_every_backend(array, position, value, message, dtype, backend):
    # a host CSR bound for the GPU is checked there: the same messages as on the host
    A = sp.csr_matrix((np.ones(2), np.array([0, 2]), np.array([0, 1, 2])), shape=(2, 3))
    A.indices, A.indptr = A.indices.astype(dtype), A.indptr.astype(dtype)
    getattr(A, array)[position] = value
    with pytest.raises(ValueError, match=message):
        as_csr_graph(A, backend)


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_canonical_scipy_csr_is_kept_and_read_only_is_fine(container, backend):
    ref = _reference(_with_duplicates(5))
    A = container(ref)
    for a in (A.indptr, A.indices, A.data):
        a.flags.writeable = False
    g = as_csr_graph(A, backend, with_data=True)
    assert g.backend == backend and g.kind == "scipy"
    np.testing.assert_array_equal(_backend.to_numpy(g.indptr), ref.indptr)
    np.testing.assert_array_equal(_backend.to_numpy(g.indices), ref.indices)
    np.testing.assert_array_equal(_backend.to_numpy(g.data), ref.data.astype(np.int64))
    assert type(g.indices) is type(_backend.to_backend(np.zeros(1), backend))


def test_tuple_of_wrong_length():
    with pytest.raises(TypeError, match=r"\(indptr, indices, shape\)"):
        as_csr_graph((np.array([0]), (1, 1)))


def test_check_option():
    assert check_option("perm_type", "column", ("row", "column")) == "column"
    with pytest.raises(ValueError, match=r"perm_type must be one of \('row', 'column'\), got 'rows'"):
        check_option("perm_type", "rows", ("row", "column"))
    with pytest.raises(ValueError, match="must be one of"):
        check_option("method", ["gpr"], ("gpr", "flow"))


def test_index_dtype_switches_to_int64():
    assert index_dtype_for(10, 2**31 - 2) == np.int32
    assert index_dtype_for(10, 2**31 - 1) == np.int64
    assert index_dtype_for(2**40) == np.int64


@pytest.mark.gpu
def test_cupyx_inputs_follow_the_device():
    import cupyx.scipy.sparse as cpx

    A = _with_duplicates(3)
    ref = _reference(A)
    for fmt in ("csr", "csc", "coo"):
        g = as_csr_graph(cpx.csr_matrix(sp.csr_matrix(A)).asformat(fmt), "numpy")
        assert g.cupy_out
        np.testing.assert_array_equal(g.indptr, ref.indptr)
        np.testing.assert_array_equal(g.indices, ref.indices)
    g = as_csr_graph(cpx.coo_matrix(A), "cupy", with_data=True)
    B = sp.csr_matrix(A)
    B.sum_duplicates()
    np.testing.assert_allclose(_backend.to_numpy(g.data), B.data)


@pytest.mark.parametrize(
    "indptr, indices, expect_indices",
    [
        ([0, 2, 4], [1, 3, 0, 2], [1, 3, 0, 2]),      # canonical: kept as is
        ([0, 2, 4], [1, 1, 0, 2], [1, 0, 2]),         # duplicate inside a row
        ([0, 2, 4], [3, 1, 0, 2], [1, 3, 0, 2]),      # unsorted row
        ([0, 0, 3], [0, 2, 2], [0, 2]),               # empty first row, duplicate
    ],
)
def test_canonical_check_only_skips_canonical_rows(indptr, indices, expect_indices, backend):
    g = as_csr_graph((np.asarray(indptr), np.asarray(indices), (2, 4)), backend)
    assert _backend.to_numpy(g.indices).tolist() == expect_indices
    assert int(_backend.to_numpy(g.indptr)[-1]) == len(expect_indices)

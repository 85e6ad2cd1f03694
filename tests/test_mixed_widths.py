"""Mixed widths (issue 63): int64 offsets over int32 vertex ids.

Past ``2**31 - 1`` stored entries the pointer arrays and entry positions
need int64, while row and column ids still fit int32.  The switch is
:data:`gpumatch.csr.OFFSET_LIMIT`; the ``mixed`` fixture lowers it to a few
entries, so that every solver runs the mixed layout on small graphs: the
NumPy twins and the Numba engine here, the CUDA kernels (``-DIDX=int
-DOFF="long long"``) in the gpu-marked cases.  Every result is checked
(sizes against scipy, König covers, flow values, decompositions against an
all-int32 solve), and the widths the solvers picked are asserted.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching
from scipy.sparse.csgraph import maximum_flow as sp_maxflow

import gpumatch
from gpumatch import _backend, _memory, _validation, csr
from gpumatch.matching import _driver, _tail
from gpumatch.testing import check_matching

#: Entries from which the offsets are int64 in these tests.
LOW_LIMIT = 16


@pytest.fixture
def mixed(monkeypatch):
    """Lower the int64-offset switch: graphs of LOW_LIMIT entries or more get int64 offsets, int32 ids."""
    monkeypatch.setattr(csr, "OFFSET_LIMIT", LOW_LIMIT)
    return LOW_LIMIT


def _graph(m=60, n=50, density=0.08, seed=0):
    A = sp.random(m, n, density=density, format="csr", random_state=seed)
    A.data[:] = 1
    return A


def _xp(backend):
    return _backend.get_xp("cupy" if backend == "cupy" else "numpy")


def _tuple(A, backend):
    """The (indptr, indices, shape) hand-over: int64 pointers, int32 ids, on the backend's device."""
    xp = _xp(backend)
    return (xp.asarray(A.indptr.astype(np.int64)), xp.asarray(A.indices.astype(np.int32)), A.shape)


def _int64_csr(A):
    """`A` with int64 index arrays (scipy's constructor narrows them when they fit)."""
    B = sp.csr_matrix(A, copy=True)
    B.indices, B.indptr = B.indices.astype(np.int64), B.indptr.astype(np.int64)
    return B


def _size_ref(A):
    return int((sp_matching(A, perm_type="column") >= 0).sum())


def test_dtypes_split_ids_and_offsets(mixed):
    assert csr.offset_dtype_for(LOW_LIMIT - 1) == np.int32
    assert csr.offset_dtype_for(LOW_LIMIT) == np.int64
    assert csr.index_dtype_for(10**6) == np.int32
    # a graph of 4e9 entries over 1.6e9 vertices: int32 ids, int64 offsets
    monkey = csr.OFFSET_LIMIT
    assert monkey == LOW_LIMIT
    assert [str(d) for d in _validation.graph_dtypes(800_000_000, 800_000_000, 100)] == ["int32", "int64"]
    # offsets are never narrower than ids
    assert [str(d) for d in _validation.graph_dtypes(2**31, 5, 10)] == ["int64", "int64"]


def test_real_switch_is_at_int32_max():
    assert csr.OFFSET_LIMIT == csr.INT32_MAX
    assert [str(d) for d in _validation.graph_dtypes(800_000_000, 800_000_000, 4_000_000_000)] == ["int32", "int64"]
    assert [str(d) for d in _validation.graph_dtypes(1000, 1000, 5000)] == ["int32", "int32"]


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_tuple_hand_over_keeps_the_callers_arrays(mixed, backend):
    A = _graph()
    indptr, indices, shape = _tuple(A, backend)
    g = _validation.as_csr_graph((indptr, indices, shape), backend)
    assert g.indptr is indptr and g.indices is indices          # no copy, no widening
    assert g.offset_dtype == np.int64 and g.index_dtype == np.int32


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_int64_scipy_indices_are_narrowed_when_they_fit(mixed, backend):
    A = _graph()
    B = _int64_csr(A)
    before = B.indices.copy()
    g = _validation.as_csr_graph(B, backend)
    assert g.index_dtype == np.int32 and g.offset_dtype == np.int64
    np.testing.assert_array_equal(_backend.to_numpy(g.indices), A.indices)
    np.testing.assert_array_equal(B.indices, before)              # the caller's array is untouched


def test_big_host_graph_keeps_its_int64_indices(monkeypatch):
    """Past 2**31 entries (here: a lowered threshold) a host graph solved on
    the host keeps the caller's int64 indices rather than copying them."""
    monkeypatch.setattr(_validation, "INT32_MAX", 8)
    A = _graph()
    B = _int64_csr(A)
    g = _validation.as_csr_graph(B, "numpy")
    assert g.indices is B.indices and g.index_dtype == np.int64


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("skewed", [False, True])
def test_transpose_of_a_mixed_pattern(mixed, backend, skewed):
    A = _graph(80, 70, 0.1, seed=3)
    if skewed:   # a column of more than 64 entries: the device sorts it outside the kernel
        A = sp.csr_matrix(A + sp.csr_matrix((np.ones(80), (np.arange(80), np.full(80, 5))), shape=A.shape))
        A.data[:] = 1
    indptr, indices, _ = _tuple(A, backend)
    t_ptr, t_ind, perm = csr.transpose(indptr, indices, A.shape[1], return_perm=True)
    assert t_ptr.dtype == np.int64 and t_ind.dtype == np.int32 and perm.dtype == np.int64
    C = A.tocsc()
    np.testing.assert_array_equal(_backend.to_numpy(t_ptr), C.indptr)
    np.testing.assert_array_equal(_backend.to_numpy(t_ind), C.indices)   # rows ascending per column
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    p = _backend.to_numpy(perm)
    np.testing.assert_array_equal(rows[p], C.indices)
    np.testing.assert_array_equal(A.indices[p], np.repeat(np.arange(A.shape[1]), np.diff(C.indptr)))


@pytest.mark.gpu
@pytest.mark.parametrize("ptr", [np.int64, np.int32])
@pytest.mark.parametrize("block", [1, 7, 50, 120, 10**9])
@pytest.mark.parametrize("shape", [(80, 70), (3, 200), (200, 3)])
def test_blocked_transpose(mixed, monkeypatch, block, shape, ptr):
    """int32 ids on the device without the permutation: cuSPARSE per row
    block of at most `block` entries (a longer row alone), merged in row
    order: scipy's CSC exactly (rows ascending, pointers in the input's
    width), with empty rows, a column of more than 32 entries (the merge's
    long path) and rows whose columns are not sorted."""
    cp = pytest.importorskip("cupy")
    monkeypatch.setattr(csr, "TRANSPOSE_BLOCK_ENTRIES", block)
    m, n = shape
    A = _graph(m, n, 0.1, seed=5).tolil()
    A[:, n // 2] = 1                   # a long column
    A[m // 3, :] = 0                   # an empty row
    A = sp.csr_matrix(A)
    A.data[:] = 1
    rng = np.random.default_rng(block)
    shuffled = A.indices.copy()
    for r in range(m):
        rng.shuffle(shuffled[A.indptr[r]:A.indptr[r + 1]])
    indptr, indices = cp.asarray(A.indptr.astype(ptr)), cp.asarray(shuffled.astype(np.int32))
    got = csr._transpose_blocked(indptr, indices, m, n)
    assert got is not None
    t_ptr, t_ind = got
    assert t_ptr.dtype == ptr and t_ind.dtype == np.int32
    C = A.tocsc()
    C.sort_indices()
    np.testing.assert_array_equal(_backend.to_numpy(t_ptr), C.indptr)
    np.testing.assert_array_equal(_backend.to_numpy(t_ind), C.indices)
    for a, b in zip(csr.transpose(indptr, indices, n), got):   # transpose() agrees (this path, or cuSPARSE whole)
        np.testing.assert_array_equal(_backend.to_numpy(a), _backend.to_numpy(b))


@pytest.mark.gpu
def test_matching_over_blocked_transposes(mixed, monkeypatch):
    """A certified matching whose CSC was merged from many row blocks."""
    monkeypatch.setattr(csr, "TRANSPOSE_BLOCK_ENTRIES", 37)
    A = _graph(400, 350, 0.02, seed=9)
    r = gpumatch.bipartite_matching(_tuple(A, "cupy"), backend="cupy", certificate=True)
    check_matching(A, _backend.to_numpy(r.col_to_row), perm_type="row", expected_size=_size_ref(A))
    rows, cols = A.nonzero()
    cr, cc = _backend.to_numpy(r.cover_rows), _backend.to_numpy(r.cover_cols)
    assert bool(np.all(cr[rows] | cc[cols])) and int(cr.sum() + cc.sum()) == r.size


def test_state_widths(mixed, backend):
    A = _graph()
    g = _validation.as_csr_graph(A, backend)
    st = _driver.make_state(g)
    assert (st.idx, st.odt) == (np.int32, np.int64)
    assert st.rptr.dtype == st.cptr.dtype == np.int64
    assert st.rind.dtype == st.cind.dtype == st.mu_row.dtype == np.int32


@pytest.mark.parametrize("init", ["greedy", "karp_sipser"])
def test_matching_with_certificate(mixed, backend, init):
    A = _graph(120, 100, 0.04, seed=7)
    r = gpumatch.bipartite_matching(_tuple(A, backend), backend=backend, certificate=True, init=init)
    check_matching(A, _backend.to_numpy(r.col_to_row), perm_type="row", expected_size=_size_ref(A))
    assert r.size == _size_ref(A)
    assert int(r.cover_rows.sum()) + int(r.cover_cols.sum()) == r.size
    rows, cols = A.nonzero()
    cr, cc = _backend.to_numpy(r.cover_rows), _backend.to_numpy(r.cover_cols)
    assert bool(np.all(cr[rows] | cc[cols]))
    assert r.col_to_row.dtype == np.int32


def test_matching_tails_on_the_twin(mixed, monkeypatch):
    """The augmenting-path tail and the host finish with mixed widths (NumPy twin)."""
    monkeypatch.setattr(_driver, "AUGMENT_AFTER", 0)
    monkeypatch.setattr(_tail, "HOST_FINISH_BACKENDS", ("numpy",))
    monkeypatch.setattr(_tail, "HOST_FINISH", dict(_tail.HOST_FINISH, chunk=1, fixed_s=0.0, entry_s=0.0))
    n = 300
    # a permuted chain: long augmenting paths
    rng = np.random.default_rng(1)
    p = rng.permutation(n)
    rows = np.concatenate([np.arange(n), np.arange(1, n)])
    cols = np.concatenate([p, p[:-1]])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, n))
    r = gpumatch.bipartite_matching(A, backend="numpy", certificate=True)
    assert r.size == _size_ref(A)
    assert int(r.cover_rows.sum() + r.cover_cols.sum()) == r.size


def test_matching_by_flow(mixed, backend):
    A = _graph(70, 90, 0.05, seed=2)
    perm = gpumatch.maximum_bipartite_matching(_tuple(A, backend), method="flow", backend=backend)
    check_matching(A, _backend.to_numpy(perm), perm_type="row", expected_size=_size_ref(A))


def test_flow_network_widths(mixed):
    A = _graph()
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices, A.shape)
    assert ip.dtype == np.int64 and ix.dtype == np.int32


@pytest.mark.parametrize("layout", ["reverse_csr", "bcsr"])
def test_maximum_flow(mixed, backend, layout):
    rng = np.random.default_rng(5)
    V = 40
    C = sp.random(V, V, density=0.15, format="csr", random_state=4)
    C.data = rng.integers(1, 20, C.nnz).astype(np.float64)
    C.setdiag(0)
    C.eliminate_zeros()
    C = sp.csr_matrix(C.astype(np.int64))
    ref = sp_maxflow(C.astype(np.int32), 0, V - 1).flow_value
    g = C if backend != "cupy" else _backend.cpx_sparse.csr_matrix(C.astype(np.float64))
    res = gpumatch.maximum_flow(g, 0, V - 1, backend=backend, layout=layout)
    assert int(res.flow_value) == ref
    F = sp.csr_matrix(_backend.to_numpy(res.flow.toarray()) if backend == "cupy" else res.flow.toarray())
    assert np.allclose((F + F.T).toarray(), 0)
    side = _backend.to_numpy(res.source_side)
    assert side[0] and not side[V - 1]
    cut = C.toarray()[side][:, ~side].sum()
    assert int(cut) == ref


def test_minimum_cut_of_a_unit_network(mixed, backend):
    A = _graph(50, 60, 0.06, seed=9)
    xp = _xp(backend)
    ip, ix, cap, s, t = csr.bipartite_flow_network(xp.asarray(A.indptr.astype(np.int64)), xp.asarray(A.indices),
                                                   A.shape)
    V = A.shape[0] + A.shape[1] + 2
    cut = gpumatch.minimum_cut((ip, ix, (V, V)), s, t, backend=backend)
    assert int(cut.cut_value) == _size_ref(A)


def test_dulmage_mendelsohn(mixed, backend, monkeypatch):
    A = _graph(40, 45, 0.06, seed=11)
    got = gpumatch.dulmage_mendelsohn(_tuple(A, backend), backend=backend)
    monkeypatch.setattr(csr, "OFFSET_LIMIT", csr.INT32_MAX)
    ref = gpumatch.dulmage_mendelsohn(A, backend=backend)
    # (the GPU's matching, and with it the order inside the blocks, may differ between runs)
    names = ("rr", "cc") if backend == "cupy" else ("p", "q", "rr", "cc")
    for name in names:
        np.testing.assert_array_equal(_backend.to_numpy(getattr(got, name)), _backend.to_numpy(getattr(ref, name)))
    assert int(got.structural_rank) == int(ref.structural_rank) == _size_ref(A)
    assert int(got.nblocks) == int(ref.nblocks)
    from gpumatch.structure import check_dulmage_mendelsohn

    check_dulmage_mendelsohn(A, got)


def test_matching_solver(mixed, backend):
    A = _graph(50, 50, 0.06, seed=13)
    S = gpumatch.MatchingSolver(_tuple(A, backend), backend=backend)
    r = S.solve()
    assert r.size == _size_ref(A)
    rows, cols = A.nonzero()
    S.remove_edges(rows[:5], cols[:5])
    B = A.tolil()
    B[rows[:5], cols[:5]] = 0
    B = sp.csr_matrix(B)
    B.eliminate_zeros()
    assert S.solve().size == _size_ref(B)


def test_maxflow_solver(mixed, backend):
    A = _graph(30, 30, 0.1, seed=17)
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices, A.shape)
    V = ip.shape[0] - 1
    C = sp.csr_matrix((cap * 2, ix, ip), shape=(V, V))
    if backend == "cupy":
        C = _backend.cpx_sparse.csr_matrix(C.astype(np.float64))
    S = gpumatch.MaxFlowSolver(C, s, t, backend=backend)
    first = int(S.solve().flow_value)
    assert first == 2 * _size_ref(A)


def test_memory_estimate_counts_the_widths():
    m = n = 800_000_000
    nnz = 4_000_000_000
    need = gpumatch.memory_estimate((m, n), nnz, certificate=True)
    assert need / nnz <= 32
    phases = _memory.memory_phases((m, n), nnz, certificate=True)
    assert max(phases.values()) == need and set(phases) >= {"setup", "augmenting paths", "certificate"}
    # int64 ids throughout would cost more
    small = gpumatch.memory_estimate((1000, 1000), 5000)
    assert small < need
    flow = gpumatch.memory_estimate((1000, 1000), 5000, problem="flow")
    cut = gpumatch.memory_estimate((1000, 1000), 5000, problem="flow", flow_matrix=False)
    assert cut < flow
    with pytest.raises(ValueError, match="problem"):
        gpumatch.memory_estimate((3, 3), 3, problem="lp")
    with pytest.raises(ValueError, match="square"):
        gpumatch.memory_estimate((3, 4), 3, problem="flow")


def test_memory_check_message(monkeypatch):
    monkeypatch.setattr(_memory, "device_free_bytes", lambda: (2 * 2**30, 2**29))
    with pytest.raises(MemoryError, match=r"needs about 4.00 GiB .* only 2.50 GiB is free"):
        _memory.check_device_memory(4 * 2**30, "a test")
    _memory.check_device_memory(2 * 2**30, "a test")            # fits
    monkeypatch.setenv("GPUMATCH_MEMORY_CHECK", "0")
    _memory.check_device_memory(4 * 2**30, "a test")            # turned off


@pytest.mark.gpu
def test_device_check_before_a_too_large_matching(monkeypatch):
    monkeypatch.setattr(_memory, "device_free_bytes", lambda: (1024, 0))
    with pytest.raises(gpumatch.DeviceMemoryError, match="matching of a 60 x 50 graph"):
        gpumatch.bipartite_matching(_graph(), backend="cupy")

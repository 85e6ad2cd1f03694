"""Shared CSR utilities: NumPy twins against brute force, CuPy twins against NumPy."""

import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import _backend, csr


def _graph(seed, m=60, n=45, density=0.08, dtype=np.int32):
    A = sp.random(m, n, density=density, format="csr", random_state=seed)
    A.sort_indices()
    return A.indptr.astype(dtype), A.indices.astype(dtype), A


def _to(backend, *arrays):
    return tuple(_backend.to_backend(a, backend) for a in arrays)


def _np(*arrays):
    return tuple(_backend.to_numpy(a) for a in arrays)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])   # on CuPy: cuSPARSE, and the sort
@pytest.mark.parametrize("seed", range(3))
def test_transpose_matches_scipy(seed, dtype, backend):
    indptr, indices, A = _graph(seed, dtype=dtype)
    plain = _np(*csr.transpose(*_to(backend, indptr, indices), A.shape[1]))
    ti, tx, perm = _np(*csr.transpose(*_to(backend, indptr, indices), A.shape[1], return_perm=True))
    assert ti.dtype == tx.dtype == perm.dtype == dtype
    np.testing.assert_array_equal(plain[0], ti)
    np.testing.assert_array_equal(plain[1], tx)
    B = A.T.tocsr()
    B.sort_indices()
    np.testing.assert_array_equal(ti, B.indptr)
    np.testing.assert_array_equal(tx, B.indices)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(indptr))
    cols_t = np.repeat(np.arange(A.shape[1]), np.diff(ti))
    np.testing.assert_array_equal(rows[perm], tx)
    np.testing.assert_array_equal(indices[perm], cols_t)


@pytest.mark.gpu
@pytest.mark.parametrize("return_perm", [False, True])
def test_transpose_takes_cusparse_for_int32(return_perm):
    """32-bit device patterns go through cuSPARSE (no silent fall-back to
    the sort), with the same arrays and permutation as the NumPy sort."""
    indptr, indices, A = _graph(4, m=300, n=200, density=0.05)
    got = csr._transpose_cusparse(*_to("cupy", indptr, indices), A.shape[1], return_perm)
    assert got is not None
    want = csr.transpose(indptr, indices, A.shape[1], return_perm=return_perm)
    for g, w in zip(_np(*got), want):
        np.testing.assert_array_equal(g, w)


def test_degrees():
    indptr, _, A = _graph(1)
    np.testing.assert_array_equal(csr.degrees(indptr), np.diff(A.indptr))


@pytest.mark.parametrize("seed", range(3))
def test_reverse_arc_index_round_trip(seed, backend):
    rng = np.random.default_rng(seed)
    C = sp.random(50, 50, density=0.1, format="csr", random_state=seed)
    C.sort_indices()
    indptr, indices = C.indptr.astype(np.int32), C.indices.astype(np.int32)
    in_indptr, in_indices, in_to_out, out_to_in = _np(*csr.reverse_arc_index(*_to(backend, indptr, indices), 50))
    tails = np.repeat(np.arange(50), np.diff(indptr))
    heads = np.repeat(np.arange(50), np.diff(in_indptr))
    k = np.arange(indices.size)
    np.testing.assert_array_equal(in_to_out[out_to_in], k)
    # the incoming arc at position j of head u is the out-arc tail -> u
    np.testing.assert_array_equal(tails[in_to_out], in_indices)
    np.testing.assert_array_equal(indices[in_to_out], heads)
    assert rng is not None


@pytest.mark.parametrize("seed", range(3))
def test_antiparallel_pairs_brute_force(seed, backend):
    """Every stored arc u -> v (u != v) whose reverse is stored is in exactly
    one pair, with its reverse; self-loops and lone arcs are in none."""
    C = sp.random(40, 40, density=0.15, format="csr", random_state=seed)
    C = (C + sp.random(40, 40, density=0.05, format="csr", random_state=seed + 7).T).tocsr()
    C.setdiag(1.0)       # self-loops, which pair with nothing
    C.sort_indices()
    indptr, indices = C.indptr.astype(np.int32), C.indices.astype(np.int32)
    k, p = _np(*csr.antiparallel_pairs(*_to(backend, indptr, indices), 40))
    rows = np.repeat(np.arange(40), np.diff(indptr))
    where = {(int(u), int(v)): i for i, (u, v) in enumerate(zip(rows, indices))}
    expected = sorted((i, where[(v, u)]) for (u, v), i in where.items() if u != v and (v, u) in where
                      and i < where[(v, u)])
    assert expected and list(zip(k.tolist(), p.tolist())) == expected
    assert k.dtype == p.dtype == np.int64
    empty = csr.antiparallel_pairs(*_to(backend, np.zeros(4, dtype=np.int32), np.zeros(0, dtype=np.int32)), 3)
    assert [a.shape[0] for a in empty] == [0, 0]


def test_bipartite_flow_network_value_is_matching_size():
    from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

    indptr, indices, A = _graph(4, m=40, n=30, density=0.05)
    ip, ix, cap, s, t = csr.bipartite_flow_network(indptr, indices, A.shape)
    V = A.shape[0] + A.shape[1] + 2
    assert ip.shape[0] == V + 1 and cap.dtype == np.int64
    N = sp.csr_matrix((cap.astype(np.int32), ix, ip), shape=(V, V))
    value = maximum_flow(N, s, t).flow_value
    size = int((maximum_bipartite_matching(A, perm_type="row") >= 0).sum())
    assert value == size > 0
    assert (np.diff(ix[ip[0]:ip[1]]) > 0).all() if ip[1] - ip[0] > 1 else True


def test_bipartite_flow_network_same_on_both(backend):
    indptr, indices, A = _graph(5)
    ref = csr.bipartite_flow_network(indptr, indices, A.shape)
    got = csr.bipartite_flow_network(*_to(backend, indptr, indices), A.shape)
    for r, g in zip(ref[:3], got[:3]):
        np.testing.assert_array_equal(r, _backend.to_numpy(g))
    assert ref[3:] == got[3:]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("size", [0, 1, 1000, 100_003])
def test_compact_is_boolean_indexing(size, dtype, backend):
    rng = np.random.default_rng(size)
    values = rng.integers(-5, 1_000_000, size).astype(dtype)
    keep = rng.random(size) < 0.3
    (got,) = _np(csr.compact(*_to(backend, values, keep)))
    np.testing.assert_array_equal(got, values[keep])
    assert got.dtype == dtype


def _brute_first_min(indptr, indices, labels, vertices, stop_at=None):
    big = np.iinfo(labels.dtype).max
    nb, ml = [], []
    for i, v in enumerate(vertices):
        best, arg = big, -1
        for p in range(indptr[v], indptr[v + 1]):
            u = indices[p]
            if labels[u] < best:
                best, arg = labels[u], u
            if stop_at is not None and labels[u] <= stop_at[i]:
                break
        nb.append(arg)
        ml.append(best)
    return np.array(nb), np.array(ml)


@pytest.mark.parametrize("use_stop", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_first_min_neighbor(seed, use_stop, backend):
    indptr, indices, A = _graph(seed, density=0.15)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 6, A.shape[1]).astype(np.int32)
    vertices = rng.choice(A.shape[0], 25, replace=False).astype(np.int32)
    stop = rng.integers(0, 4, 25).astype(np.int32) if use_stop else None
    args = _to(backend, indptr, indices, labels, vertices)
    kw = {"stop_at": _backend.to_backend(stop, backend)} if use_stop else {}
    nb, ml = _np(*csr.first_min_neighbor(*args, **kw))
    rnb, rml = _brute_first_min(indptr, indices, labels, vertices, stop)
    np.testing.assert_array_equal(nb, rnb)
    np.testing.assert_array_equal(ml, rml)


@pytest.mark.parametrize("seed", range(3))
def test_bfs_expand(seed, backend):
    indptr, indices, A = _graph(seed)
    rng = np.random.default_rng(seed)
    frontier = np.unique(rng.choice(A.shape[0], 10)).astype(np.int32)
    visited = rng.random(A.shape[1]) < 0.3
    (got,) = _np(csr.bfs_expand(*_to(backend, indptr, indices, frontier, visited)))
    expect = sorted({int(u) for v in frontier for u in indices[indptr[v]:indptr[v + 1]] if not visited[u]})
    assert got.tolist() == expect


def test_expand_segments_and_owner():
    indptr = np.array([0, 2, 2, 5, 6])
    owner, pos = csr.expand_segments(indptr, np.array([2, 0, 1]))
    assert owner.tolist() == [0, 0, 0, 1, 1]
    assert pos.tolist() == [2, 3, 4, 0, 1]
    assert csr.segment_owner(indptr, 6).tolist() == [0, 0, 2, 2, 2, 3]


@pytest.mark.parametrize("seed", range(3))
def test_segment_offsets_inverts_segment_owner(seed, backend):
    indptr, _, A = _graph(seed, density=0.05)           # empty rows included
    owners = csr.segment_owner(*_to(backend, indptr.astype(np.int64)), A.nnz)
    got = _np(csr.segment_offsets(owners, A.shape[0]))[0]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, indptr)
    assert _np(csr.segment_offsets(*_to(backend, np.zeros(0, dtype=np.int64)), 3))[0].tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize(
    "indptr, indices",
    [
        ([0, 2, 3], [4, 1, 2]),            # unsorted row
        ([0, 2, 3], [1, 4, 2]),            # canonical
        ([0, 2, 2, 4], [1, 1, 0, 3]),      # duplicate
        ([0, 3, 2], [0, 1, 2]),            # decreasing pointers
        ([0, 1, 9], [0, 1, 2]),            # a row beyond the indices
        ([0, 0, 0], []),                   # no entries
        ([0], []),                         # no rows
        ([2, 3, 3], [5, 0, 1]),            # indptr[0] != 0
    ],
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16])
def test_pattern_summary_on_both_backends(indptr, indices, dtype, backend):
    ref = csr.pattern_summary(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64))
    args = _to(backend, np.asarray(indptr).astype(dtype), np.asarray(indices).astype(dtype))
    got = csr.pattern_summary(*args)
    assert (got.first, got.last, got.decreasing, got.out_of_range) == \
        (ref.first, ref.last, ref.decreasing, ref.out_of_range)
    if not (ref.decreasing or ref.out_of_range):
        assert (got.min_index, got.max_index, got.canonical) == (ref.min_index, ref.max_index, ref.canonical)


@pytest.mark.parametrize("seed", range(3))
def test_pattern_summary_random(seed, backend):
    indptr, indices, A = _graph(seed, m=3000, n=2000, density=0.01)
    got = csr.pattern_summary(*_to(backend, indptr, indices))
    assert got == (0, A.nnz, False, False, int(indices.min()), int(indices.max()), True)
    shuffled = indices.copy()
    shuffled[indptr[5]:indptr[6]] = shuffled[indptr[5]:indptr[6]][::-1]
    canonical = indptr[6] - indptr[5] < 2
    assert csr.pattern_summary(*_to(backend, indptr, shuffled)).canonical == canonical


def _skewed(dtype=np.int32):
    """A pattern with empty, short and long columns (hub columns of
    thousands of rows next to columns of a few)."""
    rng = np.random.default_rng(7)
    m, n = 3000, 400
    A = sp.random(m, n, density=0.004, format="lil", random_state=7)
    A[:, 3] = 1.0                                    # every row
    A[rng.choice(m, 1500, replace=False), 5] = 1.0
    for c in (7, 8, 9):
        A[rng.choice(m, int(rng.integers(40, 900)), replace=False), c] = 1.0
    A[:, 11] = 0.0                                   # empty column
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    A.sort_indices()
    return A.indptr.astype(dtype), A.indices.astype(dtype), A


def _shuffle_rows(indptr, indices, seed):
    """The same pattern with the column indices of every row in random order."""
    rng = np.random.default_rng(seed)
    key = np.repeat(np.arange(indptr.size - 1), np.diff(indptr)) * 2.0 + rng.random(indices.size)
    return indices[np.argsort(key, kind="stable")]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])   # on CuPy: cuSPARSE, and the sort
@pytest.mark.parametrize("kind", ["random", "skewed", "empty", "no_rows", "no_cols"])
def test_transpose_takes_unsorted_rows(backend, kind, dtype):
    """Rows whose column indices are not sorted give the same transpose
    (rows of each column ascending) and a permutation to match."""
    if kind == "random":
        indptr, indices, A = _graph(3, m=500, n=300, density=0.02, dtype=dtype)
    elif kind == "skewed":
        indptr, indices, A = _skewed(dtype)
    elif kind == "empty":
        indptr, indices, A = np.zeros(6, dtype=dtype), np.zeros(0, dtype=dtype), sp.csr_matrix((5, 4))
    elif kind == "no_rows":
        indptr, indices, A = np.zeros(1, dtype=dtype), np.zeros(0, dtype=dtype), sp.csr_matrix((0, 4))
    else:
        indptr, indices, A = np.zeros(4, dtype=dtype), np.zeros(0, dtype=dtype), sp.csr_matrix((3, 0))
    n = A.shape[1]
    shuffled = _shuffle_rows(indptr, indices, 5)
    if kind in ("random", "skewed"):
        assert not np.array_equal(shuffled, indices)
    ti, tx, perm = _np(*csr.transpose(*_to(backend, indptr, shuffled), n, return_perm=True))
    plain = _np(*csr.transpose(*_to(backend, indptr, shuffled), n))
    B = A.T.tocsr()
    B.sort_indices()
    assert ti.dtype == tx.dtype == perm.dtype == np.dtype(dtype)
    assert ti.shape == (n + 1,)
    np.testing.assert_array_equal(ti, B.indptr)
    np.testing.assert_array_equal(tx, B.indices)
    np.testing.assert_array_equal(plain[0], ti)
    np.testing.assert_array_equal(plain[1], tx)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(indptr))
    np.testing.assert_array_equal(rows[perm], tx)
    np.testing.assert_array_equal(shuffled[perm], np.repeat(np.arange(n), np.diff(ti)))


@pytest.mark.gpu
def test_transpose_cusparse_takes_unsorted_rows():
    """cuSPARSE itself (no fall-back to the sort) on rows whose column
    indices are not sorted: the rows of each column still come out sorted."""
    indptr, indices, A = _skewed()
    shuffled = _shuffle_rows(indptr, indices, 6)
    for return_perm in (False, True):
        got = csr._transpose_cusparse(*_to("cupy", indptr, shuffled), A.shape[1], return_perm)
        assert got is not None
        want = csr.transpose(indptr, shuffled, A.shape[1], return_perm=return_perm)
        for g, w in zip(_np(*got), want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("present", [True, False])
@pytest.mark.parametrize("k", [1, 7, 300, 700])
def test_locate_batch_pair(backend, dtype, present, k):
    """Ordering, checks and positions of a batch against brute force, with
    batches that cross the kernel's 256-key tiles, and each kind of problem."""
    indptr, indices, A = _graph(k, m=70, n=50, density=0.3, dtype=dtype)
    m, n = A.shape
    T = A.T.tocsr()
    T.sort_indices()
    pats = _to(backend, indptr, indices, T.indptr.astype(dtype), T.indices.astype(dtype))
    pats = ((pats[0], pats[1]), (pats[2], pats[3]))
    rng = np.random.default_rng(k)
    have = set(zip(*A.nonzero()))
    pool = [e for e in have] if present else [(i, j) for i in range(m) for j in range(n) if (i, j) not in have]
    pick = rng.choice(len(pool), size=min(k, len(pool)), replace=False)
    edges = [pool[i] for i in pick]
    r = np.array([e[0] for e in edges], dtype=np.int64)
    c = np.array([e[1] for e in edges], dtype=np.int64)

    def run(r, c):
        pos, segs, vals, problems = csr.locate_batch_pair(pats, *_to(backend, r, c), (m, n), present)
        return _np(pos, segs, vals) + (problems,)

    pos, segs, vals, problems = run(r, c)
    assert problems == (0, 0, 0)
    q = len(edges)
    by_row, by_col = sorted(edges), sorted(edges, key=lambda e: (e[1], e[0]))
    np.testing.assert_array_equal(segs, [e[0] for e in by_row] + [e[1] for e in by_col])
    np.testing.assert_array_equal(vals, [e[1] for e in by_row] + [e[0] for e in by_col])
    keys = np.repeat(np.arange(m), np.diff(indptr)) * n + indices
    keys_t = np.repeat(np.arange(n), np.diff(T.indptr)) * m + T.indices
    np.testing.assert_array_equal(pos[:q], np.searchsorted(keys, [e[0] * n + e[1] for e in by_row]))
    np.testing.assert_array_equal(pos[q:], np.searchsorted(keys_t, [e[1] * m + e[0] for e in by_col]))
    # each problem is counted: out of range (both ends), a repeated edge (both copies), a wrong presence
    bad_r, bad_c = np.append(r, [m, 0]), np.append(c, [0, -1])
    assert run(bad_r, bad_c)[3][0] == 2
    assert run(np.append(r, r[0]), np.append(c, c[0]))[3][1] == 2
    other = next((i, j) for i in range(m) for j in range(n) if ((i, j) in have) != present)
    assert run(np.append(r, other[0]), np.append(c, other[1]))[3] == (0, 0, 1)
    empty = run(r[:0], c[:0])
    assert empty[0].shape == (0,) and empty[3] == (0, 0, 0)

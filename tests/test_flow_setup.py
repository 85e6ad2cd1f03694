"""The set-up and output twins of push-relabel (``pr_setup.cu`` and its
NumPy twins in ``gpumatch.flow._pr_numpy``): anti-parallel pairs, the flow
matrix, worklists, labels, hubs and the exact source total.  The NumPy twins
are checked against plain definitions; the CUDA kernels (gpu-marked) against
the NumPy twins, on graphs with self-loops, pairs, empty rows and hubs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import csr
from gpumatch.flow import _pr_numpy as KN


def _network(n, density, seed, loops=True):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 9, k).astype(np.float64))
    A = A + A[:, ::-1][::-1, :].T.multiply(rng.random((n, n)) < 0.3)   # some anti-parallel arcs
    if loops:
        A = A + sp.diags((rng.integers(0, 2, n) * 3).astype(np.float64))
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    A.sort_indices()
    A.eliminate_zeros()
    return A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(np.int64), n


GRAPHS = [_network(1, 1.0, 0), _network(50, 0.01, 4, loops=False), _network(7, 0.4, 1), _network(60, 0.08, 2), _network(300, 0.02, 3, loops=False)]


def _dense_flow(indptr, indices, f, V):
    F = np.zeros((V, V), dtype=np.int64)
    rows = np.repeat(np.arange(V), np.diff(indptr))
    np.add.at(F, (rows, indices), f)
    return F - F.T


@pytest.mark.parametrize("g", GRAPHS)
def test_numpy_pair_index_matches_antiparallel_pairs(g):
    indptr, indices, _, V = g
    partner, pairs, paired = KN.pair_index(indptr, indices, V)
    k, p = csr.antiparallel_pairs(indptr, indices, V)
    assert pairs == k.shape[0]
    assert (partner[k] == p).all() and (partner[p] == k).all()
    rows = np.repeat(np.arange(V), np.diff(indptr))
    loops = np.nonzero(indices == rows)[0]
    assert (partner[loops] == loops).all()
    assert paired == 2 * pairs + loops.shape[0] == int((partner >= 0).sum())


@pytest.mark.parametrize("g", GRAPHS)
def test_numpy_flow_matrix_is_the_skew_symmetric_union(g):
    indptr, indices, cap, V = g
    f = np.random.default_rng(5).integers(0, 5, indices.shape[0]).astype(np.int64)
    p, c, d = KN.flow_matrix(indptr, indices, f, V)
    F = sp.csr_matrix((d, c, p), shape=(V, V))
    assert (F.toarray() == _dense_flow(indptr, indices, f, V)).all()
    pattern = sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(V, V))
    assert F.nnz == (pattern + pattern.T).nnz


def test_numpy_source_capacity_is_exact():
    cap = np.array([2**62, 2**62, 2**62, 5], dtype=np.int64)
    assert KN.source_capacity(None, cap, 0, 4) == 3 * 2**62 + 5
    assert KN.source_capacity(None, cap, 2, 2) == 0


@pytest.mark.gpu
@pytest.mark.parametrize("g", GRAPHS)
def test_cuda_setup_twins_agree(g):
    import cupy as cp

    from gpumatch.flow import _pr_cupy as KC

    indptr, indices, cap, V = g
    d_ptr, d_ind, d_cap = cp.asarray(indptr), cp.asarray(indices), cp.asarray(cap)
    partner, pairs, paired = KC.pair_index(d_ptr, d_ind, V)
    np.testing.assert_array_equal(partner.get(), KN.pair_index(indptr, indices, V)[0])
    assert (pairs, paired) == KN.pair_index(indptr, indices, V)[1:]
    rng = np.random.default_rng(7)
    f = rng.integers(0, 6, indices.shape[0]).astype(np.int64)
    assert KC.pair_share(cp.asarray(f), partner) == pytest.approx(KN.pair_share(f, partner.get()))
    p, c, d = KC.flow_matrix(d_ptr, d_ind, cp.asarray(f), V)
    q, e, h = KN.flow_matrix(indptr, indices, f, V)
    np.testing.assert_array_equal(p.get(), q)
    np.testing.assert_array_equal(c.get(), e)
    np.testing.assert_array_equal(d.get(), h)
    p64, c64, d64 = KC.flow_matrix(d_ptr.astype(cp.int64), d_ind, cp.asarray(f), V)   # mixed index dtypes
    assert p64.dtype == np.int64
    for got, want in ((p64, q), (c64, e), (d64, h)):
        np.testing.assert_array_equal(got.get(), want)
    for s in range(min(V, 3)):
        ps, pe = int(indptr[s]), int(indptr[s + 1])
        assert KC.source_capacity(d_ind, d_cap, ps, pe) == KN.source_capacity(indices, cap, ps, pe)
    hub = 2
    deg = np.diff(indptr) + np.bincount(indices, minlength=V)
    in_ptr = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=V))]).astype(np.int32)
    got = np.sort(KC.hubs_of(d_ptr, cp.asarray(in_ptr), hub).get())
    np.testing.assert_array_equal(got, np.nonzero(deg > hub)[0])


@pytest.mark.gpu
@pytest.mark.parametrize("V", [1, 5000, 1_100_000])     # one block; many; two vertices per thread
def test_cuda_labels_and_worklist_agree(V):
    import cupy as cp

    from gpumatch.flow import _pr_cupy as KC

    rng = np.random.default_rng(3)
    excess = rng.integers(-1, 3, V).astype(np.int64)
    height = rng.integers(-1, 20, V).astype(np.int32)
    st_n = {"excess": excess.copy(), "height": height.copy()}
    st_c = {"excess": cp.asarray(excess), "height": cp.asarray(height)}
    t = V // 2
    for skip in (-1, 0, V - 1):
        got = KC.active(st_c, np.int32, t, 15, skip).get()       # ascending, as the twin's
        np.testing.assert_array_equal(got, KN.active(st_n, np.int32, t, 15, skip))
    KN.finish_heights(st_n, np.int32, 99)
    KC.finish_heights(st_c, np.int32, 99)
    np.testing.assert_array_equal(st_c["height"].get(), st_n["height"])
    if V < 2:
        return
    KN.init_heights(st_n, np.int32, t, V - 1, 77)
    KC.init_heights(st_c, np.int32, t, V - 1, 77)
    np.testing.assert_array_equal(st_c["height"].get(), st_n["height"])

"""Tests of G-PR maximum bipartite matching (gpumatch.matching).

Every result is checked by gpumatch.testing.check_matching (valid matching +
König cover of the same size) and, where known, against the reference size.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm
from scipy.sparse.csgraph import maximum_flow, structural_rank as scipy_srank

from conftest import certified_loop_in_child, corpus_manifest
from gpumatch import _backend, generators
from gpumatch._validation import CSRGraph, as_csr_graph
from gpumatch.io import read_matrix_market
from gpumatch.csr import bipartite_flow_network
from gpumatch.matching import (MatchingResult, bipartite_matching, maximum_bipartite_matching,
                               structural_rank)
from gpumatch.matching import _driver, _kernels_numpy, _tail
from gpumatch.testing import check_matching


def host(a):
    return _backend.to_numpy(a)


def scipy_size(A):
    A = sp.csr_matrix(A)
    if A.nnz == 0 or 0 in A.shape:
        return 0
    return int((scipy_mbm(A, perm_type="row") >= 0).sum())


def flow_size(A):
    """Reference size from scipy's maximum_flow on the unit network (fast on meshes)."""
    A = sp.csr_matrix(A)
    if A.nnz == 0:
        return 0
    ptr, ind, cap, s, t = bipartite_flow_network(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.shape)
    V = ptr.shape[0] - 1
    net = sp.csr_matrix((cap.astype(np.int32), ind, ptr), shape=(V, V))
    return int(maximum_flow(net, s, t).flow_value)


def check_both(A, backend, expected=None, **kw):
    """Run both public entry points and certify each output."""
    for perm_type in ("row", "column"):
        perm = maximum_bipartite_matching(A, perm_type, backend=backend, **kw)
        p = host(perm)
        assert p.dtype == np.int32
        assert p.shape == ((A.shape[1],) if perm_type == "row" else (A.shape[0],))
        check_matching(A, p, perm_type=perm_type, expected_size=expected)
    res = bipartite_matching(A, backend=backend, certificate=True, **kw)
    check_matching(A, host(res.col_to_row), expected_size=expected)
    check_matching(A, host(res.row_to_col), perm_type="column", expected_size=expected)
    r2c, c2r = host(res.row_to_col), host(res.col_to_row)
    matched = np.flatnonzero(c2r >= 0)
    assert np.array_equal(r2c[c2r[matched]], matched)
    assert res.size == int((c2r >= 0).sum())
    assert res.stats["backend"] == backend
    _check_cover(A, res)
    return res


def _check_cover(A, res):
    cr, cc = host(res.cover_rows), host(res.cover_cols)
    assert cr.dtype == bool and cc.dtype == bool
    assert int(cr.sum() + cc.sum()) == res.size
    C = sp.coo_matrix(A)
    assert bool(np.all(cr[C.row] | cc[C.col])), "cover misses an edge"


# ---------------------------------------------------------------------------
# small random graphs against scipy


@pytest.mark.parametrize("init", ["greedy", "karp_sipser", "none"])
@pytest.mark.parametrize("shape", [(30, 30), (40, 17), (13, 50), (1, 9), (9, 1)])
def test_random_small(backend, init, shape):
    rng = np.random.default_rng(hash(shape) % 1000)
    for trial in range(6):
        A = sp.random(*shape, density=rng.uniform(0.02, 0.3), format="csr", random_state=trial)
        check_both(A, backend, scipy_size(A), init=init)


@pytest.mark.parametrize("kw", [dict(shrink_threshold=0), dict(shrink_threshold=10**9),
                                dict(relabel_k=0.05), dict(relabel_k=5.0), dict(relabel_k=1)])
def test_options_keep_results_maximum(backend, kw):
    A = generators.random_bipartite(3000, 2500, 3, seed=7)
    check_both(A, backend, scipy_size(A), **kw)


@pytest.mark.parametrize("way", ["push-relabel", "augmenting", "augmenting-forest", "augmenting-no-marks"])
def test_cover_comes_from_the_last_search(backend, monkeypatch, way):
    """The certificate reuses the search that ended the solve: the last
    global relabel when push-relabel finishes ("labels"), the closed search
    forest or backward trees when augmenting phases do ("forest",
    "backward"; without them, a BFS of its own: "bfs").  Every cover is
    checked edge by edge, on graphs where each way ends the solve."""
    if backend == "numba":
        pytest.skip("the Numba engine has its own certificate search")
    from gpumatch.matching import _augment

    monkeypatch.setattr(_tail, "HOST_FINISH_BACKENDS", ())   # the tails stay on the backend
    monkeypatch.setattr(_tail, "HOST_FINISH_NUMPY", None)
    if way == "push-relabel":
        monkeypatch.setattr(_driver, "AUGMENT_AFTER", None)
        monkeypatch.setattr(_driver, "STALL_WINDOW", None)
    else:
        monkeypatch.setattr(_driver, "AUGMENT_AFTER", 0)
    if way == "augmenting-forest":   # no backward certificate: the forest proves every maximum
        monkeypatch.setattr(_augment, "BACK_CERTIFICATE", False)
    if way == "augmenting-no-marks":
        monkeypatch.setattr(_augment, "cover_marks", lambda st: None)
    graphs = [generators.random_bipartite(2000, 1800, d, seed=s) for d, s in ((2, 1), (3, 2), (5, 3))]
    graphs += [sp.random(300, 260, density=0.01, format="csr", random_state=4), generators.grid(40, 40, drop=0.1), generators.block_triangular(600, seed=5)]
    seen = set()
    for A in graphs:
        res = check_both(A, backend, scipy_size(A))
        st = res.stats
        if st["finished_by"] == "push-relabel":
            want = "labels"
        else:
            assert st["finished_by"] == "augmenting-paths"
            want = "bfs" if way == "augmenting-no-marks" else st["aug_certificate"]
        assert st["cover_source"] == want, (st, want)
        seen.add(want)
    assert seen >= {"push-relabel": {"labels"}, "augmenting": {"backward"}, "augmenting-forest": {"forest"},
                    "augmenting-no-marks": {"bfs"}}[way], seen


# ---------------------------------------------------------------------------
# degenerate inputs


def _cases():
    yield "0xn", sp.csr_matrix((0, 5))
    yield "mx0", sp.csr_matrix((4, 0))
    yield "0x0", sp.csr_matrix((0, 0))
    yield "no_edges", sp.csr_matrix((6, 7))
    yield "dense_row", sp.csr_matrix(np.vstack([np.ones((1, 8)), np.zeros((5, 8))]))
    yield "dense_col", sp.csr_matrix(np.hstack([np.ones((8, 1)), np.zeros((8, 5))]))
    yield "dense_row_col", sp.csr_matrix(np.eye(6) + np.pad(np.ones((1, 6)), ((0, 5), (0, 0))))
    yield "complete", sp.csr_matrix(np.ones((7, 7)))
    yield "complete_rect", sp.csr_matrix(np.ones((3, 11)))
    yield "complete_rect_t", sp.csr_matrix(np.ones((11, 3)))
    yield "diag", sp.identity(50, format="csr")
    yield "anti_diag", sp.csr_matrix(np.fliplr(np.eye(9)))
    yield "duplicates", sp.coo_matrix((np.ones(6), ([0, 0, 1, 1, 2, 2], [1, 1, 0, 0, 1, 1])), shape=(3, 3))
    yield "explicit_zeros", sp.csr_matrix((np.array([0.0, 0.0, 1.0]), np.array([0, 1, 0]), np.array([0, 2, 3])),
                                          shape=(2, 2))
    yield "csc", sp.random(20, 30, density=0.1, format="csc", random_state=3)
    yield "coo_array", sp.coo_array(sp.random(25, 15, density=0.1, random_state=4))
    yield "tall_thin", sp.csr_matrix(np.ones((64, 1)))
    yield "wide_thin", sp.csr_matrix(np.ones((1, 64)))
    yield "chain", sp.diags([np.ones(30), np.ones(29)], [0, 1], format="csr")


@pytest.mark.parametrize("name,A", list(_cases()), ids=[c[0] for c in _cases()])
def test_degenerate(backend, name, A):
    expected = scipy_size(A)
    check_both(A, backend, expected)
    assert structural_rank(A, backend=backend) == expected


def test_explicit_zeros_are_edges(backend):
    A = sp.csr_matrix((np.array([0.0, 0.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    assert A.nnz == 2
    perm = host(maximum_bipartite_matching(A, backend=backend))
    assert perm.tolist() == [0, 1]
    assert structural_rank(A, backend=backend) == scipy_srank(A) == 2
    B = A.copy()
    B.eliminate_zeros()
    assert structural_rank(B, backend=backend) == 0


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_tuple_input_index_dtypes(backend, dtype):
    A = sp.random(40, 30, density=0.1, format="csr", random_state=9)
    t = (A.indptr.astype(dtype), A.indices.astype(dtype), A.shape)
    perm = host(maximum_bipartite_matching(t, backend=backend))
    check_matching(A, perm, expected_size=scipy_size(A))


def test_int64_kernels(backend):
    """The kernels also run with 64-bit indices (graphs too big for int32)."""
    A = generators.random_bipartite(2000, 1500, 3, seed=2)
    g = as_csr_graph(A, backend)
    g64 = CSRGraph(g.indptr.astype(np.int64), g.indices.astype(np.int64), g.shape, g.backend, False)
    st = _driver.make_state(g64)
    assert st.idx == np.int64
    _driver.run_gpr(st)
    check_matching(A, host(st.mu_col).astype(np.int64), expected_size=scipy_size(A))


# ---------------------------------------------------------------------------
# generated families


@pytest.mark.parametrize("m,n,deg", [(1000, 1000, 2), (5000, 5000, 5), (20000, 10000, 3), (8000, 16000, 2)])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_bipartite(backend, m, n, deg, seed):
    A = generators.random_bipartite(m, n, deg, seed=seed)
    check_both(A, backend, scipy_size(A))


@pytest.mark.parametrize("npoints", [500, 5000, 20000])
def test_delaunay(backend, npoints):
    A = generators.delaunay(npoints, seed=npoints)
    check_both(A, backend, flow_size(A))


@pytest.mark.parametrize("nx,drop", [(30, 0.1), (100, 0.1), (120, 0.3), (64, 0.0)])
def test_grid(backend, nx, drop):
    A = generators.grid(nx, nx + 3, drop, seed=nx)
    check_both(A, backend, flow_size(A))


@pytest.mark.parametrize("scale", [8, 12, 14])
def test_rmat(backend, scale):
    A = generators.rmat(scale, 8, seed=scale)
    check_both(A, backend, scipy_size(A))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["random", "delaunay", "grid"])
def test_larger_generated(backend, name):
    if name == "random":
        A = generators.random_bipartite(200000, 200000, 5, seed=3)
        ref = scipy_size(A)
    elif name == "delaunay":
        A = generators.delaunay(100000, seed=3)
        ref = flow_size(A)
    else:
        A = generators.grid(300, 300, 0.1, seed=3)
        ref = flow_size(A)
    res = bipartite_matching(A, backend=backend, certificate=True)
    check_matching(A, host(res.col_to_row), expected_size=ref)
    _check_cover(A, res)


# ---------------------------------------------------------------------------
# the corpus


def _corpus_entries():
    entries = [e for e in corpus_manifest() if e.get("kind") == "matching"]
    return entries


def _corpus_params(gpu: bool):
    out = []
    for e in _corpus_entries():
        marks = [pytest.mark.gpu] if gpu else []
        out.append(pytest.param(e, marks=marks, id=e["file"].split("/")[-1].replace(".mtx.gz", "")))
    return out or [pytest.param(None, marks=pytest.mark.skip(reason="corpus not found"))]


def _read(corpus_dir, entry):
    return read_matrix_market(corpus_dir / entry["file"])


def _run_corpus(corpus_dir, entry, backend):
    from test_robustness import check_bounds

    A = _read(corpus_dir, entry)
    assert A.shape == tuple(entry["shape"]) and A.nnz == entry["nnz_stored"]
    perm = host(maximum_bipartite_matching(A, backend=backend))
    check_matching(A, perm, expected_size=entry["max_matching_stored"])
    res = bipartite_matching(A, backend=backend)   # the progress guarantee's bounds hold
    check_bounds(res)


@pytest.mark.parametrize("entry", _corpus_params(gpu=False))
def test_corpus_numpy(corpus_dir, entry):
    _run_corpus(corpus_dir, entry, "numpy")


@pytest.mark.parametrize("entry", _corpus_params(gpu=True))
def test_corpus_cupy(corpus_dir, entry):
    _run_corpus(corpus_dir, entry, "cupy")


def _nonzero_entries():
    entries = _corpus_entries()
    differ = [e for e in entries if e["max_matching_stored"] != e["max_matching_nonzero"]]
    small = sorted((e for e in entries if e["nnz_nonzero"] != e["nnz_stored"]), key=lambda e: e["nnz_stored"])
    picked = {e["file"]: e for e in differ + small[:3]}
    return list(picked.values()) or [None]


@pytest.mark.parametrize("entry", _nonzero_entries(), ids=lambda e: "none" if e is None else e["file"].split("/")[-1])
def test_corpus_nonzero_semantics(corpus_dir, backend, entry):
    if entry is None:
        pytest.skip("no corpus entry with explicit zeros")
    A = _read(corpus_dir, entry)
    assert structural_rank(A, backend=backend) == entry["max_matching_stored"]
    B = A.copy()
    B.eliminate_zeros()
    perm = host(maximum_bipartite_matching(B, backend=backend))
    check_matching(B, perm, expected_size=entry["max_matching_nonzero"])


# ---------------------------------------------------------------------------
# warm start


def test_warm_start_from_result(backend):
    A = generators.random_bipartite(4000, 4000, 3, seed=5)
    ref = scipy_size(A)
    first = bipartite_matching(A, backend=backend)
    again = bipartite_matching(A, backend=backend, initial=first, init="none")
    assert again.stats["initial_size"] == ref
    assert again.stats["push_iterations"] == 0
    check_matching(A, host(again.col_to_row), expected_size=ref)
    np.testing.assert_array_equal(host(again.col_to_row), host(first.col_to_row))


@pytest.mark.parametrize("perm_type", ["row", "column"])
def test_warm_start_partial(backend, perm_type):
    A = generators.random_bipartite(3000, 2000, 3, seed=6)
    ref = scipy_size(A)
    full = host(maximum_bipartite_matching(A, perm_type, backend=backend))
    partial = full.copy()
    partial[::2] = -1
    kept = int((partial >= 0).sum())
    res = bipartite_matching(A, backend=backend, init="none",
                             initial=partial if perm_type == "row" else _to_col_to_row(partial, A.shape[1]))
    assert res.stats["initial_size"] == kept
    check_matching(A, host(res.col_to_row), expected_size=ref)
    perm = host(maximum_bipartite_matching(A, perm_type, backend=backend, initial=partial, init="none"))
    check_matching(A, perm, perm_type=perm_type, expected_size=ref)


def _to_col_to_row(row_to_col, n):
    out = np.full(n, -1, dtype=np.int64)
    r = np.flatnonzero(row_to_col >= 0)
    out[row_to_col[r]] = r
    return out


def test_warm_start_invalid(backend):
    A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0]]))  # 2 x 3
    with pytest.raises(ValueError, match="length 3"):
        maximum_bipartite_matching(A, backend=backend, initial=np.array([0, 1]))
    with pytest.raises(ValueError, match="length 2"):
        maximum_bipartite_matching(A, "column", backend=backend, initial=np.array([0, 1, -1]))
    with pytest.raises(ValueError, match="not a stored entry"):
        maximum_bipartite_matching(A, backend=backend, initial=np.array([-1, -1, 0]))
    with pytest.raises(ValueError, match="more than once"):
        maximum_bipartite_matching(A, backend=backend, initial=np.array([0, 0, -1]))
    with pytest.raises(ValueError, match="more than once"):
        maximum_bipartite_matching(A, "column", backend=backend, initial=np.array([0, 0]))
    with pytest.raises(ValueError, match="value 5"):
        maximum_bipartite_matching(A, backend=backend, initial=np.array([5, -1, -1]))
    with pytest.raises(ValueError, match="value -3"):
        maximum_bipartite_matching(A, backend=backend, initial=np.array([-3, -1, -1]))
    with pytest.raises(ValueError, match="integer"):
        maximum_bipartite_matching(A, backend=backend, initial=np.array([0.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="integer"):
        bipartite_matching(A, backend=backend, initial=np.zeros((3, 1), dtype=int))
    # A valid one is accepted (list input too).
    perm = host(maximum_bipartite_matching(A, backend=backend, initial=[1, 0, -1], init="none"))
    assert perm.tolist() == [1, 0, -1]


# ---------------------------------------------------------------------------
# options, errors, output device


def test_option_errors():
    A = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="perm_type"):
        maximum_bipartite_matching(A, "rows")
    with pytest.raises(ValueError, match="method"):
        maximum_bipartite_matching(A, method="hopcroft")
    with pytest.raises(ValueError, match="init"):
        maximum_bipartite_matching(A, init="random")
    with pytest.raises(ValueError, match="relabel_k"):
        maximum_bipartite_matching(A, relabel_k=0)
    with pytest.raises(ValueError, match="relabel_k"):
        bipartite_matching(A, relabel_k=float("nan"))
    with pytest.raises(ValueError, match="shrink_threshold"):
        maximum_bipartite_matching(A, shrink_threshold=-1)
    with pytest.raises(ValueError, match="backend"):
        maximum_bipartite_matching(A, backend="gpu")
    with pytest.raises(ValueError, match="certificate"):
        bipartite_matching(A, certificate="yes")
    with pytest.raises(TypeError):
        maximum_bipartite_matching(np.eye(3))
    with pytest.raises(TypeError):
        structural_rank(np.eye(3))


def test_method_flow(backend):
    A = generators.random_bipartite(500, 400, 2, seed=1)
    have = importlib.util.find_spec("gpumatch.flow") is not None
    try:
        perm = maximum_bipartite_matching(A, backend=backend, method="flow")
    except NotImplementedError:
        pytest.skip("gpumatch.flow.matching_by_flow not available yet")
    assert have
    check_matching(A, host(perm), expected_size=scipy_size(A))


def test_numpy_output_for_scipy_input(backend):
    A = sp.random(20, 20, density=0.2, format="csr", random_state=1)
    perm = maximum_bipartite_matching(A, backend=backend)
    assert isinstance(perm, np.ndarray)
    res = bipartite_matching(A, backend=backend, certificate=True)
    assert isinstance(res, MatchingResult)
    assert isinstance(res.row_to_col, np.ndarray) and isinstance(res.cover_rows, np.ndarray)
    for key in ("initial_size", "push_iterations", "global_relabels", "max_level",
                "time_init", "time_relabel", "time_push", "time_fix"):
        assert key in res.stats


def test_structural_rank_matches_scipy(backend):
    for seed in range(5):
        A = sp.random(60, 45, density=0.04, format="csr", random_state=seed)
        assert structural_rank(A, backend=backend) == scipy_srank(A)
        assert structural_rank(A.T.tocsr(), backend=backend) == scipy_srank(A.T.tocsr())


# ---------------------------------------------------------------------------
# GPU only: output device, repeated runs, kernels against their NumPy twins


@pytest.mark.gpu
def test_cupy_input_gives_cupy_output():
    import cupyx.scipy.sparse as cpx

    cp = _backend.cp
    A = generators.random_bipartite(3000, 3000, 3, seed=4)
    G = cpx.csr_matrix(A)
    perm = maximum_bipartite_matching(G)
    assert isinstance(perm, cp.ndarray) and perm.dtype == cp.int32
    check_matching(A, cp.asnumpy(perm), expected_size=scipy_size(A))
    res = bipartite_matching(G, certificate=True)
    assert isinstance(res.col_to_row, cp.ndarray) and isinstance(res.cover_cols, cp.ndarray)
    perm_np = maximum_bipartite_matching(G, backend="numpy")
    assert isinstance(perm_np, cp.ndarray)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["random", "rmat", "grid", "delaunay"])
def test_gpu_repeated_runs_valid(name):
    if name == "random":
        A = generators.random_bipartite(50000, 50000, 4, seed=11)
        ref = scipy_size(A)
    elif name == "rmat":
        A = generators.rmat(15, 8, seed=11)
        ref = scipy_size(A)
    elif name == "grid":
        A = generators.grid(150, 150, 0.1, seed=11)
        ref = flow_size(A)
    else:
        A = generators.delaunay(30000, seed=11)
        ref = flow_size(A)
    for _ in range(20):
        perm = host(maximum_bipartite_matching(A, backend="cupy"))
        check_matching(A, perm, expected_size=ref)


def _state_pair(A, matching_from=None):
    """The same G-PR state on both backends (optionally with a matching)."""
    sts = []
    for b in ("numpy", "cupy"):
        st = _driver.make_state(as_csr_graph(A, b))
        if matching_from is not None:
            mu_row, mu_col = matching_from
            st.mu_row[...] = _backend.to_backend(mu_row, b).astype(st.idx)
            st.mu_col[...] = _backend.to_backend(mu_col, b).astype(st.idx)
        sts.append(st)
    return sts


@pytest.mark.gpu
@pytest.mark.parametrize("bfs_loop_max", [0, 2048, 10**9], ids=["steps", "mixed", "loop"])
@pytest.mark.parametrize("name", ["random", "grid", "rmat"])
def test_gpu_global_relabel_equals_numpy_twin(name, bfs_loop_max, monkeypatch):
    from gpumatch.matching import _kernels_cuda

    monkeypatch.setattr(_kernels_cuda, "BFS_LOOP_MAX", bfs_loop_max)
    if name == "random":
        A = generators.random_bipartite(20000, 18000, 3, seed=2)
    elif name == "grid":
        A = generators.grid(80, 80, 0.2, seed=2)
    else:  # skewed degrees: rows scanned by a whole warp
        A = generators.rmat(14, 8, seed=2)
    # a non-maximum matching: greedy on the host
    st0 = _driver.make_state(as_csr_graph(A, "numpy"))
    _kernels_numpy.greedy_round(st0)
    _kernels_numpy.fix_matching(st0)
    npst, cpst = _state_pair(A, (st0.mu_row, st0.mu_col))
    lv_np = _kernels_numpy.global_relabel(npst)
    lv_cp = _kernels_cuda.global_relabel(cpst)
    assert lv_np == lv_cp > 0
    np.testing.assert_array_equal(npst.psi_row, host(cpst.psi_row))
    np.testing.assert_array_equal(npst.psi_col, host(cpst.psi_col))


@pytest.mark.gpu
def test_gpu_fix_matching_equals_numpy_twin():
    from gpumatch.matching import _kernels_cuda

    A = generators.random_bipartite(5000, 5000, 3, seed=3)
    rng = np.random.default_rng(0)
    mu_row = rng.integers(-1, 5000, 5000)
    mu_col = rng.integers(-2, 5000, 5000)
    mu_col[mu_row[mu_row >= 0][:1000]] = np.flatnonzero(mu_row >= 0)[:1000]
    npst, cpst = _state_pair(A, (mu_row, mu_col))
    _kernels_numpy.fix_matching(npst)
    _kernels_cuda.fix_matching(cpst)
    np.testing.assert_array_equal(npst.mu_row, host(cpst.mu_row))
    np.testing.assert_array_equal(npst.mu_col, host(cpst.mu_col))


@pytest.mark.gpu
def test_gpu_push_equals_numpy_twin_without_conflicts():
    """With disjoint column neighbourhoods the claim and push kernels are deterministic."""
    from gpumatch.matching import _kernels_cuda

    blocks = [sp.csr_matrix(np.triu(np.ones((4, 4)))) for _ in range(500)]
    A = sp.block_diag(blocks, format="csr")
    m, n = A.shape
    mu_row = np.full(m, -1)
    mu_col = np.full(n, -1)
    for b in range(500):  # match the diagonal of each block except its last column
        for j in range(3):
            mu_row[4 * b + j] = 4 * b + j
            mu_col[4 * b + j] = 4 * b + j
    npst, cpst = _state_pair(A, (mu_row, mu_col))
    _kernels_numpy.global_relabel(npst)
    _kernels_cuda.global_relabel(cpst)
    active = np.arange(3, n, 4)
    nxt_np = _kernels_numpy.claim(npst, active.astype(npst.idx))
    act_cp = _backend.cp.asarray(active.astype(cpst.idx))
    nxt_cp = _kernels_cuda.claim(cpst, act_cp)
    np.testing.assert_array_equal(nxt_np, host(nxt_cp))   # the rows claimed
    _kernels_numpy.push(npst, active.astype(npst.idx), nxt_np)
    _kernels_cuda.push(cpst, act_cp, nxt_cp)
    np.testing.assert_array_equal(nxt_np, host(nxt_cp))   # the columns handed on
    for name in ("mu_row", "mu_col", "psi_row", "psi_col"):
        np.testing.assert_array_equal(getattr(npst, name), host(getattr(cpst, name)), err_msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("size", [6, 45], ids=["light", "heavy"])
@pytest.mark.parametrize("iters", [1, 3, 50])
def test_gpu_push_loop_equals_numpy_twin_without_conflicts(iters, size):
    """The persistent one-block loop against its twin (the per-iteration
    loop): each slot's chain stays inside its own block, so no races.
    Blocks of 45 make the columns long enough for the warp scan."""
    from gpumatch.matching import _kernels_cuda

    rng = np.random.default_rng(5)
    nb = 700 if size == 6 else 90
    blocks = [sp.csr_matrix(np.triu(np.ones((size, size))) * (rng.random((size, size)) < (0.7 if size == 6 else 0.95)) + np.eye(size))
              for _ in range(nb)]
    A = sp.block_diag(blocks, format="csr")
    m, n = A.shape
    mu_row = np.full(m, -1)
    mu_col = np.full(n, -1)
    for b in range(nb):  # match the diagonal except the last two columns
        for j in range(size - 2):
            mu_row[size * b + j] = size * b + j
            mu_col[size * b + j] = size * b + j
    npst, cpst = _state_pair(A, (mu_row, mu_col))
    _kernels_numpy.global_relabel(npst)
    _kernels_cuda.global_relabel(cpst)
    active = np.arange(size - 1, n, size)  # one free column of each block
    ran_np = _kernels_numpy.push_loop(npst, active.astype(npst.idx), iters)
    ran_cp = _kernels_cuda.push_loop(cpst, _backend.cp.asarray(active.astype(cpst.idx)), iters)
    assert ran_np == ran_cp
    for name in ("mu_row", "mu_col", "psi_row", "psi_col"):
        np.testing.assert_array_equal(getattr(npst, name), host(getattr(cpst, name)), err_msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64])   # cuSPARSE, and the key sort
@pytest.mark.parametrize("name", ["random", "rmat", "empty_cols"])
def test_gpu_transpose_equals_scipy(name, dtype):
    """make_state's CSC on the device is SciPy's, rows of each column sorted."""
    if name == "random":
        A = generators.random_bipartite(3000, 2000, 4, seed=6)
    elif name == "rmat":
        A = generators.rmat(12, 8, seed=6)
    else:
        A = sp.random(300, 500, density=0.01, format="csr", random_state=6)
    g = as_csr_graph(A, "cupy")
    g = CSRGraph(g.indptr.astype(dtype), g.indices.astype(dtype), g.shape, g.backend, False)
    st = _driver.make_state(g)
    B = sp.csr_matrix(A).tocsc()
    B.sort_indices()
    assert st.cptr.dtype == st.cind.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(host(st.cptr), B.indptr)
    np.testing.assert_array_equal(host(st.cind), B.indices)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["random", "rmat"])
def test_gpu_relabel_collect_with_fix_equals_numpy_twin(name):
    """The fused FixMatching + relabel set-up against fix_matching then the
    twin's relabel: same matching, labels, active set and counts."""
    from gpumatch.matching import _kernels_cuda

    if name == "random":
        A = generators.random_bipartite(20000, 18000, 3, seed=8)
    else:
        A = generators.rmat(14, 8, seed=8)
    st0 = _driver.make_state(as_csr_graph(A, "numpy"))
    _kernels_numpy.greedy_round(st0)   # no fix: rows may point to columns that took another row
    mu_row, mu_col = st0.mu_row.copy(), st0.mu_col.copy()
    mu_col[::97] = -2                  # and some dropped columns
    npst, cpst = _state_pair(A, (mu_row, mu_col))
    lv_np, act_np = _kernels_numpy.relabel_collect(npst, fix=True)
    lv_cp, act_cp = _kernels_cuda.relabel_collect(cpst, fix=True)
    assert lv_np == lv_cp > 0
    for attr in ("mu_row", "mu_col", "psi_row", "psi_col"):
        np.testing.assert_array_equal(getattr(npst, attr), host(getattr(cpst, attr)), err_msg=attr)
    np.testing.assert_array_equal(np.sort(act_np), np.sort(host(act_cp)))
    assert npst.extra["free_rows"] == cpst.extra["free_rows"]
    assert npst.extra["roots_est"] == cpst.extra["roots_est"]


@pytest.mark.gpu
@pytest.mark.parametrize("steps", [1, 2, 5])
def test_gpu_list_step_equals_numpy_twin_without_conflicts(steps):
    """claim + push + compaction on a device-side list against the twin:
    with disjoint blocks no races, so the same matching and labels and the
    same list (as a set: the GPU appends in any order)."""
    from gpumatch.matching import _kernels_cuda

    rng = np.random.default_rng(9)
    size, nb = 6, 900
    blocks = [sp.csr_matrix(np.triu(np.ones((size, size))) * (rng.random((size, size)) < 0.7) + np.eye(size))
              for _ in range(nb)]
    A = sp.block_diag(blocks, format="csr")
    m, n = A.shape
    mu_row = np.full(m, -1)
    mu_col = np.full(n, -1)
    for b in range(nb):  # match the diagonal except the last two columns
        for j in range(size - 2):
            mu_row[size * b + j] = size * b + j
            mu_col[size * b + j] = size * b + j
    npst, cpst = _state_pair(A, (mu_row, mu_col))
    _kernels_numpy.global_relabel(npst)
    _kernels_cuda.global_relabel(cpst)
    active = np.arange(size - 1, n, size)
    _kernels_numpy.list_start(npst, active.astype(npst.idx))
    _kernels_cuda.list_start(cpst, _backend.cp.asarray(active.astype(cpst.idx)))
    for _ in range(steps):
        _kernels_numpy.list_step(npst)
        _kernels_cuda.list_step(cpst)
        assert _kernels_numpy.list_length(npst) == _kernels_cuda.list_length(cpst)
        np.testing.assert_array_equal(np.sort(_kernels_numpy.list_array(npst)),
                                      np.sort(host(_kernels_cuda.list_array(cpst))))
    for name in ("mu_row", "mu_col", "psi_row", "psi_col"):
        np.testing.assert_array_equal(getattr(npst, name), host(getattr(cpst, name)), err_msg=name)


@pytest.mark.parametrize("name", ["random", "grid", "rmat"])
def test_driver_old_paths_keep_results_maximum(backend, monkeypatch, name):
    """The old per-slot lists and separate FixMatching: always a maximum
    matching."""
    monkeypatch.setattr(_driver, "FUSED_SHRINK", False)
    monkeypatch.setattr(_driver, "FUSE_FIX", False)
    monkeypatch.setattr(_driver, "LOOP_MAX", {"numpy": 16, "cupy": 16})
    if name == "random":
        A, ref = generators.random_bipartite(3000, 2500, 3, seed=5), None
    elif name == "grid":
        A = generators.grid(60, 60, 0.15, seed=5)
        ref = flow_size(A)
    else:
        A, ref = generators.rmat(11, 8, seed=5), None
    ref = scipy_size(A) if ref is None else ref
    res = bipartite_matching(A, backend=backend, shrink_threshold=32, certificate=True)
    check_matching(A, host(res.col_to_row), expected_size=ref)


@pytest.mark.parametrize("loop_max", [0, 10**9])
@pytest.mark.parametrize("name", ["random", "grid", "rmat"])
def test_push_loop_threshold_keeps_results_maximum(backend, monkeypatch, loop_max, name):
    """Short lists in push_loop (one launch) or never: same maximum size."""
    monkeypatch.setattr(_driver, "LOOP_MAX", {"numpy": loop_max, "cupy": loop_max})
    if name == "random":
        A, ref = generators.random_bipartite(3000, 2500, 3, seed=4), None
    elif name == "grid":
        A = generators.grid(60, 60, 0.15, seed=4)
        ref = flow_size(A)
    else:
        A, ref = generators.rmat(11, 8, seed=4), None
    ref = scipy_size(A) if ref is None else ref
    res = bipartite_matching(A, backend=backend, shrink_threshold=64)
    check_matching(A, host(res.col_to_row), expected_size=ref)
    if loop_max == 0:
        assert res.stats["loop_launches"] == 0


# ---------------------------------------------------------------------------
# the NumPy twin of the push scan against a literal transcription of the CUDA loop


def _cuda_loop_scan(ptr, ind, lab, verts, stop, inf, rotate=False):
    nb, bs = [], []
    for i, v in enumerate(verts):
        best, arg = inf, -1
        length = ptr[v + 1] - ptr[v]
        off = v % length if (rotate and length) else 0
        for k in range(length):
            p = ptr[v] + (off + k) % length
            lv = lab[ind[p]]
            if lv < best:
                best, arg = lv, ind[p]
            if lv <= stop[i]:
                break
        nb.append(arg)
        bs.append(best)
    return np.array(nb, dtype=np.int64), np.array(bs, dtype=np.int64)


@pytest.mark.parametrize("rotate", [False, True])
def test_first_min_stop_matches_kernel_loop(rotate):
    rng = np.random.default_rng(0)
    for _ in range(200):
        m, n = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        deg = rng.integers(0, 70, size=n)
        ptr = np.r_[0, np.cumsum(deg)]
        ind = rng.integers(0, m, ptr[-1])
        inf = m + n
        lab = rng.integers(0, inf + 2, m)
        verts = rng.integers(0, n, int(rng.integers(0, 20)))
        stop = rng.integers(-1, inf, verts.shape[0])
        got = _kernels_numpy.first_min_stop(ptr, ind, lab, verts, stop, inf, rotate=rotate)
        want = _cuda_loop_scan(ptr, ind, lab, verts, stop, inf, rotate=rotate)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_make_state_csc_is_sorted(backend):
    """make_state's CSC has the rows of each column ascending (the dynamic
    solver's patching searches them), and G-PR finds a maximum matching on
    it."""
    A = generators.rmat(10, 8, seed=12)
    st = _driver.make_state(as_csr_graph(A, backend))
    B = A.tocsc()
    B.sort_indices()
    np.testing.assert_array_equal(host(st.cptr), B.indptr)
    np.testing.assert_array_equal(host(st.cind), B.indices)
    _driver.run_gpr(st)
    _kernels = _driver.kernels_for(st.backend)
    _kernels.fix_matching(st)
    check_matching(A, host(st.mu_col).astype(np.int64), expected_size=scipy_size(A))


@pytest.mark.gpu
def test_a_long_loop_of_small_gpu_matchings_in_one_process(tmp_path):
    # Thousands of single calls in one process, each certified: device
    # state left by one call (the memory pool, cuSPARSE's handle) must not
    # break the next.  A fault loses the CUDA context: a child process.
    # Random bipartite graphs of 100..1000 entries, duplicates merged.
    certified_loop_in_child("""
        k = int(rng.integers(100, 1001))
        m = int(rng.integers(max(k // 8, 1), max(k // 2, 2)))
        n = int(rng.integers(max(k // 8, 1), max(k // 2, 2)))
        A = sp.coo_matrix((np.ones(k), (rng.integers(0, m, k), rng.integers(0, n, k))), shape=(m, n)).tocsr()
        A.sum_duplicates()
        check_matching(A, gpumatch.maximum_bipartite_matching(A, backend="cupy"))
    """, 3000, tmp_path)

"""The GPU engine of the assignment problem (gpumatch.lap._driver, auction.cu)
and its NumPy twin.

Every test runs on the NumPy twin (``backend="numpy"``: the same driver
and the same rounds as the GPU, vectorised) and, marked ``gpu``, on CuPy.
Results are checked by gpumatch.testing.check_assignment and compared with
scipy's cost; matchings are never compared (several optima may exist),
except the twin against the GPU, which must agree exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment as scipy_lsa

from gpumatch import _backend, assignment, linear_sum_assignment, min_weight_full_bipartite_matching
from gpumatch.lap import _driver
from gpumatch.lap import _kernels_numpy as twins
from gpumatch.testing import check_assignment

from _lap_common import close, random_sparse, scipy_cost  # noqa: E402
from _dynamic_common import _seed  # noqa: E402

pytest.importorskip("numba")

ENGINES = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


def on(engine, a):
    """`a` on the engine's device (CuPy arrays / cupyx sparse for "cupy")."""
    if engine != "cupy":
        return a
    import cupyx.scipy.sparse as cpx

    if sp.issparse(a):   # cupyx sparse holds no integers: integer weights travel as float64 (exact below 2**53)
        return cpx.csr_matrix(a if a.dtype.kind in "fb" else a.astype(np.float64))
    return _backend.cp.asarray(a)


def host(a):
    return _backend.to_numpy(a)


# ---------------------------------------------------------------------------
# sparse input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["int", "float"])
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(30, 30), (20, 35), (35, 20), (1, 6)])
def test_sparse_matches_scipy(engine, kind, maximize, shape):
    rng = np.random.default_rng(_seed(str(kind), str(maximize), str(shape)))
    for trial in range(4):
        A = random_sparse(rng, *shape, rng.uniform(0.05, 0.4), kind=kind, perm=trial % 2 == 0)
        ref = scipy_cost(A, maximize)
        if ref is None:
            with pytest.raises(ValueError, match="no full matching exists"):
                min_weight_full_bipartite_matching(on(engine, A), maximize, backend=engine)
            continue
        r, c = min_weight_full_bipartite_matching(on(engine, A), maximize, backend=engine)
        assert _backend.is_cupy_array(r) == (engine == "cupy")
        r, c = host(r), host(c)
        assert r.shape == c.shape == (min(shape),)
        got = A[r, c].sum()
        assert got == ref if kind == "int" else close(got, ref)
        res = assignment(A, maximize, backend=engine)
        assert res.stats["backend"] == engine and "auction" in res.stats["engine"]
        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, expected_cost=ref)


def test_sparse_medium_with_price_updates(engine):
    # a planted perfect matching, 8 entries per row: the rounds run long
    # enough for global price updates, the loop kernel and several phases
    rng = np.random.default_rng(7)
    A = random_sparse(rng, 400, 400, 8 / 400, perm=True, high=1000)
    res = assignment(A, backend=engine)
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=scipy_cost(A))
    assert res.stats["phases"] > 2 and res.stats["auction"] == "done"


def test_ties_and_constant_weights(engine):
    rng = np.random.default_rng(3)
    A = random_sparse(rng, 40, 40, 0.3, perm=True, high=3)      # weights 1 and 2: ties everywhere
    res = assignment(A, backend=engine)
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=scipy_cost(A))
    B = sp.csr_matrix(np.full((12, 12), 7))
    res = assignment(B, backend=engine)
    assert res.cost == 84
    check_assignment(B, res.row_ind, res.col_ind, res.u, res.v)
    F = sp.csr_matrix(np.full((5, 8), 0.25))
    res = assignment(F, backend=engine)
    assert res.cost == 1.25
    check_assignment(F, res.row_ind, res.col_ind, res.u, res.v)


def test_single_entry_rows_and_infeasible(engine):
    # rows 0..3 each have one entry; row 4 can take only what row 0 holds
    A = sp.csr_matrix(np.array([[5, 0, 0, 0, 0], [0, 3, 0, 0, 0], [0, 0, 2, 0, 0], [0, 0, 0, 9, 0],
                                [1, 0, 0, 0, 4]]))
    res = assignment(A, backend=engine)
    assert res.cost == 23
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v)
    B = sp.csr_matrix(np.array([[1, 0, 0], [2, 0, 0], [3, 4, 5]]))
    with pytest.raises(ValueError, match="no full matching exists"):
        min_weight_full_bipartite_matching(on(engine, B), backend=engine)
    with pytest.raises(ValueError, match="no full matching exists"):
        assignment(B, backend=engine)
    res = assignment(B, full=False, backend=engine)
    assert res.size == 2 and res.cost == 5
    check_assignment(B, res.row_ind, res.col_ind, res.u, res.v, full=False)


def test_partial_random(engine):
    rng = np.random.default_rng(4)
    A = random_sparse(rng, 60, 50, 0.03)
    res = assignment(A, full=False, backend=engine)
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, full=False)


def test_large_integer_weights_are_exact(engine):
    # near 2**40: the auction scales by m + 1 and stays exact in int64
    big = 2 ** 40
    rng = np.random.default_rng(5)
    A = random_sparse(rng, 25, 25, 0.3, perm=True)
    A.data = A.data.astype(np.int64) + big
    res = assignment(A, backend=engine)
    check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, expected_cost=scipy_cost(A))
    assert isinstance(res.cost, int)


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("engine", ["numba"] + ENGINES)
def test_whole_float_weights_are_solved_as_integers(engine, maximize):
    # integer weights as float64 (all a cupyx matrix can hold) run the exact
    # integer auction: the potentials are whole numbers, the reduced costs
    # hold with no tolerance, and the answer equals the int64 input's
    rng = np.random.default_rng(11)
    A = random_sparse(rng, 40, 40, 0.15, perm=True, high=1000)
    Af = A.astype(np.float64)
    ref = assignment(A, maximize, backend=engine)
    res = assignment(on(engine, Af), maximize, backend=engine)
    u, v = host(res.u), host(res.v)
    assert u.dtype == v.dtype == np.float64 and isinstance(res.cost, float)
    assert res.cost == ref.cost == scipy_cost(A, maximize)
    assert np.array_equal(u, np.round(u)) and np.array_equal(v, np.round(v))
    check_assignment(A, host(res.row_ind), host(res.col_ind), u.astype(np.int64), v.astype(np.int64),
                     maximize=maximize, expected_cost=ref.cost)
    # one fractional weight: the float engine, to its tolerance
    Af.data[0] += 0.5
    res = assignment(on(engine, Af), maximize, backend=engine)
    assert close(res.cost, scipy_cost(Af, maximize))


def test_inputs_not_mutated(engine):
    rng = np.random.default_rng(6)
    A = random_sparse(rng, 20, 25, 0.3, kind="float", perm=True).tocoo()
    saved = [a.copy() for a in (A.data, A.row, A.col)]
    min_weight_full_bipartite_matching(A, True, backend=engine)
    assignment(A, backend=engine)
    assert all(np.array_equal(a, b) for a, b in zip(saved, (A.data, A.row, A.col)))
    C = A.toarray()
    C[C == 0] = np.inf
    Cd = on(engine, C)
    before = host(Cd).copy()
    linear_sum_assignment(Cd, backend=engine)
    linear_sum_assignment(Cd, maximize=False, backend=engine)
    assert np.array_equal(host(Cd), before)


# ---------------------------------------------------------------------------
# dense input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(25, 25), (10, 30), (30, 10)])
def test_dense_matches_scipy(engine, maximize, shape):
    rng = np.random.default_rng(sum(shape) + maximize)
    for trial in range(6):
        C = rng.integers(-50, 50, shape) if trial % 2 else rng.normal(size=shape)
        if trial % 3 == 2:      # forbidden pairs
            C = C.astype(float)
            C[rng.random(shape) < 0.4] = -np.inf if maximize else np.inf
        try:
            r0, c0 = scipy_lsa(C, maximize=maximize)
        except ValueError as exc:
            with pytest.raises(ValueError, match=str(exc)):
                linear_sum_assignment(on(engine, C), maximize=maximize, backend=engine)
            continue
        r, c = linear_sum_assignment(on(engine, C), maximize=maximize, backend=engine)
        assert _backend.is_cupy_array(r) == (engine == "cupy")
        r, c = host(r), host(c)
        assert r.dtype == c.dtype == np.int64
        assert np.array_equal(r, r0) if shape[0] <= shape[1] else bool(np.all(np.diff(r) > 0))
        ref = C[r0, c0].sum()
        assert C[r, c].sum() == ref if C.dtype.kind == "i" else close(C[r, c].sum(), ref)
        res = assignment(C, maximize, backend=engine)
        check_assignment(C, res.row_ind, res.col_ind, res.u, res.v, maximize=maximize, expected_cost=ref)


def test_dense_validation_on_the_device(engine):
    with pytest.raises(ValueError, match=r"got a 1 array"):
        linear_sum_assignment(on(engine, np.array([1.0, 2.0])), backend=engine)
    with pytest.raises(ValueError, match=r"invalid numeric entries: nan at \(1, 0\)"):
        linear_sum_assignment(on(engine, np.array([[1.0, 2.0], [np.nan, 3.0]])), backend=engine)
    with pytest.raises(ValueError, match="invalid numeric entries"):
        linear_sum_assignment(on(engine, np.array([[1.0, np.inf], [2.0, 3.0]])), maximize=True, backend=engine)
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        linear_sum_assignment(on(engine, np.array([[np.inf, np.inf], [1.0, 2.0]])), backend=engine)
    with pytest.raises(OverflowError, match="too large"):
        linear_sum_assignment(on(engine, np.array([[2 ** 62, 1], [1, 2 ** 62]])), backend=engine)
    r, c = linear_sum_assignment(on(engine, np.zeros((0, 3))), backend=engine)
    assert host(r).size == host(c).size == 0
    r, c = linear_sum_assignment(on(engine, np.array([[True, False], [False, False]])), backend=engine)
    assert host(c).tolist() == [1, 0]


def test_dense_float_tolerance(engine):
    # costs of very different magnitudes: the answer is within the stated
    # tolerance (m * eps, eps about 2**-40 of the cost scale)
    rng = np.random.default_rng(9)
    C = rng.random((40, 40)) * 10.0 ** rng.integers(-3, 4, (40, 40))
    r0, c0 = scipy_lsa(C)
    r, c = linear_sum_assignment(on(engine, C), backend=engine)
    r, c = host(r), host(c)
    assert abs(C[r, c].sum() - C[r0, c0].sum()) <= 40 * C.max() * 2.0 ** -36


# ---------------------------------------------------------------------------
# batches of dense problems
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape,kind", [((6, 12, 12), "int"), ((5, 9, 13), "float"), ((4, 11, 7), "int"),
                                        ((3, 1, 1), "float")])
def test_batch_matches_scipy(engine, maximize, shape, kind):
    rng = np.random.default_rng(_seed(str(shape), str(kind), str(maximize)))
    C = rng.integers(-40, 40, shape) if kind == "int" else rng.normal(size=shape)
    r, c = _driver.solve_dense_batch(on(engine, C), maximize)
    assert _backend.is_cupy_array(r) == (engine == "cupy")
    r, c = host(r), host(c)
    assert r.shape == c.shape == (shape[0], min(shape[1:]))
    for b in range(shape[0]):
        r0, c0 = scipy_lsa(C[b], maximize=maximize)
        assert np.array_equal(r[b], r0) if shape[1] <= shape[2] else bool(np.all(np.diff(r[b]) > 0))
        got, ref = C[b][r[b], c[b]].sum(), C[b][r0, c0].sum()
        assert got == ref if kind == "int" else close(got, ref)


def test_batch_forbidden_and_infeasible(engine):
    rng = np.random.default_rng(12)
    C = rng.random((4, 8, 8))
    C[1][rng.random((8, 8)) < 0.5] = np.inf
    C[2, 3, :] = np.inf
    C[2, 3, 5] = 1.0
    r, c = _driver.solve_dense_batch(on(engine, C))
    for b in range(4):
        r0, c0 = scipy_lsa(C[b]) if np.isfinite(C[b]).sum() >= 8 else (None, None)
        if r0 is not None:
            assert close(C[b][host(r)[b], host(c)[b]].sum(), C[b][r0, c0].sum())
    C[3, :, 0:7] = np.inf
    with pytest.raises(ValueError, match=r"cost matrix is infeasible \(problem 3 of the batch\)"):
        _driver.solve_dense_batch(on(engine, C))
    with pytest.raises(ValueError, match="3-D"):
        _driver.solve_dense_batch(on(engine, np.zeros((2, 2))))
    e = _driver.solve_dense_batch(on(engine, np.zeros((0, 3, 3))))
    assert host(e[0]).shape == (0, 0)


# ---------------------------------------------------------------------------
# the pieces: twin kernels, price updates, the host finish
# ---------------------------------------------------------------------------


def _state(engine, A, kind="i"):
    xp = _backend.get_xp(engine)
    c = A.data.astype(np.int64 if kind == "i" else np.float64)
    return _driver.make_state(engine, m=A.shape[0], n=A.shape[1], kind=kind, cmin=c.min(), cmax=c.max(),
                              cabs=np.abs(c).max(), indptr=xp.asarray(A.indptr.astype(np.int64)),
                              indices=xp.asarray(A.indices), cost=xp.asarray(c))


def _first_rounds(k, st, eps, rounds):
    """A phase's refresh and its first `rounds` rounds, with kernel set `k`."""
    st.counts[0] = 0
    k.refresh(st, eps, 0)
    for r in range(rounds):
        k.bid(st, eps, r)
        k.resolve(st, r)


def _eps_cs_holds(st, eps):
    """Every assigned row is within eps of its best column (NumPy state)."""
    held = np.flatnonzero(st.x >= 0)
    owner, cols, h, offs = twins._reduced(st, held)
    w1 = twins._segment_min(h, offs, st.inf)
    hx = twins._h(st, st.cx[held], st.x[held].astype(np.int64))
    return bool(np.all(hx - w1 <= eps))


def test_rounds_keep_eps_complementary_slackness():
    rng = np.random.default_rng(13)
    A = random_sparse(rng, 80, 80, 0.08, perm=True, high=1000)
    st = _state("numpy", A)
    eps = st.eps0 // 40
    st.counts[0] = 0
    twins.refresh(st, eps, 0)
    for r in range(30):
        twins.bid(st, eps, r)
        twins.resolve(st, r)
        assert _eps_cs_holds(st, eps)
        assert int(st.counts[4]) == int((st.x >= 0).sum())
        owned = st.owner >= 0
        assert np.array_equal(st.x[st.owner[owned]], np.flatnonzero(owned))
    # a global price update keeps it, and makes progress possible: no price rises
    v0 = st.v.copy()
    assert _driver.global_update(st, twins, eps, _driver.SPARSE_SCHEDULE)
    assert _eps_cs_holds(st, eps) and np.all(st.v <= v0)
    assert np.all(st.v[st.owner < 0] == v0[st.owner < 0])


@pytest.mark.parametrize("given", [False, True])
def test_host_finish_repairs_prices(given):
    # an optimal assignment with prices off by a little: the finish makes them exact, whether it reads
    # the matched entries' costs from the CSR or gets them (as from the auction)
    from gpumatch.lap import _cpu

    rng = np.random.default_rng(14)
    A = random_sparse(rng, 50, 50, 0.2, perm=True)
    res = assignment(A, backend="numba")
    x = np.full(50, -1, dtype=np.int64)
    x[res.row_ind] = res.col_ind
    y = np.full(50, -1, dtype=np.int64)
    y[x] = np.arange(50)
    ind = A.indices.astype(np.int64)
    cx = _cpu.matched_costs(A.indptr.astype(np.int64), ind, A.data.astype(np.int64), x)
    x[:3] = -1                          # three rows left to the searches
    y[res.col_ind[:3]] = -1
    v = res.v + rng.integers(-1, 1, 50)
    status, info, cx_out = _cpu.finish(A.indptr.astype(np.int64), ind, A.data.astype(np.int64), 50, 50, x, y, v,
                                       np.zeros(1, np.int64), np.zeros(1, np.int64), np.int64(0), 10 ** 6,
                                       cx if given else np.zeros(0, np.int64), np.zeros(0, np.uint8))
    assert status == 0 and info[2] >= 3
    # the matched costs it returns are those of the final matching
    assert np.array_equal(cx_out, _cpu.matched_costs(A.indptr.astype(np.int64), ind, A.data.astype(np.int64), x))
    check_assignment(A, np.arange(50), x, cx_out - v[x], v, expected_cost=res.cost)


@pytest.mark.parametrize("m, n", [(300, 300), (250, 300)])
def test_host_finish_from_seeds_on_threads_equals_from_every_row(m, n, monkeypatch):
    """The host finish's repair started from the rows that the threads found
    violated (the path of large inputs: the CPU engines' threshold for threads
    lowered) gives the prices and assignment of the repair started from every
    matched row."""
    import numba

    from gpumatch import _cpu_match

    rng = np.random.default_rng(31)
    A = random_sparse(rng, m, n, 10 / m, perm=True, high=1000)
    out = {}
    for lowered in (False, True):
        if lowered:
            monkeypatch.setitem(_cpu_match.TUNING, "parallel_min_nnz", 0)
            monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
        st = _state("numpy", A)
        assert _driver.run_phases(st, twins, _driver.SPARSE_SCHEDULE) == _driver.DONE
        x, v, cx = _driver.finish_on_host(st, A.indptr.astype(np.int64), A.indices.astype(np.int64),
                                          A.data.astype(np.int64), m, n)
        out[lowered] = (x, v, cx)
    for a, b in zip(out[False], out[True]):
        assert np.array_equal(a, b)
    x, v, cx = out[True]
    check_assignment(A, np.arange(m), x, cx - v[x], v)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["i", "f"])
def test_gpu_rounds_equal_the_twin(kind):
    """The GPU kernels and their NumPy twins give the same prices and
    assignment, round by round and through whole phases."""
    rng = np.random.default_rng(15)
    A = random_sparse(rng, 300, 320, 10 / 300, perm=True, kind="int" if kind == "i" else "float", high=1000)
    from gpumatch.lap import _kernels_cuda as gk

    sts = {e: _state(e, A, kind) for e in ("numpy", "cupy")}
    ks = {"numpy": twins, "cupy": gk}
    eps = sts["numpy"].eps0
    for e, st in sts.items():
        _first_rounds(ks[e], st, eps, 12)
        ks[e].rounds(st, eps, 12, 50, 0)
    a, b = sts["numpy"], sts["cupy"]
    assert np.array_equal(a.x, host(b.x)) and np.array_equal(a.v, host(b.v))
    assert np.array_equal(a.counts[[4, 5, 6]], host(b.counts)[[4, 5, 6]])
    for e, st in sts.items():
        _driver.global_update(st, ks[e], eps, _driver.SPARSE_SCHEDULE)
    if kind == "i":
        assert np.array_equal(a.v, host(b.v))
    else:   # the device may contract the update's multiply-add (FMA): the last bit can differ
        np.testing.assert_allclose(a.v, host(b.v), rtol=1e-12, atol=0)
    out = {e: _driver.run_phases(_state(e, A, kind), ks[e], _driver.SPARSE_SCHEDULE) for e in ("numpy",)}
    st2 = _state("cupy", A, kind)
    assert _driver.run_phases(st2, gk, _driver.SPARSE_SCHEDULE) == out["numpy"]   # the same outcome (status)


def _jacobi(k):
    """Kernel set `k` with the one-launch update removed: the driver then
    runs Jacobi sweeps of Bellman-Ford (as for dense input)."""
    import types

    out = types.SimpleNamespace(**{name: getattr(k, name) for name in k.__all__})
    out.update = lambda *args: None
    return out


@pytest.mark.parametrize("kind", ["i", "f"])
@pytest.mark.parametrize("seed", [21, 22])
def test_dial_update_equals_jacobi_sweeps(kind, seed):
    """The global price update by Dial's buckets over the transpose gives
    the prices of the Jacobi sweeps (the same least distances), at a coarse
    and a fine eps, on a square and a rectangular problem (free columns)."""
    rng = np.random.default_rng(seed)
    m, n = (120, 120) if seed == 21 else (100, 130)
    A = random_sparse(rng, m, n, 8 / m, perm=True, kind="int" if kind == "i" else "float", high=1000)
    sched = _driver.Schedule(levels=16, sweeps=10_000)
    for div in (8, 200):
        sts = {e: _state("numpy", A, kind) for e in ("dial", "jacobi")}
        eps = sts["dial"].eps0 // div if kind == "i" else sts["dial"].eps0 / div
        took = {}
        for e, st in sts.items():
            _first_rounds(twins, st, eps, 6)
            took[e] = _driver.global_update(st, twins if e == "dial" else _jacobi(twins), eps, sched)
        assert took["dial"] >= sched.levels and took["jacobi"] > 0     # a gather per level at least; converged
        assert not np.array_equal(sts["dial"].v, _state("numpy", A, kind).v)   # the rounds and update moved prices
        if kind == "i":
            assert np.array_equal(sts["dial"].v, sts["jacobi"].v)
        else:
            np.testing.assert_allclose(sts["dial"].v, sts["jacobi"].v, rtol=1e-12, atol=0)
        if kind == "i":   # (float rounds already leave it off by a few ulps)
            assert _eps_cs_holds(sts["dial"], eps)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["i", "f"])
def test_gpu_dial_update_equals_the_twin_and_the_sweeps(kind):
    """The global price update in one cooperative launch (Dial's buckets)
    gives the twin's prices and step count, and the prices of the Jacobi
    sweeps launched one by one (the path of dense input)."""
    from gpumatch.lap import _kernels_cuda as gk

    rng = np.random.default_rng(17)
    A = random_sparse(rng, 300, 320, 10 / 300, perm=True, kind="int" if kind == "i" else "float", high=1000)
    sched = _driver.Schedule(levels=16, sweeps=256)
    sts = {"coop": _state("cupy", A, kind), "per_sweep": _state("cupy", A, kind), "twin": _state("numpy", A, kind)}
    ks = {"coop": gk, "per_sweep": _jacobi(gk), "twin": twins}
    eps = sts["twin"].eps0 // 8 if kind == "i" else sts["twin"].eps0 / 8
    applied = {}
    for e, st in sts.items():
        _first_rounds(ks[e], st, eps, 10)
        applied[e] = _driver.global_update(st, ks[e], eps, sched)
    assert applied["coop"] == applied["twin"] >= sched.levels and applied["per_sweep"] > 0
    for e in ("per_sweep", "twin"):
        if kind == "i":
            assert np.array_equal(host(sts["coop"].v), host(sts[e].v))
        else:   # FMA contraction may differ in the last bit
            np.testing.assert_allclose(host(sts["coop"].v), host(sts[e].v), rtol=1e-12, atol=0)


@pytest.mark.gpu
def test_gpu_batch_equals_the_twin():
    rng = np.random.default_rng(16)
    C = rng.integers(0, 500, (7, 40, 40))
    r0, c0 = _driver.solve_dense_batch(C)
    r1, c1 = _driver.solve_dense_batch(_backend.cp.asarray(C))
    assert np.array_equal(c0, host(c1))


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["int", "float"])
@pytest.mark.parametrize("shape", [(6, 37, 37), (3, 150, 150), (2, 300, 300)])
def test_gpu_batch_shared_arrays_equal_global(kind, shape, monkeypatch):
    # the block's arrays in shared memory (the default up to 939 rows) or in
    # global scratch (the hook at 0): the same auction, the same columns
    from gpumatch.lap import _kernels_cuda

    rng = np.random.default_rng(shape[1])
    C = rng.integers(0, 1000, shape) if kind == "int" else rng.random(shape)
    assert _kernels_cuda.batch_shared_bytes(shape[1]) <= _kernels_cuda.BATCH_SHARED_MAX
    r1, c1 = _driver.solve_dense_batch(_backend.cp.asarray(C))
    monkeypatch.setattr(_kernels_cuda, "BATCH_SHARED_MAX", 0)
    r2, c2 = _driver.solve_dense_batch(_backend.cp.asarray(C))
    assert np.array_equal(host(c1), host(c2))
    for b in range(shape[0]):
        r0, c0 = scipy_lsa(C[b])
        got, ref = C[b][host(r1)[b], host(c1)[b]].sum(), C[b][r0, c0].sum()
        assert got == ref if kind == "int" else close(got, ref)


def test_batch_statuses_instead_of_errors(engine):
    rng = np.random.default_rng(17)
    C = rng.random((3, 6, 6))
    C[1, 2, :] = np.inf            # a row with no allowed pair: infeasible
    C[2, 0, 0] = np.nan            # invalid
    r, c, status = _driver.solve_dense_batch(on(engine, C), statuses=True)
    assert status.tolist() == [0, 1, 1]
    r, c = host(r), host(c)
    assert (r[1:] == -1).all() and (c[1:] == -1).all()
    r0, c0 = scipy_lsa(C[0])
    assert close(C[0][r[0], c[0]].sum(), C[0][r0, c0].sum())
    with pytest.raises(ValueError, match=r"invalid numeric entries: nan at \(2, 0, 0\)"):
        _driver.solve_dense_batch(on(engine, C))


@pytest.mark.gpu
def test_public_batch_of_a_cupy_stack_runs_on_the_gpu():
    from gpumatch import batch

    cp = _backend.cp
    rng = np.random.default_rng(18)
    C = rng.integers(0, 100, (20, 9, 9)).astype(float)
    r, c = batch.linear_sum_assignment(cp.asarray(C))
    assert _backend.is_cupy_array(r) and _backend.is_cupy_array(c)
    for b in range(20):
        r0, c0 = scipy_lsa(C[b])
        assert C[b][host(r)[b], host(c)[b]].sum() == C[b][r0, c0].sum()
    C[4, 3, :] = np.inf
    r, c = batch.linear_sum_assignment(cp.asarray(C), errors="return")
    assert (host(r)[4] == -1).all() and (host(c)[3] >= 0).all()
    with pytest.raises(ValueError, match="problem 4: cost matrix is infeasible"):
        batch.linear_sum_assignment(cp.asarray(C))

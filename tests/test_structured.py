"""Structured matrices with long augmenting paths (issue: no long-path cliff).

Shuffled block-triangular Jacobians, permuted chains (ladders), banded,
staircase, arrowhead and block-diagonal patterns, and path-like flow
networks.  Every answer is checked by its properties (a valid matching of
the reference size with its König cover; a valid flow with a cut of the
same value), and the work of the CPU engine is bounded by deterministic
counts on small instances (the serial engine is deterministic).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

import gpumatch
from gpumatch import generators as G
from gpumatch.backends import to_numpy
from gpumatch.matching import _tail
from gpumatch.testing import check_flow, check_matching
from test_robustness import check_bounds

FAMILIES = {
    "jacobian": lambda: G.block_triangular(20_000, seed=2),
    "ladder": lambda: G.bidiagonal(20_000, permute=True, seed=2),
    "banded": lambda: G.banded(20_000, 3, density=0.5, permute=True, seed=2),
    "staircase": lambda: G.staircase(20_200, 20_000, permute=True, seed=2),
    "arrowhead": lambda: G.arrowhead(20_000, width=2, permute=True, seed=2),
    "blockdiag": lambda: G.block_diagonal(20_000, 6, density=0.5, permute=True, seed=2),
}


def _unit_network(A):
    """s -> rows -> columns -> t with unit capacities (int32 for scipy)."""
    m, n = A.shape
    A = A.tocoo()
    V = m + n + 2
    s, t = m + n, m + n + 1
    r = np.concatenate([np.full(m, s), A.row, m + np.arange(n)])
    c = np.concatenate([np.arange(m), m + A.col, np.full(n, t)])
    return sp.csr_matrix((np.ones(r.shape[0], np.int32), (r, c)), shape=(V, V)), s, t


def _reference(A) -> int:
    """Maximum matching size from scipy's max flow on the unit network
    (Hopcroft–Karp can take minutes on these patterns)."""
    C, s, t = _unit_network(A)
    return int(maximum_flow(C, s, t).flow_value)


@pytest.fixture(scope="module")
def references():
    return {name: (make(), None) for name, make in FAMILIES.items()}


def _graph(references, name):
    A, ref = references[name]
    if ref is None:
        ref = _reference(A)
        references[name] = (A, ref)
    return A, ref


@pytest.mark.parametrize("name", sorted(FAMILIES))
@pytest.mark.parametrize("backend", ["numba", "numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_structured_matching_is_maximum(references, name, backend):
    A, ref = _graph(references, name)
    res = gpumatch.bipartite_matching(A, backend=backend, certificate=True)
    check_matching(A, to_numpy(res.col_to_row), "row", expected_size=ref)
    assert res.size == ref


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_numba_work_is_bounded(references, name):
    """The serial engine's searches stay within a few passes over the graph:
    at most 8 phases of Pothen–Fan+ and 12 x (nnz + m + n) edges looked at,
    where Pothen–Fan+ alone ran a phase per one or two paths."""
    A, _ = references[name]
    m, n = A.shape
    res = gpumatch.bipartite_matching(A, backend="numba")
    st = res.stats
    assert st["aug_phases"] <= 8, st
    assert st["aug_work"] <= 12 * (A.nnz + m + n), st
    assert st["pr_relabels"] <= 10, st


def test_push_relabel_takes_over_the_jacobian(references, monkeypatch):
    """On the Jacobian (with the cycle rule off, which matches it outright)
    the budget hands over to push-relabel; without it Pothen–Fan+ runs many
    more phases (the cliff this mechanism removes)."""
    from gpumatch.matching import _cpu

    monkeypatch.setitem(_cpu.TUNING, "cycle_rule", False)
    A, ref = _graph(references, "jacobian")
    res = gpumatch.bipartite_matching(A, backend="numba")
    assert res.stats["algorithm"].endswith("then push-relabel")
    assert res.stats["pr_pushes"] > 0
    saved = dict(_cpu.TUNING)
    try:
        _cpu.TUNING["pf_budget"] = None
        old = gpumatch.bipartite_matching(A, backend="numba")
    finally:
        _cpu.TUNING.clear()
        _cpu.TUNING.update(saved)
    assert old.size == res.size == ref
    assert old.stats["aug_phases"] > 4 * res.stats["aug_phases"]


@pytest.mark.parametrize("seed", range(6))
def test_push_relabel_alone_from_empty(seed):
    """push_relabel from an empty matching reaches the maximum size on random
    rectangular graphs (its labels are valid lower bounds throughout)."""
    from gpumatch.matching import _cpu

    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 300)), int(rng.integers(1, 300))
    A = G.random_bipartite(m, n, float(rng.uniform(0.5, 4)), seed=seed).tocsr()
    A.sort_indices()
    C = A.tocsc()
    C.sort_indices()
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    raw = np.zeros(6, np.int64)
    _cpu.push_relabel(m, n, A.indptr.astype(np.int32), A.indices.astype(np.int32), C.indptr.astype(np.int32),
                      C.indices.astype(np.int32), mu_row, mu_col, raw)
    col_to_row = np.where(mu_col >= 0, mu_col, -1)
    check_matching(A, col_to_row, "row", expected_size=_reference(A))


def test_pothen_fan_budget_stops_after_a_phase():
    """A zero budget stops Pothen–Fan+ after its first phase that augmented
    (True: not proved maximum); the matching stays consistent."""
    from gpumatch.matching import _cpu

    A = G.block_triangular(3000, seed=5).tocsr()
    m, n = A.shape
    C = A.tocsc()
    C.sort_indices()
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    raw = np.zeros(6, np.int64)
    assert _cpu.pothen_fan(m, n, C.indptr.astype(np.int32), C.indices.astype(np.int32), mu_row, mu_col, raw, 0)
    assert raw[0] == 1 and raw[1] > 0
    c = np.flatnonzero(mu_col >= 0)
    assert (mu_row[mu_col[c]] == c).all()


@pytest.fixture
def no_chain_rule(monkeypatch):
    """The chain rule off (``_driver.CHAIN_RULE``): it matches a permuted
    chain outright, and these tests exercise the tails it would leave."""
    from gpumatch.matching import _driver

    monkeypatch.setattr(_driver, "CHAIN_RULE", None)


@pytest.fixture
def tail_plan(request):
    """The driver's tail plan on the given backend: ``"walks"`` (push-relabel
    walks after a first chunk of one phase, never the host) or ``"host"``
    (no walks; the host after every chunk of one phase, its estimate 0 s)."""
    backend, mode = request.param
    saved = (_tail.HOST_FINISH_BACKENDS, dict(_tail.HOST_FINISH))
    _tail.HOST_FINISH_BACKENDS = (backend,)
    if mode == "walks":
        _tail.HOST_FINISH.update(chunk=1, walks=True, entry_s=None)
    else:
        _tail.HOST_FINISH.update(chunk=1, walks=False, fixed_s=0.0, entry_s=0.0)
    yield backend, mode
    _tail.HOST_FINISH_BACKENDS = saved[0]
    _tail.HOST_FINISH.clear()
    _tail.HOST_FINISH.update(saved[1])


@pytest.mark.parametrize("tail_plan", [("numpy", "walks"), ("numpy", "host"),
                                       pytest.param(("cupy", "walks"), marks=pytest.mark.gpu),
                                       pytest.param(("cupy", "host"), marks=pytest.mark.gpu)], indirect=True)
@pytest.mark.parametrize("name", ["jacobian", "ladder"])
def test_driver_tail(references, tail_plan, name, no_chain_rule):
    """The tail after G-PR by walks, or by the host: a maximum matching with
    its König cover either way."""
    backend, mode = tail_plan
    A, ref = _graph(references, name)
    res = gpumatch.bipartite_matching(A, backend=backend, certificate=True)
    check_matching(A, to_numpy(res.col_to_row), "row", expected_size=ref)
    st = res.stats
    check_bounds(res)   # G-PR's own relabel count and bounds hold whatever finished the tail
    if mode == "host" and st["finished_by"] == "host":   # (a relabel past the deep cap, or the phases)
        assert ("device tail" in st["switch_reason"] or "G-PR's global relabels passed" in st["switch_reason"])
        assert st["host_algorithm"]
    elif mode == "walks" and st["finished_by"] == "walks":
        assert st["walk_rounds"] >= 1 and st["walk_pushes"] > 0
    else:   # G-PR or the first chunk of phases converged: nothing was left to hand over
        assert st["finished_by"] in ("push-relabel", "augmenting-paths"), st


def test_walks_on_numpy_finish_the_jacobian(references):
    """With the plan on the NumPy twin, the walks (not the phases) finish the
    Jacobian: the first chunk of one phase leaves paths."""
    A, ref = _graph(references, "jacobian")
    saved = (_tail.HOST_FINISH_BACKENDS, dict(_tail.HOST_FINISH))
    try:
        _tail.HOST_FINISH_BACKENDS = ("numpy",)
        _tail.HOST_FINISH.update(chunk=1, walks=True, entry_s=None)
        res = gpumatch.bipartite_matching(A, backend="numpy")
    finally:
        _tail.HOST_FINISH_BACKENDS = saved[0]
        _tail.HOST_FINISH.clear()
        _tail.HOST_FINISH.update(saved[1])
    assert res.stats["finished_by"] == "walks", res.stats
    assert res.size == ref


def _cut_capacity(C, side):
    """Capacity of the arcs from `side` to the rest."""
    C = sp.coo_matrix(C)
    keep = side[C.row] & ~side[C.col] & (C.row != C.col)
    return int(C.data[keep].astype(np.int64).sum())


@pytest.mark.parametrize("make", [lambda: G.bidiagonal(4000, permute=True, seed=1),
                                  lambda: G.block_triangular(5000, seed=1),
                                  lambda: G.staircase(3030, 3000, permute=True, seed=1)],
                         ids=["ladder", "jacobian", "staircase"])
def test_numpy_hands_long_tails_to_the_compiled_engine(make, no_chain_rule):
    """NumPy backend, Numba importable: G-PR's relabels measured long
    distances, so the compiled engine finishes the matching
    (``HOST_FINISH_NUMPY``; deterministic: a level count, not a clock)."""
    A = make()
    res = gpumatch.bipartite_matching(A, backend="numpy", certificate=True)
    st = res.stats
    assert st["backend"] == "numpy" and st["finished_by"] == "host", st
    assert "NumPy tail" in st["switch_reason"] and st["host_algorithm"], st
    check_bounds(res)
    ref = _reference(A)
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    assert res.size == ref == int(res.cover_rows.sum() + res.cover_cols.sum())


def test_numpy_tail_without_hand_over(references, monkeypatch, no_chain_rule):
    """Without the plan (or without Numba) the NumPy twin's phases finish."""
    from gpumatch import _backend
    A = G.bidiagonal(2000, permute=True, seed=1)
    for patch in ((_tail, "HOST_FINISH_NUMPY", None), (_backend, "numba_available", lambda: False)):
        with monkeypatch.context() as mp:
            mp.setattr(*patch)
            res = gpumatch.bipartite_matching(A, backend="numpy")
        assert res.stats["finished_by"] == "augmenting-paths", res.stats
        check_matching(A, res.col_to_row, "row", expected_size=_reference(A))


def test_numpy_meshes_keep_their_own_phases():
    """A mesh's tail is a few short phases: no hand-over."""
    A = G.delaunay(5000, seed=2)
    res = gpumatch.bipartite_matching(A, backend="numpy")
    assert res.stats["finished_by"] in ("push-relabel", "augmenting-paths"), res.stats
    check_matching(A, res.col_to_row, "row", expected_size=_reference(A))


@pytest.mark.parametrize("name", ["path", "unit_ladder", "unit_ladder_matching"])
def test_numpy_flow_hands_paths_to_the_compiled_engine(name, monkeypatch):
    """NumPy backend, Numba importable: a path-like network goes to the
    compiled engine (``TUNING["host_finish"]["numpy"]``); the flow is valid
    and maximum, and the minimum cut has its value.  The unit ladder's
    push-relabel is reached with the unit route off; with it on, G-PR's own
    tail goes to the compiled engine (``HOST_FINISH_NUMPY``)."""
    from gpumatch.flow import _tuning
    from gpumatch.matching import _driver

    if name == "path":
        C, s, t = G.path_network(4000, seed=3)
    else:
        C, s, t = _unit_network(G.bidiagonal(3000, permute=True, seed=4))
    if name == "unit_ladder":
        monkeypatch.setitem(_tuning.TUNING, "unit_matching", False)
    # (the contraction of series chains would solve the path outright, and the chain rule the ladder)
    monkeypatch.setitem(_tuning.TUNING, "series", False)
    monkeypatch.setattr(_driver, "CHAIN_RULE", None)
    C = C.astype(np.int64)
    res = gpumatch.maximum_flow(C, s, t, backend="numpy")
    if name == "unit_ladder_matching":
        assert res.stats["method"] == "unit_matching" and res.stats["matching"]["finished_by"] == "host", res.stats
    else:
        assert res.stats["backend"] == "numpy" and res.stats["finished_by"] == "host", res.stats
    value = int(res.flow_value)
    check_flow(C, s, t, res.flow, value)
    assert value == int(maximum_flow(C.astype(np.int32), s, t).flow_value)
    side = np.asarray(res.source_side, dtype=bool)
    assert side[s] and not side[t] and _cut_capacity(C, side) == value


def test_numpy_flow_without_hand_over(monkeypatch):
    from gpumatch import _backend
    from gpumatch.flow import _tuning

    C, s, t = G.path_network(300, seed=3)
    for patch in ((_tuning.TUNING["host_finish"], "numpy", None), (_backend, "numba_available", lambda: False)):
        with monkeypatch.context() as mp:
            if isinstance(patch[0], dict):
                mp.setitem(*patch)
            else:
                mp.setattr(*patch)
            res = gpumatch.maximum_flow(C, s, t, backend="numpy")
        assert res.stats.get("finished_by") != "host", res.stats
        check_flow(C, s, t, res.flow, int(res.flow_value))


@pytest.fixture
def flow_host_finish_on(request):
    from gpumatch.flow import _tuning

    saved = _tuning.TUNING["host_finish"]
    _tuning.TUNING["host_finish"] = dict(saved, fixed_s=0.0, entry_s=0.0, backends=(request.param,))
    yield request.param
    _tuning.TUNING["host_finish"] = saved


@pytest.mark.parametrize("flow_host_finish_on", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)], indirect=True)
def test_flow_path_goes_to_the_host(flow_host_finish_on, monkeypatch):
    from gpumatch.flow import _tuning

    monkeypatch.setitem(_tuning.TUNING, "series", False)   # (the contraction would solve the path outright)
    C, s, t = G.path_network(4000, seed=3)
    res = gpumatch.maximum_flow(C, s, t, backend=flow_host_finish_on)
    flow = res.flow        # SciPy in, SciPy out, whatever the backend
    check_flow(C, s, t, flow, int(to_numpy(res.flow_value)))
    assert int(to_numpy(res.flow_value)) == int(C.data.min())
    assert res.stats["finished_by"] == "host"
    assert "estimate" in res.stats["switch_reason"]


@pytest.mark.parametrize("backend", ["numba", "numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("name", ["path", "unit_ladder", "unit_jacobian"])
def test_structured_flow(name, backend):
    if name == "path":
        C, s, t = G.path_network(3000, seed=4)
    elif name == "unit_ladder":
        C, s, t = _unit_network(G.bidiagonal(3000, permute=True, seed=4))
    else:
        C, s, t = _unit_network(G.block_triangular(3000, seed=4))
    C = C.astype(np.int64)
    res = gpumatch.maximum_flow(C, s, t, backend=backend)
    value = int(to_numpy(res.flow_value))
    flow = res.flow
    check_flow(C, s, t, flow, value)
    assert value == int(maximum_flow(C.astype(np.int32), s, t).flow_value)


def _relabel_state(A, backend, unmatch=()):
    """A G-PR state of `A` whose matching is its diagonal less the columns
    `unmatch` (so their augmenting paths are known), on `backend`."""
    from gpumatch._validation import as_csr_graph
    from gpumatch.matching import _driver

    st = _driver.make_state(as_csr_graph(A, backend=backend))
    xp = st.xp
    n = st.n
    diag = xp.arange(n, dtype=st.idx)
    st.mu_col[...] = diag
    st.mu_row[...] = -1
    st.mu_row[:n] = diag
    for c in unmatch:
        st.mu_col[c] = -1
        st.mu_row[c] = -1
    return st


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_deep_relabel_stops_once_every_free_column_is_reached(backend, monkeypatch):
    """A band of 6000 rows (bandwidth 1, not shuffled) with its diagonal
    matched but for two columns near the end: the relabel's BFS from the
    two free rows reaches both free columns within a few levels, then stops
    (the band would go on for 12000 levels).  The labels it gives are valid
    lower bounds of the exact ones (push-relabel needs no more), exact on the
    free columns; with every column matched, no BFS runs at all."""
    from gpumatch.matching import _driver, _kernels_numpy

    monkeypatch.setattr(_kernels_numpy, "REACH_CHECK", 4)
    A = G.banded(6000, 1)
    kern = _driver.kernels_for(backend)
    st = _relabel_state(A, backend, unmatch=(5990, 5995))
    _, active = kern.relabel_collect(st, fix=True)
    assert sorted(to_numpy(active).tolist()) == [5990, 5995]
    assert not st.extra["bfs_truncated"] and st.extra["bfs_depth"] < 100
    early = (to_numpy(st.psi_row).copy(), to_numpy(st.psi_col).copy())
    monkeypatch.setattr(_kernels_numpy, "REACH_CHECK", 10**9)   # the full BFS, for the exact labels
    st.extra.pop("bfs_depth")
    kern.relabel_collect(st, fix=True)
    exact = (to_numpy(st.psi_row), to_numpy(st.psi_col))
    assert st.extra["bfs_depth"] > 5000
    for got, want in zip(early, exact):
        assert (got <= want).all() and (got < st.inf).all()
    assert (early[1][[5990, 5995]] == exact[1][[5990, 5995]]).all()
    # one more row, on column 0: every column matched, the free row starts a BFS down the band, and
    # the look at step 0 (after a deep relabel) ends it at once
    monkeypatch.setattr(_kernels_numpy, "REACH_CHECK", 4)
    B = sp.vstack([A, sp.csr_matrix(([1.0], ([0], [0])), shape=(1, 6000))]).tocsr()
    st = _relabel_state(B, backend)
    st.extra["bfs_depth"] = 10**6
    _, active = kern.relabel_collect(st, fix=True)
    assert active.shape[0] == 0 and st.extra["bfs_depth"] == 0


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_relabel_cap_and_walks_hand_over(backend, monkeypatch):
    """A relabel given ``max_steps`` stops there and says so; the walks
    give a chain whose relabel passes their cap (half the host's estimate at
    ``level_s`` per level) to the host, which finishes it maximum."""
    from gpumatch.matching import _driver

    from gpumatch._validation import as_csr_graph

    # the upper bidiagonal with row i matched to column i + 1: one augmenting path, from column 0
    # through every row to the free last row (a BFS of 12000 levels)
    A = G.bidiagonal(6000)
    kern = _driver.kernels_for(backend)
    st = _driver.make_state(as_csr_graph(A, backend=backend))
    xp = st.xp
    st.mu_row[...] = xp.concatenate([xp.arange(1, 6000, dtype=st.idx), xp.asarray([-1], dtype=st.idx)])
    st.mu_col[...] = xp.concatenate([xp.asarray([-1], dtype=st.idx), xp.arange(0, 5999, dtype=st.idx)])
    kern.relabel_collect(st, fix=True, max_steps=300)
    assert st.extra["bfs_truncated"] and st.extra["bfs_depth"] < 400
    kern.relabel_collect(st, fix=True)
    assert not st.extra["bfs_truncated"] and int(st.psi_col[0]) == 2 * 6000 - 1
    monkeypatch.setattr(_tail, "HOST_FINISH_BACKENDS", (backend,))
    monkeypatch.setitem(_tail.HOST_FINISH, "chunk", 1)
    monkeypatch.setitem(_tail.HOST_FINISH, "level_s", 1.0)   # any relabel past REACH_CHECK steps is too dear
    monkeypatch.setitem(_tail.HOST_FINISH, "deep_share", None)   # (G-PR's own relabels: no cap here)
    monkeypatch.setattr(_driver, "CHAIN_RULE", None)           # (it would match the chain before G-PR)
    B = G.bidiagonal(20000, permute=True, seed=2)
    res = gpumatch.bipartite_matching(B, backend=backend)
    check_matching(B, to_numpy(res.col_to_row), "row", expected_size=20000)
    st = res.stats
    assert st["finished_by"] == "host" and "device walks: a global relabel passed" in st["switch_reason"], st
    assert st["walk_relabels"] >= 1


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_deep_searches_go_to_the_host(backend, monkeypatch):
    """HOST_FINISH's ``deep_share``: G-PR's relabels together stop at their
    level cap (a shuffled staircase of width 3), and so does the first
    chunk of augmenting phases (width 6: G-PR's relabels are shallow, its
    phases thousands of levels deep); the host finishes either way, with a
    maximum matching."""
    from gpumatch.matching import _driver

    monkeypatch.setattr(_tail, "HOST_FINISH_BACKENDS", (backend,))
    monkeypatch.setitem(_tail.HOST_FINISH, "deep_share", 0.25)
    n = 20_000

    def solve(width, level_key, reason):
        """The staircase's cap (levels) and its certified solve's statistics,
        finished by the host from the empty matching (the degree-one rule
        cascades there) for `reason`."""
        A = G.staircase(n, n, width=width, permute=True, seed=1)
        cap = _tail.deep_levels(_driver.make_state(_validated(A, backend)), _tail.HOST_FINISH, level_key)
        res = gpumatch.bipartite_matching(A, backend=backend, certificate=True)
        check_matching(A, to_numpy(res.col_to_row), "row", expected_size=n)
        st = res.stats
        assert st["finished_by"] == "host" and reason in st["switch_reason"] and st["host_fresh"], st
        return cap, st

    cap, st = solve(3, "level_s", "G-PR's global relabels passed")
    assert cap // 2 <= st["relabel_steps"] <= cap // 2 + 64   # (steps of two levels; the GPU looks every few launches)
    cap, st = solve(6, "aug_level_s", "device tail: the first")
    assert st["aug_truncated"] and st["aug_levels"] >= cap
    if st.get("aug_cooperative"):   # one launch: it stops between two levels, at the cap
        assert st["aug_levels"] == cap


def _validated(A, backend):
    from gpumatch._validation import as_csr_graph

    return as_csr_graph(A, backend=backend)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_augment_level_cap_keeps_a_valid_matching(backend):
    """``augment(max_levels=...)`` stops at the cap (inside a phase in the
    cooperative launch, after the phase on the other paths), says so, and
    leaves a valid matching no smaller than before; a second call without
    the cap finishes it maximum."""
    from gpumatch.matching import _augment, _driver

    n = 3000
    A = G.staircase(n, n, width=6, permute=True, seed=3)
    st = _driver.make_state(_validated(A, backend))
    kern = _driver.kernels_for(backend)
    _driver.greedy(st, kern)
    kern.fix_matching(st)
    before = int((to_numpy(st.mu_row) >= 0).sum())
    got = _augment.augment(st, max_levels=50)
    assert got["aug_truncated"] and not got["aug_converged"] and got["aug_levels"] >= 50
    if got["aug_cooperative"]:
        assert got["aug_levels"] == 50
    mu_row, mu_col = to_numpy(st.mu_row), to_numpy(st.mu_col)
    rows = np.flatnonzero(mu_row >= 0)
    assert np.array_equal(mu_col[mu_row[rows]], rows) and int((mu_col >= 0).sum()) == rows.shape[0]
    assert rows.shape[0] >= before
    _augment.invalidate(st)
    assert _augment.augment(st)["aug_converged"]
    check_matching(A, to_numpy(st.mu_col), "row", expected_size=n)


def test_reach_look_in_slices_counts_alike(monkeypatch):
    """:func:`unreached` and :func:`fill_lower_bounds` work in slices (their
    masks are temporaries): slices of 7 vertices give what one slice gives."""
    from gpumatch.matching import _kernels_numpy

    A = G.banded(1000, 1)
    st = _relabel_state(A, "numpy", unmatch=(3, 500, 997))
    st.psi_col[...] = st.inf
    st.psi_col[::3] = 5
    st.psi_row[...] = st.inf
    st.psi_row[::2] = 4
    ref = _kernels_numpy.unreached(st)
    a = _relabel_state(A, "numpy", unmatch=(3, 500, 997))
    a.psi_col[...], a.psi_row[...] = st.psi_col, st.psi_row
    _kernels_numpy.fill_lower_bounds(st, 9)
    monkeypatch.setattr(_kernels_numpy, "REACH_SLICE", 7)
    assert _kernels_numpy.unreached(a) == ref == 2   # free columns 500 and 997 (column 3 has a label)
    _kernels_numpy.fill_lower_bounds(a, 9)
    np.testing.assert_array_equal(a.psi_row, st.psi_row)
    np.testing.assert_array_equal(a.psi_col, st.psi_col)


def _ladder(n, rows, cols, seed=5):
    """Bidiagonal pattern (row i holds columns i and i + 1) with its rows
    and / or columns shuffled."""
    i = np.arange(n)
    r = np.concatenate([i, i[:-1]])
    c = np.concatenate([i, i[:-1] + 1])
    rng = np.random.default_rng(seed)
    if rows:
        r = rng.permutation(n)[r]
    if cols:
        c = rng.permutation(n)[c]
    return sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(n, n))


@pytest.mark.parametrize("rows, cols", [(True, True), (True, False), (False, True), (False, False)])
@pytest.mark.parametrize("transpose", [False, True])
def test_numba_degree_one_rule_solves_ladders(rows, cols, transpose):
    """A ladder is one chain with degree-one ends.  With its columns in
    order each row's first column is the one of the perfect matching: the
    greedy pass over the rows matches every row, which proves it maximum,
    and nothing else runs.  Shuffled by columns the pass leaves a row free:
    it is undone and the degree-one rule matches every vertex.  No search
    runs either way."""
    A = _ladder(5000, rows, cols)
    if transpose:
        A = A.T.tocsr()
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=5000)
    st = res.stats
    if cols:
        assert st["degree_one_pairs"] == 5000, st
        assert st["algorithm"] == "degree-one + none", st
    else:
        assert st["degree_one_pairs"] == 0, st
        assert st["algorithm"] == "greedy (maximum) + none", st
    assert st["aug_phases"] == st["aug_work"] == st["pr_pushes"] == 0, st


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(300, 300), (250, 300), (300, 250)])
def test_greedy_cover_is_kept_only_when_maximum_by_count(seed, shape):
    """The greedy pass over the rows is kept only when it matches every
    non-empty row (on a graph that is not tall); else it is undone to the
    empty matching (the degree-one rule runs on the whole graph) or carried
    on.  Either way the engine's matching is maximum."""
    from gpumatch import _cpu_match

    rng = np.random.default_rng(seed)
    m, n = shape
    nnz = int(1.3 * m) if seed % 2 else 3 * m
    r, c = rng.integers(0, m, nnz), rng.integers(0, n, nnz)
    if seed >= 3:   # a diagonal first in every row (upper triangular): the pass matches row i to column i
        keep = c > r
        d = np.arange(min(m, n))
        r, c = np.concatenate([r[keep], d]), np.concatenate([c[keep], d])
    A = sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(m, n))
    A.sum_duplicates()
    A.sort_indices()
    rptr, rind = A.indptr.astype(np.int32), A.indices.astype(np.int32)
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    status, stop = _cpu_match.greedy_cover(m, rptr, rind, mu_row, mu_col)
    nonempty = np.diff(rptr) > 0
    matched = np.flatnonzero(mu_row >= 0)
    assert np.all(mu_col[mu_row[matched]] == matched)
    assert np.all(np.asarray(A[matched, mu_row[matched]]).ravel() != 0)
    if status == 1:
        assert stop == m and np.all(mu_row[nonempty] >= 0)
    else:
        assert status == -1 and nonempty[stop] and mu_row[stop] < 0 and np.all(mu_row[stop:] < 0)
        _cpu_match._undo_rows(stop, mu_row, mu_col)
        assert np.all(mu_row < 0) and np.all(mu_col < 0)
    assert _cpu_match.greedy_cover(m, rptr, rind, np.zeros(m, np.int32), mu_col)[0] == -2
    res = gpumatch.bipartite_matching(A, backend="numba")
    assert ("greedy (maximum)" in res.stats["algorithm"]) == (status == 1 and m <= n)
    from scipy.sparse.csgraph import maximum_bipartite_matching as sp_mbm
    check_matching(A, res.col_to_row, "row", expected_size=int((sp_mbm(A) >= 0).sum()))


def _cycles(n, k, seed):
    """`k` disjoint shuffled cycles of degree-two vertices, `n` rows in all (row i of a
    cycle of length L: columns i and i + 1 mod L): no vertex of degree one."""
    rng = np.random.default_rng(seed)
    blocks = []
    for size in np.diff(np.linspace(0, n, k + 1).astype(int)):
        i = np.arange(size)
        blocks.append(sp.csr_matrix((np.ones(2 * size), (np.concatenate([i, i]), np.concatenate([i, (i + 1) % size]))),
                                    shape=(size, size)))
    A = sp.block_diag(blocks, format="csr")
    p, q = rng.permutation(n), rng.permutation(n)
    return sp.csr_matrix(A[p][:, q])


@pytest.mark.parametrize("k", [1, 7, 2000])      # 2000: cycles of three rows, a choice each
@pytest.mark.parametrize("choices", [True, False])
def test_numba_cycles_from_one_choice_each(k, choices, monkeypatch):
    """Shuffled cycles have no degree-one vertex to start the rule; with
    ``chain_choices`` a row of two free columns takes one and the rule
    matches the rest of its cycle: each cycle is matched perfectly and no
    search runs.  Without (and without the cycle rule), the greedy pass and
    the search get there too.  The cycle rule alone closes the short cycles
    (a cycle of rows of two entries: an edge that joins a set to itself)."""
    from gpumatch import _cpu_match

    monkeypatch.setitem(_cpu_match.TUNING, "chain_choices", choices)
    monkeypatch.setitem(_cpu_match.TUNING, "cycle_rule", choices)
    A = _cycles(6000, k, seed=k)
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=6000)
    st = res.stats
    if choices:
        assert st["algorithm"] == "degree-one + none" and st["degree_one_pairs"] == 6000, st
        assert st["aug_phases"] == st["aug_work"] == st["pr_pushes"] == 0, st
    else:
        assert st["degree_one_pairs"] == 0 and st["initial_size"] < 6000, st
        monkeypatch.setitem(_cpu_match.TUNING, "cycle_rule", True)
        res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
        check_matching(A, res.col_to_row, "row", expected_size=6000)
        if k == 2000:
            assert res.stats["algorithm"] == "degree-one + none", res.stats


def test_numba_degree_one_rule_solves_the_staircase(references):
    """The tall staircase peels from its degree-one ends too: the 1% extra
    rows stay free and no search runs."""
    A, ref = _graph(references, "staircase")
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    assert res.stats["degree_one_pairs"] == ref == A.shape[1]
    assert res.stats["aug_work"] == 0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("with_csc", [False, True])
@pytest.mark.parametrize("cycles", [False, True])
def test_degree_one_rule_is_exact(seed, warm, with_csc, cycles):
    """On sparse random graphs full of degree-one and degree-two vertices
    the rule's pairs (on top of a warm start's; with the cycle rule or
    without) extend to a maximum matching: Pothen–Fan+ from there reaches
    scipy's size, and the rule never matched a vertex twice nor left an
    edge's pair out of the graph."""
    from scipy.sparse.csgraph import maximum_bipartite_matching as sp_mbm

    from gpumatch import _cpu_csr
    from gpumatch._cpu_degree_one import degree_one
    from gpumatch._cpu_match import augment

    rng = np.random.default_rng(seed)
    m, n, nnz = 400, 300, 500
    A = sp.csr_matrix((np.ones(nnz), (rng.integers(0, m, nnz), rng.integers(0, n, nnz))), shape=(m, n))
    A.sum_duplicates()
    rptr, rind = A.indptr.astype(np.int32), A.indices.astype(np.int32)
    cptr, cind = _cpu_csr.transpose(m, n, rptr, rind)
    mu_row = np.full(m, -1, np.int32)
    mu_col = np.full(n, -1, np.int32)
    if warm:   # a few pairs from the first entries of some rows
        for r in range(0, m, 7):
            if rptr[r + 1] > rptr[r] and mu_col[rind[rptr[r]]] < 0:
                mu_row[r] = rind[rptr[r]]
                mu_col[rind[rptr[r]]] = r
    before = int((mu_col >= 0).sum())
    warm_pairs = np.flatnonzero(mu_row >= 0), mu_row[mu_row >= 0].copy()
    pairs, _, _ = degree_one(m, n, rptr, rind, mu_row, mu_col, *([cptr, cind] if with_csc else [None, None]),
                             cycles=cycles)
    assert pairs > 50 and int((mu_col >= 0).sum()) == before + pairs
    np.testing.assert_array_equal(mu_row[warm_pairs[0]], warm_pairs[1])
    matched = np.flatnonzero(mu_col >= 0)     # pairs are edges, each vertex once
    assert np.all(mu_row[mu_col[matched]] == matched)
    assert np.all(np.asarray(A[mu_col[matched], matched]).ravel() != 0)
    augment(m, n, rptr, rind, cptr, cind, mu_row, mu_col, np.zeros(6, np.int64))
    check_matching(A, mu_col, "row", expected_size=int((sp_mbm(A) >= 0).sum()))


def _unicyclic_pieces(rng, k):
    """A graph whose free structure closes cycles of degree-two rows: `k`
    pieces, each a cycle of rows of two entries through its own columns
    (sometimes a double edge: two rows on the same two columns), with trees
    of such rows hung on it, rows of three or more entries into earlier
    pieces' columns, and a few spare columns; rows and columns shuffled."""
    rows, cols = [], []
    r = c = 0
    for _ in range(k):
        L = int(rng.integers(1, 7))
        base = c
        for i in range(L):   # the cycle: row r + i on columns base + i, base + (i + 1) % L
            rows += [r + i, r + i]
            cols += [base + i, base + (i + 1) % L]
        r += L
        c += L
        for _ in range(int(rng.integers(0, 3))):   # a hanging row on a new column and one of the piece's
            rows += [r, r]
            cols += [c, base + int(rng.integers(0, L))]
            r += 1
            c += 1
        if base:   # rows into earlier pieces (they keep their piece's pair once those are matched)
            for _ in range(int(rng.integers(0, 3))):
                rows += [r, r, r]
                cols += [base + int(rng.integers(0, L))] + list(rng.integers(0, base, 2))
                r += 1
    c += int(rng.integers(0, 3))
    pr, pc = rng.permutation(r), rng.permutation(c)
    A = sp.csr_matrix((np.ones(len(rows)), (pr[rows], pc[cols])), shape=(r, c))
    A.sum_duplicates()
    A.data[:] = 1.0
    return A


@pytest.mark.parametrize("seed", range(12))
def test_cycle_rule_is_exact_where_it_closes(seed):
    """Cycles of degree-two rows with trees on them (the cycle rule's own
    case): its pairs, kept, extend to a maximum matching, and it closes at
    least one cycle (more pairs than the degree-one rule alone)."""
    from scipy.sparse.csgraph import maximum_bipartite_matching as sp_mbm

    from gpumatch import _cpu_csr
    from gpumatch._cpu_degree_one import degree_one
    from gpumatch._cpu_match import augment

    A = _unicyclic_pieces(np.random.default_rng(seed), 40)
    m, n = A.shape
    rptr, rind = A.indptr.astype(np.int32), A.indices.astype(np.int32)
    cptr, cind = _cpu_csr.transpose(m, n, rptr, rind)
    got = {}
    for cycles in (False, True):
        mu_row = np.full(m, -1, np.int32)
        mu_col = np.full(n, -1, np.int32)
        got[cycles], _, _ = degree_one(m, n, rptr, rind, mu_row, mu_col, cycles=cycles)
        matched = np.flatnonzero(mu_col >= 0)
        assert np.all(mu_row[mu_col[matched]] == matched)
        assert np.all(np.asarray(A[mu_col[matched], matched]).ravel() != 0)
        augment(m, n, rptr, rind, cptr, cind, mu_row, mu_col, np.zeros(6, np.int64))
        check_matching(A, mu_col, "row", expected_size=int((sp_mbm(A) >= 0).sum()))
    assert got[True] > got[False]


@pytest.mark.parametrize("kw", [{}, {"max_block": 1}, {"max_block": 3}, {"max_block": 60}, {"coupling": 0},
                                {"coupling": 5}, {"permute": False}])
def test_numba_cycle_rule_matches_jacobians_outright(kw):
    """Shuffled block triangular Jacobians are matched by the exact rules
    alone, from the first block on (its rows have only their block's
    columns; then each later block's rows lose their earlier columns): no
    augmenting search, no push-relabel, at any block size or coupling."""
    A = G.block_triangular(3000, seed=7, **kw)
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=3000)
    st = res.stats   # (unshuffled, the greedy pass over the rows takes the diagonal first)
    assert st["algorithm"] == ("degree-one + none" if kw != {"permute": False} else "greedy (maximum) + none"), st
    assert st["aug_work"] == 0 and st["pr_pushes"] == 0, st


def test_numba_threads_probe_the_exact_rules_past_the_budget(monkeypatch):
    """On the threads' path the rules run only once the search has spent its
    budget (there they would cost random graphs a serial pass); on a
    Jacobian they then match it all, kept in place of the search's pairs."""
    from gpumatch.matching import _cpu

    monkeypatch.setitem(_cpu.TUNING, "parallel_min_nnz", 1)
    monkeypatch.setitem(_cpu.TUNING, "pf_budget", 0.01)
    A = G.block_triangular(20000, seed=3)
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=20000)
    assert res.stats["algorithm"].endswith("then degree-one (maximum)"), res.stats
    monkeypatch.setitem(_cpu.TUNING, "cycle_rule", False)
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=20000)
    assert "degree-one" not in res.stats["algorithm"], res.stats


def test_numba_unit_ladder_is_solved_by_the_degree_one_rule():
    """The unit network of a shuffled ladder: the matching engine under the
    flow needs no augmenting search either."""
    C, s, t = _unit_network(_ladder(4000, True, True))
    C = C.astype(np.int64)
    res = gpumatch.maximum_flow(C, s, t, backend="numba")
    check_flow(C, s, t, res.flow, int(res.flow_value))
    assert int(res.flow_value) == 4000
    assert res.stats["aug_phases"] == 0 and res.stats["degree_one_pairs"] == 4000, res.stats


def test_numba_few_left_free_search_from_the_rows(references):
    """Arrowhead: the greedy pass over the rows leaves a handful free, so
    the search runs from the rows on the CSR and no CSC is built."""
    A, ref = _graph(references, "arrowhead")
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    st = res.stats
    assert st["algorithm"] == "greedy + Pothen-Fan+ from the rows", st
    assert 0 < ref - st["initial_size"] <= 0.001 * min(A.shape), st
    assert st["aug_work"] <= A.nnz + sum(A.shape), st


@pytest.mark.parametrize("name", ["jacobian", "banded", "blockdiag"])
def test_numba_search_from_the_rows_hands_over(references, name, monkeypatch):
    """Forced onto every input, the search from the rows either proves the
    matching maximum within its pass or hands over (the CSC is built and
    the usual search finishes): maximum either way."""
    from gpumatch import _cpu_match

    monkeypatch.setitem(_cpu_match.TUNING, "row_search_free", 1.0)
    monkeypatch.setitem(_cpu_match.TUNING, "cycle_rule", False)   # (it matches the Jacobian outright)
    A, ref = _graph(references, name)
    res = gpumatch.bipartite_matching(A, backend="numba", certificate=True)
    check_matching(A, res.col_to_row, "row", expected_size=ref)
    assert res.size == ref
    if name == "jacobian":   # long paths: the pass runs out, the CSC's search finishes
        assert res.stats["algorithm"].startswith("degree-one + greedy + Pothen-Fan+ from the rows, then "), \
            res.stats

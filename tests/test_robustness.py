"""G-PR robustness: every input finishes within a deterministic bound.

* Generated families that once made G-PR slow or stall (triangular and
  bidiagonal patterns: long alternating paths; dense blocks and hub rows
  that many columns want at once; thin rectangles; grids; meshes; directed
  power-law graphs) are solved to a certified maximum, with at most
  :func:`~gpumatch.matching._driver.stall_bound` global relabels, at most
  ``2 a + 4`` augmenting phases after a hand-over with ``a`` active
  columns, and on the GPU no more than a small multiple of the NumPy
  twin's push iterations and relabels on the same input.
* The push iteration keeps its invariants under contention on both
  backends: the active list holds each free column once, a listed column
  is never matched, the rows' side of the matching is consistent, no
  column is lost, and the matched count never decreases.
* By default augmenting-path phases finish the tail after
  ``AUGMENT_AFTER`` push phases; every family is also solved by
  push-relabel alone (the hand-over off), which must converge by itself.
* The progress watch hands over to augmenting-path phases (forced here
  with a window of one relabel) and the result is still maximum; a phase
  that never converges raises a clear ``RuntimeError`` instead of looping.

Counts, not times: no test here depends on the machine's speed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import corpus_manifest, corpus_path
from gpumatch import generators
from gpumatch._validation import as_csr_graph
from gpumatch.io import read_matrix_market
from gpumatch.matching import _augment, _driver, _tail, bipartite_matching
from gpumatch.testing import check_matching
from test_matching import flow_size, host

#: GPU push iterations and relabels may exceed the NumPy twin's on the same
#: input by this factor plus this slack (the claim winners differ, so the
#: paths differ; a livelock would exceed it by orders of magnitude).
GPU_FACTOR, GPU_SLACK = 4, 64


def hub_graph(n=3000, hubs=8, crowd=600, seed=0):
    """A random d2 graph plus `crowd` extra columns adjacent only to `hubs`
    hub rows, which every one of them wants: many free columns reach free
    rows, few can be matched (the regime of the directed social networks
    that livelocked the racing push)."""
    rng = np.random.default_rng(seed)
    A = sp.coo_matrix(generators.random_bipartite(n, n, 2, seed=seed))
    rows = [A.row, np.repeat(np.arange(hubs), crowd)]
    cols = [A.col, np.tile(np.arange(n, n + crowd), hubs)]
    hub_cols = rng.choice(n, size=n // 2, replace=False)   # the hubs are also wanted by half the others
    rows.append(np.repeat(np.arange(hubs), hub_cols.shape[0]))
    cols.append(np.tile(hub_cols, hubs))
    r, c = np.concatenate(rows), np.concatenate(cols)
    B = sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(n, n + crowd))
    B.sum_duplicates()
    B.data[:] = 1.0
    return B


FAMILIES = {
    "triangular": lambda: generators.triangular(400),
    "triangular_perm": lambda: generators.triangular(400, permute=True, seed=3),
    "triangular_lower_perm": lambda: generators.triangular(400, lower=True, permute=True, seed=4),
    "bidiagonal_perm": lambda: generators.bidiagonal(4000, permute=True, seed=1),
    "dense": lambda: sp.csr_matrix(np.ones((150, 150))),
    "hubs": lambda: hub_graph(),
    "thin_tall": lambda: generators.random_bipartite(20000, 12, 2, seed=2),
    "thin_wide": lambda: generators.random_bipartite(12, 20000, 2, seed=2),
    "grid": lambda: generators.grid(60, 60, 0.1, seed=4),
    "delaunay": lambda: generators.delaunay(4000, seed=4),
    "rmat_directed": lambda: generators.rmat(12, 8, seed=4, permute=True),
}


def check_bounds(res, numpy_stats=None):
    """The deterministic bounds of the driver's progress guarantee (and, for
    a GPU result, against the NumPy twin's counts)."""
    s = res.stats
    hist = s["active_history"]
    assert len(hist) == s["global_relabels"] >= 1
    assert s["global_relabels"] <= _driver.stall_bound(hist[0]), s
    if s["finished_by"] == "augmenting-paths":
        assert s["aug_converged"] and s["aug_phases"] <= 2 * hist[-1] + 4, s
        assert s["switch_reason"]
    elif s["finished_by"] == "walks":   # the walks end on a relabel that reaches no free column
        assert s["switch_reason"] and s["walk_relabels"] >= 1 and s["walk_rounds"] <= s["walk_relabels"], s
    elif s["finished_by"] == "host":
        assert s["switch_reason"] and s["host_algorithm"], s
    else:
        assert s["finished_by"] == "push-relabel" and s["switch_reason"] is None and hist[-1] == 0
    if numpy_stats is not None:
        assert s["push_iterations"] <= GPU_FACTOR * numpy_stats["push_iterations"] + GPU_SLACK, (s, numpy_stats)
        assert s["global_relabels"] <= GPU_FACTOR * numpy_stats["global_relabels"] + GPU_SLACK, (s, numpy_stats)


def solve_checked(A, backend, expected):
    res = bipartite_matching(A, backend=backend)
    check_matching(A, host(res.col_to_row), expected_size=expected)
    ref = None
    if backend == "cupy":
        ref = bipartite_matching(A, backend="numpy").stats
    check_bounds(res, ref)
    return res


@pytest.mark.parametrize("tail", ["default", "push-relabel only"])
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_finishes_within_bounds(backend, name, tail, monkeypatch):
    """With the default hand-over of the tail to augmenting phases, and
    with push-relabel alone (``AUGMENT_AFTER = None``: only the progress
    watch may hand over), which must converge by itself."""
    if tail != "default":
        monkeypatch.setattr(_driver, "AUGMENT_AFTER", None)
    A = FAMILIES[name]()
    solve_checked(A, backend, flow_size(A))


def test_tail_goes_to_augmenting_phases(backend):
    """After AUGMENT_AFTER push phases, augmenting-path phases finish the
    matching (a mesh: a few hundred columns are still free then)."""
    A = generators.delaunay(20000, seed=2)
    res = solve_checked(A, backend, flow_size(A))
    s = res.stats
    assert s["finished_by"] == "augmenting-paths" and "max_relabels=2" in s["switch_reason"]
    assert s["global_relabels"] == _driver.AUGMENT_AFTER + 1 == 3
    assert s["aug_converged"] and s["aug_paths"] >= 1


@pytest.mark.parametrize("name", ["triangular", "triangular_perm", "triangular_lower_perm", "dense"])
def test_greedy_matches_triangular_and_dense_perfectly(backend, name):
    """Least degree first (with the rotated scan for ties) matches these
    perfectly before any push: no long augmenting path is left."""
    A = FAMILIES[name]()
    res = bipartite_matching(A, backend=backend)
    assert res.stats["initial_size"] == A.shape[0] == res.size
    assert res.stats["push_iterations"] == 0


def _corpus_params():
    out = [pytest.param(e, id=e["file"].split("/")[-1].replace(".mtx.gz", ""))
           for e in corpus_manifest() if e.get("kind") == "matching"]
    return out or [pytest.param(None, marks=pytest.mark.skip(reason="corpus not found"))]


@pytest.mark.gpu
@pytest.mark.parametrize("entry", _corpus_params())
def test_corpus_gpu_counts_within_numpy_multiple(corpus_dir, entry):
    """Every corpus matrix on the GPU: maximum, and within the bounds and a
    small multiple of the NumPy twin's counts (the NumPy runs of the corpus
    are bounded in test_matching.py)."""
    A = read_matrix_market(corpus_dir / entry["file"])
    solve_checked(A, "cupy", entry["max_matching_stored"])


# ---------------------------------------------------------------------------
# invariants of the push iteration under contention


def _contention_inputs():
    yield "hubs", hub_graph(seed=5)
    yield "rmat", generators.rmat(13, 8, seed=6)
    for e in corpus_manifest():
        if e.get("file", "").endswith("soc-slashdot0902-directed.mtx.gz"):
            yield "slashdot_directed", read_matrix_market(corpus_path() / e["file"])


@pytest.mark.parametrize("mode", ["slots", "dense"])
def test_push_iterations_keep_invariants(backend, mode):
    """After every claim + push iteration from an exact relabel of a greedy
    matching: the list holds distinct free columns, the rows' side of the
    matching is consistent, no column is lost (list + matched + dropped is
    constant) and the matched count never decreases."""
    for name, A in _contention_inputs():
        st = _driver.make_state(as_csr_graph(A, backend))
        kern = _driver.kernels_for(backend)
        kern.greedy_degree(st)
        kern.fix_matching(st)
        _, active = kern.relabel_collect(st)
        active = active.copy()
        if mode == "dense":
            kern.list_start(st, active)

        def counts(lst):
            mu_row, mu_col = host(st.mu_row), host(st.mu_col)
            lst = host(lst)
            lst = lst[lst >= 0]
            assert np.unique(lst).shape[0] == lst.shape[0], f"{name}: a column is listed twice"
            rows = np.flatnonzero(mu_row >= 0)
            assert np.array_equal(mu_col[mu_row[rows]], rows), f"{name}: rows' side inconsistent"
            matched = np.zeros(st.n, dtype=bool)
            matched[mu_row[rows]] = True
            assert not matched[lst].any(), f"{name}: a listed column is matched"
            return lst.shape[0], rows.shape[0], int((mu_col == -2).sum())

        n_list, n_matched, n_dropped = counts(active)
        total = n_list + n_matched + n_dropped
        for _ in range(12):
            if mode == "dense":
                kern.list_step(st)
                kern.list_length(st)
                lst = kern.list_array(st)
            else:
                nxt = kern.claim(st, active)
                kern.push(st, active, nxt)
                active = lst = nxt
            n_list, matched_now, n_dropped = counts(lst)
            assert matched_now >= n_matched, f"{name}: the matched count went down"
            assert n_list + matched_now + n_dropped == total, f"{name}: a column was lost"
            n_matched = matched_now
            if n_list == 0:
                break


# ---------------------------------------------------------------------------
# the hand-over to augmenting-path phases, and the watchdog


@pytest.mark.parametrize("name", ["bidiagonal_perm", "grid", "delaunay", "hubs", "rmat_directed"])
def test_forced_handover_is_maximum(backend, name, monkeypatch):
    monkeypatch.setattr(_driver, "STALL_WINDOW", 1)
    A = FAMILIES[name]()
    res = bipartite_matching(A, backend=backend, certificate=True)
    check_matching(A, host(res.col_to_row), expected_size=flow_size(A))
    s = res.stats
    hist = s["active_history"]
    if len(hist) > 1 or hist[0] > 0:
        # a window of one hands over at the second relabel unless the active count halved
        assert s["finished_by"] == "augmenting-paths" or all(2 * b <= a for a, b in zip(hist, hist[1:]))
    check_bounds(res)


def test_max_relabels_hands_over(backend, monkeypatch):
    monkeypatch.setattr(_driver, "CHAIN_RULE", None)   # it would match the chain before G-PR relabels
    A = generators.bidiagonal(3000, permute=True, seed=2)
    res = bipartite_matching(A, backend=backend)
    assert res.stats["global_relabels"] > 1
    st = _driver.make_state(as_csr_graph(A, backend))
    stats = _driver.run_gpr(st, max_relabels=1)
    # (on NumPy the phases of a ladder's tail go on to the compiled engine: HOST_FINISH_NUMPY)
    assert stats["finished_by"] in ("augmenting-paths", "host")
    assert "max_relabels=1" in stats["switch_reason"] and stats["global_relabels"] == 2
    check_matching(A, host(st.mu_col).astype(np.int64), expected_size=res.size)


def test_watchdog_raises_instead_of_looping(monkeypatch):
    """Augmenting phases that fail to converge within their proven bound
    (a bug) end in a RuntimeError naming the input, not in a hang."""
    monkeypatch.setattr(_augment, "augment", lambda st, max_phases=None, **kw: {
        "aug_converged": False, "aug_phases": max_phases, "aug_paths": 0})
    monkeypatch.setattr(_tail, "HOST_FINISH_NUMPY", None)   # the phases are under test, not the hand-over
    A = generators.bidiagonal(2000, permute=True, seed=3)
    st = _driver.make_state(as_csr_graph(A, "numpy"))
    with pytest.raises(RuntimeError, match=r"did not converge.*2000 x 2000 graph with 3999 entries"):
        _driver.run_gpr(st, max_relabels=1)


def test_stall_rule_and_bound():
    assert _driver._stall([100, 60, 40, 30, 20], 4, None) is None          # 20 <= 100 / 2
    assert "stall" in _driver._stall([100, 90, 80, 70, 60], 4, None)      # 60 > 100 / 2
    assert _driver._stall([100, 90, 80, 70, 60], None, None) is None      # watch off
    assert _driver._stall([5, 5], 4, None) is None                        # too few relabels yet
    assert "max_relabels=1" in _driver._stall([5, 5], 4, 1)
    # under the rule the active count halves every window: at most w * (log2 a1 + 2) relabels
    for a1 in (1, 2, 3, 1000, 10**6):
        hist, a = [a1], a1
        while a > 0 and _driver._stall(hist, 4, None) is None:
            # the slowest decline the rule allows: exactly half over each window
            a = hist[-4] // 2 if len(hist) >= 4 else a
            hist.append(a)
        assert len(hist) <= _driver.stall_bound(a1, 4)


@pytest.mark.gpu
def test_gpu_greedy_is_maximal_and_perfect_on_triangular():
    """The CAS greedy on the GPU: a consistent, maximal matching (no free
    column with a free row), perfect on triangular patterns (heavy columns
    use the warp scan: 400 > GPR_HEAVY entries)."""
    from gpumatch.matching import _kernels_cuda

    for A in (generators.triangular(400, permute=True, seed=7), generators.rmat(13, 8, seed=7),
              sp.csr_matrix(np.ones((200, 200)))):
        st = _driver.make_state(as_csr_graph(A, "cupy"))
        _kernels_cuda.greedy_degree(st)
        mu_row, mu_col = host(st.mu_row), host(st.mu_col)
        cols = np.flatnonzero(mu_col >= 0)
        assert np.array_equal(mu_row[mu_col[cols]], cols)
        assert (mu_row >= 0).sum() == cols.shape[0]
        C = sp.csc_matrix(A)
        for c in np.flatnonzero(mu_col < 0):
            assert (mu_row[C.indices[C.indptr[c]:C.indptr[c + 1]]] >= 0).all(), "greedy is not maximal"
        if A.shape == (400, 400) or A.shape == (200, 200):
            assert cols.shape[0] == A.shape[0]

"""Tests of the Dulmage–Mendelsohn decomposition and the block triangular form.

Every result is checked by properties (gpumatch.structure.check_dulmage_mendelsohn
and check_block_triangular: staircase, zero-free diagonals, König cover,
alternating reachability of the coarse sets, block upper triangular, each
square block one strongly connected component), never against a stored
permutation.  Small matrices are also compared with a slow reference written
here (its own matching from SciPy, Python searches, components by transitive
closure); the coarse sets and fine blocks are compared across different
maximum matchings, engines and backends.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm

import gpumatch
from conftest import corpus_manifest
from gpumatch import _backend, generators
from gpumatch._validation import as_csr_graph
from gpumatch.io import read_matrix_market
from gpumatch.matching import bipartite_matching
from gpumatch.structure import (BlockTriangularResult, DulmageMendelsohnResult, block_triangular_form,
                                check_block_triangular, check_dulmage_mendelsohn, dulmage_mendelsohn)
from gpumatch.structure import _dm, _scc, _scc_numpy


def host(a):
    return _backend.to_numpy(a)


def pattern(A):
    """CSR pattern of A with every stored entry (explicit zeros too) set to 1."""
    A = sp.csr_matrix(A, copy=True)
    A.sum_duplicates()
    A.data = np.ones(A.nnz, dtype=np.int8)
    return A


# ---------------------------------------------------------------------------
# the slow reference


def reference_dm(A):
    """Coarse sets and fine blocks of A, by a route independent of gpumatch:
    SciPy's Hopcroft-Karp matching, Python breadth-first searches, and the
    components of the square part by a transitive closure.  Small inputs only."""
    A = pattern(A)
    m, n = A.shape
    rows_of = [[] for _ in range(n)]
    cols_of = [A.indices[A.indptr[i]:A.indptr[i + 1]].tolist() for i in range(m)]
    for i in range(m):
        for j in cols_of[i]:
            rows_of[j].append(i)
    if A.nnz and m and n:
        row_to_col = scipy_mbm(A, perm_type="column").tolist()
    else:
        row_to_col = [-1] * m
    col_to_row = [-1] * n
    for i, j in enumerate(row_to_col):
        if j >= 0:
            col_to_row[j] = i

    def search(starts, adjacent, mate):
        seen = set(starts)
        queue = collections.deque(starts)
        other = set()
        while queue:
            x = queue.popleft()
            for y in adjacent[x]:
                other.add(y)
                z = mate[y]
                assert z >= 0, "reference matching is not maximum"
                if z not in seen:
                    seen.add(z)
                    queue.append(z)
        return seen, other

    c0 = [j for j in range(n) if col_to_row[j] < 0]
    r0 = [i for i in range(m) if row_to_col[i] < 0]
    cols01, rows1 = search(c0, rows_of, row_to_col)
    rows03, cols3 = search(r0, cols_of, col_to_row)
    R1, C3 = set(rows1), set(cols3)
    C1 = cols01 - set(c0)
    R3 = rows03 - set(r0)
    R2 = set(range(m)) - R1 - R3 - set(r0)
    C2 = set(range(n)) - cols01 - C3
    # fine: transitive closure of the pairs' graph
    nodes = sorted(R2)
    k = len(nodes)
    where = {i: t for t, i in enumerate(nodes)}
    reach = np.eye(k, dtype=bool)
    for t, i in enumerate(nodes):
        for j in cols_of[i]:
            if j in C2:
                reach[t, where[col_to_row[j]]] = True
    while True:
        nxt = reach | ((reach.astype(np.int32) @ reach.astype(np.int32)) > 0)
        if (nxt == reach).all():
            break
        reach = nxt
    mutual = reach & reach.T
    blocks = set()
    for t in range(k):
        rows = frozenset(nodes[u] for u in np.flatnonzero(mutual[t]))
        blocks.add((rows, frozenset(row_to_col[i] for i in rows)))
    return {"R1": R1, "R2": R2, "R3": R3, "R0": set(r0), "C0": set(c0), "C1": C1, "C2": C2, "C3": C3,
            "blocks": blocks, "rank": sum(1 for j in row_to_col if j >= 0)}


def sets_of(dm):
    """Coarse sets and square fine blocks of a result, as Python sets."""
    p, q = host(dm.p).tolist(), host(dm.q).tolist()
    rr, cc = host(dm.rr).tolist(), host(dm.cc).tolist()
    r, s = host(dm.r).tolist(), host(dm.s).tolist()
    out = {"R1": set(p[rr[0]:rr[1]]), "R2": set(p[rr[1]:rr[2]]), "R3": set(p[rr[2]:rr[3]]),
           "R0": set(p[rr[3]:rr[4]]), "C0": set(q[cc[0]:cc[1]]), "C1": set(q[cc[1]:cc[2]]),
           "C2": set(q[cc[2]:cc[3]]), "C3": set(q[cc[3]:cc[4]])}
    blocks = set()
    for t in range(len(r) - 1):
        if rr[1] <= r[t] and r[t + 1] <= rr[2] and cc[2] <= s[t] and s[t + 1] <= cc[3] and r[t + 1] > r[t]:
            blocks.add((frozenset(p[r[t]:r[t + 1]]), frozenset(q[s[t]:s[t + 1]])))
    out["blocks"] = blocks
    return out


def assert_same_decomposition(a, b):
    """Same unique sets: R1, R2, R3 ∪ R0, C0 ∪ C1, C2, C3 and the square blocks.
    (Which rows of R3 ∪ R0 and which columns of C0 ∪ C1 are the unmatched
    ones depends on the matching; only their counts do not.)"""
    for key in ("R1", "R2", "C2", "C3", "blocks"):
        assert a[key] == b[key], f"{key} differs"
    assert a["R3"] | a["R0"] == b["R3"] | b["R0"], "R3 | R0 differs"
    assert a["C0"] | a["C1"] == b["C0"] | b["C1"], "C0 | C1 differs"
    for key in ("R0", "C0"):
        assert len(a[key]) == len(b[key]), f"|{key}| differs"


def small_inputs():
    """(name, matrix) pairs: rectangular, singular, empty, explicit zeros, chains."""
    rng = np.random.default_rng(7)
    out = []
    for t, (m, n, d) in enumerate([(30, 30, 1.0), (30, 30, 2.0), (40, 25, 1.5), (25, 40, 1.5), (60, 60, 3.0),
                                   (50, 50, 1.2), (12, 70, 2.0), (70, 12, 2.0)]):
        out.append((f"random_{m}x{n}_d{d}", generators.random_bipartite(m, n, d, seed=t)))
    out.append(("triangular_perm", generators.triangular(25, permute=True, seed=3)))
    out.append(("lower_triangular", generators.triangular(20, lower=True)))
    out.append(("bidiagonal_perm", generators.bidiagonal(40, permute=True, seed=2)))
    out.append(("grid_6x7_drop", generators.grid(6, 7, drop=0.3, seed=1)))
    out.append(("delaunay_60", generators.delaunay(60, seed=4)))
    out.append(("rmat_6", generators.rmat(6, 3, seed=2)))
    blocks = sp.block_diag([sp.coo_matrix(np.ones((3, 3))), np.ones((1, 4)), np.ones((4, 1)), np.eye(3)])
    out.append(("block_diag_mixed", sp.csr_matrix(blocks)))
    Z = sp.random(30, 30, density=0.08, format="csr", random_state=rng)
    Z.data[::3] = 0.0                                  # explicit zeros are entries
    out.append(("explicit_zeros", Z))
    out.append(("empty_rows_cols", sp.csr_matrix(([1.0, 1.0, 1.0], ([0, 0, 4], [1, 3, 3])), shape=(6, 5))))
    out.append(("all_zero_pattern", sp.csr_matrix((5, 4))))
    out.append(("zero_by_three", sp.csr_matrix((0, 3))))
    out.append(("three_by_zero", sp.csr_matrix((3, 0))))
    out.append(("zero_by_zero", sp.csr_matrix((0, 0))))
    return out


SMALL = small_inputs()


# ---------------------------------------------------------------------------
# small inputs: properties, reference, engines, matchings


@pytest.mark.parametrize("name,A", SMALL, ids=[s[0] for s in SMALL])
def test_small_against_reference(name, A):
    dm = dulmage_mendelsohn(A, backend="numpy")
    ref = reference_dm(A)
    cert = check_dulmage_mendelsohn(A, dm, expected_rank=ref["rank"])
    assert_same_decomposition(sets_of(dm), ref)
    assert cert.square_blocks == len(ref["blocks"])
    assert isinstance(dm, DulmageMendelsohnResult)
    for a in (dm.p, dm.q, dm.r, dm.s, dm.rr, dm.cc):
        assert isinstance(a, np.ndarray) and a.dtype == np.int32


ENGINES = [("scipy", "tarjan"), ("scipy", "fwbw"), ("gpr", "tarjan"), ("gpr", "fwbw")]


@pytest.mark.parametrize("reach,scc", ENGINES)
@pytest.mark.parametrize("name,A", SMALL, ids=[s[0] for s in SMALL])
def test_engines_agree(name, A, reach, scc):
    """Every engine pair (host or device-style searches; Tarjan or trim +
    forward-backward, forced to run its rounds: host_finish=0) gives the
    same decomposition; the device-style ones run their NumPy twins here."""
    g = as_csr_graph(A, "numpy")
    res = bipartite_matching(A, backend="numpy")
    opts = {"host_finish": 0} if scc == "fwbw" else None
    dm = _dm._decompose(g, res.row_to_col, res.col_to_row, reach=reach, scc=scc, scc_options=opts)
    check_dulmage_mendelsohn(A, dm, expected_rank=res.size)
    assert_same_decomposition(sets_of(dm), reference_dm(A))


@pytest.mark.parametrize("tall", [True, False])
def test_deep_device_search_is_exact(tall):
    """A chain with one free vertex at its end, beside a perfectly matched
    ladder: the device-style search from the free vertex runs past G-PR's
    ``REACH_CHECK`` depth with no free vertex of the other side to find,
    where the matching's relabel stops early and gives the rest of the graph
    lower-bound labels; the ladder must not count as reached."""
    n, k = 1500, 400
    chain = generators.staircase(n, n + 1, width=2)
    A = sp.block_diag([chain.T if tall else chain, generators.bidiagonal(k, permute=True, seed=10)], format="csr")
    g = as_csr_graph(A, "numpy")
    res = bipartite_matching(A, backend="numpy")
    dm = _dm._decompose(g, res.row_to_col, res.col_to_row, reach="gpr", scc="tarjan")
    check_dulmage_mendelsohn(A, dm, expected_rank=res.size)
    assert_same_decomposition(sets_of(dm), reference_dm(A))


@pytest.mark.gpu
@pytest.mark.parametrize("tall", [True, False])
def test_deep_device_search_is_exact_on_the_gpu(tall):
    n, k = 1500, 400
    chain = generators.staircase(n, n + 1, width=2)
    A = sp.block_diag([chain.T if tall else chain, generators.bidiagonal(k, permute=True, seed=10)], format="csr")
    dm = dulmage_mendelsohn(A, backend="cupy")
    assert dm.stats["reach"] == "gpr"
    check_dulmage_mendelsohn(A, dm)
    assert_same_decomposition(sets_of(dm), reference_dm(A))


def _matchings(A):
    """Several maximum matchings of A: G-PR from different initial matchings
    and warm starts, and SciPy's Hopcroft-Karp."""
    m, n = A.shape
    out = []
    for init in ("greedy", "karp_sipser", "none"):
        r = bipartite_matching(A, backend="numpy", init=init)
        out.append((r.row_to_col, r.col_to_row))
    rng = np.random.default_rng(0)
    P = pattern(A).tocoo()
    for _ in range(2):   # a random maximal matching as the warm start
        start = np.full(n, -1, dtype=np.int64)
        taken = np.zeros(m, dtype=bool)
        for e in rng.permutation(P.nnz):
            i, j = P.row[e], P.col[e]
            if start[j] < 0 and not taken[i]:
                start[j], taken[i] = i, True
        r = bipartite_matching(A, backend="numpy", initial=start, init="none")
        out.append((r.row_to_col, r.col_to_row))
    if P.nnz:
        rtc = scipy_mbm(pattern(A), perm_type="column").astype(np.int64)
        ctr = np.full(n, -1, dtype=np.int64)
        ctr[rtc[rtc >= 0]] = np.flatnonzero(rtc >= 0)
        out.append((rtc, ctr))
    return out


MATCHING_CASES = [("rect_tall", generators.random_bipartite(300, 200, 1.5, seed=11)),
                  ("rect_wide", generators.random_bipartite(150, 260, 1.8, seed=12)),
                  ("square_singular", generators.random_bipartite(250, 250, 1.3, seed=13)),
                  ("grid_drop", generators.grid(15, 16, drop=0.25, seed=5)),
                  ("rmat", generators.rmat(8, 4, seed=6))]


@pytest.mark.parametrize("name,A", MATCHING_CASES, ids=[c[0] for c in MATCHING_CASES])
def test_independent_of_the_matching(name, A):
    """The coarse sets and the fine blocks (as sets) do not depend on which
    maximum matching the decomposition starts from."""
    g = as_csr_graph(A, "numpy")
    results = []
    distinct = set()
    for rtc, ctr in _matchings(A):
        distinct.add(np.asarray(ctr).tobytes())
        dm = _dm._decompose(g, rtc, ctr)
        check_dulmage_mendelsohn(A, dm)
        results.append(sets_of(dm))
    assert len(distinct) >= 2, "the matchings used are all the same: the test would prove nothing"
    for other in results[1:]:
        assert_same_decomposition(results[0], other)


def test_coarse_sets_are_the_reachability_sets():
    """The coarse sets equal the alternating reachability sets computed here
    with a plain search from a different maximum matching (SciPy's)."""
    A = generators.random_bipartite(400, 350, 1.6, seed=21)
    ref = reference_dm(A)
    got = sets_of(dulmage_mendelsohn(A, backend="numpy"))
    assert got["C0"] | got["C1"] == ref["C0"] | ref["C1"]
    assert got["R3"] | got["R0"] == ref["R3"] | ref["R0"]
    assert got["C0"] and got["R0"] and got["C1"] and got["R3"]


# ---------------------------------------------------------------------------
# generated inputs of moderate size (rectangular and singular)

GENERATED = [
    ("random_rect_tall", lambda: generators.random_bipartite(20_000, 12_000, 2.0, seed=1)),
    ("random_rect_wide", lambda: generators.random_bipartite(9_000, 15_000, 2.5, seed=2)),
    ("random_square_singular", lambda: generators.random_bipartite(20_000, 20_000, 1.5, seed=3)),
    ("random_square_d5", lambda: generators.random_bipartite(20_000, 20_000, 5, seed=4)),
    ("delaunay_5k", lambda: generators.delaunay(5_000, seed=5)),
    ("grid_80_drop", lambda: generators.grid(80, 90, drop=0.1, seed=6)),
    ("rmat_12", lambda: generators.rmat(12, 8, seed=7)),
    ("triangular_perm_300", lambda: generators.triangular(300, permute=True, seed=8)),
    ("bidiagonal_perm_2000", lambda: generators.bidiagonal(2_000, permute=True, seed=9)),
]


@pytest.mark.parametrize("name,make", GENERATED, ids=[g[0] for g in GENERATED])
def test_generated(name, make):
    A = make()
    dm = dulmage_mendelsohn(A, backend="numpy")
    rank = int((scipy_mbm(pattern(A), perm_type="row") >= 0).sum()) if "grid" not in name and \
        "delaunay" not in name else None
    cert = check_dulmage_mendelsohn(A, dm, expected_rank=rank)
    assert cert.structural_rank == dm.structural_rank == gpumatch.structural_rank(A, backend="numpy")
    # the device-style components (NumPy twins) give the same blocks, with and without the host finish
    g = as_csr_graph(A, "numpy")
    res = bipartite_matching(A, backend="numpy")
    for opts in ({"host_finish": 0}, {"host_finish": 0, "max_levels": 3}, {"host_finish": 0, "max_rounds": 1}):
        other = _dm._decompose(g, res.row_to_col, res.col_to_row, reach="gpr", scc="fwbw", scc_options=opts)
        check_dulmage_mendelsohn(A, other)
        assert sets_of(other)["blocks"] == sets_of(dm)["blocks"]


def test_fine_blocks_count_the_components():
    """The number of square fine blocks is the SCC count of the square part's
    graph (computed here from the permuted matrix with SciPy)."""
    A = generators.random_bipartite(3000, 3000, 2.2, seed=17)
    dm = dulmage_mendelsohn(A, backend="numpy")
    rr, cc = host(dm.rr), host(dm.cc)
    B = pattern(A)[host(dm.p)][:, host(dm.q)]
    S = B[rr[1]:rr[2], cc[2]:cc[3]]
    ncomp = connected_components(S, directed=True, connection="strong")[0] if S.shape[0] else 0
    assert ncomp == len(sets_of(dm)["blocks"]) > 1
    assert (S.diagonal() != 0).all()


def test_explicit_zeros_count():
    # a stored zero on the diagonal: nonsingular with stored entries, singular without
    A = sp.csr_matrix((np.array([1.0, 0.0, 1.0]), (np.array([0, 1, 1]), np.array([0, 1, 0]))), shape=(2, 2))
    dm = dulmage_mendelsohn(A, backend="numpy")
    assert dm.structural_rank == 2 and host(dm.cc).tolist() == [0, 0, 0, 2, 2]
    B = A.copy()
    B.eliminate_zeros()
    dz = dulmage_mendelsohn(B, backend="numpy")
    assert dz.structural_rank == 1
    check_dulmage_mendelsohn(B, dz, expected_rank=1)
    assert host(dz.rr).tolist() == [0, 0, 0, 1, 2] and host(dz.cc).tolist() == [0, 1, 1, 1, 2]


def test_inputs_and_outputs():
    A = generators.random_bipartite(200, 150, 2.0, seed=3)
    ref = sets_of(dulmage_mendelsohn(A, backend="numpy"))
    for form in (A.tocsc(), A.tocoo(), sp.csr_array(A), (A.indptr, A.indices, A.shape)):
        assert_same_decomposition(sets_of(dulmage_mendelsohn(form, backend="numpy")), ref)
    dm = dulmage_mendelsohn(A, backend="numpy")
    text = repr(dm)
    assert text.startswith("DulmageMendelsohnResult(shape=(200, 150)") and "structural_rank=" in text
    summary = dm.summary()
    assert "horizontal" in summary and "square" in summary and "vertical" in summary
    sizes = dm.coarse_sizes()
    assert sizes["R1"] + sizes["R2"] + sizes["R3"] + sizes["R0"] == 200
    assert sizes["C0"] + sizes["C1"] + sizes["C2"] + sizes["C3"] == 150
    assert dm.nblocks == len(dm.r) - 1 == len(dm.s) - 1
    assert dm.stats["backend"] == "numpy" and dm.stats["reach"] == "scipy" and dm.stats["scc"] == "tarjan"
    for key in ("time_matching", "time_coarse", "time_fine", "time_assemble", "time_total"):
        assert dm.stats[key] >= 0


def test_errors():
    with pytest.raises(TypeError, match="sparse"):
        dulmage_mendelsohn(np.eye(3), backend="numpy")
    with pytest.raises(ValueError, match="backend"):
        dulmage_mendelsohn(sp.eye(3, format="csr"), backend="fortran")
    with pytest.raises(ValueError, match="square"):
        block_triangular_form(sp.csr_matrix((3, 4)), backend="numpy")
    with pytest.raises(ValueError, match="reach"):
        _dm._decompose(as_csr_graph(sp.eye(2, format="csr"), "numpy"), np.arange(2), np.arange(2), reach="x")


def test_exports():
    for name in ("dulmage_mendelsohn", "block_triangular_form", "DulmageMendelsohnResult", "BlockTriangularResult"):
        assert name in gpumatch.__all__ and hasattr(gpumatch, name)
    assert gpumatch.dulmage_mendelsohn is dulmage_mendelsohn


# ---------------------------------------------------------------------------
# the checker rejects what is wrong


def test_checker_rejects_broken_results():
    A = generators.random_bipartite(300, 300, 1.6, seed=19)
    dm = dulmage_mendelsohn(A, backend="numpy")
    check_dulmage_mendelsohn(A, dm)

    def broken(**kw):
        fields = {k: getattr(dm, k) for k in ("p", "q", "r", "s", "rr", "cc", "structural_rank", "nblocks",
                                               "shape", "stats")}
        fields.update(kw)
        return DulmageMendelsohnResult(**fields)

    p = dm.p.copy()
    p[[0, -1]] = p[[-1, 0]]
    with pytest.raises(AssertionError):
        check_dulmage_mendelsohn(A, broken(p=p))
    r, s = dm.r.copy(), dm.s.copy()
    mid = np.flatnonzero((np.diff(r) == 1) & (np.arange(len(r) - 1) > 0))[:2]
    merged_r, merged_s = np.delete(r, mid[1]), np.delete(s, mid[1])     # two singletons as one block
    with pytest.raises(AssertionError):
        check_dulmage_mendelsohn(A, broken(r=merged_r, s=merged_s, nblocks=len(merged_r) - 1))
    with pytest.raises(AssertionError, match="rank"):
        check_dulmage_mendelsohn(A, dm, expected_rank=dm.structural_rank + 1)
    # a coarse set that is too small: move a reachable column of C1 to C2
    rr, cc = dm.rr.copy(), dm.cc.copy()
    if rr[1] > 0:
        bad = broken(rr=np.array([0, rr[1] - 1, *rr[2:]]), cc=np.array([0, cc[1], cc[2] - 1, *cc[3:]]),
                     r=np.array([0, rr[1] - 1, *r[1:]]), s=np.array([0, cc[2] - 1, *s[1:]]))
        with pytest.raises(AssertionError):
            check_dulmage_mendelsohn(A, bad)


# ---------------------------------------------------------------------------
# block triangular form


@pytest.mark.parametrize("name,A", [s for s in SMALL if s[1].shape[0] == s[1].shape[1]],
                         ids=[s[0] for s in SMALL if s[1].shape[0] == s[1].shape[1]])
def test_btf_small(name, A):
    btf = block_triangular_form(A, backend="numpy")
    ref = reference_dm(A)
    check_block_triangular(A, btf, expected_rank=ref["rank"])
    assert isinstance(btf, BlockTriangularResult)
    if ref["rank"] == A.shape[0]:
        # nonsingular: the blocks are the fine Dulmage-Mendelsohn blocks
        p, q, r = host(btf.p).tolist(), host(btf.q).tolist(), host(btf.r).tolist()
        blocks = {(frozenset(p[r[t]:r[t + 1]]), frozenset(q[r[t]:r[t + 1]])) for t in range(len(r) - 1)}
        assert blocks == ref["blocks"]


@pytest.mark.parametrize("scc,opts", [("tarjan", None), ("fwbw", {"host_finish": 0}),
                                      ("fwbw", {"host_finish": 0, "max_levels": 2})])
def test_btf_engines(scc, opts):
    for A in (generators.random_bipartite(3000, 3000, 4, seed=2), generators.triangular(200, permute=True, seed=1),
              generators.random_bipartite(2000, 2000, 1.4, seed=3), generators.grid(40, 41, drop=0.2, seed=2)):
        g = as_csr_graph(A, "numpy")
        res = bipartite_matching(A, backend="numpy")
        btf = _dm._btf(g, res.row_to_col, res.col_to_row, scc=scc, scc_options=opts)
        check_block_triangular(A, btf, expected_rank=res.size)


def test_btf_singular_diagonal():
    A = generators.random_bipartite(500, 500, 1.5, seed=4)
    btf = block_triangular_form(A, backend="numpy")
    rank = gpumatch.structural_rank(A, backend="numpy")
    assert btf.structural_rank == rank < 500
    cert = check_block_triangular(A, btf, expected_rank=rank)
    assert cert.nblocks == btf.nblocks
    assert "BlockTriangularResult(shape=(500, 500)" in repr(btf)


# ---------------------------------------------------------------------------
# the components step on its own


def _random_digraph(k, arcs, seed, chain=False):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, arcs)
    b = rng.integers(0, k, arcs)
    if chain:
        a = np.concatenate([a, np.arange(k - 1)])
        b = np.concatenate([b, np.arange(1, k)])
    G = sp.csr_matrix((np.ones(a.shape[0]), (a, b)), shape=(k, k))
    G.sum_duplicates()
    return G.indptr.astype(np.int32), G.indices.astype(np.int32)


DIGRAPHS = [(k, arcs, chain) for k, arcs, chain in
            [(1, 0, False), (2, 1, False), (50, 40, False), (200, 150, False), (200, 260, False),
             (500, 600, False), (400, 2000, False), (300, 50, True), (1000, 0, True), (2000, 1500, False)]]


@pytest.mark.parametrize("k,arcs,chain", DIGRAPHS)
@pytest.mark.parametrize("opts", [{"host_finish": 0}, {"host_finish": 0, "max_levels": 4},
                                  {"host_finish": 0, "max_rounds": 2}, {"host_finish": 50}, {}])
def test_fwbw_matches_tarjan(k, arcs, chain, opts):
    ptr, ind = _random_digraph(k, arcs, seed=k + arcs, chain=chain)
    b1, n1, s1 = _scc.tarjan_scc(ptr, ind, k)
    b2, n2, s2 = _scc.fwbw_scc(ptr, ind, k, **opts)
    assert s1["scc_order"] == "reversed labels"      # SciPy still labels components as they finish
    assert n1 == n2
    assert _scc.check_block_order(b1, ptr, ind) and _scc.check_block_order(b2, ptr, ind)
    # same partition: the pair (b1, b2) is a bijection
    pairs = set(zip(b1.tolist(), b2.tolist()))
    assert len(pairs) == n1


def test_fwbw_key_compaction():
    """Many trim passes and rounds overflow the base-4 keys: they are compacted, order kept."""
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 3000, (2, 6000))
    a, b = np.minimum(a, b), np.maximum(a, b)          # a DAG: every node is a component, many trim passes
    G = sp.csr_matrix((np.ones(a.shape[0]), (a, b)), shape=(3000, 3000))
    G.setdiag(0)
    G.eliminate_zeros()
    ptr, ind = G.indptr, G.indices
    old = _scc._MAX_DIGITS
    try:
        _scc._MAX_DIGITS = 3
        b, nb, st = _scc.fwbw_scc(ptr, ind, 3000, host_finish=0)
    finally:
        _scc._MAX_DIGITS = old
    assert st["compactions"] > 0
    ref, nref, _ = _scc.tarjan_scc(ptr, ind, 3000)
    assert nb == nref and _scc.check_block_order(b, ptr, ind)


def test_topological_levels_fallback():
    ptr, ind = _random_digraph(400, 500, seed=3)
    G = sp.csr_matrix((np.ones(ind.shape[0]), ind, ptr), shape=(400, 400))
    ncomp, labels = connected_components(G, directed=True, connection="strong")
    shuffled = np.random.default_rng(0).permutation(ncomp)[labels]     # labels in no particular order
    pos = _scc.topological_levels(ncomp, shuffled, ptr, ind)
    assert sorted(pos.tolist()) == list(range(ncomp))
    assert _scc.check_block_order(pos[shuffled], ptr, ind)


def test_numpy_twins():
    ptr, ind = _random_digraph(300, 400, seed=8)
    st = _scc.SCCState(k=300, xp=np, fptr=ptr, find=ind, bptr=None, bind=None,
                       key=np.zeros(300, dtype=np.int64), done=np.zeros(300, dtype=bool))
    st.bptr, st.bind = gpumatch.csr.transpose(ptr, ind, 300)
    cls, count = _scc_numpy.trim(st)
    indeg = np.bincount(ind[ind != np.repeat(np.arange(300), np.diff(ptr))], minlength=300)
    assert count == int(((cls == 0) | (cls == 2)).sum())
    assert ((cls == 0) == (indeg == 0)).all()
    mark, levels, complete = _scc_numpy.reach(st, np.array([0]), 10_000)
    G = sp.csr_matrix((np.ones(ind.shape[0]), ind, ptr), shape=(300, 300))
    from scipy.sparse.csgraph import breadth_first_order
    fw = np.zeros(300, dtype=bool)
    fw[breadth_first_order(G, 0, directed=True, return_predecessors=False)] = True
    bw = np.zeros(300, dtype=bool)
    bw[breadth_first_order(G.T.tocsr(), 0, directed=True, return_predecessors=False)] = True
    assert complete and (((mark & 1) != 0) == fw).all() and (((mark & 2) != 0) == bw).all()


# ---------------------------------------------------------------------------
# the corpus (CPU in CI; the GPU run below)


def _corpus_entries():
    return [e for e in corpus_manifest() if e.get("kind") == "matching"]


def _corpus_params(gpu):
    out = [pytest.param(e, marks=[pytest.mark.gpu] if gpu else [],
                        id=e["file"].split("/")[-1].replace(".mtx.gz", "")) for e in _corpus_entries()]
    return out or [pytest.param(None, marks=pytest.mark.skip(reason="corpus not found"))]


def _run_corpus(corpus_dir, entry, backend):
    A = read_matrix_market(corpus_dir / entry["file"])
    if backend == "cupy":
        import cupyx.scipy.sparse as cpx

        dm = dulmage_mendelsohn(cpx.csr_matrix(sp.csr_matrix(A, dtype=np.float64)), backend="cupy")  # float: cupyx
        assert _backend.is_cupy_array(dm.p)
    else:
        dm = dulmage_mendelsohn(A, backend=backend)
    check_dulmage_mendelsohn(A, dm, expected_rank=entry["max_matching_stored"])
    if entry["nnz_stored"] <= 60_000 and backend == "numpy":
        # a second maximum matching and the device-style engines (NumPy twins) give the same sets
        g = as_csr_graph(A, "numpy")
        res = bipartite_matching(A, backend="numpy", init="none")
        other = _dm._decompose(g, res.row_to_col, res.col_to_row, reach="gpr", scc="fwbw",
                               scc_options={"host_finish": 0})
        assert_same_decomposition(sets_of(other), sets_of(dm))
    return dm


@pytest.mark.parametrize("entry", _corpus_params(gpu=False))
def test_corpus_numpy(corpus_dir, entry):
    _run_corpus(corpus_dir, entry, "numpy")


@pytest.mark.parametrize("entry", _corpus_params(gpu=True))
def test_corpus_cupy(corpus_dir, entry):
    dm = _run_corpus(corpus_dir, entry, "cupy")
    ref = dulmage_mendelsohn(read_matrix_market(corpus_dir / entry["file"]), backend="numpy")
    assert_same_decomposition(sets_of(dm), sets_of(ref))


def test_corpus_explicit_zeros(corpus_dir):
    entry = next((e for e in _corpus_entries() if e["file"].endswith("test_FW_1000.mtx.gz")), None)
    if entry is None:
        pytest.skip("lagraph__test_FW_1000 not in the corpus")
    A = read_matrix_market(corpus_dir / entry["file"])
    dm = dulmage_mendelsohn(A, backend="numpy")
    check_dulmage_mendelsohn(A, dm, expected_rank=entry["max_matching_stored"])
    B = A.copy()
    B.eliminate_zeros()
    dz = dulmage_mendelsohn(B, backend="numpy")
    check_dulmage_mendelsohn(B, dz, expected_rank=entry["max_matching_nonzero"])
    assert dm.structural_rank == 1000 and dz.structural_rank == 500


def test_corpus_btf_square(corpus_dir):
    """The block triangular form of every square corpus matrix up to 200k entries."""
    done = 0
    for entry in _corpus_entries():
        m, n = entry["shape"]
        if m != n or entry["nnz_stored"] > 200_000:
            continue
        A = read_matrix_market(corpus_dir / entry["file"])
        check_block_triangular(A, block_triangular_form(A, backend="numpy"),
                               expected_rank=entry["max_matching_stored"])
        done += 1
    assert done > 10


# ---------------------------------------------------------------------------
# GPU: the CUDA kernels against their NumPy twins, and the public functions


@pytest.mark.gpu
def test_gpu_kernels_match_twins():
    cp = _backend.cp
    from gpumatch.structure import _scc_cuda

    for k, arcs, chain in DIGRAPHS:
        ptr, ind = _random_digraph(k, arcs, seed=k, chain=chain)
        bptr, bind = gpumatch.csr.transpose(ptr, ind, k)
        rng = np.random.default_rng(k)
        key = rng.integers(0, 3, k).astype(np.int64)
        done = rng.random(k) < 0.2
        hst = _scc.SCCState(k=k, xp=np, fptr=ptr, find=ind, bptr=bptr, bind=bind, key=key, done=done)
        dst = _scc.SCCState(k=k, xp=cp, fptr=cp.asarray(ptr), find=cp.asarray(ind), bptr=cp.asarray(bptr),
                            bind=cp.asarray(bind), key=cp.asarray(key), done=cp.asarray(done))
        c1, n1 = _scc_numpy.trim(hst)
        c2, n2 = _scc_cuda.trim(dst)
        assert n1 == n2 and np.array_equal(c1, host(c2))
        act = np.flatnonzero(~done)
        if act.shape[0]:
            piv = np.unique(act[np.unique(key[act], return_index=True)[1]])
            m1, _, ok1 = _scc_numpy.reach(hst, piv, 10**6)
            m2, _, ok2 = _scc_cuda.reach(dst, cp.asarray(piv), 10**6)
            assert ok1 and ok2 and np.array_equal(m1, host(m2))


@pytest.mark.gpu
@pytest.mark.parametrize("opts", [{}, {"host_finish": 0}, {"host_finish": 0, "max_levels": 4}])
def test_gpu_fwbw(opts):
    cp = _backend.cp
    for k, arcs, chain in DIGRAPHS + [(200_000, 400_000, False), (100_000, 20_000, True)]:
        ptr, ind = _random_digraph(k, arcs, seed=k + 1, chain=chain)
        b1, n1, _ = _scc.tarjan_scc(ptr, ind, k)
        b2, n2, _ = _scc.fwbw_scc(cp.asarray(ptr), cp.asarray(ind), k, **opts)
        b2 = host(b2)
        assert n1 == n2 and _scc.check_block_order(b2, ptr, ind)
        assert len(set(zip(b1.tolist(), b2.tolist()))) == n1


@pytest.mark.gpu
@pytest.mark.parametrize("name,A", SMALL, ids=[s[0] for s in SMALL])
def test_gpu_small(name, A):
    import cupyx.scipy.sparse as cpx

    ref = reference_dm(A)
    dm = dulmage_mendelsohn(A, backend="cupy")                 # SciPy in: NumPy out
    assert isinstance(dm.p, np.ndarray)
    check_dulmage_mendelsohn(A, dm, expected_rank=ref["rank"])
    assert_same_decomposition(sets_of(dm), ref)
    if A.shape[0] and A.shape[1]:
        dg = dulmage_mendelsohn(cpx.csr_matrix(sp.csr_matrix(A, dtype=np.float64)), backend="cupy")
        assert _backend.is_cupy_array(dg.p) and _backend.is_cupy_array(dg.r)
        assert dg.stats["reach"] == "gpr" and dg.stats["scc"] == "fwbw"
        assert_same_decomposition(sets_of(dg), ref)
    if A.shape[0] == A.shape[1]:
        check_block_triangular(A, block_triangular_form(A, backend="cupy"), expected_rank=ref["rank"])


@pytest.mark.gpu
@pytest.mark.parametrize("name,make", GENERATED, ids=[g[0] for g in GENERATED])
def test_gpu_generated(name, make):
    A = make()
    ref = dulmage_mendelsohn(A, backend="numpy")
    dm = dulmage_mendelsohn(A, backend="cupy")
    check_dulmage_mendelsohn(A, dm, expected_rank=ref.structural_rank)
    assert_same_decomposition(sets_of(dm), sets_of(ref))
    if A.shape[0] == A.shape[1]:
        check_block_triangular(A, block_triangular_form(A, backend="cupy"), expected_rank=ref.structural_rank)


# ---------------------------------------------------------------------------
# command line: gpumatch dm


def test_cli_dm(tmp_path, capsys):
    import scipy.io

    from gpumatch.cli import main

    A = generators.random_bipartite(120, 90, 1.8, seed=2)
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(str(path), A)
    assert main(["dm", str(path), "--backend", "numpy", "--blocks", "3"]) == 0
    out = capsys.readouterr().out
    dm = dulmage_mendelsohn(A, backend="numpy")
    c = dm.coarse_sizes()
    assert f"structural rank {dm.structural_rank}" in out
    assert f"horizontal (underdetermined): {c['R1']} x {c['C0'] + c['C1']}" in out
    assert f"vertical (overdetermined):    {c['R3'] + c['R0']} x {c['C3']}" in out
    assert f"fine blocks: {dm.nblocks} in all" in out
    # explicit zeros: --nonzero drops them
    Z = sp.coo_matrix((np.array([1.0, 0.0, 1.0]), (np.array([0, 1, 1]), np.array([0, 1, 0]))), shape=(2, 2))
    zpath = tmp_path / "z.mtx"
    scipy.io.mmwrite(str(zpath), Z)
    assert main(["dm", str(zpath), "--backend", "numpy"]) == 0
    assert "structural rank 2 (structurally nonsingular)" in capsys.readouterr().out
    assert main(["dm", str(zpath), "--backend", "numpy", "--nonzero"]) == 0
    assert "structural rank 1" in capsys.readouterr().out
    assert main(["dm", str(tmp_path / "missing.mtx")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["dm", str(path), "--blocks", "-1"]) == 2   # bad usage and bad input exit 2


# ---------------------------------------------------------------------------
# the example


def _example():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "dm_blocks.py"
    spec = importlib.util.spec_from_file_location("gpumatch_example_dm_blocks", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_generated(capsys, tmp_path, monkeypatch):
    import sys

    mod = _example()
    assert mod.__doc__ and callable(mod.main)
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # as if matplotlib were not installed
    out = mod.main(["--generate", "--backend", "numpy", "--out", str(tmp_path / "b.png")])
    text = capsys.readouterr().out
    assert out["output"] is None and "matplotlib is not installed" in text
    dm, A = out["result"], out["matrix"]
    check_dulmage_mendelsohn(A, dm)
    c = dm.coarse_sizes()
    # the generated matrix has all three parts and its twelve irreducible blocks come back
    assert c["C0"] == 40 and c["R0"] == 50 and c["R1"] == 50 and c["C3"] == 60
    assert out["certificate"].square_blocks == 12
    assert sorted(dm.square_block_sizes().tolist()) == sorted([40, 25, 3, 60, 1, 12, 30, 1, 8, 45, 2, 20])
    assert "square irreducible blocks: 12" in text


def test_example_default_and_file(capsys, tmp_path):
    import scipy.io

    mod = _example()
    out = mod.main(["--backend", "numpy", "--no-plot"])       # west0479 from the corpus, or generated
    check_dulmage_mendelsohn(out["matrix"], out["result"])
    path = tmp_path / "z.mtx"
    Z = sp.coo_matrix((np.array([1.0, 0.0, 1.0]), (np.array([0, 1, 1]), np.array([0, 1, 0]))), shape=(2, 2))
    scipy.io.mmwrite(str(path), Z)
    assert mod.main([str(path), "--backend", "numpy", "--no-plot"])["result"].structural_rank == 2
    assert mod.main([str(path), "--backend", "numpy", "--no-plot", "--nonzero"])["result"].structural_rank == 1


def test_example_picture(tmp_path):
    pytest.importorskip("matplotlib")
    out = _example().main(["--generate", "--backend", "numpy", "--out", str(tmp_path / "b.png")])
    assert out["output"] and (tmp_path / "b.png").stat().st_size > 10_000


def test_docs_page_examples():
    """The worked examples of docs/user_guide/structure.rst run and print what the page says."""
    import doctest
    import pathlib

    page = pathlib.Path(__file__).resolve().parent.parent / "docs" / "user_guide" / "structure.rst"
    assert page.is_file(), "the structure guide moved: point this test at it"
    failures, tried = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert tried > 10 and failures == 0

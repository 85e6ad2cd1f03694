"""The chain rule (``matching/chain.cu`` and its NumPy twins): Karp–Sipser's
degree-one rule along chains of degree-two vertices, by pointer jumping.

Checked by properties on both twins: the pairs form a valid matching, and
it is *exact*: the pairs plus a maximum matching of what they leave free is
a maximum matching of the graph (the serial rule's guarantee).  Work is
bounded by deterministic counts: a permuted chain of 2n vertices is matched
outright in at most ``ceil(log2 2n) + 4`` rounds, and disjoint cycles in
about ``2 log2 L`` rounds more, with no push iteration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

import gpumatch
from gpumatch import _backend
from gpumatch import generators as G
from gpumatch._validation import as_csr_graph
from gpumatch.backends import to_numpy
from gpumatch.matching import _driver

BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]


def _size(A) -> int:
    A = sp.csr_matrix(A)
    return int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum()) if A.nnz else 0


def _paths_and_cycles(rng, pieces):
    """A graph whose components are paths (odd and even numbers of
    vertices, starting on either side), even cycles and spiders (chains
    hung on a hub column), permuted."""
    rows, cols = [], []
    size = [0, 0]                      # rows, columns so far

    def chain(length, side, first=None):
        """`length` new vertices alternating sides from `side` (after
        `first`, an existing vertex of the other side, if given): edges
        between consecutive ones."""
        prev = first
        for _ in range(length):
            v = size[side]
            size[side] += 1
            if prev is not None:
                rows.append(v if side == 0 else prev)
                cols.append(prev if side == 0 else v)
            prev, side = v, 1 - side
        return prev

    for _ in range(pieces):
        kind = int(rng.integers(3))
        if kind == 0:
            chain(int(rng.integers(1, 60)), int(rng.integers(2)))
        elif kind == 1:                # an even cycle: 2L vertices
            L = int(rng.integers(2, 30))
            r0, c0 = size
            for i in range(L):
                rows += [r0 + i, r0 + i]
                cols += [c0 + i, c0 + (i + 1) % L]
            size[0] += L
            size[1] += L
        else:
            hub = size[1]
            size[1] += 1
            for _ in range(int(rng.integers(3, 6))):
                chain(int(rng.integers(1, 12)), 0, first=hub)
    m, n = size
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, n))
    A.sum_duplicates()
    A.data[:] = 1
    return sp.csr_matrix(A[rng.permutation(m)][:, rng.permutation(n)])


def _cases():
    rng = np.random.default_rng(7)
    out = [("ladder", G.bidiagonal(5000, permute=True, seed=1)),
           ("ladder-rect", sp.csr_matrix(G.bidiagonal(3001, permute=True, seed=3)[:, :2999])),
           ("jacobian", G.block_triangular(3000, seed=1)),
           ("banded", G.banded(3000, 2, seed=1)),
           ("random-d2", G.random_bipartite(3000, 2500, 2, seed=1))]
    out += [(f"pieces{i}", _paths_and_cycles(rng, 30)) for i in range(8)]
    for i in range(8):
        m, n = (int(x) for x in rng.integers(5, 200, 2))
        out.append((f"sparse{i}", sp.random(m, n, density=float(rng.uniform(0.005, 0.03)), format="csr",
                                            random_state=int(rng.integers(1 << 30)))))
    return out


CASES = _cases()


def _rule_only(A, backend, monkeypatch):
    """Run the chain rule alone (whatever its share gate) on `A`; the
    matching (host arrays) and the statistics."""
    monkeypatch.setitem(_driver.CHAIN_RULE, "min_interior", 0.0)
    g = as_csr_graph(sp.csr_matrix(A), backend)
    st = _driver.make_state(g)
    stats = {}
    _driver.chain_rule(st, _driver.kernels_for(backend), stats)
    return to_numpy(st.mu_row), to_numpy(st.mu_col), stats


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, A", CASES, ids=[c[0] for c in CASES])
def test_rule_is_valid_and_exact(name, A, backend, monkeypatch):
    A = sp.csr_matrix(A)
    A.data[:] = 1
    mu_row, mu_col, stats = _rule_only(A, backend, monkeypatch)
    m, n = A.shape
    rows = np.flatnonzero(mu_row >= 0)
    assert np.array_equal(mu_col[mu_row[rows]], rows)                 # mutual pairs
    assert int((mu_col >= 0).sum()) == rows.shape[0]
    assert np.all(A.tolil()[rows, mu_row[rows]].toarray() == 1) if rows.size else True   # on entries
    keep_r = np.setdiff1d(np.arange(m), rows)
    keep_c = np.setdiff1d(np.arange(n), mu_row[rows])
    rest = A[keep_r][:, keep_c]
    assert rows.shape[0] + _size(rest) == _size(A), stats               # exact: extends to a maximum
    if stats["chain_rounds"]:
        assert stats["chain_rounds"] <= (m + n).bit_length() + 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_rule_twins_agree(backend, monkeypatch):
    """Both twins make the same pairs inside the chains (claims of a shared
    hub may differ: the lowest claimant on NumPy, any on the device)."""
    A = G.bidiagonal(4097, permute=True, seed=5)
    got = _rule_only(A, backend, monkeypatch)
    ref = _rule_only(A, "numpy", monkeypatch)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    assert int((got[0] >= 0).sum()) == 4097


@pytest.mark.parametrize("backend", BACKENDS)
def test_chain_matched_before_push_relabel(backend):
    """A permuted chain of 2n vertices: the rule matches it outright, in
    ceil(log2 2n) + 4 rounds at most, and G-PR pushes nothing."""
    n = 30_000
    A = G.bidiagonal(n, permute=True, seed=4)
    r = gpumatch.bipartite_matching(A, backend=backend, certificate=True)
    assert r.size == n
    assert r.stats["initial_size"] == n
    assert 0 < r.stats["chain_rounds"] <= math.ceil(math.log2(2 * n)) + 4
    assert r.stats["push_iterations"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("count", [1, 7, 5000])
def test_cycles_matched_before_push_relabel(backend, count):
    """Disjoint even cycles, permuted (no vertex of degree one): the rule
    matches every cycle outright from its least vertex id, the chain
    rounds stop after one round that ends no record, the cycles' two
    passes take at most ``2 (ceil(log2 L) + 5)`` rounds for cycles of at
    most L vertices, and G-PR pushes nothing."""
    n = 30_000
    A = G.cycles(n, count, permute=True, seed=count)
    r = gpumatch.bipartite_matching(A, backend=backend, certificate=True)
    assert r.size == n and r.stats["initial_size"] == n
    assert r.stats["chain_cycle_vertices"] == 2 * n
    assert r.stats["chain_rounds"] == 1
    L = 2 * -(-n // count)
    assert 0 < r.stats["chain_cycle_rounds"] <= 2 * (math.ceil(math.log2(L)) + 5)
    assert r.stats["push_iterations"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_cycles_beside_chains(backend, monkeypatch):
    """Cycles and chains in one graph: the chains' rounds end with the
    longest chain, the cycles are taken as cycles, and both twins make the
    same pairs (no claim is contested on a cycle)."""
    ring = G.cycles(3000, 3, permute=True, seed=2)
    path = G.bidiagonal(2000, permute=True, seed=3)
    A = sp.csr_matrix(sp.block_diag([ring, path]))
    got = _rule_only(A, backend, monkeypatch)
    ref = _rule_only(A, "numpy", monkeypatch)
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    assert int((got[0] >= 0).sum()) == 5000
    assert got[2]["chain_cycle_vertices"] == 6000
    assert got[2]["chain_rounds"] <= math.ceil(math.log2(4000)) + 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_gate_skips_random_graphs(backend):
    """Random graphs of degree 5 have few chain interiors: the rule's share
    gate skips it (one counting pass), and the answer is unchanged."""
    A = G.random_bipartite(20_000, 20_000, 5, seed=1)
    r = gpumatch.bipartite_matching(A, backend=backend)
    assert r.stats["chain_rounds"] == 0
    assert r.stats["chain_interior"] < _driver.CHAIN_RULE["min_interior"] * 40_000
    assert r.size == _size(A)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rule_off_and_warm_start(backend, monkeypatch):
    """CHAIN_RULE None turns it off; a warm start never runs it."""
    A = G.bidiagonal(2000, permute=True, seed=6)
    monkeypatch.setattr(_driver, "CHAIN_RULE", None)
    r = gpumatch.bipartite_matching(A, backend=backend)
    assert r.size == 2000 and r.stats["chain_rounds"] == 0
    monkeypatch.undo()
    init = np.full(2000, -1)
    r = gpumatch.bipartite_matching(A, backend=backend, initial=init)
    assert r.size == 2000 and "chain_rounds" not in r.stats

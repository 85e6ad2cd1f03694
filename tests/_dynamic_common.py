"""Helpers and fixtures shared by the tests of the dynamic solvers (tests/test_dynamic_*.py).

After every batch of changes the result is checked against the updated
graph: the flow with ``check_flow`` (valid, maximum by a cut) and its value
against scipy's Dinic; the matching with ``check_matching`` and its size
against scipy's Hopcroft-Karp.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

from gpumatch import csr
from gpumatch import generators as G
from gpumatch.flow import MaxFlowSolver, maximum_flow
from gpumatch.matching import MatchingSolver
from gpumatch.testing import check_flow, check_matching



# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _to_backend(a, backend):
    if backend == "cupy":
        import cupy as cp

        return cp.asarray(a)
    return a


def _seed(*words):
    """A reproducible seed (Python's str hash changes from run to run)."""
    return zlib.crc32("/".join(words).encode())


def _scipy_value(C, s, t):
    C = sp.csr_matrix(C)
    C.setdiag(0)
    C.eliminate_zeros()
    return int(sp_maximum_flow(C.astype(np.int32), s, t, method="dinic").flow_value)


def _capacity_batch(rng, C, kind, size, maxcap):
    """A batch of `size` distinct arcs of C with new capacities (kind: inc, dec, mixed)."""
    coo = sp.coo_matrix(C)
    k = rng.choice(coo.nnz, size=min(size, coo.nnz), replace=False)
    r, c, old = coo.row[k], coo.col[k], coo.data[k].astype(np.int64)
    if kind == "inc":
        new = old + rng.integers(1, maxcap + 1, size=k.shape[0])
    elif kind == "dec":
        new = np.maximum(old - rng.integers(1, maxcap + 1, size=k.shape[0]), 0)
    else:
        new = rng.integers(0, 2 * maxcap + 1, size=k.shape[0])
    return r.astype(np.int64), c.astype(np.int64), new.astype(np.int64)


def _apply(C, r, c, new):
    C = sp.csr_matrix(C, dtype=np.int64, copy=True)
    C[r, c] = new
    return C


def _check_flow_result(res, C, s, t):
    flow = res.flow
    if not isinstance(flow, (sp.spmatrix, sp.sparray)):
        flow = flow.get()
    cert = check_flow(C, s, t, flow, int(res.flow_value))
    assert int(res.flow_value) == _scipy_value(C, s, t)
    return cert


def _flow_graphs():
    C1, s1, t1 = G.washington_rlg(6, 8, 20, seed=1)
    C2, s2, t2 = G.genrmf(4, 5, 1, 30, seed=2)
    P = G.random_bipartite(60, 50, 3, seed=3)
    P = sp.csr_matrix(P)
    ip, ix, cap, s3, t3 = csr.bipartite_flow_network(P.indptr, P.indices, P.shape)
    V = P.shape[0] + P.shape[1] + 2
    C3 = sp.csr_matrix((np.asarray(cap), np.asarray(ix), np.asarray(ip)), shape=(V, V))
    return {"rlg": (sp.csr_matrix(C1), s1, t1, 20), "genrmf": (sp.csr_matrix(C2), s2, t2, 30),
            "unit_bipartite": (C3, s3, t3, 1)}


FLOW_GRAPHS = _flow_graphs()


# ---------------------------------------------------------------------------
# MaxFlowSolver
# ---------------------------------------------------------------------------


@pytest.fixture(params=["paths", "paths_unwind", "unwind", "push_relabel"])
def repair_paths(request, monkeypatch):
    """Repairs with the augmenting-path pass first (default), with the flow
    cancelling after it, with passes that reach nothing (so the cancelling
    and push-relabel do it all), or push-relabel alone."""
    from gpumatch.flow.dynamic import _dynamic, _paths

    monkeypatch.setitem(_dynamic.REPAIR, "paths", request.param != "push_relabel")
    monkeypatch.setitem(_dynamic.REPAIR, "unwind", 4096 if "unwind" in request.param else 0)
    monkeypatch.setitem(_dynamic.REPAIR, "cancel_2cycles", "unwind" in request.param)
    if request.param == "unwind":
        monkeypatch.setitem(_paths.LIMITS, "all_levels", 0)
    return request.param


def _flow_batches(backend, name, kind, sizes, seed=0):
    """A dynamic solver on FLOW_GRAPHS[name], then one batch of each size:
    yields ``(result, updated matrix, s, t)`` after checking each result."""
    C, s, t, maxcap = FLOW_GRAPHS[name]
    rng = np.random.default_rng(_seed(name, kind) + seed)
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend, rebuild_fraction=1.0, time_budget=None)
    _check_flow_result(solver.solve(), C, s, t)
    for size in sizes(C.nnz):
        r, c, new = _capacity_batch(rng, C, kind, size, maxcap)
        solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["mode"] == "dynamic"
        _check_flow_result(res, C, s, t)
        yield res, C, s, t


def _walk_setup(backend, arcs, V, flows=None):
    """The kernel twin of `backend` on a network of `arcs` ((tail, head, cap)
    triples), with the given flows ({arc index: flow}); returns ``(K, ctx, L, xp, pos)``
    (pos: the CSR position of each (tail, head))."""
    from gpumatch.flow import _maxflow

    xp = np if backend == "numpy" else __import__("cupy")
    C = sp.csr_matrix((np.array([a[2] for a in arcs], dtype=np.int64),
                       ([a[0] for a in arcs], [a[1] for a in arcs])), shape=(V, V))
    pos = {(int(r), int(c)): k for k, (r, c) in enumerate(zip(np.repeat(np.arange(V), np.diff(C.indptr)), C.indices))}
    L = _maxflow._build_rcsr(xp, xp.asarray(C.indptr.astype(np.int32)), xp.asarray(C.indices.astype(np.int32)),
                             xp.asarray(C.data), V)
    for k, f in (flows or {}).items():
        L["flow"][pos[arcs[k][:2]]] = f
    ctx = _maxflow._prepare_kernels(backend, L, "rcsr", V, C.nnz)
    return _maxflow._kernels(backend), ctx, L, xp, pos


def _small_batch_run(backend, name, monkeypatch):
    """The batches of :func:`test_flow_small_batch_settings`: per batch
    ``(repair_settings, split relabels, discharge iterations, relabels)``."""
    from gpumatch.flow.dynamic import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "paths", False)
    monkeypatch.setitem(_dynamic.REPAIR, "detour", 0)   # (which would leave the relabels little to do,
    monkeypatch.setitem(_dynamic.REPAIR, "unwind", 0)   # as would the walks back to the source)
    monkeypatch.setitem(_dynamic.REPAIR, "small", {"max_period": 4, "early_stop": True, "split_relabel": True})
    # Relabels by iteration counts only.  The time-based rules (the
    # repairs' relabel_ratio, the adaptive period of the solve from
    # scratch) made the number of relabels vary with the load of the
    # machine, and with it whether early_near split a relabel of a
    # default batch (1 run in 6 under load).  early_near, the other source
    # of split relabels (test_flow_early_near), is off: split relabels
    # then come from split_relabel alone, which only REPAIR["small"] sets.
    monkeypatch.setitem(_dynamic.REPAIR, "relabel_ratio", None)
    monkeypatch.setitem(_dynamic.REPAIR, "scratch_adaptive", False)
    monkeypatch.setitem(_dynamic.REPAIR, "early_near", False)
    nnz = FLOW_GRAPHS[name][0].nnz
    monkeypatch.setitem(_dynamic.REPAIR, "small_batch", 5.5 / nnz)    # batches of 5 arcs or fewer
    sizes = lambda nnz: [1, 5, 6, max(6, nnz // 20), 2]  # noqa: E731
    return [(res.stats["repair_settings"], res.stats.get("split_relabels", 0), res.stats["iterations"],
             res.stats["global_relabels"])
            for res, *_ in _flow_batches(backend, name, "dec", sizes, seed=3)]


def _backend_np(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _reaches(L, excess, mask, target, other, roots):
    """Brute force: does any root reach `target` or a deficit inside `mask` over residual arcs?"""
    indptr, indices = _np(L["indptr"]), _np(L["indices"])
    cap, flow = _np(L["cap"]), _np(L["flow"])
    in_indptr, in_indices, in_to_out = _np(L["in_indptr"]), _np(L["in_indices"]), _np(L["in_to_out"])
    seen, stack = set(int(r) for r in roots), [int(r) for r in roots]
    while stack:
        u = stack.pop()
        steps = [(int(indices[p]), cap[p] - flow[p]) for p in range(indptr[u], indptr[u + 1])]
        steps += [(int(in_indices[j]), flow[in_to_out[j]]) for j in range(in_indptr[u], in_indptr[u + 1])]
        for w, res in steps:
            if res <= 0 or w == other or w in seen:
                continue
            if w == target or (mask[w] and excess[w] < 0):
                return True
            if mask[w]:
                seen.add(w)
                stack.append(w)
    return False


def _max_flow_network(name):
    """FLOW_GRAPHS[name] without self-loops, as ``(C, s, t, V, L, rows)``:
    its reverse-CSR network `L` carrying the flow of a maximum flow, and
    the tail of every arc."""
    from gpumatch.flow import _maxflow

    C, s, t, _ = FLOW_GRAPHS[name]
    C = sp.csr_matrix(C, dtype=np.int64)
    C.setdiag(0)
    C.eliminate_zeros()
    C.sort_indices()
    V = C.shape[0]
    L = _maxflow._build_rcsr(np, C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data.astype(np.int64), V)
    F = sp.csr_matrix(maximum_flow(C, s, t, backend="numpy").flow)
    rows = np.repeat(np.arange(V), np.diff(C.indptr))
    L["flow"] = np.maximum(np.asarray(F[rows, C.indices]).ravel(), 0).astype(np.int64)
    return C, s, t, V, L, rows


def _cut_below_flow(C, s, t, L, rows, rng, part=6):
    """Cut about 1 / `part` of the flow-carrying arcs of `L` (none at a
    terminal) below their flow, in place (new ``L["cap"]``, flows lowered
    to it); returns ``(excess, tails, heads)``: the balances (terminals 0)
    and the cut arcs' ends."""
    cand = np.flatnonzero((L["flow"] > 0) & (rows != s) & (rows != t) & (C.indices != s) & (C.indices != t))
    cut = rng.choice(cand, size=min(cand.shape[0], 1 + cand.shape[0] // part), replace=False)
    cap = L["cap"].copy()
    cap[cut] = rng.integers(0, L["flow"][cut])
    L["cap"] = cap
    L["flow"][cut] = cap[cut]
    excess = _inflow_minus_outflow(C.indptr, C.indices, L["flow"])
    excess[[s, t]] = 0
    return excess, rows[cut], C.indices[cut].astype(np.int64)


def _inflow_minus_outflow(indptr, indices, flow):
    """Per vertex, what the arcs of the CSR (`indptr`, `indices`) carry in minus what they carry out."""
    indptr, indices, flow = (_np(a).astype(np.int64) for a in (indptr, indices, flow))
    V = indptr.shape[0] - 1
    rows = np.repeat(np.arange(V), np.diff(indptr))
    return np.bincount(indices, flow, minlength=V).astype(np.int64) - \
        np.bincount(rows, flow, minlength=V).astype(np.int64)


def _np(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _residual_reach(L, mask, root, thr=1):
    """Brute force: the vertices of `mask` that `root` reaches over residual
    arcs of at least `thr` that stay in `mask`."""
    indptr, indices = _np(L["indptr"]), _np(L["indices"])
    cap, flow = _np(L["cap"]), _np(L["flow"])
    in_indptr, in_indices, in_to_out = _np(L["in_indptr"]), _np(L["in_indices"]), _np(L["in_to_out"])
    seen, stack = {int(root)}, [int(root)]
    while stack:
        u = stack.pop()
        steps = [(int(indices[p]), cap[p] - flow[p]) for p in range(indptr[u], indptr[u + 1])]
        steps += [(int(in_indices[j]), flow[in_to_out[j]]) for j in range(in_indptr[u], in_indptr[u + 1])]
        for w, res in steps:
            if res >= thr and mask[w] and w not in seen:
                seen.add(w)
                stack.append(w)
    return seen


def _cut_pairs(name, seed, part=6):
    """The max flow of `name` with about 1 / `part` of its flow-carrying
    arcs (none at a terminal) cut below their flow: ``(C, s, t, V, L,
    rows, side, excess, tails, heads)``, `side` the source side of the
    flow's minimum cut (before the cuts)."""
    C, s, t, V, L, rows = _max_flow_network(name)
    side = np.zeros(V, dtype=bool)
    side[list(_residual_reach(L, np.ones(V, dtype=bool), s))] = True
    excess, tails, heads = _cut_below_flow(C, s, t, L, rows, np.random.default_rng(_seed(name, "detour", str(seed))),
                                           part)
    return C, s, t, V, L, rows, side, excess, tails, heads


def _small_network(arcs, flows, N):
    """A network of `N` vertices with arcs ``(tail, head, capacity)`` and the
    flows ``{(tail, head): flow}``: ``(C, L, pos, flow)``, `L` its reverse
    CSR with that flow, `pos` the slot of each arc."""
    from gpumatch.flow import _maxflow

    C = sp.csr_matrix((np.array([a[2] for a in arcs], dtype=np.int64), ([a[0] for a in arcs], [a[1] for a in arcs])),
                      shape=(N, N))
    L = _maxflow._build_rcsr(np, C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data, N)
    rows = np.repeat(np.arange(N), np.diff(C.indptr))
    pos = {(int(r), int(c)): k for k, (r, c) in enumerate(zip(rows, C.indices))}
    flow = np.zeros(C.nnz, dtype=np.int64)
    for key, f in flows.items():
        flow[pos[key]] = f
    L["flow"] = flow
    return C, L, pos, flow


def _unit_mixed_repairs(backend, monkeypatch, batches=3):
    """A solver on a unit network of 10 000 + 10 000 vertices, then
    `batches` mixed batches of 0.1 % of its arcs repaired with the settings
    of larger batches: yields ``(result, updated matrix, s, t)`` after
    checking each dynamic result's flow against scipy."""
    from gpumatch.flow.dynamic import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "small_batch", 0)
    A = sp.csr_matrix(G.random_bipartite(10_000, 10_000, 5, seed=0))
    ip, ix, cap, s, t = csr.bipartite_flow_network(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.shape)
    V = ip.shape[0] - 1
    C = sp.csr_matrix((cap, ix, ip), shape=(V, V))
    rng = np.random.default_rng(2)
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend, rebuild_fraction=1.0, time_budget=None)
    solver.solve()
    for _ in range(batches):
        r, c, new = _capacity_batch(rng, C, "mixed", C.nnz // 1000, 1)
        solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["mode"] == "dynamic"
        _check_flow_result(res, C, s, t)
        yield res, C, s, t


def _check_cut(res, C, s, t):
    """The result's source side is that of a minimum cut: it holds the
    source and not the sink, and its arcs out carry the flow's value."""
    side = _host_array(res.source_side).astype(bool)
    assert side[s] and not side[t]
    coo = sp.coo_matrix(C)
    out = side[coo.row] & ~side[coo.col] & (coo.row != coo.col)
    assert int(coo.data[out].sum()) == int(res.flow_value)


def _ladder(N, F, c, backend, idt=np.int64):
    """The chain 0 -> 1 -> ... -> N - 1 with flow F + c on every arc and the
    anti-parallel arcs i + 1 -> i with flow c (2-cycles, as push-relabel
    leaves them on GENRMF's frames), capacities F + c + 5 and c + 5; the
    flow is conserved.  Returns (reverse CSR, kernel context)."""
    from gpumatch.flow import _maxflow

    xp = np if backend == "numpy" else __import__("cupy")
    rows = np.concatenate([np.arange(N - 1), np.arange(1, N)])
    cols = np.concatenate([np.arange(1, N), np.arange(N - 1)])
    flows = np.concatenate([np.full(N - 1, F + c), np.full(N - 1, c)]).astype(np.int64)
    C = sp.csr_matrix((flows + 5, (rows, cols)), shape=(N, N))
    C.sort_indices()
    Fm = sp.csr_matrix((flows, (rows, cols)), shape=(N, N))
    Fm.sort_indices()
    L = _maxflow._build_rcsr(np, C.indptr.astype(idt), C.indices.astype(idt), C.data.astype(np.int64), N)
    L["flow"] = Fm.data.astype(np.int64)
    L = {k: xp.asarray(v) for k, v in L.items()}
    ctx = _maxflow._prepare_kernels(backend, L, "rcsr", N, C.nnz, (0, N - 1))
    return L, ctx


def _cupyx(C):
    import cupyx.scipy.sparse as cpx

    return cpx.csr_matrix(sp.csr_matrix(C).astype(np.float64))


# ---------------------------------------------------------------------------
# MatchingSolver
# ---------------------------------------------------------------------------


def _edge_batch(rng, A, kind, size):
    """(add_rows, add_cols, rem_rows, rem_cols): `size` changes of the pattern A."""
    A = sp.csr_matrix(A)
    m, n = A.shape
    coo = A.tocoo()
    n_rem = {"inc": 0, "dec": size, "mixed": size // 2}[kind]
    n_add = size - n_rem
    k = rng.choice(coo.nnz, size=min(n_rem, coo.nnz), replace=False)
    rr, rc = coo.row[k].astype(np.int64), coo.col[k].astype(np.int64)
    present = set(zip(coo.row.tolist(), coo.col.tolist()))
    add = set()
    while len(add) < n_add and len(present) + len(add) < m * n:
        e = (int(rng.integers(m)), int(rng.integers(n)))
        if e not in present:
            add.add(e)
    ar = np.array([e[0] for e in add], dtype=np.int64)
    ac = np.array([e[1] for e in add], dtype=np.int64)
    return ar, ac, rr, rc


def _apply_edges(A, ar, ac, rr, rc):
    A = sp.lil_matrix(A, dtype=np.int8)
    if rr.shape[0]:
        A[rr, rc] = 0
    if ar.shape[0]:
        A[ar, ac] = 1
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    return A


def _check_matching_result(res, A):
    size = int((sp_matching(A, perm_type="row") >= 0).sum())
    c2r = res.col_to_row if isinstance(res.col_to_row, np.ndarray) else res.col_to_row.get()
    check_matching(A, c2r, "row", expected_size=size)
    assert res.size == size


def _matching_graphs():
    return {"bipartite": sp.csr_matrix(G.random_bipartite(120, 100, 2, seed=7)),
            "rect": sp.csr_matrix(G.random_bipartite(60, 90, 3, seed=8)),
            "grid": sp.csr_matrix(G.grid(9, 8, drop=0.2, seed=9))}


MATCHING_GRAPHS = _matching_graphs()


def _check_forest(solver, A):
    """The kept forest of a converged solve is a Koenig certificate: every free
    row with an edge is in a tree, no free column is, trees are closed (a tree
    row's columns are all in trees), each tree column's mate and parent are rows
    of its tree, and (rows with edges outside the trees) + (tree columns) is a
    vertex cover of the matching's size.  Live trees are search trees: the
    parent edges exist, row depths strictly decrease from a column's mate to
    its parent, and the root is free; orphaned ones (repaired after a removal)
    need only the cover conditions."""
    f = solver._st.extra["augment"]
    assert f["valid"]
    m, n = A.shape
    tree_row, root_col = _host(f["tree_row"])[:m].astype(np.int64), _host(f["root_col"])[:n].astype(np.int64)
    parent = _host(f["parent_col"])[:n].astype(np.int64)
    depth = _host(f["depth"])[:m].astype(np.int64)
    orphaned = _host(f["tstate"])[:m] == 1
    mu_row, mu_col = _host(solver._mu_row).astype(np.int64), _host(solver._mu_col).astype(np.int64)
    A = sp.csr_matrix(A)
    deg = np.diff(A.indptr)
    assert (tree_row[(mu_row < 0) & (deg > 0)] >= 0).all(), "a free row with edges is in no tree"
    assert (root_col >= -1).all(), "a backward tree's claim outlived the solve"
    assert (root_col[mu_col < 0] < 0).all(), "a free column is in a tree"
    zc = np.flatnonzero(root_col >= 0)
    assert (tree_row[mu_col[zc]] == root_col[zc]).all(), "a tree column's mate is not in its tree"
    coo = A.tocoo()
    live = zc[~orphaned[root_col[zc]]]
    assert (tree_row[parent[live]] == root_col[live]).all(), "a live tree column's parent is not in its tree"
    assert np.isin(parent[live] * n + live, coo.row.astype(np.int64) * n + coo.col).all(), \
        "a live tree column's parent edge is missing"
    assert (depth[parent[live]] < depth[mu_col[live]]).all(), "depths do not descend from a mate to the parent"
    roots = np.unique(root_col[live])
    assert (tree_row[roots] == roots).all() and (mu_row[roots] < 0).all(), "a live tree's root is not free"
    in_tree = tree_row[coo.row] >= 0
    assert (root_col[coo.col[in_tree]] >= 0).all(), "a tree is not closed"
    cover = int(((tree_row < 0) & (deg > 0)).sum()) + zc.shape[0]
    assert cover == int((mu_col >= 0).sum()), "the cover and the matching differ in size"


@pytest.fixture(params=["cooperative", "launches"])
def aug_launch(request, backend, monkeypatch):
    """How the GPU runs the augmenting phases: one cooperative launch per call
    (the default where the device can), or a launch per step; NumPy runs once."""
    from gpumatch.matching import _augment

    if backend == "numpy" and request.param != "cooperative":
        pytest.skip("the launch mode only steers the CUDA path")
    monkeypatch.setattr(_augment, "COOPERATIVE", request.param == "cooperative")
    return request.param


@pytest.fixture(params=["default", "off", "eager", "closing", "wait", "forest"])
def two_sided(request, monkeypatch):
    """The backward side of the augmenting phases: the default balance, off
    (search trees alone, every phase closing), eager (the backward side runs a
    level whenever its frontier is at most 8x the search side's; the closing
    phases' adoption passes all over every column, ``ADOPT_PUSH`` False), the
    default balance with every phase closing (no deferred closing), with
    a search side that waits whenever its frontier is longer than the
    backward one (``SEARCH_WAIT`` 1), or with only the forest's certificate
    (``BACK_CERTIFICATE`` False: a closing phase wherever the forest is not
    closed)."""
    from gpumatch.matching import _augment

    ratio = {"default": _augment.BACK_RATIO, "off": 0.0, "eager": 8.0, "closing": _augment.BACK_RATIO,
             "wait": _augment.BACK_RATIO, "forest": _augment.BACK_RATIO}[request.param]
    monkeypatch.setattr(_augment, "BACK_RATIO", ratio)
    monkeypatch.setattr(_augment, "DEFER_CLOSING", request.param != "closing")
    if request.param == "wait":
        monkeypatch.setattr(_augment, "SEARCH_WAIT", 1.0)
    if request.param == "eager":
        monkeypatch.setattr(_augment, "ADOPT_PUSH", False)
    if request.param == "forest":
        monkeypatch.setattr(_augment, "BACK_CERTIFICATE", False)
    return ratio


def _check_two_sided(stats, ratio):
    from gpumatch.matching import _augment

    assert 0 <= stats["aug_met"] <= stats["aug_paths"]
    assert stats["aug_certificate"] in ("forest", "backward")
    if not (_augment.BACK_CERTIFICATE and ratio > 0 and _augment.DEFER_CLOSING):
        assert stats["aug_certificate"] == "forest"   # only search phases have a backward certificate
    if ratio == 0:
        assert stats["aug_met"] == 0 and stats["aug_back_levels"] == 0
    if ratio == 0 or not _augment.DEFER_CLOSING:   # every phase closes: none counted as a closing one
        assert stats.get("aug_closings", 0) == 0
    else:
        assert 0 <= stats["aug_closings"] <= stats["aug_phases"]


def _check_launch(stats, backend, aug_launch):
    """The augmenting phases ran the way the test asked for (H100-class devices launch cooperatively)."""
    assert stats["aug_cooperative"] == (backend == "cupy" and aug_launch == "cooperative")


def _forest_host(solver, m, n):
    f = solver._st.extra["augment"]
    return (_host(f["tree_row"])[:m].astype(np.int64), _host(f["root_col"])[:n].astype(np.int64),
            _host(f["parent_col"])[:n].astype(np.int64), _host(f["depth"])[:m].astype(np.int64),
            _host(f["tstate"])[:m], _host(solver._mu_col).astype(np.int64))


@pytest.fixture
def forest_only(monkeypatch):
    """Only the kept forest certifies (``BACK_CERTIFICATE`` False): the tests
    of the forest's repairs need it kept after every solve."""
    from gpumatch.matching import _augment

    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", False)


def _solver_with_forest(backend):
    """A solver on a random 1000 x 1000 d5 graph after a warm solve (one
    added edge), so that it keeps a forest (with ``forest_only``); returns
    (solver, graph)."""
    A = sp.csr_matrix(G.random_bipartite(1000, 1000, 5, seed=31))
    A.sort_indices()
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0,
                            warm_init="none")
    solver.solve()
    extra = int(np.flatnonzero(A[0].toarray()[0] == 0)[0])
    solver.add_edges(_to_backend(np.array([0]), backend), _to_backend(np.array([extra]), backend))
    A = _apply_edges(A, np.array([0]), np.array([extra]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    solver.solve()
    return solver, A


def _augment_state(A, backend, start):
    from gpumatch._validation import as_csr_graph
    from gpumatch.matching import _driver

    st = _driver.make_state(as_csr_graph(A if backend == "numpy" else _cupyx(A), backend))
    kern = _driver.kernels_for(backend)
    if start == "greedy":
        _driver.greedy(st, kern)
        kern.fix_matching(st)
    return st


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


# ---------------------------------------------------------------------------
# Incremental CSR edits (gpumatch.csr) and the solver's kept arrays
# ---------------------------------------------------------------------------


def _random_pattern(rng, m, n, nnz):
    keys = np.unique(rng.integers(0, m * n, size=nnz))
    A = sp.csr_matrix((np.ones(keys.shape[0]), (keys // n, keys % n)), shape=(m, n))
    A.sort_indices()
    return A


# --- flow repair (cut-aware, no-work shortcut) ---


def _flow_solver(name, backend):
    C, s, t, maxcap = FLOW_GRAPHS[name]
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend, rebuild_fraction=1.0, time_budget=None)
    res = solver.solve()
    _check_flow_result(res, C, s, t)
    return solver, res, C, s, t, maxcap


def _host_array(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _arc_lists(C, res):
    """Stored arcs of C (no self-loops) with their net flow, the cut's side, and which cross S -> T."""
    coo = sp.coo_matrix(C)
    keep = coo.row != coo.col
    r, c, cap = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64), coo.data[keep].astype(np.int64)
    F = sp.csr_matrix(_host_array(res.flow.toarray()) if not sp.issparse(res.flow) else res.flow)
    f = np.asarray(F[r, c]).ravel().astype(np.int64)
    side = _host_array(res.source_side).astype(bool)
    return r, c, cap, f, side, side[r] & ~side[c]


def _update(solver, backend, r, c, new):
    solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))


def _return_only(self):
    """A phase X (``MaxFlowSolver._excess_phase``) that only ever returns
    excess to the source or the deficits: it leaves a valid flow that need
    not be maximum, for phase F to finish."""
    from gpumatch.flow.dynamic import _dynamic as D

    xp, idt, s, t = self._xp, self._idt, self.source, self.sink
    st = {"height": self._height, "excess": self._excess}
    near = lambda: xp.concatenate([xp.asarray([s], dtype=idt),  # noqa: E731
                                    xp.nonzero(self._inner(self._excess < 0))[0].astype(idt)])
    D._Phase(self, self._ctx, st, near, terminals=(s, t), hlimit=self._V, blocked=t, name="X").run()


def _t_side_cuts(C, res, s, t, n):
    """`n` arcs with flow inside the sink side, cut to 0: an excess there
    that phase X moves (``(rows, cols, new capacities)``)."""
    r, c, cap, f, side, cross = _arc_lists(C, res)
    k = np.flatnonzero((f > 0) & ~side[r] & ~side[c] & (r != s) & (c != t))[:n]
    assert k.shape[0] == n
    return r[k], c[k], np.zeros(n, dtype=np.int64)


# a chain 0 -> 1 -> ... -> n (source 0, sink n): capacities of its arcs,
# the arc of the kept cut that rises (i -> i + 1) and its new capacity, the
# push the bound leaves one arc and two arcs away, and the new value
_BOUND_CASES = {
    "tail": ([1, 1, 5], 1, 5, (0, 0), 1),        # 1 takes in nothing more: no push, the cut moves to 0 -> 1
    "partial": ([3, 1, 5], 1, 10, (2, 2), 3),    # 1 takes in 2 more of the 9
    "head": ([10, 1, 3], 1, 10, (2, 2), 3),      # 2 passes on 2 more of the 9
    "whole": ([10, 1, 20], 1, 6, (5, 5), 6),     # both ends can use all 5
    "two_hops": ([1, 5, 1, 9], 2, 6, (4, 0), 1),  # 2 takes in 4 from 1, which takes in nothing
}

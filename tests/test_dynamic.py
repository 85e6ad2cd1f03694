"""Dynamic max flow (MaxFlowSolver) and dynamic matching (MatchingSolver).

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

from conftest import corpus_manifest

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
    from gpumatch.flow import _dynamic, _paths

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


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["inc", "dec", "mixed"])
def test_flow_batches(backend, name, kind, repair_paths):
    unwinds = 0
    sizes = lambda nnz: [1, 2, max(1, nnz // 1000), max(1, nnz // 100), max(1, nnz // 10), 1, 3]  # noqa: E731
    for res, C, s, t in _flow_batches(backend, name, kind, sizes):
        assert int(res.flow_value) == int(maximum_flow(C, s, t, backend="numpy").flow_value)
        unwinds += len(res.stats.get("unwinds", []))
    if "unwind" not in repair_paths:
        assert unwinds == 0
    elif repair_paths == "unwind" and name != "unit_bipartite" and backend == "numpy":
        assert unwinds > 0   # (the GPU's claims race: what is left to it varies)


@pytest.mark.parametrize("name", ["rlg", "genrmf"])
def test_flow_unwind_off_once_a_walk_runs_out(backend, name, monkeypatch):
    """Walks of one round (``REPAIR["unwind"]`` 1) run out on the first
    excess that is more than an arc from the source: the solver then takes
    its flow for one that circulates and unwinds no more, and every repair
    still ends with a maximum flow (``_flow_batches`` checks each)."""
    from gpumatch.flow import _dynamic, _paths

    monkeypatch.setitem(_dynamic.REPAIR, "unwind", 1)
    monkeypatch.setitem(_paths.LIMITS, "all_levels", 0)     # (passes that reach nothing leave it to the walks)
    seen, after = [], []
    sizes = lambda nnz: [max(1, nnz // 20)] * 6  # noqa: E731
    solver_runs = _flow_batches(backend, name, "dec", sizes)
    for res, C, s, t in solver_runs:
        walks = res.stats.get("unwinds", [])
        (after if any(r >= 1 and left for _, r, left, _ in seen) else seen).extend(walks)
    assert any(r == 1 and left > 0 for _, r, left, _ in seen)
    assert after == []


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["dec", "mixed"])
@pytest.mark.parametrize("coop", [True, False], ids=["coop", "levels"])
def test_flow_split_relabel(backend, name, kind, coop, monkeypatch):
    """Frequent, early-stopping relabels that split at a sealed cut
    (``REPAIR`` ``max_period`` 4, ``early_stop``, ``split_relabel``; the
    path passes off so that push-relabel does the repairs) leave a maximum
    flow after every batch, and the split relabel runs; on the GPU with the
    watched BFS decided on the device (cooperative) or by read-backs."""
    from gpumatch.flow import _dynamic, _maxflow

    if backend == "numpy" and not coop:
        pytest.skip("the NumPy twin has one BFS")
    monkeypatch.setitem(_maxflow.TUNING, "bfs_coop", coop)

    for key, value in (("max_period", 4), ("early_stop", True), ("split_relabel", True), ("paths", False),
                       ("detour", 0), ("unwind", 0), ("small_batch", 0)):
        monkeypatch.setitem(_dynamic.REPAIR, key, value)
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    split = sum(res.stats.get("split_relabels", 0) for res, *_ in _flow_batches(backend, name, kind, sizes, seed=7))
    assert split > 0


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("closer", [False, True], ids=["always", "closer"])
def test_flow_period_depth(backend, name, closer, monkeypatch):
    """Relabel periods that scale with the depth of the last relabel's BFS
    (``REPAIR`` ``period_depth``; ``max_period`` 2, ratio rule off, the
    path passes off) leave a maximum flow after every batch, with and
    without ``period_depth_closer``; without it some period is longer than
    ``max_period``."""
    from gpumatch.flow import _dynamic

    for key, value in (("max_period", 2), ("relabel_ratio", None), ("early_stop", True), ("split_relabel", True),
                       ("paths", False), ("detour", 0), ("unwind", 0), ("small_batch", 0),
                       ("period_depth", 1), ("period_depth_closer", closer)):
        monkeypatch.setitem(_dynamic.REPAIR, key, value)
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    longest = [res.stats.get("longest_period", 0) for res, *_ in _flow_batches(backend, name, "dec", sizes, seed=5)]
    if not closer:
        assert max(longest) > 2     # (0 where no push-relabel phase ran)


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_period_depth_pushed(backend, name, monkeypatch):
    """With ``period_depth_pushed`` the longer periods of ``period_depth``
    apply only to batches that pushed new flow across the kept cut
    (``stats["cut_pushes"]`` > 0): decreases keep ``max_period`` (2 here),
    increases get longer periods; every result is a maximum flow."""
    from gpumatch.flow import _dynamic

    for key, value in (("max_period", 2), ("relabel_ratio", None), ("early_stop", True), ("split_relabel", True),
                       ("paths", False), ("detour", 0), ("unwind", 0), ("small_batch", 0),
                       ("period_depth", 1), ("period_depth_closer", False),
                       ("period_depth_pushed", True)):
        monkeypatch.setitem(_dynamic.REPAIR, key, value)
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    for res, *_ in _flow_batches(backend, name, "dec", sizes, seed=5):
        assert res.stats["cut_pushes"] == 0
        assert res.stats.get("longest_period", 0) <= 2
    longest = []
    for res, *_ in _flow_batches(backend, name, "inc", sizes, seed=5):
        if res.stats["cut_pushes"] == 0:
            assert res.stats.get("longest_period", 0) <= 2
        longest.append(res.stats.get("longest_period", 0))
    assert max(longest) > 2


def test_flow_cut_pushes(backend):
    """``stats["cut_pushes"]`` counts the arcs of the kept cut whose
    increase pushed new flow across it, and nothing else: not an increase
    elsewhere, not a decrease, and nothing after the solve that used it."""
    # 0 -> 1 (1) -> 3 and 0 -> 2 (4) -> 3 (2): the cut is {0 -> 1, 2 -> 3}
    C = sp.csr_matrix((np.array([1, 4, 5, 2], dtype=np.int64), ([0, 0, 1, 2], [1, 2, 3, 3])), shape=(4, 4))
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, 0, 3, backend=backend, time_budget=None)
    assert int(solver.solve().flow_value) == 3
    steps = [([0, 2], [1, 3], [3, 3], 2, 6),     # both cut arcs rise: both push
             ([0], [2], [9], 0, 6),              # 0 -> 2 was not saturated
             ([1], [3], [1], 0, 4),              # a decrease
             ([2], [3], [5], 1, 6)]              # 2 -> 3 is on the new cut {1 -> 3, 2 -> 3} too
    for rows, cols, caps, pushes, value in steps:
        r, c, new = (np.array(x, dtype=np.int64) for x in (rows, cols, caps))
        solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["cut_pushes"] == pushes
        assert int(res.flow_value) == value
        _check_flow_result(res, C, 0, 3)


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


@pytest.mark.parametrize("case", ["path", "bottleneck", "deficit", "widest", "cancel"])
def test_flow_walk_kernel(backend, case):
    """One walk (``walk`` of the kernel twins) carries a vertex's excess down
    admissible arcs all the way to the target: the widest arc first, what
    an arc cannot take left where it stops, a deficit on the way filled
    first, and an in-arc's flow cancelled when that is the way down."""
    arcs = [(0, 1, 10), (1, 2, 10), (2, 3, 10)]
    height = [3, 2, 1, 0, 1, 9]
    flows, start = {}, {0: 5}
    if case == "bottleneck":
        arcs[1] = (1, 2, 3)
    if case == "deficit":
        start[2] = -4
    if case == "widest":
        arcs[1] = (1, 2, 3)
        arcs += [(1, 4, 8), (4, 3, 10)]
    if case == "cancel":
        arcs[2] = (3, 2, 10)        # 2 -> 3 only by cancelling the flow on 3 -> 2
        flows = {2: 6}
    K, ctx, L, xp, pos = _walk_setup(backend, arcs, 6, flows)
    ex = np.zeros(6, dtype=np.int64)
    for v, e in start.items():
        ex[v] = e
    st = {"height": xp.asarray(np.array(height, dtype=np.int32)), "excess": xp.asarray(ex)}
    K.walk(ctx, st, xp.asarray(np.array([0], dtype=np.int32)), 3, 5, 99)
    got = _host(st["excess"]).tolist()
    flow = {a[:2]: int(_host(L["flow"])[pos[a[:2]]]) for a in arcs}
    want = {"path": ([0, 0, 0, 5, 0, 0], {(0, 1): 5, (1, 2): 5, (2, 3): 5}),
            "bottleneck": ([0, 2, 0, 3, 0, 0], {(0, 1): 5, (1, 2): 3, (2, 3): 3}),
            "deficit": ([0, 0, 0, 1, 0, 0], {(0, 1): 5, (1, 2): 5, (2, 3): 1}),
            "widest": ([0, 0, 0, 5, 0, 0], {(0, 1): 5, (1, 2): 0, (2, 3): 0, (1, 4): 5, (4, 3): 5}),
            "cancel": ([0, 0, 0, 5, 0, 0], {(0, 1): 5, (1, 2): 5, (3, 2): 1})}[case]
    assert (got, flow) == want


@pytest.mark.parametrize("seed", range(4))
def test_flow_walk_kernel_random(backend, seed):
    """Many walks at once on a random network (carriers meet, share arcs and
    reach deficits): flows stay within capacities, every vertex's excess
    moves by exactly its net inflow, flow moves only down arcs from a
    height to the next lower one, no vertex ends below the lesser of its
    deficit and 0, and some excess reaches the targets (height 0)."""
    from gpumatch.flow._pr_numpy import bfs_run, prepare

    rng = np.random.default_rng(_seed("walk", str(seed)))
    V, t, other = 300, 0, 1
    A = sp.random(V, V, density=0.02, random_state=rng, data_rvs=lambda n: rng.integers(1, 20, n)).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    r = np.repeat(np.arange(V), np.diff(A.indptr))
    arcs = [(int(a), int(b), int(c)) for a, b, c in zip(r, A.indices, A.data)]
    flows = {k: int(rng.integers(0, arcs[k][2] + 1)) for k in range(len(arcs)) if rng.random() < 0.3}
    K, ctx, L, xp, pos = _walk_setup(backend, arcs, V, flows)
    # exact heights: a BFS from the target and the deficits over residual arcs (NumPy twin, host copy)
    Lh = {k: _host(v).copy() for k, v in L.items()}
    ex = rng.integers(-8, 30, size=V) * (rng.random(V) < 0.2)
    ex[[t, other]] = 0
    h = np.full(V, -1, dtype=np.int32)
    roots = np.concatenate([[t], np.nonzero(ex < 0)[0]])
    h[roots] = 0
    bfs_run(prepare(Lh, "rcsr"), {"height": h, "excess": ex}, roots.astype(np.int32), 0)
    h[h < 0] = V
    h[other] = V
    work = np.nonzero((ex > 0) & (h < V))[0].astype(np.int32)
    assert work.shape[0] > 5
    st = {"height": xp.asarray(h), "excess": xp.asarray(ex.astype(np.int64))}
    K.walk(ctx, st, xp.asarray(work), t, other, V)
    f0, f1 = Lh["flow"], _host(L["flow"])
    cap = Lh["cap"]
    assert ((f1 >= 0) & (f1 <= cap)).all()
    tails = np.repeat(np.arange(V), np.diff(Lh["indptr"]))
    heads = Lh["indices"]
    net = np.zeros(V, dtype=np.int64)
    np.add.at(net, heads, f1 - f0)
    np.subtract.at(net, tails, f1 - f0)
    e1 = _host(st["excess"])
    assert (e1 == ex + net).all()
    up = f1 > f0
    down = f1 < f0
    assert (h[heads[up]] == h[tails[up]] - 1).all()     # pushed tail -> head, one level down
    assert (h[tails[down]] == h[heads[down]] - 1).all()  # cancelled: head -> tail, one level down
    assert (e1 >= np.minimum(ex, 0)).all()
    assert e1[h == 0].sum() > ex[h == 0].sum()          # the target and the deficits took some


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["dec", "mixed"])
def test_flow_walks(backend, name, kind, monkeypatch):
    """Repairs that walk the excess down after every relabel (``REPAIR``
    ``walk`` 2, path passes off, relabels every 8 discharges) leave a
    maximum flow after every batch, and the walks run."""
    from gpumatch.flow import _dynamic

    for key, value in (("walk", 2), ("paths", False), ("detour", 0), ("unwind", 0), ("max_period", 8),
                       ("small_batch", 0)):
        monkeypatch.setitem(_dynamic.REPAIR, key, value)
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    walks = sum(res.stats.get("walks", 0) for res, *_ in _flow_batches(backend, name, kind, sizes, seed=11))
    assert walks > 0


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["dec", "mixed"])
def test_flow_discharge_coop(name, kind, monkeypatch):
    """Repairs whose discharge iterations run in the cooperative launch
    (``REPAIR`` ``discharge_coop``, over lists of any length; path passes
    off, so that push-relabel does the repairs) leave a maximum flow after
    every batch, and the cooperative launch runs."""
    pytest.importorskip("cupy")
    from gpumatch.flow import _dynamic, _pr_cupy

    for key, value in (("discharge_coop", 1 << 20), ("paths", False), ("detour", 0), ("unwind", 0),
                       ("small_batch", 0)):
        monkeypatch.setitem(_dynamic.REPAIR, key, value)
    contexts = {}
    discharge = _pr_cupy.discharge

    def seen(ctx, *a, **k):
        contexts[id(ctx)] = ctx
        return discharge(ctx, *a, **k)

    monkeypatch.setattr(_pr_cupy, "discharge", seen)
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    for _ in _flow_batches("cupy", name, kind, sizes, seed=13):
        pass
    # (the first solve is one from scratch, with the module's own setting)
    assert sum(c.coop_iterations for c in contexts.values() if c.k_discharge_coop is not None) > 0


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["dec", "mixed"])
@pytest.mark.parametrize("pair_min", [1, 2])
def test_flow_pairs(backend, name, kind, pair_min, monkeypatch):
    """Repairs that first re-route each cut arc's excess to its own deficit
    (``REPAIR`` ``pair``, the detour pass off, cuts of at least
    ``pair_min`` units) leave a
    maximum flow after every batch (``_flow_batches`` checks it against
    scipy and ``check_flow``), and the pass over pairs runs and moves flow
    (on the unit network, whose cuts are of one unit, only with
    ``pair_min`` 1)."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "pair", 16)
    monkeypatch.setitem(_dynamic.REPAIR, "pair_min", pair_min)
    monkeypatch.setitem(_dynamic.REPAIR, "pair_share", 0)   # (tested on its own)
    monkeypatch.setitem(_dynamic.REPAIR, "detour", 0)     # (which would go instead)
    monkeypatch.setitem(_dynamic.REPAIR, "small", dict(_dynamic.REPAIR["small"], pair=16, detour=0))
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    passes = [p for res, *_ in _flow_batches(backend, name, kind, sizes, seed=17)
              for p in res.stats.get("path_passes", []) if p[0] == "P"]
    if name == "unit_bipartite":
        assert bool(passes) == (pair_min == 1)
    else:
        assert passes and sum(p[4] for p in passes) > 0


def _small_batch_run(backend, name, monkeypatch):
    """The batches of :func:`test_flow_small_batch_settings`: per batch
    ``(repair_settings, split relabels, discharge iterations, relabels)``."""
    from gpumatch.flow import _dynamic

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


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_small_batch_settings(backend, name, monkeypatch):
    """A batch of at most ``REPAIR["small_batch"]`` times the arcs is
    repaired with the settings of ``REPAIR["small"]`` (here: relabels every
    4 discharges, early-stopping and split), a larger one with the others;
    both leave maximum flows, and the module's settings are untouched."""
    from gpumatch.flow import _dynamic

    before = dict(_dynamic.REPAIR)
    with monkeypatch.context() as mp:
        got = _small_batch_run(backend, name, mp)
    assert [g[0] for g in got] == ["small", "small", "default", "default", "small"]
    assert all(g[1] == 0 for g in got if g[0] == "default")   # split relabels are off by default
    assert sum(g[1] for g in got if g[0] == "small") > 0
    assert _dynamic.REPAIR == before


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_small_batch_settings_ignore_the_clock(name, monkeypatch):
    """Issue 45, item 13: the repairs of test_flow_small_batch_settings do
    the same work whatever the clock says.  A clock that jumps ahead at
    random (as a loaded machine's does, seen from the solver) must not
    change one relabel or discharge iteration on the NumPy backend."""
    import random
    import time

    real = time.perf_counter

    def runs(seed):
        rng, offset = random.Random(seed), [0.0]

        def clock():
            if rng.random() < 0.05:
                offset[0] += 0.05 * rng.random()
            return real() + offset[0]

        with monkeypatch.context() as mp:
            mp.setattr(time, "perf_counter", clock)
            return _small_batch_run("numpy", name, mp)

    first = runs(0)
    assert all(runs(seed) == first for seed in (1, 2))


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_pushed_relabels(backend, name, monkeypatch):
    """With ``REPAIR["pushed_relabels"]``, a batch above ``small_batch``
    whose increases pushed flow across the kept cut is repaired with the
    relabel schedule of ``REPAIR["small"]`` (``repair_settings``
    "pushed"), the others with the defaults; all leave maximum flows."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "pushed_relabels", True)
    monkeypatch.setitem(_dynamic.REPAIR, "small", dict(_dynamic.REPAIR["small"], max_period=4))
    monkeypatch.setitem(_dynamic.REPAIR, "small_batch", 0.5 / FLOW_GRAPHS[name][0].nnz)   # no batch is small
    sizes = lambda nnz: [1, 3, max(2, nnz // 50), max(2, nnz // 10), 2]  # noqa: E731
    got = [(res.stats["repair_settings"], res.stats["cut_pushes"])
           for res, *_ in _flow_batches(backend, name, "inc", sizes, seed=5)]
    assert all(label == ("pushed" if pushes else "default") for label, pushes in got)
    assert any(pushes for _, pushes in got)


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("mode", ["near", "off", "every"])
def test_flow_early_near(backend, name, mode, monkeypatch):
    """``REPAIR["early_near"]`` (on by default): once the full relabels of
    a phase found all of its excess able to reach a near target, its later
    relabels stop early (``stats["early_near_relabels"]``); off, none
    does.  With ``early_stop`` ("every") every relabel stops early; on
    RLG such a relabel once labelled a vertex through the far terminal,
    its excess could never move on, and the repair ran until the guard
    (the far targets are now held at their height before the BFS).
    Frequent relabels (``max_period`` 2, the ratio rule off) and the path
    passes off so that push-relabel does the repairs; every result is a
    maximum flow (``_flow_batches`` checks each)."""
    from gpumatch.flow import _dynamic, _maxflow

    assert _dynamic.REPAIR["early_near"] is True
    monkeypatch.setitem(_maxflow.TUNING, "max_iterations", 100_000)   # a livelock fails, not hangs
    for key, value in (("max_period", 2), ("relabel_ratio", None), ("paths", False), ("detour", 0),
                       ("unwind", 0), ("small_batch", 0), ("early_near", mode == "near"),
                       ("early_stop", mode == "every")):
        monkeypatch.setitem(_dynamic.REPAIR, key, value)
    sizes = lambda nnz: [1, 3, max(2, nnz // 100), max(2, nnz // 10), 2]  # noqa: E731
    early = [res.stats.get("early_near_relabels", 0) for kind in ("inc", "mixed")
             for res, *_ in _flow_batches(backend, name, kind, sizes, seed=11)]
    if mode == "near":
        assert sum(early) > 0
    else:
        assert sum(early) == 0


@pytest.mark.parametrize("name", ["rlg", "genrmf"])
def test_flow_scratch_fixed_period(backend, name, monkeypatch):
    """``REPAIR["scratch_adaptive"]`` False: the solver's own solves from
    scratch (the first one and those past ``rebuild_fraction``) keep the
    relabel period they start with, while ``maximum_flow`` still adapts
    its own; every result is a maximum flow."""
    from gpumatch.flow import _dynamic, _maxflow

    assert _dynamic.REPAIR["scratch_adaptive"] is True
    monkeypatch.setitem(_dynamic.REPAIR, "scratch_adaptive", False)
    monkeypatch.setitem(_maxflow.TUNING, "freq", 7)
    adapted = []

    def spy(freq, t_gr, t_dis):
        adapted.append(freq)
        return freq + 1

    monkeypatch.setattr(_maxflow, "_next_relabel_period", spy)
    C, s, t, maxcap = FLOW_GRAPHS[name]
    rng = np.random.default_rng(_seed(name, "fixed"))
    solver = MaxFlowSolver(C if backend == "numpy" else _cupyx(C), s, t, backend=backend, rebuild_fraction=0.0,
                           time_budget=None)
    res = solver.solve()
    _check_flow_result(res, C, s, t)
    periods = [res.stats["relabel_period"]]
    for _ in range(3):
        r, c, new = _capacity_batch(rng, C, "mixed", max(1, C.nnz // 20), maxcap)
        solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["mode"] == "scratch"
        _check_flow_result(res, C, s, t)
        periods.append(res.stats["relabel_period"])
    assert periods == [7] * 4 and adapted == []
    maximum_flow(C if backend == "numpy" else _cupyx(C), s, t, backend=backend)
    assert adapted     # (maximum_flow adapts its period as before)


@pytest.mark.parametrize("idt", [np.int32, np.int64])
@pytest.mark.parametrize("deficits", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_label_steps(backend, idt, deficits, seed):
    """The four steps of the phases' relabels (``_labels``), one after the
    other on random excesses, sides and BFS results, against their
    definitions: heights, and each list as a set (the CUDA twin's order
    varies) of the solver's index type."""
    from gpumatch.flow import _labels

    xp = np if backend == "numpy" else __import__("cupy")
    V, s, t, far_level, hlimit = 500, 3, 7, 499, 999
    near_t, far_t = (t, s) if seed != 1 else (s, t)
    rng = np.random.default_rng(_seed("labels", str(seed), str(deficits)))
    excess = rng.integers(-2, 3, size=V) * (rng.random(V) < 0.3)
    side = rng.random(V) < 0.5
    side[near_t], side[far_t] = True, False
    inner = np.ones(V, dtype=bool)
    inner[[s, t]] = False
    K = _labels.steps(backend, V, idt)
    ex, sd = xp.asarray(excess), xp.asarray(side)
    h = xp.asarray(rng.integers(-5, 50, size=V).astype(np.int32))   # (all overwritten)

    def got(a):
        a = a.get() if hasattr(a, "get") else a
        assert a.dtype == idt
        assert np.unique(a).shape[0] == a.shape[0]
        return set(a.tolist())

    def where(m):
        return set(np.flatnonzero(m).tolist())

    deficit = inner & (excess < 0) if deficits else np.zeros(V, dtype=bool)
    near = deficit & side
    near[near_t] = True
    far = deficit & ~side
    far[far_t] = True
    n_l, f_l, w_l = K.start(ex, h, sd, near_t, far_t, s, t, deficits)
    assert (got(n_l), got(f_l), got(w_l)) == (where(near), where(far), where(inner & (excess > 0) & side))
    H = np.where(near, 0, -1).astype(np.int32)
    np.testing.assert_array_equal(_backend_np(h), H)
    # a BFS labelled some vertices (not the far targets: the cut is sealed)
    lab = (rng.random(V) < 0.3) & ~far & (H < 0)
    H[lab] = rng.integers(1, 20, size=int(lab.sum()))
    h[...] = xp.asarray(H)
    fill = 21 if seed != 2 else -1       # seed 2: that BFS ran to its end
    xs = K.middle(ex, h, sd, fill, s, t)
    if fill >= 0:
        H[(H < 0) & side] = fill
    np.testing.assert_array_equal(_backend_np(h), H)
    assert got(xs) == where(inner & (excess > 0) & (H < 0))
    # the far return placed some of that excess
    if xs.shape[0]:
        excess[_backend_np(xs)[::2]] = 0
        ex[...] = xp.asarray(excess)
    H[np.flatnonzero(far)[::3]] = 5     # far targets with a height are not in the frontier
    h[...] = xp.asarray(H)
    front, watch = K.far(ex, h, f_l, far_level, s, t)
    todo = far & (H < 0)
    assert got(front) == where(todo)
    H[todo] = far_level
    np.testing.assert_array_equal(_backend_np(h), H)
    assert got(watch) == where(inner & (excess > 0) & (H < 0))
    H[rng.random(V) < 0.2] = hlimit
    h[...] = xp.asarray(H)
    work = K.finish(ex, h, 30, hlimit, s, t)
    H[H < 0] = 30
    np.testing.assert_array_equal(_backend_np(h), H)
    assert got(work) == where(inner & (excess > 0) & (H < hlimit))


def _backend_np(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.mark.parametrize("clear", [True, False])
def test_excess_signs(backend, clear):
    """``_signs`` (the repair's ``_imbalance`` and ``_excess_left``): any
    excess and any deficit away from the terminals, for every pattern of
    signs on a network large enough for many blocks; the terminals' own
    excesses never count, and `clear` sets them to 0."""
    V, s, t = 70_000, 5, 69_999
    C = sp.csr_matrix((np.ones(V - 1, dtype=np.int64), np.arange(1, V), np.r_[np.arange(V), V - 1]), shape=(V, V))
    solver = MaxFlowSolver(C if backend == "numpy" else _cupyx(C), s, t, backend=backend)
    xp = np if backend == "numpy" else __import__("cupy")
    rng = np.random.default_rng(_seed("signs", str(clear)))
    for pos, neg in ((False, False), (True, False), (False, True), (True, True)):
        ex = np.zeros(V, dtype=np.int64)
        ex[s], ex[t] = 7, -7                                 # never counted
        for want, sign in ((pos, 1), (neg, -1)):
            if want:
                v = int(rng.integers(0, V))
                while v in (s, t) or ex[v]:
                    v = int(rng.integers(0, V))
                ex[v] = sign * int(rng.integers(1, 1 << 40))
        d = xp.asarray(ex)
        assert solver._signs(d, clear=clear) == (pos, neg)
        got = _np(d)
        assert (got[s], got[t]) == ((0, 0) if clear else (7, -7))
        np.testing.assert_array_equal(np.delete(got, [s, t]), np.delete(ex, [s, t]))


def test_sealed_cut(backend, monkeypatch):
    """``_sealed``: the side of the near targets while no residual arc
    crosses the kept cut from S to T, None once one does (an arc S -> T
    below its capacity, or flow on an arc T -> S), on the network and on
    its transpose (phase D)."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "split_relabel", True)
    # 0 -> 1 -> 2 -> 3 with a narrow middle arc, and 2 -> 1 back
    C = sp.csr_matrix((np.array([5, 1, 5, 4]), np.array([1, 2, 1, 3]), np.array([0, 1, 2, 4, 4])), shape=(4, 4))
    solver = MaxFlowSolver(C if backend == "numpy" else _cupyx(C), 0, 3, backend=backend)
    res = solver.solve()
    assert int(res.flow_value) == 1
    side = _np(solver._side).copy()
    assert side.tolist() == [True, True, False, False]
    assert _np(solver._sealed(False)).tolist() == (~side).tolist()

    def transposed():
        solver._LT["flow"][...] = solver._L["flow"][solver._t_of]   # as phase D starts
        return solver._sealed(True)

    assert _np(transposed()).tolist() == side.tolist()
    k = int(solver._arc_of[2])              # the arc 2 -> 1 (T -> S) gets flow
    solver._L["flow"][k] = 1
    assert solver._sealed(False) is None and transposed() is None
    solver._L["flow"][k] = 0
    j = int(solver._arc_of[1])              # the arc 1 -> 2 (S -> T) below its capacity
    solver._L["flow"][j] = 0
    assert solver._sealed(False) is None and transposed() is None
    solver._L["flow"][j] = 1
    assert _np(solver._sealed(False)).tolist() == (~side).tolist()
    monkeypatch.setitem(_dynamic.REPAIR, "split_relabel", False)
    assert solver._sealed(False) is None    # the option off


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


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernels", ["coop", "coop_long", "loop", "level"])
@pytest.mark.parametrize("back", [0.0, 1.0])
def test_path_pass_moves_flow_validly(backend, name, seed, kernels, back):
    """The augmenting-path pass of a repair, alone, on a random pseudo-flow:
    capacities and the balance of every vertex hold, flow stays inside the
    side, the excess shrinks by the amount reported, and an exhausted pass
    leaves no path from an excess to a target.  On the GPU the levels run
    in the cooperative launch (``coop``; ``coop_long``: every level counts
    as long), the one-block loop (``loop``) or one multi-block launch each
    (``level``)."""
    if backend == "numpy" and kernels in ("loop", "level"):
        pytest.skip("the NumPy twin has no kernels to choose (coop and coop_long cover it)")
    from gpumatch.flow import _paths

    C, s, t, V, L, rows = _max_flow_network(name)
    xp = np if backend == "numpy" else __import__("cupy")
    rng = np.random.default_rng(_seed(name, str(seed)))
    # a pseudo-flow: the flow of a max flow, then some arcs cut below it
    cut = rng.random(L["flow"].shape[0]) < 0.2
    L["flow"][cut] = rng.integers(0, L["flow"][cut] + 1)
    excess = _inflow_minus_outflow(C.indptr, C.indices, L["flow"])
    excess[[s, t]] = 0
    mask = rng.random(V) < (1.0 if seed == 0 else 0.8)
    target, other = (t, s) if seed != 2 else (s, t)
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    ex = xp.asarray(excess)
    before = excess.copy()
    flow0 = L["flow"].copy()
    # seed 1: the limits stop the pass early (it must then not claim to be exhausted)
    limits = {"levels": 1, "all_levels": 1, "phases": 1} if seed == 1 else {}
    limits["back"] = back   # 0: forward trees alone
    if kernels in ("coop_long", "level"):   # every level is long
        limits["short"] = 0
    limits["coop"] = kernels.startswith("coop")
    stats = _paths.route(_paths.buffers(backend, V, np.int64), Ld, ex, xp.asarray(mask), target, other,
                         limits=limits)
    flow1, ex1 = _np(Ld["flow"]), _np(ex)
    assert ((flow1 >= 0) & (flow1 <= C.data)).all()
    d = flow1 - flow0
    np.testing.assert_array_equal(ex1 - before, _inflow_minus_outflow(C.indptr, C.indices, d))
    moved = np.flatnonzero(d)
    heads, tails = C.indices[moved], rows[moved]
    assert (mask[tails] | (tails == target)).all() and (mask[heads] | (heads == target)).all()
    inner = mask.copy()
    inner[[s, t]] = False
    pos0 = before[inner].clip(0).sum()
    assert pos0 - ex1[inner].clip(0).sum() == stats["amount"]
    assert (ex1[inner & (before > 0)] >= 0).all() and (ex1[inner & (before < 0)] <= 0).all()
    roots = np.flatnonzero(inner & (ex1 > 0))
    if stats["exhausted"]:
        assert not _reaches(Ld, ex1, mask, target, other, roots)
    if seed != 1 and _reaches(L | {"flow": flow0}, before, mask, target, other,
                                   np.flatnonzero(inner & (before > 0))):
        assert stats["paths"] > 0


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernels", ["coop", "loop", "level"])
def test_path_pass_pairs_stay_paired(backend, name, seed, kernels):
    """The pass over pairs (``route(..., pairs=...)``) on the pseudo-flow
    of a max flow whose arcs were cut below their flow, each cut arc a
    pair (excess at its tail, the deficit at its head): capacities and
    balances hold, no arc at a terminal moves, only the tails' excess and
    the heads' deficits shrink (by the amount reported), every other
    vertex keeps its balance, ``exhausted`` means that no pair is left,
    and a pair left whose tail still reaches its head over residual arcs
    (brute force) finds its path when it is alone.  Seed 1: one pass."""
    if backend == "numpy" and kernels != "coop":
        pytest.skip("the NumPy twin has no kernels to choose")
    from gpumatch.flow import _paths

    C, s, t, V, L, rows = _max_flow_network(name)
    xp = np if backend == "numpy" else __import__("cupy")
    excess, tails, heads = _cut_below_flow(C, s, t, L, rows, np.random.default_rng(_seed(name, "pairs", str(seed))))
    cap = L["cap"]
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    ex = xp.asarray(excess)
    before, flow0 = excess.copy(), L["flow"].copy()
    limits = {"phases": 1 if seed == 1 else 64, "coop": kernels == "coop"}
    if kernels == "level":
        limits["short"] = 0
    bufs = _paths.buffers(backend, V, np.int64)
    stats = _paths.route(bufs, Ld, ex, xp.ones(V, dtype=bool), t, s, limits=limits,
                         pairs=(xp.asarray(tails), xp.asarray(heads)))
    assert (_np(bufs.partner) == -1).all()        # reset for the passes without pairs
    flow1, ex1 = _np(Ld["flow"]), _np(ex)
    assert ((flow1 >= 0) & (flow1 <= cap)).all()
    d = flow1 - flow0
    np.testing.assert_array_equal(ex1 - before, _inflow_minus_outflow(C.indptr, C.indices, d))
    moved = np.flatnonzero(d)
    assert not np.isin(rows[moved], [s, t]).any() and not np.isin(C.indices[moved], [s, t]).any()
    change = ex1 - before
    assert (change[np.setdiff1d(np.arange(V), np.concatenate([tails, heads]))] == 0).all()
    assert (ex1[before > 0] >= 0).all() and (ex1[before < 0] <= 0).all()
    assert before.clip(0).sum() - ex1.clip(0).sum() == stats["amount"]
    assert stats["amount"] == -(change[change < 0].sum())
    left = [(a, b) for a, b in zip(tails, heads) if ex1[a] > 0 and ex1[b] < 0]
    assert stats["exhausted"] == (not left)
    # a pair left whose tail reaches its head (brute force) was cut off by
    # other pairs' trees or by the pass limit: alone, it finds its path
    inner = np.ones(V, dtype=bool)
    inner[[s, t]] = False
    for a, b in left:
        if _reaches(Ld, np.where(np.arange(V) == b, -1, 0), inner, -1, -1, [a]):
            one = _paths.route(bufs, Ld, ex, xp.ones(V, dtype=bool), t, s, limits=limits | {"phases": 1},
                               pairs=(xp.asarray([a]), xp.asarray([b])))
            assert one["paths"] >= 1 and one["amount"] > 0
            break


@pytest.mark.parametrize("kernels", ["coop", "loop", "level"])
def test_path_pass_pairs_pass_nearer_deficits(backend, kernels):
    """A chain 1 -> 2 -> ... -> 9 (capacity 5) with 3 units of excess at 1
    paired with the deficit at 9, a nearer unpaired deficit at 3, and an
    unpaired excess at 5: the pair's path runs past 3 to 9 (taking the 3
    units), and the unpaired excess stays where it is."""
    if backend == "numpy" and kernels != "coop":
        pytest.skip("the NumPy twin has no kernels to choose")
    from gpumatch.flow import _maxflow, _paths

    xp = np if backend == "numpy" else __import__("cupy")
    N = 11     # 0: source, 10: sink, 1..9 the chain
    ip = np.array([0, 0] + list(range(1, 9)) + [8, 8])
    ix = np.arange(2, 10)
    L = _maxflow._build_rcsr(np, ip, ix, np.full(8, 5, dtype=np.int64), N)
    L = {k: xp.asarray(v) for k, v in L.items()}
    excess = xp.asarray(np.array([0, 3, 0, -2, 0, 1, 0, 0, 0, -3, 0], dtype=np.int64))
    limits = {"coop": kernels == "coop"}
    if kernels == "level":
        limits["short"] = 0
    stats = _paths.route(_paths.buffers(backend, N, np.int64), L, excess, xp.ones(N, dtype=bool), 10, 0,
                         limits=limits, pairs=(xp.asarray([1]), xp.asarray([9])))
    assert stats["paths"] == 1 and stats["amount"] == 3
    assert _np(excess).tolist() == [0, 0, 0, -2, 0, 1, 0, 0, 0, 0, 0]
    assert _np(L["flow"]).tolist() == [3] * 8


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


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("scale", [4, 1])
def test_detour_pass_moves_flow_validly(backend, name, seed, scale):
    """The detour pass alone, on a max flow whose arcs were cut below their
    flow (each cut arc a pair: excess at its tail, the deficit at its
    head): capacities hold, no arc across the cut moves, only the tails'
    excess and the heads' deficits shrink (by the amount reported), every
    other vertex keeps its balance (the terminals too: a path through one
    takes out as much as it brings), and every pair left with excess and
    deficit is one whose tail no longer reaches its head inside its side,
    the side's terminal included (brute force).  ``scale`` 1: every search
    takes any residual; 4: wide paths first."""
    from gpumatch.flow import _detour

    C, s, t, V, L, rows, side, excess, tails, heads = _cut_pairs(name, seed)
    xp = np if backend == "numpy" else __import__("cupy")
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    ex = xp.asarray(excess)
    before, flow0 = excess.copy(), L["flow"].copy()
    limits = {"rounds": 500, "levels": 10 ** 6, "scale": scale}
    stats = _detour.reroute(_detour.buffers(backend, V, np.int64), Ld, ex, xp.asarray(side), xp.asarray(tails),
                            xp.asarray(heads), s, t, limits=limits)
    flow1, ex1 = _np(Ld["flow"]), _np(ex)
    assert ((flow1 >= 0) & (flow1 <= L["cap"])).all()
    d = flow1 - flow0
    np.testing.assert_array_equal(ex1 - before, _inflow_minus_outflow(C.indptr, C.indices, d))
    moved = np.flatnonzero(d)
    assert (side[rows[moved]] == side[C.indices[moved]]).all()
    change = ex1 - before
    assert (change[np.setdiff1d(np.arange(V), np.concatenate([tails, heads]))] == 0).all()
    assert change[s] == 0 and change[t] == 0
    assert (ex1[before > 0] >= 0).all() and (ex1[before < 0] <= 0).all()
    assert before.clip(0).sum() - ex1.clip(0).sum() == stats["amount"]
    assert stats["amount"] == -(change[change < 0].sum())
    assert stats["open"] == 0 and stats["rounds"] < 500
    paired = [(a, b) for a, b in zip(tails, heads) if side[a] == side[b]]
    if name != "unit_bipartite":    # (unit cuts: the pairs' ends may be terminals' neighbours only)
        assert stats["pairs"] > 0 and stats["amount"] > 0
    for a, b in paired:
        if ex1[a] > 0 and ex1[b] < 0:
            assert b not in _residual_reach(Ld, side if side[a] else ~side, a)


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


@pytest.mark.parametrize("case", ["round", "levels", "thin"])
def test_detour_pass_small(backend, case):
    """A chain 0 -> 1 -> 2 -> 3 -> 4 (source 0, sink 4) with the detour
    1 -> 5 -> 6 -> 2 round arc 1 -> 2, which carried 5 and now has 2:
    the 3 units go round it (``round``); with searches of one level a
    side they cannot, and the pair drops out with its excess in place
    (``levels``); with a detour of capacity 2 (``thin``) its wide search
    finds nothing, the next, narrower one moves 2 units, the third finds
    nothing again and the pair drops out with 1 unit left, all in one
    round (a pair searches again at once)."""
    from gpumatch.flow import _detour

    xp = np if backend == "numpy" else __import__("cupy")
    arcs = [(0, 1, 5), (1, 2, 2), (1, 5, 5 if case != "thin" else 2), (2, 3, 5), (3, 4, 5), (5, 6, 5), (6, 2, 5)]
    N = 7
    C, L, pos, flow = _small_network(arcs, {(0, 1): 5, (2, 3): 5, (3, 4): 5, (1, 2): 2}, N)
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    excess = xp.asarray(np.array([0, 3, -3, 0, 0, 0, 0], dtype=np.int64))
    side = xp.asarray(np.array([True, True, True, True, False, True, True]))
    limits = {"levels": 1} if case == "levels" else {}
    st = _detour.reroute(_detour.buffers(backend, N, np.int64), Ld, excess, side, xp.asarray([1]), xp.asarray([2]),
                         0, 4, limits=limits)
    f = _np(Ld["flow"])
    moved = {"round": 3, "levels": 0, "thin": 2}[case]
    assert st["amount"] == moved and st["pairs"] == 1
    assert _np(excess).tolist() == [0, 3 - moved, moved - 3, 0, 0, 0, 0]
    assert [int(f[pos[k]]) for k in ((1, 5), (5, 6), (6, 2))] == [moved] * 3
    assert st["dropped"] == (0 if case == "round" else 1)
    if case == "thin":
        assert st["rounds"] == 1 and st["searches"] == 3


def test_detour_pass_threshold_bound(backend):
    """A search whose side runs out of vertices sets the next threshold to
    the largest residual below its own that it met.  Arc 1 -> 2 of the
    chain 0 -> 1 -> 2 -> 3 -> 4 carried 45 and now has 5, and the only
    detour, 1 -> 5 -> 6 -> 2, takes 3: the search at 40 finds no path and
    met no residual above 3, so the next searches at 3 (not at 10, then
    2), moves the 3 units, and the one after that met no residual at all,
    so the pair drops out at once (not after a search at 1): three
    searches where thresholds falling 4 times a search took five."""
    from gpumatch.flow import _detour

    xp = np if backend == "numpy" else __import__("cupy")
    arcs = [(0, 1, 50), (1, 2, 5), (1, 5, 3), (2, 3, 45), (3, 4, 45), (5, 6, 50), (6, 2, 50)]
    N = 7
    C, L, pos, flow = _small_network(arcs, {(0, 1): 45, (1, 2): 5, (2, 3): 45, (3, 4): 45}, N)
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    excess = xp.asarray(np.array([0, 40, -40, 0, 0, 0, 0], dtype=np.int64))
    side = xp.asarray(np.array([True, True, True, True, False, True, True]))
    st = _detour.reroute(_detour.buffers(backend, N, np.int64), Ld, excess, side, xp.asarray([1]), xp.asarray([2]),
                         0, 4)
    f = _np(Ld["flow"])
    assert st["amount"] == 3 and st["dropped"] == 1 and st["open"] == 0
    assert st["searches"] == 3 and st["rounds"] == 1
    assert _np(excess).tolist() == [0, 37, -37, 0, 0, 0, 0]
    assert [int(f[pos[k]]) for k in ((1, 5), (5, 6), (6, 2))] == [3] * 3


@pytest.mark.parametrize("end", ["source", "sink"])
def test_detour_pass_through_a_terminal(backend, end):
    """Pairs whose only detour runs through a terminal.  ``source``: the
    source 0 feeds 1 (9 of 9) and 2 (1 of 9); 1 -> 3, 2 -> 4, 3 -> 5 and
    4 -> 5 lead on to the sink 5, and 1 -> 4 is cut from 4 units to 1 on the
    source side {0, 1, 2, 4}: its 3 units go back into the source and out
    along 0 -> 2 -> 4.  ``sink``: the source side is {0}, 2 -> 3 is cut from
    4 to 1, and the 3 units go 2 -> 4 -> 5 into the sink and back out by
    cancelling 3 -> 5.  The terminal's balance does not change."""
    from gpumatch.flow import _detour

    xp = np if backend == "numpy" else __import__("cupy")
    if end == "source":
        arcs = [(0, 1, 9), (0, 2, 9), (1, 3, 5), (1, 4, 1), (2, 4, 5), (3, 5, 5), (4, 5, 5)]
        flows = {(0, 1): 9, (0, 2): 1, (1, 3): 5, (1, 4): 1, (2, 4): 1, (3, 5): 5, (4, 5): 5}
        excess = [0, 3, 0, 0, -3, 0]
        side = [True, True, True, False, True, False]
        pair = (1, 4)
        through = [(0, 1), (0, 2), (2, 4)]
        want = {(0, 1): 6, (0, 2): 4, (2, 4): 4}
    else:
        arcs = [(0, 1, 5), (0, 2, 5), (1, 3, 9), (2, 3, 1), (2, 4, 9), (3, 5, 9), (4, 5, 9)]
        flows = {(0, 1): 5, (0, 2): 5, (1, 3): 5, (2, 3): 1, (2, 4): 1, (3, 5): 9, (4, 5): 1}
        excess = [0, 0, 3, -3, 0, 0]
        pair = (2, 3)
        side = [True, False, False, False, False, False]
        through = [(2, 4), (4, 5), (3, 5)]
        want = {(2, 4): 4, (4, 5): 4, (3, 5): 6}
    N = 6
    C, L, pos, flow = _small_network(arcs, flows, N)
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    ex = xp.asarray(np.array(excess, dtype=np.int64))
    st = _detour.reroute(_detour.buffers(backend, N, np.int64), Ld, ex, xp.asarray(np.array(side)),
                         xp.asarray([pair[0]]), xp.asarray([pair[1]]), 0, 5)
    f = _np(Ld["flow"])
    assert st["amount"] == 3 and _np(ex).tolist() == [0] * N
    assert {k: int(f[pos[k]]) for k in through} == want
    np.testing.assert_array_equal(_inflow_minus_outflow(C.indptr, C.indices, f)[[0, 5]],
                                  _inflow_minus_outflow(C.indptr, C.indices, flow)[[0, 5]])


def test_detour_pass_chains(backend):
    """Two cut arcs in a row, 1 -> 2 -> 3, each cut by 3 below its flow: the
    middle vertex 2 is left balanced (nothing for the pair 1 -> 2 to fill,
    nothing for 2 -> 3 to send), and only the pair the chain adds, 1 -> 3,
    can move the excess of 1 round both arcs (along 1 -> 4 -> 3)."""
    from gpumatch.flow import _detour

    xp = np if backend == "numpy" else __import__("cupy")
    arcs = [(0, 1, 9), (1, 2, 2), (2, 3, 2), (1, 4, 9), (4, 3, 9), (3, 5, 9)]
    flows = {(0, 1): 5, (1, 2): 2, (2, 3): 2, (3, 5): 5}
    N = 6
    C, L, pos, flow = _small_network(arcs, flows, N)
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    ex = xp.asarray(np.array([0, 3, 0, -3, 0, 0], dtype=np.int64))
    side = xp.asarray(np.array([True] * 5 + [False]))
    st = _detour.reroute(_detour.buffers(backend, N, np.int64), Ld, ex, side, xp.asarray([1, 2]),
                         xp.asarray([2, 3]), 0, 5)
    f = _np(Ld["flow"])
    assert st["pairs"] == 3 and st["amount"] == 3 and _np(ex).tolist() == [0] * N
    assert int(f[pos[1, 4]]) == 3 and int(f[pos[4, 3]]) == 3


def test_detour_pass_skips_pairs_across_the_cut(backend):
    """A pair whose ends lie on two sides of the kept cut, or at a terminal,
    takes no part: nothing moves."""
    from gpumatch.flow import _detour, _maxflow

    xp = np if backend == "numpy" else __import__("cupy")
    L = _maxflow._build_rcsr(np, np.array([0, 1, 3, 4, 4, 5]), np.array([1, 2, 4, 3, 2]),
                             np.array([5, 2, 5, 5, 5]), 5)
    L["flow"] = np.array([5, 2, 0, 5, 0])
    Ld = {k: xp.asarray(v) for k, v in L.items()}
    excess = xp.asarray(np.array([0, 3, -3, 0, 0]))
    side = xp.asarray(np.array([True, True, False, False, True]))
    st = _detour.reroute(_detour.buffers(backend, 5, np.int64), Ld, excess, side, xp.asarray([1, 0]),
                         xp.asarray([2, 1]), 0, 3)
    assert st["pairs"] == 0 and st["amount"] == 0
    assert _np(Ld["flow"]).tolist() == [5, 2, 0, 5, 0]


@pytest.mark.gpu
def test_detour_pairs_host_and_device(monkeypatch):
    """On the GPU, short pair lists are chained and filtered on the host
    (``HOST_PAIRS``), long ones on the device: both give the pairs the
    NumPy code gives, in the same order (chains, pairs across the cut,
    at a terminal and of one vertex included)."""
    pytest.importorskip("cupy")
    from gpumatch import _backend
    from gpumatch.flow import _detour

    if _backend.resolve_backend("auto") != "cupy":
        pytest.skip("no usable GPU")
    import cupy as cp

    rng = np.random.default_rng(_seed("detour pairs"))
    V = 40
    side = rng.random(V) < 0.5
    tails = rng.integers(0, V, 300)
    heads = rng.integers(0, V, 300)
    heads[:20] = tails[20:40]            # chains
    want = _detour._pairs(np, tails, heads, side, 0, V - 1)
    assert want[0].shape[0] > 0
    for host in (_detour.HOST_PAIRS, 0):
        monkeypatch.setattr(_detour, "HOST_PAIRS", host)
        got = _detour._pairs(cp, cp.asarray(tails), cp.asarray(heads), cp.asarray(side), 0, V - 1)
        assert [g.get().tolist() for g in got] == [w.tolist() for w in want]


@pytest.mark.gpu
@pytest.mark.parametrize("what", ["stamps", "path_steps"])
def test_detour_pass_gpu_limits(what, monkeypatch):
    """On the GPU: blocks whose stamps would wrap start their tables afresh,
    and paths longer than ``PATH_STEPS`` are not pushed (a search whose
    paths are all longer drops its pair); either way the flow stays valid
    and the pass still moves flow."""
    pytest.importorskip("cupy")
    from gpumatch import _backend
    from gpumatch.flow import _detour

    if _backend.resolve_backend("auto") != "cupy":
        pytest.skip("no usable GPU")
    import cupy as cp

    if what == "path_steps":
        monkeypatch.setattr(_detour, "PATH_STEPS", 4)
    C, s, t, V, L, rows, side, excess, tails, heads = _cut_pairs("genrmf", 0, part=3)
    Ld = {k: cp.asarray(v) for k, v in L.items()}
    ex = cp.asarray(excess)
    bufs = _detour.buffers("cupy", V, np.int64)
    if what == "stamps":
        bufs._tables(_detour._ball(_detour.LIMITS, V))
        bufs.stamps.fill(np.uint32((1 << 32) - 3))
        bufs.stamp_used = (1 << 32) - 3
    flow0 = L["flow"].copy()
    st = _detour.reroute(bufs, Ld, ex, cp.asarray(side), cp.asarray(tails), cp.asarray(heads), s, t,
                         limits={"rounds": 500})
    flow1, ex1 = Ld["flow"].get(), ex.get()
    assert ((flow1 >= 0) & (flow1 <= L["cap"])).all()
    np.testing.assert_array_equal(ex1 - excess, _inflow_minus_outflow(C.indptr, C.indices, flow1 - flow0))
    assert st["amount"] > 0
    if what == "stamps":
        assert int(bufs.stamps.max()) < (1 << 20)


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["dec", "mixed"])
def test_flow_detours(backend, name, kind, monkeypatch):
    """Repairs that first re-route each cut arc's excess round the arc with
    the detour pass (``REPAIR["detour"]``, batches large and small) leave a
    maximum flow after every batch (``_flow_batches`` checks it against
    scipy and ``check_flow``), and the pass runs and moves flow where cuts
    are of more than one unit."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "detour", 32)
    monkeypatch.setitem(_dynamic.REPAIR, "small", dict(_dynamic.REPAIR["small"], detour=32))
    sizes = lambda nnz: [1, 2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    runs = [d for res, *_ in _flow_batches(backend, name, kind, sizes, seed=23) for d in res.stats.get("detours", [])]
    if name != "unit_bipartite":
        assert runs and sum(r[4] for r in runs) > 0


@pytest.mark.parametrize("kind", ["dec", "mixed"])
def test_flow_pair_share(backend, kind, monkeypatch):
    """``REPAIR["pair_share"]`` gates the detour pass by the share of the cut
    flow that its pairs carry: on the unit network with cuts of one unit
    paired (``pair_min`` 1), a share of 0 lets the pass run, one above 1
    never does (the pairs' cuts are part of all the cuts), and the flows
    stay maximum either way (``_flow_batches`` checks each one).  (What the
    pass moves depends on the flow, which differs between the backends.)"""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "pair_min", 1)
    sizes = lambda nnz: [2, max(1, nnz // 100), max(1, nnz // 10), 3]  # noqa: E731
    ran = {}
    for share in (0.0, 1.01):
        monkeypatch.setitem(_dynamic.REPAIR, "pair_share", share)
        ran[share] = [d for res, *_ in _flow_batches(backend, "unit_bipartite", kind, sizes, seed=29)
                      for d in res.stats.get("detours", [])]
    assert ran[0.0]
    assert ran[1.01] == []


def test_update_counts_cut_flow(backend, monkeypatch):
    """``update_capacities`` sums the flow its batches cut (new capacity
    below the flow), in all and on the arcs the pair passes take (cuts of
    at least ``REPAIR["pair_min"]`` units, neither end a terminal), which
    ``REPAIR["pair_share"]`` compares; the sums agree with the flow read from
    the result, across two batches of decreases, and restart after a solve."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "pair_min", 50)
    C, s, t = G.washington_rlg(8, 12, 100, seed=3)       # no anti-parallel arcs
    C = sp.csr_matrix(C).astype(np.int64)
    solver = MaxFlowSolver(C if backend == "numpy" else _cupyx(C), s, t, backend=backend,
                           rebuild_fraction=1.0, time_budget=None)
    F = solver.solve().flow
    F = sp.csr_matrix(F.get() if hasattr(F, "get") else F).tolil()
    coo = sp.coo_matrix(C)
    cap = coo.data.astype(np.int64).copy()
    rng = np.random.default_rng(5)
    total = paired = 0
    for _ in range(2):
        k = rng.choice(coo.nnz, size=coo.nnz // 4, replace=False)
        r, c = coo.row[k].astype(np.int64), coo.col[k].astype(np.int64)
        new = np.minimum(rng.integers(0, 60, size=k.shape[0]), cap[k]).astype(np.int64)   # decreases only
        f = np.asarray(F[r, c].todense()).ravel().astype(np.int64)
        cut = np.maximum(f - new, 0)
        inner = (r != s) & (r != t) & (c != s) & (c != t)
        total += int(cut.sum())
        paired += int(cut[(cut >= 50) & inner].sum())
        solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
        F[r, c] = np.minimum(f, new)          # the flow the batch leaves on its arcs
        cap[k] = new
    assert total > paired > 0
    assert (solver._cut_flow, solver._paired_flow) == (total, paired)
    solver.solve()
    assert (solver._cut_flow, solver._paired_flow) == (0, 0)


@pytest.mark.parametrize("limit", ["levels", "all_levels"])
def test_path_pass_limits(backend, limit):
    """A pass stopped by a level limit (long levels, or all levels) is not
    exhausted; given the levels, it routes the excess."""
    from gpumatch.flow import _maxflow, _paths

    xp = np if backend == "numpy" else __import__("cupy")
    # 0 -> 1 -> 2 -> 3 -> 4 -> 5, capacity 3; vertex 1 has 2 units of excess, 5 is the target
    ip, ix = np.array([0, 1, 2, 3, 4, 5, 5]), np.array([1, 2, 3, 4, 5])
    for levels, moved in ((2, 0), (4, 2)):
        L = _maxflow._build_rcsr(np, ip, ix, np.full(5, 3, dtype=np.int64), 6)
        L = {k: xp.asarray(v) for k, v in L.items()}
        excess = xp.asarray([0, 2, 0, 0, 0, 0])
        # every level counts as long with short 0; else none does;
        # forward trees alone, so that the levels count the hops from the excess
        limits = {"levels": levels, "short": 0} if limit == "levels" else {"all_levels": levels}
        limits["back"] = 0
        stats = _paths.route(_paths.buffers(backend, 6, np.int64), L, excess, xp.ones(6, dtype=bool), 5, 0,
                             limits=limits)
        assert stats["amount"] == moved and stats["exhausted"] == (moved == 2)
        assert _np(L["flow"]).tolist() == [0] + [moved] * 4
        assert _np(excess).tolist() == [0, 2 - moved, 0, 0, 0, moved]


@pytest.mark.parametrize("short", [None, 0])
@pytest.mark.parametrize("end", ["deficit", "target"])
def test_path_pass_two_sided_meets_halfway(backend, short, end):
    """An excess far from where it can go along a chain: the forward tree
    and a backward tree meet halfway, and the path runs on down the
    backward tree to its root: a deficit (the terminal lies behind it,
    outside the side, so only that path can place the excess), or the
    target's neighbour, whose arc into the target ends the path."""
    from gpumatch.flow import _maxflow, _paths

    xp = np if backend == "numpy" else __import__("cupy")
    N = 40   # 0 -> 1 -> ... -> 39, capacity 3; 2 units of excess at 1
    ip, ix = np.append(np.arange(N), N - 1), np.arange(1, N)
    levels = {}
    for back in (0.0, 1.0):
        L = _maxflow._build_rcsr(np, ip, ix, np.full(N - 1, 3, dtype=np.int64), N)
        L = {k: xp.asarray(v) for k, v in L.items()}
        excess = np.zeros(N, dtype=np.int64)
        excess[1] = 2
        mask = np.ones(N, dtype=bool)
        if end == "deficit":
            excess[N - 2] = -2
            mask[N - 1] = False
        excess = xp.asarray(excess)
        limits = {"back": back} if short is None else {"back": back, "short": short}
        stats = _paths.route(_paths.buffers(backend, N, np.int64), L, excess, xp.asarray(mask), N - 1, 0,
                             limits=limits)
        assert stats["paths"] == 1 and stats["amount"] == 2 and stats["exhausted"]
        if end == "deficit":
            assert _np(L["flow"]).tolist() == [0] + [2] * (N - 3) + [0]
            assert not _np(excess).any()
        else:
            assert _np(L["flow"]).tolist() == [0] + [2] * (N - 2)
            assert _np(excess).tolist() == [0] * (N - 1) + [2]
        assert (stats["back_levels"] > 0) == (back > 0)
        levels[back] = stats["levels"]
    # one-sided: a level per arc up to the deficit or the target; two-sided: about half
    hops = N - 3 if end == "deficit" else N - 2
    assert levels[0.0] == hops and levels[1.0] <= hops // 2 + 2


@pytest.mark.parametrize("limits,phases", [({"rate": 0.5}, 5), ({}, 1), ({"rate": 2.0}, 1),
                                           ({"rate": 0.5, "narrow_phases": 2}, 2)])
def test_path_pass_narrow_paths_go_on(backend, limits, phases):
    """One root with 10 units of excess and five disjoint paths of residual
    2 to the target: a pass routes one path (20 % of the excess, under the
    30 % of ``progress``), but its root found a path, so with ``rate`` 0.5
    the passes go on (not by default, nor with ``rate`` 2) until the excess
    is placed or ``narrow_phases`` passes ran (from the third pass on, 2
    units are 30 % of what is left: the passes go on by ``progress``
    alone)."""
    from gpumatch.flow import _maxflow, _paths

    xp = np if backend == "numpy" else __import__("cupy")
    # 0: the other terminal, 1: the root, 2..6: the middles, 7: the target
    rows = [0] + [1] * 5 + list(range(2, 7))
    cols = [1] + list(range(2, 7)) + [7] * 5
    C = sp.csr_matrix((np.full(len(rows), 2, dtype=np.int64), (rows, cols)), shape=(8, 8))
    C.sort_indices()
    L = _maxflow._build_rcsr(np, C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data, 8)
    L = {k: xp.asarray(v) for k, v in L.items()}
    excess = xp.asarray(np.array([0, 10, 0, 0, 0, 0, 0, 0], dtype=np.int64))
    stats = _paths.route(_paths.buffers(backend, 8, np.int64), L, excess, xp.ones(8, dtype=bool), 7, 0,
                         limits=limits)
    assert stats["phases"] == phases and stats["paths"] == phases and stats["amount"] == 2 * phases
    assert int(excess[1]) == 10 - 2 * phases and int(excess[7]) == 2 * phases


@pytest.mark.parametrize("few,phases", [(None, 2), (0, 1), (1, 1), (2, 2)])
def test_path_pass_stuck_roots_are_proved(backend, few, phases):
    """Three roots: one routes its unit of excess, two (5 units each) lead
    nowhere.  The pass moves 1 of 11 units (under ``progress``) and its
    trees ran to their end; with the two roots left no more than ``few``
    (and at least half the roots without one), a second pass runs,
    finds no path and proves the rest stuck (``exhausted``); else the pass
    stops there, not exhausted."""
    from gpumatch.flow import _maxflow, _paths

    xp = np if backend == "numpy" else __import__("cupy")
    # 0: the other terminal, 7: the target; 1 -> 7 (capacity 1), 2 -> 4 and 3 -> 5 dead ends
    rows, cols, caps = [0, 1, 2, 3], [1, 7, 4, 5], [1, 1, 5, 5]
    C = sp.csr_matrix((np.array(caps, dtype=np.int64), (rows, cols)), shape=(8, 8))
    C.sort_indices()
    L = _maxflow._build_rcsr(np, C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data, 8)
    L = {k: xp.asarray(v) for k, v in L.items()}
    excess = xp.asarray(np.array([0, 1, 5, 5, 0, 0, 0, 0], dtype=np.int64))
    limits = {} if few is None else {"few": few}
    stats = _paths.route(_paths.buffers(backend, 8, np.int64), L, excess, xp.ones(8, dtype=bool), 7, 0,
                         limits=limits)
    assert stats["phases"] == phases and stats["exhausted"] == (phases == 2)
    assert stats["paths"] == 1 and stats["amount"] == 1
    assert _np(excess).tolist() == [0, 0, 5, 5, 0, 0, 0, 1]


def _unit_mixed_repairs(backend, monkeypatch, batches=3):
    """A solver on a unit network of 10 000 + 10 000 vertices, then
    `batches` mixed batches of 0.1 % of its arcs repaired with the settings
    of larger batches: yields ``(result, updated matrix, s, t)`` after
    checking each dynamic result's flow against scipy."""
    from gpumatch.flow import _dynamic

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


@pytest.mark.parametrize("cross_fill", [True, False])
def test_flow_cross_fill(monkeypatch, cross_fill):
    """Unit network, mixed batches of 0.1 % of the arcs (NumPy, where the
    passes are deterministic): once phase X has sent excess back across the
    kept cut, the deficits the source side cannot fill may be reached from
    the source through the sink side.  With ``cross_fill`` phase D's pass
    over the whole network ("Dx") fills them first; without it they are
    cancelled towards the sink, and the fallback F has to find the
    augmenting paths that leaves.  Every flow is maximum either way."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "cross_fill", cross_fill)
    crossed = fallbacks = 0
    for res, C, s, t in _unit_mixed_repairs("numpy", monkeypatch):
        crossed += any(p[0] == "Dx" for p in res.stats.get("path_passes", []))
        fallbacks += bool(res.stats.get("fallback"))
    if cross_fill:
        assert crossed and not fallbacks
    else:
        assert not crossed and fallbacks


def test_path_pass_stuck(backend):
    """A pass whose trees all ran to their end with most roots left without
    a path reports ``stuck``: with ``few`` the next pass proves those roots
    stuck (``exhausted``); with ``few`` 0 (phase D's first pass under
    ``REPAIR["cross_proof"]`` False) the passes end there, not exhausted."""
    from gpumatch.flow import _maxflow, _paths

    xp = np if backend == "numpy" else __import__("cupy")
    # 1 -> 5 (capacity 1); vertices 1-4 hold one unit each, 2-4 have no arc out; 5 is the target, 0 the other terminal
    ip, ix = np.array([0, 0, 1, 1, 1, 1, 1]), np.array([5])
    for few, phases, exhausted in ((1024, 2, True), (0, 1, False)):
        L = _maxflow._build_rcsr(np, ip, ix, np.ones(1, dtype=np.int64), 6)
        L = {k: xp.asarray(v) for k, v in L.items()}
        excess = xp.asarray([0, 1, 1, 1, 1, 0])
        st = _paths.route(_paths.buffers(backend, 6, np.int64), L, excess, xp.ones(6, dtype=bool), 5, 0,
                          limits={"few": few})
        assert (st["phases"], st["paths"], st["exhausted"], st["stuck"]) == (phases, 1, exhausted, True)
        assert _host_array(excess).tolist() == [0, 0, 1, 1, 1, 1]


def _check_cut(res, C, s, t):
    """The result's source side is that of a minimum cut: it holds the
    source and not the sink, and its arcs out carry the flow's value."""
    side = _host_array(res.source_side).astype(bool)
    assert side[s] and not side[t]
    coo = sp.coo_matrix(C)
    out = side[coo.row] & ~side[coo.col] & (coo.row != coo.col)
    assert int(coo.data[out].sum()) == int(res.flow_value)


@pytest.mark.parametrize("f_root", [0, 1, 4])
def test_flow_fallback_from_the_source(backend, monkeypatch, f_root):
    """Unit network, mixed batches of 0.1 % of the arcs without the
    cross fill, which leaves augmenting paths to phase F.  With
    ``f_root``, F starts with passes from the source itself, one path
    each: where the last of them finds none, they alone finish the flow
    and give the cut (no F pass from saturated source arcs, no BFS after
    them); with one pass only, which finds a path, the sink's BFS runs
    again to see whether F must go on.  Every flow and cut is maximum /
    minimum either way."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "cross_fill", False)
    monkeypatch.setitem(_dynamic.REPAIR, "f_root", f_root)
    names = []
    for res, C, s, t in _unit_mixed_repairs(backend, monkeypatch):
        _check_cut(res, C, s, t)
        if res.stats.get("fallback"):
            names.append(([p[0] for p in res.stats.get("path_passes", []) if p[0] in ("F0", "F")]
                          + [p[0] for p in res.stats.get("phases") or []], res.stats["global_relabels"]))
    assert names                              # (on both backends the first batch ends in F)
    for n, bfs in names:
        if f_root == 0:
            assert "F0" not in n and "F" in n and bfs >= 2
        elif f_root == 4:
            assert n == ["F0"] and bfs == 1   # one path, then a pass that proves none is left
        else:
            # the one pass found a path and proved nothing: the sink's BFS
            # runs again, and here finds that none is left
            assert n[0] == "F0" and bfs >= 2


@pytest.mark.parametrize("last", [5, 3])
@pytest.mark.parametrize("coop", [True, False])
def test_flow_fallback_from_a_hub_source(backend, monkeypatch, last, coop):
    """Phase F's passes from a source of many arcs take its first level
    over the whole grid (``gpumatch_fp_hub_level``).  The source has an
    arc to each of 3 000 dead ends and one, the minimum cut, to a path
    a -> b -> sink; the cut's capacity rises from 1 to `cap`, and a phase
    X that only returns excess sends what the update pushed back, so F
    finds the path: one pass over the source's 3 001 arcs with it.  With
    ``b -> sink`` of 5, the path carries all that the kept cut allows,
    which is then a minimum cut again; with 3, a second pass finds no
    path, and its tree is the new source side.  On the GPU the levels
    after the source's run in one cooperative launch, or (``coop``
    False) the first of them, 3 001 long, in a multi-block launch."""
    from gpumatch.flow import _dynamic as D, _paths

    monkeypatch.setattr(D.MaxFlowSolver, "_excess_phase", _return_only)
    monkeypatch.setitem(_paths.LIMITS, "coop", coop)
    monkeypatch.setitem(D.REPAIR, "f_root", 4)
    n = 3000
    a, b, s, t = n, n + 1, n + 2, n + 3
    rows = [s] * n + [s, a, b]
    cols = list(range(n)) + [a, b, t]
    caps = [1] * n + [1, 5, last]
    C = sp.csr_matrix((np.asarray(caps, dtype=np.int64), (rows, cols)), shape=(n + 4, n + 4))
    C.sort_indices()
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend, rebuild_fraction=1.0, time_budget=None)
    assert int(solver.solve().flow_value) == 1
    solver.update_capacities(_to_backend(np.array([s]), backend), _to_backend(np.array([a]), backend),
                             _to_backend(np.array([4]), backend))
    C2 = _apply(C, [s], [a], [4])
    res = solver.solve()
    assert res.stats["fallback"]
    passes = 1 if last == 5 else 2
    assert [(p[0], p[1], p[3]) for p in res.stats["path_passes"] if p[0].startswith("F")] == [("F0", passes, 1)]
    assert not [p for p in res.stats.get("phases") or [] if p[0].startswith("F")]
    _check_flow_result(res, C2, s, t)
    _check_cut(res, C2, s, t)
    assert int(res.flow_value) == min(4, last)
    side = _host_array(res.source_side).astype(bool)
    assert side[:n].all() and side[s] and not side[t]
    assert side[[a, b]].tolist() == [last < 4] * 2     # the kept cut, or what the source reaches


def test_flow_cancel_2cycles(backend, monkeypatch):
    """Cancelling the flow round anti-parallel pairs of arcs leaves no pair
    carrying flow both ways, the same net flow (the output) and the same
    value; with ``cancel_2cycles`` a solve from scratch does it."""
    from gpumatch.flow import _dynamic

    C, s, t, maxcap = FLOW_GRAPHS["genrmf"]
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend)
    res = solver.solve()
    before = _np(solver._L["flow"]).copy()
    solver._cancel_2cycles()
    k, p = (_np(a) for a in solver._pairs)
    tail, head = _np(solver._tail_p), _np(solver._head_p)
    assert k.shape[0] > 0 and (tail[k] == head[p]).all() and (head[k] == tail[p]).all()
    flow = _np(solver._L["flow"])
    assert not ((flow[k] > 0) & (flow[p] > 0)).any()
    assert ((before[k] > 0) & (before[p] > 0)).any()      # there was something to cancel
    dense = lambda M: (M.get() if hasattr(M, "get") else M).toarray()   # noqa: E731
    assert (dense(solver._flow_matrix()) == dense(res.flow)).all() and dense(res.flow).any()
    assert int(solver._value()) == int(res.flow_value)
    monkeypatch.setitem(_dynamic.REPAIR, "cancel_2cycles", True)
    solver = MaxFlowSolver(Cin, s, t, backend=backend)
    res = solver.solve()
    flow = _np(solver._L["flow"])
    assert not ((flow[k] > 0) & (flow[p] > 0)).any()
    _check_flow_result(res, C, s, t)


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


@pytest.mark.parametrize("N", [2, 3, 40])
@pytest.mark.parametrize("idt", [np.int32, np.int64])
def test_unwind_returns_excess_the_way_it_came(backend, N, idt):
    """Excess at the end of a flow-carrying chain with 2-cycles goes back to
    the source in one round per arc, through the chain's arcs (never round
    a 2-cycle), and the flow stays conserved and within its capacities."""
    from gpumatch.flow import _maxflow

    xp = np if backend == "numpy" else __import__("cupy")
    K = _maxflow._kernels(backend)
    L, ctx = _ladder(N, 7, 1000, backend, idt)
    flow0 = _np(L["flow"]).copy()
    # cut the last arc's flow by 5 (as a decrease of its capacity would): excess 5 at N - 2
    last = int(np.nonzero((_np(L["indices"]) == N - 1))[0][0])
    L["flow"][last] -= 5
    excess = xp.zeros(N, dtype=np.int64)
    excess[N - 2] += 5
    excess[N - 1] -= 5
    st = {"excess": excess}
    if N == 2:   # the excess sits at the source: nothing to do
        assert K.unwind(ctx, st, xp.asarray([], dtype=idt), 0, N - 1, 100) == (0, 0)
        return
    rounds, left = K.unwind(ctx, st, xp.asarray([N - 2], dtype=idt), 0, N - 1, 4 * N)
    assert (rounds, left) == (N - 2, 0)
    ex = _np(st["excess"])
    assert ex[0] == 5 and ex[N - 1] == -5 and not ex[1:N - 1].any()
    flow = _np(L["flow"])
    assert ((flow >= 0) & (flow <= _np(L["cap"]))).all()
    # the chain's forward arcs lost 5 each (the last one by the cut), the 2-cycles kept their flow
    fwd = _np(L["indices"]) > np.repeat(np.arange(N), np.diff(_np(L["indptr"])))
    assert (flow0[fwd] - flow[fwd] == 5).all() and (flow0[~fwd] == flow[~fwd]).all()
    d = _inflow_minus_outflow(L["indptr"], L["indices"], L["flow"])
    assert d[0] == -2 and d[N - 1] == 2 and not d[1:N - 1].any()   # the flow's value: 7 - 5


def test_unwind_stops_at_max_rounds_and_spares_other(backend):
    """`max_rounds` bounds the rounds (the excess still listed is reported
    and kept), and flow from `other` is never cancelled."""
    from gpumatch.flow import _maxflow

    xp = np if backend == "numpy" else __import__("cupy")
    K = _maxflow._kernels(backend)
    N = 12
    L, ctx = _ladder(N, 7, 0, backend)
    excess = xp.zeros(N, dtype=np.int64)
    last = int(np.nonzero((_np(L["indices"]) == N - 1))[0][0])
    L["flow"][last] -= 3
    excess[N - 2] += 3
    st = {"excess": excess}
    rounds, left = K.unwind(ctx, st, xp.asarray([N - 2], dtype=np.int64), 0, N - 1, 4)
    assert (rounds, left) == (4, 1)
    ex = _np(st["excess"])
    assert ex[N - 6] == 3 and ex.sum() == 3 and (ex >= 0).all()
    # the source as `other`: the excess stops at vertex 1, whose only inflow comes from it
    rounds, left = K.unwind(ctx, st, xp.asarray([N - 6], dtype=np.int64), N - 1, 0, 100)
    ex = _np(st["excess"])
    assert ex[1] == 3 and ex.sum() == 3 and left == 0
    assert not _inflow_minus_outflow(L["indptr"], L["indices"], L["flow"])[2:N - 1].any()


def _cupyx(C):
    import cupyx.scipy.sparse as cpx

    return cpx.csr_matrix(sp.csr_matrix(C).astype(np.float64))


def test_flow_warm_up_batches_reach_every_repair_step(backend, monkeypatch):
    """The batches the CuPy warm-up runs (to compile every kernel a repair
    uses before a timed solve) reach the path passes and both push-relabel
    phases, and the detour pass in a round of its own, and give maximum
    flows."""
    from gpumatch.flow import _dynamic

    C = _dynamic._warm_network()
    solver = MaxFlowSolver(C, 16, 17, backend=backend, rebuild_fraction=1.0, time_budget=None)
    solver.solve()
    C2 = C.copy()
    # (the warm-up turns the detour pass off for its first rounds, and runs it alone last)
    detour = int(_dynamic.REPAIR["small"].get("detour") or _dynamic.REPAIR.get("detour") or 0)
    monkeypatch.setitem(_dynamic.REPAIR, "detour", 0)
    monkeypatch.setitem(_dynamic.REPAIR, "small", dict(_dynamic.REPAIR["small"], detour=0))
    bound = _dynamic.REPAIR.get("push_bound")
    monkeypatch.setitem(_dynamic.REPAIR, "push_bound", False)   # (and the bounds on the cut pushes)
    results = _dynamic._warm_batches(solver, C2, lambda a: _to_backend(a, backend))
    passes = {p[0] for res in results for p in res.stats.get("path_passes", [])}
    phases = {p[0] for res in results for p in res.stats.get("phases", [])}
    assert passes
    if backend == "numpy":   # the GPU's claims race, so which excess is left to each step varies
        # (the relabel-ratio rule is timed, so phase D's pass across a
        # crossed cut, "Dx", runs in some schedules too)
        assert {"X", "D"} <= passes <= {"X", "D", "Dx"} and {"X", "D"} <= phases
        assert any(res.stats.get("cut") == "bfs" for res in results)
    _check_flow_result(results[-1], C2, 16, 17)
    # the warm-up's second round: the settings of small batches, split
    # relabels included, with push-relabel alone
    small = 1.0 if _dynamic.REPAIR.get("small") else 0
    monkeypatch.setitem(_dynamic.REPAIR, "small_batch", small)
    monkeypatch.setitem(_dynamic.REPAIR, "paths", False)
    results = _dynamic._warm_batches(solver, C2, lambda a: _to_backend(a, backend))
    assert {res.stats["repair_settings"] for res in results} == {"small" if small else "default"}
    if small and _dynamic.REPAIR["small"].get("split_relabel"):
        assert sum(res.stats.get("split_relabels", 0) for res in results) > 0
    _check_flow_result(results[-1], C2, 16, 17)
    # the last round: the detour pass runs and moves flow, and the bounds
    # on the cut pushes run (a batch of increases pushes across the cut)
    if detour or bound:
        monkeypatch.setitem(_dynamic.REPAIR, "pair_min", 1)
        monkeypatch.setitem(_dynamic.REPAIR, "push_bound", bound)
        monkeypatch.setitem(_dynamic.REPAIR, "small", dict(_dynamic.REPAIR["small"], detour=detour))
        calls = []
        if bound and backend == "numpy":
            real = _dynamic.MaxFlowSolver._push_bound_xp
            monkeypatch.setattr(_dynamic.MaxFlowSolver, "_push_bound_xp",
                                lambda self, *a: calls.append(1) or real(self, *a))
        results = _dynamic._warm_batches(solver, C2, lambda a: _to_backend(a, backend))
        if detour:
            assert sum(d[4] for res in results for d in res.stats.get("detours", [])) > 0
        if bound and backend == "numpy":
            assert calls
        _check_flow_result(results[-1], C2, 16, 17)


def test_flow_rebuild_switch():
    C, s, t, maxcap = FLOW_GRAPHS["rlg"]
    rng = np.random.default_rng(5)
    solver = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=0.05, time_budget=None)
    assert solver.solve().stats["mode"] == "scratch"
    r, c, new = _capacity_batch(rng, C, "mixed", C.nnz // 5, maxcap)
    solver.update_capacities(r, c, new)
    C = _apply(C, r, c, new)
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    _check_flow_result(res, C, s, t)
    r, c, new = _capacity_batch(rng, C, "mixed", 2, maxcap)
    solver.update_capacities(r, c, new)
    C = _apply(C, r, c, new)
    res = solver.solve()
    assert res.stats["mode"] == "dynamic"
    _check_flow_result(res, C, s, t)
    assert solver.solve().stats["mode"] == "cached"


def test_flow_time_budget_abandons_repair(backend):
    C, s, t, maxcap = FLOW_GRAPHS["genrmf"]
    rng = np.random.default_rng(6)
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend, rebuild_fraction=1.0, time_budget=0.0)
    solver.solve()
    modes = set()
    for kind in ["dec", "inc", "mixed"]:
        r, c, new = _capacity_batch(rng, C, kind, 5, maxcap)
        solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
        C = _apply(C, r, c, new)
        res = solver.solve()
        modes.add(res.stats["mode"])
        _check_flow_result(res, C, s, t)
    assert modes <= {"dynamic", "dynamic->scratch"}


def test_flow_small_example_and_zero_capacity_arcs():
    # an explicit zero arc can be raised later; self-loops are ignored
    C = sp.csr_matrix((np.array([3, 0, 2, 5, 4]), (np.array([0, 0, 1, 1, 2]), np.array([1, 2, 1, 3, 3]))),
                      shape=(4, 4))
    solver = MaxFlowSolver(C, 0, 3, backend="numpy")
    assert int(solver.solve().flow_value) == 3
    solver.update_capacities([0], [2], [7])
    res = solver.solve()
    assert int(res.flow_value) == 7
    C2 = _apply(C, [0], [2], [7])
    check_flow(C2, 0, 3, res.flow, 7)
    solver.update_capacities([1, 1], [1, 3], [9, 0])   # self-loop and a cut of 3 units
    res = solver.solve()
    C3 = _apply(C2, [1, 1], [1, 3], [9, 0])
    assert int(res.flow_value) == 4
    check_flow(C3, 0, 3, res.flow, 4)
    assert solver.capacities().toarray().tolist() == C3.toarray().tolist()


def test_flow_bad_updates_leave_state(backend):
    C, s, t, maxcap = FLOW_GRAPHS["genrmf"]
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, s, t, backend=backend)
    v0 = int(solver.solve().flow_value)
    coo = sp.coo_matrix(C)
    r0, c0 = int(coo.row[0]), int(coo.col[0])
    V = C.shape[0]
    missing = next((u, v) for u in range(V) for v in range(V) if u != v and C[u, v] == 0)
    bad = [
        ([r0, r0], [c0], [1, 2]),                 # mismatched lengths
        ([r0], [c0], [-1]),                       # negative capacity
        ([r0], [c0], [1.5]),                      # not an integer
        ([r0, missing[0]], [c0, missing[1]], [0, 1]),   # unknown arc (after a valid one)
        ([r0, r0], [c0, c0], [0, 1]),             # twice in one batch
        ([V], [0], [1]),                          # out of range
        ([[r0]], [[c0]], [[1]]),                  # not one-dimensional
    ]
    for r, c, k in bad:
        with pytest.raises(ValueError):
            solver.update_capacities(r, c, k)
    res = solver.solve()
    assert res.stats["mode"] == "cached"
    assert int(res.flow_value) == v0
    # a real change afterwards is still solved right
    solver.update_capacities([r0], [c0], [0])
    C2 = _apply(C, [r0], [c0], [0])
    _check_flow_result(solver.solve(), C2, s, t)


def test_flow_options():
    C, s, t, _ = FLOW_GRAPHS["rlg"]
    with pytest.raises(ValueError):
        MaxFlowSolver(C, s, t, backend="numpy", layout="bcsr")
    with pytest.raises(ValueError):
        MaxFlowSolver(C, s, s, backend="numpy")
    with pytest.raises(ValueError):
        MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=-1)


@pytest.mark.parametrize("kind", ["dec", "mixed"])
def test_flow_corpus(backend, corpus_dir, kind):
    from gpumatch.io import read_dimacs_max

    entries = [e for e in corpus_manifest() if e["kind"] == "maxflow"]
    entries = sorted(entries, key=lambda e: (corpus_dir / e["file"]).stat().st_size)[:2]
    if not entries:
        pytest.skip("no max-flow instances in the corpus")
    rng = np.random.default_rng(11)
    for e in entries:
        C, s, t = read_dimacs_max(corpus_dir / e["file"])
        C = sp.csr_matrix(C, dtype=np.int64)
        if C.nnz > 50_000 and backend == "numpy":
            continue
        Cin = C if backend == "numpy" else _cupyx(C)
        solver = MaxFlowSolver(Cin, s, t, backend=backend, rebuild_fraction=1.0, time_budget=None)
        _check_flow_result(solver.solve(), C, s, t)
        maxcap = int(C.data.max()) if C.nnz else 1
        for size in [1, max(1, C.nnz // 100)]:
            r, c, new = _capacity_batch(rng, C, kind, size, maxcap)
            solver.update_capacities(_to_backend(r, backend), _to_backend(c, backend), _to_backend(new, backend))
            C = _apply(C, r, c, new)
            _check_flow_result(solver.solve(), C, s, t)


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


@pytest.mark.parametrize("name", sorted(MATCHING_GRAPHS))
@pytest.mark.parametrize("kind", ["inc", "dec", "mixed"])
@pytest.mark.parametrize("warm_init,warm_method", [("none", "augment"), ("greedy", "augment"), ("none", "gpr"),
                                                   ("greedy", "gpr")])
def test_matching_batches(backend, name, kind, warm_init, warm_method):
    A = MATCHING_GRAPHS[name]
    rng = np.random.default_rng(_seed(name, kind))
    Ain = A if backend == "numpy" else _cupyx(A)
    solver = MatchingSolver(Ain, backend=backend, rebuild_fraction=1.0, warm_init=warm_init,
                            warm_method=warm_method)
    _check_matching_result(solver.solve(), A)
    for size in [1, 2, max(1, A.nnz // 1000), max(1, A.nnz // 100), max(1, A.nnz // 10), 1]:
        ar, ac, rr, rc = _edge_batch(rng, A, kind, size)
        solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
        solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
        A = _apply_edges(A, ar, ac, rr, rc)
        res = solver.solve()
        assert res.stats["mode"] == "dynamic"
        _check_matching_result(res, A)
        perm = solver.matching("column")
        perm = perm if isinstance(perm, np.ndarray) else perm.get()
        check_matching(A, perm, "column", expected_size=res.size)


def test_matching_rebuild_and_cache():
    A = MATCHING_GRAPHS["bipartite"]
    rng = np.random.default_rng(3)
    solver = MatchingSolver(A, backend="numpy", rebuild_fraction=0.05)
    assert solver.solve().stats["mode"] == "scratch"
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", A.nnz // 4)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    _check_matching_result(res, A)
    assert solver.solve().stats["mode"] == "cached"
    assert (solver.graph() != A).nnz == 0


@pytest.mark.parametrize("path", ["rank", "sort"])
def test_matching_bad_updates_leave_state(backend, path, monkeypatch):
    """Bad batches raise a message naming the problem and change nothing, on
    each path a batch can take on the GPU: ordered and checked in one
    launch (small), or sorted and checked by CuPy (NumPy has one path)."""
    from gpumatch import csr as _csr

    if path == "sort":
        monkeypatch.setattr(_csr, "RANK_BATCH", 0)
    A = MATCHING_GRAPHS["rect"]
    m, n = A.shape
    Ain = A if backend == "numpy" else _cupyx(A)
    solver = MatchingSolver(Ain, backend=backend)
    size0 = solver.solve().size
    coo = A.tocoo()
    r0, c0 = int(coo.row[0]), int(coo.col[0])
    missing = next((i, j) for i in range(m) for j in range(n) if A[i, j] == 0)
    bad_remove = [([r0, missing[0]], [c0, missing[1]], "not in the graph"), ([r0], [c0, c0], "same length"),
                  ([m], [0], f"rows: index {m} is out of range"), ([0], [-1], "cols: index -1 is out of range"),
                  ([r0, r0], [c0, c0], "more than once"), ([0.5], [1], "integer")]
    for r, c, msg in bad_remove:
        with pytest.raises(ValueError, match=msg):
            solver.remove_edges(r, c)
    for r, c, msg in [([missing[0], r0], [missing[1], c0], f"edge \\({r0}, {c0}\\) is already in the graph"),
                      ([0], [n], f"cols: index {n} is out of range"),
                      ([missing[0]] * 2, [missing[1]] * 2, "more than once")]:
        with pytest.raises(ValueError, match=msg):
            solver.add_edges(r, c)
    res = solver.solve()
    assert res.stats["mode"] == "cached" and res.size == size0
    assert solver.num_edges == A.nnz
    solver.remove_edges([r0], [c0])
    A2 = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([r0]), np.array([c0]))
    _check_matching_result(solver.solve(), A2)


def test_matching_corpus(backend, corpus_dir):
    from gpumatch.io import read_matrix_market

    entries = [e for e in corpus_manifest() if e["kind"] == "matching" and 1000 <= e["nnz_stored"] <= 6000]
    if not entries:
        pytest.skip("no small matching instances in the corpus")
    rng = np.random.default_rng(13)
    for e in entries[:2]:
        A = sp.csr_matrix(read_matrix_market(corpus_dir / e["file"]))
        A.sum_duplicates()
        Ain = A if backend == "numpy" else _cupyx(A)
        solver = MatchingSolver(Ain, backend=backend, rebuild_fraction=1.0)
        _check_matching_result(solver.solve(), A)
        for kind in ["dec", "mixed", "inc"]:
            ar, ac, rr, rc = _edge_batch(rng, A, kind, max(1, A.nnz // 100))
            solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
            solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
            A = _apply_edges(A, ar, ac, rr, rc)
            _check_matching_result(solver.solve(), A)


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


@pytest.mark.parametrize("name", sorted(MATCHING_GRAPHS) + ["mesh"])
def test_matching_kept_forest_certifies(backend, name, aug_launch, two_sided):
    """Long random sequences of batches (several calls between solves, both
    kinds, sizes from one edge to 10 %): after each solve the kept forest is a
    Koenig certificate, the solve was incremental and its matching is maximum;
    or the backward trees certified it (``BACK_CERTIFICATE``), the forest is
    dropped and the next solve starts from every free row."""
    A = MATCHING_GRAPHS[name] if name != "mesh" else sp.csr_matrix(G.delaunay(300, seed=2))
    A = sp.csr_matrix(A)
    A.sort_indices()
    rng = np.random.default_rng(_seed("forest", name))
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0)
    solver.solve()
    incremental = closings = backward = 0
    fresh = False   # the solve before certified from the backward side: this one starts afresh
    for step in range(14 if backend == "numpy" else 8):
        for _ in range(int(rng.integers(1, 4))):
            kind = ("inc", "dec", "mixed")[int(rng.integers(3))]
            size = int(rng.choice([1, 2, 5, max(1, A.nnz // 50), max(1, A.nnz // 10)]))
            ar, ac, rr, rc = _edge_batch(rng, A, kind, size)
            if rng.random() < 0.5:
                solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
                solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
            else:
                solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
                solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
            A = _apply_edges(A, ar, ac, rr, rc)
        res = solver.solve()
        assert res.stats["aug_converged"], step
        _check_launch(res.stats, backend, aug_launch)
        _check_two_sided(res.stats, two_sided)
        assert not (fresh and res.stats["aug_incremental"]), step
        incremental += res.stats["aug_incremental"] or fresh
        closings += res.stats.get("aug_closings", 0)
        _check_matching_result(res, A)
        fresh = res.stats["aug_certificate"] == "backward"
        backward += fresh
        if fresh:
            assert not solver._st.extra["augment"]["valid"]
        else:
            _check_forest(solver, A)
    assert incremental >= (13 if backend == "numpy" else 7)   # every solve but the first after G-PR
    from gpumatch.matching import _augment

    if two_sided > 0 and _augment.DEFER_CLOSING:   # the deferred closing phases ran (and certified)
        assert closings > 0 if not _augment.BACK_CERTIFICATE else closings + backward > 0
    if not _augment.BACK_CERTIFICATE:
        assert backward == 0


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
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0)
    solver.solve()
    extra = int(np.flatnonzero(A[0].toarray()[0] == 0)[0])
    solver.add_edges(_to_backend(np.array([0]), backend), _to_backend(np.array([extra]), backend))
    A = _apply_edges(A, np.array([0]), np.array([extra]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    solver.solve()
    return solver, A


@pytest.mark.parametrize("what", ["tree_edge", "matched_edge", "open_tree"])
def test_matching_repairs_keep_trees(backend, aug_launch, forest_only, what):
    """Removing a live tree's parent edge where another parent exists, or one
    matched edge of a live tree, repairs the tree in place: the next solve
    regrows nothing (empty first frontier), the tree is kept (orphaned for a
    matched edge) and the forest still certifies a maximum matching.  A tree
    that an added edge left open (pending) is not orphaned but regrown."""
    solver, A = _solver_with_forest(backend)
    m, n = A.shape
    tree_row, root_col, parent, depth, tstate, mu_col = _forest_host(solver, m, n)
    csc = A.tocsc()
    pick = None
    for c in np.flatnonzero(root_col >= 0):
        t = root_col[c]
        if tstate[t] != 0:
            continue
        rows = csc.indices[csc.indptr[c]:csc.indptr[c + 1]]
        if what != "tree_edge":
            pick = (int(mu_col[c]), int(c), t)
            break
        other = [u for u in rows if u != parent[c] and tree_row[u] == t and depth[u] <= depth[parent[c]]]
        if other:
            pick = (int(parent[c]), int(c), t)
            break
    assert pick is not None, "the forest has no such column"
    r, c, t = pick
    size = solver.solve().size
    if what == "open_tree":   # first an edge from the tree to a column of no tree
        out = int(np.flatnonzero(root_col < 0)[0])
        solver.add_edges(_to_backend(np.array([t]), backend), _to_backend(np.array([out]), backend))
        A = _apply_edges(A, np.array([t]), np.array([out]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    solver.remove_edges(_to_backend(np.array([r]), backend), _to_backend(np.array([c]), backend))
    A = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([r]), np.array([c]))
    res = solver.solve()
    _check_launch(res.stats, backend, aug_launch)
    _check_matching_result(res, A)
    _check_forest(solver, A)
    if what == "open_tree":
        assert res.stats["aug_seeds"] > 0
        return
    assert res.stats["aug_seeds"] == 0 and res.stats["aug_paths"] == 0 and res.size == size
    tree_row2, root_col2, _, _, tstate2, _ = _forest_host(solver, m, n)
    assert root_col2[c] == t and tstate2[t] == (1 if what == "matched_edge" else 0)


def test_matching_dead_tree_is_released(backend, aug_launch, forest_only):
    """Two matched edges of one live tree removed in one batch kill the tree:
    the next solve's first phase releases exactly that tree's columns
    (``aug_released``, on every launch path), and the forest certifies the
    new maximum matching."""
    solver, A = _solver_with_forest(backend)
    m, n = A.shape
    tree_row, root_col, parent, depth, tstate, mu_col = _forest_host(solver, m, n)
    cols = np.flatnonzero(root_col >= 0)
    trees, counts = np.unique(root_col[cols], return_counts=True)
    live = [t for t, k in zip(trees, counts) if k >= 2 and tstate[t] == 0]
    assert live, "the forest has no live tree of two columns"
    t = live[0]
    c = np.flatnonzero(root_col == t)[:2]
    r = mu_col[c]
    solver.remove_edges(_to_backend(r, backend), _to_backend(c, backend))
    A = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), r, c)
    res = solver.solve()
    _check_launch(res.stats, backend, aug_launch)
    assert res.stats["aug_released"] == int((root_col == t).sum())
    _check_matching_result(res, A)
    _check_forest(solver, A)


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


@pytest.mark.parametrize("start", ["empty", "greedy"])
@pytest.mark.parametrize("loop_max", ["cooperative", 0, 3, 2048])
def test_augment_phases_reach_maximum(backend, start, loop_max, monkeypatch):
    """Augmenting-path phases from any consistent matching end at a maximum one
    (on the GPU: one cooperative launch, the default, or a launch per step
    with grid-wide levels only, short one-block loops or the default loops)."""
    from gpumatch.matching import _augment
    from gpumatch.matching._augment import augment

    if backend == "numpy" and loop_max != "cooperative":
        pytest.skip("LOOP_MAX and COOPERATIVE only steer the CUDA launches")
    monkeypatch.setattr(_augment, "COOPERATIVE", loop_max == "cooperative")
    if loop_max != "cooperative":
        monkeypatch.setattr(_augment, "LOOP_MAX", loop_max)

    graphs = dict(MATCHING_GRAPHS)
    graphs["mesh"] = sp.csr_matrix(G.delaunay(400, seed=5))
    graphs["rmat"] = sp.csr_matrix(G.rmat(9, 6, seed=6))
    graphs["empty_rows"] = sp.csr_matrix((np.ones(3), ([0, 0, 4], [1, 2, 2])), shape=(6, 4))
    graphs["no_edges"] = sp.csr_matrix((5, 3))
    for name, A in graphs.items():
        A = sp.csr_matrix(A)
        A.sort_indices()
        st = _augment_state(A, backend, start)
        stats = augment(st)
        assert stats["aug_converged"], name
        assert stats["aug_cooperative"] == (backend == "cupy" and loop_max == "cooperative")
        mu_row, mu_col = _host(st.mu_row), _host(st.mu_col)
        size = int((sp_matching(A, perm_type="row") >= 0).sum())
        check_matching(A, mu_col, "row", expected_size=size)
        if stats["aug_cooperative"]:
            assert stats["aug_matched"] == size, name
        matched = np.flatnonzero(mu_row >= 0)
        assert np.array_equal(mu_col[mu_row[matched]], matched), name   # both sides agree
        if start == "empty":
            assert stats["aug_paths"] == size, name


def test_augment_random_starts(backend, aug_launch, two_sided):
    """Many small random graphs, each from a random consistent partial matching:
    the phases' stopping rule (no flipped tree touched) never stops early."""
    from gpumatch.matching._augment import augment

    rng = np.random.default_rng(_seed("augment-random"))
    for trial in range(60 if backend == "numpy" else 20):
        m, n = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        A = _random_pattern(rng, m, n, int(rng.integers(1, 3 * (m + n))))
        st = _augment_state(A, backend, "empty")
        # a random partial matching: a random subset of a greedy one
        xp = np if backend == "numpy" else __import__("cupy")
        coo = A.tocoo()
        order = rng.permutation(coo.nnz)
        mr, mc = np.full(m, -1), np.full(n, -1)
        for e in order:
            r, c = coo.row[e], coo.col[e]
            if mr[r] < 0 and mc[c] < 0 and rng.random() < 0.7:
                mr[r], mc[c] = c, r
        st.mu_row[...] = xp.asarray(mr.astype(st.mu_row.dtype))
        st.mu_col[...] = xp.asarray(mc.astype(st.mu_col.dtype))
        stats = augment(st)
        assert stats["aug_converged"]
        _check_launch(stats, backend, aug_launch)
        _check_two_sided(stats, two_sided)
        size = int((sp_matching(A, perm_type="row") >= 0).sum())
        check_matching(A, _host(st.mu_col), "row", expected_size=size)
        assert stats["aug_paths"] == size - int((mr >= 0).sum()), trial


@pytest.mark.parametrize("back_cert", [False, True])
@pytest.mark.parametrize("k", [1, 2, 9, 40])
def test_augment_two_sided_meets_halfway(backend, aug_launch, k, back_cert, monkeypatch):
    """One augmenting path of 2k + 1 edges (rows 0..k, columns 0..k, row i + 1
    matched to column i; row 0 and column k free).  Searched from both ends
    it is found in about k / 2 levels, through the backward tree of column k
    (and the second phase closes the kept tree over the rows of that tree's
    path in one more level); from row 0 alone it takes k + 1 levels.  Either
    way the flip gives the perfect matching.  With ``BACK_CERTIFICATE`` the
    second phase, a search phase, proves it (no free column is left, so the
    backward side is empty and touched nothing) and the forest is dropped."""
    from gpumatch.matching import _augment

    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", back_cert)
    rows = np.concatenate([np.arange(k + 1), np.arange(1, k + 1)])
    cols = np.concatenate([np.arange(k + 1), np.arange(k)])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(k + 1, k + 1))
    A.sort_indices()
    for ratio, levels in ((1.0, k // 2 + 3), (0.0, k + 1)):
        monkeypatch.setattr(_augment, "BACK_RATIO", ratio)
        st = _augment_state(A, backend, "empty")
        xp = np if backend == "numpy" else __import__("cupy")
        mr = np.concatenate([[-1], np.arange(k)])
        mc = np.concatenate([np.arange(1, k + 1), [-1]])
        st.mu_row[...] = xp.asarray(mr.astype(st.mu_row.dtype))
        st.mu_col[...] = xp.asarray(mc.astype(st.mu_col.dtype))
        stats = _augment.augment(st)
        _check_launch(stats, backend, aug_launch)
        assert stats["aug_converged"] and stats["aug_paths"] == 1
        # the first phase finds the path, the second proves the matching
        # perfect; with the closing deferred a search phase that flips nothing
        # comes first and then the closing phase, unless that search phase
        # certifies from the backward side
        deferred = ratio > 0 and _augment.DEFER_CLOSING
        backward = deferred and back_cert
        assert stats["aug_phases"] == (3 if deferred and not backward else 2)
        assert stats.get("aug_closings", 0) == (1 if deferred and not backward else 0)
        assert stats["aug_certificate"] == ("backward" if backward else "forest")
        assert st.extra["augment"]["valid"] == (not backward)
        if ratio > 0:   # k = 1: the search tree reaches the free column itself, not through its tree
            assert stats["aug_met"] == (1 if k >= 2 else 0) and stats["aug_levels"] <= levels, stats
            assert stats["aug_back_levels"] >= 1
        else:
            assert stats["aug_met"] == 0 and stats["aug_levels"] == levels, stats
        check_matching(A, _host(st.mu_col), "row", expected_size=k + 1)
        assert (_host(st.extra["augment"]["root_col"]) >= -1).all()


def test_augment_cut_search_phase_is_closed_before_converging(backend, aug_launch, forest_only):
    """A search phase cut with a tree still growing leaves that tree open, so a
    later search phase cannot prove the matching maximum even when it releases
    nothing: the closing phase closes the tree first, and the kept forest is a
    certificate.  Rows 0 and 1 are free, column 0 is free; row 0's tree meets
    column 0's backward tree at once (it claims no column, so the next phase
    releases nothing), while row 1's tree grows down the chain 1 - c1 = 2 - c2
    = 3 - c3 = 4 (= matched) and is cut when no backward tree is left.  (With
    ``BACK_CERTIFICATE`` the second phase proves the matching maximum from
    the columns' side instead: no column is free after the flip.)"""
    from types import SimpleNamespace

    from gpumatch.matching import _augment

    rows = np.array([0, 1, 2, 2, 3, 3, 4])
    cols = np.array([0, 1, 1, 2, 2, 3, 3])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(5, 4))
    A.sort_indices()
    st = _augment_state(A, backend, "empty")
    xp = np if backend == "numpy" else __import__("cupy")
    st.mu_row[...] = xp.asarray(np.array([-1, -1, 1, 2, 3]).astype(st.mu_row.dtype))
    st.mu_col[...] = xp.asarray(np.array([-1, 2, 3, 4]).astype(st.mu_col.dtype))
    stats = _augment.augment(st)
    _check_launch(stats, backend, aug_launch)
    assert stats["aug_converged"] and stats["aug_paths"] == 1
    # search (flips row 0's path), search (flips nothing, releases nothing), closing
    assert stats["aug_phases"] == 3 and stats["aug_closings"] == 1, stats
    check_matching(A, _host(st.mu_col), "row", expected_size=4)
    _check_forest(SimpleNamespace(_st=st, _mu_row=st.mu_row, _mu_col=st.mu_col), A)


def test_matching_backward_certificate_needs_untouched_trees(backend, aug_launch, monkeypatch):
    """The backward certificate must not stand when the backward side touched
    a search tree.  Rows a, b both see only column x; row d sees columns y
    and z.  After a warm solve the forest holds the tree of the free one of
    a, b (x and its mate); removing the matched edge at x orphans that tree
    (its root takes x, the other row is freed inside it), and a new edge
    from the freed row to the free one of y, z is an augmenting path.  The
    next search phase's backward side runs out of frontier at once and
    flips nothing, but its first column is next to the orphaned tree's
    freed row: only a phase after it may find the path (size 3, not 2)."""
    from gpumatch.matching import _augment

    a, b, d, e = 0, 1, 2, 3
    x, y, z, w = 0, 1, 2, 3
    rows, cols = np.array([a, b, d, d, e]), np.array([x, x, y, z, w])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(4, 4))
    A.sort_indices()
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0)
    solver.solve()
    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", False)   # the warm solve keeps its forest
    solver.remove_edges(_to_backend(np.array([e]), backend), _to_backend(np.array([w]), backend))
    A = _apply_edges(A, np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([e]), np.array([w]))
    res = solver.solve()
    assert res.stats["aug_certificate"] == "forest" and res.size == 2
    monkeypatch.setattr(_augment, "BACK_CERTIFICATE", True)
    mu_col = _host(solver._mu_col).astype(np.int64)
    held, free_col = int(mu_col[x]), (y if mu_col[y] < 0 else z)
    solver.remove_edges(_to_backend(np.array([held]), backend), _to_backend(np.array([x]), backend))
    _, _, _, _, tstate, _ = _forest_host(solver, 4, 4)
    assert tstate[a + b - held] == 1, "the tree was not orphaned"
    solver.add_edges(_to_backend(np.array([held]), backend), _to_backend(np.array([free_col]), backend))
    A = _apply_edges(A, np.array([held]), np.array([free_col]), np.array([held]), np.array([x]))
    res = solver.solve()
    _check_launch(res.stats, backend, aug_launch)
    assert res.stats["aug_paths"] == 1 and res.stats["aug_phases"] >= 2, res.stats
    _check_matching_result(res, A)
    assert res.size == 3


def test_augment_max_phases_and_handover(backend, aug_launch, monkeypatch):
    """A cap on the phases leaves a valid smaller matching; the solver then finishes with G-PR."""
    from gpumatch.matching import _dynamic
    from gpumatch.matching._augment import augment

    A = sp.csr_matrix(G.grid(12, 12, drop=0.1, seed=4))
    st = _augment_state(A, backend, "empty")
    stats = augment(st, max_phases=1)
    assert stats["aug_phases"] == 1 and not stats["aug_converged"] and stats["aug_paths"] > 0
    _check_launch(stats, backend, aug_launch)
    mu_row, mu_col = _host(st.mu_row), _host(st.mu_col)
    matched = np.flatnonzero(mu_col >= 0)      # a valid matching of that many edges
    assert matched.shape[0] == stats["aug_paths"]
    assert np.array_equal(mu_row[mu_col[matched]], matched)
    assert all(A[int(mu_col[c]), int(c)] for c in matched)
    monkeypatch.setattr(_dynamic, "MAX_AUGMENT_PHASES", 1)
    rng = np.random.default_rng(21)
    solver = MatchingSolver(A if backend == "numpy" else _cupyx(A), backend=backend, rebuild_fraction=1.0)
    solver.solve()
    ar, ac, rr, rc = _edge_batch(rng, A, "dec", A.nnz // 5)
    solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["aug_phases"] == 1
    if not res.stats["aug_converged"]:
        assert res.stats["global_relabels"] >= 1
    _check_matching_result(res, A)


# ---------------------------------------------------------------------------
# Incremental CSR edits (gpumatch.csr) and the solver's kept arrays
# ---------------------------------------------------------------------------


def _random_pattern(rng, m, n, nnz):
    keys = np.unique(rng.integers(0, m * n, size=nnz))
    A = sp.csr_matrix((np.ones(keys.shape[0]), (keys // n, keys % n)), shape=(m, n))
    A.sort_indices()
    return A


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_csr_edits_match_rebuild(backend, dtype):
    """locate / delete / insert give the CSR that a rebuild from keys gives."""
    rng = np.random.default_rng(_seed("csr-edits", str(np.dtype(dtype))))
    m, n = 40, 30
    A = _random_pattern(rng, m, n, 300)
    ip = _to_backend(A.indptr.astype(dtype), backend)
    ix = _to_backend(A.indices.astype(dtype), backend)
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    coo = A.tocoo()
    keys = coo.row.astype(np.int64) * n + coo.col
    # delete a random subset (row-major order)
    dk = np.sort(rng.choice(keys, size=37, replace=False))
    pos, found = csr.locate_entries(ip, ix, _to_backend(dk // n, backend), _to_backend(dk % n, backend))
    assert host(found).all()
    ip2, ix2 = csr.delete_entries(ip, ix, pos)
    assert ip2.dtype == dtype and ix2.dtype == dtype
    left = np.setdiff1d(keys, dk)
    ref = sp.csr_matrix((np.ones(left.shape[0]), (left // n, left % n)), shape=(m, n))
    ref.sort_indices()
    assert host(ip2).tolist() == ref.indptr.tolist() and host(ix2).tolist() == ref.indices.tolist()
    # insert new keys, including whole new rows, row ends and row starts
    new = np.setdiff1d(np.unique(np.concatenate([rng.integers(0, m * n, size=60), [0, m * n - 1]])), left)
    pos, found = csr.locate_entries(ip2, ix2, _to_backend(new // n, backend), _to_backend(new % n, backend))
    assert not host(found).any()
    ip3, ix3 = csr.insert_entries(ip2, ix2, pos, _to_backend(new // n, backend), _to_backend(new % n, backend))
    allk = np.union1d(left, new)
    ref = sp.csr_matrix((np.ones(allk.shape[0]), (allk // n, allk % n)), shape=(m, n))
    ref.sort_indices()
    assert host(ip3).tolist() == ref.indptr.tolist() and host(ix3).tolist() == ref.indices.tolist()
    # out-of-range segments are answered "not found"
    pos, found = csr.locate_entries(ip3, ix3, _to_backend(np.array([-1, m]), backend),
                                    _to_backend(np.array([0, 0]), backend))
    assert not host(found).any()


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_csr_pair_edits_match_rebuild(backend, dtype):
    """locate_entries_pair / edit_entries_pair on a CSR and its CSC give the two
    patterns a rebuild from keys gives, and count the batch's misses."""
    rng = np.random.default_rng(_seed("csr-pair-edits", str(np.dtype(dtype))))
    m, n = 40, 30
    A = _random_pattern(rng, m, n, 300)
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    dev = lambda a: _to_backend(a, backend)  # noqa: E731

    def patterns(keys):
        R = sp.csr_matrix((np.ones(keys.shape[0]), (keys // n, keys % n)), shape=(m, n))
        R.sort_indices()
        T = R.tocsc()
        T.sort_indices()
        return ((R.indptr.astype(dtype), R.indices.astype(dtype)), (T.indptr.astype(dtype), T.indices.astype(dtype)))

    def queries(keys):
        kc = np.sort((keys % n) * m + keys // n)
        segs = np.concatenate([keys // n, kc // m]).astype(np.int64)
        vals = np.concatenate([keys % n, kc % m]).astype(np.int64)
        k = keys.shape[0]
        return dev(segs), dev(vals), ((dev(segs[:k]), dev(vals[:k])), (dev(segs[k:]), dev(vals[k:])))

    def same(pats, keys):
        for got, ref in zip(pats, patterns(keys)):
            assert [host(a).tolist() for a in got] == [a.tolist() for a in ref]

    coo = A.tocoo()
    keys = np.sort(coo.row.astype(np.int64) * n + coo.col)
    pats = tuple((dev(p), dev(i)) for p, i in patterns(keys))
    dk = np.sort(rng.choice(keys, size=37, replace=False))
    _, _, q = queries(dk)
    pos, misses = csr.locate_entries_pair(pats, q, present=True)
    assert misses == 0
    assert csr.locate_entries_pair(pats, q, present=False)[1] == dk.shape[0]
    pats = csr.edit_entries_pair(pats, pos)
    left = np.setdiff1d(keys, dk)
    same(pats, left)
    assert pats[0][1].dtype == dtype and pats[1][0].dtype == dtype
    new = np.setdiff1d(np.unique(np.concatenate([rng.integers(0, m * n, size=60), [0, m * n - 1]])), left)
    segs, vals, q = queries(new)
    pos, misses = csr.locate_entries_pair(pats, q, present=False)
    assert misses == 0
    both = np.concatenate([new[:5], left[:3]])       # five new edges and three present ones
    assert csr.locate_entries_pair(pats, queries(np.sort(both))[2], present=False)[1] == 3
    same(csr.edit_entries_pair(pats, pos, segs, vals), np.union1d(left, new))


def test_csr_edits_empty(backend):
    ip = _to_backend(np.zeros(4, dtype=np.int32), backend)
    ix = _to_backend(np.zeros(0, dtype=np.int32), backend)
    e = _to_backend(np.zeros(0, dtype=np.int64), backend)
    pos, found = csr.locate_entries(ip, ix, _to_backend(np.array([1, 2]), backend),
                                    _to_backend(np.array([0, 5]), backend))
    assert (pos if isinstance(pos, np.ndarray) else pos.get()).tolist() == [0, 0]
    ip2, ix2 = csr.delete_entries(ip, ix, e)
    assert ix2.shape[0] == 0
    ip3, ix3 = csr.insert_entries(ip, ix, pos, _to_backend(np.array([1, 2]), backend),
                                  _to_backend(np.array([0, 5]), backend))
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    assert host(ip3).tolist() == [0, 0, 1, 2] and host(ix3).tolist() == [0, 5]


def test_unmatch_pairs(backend):
    mr = _to_backend(np.array([2, -1, 0, 1], dtype=np.int32), backend)
    mc = _to_backend(np.array([2, 3, 0], dtype=np.int32), backend)
    csr.unmatch_pairs(mr, mc, _to_backend(np.array([0, 3, 1, 2]), backend),
                      _to_backend(np.array([2, 0, 1, 0]), backend))
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    assert host(mr).tolist() == [-1, -1, -1, 1] and host(mc).tolist() == [-1, 3, -1]


@pytest.mark.parametrize("transpose", [False, True])
def test_matching_kept_arrays(backend, transpose):
    """A Poisson random graph (free rows reach most of it, free columns
    little) and its transpose: warm-started solves stay maximum, the kept
    CSR and CSC stay sorted and equal to the graph, and an earlier result
    is not a view of the solver's state."""
    A = sp.csr_matrix(G.random_bipartite(3000, 3000, 5, seed=21))
    if transpose:
        A = sp.csr_matrix(A.T)
    rng = np.random.default_rng(_seed("kept", str(transpose)))
    Ain = A if backend == "numpy" else _cupyx(A)
    solver = MatchingSolver(Ain, backend=backend, rebuild_fraction=1.0)
    res = solver.solve()
    _check_matching_result(res, A)
    kept = res.col_to_row.copy()
    host = lambda a: a if isinstance(a, np.ndarray) else a.get()  # noqa: E731
    for kind in ["dec", "inc", "mixed"]:
        ar, ac, rr, rc = _edge_batch(rng, A, kind, 40)
        solver.remove_edges(_to_backend(rr, backend), _to_backend(rc, backend))
        solver.add_edges(_to_backend(ar, backend), _to_backend(ac, backend))
        A = _apply_edges(A, ar, ac, rr, rc)
        res2 = solver.solve()
        assert res2.stats["mode"] == "dynamic"
        _check_matching_result(res2, A)
        g = solver.graph()
        g = g if isinstance(g, sp.spmatrix) else g.get()
        assert (sp.csr_matrix(g) != A).nnz == 0
        T = sp.csc_matrix(A)
        T.sort_indices()   # the kept transpose stays sorted (the edits rely on it)
        assert host(solver._cptr).tolist() == T.indptr.tolist()
        assert host(solver._cind).tolist() == T.indices.tolist()
    assert (host(res.col_to_row) == host(kept)).all()


def test_matching_default_switch():
    """Past the default rebuild fraction the solver solves from scratch."""
    from gpumatch.matching._dynamic import REBUILD_FRACTION

    A = sp.csr_matrix(G.random_bipartite(400, 400, 4, seed=5))
    rng = np.random.default_rng(9)
    solver = MatchingSolver(A, backend="numpy")
    assert solver.rebuild_fraction == REBUILD_FRACTION
    solver.solve()
    big = int(REBUILD_FRACTION * A.nnz) + 3
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", big)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == "scratch"
    _check_matching_result(res, A)
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", 1)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == ("dynamic" if REBUILD_FRACTION * A.nnz >= 1 else "scratch")
    _check_matching_result(res, A)


def test_matching_relabel_k():
    A = MATCHING_GRAPHS["grid"]
    with pytest.raises(ValueError):
        MatchingSolver(A, backend="numpy", relabel_k=0)
    rng = np.random.default_rng(17)
    solver = MatchingSolver(A, backend="numpy", rebuild_fraction=1.0, relabel_k=3.0)
    _check_matching_result(solver.solve(), A)
    ar, ac, rr, rc = _edge_batch(rng, A, "mixed", 12)
    solver.remove_edges(rr, rc)
    solver.add_edges(ar, ac)
    A = _apply_edges(A, ar, ac, rr, rc)
    res = solver.solve()
    assert res.stats["mode"] == "dynamic"
    _check_matching_result(res, A)


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


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_shortcut_off_cut_increases(backend, name):
    # increases of arcs that do not cross the minimum cut S -> T leave the
    # flow maximum: no excess, no deficit, no push-relabel and no BFS
    solver, res, C, s, t, maxcap = _flow_solver(name, backend)
    r, c, cap, f, side, cross = _arc_lists(C, res)
    rng = np.random.default_rng(_seed("shortcut", name))
    off = np.flatnonzero(~cross)
    k = rng.choice(off, size=min(25, off.shape[0]), replace=False)
    new = cap[k] + rng.integers(1, maxcap + 1, size=k.shape[0])
    _update(solver, backend, r[k], c[k], new)
    C2 = _apply(C, r[k], c[k], new)
    res2 = solver.solve()
    st = res2.stats
    assert st["mode"] == "dynamic" and st["repair"] == "none" and st["cut"] == "kept"
    assert st["iterations"] == 0 and st["global_relabels"] == 0
    _check_flow_result(res2, C2, s, t)
    assert int(res2.flow_value) == int(res.flow_value) == int(maximum_flow(C2, s, t, backend="numpy").flow_value)
    assert np.array_equal(_host_array(res2.source_side), _host_array(res.source_side))


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_shortcut_decreases_above_flow(backend, name):
    # a decrease to a capacity at least the arc's flow moves nothing
    solver, res, C, s, t, maxcap = _flow_solver(name, backend)
    r, c, cap, f, side, cross = _arc_lists(C, res)
    Cb = sp.csr_matrix(C)
    lone = np.asarray(Cb[c, r]).ravel() == 0          # no anti-parallel arc: net flow == arc flow
    lone &= np.asarray(sp.csr_matrix((np.ones_like(r), (c, r)), shape=C.shape)[r, c]).ravel() == 0
    cand = np.flatnonzero(lone & (cap > f) & (f >= 0))
    if cand.shape[0] == 0:
        pytest.skip("no arc below capacity")
    rng = np.random.default_rng(_seed("above", name))
    k = rng.choice(cand, size=min(25, cand.shape[0]), replace=False)
    new = f[k] + rng.integers(0, cap[k] - f[k])       # in [flow, old capacity)
    _update(solver, backend, r[k], c[k], new)
    C2 = _apply(C, r[k], c[k], new)
    res2 = solver.solve()
    assert res2.stats["repair"] == "none" and res2.stats["global_relabels"] == 0
    _check_flow_result(res2, C2, s, t)
    assert int(res2.flow_value) == int(res.flow_value)


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_cut_crossing_increases(backend, name):
    # increases of arcs of the cut push their new residual and re-maximise
    solver, res, C, s, t, maxcap = _flow_solver(name, backend)
    r, c, cap, f, side, cross = _arc_lists(C, res)
    cand = np.flatnonzero(cross)
    rng = np.random.default_rng(_seed("cross", name))
    for size in (1, 5):
        k = rng.choice(cand, size=min(size, cand.shape[0]), replace=False)
        new = C.tocsr()[r[k], c[k]].A1.astype(np.int64) + rng.integers(1, maxcap + 1, size=k.shape[0])
        _update(solver, backend, r[k], c[k], new)
        C = _apply(C, r[k], c[k], new)
        res = solver.solve()
        assert res.stats["mode"] == "dynamic" and res.stats["repair"] == "phases"
        _check_flow_result(res, C, s, t)
        r, c, cap, f, side, cross = _arc_lists(C, res)
        cand = np.flatnonzero(cross)


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_cut_arc_decreases_keep_the_cut(backend, name):
    # a decrease of an arc of the cut lowers the value by as much and the
    # cut stays minimum: the repair stays on each side of it, with no BFS
    solver, res, C, s, t, maxcap = _flow_solver(name, backend)
    r, c, cap, f, side, cross = _arc_lists(C, res)
    cand = np.flatnonzero(cross & (cap > 0))
    rng = np.random.default_rng(_seed("cutdec", name))
    k = rng.choice(cand, size=min(4, cand.shape[0]), replace=False)
    new = np.maximum(cap[k] - rng.integers(1, maxcap + 1, size=k.shape[0]), 0)
    _update(solver, backend, r[k], c[k], new)
    C2 = _apply(C, r[k], c[k], new)
    res2 = solver.solve()
    assert res2.stats["repair"] == "phases" and res2.stats["cut"] == "kept"
    _check_flow_result(res2, C2, s, t)
    assert int(res2.flow_value) == int(res.flow_value) - int((cap[k] - new).sum())
    assert np.array_equal(_host_array(res2.source_side), side)


def _return_only(self):
    """A phase X (``MaxFlowSolver._excess_phase``) that only ever returns
    excess to the source or the deficits: it leaves a valid flow that need
    not be maximum, for phase F to finish."""
    from gpumatch.flow import _dynamic as D

    xp, idt, s, t = self._xp, self._idt, self.source, self.sink
    st = {"height": self._height, "excess": self._excess}
    near = lambda: xp.concatenate([xp.asarray([s], dtype=idt),  # noqa: E731
                                    xp.nonzero(self._inner(self._excess < 0))[0].astype(idt)])
    D._Phase(self, self._ctx, st, near, terminals=(s, t), hlimit=self._V, blocked=t, name="X").run()


def test_flow_augmenting_fallback(monkeypatch, backend, repair_paths):
    # a phase X that only ever returns excess to the source leaves a valid
    # but not maximum flow: the cut check, the BFS and phase F repair it
    from gpumatch.flow import _dynamic as D

    monkeypatch.setattr(D.MaxFlowSolver, "_excess_phase", _return_only)
    C = sp.csr_matrix(np.array([[0, 1, 0, 0], [0, 0, 5, 0], [0, 0, 0, 5], [0, 0, 0, 0]], dtype=np.int64))
    solver = MaxFlowSolver(C, 0, 3, backend=backend, rebuild_fraction=1.0, time_budget=None)
    assert int(solver.solve().flow_value) == 1
    solver.update_capacities([0], [1], [4])
    res = solver.solve()
    assert res.stats["cut"] == "bfs" and res.stats["fallback"]
    # with the path passes, phase F starts with them (and here they leave push-relabel nothing)
    f_passes = [p for p in res.stats.get("path_passes", []) if p[0] in ("F0", "F")]
    assert bool(f_passes) == (repair_paths != "push_relabel")
    if f_passes and repair_paths != "unwind":   # (passes that reach nothing leave it to F1)
        assert "F1" not in [p[0] for p in res.stats.get("phases", [])]
    C2 = _apply(C, [0], [1], [4])
    _check_flow_result(res, C2, 0, 3)
    assert int(res.flow_value) == 4
    # and on a larger graph, batch after batch
    C, s, t, maxcap = FLOW_GRAPHS["rlg"]
    solver = MaxFlowSolver(C, s, t, backend=backend, rebuild_fraction=1.0, time_budget=None)
    res = solver.solve()
    rng = np.random.default_rng(23)
    for _ in range(3):
        r, c, cap, f, side, cross = _arc_lists(C, res)
        k = rng.choice(np.flatnonzero(cross), size=3, replace=False)
        new = cap[k] + rng.integers(1, maxcap + 1, size=3)
        solver.update_capacities(r[k], c[k], new)
        C = _apply(C, r[k], c[k], new)
        res = solver.solve()
        _check_flow_result(res, C, s, t)


def test_flow_scratch_time_is_the_fastest_seen():
    C, s, t, maxcap = FLOW_GRAPHS["genrmf"]
    solver = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=0.0, time_budget=0.5)
    solver.solve()
    first = solver._t_scratch
    solver._t_scratch = first * 1000           # as if the first solve had paid a compilation
    solver.update_capacities([int(sp.coo_matrix(C).row[0])], [int(sp.coo_matrix(C).col[0])], [0])
    assert solver.solve().stats["mode"] == "scratch"
    assert solver._t_scratch < first * 1000


def test_flow_budget_counts_the_output_plan():
    """The time budget's reference is the fastest solve from scratch plus
    the assembly of the output's pattern (timed once, in the first solve,
    and counted for no more than a solve), as ``maximum_flow`` pays it."""
    C, s, t, maxcap = FLOW_GRAPHS["rlg"]
    solver = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=1.0, time_budget=0.25)
    res = solver.solve()
    plan = solver._t_plan
    assert plan > 0 and solver._t_reference() == solver._t_scratch + min(plan, solver._t_scratch)
    # arcs inside the network that carry flow: a cut to 0 moves it
    F = sp.coo_matrix(res.flow)
    busy = np.flatnonzero((F.data > 0) & (F.row != s) & (F.col != t))
    built = solver._plan
    for i, (t_scratch, t_plan, mode) in enumerate(((1e-9, 1e3, "dynamic->scratch"), (1e3, 0.0, "dynamic"))):
        solver._t_scratch, solver._t_plan = t_scratch, t_plan
        u, v = int(F.row[busy[i]]), int(F.col[busy[i]])
        solver.update_capacities([u], [v], [0])
        C = _apply(C, [u], [v], [0])
        res = solver.solve()
        assert res.stats["mode"] == mode              # (the plan counts for no more than a solve)
        _check_flow_result(res, C, s, t)
    assert solver._plan is built                        # the plan is built, and timed, once


def _t_side_cuts(C, res, s, t, n):
    """`n` arcs with flow inside the sink side, cut to 0: an excess there
    that phase X moves (``(rows, cols, new capacities)``)."""
    r, c, cap, f, side, cross = _arc_lists(C, res)
    k = np.flatnonzero((f > 0) & ~side[r] & ~side[c] & (r != s) & (c != t))[:n]
    assert k.shape[0] == n
    return r[k], c[k], np.zeros(n, dtype=np.int64)


def test_flow_abandoned_repair_sends_larger_batches_to_scratch():
    # with no time at all, a repair that needs push-relabel is abandoned;
    # a larger batch then starts from scratch at once, one as small is
    # tried again
    C, s, t, maxcap = FLOW_GRAPHS["genrmf"]
    solver = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=1.0, time_budget=0.0)
    res = solver.solve()
    for n, mode, reason in [(2, "dynamic->scratch", "time_budget"), (3, "scratch", "abandoned before"),
                            (2, "dynamic->scratch", "time_budget")]:
        r, c, new = _t_side_cuts(C, res, s, t, n)
        solver.update_capacities(r, c, new)
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["mode"] == mode and res.stats["scratch_reason"] == reason
        _check_flow_result(res, C, s, t)


def test_flow_repair_in_time_lifts_the_abandoned_bound():
    # after an abandoned repair of 2 arcs, a smaller batch repaired in time
    # leaves the bound (3 arcs still start from scratch, and double it to
    # 4); a batch of 4 repaired in time lifts it, so 8 arcs are repaired too
    C, s, t, maxcap = FLOW_GRAPHS["genrmf"]
    solver = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=1.0, time_budget=0.0)
    res = solver.solve()
    for n, budget, mode, reason in [(2, 0.0, "dynamic->scratch", "time_budget"), (1, 1e9, "dynamic", None),
                                    (3, 1e9, "scratch", "abandoned before"), (4, 1e9, "dynamic", None),
                                    (8, 1e9, "dynamic", None)]:
        solver.time_budget = budget
        r, c, new = _t_side_cuts(C, res, s, t, n)
        solver.update_capacities(r, c, new)
        C = _apply(C, r, c, new)
        res = solver.solve()
        assert res.stats["mode"] == mode and res.stats.get("scratch_reason") == reason
        _check_flow_result(res, C, s, t)


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


@pytest.mark.parametrize("case", sorted(_BOUND_CASES))
@pytest.mark.parametrize("hops", [0, 1, 2])
def test_flow_push_bound(backend, case, hops, monkeypatch):
    """``REPAIR["push_bound"]``: an increase of an arc of the kept cut pushes
    at most what its tail can still take in from the source side and its
    head can still pass on into the sink side, ``push_bound_hops`` arcs
    away; what is left stays residual across the cut, and the value check,
    the sink's BFS and (when needed) phase F keep the result maximum.
    Without the bound (hops 0 here) the whole increase is pushed and goes
    back where it cannot be used."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "push_bound", 1 if hops else 0)
    monkeypatch.setitem(_dynamic.REPAIR, "push_bound_hops", hops)
    caps, i, new, pushes, value = _BOUND_CASES[case]
    n = len(caps)
    push = pushes[hops - 1] if hops else new - caps[i]
    C = sp.csr_matrix((np.array(caps, dtype=np.int64), (np.arange(n), np.arange(1, n + 1))), shape=(n + 1, n + 1))
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, 0, n, backend=backend, rebuild_fraction=1.0, time_budget=None)
    res = solver.solve()
    side = _host_array(res.source_side)
    assert int(res.flow_value) == 1 and side[i] and not side[i + 1]
    _update(solver, backend, np.array([i]), np.array([i + 1]), np.array([new]))
    # right after the update: the arc carries the old flow plus the push
    assert int(solver._flow_p[i]) == 1 + push
    assert int(solver._excess[i]) == -push and int(solver._excess[i + 1]) == push
    C2 = _apply(C, [i], [i + 1], [new])
    res = solver.solve()
    assert res.stats["cut_pushes"] == int(push > 0) and int(res.flow_value) == value
    if push == 0:
        assert res.stats["repair"] == "none" and res.stats["iterations"] == 0
    if push < new - caps[i]:
        assert res.stats["cut"] == "bfs" and not res.stats["fallback"]
    _check_flow_result(res, C2, 0, n)


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("kind", ["inc", "mixed"])
def test_flow_push_bound_batches(backend, name, kind, monkeypatch):
    """Batches that raise many arcs of the kept cut at once (pushes that
    share a tail or a head, bounded next to the batch's cuts below the
    flow) still end in maximum flows, and push no more than without the
    bound."""
    from gpumatch.flow import _dynamic

    pushes = {}
    for bound in (False, True):
        rng = np.random.default_rng(_seed("push bound", name, kind))
        monkeypatch.setitem(_dynamic.REPAIR, "push_bound", 1 if bound else 0)
        solver, res, Cb, s, t, maxcap = _flow_solver(name, backend)
        r, c, cap, f, side, cross = _arc_lists(Cb, res)
        cand = np.flatnonzero(cross)
        k = rng.choice(cand, size=min(12, cand.shape[0]), replace=False)
        new = cap[k] + rng.integers(1, 3 * maxcap + 1, size=k.shape[0])
        if kind == "mixed":   # and cuts below the flow next to them
            others = np.flatnonzero(~cross & (f > 0))
            j = rng.choice(others, size=min(12, others.shape[0]), replace=False)
            k = np.concatenate([k, j])
            new = np.concatenate([new, f[j] - rng.integers(1, f[j] + 1)])
        _update(solver, backend, r[k], c[k], new)
        C2 = _apply(Cb, r[k], c[k], new)
        res2 = solver.solve()
        _check_flow_result(res2, C2, s, t)
        pushes[bound] = res2.stats["cut_pushes"]
    if backend == "numpy":   # (the same cut, so the same batch; the GPU's first flows may differ)
        assert pushes[True] <= pushes[False]
        if name == "unit_bipartite":   # a matched left vertex takes in nothing more: some pushes go
            assert pushes[True] < pushes[False]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
@pytest.mark.parametrize("hops", [1, 2])
def test_flow_push_bound_twins(name, hops, monkeypatch):
    """``gpumatch_dyn_push_bound`` and the apply step around it move the
    same flow as the NumPy twin: two solvers from the same maximum flow,
    the same batch (increases of cut arcs and cuts below the flow), the
    same flows, excesses and pushes right after the update."""
    pytest.importorskip("cupy")
    from gpumatch import _backend

    if _backend.resolve_backend("auto") != "cupy":
        pytest.skip("no usable GPU")
    import cupy as cp
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "push_bound", 1)
    monkeypatch.setitem(_dynamic.REPAIR, "push_bound_hops", hops)
    C, s, t, maxcap = FLOW_GRAPHS[name]
    host = MaxFlowSolver(C, s, t, backend="numpy", rebuild_fraction=1.0, time_budget=None)
    res = host.solve()
    dev = MaxFlowSolver(_cupyx(C), s, t, backend="cupy", rebuild_fraction=1.0, time_budget=None)
    dev.solve()
    dev._flow_p[...] = cp.asarray(host._flow_p)
    dev._side = cp.asarray(host._side)
    dev._excess[...] = cp.asarray(host._excess)
    r, c, cap, f, side, cross = _arc_lists(C, res)
    rng = np.random.default_rng(_seed("push bound twins", name))
    k = rng.choice(np.flatnonzero(cross), size=min(10, int(cross.sum())), replace=False)
    j = rng.choice(np.flatnonzero(~cross & (f > 0)), size=10, replace=False)
    rows, cols = np.concatenate([r[k], r[j]]), np.concatenate([c[k], c[j]])
    new = np.concatenate([cap[k] + rng.integers(1, 3 * maxcap + 1, size=k.shape[0]), f[j] - 1])
    host.update_capacities(rows, cols, new)
    dev.update_capacities(cp.asarray(rows), cp.asarray(cols), cp.asarray(new))
    assert host._pushed == dev._pushed
    if name == "unit_bipartite":   # (some of its pushes are bounded)
        assert host._pushed < k.shape[0]
    assert np.array_equal(host._flow_p, dev._flow_p.get())
    assert np.array_equal(host._excess, dev._excess.get())


@pytest.mark.parametrize("least,push", [(4, 0), (5, 4)])
def test_flow_push_bound_least(backend, least, push, monkeypatch):
    """Pushes of fewer than ``REPAIR["push_bound"]`` units go whole (the
    tail of 1 -> 2 takes in nothing more; the increase is of 4 units)."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "push_bound", least)
    C = sp.csr_matrix((np.array([1, 1, 5], dtype=np.int64), ([0, 1, 2], [1, 2, 3])), shape=(4, 4))
    Cin = C if backend == "numpy" else _cupyx(C)
    solver = MaxFlowSolver(Cin, 0, 3, backend=backend, rebuild_fraction=1.0, time_budget=None)
    solver.solve()
    _update(solver, backend, np.array([1]), np.array([2]), np.array([5]))
    assert int(solver._flow_p[1]) == 1 + push
    res = solver.solve()
    assert res.stats["cut_pushes"] == int(push > 0) and int(res.flow_value) == 1
    _check_flow_result(res, _apply(C, [1], [2], [5]), 0, 3)


def test_flow_push_bound_sums_do_not_overflow(backend, monkeypatch):
    """The rooms' sums stop at the push: a tail whose arcs' residuals add up
    past int64 (one of 2**63 - 2 after one just short of the push) bounds
    nothing, where a wrapped sum would have pushed a negative amount."""
    from gpumatch.flow import _dynamic

    monkeypatch.setitem(_dynamic.REPAIR, "push_bound", 1)
    monkeypatch.setitem(_dynamic.REPAIR, "push_bound_hops", 1)
    big, D = 2**63 - 2, 2**62
    # 0 -> 1 -> 2 -> 3 (sink) with 4 -> 1 and 5 -> 1 from the source side
    C = sp.csr_matrix((np.array([1, 1, big, D - 1, big], dtype=np.int64), ([0, 1, 2, 4, 5], [1, 2, 3, 1, 1])),
                      shape=(6, 6))
    solver = MaxFlowSolver(C, 0, 3, backend=backend, rebuild_fraction=1.0, time_budget=None)
    assert int(solver.solve().flow_value) == 1
    _update(solver, backend, np.array([1]), np.array([2]), np.array([1 + D]))
    assert int(solver._flow_p[1]) == 1 + D and solver._pushed == 1

"""Dynamic max flow (MaxFlowSolver): batches of capacity changes and the repair settings."""
# ruff: noqa: F811  (the shared fixtures are imported by name and requested as parameters)

from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch.flow import MaxFlowSolver, maximum_flow

from _dynamic_common import (FLOW_GRAPHS, _apply, _backend_np, _capacity_batch, _check_flow_result, _cupyx, _flow_batches, _host, _np, _seed, _small_batch_run, _to_backend, _walk_setup)
from _dynamic_common import repair_paths  # noqa: F401  (fixtures)


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
    from gpumatch.flow.dynamic import _dynamic, _paths

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow import _pr_cupy
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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


@pytest.mark.parametrize("name", sorted(FLOW_GRAPHS))
def test_flow_small_batch_settings(backend, name, monkeypatch):
    """A batch of at most ``REPAIR["small_batch"]`` times the arcs is
    repaired with the settings of ``REPAIR["small"]`` (here: relabels every
    4 discharges, early-stopping and split), a larger one with the others;
    both leave maximum flows, and the module's settings are untouched."""
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _dynamic

    assert _dynamic.REPAIR["scratch_adaptive"] is True
    # the once-per-process GPU warm-up of the first MaxFlowSolver is a plain
    # solve that adapts its period: run it before the spy goes in
    _dynamic._warm_up(backend)
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
    from gpumatch.flow.dynamic import _labels

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
    from gpumatch.flow.dynamic import _dynamic

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

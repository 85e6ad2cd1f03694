"""Dynamic max flow: the solver as a whole (warm-up, budgets, fallbacks, bounded pushes, the corpus)."""
# ruff: noqa: F811  (the shared fixtures are imported by name and requested as parameters)

from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch.flow import MaxFlowSolver, maximum_flow
from gpumatch.testing import check_flow

from conftest import corpus_manifest
from _dynamic_common import (FLOW_GRAPHS, _BOUND_CASES, _apply, _arc_lists, _capacity_batch, _check_flow_result, _cupyx, _flow_solver, _host_array, _return_only, _seed, _t_side_cuts, _to_backend, _update)
from _dynamic_common import repair_paths  # noqa: F401  (fixtures)


def test_flow_warm_up_batches_reach_every_repair_step(backend, monkeypatch):
    """The batches the CuPy warm-up runs (to compile every kernel a repair
    uses before a timed solve) reach the path passes and both push-relabel
    phases, and the detour pass in a round of its own, and give maximum
    flows."""
    from gpumatch.flow.dynamic import _dynamic

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


def test_flow_augmenting_fallback(monkeypatch, backend, repair_paths):
    # a phase X that only ever returns excess to the source leaves a valid
    # but not maximum flow: the cut check, the BFS and phase F repair it
    from gpumatch.flow.dynamic import _dynamic as D

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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


# ---------------------------------------------------------------------------
# issue 62: one solver shared by several threads
# ---------------------------------------------------------------------------

THREAD_BACKENDS = ["numpy", "numba", pytest.param("cupy", marks=pytest.mark.gpu)]


def _threads_backend(name):
    from gpumatch import _backend

    if name == "numba" and not _backend.numba_available():
        pytest.skip("Numba does not import")
    return name


@pytest.mark.parametrize("bk", THREAD_BACKENDS)
def test_flow_solver_shared_by_threads(bk):
    """Four threads each update capacities then solve, on one solver (issue
    62: the numba engine raised "excess was left" and a later solve gave
    flows above capacity).  The calls take turns: every solve succeeds
    with a valid flow, and the final one is a maximum flow of the final
    capacities."""
    import threading

    from gpumatch import generators

    bk = _threads_backend(bk)
    C, s, t = generators.genrmf(6, 6, 1, 100, seed=0)
    C = sp.csr_matrix(C)
    C.sum_duplicates()
    solver = MaxFlowSolver(C, s, t, backend=bk)
    solver.solve()
    arcs = sp.coo_matrix(C)
    errors, barrier = [], threading.Barrier(4)

    def work(k):
        rng = np.random.default_rng(k)
        barrier.wait()
        try:
            for _ in range(25):
                pick = rng.choice(arcs.nnz, 20, replace=False)
                solver.update_capacities(arcs.row[pick], arcs.col[pick], rng.integers(0, 100, 20))
                res = solver.solve()
                F = sp.csr_matrix(res.flow)   # (scipy input: scipy output on every backend)
                F.eliminate_zeros()
                net = np.asarray(F.sum(axis=1)).ravel()   # conserved, skew-symmetric: a flow of `value`
                expected = np.zeros_like(net)
                expected[s], expected[t] = int(res.flow_value), -int(res.flow_value)
                assert (F + F.T).count_nonzero() == 0 and np.array_equal(net, expected)
        except Exception as exc:  # noqa: BLE001 - any failure of a thread fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)   # (a corrupted state can loop for ever: fail, do not hang)
    assert not any(th.is_alive() for th in threads), "a thread did not finish"
    assert not errors, errors
    res = solver.solve()
    check_flow(solver.capacities(), s, t, res.flow, res.flow_value)
    assert int(res.flow_value) == int(maximum_flow(solver.capacities(), s, t, backend="numpy").flow_value)


def test_flow_solver_calls_take_turns():
    """A solve waits while another thread holds the solver (deterministic
    check of the lock that the test above relies on)."""
    import threading

    C = sp.csr_matrix(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]))
    solver = MaxFlowSolver(C, 0, 2, backend="numpy")
    done = []
    with solver._lock:
        th = threading.Thread(target=lambda: done.append(int(solver.solve().flow_value)))
        th.start()
        th.join(0.3)
        assert th.is_alive() and not done
        solver.update_capacities([1], [2], [5])   # the holder may call in (re-entrant)
    th.join()
    assert done == [5]

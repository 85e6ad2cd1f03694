"""Dynamic max flow: the walk, path, detour and unwind passes of the repairs, and the label steps."""

from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import generators as G
from gpumatch.flow import MaxFlowSolver

from _dynamic_common import (FLOW_GRAPHS, _apply, _check_cut, _check_flow_result, _cupyx, _cut_below_flow, _cut_pairs, _flow_batches, _host_array, _inflow_minus_outflow, _ladder, _max_flow_network, _np, _reaches, _residual_reach, _return_only, _seed, _small_network, _to_backend, _unit_mixed_repairs)


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
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _detour

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _paths

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


@pytest.mark.parametrize("cross_fill", [True, False])
def test_flow_cross_fill(monkeypatch, cross_fill):
    """Unit network, mixed batches of 0.1 % of the arcs (NumPy, where the
    passes are deterministic): once phase X has sent excess back across the
    kept cut, the deficits the source side cannot fill may be reached from
    the source through the sink side.  With ``cross_fill`` phase D's pass
    over the whole network ("Dx") fills them first; without it they are
    cancelled towards the sink, and the fallback F has to find the
    augmenting paths that leaves.  Every flow is maximum either way."""
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow import _maxflow
    from gpumatch.flow.dynamic import _paths

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
    from gpumatch.flow.dynamic import _dynamic

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
    from gpumatch.flow.dynamic import _dynamic as D, _paths

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
    from gpumatch.flow.dynamic import _dynamic

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

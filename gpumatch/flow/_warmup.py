"""One-time warm-up of the dynamic flow solver's CUDA paths (per device and process).

On CuPy the first solve of a process compiles (or loads from CuPy's cache)
the element-wise kernels that a solve from scratch and a repair use;
:func:`_warm_up` runs a tiny network through them once, so that this cost
stays out of the time budget of the first repairs.
"""

from __future__ import annotations



import numpy as np

from .. import _backend
from . import _maxflow as _mf

from ._repair import REPAIR

_WARMED = set()



def _warm_up(backend):
    """Solve a six-vertex network, then repair a small one, once per device and process.

    On CuPy the first solve of a process compiles (or loads from CuPy's
    cache) the element-wise kernels a from-scratch solve and a repair use;
    doing it here keeps that one-time cost out of the from-scratch time
    that sets the repair's time budget, and out of the first repair (which
    would run out of that budget while compiling).
    """
    if backend != "cupy":
        return
    cp = _backend.cp
    dev = int(cp.cuda.Device().id)
    if dev in _WARMED:
        return
    _WARMED.add(dev)   # before the solver below, whose constructor calls this
    # 0 -> 1 -> 2 -> 3 -> 4 -> 5 (sink) with a bottleneck at 4 -> 5 and a
    # side arc 1 -> 5: the greedy start, phase 1, the direct return and
    # phase 2 (excess stranded three arcs from the source) all run
    indptr = cp.asarray([0, 1, 3, 4, 5, 6, 6], dtype=np.int32)
    indices = cp.asarray([1, 2, 5, 3, 4, 5], dtype=np.int32)
    cap = cp.asarray([9, 9, 1, 9, 9, 1], dtype=np.int64)
    _mf._solve(indptr, indices, cap, 0, 5, "cupy", "reverse_csr")
    # repairs of a small grid network reach the path passes, both
    # push-relabel phases and the cut's BFS
    C = _warm_network()
    from ._dynamic import MaxFlowSolver

    solver = MaxFlowSolver(C, 16, 17, backend="cupy", rebuild_fraction=1.0, time_budget=None)
    solver.solve()
    # (C follows the solver's capacities).  The detour pass goes off for
    # these runs, which would leave the later steps little to do, and runs
    # alone last, where either settings use it (its kernels and
    # element-wise steps compile on first use); so do the bounds on the
    # pushes across the cut, whose excess reaches both phases here
    saved = dict(REPAIR)
    detour = int((REPAIR.get("small") or {}).get("detour") or REPAIR.get("detour") or 0)
    try:
        REPAIR.update(detour=0, push_bound=False, small=dict(saved.get("small") or {}, detour=0))
        _warm_batches(solver, C, cp.asarray)
        if saved.get("small_batch") and saved.get("small"):
            # and with the settings of small batches (the early-stopping
            # relabels' reductions took 4-5 s each to compile on a fresh CuPy
            # cache), without the path passes, which would leave the phases
            # little to do; once without the passes over pairs, which would
            # leave the phases' first steps nothing to do (a kernel of them then
            # compiled during the first real repair: 3.5-4.5 s on a fresh cache),
            # and once with them (their element-wise steps compile on first use)
            for pair in (0, max(1, int(saved["small"].get("pair") or 0))):
                REPAIR.update(small_batch=1.0, paths=False, pair_min=1,
                              small=dict(saved["small"], pair=pair, detour=0))
                _warm_batches(solver, C, cp.asarray)
        if detour or saved.get("push_bound"):
            REPAIR.update(small_batch=1.0, paths=False, pair_min=1, push_bound=saved.get("push_bound"),
                          small=dict(saved.get("small") or {}, detour=detour))
            _warm_batches(solver, C, cp.asarray)
    finally:
        REPAIR.clear()
        REPAIR.update(saved)
    # the fallback F's passes from the source (one, which finds the flow
    # maximum) and the comparison that gives their cut: compiled inside the
    # first repair with a phase F, ~0.35 s on an H100 with a fresh cache
    if REPAIR.get("paths") and REPAIR.get("f_root"):
        solver._root_pass(solver._cap_cut - 1, 1)
        _ = solver._pbufs.owner == solver.source
    # the fallback F's saturation of the source arcs, which the batches
    # above need not reach: its element-wise kernels compiled mid-repair
    # took 0.2-0.3 s on an H100 (the solver is thrown away after this)
    solver._height.fill(0)
    solver._saturate_source()
    # two more element-wise steps the batches above need not reach, each
    # ~0.1 s to compile on a fresh CuPy cache: the lazy far targets'
    # heights of a complete relabel (``h[far] = hlimit`` in
    # _Phase._relabel_full, on a list of the relabel steps of two vertices
    # or more: the scalar broadcast over a list of one is another kernel;
    # compiled inside the first RLG repair with a phase, whose budget is
    # ~35 ms), and the value's subtraction of a sink's out-arcs' flow (the
    # warm network's sink has none)
    far = solver._label_steps().lists[1][:2]
    far[...] = cp.arange(2, dtype=far.dtype)
    solver._height[far] = solver._hlimit2
    int(cp.zeros((), dtype=np.int64) - solver._L["flow"][:1].sum())


def _warm_network():
    """A 4 x 4 grid (right, down and up arcs; source 16 -> left column,
    right column -> sink 17), capacities 1..9."""
    import scipy.sparse as sp

    r, c = [], []
    for i in range(16):
        if i % 4 < 3:
            r.append(i), c.append(i + 1)
        if i < 12:
            r += [i, i + 4]
            c += [i + 4, i]
    r += [16, 16, 16, 16, 3, 7, 11, 15]
    c += [0, 4, 8, 12, 17, 17, 17, 17]
    rng = np.random.default_rng(0)
    C = sp.csr_matrix((rng.integers(1, 10, size=len(r)), (r, c)), shape=(18, 18)).astype(np.int64)
    C.sort_indices()
    return C


def _warm_batches(solver, C, asarray, steps=6):
    """Batches of a third of the arcs of `C` (increases, decreases, mixed,
    in turn), each solved; returns the results."""
    rng = np.random.default_rng(1)
    rows = np.repeat(np.arange(C.shape[0]), np.diff(C.indptr))
    out = []
    for step in range(steps):
        k = rng.choice(C.nnz, size=C.nnz // 3, replace=False)
        old = C.data[k]
        new = (old + rng.integers(1, 10, size=k.shape[0]) if step % 3 == 0 else
               np.maximum(old - rng.integers(1, 10, size=k.shape[0]), 0) if step % 3 == 1 else
               rng.integers(0, 19, size=k.shape[0]))
        C.data[k] = new
        solver.update_capacities(asarray(rows[k]), asarray(C.indices[k].astype(np.int64)), asarray(new))
        out.append(solver.solve())
    return out

"""Augmenting-path pass of a dynamic max-flow repair (NumPy and CUDA twins).

After a batch of capacity changes, :class:`~gpumatch.flow.MaxFlowSolver`
holds a pseudo-flow with excess at a few vertices and deficits at a few
others.  Push-relabel moves that excess one arc per discharge and needs a
global relabel (a BFS over the whole network) to find its way; on a
network with short alternating paths and many small imbalances (a unit
network after 0.01 % of its arcs changed) that tail is most of a repair.
This pass goes first and routes what it can along augmenting paths, as a
matching augments along alternating paths:

* every vertex of the side with excess is the root of a BFS tree over the
  residual arcs inside the side (``mask``); the trees are vertex-disjoint
  (a vertex joins the first tree that reaches it);
* a tree ends at its first *target*: the terminal ``target`` (any number of
  trees may end there) or a vertex with a deficit (one tree per pass);
* every tree that ended pushes the bottleneck of its path (the root's
  excess, the deficit, the residual capacities); the paths share no vertex,
  so they share no arc and augment at once;
* passes repeat from the roots with excess left until one finds no path,
  or the limits in :data:`LIMITS` stop it (a pass whose trees are still
  growing at the level limit, or that placed less than 30 % of its
  roots' excess, is the last).

Whatever the pass leaves is still a pseudo-flow that the push-relabel
phases finish, so the pass never has to succeed.  The flow it moves stays
inside ``mask``; with one side of the kept minimum cut as the mask, that
cut stays saturated.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, csr

#: ``phases``: passes at most; ``levels``: BFS levels over long frontiers
#: (one launch and one read-back each on the GPU) per pass at most, a pass
#: that would need more leaves the rest to push-relabel; ``short``: the
#: frontier length up to which the GPU runs levels in one block (many per
#: launch, see ``gpumatch_fp_level_loop``); ``all_levels``: levels per pass
#: at most, short ones included.
#: ``progress``: a pass that moves less than this fraction of its roots'
#: excess is the last (what is left needs the paths of push-relabel).
LIMITS = {"phases": 8, "levels": 48, "short": 2048, "all_levels": 128, "progress": 0.3}


def _resid(cap, flow, code):
    """Residual capacity of the steps `code` (p >= 0: out-arc p; -(k + 1): cancel arc k)."""
    out = code >= 0
    k = np.where(out, code, -code - 1)
    return np.where(out, cap[k] - flow[k], flow[k])


def _tree_arrays(bufs, xp, V):
    """The per-vertex arrays of the trees (as in ``flow/paths.cu``) on `bufs`."""
    for name, fill in (("owner", -1), ("pv", -1), ("pa", 0), ("fin_u", -1), ("fin_a", 0), ("fin_w", -1)):
        setattr(bufs, name, xp.full(V, fill, dtype=np.int64))


class _Numpy:
    """NumPy twin of ``flow/paths.cu`` (one legal schedule of its claims)."""

    def __init__(self, V):
        _tree_arrays(self, np, V)

    def level(self, L, mask, excess, frontier, target, other):
        owner, fin_u = self.owner, self.fin_u
        r = owner[frontier]
        open_ = fin_u[r] == -1
        F, r = frontier[open_], r[open_]
        flow, cap = L["flow"], L["cap"]
        oo, ps = csr.expand_segments(L["indptr"], F)
        ps = ps.astype(np.int64)
        keep = cap[ps] - flow[ps] > 0
        oi, js = csr.expand_segments(L["in_indptr"], F)
        ks = L["in_to_out"][js].astype(np.int64)
        keep_i = flow[ks] > 0
        u = np.concatenate([F[oo][keep], F[oi][keep_i]]).astype(np.int64)
        rr = np.concatenate([r[oo][keep], r[oi][keep_i]])
        w = np.concatenate([L["indices"][ps][keep], L["in_indices"][js][keep_i]]).astype(np.int64)
        code = np.concatenate([ps[keep], -ks[keep_i] - 1])
        live = w != other
        u, rr, w, code = u[live], rr[live], w[live], code[live]
        at_target = w == target
        inside = mask[w] & ~at_target
        deficit = inside & (excess[w] < 0)
        # ends: the first candidate of each tree (the terminal, or a free deficit),
        # then the first tree of each deficit
        ending = np.flatnonzero(at_target | (deficit & (owner[w] == -1)))
        _, first = np.unique(rr[ending], return_index=True)
        ending = ending[np.sort(first)]
        dfc = ending[w[ending] != target]
        _, first = np.unique(w[dfc], return_index=True)
        lost = np.setdiff1d(dfc, dfc[first])
        ending = np.setdiff1d(ending, lost)
        e_r = rr[ending]
        fin_u[e_r], self.fin_a[e_r], self.fin_w[e_r] = u[ending], code[ending], w[ending]
        won = ending[w[ending] != target]
        owner[w[won]] = rr[won]
        # growth of the trees still open: the first claim of each free vertex
        grow = np.flatnonzero(inside & ~deficit & (owner[w] == -1) & (fin_u[rr] == -1))
        _, first = np.unique(w[grow], return_index=True)
        grow = grow[np.sort(first)]
        owner[w[grow]] = rr[grow]
        self.pv[w[grow]] = u[grow]
        self.pa[w[grow]] = code[grow]
        return w[grow]

    def levels(self, L, mask, excess, frontier, target, other, short, max_levels):
        """One level (the NumPy twin has no one-block loop); returns ``(next frontier, 1, long)``."""
        return self.level(L, mask, excess, frontier, target, other), 1, frontier.shape[0] > short

    def augment(self, L, excess, roots, target):
        R = roots[self.fin_u[roots] >= 0]
        if R.shape[0] == 0:
            return 0, 0
        cap, flow = L["cap"], L["flow"]
        w = self.fin_w[R]
        d = excess[R].copy()
        dem = np.where(w != target, -excess[w], d)
        d = np.minimum(np.minimum(d, dem), _resid(cap, flow, self.fin_a[R]))
        cur = self.fin_u[R].copy()
        on = cur != R
        while on.any():
            idx = np.flatnonzero(on)
            d[idx] = np.minimum(d[idx], _resid(cap, flow, self.pa[cur[idx]]))
            cur[idx] = self.pv[cur[idx]]
            on = cur != R
        ok = d > 0
        R, w, d = R[ok], w[ok], d[ok]
        code, cur = self.fin_a[R], self.fin_u[R].copy()
        idx = np.arange(R.shape[0])
        while idx.shape[0]:
            c, dd = code[idx], d[idx]
            out = c >= 0
            flow[c[out]] += dd[out]
            flow[-c[~out] - 1] -= dd[~out]
            more = cur[idx] != R[idx]
            idx = idx[more]
            code[idx] = self.pa[cur[idx]]
            cur[idx] = self.pv[cur[idx]]
        excess[R] -= d
        np.add.at(excess, w, d)
        return int(R.shape[0]), int(d.sum())


class _Cuda:
    """Launchers of the ``flow/paths.cu`` kernels (one read-back per level)."""

    def __init__(self, V, idt):
        cp = _backend.cp
        from .. import _cuda

        defines = (("IDX", "int" if np.dtype(idt) == np.int32 else "long long"),)
        self.k_level = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_level", defines)
        self.k_augment = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_augment", defines)
        self.k_loop = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_level_loop", defines)
        self.counts = cp.zeros(2, dtype=np.uint64)
        self.state = cp.zeros(2, dtype=np.int64)
        _tree_arrays(self, cp, V)
        self.bufs = [cp.empty(max(V, 1), dtype=np.int64), cp.empty(max(V, 1), dtype=np.int64)]
        # level counts: a level writes cnt[c] and zeroes cnt[1 - c] for the next
        self.cnt = cp.zeros(2, dtype=np.uint64)
        self.cnts = (self.cnt[0:1], self.cnt[1:2])
        self.c = 0
        self.moved = cp.zeros(2, dtype=np.int64)
        self.flip = 0

    def level(self, L, mask, excess, frontier, target, other):
        from .. import _cuda

        n = int(frontier.shape[0])
        self.flip ^= 1
        nxt = self.bufs[self.flip]
        c = self.c
        self.c ^= 1
        tile = 8   # GM_FP_TILE
        self.k_level(_cuda.grid_for(n * tile), (_cuda.BLOCK,),
                     (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"],
                      L["in_to_out"], mask, excess, frontier, np.int64(n), np.int64(target), np.int64(other),
                      self.owner, self.pv, self.pa, self.fin_u, self.fin_a, self.fin_w, nxt, self.cnts[c],
                      self.cnts[1 - c]))
        return nxt[:int(self.cnts[c].get()[0])]

    def levels(self, L, mask, excess, frontier, target, other, short, max_levels):
        """Levels from `frontier`: one multi-block level if it is longer than
        `short`, else up to `max_levels` in one block until a level gets
        longer.  Returns ``(next frontier, levels run, whether it was a long one)``."""
        n = int(frontier.shape[0])
        if n > short:
            return self.level(L, mask, excess, frontier, target, other), 1, True
        # the loop writes the buffer that does not hold the frontier first
        out0, out1 = self.bufs[self.flip ^ 1], self.bufs[self.flip]
        self.k_loop((1,), (1024,),
                    (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"],
                     L["in_to_out"], mask, excess, frontier, np.int64(n), np.int64(target), np.int64(other),
                     self.owner, self.pv, self.pa, self.fin_u, self.fin_a, self.fin_w, out0, out1, self.counts,
                     np.int64(short), np.int64(max_levels), self.state))
        ran, size = (int(x) for x in self.state.get())
        if ran == 0:   # pragma: no cover - the caller never passes max_levels 0 nor a long frontier
            return frontier, 0, False
        last = out0 if ran % 2 == 1 else out1
        self.flip = 0 if last is self.bufs[0] else 1
        return last[:size], ran, False

    def augment(self, L, excess, roots, target):
        from .. import _cuda

        n = int(roots.shape[0])
        self.moved.fill(0)
        self.k_augment(_cuda.grid_for(n), (_cuda.BLOCK,),
                       (L["cap"], L["flow"], excess, roots, np.int64(n), np.int64(target), self.pv, self.pa,
                        self.fin_u, self.fin_a, self.fin_w, self.moved))
        paths, amount = (int(x) for x in self.moved.get())
        return paths, amount


def buffers(backend, V, idt):
    """Work arrays of the pass for a network of `V` vertices (kept by the solver)."""
    return _Cuda(V, idt) if backend == "cupy" else _Numpy(V)


def route(bufs, L, excess, mask, target, other, check=None, limits=None):
    """Route excess of the vertices in `mask` to `target` or to deficits in
    `mask` along augmenting paths (see the module docstring); in place on
    ``L["flow"]`` and `excess`.

    Parameters
    ----------
    bufs : from :func:`buffers`
    L : dict
        Reverse-CSR residual network (``indptr``, ``indices``, ``cap``,
        ``flow``, ``in_indptr``, ``in_indices``, ``in_to_out``).
    excess : int64 array
        Per vertex; positive: excess (the roots), negative: a deficit.
    mask : bool array
        The side the paths stay in.
    target, other : int
        The terminal that takes any amount, and the one never entered.
    check : callable, optional
        Called before every level (the solver's time budget).
    limits : dict, optional
        Overrides of :data:`LIMITS`.

    Returns
    -------
    dict
        ``phases``, ``levels``, ``paths`` (augmented), ``amount`` (flow
        moved) and ``exhausted``: True when no excess is left in `mask` or
        none of it can reach a target (the last pass grew every tree to its
        end and found no path), False when the limits stopped the pass.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.flow import _maxflow, _paths
    >>> # 0 -> 1 -> 2 -> 3, capacity 2 each; vertex 1 has 2 units of excess
    >>> L = _maxflow._build_rcsr(np, np.array([0, 1, 2, 3, 3]), np.array([1, 2, 3]), np.array([2, 2, 2]), 4)
    >>> L["flow"] = np.zeros(3, dtype=np.int64)
    >>> excess = np.array([0, 2, 0, 0])
    >>> stats = _paths.route(_paths.buffers("numpy", 4, np.int64), L, excess, np.ones(4, dtype=bool), 3, 0)
    >>> L["flow"].tolist(), excess.tolist(), stats["paths"]
    ([0, 2, 2], [0, 0, 0, 2], 1)
    """
    lim = dict(LIMITS, **(limits or {}))
    xp = csr.array_module(excess)
    stats = {"phases": 0, "levels": 0, "paths": 0, "amount": 0, "exhausted": False}
    inner = mask.copy()
    inner[target] = False
    inner[other] = False
    roots = xp.nonzero(inner & (excess > 0))[0].astype(np.int64)
    for _ in range(int(lim["phases"])):
        if roots.shape[0] == 0:
            stats["exhausted"] = True
            break
        supply = int(excess[roots].sum())
        bufs.owner.fill(-1)
        bufs.fin_u.fill(-1)
        bufs.owner[roots] = roots
        frontier = roots
        stats["phases"] += 1
        long_levels = levels = 0
        while frontier.shape[0] and long_levels < int(lim["levels"]) and levels < int(lim["all_levels"]):
            if check is not None:
                check()
            frontier, ran, long_ = bufs.levels(L, mask, excess, frontier, target, other, int(lim["short"]),
                                               int(lim["all_levels"]) - levels)
            levels += ran
            long_levels += 1 if long_ else 0
        stats["levels"] += levels
        paths, amount = bufs.augment(L, excess, roots, target)
        stats["paths"] += paths
        stats["amount"] += amount
        if paths == 0:
            # trees that ran out of vertices without a path: every vertex the
            # roots reach joined some tree, so no root reaches a target
            stats["exhausted"] = frontier.shape[0] == 0
            break
        if frontier.shape[0] or amount < float(lim["progress"]) * supply:
            # trees still growing at the level limit, or little of the excess
            # placed: the rest needs longer or wider paths, where
            # push-relabel's global relabel costs less than a BFS per pass
            break
        roots = roots[excess[roots] > 0]
    return stats

"""Augmenting-path pass of a dynamic max-flow repair (NumPy and CUDA twins).

After a batch of capacity changes, :class:`~gpumatch.flow.MaxFlowSolver`
holds a pseudo-flow with excess at a few vertices and deficits at a few
others.  Push-relabel moves that excess one arc per discharge and needs a
global relabel (a BFS over the whole network) to find its way; on a
network with short alternating paths and many small imbalances (a unit
network after 0.01 % of its arcs changed) that tail is most of a repair.
This pass goes first and routes what it can along augmenting paths, as a
matching augments along alternating paths:

* every vertex of the side with excess is the root of a *forward* BFS tree
  over the residual arcs inside the side (``mask``), and every vertex
  there with a deficit, or with a residual arc into the terminal
  ``target``, the root of a *backward* tree over the residual arcs into
  its vertices; all trees are vertex-disjoint (a vertex joins the first
  tree that reaches it);
* a forward tree ends at its first *target*: the terminal ``target`` (any
  number of trees may end there) or a vertex of a backward tree that no
  other forward tree took (one forward tree per backward tree), reached by
  either side; the path then runs on down the backward tree to its root,
  a deficit or the arc into ``target``.  The two sides meet after about
  half a path each, where a forward tree alone would first cover the whole
  ball of that radius (:data:`LIMITS` ``back``: the backward side runs a
  level while its frontier is short);
* every tree that ended pushes the bottleneck of its path (the root's
  excess, the deficit, the residual capacities); the paths share no vertex,
  so they share no arc and augment at once;
* passes repeat from the roots with excess left until one finds no path,
  or the limits in :data:`LIMITS` stop it (a pass whose trees are still
  growing at the level limit, or that placed less than 30 % of its
  roots' excess, is the last; :data:`LIMITS` ``rate`` may let the passes
  go on when most roots still found a path, and ``few`` when at least
  half of them found none and the trees all ran to their end).

On the GPU a pass runs its levels in one cooperative launch over the
whole grid (``LIMITS["coop"]``), or where that is not possible in a
one-block loop while the frontiers are short and one launch per long
level.

Whatever the pass leaves is still a pseudo-flow that the push-relabel
phases finish, so the pass never has to succeed.  The flow it moves stays
inside ``mask``; with one side of the kept minimum cut as the mask, that
cut stays saturated.
"""

from __future__ import annotations

import time

import numpy as np

from ... import _backend, _cuda, csr

#: ``phases``: passes at most; ``levels``: BFS levels over long frontiers
#: (one launch and one read-back each on the GPU without ``coop``) per pass at most, a pass
#: that would need more leaves the rest to push-relabel; ``short``: the
#: frontier length (both sides) up to which the GPU runs levels in one
#: block (many per launch, see ``gpumatch_fp_level_loop``); ``all_levels``:
#: levels per pass at most, short ones included.
#: ``progress``: a pass that moves less than this fraction of its roots'
#: excess is the last (what is left needs the paths of push-relabel),
#: unless ``rate`` is a number and at least that fraction of its roots
#: found a path: then the paths were narrow rather than missing (a few
#: roots with large excesses behind arcs of small residual, as on GENRMF
#: and RLG) and passes go on, up to ``narrow_phases`` in all.  Off (None)
#: by default: in the round-11 H100 benchmark the extra passes spent the
#: time budget of RLG repairs that push-relabel had finished within it.
#: ``back``, ``back_floor``: the backward trees grow a level when their
#: frontier is at most ``back`` times the forward one or at most
#: ``back_floor`` long (``back`` 0: never; deficits then end the forward
#: trees that reach them, as targets).  ``terminal``: with backward trees
#: on, the vertices with a residual arc into ``target`` root backward trees
#: too (their path ends with that arc), so that forward trees meet the
#: target's side halfway as well, when there are at most this many of them
#: (0: never); more would never grow past ``back_floor`` anyway, and every
#: pass would check them all.  ``few``: after a pass whose trees all ran
#: to their end and in which at least half the roots found no path, the
#: passes go on in spite of ``progress`` while at most this many roots are
#: without one (0: never); the next pass, over fewer roots, routes them or
#: proves them stuck (``exhausted``), which push-relabel would learn only
#: from a global relabel.  1024: on an H100 it took the unit network's
#: 0.01 % mixed repairs from ~21 to ~13 ms with RLG and GENRMF unchanged
#: (round 14 of ``benchmarks/results/h100_dynamic.md``).
#: ``coop``: on the GPU, a pass runs its levels in cooperative launches
#: over the whole grid (``gpumatch_fp_level_coop``: one launch and one
#: read-back for all of them, short or long, within ``levels`` and
#: ``all_levels``) instead of the one-block loop and one launch per long
#: level; where the device cannot launch it, as if False.
LIMITS = {"phases": 8, "levels": 48, "short": 2048, "all_levels": 128, "progress": 0.3, "rate": None,
          "narrow_phases": 64, "back": 1.0, "back_floor": 2048, "terminal": 65536, "few": 1024, "coop": True}

#: Threads per block and blocks per multiprocessor of ``gpumatch_fp_level_coop``
#: (its ``FP_COOP_BLOCK``).
COOP_BLOCK = 512
COOP_PER_SM = 2

#: Diagnostic: a list to which :func:`route` appends one record per call of
#: the level launchers, ``(pass, forward length, backward length, levels
#: run, backward levels run, host seconds)``, and per pass ``(pass, "set-up"
#: or "augment", roots, backward roots, paths, host seconds)``; None: off.
TRACE = None

#: ``tstep`` of a backward root that is a deficit (``GM_FP_NO_STEP`` of ``flow/paths.cu``).
NO_STEP = -(1 << 62)


def _resid(cap, flow, code):
    """Residual capacity of the steps `code` (p >= 0: out-arc p; -(k + 1): cancel arc k)."""
    out = code >= 0
    k = np.where(out, code, -code - 1)
    return np.where(out, cap[k] - flow[k], flow[k])


def _push(flow, code, d):
    """Push `d` along the steps `code` (distinct arcs)."""
    out = code >= 0
    flow[code[out]] += d[out]
    flow[-code[~out] - 1] -= d[~out]


def _tree_arrays(bufs, xp, V):
    """The per-vertex arrays of the trees (as in ``flow/paths.cu``) on `bufs`."""
    for name, fill in (("owner", -1), ("pv", -1), ("pa", 0), ("bclaim", -1), ("tstep", NO_STEP), ("fin_u", -1),
                       ("fin_a", 0), ("fin_w", -1)):
        setattr(bufs, name, xp.full(V, fill, dtype=np.int64))
    bufs.partner = xp.full(V, -1, dtype=np.int64)


def _firsts(keys, idx):
    """The entries of `idx` whose key is the first of its kind in `idx` (order kept)."""
    _, first = np.unique(keys[idx], return_index=True)
    return idx[np.sort(first)]


def _backward_runs(nb, nf, back, floor):
    """Whether the backward side grows a level (``gpumatch_fp_level_loop``'s rule)."""
    return nb > 0 and back > 0 and (nb <= floor or nb <= back * nf)


class _Numpy:
    """NumPy twin of ``flow/paths.cu`` (one legal schedule of its claims:
    the forward side's, then the backward side's, each first come first
    served in slot order)."""

    def __init__(self, V):
        _tree_arrays(self, np, V)

    def _forward(self, L, mask, frontier, target, other):
        owner, fin_u, bclaim = self.owner, self.fin_u, self.bclaim
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
        o = owner[w]
        dd = np.where(inside & (o <= -2), -2 - o, -1)
        meet = dd >= 0
        meet[meet] = bclaim[dd[meet]] == -1
        want = self.partner[rr]
        meet &= (want < 0) | (want == dd)        # a paired root meets its partner's tree alone
        # ends: the first candidate of each tree (the terminal, or an open
        # backward tree), then the first tree of each backward tree
        ending = _firsts(rr, np.flatnonzero(at_target | meet))
        back = ending[~at_target[ending]]
        ending = np.union1d(ending[at_target[ending]], _firsts(dd, back))
        e_r = rr[ending]
        fin_u[e_r], self.fin_a[e_r], self.fin_w[e_r] = u[ending], code[ending], w[ending]
        won = ending[~at_target[ending]]
        bclaim[dd[won]] = rr[won]
        # growth of the trees still open: the first claim of each free vertex
        grow = _firsts(w, np.flatnonzero(inside & (o == -1) & (fin_u[rr] == -1)))
        owner[w[grow]] = rr[grow]
        self.pv[w[grow]] = u[grow]
        self.pa[w[grow]] = code[grow]
        return w[grow]

    def hub_level(self, L, mask, root, target, other):
        """The first level of the tree of the one root `root` (the twin of
        ``gpumatch_fp_hub_level``): its next frontier."""
        return self._forward(L, mask, np.asarray([root], dtype=np.int64), target, other)

    def _backward(self, L, mask, bfront, target, other):
        owner, fin_u, bclaim = self.owner, self.fin_u, self.bclaim
        d = -2 - owner[bfront]
        open_ = bclaim[d] == -1
        W, d = bfront[open_], d[open_]
        flow, cap = L["flow"], L["cap"]
        # x -> w along out-arc k of x (an in-arc of w), or cancelling flow on w -> x
        oi, js = csr.expand_segments(L["in_indptr"], W)
        ks = L["in_to_out"][js].astype(np.int64)
        keep_i = cap[ks] - flow[ks] > 0
        oo, ps = csr.expand_segments(L["indptr"], W)
        ps = ps.astype(np.int64)
        keep = flow[ps] > 0
        w = np.concatenate([W[oi][keep_i], W[oo][keep]]).astype(np.int64)
        dd = np.concatenate([d[oi][keep_i], d[oo][keep]])
        x = np.concatenate([L["in_indices"][js][keep_i], L["indices"][ps][keep]]).astype(np.int64)
        code = np.concatenate([ks[keep_i], -ps[keep] - 1])
        ok = (x != target) & (x != other)
        ok[ok] = mask[x[ok]]
        w, dd, x, code = w[ok], dd[ok], x[ok], code[ok]
        o = owner[x]
        meet = o >= 0
        meet[meet] = fin_u[o[meet]] == -1
        want = self.partner[np.maximum(o, 0)]
        meet &= (want < 0) | (want == dd)
        # meetings with open forward trees: the first of each backward tree,
        # then the first of each forward tree
        m = _firsts(o, _firsts(dd, np.flatnonzero(meet)))
        fr = o[m]
        fin_u[fr], self.fin_a[fr], self.fin_w[fr] = x[m], code[m], w[m]
        bclaim[dd[m]] = fr
        grow = _firsts(x, np.flatnonzero((o == -1) & (bclaim[dd] == -1)))
        owner[x[grow]] = -2 - dd[grow]
        self.pv[x[grow]] = w[grow]
        self.pa[x[grow]] = code[grow]
        return x[grow]

    def target_steps(self, L, target, inner):
        return _target_steps(L, target, inner)

    def pair_up(self, excess, tails, heads, first, on, dropped, roots):
        """The roots' side and partners of a pass over pairs (the twin of
        ``gpumatch_fp_pair_clear`` and ``gpumatch_fp_pair_set``); updates
        `on`, `dropped` and `roots` in place."""
        V = roots.shape[0]
        if not first:
            dropped |= on & (self.fin_u[tails] < 0)
        on[...] = (excess[tails] > 0) & (excess[heads] < 0) & ~dropped
        roots[tails] = False
        roots[heads] = False
        self.partner[tails] = V
        roots[tails[on]] = True
        roots[heads[on]] = True
        self.partner[tails[on]] = heads[on]

    def setup(self, L, excess, inner, near, steps):
        roots = np.flatnonzero(inner & (excess > 0))
        sinks = np.flatnonzero(inner & (excess < 0))
        self.owner.fill(-1)
        self.fin_u.fill(-1)
        self.bclaim.fill(-1)
        self.tstep.fill(NO_STEP)
        self.owner[roots] = roots
        self.owner[sinks] = -2 - sinks
        if near is not None:
            live = (excess[near] == 0) & (_resid(L["cap"], L["flow"], steps) > 0)
            near, steps = near[live], steps[live]
            near, first = np.unique(near, return_index=True)   # a vertex listed twice: its first step
            self.tstep[near] = steps[first]
            self.owner[near] = -2 - near
            sinks = np.concatenate([sinks, near])
        return roots, sinks, int(excess[roots].sum())

    def levels(self, L, mask, frontier, bfront, target, other, short, max_levels, back, floor, max_long=1,
               coop=False):
        """One level of both sides (the NumPy twin has no one-block loop);
        returns ``(next frontier, next backward frontier, 1, long levels
        run (0 or 1), backward levels run)``."""
        runb = _backward_runs(bfront.shape[0], frontier.shape[0], back, floor)
        long_ = int(frontier.shape[0] + (bfront.shape[0] if runb else 0) > short)
        nxt = self._forward(L, mask, frontier, target, other)
        if runb:
            bfront = self._backward(L, mask, bfront, target, other)
        return nxt, bfront, 1, long_, int(runb)

    def augment(self, L, excess, roots, target):
        R = roots[self.fin_u[roots] >= 0]
        if R.shape[0] == 0:
            return 0, 0
        cap, flow, pv, pa = L["cap"], L["flow"], self.pv, self.pa
        w = self.fin_w[R]
        isb = w != target
        b = np.where(isb, -2 - self.owner[np.where(isb, w, 0)], w)   # the backward root, or the target
        ts = np.where(isb, self.tstep[b], NO_STEP)                     # its step to the target
        dfc = isb & (ts == NO_STEP)                                     # paths that end at a deficit
        d = excess[R].copy()
        d = np.minimum(np.minimum(d, np.where(dfc, -excess[b], d)), _resid(cap, flow, self.fin_a[R]))
        tsr = np.flatnonzero(ts != NO_STEP)
        d[tsr] = np.minimum(d[tsr], _resid(cap, flow, ts[tsr]))
        # bottlenecks: the forward part (fin_u back to the root), then the backward one (fin_w down to b)
        for cur, end in ((self.fin_u[R].copy(), R), (w.copy(), b)):
            on = cur != end
            while on.any():
                idx = np.flatnonzero(on)
                d[idx] = np.minimum(d[idx], _resid(cap, flow, pa[cur[idx]]))
                cur[idx] = pv[cur[idx]]
                on = cur != end
        ok = d > 0
        R, w, b, ts, dfc, d = R[ok], w[ok], b[ok], ts[ok], dfc[ok], d[ok]
        _push(flow, self.fin_a[R], d)
        for cur, end in ((self.fin_u[R].copy(), R), (w.copy(), b)):
            idx = np.flatnonzero(cur != end)
            while idx.shape[0]:
                _push(flow, pa[cur[idx]], d[idx])
                cur[idx] = pv[cur[idx]]
                idx = idx[cur[idx] != end[idx]]
        tsr = ts != NO_STEP
        _push(flow, ts[tsr], d[tsr])
        excess[R] -= d
        np.add.at(excess, np.where(dfc, b, target), d)
        return int(R.shape[0]), int(d.sum())


class _Cuda:
    """Launchers of the ``flow/paths.cu`` kernels (one read-back per level)."""

    def __init__(self, V, idt):
        cp = _backend.cp
        defines = _cuda.index_defines(idt)
        self.k_level = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_level", defines)
        self.k_augment = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_augment", defines)
        self.k_loop = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_level_loop", defines)
        self.k_target = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_target_steps", defines)
        self.k_setup = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_setup", defines)
        self.k_setup_near = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_setup_near", defines)
        self.k_pair_clear = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_pair_clear", defines)
        self.k_pair_set = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_pair_set", defines)
        self.k_hub = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_hub_level", defines)
        self.hub_count = cp.zeros(1, dtype=np.uint64)
        self.counts = cp.zeros(4, dtype=np.uint64)
        self.state = cp.zeros(4, dtype=np.int64)
        self.V = V
        _tree_arrays(self, cp, V)
        # the pass's roots and backward roots; the target's neighbours with
        # their steps are allocated on first use
        self.roots = cp.empty(max(V, 1), dtype=np.int64)
        self.sinks = cp.empty(max(V, 1), dtype=np.int64)
        self.near = self.steps = None
        self.setup_counts = cp.zeros(3, dtype=np.uint64)
        # two lists per side: the frontier and the next level
        self.bufs = [cp.empty(max(V, 1), dtype=np.int64) for _ in range(4)]
        # level counts (forward, backward): a level writes cnt[2c:2c+2] and
        # zeroes the other pair for the next one
        self.cnt = cp.zeros(4, dtype=np.uint64)
        self.c = 0
        self.moved = cp.zeros(2, dtype=np.int64)
        # the cooperative loop (compiled on first use; grid 0: not available)
        self.defines = defines
        self.k_coop, self.coop_grid = None, None
        self.coop_counts = cp.zeros(6, dtype=np.uint64)
        self.coop_state = cp.zeros(5, dtype=np.int64)

    def _coop(self):
        """The kernel of the cooperative loop and its grid, or None where
        the device cannot launch it."""
        if self.coop_grid is None:
            k = _cuda.get_kernel("flow/paths.cu", "gpumatch_fp_level_coop", self.defines, cooperative=True)
            self.coop_grid = _cuda.cooperative_grid(k, COOP_BLOCK, COOP_PER_SM)
            self.k_coop = k if self.coop_grid > 0 else None
        return self.k_coop

    def target_steps(self, L, target, inner):
        """The twin of :func:`_target_steps`: one launch and one read-back."""
        cp = _backend.cp
        if self.near is None:
            self.near = cp.empty(max(self.V, 1), dtype=np.int64)
            self.steps = cp.empty(max(self.V, 1), dtype=np.int64)
        count = cp.zeros(1, dtype=np.uint64)
        # grid-stride over the target's arcs, whose number only the device reads
        self.k_target((1024,), (_cuda.BLOCK,),
                      (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"],
                       L["in_to_out"], inner, np.int64(target), self.near, self.steps, count))
        n = int(count.get()[0])
        return self.near[:n], self.steps[:n]

    def pair_up(self, excess, tails, heads, first, on, dropped, roots):
        """As :meth:`_Numpy.pair_up`, in two launches without a read-back."""
        n = int(tails.shape[0])
        if n == 0:
            return
        grid = _cuda.grid_for(n)
        self.k_pair_clear(grid, (_cuda.BLOCK,), (tails, heads, np.int64(n), roots, self.partner, np.int64(self.V)))
        self.k_pair_set(grid, (_cuda.BLOCK,), (tails, heads, np.int64(n), excess, self.fin_u, np.int32(first), on,
                                               dropped, roots, self.partner))

    def setup(self, L, excess, inner, near, steps):
        """Reset the trees and list the roots and backward roots of a pass:
        two or three launches and one read-back; returns ``(roots, backward
        roots, total excess of the roots)``."""
        c = self.setup_counts
        c.fill(0)
        self.k_setup(_cuda.grid_for(self.V), (_cuda.BLOCK,),
                     (np.int64(self.V), inner, excess, self.owner, self.bclaim, self.tstep, self.fin_u, self.roots,
                      self.sinks, c))
        if near is not None and near.shape[0]:
            n = int(near.shape[0])
            self.k_setup_near(_cuda.grid_for(n), (_cuda.BLOCK,),
                              (L["cap"], L["flow"], excess, near, steps, np.int64(n), self.owner, self.tstep,
                               self.sinks, c))
        nr, ns, supply = (int(x) for x in c.get())
        return self.roots[:nr], self.sinks[:ns], supply

    def _lists(self, frontier, bfront):
        """The four lists as ``(out0, out1, bout0, bout1)`` of the loop
        (``flow/paths.cu``): out0 and bout0 hold neither frontier, out1 may
        hold the forward one and bout1 the backward one (each side reads its
        frontier only before its first level wrote out0 / bout0)."""
        def home(a):
            return next((b for b in self.bufs if a.shape[0] and b.data.ptr == a.data.ptr), None)

        f, b = home(frontier), home(bfront)
        spare = [x for x in self.bufs if x is not f and x is not b]
        out0, bout0 = spare.pop(), spare.pop()
        out1 = f if f is not None else spare.pop()
        bout1 = b if b is not None else spare.pop()
        return out0, out1, bout0, bout1

    def levels(self, L, mask, frontier, bfront, target, other, short, max_levels, back, floor, max_long=1,
               coop=False):
        """Levels from the two frontiers.  With `coop` (where the device
        can launch it): up to `max_levels` in one cooperative launch, of
        which at most `max_long` longer than `short`.  Else one multi-block
        level if they are longer than `short`, or up to `max_levels` in one
        block until a level gets longer.  Returns ``(next frontier, next
        backward frontier, levels run, long levels run, backward levels
        run)``."""
        n, nb = int(frontier.shape[0]), int(bfront.shape[0])
        net = (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"], mask)
        trees = (self.owner, self.pv, self.pa, self.bclaim, self.fin_u, self.fin_a, self.fin_w, self.partner)
        ends = (np.int64(target), np.int64(other))
        out0, out1, bout0, bout1 = self._lists(frontier, bfront)
        if coop and self._coop() is not None:
            self.k_coop((self.coop_grid,), (COOP_BLOCK,),
                        net + (frontier, np.int64(n), bfront, np.int64(nb)) + ends + trees
                        + (out0, out1, bout0, bout1, self.coop_counts, np.int64(short), np.int64(max_long),
                           np.int64(max_levels), np.float64(back), np.int64(floor if back > 0 else 0),
                           self.coop_state))
            ran, size, bran, bsize, nlong = (int(x) for x in self.coop_state.get())
            if ran == 0:   # pragma: no cover - the caller never asks for no level
                return frontier, bfront, 0, 0, 0
            nxt = (out0 if ran % 2 == 1 else out1)[:size]
            bnxt = (bout0 if bran % 2 == 1 else bout1)[:bsize] if bran else bfront
            return nxt, bnxt, ran, nlong, bran
        runb = _backward_runs(nb, n, back, floor)
        if n + (nb if runb else 0) > short:
            # one level into the two lists that hold neither frontier
            nb_run = nb if runb else 0
            c = self.c
            self.c ^= 1
            tile = 8   # GM_FP_TILE
            self.k_level(_cuda.grid_for((n + nb_run) * tile), (_cuda.BLOCK,),
                         net + (frontier, np.int64(n), bfront, np.int64(nb_run)) + ends + trees
                         + (out0, bout0, self.cnt[2 * c:2 * c + 2], self.cnt[2 - 2 * c:4 - 2 * c]))
            size, bsize = (int(x) for x in self.cnt[2 * c:2 * c + 2].get())
            return out0[:size], (bout0[:bsize] if runb else bfront), 1, 1, int(runb)
        self.k_loop((1,), (1024,),
                    net + (frontier, np.int64(n), bfront, np.int64(nb)) + ends + trees
                    + (out0, out1, bout0, bout1, self.counts, np.int64(short), np.int64(max_levels),
                       np.float64(back), np.int64(floor if back > 0 else 0), self.state))
        ran, size, bran, bsize = (int(x) for x in self.state.get())
        if ran == 0:   # pragma: no cover - the caller never passes max_levels 0 nor a long frontier
            return frontier, bfront, 0, 0, 0
        nxt = (out0 if ran % 2 == 1 else out1)[:size]
        bnxt = (bout0 if bran % 2 == 1 else bout1)[:bsize] if bran else bfront
        return nxt, bnxt, ran, 0, bran

    def hub_level(self, L, mask, root, target, other):
        """The first level of the tree of the one root `root`, its arcs over
        the grid (``gpumatch_fp_hub_level``): one launch and one read-back;
        returns the next frontier."""
        net = (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"], mask)
        trees = (self.owner, self.pv, self.pa, self.bclaim, self.fin_u, self.fin_a, self.fin_w, self.partner)
        out, count = self.bufs[0], self.hub_count   # (cnt belongs to the multi-block levels' parity)
        count.fill(0)
        # grid-stride over the root's arcs, whose number only the device reads
        self.k_hub((1024,), (256,), net + (np.int64(root), np.int64(target), np.int64(other)) + trees + (out, count))
        return out[:int(count.get()[0])]

    def augment(self, L, excess, roots, target):
        n = int(roots.shape[0])
        self.moved.fill(0)
        self.k_augment(_cuda.grid_for(n), (_cuda.BLOCK,),
                       (L["cap"], L["flow"], excess, roots, np.int64(n), np.int64(target), self.owner, self.pv,
                        self.pa, self.tstep, self.fin_u, self.fin_a, self.fin_w, self.moved))
        paths, amount = (int(x) for x in self.moved.get())
        return paths, amount


def buffers(backend, V, idt):
    """Work arrays of the pass for a network of `V` vertices (kept by the solver)."""
    return _Cuda(V, idt) if backend == "cupy" else _Numpy(V)


def _tick(last):
    """Host seconds since ``last[0]`` (which it resets), for :data:`TRACE`."""
    now = time.perf_counter()
    dt, last[0] = now - last[0], now
    return dt


def _target_steps(L, target, ok):
    """NumPy: the vertices of `ok` with a residual arc into `target`, each
    with the step along it (coded as in ``flow/paths.cu``).  A vertex with
    two such arcs (both directions of a pair) is listed twice."""
    a, b = int(L["in_indptr"][target]), int(L["in_indptr"][target + 1])
    c, e = int(L["indptr"][target]), int(L["indptr"][target + 1])
    k = L["in_to_out"][a:b].astype(np.int64)               # arcs x -> target
    p = np.arange(c, e, dtype=np.int64)                    # arcs target -> x: cancelling their flow
    x = np.concatenate([L["in_indices"][a:b].astype(np.int64), L["indices"][c:e].astype(np.int64)])
    code = np.concatenate([k, -p - 1])
    keep = (_resid(L["cap"], L["flow"], code) > 0) & ok[x]
    return x[keep], code[keep]


def route(bufs, L, excess, mask, target, other, check=None, limits=None, pairs=None, source_root=False):
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
    pairs : (tails, heads) of index arrays, optional
        Pair each excess with a deficit of its own: only the vertices
        ``tails[i]`` with excess root forward trees, only the vertices
        ``heads[i]`` with a deficit root backward trees, and the forward
        tree of ``tails[i]`` ends only in the backward tree of
        ``heads[i]`` (a vertex listed twice in `tails` keeps one of its
        partners); neither terminal is entered or ends a path.  A pair
        whose tree found no path in a pass drops out (its head is out of
        reach, or other pairs' trees cut it off); the passes go on while
        any pair finds one, up to ``phases``, and ``exhausted`` means
        that no pair is left.  A decrease of an arc's capacity below its
        flow leaves such a pair (excess at the tail, the deficit at the
        head), and a path from one to the other re-routes the flow around
        the arc without moving any other imbalance.
    source_root : bool, optional
        `other` (the source) roots a forward tree of its own with
        ``excess[other]`` (the caller sets it: what the paths may carry in
        all), its first level spread over the device (``hub_level``);
        no other tree enters it, as it is that tree's.  Without pairs only.
        The tree of one root ends at one path a pass, so a pass augments
        one path; once a pass finds none (``exhausted``), the vertices of
        that tree (``bufs.owner == other``) are those the source reaches
        in the residual network, the source side of a minimum cut.

    Returns
    -------
    dict
        ``phases``, ``levels``, ``back_levels`` (levels the backward
        trees grew), ``paths`` (augmented), ``amount`` (flow moved) and
        ``exhausted``: True when no excess is left in `mask` or
        none of it can reach a target (the last pass grew every tree to its
        end and found no path), False when the limits stopped the pass;
        ``stuck``: the last pass grew every tree to its end and at least
        half its roots found no path (with ``exhausted`` False: the limits,
        ``few`` among them, ended the passes before one proved those roots
        stuck).

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch.flow import _maxflow
    >>> from gpumatch.flow.dynamic import _paths
    >>> # 0 -> 1 -> 2 -> 3, capacity 2 each; vertex 1 has 2 units of excess
    >>> L = _maxflow._build_rcsr(np, np.array([0, 1, 2, 3, 3]), np.array([1, 2, 3]), np.array([2, 2, 2]), 4)
    >>> L["flow"] = np.zeros(3, dtype=np.int64)
    >>> excess = np.array([0, 2, 0, 0])
    >>> stats = _paths.route(_paths.buffers("numpy", 4, np.int64), L, excess, np.ones(4, dtype=bool), 3, 0)
    >>> L["flow"].tolist(), excess.tolist(), stats["paths"]
    ([0, 2, 2], [0, 0, 0, 2], 1)
    """
    lim = dict(LIMITS, **(limits or {}))
    inner = mask.copy()
    inner[target] = False
    inner[other] = False
    near = steps = None
    looked = not (float(lim["back"]) > 0 and lim["terminal"])
    if source_root:
        if pairs is not None:
            raise ValueError("source_root takes no pairs")
        # the root is owned by its own tree, so no other tree enters it,
        # and the kernels need no terminal to keep out (-1: none)
        inner[other] = True
        return _passes(bufs, L, excess, mask, inner, target, -1, check, lim, near, steps, looked, hub=other)
    if pairs is None:
        return _passes(bufs, L, excess, mask, inner, target, other, check, lim, near, steps, looked)
    tails, heads = pairs
    live = inner[tails] & inner[heads]           # (inner holds no terminal)
    tails, heads = tails[live], heads[live]
    xp = csr.array_module(inner)
    V = inner.shape[0]
    # per pass, the pairs whose tail still has excess and head a deficit
    # root the trees (the tail's tree ends only at its head); a pair whose
    # tree found no path in a pass is left to the phases (its head is out
    # of reach, or other pairs' trees cut it off)
    roots = xp.zeros(V, dtype=bool)
    on = xp.zeros(tails.shape[0], dtype=bool)
    dropped = xp.zeros(tails.shape[0], dtype=bool)
    first = [True]
    partner = bufs.partner
    partner.fill(V)                              # matches no backward root

    def pair_up():
        bufs.pair_up(excess, tails, heads, first[0], on, dropped, roots)
        first[0] = False
        return roots

    try:
        stats = _passes(bufs, L, excess, inner, None, -1, -1, check, lim, None, None, True, pair_up)
    finally:
        partner.fill(-1)
    # exhausted: no pair is left (one left may still have a path); the
    # flags are read back (a device any() of them takes CuPy's CUB path,
    # compiled on first use for seconds)
    left = _backend.to_numpy((excess[tails] > 0) & (excess[heads] < 0))
    stats["exhausted"] = not left.any()
    return stats


def _passes(bufs, L, excess, mask, inner, target, other, check, lim, near, steps, looked, pair_up=None, hub=None):
    """The passes of :func:`route`; with `pair_up` (pairs), ``inner =
    pair_up()`` before each pass; with `hub` (the one root), its tree's
    first level by ``bufs.hub_level``."""
    stats = {"phases": 0, "levels": 0, "back_levels": 0, "paths": 0, "amount": 0, "exhausted": False,
             "stuck": False}
    back, floor = float(lim["back"]), int(lim["back_floor"])
    t_trace = [time.perf_counter()]
    while int(lim["phases"]) > 0:
        # the roots (excess), and the backward roots: every deficit, and
        # every target's neighbour with neither excess nor a deficit whose
        # arc into the target still has a residual
        if pair_up is not None:
            inner = pair_up()
        roots, sinks, supply = bufs.setup(L, excess, inner, near, steps)
        if roots.shape[0] == 0:
            stats["exhausted"] = True
            break
        if not looked:
            # the target's neighbours, found once (the passes only use up
            # their arcs' residuals), unless there are too many to grow
            looked = True
            near, steps = bufs.target_steps(L, target, inner)
            if near.shape[0] > int(lim["terminal"]):
                near = steps = None
            else:
                roots, sinks, supply = bufs.setup(L, excess, inner, near, steps)
        frontier, bfront = roots, sinks
        stats["phases"] += 1
        if TRACE is not None:
            TRACE.append((stats["phases"], "set-up", int(roots.shape[0]), int(sinks.shape[0]), 0, _tick(t_trace)))
        long_levels = levels = 0
        if hub is not None and frontier.shape[0] and int(lim["all_levels"]) > 0:
            if check is not None:
                check()
            frontier = bufs.hub_level(L, mask, hub, target, other)
            levels = long_levels = 1
        while frontier.shape[0] and long_levels < int(lim["levels"]) and levels < int(lim["all_levels"]):
            if check is not None:
                check()
            sizes = (int(frontier.shape[0]), int(bfront.shape[0])) if TRACE is not None else None
            frontier, bfront, ran, nlong, bran = bufs.levels(L, mask, frontier, bfront, target, other,
                                                             int(lim["short"]), int(lim["all_levels"]) - levels,
                                                             back, floor, int(lim["levels"]) - long_levels,
                                                             bool(lim["coop"]))
            if ran == 0:   # pragma: no cover - the loop's conditions leave a level to run
                break
            levels += ran
            long_levels += nlong
            stats["back_levels"] += bran
            if TRACE is not None:
                TRACE.append((stats["phases"], *sizes, ran, bran, _tick(t_trace)))
        stats["levels"] += levels
        paths, amount = bufs.augment(L, excess, roots, target)
        if TRACE is not None:
            TRACE.append((stats["phases"], "augment", int(roots.shape[0]), 0, paths, _tick(t_trace)))
        stats["paths"] += paths
        stats["amount"] += amount
        if paths == 0:
            # forward trees that ran out of vertices without a path: every
            # vertex the roots reach joined one of them (a forward tree that
            # reaches a backward tree always takes it when no other path was
            # found), so no root reaches a target
            stats["exhausted"] = stats["stuck"] = frontier.shape[0] == 0
            break
        # most roots found a path but little of their excess got through:
        # the paths are narrow (their bottlenecks), not missing, and the next
        # pass finds the next ones as cheaply
        rate = lim["rate"]
        narrow = (rate is not None and amount < float(lim["progress"]) * supply
                  and paths >= float(rate) * int(roots.shape[0]))
        # trees that all ran to their end, and at least half the roots found no path:
        # those are stuck rather than narrow, and the next pass (over fewer
        # roots) either routes them or proves it (``exhausted``), which
        # push-relabel would need a global relabel to learn
        left = int(roots.shape[0]) - paths
        stats["stuck"] = frontier.shape[0] == 0 and paths <= left
        few = stats["stuck"] and left <= int(lim["few"] or 0)
        if pair_up is None and (frontier.shape[0] or
                                (amount < float(lim["progress"]) * supply and not narrow and not few)):
            # trees still growing at the level limit, or little of the excess
            # placed by few paths: the rest needs longer or wider paths, where
            # push-relabel's global relabel costs less than a BFS per pass
            # (pairs go on while any finds a path: those without one drop out)
            break
        if stats["phases"] >= int(lim["narrow_phases"] if narrow else lim["phases"]):
            break
    return stats

"""The repair phases of :class:`~gpumatch.flow.MaxFlowSolver`, and their tuning.

After :meth:`~gpumatch.flow.MaxFlowSolver.update_capacities` (in
:mod:`gpumatch.flow.dynamic._update`) left excesses and deficits, a solve repairs
the pseudo-flow: phase X sends every excess to the sink side's targets or
back to the source, phase D fills every deficit (push-relabel on the
transposed network), each first routing what it can along augmenting paths
(:mod:`gpumatch.flow.dynamic._paths`) and pairing cut arcs with their own deficits
(:mod:`gpumatch.flow.dynamic._detour`); phase F, when the value moved, finds the
new cut.  The overview of the whole method is the docstring of
:mod:`gpumatch.flow.dynamic._dynamic`.

:data:`REPAIR` is the one place of the dynamic flow solver's tuning
constants: what each trades and how it was measured is written next to it.
"""

from __future__ import annotations


import time

import numpy as np

from ... import _backend, _cuda, csr
from .. import _maxflow as _mf
from . import _detour, _labels, _paths
from .._tuning import _RELABEL_KEYS, REPAIR  # noqa: F401  (re-exported)


__all__ = ["REPAIR"]



def _host_copy(a):
    """A NumPy copy of `a` (a NumPy array is copied, a CuPy one fetched)."""
    return a.copy() if isinstance(a, np.ndarray) else _backend.to_numpy(a)


def _scatter_add(xp, a, idx, vals):
    """``a[idx] += vals`` with repeated indices accumulated (both backends)."""
    xp.add.at(a, idx, vals)  # cupy.add.at is what the deprecated cupyx.scatter_add calls


def _pairing():
    """Whether a repair may re-route cut arcs' excess to their own deficits
    (``REPAIR["pair"]`` or ``REPAIR["detour"]``, for small batches or all),
    so that updates keep their arcs and cuts."""
    small = REPAIR.get("small") or {}
    return bool(REPAIR.get("pair") or small.get("pair") or REPAIR.get("detour") or small.get("detour"))


def _pair_min(rep=None):
    """The smallest cut (units) that the pair and detour passes re-route
    (``pair_min`` of `rep`, None: :data:`REPAIR`; at least 1)."""
    return max(1, int((REPAIR if rep is None else rep).get("pair_min") or 1))


class _OverBudget(Exception):
    """The dynamic repair ran past its time budget (the solver then starts from scratch)."""


class _Phase:
    """One push-relabel run towards two tiers of height-0 vertices (targets).

    Parameters
    ----------
    solver : MaxFlowSolver
    ctx, st : kernel context and state (``height``, ``excess``) of the network used
    near, far : callables returning index arrays; `far` may be None
        The BFS of a global relabel starts from the `near` targets at level
        0 and, for the vertices it did not reach, from the `far` targets at
        level ``solver._far_level``.  With `targets` both are derived from
        it (leave them None).
    terminals : (target, other)
        Passed to the discharge kernel (neither is ever discharged).
    hlimit : int
        Heights at or above it are inactive.
    blocked : int or None
        A vertex held at `hlimit` (never reached by the BFS).
    must_clear : bool
        The phase must leave no excess: when the worklist empties with
        excess left at `hlimit`, one more full relabel decides.
    far_return : callable or None
        ``far_return(xs)`` sends what it can of the excess of the vertices
        `xs` straight to the far terminal (paths of one or two arcs).
    early : bool
        A relabel may stop its BFS once every vertex with excess has a
        height (``REPAIR["early_stop"]``, or ``REPAIR["early_near"]`` after
        full relabels that found all the excess able to reach a near
        target); the phase's last, confirming relabel never does.
    sealed : callable or None
        ``sealed(split)`` returns the side of the kept cut that holds the
        near targets (a bool mask) when `split` (the relabel may split) and
        no residual arc leads from the other side into it, else None.  Then
        an early-stopping relabel runs two
        bounded BFS: from the near targets until the excess of their side is
        labelled, and from the far targets over the other side until its
        excess is (the near BFS cannot enter that side).
    targets : (near terminal, far terminal, deficits, side) or None
        The targets as the steps of :mod:`._labels` find them: the two
        terminals and, with `deficits`, the other vertices with a deficit,
        near ones on the side of the kept cut that ``side()`` returns (a
        bool mask; a sealed cut's side must be that one) and far ones off
        it.
    """

    def __init__(self, solver, ctx, st, near=None, far=None, *, terminals, hlimit, blocked=None, must_clear=True,
                 far_return=None, early=False, sealed=None, targets=None, name=""):
        self.s = solver
        self.targets = targets
        if targets is not None:
            near, far = (lambda: self._tier(True)), (lambda: self._tier(False))
        self.work = None
        self.early = early
        self.sealed = sealed
        self.ctx, self.st = ctx, st
        self.near, self.far = near, far
        self.far_return = far_return
        self.terminals = terminals
        self.hlimit = int(hlimit)
        self.blocked = blocked
        self.must_clear = must_clear
        self.name = name
        self.full = True       # did the last relabel run the BFS from the far targets (or is there none)?
        # (``REPAIR["early_near"]``) every full relabel so far found all the
        # excess able to reach a near target; None before the first one
        self.near_only = None

    def relabel(self, force_full=False):
        """Exact two-tier heights (BFS over reverse residual arcs); returns the seconds it took.

        A phase with `targets` and far targets runs the steps of
        :mod:`._labels` when no early stop applies (:meth:`_relabel_full`)
        or its kept cut is sealed (:meth:`_relabel_split`); those leave the
        next worklist in ``self.work`` (else None: :meth:`active` finds it).
        """
        s, xp = self.s, self.s._xp
        t0 = time.perf_counter()
        self.work = None
        s._bfs_depth = 0
        early = self.early and not force_full and s._rep.get("early_stop", True)
        split = bool(s._rep.get("split_relabel"))
        if self.early and not force_full and not early and s._rep.get("early_near") and self.near_only:
            # every full relabel of this phase so far found all its excess
            # able to reach a near target: stop this one early too (split
            # at a sealed cut)
            early = split = True
            s._stats["early_near_relabels"] = s._stats.get("early_near_relabels", 0) + 1
        if self.targets is not None and self.far is not None:
            if not early:
                return self._relabel_full(force_full, t0)
            side = self.sealed(split) if self.sealed is not None else None
            if side is not None:
                return self._relabel_split(side, t0)
        h = self.st["height"]
        h.fill(-1)
        if self.blocked is not None:
            h[self.blocked] = self.hlimit
        near = self.near()
        h[near] = 0
        watch = held = None
        if early:
            # only the vertices with excess need a height: stop the BFS once
            # they all have one (the rest get the next level, a valid label)
            watch = xp.nonzero(s._inner(self.st["excess"] > 0))[0]
            if self.far is not None:
                # the far targets wait for a full relabel: excess that climbs
                # past the partial labels must not drain into them meanwhile.
                # They are held at `hlimit` from the start, so that the BFS
                # does not label anything through them either: a vertex whose
                # only path to a near target ran through the far terminal got
                # a height it could never push down from (its excess cannot
                # pass a terminal), and with every relabel early, it stayed
                # there for good
                held = self.far()
                held = held[h[held] < 0]
                h[held] = self.hlimit
        level, stopped = s._bfs(self.ctx, self.st, near, 0, watch if watch is not None and watch.shape[0] else None)
        if stopped:
            h[h < 0] = level + 1
            self.full = False
            s._stats["global_relabels"] += 1
            return time.perf_counter() - t0
        if held is not None:
            h[held] = -1       # (the far BFS below starts from them)
        self.full = True
        if self.far is not None:
            lazy = s._rep.get("lazy_far", True) and not force_full
            if lazy and self.far_return is not None:
                xs = s._unlabeled_excess(self.st, nodes=True)
                if xs.shape[0]:
                    self.far_return(xs.astype(s._idt))
            if lazy and not s._unlabeled_excess(self.st):
                self.full = False
            else:
                far = self.far()
                far = far[h[far] < 0]
                if far.shape[0]:
                    h[far] = s._far_level
                    s._bfs(self.ctx, self.st, far, s._far_level)
        h[h < 0] = self.hlimit
        s._stats["global_relabels"] += 1
        return time.perf_counter() - t0

    def _relabel_full(self, force_full, t0):
        """The relabel of a phase with `targets` when no early stop applies:
        a complete BFS from the near targets, then one from the far
        targets over what it missed (skipped while lazy and no excess was
        missed: the far targets then wait at `hlimit` for a full relabel)."""
        s = self.s
        K, st = s._label_steps(), self.st
        ex, h, (u, v) = st["excess"], st["height"], (s.source, s.sink)
        near_t, far_t, deficits, side_of = self.targets
        side = side_of()
        near, far, _ = K.start(ex, h, side, near_t, far_t, u, v, deficits)
        s._bfs(self.ctx, st, near, 0)
        lazy = s._rep.get("lazy_far", True) and not force_full
        xs = K.middle(ex, h, side, -1, u, v)      # the excess cut off from the near targets
        self.near_only = (self.near_only is not False) and xs.shape[0] == 0
        if lazy and xs.shape[0] and self.far_return is not None:
            self.far_return(xs)
        far, watch = K.far(ex, h, far, s._far_level, u, v)
        self.full = True
        if lazy and watch.shape[0] == 0:
            h[far] = self.hlimit
            self.full = False
        elif far.shape[0]:
            s._bfs(self.ctx, st, far, s._far_level)
        self.work = K.finish(ex, h, self.hlimit, self.hlimit, u, v)
        s._stats["global_relabels"] += 1
        return time.perf_counter() - t0

    def _relabel_split(self, side, t0):
        """The relabel of a sealed cut: two BFS, each stopped once the
        excess of its side has a height.

        Nothing on the far side reaches the near targets, so the near BFS
        stays on `side`; its unlabelled vertices there get the next level
        (a valid lower bound), and the far BFS labels the far side from
        ``solver._far_level``.  If the near BFS ran to its end, the vertices
        it missed on `side` join the far BFS instead, as in a full relabel.
        The steps around the two BFS are those of :mod:`._labels`.
        """
        s = self.s
        K, st = s._label_steps(), self.st
        ex, h, (u, v) = st["excess"], st["height"], (s.source, s.sink)
        near_t, far_t, deficits, _ = self.targets
        near, far, watch = K.start(ex, h, side, near_t, far_t, u, v, deficits)
        level, stopped = s._bfs(self.ctx, st, near, 0, watch) if watch.shape[0] else (0, True)
        xs = K.middle(ex, h, side, level + 1 if stopped else -1, u, v)
        if xs.shape[0] and s._rep.get("lazy_far", True) and self.far_return is not None:
            # as after a full relabel: the excess cut off from the near
            # targets first goes straight to the far terminal where it can
            self.far_return(xs)
        far, watch = K.far(ex, h, far, s._far_level, u, v)
        if far.shape[0] and watch.shape[0]:
            level, stopped = s._bfs(self.ctx, st, far, s._far_level, watch)
        else:
            level, stopped = s._far_level, bool(watch.shape[0] == 0)
        # after a complete far BFS the vertices it missed reach no target
        self.work = K.finish(ex, h, level + 1 if stopped else self.hlimit, self.hlimit, u, v)
        self.full = not stopped
        s._stats["global_relabels"] += 1
        s._stats["split_relabels"] = s._stats.get("split_relabels", 0) + 1
        return time.perf_counter() - t0

    def _tier(self, near):
        """The near (or far) targets of `targets` as an index array: the
        terminal, then with `deficits` the vertices with a deficit on (off)
        the side ``side()`` (for the relabels that do not run the steps)."""
        s, xp = self.s, self.s._xp
        near_t, far_t, deficits, side_of = self.targets
        head = xp.asarray([near_t if near else far_t], dtype=s._idt)
        if not deficits:
            return head
        side = side_of()
        m = s._inner(self.st["excess"] < 0) & (side if near else ~side)
        return xp.concatenate([head, xp.nonzero(m)[0].astype(s._idt)])

    def _listed(self):
        """The worklist after a relabel: the one its steps listed, else :meth:`active`."""
        return self.active() if self.work is None else self.work

    def _walk(self, work):
        """After a relabel, carry the excess of `work` to the targets along
        paths of admissible arcs: up to ``REPAIR["walk"]`` walks, each
        followed by a scan for the vertices that still hold excess, until
        one leaves more than ``REPAIR["walk_stall"]`` of the listed excess
        where it was; returns the worklist."""
        s = self.s
        rounds = int(s._rep.get("walk") or 0)
        stall = float(s._rep.get("walk_stall", 0.9))
        target, other = self.terminals
        ex = self.st["excess"]
        held = float(ex[work].sum()) if rounds and work.shape[0] else 0.0
        for _ in range(rounds):
            if work.shape[0] == 0:
                break
            s._K.walk(self.ctx, self.st, work, target, other, self.hlimit)
            s._stats["walks"] = s._stats.get("walks", 0) + 1
            work = self.active()
            left = float(ex[work].sum()) if work.shape[0] else 0.0
            if left > stall * held:
                break
            held = left
        return work

    def active(self):
        s, xp = self.s, self.s._xp
        mask = (self.st["excess"] > 0) & (self.st["height"] < self.hlimit)
        mask[s.source] = False
        mask[s.sink] = False
        return xp.nonzero(mask)[0].astype(s._idt)

    def run(self, before=None):
        """Relabel, call `before` (may add excess), discharge until no vertex is active.

        Discharge launches go in groups that start at ``REPAIR["group"]`` and
        double after each read-back; a global relabel runs whenever the
        discharges since the last one took ``REPAIR["relabel_ratio"]`` times
        its duration.  Heights are exact after a relabel and valid lower
        bounds on the distance to the targets in between, so a vertex at
        `hlimit` cannot reach any target.
        """
        s = self.s
        stats = s._stats
        guard = _mf.TUNING.get("max_iterations")
        ratio = s._rep.get("relabel_ratio")
        period = s._rep.get("max_period")
        depth = float(s._rep.get("period_depth") or 0)
        if s._rep.get("period_depth_pushed") and not s._pushed:
            depth = 0.0      # no new flow to carry across the network
        closer = s._rep.get("period_depth_closer", True)
        prev = [None]

        def limit():
            # the discharge iterations allowed before the next relabel
            # (``max_period``, or with ``period_depth`` that many times
            # the depth of the relabel's deepest BFS)
            d, p = s._bfs_depth, prev[0]
            prev[0] = d
            if period is None:
                return None
            lim = period
            if depth and (not closer or (p is not None and d < p)):
                lim = max(period, int(depth * d))
            stats["longest_period"] = max(stats.get("longest_period", 0), lim)
            return lim
        g0 = max(1, int(s._rep.get("group", 1)))
        gr0, it0 = stats["global_relabels"], stats["iterations"]
        t_run = time.perf_counter()
        t_gr = t_rel = self.relabel()
        lim = limit()
        calls = 0
        if before is not None:
            before()
            self.work = None     # (excess added since the relabel)
        work = self._walk(self._listed())
        group, since = g0, 0
        t_win = time.perf_counter()
        target, other = self.terminals
        while True:
            if work.shape[0] == 0:
                # a scan of the excesses catches any vertex the worklist lost
                work = self.active()
                if work.shape[0] == 0:
                    if not self.must_clear or not s._excess_left(self.st):
                        break
                    if since == 0 and self.full:
                        break  # no target can take the excess left: the caller reports it
                    # excess at hlimit: a full relabel decides (far targets, stale heights)
                    t_gr = self.relabel(force_full=True)
                    t_rel += t_gr
                    lim = limit()
                    work = self._walk(self._listed())
                    group, since = g0, 0
                    t_win = time.perf_counter()
                    continue
            if since and ((ratio is not None and time.perf_counter() - t_win > ratio * t_gr)
                          or (lim is not None and since >= lim)):
                t_gr = self.relabel()
                t_rel += t_gr
                lim = limit()
                work = self._walk(self._listed())
                group, since = g0, 0
                t_win = time.perf_counter()
                continue
            if guard is not None and stats["iterations"] - it0 > guard:
                raise RuntimeError(f"push-relabel did not finish within {guard} iterations")
            t_call = time.perf_counter()
            if s._deadline is not None and t_call > s._deadline:
                raise _OverBudget()
            work, ran = s._K.discharge(self.ctx, self.st, work, s._stamp, target, other, self.hlimit, group)
            calls += 1
            s._stamp += group
            stats["iterations"] += ran
            since += ran
            group = min(2 * group, s._batch)
            if s._deadline is not None and ran:
                # no group planned past the deadline: at the last call's pace
                # (its read-back synced), a group of 64 launches over a long
                # worklist ran ~100 ms past a 20 ms budget
                now = time.perf_counter()
                pace = max((now - t_call) / ran, 1e-9)
                group = max(1, min(group, int((s._deadline - now) / pace)))
        its = stats["iterations"] - it0
        # (name, discharge iterations, global relabels, seconds, seconds in relabels, discharge calls)
        stats.setdefault("phases", []).append(
            (self.name, its, stats["global_relabels"] - gr0, round(time.perf_counter() - t_run, 4), round(t_rel, 4),
             calls))
        return its


class _RepairMixin:
    """The repair phases of :class:`~gpumatch.flow.MaxFlowSolver` (its methods)."""

    def _bfs(self, ctx, st, frontier, level, watch=None):
        """BFS levels from `frontier` (height `level`) until none is left (the deadline checked first).

        With `watch` (vertex ids), the BFS stops as soon as all of them are
        labelled.  Returns ``(height of the last frontier, stopped early)``;
        after an early stop every unlabelled vertex is at least one level
        further, so that height plus one is a valid label for all of them.
        """
        self._check_budget()
        _, ran, stopped = self._K.bfs_run(ctx, st, frontier, level, watch, self._batch)
        self._bfs_depth = max(self._bfs_depth, int(ran))
        return level + ran, stopped

    def _inner(self, mask):
        mask[self.source] = False
        mask[self.sink] = False
        return mask

    def _label_steps(self):
        """The steps of the phases' relabels (:mod:`._labels`), made on first use."""
        if self._lsteps is None:
            self._lsteps = _labels.steps(self.backend, self._V, self._idt)
        return self._lsteps

    def _unlabeled_excess(self, st, nodes=False):
        m = self._inner((st["excess"] > 0) & (st["height"] < 0))
        return self._xp.nonzero(m)[0] if nodes else bool(m.any())

    def _excess_left(self, st):
        return self._signs(st["excess"], clear=False)[0]

    def _imbalance(self):
        """(any excess, any deficit) at a vertex other than the terminals,
        whose excesses are set to 0 (they mean nothing here)."""
        return self._signs(self._excess, clear=True)

    def _signs(self, ex, clear):
        """(any excess, any deficit) in `ex` at a vertex other than the
        terminals (with `clear`, theirs are set to 0 first); one pass and
        one read-back (``gpumatch_dyn_signs`` on the GPU)."""
        s, t = self.source, self.sink
        if self.backend == "cupy":
            if self._flags is None:
                self._flags = _backend.cp.zeros(2, dtype=np.int32)
            f = self._flags
            f.fill(0)
            _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_signs")(
                (max(1, min((self._V + 255) // 256, 4096)),), (256,),
                (np.int64(self._V), ex, np.int64(s), np.int64(t), np.int32(bool(clear)), f))
            pos, neg = (bool(x) for x in f.get())
            return pos, neg
        if clear:
            ex[s] = 0
            ex[t] = 0
        return bool(self._inner(ex > 0).any()), bool(self._inner(ex < 0).any())

    def _repair(self, times):
        """Turn the pseudo-flow into a maximum flow; returns ``(value, source side of a minimum cut)``."""
        xp, V = self._xp, self._V
        s, t = self.source, self.sink
        stats = self._stats
        if self._ctx is None:
            self._contexts()
        t0 = time.perf_counter()
        # the previous flow was maximum and left no imbalance: only an
        # update that moved flow can have created one
        pos, neg = self._imbalance() if self._moved else (False, False)
        stats["repair"] = "phases" if pos or neg else "none"
        crossed = False   # did phase X send excess back across the kept cut?
        if pos:
            crossed = self._excess_phase()
            pos, neg = self._imbalance()
            if pos:  # pragma: no cover - would be a bug
                raise RuntimeError("dynamic max flow could not place an excess; please report this")
        t1 = time.perf_counter()
        times["excess"] = t1 - t0
        if neg:
            self._deficit_phase(crossed)
            pos, neg = self._imbalance()
            if pos or neg:  # pragma: no cover - would be a bug
                raise RuntimeError("dynamic max flow could not fill a deficit; please report this")
        t2 = time.perf_counter()
        times["deficit"] = t2 - t1
        # The flow is valid now.  Every arc of the old cut S -> T stayed
        # saturated through the update and `_cap_cut` follows its capacity,
        # so value <= _cap_cut; equality proves the flow maximum and S still
        # a minimum cut (the repair then never moved flow across the cut).
        # That is always so when no phase ran: no excess and no deficit
        # means no flow moved across the cut, whose forward arcs stayed
        # saturated and whose backward arcs still carry nothing.
        value = self._value()
        side = self._side
        stats["cut"] = "kept"
        stats["fallback"] = False
        if value != self._cap_cut:
            stats["cut"] = "bfs"
            side = self._sink_bfs()
            if not bool(side[s]):
                # F: an augmenting path is left; saturate the source arcs
                # whose head reaches the sink, then the two phases of a full solve
                stats["fallback"] = True
                st = {"height": self._height, "excess": self._excess}
                one = lambda v: (lambda: xp.asarray([v], dtype=self._idt))  # noqa: E731
                paths = bool(self._rep.get("paths"))
                placed = False
                nroot = int(self._rep.get("f_root") or 0) if paths else 0
                if nroot:
                    ps = self._root_pass(value, nroot)
                    if ps["amount"] and self._value() == self._cap_cut:
                        # the paths carried all that the kept cut allows:
                        # it is a minimum cut again
                        times["cut"] = time.perf_counter() - t2
                        return self._cap_cut, self._side
                    if ps["exhausted"]:
                        # the source's last pass found no path: the flow is
                        # maximum, and that pass's tree (what the source
                        # reaches) is the source side of a minimum cut
                        times["cut"] = time.perf_counter() - t2
                        return self._value(), self._pbufs.owner == s
                    if ps["amount"]:
                        # stopped by their limits after moving flow: the
                        # heights that pick the source arcs below are the
                        # sink's BFS's, which has to run again
                        side = self._sink_bfs()
                        if bool(side[s]):
                            times["cut"] = time.perf_counter() - t2
                            return self._value(), side
                if paths:
                    # the heights of the sink's BFS pick the source arcs;
                    # augmenting paths to the sink come first, and if they
                    # place all that can reach it, push-relabel's F1 is spared
                    self._saturate_source()
                    placed = self._path_pass("F", self._L, self._excess, None, t, s)
                if not placed:
                    _Phase(self, self._ctx, st, one(t), terminals=(t, s), hlimit=V, blocked=s, must_clear=False,
                           name="F1").run(before=None if paths else self._saturate_source)
                if self._excess_left(st):
                    # what cannot reach the sink goes back to the source
                    if paths:
                        self._path_pass("F", self._L, self._excess, None, s, t)
                    if self._excess_left(st):
                        stats["phase2_iterations"] += _Phase(self, self._ctx, st, one(s), terminals=(s, t),
                                                             hlimit=V, blocked=t, name="F2").run()
                side = self._sink_bfs()
                if not bool(side[s]) or self._excess_left(st):  # pragma: no cover - would be a bug
                    raise RuntimeError("dynamic max flow left an augmenting path; please report this")
                value = self._value()
        times["cut"] = time.perf_counter() - t2
        return value, side

    def _sink_bfs(self):
        """Vertices that cannot reach the sink in the residual network (a BFS from the sink)."""
        h = self._height
        h.fill(-1)
        h[self.sink] = 0
        self._bfs(self._ctx, {"height": h, "excess": self._excess},
                  self._xp.asarray([self.sink], dtype=self._idt), 0)
        h[h < 0] = self._V
        self._stats["global_relabels"] += 1
        return h >= self._V

    def _excess_phase(self):
        """Phase X: excess to the sink or deficits of the sink side, else to the source or the others.

        Excess on the source side of the cut cannot reach the sink side (the
        cut is saturated); what it can send straight back to the source along
        paths of one or two arcs goes first, without a BFS.  Returns whether
        excess may have gone back across the kept cut (whose arcs are then
        no longer all saturated).
        """
        xp, idt, s, t = self._xp, self._idt, self.source, self.sink
        st = {"height": self._height, "excess": self._excess}
        back = lambda xs: self._K.return_excess(self._ctx, st, xs, self._src_arc, s)  # noqa: E731
        npair = int(self._rep.get("pair") or 0)
        ndetour = int(self._rep.get("detour") or 0)
        if (npair or ndetour) and self._reroute:
            # each cut arc's excess re-routed to its own deficit first (cuts
            # of at least ``pair_min`` units; an arc not cut has 0 or less)
            arcs, amounts = (xp.concatenate([p[i] for p in self._reroute]) for i in range(2))
            # (boolean indexing, not ``any()``: a reduction of a few hundred
            # flags took CuPy's CUB path and compiled for 6 s in the first
            # real repair, past the warm-up's small arrays)
            arcs = arcs[amounts >= _pair_min(self._rep)]
            if arcs.shape[0] and self._pairs_worth():
                # (the solver's tail and head arrays are int64, as the pair kernels take them)
                if ndetour:
                    self._detour_pass(self._tail_p[arcs], self._head_p[arcs], ndetour)
                else:
                    self._path_pass("P", self._L, self._excess, None, t, s,
                                    pairs=(self._tail_p[arcs], self._head_p[arcs]), limits={"phases": npair})
                if not self._imbalance()[0]:
                    return False
        xs = xp.nonzero(self._inner((self._excess > 0) & self._side))[0]
        if xs.shape[0]:
            back(xs.astype(idt))
            if not self._imbalance()[0]:
                return False
        if self._rep.get("paths"):
            # augmenting paths inside each side first: to the sink or the
            # sink side's deficits, and to the source side's deficits or back
            done = self._path_pass("X", self._L, self._excess, ~self._side, t, s)
            unwinds = self._unwinds()
            near_deficit = unwinds and self._signs(xp.where(self._side, self._excess, 0), clear=False)[1]
            if not (unwinds and self._rep.get("detour") and not near_deficit):
                self._path_pass("X", self._L, self._excess, self._side, s, t)
            # (after the detour pass, with no deficit on the source side, what
            # excess is left there has to go back to the source, and the
            # walks below take it there along the arcs that brought it, where
            # the path pass would first grow trees as deep as those arcs are
            # long: on RLG a tree of ~960 levels, past the pass's limits)
            # the source side's excess left goes back the way it came
            self._unwind(self._ctx, st, self._side, s, t)
            crossed = False
            if done and unwinds and self._rep.get("far_direct") and not near_deficit:
                # the pass's trees ran to their end: what excess the sink
                # side still holds reaches neither the sink nor a deficit
                # there, and with no deficit on the source side it can only
                # go back to the source, across the cut: the walks take it
                # there at once, where a relabel would first prove the same
                crossed = self._unwind(self._ctx, st, ~self._side, s, t)
                if not self._imbalance()[0]:
                    return crossed
            if done:   # what the sink side cannot place goes back across the cut
                crossed = self._path_pass("X", self._L, self._excess, None, s, t, moved=True) or crossed
            if not self._imbalance()[0]:
                return crossed
        _Phase(self, self._ctx, st, terminals=(t, s), hlimit=self._hlimit2,
               far_return=lambda xs: self._far_return(back, self._ctx, st, xs, s, t), early=True,
               sealed=lambda split: self._sealed(False, split), targets=(t, s, True, lambda: ~self._side),
               name="X").run()
        return True

    def _pairs_worth(self):
        """Whether the cuts that the pair passes take (at least
        ``REPAIR["pair_min"]`` units, neither end a terminal) carry at least
        ``REPAIR["pair_share"]`` of all the flow the batches since the last
        solve cut, so that re-routing them pair by pair is worth its pass
        (the sums come with each update's one read-back)."""
        share = float(self._rep.get("pair_share") or 0)
        return share <= 0 or self._paired_flow >= share * self._cut_flow

    def _deficit_phase(self, crossed=False):
        """Phase D: deficits filled from the source, else by cancelling flow towards the sink.

        `crossed`: phase X may have sent excess back across the kept cut
        (see ``REPAIR["cross_fill"]``).

        Push-relabel on the transposed network, where a deficit is an
        excess and pushing it from ``v`` to ``u`` adds flow on ``u -> v`` or
        cancels flow on ``v -> u``.
        """
        xp, idt, s, t = self._xp, self._idt, self.source, self.sink
        L, LT = self._L, self._LT
        LT["flow"][...] = L["flow"][self._t_of]
        stT = {"height": self._height, "excess": -self._excess}
        # deficits on the sink side cannot be filled from the source (the cut
        # is saturated): cancelling the flow of paths of one or two arcs to
        # the sink goes first, without a BFS
        back = lambda xs: self._K.return_excess(self._ctxT, stT, xs, self._sink_arcT, t)  # noqa: E731
        xs = xp.nonzero(self._inner((stT["excess"] > 0) & ~self._side))[0]
        if xs.shape[0]:
            back(xs.astype(idt))
        if self._rep.get("paths") and self._excess_left(stT):
            # augmenting paths inside each side first: from the source to the
            # source side's deficits; the sink side's deficits cancel the
            # flow that left them, back along it to the sink
            cross = crossed and self._rep.get("cross_fill")
            # (``cross_proof`` False: no pass only to prove the rest stuck
            # once most roots found none, as the cross fill searches a
            # superset of the first pass's side, and what it leaves is
            # cancelled towards the sink)
            quick = {"few": 0} if cross and not self._rep.get("cross_proof", True) else None
            ps = self._path_pass("D", self._LT, stT["excess"], self._side, s, t, limits=quick, full=True)
            done = ps["exhausted"]
            self._unwind(self._ctxT, stT, ~self._side, t, s)
            self._path_pass("D", self._LT, stT["excess"], ~self._side, t, s)
            if done or (quick and ps["stuck"]):
                if cross:
                    # phase X sent excess back across the cut, which then
                    # has residual arcs out of the source side: the source
                    # may reach a deficit through the sink side now
                    self._path_pass("Dx", self._LT, stT["excess"], None, s, t, limits=quick)
                elif not crossed and self._rep.get("far_direct") and self._unwinds():
                    # the pass's trees ran to their end inside the source
                    # side, and with the cut still sealed (nothing crossed
                    # it back) no residual path from the source leaves that
                    # side: nothing can fill the deficits left there, and
                    # the walks cancel them towards the sink at once, where
                    # a relabel would first prove the same
                    self._unwind(self._ctxT, stT, self._side, t, s)
                # what the source cannot fill is cancelled towards the sink across the cut
                if self._excess_left(stT):
                    self._path_pass("D", self._LT, stT["excess"], None, t, s)
        if self._excess_left(stT):
            it = _Phase(self, self._ctxT, stT, terminals=(s, t), hlimit=self._hlimit2,
                        far_return=lambda xs: self._far_return(back, self._ctxT, stT, xs, t, s), early=True,
                        sealed=lambda split: self._sealed(True, split), targets=(s, t, False, lambda: self._side),
                        name="D").run()
            self._stats["phase3_iterations"] = self._stats.get("phase3_iterations", 0) + it
        L["flow"][self._t_of] = LT["flow"]
        self._excess[...] = -stT["excess"]

    def _sealed(self, transposed, split=None):
        """The side of the kept cut that holds the near targets of phase X
        (``transposed`` False: the sink side) or D (True: the source side),
        if no residual arc crosses the cut from the source side to the sink
        side, else None; None too unless `split` (default
        ``REPAIR["split_relabel"]``): the caller's relabel may split.

        Then nothing on the source side reaches the sink side (phase X's
        near targets), and on the transposed network nothing on the sink
        side reaches the source side (phase D's): every arc of the cut
        from S to T is saturated and every arc from T to S is empty.  The
        arcs across the cut are listed once per cut; the test reads one flag.
        """
        if not (self._rep.get("split_relabel") if split is None else split):
            return None
        xp, E, side = self._xp, self._E, self._side
        if self._cut_arcs is None or self._cut_arcs[0] is not side:
            tail, head = self._tail_p[:E], self._head_p[:E]
            st = xp.nonzero(side[tail] & ~side[head])[0]
            ts = xp.nonzero(~side[tail] & side[head])[0]
            self._cut_arcs = (side, st, ts)
        _, st, ts = self._cut_arcs
        f = self._LT["flow"] if transposed else self._L["flow"]
        if self.backend == "cupy":
            # a kernel of ours: CuPy's reductions compile a kernel per size
            # class of their input (seconds each on a fresh cache, mid-repair)
            n = int(st.shape[0] + ts.shape[0])
            flag = xp.zeros(1, dtype=np.int32)
            if n:
                _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_cut_open")(
                    (max(1, min((n + 255) // 256, 1024)),), (256,),
                    (f, self._cap_p, self._oti_p, np.int32(transposed), st, np.int64(st.shape[0]), ts,
                     np.int64(ts.shape[0]), flag))
            cut_open = bool(int(flag.get()[0]))
        else:
            pos = (lambda a: self._oti_p[a]) if transposed else (lambda a: a)  # noqa: E731
            cut_open = bool((f[pos(st)] < self._cap_p[st]).any() or (f[pos(ts)] > 0).any())
        if cut_open:
            return None
        return ~side if not transposed else side

    def _cancel_2cycles(self):
        """Cancel the flow that runs round anti-parallel pairs of arcs.

        Where ``u -> v`` and ``v -> u`` both carry flow, both lose the
        smaller of the two: the net flows (the output), the value and every
        residual connection stay, but a repair sees less flow to cut and to
        unwind.  The pairs are found once (a search of the reversed keys).
        """
        xp, L = self._xp, self._L
        if self._pairs is None:
            self._pairs = csr.antiparallel_pairs(L["indptr"], L["indices"], self._V)
        k, p = self._pairs
        if k.shape[0]:
            f = L["flow"]
            m = xp.minimum(f[k], f[p])
            f[k] -= m
            f[p] -= m

    def _unwind(self, ctx, st, mask, target, other, xs=None):
        """Flow cancelling (``unwind`` of the kernels): the excess of `xs`
        (default: every vertex of `mask` but the terminals) goes back to
        `target` along the arcs that brought it, ``REPAIR["unwind"]`` rounds
        at most; returns whether it ran."""
        if not self._unwinds():
            return False
        rounds = int(self._rep.get("unwind") or 0)
        if xs is None:
            xs = self._xp.nonzero(self._inner((st["excess"] > 0) & mask))[0].astype(self._idt)
        if xs.shape[0] == 0:
            return False
        t0 = time.perf_counter()
        ran, left = self._K.unwind(ctx, st, xs, target, other, rounds)
        self._stats.setdefault("unwinds", []).append((int(xs.shape[0]), ran, left, time.perf_counter() - t0))
        if ran >= rounds and left:
            # walks still under way after that many rounds go round cycles
            # of the flow (GENRMF's): this solver unwinds no more
            self._circulates = True
        return True

    def _unwinds(self):
        """Whether the repairs cancel flow back along walks (``REPAIR["unwind"]``
        set, and no walk of this solver has run out of rounds)."""
        return int(self._rep.get("unwind") or 0) > 0 and not self._circulates

    def _far_return(self, back, ctx, st, xs, target, other):
        """What a relabel found cut off from the near targets goes to the far
        terminal: along paths of one or two arcs, then back the way it came."""
        back(xs)
        if self._rep.get("unwind"):
            xs = xs[st["excess"][xs] > 0]
            self._unwind(ctx, st, None, target, other, xs=xs)

    def _path_pass(self, name, L, excess, mask, target, other, moved=False, pairs=None, limits=None,
                   source_root=False, full=False):
        """The augmenting-path pass of :mod:`gpumatch.flow.dynamic._paths` on one side
        (`mask` None: everywhere), with its statistics; returns whether it
        placed all it could (``exhausted``), or with `moved` whether it moved
        any flow, or with `full` the statistics of :func:`~gpumatch.flow.dynamic._paths.route`."""
        if self._pbufs is None:
            self._pbufs = _paths.buffers(self.backend, self._V, self._idt)
        if mask is None:
            mask = self._xp.ones(self._V, dtype=bool)
        t0 = time.perf_counter()

        ps = _paths.route(self._pbufs, L, excess, mask, target, other, check=self._check_budget, limits=limits,
                          pairs=pairs, source_root=source_root)
        if ps["phases"]:
            self._stats.setdefault("path_passes", []).append(
                (name, ps["phases"], ps["levels"], ps["paths"], ps["amount"], time.perf_counter() - t0))
        if full:
            return ps
        return ps["amount"] > 0 if moved else ps["exhausted"]

    def _root_pass(self, value, phases):
        """Phase F's first try: augmenting paths from the source itself, one
        a pass, at most `phases` passes (``REPAIR["f_root"]``); the source's
        excess for them is what the kept cut still allows above `value`.
        Returns the statistics of :func:`gpumatch.flow.dynamic._paths.route`:
        ``exhausted`` when the last pass found no path (the flow is then
        maximum), ``amount`` the flow moved."""
        s = self.source
        self._excess[s] = self._cap_cut - value
        try:
            # (no stop for little progress: the source's excess is only a bound)
            return self._path_pass("F0", self._L, self._excess, None, self.sink, s,
                                   limits={"phases": phases, "progress": 0.0}, source_root=True, full=True)
        finally:
            self._excess[s] = 0

    def _detour_pass(self, tails, heads, rounds):
        """The detour pass of :mod:`gpumatch.flow.dynamic._detour` over the pairs
        ``tails[i] -> heads[i]``, at most `rounds` rounds, with its
        statistics (``stats["detours"]``)."""
        if self._dbufs is None:
            self._dbufs = _detour.buffers(self.backend, self._V, self._idt)
        t0 = time.perf_counter()

        ds = _detour.reroute(self._dbufs, self._L, self._excess, self._side, tails, heads, self.source, self.sink,
                             check=self._check_budget, limits={"rounds": rounds})
        self._stats.setdefault("detours", []).append(
            (ds["pairs"], ds["rounds"], ds["searches"], ds["paths"], ds["amount"], ds["dropped"],
             time.perf_counter() - t0))

    def _saturate_source(self):
        """Saturate the residual arcs out of the source whose head has a height below V."""
        xp, V, L = self._xp, self._V, self._L
        h = self._height
        a, b = self._s_out
        if b > a:
            head = L["indices"][a:b].astype(np.int64)
            r = L["cap"][a:b] - L["flow"][a:b]
            on = (r > 0) & (h[head] < V)
            L["flow"][a:b] += xp.where(on, r, 0)
            _scatter_add(xp, self._excess, head, xp.where(on, r, 0))
        a, b = self._s_in
        if b > a:
            k = L["in_to_out"][a:b].astype(np.int64)
            tail = L["in_indices"][a:b].astype(np.int64)
            r = L["flow"][k]
            on = (r > 0) & (h[tail] < V)
            L["flow"][k] -= xp.where(on, r, 0)
            _scatter_add(xp, self._excess, tail, xp.where(on, r, 0))

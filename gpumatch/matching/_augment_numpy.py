"""NumPy twins of the augmenting-path kernels (``augment.cu``), for the
driver in :mod:`gpumatch.matching._augment`: one legal schedule of what the
CUDA kernels do (claims in slot order: the first claimant wins).  The
driver hands each twin the values of its tuning constants at the call
(``_augment._numpy_settings``); the forest's notation is in the header of
``augment_common.cuh``.
"""

from __future__ import annotations

import numpy as np

from .. import csr as _csr

__all__ = ["LIVE", "ORPHANED", "PENDING"]

#: ``tstate`` of a tree (indexed by its root row): live and closed, orphaned
#: (its root matched by a repair, kept only as a certificate), live with
#: pending rows (an added edge leaves it; it grows in the next solve).
LIVE, ORPHANED, PENDING = 0, 1, 2


def _flip_paths(st, parent_col, trees, cols):
    """NumPy: flip, in lockstep, the tree paths from the free columns `cols` back to the roots `trees`."""
    c, t = cols, trees
    while c.shape[0]:
        u = parent_col[c]
        prev = st.mu_row[u].astype(np.int64)
        st.mu_row[u] = c
        st.mu_col[c] = u
        more = (u != t) & (prev >= 0)
        c, t = prev[more], t[more]


class _Numpy:
    """NumPy twins of the ``augment.cu`` kernels (one legal schedule)."""

    @staticmethod
    def arrays(st):
        m, n = st.m, st.n
        return {"m": m, "n": n, "idx": np.dtype(st.idx), "valid": False, "epoch": 1, "batch": 0,
                "repairs": np.zeros(2, dtype=np.int64),
                "root_col": np.full(n, -1, dtype=np.int64), "parent_col": np.full(n, -1, dtype=np.int64),
                "tree_row": np.full(m, -1, dtype=np.int64), "end_of": np.full(m, -1, dtype=np.int64),
                "bpar": np.full(n, -1, dtype=np.int64), "bowner": np.full(n, -1, dtype=np.int64),
                "depth": np.zeros(m, dtype=np.int64), "tstate": np.zeros(m, dtype=np.int8),
                "dead": np.zeros(m, dtype=np.int64), "pending": np.zeros(m, dtype=bool),
                "flips": np.zeros(0, dtype=np.int64)}

    def __init__(self, st, f, cfg):
        self.st, self.f, self.cfg = st, f, cfg

    def _search_waits(self, size, bsize):
        """Whether a search phase's search side waits a level (``SEARCH_WAIT``)
        with frontiers of `size` rows and `bsize` columns, the backward side running."""
        return bool(self.cfg.search_wait) and size > self.cfg.search_wait * bsize

    def cooperative(self):
        """The NumPy twins run the phases one step at a time."""
        return False

    def take_repairs(self):
        r = [int(x) for x in self.f["repairs"]]
        self.f["repairs"][:] = 0
        return r

    def reset(self):
        f = self.f
        f["root_col"].fill(-1)
        f["tree_row"].fill(-1)
        f["end_of"].fill(-1)
        f["pending"].fill(False)
        f["dead"].fill(0)
        f["tstate"].fill(LIVE)

    def begin_phase(self, first, closing=True):
        """Release the backward trees, dissolve the dead trees, in a closing
        phase let the kept trees adopt the released columns next to them and
        add their mates to the first frontier (with ``_augment.DEFER_CLOSING``:
        adoption passes over every column of no tree until one adopts
        nothing, the mates joining without a frontier); add the new roots
        and the pending rows to the first frontier; then the roots of the
        backward trees.  Returns the number of columns released."""
        st, f = self.st, self.f
        e = f["epoch"]
        t, tr = f["root_col"], f["tree_row"]
        t[t < -1] = -1
        dead = f["dead"] == e
        gone = np.flatnonzero((t >= 0) & dead[np.maximum(t, 0)])
        released = gone.shape[0]
        t[gone] = -1
        tr[np.flatnonzero((tr >= 0) & dead[np.maximum(tr, 0)])] = -1
        f["end_of"][dead] = -1
        f["tstate"][dead] = LIVE
        self.pre_killed, self.pre_ends = 0, np.zeros(0, dtype=np.int64)
        frontier = []
        if closing and self.cfg.defer:   # adoption passes until one adopts nothing; no frontier
            cols, mates = self._adopt(np.flatnonzero(t == -1), e + 1, skip_ended=True)
            while cols.shape[0]:   # then from the rows that joined in the pass before (ADOPT_PUSH)
                if self.cfg.adopt_push:
                    cols, mates = self._adopt_push(mates, e + 1)
                else:
                    cols, mates = self._adopt(np.flatnonzero(t == -1), e + 1, skip_ended=True)
        elif closing:
            frontier.append(self._adopt(gone, e + 1)[1])
        deg = np.diff(st.rptr)
        new = np.flatnonzero((tr < 0) & (st.mu_row < 0) & (deg > 0))
        tr[new] = new
        f["end_of"][new] = -1
        f["depth"][new] = 0
        frontier.append(new)
        again = np.flatnonzero(f["pending"] & (tr >= 0))
        f["tstate"][tr[again][f["tstate"][tr[again]] == PENDING]] = LIVE
        f["pending"].fill(False)
        frontier.append(again)
        self.frontier = np.unique(np.concatenate(frontier))
        self.ratio = self.cfg.back_ratio
        # every free column roots a backward tree (with BACK_RATIO 0 they never grow);
        # one that a search tree holds leaves no backward certificate (touched)
        free = (st.mu_col < 0) & (np.diff(st.cptr) > 0)
        self.touched = bool((free & (t >= 0)).any())
        broots = np.flatnonzero(free & (t == -1))
        t[broots] = -broots - 2
        f["bowner"][broots] = -1
        self.bfrontier = broots
        self.seeds = int(self.frontier.shape[0])
        if first:
            self.released = released
        f["epoch"] += 1
        f["flips"] = np.zeros(0, dtype=np.int64)
        return released

    def _adopt_push(self, rows, kill):
        """Twin of one pass of gpumatch_aug_adopt_push: each column of no tree
        next to a row of `rows` whose tree has not ended or died joins the
        tree of the first such row (in the order of `rows`, then CSR);
        returns the adopted columns and their mates, as :meth:`_adopt`."""
        st, f = self.st, self.f
        t = f["tree_row"][rows]
        keep = (t >= 0) & (f["end_of"][np.maximum(t, 0)] < 0) & (f["dead"][np.maximum(t, 0)] != kill)
        rows = rows[keep]
        owner, slots = _csr.expand_segments(st.rptr, rows)
        cols = st.rind[slots].astype(np.int64)
        hit = np.flatnonzero(f["root_col"][cols] == -1)
        cols, first = np.unique(cols[hit], return_index=True)
        return self._join(cols, rows[owner[hit[first]]], kill)

    def _adopt(self, gone, kill, skip_ended=False):
        """Twin of gpumatch_aug_adopt / _adopt_mates (and, `skip_ended`, of
        one pass of gpumatch_aug_adopt_all): each released column in `gone`
        joins the tree of its first row (CSC order) in a kept tree (one that
        has not ended or died in this phase); returns the adopted columns
        and their mates (they join too, one deeper).  An adopted free column
        ends a live tree (``pre_ends``, the first one per tree) or kills an
        orphaned one (``pre_killed``)."""
        st, f = self.st, self.f
        tr = f["tree_row"]
        owner, slots = _csr.expand_segments(st.cptr, gone)
        rows = st.cind[slots].astype(np.int64)
        t = tr[rows]
        ok = t >= 0
        if skip_ended:
            tt = np.maximum(t, 0)
            ok &= (f["end_of"][tt] < 0) & (f["dead"][tt] != kill)
        hit = np.flatnonzero(ok)
        _, first = np.unique(owner[hit], return_index=True)
        return self._join(gone[owner[hit[first]]], rows[hit[first]], kill)

    def _join(self, cols, parents, kill):
        """The columns `cols` join the trees of their rows `parents`, and their
        mates join too (:meth:`_adopt`); returns the columns and the mates."""
        st, f = self.st, self.f
        tr = f["tree_row"]
        t = tr[parents]
        f["root_col"][cols] = t
        f["parent_col"][cols] = parents
        mate = st.mu_col[cols].astype(np.int64)
        grow = mate >= 0
        tr[mate[grow]] = t[grow]
        f["depth"][mate[grow]] = f["depth"][parents[grow]] + 1
        free_t, free_c = t[~grow], cols[~grow]
        orphaned = f["tstate"][free_t] == ORPHANED
        doomed = np.unique(free_t[orphaned])
        f["dead"][doomed] = kill
        self.pre_killed += int(doomed.shape[0])
        ends, at = np.unique(free_t[~orphaned], return_index=True)
        fresh = f["end_of"][ends] < 0
        f["end_of"][ends[fresh]] = free_c[~orphaned][at[fresh]]
        self.pre_ends = np.concatenate([self.pre_ends, ends[fresh]])
        return cols, mate[grow]

    def bfs(self, closing=True):
        """All the levels of the phase's BFS (both sides); returns their number.
        Within a level the search side goes first, then the backward side.
        A search phase of the deferred closing may be cut (``self.cut``,
        ``_augment.BACK_FLOOR``, ``gpumatch_aug_loop``); ``self.back_closed``:
        its backward side ran out of frontier without touching a search
        tree (``_augment.BACK_CERTIFICATE``)."""
        st, f = self.st, self.f
        root_col, parent_col, tree_row, end_of = f["root_col"], f["parent_col"], f["tree_row"], f["end_of"]
        bowner, dead, kill = f["bowner"], f["dead"], f["epoch"]
        levels = 0
        self.back_levels = 0
        self.killed = self.pre_killed
        flips = [self.pre_ends]
        meet = self.cfg.defer
        floor = self.cfg.back_floor if meet and not closing else 0

        def goes_on():   # a search phase (floor > 0) ends when the backward frontier is empty
            size, bsize = self.frontier.shape[0], self.bfrontier.shape[0]
            return bsize > 0 and (size > 0 or bsize <= floor) if floor else size > 0

        while goes_on():
            levels += 1
            bsize = self.bfrontier.shape[0]
            back = bsize > 0 and (bsize <= self.ratio * self.frontier.shape[0] or bsize <= floor)
            fr = self.frontier
            tree = tree_row[fr]
            live = (end_of[tree] < 0) & (dead[tree] != kill)
            fr, tree = fr[live], tree[live]
            if back and floor and self._search_waits(self.frontier.shape[0], bsize):
                self.frontier = fr   # the search side waits a level (SEARCH_WAIT)
                self.back_levels += 1
                flips.append(self._back_level(meet))
                continue
            owner, slots = _csr.expand_segments(st.rptr, fr)
            cols = st.rind[slots].astype(np.int64)
            held = root_col[cols]
            orphaned = f["tstate"][tree[owner]] == ORPHANED
            # orphaned trees that reach a free column or a backward tree die
            hit = orphaned & ((held < -1) | ((held == -1) & (st.mu_col[cols] < 0)))
            doomed = np.unique(tree[owner[hit]])
            dead[doomed] = kill
            self.killed += int(doomed.shape[0])
            # claims in slot order: the first claimant of an unclaimed column wins
            unc = np.flatnonzero(held == -1)
            cols_u, first = np.unique(cols[unc], return_index=True)
            first = unc[first]
            row, t = fr[owner[first]], tree[owner[first]]
            mate = st.mu_col[cols_u].astype(np.int64)
            is_free = mate < 0
            root_col[cols_u] = t
            parent_col[cols_u] = row
            is_free &= f["tstate"][t] != ORPHANED
            # columns of backward trees: the first row of a live tree to meet an untaken one takes it
            met = np.flatnonzero((held < -1) & ~orphaned)
            broot = -held[met] - 2
            b_u, b_first = np.unique(broot, return_index=True)
            take = bowner[b_u] == -1
            won = met[b_first[take]]
            bowner[b_u[take]] = tree[owner[won]]
            parent_col[cols[won]] = fr[owner[won]]
            # a tree ends at the first free column or backward tree it reached
            ends_t, at = np.unique(np.concatenate([t[is_free], tree[owner[won]]]), return_index=True)
            end_slot = np.concatenate([np.full(int(is_free.sum()), -1), won])[at]
            end_of[ends_t] = np.concatenate([cols_u[is_free], cols[won]])[at]
            # a row whose edge into a backward tree ends no path closes over it next phase
            lost = met[~np.isin(met, end_slot)]
            f["pending"][fr[owner[lost]]] = True
            flips.append(ends_t)
            grow = mate >= 0
            tree_row[mate[grow]] = t[grow]
            f["depth"][mate[grow]] = f["depth"][row[grow]] + 1
            self.frontier = mate[grow]
            if back:
                self.back_levels += 1
                flips.append(self._back_level(meet))
        self.cut = bool(floor) and bool(self.frontier.shape[0] or self.bfrontier.shape[0])
        self.back_closed = bool(floor) and self.bfrontier.shape[0] == 0 and not self.touched
        f["flips"] = np.concatenate(flips) if flips else np.zeros(0, dtype=np.int64)
        return levels

    def _back_level(self, meet):
        """One level of the backward trees (those no search tree took); with
        `meet`, a backward column next to a row of a live search tree that
        has not ended is taken by that tree, which ends there (the first
        such row of each backward tree in slot order, then the first such
        backward tree of each search tree).  A row that is not simply passed
        to its mate's column (a search tree's row, a free row, a mate whose
        column a search tree holds) sets ``self.touched``.  Returns the
        trees that ended."""
        st, f = self.st, self.f
        root_col, tree_row, end_of = f["root_col"], f["tree_row"], f["end_of"]
        bf = self.bfrontier
        held = root_col[bf]
        keep = f["bowner"][-held - 2] < 0
        bf, held = bf[keep], held[keep]
        owner, slots = _csr.expand_segments(st.cptr, bf)
        x = st.cind[slots].astype(np.int64)
        other = x != st.mu_col[bf[owner]]
        ended = np.zeros(0, dtype=np.int64)
        if meet:
            t = tree_row[x]
            in_tree = t >= 0
            self.touched |= bool((other & in_tree).any())
            tt = np.maximum(t, 0)
            live = in_tree & other & (f["tstate"][tt] != ORPHANED) & (end_of[tt] < 0)
            hit = np.flatnonzero(live)
            f_u, first = np.unique(-held[owner[hit]] - 2, return_index=True)   # one taker per backward tree
            hit = hit[first]
            f["bowner"][f_u] = t[hit]
            t_u, first = np.unique(t[hit], return_index=True)               # one backward tree per search tree
            hit = hit[first]
            y = bf[owner[hit]]
            f["parent_col"][y] = x[hit]
            end_of[t_u] = y
            ended = t_u
            other &= ~in_tree
            other &= f["bowner"][-held[owner] - 2] < 0      # a backward tree taken here grows no further
        y2 = st.mu_row[x].astype(np.int64)
        ok = np.flatnonzero(other & (y2 >= 0))
        held2 = root_col[y2[ok]]
        self.touched |= bool((other & (y2 < 0)).any()) or bool((held2 >= 0).any())
        ok = ok[held2 == -1]
        y2_u, first = np.unique(y2[ok], return_index=True)
        first = ok[first]
        root_col[y2_u] = held[owner[first]]
        f["bpar"][y2_u] = bf[owner[first]]
        self.bfrontier = y2_u
        return ended

    def flip(self):
        """Flip the listed trees' paths (on through the backward trees they took)
        and mark the trees dead; (paths, first-frontier length)."""
        st, f = self.st, self.f
        t = f["flips"]
        f["dead"][t] = f["epoch"]
        ends = f["end_of"][t]
        x = st.mu_col[ends].astype(np.int64)
        _flip_paths(st, f["parent_col"], t, ends)
        c, x = ends[x >= 0], x[x >= 0]
        self.met = int(c.shape[0])
        while c.shape[0]:
            z = f["bpar"][c]
            prev = st.mu_col[z].astype(np.int64)
            st.mu_row[x] = z
            st.mu_col[z] = x
            more = prev >= 0
            c, x = z[more], prev[more]
        return int(f["flips"].shape[0]), self.seeds

    def finish(self):
        """Release the last phase's backward trees."""
        t = self.f["root_col"]
        t[t < -1] = -1

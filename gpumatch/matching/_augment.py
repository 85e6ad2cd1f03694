"""Augmenting-path phases: finish a matching that is close to maximum.

After a small batch of edge changes the surviving pairs of a maximum
matching are only a few augmenting paths short of maximum, and those paths
start next to the changes.  G-PR's global relabel is the wrong tool there:
it is a BFS from *every* free row that runs to its end, and once a changed
edge opens the perfectly matched core it visits nearly the whole graph, two
to seven times per solve.  Here each phase is a level-synchronous
alternating BFS from the free rows in which

* every free row grows its own search tree, the trees kept vertex-disjoint
  (a column, and with it its mate row, joins the first tree that claims
  it);
* a tree stops growing at the first free column it reaches;

then every tree that reached a free column flips its path (disjoint trees:
no conflicts).  Phases repeat until one flips nothing.  That last phase
grew every tree to its end without meeting a free column, so no
alternating path joins a free row to a free column: the matching is
maximum (Berge).  At a near-maximum matching the trees of the old free rows
only cover their small alternating neighbourhoods, and the trees that do
work stop after a few levels.

One driver, :func:`augment`, for both kernel sets: the CUDA kernels are in
``augment.cu`` (short frontiers run many levels inside one launch of one
block, long ones grid-wide levels; the host reads the frontier size once
per launch of the one-block loop); the NumPy twins below run one legal
schedule of them (claims in slot order: the first claimant wins).
"""

from __future__ import annotations

import time

import numpy as np

from .. import _backend

__all__ = ["augment", "LOOP_MAX", "LEVELS_PER_CHECK"]

#: On the GPU, frontiers of at most this many rows run their BFS levels in
#: the persistent one-block kernel ``gpumatch_aug_loop``; longer ones run
#: multi-block levels (``gpumatch_aug_level``), this many at most between
#: two reads of the frontier size (starting at 1 and doubling).
LOOP_MAX = 2048
LEVELS_PER_CHECK = 8


def augment(st, max_phases=None) -> dict:
    """Augment the matching of a G-PR state until it is maximum.

    Parameters
    ----------
    st : GPRState
        The state (:mod:`gpumatch.matching._driver`); only ``rptr``,
        ``rind``, ``mu_row`` and ``mu_col`` are used, and the matching must
        be consistent (``mu_col[c] = r`` exactly when ``mu_row[r] = c``).
        The matching is updated in place.
    max_phases : int or None
        Stop after this many phases even if the last one flipped paths
        (the matching is then valid, larger, but maybe not maximum).

    Returns
    -------
    dict
        ``aug_phases``, ``aug_paths`` (paths flipped), ``aug_levels`` (BFS
        levels), ``aug_loop_launches`` (launches of the one-block loop on
        the GPU), ``time_augment`` (host seconds) and ``aug_converged``
        (True when the last phase proved the matching maximum).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from gpumatch._validation import as_csr_graph
    >>> from gpumatch.matching._driver import make_state
    >>> from gpumatch.matching._augment import augment
    >>> st = make_state(as_csr_graph(sp.csr_matrix([[1, 1], [1, 0]]), "numpy"))
    >>> st.mu_row[0], st.mu_col[0] = 0, 0          # a maximal, not maximum, matching
    >>> augment(st)["aug_converged"], st.mu_row.tolist(), st.mu_col.tolist()
    (True, [1, 0], [1, 0])
    """
    twin = _Cuda(st) if st.backend == "cupy" else _Numpy(st)
    stats = {"aug_phases": 0, "aug_paths": 0, "aug_levels": 0, "aug_converged": False}
    t0 = time.perf_counter()
    while max_phases is None or stats["aug_phases"] < max_phases:
        twin.seed()
        stats["aug_levels"] += twin.bfs()
        flipped, touched = twin.flip()
        stats["aug_phases"] += 1
        stats["aug_paths"] += flipped
        if touched == 0:  # no flipped tree was met by another: maximum (see augment.cu)
            stats["aug_converged"] = True
            break
    stats["aug_loop_launches"] = getattr(twin, "loops", 0)
    stats["time_augment"] = time.perf_counter() - t0
    return stats


class _Numpy:
    """NumPy twins of the ``augment.cu`` kernels (one legal schedule)."""

    def __init__(self, st):
        self.st = st
        self.root_col = np.empty(st.n, dtype=np.int64)
        self.parent_col = np.empty(st.n, dtype=np.int64)
        self.tree_row = np.empty(st.m, dtype=np.int64)
        self.end_of = np.full(st.m, -1, dtype=np.int64)
        self.touched = np.zeros(st.m, dtype=bool)

    def seed(self):
        st = self.st
        deg = np.diff(st.rptr)
        self.roots = np.flatnonzero((st.mu_row < 0) & (deg > 0))
        self.root_col.fill(-1)
        self.tree_row[self.roots] = self.roots
        self.end_of[self.roots] = -1
        self.touched[self.roots] = False
        self.frontier = self.roots

    def bfs(self):
        """All the levels of the phase's BFS; returns their number."""
        st = self.st
        levels = 0
        while self.frontier.shape[0]:
            levels += 1
            f = self.frontier
            tree = self.tree_row[f]
            f, tree = f[self.end_of[tree] < 0], tree[self.end_of[tree] < 0]
            starts = st.rptr[f].astype(np.int64)
            lens = st.rptr[f + 1].astype(np.int64) - starts
            owner = np.repeat(np.arange(f.shape[0]), lens)
            offs = np.zeros(f.shape[0] + 1, dtype=np.int64)
            np.cumsum(lens, out=offs[1:])
            cols = st.rind[np.arange(offs[-1]) - offs[owner] + starts[owner]].astype(np.int64)
            # claims in slot order: the first claimant of a column wins
            cols_u, first = np.unique(cols, return_index=True)
            free = self.root_col[cols_u] < 0
            cols_u, first = cols_u[free], first[free]
            row, t = f[owner[first]], tree[owner[first]]
            # every slot that meets a column of another tree (claimed earlier,
            # or in this level by an earlier slot) marks that tree touched
            seen = self.root_col[cols]
            seen_now = np.full(cols.shape[0], -1, dtype=np.int64)
            claimer = np.full(st.n, -1, dtype=np.int64)
            claimer[cols_u] = first
            late = (seen < 0) & (claimer[cols] >= 0) & (claimer[cols] != np.arange(cols.shape[0]))
            seen_now[late] = tree[owner[claimer[cols[late]]]]
            seen = np.where(seen >= 0, seen, seen_now)
            other = (seen >= 0) & (seen != tree[owner])
            self.touched[seen[other]] = True
            mate = st.mu_col[cols_u].astype(np.int64)
            is_free = mate < 0
            self.root_col[cols_u] = t
            self.parent_col[cols_u] = row
            # a tree that reached several free columns keeps one of them
            ends_t, at = np.unique(t[is_free], return_index=True)
            self.end_of[ends_t] = cols_u[is_free][at]
            grow = ~is_free
            self.tree_row[mate[grow]] = t[grow]
            self.frontier = mate[grow]
        return levels

    def flip(self):
        st = self.st
        c = self.end_of[self.roots]
        t = self.roots[c >= 0]
        c = c[c >= 0]
        flipped = int(t.shape[0])
        touched = int(self.touched[t].sum())
        while c.shape[0]:
            u = self.parent_col[c]
            prev = st.mu_row[u].astype(np.int64)
            st.mu_row[u] = c
            st.mu_col[c] = u
            more = (u != t) & (prev >= 0)
            c, t = prev[more], t[more]
        return flipped, touched


class _Cuda:
    """Launchers of the ``augment.cu`` kernels (cached on the state)."""

    def __init__(self, st):
        from .. import _cuda

        cp = _backend.cp
        cache = st.extra.get("augment")
        if cache is None or cache["m"] != st.m or cache["n"] != st.n or cache["idx"] != np.dtype(st.idx):
            ctype = "int" if np.dtype(st.idx) == np.int32 else "long long"
            get = lambda name: _cuda.get_kernel("matching/augment.cu", name, (("IDX", ctype),))  # noqa: E731
            sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
            cache = st.extra["augment"] = {
                "m": st.m, "n": st.n, "idx": np.dtype(st.idx),
                "seed": get("gpumatch_aug_seed"), "level": get("gpumatch_aug_level"), "loop": get("gpumatch_aug_loop"),
                "flip": get("gpumatch_aug_flip"), "state": cp.zeros(2, dtype=cp.int64),
                "root_col": cp.empty(max(st.n, 1), dtype=st.idx),
                "parent_col": cp.empty(max(st.n, 1), dtype=st.idx),
                "tree_row": cp.empty(max(st.m, 1), dtype=st.idx),
                "end_of": cp.empty(max(st.m, 1), dtype=st.idx),
                "roots": cp.empty(max(st.m, 1), dtype=st.idx),
                "bufs": (cp.empty(max(st.m, 1), dtype=st.idx), cp.empty(max(st.m, 1), dtype=st.idx)),
                "touched": cp.zeros(max(st.m, 1), dtype=cp.uint8),
                "ctr": cp.zeros(6, dtype=cp.uint64),
                "grid": (max(1, min(sms * 8, (max(st.m, 1) + _cuda.BLOCK - 1) // _cuda.BLOCK)),),
                "block": (_cuda.BLOCK,),
            }
        self.c = cache
        self.st = st
        self.loops = 0

    def seed(self):
        c, st = self.c, self.st
        c["ctr"].fill(0)
        c["root_col"].fill(-1)
        c["seed"](c["grid"], c["block"], (st.rptr, st.mu_row, np.int64(st.m), c["tree_row"], c["end_of"],
                                          c["touched"], c["roots"], c["ctr"][3:4]))

    def bfs(self):
        """The phase's BFS: one-block loops for short frontiers, grid-wide levels for long ones."""
        c, st = self.c, self.st
        head = (st.rptr, st.rind, st.mu_col, c["root_col"], c["parent_col"], c["tree_row"], c["end_of"],
                c["touched"], c["roots"], c["bufs"][0], c["bufs"][1], c["ctr"])
        s, steps = 0, 1
        while True:
            c["loop"]((1,), (1024,), head + (np.int64(s), np.int64(LOOP_MAX), c["state"]))
            self.loops += 1
            s, size = (int(x) for x in c["state"].get())
            if size == 0:
                return s
            for _ in range(steps):  # a long frontier: grid-wide levels, then the loop kernel looks again
                c["level"](c["grid"], c["block"], head + (np.int64(s),))
                s += 1
            steps = min(2 * steps, LEVELS_PER_CHECK)

    def flip(self):
        c, st = self.c, self.st
        c["flip"](c["grid"], c["block"], (c["roots"], c["ctr"][3:4], c["parent_col"], c["end_of"], c["touched"],
                                          st.mu_row, st.mu_col, c["ctr"][4:6]))
        flipped, touched = (int(x) for x in c["ctr"][4:6].get())
        return flipped, touched

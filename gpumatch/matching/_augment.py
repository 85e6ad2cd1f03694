"""Augmenting-path phases: finish a matching that is close to maximum.

After a small batch of edge changes the surviving pairs of a maximum
matching are only a few augmenting paths short of maximum, and those paths
start next to the changes.  G-PR's global relabel is the wrong tool there:
it is a BFS from *every* free row that runs to its end, and on graphs like
``random_bipartite(10**6, 10**6, 5)`` the free rows' alternating reach is
nearly the whole graph, so each relabel visits it all.  Here each phase is
a level-synchronous alternating BFS in which

* every free row grows its own search tree, the trees kept vertex-disjoint
  (a column, and with it its mate row, joins the first tree that claims
  it);
* a tree stops growing at the first free column it reaches;

then every tree that reached a free column flips its path (disjoint trees:
no conflicts) and is dissolved; the rows of the other trees next to its
columns grow their trees into them in the next phase.  A phase that flips
nothing has grown every tree to its end without meeting a free column: no
alternating path joins a free row to a free column, the matching is
maximum (Berge), and the trees (the *forest*) are a Koenig certificate of it.

The forest is kept between the solves of a
:class:`~gpumatch.matching.MatchingSolver` (``incremental=True``): a batch
of edge changes only breaks the trees it touches (:func:`note_removed`) and
opens the rows that gain an edge out of the forest (:func:`note_added`), so
the next solve searches again only there instead of from every free row
through the whole graph (the invariant and why it suffices are in the
header of ``augment.cu``).

Each phase also grows *backward* trees from the free columns
(:data:`BACK_RATIO`), and a search tree that meets one ends there: the
two sides meet after about half a path each, where a search tree alone
would grow over much of the graph before reaching a free column.

A batch's removals are repaired where possible instead of breaking trees
(:func:`repair_removed`): a lost tree edge is replaced by another edge into
the tree, and a lost matched edge flips its tree's path at once, the tree
staying behind as a certificate only ("orphaned").

The closing of the forest is deferred (:data:`DEFER_CLOSING`): *search*
phases leave the columns of dissolved trees unclaimed, and a backward tree
that meets a row of a live tree ends there, so the kept trees next to the
released columns are reached from the free columns' side; their BFS stops
once no backward tree is left to meet, and their search side waits while
its frontier is much longer than the backward one (:data:`SEARCH_WAIT`).
A *closing* phase, run when a search phase flips nothing, lets the kept
trees adopt everything next to them again (a pass over every column, then
passes from the rows that joined last, :data:`ADOPT_PUSH`) and is what
proves the matching maximum.  On random d5 graphs, where a few trees hold
most of the graph, this halved the solves after small batches that remove
edges.  A search phase whose backward trees closed on their own (they ran
out of frontier without touching a search tree) proves the matching
maximum without a closing phase (:data:`BACK_CERTIFICATE`); the next
call then starts from every free row.

One driver, :func:`augment`, for both kernel sets: the CUDA kernels are in
``augment.cu`` (launched by ``_Cuda`` below), their NumPy twins in
``_augment_numpy.py``.  Where the device supports cooperative launches (the
default, :data:`COOPERATIVE`), every phase of a call runs in one launch
with grid-wide barriers between its steps and one read-back at the end;
otherwise short frontiers run many levels inside one launch of one block,
long ones grid-wide levels, and the host reads the frontier size once per
launch of the one-block loop.  The NumPy twins run one legal
schedule of them (claims in slot order: the first claimant wins).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from .. import _backend, _cuda
from .. import csr as _csr
from ._augment_numpy import ORPHANED, PENDING, _flip_paths, _Numpy

__all__ = ["augment", "note_added", "note_removed", "repair_removed", "invalidate", "BACK_RATIO", "DEFER_CLOSING",
           "BACK_FLOOR", "SEARCH_WAIT", "ADOPT_PUSH", "BACK_CERTIFICATE", "COOPERATIVE", "LOOP_MAX", "cover_marks",
           "LEVELS_PER_CHECK"]

#: Two-sided search: each phase also grows backward trees from the free
#: columns, and a search tree that meets one ends there (``augment.cu``).
#: The backward side runs a level while its frontier is at most this many
#: times the search side's; 0 turns it off (search trees alone).
BACK_RATIO = 1.0

#: Deferred closing (needs the backward side, ``BACK_RATIO > 0``): a
#: *search* phase leaves the columns it releases (dissolved trees) unclaimed
#: instead of letting the kept trees next to them adopt them, and a backward
#: tree that meets a row of a live search tree ends there (``augment.cu``).
#: Only when a search phase flips nothing does a *closing* phase adopt every
#: column of no tree next to a kept tree and grow the trees over them; only
#: a closing phase (or a search phase when no phase since the last closing
#: one released anything or was cut, which leaves trees open) proves the
#: matching maximum.  False: every phase closes (adopts).
DEFER_CLOSING = True
#: In a search phase (:data:`DEFER_CLOSING`) the backward side also runs a
#: level whenever its frontier is at most this long, and goes on alone
#: after the search side's has emptied while it is; the phase's BFS is
#: *cut* as soon as the backward frontier is empty (no backward tree left
#: to meet), or when the search frontier is empty and the backward one
#: longer than this (``augment.cu``).
BACK_FLOOR = 4096
#: A closing phase's adoption passes after the first one look only at the
#: columns next to the rows that joined in the pass before (push, a
#: frontier's work) instead of at every column of no tree again (pull, a
#: pass over all columns), ``gpumatch_aug_adopt_push``; False: pull passes
#: throughout.  Either way the passes end when one adopts nothing.
ADOPT_PUSH = True
#: In a search phase, the search side waits a level (its frontier, less
#: the rows of trees that ended, carried to the next level unchanged)
#: while the backward side runs and the search frontier is more than this
#: many times as long as the backward one: the smaller side grows, as in a
#: bidirectional BFS, instead of the search trees sweeping hundreds of
#: thousands of rows to meet a few thousand backward trees (``augment.cu``).
#: None or 0: the search side never waits.
SEARCH_WAIT = 4.0
#: A search phase that flips nothing also proves the matching maximum when
#: its backward side ran out of frontier without touching a search tree:
#: the backward trees are then closed on their own, and (rows next to
#: them) + (columns with edges outside them) is a Koenig cover.  This
#: replaces the closing phase where the backward trees are small and the
#: search trees huge (random d5 graphs after batches that add edges: a few
#: thousand columns against 900 000), but the kept forest is not closed
#: then, and the next solve starts from every free row
#: (``aug_certificate`` ``"backward"``; header of ``augment.cu``).  A
#: phase that the forest's own rule proves maximum keeps the forest.
BACK_CERTIFICATE = True

#: On the GPU, run every phase of a call in one cooperative launch
#: (``gpumatch_aug_solve``: grid-wide barriers between the steps, one
#: read-back per call) where the device supports cooperative launches;
#: otherwise, or with False, a launch per step and per few levels (below).
COOPERATIVE = True
#: Blocks per multiprocessor of the cooperative launch (of 512 threads): a
#: grid barrier costs more the more blocks it waits for (about 1.2 us at
#: one per SM, 1.4 us at two, 1.9 us at four on an H100).
COOPERATIVE_BLOCKS_PER_SM = 2

#: On the GPU, frontiers of at most this many rows run their BFS levels in
#: the persistent one-block kernel ``gpumatch_aug_loop``; longer ones run
#: multi-block levels (``gpumatch_aug_level``), this many at most between
#: two reads of the frontier size (starting at 1 and doubling).
LOOP_MAX = 2048
LEVELS_PER_CHECK = 8
#: Diagnostic: with n > 0, the cooperative launch records up to n steps
#: (dissolve, seed, each BFS level, flips) with both frontier sizes and a
#: device timestamp, returned as ``aug_trace`` (``augment.cu``).
TRACE_STEPS = 0


def augment(st, max_phases=None, incremental=False, max_levels=None) -> dict:
    """Augment the matching of a G-PR state until it is maximum.

    Parameters
    ----------
    st : GPRState
        The state (:mod:`gpumatch.matching._driver`); only ``rptr``,
        ``rind``, ``cptr``, ``cind``, ``mu_row`` and ``mu_col`` are used, and
        the matching must be consistent (``mu_col[c] = r`` exactly when
        ``mu_row[r] = c``).  The matching is updated in place.
    max_phases : int or None
        Stop after this many phases even if the last one flipped paths
        (the matching is then valid, larger, but maybe not maximum).
    max_levels : int or None
        Stop once the call's BFS levels reach this many (``aug_truncated``;
        the matching is then valid, but maybe not maximum, and the forest
        is not kept).  The cooperative launch stops inside a phase, between
        two levels, and flips the trees that had reached a free column; the
        phase-by-phase paths (the NumPy twin, the GPU without cooperative
        launches) stop after the phase that reached the cap.
    incremental : bool
        Start from the forest that the last converged call left on `st`
        (see ``augment.cu``), patched by :func:`note_added` and
        :func:`note_removed` for every edge changed since: only the trees
        the changes broke or opened are searched again.  Valid only when
        the graph and the matching changed through those calls alone
        (call :func:`invalidate` otherwise); without a kept forest, or
        with ``False``, every free row starts a tree.

    Returns
    -------
    dict
        ``aug_phases``, ``aug_paths`` (paths flipped), ``aug_levels`` (BFS
        levels), ``aug_seeds`` (rows of the first frontier),
        ``aug_incremental`` (whether a kept forest was used),
        ``aug_loop_launches`` (launches of the one-block loop on the GPU),
        ``aug_cooperative`` (the GPU ran every phase in one cooperative
        launch; then also ``aug_matched``, the matched columns at the end),
        ``aug_released`` (tree columns the first phase dissolved),
        ``aug_met`` (paths that went through a backward tree),
        ``aug_back_levels`` (BFS levels of the backward side),
        ``aug_orphan_deaths`` (phases in which an orphaned tree, growing to
        be closed again, reached a free column and was dissolved),
        ``aug_closings`` (closing phases, :data:`DEFER_CLOSING`),
        ``aug_truncated`` (`max_levels` stopped the call),
        ``aug_reparented`` and ``aug_orphaned`` (the trees' repairs by
        :func:`repair_removed` since the last call),
        ``time_augment`` (host seconds), ``aug_converged`` (True when the
        last phase proved the matching maximum) and ``aug_certificate``
        (what proved it: ``"forest"``, kept for the next call, or
        ``"backward"``, :data:`BACK_CERTIFICATE`; None when not converged).

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
    twin = _twin(st)
    twin.f["backward"] = False   # until a phase converges by the backward certificate
    stats = {"aug_phases": 0, "aug_paths": 0, "aug_levels": 0, "aug_met": 0, "aug_back_levels": 0,
             "aug_orphan_deaths": 0, "aug_truncated": False,
             "aug_converged": False, "aug_incremental": bool(incremental and twin.f["valid"])}
    t0 = time.perf_counter()
    if not stats["aug_incremental"]:
        twin.reset()
    twin.f["valid"] = False   # until a phase converges
    if max_phases != 0 and twin.cooperative():
        stats.update(twin.run_cooperative(-1 if max_phases is None else int(max_phases),
                                          -1 if max_levels is None else int(max_levels)))
        twin.f["valid"] = stats["aug_certificate"] == "forest"
        twin.f["backward"] = stats["aug_certificate"] == "backward"
        stats["time_augment"] = time.perf_counter() - t0
        return stats
    defer = _defer()
    closing, deferred, stats["aug_closings"] = not defer, 0, 0
    stats["aug_certificate"] = None
    left_open = False   # a search phase was cut since the last closing phase: its trees are not closed
    while max_phases is None or stats["aug_phases"] < max_phases:
        deferred += twin.begin_phase(first=stats["aug_phases"] == 0, closing=closing)
        stats["aug_levels"] += twin.bfs(closing=closing)
        flipped, seeds = twin.flip()
        stats["aug_met"] += twin.met
        stats["aug_back_levels"] += twin.back_levels
        stats["aug_orphan_deaths"] += int(twin.killed > 0)
        stats["aug_closings"] += int(closing and defer)
        if stats["aug_phases"] == 0:
            stats["aug_seeds"] = seeds
        stats["aug_phases"] += 1
        stats["aug_paths"] += flipped
        # every tree closed, no free column in one: maximum (augment.cu); a
        # search phase (defer) is closed only when neither it nor any phase
        # since the last closing phase was cut and none released anything;
        # or its backward trees closed on their own (BACK_CERTIFICATE)
        left_open = left_open or twin.cut
        forest_closed = twin.killed == 0 and (closing or (deferred == 0 and not left_open))
        if flipped == 0 and (forest_closed or (BACK_CERTIFICATE and twin.back_closed)):
            stats["aug_converged"] = True
            stats["aug_certificate"] = "forest" if forest_closed else "backward"
            twin.f["valid"] = forest_closed
            break
        if max_levels is not None and stats["aug_levels"] >= max_levels:
            stats["aug_truncated"] = True
            break
        if closing:
            deferred, left_open = 0, False
        closing = not defer or flipped == 0
    twin.f["backward"] = stats["aug_certificate"] == "backward"
    if not twin.f["backward"]:   # (a backward certificate keeps its trees' claims: cover_marks)
        twin.finish()
    stats.setdefault("aug_seeds", 0)
    stats["aug_released"] = getattr(twin, "released", 0)
    stats["aug_reparented"], stats["aug_orphaned"] = twin.take_repairs()
    stats["aug_cooperative"] = False
    stats["aug_loop_launches"] = getattr(twin, "loops", 0)
    stats["time_augment"] = time.perf_counter() - t0
    return stats


def note_added(st, rows, cols) -> None:
    """Record, for the kept forest, that edges ``(rows[i], cols[i])`` were added
    (int64 arrays on the state's backend, in range).  Costs nothing without a forest."""
    f = st.extra.get("augment")
    if f is not None:
        f["backward"] = False
    if f is None or not f["valid"] or rows.shape[0] == 0:
        return
    if st.backend == "cupy":
        k = int(rows.shape[0])
        f["note_added"](_cuda.grid_for(k), (_cuda.BLOCK,),
                        (rows, cols, np.int64(k), f["tree_row"], f["root_col"], f["tstate"], f["pending"]))
    else:
        rows, cols = rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False)
        t = f["tree_row"][rows]
        hit = (t >= 0) & (f["root_col"][cols] < 0)
        rows, t = rows[hit], t[hit]
        f["pending"][rows] = True
        f["tstate"][t[f["tstate"][t] != ORPHANED]] = PENDING


def note_removed(st, rows, cols) -> None:
    """Record, for the kept forest, that edges ``(rows[i], cols[i])`` are about to be
    removed; call it while the matching and the graph still hold them, and
    :func:`repair_removed` once they are gone."""
    f = st.extra.get("augment")
    if f is not None:
        f["backward"] = False
    if f is None or not f["valid"] or rows.shape[0] == 0:
        return
    f["batch"] += 1
    if st.backend == "cupy":
        k = int(rows.shape[0])
        _Cuda.batch_arrays(st, f)
        f["nbroken"].fill(0)
        f["note_removed"](_cuda.grid_for(k), (_cuda.BLOCK,),
                          (rows, cols, np.int64(k), f["root_col"], f["parent_col"], st.mu_col, f["tstate"],
                           f["claim"], np.int32(f["batch"]), f["dead"], np.int32(f["epoch"]), f["broken"],
                           f["nbroken"]))
        return
    rows, cols = rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False)
    t = f["root_col"][cols]
    hit = t >= 0
    rows, cols, t = rows[hit], cols[hit], t[hit]
    orphaned = f["tstate"][t] == ORPHANED
    matched = st.mu_col[cols] == rows
    f["dead"][t[matched & orphaned]] = f["epoch"]
    # the first matched edge of a live tree is flipped around later; a second one kills it
    tm, cm = t[matched & ~orphaned], cols[matched & ~orphaned]
    trees, first, counts = np.unique(tm, return_index=True, return_counts=True)
    f["dead"][trees[counts > 1]] = f["epoch"]
    f["claimed"] = (trees[counts == 1], cm[first[counts == 1]])
    f["broken"] = cols[~matched & ~orphaned & (f["parent_col"][cols] == rows)]


def repair_removed(st, rows, cols) -> None:
    """After :func:`note_removed` and the removal of those edges (graph and
    matching): give the columns whose tree edge went a new parent, and flip
    the trees that lost one matched edge around it (``augment.cu``: repairs
    instead of kills)."""
    f = st.extra.get("augment")
    if f is None or not f["valid"] or rows.shape[0] == 0:
        return
    e = np.int32(f["epoch"])
    if st.backend == "cupy":
        k = int(rows.shape[0])
        _Cuda.batch_arrays(st, f)
        f["reparent"](_cuda.grid_for(k), (_cuda.BLOCK,),
                      (st.cptr, st.cind, f["root_col"], f["tree_row"], f["depth"], f["parent_col"], f["dead"], e,
                       f["broken"], f["nbroken"], f["repairs"]))
        f["orphan"](_cuda.grid_for(k), (_cuda.BLOCK,),
                    (rows, cols, np.int64(k), f["root_col"], f["parent_col"], st.mu_row, st.mu_col, f["claim"],
                     np.int32(f["batch"]), f["dead"], e, f["tstate"], f["repairs"]))
        return
    dead, depth, tree_row, parent = f["dead"], f["depth"], f["tree_row"], f["parent_col"]
    b = f.pop("broken", np.zeros(0, dtype=np.int64))
    t = f["root_col"][b]
    b, t = b[dead[t] != e], t[dead[t] != e]
    owner, slots = _csr.expand_segments(st.cptr, b)
    u = st.cind[slots].astype(np.int64)
    ok = np.flatnonzero((tree_row[u] == t[owner]) & (depth[u] <= depth[parent[b]][owner]))
    new_parent = np.full(b.shape[0], -1, dtype=np.int64)
    new_parent[owner[ok[::-1]]] = u[ok[::-1]]    # the first such row of each column (CSC order)
    parent[b[new_parent >= 0]] = new_parent[new_parent >= 0]
    dead[t[new_parent < 0]] = e
    f["repairs"][0] += int((new_parent >= 0).sum())
    trees, cols = f.pop("claimed", (np.zeros(0, dtype=np.int64),) * 2)
    live = dead[trees] != e
    trees, cols = trees[live], cols[live]
    pending = f["tstate"][trees] == PENDING
    dead[trees[pending]] = e
    trees, cols = trees[~pending], cols[~pending]
    _flip_paths(st, parent, trees, cols)
    f["tstate"][trees] = ORPHANED
    f["repairs"][1] += int(trees.shape[0])


def invalidate(st) -> None:
    """Forget the kept forest (after the matching or graph changed in another way)."""
    f = st.extra.get("augment")
    if f is not None:
        f["valid"] = f["backward"] = False
    st.extra.pop("cover_marks", None)


def release(st, keep_cover=False) -> None:
    """Forget the kept forest and free its arrays (the next phase allocates
    them again): the static driver's walks and certificate need the memory
    more (a forest holds about 15 bytes per entry of a random graph of
    degree 5, issue 63).  With `keep_cover`, the marks that
    :func:`cover_marks` reads stay (two of the arrays)."""
    marks = cover_marks(st) if keep_cover else None
    st.extra.pop("augment", None)
    st.extra.pop("cover_marks", None)
    if marks is not None:
        st.extra["cover_marks"] = marks


def cover_marks(st):
    """What proves the current matching of `st` maximum, from the last
    converged call (the certificates in the headers of
    ``augment_common.cuh`` and ``augment_coop.cu``), or None:

    * ``("forest", tree_row, root_col)``: the closed forest; its rows and
      columns are those with ``tree_row >= 0`` and ``root_col >= 0``;
    * ``("backward", None, root_col)``: the closed backward trees of the
      last phase, whose columns keep their claims ``root_col < -1``.

    What :func:`release` kept is handed over once."""
    kept = st.extra.pop("cover_marks", None)
    if kept is not None:
        return kept
    f = st.extra.get("augment")
    if f is None:
        return None
    if f["valid"]:
        return "forest", f["tree_row"], f["root_col"]
    if f.get("backward"):
        return "backward", None, f["root_col"]
    return None


def _defer():
    """Whether the phases defer their closing (:data:`DEFER_CLOSING`, with the backward side on)."""
    return bool(DEFER_CLOSING) and BACK_RATIO > 0


def _twin(st):
    f = st.extra.get("augment")
    if f is None or f["m"] != st.m or f["n"] != st.n or f["idx"] != np.dtype(st.idx) \
            or f.get("odt", np.dtype(st.odt)) != np.dtype(st.odt):
        f = st.extra["augment"] = (_Cuda if st.backend == "cupy" else _Numpy).arrays(st)
    return _Cuda(st, f) if st.backend == "cupy" else _Numpy(st, f, _numpy_settings())


def _numpy_settings():
    """The tuning constants above, as they are at the call, for the NumPy twins."""
    return SimpleNamespace(back_ratio=float(BACK_RATIO), defer=_defer(), back_floor=BACK_FLOOR,
                           search_wait=SEARCH_WAIT, adopt_push=ADOPT_PUSH)


class _Cuda:
    """Launchers of the ``augment.cu`` kernels (arrays kept on the state)."""

    @staticmethod
    def batch_arrays(st, f):
        """The arrays only a dynamic batch's repairs use (note_removed,
        repair_removed): a claim stamp per tree (zero until a batch stamps
        it) and the list of columns whose tree edge a batch removed;
        allocated at the first batch, not with every forest."""
        if "claim" not in f:
            cp = _backend.cp
            f["claim"] = cp.zeros(max(st.m, 1), dtype=cp.int32)
            f["broken"] = cp.empty(max(st.n, 1), dtype=st.idx)

    @staticmethod
    def arrays(st):
        cp = _backend.cp
        from ._kernels_cuda import defines

        ctype = defines(st)   # IDX (ids) and OFF (offsets)
        get = lambda name: _cuda.get_kernel("matching/augment.cu", name, ctype)  # noqa: E731
        sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
        m1, n1 = max(st.m, 1), max(st.n, 1)
        f = {"m": st.m, "n": st.n, "idx": np.dtype(st.idx), "odt": np.dtype(st.odt), "valid": False, "epoch": 1,
             "batch": 0, "state": cp.zeros(9, dtype=cp.int64),
             "depth": cp.zeros(m1, dtype=cp.int32), "tstate": cp.zeros(m1, dtype=cp.uint8),
             # (claim and broken: the dynamic solver's batches only, allocated by batch_arrays)
             "nbroken": cp.zeros(1, dtype=cp.uint64), "repairs": cp.zeros(2, dtype=cp.uint64),
             "root_col": cp.full(n1, -1, dtype=st.idx), "parent_col": cp.full(n1, -1, dtype=st.idx),
             "bpar": cp.full(n1, -1, dtype=st.idx), "bowner": cp.full(n1, -1, dtype=st.idx),
             "bbufs": (cp.empty(n1, dtype=st.idx), cp.empty(n1, dtype=st.idx)),
             "tree_row": cp.full(m1, -1, dtype=st.idx), "end_of": cp.full(m1, -1, dtype=st.idx),
             "roots": cp.empty(m1, dtype=st.idx), "flips": cp.empty(m1, dtype=st.idx),
             "dissolved": cp.empty(n1, dtype=st.idx),
             "bufs": (cp.empty(m1, dtype=st.idx), cp.empty(m1, dtype=st.idx)),
             "dead": cp.zeros(m1, dtype=cp.int32), "seen": cp.zeros(m1, dtype=cp.int32),
             "pending": cp.zeros(m1, dtype=cp.uint8), "ctr": cp.zeros(16, dtype=cp.uint64),
             "grid": (max(1, min(sms * 8, (max(st.m, st.n, 1) + _cuda.BLOCK - 1) // _cuda.BLOCK)),),
             "block": (_cuda.BLOCK,)}
        for name in ("seed", "level", "loop", "dissolve", "adopt", "adopt_all", "adopt_push", "adopt_mates",
                     "note_added", "note_removed", "reparent", "orphan"):
            f[name] = get("gpumatch_aug_" + name)
        f["ctype"] = ctype
        return f

    def __init__(self, st, f):
        self.st, self.f = st, f
        self.loops = 0
        self.ratio = float(BACK_RATIO)

    def reset(self):
        f = self.f
        for name in ("root_col", "tree_row", "end_of"):
            f[name].fill(-1)
        f["pending"].fill(0)
        f["dead"].fill(0)
        f["seen"].fill(0)
        f["tstate"].fill(0)
        f["epoch"] = 1

    def begin_phase(self, first, closing=True):
        """Dissolve, adopt (a closing phase) and seed: the first frontier, on
        the device; returns the columns released (one read-back, in the
        first phase only unless the closing is deferred: 0 is returned then)."""
        f, st = self.f, self.st
        e = np.int32(f["epoch"])
        f["ctr"].fill(0)
        f["dissolve"](f["grid"], f["block"], (np.int64(st.m), np.int64(st.n), f["root_col"], f["tree_row"],
                                              f["end_of"], f["tstate"], f["dead"], e, f["dissolved"], f["ctr"]))
        mates = lambda count_at, first, frontier: f["adopt_mates"](  # noqa: E731
            f["grid"], f["block"], (st.mu_col, f["root_col"], f["parent_col"], f["tree_row"], f["end_of"], f["depth"],
                                    f["tstate"], f["dead"], np.int32(e + 1), f["seen"], e, f["dissolved"], f["flips"],
                                    f["roots"], f["ctr"], np.int32(count_at), np.int64(first), np.int32(frontier)))
        if closing and _defer():   # adoption passes until one adopts nothing (a read-back each)
            prev = done = 0
            while True:
                if done and ADOPT_PUSH:   # from the rows that joined in the pass before
                    f["adopt_push"](f["grid"], f["block"], (st.rptr, st.rind, st.mu_col, f["tree_row"], f["end_of"],
                                                            f["dead"], np.int32(e + 1), f["root_col"],
                                                            f["parent_col"], f["dissolved"], f["ctr"],
                                                            np.int64(prev), np.int64(done)))
                else:
                    f["adopt_all"](f["grid"], f["block"], (st.cptr, st.cind, f["tree_row"], f["end_of"], f["dead"],
                                                           np.int32(e + 1), f["root_col"], f["parent_col"],
                                                           f["dissolved"], f["ctr"], np.int64(st.n)))
                count = int(f["ctr"][6:7].get()[0])
                if count == done:
                    break
                mates(6, done, 0)
                prev, done = done, count
        elif closing:
            f["adopt"](f["grid"], f["block"], (st.cptr, st.cind, f["tree_row"], f["root_col"], f["parent_col"],
                                               f["dissolved"], f["ctr"]))
            mates(5, 0, 1)
        released = int(f["ctr"][5:6].get()[0]) if first or _defer() else 0
        if first:
            self.released = released
        f["seed"](f["grid"], f["block"], (st.rptr, st.cptr, st.mu_row, st.mu_col, np.int64(st.m), np.int64(st.n),
                                          f["tree_row"], f["end_of"], f["depth"], f["tstate"], f["pending"], f["seen"],
                                          e, f["roots"], f["root_col"], f["bowner"], f["bbufs"][0],
                                          np.float64(self.ratio), f["ctr"]))
        f["epoch"] += 1
        return released

    def bfs(self, closing=True):
        """The phase's BFS: one-block loops for short frontiers, grid-wide levels for long ones;
        the last loop launch also flips the paths (one read-back per launch).  A search phase
        of the deferred closing may be cut (``self.cut``, ``augment.cu``)."""
        f, st = self.f, self.st
        head = (st.rptr, st.rind, st.cptr, st.cind, st.mu_row, st.mu_col, f["root_col"], f["parent_col"],
                f["tree_row"], f["end_of"], f["depth"], f["tstate"], f["dead"], f["pending"], f["bpar"], f["bowner"],
                f["flips"], f["roots"], f["bufs"][0], f["bufs"][1], f["bbufs"][0], f["bbufs"][1], f["ctr"])
        ratio, kill, meet = np.float64(self.ratio), np.int32(f["epoch"]), np.int32(_defer())
        s, steps = 0, 1
        floor = np.int64(BACK_FLOOR if meet and not closing else 0)
        wait = np.float64(SEARCH_WAIT or 0)
        while True:
            f["loop"]((1,), (1024,), head + (np.int64(s), ratio, meet, floor, kill, np.int64(LOOP_MAX), f["state"],
                                             wait))
            self.loops += 1
            (s, more, self.flipped, self.seeds, self.met, self.back_levels, self.killed, self.cut,
             self.back_closed) = (int(x) for x in f["state"].get())
            if not more:
                return s
            for _ in range(steps):  # a long frontier: grid-wide levels, then the loop kernel looks again
                f["level"](f["grid"], f["block"], head + (np.int64(s), ratio, meet, floor, kill, wait))
                s += 1
            steps = min(2 * steps, LEVELS_PER_CHECK)

    def flip(self):
        """The paths were flipped by the BFS's last launch; (paths, first-frontier length)."""
        return self.flipped, self.seeds

    def finish(self):
        """Release the last phase's backward trees (a dissolve of no tree)."""
        f, st = self.f, self.st
        f["dissolve"](f["grid"], f["block"], (np.int64(st.m), np.int64(st.n), f["root_col"], f["tree_row"],
                                              f["end_of"], f["tstate"], f["dead"], np.int32(-1), f["dissolved"],
                                              f["ctr"]))

    def cooperative(self):
        """Whether :data:`COOPERATIVE` is on and the device can run ``gpumatch_aug_solve``."""
        if not COOPERATIVE:
            return False
        f = self.f
        if "solve" not in f:   # compiled and sized once per forest
            kern = _cuda.get_kernel("matching/augment_coop.cu", "gpumatch_aug_solve", f["ctype"],
                                    cooperative=True)
            f["solve"] = kern
            f["solve_grid"] = _cuda.cooperative_grid(kern, 512, COOPERATIVE_BLOCKS_PER_SM)
            f["solve_state"] = _backend.cp.zeros(15, dtype=np.int64)
        return f["solve_grid"] > 0

    def run_cooperative(self, max_phases, max_levels=-1):
        """Every phase in one launch (``max_phases`` < 0: until converged;
        ``max_levels`` < 0: no cap on the BFS levels); one read-back."""
        f, st = self.f, self.st
        cp = _backend.cp
        if TRACE_STEPS > 0:
            trace = cp.zeros(1 + 5 * TRACE_STEPS, dtype=np.int64)
        else:   # a count of 0 and a cap of 0: nothing is written
            trace = f.setdefault("no_trace", cp.zeros(1, dtype=np.int64))
        f["solve"]((f["solve_grid"],), (512,),
                   (st.rptr, st.rind, st.cptr, st.cind, np.int64(st.m), np.int64(st.n), st.mu_row, st.mu_col,
                    f["root_col"], f["parent_col"], f["tree_row"], f["end_of"], f["depth"], f["tstate"], f["dead"],
                    f["seen"], f["pending"], f["bpar"], f["bowner"], f["roots"], f["flips"], f["dissolved"],
                    f["bufs"][0], f["bufs"][1], f["bbufs"][0], f["bbufs"][1], f["ctr"],
                    np.int32(f["epoch"]), np.int64(max_phases), np.float64(self.ratio), np.int32(_defer()),
                    np.int64(BACK_FLOOR), f["repairs"],
                    f["solve_state"], trace, np.int64(TRACE_STEPS), np.float64(SEARCH_WAIT or 0),
                    np.int32(1 if ADOPT_PUSH else 0), np.int32(1 if BACK_CERTIFICATE else 0),
                    np.int64(max_levels)))
        (phases, paths, levels, seeds, converged, matched, reparented, orphaned, released, met, back_levels,
         deaths, closings, backward, capped) = (int(x) for x in f["solve_state"].get())
        f["epoch"] += phases
        extra = {}
        if TRACE_STEPS > 0:
            tr = trace.get()
            extra["aug_trace"] = [tuple(int(v) for v in tr[1 + 5 * i:6 + 5 * i]) for i in range(int(tr[0]))]
        return {**extra, "aug_phases": phases, "aug_paths": paths, "aug_levels": levels, "aug_seeds": seeds,
                "aug_converged": bool(converged), "aug_cooperative": True, "aug_loop_launches": 0,
                "aug_matched": matched, "aug_reparented": reparented, "aug_orphaned": orphaned,
                "aug_released": released, "aug_met": met, "aug_back_levels": back_levels,
                "aug_orphan_deaths": deaths, "aug_closings": closings, "aug_truncated": bool(capped),
                "aug_certificate": ("backward" if backward else "forest") if converged else None}

    def take_repairs(self):
        """Repairs since the last call (one read-back), zeroed."""
        r = [int(x) for x in self.f["repairs"].get()]
        self.f["repairs"].fill(0)
        return r

"""The G-PR driver: one host-side loop for both kernel sets.

G-PR (Deveci, Kaya, Uçar, Çatalyürek, ICPP 2013, doi:10.1109/ICPP.2013.21)
is push-relabel for maximum bipartite matching, written for GPUs without
atomics in the push.  Columns are the active side: an unmatched column pushes
to the neighbour row of minimum label ψ, taking it from the column that held
it, which becomes active in turn.  Labels estimate the alternating distance
from a row to a free row; a *global relabel* (BFS from the free rows) makes
them exact every ``k · maxLevel`` push iterations.

The loop (kernel names in parentheses; each has a CUDA twin in ``gpr.cu``
and a NumPy twin in ``_kernels_numpy.py``):

1. initial matching: greedy (``greedy_degree``: degree-one rows, then each
   free column takes its free row of least degree; or the old
   ``greedy_round`` rounds, :data:`GREEDY_KIND`), Karp–Sipser, a warm
   start, or nothing;
2. ``fix_matching`` then ``relabel_collect`` (``global_relabel`` +
   ``collect_active``, one host read): the active list is every free column
   the BFS reached.  Empty list: the matching is maximum (no free
   column is joined to a free row by an alternating path), stop;
3. the tail (:data:`AUGMENT_AFTER`) and the progress watch
   (:func:`run_gpr`, :data:`STALL_WINDOW`): after a few push phases, or
   when the active count has not halved over the last few relabels,
   augmenting-path phases finish the matching instead
   (``_augment.augment``); on the GPU, a long tail goes on to push-relabel
   walks (``walk.cu``) or to the host engine (:mod:`gpumatch.matching._tail`),
   stop;
4. up to ``ceil(k · maxLevel)`` push iterations over the active list
   (Ac → Ap), each a ``claim`` (every listed column picks its row of
   minimum label and claims it) then a ``push`` (the column whose claim
   survived takes the row; the column it displaced takes its slot; a
   column whose claim lost keeps its slot).  A list longer than the
   shrink threshold lives on the device (``list_step``: the push compacts
   it, :data:`FUSED_SHRINK`), and the host looks at its size every few
   iterations (``CHECK_EVERY``: one host sync); once the list is at most
   ``LOOP_MAX`` slots long, the rest of the iterations run in
   ``push_loop`` (on the GPU: one launch of one block that loops claim +
   push on the device); then back to 2;
5. ``fix_matching`` (FixMatching) and the result.

The claim/push split replaces the paper's single racing push, whose
hand-off of displaced columns lost and duplicated columns when many
columns wanted one hub row (the header of the push section of ``gpr.cu``
says how that livelocked on a directed social network).  With it the list
holds each free column once, the rows' side of the matching is
consistent after every iteration and the matched count never decreases.
Correctness does not rest on that alone: the loop only stops after an
exact relabel of a consistent matching found no reachable free column
(Berge's criterion) or the augmenting phases proved the matching maximum.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _backend
from .. import csr as _csr
from .._validation import graph_dtypes
from . import _tail

__all__ = ["GPRState", "make_state", "kernels_for", "run_gpr", "konig_cover_masks"]

#: Iterations between two looks at the active-list size (one host sync
#: each), per backend: (list longer than the shrink threshold, shorter).
CHECK_EVERY = {"numpy": (1, 1), "cupy": (4, 16)}
#: Active lists of at most this many slots run their remaining push
#: iterations in ``push_loop`` (persistent one-block kernel on the GPU,
#: where a launch costs more than an iteration of a short list).
LOOP_MAX = {"numpy": 4096, "cupy": 4096}
#: When true, the driver synchronises the device at every phase boundary so
#: that the ``time_*`` statistics are exact; otherwise they are host times
#: taken without extra syncs (the relabel syncs anyway, so they are close).
PROFILE = False
#: Rounds of the old first-free greedy (``greedy_round``) at most.
GREEDY_ROUNDS = 4
#: Which heuristic ``init="greedy"`` runs: ``"degree"`` (degree-one rows
#: first, then each free column takes its free row of least degree, claimed
#: by CAS on the GPU: no host sync) or ``"rounds"`` (the old first-free
#: rounds with a size check per round).
GREEDY_KIND = "degree"
#: Degree-one rounds of Karp–Sipser at most.
KS_ROUNDS = 30
#: Long active lists (longer than the shrink threshold) are compacted by
#: the fix-up of every push iteration, on the device (``list_step``: no
#: prefix sum, no host read but the length check every few iterations);
#: False: the old per-slot lists, compacted by :func:`gpumatch.csr.compact`.
FUSED_SHRINK = True
#: FixMatching before each global relabel runs inside the relabel's set-up
#: launch (``relabel_collect(st, fix=True)``) instead of on its own.
FUSE_FIX = True
#: Progress watch of :func:`run_gpr`: G-PR hands over to augmenting-path
#: phases when the active count after a global relabel is more than half
#: the count this many relabels before (None: never; then only a hard
#: relabel cap raises).  Trades: a smaller window hands over sooner on
#: inputs where each relabel round gains little (path-like graphs, hub
#: contention); a larger one lets G-PR finish slow tails itself.  With 4,
#: G-PR runs at most 4 (log2 a_1 + 2) relabels; with :data:`AUGMENT_AFTER`
#: off, every corpus matrix and generated family of the test suite finishes
#: by push-relabel alone on NumPy except the path-like ones
#: (tests/test_robustness.py).
STALL_WINDOW = 4
#: Push phases G-PR runs before augmenting-path phases
#: (:func:`gpumatch.matching._augment.augment`) finish the matching (None:
#: only the progress watch hands over).  Push-relabel pays while many
#: columns are active; in the tail, each global relabel is a BFS over the
#: whole alternating reach for a few columns, while an augmenting phase
#: stops its search trees at the first free column (two-sided, and one
#: cooperative launch on the GPU).  Measured on the H100 (median of 7, the
#: hand-over after 2 / 3 / 6 push phases, or never): Delaunay 1M 13.8 /
#: 15.8 / 18.5 / 55.5 ms, grid 1000² 46.7 / 51.8 / 55.7 / 164 ms, random
#: 1M d5 5.3 / 6.1 / 7.6 / 8.8 ms, random 4M d5 17.8 / 16.6 / 23.8 / 27.9
#: ms; R-MAT 20/8 and the rectangle finish within 2 push phases either way
#: (benchmarks/RESULTS.md).  The explicit ``max_relabels`` of
#: :func:`run_gpr` overrides it.
AUGMENT_AFTER = 2



#: The chain rule (:func:`chain_rule`, ``chain.cu``) before the greedy
#: pass of a solve from an empty matching: Karp–Sipser's degree-one rule
#: carried along every chain of degree-two vertices at once, by pointer
#: jumping, and cycles matched from their least vertex (None: off).  It
#: runs when the vertices of degree two whose neighbours both have degree
#: one or two (the chains' interiors) number at least ``min_interior`` of
#: all vertices: its cost is a few passes over the vertices plus one per doubling of the
#: longest chain, and only chains of such vertices make the augmenting
#: paths that it removes long.  Random graphs of degree 5 have about 0.1 %
#: of their vertices there; a permuted bidiagonal matrix has all but two.
CHAIN_RULE = {"min_interior": 1 / 64}


@dataclass
class GPRState:
    """Arrays of one G-PR run (all on one backend).  See ``gpr.cu`` for names.

    Two widths: ``idx`` of the vertex ids (``rind``, ``cind``, mates,
    labels, lists: ``-DIDX``), ``odt`` of the entry offsets (``rptr``,
    ``cptr``: ``-DOFF``), int64 only past ``2**31`` entries
    (:func:`gpumatch._validation.graph_dtypes`)."""

    m: int
    n: int
    idx: Any
    xp: Any
    backend: str
    rptr: Any
    rind: Any
    cptr: Any
    cind: Any
    mu_row: Any
    mu_col: Any
    psi_row: Any
    psi_col: Any
    claim: Any
    bfs_buf: Any = None
    bfs_counts: Any = None
    bfs_max: Any = None
    bfs_blocks: Any = None
    extra: dict = field(default_factory=dict)
    odt: Any = None

    def __post_init__(self):
        if self.odt is None:
            self.odt = np.dtype(self.rptr.dtype)

    @property
    def inf(self) -> int:
        return self.m + self.n


def kernels_for(backend: str):
    """The kernel set (module) of a resolved backend name."""
    if backend == "cupy":
        from . import _kernels_cuda as k
    else:
        from . import _kernels_numpy as k
    return k


def make_state(g, csc=True) -> GPRState:
    """Build the G-PR arrays of a :class:`~gpumatch._validation.CSRGraph`.

    Without `csc` (the ``"numba"`` backend only) ``cptr`` / ``cind`` stay
    None: its engine builds them when it needs them
    (:func:`gpumatch.matching._cpu.ensure_csc`).

    The CSC comes from :func:`gpumatch.csr.transpose` (rows of each column
    ascending, which the dynamic solver's patching needs): cuSPARSE's
    csr2csc on a 32-bit device pattern, SciPy's counting transpose on the
    host.  A counting transpose of our own (histogram, atomic scatter) lost
    to cuSPARSE on an H100: R-MAT 24 (133M entries) 14.1 ms with its rows
    unsorted, 28.2 ms sorted, against 10.1 ms (4.4 with cuSPARSE's symbolic
    action, which faults: see there); random 16M d5 17.0 / 19.5 against
    8.6 ms (2.9); level on Delaunay 1M (0.39 against 0.44 ms, symbolic).
    """
    xp = g.xp
    m, n = g.m, g.n
    # ids (labels reach m + n + 1) and offsets apart: past 2**31 entries the
    # offsets are int64 and the ids stay int32 (-DIDX, -DOFF)
    idx, odt = (np.dtype(d) for d in graph_dtypes(m + n + 1, 0, g.nnz + 1))
    if np.dtype(g.index_dtype).itemsize == 8:  # keep 64-bit graphs 64-bit
        idx = np.dtype(np.int64)
    if max(np.dtype(g.offset_dtype).itemsize, idx.itemsize) == 8:
        odt = np.dtype(np.int64)
    rptr = g.indptr.astype(odt, copy=False)
    rind = g.indices.astype(idx, copy=False)
    if g.backend == "numba" and not csc:
        cptr = cind = None
    elif g.backend == "numba":  # the compiled counting transpose (rows come out sorted)
        from .. import _cpu_csr

        cptr, cind = _cpu_csr.transpose(m, n, rptr, rind)
    else:   # NumPy: SciPy's counting transpose; CuPy: cuSPARSE (sort for 64-bit)
        cptr, cind = _csr.transpose(rptr, rind, n)
    if cptr is not None:
        cptr = cptr.astype(odt, copy=False)
        cind = cind.astype(idx, copy=False)
    return GPRState(
        m=m, n=n, idx=idx, odt=odt, xp=xp, backend=g.backend,
        rptr=rptr, rind=rind, cptr=cptr, cind=cind,
        mu_row=xp.full(m, -1, dtype=idx), mu_col=xp.full(n, -1, dtype=idx),
        # labels are only read after a global relabel has set them
        psi_row=(xp.zeros if xp is np else xp.empty)(m, dtype=idx),
        psi_col=(xp.zeros if xp is np else xp.empty)(n, dtype=idx),
        claim=(xp.zeros if xp is np else xp.empty)(m, dtype=idx),  # only read where written
    )


def _size(st) -> int:
    return int(_backend.reduce(st.mu_col >= 0, "sum"))


def greedy(st, kern) -> None:
    """Cheap greedy matching: ``greedy_degree`` (see :data:`GREEDY_KIND`), or
    rounds of ``greedy_round`` until one adds nothing."""
    if GREEDY_KIND == "degree":
        kern.greedy_degree(st)
        return
    before = _size(st)
    for _ in range(GREEDY_ROUNDS):
        kern.greedy_round(st)
        after = _size(st)
        if after == before or after >= min(st.m, st.n):
            break
        before = after


def karp_sipser(st, kern) -> None:
    """Parallel Karp–Sipser: match degree-one vertices (their only free
    neighbour), both sides, until none is left; then a greedy round; repeat.

    Degrees count free neighbours only.  Written with array operations and
    :func:`gpumatch.csr.first_min_neighbor`, so it runs on both backends;
    conflicting choices are settled by ``fix_matching``."""
    xp = st.xp
    nnz = st.rind.shape[0]
    col_owner = _csr.segment_owner(st.cptr, nnz)
    row_owner = _csr.segment_owner(st.rptr, nnz)

    def side(ptr, ind, owner, mine, other, count):
        free_other = (other < 0).astype(np.float64)
        deg = xp.bincount(owner, weights=free_other[ind], minlength=count) if nnz else xp.zeros(count)
        cand = xp.flatnonzero((mine < 0) & (deg == 1)).astype(st.idx, copy=False)
        if cand.shape[0] == 0:
            return 0
        taken = (other >= 0).astype(np.int32)
        nb, lab = _csr.first_min_neighbor(ptr, ind, taken, cand, stop_at=xp.zeros(cand.shape[0], dtype=np.int32))
        ok = lab == 0
        cand, nb = cand[ok], nb[ok].astype(st.idx, copy=False)
        other[nb] = cand
        mine[cand] = nb
        return int(cand.shape[0])

    for _ in range(KS_ROUNDS):
        before = _size(st)
        found = side(st.cptr, st.cind, col_owner, st.mu_col, st.mu_row, st.n)
        kern.fix_matching(st)
        found += side(st.rptr, st.rind, row_owner, st.mu_row, st.mu_col, st.m)
        kern.fix_matching(st)
        if found == 0:
            kern.greedy_round(st)
            kern.fix_matching(st)
        if _size(st) == before:
            break
    greedy(st, kern)


def chain_rule(st, kern, stats) -> None:
    """The chain rule on the empty matching of `st` (see
    :data:`CHAIN_RULE` and ``chain.cu``): every vertex of degree one or two
    learns the two ends of its chain and its distance to each by pointer
    jumping, and a chain with a pendant end is matched from that end, as
    Karp–Sipser's degree-one rule matches it one step at a time.  A chain
    with no end is a cycle, a whole component: each is matched perfectly
    from its least vertex id (:func:`_match_cycles`), as the serial rule
    does after one choice.  Exact: a maximum matching extends the pairs.
    Statistics ``chain_interior``, ``chain_rounds`` (0: not run),
    ``chain_cycle_vertices`` and ``chain_cycle_rounds``."""
    stats["chain_rounds"] = 0
    V = st.m + st.n
    if CHAIN_RULE is None or not V or V >= (1 << 30):
        return
    interior, pendants = kern.chain_count(st)
    stats["chain_interior"] = interior
    if not interior or interior < float(CHAIN_RULE["min_interior"]) * V:
        return
    P = kern.chain_init(st)
    # a chain of L vertices: ceil(log2 L) rounds; a round that ends no record leaves only cycles live
    stats["chain_rounds"] = _jump_rounds(lambda k: kern.chain_jump(st, P, k), lambda f: f[0] and f[1], V)
    kern.chain_match(st, P)
    _match_cycles(st, kern, P, stats)


def _jump_rounds(jump, goes_on, V) -> int:
    """Rounds of a pointer-jumping kernel: ``jump(k)`` runs k rounds and
    returns the last one's flags; one round at a time for the first four
    (short chains end there), then four per host read, while
    ``goes_on(flags)`` and at most ``bit_length(V) + 2`` rounds (a record
    covers at least 2^k steps after k rounds, and a chain or cycle at most
    V).  Returns the rounds run."""
    rounds, cap = 0, V.bit_length() + 2
    while True:
        step = 1 if rounds < 4 else 4
        flags = jump(step)
        rounds += step
        if not goes_on(flags) or rounds >= cap:
            return rounds


def _match_cycles(st, kern, P, stats) -> None:
    """The cycles the chain rule found (records still live, or ``far =
    CH_CYCLE``), matched in place of its records `P` (``chain.cu``,
    cycles): pass A, until a round changes no least id, gives every vertex
    its cycle's least id r; pass B, until every state found r, its steps to
    r in each direction; then each vertex pairs by the parity of its
    distance from r.  A cycle of L vertices takes about 2 log2 L rounds."""
    V = st.m + st.n
    stats["chain_cycle_vertices"] = count = kern.cycle_init(st, P)
    stats["chain_cycle_rounds"] = 0
    if not count:
        return
    rounds = _jump_rounds(lambda k: kern.cycle_min(st, P, k), bool, V)
    kern.cycle_rank_init(st, P)
    rounds += _jump_rounds(lambda k: kern.cycle_rank(st, P, k), bool, V)
    stats["chain_cycle_rounds"] = rounds
    kern.cycle_match(st, P)


def _now(backend):
    if PROFILE:
        _backend.synchronize(backend)
    return time.perf_counter()


def stall_bound(n_active: int, window: int | None = None) -> int:
    """Most global relabels G-PR can run under the progress watch when its
    first relabel found `n_active` active columns: ``window * (floor(log2
    n_active) + 2)`` (see :func:`run_gpr`); with ``window`` None,
    :data:`STALL_WINDOW`."""
    w = STALL_WINDOW if window is None else window
    return int(w) * (max(int(n_active), 1).bit_length() + 1)


def run_gpr(st, *, init="greedy", initial_col=None, relabel_k=0.7, shrink_threshold=512,
            max_relabels=None, fresh=False) -> dict:
    """Run G-PR on `st` in place; return the statistics.

    Parameters
    ----------
    st : GPRState
    init : {"greedy", "karp_sipser", "none"}
        Initial-matching heuristic (applied after the warm start, if any).
    initial_col : array or None
        Validated warm start: for each column its row or -1.
    relabel_k : float
        Global relabel after ``ceil(relabel_k * maxLevel)`` push iterations.
    shrink_threshold : int
        Compact the active list when it is longer than this.
    max_relabels : int or None
        Hand over to augmenting-path phases at the first global relabel
        after this many push phases (besides the progress watch below);
        None: :data:`AUGMENT_AFTER`.
    fresh : bool
        The matching of `st` is empty (a solve from scratch): with
        ``init="greedy"`` and no warm start, :func:`chain_rule` runs first.

    Notes
    -----
    Progress guarantee.  After each global relabel the driver knows
    ``a_k``, the number of free columns that an alternating path joins to a
    free row: an upper bound of what the matching still lacks.  A healthy
    run shrinks it geometrically.  When ``a_k > a_{k-W} / 2`` for the
    window ``W`` = :data:`STALL_WINDOW` (it did not halve in ``W`` rounds,
    each of which costs a BFS over the graph), G-PR stops and
    augmenting-path phases (:func:`gpumatch.matching._augment.augment`:
    vertex-disjoint alternating BFS trees from every free row, each tree
    that reaches a free column flips its path) finish the matching.  Every
    such phase flips a path, or is followed by one that does or proves the
    matching maximum, so at most ``2 a_k + 2`` phases run; G-PR runs at
    most :func:`stall_bound` relabels.  The loop therefore ends on every
    input; should the phases not converge within their bound (a bug) a
    ``RuntimeError`` names the input's size and the statistics.

    Statistics (besides the counts and times): ``finished_by``
    (``"push-relabel"``, ``"augmenting-paths"``, ``"walks"`` or
    ``"host"``), ``switch_reason`` (None, or why G-PR handed over) and
    ``active_history`` (``a_k`` of every G-PR relabel; the walks' relabels
    are counted in ``walk_relabels``).
    """
    kern = kernels_for(st.backend)
    xp = st.xp
    bk = st.backend
    stats = {"backend": bk, "initial_size": 0, "push_iterations": 0, "global_relabels": 0,
             "max_level": 0, "time_init": 0.0, "time_relabel": 0.0, "time_push": 0.0,
             "time_fix": 0.0, "loop_launches": 0, "loop_iterations": 0,
             "finished_by": "push-relabel", "switch_reason": None, "active_history": []}
    if max_relabels is None:
        max_relabels = AUGMENT_AFTER
    check_long, check_short = CHECK_EVERY.get(bk, (1, 1))
    loop_max = LOOP_MAX.get(bk, 0)
    window = STALL_WINDOW
    hard_cap = 4 * (st.m + st.n) + 64   # with the watch off (window None): a safety net only

    t0 = _now(bk)
    if initial_col is not None:
        cols = xp.flatnonzero(initial_col >= 0).astype(st.idx, copy=False)
        rows = initial_col[cols].astype(st.idx, copy=False)
        st.mu_col[cols] = rows
        st.mu_row[rows] = cols
    if st.m and st.n and st.rind.shape[0]:
        if init == "greedy":
            if fresh and initial_col is None:
                chain_rule(st, kern, stats)
            greedy(st, kern)
        elif init == "karp_sipser":
            karp_sipser(st, kern)
    solve = bool(st.m and st.n and st.rind.shape[0])
    fuse_fix = FUSE_FIX and solve
    if not fuse_fix:
        kern.fix_matching(st)
    if not solve:
        stats["initial_size"] = _size(st)
    # else: m - (free rows of the first relabel), which reads that count anyway
    t1 = _now(bk)
    stats["time_init"] = t1 - t0

    it = 0
    history = stats["active_history"]
    st.extra.pop("final_labels", None)
    st.extra.pop("cover_marks", None)
    plan = _tail.tail_plan(bk)
    deep = _tail.deep_levels(st, plan, "level_s")     # G-PR's relabels together (None: no cap)
    stats["relabel_steps"] = 0
    if solve:
        while True:
            t_a = _now(bk)
            if stats["global_relabels"] and not fuse_fix:  # the init ended with fix_matching
                kern.fix_matching(st)
            # exact labels, then the free columns the BFS reached
            cap = None if deep is None else max(1, deep // 2 - stats["relabel_steps"])   # (a step: two levels)
            max_level, active = kern.relabel_collect(st, fix=fuse_fix, max_steps=cap)
            stats["relabel_steps"] += int(st.extra.get("bfs_depth", 0))
            if stats["global_relabels"] == 0:
                stats["initial_size"] = st.m - st.extra["free_rows"]
            stats["global_relabels"] += 1
            stats["max_level"] = max(stats["max_level"], int(max_level))
            length = int(active.shape[0])
            history.append(length)
            t_b = _now(bk)
            stats["time_relabel"] += t_b - t_a
            if st.extra.get("bfs_truncated"):   # labels partial: the host finishes (_tail, deep_share)
                _tail.finish_on_host(st, kern, stats, f"G-PR's global relabels passed {2 * stats['relabel_steps']} "
                                                      f"BFS levels, the cap for {plan['deep_share']:g} of the host's "
                                                      f"estimate ({_tail.host_estimate(st, plan):.3f} s)", fresh=True)
                break
            if length == 0:
                st.extra["final_labels"] = True   # exact labels of the final matching: its König cover
                break
            reason = _stall(history, window, max_relabels)
            if reason is None and window is None and stats["global_relabels"] > hard_cap:
                raise RuntimeError(_watchdog_message(st, stats, "G-PR ran past its relabel cap"))
            if reason is not None:
                stats["finished_by"], stats["switch_reason"] = "augmenting-paths", reason
                _finish_by_augmenting(st, kern, length, stats)
                break
            budget = max(1, math.ceil(relabel_k * max_level))
            it = _push_phase(st, kern, active, length, it, budget, stats, shrink_threshold,
                             check_long, check_short, loop_max)
            stats["push_iterations"] = it
            stats["time_push"] += _now(bk) - t_b
    t_f = _now(bk)
    kern.fix_matching(st)
    stats["time_fix"] = _now(bk) - t_f
    return stats


def _stall(history, window, max_relabels):
    """Why G-PR should hand over after the relabels of `history` (their
    active counts), or None (see :func:`run_gpr`)."""
    k = len(history)
    if max_relabels is not None and k > max_relabels:
        return f"max_relabels={max_relabels} reached with {history[-1]} active columns"
    if window and k > window and 2 * history[-1] > history[-1 - window]:
        return (f"stall: the active columns went from {history[-1 - window]} to {history[-1]} in "
                f"{window} relabel rounds (less than halved)")
    return None


def _watchdog_message(st, stats, what):
    keep = {k: v for k, v in stats.items() if k != "active_history"}
    hist = stats.get("active_history", [])
    return (f"{what} on a {st.m} x {st.n} graph with {int(st.rind.shape[0])} entries; please report this "
            f"input. Active columns per relabel (last 8): {hist[-8:]}; statistics: {keep}")


def _finish_by_augmenting(st, kern, n_active, stats):
    """Finish the matching of `st` with augmenting-path phases after G-PR
    stalled with `n_active` active columns (at least the missing pairs)."""
    from . import _augment

    t0 = _now(st.backend)
    kern.fix_matching(st)                     # the phases need a consistent matching
    release_push_buffers(st)                  # the augmenting-path forest takes their memory
    limit = 2 * int(n_active) + 4
    plan = _tail.tail_plan(st.backend)
    if plan is None:
        astats = _augment.augment(st, max_phases=limit)
    else:   # phases, then walks or the host where the tail is long (_tail.HOST_FINISH)
        astats = _tail.augment_in_chunks(st, kern, limit, int(n_active), plan, stats)
    astats.pop("aug_matched", None)
    stats.update(astats)
    stats["time_augment"] = _now(st.backend) - t0
    if not astats.get("aug_converged"):
        raise RuntimeError(_watchdog_message(
            st, stats, f"augmenting-path phases did not converge within {limit} phases"))


def release_push_buffers(st) -> None:
    """Free the push phases' scratch (the dense list pair, the push loop's
    buffer, the claims): a push phase allocates them again.  Called before
    the augmenting-path forest is built and before a certificate, so that
    the peak of a large matching stays near 30 bytes per entry (issue 63:
    :func:`gpumatch.memory_estimate`)."""
    for key in ("list", "loop_buf", "loop_done"):
        st.extra.pop(key, None)
    st.claim = None


def release_scratch(st, keep_cover=False) -> None:
    """:func:`release_push_buffers` and the augmenting-path forest (a
    static solve is over: the certificate needs the memory more); with
    `keep_cover`, the marks of the search that proved the matching maximum
    (:func:`gpumatch.matching._augment.cover_marks`) stay for
    :func:`konig_cover_masks`."""
    from . import _augment

    release_push_buffers(st)
    _augment.release(st, keep_cover)


def _push_phase(st, kern, active, length, it, budget, stats, shrink_threshold, check_long, check_short,
                loop_max):
    """Up to `budget` push iterations over `active` (`length` entries);
    returns the iteration count `it` plus those run.

    A list longer than the shrink threshold runs as a device-side dense
    list (``list_step``: claim, then a push that compacts; the length is
    read every ``check_long`` iterations); a shorter one as slot lists
    (``claim`` + ``push``); once at most ``loop_max`` long, the rest of the
    budget runs in ``push_loop``."""
    if st.claim is None:   # (released by release_push_buffers)
        st.claim = (st.xp.zeros if st.xp is np else st.xp.empty)(st.m, dtype=st.idx)
    done = 0
    spare = None  # Ac and Ap swap buffers while the length stays
    since = 0
    dense = FUSED_SHRINK and length > shrink_threshold and length > loop_max
    if dense:
        kern.list_start(st, active)
    while done < budget:
        if length <= loop_max:  # short list: the rest in one push_loop
            if dense:
                active, dense = kern.list_array(st), False
            ran = kern.push_loop(st, active, budget - done)
            it += ran
            stats["loop_launches"] += 1
            stats["loop_iterations"] += ran
            break
        it += 1
        if dense:
            kern.list_step(st)
        else:
            nxt = kern.claim(st, active, spare)
            kern.push(st, active, nxt)
            spare, active = active, nxt
        done += 1
        since += 1
        if since >= (check_long if length > shrink_threshold else check_short) or done == budget:
            since = 0
            if dense:
                length = count = kern.list_length(st)
                if length <= shrink_threshold:  # short: back to slot lists
                    active, dense, spare = kern.list_array(st), False, None
            elif length > shrink_threshold:
                active = _csr.compact(active, active >= 0)
                length = int(active.shape[0])
                spare = None
                count = length
            else:
                count = kern.count_active(active)
            if count == 0:
                break
    return it


def konig_cover_masks(st):
    """König cover of the (maximum) matching in `st`: the masks ``(rows, columns)``.

    ``Z`` = vertices reached from the free rows (row → any column, column →
    its matched row).  Cover = rows not in ``Z`` ∪ columns in ``Z``: an edge
    with its row in ``Z`` has its column in ``Z``; every covered vertex is
    matched and each matched pair contributes exactly one endpoint, so the
    cover has the size of the matching.

    A solve has usually found ``Z`` already, and then no new search runs:

    * G-PR (or its walks) ended at a global relabel that reached no free
      column: the labels of that BFS are ``Z`` (``st.extra["final_labels"]``,
      set by :func:`run_gpr`; nothing has changed the matching since);
    * the augmenting-path phases ended with a closed forest
      (``aug_certificate`` ``"forest"``): every free row with an entry
      roots a tree, a tree row's columns are all in its tree and each tree
      column's mate is in the tree, so the forest is ``Z`` (the invariant is
      in the header of ``augment_common.cuh``); rows outside it are covered
      when matched (a free row outside it has no entry);
    * they ended with closed backward trees (``"backward"``): their columns
      ``Y`` are all that an alternating path reaches from the free columns,
      so the cover is the mates of ``Y``'s matched columns and the matched
      columns outside ``Y`` (the mirror image of the rule above).

    Otherwise one alternating BFS from the free rows (a global relabel)
    finds ``Z``.  Each way checks that the cover has the matching's size and
    records itself in ``st.extra["cover_source"]`` (``"labels"``,
    ``"forest"``, ``"backward"`` or ``"bfs"``).  The labels' mark is used
    once, as are the marks that :func:`release_scratch` kept.
    """
    from . import _augment

    kern = kernels_for(st.backend)
    labels = st.extra.pop("final_labels", False)
    marks = None if labels else _augment.cover_marks(st)
    how = "labels" if labels else "bfs" if marks is None else marks[0]
    if how == "forest":
        _, tree_row, root_col = marks
        cover_rows, cover_cols = (tree_row < 0) & (st.mu_row >= 0), root_col >= 0
    elif how == "backward":
        root_col = marks[2]
        back = root_col < -1
        cover_cols = (st.mu_col >= 0) & ~back
        cover_rows = st.xp.zeros(st.m, dtype=bool)
        cover_rows[st.mu_col[st.xp.flatnonzero(back & (st.mu_col >= 0))]] = True
    else:
        if how == "bfs":
            kern.fix_matching(st)
            kern.global_relabel(st)
        cover_rows, cover_cols = st.psi_row >= st.inf, st.psi_col < st.inf
    del marks
    if bool(_backend.reduce(cover_cols & (st.mu_col < 0), "any")):  # pragma: no cover - would be a bug
        raise RuntimeError(f"matching is not maximum: a free column is in the cover ({how})")
    st.extra["cover_source"] = how
    size = int(_backend.reduce(st.mu_col >= 0, "sum"))
    if int(_backend.reduce(cover_rows, "sum")) + int(_backend.reduce(cover_cols, "sum")) != size:  # pragma: no cover
        raise RuntimeError(f"the König cover ({how}) does not have the matching's size {size}")
    return cover_rows, cover_cols


def state_from_arrays(rptr, rind, cptr, cind, mu_row, mu_col, backend) -> GPRState:
    """A :class:`GPRState` over arrays that the caller keeps, with no checks and no transpose.

    `rptr`/`rind` (push side's CSR, m + 1 and nnz) and `cptr`/`cind` (its
    transpose) are a canonical pattern, the pointers in one offset dtype and
    the indices in one id dtype; `mu_row` (m) and `mu_col` (n) a consistent
    matching of it in the id dtype.  The arrays are
    used, not copied: the dynamic solver keeps one state per orientation
    over the same arrays (columns as the push side: the CSR as given; rows
    as the push side: the CSC passed as the CSR and the mates swapped).
    Labels and the claim array are new.
    """
    xp = _backend.get_xp(backend)
    m, n = int(rptr.shape[0]) - 1, int(cptr.shape[0]) - 1
    idx = np.dtype(rind.dtype)
    return GPRState(
        m=m, n=n, idx=idx, odt=np.dtype(rptr.dtype), xp=xp, backend=backend,
        rptr=rptr, rind=rind, cptr=cptr, cind=cind, mu_row=mu_row, mu_col=mu_col,
        psi_row=xp.zeros(m, dtype=idx), psi_col=xp.zeros(n, dtype=idx),
        claim=xp.zeros(m, dtype=idx),
    )


"""CuPy launchers of the G-PR kernels in ``gpr.cu``.

Same functions, signatures and meaning as :mod:`gpumatch.matching._kernels_numpy`
(the NumPy twins); the driver in :mod:`gpumatch.matching._driver` calls one
set or the other.  Only imported when the CuPy backend runs.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda
from . import _kernels_numpy as _reach   # the early stop of a deep relabel: array code shared by both twins

__all__ = ["greedy_round", "greedy_degree", "fix_matching", "global_relabel", "relabel_collect", "claim",
           "push", "count_active", "push_loop", "collect_active", "list_start", "list_step", "list_length",
           "list_array", "walk", "walk_mates", "chain_count", "chain_init", "chain_jump", "chain_match",
           "cycle_init", "cycle_min", "cycle_rank_init", "cycle_rank", "cycle_match"]

_SRC = "matching/gpr.cu"
_WALK_SRC = "matching/walk.cu"
#: Threads per block of the walks (long, divergent threads: small blocks
#: keep more of the GPU's slots busy while a few walks run on).
WALK_BLOCK = 128
_CTYPE = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
#: BFS steps launched between two looks at the frontier size: starts at the
#: first value and doubles up to the second (steps on an empty frontier are
#: no-ops, so overshooting costs only launches).
BFS_STEPS_PER_CHECK = (8, 64)
#: Frontiers of at most this many rows run their BFS levels in the
#: persistent one-block kernel ``gpumatch_gpr_bfs_loop`` (0: never), which
#: hands back to multi-block steps when a frontier grows past it.
BFS_LOOP_MAX = 2048
#: Threads of that one block.
BFS_LOOP_BLOCK = 1024


def defines(st) -> tuple:
    """The ``-D`` definitions of a state's kernels: ``IDX`` (vertex ids) and
    ``OFF`` (entry offsets, int64 past ``2**31`` entries)."""
    return (("IDX", _CTYPE[np.dtype(st.idx)]), ("OFF", _CTYPE[np.dtype(st.odt)]))


def _k(st, name):
    cache = st.extra.get("kernels")
    if cache is None:
        cache = st.extra["kernels"] = {}
    kern = cache.get(name)
    if kern is None:  # one lookup per state: launches in the push loop are hot
        kern = cache[name] = _cuda.get_kernel(_SRC, name, defines(st))
    return kern


def _scalar(st, x):
    return st.idx.type(x)


def _launch(st, name, count, args):
    if count <= 0:
        return
    _k(st, name)(_cuda.grid_for(count), (_cuda.BLOCK,), args)


def greedy_round(st):
    _launch(st, "gpumatch_gpr_greedy", st.n, (st.cptr, st.cind, st.mu_row, st.mu_col, np.int64(st.n)))
    _launch(st, "gpumatch_gpr_fix_cols", st.n, (st.mu_row, st.mu_col, np.int64(st.n)))


def greedy_degree(st):
    """Degree-aware greedy initial matching in four launches, no host sync:
    degree-one rows take their column (Karp–Sipser's safe rule), then the
    degree-one columns, then every free light column (at most ``GPR_HEAVY``
    entries), then every free heavy one, takes its free row of least degree
    (atomicCAS claims: the result is consistent and maximal)."""
    _launch(st, "gpumatch_gpr_greedy_deg1_rows", st.m, (st.rptr, st.rind, st.mu_row, st.mu_col, np.int64(st.m)))
    for max_deg in (1, 2**62):
        _launch(st, "gpumatch_gpr_greedy_cas", st.n,
                (st.cptr, st.cind, st.rptr, st.mu_row, st.mu_col, np.int64(st.n), np.int64(max_deg)))
    _launch(st, "gpumatch_gpr_greedy_cas_heavy", st.n, (st.cptr, st.cind, st.rptr, st.mu_row, st.mu_col, np.int64(st.n)))


def fix_matching(st):
    """FixMatching on both sides, one launch (``gpumatch_gpr_fix_both``)."""
    if max(st.m, st.n) > 0:
        _k(st, "gpumatch_gpr_fix_both")(_stride_grid(st, max(st.m, st.n)), (_cuda.BLOCK,),
                                        (st.mu_row, st.mu_col, np.int64(st.m), np.int64(st.n)))


def _bfs_grid(st):
    if st.bfs_blocks is None:
        cp = _backend.cp
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        st.bfs_blocks = max(1, min(sms * 8, (st.m + _cuda.BLOCK - 1) // _cuda.BLOCK))
    return (st.bfs_blocks,)


def _stride_grid(st, count):
    """Grid of a grid-stride kernel over `count` items (capped)."""
    if "sms" not in st.extra:
        st.extra["sms"] = _backend.cp.cuda.Device().attributes["MultiProcessorCount"]
    return (max(1, min(st.extra["sms"] * 16, (int(count) + _cuda.BLOCK - 1) // _cuda.BLOCK)),)


def _relabel_body(st, fix=False, max_steps=None):
    """The BFS of a global relabel (after FixMatching when `fix`), without
    any host read of its own: the number of roots is not read back; the
    count of the previous relabel (roots only ever become matched) picks
    the first BFS mode.  Counts land in ``st.bfs_counts`` (see
    ``gpumatch_gpr_relabel_init`` and ``gpumatch_gpr_collect_active``)."""
    cp = _backend.cp
    inf = st.inf
    if st.bfs_buf is None:
        st.bfs_buf = (cp.empty(max(st.m, 1), dtype=st.idx), cp.empty(max(st.m, 1), dtype=st.idx))
        # ring of 3 frontier sizes, the active count and maxLevel of
        # collect_active, the free rows and the roots of relabel_init
        st.bfs_counts = cp.zeros(7, dtype=np.uint64)
        st.bfs_max = cp.zeros(1, dtype=st.idx)
    st.bfs_counts.fill(0)
    # fix-up, labels, roots (free rows with entries, in bfs_buf[0]) in one launch
    _k(st, "gpumatch_gpr_relabel_init")(
        _stride_grid(st, max(st.m, st.n)), (_cuda.BLOCK,),
        (st.rptr, st.mu_row, st.mu_col, st.psi_row, st.psi_col, st.bfs_buf[0], st.bfs_counts, st.bfs_max,
         np.int64(st.m), np.int64(st.n), _scalar(st, inf), np.int32(bool(fix))))
    # the previous relabel's roots bound this one's (free rows only get
    # matched); a wrong guess would only cost speed: both modes read the
    # true frontier size on the device
    size = st.extra.get("roots_est", st.m)
    if st.n == 0:
        return
    kern = _k(st, "gpumatch_gpr_bfs_step")
    grid = _bfs_grid(st)
    step = 0
    chunk = BFS_STEPS_PER_CHECK[0]
    check = _reach.first_check(st)
    st.extra["bfs_truncated"] = False
    if max_steps is not None:
        check = min(check, int(max_steps))
    while True:
        if max_steps is not None and step >= max_steps:   # the caller's cap: labels left partial
            st.extra["bfs_truncated"] = True
            break
        if step >= check:   # a deep BFS: stop once it has reached every free column
            if _reach.unreached(st) == 0:
                _reach.fill_lower_bounds(st, step)
                break
            check = _reach.next_check(step)
            if max_steps is not None:
                check = min(check, int(max_steps))
        if size <= BFS_LOOP_MAX:  # small frontier: levels in one block
            if "bfs_state" not in st.extra:
                st.extra["bfs_state"] = cp.zeros(2, dtype=np.int64)
            state = st.extra["bfs_state"]
            _k(st, "gpumatch_gpr_bfs_loop")(
                (1,), (BFS_LOOP_BLOCK,),
                (st.rptr, st.rind, st.mu_col, st.psi_row, st.psi_col,
                 st.bfs_buf[0], st.bfs_buf[1], st.bfs_counts, st.bfs_max,
                 np.int64(step), np.int64(BFS_LOOP_MAX), np.int64(min(st.m + st.n + 2, check - step)),
                 _scalar(st, inf), state))
            step, size = (int(x) for x in state.get())
            if size == 0:
                break
            chunk = BFS_STEPS_PER_CHECK[0]
            continue
        for _ in range(chunk):
            kern(grid, (_cuda.BLOCK,),
                 (st.rptr, st.rind, st.mu_col, st.psi_row, st.psi_col,
                  st.bfs_buf[step % 2], st.bfs_buf[(step + 1) % 2], st.bfs_counts, st.bfs_max,
                  np.int64(step), _scalar(st, inf)))
            step += 1
        size = int(st.bfs_counts[step % 3])
        if size == 0:
            break
        chunk = min(2 * chunk, BFS_STEPS_PER_CHECK[1])
    st.extra["bfs_depth"] = step


def _read_relabel_counts(st):
    """One copy: (active count, maxLevel, free rows, roots); records the
    free rows and the roots on the state."""
    length, level, free, roots = (int(x) for x in st.bfs_counts[3:7].get())
    st.extra["free_rows"] = free
    st.extra["roots_est"] = roots
    return length, level


def global_relabel(st):
    """Exact labels by BFS from the free rows; returns maxLevel."""
    _relabel_body(st)
    _read_relabel_counts(st)
    return int(st.bfs_max[0])


def relabel_collect(st, fix=False, max_steps=None):
    """:func:`global_relabel` (after :func:`fix_matching` when `fix`, fused
    into the relabel's set-up launch) then :func:`collect_active`, reading
    maxLevel and the list length back in ONE host sync; returns
    ``(max_level, active)``.  `max_steps`: as in the NumPy twin (checked
    between launches, so a BFS may run up to 64 steps past it)."""
    _relabel_body(st, fix, max_steps)
    buf = _active_buf(st)
    # counts[3] <- number of active columns, counts[4] <- maxLevel
    _k(st, "gpumatch_gpr_collect_active")(
        _stride_grid(st, st.n), (_cuda.BLOCK,),
        (st.mu_col, st.psi_col, buf, st.bfs_counts, st.bfs_max, np.int64(st.n), _scalar(st, st.inf)))
    length, level = _read_relabel_counts(st)
    return level, buf[:length]


def collect_active(st):
    """The free columns that the last global relabel reached (order
    unspecified), in a buffer kept on the state."""
    cp = _backend.cp
    buf = _active_buf(st)
    if "active_count" not in st.extra:
        st.extra["active_count"] = cp.zeros(7, dtype=np.uint64)
        st.extra["active_level"] = cp.zeros(1, dtype=st.idx)
    count = st.extra["active_count"]
    count.fill(0)
    _k(st, "gpumatch_gpr_collect_active")(
        _stride_grid(st, st.n), (_cuda.BLOCK,),
        (st.mu_col, st.psi_col, buf, count, st.extra["active_level"], np.int64(st.n), _scalar(st, st.inf)))
    return buf[:int(count[3:4].get()[0])]


def _active_buf(st):
    buf = st.extra.get("active_buf")
    if buf is None:
        buf = st.extra["active_buf"] = _backend.cp.empty(max(st.n, 1), dtype=st.idx)
    return buf


def claim(st, active, out=None):
    """The claim phase of one push iteration over `active` (Ac); returns the
    row each slot's column claimed (-1: none), in `out` when given (a
    buffer of the same length)."""
    cp = _backend.cp
    target = cp.empty_like(active) if out is None else out
    length = active.shape[0]
    if length:
        _k(st, "gpumatch_gpr_claim")(
            ((length + _cuda.BLOCK - 1) // _cuda.BLOCK,), (_cuda.BLOCK,),
            (st.cptr, st.cind, st.mu_col, st.psi_row, st.psi_col, st.claim, active, target,
             np.int64(length), _scalar(st, st.inf)))
    return target


def push(st, active, nxt):
    """The push phase after :func:`claim`: `nxt` (the targets) becomes Ap in place."""
    length = active.shape[0]
    if length:
        _k(st, "gpumatch_gpr_push")(
            ((length + _cuda.BLOCK - 1) // _cuda.BLOCK,), (_cuda.BLOCK,),
            (st.mu_row, st.mu_col, st.psi_row, st.psi_col, st.claim, active, nxt, np.int64(length)))


#: Most threads of the one block of ``push_loop``.
LOOP_BLOCK = 1024


def push_loop(st, active, iters):
    """Up to `iters` iterations of claim + push over `active` in ONE launch
    of one block, stopping early when the list empties; returns the number
    of iterations run (one host sync).  `active` is used as a work buffer
    (its content afterwards is unspecified)."""
    cp = _backend.cp
    length = int(active.shape[0])
    if length == 0 or iters <= 0:
        return 0
    buf = st.extra.get("loop_buf")
    if buf is None or buf.shape[0] < length or buf.dtype != active.dtype:
        buf = st.extra["loop_buf"] = cp.empty(max(length, 4096), dtype=active.dtype)
        st.extra["loop_done"] = cp.zeros(1, dtype=np.int32)
    done = st.extra["loop_done"]
    threads = min(LOOP_BLOCK, max(32, (length + 31) // 32 * 32))
    _k(st, "gpumatch_gpr_push_loop")(
        (1,), (threads,),
        (st.cptr, st.cind, st.mu_row, st.mu_col, st.psi_row, st.psi_col, st.claim,
         active, buf, np.int32(min(iters, 2**31 - 1)), np.int64(length), _scalar(st, st.inf), done))
    return int(done.get()[0])


def _list_bufs(st):
    lst = st.extra.get("list")
    if lst is None:
        cp = _backend.cp
        size = max(st.n, 1)
        lst = st.extra["list"] = {
            "bufs": [None, cp.empty(size, dtype=st.idx)],  # [0]: the list given to list_start
            "next": cp.empty(size, dtype=st.idx),
            "counts": cp.zeros(2, dtype=np.uint64),
        }
    return lst


def list_start(st, active):
    """Make `active` (a dense list of columns, e.g. from
    :func:`relabel_collect`) the current list of :func:`list_step`."""
    lst = _list_bufs(st)
    lst["cur"] = 0
    lst["bufs"][0] = active
    lst["len"] = int(active.shape[0])  # host upper bound of the length
    lst["hint"] = lst["len"]           # exact: the first step stores it on the device


def list_step(st):
    """One push iteration (claim + push) over the current list, which the
    push phase compacts into the other buffer: no host sync (the length
    stays on the device; the launch grids cover the last length read on the
    host, an upper bound since lists never grow)."""
    lst = st.extra["list"]
    cap = lst["len"]
    if cap == 0:
        return
    cur = lst["cur"]
    # the first buffer is the list given to list_start: long enough, since lists never grow
    src, dst = lst["bufs"][cur], lst["bufs"][cur ^ 1]
    grid = ((cap + _cuda.BLOCK - 1) // _cuda.BLOCK,)
    _k(st, "gpumatch_gpr_claim_list")(
        grid, (_cuda.BLOCK,),
        (st.cptr, st.cind, st.mu_col, st.psi_row, st.psi_col, st.claim, src, lst["next"],
         lst["counts"], np.int32(cur), np.int64(lst["hint"]), _scalar(st, st.inf)))
    _k(st, "gpumatch_gpr_push_compact")(
        grid, (_cuda.BLOCK,),
        (st.mu_row, st.mu_col, st.psi_row, st.psi_col, st.claim, src, lst["next"], dst, lst["counts"],
         np.int32(cur)))
    lst["hint"] = -1
    lst["cur"] = cur ^ 1


def list_length(st):
    """Length of the current list (one host read)."""
    lst = st.extra["list"]
    if lst["hint"] >= 0:
        return lst["hint"]
    lst["len"] = int(lst["counts"][lst["cur"]:lst["cur"] + 1].get()[0])
    return lst["len"]


def list_array(st):
    """The current list as an array of the length last returned by
    :func:`list_length` (a view of a state buffer)."""
    lst = st.extra["list"]
    return lst["bufs"][lst["cur"]][:lst["len"]]


def count_active(active):
    return int(_backend.reduce(active >= 0, "sum"))


def walk(st, active, cap):
    """``gpumatch_walk`` (``walk.cu``) over `active`, at most `cap` pushes a
    thread; returns ``(pushes, walks that reached a free row)`` (one host read)."""
    cp = _backend.cp
    length = int(active.shape[0])
    if length == 0:
        return 0, 0
    stats = st.extra.get("walk_stats")
    if stats is None:
        stats = st.extra["walk_stats"] = cp.zeros(2, dtype=np.uint64)
    stats.fill(0)
    kern = _cuda.get_kernel(_WALK_SRC, "gpumatch_walk", defines(st))
    kern(_cuda.grid_for(length, WALK_BLOCK), (WALK_BLOCK,),
         (st.cptr, st.cind, st.mu_row, st.psi_row, active, np.int64(length), _scalar(st, st.inf),
          np.int64(cap), stats))
    pushes, done = (int(x) for x in stats.get())
    return pushes, done


def walk_mates(st):
    """``gpumatch_walk_mates``: ``mu_col`` from ``mu_row`` after the walks."""
    st.mu_col.fill(-1)
    if st.m:
        kern = _cuda.get_kernel(_WALK_SRC, "gpumatch_walk_mates", defines(st))
        kern(_stride_grid(st, st.m), (_cuda.BLOCK,), (st.mu_row, st.mu_col, np.int64(st.m)))


_CHAIN_SRC = "matching/chain.cu"


def _chain_kernel(st, name):
    return _cuda.get_kernel(_CHAIN_SRC, name, defines(st))


def _per_vertex(st, name, *extra):
    """Launch ``chain.cu``'s kernel `name` with a thread per vertex (m + n)
    on the graph's four arrays, m, n and `extra` (nothing when there is no
    vertex)."""
    V = st.m + st.n
    if V:
        _chain_kernel(st, name)(_cuda.grid_for(V), (_cuda.BLOCK,),
                                (st.rptr, st.rind, st.cptr, st.cind, np.int64(st.m), np.int64(st.n)) + extra)


def chain_count(st):
    """``gpumatch_chain_count`` (``chain.cu``): ``(interior, pendants)`` (one host read)."""
    counts = _backend.cp.zeros(2, dtype=np.uint64)
    _per_vertex(st, "gpumatch_chain_count", counts)
    interior, pendants = (int(x) for x in counts.get())
    return interior, pendants


def chain_init(st):
    """``gpumatch_chain_init``: the first chain records, ``u64[2V]``."""
    P = _backend.cp.empty(2 * (st.m + st.n), dtype=np.uint64)
    _per_vertex(st, "gpumatch_chain_init", P)
    return P


def _jump_launches(st, name, P, rounds):
    """`rounds` launches of the pointer-jumping kernel `name` (``chain.cu``:
    arguments ``P, V, flags``); the two flags of the last round, ``(live,
    progress)`` (one host read)."""
    cp = _backend.cp
    flags = st.extra.get("chain_flags")
    if flags is None:
        flags = st.extra["chain_flags"] = cp.zeros(2, dtype=np.uint32)
    n2 = int(P.shape[0])
    if n2 == 0 or rounds < 1:
        return False, False
    kern = _chain_kernel(st, name)
    for r in range(rounds):
        if r == rounds - 1:
            flags.fill(0)
        kern(_cuda.grid_for(n2), (_cuda.BLOCK,), (P, np.int64(n2 // 2), flags))
    live, progress = (bool(int(x)) for x in flags.get())
    return live, progress


def chain_jump(st, P, rounds=1):
    """`rounds` launches of ``gpumatch_chain_jump``; ``(live, progress)``
    of the last: a record is still not done, a record became done."""
    return _jump_launches(st, "gpumatch_chain_jump", P, rounds)


def chain_match(st, P):
    """``gpumatch_chain_match``: the rule's pairs into the empty matching."""
    _per_vertex(st, "gpumatch_chain_match", P, st.mu_row, st.mu_col)


def cycle_init(st, P):
    """``gpumatch_cycle_init``: pass A's first records in `P` (the chain
    records, read by ``chain_match`` already); the number of vertices on
    cycles (one host read)."""
    count = _backend.cp.zeros(1, dtype=np.uint64)
    _per_vertex(st, "gpumatch_cycle_init", P, count)
    return int(count.get()[0])


def cycle_min(st, P, rounds=1):
    """`rounds` launches of ``gpumatch_cycle_min`` (pass A); True when a
    least id changed in the last one."""
    return _jump_launches(st, "gpumatch_cycle_min", P, rounds)[1]


def cycle_rank_init(st, P):
    """``gpumatch_cycle_rank_init``: pass B's first records."""
    _per_vertex(st, "gpumatch_cycle_rank_init", P)


def cycle_rank(st, P, rounds=1):
    """`rounds` launches of ``gpumatch_cycle_rank`` (pass B); True when a
    record is still not found after the last one."""
    return _jump_launches(st, "gpumatch_cycle_rank", P, rounds)[0]


def cycle_match(st, P):
    """``gpumatch_cycle_match``: every cycle's pairs into the matching."""
    _per_vertex(st, "gpumatch_cycle_match", P, st.mu_row, st.mu_col)

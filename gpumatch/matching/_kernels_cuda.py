"""CuPy launchers of the G-PR kernels in ``gpr.cu``.

Same functions, signatures and meaning as :mod:`gpumatch.matching._kernels_numpy`
(the NumPy twins); the driver in :mod:`gpumatch.matching._driver` calls one
set or the other.  Only imported when the CuPy backend runs.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda

__all__ = ["greedy_round", "greedy_degree", "fix_matching", "global_relabel", "relabel_collect", "push",
           "fixup", "count_active", "push_loop", "collect_active"]

_SRC = "matching/gpr.cu"
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


def _k(st, name):
    cache = st.extra.get("kernels")
    if cache is None:
        cache = st.extra["kernels"] = {}
    kern = cache.get(name)
    if kern is None:  # one lookup per state: launches in the push loop are hot
        kern = cache[name] = _cuda.get_kernel(_SRC, name, (("IDX", _CTYPE[np.dtype(st.idx)]),))
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
    """Degree-aware greedy initial matching in three launches, no host sync:
    degree-one rows take their column (Karp–Sipser's safe rule), then the
    degree-one columns, then every free column takes its free row of least
    degree (atomicCAS claims: the result is consistent and maximal)."""
    _launch(st, "gpumatch_gpr_greedy_deg1_rows", st.m, (st.rptr, st.rind, st.mu_row, st.mu_col, np.int64(st.m)))
    for max_deg in (1, 2**62):
        _launch(st, "gpumatch_gpr_greedy_cas", st.n,
                (st.cptr, st.cind, st.rptr, st.mu_row, st.mu_col, np.int64(st.n), np.int64(max_deg)))


def fix_matching(st):
    _launch(st, "gpumatch_gpr_fix_rows", st.m, (st.mu_row, st.mu_col, np.int64(st.m)))
    _launch(st, "gpumatch_gpr_fix_cols", st.n, (st.mu_row, st.mu_col, np.int64(st.n)))


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


def _relabel_body(st):
    """The BFS of a global relabel, without reading maxLevel back; returns
    the number of free rows (0: no BFS ran)."""
    cp = _backend.cp
    inf = st.inf
    if st.bfs_buf is None:
        st.bfs_buf = (cp.empty(max(st.m, 1), dtype=st.idx), cp.empty(max(st.m, 1), dtype=st.idx))
        # ring of 3 frontier sizes, then the active count and maxLevel of relabel_collect
        st.bfs_counts = cp.zeros(5, dtype=np.uint64)
        st.bfs_max = cp.zeros(1, dtype=st.idx)
    st.bfs_counts.fill(0)
    # labels, roots (the free rows, in bfs_buf[0]) and counts[0] in one launch
    _k(st, "gpumatch_gpr_relabel_init")(
        _stride_grid(st, max(st.m, st.n)), (_cuda.BLOCK,),
        (st.mu_row, st.psi_row, st.psi_col, st.bfs_buf[0], st.bfs_counts, st.bfs_max,
         np.int64(st.m), np.int64(st.n), _scalar(st, inf)))
    r0 = int(st.bfs_counts[0])
    st.extra["free_rows"] = r0
    if r0 == 0 or st.n == 0:
        return 0
    kern = _k(st, "gpumatch_gpr_bfs_step")
    grid = _bfs_grid(st)
    step = 0
    size = r0
    chunk = BFS_STEPS_PER_CHECK[0]
    while True:
        if size <= BFS_LOOP_MAX:  # small frontier: levels in one block
            if "bfs_state" not in st.extra:
                st.extra["bfs_state"] = cp.zeros(2, dtype=np.int64)
            state = st.extra["bfs_state"]
            _k(st, "gpumatch_gpr_bfs_loop")(
                (1,), (BFS_LOOP_BLOCK,),
                (st.rptr, st.rind, st.mu_col, st.psi_row, st.psi_col,
                 st.bfs_buf[0], st.bfs_buf[1], st.bfs_counts, st.bfs_max,
                 np.int64(step), np.int64(BFS_LOOP_MAX), np.int64(st.m + st.n + 2),
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
    return r0


def global_relabel(st):
    """Exact labels by BFS from the free rows; returns maxLevel."""
    if _relabel_body(st) == 0:
        return 0
    return int(st.bfs_max[0])


def relabel_collect(st):
    """:func:`global_relabel` then :func:`collect_active`, reading maxLevel
    and the list length back in ONE host sync; returns ``(max_level,
    active)``."""
    r0 = _relabel_body(st)
    buf = _active_buf(st)
    # counts[3] <- number of active columns, counts[4] <- maxLevel
    _k(st, "gpumatch_gpr_collect_active")(
        _stride_grid(st, st.n), (_cuda.BLOCK,),
        (st.mu_col, st.psi_col, buf, st.bfs_counts, st.bfs_max, np.int64(st.n), _scalar(st, st.inf)))
    length, level = (int(x) for x in st.bfs_counts[3:5].get())
    if r0 == 0:
        level = 0
    return level, buf[:length]


def collect_active(st):
    """The free columns that the last global relabel reached (order
    unspecified), in a buffer kept on the state."""
    cp = _backend.cp
    buf = _active_buf(st)
    if "active_count" not in st.extra:
        st.extra["active_count"] = cp.zeros(5, dtype=np.uint64)
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


def push(st, active, it, out=None):
    cp = _backend.cp
    nxt = cp.empty_like(active) if out is None else out
    length = active.shape[0]
    if length:
        _k(st, "gpumatch_gpr_push")(
            ((length + _cuda.BLOCK - 1) // _cuda.BLOCK,), (_cuda.BLOCK,),
            (st.cptr, st.cind, st.mu_row, st.mu_col, st.psi_row, st.psi_col,
             active, nxt, st.stamp, np.int32(it), np.int64(length), _scalar(st, st.inf)))
    return nxt


def fixup(st, active, nxt):
    length = active.shape[0]
    if length:
        _k(st, "gpumatch_gpr_fixup")(
            ((length + _cuda.BLOCK - 1) // _cuda.BLOCK,), (_cuda.BLOCK,),
            (st.mu_row, st.mu_col, active, nxt, np.int64(length)))


#: Most threads of the one block of ``push_loop``.
LOOP_BLOCK = 1024


def push_loop(st, active, it, iters):
    """Up to `iters` iterations of push + fixup over `active` (stamps `it`,
    `it` + 1, ...) in ONE launch of one block, stopping early when the list
    empties; returns the number of iterations run (one host sync).  `active`
    is used as a work buffer (its content afterwards is unspecified)."""
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
        (st.cptr, st.cind, st.mu_row, st.mu_col, st.psi_row, st.psi_col,
         active, buf, st.stamp, np.int32(it), np.int32(min(iters, 2**31 - 1 - it)),
         np.int64(length), _scalar(st, st.inf), done))
    return int(done.get()[0])


def count_active(active):
    cp = _backend.cp
    return int(cp.count_nonzero(active >= 0))

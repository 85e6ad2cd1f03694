"""CuPy launchers of the G-PR kernels in ``gpr.cu``.

Same functions, signatures and meaning as :mod:`gpumatch.matching._kernels_numpy`
(the NumPy twins); the driver in :mod:`gpumatch.matching._driver` calls one
set or the other.  Only imported when the CuPy backend runs.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda

__all__ = ["greedy_round", "fix_matching", "global_relabel", "push", "fixup", "count_active"]

_SRC = "matching/gpr.cu"
_CTYPE = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
#: BFS steps launched between two looks at the frontier size: starts at the
#: first value and doubles up to the second (steps on an empty frontier are
#: no-ops, so overshooting costs only launches).
BFS_STEPS_PER_CHECK = (8, 64)


def _k(st, name):
    return _cuda.get_kernel(_SRC, name, (("IDX", _CTYPE[np.dtype(st.idx)]),))


def _scalar(st, x):
    return st.idx.type(x)


def _launch(st, name, count, args):
    if count <= 0:
        return
    _k(st, name)(_cuda.grid_for(count), (_cuda.BLOCK,), args)


def greedy_round(st):
    _launch(st, "gpumatch_gpr_greedy", st.n, (st.cptr, st.cind, st.mu_row, st.mu_col, np.int64(st.n)))
    _launch(st, "gpumatch_gpr_fix_cols", st.n, (st.mu_row, st.mu_col, np.int64(st.n)))


def fix_matching(st):
    _launch(st, "gpumatch_gpr_fix_rows", st.m, (st.mu_row, st.mu_col, np.int64(st.m)))
    _launch(st, "gpumatch_gpr_fix_cols", st.n, (st.mu_row, st.mu_col, np.int64(st.n)))


def _bfs_grid(st):
    if st.bfs_blocks is None:
        cp = _backend.cp
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        st.bfs_blocks = max(1, min(sms * 8, (st.m + _cuda.BLOCK - 1) // _cuda.BLOCK))
    return (st.bfs_blocks,)


def global_relabel(st):
    cp = _backend.cp
    inf = st.inf
    free = st.mu_row < 0
    cp.copyto(st.psi_row, cp.where(free, 0, inf).astype(st.idx, copy=False))
    st.psi_col.fill(inf)
    if st.bfs_buf is None:
        st.bfs_buf = (cp.empty(max(st.m, 1), dtype=st.idx), cp.empty(max(st.m, 1), dtype=st.idx))
        st.bfs_counts = cp.zeros(3, dtype=np.uint64)
        st.bfs_max = cp.zeros(1, dtype=st.idx)
    from ..csr import compact

    roots = compact(cp.arange(st.m, dtype=st.idx), free)
    r0 = int(roots.shape[0])
    if r0 == 0 or st.n == 0:
        return 0
    st.bfs_buf[0][:r0] = roots
    st.bfs_counts.fill(0)
    st.bfs_counts[0] = r0
    st.bfs_max.fill(0)
    kern = _k(st, "gpumatch_gpr_bfs_step")
    grid = _bfs_grid(st)
    step = 0
    chunk = BFS_STEPS_PER_CHECK[0]
    while True:
        for _ in range(chunk):
            kern(grid, (_cuda.BLOCK,),
                 (st.rptr, st.rind, st.mu_col, st.psi_row, st.psi_col,
                  st.bfs_buf[step % 2], st.bfs_buf[(step + 1) % 2], st.bfs_counts, st.bfs_max,
                  np.int64(step), _scalar(st, inf)))
            step += 1
        if int(st.bfs_counts[step % 3]) == 0:
            break
        chunk = min(2 * chunk, BFS_STEPS_PER_CHECK[1])
    return int(st.bfs_max[0])


def push(st, active, it, out=None):
    cp = _backend.cp
    nxt = cp.empty_like(active) if out is None else out
    _launch(st, "gpumatch_gpr_push", active.shape[0],
            (st.cptr, st.cind, st.mu_row, st.mu_col, st.psi_row, st.psi_col,
             active, nxt, st.stamp, np.int32(it), np.int64(active.shape[0]), _scalar(st, st.inf)))
    return nxt


def fixup(st, active, nxt):
    _launch(st, "gpumatch_gpr_fixup", active.shape[0],
            (st.mu_row, st.mu_col, active, nxt, np.int64(active.shape[0])))


def count_active(active):
    cp = _backend.cp
    return int(cp.count_nonzero(active >= 0))

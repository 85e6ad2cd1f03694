"""CuPy launchers of the SCC kernels in ``scc.cu``.

Same functions, signatures and meaning as :mod:`gpumatch.structure._scc_numpy`
(the NumPy twins).  Only imported when the CuPy backend runs.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda

__all__ = ["trim", "reach"]

_SRC = "structure/scc.cu"
#: Levels launched between two looks at the frontier sizes: starts at the
#: first value and doubles up to the second (a level on empty frontiers is
#: a no-op, so overshooting costs only launches).
STEPS_PER_CHECK = (4, 64)


def _kern(st, name):
    cache = st.extra.setdefault("kernels", {})
    kern = cache.get(name)
    if kern is None:
        kern = cache[name] = _cuda.get_kernel(_SRC, name, _cuda.index_defines(st.find.dtype))
    return kern


def _blocks(st):
    """Blocks of the grid-stride kernels: 8 per SM, no more than the nodes need."""
    sms = st.extra.get("sms")
    if sms is None:
        sms = st.extra["sms"] = int(_backend.cp.cuda.Device().attributes["MultiProcessorCount"])
    return max(1, min(sms * 8, (st.k + _cuda.BLOCK - 1) // _cuda.BLOCK))


def trim(st):
    """One trim pass (``gpumatch_scc_trim``); returns ``(cls, count)``, one host read."""
    cp = _backend.cp
    cls = st.extra.get("cls")
    if cls is None:
        cls = st.extra["cls"] = cp.empty(max(st.k, 1), dtype=np.uint8)
        st.extra["trim_count"] = cp.zeros(1, dtype=np.uint64)
    count = st.extra["trim_count"]
    count.fill(0)
    if st.k:
        _kern(st, "gpumatch_scc_trim")(
            (_blocks(st),), (_cuda.BLOCK,),
            (st.fptr, st.find, st.bptr, st.bind, st.key, st.done.view(np.uint8), cls, count, np.int64(st.k)))
    return cls[:st.k], int(count.get()[0])


def reach(st, pivots, max_levels):
    """Forward and backward BFS from `pivots`, one ``gpumatch_scc_reach_step``
    launch per level for both directions; the host reads the two frontier
    sizes every few levels (:data:`STEPS_PER_CHECK`).  Returns
    ``(mark, levels, complete)`` as the NumPy twin (`levels` may overshoot
    by up to the last chunk of launches)."""
    cp = _backend.cp
    k = st.k
    bufs = st.extra.get("reach_bufs")
    if bufs is None:
        bufs = st.extra["reach_bufs"] = tuple(cp.empty(max(k, 1), dtype=st.find.dtype) for _ in range(4))
        st.extra["reach_counts"] = cp.zeros(6, dtype=np.uint64)
        st.extra["mark"] = cp.zeros(max(k, 1), dtype=np.int32)
    counts = st.extra["reach_counts"]
    mark = st.extra["mark"][:k]
    mark.fill(0)
    npiv = int(pivots.shape[0])
    if npiv == 0:
        return mark, 0, True
    piv = pivots.astype(st.find.dtype, copy=False)
    mark[piv] = 3
    bufs[0][:npiv] = piv
    bufs[2][:npiv] = piv
    counts.set(np.array([npiv, 0, 0, npiv, 0, 0], dtype=np.uint64))
    kern = _kern(st, "gpumatch_scc_reach_step")
    grid = (_blocks(st), 2)
    done8 = st.done.view(np.uint8)
    level = 0
    chunk = STEPS_PER_CHECK[0]
    while True:
        for _ in range(chunk):
            f_cur, f_next = (bufs[0], bufs[1]) if level % 2 == 0 else (bufs[1], bufs[0])
            b_cur, b_next = (bufs[2], bufs[3]) if level % 2 == 0 else (bufs[3], bufs[2])
            kern(grid, (_cuda.BLOCK,),
                 (st.fptr, st.find, st.bptr, st.bind, st.key, done8, mark,
                  f_cur, f_next, b_cur, b_next, counts, np.int64(level)))
            level += 1
        sizes = counts.get()
        if sizes[level % 3] == 0 and sizes[3 + level % 3] == 0:
            return mark, level, True
        if level >= max_levels:
            return mark, level, False
        chunk = min(2 * chunk, STEPS_PER_CHECK[1])

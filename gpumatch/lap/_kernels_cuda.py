"""CuPy launchers of the auction kernels in ``auction.cu``.

Same functions, signatures and meaning as :mod:`gpumatch.lap._kernels_numpy`
(the NumPy twins); the driver in :mod:`gpumatch.lap._driver` calls one set
or the other.  Only imported when the CuPy backend runs.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda

__all__ = ["refresh", "bid", "resolve", "rounds", "update", "update_start", "update_sweep", "update_apply",
           "batch_dense", "batch_shared_bytes", "ROUNDS_BLOCK", "BATCH_BLOCK", "BATCH_SHARED_MAX",
           "UPDATE_BLOCKS_PER_SM"]

_SRC = "lap/auction.cu"
_CTYPE = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
#: Threads of the one block of ``gpumatch_lap_rounds``.
ROUNDS_BLOCK = 1024
#: Threads per block (one problem) of ``gpumatch_lap_batch_dense``, by
#: problem size: at most 128 rows, at most 256, larger (a warp per bidding
#: row: a few small blocks fill an SM, a large problem gets a whole SM).
BATCH_BLOCK = (128, 256, 1024)
#: Shared memory of one block of ``gpumatch_lap_batch_dense`` at most (the
#: default limit of a launch, 48 KiB, less the kernel's own 256 bytes):
#: problems up to 939 rows keep their arrays there (:func:`batch_shared_bytes`),
#: larger ones in global memory.  A hook for tests (0: always global).
BATCH_SHARED_MAX = 48 * 1024 - 256
#: Blocks per multiprocessor (of ``_cuda.BLOCK`` threads) of the cooperative
#: global price update (``gpumatch_lap_update_dial``), at most what fits at
#: once: its steps are mostly small frontiers, and a grid barrier costs less
#: with fewer blocks (H200, random sparse 100k / 1M: 1 block 0.158 / 1.18 s,
#: 2 blocks 0.160 / 1.20, 4 blocks 0.167 / 1.22).
UPDATE_BLOCKS_PER_SM = 1


def kernel_defines(idx_dtype, kind):
    """The ``-D`` definitions of ``auction.cu`` for ids of `idx_dtype` and costs of
    `kind` (``"i"``: int64, else float64)."""
    return (("IDX", _CTYPE[np.dtype(idx_dtype)]), ("COST_T", "long long" if kind == "i" else "double"),
            ("COST_IS_INT", 1 if kind == "i" else 0))


def _k(st, name, cooperative=False):
    cache = st.extra.get("kernels")
    if cache is None:
        cache = st.extra["kernels"] = {}
    kern = cache.get(name)
    if kern is None:
        idx = st.indices.dtype if not st.dense else np.int32
        kern = cache[name] = _cuda.get_kernel(_SRC, name, kernel_defines(idx, st.kind), cooperative=cooperative)
    return kern


def _sms(st):
    if "sms" not in st.extra:
        st.extra["sms"] = _backend.cp.cuda.Device().attributes["MultiProcessorCount"]
    return st.extra["sms"]


def _grid(st, threads):
    """Blocks of a grid-stride launch over `threads` threads (capped)."""
    return (max(1, min(_sms(st) * 16, (int(threads) + _cuda.BLOCK - 1) // _cuda.BLOCK)),)


def _csr(st):
    """``(indptr, indices, cost, dense_n)`` arguments (placeholders for dense input)."""
    if st.dense:
        if "dummy" not in st.extra:
            cp = _backend.cp
            st.extra["dummy"] = (cp.zeros(1, dtype=np.int64), cp.zeros(1, dtype=np.int32))
        ptr, ind = st.extra["dummy"]
        return ptr, ind, st.C, np.int64(st.n)
    return st.indptr, st.indices, st.cost, np.int64(0)


def _c(st, value):
    """A cost-typed scalar argument."""
    return np.int64(value) if st.kind == "i" else np.float64(value)


def _est(st):
    """Rows a round's list may hold (the last count the driver read, doubled)."""
    return 2 * max(int(st.extra.get("left", st.m)), 1) + 32


def refresh(st, eps, r):
    ptr, ind, cost, dn = _csr(st)
    par = r & 1
    _k(st, "gpumatch_lap_refresh")(
        _grid(st, st.m * st.group), (_cuda.BLOCK,),
        (ptr, ind, cost, dn, st.v, st.x, st.owner, st.cx, _c(st, st.cmin), np.int64(st.scale), _c(st, eps),
         st.lists[par], st.counts, np.int32(par), np.int64(st.m), np.int32(st.group)))


def bid(st, eps, r):
    ptr, ind, cost, dn = _csr(st)
    par = r & 1
    _k(st, "gpumatch_lap_bid")(
        _grid(st, _est(st) * st.group), (_cuda.BLOCK,),
        (ptr, ind, cost, dn, st.v, st.x, _c(st, st.cmin), np.int64(st.scale), _c(st, eps), _c(st, st.big),
         st.lists[par], st.lists[1 - par], st.bid_delta, st.cx, st.keys, st.bidcols, st.counts, np.int32(par),
         np.int32(st.group)))


def resolve(st, r):
    par = r & 1
    _k(st, "gpumatch_lap_resolve")(
        _grid(st, _est(st)), (_cuda.BLOCK,),
        (st.keys, st.bidcols, st.bid_delta, st.x, st.owner, st.v, st.lists[1 - par], st.counts, np.int32(par),
         _c(st, st.floor)))


def rounds(st, eps, r, max_rounds, stop_at):
    ptr, ind, cost, dn = _csr(st)
    _k(st, "gpumatch_lap_rounds")(
        (1,), (ROUNDS_BLOCK,),
        (ptr, ind, cost, dn, st.v, st.x, st.owner, _c(st, st.cmin), np.int64(st.scale), _c(st, eps),
         _c(st, st.big), st.lists[0], st.lists[1], st.bid_delta, st.cx, st.keys, st.bidcols, st.counts,
         _c(st, st.floor), np.int64(r), np.int64(max_rounds), np.int64(stop_at), np.int64(st.m),
         np.int32(st.group)))


def _transpose(st):
    """``(cptr, crow, ccost)``: the rows of each column and the entries' costs
    in column order (the CSR's transpose, built once per auction)."""
    got = st.extra.get("csc")
    if got is None:
        from .. import csr

        cptr, crow, perm = csr.transpose(st.indptr, st.indices, st.n, return_perm=True)
        got = st.extra["csc"] = (cptr.astype(np.int64, copy=False), crow.astype(np.int32, copy=False),
                                 st.cost[perm])
    return got


def update(st, eps, lmax, sweeps):
    """The whole global price update in one cooperative launch
    (``gpumatch_lap_update_dial``: Dial's buckets over the transpose, which
    is built at the first update): the steps it ran (the `sweeps` cap does
    not apply: it always converges); None where the device cannot launch
    it cooperatively, and for dense input (the driver then runs the three
    kernels below: a dense sweep reads the whole matrix)."""
    if st.dense:
        return None
    grid = st.extra.get("update_grid")
    if grid is None:
        kern = _k(st, "gpumatch_lap_update_dial", cooperative=True)
        grid = st.extra["update_grid"] = _cuda.cooperative_grid(kern, _cuda.BLOCK, UPDATE_BLOCKS_PER_SM)
        if grid:
            cp = _backend.cp
            st.extra["update_flags"] = cp.zeros(4, dtype=np.uint64)
            st.extra["update_d"] = cp.empty(max(st.n, 1), dtype=np.int32)
            st.extra["update_front"] = cp.empty(2 * max(st.n, 1), dtype=np.int32)
    if not grid:
        return None
    cptr, crow, ccost = _transpose(st)
    flags = st.extra["update_flags"]
    _k(st, "gpumatch_lap_update_dial", cooperative=True)(
        (grid,), (_cuda.BLOCK,),
        (cptr, crow, ccost, st.v, st.x, st.owner, st.cx, _c(st, st.cmin), np.int64(st.scale), _c(st, eps),
         st.extra["update_d"], st.extra["update_front"], flags, np.int64(st.n), np.int64(lmax)))
    return int(flags[3])


def update_start(st, lmax):
    _k(st, "gpumatch_lap_update_start")(_grid(st, st.n), (_cuda.BLOCK,),
                                         (st.owner, st.dist, np.int64(st.n), np.int64(lmax)))


def update_sweep(st, eps, lmax, par):
    ptr, ind, cost, dn = _csr(st)
    _k(st, "gpumatch_lap_update_sweep")(
        _grid(st, st.m * st.group), (_cuda.BLOCK,),
        (ptr, ind, cost, dn, st.v, st.x, st.cx, _c(st, st.cmin), np.int64(st.scale), _c(st, eps), st.dist,
         st.counts, np.int64(st.m), np.int64(st.n), np.int64(lmax), np.int32(par), np.int32(st.group)))


def update_apply(st, eps, par):
    _k(st, "gpumatch_lap_update_apply")(_grid(st, st.n), (_cuda.BLOCK,),
                                         (st.v, st.dist, _c(st, eps), np.int64(st.n), np.int32(par)))


def batch_shared_bytes(n: int) -> int:
    """Dynamic shared memory of ``gpumatch_lap_batch_dense`` holding one
    problem's arrays of `n` rows and columns: ``52 n + 64`` bytes."""
    return 52 * int(n) + 64


def batch_dense(bt):
    """One launch: block ``b`` solves problem ``b`` (see ``auction.cu``).  Its
    arrays live in the block's shared memory where they fit in
    :data:`BATCH_SHARED_MAX` bytes (a round's reads and atomics then stay on
    the multiprocessor), else in global scratch."""
    cp = _backend.cp
    k, n = bt.k, bt.n
    dt = np.int64 if bt.kind == "i" else np.float64
    kern = _cuda.get_kernel(_SRC, "gpumatch_lap_batch_dense", kernel_defines(np.int32, bt.kind))
    block = BATCH_BLOCK[0] if n <= 128 else BATCH_BLOCK[1] if n <= 256 else BATCH_BLOCK[2]
    shared = batch_shared_bytes(n) if batch_shared_bytes(n) <= BATCH_SHARED_MAX else 0
    kw = k if not shared else 1      # the global scratch is not read when the arrays are shared
    work = dict(v=cp.empty((kw, n), dtype=dt), bid_delta=cp.empty((kw, n), dtype=dt),
                cx=cp.empty((kw, n), dtype=dt), x=cp.empty((kw, n), dtype=np.int32),
                owner=cp.empty((kw, n), dtype=np.int32), bidcols=cp.empty((kw, n), dtype=np.int32),
                lists=cp.empty((kw, 2, n), dtype=np.int32), keys=cp.empty((kw, n), dtype=np.uint64),
                counts=cp.empty((kw, 8), dtype=np.int64))
    kern((k,), (block,),
         (bt.C, bt.scale, bt.cmin, bt.base, bt.eps0, bt.big, bt.floor, work["v"], work["bid_delta"], work["cx"],
          work["x"], work["owner"], work["bidcols"], work["lists"], work["keys"], work["counts"], bt.x, bt.status,
          np.int64(n), np.int64(bt.schedule.cap), np.int64(bt.theta), np.int32(1 if shared else 0)),
         shared_mem=shared)
    bt.work = work

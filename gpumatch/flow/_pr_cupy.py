"""CuPy launchers of the push-relabel kernels in ``pr.cu``.

Same functions and meaning as :mod:`gpumatch.flow._pr_numpy`; only imported
after the backend resolved to ``"cupy"``.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda

_SRC = "flow/pr.cu"
_BLOCK = 256


class _Ctx:
    def __init__(self, L, layout, tile, cycles):
        cp = _backend.cp
        self.L = L
        self.layout = layout
        self.tile = int(tile)
        idx = L["indptr"].dtype if layout == "rcsr" else L["bptr"].dtype
        self.idt = np.dtype(idx)
        defines = (("IDX", "int" if self.idt == np.int32 else "long long"),
                   ("TILE", self.tile), ("CYCLES", int(cycles)))
        self.k_discharge = _cuda.get_kernel(_SRC, f"gpumatch_pr_discharge_{layout}", defines)
        self.k_bfs = _cuda.get_kernel(_SRC, f"gpumatch_pr_bfs_{layout}", defines)
        V = (L["indptr"] if layout == "rcsr" else L["bptr"]).shape[0] - 1
        self.V = V
        # Ping-pong output buffers: a call reads the previous call's output
        # and writes the other buffer, so no copy is needed.
        self.bufs = [cp.empty(max(V, 1), dtype=self.idt), cp.empty(max(V, 1), dtype=self.idt)]
        self.flip = 0
        self.count = cp.zeros(1, dtype=cp.uint64)
        self.stamp = cp.full(max(V, 1), -1, dtype=cp.int32)

    def grid(self, n):
        per_block = _BLOCK // self.tile
        return (max(1, (int(n) + per_block - 1) // per_block),)

    def arrays(self):
        L = self.L
        if self.layout == "rcsr":
            return (L["indptr"], L["indices"], L["cap"], L["flow"],
                    L["in_indptr"], L["in_indices"], L["in_to_out"])
        return (L["bptr"], L["bnbr"], L["resid"], L["partner"])

    def out_buffer(self):
        self.flip ^= 1
        return self.bufs[self.flip]

    def take(self, buf):
        n = int(self.count.get()[0])
        return buf[:n]


def prepare(L, layout, tile=32, cycles=8):
    """Compile (cached) and allocate the scratch arrays of one solve."""
    return _Ctx(L, layout, tile, cycles)


def discharge(ctx, st, work, it, target, other, hlimit):
    """One launch of the discharge kernel over `work`; returns the next worklist."""
    n = work.shape[0]
    if n == 0:
        return work
    ctx.count.fill(0)
    out = ctx.out_buffer()
    ctx.k_discharge(ctx.grid(n), (_BLOCK,),
                    ctx.arrays() + (st["height"], st["excess"], work.astype(ctx.idt, copy=False), np.int64(n),
                                    out, ctx.count, ctx.stamp, np.int32(it),
                                    np.int64(target), np.int64(other), np.int32(hlimit)))
    return ctx.take(out)


def bfs_level(ctx, st, frontier, level):
    """One BFS level of the global relabel; returns the next frontier."""
    n = frontier.shape[0]
    if n == 0:
        return frontier
    ctx.count.fill(0)
    out = ctx.out_buffer()
    L = ctx.L
    if ctx.layout == "rcsr":
        arrs = (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"])
    else:
        arrs = (L["bptr"], L["bnbr"], L["resid"], L["partner"])
    ctx.k_bfs(ctx.grid(n), (_BLOCK,),
              arrs + (st["height"], frontier.astype(ctx.idt, copy=False), np.int64(n),
                      out, ctx.count, np.int32(level)))
    return ctx.take(out)

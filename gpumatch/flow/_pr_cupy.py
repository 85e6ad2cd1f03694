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
        self.k_greedy = _cuda.get_kernel(_SRC, "gpumatch_pr_greedy_rcsr", defines) if layout == "rcsr" else None
        self.k_return = _cuda.get_kernel(_SRC, "gpumatch_pr_return_rcsr", defines) if layout == "rcsr" else None
        V = (L["indptr"] if layout == "rcsr" else L["bptr"]).shape[0] - 1
        self.V = V
        # Ping-pong list buffers (launch j reads bufs[j % 2], writes
        # bufs[(j + 1) % 2]) and three rotating device counters (launch j
        # reads cnt[j % 3], writes cnt[(j + 1) % 3], zeroes cnt[(j + 2) % 3]).
        self.bufs = [cp.empty(max(V, 1), dtype=self.idt), cp.empty(max(V, 1), dtype=self.idt)]
        self.cnt = cp.zeros(3, dtype=cp.uint64)
        self.cnt_ptrs = [self.cnt[i:i + 1] for i in range(3)]
        self.stamp = cp.full(max(V, 1), -1, dtype=cp.int32)
        dev = cp.cuda.Device()
        sms = int(dev.attributes["MultiProcessorCount"])
        # a persistent grid: the kernels stride over lists of any length
        self.max_blocks = max(1, sms * (2048 // _BLOCK))
        self.per_block = _BLOCK // self.tile

    def grid(self, n):
        return (max(1, min(self.max_blocks, (int(n) + self.per_block - 1) // self.per_block)),)

    def arrays(self):
        L = self.L
        if self.layout == "rcsr":
            return (L["indptr"], L["indices"], L["cap"], L["flow"],
                    L["in_indptr"], L["in_indices"], L["in_to_out"])
        return (L["bptr"], L["bnbr"], L["resid"], L["partner"])

    def load(self, work):
        """Put `work` in bufs[0] with its length in cnt[0]; zero cnt[1]."""
        n = int(work.shape[0])
        b0, b1 = self.bufs
        if n and work.data.ptr == b1.data.ptr:
            self.bufs = [b1, b0]
        elif n and work.data.ptr != b0.data.ptr:
            b0[:n] = work
        self.cnt.set(np.array([n, 0, 0], dtype=np.uint64))
        return n

    def run(self, kernel, n, k, args_of):
        """Queue `k` launches (launch j gets args_of(j, in, in_count, out, out_count, zero)); return the list."""
        # sized for the list seen now (it may grow: the kernels grid-stride)
        g = self.grid(max(4 * int(n), self.per_block * self.max_blocks // 4))
        for j in range(k):
            kernel(g, (_BLOCK,), args_of(j, self.bufs[j % 2], self.cnt_ptrs[j % 3], self.bufs[(j + 1) % 2],
                                         self.cnt_ptrs[(j + 1) % 3], self.cnt_ptrs[(j + 2) % 3]))
        m = int(self.cnt_ptrs[k % 3].get()[0])
        return self.bufs[k % 2][:m]


def prepare(L, layout, tile=32, cycles=8):
    """Compile (cached) and allocate the scratch arrays of one solve."""
    return _Ctx(L, layout, tile, cycles)


def discharge(ctx, st, work, it, target, other, hlimit, k=1):
    """Up to `k` launches of the discharge kernel, the first over `work`.

    Returns ``(next worklist, launches counted)``; launches after the list
    ran empty do nothing.  Launch ``j`` uses the stamp ``it + j``.
    """
    n = work.shape[0]
    if n == 0:
        return work, 0
    ctx.load(work)
    head = ctx.arrays()
    tail = (np.int64(target), np.int64(other), np.int32(hlimit))
    h, ex = st["height"], st["excess"]
    out = ctx.run(ctx.k_discharge, n, k,
                  lambda j, a, ac, b, bc, z: head + (h, ex, a, ac, b, bc, z, ctx.stamp, np.int32(it + j)) + tail)
    return out, k


def bfs_level(ctx, st, frontier, level, k=1):
    """Up to `k` BFS levels of the global relabel; returns ``(next frontier, levels counted)``."""
    n = frontier.shape[0]
    if n == 0:
        return frontier, 0
    ctx.load(frontier)
    head = ctx.arrays()
    h = st["height"]
    out = ctx.run(ctx.k_bfs, n, k, lambda j, a, ac, b, bc, z: head + (h, a, ac, b, bc, z, np.int32(level + j)))
    return out, k


def greedy(ctx, st, heads, sink_arc, source, sink):
    """Greedy start (reverse CSR): send the heads' excess to the sink along paths of one or two arcs."""
    n = int(heads.shape[0])
    if n == 0:
        return
    L = ctx.L
    heads = heads.astype(ctx.idt, copy=False)
    sink_arc = sink_arc.astype(ctx.idt, copy=False)
    ctx.k_greedy(((n + _BLOCK - 1) // _BLOCK,), (_BLOCK,),
                 (L["indptr"], L["indices"], L["cap"], L["flow"], heads, np.int64(n), sink_arc, st["excess"],
                  np.int64(source), np.int64(sink)))


def return_excess(ctx, st, xs, src_arc, source):
    """Quick return (reverse CSR): send the excess of `xs` back to the source along paths of one or two arcs."""
    n = int(xs.shape[0])
    if n == 0:
        return
    L = ctx.L
    xs = xs.astype(ctx.idt, copy=False)
    src_arc = src_arc.astype(ctx.idt, copy=False)
    ctx.k_return(((n + _BLOCK - 1) // _BLOCK,), (_BLOCK,),
                 (L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"], xs, np.int64(n), src_arc,
                  st["excess"], np.int64(source)))

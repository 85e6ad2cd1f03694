"""CuPy launchers of the push-relabel kernels in ``pr.cu``.

Same functions and meaning as :mod:`gpumatch.flow._pr_numpy`; only imported
after the backend resolved to ``"cupy"``.
"""

from __future__ import annotations

import numpy as np

from .. import _backend, _cuda, csr
from ._pr_numpy import bfs_levels

_SRC = "flow/pr.cu"
#: The cooperative kernels (one launch for every BFS level, or for many
#: discharge iterations) and the dynamic solver's excess walks live in files
#: of their own, so that a call compiles only the module it launches.
_SRC_COOP = "flow/pr_coop.cu"
_SRC_WALK = "flow/pr_walk.cu"
_BLOCK = 256


#: Threads of the block that discharges one hub vertex (``HUB_BLOCK`` of pr.cu).
HUB_BLOCK = 512
#: Slots of one hub segment of a BFS level (one block each).
HUB_SEG = 4096
#: Threads of that block.
BFS_LOOP_BLOCK = 1024
#: BFS levels queued between two read-backs while the persistent kernel is
#: in use (a frontier that shrinks goes back to it sooner).
BFS_MULTI_STEPS = 8
#: Threads of the block of the persistent discharge loop (its launch bound in pr.cu).
DISCHARGE_LOOP_BLOCK = 512
#: Threads per block of the cooperative BFS (``COOP_BFS_BLOCK`` of pr.cu).
BFS_COOP_BLOCK = 512
#: Blocks per multiprocessor of the cooperative BFS: one level costs a
#: grid-wide barrier, which grows with the blocks, while the frontiers of
#: the deep BFS it is for are short.
BFS_COOP_PER_SM = 1
#: Threads per block of the cooperative discharge (``COOP_DISCHARGE_BLOCK``
#: of pr.cu) and blocks per multiprocessor: 132 blocks of 64 tiles of 8
#: lanes on an H100 give every vertex of a list of 8 448 a tile at once.
DISCHARGE_COOP_BLOCK = 512
DISCHARGE_COOP_PER_SM = 1


def kernel_defines(idt, odt, tile, cycles) -> tuple:
    """The ``-D`` definitions of ``pr.cu`` and ``pr_coop.cu`` for one solve:
    vertex ids `idt` (``IDX``), arc positions `odt` (``OFF``), tuning."""
    return _cuda.index_defines(idt, odt) + (("TILE", int(tile)), ("CYCLES", int(cycles)), ("HUB_BLOCK", HUB_BLOCK))


def has_dropped(indptr, indices, cap, tile, cycles) -> bool:
    """Whether the network (canonical CSR, `indptr` and `indices` of one
    index dtype, int64 `cap`) has a self-loop or an arc of capacity <= 0:
    ``gpumatch_pr_has_dropped`` of the ``pr.cu`` module the solve loads
    (one pass, one read back)."""
    cp = _backend.cp
    V, nnz = int(indptr.shape[0]) - 1, int(indices.shape[0])
    if max(V, nnz) == 0:
        return False
    out = cp.zeros(1, dtype=cp.int32)
    kern = _cuda.get_kernel(_SRC, "gpumatch_pr_has_dropped", kernel_defines(indices.dtype, indptr.dtype, tile, cycles))
    kern(_strided(max(V, nnz)), (_BLOCK,), (indptr, indices, cap, np.int64(V), np.int64(nnz), out))
    return bool(int(out.get()[0]))


class _Ctx:
    def __init__(self, L, layout, tile, cycles, hub_degree=None, terminals=(), bfs_loop=0, discharge_loop=0,
                 bfs_coop=False, discharge_coop=0):
        cp = _backend.cp
        self.L = L
        self.layout = layout
        self.tile = int(tile)
        # vertex ids (lists, hubs) and arc positions (pointers, in_to_out, partner)
        self.idt = np.dtype((L["indices"] if layout == "rcsr" else L["bnbr"]).dtype)
        self.odt = np.dtype((L["indptr"] if layout == "rcsr" else L["bptr"]).dtype)
        defines = kernel_defines(self.idt, self.odt, self.tile, cycles)
        self.defines = defines
        self.k_discharge = _cuda.get_kernel(_SRC, f"gpumatch_pr_discharge_{layout}", defines)
        self.k_bfs = _cuda.get_kernel(_SRC, f"gpumatch_pr_bfs_{layout}", defines)
        self.k_greedy = _cuda.get_kernel(_SRC, "gpumatch_pr_greedy_rcsr", defines) if layout == "rcsr" else None
        self.k_return = _cuda.get_kernel(_SRC, "gpumatch_pr_return_rcsr", defines) if layout == "rcsr" else None
        self.k_unwind = None   # compiled with its buffers on first use (unwind)
        self.k_walk = None     # compiled on first use (walk)
        self.k_bfs_loop = None
        self.bfs_loop_max = int(bfs_loop or 0)
        if layout == "rcsr" and self.bfs_loop_max > 0:
            self.k_bfs_loop = _cuda.get_kernel(_SRC, "gpumatch_pr_bfs_loop_rcsr", defines)
            self.loop_state = cp.zeros(2, dtype=np.int64)
        self.k_discharge_loop = None
        self.discharge_loop_max = int(discharge_loop or 0)
        if layout == "rcsr" and self.discharge_loop_max > 0:
            self.k_discharge_loop = _cuda.get_kernel(_SRC, "gpumatch_pr_discharge_loop_rcsr", defines)
            self.dloop_state = cp.zeros(2, dtype=np.int64)
        V = (L["indptr"] if layout == "rcsr" else L["bptr"]).shape[0] - 1
        self.V = V
        # Ping-pong list buffers (launch j reads bufs[j % 2], writes
        # bufs[(j + 1) % 2]) and three rotating device counters (launch j
        # reads cnt[j % 3], writes cnt[(j + 1) % 3], zeroes cnt[(j + 2) % 3]).
        self.bufs = [cp.empty(max(V, 1), dtype=self.idt), cp.empty(max(V, 1), dtype=self.idt)]
        # (slots 3-5: the watch flags of the cooperative BFS)
        self.cnt = cp.zeros(6, dtype=cp.uint64)
        self.cnt_ptrs = [self.cnt[i:i + 1] for i in range(3)]
        self.stamp = cp.full(max(V, 1), -1, dtype=cp.int32)
        dev = cp.cuda.Device()
        sms = int(dev.attributes["MultiProcessorCount"])
        # a persistent grid: the kernels stride over lists of any length
        self.max_blocks = max(1, sms * (2048 // _BLOCK))
        self.per_block = _BLOCK // self.tile
        self._find_hubs(hub_degree, terminals, sms)
        self.k_bfs_coop = None
        if layout == "rcsr" and bfs_coop:
            k = _cuda.get_kernel(_SRC_COOP, "gpumatch_pr_bfs_coop_rcsr", defines, cooperative=True)
            self.coop_grid = _cuda.cooperative_grid(k, BFS_COOP_BLOCK, BFS_COOP_PER_SM)
            if self.coop_grid > 0:
                self.k_bfs_coop = k
                self.coop_state = cp.zeros(3, dtype=np.int64)
                self.i64_none = cp.zeros(1, dtype=np.int64)
        self.k_discharge_coop = None
        self.discharge_coop_max = int(discharge_coop or 0)
        if layout == "rcsr" and self.discharge_coop_max > 0 and (self.hubs is None or self.hubs.shape[0] == 0):
            # (a hub that can hold excess needs the block-per-hub kernel)
            k = _cuda.get_kernel(_SRC_COOP, "gpumatch_pr_discharge_coop_rcsr", defines, cooperative=True)
            self.dcoop_grid = _cuda.cooperative_grid(k, DISCHARGE_COOP_BLOCK, DISCHARGE_COOP_PER_SM)
            if self.dcoop_grid > 0:
                self.k_discharge_coop = k
                self.dcoop_state = cp.zeros(2, dtype=np.int64)
        self.coop_iterations = 0   # discharge iterations the cooperative kernel ran (a diagnostic)

    def _find_hubs(self, hub_degree, terminals, sms):
        """Vertices with more than `hub_degree` arcs, for the block-per-hub kernels (reverse CSR only)."""
        cp = _backend.cp
        self.hub_deg = np.int64(np.iinfo(np.int64).max)  # tile kernels skip nothing
        self.hubs = None
        if self.layout != "rcsr" or hub_degree is None or self.V == 0:
            return
        L = self.L
        hubs = hubs_of(L["indptr"], L["in_indptr"], hub_degree, self.idt)
        if hubs.shape[0] == 0:
            return
        hubs = cp.sort(hubs.astype(np.int64))
        deg = cp.diff(L["indptr"]).astype(np.int64) + cp.diff(L["in_indptr"]).astype(np.int64)
        self.hub_deg = np.int64(hub_degree)
        self.k_discharge_hub = _cuda.get_kernel(_SRC, "gpumatch_pr_discharge_hub_rcsr", self.defines)
        self.k_bfs_hub = _cuda.get_kernel(_SRC, "gpumatch_pr_bfs_hub_rcsr", self.defines)
        # BFS: every hub, terminals included, in segments of HUB_SEG slots
        nseg = (deg[hubs] + HUB_SEG - 1) // HUB_SEG
        ptr = cp.zeros(hubs.shape[0] + 1, dtype=np.int64)
        cp.cumsum(nseg, out=ptr[1:])
        owner = csr.segment_owner(ptr, int(ptr[-1]))
        self.seg_vertex = hubs[owner].astype(self.idt)
        self.seg_start = (cp.arange(owner.shape[0], dtype=np.int64) - ptr[owner]) * HUB_SEG
        # discharge: the hubs that can be active (terminals never are)
        keep = cp.ones(hubs.shape[0], dtype=bool)
        for t in terminals:
            keep &= hubs != int(t)
        self.hubs = hubs[keep].astype(self.idt)
        self.hub_grid = (max(1, min(int(self.hubs.shape[0]), sms * (2048 // HUB_BLOCK))),)
        self.seg_grid = (max(1, min(int(owner.shape[0]), self.max_blocks)),)

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
        self.cnt.set(np.array([n, 0, 0, 0, 0, 0], dtype=np.uint64))
        return n

    def run(self, kernel, n, k, args_of, pre=None):
        """Queue `k` launches (launch j gets args_of(j, in, in_count, out, out_count, zero)); return the list.

        `pre`, if given, is ``(kernel, grid, block, pre_args_of)``: a launch
        queued before each of them with ``pre_args_of(j, out, out_count)``.
        """
        # sized for the list seen now (it may grow: the kernels grid-stride)
        g = self.grid(max(4 * int(n), self.per_block * self.max_blocks // 4))
        for j in range(k):
            out, out_count = self.bufs[(j + 1) % 2], self.cnt_ptrs[(j + 1) % 3]
            if pre is not None:
                pre[0](pre[1], pre[2], pre[3](j, out, out_count))
            kernel(g, (_BLOCK,), args_of(j, self.bufs[j % 2], self.cnt_ptrs[j % 3], out, out_count,
                                         self.cnt_ptrs[(j + 2) % 3]))
        m = int(self.cnt_ptrs[k % 3].get()[0])
        return self.bufs[k % 2][:m]


def prepare(L, layout, tile=32, cycles=8, hub_degree=None, terminals=(), bfs_loop=0, discharge_loop=0,
            bfs_coop=False, discharge_coop=0):
    """Compile (cached) and allocate the scratch arrays of one solve.

    Vertices with more than `hub_degree` arcs (reverse CSR; None: none) are
    discharged by a whole block and scanned in segments by the BFS;
    `terminals` (source and sink) are never discharged.  BFS frontiers of at
    most `bfs_loop` vertices run in the persistent one-block kernel
    (reverse CSR; 0: never), and so do discharge iterations over worklists
    of at most `discharge_loop` vertices.  With `bfs_coop` (reverse CSR, a
    device that launches cooperatively), :func:`bfs_run` runs all the
    levels of a BFS in one cooperative launch; with `discharge_coop`
    (the same, and no hub but the terminals) :func:`discharge` runs the
    iterations over lists of at most that many vertices in one, and the
    one-block loop only serves where that kernel cannot be used.
    """
    return _Ctx(L, layout, tile, cycles, hub_degree, terminals, bfs_loop, discharge_loop, bfs_coop, discharge_coop)


def discharge(ctx, st, work, it, target, other, hlimit, k=1):
    """Up to `k` launches of the discharge kernel, the first over `work`.

    Returns ``(next worklist, launches counted)``; launches after the list
    ran empty do nothing.  Launch ``j`` uses the stamp ``it + j``.  A list
    of at most ``ctx.discharge_coop_max`` vertices runs its iterations in
    one cooperative launch over the whole GPU instead (until it grows past
    that or `k` iterations ran; the count returned is then the iterations
    run), and where that kernel is not in use (``ctx.k_discharge_coop``
    None) a list of at most ``ctx.discharge_loop_max`` vertices runs them in
    one persistent block (until it grows past that, meets a hub or `k`
    iterations ran).
    """
    n = work.shape[0]
    if n == 0:
        return work, 0
    ctx.load(work)
    head = ctx.arrays()
    tail = (np.int64(target), np.int64(other), np.int32(hlimit))
    h, ex = st["height"], st["excess"]
    if ctx.k_discharge_coop is not None and n <= ctx.discharge_coop_max:
        ctx.k_discharge_coop((ctx.dcoop_grid,), (DISCHARGE_COOP_BLOCK,),
                             head + (h, ex, ctx.bufs[0], ctx.bufs[1], ctx.cnt, ctx.stamp, np.int32(it)) + tail
                             + (ctx.hub_deg, np.int64(ctx.discharge_coop_max), np.int64(k), ctx.dcoop_state))
        j, size = (int(x) for x in ctx.dcoop_state.get())
        ctx.coop_iterations += j
        return ctx.bufs[j % 2][:size], j
    if ctx.k_discharge_loop is not None and n <= ctx.discharge_loop_max:
        ctx.k_discharge_loop((1,), (DISCHARGE_LOOP_BLOCK,),
                             head + (h, ex, ctx.bufs[0], ctx.bufs[1], ctx.cnt, ctx.stamp, np.int32(it)) + tail
                             + (ctx.hub_deg, np.int64(ctx.discharge_loop_max), np.int64(k), ctx.dloop_state))
        j, size = (int(x) for x in ctx.dloop_state.get())
        if j > 0:
            return ctx.bufs[j % 2][:size], j
        # the first list holds a hub: multi-block launches
    pre = None
    if ctx.hubs is not None and ctx.hubs.shape[0]:
        hubs, nh = ctx.hubs, np.int64(ctx.hubs.shape[0])
        pre = (ctx.k_discharge_hub, ctx.hub_grid, (HUB_BLOCK,),
               lambda j, b, bc: head + (h, ex, hubs, nh, b, bc, ctx.stamp, np.int32(it + j)) + tail)
    if ctx.layout == "rcsr":
        tail = tail + (ctx.hub_deg,)
    out = ctx.run(ctx.k_discharge, n, k,
                  lambda j, a, ac, b, bc, z: head + (h, ex, a, ac, b, bc, z, ctx.stamp, np.int32(it + j)) + tail,
                  pre)
    return out, k


def bfs_level(ctx, st, frontier, level, k=1):
    """Up to `k` BFS levels of the global relabel; returns ``(next frontier, levels counted)``."""
    n = frontier.shape[0]
    if n == 0:
        return frontier, 0
    ctx.load(frontier)
    head = ctx.arrays()
    h = st["height"]
    if ctx.k_bfs_loop is not None:
        if n <= ctx.bfs_loop_max:
            # small frontier: levels in one block until it grows (or meets a hub)
            ctx.k_bfs_loop((1,), (BFS_LOOP_BLOCK,),
                           head + (h, ctx.bufs[0], ctx.bufs[1], ctx.cnt, np.int32(level), np.int64(ctx.bfs_loop_max),
                                   np.int64(1 << 40), ctx.hub_deg, ctx.loop_state))
            j, size = (int(x) for x in ctx.loop_state.get())
            if j > 0:
                return ctx.bufs[j % 2][:size], j
            # the first level holds a hub: one multi-block level
            k = 1
        else:
            k = min(k, BFS_MULTI_STEPS)
    pre = None
    if ctx.hubs is not None:
        sv, ss, ns = ctx.seg_vertex, ctx.seg_start, np.int64(ctx.seg_vertex.shape[0])
        pre = (ctx.k_bfs_hub, ctx.seg_grid, (_BLOCK,),
               lambda j, b, bc: head + (h, sv, ss, ns, np.int64(HUB_SEG), b, bc, np.int32(level + j)))
    if ctx.layout == "rcsr":
        out = ctx.run(ctx.k_bfs, n, k, lambda j, a, ac, b, bc, z: head + (h, a, ac, b, bc, z, np.int32(level + j),
                                                                          ctx.hub_deg), pre)
    else:
        out = ctx.run(ctx.k_bfs, n, k, lambda j, a, ac, b, bc, z: head + (h, a, ac, b, bc, z, np.int32(level + j)))
    return out, k


def bfs_run(ctx, st, frontier, level, watch=None, k=1, max_levels=None):
    """BFS levels from `frontier` (height `level`) until the frontier is
    empty or, with `watch` (vertex ids), every watched vertex has a height;
    returns ``(frontier left, levels run, stopped by the watch)``.

    With the cooperative kernel, one launch and one read-back (the stop may
    come one level after the NumPy twin's, see ``gpumatch_pr_bfs_coop_rcsr``);
    otherwise :func:`bfs_level` calls of up to `k` levels, with the watch
    read back after each.  With `max_levels`, at most that many levels.
    """
    n = frontier.shape[0]
    if n == 0:
        return frontier, 0, False
    if ctx.k_bfs_coop is None:
        return bfs_levels(bfs_level, ctx, st, frontier, level, watch, k, max_levels)
    ctx.load(frontier)
    nw = 0 if watch is None else int(watch.shape[0])
    w = watch.astype(ctx.idt, copy=False) if nw else ctx.bufs[1]
    if ctx.hubs is not None:      # (as in bfs_level: the segments exist)
        sv, ss, ns = ctx.seg_vertex, ctx.seg_start, np.int64(ctx.seg_vertex.shape[0])
    else:
        sv, ss, ns = ctx.bufs[1], ctx.i64_none, np.int64(0)
    ctx.k_bfs_coop((ctx.coop_grid,), (BFS_COOP_BLOCK,),
                   ctx.arrays() + (st["height"], ctx.bufs[0], ctx.bufs[1], ctx.cnt, np.int32(level),
                                   np.int64(1 << 40 if max_levels is None else max(1, int(max_levels))), sv, ss, ns,
                                   np.int64(HUB_SEG), ctx.hub_deg, w, np.int64(nw), ctx.coop_state))
    j, size, stopped = (int(x) for x in ctx.coop_state.get())
    return ctx.bufs[j % 2][:size], j, bool(stopped)


def greedy(ctx, st, heads, sink_arc, source, sink):
    """Greedy start (reverse CSR): send the heads' excess to the sink along paths of one or two arcs."""
    n = int(heads.shape[0])
    if n == 0:
        return
    L = ctx.L
    heads = heads.astype(ctx.idt, copy=False)
    sink_arc = sink_arc.astype(ctx.odt, copy=False)
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
    src_arc = src_arc.astype(ctx.odt, copy=False)
    ctx.k_return(((n + _BLOCK - 1) // _BLOCK,), (_BLOCK,),
                 (L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"], xs, np.int64(n), src_arc,
                  st["excess"], np.int64(source)))


#: Threads per block of the walk kernel (a warp per carrier).
WALK_BLOCK = 256


def walk(ctx, st, work, target, other, max_steps):
    """Carry the excess of each vertex of `work` down one path of admissible
    arcs (reverse CSR, one launch, nothing read back); see
    ``gpumatch_pr_walk_rcsr``.  Returns None (the rounds are not counted)."""
    n = int(work.shape[0])
    if n == 0:
        return None
    if ctx.k_walk is None:
        ctx.k_walk = _cuda.get_kernel(_SRC_WALK, "gpumatch_pr_walk_rcsr", ctx.defines)
    warps = WALK_BLOCK // 32
    grid = (max(1, min(ctx.max_blocks, (n + warps - 1) // warps)),)
    L = ctx.L
    ctx.k_walk(grid, (WALK_BLOCK,),
               (L["indptr"], L["indices"], L["cap"], L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"],
                st["height"], st["excess"], work.astype(ctx.idt, copy=False), np.int64(n), np.int64(target),
                np.int64(other), np.int32(min(int(max_steps), 2 ** 31 - 1))))
    return None


#: Threads of the one block of ``gpumatch_pr_unwind_rcsr``.
UNWIND_BLOCK = 1024


def unwind(ctx, st, xs, source, other, max_rounds):
    """Send the excess of `xs` back to `source` along the arcs that brought it (reverse CSR).

    Returns ``(rounds run, vertices still listed)``; see
    ``gpumatch_pr_unwind_rcsr``.  One launch and one read-back.
    """
    cp = _backend.cp
    n = int(xs.shape[0])
    if n == 0:
        return 0, 0
    L = ctx.L
    if ctx.k_unwind is None:
        ctx.k_unwind = _cuda.get_kernel(_SRC_WALK, "gpumatch_pr_unwind_rcsr", ctx.defines)
        ctx.unwind_bufs = (cp.empty(max(ctx.V, 1), dtype=ctx.idt), cp.empty(max(ctx.V, 1), dtype=ctx.idt))
        ctx.unwind_cnt = cp.zeros(2, dtype=cp.uint64)
        ctx.unwind_state = cp.zeros(2, dtype=np.int64)
        ctx.unwind_seen = cp.zeros(max(ctx.V, 1), dtype=np.int32)
        ctx.unwind_mark = 0
    ctx.unwind_mark += 1
    if ctx.unwind_mark >= 1 << 30:
        ctx.unwind_seen.fill(0)
        ctx.unwind_mark = 1
    b0, b1 = ctx.unwind_bufs
    b0[:n] = xs
    ctx.unwind_cnt[:1] = n
    ctx.k_unwind((1,), (UNWIND_BLOCK,),
                 (L["flow"], L["in_indptr"], L["in_indices"], L["in_to_out"], b0, b1, ctx.unwind_cnt, st["excess"],
                  np.int64(source), np.int64(other), np.int64(max_rounds), ctx.unwind_seen,
                  np.int32(ctx.unwind_mark), ctx.unwind_state))
    r, left = (int(v) for v in ctx.unwind_state.get())
    return r, left


# ---------------------------------------------------------------------------
# set-up and output (pr_setup.cu): one kernel where CuPy would compile several
# ---------------------------------------------------------------------------

_SRC_SETUP = "flow/pr_setup.cu"


def _setup(name, idt, odt=None):
    """A kernel of ``pr_setup.cu`` for vertex ids `idt` and arc positions
    `odt` (None: `idt`, for the kernels that read no arc position)."""
    return _cuda.get_kernel(_SRC_SETUP, name, _cuda.index_defines(idt, odt))


def _strided(n):
    return (max(1, min((int(n) + _BLOCK - 1) // _BLOCK, 4096)),)


def source_capacity(indices, cap, ps, pe) -> int:
    """Exact total of ``cap[ps:pe]`` (non-negative int64) as a Python int."""
    cp = _backend.cp
    if pe <= ps:
        return 0
    out = cp.zeros(2, dtype=cp.uint64)
    _setup("gpumatch_pr_sum_split", indices.dtype)(_strided(pe - ps), (_BLOCK,),
                                                   (cap, np.int64(ps), np.int64(pe), out))
    hi, lo = (int(x) for x in out.get())
    return (hi << 32) + lo


def saturate_source(L, st, ps, pe):
    """The initial preflow: every arc out of the source, ``ps:pe``, full (reverse CSR)."""
    if pe > ps:
        _setup("gpumatch_pr_saturate", L["indices"].dtype, L["indptr"].dtype)(
            _cuda.grid_for(pe - ps), (_BLOCK,), (L["indices"], L["cap"], L["flow"], st["excess"], np.int64(ps),
                                                 np.int64(pe)))


def init_heights(st, idt, target, other, hlimit):
    """Labels before a global relabel: 0 at `target`, `hlimit` at `other`, -1 elsewhere."""
    h = st["height"]
    _setup("gpumatch_pr_heights_init", idt)(_strided(h.shape[0]), (_BLOCK,),
                                            (h, np.int64(h.shape[0]), np.int64(target), np.int64(other),
                                             np.int32(hlimit)))


def finish_heights(st, idt, hlimit):
    """Vertices the relabel's BFS did not reach (-1) get `hlimit`."""
    h = st["height"]
    _setup("gpumatch_pr_heights_finish", idt)(_strided(h.shape[0]), (_BLOCK,),
                                              (h, np.int64(h.shape[0]), np.int32(hlimit)))


#: Threads per block of the worklist kernels (``ACTIVE_BLOCK`` of pr_setup.cu)
#: and their most blocks (the write kernel's blocks each sum the counts of
#: those before them).
ACTIVE_BLOCK = 256
ACTIVE_MAX_BLOCKS = 2048


def active(st, idt, target, hlimit, skip=-1):
    """Vertices with excess below `hlimit`, `target` and `skip` excepted (ascending)."""
    cp = _backend.cp
    V = int(st["excess"].shape[0])
    if V == 0:
        return cp.zeros(0, dtype=idt)
    items = -(-V // (ACTIVE_BLOCK * ACTIVE_MAX_BLOCKS))
    blocks = -(-V // (ACTIVE_BLOCK * items))
    counts = cp.empty(blocks, dtype=cp.uint32)
    out = cp.empty(V, dtype=idt)
    total = cp.empty(1, dtype=cp.uint64)
    args = (st["excess"], st["height"], np.int64(V), np.int64(target), np.int64(skip), np.int32(hlimit),
            np.int64(items))
    _setup("gpumatch_pr_active_count", idt)((blocks,), (ACTIVE_BLOCK,), args + (counts,))
    _setup("gpumatch_pr_active_write", idt)((blocks,), (ACTIVE_BLOCK,), args + (counts, out, total))
    return out[:int(total.get()[0])]


def hubs_of(indptr, in_indptr, hub_degree, idt=None):
    """Vertices with more than `hub_degree` arcs, out and in (in no
    particular order), in dtype `idt` (None: the pointers')."""
    cp = _backend.cp
    V = int(indptr.shape[0]) - 1
    idt = np.dtype(indptr.dtype if idt is None else idt)
    out = cp.empty(max(V, 1), dtype=idt)
    count = cp.zeros(1, dtype=cp.uint64)
    _setup("gpumatch_pr_hubs", idt, indptr.dtype)(_strided(V), (_BLOCK,),
                                             (indptr, in_indptr, np.int64(V), np.int64(hub_degree), out, count))
    return out[:int(count.get()[0])]


def pair_index(indptr, indices, V):
    """``(partner, pairs, paired)``: for each arc of a canonical CSR the
    position of its anti-parallel arc (itself for a self-loop, -1 if none),
    the number of anti-parallel pairs and of arcs with a partner."""
    cp = _backend.cp
    E = int(indices.shape[0])
    partner = cp.empty(max(E, 1), dtype=indptr.dtype)[:E]     # arc positions: the offset width
    count = cp.zeros(2, dtype=cp.uint64)
    if E:
        _setup("gpumatch_pr_pair_index", indices.dtype, indptr.dtype)(_strided(E), (_BLOCK,),
                                                        (indptr, indices, np.int64(V), np.int64(E), partner, count))
    pairs, paired = (int(x) for x in count.get())
    return partner, pairs, paired


def pair_share(flow, partner):
    """``(mass, paired)``: all flow, and the flow round anti-parallel pairs
    (the smaller of a pair's two flows, summed; floats)."""
    cp = _backend.cp
    E = int(flow.shape[0])
    out = cp.zeros(2, dtype=cp.float64)
    if E:
        _setup("gpumatch_pr_pair_share", np.int32, partner.dtype)(_strided(E), (_BLOCK,),
                                                                   (flow, partner, np.int64(E), out))
    mass, paired = (float(x) for x in out.get())
    return mass, paired


def flow_matrix(indptr, indices, arc_flow, V):
    """CSR ``(indptr, indices, data)`` of the skew-symmetric flow matrix
    ``F - F^T`` of a canonical network with flow `arc_flow` per arc (sorted
    rows; a pair of anti-parallel arcs shares one entry each way)."""
    cp = _backend.cp
    E = int(indices.shape[0])
    idt, odt = np.dtype(indices.dtype), np.dtype(indptr.dtype)   # vertex ids, arc positions
    if E == 0:
        return cp.zeros(V + 1, dtype=odt), cp.zeros(0, dtype=idt), cp.zeros(0, dtype=np.int64)
    partner, _, paired = pair_index(indptr, indices, V)
    keys = cp.empty(2 * E, dtype=np.int64)
    vals = cp.empty(2 * E, dtype=np.int64)
    arc_flow = arc_flow.astype(np.int64, copy=False)
    _setup("gpumatch_pr_flow_keys", idt, odt)(_strided(E), (_BLOCK,),
                                              (indptr, indices, arc_flow, partner, np.int64(V), np.int64(E), keys,
                                               vals))
    order = cp.argsort(keys)
    n = 2 * E - paired          # every arc once, and the reverse of each arc without a partner
    if n > np.iinfo(odt).max:
        odt = np.dtype(np.int64)
    out_ptr = cp.empty(V + 1, dtype=odt)
    cols = cp.empty(n, dtype=idt)
    data = cp.empty(n, dtype=np.int64)
    _setup("gpumatch_pr_flow_csr", idt, odt)(_cuda.grid_for(n), (_BLOCK,),
                                        (keys, vals, order, np.int64(V), np.int64(n), out_ptr, cols, data))
    return out_ptr, cols, data

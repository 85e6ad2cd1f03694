// CUDA kernels of gpumatch's push-relabel maximum flow.  The NumPy twins
// (one legal schedule of each racy kernel: all reads, then all writes) are in
// gpumatch/flow/_pr_numpy.py; the host driver shared by both is in
// gpumatch/flow/_maxflow.py.
//
// Design after ECL-MaxFlow (VanAusdal & Burtscher 2025) and WBPR (Hsieh et
// al. 2024): a TILE of lanes (a warp or a part of one) works on one active
// vertex, pushes its excess down all arcs to lower neighbours at once
// (multi-push, shares by a tile prefix sum) and relabels from a tile minimum
// when excess is left; hub vertices of R-MAT graphs would otherwise push one
// unit per full neighbour scan and never finish.  Races follow Hong's lock-free
// push-relabel (Hong 2008): a residual capacity is only decreased by the
// arc's tail thread and only increased by the other endpoint, and an excess
// is only decreased by its own vertex, so every value a thread reads is a
// lower bound of what it may use.
//
// Two layouts:
//   reverse CSR ("rcsr"): out-arcs (indptr/indices/cap/flow) plus an
//     incoming-arc index (in_indptr/in_indices/in_to_out); only the forward
//     arc's flow is stored, so a push is one 64-bit atomic on flow.
//   bidirectional CSR ("bcsr"): per vertex one merged, sorted list of
//     neighbours (out- and in-arcs, anti-parallel arcs merged) with a
//     residual capacity per entry and the index of the partner entry; a push
//     is two atomics (resid[e] -= d, resid[partner[e]] += d).
//
// Heights are int; the key of a candidate arc is (height << 32) | local slot,
// so one 64-bit tile minimum picks the lowest neighbour, ties to the first
// slot (out-arcs before in-arcs in rcsr), exactly as the NumPy twin does.

#ifndef TILE
#define TILE 32
#endif
#ifndef CYCLES
#define CYCLES 8
#endif

#define KEY_INF 0xffffffffffffffffull

__device__ __forceinline__ unsigned tile_mask()
{
#if TILE == 32
    return GPUMATCH_FULL_MASK;
#else
    unsigned base = (threadIdx.x & 31u) & ~(unsigned)(TILE - 1);
    return ((1u << TILE) - 1u) << base;
#endif
}

// The relabel of push-relabel from the lowest key (height << 32 | slot)
// among a vertex's residual arcs: one above that neighbour, capped at
// hlimit; hlimit when no residual arc is left (the vertex can never send
// its excess on).
__device__ __forceinline__ int relabel_height(u64 best, int hlimit)
{
    const int hmin = (int)(best >> 32);
    return best == KEY_INF ? hlimit : (hmin + 1 < hlimit ? hmin + 1 : hlimit);
}

__device__ __forceinline__ u64 tile_min(u64 v, unsigned mask)
{
#pragma unroll
    for (int off = TILE / 2; off > 0; off >>= 1) {
        u64 o = __shfl_xor_sync(mask, v, off, TILE);
        v = o < v ? o : v;
    }
    return v;
}

// Append v to the next worklist unless it is already there in this
// iteration (stamp[v] == iter).  The caller checks terminals and heights.
__device__ __forceinline__ void enqueue(idx_t v, int* stamp, int iter, idx_t* next,
                                        unsigned long long* next_count)
{
    if (atomicExch(stamp + v, iter) != iter) {
        next[gm_append(next_count)] = v;
    }
}

__device__ __forceinline__ i64 sat_add(i64 a, i64 b)
{
    // both non-negative: saturate at INT64_MAX instead of wrapping
    return a > 0x7fffffffffffffffll - b ? 0x7fffffffffffffffll : a + b;
}

// Multi-push claim of one chunk of TILE arcs: lane i wants to push `want`
// (>= 0) units; the tile hands out the excess `rem` (uniform) in lane order
// (an exclusive prefix sum) and returns this lane's share; `rem` is reduced
// by the total handed out.  The NumPy twin hands out in the same slot order.
__device__ __forceinline__ i64 tile_claim(i64 want, i64& rem, int lane, unsigned mask)
{
    if (!__any_sync(mask, want > 0)) return 0;
    want = want < rem ? want : rem;
    i64 incl = want;
#pragma unroll
    for (int off = 1; off < TILE; off <<= 1) {
        i64 o = __shfl_up_sync(mask, incl, off, TILE);
        if (lane >= off) incl = sat_add(incl, o);
    }
    i64 excl = __shfl_up_sync(mask, incl, 1, TILE);
    if (lane == 0) excl = 0;
    i64 d = rem - excl;
    d = d < 0 ? 0 : (d < want ? d : want);
    const i64 tot = __shfl_sync(mask, incl, TILE - 1, TILE);
    rem = tot >= rem ? 0 : rem - tot;
    return d;
}

// Worklist bookkeeping shared by the kernels: the list length is read from
// the device (`work_count`), so the host can queue many launches and read a
// count back only now and then; a launch on an empty list does nothing.
// Block 0 zeroes `zero_count`, the counter the *next* launch writes (three
// counters rotate: read, written, zeroed for the next launch).

// The push half of one discharge cycle of u (reverse CSR), shared by the
// tile kernels (TILE lanes, shares granted by tile_claim) and the hub kernel
// (a block, shares granted by block_claim): `width` threads scan u's
// residual arcs, out-arcs then in-arcs, from offset `slot`; each pushes the
// share `claim(want, rem)` grants along an admissible arc (head one level
// below `hu`) and enqueues the head.  `rem` is u's excess still to send.
// Returns the thread's lowest key (height << 32 | arc slot) among the arcs
// left with residual capacity, for the relabel.
// EAGER: each thread loads its arc's head and the head's height at once,
// beside the residual (for an in-arc, beside the out-position), instead
// of after it: one dependent global load less per chunk of out-arcs and
// two less per chunk of in-arcs, for reads of arcs without residual that
// are wasted.  The short-list kernels (one vertex's discharge latency is
// their iteration time) take it; the kernels over long lists, where
// bandwidth counts, do not.  The values read and the pushes made are the
// same.
struct ArcRead {
    i64 r;      // residual capacity (0: none, or past the end)
    int hv;     // height of the head
    idx_t v;    // head
    ofs_t k;    // out-position of the arc (in-arcs)
};

template <bool EAGER>
__device__ __forceinline__ ArcRead read_out_arc(ofs_t p, ofs_t oe, const idx_t* __restrict__ indices,
                                                const i64* __restrict__ cap, const i64* flow, const int* height)
{
    ArcRead a = {0, 0, 0, 0};
    if (p < oe) {
        if (EAGER) {
            a.v = indices[p];
            a.r = cap[p] - __ldcg(flow + p);
            a.hv = __ldcg(height + a.v);
        } else {
            a.r = cap[p] - __ldcg(flow + p);
            if (a.r > 0) { a.v = indices[p]; a.hv = __ldcg(height + a.v); }
        }
    }
    return a;
}

template <bool EAGER>
__device__ __forceinline__ ArcRead read_in_arc(ofs_t j, ofs_t ie, const idx_t* __restrict__ in_indices,
                                               const ofs_t* __restrict__ in_to_out, const i64* flow,
                                               const int* height)
{
    ArcRead a = {0, 0, 0, 0};
    if (j < ie) {
        a.k = in_to_out[j];
        if (EAGER) {
            a.v = in_indices[j];
            a.r = __ldcg(flow + a.k);
            a.hv = __ldcg(height + a.v);
        } else {
            a.r = __ldcg(flow + a.k);
            if (a.r > 0) { a.v = in_indices[j]; a.hv = __ldcg(height + a.v); }
        }
    }
    return a;
}

template <bool EAGER = false, typename Claim>
__device__ __forceinline__ u64 push_admissible(
    ofs_t ob, ofs_t oe, ofs_t ib, ofs_t ie, int hu, i64& rem, int slot, int width, Claim claim,
    const idx_t* __restrict__ indices, const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indices, const ofs_t* __restrict__ in_to_out,
    int* height, i64* excess, idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    const ofs_t odeg = oe - ob;
    u64 best = KEY_INF;
    for (ofs_t base = ob; base < oe && rem > 0; base += width) {
        const ofs_t p = base + slot;
        const ArcRead a = read_out_arc<EAGER>(p, oe, indices, cap, flow, height);
        const i64 d = claim(a.r > 0 && a.hv < hu ? a.r : 0, rem);
        if (d > 0) {
            gm_add(flow + p, d);
            gm_add(excess + a.v, d);
            if (a.v != target && a.v != other && a.hv < hlimit) enqueue(a.v, stamp, iter, next, next_count);
        }
        if (a.r - d > 0) {
            u64 key = ((u64)(unsigned)a.hv << 32) | (u64)(p - ob);
            best = key < best ? key : best;
        }
    }
    for (ofs_t base = ib; base < ie && rem > 0; base += width) {
        const ofs_t j = base + slot;
        const ArcRead a = read_in_arc<EAGER>(j, ie, in_indices, in_to_out, flow, height);
        const i64 d = claim(a.r > 0 && a.hv < hu ? a.r : 0, rem);
        if (d > 0) {
            gm_add(flow + a.k, -d);
            gm_add(excess + a.v, d);
            if (a.v != target && a.v != other && a.hv < hlimit) enqueue(a.v, stamp, iter, next, next_count);
        }
        if (a.r - d > 0) {
            u64 key = ((u64)(unsigned)a.hv << 32) | (u64)(odeg + (j - ib));
            best = key < best ? key : best;
        }
    }
    return best;
}

// One tile's discharge of the non-hub vertex u (reverse CSR): the body of
// gpumatch_pr_discharge_rcsr.  Arguments as in that kernel.
__device__ __forceinline__ void discharge_vertex_rcsr(
    idx_t u, int lane, unsigned mask,
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
    int* height, i64* excess, idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    const ofs_t ob = indptr[u], oe = indptr[u + 1];
    const ofs_t ib = in_indptr[u], ie = in_indptr[u + 1];
    for (int c = 0; c < CYCLES; ++c) {
        i64 e = 0;
        int hu = 0;
        if (lane == 0) { e = __ldcg(excess + u); hu = __ldcg(height + u); }
        e = __shfl_sync(mask, e, 0, TILE);
        hu = __shfl_sync(mask, hu, 0, TILE);
        if (e <= 0 || hu >= hlimit) break;
        i64 rem = e;
        u64 best = push_admissible(
            ob, oe, ib, ie, hu, rem, lane, TILE, [&](i64 want, i64& left) { return tile_claim(want, left, lane, mask); },
            indices, cap, flow, in_indices, in_to_out, height, excess, next, next_count, stamp, iter, target, other,
            hlimit);
        if (lane == 0 && rem < e) gm_add(excess + u, rem - e);
        if (rem == 0) { __syncwarp(mask); continue; }
        best = tile_min(best, mask);
        if (lane == 0) height[u] = relabel_height(best, hlimit);
        __syncwarp(mask);
        if (best == KEY_INF) break;
    }
    if (lane == 0 && __ldcg(excess + u) > 0 && __ldcg(height + u) < hlimit)
        enqueue(u, stamp, iter, next, next_count);
}

// The same discharge for the short-list kernels (the cooperative one and
// the one-block loop), whose iteration lasts as long as the slowest
// vertex's chain of dependent loads: the arcs are read EAGER (see
// push_admissible), u's excess and height once, beside its arc pointers,
// and then carried from operation to operation (the excess left, the new
// height) instead of read again, and the tile returns as soon as u has
// nothing left to do, without reading its excess once more for its own
// enqueue.  Excess pushed to u meanwhile waits for the next iteration: its
// pushers enqueue u.  That is a legal schedule of the racy iteration (those
// pushes land after u's reads), as the NumPy twin's is (one operation,
// every read before every write).
__device__ __forceinline__ void discharge_vertex_short_rcsr(
    idx_t u, int lane, unsigned mask,
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
    int* height, i64* excess, idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    i64 e = 0;
    int hu = 0;
    if (lane == 0) { e = __ldcg(excess + u); hu = __ldcg(height + u); }
    const ofs_t ob = indptr[u], oe = indptr[u + 1];
    const ofs_t ib = in_indptr[u], ie = in_indptr[u + 1];
    e = __shfl_sync(mask, e, 0, TILE);
    hu = __shfl_sync(mask, hu, 0, TILE);
    for (int c = 0; c < CYCLES; ++c) {
        if (e <= 0 || hu >= hlimit) return;
        i64 rem = e;
        u64 best = push_admissible<true>(
            ob, oe, ib, ie, hu, rem, lane, TILE, [&](i64 want, i64& left) { return tile_claim(want, left, lane, mask); },
            indices, cap, flow, in_indices, in_to_out, height, excess, next, next_count, stamp, iter, target, other,
            hlimit);
        if (lane == 0 && rem < e) gm_add(excess + u, rem - e);
        if (rem == 0) return;          // (rem is the same in every lane of the tile)
        best = tile_min(best, mask);
        hu = relabel_height(best, hlimit);
        if (lane == 0) height[u] = hu;
        e = rem;
    }
    // every operation ran and u still holds excess below hlimit
    if (lane == 0) enqueue(u, stamp, iter, next, next_count);
}

// Whether a list holds a hub (more than hub_deg arcs, both directions), for
// every thread of the block (a barrier): the one-block loops below stop
// before such a list and leave it to the multi-block kernels.
__device__ __forceinline__ bool block_list_has_hub(
    const idx_t* list, unsigned long long size, const ofs_t* __restrict__ indptr,
    const ofs_t* __restrict__ in_indptr, long long hub_deg)
{
    bool hub = false;
    for (long long w = threadIdx.x; w < (long long)size; w += blockDim.x) {
        const idx_t x = list[w];
        hub |= (long long)(indptr[x + 1] - indptr[x]) + (long long)(in_indptr[x + 1] - in_indptr[x]) > hub_deg;
    }
    return __syncthreads_or(hub);
}

// The parameters of the two persistent discharge kernels, which take the
// same arguments from the same launcher (_pr_cupy.discharge).
#define PR_DISCHARGE_ITERS_PARAMS \
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices, \
    const i64* __restrict__ cap, i64* flow, \
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices, \
    const ofs_t* __restrict__ in_to_out, \
    int* height, i64* excess, idx_t* buf0, idx_t* buf1, unsigned long long* counts, int* stamp, int iter0, \
    long long target, long long other, int hlimit, long long hub_deg, long long limit, long long max_iters, \
    long long* state

// One tile's part of a BFS level at frontier vertex x (reverse CSR): lanes
// stride over one index range, x's in-arcs (v -> x with spare capacity)
// then its out-arcs (x -> v carrying flow, so v -> x is residual), and
// label each unreached v with `label`, appending it to `next` (the CAS lets
// exactly one tile claim it).  One range, not two loops: a vertex of up to
// TILE arcs costs one round of dependent loads, and a level costs the
// longest such chain of its tiles.
__device__ __forceinline__ void bfs_visit_rcsr(
    idx_t x, int lane, const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out, int* height, idx_t* next, unsigned long long* next_count, int label)
{
    const ofs_t ib = in_indptr[x], ideg = in_indptr[x + 1] - ib;
    const ofs_t ob = indptr[x], deg = ideg + (indptr[x + 1] - ob);
    for (ofs_t i = lane; i < deg; i += TILE) {
        const bool in = i < ideg;
        const ofs_t j = in ? ib + i : ob + (i - ideg);
        const ofs_t k = in ? in_to_out[j] : j;
        const idx_t v = (in ? in_indices : indices)[j];
        const i64 f = flow[k];
        if ((in ? cap[k] - f : f) > 0 && atomicCAS(height + v, -1, label) == -1) next[gm_append(next_count)] = v;
    }
}

// The walk's claim on one arc: min(load, room) by a compare-and-swap loop
// on its flow, where room is cap - flow going forward and flow going back
// (cancelling); returns what was claimed (0 once nothing is left).
__device__ __forceinline__ i64 walk_claim(i64* flow, i64 cap, bool forward, i64 load)
{
    i64 f = __ldcg(flow);
    for (;;) {
        const i64 room = forward ? cap - f : f;
        const i64 want = room < load ? room : load;
        if (want <= 0) return 0;
        const i64 old = gm_cas(flow, f, forward ? f + want : f - want);
        if (old == f) return want;
        f = old;
    }
}

// ---------------------------------------------------------------------------
// Hub vertices (reverse CSR).  A vertex with more than `hub_deg` arcs (out +
// in) would serialise a discharge or a BFS level on one lane group: the
// R-MAT hubs have 10^4..10^5 arcs, and the sink and source of a unit network
// have one arc per row or column.  The tile kernels skip hubs; the two
// kernels below take them: a whole block discharges one hub, and a BFS level
// scans a hub's arcs in segments of HUB_SEG slots, one block per segment.
// ---------------------------------------------------------------------------

#ifndef HUB_BLOCK
#define HUB_BLOCK 512
#endif
#define HUB_WARPS (HUB_BLOCK / GPUMATCH_WARP)

// Block-wide multi-push claim (all HUB_BLOCK threads call it with the same
// `rem`): as tile_claim, over the block in thread order.  `sh` is shared
// scratch of HUB_WARPS + 1 values.
__device__ __forceinline__ i64 block_claim(i64 want, i64& rem, i64* sh)
{
    if (!__syncthreads_or(want > 0)) return 0;
    want = want < rem ? want : rem;
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1), wid = threadIdx.x / GPUMATCH_WARP;
    i64 incl = want;
#pragma unroll
    for (int off = 1; off < GPUMATCH_WARP; off <<= 1) {
        i64 o = __shfl_up_sync(GPUMATCH_FULL_MASK, incl, off);
        if (lane >= off) incl = sat_add(incl, o);
    }
    i64 excl = __shfl_up_sync(GPUMATCH_FULL_MASK, incl, 1);
    if (lane == 0) excl = 0;
    if (lane == GPUMATCH_WARP - 1) sh[wid] = incl;
    __syncthreads();
    if (wid == 0) {
        i64 t = lane < HUB_WARPS ? sh[lane] : 0;
        i64 ti = t;
#pragma unroll
        for (int off = 1; off < GPUMATCH_WARP; off <<= 1) {
            i64 o = __shfl_up_sync(GPUMATCH_FULL_MASK, ti, off);
            if (lane >= off) ti = sat_add(ti, o);
        }
        i64 te = __shfl_up_sync(GPUMATCH_FULL_MASK, ti, 1);
        if (lane == 0) te = 0;
        __syncwarp();
        if (lane < HUB_WARPS) sh[lane] = te;          // exclusive offset of each warp
        if (lane == GPUMATCH_WARP - 1) sh[HUB_WARPS] = ti;  // block total
    }
    __syncthreads();
    excl = sat_add(sh[wid], excl);
    const i64 tot = sh[HUB_WARPS];
    __syncthreads();  // sh is reused by the next call
    i64 d = rem - excl;
    d = d < 0 ? 0 : (d < want ? d : want);
    rem = tot >= rem ? 0 : rem - tot;
    return d;
}

// Block-wide minimum (all threads get it); `sh` as in block_claim.
__device__ __forceinline__ u64 block_min(u64 v, u64* sh)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1), wid = threadIdx.x / GPUMATCH_WARP;
#pragma unroll
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
        u64 o = __shfl_xor_sync(GPUMATCH_FULL_MASK, v, off);
        v = o < v ? o : v;
    }
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < HUB_WARPS ? sh[lane] : KEY_INF;
#pragma unroll
        for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
            u64 o = __shfl_xor_sync(GPUMATCH_FULL_MASK, v, off);
            v = o < v ? o : v;
        }
        if (lane == 0) sh[HUB_WARPS] = v;
    }
    __syncthreads();
    v = sh[HUB_WARPS];
    __syncthreads();
    return v;
}

// The hub part of one BFS level (gpumatch_pr_bfs_hub_rcsr, and the
// cooperative BFS): block-stride over the hub segments; a segment is
// scanned, its threads striding over its slots, only when its hub is on
// the frontier (height == level).  Arrays as in gpumatch_pr_bfs_hub_rcsr.
__device__ __forceinline__ void bfs_hub_segments_rcsr(
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
    int* height, const idx_t* __restrict__ seg_vertex, const long long* __restrict__ seg_start,
    long long nseg, long long hub_seg, idx_t* next, unsigned long long* next_count, int level)
{
    // whether any of the block's segments has its hub on the frontier: the
    // block's threads check them side by side (one round of loads) where
    // the loop below would check them one after the other, at every level
    // of a BFS whose hubs are mostly the terminals, long labelled or never
    if (nseg == 0) return;
    bool on = false;
    for (long long s = blockIdx.x + (long long)threadIdx.x * gridDim.x; s < nseg && !on;
         s += (long long)blockDim.x * gridDim.x)
        on = __ldcg(height + seg_vertex[s]) == level;
    if (!__syncthreads_or(on)) return;
    for (long long s = blockIdx.x; s < nseg; s += gridDim.x) {
        const idx_t x = seg_vertex[s];
        if (__ldcg(height + x) != level) continue;
        const long long ib = in_indptr[x], ideg = (long long)in_indptr[x + 1] - ib;
        const long long ob = indptr[x], deg = ideg + ((long long)indptr[x + 1] - ob);
        const long long b = seg_start[s];
        const long long e = b + hub_seg < deg ? b + hub_seg : deg;
        for (long long i = b + threadIdx.x; i < e; i += blockDim.x) {
            if (i < ideg) {
                const ofs_t j = (ofs_t)(ib + i);
                const ofs_t k = in_to_out[j];
                if (cap[k] - flow[k] > 0) {
                    const idx_t v = in_indices[j];
                    if (atomicCAS(height + v, -1, level + 1) == -1) next[gm_append(next_count)] = v;
                }
            } else {
                const ofs_t p = (ofs_t)(ob + (i - ideg));
                if (flow[p] > 0) {
                    const idx_t v = indices[p];
                    if (atomicCAS(height + v, -1, level + 1) == -1) next[gm_append(next_count)] = v;
                }
            }
        }
    }
}

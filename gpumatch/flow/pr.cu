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
    idx_t k;    // out-position of the arc (in-arcs)
};

template <bool EAGER>
__device__ __forceinline__ ArcRead read_out_arc(idx_t p, idx_t oe, const idx_t* __restrict__ indices,
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
__device__ __forceinline__ ArcRead read_in_arc(idx_t j, idx_t ie, const idx_t* __restrict__ in_indices,
                                               const idx_t* __restrict__ in_to_out, const i64* flow,
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
    idx_t ob, idx_t oe, idx_t ib, idx_t ie, int hu, i64& rem, int slot, int width, Claim claim,
    const idx_t* __restrict__ indices, const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indices, const idx_t* __restrict__ in_to_out,
    int* height, i64* excess, idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    const idx_t odeg = oe - ob;
    u64 best = KEY_INF;
    for (idx_t base = ob; base < oe && rem > 0; base += width) {
        const idx_t p = base + slot;
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
    for (idx_t base = ib; base < ie && rem > 0; base += width) {
        const idx_t j = base + slot;
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
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, i64* excess, idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    const idx_t ob = indptr[u], oe = indptr[u + 1];
    const idx_t ib = in_indptr[u], ie = in_indptr[u + 1];
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
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, i64* excess, idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    i64 e = 0;
    int hu = 0;
    if (lane == 0) { e = __ldcg(excess + u); hu = __ldcg(height + u); }
    const idx_t ob = indptr[u], oe = indptr[u + 1];
    const idx_t ib = in_indptr[u], ie = in_indptr[u + 1];
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

// gpumatch_pr_discharge_rcsr: one discharge step of push-relabel (reverse CSR).
//   indptr     : V + 1, out-arc pointers
//   indices    : E, head of each out-arc
//   cap        : E, capacity of each arc (int64, > 0)
//   flow       : E, flow of each forward arc (int64, 0..cap), updated
//   in_indptr  : V + 1, in-arc pointers
//   in_indices : E, tail of each in-arc
//   in_to_out  : E, out-position of each in-arc
//   height     : V, labels; the tile of u writes height[u]
//   excess     : V, excess (int64); u subtracts, any pusher adds
//   work       : *work_count, active vertices of this iteration (distinct)
//   work_count : 1, length of work
//   next       : V, out: active vertices of the next iteration
//   next_count : 1, out: length of next (zero on entry)
//   zero_count : 1, set to zero (the next launch's next_count)
//   stamp      : V, iteration stamp of the last enqueue of each vertex
//   iter       : this iteration's stamp (unique per launch)
//   target     : the vertex flow is sent to (sink in phase 1, source in 2)
//   other      : the other terminal (never active, never enqueued)
//   hlimit     : heights >= hlimit are inactive (V)
//   hub_deg    : vertices with more than hub_deg arcs (out + in) are skipped:
//                gpumatch_pr_discharge_hub_rcsr, launched just before in the
//                same iteration, discharges them with a whole block
// Thread mapping: TILE consecutive lanes per worklist entry, grid-stride
// over the list; each tile runs up to CYCLES discharge operations on its
// vertex.  One operation scans the residual arcs in slot order (out-arcs,
// then in-arcs) TILE at a time, pushes the excess down every arc to a lower
// neighbour (multi-push, shares by tile_claim) and stops once the excess is
// gone; if excess is left after the whole scan it relabels u to one above
// its lowest residual neighbour.  Benign races: the heights and residuals of
// neighbours are read while other tiles change them (Hong's lock-free
// argument); atomics keep flow and excess exact.
extern "C" __global__ void gpumatch_pr_discharge_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, i64* excess,
    const idx_t* __restrict__ work, const unsigned long long* work_count,
    idx_t* next, unsigned long long* next_count, unsigned long long* zero_count, int* stamp, int iter,
    long long target, long long other, int hlimit, long long hub_deg)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *zero_count = 0ull;
    const long long nwork = (long long)*work_count;
    const long long ntiles = ((long long)gridDim.x * blockDim.x) / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    const unsigned mask = tile_mask();
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE; w < nwork; w += ntiles) {
        const idx_t u = work[w];
        if ((long long)(indptr[u + 1] - indptr[u]) + (long long)(in_indptr[u + 1] - in_indptr[u]) > hub_deg)
            continue;  // a hub: gpumatch_pr_discharge_hub_rcsr
        discharge_vertex_rcsr(u, lane, mask, indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, height,
                              excess, next, next_count, stamp, iter, target, other, hlimit);
    }
}

// Whether a list holds a hub (more than hub_deg arcs, both directions), for
// every thread of the block (a barrier): the one-block loops below stop
// before such a list and leave it to the multi-block kernels.
__device__ __forceinline__ bool block_list_has_hub(
    const idx_t* list, unsigned long long size, const idx_t* __restrict__ indptr,
    const idx_t* __restrict__ in_indptr, long long hub_deg)
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
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices, \
    const i64* __restrict__ cap, i64* flow, \
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices, \
    const idx_t* __restrict__ in_to_out, \
    int* height, i64* excess, idx_t* buf0, idx_t* buf1, unsigned long long* counts, int* stamp, int iter0, \
    long long target, long long other, int hlimit, long long hub_deg, long long limit, long long max_iters, \
    long long* state

// gpumatch_pr_discharge_loop_rcsr: persistent mode of gpumatch_pr_discharge_rcsr
// for short worklists.  ONE block runs discharge iterations iter0, iter0 + 1,
// ... with __syncthreads() between them, until a worklist is empty, longer
// than `limit`, holds a hub (those iterations need the multi-block kernels),
// or `max_iters` iterations ran; excess travelling down a long path (a
// dynamic repair, the last vertices of a solve) then costs a few
// microseconds per hop instead of a launch.
//   indptr .. excess, stamp, target, other, hlimit, hub_deg :
//                as in gpumatch_pr_discharge_rcsr
//   buf0, buf1 : the worklist buffers; iteration j reads buf[j % 2] and
//                writes buf[(j + 1) % 2]
//   counts     : 3, the ring of worklist lengths (iteration j reads
//                counts[j % 3], writes counts[(j + 1) % 3], zeroes
//                counts[(j + 2) % 3], as a sequence of single launches does)
//   state      : 2, out: iterations run (j) and the length of the list left
// Thread mapping: TILE lanes per worklist entry, block-stride over the list.
// Each iteration runs one legal schedule of a gpumatch_pr_discharge_rcsr
// launch over the same list (discharge_vertex_short_rcsr: excess that
// arrives at a vertex during its discharge waits for the next iteration;
// the NumPy twin of both is _pr_numpy.discharge).
extern "C" __global__ void __launch_bounds__(512) gpumatch_pr_discharge_loop_rcsr(PR_DISCHARGE_ITERS_PARAMS)
{
    const int lane = threadIdx.x & (TILE - 1);
    const unsigned mask = tile_mask();
    const int tiles = blockDim.x / TILE;
    long long j = 0;
    unsigned long long size = *((volatile unsigned long long*)counts);
    while (j < max_iters && size > 0ull && (long long)size <= limit) {
        const idx_t* work = (j & 1) ? buf1 : buf0;
        idx_t* next = (j & 1) ? buf0 : buf1;
        unsigned long long* next_count = counts + (j + 1) % 3;
        if (block_list_has_hub(work, size, indptr, in_indptr, hub_deg)) break;
        if (threadIdx.x == 0) counts[(j + 2) % 3] = 0ull;
        for (long long w = threadIdx.x / TILE; w < (long long)size; w += tiles) {
            discharge_vertex_short_rcsr(work[w], lane, mask, indptr, indices, cap, flow, in_indptr, in_indices,
                                        in_to_out, height, excess, next, next_count, stamp, iter0 + (int)j, target,
                                        other, hlimit);
        }
        __syncthreads();
        ++j;
        size = *((volatile unsigned long long*)(counts + j % 3));
    }
    if (threadIdx.x == 0) { state[0] = j; state[1] = (long long)size; }
}

// gpumatch_pr_discharge_bcsr: one discharge step (bidirectional CSR).
//   bptr       : V + 1, pointers of the merged neighbour lists
//   bnbr       : B, neighbour of each entry (sorted within a vertex)
//   resid      : B, residual capacity of entry (u -> bnbr) (int64), updated
//   partner    : B, index of the entry (bnbr -> u)
//   height, excess, work, work_count, next, next_count, zero_count, stamp,
//   iter, target, other, hlimit : as in gpumatch_pr_discharge_rcsr
// Thread mapping and races: as in gpumatch_pr_discharge_rcsr; resid[e] is
// decreased only by the tile of u and increased only by the tile of bnbr[e].
extern "C" __global__ void gpumatch_pr_discharge_bcsr(
    const idx_t* __restrict__ bptr, const idx_t* __restrict__ bnbr,
    i64* resid, const idx_t* __restrict__ partner,
    int* height, i64* excess,
    const idx_t* __restrict__ work, const unsigned long long* work_count,
    idx_t* next, unsigned long long* next_count, unsigned long long* zero_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *zero_count = 0ull;
    const long long nwork = (long long)*work_count;
    const long long ntiles = ((long long)gridDim.x * blockDim.x) / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    const unsigned mask = tile_mask();
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE; w < nwork; w += ntiles) {
        const idx_t u = work[w];
        const idx_t b = bptr[u], be = bptr[u + 1];
        for (int c = 0; c < CYCLES; ++c) {
            i64 e = 0;
            int hu = 0;
            if (lane == 0) { e = __ldcg(excess + u); hu = __ldcg(height + u); }
            e = __shfl_sync(mask, e, 0, TILE);
            hu = __shfl_sync(mask, hu, 0, TILE);
            if (e <= 0 || hu >= hlimit) break;
            i64 rem = e;
            u64 best = KEY_INF;
            for (idx_t base = b; base < be && rem > 0; base += TILE) {
                const idx_t p = base + lane;
                i64 r = 0;
                int hv = 0;
                idx_t v = 0;
                if (p < be) {
                    r = __ldcg(resid + p);
                    if (r > 0) { v = bnbr[p]; hv = __ldcg(height + v); }
                }
                const i64 d = tile_claim(r > 0 && hv < hu ? r : 0, rem, lane, mask);
                if (d > 0) {
                    gm_add(resid + p, -d);
                    gm_add(resid + partner[p], d);
                    gm_add(excess + v, d);
                    if (v != target && v != other && hv < hlimit) enqueue(v, stamp, iter, next, next_count);
                }
                if (r - d > 0) {
                    u64 key = ((u64)(unsigned)hv << 32) | (u64)(p - b);
                    best = key < best ? key : best;
                }
            }
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
}

// One tile's part of a BFS level at frontier vertex x (reverse CSR): lanes
// stride over one index range, x's in-arcs (v -> x with spare capacity)
// then its out-arcs (x -> v carrying flow, so v -> x is residual), and
// label each unreached v with `label`, appending it to `next` (the CAS lets
// exactly one tile claim it).  One range, not two loops: a vertex of up to
// TILE arcs costs one round of dependent loads, and a level costs the
// longest such chain of its tiles.
__device__ __forceinline__ void bfs_visit_rcsr(
    idx_t x, int lane, const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out, int* height, idx_t* next, unsigned long long* next_count, int label)
{
    const idx_t ib = in_indptr[x], ideg = in_indptr[x + 1] - ib;
    const idx_t ob = indptr[x], deg = ideg + (indptr[x + 1] - ob);
    for (idx_t i = lane; i < deg; i += TILE) {
        const bool in = i < ideg;
        const idx_t j = in ? ib + i : ob + (i - ideg);
        const idx_t k = in ? in_to_out[j] : j;
        const idx_t v = (in ? in_indices : indices)[j];
        const i64 f = flow[k];
        if ((in ? cap[k] - f : f) > 0 && atomicCAS(height + v, -1, label) == -1) next[gm_append(next_count)] = v;
    }
}

// gpumatch_pr_bfs_rcsr: one level of the global relabel, a worklist BFS from
// the target over reverse residual arcs (v is labelled from w when v -> w
// has residual capacity).
//   indptr, indices, cap, flow, in_indptr, in_indices, in_to_out : as above
//   height     : V, -1 = not reached yet; reached vertices get level + 1
//   frontier   : *frontier_count, vertices of height `level`
//   frontier_count : 1, length of frontier
//   next       : V, out: vertices labelled level + 1
//   next_count : 1, out: length of next (zero on entry)
//   zero_count : 1, set to zero (the next level's next_count)
//   hub_deg    : frontier vertices with more than hub_deg arcs are skipped
//                (gpumatch_pr_bfs_hub_rcsr scans them, in segments)
// Thread mapping: TILE lanes per frontier vertex (grid-stride over the
// frontier), lanes stride over its in- then out-arcs.  Race: several tiles may reach one vertex; atomicCAS lets
// exactly one label and enqueue it.  No flow changes during a relabel.
extern "C" __global__ void gpumatch_pr_bfs_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, const idx_t* __restrict__ frontier, const unsigned long long* frontier_count,
    idx_t* next, unsigned long long* next_count, unsigned long long* zero_count, int level, long long hub_deg)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *zero_count = 0ull;
    const long long nf = (long long)*frontier_count;
    const long long ntiles = ((long long)gridDim.x * blockDim.x) / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE; w < nf; w += ntiles) {
    const idx_t x = frontier[w];
    if ((long long)(indptr[x + 1] - indptr[x]) + (long long)(in_indptr[x + 1] - in_indptr[x]) > hub_deg)
        continue;  // a hub: its arcs are scanned by gpumatch_pr_bfs_hub_rcsr
    bfs_visit_rcsr(x, lane, indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, height, next, next_count,
                   level + 1);
    }
}

// gpumatch_pr_bfs_bcsr: one level of the global relabel (bidirectional CSR).
//   bptr, bnbr, resid, partner : as in gpumatch_pr_discharge_bcsr
//   height, frontier, frontier_count, next, next_count, zero_count, level :
//                as in gpumatch_pr_bfs_rcsr
// Thread mapping and race: as in gpumatch_pr_bfs_rcsr.
extern "C" __global__ void gpumatch_pr_bfs_bcsr(
    const idx_t* __restrict__ bptr, const idx_t* __restrict__ bnbr,
    const i64* __restrict__ resid, const idx_t* __restrict__ partner,
    int* height, const idx_t* __restrict__ frontier, const unsigned long long* frontier_count,
    idx_t* next, unsigned long long* next_count, unsigned long long* zero_count, int level)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *zero_count = 0ull;
    const long long nf = (long long)*frontier_count;
    const long long ntiles = ((long long)gridDim.x * blockDim.x) / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE; w < nf; w += ntiles) {
    const idx_t x = frontier[w];
    for (idx_t p = bptr[x] + lane; p < bptr[x + 1]; p += TILE) {
        if (resid[partner[p]] > 0) {  // bnbr[p] -> x is residual
            idx_t v = bnbr[p];
            if (atomicCAS(height + v, -1, level + 1) == -1) next[gm_append(next_count)] = v;
        }
    }
    }
}

// gpumatch_pr_greedy_rcsr: greedy start of phase 1 (reverse CSR).  Right
// after the source arcs are saturated, each vertex u that received excess
// from the source sends it on to the sink at once along paths u -> t and
// u -> v -> t, claiming the residual capacity of the sink arc with an
// atomic (for a unit network of a bipartite graph this is a greedy
// matching, so push-relabel starts with only the unmatched rows active).
//   indptr, indices, cap, flow : as in gpumatch_pr_discharge_rcsr
//   heads      : nheads, the distinct heads of the source's arcs
//   sink_arc   : V, out-position of the arc v -> sink (-1 if none)
//   excess     : V; u's own entry (u owns it here) and the sink's (atomic)
//   source, sink : the terminals (sink's excess is the flow value so far)
// Thread mapping: one thread per head, arcs in slot order until its excess
// is gone.  Race: several threads claim one sink arc; each adds what it
// wants, keeps min(want, cap - old) and gives the rest back, so the arc's
// flow never ends above its capacity (a thread reading a transient
// over-claim just keeps less).  flow[p] of a non-sink arc u -> v is written
// only by u's thread.
extern "C" __global__ void gpumatch_pr_greedy_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ heads, long long nheads, const idx_t* __restrict__ sink_arc,
    i64* excess, long long source, long long sink)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nheads; i += stride) {
        const idx_t u = heads[i];
        if ((long long)u == sink) continue;
        i64 e = excess[u];
        const idx_t pe = indptr[u + 1];
        for (idx_t p = indptr[u]; p < pe && e > 0; ++p) {
            const idx_t v = indices[p];
            if ((long long)v == source) continue;
            const idx_t k = (long long)v == sink ? p : sink_arc[v];
            if (k < 0) continue;
            i64 want = cap[p] - __ldcg(flow + p);
            want = want < e ? want : e;
            if (want <= 0) continue;
            const i64 old = gm_add(flow + k, want);
            i64 got = cap[k] - old;
            got = got < want ? got : want;
            got = got < 0 ? 0 : got;
            if (got < want) gm_add(flow + k, got - want);
            if (got > 0) {
                if (k != p) flow[p] += got;
                gm_add(excess + sink, got);
                e -= got;
            }
        }
        excess[u] = e;
    }
}

// gpumatch_pr_return_rcsr: quick return of stranded excess after phase 1
// (reverse CSR), before (and mostly instead of) phase 2: each stranded
// vertex x sends its excess back to the source along x -> s (the reverse of
// an arc s -> x) and x -> u -> s (the reverses of arcs u -> x and s -> u),
// claiming the flow of the source arc with an atomic, as the greedy start
// claims sink arcs.
//   indptr, cap, flow : as in gpumatch_pr_discharge_rcsr (cap unused)
//   in_indptr, in_indices, in_to_out : as in gpumatch_pr_discharge_rcsr
//   xs         : nx, the distinct stranded vertices (not terminals)
//   src_arc    : V, out-position of the arc source -> u (-1 if none)
//   excess     : V; x's own entry (x owns it here) and the source's (atomic)
//   source     : the source
// Thread mapping: one thread per stranded vertex, in-arcs in order until its
// excess is gone.  Race: several threads reduce one source arc's flow; each
// subtracts what it wants, keeps min(want, old) and adds the rest back, so
// the flow never ends below zero.  The flow of a non-source arc u -> x is
// written only by x's thread.
extern "C" __global__ void gpumatch_pr_return_rcsr(
    i64* flow, const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    const idx_t* __restrict__ xs, long long nx, const idx_t* __restrict__ src_arc,
    i64* excess, long long source)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nx; i += stride) {
        const idx_t x = xs[i];
        i64 e = excess[x];
        const idx_t je = in_indptr[x + 1];
        for (idx_t j = in_indptr[x]; j < je && e > 0; ++j) {
            const idx_t u = in_indices[j];
            const idx_t k = in_to_out[j];
            const idx_t a = (long long)u == source ? k : src_arc[u];
            if (a < 0) continue;
            i64 want = __ldcg(flow + k);
            want = want < e ? want : e;
            if (want <= 0) continue;
            const i64 old = gm_add(flow + a, -want);
            i64 got = old < want ? old : want;
            got = got < 0 ? 0 : got;
            if (got < want) gm_add(flow + a, want - got);
            if (got > 0) {
                if (a != k) flow[k] -= got;
                gm_add(excess + source, got);
                e -= got;
            }
        }
        excess[x] = e;
    }
}

// gpumatch_pr_unwind_rcsr: send excess back to `source` along the arcs that
// brought it (flow cancelling), as far as it takes.  Each round, every
// listed vertex x takes its whole excess and cancels as much flow on its
// in-arcs u -> x, in order, handing the excess to the tails u; a tail whose
// excess turns positive is listed for the next round.  As long as no arc
// comes from `other`, a vertex's inflow is at least its excess, so every
// round places all of it and the excess only moves closer to `source`
// along the flow's paths: rounds = the longest path walked (a flow cycle
// is walked until its flow is used up; `max_rounds` bounds that).  On a
// repair's network this returns excess of the source side of a kept cut
// to the source without crossing the cut (arcs from the sink side into
// the source side carry no flow), and on the transposed network it
// cancels deficits of the sink side towards the sink.
//   flow, in_indptr, in_indices, in_to_out : as in gpumatch_pr_return_rcsr
//   buf0, buf1 : V each; round r lists buf[r % 2] (length cnt[r % 2]) and
//                appends to buf[(r + 1) % 2]; buf0 / cnt[0] hold the first list
//                (distinct vertices, neither terminal)
//   cnt        : 2 list lengths (device)
//   excess     : V (atomic)
//   source, other : the terminal that takes the excess, the one whose arcs
//                are never cancelled (what only such an arc could take stays)
//   max_rounds : rounds at most
//   seen, mark : V; a vertex that has handed excess on in this call has
//                seen == mark.  In-arcs from vertices not seen go first: a
//                flow cycle (GENRMF's anti-parallel arcs both carry flow)
//                would otherwise hand the excess round it, a little of the
//                cycle's flow per lap
//   state      : 2, out: rounds run and the length of the list left
// Thread mapping: ONE block; a warp per listed vertex, block-stride, two
// barriers per round.  The warp reads 32 in-arcs at a time (their tails,
// flows and seen marks at once, where one thread per vertex read them one
// after the other: ~8 us a round on an H100, ~1 000 rounds on RLG) and
// hands out the excess in the order above by a prefix sum of the flows.
// Races: the flow of an arc u -> x is written only by x's warp; `seen` is
// a hint (a stale read only changes the order of the arcs); excess of a
// listed x is taken by an atomic exchange, so what other warps add to it
// before the exchange goes along, and what they add after it lists x once
// more (the 0 -> positive transition is seen by exactly one adder, so a
// list never holds a vertex twice).
extern "C" __global__ void __launch_bounds__(1024) gpumatch_pr_unwind_rcsr(
    i64* flow, const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out, idx_t* buf0, idx_t* buf1, unsigned long long* cnt, i64* excess,
    long long source, long long other, long long max_rounds, int* seen, int mark, long long* state)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    const unsigned warp = threadIdx.x / GPUMATCH_WARP, warps = blockDim.x / GPUMATCH_WARP;
    long long r = 0;
    unsigned long long size = *((volatile unsigned long long*)cnt);
    while (r < max_rounds && size > 0ull) {
        const idx_t* list = (r & 1) ? buf1 : buf0;
        idx_t* next = (r & 1) ? buf0 : buf1;
        unsigned long long* next_count = cnt + ((r + 1) & 1);
        // last read at the end of round r - 2, two barriers ago
        if (threadIdx.x == 0) *next_count = 0ull;
        __syncthreads();
        for (unsigned long long i = warp; i < size; i += warps) {
            const idx_t x = list[i];
            i64 e = 0;
            if (lane == 0) e = (i64)atomicExch((u64*)(excess + x), 0ull);
            e = __shfl_sync(GPUMATCH_FULL_MASK, e, 0);
            if (e <= 0) {
                if (lane == 0 && e < 0) gm_add(excess + x, e);
                continue;
            }
            if (lane == 0) seen[x] = mark;
            const idx_t jb = in_indptr[x], je = in_indptr[x + 1];
            for (int pass = 0; pass < 2 && e > 0; ++pass) {
                for (idx_t j0 = jb; j0 < je && e > 0; j0 += GPUMATCH_WARP) {
                    const idx_t j = j0 + lane;
                    idx_t u = 0, k = 0;
                    i64 f = 0;
                    if (j < je) {
                        u = in_indices[j];
                        k = in_to_out[j];
                        if ((long long)u != other && ((seen[u] == mark) == (pass == 1))) f = flow[k];
                        if (f < 0) f = 0;
                    }
                    // inclusive prefix sum of the flows, in slot order
                    i64 incl = f;
                    for (int sh = 1; sh < GPUMATCH_WARP; sh <<= 1) {
                        const i64 o = __shfl_up_sync(GPUMATCH_FULL_MASK, incl, sh);
                        if (lane >= sh) incl += o;
                    }
                    const i64 before = incl - f;
                    i64 m = e - before;
                    m = m < 0 ? 0 : (m > f ? f : m);
                    if (m > 0) {
                        flow[k] -= m;
                        const i64 old = gm_add(excess + u, m);
                        if ((long long)u != source && old <= 0 && old + m > 0) next[gm_append(next_count)] = u;
                    }
                    const i64 total = __shfl_sync(GPUMATCH_FULL_MASK, incl, GPUMATCH_WARP - 1);
                    e -= total < e ? total : e;
                }
            }
            if (lane == 0 && e > 0) gm_add(excess + x, e);   // only arcs from `other` were left: stays
        }
        __syncthreads();
        size = *((volatile unsigned long long*)next_count);
        ++r;
    }
    if (threadIdx.x == 0) { state[0] = r; state[1] = (long long)size; }
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

// gpumatch_pr_walk_rcsr: carry the excess of each listed vertex down ONE
// path of admissible arcs, all the way in one launch (reverse CSR).  Right
// after a relabel the heights are exact distances to the targets, and a
// discharge step moves excess one arc per launch: a vertex hundreds of
// levels from its target needs hundreds of steps (with relabels between
// them), where a walk needs one launch whose latency is a few loads per arc.
//   indptr .. in_to_out : as in gpumatch_pr_discharge_rcsr
//   height     : V, labels (read only: a walk never relabels)
//   excess     : V (atomic); the carrier of x takes x's excess, leaves at
//                each vertex what the next arc cannot take, and on arrival
//                at y takes back only what y's own deficit did not absorb
//   work, n    : the vertices whose excess is carried (distinct, neither
//                terminal, height < hlimit)
//   target, other : terminals; a carrier that reaches one leaves its load
//   max_steps  : arcs per carrier at most
// Thread mapping: one warp per carrier, grid-stride over the list.  The
// lanes scan the carrier's slots (out-arcs, then in-arcs) 32 at a time for
// the admissible arc (residual > 0, lower neighbour) of largest residual,
// the first slot on ties; lane 0 claims min(load, residual) on it with a
// compare-and-swap loop on the arc's flow.  Each arc lowers the height by
// one, so a walk ends within its start's height.  Races: heights do not
// change; two carriers at one vertex may pick one arc and the CAS serves
// them in turn (one that gets nothing leaves its load there); the two ends
// of an arc never claim it together (each end would need the lower
// height); excess changes only by atomics, and a carrier takes back at most
// the positive part of what its own add made (over all adds at a vertex
// these telescope, so a vertex never goes below its own deficit and keeps
// its own excess).
extern "C" __global__ void gpumatch_pr_walk_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    const int* __restrict__ height, i64* excess,
    const idx_t* __restrict__ work, long long n, long long target, long long other, int max_steps)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / GPUMATCH_WARP;
    const long long stride = ((long long)gridDim.x * blockDim.x) / GPUMATCH_WARP;
    for (long long w = first; w < n; w += stride) {
        idx_t x = work[w];
        i64 load = 0;
        if (lane == 0) load = (i64)atomicExch((u64*)(excess + x), 0ull);
        load = __shfl_sync(GPUMATCH_FULL_MASK, load, 0);
        if (load <= 0) {
            if (lane == 0 && load < 0) gm_add(excess + x, load);
            continue;
        }
        for (int step = 0; step < max_steps && load > 0; ++step) {
            const int hx = height[x];
            const idx_t ob = indptr[x], odeg = indptr[x + 1] - ob;
            const idx_t ib = in_indptr[x], deg = odeg + (in_indptr[x + 1] - ib);
            i64 best = 0;
            long long slot = -1;
            for (idx_t base = 0; base < deg; base += GPUMATCH_WARP) {
                const idx_t j = base + lane;
                if (j >= deg) break;
                i64 r;
                idx_t v;
                if (j < odeg) {
                    r = cap[ob + j] - __ldcg(flow + ob + j);
                    v = indices[ob + j];
                } else {
                    r = __ldcg(flow + in_to_out[ib + j - odeg]);
                    v = in_indices[ib + j - odeg];
                }
                if (r > best && height[v] < hx) { best = r; slot = j; }
            }
#pragma unroll
            for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
                const i64 b2 = __shfl_xor_sync(GPUMATCH_FULL_MASK, best, off);
                const long long s2 = __shfl_xor_sync(GPUMATCH_FULL_MASK, slot, off);
                if (b2 > best || (b2 == best && s2 >= 0 && (slot < 0 || s2 < slot))) { best = b2; slot = s2; }
            }
            if (slot < 0) break;                  // no admissible arc: the load stays at x
            i64 next_load = 0;
            idx_t y = 0;
            if (lane == 0) {
                i64 got;
                if (slot < odeg) {
                    const idx_t p = ob + (idx_t)slot;
                    y = indices[p];
                    got = walk_claim(flow + p, cap[p], true, load);
                } else {
                    const idx_t q = ib + (idx_t)slot - odeg;
                    y = in_indices[q];
                    got = walk_claim(flow + in_to_out[q], 0, false, load);
                }
                if (load - got > 0) gm_add(excess + x, load - got);
                if (got > 0) {
                    const i64 old = gm_add(excess + y, got);
                    if ((long long)y != target && (long long)y != other) {
                        const i64 pos = old + got;           // what y holds now
                        next_load = pos < got ? (pos > 0 ? pos : 0) : got;
                        if (next_load > 0) gm_add(excess + y, -next_load);
                    }
                }
            }
            load = __shfl_sync(GPUMATCH_FULL_MASK, next_load, 0);
            x = __shfl_sync(GPUMATCH_FULL_MASK, y, 0);
        }
        if (lane == 0 && load > 0) gm_add(excess + x, load);
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

// gpumatch_pr_discharge_hub_rcsr: the discharge step of the hub vertices,
// launched right before gpumatch_pr_discharge_rcsr in each iteration (which
// skips them).
//   indptr .. excess : as in gpumatch_pr_discharge_rcsr
//   hubs       : nhubs, the vertices with more than hub_deg arcs (no terminal)
//   next, next_count, stamp, iter, target, other, hlimit : as in
//                gpumatch_pr_discharge_rcsr (this launch writes the same
//                next list as the tile launch that follows it)
// Thread mapping: one block of HUB_BLOCK threads per hub (grid-stride over
// the hubs); a hub is active when it holds excess below hlimit, in the list
// or not (an active vertex is always in the list).  The block runs the tile
// kernel's operation with HUB_BLOCK lanes: the same slot order, claims and
// relabel, so it is the same discharge as the NumPy twin's.  Races: as in
// gpumatch_pr_discharge_rcsr; the block enqueues its hub if excess is left.
extern "C" __global__ void __launch_bounds__(HUB_BLOCK) gpumatch_pr_discharge_hub_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, i64* excess,
    const idx_t* __restrict__ hubs, long long nhubs,
    idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    __shared__ i64 sh[HUB_WARPS + 1];
    __shared__ i64 s_e;
    __shared__ int s_h;
    const int tid = threadIdx.x;
    for (long long w = blockIdx.x; w < nhubs; w += gridDim.x) {
        const idx_t u = hubs[w];
        const idx_t ob = indptr[u], oe = indptr[u + 1];
        const idx_t ib = in_indptr[u], ie = in_indptr[u + 1];
        for (int c = 0; c < CYCLES; ++c) {
            if (tid == 0) { s_e = __ldcg(excess + u); s_h = __ldcg(height + u); }
            __syncthreads();
            const i64 e = s_e;
            const int hu = s_h;
            __syncthreads();
            if (e <= 0 || hu >= hlimit) break;
            i64 rem = e;
            u64 best = push_admissible(
                ob, oe, ib, ie, hu, rem, tid, HUB_BLOCK,
                [&](i64 want, i64& left) { return block_claim(want, left, (i64*)sh); },
                indices, cap, flow, in_indices, in_to_out, height, excess, next, next_count, stamp, iter, target,
                other, hlimit);
            if (tid == 0 && rem < e) gm_add(excess + u, rem - e);
            if (rem == 0) continue;
            best = block_min(best, (u64*)sh);
            if (tid == 0) height[u] = relabel_height(best, hlimit);
            if (best == KEY_INF) break;
        }
        if (tid == 0 && __ldcg(excess + u) > 0 && __ldcg(height + u) < hlimit)
            enqueue(u, stamp, iter, next, next_count);
        __syncthreads();
    }
}

// The hub part of one BFS level (gpumatch_pr_bfs_hub_rcsr, and the
// cooperative BFS): block-stride over the hub segments; a segment is
// scanned, its threads striding over its slots, only when its hub is on
// the frontier (height == level).  Arrays as in gpumatch_pr_bfs_hub_rcsr.
__device__ __forceinline__ void bfs_hub_segments_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
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
                const idx_t j = (idx_t)(ib + i);
                const idx_t k = in_to_out[j];
                if (cap[k] - flow[k] > 0) {
                    const idx_t v = in_indices[j];
                    if (atomicCAS(height + v, -1, level + 1) == -1) next[gm_append(next_count)] = v;
                }
            } else {
                const idx_t p = (idx_t)(ob + (i - ideg));
                if (flow[p] > 0) {
                    const idx_t v = indices[p];
                    if (atomicCAS(height + v, -1, level + 1) == -1) next[gm_append(next_count)] = v;
                }
            }
        }
    }
}

// gpumatch_pr_bfs_hub_rcsr: the hub part of one BFS level, launched right
// before gpumatch_pr_bfs_rcsr (which skips hubs) with the same next list.
//   indptr .. in_to_out, height, next, next_count, level : as in
//                gpumatch_pr_bfs_rcsr
//   seg_vertex : nseg, the hub of each segment
//   seg_start  : nseg, first slot of the segment within its hub's slots
//                (in-arcs first, then out-arcs); a segment has HUB_SEG slots
// Thread mapping: one block per segment (grid-stride over the segments); a
// segment is scanned only when its hub is on the frontier (height == level),
// so no frontier list is needed.  Race: as in gpumatch_pr_bfs_rcsr.
extern "C" __global__ void gpumatch_pr_bfs_hub_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, const idx_t* __restrict__ seg_vertex, const long long* __restrict__ seg_start,
    long long nseg, long long hub_seg, idx_t* next, unsigned long long* next_count, int level)
{
    bfs_hub_segments_rcsr(indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, height, seg_vertex,
                          seg_start, nseg, hub_seg, next, next_count, level);
}

// gpumatch_pr_bfs_loop_rcsr: persistent mode of gpumatch_pr_bfs_rcsr for
// small frontiers.  ONE block runs BFS levels level0, level0 + 1, ... with
// __syncthreads() between them, until a frontier is empty, longer than
// `limit`, holds a hub (those levels need the multi-block kernels), or
// `max_levels` levels ran; a deep BFS (meshes, grids, genrmf) then costs
// about a microsecond per level instead of a launch.
//   indptr .. in_to_out, height, hub_deg : as in gpumatch_pr_bfs_rcsr
//   buf0, buf1 : the frontier buffers; level level0 + j reads buf[j % 2]
//                and writes buf[(j + 1) % 2]
//   counts     : 3, the ring of frontier lengths (level level0 + j reads
//                counts[j % 3], writes counts[(j + 1) % 3] and zeroes
//                counts[(j + 2) % 3], as a sequence of single launches does)
//   state      : 2, out: levels run (j) and the length of the frontier left
// Thread mapping: TILE lanes per frontier vertex, block-stride over the
// frontier.  Each level makes the same claims as one gpumatch_pr_bfs_rcsr
// launch.  Ring slot (j + 2) % 3, zeroed by thread 0 at level j, was last
// read at the start of level j - 1, before that level's barrier.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_pr_bfs_loop_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out, int* height,
    idx_t* buf0, idx_t* buf1, unsigned long long* counts, int level0, long long limit,
    long long max_levels, long long hub_deg, long long* state)
{
    const int lane = threadIdx.x & (TILE - 1);
    const int tiles = blockDim.x / TILE;
    long long j = 0;
    unsigned long long size = *((volatile unsigned long long*)counts);
    while (j < max_levels && size > 0ull && (long long)size <= limit) {
        const idx_t* frontier = (j & 1) ? buf1 : buf0;
        idx_t* next = (j & 1) ? buf0 : buf1;
        unsigned long long* next_count = counts + (j + 1) % 3;
        if (block_list_has_hub(frontier, size, indptr, in_indptr, hub_deg)) break;
        if (threadIdx.x == 0) counts[(j + 2) % 3] = 0ull;
        const int label = level0 + (int)j + 1;
        for (long long w = threadIdx.x / TILE; w < (long long)size; w += tiles) {
            bfs_visit_rcsr(frontier[w], lane, indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, height,
                           next, next_count, label);
        }
        __syncthreads();
        ++j;
        size = *((volatile unsigned long long*)(counts + j % 3));
    }
    if (threadIdx.x == 0) { state[0] = j; state[1] = (long long)size; }
}

#ifdef GPUMATCH_COOPERATIVE
#include <cooperative_groups.h>

#ifndef COOP_BFS_BLOCK
#define COOP_BFS_BLOCK 512
#endif

// gpumatch_pr_bfs_coop_rcsr: the levels of a global relabel in ONE
// cooperative launch (the grid is co-resident; grid.sync() ends each level),
// so a deep BFS (genrmf, grids: hundreds of levels of a few hundred
// vertices) pays neither a launch nor a read-back per level, and the early
// stop of a repair's relabel is decided on the device.
//   indptr .. in_to_out, height, hub_deg : as in gpumatch_pr_bfs_rcsr
//   buf0, buf1 : the frontier buffers; level level0 + j reads buf[j % 2]
//                and writes buf[(j + 1) % 2]
//   counts     : 6; counts[0..2] the ring of frontier lengths as in
//                gpumatch_pr_bfs_loop_rcsr (level j reads counts[j % 3],
//                writes counts[(j + 1) % 3], zeroes counts[(j + 2) % 3]);
//                counts[3..5] the ring of watch flags (level j sets
//                flag[j % 3] when it saw a watched vertex unlabelled and
//                zeroes flag[(j + 1) % 3]); counts[1..5] zero on entry
//   max_levels : levels at most in this launch
//   seg_vertex, seg_start, nseg, hub_seg : the hub segments, as in
//                gpumatch_pr_bfs_hub_rcsr (nseg 0: no hubs)
//   watch, nwatch : with nwatch > 0, the BFS stops after the first level
//                after which every vertex of `watch` has a height (or one
//                level later, see the race below) while the frontier is
//                not empty
//   state      : 3, out: levels run, length of the frontier left, stopped
//                by the watch (0/1)
// Thread mapping: TILE lanes per frontier vertex, grid-stride over the
// frontier (hubs skipped), then one block per hub segment whose hub is on
// the frontier (height == level), as the two multi-block kernels do.
// Races: the claims of a level are those of one gpumatch_pr_bfs_rcsr
// launch (atomicCAS labels each vertex once).  The watch check of a level
// runs before its barrier, so a watched vertex labelled by another block in
// the same level may still read -1: the flag then keeps the BFS going one
// more level, whose check sees it (a vertex read labelled is labelled, so
// a stop is never early).  Ring slots are zeroed one level after their last
// reader passed a barrier, as in gpumatch_pr_bfs_loop_rcsr.  After a
// barrier one thread per block copies the two values it needs into shared
// memory (every thread reading them queued thousands of loads on one L2 line).
extern "C" __global__ void __launch_bounds__(COOP_BFS_BLOCK) gpumatch_pr_bfs_coop_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out, int* height,
    idx_t* buf0, idx_t* buf1, unsigned long long* counts, int level0, long long max_levels,
    const idx_t* __restrict__ seg_vertex, const long long* __restrict__ seg_start, long long nseg, long long hub_seg,
    long long hub_deg, const idx_t* __restrict__ watch, long long nwatch, long long* state)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    const long long ntiles = nthreads / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    volatile unsigned long long* vcounts = counts;
    unsigned long long* flag = counts + 3;
    __shared__ unsigned long long snap[2];
    if (threadIdx.x == 0) snap[0] = vcounts[0];
    __syncthreads();
    unsigned long long size = snap[0];
    long long j = 0;
    int stopped = 0;
    while (j < max_levels && size > 0ull) {
        const idx_t* frontier = (j & 1) ? buf1 : buf0;
        idx_t* next = (j & 1) ? buf0 : buf1;
        unsigned long long* next_count = counts + (j + 1) % 3;
        const int label = level0 + (int)j + 1;
        if (tid == 0) {
            counts[(j + 2) % 3] = 0ull;
            flag[(j + 1) % 3] = 0ull;
        }
        for (long long w = tid / TILE; w < (long long)size; w += ntiles) {
            const idx_t x = frontier[w];
            if ((long long)(indptr[x + 1] - indptr[x]) + (long long)(in_indptr[x + 1] - in_indptr[x]) > hub_deg)
                continue;  // a hub: scanned in segments below
            bfs_visit_rcsr(x, lane, indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, height, next,
                           next_count, label);
        }
        bfs_hub_segments_rcsr(indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, height, seg_vertex,
                              seg_start, nseg, hub_seg, next, next_count, label - 1);
        if (nwatch > 0) {
            int miss = 0;
            for (long long i = tid; i < nwatch && !miss; i += nthreads) miss = __ldcg(height + watch[i]) < 0;
            if (__syncthreads_or(miss) && threadIdx.x == 0) flag[j % 3] = 1ull;
        }
        grid.sync();
        if (threadIdx.x == 0) {
            snap[0] = vcounts[(j + 1) % 3];
            snap[1] = ((volatile unsigned long long*)flag)[j % 3];
        }
        __syncthreads();
        size = snap[0];
        const unsigned long long missing = snap[1];   // snap is rewritten after the next barrier only
        ++j;
        if (nwatch > 0 && missing == 0ull && size > 0ull) {
            stopped = 1;
            break;
        }
    }
    if (tid == 0) {
        state[0] = j;
        state[1] = (long long)size;
        state[2] = stopped;
    }
}

#ifndef COOP_DISCHARGE_BLOCK
#define COOP_DISCHARGE_BLOCK 512
#endif

// gpumatch_pr_discharge_coop_rcsr: the discharge iterations over middling
// worklists in ONE cooperative launch (the grid is co-resident;
// grid.sync() ends each iteration).  The one-block loop above serialises a
// list of a few hundred vertices into rounds of its tiles (27-57 us per
// iteration at 256-512 vertices on an H100, against 14 us for a launch
// over the whole GPU); here every vertex of such a list gets a tile at
// once, and an iteration costs one discharge and one barrier.
//   indptr .. excess, stamp, target, other, hlimit, hub_deg :
//                as in gpumatch_pr_discharge_rcsr (the caller uses this
//                kernel only on networks whose hubs are terminals)
//   buf0, buf1, counts : as in gpumatch_pr_discharge_loop_rcsr
//                (iteration j reads buf[j % 2] and counts[j % 3])
//   iter0      : the stamp of iteration 0 (iteration j uses iter0 + j)
//   limit      : stop before an iteration whose list is longer
//   max_iters  : iterations at most
//   state      : 2, out: iterations run (j) and the length of the list left
// Thread mapping: TILE lanes per worklist entry, grid-stride over the list.
// Each iteration runs one legal schedule of a gpumatch_pr_discharge_rcsr
// launch over the same list (discharge_vertex_short_rcsr, as in the
// one-block loop; the NumPy twin of all three is _pr_numpy.discharge); the
// races within an iteration are that kernel's.  Ring slots: iteration j
// zeroes counts[(j + 2) % 3], whose last readers read it before the
// barrier that ended iteration j - 1, as in the cooperative BFS; one
// thread per block copies the list length into shared memory after each
// barrier.
extern "C" __global__ void __launch_bounds__(COOP_DISCHARGE_BLOCK) gpumatch_pr_discharge_coop_rcsr(
    PR_DISCHARGE_ITERS_PARAMS)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long ntiles = ((long long)gridDim.x * blockDim.x) / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    const unsigned mask = tile_mask();
    volatile unsigned long long* vcounts = counts;
    __shared__ unsigned long long snap;
    if (threadIdx.x == 0) snap = vcounts[0];
    __syncthreads();
    unsigned long long size = snap;
    long long j = 0;
    while (j < max_iters && size > 0ull && (long long)size <= limit) {
        const idx_t* work = (j & 1) ? buf1 : buf0;
        idx_t* next = (j & 1) ? buf0 : buf1;
        unsigned long long* next_count = counts + (j + 1) % 3;
        if (tid == 0) counts[(j + 2) % 3] = 0ull;
        for (long long w = tid / TILE; w < (long long)size; w += ntiles) {
            const idx_t u = work[w];
            if ((long long)(indptr[u + 1] - indptr[u]) + (long long)(in_indptr[u + 1] - in_indptr[u]) > hub_deg)
                continue;  // a hub (never here: the caller checks)
            discharge_vertex_short_rcsr(u, lane, mask, indptr, indices, cap, flow, in_indptr, in_indices, in_to_out,
                                        height, excess, next, next_count, stamp, iter0 + (int)j, target, other,
                                        hlimit);
        }
        grid.sync();
        if (threadIdx.x == 0) snap = vcounts[(j + 1) % 3];
        __syncthreads();
        size = snap;
        ++j;
    }
    if (tid == 0) { state[0] = j; state[1] = (long long)size; }
}
#endif

// CUDA kernels of gpumatch's push-relabel maximum flow.  The NumPy twins
// (one legal schedule of each racy kernel: all reads, then all writes) are in
// gpumatch/flow/_pr_numpy.py; the host driver shared by both is in
// gpumatch/flow/_maxflow.py.
//
// Design after ECL-MaxFlow (VanAusdal & Burtscher 2025) and WBPR (Hsieh et
// al. 2024): a TILE of lanes (a warp or a part of one) works on one active
// vertex, finds its minimum-height residual neighbour with a tile reduction,
// and one lane pushes or relabels.  Races follow Hong's lock-free
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

__device__ __forceinline__ u64 tile_min(u64 v, unsigned mask)
{
#pragma unroll
    for (int off = TILE / 2; off > 0; off >>= 1) {
        u64 o = __shfl_xor_sync(mask, v, off, TILE);
        v = o < v ? o : v;
    }
    return v;
}

__device__ __forceinline__ i64 atomic_add_i64(i64* p, i64 v)
{
    // Two's complement: unsigned addition wraps exactly like signed addition.
    return (i64)atomicAdd((u64*)p, (u64)v);
}

// Append v to the next worklist unless it is already there in this
// iteration (stamp[v] == iter), a terminal, or at/above the height limit.
__device__ __forceinline__ void enqueue(idx_t v, int* stamp, int iter, idx_t* next,
                                        unsigned long long* next_count)
{
    if (atomicExch(stamp + v, iter) != iter) {
        unsigned long long at = atomicAdd(next_count, 1ull);
        next[at] = v;
    }
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
//   work       : nwork, active vertices of this iteration (distinct)
//   next       : V, out: active vertices of the next iteration
//   next_count : 1, out: length of next (zeroed by the host)
//   stamp      : V, iteration stamp of the last enqueue of each vertex
//   iter       : this iteration's stamp (unique per launch)
//   target     : the vertex flow is sent to (sink in phase 1, source in 2)
//   other      : the other terminal (never active, never enqueued)
//   hlimit     : heights >= hlimit are inactive (V)
// Thread mapping: TILE consecutive lanes per worklist entry; each tile runs
// up to CYCLES push/relabel operations on its vertex.  Benign races: the
// heights and residuals of neighbours are read while other tiles change them
// (Hong's lock-free argument); atomics keep flow and excess exact.
extern "C" __global__ void gpumatch_pr_discharge_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, i64* excess,
    const idx_t* __restrict__ work, long long nwork,
    idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE;
    if (w >= nwork) return;  // uniform within a tile
    const int lane = threadIdx.x & (TILE - 1);
    const unsigned mask = tile_mask();
    const idx_t u = work[w];
    const idx_t ob = indptr[u], oe = indptr[u + 1];
    const idx_t ib = in_indptr[u], ie = in_indptr[u + 1];
    const idx_t odeg = oe - ob;
    for (int c = 0; c < CYCLES; ++c) {
        i64 e = 0;
        int hu = 0;
        if (lane == 0) { e = __ldcg(excess + u); hu = height[u]; }
        e = __shfl_sync(mask, e, 0, TILE);
        hu = __shfl_sync(mask, hu, 0, TILE);
        if (e <= 0 || hu >= hlimit) break;
        u64 best = KEY_INF;
        for (idx_t p = ob + lane; p < oe; p += TILE) {
            if (cap[p] - __ldcg(flow + p) > 0) {
                u64 key = ((u64)(unsigned)__ldcg(height + indices[p]) << 32) | (u64)(p - ob);
                best = key < best ? key : best;
            }
        }
        for (idx_t j = ib + lane; j < ie; j += TILE) {
            if (__ldcg(flow + in_to_out[j]) > 0) {
                u64 key = ((u64)(unsigned)__ldcg(height + in_indices[j]) << 32) | (u64)(odeg + (j - ib));
                best = key < best ? key : best;
            }
        }
        best = tile_min(best, mask);
        if (best == KEY_INF) {  // no residual arc: u can never send its excess on
            if (lane == 0) height[u] = hlimit;
            break;
        }
        const int hmin = (int)(best >> 32);
        if (hmin < hu) {  // push
            if (lane == 0) {
                const idx_t slot = (idx_t)(best & 0xffffffffull);
                idx_t v, k;
                i64 r, sign;
                if (slot < odeg) { k = ob + slot; v = indices[k]; r = cap[k] - __ldcg(flow + k); sign = 1; }
                else { idx_t j = ib + (slot - odeg); k = in_to_out[j]; v = in_indices[j]; r = __ldcg(flow + k); sign = -1; }
                i64 d = e < r ? e : r;
                atomic_add_i64(flow + k, sign * d);
                atomic_add_i64(excess + u, -d);
                atomic_add_i64(excess + v, d);
                if (v != target && v != other && __ldcg(height + v) < hlimit)
                    enqueue(v, stamp, iter, next, next_count);
            }
        } else if (lane == 0) {  // relabel
            height[u] = hmin + 1 < hlimit ? hmin + 1 : hlimit;
        }
        __syncwarp(mask);
    }
    if (lane == 0 && __ldcg(excess + u) > 0 && height[u] < hlimit)
        enqueue(u, stamp, iter, next, next_count);
}

// gpumatch_pr_discharge_bcsr: one discharge step (bidirectional CSR).
//   bptr       : V + 1, pointers of the merged neighbour lists
//   bnbr       : B, neighbour of each entry (sorted within a vertex)
//   resid      : B, residual capacity of entry (u -> bnbr) (int64), updated
//   partner    : B, index of the entry (bnbr -> u)
//   height, excess, work, next, next_count, stamp, iter, target, other,
//   hlimit     : as in gpumatch_pr_discharge_rcsr
// Thread mapping and races: as in gpumatch_pr_discharge_rcsr; resid[e] is
// decreased only by the tile of u and increased only by the tile of bnbr[e].
extern "C" __global__ void gpumatch_pr_discharge_bcsr(
    const idx_t* __restrict__ bptr, const idx_t* __restrict__ bnbr,
    i64* resid, const idx_t* __restrict__ partner,
    int* height, i64* excess,
    const idx_t* __restrict__ work, long long nwork,
    idx_t* next, unsigned long long* next_count, int* stamp, int iter,
    long long target, long long other, int hlimit)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE;
    if (w >= nwork) return;
    const int lane = threadIdx.x & (TILE - 1);
    const unsigned mask = tile_mask();
    const idx_t u = work[w];
    const idx_t b = bptr[u], be = bptr[u + 1];
    for (int c = 0; c < CYCLES; ++c) {
        i64 e = 0;
        int hu = 0;
        if (lane == 0) { e = __ldcg(excess + u); hu = height[u]; }
        e = __shfl_sync(mask, e, 0, TILE);
        hu = __shfl_sync(mask, hu, 0, TILE);
        if (e <= 0 || hu >= hlimit) break;
        u64 best = KEY_INF;
        for (idx_t p = b + lane; p < be; p += TILE) {
            if (__ldcg(resid + p) > 0) {
                u64 key = ((u64)(unsigned)__ldcg(height + bnbr[p]) << 32) | (u64)(p - b);
                best = key < best ? key : best;
            }
        }
        best = tile_min(best, mask);
        if (best == KEY_INF) {
            if (lane == 0) height[u] = hlimit;
            break;
        }
        const int hmin = (int)(best >> 32);
        if (hmin < hu) {
            if (lane == 0) {
                const idx_t p = b + (idx_t)(best & 0xffffffffull);
                const idx_t v = bnbr[p];
                i64 r = __ldcg(resid + p);
                i64 d = e < r ? e : r;
                atomic_add_i64(resid + p, -d);
                atomic_add_i64(resid + partner[p], d);
                atomic_add_i64(excess + u, -d);
                atomic_add_i64(excess + v, d);
                if (v != target && v != other && __ldcg(height + v) < hlimit)
                    enqueue(v, stamp, iter, next, next_count);
            }
        } else if (lane == 0) {
            height[u] = hmin + 1 < hlimit ? hmin + 1 : hlimit;
        }
        __syncwarp(mask);
    }
    if (lane == 0 && __ldcg(excess + u) > 0 && height[u] < hlimit)
        enqueue(u, stamp, iter, next, next_count);
}

// gpumatch_pr_bfs_rcsr: one level of the global relabel, a worklist BFS from
// the target over reverse residual arcs (v is labelled from w when v -> w
// has residual capacity).
//   indptr, indices, cap, flow, in_indptr, in_indices, in_to_out : as above
//   height     : V, -1 = not reached yet; reached vertices get level + 1
//   frontier   : nf, vertices of height `level`
//   next       : V, out: vertices labelled level + 1
//   next_count : 1, out: length of next (zeroed by the host)
// Thread mapping: TILE lanes per frontier vertex, lanes stride over its in-
// then out-arcs.  Race: several tiles may reach one vertex; atomicCAS lets
// exactly one label and enqueue it.  No flow changes during a relabel.
extern "C" __global__ void gpumatch_pr_bfs_rcsr(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out,
    int* height, const idx_t* __restrict__ frontier, long long nf,
    idx_t* next, unsigned long long* next_count, int level)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE;
    if (w >= nf) return;
    const int lane = threadIdx.x & (TILE - 1);
    const idx_t x = frontier[w];
    for (idx_t j = in_indptr[x] + lane; j < in_indptr[x + 1]; j += TILE) {
        idx_t k = in_to_out[j];
        if (cap[k] - flow[k] > 0) {  // v -> x has spare capacity
            idx_t v = in_indices[j];
            if (atomicCAS(height + v, -1, level + 1) == -1) next[atomicAdd(next_count, 1ull)] = v;
        }
    }
    for (idx_t p = indptr[x] + lane; p < indptr[x + 1]; p += TILE) {
        if (flow[p] > 0) {  // x -> v carries flow: v -> x is residual
            idx_t v = indices[p];
            if (atomicCAS(height + v, -1, level + 1) == -1) next[atomicAdd(next_count, 1ull)] = v;
        }
    }
}

// gpumatch_pr_bfs_bcsr: one level of the global relabel (bidirectional CSR).
//   bptr, bnbr, resid, partner : as in gpumatch_pr_discharge_bcsr
//   height, frontier, nf, next, next_count, level : as in gpumatch_pr_bfs_rcsr
// Thread mapping and race: as in gpumatch_pr_bfs_rcsr.
extern "C" __global__ void gpumatch_pr_bfs_bcsr(
    const idx_t* __restrict__ bptr, const idx_t* __restrict__ bnbr,
    const i64* __restrict__ resid, const idx_t* __restrict__ partner,
    int* height, const idx_t* __restrict__ frontier, long long nf,
    idx_t* next, unsigned long long* next_count, int level)
{
    long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE;
    if (w >= nf) return;
    const int lane = threadIdx.x & (TILE - 1);
    const idx_t x = frontier[w];
    for (idx_t p = bptr[x] + lane; p < bptr[x + 1]; p += TILE) {
        if (resid[partner[p]] > 0) {  // bnbr[p] -> x is residual
            idx_t v = bnbr[p];
            if (atomicCAS(height + v, -1, level + 1) == -1) next[atomicAdd(next_count, 1ull)] = v;
        }
    }
}

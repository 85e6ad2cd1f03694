// @prepend flow/pr_common.cuh
// CUDA kernels of gpumatch's push-relabel maximum flow: discharge, global relabel (BFS),
// greedy start, return of stranded excess, and the hub and persistent variants.
// The shared notation, device helpers and tuning macros are in
// flow/pr_common.cuh, prepended to this file by gpumatch/_cuda.py.


// gpumatch_pr_discharge_rcsr: one discharge step of push-relabel (reverse CSR).
// Arc positions (indptr, in_indptr, in_to_out, partner, sink_arc, src_arc and
// every loop over arcs) are ofs_t, vertex ids idx_t (_common.cuh).
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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
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
    const ofs_t* __restrict__ bptr, const idx_t* __restrict__ bnbr,
    i64* resid, const ofs_t* __restrict__ partner,
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
        const ofs_t b = bptr[u], be = bptr[u + 1];
        for (int c = 0; c < CYCLES; ++c) {
            i64 e = 0;
            int hu = 0;
            if (lane == 0) { e = __ldcg(excess + u); hu = __ldcg(height + u); }
            e = __shfl_sync(mask, e, 0, TILE);
            hu = __shfl_sync(mask, hu, 0, TILE);
            if (e <= 0 || hu >= hlimit) break;
            i64 rem = e;
            u64 best = KEY_INF;
            for (ofs_t base = b; base < be && rem > 0; base += TILE) {
                const ofs_t p = base + lane;
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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
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
    const ofs_t* __restrict__ bptr, const idx_t* __restrict__ bnbr,
    const i64* __restrict__ resid, const ofs_t* __restrict__ partner,
    int* height, const idx_t* __restrict__ frontier, const unsigned long long* frontier_count,
    idx_t* next, unsigned long long* next_count, unsigned long long* zero_count, int level)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *zero_count = 0ull;
    const long long nf = (long long)*frontier_count;
    const long long ntiles = ((long long)gridDim.x * blockDim.x) / TILE;
    const int lane = threadIdx.x & (TILE - 1);
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / TILE; w < nf; w += ntiles) {
    const idx_t x = frontier[w];
    for (ofs_t p = bptr[x] + lane; p < bptr[x + 1]; p += TILE) {
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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const idx_t* __restrict__ heads, long long nheads, const ofs_t* __restrict__ sink_arc,
    i64* excess, long long source, long long sink)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nheads; i += stride) {
        const idx_t u = heads[i];
        if ((long long)u == sink) continue;
        i64 e = excess[u];
        const ofs_t pe = indptr[u + 1];
        for (ofs_t p = indptr[u]; p < pe && e > 0; ++p) {
            const idx_t v = indices[p];
            if ((long long)v == source) continue;
            const ofs_t k = (long long)v == sink ? p : sink_arc[v];
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
    i64* flow, const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
    const idx_t* __restrict__ xs, long long nx, const ofs_t* __restrict__ src_arc,
    i64* excess, long long source)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nx; i += stride) {
        const idx_t x = xs[i];
        i64 e = excess[x];
        const ofs_t je = in_indptr[x + 1];
        for (ofs_t j = in_indptr[x]; j < je && e > 0; ++j) {
            const idx_t u = in_indices[j];
            const ofs_t k = in_to_out[j];
            const ofs_t a = (long long)u == source ? k : src_arc[u];
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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
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
        const ofs_t ob = indptr[u], oe = indptr[u + 1];
        const ofs_t ib = in_indptr[u], ie = in_indptr[u + 1];
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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out, int* height,
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


// gpumatch_pr_has_dropped: whether a network has an arc that push-relabel
// leaves out: a self-loop u -> u or a capacity <= 0 (the set-up then drops
// them; without any it takes the arrays as they are).
//   indptr  : V + 1, out-arc pointers (canonical CSR: a row's heads sorted, distinct)
//   indices : nnz, head of each arc
//   cap     : nnz, capacity of each arc (int64)
//   out     : 1, set to 1 when such an arc exists (0 on entry)
// Thread mapping: grid-stride over max(V, nnz); thread i reads cap[i]
// (i < nnz) and binary-searches vertex i in its own row (i < V).  Benign
// race: every writer stores the same 1.
extern "C" __global__ void gpumatch_pr_has_dropped(
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices, const i64* __restrict__ cap,
    long long V, long long nnz, int* out)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long n = V > nnz ? V : nnz;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        bool drop = i < nnz && cap[i] <= 0;
        if (!drop && i < V) {
            long long lo = (long long)indptr[i], hi = (long long)indptr[i + 1];
            while (lo < hi) {                 // first head >= i
                const long long mid = lo + ((hi - lo) >> 1);
                if ((long long)indices[mid] < i) lo = mid + 1; else hi = mid;
            }
            drop = lo < (long long)indptr[i + 1] && (long long)indices[lo] == i;
        }
        if (drop) *out = 1;
    }
}

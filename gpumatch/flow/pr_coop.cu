// @prepend flow/pr_common.cuh
// Cooperative kernels of the push-relabel maximum flow: every level of a global
// relabel, or many discharge iterations, in ONE launch with grid-wide barriers.
// The shared notation, device helpers and tuning macros are in
// flow/pr_common.cuh, prepended to this file by gpumatch/_cuda.py.


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
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* __restrict__ flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out, int* height,
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

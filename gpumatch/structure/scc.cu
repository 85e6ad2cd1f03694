// CUDA kernels of the strongly connected components step of the
// Dulmage-Mendelsohn decomposition (trim + forward-backward reachability).
// The host-side driver is gpumatch/structure/_scc.py; the NumPy twins of
// these kernels are in gpumatch/structure/_scc_numpy.py.
//
// Notation shared by every kernel (k nodes, E arcs):
//   fptr, find : k + 1, E   CSR of the graph, node -> its successors
//   bptr, bind : k + 1, E   CSR of the transpose, node -> its predecessors
//                           (the order inside a row does not matter)
//   key        : k, long long, the group of each node.  Arcs between two
//                groups are ignored: a group is a union of whole strongly
//                connected components, and the driver splits groups only.
//   done       : k, unsigned char, 1 once the node's component is known;
//                done nodes and their arcs are ignored
// A node is "active" when done[v] == 0.

// ---------------------------------------------------------------------------
// gpumatch_scc_trim: one trim pass.
//   fptr .. done : see above
//   cls          : k, out: 0 = active without an active in-neighbour of its
//                  group (a source of the group), 2 = active with in- but
//                  without out-neighbours (a sink), 1 = active with both,
//                  3 = done
//   count        : 1, atomically incremented once per node of class 0 or 2
//   k            : number of nodes
// Thread mapping: grid-stride loop, one node per thread; each scan stops at
// the first arc that counts (self-loops never count).  No races: the
// kernel reads key and done and writes only cls[v] of its own node.
extern "C" __global__ void gpumatch_scc_trim(
    const idx_t* __restrict__ fptr, const idx_t* __restrict__ find,
    const idx_t* __restrict__ bptr, const idx_t* __restrict__ bind,
    const long long* __restrict__ key, const unsigned char* __restrict__ done,
    unsigned char* __restrict__ cls, unsigned long long* count, long long k)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < k; v += stride) {
        if (done[v]) {
            cls[v] = 3;
            continue;
        }
        long long kv = key[v];
        bool has_in = false, has_out = false;
        for (idx_t p = bptr[v]; p < bptr[v + 1]; ++p) {
            idx_t u = bind[p];
            if (u != (idx_t)v && !done[u] && key[u] == kv) {
                has_in = true;
                break;
            }
        }
        if (has_in) {
            for (idx_t p = fptr[v]; p < fptr[v + 1]; ++p) {
                idx_t u = find[p];
                if (u != (idx_t)v && !done[u] && key[u] == kv) {
                    has_out = true;
                    break;
                }
            }
        }
        unsigned char c = has_in ? (has_out ? 1 : 2) : 0;
        cls[v] = c;
        if (c != 1) atomicAdd(count, 1ULL);
    }
}

// Visit node u from a frontier node of group kv in direction `bit`: claim
// it once (atomicOr on its mark) and append it to the next frontier.
__device__ __forceinline__ void scc_visit(
    idx_t u, long long kv, int bit, const long long* __restrict__ key,
    const unsigned char* __restrict__ done, int* mark, idx_t* next, unsigned long long* next_count)
{
    if (done[u] || key[u] != kv) return;
    if (((volatile int*)mark)[u] & bit) return;        // cheap pre-check, the atomic decides
    if (atomicOr(&mark[u], bit) & bit) return;
    next[gm_append(next_count)] = u;
}

// ---------------------------------------------------------------------------
// gpumatch_scc_reach_step: one level of the forward and the backward
// breadth-first searches from the pivots (one pivot per group), both in one
// launch: blockIdx.y = 0 searches forward (fptr/find, mark bit 1),
// blockIdx.y = 1 backward (bptr/bind, mark bit 2).
//   fptr .. done : see above
//   mark         : k, int; bit 1 / bit 2: reached forward / backward from
//                  the pivot of the node's group (the pivots have both)
//   fcur, fnext  : forward frontier of this level (count in
//                  counts[level % 3]) and the next one (counts[(level+1) % 3])
//   bcur, bnext  : the same backward, counts in counts[3 + ...]
//   counts       : 6, two rings of three frontier sizes; this step zeroes
//                  slot (level + 2) % 3 of each ring (last read by the
//                  launch before, which has finished)
//   level        : the level this launch expands
// Thread mapping: grid-stride loop over the frontier with warp-aligned
// trips; a node of more than 32 arcs is scanned by the whole warp (lanes
// stride over its row), the others by their own thread.  A step on an
// empty frontier does nothing, so the host launches several levels before
// it reads the counts.  Benign race: two threads may reach one node; the
// atomicOr lets exactly one append it.  The order of each next frontier
// varies between runs; the marks do not.
extern "C" __global__ void gpumatch_scc_reach_step(
    const idx_t* __restrict__ fptr, const idx_t* __restrict__ find,
    const idx_t* __restrict__ bptr, const idx_t* __restrict__ bind,
    const long long* __restrict__ key, const unsigned char* __restrict__ done, int* mark,
    const idx_t* __restrict__ fcur, idx_t* __restrict__ fnext,
    const idx_t* __restrict__ bcur, idx_t* __restrict__ bnext,
    unsigned long long* counts, long long level)
{
    const int d = blockIdx.y;
    const idx_t* __restrict__ ptr = d ? bptr : fptr;
    const idx_t* __restrict__ ind = d ? bind : find;
    const idx_t* __restrict__ cur = d ? bcur : fcur;
    idx_t* __restrict__ next = d ? bnext : fnext;
    unsigned long long* ring = counts + 3 * d;
    const int bit = d ? 2 : 1;
    if (blockIdx.x == 0 && threadIdx.x == 0) ring[(level + 2) % 3] = 0ULL;
    long long size = (long long)ring[level % 3];
    unsigned long long* next_count = &ring[(level + 1) % 3];
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    long long start = ((long long)blockIdx.x * blockDim.x + threadIdx.x) & ~(long long)(GPUMATCH_WARP - 1);
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = start; base < size; base += stride) {
        long long i = base + lane;
        idx_t beg = 0, end = 0;
        long long kv = 0;
        if (i < size) {
            idx_t v = cur[i];
            beg = ptr[v];
            end = ptr[v + 1];
            kv = key[v];
        }
        bool heavy = (end - beg) > GPUMATCH_WARP;
        unsigned hmask = __ballot_sync(GPUMATCH_FULL_MASK, heavy);
        while (hmask) {
            int leader = __ffs(hmask) - 1;
            hmask &= hmask - 1;
            idx_t b = __shfl_sync(GPUMATCH_FULL_MASK, beg, leader);
            idx_t e = __shfl_sync(GPUMATCH_FULL_MASK, end, leader);
            long long hk = __shfl_sync(GPUMATCH_FULL_MASK, kv, leader);
            for (idx_t p = b + lane; p < e; p += GPUMATCH_WARP)
                scc_visit(ind[p], hk, bit, key, done, mark, next, next_count);
        }
        if (!heavy)
            for (idx_t p = beg; p < end; ++p)
                scc_visit(ind[p], kv, bit, key, done, mark, next, next_count);
    }
}

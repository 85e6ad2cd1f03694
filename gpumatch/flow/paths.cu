// CUDA kernels of the augmenting-path pass of a dynamic max-flow repair
// (gpumatch/flow/_paths.py; the NumPy twin is _paths._Numpy).
//
// A pass routes excess to demand along residual paths inside one side of
// the kept minimum cut, before any push-relabel: disjoint BFS trees grow
// level by level from the vertices with excess (the roots), each tree stops
// at its first target (the terminal `target`, or a vertex with a deficit),
// and every tree that found one pushes the bottleneck of its path.  The
// trees are vertex-disjoint, so the paths share no arc and augment at once
// without atomics on the flows.
//
// Network: reverse CSR (gpumatch/flow/pr.cu): out-arcs p of u in
// indptr[u] .. indptr[u + 1] (head indices[p], residual cap[p] - flow[p]),
// in-arcs j in in_indptr[u] .. in_indptr[u + 1] (tail in_indices[j], arc
// k = in_to_out[j], residual flow[k]: pushing along it cancels flow on k).
// A step is coded as p >= 0 (out-arc p) or -(k + 1) (cancel arc k).
//
// Per-vertex arrays (long long unless said): owner (tree = root vertex, -1
// none), pv / pa (parent vertex and the step into the vertex), fin_u /
// fin_a / fin_w (per root: the tree vertex next to the target, the step
// to it, the target; fin_u = -1 while the tree is open), excess (int64),
// mask (uint8: the side the pass stays in).

#define GM_FP_TILE 8

__device__ __forceinline__ i64 fp_resid(const i64* __restrict__ cap, const i64* flow, long long code)
{
    return code >= 0 ? cap[code] - flow[code] : flow[-code - 1];
}

// One candidate step u -> w of tree r (code as above).
__device__ __forceinline__ void fp_step(
    long long u, long long r, long long w, long long code, long long target, long long other,
    const unsigned char* __restrict__ mask, const i64* __restrict__ excess, long long* owner, long long* pv,
    long long* pa, long long* fin_u, long long* fin_a, long long* fin_w, long long* next, u64* next_count)
{
    if (w == other) return;
    if (w == target) {
        if (atomicCAS((u64*)(fin_u + r), (u64)-1ll, (u64)u) == (u64)-1ll) { fin_a[r] = code; fin_w[r] = w; }
        return;
    }
    if (!mask[w]) return;
    // most candidates are taken already: a plain read spares their atomics
    if (((volatile long long*)owner)[w] != -1) return;
    if (excess[w] < 0) {
        // a deficit ends one tree per pass: claim it, then close the tree
        if (atomicCAS((u64*)(owner + w), (u64)-1ll, (u64)r) != (u64)-1ll) return;
        if (atomicCAS((u64*)(fin_u + r), (u64)-1ll, (u64)u) == (u64)-1ll) { fin_a[r] = code; fin_w[r] = w; }
        else owner[w] = -1;   // the tree closed meanwhile: leave the deficit to another
        return;
    }
    if (atomicCAS((u64*)(owner + w), (u64)-1ll, (u64)r) != (u64)-1ll) return;
    pv[w] = u;
    pa[w] = code;
    next[gm_append(next_count)] = w;
}

// The level step of frontier vertex u (tile lane `lane`), shared by the
// multi-block kernel and the one-block loop.
__device__ __forceinline__ void fp_expand(
    long long u, int lane, const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, const i64* flow, const idx_t* __restrict__ in_indptr,
    const idx_t* __restrict__ in_indices, const idx_t* __restrict__ in_to_out, const unsigned char* __restrict__ mask,
    const i64* __restrict__ excess, long long target, long long other, long long* owner, long long* pv,
    long long* pa, long long* fin_u, long long* fin_a, long long* fin_w, long long* next, u64* next_count)
{
    const long long r = owner[u];
    if (((volatile long long*)fin_u)[r] != -1) return;   // the tree already ended
    for (long long p = (long long)indptr[u] + lane; p < (long long)indptr[u + 1]; p += GM_FP_TILE) {
        if (cap[p] - flow[p] <= 0) continue;
        fp_step(u, r, (long long)indices[p], p, target, other, mask, excess, owner, pv, pa, fin_u, fin_a, fin_w,
                next, next_count);
    }
    for (long long j = (long long)in_indptr[u] + lane; j < (long long)in_indptr[u + 1]; j += GM_FP_TILE) {
        const long long k = (long long)in_to_out[j];
        if (flow[k] <= 0) continue;
        fp_step(u, r, (long long)in_indices[j], -k - 1, target, other, mask, excess, owner, pv, pa, fin_u, fin_a,
                fin_w, next, next_count);
    }
}

#define FP_NET const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices, const i64* __restrict__ cap, \
    const i64* flow, const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices, \
    const idx_t* __restrict__ in_to_out, const unsigned char* __restrict__ mask, const i64* __restrict__ excess
#define FP_TREES long long* owner, long long* pv, long long* pa, long long* fin_u, long long* fin_a, long long* fin_w

// gpumatch_fp_level: one BFS level of every open tree.
//   indptr .. in_to_out : the network (idx_t), cap (int64), flow (int64)
//   frontier, size      : the level's vertices
//   next, next_count    : out, the next level (appended; *next_count is 0
//                         on entry)
//   zero_count          : zeroed by thread 0, for the next level's count
// Thread mapping: GM_FP_TILE lanes per frontier vertex, striding over its
// out-arcs, then its in-arcs.  Races: claims by atomicCAS on owner (a
// vertex joins one tree) and on fin_u (a tree ends once); a tree that
// closes during the level may still take vertices in it (they are then
// dead weight, never used by a path).
extern "C" __global__ void gpumatch_fp_level(
    FP_NET, const long long* __restrict__ frontier, long long size, long long target, long long other, FP_TREES,
    long long* next, u64* next_count, u64* zero_count)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long i = t / GM_FP_TILE;
    if (t == 0) *zero_count = 0ull;
    if (i >= size) return;
    fp_expand(frontier[i], (int)(t % GM_FP_TILE), indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, mask,
              excess, target, other, owner, pv, pa, fin_u, fin_a, fin_w, next, next_count);
}

// gpumatch_fp_level_loop: levels of gpumatch_fp_level in ONE block, with
// __syncthreads() between them, while the frontier is short: the long
// tails of small levels cost a few microseconds each instead of a launch
// and a read-back.
//   frontier, size : the first level's vertices
//   out0, out1     : level j writes out{j % 2} (neither may be `frontier`
//                    for j > 0; out0 may not be `frontier` at all)
//   counts         : 2, the lengths of out0 / out1
//   limit          : the loop stops before a level longer than this
//   max_levels     : or after this many levels
//   state          : 2, out: levels run and the length of the last list
// Thread mapping: GM_FP_TILE lanes per vertex, block-stride over the list.
// Races: as in gpumatch_fp_level.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_fp_level_loop(
    FP_NET, const long long* __restrict__ frontier, long long size, long long target, long long other, FP_TREES,
    long long* out0, long long* out1, u64* counts, long long limit, long long max_levels, long long* state)
{
    const int lane = (int)(threadIdx.x % GM_FP_TILE);
    const long long tiles = blockDim.x / GM_FP_TILE;
    const long long* cur = frontier;
    long long j = 0;
    while (j < max_levels && size > 0 && size <= limit) {
        long long* nxt = (j & 1) ? out1 : out0;
        u64* ncount = counts + (j & 1);
        if (threadIdx.x == 0) *ncount = 0ull;
        __syncthreads();
        for (long long i = threadIdx.x / GM_FP_TILE; i < size; i += tiles)
            fp_expand(cur[i], lane, indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, mask, excess,
                      target, other, owner, pv, pa, fin_u, fin_a, fin_w, nxt, ncount);
        __syncthreads();
        size = (long long)*((volatile u64*)ncount);
        cur = nxt;
        ++j;
        __syncthreads();   // every thread read the count before level j + 1 zeroes the other one
    }
    if (threadIdx.x == 0) { state[0] = j; state[1] = size; }
}

// gpumatch_fp_augment: push the bottleneck of every ended tree's path.
//   roots, nroots : the pass's roots
//   moved         : 2, out (+=): paths augmented, total amount pushed
// Thread mapping: one thread per root, walking its path twice (minimum,
// then push).  No races on flows (paths are vertex-disjoint, so they share
// no arc) nor on a root's or a claimed deficit's excess; the terminal
// target's excess takes atomic adds.
extern "C" __global__ void gpumatch_fp_augment(
    const i64* __restrict__ cap, i64* flow, i64* excess, const long long* __restrict__ roots, long long nroots,
    long long target, const long long* __restrict__ pv, const long long* __restrict__ pa,
    const long long* __restrict__ fin_u, const long long* __restrict__ fin_a, const long long* __restrict__ fin_w,
    long long* moved)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nroots) return;
    const long long r = roots[i];
    const long long last = fin_u[r];
    if (last < 0) return;
    const long long w = fin_w[r];
    i64 d = excess[r];
    if (w != target && -excess[w] < d) d = -excess[w];
    i64 x = fp_resid(cap, flow, fin_a[r]);
    if (x < d) d = x;
    for (long long v = last; v != r; v = pv[v]) {
        x = fp_resid(cap, flow, pa[v]);
        if (x < d) d = x;
    }
    if (d <= 0) return;
    long long code = fin_a[r];
    for (long long v = last;; v = pv[v]) {
        if (code >= 0) flow[code] += d; else flow[-code - 1] -= d;
        if (v == r) break;
        code = pa[v];
    }
    excess[r] -= d;
    if (w == target) atomicAdd((u64*)(excess + w), (u64)d); else excess[w] += d;
    atomicAdd((u64*)moved, 1ull);
    atomicAdd((u64*)(moved + 1), (u64)d);
}

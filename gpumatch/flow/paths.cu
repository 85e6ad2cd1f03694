// CUDA kernels of the augmenting-path pass of a dynamic max-flow repair
// (gpumatch/flow/_paths.py; the NumPy twin is _paths._Numpy).
//
// A pass routes excess to demand along residual paths inside one side of
// the kept minimum cut, before any push-relabel: disjoint BFS trees grow
// level by level from the vertices with excess (the roots, *forward*
// trees) and from the vertices with a deficit or a residual arc into the
// terminal `target` (*backward* trees, over the residual arcs into their
// vertices).  A forward tree stops at its first target: `target` itself,
// or a vertex of a backward tree that no other forward tree took yet (it
// then owns that tree's path down to its root, and on along the root's arc
// into `target` if it has one); a backward tree that reaches a vertex of
// an open forward tree ends that tree the same way.  Every tree that
// ended pushes the bottleneck of its path.  All trees, of both kinds, are
// vertex-disjoint, so the paths share no arc and augment at once without
// atomics on the flows.  The two sides meet after about half a path each,
// where a forward tree alone would first cover the whole ball of that
// radius.
//
// Network: reverse CSR (gpumatch/flow/pr.cu): out-arcs p of u in
// indptr[u] .. indptr[u + 1] (head indices[p], residual cap[p] - flow[p]),
// in-arcs j in in_indptr[u] .. in_indptr[u + 1] (tail in_indices[j], arc
// k = in_to_out[j], residual flow[k]: pushing along it cancels flow on k).
// A step is coded as p >= 0 (out-arc p) or -(k + 1) (cancel arc k).
//
// Per-vertex arrays (long long unless said): owner (forward tree = its root
// r >= 0, backward tree of backward root d = -2 - d, -1 none), pv / pa
// (forward vertex: parent vertex and the step into the vertex; backward
// vertex: the next vertex towards its root and the step to it), bclaim
// (per backward root: the forward tree that took its tree, -1 none), tstep
// (per backward root: GM_FP_NO_STEP for a deficit, else the root is a
// neighbour of the terminal `target` and this is its step to it), fin_u /
// fin_a / fin_w (per root: the last forward vertex of its path, the step
// out of it, and the vertex it enters: the target, or a backward vertex;
// fin_u = -1 while the tree is open), partner (per root: -1 for any
// backward tree, else the one backward root whose tree it may meet: a pass
// over pairs, _paths.route(pairs=...), where the terminals end no path),
// excess (int64), mask (uint8: the side the pass stays in).

#define GM_FP_TILE 8
#define GM_FP_NO_STEP (-(1ll << 62))

__device__ __forceinline__ i64 fp_resid(const i64* __restrict__ cap, const i64* flow, long long code)
{
    return code >= 0 ? cap[code] - flow[code] : flow[-code - 1];
}

// Forward tree r (open) meets the backward tree of root d along the step
// u -> w (u in r, w in d's tree): d is taken by one forward tree, a forward
// tree ends once.
__device__ __forceinline__ void fp_meet(
    long long r, long long d, long long u, long long w, long long code, long long* bclaim, long long* fin_u,
    long long* fin_a, long long* fin_w, const long long* __restrict__ partner)
{
    const long long want = partner[r];
    if (want >= 0 && want != d) return;   // a paired root meets its partner's tree alone
    if (((volatile long long*)bclaim)[d] != -1) return;
    if (atomicCAS((u64*)(bclaim + d), (u64)-1ll, (u64)r) != (u64)-1ll) return;
    if (atomicCAS((u64*)(fin_u + r), (u64)-1ll, (u64)u) == (u64)-1ll) { fin_a[r] = code; fin_w[r] = w; }
    else bclaim[d] = -1;   // r ended meanwhile: leave d to another tree
}

// One candidate step u -> w of forward tree r (code as above).
__device__ __forceinline__ void fp_step(
    long long u, long long r, long long w, long long code, long long target, long long other,
    const unsigned char* __restrict__ mask, long long* owner, long long* pv, long long* pa, long long* bclaim,
    long long* fin_u, long long* fin_a, long long* fin_w, const long long* __restrict__ partner, long long* next,
    u64* next_count)
{
    if (w == other) return;
    if (w == target) {
        if (atomicCAS((u64*)(fin_u + r), (u64)-1ll, (u64)u) == (u64)-1ll) { fin_a[r] = code; fin_w[r] = w; }
        return;
    }
    // the side and the owner read together (one round trip, not two); most
    // candidates are taken already: a plain read spares their atomics
    const bool inside = mask[w];
    long long o = ((volatile long long*)owner)[w];
    if (!inside) return;
    if (o == -1) {
        o = (long long)atomicCAS((u64*)(owner + w), (u64)-1ll, (u64)r);
        if (o == -1) {
            pv[w] = u;
            pa[w] = code;
            next[gm_append(next_count)] = w;
            return;
        }
    }
    // a backward tree's vertex (also one it took during this level): meet it
    if (o <= -2) fp_meet(r, -2 - o, u, w, code, bclaim, fin_u, fin_a, fin_w, partner);
}

// One candidate step x -> w into backward vertex w of root d.
__device__ __forceinline__ void fp_back_step(
    long long x, long long w, long long d, long long code, long long target, long long other,
    const unsigned char* __restrict__ mask, long long* owner, long long* pv, long long* pa, long long* bclaim,
    long long* fin_u, long long* fin_a, long long* fin_w, const long long* __restrict__ partner, long long* next,
    u64* next_count)
{
    if (x == target || x == other) return;
    const bool inside = mask[x];
    long long o = ((volatile long long*)owner)[x];
    if (!inside) return;
    if (o == -1) {
        o = (long long)atomicCAS((u64*)(owner + x), (u64)-1ll, (u64)(-2 - d));
        if (o == -1) {
            pv[x] = w;
            pa[x] = code;
            next[gm_append(next_count)] = x;
            return;
        }
    }
    // a forward tree's vertex: end that tree here if it is still open
    if (o >= 0 && ((volatile long long*)fin_u)[o] == -1)
        fp_meet(o, d, x, w, code, bclaim, fin_u, fin_a, fin_w, partner);
}

#define FP_NET const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices, const i64* __restrict__ cap, \
    const i64* flow, const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices, \
    const ofs_t* __restrict__ in_to_out, const unsigned char* __restrict__ mask
#define FP_NET_ARGS indptr, indices, cap, flow, in_indptr, in_indices, in_to_out, mask
#define FP_TREES long long* owner, long long* pv, long long* pa, long long* bclaim, long long* fin_u, \
    long long* fin_a, long long* fin_w, const long long* __restrict__ partner
#define FP_TREES_ARGS owner, pv, pa, bclaim, fin_u, fin_a, fin_w, partner

// The level step of forward frontier vertex u (tile lane `lane`), shared
// by the multi-block kernel and the one-block loop: the residual arcs out
// of u.  The lanes stride over one index range, the out-arcs then the
// in-arcs, so that a vertex of up to GM_FP_TILE arcs costs one round of
// loads; u's arc bounds are read with its owner, before the tree's check.
// A level is a chain of dependent loads and claims per tile, and its
// length is what a level costs (round 33 of the dynamic results).
__device__ __forceinline__ void fp_expand(
    long long u, int lane, FP_NET, long long target, long long other, FP_TREES, long long* next, u64* next_count)
{
    const long long r = owner[u];
    const long long ob = (long long)indptr[u], odeg = (long long)indptr[u + 1] - ob;
    const long long ib = (long long)in_indptr[u], deg = odeg + ((long long)in_indptr[u + 1] - ib);
    if (((volatile long long*)fin_u)[r] != -1) return;   // the tree already ended
    for (long long i = lane; i < deg; i += GM_FP_TILE) {
        // out-arc p = k: residual cap - flow; in-arc j (arc k into u): flow
        const bool out = i < odeg;
        const long long j = out ? ob + i : ib + (i - odeg);
        const long long k = out ? j : (long long)in_to_out[j];
        const long long w = (long long)(out ? indices : in_indices)[j];
        const i64 f = flow[k];
        if ((out ? cap[k] - f : f) <= 0) continue;
        fp_step(u, r, w, out ? k : -k - 1, target, other, mask, FP_TREES_ARGS, next, next_count);
    }
}

// The level step of backward frontier vertex w: the residual arcs into w
// (x -> w along out-arc k of x, or y -> w cancelling flow on w -> y), in
// one index range as in fp_expand.
__device__ __forceinline__ void fp_back_expand(
    long long w, int lane, FP_NET, long long target, long long other, FP_TREES, long long* next, u64* next_count)
{
    const long long d = -2 - owner[w];
    const long long ib = (long long)in_indptr[w], ideg = (long long)in_indptr[w + 1] - ib;
    const long long ob = (long long)indptr[w], deg = ideg + ((long long)indptr[w + 1] - ob);
    if (((volatile long long*)bclaim)[d] != -1) return;   // a forward tree took this one
    for (long long i = lane; i < deg; i += GM_FP_TILE) {
        // in-arc j (arc k = x -> w): residual cap - flow; out-arc p = k: flow
        const bool in = i < ideg;
        const long long j = in ? ib + i : ob + (i - ideg);
        const long long k = in ? (long long)in_to_out[j] : j;
        const long long x = (long long)(in ? in_indices : indices)[j];
        const i64 f = flow[k];
        if ((in ? cap[k] - f : f) <= 0) continue;
        fp_back_step(x, w, d, in ? k : -k - 1, target, other, mask, FP_TREES_ARGS, next, next_count);
    }
}

// Tile i of a level over the two frontiers: forward vertex cur[i] for
// i < size, else backward vertex bcur[i - size] (the caller bounds i by
// size plus the backward length it runs).
__device__ __forceinline__ void fp_visit(
    long long i, int lane, FP_NET, const long long* cur, long long size, const long long* bcur, long long target,
    long long other, FP_TREES, long long* next, u64* next_count, long long* bnext, u64* bnext_count)
{
    if (i < size)
        fp_expand(cur[i], lane, FP_NET_ARGS, target, other, FP_TREES_ARGS, next, next_count);
    else
        fp_back_expand(bcur[i - size], lane, FP_NET_ARGS, target, other, FP_TREES_ARGS, bnext, bnext_count);
}

// Whether the backward side grows a level (the twin of
// _paths._backward_runs; back_floor is 0 when the backward side is off).
__device__ __forceinline__ bool fp_backward_runs(long long bsize, long long size, double back_ratio,
                                                 long long back_floor)
{
    return bsize > 0 && (bsize <= back_floor || (double)bsize <= back_ratio * (double)size);
}

// gpumatch_fp_level: one BFS level of every open tree, forward and backward.
//   indptr .. in_to_out : the network (pointers and in_to_out ofs_t, ids idx_t), cap (int64), flow (int64)
//   frontier, size      : the forward level's vertices
//   bfrontier, bsize    : the backward level's vertices (bsize 0: the
//                         backward side skips this level)
//   next, bnext         : out, the next levels (appended)
//   counts              : 2, their lengths (0 on entry)
//   zero_counts         : 2, zeroed by thread 0, for the next level's counts
// Thread mapping: GM_FP_TILE lanes per frontier vertex (forward ones
// first), striding over its arcs.  Races: claims by atomicCAS on owner (a
// vertex joins one tree), bclaim (a backward tree joins one forward tree)
// and fin_u (a forward tree ends once); a tree that ends during the level
// may still take vertices in it (dead weight, never on a path); a claim
// that loses to the other side's claim of the same vertex meets it instead.
extern "C" __global__ void gpumatch_fp_level(
    FP_NET, const long long* __restrict__ frontier, long long size, const long long* __restrict__ bfrontier,
    long long bsize, long long target, long long other, FP_TREES, long long* next, long long* bnext, u64* counts,
    u64* zero_counts)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long i = t / GM_FP_TILE;
    const int lane = (int)(t % GM_FP_TILE);
    if (t == 0) { zero_counts[0] = 0ull; zero_counts[1] = 0ull; }
    if (i < size + bsize)
        fp_visit(i, lane, FP_NET_ARGS, frontier, size, bfrontier, target, other, FP_TREES_ARGS, next, counts, bnext,
                 counts + 1);
}

// gpumatch_fp_level_loop: levels of gpumatch_fp_level in ONE block, with
// __syncthreads() between them, while the frontiers are short: the long
// tails of small levels cost a few microseconds each instead of a launch
// and a read-back.
//   frontier, size   : the first forward level's vertices
//   bfrontier, bsize : the first backward level's vertices
//   out0, out1       : forward level j writes out{j % 2} (neither may be
//                      `frontier` for j > 0; out0 may not be it at all)
//   bout0, bout1     : the same for the backward levels (counted apart:
//                      the backward side skips some levels)
//   counts           : 4, the lengths of out0 / out1 / bout0 / bout1
//   limit            : the loop stops before a level with more vertices
//   max_levels       : or after this many levels; it also stops when the
//                      forward frontier is empty
//   back_ratio, back_floor : the backward side runs a level when its
//                      frontier is at most back_floor long or at most
//                      back_ratio times the forward one
//   state            : 4, out: forward levels run, the length of the last
//                      forward list, backward levels run, its length
// Thread mapping: GM_FP_TILE lanes per vertex, block-stride over the two
// lists.  Races: as in gpumatch_fp_level.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_fp_level_loop(
    FP_NET, const long long* __restrict__ frontier, long long size, const long long* __restrict__ bfrontier,
    long long bsize, long long target, long long other, FP_TREES, long long* out0, long long* out1,
    long long* bout0, long long* bout1, u64* counts, long long limit, long long max_levels, double back_ratio,
    long long back_floor, long long* state)
{
    const int lane = (int)(threadIdx.x % GM_FP_TILE);
    const long long tiles = blockDim.x / GM_FP_TILE;
    const long long* cur = frontier;
    const long long* bcur = bfrontier;
    long long j = 0, jb = 0;
    while (j < max_levels && size > 0) {
        const bool runb = fp_backward_runs(bsize, size, back_ratio, back_floor);
        const long long nb = runb ? bsize : 0;
        if (size + nb > limit) break;
        long long* nxt = (j & 1) ? out1 : out0;
        long long* bnxt = (jb & 1) ? bout1 : bout0;
        u64* ncount = counts + (j & 1);
        u64* bncount = counts + 2 + (jb & 1);
        if (threadIdx.x == 0) { *ncount = 0ull; *bncount = 0ull; }
        __syncthreads();
        for (long long i = threadIdx.x / GM_FP_TILE; i < size + nb; i += tiles)
            fp_visit(i, lane, FP_NET_ARGS, cur, size, bcur, target, other, FP_TREES_ARGS, nxt, ncount, bnxt, bncount);
        __syncthreads();
        size = (long long)*((volatile u64*)ncount);
        cur = nxt;
        ++j;
        if (runb) {
            bsize = (long long)*((volatile u64*)bncount);
            bcur = bnxt;
            ++jb;
        }
        __syncthreads();   // every thread read the counts before the next level zeroes the other ones
    }
    if (threadIdx.x == 0) { state[0] = j; state[1] = size; state[2] = jb; state[3] = bsize; }
}

// gpumatch_fp_hub_level: the first level of the forward tree of ONE root
// with many arcs (the source, root of phase F's passes in
// _paths.route(source_root=True)): its residual arcs spread over the grid,
// where gpumatch_fp_level would give them to one tile's GM_FP_TILE lanes
// (on a source of a million arcs, ~0.2 s a level on an H100).
//   root        : the root (owned by its own tree, which is open)
//   next, count : out, appended: the vertices its tree took (count zeroed
//                 by the caller)
// Thread mapping: grid-stride over the root's out-arcs, then its in-arcs
// (bounds read on the device).  Races: as in gpumatch_fp_level.
extern "C" __global__ void gpumatch_fp_hub_level(
    FP_NET, long long root, long long target, long long other, FP_TREES, long long* next, u64* count)
{
    const long long a = (long long)indptr[root], b = (long long)indptr[root + 1];
    const long long c = (long long)in_indptr[root], e = (long long)in_indptr[root + 1];
    const long long n = (b - a) + (e - c);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        if (((volatile long long*)fin_u)[root] != -1) return;   // the tree already ended
        if (i < b - a) {
            const long long p = a + i;
            if (cap[p] - flow[p] <= 0) continue;
            fp_step(root, root, (long long)indices[p], p, target, other, mask, FP_TREES_ARGS, next, count);
        } else {
            const long long j = c + (i - (b - a));
            const long long k = (long long)in_to_out[j];
            if (flow[k] <= 0) continue;
            fp_step(root, root, (long long)in_indices[j], -k - 1, target, other, mask, FP_TREES_ARGS, next, count);
        }
    }
}

// gpumatch_fp_target_steps: the vertices with a residual arc into `target`
// (found once per call of the pass; the passes then only check the arcs).
//   mask        : here the vertices that may root a backward tree (the
//                 pass's side without the terminals)
//   near, steps : out, appended: the vertex and its step into `target`
//                 (room for the target's degree)
//   count       : out (+=), their number
// Thread mapping: grid-stride over the target's in-arcs, then its out-arcs
// (bounds read on the device).  A vertex with arcs both ways may be listed
// twice.
extern "C" __global__ void gpumatch_fp_target_steps(
    FP_NET, long long target, long long* near, long long* steps, u64* count)
{
    const long long a = (long long)in_indptr[target], b = (long long)in_indptr[target + 1];
    const long long c = (long long)indptr[target], e = (long long)indptr[target + 1];
    const long long n = (b - a) + (e - c);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long x, code;
        i64 res;
        if (i < b - a) {
            const long long k = (long long)in_to_out[a + i];        // arc x -> target
            x = (long long)in_indices[a + i];
            code = k;
            res = cap[k] - flow[k];
        } else {
            const long long p = c + (i - (b - a));                 // arc target -> x: cancel its flow
            x = (long long)indices[p];
            code = -p - 1;
            res = flow[p];
        }
        if (res > 0 && mask[x]) {
            const u64 slot = gm_append(count);
            near[slot] = x;
            steps[slot] = code;
        }
    }
}

// gpumatch_fp_setup: the set-up of a pass, step 1 of 2 (one launch each
// instead of some twenty array operations and four read-backs).
//   V           : vertices
//   inner       : uint8, the side without the terminals
//   roots, sinks: out, appended: inner vertices with excess / with a deficit
//   counts      : 3, out (+=): len(roots), len(sinks), total excess of the roots
// Resets owner, bclaim, tstep and fin_u of every vertex, then owns each
// root by itself and each deficit by its backward tree.
// Thread mapping: grid-stride over the vertices.  No races (each thread
// writes its own vertex; appends are atomic).
extern "C" __global__ void gpumatch_fp_setup(
    long long V, const unsigned char* __restrict__ inner, const i64* __restrict__ excess, long long* owner,
    long long* bclaim, long long* tstep, long long* fin_u, long long* roots, long long* sinks, u64* counts)
{
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V;
         v += (long long)gridDim.x * blockDim.x) {
        long long o = -1;
        bclaim[v] = -1;
        tstep[v] = GM_FP_NO_STEP;
        fin_u[v] = -1;
        if (inner[v]) {
            const i64 e = excess[v];
            if (e > 0) {
                o = v;
                roots[gm_append(counts)] = v;
                atomicAdd(counts + 2, (u64)e);
            } else if (e < 0) {
                o = -2 - v;
                sinks[gm_append(counts + 1)] = v;
            }
        }
        owner[v] = o;
    }
}

// gpumatch_fp_pair_clear / gpumatch_fp_pair_set: before each pass over
// pairs (_paths.route(pairs=...)), the roots' side `roots` (uint8, what
// gpumatch_fp_setup reads as its mask) and `partner` for pair i, tail
// tails[i] (excess) and head heads[i] (deficit).  clear: both ends leave
// `roots`, the tail's partner becomes V (no backward root).  set: a pair
// that was on in the last pass (on[i]) and whose tree found no path
// (fin_u of its tail still -1) drops out for good (dropped[i]); a pair on
// for this pass (not dropped, excess at the tail, a deficit at the head)
// puts both ends in `roots` and its head as the tail's partner.
//   tails, heads, n : the pairs (int64)
//   excess, fin_u   : the pass's arrays
//   first           : 1 before the first pass (no last pass to read)
//   on, dropped     : per pair, uint8
// Thread mapping: one thread per pair, in two launches (all clears before
// any set).  Races: a tail of two pairs on keeps one partner (either).
extern "C" __global__ void gpumatch_fp_pair_clear(
    const long long* __restrict__ tails, const long long* __restrict__ heads, long long n, unsigned char* roots,
    long long* partner, long long V)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    roots[tails[i]] = 0;
    roots[heads[i]] = 0;
    partner[tails[i]] = V;
}

extern "C" __global__ void gpumatch_fp_pair_set(
    const long long* __restrict__ tails, const long long* __restrict__ heads, long long n,
    const i64* __restrict__ excess, const long long* __restrict__ fin_u, int first, unsigned char* on,
    unsigned char* dropped, unsigned char* roots, long long* partner)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const long long t = tails[i], h = heads[i];
    if (!first && on[i] && fin_u[t] < 0) dropped[i] = 1;
    const bool o = !dropped[i] && excess[t] > 0 && excess[h] < 0;
    on[i] = o;
    if (o) {
        roots[t] = 1;
        roots[h] = 1;
        partner[t] = h;
    }
}

// gpumatch_fp_setup_near: step 2 of the set-up: the target's neighbours
// (from gpumatch_fp_target_steps) with neither excess nor a deficit whose
// arc into the target still has a residual root backward trees too.
//   near, steps, n : the neighbours and their steps
//   sinks, counts  : as in gpumatch_fp_setup (appended after the deficits)
// Thread mapping: one thread per listed neighbour.  Races: a vertex listed
// twice is taken by the first CAS on its owner.
extern "C" __global__ void gpumatch_fp_setup_near(
    const i64* __restrict__ cap, const i64* flow, const i64* __restrict__ excess,
    const long long* __restrict__ near, const long long* __restrict__ steps, long long n, long long* owner,
    long long* tstep, long long* sinks, u64* counts)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const long long x = near[i], code = steps[i];
    if (excess[x] != 0 || fp_resid(cap, flow, code) <= 0) return;
    if (atomicCAS((u64*)(owner + x), (u64)-1ll, (u64)(-2 - x)) != (u64)-1ll) return;
    tstep[x] = code;
    sinks[gm_append(counts + 1)] = x;
}

// gpumatch_fp_augment: push the bottleneck of every ended tree's path.
//   roots, nroots : the pass's roots
//   tstep         : per backward root, as above
//   moved         : 2, out (+=): paths augmented, total amount pushed
// Thread mapping: one thread per root, walking its path twice (minimum,
// then push): the forward part from fin_u back to the root, the step
// fin_a, the backward part from fin_w down to its root, and that root's
// step to the target when it has one.  No races on flows (paths are
// vertex-disjoint, so they share no arc) nor on a root's or a taken
// deficit's excess; the terminal target's excess takes atomic adds.
extern "C" __global__ void gpumatch_fp_augment(
    const i64* __restrict__ cap, i64* flow, i64* excess, const long long* __restrict__ roots, long long nroots,
    long long target, const long long* __restrict__ owner, const long long* __restrict__ pv,
    const long long* __restrict__ pa, const long long* __restrict__ tstep, const long long* __restrict__ fin_u,
    const long long* __restrict__ fin_a, const long long* __restrict__ fin_w, long long* moved)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nroots) return;
    const long long r = roots[i];
    const long long last = fin_u[r];
    if (last < 0) return;
    const long long w = fin_w[r];
    const long long b = w == target ? -1 : -2 - owner[w];            // the backward root
    const long long ts = b >= 0 ? tstep[b] : GM_FP_NO_STEP;            // its step to the target
    i64 d = excess[r];
    if (b >= 0 && ts == GM_FP_NO_STEP && -excess[b] < d) d = -excess[b];
    i64 x = fp_resid(cap, flow, fin_a[r]);
    if (x < d) d = x;
    for (long long v = last; v != r; v = pv[v]) {
        x = fp_resid(cap, flow, pa[v]);
        if (x < d) d = x;
    }
    if (b >= 0) {
        for (long long v = w; v != b; v = pv[v]) {
            x = fp_resid(cap, flow, pa[v]);
            if (x < d) d = x;
        }
        if (ts != GM_FP_NO_STEP) {
            x = fp_resid(cap, flow, ts);
            if (x < d) d = x;
        }
    }
    if (d <= 0) return;
    long long code = fin_a[r];
    for (long long v = last;; v = pv[v]) {
        if (code >= 0) flow[code] += d; else flow[-code - 1] -= d;
        if (v == r) break;
        code = pa[v];
    }
    if (b >= 0) {
        for (long long v = w; v != b; v = pv[v]) {
            code = pa[v];
            if (code >= 0) flow[code] += d; else flow[-code - 1] -= d;
        }
        if (ts != GM_FP_NO_STEP) {
            if (ts >= 0) flow[ts] += d; else flow[-ts - 1] -= d;
        }
    }
    if (b >= 0 && ts == GM_FP_NO_STEP) excess[b] += d;
    else atomicAdd((u64*)(excess + target), (u64)d);
    excess[r] -= d;
    atomicAdd((u64*)moved, 1ull);
    atomicAdd((u64*)(moved + 1), (u64)d);
}

#ifdef GPUMATCH_COOPERATIVE
#include <cooperative_groups.h>

#ifndef FP_COOP_BLOCK
#define FP_COOP_BLOCK 512
#endif

// gpumatch_fp_level_coop: the levels of gpumatch_fp_level_loop over the
// whole grid of ONE cooperative launch (co-resident blocks, grid.sync()
// between levels).  The one-block loop runs each level's few hundred
// frontier vertices through 1024 threads, several tiles per thread, and
// each tile is a chain of dependent loads and claims: about 30 us a level
// on the unit network, where a pass runs 40-80 levels.  Here a level's
// tiles run side by side, and long levels run in the same launch too
// instead of a multi-block launch and a read-back each.
//   FP_NET, frontier / size, bfrontier / bsize, target, other, FP_TREES,
//   out0, out1, bout0, bout1, back_ratio, back_floor : as in
//                      gpumatch_fp_level_loop (same lists, same parity)
//   counts           : 6; counts[0..2] the ring of forward lengths (forward
//                      level j appends to counts[(j + 1) % 3] and zeroes
//                      counts[(j + 2) % 3]), counts[3..5] the backward ring
//                      (indexed by the backward levels run)
//   short_len, max_long : a level whose two frontiers hold more than
//                      short_len vertices is long; the loop stops before a
//                      long level when max_long of them ran
//   max_levels       : levels at most; it also stops when the forward
//                      frontier is empty
//   state            : 5, out: forward levels run, the length of the last
//                      forward list, backward levels run, its length, long
//                      levels run
// Thread mapping: GM_FP_TILE lanes per vertex, grid-stride over the two
// lists.  Races: as in gpumatch_fp_level.  Ring slots are zeroed two
// barriers after their last reader (as in gpumatch_pr_bfs_coop_rcsr); one
// thread per block copies the lengths into shared memory after a barrier.
extern "C" __global__ void __launch_bounds__(FP_COOP_BLOCK) gpumatch_fp_level_coop(
    FP_NET, const long long* frontier, long long size, const long long* bfrontier, long long bsize,
    long long target, long long other, FP_TREES, long long* out0, long long* out1, long long* bout0,
    long long* bout1, u64* counts, long long short_len, long long max_long, long long max_levels,
    double back_ratio, long long back_floor, long long* state)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long ntiles = (long long)gridDim.x * blockDim.x / GM_FP_TILE;
    const int lane = (int)(threadIdx.x % GM_FP_TILE);
    __shared__ u64 snap[2];
    if (tid == 0) { counts[1] = 0ull; counts[4] = 0ull; }
    grid.sync();
    const long long* cur = frontier;
    const long long* bcur = bfrontier;
    long long j = 0, jb = 0, nlong = 0;
    while (j < max_levels && size > 0) {
        const bool runb = fp_backward_runs(bsize, size, back_ratio, back_floor);
        const long long nb = runb ? bsize : 0;
        if (size + nb > short_len) {
            if (nlong >= max_long) break;
            ++nlong;
        }
        long long* nxt = (j & 1) ? out1 : out0;
        long long* bnxt = (jb & 1) ? bout1 : bout0;
        u64* ncount = counts + (j + 1) % 3;
        u64* bncount = counts + 3 + (jb + 1) % 3;
        if (tid == 0) {
            counts[(j + 2) % 3] = 0ull;
            if (runb) counts[3 + (jb + 2) % 3] = 0ull;
        }
        for (long long i = tid / GM_FP_TILE; i < size + nb; i += ntiles)
            fp_visit(i, lane, FP_NET_ARGS, cur, size, bcur, target, other, FP_TREES_ARGS, nxt, ncount, bnxt, bncount);
        grid.sync();
        if (threadIdx.x == 0) {
            snap[0] = *((volatile u64*)ncount);
            snap[1] = runb ? *((volatile u64*)bncount) : 0ull;
        }
        __syncthreads();
        size = (long long)snap[0];
        cur = nxt;
        ++j;
        if (runb) {
            bsize = (long long)snap[1];
            bcur = bnxt;
            ++jb;
        }
    }
    if (tid == 0) { state[0] = j; state[1] = size; state[2] = jb; state[3] = bsize; state[4] = nlong; }
}
#endif

// CUDA kernels of the set-up and output of gpumatch's push-relabel maximum
// flow: the initial preflow, exact labels around a global relabel, the
// worklist of active vertices, hub detection, anti-parallel arc pairs and the
// skew-symmetric flow matrix.  Each replaces a chain of CuPy element-wise
// operations, every one of which CuPy compiles on a first call (about 0.1 s
// each on an empty kernel cache); this module ships pre-built.  -DIDX (vertex
// ids) and -DOFF (arc positions: indptr, partner; _common.cuh).

// Row of the arc at CSR position k: the last r with indptr[r] <= k.
__device__ __forceinline__ long long arc_row(const ofs_t* __restrict__ indptr, long long V, long long k)
{
    long long lo = 0, hi = V;            // indptr[lo] <= k < indptr[hi]
    while (hi - lo > 1) {
        const long long mid = lo + ((hi - lo) >> 1);
        if ((long long)indptr[mid] <= k) lo = mid; else hi = mid;
    }
    return lo;
}


// gpumatch_pr_sum_split: exact sum of non-negative int64 values, as two
// partial sums that cannot wrap below 2**32 terms.
//   cap  : values cap[lo:hi] (int64, >= 0)
//   out  : 2, out[0] += sum of the high 32-bit halves, out[1] += sum of the
//          low halves (zero on entry)
// Thread mapping: grid-stride over [lo, hi), one atomicAdd per thread.
extern "C" __global__ void gpumatch_pr_sum_split(const i64* __restrict__ cap, long long lo, long long hi, u64* out)
{
    u64 h = 0, l = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = lo + (long long)blockIdx.x * blockDim.x + threadIdx.x; k < hi; k += stride) {
        const u64 c = (u64)cap[k];
        h += c >> 32;
        l += c & 0xffffffffull;
    }
    if (h) atomicAdd(out, h);
    if (l) atomicAdd(out + 1, l);
}


// gpumatch_pr_saturate: the initial preflow, every arc out of the source full.
//   indices : head of each arc; cap : capacity (int64); flow : flow, out
//   excess  : V, excess (int64), the heads' += their arc's capacity
// Thread mapping: one thread per source arc k in [ps, pe) (heads distinct:
// canonical CSR, so plain stores).
extern "C" __global__ void gpumatch_pr_saturate(const idx_t* __restrict__ indices, const i64* __restrict__ cap,
                                                i64* flow, i64* excess, long long ps, long long pe)
{
    const long long k = ps + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= pe) return;
    flow[k] = cap[k];
    excess[indices[k]] += cap[k];
}


// gpumatch_pr_heights_init: labels before a global relabel's BFS: 0 at the
// target, hlimit at the other terminal, -1 (unvisited) elsewhere.
// gpumatch_pr_heights_finish: unvisited vertices (-1) get hlimit.
//   height : V (int32). Thread mapping: grid-stride over the vertices.
extern "C" __global__ void gpumatch_pr_heights_init(int* height, long long V, long long target, long long other,
                                                    int hlimit)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride)
        height[v] = v == target ? 0 : (v == other ? hlimit : -1);
}

extern "C" __global__ void gpumatch_pr_heights_finish(int* height, long long V, int hlimit)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride)
        if (height[v] == -1) height[v] = hlimit;
}


// gpumatch_pr_active_count / gpumatch_pr_active_write: the worklist after a
// global relabel, in ascending vertex order (the discharge kernels then read
// neighbouring vertices' arcs together): the vertices with excess > 0 below
// hlimit, the target and `skip` excepted (skip = -1: none).
//   excess : V (int64); height : V (int32)
//   items  : vertices per thread; block b covers the ACTIVE_BLOCK * items
//            vertices from b * ACTIVE_BLOCK * items, a round of ACTIVE_BLOCK
//            consecutive ones at a time
//   counts : one per block, out (count): the block's active vertices
//   out    : out (write): the list; total : 1, out: its length (last block)
// Thread mapping: blocks of exactly ACTIVE_BLOCK threads, one vertex per
// thread and round.  The write kernel's block first sums the counts of the
// blocks before it (at most a few thousand), then places each round's
// vertices by warp ballots and the warps' totals.  No races: every slot has
// one writer.
#define ACTIVE_BLOCK 256

__device__ __forceinline__ bool is_active(const i64* __restrict__ excess, const int* __restrict__ height,
                                          long long V, long long v, long long target, long long skip, int hlimit)
{
    return v < V && excess[v] > 0 && height[v] < hlimit && v != target && v != skip;
}

extern "C" __global__ void __launch_bounds__(ACTIVE_BLOCK) gpumatch_pr_active_count(
    const i64* __restrict__ excess, const int* __restrict__ height, long long V, long long target, long long skip,
    int hlimit, long long items, unsigned* counts)
{
    __shared__ unsigned warp_sum[ACTIVE_BLOCK / GPUMATCH_WARP];
    const long long start = (long long)blockIdx.x * ACTIVE_BLOCK * items + threadIdx.x;
    unsigned c = 0;
    for (long long r = 0; r < items; ++r)
        c += is_active(excess, height, V, start + r * ACTIVE_BLOCK, target, skip, hlimit);
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) c += __shfl_down_sync(GPUMATCH_FULL_MASK, c, off);
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0) warp_sum[threadIdx.x / GPUMATCH_WARP] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned t = 0;
        for (int w = 0; w < ACTIVE_BLOCK / GPUMATCH_WARP; ++w) t += warp_sum[w];
        counts[blockIdx.x] = t;
    }
}

extern "C" __global__ void __launch_bounds__(ACTIVE_BLOCK) gpumatch_pr_active_write(
    const i64* __restrict__ excess, const int* __restrict__ height, long long V, long long target, long long skip,
    int hlimit, long long items, const unsigned* __restrict__ counts, idx_t* out, u64* total)
{
    __shared__ u64 part[ACTIVE_BLOCK / GPUMATCH_WARP];
    __shared__ unsigned warp_count[ACTIVE_BLOCK / GPUMATCH_WARP];
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1), warp = threadIdx.x / GPUMATCH_WARP;
    u64 s = 0;
    for (long long b = threadIdx.x; b < (long long)blockIdx.x; b += ACTIVE_BLOCK) s += counts[b];
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) s += __shfl_down_sync(GPUMATCH_FULL_MASK, s, off);
    if (lane == 0) part[warp] = s;
    __syncthreads();
    u64 base = 0;
    for (int w = 0; w < ACTIVE_BLOCK / GPUMATCH_WARP; ++w) base += part[w];
    const long long start = (long long)blockIdx.x * ACTIVE_BLOCK * items + threadIdx.x;
    for (long long r = 0; r < items; ++r) {
        const long long v = start + r * ACTIVE_BLOCK;
        const bool flag = is_active(excess, height, V, v, target, skip, hlimit);
        const unsigned ballot = __ballot_sync(GPUMATCH_FULL_MASK, flag);
        if (lane == 0) warp_count[warp] = __popc(ballot);
        __syncthreads();
        unsigned before = 0, round = 0;
        for (int w = 0; w < ACTIVE_BLOCK / GPUMATCH_WARP; ++w) {
            before += w < warp ? warp_count[w] : 0u;
            round += warp_count[w];
        }
        if (flag) out[base + before + __popc(ballot & ((1u << lane) - 1u))] = (idx_t)v;
        base += round;
        __syncthreads();             // warp_count is rewritten by the next round
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *total = base;
}


// gpumatch_pr_hubs: vertices with more than hub_deg arcs (out + in).
//   indptr, in_indptr : V + 1, out- and in-arc pointers
//   out : V, out: the hubs (in no particular order); count : 1 (zero on entry)
// Thread mapping: grid-stride over the vertices.
extern "C" __global__ void gpumatch_pr_hubs(const ofs_t* __restrict__ indptr, const ofs_t* __restrict__ in_indptr,
                                            long long V, long long hub_deg, idx_t* out, u64* count)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride) {
        const long long deg = (long long)(indptr[v + 1] - indptr[v]) + (long long)(in_indptr[v + 1] - in_indptr[v]);
        if (deg > hub_deg) out[gm_append(count)] = (idx_t)v;
    }
}


// gpumatch_pr_pair_index: the anti-parallel partner of every arc.
//   indptr, indices : canonical CSR (a row's heads sorted, distinct), E arcs
//   partner : E, out: position of arc v -> u for the arc u -> v at k, else
//             -1; a self-loop is its own partner
//   count   : 2, out: count[0] arcs u -> v with u < v that have a partner
//             (the pairs), count[1] arcs with a partner, self-loops included
//             (zero on entry)
// Thread mapping: grid-stride over the arcs; each finds its row and
// binary-searches its tail in its head's row.
extern "C" __global__ void gpumatch_pr_pair_index(const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
                                                  long long V, long long E, ofs_t* partner, u64* count)
{
    u64 pairs = 0, paired = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < E; k += stride) {
        const long long u = arc_row(indptr, V, k), v = (long long)indices[k];
        long long p = -1;
        if (v == u) {
            p = k;
        } else {
            long long lo = (long long)indptr[v], hi = (long long)indptr[v + 1];
            const long long end = hi;
            while (lo < hi) {
                const long long mid = lo + ((hi - lo) >> 1);
                if ((long long)indices[mid] < u) lo = mid + 1; else hi = mid;
            }
            if (lo < end && (long long)indices[lo] == u) {
                p = lo;
                if (u < v) ++pairs;
            }
        }
        partner[k] = (ofs_t)p;
        paired += p >= 0;
    }
    if (pairs) atomicAdd(count, pairs);
    if (paired) atomicAdd(count + 1, paired);
}


// gpumatch_pr_pair_share: flow round anti-parallel pairs and all flow.
//   flow : E (int64, >= 0); partner : E (gpumatch_pr_pair_index)
//   out  : 2 doubles, out[0] += sum of all flow, out[1] += sum over pairs
//          (k < partner[k]) of min(flow[k], flow[partner[k]]) (zero on entry)
// Thread mapping: grid-stride over the arcs; a warp reduction, then one
// atomicAdd per warp (double: a share, not an exact sum).
extern "C" __global__ void gpumatch_pr_pair_share(const i64* __restrict__ flow, const ofs_t* __restrict__ partner,
                                                  long long E, double* out)
{
    double mass = 0.0, pairs = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < E; k += stride) {
        const i64 f = flow[k];
        mass += (double)f;
        const long long p = (long long)partner[k];
        if (p > k) {
            const i64 g = flow[p];
            pairs += (double)(f < g ? f : g);
        }
    }
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
        mass += __shfl_down_sync(GPUMATCH_FULL_MASK, mass, off);
        pairs += __shfl_down_sync(GPUMATCH_FULL_MASK, pairs, off);
    }
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0) {
        if (mass != 0.0) atomicAdd(out, mass);
        if (pairs != 0.0) atomicAdd(out + 1, pairs);
    }
}


// gpumatch_pr_flow_keys: the entries of the skew-symmetric flow matrix
// F = flow - flow^T as (row * V + column) keys and values, to be sorted.
//   indptr, indices : the network's canonical CSR, E arcs; flow : E (int64)
//   partner : E (gpumatch_pr_pair_index)
//   keys, vals : 2E, out: entry k < E is arc u -> v at (u, v) with
//                flow[k] - flow[partner[k]]; entry E + k is (v, u) with
//                -flow[k], or the key LLONG_MAX (dropped, sorts last) when
//                arc k has a partner (whose own entry k already holds it)
// Thread mapping: grid-stride over the arcs.
extern "C" __global__ void gpumatch_pr_flow_keys(const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
                                                 const i64* __restrict__ flow, const ofs_t* __restrict__ partner,
                                                 long long V, long long E, i64* keys, i64* vals)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < E; k += stride) {
        const long long u = arc_row(indptr, V, k), v = (long long)indices[k];
        const long long p = (long long)partner[k];
        keys[k] = u * V + v;
        vals[k] = flow[k] - (p >= 0 ? flow[p] : 0);
        keys[E + k] = p >= 0 ? 0x7fffffffffffffffll : v * V + u;
        vals[E + k] = -flow[k];
    }
}


// gpumatch_pr_flow_csr: CSR of the flow matrix from its sorted keys.
//   keys, vals : 2E (gpumatch_pr_flow_keys); order : 2E, keys[order] ascending
//   n : entries kept (the keys below LLONG_MAX, n >= 1)
//   indptr : V + 1, out; cols : n, out; data : n (int64), out
// Thread mapping: one thread per kept entry i; the first entry of a row
// (and the last entry overall) also write the row pointers they bound.
extern "C" __global__ void gpumatch_pr_flow_csr(const i64* __restrict__ keys, const i64* __restrict__ vals,
                                                const long long* __restrict__ order, long long V, long long n,
                                                ofs_t* indptr, idx_t* cols, i64* data)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const long long j = order[i], key = keys[j];
    const long long r = key / V;
    cols[i] = (idx_t)(key - r * V);
    data[i] = vals[j];
    const long long prev = i == 0 ? -1 : keys[order[i - 1]] / V;
    for (long long q = prev + 1; q <= r; ++q) indptr[q] = (ofs_t)i;
    if (i == n - 1)
        for (long long q = r + 1; q <= V; ++q) indptr[q] = (ofs_t)n;
}

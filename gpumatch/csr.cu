// CUDA twins of the gpumatch.csr utilities that CuPy has no primitive for.
// The NumPy twins are in gpumatch/csr.py; both give identical results.

#ifndef VALUE_T
#define VALUE_T int
#endif
#ifndef LABEL_T
#define LABEL_T int
#endif

// gpumatch_first_min_neighbor: segmented arg-min of G-PR's push scan.
//   indptr    : rows + 1, CSR pointers (ofs_t, -DOFF)
//   indices   : nnz, CSR neighbours (idx_t, -DIDX)
//   labels    : number of neighbour vertices, label of each
//   vertices  : k, the rows to scan
//   stop_at   : k, early-stop level per row (used when use_stop != 0)
//   neighbor  : k, out: first neighbour of minimum label, -1 for an empty row
//   min_label : k, out: that label, LABEL_T max for an empty row
// Thread mapping: one thread per listed row, scanning its entries in order
// (so "first" is the same as NumPy's).  No shared writes.
extern "C" __global__ void gpumatch_first_min_neighbor(
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const LABEL_T* __restrict__ labels, const idx_t* __restrict__ vertices,
    const LABEL_T* __restrict__ stop_at, int use_stop,
    idx_t* __restrict__ neighbor, LABEL_T* __restrict__ min_label, long long k)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    idx_t v = vertices[i];
    LABEL_T best = (LABEL_T)(~(unsigned long long)0 >> 1);
    if (sizeof(LABEL_T) == 4) best = (LABEL_T)0x7fffffff;
    idx_t arg = -1;
    LABEL_T stop = use_stop ? stop_at[i] : 0;
    for (ofs_t p = indptr[v]; p < indptr[v + 1]; ++p) {
        idx_t u = indices[p];
        LABEL_T l = labels[u];
        if (l < best) { best = l; arg = u; }
        if (use_stop && l <= stop) break;
    }
    neighbor[i] = arg;
    min_label[i] = best;
}

#ifndef PTR_T
#define PTR_T long long
#endif
#ifndef IND_T
#define IND_T long long
#endif

// gpumatch_csr_summary: everything input validation needs from a CSR
// pattern, in one launch and one read-back.
//   indptr  : m + 1, row pointers as given by the caller (not yet trusted)
//   indices : nnz, column indices as given
//   out     : 6 int64, in/out.  The host sets out = {0, INT64_MAX,
//             INT64_MIN, 0, 0, 0}; the kernel leaves
//             out[0] bit 0: some indptr[i+1] < indptr[i]; bit 1: a row
//                    reaches outside [0, nnz);
//             out[1], out[2]: min and max column index over the entries
//                    [indptr[0], indptr[m]) (clamped to [0, nnz));
//             out[3]: > 0 if some row is not strictly increasing;
//             out[4], out[5]: indptr[0] and indptr[m].
//             With either bit of out[0] set, out[1..3] mean nothing (the
//             caller reports the pointers instead).
// Thread mapping: two grid-stride passes in one launch.
//   rows    : one thread per row: the pointer checks, and for a non-empty
//             row that starts after indptr[0] whether its first index is
//             <= the last index of the row before it (a "boundary
//             descent", which is no fault);
//   entries : one thread per entry k of [indptr[0], indptr[m]), coalesced
//             reads: min, max, and the descents indices[k] <= indices[k-1].
// With non-decreasing pointers the rows tile [indptr[0], indptr[m]), so a
// row is not strictly increasing iff there are more descents than boundary
// descents; out[3] accumulates (descents - boundary descents).  An earlier
// row-per-thread scan read the entries uncoalesced: 13.8 ms on R-MAT 24
// (133M entries) on an H100, where the entry pass reads at bandwidth.
// Warp shuffles reduce each warp's partial results; one lane per warp
// updates `out` with atomics.
extern "C" __global__ void gpumatch_csr_summary(
    const PTR_T* __restrict__ indptr, const IND_T* __restrict__ indices,
    long long m, long long nnz, long long* __restrict__ out)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long flags = 0;
    long long lo = 0x7fffffffffffffffLL, hi = -0x7fffffffffffffffLL - 1;
    long long first = (long long)indptr[0], last = (long long)indptr[m];
    first = first < 0 ? 0 : (first > nnz ? nnz : first);
    last = last < first ? first : (last > nnz ? nnz : last);
    long long descents = 0;   // entry descents minus boundary descents
    for (long long i = tid; i < m; i += stride) {
        long long s = (long long)indptr[i];
        long long e = (long long)indptr[i + 1];
        if (e < s) { flags |= 1ull; continue; }
        if (s < 0 || e > nnz) { flags |= 2ull; continue; }
        if (s > first && s < e && (long long)indices[s] <= (long long)indices[s - 1]) --descents;
    }
    for (long long k = first + tid; k < last; k += stride) {
        long long v = (long long)indices[k];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        if (k > first && v <= (long long)indices[k - 1]) ++descents;
    }
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
        flags |= __shfl_down_sync(GPUMATCH_FULL_MASK, flags, off);
        long long olo = __shfl_down_sync(GPUMATCH_FULL_MASK, lo, off);
        long long ohi = __shfl_down_sync(GPUMATCH_FULL_MASK, hi, off);
        lo = olo < lo ? olo : lo;
        hi = ohi > hi ? ohi : hi;
        descents += __shfl_down_sync(GPUMATCH_FULL_MASK, descents, off);
    }
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0) {
        if (flags) atomicOr((unsigned long long*)&out[0], flags);
        if (lo <= hi) {
            atomicMin(&out[1], lo);
            atomicMax(&out[2], hi);
        }
        if (descents) atomicAdd((unsigned long long*)&out[3], (unsigned long long)descents);
    }
    if (tid == 0) {
        out[4] = (long long)indptr[0];
        out[5] = (long long)indptr[m];
    }
}

// ---------------------------------------------------------------------------
// Incremental edits of a sorted CSR pattern (gpumatch.csr.locate_entries,
// delete_entries, insert_entries, unmatch_pairs).  Positions are int64.

// Index of the first element of sorted pos[0, k) that is >= x (k if none).
__device__ __forceinline__ long long gm_lower_bound(const long long* __restrict__ pos, long long k, long long x)
{
    long long lo = 0, hi = k;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (pos[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Index of the first element of sorted pos[0, k) that is > x (k if none).
__device__ __forceinline__ long long gm_upper_bound(const long long* __restrict__ pos, long long k, long long x)
{
    long long lo = 0, hi = k;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (pos[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Where (s, x) is in a sorted CSR pattern, or would go (0 for a segment
// outside [0, segments)); *found = 1 when present.  A binary search.
__device__ __forceinline__ long long gm_csr_locate_one(
    const PTR_T* __restrict__ indptr, const IND_T* __restrict__ indices, long long segments,
    long long s, long long x, int* found)
{
    *found = 0;
    if (s < 0 || s >= segments) return 0;
    long long lo = (long long)indptr[s], hi = (long long)indptr[s + 1], end = hi;
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if ((long long)indices[mid] < x) lo = mid + 1; else hi = mid;
    }
    *found = (lo < end && (long long)indices[lo] == x) ? 1 : 0;
    return lo;
}

// gpumatch_csr_locate: where entries (segment, value) are, or would go.
//   indptr   : segments + 1, CSR pointers (PTR_T)
//   indices  : nnz, values sorted within each segment (IND_T)
//   seg, val : k, the queries (int64); a segment outside [0, segments)
//              is answered pos = 0, found = 0 (the caller rejects it)
//   pos      : k, out: first position of the segment whose value is >=
//              val (the segment's end if none)
//   found    : k, out: 1 when that position holds val
// Thread mapping: one thread per query, a binary search in its segment.
// No shared writes.
extern "C" __global__ void gpumatch_csr_locate(
    const PTR_T* __restrict__ indptr, const IND_T* __restrict__ indices, long long segments,
    const long long* __restrict__ seg, const long long* __restrict__ val, long long k,
    long long* __restrict__ pos, unsigned char* __restrict__ found)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    int f;
    pos[i] = gm_csr_locate_one(indptr, indices, segments, seg[i], val[i], &f);
    found[i] = (unsigned char)f;
}

// One slot of the edit kernels below (delete / insert scatters and the
// pointer shift), shared by the one-pattern and the two-pattern kernels.
// Delete: old entry i goes to i - (number of dropped positions below i),
// unless it is dropped.  Insert: slot t < count is old entry t, going to
// t + (number of pos <= t); slot count + j is new value j (`ins`), going to
// pos[j] + j.  Shift: pointer i after deleting the positions `keys`
// (by_position) or inserting entries into the rows `keys`.  Each search
// runs in the block's window [lo, hi) of the sorted keys (gm_block_window):
// after a small batch it is empty or a few keys long, so a slot costs its
// copy, not a binary search over the whole batch.
//
// Each block of the edit kernels handles a tile of GM_EDIT_ITEMS slots per
// thread (block-stride inside the tile: coalesced).
#define GM_EDIT_ITEMS 8

// gm_warp_lower_bound: lower_bound(x) in sorted pos[0, k) by a whole warp,
// a 32-way search (each round 32 probes and a ballot narrow the range 32
// times): about log32(k) dependent loads instead of log2(k).
__device__ __forceinline__ long long gm_warp_lower_bound(const long long* __restrict__ pos, long long k, long long x)
{
    const int lane = threadIdx.x % GPUMATCH_WARP;
    long long lo = 0, hi = k;   // the answer is in [lo, hi]
    while (hi - lo > GPUMATCH_WARP) {
        long long step = (hi - lo + GPUMATCH_WARP - 1) / GPUMATCH_WARP;
        long long at = lo + lane * step;
        int below = __popc(__ballot_sync(GPUMATCH_FULL_MASK, at < hi && pos[at] < x));
        long long nhi = lo + below * step;
        lo = below == 0 ? lo : lo + (below - 1) * step + 1;
        hi = nhi < hi ? nhi : hi;
    }
    long long at = lo + lane;
    return lo + __popc(__ballot_sync(GPUMATCH_FULL_MASK, at < hi && pos[at] < x));
}

// gm_block_window: the window [lo, hi) of sorted pos[0, k) that holds the
// lower bounds of every key in [first, last] (the tile's keys): lo =
// lower_bound(first), hi = lower_bound(last + 1) (empty when last < first).
// Called by every thread of the block (a barrier); warp 0 searches for lo,
// warp 1 for hi (blocks of at least 64 threads).
__device__ __forceinline__ void gm_block_window(const long long* __restrict__ pos, long long k, long long first,
                                                long long last, long long* lo, long long* hi)
{
    __shared__ long long win[2];
    const int warp = threadIdx.x / GPUMATCH_WARP;
    if (warp < 2) {
        long long w = last < first ? 0 : gm_warp_lower_bound(pos, k, warp == 0 ? first : last + 1);
        if (threadIdx.x % GPUMATCH_WARP == 0) win[warp] = w;
    }
    __syncthreads();
    *lo = win[0];
    *hi = last < first ? win[0] : win[1];
}
template <typename T>
__device__ __forceinline__ void gm_delete_one(const T* __restrict__ values, long long i,
                                              const long long* __restrict__ pos, long long lo, long long hi,
                                              T* __restrict__ out)
{
    long long j = lo + gm_lower_bound(pos + lo, hi - lo, i);
    if (j < hi && pos[j] == i) return;
    out[i - j] = values[i];
}
template <typename T>
__device__ __forceinline__ void gm_insert_one(const T* __restrict__ values, long long count, long long t,
                                              const long long* __restrict__ pos, long long lo, long long hi,
                                              T ins, T* __restrict__ out)
{
    if (t < count) {
        out[t + lo + gm_upper_bound(pos + lo, hi - lo, t)] = values[t];
    } else {
        long long j = t - count;
        out[pos[j] + j] = ins;
    }
}
__device__ __forceinline__ PTR_T gm_shift_one(const PTR_T* __restrict__ ptr, long long i,
                                              const long long* __restrict__ keys, long long lo, long long hi,
                                              int by_position)
{
    long long p = (long long)ptr[i];
    return by_position ? (PTR_T)(p - lo - gm_lower_bound(keys + lo, hi - lo, p))
                       : (PTR_T)(p + lo + gm_lower_bound(keys + lo, hi - lo, i));
}
// The tile [i0, i1) of pointer slots of ptr[0, count) of this block, and
// its window of keys.
__device__ __forceinline__ void gm_shift_window(const PTR_T* __restrict__ ptr, long long count,
                                                const long long* __restrict__ keys, long long k, int by_position,
                                                long long* i0_, long long* i1_, long long* lo, long long* hi)
{
    long long i0 = (long long)blockIdx.x * blockDim.x * GM_EDIT_ITEMS;
    long long i1 = i0 + (long long)blockDim.x * GM_EDIT_ITEMS;
    if (i1 > count) i1 = count;
    *i0_ = i0;
    *i1_ = i1;
    if (i0 >= count) {
        gm_block_window(keys, k, 0, -1, lo, hi);
    } else if (by_position) {
        gm_block_window(keys, k, (long long)ptr[i0], (long long)ptr[i1 - 1], lo, hi);
    } else {
        gm_block_window(keys, k, i0, i1 - 1, lo, hi);
    }
}
// The tile [t0, t1) of slots of this block (of `slots`), and the window of
// pos for its old entries (those below `count`).
__device__ __forceinline__ void gm_entry_window(const long long* __restrict__ pos, long long count, long long slots,
                                                long long k, long long* t0_, long long* t1_, long long* lo,
                                                long long* hi)
{
    long long t0 = (long long)blockIdx.x * blockDim.x * GM_EDIT_ITEMS;
    long long t1 = t0 + (long long)blockDim.x * GM_EDIT_ITEMS;
    *t0_ = t0;
    *t1_ = t1 < slots ? t1 : slots;
    gm_block_window(pos, k, t0, (t1 < count ? t1 : count) - 1, lo, hi);
}

// gpumatch_csr_delete_scatter: copy an array without the entries at
// sorted, distinct positions.
//   values : count, the old array
//   pos    : k, the positions to drop, strictly increasing
//   out    : count - k, the kept values in order
// Thread mapping: a block per tile of GM_EDIT_ITEMS entries per thread,
// block-stride inside it; entry i goes to i - (number of dropped positions
// below i), found by a binary search in the tile's window.  No races.
extern "C" __global__ void gpumatch_csr_delete_scatter(
    const VALUE_T* __restrict__ values, long long count,
    const long long* __restrict__ pos, long long k, VALUE_T* __restrict__ out)
{
    long long t0, t1, lo, hi;
    gm_entry_window(pos, count, count, k, &t0, &t1, &lo, &hi);
    for (long long i = t0 + threadIdx.x; i < t1; i += blockDim.x) gm_delete_one(values, i, pos, lo, hi, out);
}

// gpumatch_csr_insert_scatter: merge k new values into an array.
//   values : count, the old array
//   pos    : k, non-decreasing: new value j goes just before old entry
//            pos[j] (pos[j] = count: at the end); ties keep the order j
//   ins    : k, the new values
//   out    : count + k, the merged array
// Thread mapping: a block per tile of GM_EDIT_ITEMS slots of old + new per
// thread.  Old entry i goes to i + (number of pos <= i, searched in the
// tile's window); new value j to pos[j] + j.  No races (the destinations
// are a permutation of [0, count + k)).
extern "C" __global__ void gpumatch_csr_insert_scatter(
    const VALUE_T* __restrict__ values, long long count,
    const long long* __restrict__ pos, const VALUE_T* __restrict__ ins, long long k,
    VALUE_T* __restrict__ out)
{
    long long t0, t1, lo, hi;
    gm_entry_window(pos, count, count + k, k, &t0, &t1, &lo, &hi);
    for (long long t = t0 + threadIdx.x; t < t1; t += blockDim.x)
        gm_insert_one(values, count, t, pos, lo, hi, t < count ? (VALUE_T)0 : ins[t - count], out);
}

// gpumatch_csr_shift_ptr: the row pointers after a batch of deletions or
// insertions (gpumatch.csr.delete_entries / insert_entries).
//   ptr         : count, the old pointers (PTR_T)
//   keys        : k, sorted (int64): deleted positions, or the rows of the
//                 inserted entries
//   by_position : 1 (deletion): out[i] = ptr[i] - #{keys < ptr[i]};
//                 0 (insertion): out[i] = ptr[i] + #{keys < i}
//   out         : count, the new pointers
// Thread mapping: a block per tile of GM_EDIT_ITEMS pointers per thread, a
// binary search in the tile's window of keys.  No shared writes.
extern "C" __global__ void gpumatch_csr_shift_ptr(
    const PTR_T* __restrict__ ptr, long long count, const long long* __restrict__ keys, long long k,
    int by_position, PTR_T* __restrict__ out)
{
    long long i0, i1, lo, hi;
    gm_shift_window(ptr, count, keys, k, by_position, &i0, &i1, &lo, &hi);
    for (long long i = i0 + threadIdx.x; i < i1; i += blockDim.x)
        out[i] = gm_shift_one(ptr, i, keys, lo, hi, by_position);
}

// The *_pair kernels below run one edit on two patterns in one launch, the
// CSR and the CSC of a dynamic solver (blockIdx.y = 0: pattern 0, 1:
// pattern 1; same pointer type PTR_T and index type IND_T for both).

// gpumatch_csr_locate_pair: gpumatch_csr_locate for k queries in each of
// two patterns.
//   pos  : 2k, out: pattern 0's positions, then pattern 1's
//   want : 1 if pattern 0's queries must be present (removal), 0 if absent
//   miss : out, += the number of pattern 0's queries that are not as wanted
// Thread mapping: one thread per query of one pattern (grid.y = 2), a
// binary search; the only shared write is the atomicAdd on miss.
extern "C" __global__ void gpumatch_csr_locate_pair(
    const PTR_T* __restrict__ ptr0, const IND_T* __restrict__ ind0, long long segs0,
    const long long* __restrict__ seg0, const long long* __restrict__ val0,
    const PTR_T* __restrict__ ptr1, const IND_T* __restrict__ ind1, long long segs1,
    const long long* __restrict__ seg1, const long long* __restrict__ val1,
    long long k, long long* __restrict__ pos, int want, unsigned long long* __restrict__ miss)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    bool one = blockIdx.y == 1;
    const PTR_T* ptr = one ? ptr1 : ptr0;
    const IND_T* ind = one ? ind1 : ind0;
    long long segments = one ? segs1 : segs0;
    int found;
    pos[(one ? k : 0) + i] = gm_csr_locate_one(ptr, ind, segments, one ? seg1[i] : seg0[i],
                                               one ? val1[i] : val0[i], &found);
    if (!one && found != want) atomicAdd(miss, 1ULL);
}

// gpumatch_batch_locate_pair: order a small batch of edges (rows[i],
// cols[i]) of an m x n graph row-major and column-major, check it, and
// locate it in the graph's CSR (pattern 0) and CSC (pattern 1), all in one
// launch (gpumatch.csr.locate_batch_pair).
//   rows, cols : k, the batch (int64), in any order
//   segs, vals : 2k, out: the batch sorted by (row, col) as (rows, cols),
//                then sorted by (col, row) as (cols, rows)
//   pos        : 2k, out: where each sorted edge is, or would go, in
//                pattern 0, then in pattern 1 (as gpumatch_csr_locate)
//   want       : 1 if the edges must be present (removal), 0 if absent
//   problems   : 3, out (zeroed by the caller): += edges with an index
//                out of range, edges that appear more than once, edges of
//                pattern 0 that are not as wanted
// Thread mapping: one warp per edge (GM_RANK_WARPS edges per block); a
// block walks the whole batch in tiles of GM_RANK_TILE keys in shared
// memory, and each lane counts the keys of every 32nd slot below its
// edge's keys; a warp sum gives the rank (the edge's sorted position).
// O(k^2) compares in all, for batches of a few thousand edges where a sort
// would cost more launches than the compares; a warp per edge spreads them
// over the whole device (one thread per edge left 27 blocks busy at 6 876
// edges).  Distinct edges have distinct ranks, so the writes do not
// collide; after a problem the outputs are garbage (but in bounds) and the
// caller raises.  Launch with blockDim.x == GM_RANK_TILE.
#define GM_RANK_TILE 256
#define GM_RANK_WARPS (GM_RANK_TILE / 32)
extern "C" __global__ void gpumatch_batch_locate_pair(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k, long long m,
    long long n, const PTR_T* __restrict__ ptr0, const IND_T* __restrict__ ind0,
    const PTR_T* __restrict__ ptr1, const IND_T* __restrict__ ind1,
    long long* __restrict__ segs, long long* __restrict__ vals, long long* __restrict__ pos, int want,
    unsigned long long* __restrict__ problems)
{
    __shared__ long long key_r[GM_RANK_TILE], key_c[GM_RANK_TILE];
    const int lane = threadIdx.x % 32;
    long long i = (long long)blockIdx.x * GM_RANK_WARPS + threadIdx.x / 32;
    bool live = i < k;
    long long r = live ? rows[i] : 0, c = live ? cols[i] : 0;
    bool ok = live && r >= 0 && r < m && c >= 0 && c < n;
    // an out-of-range edge gets key -1 (it only spoils ranks of a batch that is rejected)
    long long kr = ok ? r * n + c : -1, kc = ok ? c * m + r : -1;
    long long rank_r = 0, rank_c = 0, same = 0;
    for (long long base = 0; base < k; base += GM_RANK_TILE) {
        long long j = base + threadIdx.x;
        if (j < k) {
            long long rj = rows[j], cj = cols[j];
            bool okj = rj >= 0 && rj < m && cj >= 0 && cj < n;
            key_r[threadIdx.x] = okj ? rj * n + cj : -1;
            key_c[threadIdx.x] = okj ? cj * m + rj : -1;
        }
        __syncthreads();
        int lim = (int)(k - base < GM_RANK_TILE ? k - base : GM_RANK_TILE);
        for (int t = lane; t < lim; t += 32) {
            rank_r += key_r[t] < kr;
            rank_c += key_c[t] < kc;
            same += key_r[t] == kr;
        }
        __syncthreads();
    }
    for (int off = 16; off > 0; off /= 2) {
        rank_r += __shfl_down_sync(0xffffffffu, rank_r, off);
        rank_c += __shfl_down_sync(0xffffffffu, rank_c, off);
        same += __shfl_down_sync(0xffffffffu, same, off);
    }
    if (!live || lane != 0) return;
    if (!ok) { atomicAdd(&problems[0], 1ULL); return; }
    if (same > 1) atomicAdd(&problems[1], 1ULL);
    segs[rank_r] = r;
    vals[rank_r] = c;
    segs[k + rank_c] = c;
    vals[k + rank_c] = r;
    int found;
    pos[rank_r] = gm_csr_locate_one(ptr0, ind0, m, r, c, &found);
    if (found != want) atomicAdd(&problems[2], 1ULL);
    pos[k + rank_c] = gm_csr_locate_one(ptr1, ind1, n, c, r, &found);
}

// gpumatch_widen_index: int32 ids to int64 (a batch of edges from the
// caller; CuPy's astype would compile a kernel on its first use).
//   a : n (int), out : n (int64)
// Thread mapping: one thread per id.
extern "C" __global__ void gpumatch_widen_index(const int* __restrict__ a, long long* __restrict__ out, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (long long)a[i];
}

// gpumatch_batch_keys: the two sort keys of each edge of a batch too large
// for gpumatch_batch_locate_pair (gpumatch.csr.sort_batch_pair).
//   rows, cols : k (int64), in any order
//   key_r      : k, out: rows * n + cols (row-major order), -1 out of range
//   key_c      : k, out: cols * m + rows (column-major order), -1 out of range
//   problems   : 3 (zeroed by the caller): problems[0] += edges with an
//                index out of range
// Thread mapping: one thread per edge.  No races.
extern "C" __global__ void gpumatch_batch_keys(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k, long long m, long long n,
    long long* __restrict__ key_r, long long* __restrict__ key_c, unsigned long long* problems)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    long long r = rows[i], c = cols[i];
    bool ok = r >= 0 && r < m && c >= 0 && c < n;
    key_r[i] = ok ? r * n + c : -1;
    key_c[i] = ok ? c * m + r : -1;
    if (!ok) atomicAdd(&problems[0], 1ULL);
}

// gpumatch_batch_split: the sorted keys back to (segment, value) pairs.
//   key_r, key_c : k each, sorted
//   segs, vals   : 2k, out: (rows, cols) in row-major order, then (cols,
//                  rows) in column-major order
//   problems     : problems[1] += keys equal to the one before (repeated edges)
// Thread mapping: one thread per edge.  No races.
extern "C" __global__ void gpumatch_batch_split(
    const long long* __restrict__ key_r, const long long* __restrict__ key_c, long long k, long long m,
    long long n, long long* __restrict__ segs, long long* __restrict__ vals, unsigned long long* problems)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    long long a = key_r[i], b = key_c[i];
    long long wn = n > 0 ? n : 1, wm = m > 0 ? m : 1;
    segs[i] = a / wn;
    vals[i] = a % wn;
    segs[k + i] = b / wm;
    vals[k + i] = b % wm;
    if (i > 0 && a >= 0 && a == key_r[i - 1]) atomicAdd(&problems[1], 1ULL);
}

// gpumatch_csr_shift_ptr_pair: gpumatch_csr_shift_ptr on two pointer arrays.
//   keys : 2k (int64), pattern 0's sorted keys, then pattern 1's
// Thread mapping: as gpumatch_csr_shift_ptr, for one pattern (grid.y = 2).
extern "C" __global__ void gpumatch_csr_shift_ptr_pair(
    const PTR_T* __restrict__ ptr0, long long count0, const PTR_T* __restrict__ ptr1, long long count1,
    const long long* __restrict__ keys, long long k, int by_position,
    PTR_T* __restrict__ out0, PTR_T* __restrict__ out1)
{
    long long i0, i1, lo, hi;
    bool one = blockIdx.y == 1;
    const PTR_T* ptr = one ? ptr1 : ptr0;
    PTR_T* out = one ? out1 : out0;
    const long long* kk = keys + (one ? k : 0);
    gm_shift_window(ptr, one ? count1 : count0, kk, k, by_position, &i0, &i1, &lo, &hi);
    for (long long i = i0 + threadIdx.x; i < i1; i += blockDim.x)
        out[i] = gm_shift_one(ptr, i, kk, lo, hi, by_position);
}

// gpumatch_csr_edit_scatter_pair: the index arrays of two patterns after
// deleting (insert = 0; ins is not read) or inserting k entries in each.
//   ind0, ind1 : count each (IND_T), the old arrays
//   pos        : 2k, pattern 0's positions, then pattern 1's (deletion:
//                strictly increasing; insertion: non-decreasing)
//   ins        : 2k (int64): the new indices of pattern 0, then 1's
//   out0, out1 : count - k or count + k each
// Thread mapping: as gpumatch_csr_delete_scatter / insert_scatter, tiles of
// one pattern (grid.y = 2).  No races.
extern "C" __global__ void gpumatch_csr_edit_scatter_pair(
    const IND_T* __restrict__ ind0, const IND_T* __restrict__ ind1, long long count,
    const long long* __restrict__ pos, const long long* __restrict__ ins, long long k, int insert,
    IND_T* __restrict__ out0, IND_T* __restrict__ out1)
{
    bool one = blockIdx.y == 1;
    const IND_T* ind = one ? ind1 : ind0;
    IND_T* out = one ? out1 : out0;
    const long long* pp = pos + (one ? k : 0);
    long long t0, t1, lo, hi;
    gm_entry_window(pp, count, insert ? count + k : count, k, &t0, &t1, &lo, &hi);
    for (long long t = t0 + threadIdx.x; t < t1; t += blockDim.x) {
        if (!insert)
            gm_delete_one(ind, t, pp, lo, hi, out);
        else
            gm_insert_one(ind, count, t, pp, lo, hi, t < count ? (IND_T)0 : (IND_T)ins[(one ? k : 0) + t - count],
                          out);
    }
}

// gpumatch_unmatch_pairs: drop the pairs (rows[i], cols[i]) that are matched.
//   rows, cols : k, int64 (distinct pairs)
//   mate_row   : m, column of each row or -1 (IND_T), updated
//   mate_col   : n, row of each column or -1 (IND_T), updated
//   count      : u64[1], += the number of pairs dropped
// Thread mapping: one thread per pair; the count is one atomic per warp
// (gm_append).  A matched pair is written only by its own thread (the pairs
// are distinct), so there are no races.
extern "C" __global__ void gpumatch_unmatch_pairs(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    IND_T* __restrict__ mate_row, IND_T* __restrict__ mate_col, unsigned long long* count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    long long r = rows[i], c = cols[i];
    if ((long long)mate_col[c] == r && (long long)mate_row[r] == c) {
        mate_col[c] = (IND_T)-1;
        mate_row[r] = (IND_T)-1;
        gm_append(count);
    }
}

// gpumatch_count_free_ends: count the pairs (rows[i], cols[i]) with a free
// end (an added edge there may lengthen the matching).
//   rows, cols : k, int64
//   mate_row   : m, column of each row or -1 (IND_T)
//   mate_col   : n, row of each column or -1 (IND_T)
//   count      : u64[1], += that number
// Thread mapping: one thread per pair, one atomic per warp (gm_append).
extern "C" __global__ void gpumatch_count_free_ends(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const IND_T* __restrict__ mate_row, const IND_T* __restrict__ mate_col, unsigned long long* count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k && (mate_row[rows[i]] < 0 || mate_col[cols[i]] < 0)) gm_append(count);
}

// ---------------------------------------------------------------------------
// Counting transpose of a CSR pattern (gpumatch.csr.transpose on the GPU where
// cuSPARSE's 32-bit csr2csc does not apply: int64 pointers, e.g. past 2**31
// entries with int32 ids).  Memory: the transpose itself and one cursor per
// column, where a sort of (column, row) keys needs about 40 bytes per entry.
// Three launches and a prefix sum on the host side:
//   1. gpumatch_csr_t_count: t_ptr[c + 1] += entries of column c;
//   2. (host) t_ptr = cumsum; cursor = t_ptr[:-1];
//   3. gpumatch_csr_t_scatter: each entry goes to the next free slot of its
//      column (rows of a column come out in any order);
//   4. gpumatch_csr_t_sort_short: the rows of each column of at most
//      GM_T_SHORT entries sorted in place (the host sorts longer ones).

// One more in *a (int or long long counter), returning the old value.
__device__ __forceinline__ int gm_inc(int* a) { return atomicAdd(a, 1); }
__device__ __forceinline__ long long gm_inc(long long* a)
{
    return (long long)atomicAdd((unsigned long long*)a, 1ULL);
}

// gpumatch_csr_t_count: the column counts of a pattern.
//   indices : nnz, column of each entry (IND_T)
//   t_ptr   : n + 1 (PTR_T), zero on entry; out: t_ptr[c + 1] = entries of
//             column c (t_ptr[0] stays 0)
// Thread mapping: grid-stride over the entries, one atomic each.
extern "C" __global__ void gpumatch_csr_t_count(const IND_T* __restrict__ indices, long long nnz,
                                                PTR_T* __restrict__ t_ptr)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < nnz; k += stride)
        gm_inc(&t_ptr[(long long)indices[k] + 1]);
}

// gpumatch_csr_t_scatter: deal every entry (r, c) to the next free slot of
// column c.
//   indptr, indices : m + 1 (PTR_T), nnz (IND_T): the CSR pattern
//   cursor    : n (PTR_T), in: the first slot of each column (t_ptr[:-1]);
//               advanced atomically (out: t_ptr[1:])
//   t_indices : nnz (IND_T), out: the row of each slot
//   perm      : nnz (PTR_T), out when with_perm: the CSR position of each slot
// Thread mapping: grid-stride over the rows, a thread walks its row's
// entries.  The slots of a column are a permutation of its range; their
// order varies between runs (gpumatch_csr_t_sort_short and the host sort
// the rows of each column afterwards).
extern "C" __global__ void gpumatch_csr_t_scatter(
    const PTR_T* __restrict__ indptr, const IND_T* __restrict__ indices, long long m,
    PTR_T* __restrict__ cursor, IND_T* __restrict__ t_indices, PTR_T* __restrict__ perm, int with_perm)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m; r += stride) {
        const PTR_T e = indptr[r + 1];
        for (PTR_T p = indptr[r]; p < e; ++p) {
            const PTR_T slot = gm_inc(&cursor[indices[p]]);
            t_indices[slot] = (IND_T)r;
            if (with_perm) perm[slot] = p;
        }
    }
}

#ifndef GM_T_SHORT
#define GM_T_SHORT 64
#endif
#ifndef GM_T_SHORT_MERGE
#define GM_T_SHORT_MERGE 32
#endif

// ---------------------------------------------------------------------------
// Blocked transpose (gpumatch.csr._transpose_blocked): a pattern with int64
// pointers over int32 ids is cut into row blocks of fewer than 2**31
// entries; cuSPARSE transposes each block with 32-bit pointers (rows of a
// column ascending, numbered from the block's first row r0), and the
// blocks, in row order, are appended to the columns of the whole transpose
// here, so its rows stay ascending.
//   bptr, bind : n + 1, nnz_b (int): the block's transpose
//   cursor     : n (PTR_T), in: the next free slot of each column of the
//                whole transpose; out: advanced past this block's rows
//   t_indices  : nnz (IND_T), out: r0 + the block's rows, at the slots
//   long_cols, nlong : the columns of more than GM_T_SHORT_MERGE entries
//                of the block, appended (count *nlong) and left to
//                gpumatch_csr_t_merge_long
// Thread mapping: grid-stride over the columns, a thread copies its
// column's few entries; columns are disjoint, so are their slots.
extern "C" __global__ void gpumatch_csr_t_merge(
    const int* __restrict__ bptr, const int* __restrict__ bind, long long n, long long r0,
    PTR_T* __restrict__ cursor, IND_T* __restrict__ t_indices, IND_T* __restrict__ long_cols,
    unsigned long long* __restrict__ nlong)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += stride) {
        const int b = bptr[c], e = bptr[c + 1];
        if (e == b) continue;
        if (e - b > GM_T_SHORT_MERGE) {
            long_cols[gm_append(nlong)] = (IND_T)c;
            continue;
        }
        const PTR_T dst = cursor[c] - (PTR_T)b;
        for (int k = b; k < e; ++k) t_indices[dst + k] = (IND_T)(r0 + bind[k]);
        cursor[c] += (PTR_T)(e - b);
    }
}

// gpumatch_csr_t_merge_long: gpumatch_csr_t_merge for the long columns it
// listed (`count` of them in long_cols); arguments as there.
// Thread mapping: a block per listed column (grid-stride over the list),
// its threads copy strided entries; thread 0 advances the cursor after a
// barrier that every thread of the block passes (all have read it).
extern "C" __global__ void gpumatch_csr_t_merge_long(
    const int* __restrict__ bptr, const int* __restrict__ bind, long long r0, PTR_T* __restrict__ cursor,
    IND_T* __restrict__ t_indices, const IND_T* __restrict__ long_cols, long long count)
{
    for (long long i = blockIdx.x; i < count; i += gridDim.x) {
        const long long c = (long long)long_cols[i];
        const int b = bptr[c], e = bptr[c + 1];
        const PTR_T dst = cursor[c] - (PTR_T)b;
        for (int k = b + (int)threadIdx.x; k < e; k += (int)blockDim.x) t_indices[dst + k] = (IND_T)(r0 + bind[k]);
        __syncthreads();
        if (threadIdx.x == 0) cursor[c] += (PTR_T)(e - b);
    }
}

// gpumatch_csr_t_sort_short: sort the rows of every column of at most
// GM_T_SHORT entries (insertion sort; perm moves along when with_perm: in a
// column, rows and CSR positions are in the same order).
//   t_ptr     : n + 1 (PTR_T), the transpose's pointers
//   t_indices : nnz (IND_T), sorted in place per short column
//   perm      : nnz (PTR_T), moved along when with_perm
// Thread mapping: grid-stride over the columns; columns are disjoint.
extern "C" __global__ void gpumatch_csr_t_sort_short(
    const PTR_T* __restrict__ t_ptr, long long n, IND_T* __restrict__ t_indices, PTR_T* __restrict__ perm,
    int with_perm)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += stride) {
        const PTR_T b = t_ptr[c], e = t_ptr[c + 1];
        if (e - b < 2 || e - b > GM_T_SHORT) continue;
        for (PTR_T i = b + 1; i < e; ++i) {
            const IND_T x = t_indices[i];
            const PTR_T px = with_perm ? perm[i] : (PTR_T)0;
            PTR_T j = i;
            while (j > b && t_indices[j - 1] > x) {
                t_indices[j] = t_indices[j - 1];
                if (with_perm) perm[j] = perm[j - 1];
                --j;
            }
            t_indices[j] = x;
            if (with_perm) perm[j] = px;
        }
    }
}

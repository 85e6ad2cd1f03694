// CUDA kernels of the auction for the linear assignment problem (forward
// auction with epsilon scaling, Jacobi-parallel rounds, global price
// updates).  The host-side driver is gpumatch/lap/_driver.py; the NumPy
// twins are in gpumatch/lap/_kernels_numpy.py (same names without the
// gpumatch_lap_ prefix) and compute the same prices and assignment.
//
// Specialisation (-D options of the launcher): IDX, the CSR index type (int
// or long long, see _common.cuh); COST_T, the cost type (long long or
// double) with COST_IS_INT 1 or 0.
//
// Notation (m rows <= n columns, minimisation form):
//   indptr, indices, cost : m + 1, nnz, nnz   CSR of the allowed entries;
//                 or, when dense_n > 0, cost is the dense m x n matrix
//                 (row-major; +inf forbids a pair, float costs only) and
//                 indptr, indices are not read
//   cmin, scale : integer costs enter as c' = (c - cmin) * scale (floats: c)
//   v          : n, column prices (scaled units); h_ij = c'_ij - v_j
//   x          : m, column of each row, -1 unassigned
//   owner      : n, row of each column, -1 free
//   cx         : m, the (unscaled) cost of the entry a row last bid for;
//                that of its column while it is assigned
//   bid_delta  : m, the bid of a row this round: min(w2 - w1, big) + eps
//   keys       : n, u64 best bid key on a column this round, 0 none
//   lists      : two row lists (by round parity) of length m each
//   bidcols    : n, the columns bid on this round
//   counts     : long long[8]: lengths of list 0 and 1, bid columns of
//                parity 0 and 1, assigned rows, price-floor flag, the next
//                round (gpumatch_lap_rounds), a price update's change flag
//   dist       : 2 x n long long, Jacobi buffers of a price update
//
// Round r (par = r & 1) reads list par and fills list par ^ 1: bid appends
// every row that bid (the winners are skipped next round), resolve the rows
// it displaces.  Bid resets the bid-column count of parity par ^ 1, resolve
// the length of list par, so both counts are 0 when the next round starts.
//
// Rows are scanned by groups of G lanes (G = 1, 2, ..., 32, a power of 2;
// 32 for dense rows): lane l of a group reads entries l, l + G, ...; the
// group reduces (least h, its column, second-least h) with shuffles.  Ties
// go to the smaller column, so the result does not depend on G.

#ifndef COST_T
#define COST_T long long
#endif
#ifndef COST_IS_INT
#define COST_IS_INT 1
#endif
typedef COST_T cost_t;

#define LAP_NONE 0x7fffffff                // "no column" in a group's reduction (columns are int)
#define KEY_INT_CAP 0x7fffffffLL           // integer bids above this count as this in the key

__device__ __forceinline__ cost_t cost_inf()
{
#if COST_IS_INT
    return (cost_t)0x7fffffffffffffffLL;
#else
    return __longlong_as_double(0x7ff0000000000000LL);
#endif
}

// h = c' - v_j with the price vj already read.
__device__ __forceinline__ cost_t reduced_at(cost_t c, cost_t vj, cost_t cmin, long long scale)
{
#if COST_IS_INT
    return (c - cmin) * (cost_t)scale - vj;
#else
    return c - vj;
#endif
}

// h = c' - v_j, reading v_j.
__device__ __forceinline__ cost_t reduced(cost_t c, long long j, const cost_t* v, cost_t cmin, long long scale)
{
    return reduced_at(c, v[j], cmin, scale);
}

// The key of a bid: an order-preserving 31-bit image of the bid (integers:
// capped; doubles: the high word of the positive IEEE value) over the row.
__device__ __forceinline__ u64 bid_key(cost_t delta, int row)
{
#if COST_IS_INT
    u64 hi = (u64)(delta < KEY_INT_CAP ? delta : KEY_INT_CAP);
#else
    u64 hi = ((u64)__double_as_longlong(delta)) >> 32;
#endif
    return (hi << 32) | (u64)(unsigned)row;
}

struct Best {
    cost_t w1, w2;      // least and second-least h
    int j1;             // column of w1 (LAP_NONE: no allowed entry)
    cost_t c1;          // its cost
};

__device__ __forceinline__ void row_range(long long i, const long long* indptr, long long dense_n,
                                          long long* p0, long long* p1)
{
    if (dense_n > 0) {
        *p0 = i * dense_n;
        *p1 = *p0 + dense_n;
    } else {
        *p0 = indptr[i];
        *p1 = indptr[i + 1];
    }
}

// Merges the (w1, j1, c1, w2) of the G lanes of each group by shuffles
// (ties of w1 to the smaller column).  Every lane of the warp must call it.
__device__ __forceinline__ void reduce_best(Best& b, int G)
{
    for (int off = G >> 1; off > 0; off >>= 1) {
        cost_t ow1 = __shfl_xor_sync(GPUMATCH_FULL_MASK, b.w1, off, G);
        cost_t ow2 = __shfl_xor_sync(GPUMATCH_FULL_MASK, b.w2, off, G);
        int oj1 = __shfl_xor_sync(GPUMATCH_FULL_MASK, b.j1, off, G);
        cost_t oc1 = __shfl_xor_sync(GPUMATCH_FULL_MASK, b.c1, off, G);
        if (ow1 < b.w1 || (ow1 == b.w1 && oj1 < b.j1)) {
            b.w2 = b.w1 < ow2 ? b.w1 : ow2;
            b.w1 = ow1;
            b.j1 = oj1;
            b.c1 = oc1;
        } else {
            b.w2 = ow1 < b.w2 ? ow1 : b.w2;
        }
    }
}

// One entry (reduced cost h, cost c, column j) into a lane's running (w1,
// j1, c1, w2).  A lane sees its entries in storage order (increasing
// columns), so a tie keeps the first.
__device__ __forceinline__ void take_reduced(Best& b, cost_t h, cost_t c, int j)
{
    if (h < b.w1) {
        b.w2 = b.w1;
        b.w1 = h;
        b.j1 = j;
        b.c1 = c;
    } else if (h < b.w2) {
        b.w2 = h;
    }
}

// Entries a lane loads together when it scans a dense row, and a sparse
// one (its loads are in flight at once instead of one after the other;
// more spill registers under __launch_bounds__(1024)).
#ifndef SCAN_CHUNK
#define SCAN_CHUNK 4
#endif
#ifndef CSR_CHUNK
#define CSR_CHUNK 2
#endif

// Best and second-best entries of row i (i < 0: none) over the G lanes of
// the calling lane's group (its lane gl reads entries gl, gl + G, ...).
// Every lane of the warp must call it (shuffles over the whole warp).  A
// lane reads a dense row SCAN_CHUNK entries at a time, a sparse one
// CSR_CHUNK, loads first; the result is the same as one entry at a time.
__device__ __forceinline__ Best scan_row(long long i, int gl, int G, const long long* __restrict__ indptr,
                                         const idx_t* __restrict__ indices, const cost_t* __restrict__ cost,
                                         long long dense_n, const cost_t* v, cost_t cmin, long long scale)
{
    const cost_t inf = cost_inf();
    Best b;
    b.w1 = inf;
    b.w2 = inf;
    b.j1 = LAP_NONE;
    b.c1 = 0;
    if (i >= 0 && dense_n > 0) {          // columns fit an int (x holds them)
        const cost_t* row = cost + i * dense_n;
        int nn = (int)dense_n;
        for (int q = gl; q < nn; q += G * SCAN_CHUNK) {
            cost_t c[SCAN_CHUNK];
#pragma unroll
            for (int t = 0; t < SCAN_CHUNK; ++t) {
                int j = q + t * G;
                c[t] = j < nn ? row[j] : inf;
            }
#pragma unroll
            for (int t = 0; t < SCAN_CHUNK; ++t) {
                int j = q + t * G;
                if (j >= nn) continue;
#if !COST_IS_INT
                if (!(c[t] < inf)) continue;      // a forbidden pair
#endif
                take_reduced(b, reduced(c[t], j, v, cmin, scale), c[t], j);
            }
        }
    } else if (i >= 0) {
        long long p0 = indptr[i], p1 = indptr[i + 1];
        for (long long p = p0 + gl; p < p1; p += (long long)G * CSR_CHUNK) {
            int j[CSR_CHUNK];
            cost_t c[CSR_CHUNK], vj[CSR_CHUNK];
#pragma unroll
            for (int t = 0; t < CSR_CHUNK; ++t) {
                long long q = p + (long long)t * G;
                j[t] = q < p1 ? (int)indices[q] : -1;
                c[t] = q < p1 ? cost[q] : 0;
            }
#pragma unroll
            for (int t = 0; t < CSR_CHUNK; ++t) vj[t] = j[t] >= 0 ? v[j[t]] : 0;
#pragma unroll
            for (int t = 0; t < CSR_CHUNK; ++t)
                if (j[t] >= 0) take_reduced(b, reduced_at(c[t], vj[t], cmin, scale), c[t], j[t]);
        }
    }
    reduce_best(b, G);
    return b;
}

__device__ __forceinline__ cost_t bid_amount(const Best& b, cost_t eps, cost_t big)
{
    cost_t diff = b.w2 < cost_inf() ? b.w2 - b.w1 : big;
    return (diff < big ? diff : big) + eps;
}

// ---------------------------------------------------------------------------
// the bodies of a round, for a grid (gw, nw: this warp and the number of
// warps) or for one block (gpumatch_lap_rounds, gpumatch_lap_batch_dense)
// ---------------------------------------------------------------------------

__device__ __forceinline__ void bid_body(long long gw, long long nw, int lane, int G,
                                         const long long* __restrict__ indptr, const idx_t* __restrict__ indices,
                                         const cost_t* __restrict__ cost, long long dense_n, const cost_t* v,
                                         const int* x, cost_t cmin, long long scale, cost_t eps, cost_t big,
                                         const int* list_in, int* list_out, cost_t* bid_delta, cost_t* cx,
                                         u64* keys, int* bidcols, long long* counts, int par, long long count)
{
    int rpw = GPUMATCH_WARP / G;
    int grp = lane / G;
    int gl = lane - grp * G;
    for (long long base = gw * rpw; base < count; base += nw * rpw) {
        long long slot = base + grp;
        long long i = -1;
        if (slot < count) {
            i = list_in[slot];
            if (x[i] >= 0) i = -1;      // a winner of the last round
        }
        Best b = scan_row(i, gl, G, indptr, indices, cost, dense_n, v, cmin, scale);
        if (gl == 0 && i >= 0 && b.j1 != LAP_NONE) {
            // row i bids for b.j1: its amount and cost, the key on the column (listed in bidcols by
            // its first bidder), and i listed for the next round
            cost_t d = bid_amount(b, eps, big);
            bid_delta[i] = d;
            cx[i] = b.c1;
            u64 old = atomicMax(&keys[b.j1], bid_key(d, (int)i));
            if (old == 0) bidcols[gm_append((u64*)&counts[2 + par])] = (int)b.j1;
            list_out[gm_append((u64*)&counts[par ^ 1])] = (int)i;
        }
    }
}

__device__ __forceinline__ void resolve_body(long long tid, long long nthreads, u64* keys, const int* bidcols,
                                             const cost_t* bid_delta, int* x, int* owner, cost_t* v,
                                             int* list_out, long long* counts, int par, cost_t floor,
                                             long long nb)
{
    for (long long t = tid; t < nb; t += nthreads) {
        int j = bidcols[t];
        u64 key = keys[j];
        keys[j] = 0;
        int i = (int)(key & 0xffffffffULL);
        cost_t nv = v[j] - bid_delta[i];
        if (nv < floor) counts[5] = 1;
        v[j] = nv;
        int old = owner[j];
        owner[j] = i;
        x[i] = j;
        if (old >= 0) {
            x[old] = -1;
            list_out[gm_append((u64*)&counts[par ^ 1])] = old;
        } else {
            gm_append((u64*)&counts[4]);
        }
    }
}

__device__ __forceinline__ void refresh_body(long long gw, long long nw, int lane, int G,
                                             const long long* __restrict__ indptr,
                                             const idx_t* __restrict__ indices, const cost_t* __restrict__ cost,
                                             long long dense_n, const cost_t* v, int* x, int* owner,
                                             const cost_t* cx, cost_t cmin, long long scale, cost_t eps,
                                             int* list_out, long long* counts, int par, long long m)
{
    int rpw = GPUMATCH_WARP / G;
    int grp = lane / G;
    int gl = lane - grp * G;
    for (long long base = gw * rpw; base < m; base += nw * rpw) {
        long long i = base + grp;
        long long held = -1;
        if (i < m) held = x[i];
        Best b = scan_row(held >= 0 ? i : -1, gl, G, indptr, indices, cost, dense_n, v, cmin, scale);
        if (gl == 0 && i < m) {
            if (held >= 0 && reduced(cx[i], held, v, cmin, scale) - b.w1 > eps) {
                owner[held] = -1;
                x[i] = -1;
                gm_add(&counts[4], -1LL);
                held = -1;
            }
            if (held < 0) list_out[gm_append((u64*)&counts[par])] = (int)i;
        }
    }
}

// ---------------------------------------------------------------------------
// kernels
// ---------------------------------------------------------------------------

// gpumatch_lap_refresh: the start of a phase.
//   indptr, indices, cost, dense_n : the costs (see above); v : n, read
//   x, owner  : m, n; a row more than eps worse than its best is unassigned
//   cx        : m, read; cmin, scale, eps : as above
//   list_out  : list par, gets every unassigned row (its length was 0)
//   counts    : [par] += listed rows, [4] -= unassigned rows
//   m, G      : rows, lanes per row
// Thread mapping: a group of G lanes per row, grid-stride.  No race: a row
// writes only its own slot and its own column's owner.
extern "C" __global__ void gpumatch_lap_refresh(
    const long long* __restrict__ indptr, const idx_t* __restrict__ indices, const cost_t* __restrict__ cost,
    long long dense_n, const cost_t* v, int* x, int* owner, const cost_t* cx, cost_t cmin, long long scale,
    cost_t eps, int* list_out, long long* counts, int par, long long m, int G)
{
    long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    refresh_body(gw, nw, threadIdx.x & 31, G, indptr, indices, cost, dense_n, v, x, owner, cx, cmin, scale,
                 eps, list_out, counts, par, m);
}

// gpumatch_lap_bid: the bids of round r (par = r & 1).
//   costs, v, x, cmin, scale : read; eps, big : the bid is min(w2 - w1, big) + eps
//   list_in   : list par (length counts[par]); rows with x >= 0 are skipped
//   list_out  : list par ^ 1, gets every bidding row
//   bid_delta, cx : m, the bid and the cost of the entry bid for
//   keys      : n, atomicMax of the bid keys; bidcols : the columns bid on,
//               appended by the first bidder (atomicMax saw 0)
//   counts    : [2 + par] bid columns, [par ^ 1] list length; thread 0
//               resets [2 + (par ^ 1)]
//   G         : lanes per row
// Thread mapping: a group of G lanes per listed row, grid-stride.  Races:
// only the atomics (the largest key wins whatever their order).
extern "C" __global__ void gpumatch_lap_bid(
    const long long* __restrict__ indptr, const idx_t* __restrict__ indices, const cost_t* __restrict__ cost,
    long long dense_n, const cost_t* v, const int* x, cost_t cmin, long long scale, cost_t eps, cost_t big,
    const int* list_in, int* list_out, cost_t* bid_delta, cost_t* cx, u64* keys, int* bidcols,
    long long* counts, int par, int G)
{
    long long count = counts[par];
    if (blockIdx.x == 0 && threadIdx.x == 0) counts[2 + (par ^ 1)] = 0;
    long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    bid_body(gw, nw, threadIdx.x & 31, G, indptr, indices, cost, dense_n, v, x, cmin, scale, eps, big,
             list_in, list_out, bid_delta, cx, keys, bidcols, counts, par, count);
}

// gpumatch_lap_resolve: each column bid on in round r goes to the row of
// its largest key, at its price minus that row's bid.
//   keys      : n, read and reset to 0; bidcols : counts[2 + par] columns
//   bid_delta : m, read; x, owner, v : updated
//   list_out  : list par ^ 1, gets the displaced rows
//   counts    : [par ^ 1] += displaced, [4] += newly assigned columns,
//               [5] = 1 when a price passes floor; thread 0 resets [par]
// Thread mapping: one thread per bid column, grid-stride.  No race: each
// column is listed once, a displaced row held that column only, and a
// winner bid for that column only.
extern "C" __global__ void gpumatch_lap_resolve(
    u64* keys, const int* __restrict__ bidcols, const cost_t* __restrict__ bid_delta, int* x, int* owner,
    cost_t* v, int* list_out, long long* counts, int par, cost_t floor)
{
    long long nb = counts[2 + par];
    if (blockIdx.x == 0 && threadIdx.x == 0) counts[par] = 0;
    resolve_body((long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x, keys,
                 bidcols, bid_delta, x, owner, v, list_out, counts, par, floor, nb);
}

// lone_chain: rounds r, r + 1, ... of one block while they have one
// bidder, run by one warp (every lane calls it) with no block barrier.
// With one unassigned row left (the tail of a phase), each round is a
// displacement: bidder i takes its best column j, whose owner (if any)
// bids next.  The writes are those of bid_body + resolve_body for a round
// with one bidder (bid_delta, cx, the price, owner, x; counts[4] when j was
// free, counts[5] at the floor), so the results are the general rounds'
// (the NumPy twin runs those; the scan uses the whole warp whatever the
// kernel's G: the same best and second-best entries).  The chain stops
// when the bid lands on a free column, i has no allowed entry, the floor
// flag is set, or `cap` rounds from `start` ran; lane 0 then lists the
// row left bidding, if any, for round r (counts[r & 1]), empties the other
// list and the bid columns' counts (as a general round leaves them), and
// writes r to counts[6].  Used by gpumatch_lap_rounds and gpumatch_lap_batch_dense.
// H200, 16 x 300² batch: its slowest problem's 1 679 rounds are nearly all
// of this kind, 2.6 us each with the block's barriers.
__device__ __forceinline__ void lone_chain(int i, long long r, long long start, long long cap, int lane,
                                           const long long* __restrict__ indptr, const idx_t* __restrict__ indices,
                                           const cost_t* __restrict__ cost, long long dense_n, cost_t* v, int* x,
                                           int* owner, cost_t* cx, cost_t* bid_delta, cost_t cmin, long long scale,
                                           cost_t eps, cost_t big, cost_t floor_v, int* list0, int* list1,
                                           long long* counts)
{
    while (true) {
        Best b = scan_row(i, lane, 32, indptr, indices, cost, dense_n, v, cmin, scale);
        int next = -2;                       // -2: no bid (no allowed entry); -1: a free column taken
        bool low = false;
        if (lane == 0 && b.j1 != LAP_NONE) {
            cost_t d = bid_amount(b, eps, big);
            bid_delta[i] = d;
            cx[i] = b.c1;
            int j = b.j1;
            cost_t nv = v[j] - d;
            low = nv < floor_v;
            v[j] = nv;
            next = owner[j];
            owner[j] = i;
            x[i] = j;
            if (next >= 0) x[next] = -1;
            else counts[4] += 1;
            if (low) counts[5] = 1;
        }
        next = __shfl_sync(GPUMATCH_FULL_MASK, next, 0);
        low = __shfl_sync(GPUMATCH_FULL_MASK, low, 0);
        __syncwarp();                        // lane 0's writes before the next scan reads the prices
        ++r;
        if (next < 0 || low || r - start >= cap) {
            if (lane == 0) {
                int* lout = (r & 1) ? list1 : list0;
                if (next >= 0) lout[0] = next;
                counts[r & 1] = next >= 0 ? 1 : 0;
                // the next general round appends to the other list and to the bid columns' count of
                // its parity: both start empty (a chain of odd length left the first list's count there)
                counts[(r & 1) ^ 1] = 0;
                counts[2] = 0;
                counts[3] = 0;
                counts[6] = r;
            }
            return;
        }
        i = next;
    }
}

// gpumatch_lap_rounds: rounds r0, r0 + 1, ... of bid + resolve in ONE
// block, until at most stop_at of the m rows are unassigned, the floor
// flag is set, or max_rounds rounds ran; counts[6] = the next round.
// Rounds with one bidder run in lone_chain (one warp, no barrier).
//   arguments : those of gpumatch_lap_bid and gpumatch_lap_resolve
// Thread mapping: one block (launch it with 1 block); groups of G lanes per
// listed row, then one thread per bid column, with a barrier between.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_lap_rounds(
    const long long* __restrict__ indptr, const idx_t* __restrict__ indices, const cost_t* __restrict__ cost,
    long long dense_n, cost_t* v, int* x, int* owner, cost_t cmin, long long scale, cost_t eps, cost_t big,
    int* list0, int* list1, cost_t* bid_delta, cost_t* cx, u64* keys, int* bidcols, long long* counts,
    cost_t floor, long long r0, long long max_rounds, long long stop_at, long long m, int G)
{
    long long r = r0;
    while (r - r0 < max_rounds) {
        __syncthreads();       // the last round's resolve is done
        long long assigned = counts[4];
        long long flag = counts[5];
        long long count = counts[r & 1];
        if (m - assigned <= stop_at || flag) break;
        int par = (int)(r & 1);
        if (count <= 32) {     // one bidder (an unassigned row listed): warp 0 carries the chain alone
            const int* lin = par ? list1 : list0;
            int lane = threadIdx.x & 31;
            int i = lane < count ? lin[lane] : -1;
            unsigned bidders = __ballot_sync(GPUMATCH_FULL_MASK, i >= 0 && x[i] < 0);
            if (__popc(bidders) == 1) {      // (every warp reads the same list: the same answer)
                i = __shfl_sync(GPUMATCH_FULL_MASK, i, __ffs(bidders) - 1);
                if (threadIdx.x < 32)
                    lone_chain(i, r, r0, max_rounds, lane, indptr, indices, cost, dense_n, v, x, owner, cx,
                               bid_delta, cmin, scale, eps, big, floor, list0, list1, counts);
                __syncthreads();
                r = counts[6];
                continue;
            }
        }
        // (no barrier: the bids write counts [par ^ 1] and [2 + par], thread 0
        // [2 + (par ^ 1)], none of which was just read; below, thread 0 resets
        // [par] once the bids' barrier has passed every read of it)
        if (threadIdx.x == 0) counts[2 + (par ^ 1)] = 0;
        bid_body(threadIdx.x >> 5, blockDim.x >> 5, threadIdx.x & 31, G, indptr, indices, cost, dense_n, v, x, cmin,
                 scale, eps, big, par ? list1 : list0, par ? list0 : list1, bid_delta, cx, keys, bidcols, counts, par,
                 count);
        __syncthreads();       // every bid is in
        long long nb = counts[2 + par];      // resolve writes [par ^ 1], [4], [5]; not this
        if (threadIdx.x == 0) counts[par] = 0;
        resolve_body(threadIdx.x, blockDim.x, keys, bidcols, bid_delta, x, owner, v, par ? list0 : list1, counts,
                     par, floor, nb);
        ++r;
    }
    if (threadIdx.x == 0) counts[6] = r;
}

// gpumatch_lap_update_start: dist[0][j] = dist[1][j] = 0 for a free column
// (owner < 0), lmax for the others.
//   owner : n; dist : 2 x n; n, lmax
// Thread mapping: grid-stride over the columns.
extern "C" __global__ void gpumatch_lap_update_start(const int* __restrict__ owner, long long* dist, long long n,
                                                     long long lmax)
{
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        long long d = owner[j] < 0 ? 0 : lmax;
        dist[j] = d;
        dist[n + j] = d;
    }
}

// One Jacobi sweep of Bellman-Ford toward the free columns over the rows
// of warp gw of nw (the body of gpumatch_lap_update_sweep): for each
// assigned row i (column k = x_i, h_ik from cx_i) and allowed entry j != k,
// l_ij = floor((h_ij - h_ik + eps) / eps) in [0, lmax]; nxt[k] = min(old[k],
// min_j old[j] + l_ij), and *flag = 1 when that dropped.
__device__ __forceinline__ void sweep_body(long long gw, long long nw, int lane, int G,
                                           const long long* __restrict__ indptr, const idx_t* __restrict__ indices,
                                           const cost_t* __restrict__ cost, long long dense_n, const cost_t* v,
                                           const int* __restrict__ x, const cost_t* __restrict__ cx, cost_t cmin,
                                           long long scale, cost_t eps, const long long* old, long long* nxt,
                                           long long* flag, long long m, long long lmax)
{
    const cost_t inf = cost_inf();
    int rpw = GPUMATCH_WARP / G;
    int grp = lane / G;
    int gl = lane - grp * G;
    for (long long base = gw * rpw; base < m; base += nw * rpw) {
        long long i = base + grp;
        long long k = i < m ? x[i] : -1;
        long long best = lmax;
        if (k >= 0) {
            cost_t hk = reduced(cx[i], k, v, cmin, scale);
            long long p0, p1;
            row_range(i, indptr, dense_n, &p0, &p1);
            for (long long p = p0 + gl; p < p1; p += G) {
                cost_t c = cost[p];
#if !COST_IS_INT
                if (!(c < inf)) continue;
#endif
                long long j = dense_n > 0 ? p - p0 : (long long)indices[p];
                if (j == k) continue;
                cost_t r = reduced(c, j, v, cmin, scale) - hk + eps;
                if (r < 0) r = 0;
#if COST_IS_INT
                cost_t q = r / eps;
#else
                cost_t q = floor(r / eps);
#endif
                long long l = q < (cost_t)lmax ? (long long)q : lmax;
                long long cand = old[j] + l;
                if (cand < best) best = cand;
            }
        }
        for (int off = G >> 1; off > 0; off >>= 1) {
            long long o = __shfl_xor_sync(GPUMATCH_FULL_MASK, best, off, G);
            if (o < best) best = o;
        }
        if (gl == 0 && k >= 0) {
            long long ok = old[k];
            if (best < ok) {
                nxt[k] = best;
                *flag = 1;
            } else {
                nxt[k] = ok;
            }
        }
    }
}

// gpumatch_lap_update_sweep: one Jacobi sweep of Bellman-Ford toward the
// free columns (sweep_body), old = dist[par], new = dist[par ^ 1].
// counts[7] = 1 when a distance dropped.
//   costs, v, x, cx, cmin, scale, eps : read; dist : 2 x n; m, n, lmax, par, G
// Thread mapping: a group of G lanes per row, grid-stride.  No race: row i
// alone writes new[x_i]; old is only read.
extern "C" __global__ void gpumatch_lap_update_sweep(
    const long long* __restrict__ indptr, const idx_t* __restrict__ indices, const cost_t* __restrict__ cost,
    long long dense_n, const cost_t* __restrict__ v, const int* __restrict__ x, const cost_t* __restrict__ cx,
    cost_t cmin, long long scale, cost_t eps, long long* dist, long long* counts, long long m, long long n,
    long long lmax, int par, int G)
{
    long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    long long nw = ((long long)gridDim.x * blockDim.x) >> 5;
    sweep_body(gw, nw, threadIdx.x & 31, G, indptr, indices, cost, dense_n, v, x, cx, cmin, scale, eps,
               dist + (par ? n : 0), dist + (par ? 0 : n), &counts[7], m, lmax);
}

// gpumatch_lap_update_apply: v_j -= dist[par][j] * eps (each column dearer
// by its distance to a free column).
//   v : n; dist : 2 x n; eps, n, par
// Thread mapping: grid-stride over the columns.
extern "C" __global__ void gpumatch_lap_update_apply(cost_t* v, const long long* __restrict__ dist, cost_t eps,
                                                     long long n, int par)
{
    const long long* d = dist + (par ? n : 0);
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        v[j] -= (cost_t)d[j] * eps;
    }
}

#ifdef GPUMATCH_COOPERATIVE
#include <cooperative_groups.h>

// gpumatch_lap_update_dial: a whole global price update in ONE cooperative
// launch by Dial's buckets over the transpose of the allowed entries: the
// same distances d (the least solution of d_{x_i} <= d_j + l_ij, 0 on the
// free columns, capped at lmax) and the same prices v_j -= d_j * eps as the
// Jacobi sweeps of gpumatch_lap_update_sweep run to convergence, but each
// entry is read once, when its column's level comes, instead of once per
// sweep (random 1M x 1M, 11M entries, H200: a whole solve's updates
// 5.3 -> 0.17 s).  The grid is co-resident: a grid.sync() costs far less
// than a launch and a read of the frontier's length.
// Levels k = 0 .. lmax - 1, each a sequence of steps with a grid barrier
// after each: a gather step lists the columns with d == k (the frontier);
// then relax steps, while the frontier is not empty: for each entry (i, j)
// of a frontier column j whose row i holds a column k_i != j, nd = k +
// min(l_ij, lmax); d[k_i] = min(d[k_i], nd) (atomicMin), and k_i joins the
// next frontier when it dropped to k (an entry of length 0).  A column
// reaches level k's frontier once: from the gather when an earlier level
// set d to k, else from the relax step that set it.
//   cptr, crow, ccost : n + 1, nnz, nnz: the rows of each column and the
//               entries' costs, in column order (the CSR's transpose)
//   v, x, owner, cx, cmin, scale, eps : as gpumatch_lap_update_sweep (v updated)
//   d         : n ints, the distances; front : 2 x n ints, the frontiers of
//               steps of even and odd number
//   flags     : u64[4]; [s % 3] the length of the frontier step s reads,
//               [(s + 1) % 3] that of the one it writes (thread 0 zeroes
//               [(s + 2) % 3] during step s: read before the barrier
//               ending step s - 1, written after the one ending step s);
//               [3] = the steps run
//   n, lmax
// Thread mapping: grid-stride over the columns (start, gather, prices); a
// warp per frontier column for the relax steps, its lanes over the
// column's entries 32 at a time (whole warps reach the append together).
extern "C" __global__ void gpumatch_lap_update_dial(
    const long long* __restrict__ cptr, const int* __restrict__ crow, const cost_t* __restrict__ ccost,
    cost_t* v, const int* __restrict__ x, const int* __restrict__ owner, const cost_t* __restrict__ cx,
    cost_t cmin, long long scale, cost_t eps, int* d, int* front, u64* flags, long long n, long long lmax)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const cost_t inf = cost_inf();
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long nthreads = (long long)gridDim.x * blockDim.x;
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    long long gw = tid >> 5;
    long long nw = nthreads >> 5;
    for (long long j = tid; j < n; j += nthreads) d[j] = owner[j] < 0 ? 0 : (int)lmax;
    if (tid < 4) flags[tid] = 0;
    grid.sync();
    long long s = 0;
    for (long long k = 0; k < lmax; ++k) {
        // gather: the columns that an earlier level set to k
        {
            int* out = front + ((s + 1) & 1) * n;
            u64* len_out = &flags[(s + 1) % 3];
            if (tid == 0) flags[(s + 2) % 3] = 0;
            for (long long j = tid; j < n; j += nthreads) {
                if (d[j] == (int)k) out[gm_append(len_out)] = (int)j;
            }
            grid.sync();
            ++s;
        }
        while (true) {
            u64 len = ((volatile u64*)flags)[s % 3];
            if (len == 0) break;
            const int* in = front + (s & 1) * n;
            int* out = front + ((s + 1) & 1) * n;
            u64* len_out = &flags[(s + 1) % 3];
            if (tid == 0) flags[(s + 2) % 3] = 0;
            for (long long w = gw; w < (long long)len; w += nw) {
                int j = in[w];
                cost_t vj = v[j];
                long long p1 = cptr[j + 1];
                for (long long base = cptr[j]; base < p1; base += GPUMATCH_WARP) {
                    long long e = base + lane;
                    if (e >= p1) continue;
                    int i = crow[e];
                    int ki = x[i];
                    if (ki < 0 || ki == j) continue;
                    cost_t c = ccost[e];
#if !COST_IS_INT
                    if (!(c < inf)) continue;
#endif
                    cost_t r = reduced_at(c, vj, cmin, scale) - reduced(cx[i], ki, v, cmin, scale) + eps;
                    if (r < 0) r = 0;
#if COST_IS_INT
                    cost_t q = r / eps;
#else
                    cost_t q = floor(r / eps);
#endif
                    long long nd = k + (q < (cost_t)lmax ? (long long)q : lmax);
                    if (nd >= lmax) continue;
                    int old = atomicMin(&d[ki], (int)nd);
                    if (old > (int)nd && nd == k) out[gm_append(len_out)] = ki;
                }
            }
            grid.sync();
            ++s;
        }
    }
    for (long long j = tid; j < n; j += nthreads) v[j] -= (cost_t)d[j] * eps;
    if (tid == 0) flags[3] = (u64)s;
}
#endif

#define LAP_BATCH_PARAMS                                                                                           \
    const cost_t* __restrict__ C, const long long* __restrict__ scale_, const cost_t* __restrict__ cmin_,         \
        const double* __restrict__ base_, const cost_t* __restrict__ eps0_, const cost_t* __restrict__ big_,      \
        const cost_t* __restrict__ floor_, cost_t* v_, cost_t* bid_delta_, cost_t* cx_, int* x_, int* owner_,   \
        int* bidcols_, int* lists_, u64* keys_, long long* counts_, int* x_out, int* status, long long n,        \
        long long cap, long long theta
#define LAP_BATCH_ARGS                                                                                             \
    C, scale_, cmin_, base_, eps0_, big_, floor_, v_, bid_delta_, cx_, x_, owner_, bidcols_, lists_, keys_,        \
        counts_, x_out, status, n, cap, theta

// The auction of problem blockIdx.x (the body of gpumatch_lap_batch_dense):
// its arrays carved from the shared memory smem (SHARED; the compiler then
// knows every access is to shared memory) or in the global scratch; red is
// the block's reduction scratch in shared memory.
template <bool SHARED>
__device__ __forceinline__ void batch_dense_problem(LAP_BATCH_PARAMS, unsigned long long* smem, double* red)
{
    long long b = blockIdx.x;
    const cost_t* cost = C + b * n * n;
    long long scale = scale_[b];
    cost_t cmin = cmin_[b], big = big_[b], floor_v = floor_[b];
    cost_t *v, *bid_delta, *cx;
    int *x, *owner, *bidcols, *list0, *list1;
    u64* keys;
    long long* counts;
    if (SHARED) {
        keys = (u64*)smem;
        v = (cost_t*)(keys + n);
        bid_delta = v + n;
        cx = bid_delta + n;
        counts = (long long*)(cx + n);
        x = (int*)(counts + 8);
        owner = x + n;
        bidcols = owner + n;
        list0 = bidcols + n;
        list1 = list0 + n;
    } else {
        v = v_ + b * n;
        bid_delta = bid_delta_ + b * n;
        cx = cx_ + b * n;
        x = x_ + b * n;
        owner = owner_ + b * n;
        bidcols = bidcols_ + b * n;
        list0 = lists_ + b * 2 * n;
        list1 = list0 + n;
        keys = keys_ + b * n;
        counts = counts_ + b * 8;
    }
    long long nw = blockDim.x >> 5;
    long long gw = threadIdx.x >> 5;
    int lane = threadIdx.x & 31;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
        v[j] = 0;
        x[j] = -1;
        owner[j] = -1;
        keys[j] = 0;
    }
    if (threadIdx.x < 8) counts[threadIdx.x] = 0;
    cost_t eps = eps0_[b];
    long long r = 0;
    while (true) {
        __syncthreads();
#if COST_IS_INT
        cost_t lo = 1;
#else
        double p = 0.0;      // the largest |price|: the float eps floor
        for (long long j = threadIdx.x; j < n; j += blockDim.x) p = fmax(p, fabs(v[j]));
        for (int off = 16; off > 0; off >>= 1) p = fmax(p, __shfl_xor_sync(GPUMATCH_FULL_MASK, p, off));
        if (lane == 0) red[gw] = p;
        __syncthreads();
        p = 0.0;
        for (int w = 0; w < nw; ++w) p = fmax(p, red[w]);
        cost_t lo = fmax(base_[b] * 0x1p-40, p * 0x1p-44);
#endif
        if (eps < lo) eps = lo;
        bool final = eps <= lo;
        __syncthreads();
        if (threadIdx.x == 0) counts[r & 1] = 0;
        __syncthreads();
        refresh_body(gw, nw, lane, 32, 0, 0, cost, n, v, x, owner, cx, cmin, scale, eps, (r & 1) ? list1 : list0,
                     counts, (int)(r & 1), n);
        long long start = r;
        while (true) {
            __syncthreads();       // the last round's resolve is done (barriers: as in gpumatch_lap_rounds)
            long long assigned = counts[4];
            long long flag = counts[5];
            long long count = counts[r & 1];
            if (flag) {
                if (threadIdx.x == 0) status[b] = 1;
                return;
            }
            if (assigned == n) break;
            if (r - start >= cap) {
                if (!final) break;
                if (threadIdx.x == 0) status[b] = 1;      // the last phase did not finish
                return;
            }
            int par = (int)(r & 1);
            if (count <= 32) {      // one bidder (an unassigned row listed): warp 0 carries the chain alone
                const int* lin = par ? list1 : list0;
                int i = lane < count ? lin[lane] : -1;
                unsigned bidders = __ballot_sync(GPUMATCH_FULL_MASK, i >= 0 && x[i] < 0);
                if (__popc(bidders) == 1) {      // (every warp reads the same list: the same answer)
                    i = __shfl_sync(GPUMATCH_FULL_MASK, i, __ffs(bidders) - 1);
                    if (gw == 0)
                        lone_chain(i, r, start, cap, lane, 0, 0, cost, n, v, x, owner, cx, bid_delta, cmin, scale,
                                   eps, big, floor_v, list0, list1, counts);
                    __syncthreads();
                    r = counts[6];
                    continue;
                }
            }
            if (threadIdx.x == 0) counts[2 + (par ^ 1)] = 0;
            bid_body(gw, nw, lane, 32, 0, 0, cost, n, v, x, cmin, scale, eps, big, par ? list1 : list0,
                     par ? list0 : list1, bid_delta, cx, keys, bidcols, counts, par, count);
            __syncthreads();
            long long nb = counts[2 + par];
            if (threadIdx.x == 0) counts[par] = 0;
            resolve_body(threadIdx.x, blockDim.x, keys, bidcols, bid_delta, x, owner, v, par ? list0 : list1,
                         counts, par, floor_v, nb);
            ++r;
        }
        if (final) {
            __syncthreads();
            for (long long j = threadIdx.x; j < n; j += blockDim.x) x_out[b * n + j] = x[j];
            return;
        }
#if COST_IS_INT
        eps = eps / theta;
        if (eps < 1) eps = 1;
#else
        eps = eps / (double)theta;
#endif
    }
}

// gpumatch_lap_batch_dense: one block solves one dense square n x n
// problem of the batch by the whole epsilon-scaling auction (the phases of
// _driver.run_phases with _driver.BATCH_SCHEDULE: every phase to the end, a
// cap of rounds per phase, no price update).
//   C         : k x n x n costs (+inf forbidden, floats)
//   scale, cmin, eps0, big, floor : k, per problem (integers: cost_t
//               scale as long long); base : k doubles (float eps floor)
//   v, bid_delta, cx : k x n cost_t; x, owner, bidcols : k x n int;
//   lists     : k x 2 x n int; keys : k x n u64; counts : k x 8
//   x_out     : k x n int, the column of each row of a solved problem
//   status    : k int; a problem with status 1 is skipped; one that hits
//               the floor or the cap of its last phase gets status 1
//   n, cap, theta : size, rounds per phase at most, eps divisor
//   in_shared : 1: the per-problem arrays (v, bid_delta, cx, counts, keys,
//               x, owner, bidcols, lists) live in the block's dynamic shared
//               memory instead (52 n + 64 bytes, the launcher's
//               batch_shared_bytes; the global scratch is not read)
// Thread mapping: block b = problem b; a warp per row (G = 32), then a
// thread per bid column, barriers between; rounds with one bidder in
// lone_chain (warp 0 alone).  blockDim.x a multiple of 32.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_lap_batch_dense(LAP_BATCH_PARAMS, int in_shared)
{
    if (status[blockIdx.x]) return;
    __shared__ double red[32];     // the float eps floor's reduction
    extern __shared__ unsigned long long lap_smem[];     // 8-byte aligned; the 8-byte arrays first
    if (in_shared)
        batch_dense_problem<true>(LAP_BATCH_ARGS, lap_smem, red);
    else
        batch_dense_problem<false>(LAP_BATCH_ARGS, lap_smem, red);
}

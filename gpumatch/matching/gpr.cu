// CUDA kernels of G-PR, the push-relabel maximum bipartite matching of
// Deveci, Kaya, Ucar and Catalyurek (ICPP 2013, doi:10.1109/ICPP.2013.21).
// The host-side driver is gpumatch/matching/_driver.py; the NumPy twins of
// these kernels are in gpumatch/matching/_kernels_numpy.py.
//
// Notation shared by every kernel (m rows, n columns, INF = m + n):
//   rptr, rind : m + 1, nnz   CSR of the graph, row -> its columns
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows
//                (rptr, cptr and every entry position: ofs_t; rind, cind
//                and every vertex id or label: idx_t; _common.cuh)
//   mu_row     : m, the column matched to each row, -1 if none
//   mu_col     : n, the row matched to each column, -1 if none, -2 when a
//                push found no reachable row ("dropped" until the next
//                global relabel)
//   psi_row    : m, row labels (distance to a free row; INF = unreachable)
//   psi_col    : n, column labels
// Only the row side of the matching is authoritative while pushes run:
// column v is matched iff mu_col[v] = u >= 0 and mu_row[u] = v.

// Columns/rows of more than GPR_HEAVY entries are scanned by a whole warp
// in the push and in the relabel BFS (skewed graphs such as R-MAT have rows
// of 10^4..10^5 entries that would serialise an iteration).
#ifndef GPR_HEAVY
#define GPR_HEAVY 32
#endif
// Slices of 32 entries whose loads a warp scanning a heavy row (relabel
// BFS) or a heavy column (greedy) issues together.
#ifndef GPR_HEAVY_BATCH
#define GPR_HEAVY_BATCH 4
#endif
#ifndef GPR_GREEDY_BATCH
#define GPR_GREEDY_BATCH 4
#endif

// gm_cas and gm_max (atomics overloaded for both index widths) are in _common.cuh.

// Scan order: column v scans its entries starting at entry v mod deg(v)
// and wrapping around, so that columns with equal choices (dense blocks,
// many free rows of equal label or degree) spread over different rows.
// gpr_rot gives entry k (0 <= k < len) of that order, `off` = v mod len.
__device__ __forceinline__ ofs_t gpr_rot(ofs_t beg, ofs_t len, ofs_t off, ofs_t k)
{
    ofs_t q = off + k;
    return beg + (q >= len ? q - len : q);
}

// ---------------------------------------------------------------------------
// gpumatch_gpr_greedy: one round of the cheap greedy initial matching.
//   cptr, cind     : CSC (see above)
//   mu_row, mu_col : matching, updated
//   n              : number of columns
// Thread mapping: one thread per column.  An unmatched column takes the
// first row of its list that it sees free.  Benign race: two columns may
// take the same row; the row keeps one of them and
// gpumatch_gpr_fix_cols rolls the other back.
extern "C" __global__ void gpumatch_gpr_greedy(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    idx_t* mu_row, idx_t* mu_col, long long n)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || mu_col[v] >= 0) return;
    for (ofs_t p = cptr[v]; p < cptr[v + 1]; ++p) {
        idx_t u = cind[p];
        if (mu_row[u] < 0) {
            mu_row[u] = (idx_t)v;
            mu_col[v] = u;
            return;
        }
    }
}

// gpumatch_gpr_greedy_deg1_rows: Karp-Sipser's degree-one rule on the rows,
// the first pass of the default initial matching.
//   rptr, rind     : CSR (see above)
//   mu_row, mu_col : matching, updated (consistent on entry and on exit)
//   m              : number of rows
// Thread mapping: one thread per row.  A free row with exactly one stored
// entry claims its column by atomicCAS on mu_col (-1 -> row) and then
// writes its own side; matching a degree-one vertex to its only neighbour
// never lowers the maximum matching size.  No other races.
extern "C" __global__ void gpumatch_gpr_greedy_deg1_rows(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    idx_t* mu_row, idx_t* mu_col, long long m)
{
    long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= m || mu_row[u] >= 0) return;
    ofs_t b = rptr[u];
    if (rptr[u + 1] - b != 1) return;
    idx_t c = rind[b];
    if (gm_cas(&mu_col[c], (idx_t)-1, (idx_t)u) == (idx_t)-1) mu_row[u] = c;
}

// gpumatch_gpr_greedy_cas: one pass of a degree-aware greedy matching over
// the light columns (at most GPR_HEAVY entries).
//   cptr, cind     : CSC (see above)
//   rptr           : CSR row pointers (row degrees only)
//   mu_row, mu_col : matching, updated (consistent on entry and on exit)
//   n              : number of columns
//   max_deg        : only columns of at most this many entries take part
// Thread mapping: one thread per column.  A free column finds its free row
// of least degree (the first such in its scan order, which starts at entry
// v mod deg(v) and wraps around; a degree-one row ends the scan) and claims
// it by atomicCAS on mu_row (-1 -> column); when it loses the CAS it
// rescans.  Rows are never released, so a column gives up only when none
// of its rows is free: the matching is maximal among the columns taking
// part.  Least degree first is what makes triangular and other path-like
// patterns match perfectly here (the first free row, which R-MAT-style
// hubs would prefer for speed, leaves them for long augmenting paths).
// Benign race: the scans read mu_row while other threads claim rows
// (volatile reads; a stale "free" only costs a failed CAS).
extern "C" __global__ void gpumatch_gpr_greedy_cas(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    const ofs_t* __restrict__ rptr, idx_t* mu_row, idx_t* mu_col,
    long long n, long long max_deg)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || mu_col[v] >= 0) return;
    ofs_t beg = cptr[v];
    ofs_t len = cptr[v + 1] - beg;
    if (len == 0 || (long long)len > max_deg || len > GPR_HEAVY) return;
    ofs_t off = (ofs_t)(v % len);
    volatile idx_t* vrow = mu_row;
    const idx_t none = (idx_t)-1;
    while (true) {
        idx_t arg = none, best = 0;
        for (ofs_t k = 0; k < len; ++k) {
            idx_t u = cind[gpr_rot(beg, len, off, k)];
            if (vrow[u] >= 0) continue;
            idx_t d = (idx_t)(rptr[u + 1] - rptr[u]);
            if (arg < 0 || d < best) { arg = u; best = d; }
            if (d <= 1) break;
        }
        if (arg < 0) return;
        if (gm_cas(&mu_row[arg], none, (idx_t)v) == none) { mu_col[v] = arg; return; }
    }
}

// gpumatch_gpr_greedy_cas_heavy: the same pass over the heavy columns (more
// than GPR_HEAVY entries), launched after the light columns' (hubs, which
// have rows to spare, come last, as least degree first wants).
//   cptr .. n      : as gpumatch_gpr_greedy_cas
// Thread mapping: one thread per column, whose warp serves each heavy
// column of its lanes in turn: lanes stride over the column (ballot and
// warp reduction, as in gpr_claim_slot).  A kernel of its own, so that the
// light pass keeps its registers (and occupancy).  Same choice, claim and
// races as gpumatch_gpr_greedy_cas.
extern "C" __global__ void gpumatch_gpr_greedy_cas_heavy(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    const ofs_t* __restrict__ rptr, idx_t* mu_row, idx_t* mu_col, long long n)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    if (v - lane >= n) return;  // whole warps only
    ofs_t beg = 0, len = 0;
    if (v < n && mu_col[v] < 0) {
        beg = cptr[v];
        len = cptr[v + 1] - beg;
    }
    bool heavy = len > GPR_HEAVY;
    ofs_t off = heavy ? (ofs_t)(v % len) : 0;
    volatile idx_t* vrow = mu_row;
    const idx_t none = (idx_t)-1;
    unsigned mask = __ballot_sync(GPUMATCH_FULL_MASK, heavy);
    while (mask) {  // the warp serves each heavy column of its lanes in turn
        int leader = __ffs(mask) - 1;
        mask &= mask - 1;
        ofs_t b = __shfl_sync(GPUMATCH_FULL_MASK, beg, leader);
        ofs_t l_ = __shfl_sync(GPUMATCH_FULL_MASK, len, leader);
        ofs_t o = __shfl_sync(GPUMATCH_FULL_MASK, off, leader);
        long long col = __shfl_sync(GPUMATCH_FULL_MASK, v, leader);
        while (true) {
            // bestd: a row degree (at most n, an idx_t); bestk: a place in
            // the column's scan order (an entry count: ofs_t)
            idx_t bestd = none, bestu = none;
            ofs_t bestk = -1;
            // GPR_GREEDY_BATCH slices of 32 entries at a time: their row
            // ids, then the rows' mates, then the free rows' degrees, each
            // group of loads issued back to back (a hub column of 10^6
            // entries is 3 * 10^6 / 32 dependent reads one slice at a time)
            const ofs_t span = (ofs_t)GPUMATCH_WARP * GPR_GREEDY_BATCH;
            bool found = false;
            for (ofs_t k0 = 0; k0 < l_ && !found; k0 += span) {
                idx_t us[GPR_GREEDY_BATCH], ds[GPR_GREEDY_BATCH];
#pragma unroll
                for (int j = 0; j < GPR_GREEDY_BATCH; ++j) {
                    ofs_t k = k0 + (ofs_t)j * GPUMATCH_WARP + lane;
                    us[j] = k < l_ ? cind[gpr_rot(b, l_, o, k)] : none;
                }
#pragma unroll
                for (int j = 0; j < GPR_GREEDY_BATCH; ++j) ds[j] = us[j] >= 0 ? vrow[us[j]] : (idx_t)0;
#pragma unroll
                for (int j = 0; j < GPR_GREEDY_BATCH; ++j)   // a free row's degree, else none
                    ds[j] = us[j] >= 0 && ds[j] < 0 ? (idx_t)(rptr[us[j] + 1] - rptr[us[j]]) : none;
#pragma unroll
                for (int j = 0; j < GPR_GREEDY_BATCH; ++j) {   // in scan order, as one slice at a time
                    if (found) continue;
                    unsigned h = __ballot_sync(GPUMATCH_FULL_MASK, ds[j] >= 0 && ds[j] <= 1);
                    if (h) {  // a degree-one row: take the first
                        int f = __ffs(h) - 1;
                        bestd = 1;
                        bestk = k0 + (ofs_t)j * GPUMATCH_WARP + f;
                        bestu = __shfl_sync(GPUMATCH_FULL_MASK, us[j], f);
                        found = true;
                        continue;
                    }
                    if (ds[j] >= 0 && (bestd < 0 || ds[j] < bestd)) {
                        bestd = ds[j];
                        bestk = k0 + (ofs_t)j * GPUMATCH_WARP + lane;
                        bestu = us[j];
                    }
                }
            }
            for (int sh = GPUMATCH_WARP / 2; sh > 0; sh >>= 1) {  // first least degree
                idx_t od = __shfl_xor_sync(GPUMATCH_FULL_MASK, bestd, sh);
                ofs_t ok = __shfl_xor_sync(GPUMATCH_FULL_MASK, bestk, sh);
                idx_t ou = __shfl_xor_sync(GPUMATCH_FULL_MASK, bestu, sh);
                bool better = od >= 0 && (bestd < 0 || od < bestd || (od == bestd && ok < bestk));
                if (better) { bestd = od; bestk = ok; bestu = ou; }
            }
            if (bestu < 0) break;  // no free row left: the column gives up
            int won = 0;
            if (lane == leader)
                won = gm_cas(&mu_row[bestu], none, (idx_t)col) == none;
            won = __shfl_sync(GPUMATCH_FULL_MASK, won, leader);
            if (won) {
                if (lane == leader) mu_col[col] = bestu;
                break;
            }
        }
    }
}

// gpumatch_gpr_fix_rows: first half of FixMatching.
//   mu_row : m, updated: -1 where the column does not point back
//   mu_col : n, read only
// Thread mapping: one thread per row.  No races (each thread writes its row).
extern "C" __global__ void gpumatch_gpr_fix_rows(
    idx_t* __restrict__ mu_row, const idx_t* __restrict__ mu_col, long long m)
{
    long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= m) return;
    idx_t v = mu_row[u];
    if (v >= 0 && mu_col[v] != (idx_t)u) mu_row[u] = -1;
}

// gpumatch_gpr_fix_cols: FixMatching on the columns (mu(v) <- -1 where
// mu(mu(v)) != v; dropped columns, -2, become -1 as well).
//   mu_row : m, read only
//   mu_col : n, updated
// Thread mapping: one thread per column.  No races.
extern "C" __global__ void gpumatch_gpr_fix_cols(
    const idx_t* __restrict__ mu_row, idx_t* __restrict__ mu_col, long long n)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    idx_t u = mu_col[v];
    if (u < 0 ? u != -1 : mu_row[u] != (idx_t)v) mu_col[v] = -1;
}

// gpumatch_gpr_fix_both: FixMatching on both sides in one launch (the
// result of gpumatch_gpr_fix_rows then gpumatch_gpr_fix_cols).
//   mu_row : m, updated: -1 where the column does not point back
//   mu_col : n, updated: -1 where the row does not point back, or -2
// Thread mapping: grid-stride over max(m, n); thread i fixes row i and
// column i.  Benign race: a column's check may read a row that another
// thread is resetting, and the other way round, but a pointer that is
// reset never pointed back, so both outcomes give the same result: a
// column keeps its row u iff mu_row[u] pointed to it on entry, a row keeps
// its column v iff mu_col[v] pointed to it on entry.
__device__ __forceinline__ void gpr_fix_pair(idx_t* mu_row, idx_t* mu_col, long long i, long long m,
                                             long long n, idx_t& row_value)
{
    if (i < m) {
        idx_t v = mu_row[i];
        if (v >= 0 && mu_col[v] != (idx_t)i) { mu_row[i] = -1; v = -1; }
        row_value = v;
    }
    if (i < n) {
        idx_t u = mu_col[i];
        if (u < 0 ? u != -1 : mu_row[u] != (idx_t)i) mu_col[i] = -1;
    }
}

extern "C" __global__ void gpumatch_gpr_fix_both(idx_t* mu_row, idx_t* mu_col, long long m, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long top = m > n ? m : n;
    idx_t unused;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < top; i += stride)
        gpr_fix_pair(mu_row, mu_col, i, m, n, unused);
}

// Block-aggregated append: called by every thread of the block (block-
// uniform loops only) with `take`; returns the slot in the list counted by
// `counter` of a taking thread (one atomic per block, not per warp: a list
// of 10^5 entries would otherwise queue 10^4 atomics on one address).
//   s_warp : shared, 33 entries, reused after the final barrier
__device__ __forceinline__ unsigned long long gpr_block_append(
    bool take, unsigned long long* counter, unsigned long long* s_warp)
{
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    int warp = threadIdx.x / GPUMATCH_WARP;
    unsigned mask = __ballot_sync(GPUMATCH_FULL_MASK, take);
    if (lane == 0) s_warp[warp] = (unsigned long long)__popc(mask);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long sum = 0;
        for (int w = 0; w < (int)(blockDim.x / GPUMATCH_WARP); ++w) {
            unsigned long long c = s_warp[w];
            s_warp[w] = sum;
            sum += c;
        }
        s_warp[32] = sum ? atomicAdd(counter, sum) : 0ULL;
    }
    __syncthreads();
    unsigned long long slot = s_warp[32] + s_warp[warp] + (unsigned long long)__popc(mask & ((1u << lane) - 1u));
    __syncthreads();
    return slot;
}

// gpumatch_gpr_relabel_init: set up a global relabel in one launch.
//   rptr       : m + 1, CSR row pointers (row degrees only)
//   mu_row, mu_col : the matching; with fix != 0 it is first repaired as
//                gpumatch_gpr_fix_both does (same race argument), else it
//                must be consistent and is only read
//   psi_row    : m, out: 0 for a free row, INF otherwise
//   psi_col    : n, out: INF
//   roots      : out, the free rows of degree > 0 (order unspecified), their
//                number in counts[0] and counts[6]; a row without entries
//                reaches nothing, and R-MAT-like inputs have many
//   counts     : 7, zero on entry; [0..2] the BFS ring, counts[5] out: the
//                number of all free rows; [3], [4] are collect_active's
//   max_level  : 1, out: 0
// Thread mapping: block-stride over max(m, n), one thread per index (at
// most 1024 threads per block, a multiple of 32); block-aggregated appends
// and one atomic per block for each total.
extern "C" __global__ void gpumatch_gpr_relabel_init(
    const ofs_t* __restrict__ rptr, idx_t* mu_row, idx_t* mu_col,
    idx_t* __restrict__ psi_row, idx_t* __restrict__ psi_col,
    idx_t* __restrict__ roots, unsigned long long* counts, idx_t* max_level,
    long long m, long long n, idx_t inf, int fix)
{
    __shared__ unsigned long long s_warp[33];
    __shared__ unsigned long long s_free, s_roots;
    long long stride = (long long)gridDim.x * blockDim.x;
    long long top = m > n ? m : n;
    if (threadIdx.x == 0) { s_free = 0; s_roots = 0; }
    if (blockIdx.x == 0 && threadIdx.x == 0) max_level[0] = 0;
    __syncthreads();
    unsigned my_free = 0, my_roots = 0;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < top; base += stride) {
        long long i = base + threadIdx.x;
        bool is_free = false, is_root = false;
        if (fix) {
            idx_t v = 0;
            gpr_fix_pair(mu_row, mu_col, i, m, n, v);
            is_free = i < m && v < 0;
        } else if (i < m) {
            is_free = mu_row[i] < 0;
        }
        if (i < m) {
            psi_row[i] = is_free ? (idx_t)0 : inf;
            is_root = is_free && rptr[i + 1] > rptr[i];
        }
        if (i < n) psi_col[i] = inf;
        my_free += is_free;
        my_roots += is_root;
        unsigned long long slot = gpr_block_append(is_root, &counts[0], s_warp);
        if (is_root) roots[slot] = (idx_t)i;
    }
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
        my_free += __shfl_down_sync(GPUMATCH_FULL_MASK, my_free, off);
        my_roots += __shfl_down_sync(GPUMATCH_FULL_MASK, my_roots, off);
    }
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0 && (my_free | my_roots)) {
        atomicAdd(&s_free, (unsigned long long)my_free);
        atomicAdd(&s_roots, (unsigned long long)my_roots);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (s_free) atomicAdd(&counts[5], s_free);
        if (s_roots) atomicAdd(&counts[6], s_roots);
    }
}

// gpumatch_gpr_collect_active: the active list after a global relabel.
//   mu_col    : n, a consistent matching
//   psi_col   : n, exact labels
//   active    : out, the free columns with psi < INF (order unspecified)
//   counts    : 7; counts[3], out: their number (zero on entry);
//               counts[4], out: max_level[0] (so that the host reads them
//               and counts[5..6] of gpumatch_gpr_relabel_init with one
//               copy); the other entries are not touched
//   max_level : 1, the relabel's maxLevel (read only)
// Thread mapping: grid-stride over n; warp-aggregated append.
extern "C" __global__ void gpumatch_gpr_collect_active(
    const idx_t* __restrict__ mu_col, const idx_t* __restrict__ psi_col,
    idx_t* __restrict__ active, unsigned long long* counts, const idx_t* __restrict__ max_level,
    long long n, idx_t inf)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    unsigned long long* count = &counts[3];
    if (tid == 0) counts[4] = (unsigned long long)max_level[0];
    for (long long base = tid - lane; base < n; base += stride) {
        long long v = base + lane;
        bool take = v < n && mu_col[v] < 0 && psi_col[v] < inf;
        unsigned mask = __ballot_sync(GPUMATCH_FULL_MASK, take);
        if (mask) {
            unsigned long long first = 0;
            int leader = __ffs(mask) - 1;
            if (lane == leader) first = atomicAdd(count, (unsigned long long)__popc(mask));
            first = __shfl_sync(GPUMATCH_FULL_MASK, first, leader);
            if (take) active[first + __popc(mask & ((1u << lane) - 1u))] = (idx_t)v;
        }
    }
}

// BFS helpers shared by gpumatch_gpr_bfs_step and gpumatch_gpr_bfs_loop.
// Rows of more than GPR_HEAVY entries are scanned by a whole warp (lanes
// stride over the row); the others by their own thread.  Skewed graphs
// (R-MAT) have rows of 10^4..10^5 entries that would serialise a level.

// The entries beg, beg + step, ... (below end) of a row, BATCH at a time:
// their column ids, then the columns' labels and mates, then the claims,
// each group of loads (or atomics) issued back to back.  Each entry's
// column is claimed once (CAS on its label, INF -> the column label); the
// claimer labels the column's matched row and appends it to `next` (one
// atomic for the lanes that append together: a first BFS level appends
// 10^5 rows to one list).  Same claims and labels as one entry at a time.
// A light row (at most
// GPR_HEAVY entries, step 1, GPR_BFS_BATCH): a small frontier's level (the
// tails of long augmenting paths: hundreds of levels of a few rows) is a
// chain of dependent reads, which this shortens.  A heavy row (a lane's
// share of its warp, step 32, GPR_HEAVY_BATCH): a hub row of 10^6 entries.
// LAZY: a column's mate is read only once the column is claimed (once per
// column, against once per entry: a wide level's random reads, which bound
// it, fall from two per entry to one and a fifth on degree 5), for the
// multi-block steps; the one-block loop of small frontiers reads it with
// the label, where the chain of dependent reads is the cost
// (GPR_BFS_LAZY_MATE=0: the steps read it with the label too).
#ifndef GPR_BFS_BATCH
#define GPR_BFS_BATCH 4
#endif
#ifndef GPR_BFS_LAZY_MATE
#define GPR_BFS_LAZY_MATE 1
#endif
template <int BATCH, bool LAZY>
__device__ __forceinline__ void gpr_bfs_entries(
    const idx_t* __restrict__ rind, const idx_t* __restrict__ mu_col, idx_t* psi_row, idx_t* psi_col,
    idx_t* next, unsigned long long* next_count, ofs_t beg, ofs_t end, ofs_t step, idx_t col_label,
    idx_t inf, idx_t& best)
{
    for (ofs_t p0 = beg; p0 < end; p0 += BATCH * step) {
        idx_t c[BATCH], lab[BATCH], mate[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; ++k) c[k] = p0 + k * step < end ? rind[p0 + k * step] : (idx_t)-1;
#pragma unroll
        for (int k = 0; k < BATCH; ++k) {
            lab[k] = c[k] >= 0 ? psi_col[c[k]] : (idx_t)0;
            if (!LAZY) mate[k] = c[k] >= 0 ? mu_col[c[k]] : (idx_t)-1;
        }
#pragma unroll
        for (int k = 0; k < BATCH; ++k)   // claimed here: lab[k] becomes inf, else anything else
            if (c[k] >= 0 && lab[k] == inf) lab[k] = gm_cas(&psi_col[c[k]], inf, col_label) == inf ? inf : 0;
        if (LAZY) {
#pragma unroll
            for (int k = 0; k < BATCH; ++k) mate[k] = c[k] >= 0 && lab[k] == inf ? mu_col[c[k]] : (idx_t)-1;
        }
#pragma unroll
        for (int k = 0; k < BATCH; ++k) {
            if (c[k] < 0 || lab[k] != inf) continue;
            if (best < col_label) best = col_label;
            if (mate[k] >= 0) {
                psi_row[mate[k]] = col_label + 1;
                best = col_label + 1;
                next[gm_append(next_count)] = mate[k];
            }
        }
    }
}

// One BFS level over frontier[0, size): warp-aligned `start` (the first
// slot of this warp) and `stride` (a multiple of 32), so that every lane of
// a warp runs the same loop trips (the ballot needs the whole warp).
template <bool LAZY>
__device__ __forceinline__ void gpr_bfs_level(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const idx_t* __restrict__ mu_col, idx_t* psi_row, idx_t* psi_col,
    const idx_t* frontier, idx_t* next, unsigned long long* next_count,
    long long start, long long stride, long long size, idx_t col_label, idx_t inf, idx_t& best)
{
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    for (long long base = start; base < size; base += stride) {
        long long i = base + lane;
        ofs_t beg = 0, end = 0;
        if (i < size) {
            idx_t r = frontier[i];
            beg = rptr[r];
            end = rptr[r + 1];
        }
        bool heavy = (end - beg) > GPR_HEAVY;
        unsigned mask = __ballot_sync(GPUMATCH_FULL_MASK, heavy);
        while (mask) {
            int leader = __ffs(mask) - 1;
            mask &= mask - 1;
            ofs_t b = __shfl_sync(GPUMATCH_FULL_MASK, beg, leader);
            ofs_t e = __shfl_sync(GPUMATCH_FULL_MASK, end, leader);
            gpr_bfs_entries<GPR_HEAVY_BATCH, LAZY>(rind, mu_col, psi_row, psi_col, next, next_count, b + lane, e,
                                                   (ofs_t)GPUMATCH_WARP, col_label, inf, best);
        }
        if (!heavy)
            gpr_bfs_entries<GPR_BFS_BATCH, LAZY>(rind, mu_col, psi_row, psi_col, next, next_count, beg, end, (ofs_t)1,
                                                 col_label, inf, best);
    }
}

// gpumatch_gpr_bfs_step: one level of the global-relabel BFS, worklist form.
//   rptr, rind : CSR (see above)
//   mu_col     : n, a consistent matching (after FixMatching)
//   psi_row    : m, row labels; free rows are 0 on entry, others INF
//   psi_col    : n, column labels; INF on entry
//   frontier   : rows of label 2*step (count in counts[step % 3])
//   next       : out, rows of label 2*step + 2 (count in counts[(step+1) % 3])
//   counts     : 3, ring of frontier sizes; this step zeroes counts[(step+2) % 3]
//   max_level  : 1, atomic max of every label set
// Thread mapping: grid-stride loop, one frontier row per thread (a warp
// per row above GPR_HEAVY entries, see gpr_bfs_level); a step on
// an empty frontier does nothing, so the host can launch several steps
// before it looks at the count.  Each column is claimed once by atomicCAS,
// so the labels are the exact BFS levels whatever the schedule; the order
// of `next` varies between runs.
extern "C" __global__ void gpumatch_gpr_bfs_step(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const idx_t* __restrict__ mu_col, idx_t* psi_row, idx_t* psi_col,
    const idx_t* __restrict__ frontier, idx_t* __restrict__ next,
    unsigned long long* counts, idx_t* max_level, long long step, idx_t inf)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    if (tid == 0) counts[(step + 2) % 3] = 0ULL;
    long long size = (long long)counts[step % 3];
    idx_t best = -1;
    gpr_bfs_level<GPR_BFS_LAZY_MATE != 0>(rptr, rind, mu_col, psi_row, psi_col, frontier, next,
                                          &counts[(step + 1) % 3], tid & ~(long long)(GPUMATCH_WARP - 1), stride,
                                          size, (idx_t)(2 * step + 1), inf, best);
    if (best >= 0) gm_max(max_level, best);
}

// gpumatch_gpr_bfs_loop: persistent mode of gpumatch_gpr_bfs_step for
// small frontiers.  ONE block runs BFS levels step0, step0 + 1, ... with
// __syncthreads() between levels, until a frontier is empty or longer than
// `limit` (the host then goes on with multi-block steps), or `max_steps`.
//   rptr .. inf : as gpumatch_gpr_bfs_step
//   buf0, buf1  : the two frontier buffers (level s reads buf[s % 2])
//   state       : 2, out: the next step to run, and its frontier size
// Thread mapping: one block, block-stride loop over the frontier.  Each
// level is exactly one gpumatch_gpr_bfs_step (same claims, same labels).
// Ring slot (s + 2) % 3, zeroed by thread 0 at level s, was last read at
// the start of level s - 1, before that level's barrier.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_gpr_bfs_loop(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const idx_t* __restrict__ mu_col, idx_t* psi_row, idx_t* psi_col,
    idx_t* buf0, idx_t* buf1, unsigned long long* counts, idx_t* max_level,
    long long step0, long long limit, long long max_steps, idx_t inf, long long* state)
{
    long long step = step0;
    idx_t best = -1;
    unsigned long long size = counts[step % 3];
    while (step - step0 < max_steps) {
        if (threadIdx.x == 0) counts[(step + 2) % 3] = 0ULL;
        const idx_t* frontier = (step % 2) ? buf1 : buf0;
        idx_t* next = (step % 2) ? buf0 : buf1;
        idx_t col_label = (idx_t)(2 * step + 1);
        gpr_bfs_level<false>(rptr, rind, mu_col, psi_row, psi_col, frontier, next, &counts[(step + 1) % 3],
                             threadIdx.x & ~(GPUMATCH_WARP - 1), blockDim.x, (long long)size, col_label, inf, best);
        __syncthreads();
        ++step;
        size = *((volatile unsigned long long*)&counts[step % 3]);
        if (size == 0ULL || (long long)size > limit) break;
    }
    if (best >= 0) gm_max(max_level, best);
    if (threadIdx.x == 0) { state[0] = step; state[1] = (long long)size; }
}

// ---------------------------------------------------------------------------
// One push iteration in two launches: CLAIM, then PUSH.
//
// Why two phases.  The paper's single push kernel lets every active column
// write mu(u) = v at once and rolls the losers back afterwards.  Its hand-off
// of the displaced column w = mu(u) is racy: a column that reads mu(u) after
// another pusher wrote it hands on that pusher instead of w, so w drops out
// of the list (found again only by the next global relabel), and w may be
// handed on twice, by two pushers that read it before either wrote.  With a
// plain (non-atomic) iA stamp, two threads then process that column in the
// same iteration, each taking a different row and displacing that row's
// column: a cascade.  On directed social networks whose hub rows are wanted
// by hundreds of columns at once (soc-slashdot0902 in the corpus) every
// push phase ended with about as many columns lost or double-matched as it
// had active ones; the matched count went DOWN after FixMatching, and the
// global relabel restored the same picture each round: G-PR never finished.
//
// Here the iteration is split at a barrier instead:
//   claim : every listed column finds its row of minimum label (the scan of
//           the paper, stopping early at psi(v) - 1) and writes its index to
//           claim[u]; rows and labels are only read, so every scan sees the
//           labels of the start of the iteration.  Benign race: several
//           columns write claim[u]; one value survives.
//   push  : the column whose claim survived is the only one that touches row
//           u: w = mu(u); mu(u) = v; mu(v) = u; psi(u) = psi(v) + 1; w takes
//           v's slot.  A column that lost keeps its slot.  No races.
// Invariant: the list holds each free column at most once (a winner's slot
// passes on exactly the column it displaced), so no stamp array is needed,
// the matching of the rows is consistent after every iteration, and the
// matched count never decreases.  Columns that pushed keep a stale mu(w)
// until they push again; FixMatching clears those.
//
// Scans start at entry v mod deg(v) (gpr_rot, at the top of this file).
// ---------------------------------------------------------------------------

// The claim of one slot.  Must be called by all 32 lanes of a warp (v = -1
// for a lane without a slot): a column of more than GPR_HEAVY entries is
// scanned by the whole warp, 32 entries per step; a ballot finds the first
// entry at or below the stop level and, without one, a warp reduction finds
// the first minimum (lowest label, then first in scan order): the result of
// the serial scan, which the other columns run on their own lane.
// Returns the row claimed, or -1 (no slot, or no reachable row: then
// mu(v) = -2, "dropped" until the next global relabel).
__device__ __forceinline__ idx_t gpr_claim_slot(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, idx_t* mu_col,
    const idx_t* psi_row, idx_t* psi_col, idx_t* claim, idx_t v, idx_t inf)
{
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    bool scan = v >= 0;
    idx_t stop = 0;
    ofs_t beg = 0, len = 0, off = 0;
    if (scan) {
        stop = psi_col[v] - 1;
        beg = cptr[v];
        len = cptr[v + 1] - beg;
        off = len ? v % len : 0;
    }
    bool heavy = scan && len > GPR_HEAVY;
    idx_t best = inf;
    idx_t arg = -1;
    unsigned mask = __ballot_sync(GPUMATCH_FULL_MASK, heavy);
    while (mask) {  // the warp scans each heavy column of its lanes in turn
        int leader = __ffs(mask) - 1;
        mask &= mask - 1;
        ofs_t b = __shfl_sync(GPUMATCH_FULL_MASK, beg, leader);
        ofs_t l_ = __shfl_sync(GPUMATCH_FULL_MASK, len, leader);
        ofs_t o = __shfl_sync(GPUMATCH_FULL_MASK, off, leader);
        idx_t st = __shfl_sync(GPUMATCH_FULL_MASK, stop, leader);
        idx_t wbest = inf, hb = inf, ha = -1;
        ofs_t wk = -1;   // a place in the scan order (an entry count)
        bool hit = false;
        for (ofs_t k0 = 0; k0 < l_; k0 += GPUMATCH_WARP) {
            ofs_t k = k0 + lane;
            idx_t l = inf, u = -1;
            if (k < l_) { u = cind[gpr_rot(b, l_, o, k)]; l = psi_row[u]; }
            unsigned h = __ballot_sync(GPUMATCH_FULL_MASK, k < l_ && l <= st);
            if (h) {
                int f = __ffs(h) - 1;
                hb = __shfl_sync(GPUMATCH_FULL_MASK, l, f);
                ha = __shfl_sync(GPUMATCH_FULL_MASK, u, f);
                hit = true;
                break;
            }
            if (l < wbest) { wbest = l; wk = k; }
        }
        if (!hit) {
            for (int sh = GPUMATCH_WARP / 2; sh > 0; sh >>= 1) {
                idx_t ob = __shfl_xor_sync(GPUMATCH_FULL_MASK, wbest, sh);
                ofs_t ok = __shfl_xor_sync(GPUMATCH_FULL_MASK, wk, sh);
                if (ob < wbest || (ob == wbest && (unsigned long long)ok < (unsigned long long)wk)) {
                    wbest = ob; wk = ok;
                }
            }
            hb = wbest;
            ha = (wk >= 0 && wbest < inf) ? cind[gpr_rot(b, l_, o, wk)] : (idx_t)-1;
        }
        if (lane == leader) { best = hb; arg = ha; }
    }
    if (scan && !heavy) {
        for (ofs_t k = 0; k < len; ++k) {
            idx_t u = cind[gpr_rot(beg, len, off, k)];
            idx_t l = psi_row[u];
            if (l < best) { best = l; arg = u; }
            if (l <= stop) break;
        }
    }
    if (!scan) return -1;
    if (arg < 0) {
        mu_col[v] = -2;
        return -1;
    }
    psi_col[v] = best + 1;
    claim[arg] = v;
    return arg;
}

// The push of one slot whose column v claimed row u in this iteration's
// claim phase (u = -1: nothing to do).  Returns the column the slot hands
// on: the displaced column (or -1) if v's claim survived, else v itself.
__device__ __forceinline__ idx_t gpr_push_slot(
    idx_t* mu_row, idx_t* mu_col, idx_t* psi_row, const idx_t* psi_col, const idx_t* claim,
    idx_t v, idx_t u)
{
    if (v < 0 || u < 0) return -1;
    if (claim[u] != v) return v;
    idx_t w = mu_row[u];
    mu_row[u] = v;
    mu_col[v] = u;
    psi_row[u] = psi_col[v] + 1;
    return w;
}

// gpumatch_gpr_claim: the claim phase of one push iteration.
//   cptr, cind : CSC (see above)
//   mu_col     : n, updated only for dropped columns (-2)
//   psi_row    : m, row labels (read only)
//   psi_col    : n, updated: psi(v) = min label + 1 for each claiming column
//   claim      : m, out: claim[u] = one of the columns that claimed row u
//                (rows nobody claimed keep stale values, never read)
//   active     : len, the active columns Ac (-1 = empty slot)
//   target     : len, out: the row each slot's column claimed, or -1
// Thread mapping: one thread per slot (a warp for a column of more than
// GPR_HEAVY entries, see gpr_claim_slot).  Benign race: the writes to
// claim[u] of different columns (one survives).
extern "C" __global__ void gpumatch_gpr_claim(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, idx_t* mu_col,
    const idx_t* __restrict__ psi_row, idx_t* psi_col, idx_t* claim,
    const idx_t* __restrict__ active, idx_t* __restrict__ target, long long len, idx_t inf)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i - (threadIdx.x & (GPUMATCH_WARP - 1)) >= len) return;  // whole warps only
    idx_t v = i < len ? active[i] : (idx_t)-1;
    idx_t u = gpr_claim_slot(cptr, cind, mu_col, psi_row, psi_col, claim, v, inf);
    if (i < len) target[i] = u;
}

// gpumatch_gpr_push: the push phase of one iteration (after gpumatch_gpr_claim).
//   mu_row, mu_col : matching, updated by the winning claims
//   psi_row        : m, updated: psi(u) = psi(v) + 1 for each row taken
//   psi_col        : n, read only
//   claim          : m, read only
//   active         : len, the list the claim phase processed
//   next           : len, in: the rows claimed (target); out: Ap, the column
//                    each slot hands to the next iteration, or -1
// Thread mapping: one thread per slot.  No races: only the one column whose
// claim survived touches a row.
extern "C" __global__ void gpumatch_gpr_push(
    idx_t* mu_row, idx_t* mu_col, idx_t* psi_row, const idx_t* __restrict__ psi_col,
    const idx_t* __restrict__ claim, const idx_t* __restrict__ active, idx_t* __restrict__ next, long long len)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    next[i] = gpr_push_slot(mu_row, mu_col, psi_row, psi_col, claim, active[i], next[i]);
}

// gpumatch_gpr_claim_list: gpumatch_gpr_claim over a dense list whose length
// lives on the device (no host read between iterations).
//   cptr .. claim, active, target, inf : as gpumatch_gpr_claim
//   counts  : 2, the list lengths: this iteration's list has counts[cur]
//             entries (or len_hint, see below); thread 0 zeroes
//             counts[cur ^ 1], which gpumatch_gpr_push_compact of this
//             iteration fills (it was last read by the previous iteration)
//   len_hint: >= 0: the list length, known on the host (first iteration of
//             a list), also stored into counts[cur] by thread 0; -1: read
//             counts[cur]
// Thread mapping: as gpumatch_gpr_claim; the grid covers an upper bound of
// the length (lists never grow) and surplus warps return at once.
extern "C" __global__ void gpumatch_gpr_claim_list(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, idx_t* mu_col,
    const idx_t* __restrict__ psi_row, idx_t* psi_col, idx_t* claim,
    const idx_t* __restrict__ active, idx_t* __restrict__ target,
    unsigned long long* counts, int cur, long long len_hint, idx_t inf)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long len = len_hint >= 0 ? len_hint : (long long)counts[cur];
    if (i == 0) {
        counts[cur ^ 1] = 0ULL;
        if (len_hint >= 0) counts[cur] = (unsigned long long)len_hint;
    }
    if (i - (threadIdx.x & (GPUMATCH_WARP - 1)) >= len) return;  // whole warps only
    idx_t v = i < len ? active[i] : (idx_t)-1;
    idx_t u = gpr_claim_slot(cptr, cind, mu_col, psi_row, psi_col, claim, v, inf);
    if (i < len) target[i] = u;
}

// gpumatch_gpr_push_compact: gpumatch_gpr_push fused with the shrink of the
// list (the paper's prefix-sum compaction, here an append).
//   mu_row .. claim : as gpumatch_gpr_push
//   active  : the list the claim phase processed, counts[cur] entries
//   target  : its rows claimed (gpumatch_gpr_claim_list)
//   out     : out, the columns the slots hand on (displaced columns and
//             columns whose claim lost), in unspecified order; their number
//             in counts[cur ^ 1] (zeroed by the claim of this iteration)
// Thread mapping: one thread per slot, whole warps (the grid covers an
// upper bound of the length); warp-aggregated appends.  No races on the
// matching (as gpumatch_gpr_push).
extern "C" __global__ void gpumatch_gpr_push_compact(
    idx_t* mu_row, idx_t* mu_col, idx_t* psi_row, const idx_t* __restrict__ psi_col,
    const idx_t* __restrict__ claim, const idx_t* __restrict__ active, const idx_t* __restrict__ target,
    idx_t* __restrict__ out, unsigned long long* counts, int cur)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    long long len = (long long)counts[cur];
    if (i - lane >= len) return;  // whole warps only
    idx_t o = -1;
    if (i < len) o = gpr_push_slot(mu_row, mu_col, psi_row, psi_col, claim, active[i], target[i]);
    bool keep = o >= 0;
    unsigned mask = __ballot_sync(GPUMATCH_FULL_MASK, keep);
    if (mask) {
        unsigned long long first = 0;
        int leader = __ffs(mask) - 1;
        if (lane == leader) first = atomicAdd(&counts[cur ^ 1], (unsigned long long)__popc(mask));
        first = __shfl_sync(GPUMATCH_FULL_MASK, first, leader);
        if (keep) out[first + __popc(mask & ((1u << lane) - 1u))] = o;
    }
}

// gpumatch_gpr_push_loop: persistent mode for short active lists.  ONE
// block runs up to `iters` claim + push iterations on the device, with
// __syncthreads() as the barrier between the phases (it also makes every
// global write of the block visible to the whole block), and stops early
// when an iteration leaves the list empty.
//   cptr .. claim : as gpumatch_gpr_claim and gpumatch_gpr_push
//   bufa          : len, the active list Ac on entry; then a work buffer
//   bufb          : len, work buffer (targets, then Ap)
//   iters         : most iterations to run (the relabel schedule's rest)
//   done          : 1, out: iterations run
// Thread mapping: one block; thread t owns slots t, t + blockDim, ... in
// every phase, so the list buffers need no barrier of their own.  Each
// iteration is exactly gpumatch_gpr_claim then gpumatch_gpr_push over the
// whole list (its NumPy twin is the per-iteration loop).
extern "C" __global__ void __launch_bounds__(1024) gpumatch_gpr_push_loop(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    idx_t* mu_row, idx_t* mu_col, idx_t* psi_row, idx_t* psi_col, idx_t* claim,
    idx_t* bufa, idx_t* bufb, int iters, long long len, idx_t inf, int* done)
{
    idx_t* active = bufa;
    idx_t* next = bufb;
    int j = 0;
    while (j < iters) {
        for (long long base = threadIdx.x & ~(GPUMATCH_WARP - 1); base < len; base += blockDim.x) {
            long long i = base + (threadIdx.x & (GPUMATCH_WARP - 1));
            idx_t v = i < len ? active[i] : (idx_t)-1;
            idx_t u = gpr_claim_slot(cptr, cind, mu_col, psi_row, psi_col, claim, v, inf);
            if (i < len) next[i] = u;
        }
        __syncthreads();
        int live = 0;
        for (long long i = threadIdx.x; i < len; i += blockDim.x) {
            idx_t out = gpr_push_slot(mu_row, mu_col, psi_row, psi_col, claim, active[i], next[i]);
            next[i] = out;
            live |= (out >= 0);
        }
        ++j;
        idx_t* t = active; active = next; next = t;
        if (!__syncthreads_or(live)) break;
    }
    if (threadIdx.x == 0) done[0] = j;
}

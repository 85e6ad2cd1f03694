// CUDA kernels of the push-relabel walks that finish a matching whose
// augmenting paths are long (shuffled block-triangular Jacobians, permuted
// chains).  The host-side driver is _walk_round in
// gpumatch/matching/_driver.py; the NumPy twin is walk in
// gpumatch/matching/_kernels_numpy.py.
//
// Notation (m rows, n columns, INF = m + n, as in gpr.cu):
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows (cptr
//                and entry positions ofs_t, ids idx_t: _common.cuh)
//   mu_row     : m, the column matched to each row, -1 if none.  The only
//                authoritative side during a walk: every column is in at
//                most one slot of mu_row or carried by one thread.
//   psi_row    : m, row labels in G-PR's units (a free row 0, rows at even
//                levels, INF unreachable), exact after a global relabel.
//
// A G-PR push iteration moves every active column one step, so a path of
// L rows costs L iterations (a launch or a grid barrier each) and the
// augmenting-path phases a BFS of L levels per phase.  A walk instead lets
// one thread carry its column down the whole path: the column takes its
// row of least label with an atomic exchange, which hands the thread the
// row's old mate (or -1: the path reached a free row, the matching grew by
// one), and the thread goes on with that column.  The row is relabelled to
// the column's second-least label + 2, a valid lower bound (Kaya,
// Langguth, Manne, Ucar, Comput. Oper. Res. 40(5), 2013,
// doi:10.1016/j.cor.2012.12.009, the serial engine's push-relabel).

// Entries of a column's list whose loads a walk step issues together.
#ifndef WALK_BATCH
#define WALK_BATCH 4
#endif

// gm_exch: atomic exchange for both index widths.
__device__ __forceinline__ int gm_exch(int* a, int value) { return atomicExch(a, value); }
__device__ __forceinline__ long long gm_exch(long long* a, long long value)
{
    return (long long)atomicExch((unsigned long long*)a, (unsigned long long)value);
}

// gpumatch_walk: one walk per listed column.
//   cptr, cind : CSC (see above)
//   mu_row     : m, exchanged atomically
//   psi_row    : m, read; the row a column takes is relabelled (plain store)
//   active     : len, free columns, each listed once
//   len        : entries of active
//   inf        : INF
//   cap        : most pushes of one thread (its column stays free after)
//   stats      : u64[2], += pushes, += walks that reached a free row
// Thread mapping: one thread per listed column, for the whole walk.
// Benign races: labels read while other threads raise them (a stale label
// only sends a column a longer way; the driver's exact relabels decide
// when to stop), and two threads taking one row (the exchange serialises
// them: the second carries on with the first one's column).
extern "C" __global__ void gpumatch_walk(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    idx_t* mu_row, idx_t* psi_row, const idx_t* __restrict__ active,
    long long len, idx_t inf, long long cap, u64* stats)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    idx_t c = active[i];
    long long steps = 0;
    while (c >= 0 && steps < cap) {
        idx_t best = -1;
        idx_t l1 = inf, l2 = inf;
        ofs_t beg = cptr[c], end = cptr[c + 1];
        // WALK_BATCH entries at a time: their row ids, then their labels,
        // loads issued back to back (a walk is a chain of dependent reads:
        // one entry after the other cost two memory latencies per entry)
        for (ofs_t p0 = beg; p0 < end; p0 += WALK_BATCH) {
            idx_t rs[WALK_BATCH], ls[WALK_BATCH];
#pragma unroll
            for (int k = 0; k < WALK_BATCH; ++k) rs[k] = p0 + k < end ? cind[p0 + k] : (idx_t)-1;
#pragma unroll
            for (int k = 0; k < WALK_BATCH; ++k) ls[k] = rs[k] >= 0 ? ((volatile idx_t*)psi_row)[rs[k]] : inf;
#pragma unroll
            for (int k = 0; k < WALK_BATCH; ++k) {   // in list order: the first least label wins, as before
                if (ls[k] < l1) {
                    l2 = l1;
                    l1 = ls[k];
                    best = rs[k];
                } else if (ls[k] < l2) {
                    l2 = ls[k];
                }
            }
        }
        if (best < 0 || l1 >= inf) break;          // no free row reachable: c stays free
        idx_t old = gm_exch(&mu_row[best], c);
        psi_row[best] = l2 >= inf - 2 ? inf : l2 + 2;
        ++steps;
        c = old;
    }
    if (steps) atomicAdd(&stats[0], (u64)steps);
    if (c < 0 && steps) atomicAdd(&stats[1], (u64)1);
}

// gpumatch_walk_mates: mu_col from mu_row after the walks.
//   mu_row : m, read
//   mu_col : n, out (set to -1 beforehand by the launcher)
//   m      : rows
// Thread mapping: grid-stride over the rows.  No race: each column is in
// at most one slot of mu_row.
extern "C" __global__ void gpumatch_walk_mates(const idx_t* __restrict__ mu_row, idx_t* mu_col, long long m)
{
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m;
         r += (long long)gridDim.x * blockDim.x) {
        idx_t c = mu_row[r];
        if (c >= 0) mu_col[c] = (idx_t)r;
    }
}

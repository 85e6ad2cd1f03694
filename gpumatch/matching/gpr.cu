// CUDA kernels of G-PR, the push-relabel maximum bipartite matching of
// Deveci, Kaya, Ucar and Catalyurek (ICPP 2013, doi:10.1109/ICPP.2013.21).
// The host-side driver is gpumatch/matching/_driver.py; the NumPy twins of
// these kernels are in gpumatch/matching/_kernels_numpy.py.
//
// Notation shared by every kernel (m rows, n columns, INF = m + n):
//   rptr, rind : m + 1, nnz   CSR of the graph, row -> its columns
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows
//   mu_row     : m, the column matched to each row, -1 if none
//   mu_col     : n, the row matched to each column, -1 if none, -2 when a
//                push found no reachable row ("dropped" until the next
//                global relabel)
//   psi_row    : m, row labels (distance to a free row; INF = unreachable)
//   psi_col    : n, column labels
// Only the row side of the matching is authoritative while pushes run:
// column v is matched iff mu_col[v] = u >= 0 and mu_row[u] = v.

// ---------------------------------------------------------------------------
// small helpers (overloaded for 32- and 64-bit indices)

__device__ __forceinline__ int gm_cas(int* a, int expected, int value)
{
    return atomicCAS(a, expected, value);
}
__device__ __forceinline__ long long gm_cas(long long* a, long long expected, long long value)
{
    return (long long)atomicCAS((unsigned long long*)a, (unsigned long long)expected,
                                (unsigned long long)value);
}
__device__ __forceinline__ void gm_max(int* a, int value) { atomicMax(a, value); }
__device__ __forceinline__ void gm_max(long long* a, long long value) { atomicMax(a, value); }

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
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    idx_t* mu_row, idx_t* mu_col, long long n)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || mu_col[v] >= 0) return;
    for (idx_t p = cptr[v]; p < cptr[v + 1]; ++p) {
        idx_t u = cind[p];
        if (mu_row[u] < 0) {
            mu_row[u] = (idx_t)v;
            mu_col[v] = u;
            return;
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

// gpumatch_gpr_bfs_step: one level of the global-relabel BFS, worklist form.
//   rptr, rind : CSR (see above)
//   mu_col     : n, a consistent matching (after FixMatching)
//   psi_row    : m, row labels; free rows are 0 on entry, others INF
//   psi_col    : n, column labels; INF on entry
//   frontier   : rows of label 2*step (count in counts[step % 3])
//   next       : out, rows of label 2*step + 2 (count in counts[(step+1) % 3])
//   counts     : 3, ring of frontier sizes; this step zeroes counts[(step+2) % 3]
//   max_level  : 1, atomic max of every label set
// Thread mapping: grid-stride loop, one frontier row per thread; a step on
// an empty frontier does nothing, so the host can launch several steps
// before it looks at the count.  Each column is claimed once by atomicCAS,
// so the labels are the exact BFS levels whatever the schedule; the order
// of `next` varies between runs.
extern "C" __global__ void gpumatch_gpr_bfs_step(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const idx_t* __restrict__ mu_col, idx_t* psi_row, idx_t* psi_col,
    const idx_t* __restrict__ frontier, idx_t* __restrict__ next,
    unsigned long long* counts, idx_t* max_level, long long step, idx_t inf)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    if (tid == 0) counts[(step + 2) % 3] = 0ULL;
    long long size = (long long)counts[step % 3];
    idx_t col_label = (idx_t)(2 * step + 1);
    idx_t best = -1;
    for (long long i = tid; i < size; i += stride) {
        idx_t r = frontier[i];
        for (idx_t p = rptr[r]; p < rptr[r + 1]; ++p) {
            idx_t c = rind[p];
            if (psi_col[c] != inf) continue;
            if (gm_cas(&psi_col[c], inf, col_label) != inf) continue;
            best = col_label;
            idx_t r2 = mu_col[c];
            if (r2 >= 0) {
                psi_row[r2] = col_label + 1;
                best = col_label + 1;
                unsigned long long slot = atomicAdd(&counts[(step + 1) % 3], 1ULL);
                next[slot] = r2;
            }
        }
    }
    if (best >= 0) gm_max(max_level, best);
}

// gpumatch_gpr_push: one push iteration over the active-column list.
//   cptr, cind     : CSC (see above)
//   mu_row, mu_col : matching, updated
//   psi_row, psi_col : labels, updated
//   active         : len, the active columns Ac (-1 = empty slot)
//   next           : len, out: Ap, the column each slot hands to the next
//                    iteration (the displaced column, or -1)
//   stamp          : n, iA: iteration in which a column was last processed
//   it             : this iteration's stamp (> 0)
// Thread mapping: one thread per slot.  A column v finds its neighbour row
// u of minimum label, scanning in order and stopping at psi(v) - 1 (no row
// can be lower while labels are valid).  If psi(u) < INF it performs the
// double push: w = mu(u); mu(u) = v; mu(v) = u; psi(v) = psi(u) + 1;
// psi(u) = psi(u) + 2, and w (if any) takes v's slot, without atomics.
// Otherwise v is unreachable: mu(v) = -2 and the slot empties.
// Benign races: several columns may push to one row in the same iteration;
// the row keeps one and gpumatch_gpr_fixup rolls the others back.  Labels
// read while another thread writes them are either value (both legal).
extern "C" __global__ void gpumatch_gpr_push(
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    idx_t* mu_row, idx_t* mu_col, idx_t* psi_row, idx_t* psi_col,
    const idx_t* __restrict__ active, idx_t* __restrict__ next,
    int* stamp, int it, long long len, idx_t inf)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    idx_t v = active[i];
    idx_t out = -1;
    if (v >= 0 && stamp[v] != it) {
        stamp[v] = it;
        idx_t u0 = mu_col[v];
        if (!(u0 >= 0 && mu_row[u0] == v)) {  // not already matched
            idx_t stop = psi_col[v] - 1;
            idx_t best = inf;
            idx_t arg = -1;
            for (idx_t p = cptr[v]; p < cptr[v + 1]; ++p) {
                idx_t u = cind[p];
                idx_t l = psi_row[u];
                if (l < best) { best = l; arg = u; }
                if (l <= stop) break;
            }
            if (arg >= 0) {
                idx_t w = mu_row[arg];
                mu_row[arg] = v;
                mu_col[v] = arg;
                psi_col[v] = best + 1;
                psi_row[arg] = best + 2;
                if (w != v) out = w;
            } else {
                mu_col[v] = -2;
            }
        }
    }
    next[i] = out;
}

// gpumatch_gpr_fixup: roll back the pushes that lost a race.
//   mu_row : m, read only
//   mu_col : n, updated: -1 for a column whose row kept another column
//   active : len, the list the push just processed
//   next   : len, updated: a column that lost goes back into its own slot
// Thread mapping: one thread per slot.  No races on mu_col (a column is
// written only by its own slots, all with the same value).
extern "C" __global__ void gpumatch_gpr_fixup(
    const idx_t* __restrict__ mu_row, idx_t* mu_col,
    const idx_t* __restrict__ active, idx_t* __restrict__ next, long long len)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    idx_t v = active[i];
    if (v < 0) return;
    idx_t u = mu_col[v];
    if (u >= 0 && mu_row[u] != v) {
        mu_col[v] = -1;
        next[i] = v;
    }
}

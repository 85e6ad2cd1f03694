// CUDA twins of the gpumatch.csr utilities that CuPy has no primitive for.
// The NumPy twins are in gpumatch/csr.py; both give identical results.

#ifndef VALUE_T
#define VALUE_T int
#endif
#ifndef LABEL_T
#define LABEL_T int
#endif

// gpumatch_compact_scatter: the write half of stream compaction.
//   values : count, input list
//   keep   : count, 1 = keep (uint8)
//   scan   : count, inclusive prefix sum of keep (from cupy.cumsum)
//   out    : scan[count-1], the kept values in order
// Thread mapping: one thread per input element.  No races: kept elements
// have distinct scan values.
extern "C" __global__ void gpumatch_compact_scatter(
    const VALUE_T* __restrict__ values, const unsigned char* __restrict__ keep,
    const long long* __restrict__ scan, VALUE_T* __restrict__ out, long long count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count && keep[i]) out[scan[i] - 1] = values[i];
}

// gpumatch_first_min_neighbor: segmented arg-min of G-PR's push scan.
//   indptr    : rows + 1, CSR pointers
//   indices   : nnz, CSR neighbours
//   labels    : number of neighbour vertices, label of each
//   vertices  : k, the rows to scan
//   stop_at   : k, early-stop level per row (used when use_stop != 0)
//   neighbor  : k, out: first neighbour of minimum label, -1 for an empty row
//   min_label : k, out: that label, LABEL_T max for an empty row
// Thread mapping: one thread per listed row, scanning its entries in order
// (so "first" is the same as NumPy's).  No shared writes.
extern "C" __global__ void gpumatch_first_min_neighbor(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices,
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
    for (idx_t p = indptr[v]; p < indptr[v + 1]; ++p) {
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
// pattern, in one pass and one read-back.
//   indptr  : m + 1, row pointers as given by the caller (not yet trusted)
//   indices : nnz, column indices as given
//   out     : 6 int64, in/out.  The host sets out = {0, INT64_MAX,
//             INT64_MIN, 0, 0, 0}; the kernel leaves
//             out[0] bit 0: some indptr[i+1] < indptr[i]; bit 1: a row
//                    reaches outside [0, nnz) (its entries are not read);
//             out[1], out[2]: min and max column index over the rows read;
//             out[3]: 1 if some row is not strictly increasing;
//             out[4], out[5]: indptr[0] and indptr[m].
// Thread mapping: grid-stride, one thread per row; a warp reduces its
// lanes' partial results with shuffles and one lane per warp updates `out`
// with atomics (so a handful of atomics per block, not one per row).
extern "C" __global__ void gpumatch_csr_summary(
    const PTR_T* __restrict__ indptr, const IND_T* __restrict__ indices,
    long long m, long long nnz, long long* __restrict__ out)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long flags = 0;
    long long lo = 0x7fffffffffffffffLL, hi = -0x7fffffffffffffffLL - 1;
    int unsorted = 0;
    for (long long i = tid; i < m; i += stride) {
        long long s = (long long)indptr[i], e = (long long)indptr[i + 1];
        if (e < s) { flags |= 1ull; continue; }
        if (s < 0 || e > nnz) { flags |= 2ull; continue; }
        long long prev = 0;
        for (long long k = s; k < e; ++k) {
            long long v = (long long)indices[k];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            if (k > s && v <= prev) unsorted = 1;
            prev = v;
        }
    }
    for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
        flags |= __shfl_down_sync(GPUMATCH_FULL_MASK, flags, off);
        long long olo = __shfl_down_sync(GPUMATCH_FULL_MASK, lo, off);
        long long ohi = __shfl_down_sync(GPUMATCH_FULL_MASK, hi, off);
        lo = olo < lo ? olo : lo;
        hi = ohi > hi ? ohi : hi;
        unsorted |= __shfl_down_sync(GPUMATCH_FULL_MASK, unsorted, off);
    }
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0) {
        if (flags) atomicOr((unsigned long long*)&out[0], flags);
        atomicMin(&out[1], lo);
        atomicMax(&out[2], hi);
        if (unsorted) out[3] = 1;   // benign race: every writer writes 1
    }
    if (tid == 0) {
        out[4] = (long long)indptr[0];
        out[5] = (long long)indptr[m];
    }
}

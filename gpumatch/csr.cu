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

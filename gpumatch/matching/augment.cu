// @prepend matching/augment_common.cuh
// CUDA kernels of the augmenting-path phases (gpumatch/matching/_augment.py): one
// launch per step (dissolve, adopt, seed, BFS level, flips) and the forest's repairs.
// The shared notation, device helpers and tuning macros are in
// matching/augment_common.cuh, prepended to this file by gpumatch/_cuda.py.

extern "C" __global__ void gpumatch_aug_dissolve(
    long long m, long long n, idx_t* __restrict__ root_col, idx_t* __restrict__ tree_row,
    idx_t* __restrict__ end_of, unsigned char* __restrict__ tstate, const int* __restrict__ dead, int epoch,
    idx_t* __restrict__ dissolved, unsigned long long* __restrict__ ctr)
{
    aug_dissolve_items(m, n, root_col, tree_row, end_of, tstate, dead, epoch, dissolved, ctr,
                       (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}
extern "C" __global__ void gpumatch_aug_adopt(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* __restrict__ tree_row,
    idx_t* __restrict__ root_col, idx_t* __restrict__ parent_col, const idx_t* __restrict__ dissolved,
    unsigned long long* __restrict__ ctr)
{
    aug_adopt_items(cptr, cind, tree_row, root_col, parent_col, dissolved, (long long)ctr[5],
                    (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}
extern "C" __global__ void gpumatch_aug_adopt_all(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* __restrict__ tree_row,
    const idx_t* __restrict__ end_of, const int* __restrict__ dead, int kill, idx_t* __restrict__ root_col,
    idx_t* __restrict__ parent_col, idx_t* __restrict__ adopted, unsigned long long* __restrict__ ctr, long long n)
{
    aug_adopt_all_items(cptr, cind, tree_row, end_of, dead, kill, root_col, parent_col, adopted, ctr, n,
                        (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}
extern "C" __global__ void gpumatch_aug_adopt_push(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* __restrict__ mu_col,
    const idx_t* __restrict__ tree_row, const idx_t* __restrict__ end_of, const int* __restrict__ dead, int kill,
    idx_t* root_col, idx_t* parent_col, idx_t* adopted, unsigned long long* ctr, long long first, long long count)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long threads = (long long)gridDim.x * blockDim.x;
    int width = aug_group_width((unsigned long long)(count - first), threads, GPUMATCH_WARP);
    aug_adopt_push_items(rptr, rind, mu_col, tree_row, end_of, dead, kill, root_col, parent_col, adopted, ctr, first,
                         count, tid / width, threads / width, (int)(tid % width), width);
}
extern "C" __global__ void gpumatch_aug_adopt_mates(
    const idx_t* __restrict__ mu_col, const idx_t* __restrict__ root_col, const idx_t* __restrict__ parent_col,
    idx_t* __restrict__ tree_row, idx_t* __restrict__ end_of, int* __restrict__ depth,
    const unsigned char* __restrict__ tstate, int* __restrict__ dead, int kill, int* __restrict__ seen, int epoch,
    const idx_t* __restrict__ dissolved, idx_t* __restrict__ flips, idx_t* __restrict__ roots,
    unsigned long long* __restrict__ ctr, int count_at, long long first, int frontier)
{
    aug_adopt_mates_items(mu_col, root_col, parent_col, tree_row, end_of, depth, tstate, dead, kill, seen, epoch,
                          dissolved, flips, roots, ctr, first, (long long)ctr[count_at], frontier != 0,
                          (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}
extern "C" __global__ void gpumatch_aug_seed(
    const ofs_t* __restrict__ rptr, const ofs_t* __restrict__ cptr, const idx_t* __restrict__ mu_row,
    const idx_t* __restrict__ mu_col, long long m, long long n, idx_t* __restrict__ tree_row,
    idx_t* __restrict__ end_of, int* __restrict__ depth, unsigned char* __restrict__ tstate,
    unsigned char* __restrict__ pending, int* __restrict__ seen, int epoch, idx_t* __restrict__ roots,
    idx_t* __restrict__ root_col, idx_t* __restrict__ bowner, idx_t* __restrict__ bbuf0, double back_ratio,
    unsigned long long* __restrict__ ctr)
{
    aug_seed_items(rptr, cptr, mu_row, mu_col, m, n, tree_row, end_of, depth, tstate, pending, seen, epoch, roots,
                   root_col, bowner, bbuf0, back_ratio, ctr, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                   (long long)gridDim.x * blockDim.x);
}

// gpumatch_aug_note_added: after edges (rows[i], cols[i]) were added, mark
// the rows of kept trees whose new column is in no tree (pending[r] = 1:
// the next phase grows their trees from them; a live tree gets tstate 2:
// not closed until then, so a removal cannot orphan it first).
// Thread mapping: one thread per edge; concurrent stores write the same value.
extern "C" __global__ void gpumatch_aug_note_added(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const idx_t* __restrict__ tree_row, const idx_t* __restrict__ root_col,
    unsigned char* __restrict__ tstate, unsigned char* __restrict__ pending)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    long long r = rows[i];
    idx_t t = tree_row[r];
    if (t < 0 || root_col[cols[i]] >= 0) return;
    pending[r] = 1;
    if (tstate[t] != 1) tstate[t] = 2;
}

// gpumatch_aug_note_removed: before edges (rows[i], cols[i]) are removed
// (the matching and the patterns still hold them), sort out what each does
// to the tree t of its column:
//  * a matched edge of an orphaned tree, or the second matched edge of one
//    tree in the batch (atomicExch on claim[t], stamped `batch`): dead[t] =
//    epoch (the next dissolve); the first one is left to gpumatch_aug_orphan;
//  * the edge a live tree reached its column by: the column is listed in
//    `broken` (count *nbroken) for gpumatch_aug_reparent.
// Thread mapping: one thread per edge; concurrent dead stores write the same
// value; the appends are atomic.
extern "C" __global__ void gpumatch_aug_note_removed(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const idx_t* __restrict__ root_col, const idx_t* __restrict__ parent_col, const idx_t* __restrict__ mu_col,
    const unsigned char* __restrict__ tstate, int* __restrict__ claim, int batch, int* __restrict__ dead,
    int epoch, idx_t* __restrict__ broken, unsigned long long* __restrict__ nbroken)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    idx_t c = (idx_t)cols[i], r = (idx_t)rows[i];
    idx_t t = root_col[c];
    if (t < 0) return;
    if (mu_col[c] == r) {
        if (tstate[t] == 1 || atomicExch(&claim[t], batch) == batch) dead[t] = epoch;
    } else if (parent_col[c] == r && tstate[t] != 1) {
        broken[gm_append(nbroken)] = c;
    }
}

// gpumatch_aug_reparent: after the batch left the patterns, give each listed
// column c of a live tree t whose parent edge was removed a new parent: the
// first row u' of c (CSC) in t with depth[u'] <= depth[parent_col[c]] (the
// old parent, no longer adjacent).  None: dead[t] = epoch.
// Thread mapping: one thread per listed column (the grid covers the batch,
// *nbroken <= k); repairs[0] counts the new parents.  Columns are
// distinct; parent_col[c] is written only by
// c's thread, depth[] only read, so concurrent re-parents in one tree keep
// every parent chain strictly descending (header).
extern "C" __global__ void gpumatch_aug_reparent(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* __restrict__ root_col,
    const idx_t* __restrict__ tree_row, const int* __restrict__ depth, idx_t* __restrict__ parent_col,
    int* __restrict__ dead, int epoch, const idx_t* __restrict__ broken,
    const unsigned long long* __restrict__ nbroken, unsigned long long* __restrict__ repairs)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)*nbroken) return;
    idx_t c = broken[i];
    idx_t t = root_col[c];
    if (dead[t] == epoch) return;
    int limit = depth[parent_col[c]];
    for (ofs_t p = cptr[c]; p < cptr[c + 1]; ++p) {
        idx_t u = cind[p];
        if (tree_row[u] == t && depth[u] <= limit) {
            parent_col[c] = u;
            atomicAdd(&repairs[0], 1ULL);
            return;
        }
    }
    dead[t] = epoch;
}

// gpumatch_aug_orphan: after the batch (and gpumatch_aug_reparent), for the
// tree t of each removed matched edge (rows[i], cols[i]) that is still live
// and claimed by this batch: flip the path root -> the freed column and
// mark t orphaned (tstate 1, header).  A tree with pending rows is not
// closed, so it cannot be a certificate: dead[t] = epoch instead.  The
// atomicCAS on claim[t] (batch -> -batch) lets one thread per tree act;
// trees are disjoint.  repairs[1] counts the orphaned trees.
// Thread mapping: one thread per removed edge.
extern "C" __global__ void gpumatch_aug_orphan(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const idx_t* __restrict__ root_col, const idx_t* __restrict__ parent_col, idx_t* mu_row, idx_t* mu_col,
    int* __restrict__ claim, int batch, int* __restrict__ dead, int epoch, unsigned char* __restrict__ tstate,
    unsigned long long* __restrict__ repairs)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    idx_t c = (idx_t)cols[i];
    idx_t t = root_col[c];
    if (t < 0 || dead[t] == epoch || mu_col[c] >= 0) return;
    if (atomicCAS(&claim[t], batch, -batch) != batch) return;
    if (tstate[t] == 2) {
        dead[t] = epoch;
        return;
    }
    aug_flip_path(t, c, parent_col, mu_row, mu_col);
    tstate[t] = 1;
    atomicAdd(&repairs[1], 1ULL);
}

// gpumatch_aug_level: BFS level `s` (both sides, aug_level) over the whole
// grid; `kill` is the epoch of the next dissolve.
// Thread mapping: grid-stride, one thread per frontier row or column.
extern "C" __global__ void gpumatch_aug_level(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind, const ofs_t* __restrict__ cptr,
    const idx_t* __restrict__ cind, const idx_t* __restrict__ mu_row, const idx_t* __restrict__ mu_col,
    idx_t* root_col, idx_t* parent_col, idx_t* tree_row, idx_t* end_of, int* depth,
    const unsigned char* __restrict__ tstate, int* dead, unsigned char* pending, idx_t* bpar, idx_t* bowner,
    idx_t* flips, const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, idx_t* bbuf0, idx_t* bbuf1,
    unsigned long long* ctr, long long s, double back_ratio, int meet, long long floor, int kill,
    double search_wait)
{
    aug_level(rptr, rind, cptr, cind, mu_row, mu_col, root_col, parent_col, tree_row, end_of, depth, tstate, dead,
              kill, pending, bpar, bowner, flips, roots, buf0, buf1, bbuf0, bbuf1, ctr, ctr, s, back_ratio, meet != 0,
              floor, search_wait, (long long)blockIdx.x * blockDim.x + threadIdx.x,
              (long long)gridDim.x * blockDim.x, 1);
}

// gpumatch_aug_loop: persistent mode for small frontiers.  ONE block runs
// levels s0, s0 + 1, ... with __syncthreads() between levels, while the
// search frontier is non-empty and at most `limit` rows long (the host then
// launches gpumatch_aug_level for the long ones and calls this again).
// A search phase of the deferred closing (floor > 0, header) goes on with
// backward levels alone while the search frontier is empty and the
// backward one at most `floor` long (both at most `limit`): the backward
// trees can still meet the rows of kept trees next to columns released
// earlier.  Its BFS also ends, *cut*, as soon as the backward frontier is
// empty (every backward tree is taken or has grown to its end, so the
// search side could only meet one at its border), or when the search
// frontier is empty and the backward one longer than `floor` (aug_goes_on):
// its trees need not be closed, the closing phase sees to that.  When the
// BFS is over the same block flips the paths of the listed trees
// (aug_flip_tree): no launch, no read-back of its own.
//   kill  : the epoch of the next dissolve (orphaned trees that reached a
//           free column)
//   state : 9, out: the next level to run, 1 while the BFS goes on (0 when
//           it is over), and (then) the trees flipped, the length of
//           the first frontier, the paths through backward trees, the
//           backward levels run and whether an orphaned tree died (ctr[4],
//           ctr[3], ctr[7], ctr[11 + s % 2], ctr[13]), 1 when the BFS
//           was cut, and 1 when a search phase's backward side ran out of
//           frontier without touching a search tree (ctr[14] 0: the
//           backward certificate of gpumatch_aug_solve, if nothing flipped)
// Thread mapping: one block; a level of f rows (or columns) gives each a
// group of the largest power of two <= min(16, 1024 / f) threads (short
// frontiers: a row's columns in parallel), otherwise the same claims as
// gpumatch_aug_level.  The flips: block-stride over the listed trees,
// disjoint, after the barrier of the last level.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_aug_loop(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind, const ofs_t* __restrict__ cptr,
    const idx_t* __restrict__ cind, idx_t* mu_row, idx_t* mu_col, idx_t* root_col, idx_t* parent_col,
    idx_t* tree_row, idx_t* end_of, int* depth, unsigned char* tstate, int* dead, unsigned char* pending,
    idx_t* bpar, idx_t* bowner, idx_t* flips, const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1,
    idx_t* bbuf0, idx_t* bbuf1, unsigned long long* ctr, long long s, double back_ratio, int meet, long long floor,
    int kill, long long limit, long long* state, double search_wait)
{
    volatile unsigned long long* vctr = ctr;
    unsigned long long size = vctr[s == 0 ? 3 : (s - 1) % 3];
    unsigned long long bsize = aug_back_size(vctr, s);
    while (aug_goes_on(size, bsize, floor) && (long long)size <= limit && (floor == 0 || (long long)bsize <= limit)) {
        aug_level(rptr, rind, cptr, cind, mu_row, mu_col, root_col, parent_col, tree_row, end_of, depth, tstate,
                  dead, kill, pending, bpar, bowner, flips, roots, buf0, buf1, bbuf0, bbuf1, ctr, vctr, s,
                  back_ratio, meet != 0, floor, search_wait, threadIdx.x, blockDim.x, 16);
        __syncthreads();
        size = vctr[s % 3];
        ++s;
        bsize = aug_back_size(vctr, s);
    }
    const bool over = !aug_goes_on(size, bsize, floor);
    if (over) {
        long long nflip = (long long)vctr[4];
        for (long long i = threadIdx.x; i < nflip; i += blockDim.x)
            aug_flip_tree(flips[i], parent_col, bpar, end_of, mu_row, mu_col, dead, kill, &ctr[7]);
        __syncthreads();
        if (threadIdx.x == 0) {
            state[2] = nflip;
            state[3] = (long long)vctr[3];
            state[4] = (long long)vctr[7];
            state[5] = (long long)vctr[11 + s % 2];
            state[6] = (long long)vctr[13];
            state[7] = (floor > 0 && (size != 0ULL || bsize != 0ULL)) ? 1 : 0;
            state[8] = (floor > 0 && bsize == 0ULL && vctr[14] == 0ULL) ? 1 : 0;
        }
    }
    if (threadIdx.x == 0) {
        state[0] = s;
        state[1] = over ? 0LL : 1LL;
    }
}

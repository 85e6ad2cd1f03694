// CUDA kernels of the augmenting-path search that finishes a warm-started
// matching (gpumatch/matching/_augment.py is the host driver and holds the
// NumPy twins).  One *phase*: a level-synchronous alternating BFS that
// grows search trees from a first frontier of rows, the trees kept
// vertex-disjoint, each tree stopping at the first free column it reaches;
// then every tree that reached one flips its path.
//
// Notation (m rows, n columns):
//   rptr, rind : m + 1, nnz   CSR of the graph, row -> its columns
//   mu_row     : m, the column matched to each row, -1 if none
//   mu_col     : n, the row matched to each column, -1 if none
//                (consistent: mu_col[c] = r >= 0  <=>  mu_row[r] = c)
//   root_col   : n, the tree (root row) that holds each column, -1 if none
//   parent_col : n, the row from which that tree reached the column
//   tree_row   : m, the tree of each row, -1 if none
//   end_of     : m, for a root row: the free column its tree reached, -1
//   dead       : m, for a root row: the epoch of the dissolve that takes
//                its tree out of the forest (trees that flipped a path,
//                trees a removed edge broke)
//   ctr        : 6 counters (unsigned long long): [0..2] rotating level
//                sizes, [3] length of the first frontier (`roots`), [4]
//                trees that reached a free column (`flips`), [5] columns
//                released by the last dissolve (`dissolved`)
//   buf0, buf1 : m each, the frontier buffers (rows)
//
// The forest is kept from one solve to the next and is the certificate of
// maximality.  Let R_Z, C_Z be the rows and columns in trees.  Between
// solves: every free row with an entry is in R_Z, no free column is in C_Z,
// the mate of a column of C_Z is in R_Z, and every column next to a row of
// R_Z is in C_Z (closed).  Then (rows not in R_Z) + C_Z is a vertex cover
// of the size of the matching (Koenig), so the matching is maximum.  A
// batch breaks this only locally: an added edge from R_Z to a column of no
// tree (that row is `pending`), a removed matched or tree edge (its tree is
// dead), a new free row (a new root).  A solve dissolves the dead trees,
// re-opens the kept rows next to the released columns, and grows trees from
// those rows, the pending rows and the new roots; the trees that reach a
// free column flip their paths and are dissolved in turn, and phases repeat
// until one flips nothing: then every tree is closed again and holds no free
// column.  Kept trees stay valid: their edges, their matched pairs and their
// free root are untouched by the flips (which only happen in other, disjoint
// trees) and by any batch that did not mark them dead.  From an empty forest
// (every tree dissolved) this is the plain phase method.

// gpumatch_aug_dissolve: take the trees marked dead[t] == epoch out of the
// forest (a tree that flipped a path, or one a removed edge broke).
//   dissolved : n, out: the columns released (their rows are re-examined by
//               gpumatch_aug_reopen); their number in ctr[5]
// Thread mapping: grid-stride over max(m, n): item i handles column i and
// row i.  dead[] is only read here, and each thread writes only its own
// column and row, so there are no races.
extern "C" __global__ void gpumatch_aug_dissolve(
    long long m, long long n, idx_t* __restrict__ root_col, idx_t* __restrict__ tree_row,
    idx_t* __restrict__ end_of, const int* __restrict__ dead, int epoch,
    idx_t* __restrict__ dissolved, unsigned long long* __restrict__ ctr)
{
    long long top = m > n ? m : n;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < top;
         i += (long long)gridDim.x * blockDim.x) {
        if (i < n) {
            idx_t t = root_col[i];
            if (t >= 0 && dead[t] == epoch) {
                root_col[i] = (idx_t)-1;
                dissolved[atomicAdd(&ctr[5], 1ULL)] = (idx_t)i;
            }
        }
        if (i < m) {
            idx_t t = tree_row[i];
            if (t >= 0 && dead[t] == epoch) {
                tree_row[i] = (idx_t)-1;
                if (t == (idx_t)i) end_of[i] = (idx_t)-1;
            }
        }
    }
}

// gpumatch_aug_reopen: a row of a kept tree next to a released column is
// no longer closed: put it in the phase's first frontier again.
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows
//   seen       : m, the epoch in which a row was last put in the frontier
//   roots      : out, appended (count ctr[3])
// Thread mapping: grid-stride over the released columns, each scanning its
// rows.  atomicExch on seen[] lets each row in once; tree_row is not
// written during this kernel.
extern "C" __global__ void gpumatch_aug_reopen(
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* __restrict__ tree_row,
    int* __restrict__ seen, int epoch, const idx_t* __restrict__ dissolved,
    unsigned long long* __restrict__ ctr, idx_t* __restrict__ roots)
{
    long long count = (long long)ctr[5];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        idx_t c = dissolved[i];
        for (idx_t p = cptr[c]; p < cptr[c + 1]; ++p) {
            idx_t r = cind[p];
            if (tree_row[r] >= 0 && atomicExch(&seen[r], epoch) != epoch)
                roots[atomicAdd(&ctr[3], 1ULL)] = r;
        }
    }
}

// gpumatch_aug_seed: complete the phase's first frontier.
//   roots   : out, appended (count ctr[3]): every free row with an entry
//             that is in no tree (a new root: tree_row = itself), and every
//             row of a kept tree that an added edge joined to a column of
//             no tree (pending[r], cleared here)
// Thread mapping: grid-stride over rows; a thread writes only its own row's
// entries; atomicExch on seen[] keeps out a row gpumatch_aug_reopen added.
extern "C" __global__ void gpumatch_aug_seed(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ mu_row, long long m,
    idx_t* __restrict__ tree_row, idx_t* __restrict__ end_of, unsigned char* __restrict__ pending,
    int* __restrict__ seen, int epoch, idx_t* __restrict__ roots, unsigned long long* __restrict__ ctr)
{
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m;
         r += (long long)gridDim.x * blockDim.x) {
        bool again = pending[r] != 0;
        if (again) pending[r] = 0;
        idx_t t = tree_row[r];
        if (t < 0) {
            if (mu_row[r] >= 0 || rptr[r + 1] == rptr[r]) continue;
            tree_row[r] = (idx_t)r;
            end_of[r] = (idx_t)-1;
            seen[r] = epoch;
            roots[atomicAdd(&ctr[3], 1ULL)] = (idx_t)r;
        } else if (again && atomicExch(&seen[r], epoch) != epoch) {
            roots[atomicAdd(&ctr[3], 1ULL)] = (idx_t)r;
        }
    }
}

// gpumatch_aug_note_added: after edges (rows[i], cols[i]) were added, mark
// the rows of kept trees whose new column is in no tree (pending[r] = 1:
// the next phase grows their trees from them).
// Thread mapping: one thread per edge; concurrent stores write the same 1.
extern "C" __global__ void gpumatch_aug_note_added(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const idx_t* __restrict__ tree_row, const idx_t* __restrict__ root_col, unsigned char* __restrict__ pending)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    long long r = rows[i];
    if (tree_row[r] >= 0 && root_col[cols[i]] < 0) pending[r] = 1;
}

// gpumatch_aug_note_removed: before edges (rows[i], cols[i]) are removed
// (the matching still holds them), mark dead (dead[t] = epoch, the next
// dissolve) the tree of a column that loses its matched edge or the edge
// its tree reached it by: the tree's paths through it are gone.
// Thread mapping: one thread per edge; concurrent stores write the same value.
extern "C" __global__ void gpumatch_aug_note_removed(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const idx_t* __restrict__ root_col, const idx_t* __restrict__ parent_col, const idx_t* __restrict__ mu_col,
    int* __restrict__ dead, int epoch)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    idx_t c = (idx_t)cols[i], r = (idx_t)rows[i];
    idx_t t = root_col[c];
    if (t >= 0 && (mu_col[c] == r || parent_col[c] == r)) dead[t] = epoch;
}

// One BFS level over `count` frontier rows: groups of `width` threads (a
// power of two, 1 for one thread per row), group `start` of `stride`,
// `lane` the thread's place in its group.
//   in            : the frontier rows
//   out, out_cnt  : the next frontier (mates of the columns claimed here)
//   flips, nflip  : the trees that reached a free column (count ctr[4])
// Each group takes frontier rows and its threads scan a row's columns
// (lane, lane + width, ...).  A row whose tree already reached a free
// column does nothing.  An unclaimed column is claimed by atomicCAS on
// root_col, so each column, and with it its mate row, joins exactly one
// tree: the trees stay disjoint.  A free column ends its tree (atomicCAS on
// end_of: the first one found is kept and the tree listed once; other free
// columns claimed in the same level stay claimed and unused).  Benign race:
// rows of a finished tree, this one included, still extend it during the
// level in which it finished; the next level skips them.
__device__ __forceinline__ void aug_level_rows(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of,
    idx_t* __restrict__ flips, unsigned long long* nflip,
    const idx_t* __restrict__ in, long long count, idx_t* __restrict__ out, unsigned long long* out_cnt,
    long long start, long long stride, int lane, int width)
{
    for (long long i = start; i < count; i += stride) {
        idx_t u = in[i];
        idx_t t = tree_row[u];
        if (end_of[t] >= 0) continue;
        for (idx_t p = rptr[u] + lane; p < rptr[u + 1]; p += width) {
            idx_t c = rind[p];
            if (root_col[c] >= 0 || gm_cas(&root_col[c], (idx_t)-1, t) >= 0) continue;
            parent_col[c] = u;
            idx_t w = mu_col[c];
            if (w < 0) {
                if (gm_cas(&end_of[t], (idx_t)-1, c) < 0) flips[atomicAdd(nflip, 1ULL)] = t;
                continue;
            }
            tree_row[w] = t;
            out[atomicAdd(out_cnt, 1ULL)] = w;
        }
    }
}

// Flip the path of tree t, which reached the free column end_of[t], and
// mark the tree dead (dead[t] = epoch, the next dissolve): each column
// takes the row it was reached from, each of those rows takes that column,
// from the free column back to the root.
__device__ __forceinline__ void aug_flip_tree(
    idx_t t, const idx_t* parent_col, const idx_t* end_of, idx_t* mu_row, idx_t* mu_col, int* dead, int epoch)
{
    idx_t c = end_of[t];
    while (true) {
        idx_t u = parent_col[c];
        idx_t prev = mu_row[u];
        mu_row[u] = c;
        mu_col[c] = u;
        if (u == t || prev < 0) break;
        c = prev;
    }
    dead[t] = epoch;
}

// Frontier buffers and counters of level s (both kernels below): level 0
// reads the roots (count ctr[3]), level s > 0 reads buf[(s - 1) % 2] (count
// ctr[(s - 1) % 3]); level s writes buf[s % 2] (count ctr[s % 3]) and zeroes
// ctr[(s + 1) % 3], the next level's output counter, last read as the input
// count of level s - 1, which has finished.

// gpumatch_aug_level: BFS level `s` over the whole grid.
// Thread mapping: grid-stride, one thread per frontier row (aug_level_rows).
extern "C" __global__ void gpumatch_aug_level(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* __restrict__ mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, idx_t* __restrict__ flips,
    const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, long long s)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) ctr[(s + 1) % 3] = 0ULL;
    const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
    long long count = (long long)(s == 0 ? ctr[3] : ctr[(s - 1) % 3]);
    aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, flips, &ctr[4], in, count,
                   (s % 2) ? buf1 : buf0, &ctr[s % 3], tid, (long long)gridDim.x * blockDim.x, 0, 1);
}

// gpumatch_aug_loop: persistent mode for small frontiers.  ONE block runs
// levels s0, s0 + 1, ... with __syncthreads() between levels, while the
// frontier is non-empty and at most `limit` rows long (the host then
// launches gpumatch_aug_level for the long ones and calls this again).
// When the frontier is empty (the BFS is over) the same block flips the
// paths of the listed trees (aug_flip_tree): no launch, no read-back of its
// own.
//   state : 4, out: the next level to run, the size of its frontier, and
//           (when it is 0) the trees flipped and the length of the first
//           frontier (ctr[4], ctr[3])
// Thread mapping: one block.  A level of f rows gives each row a group of
// the largest power of two <= min(16, 1024 / f) threads (short frontiers:
// a row's columns in parallel), otherwise the same claims as
// gpumatch_aug_level.  All threads read the next size after the barrier
// that ends the level that wrote it.  The flips: block-stride over the
// listed trees, disjoint, after the barrier of the last level.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_aug_loop(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind, idx_t* mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, idx_t* __restrict__ flips,
    const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, long long s,
    long long limit, long long* state, idx_t* mu_row, int* dead, int epoch)
{
    unsigned long long size = *((volatile unsigned long long*)(s == 0 ? &ctr[3] : &ctr[(s - 1) % 3]));
    while (size != 0ULL && (long long)size <= limit) {
        if (threadIdx.x == 0) ctr[(s + 1) % 3] = 0ULL;
        const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
        int width = 1;
        while (width < 16 && (unsigned long long)(2 * width) * size <= blockDim.x) width *= 2;
        aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, flips, &ctr[4], in,
                       (long long)size, (s % 2) ? buf1 : buf0, &ctr[s % 3], threadIdx.x / width,
                       blockDim.x / width, threadIdx.x % width, width);
        __syncthreads();
        size = *((volatile unsigned long long*)&ctr[s % 3]);
        ++s;
    }
    if (size == 0ULL) {
        long long nflip = (long long)*((volatile unsigned long long*)&ctr[4]);
        for (long long i = threadIdx.x; i < nflip; i += blockDim.x)
            aug_flip_tree(flips[i], parent_col, end_of, mu_row, mu_col, dead, epoch);
        if (threadIdx.x == 0) {
            state[2] = nflip;
            state[3] = (long long)*((volatile unsigned long long*)&ctr[3]);
        }
    }
    if (threadIdx.x == 0) { state[0] = s; state[1] = (long long)size; }
}

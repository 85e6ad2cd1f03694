// CUDA kernels of the augmenting-path search that finishes a warm-started
// matching (gpumatch/matching/_augment.py is the host driver and holds the
// NumPy twins).  One *phase*: a level-synchronous alternating BFS from every
// free row, the rows' search trees kept vertex-disjoint, each tree stopping
// at the first free column it reaches; then every tree that reached one
// flips its path.  A phase that flips nothing proves the matching maximum.
//
// Notation (m rows, n columns):
//   rptr, rind : m + 1, nnz   CSR of the graph, row -> its columns
//   mu_row     : m, the column matched to each row, -1 if none
//   mu_col     : n, the row matched to each column, -1 if none
//                (consistent: mu_col[c] = r >= 0  <=>  mu_row[r] = c)
//   root_col   : n, the tree (root row) that claimed each column this
//                phase, -1 if none
//   parent_col : n, the row from which that tree reached the column
//   tree_row   : m, the tree of each row reached this phase
//   end_of     : m, for a root row: the free column its tree reached, -1
//   touched    : m, for a root row: 1 when another tree met one of its
//                columns this phase
//   ctr        : 6 counters (unsigned long long): [0..2] rotating level
//                sizes, [3] number of roots, [4] paths flipped, [5] paths
//                flipped in touched trees
//
// Why a phase can prove the matching maximum without a confirming phase:
// let U be the trees that reached no free column.  Their rows were scanned
// to the end, and every column next to them was claimed by a tree of U or
// by a tree that met it there and was marked touched.  If no tree that
// flips a path is touched, U is closed under alternating steps, holds no
// free column, and the flips (outside U) leave it as it is; the free rows
// after the phase are exactly U's roots, so no augmenting path is left.
//   buf0, buf1 : m each, the frontier buffers (rows)

// gpumatch_aug_seed: list the roots of a phase.
//   roots : m, out: the free rows with at least one entry (any order)
//   nroot : out, their number (ctr[3], zeroed by the host)
// Thread mapping: grid-stride over rows.  The only shared write is the
// atomicAdd that reserves a slot, so there are no races.
extern "C" __global__ void gpumatch_aug_seed(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ mu_row, long long m,
    idx_t* __restrict__ tree_row, idx_t* __restrict__ end_of, unsigned char* __restrict__ touched,
    idx_t* __restrict__ roots,
    unsigned long long* __restrict__ nroot)
{
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < m;
         r += (long long)gridDim.x * blockDim.x) {
        if (mu_row[r] >= 0 || rptr[r + 1] == rptr[r]) continue;
        tree_row[r] = (idx_t)r;
        end_of[r] = (idx_t)-1;
        touched[r] = 0;
        roots[atomicAdd(nroot, 1ULL)] = (idx_t)r;
    }
}

// One BFS level over `count` frontier rows, thread `start` of `stride`.
//   in            : the frontier rows
//   out, out_cnt  : the next frontier (mates of the columns claimed here)
// Each thread takes frontier rows and scans their columns.  A row whose
// tree already reached a free column does nothing.  An unclaimed column is
// claimed by atomicCAS on root_col, so each column, and with it its mate
// row, joins exactly one tree: the trees stay disjoint.  A column found
// claimed by another tree marks that tree touched (plain store of 1:
// concurrent stores write the same value).  A free column ends
// its tree (atomicCAS on end_of: the first one found is kept; other free
// columns claimed in the same level stay claimed and unused).  Benign race:
// rows of a finished tree, this one included, still extend it during the
// level in which it finished; the next level skips them.
__device__ __forceinline__ void aug_level_rows(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* __restrict__ mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, unsigned char* touched,
    const idx_t* __restrict__ in, long long count, idx_t* __restrict__ out, unsigned long long* out_cnt,
    long long start, long long stride)
{
    for (long long i = start; i < count; i += stride) {
        idx_t u = in[i];
        idx_t t = tree_row[u];
        if (end_of[t] >= 0) continue;
        for (idx_t p = rptr[u]; p < rptr[u + 1]; ++p) {
            idx_t c = rind[p];
            idx_t owner = root_col[c];
            if (owner < 0) owner = gm_cas(&root_col[c], (idx_t)-1, t);
            if (owner >= 0) {
                if (owner != t) touched[owner] = 1;
                continue;
            }
            parent_col[c] = u;
            idx_t w = mu_col[c];
            if (w < 0) {
                gm_cas(&end_of[t], (idx_t)-1, c);
                continue;
            }
            tree_row[w] = t;
            out[atomicAdd(out_cnt, 1ULL)] = w;
        }
    }
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
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, unsigned char* touched,
    const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, long long s)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) ctr[(s + 1) % 3] = 0ULL;
    const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
    long long count = (long long)(s == 0 ? ctr[3] : ctr[(s - 1) % 3]);
    aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, touched, in, count,
                   (s % 2) ? buf1 : buf0, &ctr[s % 3], tid, (long long)gridDim.x * blockDim.x);
}

// gpumatch_aug_loop: persistent mode for small frontiers.  ONE block runs
// levels s0, s0 + 1, ... with __syncthreads() between levels, while the
// frontier is non-empty and at most `limit` rows long (the host then
// launches gpumatch_aug_level for the long ones and calls this again).
//   state : 2, out: the next level to run and the size of its frontier
// Thread mapping: one block, block-stride over the frontier; each level is
// exactly one gpumatch_aug_level (same claims).  All threads read the next
// size after the barrier that ends the level that wrote it.
extern "C" __global__ void __launch_bounds__(1024) gpumatch_aug_loop(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* __restrict__ mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, unsigned char* touched,
    const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, long long s,
    long long limit, long long* state)
{
    unsigned long long size = *((volatile unsigned long long*)(s == 0 ? &ctr[3] : &ctr[(s - 1) % 3]));
    while (size != 0ULL && (long long)size <= limit) {
        if (threadIdx.x == 0) ctr[(s + 1) % 3] = 0ULL;
        const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
        aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, touched, in, (long long)size,
                       (s % 2) ? buf1 : buf0, &ctr[s % 3], threadIdx.x, blockDim.x);
        __syncthreads();
        size = *((volatile unsigned long long*)&ctr[s % 3]);
        ++s;
    }
    if (threadIdx.x == 0) { state[0] = s; state[1] = (long long)size; }
}

// gpumatch_aug_flip: flip the path of every tree that reached a free column.
//   roots, nroot : the phase's roots and their number
//   flipped      : out, [0] number of paths flipped, [1] how many of them
//                  belong to a touched tree (ctr[4] and ctr[5], zeroed by
//                  the host)
// Thread mapping: grid-stride, one thread per root, which walks its path
// from the free column back to the root: each column takes the row it was
// reached from, each of those rows takes that column.  The trees are
// vertex-disjoint, so no two threads touch the same row or column: no races.
extern "C" __global__ void gpumatch_aug_flip(
    const idx_t* __restrict__ roots, const unsigned long long* __restrict__ nroot,
    const idx_t* __restrict__ parent_col, const idx_t* __restrict__ end_of,
    const unsigned char* __restrict__ touched, idx_t* __restrict__ mu_row, idx_t* __restrict__ mu_col,
    unsigned long long* __restrict__ flipped)
{
    long long count = (long long)*nroot;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (long long)gridDim.x * blockDim.x) {
        idx_t t = roots[i];
        idx_t c = end_of[t];
        if (c < 0) continue;
        while (true) {
            idx_t u = parent_col[c];
            idx_t prev = mu_row[u];
            mu_row[u] = c;
            mu_col[c] = u;
            if (u == t || prev < 0) break;
            c = prev;
        }
        atomicAdd(flipped, 1ULL);
        if (touched[t]) atomicAdd(flipped + 1, 1ULL);
    }
}

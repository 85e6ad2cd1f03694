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
//   depth      : m, a tree row's depth (root 0, the mate of a column one
//                more than the column's parent row)
//   tstate     : m, for a root row: 0 a live tree, 1 an orphaned one
//                (below), 2 a live tree with pending rows (not closed)
//   ctr        : 8 counters (unsigned long long): [0..2] rotating level
//                sizes, [3] length of the first frontier (`roots`), [4]
//                trees that reached a free column (`flips`), [5] columns
//                released by dissolves (`dissolved`), [6] a re-open marked
//                an orphaned tree dead
//   buf0, buf1 : m each, the frontier buffers (rows)
//
// The forest is kept from one solve to the next and is the certificate of
// maximality.  Let R_Z, C_Z be the rows and columns in trees.  Between
// solves: every free row with an entry is in R_Z, no free column is in C_Z,
// every column of C_Z is matched to a row of its tree, and every column next
// to a row of R_Z is in C_Z (closed).  Then (rows not in R_Z) + C_Z is a
// vertex cover of the size of the matching (Koenig), so the matching is
// maximum.  A batch breaks this only locally: an added edge from R_Z to a
// column of no tree (that row is `pending`), a removed matched or tree edge,
// a new free row (a new root).  A solve dissolves the dead trees, re-opens
// the kept rows next to the released columns, and grows trees from those
// rows, the pending rows and the new roots; the trees that reach a free
// column flip their paths and are dissolved in turn, and phases repeat until
// one flips nothing: then every tree is closed again and holds no free
// column.  Kept trees stay valid: their edges, their matched pairs and their
// free root are untouched by the flips (which only happen in other, disjoint
// trees) and by any batch that did not mark them dead.  From an empty forest
// (every tree dissolved) this is the plain phase method.
//
// Repairs instead of kills.  Row depths strictly decrease from a column's
// mate to its parent, so:
//  * a removed tree edge (parent_col[c], c) is replaced by any other edge
//    (u', c) of the new graph with u' in the same tree and depth[u'] <=
//    depth[old parent]: u' is then no descendant of c, and every parent
//    chain still descends strictly to the root (gpumatch_aug_reparent; the
//    tree is marked dead when no such edge exists);
//  * a removed matched edge (r, c), the only one of its tree in the batch,
//    leaves c free at the end of the tree path root -> c: flipping that path
//    gives the matching its size back at once (gpumatch_aug_orphan).  The
//    tree is then *orphaned*: its root is matched and r is its free row, so
//    it is no longer a search tree, but its rows and columns still meet the
//    cover conditions above (closed, each column matched to one of its
//    rows).  It stays a certificate while nothing needs it to grow: a
//    removed matched edge in it, an added edge from it to a column of no
//    tree, or a released column next to it (gpumatch_aug_reopen) marks it
//    dead instead, and it is dissolved and regrown from its free row.

// gpumatch_aug_dissolve: take the trees marked dead[t] == epoch out of the
// forest (a tree that flipped a path, or one a batch broke).
//   dissolved : n, out: the columns released (their rows are re-examined by
//               gpumatch_aug_reopen), appended (count ctr[5])
// Thread mapping: grid-stride over max(m, n): item i handles column i and
// row i.  dead[] is only read here, and each thread writes only its own
// column and row, so there are no races.
__device__ __forceinline__ void aug_dissolve_items(
    long long m, long long n, idx_t* root_col, idx_t* tree_row, idx_t* end_of, unsigned char* tstate,
    const int* dead, int epoch, idx_t* dissolved, unsigned long long* ctr, long long start, long long stride)
{
    long long top = m > n ? m : n;
    for (long long i = start; i < top; i += stride) {
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
                if (t == (idx_t)i) {
                    end_of[i] = (idx_t)-1;
                    tstate[i] = 0;
                }
            }
        }
    }
}
extern "C" __global__ void gpumatch_aug_dissolve(
    long long m, long long n, idx_t* __restrict__ root_col, idx_t* __restrict__ tree_row,
    idx_t* __restrict__ end_of, unsigned char* __restrict__ tstate, const int* __restrict__ dead, int epoch,
    idx_t* __restrict__ dissolved, unsigned long long* __restrict__ ctr)
{
    aug_dissolve_items(m, n, root_col, tree_row, end_of, tstate, dead, epoch, dissolved, ctr,
                       (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}

// gpumatch_aug_reopen: a row of a kept tree next to a released column is
// no longer closed: put it in the phase's first frontier again.  An orphaned
// tree there cannot grow: it is marked dead (dead[t] = epoch) and ctr[6] set,
// and the caller dissolves again and re-opens next to its columns too.
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows
//   seen       : m, the epoch in which a row was last put in the frontier
//   dissolved  : the released columns; entries [done, ctr[5]) are new
//   roots      : out, appended (count ctr[3])
// Thread mapping: grid-stride over the new released columns, each scanning
// its rows.  atomicExch on seen[] lets each row in once; tree_row is not
// written during this step; concurrent dead / ctr[6] stores write the same
// values.
__device__ __forceinline__ void aug_reopen_items(
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* tree_row,
    const unsigned char* tstate, int* dead, int* seen, int epoch, const idx_t* dissolved, long long done,
    unsigned long long* ctr, idx_t* roots, long long start, long long stride)
{
    long long count = (long long)*((volatile unsigned long long*)&ctr[5]);
    for (long long i = done + start; i < count; i += stride) {
        idx_t c = dissolved[i];
        for (idx_t p = cptr[c]; p < cptr[c + 1]; ++p) {
            idx_t r = cind[p];
            idx_t t = tree_row[r];
            if (t < 0) continue;
            if (tstate[t] == 1) {
                if (dead[t] != epoch) {
                    dead[t] = epoch;
                    ctr[6] = 1ULL;
                }
            } else if (atomicExch(&seen[r], epoch) != epoch) {
                roots[atomicAdd(&ctr[3], 1ULL)] = r;
            }
        }
    }
}
extern "C" __global__ void gpumatch_aug_reopen(
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* __restrict__ tree_row,
    const unsigned char* __restrict__ tstate, int* __restrict__ dead, int* __restrict__ seen, int epoch,
    const idx_t* __restrict__ dissolved, long long done, unsigned long long* __restrict__ ctr,
    idx_t* __restrict__ roots)
{
    aug_reopen_items(cptr, cind, tree_row, tstate, dead, seen, epoch, dissolved, done, ctr, roots,
                     (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}

// gpumatch_aug_seed: complete the phase's first frontier.
//   roots   : out, appended (count ctr[3]): every free row with an entry
//             that is in no tree (a new root: tree_row = itself, depth 0),
//             and every row of a kept tree that an added edge joined to
//             a column of no tree (pending[r], cleared here with its tree's
//             tstate 2)
// Thread mapping: grid-stride over rows; a thread writes only its own row's
// entries; atomicExch on seen[] lets each row in once, also when
// gpumatch_aug_reopen runs at the same time (gpumatch_aug_solve).
__device__ __forceinline__ void aug_seed_items(
    const idx_t* __restrict__ rptr, const idx_t* mu_row, long long m, idx_t* tree_row, idx_t* end_of,
    int* depth, unsigned char* tstate, unsigned char* pending, int* seen, int epoch, idx_t* roots,
    unsigned long long* ctr,
    long long start, long long stride)
{
    for (long long r = start; r < m; r += stride) {
        bool again = pending[r] != 0;
        if (again) pending[r] = 0;
        idx_t t = tree_row[r];
        if (t < 0) {
            if (mu_row[r] >= 0 || rptr[r + 1] == rptr[r]) continue;
            tree_row[r] = (idx_t)r;
            end_of[r] = (idx_t)-1;
            depth[r] = 0;
            if (atomicExch(&seen[r], epoch) != epoch) roots[atomicAdd(&ctr[3], 1ULL)] = (idx_t)r;
        } else if (again) {
            tstate[t] = 0;   // closed again once its pending rows have grown
            if (atomicExch(&seen[r], epoch) != epoch) roots[atomicAdd(&ctr[3], 1ULL)] = (idx_t)r;
        }
    }
}
extern "C" __global__ void gpumatch_aug_seed(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ mu_row, long long m,
    idx_t* __restrict__ tree_row, idx_t* __restrict__ end_of, int* __restrict__ depth,
    unsigned char* __restrict__ tstate, unsigned char* __restrict__ pending, int* __restrict__ seen, int epoch,
    idx_t* __restrict__ roots, unsigned long long* __restrict__ ctr)
{
    aug_seed_items(rptr, mu_row, m, tree_row, end_of, depth, tstate, pending, seen, epoch, roots, ctr,
                   (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}

// gpumatch_aug_note_added: after edges (rows[i], cols[i]) were added, mark
// the rows of kept trees whose new column is in no tree (pending[r] = 1:
// the next phase grows their trees from them, tstate[t] = 2: not closed
// until then); an orphaned tree cannot grow and is marked dead instead
// (dead[t] = epoch).
// Thread mapping: one thread per edge; concurrent stores write the same value.
extern "C" __global__ void gpumatch_aug_note_added(
    const long long* __restrict__ rows, const long long* __restrict__ cols, long long k,
    const idx_t* __restrict__ tree_row, const idx_t* __restrict__ root_col,
    unsigned char* __restrict__ tstate, unsigned char* __restrict__ pending, int* __restrict__ dead,
    int epoch)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    long long r = rows[i];
    idx_t t = tree_row[r];
    if (t < 0 || root_col[cols[i]] >= 0) return;
    if (tstate[t] == 1) {
        dead[t] = epoch;
    } else {
        pending[r] = 1;
        tstate[t] = 2;
    }
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
        broken[atomicAdd(nbroken, 1ULL)] = c;
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
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* __restrict__ root_col,
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
    for (idx_t p = cptr[c]; p < cptr[c + 1]; ++p) {
        idx_t u = cind[p];
        if (tree_row[u] == t && depth[u] <= limit) {
            parent_col[c] = u;
            atomicAdd(&repairs[0], 1ULL);
            return;
        }
    }
    dead[t] = epoch;
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
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, int* depth,
    idx_t* __restrict__ flips, unsigned long long* nflip,
    const idx_t* in, long long count, idx_t* out, unsigned long long* out_cnt,
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
            depth[w] = depth[u] + 1;
            out[atomicAdd(out_cnt, 1ULL)] = w;
        }
    }
}

// Flip the path of tree t, which reached the free column end_of[t], and
// mark the tree dead (dead[t] = epoch, the next dissolve): each column
// takes the row it was reached from, each of those rows takes that column,
// from the free column back to the root.
__device__ __forceinline__ void aug_flip_path(idx_t t, idx_t c, const idx_t* parent_col, idx_t* mu_row,
                                              idx_t* mu_col)
{
    while (true) {
        idx_t u = parent_col[c];
        idx_t prev = mu_row[u];
        mu_row[u] = c;
        mu_col[c] = u;
        if (u == t || prev < 0) break;
        c = prev;
    }
}
__device__ __forceinline__ void aug_flip_tree(
    idx_t t, const idx_t* parent_col, const idx_t* end_of, idx_t* mu_row, idx_t* mu_col, int* dead, int epoch)
{
    aug_flip_path(t, end_of[t], parent_col, mu_row, mu_col);
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

// Frontier buffers and counters of level s (both kernels below): level 0
// reads the roots (count ctr[3]), level s > 0 reads buf[(s - 1) % 2] (count
// ctr[(s - 1) % 3]); level s writes buf[s % 2] (count ctr[s % 3]) and zeroes
// ctr[(s + 1) % 3], the next level's output counter, last read as the input
// count of level s - 1, which has finished.

// gpumatch_aug_level: BFS level `s` over the whole grid.
// Thread mapping: grid-stride, one thread per frontier row (aug_level_rows).
extern "C" __global__ void gpumatch_aug_level(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* __restrict__ mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, int* depth,
    idx_t* __restrict__ flips,
    const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, long long s)
{
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) ctr[(s + 1) % 3] = 0ULL;
    const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
    long long count = (long long)(s == 0 ? ctr[3] : ctr[(s - 1) % 3]);
    aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, depth, flips, &ctr[4], in, count,
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
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, int* depth,
    idx_t* __restrict__ flips,
    const idx_t* __restrict__ roots, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, long long s,
    long long limit, long long* state, idx_t* mu_row, int* dead, int epoch)
{
    unsigned long long size = *((volatile unsigned long long*)(s == 0 ? &ctr[3] : &ctr[(s - 1) % 3]));
    while (size != 0ULL && (long long)size <= limit) {
        if (threadIdx.x == 0) ctr[(s + 1) % 3] = 0ULL;
        const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
        int width = 1;
        while (width < 16 && (unsigned long long)(2 * width) * size <= blockDim.x) width *= 2;
        aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, depth, flips, &ctr[4], in,
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

#ifdef GPUMATCH_COOPERATIVE
#include <cooperative_groups.h>

// gpumatch_aug_solve: every phase of a solve in ONE cooperative launch (the
// grid is co-resident; grid.sync() is a barrier with memory ordering over
// the whole grid, about 1.5 us on an H100 against 25-50 us for a launch and
// a read-back).  Per phase:
//   1. dissolve, sync, re-open next to the newly released columns, sync;
//      again while a re-open marked an orphaned tree dead (ctr[6]);
//   2. seed (grid-stride over rows), sync;
//   3. BFS levels with a sync after each (the claims of gpumatch_aug_level;
//      a frontier of f rows gives each row a group of the largest power of
//      two <= min(32, threads / f) threads, so short frontiers scan a row's
//      columns in parallel);
//   4. the flips of the trees that reached a free column (grid-stride,
//      disjoint trees), sync.
// Phases repeat until one flips nothing (converged) or `max_phases` (< 0:
// no cap, else >= 1) ran; then the matched columns are counted.
//   epoch0 : the epoch of the first phase's dissolve; phase p dissolves
//            dead[t] == epoch0 + p and its flips mark epoch0 + p + 1
//   repairs: 2, the repairs of the batches since the last solve (read and
//            zeroed here)
//   state  : 9, out: phases, paths flipped, BFS levels, length of the
//            first frontier, converged (0/1), matched columns, the two
//            repair counts, columns released in the first phase
// Only rptr, rind, cptr and cind are read-only here: every other array is
// written by some step, so none of them is read through the non-coherent
// (__restrict__ const) path.  ctr[] entries are zeroed by thread 0 after a
// sync that every reader of their previous values has passed.
extern "C" __global__ void __launch_bounds__(512) gpumatch_aug_solve(
    const idx_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const idx_t* __restrict__ cptr, const idx_t* __restrict__ cind, long long m, long long n,
    idx_t* mu_row, idx_t* mu_col, idx_t* root_col, idx_t* parent_col, idx_t* tree_row, idx_t* end_of,
    int* depth, unsigned char* tstate, int* dead, int* seen, unsigned char* pending, idx_t* roots,
    idx_t* flips, idx_t* dissolved, idx_t* buf0, idx_t* buf1, unsigned long long* ctr, int epoch0,
    long long max_phases, unsigned long long* repairs, long long* state)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    volatile unsigned long long* vctr = ctr;
    long long phase = 0, paths = 0, levels = 0, seeds = 0, released = 0;
    int converged = 0;
    if (tid == 0) state[5] = 0;   // counted into after the last sync of the phases below
    while (max_phases < 0 || phase < max_phases) {
        const int e = epoch0 + (int)phase;
        if (tid == 0)
            for (int i = 0; i < 8; ++i) vctr[i] = 0ULL;
        grid.sync();
        long long done = 0;   // released columns already re-examined
        while (true) {
            aug_dissolve_items(m, n, root_col, tree_row, end_of, tstate, dead, e, dissolved, ctr, tid, nthreads);
            grid.sync();
            long long count = (long long)vctr[5];
            aug_reopen_items(cptr, cind, tree_row, tstate, dead, seen, e, dissolved, done, ctr, roots, tid,
                             nthreads);
            grid.sync();
            if (vctr[6] == 0ULL) break;
            done = count;
            grid.sync();   // every thread has read ctr[6]
            if (tid == 0) vctr[6] = 0ULL;
        }
        aug_seed_items(rptr, mu_row, m, tree_row, end_of, depth, tstate, pending, seen, e, roots, ctr, tid, nthreads);
        grid.sync();
        unsigned long long size = vctr[3];
        if (phase == 0) {
            seeds = (long long)size;
            released = (long long)vctr[5];
        }
        long long s = 0;
        while (size != 0ULL) {
            if (tid == 0) vctr[(s + 1) % 3] = 0ULL;
            const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
            int width = 1;
            while (width < GPUMATCH_WARP && (unsigned long long)(2 * width) * size <= (unsigned long long)nthreads)
                width *= 2;
            aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, depth, flips, &ctr[4], in,
                           (long long)size, (s % 2) ? buf1 : buf0, &ctr[s % 3], tid / width, nthreads / width,
                           (int)(tid % width), width);
            grid.sync();
            size = vctr[s % 3];
            ++s;
        }
        levels += s;
        long long nflip = (long long)vctr[4];
        for (long long i = tid; i < nflip; i += nthreads)
            aug_flip_tree(flips[i], parent_col, end_of, mu_row, mu_col, dead, e + 1);
        ++phase;
        paths += nflip;
        grid.sync();   // the flips are done before the next dissolve, or the count below
        if (nflip == 0) {
            converged = 1;
            break;
        }
    }
    // matched columns: a shuffle sum per warp, one atomic per warp
    unsigned long long mine = 0ULL;
    for (long long c = tid; c < n; c += nthreads) mine += mu_col[c] >= 0 ? 1ULL : 0ULL;
    for (int off = GPUMATCH_WARP / 2; off > 0; off /= 2) mine += __shfl_down_sync(GPUMATCH_FULL_MASK, mine, off);
    if ((threadIdx.x % GPUMATCH_WARP) == 0 && mine) atomicAdd((unsigned long long*)&state[5], mine);
    if (tid == 0) {
        state[0] = phase;
        state[1] = paths;
        state[2] = levels;
        state[3] = seeds;
        state[4] = converged;
        state[6] = (long long)repairs[0];
        state[7] = (long long)repairs[1];
        state[8] = released;
        repairs[0] = repairs[1] = 0ULL;
    }
}
#endif

// CUDA kernels of the augmenting-path search that finishes a warm-started
// matching (gpumatch/matching/_augment.py is the host driver and holds the
// NumPy twins).  One *phase*: a level-synchronous alternating BFS that
// grows search trees from a first frontier of rows, the trees kept
// vertex-disjoint, each tree stopping at the first free column it reaches;
// then every tree that reached one flips its path.
//
// Notation (m rows, n columns):
//   rptr, rind : m + 1, nnz   CSR of the graph, row -> its columns
//                (rptr, cptr and entry positions: ofs_t; rind, cind and
//                every vertex id: idx_t; _common.cuh)
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
//   ctr        : 16 counters (unsigned long long): [0..2] rotating level
//                sizes, [3] length of the first frontier (`roots`), [4]
//                trees that reached a free column (`flips`), [5] columns
//                released by dissolves (`dissolved`), [6] columns adopted
//                by a closing phase (gpumatch_aug_adopt_all), [7] flipped
//                paths that went through a backward tree, [8..10] rotating backward level sizes,
//                [11..12] backward levels run so far (by parity of the
//                level: written by level s for level s + 1), [13] an
//                orphaned tree died in this phase, [14] the backward side
//                touched a search tree (below: no backward certificate)
//   buf0, buf1 : m each, the frontier buffers (rows)
//   bpar       : n, for a column of a backward tree: the column it was
//                reached from (below)
//   bowner     : n, for a free column f that roots a backward tree: the
//                search tree that met it, -1 if none yet
//   bbuf0/1    : n each, the backward frontier buffers (columns)
//
// Two-sided search (back_ratio > 0).  Each phase also grows *backward*
// trees from the free columns with entries, over alternating paths read
// from the far end: a column y of the backward tree of f has an alternating
// path y, mu_col[y], bpar[y], ... , f; a row x next to y (x != mu_col[y],
// x matched) adds its mate mu_row[x] to the tree.  Backward trees claim
// their columns in root_col too, encoded -(f + 2), so every column (and
// with it its mate) belongs to at most one tree of either kind and the
// paths flipped in one phase are disjoint.  A search tree t whose row u
// meets a column c of the backward tree of f takes that tree (atomicCAS on
// bowner[f]) and ends there: root -> ... -> u -> c -> ... -> f is an
// augmenting path.  A row that meets a backward tree already taken by
// another search tree is marked pending and grows again in the next phase
// (that tree flips, and the claim is released with the others when the
// next phase starts).  A phase in which a search tree met a backward tree
// flips at least one path, so a phase that flips nothing never met one:
// its search trees are closed on their own and the certificate below holds
// unchanged.  Both sides then stop after about half the path length, each
// from its own end, instead of the search trees growing over most of the
// graph before they reach a free column.  The backward side runs a level
// only while its frontier is at most back_ratio times the search side's
// (the smaller side grows), and its claims are released at the start of
// every phase and at the end of a solve.
//
// The forest is kept from one solve to the next and is the certificate of
// maximality.  Let R_Z, C_Z be the rows and columns in trees.  Between
// solves: every free row with an entry is in R_Z, no free column is in C_Z,
// every column of C_Z is matched to a row of its tree, and every column next
// to a row of R_Z is in C_Z (closed).  Then (rows not in R_Z) + C_Z is a
// vertex cover of the size of the matching (Koenig), so the matching is
// maximum.  A batch breaks this only locally: an added edge from R_Z to a
// column of no tree (that row is `pending`), a removed matched or tree edge,
// a new free row (a new root).  A solve dissolves the dead trees, lets
// each released column next to a kept tree join it (with its mate: the
// kept rows stay closed), and grows trees from those mates, the pending
// rows and the new roots; the trees that reach a free
// column flip their paths and are dissolved in turn; phases repeat until
// one flips nothing and no orphaned tree (below) died: then every tree is
// closed again and holds no free column.  Kept trees stay valid: their edges, their matched pairs and their
// free root are untouched by the flips (which only happen in other, disjoint
// trees) and by any batch that did not mark them dead.  From an empty forest
// (every tree dissolved) this is the plain phase method.
//
// Deferred closing (`defer`, _augment.DEFER_CLOSING).  On random graphs of
// mean degree about 5 the forest holds over 90 % of the columns in a few
// huge trees, so a batch of a few hundred edges kills trees of 700 000+
// columns, and every phase that flips a path dissolves more; letting the
// kept trees adopt all that at once cost 250-350 us per phase.  With
// `defer`, a *search* phase leaves the columns it releases unclaimed and
// does not adopt: its search trees grow only from the new roots and the
// pending rows, and a backward tree that meets a row of a live search tree
// ends there (aug_level_cols): the kept trees next to the released columns
// are found from the free columns' side, usually within a level or two.
// A search phase's BFS is cut once no backward tree is left to meet
// (gpumatch_aug_loop), so its trees need not be closed, and while its
// search frontier is much longer than the backward one the search side
// waits (aug_level: the smaller side grows).  When a search phase flips
// nothing, a *closing* phase lets the kept trees adopt, pass after pass,
// every column of no tree next to them (gpumatch_aug_adopt_all, then
// gpumatch_aug_adopt_push from the rows that joined last) and grows the
// new roots and pending rows to their end: that phase is the plain phase
// above and proves the matching maximum when it flips nothing and no
// orphaned tree died.  A search phase proves it only when no phase since
// the last closing phase (itself included) was cut or released anything:
// a cut phase leaves trees open (rows never expanded), and only a closing
// phase's adoption closes them.  Backward trees meet live rows in closing
// phases too.
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
//    rows).  An orphaned tree grows only to be closed again (its pending
//    rows: an added edge from it to a column of no tree, rows next to a
//    released column): claims keep it a certificate; reaching a free column
//    (or a backward tree) marks it dead, and it is dissolved and its free
//    row regrows as a search tree.  A removed matched edge in it marks it
//    dead too.

// gpumatch_aug_dissolve: take the trees marked dead[t] == epoch out of the
// forest (a tree a batch broke, an orphaned tree that reached a free
// column), and release
// every backward tree's columns (no kept tree's row is next to them:
// header).
//   dissolved : n, out: the columns released from search trees (offered
//               to the kept trees by gpumatch_aug_adopt), appended (count
//               ctr[5])
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
                dissolved[gm_append(&ctr[5])] = (idx_t)i;
            } else if (t < -1) {
                root_col[i] = (idx_t)-1;
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

// Tree t claimed the free column c (a BFS level, or an adoption): a live
// tree ends there and is listed for a flip (CAS on end_of: the first free
// column kept, others stay claimed and unused); an orphaned one is marked
// dead (dead[t] = kill, the next dissolve; ctr[13] = 1: the phase has not
// converged).  Concurrent dead / ctr[13] stores write the same values.
__device__ __forceinline__ void aug_reach_free(idx_t t, idx_t c, bool orphaned, idx_t* end_of, int* dead, int kill,
                                               idx_t* flips, unsigned long long* ctr)
{
    if (orphaned) {
        dead[t] = kill;
        ctr[13] = 1ULL;
    } else if (gm_cas(&end_of[t], (idx_t)-1, c) < 0) {
        flips[gm_append(&ctr[4])] = t;
    }
}

// gpumatch_aug_adopt: a released column next to a row of a kept tree
// (live or orphaned) joins that tree at once, instead of the row being
// re-opened and expanding all its columns again (on random d5 graphs a
// flipped tree released 400 000+ columns and the re-opened rows, about as
// many, re-scanned mostly columns of their own trees: the largest level of
// every phase).  Each kept row next to a released column stays closed:
// that column joins some tree here.
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows
//   dissolved  : the released columns (`count`: ctr[5])
//   root_col, parent_col : out, for the adopted columns: the tree of the
//                first row of the column (CSC order) in a tree, and that row
// Thread mapping: grid-stride over the released columns, each scanning its
// rows up to the first one in a tree.  No tree_row is written in this step
// (the rows of the dissolved trees were reset before it), so every parent
// is a row of a kept tree with a settled depth; each thread writes only
// its own column's entries.
__device__ __forceinline__ void aug_adopt_items(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* tree_row, idx_t* root_col,
    idx_t* parent_col, const idx_t* dissolved, long long count, long long start, long long stride)
{
    for (long long i = start; i < count; i += stride) {
        idx_t c = dissolved[i];
        for (ofs_t p = cptr[c]; p < cptr[c + 1]; ++p) {
            idx_t r = cind[p];
            idx_t t = tree_row[r];
            if (t >= 0) {
                root_col[c] = t;
                parent_col[c] = r;
                break;
            }
        }
    }
}

// gpumatch_aug_adopt_all: one adoption pass of a *closing* phase (deferred
// closing, header): every column of no tree next to a row of a kept tree
// that has not ended (or died) in this phase joins the tree of its first
// such row (CSC order), as in gpumatch_aug_adopt but over all columns,
// since the search phases before it left the columns they released
// unclaimed.  The closing repeats the pass, each followed by
// gpumatch_aug_adopt_mates (their mates join, no frontier), until one
// adopts nothing: a pull-style BFS that closes the kept trees over the
// released columns without expanding the adopted rows.
//   adopted : n, out: the columns adopted, appended (count ctr[6])
// Thread mapping: grid-stride over the columns, each scanning its rows up to
// the first one in such a tree; each thread writes only its own column's
// entries, and no tree_row is written in this step.
__device__ __forceinline__ void aug_adopt_all_items(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* tree_row, const idx_t* end_of,
    const int* dead, int kill, idx_t* root_col, idx_t* parent_col, idx_t* adopted, unsigned long long* ctr,
    long long n, long long start, long long stride)
{
    for (long long c = start; c < n; c += stride) {
        if (root_col[c] != (idx_t)-1) continue;
        for (ofs_t p = cptr[c]; p < cptr[c + 1]; ++p) {
            idx_t r = cind[p];
            idx_t t = tree_row[r];
            if (t >= 0 && end_of[t] < 0 && dead[t] != kill) {
                root_col[c] = t;
                parent_col[c] = r;
                adopted[gm_append(&ctr[6])] = (idx_t)c;
                break;
            }
        }
    }
}

// The largest power of two <= max_width with width * size <= threads.
__device__ __forceinline__ int aug_group_width(unsigned long long size, long long threads, int max_width)
{
    int width = 1;
    while (width < max_width && (unsigned long long)(2 * width) * size <= (unsigned long long)threads) width *= 2;
    return width;
}

// gpumatch_aug_adopt_push: an adoption pass of a closing phase after the
// first (_augment.ADOPT_PUSH): after a pass of gpumatch_aug_adopt_all, the
// only columns of no tree next to a row of a kept tree are next to the
// rows that joined in the pass before (the mates of the columns it
// adopted, adopted[first, count)), so this pass scans those rows' columns
// instead of every column again: each column of no tree there joins the
// row's tree (atomicCAS on root_col: the first claim wins), unless that
// tree has ended or died in this phase, as in gpumatch_aug_adopt_all.
//   adopted : n, the adopted columns; read in [first, count), appended
//             from count on (ctr[6])
// Thread mapping: groups of `width` threads (a power of two) per listed
// column, group `start` of `stride`, `lane` the thread's place in its
// group: a row's columns are scanned in parallel.  Each column is claimed
// once; parent_col is written by its claimant only.
__device__ __forceinline__ void aug_adopt_push_items(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* mu_col, const idx_t* tree_row,
    const idx_t* end_of, const int* dead, int kill, idx_t* root_col, idx_t* parent_col, idx_t* adopted,
    unsigned long long* ctr, long long first, long long count, long long start, long long stride, int lane,
    int width)
{
    for (long long i = first + start; i < count; i += stride) {
        idx_t w = mu_col[adopted[i]];
        if (w < 0) continue;
        idx_t t = tree_row[w];
        if (t < 0 || end_of[t] >= 0 || dead[t] == kill) continue;
        for (ofs_t p = rptr[w] + lane; p < rptr[w + 1]; p += width) {
            idx_t c = rind[p];
            if (root_col[c] != (idx_t)-1 || gm_cas(&root_col[c], (idx_t)-1, t) != (idx_t)-1) continue;
            parent_col[c] = w;
            adopted[gm_append(&ctr[6])] = c;
        }
    }
}

// gpumatch_aug_adopt_mates: the second half (after a barrier): the mate of
// each adopted column joins the column's tree, one deeper than the
// column's parent, and the phase's first frontier (seen[] = epoch: the
// seed does not list it twice).  An adopted free column (a removal freed
// it) ends its tree as in a BFS level: a live tree lists its path (CAS on
// end_of, the first one kept), an orphaned one is marked dead (dead[t] =
// kill, ctr[13] = 1).
//   roots, flips : out, appended (counts ctr[3], ctr[4]); with `frontier`
//                  0 (a pass of the deferred closing) the mates only join
//   count_at     : the counter of the column list's length (5: the list
//                  of gpumatch_aug_adopt, 6: that of gpumatch_aug_adopt_all);
//                  the columns from `first` on are handled
// Thread mapping: grid-stride over the listed columns; a column's mate
// is its own (no two threads write one row); concurrent dead / ctr[13]
// stores write the same values.
__device__ __forceinline__ void aug_adopt_mates_items(
    const idx_t* mu_col, const idx_t* root_col, const idx_t* parent_col, idx_t* tree_row, idx_t* end_of,
    int* depth, const unsigned char* tstate, int* dead, int kill, int* seen, int epoch, const idx_t* dissolved,
    idx_t* flips, idx_t* roots, unsigned long long* ctr, long long first, long long count, bool frontier,
    long long start, long long stride)
{
    for (long long i = first + start; i < count; i += stride) {
        idx_t c = dissolved[i];
        idx_t t = root_col[c];
        if (t < 0) continue;
        idx_t w = mu_col[c];
        if (w < 0) {
            aug_reach_free(t, c, tstate[t] == 1, end_of, dead, kill, flips, ctr);
            continue;
        }
        tree_row[w] = t;
        depth[w] = depth[parent_col[c]] + 1;
        seen[w] = epoch;
        if (frontier) roots[gm_append(&ctr[3])] = w;
    }
}

// gpumatch_aug_seed: complete the phase's first frontier.
//   roots   : out, appended (count ctr[3]): every free row with an entry
//             that is in no tree (a new root: tree_row = itself, depth 0),
//             and every pending row of a kept tree (pending[r]: an added
//             edge joined it to a column of no tree, or a phase did not
//             finish expanding it; cleared here, with a live tree's tstate 2)
//   bbuf0   : out, appended (count ctr[8]): every free column with an entry
//             that is in no tree, as the root of a backward tree (root_col
//             = -(c + 2), bowner = -1; with back_ratio 0 those trees never
//             grow, and a search tree that reaches one simply ends there);
//             one held by a search tree sets ctr[14] (no backward
//             certificate in this phase, aug_level_cols)
// Thread mapping: grid-stride over columns, then over rows; a thread writes
// only its own row's and column's entries; atomicExch on seen[] lets each
// row in once (the adopted mates are marked seen already); concurrent
// ctr[14] stores write the same value.
__device__ __forceinline__ void aug_seed_items(
    const ofs_t* __restrict__ rptr, const ofs_t* __restrict__ cptr, const idx_t* mu_row, const idx_t* mu_col,
    long long m, long long n, idx_t* tree_row, idx_t* end_of, int* depth, unsigned char* tstate,
    unsigned char* pending, int* seen, int epoch, idx_t* roots, idx_t* root_col, idx_t* bowner, idx_t* bbuf0,
    double back_ratio, unsigned long long* ctr, long long start, long long stride)
{
    bool held = false;   // a free column with an entry in a search tree roots no backward tree
    for (long long c = start; c < n; c += stride) {
        if (mu_col[c] >= 0 || cptr[c + 1] == cptr[c]) continue;
        if (root_col[c] != (idx_t)-1) {
            held = held || root_col[c] >= 0;
            continue;
        }
        root_col[c] = (idx_t)(-c - 2);
        bowner[c] = (idx_t)-1;
        bbuf0[gm_append(&ctr[8])] = (idx_t)c;
    }
    if (held) ctr[14] = 1ULL;
    for (long long r = start; r < m; r += stride) {
        bool again = pending[r] != 0;
        if (again) pending[r] = 0;
        idx_t t = tree_row[r];
        if (t < 0) {
            if (mu_row[r] >= 0 || rptr[r + 1] == rptr[r]) continue;
            tree_row[r] = (idx_t)r;
            end_of[r] = (idx_t)-1;
            depth[r] = 0;
            if (atomicExch(&seen[r], epoch) != epoch) roots[gm_append(&ctr[3])] = (idx_t)r;
        } else if (again) {
            if (tstate[t] == 2) tstate[t] = 0;   // closed again once its pending rows have grown
            if (atomicExch(&seen[r], epoch) != epoch) roots[gm_append(&ctr[3])] = (idx_t)r;
        }
    }
}

// The search side of one BFS level over `count` frontier rows: groups of
// `width` threads (a power of two, 1 for one thread per row), group `start`
// of `stride`, `lane` the thread's place in its group.
//   in            : the frontier rows
//   out, out_cnt  : the next frontier (mates of the columns claimed here)
//   flips, nflip  : the trees that reached a free column or a backward tree
//                   (count ctr[4])
// Each group takes frontier rows and its threads scan a row's columns
// (lane, lane + width, ...).  A row whose tree already reached a free
// column does nothing.  An unclaimed column is claimed by atomicCAS on
// root_col, so each column, and with it its mate row, joins exactly one
// tree: the trees stay disjoint.  A free column ends its tree (atomicCAS on
// end_of: the first one found is kept and the tree listed once; other free
// columns claimed in the same level stay claimed and unused).  A column of
// a backward tree (root_col < -1, the roots of those trees being the free
// columns) ends the tree when the tree takes that backward tree first
// (atomicCAS on bowner; a backward tree taken by a tree that had already
// ended stays unused); a row whose edge into a backward tree ends no path
// (taken already, by any tree) is pending: it grows again next phase, when
// that tree's columns off the flipped path have been released.  An orphaned tree (tstate 1: no
// free root, it only grows to be closed again) that reaches a free column
// or a backward tree is marked dead (dead[t] = kill, the next dissolve;
// ctr[13] = 1: the phase has not converged) and grows no further.  Benign
// races: rows
// of a finished tree, this one included, still extend it during the level
// in which it finished; concurrent dead / ctr[13] / pending stores write
// the same values.
__device__ __forceinline__ void aug_level_rows(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind, const idx_t* mu_col,
    idx_t* root_col, idx_t* __restrict__ parent_col, idx_t* tree_row, idx_t* end_of, int* depth,
    const unsigned char* tstate, int* dead, int kill, unsigned char* pending, idx_t* bowner,
    idx_t* __restrict__ flips, unsigned long long* ctr, const idx_t* in, long long count, idx_t* out,
    unsigned long long* out_cnt, long long start, long long stride, int lane, int width)
{
    for (long long i = start; i < count; i += stride) {
        idx_t u = in[i];
        idx_t t = tree_row[u];
        if (end_of[t] >= 0 || dead[t] == kill) continue;
        const bool orphaned = tstate[t] == 1;
        for (ofs_t p = rptr[u] + lane; p < rptr[u + 1]; p += width) {
            idx_t c = rind[p];
            idx_t v = root_col[c];
            if (v == (idx_t)-1) v = gm_cas(&root_col[c], (idx_t)-1, t);
            if (v == (idx_t)-1) {   // claimed for t
                parent_col[c] = u;
                idx_t w = mu_col[c];
                if (w < 0) {
                    aug_reach_free(t, c, orphaned, end_of, dead, kill, flips, ctr);
                    continue;
                }
                tree_row[w] = t;
                depth[w] = depth[u] + 1;
                out[gm_append(out_cnt)] = w;
            } else if (v < (idx_t)-1 && orphaned) {
                dead[t] = kill;
                ctr[13] = 1ULL;
            } else if (v < (idx_t)-1) {   // the backward tree of the free column -v - 2
                idx_t f = -v - 2;
                idx_t o = bowner[f];
                if (o == (idx_t)-1) o = gm_cas(&bowner[f], (idx_t)-1, t);
                if (o == (idx_t)-1) {
                    parent_col[c] = u;
                    if (gm_cas(&end_of[t], (idx_t)-1, c) < 0) {
                        flips[gm_append(&ctr[4])] = t;
                        continue;
                    }
                }
                // this edge ends no path: the backward tree's other columns
                // are released next phase, and u must be closed over them
                pending[u] = 1;
            }
        }
    }
}

// The backward side of one BFS level over `count` frontier columns (groups
// as in aug_level_rows; the CSC).  A column of a backward tree that a
// search tree took grows no further.  A row x next to column y (not y's
// mate) that is matched adds its column mu_row[x] to y's backward tree
// (atomicCAS on root_col: unclaimed columns only), reached from y (bpar).
// Free rows are left to the search side (every free row with an entry roots
// a search tree).
// With `meet` (deferred closing, header), a row x of a live search tree
// that has not ended yet takes y's backward tree itself (atomicCAS on
// bowner, then on end_of as in aug_level_rows): root -> ... -> x -> y ->
// ... -> f is an augmenting path, its first part the tree path to x.  Rows
// of other trees (orphaned, ended) are passed over: their mates' columns
// are claimed anyway.  A backward tree won here by a tree that ended
// elsewhere in the same level stays unused (as on the search side).
// Every row x that is not simply passed to its mate's column in the
// backward trees sets ctr[14] (a row of a search tree, a free row, a mate
// whose column a search tree holds, whether or not a meet came of it):
// a search phase whose backward side never did so, ran out of frontier and
// flipped nothing has closed the backward trees on their own (the backward
// certificate, gpumatch_aug_solve; concurrent ctr[14] stores write the
// same value).
//   in, out, out_cnt : the frontier and the next one (columns)
__device__ __forceinline__ void aug_level_cols(
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, const idx_t* mu_row, const idx_t* mu_col,
    idx_t* root_col, idx_t* __restrict__ bpar, idx_t* bowner, const idx_t* tree_row, idx_t* parent_col,
    idx_t* end_of, const unsigned char* tstate, idx_t* flips, unsigned long long* ctr, bool meet, const idx_t* in,
    long long count, idx_t* out, unsigned long long* out_cnt, long long start, long long stride, int lane,
    int width)
{
    bool touched = false;
    for (long long i = start; i < count; i += stride) {
        idx_t y = in[i];
        idx_t v = root_col[y];
        idx_t f = -v - 2;
        if (bowner[f] >= 0) continue;
        idx_t mate = mu_col[y];
        for (ofs_t p = cptr[y] + lane; p < cptr[y + 1]; p += width) {
            idx_t x = cind[p];
            if (x == mate) continue;
            if (meet) {
                idx_t t = tree_row[x];
                if (t >= 0) {
                    touched = true;
                    if (tstate[t] != 1 && end_of[t] < 0 && bowner[f] == (idx_t)-1
                        && gm_cas(&bowner[f], (idx_t)-1, t) == (idx_t)-1) {
                        parent_col[y] = x;
                        if (gm_cas(&end_of[t], (idx_t)-1, y) < 0) flips[gm_append(&ctr[4])] = t;
                    }
                    continue;
                }
            }
            idx_t y2 = mu_row[x];
            if (y2 < 0) {
                touched = true;
                continue;
            }
            idx_t w = root_col[y2];
            if (w == (idx_t)-1) w = gm_cas(&root_col[y2], (idx_t)-1, v);
            if (w != (idx_t)-1) {
                touched = touched || w >= 0;
                continue;
            }
            bpar[y2] = y;
            out[gm_append(out_cnt)] = y2;
        }
    }
    if (touched) ctr[14] = 1ULL;
}

// Frontier buffers and counters of level s (the three kernels below): the
// search side's level 0 reads the roots (count ctr[3]), level s > 0 reads
// buf[(s - 1) % 2] (count ctr[(s - 1) % 3]); level s writes buf[s % 2]
// (count ctr[s % 3]) and zeroes ctr[(s + 1) % 3], the next level's output
// counter, last read as the input count of level s - 1, which has finished.
// The backward side counts its own levels (j = ctr[11 + s % 2] before level
// s; level s stores j or j + 1 in ctr[11 + (s + 1) % 2]): its level j reads
// bbuf[j % 2] (count ctr[8 + j % 3]; level 0 the roots of the seed), writes
// bbuf[(j + 1) % 2] (count ctr[8 + (j + 1) % 3]) and zeroes
// ctr[8 + (j + 2) % 3].  It runs at level s when its frontier is not empty
// and at most back_ratio times the search side's or at most `floor` long
// (a search phase of the deferred closing, gpumatch_aug_loop; 0 otherwise).
// In a search phase, when the backward side runs and the search frontier
// is more than search_wait (> 0) times as long as the backward one, the
// search side *waits*: it only copies the rows of its frontier whose
// trees have not ended or died to the next level's buffer (the smaller
// side grows, _augment.SEARCH_WAIT).
// Every thread reads the
// same sizes (written before the barrier or launch that ends level s - 1),
// from `cnt`: ctr itself, or (gpumatch_aug_solve) the block's copy of it.
// tid, threads: the thread's place in the grid (or block) running the level;
// max_width: the largest group per row or column.
__device__ __forceinline__ void aug_level(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind, const ofs_t* __restrict__ cptr,
    const idx_t* __restrict__ cind, const idx_t* mu_row, const idx_t* mu_col, idx_t* root_col, idx_t* parent_col,
    idx_t* tree_row, idx_t* end_of, int* depth, const unsigned char* tstate, int* dead, int kill,
    unsigned char* pending, idx_t* bpar, idx_t* bowner, idx_t* flips,
    const idx_t* roots, idx_t* buf0, idx_t* buf1, idx_t* bbuf0, idx_t* bbuf1, unsigned long long* ctr,
    const volatile unsigned long long* cnt, long long s, double back_ratio, bool meet, long long floor,
    double search_wait, long long tid, long long threads, int max_width)
{
    volatile unsigned long long* vctr = ctr;
    unsigned long long size = cnt[s == 0 ? 3 : (s - 1) % 3];
    unsigned long long j = cnt[11 + s % 2];
    unsigned long long bsize = cnt[8 + j % 3];
    bool back = bsize != 0ULL
                && ((double)bsize <= back_ratio * (double)size || (long long)bsize <= floor);
    if (tid == 0) {
        vctr[(s + 1) % 3] = 0ULL;
        if (back) vctr[8 + (j + 2) % 3] = 0ULL;
        vctr[11 + (s + 1) % 2] = j + (back ? 1ULL : 0ULL);
    }
    const idx_t* in = s == 0 ? roots : (((s - 1) % 2) ? buf1 : buf0);
    idx_t* out = (s % 2) ? buf1 : buf0;
    if (back && floor > 0 && search_wait > 0.0 && (double)size > search_wait * (double)bsize) {
        // the search side waits: its frontier, less the rows of trees that
        // ended or died, is carried to the next level (benign race: a tree
        // that the backward side ends in this level may still be carried,
        // and the next level passes over its rows)
        for (long long i = tid; i < (long long)size; i += threads) {
            idx_t u = in[i];
            idx_t t = tree_row[u];
            if (end_of[t] < 0 && dead[t] != kill) out[gm_append(&ctr[s % 3])] = u;
        }
    } else {
        int width = aug_group_width(size, threads, max_width);
        aug_level_rows(rptr, rind, mu_col, root_col, parent_col, tree_row, end_of, depth, tstate, dead, kill,
                       pending, bowner, flips, ctr, in, (long long)size, out, &ctr[s % 3], tid / width,
                       threads / width, (int)(tid % width), width);
    }
    if (back) {
        const int bwidth = aug_group_width(bsize, threads, max_width);
        aug_level_cols(cptr, cind, mu_row, mu_col, root_col, bpar, bowner, tree_row, parent_col, end_of, tstate,
                       flips, ctr, meet, (j % 2) ? bbuf1 : bbuf0, (long long)bsize, (j % 2) ? bbuf0 : bbuf1,
                       &ctr[8 + (j + 1) % 3], tid / bwidth, threads / bwidth, (int)(tid % bwidth), bwidth);
    }
}

// Flip the tree path from the free column c back to the root t: each column
// takes the row it was reached from, each of those rows takes that column.
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
// When end_of[t] is a matched column c of a backward tree, the path goes on
// from c's old mate x: x takes bpar[c], that column's old mate takes its
// bpar, and so on to the tree's free root; nmet counts those paths.  The
// tree is then marked dead (dead[t] = kill, the next dissolve: its rows
// and columns are released and those next to kept trees adopted by them).
// Keeping it instead, orphaned, measured slower: a tree ends at its first
// free column while still growing, so the rows it did not expand are many
// and their growth soon reaches another free column, which kills it a
// phase later anyway.
__device__ __forceinline__ void aug_flip_tree(
    idx_t t, const idx_t* parent_col, const idx_t* bpar, const idx_t* end_of, idx_t* mu_row, idx_t* mu_col,
    int* dead, int kill, unsigned long long* nmet)
{
    idx_t c = end_of[t];
    idx_t x = mu_col[c];
    aug_flip_path(t, c, parent_col, mu_row, mu_col);
    if (x >= 0) {
        while (true) {
            idx_t z = bpar[c];
            idx_t prev = mu_col[z];
            mu_row[x] = z;
            mu_col[z] = x;
            if (prev < 0) break;
            x = prev;
            c = z;
        }
        atomicAdd(nmet, 1ULL);
    }
    dead[t] = kill;
}

// The backward frontier that level s reads (aug_level's counters).
__device__ __forceinline__ unsigned long long aug_back_size(const volatile unsigned long long* cnt, long long s)
{
    return cnt[8 + cnt[11 + s % 2] % 3];
}

// Whether a phase's BFS goes on with frontiers of `size` rows and `bsize`
// columns: while the search frontier is not empty, or, in a search phase
// of the deferred closing (floor > 0, gpumatch_aug_loop), while the
// backward one is not empty and either the search frontier is not or the
// backward one is at most `floor` long.  A search phase whose BFS stops
// with a frontier left is *cut*.
__device__ __forceinline__ bool aug_goes_on(unsigned long long size, unsigned long long bsize, long long floor)
{
    if (floor == 0) return size != 0ULL;
    return bsize != 0ULL && (size != 0ULL || (long long)bsize <= floor);
}

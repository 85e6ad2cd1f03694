// @prepend matching/augment_common.cuh
// The cooperative augmenting-path solve (gpumatch/matching/_augment.py): every phase
// of a call in ONE launch with grid-wide barriers between its steps.
// The shared notation, device helpers and tuning macros are in
// matching/augment_common.cuh, prepended to this file by gpumatch/_cuda.py.


#ifdef GPUMATCH_COOPERATIVE
#include <cooperative_groups.h>

// gpumatch_aug_solve: every phase of a solve in ONE cooperative launch (the
// grid is co-resident; grid.sync() is a barrier with memory ordering over
// the whole grid, about 1.5 us on an H100 against 25-50 us for a launch and
// a read-back).  Per phase:
//   1. dissolve (releasing the backward trees too), sync; in a closing
//      phase (all phases without `defer`) the released columns next to
//      kept trees join them, sync, their mates join (the first frontier),
//      sync; with `defer`, passes of gpumatch_aug_adopt_all (with
//      `adopt_push`, only the first: then gpumatch_aug_adopt_push from the
//      rows that joined in the pass before) (sync) and the mates joining
//      (sync) until a pass adopts nothing;
//   2. seed (grid-stride over rows, then columns), sync;
//   3. BFS levels of both sides with a sync after each (aug_level; a
//      frontier of f rows or columns gives each a group of the largest
//      power of two <= min(32, threads / f) threads, so short frontiers
//      scan in parallel);
//   4. the flips of the trees that reached a free column (grid-stride,
//      disjoint trees), sync.
// Phases repeat until one flips nothing and no orphaned tree died
// (converged) or `max_phases` (< 0: no cap, else >= 1) ran, or the BFS
// levels of the call reach `max_levels` (< 0: no cap): the phase then
// stops between two levels, flips the trees that reached a free column
// (each a whole augmenting path: the matching stays valid) and the call
// ends unconverged with state[14] = 1 (the driver hands the matching to
// the host, which needs no forest); then the
// matched columns are counted and the last phase's backward trees released
// (kept when they proved convergence: the backward certificate below).
// With `defer` (deferred closing, header) a phase is a search phase unless
// the one before it was a search phase that flipped nothing: then it is a
// closing phase, and only a closing phase can converge, or a search phase
// that flipped nothing when no orphaned tree died, no column was released
// and no phase was cut (gpumatch_aug_loop, `back_floor`) since the last
// closing phase (it then was one).
// The backward certificate (`back_cert`, _augment.BACK_CERTIFICATE): a
// search phase that flipped nothing, whose backward side ran out of
// frontier and never touched a search tree (ctr[14] 0: aug_seed_items,
// aug_level_cols), also proves the matching maximum, from the columns'
// side.  Let C_B be the columns of its backward trees and R_B the rows next
// to them: every free column with an entry is in C_B (a root), every row of
// R_B is matched and its mate is in C_B (it was passed to its mate's column,
// which joined some backward tree), so (rows of R_B) + (columns with entries
// outside C_B) is a vertex cover of the size of the matching.  It stands
// without closing the search trees: on random d5 graphs, where the search
// trees hold over 90 % of the columns and the backward trees a few
// thousand, it replaces the closing phase's adoption of every released
// column (0.4-0.7 ms).  The kept forest is then not closed, and the next
// solve starts from every free row (state[13] = 1: the host forgets the
// forest).  A search phase that can converge by the forest's rule does so.
//   epoch0 : the epoch of the first phase's dissolve; phase p dissolves
//            dead[t] == epoch0 + p and its flips mark epoch0 + p + 1
//   repairs: 2, the repairs of the batches since the last solve (read and
//            zeroed here)
//   state  : 15, out: phases, paths flipped, BFS levels, length of the
//            first frontier, converged (0/1), matched columns, the two
//            repair counts, columns released in the first phase, paths
//            through backward trees, backward levels, phases in which an
//            orphaned tree died, closing phases with `defer`, 1 when
//            the backward certificate proved convergence, and 1 when
//            `max_levels` cut a phase
//   trace  : a diagnostic (trace_cap 0: off): trace[0] counts the records written
//            from trace[1] on, 5 values each, at most trace_cap: (phase,
//            step, a, b, %globaltimer ns) after the barrier that ends a
//            step: step -4 the kernel's start (no barrier before it, a =
//            b = 0); -5 an adoption pass of a closing phase, a = columns
//            adopted, b = 1 for a push pass; -1 the dissolves (after the
//            adoption passes), a = columns released; -2 the
//            seed, a, b = the two first frontiers; s >= 0 level s, a, b =
//            the two next frontiers; -3 the flips, a = paths, b = through
//            backward trees
// Only rptr, rind, cptr and cind are read-only here: every other array is
// written by some step, so none of them is read through the non-coherent
// (__restrict__ const) path.  ctr[] entries are zeroed by thread 0 after a
// sync that every reader of their previous values has passed; thread 0
// alone sums the counts it reads after the last sync of a phase.
extern "C" __global__ void __launch_bounds__(512) gpumatch_aug_solve(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind, long long m, long long n,
    idx_t* mu_row, idx_t* mu_col, idx_t* root_col, idx_t* parent_col, idx_t* tree_row, idx_t* end_of,
    int* depth, unsigned char* tstate, int* dead, int* seen, unsigned char* pending, idx_t* bpar, idx_t* bowner,
    idx_t* roots, idx_t* flips, idx_t* dissolved, idx_t* buf0, idx_t* buf1, idx_t* bbuf0, idx_t* bbuf1,
    unsigned long long* ctr, int epoch0, long long max_phases, double back_ratio, int defer, long long back_floor,
    unsigned long long* repairs, long long* state, long long* trace, long long trace_cap, double search_wait,
    int adopt_push, int back_cert, long long max_levels)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    volatile unsigned long long* vctr = ctr;
    long long phase = 0, paths = 0, levels = 0, seeds = 0, released = 0, met = 0, back_levels = 0, deaths = 0;
    long long closings = 0;
    unsigned long long deferred = 0ULL;   // columns released since the last closing phase
    bool left_open = false;               // a search phase was cut since the last closing phase
    int converged = 0, backward = 0, capped = 0;
    bool closing = !defer;
    auto note = [&](long long step, unsigned long long a, unsigned long long b) {
        if (tid != 0 || trace[0] >= trace_cap) return;
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        long long* rec = trace + 1 + 5 * trace[0];
        rec[0] = phase;
        rec[1] = step;
        rec[2] = (long long)a;
        rec[3] = (long long)b;
        rec[4] = (long long)now;
        ++trace[0];
    };
    // After a barrier, one warp of each block copies the 16 counters into
    // shared memory and the block reads them there: every warp of the grid
    // reading them from global memory queued ~4 000 loads on one L2 line
    // after each barrier (a level with nothing to do took ~10 us).
    __shared__ unsigned long long snap[16];
    auto sync_snap = [&]() {
        grid.sync();
        if (threadIdx.x < 16) snap[threadIdx.x] = vctr[threadIdx.x];
        __syncthreads();
    };
    note(-4, 0ULL, 0ULL);
    if (tid == 0) state[5] = 0;   // counted into after the last sync of the phases below
    while (max_phases < 0 || phase < max_phases) {
        const int e = epoch0 + (int)phase;
        if (tid == 0)
            for (int i = 0; i < 16; ++i) vctr[i] = 0ULL;
        grid.sync();
        aug_dissolve_items(m, n, root_col, tree_row, end_of, tstate, dead, e, dissolved, ctr, tid, nthreads);
        sync_snap();
        deferred += snap[5];
        if (closing && defer) {   // adoption passes until one adopts nothing (gpumatch_aug_adopt_all, _push)
            unsigned long long first = 0ULL, prev = 0ULL;
            bool push = false;
            while (true) {
                if (push) {
                    const int width = aug_group_width(first - prev, nthreads, GPUMATCH_WARP);
                    aug_adopt_push_items(rptr, rind, mu_col, tree_row, end_of, dead, e + 1, root_col, parent_col,
                                         dissolved, ctr, (long long)prev, (long long)first, tid / width,
                                         nthreads / width, (int)(tid % width), width);
                } else {
                    aug_adopt_all_items(cptr, cind, tree_row, end_of, dead, e + 1, root_col, parent_col, dissolved,
                                        ctr, n, tid, nthreads);
                }
                sync_snap();
                note(-5, snap[6] - first, push ? 1ULL : 0ULL);
                if (snap[6] == first) break;
                aug_adopt_mates_items(mu_col, root_col, parent_col, tree_row, end_of, depth, tstate, dead, e + 1,
                                      seen, e, dissolved, flips, roots, ctr, (long long)first, (long long)snap[6],
                                      false, tid, nthreads);
                prev = first;
                first = snap[6];
                push = adopt_push != 0;
                grid.sync();
            }
        } else if (closing) {
            aug_adopt_items(cptr, cind, tree_row, root_col, parent_col, dissolved, (long long)snap[5], tid,
                            nthreads);
            grid.sync();
            aug_adopt_mates_items(mu_col, root_col, parent_col, tree_row, end_of, depth, tstate, dead, e + 1, seen,
                                  e, dissolved, flips, roots, ctr, 0LL, (long long)snap[5], true, tid, nthreads);
            grid.sync();
        }
        note(-1, snap[5], 0ULL);
        aug_seed_items(rptr, cptr, mu_row, mu_col, m, n, tree_row, end_of, depth, tstate, pending, seen, e, roots,
                       root_col, bowner, bbuf0, back_ratio, ctr, tid, nthreads);
        sync_snap();
        unsigned long long size = snap[3];
        note(-2, size, snap[8]);
        if (phase == 0) {
            seeds = (long long)size;
            released = (long long)snap[5];
        }
        // a search phase of the deferred closing: backward levels alone while
        // short, and cut as in gpumatch_aug_loop
        const bool search = defer && !closing;
        const long long floor = search ? back_floor : 0;
        long long s = 0;
        unsigned long long bsize = aug_back_size(snap, 0);
        while (aug_goes_on(size, bsize, floor)) {
            if (max_levels >= 0 && levels + s >= max_levels) {   // (every thread: the same counts)
                capped = 1;
                break;
            }
            aug_level(rptr, rind, cptr, cind, mu_row, mu_col, root_col, parent_col, tree_row, end_of, depth, tstate,
                      dead, e + 1, pending, bpar, bowner, flips, roots, buf0, buf1, bbuf0, bbuf1, ctr, snap, s,
                      back_ratio, defer != 0, floor, search_wait, tid, nthreads, GPUMATCH_WARP);
            sync_snap();
            size = snap[s % 3];
            ++s;
            bsize = aug_back_size(snap, s);
            note(s - 1, size, bsize);
        }
        const bool cut = search && (size != 0ULL || bsize != 0ULL);
        const bool back_closed = search && back_cert != 0 && bsize == 0ULL && snap[14] == 0ULL;
        left_open = left_open || cut;
        levels += s;
        long long nflip = (long long)snap[4];
        const bool died = snap[13] != 0ULL;   // copied before any thread can pass the next zeroing
        for (long long i = tid; i < nflip; i += nthreads)
            aug_flip_tree(flips[i], parent_col, bpar, end_of, mu_row, mu_col, dead, e + 1, &ctr[7]);
        ++phase;
        paths += nflip;
        grid.sync();   // the flips are done before the next dissolve, or the count below
        if (tid == 0) {
            met += (long long)vctr[7];
            back_levels += (long long)vctr[11 + s % 2];
            deaths += died ? 1 : 0;
        }
        note(-3, (unsigned long long)nflip, vctr[7]);
        closings += (closing && defer) ? 1 : 0;
        if (capped) break;   // (cut: neither closed nor converged)
        const bool forest_closed = !died && (closing || (deferred == 0ULL && !left_open));
        if (nflip == 0 && (forest_closed || back_closed)) {
            converged = 1;
            backward = forest_closed ? 0 : 1;
            break;
        }
        if (closing) {
            deferred = 0ULL;
            left_open = false;
        }
        closing = !defer || nflip == 0;
    }
    // matched columns: a shuffle sum per warp, one atomic per warp; the
    // last phase's backward trees are released on the way, unless they
    // proved the matching maximum (backward: every thread took the same
    // branch above): their claims are then the certificate the host reads
    // (_augment.cover_marks), and the next solve's dissolve releases them
    unsigned long long mine = 0ULL;
    for (long long c = tid; c < n; c += nthreads) {
        mine += mu_col[c] >= 0 ? 1ULL : 0ULL;
        if (!backward && root_col[c] < (idx_t)-1) root_col[c] = (idx_t)-1;
    }
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
        state[9] = met;
        state[10] = back_levels;
        state[11] = deaths;
        state[12] = closings;
        state[13] = backward;
        state[14] = capped;
        repairs[0] = repairs[1] = 0ULL;
    }
}
#endif

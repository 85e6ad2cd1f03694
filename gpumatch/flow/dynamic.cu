// CUDA kernels of MaxFlowSolver (gpumatch/flow/_dynamic.py).  In
// update_capacities one batch of capacity changes is checked and classified
// by one launch with one small read-back, then applied by a second launch
// (the NumPy twin is the vectorised code of MaxFlowSolver._classify_xp and
// the apply step of update_capacities).  The repair's checks: whether the
// kept cut is open (_sealed) and which signs the excesses have (_signs),
// each one launch and one read-back (NumPy twins: the array code there).
//
// Per-arc arrays (cap, flow, tail, head, oti) have one dummy slot at index E
// that stands for self-loops and entries that are not arcs.

#define I64_MAX 0x7fffffffffffffffll
#define LOW32 0xffffffffll

// gpumatch_dyn_classify: look up and classify the changes rows[i] -> cols[i]
// (new capacity caps[i]).
//   rows, cols, caps : n, the batch (int64)
//   keys       : nnz, sorted keys row * V + col of the stored entries
//   arc_of     : nnz, arc of each stored entry (-1: self-loop)
//   cap, flow, tail, head : E + 1, per arc (dummy slot E)
//   side       : V, source side of the last minimum cut
//   s_lo, s_hi : the out-arcs of the source are arcs s_lo .. s_hi - 1
//   claim, batch : nnz stamps; an entry claimed twice in one batch is a duplicate
//   at, slot, d : n, out: stored position, arc (E if none) and the flow
//                moved (tail gains d, head loses d)
//   pair_min, src, snk : cuts of at least pair_min units on arcs between
//                two vertices other than the terminals src and snk count as
//                paired (MaxFlowSolver._pairs_worth)
//   acc        : 17, in/out: min cap, min/max row, min/max col (atomic
//                min/max), first duplicate and first missing index (atomic
//                min), the capacity change of the source's arcs and of the
//                cut's arcs as sums of high and low 32-bit halves, the
//                number of arcs whose flow moves, the number of those
//                that push new flow across the cut (d < 0), and the flow
//                cut (d > 0) in all and on paired arcs, as sums of halves
// Thread mapping: one thread per change (grid-stride).  A decrease below
// the flow cuts it to the new capacity; an increase of a saturated arc of
// the cut (tail on the source side, head not) pushes the new residual.
extern "C" __global__ void gpumatch_dyn_classify(
    const long long* __restrict__ rows, const long long* __restrict__ cols, const long long* __restrict__ caps,
    long long n, const long long* __restrict__ keys, long long nnz, const long long* __restrict__ arc_of,
    long long V, long long E, const long long* __restrict__ cap, const long long* __restrict__ flow,
    const long long* __restrict__ tail, const long long* __restrict__ head, const bool* __restrict__ side,
    long long s_lo, long long s_hi, int* claim, int batch, long long pair_min, long long src, long long snk,
    long long* at, long long* slot, long long* d, long long* acc)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long r = rows[i], c = cols[i], nc = caps[i];
        atomicMin(acc + 0, nc);
        atomicMin(acc + 1, r);
        atomicMax(acc + 2, r);
        atomicMin(acc + 3, c);
        atomicMax(acc + 4, c);
        long long pos = 0, a = E, dd = 0;
        bool found = false;
        if (r >= 0 && r < V && c >= 0 && c < V && nnz > 0) {
            const long long key = r * V + c;
            long long lo = 0, hi = nnz;
            while (lo < hi) {
                const long long mid = lo + (hi - lo) / 2;
                if (keys[mid] < key) lo = mid + 1; else hi = mid;
            }
            found = lo < nnz && keys[lo] == key;
            pos = lo < nnz ? lo : nnz - 1;
        }
        if (!found) {
            atomicMin(acc + 6, i);
        } else {
            if (atomicExch(claim + pos, batch) == batch) atomicMin(acc + 5, i);
            const long long k = arc_of[pos];
            a = k >= 0 ? k : E;
        }
        if (a < E) {
            const long long old = cap[a], f = flow[a];
            const bool cross = side[tail[a]] && !side[head[a]];
            dd = f > nc ? f - nc : ((cross && nc > old && f == old) ? old - nc : 0);
            if (a >= s_lo && a < s_hi) {
                gm_add(acc + 7, (nc >> 32) - (old >> 32));
                gm_add(acc + 8, (nc & LOW32) - (old & LOW32));
            }
            if (cross) {
                gm_add(acc + 9, (nc >> 32) - (old >> 32));
                gm_add(acc + 10, (nc & LOW32) - (old & LOW32));
            }
            if (dd != 0) gm_add(acc + 11, 1);
            if (dd < 0) gm_add(acc + 12, 1);
            if (dd > 0) {
                gm_add(acc + 13, dd >> 32);
                gm_add(acc + 14, dd & LOW32);
                const long long u = tail[a], v = head[a];
                if (dd >= pair_min && u != src && u != snk && v != src && v != snk) {
                    gm_add(acc + 15, dd >> 32);
                    gm_add(acc + 16, dd & LOW32);
                }
            }
        }
        at[i] = pos;
        slot[i] = a;
        d[i] = dd;
    }
}

// gpumatch_dyn_apply: apply a classified batch (all checks passed).
//   caps, n, at, slot, d : as in gpumatch_dyn_classify
//   data       : nnz, capacities of the stored entries
//   cap, flow, capT : E + 1, capacities and flows of the arcs, capacities of
//                the transposed arcs (oti: arc -> transposed position)
//   tail, head : E + 1, ends of the arcs; excess : V (atomic)
//   mode       : 0 the whole batch; 1 the capacities and the cuts below
//                the flow (d > 0) only; 2 the pushes across the cut (d < 0)
//                only (after gpumatch_dyn_push_bound has bounded them)
// Thread mapping: one thread per change; arcs are distinct within a batch.
extern "C" __global__ void gpumatch_dyn_apply(
    const long long* __restrict__ caps, long long n, const long long* __restrict__ at,
    const long long* __restrict__ slot, const long long* __restrict__ d, long long* data, long long* cap,
    long long* flow, long long* capT, const long long* __restrict__ oti, const long long* __restrict__ tail,
    const long long* __restrict__ head, long long* excess, long long E, int mode)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long nc = caps[i], a = slot[i], dd = d[i];
        if (mode != 2) data[at[i]] = nc;
        if (a >= E) continue;
        if (mode != 2) {
            cap[a] = nc;
            capT[oti[a]] = nc;
        }
        if (dd != 0 && (mode == 0 || (mode == 1) == (dd > 0))) {
            flow[a] -= dd;
            gm_add(excess + tail[a], dd);
            gm_add(excess + head[a], -dd);
        }
    }
}

// Bounded sums of gpumatch_dyn_push_bound: what vertex x can still take in
// from its own side of the kept cut (in = true: the residual of its in-arcs
// from that side, the flow of its out-arcs into it, which x can cancel, and
// its excess) or pass on into it (in = false: the reverse, and its
// deficit), at most `want` (the sum stops there).  With depth 2 the term of
// each arc x - y is capped by y's own room one arc further (arcs back to x
// not counted).  `mine`: the side whose arcs count (side[] value); `term`:
// that side's terminal, whose room is unbounded; `from`: the vertex whose
// arcs do not count (-1: none).
__device__ long long dyn_side_room(long long x, long long from, int depth, bool in, bool mine, long long want,
                                   long long term, const long long* __restrict__ excess,
                                   const long long* __restrict__ cap, const long long* __restrict__ flow,
                                   const long long* __restrict__ tail, const long long* __restrict__ head,
                                   const bool* __restrict__ side, const ofs_t* __restrict__ indptr,
                                   const ofs_t* __restrict__ in_indptr, const ofs_t* __restrict__ in_to_out)
{
    if (x == term) return want;
    const long long e = excess[x];
    long long sum = in ? (e > 0 ? e : 0) : (e < 0 ? -e : 0);
    for (long long k = in_indptr[x]; k < in_indptr[x + 1] && sum < want; ++k) {
        const long long b = in_to_out[k], y = tail[b];   // b: y -> x
        if (y == from || side[y] != mine) continue;
        long long r = in ? cap[b] - flow[b] : flow[b];
        if (r > 0 && depth > 1)
            r = dyn_side_room(y, x, depth - 1, in, mine, r, term, excess, cap, flow, tail, head, side, indptr,
                              in_indptr, in_to_out);
        sum += r < want - sum ? r : want - sum;   // (never past want: no overflow)
    }
    for (long long b = indptr[x]; b < indptr[x + 1] && sum < want; ++b) {   // b: x -> y
        const long long y = head[b];
        if (y == from || side[y] != mine) continue;
        long long r = in ? flow[b] : cap[b] - flow[b];
        if (r > 0 && depth > 1)
            r = dyn_side_room(y, x, depth - 1, in, mine, r, term, excess, cap, flow, tail, head, side, indptr,
                              in_indptr, in_to_out);
        sum += r < want - sum ? r : want - sum;   // (never past want: no overflow)
    }
    return sum < want ? sum : want;
}

// gpumatch_dyn_push_bound: bound each push across the kept cut (d[i] < 0:
// an increase of a saturated arc u -> v from the source side S to the sink
// side T) by what can use it `depth` arcs away (dyn_side_room): what u can
// still take in from S (the source unbounded) and what v can still pass on
// into T (the sink unbounded).  An arc left below its capacity keeps the
// rest as residual across the cut.
//   n, slot, d  : as in gpumatch_dyn_classify; d[i] < 0 becomes -min(-d[i], bounds)
//   cap, flow, tail, head : E + 1, per arc (dummy slot E), the batch's
//                 capacities and cuts below the flow applied (apply mode 1)
//   side, excess : V; indptr, in_indptr, in_to_out : the reverse-CSR layout
//   s, t        : the terminals; least : pushes of fewer units go whole
//   depth       : 1 or 2; pushes : 1, out (atomic): arcs that still push
// Thread mapping: one thread per change (grid-stride).  Reads only the
// arcs inside a side, which no thread writes; the pushes are applied by
// gpumatch_dyn_apply (mode 2) afterwards.  Two pushes that share a tail or
// a head may both count its room (an over-estimate, as without the bound).
extern "C" __global__ void gpumatch_dyn_push_bound(
    long long n, const long long* __restrict__ slot, long long* d, const long long* __restrict__ cap,
    const long long* __restrict__ flow, const long long* __restrict__ tail, const long long* __restrict__ head,
    const bool* __restrict__ side, const long long* __restrict__ excess, const ofs_t* __restrict__ indptr,
    const ofs_t* __restrict__ in_indptr, const ofs_t* __restrict__ in_to_out, long long s, long long t,
    long long least, int depth, long long* pushes)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long dd = d[i];
        if (dd >= 0) continue;
        const long long a = slot[i];
        long long p = -dd;
        if (p >= least) {
            p = dyn_side_room(tail[a], -1, depth, true, true, p, s, excess, cap, flow, tail, head, side, indptr,
                              in_indptr, in_to_out);
            if (p > 0)
                p = dyn_side_room(head[a], -1, depth, false, false, p, t, excess, cap, flow, tail, head, side,
                                  indptr, in_indptr, in_to_out);
        }
        d[i] = -p;
        if (p > 0) gm_add(pushes, 1);
    }
}

// gpumatch_dyn_cut_open: does a residual arc cross the kept cut from its
// source side S to its sink side T?  (MaxFlowSolver._sealed; a CuPy
// reduction here compiled a kernel per size class of the lists, 2 s each.)
//   flow     : flow per arc position of the network read: L, or its
//              transpose LT with `mapped` (then pos[a] is arc a's position)
//   cap      : capacity per arc position of L
//   pos      : E + 1, LT position of each arc position of L (read with `mapped`)
//   st, nst  : arc positions of L from S to T
//   ts, nts  : arc positions of L from T to S
//   open     : 1, set to 1 when an arc of st is below its capacity or an
//              arc of ts carries flow (the caller zeroes it)
// Thread mapping: one thread per listed arc (st, then ts), grid-stride.
// Race: benign, every writer stores 1.
extern "C" __global__ void gpumatch_dyn_cut_open(
    const long long* __restrict__ flow, const long long* __restrict__ cap, const long long* __restrict__ pos,
    int mapped, const long long* __restrict__ st, long long nst, const long long* __restrict__ ts, long long nts,
    int* open)
{
    const long long n = nst + nts;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long a = i < nst ? st[i] : ts[i - nst];
        const long long f = flow[mapped ? pos[a] : a];
        if (i < nst ? f < cap[a] : f > 0) *open = 1;
    }
}

// gpumatch_dyn_signs: whether any vertex but the terminals has an excess
// (flags[0]) or a deficit (flags[1]); the repair's check after each phase.
//   excess : V, per vertex (long long)
//   s, t   : the terminals, skipped; with `clear` their excesses are set
//            to 0 (they mean nothing to the repair)
//   flags  : 2, out (the caller zeroes them)
// Thread mapping: one thread per vertex (grid-stride).  Race: benign,
// every writer of a flag stores 1.
extern "C" __global__ void gpumatch_dyn_signs(
    long long V, long long* excess, long long s, long long t, int clear, int* flags)
{
    bool pos = false, neg = false;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride) {
        if (v == s || v == t) {
            if (clear) excess[v] = 0;
            continue;
        }
        const long long e = excess[v];
        pos |= e > 0;
        neg |= e < 0;
    }
    if (__syncthreads_or(pos) && threadIdx.x == 0) flags[0] = 1;
    if (__syncthreads_or(neg) && threadIdx.x == 0) flags[1] = 1;
}

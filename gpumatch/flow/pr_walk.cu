// @prepend flow/pr_common.cuh
// Excess walks of the push-relabel maximum flow: unwind (back to the source along
// the arcs that brought the flow) and walk (one step down a path), for the dynamic solver.
// The shared notation, device helpers and tuning macros are in
// flow/pr_common.cuh, prepended to this file by gpumatch/_cuda.py.


// gpumatch_pr_unwind_rcsr: send excess back to `source` along the arcs that
// brought it (flow cancelling), as far as it takes.  Each round, every
// listed vertex x takes its whole excess and cancels as much flow on its
// in-arcs u -> x, in order, handing the excess to the tails u; a tail whose
// excess turns positive is listed for the next round.  As long as no arc
// comes from `other`, a vertex's inflow is at least its excess, so every
// round places all of it and the excess only moves closer to `source`
// along the flow's paths: rounds = the longest path walked (a flow cycle
// is walked until its flow is used up; `max_rounds` bounds that).  On a
// repair's network this returns excess of the source side of a kept cut
// to the source without crossing the cut (arcs from the sink side into
// the source side carry no flow), and on the transposed network it
// cancels deficits of the sink side towards the sink.
//   flow, in_indptr, in_indices, in_to_out : as in gpumatch_pr_return_rcsr
//   buf0, buf1 : V each; round r lists buf[r % 2] (length cnt[r % 2]) and
//                appends to buf[(r + 1) % 2]; buf0 / cnt[0] hold the first list
//                (distinct vertices, neither terminal)
//   cnt        : 2 list lengths (device)
//   excess     : V (atomic)
//   source, other : the terminal that takes the excess, the one whose arcs
//                are never cancelled (what only such an arc could take stays)
//   max_rounds : rounds at most
//   seen, mark : V; a vertex that has handed excess on in this call has
//                seen == mark.  In-arcs from vertices not seen go first: a
//                flow cycle (GENRMF's anti-parallel arcs both carry flow)
//                would otherwise hand the excess round it, a little of the
//                cycle's flow per lap
//   state      : 2, out: rounds run and the length of the list left
// Thread mapping: ONE block; a warp per listed vertex, block-stride, two
// barriers per round.  The warp reads 32 in-arcs at a time (their tails,
// flows and seen marks at once, where one thread per vertex read them one
// after the other: ~8 us a round on an H100, ~1 000 rounds on RLG) and
// hands out the excess in the order above by a prefix sum of the flows.
// Races: the flow of an arc u -> x is written only by x's warp; `seen` is
// a hint (a stale read only changes the order of the arcs); excess of a
// listed x is taken by an atomic exchange, so what other warps add to it
// before the exchange goes along, and what they add after it lists x once
// more (the 0 -> positive transition is seen by exactly one adder, so a
// list never holds a vertex twice).
extern "C" __global__ void __launch_bounds__(1024) gpumatch_pr_unwind_rcsr(
    i64* flow, const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out, idx_t* buf0, idx_t* buf1, unsigned long long* cnt, i64* excess,
    long long source, long long other, long long max_rounds, int* seen, int mark, long long* state)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    const unsigned warp = threadIdx.x / GPUMATCH_WARP, warps = blockDim.x / GPUMATCH_WARP;
    long long r = 0;
    unsigned long long size = *((volatile unsigned long long*)cnt);
    while (r < max_rounds && size > 0ull) {
        const idx_t* list = (r & 1) ? buf1 : buf0;
        idx_t* next = (r & 1) ? buf0 : buf1;
        unsigned long long* next_count = cnt + ((r + 1) & 1);
        // last read at the end of round r - 2, two barriers ago
        if (threadIdx.x == 0) *next_count = 0ull;
        __syncthreads();
        for (unsigned long long i = warp; i < size; i += warps) {
            const idx_t x = list[i];
            i64 e = 0;
            if (lane == 0) e = (i64)atomicExch((u64*)(excess + x), 0ull);
            e = __shfl_sync(GPUMATCH_FULL_MASK, e, 0);
            if (e <= 0) {
                if (lane == 0 && e < 0) gm_add(excess + x, e);
                continue;
            }
            if (lane == 0) seen[x] = mark;
            const ofs_t jb = in_indptr[x], je = in_indptr[x + 1];
            for (int pass = 0; pass < 2 && e > 0; ++pass) {
                for (ofs_t j0 = jb; j0 < je && e > 0; j0 += GPUMATCH_WARP) {
                    const ofs_t j = j0 + lane;
                    idx_t u = 0;
                    ofs_t k = 0;
                    i64 f = 0;
                    if (j < je) {
                        u = in_indices[j];
                        k = in_to_out[j];
                        if ((long long)u != other && ((seen[u] == mark) == (pass == 1))) f = flow[k];
                        if (f < 0) f = 0;
                    }
                    // inclusive prefix sum of the flows, in slot order
                    i64 incl = f;
                    for (int sh = 1; sh < GPUMATCH_WARP; sh <<= 1) {
                        const i64 o = __shfl_up_sync(GPUMATCH_FULL_MASK, incl, sh);
                        if (lane >= sh) incl += o;
                    }
                    const i64 before = incl - f;
                    i64 m = e - before;
                    m = m < 0 ? 0 : (m > f ? f : m);
                    if (m > 0) {
                        flow[k] -= m;
                        const i64 old = gm_add(excess + u, m);
                        if ((long long)u != source && old <= 0 && old + m > 0) next[gm_append(next_count)] = u;
                    }
                    const i64 total = __shfl_sync(GPUMATCH_FULL_MASK, incl, GPUMATCH_WARP - 1);
                    e -= total < e ? total : e;
                }
            }
            if (lane == 0 && e > 0) gm_add(excess + x, e);   // only arcs from `other` were left: stays
        }
        __syncthreads();
        size = *((volatile unsigned long long*)next_count);
        ++r;
    }
    if (threadIdx.x == 0) { state[0] = r; state[1] = (long long)size; }
}

// gpumatch_pr_walk_rcsr: carry the excess of each listed vertex down ONE
// path of admissible arcs, all the way in one launch (reverse CSR).  Right
// after a relabel the heights are exact distances to the targets, and a
// discharge step moves excess one arc per launch: a vertex hundreds of
// levels from its target needs hundreds of steps (with relabels between
// them), where a walk needs one launch whose latency is a few loads per arc.
//   indptr .. in_to_out : as in gpumatch_pr_discharge_rcsr
//   height     : V, labels (read only: a walk never relabels)
//   excess     : V (atomic); the carrier of x takes x's excess, leaves at
//                each vertex what the next arc cannot take, and on arrival
//                at y takes back only what y's own deficit did not absorb
//   work, n    : the vertices whose excess is carried (distinct, neither
//                terminal, height < hlimit)
//   target, other : terminals; a carrier that reaches one leaves its load
//   max_steps  : arcs per carrier at most
// Thread mapping: one warp per carrier, grid-stride over the list.  The
// lanes scan the carrier's slots (out-arcs, then in-arcs) 32 at a time for
// the admissible arc (residual > 0, lower neighbour) of largest residual,
// the first slot on ties; lane 0 claims min(load, residual) on it with a
// compare-and-swap loop on the arc's flow.  Each arc lowers the height by
// one, so a walk ends within its start's height.  Races: heights do not
// change; two carriers at one vertex may pick one arc and the CAS serves
// them in turn (one that gets nothing leaves its load there); the two ends
// of an arc never claim it together (each end would need the lower
// height); excess changes only by atomics, and a carrier takes back at most
// the positive part of what its own add made (over all adds at a vertex
// these telescope, so a vertex never goes below its own deficit and keeps
// its own excess).
extern "C" __global__ void gpumatch_pr_walk_rcsr(
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices,
    const i64* __restrict__ cap, i64* flow,
    const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out,
    const int* __restrict__ height, i64* excess,
    const idx_t* __restrict__ work, long long n, long long target, long long other, int max_steps)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / GPUMATCH_WARP;
    const long long stride = ((long long)gridDim.x * blockDim.x) / GPUMATCH_WARP;
    for (long long w = first; w < n; w += stride) {
        idx_t x = work[w];
        i64 load = 0;
        if (lane == 0) load = (i64)atomicExch((u64*)(excess + x), 0ull);
        load = __shfl_sync(GPUMATCH_FULL_MASK, load, 0);
        if (load <= 0) {
            if (lane == 0 && load < 0) gm_add(excess + x, load);
            continue;
        }
        for (int step = 0; step < max_steps && load > 0; ++step) {
            const int hx = height[x];
            const ofs_t ob = indptr[x], odeg = indptr[x + 1] - ob;
            const ofs_t ib = in_indptr[x], deg = odeg + (in_indptr[x + 1] - ib);
            i64 best = 0;
            long long slot = -1;
            for (ofs_t base = 0; base < deg; base += GPUMATCH_WARP) {
                const ofs_t j = base + lane;
                if (j >= deg) break;
                i64 r;
                idx_t v;
                if (j < odeg) {
                    r = cap[ob + j] - __ldcg(flow + ob + j);
                    v = indices[ob + j];
                } else {
                    r = __ldcg(flow + in_to_out[ib + j - odeg]);
                    v = in_indices[ib + j - odeg];
                }
                if (r > best && height[v] < hx) { best = r; slot = j; }
            }
#pragma unroll
            for (int off = GPUMATCH_WARP / 2; off > 0; off >>= 1) {
                const i64 b2 = __shfl_xor_sync(GPUMATCH_FULL_MASK, best, off);
                const long long s2 = __shfl_xor_sync(GPUMATCH_FULL_MASK, slot, off);
                if (b2 > best || (b2 == best && s2 >= 0 && (slot < 0 || s2 < slot))) { best = b2; slot = s2; }
            }
            if (slot < 0) break;                  // no admissible arc: the load stays at x
            i64 next_load = 0;
            idx_t y = 0;
            if (lane == 0) {
                i64 got;
                if (slot < odeg) {
                    const ofs_t p = ob + (ofs_t)slot;
                    y = indices[p];
                    got = walk_claim(flow + p, cap[p], true, load);
                } else {
                    const ofs_t q = ib + (ofs_t)slot - odeg;
                    y = in_indices[q];
                    got = walk_claim(flow + in_to_out[q], 0, false, load);
                }
                if (load - got > 0) gm_add(excess + x, load - got);
                if (got > 0) {
                    const i64 old = gm_add(excess + y, got);
                    if ((long long)y != target && (long long)y != other) {
                        const i64 pos = old + got;           // what y holds now
                        next_load = pos < got ? (pos > 0 ? pos : 0) : got;
                        if (next_load > 0) gm_add(excess + y, -next_load);
                    }
                }
            }
            load = __shfl_sync(GPUMATCH_FULL_MASK, next_load, 0);
            x = __shfl_sync(GPUMATCH_FULL_MASK, y, 0);
        }
        if (lane == 0 && load > 0) gm_add(excess + x, load);
    }
}

// CUDA kernel of the detour pass of a dynamic max-flow repair
// (gpumatch/flow/_detour.py; the NumPy twin is _detour._Numpy).
//
// A decrease of arc u -> v below its flow leaves a *pair*: excess at the
// tail u, the same deficit at the head v.  The pass re-routes the flow
// round the arc: per pair, a bidirectional BFS over the residual network
// (forward from u, backward into v) inside the pair's side of the kept
// minimum cut, then a push along the paths it found, and again, until the
// pair is repaired or has no path left.  Unlike the pair passes of
// paths.cu, whose trees are vertex-disjoint and cut each other off, every
// pair searches on its own: one block per pair, with its own visited sets
// (hash tables in global memory), so that pairs that share a
// neighbourhood all find their detours.  One launch serves every open
// pair:
//
//   gpumatch_dt_route   a block takes the next pair from a counter and
//                       loops over it: search (up to DT_MAX_MEETS paths
//                       from the level where the two sides first meet),
//                       push each path (warp 0), search again; a search
//                       without a path lowers the pair's threshold (see
//                       below) and searches again, and one at threshold 1
//                       drops the pair.  A pair whose paths were all
//                       taken by other pairs meanwhile, or that used its
//                       `max_searches`, is left open for the next launch.
//
// Network: reverse CSR (gpumatch/flow/pr.cu), steps coded as in paths.cu:
// p >= 0 is out-arc p (residual cap[p] - flow[p]), -(k + 1) cancels the
// flow of arc k (residual flow[k]).
//
// Per block (stride b = blockIdx.x), per side d (0 forward, 1 backward):
// the entries of the BFS in the order found, ev (vertex), ep (the entry it
// was reached from: its parent forward, its next vertex towards the head
// backward; -1 for the root) and ec (the step between them), H entries at
// most; the levels are contiguous ranges of entries, except the last entry,
// H - 1, which is the side's terminal (the source on the source side, the
// sink on the other) once the side reaches it.  A search may meet there (a
// pair's excess goes into the terminal and as much comes out of it, which
// leaves the flow's value alone) but never grows from it: a terminal's
// arcs would flood the search, and it is in no level.  A hash table of 2H
// slots maps a vertex to its entry: key = stamp << 32 | vertex, where the
// block's stamp grows with every search (keys of older stamps read as
// empty, so the tables are never cleared); hidx holds the entry (-1 while
// none).  Only one side grows per level (the shorter frontier), and a new
// vertex of that side is looked up in the other side's table, which does
// not change during the level: the first level with a meeting ends the
// search, and the paths through its meetings are simple (a vertex on both
// halves of a path would have met a level earlier).  The paths' steps go
// to the block's part of `sbuf` (`plim` steps a path; a longer path is
// not pushed).
//
// Thresholds: a search takes only the arcs whose residual is at least the
// pair's threshold (at first its excess: one path would do), capped by
// what the pair still has to move.  After a search without a path the
// threshold falls `scale` times, and where a side of the search ran out
// of vertices (without reaching its terminal) to at most the largest
// residual below the threshold of an arc out of that side's vertices:
// any path over arcs of more would have left that side through one of
// its arcs.  Where that residual is 0, no path is left at any threshold
// and the pair drops out at once.
//
// Pushes: warp 0 reads a path's bottleneck, reserves that much of the
// tail's excess and of the head's deficit (compare-and-swap loops: pairs
// may share a tail or a head), then adds it to the flow of every arc of
// the path with atomics, each lane checking that its arcs stay within
// their capacity (or above 0 when cancelling); if one does not (another
// pair took the residual since the search read it), the warp takes all of
// its adds back and returns the reservations.  An arc may so hold more
// than its capacity for a moment: a search that reads it then sees no
// residual, and a reservation that meets it fails and is taken back too.
//
// Benign races: searches read flow (through L2, __ldcg: other blocks'
// pushes change it during the launch) and excess as they find them;
// inserts race on the hash slots (atomicCAS) and on the shared entry
// counter.  Every decision of a block (open, closed, threshold) is taken
// by thread 0 from one read and passed on through shared memory.

#define DT_BLOCK 1024
#define DT_TILE 8
#define DT_MAX_MEETS 32
#define DT_INF 0x7fffffffffffffffll

// stats (long long): 0 path steps pushed, 1 searches run, 2 searches that
// found a path, 3 searches whose paths moved flow, 4 pairs dropped (no
// path within the limits), 5 paths pushed, 6 amount pushed, 7 pairs left
// open for the next launch, 8 amount pushed after a pair of the launch
// dropped (as the pushing block saw it), 9 the next pair (a work counter,
// 0 at the launch)
#define DT_STEPS 0
#define DT_SEARCHED 1
#define DT_FOUND 2
#define DT_WON 3
#define DT_DROPPED 4
#define DT_PATHS 5
#define DT_AMOUNT 6
#define DT_OPEN 7
#define DT_LATE 8
#define DT_NEXT 9

// a block's verdict on its pair after a search (shared `verdict`)
#define DT_GO 0        // search again
#define DT_CLOSED 1    // nothing left to move
#define DT_DROP 2      // no path
#define DT_OPEN_NEXT 3 // left open for the next launch

__device__ __forceinline__ unsigned dt_hash(unsigned v) { return v * 0x9E3779B1u; }

// Insert v (stamp) into a table of mask + 1 slots: the slot, or -1 when v
// is there already.
__device__ __forceinline__ int dt_insert(u64* keys, unsigned mask, u64 stamp, unsigned v)
{
    const u64 mine = (stamp << 32) | (u64)v;
    unsigned h = dt_hash(v) & mask;
    for (;;) {
        const u64 old = ((volatile u64*)keys)[h];
        if ((old >> 32) == stamp) {
            if ((unsigned)old == v) return -1;
            h = (h + 1) & mask;
            continue;
        }
        if (atomicCAS(keys + h, old, mine) == old) return (int)h;
        // taken meanwhile: look at the same slot again
    }
}

// The entry of v in a table that does not change meanwhile, or -1.
__device__ __forceinline__ int dt_find(const u64* keys, const int* hidx, unsigned mask, u64 stamp, unsigned v)
{
    unsigned h = dt_hash(v) & mask;
    for (;;) {
        const u64 k = keys[h];
        if ((k >> 32) != stamp) return -1;
        if ((unsigned)k == v) return hidx[h];
        h = (h + 1) & mask;
    }
}

__device__ __forceinline__ i64 dt_resid(const i64* cap, const i64* flow, long long code)
{
    return code >= 0 ? cap[code] - __ldcg(flow + code) : __ldcg(flow - code - 1);
}

// Take up to `want` from *a (> 0 part only): the amount taken.
__device__ __forceinline__ long long dt_take(long long* a, long long want, long long sign)
{
    for (;;) {
        const long long old = ((volatile long long*)a)[0];
        const long long got = min(want, sign * old);
        if (got <= 0) return 0;
        if ((long long)atomicCAS((u64*)a, (u64)old, (u64)(old - sign * got)) == old) return got;
    }
}

__device__ __forceinline__ long long dt_warp_min(long long x)
{
    for (int sh = 16; sh > 0; sh >>= 1) x = min(x, __shfl_xor_sync(GPUMATCH_FULL_MASK, x, sh));
    return x;
}

__device__ __forceinline__ long long dt_warp_max(long long x)
{
    for (int sh = 16; sh > 0; sh >>= 1) x = max(x, __shfl_xor_sync(GPUMATCH_FULL_MASK, x, sh));
    return x;
}

// Warp 0: push `dd` along the path of `len` steps P, all or nothing (see
// the header); returns whether it went through.
__device__ bool dt_push(const i64* cap, i64* flow, const long long* P, int len, long long dd)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    int done = 0;
    bool bad = false;
    for (int base = 0; base < len; base += GPUMATCH_WARP) {
        const int q = base + lane;
        bool ok = true;
        if (q < len) {
            const long long code = P[q];
            if (code >= 0) ok = gm_add(flow + code, dd) + dd <= cap[code];
            else ok = gm_add(flow - code - 1, -dd) - dd >= 0;
        }
        done = min(base + GPUMATCH_WARP, len);
        if (__any_sync(GPUMATCH_FULL_MASK, !ok)) { bad = true; break; }
    }
    if (bad) {
        for (int q = lane; q < done; q += GPUMATCH_WARP) {
            const long long code = P[q];
            if (code >= 0) gm_add(flow + code, -dd);
            else gm_add(flow - code - 1, dd);
        }
    }
    __syncwarp();
    return !bad;
}

// Block per pair (each block takes the next pair from stats[DT_NEXT]),
// DT_BLOCK threads: the pair's searches and pushes (see the header).
//   state : per pair, 0 open, 1 closed (repaired or dropped)
//   thr   : per pair, its threshold (0: not searched yet); kept for the
//           next launch when the pair is left open
//   sbuf  : gridDim.x * meets * plim path steps
extern "C" __global__ void __launch_bounds__(DT_BLOCK) gpumatch_dt_route(
    const ofs_t* __restrict__ indptr, const idx_t* __restrict__ indices, const i64* __restrict__ cap,
    i64* flow, const ofs_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const ofs_t* __restrict__ in_to_out, const unsigned char* __restrict__ side, long long s, long long t,
    const long long* __restrict__ tails, const long long* __restrict__ heads, long long npairs,
    long long* excess, int* state, long long* thr, int scale, int max_searches, long long* sbuf, int plim,
    u64* keys, int* hidx, int* ev, int* ep, long long* ec,
    unsigned* stamps, int H, int max_levels, int meets, long long* stats)
{
    __shared__ int lo[2], hi[2], cnt[2], lev[2], term[2], nmeet, over, fail, verdict;
    __shared__ int mf[DT_MAX_MEETS], mb[DT_MAX_MEETS], plen[DT_MAX_MEETS];
    __shared__ unsigned long long rmax[2];
    __shared__ u64 stamp;
    __shared__ long long next, th_s;
    const int tid = threadIdx.x, lane = tid & (GPUMATCH_WARP - 1);
    const unsigned HS = 2u * (unsigned)H, hmask = HS - 1u;
    u64* K[2] = {keys + (size_t)blockIdx.x * 2 * HS, keys + ((size_t)blockIdx.x * 2 + 1) * HS};
    int* X[2] = {hidx + (size_t)blockIdx.x * 2 * HS, hidx + ((size_t)blockIdx.x * 2 + 1) * HS};
    int* EV[2] = {ev + (size_t)blockIdx.x * 2 * H, ev + ((size_t)blockIdx.x * 2 + 1) * H};
    int* EP[2] = {ep + (size_t)blockIdx.x * 2 * H, ep + ((size_t)blockIdx.x * 2 + 1) * H};
    long long* EC[2] = {ec + (size_t)blockIdx.x * 2 * H, ec + ((size_t)blockIdx.x * 2 + 1) * H};
    long long* SB = sbuf + (size_t)blockIdx.x * meets * plim;
    for (;;) {
        if (tid == 0) next = (long long)atomicAdd((unsigned long long*)(stats + DT_NEXT), 1ull);
        __syncthreads();
        const long long i = next;
        __syncthreads();   // read by all before thread 0 takes the next one
        if (i >= npairs) break;
        if (state[i] != 0) continue;    // (written by this block only: uniform)
        const long long u = tails[i], v = heads[i];
        const unsigned char sd = side[u];
        long long th = thr[i];          // thread 0's copy decides
        int searches = 0;
        for (;;) {
            if (tid == 0) {
                const long long need = min(((volatile long long*)excess)[u], -((volatile long long*)excess)[v]);
                verdict = need <= 0 ? DT_CLOSED : searches >= max_searches ? DT_OPEN_NEXT : DT_GO;
                if (verdict == DT_GO) {
                    if (th <= 0) th = scale > 1 ? need : 1;
                    th_s = min(th, need);
                    searches++;
                    stamp = (u64)(++stamps[blockIdx.x]);
                    for (int d = 0; d < 2; d++) {
                        const unsigned r = (unsigned)(d == 0 ? u : v);
                        const int h = dt_insert(K[d], hmask, stamp, r);
                        X[d][h] = 0;
                        EV[d][0] = (int)r;
                        EP[d][0] = -1;
                        EC[d][0] = 0;
                        lo[d] = 0;
                        hi[d] = 1;
                        cnt[d] = 1;
                        lev[d] = 0;
                        term[d] = 0;
                        rmax[d] = 0ull;
                    }
                    nmeet = over = fail = 0;
                    atomicAdd((unsigned long long*)(stats + DT_SEARCHED), 1ull);
                }
            }
            __syncthreads();
            if (verdict != DT_GO) break;
            const long long th_now = th_s;
            long long rl0 = 0, rl1 = 0;     // largest residual below the threshold, per side
            for (;;) {
                // a side ran out: no path, unless it reached its terminal, where
                // the other side may still meet it
                const int n0 = hi[0] - lo[0], n1 = hi[1] - lo[1];
                if ((n0 == 0 && (n1 == 0 || !term[0])) || (n1 == 0 && !term[1])) { fail = 1; break; }
                const int d = n0 == 0 ? 1 : n1 == 0 ? 0 : (n0 <= n1 ? 0 : 1);
                if (lev[d] >= max_levels) { fail = 2; break; }
                const int o = 1 - d;
                for (int e = lo[d] + tid / DT_TILE; e < hi[d]; e += DT_BLOCK / DT_TILE) {
                    const long long x = EV[d][e];
                    const int tl = tid % DT_TILE;
                    // forward: x -> w along out-arc p or by cancelling in-arc k;
                    // backward: w -> x along in-arc k of x or by cancelling out-arc p of x
                    const long long a0 = indptr[x], a1 = indptr[x + 1], b0 = in_indptr[x], b1 = in_indptr[x + 1];
                    const long long n_out = a1 - a0, n_all = n_out + (b1 - b0);
                    for (long long q = tl; q < n_all; q += DT_TILE) {
                        long long w, code;
                        i64 res;
                        if (q < n_out) {
                            const long long p = a0 + q;
                            const i64 f = __ldcg(flow + p);
                            res = d == 0 ? cap[p] - f : f;
                            w = indices[p];
                            code = d == 0 ? p : -p - 1;
                        } else {
                            const long long j = b0 + q - n_out, k = in_to_out[j];
                            const i64 f = __ldcg(flow + k);
                            res = d == 0 ? f : cap[k] - f;
                            w = in_indices[j];
                            code = d == 0 ? -k - 1 : k;
                        }
                        if (res < th_now) {
                            // (only a residual above the side's largest so far needs the side's check)
                            if (res > (d == 0 ? rl0 : rl1) && side[w] == sd) {
                                if (d == 0) rl0 = res; else rl1 = res;
                            }
                            continue;
                        }
                        if (side[w] != sd) continue;
                        // the side's terminal takes the last entry, outside the
                        // levels: a meeting point, never grown from
                        const bool end = w == s || w == t;
                        if (!end && ((volatile int*)cnt)[d] >= H - 1) { over = 1; continue; }
                        const int h = dt_insert(K[d], hmask, stamp, (unsigned)w);
                        if (h < 0) continue;
                        const int idx = end ? H - 1 : atomicAdd(&cnt[d], 1);
                        if (idx >= H - 1 && !end) { X[d][h] = -1; over = 1; continue; }
                        if (end) term[d] = 1;
                        EV[d][idx] = (int)w;
                        EP[d][idx] = e;
                        EC[d][idx] = code;
                        X[d][h] = idx;
                        const int oe = dt_find(K[o], X[o], hmask, stamp, (unsigned)w);
                        if (oe >= 0) {
                            const int m = atomicAdd(&nmeet, 1);
                            if (m < meets) {
                                mf[m] = d == 0 ? idx : oe;
                                mb[m] = d == 0 ? oe : idx;
                            }
                        }
                    }
                }
                __syncthreads();
                if (tid == 0) {
                    lev[d] += 1;
                    lo[d] = hi[d];
                    hi[d] = min(cnt[d], H - 1);
                }
                __syncthreads();
                if (nmeet > 0) break;
                if (over) { fail = 2; break; }
            }
            __syncthreads();
            if (nmeet == 0) {
                // no path: the residuals below the threshold, for the next one
                rl0 = dt_warp_max(rl0);
                rl1 = dt_warp_max(rl1);
                if (lane == 0) {
                    if (rl0 > 0) atomicMax(&rmax[0], (unsigned long long)rl0);
                    if (rl1 > 0) atomicMax(&rmax[1], (unsigned long long)rl1);
                }
                __syncthreads();
                if (tid == 0) {
                    long long bound = -1;
                    if (fail == 1) {
                        long long b = DT_INF;
                        if (hi[0] == lo[0] && !term[0]) b = min(b, (long long)rmax[0]);
                        if (hi[1] == lo[1] && !term[1]) b = min(b, (long long)rmax[1]);
                        bound = b == DT_INF ? -1 : b;
                    }
                    long long nxt = th_now > 1 ? max(th_now / scale, 1ll) : 0;
                    if (bound >= 0) nxt = min(nxt, bound);
                    if (nxt <= 0) verdict = DT_DROP;
                    else th = nxt;
                }
                __syncthreads();
                if (verdict != DT_GO) break;
                continue;
            }
            // the paths: forward half from u to the meeting, backward half on to v
            const int nm = min(nmeet, meets);
            if (tid < nm) {
                int a = 0, b = 0;
                for (int e = mf[tid]; EP[0][e] >= 0; e = EP[0][e]) a++;
                for (int e = mb[tid]; EP[1][e] >= 0; e = EP[1][e]) b++;
                long long* P = SB + (size_t)tid * plim;
                if (a + b <= plim) {
                    int pos = a - 1;
                    for (int e = mf[tid]; EP[0][e] >= 0; e = EP[0][e]) P[pos--] = EC[0][e];
                    pos = a;
                    for (int e = mb[tid]; EP[1][e] >= 0; e = EP[1][e]) P[pos++] = EC[1][e];
                    plen[tid] = a + b;
                } else {
                    plen[tid] = -1;
                }
            }
            __syncthreads();
            if (tid < GPUMATCH_WARP) {
                long long amount = 0, steps = 0;
                int pushed = 0, fits = 0;
                for (int m = 0; m < nm; m++) {
                    const int len = plen[m];
                    if (len < 0) continue;
                    fits++;
                    const long long* P = SB + (size_t)m * plim;
                    long long dm = DT_INF;
                    for (int q = lane; q < len; q += GPUMATCH_WARP) dm = min(dm, dt_resid(cap, flow, P[q]));
                    dm = dt_warp_min(dm);
                    if (dm <= 0) continue;
                    long long dd = 0;
                    if (lane == 0) {
                        const long long got = dt_take(excess + u, dm, 1);
                        dd = dt_take(excess + v, got, -1);
                        if (dd < got) gm_add(excess + u, got - dd);
                    }
                    dd = __shfl_sync(GPUMATCH_FULL_MASK, dd, 0);
                    if (dd <= 0) break;
                    if (dt_push(cap, flow, P, len, dd)) {
                        amount += dd;
                        steps += len;
                        pushed++;
                    } else if (lane == 0) {
                        gm_add(excess + u, dd);
                        gm_add(excess + v, -dd);
                    }
                }
                if (lane == 0) {
                    atomicAdd((unsigned long long*)(stats + DT_FOUND), 1ull);
                    if (pushed) {
                        atomicAdd((unsigned long long*)(stats + DT_WON), 1ull);
                        atomicAdd((unsigned long long*)(stats + DT_PATHS), (unsigned long long)pushed);
                        atomicAdd((unsigned long long*)(stats + DT_AMOUNT), (unsigned long long)amount);
                        atomicAdd((unsigned long long*)(stats + DT_STEPS), (unsigned long long)steps);
                        if (((volatile long long*)stats)[DT_DROPPED] > 0)
                            atomicAdd((unsigned long long*)(stats + DT_LATE), (unsigned long long)amount);
                    }
                    // nothing moved: every path was too long (drop), or taken
                    // by other pairs since the search (the next launch)
                    verdict = pushed ? DT_GO : fits == 0 ? DT_DROP : DT_OPEN_NEXT;
                }
            }
            __syncthreads();
            if (verdict != DT_GO) break;
        }
        if (tid == 0) {
            if (verdict == DT_OPEN_NEXT) {
                thr[i] = th;
                atomicAdd((unsigned long long*)(stats + DT_OPEN), 1ull);
            } else {
                state[i] = 1;
                if (verdict == DT_DROP) atomicAdd((unsigned long long*)(stats + DT_DROPPED), 1ull);
            }
        }
        __syncthreads();   // the shared state is the next pair's
    }
}

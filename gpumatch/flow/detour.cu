// CUDA kernels of the detour pass of a dynamic max-flow repair
// (gpumatch/flow/_detour.py; the NumPy twin is _detour._Numpy).
//
// A decrease of arc u -> v below its flow leaves a *pair*: excess at the
// tail u, the same deficit at the head v.  The pass re-routes the flow
// round the arc: per pair, a bidirectional BFS over the residual network
// (forward from u, backward into v) inside the pair's side of the kept
// minimum cut, then an augment along the paths it found.  Unlike the pair
// passes of paths.cu, whose trees are vertex-disjoint and cut each other
// off, every pair searches on its own: one block per pair, with its own
// visited sets (hash tables in global memory), so that pairs that share a
// neighbourhood all find their detours.  A round is three launches:
//
//   gpumatch_dt_search   one block per open pair (a block takes the next
//                        pair from a counter when done with one, so that
//                        the long searches spread over the blocks): the
//                        BFS, up to DT_MAX_MEETS paths from the level where
//                        the two sides first meet, written to the path
//                        buffer;
//   gpumatch_dt_claim    one thread per path step: each arc goes to the
//                        lowest pair of the round that uses it (atomicMax
//                        of a key that grows with the round);
//   gpumatch_dt_augment  one warp per pair: a pair that holds every arc of
//                        its paths pushes along them, one after the other,
//                        the bottleneck capped by what it can reserve of
//                        its tail's excess and its head's deficit.
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
// halves of a path would have met a level earlier).
//
// Benign races: the search kernel only reads flow and excess; inserts
// race on the hash slots (atomicCAS) and on the shared entry counter.
// The augment kernel's warps write the flow of arcs they alone hold this
// round (plain writes) and reserve excess with atomicCAS loops (pairs may
// share a tail or a head).

#define DT_BLOCK 1024
#define DT_TILE 8
#define DT_MAX_MEETS 32
#define DT_INF 0x7fffffffffffffffll
#define DT_SKIP (-0x7fffffffffffffffll - 1)   // a pbuf step of a path that did not fit

// stats (long long): 0 path steps written, 1 pairs searched, 2 pairs that
// found a path, 3 pairs that held their arcs, 4 pairs dropped (no path
// within the limits), 5 paths pushed, 6 amount pushed, 7 pairs open after
// the round (an upper bound: excess read while other warps still reserve),
// 8 the search kernel's next pair (a work counter, 0 at the launch)
#define DT_STEPS 0
#define DT_SEARCHED 1
#define DT_FOUND 2
#define DT_WON 3
#define DT_DROPPED 4
#define DT_PATHS 5
#define DT_AMOUNT 6
#define DT_OPEN 7
#define DT_NEXT 8

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
    return code >= 0 ? cap[code] - flow[code] : flow[-code - 1];
}

// Block per pair (each block takes the next pair from stats[DT_NEXT]),
// DT_BLOCK threads: the search.  Writes npaths[i] (-1: not searched,
// closed; 0: no path, the pair is dropped; else the paths written at
// poff[i * meets + m], length plen[...], steps in pbuf with their pair in
// ppair).
extern "C" __global__ void __launch_bounds__(DT_BLOCK) gpumatch_dt_search(
    const idx_t* __restrict__ indptr, const idx_t* __restrict__ indices, const i64* __restrict__ cap,
    const i64* __restrict__ flow, const idx_t* __restrict__ in_indptr, const idx_t* __restrict__ in_indices,
    const idx_t* __restrict__ in_to_out, const unsigned char* __restrict__ side, long long s, long long t,
    const long long* __restrict__ tails, const long long* __restrict__ heads, long long npairs,
    const long long* __restrict__ excess, int* state, long long* thr, int scale, int* npaths, long long* poff,
    int* plen,
    long long* pbuf, int* ppair, long long pcap, u64* keys, int* hidx, int* ev, int* ep, long long* ec,
    unsigned* stamps, int H, int max_levels, int meets, long long* stats)
{
    __shared__ int lo[2], hi[2], cnt[2], lev[2], term[2], nmeet, over, fail, stored;
    __shared__ int mf[DT_MAX_MEETS], mb[DT_MAX_MEETS];
    __shared__ u64 stamp;
    __shared__ long long next;
    const int tid = threadIdx.x;
    const unsigned HS = 2u * (unsigned)H, hmask = HS - 1u;
    u64* K[2] = {keys + (size_t)blockIdx.x * 2 * HS, keys + ((size_t)blockIdx.x * 2 + 1) * HS};
    int* X[2] = {hidx + (size_t)blockIdx.x * 2 * HS, hidx + ((size_t)blockIdx.x * 2 + 1) * HS};
    int* EV[2] = {ev + (size_t)blockIdx.x * 2 * H, ev + ((size_t)blockIdx.x * 2 + 1) * H};
    int* EP[2] = {ep + (size_t)blockIdx.x * 2 * H, ep + ((size_t)blockIdx.x * 2 + 1) * H};
    long long* EC[2] = {ec + (size_t)blockIdx.x * 2 * H, ec + ((size_t)blockIdx.x * 2 + 1) * H};
    for (;;) {
        if (tid == 0) next = (long long)atomicAdd((unsigned long long*)(stats + DT_NEXT), 1ull);
        __syncthreads();
        const long long i = next;
        __syncthreads();   // read by all before thread 0 takes the next one
        if (i >= npairs) break;
        const long long u = tails[i], v = heads[i];
        // every thread reads the same values: the branch is uniform
        const long long need = min(excess[u], -excess[v]);
        if (state[i] != 0 || need <= 0) {
            if (tid == 0) {
                npaths[i] = -1;
                state[i] = 1;
            }
            continue;
        }
        const unsigned char sd = side[u];
        // the residual the search asks of its arcs: the pair's excess at
        // first (one path would do), less after each round without a path
        const long long th = thr[i] > 0 ? thr[i] : (scale > 1 ? need : 1);
        if (tid == 0) {
            stamp = (u64)(++stamps[blockIdx.x]);
            thr[i] = th;
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
            }
            nmeet = over = fail = stored = 0;
            atomicAdd((unsigned long long*)(stats + DT_SEARCHED), 1ull);
        }
        __syncthreads();
        for (;;) {
            // a side ran out: no path, unless it reached its terminal, where
            // the other side may still meet it
            const int n0 = hi[0] - lo[0], n1 = hi[1] - lo[1];
            if ((n0 == 0 && (n1 == 0 || !term[0])) || (n1 == 0 && !term[1])) { fail = 1; break; }
            const int d = n0 == 0 ? 1 : n1 == 0 ? 0 : (n0 <= n1 ? 0 : 1);
            if (lev[d] >= max_levels) { fail = 1; break; }
            const int o = 1 - d;
            for (int e = lo[d] + tid / DT_TILE; e < hi[d]; e += DT_BLOCK / DT_TILE) {
                const long long x = EV[d][e];
                const int lane = tid % DT_TILE;
                // forward: x -> w along out-arc p or by cancelling in-arc k;
                // backward: w -> x along in-arc k of x or by cancelling out-arc p of x
                const long long a0 = indptr[x], a1 = indptr[x + 1], b0 = in_indptr[x], b1 = in_indptr[x + 1];
                const long long n_out = a1 - a0, n_all = n_out + (b1 - b0);
                for (long long q = lane; q < n_all; q += DT_TILE) {
                    long long w, code;
                    if (q < n_out) {
                        const long long p = a0 + q;
                        if ((d == 0 ? cap[p] - flow[p] : flow[p]) < th) continue;
                        w = indices[p];
                        code = d == 0 ? p : -p - 1;
                    } else {
                        const long long j = b0 + q - n_out, k = in_to_out[j];
                        if ((d == 0 ? flow[k] : cap[k] - flow[k]) < th) continue;
                        w = in_indices[j];
                        code = d == 0 ? -k - 1 : k;
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
            if (over) { fail = 1; break; }
        }
        __syncthreads();
        // the paths: forward half from u to the meeting, backward half on to v
        const int nm = min(nmeet, meets);
        if (tid < nm) {
            int a = 0, b = 0;
            for (int e = mf[tid]; EP[0][e] >= 0; e = EP[0][e]) a++;
            for (int e = mb[tid]; EP[1][e] >= 0; e = EP[1][e]) b++;
            const long long at = (long long)atomicAdd((unsigned long long*)(stats + DT_STEPS),
                                                      (unsigned long long)(a + b));
            if (at + a + b <= pcap) {
                int pos = a - 1;
                for (int e = mf[tid]; EP[0][e] >= 0; e = EP[0][e]) {
                    pbuf[at + pos] = EC[0][e];
                    ppair[at + pos] = (int)i;
                    pos--;
                }
                pos = a;
                for (int e = mb[tid]; EP[1][e] >= 0; e = EP[1][e]) {
                    pbuf[at + pos] = EC[1][e];
                    ppair[at + pos] = (int)i;
                    pos++;
                }
                const int m = atomicAdd(&stored, 1);
                poff[i * meets + m] = at;
                plen[i * meets + m] = a + b;
            } else {
                for (long long q = at; q < min(at + a + b, pcap); q++) pbuf[q] = DT_SKIP;
            }
        }
        __syncthreads();
        if (tid == 0) {
            npaths[i] = stored;
            if (stored > 0) atomicAdd((unsigned long long*)(stats + DT_FOUND), 1ull);
        }
        __syncthreads();   // the shared state is the next pair's
    }
}

// Thread per path step (grid-stride up to stats[DT_STEPS], capped at
// pcap): the arc goes to the lowest pair of the round using it.  The steps
// of a path that did not fit in pbuf are DT_SKIP below pcap.
extern "C" __global__ void gpumatch_dt_claim(
    const long long* __restrict__ pbuf, const int* __restrict__ ppair, long long pcap,
    const long long* __restrict__ stats, u64* owner, long long round)
{
    const long long n = min(stats[DT_STEPS], pcap);
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < n; q += (long long)gridDim.x * blockDim.x) {
        const long long code = pbuf[q];
        if (code == DT_SKIP) continue;
        const long long arc = code >= 0 ? code : -code - 1;
        atomicMax(owner + arc, ((u64)round << 32) | (u64)(0x7fffffff - ppair[q]));
    }
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

// Warp per pair (grid-stride): a pair that found paths and holds all their
// arcs pushes along each in turn.  The paths of a search may share arcs
// (a prefix of the forward tree): each bottleneck is read after the
// previous push.
extern "C" __global__ void gpumatch_dt_augment(
    const i64* __restrict__ cap, i64* flow, long long* excess, const long long* __restrict__ tails,
    const long long* __restrict__ heads, long long npairs, int* state, long long* thr, int scale,
    const int* __restrict__ npaths,
    const long long* __restrict__ poff, const int* __restrict__ plen, const long long* __restrict__ pbuf,
    const u64* __restrict__ owner, long long round, int meets, long long* stats)
{
    const int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    const long long warps = ((long long)gridDim.x * blockDim.x) / GPUMATCH_WARP;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / GPUMATCH_WARP; i < npairs; i += warps) {
        const int n = npaths[i];
        if (n < 0) continue;
        if (n == 0) {
            if (lane == 0) {
                if (thr[i] > 1) {   // narrower paths next round
                    thr[i] = max(thr[i] / scale, 1ll);
                    atomicAdd((unsigned long long*)(stats + DT_OPEN), 1ull);
                } else {
                    state[i] = 1;
                    atomicAdd((unsigned long long*)(stats + DT_DROPPED), 1ull);
                }
            }
            continue;
        }
        const u64 key = ((u64)round << 32) | (u64)(0x7fffffff - (int)i);
        bool mine = true;
        for (int m = 0; m < n; m++) {
            const long long o = poff[i * meets + m];
            for (int q = lane; q < plen[i * meets + m]; q += GPUMATCH_WARP) {
                const long long code = pbuf[o + q];
                if (owner[code >= 0 ? code : -code - 1] != key) mine = false;
            }
        }
        const long long u = tails[i], v = heads[i];
        if (__all_sync(GPUMATCH_FULL_MASK, mine)) {
            long long amount = 0, pushed = 0;
            for (int m = 0; m < n; m++) {
                const long long o = poff[i * meets + m];
                const int len = plen[i * meets + m];
                long long dm = DT_INF;
                for (int q = lane; q < len; q += GPUMATCH_WARP) dm = min(dm, dt_resid(cap, flow, pbuf[o + q]));
                for (int sh = 16; sh > 0; sh >>= 1) dm = min(dm, __shfl_xor_sync(GPUMATCH_FULL_MASK, dm, sh));
                long long dd = 0;
                if (lane == 0 && dm > 0) {
                    const long long got = dt_take(excess + u, dm, 1);
                    dd = dt_take(excess + v, got, -1);
                    if (dd < got) atomicAdd((u64*)(excess + u), (u64)(got - dd));
                }
                dd = __shfl_sync(GPUMATCH_FULL_MASK, dd, 0);
                if (dd <= 0) break;
                for (int q = lane; q < len; q += GPUMATCH_WARP) {
                    const long long code = pbuf[o + q];
                    if (code >= 0) flow[code] += dd;
                    else flow[-code - 1] -= dd;
                }
                __syncwarp();
                amount += dd;
                pushed++;
            }
            if (lane == 0) {
                atomicAdd((unsigned long long*)(stats + DT_WON), 1ull);
                atomicAdd((unsigned long long*)(stats + DT_PATHS), (unsigned long long)pushed);
                atomicAdd((unsigned long long*)(stats + DT_AMOUNT), (unsigned long long)amount);
            }
        }
        if (lane == 0 && min(((volatile long long*)excess)[u], -((volatile long long*)excess)[v]) > 0)
            atomicAdd((unsigned long long*)(stats + DT_OPEN), 1ull);
    }
}

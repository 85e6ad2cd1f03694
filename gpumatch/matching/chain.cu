// CUDA kernels of the chain rule: Karp-Sipser's degree-one rule carried
// along chains of vertices of degree two, for every chain at once, by
// pointer jumping.  The host-side driver is chain_rule in
// gpumatch/matching/_driver.py; the NumPy twins (chain_count, chain_init,
// chain_jump, chain_match, and cycle_init, cycle_min, cycle_rank_init,
// cycle_rank, cycle_match) are in gpumatch/matching/_kernels_numpy.py.
//
// Notation (m rows, n columns, as in gpr.cu):
//   rptr, rind : m + 1, nnz   CSR of the graph, row -> its columns
//   cptr, cind : n + 1, nnz   CSC of the graph, column -> its rows
//   mu_row     : m, the column matched to each row, -1 if none
//   mu_col     : n, the row matched to each column, -1 if none
// Vertices are numbered in one range of V = m + n: row u is u, column c is
// m + c.  deg(v) is the length of v's list (the rule runs on an empty
// matching, before the greedy pass), S = { v : deg(v) = 1 or 2 }.
//
// Why: matching a pendant (degree-one) vertex to its only neighbour never
// lowers the maximum matching size.  Along a chain x0 - x1 - x2 - ... whose
// x0 is a pendant and whose other vertices have degree two, the rule
// matches (x0, x1), then x2 has become a pendant, and so on: a permuted
// bidiagonal matrix is matched outright, where augmenting paths and
// push-relabel need a step per vertex of a path of 2n vertices.  Done one
// step at a time this is as serial as the path; here every vertex of S
// learns the two ends of its chain and its distance to each by pointer
// jumping (Wyllie's list ranking, for undirected chains), in
// log2(chain length) rounds, and then its mate from its parity.
//
// Chain records.  For each v in S and each side s (0, 1: the first and the
// second entry of v's list) one 64-bit word P[2v + s]:
//   bits  0..31  far  : a vertex of v's chain on that side
//   bits 32..61  dist : its distance from v (edges of the chain)
//   bit  62      cont : the side of `far` that points away from v
//   bit  63      done : `far` is the end of the chain on that side
// far = CH_CYCLE marks a chain that closes into a cycle (no pendant can
// start it: the cycle kernels at the end of this file match it).  A side whose entry is
// missing (degree one) or leads out of S ends at v itself (far = v, dist
// 0, done).  The word is read and written whole, so a record read while
// another thread jumps it is an older or a newer valid record: the rounds
// run in place, without a second buffer.

#define CH_DONE (1ull << 63)
#define CH_CONT (1ull << 62)
#define CH_DIST_MASK ((1ull << 30) - 1)
#define CH_CYCLE 0xFFFFFFFFull

// ch_list: the list of unified vertex v (its first entry's position and
// its length); its entries are columns (rows' lists: m + rind) or rows.
struct ch_list { ofs_t beg; ofs_t deg; };

__device__ __forceinline__ ch_list ch_of(const ofs_t* __restrict__ rptr, const ofs_t* __restrict__ cptr,
                                         long long m, long long v)
{
    ch_list l;
    if (v < m) { l.beg = rptr[v]; l.deg = rptr[v + 1] - l.beg; }
    else { l.beg = cptr[v - m]; l.deg = cptr[v - m + 1] - l.beg; }
    return l;
}

// ch_entry: the unified id of entry k of v's list.
__device__ __forceinline__ long long ch_entry(const idx_t* __restrict__ rind, const idx_t* __restrict__ cind,
                                              long long m, long long v, ofs_t pos)
{
    return v < m ? m + (long long)rind[pos] : (long long)cind[pos];
}

__device__ __forceinline__ bool ch_in_s(const ofs_t* __restrict__ rptr, const ofs_t* __restrict__ cptr,
                                        long long m, long long v)
{
    ofs_t d = ch_of(rptr, cptr, m, v).deg;
    return d == 1 || d == 2;
}

// gpumatch_chain_count: how much the rule can do.
//   rptr, rind, cptr, cind : the graph (see above)
//   m, n                   : rows, columns
//   counts                 : u64[2], += interior vertices (degree two, both
//                            neighbours in S), += pendants (degree one)
// Thread mapping: one thread per vertex; one atomicAdd per warp and count.
extern "C" __global__ void gpumatch_chain_count(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    long long m, long long n, u64* counts)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool interior = false, pendant = false;
    if (v < m + n) {
        ch_list l = ch_of(rptr, cptr, m, v);
        pendant = l.deg == 1;
        if (l.deg == 2)
            interior = ch_in_s(rptr, cptr, m, ch_entry(rind, cind, m, v, l.beg))
                       && ch_in_s(rptr, cptr, m, ch_entry(rind, cind, m, v, l.beg + 1));
    }
    unsigned a = __ballot_sync(GPUMATCH_FULL_MASK, interior);
    unsigned b = __ballot_sync(GPUMATCH_FULL_MASK, pendant);
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0) {
        if (a) atomicAdd(&counts[0], (u64)__popc(a));
        if (b) atomicAdd(&counts[1], (u64)__popc(b));
    }
}

// gpumatch_chain_init: the first chain records (one step on each side).
//   rptr, rind, cptr, cind, m, n : the graph
//   P                            : u64[2 (m + n)], written for every vertex
//                                  (outside S: both sides done at itself)
// Thread mapping: one thread per vertex.
extern "C" __global__ void gpumatch_chain_init(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    long long m, long long n, u64* P)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= m + n) return;
    ch_list l = ch_of(rptr, cptr, m, v);
    bool in_s = l.deg == 1 || l.deg == 2;
    for (int s = 0; s < 2; ++s) {
        u64 rec = CH_DONE | (u64)v;
        if (in_s && s < l.deg) {
            long long w = ch_entry(rind, cind, m, v, l.beg + s);
            ch_list lw = ch_of(rptr, cptr, m, w);
            if (lw.deg == 1 || lw.deg == 2) {
                // w's side away from v: the one whose entry is not v
                u64 cont = ch_entry(rind, cind, m, w, lw.beg) == v ? 1ull : 0ull;
                rec = (u64)w | (1ull << 32) | (cont << 62);
            }
        }
        P[2 * v + s] = rec;
    }
}

// gpumatch_chain_jump: one round of pointer jumping.
//   P     : u64[2V], updated in place
//   V     : m + n
//   flags : u32[2], [0] set to 1 when a record is still not done after
//           the round, [1] when a record became done in it
// Thread mapping: one thread per record.  A record (far u, side t) not
// done becomes u's record of side t composed with it: twice as far, or to
// the end.  A distance reaching V can only be a cycle (marked CH_CYCLE).
// A round in which no record became done leaves only cycles live: on a
// chain with an end, the live record nearest that end points to a done
// one, and is done after the round.  The driver stops there, and the
// cycle kernels below take the live records as cycles.
// Benign race: records read while their owners rewrite them (whole 64-bit
// words, each valid: see the header).
extern "C" __global__ void gpumatch_chain_jump(u64* P, long long V, unsigned* flags)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 2 * V) return;
    u64 w = P[i];
    if (w & CH_DONE) return;
    u64 u = w & 0xFFFFFFFFull;
    u64 x = ((volatile u64*)P)[2 * u + ((w >> 62) & 1ull)];
    u64 far = x & 0xFFFFFFFFull;
    u64 dist = ((w >> 32) & CH_DIST_MASK) + ((x >> 32) & CH_DIST_MASK);
    u64 rec;
    if (far == CH_CYCLE || dist >= (u64)V) rec = CH_DONE | CH_CYCLE;
    else rec = far | (dist << 32) | (x & (CH_CONT | CH_DONE));
    P[i] = rec;
    if (!(rec & CH_DONE)) flags[0] = 1u;
    else flags[1] = 1u;
}

// gpumatch_chain_match: the pairs the rule makes, from the ranked chains.
//   rptr, rind, cptr, cind, m, n : the graph
//   P                            : ranked records (done, but on cycles)
//   mu_row, mu_col               : matching, empty on entry; updated
// Thread mapping: one thread per vertex of S.  The chain's end that is a
// pendant starts the rule (both pendants: the smaller id); none, or a
// cycle (a record still live, or CH_CYCLE): nothing.  A vertex at an even
// distance from that end takes its neighbour on the far side, at an odd
// distance the one on the near side, so both vertices of a pair choose
// each other.  The chain's last vertex,
// at an even distance, takes its neighbour outside S (degree three or
// more), if it has one, by atomicCAS: several chains may end at the same
// vertex, and the losers stay free (as the serial rule leaves them).
extern "C" __global__ void gpumatch_chain_match(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    long long m, long long n, const u64* __restrict__ P, idx_t* mu_row, idx_t* mu_col)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= m + n) return;
    ch_list l = ch_of(rptr, cptr, m, v);
    if (l.deg != 1 && l.deg != 2) return;
    u64 r0 = P[2 * v], r1 = P[2 * v + 1];
    u64 e0 = r0 & 0xFFFFFFFFull, e1 = r1 & 0xFFFFFFFFull;
    if (!(r0 & r1 & CH_DONE) || e0 == CH_CYCLE || e1 == CH_CYCLE) return;
    bool p0 = ch_of(rptr, cptr, m, (long long)e0).deg == 1;
    bool p1 = ch_of(rptr, cptr, m, (long long)e1).deg == 1;
    int s;                       // the side of v toward the starting end
    if (p0 && p1) s = (e0 == e1 || e1 < e0) ? 1 : 0;
    else if (p0) s = 0;
    else if (p1) s = 1;
    else return;
    u64 p = ((s ? r1 : r0) >> 32) & CH_DIST_MASK;
    int k = (p & 1ull) ? s : 1 - s;   // the entry of v's list it pairs with
    if (k >= l.deg) return;           // the far end of a chain of odd length
    long long w = ch_entry(rind, cind, m, v, l.beg + k);
    ch_list lw = ch_of(rptr, cptr, m, w);
    bool w_in_s = lw.deg == 1 || lw.deg == 2;
    if (v < m) {
        if (w_in_s) mu_row[v] = (idx_t)(w - m);
        else if (gm_cas(&mu_col[w - m], (idx_t)-1, (idx_t)v) == (idx_t)-1) mu_row[v] = (idx_t)(w - m);
    } else {
        if (w_in_s) mu_col[v - m] = (idx_t)w;
        else if (gm_cas(&mu_row[w], (idx_t)-1, (idx_t)(v - m)) == (idx_t)-1) mu_col[v - m] = (idx_t)w;
    }
}

// ---------------------------------------------------------------------------
// Cycles.  A chain with no end is a cycle whose vertices all have degree
// two: a whole connected component, of even length L >= 4 (the graph is
// bipartite and simple).  It has two perfect matchings; the kernels below
// pick the one that pairs the cycle's least vertex id r (its anchor) with
// the first entry of r's list, as the serial rule does after one choice.
// Name the cycle x0 = r, x1 = r's first entry, x2, ..., x(L-1) (the
// forward direction); x(i) pairs with x(i+1) for even i, with x(i-1) for
// odd i.  A vertex learns i and which of its sides is forward by two
// passes of pointer jumping over *states* (v, s): "v, leaving by side s".
// A step from (v, s) reaches w = entry s of v and continues by w's side
// away from v, c: the state (w, c), whose id is 2w + c.  The forward
// orbit of states holds (r, 0), the backward one (r, 1).  Records (u64,
// one per state, in the chain records' array once gpumatch_chain_match
// has read it; CY_NONE for vertices on no cycle):
//   pass A (the anchor): bits 0..31 the state 2^k steps on, bits 32..63
//     the least vertex id over those steps, until a round changes no
//     least id: then every record holds r (following a state's records
//     tiles its cycle with windows whose least ids never fall, so they
//     are all the cycle's least);
//   pass B (the rank): until found, bits 0..31 the state `dist` steps on
//     and bits 32..62 dist; once a step reaches r, bit 63 (CY_FOUND),
//     bits 32..62 the steps to r and bit 0 r's continuation side there
//     (0: forward orbit).  The backward state of x(i) finds r after i
//     steps, its forward state after L - i.
// As for the chains, records are whole 64-bit words read and written in
// place: a record read while its owner rewrites it is an older or a newer
// valid record (a newer one covers more steps, which every combination
// above allows; pass B's distance stays exact because each record carries
// its own).

#define CY_NONE 0xFFFFFFFFFFFFFFFFull
#define CY_FOUND (1ull << 63)
#define CY_DIST_MASK ((1ull << 31) - 1)

// cy_step: the state one step from (v, s): 2w + c (see above), and w.
__device__ __forceinline__ u64 cy_step(const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
                                       const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
                                       long long m, long long v, int s, long long* w_out)
{
    ch_list l = ch_of(rptr, cptr, m, v);
    long long w = ch_entry(rind, cind, m, v, l.beg + s);
    ch_list lw = ch_of(rptr, cptr, m, w);
    u64 c = ch_entry(rind, cind, m, w, lw.beg) == v ? 1ull : 0ull;
    *w_out = w;
    return 2ull * (u64)w + c;
}

// gpumatch_cycle_init: pass A's first records from the ranked chain
// records (a vertex on a cycle has records still live, or far = CH_CYCLE).
//   rptr, rind, cptr, cind, m, n : the graph
//   P                            : u64[2V], chain records in, pass A
//                                  records out (CY_NONE off cycles)
//   count                        : u64[1], += vertices on cycles
// Thread mapping: one thread per vertex; reads and writes only its own
// two records; one atomicAdd per warp.
extern "C" __global__ void gpumatch_cycle_init(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    long long m, long long n, u64* P, u64* count)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool cyc = false;
    if (v < m + n) {
        u64 rec = P[2 * v];
        cyc = (!(rec & CH_DONE) || (rec & 0xFFFFFFFFull) == CH_CYCLE) && ch_of(rptr, cptr, m, v).deg == 2;
        for (int s = 0; s < 2; ++s) {
            u64 rec = CY_NONE;
            if (cyc) {
                long long w;
                u64 state = cy_step(rptr, rind, cptr, cind, m, v, s, &w);
                rec = state | ((u64)w << 32);
            }
            P[2 * v + s] = rec;
        }
    }
    unsigned a = __ballot_sync(GPUMATCH_FULL_MASK, cyc);
    if ((threadIdx.x & (GPUMATCH_WARP - 1)) == 0 && a) atomicAdd(count, (u64)__popc(a));
}

// gpumatch_cycle_min: one round of pass A.
//   P     : u64[2V], pass A records, updated in place
//   V     : m + n
//   flags : u32[2], [1] set to 1 when a least id changed in the round
// Thread mapping: one thread per state.  A record takes the record of the
// state it points to: twice the steps (or more), the lesser least id.
extern "C" __global__ void gpumatch_cycle_min(u64* P, long long V, unsigned* flags)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 2 * V) return;
    u64 rec = P[i];
    if (rec == CY_NONE) return;
    u64 x = ((volatile u64*)P)[rec & 0xFFFFFFFFull];
    u64 low = min(rec >> 32, x >> 32);
    P[i] = (x & 0xFFFFFFFFull) | (low << 32);
    if (low != (rec >> 32)) flags[1] = 1u;
}

// gpumatch_cycle_rank_init: pass B's first records (one step), from pass
// A's anchors.
//   rptr, rind, cptr, cind, m, n : the graph
//   P                            : u64[2V], pass A records in (its
//                                  rounds done), pass B records out
// Thread mapping: one thread per vertex; reads and writes only its own
// two records.
extern "C" __global__ void gpumatch_cycle_rank_init(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    long long m, long long n, u64* P)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= m + n) return;
    u64 a0 = P[2 * v], a1 = P[2 * v + 1];
    if (a0 == CY_NONE) return;
    long long r = (long long)min(a0 >> 32, a1 >> 32);
    for (int s = 0; s < 2; ++s) {
        long long w;
        u64 state = cy_step(rptr, rind, cptr, cind, m, v, s, &w);
        P[2 * v + s] = w == r ? (CY_FOUND | (1ull << 32) | (state & 1ull)) : (state | (1ull << 32));
    }
}

// gpumatch_cycle_rank: one round of pass B.
//   P     : u64[2V], pass B records, updated in place
//   V     : m + n
//   flags : u32[2], [0] set to 1 when a record is still not found after
//           the round
// Thread mapping: one thread per state.  A record not found takes the
// record of the state it points to: found at the sum of the two distances
// if that one is, else twice the steps (or more) on.
extern "C" __global__ void gpumatch_cycle_rank(u64* P, long long V, unsigned* flags)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 2 * V) return;
    u64 rec = P[i];
    if (rec & CY_FOUND) return;   // (CY_NONE too)
    u64 x = ((volatile u64*)P)[rec & 0xFFFFFFFFull];
    u64 dist = ((rec >> 32) & CY_DIST_MASK) + ((x >> 32) & CY_DIST_MASK);
    u64 out = (x & CY_FOUND) ? (CY_FOUND | (dist << 32) | (x & 1ull)) : ((x & 0xFFFFFFFFull) | (dist << 32));
    P[i] = out;
    if (!(out & CY_FOUND)) flags[0] = 1u;
}

// gpumatch_cycle_match: the pairs of every cycle, from pass B's ranks.
//   rptr, rind, cptr, cind, m, n : the graph
//   P                            : pass B records, every one found
//   mu_row, mu_col               : matching; the cycles' vertices are
//                                  free (the chain rule leaves them)
// Thread mapping: one thread per vertex on a cycle.  Its backward side b
// is the one whose record found r in the backward orbit (bit 0 set), at
// i steps: i odd, it pairs with entry b of its list, else with the other
// (for r, i = L, even: its first entry).  Both vertices of a pair choose
// each other, so no claim is contested.
extern "C" __global__ void gpumatch_cycle_match(
    const ofs_t* __restrict__ rptr, const idx_t* __restrict__ rind,
    const ofs_t* __restrict__ cptr, const idx_t* __restrict__ cind,
    long long m, long long n, const u64* __restrict__ P, idx_t* mu_row, idx_t* mu_col)
{
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= m + n) return;
    u64 r0 = P[2 * v], r1 = P[2 * v + 1];
    if (r0 == CY_NONE || !(r0 & r1 & CY_FOUND) || (r0 & 1ull) == (r1 & 1ull)) return;
    int b = (r0 & 1ull) ? 0 : 1;
    u64 i = ((b ? r1 : r0) >> 32) & CY_DIST_MASK;
    int k = (i & 1ull) ? b : 1 - b;
    ch_list l = ch_of(rptr, cptr, m, v);
    long long w = ch_entry(rind, cind, m, v, l.beg + k);
    if (v < m) mu_row[v] = (idx_t)(w - m);
    else mu_col[v - m] = (idx_t)w;
}

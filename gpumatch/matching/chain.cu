// CUDA kernels of the chain rule: Karp-Sipser's degree-one rule carried
// along chains of vertices of degree two, for every chain at once, by
// pointer jumping.  The host-side driver is chain_rule in
// gpumatch/matching/_driver.py; the NumPy twins (chain_count, chain_init,
// chain_jump, chain_match) are in gpumatch/matching/_kernels_numpy.py.
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
// start it; left to the matching that follows).  A side whose entry is
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
//   P    : u64[2V], updated in place
//   V    : m + n
//   live : u32[1], set to 1 when a record is still not done after the round
// Thread mapping: one thread per record.  A record (far u, side t) not
// done becomes u's record of side t composed with it: twice as far, or to
// the end.  A distance reaching V can only be a cycle (marked CH_CYCLE).
// Benign race: records read while their owners rewrite them (whole 64-bit
// words, each valid: see the header).
extern "C" __global__ void gpumatch_chain_jump(u64* P, long long V, unsigned* live)
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
    if (!(rec & CH_DONE)) *live = 1u;
}

// gpumatch_chain_match: the pairs the rule makes, from the ranked chains.
//   rptr, rind, cptr, cind, m, n : the graph
//   P                            : ranked records (every one done)
//   mu_row, mu_col               : matching, empty on entry; updated
// Thread mapping: one thread per vertex of S.  The chain's end that is a
// pendant starts the rule (both pendants: the smaller id); none, or a
// cycle: nothing.  A vertex at an even distance from that end takes its
// neighbour on the far side, at an odd distance the one on the near side,
// so both vertices of a pair choose each other.  The chain's last vertex,
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
    if (e0 == CH_CYCLE || e1 == CH_CYCLE) return;
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

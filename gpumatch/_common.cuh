// Shared definitions prepended (as text, by gpumatch/_cuda.py) to every
// gpumatch CUDA source.  Two integer widths, each int or long long:
//   IDX (idx_t): vertex ids and everything sized by them (row and column
//       ids, mates, labels, worklists), long long only when rows + columns
//       (or the vertices) do not fit int;
//   OFF (ofs_t): offsets, i.e. pointer arrays (indptr, the transpose's
//       pointers) and every array or variable that holds or walks entry
//       positions (loop counters over entries, in_to_out, partner), long
//       long when the number of stored entries does not fit int.
// The launcher passes both (-DIDX=... -DOFF=...); OFF defaults to IDX.  A
// graph of 4e9 entries over 1.6e9 vertices keeps int ids and long long
// offsets.  ofs_t is never narrower than idx_t where the launchers build the
// arrays.  (Not "off_t": POSIX headers define that name.)
#ifndef IDX
#define IDX int
#endif
#ifndef OFF
#define OFF IDX
#endif
typedef IDX idx_t;
typedef OFF ofs_t;
typedef long long i64;
typedef unsigned long long u64;

#define GPUMATCH_WARP 32
#define GPUMATCH_FULL_MASK 0xffffffffu

// Atomic compare-and-swap and maximum, overloaded for 32- and 64-bit indices.
__device__ __forceinline__ int gm_cas(int* a, int expected, int value)
{
    return atomicCAS(a, expected, value);
}
__device__ __forceinline__ long long gm_cas(long long* a, long long expected, long long value)
{
    return (long long)atomicCAS((unsigned long long*)a, (unsigned long long)expected,
                                (unsigned long long)value);
}
__device__ __forceinline__ void gm_max(int* a, int value) { atomicMax(a, value); }
__device__ __forceinline__ void gm_max(long long* a, long long value) { atomicMax(a, value); }

// Atomic addition of a signed 64-bit value, returning the old value (two's
// complement: unsigned addition wraps exactly like signed addition).
__device__ __forceinline__ long long gm_add(long long* a, long long value)
{
    return (long long)atomicAdd((unsigned long long*)a, (unsigned long long)value);
}

// Warp-aggregated append: the next free slot of a list whose length is
// *count, for the calling thread.  The lanes that reach this call together
// (__activemask: the coalesced group) take consecutive slots with ONE
// atomicAdd by their lowest lane.  A per-thread atomicAdd on one counter
// serialises at about 1 ns each on an H100: a BFS level appending 300 000
// vertices spent ~0.3 ms there.  Safe in divergent code: only the lanes in
// the mask take part in the shuffle.  1-D blocks (the lane is the low 5
// bits of threadIdx.x), which every gpumatch kernel uses.
__device__ __forceinline__ u64 gm_append(u64* count)
{
    unsigned act = __activemask();
    int lane = threadIdx.x & (GPUMATCH_WARP - 1);
    int leader = __ffs(act) - 1;
    u64 first = 0;
    if (lane == leader) first = atomicAdd(count, (u64)__popc(act));
    first = __shfl_sync(act, first, leader);
    return first + (u64)__popc(act & ((1u << lane) - 1u));
}

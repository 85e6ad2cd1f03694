// Shared definitions prepended (as text, by gpumatch/_cuda.py) to every
// gpumatch CUDA source.  Index type: IDX is int (default) or long long,
// chosen by the launcher with -DIDX=... when a graph needs 64-bit indices.
#ifndef IDX
#define IDX int
#endif
typedef IDX idx_t;
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

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

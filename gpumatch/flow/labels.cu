// CUDA kernels of the global relabels of a dynamic max-flow repair
// (_Phase._relabel_full and _Phase._relabel_split in
// gpumatch/flow/_dynamic.py; the NumPy twin is gpumatch/flow/_labels.py,
// class _Numpy).
//
// A phase of the repair pushes excess towards two tiers of targets: the
// near ones (height 0) and the far ones (height far_level).  Its global
// relabel is a BFS over the reverse residual network from the near
// targets, then one from the far targets over what the first missed;
// both stop early once the excess of their side has a height when the
// kept minimum cut is *sealed* (no residual arc crosses it towards the
// near targets' side; the split relabel).  Around those BFS (flow/pr.cu)
// the relabel takes four steps, each one launch and one read-back of its
// list lengths:
//
//   start  : heights -1, 0 at the near targets; list the near targets,
//            the far targets and the excess on the near side
//   (BFS from the near targets; split: until that excess has a height)
//   middle : split: the unlabelled vertices of the near side get the next
//            level; list the excess left without a height (for the far
//            return)
//   far    : the far targets without a height get far_level; list them
//            and the excess still without a height
//   (BFS from the far targets; split: until that excess has a height)
//   finish : the vertices left without a height get `fill`; list the
//            active vertices (the next discharge's worklist)
//
// Lists are appended with atomicAdd on their length in `count`, which the
// caller zeroes.  Their order varies from run to run: the BFS levels do
// not depend on it, and the discharge is correct in any order (the flow
// it leaves may differ).
//
// Per-vertex arrays: excess (long long), height (int), side (bool: the side
// of the cut that holds the near targets).  Lists are IDX (int or long long).
// `s` and `t` are the network's terminals: never watched, never active.
// Thread mapping: one thread per vertex (grid-stride) in every kernel.

#ifndef IDX
#define IDX long long
#endif

__device__ __forceinline__ void lb_append(IDX* list, unsigned long long* count, long long v)
{
    list[atomicAdd(count, 1ull)] = (IDX)v;
}

// gpumatch_lb_start: first step.
//   near_t, far_t : the near and far terminals
//   deficits      : nonzero: the other vertices with excess < 0 are targets
//                   too, near on `side` and far off it
//   near, far, watch : out, the near targets, the far targets and the
//                   vertices of `side` with excess (count[0..2])
// Race: none, each thread writes its own vertex.
extern "C" __global__ void gpumatch_lb_start(
    long long V, const long long* __restrict__ excess, const bool* __restrict__ side, long long near_t,
    long long far_t, long long s, long long t, int deficits, int* __restrict__ height, IDX* __restrict__ near,
    IDX* __restrict__ far, IDX* __restrict__ watch, unsigned long long* __restrict__ count)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride) {
        const long long e = excess[v];
        const bool inner = v != s && v != t, on = side[v];
        const bool deficit = deficits && inner && e < 0;
        const bool is_near = v == near_t || (deficit && on);
        height[v] = is_near ? 0 : -1;
        if (is_near)
            lb_append(near, count + 0, v);
        else if (v == far_t || deficit)
            lb_append(far, count + 1, v);
        else if (inner && e > 0 && on)
            lb_append(watch, count + 2, v);
    }
}

// gpumatch_lb_middle: after the BFS from the near targets.
//   fill  : the height of the unlabelled vertices of `side` (< 0: they stay
//           unlabelled, the BFS ran to its end)
//   xs    : out, the vertices with excess and no height (count[0])
// Race: none, each thread reads and writes its own vertex.
extern "C" __global__ void gpumatch_lb_middle(
    long long V, const long long* __restrict__ excess, const bool* __restrict__ side, int fill, long long s,
    long long t, int* __restrict__ height, IDX* __restrict__ xs, unsigned long long* __restrict__ count)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride) {
        int h = height[v];
        if (h < 0 && fill >= 0 && side[v]) {
            h = fill;
            height[v] = h;
        }
        if (h < 0 && excess[v] > 0 && v != s && v != t)
            lb_append(xs, count, v);
    }
}

// gpumatch_lb_far: before the BFS from the far targets.
//   far, nfar : the far targets listed by gpumatch_lb_start
//   frontier  : out, those without a height, which get far_level (count[0])
//   watch     : out, the vertices with excess and no height (count[1])
// Thread mapping: threads 0 .. nfar - 1 take the far targets, the next V
// threads the vertices (grid-stride over both).
// Race: none; a far target is a terminal or has a deficit, so the threads
// that set its height never meet a thread that tests it for the watch.
extern "C" __global__ void gpumatch_lb_far(
    long long V, const long long* __restrict__ excess, const IDX* __restrict__ far, long long nfar,
    int far_level, long long s, long long t, int* __restrict__ height, IDX* __restrict__ frontier,
    IDX* __restrict__ watch, unsigned long long* __restrict__ count)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nfar + V; i += stride) {
        if (i < nfar) {
            const long long f = far[i];
            if (height[f] < 0) {
                height[f] = far_level;
                lb_append(frontier, count + 0, f);
            }
        } else {
            const long long v = i - nfar;
            if (excess[v] > 0 && v != s && v != t && height[v] < 0)
                lb_append(watch, count + 1, v);
        }
    }
}

// gpumatch_lb_finish: last step.
//   fill  : the height of the vertices still unlabelled
//   work  : out, the active vertices: excess > 0, height < hlimit, not a
//           terminal (count[0])
// Race: none, each thread reads and writes its own vertex.
extern "C" __global__ void gpumatch_lb_finish(
    long long V, const long long* __restrict__ excess, int fill, int hlimit, long long s, long long t,
    int* __restrict__ height, IDX* __restrict__ work, unsigned long long* __restrict__ count)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < V; v += stride) {
        int h = height[v];
        if (h < 0) {
            h = fill;
            height[v] = h;
        }
        if (excess[v] > 0 && h < hlimit && v != s && v != t)
            lb_append(work, count, v);
    }
}

"""From-scratch maximum flow with the cooperative BFS off and on (GPU).

For each case of ``bench_flow.py`` named on the command line, the median
of 5 solves (after one warm-up) with ``TUNING["bfs_coop"]`` off, and on
with 1, 2 and 4 blocks per multiprocessor
(``gpumatch.flow._pr_cupy.BFS_COOP_PER_SM``)::

    python3 benchmarks/bench_bfs_coop.py rand1M_d5,genrmf_32x256,rlg_512x1024
"""

import sys
import time

import numpy as np


def main(argv=None):
    import cupy as cp
    import cupyx.scipy.sparse as cpx

    import bench_flow   # benchmarks/ is this script's folder
    from gpumatch.flow import _maxflow, _pr_cupy, maximum_flow

    argv = sys.argv[1:] if argv is None else argv
    names = (argv[0] if argv else "rand1M_d5,genrmf_32x256,rlg_512x1024").split(",")
    saved = (_maxflow.TUNING.get("bfs_coop"), _pr_cupy.BFS_COOP_PER_SM)
    try:
        for name in names:
            C, s, t = bench_flow.build(name)
            Cd = cpx.csr_matrix(C.astype(np.float64))
            out = []
            for label, coop, per_sm in (("off", False, 1), ("sm1", True, 1), ("sm2", True, 2), ("sm4", True, 4)):
                _maxflow.TUNING["bfs_coop"] = coop
                _pr_cupy.BFS_COOP_PER_SM = per_sm
                maximum_flow(Cd, s, t, backend="cupy")
                ts = []
                for _ in range(5):
                    cp.cuda.Device().synchronize()
                    t0 = time.perf_counter()
                    res = maximum_flow(Cd, s, t, backend="cupy")
                    cp.cuda.Device().synchronize()
                    ts.append(time.perf_counter() - t0)
                out.append(f"{label} {1e3 * np.median(ts):.1f} (relabels {res.stats['global_relabels']})")
            print(name, " | ".join(out), flush=True)
    finally:
        _maxflow.TUNING["bfs_coop"], _pr_cupy.BFS_COOP_PER_SM = saved


if __name__ == "__main__":
    main()

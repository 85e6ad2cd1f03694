"""Does what runs before a matching update change its time? (GPU)

``MatchingSolver`` on ``random_bipartite(10**6, 10**6, 5)``: batches of
5 000 edges are removed, solved, added back and solved again, each step
timed between device syncs.  Before each update one of:

* ``none``: nothing (the solve before it has just ended);
* ``sleep``: a 50 ms sleep (no host or GPU work);
* ``numpy``: a NumPy sort of 5 million int64 (host work, no GPU work);
* ``gpu``: 20 million random floats sorted by CuPy (GPU work);
* ``numpy+gpu``: both, in that order.

Medians of 7 round trips per mode, in ms::

    python3 benchmarks/probe_update_idle.py

``bench_dynamic.py`` builds each batch and its reference graph on the host
(tens of ms) before the timed update, which is why it now runs
``settle`` (a little GPU work) before each timed part.
"""

import pathlib
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))


def main():
    import cupy as cp

    import bench_dynamic as B   # benchmarks/ is this script's folder
    from gpumatch import generators as G
    from gpumatch.matching import MatchingSolver

    def sync():
        B.sync("cupy")

    m = n = 1_000_000
    A = sp.csr_matrix(G.random_bipartite(m, n, 5, seed=0))
    A.sort_indices()
    keys = (np.repeat(np.arange(m, dtype=np.int64), np.diff(A.indptr)) * n + A.indices).astype(np.int64)
    solver = MatchingSolver(B.to_dev(A, "cupy"), backend="cupy", rebuild_fraction=0.02)
    solver.solve()
    rng = np.random.default_rng(3)
    junk = np.random.default_rng(0).integers(0, 1 << 40, size=5_000_000)

    def before(mode):
        if mode == "sleep":
            time.sleep(0.05)
        if mode in ("numpy", "numpy+gpu"):
            np.sort(junk)
        if mode in ("gpu", "numpy+gpu"):
            x = cp.random.random(20_000_000)
            x.sort()
            sync()

    def roundtrip(mode):
        rem = np.sort(keys[rng.choice(keys.shape[0], size=5000, replace=False)])
        r, c = cp.asarray(rem // n), cp.asarray(rem % n)
        out = []
        for update in (solver.remove_edges, solver.add_edges):
            before(mode)
            sync()
            t0 = time.perf_counter()
            update(r, c)
            sync()
            t1 = time.perf_counter()
            solver.solve()
            sync()
            out += [(t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3]
        return out

    for _ in range(3):
        roundtrip("none")
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: medians of 7, ms")
    for mode in ("none", "sleep", "numpy", "gpu", "numpy+gpu", "none"):
        med = np.median(np.array([roundtrip(mode) for _ in range(7)]), axis=0)
        print(f"{mode:10s}: remove {med[0]:.3f} solve {med[1]:.3f} | add {med[2]:.3f} solve {med[3]:.3f}",
              flush=True)


if __name__ == "__main__":
    main()

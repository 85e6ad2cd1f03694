"""Which CuPy compilations happen after the dynamic solver's warm-up? (GPU)

Wraps CuPy's compile entry points, runs ``bench_dynamic.py --only flow``
on the flow cases named (``unit``, ``washington``, ``genrmf``), and after
``gpumatch.flow._dynamic._warm_up`` prints every compilation that took
over 50 ms with the package frames that led to it.  Run it with an empty
``CUPY_CACHE_DIR`` to see a fresh machine's first run::

    CUPY_CACHE_DIR=$(mktemp -d) python3 benchmarks/probe_compiles.py genrmf,washington
"""

import functools
import sys
import time
import traceback

ON = {"log": False}


def _wrap(name, f):
    @functools.wraps(f)
    def g(*a, **k):
        t0 = time.perf_counter()
        r = f(*a, **k)
        dt = time.perf_counter() - t0
        if ON["log"] and dt > 0.05:
            frames = [f"{fr.filename.split('/')[-1]}:{fr.lineno}:{fr.name}" for fr in traceback.extract_stack()
                      if "gpumatch" in fr.filename or "bench" in fr.filename][-6:]
            print(f"  COMPILE {name} {dt * 1e3:.0f} ms  {frames}", flush=True)
        return r
    return g


def main(argv=None):
    import cupy.cuda.compiler as CC

    for n in dir(CC):
        if "compile" in n and callable(getattr(CC, n)):
            setattr(CC, n, _wrap(n, getattr(CC, n)))
    import bench_dynamic as B   # benchmarks/ is this script's folder
    from gpumatch.flow import _dynamic as D

    argv = sys.argv[1:] if argv is None else argv
    which = (argv[0] if argv else "genrmf").split(",")
    cases = B.flow_cases
    B.flow_cases = lambda small: [c for c in cases(small) if c[0].split("_")[0] in which]
    warm = D._warm_up

    def logged_warm_up(backend):
        t0 = time.perf_counter()
        warm(backend)
        print(f"# warm-up {time.perf_counter() - t0:.1f} s", flush=True)
        ON["log"] = True

    D._warm_up = logged_warm_up
    B.main(["--only", "flow", "--flow-rebuild-fraction", "default", "--repeats", "2", "--budget", "200"] + argv[1:])


if __name__ == "__main__":
    main()

"""First GPU call on a fresh machine: seconds and kernel compiles.

Each case runs in a fresh Python process with an empty CuPy kernel cache
(its own ``CUPY_CACHE_DIR``): the first call (after the imports), then a
second one, with a hook on CuPy's compiler that counts what NVRTC compiles
(CuPy's element-wise kernels and any gpumatch module that no pre-built cubin
served).  ``--no-prebuilt`` sets ``GPUMATCH_PREBUILT=0`` (every gpumatch
module compiled from source).

    python benchmarks/bench_first_call.py --repeats 3 --out first_call.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

_CHILD = textwrap.dedent("""
    import json, re, sys, time
    from cupy.cuda import compiler
    seen = []
    real = compiler._compile_with_cache_cuda
    def hook(source, *a, **k):
        t = time.perf_counter()
        out = real(source, *a, **k)
        found = re.findall(r"__global__\\s+void\\s+(?:__launch_bounds__\\([^)]*\\)\\s*)?(\\w+)", source)
        seen.append((found[0] if found else "?", time.perf_counter() - t))
        return out
    compiler._compile_with_cache_cuda = hook
    import cupy as cp
    import gpumatch
    from gpumatch import generators as G
    case = sys.argv[1]
    if case == "flow":
        C, s, t = G.genrmf(8, 8, 100, 1000, seed=1)
        call = lambda: gpumatch.maximum_flow(C, s, t, backend="cupy")
    elif case == "matching":
        A = G.rmat(12, 8, seed=1)
        call = lambda: gpumatch.maximum_bipartite_matching(A, backend="cupy")
    else:   # a matching that reaches the augmenting phases
        A = G.random_bipartite(50_000, 50_000, 5, seed=1)
        call = lambda: gpumatch.maximum_bipartite_matching(A, backend="cupy")
    t0 = time.perf_counter(); call(); cp.cuda.runtime.deviceSynchronize(); first = time.perf_counter() - t0
    t0 = time.perf_counter(); call(); cp.cuda.runtime.deviceSynchronize(); second = time.perf_counter() - t0
    ours = [s for n, s in seen if n.startswith("gpumatch_")]
    print(json.dumps({"first_s": first, "second_s": second, "compiles": len(seen),
                      "compile_s": sum(s for _, s in seen), "gpumatch_modules_compiled": len(ours)}))
""")

CASES = ("flow", "matching", "matching_tail")


def run_case(case, prebuilt=True):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CUPY_CACHE_DIR=cache, GPUMATCH_QUIET="1")
        if not prebuilt:
            env["GPUMATCH_PREBUILT"] = "0"
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        r = subprocess.run([sys.executable, "-c", _CHILD, case], env=env, capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{case}: {r.stderr[-2000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes per case (median)")
    ap.add_argument("--no-prebuilt", action="store_true", help="GPUMATCH_PREBUILT=0")
    ap.add_argument("--out", help="append one JSON line per case here")
    args = ap.parse_args(argv)
    print("| case | first call (s), median | all runs | compiles | of them gpumatch modules | second call (s) |")
    print("|---|---:|---|---:|---:|---:|")
    for case in args.cases.split(","):
        runs = [run_case(case, not args.no_prebuilt) for _ in range(args.repeats)]
        first = [r["first_s"] for r in runs]
        rec = {"case": case, "prebuilt": not args.no_prebuilt, "first_s": statistics.median(first), "runs": runs}
        print(f"| {case} | {rec['first_s']:.2f} | {', '.join(f'{x:.2f}' for x in first)} | "
              f"{runs[0]['compiles']} | {runs[0]['gpumatch_modules_compiled']} | {runs[0]['second_s']:.3f} |")
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

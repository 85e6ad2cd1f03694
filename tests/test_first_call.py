"""The first GPU call on a fresh machine: what it compiles (gpu-marked).

* a first ``maximum_flow`` and a first matching on an empty CuPy kernel
  cache compile none of CuPy's CUB reductions (seconds each), in a fresh
  process with its own cache directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu


_SCRIPT = textwrap.dedent("""
    import json, re, sys, time
    from cupy.cuda import compiler
    names = []
    real = compiler._compile_with_cache_cuda
    def hook(source, *a, **k):
        found = re.findall(r"__global__\\s+void\\s+(?:__launch_bounds__\\([^)]*\\)\\s*)?(\\w+)", source)
        names.append(found[0] if found else "?")
        return real(source, *a, **k)
    compiler._compile_with_cache_cuda = hook
    import gpumatch
    from gpumatch import generators as G, testing
    t0 = time.perf_counter()
    if sys.argv[1] == "flow":
        C, s, t = G.genrmf(6, 6, 100, 1000, seed=3)
        r = gpumatch.maximum_flow(C, s, t, backend="cupy")
        testing.check_flow(C, s, t, r.flow, r.flow_value)
    else:
        A = G.delaunay(3000, seed=3)
        m = gpumatch.maximum_bipartite_matching(A, backend="cupy")
        testing.check_matching(A, m)
    print(json.dumps({"seconds": time.perf_counter() - t0, "names": names}))
""")


@pytest.mark.parametrize("what", ["flow", "matching"])
def test_first_call_compiles_no_cub_reduction(what, tmp_path):
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "cache"), GPUMATCH_QUIET="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _SCRIPT, what], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    names = out["names"]
    assert any(n.startswith("gpumatch_") for n in names), names     # the hook saw the compiles
    assert not [n for n in names if n.startswith("cupy_cub")], names

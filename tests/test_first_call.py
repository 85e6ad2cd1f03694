"""The first GPU call on a fresh machine: what it compiles (gpu-marked).

* a first ``maximum_flow`` and a first matching on an empty CuPy kernel
  cache compile none of CuPy's CUB reductions (seconds each), in a fresh
  process with its own cache directory;
* they compile none of gpumatch's own modules either: the shipped cubins
  (gpumatch._prebuilt) load instead; with ``GPUMATCH_PREBUILT=0`` they are
  compiled (which also shows the hook sees our compiles).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu


#: Records the name of every kernel CuPy compiles (in ``names``).
_HOOK = textwrap.dedent("""
    import json, re, sys, time
    from cupy.cuda import compiler
    names = []
    real = compiler._compile_with_cache_cuda
    def hook(source, *a, **k):
        found = re.findall(r"__global__\\s+void\\s+(?:__launch_bounds__\\([^)]*\\)\\s*)?(\\w+)", source)
        names.append(found[0] if found else "?")
        return real(source, *a, **k)
    compiler._compile_with_cache_cuda = hook
""")

_SCRIPT = _HOOK + textwrap.dedent("""
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


def _first_call(what, tmp_path, **env_extra):
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "cache"), GPUMATCH_QUIET="1", **env_extra)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _SCRIPT, what], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])["names"]


@pytest.mark.parametrize("what", ["flow", "matching"])
def test_first_call_compiles_no_cub_reduction_and_none_of_ours(what, tmp_path):
    names = _first_call(what, tmp_path)
    assert names, "the hook saw no compile at all"
    assert not [n for n in names if n.startswith("cupy_cub")], names
    assert not [n for n in names if n.startswith("gpumatch_")], names


def test_without_prebuilt_our_modules_compile(tmp_path):
    names = _first_call("matching", tmp_path, GPUMATCH_PREBUILT="0")
    assert [n for n in names if n.startswith("gpumatch_")], names


_DYNAMIC = _HOOK + textwrap.dedent("""
    import numpy as np, cupy as cp, cupyx.scipy.sparse as csp
    from gpumatch import generators as G
    from gpumatch.matching import MatchingSolver
    A = G.random_bipartite(50_000, 50_000, 4, seed=0).tocoo()
    s = MatchingSolver(csp.csr_matrix(A.astype(np.float32)), backend="cupy")
    s.solve()
    seen = {}
    for k in (100, 30_000):     # a batch ordered by ranks, and one sorted (past RANK_BATCH)
        i = np.random.default_rng(k).choice(A.nnz, size=k, replace=False)
        r, c = cp.asarray(A.row[i]), cp.asarray(A.col[i])    # int32 ids, as users hold them
        names.clear()
        s.remove_edges(r, c)
        seen[f"remove {k}"] = list(names)
        s.solve()
        names.clear()
        s.add_edges(r, c)
        seen[f"add {k}"] = list(names)
        s.solve()
    print(json.dumps(seen))
""")


def test_dynamic_updates_compile_nothing(tmp_path):
    """Batches of edge changes, small and large, compile no kernel on an
    empty CuPy cache (their ordering, checks and edits are pre-built
    kernels around CuPy's sort): no first-batch stall."""
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "cache"), GPUMATCH_QUIET="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _DYNAMIC], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(seen) == {"remove 100", "add 100", "remove 30000", "add 30000"}
    assert all(not v for v in seen.values()), seen

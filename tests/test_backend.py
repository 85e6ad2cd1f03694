"""Backend selection: auto falls back, explicit cupy fails clearly without a device."""

import numpy as np
import pytest

from gpumatch import _backend


def test_numpy_backend_always_resolves():
    assert _backend.resolve_backend("numpy") == "numpy"
    assert _backend.get_xp("numpy") is np


def test_auto_resolves_to_an_available_backend():
    name = _backend.resolve_backend("auto")
    cpu = "numba" if _backend.numba_available() else "numpy"
    assert name == ("cupy" if _backend.cupy_available() else cpu)


def test_numba_backend_keeps_numpy_arrays():
    if not _backend.numba_available():
        pytest.skip("Numba does not import")
    assert _backend.resolve_backend("numba") == "numba"
    assert _backend.get_xp("numba") is np
    a = np.arange(3)
    assert _backend.to_backend(a, "numba") is a


def test_auto_falls_back_to_numpy_without_numba(monkeypatch):
    """No Numba (or a broken one): 'auto' is NumPy without a GPU, 'numba' a clear error."""
    monkeypatch.setattr(_backend, "_probe_numba", lambda: (False, "Numba does not import (test)"))
    if not _backend.cupy_available():
        assert _backend.resolve_backend("auto") == "numpy"
    with pytest.raises(RuntimeError, match="backend='numba' was requested"):
        _backend.resolve_backend("numba")


@pytest.mark.parametrize("bad", ["gpu", "CUDA", "", None, 3])
def test_unknown_backend_lists_allowed_values(bad):
    with pytest.raises(ValueError, match="backend must be one of"):
        _backend.resolve_backend(bad)


def test_explicit_cupy_without_device_raises_runtime_error():
    if _backend.cupy_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="backend='cupy' was requested"):
        _backend.resolve_backend("cupy")


def test_cupy_probe_failure_falls_back(monkeypatch):
    """A CuPy that imports but finds no driver must not break 'auto'."""
    class FakeRuntime:
        @staticmethod
        def getDeviceCount():
            raise RuntimeError("cudaErrorNoDevice")

    class FakeCuda:
        runtime = FakeRuntime

    class FakeCupy:
        cuda = FakeCuda

    monkeypatch.setattr(_backend, "cp", FakeCupy)
    _backend._probe_cupy.cache_clear()
    try:
        assert _backend.resolve_backend("auto") == ("numba" if _backend.numba_available() else "numpy")
        with pytest.raises(RuntimeError, match="no CUDA device answers"):
            _backend.resolve_backend("cupy")
    finally:
        _backend._probe_cupy.cache_clear()


def test_numpy_inputs_are_not_cupy():
    a = np.arange(3)
    assert not _backend.is_cupy_input(a)
    assert not _backend.is_cupy_input((a, a, (2, 2)))
    assert _backend.to_numpy(a) is a or np.array_equal(_backend.to_numpy(a), a)


@pytest.mark.gpu
def test_cupy_round_trip():
    cp = _backend.cp
    a = cp.arange(5)
    assert _backend.is_cupy_input(a)
    assert isinstance(_backend.output_like(np.arange(3), True), cp.ndarray)
    assert isinstance(_backend.output_like(a, False), np.ndarray)
    assert _backend.device_name()


class _FakeCore:
    """CuPy's reduction-accelerator setting, as ``cupy._core`` exposes it."""

    def __init__(self):
        self.value = [1]          # CUB, CuPy's default
        self.calls = 0

    def get_reduction_accelerators(self):
        return self.value

    def set_reduction_accelerators(self, value):
        self.calls += 1
        self.value = list(value)


def test_plain_reductions_saves_and_restores(monkeypatch):
    core = _FakeCore()
    monkeypatch.setattr(_backend, "cp", type("FakeCupy", (), {"_core": core}))
    with _backend.plain_reductions():
        assert core.value == []
        with _backend.plain_reductions():         # nested: one save, one restore
            assert core.value == []
        assert core.value == []
    assert core.value == [1] and core.calls == 2
    with pytest.raises(KeyError):                 # restored on the way out of an error too
        with _backend.plain_reductions():
            raise KeyError("x")
    assert core.value == [1]
    monkeypatch.setattr(_backend, "PLAIN_REDUCTIONS", False)
    with _backend.plain_reductions():
        assert core.value == [1]


def test_plain_reductions_shared_between_threads(monkeypatch):
    import threading

    core = _FakeCore()
    monkeypatch.setattr(_backend, "cp", type("FakeCupy", (), {"_core": core}))
    inside, release = threading.Barrier(3), threading.Event()
    seen = []

    def work():
        with _backend.plain_reductions():
            inside.wait()
            release.wait()
            seen.append(list(core.value))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    inside.wait()
    assert core.value == []
    release.set()
    for t in threads:
        t.join()
    assert seen == [[], []] and core.value == [1]


def test_probe_needs_no_kernel_compile():
    import inspect

    src = inspect.getsource(_backend._probe_cupy)
    assert ".sum(" not in src and "arange" not in src.replace("np.arange", "")


@pytest.mark.gpu
def test_public_calls_run_with_plain_reductions(monkeypatch):
    import scipy.sparse as sp

    import gpumatch
    from gpumatch.matching import api

    cp = _backend.cp
    before = list(cp._core.get_reduction_accelerators())
    seen = []
    real = api.as_csr_graph

    def recording(*args, **kwargs):   # the setting while gpumatch reads the input
        seen.append(list(cp._core.get_reduction_accelerators()))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "as_csr_graph", recording)
    A = sp.random(30, 30, density=0.2, format="csr", random_state=0)
    gpumatch.maximum_bipartite_matching(A, backend="cupy")
    assert seen == [[]]
    assert list(cp._core.get_reduction_accelerators()) == before
    for f in (gpumatch.maximum_flow, gpumatch.minimum_cut, gpumatch.bipartite_matching,
              gpumatch.structural_rank, gpumatch.dulmage_mendelsohn, gpumatch.MaxFlowSolver.solve,
              gpumatch.MatchingSolver.solve):
        assert hasattr(f, "__wrapped__"), f


@pytest.mark.parametrize("op", ["sum", "max", "min", "any", "all"])
def test_reduce_matches_the_method_on_numpy(op):
    x = np.array([3, -1, 7, 0], dtype=np.int32)
    assert _backend.reduce(x, op) == getattr(x, op)()


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["sum", "max", "min", "any", "all"])
def test_reduce_in_two_steps_on_cupy(op):
    cp = _backend.cp
    rng = np.random.default_rng(5)
    row = _backend.SPLIT_REDUCE_ROW
    for n in (5, _backend.SPLIT_REDUCE_MIN - 1, _backend.SPLIT_REDUCE_MIN, 40 * row, 40 * row + 17):
        for dtype in (np.int32, np.int64, np.bool_, np.float64):
            host = (rng.integers(-9, 10, n) if dtype is not np.bool_ else rng.random(n) < 0.5).astype(dtype)
            if dtype is np.bool_ and op in ("any", "all"):
                host[:] = op == "any"        # the answer hangs on one entry
                host[n - 1] = op != "any"
            with _backend.plain_reductions():
                got = _backend.reduce(cp.asarray(host), op)
            want = getattr(host, op)()
            assert got.get().item() == pytest.approx(want.item()), (n, dtype, op)


# ---------------------------------------------------------------------------
# the public gpumatch.backends, and what a first import and a first call load
# ---------------------------------------------------------------------------


def test_public_backends_module_matches_the_internal_one():
    from gpumatch import backends

    assert backends.resolve_backend("auto") == _backend.resolve_backend("auto")
    assert backends.to_numpy([1, 2]).tolist() == [1, 2]
    backends.synchronize(backends.resolve_backend("auto"))
    assert backends.warm_up("numpy") == 0.0
    with pytest.raises(ValueError, match="backend must be one of"):
        backends.resolve_backend("gpu")


def test_import_loads_no_numpy_scipy_or_numba(tmp_path):
    """``import gpumatch`` is cheap: the solvers (NumPy, SciPy, Numba) load on first use."""
    from conftest import run_in_child

    code = ("import sys, gpumatch\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'numba') if m in sys.modules))\n"
            "print(gpumatch.structural_rank.__module__, gpumatch.MaxFlowSolver.__name__)\n"
            "print('numba' in sys.modules)\n")
    done = run_in_child(code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    first, second, third = done.stdout.splitlines()
    assert first == "[]"
    assert second == "gpumatch.matching.api MaxFlowSolver"
    assert third == "False"      # the solvers' modules do not import Numba either


def test_a_one_off_matching_loads_no_dynamic_solver(tmp_path):
    """A single solve on the host does not import the dynamic solver nor the
    augmenting phases' driver; ``MatchingSolver`` still resolves on first use."""
    from conftest import run_in_child

    code = ("import sys, numpy as np, scipy.sparse as sp, gpumatch\n"
            "gpumatch.maximum_bipartite_matching(sp.csr_matrix(np.eye(4)), backend='numba')\n"
            "print(sorted(m for m in ('gpumatch.matching._dynamic', 'gpumatch.matching._augment') if m in sys.modules))\n"
            "from gpumatch.matching import MatchingSolver\n"
            "print(MatchingSolver is gpumatch.MatchingSolver)\n")
    done = run_in_child(code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["[]", "True"]


def test_warm_up_leaves_nothing_to_compile_for_a_large_solve(tmp_path):
    """After :func:`gpumatch.backends.warm_up` a solve on the multi-threaded
    path (1M edges, 2 threads) and a max flow load no compiled function."""
    if not _backend.numba_available():
        pytest.skip("Numba does not import")
    from conftest import run_in_child

    code = """
import os, sys
os.environ.setdefault("NUMBA_NUM_THREADS", "2")   # the multi-threaded path, on any machine
import numba
import gpumatch
from gpumatch import backends, generators
backends.warm_up("numba")
def loaded():
    return {f"{m}.{k}": len(v.signatures) for m, mod in list(sys.modules.items()) if m.startswith("gpumatch")
            for k, v in vars(mod).items() if isinstance(v, numba.core.registry.CPUDispatcher)}
before = loaded()
A = generators.random_bipartite(200_000, 200_000, 5, seed=0)
res = gpumatch.bipartite_matching(A, backend="numba")
C, s, t = generators.genrmf(4, 4, 1, 100, seed=0)
gpumatch.maximum_flow(C, s, t, backend="numba")
after = loaded()
print(A.nnz >= 1_000_000, "threads" in res.stats["algorithm"])
print(sorted(k for k, v in after.items() if v != before.get(k, 0)))
"""
    done = run_in_child(code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    big, new = done.stdout.splitlines()[-2:]
    assert big == "True True" and new == "[]"

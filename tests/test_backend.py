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

"""Backend selection: the one module that probes CuPy.

``backend="auto"`` picks CuPy when it imports *and* a CUDA device answers,
else the compiled CPU engine (``"numba"``), else NumPy when Numba does not
import.  ``backend="cupy"`` without a usable device, or ``backend="numba"``
without Numba, raises a clear ``RuntimeError``.  The ``"numba"`` backend
keeps its arrays in NumPy (``get_xp`` gives NumPy) and runs the compiled
engines of ``matching/_cpu.py`` and ``flow/_cpu.py``; ``"numpy"`` stays the
vectorised twin of the CUDA kernels.  Every other module asks this one for the array module
(``xp``) instead of importing CuPy itself, so nothing breaks when CuPy is
absent or installed on a machine without a driver.

Output follows input: arrays that come in as CuPy arrays (or cupyx sparse
matrices) go out as CuPy arrays; NumPy/SciPy inputs give NumPy outputs,
whichever backend ran underneath (see :func:`output_like`).
"""

from __future__ import annotations

import functools

import numpy as np

try:  # the only import of cupy at module level in the package
    import cupy as cp  # type: ignore[import-not-found]
    import cupyx.scipy.sparse as cpx_sparse  # type: ignore[import-not-found]
except Exception:  # pragma: no cover - depends on the machine
    cp = None
    cpx_sparse = None

BACKENDS = ("auto", "numpy", "cupy", "numba")

__all__ = [
    "BACKENDS",
    "cp",
    "cupy_available",
    "numba_available",
    "resolve_backend",
    "get_xp",
    "is_cupy_array",
    "is_cupy_sparse",
    "is_cupy_input",
    "to_backend",
    "to_numpy",
    "output_like",
    "synchronize",
    "device_name",
]


@functools.lru_cache(maxsize=1)
def _probe_cupy() -> tuple[bool, str]:
    """Return ``(usable, reason)``; cached: the answer does not change."""
    if cp is None:
        return False, "CuPy is not installed (pip install 'gpumatch[cuda12]' or 'gpumatch[cuda13]')"
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device, broken install
        return False, f"CuPy is installed but no CUDA device answers ({type(exc).__name__}: {exc})"
    if count < 1:
        return False, "CuPy is installed but no CUDA device was found"
    try:  # a device that is listed but cannot run a kernel is no device
        cp.arange(2, dtype=cp.int32).sum().item()
    except Exception as exc:
        return False, f"CuPy cannot run on the CUDA device ({type(exc).__name__}: {exc})"
    return True, ""


def cupy_available() -> bool:
    """True when CuPy imports and a CUDA device runs a kernel."""
    return _probe_cupy()[0]


@functools.lru_cache(maxsize=1)
def _probe_numba() -> tuple[bool, str]:
    """Return ``(usable, reason)`` for the compiled CPU engine; cached."""
    try:
        import numba  # noqa: F401
    except Exception as exc:  # not installed, or broken (e.g. a NumPy it does not support)
        return False, f"Numba does not import ({type(exc).__name__}: {exc}); pip install numba"
    return True, ""


def numba_available() -> bool:
    """True when Numba imports (the ``"numba"`` backend can run)."""
    return _probe_numba()[0]


def resolve_backend(backend: str = "auto") -> str:
    """Turn a ``backend`` option into ``"numpy"``, ``"cupy"`` or ``"numba"``.

    Parameters
    ----------
    backend : {"auto", "numpy", "cupy", "numba"}
        ``"auto"`` picks CuPy when a CUDA device is usable, else Numba (the
        compiled CPU engine), else NumPy when Numba does not import.

    Returns
    -------
    str
        ``"numpy"``, ``"cupy"`` or ``"numba"``.

    Raises
    ------
    ValueError
        If `backend` is not one of the allowed values.
    RuntimeError
        If ``backend="cupy"`` but CuPy or a CUDA device is not usable, or
        ``backend="numba"`` but Numba does not import.

    Examples
    --------
    >>> from gpumatch._backend import resolve_backend
    >>> resolve_backend("numpy")
    'numpy'
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "numpy":
        return "numpy"
    if backend == "numba":
        usable, reason = _probe_numba()
        if not usable:
            raise RuntimeError(f"backend='numba' was requested but {reason}")
        return "numba"
    usable, reason = _probe_cupy()
    if backend == "cupy":
        if not usable:
            raise RuntimeError(f"backend='cupy' was requested but {reason}")
        return "cupy"
    if usable:
        return "cupy"
    return "numba" if _probe_numba()[0] else "numpy"


def get_xp(name: str):
    """The array module for a resolved backend name."""
    if name == "cupy":
        if cp is None:  # pragma: no cover - resolve_backend prevents this
            raise RuntimeError("CuPy is not installed")
        return cp
    return np


def is_cupy_array(x) -> bool:
    """True for a ``cupy.ndarray`` (without importing CuPy when absent)."""
    return cp is not None and isinstance(x, cp.ndarray)


def is_cupy_sparse(x) -> bool:
    """True for a cupyx.scipy.sparse matrix."""
    return cpx_sparse is not None and cpx_sparse.issparse(x)


def is_cupy_input(x) -> bool:
    """True when `x` lives on the GPU (CuPy array, cupyx sparse, or a tuple of them)."""
    if isinstance(x, tuple):
        return any(is_cupy_array(a) for a in x)
    return is_cupy_array(x) or is_cupy_sparse(x)


def to_backend(a, name: str):
    """Move an array to the backend `name` (no copy when it is already there)."""
    if name == "cupy":
        return cp.asarray(a)
    return to_numpy(a)


def to_numpy(a):
    """Return `a` as a NumPy array (copying from the device when needed)."""
    if is_cupy_array(a):
        return cp.asnumpy(a)
    return np.asarray(a)


def output_like(a, cupy_out: bool):
    """Return `a` on the device the caller's input lived on."""
    if cupy_out:
        return cp.asarray(a)
    return to_numpy(a)


def synchronize(name: str) -> None:
    """Wait for the device when `name` is ``"cupy"``; no-op for NumPy and Numba."""
    if name == "cupy":
        cp.cuda.get_current_stream().synchronize()


def device_name() -> str | None:
    """Name of the current CUDA device, or None without one."""
    if not cupy_available():
        return None
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)

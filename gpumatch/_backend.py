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

import contextlib
import functools
import threading

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
    "array_module",
    "to_backend",
    "to_numpy",
    "output_like",
    "synchronize",
    "device_name",
    "plain_reductions",
    "device_entry",
    "reduce",
    "serialized",
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
    try:  # a device that is listed but cannot take a copy and a memset is no device
        # (no kernel: an element-wise kernel would cost a compile on a fresh machine)
        a = cp.asarray(np.arange(2, dtype=np.int32))
        a.data.memset_async(0, a.nbytes)
        if a.get().tolist() != [0, 0]:
            raise RuntimeError("a copy to the device and back changed the data")
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


def cusparse():
    """CuPy's cuSPARSE bindings (``cupy_backends.cuda.libs.cusparse``), imported
    on first use; only call this when CuPy is there."""
    from cupy_backends.cuda.libs import cusparse as cs

    return cs


def array_module(*arrays):
    """``cupy`` if any argument is a CuPy array, else ``numpy``."""
    for a in arrays:
        if is_cupy_array(a):
            return cp
    return np


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


#: While gpumatch runs on CuPy, CuPy's *reductions* (``sum``, ``any``,
#: ``bincount``'s checks, ...) use its plain reduction kernels instead of
#: CUB's (CuPy's default ``CUPY_ACCELERATORS=cub``).  Each CUB reduction is
#: compiled on first use with the CUB headers: on an H100 with an empty
#: kernel cache, 1.7-3.3 s per kernel, 12 of the 21 s of a first
#: ``maximum_flow``, against 0.1-0.2 s for a plain one.  A plain reduction
#: of a whole large array runs on one block, so the per-call ones over large
#: arrays go through :func:`reduce` (two steps); warm times are then level
#: with CUB's (H100, interleaved, median of 7: unit network of random 1M
#: 41.1 / 41.0 ms, matching random 1M 5.0 / 4.9 ms).  CuPy's setting is
#: process-wide: it is restored when the outermost gpumatch call returns,
#: and CuPy code running in another thread meanwhile reduces without CUB
#: too (same results).  False: leave CuPy's setting alone.
PLAIN_REDUCTIONS = True

_reductions_lock = threading.Lock()
_reductions_state = {"depth": 0, "saved": None}


def _accelerator_api():
    core = getattr(cp, "_core", None)
    get = getattr(core, "get_reduction_accelerators", None)
    put = getattr(core, "set_reduction_accelerators", None)
    return (get, put) if get is not None and put is not None else (None, None)


@contextlib.contextmanager
def plain_reductions():
    """Context in which CuPy's reductions do not go through CUB (see
    :data:`PLAIN_REDUCTIONS`).  Re-entrant and shared between threads: the
    first entry saves CuPy's setting, the last exit restores it.  A no-op
    without CuPy, or when CuPy has no such setting."""
    if cp is None or not PLAIN_REDUCTIONS:
        yield
        return
    get, put = _accelerator_api()
    if get is None:  # pragma: no cover - a CuPy without the (private) setting
        yield
        return
    with _reductions_lock:
        if _reductions_state["depth"] == 0:
            _reductions_state["saved"] = list(get())
            put([])
        _reductions_state["depth"] += 1
    try:
        yield
    finally:
        with _reductions_lock:
            _reductions_state["depth"] -= 1
            if _reductions_state["depth"] == 0:
                put(_reductions_state["saved"])


def device_entry(func):
    """Decorator of a public entry point: runs `func` under
    :func:`plain_reductions` when CuPy is installed (nothing else changes)."""
    if cp is None:  # pragma: no cover - depends on the machine
        return func

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with plain_reductions():
            return func(*args, **kwargs)

    return wrapper


def serialized(method):
    """Decorator of a stateful solver's public method: runs it holding the
    solver's ``_lock`` (a :class:`threading.RLock` its ``__init__`` makes),
    so that calls from several threads on one solver take turns instead of
    interleaving their updates of the shared state.  Re-entrant: a locked
    method may call another."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


#: 1-D CuPy arrays of at least this many entries are reduced by
#: :func:`reduce` in two steps while CuPy's plain reductions are in effect.
SPLIT_REDUCE_MIN = 1 << 16
#: Entries per row of the first step (one block of threads each).
SPLIT_REDUCE_ROW = 4096


def reduce(x, op: str):
    """``x.<op>()`` over every entry of the 1-D array `x`, `op` one of
    ``"sum"``, ``"max"``, ``"min"``, ``"any"``, ``"all"`` (a 0-d array of
    `x`'s module, as the method returns).

    Under :func:`plain_reductions`, CuPy reduces a whole array with a single
    block of threads: on an H100, about a millisecond for 7 M entries (the
    flow of a unit network of a million-vertex graph reads a dozen such
    arrays).  A large array is therefore reduced as rows of
    :data:`SPLIT_REDUCE_ROW` entries (a block each) and then over the row
    results.  Anywhere else (NumPy, small arrays, CUB in effect) this is
    ``getattr(x, op)()``.
    """
    n = x.shape[0] if x.ndim == 1 else 0
    if n < SPLIT_REDUCE_MIN or not is_cupy_array(x):
        return getattr(x, op)()
    get = _accelerator_api()[0]
    if get is None or list(get()):
        return getattr(x, op)()
    rows = n // SPLIT_REDUCE_ROW
    head = rows * SPLIT_REDUCE_ROW
    part = getattr(x[:head].reshape(rows, SPLIT_REDUCE_ROW), op)(axis=1)
    if head < n:
        part = cp.concatenate([part, getattr(x[head:], op)().reshape(1).astype(part.dtype, copy=False)])
    return getattr(part, op)()

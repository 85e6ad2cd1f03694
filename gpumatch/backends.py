"""Backends: which engine runs a solve, and moving its results.

Every solver takes ``backend="auto" | "numpy" | "cupy" | "numba"``:

* ``"cupy"``: the GPU, through CuPy (``pip install "gpumatch[cuda12]"`` or
  ``"gpumatch[cuda13]"``);
* ``"numba"``: the compiled CPU engines, the default without a GPU.  They
  are compiled on first use and cached on disk, so the first call of the
  first process after an install takes seconds, and the first call of each
  later process loads them (a fraction of a second): :func:`warm_up` does
  that ahead of a timed call;
* ``"numpy"``: the vectorised NumPy twin of the CUDA kernels, a reference
  that needs no compiler;
* ``"auto"``: CuPy when a CUDA device answers, else Numba, else NumPy.

Results follow the input: CuPy arrays and ``cupyx.scipy.sparse`` matrices
in give CuPy arrays out, NumPy and SciPy in give NumPy out, whichever
engine ran.  :func:`to_numpy` brings either to the host, and
:func:`synchronize` waits for the GPU before a clock is read.

Functions
---------
resolve_backend
    The engine that a ``backend`` option selects here.
cupy_available, numba_available
    Whether the GPU engine or the compiled CPU engine can run.
device_name
    The CUDA device's name, or None.
to_numpy
    A result as a NumPy array, from the GPU where it lives there.
synchronize
    Wait for the GPU's queued work (a no-op on the CPU backends).
warm_up
    Load, or compile on first use, a backend's engines ahead of a timed call.
"""

from __future__ import annotations

import time

from . import _backend
from ._backend import BACKENDS

__all__ = ["BACKENDS", "resolve_backend", "cupy_available", "numba_available", "device_name", "to_numpy",
           "synchronize", "warm_up"]


def resolve_backend(backend: str = "auto") -> str:
    """The engine that a ``backend`` option selects on this machine.

    Parameters
    ----------
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        ``"auto"`` (default) picks ``"cupy"`` when CuPy imports and a CUDA
        device answers, else ``"numba"`` (the compiled CPU engine), else
        ``"numpy"`` when Numba does not import.

    Returns
    -------
    str
        ``"numpy"``, ``"cupy"`` or ``"numba"``.

    Raises
    ------
    ValueError
        If `backend` is not one of the allowed values.
    RuntimeError
        If ``backend="cupy"`` and CuPy or a CUDA device is not usable, or
        ``backend="numba"`` and Numba does not import; the message says why.

    Examples
    --------
    >>> from gpumatch.backends import resolve_backend
    >>> resolve_backend("numpy")
    'numpy'
    >>> resolve_backend("auto") in ("cupy", "numba", "numpy")
    True
    """
    return _backend.resolve_backend(backend)


def cupy_available() -> bool:
    """Whether the GPU engine can run: CuPy imports and a CUDA device answers.

    Returns
    -------
    bool

    Examples
    --------
    >>> from gpumatch.backends import cupy_available, resolve_backend
    >>> cupy_available() == (resolve_backend("auto") == "cupy")
    True
    """
    return _backend.cupy_available()


def numba_available() -> bool:
    """Whether the compiled CPU engine can run (Numba imports).

    Returns
    -------
    bool

    Examples
    --------
    >>> from gpumatch.backends import numba_available
    >>> isinstance(numba_available(), bool)
    True
    """
    return _backend.numba_available()


def device_name() -> str | None:
    """The name of the current CUDA device, or None without a usable one.

    Returns
    -------
    str or None

    Examples
    --------
    >>> from gpumatch.backends import cupy_available, device_name
    >>> (device_name() is None) == (not cupy_available())
    True
    """
    return _backend.device_name()


def to_numpy(a):
    """`a` as a NumPy array, copied from the GPU when it is a CuPy array.

    Parameters
    ----------
    a : array_like
        A solver's result (a NumPy or CuPy array), or anything
        ``numpy.asarray`` takes.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> import gpumatch
    >>> from gpumatch.backends import to_numpy
    >>> A = sp.csr_array([[1, 0], [1, 1]])
    >>> to_numpy(gpumatch.maximum_bipartite_matching(A)).tolist()
    [0, 1]
    """
    return _backend.to_numpy(a)


def synchronize(backend: str) -> None:
    """Wait until the GPU has finished its queued work; a no-op on the CPU.

    GPU calls can return before the device is done, so read a clock after
    this, not before.

    Parameters
    ----------
    backend : {"numpy", "cupy", "numba"}
        A resolved backend (:func:`resolve_backend`).

    Examples
    --------
    >>> import time
    >>> import scipy.sparse as sp
    >>> import gpumatch
    >>> from gpumatch.backends import resolve_backend, synchronize
    >>> backend = resolve_backend("auto")
    >>> t0 = time.perf_counter()
    >>> rank = gpumatch.structural_rank(sp.eye(3, format="csr"), backend=backend)
    >>> synchronize(backend)
    >>> seconds = time.perf_counter() - t0
    >>> rank
    3
    """
    _backend.synchronize(backend)


def warm_up(backend: str = "auto", solvers=("matching", "flow"), *, progress=None) -> float:
    """Load (or, the first time, compile) a backend's engines ahead of a timed call.

    The Numba engines are compiled on their first use after an install and
    cached on disk (about 20 s on two CPU cores); every later process loads
    them on its first call, a fraction of a second.  The GPU engine loads
    its kernels on its first call too.  This runs small matchings and max
    flows through every engine that a solve may use, the multi-threaded
    matching path of graphs of 1M edges or more included, so that the
    next call of any size times the solve alone.  Nothing is done for
    ``"numpy"``.

    Parameters
    ----------
    backend : {"auto", "numpy", "cupy", "numba"}, optional
        The backend to warm up (resolved by :func:`resolve_backend`).
    solvers : sequence of {"matching", "flow", "assignment"}, optional
        The engines to load: ``"matching"`` serves the matchings, the
        structural rank and the Dulmage–Mendelsohn decomposition,
        ``"flow"`` the max flows and minimum cuts, ``"assignment"`` the
        weighted matchings (:func:`~gpumatch.assignment` and the scipy
        drop-ins, and the stacks of :func:`gpumatch.batch.linear_sum_assignment`;
        always the compiled CPU engine, integer and float weights, sparse
        and dense).  Default: matching and flow.
    progress : callable, optional
        Called as ``progress(step, seconds)`` after each step (``step``
        names it, for example ``"matching"``; ``seconds`` is its time), for
        a caller that shows progress while a cold cache compiles.

    Returns
    -------
    float
        Seconds spent.

    Raises
    ------
    ValueError
        For an unknown backend or solver.
    RuntimeError
        As :func:`resolve_backend`.

    Notes
    -----
    The engines specialise on the index type of the graph: this loads the
    32-bit one that every graph of fewer than 2**31 entries uses.  The
    dynamic solvers (:class:`~gpumatch.MaxFlowSolver`,
    :class:`~gpumatch.MatchingSolver`) load their own functions on their
    first update.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> import gpumatch
    >>> from gpumatch.backends import warm_up
    >>> seconds = warm_up("auto", ["matching"])   # compiles or loads once per process
    >>> gpumatch.structural_rank(sp.eye(4, format="csr"))   # times the solve alone
    4
    """
    import numpy as np
    import scipy.sparse as sp

    name = resolve_backend(backend)
    solvers = [solvers] if isinstance(solvers, str) else list(solvers)
    unknown = [s for s in solvers if s not in ("matching", "flow", "assignment")]
    if unknown:
        raise ValueError(f"solvers must name 'matching', 'flow' or 'assignment', got {unknown[0]!r}")
    start = time.perf_counter()
    if name == "numpy":
        return 0.0
    from .flow import maximum_flow
    from .matching import bipartite_matching, maximum_bipartite_matching

    def step(label, fn):
        t0 = time.perf_counter()
        fn()
        if progress is not None:
            progress(label, time.perf_counter() - t0)

    # a 6 x 6 pattern with a structurally singular part: Karp-Sipser, the
    # augmenting search and the König cover all have work to do
    rows = np.array([0, 0, 1, 1, 2, 3, 3, 4, 5, 5])
    cols = np.array([0, 1, 0, 2, 1, 3, 4, 4, 2, 5])
    A = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(6, 6))

    def matching():
        maximum_bipartite_matching(A, backend=name)
        bipartite_matching(A, backend=name, certificate=True)

    if "matching" in solvers:
        step("matching", matching)
        if name == "numba":
            from .matching import _cpu

            step("multi-threaded matching", _cpu.warm_up_threaded)

    # a flow network with a bottleneck and a side arc (push-relabel), and
    # the unit network of a bipartite graph (its matching engine)
    C = sp.csr_array((np.array([9, 9, 1, 9, 9, 1]), (np.array([0, 1, 1, 2, 3, 4]), np.array([1, 2, 5, 3, 4, 5]))),
                     shape=(6, 6))
    U = sp.block_array([[None, sp.csr_array(np.ones((1, 3), dtype=np.int64)), None, None],
                        [None, None, sp.csr_array(np.eye(3, dtype=np.int64)), None],
                        [None, None, None, sp.csr_array(np.ones((3, 1), dtype=np.int64))],
                        [sp.csr_array((1, 1), dtype=np.int64), None, None, None]], format="csr")

    def flow():
        maximum_flow(C, 0, 5, backend=name)
        maximum_flow(U, 0, 7, backend=name)

    if "flow" in solvers:
        step("max flow", flow)

    def weighted():
        from .lap import _batch_cpu, assignment, linear_sum_assignment

        W = np.array([[3, 3, 6, 1], [4, 3, 5, 2], [10, 1, 8, 7], [2, 9, 4, 3]])
        for weights in (W, W + 0.5):
            assignment(sp.csr_array(weights))                       # square: auction prices
            assignment(sp.csr_array(weights[:3]))                   # rectangular
            assignment(sp.csr_array(np.triu(weights)), full=False)  # partial
            linear_sum_assignment(weights)                          # dense
            _batch_cpu.solve_stack(np.stack([weights, weights]), False)   # gpumatch.batch's stacks
            if name == "cupy":   # the GPU auction's kernels (both cost types), dense and batched
                assignment(sp.csr_array(weights), backend="cupy")
                linear_sum_assignment(weights, backend="cupy")
                from .lap._driver import solve_dense_batch

                solve_dense_batch(_backend.cp.asarray(np.stack([weights, weights.T])))

    if "assignment" in solvers and numba_available():
        step("assignment", weighted)
    _backend.synchronize(name)
    return time.perf_counter() - start

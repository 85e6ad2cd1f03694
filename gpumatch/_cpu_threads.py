"""Python threads for the ``"numba"`` backend's multi-threaded code.

The compiled multi-threaded parts of the CPU engines
(:mod:`gpumatch.matching._cpu_parallel`,
:func:`gpumatch._cpu_csr.transpose_parallel`) are plain
``numba.njit(nogil=True)`` functions of one *slice* of the work,
``fn(k, nt, *args)`` for slice ``k`` of ``nt``; :func:`run_slices` runs
the ``nt`` slices at once, slice 0 on the calling thread and the others
on a :class:`~concurrent.futures.ThreadPoolExecutor` of ``nt - 1``
threads (created on first use, one per process and thread count), and
returns when all have (with fewer threads than slices, each thread runs
several in turn).  The compiled code releases the GIL, so the slices run
truly in parallel; the join between two rounds is the barrier.  A round
costs about 50 µs of hand-over on a 2-core CPU (the pool thread's wake-up,
then the caller's), against about 1 µs for a call on one thread.

Why not Numba's ``parallel=True`` / ``prange``: each such function took
2-4 s to compile on a cold cache (against 0.3-0.9 s for a serial one; the
first call on a 1M-edge graph with an empty cache took 8.5 s, 3.1 s with
these threads), and Numba's
threading layers limit where parallel regions run (the ``workqueue`` layer
not from two threads at once, the ``omp`` layer not in a forked child of a
process that used it).  These threads have neither limit: any thread may
call :func:`run_slices` (concurrent callers share the pool, their slices
queue), and a forked child starts a pool of its own.

The number of threads is the caller's (the engines take
``numba.get_num_threads()``, so ``NUMBA_NUM_THREADS`` and
``numba.set_num_threads`` steer them, as for any Numba code).  A slice
must not wait for another slice (each runs to its end on its own): with
that, the pool cannot deadlock, however many callers share it.  Called
from a thread of the pool itself (a slice that calls back, which no
engine does), :func:`run_slices` runs the slices one after the other on
that thread, and :func:`in_worker` lets the engines take their serial path
there.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["run_slices", "in_worker", "pool", "round_cost"]

_lock = threading.Lock()
_pools: dict = {}                 # thread count -> ThreadPoolExecutor of count - 1 threads
_local = threading.local()        # .worker: True on the pool's threads
_round_costs: dict = {}           # thread count -> seconds of an empty round (round_cost)


def _mark_worker():
    _local.worker = True


def _forget_pools():
    """In a forked child: the parent's pool threads do not exist there."""
    global _lock
    _lock = threading.Lock()
    _pools.clear()
    _round_costs.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def in_worker() -> bool:
    """Whether the calling thread is one of the pools' threads."""
    return getattr(_local, "worker", False)


def pool(nt: int) -> ThreadPoolExecutor:
    """The pool of ``nt - 1`` threads that :func:`run_slices` uses for `nt`
    threads (created on first use, once per process and thread count)."""
    p = _pools.get(nt)
    if p is None:
        with _lock:
            p = _pools.get(nt)
            if p is None:
                p = ThreadPoolExecutor(max_workers=nt - 1, thread_name_prefix=f"gpumatch-{nt}",
                                       initializer=_mark_worker)
                _pools[nt] = p
    return p


def _slices(t, threads, nt, fn, args):
    for k in range(t, nt, threads):
        fn(k, nt, *args)


def run_slices(nt: int, fn, *args, threads: int | None = None) -> None:
    """``fn(k, nt, *args)`` for ``k`` in ``range(nt)`` on `threads` threads
    at once (default `nt`; at most `nt`): the caller's and ``threads - 1``
    of the pool, thread ``t`` running slices ``t, t + threads, ...`` in
    turn.  Returns when every thread has; an exception of a slice (which
    ends its thread's turn) is raised then.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._cpu_threads import run_slices
    >>> out = np.zeros(5, np.int64)
    >>> def fill(k, nt, out):
    ...     out[k] = k * nt
    >>> run_slices(5, fill, out, threads=2)
    >>> out.tolist()
    [0, 5, 10, 15, 20]
    """
    threads = nt if threads is None else max(1, min(int(threads), nt))
    if threads <= 1 or in_worker():
        _slices(0, 1, nt, fn, args)
        return
    p = pool(threads)
    futures = [p.submit(_slices, t, threads, nt, fn, args) for t in range(1, threads)]
    try:
        _slices(0, threads, nt, fn, args)
    finally:
        for f in futures:         # every slice has ended before the caller goes on
            f.exception()
    for f in futures:
        f.result()


def _nothing(k, nt):
    pass


def round_cost(threads: int) -> float:
    """Seconds that a round of :func:`run_slices` on `threads` threads
    costs beyond its work: the least of 7 rounds of empty slices, measured
    on first use (once per process and thread count, about 1 ms) and kept.
    0.0 on one thread.

    It grows with the threads (each pool thread is woken and takes the GIL
    to call its slice, one after the other): 22 / 67 / 98 / 172 µs on 2 /
    4 / 8 / 16 threads of a 2-core CPU.
    """
    threads = int(threads)
    if threads <= 1:
        return 0.0
    cost = _round_costs.get(threads)
    if cost is None:
        import time

        best = float("inf")
        for _ in range(7):
            t0 = time.perf_counter()
            run_slices(threads, _nothing)
            best = min(best, time.perf_counter() - t0)
        cost = _round_costs[threads] = best
    return cost

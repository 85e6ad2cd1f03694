"""Device memory of a solve: an estimate by counting arrays, and a check before allocation.

:func:`memory_estimate` adds up the arrays that the GPU drivers allocate
(:mod:`gpumatch.matching._driver` and its augmenting paths,
:mod:`gpumatch.flow._maxflow`) phase by phase, for the id and offset widths
that the graph gets (:func:`gpumatch._validation.graph_dtypes`: int32 ids,
int64 offsets only past ``2**31`` entries), and returns the largest phase:
the peak of CuPy's memory pool.  :func:`check_device_memory` compares it
with the free memory before a driver allocates, and raises
:class:`DeviceMemoryError` (a :class:`MemoryError`) naming both.

The counts follow the drivers; keep them in step when a driver allocates
something new (``benchmarks/bench_scale.py`` prints the estimate beside the
peak of CuPy's pool, measured on a GPU).
"""

from __future__ import annotations

import os
from typing import Literal

from . import _backend
from . import csr as _csr
from .csr import index_dtype_for, offset_dtype_for, widest

__all__ = ["memory_estimate", "memory_phases", "check_device_memory", "DeviceMemoryError", "device_free_bytes",
           "graph_bytes", "unit_flow_phases"]

PROBLEMS = ("matching", "flow")
BACKENDS = ("cupy", "numpy")
LAYOUTS = ("reverse_csr", "bcsr")
#: Rows of a list buffer of the persistent push loop (``_kernels_cuda.push_loop``).
_LOOP_BUF = 4096


class DeviceMemoryError(MemoryError):
    """The GPU has less free memory than a solve needs (:func:`memory_estimate`).

    Attributes ``need`` and ``free``: bytes."""

    def __init__(self, message: str, need: int = 0, free: int = 0) -> None:
        super().__init__(message)
        self.need = int(need)
        self.free = int(free)


def _sizes(shape, nnz, problem):
    m, n = (int(shape[0]), int(shape[1]))
    nnz = int(nnz)
    if m < 0 or n < 0 or nnz < 0:
        raise ValueError(f"shape and nnz must be non-negative, got {(m, n)} and {nnz}")
    if problem == "flow" and m != n:
        raise ValueError(f"a flow network is square, got shape {(m, n)}")
    return m, n, nnz


def memory_phases(shape: tuple, nnz: int, problem: Literal["matching", "flow"] = "matching",
                  backend: Literal["cupy", "numpy"] = "cupy", certificate: bool = False, *,
                  layout: Literal["reverse_csr", "bcsr"] = "reverse_csr", flow_matrix: bool = True,
                  include_input: bool = True) -> dict:
    """Bytes held at each phase of a solve: ``{phase: bytes}`` (see :func:`memory_estimate`)."""
    if problem not in PROBLEMS:
        raise ValueError(f"problem must be one of {PROBLEMS}, got {problem!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    m, n, nnz = _sizes(shape, nnz, problem)
    if problem == "matching":
        return _matching(m, n, nnz, backend, bool(certificate), bool(include_input))
    return _flow(m, nnz, backend, layout, bool(flow_matrix), bool(include_input))


def _matching(m, n, nnz, backend, certificate, include_input):
    # ids reach m + n + 1 (labels); offsets int64 past 2**31 entries (make_state)
    idt = index_dtype_for(m + n + 2)
    i = idt.itemsize
    o = widest(offset_dtype_for(nnz + 1), idt).itemsize
    graph = (m + 1) * o + nnz * i                   # rptr, rind: the validated graph
    csc = (n + 1) * o + nnz * i                     # cptr, cind
    given = graph if include_input else 0
    block = _csr.TRANSPOSE_BLOCK_ENTRIES
    if backend == "cupy" and i == 4 and o == 4 and nnz <= block:
        # cuSPARSE csr2cscEx2: its value output (nnz) and work buffer (about nnz + n)
        transpose = 4 * nnz + 4 * (nnz + n + 1)
    elif backend == "cupy" and i == 4:
        # csr._transpose_blocked: the blocks' transposes side by side, then one block's cuSPARSE
        # work (its 32-bit pointers too), or the merge's cursor, long-column list and prefix sum
        blocks = -(-nnz // block)
        nb = min(nnz, block)
        stage = blocks * (n + 1) * 4 + nnz * 4
        transpose = stage + max(4 * nb + 4 * (nb + n + 1) + 12 * (m + 1), n * o + n * 4 + (n + 1) * o)
    elif backend == "cupy":
        # the counting transpose: the pointers twice (prefix sum) and a cursor per column
        transpose = 2 * (n + 1) * o
    else:
        # SciPy's tocsc: a CSC of int8 values and its index arrays, cast to our widths
        transpose = nnz + (n + 1) * 8 + nnz * 8
    state = (2 * m + 2 * n) * i                     # mu_row, mu_col, psi_row, psi_col
    claim = m * i
    relabel = 2 * m * i + n * i + 64                # the BFS frontiers, the active list
    lists = 2 * n * i + _LOOP_BUF * i               # the dense list pair, the push loop's buffer
    temps = n + max(m, n)                           # a mask and a reduction's copy
    # the augmenting-path forest (_augment._Cuda.arrays): 6 m- and 7 n-arrays of ids, 3 m-arrays of
    # int32, 2 of bytes (a dynamic solver's batches add a claim per tree and a column list: not counted)
    forest = 6 * m * i + 7 * n * i + 14 * m
    out = {
        "setup": given + csc + transpose,
        "push-relabel": given + csc + state + claim + relabel + lists + temps,
        # the push lists and the claims are released before the forest is built
        "augmenting paths": given + csc + state + relabel + forest + temps,
    }
    if certificate:   # the forest is released but for its marks of rows and columns; the cover masks
        out["certificate"] = given + csc + state + relabel + (m + n) * i + 3 * (m + n)
    out["result"] = given + csc + state + 2 * (m + n) * 4
    return out


def _flow(V, E, backend, layout, flow_matrix, include_input):
    idt = index_dtype_for(V + 1)
    i = idt.itemsize
    o = widest(offset_dtype_for(2 * E + 1), idt).itemsize
    given = ((V + 1) * o + E * i + 8 * E) if include_input else 0   # indptr, indices, int64 capacities
    st = 12 * V                                     # height (int32), excess (int64)
    if layout == "reverse_csr":
        layout_bytes = 8 * E + (V + 1) * o + E * i + E * o     # flow; in_indptr, in_indices, in_to_out
        if backend == "cupy" and i == 4 and o == 4:
            transpose = 4 * E + 4 * (E + V + 1)                 # cuSPARSE: the positions moved, work buffer
        elif backend == "cupy":
            transpose = 2 * (V + 1) * o
        else:
            transpose = (V + 1) * 8 + E * 16
        setup = given + 8 * E + (V + 1) * o + E * i + E * o + transpose
        partner = E * o                             # the pair watch's partner index
    else:
        B = 2 * E                                   # a merged entry per direction
        layout_bytes = (V + 1) * o + B * (i + 8 + o + 8) + 8 * E   # bptr, bnbr, resid, partner, cap_entry; entry_of_arc
        setup = given + layout_bytes + B * 8 * 4    # the keys, capacities and order of the merge sort
        partner = 0
    ctx = 2 * V * i + 4 * V + 2 * 8 * V + V * i     # worklists, stamps; hub search temporaries
    solve = given + layout_bytes + st + ctx + partner + V * (2 * o + i) + 64 * 1024
    out = {"setup": max(setup, given + layout_bytes + st), "push-relabel": solve}
    kept = given + 8 * E + V                        # the arc flows and the cut side survive the solve
    if flow_matrix:
        # gpumatch_pr_flow_keys / flow_csr: partner, 2E keys and values, their sort, the CSR
        out["flow matrix"] = kept + E * o + 2 * E * 8 * 2 + 2 * E * 8 * 4 + 2 * E * (i + 8) + (V + 1) * o
    else:
        out["cut"] = kept + E * o + E * 8 + 3 * E
    return out


def unit_flow_phases(V: int, E: int, m: int, n: int, nnz: int, backend: Literal["cupy", "numpy"] = "cupy", *,
                     include_input: bool = True) -> dict:
    """Bytes held at each phase of the maximum flow of a unit bipartite
    network by matching (:mod:`gpumatch.flow._unit`): `V` vertices and `E`
    arcs (self-loops and arcs of capacity 0 dropped), ``L`` of `m`
    vertices, ``R`` of `n`, `nnz` arcs ``L -> R``.

    Not part of :func:`memory_estimate` (``problem="flow"``), which a
    caller checks before the structure is known: the driver checks these
    phases once its detection has the three sizes, and runs push-relabel
    instead when they do not fit.  The detection itself holds less than
    push-relabel's layout (see :func:`gpumatch.flow._unit.detect`).  Not
    counted: the sort that makes a non-canonical network's pattern unique
    (``maximum_flow`` passes canonical arrays)."""
    idt = index_dtype_for(V + 1)
    i = idt.itemsize
    o = widest(offset_dtype_for(2 * E + 1), idt).itemsize         # the network's widths (as _solve_on)
    w = index_dtype_for(m + 1, n + 1).itemsize                      # local ids of L and R
    given = ((V + 1) * o + E * i + 8 * E) if include_input else 0
    # kept from the pattern to the write-back: sink arcs' positions and
    # tails, local ids of the heads and tails, the L -> R arcs' positions
    # and local ends (their columns are the pattern's column array)
    kept = n * (8 + o) + (m + n) * w + nnz * (8 + 2 * w)
    out = {
        # marks, arc tails, L -> R mask; the local ids' prefix sums (int64); the gathers of the arcs' ends
        "unit pattern": given + V + o * E + E + 2 * V * (16 + w) + kept + nnz * o,
    }
    match = _matching(m, n, nnz, backend, True, True)   # the pattern, its transpose, G-PR, the König BFS
    mirror = 2 * (m + n) * w + 2 * n * w                  # the mirrored state's labels, claims, BFS buffers
    out.update({f"unit {k}": given + kept + v + (mirror if k == "certificate" else 0) for k, v in match.items()})
    # the mates, the cut side, the arc flows, the matched arcs' search
    out["unit flow"] = given + kept + 2 * (m + n) * w + V + 8 * E + nnz * (w + 1) + 24 * min(m, n)
    return out


def memory_estimate(shape: tuple, nnz: int, problem: Literal["matching", "flow"] = "matching",
                    backend: Literal["cupy", "numpy"] = "cupy", certificate: bool = False, *,
                    layout: Literal["reverse_csr", "bcsr"] = "reverse_csr", flow_matrix: bool = True,
                    include_input: bool = True) -> int:
    """Bytes of memory a solve needs at its peak (on the GPU: CuPy's memory pool).

    The arrays the driver allocates are counted phase by phase for the
    widths the graph gets: vertex ids int32 while they fit, entry offsets
    (pointers and entry positions) int64 only past ``2**31 - 1`` entries.
    The estimate is the largest phase.

    Parameters
    ----------
    shape : tuple of int
        ``(m, n)`` of the matrix; for ``problem="flow"`` a square ``(V, V)``
        capacity matrix (the network as passed to :func:`gpumatch.maximum_flow`).
    nnz : int
        Stored entries (edges, or arcs of the network).
    problem : {"matching", "flow"}
        :func:`gpumatch.bipartite_matching` (G-PR, its augmenting-path
        tail and, with `certificate`, the König cover), or
        :func:`gpumatch.maximum_flow` (push-relabel).
    backend : {"cupy", "numpy"}
        ``"cupy"``: device memory (CuPy's pool, cuSPARSE's work buffer
        included); ``"numpy"``: the NumPy twin's host arrays (approximate:
        NumPy's temporaries are not counted).
    certificate : bool
        Matching: also the König cover (``certificate=True``).
    layout : {"reverse_csr", "bcsr"}
        Flow: the residual layout.
    flow_matrix : bool
        Flow: count :func:`gpumatch.maximum_flow`'s skew-symmetric flow
        matrix (a sort of ``2 nnz`` keys, by far the largest phase); False
        for :func:`gpumatch.minimum_cut` and ``method="flow"`` matchings.
    include_input : bool
        Count the validated graph's own arrays (``indptr``, ``indices`` and,
        for flow, int64 capacities); False when they are already on the
        device and only the rest is to be allocated.

    Returns
    -------
    int
        Bytes.

    See Also
    --------
    memory_phases : the same, phase by phase.

    Notes
    -----
    For a random bipartite graph of degree 5 past ``2**31`` entries (int32
    ids, int64 offsets), a certified matching holds about 30 bytes per
    entry at its peak (the augmenting-path forest's per-vertex arrays beside
    the graph and its transpose); int64 ids too would need about 50.
    Counted: the arrays of the drivers and of cuSPARSE's transpose; not
    counted: CuPy's reduction scratch and kernel launch state (kilobytes),
    and, with int64 offsets, the batch sort of columns of more than 64
    entries (:data:`gpumatch.csr.TRANSPOSE_SORT_SHARE`, at most about 2.5
    bytes per entry; none on random graphs of small degree).

    Examples
    --------
    >>> import gpumatch
    >>> need = gpumatch.memory_estimate((800_000_000, 800_000_000), 4_000_000_000, certificate=True)
    >>> round(need / 4_000_000_000, 1)        # bytes per entry
    30.4
    >>> need < 141e9                           # fits one H200
    True
    """
    return int(max(memory_phases(shape, nnz, problem, backend, certificate, layout=layout,
                                 flow_matrix=flow_matrix, include_input=include_input).values()))


def device_free_bytes() -> tuple:
    """``(free on the device, free in CuPy's default memory pool)``: bytes a
    new allocation can use (``cupy.cuda.runtime.memGetInfo`` and the pool's
    cached blocks)."""
    cp = _backend.cp
    free, _total = cp.cuda.runtime.memGetInfo()
    return int(free), int(cp.get_default_memory_pool().free_bytes())


def check_device_memory(need: int, what: str) -> None:
    """Raise :class:`DeviceMemoryError` when the GPU has less free memory
    than `need` bytes (the device's free memory plus CuPy's pooled free
    blocks); `what` names the solve in the message.  ``GPUMATCH_MEMORY_CHECK=0``
    turns the check off (the solve then fails in CuPy's allocator instead)."""
    if os.environ.get("GPUMATCH_MEMORY_CHECK", "1").strip().lower() in ("0", "false", "no", "off"):
        return
    dev, pool = device_free_bytes()
    free = dev + pool
    if need > free:
        gib = 2.0 ** 30
        raise DeviceMemoryError(
            f"{what} needs about {need / gib:.2f} GiB of GPU memory (gpumatch.memory_estimate), but only "
            f"{free / gib:.2f} GiB is free ({dev / gib:.2f} GiB on the device and {pool / gib:.2f} GiB in CuPy's "
            "memory pool); free device arrays, run a smaller graph, or set GPUMATCH_MEMORY_CHECK=0 to try anyway",
            need, free)


def graph_bytes(*arrays) -> int:
    """Bytes of the device arrays among `arrays` (already allocated: not to be counted again)."""
    return int(sum(a.nbytes for a in arrays if a is not None and _backend.is_cupy_array(a)))


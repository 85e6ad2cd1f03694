"""Many problems at once: packed solves on one device, and chunks over Dask workers.

Public functions
----------------
maximum_bipartite_matching
    A list of graphs (or Matrix Market paths) in, a list of matchings out.
maximum_flow
    A list of ``(csgraph, source, sink)`` problems (or DIMACS paths) in, a
    list of :class:`gpumatch.MaximumFlowResult` out.
min_weight_full_bipartite_matching
    A list of sparse weight matrices (or Matrix Market paths) in, a list of
    ``(row_ind, col_ind)`` minimum weight full matchings out.
linear_sum_assignment
    A ``(k, m, n)`` stack of dense cost matrices in, two ``(k, min(m, n))``
    arrays of row and column indices out, the problems solved on the CPU's
    threads at once; or a list of matrices of any shapes in, a list of
    ``(row_ind, col_ind)`` out.

They return their results in the order of the input, each exactly in the
format of the single-problem function (:func:`gpumatch.maximum_bipartite_matching`,
:func:`gpumatch.maximum_flow`, :func:`gpumatch.min_weight_full_bipartite_matching`,
:func:`gpumatch.linear_sum_assignment`; a stack's results stacked).

How a batch is solved
---------------------
*Packing (one process, one device).*  Small problems are joined into one
problem and solved by one call of the single-problem function, so that a
thousand problems of a few hundred edges pay for one launch sequence, not a
thousand:

* matching: the block-diagonal matrix of the graphs.  A maximum matching of
  a disjoint union is the union of maximum matchings of its parts (an
  augmenting path of one part would augment the union), and G-PR only ever
  matches along stored entries, so each block's share of the result is a
  maximum matching of that graph; the rows and columns are shifted back.
* assignment: the block-diagonal matrix of the weight matrices, each one
  transposed first when it has more rows than columns; a full matching of
  the union is then a full matching of every block, of least total weight
  exactly when each block's is (:func:`gpumatch._batch_pack._pack_assignment`).
  Integer and floating-point problems are packed apart.
* flow: the disjoint union of the networks plus a super source ``S`` with an
  arc ``S -> s_i`` to every source and an arc ``t_i -> T`` from every sink to
  a super sink ``T`` (the argument is in the comment of :func:`_pack_flow`);
  each problem gets back its own flow matrix, value and minimum cut, equal
  to what a single :func:`gpumatch.maximum_flow` call returns (the flow
  itself may differ: maximum flows are not unique; the value and the source
  side of the returned cut are).

A problem's *size* is its stored entries plus its vertices (rows + columns
for a matching).  Problems are taken in order; consecutive small ones join
the open pack while its size stays within ``pack_edges`` (default
:data:`PACK_EDGES` of the backend that runs: about two million on the GPU,
where a smaller pack leaves the device idle between launches, and 131,072 on
the CPU, where every iteration of the NumPy twin passes over the whole pack
and the pack iterates as long as its slowest member); a problem larger than
``pack_edges // 4``, or than :data:`PACK_ALONE` of the backend (65,536 on
the GPU, 512 for Numba), is solved alone, with the single-problem call (it
fills the device by itself).  The joining arrays (offsets, the extra arcs, the splitting of the results) are
computed with the backend's array module, on the GPU when the backend is
CuPy.  If a joint solve fails for any reason, its problems are solved one by
one, so that an error is always reported for the problem that caused it.

*Dask.*  With ``client=`` (a ``dask.distributed.Client``), the packs are
tasks: each runs the same packing on a worker, and the results are gathered
in order.  Files are read on the workers.  With one worker per GPU
(``dask_cuda.LocalCUDACluster`` on one machine, ``dask-cuda-worker`` on
several), each worker solves on its own device; the CUDA kernels are
compiled once per worker process (the module stays imported between tasks)
and reused by every later task.  Its driver, ``gpumatch._batch_dask``, is
the only module of gpumatch that imports dask, and only when a client is
given.

Errors
------
An invalid problem raises its usual exception (same type, message prefixed
by ``"problem <index>: "``, attribute ``index``).  With ``errors="return"``
that exception is put in the problem's slot of the result list instead and
the other problems are still solved.  With ``errors="raise"`` (default) the
exception of the lowest failing index is raised; work on later problems may
already have been done.  Invalid options (an unknown keyword, a bad
``perm_type``, ``errors`` or ``backend``) raise at once, before any work;
so do bad values of the solver's options (``method``, ``layout``, ...),
checked on a one-edge problem, except with a client, where the backend is
only known on the workers and such an error comes back for every problem.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from . import _backend, _batch_dask  # noqa: F401 (_backend: tests reach it as batch._backend)
from . import flow as _flow
from . import matching as _matching
from ._batch_plan import _ERRORS, _indexed
from ._batch_plan import (PACK_ALONE, PACK_EDGES, PROGRESS_MIN, _alone_at, _as_list,  # noqa: F401 (PROGRESS_MIN:
                          _check_common, _check_options, _default_pack_edges, _estimate,  # documented here)
                          _first_error, _flow_item, _plan, _progress_bar, _solve_chunk)
from ._validation import check_option
from .lap import _batch_cpu
from .lap import _problems
from .lap import api as _lap

__all__ = ["maximum_bipartite_matching", "maximum_flow", "min_weight_full_bipartite_matching",
           "linear_sum_assignment", "PACK_EDGES", "PACK_ALONE"]


# ---------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------


def maximum_bipartite_matching(graphs, perm_type="row", *, backend="auto", client=None, errors="raise",
                               progress=None, pack_edges=None, **options):
    """Maximum bipartite matchings of many graphs, packed into few solves.

    Parameters
    ----------
    graphs : sequence
        Graphs as :func:`gpumatch.maximum_bipartite_matching` accepts them
        (scipy or cupyx sparse, ``(indptr, indices, shape)`` tuples), or
        paths (``str`` or path-like) of Matrix Market files (``.mtx``,
        ``.mtx.gz``), read where they are solved: on the workers when
        `client` is given.  With a client, also Dask Futures of graphs
        already on the cluster (each is a task of its own).
    perm_type : {"row", "column"}, optional
        As in :func:`gpumatch.maximum_bipartite_matching`.
    backend : str, optional
        Any backend name the single-problem function accepts (``"auto"``,
        ``"numpy"``, ``"cupy"``, ...); passed through to it.  With a client
        it is resolved on each worker.
    client : dask.distributed.Client, optional
        Solve the packs as tasks on the client's workers (needs
        ``gpumatch[dask]``).  None: in this process.
    errors : {"raise", "return"}, optional
        ``"raise"``: raise the error of the first bad problem, its index in
        the message.  ``"return"``: put that exception in the problem's
        slot and solve the others.
    progress : bool or None, optional
        Show a progress bar (tqdm, advanced as problems or, with a client,
        the workers' chunks come back).  None: only for batches of at least
        :data:`PROGRESS_MIN` problems, and only on a terminal.
    pack_edges : int or None, optional
        Size budget of a pack (stored entries plus rows and columns); a
        graph larger than a quarter of it is solved alone.  None: the
        backend's :data:`PACK_EDGES`.  0: every graph alone.
    **options
        Passed to :func:`gpumatch.maximum_bipartite_matching` (``method``,
        ``init``, ``relabel_k``, ``shrink_threshold``).  ``initial`` (a warm
        start of one graph) is not accepted.

    Returns
    -------
    list
        One int32 array per graph, in order, as the single-problem function
        returns it (CuPy for GPU input, NumPy otherwise); with
        ``errors="return"``, the exception in the slot of a bad graph.

    Raises
    ------
    TypeError, ValueError, OverflowError, OSError
        For a bad graph or file (``errors="raise"``), the message starting
        with ``"problem <index>: "``; for bad options, before any work.
    ImportError
        With a client, when dask is not installed.

    Notes
    -----
    Small graphs are solved together as one block-diagonal matrix (see the
    module's notes); several maximum matchings may exist and which one is
    returned may differ from a single call's (the size does not).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import batch
    >>> A = sp.csr_matrix([[1, 1], [1, 0]])
    >>> B = sp.csr_matrix([[1, 0, 1]])
    >>> [m.tolist() for m in batch.maximum_bipartite_matching([A, B], backend="numpy")]
    [[1, 0], [0, -1, -1]]
    """
    check_option("perm_type", perm_type, _matching.api.PERM_TYPES)
    _check_common(backend, errors, progress, pack_edges, client)
    if "initial" in options:
        raise TypeError("initial (a warm start of one graph) is not accepted by the batch functions; "
                        "call gpumatch.maximum_bipartite_matching for that graph")
    _check_options(_matching.maximum_bipartite_matching, options, ("graph", "perm_type", "backend"))
    items = _as_list(graphs, "graphs")
    if client is None:
        # options' values are checked once, on a one-edge graph, before any work
        _matching.maximum_bipartite_matching(sp.csr_matrix(np.ones((1, 1), dtype=np.int8)), perm_type,
                                             backend=backend, **options)
    return _run("matching", items, backend, perm_type, options, errors, progress, pack_edges, client)


def maximum_flow(problems, *, backend="auto", client=None, errors="raise", progress=None,
                 pack_edges=None, **options):
    """Maximum flows of many networks, packed into few solves.

    Parameters
    ----------
    problems : sequence
        ``(csgraph, source, sink)`` triples as
        :func:`gpumatch.maximum_flow` takes them, or ``(path, source,
        sink)`` with the path of a DIMACS max-flow file (``.max``,
        ``.max.gz``) or of a Matrix Market file of capacities (``.mtx``,
        ``.mtx.gz``).  For a DIMACS file, ``source`` and ``sink`` may be
        None (or the path may stand alone, not in a tuple): the file's
        ``n ... s`` and ``n ... t`` lines give them; integers (0-based)
        override the file's.  Files are read where they are solved: on the
        workers when `client` is given.  With a client, `csgraph` may also
        be a Dask Future of a matrix already on the cluster.
    backend : str, optional
        Any backend name :func:`gpumatch.maximum_flow` accepts; passed
        through to it.  With a client it is resolved on each worker.
    client : dask.distributed.Client, optional
        Solve the packs as tasks on the client's workers (needs
        ``gpumatch[dask]``).  None: in this process.
    errors : {"raise", "return"}, optional
        As in :func:`maximum_bipartite_matching`.
    progress : bool or None, optional
        As in :func:`maximum_bipartite_matching`.
    pack_edges : int or None, optional
        Size budget of a pack (stored entries plus vertices); a network
        larger than a quarter of it is solved alone.  None: the backend's
        :data:`PACK_EDGES`.  0: every network alone.
    **options
        Passed to :func:`gpumatch.maximum_flow` (``method``, ``layout``).

    Returns
    -------
    list of MaximumFlowResult
        In order, each as :func:`gpumatch.maximum_flow` returns it for that
        problem alone: ``flow_value``; ``flow``, the skew-symmetric CSR of
        the caller's kind whose pattern is the network's plus its
        transpose; ``source_side``, the vertices that cannot reach the
        sink in the residual graph (the same set for every maximum flow);
        ``stats``, those of the solve that served the problem (shared by a
        pack) with a ``"batch"`` entry: ``pack`` (index of the pack in its
        chunk), ``problems`` (how many it held), ``vertices``, ``arcs``,
        ``process`` (id of the process that solved it) and
        ``chunk_in_process`` (how many chunks that process has run).  With
        ``errors="return"``, the exception in the slot of a bad problem.

    Raises
    ------
    TypeError, ValueError, OverflowError, OSError
        For a bad problem or file (``errors="raise"``), the message starting
        with ``"problem <index>: "``; for bad options, before any work.
    ImportError
        With a client, when dask is not installed.

    Notes
    -----
    Small networks are solved together as one network with a super source
    and a super sink (see :func:`_pack_flow` for why every network gets its
    own maximum flow and the same minimum cut as alone).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import batch
    >>> C1 = sp.csr_matrix([[0, 3, 2], [0, 0, 2], [0, 0, 0]])
    >>> C2 = sp.csr_matrix([[0, 5], [0, 0]])
    >>> res = batch.maximum_flow([(C1, 0, 2), (C2, 0, 1)], backend="numpy")
    >>> [int(r.flow_value) for r in res]
    [4, 5]
    >>> res[0].source_side.tolist()
    [True, True, False]
    """
    _check_common(backend, errors, progress, pack_edges, client)
    _check_options(_flow.maximum_flow, options, ("csgraph", "source", "sink", "backend"))
    items = [_flow_item(p) for p in _as_list(problems, "problems")]
    if client is None:
        _flow.maximum_flow(sp.csr_matrix(np.array([[0, 1], [0, 0]])), 0, 1, backend=backend, **options)
    return _run("flow", items, backend, None, options, errors, progress, pack_edges, client)


def min_weight_full_bipartite_matching(graphs, maximize=False, *, backend="auto", client=None, errors="raise",
                                       progress=None, pack_edges=None):
    """Minimum weight full matchings of many sparse bipartite graphs, packed into few solves.

    Parameters
    ----------
    graphs : sequence
        Weight matrices as :func:`gpumatch.min_weight_full_bipartite_matching`
        accepts them (scipy or cupyx sparse CSR, CSC or COO), or paths of
        Matrix Market files (``.mtx``, ``.mtx.gz``), read where they are
        solved: on the workers when `client` is given.  With a client, also
        Dask Futures of matrices already on the cluster.
    maximize : bool, optional
        Maximum weight full matchings instead (for every graph).
    backend : str, optional
        Any backend name the single-problem function accepts; passed
        through to it.  With a client it is resolved on each worker.
    client : dask.distributed.Client, optional
        Solve the packs as tasks on the client's workers (needs
        ``gpumatch[dask]``).  None: in this process.
    errors : {"raise", "return"}, optional
        ``"raise"``: raise the error of the first bad graph (no full
        matching, a NaN weight, ...), its index in the message.
        ``"return"``: put that exception in the graph's slot and solve the
        others.
    progress : bool or None, optional
        As in :func:`maximum_bipartite_matching`.
    pack_edges : int or None, optional
        As in :func:`maximum_bipartite_matching`.

    Returns
    -------
    list
        One ``(row_ind, col_ind)`` pair of arrays per graph, in order, as
        the single-problem function returns it (CuPy for cupyx input); with
        ``errors="return"``, the exception in the slot of a bad graph.

    Raises
    ------
    TypeError, ValueError, OverflowError, OSError
        For a bad graph or file (``errors="raise"``), the message starting
        with ``"problem <index>: "``, e.g. ``"problem 3: no full matching
        exists"``; for bad options, before any work.
    RuntimeError
        ``backend="cupy"`` without a usable CUDA device.
    ImportError
        With a client, when dask is not installed.

    See Also
    --------
    linear_sum_assignment : many dense cost matrices.
    gpumatch.assignment : one problem, with its dual certificate.

    Notes
    -----
    Small graphs are solved together as one block-diagonal matrix (see the
    module's notes): one validation, one maximum matching and one run of
    the engine for the pack instead of one per graph.  A pack with a graph
    that has no full matching is solved again one graph at a time, so that
    the error names that graph.  Several optimal matchings may exist, and
    which one is returned may differ from a single call's (the total weight
    does not).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch import batch
    >>> A = sp.csr_matrix([[3, 3, 6], [4, 3, 5], [10, 1, 8]])
    >>> B = sp.csr_matrix([[5, 1], [1, 5], [2, 2]])
    >>> [(r.tolist(), c.tolist()) for r, c in batch.min_weight_full_bipartite_matching([A, B])]
    [([0, 1, 2], [0, 2, 1]), ([0, 1], [1, 0])]
    >>> res = batch.min_weight_full_bipartite_matching([A, sp.csr_matrix([[1, 0], [2, 0]])], errors="return")
    >>> res[1]
    ValueError('problem 1: no full matching exists')
    """
    maximize = bool(maximize)   # scipy takes any truthy value
    _check_common(backend, errors, progress, pack_edges, client)
    items = _as_list(graphs, "graphs")
    if client is None:
        # the backend is checked once, on a one-entry graph, before any work
        _lap.min_weight_full_bipartite_matching(sp.csr_matrix(np.ones((1, 1), dtype=np.int8)), backend=backend)
    return _run("assignment", items, backend, maximize, {}, errors, progress, pack_edges, client)


def linear_sum_assignment(cost_matrices, maximize=False, *, errors="raise", progress=None):
    """Linear sum assignments of many dense cost matrices, solved on all CPU threads at once.

    Parameters
    ----------
    cost_matrices : array, shape (k, m, n), or sequence of 2-D arrays
        A stack of ``k`` cost matrices of one shape (a NumPy array, or a
        CuPy array, solved on the GPU), or a list of matrices of any shapes
        (array_like each).  Each matrix means what it means to
        :func:`gpumatch.linear_sum_assignment`: every entry is an allowed
        pair, ``inf`` (``-inf`` with `maximize`) a forbidden one; integer
        and boolean costs are solved exactly in int64, others in float64.
        The input is only read.
    maximize : bool, optional
        Maximise every total instead.
    errors : {"raise", "return"}, optional
        ``"raise"``: raise the error of the first bad problem (no
        assignment of finite cost, a NaN, ...), its index in the message.
        ``"return"``: solve the others; a stack's bad problems get ``-1``
        in every place of their rows of both arrays (call
        :func:`gpumatch.linear_sum_assignment` on one to see its error), a
        list's get the exception in their slot.
    progress : bool or None, optional
        Show a progress bar (tqdm).  None: only for at least
        :data:`PROGRESS_MIN` problems, and only on a terminal.

    Returns
    -------
    row_ind, col_ind : ndarray of int64, shape (k, min(m, n))
        For a stack: ``row_ind[t], col_ind[t]`` is what
        :func:`gpumatch.linear_sum_assignment` returns for
        ``cost_matrices[t]`` (rows sorted; ``arange(m)`` when ``m <= n``),
        and ``cost_matrices[t][row_ind[t], col_ind[t]].sum()`` its optimum;
        ``numpy.take_along_axis`` gives all the totals at once (Examples).
        CuPy arrays for a CuPy stack.
    list
        For a list: one ``(row_ind, col_ind)`` pair per matrix, in order.

    Raises
    ------
    ValueError
        A stack that is not 3-D; for a bad problem (``errors="raise"``), its
        error as :func:`gpumatch.linear_sum_assignment` raises it, the
        message starting with ``"problem <index>: "`` (e.g. ``"problem 2:
        cost matrix is infeasible"``), with an ``index`` attribute.
    TypeError, OverflowError
        Entries that are not real numbers, or integers too large to solve
        exactly (for a stack, of any problem: they share one dtype).

    See Also
    --------
    min_weight_full_bipartite_matching : many sparse problems.
    gpumatch.linear_sum_assignment : one matrix.

    Notes
    -----
    Each problem is solved by the dense engine of
    :func:`gpumatch.linear_sum_assignment` (shortest augmenting paths after
    Jonker and Volgenant), in compiled code that releases the GIL; the
    problems are dealt to ``numba.get_num_threads()`` threads
    (``NUMBA_NUM_THREADS`` or ``numba.set_num_threads`` steer them), which
    solve theirs one after the other with no Python in between.  A stack of
    fewer than :data:`gpumatch.lap._batch_cpu.PARALLEL_MIN_WORK` entries
    runs on one thread.  A list is solved as one stack per shape (its
    matrices copied into it), on the CPU.  A CuPy stack is solved on its
    device where one answers, in one launch of the GPU auction, a block of
    threads per problem (:func:`gpumatch.lap._driver.solve_dense_batch`:
    integer costs exactly, floats to within ``min(m, n) * eps`` of each
    optimum, ``eps`` about ``2**-40`` of the problem's largest cost). With
    Dask, ``dask.array.map_blocks`` over the first axis of a stack spreads
    it over workers.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch import batch
    >>> costs = np.array([[[4, 1, 3], [2, 0, 5], [3, 2, 2]],
    ...                   [[1, 2, 3], [2, 4, 6], [3, 6, 9]]])
    >>> row_ind, col_ind = batch.linear_sum_assignment(costs)
    >>> col_ind.tolist()
    [[1, 0, 2], [2, 1, 0]]
    >>> np.take_along_axis(costs, col_ind[:, :, None], axis=2)[:, :, 0].sum(axis=1).tolist()
    [5, 10]
    >>> [c.tolist() for r, c in batch.linear_sum_assignment([[[1, 5]], [[2, 1], [1, 2]]])]
    [[0], [1, 0]]
    """
    check_option("errors", errors, _ERRORS)
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True, False or None, got {progress!r}")
    maximize = bool(maximize)
    if isinstance(cost_matrices, np.ndarray) or _backend.is_cupy_array(cost_matrices):
        return _lsa_stack(cost_matrices, maximize, errors, progress)
    items = _as_list(cost_matrices, "cost_matrices")
    results: list[Any] = [None] * len(items)
    groups: dict = {}
    for i, item in enumerate(items):
        try:
            c, cupy_out = _dense_item(item)
        except Exception as exc:
            results[i] = _indexed(exc, i)
            continue
        groups.setdefault((c.shape, c.dtype), []).append((i, c, cupy_out))
    bar = _progress_bar(progress, len(items), "assignment")
    try:
        if bar is not None:
            bar.update(len(items) - sum(len(g) for g in groups.values()))
        for members in groups.values():
            C = np.stack([c for _, c, _ in members])
            rows, cols, status = _batch_cpu.solve_stack(C, maximize, chunk=_chunk(bar, len(members)),
                                                        progress=None if bar is None else bar.update)
            for t, (i, c, cupy_out) in enumerate(members):
                if status[t]:
                    results[i] = _single_error(c, maximize, i)
                else:
                    results[i] = (_backend.output_like(rows[t].copy(), cupy_out),
                                  _backend.output_like(cols[t].copy(), cupy_out))
    finally:
        if bar is not None:
            bar.close()
    if errors == "raise":
        worst = _first_error(results, range(len(results)), None)
        if worst is not None:
            exc = results[worst]
            raise exc from exc.__cause__
    return results


def _dense_item(item):
    """A list item of :func:`linear_sum_assignment` as int64 or float64, and whether it was CuPy."""
    return _problems._dense_matrix(item, "gpumatch.batch.min_weight_full_bipartite_matching")


def _lsa_stack(cost_matrices, maximize, errors, progress):
    cupy_out = _backend.is_cupy_array(cost_matrices)
    if cupy_out and _backend.cupy_available() and _backend.numba_available():
        return _lsa_stack_gpu(cost_matrices, maximize, errors, progress)
    a = np.asarray(_backend.to_numpy(cost_matrices) if cupy_out else cost_matrices)
    if a.ndim != 3:
        raise ValueError(f"cost_matrices: expected a stack of matrices (a 3-D array of shape (k, m, n)), got a "
                         f"{a.ndim}-D array; for one matrix call gpumatch.linear_sum_assignment, and pass a "
                         "list for matrices of several shapes")
    C = np.ascontiguousarray(_problems._numeric_values(a, "cost_matrices"))
    k = C.shape[0]
    bar = _progress_bar(progress, k, "assignment")
    try:
        rows, cols, status = _batch_cpu.solve_stack(C, maximize, chunk=_chunk(bar, k),
                                                    progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    bad = np.flatnonzero(status)
    if bad.shape[0] and errors == "raise":
        exc = _single_error(C[int(bad[0])], maximize, int(bad[0]))
        raise exc from exc.__cause__
    return _backend.output_like(rows, cupy_out), _backend.output_like(cols, cupy_out)


def _chunk(bar, k):
    """Problems per call of the threads: all at once, or about a hundredth with a progress bar."""
    return None if bar is None else max(64, k // 100)


def _lsa_stack_gpu(costs, maximize, errors, progress):
    """A CuPy stack on the GPU: one launch, a block per problem
    (:func:`gpumatch.lap._driver.solve_dense_batch`); a bad problem's error
    is worded by a single call on its matrix."""
    from .lap import _driver

    if costs.ndim != 3:
        raise ValueError(f"cost_matrices: expected a stack of matrices (a 3-D array of shape (k, m, n)), got a "
                         f"{costs.ndim}-D array; for one matrix call gpumatch.linear_sum_assignment, and pass a "
                         "list for matrices of several shapes")
    bar = _progress_bar(progress, int(costs.shape[0]), "assignment")
    try:
        rows, cols, status = _driver.solve_dense_batch(costs, maximize, statuses=True)
        if bar is not None:
            bar.update(int(costs.shape[0]))
    finally:
        if bar is not None:
            bar.close()
    bad = np.flatnonzero(status)
    if bad.shape[0] and errors == "raise":
        b = int(bad[0])
        exc = _single_error(_backend.to_numpy(costs[b]), maximize, b)
        raise exc from exc.__cause__
    return rows, cols


def _single_error(c, maximize, index):
    """The exception that :func:`gpumatch.linear_sum_assignment` raises for problem `index`, indexed."""
    try:
        _lap.linear_sum_assignment(c, maximize=maximize)
    except Exception as exc:
        return _indexed(exc, index)
    return _indexed(AssertionError("internal error: the batch found no assignment where a single call does"),
                    index)


# ---------------------------------------------------------------------------
# drivers: this process, or Dask
# ---------------------------------------------------------------------------


def _run(kind, items, backend, perm_type, options, errors, progress, pack_edges, client):
    n = len(items)
    results: list[Any] = [None] * n
    if n == 0:
        return results
    sizes = [_estimate(kind, it) for it in items]
    if client is None:
        budget = _default_pack_edges(backend) if pack_edges is None else pack_edges
        chunks = _runs_of_alone(_plan(sizes, budget, _alone_at(budget, backend, kind)))
        _run_local(kind, items, chunks, backend, perm_type, options, errors, progress, pack_edges, results, sizes)
    else:
        _batch_dask.run(client, kind, items, sizes, backend, perm_type, options, errors, progress, pack_edges,
                        results)
    return results


#: Problems solved alone that one call of the chunk solver takes in this
#: process (its set-up costs a few microseconds, a loop's call too).
LOCAL_RUN = 64


def _runs_of_alone(chunks):
    """Consecutive one-problem chunks of `_plan` joined into runs of at most
    :data:`LOCAL_RUN` (the chunk solver plans them alone again); packs stay
    as they are."""
    out, run = [], []
    for c in chunks:
        if len(c) == 1 and len(run) < LOCAL_RUN:
            run.append(c[0])
            continue
        if run:
            out.append(run)
            run = []
        if len(c) == 1:
            run.append(c[0])
        else:
            out.append(c)
    if run:
        out.append(run)
    return out


def _run_local(kind, items, chunks, backend, perm_type, options, errors, progress, pack_edges, results, sizes):
    bar = _progress_bar(progress, len(items), kind)
    try:
        worst = None
        for idx in chunks:
            if errors == "raise" and worst is not None and idx[0] > worst:
                break  # every problem before the failing one is done
            got = _solve_chunk(kind, idx, [items[i] for i in idx], backend, perm_type, options, pack_edges,
                               [sizes[i] for i in idx])
            for i, r in zip(idx, got):
                results[i] = r
            if errors == "raise":
                worst = _first_error(results, idx, worst)
            if bar is not None:
                bar.update(len(idx))
    finally:
        if bar is not None:
            bar.close()
    if errors == "raise" and worst is not None:
        exc = results[worst]
        raise exc from exc.__cause__

"""Planning and solving the chunks of a batch (:mod:`gpumatch.batch`).

The argument checks, the size estimates, the plan (which problems share a
pack, which are solved alone), the solve of one chunk (load, validate,
pack, solve: in this process or on a Dask worker) and the progress bar.
Below both drivers of a batch: the local one in :mod:`gpumatch.batch` and
the Dask one in :mod:`gpumatch._batch_dask`.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import _backend
from . import flow as _flow
from . import io as _io
from . import matching as _matching
from ._batch_pack import _fast_graphs, _pack_assignment, _pack_flow, _pack_matching
from ._validation import as_csr_graph, check_option
from .flow._maxflow import _capacity_graph, _check_terminals
from .lap import _problems
from .lap import api as _lap

#: Default size budget of a pack, by the backend that runs it: stored entries
#: plus vertices of the problems solved together in one call.  A problem
#: larger than a quarter of the budget is solved alone.  On a 2-core CPU the
#: NumPy backend ran 10,000 small matchings fastest with packs of 2**17 to
#: 2**19 and small flow networks with 2**15 to 2**17 (``bench_batch.py --pack-edges``);
#: the GPU budget is large enough that a pack's launches do not dominate.
PACK_EDGES = {"cupy": 1 << 21, "cpu": 1 << 17}

#: Largest problem that joins a pack, by the backend that runs it (size as
#: for :data:`PACK_EDGES`); larger ones are solved alone, as are those above
#: a quarter of the pack budget (the only rule for NumPy).  A pack's joint
#: solve runs as long as its slowest member and costs an assembly of the
#: joined problem, which pays only while a call's fixed cost dominates.
#: Random graphs of mean degree 5, batch against a loop of single calls,
#: median of 3.  H100: 2k edges 0.062 / 0.745 s (400 graphs), 10k 0.221 /
#: 0.997, 30k 0.263 / 0.512 (166), but 100k 0.223 / 0.179 (50) and 250k
#: 0.176 / 0.087 (20); 200 graphs of 0.1-2M edges took 1.46 s packed up to
#: 512k, 1.14 s as a loop.  Numba, 2-core CPU, 2000 graphs: 100 edges 0.029
#: / 0.044 s, 200 0.043 / 0.050, but 400 0.067 / 0.061 and 1000 (1000
#: graphs) 0.070 / 0.048.  NumPy: packs win up to 20k edges (0.289 / 0.351 s).
PACK_ALONE = {"cupy": 1 << 16, "numba": 1 << 9}

#: Largest assignment problem that joins a pack (size as for
#: :data:`PACK_EDGES`), whatever the backend: every backend runs the compiled
#: CPU engine, whose fixed cost per call (validation, a maximum matching,
#: the engine's arrays: about 0.2-0.5 ms) a pack pays once.  Square random
#: problems of mean degree 5, batch against solves one by one, median of 3
#: on a 2-core CPU: size 225 0.18 / 0.39 s (2000 problems), 780 0.26 / 0.54
#: (1000), 2400 0.21 / 0.27 (300), 8000 0.25 / 0.29 (100), but 24000
#: 0.31 / 0.28 (30).
PACK_ALONE_ASSIGNMENT = 1 << 13

#: ``progress=None`` shows a bar for batches of at least this many problems
#: (and only when standard error is a terminal).
PROGRESS_MIN = 100

_ERRORS = ("raise", "return")

# Per-process bookkeeping: a Dask worker keeps this module imported between
# tasks, so the counter (like CuPy's compiled-kernel caches) lives on.
_PROCESS = {"chunks": 0}


# ---------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------


def _check_common(backend, errors, progress, pack_edges, client):
    if not isinstance(backend, str) or backend not in _backend.BACKENDS:
        raise ValueError(f"backend must be one of {_backend.BACKENDS}, got {backend!r}")
    check_option("errors", errors, _ERRORS)
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True, False or None, got {progress!r}")
    if pack_edges is not None and (isinstance(pack_edges, (bool, np.bool_))
                                   or not isinstance(pack_edges, (int, np.integer))
                                   or not 0 <= pack_edges <= (1 << 30)):
        raise ValueError(f"pack_edges must be None or an integer in [0, 2**30], got {pack_edges!r}")
    if client is not None and not (hasattr(client, "submit") and hasattr(client, "scatter")):
        raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")


def _check_options(func, options, reserved):
    """Unknown keywords raise TypeError now rather than once per problem."""
    params = inspect.signature(func).parameters
    for key in options:
        if key in reserved or key not in params:
            raise TypeError(f"unexpected keyword argument {key!r} (options of {func.__name__}: "
                            f"{', '.join(p for p in params if p not in reserved)})")


def _as_list(seq, what):
    if isinstance(seq, (str, os.PathLike)) or sp.issparse(seq) or _backend.is_cupy_sparse(seq) \
            or isinstance(seq, np.ndarray) or _backend.is_cupy_array(seq):
        raise TypeError(f"{what} must be a sequence of problems (a list), got {type(seq).__name__}; "
                        "for one problem call the function of gpumatch itself")
    try:
        return list(seq)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of problems, got {type(seq).__name__}") from None


def _is_path(x) -> bool:
    return isinstance(x, (str, os.PathLike))


class _BadItem:
    """A flow problem that is not a triple: raises its error where it is solved."""

    def __init__(self, message):
        self.message = message


def _flow_item(p):
    if _is_path(p):
        return (p, None, None)
    if isinstance(p, (tuple, list)) and len(p) == 3:
        return tuple(p)
    return _BadItem(f"a problem must be (csgraph, source, sink), (path, source, sink) or a path, "
                    f"got {type(p).__name__}" + (f" of length {len(p)}" if isinstance(p, (tuple, list)) else ""))


# ---------------------------------------------------------------------------
# errors that name their problem
# ---------------------------------------------------------------------------


def _indexed(exc, index, path=None):
    """`exc` again, its message prefixed by the problem's index (and file)."""
    where = f"problem {index}" + (f" ({os.fspath(path)!r})" if path is not None else "")
    text = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    try:
        new = type(exc)(f"{where}: {text}")
    except Exception:  # an exception type that wants other arguments
        new = RuntimeError(f"{where}: {type(exc).__name__}: {text}")
    new.__cause__ = exc
    try:
        new.index = index
    except Exception:  # pragma: no cover - exceptions without __dict__
        pass
    return new


# ---------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------


def _graph_size(kind, g):
    """Stored entries plus vertices of an in-memory graph, or None when unknown."""
    try:
        if isinstance(g, tuple) and len(g) == 3:
            nnz = int(len(g[1]))
            m, n = (int(x) for x in g[2])
        elif sp.issparse(g) or _backend.is_cupy_sparse(g):
            nnz = int(g.nnz)
            m, n = (int(x) for x in g.shape)
        else:
            return None
    except Exception:
        return None
    return nnz + (m if kind == "flow" else m + n)


def _file_size_estimate(path):
    """Entries of a graph file guessed from its size (a text entry takes ~12 bytes, ~4 gzipped)."""
    try:
        nbytes = os.path.getsize(path)
    except OSError:
        return None
    return nbytes // (4 if str(os.fspath(path)).lower().endswith(".gz") else 12)


def _is_future(x) -> bool:
    """A dask.distributed Future (told by its class, without importing dask)."""
    return type(x).__name__ == "Future" and type(x).__module__.startswith("distributed")


def _estimate(kind, item):
    obj = item[0] if kind == "flow" and isinstance(item, tuple) else item
    if isinstance(item, _BadItem):
        return 1
    if _is_future(obj):
        return None  # data already on the cluster, size unknown here: a task of its own
    if _is_path(obj):
        return _file_size_estimate(obj)
    return _graph_size(kind, obj)


def _plan(sizes, budget, alone_at):
    """Index lists, ordered by their first index: packs of small problems, large ones alone.

    Consecutive problems of at most `alone_at` join the open pack while its
    total stays within `budget`; larger ones (and those of unknown size)
    form a pack of their own.
    """
    packs, cur, total = [], [], 0
    for i, s in enumerate(sizes):
        if s is None or s > alone_at:
            packs.append([i])
            continue
        if cur and total + s > budget:
            packs.append(cur)
            cur, total = [], 0
        cur.append(i)
        total += s
    if cur:
        packs.append(cur)
    packs.sort(key=lambda p: p[0])
    return packs


# ---------------------------------------------------------------------------
# one chunk: load, validate, pack, solve (in this process or on a worker)
# ---------------------------------------------------------------------------


def _load(kind, item):
    """Read a file item; returns ``(obj, source, sink, path)`` (source/sink None but for flow)."""
    if kind != "flow":
        if not _is_path(item):
            return item, None, None, None
        name = os.fspath(item).lower()
        if name.endswith((".max", ".max.gz")):
            raise ValueError("a DIMACS max-flow file is not a bipartite graph; "
                             "use gpumatch.batch.maximum_flow for it")
        return _io.read_graph(item), None, None, item
    if isinstance(item, _BadItem):
        raise TypeError(item.message)
    obj, s, t = item
    if not _is_path(obj):
        return obj, s, t, None
    if os.fspath(obj).lower().endswith(_io._FLOW_SUFFIXES):
        # the caller's terminals stand in for the file's (whose lines may then be
        # missing); they are checked with the problem's other arguments, as for a matrix
        C, fs, ft = _io._read_dimacs_max(obj, s is not None, t is not None)
        return C, (fs if s is None else s), (ft if t is None else t), obj
    return _io.read_graph(obj), s, t, obj


def _solve_chunk(kind, indices, items, backend, perm_type, options, pack_edges, known=None):
    """Solve the problems `items` (global indices `indices`); one result or exception per problem.

    `kind`: "matching", "flow" or "assignment"; `perm_type` is the
    matching's ``perm_type`` and the assignment's ``maximize``.

    Runs in the caller's process or as a Dask task.  Never raises for a
    problem: its exception, prefixed by its index, takes its slot.
    `known`: the sizes the caller took of the in-memory items (a file's
    is taken once it is read).
    """
    if isinstance(items, _Payload):
        items = items.items
    if pack_edges is None:
        pack_edges = _default_pack_edges(backend)
    _PROCESS["chunks"] += 1
    where = {"process": os.getpid(), "chunk_in_process": _PROCESS["chunks"]}
    out: list[Any] = [None] * len(indices)
    loaded = []  # (slot, obj, source, sink, path)
    for slot, (i, item) in enumerate(zip(indices, items)):
        path = item[0] if kind == "flow" and isinstance(item, tuple) and _is_path(item[0]) else \
            (item if _is_path(item) else None)
        try:
            obj, s, t, path = _load(kind, item)
        except Exception as exc:
            out[slot] = _indexed(exc, i, path)
            continue
        loaded.append((slot, obj, s, t, path))
    sizes = [known[slot] if known is not None and path is None else _graph_size(kind, obj)
             for slot, obj, _, _, path in loaded]
    packs = _plan(sizes, pack_edges, _alone_at(pack_edges, backend, kind))
    for k, pack in enumerate(packs):
        members = [loaded[j] for j in pack]
        if len(members) == 1:
            _solve_alone(kind, members[0], indices, out, backend, perm_type, options, k, where)
        else:
            _solve_pack(kind, members, indices, out, backend, perm_type, options, k, where)
    return out


def _solve_alone(kind, member, indices, out, backend, perm_type, options, k, where):
    slot, obj, s, t, path = member
    try:
        if kind == "matching":
            out[slot] = _matching.maximum_bipartite_matching(obj, perm_type, backend=backend, **options)
        elif kind == "assignment":
            out[slot] = _lap.min_weight_full_bipartite_matching(obj, perm_type, backend=backend)
        else:
            res = _flow.maximum_flow(obj, s, t, backend=backend, **options)
            nnz = getattr(obj, "nnz", None)
            res.stats["batch"] = dict(where, pack=k, problems=1, vertices=int(res.flow.shape[0]),
                                      arcs=None if nnz is None else int(nnz))
            out[slot] = res
    except Exception as exc:
        out[slot] = _indexed(exc, indices[slot], path)


def _solve_pack(kind, members, indices, out, backend, perm_type, options, k, where):
    if kind == "assignment":
        _solve_assignment_pack(members, indices, out, backend, perm_type, k, where)
        return
    resolved = _backend.resolve_backend(backend)
    fast = _fast_graphs(kind, members)
    valid = []  # (member, CSRGraph)
    for j, member in enumerate(members):
        slot, obj, s, t, path = member
        host = not (_backend.is_cupy_input(obj) and resolved == "cupy")
        try:
            g = fast.get(j)
            if g is None and kind == "matching":
                g = as_csr_graph(obj, "numpy" if host else "cupy")
            elif g is None:
                g = _capacity_graph(obj, "numpy" if host else "cupy")
            if kind == "flow":
                s, t = _check_terminals(s, t, g.n)
                member = (slot, obj, s, t, path)
        except Exception as exc:
            out[slot] = _indexed(exc, indices[slot], path)
            continue
        valid.append((member, g))
    if not valid:
        return
    if len(valid) == 1:
        _solve_alone(kind, valid[0][0], indices, out, backend, perm_type, options, k, where)
        return
    try:
        if kind == "matching":
            results = _pack_matching([g for _, g in valid], perm_type, backend, resolved, options)
        else:
            results = _pack_flow([(g, m[2], m[3]) for m, g in valid], backend, resolved, options)
            info = dict(where, pack=k, problems=len(valid))
            for r in results:
                r.stats["batch"] = dict(info, vertices=r.stats.pop("_vertices"), arcs=r.stats.pop("_arcs"))
    except Exception:
        # The joint solve failed (an overflow of the joined capacities, a
        # limit of a method, a bug): solve one by one, so that any error is
        # reported for the problem that caused it.
        for member, _ in valid:
            _solve_alone(kind, member, indices, out, backend, perm_type, options, k, where)
        return
    for (member, _), r in zip(valid, results):
        out[member[0]] = r


def _solve_assignment_pack(members, indices, out, backend, maximize, k, where):
    valid = []  # (member, validated problem)
    for member in members:
        slot, obj, _, _, path = member
        try:
            indptr, idx, c, shape, cupy_out, _ = _problems._sparse_problem(obj, maximize)
        except Exception as exc:
            out[slot] = _indexed(exc, indices[slot], path)
            continue
        valid.append((member, (indptr, idx, c, shape, cupy_out)))
    if len(valid) <= 1:
        for member, _ in valid:
            _solve_alone("assignment", member, indices, out, backend, maximize, {}, k, where)
        return
    try:
        results = _pack_assignment([p for _, p in valid], backend)
    except Exception:
        # a problem without a full matching, weights too large for the joined
        # problem's exact range, anything else: one by one, so that an error
        # names its problem
        for member, _ in valid:
            _solve_alone("assignment", member, indices, out, backend, maximize, {}, k, where)
        return
    for (member, _), r in zip(valid, results):
        out[member[0]] = r


class _Payload:
    """The problems of one chunk, scattered to the workers as one object."""

    def __init__(self, items):
        self.items = items


def _show_progress(progress, n):
    if progress is None:
        return n >= PROGRESS_MIN and bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(progress)


def _alone_at(pack_edges, backend, kind="matching"):
    """Size above which a problem is solved alone: a quarter of the pack
    budget, and at most :data:`PACK_ALONE` of the backend `backend` resolves to
    (:data:`PACK_ALONE_ASSIGNMENT` for an assignment)."""
    limit = pack_edges // 4
    if kind == "assignment":
        return min(limit, PACK_ALONE_ASSIGNMENT)
    try:
        resolved = _backend.resolve_backend(backend)
    except Exception:   # no such device here: each problem's solve reports it
        return limit
    return min(limit, PACK_ALONE.get(resolved, limit))


def _default_pack_edges(backend):
    """:data:`PACK_EDGES` of the backend `backend` resolves to (here: in this process)."""
    return PACK_EDGES["cupy" if _backend.resolve_backend(backend) == "cupy" else "cpu"]


def _first_error(results, idx, best):
    for i in idx:
        r = results[i]
        if isinstance(r, BaseException) and (best is None or i < best):
            best = i
    return best


def _progress_bar(progress, n, kind):
    """A tqdm bar of `n` problems when `progress` asks for one (:func:`_show_progress`), else None."""
    if not _show_progress(progress, n):
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=n, unit="problem", desc=f"batch {kind}", file=sys.stderr)


def _item_obj(kind, item):
    if kind == "flow" and isinstance(item, tuple):
        return item[0]
    return item

"""Small matchings under ``backend="auto"`` without a GPU: SciPy's Hopcroft–Karp.

On a CPU, ``"auto"`` runs the compiled engine (``"numba"``), whose first
call in a process costs Numba's start-up: ``import numba`` and the first
load of a cached function, which loads all of Numba's target registries
(NumPy's linear algebra among them, which imports ``scipy.linalg``).  On a
2-core CPU with a warm cache that is 0.43-0.67 s (median about 0.55 s) for
a trivial cached function, whatever gpumatch does, while the solve of a
200 x 200 matrix takes microseconds.  An input of at most
:data:`SMALL_MAX` rows, columns and entries therefore goes to
:func:`scipy.sparse.csgraph.maximum_bipartite_matching` (compiled
Hopcroft–Karp) instead, while the Numba engine is not loaded in the
process and the small solves have not yet cost about its start-up
(:data:`gpumatch._validation.SMALL_ON_CPU`): the first call costs
importing ``scipy.sparse.csgraph`` (about 0.1 s), later ones a few tenths
of a millisecond to a few milliseconds, 3-6x the warm engine's time.  SciPy's Hopcroft–Karp is slow on
some meshes and chains (scipy issue #26147), which the bound keeps small:
grids, Delaunay meshes, ladders and triangular patterns of that size take
at most a few milliseconds.

The contract is the engine's: the same validation (on NumPy, without
Numba), a maximum matching (which one may differ, as between backends),
the statistics' keys, and the König cover of :func:`gpumatch.matching.
_driver.konig_cover_masks` (the NumPy twin's BFS) for ``certificate=True``.
``stats["backend"]`` is ``"scipy"``.  A warm start (``initial``), an
explicit ``backend``, a loaded engine or a spent budget never comes here.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .._validation import as_csr_graph, charge_small, small_on_cpu
from . import _driver

__all__ = ["SMALL_MAX", "wanted", "solve"]

#: Largest ``m + n + nnz`` that ``backend="auto"`` solves with SciPy's
#: Hopcroft–Karp on a machine without a usable GPU (None: never).  Random
#: 200 x 200 with 800 entries: first call 0.15-0.2 s against 0.5-0.6 s
#: through Numba (fresh process, warm cache, 2-core CPU).
SMALL_MAX = 8192


def wanted(graph, backend) -> bool:
    """True when a solve of `graph` on `backend` takes this path:
    ``backend="auto"``, no usable GPU, at most :data:`SMALL_MAX` rows,
    columns and entries (:func:`gpumatch._validation.small_on_cpu`)."""
    return small_on_cpu(graph, backend, SMALL_MAX)


def solve(graph, certificate=False):
    """Validate `graph` on NumPy and match it with SciPy's Hopcroft–Karp.

    Returns ``(g, st, stats, (cover_rows, cover_cols))`` as
    :func:`gpumatch.matching.api._solve` does.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from gpumatch.matching import _small
    >>> g, st, stats, cover = _small.solve(sp.csr_matrix([[1, 1], [1, 0]]), certificate=True)
    >>> st.mu_col.tolist(), stats["backend"], int(cover[0].sum() + cover[1].sum())
    ([1, 0], 'scipy', 2)
    """
    from scipy.sparse.csgraph import maximum_bipartite_matching

    t0 = time.perf_counter()
    g = as_csr_graph(graph, "numpy")
    st = _driver.make_state(g)
    t1 = time.perf_counter()
    if st.m and st.n and g.nnz:
        A = sp.csr_matrix((np.ones(g.nnz, dtype=np.int8), g.indices, g.indptr), shape=(st.m, st.n))
        col_to_row = maximum_bipartite_matching(A, perm_type="row")
        cols = np.flatnonzero(col_to_row >= 0)
        st.mu_col[cols] = col_to_row[cols]
        st.mu_row[col_to_row[cols]] = cols
    t2 = time.perf_counter()
    stats = {"backend": "scipy", "initial_size": 0, "push_iterations": 0, "global_relabels": 0, "max_level": 0,
             "time_init": t1 - t0, "time_relabel": 0.0, "time_push": 0.0, "time_fix": 0.0, "time_augment": t2 - t1,
             "finished_by": "augmenting-paths", "switch_reason": None, "active_history": [],
             "algorithm": "Hopcroft-Karp (scipy.sparse.csgraph)"}
    cover = _driver.konig_cover_masks(st) if certificate else (None, None)
    if certificate:
        stats["cover_source"] = st.extra.pop("cover_source")
    charge_small(time.perf_counter() - t0)
    return g, st, stats, cover

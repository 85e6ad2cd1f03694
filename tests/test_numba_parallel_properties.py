"""Property-based tests of the CPU engine's multi-threaded path (``matching/_cpu_parallel.py``).

Small random bipartite graphs (duplicates, empty rows and columns; for
the API also int64 indices and read-only arrays): :func:`karp_sipser_parallel`
with any number of slices leaves a matching of stored entries that MS-BFS
makes maximum, and the public API
with the multi-threaded path forced (``TUNING``) returns a maximum matching
(``check_matching``: a König cover of the same size; scipy's size).  The
number of cases follows the Hypothesis profile of ``conftest.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gpumatch import _backend

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching  # noqa: E402

from gpumatch.matching import bipartite_matching  # noqa: E402
from gpumatch.testing import check_matching  # noqa: E402

from test_numba_parallel import _check_pairs  # noqa: E402  (tests/ is on sys.path)

pytestmark = pytest.mark.skipif(not _backend.numba_available(), reason="Numba does not import")


@st.composite
def graphs(draw, max_dim=14, max_nnz=48, layouts=True):
    """A CSR matrix with duplicates merged, some rows and columns empty; with `layouts`, int32 or
    int64 and maybe read-only (else int32, writable: no new Numba specialisation to compile)."""
    m = draw(st.integers(0, max_dim))
    n = draw(st.integers(0, max_dim))
    k = draw(st.integers(0, max_nnz)) if m and n else 0
    rows = np.array(draw(st.lists(st.integers(0, m - 1), min_size=k, max_size=k)) if k else [], np.int64)
    cols = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)) if k else [], np.int64)
    A = sp.csr_matrix((np.ones(k), (rows, cols)), shape=(m, n))
    A.sum_duplicates()
    idx = draw(st.sampled_from((np.int32, np.int64))) if layouts else np.int32
    A.indptr, A.indices = A.indptr.astype(idx), A.indices.astype(idx)
    if layouts and draw(st.booleans()):
        A.indptr.flags.writeable = False
        A.indices.flags.writeable = False
    return A


def _size(A):
    return int((sp_matching(sp.csr_matrix(A), perm_type="row") >= 0).sum()) if A.nnz else 0


@settings(max_examples=max(1, settings.default.max_examples))
@given(A=graphs(layouts=False), nt=st.integers(1, 9))
def test_karp_sipser_parallel_then_ms_bfs(A, nt):
    from gpumatch._cpu_csr import transpose
    from gpumatch.matching import _cpu_parallel

    m, n = A.shape
    cptr, cind = transpose(m, n, A.indptr, A.indices)
    mu_row = np.full(m, -1, A.indptr.dtype)
    mu_col = np.full(n, -1, A.indptr.dtype)
    _cpu_parallel.karp_sipser_parallel(m, n, A.indptr, A.indices, cptr, cind, mu_row, mu_col, nt)
    _check_pairs(A, mu_row, mu_col)
    raw = np.zeros(3, np.int64)
    _cpu_parallel.ms_bfs(m, n, cptr, cind, mu_row, mu_col, raw, nt, 1)
    check_matching(A, mu_col, "row", expected_size=_size(A))


@settings(max_examples=max(1, settings.default.max_examples // 2))
@given(A=graphs(), init=st.sampled_from(("greedy", "none")), level_min=st.sampled_from((1, 10**9)))
def test_api_on_the_parallel_path(A, init, level_min):
    import numba

    from gpumatch.matching import _cpu

    saved = dict(_cpu.TUNING)
    threads = numba.get_num_threads()
    try:
        _cpu.TUNING.update(parallel_min_nnz=0, parallel_min_threads=1, parallel_level_min=level_min,
                           serial_init_share=2.0, greedy_probe=False)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        res = bipartite_matching(A, backend="numba", init=init, certificate=True)
    finally:
        _cpu.TUNING.clear()
        _cpu.TUNING.update(saved)
        numba.set_num_threads(threads)
    check_matching(A, res.col_to_row, "row", expected_size=_size(A))
    assert int(res.cover_rows.sum() + res.cover_cols.sum()) == res.size

"""Tests of gpumatch.batch in one process: packed solves, order, errors, files.

Every matching is certified by a König cover (check_matching, sizes against
scipy's), every flow by a cut (check_flow, values against scipy's Dinic);
a packed flow must also give the same value, minimum cut and flow-matrix
pattern as a single gpumatch.maximum_flow call.  The Dask path is in
test_batch_dask.py.
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow

import gpumatch
from gpumatch import _backend, _batch_dask, batch, generators
from gpumatch.io import write_dimacs_max, write_matrix_market
from gpumatch.testing import check_flow, check_matching

# Every CPU backend the public API accepts ("auto" resolves to one of them),
# and CuPy on a GPU.
CPU_BACKENDS = [b for b in _backend.BACKENDS if b not in ("auto", "cupy")]


@pytest.fixture(params=CPU_BACKENDS + [pytest.param("cupy", marks=pytest.mark.gpu)])
def backend(request):
    return request.param


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def matching_inputs():
    """Graphs of every accepted kind and shape, small enough to pack together."""
    rng = np.random.default_rng(7)
    gs = [generators.random_bipartite(int(rng.integers(1, 40)), int(rng.integers(1, 40)), 2.5, seed=i)
          for i in range(25)]
    gs.append(sp.csr_matrix((0, 5)))                                   # no rows
    gs.append(sp.csr_matrix((4, 0)))                                   # no columns
    gs.append(sp.csr_matrix((3, 3)))                                   # no entries
    z = sp.csr_matrix(np.array([[0, 1], [1, 0]], dtype=float))
    z.data[:] = 0.0                                                    # explicit zeros are edges
    gs.append(z)
    gs.append(sp.coo_matrix(([1, 1, 1, 1], ([0, 0, 1, 2], [1, 1, 0, 0])), shape=(3, 2)))  # duplicates
    gs.append(generators.random_bipartite(30, 20, 3, seed=99).tocsc())
    gs.append(sp.csr_array(generators.random_bipartite(20, 30, 2, seed=98)))
    A = generators.random_bipartite(15, 12, 2, seed=97)
    gs.append((A.indptr, A.indices, A.shape))                          # index tuple
    gs.append(generators.triangular(40, permute=True, seed=3))
    return gs


def flow_inputs():
    """Networks with self-loops, zero capacities, parallel and anti-parallel arcs."""
    probs = []
    for i in range(6):
        probs.append(generators.genrmf(3, 2 + i % 3, 1, 50, seed=i))
        probs.append(generators.washington_rlg(3, 4, 30, seed=i))
    rng = np.random.default_rng(5)
    for i in range(8):
        V = int(rng.integers(3, 30))
        k = int(rng.integers(0, 4 * V))
        u, v = rng.integers(0, V, k), rng.integers(0, V, k)
        c = rng.integers(0, 20, k)
        C = sp.coo_matrix((c, (u, v)), shape=(V, V))                  # duplicates summed, loops ignored
        probs.append((C if i % 2 else sp.csr_array(C.tocsr()), 0, V - 1))
    probs.append((sp.csr_matrix(np.array([[0, 0], [0, 0]])), 0, 1))   # no arcs: value 0
    probs.append((sp.csr_matrix(np.array([[5, 3], [0, 0]])), 0, 1))   # self-loop at the source
    A = generators.random_bipartite(10, 10, 2, seed=1)
    probs.append(((A.indptr, A.indices, (10, 10)), 0, 9))              # unit capacities
    return probs


def scipy_size(g):
    if isinstance(g, tuple):
        g = sp.csr_matrix((np.ones(len(g[1])), g[1], g[0]), shape=g[2])
    g = sp.csr_matrix(g)
    if g.shape[0] == 0 or g.shape[1] == 0:
        return 0
    g = sp.csr_matrix((np.ones(g.nnz), g.indices, g.indptr), shape=g.shape)
    return int((sp_matching(g, perm_type="row") >= 0).sum())


def scipy_value(C, s, t):
    if isinstance(C, tuple):
        C = sp.csr_matrix((np.ones(len(C[1]), dtype=np.int32), C[1], C[0]), shape=C[2])
    C = sp.csr_matrix(C).astype(np.int32)
    C.setdiag(0)
    C.eliminate_zeros()
    return int(sp_maximum_flow(C, s, t).flow_value)


def flow_capacity(C):
    if isinstance(C, tuple):
        return sp.csr_matrix((np.ones(len(C[1]), dtype=np.int64), C[1], C[0]), shape=C[2])
    return C


def assert_same_as_single(res, single):
    """The batch result is what a single call returns, up to the (non-unique) flow itself."""
    assert isinstance(res, gpumatch.MaximumFlowResult)
    assert isinstance(res.flow_value, np.int64) and res.flow_value == single.flow_value
    assert type(res.flow) is type(single.flow)
    assert res.flow.shape == single.flow.shape
    assert res.flow.dtype == single.flow.dtype
    assert res.flow.indices.dtype == single.flow.indices.dtype
    assert np.array_equal(_backend.to_numpy(res.flow.indptr), _backend.to_numpy(single.flow.indptr))
    assert np.array_equal(_backend.to_numpy(res.flow.indices), _backend.to_numpy(single.flow.indices))
    assert type(res.source_side) is type(single.source_side)
    assert np.array_equal(_backend.to_numpy(res.source_side), _backend.to_numpy(single.source_side))


# ---------------------------------------------------------------------------
# matching
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("perm_type", ["row", "column"])
def test_matching_batch_is_maximum_and_in_order(backend, perm_type):
    gs = matching_inputs()
    got = batch.maximum_bipartite_matching(gs, perm_type, backend=backend)
    assert len(got) == len(gs)
    for g, perm in zip(gs, got):
        shape = g[2] if isinstance(g, tuple) else g.shape
        assert isinstance(perm, np.ndarray) and perm.dtype == np.int32
        assert perm.shape == ((shape[1],) if perm_type == "row" else (shape[0],))
        check_matching(g, perm, perm_type, expected_size=scipy_size(g))


def test_matching_packs_small_graphs_into_one_call(monkeypatch):
    calls = []
    real = gpumatch.matching.maximum_bipartite_matching

    def spy(graph, *args, **kwargs):
        calls.append(graph)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(gpumatch.matching, "maximum_bipartite_matching", spy)
    gs = [generators.random_bipartite(20, 20, 3, seed=i) for i in range(60)]
    got = batch.maximum_bipartite_matching(gs, backend="numpy")
    assert len(calls) == 2                  # the options check on a 1x1 graph, then one pack
    assert calls[1][2] == (1200, 1200)      # the block-diagonal union
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))
    calls.clear()
    batch.maximum_bipartite_matching(gs, backend="numpy", pack_edges=0)
    assert len(calls) == 61                 # every graph alone
    assert all(c is g for c, g in zip(calls[1:], gs))


def test_large_graph_is_solved_alone(monkeypatch):
    calls = []
    real = gpumatch.matching.maximum_bipartite_matching

    def spy(graph, *args, **kwargs):
        calls.append(graph)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(gpumatch.matching, "maximum_bipartite_matching", spy)
    small = [generators.random_bipartite(10, 10, 2, seed=i) for i in range(6)]
    big = generators.random_bipartite(200, 200, 3, seed=1)   # size > pack_edges // 4
    gs = small[:3] + [big] + small[3:]
    got = batch.maximum_bipartite_matching(gs, backend="numpy", pack_edges=1000)
    assert any(c is big for c in calls)
    assert len(calls) == 1 + 1 + 1          # options check, the big graph, one pack of six
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))


def test_problems_solved_alone_share_a_chunk_call(monkeypatch):
    # in this process, consecutive one-problem chunks are solved by one call
    # of the chunk solver (at most LOCAL_RUN problems); packs stay whole
    monkeypatch.setattr(batch, "LOCAL_RUN", 3)
    assert batch._runs_of_alone([[0], [1], [2], [3], [4, 5], [6], [7, 8], [9], [10]]) == \
        [[0, 1, 2], [3], [4, 5], [6], [7, 8], [9, 10]]
    seen = []
    real = batch._solve_chunk

    def spy(kind, indices, *args, **kwargs):
        seen.append(list(indices))
        return real(kind, indices, *args, **kwargs)

    monkeypatch.setattr(batch, "_solve_chunk", spy)
    gs = [generators.random_bipartite(30, 30, 3, seed=i) for i in range(7)]
    got = batch.maximum_bipartite_matching(gs, backend="numpy", pack_edges=0)
    assert seen == [[0, 1, 2], [3, 4, 5], [6]]
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))


def test_matching_options_pass_through(backend):
    gs = [generators.random_bipartite(15, 12, 2, seed=i) for i in range(10)]
    for opts in ({"method": "flow"}, {"init": "karp_sipser", "relabel_k": 1.5, "shrink_threshold": 4}):
        got = batch.maximum_bipartite_matching(gs, backend=backend, **opts)
        for g, perm in zip(gs, got):
            check_matching(g, perm, expected_size=scipy_size(g))


def test_matching_unsorted_and_duplicate_csr_entries():
    # CSR objects with unsorted indices and duplicates take the per-graph
    # canonical path inside a pack; valid ones beside them the fast path
    def graphs():  # fresh objects for the solve and for the checks
        bad = sp.csr_matrix((np.ones(4), np.array([1, 0, 1, 0]), np.array([0, 3, 4])), shape=(2, 2))
        return [generators.random_bipartite(8, 8, 2, seed=1), bad, generators.random_bipartite(8, 9, 2, seed=2)]

    got = batch.maximum_bipartite_matching(graphs(), backend="numpy")
    assert [int((p >= 0).sum()) for p in got] == [scipy_size(g) for g in graphs()]
    for g, perm in zip(graphs(), got):
        check_matching(g, perm)


# ---------------------------------------------------------------------------
# flow
# ---------------------------------------------------------------------------


def test_flow_batch_equals_single_calls(backend):
    probs = flow_inputs()
    got = batch.maximum_flow(probs, backend=backend)
    assert len(got) == len(probs)
    packed = 0
    for (C, s, t), res in zip(probs, got):
        single = gpumatch.maximum_flow(C, s, t, backend=backend)
        assert_same_as_single(res, single)
        check_flow(flow_capacity(C), s, t, res.flow, res.flow_value)
        assert int(res.flow_value) == scipy_value(C, s, t)
        packed += res.stats["batch"]["problems"] > 1
    assert packed == len(probs)             # all small: one pack


@pytest.mark.parametrize("layout", ["reverse_csr", "bcsr"])
def test_flow_options_pass_through(layout):
    probs = flow_inputs()[:8]
    for res, (C, s, t) in zip(batch.maximum_flow(probs, backend="numpy", layout=layout), probs):
        assert res.stats["layout"] == layout
        check_flow(flow_capacity(C), s, t, res.flow, res.flow_value)


def test_flow_method_dinic_through_batch():
    probs = flow_inputs()[:6]
    for res, (C, s, t) in zip(batch.maximum_flow(probs, backend="numpy", method="dinic"), probs):
        check_flow(flow_capacity(C), s, t, res.flow, res.flow_value)


def test_flow_stats_name_the_pack():
    probs = flow_inputs()[:5]
    got = batch.maximum_flow(probs, backend="numpy")
    info = got[0].stats["batch"]
    assert info["problems"] == 5 and info["process"] == os.getpid()
    assert info["vertices"] == sum(C.shape[0] for C, _, _ in probs) + 2
    alone = batch.maximum_flow(probs[:2], backend="numpy", pack_edges=0)
    assert [r.stats["batch"]["problems"] for r in alone] == [1, 1]


def test_flow_joined_capacity_overflow_solves_one_by_one():
    # each network's source capacity fits int64, their sum does not: the pack
    # is refused and each network solved alone, with the same answers
    big = 1 << 62
    C = sp.csr_matrix(np.array([[0, big, 0], [0, 0, big], [0, 0, 0]], dtype=np.int64))
    got = batch.maximum_flow([(C, 0, 2), (C, 0, 2), (C, 0, 2)], backend="numpy")
    for res in got:
        assert int(res.flow_value) == big
        assert res.stats["batch"]["problems"] == 1
        check_flow(C, 0, 2, res.flow, res.flow_value)


def test_flow_source_overflow_is_the_single_calls_error():
    big = (1 << 62) + 1
    C = sp.csr_matrix(np.array([[0, big, big], [0, 0, 1], [0, 0, 0]], dtype=np.int64))
    ok = (sp.csr_matrix(np.array([[0, 1], [0, 0]])), 0, 1)
    with pytest.raises(OverflowError, match=r"^problem 1: the total capacity out of the source"):
        batch.maximum_flow([ok, (C, 0, 2), ok], backend="numpy")


def test_flow_large_capacities_in_a_pack():
    rng = np.random.default_rng(3)
    probs = []
    for i in range(4):
        V = 12
        k = 40
        C = sp.coo_matrix((rng.integers(1, 1 << 40, k), (rng.integers(0, V, k), rng.integers(0, V, k))),
                          shape=(V, V)).tocsr()
        probs.append((C, 0, V - 1))
    for res, (C, s, t) in zip(batch.maximum_flow(probs, backend="numpy"), probs):
        assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="numpy"))
        check_flow(C, s, t, res.flow, res.flow_value)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_error_names_the_lowest_bad_index():
    gs = [generators.random_bipartite(5, 5, 2, seed=i) for i in range(8)]
    gs[5] = np.eye(3)                       # dense: TypeError, as a single call
    gs[2] = "not-a-file.mtx"                # missing file: FileNotFoundError
    with pytest.raises(FileNotFoundError, match=r"^problem 2 \('not-a-file.mtx'\): ") as info:
        batch.maximum_bipartite_matching(gs, backend="numpy")
    assert info.value.index == 2
    gs[2] = generators.random_bipartite(5, 5, 2, seed=2)
    with pytest.raises(TypeError, match=r"^problem 5: graph must be sparse") as info:
        batch.maximum_bipartite_matching(gs, backend="numpy")
    assert info.value.index == 5
    assert isinstance(info.value.__cause__, TypeError)


def test_errors_return_puts_the_exception_in_its_slot():
    gs = [generators.random_bipartite(6, 6, 2, seed=i) for i in range(6)]
    gs[1] = np.eye(3)
    gs[4] = sp.csr_matrix((np.ones(1), np.array([7]), np.array([0, 1])), shape=(1, 3))  # column out of range
    got = batch.maximum_bipartite_matching(gs, backend="numpy", errors="return")
    assert isinstance(got[1], TypeError) and got[1].index == 1
    assert isinstance(got[4], ValueError) and str(got[4]).startswith("problem 4: ")
    with pytest.raises(ValueError) as single:
        gpumatch.maximum_bipartite_matching(gs[4], backend="numpy")
    assert str(got[4]) == f"problem 4: {single.value}"     # the single call's message
    for i in (0, 2, 3, 5):
        check_matching(gs[i], got[i], expected_size=scipy_size(gs[i]))


def test_flow_problem_errors():
    C, s, t = generators.genrmf(2, 2, 1, 10, seed=0)
    probs = [(C, s, t), (C, 0, 0), (C, 0, C.shape[0]), (C, None, 1), "x", (C, s), (sp.csr_matrix(np.eye(2)), 0, 1)]
    got = batch.maximum_flow(probs, backend="numpy", errors="return")
    assert isinstance(got[0], gpumatch.MaximumFlowResult)
    assert isinstance(got[1], ValueError) and "problem 1: source and sink vertices must differ" in str(got[1])
    assert isinstance(got[2], ValueError) and str(got[2]).startswith("problem 2: sink value")
    assert isinstance(got[3], TypeError) and "source must be an integer" in str(got[3])
    assert isinstance(got[4], ValueError) and str(got[4]).startswith("problem 4 ('x'): cannot tell the format")
    assert isinstance(got[5], TypeError) and "(csgraph, source, sink)" in str(got[5])
    assert isinstance(got[6], ValueError) and "capacities must be integers" in str(got[6])
    with pytest.raises(ValueError, match=r"^problem 1: "):
        batch.maximum_flow(probs, backend="numpy")


def test_bad_options_raise_before_any_work(monkeypatch):
    g = [sp.csr_matrix(np.eye(2))]
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        batch.maximum_bipartite_matching(g, colour=1)
    with pytest.raises(TypeError, match="initial"):
        batch.maximum_bipartite_matching(g, initial=np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match="perm_type"):
        batch.maximum_bipartite_matching(g, "rows")
    with pytest.raises(ValueError, match="errors"):
        batch.maximum_bipartite_matching(g, errors="ignore")
    with pytest.raises(ValueError, match="backend"):
        batch.maximum_bipartite_matching(g, backend="tpu")
    with pytest.raises(ValueError, match="pack_edges"):
        batch.maximum_bipartite_matching(g, pack_edges=-1)
    with pytest.raises(ValueError, match="progress"):
        batch.maximum_bipartite_matching(g, progress="yes")
    with pytest.raises(ValueError, match="method"):                # a bad value, checked once
        batch.maximum_flow([(sp.csr_matrix(np.eye(2)), 0, 1)], method="simplex", errors="return")
    with pytest.raises(TypeError, match="client"):
        batch.maximum_flow([], client=object())
    with pytest.raises(TypeError, match="sequence of problems"):
        batch.maximum_bipartite_matching(sp.csr_matrix(np.eye(2)))
    with pytest.raises(TypeError, match="sequence of problems"):
        batch.maximum_flow("net.max")


def test_empty_batch():
    assert batch.maximum_bipartite_matching([]) == []
    assert batch.maximum_flow([], backend="numpy") == []


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------


def test_matching_from_matrix_market_files(tmp_path):
    gs = [generators.random_bipartite(12 + i, 10, 2, seed=i) for i in range(6)]
    items = []
    for i, g in enumerate(gs):
        p = tmp_path / f"g{i}.mtx" if i % 2 else tmp_path / f"g{i}.mtx.gz"
        write_matrix_market(p, g, field="pattern")
        items.append(str(p) if i % 3 else p)      # str and PathLike
    items.insert(3, gs[0])                        # files and matrices mixed
    gs.insert(3, gs[0])
    got = batch.maximum_bipartite_matching(items, backend="numpy")
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))


def test_matching_refuses_a_dimacs_file(tmp_path):
    p = tmp_path / "n.max"
    write_dimacs_max(p, sp.csr_matrix(np.array([[0, 1], [0, 0]])), 0, 1)
    got = batch.maximum_bipartite_matching([str(p)], errors="return", backend="numpy")
    assert isinstance(got[0], ValueError) and "maximum_flow" in str(got[0])


def test_flow_from_dimacs_files(tmp_path):
    probs = flow_inputs()[:6]
    items = []
    for i, (C, s, t) in enumerate(probs):
        p = tmp_path / (f"n{i}.max.gz" if i % 2 else f"n{i}.max")
        write_dimacs_max(p, C, s, t)
        items.append(str(p) if i % 3 == 0 else (p, None, None))   # terminals from the file
    got = batch.maximum_flow(items, backend="numpy")
    for (C, s, t), res in zip(probs, got):
        assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="numpy"))
    # integers override the file's terminals (0-based)
    C, s, t = probs[0]
    res, = batch.maximum_flow([(items[0], t, s)], backend="numpy")
    assert int(res.flow_value) == int(gpumatch.maximum_flow(C, t, s, backend="numpy").flow_value)
    # a file without n lines: the given terminals stand in for them (issue 62)
    plain = tmp_path / "plain.max"
    plain.write_text("p max 3 2\na 1 2 5\na 2 3 4\n")
    res, half = batch.maximum_flow([(plain, 0, 2), (str(plain), 0, None)], backend="numpy", errors="return")
    assert int(res.flow_value) == 4
    assert isinstance(half, ValueError) and "missing sink" in str(half)
    # a Matrix Market file of capacities, terminals given
    mp = tmp_path / "caps.mtx"
    write_matrix_market(mp, C)
    res, = batch.maximum_flow([(mp, s, t)], backend="numpy")
    check_flow(C, s, t, res.flow, res.flow_value)
    # a malformed file: the reader's error, with the index and the path
    bad = tmp_path / "bad.max"
    bad.write_text("p max 2 1\nn 1 s\nn 2 t\na 1 3 5\n")
    got = batch.maximum_flow([items[0], str(bad)], backend="numpy", errors="return")
    assert isinstance(got[1], ValueError) and str(got[1]).startswith(f"problem 1 ({str(bad)!r}): line 4")
    with gzip.open(tmp_path / "n1.max.gz", "rt") as fh:
        assert fh.readline()


# ---------------------------------------------------------------------------
# planning and progress
# ---------------------------------------------------------------------------


def test_plan_packs_in_order_and_large_alone():
    sizes = [10, 10, 500, 10, None, 10, 10, 10]
    packs = batch._plan(sizes, budget=30, alone_at=100)
    assert packs == [[0, 1, 3], [2], [4], [5, 6, 7]]
    assert sorted(i for p in packs for i in p) == list(range(len(sizes)))
    assert batch._plan([5] * 4, budget=0, alone_at=0) == [[0], [1], [2], [3]]


def test_progress_bar(capsys):
    pytest.importorskip("tqdm")
    gs = [generators.random_bipartite(5, 5, 2, seed=i) for i in range(5)]
    batch.maximum_bipartite_matching(gs, backend="numpy", progress=True)
    assert "problem" in capsys.readouterr().err
    batch.maximum_bipartite_matching(gs, backend="numpy", progress=None)   # short batch: no bar
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------
# on the GPU: device inputs give device outputs, and the packing runs on CuPy
# ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_device_inputs_give_device_outputs():
    cp = _backend.cp
    import cupyx.scipy.sparse as cpx

    gs = [generators.random_bipartite(30, 25, 3, seed=i) for i in range(20)]
    dev = [cpx.csr_matrix(g) for g in gs]
    mixed = [d if i % 2 else g for i, (g, d) in enumerate(zip(gs, dev))]
    got = batch.maximum_bipartite_matching(mixed, backend="cupy")
    for i, (g, perm) in enumerate(zip(gs, got)):
        assert isinstance(perm, cp.ndarray if i % 2 else np.ndarray)
        check_matching(g, perm, expected_size=scipy_size(g))
    probs = flow_inputs()[:12]
    dprobs = [(cpx.csr_matrix(C.astype(np.float64)), s, t) if i % 2 else (C, s, t)
              for i, (C, s, t) in enumerate(probs)]
    for i, ((C, s, t), res) in enumerate(zip(probs, batch.maximum_flow(dprobs, backend="cupy"))):
        single = gpumatch.maximum_flow(dprobs[i][0], s, t, backend="cupy")
        assert_same_as_single(res, single)
        check_flow(C, s, t, res.flow, res.flow_value)


@pytest.mark.gpu
def test_gpu_many_small_graphs():
    gs = [generators.random_bipartite(60, 50, 4, seed=i) for i in range(300)]
    for rep in range(3):  # the kernels are racy by design: solve several times
        got = batch.maximum_bipartite_matching(gs, backend="cupy")
        for g, perm in zip(gs, got):
            check_matching(g, perm, expected_size=scipy_size(g))
    probs = [generators.washington_rlg(4, 6, 100, seed=i) for i in range(100)]
    for res, (C, s, t) in zip(batch.maximum_flow(probs, backend="cupy"), probs):
        assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="cupy"))
        check_flow(C, s, t, res.flow, res.flow_value)


def test_flow_capacity_dtypes_in_one_pack():
    # int32, uint64, bool and int64 capacities side by side; a negative
    # capacity and a uint64 one past int64 get the single call's errors
    C = np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]])
    good = [sp.csr_matrix(C.astype(dt)) for dt in (np.int32, np.uint64, np.int64, np.uint8)]
    good.append(sp.csr_matrix((C > 0)))
    neg = sp.csr_matrix(C.astype(np.int64))
    neg.data[0] = -1
    huge = sp.csr_matrix(C.astype(np.uint64))
    huge.data[0] = np.uint64(1 << 63)
    probs = [(g, 0, 2) for g in good[:2]] + [(neg, 0, 2)] + [(g, 0, 2) for g in good[2:]] + [(huge, 0, 2)]
    got = batch.maximum_flow(probs, backend="numpy", errors="return")
    assert [int(r.flow_value) for i, r in enumerate(got) if i not in (2, 6)] == [4, 4, 4, 4, 2]
    for i, err in ((2, ValueError), (6, OverflowError)):
        with pytest.raises(err) as single:
            gpumatch.maximum_flow(probs[i][0], 0, 2, backend="numpy")
        assert isinstance(got[i], err) and str(got[i]) == f"problem {i}: {single.value}"


def test_unknown_sizes_are_grouped_in_order():
    """Problems of unknown size (Futures) that the plan leaves one per chunk
    are grouped, consecutive ones only, about UNKNOWN_CHUNKS_PER_WORKER
    chunks per worker; known ones keep their chunks; the order is kept."""
    sizes = [None] * 10 + [5] + [None] * 3
    chunks = [[i] for i in range(14)]
    got = _batch_dask._group_unknown(chunks, sizes, workers=1)
    per = -(-13 // _batch_dask.UNKNOWN_CHUNKS_PER_WORKER)
    assert [i for c in got for i in c] == list(range(14))
    assert [10] in got and all(len(c) <= per for c in got)
    assert max(len(c) for c in got) == per > 1
    assert _batch_dask._group_unknown(chunks[:2], sizes[:2], workers=2) == chunks[:2]   # no more than the workers
    assert all(len(c) == 1 for c in _batch_dask._group_unknown(chunks, sizes, workers=64))


def test_unknown_sizes_are_grouped_by_the_worker_holding_them():
    """With holders (Futures spread over two workers), a chunk holds one
    worker's problems only, consecutive among that worker's, chunks in
    order of their first problem, every problem once."""
    sizes = [None] * 40 + [5] + [None] * 9
    holder = [("a",) if i % 3 else ("b",) for i in range(50)]
    chunks = [[i] for i in range(50)]
    got = _batch_dask._group_unknown(chunks, sizes, workers=2, holder=holder)
    assert sorted(i for c in got for i in c) == list(range(50))
    assert [c[0] for c in got] == sorted(c[0] for c in got)
    assert [40] in got
    for c in got:
        if c != [40]:
            assert len({holder[i] for i in c}) == 1 and c == sorted(c)
            assert not (min(c) < 40 < max(c))               # a known problem ends the runs
    assert max(len(c) for c in got) > 1


def test_known_weights_give_halving_chunks_per_holder():
    """With the bytes of every Future known: each holder's problems dealt
    into chunks of half the problems left (down to LAST_CHUNK_SHARE), each
    drawn across the sizes, the holders' chunks interleaved round by round;
    data on two workers is a holder of its own; a known problem keeps its
    chunk."""
    rng = np.random.default_rng(3)
    n = 90
    weight = [int(x) for x in rng.integers(1_000, 40_000, n)]
    holder = [("a",), ("b",), ("a", "b")] * (n // 3)
    sizes = [None] * n
    sizes[5], weight[5], holder[5] = 9, None, None          # an in-memory problem
    chunks = [[i] for i in range(n)]
    got = _batch_dask._group_unknown(chunks, sizes, 2, holder, weight, {"a": 1, "b": 1})
    assert sorted(i for c in got for i in c) == list(range(n))
    assert got[0] == [5]
    assert {holder[got[k][0]] for k in (1, 2, 3)} == {("a",), ("b",), ("a", "b")}   # round by round
    for h in (("a",), ("b",), ("a", "b")):
        mine = [c for c in got if holder[c[0]] == h]
        assert all({holder[i] for i in c} == {h} for c in mine)
        counts = [len(c) for c in mine]
        threads = len(h)
        assert counts == sorted(counts, reverse=True) and 3 < len(mine) <= len(_batch_dask._shares(threads))
        assert abs(counts[0] - sum(counts) / (2 * threads)) <= 1
        ranked = sorted(weight[i] for c in mine for i in c)
        lo, hi = ranked[len(ranked) // 4], ranked[3 * len(ranked) // 4]
        for c in mine[:3]:   # each drawn across the sizes
            assert min(weight[i] for i in c) <= lo and max(weight[i] for i in c) >= hi
        share = sum(weight[i] for i in mine[0]) / sum(ranked)
        assert abs(share - 1 / (2 * threads)) < 0.15
    assert _batch_dask._shares(1) == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 16]
    # all on one of two workers: its chunks are cut for both threads (the other takes the later ones)
    alone = _batch_dask._group_unknown(chunks, [None] * n, 2, [("a",)] * n, [1] * n, {"a": 1, "b": 1})
    assert [len(c) for c in alone[:2]] == [n // 4, round(n * 3 / 16)] and len(alone) > 5
    # a weight unknown for one Future: chunks by count, as without weights
    weight[7] = None
    assert _batch_dask._group_unknown(chunks, sizes, 2, holder, weight, {"a": 1, "b": 1}) == \
        _batch_dask._group_unknown(chunks, sizes, 2, holder)


def test_data_on_several_workers_goes_with_the_least_loaded():
    holder = [("a",), ("a",), ("a", "b"), ("a", "b"), None, ("b",), ("a", "b", "c")]
    weight = [10, 10, 7, 5, None, 3, 4]
    # b holds 3: the 7 goes to b (10), the 5 to b (15 < 20), the 4 to c (0)
    assert _batch_dask._settled(holder, weight) == [("a",), ("a",), ("b",), ("b",), None, ("b",), ("c",)]
    assert _batch_dask._settled(holder, None) == [("a",), ("a",), ("b",), ("a",), None, ("b",), ("c",)]
    assert _batch_dask._settled(holder[:2], weight) == holder[:2] and _batch_dask._settled(None, None) is None


def test_packs_only_graphs_below_the_measured_crossover(monkeypatch):
    """A problem above the backend's PACK_ALONE is solved alone even when a
    quarter of the budget is larger; NumPy keeps the quarter."""
    assert batch._alone_at(1 << 17, "numpy") == (1 << 17) // 4
    for name in ("cupy", "numba"):
        monkeypatch.setattr(batch._backend, "resolve_backend", lambda b, name=name: name)
        assert batch._alone_at(1 << 21, "auto") == batch.PACK_ALONE[name] < (1 << 21) // 4
        assert batch._alone_at(1 << 8, "auto") == (1 << 8) // 4
    monkeypatch.setattr(batch._backend, "resolve_backend", lambda b: "cupy")
    sizes = [1000, batch.PACK_ALONE["cupy"] + 1, 2000, 3000]
    assert batch._plan(sizes, 1 << 21, batch._alone_at(1 << 21, "auto")) == [[0, 2, 3], [1]]


def _feed_run(feed, first, order):
    """Drive `feed` (a ``_batch_dask._Feed`` that gave `first`): `order(inflight)`
    picks which running chunk finishes next; returns ``{chunk: workers it was
    sent to}`` and checks that no place ever has more than its depth in flight."""
    sent, inflight = {}, []
    for k, where in first:
        assert k not in sent
        sent[k] = where
        inflight.append(k)
    while inflight:
        assert all(0 <= feed.busy[p] <= feed.depth[p] for p in feed.busy)
        k = order(inflight)
        inflight.remove(k)
        for k2, where in feed.finished(k):
            assert k2 not in sent
            sent[k2] = where
            inflight.append(k2)
    return sent


def test_feed_gives_each_place_its_chunks_and_lets_a_fast_one_take_the_rest():
    A, B = ("tcp://a",), ("tcp://b",)
    places = [A, B] * 5 + [None]          # round by round, then a chunk Dask places
    weights = [50, 50, 25, 25, 12, 12, 6, 6, 6, 6, 9]
    feed = _batch_dask._Feed(places, weights, {"tcp://a": 1, "tcp://b": 1})
    first = feed.start()
    assert first == [(0, None), (1, None), (2, None), (3, None), (10, None)]   # two each, Dask's own
    # A finishes whatever it has at once, B never: A takes its own, then B's from the end
    sent = _feed_run(feed, first, lambda inflight: next((k for k in inflight if feed.ran_at.get(k) == A), inflight[0]))
    assert sorted(sent) == list(range(11))
    assert [sent[k] for k in (4, 6, 8)] == [None] * 3           # A's own
    assert [sent[k] for k in (9, 7, 5)] == [A] * 3              # B's waiting ones, from the end, taken by A
    # one place: every chunk at once, in order
    one = _batch_dask._Feed([A] * 4, [1] * 4, {"tcp://a": 1})
    assert one.start() == [(k, None) for k in range(4)] and one.finished(2) == []
    # a worker holding nothing takes from the end of the others' lists at once
    idle = _batch_dask._Feed([A] * 5, [8, 4, 2, 1, 1], {"tcp://a": 1, "tcp://c": 1})
    assert idle.start() == [(0, None), (1, None), (3, ("tcp://c",)), (4, ("tcp://c",))]
    assert idle.finished(3) == [(2, ("tcp://c",))] and idle.finished(0) == []

"""Tests of gpumatch.batch with a Dask client: a LocalCluster of two CPU worker processes.

Skipped when dask.distributed is not installed (``pip install '.[dask]'``).
Results are certified as in test_batch.py; these tests check what the
client adds: order across chunks, errors named by index, files read on the
workers, and worker processes that keep gpumatch imported between tasks.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")

import gpumatch  # noqa: E402
from gpumatch import _batch_dask, batch, generators  # noqa: E402
from gpumatch.io import write_dimacs_max, write_matrix_market  # noqa: E402
from gpumatch.testing import check_flow, check_matching  # noqa: E402

from test_batch import assert_same_as_single, flow_inputs, scipy_size  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_matching_through_workers_in_order(client):
    gs = [generators.random_bipartite(int(10 + 3 * i), int(8 + 2 * i), 2.5, seed=i) for i in range(40)]
    gs[7] = generators.random_bipartite(300, 300, 3, seed=7)        # alone
    got = batch.maximum_bipartite_matching(gs, client=client, backend="numpy", pack_edges=2000)
    assert len(got) == len(gs)
    for g, perm in zip(gs, got):
        assert isinstance(perm, np.ndarray) and perm.dtype == np.int32 and perm.shape == (g.shape[1],)
        check_matching(g, perm, expected_size=scipy_size(g))
    cols = batch.maximum_bipartite_matching(gs, "column", client=client, backend="numpy")
    for g, perm in zip(gs, cols):
        check_matching(g, perm, "column", expected_size=scipy_size(g))


def test_flow_through_workers_equals_single_calls(client):
    probs = flow_inputs()
    got = batch.maximum_flow(probs, client=client, backend="numpy", pack_edges=400)
    for (C, s, t), res in zip(probs, got):
        assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="numpy"))
    where = {(r.stats["batch"]["process"], r.stats["batch"]["chunk_in_process"]) for r in got}
    pids = {pid for pid, _ in where}
    assert os.getpid() not in pids          # solved on the workers
    assert len(pids) == 2                   # both of them
    # gpumatch stays imported in a worker between tasks (so do its compiled
    # kernels): a worker's chunk counter goes on from task to task
    assert max(n for _, n in where) > 1


def test_errors_through_workers(client):
    probs = flow_inputs()[:10]
    probs[6] = (np.eye(3), 0, 1)
    probs[3] = (probs[3][0], 0, 0)
    got = batch.maximum_flow(probs, client=client, backend="numpy", errors="return", pack_edges=300)
    assert isinstance(got[3], ValueError) and str(got[3]).startswith("problem 3: ")
    assert isinstance(got[6], TypeError) and got[6].index == 6
    for i in (0, 1, 2, 4, 5, 7, 8, 9):
        C, s, t = probs[i]
        check_flow(C, s, t, got[i].flow, got[i].flow_value)
    with pytest.raises(ValueError, match=r"^problem 3: source and sink vertices must differ"):
        batch.maximum_flow(probs, client=client, backend="numpy", pack_edges=300)


def test_assignment_through_workers(client):
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

    from _lap_common import random_sparse

    rng = np.random.default_rng(64)
    gs = [random_sparse(rng, int(rng.integers(2, 30)), int(rng.integers(2, 30)), 0.3, perm=True) for _ in range(30)]
    gs[4] = sp.csr_matrix(np.array([[1, 0], [2, 0]]))                 # no full matching
    futs = client.scatter(gs[:3])
    got = batch.min_weight_full_bipartite_matching(futs + gs[3:], client=client, errors="return", pack_edges=500)
    assert isinstance(got[4], ValueError) and str(got[4]) == "problem 4: no full matching exists"
    for i, (A, res) in enumerate(zip(gs, got)):
        if i != 4:
            (r, c), (r0, c0) = res, scipy_mwfbm(A)
            assert A[r, c].sum() == A[r0, c0].sum()
    with pytest.raises(ValueError, match=r"^problem 4: no full matching exists"):
        batch.min_weight_full_bipartite_matching(gs, client=client, maximize=True)


def test_files_are_read_on_the_workers(client, tmp_path, monkeypatch):
    gs = [generators.random_bipartite(20, 15, 2, seed=i) for i in range(8)]
    paths = []
    for i, g in enumerate(gs):
        p = str(tmp_path / f"g{i}.mtx.gz")
        write_matrix_market(p, g, field="pattern")
        paths.append(p)
    nets = flow_inputs()[:5]
    npaths = []
    for i, (C, s, t) in enumerate(nets):
        p = str(tmp_path / f"n{i}.max")
        write_dimacs_max(p, C, s, t)
        npaths.append(p)

    def no_reading_here(*args, **kwargs):
        raise AssertionError("a file was read in the client's process")

    monkeypatch.setattr(gpumatch.io, "read_graph", no_reading_here)   # this process only
    got = batch.maximum_bipartite_matching(paths + ["missing.mtx"], client=client, backend="numpy",
                                           errors="return")
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))
    assert isinstance(got[-1], FileNotFoundError) and str(got[-1]).startswith("problem 8 ('missing.mtx'): ")
    flows = batch.maximum_flow(npaths, client=client, backend="numpy")
    for (C, s, t), res in zip(nets, flows):
        check_flow(C, s, t, res.flow, res.flow_value)


def test_progress_with_a_client(client, capsys):
    gs = [sp.csr_matrix(np.eye(3)) for _ in range(4)]
    got = batch.maximum_bipartite_matching(gs, client=client, backend="numpy", progress=True)
    assert [int((p >= 0).sum()) for p in got] == [3, 3, 3, 3]


def test_futures_of_data_already_on_the_cluster(client):
    gs = [generators.random_bipartite(30, 25, 3, seed=i) for i in range(6)]
    futs = client.scatter(gs)
    got = batch.maximum_bipartite_matching(futs[:3] + gs[3:], client=client, backend="numpy")
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))
    probs = flow_inputs()[:4]
    cfuts = client.scatter([C for C, _, _ in probs])
    got = batch.maximum_flow([(f, s, t) for f, (_, s, t) in zip(cfuts, probs)], client=client, backend="numpy")
    for (C, s, t), res in zip(probs, got):
        assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="numpy"))


@pytest.mark.gpu
def test_local_cuda_cluster_one_worker_per_gpu():
    dask_cuda = pytest.importorskip("dask_cuda")
    from gpumatch import _backend

    n = min(2, _backend.cp.cuda.runtime.getDeviceCount())
    gs = [generators.random_bipartite(200 + i, 180, 4, seed=i) for i in range(40)]
    probs = flow_inputs()
    with dask_cuda.LocalCUDACluster(n_workers=n, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as gpu_client:
        got = batch.maximum_bipartite_matching(gs, client=gpu_client, backend="cupy", pack_edges=20_000)
        flows = batch.maximum_flow(probs, client=gpu_client, backend="cupy", pack_edges=400)
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))
    for (C, s, t), res in zip(probs, flows):
        assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="cupy"))
        assert res.stats["backend"] == "cupy"
    assert len({r.stats["batch"]["process"] for r in flows}) == n


def test_many_futures_are_grouped_and_stay_in_order(client):
    """40 graphs already on the workers (sizes unknown to the caller) go in
    a few chunks, not a task each; results in order; a bad one in the
    middle is still named by its index."""
    gs = [generators.random_bipartite(40 + i, 35, 3, seed=i) for i in range(40)]
    futs = client.scatter(gs)
    got = batch.maximum_bipartite_matching(futs, client=client, backend="numpy")
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))
    bad = futs[:17] + client.scatter([np.eye(3)]) + futs[18:]   # dense: not a sparse matrix
    got = batch.maximum_bipartite_matching(bad, client=client, backend="numpy", errors="return")
    assert isinstance(got[17], TypeError) and "17" in str(got[17])
    for i in (16, 18, 39):
        check_matching(gs[i], got[i], expected_size=scipy_size(gs[i]))
    with pytest.raises(TypeError, match="17"):
        batch.maximum_bipartite_matching(bad, client=client, backend="numpy")
    # the chunks follow the data: each holds graphs of one worker only
    holder, weight = _batch_dask._where(client, "matching", futs, [None] * len(futs))
    held = [g.data.nbytes + g.indices.nbytes + g.indptr.nbytes for g in gs]   # Dask's count: these and a bit
    assert all(b <= w <= b + 4096 for w, b in zip(weight, held)) and np.corrcoef(weight, held)[0, 1] > 0.99
    workers = set(client.scheduler_info()["workers"])
    assert {w for h in holder for w in h} == workers     # scatter spread them (the calls above may have copied some)
    chunks = _batch_dask._group_unknown([[i] for i in range(len(futs))], [None] * len(futs), 2, holder)
    assert all(len({holder[i] for i in c}) == 1 for c in chunks) and max(len(c) for c in chunks) > 1


def test_futures_on_one_worker_are_shared_with_an_idle_one():
    """Flow networks all scattered to one worker: results in order and
    equal to single calls; the worker holding them keeps its first chunks,
    the other takes chunks from the end of its list (Dask moves their data).  Dask's
    own work stealing, which may move a task by itself, is off here."""
    import dask

    with dask.config.set({"distributed.scheduler.work-stealing": False}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=40)   # beside the module's
    with cluster, distributed.Client(cluster) as client:
        probs = [generators.washington_rlg(8, 10, 30, seed=i) for i in range(24)] + flow_inputs()
        heavy, idle = sorted(client.nthreads())
        futs = client.scatter([C for C, _, _ in probs], workers=[heavy])
        got = batch.maximum_flow([(f, s, t) for f, (_, s, t) in zip(futs, probs)], client=client,
                                 backend="numpy")
        for (C, s, t), res in zip(probs, got):
            assert_same_as_single(res, gpumatch.maximum_flow(C, s, t, backend="numpy"))
        pid = client.run(os.getpid)
        where = [r.stats["batch"]["process"] for r in got]
        assert set(where) == {pid[heavy], pid[idle]}
        # its first chunk (a quarter of the problems: cut for both workers) stays with the data
        assert where.count(pid[heavy]) >= len(probs) // 4


def test_futures_raise_the_first_bad_problem(client):
    """Futures on both workers, chunks handed out as workers free up: the
    error raised is the first bad problem's, whichever chunk fails first;
    with errors="return" every other problem is solved."""
    probs = [generators.washington_rlg(6, 8, 20, seed=i) for i in range(40)]
    futs = client.scatter([C for C, _, _ in probs])
    items = [(f, s, t) for f, (_, s, t) in zip(futs, probs)]
    for bad in (33, 4):
        items[bad] = (futs[bad], 0, 0)
    with pytest.raises(ValueError, match=r"^problem 4: source and sink vertices must differ"):
        batch.maximum_flow(items, client=client, backend="numpy")
    got = batch.maximum_flow(items, client=client, backend="numpy", errors="return")
    assert [i for i, r in enumerate(got) if isinstance(r, ValueError)] == [4, 33]
    for i, ((C, s, t), res) in enumerate(zip(probs, got)):
        if i not in (4, 33):
            check_flow(C, s, t, res.flow, res.flow_value)


def test_results_come_straight_from_the_workers_of_a_local_cluster(client, monkeypatch):
    # a cluster this client started, on loopback addresses: one hop, not two
    assert _batch_dask._gather_direct(client, client.nthreads()) is True
    asked = []
    real = type(client).gather

    def spy(self, futures, *args, **kwargs):
        asked.append(kwargs.get("direct"))
        return real(self, futures, *args, **kwargs)

    monkeypatch.setattr(type(client), "gather", spy)
    gs = [generators.random_bipartite(40, 40, 3, seed=i) for i in range(6)]
    got = batch.maximum_bipartite_matching(gs, client=client, backend="numpy", pack_edges=0)
    assert asked and all(d is True for d in asked)
    for g, perm in zip(gs, got):
        check_matching(g, perm, expected_size=scipy_size(g))


def test_gather_direct_keeps_dasks_default_elsewhere():
    class FakeClient:
        direct_to_workers = None
        cluster = object()

    c = FakeClient()
    assert _batch_dask._gather_direct(c, {"tcp://127.0.0.1:4001": 1, "tcp://[::1]:4002": 1}) is True
    assert _batch_dask._gather_direct(c, {"tcp://127.0.0.1:4001": 1, "tcp://10.0.0.3:4002": 1}) is None
    assert _batch_dask._gather_direct(c, {}) is None
    c.cluster = None     # connected by address: a loopback address may be a forwarded port
    assert _batch_dask._gather_direct(c, {"tcp://127.0.0.1:4001": 1}) is None
    c.direct_to_workers = False      # the client's own choice wins either way
    assert _batch_dask._gather_direct(c, {"tcp://127.0.0.1:4001": 1}) is False
    c.direct_to_workers = True
    assert _batch_dask._gather_direct(c, {"tcp://10.0.0.3:4002": 1}) is True

#!/usr/bin/env python
"""Batched solves (``gpumatch.batch``) against a loop of single calls, and across Dask workers.

Two parts, each checked (every result certified by ``gpumatch.testing``
before its time counts):

(a) ``--part small`` (default): one process, ``--count`` (10,000) random
    bipartite graphs of at most ``--max-edges`` (1,000) edges, the batch
    call against a Python loop of ``gpumatch.maximum_bipartite_matching``
    (or, with ``--problem flow``, random capacitated networks against a
    loop of ``gpumatch.maximum_flow``).  Target on one H100: batch >= 20x
    faster than the loop.

(b) ``--part large --client local-cuda N`` (a ``dask_cuda.LocalCUDACluster``
    of N workers, one per GPU) or ``--client local N`` (a
    ``distributed.LocalCluster`` of N CPU worker processes): ``--count``
    (200) random graphs of ``--min-edges``..``--max-edges`` (100k..2M)
    edges, as Matrix Market files read where they are solved
    (``--inputs files``), or already on the workers (``futures``: scattered
    before the timed call; ``--on-first`` piles a share of them on one
    worker), or sent with the call (``memory``); throughput
    of the batch call on the cluster against the same call without a
    client (one device) on the same graphs.  That call runs in a child
    process without Dask (a scheduler and client in its process would
    compete for its interpreter), and the two alternate, one run each in
    turn: the host's speed drifts (the same one-GPU call took 0.64-1.02 s
    within minutes on a two-H100 host), and alternating lets both sides
    see the same drift.  The ratio reported is the median of the per-pair
    ratios.  Target on two H100s: >= 1.8x.

Examples::

    python benchmarks/bench_batch.py --backend numpy --out bench_out/batch_small_cpu.json
    python benchmarks/bench_batch.py --part large --client local-cuda 2 --out bench_out/batch_large_2gpu.json
    python benchmarks/bench_batch.py --part large --client local 2 --backend numpy \\
        --count 24 --min-edges 20000 --max-edges 200000

The script needs only gpumatch, NumPy and SciPy for part (a), plus
``dask[distributed]`` (and ``dask-cuda`` for ``local-cuda``) for part (b).
The last thing it prints is a short table; ``--out FILE`` also writes a
JSON record of the run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import gpumatch  # noqa: E402
from gpumatch import _backend, batch, generators, testing  # noqa: E402
from gpumatch.io import write_matrix_market  # noqa: E402


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def small_graph(rng, max_edges):
    """A random bipartite graph of at most `max_edges` edges (duplicates merged)."""
    k = int(rng.integers(max_edges // 10, max_edges + 1))
    m = int(rng.integers(max(k // 8, 1), max(k // 2, 2)))
    n = int(rng.integers(max(k // 8, 1), max(k // 2, 2)))
    A = sp.coo_matrix((np.ones(k, dtype=np.float64), (rng.integers(0, m, k), rng.integers(0, n, k))),
                      shape=(m, n)).tocsr()
    A.sum_duplicates()
    A.data[:] = 1.0
    return A


def small_network(rng, max_edges):
    """A random capacitated network of at most `max_edges` arcs; source 0, sink V-1."""
    k = int(rng.integers(max_edges // 10, max_edges + 1))
    V = int(rng.integers(max(k // 6, 3), max(k // 3, 4)))
    u, v = rng.integers(0, V, k), rng.integers(0, V, k)
    C = sp.coo_matrix((rng.integers(1, 100, k).astype(np.int64), (u, v)), shape=(V, V)).tocsr()
    C.sum_duplicates()
    return C, 0, V - 1


def large_graph(rng, min_edges, max_edges, seed):
    """A random square bipartite graph of about log-uniform(min, max) edges, mean degree 5."""
    edges = float(np.exp(rng.uniform(np.log(min_edges), np.log(max_edges))))
    m = max(int(edges / 5), 2)
    return generators.random_bipartite(m, m, 5.0, seed=seed)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def timed(fn, repeats):
    """Median wall time of `repeats` calls (results come back on the host: no device sync needed)."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, out


def check_matchings(graphs, results, label):
    sizes = []
    for i, (g, r) in enumerate(zip(graphs, results)):
        if isinstance(r, BaseException):
            raise SystemExit(f"{label}: graph {i} failed: {r}")
        sizes.append(testing.check_matching(g, _backend.to_numpy(r)).size)
    return sizes


def check_flows(problems, results, label):
    values = []
    for i, ((C, s, t), r) in enumerate(zip(problems, results)):
        if isinstance(r, BaseException):
            raise SystemExit(f"{label}: network {i} failed: {r}")
        values.append(testing.check_flow(C, s, t, r.flow, r.flow_value).value)
    return values


def environment():
    env = {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
           "gpumatch": gpumatch.__version__, "cpu": platform.processor() or platform.machine(),
           "cpus": os.cpu_count(), "gpu": _backend.device_name(),
           "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        import cupy

        env["cupy"] = cupy.__version__
        env["gpus"] = cupy.cuda.runtime.getDeviceCount()
    except Exception:
        pass
    try:
        import dask
        import distributed

        env["dask"], env["distributed"] = dask.__version__, distributed.__version__
    except Exception:
        pass
    return env


def table(rows):
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]) for k in keys) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# part (a): many small problems in one process
# ---------------------------------------------------------------------------


def part_small(args):
    rng = np.random.default_rng(args.seed)
    count = args.count or 10_000
    max_edges = args.max_edges or 1_000
    opts = {"backend": args.backend}
    if args.problem == "matching":
        inputs = [small_graph(rng, max_edges) for _ in range(count)]
        loop = lambda: [gpumatch.maximum_bipartite_matching(g, **opts) for g in inputs]  # noqa: E731
        packed = lambda: batch.maximum_bipartite_matching(inputs, pack_edges=args.pack_edges, **opts)  # noqa: E731
    else:
        inputs = [small_network(rng, max_edges) for _ in range(count)]
        loop = lambda: [gpumatch.maximum_flow(C, s, t, **opts) for C, s, t in inputs]  # noqa: E731
        packed = lambda: batch.maximum_flow(inputs, pack_edges=args.pack_edges, **opts)  # noqa: E731
    nnz = [(x if args.problem == "matching" else x[0]).nnz for x in inputs]
    print(f"{count} {args.problem} problems, {min(nnz)}..{max(nnz)} stored entries "
          f"({sum(nnz):,} in all), backend {args.backend}", file=sys.stderr)
    # warm-up (CUDA kernels compile here), on a few problems
    warm = inputs[: min(50, count)]
    if args.problem == "matching":
        batch.maximum_bipartite_matching(warm, **opts)
        [gpumatch.maximum_bipartite_matching(g, **opts) for g in warm[:3]]
    else:
        batch.maximum_flow(warm, **opts)
        [gpumatch.maximum_flow(C, s, t, **opts) for C, s, t in warm[:3]]
    # interleaved, so that a change of load on the machine hits both alike
    all_batch, all_loop = [], []
    for r in range(max(args.repeats, args.loop_repeats)):
        if r < args.repeats:
            _, t, res_batch = timed(packed, 1)
            all_batch.append(t[0])
        if r < args.loop_repeats:
            _, t, res_loop = timed(loop, 1)
            all_loop.append(t[0])
    t_batch = statistics.median(all_batch)
    t_loop = statistics.median(all_loop) if all_loop else None
    check = check_matchings if args.problem == "matching" else check_flows
    a = check(inputs, res_batch, "batch") if args.check else None
    b = check(inputs, res_loop, "loop") if args.check and all_loop else a
    if args.check and a != b:
        raise SystemExit("batch and loop disagree on a size/value")
    row = {"part": "small", "problem": args.problem, "backend": args.backend, "count": count,
           "entries": int(sum(nnz)), "pack_edges": args.pack_edges or batch._default_pack_edges(args.backend),
           "batch_s": t_batch, "loop_s": t_loop if t_loop is not None else "-",
           "speedup": t_loop / t_batch if t_loop is not None else "-", "checked": bool(args.check)}
    return [row], {"batch_times_s": all_batch, "loop_times_s": all_loop}


# ---------------------------------------------------------------------------
# part (b): large problems over Dask workers
# ---------------------------------------------------------------------------


def make_client(kind, n, malloc_trim):
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SystemExit("--client needs dask.distributed: pip install 'gpumatch[dask]' (or carry the wheels)")
    if not malloc_trim:
        # Dask starts its workers with MALLOC_TRIM_THRESHOLD_=65536, which
        # also stops glibc from raising its mmap threshold: every large NumPy
        # temporary is then a fresh mmap, and the host-side work of a solve
        # (validation, the NumPy backend) ran 2-3x slower in a worker than in
        # this process on the development machine.
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    if kind == "local-cuda":
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            raise SystemExit("--client local-cuda needs dask-cuda: pip install 'gpumatch[dask-cuda12]' "
                             "(or [dask-cuda13], or carry the wheels)")
        cluster = LocalCUDACluster(n_workers=n, threads_per_worker=1, dashboard_address=None)
    else:
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    return client, cluster


def _warm_worker(backend):
    """Compile the kernels in a worker process (run on every worker before timing)."""
    g = sp.csr_matrix(np.eye(4))
    gpumatch.maximum_bipartite_matching(g, backend=backend)
    # a graph whose matching reaches G-PR's augmenting tail (its kernels too)
    gpumatch.maximum_bipartite_matching(generators.random_bipartite(50_000, 50_000, 5, seed=1), backend=backend)
    batch.maximum_bipartite_matching([g, g], backend=backend)
    C = sp.csr_matrix(np.array([[0, 2, 0], [0, 0, 2], [0, 0, 0]]))
    batch.maximum_flow([(C, 0, 2), (C, 0, 2)], backend=backend)
    return os.getpid()


def _large_graphs(args):
    rng = np.random.default_rng(args.seed)
    lo, hi = args.min_edges or 100_000, args.max_edges or 2_000_000
    return [large_graph(rng, lo, hi, seed=args.seed * 100_003 + i) for i in range(args.count or 200)]


def _one_device(conn, args, paths):
    """Child process: the batch call without a client, one timed run per request.

    Builds the same graphs as the parent (same seeds), compiles, says it is
    ready, then answers each input mode sent with ``(seconds, sizes)``; the
    sizes are certified on the first run of each mode only (a certificate
    of 145M edges takes longer than the run).  None ends it."""
    graphs = _large_graphs(args)
    _warm_worker(args.backend)
    conn.send("ready")
    checked = set()
    while True:
        mode = conn.recv()
        if mode is None:
            return
        local = paths if mode == "files" else graphs
        t = time.perf_counter()
        res = batch.maximum_bipartite_matching(local, backend=args.backend, pack_edges=args.pack_edges)
        t = time.perf_counter() - t
        sizes = None
        if args.check and mode not in checked:
            sizes = check_matchings(graphs, res, "one device")
            checked.add(mode)
        conn.send((t, sizes))


def part_large(args):
    import multiprocessing

    if not args.client:
        raise SystemExit("--part large needs --client local-cuda N or --client local N")
    kind, nworkers = args.client[0], int(args.client[1])
    if kind not in ("local-cuda", "local"):
        raise SystemExit("--client: local-cuda N or local N")
    modes = [m for m in args.inputs.split(",") if m]
    if not modes or set(modes) - {"files", "memory", "futures"}:
        raise SystemExit("--inputs: a comma-separated list of files, memory, futures")
    t0 = time.perf_counter()
    graphs = _large_graphs(args)
    count = len(graphs)
    nnz = [g.nnz for g in graphs]
    tmp, paths = None, None
    if "files" in modes:
        tmp = tempfile.TemporaryDirectory(prefix="gpumatch_batch_")
        paths = []
        for i, g in enumerate(graphs):
            p = os.path.join(tmp.name, f"g{i:04d}.mtx")
            write_matrix_market(p, g, field="pattern")
            paths.append(p)
    print(f"{count} graphs, {min(nnz):,}..{max(nnz):,} edges ({sum(nnz):,} in all), "
          f"built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    opts = {"backend": args.backend, "pack_edges": args.pack_edges}
    rows, extra = [], {"modes": {}}
    ctx = multiprocessing.get_context("spawn")
    conn, child_conn = ctx.Pipe()
    child = ctx.Process(target=_one_device, args=(child_conn, args, paths), daemon=True)
    child.start()
    try:
        if conn.recv() != "ready":
            raise SystemExit("the one-device process did not start")
        client, cluster = make_client(kind, nworkers, args.malloc_trim)
        try:
            extra["worker_pids"] = list(client.run(_warm_worker, args.backend).values())
            for mode in modes:
                if mode == "futures":   # the graphs already on the workers (not timed)
                    remote = place_futures(client, graphs, args.on_first)
                else:
                    remote = paths if mode == "files" else graphs
                all_one, all_n, sizes_one, sizes_n = [], [], None, None
                for rep in range(args.repeats):   # one run each, in turn
                    if mode == "futures" and args.on_first is not None and rep:
                        remote = None   # placed afresh: a run leaves copies where it moved data
                        remote = place_futures(client, graphs, args.on_first)
                    conn.send(mode)
                    t_one, got = conn.recv()
                    all_one.append(t_one)
                    sizes_one = got if got is not None else sizes_one
                    _, t_n, res_n = timed(lambda r=remote: batch.maximum_bipartite_matching(r, client=client, **opts), 1)
                    all_n.append(t_n[0])
                if args.check:
                    sizes_n = check_matchings(graphs, res_n, "cluster")
                    if sizes_one != sizes_n:
                        raise SystemExit(f"{mode}: the cluster and one device disagree on a matching size")
                res_n = remote = None
                pairs = statistics.median(a / b for a, b in zip(all_one, all_n))
                extra["modes"][mode] = {"one_times_s": all_one, "cluster_times_s": all_n, "pair_ratio": pairs}
                t_one, t_n = statistics.median(all_one), statistics.median(all_n)
                for label, t, w, ratio in (("one device, own process", t_one, 1, 1.0),
                                           (f"{kind} x{nworkers}", t_n, nworkers, pairs)):
                    rows.append({"part": "large", "inputs": mode, "run": label, "workers": w,
                                 "backend": args.backend, "count": count, "entries": int(sum(nnz)),
                                 "time_s": t, "graphs_per_s": count / t, "vs_one": ratio,
                                 "checked": bool(args.check)})
        finally:
            client.close()
            cluster.close()
    finally:
        if child.is_alive():
            conn.send(None)
        child.join(timeout=30)
        if tmp is not None:
            tmp.cleanup()
    return rows, extra


def place_futures(client, graphs, on_first):
    """The graphs scattered to the workers (Dask spreads them by count), or
    with `on_first` that share of them on the first worker and the rest
    spread over the others."""
    if on_first is None:
        remote = client.scatter(graphs)
    else:
        workers = sorted(client.nthreads())
        k = int(round(on_first * len(graphs)))
        remote = client.scatter(graphs[:k], workers=workers[:1], hash=False) if k else []
        if k < len(graphs):
            remote += client.scatter(graphs[k:], workers=workers[1:] or workers, hash=False)
    distributed_wait(remote)
    return remote


def distributed_wait(futures):
    from distributed import wait

    wait(futures)


# ---------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("small", "large"), default="small")
    ap.add_argument("--problem", choices=("matching", "flow"), default="matching",
                    help="part (a) only; part (b) runs matchings")
    ap.add_argument("--backend", default="auto", help="any backend gpumatch accepts (default auto)")
    ap.add_argument("--client", nargs=2, metavar=("KIND", "N"), help="local-cuda N | local N (part b)")
    ap.add_argument("--count", type=int, help="problems (default 10000 for part a, 200 for part b)")
    ap.add_argument("--min-edges", type=int, help="part b: smallest graph (default 100000)")
    ap.add_argument("--max-edges", type=int, help="largest problem (default 1000 for a, 2000000 for b)")
    ap.add_argument("--inputs", default="futures,files",
                    help="part b, comma-separated: futures (the graphs scattered to the workers before the "
                         "timed call: compute throughput), files (Matrix Market files read where solved), "
                         "memory (matrices sent with the call)")
    ap.add_argument("--on-first", type=float, metavar="SHARE",
                    help="part b, futures: scatter this share of the graphs to the first worker, the rest "
                         "to the others, afresh before each run (default: Dask spreads them by count)")
    ap.add_argument("--pack-edges", type=int, default=None, help="gpumatch.batch pack budget (default: the backend's)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of the batch call (median)")
    ap.add_argument("--loop-repeats", type=int, default=1, help="part a: timed runs of the loop (0: none)")
    ap.add_argument("--no-check", dest="check", action="store_false", help="skip the certificates")
    ap.add_argument("--malloc-trim", action="store_true",
                    help="part b: keep Dask's MALLOC_TRIM_THRESHOLD_ in the workers (default: unset it)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write a JSON record of the run here")
    args = ap.parse_args(argv)
    if args.on_first is not None and not 0 <= args.on_first <= 1:
        ap.error("--on-first: a share from 0 to 1")
    rows, extra = part_small(args) if args.part == "small" else part_large(args)
    record = {"argv": sys.argv[1:], "rows": rows, "env": environment(), **extra}
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump(record, fh, indent=1)
    print(table(rows))


if __name__ == "__main__":
    main()

"""Matching and maximum flow at the scale of one GPU (issue 63: four billion edges).

Builds a random bipartite graph on the device, in chunks, as the
``(indptr, indices, shape)`` hand-over of :func:`gpumatch.bipartite_matching`:
``m`` rows of exactly ``--degree`` entries each, row ``i``'s ``j``-th column
drawn uniformly from the ``j``-th of ``degree`` strata of ``n // degree``
columns (sorted and distinct by construction, so the arrays are canonical and
are used as they are: int64 pointers past ``2**31`` entries, int32 column
ids).  Then, per problem:

* ``matching``: :func:`gpumatch.bipartite_matching` with ``certificate=True``;
  checks, on the device and in chunks, that the pairs are mutual edges of the
  graph, that the König cover has the matching's size and covers every edge;
* ``flow``: :func:`gpumatch.minimum_cut` (push-relabel) on the unit network of
  the same graph (source -> rows -> columns -> sink); checks that the cut's
  arcs number the flow value, and that it equals the matching size when both run.

Each run prints one JSON line: the time of the call (CUDA events; best of
``--repeat``, after a warm-up on a small graph of the same widths that
compiles the kernels), the result, the peak of CuPy's memory pool during the
call (the graph's own arrays included: bytes in use at the peak, and the
pool's total) per entry, and :func:`gpumatch.memory_estimate` beside it.

Usage::

    python benchmarks/bench_scale.py matching 800000000 800000000 --degree 5   # 4.0e9 entries
    python benchmarks/bench_scale.py matching 100000000 100000000 --degree 5
    python benchmarks/bench_scale.py flow 250000000 250000000 --degree 5        # 1.75e9 arcs
    python benchmarks/bench_scale.py both 1000000 1000000 --degree 5 --repeat 3

Needs CuPy and a GPU.  Targets of issue 63: at most 32 bytes per entry at
every size for the certified matching, and 4.0e9 entries matched and
certified within 4 s on an H200.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


class PeakPool:
    """CuPy's default memory pool behind an allocator that records the peak
    of the bytes in use (and of the pool's total) at every allocation."""

    def __init__(self, cp):
        self.cp = cp
        self.pool = cp.get_default_memory_pool()
        self.reset()
        cp.cuda.set_allocator(self.malloc)

    def malloc(self, size):
        mem = self.pool.malloc(size)
        used, total = self.pool.used_bytes(), self.pool.total_bytes()
        if used > self.peak_used:
            self.peak_used = used
        if total > self.peak_total:
            self.peak_total = total
        return mem

    def reset(self):
        self.peak_used = self.pool.used_bytes()
        self.peak_total = self.pool.total_bytes()


def random_graph(cp, m, n, degree, seed, chunk_rows):
    """``(indptr, indices, shape)`` on the device: m rows of `degree`
    stratified, sorted, distinct columns each (see the module's docstring)."""
    from gpumatch._validation import graph_dtypes

    if n < degree:
        raise SystemExit(f"n = {n} must be at least the degree {degree}")
    nnz = m * degree
    idt, odt = graph_dtypes(m, n, nnz)
    width = n // degree
    indptr = cp.arange(0, (m + 1) * degree, degree, dtype=odt)
    indices = cp.empty(nnz, dtype=idt)
    rs = cp.random.RandomState(seed)
    base = (cp.arange(degree, dtype=idt) * width)[None, :]
    for r0 in range(0, m, chunk_rows):
        r1 = min(m, r0 + chunk_rows)
        block = rs.randint(0, width, size=(r1 - r0, degree), dtype=idt)
        block += base
        indices[r0 * degree:r1 * degree] = block.ravel()
        del block
    return indptr, indices, (m, n)


def check_matching_on_device(cp, graph, degree, res, chunk):
    """Pairs mutual and stored, cover of the matching's size covering every edge; chunked."""
    indptr, indices, (m, n) = graph
    r2c, c2r = res.row_to_col, res.col_to_row
    cr, cc = res.cover_rows, res.cover_cols
    size = int(res.size)
    ok = int((c2r >= 0).sum()) == size and int((r2c >= 0).sum()) == size
    cover = int(cr.sum()) + int(cc.sum())
    ok = ok and cover == size
    for c0 in range(0, n, chunk):                       # each matched column: mutual, and a stored entry
        c = cp.arange(c0, min(n, c0 + chunk), dtype=np.int64)
        r = c2r[c0:c0 + c.shape[0]].astype(np.int64)
        mine = r >= 0
        c, r = c[mine], r[mine]
        ok = ok and bool((r2c[r] == c).all())
        hit = cp.zeros(c.shape[0], dtype=bool)
        for j in range(degree):
            hit |= indices[r * degree + j] == c
        ok = ok and bool(hit.all())
    nnz = int(indices.shape[0])
    for k0 in range(0, nnz, chunk * degree):            # every edge has a covered end
        k1 = min(nnz, k0 + chunk * degree)
        rows = cp.arange(k0, k1, dtype=np.int64) // degree
        ok = ok and bool((cr[rows] | cc[indices[k0:k1]]).all())
    return ok, cover


def device_name(cp):
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def warm_up(cp, gpumatch, problem, degree, mixed):
    """Compile (or load) the kernels of the widths of the real run on a small graph."""
    from gpumatch import csr

    saved = csr.OFFSET_LIMIT
    if mixed:
        csr.OFFSET_LIMIT = 64           # the same int64-offset specialisations, on a small graph
    try:
        g = random_graph(cp, 20000, 20000, degree, 1, 1 << 20)
        if problem == "matching":
            gpumatch.bipartite_matching(g, backend="cupy", certificate=True)
        else:
            net = unit_network(cp, g)
            gpumatch.minimum_cut(net[0], net[1], net[2], backend="cupy")
        cp.cuda.Device().synchronize()
    finally:
        csr.OFFSET_LIMIT = saved


def unit_network(cp, graph):
    """``((indptr, indices, (V, V)), source, sink)`` of the unit flow network of a bipartite graph."""
    from gpumatch import csr

    indptr, indices, shape = graph
    ip, ix, cap, s, t = csr.bipartite_flow_network(indptr, indices, shape)
    del cap                                   # the tuple hand-over means unit capacities
    V = int(ip.shape[0]) - 1
    return (ip, ix, (V, V)), s, t


def run(args, problem, cp, gpumatch, peak, graph, matched_size):
    m, n = graph[2]
    nnz = int(graph[1].shape[0])
    if problem == "flow":
        net, s, t = unit_network(cp, graph)
        target, entries = net, int(net[1].shape[0])
        est = gpumatch.memory_estimate(net[2], entries, problem="flow", flow_matrix=False)
        dt = (str(net[1].dtype), str(net[0].dtype))
    else:
        target, entries = graph, nnz
        est = gpumatch.memory_estimate((m, n), nnz, certificate=True)
        dt = (str(graph[1].dtype), str(graph[0].dtype))
    # the call's own input (the graph or the network) counts; what the
    # benchmark holds beside it (the bipartite graph under a network) does not
    own = sum(int(a.nbytes) for a in target[:2])
    times, out = [], None
    for _ in range(args.repeat):
        out = None
        cp.cuda.Device().synchronize()
        peak.reset()
        beside = peak.pool.used_bytes() - own
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        if problem == "flow":
            out = gpumatch.minimum_cut(target, s, t, backend="cupy")
        else:
            out = gpumatch.bipartite_matching(target, backend="cupy", certificate=True)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        used, total = peak.peak_used - beside, peak.peak_total - beside
    row = {"problem": problem, "m": m, "n": n, "degree": args.degree, "entries": entries,
           "index_dtype": dt[0], "offset_dtype": dt[1], "time_s": min(times), "times_s": times,
           "peak_used_bytes": used, "peak_bytes_per_entry": used / max(entries, 1),
           "pool_total_bytes": total, "pool_bytes_per_entry": total / max(entries, 1),
           "estimate_bytes": est, "estimate_bytes_per_entry": est / max(entries, 1),
           "device": device_name(cp)}
    t0 = time.perf_counter()
    if problem == "flow":
        value = int(out.cut_value)
        arcs = int(out.cut_rows.shape[0])
        side = out.source_side
        ok = arcs == value and bool(side[s]) and not bool(side[t])
        if matched_size is not None:
            ok = ok and value == matched_size
        row.update(flow_value=value, cut_arcs=arcs, verified=bool(ok))
    else:
        ok, cover = check_matching_on_device(cp, graph, args.degree, out, args.check_chunk)
        row.update(size=int(out.size), cover_size=cover, verified=bool(ok),
                   finished_by=out.stats.get("finished_by"), global_relabels=out.stats.get("global_relabels"),
                   cover_source=out.stats.get("cover_source"),
                   stage_s={k: round(float(out.stats.get(k, 0.0)), 4) for k in ("time_init", "time_relabel", "time_push", "time_augment")})
        matched_size = int(out.size)
    row["check_s"] = time.perf_counter() - t0
    del out
    print(json.dumps(row), flush=True)
    return matched_size, ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problem", choices=("matching", "flow", "both"))
    ap.add_argument("m", type=int, help="rows")
    ap.add_argument("n", type=int, help="columns")
    ap.add_argument("--degree", type=int, default=5, help="entries per row (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="timed calls (best reported)")
    ap.add_argument("--chunk-rows", type=int, default=1 << 26, help="rows generated per chunk")
    ap.add_argument("--check-chunk", type=int, default=1 << 27, help="columns / rows checked per chunk")
    ap.add_argument("--no-warm-up", action="store_true")
    args = ap.parse_args(argv)

    import cupy as cp

    import gpumatch

    peak = PeakPool(cp)
    problems = ("matching", "flow") if args.problem == "both" else (args.problem,)
    nnz = args.m * args.degree
    from gpumatch._validation import graph_dtypes

    from gpumatch.csr import offset_dtype_for

    wide = {"matching": graph_dtypes(args.m, args.n, nnz)[1] == np.int64,
            # the network's arcs: nnz + m + n, offsets sized for twice that (push-relabel's layouts)
            "flow": offset_dtype_for(2 * (nnz + args.m + args.n) + 1) == np.int64}
    if not args.no_warm_up:
        for p in problems:
            warm_up(cp, gpumatch, p, args.degree, wide[p])
    t0 = time.perf_counter()
    graph = random_graph(cp, args.m, args.n, args.degree, args.seed, args.chunk_rows)
    cp.cuda.Device().synchronize()
    print(json.dumps({"generated_entries": nnz, "generate_s": time.perf_counter() - t0}), file=sys.stderr,
          flush=True)
    matched, all_ok = None, True
    for p in problems:
        matched, ok = run(args, p, cp, gpumatch, peak, graph, matched)
        all_ok = all_ok and ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())

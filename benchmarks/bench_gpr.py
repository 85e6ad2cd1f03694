#!/usr/bin/env python3
"""Benchmark of G-PR matching (gpumatch.matching) against scipy.

    python benchmarks/bench_gpr.py                  # all inputs, GPU if present
    python benchmarks/bench_gpr.py --only random200k --numpy
    python benchmarks/bench_gpr.py --scipy-all      # also run scipy on meshes/grids (minutes)
    python benchmarks/bench_gpr.py --no-scipy --config old:loop=0 new:loop=4096 ks:init=karp_sipser
    python benchmarks/bench_gpr.py --no-scipy --scale --config tail:aug=2 gpr:aug=never

A config is ``label:key=value,...`` with keys ``loop`` (LOOP_MAX of the
driver: active lists up to this length run in the persistent one-block
kernel; 0 turns it off), ``bfs`` (BFS_LOOP_MAX of the CUDA kernels: the
same for BFS frontiers of the global relabel), ``greedy`` (GREEDY_KIND of
the driver: ``degree`` or ``rounds``), ``fused`` (FUSED_SHRINK, 0/1),
``fusefix`` (FUSE_FIX, 0/1), ``check``
(iterations between two length checks of a long list), ``aug``
(AUGMENT_AFTER of the driver: push phases before the augmenting phases
take over, or ``never``), ``init``, ``k`` (relabel_k) and ``shrink``; each config runs on the same generated graph.  After the timed runs, one extra
run per config with the driver's PROFILE switch on (a device sync at every
phase boundary) gives the per-phase breakdown.  ``--steps`` adds one more
run of the first config with every step of the call (validation,
make_state, each kernel-set function) wrapped in device syncs: time and
number of calls per step, and the GPU time of every raw kernel launch of
the G-PR and CSR kernel sets (CUDA events, summed per kernel name).

For each seeded generated input: scipy's maximum_bipartite_matching time
(skipped on Delaunay/grid unless --scipy-all: scipy issue #26147), the GPU
solve time (graph already on the device, result left on the device; median
of --repeats after one warm-up, CUDA-synchronised), the host->device transfer
time reported separately, optionally the NumPy backend time, and a check of
every result (valid matching and a König cover of the same size).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from scipy.sparse.csgraph import maximum_bipartite_matching as scipy_mbm  # noqa: E402

from gpumatch import _backend, generators  # noqa: E402
from gpumatch.matching import _driver, bipartite_matching  # noqa: E402
from gpumatch.testing import check_matching  # noqa: E402

INPUTS = {
    "random1M": (lambda: generators.random_bipartite(1_000_000, 1_000_000, 5, seed=1), True),
    "delaunay1M": (lambda: generators.delaunay(1_000_000, seed=1), False),
    "rmat20": (lambda: generators.rmat(20, 8, seed=1), True),
    "rect1Mx500k": (lambda: generators.random_bipartite(1_000_000, 500_000, 3, seed=1), True),
    "grid1000": (lambda: generators.grid(1000, 1000, 0.1, seed=1), False),
    "random200k": (lambda: generators.random_bipartite(200_000, 200_000, 5, seed=1), True),
}
#: Larger inputs (``--scale``): where the lead over the published code
#: shrank, and power-law graphs (R-MAT 24 has 133M edges; ~1 min to generate).
SCALE = {
    "random4M": (lambda: generators.random_bipartite(4_000_000, 4_000_000, 5, seed=1), False),
    "random16M": (lambda: generators.random_bipartite(16_000_000, 16_000_000, 5, seed=1), False),
    "rmat22": (lambda: generators.rmat(22, 8, seed=1), False),
    "rmat24": (lambda: generators.rmat(24, 8, seed=1), False),
    "rmat25": (lambda: generators.rmat(25, 8, seed=1), False),
}


#: Solve times to beat on the H100 (ms): the fastest of the runs of ECL-MM
#: (the best published GPU matching code we compare with; its own compute
#: timer) measured side by side with gpumatch on one H100.
TARGET_MS = {"random1M": 15.7, "delaunay1M": 36.9, "rmat20": 4.0, "rect1Mx500k": 2.11, "grid1000": 493,
             "random200k": 10.1, "random4M": 38.0, "random16M": 129, "rmat22": 7.9, "rmat24": 20.9}


def parse_config(text, args):
    label, _, rest = text.partition(":")
    cfg = {"label": label, "loop": None, "bfs": None, "greedy": None, "init": "greedy", "k": args.relabel_k,
           "shrink": args.shrink, "fused": None, "fusefix": None,
           "check": None, "aug": None}
    for item in filter(None, rest.split(",")):
        key, _, val = item.partition("=")
        if key not in cfg or key == "label":
            raise SystemExit(f"unknown config key {key!r} in {text!r}")
        cfg[key] = val if key in ("init", "greedy") else (
            float(val) if key == "k" else ("never" if key == "aug" and val == "never" else int(val)))
    return cfg


#: Driver switches a config can set: config key -> _driver attribute.
_SWITCHES = {"greedy": "GREEDY_KIND", "fused": "FUSED_SHRINK", "fusefix": "FUSE_FIX"}


def _apply(cfg):
    """Set the driver/kernel switches of `cfg`; returns a function that
    restores them."""
    from gpumatch.matching import _kernels_cuda

    saved = {attr: getattr(_driver, attr) for attr in _SWITCHES.values()}
    saved_loop, saved_check = dict(_driver.LOOP_MAX), dict(_driver.CHECK_EVERY)
    saved_bfs = _kernels_cuda.BFS_LOOP_MAX
    saved_aug = _driver.AUGMENT_AFTER
    if cfg["aug"] is not None:
        _driver.AUGMENT_AFTER = None if cfg["aug"] == "never" else cfg["aug"]
    for key, attr in _SWITCHES.items():
        if cfg[key] is not None:
            val = cfg[key]
            setattr(_driver, attr, bool(val) if key in ("fused", "fusefix") else val)
    if cfg["loop"] is not None:
        _driver.LOOP_MAX["cupy"] = cfg["loop"]
    if cfg["check"] is not None:
        _driver.CHECK_EVERY["cupy"] = (cfg["check"], _driver.CHECK_EVERY["cupy"][1])
    if cfg["bfs"] is not None:
        _kernels_cuda.BFS_LOOP_MAX = cfg["bfs"]

    def restore():
        for attr, val in saved.items():
            setattr(_driver, attr, val)
        _driver.LOOP_MAX.clear()
        _driver.LOOP_MAX.update(saved_loop)
        _driver.CHECK_EVERY.clear()
        _driver.CHECK_EVERY.update(saved_check)
        _kernels_cuda.BFS_LOOP_MAX = saved_bfs
        _driver.AUGMENT_AFTER = saved_aug

    return restore


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None, help="input names: " + ", ".join({**INPUTS, **SCALE}))
    ap.add_argument("--scale", action="store_true", help="also the larger inputs: " + ", ".join(SCALE))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--numpy", action="store_true", help="also time the NumPy backend")
    ap.add_argument("--numpy-max-nnz", type=int, default=10**8, help="skip NumPy above this many edges")
    ap.add_argument("--scipy-all", action="store_true", help="run scipy on meshes and grids too")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--relabel-k", type=float, default=0.7)
    ap.add_argument("--shrink", type=int, default=512)
    ap.add_argument("--no-scipy", action="store_true", help="skip scipy everywhere")
    ap.add_argument("--config", nargs="*", default=None, help="label:key=value,... (see above)")
    ap.add_argument("--steps", action="store_true", help="per-step profile of the first config (see above)")
    args = ap.parse_args(argv)
    configs = [parse_config(c, args) for c in (args.config or ["default:"])]
    gpu = _backend.cupy_available()
    print(f"device: {_backend.device_name() or 'none (NumPy only)'}")
    rows = []
    known = {**INPUTS, **SCALE}
    for name in args.only or list(INPUTS) + (list(SCALE) if args.scale else []):
        if name not in known:
            raise SystemExit(f"unknown input {name!r}; known: {', '.join(known)}")
        make, scipy_ok = known[name]
        t_gen, A = timed(make)
        line = {"input": name, "shape": A.shape, "nnz": A.nnz, "gen_s": t_gen}
        ref = None
        if (scipy_ok or args.scipy_all) and not args.no_scipy:
            t_sc, perm = timed(lambda: scipy_mbm(A, perm_type="row"))
            ref = int((perm >= 0).sum())
            line["scipy_s"] = t_sc
        kw = dict(relabel_k=args.relabel_k, shrink_threshold=args.shrink)
        if gpu:
            cp = _backend.cp
            import cupyx.scipy.sparse as cpx

            t0 = time.perf_counter()
            G = cpx.csr_matrix(A)
            cp.cuda.get_current_stream().synchronize()
            line["h2d_s"] = time.perf_counter() - t0
            for cfg in configs:
                _gpu_config(line, A, G, cfg, args, ref)
            if args.steps:
                _steps(G, configs[0])
        if args.numpy and A.nnz <= args.numpy_max_nnz:
            t_np, res_np = timed(lambda: bipartite_matching(A, backend="numpy", **kw))
            line["numpy_s"] = t_np
            line["numpy_stats"] = res_np.stats
            if not args.no_check:
                check_matching(A, res_np.col_to_row, expected_size=ref)
        rows.append(line)
        _print_line(line)
    if gpu:
        print()
        print(f"{'input':<13}{'config':<10}{'gpu ms':>9}{'target':>8}{'iters':>7}{'loop it':>8}{'relab':>6}"
              f"{'aug ph':>7}{'init':>8}{'relabel':>8}{'push':>8}{'augment':>8}{'fix':>7}"
              "  (phases: ms, profiled run)")
        for r in rows:
            for c in r.get("configs", []):
                st = c["stats"]
                print(f"{r['input']:<13}{c['label']:<10}{c['gpu_s'] * 1e3:>9.2f}"
                      f"{_f(TARGET_MS.get(r['input']), 1, '.1f'):>8}{st['push_iterations']:>7}"
                      f"{st.get('loop_iterations', 0):>8}{st['global_relabels']:>6}{st.get('aug_phases', 0):>7}"
                      + "".join(f"{st.get('time_' + p, 0.0) * 1e3:>{w}.2f}" for p, w in
                                (("init", 8), ("relabel", 8), ("push", 8), ("augment", 8), ("fix", 7))))
    print()
    print(f"{'input':<13}{'m x n':>20}{'nnz':>10}{'scipy s':>10}{'gpu ms':>10}{'x scipy':>9}"
          f"{'h2d ms':>9}{'numpy s':>9}{'np/scipy':>9}")
    for r in rows:
        sc, g, npy = r.get("scipy_s"), r.get("gpu_s"), r.get("numpy_s")
        print(f"{r['input']:<13}{'%d x %d' % r['shape']:>20}{r['nnz']:>10}"
              f"{_f(sc, 1, '.2f'):>10}{_f(g, 1e3, '.1f'):>10}{_f(sc / g if sc and g else None, 1, '.0f'):>9}"
              f"{_f(r.get('h2d_s'), 1e3, '.1f'):>9}{_f(npy, 1, '.2f'):>9}"
              f"{_f(npy / sc if sc and npy else None, 1, '.2f'):>9}")
    return 0


def _gpu_config(line, A, G, cfg, args, ref):
    """Time one config on the device graph `G`; record it in `line`."""
    cp = _backend.cp
    kw = dict(relabel_k=cfg["k"], shrink_threshold=cfg["shrink"], init=cfg["init"])
    restore = _apply(cfg)
    try:
        res = bipartite_matching(G, backend="cupy", **kw)  # warm-up (compiles kernels)
        times = []
        for _ in range(args.repeats):
            cp.cuda.get_current_stream().synchronize()
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            res = bipartite_matching(G, backend="cupy", **kw)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        if not args.no_check:
            check_matching(A, cp.asnumpy(res.col_to_row), expected_size=ref)
        _driver.PROFILE = True
        try:
            prof = bipartite_matching(G, backend="cupy", **kw)
        finally:
            _driver.PROFILE = False
    finally:
        restore()
    gpu_s = statistics.median(times)
    line.setdefault("configs", []).append({"label": cfg["label"], "gpu_s": gpu_s, "stats": prof.stats})
    if "gpu_s" not in line:  # the first config fills the summary table
        line["gpu_s"], line["gpu_size"], line["gpu_stats"] = gpu_s, res.size, prof.stats
    print(f"    [{cfg['label']}] {gpu_s * 1e3:.2f} ms (runs: {', '.join('%.2f' % (t * 1e3) for t in times)})",
          flush=True)


def _steps(G, cfg):
    """One call of `cfg` with each step wrapped in device syncs; prints the
    time and the number of calls of each step."""
    cp = _backend.cp
    from gpumatch.matching import _kernels_cuda, api

    acc = {}
    patched = []

    def wrap(mod, name, label=None):
        fn = getattr(mod, name)
        key = label or name

        def timed_fn(*a, **k):
            cp.cuda.get_current_stream().synchronize()
            t = time.perf_counter()
            out = fn(*a, **k)
            cp.cuda.get_current_stream().synchronize()
            tot, cnt = acc.get(key, (0.0, 0))
            acc[key] = (tot + time.perf_counter() - t, cnt + 1)
            return out

        patched.append((mod, name, fn))
        setattr(mod, name, timed_fn)

    wrap(api, "as_csr_graph", "validate")
    wrap(_driver._csr, "transpose")
    wrap(_driver, "make_state", "make_state(incl. transpose)")
    wrap(_driver, "greedy", "greedy")
    wrap(_driver._csr, "compact")
    wrap(_driver, "_finish_by_augmenting", "augmenting phases")
    for name in ("fix_matching", "relabel_collect", "claim", "push", "push_loop", "count_active",
                 "list_step", "list_length"):
        wrap(_kernels_cuda, name)
    # GPU time of each raw kernel launch: CUDA events around it, no sync
    events = []
    from gpumatch import _cuda

    class _Timed:
        def __init__(self, kern, name):
            self.kern, self.name = kern, name

        def __call__(self, *a, **k):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            self.kern(*a, **k)
            e1.record()
            events.append((self.name, e0, e1))

        def __getattr__(self, attr):
            return getattr(self.kern, attr)

    raw_k, raw_get = _kernels_cuda._k, _cuda.get_kernel
    _kernels_cuda._k = lambda st, name: _Timed(raw_k(st, name), name)
    _cuda.get_kernel = lambda relpath, name, defines=(), **kw: _Timed(raw_get(relpath, name, defines, **kw), name)
    restore = _apply(cfg)
    try:
        cp.cuda.get_current_stream().synchronize()
        t = time.perf_counter()
        res = bipartite_matching(G, backend="cupy", relabel_k=cfg["k"], shrink_threshold=cfg["shrink"],
                                 init=cfg["init"])
        cp.cuda.get_current_stream().synchronize()
        total = time.perf_counter() - t
    finally:
        for mod, name, fn in reversed(patched):
            setattr(mod, name, fn)
        _kernels_cuda._k, _cuda.get_kernel = raw_k, raw_get
        restore()
    print(f"    steps [{cfg['label']}] total {total * 1e3:.2f} ms (with step syncs), initial size "
          f"{res.stats['initial_size']}, size {res.size}, stats {res.stats}")
    for key, (tot, cnt) in sorted(acc.items(), key=lambda kv: -kv[1][0]):
        print(f"      {key:<28}{tot * 1e3:>9.3f} ms  {cnt:>5} calls")
    kacc = {}
    for name, e0, e1 in events:
        tot, cnt = kacc.get(name, (0.0, 0))
        kacc[name] = (tot + cp.cuda.get_elapsed_time(e0, e1), cnt + 1)
    print(f"    kernels [{cfg['label']}] GPU time per kernel (events), total "
          f"{sum(t for t, _ in kacc.values()):.3f} ms")
    for key, (tot, cnt) in sorted(kacc.items(), key=lambda kv: -kv[1][0]):
        print(f"      {key:<34}{tot:>9.3f} ms  {cnt:>5} launches")


def _f(x, scale, fmt):
    return "-" if x is None else format(x * scale, fmt)


def _print_line(line):
    short = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in line.items()
             if not k.endswith("stats") and k != "configs"}
    print(short, flush=True)
    for k in ("gpu_stats", "numpy_stats"):
        if k in line:
            print("   ", k, {a: (round(b, 4) if isinstance(b, float) else b) for a, b in line[k].items()},
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())

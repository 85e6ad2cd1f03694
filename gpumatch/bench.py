"""Benchmark runner: gpumatch against SciPy (and optional peers) on one machine.

Run it as ``python -m gpumatch bench ...`` (or ``benchmarks/run.py``, a thin
wrapper).  For every input x solver it

1. builds the input once (generated family, Matrix Market / DIMACS file, or a
   corpus entry);
2. runs the solver once as a warm-up (for ``gpumatch-cupy`` this includes
   compiling the CUDA kernels: the excess over the median is reported as
   ``compile_s``);
3. runs it ``--repeats`` more times and keeps the median;
4. checks **every** result with :mod:`gpumatch.testing` (a König cover proves a
   matching maximum, a cut proves a flow maximum) and against the reference
   size/value; a wrong result is reported as ``status="wrong"`` and its time
   does not count.

GPU timing: the graph is copied to the device once
(``cupyx.scipy.sparse.csr_matrix``; that copy is ``transfer_s``), the solve on
the device-resident graph is timed with CUDA events (``median_s``), and the
end-to-end time from the SciPy matrix (copy in, solve, copy out) is
``e2e_s``.  CPU solvers run in a forked child process so that ``--timeout``
can stop one that hangs (SciPy's Hopcroft-Karp takes minutes on some meshes and
grids, scipy issue #26147); reference sizes for those come from
``scipy.sparse.csgraph.maximum_flow`` on the unit network instead.

Output, in ``--out``: ``results.jsonl`` (one JSON record per input x solver),
``results.md`` (the Markdown table that is also printed) and, when matplotlib
is installed, ``time_vs_size.png``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time
import traceback

import numpy as np
import scipy
import scipy.sparse as sp

from . import _backend

__all__ = ["SOLVERS", "SUITES", "BenchInput", "add_arguments", "main", "markdown_table", "run"]

SOLVERS = ("gpumatch-cupy", "gpumatch-numba", "gpumatch-numpy", "scipy", "igraph", "ortools")
DEFAULT_SOLVERS = "gpumatch-cupy,gpumatch-numba,gpumatch-numpy,scipy"
MESH_FAMILIES = ("delaunay", "grid", "mesh")
PROBLEMS = ("matching", "flow")

# Inputs and solvers live in their own modules; bench re-exports them.
from ._bench_inputs import (BenchInput, SUITES, _file_input, corpus_inputs, default_corpus_path,  # noqa: E402,F401
                            dir_inputs)
from ._bench_solvers import (_SOLVER_CLASSES, _CupySolve, _module_available, _NumpySolve, _ScipySolve, _timed,  # noqa: E402,F401,E501
                             solver_available)


# ---------------------------------------------------------------------------
# checks and references
# ---------------------------------------------------------------------------


def _light_matching_check(A, match, expected):
    """Validity (edges, no shared endpoint) and size == expected, without a cover."""
    match = _backend.to_numpy(match).astype(np.int64)
    m, n = A.shape
    assert match.shape == (n,), f"matching has length {match.shape}, expected ({n},)"
    cols = np.flatnonzero(match >= 0)
    rows = match[cols]
    assert rows.size == 0 or rows.max() < m, "matched row out of range"
    assert np.unique(rows).size == rows.size, "a row is matched twice"
    A = sp.csr_matrix(A)
    keys = np.repeat(np.arange(m, dtype=np.int64), np.diff(A.indptr)) * max(n, 1) + A.indices
    keys.sort()
    want = rows * max(n, 1) + cols
    pos = np.searchsorted(keys, want)
    pos = np.minimum(pos, max(keys.size - 1, 0))
    assert keys.size == 0 and want.size == 0 or bool(np.all(keys[pos] == want)), "a matched pair is not an edge"
    size = int(cols.size)
    if expected is not None:
        assert size == expected, f"matching size {size} differs from the reference {expected}"
    return size


def make_checker(inp: BenchInput, data, mode: str, reference):
    """Return check(result) -> size/value; raises AssertionError on a wrong result."""
    from . import testing

    if inp.problem == "matching":
        def check(res):
            if mode == "light" and reference is not None:
                return _light_matching_check(data, res, reference)
            return testing.check_matching(data, res, "row", expected_size=reference).size

        return check
    C, s, t = data

    def check_flow(res):
        value, flow = res
        if mode == "light" and reference is not None:
            assert int(value) == reference, f"flow value {value} differs from the reference {reference}"
            return int(value)
        cert = testing.check_flow(C, s, t, flow, int(value))
        if reference is not None:
            assert int(cert.value) == reference, f"flow value {cert.value} differs from the reference {reference}"
        return int(cert.value)

    return check_flow


def flow_reference(A) -> int:
    """Maximum matching size of `A` via scipy's maximum_flow (Dinic) on the unit network."""
    from scipy.sparse.csgraph import maximum_flow

    from .csr import bipartite_flow_network

    A = sp.csr_matrix(A)
    ip, ix, cap, s, t = bipartite_flow_network(A.indptr, A.indices, A.shape)
    V = ip.shape[0] - 1
    N = sp.csr_matrix((cap.astype(np.int32), ix, ip), shape=(V, V))
    return int(maximum_flow(N, s, t, method="dinic").flow_value)


# ---------------------------------------------------------------------------
# measurement
# ---------------------------------------------------------------------------


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist() if x.size <= 64 else f"<array of {x.size}>"
    if _backend.is_cupy_array(x):
        return _jsonable(_backend.to_numpy(x))
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


def measure(solver: str, inp: BenchInput, data, check, repeats: int, budget: float | None) -> dict:
    """Warm up, repeat, check every result; returns the timing part of a record."""
    out: dict = {"status": "ok", "ok": False, "times_s": [], "e2e_times_s": []}
    runner = _SOLVER_CLASSES[solver](inp.problem, data)
    (_, setup_s) = _timed(runner.setup)
    out["setup_s"] = setup_s
    if getattr(runner, "transfer_times", None):
        out["transfer_s"] = statistics.median(runner.transfer_times)
    out["device_input"] = bool(runner.device_input) if solver == "gpumatch-cupy" else None
    t_start = time.perf_counter()
    res, warm_s, stats = runner.warmup()
    out["warmup_s"] = warm_s
    if solver == "gpumatch-cupy":
        out["device_input"] = bool(runner.device_input)
    if stats is not None:
        out["stats"] = _jsonable(stats)
    if getattr(runner, "note", None):
        _add_note(out, runner.note)
    try:
        out["result"] = check(res)
    except AssertionError as exc:
        out.update(status="wrong", error=_one_line(exc), phase="warmup")
        return out
    step_s = None  # wall time of the last repeat (run and check)
    for i in range(repeats):
        elapsed = time.perf_counter() - t_start  # wall time so far: runs and checks
        # The next repeat is projected from the last one; the warm-up alone
        # is no guide (it compiles kernels: a GPU solve of milliseconds
        # after a warm-up of seconds), so one repeat runs whenever the
        # warm-up fit in the budget.
        if budget and elapsed + (step_s or 0.0) > budget:
            _add_note(out, f"{i} of {repeats} repeats: one more would pass the --budget of {budget:g} s"
                      + ("; the time is the warm-up run's" if i == 0 else ""))
            break
        t_step = time.perf_counter()
        res, t, e2e = runner.solve()
        try:
            value = check(res)
        except AssertionError as exc:
            out.update(status="wrong", error=_one_line(exc), phase=f"repeat {len(out['times_s']) + 1}")
            out["times_s"], out["e2e_times_s"] = [], []
            return out
        if value != out["result"]:
            out.update(status="wrong", error=f"result {value} differs from the warm-up's {out['result']}")
            out["times_s"], out["e2e_times_s"] = [], []
            return out
        out["times_s"].append(t)
        out["e2e_times_s"].append(e2e)
        step_s = time.perf_counter() - t_step
    times = out["times_s"] or [warm_s]
    out["median_s"] = statistics.median(times)
    out["e2e_s"] = statistics.median(out["e2e_times_s"]) if out["e2e_times_s"] else warm_s
    if solver == "gpumatch-cupy" and out["times_s"]:
        out["compile_s"] = max(0.0, warm_s - out["median_s"])
    out["ok"] = True
    return out


def _add_note(rec: dict, text: str) -> None:
    rec["note"] = f"{rec['note']}; {text}" if rec.get("note") else text


def _one_line(exc) -> str:
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, AssertionError) else str(exc)
    text = " ".join(text.split())
    return text[:500]


def _child_main(fn, conn):
    # A forked child of a process that holds a CUDA context must not free device memory:
    # no cyclic garbage collection here (reference counting still frees host objects).
    import gc

    gc.disable()
    try:
        conn.send(fn())
    except BaseException as exc:  # report, never hang the parent
        conn.send({"status": "error", "ok": False, "error": _one_line(exc),
                   "traceback": traceback.format_exc(limit=6)})
    finally:
        conn.close()


def run_with_timeout(fn, timeout: float | None) -> dict:
    """Run `fn` in a forked child, killed after `timeout` seconds (in-process without fork)."""
    if not timeout or "fork" not in multiprocessing.get_all_start_methods():
        return _guarded(fn)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(fn, send), daemon=True)
    proc.start()
    send.close()
    try:
        if recv.poll(timeout):
            try:
                out = recv.recv()
            except EOFError:
                out = {"status": "error", "ok": False, "error": f"solver process died (exit code {proc.exitcode})"}
        else:
            out = {"status": "timeout", "ok": False, "error": f"no result within {timeout:g} s"}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    if out.get("status") == "error" and proc.exitcode not in (0, None) and "error" not in out:
        out["error"] = f"solver process died (exit code {proc.exitcode})"
    return out


def _guarded(fn) -> dict:
    try:
        return fn()
    except Exception as exc:
        return {"status": "error", "ok": False, "error": _one_line(exc), "traceback": traceback.format_exc(limit=6)}


# ---------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------


def git_revision() -> tuple[str | None, bool | None]:
    """``git rev-parse HEAD`` of the checkout holding this package and whether tracked files
    changed since; ``(None, None)`` outside git or without git."""
    here = pathlib.Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                             timeout=10, check=False)
        if rev.returncode != 0:
            return None, None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=10, check=False)
        return rev.stdout.strip(), (bool(dirty.stdout.strip()) if dirty.returncode == 0 else None)
    except (OSError, subprocess.SubprocessError):
        return None, None


def environment() -> dict:
    from . import __version__

    env = {
        "gpumatch": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "cupy": None,
        "cuda_runtime": None,
        "cuda_driver": None,
        "gpu": None,
        "cpu": _cpu_name(),
        "host": platform.node(),
    }
    env["git_rev"], env["git_dirty"] = git_revision()
    if _backend.cp is not None:
        env["cupy"] = _backend.cp.__version__
        if _backend.cupy_available():
            rt = _backend.cp.cuda.runtime
            env["cuda_runtime"] = _cuda_version(rt.runtimeGetVersion())
            env["cuda_driver"] = _cuda_version(rt.driverGetVersion())
            env["gpu"] = _backend.device_name()
    for mod in ("igraph", "ortools"):
        if _module_available(mod):
            try:
                env[mod] = __import__(mod).__version__
            except Exception:
                env[mod] = "installed"
    return env


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} threads)"
    except OSError:
        pass
    return platform.processor() or platform.machine()


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------


def _fmt_t(x):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 1:
        return f"{x:.2f}"
    if x >= 0.01:
        return f"{x:.3f}"
    return f"{x:.2e}"


def _fmt_speed(x):
    return "—" if x is None else (f"{x:.1f}×" if x >= 1 else f"{x:.2f}×")


def markdown_table(records: list) -> str:
    """Markdown table of `records` (one row per input x solver)."""
    head = ("| problem | input | shape | nnz | solver | median s | e2e s | transfer s | compile s "
            "| size/value | ok | vs scipy | vs scipy e2e |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in records:
        status = "yes" if r.get("ok") else r.get("status", "no")
        shape = "×".join(str(s) for s in r.get("shape") or [])
        lines.append("| " + " | ".join([
            r.get("problem", ""), r.get("input", ""), shape, f"{r.get('nnz', 0):,}", r.get("solver", ""),
            _fmt_t(r.get("median_s")), _fmt_t(r.get("e2e_s")), _fmt_t(r.get("transfer_s")),
            _fmt_t(r.get("compile_s")), "—" if r.get("result") is None else f"{r['result']:,}", status,
            _fmt_speed(r.get("speedup_vs_scipy")), _fmt_speed(r.get("speedup_e2e_vs_scipy")),
        ]) + " |")
    return "\n".join(lines) + "\n"


def save_plot(records: list, path) -> str | None:
    """Log-log plot of median time vs stored entries, one line per solver; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    problems = [p for p in PROBLEMS if any(r.get("problem") == p and r.get("ok") for r in records)]
    if not problems:
        return None
    fig, axes = plt.subplots(1, len(problems), figsize=(6 * len(problems), 4.5), squeeze=False)
    for ax, prob in zip(axes[0], problems):
        for solver in SOLVERS:
            pts = sorted((r["nnz"], r["median_s"]) for r in records
                         if r.get("problem") == prob and r.get("solver") == solver and r.get("ok")
                         and r.get("median_s"))
            if pts:  # markers only: the inputs are different families, not one scaling series
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o", alpha=0.8, label=solver)
        ax.set_xlabel("stored entries (edges / arcs)")
        ax.set_ylabel("median solve time (s)")
        ax.set_title(f"{prob}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------


def _seconds(text: str) -> float:
    """argparse type: a finite number of seconds >= 0 (a usage error names the option otherwise)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= x < float("inf"):  # (NaN fails too)
        raise argparse.ArgumentTypeError(f"must be a non-negative finite number of seconds, got {text}")
    return x


def _count(least: int):
    """argparse type: an integer >= `least`."""
    def parse(text: str) -> int:
        try:
            x = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if x < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {x}")
        return x

    parse.__name__ = "integer"
    return parse


def _directory(text: str) -> str:
    """argparse type: an existing folder."""
    if not os.path.isdir(text):
        why = "does not exist" if not os.path.exists(text) else "is not a folder"
        raise argparse.ArgumentTypeError(f"{text!r} {why}")
    return text


def _output_folder(text: str) -> str:
    """argparse type: a folder to write into (made if missing), not an existing file."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    return text


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the runner's options to `p` (shared by ``gpumatch bench`` and benchmarks/run.py).

    Option values are checked as they are parsed (a negative ``--timeout``,
    a ``--dir`` that is not a folder, ...): a one-line usage error, exit
    status 2, before any work.
    """
    src = p.add_argument_group("inputs (default: --suite small)")
    src.add_argument("--suite", choices=sorted(SUITES), action="append",
                     help="generated families: 'small' (quick CPU run), 'medium', 'standard' "
                          "(the issue inputs, ~1M vertices: for a GPU machine), 'hard', 'structured' "
                          "(long augmenting paths: Jacobians, ladders, bands, paths; three sizes, or one "
                          "with 'structured-small', '-medium', '-large'); repeatable")
    src.add_argument("--dir", action="append", metavar="PATH", type=_directory,
                     help="folder of .mtx/.mtx.gz (matching) and .max/.max.gz (flow) files; repeatable")
    src.add_argument("--corpus", nargs="?", const="", metavar="PATH",
                     help="the shared test corpus (manifest.json with reference answers); "
                          "default location: $GPUMATCH_CORPUS or ../shared/corpus")
    src.add_argument("--filter", metavar="TEXT", help="only inputs whose name contains TEXT")
    src.add_argument("--max-nnz", type=_count(0), metavar="N", help="skip inputs with more than N stored entries")
    p.add_argument("--problem", choices=("matching", "flow", "both"), default="both")
    p.add_argument("--solvers", default=DEFAULT_SOLVERS,
                   help=f"comma-separated, from {', '.join(SOLVERS)} (default: {DEFAULT_SOLVERS}); "
                        "solvers that cannot run here (no GPU, peer not installed) are skipped with a note")
    p.add_argument("--repeats", type=_count(1), default=3, help="timed runs after the warm-up (median reported)")
    p.add_argument("--out", default="bench_out", metavar="DIR", type=_output_folder, help="output folder (default: bench_out)")
    p.add_argument("--timeout", type=_seconds, default=600.0, metavar="SEC",
                   help="hard per input x solver limit: CPU solvers run in a child process that is "
                        "stopped after SEC (status 'timeout'); 0 = no limit, in-process")
    p.add_argument("--budget", type=_seconds, default=120.0, metavar="SEC",
                   help="soft per input x solver budget: no further repeat is started when it would pass "
                        "SEC (a solver slower than SEC is timed on its warm-up run alone; 0 = no limit)")
    p.add_argument("--scipy-mesh-limit", type=_count(0), default=20_000, metavar="ROWS",
                   help="skip scipy's maximum_bipartite_matching on mesh/grid families above this many "
                        "rows (scipy #26147); the reference then comes from scipy's maximum_flow")
    p.add_argument("--check", choices=("full", "light"), default="full",
                   help="'full': certificate (König cover / min cut) for every result; 'light': "
                        "validity and size/value against the reference")
    p.add_argument("--no-plot", action="store_true", help="do not write time_vs_size.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


class _OneLineErrors(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(prog="gpumatch bench") -> argparse.ArgumentParser:
    p = _OneLineErrors(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example: python -m gpumatch bench --suite standard --repeats 5")
    return add_arguments(p)


def collect_inputs(args) -> list:
    inputs = []
    suites = args.suite or ([] if (args.dir or args.corpus is not None) else ["small"])
    for s in suites:
        inputs += SUITES[s]()
    for d in args.dir or []:
        inputs += dir_inputs(d)
    if args.corpus is not None:
        try:
            inputs += corpus_inputs(args.corpus or None, args.max_nnz)
        except FileNotFoundError as exc:  # a bad --corpus is a usage error (exit 2), as a bad --dir
            raise ValueError(str(exc)) from None
    if args.problem != "both":
        inputs = [i for i in inputs if i.problem == args.problem]
    if args.filter:
        inputs = [i for i in inputs if args.filter in i.name]
    return inputs


def parse_solvers(text: str) -> list:
    solvers = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in solvers if s not in SOLVERS]
    if bad:
        raise ValueError(f"unknown solver(s) {', '.join(bad)}; choose from {', '.join(SOLVERS)}")
    if not solvers:
        raise ValueError("--solvers is empty")
    return list(dict.fromkeys(solvers))


def _shape_nnz(problem, data):
    A = data if problem == "matching" else data[0]
    return [int(s) for s in A.shape], int(A.nnz)


def bench_input(inp: BenchInput, solvers: list, args, env: dict, log=print) -> list:
    """All records of one input."""
    base = {"input": inp.name, "family": inp.family, "problem": inp.problem, "params": _jsonable(inp.params)}
    try:
        data, build_s = _timed(inp.build)
    except Exception as exc:
        return [{**base, "solver": s, "status": "error", "ok": False, "error": f"build: {_one_line(exc)}", **env}
                for s in solvers]
    shape, nnz = _shape_nnz(inp.problem, data)
    base.update(shape=shape, nnz=nnz, build_s=build_s)
    if args.max_nnz is not None and nnz > args.max_nnz:
        log(f"skip {inp.name}: {nnz} stored entries > --max-nnz {args.max_nnz}")
        return []
    timeout = args.timeout or None
    reference, ref_source = inp.reference, inp.ref_source
    guard_scipy = (inp.problem == "matching" and inp.family in MESH_FAMILIES
                   and shape[0] > args.scipy_mesh_limit)

    def unit_flow_reference():
        got = run_with_timeout(lambda: {"status": "ok", "value": _timed(lambda: flow_reference(data))}, timeout)
        if got.get("status") == "ok":
            base["reference_s"] = got["value"][1]
            return got["value"][0], "scipy maximum_flow (unit network)"
        log(f"{inp.name}: no reference size ({got.get('status')}: {got.get('error', '')})")
        return None, None

    # A full check proves maximality by itself (König cover); only the light
    # check needs a reference size when scipy's matching does not provide one.
    if (reference is None and inp.problem == "matching" and args.check != "full"
            and (guard_scipy or "scipy" not in solvers)):
        reference, ref_source = unit_flow_reference()
    order = sorted(solvers, key=lambda s: s != "scipy")  # scipy first: its certified size is the reference
    records = []
    for solver in order:
        rec = {**base, "solver": solver}
        if solver == "scipy" and guard_scipy:
            rec.update(status="skipped", ok=False, reference_s=base.get("reference_s"),
                       note=f"scipy maximum_bipartite_matching skipped on a {inp.family} input above "
                            f"{args.scipy_mesh_limit} rows (scipy #26147)")
            records.append(rec)
            continue
        check = make_checker(inp, data, args.check, reference)
        fn = (lambda s=solver, c=check: measure(s, inp, data, c, args.repeats, args.budget))
        got = _guarded(fn) if solver == "gpumatch-cupy" else run_with_timeout(fn, timeout)
        rec.update(got)
        if solver == "scipy" and reference is None:
            if rec.get("ok"):
                reference, ref_source = rec["result"], "scipy (certified)"
            elif inp.problem == "matching":  # timed out or failed: fall back to the unit network
                reference, ref_source = unit_flow_reference()
        records.append(rec)
    scipy_rec = next((r for r in records if r["solver"] == "scipy" and r.get("ok")), None)
    for rec in records:
        for key in ("median_s", "e2e_s", "transfer_s", "compile_s", "warmup_s", "result"):
            rec.setdefault(key, None)
        rec["size" if inp.problem == "matching" else "value"] = rec["result"]
        rec.setdefault("reference_s", base.get("reference_s"))
        rec["reference"] = reference
        rec["ref_source"] = ref_source
        if rec.get("ok") and reference is not None and rec.get("result") != reference:
            rec.update(ok=False, status="wrong", error=f"result {rec.get('result')} != reference {reference}")
        for key in ("median_s", "e2e_s"):
            name = "speedup_vs_scipy" if key == "median_s" else "speedup_e2e_vs_scipy"
            rec[name] = (scipy_rec[key] / rec[key] if scipy_rec and rec.get("ok") and rec.get(key) else None)
        rec.update({k: v for k, v in env.items()})
        rec["timestamp"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    order_idx = {s: i for i, s in enumerate(solvers)}
    records.sort(key=lambda r: order_idx[r["solver"]])
    return records


def run(args) -> int:
    """Run the benchmark described by parsed `args`; returns the exit code."""
    solvers = parse_solvers(args.solvers)
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}")
    inputs = collect_inputs(args)
    if not inputs:
        raise ValueError("no inputs selected (check --suite/--dir/--corpus/--problem/--filter)")
    notes = []
    usable = []
    for s in solvers:
        ok, why = solver_available(s)
        (usable.append(s) if ok else notes.append(f"note: solver {s} skipped: {why}"))
    for n in notes:
        print(n, file=sys.stderr)
    if not usable:
        raise RuntimeError("none of the requested solvers can run here")
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    jsonl = out_dir / "results.jsonl"
    env = environment()
    records = []
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None
    bar = None if (args.quiet or tqdm is None) else tqdm(total=len(inputs), unit="input", file=sys.stderr)
    log = (bar.write if bar is not None else (lambda msg: print(msg, file=sys.stderr)))
    with open(jsonl, "w") as fh:
        for inp in inputs:
            if bar is not None:
                bar.set_description(inp.name)
            recs = bench_input(inp, usable, args, env, log)
            for r in recs:
                fh.write(json.dumps(_jsonable({k: v for k, v in r.items() if k != "traceback"})) + "\n")
                if r.get("status") in ("wrong", "error"):
                    log(f"{r['input']} / {r['solver']}: {r['status']}: {r.get('error', '')}")
            fh.flush()
            records += recs
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    table = markdown_table(records)
    header = (f"gpumatch bench — {env['gpu'] or 'no GPU'}; CPU {env['cpu']}; numpy {env['numpy']}, "
              f"scipy {env['scipy']}, cupy {env['cupy']}, CUDA {env['cuda_runtime']}; "
              f"git {env['git_rev']}{' (modified)' if env['git_dirty'] else ''}; repeats {args.repeats}; check {args.check}\n\n")
    (out_dir / "results.md").write_text(header + table)
    print()
    print(header + table)
    if not args.no_plot:
        png = save_plot(records, out_dir / "time_vs_size.png")
        print(f"plot: {png}" if png else "plot: skipped (matplotlib is not installed)")
    print(f"records: {jsonl}  table: {out_dir / 'results.md'}")
    bad = [r for r in records if r.get("status") in ("wrong", "error")]
    return 1 if bad else 0


def main(argv=None) -> int:
    """``benchmarks/run.py`` entry point (errors: one line; exit 2 for bad usage, such as an
    option value or inputs that select nothing, as ``gpumatch bench``; 1 for any other)."""
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        print("benchmark interrupted", file=sys.stderr)
        return 130
    except ValueError as exc:
        print(f"{build_parser().prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"{build_parser().prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``gpumatch`` command line (``python -m gpumatch ...``).

Commands::

    gpumatch match FILE [--backend B] [--perm-type row|column] [-o OUT]
    gpumatch rank  FILE [--backend B] [--nonzero]
    gpumatch dm    FILE [--backend B] [--nonzero] [--blocks N]
    gpumatch flow  FILE [--source S --sink T] [--backend B] [-o OUT] [--cut OUT]
    gpumatch demo  [--size N] [--degree D] [--backend B]
    gpumatch bench [runner options]          (same as benchmarks/run.py)

FILE is a Matrix Market file (``.mtx``, ``.mtx.gz``) for ``match`` and
``rank``, and a DIMACS max-flow file (``.max``, ``.max.gz``) or a square
Matrix Market capacity matrix for ``flow``.  Errors (a missing or malformed
file, a bad option, an output folder that does not exist) print one line on
stderr, before any solving where they can be known then; set
``GPUMATCH_TRACEBACK=1`` to see the traceback of an unexpected error.  Exit
status: 0 done; 2 bad usage or bad input (an unknown option, a missing,
unreadable or malformed file, an option value or an input the solvers
reject); 1 a check that failed (``demo``, ``--check``) or any other error
while running.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

__all__ = ["build_parser", "main"]

_BACKENDS = ("auto", "numpy", "cupy", "numba")


class CLIError(Exception):
    """An error reported to the user as one line, without a traceback."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``prog: error: message``) and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_backend(p):
    p.add_argument("--backend", choices=_BACKENDS, default="auto",
                   help="'auto' uses the GPU when CuPy finds one, else the compiled CPU engine (Numba); "
                        "'numba' and 'cupy' ask for one of them, 'numpy' for the vectorised reference twin of "
                        "the GPU kernels (default: auto)")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(prog="gpumatch", description="Maximum bipartite matching and maximum flow on GPUs "
                     "(CuPy) and CPUs (a compiled Numba engine).", epilog="Run 'gpumatch COMMAND --help' for a command's options.")
    parser.add_argument("--version", action="version", version=f"gpumatch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("match", help="maximum bipartite matching of a Matrix Market file",
                       description="Maximum bipartite matching of the rows and columns of a sparse matrix "
                                   "(every stored entry is an edge, explicit zeros included, as in scipy).")
    p.add_argument("file", metavar="FILE", help=".mtx or .mtx.gz file")
    _add_backend(p)
    p.add_argument("--perm-type", choices=("row", "column"), default="row",
                   help="'row': for each column its matched row; 'column': for each row its matched "
                        "column (scipy's convention; default: row)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the matching array: one line per entry, the 0-based matched index or -1")
    p.add_argument("--check", action="store_true", help="prove the result maximum (König cover)")
    p.set_defaults(func=_cmd_match)

    p = sub.add_parser("rank", help="structural rank of a Matrix Market file",
                       description="Structural rank (maximum matching size) of a sparse matrix.")
    p.add_argument("file", metavar="FILE", help=".mtx or .mtx.gz file")
    _add_backend(p)
    p.add_argument("--nonzero", action="store_true",
                   help="drop explicitly stored zeros first (MATLAB sprank semantics)")
    p.set_defaults(func=_cmd_rank)

    _add_dm_parser(sub)

    p = sub.add_parser("assign", help="minimum-weight assignment (weighted bipartite matching) of a Matrix Market file",
                       description="Optimal assignment of the rows to the columns of a sparse matrix whose stored "
                                   "entries are the weights (the CPU engine; explicit zeros are dropped, as scipy's "
                                   "min_weight_full_bipartite_matching does).  Every row (or every column, if "
                                   "fewer) is matched unless --partial.")
    p.add_argument("file", metavar="FILE", help=".mtx or .mtx.gz file")
    p.add_argument("--maximize", action="store_true", help="maximise the total weight instead")
    p.add_argument("--partial", action="store_true",
                   help="when no full matching exists, the cheapest matching of maximum size (instead of an error)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the matched pairs: one line 'row col' per pair, 0-based")
    p.add_argument("--check", action="store_true",
                   help="verify the assignment and prove it optimal (dual potentials)")
    p.set_defaults(func=_cmd_assign)

    p = sub.add_parser("flow", help="maximum flow of a DIMACS max-flow file",
                       description="Maximum s-t flow (push-relabel). Vertex ids on the command line and in "
                                   "the outputs are 1-based, as in DIMACS and Matrix Market files.")
    p.add_argument("file", metavar="FILE", help=".max/.max.gz DIMACS file, or a square .mtx capacity matrix "
                                                "(integer values; a real one whose values are whole numbers)")
    p.add_argument("--source", type=int, metavar="S", help="source vertex (1-based; default: the file's)")
    p.add_argument("--sink", type=int, metavar="T", help="sink vertex (1-based; default: the file's)")
    _add_backend(p)
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the flow in DIMACS solution format ('s VALUE', then 'f u v x' per arc)")
    p.add_argument("--cut", metavar="OUT", help="write the source side of a minimum cut, one vertex per line")
    p.add_argument("--check", action="store_true", help="verify the flow and prove it maximum (min cut)")
    p.set_defaults(func=_cmd_flow)

    p = sub.add_parser("demo", help="generate, solve and check a matching and a max flow; compare with scipy",
                       description="Generate a random bipartite graph, match it with gpumatch, check the "
                                   "result with gpumatch.testing.check_matching and compare with scipy; then "
                                   "the same for a small GENRMF max-flow network against scipy's Dinic.")
    p.add_argument("--size", type=int, default=200_000, metavar="N",
                   help="rows = columns of the random bipartite graph (default: 200000)")
    p.add_argument("--degree", type=float, default=5.0, metavar="D", help="mean row degree (default: 5)")
    p.add_argument("--flow-frame", type=int, default=16, metavar="A",
                   help="GENRMF frame side a (a x a x a vertices; default: 16)")
    p.add_argument("--seed", type=int, default=0)
    _add_backend(p)
    p.set_defaults(func=_cmd_demo)

    from . import bench

    p = sub.add_parser("bench", help="benchmark gpumatch against scipy (JSON lines + Markdown table)",
                       description=bench.__doc__.split("\n\n")[0],
                       epilog="Example: gpumatch bench --suite standard --repeats 5 --out bench_out")
    bench.add_arguments(p)
    p.set_defaults(func=_cmd_bench)
    return parser


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _resolve(backend: str) -> str:
    from ._backend import resolve_backend

    return resolve_backend(backend)


def _read_matrix(path):
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory, not a file")
    from .io import read_matrix_market

    try:
        return read_matrix_market(path)
    except Exception as exc:
        raise CLIError(f"{path}: cannot read as Matrix Market: {_short(_unnamed(exc, path))}") from None


def _read_flow(path, source, sink):
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a directory, not a file")
    low = path.lower()
    if low.endswith((".mtx", ".mtx.gz")):
        C = _read_matrix(path)
        if source is None or sink is None:
            raise CLIError("a Matrix Market capacity matrix needs --source and --sink")
        if C.dtype.kind == "f":  # a "real" file: fine when every value is a whole number
            C = _whole_capacities(path, C)
        s = t = None
    else:
        from .io import _read_dimacs_max

        try:  # --source/--sink stand in for the file's n lines (which may then be missing)
            C, s, t = _read_dimacs_max(path, source is not None, sink is not None)
        except Exception as exc:
            raise CLIError(f"{path}: cannot read as DIMACS max-flow: {_short(_unnamed(exc, path))}") from None
    nv = C.shape[0]
    if C.shape[0] != C.shape[1]:
        raise CLIError(f"{path}: a capacity matrix must be square, got {C.shape[0]}x{C.shape[1]}")
    if source is not None:
        if not 1 <= source <= nv:
            raise CLIError(f"--source {source} is out of range 1..{nv}")
        s = source - 1
    if sink is not None:
        if not 1 <= sink <= nv:
            raise CLIError(f"--sink {sink} is out of range 1..{nv}")
        t = sink - 1
    if s == t:
        raise CLIError(f"source and sink must differ, both are {s + 1}")
    return C, int(s), int(t)


def _whole_capacities(path, C):
    """The float capacities `C` of a ``real`` file as int64 when every value
    is a whole number; CLIError otherwise.  Below ``2**53`` the floats are
    exact; a larger magnitude may be a rounded value (``9223372036854775807``
    reads as ``2**63``), so then the file's own digits decide."""
    d = C.data
    if not np.isfinite(d).all():
        raise CLIError(f"{path}: capacities must be integers, and this file has non-finite values")
    if (d != np.rint(d)).any():
        raise CLIError(f"{path}: capacities must be integers, and this file has fractional values")
    if not C.nnz or np.abs(d).max() < 2.0 ** 53:
        return C.astype(np.int64)
    from .io import _read_whole_real

    try:
        return _read_whole_real(path)
    except ValueError as exc:
        msg = _short(_unnamed(exc, path))
        if "not a whole number" in msg:
            msg = f"capacities must be integers, and this file has fractional values ({msg})"
        raise CLIError(f"{path}: {msg}") from None


def _unnamed(exc, path) -> str:
    """The message of `exc` without a leading ``path: `` (the CLI names the file itself)."""
    text = str(exc)
    return text[len(path) + 2:] if text.startswith(f"{path}: ") else text


def _short(exc) -> str:
    """`exc` as one line of at most 300 characters, without Python's class name."""
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    elif isinstance(exc, MemoryError):
        text = "out of memory" + (f" ({exc})" if str(exc) else "")
    elif isinstance(exc, KeyError) and exc.args:
        text = f"no such key: {exc.args[0]!r}"
    else:
        text = str(exc)
    text = " ".join(text.split()) or "unexpected failure without a message (GPUMATCH_TRACEBACK=1 shows where)"
    return text if len(text) <= 300 else text[:297] + "..."


def _check_output(path, option):
    """Fail before any work when `path` cannot be a file to write: a missing folder, or a folder."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CLIError(f"{option} {path}: is a directory, not a file")
    if not os.path.isdir(folder):
        raise CLIError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise CLIError(f"{option} {path}: cannot write into folder {folder}")


def _now():
    return time.perf_counter()


def _sync(backend):
    from ._backend import synchronize

    synchronize(backend)


# ---------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------


def _cmd_match(args) -> int:
    from ._backend import to_numpy
    from .matching import maximum_bipartite_matching

    _check_output(args.output, "-o")
    A = _read_matrix(args.file)
    backend = _resolve(args.backend)
    load_s = _warm_up(backend, ["matching"], verbose=False)
    t0 = _now()
    match = maximum_bipartite_matching(A, args.perm_type, backend=backend)
    _sync(backend)
    dt = _now() - t0
    match = to_numpy(match)
    size = int((match >= 0).sum())
    m, n = A.shape
    print(f"{args.file}: {m} x {n}, {A.nnz} stored entries")
    print(f"matching size: {size} of min(m, n) = {min(m, n)}  ({_timing(dt, backend, load_s)})")
    if args.check:
        from .testing import check_matching

        cert = check_matching(A, match, args.perm_type)
        print(f"check: valid and maximum (König cover of size {cert.size})")
    if args.output:
        what = ("for each column j (line j+1) its matched row" if args.perm_type == "row"
                else "for each row i (line i+1) its matched column")
        header = f"gpumatch matching, perm_type={args.perm_type}: {what}, 0-based, -1 = unmatched"
        np.savetxt(args.output, match.astype(np.int64), fmt="%d", header=header)
        print(f"wrote {args.output}")
    return 0


def _cmd_rank(args) -> int:
    from .matching import structural_rank

    A = _read_matrix(args.file)
    if args.nonzero:
        A = A.copy()
        A.eliminate_zeros()
    backend = _resolve(args.backend)
    load_s = _warm_up(backend, ["matching"], verbose=False)
    t0 = _now()
    r = int(structural_rank(A, backend=backend))
    _sync(backend)
    dt = _now() - t0
    m, n = A.shape
    print(f"{args.file}: {m} x {n}, {A.nnz} stored entries")
    print(f"structural rank: {r}  ({_timing(dt, backend, load_s)})")
    if r < min(m, n):
        print(f"structurally singular: {m - r} rows and {n - r} columns are unmatched")
    else:
        print("structurally full rank" + (" (structurally nonsingular)" if m == n else ""))
    return 0


def _cmd_assign(args) -> int:
    from .lap import assignment

    _check_output(args.output, "-o")
    A = _read_matrix(args.file)
    load_s = _warm_up("numba", ["assignment"], verbose=False)
    t0 = _now()
    res = assignment(A, maximize=args.maximize, full=not args.partial, backend="numba")
    dt = _now() - t0
    m, n = A.shape
    print(f"{args.file}: {m} x {n}, {A.nnz} stored entries")
    goal = "maximum" if args.maximize else "minimum"
    print(f"assignment: {res.size} pairs of min(m, n) = {min(m, n)}, {goal} total weight {res.cost}  "
          f"({_timing(dt, 'numba', load_s)})")
    if args.check:
        from .testing import check_assignment

        check_assignment(A, res.row_ind, res.col_ind, res.u, res.v, maximize=args.maximize,
                         full=not args.partial, expected_cost=res.cost)
        print("check: valid and optimal (dual potentials: every reduced cost >= 0, 0 on the pairs)")
    if args.output:
        header = f"gpumatch assignment of {os.path.basename(args.file)}: row col per pair, 0-based; total {res.cost}"
        np.savetxt(args.output, np.column_stack([res.row_ind, res.col_ind]).astype(np.int64), fmt="%d",
                   header=header)
        print(f"wrote {args.output}")
    return 0


# -- gpumatch dm (Dulmage-Mendelsohn) ---------------------------------------


def _add_dm_parser(sub):
    p = sub.add_parser("dm", help="Dulmage-Mendelsohn decomposition (coarse and fine blocks) of a Matrix Market file",
                       description="Dulmage-Mendelsohn decomposition of a sparse matrix (MATLAB dmperm): its "
                                   "structural rank, the coarse horizontal / square / vertical parts and the "
                                   "square part's irreducible blocks. Every stored entry counts, explicit zeros "
                                   "included, unless --nonzero.")
    p.add_argument("file", metavar="FILE", help=".mtx or .mtx.gz file")
    _add_backend(p)
    p.add_argument("--nonzero", action="store_true",
                   help="drop explicitly stored zeros first (MATLAB semantics)")
    p.add_argument("--blocks", type=int, default=10, metavar="N",
                   help="list the N largest square blocks with their positions (default: 10; 0: none)")
    p.set_defaults(func=_cmd_dm)


def _cmd_dm(args) -> int:
    from ._backend import to_numpy
    from .structure import dulmage_mendelsohn

    if args.blocks < 0:
        raise CLIError(f"--blocks must be non-negative, got {args.blocks}")
    A = _read_matrix(args.file)
    if args.nonzero:
        A = A.copy()
        A.eliminate_zeros()
    backend = _resolve(args.backend)
    load_s = _warm_up(backend, ["matching"], verbose=False)
    t0 = _now()
    dm = dulmage_mendelsohn(A, backend=backend)
    _sync(backend)
    dt = _now() - t0
    print(f"{args.file}: {A.shape[0]} x {A.shape[1]}, {A.nnz} stored entries")
    print(dm.summary())
    st = dm.stats
    print(f"time: {dt:.3f} s (matching {st['time_matching']:.3f}, coarse {st['time_coarse']:.3f}, "
          f"fine {st['time_fine']:.3f}; {_backend_note(backend, load_s)})")
    if args.blocks:
        r, s = to_numpy(dm.r).astype(np.int64), to_numpy(dm.s).astype(np.int64)
        rr, cc = to_numpy(dm.rr), to_numpy(dm.cc)
        ks = [k for k in range(dm.nblocks) if rr[1] <= r[k] < rr[2] and cc[2] <= s[k] < cc[3]]
        ks.sort(key=lambda k: (-(r[k + 1] - r[k]), k))
        if ks:
            print("largest square blocks (0-based rows x columns of A[p][:, q]):")
            for k in ks[:args.blocks]:
                print(f"  block {k}: {r[k + 1] - r[k]} x {s[k + 1] - s[k]} at rows {r[k]}..{r[k + 1] - 1}, "
                      f"columns {s[k]}..{s[k + 1] - 1}")
    return 0


def _cmd_flow(args) -> int:
    from ._backend import to_numpy
    from .flow import maximum_flow

    _check_output(args.output, "-o")
    _check_output(args.cut, "--cut")
    C, s, t = _read_flow(args.file, args.source, args.sink)
    backend = _resolve(args.backend)
    load_s = _warm_up(backend, ["flow"], verbose=False)
    t0 = _now()
    res = maximum_flow(C, s, t, backend=backend)
    _sync(backend)
    dt = _now() - t0
    print(f"{args.file}: {C.shape[0]} vertices, {C.nnz} arcs, source {s + 1}, sink {t + 1}")
    print(f"maximum flow value: {int(res.flow_value)}  ({_timing(dt, backend, load_s)})")
    if args.check:
        from .testing import check_flow

        cert = check_flow(C, s, t, res.flow, int(res.flow_value))
        print(f"check: valid and maximum (cut of capacity {int(cert.cut_capacity)})")
    if args.output:
        import scipy.sparse as sp

        F = res.flow
        if not sp.issparse(F):
            F = F.get() if hasattr(F, "get") else sp.csr_matrix(np.asarray(F))
        F = sp.coo_matrix(F)
        pos = F.data > 0
        u, v, x = F.row[pos] + 1, F.col[pos] + 1, F.data[pos].astype(np.int64)
        order = np.lexsort((v, u))
        with open(args.output, "w") as fh:
            fh.write(f"c gpumatch maximum flow of {os.path.basename(args.file)}, source {s + 1}, sink {t + 1}\n")
            fh.write("c f u v x: net flow x > 0 from u to v (1-based)\n")
            fh.write(f"s {int(res.flow_value)}\n")
            for a, b, c in zip(u[order], v[order], x[order]):
                fh.write(f"f {a} {b} {c}\n")
        print(f"wrote {args.output}")
    if args.cut:
        side = getattr(res, "source_side", None)
        if side is None:
            from .testing import check_flow

            side = check_flow(C, s, t, res.flow, int(res.flow_value)).source_side
        side = np.flatnonzero(to_numpy(side)) + 1
        with open(args.cut, "w") as fh:
            fh.write(f"c source side of a minimum cut of {os.path.basename(args.file)} "
                     f"(capacity {int(res.flow_value)}), 1-based vertex ids\n")
            fh.write("".join(f"{v}\n" for v in side))
        print(f"wrote {args.cut} ({side.size} source-side vertices)")
    return 0


def _warm_up(backend, solvers=("matching", "flow"), verbose=True) -> float:
    """Load (or compile, on a cold cache) `backend`'s engines before anything is
    timed, saying so while it happens; the seconds it took.  Quiet unless
    `verbose` or the cache is cold (then on stderr, when not `verbose`)."""
    from .backends import warm_up

    if backend == "numpy":
        return 0.0
    what = "GPU kernels" if backend == "cupy" else "CPU engine"
    cold = backend == "numba" and _numba_cache_cold()
    out = sys.stdout if verbose else sys.stderr
    if cold:
        print(f"first run: compiling the {what}, cached for next time (15-20 s on 2 cores) ...", file=out,
              flush=True)
    seconds = warm_up(backend, solvers, progress=(lambda step, dt: print(f"  {step}: {dt:.1f} s", file=out,
                                                                         flush=True)) if cold else None)
    if verbose:
        print(f"{what} ready in {seconds:.2f} s ({'compiled' if cold else 'loaded'} once per "
              f"{'install' if cold else 'process'}; not part of the times below)")
    return seconds


def _timing(dt: float, backend: str, load_s: float) -> str:
    """``"0.012 s, backend numba"``, with the one-time load apart when there was one."""
    return f"{dt:.3f} s, {_backend_note(backend, load_s)}"


def _backend_note(backend: str, load_s: float) -> str:
    """``"backend numba; loading the engine took 0.45 s more, once"``."""
    return f"backend {backend}" + (f"; loading the engine took {load_s:.2f} s more, once" if load_s >= 0.005 else "")


def _numba_cache_cold() -> bool:
    """True when Numba's on-disk cache lacks the engines' compiled code (their first
    run after an install, or after an upgrade of gpumatch or Numba)."""
    try:
        from . import _cpu_csr
        from .flow import _cpu as flow_cpu
        from .matching import _cpu as match_cpu
        from .matching import _cpu_parallel

        funcs = (_cpu_csr._summary, match_cpu.karp_sipser, match_cpu.pothen_fan, flow_cpu.max_flow,
                 _cpu_parallel._bfs_run)
        # (Numba's own cache index: empty when missing, or stale after an edit or upgrade)
        return any(not f._cache._cache_file._load_index() for f in funcs)
    except Exception:   # a layout of Numba's cache that this does not know: say nothing
        return False


def _cmd_demo(args) -> int:
    import scipy.sparse.csgraph as csgraph

    from .backends import synchronize, to_numpy
    from .flow import maximum_flow
    from .generators import genrmf, random_bipartite
    from .matching import maximum_bipartite_matching
    from .testing import check_flow, check_matching

    if args.size < 1:
        raise CLIError(f"--size must be positive, got {args.size}")
    if not 0 < args.degree < float("inf"):   # (NaN fails both)
        raise CLIError(f"--degree must be a positive finite number, got {args.degree}")
    if args.flow_frame < 2:
        raise CLIError(f"--flow-frame must be at least 2, got {args.flow_frame}")
    if args.seed < 0:
        raise CLIError(f"--seed must be non-negative, got {args.seed}")
    backend = _resolve(args.backend)
    ok = True
    n = args.size
    # The first call of a process loads the engines (and on a cold cache
    # compiles them): done up front, for every path the solves below can
    # take (the multi-threaded one of graphs of 1M edges or more included),
    # and shown apart, so that the times and speedups below are the solves'.
    load_s = _warm_up(backend)
    print(f"\n== matching: random bipartite graph, {n} x {n}, mean degree {args.degree:g} (seed {args.seed})")
    t0 = _now()
    A = random_bipartite(n, n, args.degree, seed=args.seed)
    print(f"generated {A.nnz} edges in {_now() - t0:.2f} s")
    t0 = _now()
    match = maximum_bipartite_matching(A, backend=backend)
    synchronize(backend)
    t_ours = _now() - t0
    match = to_numpy(match)
    t0 = _now()
    ref = csgraph.maximum_bipartite_matching(A, perm_type="row")
    t_scipy = _now() - t0
    size_ref = int((ref >= 0).sum())
    t0 = _now()
    try:
        cert = check_matching(A, match, expected_size=size_ref)
        verdict = f"valid and maximum (König cover of size {cert.size}, equal to scipy's)"
    except AssertionError as exc:
        ok, verdict = False, f"WRONG: {_short(exc)}"
    t_check = _now() - t0
    size = int((match >= 0).sum())
    print(f"gpumatch ({backend}): size {size} in {t_ours:.3f} s")
    print(f"scipy (Hopcroft-Karp): size {size_ref} in {t_scipy:.3f} s  -> speedup {_speedup(t_scipy, t_ours)}")
    print(f"check_matching: {verdict} ({t_check:.2f} s)")

    a = args.flow_frame
    print(f"\n== max flow: GENRMF a={a}, b={a} ({a * a * a} vertices), capacities 1..1000")
    C, s, t = genrmf(a, a, 1, 1000, seed=args.seed)
    t0 = _now()
    res = maximum_flow(C, s, t, backend=backend)
    synchronize(backend)
    t_ours = _now() - t0
    t0 = _now()
    ref = csgraph.maximum_flow(C.astype(np.int32), s, t, method="dinic")
    t_scipy = _now() - t0
    try:
        cert = check_flow(C, s, t, res.flow, int(res.flow_value))
        if int(cert.value) != int(ref.flow_value):
            raise AssertionError(f"value {cert.value} differs from scipy's {ref.flow_value}")
        verdict = "valid and maximum (cut of equal capacity), value equal to scipy's"
    except AssertionError as exc:
        ok, verdict = False, f"WRONG: {_short(exc)}"
    print(f"gpumatch ({backend}): value {int(res.flow_value)} in {t_ours:.3f} s")
    print(f"scipy (Dinic): value {int(ref.flow_value)} in {t_scipy:.3f} s  -> speedup {_speedup(t_scipy, t_ours)}")
    print(f"check_flow: {verdict}")
    if load_s:
        print(f"\n(times are the solves alone; loading the engines took {load_s:.2f} s once, above)")
    print("\nall checks passed" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


def _speedup(t_ref: float, t_ours: float) -> str:
    """``"4.0x"``, or ``"1/2.5x (slower)"`` below one, so that a slowdown reads as one."""
    r = t_ref / max(t_ours, 1e-9)
    return f"{r:.1f}x" if r >= 1 else f"1/{1 / max(r, 1e-9):.1f}x (slower)"


def _cmd_bench(args) -> int:
    from . import bench

    return bench.run(args)


# ---------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------


def main(argv=None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 bad usage or input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"gpumatch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OverflowError) as exc:   # the input, as the library's checks found it
        if os.environ.get("GPUMATCH_TRACEBACK", "") not in ("", "0"):
            raise
        print(f"gpumatch {args.command}: error: {_short(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"gpumatch {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # never a traceback for the user; the message names the problem
        if os.environ.get("GPUMATCH_TRACEBACK", "") not in ("", "0"):
            raise
        print(f"gpumatch {args.command}: error: {_short(exc)}", file=sys.stderr)
        return 1

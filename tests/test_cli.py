"""The ``gpumatch`` command line: every subcommand, exit codes, one-line errors, --help."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.csgraph import (
    maximum_bipartite_matching,
    maximum_flow,
    structural_rank,
)

from gpumatch.cli import main
from gpumatch.testing import check_flow, check_matching

REPO = pathlib.Path(__file__).resolve().parent.parent


def _matrix(m=60, n=50, density=0.05, seed=1):
    A = sp.random(m, n, density=density, format="csr", random_state=seed)
    A.data[:] = 1.0
    return A


def _write_mtx(path, A):
    scipy.io.mmwrite(str(path), sp.coo_matrix(A))
    return path


def _write_dimacs(path, C, s, t):
    C = sp.coo_matrix(C)
    with open(path, "w") as fh:
        fh.write("c test network\n")
        fh.write(f"p max {C.shape[0]} {C.nnz}\n")
        fh.write(f"n {s + 1} s\nn {t + 1} t\n")
        for u, v, c in zip(C.row, C.col, C.data):
            fh.write(f"a {u + 1} {v + 1} {int(c)}\n")
    return path


def _network(nv=30, seed=3):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, nv, 150)
    v = rng.integers(0, nv, 150)
    keep = u != v
    C = sp.csr_matrix((rng.integers(1, 20, keep.sum()), (u[keep], v[keep])), shape=(nv, nv), dtype=np.int64)
    return C, 0, nv - 1


@pytest.fixture
def mtx(tmp_path):
    A = _matrix()
    return _write_mtx(tmp_path / "a.mtx", A), A


@pytest.fixture
def maxfile(tmp_path):
    C, s, t = _network()
    return _write_dimacs(tmp_path / "net.max", C, s, t), C, s, t


def _one_error_line(err: str):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert "error" in lines[0]
    return lines[0]


# ---------------------------------------------------------------------------
# match
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("perm_type", ["row", "column"])
def test_match_writes_a_maximum_matching(mtx, tmp_path, capsys, perm_type):
    path, A = mtx
    out = tmp_path / "match.txt"
    rc = main(["match", str(path), "--backend", "numpy", "--perm-type", perm_type, "-o", str(out), "--check"])
    assert rc == 0
    text = capsys.readouterr().out
    size = int((maximum_bipartite_matching(A, perm_type=perm_type) >= 0).sum())
    assert f"matching size: {size}" in text
    match = np.loadtxt(out, dtype=np.int64, ndmin=1)
    assert match.shape == (A.shape[1] if perm_type == "row" else A.shape[0],)
    check_matching(A, match, perm_type, expected_size=size)


def test_match_reads_gzip(tmp_path, capsys):
    from gpumatch.io import write_matrix_market

    A = _matrix(30, 30, 0.1, seed=7)
    path = tmp_path / "a.mtx.gz"
    write_matrix_market(path, A)
    assert main(["match", str(path), "--backend", "numpy"]) == 0
    size = int((maximum_bipartite_matching(A) >= 0).sum())
    assert f"matching size: {size}" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# assign
# ---------------------------------------------------------------------------


def _weighted(n, seed):
    """Square integer weights 1..99 with a perfect matching (the diagonal)."""
    rng = np.random.default_rng(seed)
    A = (sp.random(n, n, density=0.05, random_state=seed, format="csr") + sp.eye(n)).tocsr()
    A.data = rng.integers(1, 100, A.nnz).astype(np.float64)
    return A


@pytest.mark.parametrize("maximize", [False, True])
def test_assign_writes_an_optimal_assignment(tmp_path, capsys, maximize):
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    from gpumatch.testing import check_assignment

    A = _weighted(120, seed=3)
    path = tmp_path / "w.mtx"
    scipy.io.mmwrite(str(path), A.astype(np.int64).tocoo())
    out = tmp_path / "pairs.txt"
    args = ["assign", str(path), "-o", str(out), "--check"] + (["--maximize"] if maximize else [])
    assert main(args) == 0
    r, c = min_weight_full_bipartite_matching(A, maximize=maximize)
    cost = int(A[r, c].sum())
    text = capsys.readouterr().out
    assert f"total weight {cost}" in text and "check: valid and optimal" in text
    pairs = np.loadtxt(out, dtype=np.int64, ndmin=2)
    check_assignment(A, pairs[:, 0], pairs[:, 1], maximize=maximize, expected_cost=cost)


def test_assign_without_a_full_matching(tmp_path, capsys):
    """No full matching: exit 2 naming the problem; --partial gives the cheapest maximum one."""
    A = sp.csr_matrix((np.array([5.0, 2.0, 7.0]), ([0, 1, 2], [0, 0, 1])), shape=(3, 3))
    path = tmp_path / "short.mtx"
    scipy.io.mmwrite(str(path), A.astype(np.int64).tocoo())
    assert main(["assign", str(path)]) == 2
    assert "no full matching exists" in capsys.readouterr().err
    assert main(["assign", str(path), "--partial", "--check"]) == 0
    text = capsys.readouterr().out
    assert "2 pairs of min(m, n) = 3" in text and "total weight 9" in text   # (1, 0) + (2, 1)


# ---------------------------------------------------------------------------
# rank
# ---------------------------------------------------------------------------


def test_rank_matches_scipy(mtx, capsys):
    path, A = mtx
    assert main(["rank", str(path), "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    r = int(structural_rank(sp.csr_matrix(A)))
    assert f"structural rank: {r}" in out
    if r < min(A.shape):
        assert "structurally singular" in out


def test_rank_of_singular_square_matrix(tmp_path, capsys):
    A = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [0, 1, 0]]))  # column 2 empty
    path = _write_mtx(tmp_path / "s.mtx", A)
    assert main(["rank", str(path), "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert "structural rank: 2" in out
    assert "structurally singular: 1 rows and 1 columns are unmatched" in out


# ---------------------------------------------------------------------------
# flow
# ---------------------------------------------------------------------------


def _read_flow_output(path, nv):
    value, rows, cols, vals = None, [], [], []
    for line in pathlib.Path(path).read_text().splitlines():
        f = line.split()
        if f[0] == "s":
            value = int(f[1])
        elif f[0] == "f":
            rows.append(int(f[1]) - 1)
            cols.append(int(f[2]) - 1)
            vals.append(int(f[3]))
    F = sp.csr_matrix((vals, (rows, cols)), shape=(nv, nv), dtype=np.int64)
    return value, (F - F.T).tocsr()


def test_flow_value_outputs_and_cut(maxfile, tmp_path, capsys):
    path, C, s, t = maxfile
    out, cut = tmp_path / "flow.txt", tmp_path / "cut.txt"
    rc = main(["flow", str(path), "--backend", "numpy", "-o", str(out), "--cut", str(cut), "--check"])
    assert rc == 0
    ref = int(maximum_flow(C.astype(np.int32), s, t).flow_value)
    assert f"maximum flow value: {ref}" in capsys.readouterr().out
    value, F = _read_flow_output(out, C.shape[0])
    assert value == ref
    check_flow(C, s, t, F, value)
    side = np.loadtxt(cut, dtype=np.int64, comments="c", ndmin=1) - 1
    mask = np.zeros(C.shape[0], dtype=bool)
    mask[side] = True
    assert mask[s] and not mask[t]
    Ccoo = sp.coo_matrix(C)
    crossing = mask[Ccoo.row] & ~mask[Ccoo.col]
    assert int(Ccoo.data[crossing].sum()) == ref


def test_flow_source_sink_override(maxfile, capsys):
    path, C, s, t = maxfile
    assert main(["flow", str(path), "--backend", "numpy", "--source", "2", "--sink", "5"]) == 0
    ref = int(maximum_flow(C.astype(np.int32), 1, 4).flow_value)
    assert f"maximum flow value: {ref}" in capsys.readouterr().out


def test_flow_terminals_stand_in_for_missing_n_lines(tmp_path, capsys):
    """--source/--sink on a DIMACS file without n lines (issue 62: it
    failed with "missing source")."""
    path = tmp_path / "plain.max"
    path.write_text("p max 4 3\na 1 2 5\na 2 3 4\na 3 4 7\n")
    assert main(["flow", str(path), "--backend", "numpy", "--source", "1", "--sink", "3"]) == 0
    assert "maximum flow value: 4" in capsys.readouterr().out
    assert main(["flow", str(path), "--backend", "numpy", "--source", "1"]) == 2
    assert "missing sink" in _one_error_line(capsys.readouterr().err)


def test_flow_from_matrix_market(tmp_path, capsys):
    C, s, t = _network(seed=5)
    path = _write_mtx(tmp_path / "cap.mtx", C)
    assert main(["flow", str(path), "--backend", "numpy", "--source", str(s + 1), "--sink", str(t + 1)]) == 0
    ref = int(maximum_flow(C.astype(np.int32), s, t).flow_value)
    assert f"maximum flow value: {ref}" in capsys.readouterr().out


def test_flow_matrix_market_needs_terminals(tmp_path, capsys):
    C, _, _ = _network()
    path = _write_mtx(tmp_path / "cap.mtx", C)
    assert main(["flow", str(path), "--backend", "numpy"]) == 2
    assert "--source and --sink" in _one_error_line(capsys.readouterr().err)


def test_flow_terminal_out_of_range(maxfile, capsys):
    path, C, _, _ = maxfile
    assert main(["flow", str(path), "--backend", "numpy", "--sink", str(C.shape[0] + 1)]) == 2
    assert "out of range" in _one_error_line(capsys.readouterr().err)


def test_flow_from_real_matrix_market_with_whole_values(tmp_path, capsys):
    C, s, t = _network(seed=6)
    path = _write_mtx(tmp_path / "cap.mtx", C.astype(np.float64))  # field "real"
    assert "real" in path.read_text().splitlines()[0]
    assert main(["flow", str(path), "--backend", "numpy", "--source", str(s + 1), "--sink", str(t + 1)]) == 0
    ref = int(maximum_flow(C.astype(np.int32), s, t).flow_value)
    assert f"maximum flow value: {ref}" in capsys.readouterr().out
    D = C.astype(np.float64)
    D.data[0] += 0.5
    path = _write_mtx(tmp_path / "frac.mtx", D)
    assert main(["flow", str(path), "--backend", "numpy", "--source", str(s + 1), "--sink", str(t + 1)]) == 2
    assert "fractional" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("value, expected", [
    ("9223372036854775807", 2**63 - 1), ("9.223372036854775807e18", 2**63 - 1), ("9007199254740993", 2**53 + 1),
    ("9223372036854775808", "does not fit int64"), ("9007199254740993.5", "fractional"), ("inf", "non-finite"),
])
def test_flow_real_matrix_market_with_values_past_2_53(tmp_path, capsys, value, expected):
    """Whole values that float64 cannot hold exactly are read from the
    file's digits (issue 62: 2**63 - 1 was called "fractional")."""
    path = tmp_path / "big.mtx"
    path.write_text(f"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 {value}\n2 3 {value}\n")
    rc = main(["flow", str(path), "--backend", "numpy", "--source", "1", "--sink", "3"])
    out, err = capsys.readouterr()
    if isinstance(expected, int):
        assert rc == 0 and f"maximum flow value: {expected}" in out
    else:
        assert rc == 2 and expected in _one_error_line(err)


def test_generated_network_written_by_gpumatch_feeds_flow(tmp_path, capsys):
    from gpumatch import generators
    from gpumatch.io import write_matrix_market

    C, s, t = generators.genrmf(3, 4, 1, 20, seed=2)
    path = tmp_path / "genrmf.mtx"
    write_matrix_market(path, C)
    assert main(["flow", str(path), "--backend", "numpy", "--source", str(s + 1), "--sink", str(t + 1)]) == 0
    ref = int(maximum_flow(C.astype(np.int32), s, t).flow_value)
    assert f"maximum flow value: {ref}" in capsys.readouterr().out


@pytest.mark.parametrize("argv_tail", [["-o", "{missing}/flow.txt"], ["--cut", "{missing}/cut.txt"],
                                       ["-o", "{dir}"]])
def test_flow_unwritable_output_fails_before_solving(maxfile, tmp_path, capsys, monkeypatch, argv_tail):
    import gpumatch.flow

    def never(*args, **kwargs):
        raise AssertionError("solved before checking the output path")

    monkeypatch.setattr(gpumatch.flow, "maximum_flow", never)
    path = maxfile[0]
    tail = [x.format(missing=tmp_path / "no" / "such", dir=tmp_path) for x in argv_tail]
    assert main(["flow", str(path), "--backend", "numpy"] + tail) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert tail[1] in line and ("does not exist" in line or "is a directory" in line)


def test_match_output_to_missing_folder_fails_before_reading(tmp_path, capsys):
    # the input does not exist either: the output folder is checked first, before any work
    out = tmp_path / "no" / "m.txt"
    assert main(["match", str(tmp_path / "a.mtx"), "--backend", "numpy", "-o", str(out)]) == 2
    assert "does not exist" in _one_error_line(capsys.readouterr().err)


# ---------------------------------------------------------------------------
# demo and bench
# ---------------------------------------------------------------------------


def test_demo_small(capsys):
    assert main(["demo", "--size", "3000", "--flow-frame", "4", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert "check_matching: valid and maximum" in out
    assert "check_flow: valid and maximum" in out
    assert "all checks passed" in out


def test_demo_numba_times_the_solve_apart_from_loading(capsys):
    """On the compiled engine the demo loads (or compiles) it first, says so,
    and reports the solves' times and speedups without that time."""
    pytest.importorskip("numba")
    assert main(["demo", "--size", "3000", "--flow-frame", "4", "--backend", "numba"]) == 0
    out = capsys.readouterr().out
    head, rest = out.split("CPU engine ready in ", 1)
    assert "== matching" not in head and "not part of the times below" in rest.splitlines()[0]
    assert "gpumatch (numba): size" in rest and "-> speedup " in rest
    assert "loading the engines took" in rest and "all checks passed" in out


def test_demo_says_a_cold_cache_compiles(tmp_path):
    """With an empty Numba cache the demo knows that the engine is about to
    compile (the line it prints before the wait)."""
    pytest.importorskip("numba")
    import os
    import subprocess
    import sys

    code = "from gpumatch import cli; print(cli._numba_cache_cold())"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty"),
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True"]


def test_speedup_reads_as_a_slowdown_below_one():
    from gpumatch.cli import _speedup

    assert _speedup(4.0, 1.0) == "4.0x"
    assert _speedup(1.0, 2.5) == "1/2.5x (slower)"


def test_bench_subcommand(tmp_path, capsys):
    rc = main(["bench", "--suite", "small", "--filter", "random_2k_d5", "--solvers", "gpumatch-numpy,scipy",
               "--repeats", "1", "--out", str(tmp_path), "--quiet", "--no-plot"])
    assert rc == 0
    recs = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert {r["solver"] for r in recs} == {"gpumatch-numpy", "scipy"}
    assert all(r["ok"] for r in recs)
    assert "| random_2k_d5 |" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# errors and help
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["match", "rank", "flow"])
def test_missing_file_is_one_line_error(tmp_path, capsys, command):
    assert main([command, str(tmp_path / "nope.mtx"), "--backend", "numpy"]) == 2
    assert "no such file" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("command,name", [("match", "bad.mtx"), ("rank", "bad.mtx.gz"), ("flow", "bad.max")])
def test_malformed_file_is_one_line_error(tmp_path, capsys, command, name):
    path = tmp_path / name
    path.write_bytes(b"this is not a graph file\n1 2 3\n")
    assert main([command, str(path), "--backend", "numpy"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"gpumatch {command}: error:")


def test_bad_dimacs_line_names_the_problem(tmp_path, capsys):
    path = tmp_path / "net.max"
    path.write_text("p max 3 1\nn 1 s\nn 3 t\na 1 9 5\n")
    assert main(["flow", str(path), "--backend", "numpy"]) == 2
    assert "DIMACS" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [
    ["match", "x.mtx", "--backend", "tpu"],
    ["match", "x.mtx", "--perm-type", "diagonal"],
    ["flow", "x.max", "--source", "one"],
    ["frobnicate"],
    ["bench", "--suite", "huge"],
])
def test_bad_option_is_one_line_error(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [
    ["--timeout", "-5"], ["--timeout", "nan"], ["--budget", "-1"], ["--repeats", "0"], ["--max-nnz", "-1"],
    ["--dir", "{missing}"], ["--dir", "{file}"], ["--out", "{file}"],
])
def test_bench_bad_option_value_is_a_usage_error(tmp_path, capsys, argv):
    """Checked as parsed: exit 2, one line naming the option, before any work
    (issue 62: --timeout -5 ran, --dir of a missing folder exited 1)."""
    (tmp_path / "f.mtx").write_text("")
    argv = [a.format(missing=tmp_path / "missing", file=tmp_path / "f.mtx") for a in argv]
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--out", str(tmp_path / "out"), *argv])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert f"argument {argv[0]}" in _one_error_line(err) and not out
    assert not (tmp_path / "out").exists()


def test_bench_missing_corpus_is_a_usage_error(tmp_path, capsys):
    assert main(["bench", "--corpus", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2
    assert "no corpus found" in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_demo_bad_seed_fails_before_any_output(capsys):
    assert main(["demo", "--seed", "-1", "--size", "100", "--backend", "numpy"]) == 2
    out, err = capsys.readouterr()
    assert not out and "--seed must be non-negative, got -1" in _one_error_line(err)


def test_bench_bad_solver_is_one_line_error(tmp_path, capsys):
    assert main(["bench", "--solvers", "magic", "--out", str(tmp_path)]) == 2
    assert "unknown solver" in _one_error_line(capsys.readouterr().err)


def test_cupy_backend_without_gpu_is_one_line_error(mtx, capsys):
    from gpumatch._backend import cupy_available

    if cupy_available():
        pytest.skip("a GPU is present")
    assert main(["match", str(mtx[0]), "--backend", "cupy"]) == 1
    assert "cupy" in _one_error_line(capsys.readouterr().err).lower()


@pytest.mark.parametrize("exc", [ValueError("the graph is odd"), OSError(28, "No space left on device", "o.txt"),
                                 KeyError("weight"), MemoryError()])
def test_unexpected_error_is_a_plain_line(mtx, capsys, monkeypatch, exc):
    import gpumatch.matching

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(gpumatch.matching, "maximum_bipartite_matching", fail)
    monkeypatch.delenv("GPUMATCH_TRACEBACK", raising=False)
    # a ValueError is the input as the library's checks found it (status 2); the others are failures (1)
    assert main(["match", str(mtx[0]), "--backend", "numpy"]) == (2 if isinstance(exc, ValueError) else 1)
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith("gpumatch match: error: ")
    assert type(exc).__name__ not in line
    detail = line[len("gpumatch match: error: "):]
    assert detail and detail in {"the graph is odd", "o.txt: No space left on device", "no such key: 'weight'",
                                 "out of memory"}
    monkeypatch.setenv("GPUMATCH_TRACEBACK", "1")
    with pytest.raises(type(exc)):
        main(["match", str(mtx[0]), "--backend", "numpy"])


@pytest.mark.parametrize("command", [[], ["match"], ["rank"], ["flow"], ["demo"], ["bench"]])
def test_help(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main(command + ["--help"])
    assert exc.value.code == 0
    assert "usage: gpumatch" in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: gpumatch" in capsys.readouterr().err


def test_python_dash_m(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ok = subprocess.run([sys.executable, "-m", "gpumatch", "--help"], capture_output=True, text=True,
                        env=env, cwd=tmp_path, timeout=60, check=False)
    assert ok.returncode == 0 and "match" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "gpumatch", "rank", str(tmp_path / "missing.mtx")],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, check=False)
    assert bad.returncode == 2
    _one_error_line(bad.stderr)

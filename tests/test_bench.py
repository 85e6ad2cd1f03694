"""The benchmark runner: JSON records, checks of every result, guards, the table."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from gpumatch import bench

REPO = pathlib.Path(__file__).resolve().parent.parent

KEYS = {"input", "family", "problem", "shape", "nnz", "solver", "status", "ok", "median_s", "times_s", "e2e_s",
        "transfer_s", "compile_s", "warmup_s", "result", "reference", "speedup_vs_scipy", "gpu", "cupy",
        "cuda_runtime", "numpy", "scipy", "git_rev", "timestamp"}


def _records(out_dir):
    return [json.loads(line) for line in (pathlib.Path(out_dir) / "results.jsonl").read_text().splitlines()]


def _run(tmp_path, *extra):
    return bench.main(["--out", str(tmp_path), "--quiet", "--no-plot", "--repeats", "1", *extra])


def test_small_suite_numpy_and_scipy(tmp_path, capsys):
    rc = _run(tmp_path, "--suite", "small", "--solvers", "gpumatch-numpy,scipy", "--repeats", "2")
    assert rc == 0
    recs = _records(tmp_path)
    names = {i.name for i in bench.SUITES["small"]()}
    assert {r["input"] for r in recs} == names
    assert len(recs) == 2 * len(names)
    for r in recs:
        assert KEYS <= set(r), KEYS - set(r)
        assert r["ok"] is True and r["status"] == "ok", r
        assert r["result"] == r["reference"]
        assert len(r["times_s"]) == 2 and r["median_s"] > 0
        assert r["speedup_vs_scipy"] > 0
        assert ("size" in r) == (r["problem"] == "matching")
    table = (tmp_path / "results.md").read_text()
    assert "| problem | input |" in table
    for name in names:
        assert f"| {name} |" in table
    assert "| problem | input |" in capsys.readouterr().out


class _WrongNumpy(bench._NumpySolve):
    """Returns an empty matching / a zero flow: must be reported wrong, never timed."""

    def solve(self):
        if self.problem == "matching":
            return np.full(self.data.shape[1], -1, dtype=np.int32), 0.001, 0.001
        C = self.data[0]
        return (0, sp.csr_matrix(C.shape, dtype=np.int64)), 0.001, 0.001

    def warmup(self):
        res, t, _ = self.solve()
        return res, t, None


def test_wrong_result_is_reported_not_timed(tmp_path, monkeypatch):
    monkeypatch.setitem(bench._SOLVER_CLASSES, "gpumatch-numpy", _WrongNumpy)
    rc = _run(tmp_path, "--suite", "small", "--filter", "2k_d5", "--solvers", "gpumatch-numpy,scipy")
    assert rc == 1
    recs = {r["solver"]: r for r in _records(tmp_path)}
    assert recs["scipy"]["ok"] is True
    bad = recs["gpumatch-numpy"]
    assert bad["ok"] is False and bad["status"] == "wrong"
    assert bad["median_s"] is None and bad["times_s"] == []
    assert bad["error"]
    assert "| wrong |" in (tmp_path / "results.md").read_text()


def test_wrong_flow_is_reported(tmp_path, monkeypatch):
    monkeypatch.setitem(bench._SOLVER_CLASSES, "gpumatch-numpy", _WrongNumpy)
    rc = _run(tmp_path, "--suite", "small", "--problem", "flow", "--filter", "genrmf", "--solvers",
              "gpumatch-numpy,scipy")
    assert rc == 1
    recs = {r["solver"]: r for r in _records(tmp_path)}
    assert recs["gpumatch-numpy"]["status"] == "wrong"
    assert recs["scipy"]["ok"] is True


def test_light_check_catches_a_non_edge():
    A = sp.csr_matrix(np.array([[1, 0], [0, 1]]))
    assert bench._light_matching_check(A, np.array([0, 1]), 2) == 2
    with pytest.raises(AssertionError, match="not an edge"):
        bench._light_matching_check(A, np.array([1, 0]), 2)
    with pytest.raises(AssertionError, match="reference"):
        bench._light_matching_check(A, np.array([0, -1]), 2)


def test_mesh_guard_skips_scipy_and_uses_flow_reference(tmp_path):
    rc = _run(tmp_path, "--suite", "small", "--filter", "grid", "--solvers", "gpumatch-numpy,scipy",
              "--scipy-mesh-limit", "100", "--check", "light")
    assert rc == 0
    recs = {r["solver"]: r for r in _records(tmp_path)}
    assert recs["scipy"]["status"] == "skipped" and "26147" in recs["scipy"]["note"]
    ours = recs["gpumatch-numpy"]
    assert ours["ok"] is True
    assert "maximum_flow" in ours["ref_source"]
    assert ours["result"] == ours["reference"] == 1600  # the grid has a perfect matching
    assert ours["speedup_vs_scipy"] is None


class _SlowScipy(bench._ScipySolve):
    def warmup(self):
        time.sleep(30)
        return super().warmup()


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="needs fork")
def test_timeout_stops_a_hanging_solver(tmp_path, monkeypatch):
    monkeypatch.setitem(bench._SOLVER_CLASSES, "scipy", _SlowScipy)
    t0 = time.perf_counter()
    rc = _run(tmp_path, "--suite", "small", "--filter", "rect", "--solvers", "gpumatch-numpy,scipy",
              "--timeout", "3")
    assert time.perf_counter() - t0 < 25
    assert rc == 0  # a timeout is not a failure
    recs = {r["solver"]: r for r in _records(tmp_path)}
    assert recs["scipy"]["status"] == "timeout"
    assert recs["gpumatch-numpy"]["ok"] is True
    assert recs["gpumatch-numpy"]["reference"] == recs["gpumatch-numpy"]["result"]


def test_dir_of_files(tmp_path):
    from gpumatch.generators import genrmf
    from gpumatch.io import write_dimacs_max, write_matrix_market

    data = tmp_path / "inputs"
    data.mkdir()
    A = sp.random(300, 200, density=0.01, format="csr", random_state=2)
    A.data[:] = 1
    write_matrix_market(data / "a.mtx.gz", A)
    scipy.io.mmwrite(str(data / "b.mtx"), sp.coo_matrix(A.T))
    C, s, t = genrmf(3, 4, 1, 50, seed=1)
    write_dimacs_max(data / "net.max", C, s, t)
    (data / "notes.txt").write_text("ignored\n")
    out = tmp_path / "out"
    assert _run(out, "--dir", str(data), "--solvers", "gpumatch-numpy,scipy") == 0
    recs = _records(out)
    assert {r["input"] for r in recs} == {"a", "b", "net"}
    assert all(r["ok"] for r in recs)
    probs = {r["input"]: r["problem"] for r in recs}
    assert probs == {"a": "matching", "b": "matching", "net": "flow"}


def test_corpus_entries(tmp_path):
    from conftest import corpus_path

    path = corpus_path()
    if path is None:
        pytest.skip("test corpus not found")
    rc = _run(tmp_path, "--corpus", str(path), "--max-nnz", "400", "--solvers", "gpumatch-numpy,scipy")
    assert rc == 0
    recs = _records(tmp_path)
    assert recs
    for r in recs:
        assert r["ok"] and r["ref_source"] == "manifest" and r["result"] == r["reference"]


def test_unavailable_solver_is_skipped_with_a_note(tmp_path, capsys):
    from gpumatch._backend import cupy_available

    if cupy_available():
        pytest.skip("a GPU is present")
    rc = _run(tmp_path, "--suite", "small", "--filter", "random_2k_d5", "--solvers", "gpumatch-cupy,scipy")
    assert rc == 0
    assert {r["solver"] for r in _records(tmp_path)} == {"scipy"}
    assert "gpumatch-cupy skipped" in capsys.readouterr().err


def test_bad_options():
    with pytest.raises(ValueError, match="unknown solver"):
        bench.parse_solvers("scipy,nope")
    with pytest.raises(FileNotFoundError):
        bench.dir_inputs("/definitely/not/here")


def test_markdown_table_formats_records():
    recs = [{"problem": "matching", "input": "x", "shape": [3, 4], "nnz": 1234, "solver": "scipy", "ok": True,
             "median_s": 0.5, "e2e_s": 0.5, "result": 3, "speedup_vs_scipy": 1.0, "speedup_e2e_vs_scipy": 1.0},
            {"problem": "matching", "input": "x", "shape": [3, 4], "nnz": 1234, "solver": "gpumatch-cupy",
             "ok": False, "status": "timeout"}]
    table = bench.markdown_table(recs)
    lines = table.strip().splitlines()
    assert len(lines) == 4
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    assert "| 3×4 | 1,234 | scipy | 0.500 |" in lines[2]
    assert "timeout" in lines[3]


def test_standard_suite_is_the_issue_inputs():
    names = [i.name for i in bench.SUITES["standard"]()]
    matching = ["random_1M_d5", "delaunay_1M", "rmat_20_8", "rect_1M_500k_d3", "grid_1000x1000_drop0.1",
                "random_200k_d5"]
    assert [i for i in names if not i.startswith(("genrmf", "washington", "unit_"))] == matching
    # the flow issue's inputs: the unit networks of the matching inputs, and the DIMACS families
    assert [i for i in names if i.startswith("unit_")] == ["unit_" + n for n in matching]
    assert len(names) == 16


def test_benchmarks_run_py_help():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "run.py"), "--help"],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0
    assert "--suite" in done.stdout and "--solvers" in done.stdout


class _Event:
    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


class _FakeCupySolve(bench._CupySolve):
    """The GPU runner's plumbing (events, transfer, compile, e2e) with the NumPy engine underneath."""

    def _call(self, graph, stats=False):
        from gpumatch.flow import maximum_flow
        from gpumatch.matching import bipartite_matching, maximum_bipartite_matching

        if self.problem == "matching":
            if stats:
                time.sleep(0.5)  # stands in for kernel compilation
                res = bipartite_matching(graph, backend="numpy")
                return res.col_to_row, res.stats
            return maximum_bipartite_matching(graph, "row", backend="numpy"), None
        _, s, t = self.data
        res = maximum_flow(graph, s, t, backend="numpy")
        return (int(res.flow_value), res.flow), res.stats


def test_gpu_runner_plumbing_with_a_fake_device(tmp_path, monkeypatch):
    import types

    from gpumatch import _backend

    fake_cp = types.SimpleNamespace(
        __version__="fake",
        ndarray=type("FakeDeviceArray", (), {}),
        cuda=types.SimpleNamespace(Event=_Event, get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3,
                                   get_current_stream=lambda: _Event()))
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = types.ModuleType("cupyx.scipy")
    cupyx.scipy.sparse = types.ModuleType("cupyx.scipy.sparse")
    cupyx.scipy.sparse.csr_matrix = sp.csr_matrix
    cupyx.scipy.sparse.issparse = lambda x: False   # its matrices are SciPy's, not taken for device ones
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setitem(sys.modules, "cupyx.scipy", cupyx.scipy)
    monkeypatch.setitem(sys.modules, "cupyx.scipy.sparse", cupyx.scipy.sparse)
    monkeypatch.setattr(_backend, "cp", fake_cp)
    monkeypatch.setattr(_backend, "cpx_sparse", cupyx.scipy.sparse)   # the one door to cupyx
    monkeypatch.setattr(bench, "solver_available", lambda s: (True, ""))
    monkeypatch.setitem(bench._SOLVER_CLASSES, "gpumatch-cupy", _FakeCupySolve)
    rc = _run(tmp_path, "--suite", "small", "--problem", "matching", "--filter", "_d5",
              "--solvers", "gpumatch-cupy,scipy")
    rc2 = _run(tmp_path / "flow", "--suite", "small", "--filter", "genrmf", "--solvers", "gpumatch-cupy,scipy")
    assert rc == rc2 == 0
    rec = {r["solver"]: r for r in _records(tmp_path)}["gpumatch-cupy"]
    assert rec["ok"] and rec["device_input"] is True
    assert rec["transfer_s"] > 0 and rec["compile_s"] > 0.2 and rec["e2e_s"] > 0
    assert rec["stats"] and rec["cupy"] == "fake"
    frec = {r["solver"]: r for r in _records(tmp_path / "flow")}["gpumatch-cupy"]
    assert frec["ok"] and frec["device_input"] is False and frec["transfer_s"] is None
    assert frec["e2e_s"] == frec["median_s"]


def test_budget_stops_repeats(tmp_path):
    rc = _run(tmp_path, "--suite", "small", "--filter", "rect", "--solvers", "gpumatch-numpy,scipy",
              "--repeats", "5", "--budget", "1e-6")
    assert rc == 0
    for r in _records(tmp_path):
        assert r["ok"] and r["times_s"] == [] and "--budget" in r["note"]
        assert r["median_s"] == r["warmup_s"]


class _SlowWarmup:
    """A solver whose warm-up takes far longer than a solve (a GPU run that compiles)."""

    problem = "matching"
    device_input = False

    def __init__(self, problem, data):
        pass

    def setup(self):
        pass

    def warmup(self):
        time.sleep(0.3)
        return 7, 0.3, None

    def solve(self):
        return 7, 1e-4, 1e-4


def test_budget_times_fast_solves_after_a_slow_warmup(monkeypatch):
    """A warm-up that compiles for most of the budget still gets timed
    repeats: the next repeat is projected from the last one, not from the
    warm-up (which once left a 6 ms GPU solve reported as 10 s)."""
    monkeypatch.setitem(bench._SOLVER_CLASSES, "stub", _SlowWarmup)
    inp = bench.BenchInput("stub", "stub", "matching", lambda: None)
    out = bench.measure("stub", inp, None, lambda res: res, repeats=5, budget=0.5)
    assert out["ok"] and out["times_s"] == [1e-4] * 5 and out["median_s"] == 1e-4
    out = bench.measure("stub", inp, None, lambda res: res, repeats=5, budget=0.1)   # the warm-up alone passed it
    assert out["ok"] and out["times_s"] == [] and out["median_s"] == 0.3 and "--budget" in out["note"]


# ---------------------------------------------------------------------------
# the structured suite (issue 61)
# ---------------------------------------------------------------------------


def test_structured_suite_declares_families_at_three_sizes():
    from gpumatch._bench_inputs import STRUCTURED_SIZES, structured_inputs

    inputs = bench.SUITES["structured"]()
    names = [i.name for i in inputs]
    assert len(names) == len(set(names))
    by_size = {s: [i for i in inputs if i.params["size"] == s] for s in STRUCTURED_SIZES}
    assert [i.name for i in bench.SUITES["structured-small"]()] == [i.name for i in by_size["small"]]
    assert [i.name for i in bench.SUITES["structured-large"]()] == [i.name for i in by_size["large"]]
    families = {(i.family, i.problem, i.params["generator"]) for i in by_size["small"]}
    assert {g for _, p, g in families if p == "matching"} == {
        "block_triangular", "bidiagonal", "staircase", "arrowhead", "banded", "block_diagonal", "cycles"}
    assert {g for _, p, g in families if p == "flow"} == {"path_network", "bidiagonal", "block_triangular"}
    for s in STRUCTURED_SIZES:  # the same families at every size, growing
        assert [(i.family, i.problem) for i in by_size[s]] == [(i.family, i.problem) for i in by_size["small"]]
    for small, large in zip(by_size["small"], by_size["large"]):
        assert 50_000 <= small.params["n"] <= 300_000 and large.params["n"] >= 1_000_000
    assert "jacobian_120k" in names and "ladder_300k" in names and "jacobian_1.92M" in names  # issue 61's inputs
    with pytest.raises(ValueError, match="sizes"):
        structured_inputs(("huge",))


def test_structured_suite_runs_at_a_tiny_size(tmp_path, monkeypatch):
    from gpumatch._bench_inputs import structured_inputs

    monkeypatch.setitem(bench.SUITES, "structured", lambda: structured_inputs(scale=0.001))
    solvers = "gpumatch-numpy,scipy" + (",igraph" if bench._module_available("igraph") else "")
    # scipy's Hopcroft-Karp can stall on a shuffled staircase (width 6, 2000 rows): a short
    # limit, and the reference then comes from the unit network's maximum flow
    rc = _run(tmp_path, "--suite", "structured", "--solvers", solvers, "--timeout", "20")
    assert rc == 0
    recs = _records(tmp_path)
    assert {r["input"] for r in recs} == {i.name for i in structured_inputs(scale=0.001)}
    for r in recs:
        if r["solver"] == "scipy" and r["status"] == "timeout":
            assert r["problem"] == "matching" and r["reference"] is not None, r
            continue
        assert r["ok"] is True and r["status"] == "ok", r
        assert r["result"] == r["reference"]
    by = {(r["input"], r["solver"]): r for r in recs}
    assert by["jacobian_120", "scipy"]["result"] == 120      # perfect matching
    assert by["staircase_101x100", "scipy"]["result"] == 100  # rank = columns
    assert by["unit_ladder_100", "scipy"]["result"] == 100


def test_file_input_terminals_stand_in_for_missing_n_lines(tmp_path):
    """A manifest's source_sink is used even where the DIMACS file has no
    n lines (issue 62, defect 6's class: the reader required them first)."""
    from gpumatch._bench_inputs import _file_input

    path = tmp_path / "plain.max"
    path.write_text("p max 3 2\na 1 2 5\na 2 3 4\n")
    C, s, t = _file_input(path, "corpus", 4, "manifest", [0, 2]).build()
    assert (s, t) == (0, 2) and C.shape == (3, 3)
    with pytest.raises(ValueError, match="missing source"):
        _file_input(path).build()

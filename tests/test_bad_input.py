"""Issue 45: data safety and clear errors, one regression test (or more) per item.

Each test names its item.  The property-based tests of the same issue
(every format, dtype and batch sequence) are in ``test_properties.py``;
``docs/bad_input.rst`` lists what gpumatch and scipy do with each bad input.
"""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching

import gpumatch
from gpumatch import MatchingSolver, MaxFlowSolver, bipartite_matching, maximum_bipartite_matching, maximum_flow
from gpumatch import minimum_cut, structural_rank
from gpumatch.cli import main
from gpumatch.io import read_dimacs_max, read_matrix_market, write_dimacs_max
from gpumatch.testing import check_flow, check_matching

from conftest import run_in_child

REPO = pathlib.Path(__file__).resolve().parent.parent
I64 = np.iinfo(np.int64).max


def _python(code, cwd):
    """Run `code` in a fresh interpreter that imports this checkout's gpumatch."""
    return run_in_child(textwrap.dedent(code), cwd=cwd, timeout=120)


def _snapshot(A):
    """Bytes and flags of every array of a scipy sparse matrix."""
    arrays = [A.data] + ([A.row, A.col] if A.format == "coo" else [A.indices, A.indptr])
    return [(a.tobytes(), a.dtype, a.flags.writeable) for a in arrays]


def _issue_matrix():
    """Item 1's example: row 0 holds columns 2, 0, 1 (unsorted) with values 10, 20, 30."""
    return sp.csr_matrix(([10., 20, 30], [2, 0, 1], [0, 3, 3, 3]), shape=(3, 3))


def _read_only(A):
    for a in ([A.data, A.row, A.col] if A.format == "coo" else [A.data, A.indices, A.indptr]):
        a.flags.writeable = False
    return A


# ---------------------------------------------------------------------------
# item 1: the caller's matrix is never changed, read-only inputs work
# ---------------------------------------------------------------------------

MATCHING_CALLS = {
    "maximum_bipartite_matching": lambda A: maximum_bipartite_matching(A, backend="numpy"),
    "maximum_bipartite_matching_flow": lambda A: maximum_bipartite_matching(A, method="flow", backend="numpy"),
    "structural_rank": lambda A: structural_rank(A, backend="numpy"),
    "bipartite_matching": lambda A: bipartite_matching(A, backend="numpy", certificate=True),
    "MatchingSolver": lambda A: MatchingSolver(A, backend="numpy").solve(),
    "check_matching": lambda A: check_matching(A, sp_matching(sp.csr_matrix(A), perm_type="row")),
}


@pytest.mark.parametrize("call", sorted(MATCHING_CALLS))
def test_item1_matching_leaves_an_unsorted_csr_as_it_was(call):
    A = _issue_matrix()
    before = _snapshot(A)
    MATCHING_CALLS[call](A)
    assert _snapshot(A) == before
    assert A.indices.tolist() == [2, 0, 1] and A.data.tolist() == [10, 20, 30]


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("call", sorted(MATCHING_CALLS))
def test_item1_matching_accepts_read_only_arrays(call, fmt):
    rng = np.random.default_rng(1)
    r, c = rng.integers(0, 7, 30), rng.integers(0, 6, 30)     # duplicates, unsorted
    A = _read_only(sp.coo_matrix((np.ones(30), (r, c)), shape=(7, 6)).asformat(fmt))
    if fmt != "coo":   # asformat sums and sorts: unsort it again
        A = _read_only(type(A)((A.data[::-1].copy(), A.indices[::-1].copy(), A.indptr.copy()), shape=A.shape))
    before = _snapshot(A)
    MATCHING_CALLS[call](A)
    assert _snapshot(A) == before
    size = int((maximum_bipartite_matching(A, backend="numpy") >= 0).sum())
    assert size == int((sp_matching(sp.csr_matrix(A), perm_type="row") >= 0).sum())


def test_item1_read_only_tuple_input():
    indptr, indices = np.array([0, 3, 3, 5]), np.array([2, 0, 2, 1, 1])
    for a in (indptr, indices):
        a.flags.writeable = False
    assert structural_rank((indptr, indices, (3, 4)), backend="numpy") == 2
    assert indices.tolist() == [2, 0, 2, 1, 1]


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_item1_flow_accepts_read_only_unsorted_input(fmt):
    C = sp.csr_matrix(([3, 2, 2, 4], [2, 1, 2, 2], [0, 2, 3, 3]), shape=(3, 3), dtype=np.int64)  # row 0 unsorted
    A = _read_only(C.asformat(fmt) if fmt != "csr" else C)
    before = _snapshot(A)
    res = maximum_flow(A, 0, 2, backend="numpy")
    assert int(res.flow_value) == 5
    check_flow(A, 0, 2, res.flow, res.flow_value)
    MaxFlowSolver(A, 0, 2, backend="numpy").solve()
    minimum_cut(A, 0, 2, backend="numpy")
    assert _snapshot(A) == before


def test_item1_check_flow_leaves_the_flow_as_it_was():
    """check_flow drops a flow's explicit zeros: in its own copy (it did so in the caller's data)."""
    C = sp.csr_matrix(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]), dtype=np.int64)
    res = maximum_flow(C, 0, 2, backend="numpy")
    Fc = res.flow.tocoo()
    F = sp.csr_matrix((np.r_[Fc.data, 0], (np.r_[Fc.row, 0], np.r_[Fc.col, 0])), shape=(3, 3))  # + explicit 0
    assert F.has_canonical_format and (F.data == 0).sum() == 1
    before = _snapshot(F)
    check_flow(C, 0, 2, F, 4)
    assert _snapshot(F) == before


# ---------------------------------------------------------------------------
# item 2: a file without a Matrix Market banner raises, never aborts
# ---------------------------------------------------------------------------

def test_item2_no_banner_raises_value_error_naming_the_file(tmp_path):
    """In a child process: scipy's reader aborted the process (exit 134)."""
    (tmp_path / "net.max").write_text("p max 4 3\nn 1 s\nn 4 t\na 1 2 5\na 2 3 5\na 3 4 5\n")
    (tmp_path / "hello.mtx").write_text("hello\nworld\n")
    (tmp_path / "empty.mtx").write_text("")
    out = _python("""
        import io
        from gpumatch.io import read_matrix_market
        for name in ("net.max", "hello.mtx", "empty.mtx"):
            for src in (name, open(name, "rb"), open(name), io.BytesIO(open(name, "rb").read())):
                try:
                    read_matrix_market(src)
                except ValueError as exc:
                    print("ValueError", exc)
    """, tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 12
    assert all(ln.startswith("ValueError") and "not a Matrix Market file" in ln for ln in lines)
    assert sum("net.max:" in ln for ln in lines) == 3   # path, binary and text file objects are named


def test_item2_cli_match_of_a_dimacs_file_is_one_line_exit_2(tmp_path):
    path = tmp_path / "net.max"
    path.write_text("p max 4 3\nn 1 s\nn 4 t\na 1 2 5\na 2 3 5\na 3 4 5\n")
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "gpumatch", "match", str(path), "--backend", "numpy"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert out.returncode == 2
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "net.max" in lines[0] and "not a Matrix Market file" in lines[0]
    assert lines[0].count("net.max") == 1


def test_item2_banner_variants_scipy_accepts_still_read():
    text = b" matrix coordinate integer general\n2 2 1\n1 1 5\n"
    for banner in (b"%%MatrixMarket", b"%MatrixMarket", b"  %%MatrixMarket"):
        assert read_matrix_market(io.BytesIO(banner + text)).toarray().tolist() == [[5, 0], [0, 0]]


# ---------------------------------------------------------------------------
# item 3: sums of duplicate capacities never wrap
# ---------------------------------------------------------------------------

def _overflowing_coo():
    return sp.coo_matrix(([2**62] * 4 + [1], ([0] * 4 + [1], [1] * 4 + [2])), shape=(3, 3))


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc"])
def test_item3_duplicate_capacities_past_int64_raise(fmt):
    C = _overflowing_coo()
    if fmt != "coo":   # keep the duplicates: build the format from the raw entries
        order = np.lexsort((C.col, C.row)) if fmt == "csr" else np.lexsort((C.row, C.col))
        seg, idx = (C.row, C.col) if fmt == "csr" else (C.col, C.row)
        ptr = np.r_[0, np.cumsum(np.bincount(seg, minlength=3))]
        C = (sp.csr_matrix if fmt == "csr" else sp.csc_matrix)((C.data[order], idx[order], ptr), shape=(3, 3))
    for call in (lambda: maximum_flow(C, 0, 2, backend="numpy"),
                 lambda: MaxFlowSolver(C, 0, 2, backend="numpy"),
                 lambda: minimum_cut(C, 0, 2, backend="numpy"),
                 lambda: check_flow(C, 0, 2, sp.csr_matrix((3, 3), dtype=np.int64)),
                 lambda: write_dimacs_max(io.StringIO(), C, 0, 2)):
        with pytest.raises(OverflowError, match=r"\(0, 1\) sum to 18446744073709551616, which does not fit int64"):
            call()


def test_item3_duplicates_that_fit_are_summed_exactly():
    C = sp.coo_matrix(([2**62, 2**62 - 1, 5], ([0, 0, 1], [1, 1, 2])), shape=(3, 3))
    res = maximum_flow(C, 0, 2, backend="numpy")
    assert int(res.flow_value) == 5
    check_flow(C, 0, 2, res.flow, 5)
    B = sp.coo_matrix(([I64, 5], ([0, 1], [1, 2])), shape=(3, 3))   # one arc of 2**63 - 1
    assert int(maximum_flow(B, 0, 2, backend="numpy").flow_value) == 5
    # small integer dtypes are summed in int64, not in their own
    S = sp.coo_matrix((np.array([100, 100, 7], dtype=np.int8), ([0, 0, 1], [1, 1, 2])), shape=(3, 3))
    W = sp.coo_matrix((np.array([2**31 - 1, 2**31 - 1, 9], dtype=np.int32), ([1, 1, 0], [2, 2, 1])), shape=(3, 3))
    for A, value in ((S, 7), (W, 9)):
        res = maximum_flow(A, 0, 2, backend="numpy")
        assert int(res.flow_value) == value
        check_flow(A, 0, 2, res.flow, value)


def test_item3_dimacs_reader_and_cli_check(tmp_path, capsys):
    path = tmp_path / "wrap.max"
    path.write_text("p max 3 5\nn 1 s\nn 3 t\n" + "a 1 2 4611686018427387904\n" * 4 + "a 2 3 1\n")
    with pytest.raises(ValueError, match=r"line 7: the capacities of the parallel arcs 1 -> 2 \(lines 4, 5, 6, 7\) "
                                         r"sum to 18446744073709551616, which does not fit int64"):
        read_dimacs_max(path)
    assert main(["flow", str(path), "--backend", "numpy", "--check"]) == 2
    err = capsys.readouterr()
    assert "valid" not in err.out and "does not fit int64" in err.err
    mtx = tmp_path / "wrap.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 3\n"
                   "1 2 9223372036854775807\n1 2 9223372036854775807\n2 3 1\n")
    with pytest.raises(ValueError, match="wrap.mtx: the duplicate entries at .* does not fit int64"):
        read_matrix_market(mtx)


def test_item3_solver_source_total_still_checked():
    C = sp.csr_matrix(([I64, 1, 1], [1, 2, 2], [0, 2, 3, 3]), shape=(3, 3))
    with pytest.raises(OverflowError, match="out of the source"):
        maximum_flow(C, 0, 2, backend="numpy")


# ---------------------------------------------------------------------------
# item 4: the host methods on a graph without arcs
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["dinic", "edmonds_karp", "push_relabel"])
@pytest.mark.parametrize("C", [sp.csr_matrix((3, 3), dtype=np.int32),
                               sp.csr_matrix(([4], [0], [0, 0, 1, 1]), shape=(3, 3), dtype=np.int32)],
                         ids=["empty", "no-source-arc"])
def test_item4_no_arc_gives_zero(method, C):
    res = maximum_flow(C, 0, 2, method=method, backend="numpy")
    assert int(res.flow_value) == 0
    assert res.flow.shape == (3, 3) and res.flow.count_nonzero() == 0
    assert res.source_side.tolist() == [True, True, False] or res.source_side[0] and not res.source_side[2]
    check_flow(C, 0, 2, res.flow, 0)


# ---------------------------------------------------------------------------
# items 5 and 6: accessors and results are the caller's, not the solver's
# ---------------------------------------------------------------------------

def test_item5_matching_solver_graph_is_a_copy():
    A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]]))
    solver = MatchingSolver(A, backend="numpy")
    G = solver.graph()
    G.indices[:] = 0
    G.indptr[:] = 0
    solver.add_edges([1], [2])
    res = solver.solve()
    B = A.tolil()
    B[1, 2] = 1
    check_matching(B.tocsr(), res.col_to_row, expected_size=3)
    assert (solver.graph() != sp.csr_matrix(B)).nnz == 0


def test_item5_max_flow_solver_capacities_are_a_copy():
    C = sp.csr_matrix(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]), dtype=np.int64)
    solver = MaxFlowSolver(C, 0, 2, backend="numpy")
    K = solver.capacities()
    K.data[:] = 0
    K.indices[:] = 0
    assert int(solver.solve().flow_value) == 4
    assert (solver.capacities() != C).nnz == 0
    solver.update_capacities([1], [2], [5])
    res = solver.solve()
    C2 = C.tolil()
    C2[1, 2] = 5
    check_flow(C2.tocsr(), 0, 2, res.flow, 5)


def test_item5_solvers_do_not_follow_later_changes_of_the_input():
    C = sp.csr_matrix(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]), dtype=np.int64)
    solver = MaxFlowSolver(C, 0, 2, backend="numpy")
    A = sp.csr_matrix(np.array([[1, 1], [1, 0]]))
    msolver = MatchingSolver(A, backend="numpy")
    C.indices[:] = 0
    C.data[:] = 0
    A.indices[:] = 1
    assert int(solver.solve().flow_value) == 4
    assert msolver.solve().size == 2


def test_item6_cached_matching_result_is_new_arrays():
    A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]]))
    solver = MatchingSolver(A, backend="numpy")
    r1 = solver.solve()
    r1.col_to_row[:] = -1
    r1.row_to_col[:] = -1
    r2 = solver.solve()
    assert r2.stats["mode"] == "cached" and r2.size == 3
    check_matching(A, r2.col_to_row, expected_size=3)
    check_matching(A, r2.row_to_col, perm_type="column", expected_size=3)
    check_matching(A, solver.matching("row"), expected_size=3)
    assert r2.col_to_row is not solver.solve().col_to_row


def test_item6_cached_flow_result_is_new_arrays():
    C = sp.csr_matrix(np.array([[0, 3, 2], [0, 0, 2], [0, 0, 0]]), dtype=np.int64)
    solver = MaxFlowSolver(C, 0, 2, backend="numpy")
    r1 = solver.solve()
    r1.flow.data[:] = 0
    r1.flow.indices[:] = 0
    r1.source_side[:] = False
    r1.stats["mode"] = "spoiled"
    r2 = solver.solve()
    assert r2.stats["mode"] == "cached"
    check_flow(C, 0, 2, r2.flow, r2.flow_value)
    assert r2.source_side.tolist() == [True, True, False]
    solver.update_capacities([0], [1], [0])
    r3 = solver.solve()
    assert r3.stats["mode"] != "cached" and int(r3.flow_value) == 2


# ---------------------------------------------------------------------------
# item 7: method="flow" checks `initial`
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("initial, message", [
    ([1, 1, -1], "row 1 is matched more than once"),
    ([0, 1], "must have length 3"),
    ([5, -1, -1], "not -1 or a row index"),
    ([2, -1, -1], r"\(2, 0\) is not a stored entry"),
])
def test_item7_flow_method_rejects_a_bad_initial(initial, message):
    A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]]))
    with pytest.raises(ValueError, match=message):
        maximum_bipartite_matching(A, method="flow", initial=initial, backend="numpy")


def test_item7_flow_method_accepts_a_good_initial():
    A = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]]))
    perm = maximum_bipartite_matching(A, method="flow", initial=[1, -1, -1], backend="numpy")
    check_matching(A, perm, expected_size=3)


# ---------------------------------------------------------------------------
# item 8: tuple shapes are integers
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape, error, message", [
    ((30.5, 25), TypeError, "pair of integers"),
    ((30.0, 25), TypeError, "float 30.0 is not an integer"),
    ((True, 25), TypeError, "not an integer"),
    (("30", 25), TypeError, "not an integer"),
    ((30,), ValueError, "pair of integers"),
    ((30, 25, 1), ValueError, "pair of integers"),
    (30, TypeError, "pair of integers"),
    ((-1, 25), ValueError, "non-negative"),
    ((2, 2**62), ValueError, "too large"),
])
def test_item8_bad_tuple_shapes(shape, error, message):
    tup = (np.zeros(31, dtype=np.int64), np.zeros(0, dtype=np.int64), shape)
    with pytest.raises(error, match=message):
        maximum_bipartite_matching(tup, backend="numpy")


def test_item8_integer_shapes_of_any_kind():
    tup = (np.zeros(31, dtype=np.int64), np.zeros(0, dtype=np.int64), (np.int64(30), np.uint8(25)))
    assert maximum_bipartite_matching(tup, backend="numpy").shape == (25,)


# ---------------------------------------------------------------------------
# item 9: uint64 ids beyond int64 never wrap to -1
# ---------------------------------------------------------------------------

BIG = np.array([2**64 - 1], dtype=np.uint64)


def test_item9_uint64_initial():
    A = sp.csr_matrix(np.ones((3, 3)))
    initial = np.array([2**64 - 1, 0, 1], dtype=np.uint64)
    for method in ("gpr", "flow"):
        with pytest.raises(ValueError, match="initial: value 18446744073709551615 is out of range"):
            maximum_bipartite_matching(A, method=method, initial=initial, backend="numpy")
    ok = np.array([2, 0, 1], dtype=np.uint64)
    check_matching(A, maximum_bipartite_matching(A, initial=ok, backend="numpy"), expected_size=3)


def test_item9_uint64_matching_in_check_matching():
    A = sp.csr_matrix(np.ones((3, 3)))
    with pytest.raises(AssertionError, match=r"matching\[0\] = 18446744073709551615 is out of range"):
        check_matching(A, np.array([2**64 - 1, 0, 1], dtype=np.uint64))


def test_item9_uint64_batches():
    solver = MatchingSolver(sp.csr_matrix(np.eye(3)), backend="numpy")
    for call in (solver.add_edges, solver.remove_edges):
        with pytest.raises(ValueError, match="rows: value 18446744073709551615 is out of range"):
            call(BIG, np.array([0]))
    assert solver.solve().size == 3
    fsolver = MaxFlowSolver(sp.csr_matrix(np.array([[0, 3], [0, 0]])), 0, 1, backend="numpy")
    with pytest.raises(ValueError, match="new_capacities: value 18446744073709551615 is out of range"):
        fsolver.update_capacities([0], [1], BIG)
    with pytest.raises(ValueError, match="cols: value 18446744073709551615"):
        fsolver.update_capacities([0], BIG, [1])
    assert int(fsolver.solve().flow_value) == 3


# ---------------------------------------------------------------------------
# item 10: a claimed value is compared exactly
# ---------------------------------------------------------------------------

def test_item10_check_flow_rejects_a_fractional_value():
    C = sp.csr_matrix(np.array([[0, 3], [0, 0]]))
    res = maximum_flow(C, 0, 1, backend="numpy")
    for claimed in (3.9, 2.5, np.float64(3.1), float("nan")):
        with pytest.raises(AssertionError, match="flow value is 3 .* was claimed"):
            check_flow(C, 0, 1, res.flow, claimed)
    for claimed in (3, 3.0, np.int64(3), np.float32(3.0), np.array(3)):
        assert check_flow(C, 0, 1, res.flow, claimed).value == 3
    with pytest.raises(TypeError, match="value must be a number"):
        check_flow(C, 0, 1, res.flow, "3")


def test_item10_check_matching_expected_size_is_exact():
    A = sp.csr_matrix(np.eye(3))
    with pytest.raises(AssertionError, match="expected size is 2.9"):
        check_matching(A, np.arange(3), expected_size=2.9)
    assert check_matching(A, np.arange(3), expected_size=3.0).size == 3


def test_item10_check_flow_is_exact_near_int64_limits():
    # anti-parallel arcs of 2**63 - 1: capacity - flow and flow + flow.T
    # would wrap in int64; the flow of value 2**63 - 1 is still proved maximum
    C = sp.csr_matrix(np.array([[0, I64, 0], [I64, 0, I64], [0, I64, 0]], dtype=np.int64))
    res = maximum_flow(C, 0, 2, backend="numpy")
    assert int(res.flow_value) == I64
    cert = check_flow(C, 0, 2, res.flow, I64)
    assert cert.cut_capacity == I64
    F = res.flow.copy()
    F.data[F.data == -I64] = np.iinfo(np.int64).min
    with pytest.raises(AssertionError, match="not antisymmetric|below every capacity"):
        check_flow(C, 0, 2, F)


# ---------------------------------------------------------------------------
# item 11: messages that name the problem
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, error, message", [
    (np.inf, ValueError, "must hold integers, found inf"),
    (-np.inf, ValueError, "must hold integers, found -inf"),
    (np.nan, ValueError, "must hold integers, found nan"),
    (1e20, OverflowError, "value 1e\\+20 does not fit int64"),
])
def test_item11_write_dimacs_max_names_the_bad_capacity(value, error, message):
    C = sp.csr_matrix(np.array([[0, value], [0, 0]]))
    with pytest.raises(error, match=message) as exc:
        write_dimacs_max(io.StringIO(), C, 0, 1)
    assert "9223372036854775808" not in str(exc.value)


@pytest.mark.parametrize("text, message", [
    ("p max 100000000000000000000 1\nn 1 s\nn 2 t\na 1 2 3\n",
     "line 1: number of vertices 100000000000000000000 is too large"),
    ("p max 3 100000000000000000000\nn 1 s\nn 2 t\na 1 2 3\n",
     "line 1: number of arcs 100000000000000000000 is too large"),
    ("p max 1e20 1\nn 1 s\nn 2 t\na 1 2 3\n", "line 1: number of vertices must be an integer, got '1e20'"),
    ("p max 3037000500 1\nn 1 s\nn 2 t\na 1 2 3\n",
     r"line 1: number of vertices 3037000500 is too large \(n \* n must fit int64"),
])
def test_item11_dimacs_problem_line_names_its_line(text, message):
    with pytest.raises(ValueError, match=message):
        read_dimacs_max(io.StringIO(text))


def test_item11_csc_row_index_is_called_a_row_index():
    A = sp.csc_matrix((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), shape=(3, 2))
    with pytest.raises(ValueError, match=r"\(CSC\): row index 7 is out of range for 3 rows"):
        maximum_bipartite_matching(A, backend="numpy")
    B = sp.csc_matrix((np.ones(2), np.array([0, -1]), np.array([0, 1, 2])), shape=(3, 2))
    with pytest.raises(ValueError, match=r"\(CSC\): row indices must be non-negative"):
        maximum_bipartite_matching(B, backend="numpy")
    R = sp.csr_matrix((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), shape=(2, 3))
    with pytest.raises(ValueError, match="column index 7 is out of range for 3 columns"):
        maximum_bipartite_matching(R, backend="numpy")


@pytest.mark.parametrize("degree", ["inf", "nan", "0", "-1"])
def test_item11_demo_degree(degree, capsys):
    assert main(["demo", "--degree", degree, "--backend", "numpy"]) == 2
    err = capsys.readouterr().err
    assert "--degree must be a positive finite number" in err and "[0, inf]" not in err


def test_item11_generators_say_finite():
    with pytest.raises(ValueError, match="degree must be a finite number, got inf"):
        gpumatch.generators.random_bipartite(5, 5, float("inf"))


# ---------------------------------------------------------------------------
# item 12: submodules are attributes of the package
# ---------------------------------------------------------------------------

def test_item12_submodules_reachable_after_import_gpumatch(tmp_path):
    out = _python("""
        import gpumatch
        print(gpumatch.testing.check_flow.__name__, gpumatch.io.read_dimacs_max.__name__,
              gpumatch.generators.genrmf.__name__, gpumatch.csr.csr_from_keys.__name__)
        print("testing" in dir(gpumatch))
        try:
            gpumatch.no_such_thing
        except AttributeError as exc:
            print(exc)
    """, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["check_flow read_dimacs_max genrmf csr_from_keys", "True",
                                       "module 'gpumatch' has no attribute 'no_such_thing'"]


# ---------------------------------------------------------------------------
# issue 62, defect 8: layout="bcsr" refuses capacities of 2**62 or more on every backend
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("bk", ["numpy", "numba", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_issue62_bcsr_capacity_limit_on_every_backend(bk):
    """The documented OverflowError (the Numba engine, which runs its own
    layout, used to solve); a big self-loop carries nothing and does not
    count, and reverse_csr solves the same network exactly."""
    if bk == "numba" and not gpumatch._backend.numba_available():
        pytest.skip("Numba does not import")
    C = sp.csr_matrix(np.array([[0, 2**62, 0], [0, 0, 5], [0, 0, 0]], dtype=np.int64))
    for call in (lambda: maximum_flow(C, 0, 2, backend=bk, layout="bcsr"),
                 lambda: minimum_cut(C, 0, 2, backend=bk, layout="bcsr"),
                 lambda: gpumatch.batch.maximum_flow([(C, 0, 2)], backend=bk, layout="bcsr")):
        with pytest.raises(OverflowError, match=r"capacities of 2\*\*62 or more overflow layout='bcsr'"):
            call()
    assert int(maximum_flow(C, 0, 2, backend=bk).flow_value) == 5
    below = sp.csr_matrix(np.array([[0, 2**62 - 1, 0], [2**62 - 1, 0, 5], [0, 0, 0]], dtype=np.int64))
    res = maximum_flow(below, 0, 2, backend=bk, layout="bcsr")
    check_flow(below, 0, 2, res.flow, 5)
    loop = sp.csr_matrix(np.array([[0, 7, 0], [0, I64, 5], [0, 0, 0]], dtype=np.int64))
    assert int(maximum_flow(loop, 0, 2, backend=bk, layout="bcsr").flow_value) == 5


# ---------------------------------------------------------------------------
# issue 64: weighted matching (gpumatch.lap, gpumatch.batch, check_assignment)
# ---------------------------------------------------------------------------

def _lap_calls(maximize=False):
    """Every entry point that takes one cost matrix, dense or sparse, as a function of it."""
    from gpumatch import assignment, linear_sum_assignment, min_weight_full_bipartite_matching

    return {
        "linear_sum_assignment": lambda C: linear_sum_assignment(C, maximize),
        "assignment": lambda C: assignment(C, maximize),
        "assignment_partial": lambda C: assignment(C, maximize, full=False),
        "min_weight_full_bipartite_matching": lambda C: min_weight_full_bipartite_matching(sp.csr_matrix(C), maximize),
        "batch.linear_sum_assignment": lambda C: gpumatch.batch.linear_sum_assignment(np.asarray(C)[None], maximize),
        "batch.linear_sum_assignment_list": lambda C: gpumatch.batch.linear_sum_assignment([C], maximize),
        "batch.min_weight_full_bipartite_matching":
            lambda C: gpumatch.batch.min_weight_full_bipartite_matching([sp.csr_matrix(C)], maximize),
    }


LAP_CALLS = sorted(_lap_calls())


@pytest.mark.parametrize("call", LAP_CALLS)
@pytest.mark.parametrize("bad, maximize", [(np.nan, False), (np.nan, True), (-np.inf, False), (np.inf, True)])
def test_issue64_invalid_entries_are_named(call, bad, maximize):
    pytest.importorskip("numba")
    C = np.array([[1.0, 2.0, 3.0], [4.0, bad, 6.0]])
    with pytest.raises(ValueError, match=r"contains invalid numeric entries: (nan|-?inf) at \(1, 1\)") as info:
        _lap_calls(maximize)[call](C)
    assert "np.float64" not in str(info.value)          # a plain number, not NumPy's repr
    if call.startswith("batch."):
        assert str(info.value).startswith("problem 0: ")


@pytest.mark.parametrize("call", LAP_CALLS)
@pytest.mark.parametrize("dtype", [object, complex, "U1", "datetime64[s]"])
def test_issue64_entries_that_are_not_real_numbers(call, dtype):
    pytest.importorskip("numba")
    if call.startswith(("min_weight", "batch.min_weight")) and np.dtype(dtype).kind in "OUM":
        pytest.skip("scipy.sparse holds no such dtype")
    C = np.array([[1, 2], [2, 1]]).astype(dtype)
    with pytest.raises(TypeError, match="must hold real numbers"):
        _lap_calls()[call](C)


@pytest.mark.parametrize("call", ["linear_sum_assignment", "assignment", "batch.linear_sum_assignment_list"])
@pytest.mark.parametrize("shape", [(3,), (2, 2, 2), ()])
def test_issue64_wrong_dimensions(call, shape):
    pytest.importorskip("numba")
    with pytest.raises(ValueError, match=rf"expected a matrix \(2-D array\), got a {len(shape)} array"):
        _lap_calls()[call](np.ones(shape))


def test_issue64_wrong_containers():
    pytest.importorskip("numba")
    from gpumatch import linear_sum_assignment, min_weight_full_bipartite_matching

    with pytest.raises(ValueError, match="cost_matrix must be a dense array"):
        linear_sum_assignment(sp.csr_matrix(np.eye(2)))
    with pytest.raises(TypeError, match="biadjacency must be sparse"):
        min_weight_full_bipartite_matching(np.eye(2))
    with pytest.raises(ValueError, match=r"biadjacency: shape must be non-negative, got \(1, -2\)"):
        min_weight_full_bipartite_matching((np.array([0, 1]), np.array([0]), (1, -2)))
    with pytest.raises(ValueError, match="column index 7 is out of range for 3 columns"):
        min_weight_full_bipartite_matching(sp.csr_matrix((np.ones(1), np.array([7]), np.array([0, 1])), shape=(1, 3)))
    with pytest.raises(ValueError, match=r"expected a stack of matrices \(a 3-D array"):
        gpumatch.batch.linear_sum_assignment(np.eye(3))
    with pytest.raises(TypeError, match="sequence of problems"):
        gpumatch.batch.min_weight_full_bipartite_matching(sp.csr_matrix(np.eye(2)))
    with pytest.raises(ValueError, match="inhomogeneous"):          # NumPy's own words, as scipy
        linear_sum_assignment([[1, 2], [3]])
    with pytest.raises(ValueError, match="full must be True or False"):
        gpumatch.assignment(np.eye(2), full="yes")


@pytest.mark.parametrize("call", LAP_CALLS)
def test_issue64_integers_beyond_the_exact_range(call):
    pytest.importorskip("numba")
    big = np.array([[2 ** 64 - 1, 1], [1, 2]], dtype=np.uint64)
    with pytest.raises(OverflowError, match="18446744073709551615 does not fit int64"):
        _lap_calls()[call](big)
    huge = np.array([[2 ** 61, 1], [1, 2 ** 61]], dtype=np.int64)
    with pytest.raises(OverflowError, match="too large to solve exactly in int64"):
        _lap_calls()[call](huge)


@pytest.mark.parametrize("call", LAP_CALLS)
def test_issue64_no_assignment_names_its_problem(call):
    pytest.importorskip("numba")
    C = np.array([[np.inf, np.inf, np.inf], [1.0, 2.0, 3.0]])           # row 0 has no allowed pair
    if call == "assignment_partial":
        assert _lap_calls()[call](C).size == 1
        return
    with pytest.raises(ValueError, match="cost matrix is infeasible|no full matching exists"):
        _lap_calls()[call](C)


@pytest.mark.parametrize("call", LAP_CALLS)
def test_issue64_inputs_stay_and_read_only_works(call):
    pytest.importorskip("numba")
    C = np.array([[4.0, 1.0, 3.0], [2.0, 0.5, 5.0], [3.0, 2.0, 2.0]])
    C.setflags(write=False)
    saved = C.copy()
    _lap_calls()[call](C)
    _lap_calls(True)[call](C)
    assert np.array_equal(C, saved)


def test_issue64_check_assignment_rejects_nan():
    A = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="u must hold finite numbers, found nan at row 0"):
        gpumatch.testing.check_assignment(A, [0, 1], [0, 1], np.array([np.nan, 0.0]), np.zeros(2))
    with pytest.raises(ValueError, match="v must hold finite numbers, found inf at column 1"):
        gpumatch.testing.check_assignment(A, [0, 1], [0, 1], np.zeros(2), np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="expected_cost must be finite"):
        gpumatch.testing.check_assignment(A, [0, 1], [0, 1], expected_cost=float("nan"))
    with pytest.raises(TypeError, match="expected_cost must be a number"):
        gpumatch.testing.check_assignment(A, [0, 1], [0, 1], expected_cost="2")

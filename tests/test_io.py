"""Tests of gpumatch.io: round trips, malformed DIMACS files, the corpus."""

from __future__ import annotations

import gzip
import io
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

from gpumatch import generators
from gpumatch.io import (
    read_dimacs_max,
    read_graph,
    read_matrix_market,
    write_dimacs_max,
    write_matrix_market,
)
from gpumatch.testing import check_flow

from _corpus import manifest_entry  # tests/ is on sys.path (rootdir conftest)


def same_matrix(A, B):
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    A.sort_indices()
    B.sort_indices()
    return (A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))


# ---------------------------------------------------------------------------
# Matrix Market
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".mtx", ".mtx.gz"])
def test_matrix_market_round_trip_with_explicit_zeros(tmp_path, suffix):
    A = generators.random_bipartite(40, 30, 3.0, seed=2)
    A.data = np.arange(A.nnz, dtype=np.float64) % 3  # a third are stored zeros
    path = tmp_path / ("a" + suffix)
    write_matrix_market(path, A)
    assert path.exists() and not (tmp_path / ("a" + suffix + ".mtx")).exists()
    if suffix.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
        with gzip.open(path, "rb") as fh:
            assert fh.read(14) == b"%%MatrixMarket"
    B = read_matrix_market(path)
    assert isinstance(B, sp.csr_matrix)
    assert B.nnz == A.nnz  # stored zeros kept
    assert same_matrix(A, B)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_matrix_market_values_and_shapes(tmp_path, dtype):
    A = sp.csr_matrix(np.array([[0, 2, 0, 0], [1, 0, 0, 3]], dtype=dtype))
    write_matrix_market(tmp_path / "b.mtx", A, comment="two rows")
    B = read_matrix_market(str(tmp_path / "b.mtx"))
    assert B.shape == (2, 4) and same_matrix(A, B)
    assert "two rows" in (tmp_path / "b.mtx").read_text()


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.bool_])
def test_matrix_market_integer_dtypes_write_the_integer_field(tmp_path, dtype):
    data = np.array([0, 2, 1]).astype(dtype)  # the first is a stored zero
    A = sp.csr_matrix((data, ([0, 0, 1], [0, 1, 0])), shape=(2, 3))
    path = tmp_path / "i.mtx"
    write_matrix_market(path, A)
    assert path.read_text().splitlines()[0].split() == ["%%MatrixMarket", "matrix", "coordinate", "integer",
                                                         "general"]
    B = read_matrix_market(path)
    assert B.dtype.kind == "i"
    assert B.nnz == A.nnz and same_matrix(A.astype(np.int64), B)


def test_matrix_market_unsigned_beyond_int64(tmp_path):
    A = sp.csr_matrix(np.array([[np.iinfo(np.uint64).max]], dtype=np.uint64))
    with pytest.raises(OverflowError, match="Matrix Market integer"):
        write_matrix_market(tmp_path / "u.mtx", A)
    write_matrix_market(tmp_path / "r.mtx", A, field="real")  # an explicit field is the caller's choice
    assert "real" in (tmp_path / "r.mtx").read_text().splitlines()[0]


def test_matrix_market_generated_network_solves_as_written(tmp_path):
    # a generated flow network written as Matrix Market reads back with integer
    # capacities, so maximum_flow accepts it and finds the same value
    C, s, t = generators.washington_rlg(4, 6, 50, seed=3)
    write_matrix_market(tmp_path / "w.mtx", C)
    D = read_matrix_market(tmp_path / "w.mtx")
    assert D.dtype.kind == "i" and same_matrix(C, D)
    from gpumatch import maximum_flow as gm_maximum_flow

    res = gm_maximum_flow(D, s, t, backend="numpy")
    assert int(res.flow_value) == int(maximum_flow(C.astype(np.int32), s, t).flow_value)


def test_matrix_market_empty(tmp_path):
    A = sp.csr_matrix((3, 5))
    write_matrix_market(tmp_path / "e.mtx", A)
    B = read_matrix_market(tmp_path / "e.mtx")
    assert B.shape == (3, 5) and B.nnz == 0


def test_matrix_market_symmetric_pattern_and_duplicates():
    text = b"""%%MatrixMarket matrix coordinate pattern symmetric
3 3 3
2 1
3 3
3 1
"""
    B = read_matrix_market(io.BytesIO(text))
    assert B.toarray().tolist() == [[0, 1, 1], [1, 0, 0], [1, 0, 1]]
    dup = b"""%%MatrixMarket matrix coordinate integer general
2 2 3
1 2 4
1 2 5
2 1 0
"""
    D = read_matrix_market(io.BytesIO(dup))
    assert D.nnz == 2 and D[0, 1] == 9 and D[1, 0] == 0


def test_matrix_market_file_objects():
    A = sp.csr_matrix(np.array([[1, 0], [0, 2]]))
    buf = io.BytesIO()
    write_matrix_market(buf, A)
    buf.seek(0)
    assert same_matrix(A, read_matrix_market(buf))


I64 = 2**63 - 1
INTEGER_BANNER = b"%%MatrixMarket matrix coordinate integer general\n% a comment\n"


@pytest.mark.parametrize("token", ["1e3", "2.7", "0x10", "3abc", "+5", "5-", "--5", "3-4", "1,5"])
@pytest.mark.parametrize("chunk", [None, 3])
def test_matrix_market_integer_file_rejects_non_integers(token, chunk, monkeypatch):
    """A value that is not a decimal integer in an ``integer`` file is an
    error naming the file, the line and the token (issue 62; scipy's reader
    keeps the leading digits: 1e3 -> 1, 2.7 -> 2, 0x10 -> 0, 3abc -> 3).
    `chunk`: a tiny scan chunk, so that tokens straddle chunk boundaries."""
    import gpumatch.io as gio

    if chunk is not None:
        monkeypatch.setattr(gio, "_SCAN_CHUNK", chunk)
    text = INTEGER_BANNER + b"2 2 2\n1 1 -4\n2 2 " + token.encode() + b"\n"
    for src in (io.BytesIO(text), io.StringIO(text.decode())):
        with pytest.raises(ValueError, match=rf"^<\w+IO>: line 5: an integer file must hold decimal integers, "
                                             rf"got '{re.escape(token)}'$"):
            read_matrix_market(src)


def test_matrix_market_integer_file_check_spares_good_files(tmp_path, monkeypatch):
    """Negative values, blank lines, CRLF line ends, no final newline, a
    dense integer file and a real file with exponents all read as before."""
    import gpumatch.io as gio

    monkeypatch.setattr(gio, "_SCAN_CHUNK", 2)
    text = INTEGER_BANNER + b"2 2 3\r\n1 1 -4\r\n\n2 2 -9223372036854775808\r\n1 2 0"
    assert read_matrix_market(io.BytesIO(text)).toarray().tolist() == [[-4, 0], [0, -2**63]]
    dense = b"%%MatrixMarket matrix array integer general\n2 1\n-1\n7\n"
    assert read_matrix_market(io.BytesIO(dense)).toarray().tolist() == [[-1], [7]]
    real = b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e3\n"
    assert read_matrix_market(io.BytesIO(real)).toarray().tolist() == [[1000.0]]
    path = tmp_path / "bad.mtx.gz"
    path.write_bytes(gzip.compress(INTEGER_BANNER + b"1 1 1\n1 1 2.5\n"))
    with pytest.raises(ValueError, match=r"bad\.mtx\.gz: line 4: .* got '2\.5'$"):
        read_matrix_market(path)


@pytest.mark.parametrize("value", ["9223372036854775808", "-9223372036854775809", "99999999999999999999"])
def test_matrix_market_integer_past_int64_names_the_file(tmp_path, value):
    path = tmp_path / "big.mtx"
    path.write_bytes(INTEGER_BANNER + b"1 1 1\n1 1 " + value.encode() + b"\n")
    with pytest.raises(ValueError, match=r"big\.mtx: .*fit int64"):
        read_matrix_market(path)


@pytest.mark.parametrize("case", ["truncated", "not gzip", "empty"])
def test_matrix_market_bad_gzip_names_the_file(tmp_path, case):
    """A ``.gz`` name on a truncated, plain or empty file: a ValueError
    naming the file (issue 62: EOFError, BadGzipFile)."""
    text = INTEGER_BANNER + b"1 1 1\n1 1 5\n"
    data = {"truncated": gzip.compress(text)[:30], "not gzip": text, "empty": b""}[case]
    path = tmp_path / "m.mtx.gz"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=r"m\.mtx\.gz: "):
        read_matrix_market(path)


@pytest.mark.parametrize("kind", ["path", "gz path", "bytes"])
def test_matrix_market_absurd_entry_count_names_the_file(tmp_path, kind):
    """A size line that declares far more entries than the file can hold is
    a ValueError naming the file (scipy's reader raised MemoryError while
    allocating them, then aborted the process when its reader was freed
    after the file was closed).  In a child process: an abort is a failure,
    not the end of the test run."""
    from conftest import run_in_child

    text = INTEGER_BANNER + b"2 2 99999999999999\n1 1 1\n"
    path = tmp_path / ("m.mtx.gz" if kind == "gz path" else "m.mtx")
    path.write_bytes(gzip.compress(text) if kind == "gz path" else text)
    code = ("import io, sys\nfrom gpumatch.io import read_matrix_market\n"
            "src = sys.argv[1] if sys.argv[2] != 'bytes' else io.BytesIO(open(sys.argv[1], 'rb').read())\n"
            "try:\n    read_matrix_market(src)\nexcept ValueError as exc:\n    print('ValueError:', exc)\n"
            "import gc; gc.collect(); print('alive')\n")
    done = run_in_child(code, str(path), kind.split()[-1], cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the size line declares 99999999999999 entries, more than" in done.stdout
    assert ("<BytesIO>: " if kind == "bytes" else f"{path}: ") in done.stdout and "alive" in done.stdout


def test_matrix_market_skew_symmetric_int64_min_does_not_wrap():
    """-2**63 in a skew-symmetric integer file mirrors to 2**63, past int64
    (scipy's reader wraps it to -2**63): an error naming the file."""
    text = b"%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 -9223372036854775808\n"
    with pytest.raises(ValueError, match=r"<BytesIO>: a skew-symmetric entry of -9223372036854775808 mirrors"):
        read_matrix_market(io.BytesIO(text))
    ok = text.replace(b"-9223372036854775808", b"-9223372036854775807")
    assert read_matrix_market(io.BytesIO(ok)).toarray().tolist() == [[0, I64], [-I64, 0]]


def test_write_matrix_market_rejects_dense(tmp_path):
    with pytest.raises(TypeError, match="sparse"):
        write_matrix_market(tmp_path / "x.mtx", np.eye(2))


# ---------------------------------------------------------------------------
# DIMACS max-flow
# ---------------------------------------------------------------------------

GOOD = """c a small network
c second comment

p max 4 5
n 1 s
n 4 t
a 1 2 3
a 1 3 2
a 2 4 2
a 3 4 3
a 1 2 1
"""


def test_read_dimacs_text_and_binary_streams():
    for stream in (io.StringIO(GOOD), io.BytesIO(GOOD.encode()), io.BytesIO(gzip.compress(GOOD.encode()))):
        C, s, t = read_dimacs_max(stream)
        assert (s, t) == (0, 3)
        assert C.dtype == np.int64 and C.shape == (4, 4)
        assert C.toarray().tolist() == [[0, 4, 2, 0], [0, 0, 0, 2], [0, 0, 0, 3], [0, 0, 0, 0]]
        assert C.has_sorted_indices


@pytest.mark.parametrize("suffix", [".max", ".max.gz"])
def test_dimacs_round_trip(tmp_path, suffix):
    C, s, t = generators.washington_rlg(5, 6, 50, seed=1)
    coo = C.tocoo()
    # add a self-loop (3, 3) and a stored zero capacity (2, 30)
    rows = np.concatenate([coo.row, [3, 2]])
    cols = np.concatenate([coo.col, [3, 30]])
    caps = np.concatenate([coo.data, [7, 0]])
    C = sp.csr_matrix((caps, (rows, cols)), shape=C.shape)
    assert C.nnz == C.count_nonzero() + 1
    path = tmp_path / ("net" + suffix)
    write_dimacs_max(path, C, s, t, comment="round trip\nline two")
    if suffix.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    with (gzip.open(path, "rt") if suffix.endswith(".gz") else open(path)) as fh:
        head = fh.read().splitlines()[:3]
    assert head == ["c round trip", "c line two", f"p max {C.shape[0]} {C.nnz}"]
    C2, s2, t2 = read_dimacs_max(path)
    assert (s2, t2) == (s, t)
    assert same_matrix(C.astype(np.int64), C2)
    C3, s3, t3 = read_graph(path)
    assert same_matrix(C2, C3) and (s3, t3) == (s, t)


def test_dimacs_round_trip_generated_genrmf(tmp_path):
    C, s, t = generators.genrmf(3, 4, 1, 9, seed=2)
    write_dimacs_max(tmp_path / "g.max", C, s, t)
    C2, s2, t2 = read_dimacs_max(tmp_path / "g.max")
    assert same_matrix(C, C2) and (s2, t2) == (s, t)


def test_write_dimacs_sums_duplicates_and_streams():
    C = sp.coo_matrix(([2, 3, 1], ([0, 0, 1], [1, 1, 2])), shape=(3, 3))
    out = io.StringIO()
    write_dimacs_max(out, C, 0, 2)
    assert out.getvalue().splitlines() == ["p max 3 2", "n 1 s", "n 3 t", "a 1 2 5", "a 2 3 1"]
    bout = io.BytesIO()
    write_dimacs_max(bout, C, 0, 2)
    assert bout.getvalue().decode() == out.getvalue()


@pytest.mark.parametrize("args, exc, match", [
    ((sp.csr_matrix((2, 3)), 0, 1), ValueError, "square"),
    ((sp.csr_matrix(np.array([[0, -2], [0, 0]])), 0, 1), ValueError, "non-negative"),
    ((sp.csr_matrix(np.array([[0, 1.5], [0, 0]])), 0, 1), ValueError, "integers"),
    ((sp.csr_matrix((2, 2)), 0, 0), ValueError, "must differ"),
    ((sp.csr_matrix((2, 2)), 0, 2), ValueError, "sink 2 is out of range"),
    ((sp.csr_matrix((2, 2)), "0", 1), TypeError, "source must be an integer"),
])
def test_write_dimacs_argument_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        write_dimacs_max(io.StringIO(), *args)


MALFORMED = [
    # (text, expected message regex)
    ("c only comments\n", "missing 'p max n m' problem line"),
    ("p max 3 0\np max 3 0\nn 1 s\nn 3 t\n", r"line 2: duplicate 'p' line \(the first is line 1\)"),
    ("p max 3\nn 1 s\nn 3 t\n", r"line 1: the problem line needs 4 fields"),
    ("p min 3 0\nn 1 s\nn 3 t\n", r"line 1: problem type must be 'max', got 'min'"),
    ("p max x 0\n", r"line 1: number of vertices must be an integer, got 'x'"),
    ("p max 1 0\n", r"line 1: number of vertices must be at least 2"),
    ("p max 3 -1\n", r"line 1: number of arcs must be non-negative"),
    ("a 1 2 3\np max 3 1\n", r"line 1: arc line before the 'p max' line"),
    ("n 1 s\np max 3 0\n", r"line 1: node line before the 'p max' line"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 2\n", r"line 4: an arc line needs 4 fields 'a u v capacity', got 3"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 2 3 4\n", r"line 4: an arc line needs 4 fields"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 2 x\n", r"line 4: capacity must be an integer, got 'x'"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 2.5 3\n", r"line 4: head vertex must be an integer, got '2.5'"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 2 -4\n", r"line 4: capacity must be non-negative, got -4"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 2 99999999999999999999\n", r"line 4: capacity does not fit in int64"),
    ("p max 3 2\nn 1 s\nn 3 t\na 1 2 1\na 0 2 1\n", r"line 5: tail vertex id 0 is out of range 1..3"),
    ("p max 3 2\nn 1 s\nn 3 t\na 1 2 1\na 1 4 1\n", r"line 5: head vertex id 4 is out of range 1..3"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 99999999999999999999 1\n", r"line 4: head vertex id \d+ is out of range"),
    ("p max 3 0\nn 4 s\nn 3 t\n", r"line 2: vertex id 4 is out of range 1..3"),
    ("p max 3 0\nn 1 x\nn 3 t\n", r"line 2: node designation must be 's' or 't', got 'x'"),
    ("p max 3 0\nn 1\nn 3 t\n", r"line 2: a node line needs 3 fields"),
    ("p max 3 0\nn 1 s\nn 2 s\nn 3 t\n", r"line 3: second source \(the first is on line 2\)"),
    ("p max 3 0\nn 1 s\nn 3 t\nn 2 t\n", r"line 4: second sink \(the first is on line 3\)"),
    ("p max 3 0\nn 3 t\n", r"missing source"),
    ("p max 3 0\nn 1 s\n", r"missing sink"),
    ("p max 3 0\nn 2 s\nn 2 t\n", r"line 3: source and sink are the same vertex 2"),
    ("p max 3 2\nn 1 s\nn 3 t\na 1 2 1\n", r"line 1: the problem line declares 2 arcs but the file has 1 arc lines"),
    ("p max 3 0\nn 1 s\nn 3 t\na 1 2 1\n", r"line 1: the problem line declares 0 arcs but the file has 1"),
    ("p max 3 0\nn 1 s\nx 3 t\n", r"line 3: unknown line type 'x'"),
]


@pytest.mark.parametrize("text, match", MALFORMED, ids=[f"case{i}" for i in range(len(MALFORMED))])
def test_read_dimacs_malformed(text, match):
    with pytest.raises(ValueError, match=match):
        read_dimacs_max(io.StringIO(text))


def test_read_dimacs_malformed_file_on_disk(tmp_path):
    path = tmp_path / "bad.max.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("c header\np max 2 1\nn 1 s\nn 2 t\na 1 3 5\n")
    with pytest.raises(ValueError, match=r"line 5: head vertex id 3 is out of range 1..2"):
        read_dimacs_max(path)


NO_TERMINALS = "c no n lines\np max 4 3\na 1 2 5\na 2 3 4\na 3 4 7\n"


def test_read_dimacs_given_terminals_override_the_file(tmp_path):
    """source=/sink= stand in for the file's n lines, which may then be
    missing (issue 62: "missing source" although the caller gave one)."""
    path = tmp_path / "plain.max"
    path.write_text(NO_TERMINALS)
    C, s, t = read_dimacs_max(path, source=0, sink=2)
    assert (s, t) == (0, 2) and C.toarray().tolist()[1] == [0, 0, 4, 0]
    assert read_dimacs_max(io.StringIO(GOOD), sink=np.int64(1))[1:] == (0, 1)  # the file's source, the given sink
    assert read_dimacs_max(io.StringIO(GOOD), source=3, sink=0)[1:] == (3, 0)
    same = "p max 3 1\nn 1 s\nn 1 t\na 1 2 5\n"  # the file's pair is moot when one is overridden
    assert read_dimacs_max(io.StringIO(same), sink=2)[1:] == (0, 2)
    with pytest.raises(ValueError, match=r"missing sink: no 'n <id> t' line \(and none given\)"):
        read_dimacs_max(path, source=0)
    with pytest.raises(ValueError, match=r"source 4 is out of range 0\.\.3 for a graph of 4 vertices"):
        read_dimacs_max(path, source=4, sink=1)
    with pytest.raises(ValueError, match=r"sink -1 is out of range"):
        read_dimacs_max(path, source=0, sink=-1)
    with pytest.raises(ValueError, match=r"source and sink must differ, both are 0"):
        read_dimacs_max(io.StringIO(GOOD), sink=0)
    with pytest.raises(TypeError, match=r"source must be an integer, got 1\.0"):
        read_dimacs_max(path, source=1.0, sink=2)


@pytest.mark.parametrize("case", ["truncated", "not gzip", "gzip magic, then garbage"])
def test_read_dimacs_bad_gzip_names_the_file(tmp_path, case):
    """As for Matrix Market (issue 62, defect 4's class): a ValueError naming
    the file, not EOFError or BadGzipFile."""
    data = {"truncated": gzip.compress(GOOD.encode())[:25], "not gzip": GOOD.encode(),
            "gzip magic, then garbage": b"\x1f\x8b\x08garbage"}[case]
    path = tmp_path / ("n.max" if case.startswith("gzip magic") else "n.max.gz")
    path.write_bytes(data)
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}: not a complete gzip file"):
        read_dimacs_max(path)
    with pytest.raises(ValueError, match=r"<BytesIO>: not a complete gzip file"):
        read_dimacs_max(io.BytesIO(gzip.compress(GOOD.encode())[:25]))


def test_read_graph_unknown_suffix(tmp_path):
    with pytest.raises(ValueError, match="cannot tell the format"):
        read_graph(tmp_path / "x.txt")


def test_read_graph_mtx(tmp_path):
    A = sp.csr_matrix(np.array([[1, 0, 2]]))
    write_matrix_market(tmp_path / "A.MTX.GZ", A)
    assert same_matrix(A, read_graph(tmp_path / "A.MTX.GZ"))


# ---------------------------------------------------------------------------
# corpus
# ---------------------------------------------------------------------------


def test_corpus_dimacs_gl1(corpus_dir):
    rel = "maxflow/networkx__gl1.max.gz"
    entry = manifest_entry(rel)
    assert entry is not None
    C, s, t = read_graph(corpus_dir / rel)
    assert C.shape == (entry["shape"], entry["shape"])
    assert [s, t] == entry["source_sink"]
    assert C.count_nonzero() == entry["nnz_nonzero"]
    res = maximum_flow(C.astype(np.int32), s, t)
    assert res.flow_value == entry["max_flow"]
    assert check_flow(C, s, t, res.flow, entry["max_flow"]).value == entry["max_flow"]


def test_corpus_dimacs_round_trip(corpus_dir, tmp_path):
    C, s, t = read_dimacs_max(corpus_dir / "maxflow" / "networkx__gl1.max.gz")
    write_dimacs_max(tmp_path / "gl1.max", C, s, t)
    C2, s2, t2 = read_dimacs_max(tmp_path / "gl1.max")
    assert same_matrix(C, C2) and (s, t) == (s2, t2)


def test_corpus_matrix_market_explicit_zeros(corpus_dir):
    rel = "matching/lagraph__test_FW_1000.mtx.gz"
    entry = manifest_entry(rel)
    A = read_graph(corpus_dir / rel)
    assert list(A.shape) == entry["shape"]
    assert A.nnz == entry["nnz_stored"]
    assert A.count_nonzero() == entry["nnz_nonzero"]

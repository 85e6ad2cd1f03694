"""Readers and writers for Matrix Market and DIMACS max-flow files.

* Matrix Market (``.mtx``, ``.mtx.gz``): a sparse matrix whose stored
  entries are the edges of a bipartite graph (rows against columns).
* DIMACS max-flow (``.max``, ``.max.gz``): a capacitated directed graph with
  a source and a sink.  The format, with 1-based vertex ids::

      c a comment line
      p max <n> <m>          # once, before any n or a line
      n <id> s               # the source
      n <id> t               # the sink
      a <u> <v> <capacity>   # m arc lines

Files whose name ends in ``.gz`` are read and written through gzip.  Every
function also accepts an open file object in place of a path.
"""

from __future__ import annotations

import gzip
import io
import math
import operator
import os
import pathlib
import traceback
import zlib

from typing import IO, Union

import numpy as np
import scipy.io
import scipy.sparse as sp

from ._typing import SparseMatrix
from ._validation import as_csr_graph, square_capacity_graph

__all__ = [
    "read_matrix_market",
    "write_matrix_market",
    "read_dimacs_max",
    "write_dimacs_max",
    "read_graph",
]

_INT64_MAX = np.iinfo(np.int64).max
_MAX_VERTICES = math.isqrt(int(_INT64_MAX))   # the coordinate keys u * n + v must fit int64

#: A file name (``.gz``: gzip) or an open file object.
PathOrFile = Union[str, "os.PathLike[str]", IO]


def _is_path(target) -> bool:
    return isinstance(target, (str, os.PathLike))


def _is_gzip(target) -> bool:
    return str(os.fspath(target)).lower().endswith(".gz")


def _open_binary(path, mode):
    """Open `path` in binary `mode` ("rb" or "wb"), through gzip for ``.gz``."""
    if _is_gzip(path):
        return gzip.open(path, mode)
    return open(path, mode)


def _index_dtype(n, nnz):
    return np.int32 if max(n, nnz) < np.iinfo(np.int32).max else np.int64


# ---------------------------------------------------------------------------
# Matrix Market
# ---------------------------------------------------------------------------


def _mmread(source):
    """scipy.io.mmread returning a sparse array where scipy can (no spmatrix deprecation warning)."""
    try:
        return scipy.io.mmread(source, spmatrix=False)
    except TypeError:  # scipy without the spmatrix keyword
        return scipy.io.mmread(source)


def _source_name(source) -> str:
    if _is_path(source):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else f"<{type(source).__name__}>"


def _banner_ok(first_line) -> bool:
    """Whether a first line opens a Matrix Market file as scipy's reader
    sees it: its first word is ``%%MatrixMarket`` (or ``%MatrixMarket``)."""
    if isinstance(first_line, bytes):
        first_line = first_line.decode("latin-1")
    words = first_line.split()
    return bool(words) and words[0] in ("%%MatrixMarket", "%MatrixMarket")


def _checked_stream(fh, name):
    """`fh` positioned where it was, after its first line was found to be a
    Matrix Market banner (a stream that cannot seek back is read into memory
    first); ValueError naming `name` otherwise.

    scipy's reader aborts the whole process (a C++ ``terminate``) on a file
    object without a banner, instead of raising: it must never see one.
    """
    seekable = False
    try:
        seekable = fh.seekable()
    except Exception:
        pass
    if not seekable:
        data = fh.read()
        fh = io.BytesIO(data.encode("utf-8") if isinstance(data, str) else data)
    pos = fh.tell()
    first = fh.readline(4096)
    fh.seek(pos)
    if not _banner_ok(first):
        raise ValueError(f"{name}: not a Matrix Market file (line 1 does not start with the "
                         "'%%MatrixMarket' banner)")
    return fh


#: Bytes an ``integer`` Matrix Market body may hold besides digits and '-'.
_SPACE = b" \t\r\n"
_INT_BYTES = b"0123456789-" + _SPACE
_SCAN_CHUNK = 1 << 24


def _banner_field(first_line) -> str:
    """The field word of a Matrix Market banner (``integer``, ``real``, ...), lower case."""
    if isinstance(first_line, bytes):
        first_line = first_line.decode("latin-1")
    words = first_line.split()
    return words[3].lower() if len(words) > 3 else ""


#: Deflate expands at most about 1032 times: a bound on the text of a ``.gz`` file.
_DEFLATE_RATIO = 1032


def _check_declared_size(fh, name, limit):
    """The header ``(format, field, symmetry)`` of the Matrix Market stream
    `fh` (left where it was), after checking that the entries its size line
    declares fit in the file: ValueError naming `name` otherwise (scipy's
    reader would try to allocate them all, a MemoryError for an absurd
    count).  `limit`: ``(most bytes the file can hold, its description)``, or
    None when unknown (an open file object that is not seekable to its end
    is checked against what is left in it).  None when the header does not
    parse here (scipy's reader then says what is wrong).
    """
    pos = fh.tell()
    try:
        words = fh.readline().split()
        line = fh.readline()
        while line[:1] in (b"%", "%"):
            line = fh.readline()
        size_line = line.split()
        body_pos = fh.tell()
        if limit is None and not isinstance(fh, gzip.GzipFile):  # (its end: a whole decompression)
            try:
                end = fh.seek(0, io.SEEK_END)
                limit = (end - body_pos, f"the rest of the file ({end - body_pos} bytes)")
            except (OSError, ValueError):
                limit = None
            body_limit = None if limit is None else limit[0]
        else:
            body_limit = limit[0]
    finally:
        fh.seek(pos)
    words = [w.decode("latin-1") if isinstance(w, bytes) else w for w in words]
    if len(words) < 5:
        return None
    fmt, field, symmetry = (w.lower() for w in words[2:5])
    try:
        dims = [int(w) for w in size_line]
    except ValueError:
        return None
    if fmt == "coordinate" and len(dims) == 3:
        count = dims[2]
    elif fmt == "array" and len(dims) == 2:
        m = dims[0]
        count = {"symmetric": m * (m + 1) // 2, "hermitian": m * (m + 1) // 2,
                 "skew-symmetric": m * (m - 1) // 2}.get(symmetry, dims[0] * dims[1])
    else:
        return fmt, field, symmetry
    # a loose bound (two bytes an entry, a digit and a line end): it catches the counts
    # that cannot be, and leaves a short or malformed line to scipy's reader, which names it
    if body_limit is not None and count > 0 and 2 * count - 1 > body_limit:
        raise ValueError(f"{name}: the size line declares {count} entries, more than {limit[1]} can hold")
    return fmt, field, symmetry


def _check_integer_body(fh, name):
    """ValueError naming `name` and the line when the body of an ``integer``
    file holds a token that is not a plain decimal integer (``1e3``, ``2.7``,
    ``0x10``, ``3abc``, ``5-``): scipy's reader takes the digits before such
    a token's first other character and drops the rest.  `fh` (seekable,
    binary or text) is left where it was.

    The scan is C-speed passes over chunks of the file as they are read
    (``bytes.translate`` drops the allowed bytes; NumPy checks the minus
    signs of the chunks that have one), so a big file costs little beside
    the parse; lines are only counted to name a bad one.
    """
    pos = fh.tell()
    text = isinstance(fh.read(0), str)

    def read(size=-1):
        data = fh.read(size)
        return data.encode("utf-8") if text else data

    def readline():
        data = fh.readline()
        return data.encode("utf-8") if text else data

    banner = readline()
    if _banner_field(banner) != "integer":
        fh.seek(pos)
        return
    offset = len(banner)
    line = readline()
    while line[:1] == b"%":  # header comments, before the size line
        offset += len(line)
        line = readline()
    # from the size line on, every token is -?[0-9]+
    prev = b"\n"  # the byte before the chunk
    minus_last = False  # the previous chunk ended with '-': this one must start with a digit
    chunk = line
    while True:
        if minus_last and not chunk[:1].isdigit():
            bad = offset - 1
            break
        bad = _first_bad_integer_byte(chunk, prev)
        if bad is not None:
            bad += offset
            break
        if chunk:
            offset += len(chunk)
            prev = chunk[-1:]
            minus_last = prev == b"-"
        else:
            break
        chunk = read(_SCAN_CHUNK)
    if bad is not None:
        fh.seek(pos)
        _raise_bad_integer(read, bad, name)
    fh.seek(pos)


def _first_bad_integer_byte(chunk: bytes, prev: bytes):
    """Offset of the first byte of `chunk` that is not a digit, '-' or
    whitespace, or a '-' that does not start a token (`prev` is the byte
    before the chunk) or is followed by a non-digit; None if there is none.
    A '-' that ends the chunk is left to the caller."""
    rest = chunk.translate(None, _INT_BYTES)
    first = chunk.find(rest[:1]) if rest else None
    if b"-" in chunk:
        a = np.frombuffer(chunk, dtype=np.uint8)
        minus = np.flatnonzero(a == ord("-"))
        before = a[np.maximum(minus - 1, 0)]
        if minus[0] == 0:
            before[0] = prev[0]
        after = a[np.minimum(minus + 1, a.shape[0] - 1)]
        if minus[-1] == a.shape[0] - 1:
            after[-1] = ord("0")  # (the next chunk's first byte decides)
        ok = np.isin(before, np.frombuffer(_SPACE, dtype=np.uint8)) & (after >= ord("0")) & (after <= ord("9"))
        if not ok.all():
            k = int(minus[np.argmin(ok)])
            first = k if first is None else min(first, k)
    return first


def _raise_bad_integer(read, bad, name):
    """The ValueError for the bad byte at offset `bad` of the stream that
    `read` reads from its start, naming its line and quoting its
    whitespace-separated token."""
    lines, consumed, tail = 1, 0, b""
    while True:
        data = read(_SCAN_CHUNK)
        if not data or consumed + len(data) > bad:
            break
        lines += data.count(b"\n")
        cut = data.rfind(b"\n")
        tail = data[cut + 1:] if cut >= 0 else tail + data
        consumed += len(data)
    buf = tail + data
    k = bad - consumed + len(tail)
    while b"\n" not in buf[k:]:
        more = read(_SCAN_CHUNK)
        if not more:
            break
        buf += more
    start = buf.rfind(b"\n", 0, k) + 1
    end = buf.find(b"\n", k)
    end = len(buf) if end < 0 else end
    before = buf[start:k].split()
    tok_start = k if not before or buf[k - 1:k].isspace() else buf.rfind(before[-1], start, k)
    after = buf[k:end].split()
    token = (buf[tok_start:k] + (after[0] if after else b"")).decode("utf-8", errors="replace")
    at = lines + buf.count(b"\n", 0, start)
    raise ValueError(f"{name}: line {at}: an integer file must hold decimal integers, got {token!r}")


def read_matrix_market(path: PathOrFile) -> sp.csr_matrix:
    """Read a Matrix Market file into a CSR matrix.

    Parameters
    ----------
    path : str, path-like or file object
        A ``.mtx`` or ``.mtx.gz`` file (gzip is detected by the suffix), or
        an open file object.

    Raises
    ------
    ValueError
        A file that is not Matrix Market (no ``%%MatrixMarket`` banner on
        its first line) or a malformed one, including an ``integer`` file
        with a value that is not a decimal integer (``1e3``, ``2.7``,
        ``0x10``, ``3abc``: scipy's reader would keep the leading digits) or
        that does not fit int64 (also as the mirror of a skew-symmetric
        entry), a size line that declares more entries than the file can
        hold, and a ``.gz`` file that is truncated or not gzip data; the
        message starts with the file's name.

    Returns
    -------
    scipy.sparse.csr_matrix
        The matrix with sorted indices.  Explicit zeros in the file stay
        stored entries (edges, in gpumatch's reading); duplicate entries are
        summed; ``symmetric``, ``skew-symmetric`` and ``hermitian`` files are
        expanded to both triangles.  Pattern files give values of 1.  A dense
        ``array`` file gives the CSR matrix of its nonzero values.

    Examples
    --------
    >>> import io
    >>> from gpumatch.io import read_matrix_market
    >>> text = b'''%%MatrixMarket matrix coordinate integer general
    ... 2 3 3
    ... 1 1 1
    ... 1 3 0
    ... 2 2 5
    ... '''
    >>> A = read_matrix_market(io.BytesIO(text))
    >>> A.shape, A.nnz, A.toarray().tolist()
    ((2, 3), 3, [[1, 0, 0], [0, 5, 0]])
    """
    name = _source_name(path)

    def read(fh, limit):
        fh = _checked_stream(fh, name)
        header = _check_declared_size(fh, name, limit)
        _check_integer_body(fh, name)
        try:
            return _mmread(fh), header
        except BaseException as exc:
            # scipy's reader keeps a C++ object that reads `fh` in the frames of this
            # traceback; freed after `fh` is closed, it aborts the process ("seek of
            # closed file"): free it now
            traceback.clear_frames(exc.__traceback__)
            raise

    try:
        if _is_path(path):
            size = os.path.getsize(path)
            with _open_binary(path, "rb") as fh:
                M, header = read(fh, (size * _DEFLATE_RATIO, f"a .gz file of {size} bytes") if _is_gzip(path)
                                 else (size, f"a file of {size} bytes"))
        else:
            M, header = read(path, None)
    except (ValueError, OverflowError) as exc:  # OverflowError: an integer value past int64
        msg = str(exc)
        if isinstance(exc, OverflowError):
            msg += " (an integer file's values must fit int64)"
        raise ValueError(msg if msg.startswith(name) else f"{name}: {msg}") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"{name}: not a complete gzip file ({type(exc).__name__}: {exc})") from None
    if header and header[2] == "skew-symmetric" and np.dtype(M.dtype).kind == "i" and M.size \
            and (np.asarray(M.data if sp.issparse(M) else M) == np.iinfo(np.int64).min).any():
        raise ValueError(f"{name}: a skew-symmetric entry of -9223372036854775808 mirrors to "
                         "9223372036854775808, which does not fit int64")
    if sp.issparse(M) and np.dtype(M.dtype).kind in "iu":
        # integer duplicates summed exactly: a sum past int64 is an error, not a wrap
        try:
            g = as_csr_graph(M, "numpy", name=name, with_data=True)
        except OverflowError as exc:
            raise ValueError(str(exc)) from None
        return sp.csr_matrix((g.data, g.indices, g.indptr), shape=g.shape)
    if sp.issparse(M):
        A = sp.csr_matrix(M)  # COO -> CSR keeps explicit zeros and sums duplicates
    else:
        A = sp.csr_matrix(np.asarray(M))
    A.sum_duplicates()  # also sorts the indices
    return A


def _read_whole_real(path) -> sp.csr_matrix:
    """A ``real`` Matrix Market file whose values are whole numbers, read
    exactly as int64 (a CSR matrix, duplicates summed exactly).

    float64 cannot tell whether a value of magnitude ``2**53`` or more was
    whole in the file, nor which integer it was (``9223372036854775807``
    reads as ``2**63``), so each value token is parsed as a decimal number
    here and the file is read again with the ``integer`` field.  ValueError
    naming the file and the line for a value that is not a whole number (or
    not finite) or that is beyond int64.  A slow path, for the rare files
    that need it.
    """
    from decimal import Decimal, InvalidOperation

    name = _source_name(path)
    with _open_binary(path, "rb") as fh:
        lines = fh.read().decode("utf-8", errors="replace").splitlines()
    words = lines[0].split() if lines else []
    if len(words) < 5 or words[3].lower() != "real" or words[2].lower() not in ("coordinate", "array"):
        raise ValueError(f"{name}: not a 'real' Matrix Market file")
    words[3] = "integer"
    out = [" ".join(words)]
    k = 1
    while k < len(lines) and (lines[k][:1] == "%" or not lines[k].strip()):
        out.append(lines[k])
        k += 1
    out.append(lines[k] if k < len(lines) else "")  # the size line
    ncols = 3 if words[2].lower() == "coordinate" else 1
    for lineno in range(k + 2, len(lines) + 1):
        f = lines[lineno - 1].split()
        if len(f) != ncols:
            out.append(lines[lineno - 1])  # (blank, or malformed: the reader below says so)
            continue
        try:
            d = Decimal(f[-1])
        except InvalidOperation:
            raise ValueError(f"{name}: line {lineno}: value must be a number, got {f[-1]!r}") from None
        if not d.is_finite() or d != d.to_integral_value():
            raise ValueError(f"{name}: line {lineno}: value {f[-1]} is not a whole number")
        x = int(d)
        if not -_INT64_MAX - 1 <= x <= _INT64_MAX:
            raise ValueError(f"{name}: line {lineno}: value {f[-1]} does not fit int64")
        f[-1] = str(x)
        out.append(" ".join(f))
    A = read_matrix_market(io.BytesIO(("\n".join(out) + "\n").encode()))
    return A.astype(np.int64) if A.dtype != np.int64 else A


def write_matrix_market(path: PathOrFile, A: SparseMatrix, *, comment: str = "", field: str | None = None,
                        symmetry: str | None = "general") -> None:
    """Write a sparse matrix to a Matrix Market file.

    Every stored entry is written, explicit zeros included, so that
    :func:`read_matrix_market` gives back the same pattern and values.

    Parameters
    ----------
    path : str, path-like or file object
        Destination; a name ending in ``.gz`` is gzip-compressed.  No suffix
        is added.
    A : sparse matrix
        The matrix to write (any scipy.sparse format, or cupyx sparse).
    comment : str, optional
        Comment written into the header.
    field : {"real", "integer", "complex", "pattern"}, optional
        Matrix Market field; by default it follows the dtype of `A`:
        ``"integer"`` for integer and boolean dtypes (unsigned values are
        written as signed integers, so they must fit in int64), else what
        scipy picks (``"real"`` for floats).
    symmetry : str, optional
        Matrix Market symmetry; ``"general"`` (the default) writes every
        stored entry as it is.  Pass ``None`` to let scipy detect symmetry.

    Examples
    --------
    >>> import io, scipy.sparse as sp
    >>> from gpumatch.io import read_matrix_market, write_matrix_market
    >>> A = sp.csr_matrix(([1, 0, 2], [0, 1, 1], [0, 2, 3]), shape=(2, 2))
    >>> buf = io.BytesIO()
    >>> write_matrix_market(buf, A)
    >>> _ = buf.seek(0)
    >>> B = read_matrix_market(buf)
    >>> B.nnz, (B != A).nnz
    (3, 0)
    """
    if hasattr(A, "get") and not sp.issparse(A):  # cupyx sparse
        A = A.get()
    if not sp.issparse(A):
        raise TypeError(f"A must be sparse, got {type(A).__name__}; accepted: a scipy.sparse or "
                        "cupyx.scipy.sparse matrix or array")
    M = sp.coo_matrix(A)
    if field is None and (M.dtype.kind in "iub"):
        # integral data as the standard "integer" field, whatever scipy's
        # writer would pick (capacity files must read back as integers)
        field = "integer"
        if M.dtype.kind == "u" and M.nnz and int(M.data.max()) > _INT64_MAX:
            raise OverflowError(f"A holds values above {_INT64_MAX}: they do not fit a Matrix Market integer")
        if M.dtype.kind != "i":
            M = sp.coo_matrix((M.data.astype(np.int64), (M.row, M.col)), shape=M.shape)
    kwargs = {"comment": comment, "field": field}
    if symmetry is not None:
        kwargs["symmetry"] = symmetry
    if _is_path(path):
        with _open_binary(path, "wb") as fh:
            scipy.io.mmwrite(fh, M, **kwargs)
    else:
        scipy.io.mmwrite(path, M, **kwargs)


# ---------------------------------------------------------------------------
# DIMACS max-flow
# ---------------------------------------------------------------------------


def _text_lines(source):
    """Lines of a path or of an open (text or binary) file object; a ``.gz``
    file (or gzip data) that is truncated or not gzip is a ValueError naming
    the file, as :func:`read_matrix_market` says it."""
    try:
        if _is_path(source):
            with _open_binary(source, "rb") as fh:
                raw = fh.read()
        else:
            raw = source.read()
        if isinstance(raw, bytes):
            if raw[:2] == b"\x1f\x8b":  # gzip magic in an open binary stream
                raw = gzip.decompress(raw)
            raw = raw.decode("ascii", errors="replace")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"{_source_name(source)}: not a complete gzip file ({type(exc).__name__}: {exc})") from None
    return raw.splitlines()


def _parse_int(token, lineno, what):
    try:
        return int(token)
    except ValueError:
        raise ValueError(f"line {lineno}: {what} must be an integer, got {token!r}") from None


def _int64_column(values, linenos, what, lo, hi):
    """`values` as int64, raising ValueError naming the first line outside ``lo..hi``."""
    try:
        arr = np.asarray(values, dtype=np.int64)
    except OverflowError:  # a Python int beyond int64: find it the slow way
        k = next(j for j, x in enumerate(values) if not lo <= x <= hi)
        arr = None
    else:
        bad = np.flatnonzero((arr < lo) | (arr > hi))
        k = int(bad[0]) if bad.size else None
    if k is not None:
        x = values[k]
        if what == "capacity":
            problem = "must be non-negative" if x < 0 else "does not fit in int64"
            raise ValueError(f"line {int(linenos[k])}: capacity {problem}, got {x}")
        raise ValueError(f"line {int(linenos[k])}: {what} {x} is out of range {lo}..{hi}")
    return arr


def read_dimacs_max(path: PathOrFile, *, source: int | None = None,
                    sink: int | None = None) -> tuple[sp.csr_matrix, int, int]:
    """Read a DIMACS max-flow problem.

    Parameters
    ----------
    path : str, path-like or file object
        A ``.max`` or ``.max.gz`` file, or an open file object (text or
        binary; gzip data is detected by its magic bytes).
    source, sink : int, optional
        0-based terminals that override the file's ``n <id> s`` and
        ``n <id> t`` lines; a file may then lack the line it overrides.

    Returns
    -------
    capacity : scipy.sparse.csr_matrix of int64, shape (n, n)
        ``capacity[u, v]`` is the total capacity of the arcs ``u -> v``
        (parallel arcs summed; self-loops and zero capacities are kept as
        stored entries).  Vertices are 0-based.
    source, sink : int
        0-based source and sink.

    Raises
    ------
    ValueError
        For a malformed file; the message names the line and the problem:
        a missing, repeated or malformed ``p max`` line, a wrong number of
        fields, a non-integer, a vertex id outside ``1..n``, a negative
        capacity, a missing (and not given) or repeated source or sink, a
        given source or sink outside ``0..n-1``, a source equal to the
        sink, an unknown line type, a number of arc lines different
        from the ``m`` of the ``p`` line, or parallel arcs whose capacities
        sum past int64 (``2**63 - 1``); or a ``.gz`` file (gzip data) that
        is truncated or not gzip, with the file's name.
    TypeError
        A given source or sink that is not an integer.

    Examples
    --------
    >>> import io
    >>> from gpumatch.io import read_dimacs_max
    >>> text = '''c tiny network
    ... p max 3 3
    ... n 1 s
    ... n 3 t
    ... a 1 2 4
    ... a 2 3 2
    ... a 1 2 1
    ... '''
    >>> C, s, t = read_dimacs_max(io.StringIO(text))
    >>> C.toarray().tolist(), s, t
    ([[0, 5, 0], [0, 0, 2], [0, 0, 0]], 0, 2)
    >>> read_dimacs_max(io.StringIO(text), sink=1)[1:]
    (0, 1)
    """
    given = {}
    for what, x in (("source", source), ("sink", sink)):
        if x is not None:
            try:
                given[what] = operator.index(x)
            except TypeError:
                raise TypeError(f"{what} must be an integer, got {x!r}") from None
    C, s, t = _read_dimacs_max(path, "source" in given, "sink" in given)
    n = C.shape[0]
    for what, x in given.items():
        if not 0 <= x < n:
            raise ValueError(f"{what} {x} is out of range 0..{n - 1} for a graph of {n} vertices")
    s, t = given.get("source", s), given.get("sink", t)
    if s == t:
        raise ValueError(f"source and sink must differ, both are {s}")
    return C, s, t


def _read_dimacs_max(path, source_given: bool, sink_given: bool):
    """:func:`read_dimacs_max` without the override: ``(C, s, t)`` with the
    file's 0-based terminals, None for one the caller gives (then its line
    may be missing, and the file's source may equal its sink)."""
    lines = _text_lines(path)
    n = m = None
    p_line = None
    ends = {"s": None, "t": None}  # designation -> (vertex, line number)
    arc_lines, arc_u, arc_v, arc_c = [], [], [], []
    for i, line in enumerate(lines):
        lineno = i + 1
        f = line.split()
        if not f or f[0][0] == "c":  # blank or comment line
            continue
        kind = f[0]
        if kind == "a":
            if p_line is None:
                raise ValueError(f"line {lineno}: arc line before the 'p max' line")
            if len(f) != 4:
                raise ValueError(f"line {lineno}: an arc line needs 4 fields 'a u v capacity', got {len(f)}")
            arc_lines.append(lineno)
            arc_u.append(_parse_int(f[1], lineno, "tail vertex"))
            arc_v.append(_parse_int(f[2], lineno, "head vertex"))
            arc_c.append(_parse_int(f[3], lineno, "capacity"))
        elif kind == "p":
            if p_line is not None:
                raise ValueError(f"line {lineno}: duplicate 'p' line (the first is line {p_line})")
            if len(f) != 4:
                raise ValueError(f"line {lineno}: the problem line needs 4 fields 'p max n m', got {len(f)}")
            if f[1] != "max":
                raise ValueError(f"line {lineno}: problem type must be 'max', got {f[1]!r}")
            n = _parse_int(f[2], lineno, "number of vertices")
            m = _parse_int(f[3], lineno, "number of arcs")
            if n < 2:
                raise ValueError(f"line {lineno}: number of vertices must be at least 2, got {n}")
            if m < 0:
                raise ValueError(f"line {lineno}: number of arcs must be non-negative, got {m}")
            for what, x in (("number of vertices", n), ("number of arcs", m)):
                if x > _INT64_MAX - 1:
                    raise ValueError(f"line {lineno}: {what} {x} is too large (does not fit int64)")
            if n > _MAX_VERTICES:
                raise ValueError(f"line {lineno}: number of vertices {n} is too large (n * n must fit int64, "
                                 f"n <= {_MAX_VERTICES})")
            p_line = lineno
        elif kind == "n":
            if p_line is None:
                raise ValueError(f"line {lineno}: node line before the 'p max' line")
            if len(f) != 3:
                raise ValueError(f"line {lineno}: a node line needs 3 fields 'n id s|t', got {len(f)}")
            vid = _parse_int(f[1], lineno, "vertex id")
            if not 1 <= vid <= n:
                raise ValueError(f"line {lineno}: vertex id {vid} is out of range 1..{n}")
            which = f[2]
            if which not in ends:
                raise ValueError(f"line {lineno}: node designation must be 's' or 't', got {which!r}")
            if ends[which] is not None:
                role = "source" if which == "s" else "sink"
                raise ValueError(f"line {lineno}: second {role} (the first is on line {ends[which][1]})")
            ends[which] = (vid, lineno)
        else:
            raise ValueError(f"line {lineno}: unknown line type {kind!r} (expected 'c', 'p', 'n' or 'a')")

    if p_line is None:
        raise ValueError("missing 'p max n m' problem line")
    if ends["s"] is None and not source_given:
        raise ValueError("missing source: no 'n <id> s' line (and none given)")
    if ends["t"] is None and not sink_given:
        raise ValueError("missing sink: no 'n <id> t' line (and none given)")
    if not (source_given or sink_given) and ends["s"][0] == ends["t"][0]:
        raise ValueError(
            f"line {ends['t'][1]}: source and sink are the same vertex {ends['s'][0]}"
        )
    narcs = len(arc_lines)
    if narcs != m:
        raise ValueError(f"line {p_line}: the problem line declares {m} arcs but the file has {narcs} arc lines")

    linenos = np.asarray(arc_lines, dtype=np.int64)
    u = _int64_column(arc_u, linenos, "tail vertex id", 1, n)
    v = _int64_column(arc_v, linenos, "head vertex id", 1, n)
    cap = _int64_column(arc_c, linenos, "capacity", 0, _INT64_MAX)
    u = u.astype(np.int64) - 1
    v = v.astype(np.int64) - 1
    try:   # parallel arcs summed exactly (a sum past int64 raises, never wraps)
        g = as_csr_graph(sp.coo_matrix((cap, (u, v)), shape=(n, n)), "numpy", name="capacity", with_data=True)
    except OverflowError:
        bad = _overflowing_arcs(u, v, cap)
        lines = linenos[bad]
        shown = ", ".join(str(int(x)) for x in lines[:5]) + (", ..." if lines.size > 5 else "")
        raise ValueError(f"line {int(lines[-1])}: the capacities of the parallel arcs {int(u[bad[0]]) + 1} -> "
                         f"{int(v[bad[0]]) + 1} (lines {shown}) sum to {sum(int(cap[k]) for k in bad)}, "
                         "which does not fit int64") from None
    idt = _index_dtype(n + 1, g.nnz)
    C = sp.csr_matrix((g.data.astype(np.int64), g.indices.astype(idt), g.indptr.astype(idt)), shape=(n, n))
    s = None if source_given or ends["s"] is None else ends["s"][0] - 1
    t = None if sink_given or ends["t"] is None else ends["t"][0] - 1
    return C, s, t


def _overflowing_arcs(u, v, cap):
    """Indices (in file order) of the first group of parallel arcs whose capacities sum past int64."""
    order = np.lexsort((v, u))
    us, vs = u[order], v[order]
    start = np.flatnonzero(np.r_[True, (us[1:] != us[:-1]) | (vs[1:] != vs[:-1])])
    ends = np.r_[start[1:], order.size]
    for a, b in zip(start[ends - start > 1], ends[ends - start > 1]):
        group = np.sort(order[a:b])
        if sum(int(cap[k]) for k in group) > _INT64_MAX:
            return group
    raise AssertionError("no overflowing arcs")  # pragma: no cover - only called after an overflow


def write_dimacs_max(path: PathOrFile, capacity: SparseMatrix, source: int, sink: int,
                     comment: str | None = None) -> None:
    """Write a max-flow problem in DIMACS format.

    Each stored entry of `capacity` (after summing duplicates) becomes one
    arc line, zero capacities and self-loops included, so that
    :func:`read_dimacs_max` gives back the same matrix.

    Parameters
    ----------
    path : str, path-like or file object
        Destination; a name ending in ``.gz`` is gzip-compressed.  A file
        object may be text or binary.
    capacity : sparse matrix
        Square matrix of non-negative integer capacities.
    source, sink : int
        Distinct 0-based vertices (written 1-based).
    comment : str, optional
        Written as ``c`` lines at the top, one per line of `comment`.

    Raises
    ------
    ValueError
        If `capacity` is not square, holds negative or non-integer values,
        or `source`/`sink` is out of range or equal.

    Examples
    --------
    >>> import io, scipy.sparse as sp
    >>> from gpumatch.io import write_dimacs_max
    >>> C = sp.csr_matrix(([4, 2], [1, 2], [0, 1, 2, 2]), shape=(3, 3))
    >>> buf = io.StringIO()
    >>> write_dimacs_max(buf, C, 0, 2, comment="tiny")
    >>> print(buf.getvalue(), end="")
    c tiny
    p max 3 2
    n 1 s
    n 3 t
    a 1 2 4
    a 2 3 2
    """
    g = square_capacity_graph(capacity)
    nv = g.m
    data = g.data
    for what, x in (("source", source), ("sink", sink)):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"{what} must be an integer, got {x!r}")
        if not 0 <= int(x) < nv:
            raise ValueError(f"{what} {int(x)} is out of range for a graph of {nv} vertices")
    if int(source) == int(sink):
        raise ValueError(f"source and sink must differ, both are {int(source)}")

    rows = np.repeat(np.arange(1, nv + 1, dtype=np.int64), np.diff(g.indptr.astype(np.int64)))
    cols = g.indices.astype(np.int64) + 1
    head = []
    if comment:
        head += [f"c {ln}".rstrip() for ln in str(comment).splitlines()]
    head += [f"p max {nv} {data.size}", f"n {int(source) + 1} s", f"n {int(sink) + 1} t"]
    chunks = ["\n".join(head) + "\n"]
    step = 1 << 18
    for lo in range(0, data.size, step):
        hi = min(lo + step, data.size)
        chunks.append(
            "".join(f"a {a} {b} {c}\n" for a, b, c in zip(rows[lo:hi].tolist(), cols[lo:hi].tolist(),
                                                             data[lo:hi].tolist()))
        )
    text = "".join(chunks)
    if _is_path(path):
        with _open_binary(path, "wb") as fh:
            fh.write(text.encode("ascii"))
    elif isinstance(path, io.TextIOBase):
        path.write(text)
    else:
        try:
            path.write(text.encode("ascii"))
        except TypeError:
            path.write(text)


# ---------------------------------------------------------------------------
# dispatch
# ---------------------------------------------------------------------------

_MATRIX_SUFFIXES = (".mtx", ".mtx.gz")
_FLOW_SUFFIXES = (".max", ".max.gz")


def read_graph(path: str | os.PathLike[str]) -> sp.csr_matrix | tuple[sp.csr_matrix, int, int]:
    """Read a graph file, choosing the reader by the file name's suffix.

    Parameters
    ----------
    path : str or path-like
        ``.mtx`` / ``.mtx.gz`` (Matrix Market) or ``.max`` / ``.max.gz``
        (DIMACS max-flow); the suffix is case-insensitive.

    Returns
    -------
    scipy.sparse.csr_matrix or tuple
        The matrix from :func:`read_matrix_market`, or ``(capacity, source,
        sink)`` from :func:`read_dimacs_max`.

    Raises
    ------
    ValueError
        For any other suffix.

    Examples
    --------
    >>> import os, tempfile, scipy.sparse as sp
    >>> from gpumatch.io import read_graph, write_dimacs_max
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = os.path.join(d, "net.max.gz")
    ...     write_dimacs_max(f, sp.csr_matrix([[0, 7], [0, 0]]), 0, 1)
    ...     C, s, t = read_graph(f)
    >>> C.toarray().tolist(), s, t
    ([[0, 7], [0, 0]], 0, 1)
    """
    name = pathlib.Path(os.fspath(path)).name.lower()
    if name.endswith(_MATRIX_SUFFIXES):
        return read_matrix_market(path)
    if name.endswith(_FLOW_SUFFIXES):
        return read_dimacs_max(path)
    raise ValueError(
        f"cannot tell the format of {os.fspath(path)!r}: expected a name ending in "
        f"{', '.join(_MATRIX_SUFFIXES + _FLOW_SUFFIXES)}"
    )

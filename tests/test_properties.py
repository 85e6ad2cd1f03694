"""Property-based tests (issue 45): random inputs in every accepted form, every answer proved.

Inputs are drawn in every format gpumatch accepts (scipy CSR/CSC/COO,
matrix and array, ``(indptr, indices, shape)`` tuples) with duplicates,
unsorted rows, explicit zeros, empty rows and columns, int32 or int64
indices, read-only arrays and values of several dtypes; capacities run up
to the int64 limits.  Every answer is checked by certificate
(:func:`gpumatch.testing.check_matching`, :func:`~gpumatch.testing.check_flow`)
on a reference matrix built from the drawn entries without gpumatch, its
size or value against scipy's own solvers where scipy can compute it (its
flows are int32), and every input is compared byte for byte (and flag for
flag) before and after each call.

The number of cases follows the Hypothesis profile that ``conftest.py``
loads (``GPUMATCH_HYPOTHESIS_PROFILE``: ``ci`` by default, or ``device``):
each test runs its weight times the profile's ``max_examples`` (cheap
tests run more cases).  The CuPy variants carry the ``gpu`` marker.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scipy.sparse.csgraph import maximum_bipartite_matching as sp_matching  # noqa: E402
from scipy.sparse.csgraph import maximum_flow as sp_maximum_flow  # noqa: E402
from scipy.sparse.csgraph import structural_rank as sp_structural_rank  # noqa: E402

import gpumatch  # noqa: E402
from gpumatch import _backend  # noqa: E402
from gpumatch.testing import check_flow, check_matching  # noqa: E402

I64 = int(np.iinfo(np.int64).max)
I32 = int(np.iinfo(np.int32).max)

BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]


def examples(weight):
    """``max_examples`` of a test of this weight under the loaded profile."""
    return max(1, int(weight * settings.default.max_examples))


def host(a):
    return _backend.to_numpy(a)


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------

FORMATS = ("csr", "csc", "coo", "tuple")
VALUE_DTYPES = ("float64", "float32", "int64", "int32", "int8", "uint8", "uint64", "bool")

#: Capacities: small ones, and values near the int64 limits (their sums
#: over duplicates or out of the source can pass 2**63 - 1).
BIG = st.sampled_from((I64, I64 - 1, 2**62, 2**62 + 1, 2**63 // 3, I32, I32 + 1, 2**40))
CAPACITY = st.one_of(st.integers(0, 9), st.integers(0, 9), BIG, st.integers(0, I64))


@st.composite
def entries(draw, square=False, max_dim=9, max_nnz=36):
    """``(shape, rows, cols)``: coordinates in random order with repeats, some rows/columns empty."""
    m = draw(st.integers(2 if square else 0, max_dim))
    n = m if square else draw(st.integers(0, max_dim))
    k = draw(st.integers(0, max_nnz)) if m and n else 0
    rows = np.array(draw(st.lists(st.integers(0, m - 1), min_size=k, max_size=k)) if k else [], dtype=np.int64)
    cols = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)) if k else [], dtype=np.int64)
    dup = draw(st.integers(0, min(k, 6)))   # repeat a few entries on purpose
    rows, cols = np.r_[rows, rows[:dup]], np.r_[cols, cols[:dup]]
    order = np.array(draw(st.permutations(range(rows.shape[0]))), dtype=np.int64)
    return (m, n), rows[order], cols[order]


@st.composite
def layouts(draw, formats=FORMATS):
    """How to store the entries: format, matrix or array, index dtype, read-only, row order."""
    return {"fmt": draw(st.sampled_from(formats)),
            "sparray": draw(st.booleans()),
            "idx": draw(st.sampled_from(("int32", "int64"))),
            "read_only": draw(st.booleans()),
            "sorted": draw(st.booleans())}


@st.composite
def pattern_values(draw, count):
    """Values of a pattern: any dtype, zeros included (explicit zeros are edges)."""
    dtype = draw(st.sampled_from(VALUE_DTYPES))
    if dtype == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=count, max_size=count)), dtype=bool)
    top = 3 if dtype in ("int8", "uint8") else 9
    return np.array(draw(st.lists(st.integers(0, top), min_size=count, max_size=count)), dtype=dtype)


def build(layout, shape, rows, cols, vals):
    """The entries in the drawn layout, exactly (duplicates kept, rows unsorted unless `sorted`)."""
    m, n = shape
    idx = np.dtype(layout["idx"])
    fmt = layout["fmt"]
    if fmt == "coo":
        cls = sp.coo_array if layout["sparray"] else sp.coo_matrix
        A = cls((vals, (rows, cols)), shape=shape)
        A.coords = (rows.astype(idx), cols.astype(idx))
        arrays = [A.data, A.row, A.col]
    else:
        seg, other, count = (rows, cols, m) if fmt in ("csr", "tuple") else (cols, rows, n)
        within = np.arange(seg.shape[0]) if not layout["sorted"] else other
        order = np.lexsort((within, seg))      # segment by segment, in drawn (unsorted) or sorted order
        indptr = np.r_[0, np.cumsum(np.bincount(seg, minlength=count))].astype(idx)
        indices = other[order].astype(idx)
        if fmt == "tuple":
            A = (indptr, indices, shape)
            arrays = [indptr, indices]
        else:
            cls = {("csr", False): sp.csr_matrix, ("csr", True): sp.csr_array,
                   ("csc", False): sp.csc_matrix, ("csc", True): sp.csc_array}[fmt, layout["sparray"]]
            A = cls((vals[order], indices, indptr), shape=shape)
            A.indices, A.indptr = indices, indptr     # (the constructor may narrow int64 indices)
            arrays = [A.data, A.indices, A.indptr]
    if layout["read_only"]:
        for a in arrays:
            a.flags.writeable = False
    return A


def snapshot(A):
    """Shape, and bytes, dtype and flags of every array of an input."""
    if isinstance(A, tuple):
        arrays, shape = list(A[:2]), A[2]
    else:
        arrays = [A.data] + ([A.row, A.col] if A.format == "coo" else [A.indices, A.indptr])
        shape = A.shape
    return shape, [(a.tobytes(), a.dtype.str, a.flags.writeable, a.flags.c_contiguous) for a in arrays]


def pattern_reference(shape, rows, cols):
    """Canonical CSR pattern of the entries, built by scipy alone (values 1)."""
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=shape)
    A.data[:] = 1.0
    return A


def exact_sums(rows, cols, vals):
    """``{(u, v): sum}`` of the entries' values as Python ints (no wrap)."""
    sums = {}
    for r, c, v in zip(rows.tolist(), cols.tolist(), vals.tolist()):
        sums[r, c] = sums.get((r, c), 0) + int(v)
    return sums


def capacity_reference(V, sums):
    """Canonical int64 CSR of summed capacities (each must fit int64)."""
    keys = sorted(sums)
    data = np.array([sums[k] for k in keys], dtype=np.int64)
    r = np.array([k[0] for k in keys], dtype=np.int64)
    c = np.array([k[1] for k in keys], dtype=np.int64)
    return sp.csr_matrix((data, (r, c)), shape=(V, V))


def source_total(sums, s):
    return sum(v for (a, b), v in sums.items() if a == s and b != s)


def scipy_value(C, s, t):
    """scipy's flow value when its int32 arithmetic holds, else None."""
    if C.nnz and int(C.data.max()) > I32:
        return None
    if sum(int(x) for x in C.getrow(s).data) > I32:
        return None
    return int(sp_maximum_flow(sp.csr_matrix(C, dtype=np.int32), s, t).flow_value)


# ---------------------------------------------------------------------------
# matching
# ---------------------------------------------------------------------------

@st.composite
def matching_inputs(draw):
    shape, rows, cols = draw(entries())
    layout = draw(layouts())
    vals = draw(pattern_values(rows.shape[0]))
    return shape, rows, cols, build(layout, shape, rows, cols, vals)


@settings(max_examples=examples(10))
@given(inp=matching_inputs(), perm_type=st.sampled_from(("row", "column")),
       init=st.sampled_from(("greedy", "karp_sipser", "none")), method=st.sampled_from(("gpr", "gpr", "flow")))
@pytest.mark.parametrize("backend", BACKENDS)
def test_matching_is_maximum_and_input_unchanged(backend, inp, perm_type, init, method):
    shape, rows, cols, A = inp
    ref = pattern_reference(shape, rows, cols)
    size = int((sp_matching(ref, perm_type="row") >= 0).sum())
    before = snapshot(A)
    perm = gpumatch.maximum_bipartite_matching(A, perm_type, method=method, init=init, backend=backend)
    assert snapshot(A) == before
    assert isinstance(perm, np.ndarray) and perm.dtype == np.int32
    assert perm.shape == ((shape[1],) if perm_type == "row" else (shape[0],))
    check_matching(ref, perm, perm_type, expected_size=size)
    check_matching(A, perm, perm_type, expected_size=size)        # the certificate reads every format
    assert snapshot(A) == before


@settings(max_examples=examples(6))
@given(inp=matching_inputs())
@pytest.mark.parametrize("backend", BACKENDS)
def test_rank_and_certificate(backend, inp):
    shape, rows, cols, A = inp
    ref = pattern_reference(shape, rows, cols)
    before = snapshot(A)
    rank = gpumatch.structural_rank(A, backend=backend)
    assert snapshot(A) == before
    assert rank == int(sp_structural_rank(ref))
    res = gpumatch.bipartite_matching(A, backend=backend, certificate=True)
    assert snapshot(A) == before
    assert res.size == rank
    r2c, c2r = host(res.row_to_col), host(res.col_to_row)
    check_matching(ref, c2r, "row", expected_size=rank)
    matched = np.flatnonzero(r2c >= 0)
    assert (c2r[r2c[matched]] == matched).all() and int((c2r >= 0).sum()) == rank
    # the Koenig cover: every edge has an end in it, and it has `rank` vertices
    cr, cc = host(res.cover_rows), host(res.cover_cols)
    assert int(cr.sum() + cc.sum()) == rank
    assert (cr[rows] | cc[cols]).all()


@settings(max_examples=examples(5))
@given(inp=matching_inputs(), seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("backend", BACKENDS)
def test_warm_start_is_checked_and_used(backend, inp, seed):
    """A valid `initial` (any matching of the graph) gives a maximum
    matching; a corrupted one raises ValueError; neither is changed."""
    shape, rows, cols, A = inp
    ref = pattern_reference(shape, rows, cols)
    size = int((sp_matching(ref, perm_type="row") >= 0).sum())
    rng = np.random.default_rng(seed)
    full = sp_matching(ref, perm_type="row")
    initial = np.where(rng.random(shape[1]) < 0.5, full, -1)
    initial = initial.astype(rng.choice(["int32", "int64", "uint64"] if (initial >= 0).all() else ["int32", "int64"]))
    keep = initial.copy()
    perm = gpumatch.maximum_bipartite_matching(A, initial=initial, backend=backend)
    check_matching(ref, perm, "row", expected_size=size)
    assert (initial == keep).all()
    matched = np.flatnonzero(full >= 0)
    if matched.size:
        bad = full.astype(np.int64)
        bad[matched[0]] = shape[0] + int(rng.integers(0, 3))     # out of range
        with pytest.raises(ValueError, match="initial"):
            gpumatch.maximum_bipartite_matching(A, initial=bad, backend=backend)
    if matched.size and shape[1] > matched.size:                 # a row matched twice
        bad = full.astype(np.int64)
        free = np.flatnonzero(full < 0)[0]
        bad[free] = full[matched[0]]
        with pytest.raises(ValueError, match="matched more than once"):
            gpumatch.maximum_bipartite_matching(A, initial=bad, method="flow", backend=backend)


# ---------------------------------------------------------------------------
# maximum flow
# ---------------------------------------------------------------------------

@st.composite
def flow_inputs(draw, formats=("csr", "csc", "coo"),
                kinds=("int64", "int64", "int64", "small", "int32", "uint8", "uint64", "bool")):
    (V, _), rows, cols = draw(entries(square=True, max_dim=8, max_nnz=28))
    layout = draw(layouts(formats))
    kind = draw(st.sampled_from(kinds))
    if kind == "small":
        vals = np.array(draw(st.lists(st.integers(0, 20), min_size=rows.shape[0], max_size=rows.shape[0])),
                        dtype=np.int64)
    elif kind == "int64":
        vals = np.array(draw(st.lists(CAPACITY, min_size=rows.shape[0], max_size=rows.shape[0])), dtype=np.int64)
    elif kind == "uint64":
        vals = np.array(draw(st.lists(st.one_of(st.integers(0, 9), st.integers(0, 9), st.integers(0, 2**64 - 1)),
                                      min_size=rows.shape[0], max_size=rows.shape[0])), dtype=np.uint64)
    elif kind == "bool":
        vals = np.array(draw(st.lists(st.booleans(), min_size=rows.shape[0], max_size=rows.shape[0])), dtype=bool)
    else:
        top = 255 if kind == "uint8" else I32
        vals = np.array(draw(st.lists(st.one_of(st.integers(0, 9), st.integers(0, top)), min_size=rows.shape[0],
                                      max_size=rows.shape[0])), dtype=kind)
    s = draw(st.integers(0, V - 1))
    t = draw(st.integers(0, V - 2))
    t += t >= s
    return V, rows, cols, vals, s, t, build(layout, (V, V), rows, cols, vals)


def expected_error(sums, s):
    """The OverflowError a network must raise (duplicates or the source's
    total past int64; a uint64 value past int64), or None."""
    if any(v > I64 for v in sums.values()):
        return "does not fit int64"
    if source_total({k: v for k, v in sums.items() if v > 0}, s) > I64:
        return "out of the source does not fit int64"
    return None


@settings(max_examples=examples(10))
@given(inp=flow_inputs(), layout=st.sampled_from(("reverse_csr", "reverse_csr", "bcsr")))
@pytest.mark.parametrize("backend", BACKENDS)
def test_max_flow_is_maximum_and_input_unchanged(backend, inp, layout):
    V, rows, cols, vals, s, t, A = inp
    sums = exact_sums(rows, cols, vals)
    before = snapshot(A)
    error = expected_error(sums, s)
    if error is None and layout == "bcsr" and any(v > I64 // 2 for (a, b), v in sums.items() if a != b):
        error = "overflow layout='bcsr'"
    if error is not None:
        event(f"error: {error}")
        with pytest.raises(OverflowError, match=error):
            gpumatch.maximum_flow(A, s, t, backend=backend, layout=layout)
        assert snapshot(A) == before
        return
    C = capacity_reference(V, sums)
    ref = scipy_value(C, s, t)
    event("scipy's value" if ref is not None else "value past int32: certificate only")
    res = gpumatch.maximum_flow(A, s, t, backend=backend, layout=layout)
    assert snapshot(A) == before
    assert isinstance(res.flow, sp.sparray) == isinstance(A, sp.sparray)
    assert res.flow.dtype == np.int64 and res.flow.shape == (V, V)
    cert = check_flow(C, s, t, res.flow, res.flow_value)
    if ref is not None:
        assert int(res.flow_value) == ref
    side = host(res.source_side)
    assert side[s] and not side[t]
    Cc = C.tocoo()
    crossing = side[Cc.row] & ~side[Cc.col]
    assert sum(int(x) for x in Cc.data[crossing]) == cert.value     # the returned cut is a minimum cut
    check_flow(A, s, t, res.flow, res.flow_value)                  # the certificate reads every format
    assert snapshot(A) == before


@settings(max_examples=examples(4))
@given(inp=flow_inputs())
@pytest.mark.parametrize("backend", BACKENDS)
def test_minimum_cut_and_host_methods(backend, inp):
    V, rows, cols, vals, s, t, A = inp
    sums = exact_sums(rows, cols, vals)
    if expected_error(sums, s) is not None:
        return
    C = capacity_reference(V, sums)
    before = snapshot(A)
    cut = gpumatch.minimum_cut(A, s, t, backend=backend)
    assert snapshot(A) == before
    side = host(cut.source_side)
    r, c = host(cut.cut_rows), host(cut.cut_cols)
    assert side[s] and not side[t] and side[r].all() and not side[c].any()
    assert sum(sums[a, b] for a, b in zip(r.tolist(), c.tolist())) == int(cut.cut_value)
    value = check_flow(C, s, t, gpumatch.maximum_flow(C, s, t, backend=backend).flow).value
    assert int(cut.cut_value) == value
    ref = scipy_value(C, s, t)
    for method in ("dinic", "edmonds_karp"):
        if ref is None:
            with pytest.raises(OverflowError, match="int32"):
                gpumatch.maximum_flow(A, s, t, method=method)
        else:
            res = gpumatch.maximum_flow(A, s, t, method=method)
            assert int(res.flow_value) == ref
            check_flow(C, s, t, res.flow, ref)
        assert snapshot(A) == before


# ---------------------------------------------------------------------------
# dynamic solvers: random batch sequences
# ---------------------------------------------------------------------------

ID_KINDS = ("list", "int32", "int64", "uint64")


def as_ids(values, kind):
    return list(map(int, values)) if kind == "list" else np.asarray(values, dtype=kind)


@settings(max_examples=examples(5))
@given(inp=matching_inputs(),
       ops=st.lists(st.tuples(st.sampled_from(("add", "remove", "solve", "solve", "bad", "graph")),
                              st.integers(1, 6), st.sampled_from(ID_KINDS)), min_size=2, max_size=10),
       seed=st.integers(0, 2**32 - 1), warm_method=st.sampled_from(("augment", "gpr")),
       rebuild_fraction=st.sampled_from((float("inf"), float("inf"), 1.0, 0.02, 0.0)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_matching_solver_batches(backend, inp, ops, seed, warm_method, rebuild_fraction):
    shape, rows, cols, A = inp
    m, n = shape
    edges = set(zip(rows.tolist(), cols.tolist()))
    before = snapshot(A)
    solver = gpumatch.MatchingSolver(A, backend=backend, warm_method=warm_method, rebuild_fraction=rebuild_fraction)
    assert snapshot(A) == before
    rng = np.random.default_rng(seed)

    def check(res):
        ref = pattern_reference(shape, np.array([e[0] for e in edges], dtype=np.int64),
                                np.array([e[1] for e in edges], dtype=np.int64))
        size = int((sp_matching(ref, perm_type="row") >= 0).sum())
        assert res.size == size
        check_matching(ref, host(res.col_to_row), "row", expected_size=size)
        check_matching(ref, host(res.row_to_col), "column", expected_size=size)

    for op, k, kind in [("solve", 0, "list")] + ops + [("solve", 0, "list")]:
        absent = [(r, c) for r in range(m) for c in range(n) if (r, c) not in edges]
        present = sorted(edges)
        if op == "add" and absent:
            pick = [absent[i] for i in rng.choice(len(absent), min(k, len(absent)), replace=False)]
            solver.add_edges(as_ids([p[0] for p in pick], kind), as_ids([p[1] for p in pick], kind))
            edges |= set(pick)
        elif op == "remove" and present:
            pick = [present[i] for i in rng.choice(len(present), min(k, len(present)), replace=False)]
            solver.remove_edges(as_ids([p[0] for p in pick], kind), as_ids([p[1] for p in pick], kind))
            edges -= set(pick)
        elif op == "bad" and m and n:
            # an invalid batch raises ValueError and changes nothing
            choices = [([m + k], [0], solver.add_edges), ([0], [n], solver.remove_edges),
                       ([-1 - k], [0], solver.add_edges)]
            if present:
                r, c = present[k % len(present)]
                choices += [([r], [c], solver.add_edges), ([r, r], [c, c], solver.remove_edges)]
            if absent:
                r, c = absent[k % len(absent)]
                choices += [([r], [c], solver.remove_edges), ([r, r], [c, c], solver.add_edges)]
            r_ids, c_ids, call = choices[int(rng.integers(len(choices)))]
            with pytest.raises(ValueError):
                call(np.asarray(r_ids, dtype=np.int64), np.asarray(c_ids, dtype=np.int64))
        elif op == "graph":
            G = solver.graph()
            assert set(zip(*map(list, sp.coo_matrix(G).nonzero()))) == edges
            if G.nnz:
                G.indices[:] = 0          # the caller's copy: the solver must not see this
        elif op == "solve":
            res = solver.solve()
            event(f"mode {res.stats['mode']}")
            check(res)
            res.col_to_row[:] = -1        # (item 6) the next cached solve must not see this
            res.row_to_col[:] = -1
    check(solver.solve())
    assert snapshot(A) == before


@st.composite
def flow_batches(draw):
    count = draw(st.integers(2, 8))
    return [(draw(st.sampled_from(("update", "update", "solve", "solve", "bad"))), draw(st.integers(1, 6)),
             draw(st.lists(CAPACITY, min_size=6, max_size=6)), draw(st.sampled_from(ID_KINDS)))
            for _ in range(count)]


@settings(max_examples=examples(5))
@given(inp=flow_inputs(kinds=("small", "small", "int64", "int32", "uint64", "bool")), batches=flow_batches(),
       seed=st.integers(0, 2**32 - 1),
       rebuild_fraction=st.sampled_from((float("inf"), float("inf"), 1.0, 0.002, 0.0)),
       time_budget=st.sampled_from((None, None, 0.25, 0.0)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_max_flow_solver_batches(backend, inp, batches, seed, rebuild_fraction, time_budget):
    V, rows, cols, vals, s, t, A = inp
    sums = exact_sums(rows, cols, vals)
    before = snapshot(A)
    error = expected_error(sums, s)
    if error is not None:
        with pytest.raises(OverflowError, match=error):
            gpumatch.MaxFlowSolver(A, s, t, backend=backend)
        assert snapshot(A) == before
        return
    solver = gpumatch.MaxFlowSolver(A, s, t, backend=backend, rebuild_fraction=rebuild_fraction,
                                    time_budget=time_budget)
    assert snapshot(A) == before
    arcs = sorted(sums)
    rng = np.random.default_rng(seed)

    def check(res):
        C = capacity_reference(V, sums)
        check_flow(C, s, t, res.flow, res.flow_value)
        ref = scipy_value(C, s, t)
        if ref is not None:
            assert int(res.flow_value) == ref
        side = host(res.source_side)
        assert side[s] and not side[t]

    for op, k, caps, kind in [("solve", 0, [], "list")] + batches + [("solve", 0, [], "list")]:
        if op == "update" and arcs:
            pick = [arcs[i] for i in rng.choice(len(arcs), min(k, len(arcs)), replace=False)]
            new = dict(sums)
            new.update(zip(pick, caps))
            if source_total({a: v for a, v in new.items() if v > 0}, s) > I64:
                with pytest.raises(OverflowError, match="would not fit int64"):
                    solver.update_capacities(as_ids([p[0] for p in pick], kind), as_ids([p[1] for p in pick], kind),
                                             np.asarray(caps[:len(pick)], dtype=np.int64))
                continue
            solver.update_capacities(as_ids([p[0] for p in pick], kind), as_ids([p[1] for p in pick], kind),
                                     as_ids(caps[:len(pick)], "uint64" if kind == "uint64" else "int64"))
            sums = new
        elif op == "bad":
            choices = [([V + k], [0], [1]), ([0], [0], [-1 - k]), ([s], [V], [1])]
            missing = [(a, b) for a in range(V) for b in range(V) if (a, b) not in sums]
            if missing:
                a, b = missing[k % len(missing)]
                choices.append(([a], [b], [1]))
            if arcs:
                a, b = arcs[k % len(arcs)]
                choices += [([a, a], [b, b], [1, 2]), ([a], [b], [-1])]
            r_ids, c_ids, new_caps = choices[int(rng.integers(len(choices)))]
            with pytest.raises(ValueError):
                solver.update_capacities(np.asarray(r_ids), np.asarray(c_ids), np.asarray(new_caps))
        elif op == "solve":
            res = solver.solve()
            event(f"mode {res.stats['mode']}")
            check(res)
            if res.flow.nnz:
                res.flow.data[:] = 0              # (item 6) the next cached solve must not see this
            res.source_side[:] = ~res.source_side
            K = solver.capacities()
            assert (K != capacity_reference(V, sums)).nnz == 0
            if K.nnz:
                K.data[:] = 0                     # (item 5) nor this
    check(solver.solve())
    assert snapshot(A) == before


# ---------------------------------------------------------------------------
# validation, certificates and files
# ---------------------------------------------------------------------------

@settings(max_examples=examples(6))
@given(inp=matching_inputs(), backend=st.just("numpy"))
def test_canonical_pattern_of_every_layout(inp, backend):
    """as_csr_graph gives scipy's canonical pattern for every layout and
    hands back the caller's own arrays only for a canonical CSR."""
    from gpumatch._validation import as_csr_graph

    shape, rows, cols, A = inp
    ref = pattern_reference(shape, rows, cols)
    before = snapshot(A)
    g = as_csr_graph(A, backend)
    assert snapshot(A) == before
    assert g.shape == shape
    assert host(g.indptr).tolist() == ref.indptr.tolist()
    assert host(g.indices).tolist() == ref.indices.tolist()


@settings(max_examples=examples(3))
@given(inp=flow_inputs(formats=("coo",)), comment=st.text(alphabet="abc xyz\n", max_size=20))
def test_dimacs_round_trip(inp, comment):
    """write_dimacs_max then read_dimacs_max gives the summed capacities
    back exactly, up to 2**63 - 1; sums past it raise OverflowError."""
    import io

    V, rows, cols, vals, s, t, A = inp
    sums = exact_sums(rows, cols, vals)
    buf = io.StringIO()
    if any(v > I64 for v in sums.values()):
        with pytest.raises(OverflowError, match="does not fit int64"):
            gpumatch.io.write_dimacs_max(buf, A, s, t, comment=comment)
        return
    gpumatch.io.write_dimacs_max(buf, A, s, t, comment=comment)
    buf.seek(0)
    C, s2, t2 = gpumatch.io.read_dimacs_max(buf)
    assert (s2, t2) == (s, t)
    Cc = sp.coo_matrix(C)
    assert {(int(a), int(b)): int(x) for a, b, x in zip(Cc.row, Cc.col, Cc.data)} == sums

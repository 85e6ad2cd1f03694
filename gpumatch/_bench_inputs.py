"""Inputs of :mod:`gpumatch.bench`: the seeded suites, folders and the corpus."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
from collections.abc import Callable
from typing import Any

import scipy.sparse as sp




# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class BenchInput:
    """One benchmark input; `build` returns a CSR matrix (matching) or (C, s, t) (flow)."""

    name: str
    family: str
    problem: str
    build: Callable[[], Any]
    reference: int | None = None
    ref_source: str | None = None
    params: dict = dataclasses.field(default_factory=dict)


def _gen(fn_name, **kwargs):
    def build():
        from . import generators

        return getattr(generators, fn_name)(**kwargs)

    return build


def _m(name, family, fn, **kw):
    return BenchInput(name, family, "matching", _gen(fn, **kw), params={"generator": fn, **kw})


def _f(name, family, fn, **kw):
    return BenchInput(name, family, "flow", _gen(fn, **kw), params={"generator": fn, **kw})


def _unit(name, family, fn, **kw):
    """Flow input: the unit-capacity network (s -> rows -> columns -> t) of a matching input."""
    make = _gen(fn, **kw)

    def build():
        from . import csr

        A = sp.csr_matrix(make())
        indptr, indices, capacity, s, t = csr.bipartite_flow_network(A.indptr, A.indices, A.shape)
        V = indptr.shape[0] - 1
        return sp.csr_matrix((capacity, indices, indptr), shape=(V, V)), s, t

    return BenchInput(name, family, "flow", build, params={"generator": fn, "network": "unit", **kw})


def _suite_small():
    return [
        _m("random_2k_d5", "random", "random_bipartite", m=2000, n=2000, degree=5),
        _m("random_2k_d2", "random", "random_bipartite", m=2000, n=2000, degree=2),
        _m("delaunay_2k", "delaunay", "delaunay", npoints=2000),
        _m("rmat_11_8", "rmat", "rmat", scale=11, edge_factor=8),
        _m("rect_2k_1k_d3", "rect", "random_bipartite", m=2000, n=1000, degree=3),
        _m("grid_40x40_drop0.1", "grid", "grid", nx=40, ny=40, drop=0.1),
        _f("genrmf_4_8", "genrmf", "genrmf", a=4, b=8, c1=100, c2=10000),
        _f("washington_16x32_C100", "washington", "washington_rlg", rows=16, cols=32, max_cap=100),
        _unit("unit_random_2k_d5", "random", "random_bipartite", m=2000, n=2000, degree=5),
    ]


def _suite_medium():
    return [
        _m("random_100k_d5", "random", "random_bipartite", m=100_000, n=100_000, degree=5),
        _m("delaunay_100k", "delaunay", "delaunay", npoints=100_000),
        _m("rmat_17_8", "rmat", "rmat", scale=17, edge_factor=8),
        _m("rect_100k_50k_d3", "rect", "random_bipartite", m=100_000, n=50_000, degree=3),
        _m("grid_300x300_drop0.1", "grid", "grid", nx=300, ny=300, drop=0.1),
        _f("genrmf_16_16", "genrmf", "genrmf", a=16, b=16, c1=100, c2=10000),
        _f("washington_128x256_C10000", "washington", "washington_rlg", rows=128, cols=256, max_cap=10000),
    ]


def _suite_standard():
    # The inputs of the performance issues (matching and max flow).
    return [
        _m("random_1M_d5", "random", "random_bipartite", m=1_000_000, n=1_000_000, degree=5),
        _m("delaunay_1M", "delaunay", "delaunay", npoints=1_000_000),
        _m("rmat_20_8", "rmat", "rmat", scale=20, edge_factor=8),
        _m("rect_1M_500k_d3", "rect", "random_bipartite", m=1_000_000, n=500_000, degree=3),
        _m("grid_1000x1000_drop0.1", "grid", "grid", nx=1000, ny=1000, drop=0.1),
        _m("random_200k_d5", "random", "random_bipartite", m=200_000, n=200_000, degree=5),
        _f("genrmf_64_64", "genrmf", "genrmf", a=64, b=64, c1=100, c2=10000),
        _f("genrmf_32_256", "genrmf", "genrmf", a=32, b=256, c1=100, c2=10000),
        _f("washington_512x1024_C10000", "washington", "washington_rlg", rows=512, cols=1024, max_cap=10000),
        _f("washington_1024x1024_C10000", "washington", "washington_rlg", rows=1024, cols=1024, max_cap=10000),
        # unit-capacity networks of the matching inputs (the flow issue's first six inputs)
        _unit("unit_random_1M_d5", "random", "random_bipartite", m=1_000_000, n=1_000_000, degree=5),
        _unit("unit_delaunay_1M", "delaunay", "delaunay", npoints=1_000_000),
        _unit("unit_rmat_20_8", "rmat", "rmat", scale=20, edge_factor=8),
        _unit("unit_rect_1M_500k_d3", "rect", "random_bipartite", m=1_000_000, n=500_000, degree=3),
        _unit("unit_grid_1000x1000_drop0.1", "grid", "grid", nx=1000, ny=1000, drop=0.1),
        _unit("unit_random_200k_d5", "random", "random_bipartite", m=200_000, n=200_000, degree=5),
    ]


def _suite_hard():
    # Inputs that once made G-PR slow or stall (robustness, not speed records):
    # long alternating paths, power-law hubs, thin rectangles, grids, meshes,
    # and the corpus's directed social network when a corpus is found.
    out = [
        _m("triangular_1500", "triangular", "triangular", n=1500),
        _m("triangular_1500_perm", "triangular", "triangular", n=1500, permute=True, seed=1),
        _m("triangular_1500_lower_perm", "triangular", "triangular", n=1500, lower=True, permute=True, seed=2),
        _m("bidiagonal_100k_perm", "path", "bidiagonal", n=100_000, permute=True),
        _m("rmat_18_8_perm", "rmat", "rmat", scale=18, edge_factor=8, permute=True),
        _m("thin_1M_100_d2", "rect", "random_bipartite", m=1_000_000, n=100, degree=2),
        _m("thin_100_1M_d2", "rect", "random_bipartite", m=100, n=1_000_000, degree=2),
        _m("grid_300x300_drop0.1", "grid", "grid", nx=300, ny=300, drop=0.1),
        _m("delaunay_200k", "delaunay", "delaunay", npoints=200_000),
    ]
    corpus = default_corpus_path()
    if corpus is not None:
        manifest = json.loads((corpus / "manifest.json").read_text())
        for e in manifest:
            if e.get("file", "").endswith("soc-slashdot0902-directed.mtx.gz"):
                out.append(_file_input(corpus / e["file"], "corpus", e.get("max_matching_stored"), "manifest"))
    return out


# Structured families of issue 61: long augmenting paths (shuffled block
# triangular Jacobians, chains, bands) at three sizes each, matching and flow.
# Each row: name, family, kind (_m matching, _f flow, _unit the unit network
# of a matching input), generator, keyword arguments for a size n, and the
# (small, medium, large) sizes.  Small runs on a 2-core CPU in seconds (peers
# included); large (~2M rows) is for a GPU machine.
STRUCTURED_SIZES = ("small", "medium", "large")
_STRUCTURED = (
    ("jacobian", "jacobian", _m, "block_triangular", lambda n: {"n": n}, (120_000, 480_000, 1_920_000)),
    ("ladder", "ladder", _m, "bidiagonal", lambda n: {"n": n, "permute": True}, (300_000, 1_000_000, 3_000_000)),
    # tall by 1%: m - n rows stay unmatched, at the ends of paths along the stairs
    ("staircase", "staircase", _m, "staircase", lambda n: {"m": n + n // 100, "n": n, "permute": True},
     (100_000, 500_000, 2_000_000)),
    ("arrowhead", "arrowhead", _m, "arrowhead", lambda n: {"n": n, "width": 2, "permute": True},
     (100_000, 500_000, 2_000_000)),
    ("banded_k2", "banded", _m, "banded", lambda n: {"n": n, "bandwidth": 2, "permute": True},
     (100_000, 500_000, 2_000_000)),
    ("blockdiag_b6", "block_diagonal", _m, "block_diagonal", lambda n: {"n": n, "block": 6, "permute": True},
     (100_000, 500_000, 2_000_000)),
    # thinned 3 x 3 blocks: many short cycles and chains
    ("blockdiag_b3_d0.5", "block_diagonal", _m, "block_diagonal",
     lambda n: {"n": n, "block": 3, "density": 0.5, "permute": True}, (100_000, 500_000, 2_000_000)),
    # one cycle through every vertex: no vertex of degree one starts a degree-one rule
    ("cycle", "cycles", _m, "cycles", lambda n: {"n": n, "permute": True}, (300_000, 1_000_000, 3_000_000)),
    # square, width 6: one column of degree one, and a degree-one cascade through all of it
    ("staircase_w6", "staircase", _m, "staircase", lambda n: {"m": n, "n": n, "width": 6, "permute": True},
     (100_000, 500_000, 2_000_000)),
    ("path", "path", _f, "path_network", lambda n: {"n": n, "max_cap": 1000}, (100_000, 500_000, 2_000_000)),
    ("unit_ladder", "ladder", _unit, "bidiagonal", lambda n: {"n": n, "permute": True}, (100_000, 300_000, 1_000_000)),
    ("unit_jacobian", "jacobian", _unit, "block_triangular", lambda n: {"n": n}, (120_000, 480_000, 1_920_000)),
)


def _count(n: int) -> str:
    """Short size label: 950 -> '950', 120000 -> '120k', 1920000 -> '1.92M'."""
    for unit, scale in (("M", 1_000_000), ("k", 1_000)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return str(n)


def structured_inputs(sizes=STRUCTURED_SIZES, scale: float = 1.0) -> list:
    """The structured suite's inputs at the given `sizes`, with every size
    multiplied by `scale` (tests use a tiny scale); names are ``family_size``."""
    bad = [s for s in sizes if s not in STRUCTURED_SIZES]
    if bad:
        raise ValueError(f"sizes must be among {STRUCTURED_SIZES}, got {bad}")
    out = []
    for size in sizes:
        k = STRUCTURED_SIZES.index(size)
        for name, family, kind, fn, kwargs, ns in _STRUCTURED:
            n = max(2, int(round(ns[k] * scale)))
            kw = kwargs(n)
            label = f"{_count(kw['m'])}x{_count(n)}" if "m" in kw else _count(n)
            inp = kind(f"{name}_{label}", family, fn, **kw)
            inp.params["size"] = size
            out.append(inp)
    return out


SUITES = {"small": _suite_small, "medium": _suite_medium, "standard": _suite_standard, "hard": _suite_hard,
          "structured": structured_inputs}
SUITES.update({f"structured-{size}": (lambda size=size: structured_inputs((size,))) for size in STRUCTURED_SIZES})

_MATRIX_SUFFIXES = (".mtx", ".mtx.gz")
_FLOW_SUFFIXES = (".max", ".max.gz")


def _strip_suffix(name: str) -> str:
    low = name.lower()
    for suf in _MATRIX_SUFFIXES + _FLOW_SUFFIXES:
        if low.endswith(suf):
            return name[: -len(suf)]
    return name


def _file_input(path: pathlib.Path, family="file", reference=None, ref_source=None, source_sink=None):
    low = path.name.lower()
    if low.endswith(_MATRIX_SUFFIXES):
        def build(p=path):
            from .io import read_matrix_market

            return read_matrix_market(p)

        problem = "matching"
    else:
        def build(p=path, st=source_sink):
            from .io import read_dimacs_max

            if st is None:
                return read_dimacs_max(p)
            # the manifest's terminals (0-based) stand in for the file's n lines, which may be missing
            return read_dimacs_max(p, source=int(st[0]), sink=int(st[1]))

        problem = "flow"
    return BenchInput(_strip_suffix(path.name), family, problem, build, reference, ref_source,
                      params={"file": path.name})


def dir_inputs(path) -> list:
    """Inputs for every .mtx/.mtx.gz/.max/.max.gz file in `path` (sorted by name)."""
    path = pathlib.Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"--dir: {str(path)!r} is not a directory")
    files = sorted(p for p in path.iterdir()
                   if p.is_file() and p.name.lower().endswith(_MATRIX_SUFFIXES + _FLOW_SUFFIXES))
    return [_file_input(p) for p in files]


def default_corpus_path() -> pathlib.Path | None:
    """``$GPUMATCH_CORPUS``, else ``shared/corpus`` beside the repository (or the cwd)."""
    env = os.environ.get("GPUMATCH_CORPUS")
    candidates = [pathlib.Path(env)] if env else []
    here = pathlib.Path(__file__).resolve().parent.parent
    candidates += [here.parent / "shared" / "corpus", pathlib.Path.cwd().parent / "shared" / "corpus",
                   pathlib.Path.cwd() / "shared" / "corpus"]
    for c in candidates:
        if (c / "manifest.json").is_file():
            return c
    return None


def corpus_inputs(path=None, max_nnz=None) -> list:
    """Inputs for the entries of a corpus ``manifest.json`` with their reference answers."""
    path = pathlib.Path(path) if path else default_corpus_path()
    if path is None or not (path / "manifest.json").is_file():
        raise FileNotFoundError("--corpus: no corpus found (manifest.json); set GPUMATCH_CORPUS or pass a path")
    manifest = json.loads((path / "manifest.json").read_text())
    out = []
    for e in manifest:
        nnz = e.get("nnz_stored")
        if max_nnz is not None and nnz is not None and nnz > max_nnz:
            continue
        if e.get("kind") == "matching":
            inp = _file_input(path / e["file"], "corpus", e.get("max_matching_stored"), "manifest")
        elif e.get("kind") == "maxflow":
            inp = _file_input(path / e["file"], "corpus", e.get("max_flow"), "manifest", e.get("source_sink"))
        else:
            continue
        out.append(inp)
    return out

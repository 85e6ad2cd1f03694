"""Imports point down: the layer table of ``docs/developer/layers.rst``.

The package is parsed with :mod:`ast` (nothing is imported), every import
of a gpumatch module is an edge, function-local ones included, relative ones
resolved; each module gets the layer of the table's row that names it.  The
tests fail on a module no row names, on an edge to a higher layer and on a
cycle, naming the edges.
"""

from __future__ import annotations

import ast
import csv
import fnmatch
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpumatch"
TABLE = ROOT / "docs" / "developer" / "layers.rst"

if not TABLE.is_file() or not PACKAGE.is_dir():  # pragma: no cover - an installed package without its sources
    pytest.skip("needs the source tree (docs/developer/layers.rst)", allow_module_level=True)


def read_layers() -> list:
    """``[(layer, [pattern, ...]), ...]`` bottom up, from the csv-table of the layers page."""
    lines = TABLE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(".. csv-table::"))
    body = []
    for line in lines[start + 1:]:
        if line.strip().startswith(":") or (not line.strip() and not body):
            continue
        if not line.startswith("   "):
            break
        body.append(line.strip())
    rows = []
    for layer, modules, _what in csv.reader(body, skipinitialspace=True):
        names = ["gpumatch" if m == "__init__" else f"gpumatch.{m}" for m in modules.split()]
        rows.append((layer.strip(), names))
    return rows


def module_names() -> dict:
    """Dotted module name -> path of every ``.py`` file of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_edges(modules: dict) -> list:
    """``(importer, imported, line, local)`` for every import of a gpumatch
    module; `local` when it sits inside a function."""
    edges = []
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        local_lines = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        local_lines.add(id(inner))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = ".".join(base[:len(base) - node.level + 1])
                    full = f"{base}.{node.module}" if node.module else base
                else:
                    full = node.module
                # ``from pkg import name``: the submodule pkg.name if there is one, else pkg
                targets = [f"{full}.{alias.name}" if f"{full}.{alias.name}" in modules else full
                           for alias in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                edge = (name, target, node.lineno, id(node) in local_lines)
                if target and target != name and edge not in edges:
                    edges.append(edge)
    return edges


def layer_of(modules: dict, rows: list) -> dict:
    """Module -> (rank, layer name): the row that names it exactly, else the
    first row with a pattern (``matching.*``) that matches it."""
    out = {}
    for rank, (layer, patterns) in enumerate(rows):
        for name in set(patterns) & set(modules):
            assert name not in out, f"{name} named by two rows"
            out[name] = (rank, layer)
    for rank, (layer, patterns) in enumerate(rows):
        for name in modules:
            if name not in out and any(fnmatch.fnmatchcase(name, p) for p in patterns if "*" in p):
                out[name] = (rank, layer)
    return out


def _describe(edge) -> str:
    src, dst, line, local = edge
    where = f"{MODULES[src].relative_to(ROOT).as_posix()}:{line}"
    return f"{src} -> {dst} ({where}{', in a function' if local else ''})"


MODULES = module_names()
ROWS = read_layers()
EDGES = import_edges(MODULES)
LAYERS = layer_of(MODULES, ROWS)


def test_the_table_reads():
    assert [layer for layer, _ in ROWS][:3] == ["1", "2", "3"]
    assert len({layer for layer, _ in ROWS}) == len(ROWS), "a layer named twice"
    # an exact name beats a pattern: the dynamic matching solver is in layer 5, not with matching.*
    assert LAYERS["gpumatch.matching._dynamic"][1] == "5" and LAYERS["gpumatch.matching.api"][1] == "4c"
    assert LAYERS["gpumatch.flow"][1] == "5" and LAYERS["gpumatch.flow._maxflow"][1] == "4b"
    # the matching engines sit below flow (unit bipartite networks), the matching API above it
    assert LAYERS["gpumatch.matching._driver"][1] == "4a" and LAYERS["gpumatch.flow._unit"][1] == "4b"


def test_every_module_has_a_layer():
    missing = sorted(set(MODULES) - set(LAYERS))
    assert not missing, f"modules without a row in docs/developer/layers.rst: {missing}"


def test_every_pattern_names_a_module():
    idle = [p for _, patterns in ROWS for p in patterns if not any(fnmatch.fnmatchcase(m, p) for m in MODULES)]
    assert not idle, f"rows of docs/developer/layers.rst that name no module: {idle}"


def test_imports_point_down():
    up = [e for e in EDGES if e[0] in LAYERS and e[1] in LAYERS and LAYERS[e[1]][0] > LAYERS[e[0]][0]]
    msg = "\n".join(f"{_describe(e)}: layer {LAYERS[e[0]][1]} imports layer {LAYERS[e[1]][1]}" for e in up)
    assert not up, f"upward imports:\n{msg}"


def _cycles(edges) -> list:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict = {}
    for src, dst, *_ in edges:
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycle():
    cycles = _cycles(EDGES)
    msg = []
    for comp in cycles:
        inside = set(comp)
        msg.append(f"cycle of {len(comp)} modules:\n  " + "\n  ".join(
            _describe(e) for e in EDGES if e[0] in inside and e[1] in inside))
    assert not cycles, "\n".join(msg)


def test_the_checker_sees_function_local_and_relative_imports():
    """The parser itself: a function-local relative import is an edge."""
    assert any(local for *_, local in EDGES)
    assert ("gpumatch.cli", "gpumatch.bench") in {(s, d) for s, d, *_ in EDGES}
    assert _cycles([("a", "b", 1, False), ("b", "a", 2, True), ("b", "c", 3, False)]) == [["a", "b"]]


@pytest.mark.parametrize("dependency, door", [("cupy", {"gpumatch._backend"}),
                                               ("cupyx", {"gpumatch._backend"}),
                                               ("cupy_backends", {"gpumatch._backend"}),
                                               ("dask", {"gpumatch._batch_dask"}),
                                               ("distributed", {"gpumatch._batch_dask"}),
                                               ("networkx", {m for m in MODULES if m.startswith("gpumatch.nx")})])
def test_optional_dependencies_have_one_door(dependency, door):
    """CuPy, Dask and NetworkX are imported in one place each (type-only
    imports under ``TYPE_CHECKING`` and the maintainers' ``_prebuilt``
    build tool aside)."""
    seen = set()
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        typing_only = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                typing_only |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            if any(n.split(".")[0] == dependency for n in names):
                seen.add(name)
    assert seen <= door | {"gpumatch._prebuilt"}, f"{dependency} imported outside {sorted(door)}: {sorted(seen - door)}"

"""The documentation: its Python examples run as written, and its Markdown pages convert."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _python_blocks():
    """(page, index, code) of every ``.. code-block:: python`` of the docs' own pages."""
    for page in sorted(DOCS.rglob("*.rst")):
        if any(part.startswith("_") for part in page.relative_to(DOCS).parts) or "generated" in page.parts:
            continue
        lines = page.read_text(encoding="utf-8").splitlines()
        k = 0
        for i, line in enumerate(lines):
            if line.strip() != ".. code-block:: python":
                continue
            indent = len(line) - len(line.lstrip())
            body = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt)
            code = "\n".join(x[indent + 3:] if x.strip() else "" for x in body).strip("\n")
            k += 1
            yield page.relative_to(DOCS).as_posix(), k, code


BLOCKS = list(_python_blocks())


def test_docs_have_examples():
    pages = {p for p, _, _ in BLOCKS}
    assert {"index.rst", "getting_started.rst", "user_guide/matching.rst", "user_guide/flow.rst",
            "user_guide/dynamic.rst", "user_guide/structural_rank.rst"} <= pages


def _has_cupy() -> bool:
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


#: Optional dependencies a page's examples may import, and the extra that installs each.
EXTRAS = {"networkx": "networkx", "dask": "dask", "distributed": "dask", "matplotlib": "plot"}


def _missing_extras(page: str) -> list[str]:
    """The extras whose modules the page's examples import at their top level and
    which are not installed here (the page is skipped without them, as its own
    tests are)."""
    missing = set()
    for _, _, code in (b for b in BLOCKS if b[0] == page):
        for node in ast.parse(code).body:
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                roots = [node.module.split(".")[0]]
            else:
                continue
            missing.update(f"{r} (the {EXTRAS[r]} extra)" for r in roots
                           if r in EXTRAS and importlib.util.find_spec(r) is None)
    return sorted(missing)


def _comment(line: str) -> str | None:
    m = re.search(r"#\s*(.*)$", line)
    return m.group(1) if m else None


@pytest.fixture
def networkx_config_restored():
    """The NetworkX guide's examples set NetworkX's global configuration (backend
    priorities, fallback, gpumatch's backend option); put it back afterwards, so
    that later tests' plain NetworkX calls still run NetworkX's own code."""
    if importlib.util.find_spec("networkx") is None:
        yield
        return
    import networkx as nx

    cfg = nx.config
    saved = (list(cfg.backend_priority.algos), list(cfg.backend_priority.generators), cfg.fallback_to_nx)
    gm = getattr(cfg.backends, "gpumatch", None)
    gm_backend = None if gm is None else gm.get("backend", None)
    yield
    cfg.backend_priority.algos, cfg.backend_priority.generators, cfg.fallback_to_nx = saved
    gm = getattr(cfg.backends, "gpumatch", None)
    if gm is not None and gm_backend is not None:
        gm.backend = gm_backend


@pytest.mark.parametrize("page", sorted({p for p, _, _ in BLOCKS}))
def test_docs_page_examples_run(page, tmp_path, monkeypatch, capsys, networkx_config_restored):
    # The blocks of a page run in order in one namespace, as a reader would
    # type them (blocks that need CuPy only where it is installed).  Where a
    # print() line carries a comment, the comment shows what it prints (or
    # is a note starting with "..." or a word, which is not checked).
    missing = _missing_extras(page)
    if missing:
        pytest.skip("its examples need " + ", ".join(missing))
    monkeypatch.chdir(tmp_path)          # examples that write files write them here
    namespace: dict = {"__name__": "docs_example"}
    checked = 0
    for _, k, code in (b for b in BLOCKS if b[0] == page):
        if re.search(r"^\s*(import cupy|import cupyx)", code, flags=re.M) and not _has_cupy():
            continue
        lines = code.splitlines()
        for node in ast.parse(code).body:
            capsys.readouterr()
            exec(compile(ast.Module([node], type_ignores=[]), f"{page} block {k}", "exec"), namespace)
            shown = capsys.readouterr().out
            comment = _comment(lines[node.lineno - 1])
            is_print = isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and getattr(node.value.func, "id", None) == "print" and node.end_lineno == node.lineno
            # "description: value" or "value (description)"; a note ("...",
            # or words in lower case) is not a value
            value = None if comment is None else comment.split(": ")[-1]
            if is_print and value and not re.match(r"(\.\.\.|[a-z])", value):
                squeeze = lambda x: re.sub(r"\s+", "", x)  # noqa: E731 - NumPy pads arrays with spaces
                assert squeeze(shown) and squeeze(shown) in squeeze(value), (page, k, lines[node.lineno - 1], shown)
                checked += 1
    if page in ("getting_started.rst", "user_guide/matching.rst", "user_guide/structural_rank.rst",
                "user_guide/flow.rst"):
        assert checked >= 2, "the page's printed values are no longer checked"


def _markdown_pages():
    spec = importlib.util.spec_from_file_location("markdown_pages", DOCS / "_ext" / "markdown_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_markdown_conversion_of_the_subset():
    md = _markdown_pages()
    text = md.convert("""# Title

Intro with `code`s, **bold**, a [link](https://example.org/x) and a [file](results/a.txt),
and `a code span
over two lines` and a name_.

## Section

* one item
  continued `here`
- another

| a | b |
|---|---:|
| `x` | - |
| 1. | **2** |

    python run.py --flag

### Sub
""", skip_title=True)
    assert "Title" not in text
    assert "Intro with ``code``\\ s, **bold**, a `link <https://example.org/x>`__ and a file," in text
    assert "``a code span\nover two lines``" in text and "name\\_." in text
    assert "Section\n-------\n" in text and "Sub\n~~~\n" in text
    assert "* one item\n  continued ``here``\n* another" in text
    assert ".. list-table::\n   :header-rows: 1\n\n   * - a\n     - b\n   * - ``x``\n     - \\-\n" in text
    assert "   * - \\1.\n     - **2**" in text
    assert "::\n\n    python run.py --flag\n" in text


@pytest.mark.parametrize("source", ["benchmarks/RESULTS.md", "CHANGELOG.md"])
def test_markdown_pages_convert_to_valid_rest(source):
    docutils = pytest.importorskip("docutils.core", reason="docutils comes with the docs extra")
    md = _markdown_pages()
    rst = md.convert((ROOT / source).read_text(encoding="utf-8"), skip_title=True)
    # a standalone docutils parse: errors and warnings (level 2+) fail the test
    docutils.publish_doctree(rst, settings_overrides={"report_level": 2, "halt_level": 2})
    # every table of the Markdown page became a table
    assert rst.count(".. list-table::") == len(re.findall(r"^\|[\s:|-]+\|$",
                                                          (ROOT / source).read_text(encoding="utf-8"), flags=re.M))

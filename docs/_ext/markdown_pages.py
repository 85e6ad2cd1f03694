"""Render the repository's Markdown pages (benchmark results, release notes) as reST.

``benchmarks/RESULTS.md`` and ``CHANGELOG.md`` are written in Markdown for
readers of the repository; the docs include the same text, converted when
the build starts, so that the numbers live in one place.  The project does
not use a Markdown parser for Sphinx, so this converts the small subset
those pages use:

* ``#`` to ``###`` headings;
* paragraphs with ```code```, ``**bold**`` and ``[text](url)`` links
  (links to files of the repository become their text);
* bullet lists (``*`` or ``-``), one level, continuation lines indented;
* pipe tables with a header row;
* code blocks indented by four spaces.

Anything else is passed through as text.  The output goes to
``docs/_generated/<name>.rst.inc`` and is pulled in with ``.. include::``;
a construct this does not know shows up as a warning of the docs build
(which CI treats as an error), not as silently wrong output.
"""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: source page (relative to the repository root) -> generated file name
PAGES = {
    "benchmarks/RESULTS.md": "results",
    "CHANGELOG.md": "changelog",
}

_UNDERLINE = {1: "=", 2: "-", 3: "~", 4: "^"}


def _inline(text: str) -> str:
    """Inline Markdown of one line (or table cell) as reST."""
    # links first: absolute ones stay links (kept aside until the end, as
    # their reST has backquotes), links into the repository become their text
    links: list[str] = []

    def link(m):
        label, url = m.group(1), m.group(2)
        if re.match(r"[a-z]+://", url):
            links.append(f"`{label.replace('`', '')} <{url}>`__")
            return f"\x00{len(links) - 1}\x00"
        return label

    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link, text)
    out = []
    # then code spans: nothing inside them is converted
    for i, part in enumerate(re.split(r"(`[^`]+`)", text)):
        if i % 2:
            out.append(("``" + part[1:-1] + "``", True))
            continue
        # a word ending in "_" would be a reference in reST
        part = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", part)
        out.append((part, False))
    # code spans need a non-word character on each side in reST
    text = ""
    for k, (piece, literal) in enumerate(out):
        if literal:
            if text and re.search(r"\w\Z", text):
                text += "\\ "
            text += piece
            nxt = out[k + 1][0] if k + 1 < len(out) else ""
            if re.match(r"\w", nxt):
                text += "\\ "
        else:
            text += piece
    return re.sub("\x00(\\d+)\x00", lambda m: links[int(m.group(1))], text)


def _cell(text: str) -> str:
    """A table cell: inline markup, and no list marker at its start."""
    if not text:
        return "\\ "
    text = _inline(text)
    if re.match(r"([-*+]|\d+[.)]|#\.)(\s|$)", text):
        text = "\\" + text
    return text


def _table(rows: list[str]) -> list[str]:
    def cells(line):
        line = line.strip()
        if line.startswith("|"):
            line = line[1:]
        if line.endswith("|"):
            line = line[:-1]
        return [c.strip() for c in line.split("|")]

    head, body = cells(rows[0]), [cells(r) for r in rows[2:]]
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [head] + body:
        for j, cell in enumerate(row):
            out.append(("   * - " if j == 0 else "     - ") + _cell(cell))
    out.append("")
    return out


def convert(markdown: str, *, skip_title: bool = False) -> str:
    """reST of `markdown` (the subset in this module's docstring)."""
    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        m = re.match(r"(#{1,4})\s+(.*)$", line)
        if m:
            level, title = len(m.group(1)), _inline(m.group(2).strip())
            i += 1
            if level == 1 and skip_title:
                continue
            out += ["", title, _UNDERLINE[level] * max(len(title), 3), ""]
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(r"\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out += [""] + _table(rows)
            continue
        if line.startswith("    ") and (not out or not out[-1].strip()):
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i].rstrip())
                i += 1
            while block and not block[-1]:
                block.pop()
            out += ["::", ""] + block + [""]
            continue
        m = re.match(r"([*-])\s+(.*)$", line)
        if m:  # a list item and its continuation lines, converted as one text
            item = [m.group(2)]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            text = _inline("\n".join(item)).split("\n")
            out += ["* " + text[0]] + ["  " + x for x in text[1:]]
            continue
        if not stripped:
            out.append("")
            i += 1
            continue
        para = []  # a paragraph: up to a blank line or another construct
        while i < len(lines) and lines[i].strip() and not re.match(r"(#{1,4}\s|[*-]\s|\s*\||    )", lines[i]):
            para.append(lines[i].strip())
            i += 1
        if not para:  # a line no rule above took (e.g. an indented one inside text)
            para.append(lines[i].strip())
            i += 1
        out += _inline("\n".join(para)).split("\n")
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    return text


def write_pages(app=None) -> None:
    """Convert every page of :data:`PAGES` into ``docs/_generated``."""
    target = ROOT / "docs" / "_generated"
    target.mkdir(exist_ok=True)
    for source, name in PAGES.items():
        text = convert((ROOT / source).read_text(encoding="utf-8"), skip_title=True)
        path = target / f"{name}.rst.inc"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

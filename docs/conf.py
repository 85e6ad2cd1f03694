"""Sphinx configuration of the gpumatch documentation.

Build (from the repository root; CI adds ``-W --keep-going``)::

    pip install ".[docs]"
    sphinx-build -b html docs docs/_build/html
"""

from __future__ import annotations

import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))           # document this checkout, installed or not
sys.path.insert(0, str(DOCS / "_ext"))

import gpumatch  # noqa: E402

project = "gpumatch"
author = "the gpumatch developers"
copyright = "2026, the gpumatch developers"
release = gpumatch.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.extlinks",
    "numpydoc",
    "markdown_pages",      # benchmarks/RESULTS.md and CHANGELOG.md as reST (docs/_ext)
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
root_doc = "index"
default_role = "literal"   # `x` in the pages is code, as in the docstrings' prose

# -- API reference -----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
# the numpydoc sections give each parameter's type in words; the annotations
# (for type checkers) would repeat them, less readably, in every signature
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False    # the class template lists the members
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# :doi:`10.1109/ICPP.2013.21` in the References sections
extlinks = {"doi": ("https://doi.org/%s", "doi:%s")}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"gpumatch {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = []
html_show_sourcelink = False

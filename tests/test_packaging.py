"""Packaging facts a release depends on: one version, release notes for it, typing marker."""

from __future__ import annotations

import importlib.metadata
import pathlib
import re
import sys

import pytest

import gpumatch

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _pyproject():
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_version_is_single_sourced():
    from gpumatch._version import __version__

    assert gpumatch.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    meta = _pyproject()
    assert "version" not in meta["project"]
    assert "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gpumatch._version.__version__"}


def test_installed_metadata_matches_the_version():
    try:
        dist = importlib.metadata.distribution("gpumatch")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("gpumatch is not installed (running from a checkout)")
    installed = pathlib.Path(dist.locate_file("gpumatch/__init__.py"))
    if not installed.exists() or installed.resolve() != pathlib.Path(gpumatch.__file__).resolve():
        pytest.skip("the installed gpumatch is not the one imported here")
    assert dist.version == gpumatch.__version__


def test_changelog_has_a_section_for_the_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, flags=re.M)
    assert headings, "no '## [version] - date' headings"
    assert headings[0] == ("Unreleased", "")
    versions = headings[1:]
    assert versions[0][0] == gpumatch.__version__, "the newest released section must be the package version"
    assert all(d for _, d in versions), "every released section has a date"
    # newest first, each version once
    keys = [tuple(int(x) for x in v.split(".")) for v, _ in versions]
    assert keys == sorted(set(keys), reverse=True)
    # Keep a Changelog's kinds of change only
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds


def test_cli_version_is_the_package_version(capsys):
    from gpumatch.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpumatch {gpumatch.__version__}"

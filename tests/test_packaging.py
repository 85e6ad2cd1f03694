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
    # an "Unreleased" section is optional, and first when there is one
    versions = headings[1:] if headings[0] == ("Unreleased", "") else headings
    assert ("Unreleased", "") not in versions
    assert versions[0][0] == gpumatch.__version__, "the newest released section must be the package version"
    assert all(d for _, d in versions), "every released section has a date"
    # newest first, each version once
    keys = [tuple(int(x) for x in v.split(".")) for v, _ in versions]
    assert keys == sorted(set(keys), reverse=True)
    # Keep a Changelog's kinds of change only
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds


def test_changelog_stays_short_and_for_users():
    """At most 400 lines: what changed for a user, not the history (the git log has that)."""
    lines = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400, f"CHANGELOG.md has {len(lines)} lines: condense the older releases"


def test_cli_version_is_the_package_version(capsys):
    from gpumatch.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"gpumatch {gpumatch.__version__}"


def test_package_is_marked_typed_and_ships_the_marker():
    assert (pathlib.Path(gpumatch.__file__).parent / "py.typed").is_file()
    meta = _pyproject()
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["gpumatch"]
    assert "Typing :: Typed" in meta["project"]["classifiers"]


def test_project_metadata():
    project = _pyproject()["project"]
    assert project["license"] == "BSD-3-Clause"  # an SPDX expression, not a table
    assert not any(c.startswith("License ::") for c in project["classifiers"])  # superseded by the expression
    classifiers = set(project["classifiers"])
    assert {"Development Status :: 4 - Beta", "Environment :: GPU :: NVIDIA CUDA"} <= classifiers
    minimum = tuple(int(x) for x in project["requires-python"].lstrip(">=").split("."))
    versions = sorted(tuple(int(x) for x in c.rsplit(":: ", 1)[1].split("."))
                      for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert versions[0] == minimum and versions == [(3, v) for v in range(minimum[1], versions[-1][1] + 1)]
    assert {"Documentation", "Source", "Changelog"} <= set(project["urls"])
    assert {"sphinx", "numpydoc", "pydata-sphinx-theme"} <= {re.split(r"[<>=!~ \[]", d)[0]
                                                             for d in project["optional-dependencies"]["docs"]}
    build = _pyproject()["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(\d+).*", r) and int(re.match(r"setuptools>=(\d+)", r)[1]) >= 77
               for r in build), "SPDX license strings need setuptools 77 or later"


def _public_callables():
    import inspect

    from gpumatch import generators, io, testing

    for name in gpumatch.__all__:
        obj = getattr(gpumatch, name)
        if inspect.isfunction(obj):
            yield f"gpumatch.{name}", obj
    for cls in (gpumatch.MaxFlowSolver, gpumatch.MatchingSolver):
        for name, obj in vars(cls).items():
            if inspect.isfunction(obj) and (not name.startswith("_") or name == "__init__"):
                yield f"{cls.__name__}.{name}", obj
    for mod in (generators, io, testing):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                yield f"{mod.__name__}.{name}", obj


def test_public_signatures_are_annotated():
    import inspect

    missing = []
    for qualname, fn in _public_callables():
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            if p.name != "self" and p.annotation is inspect.Parameter.empty:
                missing.append(f"{qualname}({p.name})")
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{qualname} -> ?")
    assert not missing, missing


def test_public_annotations_resolve():
    # every annotation names something real: evaluate them all, with CuPy's
    # types stood in for where CuPy is not installed
    import inspect
    import types
    import typing

    import scipy.sparse

    try:
        import cupy
        import cupyx.scipy.sparse
    except ImportError:
        cupy = types.SimpleNamespace(ndarray=type("ndarray", (), {}))
        cupyx = types.SimpleNamespace(scipy=types.SimpleNamespace(
            sparse=types.SimpleNamespace(spmatrix=type("spmatrix", (), {}))))
    names = {"cupy": cupy, "cupyx": cupyx, "scipy": scipy}
    for qualname, fn in _public_callables():
        hints = typing.get_type_hints(fn, localns=names)
        params = set(inspect.signature(fn).parameters) - {"self"}
        assert set(hints) == params | {"return"}, qualname

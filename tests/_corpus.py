"""Locate the shared test corpus (see its README) without pytest machinery.

``corpus_dir()`` is ``$GPUMATCH_CORPUS`` when that variable is set, else
``../shared/corpus`` beside the repository root; it returns None when the
folder (with its ``manifest.json``) is absent, so callers can skip.
"""

from __future__ import annotations

import json
import os
import pathlib

_REPO = pathlib.Path(__file__).resolve().parent.parent


def corpus_dir() -> pathlib.Path | None:
    """The corpus folder, or None when it is not there."""
    env = os.environ.get("GPUMATCH_CORPUS")
    path = pathlib.Path(env) if env else _REPO.parent / "shared" / "corpus"
    return path if (path / "manifest.json").is_file() else None


def load_manifest() -> list:
    """The corpus manifest (a list of dicts), or [] without a corpus."""
    path = corpus_dir()
    if path is None:
        return []
    return json.loads((path / "manifest.json").read_text())


def manifest_entry(file: str) -> dict | None:
    """The manifest entry whose ``file`` is `file`, or None."""
    for entry in load_manifest():
        if entry.get("file") == file:
            return entry
    return None

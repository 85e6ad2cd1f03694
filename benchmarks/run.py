#!/usr/bin/env python3
"""Benchmark runner (thin wrapper around :mod:`gpumatch.bench`).

    python benchmarks/run.py --suite small                 # quick CPU run
    python benchmarks/run.py --suite standard --repeats 5  # the issue inputs, on a GPU machine

Same options as ``python -m gpumatch bench``; see benchmarks/README.md.
"""

import pathlib
import sys

try:
    import gpumatch.bench  # noqa: F401  (installed package)
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gpumatch.bench import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m gpumatch``: the command line (see :mod:`gpumatch.cli`)."""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    """Console-script entry point: parse `argv` (default ``sys.argv[1:]``) and run."""
    from .cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())

"""Input checks of the assignment functions that run on either array module.

Shared by the public functions (:mod:`gpumatch.lap.api`) and the auction
driver (:mod:`gpumatch.lap._driver`, whose batch entry validates on the
device); the names and messages are those of the public functions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["I64_MAX", "INT_BOUND", "invalid_rule", "check_int_range", "device_numeric", "device_check_invalid"]

I64_MAX = np.iinfo(np.int64).max
#: Integer costs are solved exactly in int64 when ``max|c| * (4 min(m, n) + 8)``
#: stays below this: every price and path length of the engine is bounded by
#: ``(2 min(m, n) + 1) max|c|`` (a shortest path alternates at most
#: ``min(m, n)`` matched and ``min(m, n) + 1`` unmatched entries).
INT_BOUND = 2 ** 62


def invalid_rule(maximize):
    """Which entries are invalid, for the error messages."""
    return "(NaN, or +inf when maximizing)" if maximize else "(NaN, or -inf when minimizing)"


def check_int_range(c, k, what):
    """OverflowError when integer weights `c` (an array of either module) are
    too large to solve a matching of `k` pairs exactly in int64."""
    if c.size and c.dtype.kind == "i":
        big = max(-int(c.min()), int(c.max()))
        if big * (4 * k + 8) >= INT_BOUND:
            raise OverflowError(f"{what}: integer weights up to {big} in magnitude are too large to solve exactly "
                                f"in int64 for a matching of {k} pairs (need max|weight| * (4*{k} + 8) < 2**62); "
                                "scale them down or pass floating-point weights")


def device_numeric(a, xp, what: str):
    """`a` as int64 (integers, booleans) or float64, kept in its array module
    `xp`; TypeError for anything else, OverflowError for uint64 beyond int64."""
    kind = a.dtype.kind
    if kind in "iub":
        if kind == "u" and a.size and a.dtype.itemsize == 8 and int(a.max()) > I64_MAX:
            raise OverflowError(f"{what}: value {int(a.max())} does not fit int64")
        return a.astype(np.int64, copy=False)
    if kind == "f":
        return a.astype(np.float64, copy=False)
    raise TypeError(f"{what} must hold real numbers (integer, boolean or floating point), got dtype {a.dtype}")


def device_check_invalid(c, xp, maximize, what="matrix"):
    """ValueError naming the first NaN (or ``-inf``; ``+inf`` with `maximize`)
    of a float array of module `xp`, in the words of the public functions."""
    bad = xp.isnan(c) | (c == (np.inf if maximize else -np.inf))
    if bool(bad.any()):
        k = int(xp.argmax(bad.reshape(-1)))
        where = tuple(int(t) for t in np.unravel_index(k, c.shape))
        val = float(c.reshape(-1)[k])
        raise ValueError(f"{what} contains invalid numeric entries: {val!r} at {where} {invalid_rule(maximize)}"
                         .replace(",)", ")"))

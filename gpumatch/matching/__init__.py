"""Maximum bipartite matching: G-PR push-relabel on GPUs (CuPy), a compiled engine on CPUs (Numba).

Public functions: :func:`maximum_bipartite_matching` (drop-in for scipy's),
:func:`structural_rank`, and :func:`bipartite_matching` (both directions,
statistics, König certificate).  The driver is in ``_driver.py``; its kernels
come as CUDA (``gpr.cu`` launched by ``_kernels_cuda.py``) and NumPy twins
(``_kernels_numpy.py``).
"""

from .api import MatchingResult, bipartite_matching, maximum_bipartite_matching, structural_rank

__all__ = ["maximum_bipartite_matching", "structural_rank", "bipartite_matching", "MatchingResult", "MatchingSolver"]


def __getattr__(name):
    # The dynamic solver (and the CSR editing and augmenting-path modules it
    # compiles or loads, ~80 ms) is imported on first use, not by a one-off solve.
    if name == "MatchingSolver":
        from ._dynamic import MatchingSolver

        return MatchingSolver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

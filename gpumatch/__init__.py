"""gpumatch: maximum bipartite matching and maximum flow on GPUs (CuPy) and CPUs (NumPy).

Drop-in replacements for ``scipy.sparse.csgraph.maximum_bipartite_matching``,
``structural_rank`` and ``maximum_flow``, with richer results (statistics,
minimum cut, König cover) and certificates in :mod:`gpumatch.testing`.

Public functions
----------------
maximum_bipartite_matching
    G-PR push-relabel matching (scipy's return format).
structural_rank
    Size of a maximum matching of the sparsity pattern.
bipartite_matching
    Both directions, statistics and, on request, a König cover.
maximum_flow
    Push-relabel maximum flow with a valid per-arc flow and the minimum cut.
minimum_cut
    Capacity, source side and arcs of a minimum s-t cut.
MaxFlowSolver, MatchingSolver
    Re-solve after batches of capacity or edge changes, from the previous answer.
dulmage_mendelsohn, block_triangular_form
    Dulmage–Mendelsohn decomposition (MATLAB ``dmperm``) and block triangular form.

Submodules: :mod:`gpumatch.csr` (shared CSR utilities), :mod:`gpumatch.structure`, :mod:`gpumatch.io`,
:mod:`gpumatch.generators`, :mod:`gpumatch.testing`.
"""

from ._version import __version__

from .flow import MaxFlowSolver, MaximumFlowResult, MinimumCutResult, maximum_flow, minimum_cut
from .matching import (MatchingResult, MatchingSolver, bipartite_matching, maximum_bipartite_matching,
                       structural_rank)
from .structure import (BlockTriangularResult, DulmageMendelsohnResult, block_triangular_form,
                        dulmage_mendelsohn)

#: Submodules reachable as attributes of the package (``gpumatch.testing``),
#: imported on first use.
_SUBMODULES = ("testing", "io", "generators", "csr", "flow", "matching", "structure", "batch", "cli", "bench")


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))


__all__ = [
    "maximum_bipartite_matching",
    "structural_rank",
    "bipartite_matching",
    "MatchingResult",
    "maximum_flow",
    "minimum_cut",
    "MaximumFlowResult",
    "MinimumCutResult",
    "MaxFlowSolver",
    "MatchingSolver",
    "dulmage_mendelsohn",
    "block_triangular_form",
    "DulmageMendelsohnResult",
    "BlockTriangularResult",
    "__version__",
]

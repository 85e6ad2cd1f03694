"""gpumatch: maximum bipartite matching and maximum flow on GPUs (CuPy) and CPUs (Numba).

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
min_weight_full_bipartite_matching, linear_sum_assignment
    Weighted matching (the assignment problem), sparse and dense, as scipy's.
assignment
    The same with its cost, dual potentials (a certificate) and a maximum-cardinality mode.
memory_estimate
    Bytes of GPU memory a matching or a maximum flow needs at its peak.

Submodules: :mod:`gpumatch.backends` (choosing the engine, results to the host, warm-up),
:mod:`gpumatch.csr` (shared CSR utilities), :mod:`gpumatch.structure`, :mod:`gpumatch.io`,
:mod:`gpumatch.generators`, :mod:`gpumatch.testing`, :mod:`gpumatch.lap` (the assignment engine).
"""

from typing import TYPE_CHECKING

from ._version import __version__

#: The public names of the package and the subpackage each lives in.  They
#: are imported on first use (PEP 562), so ``import gpumatch`` loads no
#: NumPy, SciPy or Numba: a command line's ``--help``, a ``__version__``
#: check or a worker that never solves pays nothing, and the first solve
#: loads what it uses (Numba only for ``backend="numba"``).
_EXPORTS = {
    "maximum_flow": "flow", "minimum_cut": "flow", "MaxFlowSolver": "flow", "MaximumFlowResult": "flow",
    "MinimumCutResult": "flow",
    "maximum_bipartite_matching": "matching", "structural_rank": "matching", "bipartite_matching": "matching",
    "MatchingResult": "matching", "MatchingSolver": "matching",
    "dulmage_mendelsohn": "structure", "block_triangular_form": "structure",
    "DulmageMendelsohnResult": "structure", "BlockTriangularResult": "structure",
    "min_weight_full_bipartite_matching": "lap", "linear_sum_assignment": "lap",
    "assignment": "lap", "AssignmentResult": "lap",
    "memory_estimate": "_memory", "DeviceMemoryError": "_memory",
}

#: Submodules reachable as attributes of the package (``gpumatch.testing``),
#: imported on first use.
_SUBMODULES = ("testing", "io", "generators", "csr", "flow", "matching", "structure", "batch", "cli", "bench",
               "backends", "lap")

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below
    from .flow import MaxFlowSolver, MaximumFlowResult, MinimumCutResult, maximum_flow, minimum_cut
    from .lap import AssignmentResult, assignment, linear_sum_assignment, min_weight_full_bipartite_matching
    from .matching import (MatchingResult, MatchingSolver, bipartite_matching, maximum_bipartite_matching,
                           structural_rank)
    from ._memory import DeviceMemoryError, memory_estimate
    from .structure import (BlockTriangularResult, DulmageMendelsohnResult, block_triangular_form,
                            dulmage_mendelsohn)


def __getattr__(name):
    import importlib

    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value      # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | set(_SUBMODULES))


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
    "min_weight_full_bipartite_matching",
    "linear_sum_assignment",
    "assignment",
    "AssignmentResult",
    "memory_estimate",
    "DeviceMemoryError",
    "__version__",
]

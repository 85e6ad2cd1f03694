"""Maximum flow and minimum cut by push-relabel (GPU through CuPy, or NumPy).

Public functions
----------------
maximum_flow
    Drop-in for :func:`scipy.sparse.csgraph.maximum_flow`, plus a minimum cut
    and statistics.
minimum_cut
    Capacity, source side and arcs of a minimum s-t cut.
MaxFlowSolver
    Dynamic maximum flow: re-solve after batches of capacity changes,
    starting from the previous flow.
matching_by_flow
    Maximum bipartite matching through the unit flow network (used by
    ``maximum_bipartite_matching(..., method="flow")``).

The static solver is here (driver ``_maxflow.py``, kernels ``_pr_numpy.py``
and ``_pr_cupy.py`` with ``pr*.cu``, the Numba engine ``_cpu.py``); the
dynamic one, :class:`MaxFlowSolver`, in :mod:`gpumatch.flow.dynamic`.
"""

from .dynamic import MaxFlowSolver
from ._maxflow import MaximumFlowResult, MinimumCutResult, matching_by_flow, maximum_flow, minimum_cut

__all__ = ["MaximumFlowResult", "MinimumCutResult", "maximum_flow", "minimum_cut", "matching_by_flow", "MaxFlowSolver"]

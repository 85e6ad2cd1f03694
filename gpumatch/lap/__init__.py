"""Weighted bipartite matching: the linear assignment problem (LAP).

Public functions: :func:`min_weight_full_bipartite_matching` (drop-in for
scipy's sparse one), :func:`linear_sum_assignment` (drop-in for
``scipy.optimize.linear_sum_assignment``) and :func:`assignment` (cost, dual
certificate, and a maximum-cardinality mode).  The wrappers are in
``api.py``; the compiled CPU engine (shortest augmenting paths after Jonker
and Volgenant, Numba) is ``_cpu.py``.  GPU kernels are not written yet.
"""

from .api import AssignmentResult, assignment, linear_sum_assignment, min_weight_full_bipartite_matching

__all__ = ["min_weight_full_bipartite_matching", "linear_sum_assignment", "assignment", "AssignmentResult"]

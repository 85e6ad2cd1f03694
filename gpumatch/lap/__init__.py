"""Weighted bipartite matching: the linear assignment problem (LAP).

Public functions: :func:`min_weight_full_bipartite_matching` (drop-in for
scipy's sparse one), :func:`linear_sum_assignment` (drop-in for
``scipy.optimize.linear_sum_assignment``) and :func:`assignment` (cost, dual
certificate, and a maximum-cardinality mode).  The wrappers are in
``api.py``; the compiled CPU engine (shortest augmenting paths after Jonker
and Volgenant, Numba) is ``_cpu.py``.  The GPU engine (an auction with
epsilon scaling and global price updates) is ``auction.cu``, launched by
``_kernels_cuda.py``, with its NumPy twins in ``_kernels_numpy.py`` and one
driver for both in ``_driver.py`` (also the batched dense solve,
``solve_dense_batch``); ``_checks.py`` holds the input checks both sides share.
"""

from .api import AssignmentResult, assignment, linear_sum_assignment, min_weight_full_bipartite_matching

__all__ = ["min_weight_full_bipartite_matching", "linear_sum_assignment", "assignment", "AssignmentResult"]

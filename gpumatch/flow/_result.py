"""The result types of :func:`gpumatch.flow.maximum_flow` and
:func:`gpumatch.flow.minimum_cut` (re-exported by :mod:`gpumatch.flow`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["MaximumFlowResult", "MinimumCutResult"]


@dataclass
class MaximumFlowResult:
    """The result of :func:`maximum_flow`.

    Attributes
    ----------
    flow_value : int
        Value of the maximum flow (a NumPy ``int64``).
    flow : sparse matrix
        Skew-symmetric flow matrix: ``flow[u, v]`` is the net flow from `u`
        to `v`.  Its pattern is the input's plus its transpose, as in
        :class:`scipy.sparse.csgraph.MaximumFlowResult`; values are int64.
        CSR of the caller's kind: ``csr_array`` for a scipy sparse array,
        ``csr_matrix`` for a scipy sparse matrix (or an index tuple), and a
        ``cupyx.scipy.sparse.csr_matrix`` for cupyx/CuPy input.
    source_side : array of bool
        Source side of a minimum cut: the vertices that cannot reach the
        sink in the residual graph of the maximum flow.
    stats : dict
        ``iterations`` (discharge launches, both phases),
        ``phase2_iterations``, ``global_relabels``, ``relabel_period``
        (final), ``pairs_fixed`` (whether the period stopped adapting
        because the preflow ran mostly round anti-parallel pairs of arcs),
        ``backend``, ``layout``, ``method`` (``"push_relabel"``, or
        ``"unit_matching"`` for a unit bipartite network solved by matching,
        with ``left``, ``right``, ``algorithm`` and, on NumPy and CuPy,
        G-PR's statistics in ``matching``) and ``time`` (seconds per phase:
        ``setup``, ``phase1``, ``phase2``, ``output``).
    """

    flow_value: Any
    flow: Any
    source_side: Any = None
    stats: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"MaximumFlowResult with value of {int(self.flow_value)}"


@dataclass
class MinimumCutResult:
    """The result of :func:`minimum_cut`.

    Attributes
    ----------
    cut_value : int
        Capacity of the cut (equal to the maximum flow value).
    source_side : array of bool
        ``True`` for the vertices on the source side.
    cut_rows, cut_cols : arrays
        The cut arcs ``cut_rows[i] -> cut_cols[i]``: stored arcs of positive
        capacity from the source side to the sink side.
    """

    cut_value: Any
    source_side: Any
    cut_rows: Any
    cut_cols: Any

    def __iter__(self):
        return iter((self.cut_value, self.source_side, (self.cut_rows, self.cut_cols)))


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------

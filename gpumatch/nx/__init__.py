"""gpumatch as a NetworkX backend: ``nx.maximum_flow(G, s, t, backend="gpumatch")``.

Installed with ``pip install "gpumatch[networkx]"``, gpumatch registers the
NetworkX entry points ``networkx.backends`` (:data:`interface`, this
package) and ``networkx.backend_info`` (the import-free ``_gpumatch_nx``).
Served, with NetworkX's semantics: ``bipartite.hopcroft_karp_matching``
(and its alias ``bipartite.maximum_matching``), ``bipartite.eppstein_matching``,
``bipartite.to_vertex_cover``, ``bipartite.minimum_weight_full_matching``
(on the CPU assignment engine), ``maximum_flow``, ``maximum_flow_value``,
``minimum_cut``, ``minimum_cut_value`` and the residual-network functions
``preflow_push``, ``edmonds_karp``, ``dinitz``, ``shortest_augmenting_path``,
``boykov_kolmogorov``.  ``interface.can_run`` names what is declined and
why; a declined call runs in NetworkX when fallback is on.

This package is the only part of gpumatch that imports NetworkX.
"""

try:
    import networkx  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("gpumatch.nx needs NetworkX: pip install 'gpumatch[networkx]'") from exc

from ._graph import GpumatchGraph
from ._interface import CALLS, DECLINED, RESIDUAL, SERVED, BackendInterface, interface

__all__ = ["interface", "BackendInterface", "GpumatchGraph", "CALLS", "DECLINED", "SERVED", "RESIDUAL"]

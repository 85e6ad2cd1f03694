"""NetworkX's ``networkx.backend_info`` entry point for the gpumatch backend.

NetworkX calls :func:`get_info` while ``import networkx`` runs, for every
installed backend, to learn which functions it serves and its default
configuration.  This module is a separate top-level package on purpose:
an entry point ``gpumatch._something:get_info`` would first execute
``gpumatch/__init__.py``, which imports the solvers (NumPy, SciPy and, where
installed, CuPy with its device probe) -- work that ``import networkx`` must
not pay for.  It imports nothing, and nothing imports it but NetworkX.

The backend itself (the ``networkx.backends`` entry point) is
:mod:`gpumatch.nx`, loaded only when a call is dispatched to it.  The names
in ``FUNCTIONS`` must be the functions that :mod:`gpumatch.nx` serves; a
test checks that they agree.
"""

_RESIDUAL_DOCS = (
    "Runs gpumatch's push-relabel maximum flow and returns the residual network R that "
    "NetworkX documents: the edges and capacities of ``build_residual_network``, a maximum "
    "flow in the ``flow`` attributes, ``R.graph['flow_value']``, ``R.graph['inf']`` and "
    "``R.graph['algorithm']``. The flow is a maximum flow, not necessarily the one this "
    "algorithm would find, and the algorithm's own node attributes are not set. Declined "
    "(NetworkX runs instead): ``residual=``, ``cutoff=``, capacities that are not numbers or "
    "cannot be scaled exactly to 64-bit integers."
)

_INTERFACE_DOCS = (
    "Runs gpumatch's push-relabel maximum flow (the source side of the cut is the set of nodes "
    "that cannot reach the sink in the residual network, as in NetworkX). ``flow_func`` may be "
    "None or one of NetworkX's five maximum-flow functions, whose result any maximum flow "
    "meets; a custom ``flow_func``, ``residual=`` and ``cutoff=`` are declined (NetworkX runs)."
)

_MATCHING_DOCS = (
    "Runs gpumatch's G-PR push-relabel matching on the biadjacency matrix of the two node "
    "sets (NetworkX's ``bipartite.sets`` rules and errors). Directed graphs are declined."
)

_COVER_DOCS = (
    "Computes a maximum matching with gpumatch (starting from the given one) and its König "
    "cover: the same set NetworkX returns for a maximum matching, since that cover does not "
    "depend on which maximum matching is used. Directed graphs are declined."
)

_WEIGHTED_DOCS = (
    "Runs gpumatch's assignment engine (shortest augmenting paths with dual potentials, "
    "Numba) on the edges of the two node sets, without NetworkX's dense matrix: the same "
    "node sets and errors (``bipartite.sets``; ``ValueError`` when no full matching exists), "
    "a missing weight counts 1, ``inf`` is no edge, integer weights are exact. Several "
    "optimal matchings may exist; the total weight is NetworkX's. Declined: directed graphs, "
    "multigraphs, weights that are not real numbers, ``backend='cupy'``."
)

FUNCTIONS = {
    "hopcroft_karp_matching": _MATCHING_DOCS,
    "eppstein_matching": _MATCHING_DOCS,
    "to_vertex_cover": _COVER_DOCS,
    "minimum_weight_full_matching": _WEIGHTED_DOCS,
    "maximum_flow": _INTERFACE_DOCS,
    "maximum_flow_value": _INTERFACE_DOCS,
    "minimum_cut": _INTERFACE_DOCS,
    "minimum_cut_value": _INTERFACE_DOCS,
    "preflow_push": _RESIDUAL_DOCS,
    "edmonds_karp": _RESIDUAL_DOCS,
    "dinitz": _RESIDUAL_DOCS,
    "shortest_augmenting_path": _RESIDUAL_DOCS,
    "boykov_kolmogorov": _RESIDUAL_DOCS,
}


def get_info():
    """Describe the gpumatch backend to NetworkX (without importing gpumatch)."""
    return {
        "backend_name": "gpumatch",
        "project": "gpumatch",
        "package": "gpumatch",
        "short_summary": "Push-relabel maximum flow and bipartite matching on GPUs (CuPy) or CPUs (Numba), "
                         "weighted bipartite matching on CPUs.",
        "default_config": {"backend": "auto"},
        "functions": {name: {"additional_docs": doc} for name, doc in FUNCTIONS.items()},
    }

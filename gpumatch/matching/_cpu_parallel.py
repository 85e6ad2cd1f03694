"""Multi-threaded augmenting-path search of the CPU engine (``numba.prange``).

An alternative to Pothen–Fan+ (:func:`gpumatch.matching._cpu.pothen_fan`)
after Karp–Sipser, for large inputs on many cores: phases of a
*multi-source BFS* (MS-BFS, after Azad, Buluç and Pothen [1]_, without
their tree grafting) from every free column at once.  A phase grows one
alternating BFS tree per free column, level by level; the columns of a
level are split between the threads, and each tree stops growing once it
reaches a free row.  The trees' augmenting paths are then applied one by
one, skipping a path that meets a vertex already used in this phase.

Benign races, and why the result is still exact:

* two threads may claim the same row in the same level (``visited`` and
  ``parent`` are plain stores): the last store wins, and the row's parent is
  one of the columns that reached it in that level, so following parents
  goes strictly down the levels and ends at a free column (no cycle);
* a column may enter the next level twice (once per thread): extra work,
  nothing else;
* the tree that a row is credited to (``root``) may not be the tree its
  parents lead to, so the paths are traced by parents, and the sequential
  augmentation checks that each path is vertex-disjoint from the ones
  applied before it.  The first path of a phase always applies, so a phase
  that finds a free row augments; a phase that finds none has explored
  every row reachable by an alternating path from a free column, which
  proves the matching maximum (Berge).

Chosen by ``TUNING["parallel_min_nnz"]`` in :mod:`gpumatch.matching._cpu`
(None, the default: never).  On 2 cores it does not beat the serial
Pothen–Fan+ after Karp–Sipser (random 200k d5: 0.09 s against 0.08 s;
Delaunay 200k: 0.11 s against 0.07 s, with 2 threads), so PF+ stays the
default until a many-core machine says otherwise.

References
----------
.. [1] A. Azad, A. Buluç and A. Pothen, "Computing maximum cardinality
   matchings in parallel on bipartite graphs via tree-grafting", IEEE TPDS
   28(1), 2017. :doi:`10.1109/TPDS.2016.2546258`
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["ms_bfs"]


@numba.njit(cache=True, nogil=True)
def _expand(frontier, lo, hi, base, cptr, cind, mu_row, visited, parent, root, leaf, phase, nxt):
    """Expand the columns ``frontier[lo:hi]`` of a BFS level; their new
    columns go to ``nxt[base:]`` (each at most once: a row is claimed once
    per thread).  Returns how many."""
    cnt = 0
    for i in range(lo, hi):
        c = frontier[i]
        rt = root[c]
        if leaf[rt] >= 0:
            continue                  # this tree has its augmenting path
        for p in range(cptr[c], cptr[c + 1]):
            r = cind[p]
            if visited[r] == phase:
                continue
            visited[r] = phase        # (benign race: see the module notes)
            parent[r] = c
            c2 = mu_row[r]
            if c2 < 0:
                leaf[rt] = r
                break
            root[c2] = rt
            nxt[base + cnt] = c2
            cnt += 1
    return cnt


@numba.njit(cache=True, nogil=True, parallel=True)
def _level(frontier, nf, cptr, cind, mu_row, visited, parent, root, leaf, phase, nt, nxt, counts):
    """Expand one BFS level on `nt` threads: thread k takes the k-th slice
    of `frontier` and writes to ``nxt[k * stride:]`` (`stride`: the number
    of columns)."""
    stride = nxt.shape[0] // nt
    for k in numba.prange(nt):
        counts[k] = _expand(frontier, nf * k // nt, nf * (k + 1) // nt, k * stride, cptr, cind, mu_row, visited,
                            parent, root, leaf, phase, nxt)


@numba.njit(cache=True, nogil=True)
def ms_bfs(m, n, cptr, cind, mu_row, mu_col, stats, nt, par_min):
    """MS-BFS phases from every free column until a phase reaches no free
    row.  A level of at least `par_min` columns is split between `nt`
    threads; a smaller one is expanded by one (a parallel region costs more
    than it saves on a small level).

    `cptr` / `cind`: the rows of each column; `mu_row` / `mu_col` a
    consistent matching, extended in place.  ``stats[0]`` += phases,
    ``stats[1]`` += augmenting paths.
    """
    visited = np.zeros(m, np.int32)       # phase stamp of each row
    parent = np.empty(m, np.int32)        # column that reached the row
    root = np.empty(n, np.int32)          # tree of each reached column
    leaf = np.full(n, -1, np.int32)       # free row found by each tree (by root)
    used_r = np.zeros(m, np.int32)        # phase stamp: row on an applied path
    used_c = np.zeros(n, np.int32)
    frontier = np.empty(n, np.int32)
    nxt = np.empty(n * nt, np.int32)
    counts = np.zeros(nt, np.int64)
    roots = np.empty(n, np.int32)
    queued = np.zeros(n, np.int64)        # level stamp: column already in the next level
    level = 0
    phase = 0
    while True:
        phase += 1
        nr = 0
        for c in range(n):
            if mu_col[c] < 0 and cptr[c + 1] > cptr[c]:
                root[c] = c
                leaf[c] = -1
                roots[nr] = c
                nr += 1
        if nr == 0:
            break
        nf = nr
        frontier[:nr] = roots[:nr]
        while nf > 0:
            if nt > 1 and nf >= par_min:
                _level(frontier, nf, cptr, cind, mu_row, visited, parent, root, leaf, phase, nt, nxt, counts)
            else:
                counts[:] = 0
                counts[0] = _expand(frontier, 0, nf, 0, cptr, cind, mu_row, visited, parent, root, leaf, phase, nxt)
            stride = nxt.shape[0] // nt
            level += 1
            nf = 0
            for k in range(nt):           # the next level, each column once
                for j in range(counts[k]):
                    c = nxt[k * stride + j]
                    if queued[c] != level:
                        queued[c] = level
                        frontier[nf] = c
                        nf += 1
        # apply the paths one by one, each vertex-disjoint from the earlier ones
        paths = 0
        for i in range(nr):
            r = leaf[roots[i]]
            if r < 0:
                continue
            ok = True
            x = r
            while True:                    # check: rows and columns not used yet
                if used_r[x] == phase:
                    ok = False
                    break
                c = parent[x]
                if used_c[c] == phase:
                    ok = False
                    break
                x = mu_col[c]
                if x < 0:
                    break
            if not ok:
                continue
            x = r
            while True:                    # flip: each column takes the row below it
                c = parent[x]
                used_r[x] = phase
                used_c[c] = phase
                nx_ = mu_col[c]
                mu_col[c] = x
                mu_row[x] = c
                if nx_ < 0:
                    break
                x = nx_
            paths += 1
        stats[0] += 1
        stats[1] += paths
        if paths == 0:
            break

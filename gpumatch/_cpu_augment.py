"""Compiled CPU searches for augmenting paths (Numba): Pothen–Fan+ and
push-relabel with global relabels, the two stages that extend the CPU
matching engine's initial matching to a maximum one.
:mod:`gpumatch._cpu_match` chooses between them (``augment``: Pothen–Fan+
within its work budget, then push-relabel) and re-exports them; its
docstring says when each wins and cites the papers.

* :func:`pothen_fan`: phases of vertex-disjoint depth-first searches from
  every free column, with lookahead and fairness, until a phase augments
  nothing (which proves the matching maximum);
* :func:`push_relabel`: free columns pushed along the exact labels of
  :func:`global_relabel` (BFS distances to a free row), ``PUSH_LANES`` at
  once, so that the dependent reads of several paths overlap.

Both add to a statistics array whose slots are the ``_S_*`` constants.
All functions are ``numba.njit(cache=True)``; they specialise on the index
dtype of the graph.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["PUSH_LANES", "pothen_fan", "global_relabel", "push_relabel"]

#: Free columns that :func:`push_relabel` follows at once.
PUSH_LANES = 4

#: Slots of the engines' statistics array.
_S_PHASES, _S_PATHS, _S_GRAFTS, _S_RELABELS, _S_PUSHES, _S_WORK = range(6)


@numba.njit(cache=True, nogil=True)
def _free_columns(n, cptr, mu_col):
    """``(free, count)``: the free columns with at least one entry, in
    ``free[:count]`` (ascending)."""
    free = np.empty(n, np.int64)
    nfree = 0
    for c in range(n):
        if mu_col[c] < 0 and cptr[c + 1] > cptr[c]:
            free[nfree] = c
            nfree += 1
    return free, nfree


@numba.njit(cache=True, nogil=True)
def pothen_fan(m, n, cptr, cind, mu_row, mu_col, stats, budget=-1):
    """Pothen–Fan+ from every free column until a phase augments nothing.

    `cptr` / `cind`: the rows of each column (CSC); `mu_row` / `mu_col` a
    consistent matching, extended in place.  ``stats[0]`` += phases,
    ``stats[1]`` += augmenting paths, ``stats[5]`` += edges looked at
    (when `stats` has that slot).

    `budget` (< 0: none): after a phase that augmented, stop once the
    phases have looked at more than `budget` edges, and return True (the
    matching is then not proved maximum; :func:`push_relabel` finishes
    it).  Returns False when a phase found no augmenting path.
    """
    visited = np.zeros(m, np.int64)          # phase stamp of each row
    look = np.empty(n, np.int64)             # lookahead position of each column
    for c in range(n):
        look[c] = cptr[c]
    stack = np.empty(n + 1, np.int64)        # columns of the search path
    pos = np.empty(n + 1, np.int64)          # next row position to try, per level
    via = np.empty(n + 1, np.int64)          # row from level i to level i + 1
    free, nfree = _free_columns(n, cptr, mu_col)
    phase = 0
    work = 0          # edges looked at, all phases
    counted = 0
    while nfree > 0:
        phase += 1
        forward = (phase & 1) == 1
        paths = 0
        kept = 0
        for i in range(nfree):
            c0 = free[i]
            top = 0
            stack[0] = c0
            pos[0] = cptr[c0] if forward else cptr[c0 + 1] - 1
            found = -1
            while top >= 0:
                c = stack[top]
                # lookahead: a free row among the rows not looked at yet
                p = look[c]
                e = cptr[c + 1]
                while p < e:
                    r = cind[p]
                    p += 1
                    if mu_row[r] < 0:
                        found = r
                        break
                work += p - look[c] + 1
                look[c] = p
                if found >= 0:
                    break
                # depth-first step to the next unvisited row
                nx = -1
                q = pos[top]
                if forward:
                    while q < e:
                        r = cind[q]
                        q += 1
                        if visited[r] != phase:
                            nx = r
                            break
                else:
                    b = cptr[c]
                    while q >= b:
                        r = cind[q]
                        q -= 1
                        if visited[r] != phase:
                            nx = r
                            break
                work += q - pos[top] if forward else pos[top] - q
                pos[top] = q
                if nx < 0:
                    top -= 1
                    continue
                visited[nx] = phase
                c2 = mu_row[nx]
                if c2 < 0:  # pragma: no cover - the lookahead takes free rows first
                    found = nx
                    break
                via[top] = nx
                top += 1
                stack[top] = c2
                pos[top] = cptr[c2] if forward else cptr[c2 + 1] - 1
            if found >= 0:
                # flip the path: level i's column takes via[i], the last one the free row
                r = found
                for lvl in range(top, -1, -1):
                    c = stack[lvl]
                    mu_col[c] = r
                    mu_row[r] = c
                    if lvl > 0:
                        r = via[lvl - 1]
                paths += 1
            else:
                free[kept] = c0
                kept += 1
        nfree = kept
        stats[0] += 1
        stats[1] += paths
        if stats.shape[0] > _S_WORK:
            stats[_S_WORK] += work - counted
        counted = work
        if paths == 0:
            return False
        if 0 <= budget < work:
            return nfree > 0
    return False


@numba.njit(cache=True, nogil=True)
def global_relabel(m, rptr, rind, mu_row, mu_col, label, queue):
    """Exact row labels: ``label[r]`` = the fewest matched edges on an
    alternating path from row `r` to a free row (a breadth-first search
    backwards from every free row: row -> a column of it -> that column's
    mate), ``m + 1`` where no free row is reachable.  `queue`: scratch of
    at least `m` slots.  Returns the rows reached."""
    inf = m + 1
    qt = 0
    for r in range(m):
        if mu_row[r] < 0:
            label[r] = 0
            queue[qt] = r
            qt += 1
        else:
            label[r] = inf
    qh = 0
    while qh < qt:
        r = queue[qh]
        qh += 1
        d = label[r] + 1
        for p in range(rptr[r], rptr[r + 1]):
            r2 = mu_col[rind[p]]
            if r2 >= 0 and label[r2] == inf:
                label[r2] = d
                queue[qt] = r2
                qt += 1
    return qt


@numba.njit(cache=True, nogil=True)
def push_relabel(m, n, rptr, rind, cptr, cind, mu_row, mu_col, stats):
    """Push-relabel from every free column, with global relabels, to a
    maximum matching (after Kaya, Langguth, Manne and Uçar [4]_).

    Each row carries a label, a lower bound on the matched edges between
    it and a free row (:func:`global_relabel` makes them exact).  A free
    column *pushes*: it takes its row of least label (a free row ends the
    path), the row's old mate becomes free and pushes next, and the row is
    *relabelled* to one more than the column's second-least label.  A
    column whose rows are all at ``m + 1`` has no augmenting path (labels
    stay valid lower bounds) and stays free.  Columns are taken in order,
    each followed along its path until it ends.

    Work is counted in edges looked at; once it passes ``nnz + m + n``
    since the last global relabel, the labels are made exact again, so the
    relabels cost at most as much as the pushes.  On matrices whose
    augmenting paths are long (shuffled block-triangular Jacobians) this
    finds them without the full-graph searches of a phase per path that
    Pothen–Fan+ pays there.

    `rptr` / `rind`: the columns of each row (CSR); `cptr` / `cind`: the
    rows of each column (CSC); `mu_row` / `mu_col`: a consistent matching,
    extended in place.  ``stats[3]`` += global relabels, ``stats[4]`` +=
    pushes, ``stats[5]`` += edges looked at.
    """
    inf = m + 1
    free, nfree = _free_columns(n, cptr, mu_col)
    if nfree == 0:
        return
    label = np.empty(m, rind.dtype)      # (ids hold m + 1): half the cache of int64 labels
    queue = np.empty(m + 1, np.int64)
    budget = rptr[m] + m + n
    work = global_relabel(m, rptr, rind, mu_row, mu_col, label, queue)
    total = work
    stats[_S_RELABELS] += 1
    pushes = 0
    lanes = np.full(PUSH_LANES, -1, np.int64)   # the columns being followed
    nxt = 0
    live = 0
    for k in range(PUSH_LANES):
        if nxt < nfree:
            lanes[k] = free[nxt]
            nxt += 1
            live += 1
    while live > 0:
        for k in range(PUSH_LANES):
            c = lanes[k]
            if c < 0:
                continue
            if work >= budget:
                work = global_relabel(m, rptr, rind, mu_row, mu_col, label, queue)
                total += work
                stats[_S_RELABELS] += 1
            b = cptr[c]
            e = cptr[c + 1]
            work += e - b + 1
            total += e - b + 1
            best = -1
            l1 = inf
            l2 = inf
            for p in range(b, e):
                lr = label[cind[p]]
                if lr < l1:
                    l2 = l1
                    l1 = lr
                    best = cind[p]
                elif lr < l2:
                    l2 = lr
            nc = -1
            if l1 < inf:                     # (else no augmenting path from c: it stays free)
                c2 = mu_row[best]            # push: c takes its lowest row
                mu_row[best] = c
                mu_col[c] = best
                label[best] = min(l2 + 1, inf)
                pushes += 1
                if c2 >= 0:
                    mu_col[c2] = -1
                    nc = c2                  # the displaced column pushes next
            if nc < 0:                       # the path ended: the next free column
                if nxt < nfree:
                    nc = free[nxt]
                    nxt += 1
                else:
                    live -= 1
            lanes[k] = nc
    stats[_S_PUSHES] += pushes
    stats[_S_WORK] += total

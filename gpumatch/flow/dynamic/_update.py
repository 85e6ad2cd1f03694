"""Batches of capacity changes for :class:`~gpumatch.flow.MaxFlowSolver`.

:meth:`~gpumatch.flow.MaxFlowSolver.update_capacities` classifies every
changed arc against the kept minimum cut (NumPy, or one CUDA launch of
``gpumatch_dyn_classify``), cuts the flow of arcs whose capacity fell below
it and pushes the new residual of raised arcs of the cut, bounded by what
can use it a few arcs away (:func:`_side_room`, the NumPy twin of
``dyn_side_room`` in ``flow/dynamic.cu``).  The overview is the docstring
of :mod:`gpumatch.flow.dynamic._dynamic`.
"""

from __future__ import annotations


import itertools

import numpy as np

from ... import _backend, _cuda
from ..._typing import IndexLike
from .. import _maxflow as _mf

from ._repair import REPAIR, _pair_min, _pairing, _scatter_add

def _side_room(net, x, frm, depth, into, want, term):
    """What vertex `x` can still take in from its own side of the kept cut
    (`into`: the residual of its in-arcs from that side, the flow of its
    out-arcs into it, its excess) or pass on into it (the reverse, its
    deficit), at most `want`, `depth` arcs away: with depth 2 each arc's
    term is capped by its other end's room one arc further (arcs back to
    `frm` not counted).  `term` is the side's terminal (unbounded room).
    `net`: host arrays ``indptr``, ``in_indptr``, ``in_to_out`` (reverse
    CSR), ``tail``, ``head``, ``cap``, ``flow`` (per arc), ``side``,
    ``excess`` (per vertex).  The NumPy twin of ``dyn_side_room`` of
    ``flow/dynamic.cu`` (its arcs in the kernel's order; the sum stops at
    `want`, lazily, as the kernel's does on a hub).
    """
    if x == term:
        return want
    side, cap, flow = net["side"], net["cap"], net["flow"]
    mine = bool(side[x])
    e = int(net["excess"][x])
    total = max(e, 0) if into else max(-e, 0)
    ins = net["in_to_out"][net["in_indptr"][x]:net["in_indptr"][x + 1]]
    arcs_ends = itertools.chain(
        ((int(net["tail"][b]), cap[b] - flow[b] if into else flow[b]) for b in ins),
        ((int(net["head"][b]), flow[b] if into else cap[b] - flow[b])
         for b in range(int(net["indptr"][x]), int(net["indptr"][x + 1]))))
    for y, r in arcs_ends:
        if total >= want:
            break
        if y == frm or bool(side[y]) != mine:
            continue
        r = int(r)
        if r > 0 and depth > 1:
            r = _side_room(net, y, x, depth - 1, into, r, term)
        total += r
    return min(total, want)



class _UpdateMixin:
    """:meth:`update_capacities` and its classification (methods of :class:`~gpumatch.flow.MaxFlowSolver`)."""

    @_backend.serialized
    @_backend.device_entry
    def update_capacities(self, rows: IndexLike, cols: IndexLike, new_capacities: IndexLike) -> None:
        """Set the capacities of a batch of existing arcs ``rows[i] -> cols[i]``.

        Parameters
        ----------
        rows, cols : array_like of int
            Tails and heads of stored arcs (NumPy or CuPy arrays, or lists),
            each arc at most once per batch.
        new_capacities : array_like of int
            Their new non-negative integer capacities (increase or decrease).

        Raises
        ------
        ValueError
            Different lengths, non-integer or negative capacities, a vertex
            out of range, an arc that is not a stored entry, or one arc twice.
            The whole batch is checked first: on error nothing changes.
        OverflowError
            When the capacity out of the source would not fit int64.

        Notes
        -----
        Where a capacity drops below the current flow on its arc, the flow is
        cut to the new capacity at once (excess at the tail, deficit at the
        head); where an arc from the source side of the last minimum cut to
        the sink side gains capacity, the new residual is pushed along it
        (excess at the head, deficit at the tail), as much of it as its ends
        can use a few arcs away (``REPAIR["push_bound"]``).  The next
        :meth:`solve` repairs and re-maximises the flow.  All checks of a batch share one
        read-back from the device.
        """
        rows = self._as_index(rows, "rows")
        cols = self._as_index(cols, "cols", rows.shape[0])
        caps = self._as_index(new_capacities, "new_capacities", rows.shape[0])
        n = int(rows.shape[0])
        if n == 0:
            return
        V = self._V
        classify = self._classify_cuda if self.backend == "cupy" else self._classify_xp
        h, apply = classify(rows, cols, caps)
        if h["min_cap"] < 0:
            raise ValueError(f"new_capacities must be non-negative, got {h['min_cap']}")
        for what, lo_v, hi_v in (("rows", h["min_row"], h["max_row"]), ("cols", h["min_col"], h["max_col"])):
            if lo_v < 0 or hi_v >= V:
                raise ValueError(f"{what}: vertex {lo_v if lo_v < 0 else hi_v} is out of range [0, {V})")
        if h["dup"] is not None:
            raise ValueError(f"arc ({h['dup'][0]}, {h['dup'][1]}) appears more than once in the batch")
        if h["miss"] is not None:
            raise ValueError(f"({h['miss'][0]}, {h['miss'][1]}) is not an arc of the graph "
                             "(only the capacities of stored entries can change)")
        src_total = self._src_total + (h["src_hi"] << 32) + h["src_lo"]
        if src_total > _mf._I64_MAX:
            raise OverflowError("the total capacity out of the source would not fit int64")
        # --- all checks passed: apply ---
        pushed = apply(h["moved"] > 0, h["pushed"])
        self._moved = self._moved or h["moved"] > 0
        self._src_total = src_total
        self._cap_cut += (h["cut_hi"] << 32) + h["cut_lo"]
        self._pending += n
        self._pushed += pushed
        self._cut_flow += h["cut_flow"]
        self._paired_flow += h["paired_flow"]
        self._result = None

    def _classify_xp(self, rows, cols, caps):
        """Check and classify a batch (vectorised; the NumPy twin of ``gpumatch_dyn_classify``).

        Returns the host summary (the checks' values, the exact capacity
        changes of the source's arcs and of the cut's arcs as sums of 32-bit
        halves, the number of arcs whose flow moves and how many of those
        push new flow across the cut) and the function that applies the
        batch.
        """
        xp, V, nnz, E = self._xp, self._V, self._nnz, self._E
        n = int(rows.shape[0])
        Vl = np.int64(max(V, 1))
        keys = rows * Vl + cols
        if nnz:
            at = xp.minimum(xp.searchsorted(self._keys, keys), nnz - 1)
            found = self._keys[at] == keys
            arc = self._arc_of[at]
        else:
            at = xp.zeros(n, dtype=np.int64)
            found = xp.zeros(n, dtype=bool)
            arc = xp.full(n, -1, dtype=np.int64)
        miss = xp.argmax(~found)           # the first arc that is not stored (0 if every one is)
        if n > 1:
            sk = xp.sort(keys)
            dup = sk[1:] == sk[:-1]
            first = xp.argmax(dup)
            dup_any, dup_key = dup[first], sk[first + 1]
        else:
            dup_any, dup_key = xp.zeros((), dtype=bool), keys[0]
        a = xp.where(arc >= 0, arc, E)     # self-loops (and misses, rejected) -> the dummy slot
        old = self._cap_p[a]
        f = self._flow_p[a]
        u, v = self._tail_p[a], self._head_p[a]
        cross = self._side[u] & ~self._side[v]       # arcs of the cut S -> T (never the dummy)
        # a cut below the flow moves the flow down to the new capacity; an
        # increase on a saturated arc of the cut pushes the new residual at
        # once: the tail gains `d` and the head loses it (d < 0: the reverse)
        d = xp.where(f > caps, f - caps, xp.where(cross & (caps > old) & (f == old), old - caps, 0))
        lo = np.int64(0xFFFFFFFF)

        def halves(mask):
            return (xp.where(mask, (caps >> 32) - (old >> 32), 0).sum(),
                    xp.where(mask, (caps & lo) - (old & lo), 0).sum())

        def cut_halves(mask):
            return xp.where(mask, d >> 32, 0).sum(), xp.where(mask, d & lo, 0).sum()

        ps, pe = self._s_out
        s, t = self.source, self.sink
        paired = (d >= _pair_min()) & (u != s) & (u != t) & (v != s) & (v != t)
        vals = (caps.min(), rows.min(), rows.max(), cols.min(), cols.max(), dup_any, dup_key, ~found[miss],
                rows[miss], cols[miss], *halves((a >= ps) & (a < pe)), *halves(cross), (d != 0).sum(), (d < 0).sum(),
                *cut_halves(d > 0), *cut_halves((d > 0) & paired))
        r = _backend.to_numpy(xp.stack([xp.asarray(x, dtype=np.int64) for x in vals])).tolist()
        h = dict(zip(("min_cap", "min_row", "max_row", "min_col", "max_col"), r[:5]))
        h["dup"] = (r[6] // int(Vl), r[6] % int(Vl)) if r[5] else None
        h["miss"] = (r[8], r[9]) if r[7] else None
        h.update(zip(("src_hi", "src_lo", "cut_hi", "cut_lo", "moved", "pushed"), r[10:16]))
        h["cut_flow"], h["paired_flow"] = (r[16] << 32) + r[17], (r[18] << 32) + r[19]

        def apply(moved, pushed):
            self._data[at] = caps
            self._cap_p[a] = caps
            self._capT_p[self._oti_p[a]] = caps
            if not moved:
                return 0
            bound = pushed and REPAIR.get("push_bound")
            dd = xp.where(d > 0, d, 0) if bound else d
            self._flow_p[a] = f - dd          # the dummy slot gets 0 - 0
            _scatter_add(xp, self._excess, u, dd)
            _scatter_add(xp, self._excess, v, -dd)
            if bound:
                # the pushes, each bounded by what its ends can use (after the cuts)
                dd = self._push_bound_xp(a, xp.where(d < 0, d, 0), int(bound))
                self._flow_p[a] -= dd
                _scatter_add(xp, self._excess, u, dd)
                _scatter_add(xp, self._excess, v, -dd)
                dd = xp.where(d > 0, d, dd)
                pushed = int((dd < 0).sum())
            if _pairing():
                self._reroute.append((a, dd))
            return pushed

        return h, apply

    def _push_bound_xp(self, arcs, d, least):
        """The NumPy twin of ``gpumatch_dyn_push_bound``: each push ``d[i] < 0``
        of at least `least` units on arc ``arcs[i]`` (tail on the source side
        of the kept cut, head on the sink side) bounded by what its tail can
        still take in from its side and its head can still pass on into its
        side, ``REPAIR["push_bound_hops"]`` arcs away (``REPAIR["push_bound"]``,
        :func:`_side_room`); returns the new ``d``."""
        L = self._L
        net = {"indptr": L["indptr"], "in_indptr": L["in_indptr"], "in_to_out": L["in_to_out"],
               "tail": self._tail_p, "head": self._head_p, "cap": self._cap_p, "flow": self._flow_p,
               "side": self._side, "excess": self._excess}
        depth = int(REPAIR.get("push_bound_hops") or 1)
        out = d.copy()
        for i in np.flatnonzero(d <= -least):
            a = int(arcs[i])
            p = _side_room(net, int(net["tail"][a]), -1, depth, True, -int(d[i]), self.source)
            if p > 0:
                p = _side_room(net, int(net["head"][a]), -1, depth, False, p, self.sink)
            out[i] = -p
        return out

    def _classify_cuda(self, rows, cols, caps):
        """As :meth:`_classify_xp` with the kernels of ``flow/dynamic.cu`` (one read-back)."""
        cp = _backend.cp
        n, nnz, E = int(rows.shape[0]), self._nnz, self._E
        rows, cols, caps = (cp.ascontiguousarray(x) for x in (rows, cols, caps))
        if self._claim is None or self._batch_id >= (1 << 31) - 2:
            self._claim = cp.zeros(max(nnz, 1), dtype=np.int32)
            self._batch_id = 0
        self._batch_id += 1
        big, small = _mf._I64_MAX, -_mf._I64_MAX - 1
        acc = cp.asarray(np.array([big, big, small, big, small, big, big] + [0] * 10, dtype=np.int64))
        at = cp.empty(n, dtype=np.int64)
        slot = cp.empty(n, dtype=np.int64)
        d = cp.empty(n, dtype=np.int64)
        grid = (max(1, min((n + 255) // 256, 4096)),)
        k = _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_classify")
        ps, pe = self._s_out
        k(grid, (256,), (rows, cols, caps, np.int64(n), self._keys, np.int64(nnz), self._arc_of, np.int64(self._V),
                         np.int64(E), self._cap_p, self._flow_p, self._tail_p, self._head_p, self._side,
                         np.int64(ps), np.int64(pe), self._claim, np.int32(self._batch_id), np.int64(_pair_min()),
                         np.int64(self.source), np.int64(self.sink), at, slot, d, acc))
        r = [int(x) for x in acc.get()]
        h = dict(zip(("min_cap", "min_row", "max_row", "min_col", "max_col"), r[:5]))
        h["dup"] = (int(rows[r[5]]), int(cols[r[5]])) if r[5] != big else None
        h["miss"] = (int(rows[r[6]]), int(cols[r[6]])) if r[6] != big else None
        h.update(zip(("src_hi", "src_lo", "cut_hi", "cut_lo", "moved", "pushed"), r[7:13]))
        h["cut_flow"], h["paired_flow"] = (r[13] << 32) + r[14], (r[15] << 32) + r[16]

        def apply(moved, pushed):
            k2 = _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_apply")
            bound = moved and pushed and REPAIR.get("push_bound")
            args = (caps, np.int64(n), at, slot, d, self._data, self._cap_p, self._flow_p, self._capT_p,
                    self._oti_p, self._tail_p, self._head_p, self._excess, np.int64(E))
            k2(grid, (256,), args + (np.int32(1 if bound else 0),))
            if bound:
                # the pushes, each bounded by what its ends can use (after the cuts)
                L, count = self._L, cp.zeros(1, dtype=np.int64)
                kb = _cuda.get_kernel("flow/dynamic.cu", "gpumatch_dyn_push_bound", _cuda.index_defines(self._idt))
                kb(grid, (256,), (np.int64(n), slot, d, self._cap_p, self._flow_p, self._tail_p, self._head_p,
                                  self._side, self._excess, L["indptr"], L["in_indptr"], L["in_to_out"],
                                  np.int64(self.source), np.int64(self.sink), np.int64(bound),
                                  np.int32(REPAIR.get("push_bound_hops") or 1), count))
                k2(grid, (256,), args + (np.int32(2),))
                pushed = int(count.get()[0])
            if moved and _pairing():
                self._reroute.append((slot, d))
            return pushed if moved else 0

        return h, apply

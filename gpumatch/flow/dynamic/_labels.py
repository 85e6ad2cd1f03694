"""Steps of the global relabels of a dynamic max-flow repair (NumPy and CUDA twins).

A phase of :class:`~gpumatch.flow.MaxFlowSolver`'s repair (X or D) pushes
excess towards two tiers of targets: near ones at height 0 and far ones at
``far_level``.  Its global relabel is a BFS from the near targets, then
one from the far targets over what the first missed.  With the settings
of small batches and a *sealed* kept cut (no residual arc leads into the
near targets' side) both BFS stop once the excess of their side has a
height (``_Phase._relabel_split``); otherwise both run to their end
(``_Phase._relabel_full``).  Around those BFS the relabel classifies
vertices and builds lists; done with array expressions on the GPU that
was a dozen launches and five read-backs per relabel (about 2-3 ms on a
1M-vertex network, more than its BFS on RLG).  Here each step is one
pass over the vertices:

``start``
    heights -1 everywhere but 0 at the near targets; lists the near
    targets, the far targets and the excess on the near side (the watch of
    a first BFS that stops early);
``middle``
    after the first BFS: the unlabelled vertices of the near side get
    `fill` (when that BFS stopped early; -1: they stay unlabelled); lists
    the excess left without a height (for the far return);
``far``
    the far targets without a height get ``far_level``; lists them (the
    frontier of the second BFS) and the excess still without a height
    (its watch);
``finish``
    the vertices still without a height get `fill`; lists the active ones
    (excess, height below ``hlimit``, not a terminal): the worklist of the
    next discharge.

The CUDA twin (``flow/labels.cu``) appends to its lists with atomics, so
their order varies (the BFS levels do not depend on it; the discharge is
correct in any order); the NumPy twin lists in vertex order.  Both return
index arrays of the solver's index type.  The CUDA twin's lists share three
buffers: a list is valid until the step after the one that uses it
(``far`` overwrites the near targets, ``finish`` the far frontier).
"""

import numpy as np

from ... import _backend, _cuda

_BLOCK = 256


class _Numpy:
    """NumPy twin of ``flow/labels.cu``."""

    def __init__(self, V, idt):
        self.V, self.idt = V, idt

    def _inner(self, s, t):
        inner = np.ones(self.V, dtype=bool)
        inner[[s, t]] = False
        return inner

    def _list(self, mask):
        return np.nonzero(mask)[0].astype(self.idt)

    def start(self, excess, height, side, near_t, far_t, s, t, deficits):
        inner = self._inner(s, t)
        deficit = inner & (excess < 0) if deficits else np.zeros(self.V, dtype=bool)
        near = deficit & side
        near[near_t] = True
        far = deficit & ~near
        far[far_t] = True
        height.fill(-1)
        height[near] = 0
        watch = inner & (excess > 0) & side & ~near & ~far
        return self._list(near), self._list(far), self._list(watch)

    def middle(self, excess, height, side, fill, s, t):
        if fill >= 0:
            height[(height < 0) & side] = fill
        return self._list(self._inner(s, t) & (excess > 0) & (height < 0))

    def far(self, excess, height, far, far_level, s, t):
        far = far[height[far] < 0]
        height[far] = far_level
        return far, self._list(self._inner(s, t) & (excess > 0) & (height < 0))

    def finish(self, excess, height, fill, hlimit, s, t):
        height[height < 0] = fill
        return self._list(self._inner(s, t) & (excess > 0) & (height < hlimit))


class _Cuda:
    """Launchers of the ``flow/labels.cu`` kernels (one read-back each)."""

    def __init__(self, V, idt):
        cp = _backend.cp
        self.V, self.idt = V, idt
        defines = _cuda.index_defines(idt)
        self.k = {name: _cuda.get_kernel("flow/labels.cu", f"gpumatch_lb_{name}", defines)
                  for name in ("start", "middle", "far", "finish")}
        n = max(V, 1)
        # three lists, each reused once what it held was consumed (a BFS
        # copies its frontier and reads its watch before the next step):
        # 0: near targets, then the far BFS's frontier, then the worklist;
        # 1: far targets; 2: the first watch, then the excess left, then
        # the second watch
        self.lists = [cp.empty(n, dtype=idt) for _ in range(3)]
        self.count = cp.zeros(3, dtype=np.uint64)
        self.grid = (max(1, min((V + _BLOCK - 1) // _BLOCK, 4096)),)

    def _launch(self, name, args, lists):
        self.count.fill(0)
        self.k[name](self.grid, (_BLOCK,), (np.int64(self.V),) + args + (self.count,))
        n = self.count[:len(lists)].get()
        return tuple(self.lists[j][:int(n[i])] for i, j in enumerate(lists))

    def start(self, excess, height, side, near_t, far_t, s, t, deficits):
        b = self.lists
        return self._launch("start", (excess, side, np.int64(near_t), np.int64(far_t), np.int64(s), np.int64(t),
                                      np.int32(bool(deficits)), height, b[0], b[1], b[2]), (0, 1, 2))

    def middle(self, excess, height, side, fill, s, t):
        return self._launch("middle", (excess, side, np.int32(fill), np.int64(s), np.int64(t), height,
                                       self.lists[2]), (2,))[0]

    def far(self, excess, height, far, far_level, s, t):
        # (far lies in lists[1]; the frontier goes to lists[0], the watch to lists[2])
        b = self.lists
        return self._launch("far", (excess, far, np.int64(far.shape[0]), np.int32(far_level), np.int64(s),
                                    np.int64(t), height, b[0], b[2]), (0, 2))

    def finish(self, excess, height, fill, hlimit, s, t):
        return self._launch("finish", (excess, np.int32(fill), np.int32(hlimit), np.int64(s), np.int64(t),
                                       height, self.lists[0]), (0,))[0]


def steps(backend, V, idt):
    """The twin of `backend` for a network of `V` vertices (kept by the solver)."""
    return _Cuda(V, idt) if backend == "cupy" else _Numpy(V, idt)

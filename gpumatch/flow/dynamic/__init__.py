"""Dynamic maximum flow: :class:`MaxFlowSolver` re-solves after batches of capacity changes.

Above the static solver of :mod:`gpumatch.flow` (whose driver, kernels and
tuning it uses) and read apart from it:

* ``_dynamic.py``: the solver (state, solve from scratch or repair, results)
  and its one-time CUDA warm-up;
* ``_update.py``: a batch of capacity changes applied to the residual network;
* ``_repair.py``: the repair phases, with the passes of ``_paths.py``
  (disjoint BFS trees from every imbalance), ``_detour.py`` (rerouting
  excess) and the labels of ``_labels.py``;
* ``_warmup.py``: the network and batches of the warm-up.

Their CUDA kernels (``paths.cu``, ``detour.cu``, ``dynamic.cu``,
``labels.cu``) stay beside the static ones in ``gpumatch/flow/``: the
shipped pre-built cubins are keyed on each file's path.
:class:`MaxFlowSolver` is public as :class:`gpumatch.MaxFlowSolver` and
``gpumatch.flow.MaxFlowSolver``.
"""

from ._dynamic import MaxFlowSolver

__all__ = ["MaxFlowSolver"]

#!/usr/bin/env python3
"""A/B of repair settings on the same flows: each batch repaired once per variant from one saved state (GPU).

    python benchmarks/probe_same_state.py --cases unit --variants "cross_proof=True;cross_proof=False"
    python benchmarks/probe_same_state.py --cases unit,genrmf --kinds mixed --up-to 0.0011 --repeats 5

Timing a setting by separate runs of ``bench_dynamic.py`` or
``trace_dynamic.py`` compares repairs that start from different flows: each
process's solves from scratch leave their own maximum flow (the GPU's
push-relabel is racy, and its adaptive relabel period comes out
differently from run to run), and repairs of one batch from two such
flows can differ by more than the setting does.  This probe replays the
flow batches of ``bench_dynamic.py --only flow`` (same seed and order) on
one :class:`~gpumatch.flow.MaxFlowSolver` without a time budget.  For
each batch of a listed kind and of at most ``--up-to`` of the arcs, it
applies the update once, saves the solver's state (its arrays, copied on
the device, and its scalars), and then, ``--repeats`` times, restores
that state and times ``solve()`` under each variant in turn (the order
rotates from round to round), between device syncs, after the GPU was
kept busy as ``bench_dynamic.py`` does before its timed parts.  Every
variant must reach the same flow value; the probe stops with an error
otherwise.  Beside each time: the mode, whether phase F ran, the path
passes ``(phase, passes, levels, paths)`` and the detour passes
``(pairs, paths, amount)`` of the last solve.  The chain of states then goes on from the first variant's
repair (solved once more from the saved state); the other batches are
solved with the defaults, untimed.

A variant is ``'key=value,...'`` as ``--flow-repair`` of
``bench_dynamic.py`` takes it (``REPAIR`` keys, ``tuning.*``,
``paths.*``, ``small.*``), variants separated by ``;``; the empty
variant is the defaults.  The output gives, per batch, each variant's
median and spread in ms with its phase F flag and path passes, and a table
per network of the medians over the batches of each kind and size.
"""

from __future__ import annotations

import argparse
import collections
import copy
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

#: Attributes of the solver that a solve sets from None and the restore sets back.
_RESET_NONE = ("_result", "_abandon_at", "_deadline")


def _is_array(x):
    return isinstance(x, np.ndarray) or type(x).__module__.startswith("cupy")


class Snapshot:
    """The state of a :class:`~gpumatch.flow.MaxFlowSolver` between an update
    and a solve: its array attributes and the arrays of its dict attributes
    (copied; restored in place where the solve kept the same array, so that
    views of them stay views), and its scalar and list attributes.  Objects
    such as the kernels' buffers are scratch space and are kept as they are."""

    def __init__(self, solver):
        self.arrays, self.dict_arrays, self.plain = [], [], {}
        for name, v in vars(solver).items():
            if _is_array(v):
                self.arrays.append((name, v, v.copy()))
            elif isinstance(v, dict):
                for k, a in v.items():
                    if _is_array(a):
                        self.dict_arrays.append((v, k, a, a.copy()))
            elif v is None or isinstance(v, (bool, int, float, str, np.generic)):
                self.plain[name] = v
            elif isinstance(v, list):
                self.plain[name] = list(v)

    def restore(self, solver):
        for name, obj, saved in self.arrays:
            cur = getattr(solver, name)
            if cur is obj:
                cur[...] = saved
            else:
                setattr(solver, name, saved.copy())
        for d, k, obj, saved in self.dict_arrays:
            if d.get(k) is obj:
                obj[...] = saved
            else:
                d[k] = saved.copy()
        for name, v in self.plain.items():
            cur = getattr(solver, name, None)
            if v is None and cur is not None and name not in _RESET_NONE:
                continue            # scratch objects made by the solve stay
            setattr(solver, name, list(v) if isinstance(v, list) else v)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="unit", help="comma-separated prefixes of the networks")
    ap.add_argument("--kinds", default="mixed", help="comma-separated kinds of batch to time")
    ap.add_argument("--up-to", type=float, default=0.0011, help="time batches of at most this fraction of the arcs")
    ap.add_argument("--variants", default=";cross_proof=True",
                    help="';'-separated variants, each 'key=value,...' (empty: the defaults)")
    ap.add_argument("--repeats", type=int, default=4, help="timed solves per variant and batch")
    ap.add_argument("--backend", default="cupy", choices=("cupy", "numpy"))
    args = ap.parse_args(argv)

    import bench_dynamic as B
    from gpumatch.flow import _dynamic as D, _maxflow, _paths

    variants = args.variants.split(";")
    kinds = set(args.kinds.split(","))
    # the settings each variant starts from
    saved = [(d, copy.deepcopy(d)) for d in (D.REPAIR, _maxflow.TUNING, _paths.LIMITS)]

    def use(variant):
        for d, orig in saved:
            d.clear()
            d.update(copy.deepcopy(orig))
        if variant:
            B.apply_overrides(variant)

    backend = args.backend
    sync = (lambda: B.sync(backend))
    print(f"# variants: {variants}", flush=True)
    summary = collections.OrderedDict()
    for name, C, s, t, batches in B.flow_replay([c for c in args.cases.split(",") if c]):
        use(variants[0])
        solver = D.MaxFlowSolver(B.to_dev(C, backend), s, t, backend=backend, time_budget=None)
        solver.solve()
        for kind, frac, rep, rows, cols, new in batches:
            r, c, n = (B.arr(a, backend) for a in (rows, cols, new))
            if kind not in kinds or frac > args.up_to:
                use(variants[0])
                solver.update_capacities(r, c, n)
                solver.solve()
                continue
            solver.update_capacities(r, c, n)
            snap = Snapshot(solver)
            times = collections.defaultdict(list)
            info = {}
            for k in range(args.repeats):
                order = variants[k % len(variants):] + variants[:k % len(variants)]
                for v in order:
                    snap.restore(solver)
                    use(v)
                    B.settle(backend)
                    t0 = time.perf_counter()
                    res = solver.solve()
                    sync()
                    times[v].append((time.perf_counter() - t0) * 1e3)
                    st = res.stats
                    info.setdefault(v, set()).add(int(res.flow_value))
                    info[(v, "st")] = (st.get("mode"), st.get("fallback"),
                                       [(p[0], p[1], p[2], p[3]) for p in st.get("path_passes") or []],
                                       [(d[0], d[3], d[4]) for d in st.get("detours") or []])
            values = set().union(*(info[v] for v in variants))
            if len(values) != 1:
                raise RuntimeError(f"{name} {kind} {frac:g} rep{rep}: the variants reached different values {values}")
            print(f"## {name} {kind} {frac:g} rep{rep}: value {values.pop()}", flush=True)
            for v in variants:
                ms = times[v]
                mode, fb, passes, detours = info[(v, "st")]
                print(f"   [{v or 'defaults'}] median {np.median(ms):.1f} ms (min {min(ms):.1f}, max {max(ms):.1f}) "
                      f"{mode} F {fb} passes {passes} detours {detours}", flush=True)
                summary.setdefault((name, kind, frac), collections.defaultdict(list))[v].append(float(np.median(ms)))
            # the chain goes on from the first variant's repair
            snap.restore(solver)
            use(variants[0])
            solver.solve()
        use("")
    print("\n| network | kind | batch | " + " | ".join(v or "defaults" for v in variants) + " |")
    print("|---|---|---|" + "---|" * len(variants))
    for (name, kind, frac), per in summary.items():
        cells = [" / ".join(f"{x:.1f}" for x in per[v]) + f" (median {np.median(per[v]):.1f})" for v in variants]
        print(f"| {name} | {kind} | {frac * 100:g} % | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

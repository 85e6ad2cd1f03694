#!/usr/bin/env python3
"""Interactive graph-cut segmentation: re-solve the minimum cut after each scribble.

Interactive segmentation (Boykov and Jolly's graph cut) works in rounds:
the program shows a minimum-cut segmentation, the user marks a few pixels
("this is foreground", "this is background"), and the cut is computed
again with those pixels tied to their terminal.  Each round changes the
capacities of a few terminal arcs only, which is what
:class:`gpumatch.flow.MaxFlowSolver` is for: ``update_capacities`` takes
the batch and ``solve`` repairs the previous maximum flow instead of
starting from zero.

The network is that of ``min_cut_segmentation.py`` (a noisy synthetic
image, 4-neighbour smoothness arcs, terminal arcs carrying the data
costs), except that every pixel keeps both terminal arcs, the unused ones
as explicit zeros, so that any of them can be raised later.  A simulated
user then scribbles, round after round, a disk of ``--radius`` pixels
into the largest connected region that the current segmentation gets
wrong, on the pixels whose true label is that of the region's centre: a
foreground scribble sets ``source -> p`` to a capacity larger than any cut
through ``p`` and ``p -> sink`` to 0, a background scribble the reverse.

After each round the example checks the dynamic cut value against a
solve from scratch (``gpumatch.flow.maximum_flow``; ``--no-compare``
skips it) and, with ``--scipy``, against
``scipy.sparse.csgraph.maximum_flow``, and prints the pixels still wrong
and both times.  It prints a line before each step that can take a while:
on a GPU the first solve of a process compiles the kernels (seconds on a
fresh machine; CuPy caches them on disk for later runs).  The last column is the solver's
``stats["mode"]``: ``dynamic`` for a repair, ``dynamic->scratch`` where a
repair ran past its time budget (``--time-budget``) and the solver
finished from scratch, ``scratch`` where it started from scratch at once
(after such a round, for batches larger than the abandoned one).

The example gives each repair up to one solve from scratch
(``--time-budget 1.0``) instead of the solver's default quarter, which
is sized for networks whose solve from scratch takes hundreds of
milliseconds.  Here a solve from scratch takes a few tens (an H100, 512 x
512 pixels) and a repair 9-23 ms, against 30-63 ms for ``maximum_flow``
(whose times include copying the network in and the flow out); with the
default budget nearly every repair ran out of time there and ended in a
solve from scratch as well.

    python examples/interactive_segmentation.py
    python examples/interactive_segmentation.py --size 512 --rounds 12 --out rounds.png
    python examples/interactive_segmentation.py --size 1024 --no-compare    # re-solves only
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

try:
    import gpumatch  # noqa: F401
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import numpy as np
import scipy.ndimage as ndi
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph

from gpumatch.backends import resolve_backend, synchronize, to_numpy, warm_up
from gpumatch.flow import MaxFlowSolver, maximum_flow
from min_cut_segmentation import save_panels, segmentation_network, synthetic_image


def next_scribble(mask, truth, radius):
    """The simulated user's next scribble: ``(pixels, label)`` (flat pixel
    indices and True for foreground), a disk of `radius` around the deepest
    pixel of the largest 4-connected region where `mask` and `truth`
    differ, restricted to the pixels whose true label is that pixel's; None
    when the segmentation is right everywhere."""
    wrong = mask != truth
    regions, n = ndi.label(wrong)
    if n == 0:
        return None
    sizes = np.bincount(regions.ravel())
    sizes[0] = 0
    region = regions == int(np.argmax(sizes))
    depth = ndi.distance_transform_edt(region)
    cy, cx = np.unravel_index(int(np.argmax(depth)), region.shape)
    label = bool(truth[cy, cx])
    yy, xx = np.ogrid[: mask.shape[0], : mask.shape[1]]
    disk = (yy - cy) ** 2 + (xx - cx) ** 2 <= radius ** 2
    return np.flatnonzero((disk & (truth == label)).ravel()), label


def terminal_arcs(pixels, label, s, t, hard):
    """The capacity batch that ties `pixels` to the source (`label` True) or the sink."""
    k = pixels.shape[0]
    rows = np.concatenate([np.full(k, s), pixels]).astype(np.int64)
    cols = np.concatenate([pixels, np.full(k, t)]).astype(np.int64)
    caps = np.concatenate([np.full(k, hard if label else 0), np.full(k, 0 if label else hard)]).astype(np.int64)
    return rows, cols, caps


def main(argv=None) -> dict:
    """Run the example; returns every round's cut values, times and errors."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=256, help="image side in pixels (default 256)")
    p.add_argument("--noise", type=float, default=90.0, help="noise standard deviation (grey levels)")
    p.add_argument("--smoothness", type=float, default=1.0, help="cost of a label change between neighbours")
    p.add_argument("--rounds", type=int, default=8, help="scribbles at most (default 8)")
    p.add_argument("--radius", type=int, default=None, help="scribble radius in pixels (default: size / 24)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--backend", choices=("auto", "numpy", "cupy", "numba"), default="auto")
    p.add_argument("--scipy", action="store_true", help="also check every round against scipy's maximum_flow")
    p.add_argument("--no-compare", action="store_true",
                   help="skip the solve from scratch after each round (its check and its time)")
    p.add_argument("--time-budget", default="1.0",
                   help="MaxFlowSolver's time_budget: a repair longer than this many solves from scratch "
                        "is abandoned for one ('none': never; default 1.0, the solver's own is 0.25)")
    p.add_argument("--out", default=None, help="write noisy | first | last segmentation | truth (PNG or PGM)")
    args = p.parse_args(argv)
    if args.size < 4 or args.rounds < 0:
        p.error("--size must be at least 4 and --rounds non-negative")
    try:
        budget = None if args.time_budget.lower() == "none" else float(args.time_budget)
    except ValueError:
        p.error(f"--time-budget must be a number or 'none', got {args.time_budget!r}")

    def say(*parts):
        print(*parts, flush=True)   # progress shows at once, also through a pipe

    h = w = args.size
    radius = args.radius if args.radius is not None else max(1, args.size // 24)
    say(f"building the {h} x {w} image and its network ...")
    truth, img = synthetic_image(h, w, args.noise, seed=args.seed)
    C, s, t = segmentation_network(img, args.noise, args.smoothness, keep_terminal_zeros=True)
    C = sp.csr_matrix(C)
    # more than any cut through one pixel can cost: its four smoothness
    # arcs and its largest terminal arc
    hard = int(C.data.max()) * 5 + 1
    backend = resolve_backend(args.backend)
    say(f"image {h} x {w}, noise sigma {args.noise:g}: network of {C.shape[0]} vertices, {C.nnz} arcs "
        f"({int((C.data == 0).sum())} terminal arcs at 0), backend {backend}")
    # load the engine once (on the first run after an install, compile it), outside the timing
    say(f"loading the {backend} engine: {warm_up(backend, ['flow']):.2f} s (once per process)")
    say("first cut: setting up the solver and solving from scratch ...")

    t0 = time.perf_counter()
    solver = MaxFlowSolver(C, s, t, backend=backend, time_budget=budget)
    res = solver.solve()
    synchronize(backend)
    t_first = time.perf_counter() - t0
    mask = to_numpy(res.source_side)[: h * w].reshape(h, w).astype(bool)
    first = mask
    say(f"first cut {int(res.flow_value)} in {t_first * 1e3:.1f} ms: {int((mask != truth).sum())} pixels wrong")
    say("round | label | pixels | arcs | wrong pixels | cut | update + solve ms | from scratch ms | mode")

    rounds = []
    tied = np.zeros(h * w, dtype=np.int8)   # +1 foreground, -1 background scribbles
    for r in range(1, args.rounds + 1):
        pick = next_scribble(mask, truth, radius)
        if pick is None:
            say("the segmentation matches the ground truth: no scribble left to make")
            break
        pixels, label = pick
        rows, cols, caps = terminal_arcs(pixels, label, s, t, hard)
        tied[pixels] = 1 if label else -1
        C[rows, cols] = caps                  # the same batch on the host copy (stored entries only)

        t0 = time.perf_counter()
        solver.update_capacities(rows, cols, caps)
        res = solver.solve()
        synchronize(backend)
        t_dyn = time.perf_counter() - t0
        value = int(res.flow_value)
        t_scr = scratch_value = None
        if not args.no_compare:
            t0 = time.perf_counter()
            ref = maximum_flow(C, s, t, backend=backend)
            synchronize(backend)
            t_scr = time.perf_counter() - t0
            scratch_value = int(ref.flow_value)
            if value != scratch_value:  # pragma: no cover - would be a bug
                raise RuntimeError(f"round {r}: dynamic cut {value} != from-scratch cut {scratch_value}")
        scipy_value = None
        if args.scipy:
            scipy_value = int(csgraph.maximum_flow(C.astype(np.int32), s, t).flow_value)
            if scipy_value != value:  # pragma: no cover - would be a bug
                raise RuntimeError(f"round {r}: cut {value} != scipy's {scipy_value}")
        mask = to_numpy(res.source_side)[: h * w].reshape(h, w).astype(bool)
        wrong = int((mask != truth).sum())
        mode = res.stats.get("mode", "?")
        scratch_ms = "-" if t_scr is None else f"{t_scr * 1e3:.1f}"
        say(f"{r:5d} | {'fg' if label else 'bg':5s} | {pixels.shape[0]:6d} | {rows.shape[0]:4d} | {wrong:12d} | "
            f"{value} | {t_dyn * 1e3:17.1f} | {scratch_ms:>15s} | {mode}")
        rounds.append({"label": label, "pixels": pixels, "arcs": int(rows.shape[0]), "wrong": wrong,
                       "cut_value": value, "scratch_value": scratch_value, "scipy_value": scipy_value,
                       "dynamic_s": t_dyn, "scratch_s": t_scr, "mode": mode})

    if rounds:
        dyn = sum(x["dynamic_s"] for x in rounds)
        wrong = f"pixels wrong {int((first != truth).sum())} -> {rounds[-1]['wrong']}"
        if args.no_compare:
            say(f"{len(rounds)} rounds: {dyn * 1e3:.1f} ms re-solving; {wrong}")
        else:
            scr = sum(x["scratch_s"] for x in rounds)
            say(f"{len(rounds)} rounds: {dyn * 1e3:.1f} ms re-solving against {scr * 1e3:.1f} ms from scratch "
                f"({scr / dyn:.1f}x); {wrong}")
    out = None
    if args.out:
        gap = np.full((h, 4), 255.0)
        out = save_panels(args.out, np.hstack([img, gap, first * 255.0]), mask, truth)
        say(f"wrote {out} (noisy input | first segmentation | after the scribbles | ground truth)")
    return {
        "rounds": rounds,
        "first_wrong": int((first != truth).sum()),
        "mask": mask,
        "truth": truth,
        "tied": tied.reshape(h, w),
        "capacity": C,
        "source": s,
        "sink": t,
        "flow": res,
        "backend": backend,
        "output": None if out is None else str(out),
    }


if __name__ == "__main__":
    main()

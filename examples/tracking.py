#!/usr/bin/env python3
"""Link detections between two video frames: a sparse assignment within a gate radius.

Particle and cell trackers link the objects detected in one frame to those
of the next by the assignment of least total squared displacement.  Only
pairs closer than a *gate* radius are candidates, so the cost matrix is
sparse even for a hundred thousand objects.  Some objects leave the field
between the frames and new ones enter, so each object may also stay
unlinked, at a cost (the linear assignment framework of Jaqaman et al.,
Nature Methods 5, 695-702, 2008, doi:10.1038/nmeth.1237).  The example

* simulates two frames: objects scattered uniformly, each moved by a small
  random step, a few leaving, a few new ones entering, and the detections
  of the second frame listed in random order (the true links are kept to
  score the result);
* finds the candidate links within ``--gate`` with a k-d tree
  (``scipy.spatial.cKDTree``);
* builds the square sparse cost matrix of the framework, objects and
  "births" as rows, detections and "deaths" as columns: a candidate link
  costs its squared displacement, an object without a link (its death) or a
  detection without one (a birth) costs ``--skip`` (default ``gate**2 / 2``,
  so that any candidate is cheaper than leaving both its ends unlinked),
  and a birth may meet a death wherever the transposed link is a
  candidate, at no cost (every link frees one of each).  Every entry gets
  the same constant ``gate**2`` on top, which changes no optimum (a full
  matching of a square matrix has one entry per row) and keeps every
  weight above 0, which a sparse matrix could not tell from no entry;
* calls ``gpumatch.assignment(cost)``, which returns the assignment of
  least total cost and the dual potentials that prove it, checks that
  proof with ``gpumatch.testing.check_assignment``, and prints the cost,
  the time and how many links are the true ones.

    python examples/tracking.py
    python examples/tracking.py --objects 100000 --gate 0.8 --leave 0.1

Runs on the CPU (gpumatch's compiled assignment engine; ``--backend auto``
chooses it also on a GPU machine, until the assignment has a GPU engine).
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

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

import gpumatch
from gpumatch.backends import warm_up
from gpumatch.testing import check_assignment


def simulate(n, leave, enter, step, density, seed):
    """Two frames: ``(before, after, true_link)``, where ``true_link[i]`` is the
    detection of the second frame that object ``i`` became (-1 if it left)."""
    rng = np.random.default_rng(seed)
    side = np.sqrt(n / density)                       # `density` objects per unit area
    before = rng.uniform(0, side, (n, 2))
    stays = rng.random(n) >= leave
    moved = before[stays] + rng.normal(0, step, (int(stays.sum()), 2))
    after = np.vstack([moved, rng.uniform(0, side, (enter, 2))])
    order = rng.permutation(after.shape[0])            # detections come in no particular order
    after = after[order]
    where = np.empty(after.shape[0], dtype=np.int64)
    where[order] = np.arange(after.shape[0])
    true_link = np.full(n, -1, dtype=np.int64)
    true_link[stays] = where[: int(stays.sum())]
    return before, after, true_link


def candidates(before, after, gate):
    """COO matrix of the squared displacements of the pairs closer than `gate`."""
    pairs = cKDTree(before).sparse_distance_matrix(cKDTree(after), max_distance=gate, output_type="coo_matrix")
    return sp.coo_matrix((pairs.data ** 2, (pairs.row, pairs.col)), shape=pairs.shape)


def framework(links, skip, shift):
    """The square ``(m + n) x (n + m)`` cost matrix of links, deaths, births and
    their meetings (see the module's notes), every entry plus `shift`."""
    m, n = links.shape
    i, j = links.row, links.col
    rows = np.concatenate([i, np.arange(m), m + np.arange(n), m + j])
    cols = np.concatenate([j, n + np.arange(m), np.arange(n), n + i])
    vals = np.concatenate([links.data, np.full(m, skip), np.full(n, skip), np.zeros(i.shape[0])]) + shift
    return sp.csr_matrix((vals, (rows, cols)), shape=(m + n, n + m))


def main(argv=None) -> dict:
    """Run the example; returns the links, their cost, the certificate and the score."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--objects", type=int, default=20_000, help="objects in the first frame")
    p.add_argument("--leave", type=float, default=0.05, help="fraction of them that leave the field")
    p.add_argument("--enter", type=int, default=None,
                   help="new objects in the second frame (default: as many as leave)")
    p.add_argument("--step", type=float, default=0.1, help="standard deviation of a step, per axis")
    p.add_argument("--density", type=float, default=1.0, help="objects per unit area")
    p.add_argument("--gate", type=float, default=0.5, help="largest displacement of a candidate link")
    p.add_argument("--skip", type=float, default=None,
                   help="cost of leaving an object or a detection unlinked (default: gate**2 / 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=("auto", "numba", "numpy"), default="auto")
    args = p.parse_args(argv)
    if args.objects < 1 or not 0 <= args.leave < 1 or args.gate <= 0 or args.step < 0 or args.density <= 0:
        p.error("need --objects >= 1, 0 <= --leave < 1, --gate > 0, --step >= 0, --density > 0")
    enter = int(round(args.leave * args.objects)) if args.enter is None else args.enter

    before, after, true_link = simulate(args.objects, args.leave, enter, args.step, args.density, args.seed)
    links = candidates(before, after, args.gate)
    m, n = links.shape
    skip = args.gate ** 2 / 2 if args.skip is None else args.skip
    cost = framework(links, skip, args.gate ** 2)
    print(f"frame 1: {m} objects, frame 2: {n} detections; {links.nnz} candidate links within "
          f"{args.gate:g} ({links.nnz / m:.1f} per object); cost matrix {cost.shape[0]} x {cost.shape[1]}, "
          f"{cost.nnz} entries")
    # load the engine once (on the first run after an install, compile it), outside the timing
    print(f"loading the assignment engine: {warm_up(args.backend, ['assignment']):.2f} s (once per process)")

    t0 = time.perf_counter()
    res = gpumatch.assignment(cost, backend=args.backend)
    elapsed = time.perf_counter() - t0
    cert = check_assignment(cost, res.row_ind, res.col_ind, res.u, res.v, expected_cost=res.cost)

    linked = (res.row_ind < m) & (res.col_ind < n)
    obj, det = res.row_ind[linked], res.col_ind[linked]
    right = det == true_link[obj]
    stayed = int((true_link >= 0).sum())
    total = res.cost - cost.shape[0] * args.gate ** 2        # without the shift
    print(f"assignment in {elapsed:.3f} s: {obj.shape[0]} links, {m - obj.shape[0]} objects left, "
          f"{n - obj.shape[0]} entered; total cost {total:.4f}")
    print(f"optimal: {cert.optimal} (the dual potentials prove that no assignment costs less)")
    print(f"true links found: {int(right.sum())} of {stayed} objects that stayed ({right.sum() / max(1, stayed):.2%}); "
          f"{obj.shape[0] - int(right.sum())} links are wrong")
    return {
        "links": links,
        "cost_matrix": cost,
        "result": res,
        "certificate": cert,
        "linked": (obj, det),
        "total_cost": total,
        "true_link": true_link,
        "correct": int(right.sum()),
        "stayed": stayed,
        "time": elapsed,
    }


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Dulmage–Mendelsohn blocks of a sparse matrix, as a picture and in words.

``gpumatch.dulmage_mendelsohn`` permutes a sparse matrix to block upper
triangular form: an underdetermined (horizontal) part, a well-determined
(square) part split into irreducible diagonal blocks, and an overdetermined
(vertical) part.  This example

* reads a Matrix Market file given on the command line, or else the matrix
  ``west0479`` (a chemical plant model, MATLAB's ``dmperm`` demo matrix) from
  the shared test corpus (``$GPUMATCH_CORPUS``, or ``shared/corpus`` beside
  the repository), or else generates a matrix with all three parts and a
  dozen irreducible square blocks, its rows and columns shuffled;
* computes the decomposition (GPU when available, NumPy otherwise:
  ``--backend``), checks it with ``gpumatch.structure.check_dulmage_mendelsohn``
  and prints the summary of the coarse and fine blocks;
* draws the pattern of ``A[p][:, q]`` with a box around every fine block
  (the horizontal part in orange, the vertical part in green, the square
  blocks of more than one row in blue) into a PNG, when matplotlib is
  installed (``pip install matplotlib``); otherwise it says so and prints
  only the summary.

Every stored entry counts, explicit zeros included; ``--nonzero`` drops
stored zeros first (MATLAB's view of the matrix).

    python examples/dm_blocks.py                          # west0479, or a generated matrix
    python examples/dm_blocks.py matrix.mtx.gz --out blocks.png
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

try:
    import gpumatch  # noqa: F401
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np
import scipy.sparse as sp

from gpumatch import dulmage_mendelsohn
from gpumatch.backends import resolve_backend, synchronize, to_numpy, warm_up
from gpumatch.io import read_matrix_market
from gpumatch.structure import check_dulmage_mendelsohn

DEFAULT_CORPUS_FILE = "matching/suitesparse__west0479.mtx.gz"
#: Boxes drawn at most (the largest blocks first); single entries on the
#: diagonal need no box.
MAX_BOXES = 2000


def corpus_path():
    """The shared corpus folder, or None (same rule as the tests)."""
    env = os.environ.get("GPUMATCH_CORPUS")
    path = pathlib.Path(env) if env else pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
    return path if (path / DEFAULT_CORPUS_FILE).is_file() else None


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?", help="Matrix Market file (default: west0479 from the corpus, or generated)")
    p.add_argument("--generate", action="store_true", help="use a generated matrix even when the corpus is there")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated matrix")
    p.add_argument("--backend", choices=("auto", "numpy", "cupy"), default="auto")
    p.add_argument("--nonzero", action="store_true", help="drop explicitly stored zeros (MATLAB's view)")
    p.add_argument("--out", default="dm_blocks.png", help="PNG file for the picture (default: dm_blocks.png)")
    p.add_argument("--no-plot", action="store_true", help="print the summary only")
    return p.parse_args(argv)


def load(args):
    """The matrix and a label for it."""
    if args.file:
        return read_matrix_market(args.file), args.file
    root = None if args.generate else corpus_path()
    if root is not None:
        return read_matrix_market(root / DEFAULT_CORPUS_FILE), "west0479 (from the test corpus)"
    A = generated_matrix(args.seed)
    return A, f"generated {A.shape[0]} x {A.shape[1]}, rows and columns shuffled (seed {args.seed})"


def generated_matrix(seed=0):
    """A matrix with a horizontal, a square and a vertical part and a dozen
    irreducible square blocks, rows and columns shuffled.

    Horizontal part: an identity beside a random block with an entry in
    every row (more columns than rows); square blocks: a diagonal, a cycle
    (so each is irreducible) and random entries; vertical part: an identity
    above a random block with an entry in every column (more rows than
    columns); sparse random entries above all of these.  After the shuffle
    only the decomposition brings the blocks back.
    """
    rng = np.random.default_rng(seed)
    sizes = [40, 25, 3, 60, 1, 12, 30, 1, 8, 45, 2, 20]
    k = sum(sizes)
    hr, hc, vr, vc = 50, 90, 110, 60
    m, n = hr + k + vr, hc + k + vc
    rows, cols = [], []

    def rand(r0, c0, h, w, per_row):
        cnt = rng.poisson(per_row, h)
        rows.append(np.repeat(np.arange(h), cnt) + r0)
        cols.append(rng.integers(0, w, cnt.sum()) + c0)

    i = np.arange(hr)                                         # horizontal: [I | R]
    rows += [i, i]
    cols += [i, hc - 1 - rng.integers(0, hc - hr, hr)]
    rand(0, hr, hr, hc - hr, 1.0)
    rand(0, hc, hr, n - hc, 0.3)                              # above the square part
    off = 0
    for b in sizes:                                           # square blocks
        i = np.arange(b)
        rows += [hr + off + i, hr + off + i]
        cols += [hc + off + i, hc + off + (i + 1) % b]
        rand(hr + off, hc + off, b, b, 0.8)
        rand(hr + off, hc + off + b, b, n - hc - off - b, 0.15)
        off += b
    j = np.arange(vc)                                         # vertical: [I ; R]
    rows += [hr + k + j, hr + k + vr - 1 - rng.integers(0, vr - vc, vc)]
    cols += [hc + k + j, hc + k + j]
    rand(hr + k + vc, hc + k, vr - vc, vc, 1.0)
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    A = sp.csr_matrix((np.ones(r.shape[0]), (rng.permutation(m)[r], rng.permutation(n)[c])), shape=(m, n))
    A.sum_duplicates()
    A.data[:] = 1.0
    return A


def boxes(dm):
    """(row0, col0, rows, cols, kind) of the fine blocks worth a box, largest first."""
    r, s = to_numpy(dm.r).astype(np.int64), to_numpy(dm.s).astype(np.int64)
    rr, cc = to_numpy(dm.rr), to_numpy(dm.cc)
    m, n = dm.shape
    out = []
    for k in range(dm.nblocks):
        h, w = int(r[k + 1] - r[k]), int(s[k + 1] - s[k])
        if k == 0 and cc[2] > 0:
            kind = "horizontal"
        elif k == dm.nblocks - 1 and rr[2] < m:
            kind = "vertical"
        else:
            kind = "square"
            if h < 2:
                continue
        out.append((int(r[k]), int(s[k]), h, w, kind))
    out.sort(key=lambda b: -(b[2] * b[3]))
    return out[:MAX_BOXES]


def draw(A, dm, title, path):
    """Spy plot of A[p][:, q] with the block boxes; returns the path, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Rectangle
    except ImportError:
        print("matplotlib is not installed: no picture (pip install matplotlib, or gpumatch[plot]); "
              "the summary above describes the blocks")
        return None
    p, q = to_numpy(dm.p), to_numpy(dm.q)
    B = A.tocsr()[p][:, q].tocoo()
    m, n = A.shape
    fig, ax = plt.subplots(figsize=(7, 7 * max(m, 1) / max(n, 1) if m <= 2 * n else 14))
    size = max(0.3, min(4.0, 600.0 / max(m, n, 1)))
    ax.plot(B.col, B.row, "s", color="black", markersize=size, markeredgewidth=0, linestyle="none")
    colors = {"horizontal": "tab:orange", "vertical": "tab:green", "square": "tab:blue"}
    for kind, color in colors.items():
        rects = [Rectangle((c0 - 0.5, r0 - 0.5), w, h) for r0, c0, h, w, k in boxes(dm) if k == kind]
        if rects:
            ax.add_collection(PatchCollection(rects, facecolor="none", edgecolor=color, linewidth=1.0))
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(m - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_title(f"{title}: A[p][:, q], {dm.nblocks} fine blocks, "
                 f"structural rank {dm.structural_rank}", fontsize=9)
    ax.set_xlabel("columns q (orange: horizontal part, blue: square blocks, green: vertical part)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return str(path)


def main(argv=None) -> dict:
    """Run the example; returns the matrix, the decomposition, its certificate and the picture's path."""
    args = parse_args(argv)
    A, label = load(args)
    if args.nonzero:
        A = A.copy()
        A.eliminate_zeros()
    backend = resolve_backend(args.backend)
    print(f"matrix: {label}: {A.shape[0]} x {A.shape[1]}, {A.nnz} stored entries")
    # load the engine once (on the first run after an install, compile it), outside the timing
    print(f"loading the {backend} engine: {warm_up(backend, ['matching']):.2f} s (once per process)")
    t0 = time.perf_counter()
    dm = dulmage_mendelsohn(A, backend=backend)
    synchronize(backend)
    elapsed = time.perf_counter() - t0
    cert = check_dulmage_mendelsohn(A, dm)
    print(dm.summary())
    print(f"decomposition in {elapsed:.3f} s (backend {backend}); checked: staircase, zero-free diagonals, "
          f"reachability of the coarse sets, {cert.square_blocks} irreducible square blocks")
    title = os.path.basename(label) if args.file else label
    output = None if args.no_plot else draw(A, dm, title, args.out)
    if output:
        print(f"wrote {output}")
    return {"matrix": A, "label": label, "result": dm, "certificate": cert, "output": output,
            "time": elapsed, "backend": backend}


if __name__ == "__main__":
    main()

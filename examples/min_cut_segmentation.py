#!/usr/bin/env python3
"""Binary image segmentation by a minimum s-t cut (graph cut).

A synthetic grey-level image (a bright disk and a bright bar on a dark
background) is corrupted with strong Gaussian noise.  Labelling each pixel
foreground or background is posed as a minimum cut:

* one vertex per pixel, plus a source (foreground) and a sink (background);
* terminal arcs carry the data cost: ``source -> p`` costs what labelling p
  *background* costs (its squared distance to the background grey level),
  ``p -> sink`` what labelling it *foreground* costs;
* arcs between 4-neighbours in both directions carry a smoothness cost
  (``--smoothness``): cutting between two pixels pays it once;
* every capacity is an integer (costs are scaled and rounded).

The pixels on the source side of a minimum cut are the foreground.  The cut
comes from ``gpumatch.flow.maximum_flow`` (push-relabel; GPU when available,
``--backend``), its value is compared with ``scipy.sparse.csgraph.maximum_flow``,
and the example prints how many pixels differ from the ground truth.  It
writes a PNG (noisy input | segmentation | ground truth) when matplotlib or
pillow is installed, else a PGM that any image viewer opens (and says so).

    python examples/min_cut_segmentation.py
    python examples/min_cut_segmentation.py --size 256 --noise 70 --out seg.png
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
import scipy.sparse.csgraph as csgraph

from gpumatch.backends import resolve_backend, synchronize, to_numpy, warm_up
from gpumatch.flow import maximum_flow

BACKGROUND, FOREGROUND = 80.0, 170.0


def synthetic_image(h, w, noise, seed=0):
    """Ground-truth mask (bool) and the noisy grey image (float, 0..255)."""
    yy, xx = np.mgrid[0:h, 0:w]
    disk = (yy - 0.45 * h) ** 2 + (xx - 0.35 * w) ** 2 <= (0.25 * min(h, w)) ** 2
    bar = (np.abs(yy - 0.6 * h) <= 0.08 * h) & (xx >= 0.55 * w) & (xx <= 0.9 * w)
    truth = disk | bar
    rng = np.random.default_rng(seed)
    img = np.where(truth, FOREGROUND, BACKGROUND) + rng.normal(0.0, noise, size=(h, w))
    return truth, np.clip(img, 0, 255)


def segmentation_network(img, noise, smoothness, scale=10.0, keep_terminal_zeros=False):
    """Integer capacity matrix of the grid graph with terminal arcs; returns (C, s, t).

    With `keep_terminal_zeros`, every pixel keeps both terminal arcs, those
    of capacity 0 as explicit zeros (arcs whose capacity a
    :class:`gpumatch.flow.MaxFlowSolver` can raise later).
    """
    h, w = img.shape
    npx = h * w
    s, t = npx, npx + 1
    var2 = 2.0 * max(noise, 1.0) ** 2
    cost_fg = np.rint(scale * (img - FOREGROUND) ** 2 / var2).astype(np.int64).ravel()
    cost_bg = np.rint(scale * (img - BACKGROUND) ** 2 / var2).astype(np.int64).ravel()
    pix = np.arange(npx, dtype=np.int64).reshape(h, w)
    right = (pix[:, :-1].ravel(), pix[:, 1:].ravel())
    down = (pix[:-1, :].ravel(), pix[1:, :].ravel())
    u = np.concatenate([right[0], right[1], down[0], down[1]])
    v = np.concatenate([right[1], right[0], down[1], down[0]])
    lam = int(round(scale * smoothness))
    rows = np.concatenate([u, np.full(npx, s), np.arange(npx)])
    cols = np.concatenate([v, np.arange(npx), np.full(npx, t)])
    caps = np.concatenate([np.full(u.size, lam, dtype=np.int64), cost_bg, cost_fg])
    keep = caps > 0
    if keep_terminal_zeros:
        keep[u.size:] = True
    C = sp.csr_matrix((caps[keep], (rows[keep], cols[keep])), shape=(npx + 2, npx + 2), dtype=np.int64)
    return C, s, t


def _to_u8(a):
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


def save_panels(path, img, mask, truth):
    """Write noisy | segmentation | truth side by side; returns the path written.

    A ``.pgm`` name is written as a binary PGM.  Any other name (``.png``)
    needs matplotlib or pillow; without either, the image is written as a
    PGM beside it (the suffix replaced by ``.pgm``) and a note on stderr
    says so.
    """
    gap = np.full((img.shape[0], 4), 255, dtype=np.uint8)
    panel = np.hstack([_to_u8(img), gap, _to_u8(mask * 255.0), gap, _to_u8(truth * 255.0)])
    path = pathlib.Path(path)
    if path.suffix.lower() != ".pgm":
        try:
            import matplotlib
        except ImportError:
            pass
        else:
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            plt.imsave(path, panel, cmap="gray", vmin=0, vmax=255)
            return path
        try:
            from PIL import Image
        except ImportError:
            pgm = path.with_suffix(".pgm")
            print(f"note: writing {path.name} needs matplotlib or pillow (pip install pillow); "
                  f"wrote the image as {pgm} instead", file=sys.stderr, flush=True)
            path = pgm
        else:
            Image.fromarray(panel).save(path)
            return path
    with open(path, "wb") as fh:  # binary PGM (P5)
        fh.write(f"P5\n{panel.shape[1]} {panel.shape[0]}\n255\n".encode())
        fh.write(panel.tobytes())
    return path


def main(argv=None) -> dict:
    """Run the example; returns the error rate, the cut value and the output path."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=128, help="image side in pixels (default 128)")
    p.add_argument("--noise", type=float, default=60.0, help="noise standard deviation (grey levels)")
    p.add_argument("--smoothness", type=float, default=1.5, help="cost of a label change between neighbours")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=("auto", "numpy", "cupy", "numba"), default="auto")
    p.add_argument("--out", default="segmentation.png",
                   help="output image: .png needs matplotlib or pillow (else a .pgm is written instead, "
                        "with a note); .pgm always works")
    p.add_argument("--no-scipy", action="store_true", help="skip the comparison with scipy")
    args = p.parse_args(argv)

    h = w = args.size
    truth, img = synthetic_image(h, w, args.noise, seed=args.seed)
    C, s, t = segmentation_network(img, args.noise, args.smoothness)
    backend = resolve_backend(args.backend)
    print(f"image {h} x {w}, noise sigma {args.noise:g}: network of {C.shape[0]} vertices, {C.nnz} arcs")
    # load the engine once (on the first run after an install, compile it), outside the timing
    print(f"loading the {backend} engine: {warm_up(backend, ['flow']):.2f} s (once per process)")

    t0 = time.perf_counter()
    res = maximum_flow(C, s, t, backend=backend)
    synchronize(backend)
    t_ours = time.perf_counter() - t0
    mask = to_numpy(res.source_side)[: h * w].reshape(h, w).astype(bool)
    value = int(res.flow_value)
    print(f"gpumatch ({backend}): minimum cut {value} in {t_ours:.3f} s")

    scipy_value = None
    if not args.no_scipy:
        t0 = time.perf_counter()
        scipy_value = int(csgraph.maximum_flow(C.astype(np.int32), s, t).flow_value)
        print(f"scipy (Dinic)       : minimum cut {scipy_value} in {time.perf_counter() - t0:.3f} s"
              f"  ({'same' if scipy_value == value else 'DIFFERENT'})")

    naive = img > (FOREGROUND + BACKGROUND) / 2
    wrong = int((mask != truth).sum())
    naive_wrong = int((naive != truth).sum())
    print(f"pixels differing from the ground truth: {wrong} of {h * w} ({100.0 * wrong / (h * w):.2f} %); "
          f"a plain threshold gets {naive_wrong} wrong ({100.0 * naive_wrong / (h * w):.2f} %)")
    out = save_panels(args.out, img, mask, truth)
    print(f"wrote {out} (noisy input | minimum-cut segmentation | ground truth)")
    return {
        "mask": mask,
        "truth": truth,
        "differing_pixels": wrong,
        "error_rate": wrong / (h * w),
        "threshold_error_rate": naive_wrong / (h * w),
        "cut_value": value,
        "scipy_value": scipy_value,
        "output": str(out),
        "backend": backend,
        "capacity": C,
        "source": s,
        "sink": t,
        "flow": res,
    }


if __name__ == "__main__":
    main()

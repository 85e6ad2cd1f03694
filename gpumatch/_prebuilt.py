"""Pre-built CUDA kernels shipped with the package.

Compiling one of gpumatch's CUDA modules with NVRTC takes 0.5-2.2 s on a
first call (an H100, CUDA 13): three seconds of a first maximum flow, most
of a first matching.  The package therefore ships its modules compiled, as
LZMA-compressed cubins under ``gpumatch/_prebuilt/`` (about 20 KB each),
named ``<key>.sm_<arch>.cubin.xz``:

* ``key`` is a hash of the module's whole source (as :func:`_cuda.read_source
  <gpumatch._cuda.read_source>` assembles it) and of its compile options, so
  an edited kernel, a different ``-D`` specialisation or a changed header
  never loads a stale binary: it is compiled from source as before;
* ``arch`` is one of :data:`ARCHS`.  A cubin runs on devices of its major
  compute capability and an equal or higher minor one (``sm_80`` serves the
  A100, the A10/A40 and the RTX 30/40 series); other devices, or a driver
  that refuses the binary, compile from source.

Only the specialisations a call from SciPy-sized inputs uses (32-bit
indices, the default tuning) are shipped: :func:`variants` lists them.
``GPUMATCH_PREBUILT=0`` turns the pre-built kernels off (every module is
compiled from source, as on an unlisted device).

Maintainers rebuild the files after editing a ``.cu``/``.cuh`` file, on a
machine with CuPy and a GPU (any: NVRTC compiles for every arch)::

    python -m gpumatch._prebuilt build          # --jobs N
    python -m gpumatch._prebuilt check          # stale or missing files (CI runs this)
"""

from __future__ import annotations

import argparse
import lzma
import os
import sys

import numpy as np

from . import _cuda
from ._cubin import ARCHS, FOLDER, best_arch, key, load, options
from .flow import _pr_cupy
from .lap import _kernels_cuda as _lap_cuda

__all__ = ["ARCHS", "variants", "options", "key", "best_arch", "load", "build", "check"]


def variants() -> list:
    """The module specialisations shipped pre-built: ``(relpath, defines, cooperative)``.

    32-bit ids and offsets (every graph below 2**31 entries: ``-DIDX=int
    -DOFF=int``) and the default tuning of each launcher; the lane-group
    sizes of push-relabel are all three that
    :func:`gpumatch.flow._maxflow._tile` picks.  Larger graphs (int64
    offsets) compile their kernels on a first call, which their solve
    dwarfs.
    """
    i32 = (("IDX", "int"), ("OFF", "int"))
    out = [("matching/gpr.cu", i32, False),
           ("matching/chain.cu", i32, False),
           ("matching/augment.cu", i32, False),
           ("matching/augment_coop.cu", i32, True),
           ("matching/walk.cu", i32, False),
           ("structure/scc.cu", i32, False),
           ("flow/labels.cu", i32, False),
           ("flow/pr_setup.cu", i32, False),
           ("flow/paths.cu", i32, False),
           ("flow/paths.cu", i32, True),
           ("flow/detour.cu", i32, False),
           ("flow/dynamic.cu", (), False),
           ("flow/dynamic.cu", i32, False)]
    for tile in (8, 16, 32):
        d = _pr_cupy.kernel_defines(np.int32, np.int32, tile, 8)
        out += [("flow/pr.cu", d, False), ("flow/pr_coop.cu", d, True), ("flow/pr_walk.cu", d, False)]
    for kind in ("i", "f"):   # the auction: integer and float costs; its global update launches cooperatively
        d = _lap_cuda.kernel_defines(np.int32, kind)
        out += [("lap/auction.cu", d, False), ("lap/auction.cu", d, True)]
    for ptr in ("int", "long long"):
        out.append(("csr.cu", (("PTR_T", ptr), ("IND_T", "int")), False))
    out += [("csr.cu", (("VALUE_T", "int"),), False),
            ("csr.cu", (("IDX", "int"), ("OFF", "int"), ("LABEL_T", "int")), False)]
    return out


# ---------------------------------------------------------------------------
# maintainers: build and check
# ---------------------------------------------------------------------------


def _expected() -> dict:
    """File name -> (relpath, options, arch) of every cubin :func:`variants` asks for."""
    out = {}
    for relpath, defines, coop in variants():
        src = _cuda.read_source(relpath)
        opts = options(defines, coop)
        k = key(src, opts)
        for arch in ARCHS:
            out[f"{k}.sm_{arch}.cubin.xz"] = (relpath, opts, arch)
    return out


def _folder() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), FOLDER)


def check() -> tuple:
    """``(missing, orphans)``: cubins :func:`variants` needs that are not in
    the package folder (stale after a kernel edit), and files it holds that
    no variant needs."""
    want = _expected()
    folder = _folder()
    have = {f for f in os.listdir(folder) if f.endswith(".cubin.xz")} if os.path.isdir(folder) else set()
    missing = sorted(f"{want[f][0]} {' '.join(want[f][1][1:])} sm_{want[f][2]}" for f in set(want) - have)
    return missing, sorted(have - set(want))


def _cupy_nvrtc_options() -> tuple:
    """The options CuPy's :class:`cupy.RawModule` adds to a compile (the
    CUDA and CuPy include folders, NVRTC defaults), seen on one small compile
    of a source that includes ``cooperative_groups.h``; without the arch."""
    import time

    import cupy as cp
    from cupy.cuda import compiler

    seen = []
    real = compiler.nvrtc.compileProgram

    def spy(prog, options):
        seen.append(tuple(options))
        return real(prog, options)

    compiler.nvrtc.compileProgram = spy
    try:
        src = f"#include <cooperative_groups.h>\n// {time.time_ns()}\nextern \"C\" __global__ void probe() {{}}\n"
        cp.RawModule(code=src, options=("-DGPUMATCH_PROBE=1",)).compile()
    finally:
        compiler.nvrtc.compileProgram = real
    if not seen:
        raise RuntimeError("could not see CuPy's NVRTC options")
    return tuple(o for o in seen[-1] if o != "-DGPUMATCH_PROBE=1" and not o.startswith(("-arch", "--gpu-architecture")))


def _compile_cubin(job):
    """NVRTC: `source` with `opts` for sm_`arch` -> cubin bytes (one worker process)."""
    name, source, opts, arch = job
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(source, name, (), ())
    try:
        try:
            nvrtc.compileProgram(prog, tuple(opts) + (f"--gpu-architecture=sm_{arch}",))
        except nvrtc.NVRTCError as exc:
            raise RuntimeError(f"{name} {' '.join(opts)} sm_{arch}: {exc}\n{nvrtc.getProgramLog(prog)}") from None
        return nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)


def build(jobs=None, archs=ARCHS, out=None) -> list:
    """Compile every variant for every arch of `archs` into `out` (default:
    the package folder), remove the files no variant needs; returns the
    names written.  Needs CuPy and a GPU (to see the options CuPy compiles with)."""
    from concurrent.futures import ProcessPoolExecutor

    out = out or _folder()
    os.makedirs(out, exist_ok=True)
    extra = _cupy_nvrtc_options()
    todo = [(name, (relpath, _cuda.read_source(relpath), opts + extra, arch))
            for name, (relpath, opts, arch) in _expected().items() if arch in archs]
    with ProcessPoolExecutor(max_workers=jobs or os.cpu_count()) as pool:
        cubins = list(pool.map(_compile_cubin, [job for _, job in todo]))
    keep = set()
    for (name, _), cubin in zip(todo, cubins):
        with open(os.path.join(out, name), "wb") as f:
            f.write(lzma.compress(bytes(cubin), preset=9 | lzma.PRESET_EXTREME))
        keep.add(name)
    for f in os.listdir(out):
        if f.endswith(".cubin.xz") and f not in keep:
            os.remove(os.path.join(out, f))
    return sorted(keep)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpumatch._prebuilt", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the shipped cubins (needs CuPy and a GPU)")
    b.add_argument("--jobs", type=int, default=None, help="compiler processes (default: one per core)")
    b.add_argument("--out", default=None, help="folder (default: the package's)")
    sub.add_parser("check", help="list stale or missing cubins and orphan files")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        names = build(args.jobs, out=args.out)
        print(f"wrote {len(names)} cubins")
        return 0
    missing, orphans = check()
    for m in missing:
        print(f"missing: {m}")
    for o in orphans:
        print(f"orphan: {o}")
    if missing or orphans:
        print("rebuild: python -m gpumatch._prebuilt build", file=sys.stderr)
        return 1
    print(f"{len(_expected())} cubins up to date")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

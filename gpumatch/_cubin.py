"""The pre-built CUDA kernels shipped with the package: naming and loading.

The cubins under ``gpumatch/_prebuilt/`` are named ``<key>.sm_<arch>.cubin.xz``
(:func:`key` of the module's whole source and its NVRTC options,
:func:`best_arch` of the device); :mod:`gpumatch._cuda` asks :func:`load`
before it compiles a module.  Which specialisations ship, and the
maintainers' build and check, are in :mod:`gpumatch._prebuilt` (``python -m
gpumatch._prebuilt build``).  ``GPUMATCH_PREBUILT=0`` turns the pre-built
kernels off.
"""

from __future__ import annotations

import hashlib
import lzma
import os
from importlib import resources

from . import _backend

__all__ = ["ARCHS", "FOLDER", "options", "key", "best_arch", "load"]

#: Architectures of the shipped cubins: Turing (T4), Ampere and Ada (A100,
#: RTX 30/40), Hopper (H100/H200), Blackwell (B200; RTX 50).
ARCHS = (75, 80, 90, 100, 120)

#: Folder of the cubins inside the package.
FOLDER = "_prebuilt"


def options(defines, cooperative: bool) -> tuple:
    """NVRTC options of a module: C++17 and its ``-D`` definitions
    (``GPUMATCH_COOPERATIVE=1`` last for a cooperative one)."""
    defines = tuple(defines) + ((("GPUMATCH_COOPERATIVE", 1),) if cooperative else ())
    return ("--std=c++17",) + tuple(f"-D{k}={v}" for k, v in defines)


def key(source: str, opts) -> str:
    """Hash naming the cubin of `source` compiled with `opts` (any arch)."""
    h = hashlib.sha256(source.encode())
    h.update(b"\0" + "\0".join(opts).encode())
    return h.hexdigest()[:24]


def best_arch(cc: int):
    """The shipped arch whose cubin runs on compute capability `cc` (e.g. 86), or None."""
    fits = [a for a in ARCHS if a // 10 == cc // 10 and a <= cc]
    return max(fits) if fits else None


def _disabled() -> bool:
    return os.environ.get("GPUMATCH_PREBUILT", "1").strip().lower() in ("0", "false", "no", "off")


_stats = {"loaded": 0}


def load(source: str, opts):
    """The shipped cubin of `source` and `opts` for the current device, loaded
    (a :class:`cupy.cuda.function.Module`), or None: none shipped for this
    source, options or device, turned off, or refused by the driver."""
    if _disabled():
        return None
    cp = _backend.cp
    arch = best_arch(int(cp.cuda.Device().compute_capability))
    if arch is None:
        return None
    item = resources.files("gpumatch").joinpath(FOLDER, f"{key(source, opts)}.sm_{arch}.cubin.xz")
    if not item.is_file():
        return None
    try:
        cubin = lzma.decompress(item.read_bytes())
        mod = cp.cuda.function.Module()
        mod.load(cubin)
    except Exception:   # a corrupt file or a driver older than the cubin: compile from source
        return None
    _stats["loaded"] += 1
    return mod

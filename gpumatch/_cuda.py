"""Loading the package's CUDA sources with CuPy.

Kernel source lives in ``.cu`` files next to the Python launcher that uses
them, shipped as package data.  :func:`get_module` reads a file with
:mod:`importlib.resources`, prepends the shared header ``_common.cuh`` *as
text* (CuPy's on-disk cache keys on the source string, so an ``#include`` of
a project header could run stale code), specialises it with ``-D`` options,
compiles it with :class:`cupy.RawModule` and caches it per device.  The
package ships the common specialisations compiled (:mod:`gpumatch._cubin`):
those are loaded instead, when their cubin matches the source, the options
and the device.

Only call this after :func:`gpumatch._backend.resolve_backend` returned
``"cupy"``.
"""

from __future__ import annotations

import functools
import os
import sys
from importlib import resources

import numpy as np

from . import _backend, _cubin

__all__ = ["get_module", "get_kernel", "cooperative_grid", "read_source", "index_defines", "value_defines",
           "VALUE_TYPES", "BLOCK"]

#: Default threads per block for 1-D launches.
BLOCK = 256


#: A first line ``// @prepend PATH`` of a ``.cu`` file names a shared header
#: of the package (device helpers of several kernel files) that
#: :func:`read_source` puts in front of it, after ``_common.cuh``.
_PREPEND = "// @prepend "


@functools.lru_cache(maxsize=None)
def read_source(relpath: str) -> str:
    """Text of a ``.cu`` file inside the package, with the common header and
    the file's own ``// @prepend`` headers put in front of it (as text: CuPy's
    disk cache keys on the whole source, so a changed header recompiles)."""
    root = resources.files("gpumatch")
    parts = [root.joinpath("_common.cuh").read_text()]
    body = root.joinpath(relpath).read_text()
    for line in body.splitlines():
        if not line.startswith(_PREPEND):
            break
        shared = line[len(_PREPEND):].strip()
        parts.append(f'#line 1 "{shared}"\n{root.joinpath(shared).read_text()}')
    parts.append(f'#line 1 "{relpath}"\n{body}')
    return "\n".join(parts)


#: C type of each dtype the CSR kernels of ``csr.cu`` take as ``VALUE_T``
#: (and as ``PTR_T``, ``IND_T``, ``IDX``, ``LABEL_T``).
VALUE_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
               np.dtype(np.float32): "float", np.dtype(np.float64): "double",
               np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "bool"}


def value_defines(values, extra=()):
    """The ``-D`` definition ``VALUE_T`` of `values`' dtype, then `extra`."""
    t = VALUE_TYPES.get(np.dtype(values.dtype))
    if t is None:
        raise TypeError(f"compact: unsupported dtype {values.dtype}")
    return (("VALUE_T", t),) + tuple(extra)


def index_defines(idt, odt=None) -> tuple:
    """The ``-D`` definitions of the kernels' id type ``IDX`` (vertex ids,
    dtype `idt`) and offset type ``OFF`` (pointer arrays and entry
    positions, dtype `odt`; None: the same as `idt`), each int32 or int64.

    Examples
    --------
    >>> import numpy as np
    >>> from gpumatch._cuda import index_defines
    >>> index_defines(np.int32, np.int64)
    (('IDX', 'int'), ('OFF', 'long long'))
    """
    c = lambda d: "int" if np.dtype(d) == np.int32 else "long long"  # noqa: E731
    return (("IDX", c(idt)), ("OFF", c(idt if odt is None else odt)))


_modules: dict = {}
_notice = {"shown": False}


def kernel_cache_dir() -> str:
    """Where CuPy keeps compiled kernels (``$CUPY_CACHE_DIR``, else ``~/.cupy/kernel_cache``)."""
    return os.environ.get("CUPY_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cupy", "kernel_cache")


def _first_compile_notice() -> None:
    """Once per process, before the first module is loaded: one line on
    standard error when CuPy's kernel cache is empty (a fresh machine or
    environment), where the first GPU call compiles CuPy's element-wise
    kernels, and gpumatch's own where no pre-built cubin serves the device
    (on an H100 with the shipped cubins: about 1-2 s before a first maximum
    flow, 0.3-0.6 s before a first matching; compiling gpumatch's kernels
    from source adds several seconds).  Silenced by ``GPUMATCH_QUIET=1``."""
    if _notice["shown"]:
        return
    _notice["shown"] = True
    if os.environ.get("GPUMATCH_QUIET"):
        return
    cache = kernel_cache_dir()
    try:
        with os.scandir(cache) as it:
            fresh = next(it, None) is None
    except OSError:
        fresh = True
    if fresh:
        print(f"gpumatch: CuPy's kernel cache ({cache}) is empty: the first GPU calls compile CUDA kernels "
              "(a second or two; more on a GPU without gpumatch's pre-built kernels); later runs load them "
              "from the cache", file=sys.stderr, flush=True)


def _compile(relpath: str, defines: tuple, cooperative: bool):
    """Load (a pre-built cubin of :mod:`gpumatch._cubin`) or compile one module now."""
    cp = _backend.cp
    source = read_source(relpath)
    opts = _cubin.options(defines, cooperative)
    rdc = cooperative and COOPERATIVE_RDC
    if not rdc:
        mod = _cubin.load(source, opts)
        if mod is not None:
            return mod
    mod = cp.RawModule(code=source, options=opts, enable_cooperative_groups=rdc)
    try:
        mod.compile()
    except cp.cuda.compiler.CompileException:  # pragma: no cover - an old toolkit: link as CuPy does
        if not cooperative or rdc:
            raise
        mod = cp.RawModule(code=source, options=opts, enable_cooperative_groups=True)
        mod.compile()
    return mod


def get_module(relpath: str, defines: tuple = (), cooperative: bool = False):
    """Load or compile (once per device) and return the module of `relpath`.

    Parameters
    ----------
    relpath : str
        Path of the ``.cu`` file relative to the package, e.g.
        ``"matching/gpr.cu"``.
    defines : tuple of (str, value)
        Preprocessor definitions, passed as ``-DNAME=VALUE``.
    cooperative : bool
        Compile with ``-DGPUMATCH_COOPERATIVE=1`` for cooperative launches
        (:func:`get_kernel` launches every kernel of that module with
        ``cuLaunchCooperativeKernel``: its grid must be co-resident, see
        :func:`cooperative_grid`).

    Notes
    -----
    A cooperative module is compiled like any other (see
    :data:`COOPERATIVE_RDC`): since CUDA 11, ``grid.sync()`` is inline code
    and needs neither relocatable device code nor a link against the device
    runtime.
    """
    cp = _backend.cp
    dev = cp.cuda.Device().id
    key = (dev, relpath, tuple(defines), cooperative)
    mod = _modules.get(key)
    if mod is None:
        _first_compile_notice()
        mod = _compile(relpath, defines, cooperative)
        _modules[key] = mod
    return mod


#: Compile cooperative modules through CuPy's ``enable_cooperative_groups``
#: (which in CuPy releases before mid-2026 meant relocatable device code
#: linked against the device runtime: a slower compile, and PTX that fails
#: on a driver older than NVRTC; CuPy PR #10023) instead of as plain modules
#: launched cooperatively.  With CuPy 14.2 on an H100 both take 2.2 s for
#: ``augment_coop.cu`` and 2.2-2.5 s for ``pr_coop.cu`` on an empty cache.
COOPERATIVE_RDC = False


class _CooperativeKernel:
    """A kernel launched with ``cuLaunchCooperativeKernel`` (:func:`get_kernel`
    with ``cooperative=True``); ``kernel`` is CuPy's function object."""

    __slots__ = ("kernel",)

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, grid, block, args, shared_mem=0):
        self.kernel(tuple(grid), tuple(block), args, shared_mem=shared_mem, enable_cooperative_groups=True)


_kernels: dict = {}


def get_kernel(relpath: str, name: str, defines: tuple = (), cooperative: bool = False):
    """One kernel (``extern "C"`` function `name`) of :func:`get_module`,
    looked up once per device (launchers of small batches are host-bound)."""
    key = (_backend.cp.cuda.Device().id, relpath, name, tuple(defines), cooperative)
    kern = _kernels.get(key)
    if kern is None:
        mod = get_module(relpath, defines, cooperative)
        kern = mod.get_function(name)
        kern = getattr(kern, "kernel", kern)   # CuPy's function object, of a RawModule or a loaded cubin
        if cooperative:
            kern = _CooperativeKernel(kern)
        _kernels[key] = kern
    return kern


def cooperative_grid(kern, block: int, per_sm: int) -> int:
    """Blocks of a cooperative launch of `kern` with `block` threads: at most
    `per_sm` per multiprocessor and no more than can be resident at once;
    0 when the device cannot launch cooperatively (or the kernel does not fit)."""
    cp = _backend.cp
    dev = cp.cuda.Device()
    if not dev.attributes.get("CooperativeLaunch", 0):
        return 0
    fits = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(getattr(kern, "kernel", kern).ptr, block, 0)
    return int(dev.attributes["MultiProcessorCount"]) * min(int(fits), per_sm)


def grid_for(count: int, block: int = BLOCK) -> tuple:
    """1-D grid covering `count` threads (at least one block)."""
    return (max(1, (int(count) + block - 1) // block),)

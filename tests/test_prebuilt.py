"""The pre-built kernels shipped with the package (gpumatch._prebuilt).

* every shipped specialisation has a current cubin for every arch, and no
  file is left over (a kernel edit without a rebuild fails here, on CPU);
* the names follow the source and the options; archs map as CUDA's binary
  compatibility allows;
* on a GPU (gpu-marked): every shipped cubin for this device loads and has
  the kernels of its source, and ``GPUMATCH_PREBUILT=0`` compiles instead.
"""

from __future__ import annotations

import re

import pytest

from gpumatch import _cuda, _prebuilt


def test_shipped_cubins_are_current():
    missing, orphans = _prebuilt.check()
    assert not missing, f"stale or missing cubins (python -m gpumatch._prebuilt build): {missing[:5]}"
    assert not orphans, orphans


def test_check_command_exit_status(capsys):
    assert _prebuilt.main(["check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_key_follows_source_and_options():
    src = _cuda.read_source("flow/pr_setup.cu")
    opts = _prebuilt.options((("IDX", "int"),), False)
    assert _prebuilt.key(src, opts) == _prebuilt.key(src, opts)
    assert _prebuilt.key(src, opts) != _prebuilt.key(src + " ", opts)
    assert _prebuilt.key(src, opts) != _prebuilt.key(src, _prebuilt.options((("IDX", "long long"),), False))
    assert _prebuilt.options((), True)[-1] == "-DGPUMATCH_COOPERATIVE=1"


@pytest.mark.parametrize("cc, arch", [(75, 75), (80, 80), (86, 80), (89, 80), (90, 90), (100, 100), (103, 100),
                                      (120, 120), (121, 120), (70, None), (110, None)])
def test_best_arch(cc, arch):
    assert _prebuilt.best_arch(cc) == arch


def test_turned_off_loads_nothing(monkeypatch):
    monkeypatch.setenv("GPUMATCH_PREBUILT", "0")
    assert _prebuilt.load("anything", ()) is None


def test_variants_name_existing_sources():
    for relpath, defines, coop in _prebuilt.variants():
        src = _cuda.read_source(relpath)
        assert ("GPUMATCH_COOPERATIVE" in src) or not coop, relpath


def _kernels_of(mod, src):
    """Names of the ``extern "C"`` kernels of `src` that module `mod` has."""
    names = set()
    for name in re.findall(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\)\s*)?(\w+)', src):
        try:
            mod.get_function(name)
        except Exception:       # not in this specialisation (#if)
            continue
        names.add(name)
    return names


@pytest.mark.gpu
def test_every_shipped_cubin_loads_here_with_the_kernels_of_its_source():
    import cupy as cp

    if _prebuilt.best_arch(int(cp.cuda.Device().compute_capability)) is None:
        pytest.skip("no cubin shipped for this device")
    for relpath, defines, coop in _prebuilt.variants():
        src = _cuda.read_source(relpath)
        opts = _prebuilt.options(defines, coop)
        mod = _prebuilt.load(src, opts)
        assert mod is not None, (relpath, defines, coop)
        jit = cp.RawModule(code=src, options=opts)
        want = _kernels_of(jit, src)
        assert want and _kernels_of(mod, src) == want, (relpath, defines)

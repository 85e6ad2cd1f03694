"""The CUDA sources as the package ships them (no GPU needed).

* ``_cuda.read_source`` puts the shared headers a ``.cu`` file names with
  ``// @prepend`` in front of it, so split kernel files compile alone;
* every kernel a launcher asks for by (file, name) is defined in that file;
* the one-line notice before the first compile on an empty CuPy cache;
* where ``nvcc`` is installed, every kernel file compiles for both index
  widths (and its cooperative variant).
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest

from gpumatch import _cuda

PKG = pathlib.Path(_cuda.__file__).resolve().parent
CU_FILES = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.cu"))


def test_prepend_puts_shared_headers_first():
    src = _cuda.read_source("flow/pr.cu")
    common, own = src.index('#line 1 "flow/pr_common.cuh"'), src.index('#line 1 "flow/pr.cu"')
    assert src.index("typedef IDX idx_t;") < common < own   # _common.cuh, then the header, then the file
    assert "discharge_vertex_rcsr(" in src[common:own]       # a helper the kernels below use
    assert "gpumatch_pr_discharge_rcsr(" in src[own:]
    assert '#line 1 "flow/pr_common.cuh"' not in _cuda.read_source("flow/labels.cu")


@pytest.mark.parametrize("relpath", CU_FILES)
def test_prepended_headers_exist(relpath):
    body = (PKG / relpath).read_text()
    for line in body.splitlines():
        if not line.startswith(_cuda._PREPEND):
            break
        assert (PKG / line[len(_cuda._PREPEND):].strip()).is_file(), line


def _launcher_requests():
    """(file, kernel name pattern) of every ``get_kernel`` call with a literal
    or module-constant file argument in the package's Python sources."""
    out = []
    for py in PKG.rglob("*.py"):
        text = py.read_text()
        consts = dict(re.findall(r'^(_SRC\w*) = "([^"]+)"', text, flags=re.M))
        for m in re.finditer(r'get_kernel\(\s*(?:"([^"]+)"|(_SRC\w*))\s*,\s*(f?)"([^"]+)"', text):
            relpath = m.group(1) or consts.get(m.group(2))
            name = m.group(4)
            if relpath is None or (m.group(3) and "{" in name and "{layout}" not in name):
                continue
            out.append((relpath, name.replace("{layout}", "(?:rcsr|bcsr)")))
    return out


def test_every_requested_kernel_is_in_its_file():
    requests = _launcher_requests()
    assert len(requests) >= 40   # the regex still finds the launches
    missing = [(f, n) for f, n in requests
               if not re.search(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\) )?' + n + r"\(",
                                _cuda.read_source(f))]
    assert not missing


def test_first_compile_notice(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "cache"
    empty.mkdir()
    monkeypatch.setenv("CUPY_CACHE_DIR", str(empty))
    monkeypatch.delenv("GPUMATCH_QUIET", raising=False)
    monkeypatch.setitem(_cuda._notice, "shown", False)
    _cuda._first_compile_notice()
    _cuda._first_compile_notice()                      # once per process
    err = capsys.readouterr().err
    assert err.count("kernel cache") == 1 and str(empty) in err
    (empty / "kernel.cubin").write_bytes(b"x")         # a warm cache: silent
    monkeypatch.setitem(_cuda._notice, "shown", False)
    _cuda._first_compile_notice()
    monkeypatch.setitem(_cuda._notice, "shown", False)
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "missing"))
    monkeypatch.setenv("GPUMATCH_QUIET", "1")
    _cuda._first_compile_notice()
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("relpath", CU_FILES)
def test_kernel_file_compiles(relpath, tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(_cuda.read_source(relpath))
    coop = "GPUMATCH_COOPERATIVE" in src.read_text()
    for idx in ("int", "long long"):
        for extra in ([], ["-DGPUMATCH_COOPERATIVE=1", "-rdc=true"]) if coop else ([],):
            cmd = ["nvcc", "-arch=sm_80", "-std=c++17", "-ptx", f"-DIDX={idx}", *extra, "-o", str(tmp_path / "k.ptx"),
                   str(src)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            assert r.returncode == 0, r.stderr[-2000:]

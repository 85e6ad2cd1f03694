"""Shared fixtures: backends, the gpu marker, and the test corpus.

* ``backend`` runs a test on NumPy, on the compiled CPU engine (Numba; skipped
  when Numba does not import) and, when a CUDA device answers, on CuPy (the
  CuPy case carries the ``gpu`` marker).
* Tests marked ``gpu`` are skipped automatically without a usable device.
* ``corpus_dir`` is the shared corpus folder: ``$GPUMATCH_CORPUS`` when set,
  else ``../shared/corpus`` beside the repository; tests that need it skip
  when it is absent.
* Hypothesis profiles for the property tests (``test_properties.py``),
  chosen by ``$GPUMATCH_HYPOTHESIS_PROFILE``: ``ci`` (default;
  deterministic, 5 400 cases in all, about 30 s on two CPU
  cores) and ``device`` (deterministic too, four times the cases; the same
  properties also run with ``backend="cupy"`` where a device answers).
"""

from __future__ import annotations

import os

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property tests skip without hypothesis
    settings = None

#: Cases of the ``ci`` profile for a test of weight 1 (test_properties.py
#: gives each test a weight by its cost); ``device`` runs four times as many.
HYPOTHESIS_BASE = 100

if settings is not None:
    _common = dict(derandomize=True, database=None, deadline=None, print_blob=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                          HealthCheck.filter_too_much])
    settings.register_profile("ci", max_examples=HYPOTHESIS_BASE, **_common)
    settings.register_profile("device", max_examples=4 * HYPOTHESIS_BASE, **_common)
    settings.load_profile(os.environ.get("GPUMATCH_HYPOTHESIS_PROFILE", "ci"))

from gpumatch import _backend

from _corpus import corpus_dir as corpus_path  # noqa: E402  (tests/ is on sys.path)
from _corpus import load_manifest as corpus_manifest  # noqa: E402,F401


def run_in_child(code: str, *args: str, cwd, timeout: int = 600):
    """Run `code` (with `args` in ``sys.argv[1:]``) in a fresh interpreter
    that imports this checkout's gpumatch; the finished process.  For tests
    whose failure could be a device fault: that loses the CUDA context of
    the process, and the rest of the suite keeps its own."""
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout, check=False)


def certified_loop_in_child(body: str, count: int, cwd) -> None:
    """Run `body` `count` times in one fresh interpreter (:func:`run_in_child`)
    and assert that every round finished.  `body` solves and certifies one
    problem; it sees ``np``, ``sp``, ``gpumatch``, ``check_flow``,
    ``check_matching`` and ``rng`` (``default_rng(0)``, shared by the rounds)."""
    import textwrap

    code = ("import numpy as np\nimport scipy.sparse as sp\nimport gpumatch\n"
            "from gpumatch.testing import check_flow, check_matching\n"
            "rng = np.random.default_rng(0)\n"
            f"for i in range({int(count)}):\n" + textwrap.indent(textwrap.dedent(body).strip() + "\n", "    ")
            + f"print('ok', {int(count)})\n")
    done = run_in_child(code, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"ok {int(count)}" in done.stdout


#: Test modules whose ``backend``-parametrised tests also run on "numba":
#: they test the public API.  The others (test_csr.py, test_dynamic_*.py,
#: test_robustness.py) test the NumPy/CUDA twins' kernels, G-PR's progress
#: watch and the GPU repair passes, which the Numba engine does not use;
#: tests/test_numba.py tests the Numba engine and its solvers instead.
NUMBA_MODULES = {"test_matching.py", "test_flow.py", "test_validation.py", "test_examples.py", "test_cli.py",
                 "test_mixed_widths.py",
                 "test_backend.py"}
#: ... except these, which test G-PR's or the GPU max flow's own settings.
NUMBA_SKIP = {"test_push_loop_threshold_keeps_results_maximum", "test_pairs_stop_the_adaptive_period"}


def _twin_only(item) -> bool:
    """A ``backend="numba"`` case of a test of the NumPy/CUDA twins' machinery."""
    spec = getattr(item, "callspec", None)
    if spec is None or spec.params.get("backend") != "numba":
        return False
    return item.path.name not in NUMBA_MODULES or item.originalname in NUMBA_SKIP


def pytest_collection_modifyitems(config, items):
    twins = [it for it in items if _twin_only(it)]
    if twins:
        config.hook.pytest_deselected(items=twins)
        items[:] = [it for it in items if not _twin_only(it)]
    if _backend.cupy_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device through CuPy")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


@pytest.fixture(params=["numpy", "numba", pytest.param("cupy", marks=pytest.mark.gpu)])
def backend(request):
    """Backend name; the CuPy case is gpu-marked (skipped without a device)."""
    if request.param == "numba" and not _backend.numba_available():
        pytest.skip("Numba does not import")
    return request.param


@pytest.fixture
def corpus_dir():
    path = corpus_path()
    if path is None:
        pytest.skip("test corpus not found (set GPUMATCH_CORPUS)")
    return path

"""The examples run on a small input and give checked answers."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.csgraph import (
    maximum_bipartite_matching,
    maximum_flow,
    structural_rank,
)

from gpumatch.testing import check_flow, check_matching

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"gpumatch_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["structural_rank", "assignment", "min_cut_segmentation", "interactive_segmentation",
                                  "tracking"])
def test_example_has_docstring_and_main(name):
    mod = _load(name)
    assert mod.__doc__ and len(mod.__doc__.strip().splitlines()) > 3
    assert callable(mod.main)


@pytest.mark.parametrize("name", ["structural_rank", "dm_blocks", "assignment", "min_cut_segmentation",
                                  "interactive_segmentation", "tracking"])
def test_example_uses_only_public_api(name):
    """An example is what a user may copy: no private module or name of gpumatch."""
    import ast

    tree = ast.parse((EXAMPLES / f"{name}.py").read_text(encoding="utf-8"))
    private = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gpumatch":
            private += [node.module] if any(p.startswith("_") for p in node.module.split(".")) else []
            private += [a.name for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            private += [a.name for a in node.names
                        if a.name.split(".")[0] == "gpumatch" and any(p.startswith("_") for p in a.name.split("."))]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gpumatch":
            private += [node.attr] if node.attr.startswith("_") and node.attr != "__version__" else []
    assert not private, private


def test_structural_rank_generated(backend, capsys):
    out = _load("structural_rank").main(["--size", "3000", "--degree", "2", "--backend", backend])
    assert out["rank"] == out["scipy_rank"]
    m, n = out["shape"]
    assert out["singular"] == (out["rank"] < min(m, n))
    assert out["singular"]  # mean degree 2 leaves empty rows and columns
    assert out["unmatched_rows"] == m - out["rank"]
    assert out["unmatched_cols"] == n - out["rank"]
    assert "structurally singular" in capsys.readouterr().out


def test_structural_rank_file(tmp_path, capsys):
    A = sp.random(80, 60, density=0.03, format="coo", random_state=4)
    A.data[:] = 1.0
    path = tmp_path / "m.mtx"
    scipy.io.mmwrite(str(path), A)
    out = _load("structural_rank").main([str(path), "--backend", "numpy"])
    assert out["rank"] == out["scipy_rank"] == int(structural_rank(sp.csr_matrix(A)))
    assert out["shape"] == (80, 60)
    assert out["unmatched_rows"] == 80 - out["rank"]


def test_structural_rank_explicit_zeros(tmp_path):
    # 2x2 with a stored zero on the diagonal: rank 2 with stored entries, 1 with --nonzero
    A = sp.coo_matrix((np.array([1.0, 0.0, 1.0]), (np.array([0, 1, 1]), np.array([0, 1, 0]))), shape=(2, 2))
    path = tmp_path / "z.mtx"
    scipy.io.mmwrite(str(path), A)
    mod = _load("structural_rank")
    assert mod.main([str(path), "--backend", "numpy"])["rank"] == 2
    assert mod.main([str(path), "--backend", "numpy", "--nonzero"])["rank"] == 1


def test_assignment_default_table(backend, capsys):
    out = _load("assignment").main(["--backend", backend])
    A = out["matrix"]
    ref = int((maximum_bipartite_matching(A, perm_type="column") >= 0).sum())
    check_matching(A, out["job_of_worker"], "column", expected_size=ref)
    assert out["size"] == ref == len(out["jobs"]) - len(out["unfilled_jobs"])
    w_index = {w: i for i, w in enumerate(out["workers"])}
    j_index = {j: i for i, j in enumerate(out["jobs"])}
    for w, j in out["assignment"].items():
        assert A[w_index[w], j_index[j]] != 0
    assert len(set(out["assignment"].values())) == out["size"]
    text = capsys.readouterr().out
    assert "->" in text and "maximum assignment" in text


def test_assignment_custom_csv_with_unfillable_job(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("worker,job\nann,a\nbob,a\ncid,a\ncid,b\ndan,c\ndan,d\neve,c\n")
    out = _load("assignment").main(["--csv", str(table), "--backend", "numpy"])
    assert out["size"] == 4
    assert len(out["idle_workers"]) == 1
    assert out["unfilled_jobs"] == []
    check_matching(out["matrix"], out["job_of_worker"], "column", expected_size=4)


def test_assignment_bad_csv(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("worker,job\nann\n")
    with pytest.raises(ValueError, match="expected 'worker,job'"):
        _load("assignment").main(["--csv", str(table), "--backend", "numpy"])


def test_min_cut_segmentation(backend, tmp_path, capsys):
    out = _load("min_cut_segmentation").main(["--size", "48", "--backend", backend,
                                               "--out", str(tmp_path / "seg.png")])
    assert out["cut_value"] == out["scipy_value"]
    C, s, t = out["capacity"], out["source"], out["sink"]
    check_flow(C, s, t, out["flow"].flow, out["cut_value"])
    assert out["error_rate"] < 0.03
    assert out["error_rate"] < out["threshold_error_rate"] / 5
    assert pathlib.Path(out["output"]).is_file()
    assert pathlib.Path(out["output"]).stat().st_size > 48 * 48
    # the returned mask is a minimum cut: the arcs leaving it sum to the flow value
    side = np.zeros(C.shape[0], dtype=bool)
    side[: 48 * 48] = out["mask"].ravel()
    side[s] = True
    Ccoo = sp.coo_matrix(C)
    crossing = side[Ccoo.row] & ~side[Ccoo.col]
    assert int(Ccoo.data[crossing].sum()) == out["cut_value"]
    assert "pixels differing from the ground truth" in capsys.readouterr().out


def test_min_cut_segmentation_pgm_fallback(tmp_path):
    out = _load("min_cut_segmentation").main(["--size", "24", "--backend", "numpy", "--no-scipy",
                                               "--out", str(tmp_path / "seg.pgm")])
    data = pathlib.Path(out["output"]).read_bytes()
    assert data.startswith(b"P5\n")
    assert out["scipy_value"] is None
    ref = int(maximum_flow(out["capacity"].astype(np.int32), out["source"], out["sink"]).flow_value)
    assert out["cut_value"] == ref


def test_min_cut_segmentation_png_without_imaging_library_says_so(tmp_path, capsys, monkeypatch):
    # neither matplotlib nor pillow importable: a PGM is written beside the
    # requested name, and a note on stderr names the missing packages
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "PIL", None)
    out = _load("min_cut_segmentation").main(["--size", "24", "--backend", "numpy", "--no-scipy",
                                               "--out", str(tmp_path / "seg.png")])
    written = pathlib.Path(out["output"])
    assert written == tmp_path / "seg.pgm"
    assert written.read_bytes().startswith(b"P5\n")
    assert not (tmp_path / "seg.png").exists()
    err = capsys.readouterr().err
    assert "seg.png" in err and "pillow" in err and str(written) in err


def test_interactive_segmentation(backend, tmp_path, capsys):
    out = _load("interactive_segmentation").main(["--size", "48", "--rounds", "5", "--backend", backend, "--scipy",
                                                   "--time-budget", "none", "--out", str(tmp_path / "r.png")])
    rounds = out["rounds"]
    assert len(rounds) == 5
    for r in rounds:
        # every round a repair (no time budget), with the cut of a solve from scratch and of scipy
        assert r["mode"] == "dynamic"
        assert r["cut_value"] == r["scratch_value"] == r["scipy_value"]
        assert r["arcs"] == 2 * r["pixels"].shape[0] > 0
    C, s, t = out["capacity"], out["source"], out["sink"]
    check_flow(C, s, t, out["flow"].flow, rounds[-1]["cut_value"])
    # the returned mask is a minimum cut of the scribbled network
    side = np.zeros(C.shape[0], dtype=bool)
    side[: 48 * 48] = out["mask"].ravel()
    side[s] = True
    Ccoo = sp.coo_matrix(C)
    assert int(Ccoo.data[side[Ccoo.row] & ~side[Ccoo.col]].sum()) == rounds[-1]["cut_value"]
    # scribbled pixels end on their side, and the scribbles fixed pixels
    tied, mask = out["tied"], out["mask"]
    assert (tied != 0).sum() > 0
    assert mask[tied == 1].all() and not mask[tied == -1].any()
    assert rounds[-1]["wrong"] < out["first_wrong"]
    assert pathlib.Path(out["output"]).is_file()
    assert "re-solving against" in capsys.readouterr().out


def test_interactive_segmentation_budget_and_bad_args(capsys):
    mod = _load("interactive_segmentation")
    out = mod.main(["--size", "24", "--rounds", "2", "--backend", "numpy"])
    ref = int(maximum_flow(out["capacity"].astype(np.int32), out["source"], out["sink"]).flow_value)
    assert out["rounds"][-1]["cut_value"] == ref
    assert all(r["mode"] in ("dynamic", "dynamic->scratch", "scratch") for r in out["rounds"])
    with pytest.raises(SystemExit):
        mod.main(["--time-budget", "soon", "--backend", "numpy"])
    assert "--time-budget must be a number" in capsys.readouterr().err


def test_interactive_segmentation_progress_and_no_compare(capsys):
    out = _load("interactive_segmentation").main(["--size", "32", "--rounds", "3", "--backend", "numpy",
                                                   "--time-budget", "none", "--no-compare"])
    rounds = out["rounds"]
    assert len(rounds) == 3
    assert all(r["scratch_value"] is None and r["scratch_s"] is None for r in rounds)
    # the re-solved cut is still a certified maximum flow of the scribbled network
    C, s, t = out["capacity"], out["source"], out["sink"]
    check_flow(C, s, t, out["flow"].flow, rounds[-1]["cut_value"])
    text = capsys.readouterr().out.splitlines()
    # a progress line comes before the network is built and before the first (slowest) solve
    assert text[0].startswith("building the 32 x 32 image")
    first = next(i for i, ln in enumerate(text) if ln.startswith("first cut "))
    assert text[first - 1].startswith("first cut: setting up the solver")
    assert "from scratch" not in text[-1] and "re-solving" in text[-1]


def test_tracking(capsys):
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching as scipy_mwfbm

    out = _load("tracking").main(["--objects", "3000", "--leave", "0.1", "--backend", "numba"])
    C, res = out["cost_matrix"], out["result"]
    assert C.shape[0] == C.shape[1] and res.full
    r, c = scipy_mwfbm(C)
    assert np.isclose(res.cost, C[r, c].sum(), rtol=1e-12)          # scipy's optimum, same matrix
    assert out["certificate"].optimal
    obj, det = out["linked"]
    links = out["links"].tocsr()
    assert np.all(np.asarray(links[obj, det]).ravel() > 0)           # every link is a candidate
    assert len(set(obj.tolist())) == obj.shape[0] and len(set(det.tolist())) == det.shape[0]
    assert out["correct"] > 0.9 * out["stayed"]
    text = capsys.readouterr().out
    assert "optimal: True" in text and "true links found" in text


def test_tracking_arguments(capsys):
    mod = _load("tracking")
    out = mod.main(["--objects", "50", "--gate", "0.01", "--backend", "numpy"])   # almost no candidates
    assert out["result"].full and out["certificate"].optimal
    with pytest.raises(SystemExit):
        mod.main(["--gate", "0"])
    assert "--gate > 0" in capsys.readouterr().err

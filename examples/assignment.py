#!/usr/bin/env python3
"""Assign workers to jobs: a maximum bipartite matching from a small table.

Each line of the input table says that a worker is qualified for a job
(``worker,job``, with a header line).  Each worker takes at most one job and
each job needs one worker; a *maximum matching* of the worker x job
qualification matrix fills as many jobs as possible.  The example

* reads the table (``examples/data/qualifications.csv`` by default, or any
  CSV given with ``--csv``);
* builds the sparse qualification matrix, rows = workers, columns = jobs;
* calls ``gpumatch.matching.maximum_bipartite_matching(..., perm_type="column")``,
  which gives, for each worker, the job it gets (or -1);
* prints the assignment, the workers left without a job and the jobs left
  unfilled, and proves the assignment maximum with
  ``gpumatch.testing.check_matching`` (a König cover of the same size).

Several maximum assignments usually exist; which one is printed may vary
between backends and versions, its size does not.

    python examples/assignment.py
    python examples/assignment.py --csv my_table.csv --backend numpy
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import sys

try:
    import gpumatch  # noqa: F401
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np
import scipy.sparse as sp

from gpumatch.backends import resolve_backend, to_numpy
from gpumatch.matching import maximum_bipartite_matching
from gpumatch.testing import check_matching

DEFAULT_TABLE = pathlib.Path(__file__).resolve().parent / "data" / "qualifications.csv"


def read_table(path):
    """Read ``worker,job`` pairs; returns (workers, jobs, pairs) in first-seen order."""
    workers, jobs, pairs = {}, {}, []
    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].lstrip().startswith("#")]
    if rows and [c.strip().lower() for c in rows[0][:2]] == ["worker", "job"]:
        rows = rows[1:]
    for lineno, r in enumerate(rows, start=2):
        if len(r) < 2 or not r[0].strip() or not r[1].strip():
            raise ValueError(f"{path}: line {lineno}: expected 'worker,job', got {','.join(r)!r}")
        w, j = r[0].strip(), r[1].strip()
        pairs.append((workers.setdefault(w, len(workers)), jobs.setdefault(j, len(jobs))))
    return list(workers), list(jobs), pairs


def qualification_matrix(n_workers, n_jobs, pairs):
    """Sparse workers x jobs matrix with a 1 for each qualification (repeats merged)."""
    r = np.array([p[0] for p in pairs], dtype=np.int64)
    c = np.array([p[1] for p in pairs], dtype=np.int64)
    A = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n_workers, n_jobs))
    A.data[:] = 1.0
    return A


def main(argv=None) -> dict:
    """Run the example; returns the assignment ``{worker: job}`` and what was left over."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--csv", default=str(DEFAULT_TABLE), help="table of 'worker,job' lines (with a header)")
    p.add_argument("--backend", choices=("auto", "numpy", "cupy", "numba"), default="auto")
    args = p.parse_args(argv)

    workers, jobs, pairs = read_table(args.csv)
    A = qualification_matrix(len(workers), len(jobs), pairs)
    backend = resolve_backend(args.backend)
    job_of_worker = to_numpy(maximum_bipartite_matching(A, perm_type="column", backend=backend))
    cert = check_matching(A, job_of_worker, perm_type="column")

    assignment = {workers[i]: jobs[j] for i, j in enumerate(job_of_worker) if j >= 0}
    filled = {jobs[j] for j in job_of_worker if j >= 0}
    idle = [w for i, w in enumerate(workers) if job_of_worker[i] < 0]
    unfilled = [j for j in jobs if j not in filled]

    print(f"{len(workers)} workers, {len(jobs)} jobs, {len(pairs)} qualifications (backend {backend})\n")
    width = max(len(w) for w in workers) if workers else 6
    for w, j in assignment.items():
        print(f"  {w:<{width}}  ->  {j}")
    print(f"\n{len(assignment)} jobs filled: this is a maximum assignment "
          f"(a König cover of {cert.size} workers/jobs proves no larger one exists)")
    print(f"workers without a job: {', '.join(idle) if idle else 'none'}")
    print(f"jobs left unfilled:    {', '.join(unfilled) if unfilled else 'none'}")
    return {
        "assignment": assignment,
        "size": len(assignment),
        "idle_workers": idle,
        "unfilled_jobs": unfilled,
        "workers": workers,
        "jobs": jobs,
        "matrix": A,
        "job_of_worker": job_of_worker,
    }


if __name__ == "__main__":
    main()

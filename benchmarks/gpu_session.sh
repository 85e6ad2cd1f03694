#!/usr/bin/env bash
# One GPU-machine session: the gpu-marked tests, then the standard suite.
# Usage: benchmarks/gpu_session.sh [tests|matching|flow]... (default: all three)
# Env: GPUMATCH_CORPUS (corpus folder for the tests), OUT (output folder,
# default bench_out/gpu), MATCH_SOLVERS (default gpumatch-cupy,scipy).
# Prints short summaries last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-bench_out/gpu}"
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests matching flow)
rc=0
for step in "${steps[@]}"; do
  case "$step" in
    tests)
      python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tee "$out/gpu_tests.log" | tail -3 || rc=1 ;;
    matching)
      python3 -m gpumatch bench --suite standard --problem matching --solvers "${MATCH_SOLVERS:-gpumatch-cupy,scipy}" \
        --repeats 5 --budget 20 --timeout 120 --quiet --out "$out/matching" || rc=1 ;;
    flow)
      python3 -m gpumatch bench --suite standard --problem flow --solvers gpumatch-cupy \
        --repeats 3 --budget 20 --quiet --out "$out/flow" || rc=1 ;;
    *) echo "unknown step: $step" >&2; exit 2 ;;
  esac
done
exit $rc

#!/usr/bin/env bash
# One program's figure beside busy neighbour GPUs, through the judge's sandbox with and without
# the driver gate (bench/neighbour_check.py), plus CUDA start-up's anatomy (bench/
# startup_anatomy.py, with FJ_ANATOMY=1). Run on a GPU machine of 2+ GPUs from the repo root:
#
#   bash bench/gpu_neighbour_check.sh        # results in $OUT (default /tmp/fj-neighbour)
#
# Needs nvcc with CUPTI, python3 with numpy and nvidia-ml-py, .bwrap/ (make bwrap-bundle).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fj-neighbour}"
RUNS="${RUNS:-10}"
TESTS="${TESTS:-t01,t12}"
BUILD="${BUILD:-/tmp/fj-neighbour-build}"
mkdir -p "$OUT" "$BUILD"
export PYTHONPATH="$PWD" PYTHONUNBUFFERED=1
export FLASHJUDGE_BWRAP="${FLASHJUDGE_BWRAP:-$PWD/.bwrap/bwrap}"
ARCH="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d .)"
GPUS="$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)"
[[ -x "$BUILD/probe" ]] || nvcc -O3 -arch="$ARCH" -o "$BUILD/probe" bench/startup_anatomy.cu
[[ -x "$BUILD/hw4" ]] || nvcc -O3 -arch="$ARCH" -o "$BUILD/hw4" tests/hostile/cuda-correct/hw4.cu
INJECTION="$(python3 -c "
from pathlib import Path
from worker.harness.build import injection_library
print(injection_library(Path('$BUILD')))")"
INPUTS=()
[[ -n "${SUITE_TOTALS:-}" ]] && TESTS=""
for t in ${TESTS//,/ }; do
  [[ -f "$BUILD/$t.in" ]] || python3 -c "
from testcases.generator import write_input
from testcases.suite import load_suite
write_input('$BUILD/$t.in', load_suite('hw4').test('$t'))"
  INPUTS+=("$BUILD/$t.in")
done
cat /sys/devices/system/cpu/cpuidle/current_driver /sys/devices/system/cpu/cpuidle/current_governor* 2>/dev/null || true
EXTRA=()
if [[ -n "${IDLE_FACTORS:-}" ]]; then EXTRA+=(--idle-factors); fi
if [[ -n "${KEEPER:-}" ]]; then EXTRA+=(--keeper); fi
if [[ -n "${PARTS:-}" ]]; then EXTRA+=(--parts); fi
if [[ -n "${SUITE_TOTALS:-}" ]]; then
  mkdir -p "$BUILD/hw4-inputs"
  python3 bench/neighbour_check.py "${EXTRA[@]}" --suite-totals --program "$BUILD/hw4" \
    --probe "$BUILD/probe" --injection "$INJECTION" --inputs "$BUILD/hw4-inputs" \
    --rounds "${ROUNDS:-3}" --out "$OUT/suite_totals.json"
  exit
fi
python3 bench/neighbour_check.py "${EXTRA[@]}" --program "$BUILD/hw4" --probe "$BUILD/probe" \
  --injection "$INJECTION" --inputs "$(IFS=,; echo "${INPUTS[*]}")" --runs "$RUNS" \
  --gpus "$GPUS" --out "$OUT/neighbour_check.json"

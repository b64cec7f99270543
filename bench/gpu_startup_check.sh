#!/usr/bin/env bash
# CUDA start-up on a multi-GPU node: bench/startup_anatomy.py with its probe, the judge's CUDA
# injection (worker/harness/census_inject.c) and a real hw4 program (tests/hostile/cuda-correct)
# on t01's input. Run on the GPU machine from the repository root:
#
#   bash bench/gpu_startup_check.sh            # results in $OUT (default /tmp/fj-startup)
#
# Needs nvcc, the CUDA toolkit's CUPTI, python3 with numpy and nvidia-ml-py; .bwrap/ (make
# bwrap-bundle) for the PID-namespace check.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fj-startup}"
RUNS="${RUNS:-15}"
BUILD="$(mktemp -d)"
mkdir -p "$OUT"
CUDA="${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}"
ARCH="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | tr -d .)"
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,clocks.sm,persistence_mode --format=csv
nvcc -O3 -arch="$ARCH" -o "$BUILD/probe" bench/startup_anatomy.cu
nvcc -O3 -arch="$ARCH" -o "$BUILD/hw4" tests/hostile/cuda-correct/hw4.cu
gcc -O2 -shared -fPIC -I"$CUDA/include" -o "$BUILD/libfjcensus.so" \
    worker/harness/census_inject.c -L"$CUDA/lib64" -lcupti -Wl,-rpath,"$CUDA/lib64"
python3 - "$BUILD/t01.in" <<'EOF'
import sys
from testcases.generator import write_input
from testcases.suite import load_suite
write_input(sys.argv[1], load_suite("hw4").test("t01"))
EOF
BWRAP=()
if [[ -x .bwrap/bwrap ]]; then BWRAP=(--bwrap "$PWD/.bwrap/bwrap"); export LD_LIBRARY_PATH="$PWD/.bwrap/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
FJ_INJECT="$BUILD/libfjcensus.so" PYTHONUNBUFFERED=1 PYTHONPATH="$PWD" python3 bench/startup_anatomy.py \
    --probe "$BUILD/probe" --inject "$BUILD/libfjcensus.so" --program "$BUILD/hw4" \
    --input "$BUILD/t01.in" --runs "$RUNS" "${BWRAP[@]}" --out "$OUT/startup_anatomy.json"

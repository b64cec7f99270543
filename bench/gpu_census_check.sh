#!/usr/bin/env bash
# A time that belongs to the program and no borrowed attention, on a GPU machine: the GPU runs through the driver gate with the judge's CUDA
# injection, the borrowed-attention corpus (a child process on the GPU, cuBLAS opened by a name
# built at run time, the injection removed by a re-exec) next to its honest twin, and where a
# whole program's time goes (bench/neighbour_check.py --parts). Run from the repository root:
#
#   bash bench/gpu_census_check.sh            # results in $OUT (default /tmp/fj-census)
#
# Needs nvcc with CUPTI, python3 with numpy, pytest and nvidia-ml-py, .bwrap/ (make
# bwrap-bundle) and, where the node lacks pydantic-settings, the wheels in .whl/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fj-census}"
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH="/tmp/site"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export FLASHJUDGE_BWRAP="${FLASHJUDGE_BWRAP:-$PWD/.bwrap/bwrap}"
export FLASHJUDGE_TEST_CACHE="${FLASHJUDGE_TEST_CACHE:-/tmp/fj-cache}" FLASHJUDGE_RESULTS_DIR="$OUT"
python3 -m pytest -v -p no:cacheprovider -p no:tests.service_fixtures -m gpu tests/worker/sandbox/test_sandbox_gpu.py \
  tests/worker/test_hostile.py -k "sandbox or cuda-correct-short or borrow or census-defeat" \
  2>&1 | tail -25
python3 - "$OUT" <<'PY'
import json, sys
from pathlib import Path
for f in sorted(Path(sys.argv[1]).glob("*.json")):
    r = json.loads(f.read_text())
    for t in r.get("tests", []):
        flags = [x["reason"][:70] for x in t.get("timing_flags", [])]
        print(f"{f.stem:28s} {t['id']} {t['verdict']:3s} {t['seconds']:.3f}s {t['message'][:90]} {flags}")
PY
[[ -n "${SKIP_PARTS:-}" ]] || PARTS=1 KEEPER=1 TESTS="${PARTS_TESTS:-t01,t12}" RUNS="${RUNS:-15}" bash bench/gpu_neighbour_check.sh

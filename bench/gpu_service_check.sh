#!/usr/bin/env bash
# The feedback (roofline, flags, diagnosis, profiles) through the real service on a GPU machine: `flashjudge serve --suite hw4` (API, control
# worker, GPU worker on the real queue) judges a correct cuda-program, a correct cuda-kernel and the
# planted misaligned float4 shared store; then prints verdicts, roofline rows, flags and the
# sanitizer findings from the API, keeps the pages, and asks for one ncu profile (as a TA).
#
#   OUT=/tmp/out bash bench/gpu_service_check.sh
#
# Expects root on the GPU node, nvcc/compute-sanitizer/ncu of the CUDA toolkit, CuPy, the bwrap
# bundle in .bwrap/ and, when the node lacks them, the service's wheels in .whl/ (as .whl/gpu_run.sh).
# FLASHJUDGE_JUDGE_TESTS picks the tests (default: five of hw4, small to large).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/fj-service-check}"
mkdir -p "$OUT"
exec > >(tee "$OUT/run.txt") 2>&1
export FLASHJUDGE_DATA_DIR="${FLASHJUDGE_DATA_DIR:-/tmp/fj-service}"
export FLASHJUDGE_JUDGE_TESTS="${FLASHJUDGE_JUDGE_TESTS:-t01,t02,t05,t10,t20}"
source bench/gpu_service_env.sh
nvidia-smi -L

"${FJ[@]}" users add alice --password 'a long passphrase' --role student
"${FJ[@]}" users add tara --password 'a long passphrase' --role ta
STUDENT=$("${FJ[@]}" users token alice)
TA=$("${FJ[@]}" users token tara)
"${FJ[@]}" serve --port 8000 --suite hw4 > "$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null; wait $SERVE 2>/dev/null' EXIT
for _ in $(seq 90); do curl -sf -o /dev/null "$URL/login" && break; sleep 1; done

submit() {  # SOURCE [--language L]: judged through the queue, the table printed as it goes
  local started=$SECONDS
  timeout 400 "${FJ[@]}" submit "$@" --server "$URL" --token "$STUDENT"
  echo "--- judged in $((SECONDS - started)) s (the first includes measuring the GPU's speed of light)"
}
submit tests/hostile/cuda-correct/hw4.cu
submit tests/hostile/kernel-correct/solve.cu --language cuda-kernel
submit tests/worker/feedback_programs/misaligned-shared/hw4.cu

python3 bench/service_feedback_report.py "$URL" "$TA" "$OUT" 1 2 3 --profile 1:t10
echo "=== workers"
curl -s "$URL/api/admin/status" -H "Authorization: Bearer $TA"; echo
echo "=== errors in the service log"
grep -nE "Traceback|ERROR" "$OUT/serve.log" | grep -v kombu | head -20
tail -c 4000000 "$OUT/serve.log" > "$OUT/serve.tail" && mv "$OUT/serve.tail" "$OUT/serve.log"

#!/usr/bin/env bash
# The feedback features on a GPU machine: the gpu-marked feedback tests (a planted misaligned float4
# shared store and an out-of-bounds read diagnosed by compute-sanitizer, the speed of light, an ncu
# profile), then this GPU's measured GpuProfile over all of hw4 and the sample diagnosis/profile.
#
#   bash bench/gpu_feedback_check.sh [STEP...]
#
# STEPs (default: all): env, tests, profile, show, samples.
#   env      GPU, driver, compute-sanitizer and ncu, whether counters are restricted to admins
#   tests    tests/worker/test_feedback_gpu.py (each leaves its result as JSON in $OUT/feedback)
#   profile  measure_speed_of_light() over hw4 (FMA peak, bandwidth, tensor peak, CUDA start, reference times)
#   show     the sample diagnoses and the ncu summary the tests kept
#   samples  raw compute-sanitizer and ncu CSV output of the fixtures (run directly, as root: our
#            own fixtures, not submissions), kept in $OUT as parser samples
#
# Expects the GPU node's setup of bench/gpu_engine_check.sh (root, the bwrap bundle in .bwrap/,
# CuPy + nvcc + pytest). Output: $OUT (default /tmp/fj-feedback-check).
set -uo pipefail
cd "$(dirname "$0")/.."

export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export FLASHJUDGE_BWRAP="${FLASHJUDGE_BWRAP:-$PWD/.bwrap/bwrap}"
FJ_CACHE="${FJ_CACHE:-/tmp/fj-cache}"
OUT="${OUT:-/tmp/fj-feedback-check}"
PY="${PYTHON:-python3}"
FIX=tests/worker/feedback_programs
mkdir -p "$OUT/feedback" "$FJ_CACHE"
failures=()

step_env() {
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  grep -i profiling /proc/driver/nvidia/params || echo "(no RestrictProfiling line)"
  ls -la "$(command -v ncu)" "$(command -v compute-sanitizer)"; head -c 300 "$(command -v ncu)" | strings | head -5
  for tool in compute-sanitizer ncu nvcc; do
    printf '%s: %s\n' "$tool" "$(command -v $tool || ls /usr/local/cuda/bin/$tool 2>&1)"
  done
  compute-sanitizer --version | tail -1; ncu --version | tail -1
}

step_tests() {
  FLASHJUDGE_TEST_CACHE="$FJ_CACHE" FLASHJUDGE_FEEDBACK_OUT="$OUT/feedback" \
    "$PY" -m pytest -v -p no:cacheprovider -m gpu tests/worker/feedback/test_feedback_gpu.py
}

step_profile() {
  FJ_CACHE="$FJ_CACHE" "$PY" - <<'PYEOF' | tee "$OUT/gpu-profile.txt"
import json, os, time
from testcases.suite import load_suite
from worker.feedback.roofline import roofline_of
from worker.feedback.speed_of_light import measure_speed_of_light
from worker.settings import WorkerSettings
started = time.monotonic()
p = measure_speed_of_light(os.environ["FJ_CACHE"], suite="hw4",
                           machine=WorkerSettings().machine())
print(f"measured in {time.monotonic() - started:.1f} s")
print(json.dumps({k: v for k, v in p.to_dict().items() if k != "reference_s"}, indent=1))
print(f"{'test':<5}{'B':>6}{'N':>6}{'d':>4}{'ref ms':>10}{'ref TFLOP/s':>13}{'least ms':>10}")
for s in load_suite("hw4").tests:
    ref = p.reference_s["hw4"][s.id]
    r = roofline_of(s.id, s.B, s.N, s.d, ref, p)
    print(f"{s.id:<5}{s.B:>6}{s.N:>6}{s.d:>4}{ref * 1e3:>10.3f}{r.achieved_tflops:>13.2f}"
          f"{r.least_s * 1e3:>10.3f}")
PYEOF
}

step_show() {
  "$PY" - "$OUT/feedback" <<'PYEOF'
import json, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    d = json.loads(path.read_text())
    print(f"--- {path.name}")
    if "reports" in d:
        print(d["message"], f"({d['seconds']:.1f} s)", d["error"] or "")
        for r in d["reports"]:
            print(f"  {r['tool']}: {r['total']} errors, summary {r['summary']!r}")
            for f in r["findings"][:3]:
                print(f"    {f['kind']} at {f['where']} thread {f['thread']} block {f['block']}"
                      f" {f['details']}")
    elif "kernels" in d:
        print(f"error {d['error']}, report {d['report_path']}, {d['seconds']:.1f} s")
        for k in d["kernels"]:
            print(f"  {k}")
    else:
        print(json.dumps(d, indent=1))
PYEOF
}

step_samples() {
  local dir
  dir=$(mktemp -d)
  nvcc -arch=sm_90 -lineinfo -o "$dir/hw4" "$FIX/misaligned-shared/hw4.cu"
  "$PY" -c "
import sys; from dataclasses import replace
from testcases.generator import write_input; from testcases.suite import load_suite
write_input(sys.argv[1], replace(load_suite('hw4-mini').test('t02'), B=2))" "$dir/in.bin"
  (cd "$dir" && compute-sanitizer --tool memcheck --print-limit 4 ./hw4 in.bin out.bin) \
    > "$OUT/sample-memcheck.txt" 2>&1
  head -30 "$OUT/sample-memcheck.txt"
  nvcc -arch=sm_90 -lineinfo -o "$dir/ok" tests/hostile/cuda-correct/hw4.cu
  (cd "$dir" && ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --launch-count 1 --clock-control none --export prof --force-overwrite ./ok in.bin out.bin \
    > /dev/null 2>&1; ncu --import prof.ncu-rep --csv --page details > "$OUT/sample-details.csv";
    ncu --import prof.ncu-rep --csv --page raw > "$OUT/sample-raw.csv")
  head -c 1500 "$OUT/sample-details.csv"; echo
  "$PY" -c "
import sys; from worker.feedback.ncu_report import parse_profile
print(parse_profile(open(sys.argv[1]).read(), open(sys.argv[2]).read()))" \
    "$OUT/sample-details.csv" "$OUT/sample-raw.csv"
  rm -rf "$dir"
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(env tests profile show samples)
for step in "${steps[@]}"; do
  echo "=== $step ==="
  if ! "step_$step" 2>&1 | tee "$OUT/$step.log"; then failures+=("$step"); fi
done
echo "=== done: ${#failures[@]} step(s) failed ${failures[*]:-} (logs in $OUT) ==="
[ ${#failures[@]} -eq 0 ]

#!/usr/bin/env bash
# The judging engine on a GPU machine: the gpu-marked engine tests (a correct, a wrong and a crashing
# hw4.cu and a correct cuda-kernel over the full hw4 suite, the course Makefile, the GPU hostile
# cases), the spread of one cuda-kernel submission's timings over 5 judgings, and the judge overhead.
#
#   bash bench/gpu_engine_check.sh [STEP...]
#
# STEPs, in order (default: all), each meant to fit in one 10-minute device command:
#   env            GPU, nvcc, sandbox preflight                                  (~10 s)
#   prepare        hw4's inputs + expected outputs, and the cuda-kernel's fresh inputs (~3-4 min)
#   tests-program  the corpus (CPU cases too: the sandbox on this node) but the cuda-kernel cases
#   tests-kernel   the cuda-kernel cases (correct on all of hw4, cached answer, never-ending)
#   summary        per-test tables of every judging the tests kept (verdict, seconds, max error)
#   repeat         5 judgings of kernel-correct on $REPEAT_TESTS: spread of the mean timings
#   overhead       bench/judge_overhead.py with cuda-correct over all of hw4
#
# Expects the GPU node's setup: root, no bubblewrap installed (the bundle of scripts/bwrap-bundle.sh
# carried in .bwrap/, found through FLASHJUDGE_BWRAP), CuPy + nvcc + pytest; FastAPI/Celery are not
# needed. Output: $OUT (default /tmp/fj-engine-check), one log per step plus one JSON per judging.
# The prepared cache $FJ_CACHE (default /tmp/fj-cache) is filled once and reused by later steps.
set -uo pipefail
cd "$(dirname "$0")/.."

export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export FLASHJUDGE_BWRAP="${FLASHJUDGE_BWRAP:-$PWD/.bwrap/bwrap}"
export FLASHJUDGE_INPUT_CACHE_GB="${FLASHJUDGE_INPUT_CACHE_GB:-24}"  # hw4 + fresh inputs (20 GB)
FJ_CACHE="${FJ_CACHE:-/tmp/fj-cache}"
OUT="${OUT:-/tmp/fj-engine-check}"
PY="${PYTHON:-python3}"
FIX=tests/hostile
REPEAT_TESTS="${REPEAT_TESTS:-t01,t05,t11,t12,t20,t22,t25,t30}"
mkdir -p "$OUT/judgings" "$FJ_CACHE"
failures=()

step_env() {
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv
  nvcc --version | tail -1
  df -h /dev/shm "$FJ_CACHE" | tail -2
  "$PY" - <<'EOF'
from worker.languages.arch import gpu_arch, supported_archs
from worker.sandbox.bwrap import preflight
from worker.sandbox.workspace import scratch_root
from worker.settings import WorkerSettings
config = WorkerSettings().judge_config()
machine = config.machine
print("gpu arch", gpu_arch(machine), "nvcc archs", sorted(supported_archs(), key=int))
print("scratch", machine.scratch or scratch_root(), "input cache cap GiB",
      config.inputs.cap_bytes / 2**30)
print(preflight(bwrap=machine.bwrap, cgroup_root=machine.cgroup_root))
EOF
}

step_prepare() {
  FJ_CACHE="$FJ_CACHE" "$PY" - <<'EOF'
import os, time
from testcases.prepared import prepare_suite
from testcases.suite import load_suite
from worker.languages.cuda_kernel import FRESH_SEED_OFFSET
suite, cache = load_suite("hw4"), os.environ["FJ_CACHE"]
started = time.monotonic()
prepare_suite(suite, cache, "auto")
print(f"hw4 prepared in {time.monotonic() - started:.1f} s", flush=True)
for spec in suite.tests:  # the cuda-kernel's fresh inputs (what judge() prepares on first use)
    prepare_suite(suite, cache, "auto", spec.seed + FRESH_SEED_OFFSET, tests=[spec.id])
print(f"fresh inputs prepared, {time.monotonic() - started:.1f} s in all")
EOF
}

run_gpu_tests() {  # run_gpu_tests PYTEST_K_EXPRESSION
  FLASHJUDGE_TEST_CACHE="$FJ_CACHE" FLASHJUDGE_RESULTS_DIR="$OUT/judgings" \
    "$PY" -m pytest -v -p no:cacheprovider -k "$1" \
    tests/worker/test_hostile.py tests/worker/harness/test_harness_build.py
}

step_tests-program() { run_gpu_tests "not kernel"; }
step_tests-kernel() { run_gpu_tests "kernel"; }

show_json() {  # show_json FILE...: one table per judging
  "$PY" - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    print(f"{path}: {d['language']} compile {d['compile']['ok']} score {d['score']} "
          f"passed {d['passed']}/{len(d['tests'])} time {d['total_seconds']:.3f} s "
          f"overhead {d['overhead_s']:.3f} s {'; '.join(d['notes'])}")
    for t in d["tests"]:
        k = t.get("timing") or {}
        extra = (f" mean {k['mean_s'] * 1e3:.3f} ms std {k['std_s'] * 1e3:.3f} ms "
                 f"min {k['min_s'] * 1e3:.3f} ms runs {k['runs']}") if k else ""
        err = "-" if t["max_error"] is None else f"{t['max_error']:.2e}"
        print(f"  {t['id']} {t['verdict']:>3} {t['seconds']:9.4f} s err {err}{extra}  "
              f"{t['message'][:70]}")
EOF
}

step_summary() { show_json "$OUT"/judgings/*.json; }

step_repeat() {  # the spread of one cuda-kernel submission's timings over 5 judgings
  for i in 1 2 3 4 5; do
    "$PY" - "$FIX/kernel-correct/solve.cu" "$REPEAT_TESTS" "$FJ_CACHE" \
      > "$OUT/judgings/repeat-$i.json" <<'EOF'
import json, sys
from pathlib import Path
from worker.pipeline import JudgeRequest, judge
from worker.settings import WorkerSettings
source, tests, cache = Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
request = JudgeRequest("cuda-kernel", {source.name: source.read_bytes()}, "hw4", tests)
print(json.dumps(judge(request, cache, config=WorkerSettings().judge_config()).to_dict()))
EOF
  done
  "$PY" - "$OUT/judgings" <<'EOF'
import json, statistics, sys
from pathlib import Path
runs = [json.loads((Path(sys.argv[1]) / f"repeat-{i}.json").read_text()) for i in range(1, 6)]
print(f"{'test':<6}{'mean of means ms':>18}{'spread %':>10}{'min ms':>10}{'max ms':>10}"
      f"{'std/mean %':>12}")
for k, t in enumerate(runs[0]["tests"]):
    timings = [r["tests"][k]["timing"] for r in runs if r["tests"][k].get("timing")]
    if len(timings) < 2:
        print(f"{t['id']:<6} no timings ({t['verdict']}: {t['message'][:60]})")
        continue
    means = [x["mean_s"] * 1e3 for x in timings]
    m = statistics.mean(means)
    noise = statistics.mean(100 * x["std_s"] / x["mean_s"] for x in timings)
    print(f"{t['id']:<6}{m:>18.4f}{100 * (max(means) - min(means)) / m:>9.2f}%"
          f"{min(means):>10.4f}{max(means):>10.4f}{noise:>11.2f}%")
EOF
}

step_overhead() {
  "$PY" bench/judge_overhead.py "$FIX/cuda-correct/hw4.cu" --suite hw4 --cache-dir "$FJ_CACHE" \
    --repeat 2
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(env prepare tests-program tests-kernel summary repeat overhead)
for step in "${steps[@]}"; do
  echo "=== $step ==="
  if ! "step_$step" 2>&1 | tee "$OUT/$step.log"; then failures+=("$step"); fi
done
echo "=== done: ${#failures[@]} step(s) failed ${failures[*]:-} (logs in $OUT) ==="
[ ${#failures[@]} -eq 0 ]

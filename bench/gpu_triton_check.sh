#!/usr/bin/env bash
# triton-kernel on a GPU node, in one go:
#   bash bench/gpu_triton_check.sh [probe|corpus|figures|all] [bench/triton_check.py args]
# probe: can the sandbox's Python import torch and triton, map T's memory, JIT, record kernels;
# corpus: the gpu tests (forgers vs twins, SDPA direct/hidden/matmul -> BK, Triton CE, honest);
# figures: the honest kernel on hw4 through the pipeline, next to triton.testing.do_bench
#   (t01-t24 took ~300 s on an H100: `figures --tests t25-t30` for the rest in another call).
# Logs go under $OUT (the device tool's folder) or ./gpu-logs.
set -o pipefail
out="${OUT:-gpu-logs}"; mkdir -p "$out"
mode="${1:-all}"; shift || true
export PYTHONUNBUFFERED=1 FLASHJUDGE_RESULTS_DIR="$out/results"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/smi.txt"
if [[ $mode == probe || $mode == all ]]; then
  for py in /usr/bin/python3 /usr/local/bin/python3; do
    "$py" -I -c "import sys, torch, triton, sysconfig; print(sys.executable, sys.version.split()[0], torch.__file__, torch.__version__, triton.__version__, sysconfig.get_paths()['include'])" 2>&1 | tail -1
  done
  which gcc cc nvcc; ls "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h"
  timeout 200 python3 bench/triton_sandbox_probe.py 2>&1 | tee "$out/sandbox_probe.txt"
fi
if [[ $mode == corpus || $mode == all ]]; then
  timeout "${CORPUS_S:-200}" python3 -m pytest -m gpu -q -rfE -p no:cacheprovider --timeout 180 \
    tests/worker/harness/test_triton_gpu.py 2>&1 | tee "$out/pytest.log" | tail -60
  python3 bench/result_rows.py "$FLASHJUDGE_RESULTS_DIR"  # one line per judged case and test
fi
if [[ $mode == figures || $mode == all ]]; then
  # the inputs and expected outputs first, with the Python that has CuPy (the reference kernel);
  # then the check with the Python that has torch and triton (do_bench runs in its process)
  timeout 300 python3 -c "from testcases.prepared import default_cache_dir, prepare_suite
from testcases.suite import load_suite
prepare_suite(load_suite('hw4'), default_cache_dir(), 'auto')" || exit 1
  tpy="$(python3 -c 'from worker.languages.triton_env import triton_python; print(triton_python() or "")')"
  [[ -n $tpy ]] || { echo "no Python with torch and triton on this node"; exit 1; }
  timeout "${FIGURES_S:-600}" "$tpy" bench/triton_check.py --json "$out/figures.json" "$@" \
    2>"$out/figures.err" | tee "$out/figures.md"
  tail -20 "$out/figures.err"
fi

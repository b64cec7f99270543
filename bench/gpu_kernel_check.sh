#!/usr/bin/env bash
# Everything the GPU machine needs to check and time the reference kernel, in one go:
#   bash bench/gpu_kernel_check.sh [extra bench/reference_kernel.py args]
# Logs go under $OUT (the device tool's folder) or ./gpu-logs.
set -o pipefail
out="${OUT:-gpu-logs}"; mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/smi.txt"
python3 -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__)"
python3 -m pytest -m gpu tests/kernels/test_gpu_reference.py -q -p no:cacheprovider 2>&1 | tee "$out/pytest.log" | tail -25
python3 bench/reference_kernel.py --check --json "$out/bench.json" "$@" 2>"$out/bench.err" | tee "$out/bench.md"
tail -3 "$out/bench.err"
python3 - <<'PY' | tee "$out/file.txt"
"""reference_file on a t12-shaped input (944 MB): end-to-end throughput, page cache warm."""
import os, struct, tempfile, time
import numpy as np
from kernels import gpu_reference as gr
B, N, d = 9600, 128, 64
tmp = tempfile.mkdtemp()
path, dest = os.path.join(tmp, "t12.in"), os.path.join(tmp, "t12.out")
rng = np.random.default_rng(1)
with open(path, "wb") as f:
    f.write(struct.pack("<iii", B, N, d))
    for s in range(0, B, 800):
        f.write(rng.uniform(-3, 3, (min(800, B - s), 3, N, d)).astype("<f4").tobytes())
gr.reference_file(path, dest)
t = time.perf_counter(); gr.reference_file(path, dest); dt = time.perf_counter() - t
mb = os.path.getsize(path) / 1e6
print(f"reference_file t12 shape: {mb:.0f} MB in, {dt:.2f} s, {mb / dt / 1e3:.2f} GB/s")
PY

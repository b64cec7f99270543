"""Can the runner's sandbox run torch and Triton, and how long does each step take there?

Runs, in the GPU sandbox with the triton runner's environment and binds (its Python's prefixes
outside /usr, a writable Triton cache), a script that times: import torch, CUDA start-up, import
triton, one Triton kernel's JIT (launcher built with gcc), and a CUDA-only torch.profiler census of
that launch. Prints the sandbox's status, wall time, memory peak and every line the script wrote:
the first thing to run on a GPU node when triton-kernel judgings fail or stall.

    python3 bench/triton_sandbox_probe.py [--memory-gb 8]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from worker.languages.triton_env import triton_runtime
from worker.languages.triton_kernel import JIT_CACHE, python_binds, runner_env
from worker.sandbox.bwrap import Bind, BwrapSandbox, Limits
from worker.settings import get_worker_settings

SCRIPT = r'''
import json, sys, time
t = time.perf_counter()
def lap(what):
    global t
    now = time.perf_counter(); print(f"{what}: {now - t:.2f} s", flush=True); t = now
import torch; lap(f"import torch {torch.__version__}")
torch.zeros(1, device="cuda"); lap("CUDA start-up")
import triton, triton.language as tl; lap(f"import triton {triton.__version__}")
from torch.profiler import ProfilerActivity, profile
prof = profile(activities=[ProfilerActivity.CUDA]); prof.start(); lap("profiler started")
@triton.jit
def add_one(X, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(X + i, tl.load(X + i) + 1)
x = torch.zeros(128, device="cuda"); add_one[(1,)](x, N=128); torch.cuda.synchronize()
lap(f"Triton JIT, x[0] = {x[0].item()}")
prof.stop(); prof.export_chrome_trace("/tmp/trace.json")
names = [e["name"] for e in json.load(open("/tmp/trace.json"))["traceEvents"]
         if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
lap(f"census: {names}")
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-gb", type=float, default=8.0)
    args = parser.parse_args()
    found = triton_runtime()
    print(f"python: {found}")
    if found is None:
        raise SystemExit("no Python with torch and triton (and a GPU) on this machine")
    sandbox = BwrapSandbox.for_machine(get_worker_settings().machine(), gpu=True)
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as jit:
        Path(jit).chmod(0o777)
        Path(work, "probe.py").write_text(SCRIPT)
        result = sandbox.run([found.python, "probe.py"], workdir=Path(work),
                             limits=Limits(wall_s=300, memory_bytes=int(args.memory_gb * 2**30)),
                             binds=[Bind(Path(jit), JIT_CACHE, writable=True), *python_binds()],
                             env=runner_env({}))
    print(f"status {result.status} exit {result.exit_code} wall {result.wall_s:.1f} s, "
          f"memory peak {(result.memory_peak_bytes or 0) / 2**30:.2f} GiB, {result.message}")
    print(result.stdout_tail)
    print(result.stderr_tail[-3000:])


if __name__ == "__main__":
    main()

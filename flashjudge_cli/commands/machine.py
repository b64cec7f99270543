"""What this machine offers the judge: its GPUs, and so the suite a command judges by default.

One rule for every command (`serve`, `judge-local`, `testcase`): `--suite`, else
$FLASHJUDGE_SUITE, else hw4 when nvidia-smi lists a GPU and hw4-mini on the CPU track (hw4's
big tests take hours in plain C). A student generating inputs gets the suite the server judges.
"""

from __future__ import annotations

import os
import shutil
import subprocess

GPU_SUITE = "hw4"  # the course's 30 tests
CPU_SUITE = "hw4-mini"  # 10 small tests for CPU machines and CI


def gpu_indices(spec: str) -> list[str]:
    """GPU indices for 'all' (every GPU `nvidia-smi -L` lists), 'none', or '0,1'."""
    if spec == "none":
        return []
    if spec != "all":
        return [s.strip() for s in spec.split(",") if s.strip()]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(out.stdout.splitlines()) if line.startswith("GPU")]


def default_suite(gpus: list[str] | None = None) -> str:
    """$FLASHJUDGE_SUITE, else hw4 with a GPU (given, or listed by nvidia-smi), else hw4-mini."""
    chosen = os.environ.get("FLASHJUDGE_SUITE", "").strip()
    if chosen:
        return chosen
    has_gpu = bool(gpu_indices("all") if gpus is None else gpus)
    return GPU_SUITE if has_gpu else CPU_SUITE

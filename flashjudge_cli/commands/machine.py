"""What this machine offers the judge: its GPUs, and so the suite a command judges by default.

One rule for every command (`serve`, `judge-local`, `testcase`): `--suite`, else
$FLASHJUDGE_SUITE, else hw4 when NVML lists a GPU the judge may use and hw4-mini on the CPU track
(hw4's big tests take hours in plain C). A student generating inputs gets the suite the server
judges.
"""

from __future__ import annotations

import os

from worker.gpus import Gpu, choose, node_gpus

GPU_SUITE = "hw4"  # the course's 30 tests
CPU_SUITE = "hw4-mini"  # 10 small tests for CPU machines and CI


def judge_gpus(spec: str = "all") -> list[Gpu]:
    """The GPUs this node gives the judge: `spec` ('all', 'none', indices as nvidia-smi numbers
    them, or UUIDs) within the operator's CUDA_VISIBLE_DEVICES, by identity (worker/gpus.py).
    Raises GpuSelectionError, whose message names the GPUs there are."""
    return choose(node_gpus(), spec, os.environ.get("CUDA_VISIBLE_DEVICES"))


def default_suite(gpus: list[Gpu] | None = None) -> str:
    """$FLASHJUDGE_SUITE, else hw4 with a GPU (given, or listed by nvidia-smi), else hw4-mini."""
    chosen = os.environ.get("FLASHJUDGE_SUITE", "").strip()
    if chosen:
        return chosen
    has_gpu = bool(judge_gpus("all") if gpus is None else gpus)
    return GPU_SUITE if has_gpu else CPU_SUITE

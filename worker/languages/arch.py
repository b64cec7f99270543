"""GPU architectures: this worker's GPU's, the ones nvcc builds, and rewriting Makefiles.

Students keep submitting the course's Makefile (`-arch=sm_61`), which CUDA 13's nvcc refuses. The
judge builds such a Makefile for the GPU it runs on by rewriting the architecture numbers on a copy,
and tells the student what it changed. `rewrite_arch` is a pure text function, tested alone.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from worker.machine import Machine
from worker.running.plan import DEFAULT_ARCH

# sm_61, compute_61, sm_90a, compute_100f, and -arch=native / all / all-major
_ARCH_TOKEN = re.compile(r"\b(sm|compute)_(\d+)([a-z]?)\b")
_ARCH_KEYWORD = re.compile(r"((?:-arch|--gpu-architecture)[= ])(native|all-major|all)\b")


@dataclass
class ArchRewrite:
    """A Makefile after rewriting, and what was changed (one line per distinct change)."""

    text: str  # the rewritten Makefile
    notes: list[str] = field(default_factory=list)  # e.g. "changed sm_61 to sm_90 (...)"

    @property
    def changed(self) -> bool:
        return bool(self.notes)


def rewrite_arch(text: str, supported: set[str], target: str) -> ArchRewrite:
    """Replace each sm_XX/compute_XX nvcc does not support (or this GPU cannot run) by `target`.

    `supported` holds the numbers nvcc accepts (e.g. {"75", "80", "90"}); `target` is this GPU's
    (e.g. "90"). Architectures newer than the GPU are rewritten too: their code would not load here.
    `-arch=native` is rewritten because builds run in a sandbox that sees no GPU.
    """
    notes: dict[str, str] = {}

    def arch_token(match: re.Match[str]) -> str:
        kind, number = match.group(1), match.group(2)
        if number in supported and int(number) <= int(target):
            return match.group(0)
        why = "not supported by this nvcc" if number not in supported else "newer than this GPU"
        old, new = match.group(0), f"{kind}_{target}"
        notes[old] = f"changed {old} to {new} for this GPU ({old}: {why})"
        return new

    def arch_keyword(match: re.Match[str]) -> str:
        old = match.group(0)
        new = f"{match.group(1)}sm_{target}"
        notes[old] = f"changed {old} to {new} (builds see no GPU)"
        return new

    text = _ARCH_TOKEN.sub(arch_token, text)
    text = _ARCH_KEYWORD.sub(arch_keyword, text)
    return ArchRewrite(text=text, notes=list(notes.values()))


@functools.lru_cache(maxsize=1)
def supported_archs(nvcc: str = "nvcc") -> frozenset[str]:
    """The sm numbers this nvcc builds for (`nvcc --list-gpu-code`); empty when nvcc is missing."""
    path = shutil.which(nvcc)
    if path is None:
        return frozenset()
    try:
        out = subprocess.run(
            [path, "--list-gpu-code"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(m.group(2) for m in _ARCH_TOKEN.finditer(out))


def gpu_arch(machine: Machine | None = None) -> str:
    """The GPU architecture to build for on `machine` (default: a bare one), e.g. "90".

    Its gpu_arch (FLASHJUDGE_GPU_ARCH) overrides; otherwise its GPU's compute capability
    (Machine.gpu: the GPU this worker was handed, by UUID on a pinned worker); without one,
    DEFAULT_ARCH (the H100) so that CPU-only machines still build for the real target.
    """
    machine = machine or Machine()
    override = (machine.gpu_arch or "").strip()
    if override:
        return override.removeprefix("sm_")
    handed = machine.gpu
    return handed.compute_cap if handed is not None and handed.compute_cap else DEFAULT_ARCH

"""`cuda-program`: hw4.cu (+ optional Makefile), run as `./hw4 INPUT OUTPUT` on the worker's GPU.

With a Makefile the build is `make hw4`, after rewriting architectures the local nvcc rejects (the
course's `-arch=sm_61`) to this GPU's; without one, a default nvcc line for this GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from flashjudge.contract.languages import CUDA_PROGRAM, LanguageFacts
from worker.harness.linkcheck import borrowed_in_binary
from worker.languages.arch import rewrite_arch
from worker.languages.base import BuildPlan, BuildSettings, Language, with_nvcc_flags
from worker.running.submission import SubmissionError, text_of


def default_nvcc(arch: str) -> list[str]:
    """The build line used when the student gave no Makefile."""
    return ["nvcc", "-std=c++17", "-O3", f"-arch=sm_{arch}", "-o", "hw4", "hw4.cu", "-lm"]


class CudaProgram(Language):
    facts: ClassVar[LanguageFacts] = CUDA_PROGRAM

    @classmethod
    def claims(cls, files: Mapping[str, bytes]) -> bool:
        return "hw4.cu" in files or ("Makefile" in files and any(n.endswith(".cu") for n in files))

    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        if "hw4.cu" not in files and "Makefile" not in files:
            raise SubmissionError("hw4.cu", "cuda-program needs hw4.cu (and optionally a Makefile)")
        if "Makefile" not in files:
            argv = with_nvcc_flags(default_nvcc(settings.gpu_arch), settings.nvcc_flags)
            return BuildPlan(files=dict(files), argv=argv, product="hw4")
        laid_out = dict(files)
        notes: list[str] = []
        if settings.supported_archs:
            rewrite = rewrite_arch(
                text_of(files["Makefile"]), set(settings.supported_archs), settings.gpu_arch
            )
            if rewrite.changed:
                laid_out["Makefile"] = rewrite.text.encode()
                notes = rewrite.notes
        argv = with_nvcc_flags(["make", "hw4"], settings.nvcc_flags)
        return BuildPlan(files=laid_out, argv=argv, product="hw4", notes=notes)

    def borrowed_at_build(self, product: Path) -> str | None:
        """cuBLAS/cuDNN linked or named, CUTLASS's attention compiled in (linkcheck.py)."""
        return borrowed_in_binary(product)

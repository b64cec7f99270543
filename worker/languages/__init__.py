"""The language registry: one small class per submission kind, each pointing at its row of the
contract's table (flashjudge/contract/languages.py), looked up by name or inferred."""

from __future__ import annotations

from collections.abc import Mapping

from worker.languages.base import BuildPlan, BuildSettings, Language
from worker.languages.c_program import CProgram
from worker.languages.cuda_kernel import CudaKernel
from worker.languages.cuda_program import CudaProgram
from worker.languages.registry import Registry
from worker.languages.triton_kernel import TritonKernel

# Inference asks in this order: a .cu with solve() and no main() is a kernel before it is a program.
REGISTRY = Registry((CudaKernel, CudaProgram, TritonKernel, CProgram))

__all__ = ["REGISTRY", "BuildPlan", "BuildSettings", "Language", "Registry", "get_language",
           "infer_language"]


def get_language(name: str, registry: Registry = REGISTRY) -> Language:
    """The language called `name`; SubmissionError listing the known ones otherwise."""
    return registry.get(name)


def infer_language(files: Mapping[str, bytes], registry: Registry = REGISTRY) -> str:
    """The language these files are written in, from their names and contents."""
    return registry.infer(files)

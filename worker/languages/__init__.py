"""The language registry: one small class per submission kind, looked up by name or inferred."""

from __future__ import annotations

from collections.abc import Mapping

from worker.languages.base import BuildPlan, BuildSettings, Language
from worker.languages.c_program import CProgram
from worker.languages.cuda_kernel import CudaKernel
from worker.languages.cuda_program import CudaProgram
from worker.languages.triton_kernel import TritonKernel
from worker.running.submission import SubmissionError

# Inference asks in this order: a .cu with solve() and no main() is a kernel before it is a program.
LANGUAGES: dict[str, type[Language]] = {
    cls.name: cls for cls in (CudaKernel, CudaProgram, TritonKernel, CProgram)
}

__all__ = ["LANGUAGES", "BuildPlan", "BuildSettings", "Language", "get_language", "infer_language"]


def get_language(name: str) -> Language:
    """The language called `name`; SubmissionError listing the known ones otherwise."""
    try:
        return LANGUAGES[name]()
    except KeyError:
        known = ", ".join(LANGUAGES)
        raise SubmissionError("language", f"unknown language {name!r} (known: {known})") from None


def infer_language(files: Mapping[str, bytes]) -> str:
    """The language these files are written in, from their names and contents."""
    for name, cls in LANGUAGES.items():
        if cls.claims(files):
            return name
    raise SubmissionError(
        "language",
        "cannot tell the language: expected hw4.cu, a .cu with solve(), a .py with solve(), "
        "or .c/.cpp files",
    )

"""The public facts of each language, and the rule that decides when a diagnosis follows a result.

The worker's registry (worker/languages/) says how to build and run each language; this table is
what the app needs to route and check uploads, and both read the same names from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from flashjudge.contract.names import Queue
from flashjudge.contract.results import JudgeResult
from flashjudge.contract.status import Verdict


@dataclass(frozen=True)
class LanguageFacts:
    """What everyone may know about a language."""

    name: str  # what users type (--language), e.g. "cuda-program"
    uses_gpu: bool  # needs a GPU worker
    suffixes: tuple[str, ...]  # accepted file names end with one of these ("Makefile" whole)
    title: str  # one line for pages and errors
    main_file: str  # the file a student drops first (the submit page says so)

    @property
    def queue(self) -> Queue:
        """The queue its judgings wait on."""
        return Queue.GPU if self.uses_gpu else Queue.CPU


LANGUAGES: dict[str, LanguageFacts] = {f.name: f for f in (
    LanguageFacts("cuda-program", True, (".cu", ".cuh", ".h", "Makefile"),
                  "CUDA program: hw4.cu (+ Makefile), run as ./hw4 IN OUT", "hw4.cu"),
    LanguageFacts("cuda-kernel", True, (".cu", ".cuh", ".h"),
                  "CUDA kernel: solve.cu defining extern \"C\" solve(Q, K, V, O, B, N, d)",
                  "solve.cu"),
    LanguageFacts("triton-kernel", True, (".py",),
                  "Triton kernel: solve.py defining solve(Q, K, V, O, B, N, d) on CUDA tensors",
                  "solve.py"),
    LanguageFacts("c-program", False, (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", "Makefile"),
                  "C/C++ program for the CPU (OpenMP allowed), run as ./hw4 IN OUT", "hw4.c"),
)}
GPU_LANGUAGES = frozenset(n for n, f in LANGUAGES.items() if f.uses_gpu)
# the GPU languages the sanitizer and Nsight Compute run (triton-kernel's runner is Python: not yet)
TOOLED_LANGUAGES = frozenset({"cuda-program", "cuda-kernel"})
DIAGNOSED_VERDICTS = frozenset({Verdict.WA, Verdict.RE, Verdict.NO})  # sanitizer looks at these


def diagnosis_follows(result: JudgeResult) -> bool:
    """Whether the worker sends a sanitizer diagnosis after this result (the page shows it as
    pending until it comes): a GPU language that built, with a test it can diagnose."""
    return (result.language in TOOLED_LANGUAGES and result.compile.ok and not result.system_error
            and any(t.verdict in DIAGNOSED_VERDICTS for t in result.tests))

"""The public facts of each language, one row each, and the rule that decides when a diagnosis
follows a result.

A language is one row here (what both sides may know: its files, its timer, its noise model, the
tools that run on it, what a worker needs to judge it) and one class in the worker's registry
(worker/languages/: how to build and run it), which points at its row. Every other module reads
the row's fields and never tests a language's name, so adding a language is one row and one class
(tests/worker/languages/test_new_language.py adds a toy one).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from flashjudge.contract.names import Queue
from flashjudge.contract.results import JudgeResult
from flashjudge.contract.status import Verdict


class Timer(StrEnum):
    """What a language's time measures."""

    PROGRAM = "program"  # the wall time of the whole process (./hw4 IN OUT), start-up included
    KERNEL = "kernel"  # one solve() call's GPU work, timed from outside by the trusted timer


class Noise(StrEnum):
    """The noise model its refined times assume (worker/timing/stats.py `noise_for`)."""

    PROGRAM = "program"  # a whole process: a few percent, a millisecond at least
    KERNEL = "kernel"  # the mean of many timed calls, measured to microseconds


@dataclass(frozen=True)
class LanguageFacts:
    """What everyone may know about a language: one row of LANGUAGES."""

    name: str  # what users type (--language), e.g. "cuda-program"
    uses_gpu: bool  # needs a GPU worker
    suffixes: tuple[str, ...]  # accepted file names end with one of these ("Makefile" whole)
    title: str  # one line for pages and errors
    main_file: str  # the file a student drops first (the submit page says so)
    timer: Timer  # what its time measures
    noise: Noise  # the noise model of its refined times
    gpu_tools: bool = False  # compute-sanitizer (the diagnosis after WA/RE/NO) and Nsight
    # Compute (profiles) run on it
    needs: str = ""  # what a worker must have besides its toolchain to judge it, in words ("":
    # nothing); a worker offers the language only once its class finds that here
    floor_built_as: str | None = None  # the file the start-up floor's calibration program is
    # built as (worker/timing/floor.py); None: no floor (a kernel's time has no start-up)
    by_queue_alone: bool = False  # judged by a worker from before heartbeats listed languages
    # wherever it consumed the language's queue (app/judging/capacity.py); a language added
    # since is offered only where a heartbeat names it

    @property
    def queue(self) -> Queue:
        """The queue its judgings wait on."""
        return Queue.GPU if self.uses_gpu else Queue.CPU


CUDA_PROGRAM = LanguageFacts(
    "cuda-program", True, (".cu", ".cuh", ".h", "Makefile"),
    "CUDA program: hw4.cu (+ Makefile), run as ./hw4 IN OUT", "hw4.cu",
    Timer.PROGRAM, Noise.PROGRAM, gpu_tools=True, floor_built_as="hw4.cu",
    by_queue_alone=True)
CUDA_KERNEL = LanguageFacts(
    "cuda-kernel", True, (".cu", ".cuh", ".h"),
    "CUDA kernel: solve.cu defining extern \"C\" solve(Q, K, V, O, B, N, d)", "solve.cu",
    Timer.KERNEL, Noise.KERNEL, gpu_tools=True, by_queue_alone=True)
TRITON_KERNEL = LanguageFacts(  # the sanitizer and ncu do not run its Python runner (not yet)
    "triton-kernel", True, (".py",),
    "Triton kernel: solve.py defining solve(Q, K, V, O, B, N, d) on CUDA tensors", "solve.py",
    Timer.KERNEL, Noise.KERNEL, needs="a Python that imports torch and triton")
C_PROGRAM = LanguageFacts(
    "c-program", False, (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", "Makefile"),
    "C/C++ program for the CPU (OpenMP allowed), run as ./hw4 IN OUT", "hw4.c",
    Timer.PROGRAM, Noise.PROGRAM, floor_built_as="hw4.c", by_queue_alone=True)

LANGUAGES: dict[str, LanguageFacts] = {
    f.name: f for f in (CUDA_PROGRAM, CUDA_KERNEL, TRITON_KERNEL, C_PROGRAM)}
GPU_LANGUAGES = frozenset(n for n, f in LANGUAGES.items() if f.uses_gpu)
TOOLED_LANGUAGES = frozenset(n for n, f in LANGUAGES.items() if f.gpu_tools)
DIAGNOSED_VERDICTS = frozenset({Verdict.WA, Verdict.RE, Verdict.NO})  # sanitizer looks at these


def diagnosis_follows(result: JudgeResult) -> bool:
    """Whether the worker sends a sanitizer diagnosis after this result (the page shows it as
    pending until it comes): a GPU language that built, with a test it can diagnose."""
    return (result.language in TOOLED_LANGUAGES and result.compile.ok and not result.system_error
            and any(t.verdict in DIAGNOSED_VERDICTS for t in result.tests))

"""What a language is: how to build a submission in the sandbox, and how to run what was built.

CMS style: each language is one small class in the registry (worker/languages/__init__.py) that only
says which files it claims, the build command, and the run command. Building and running themselves
are the pipeline's job (worker/build.py, worker/testrun.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from worker.languages.arch import DEFAULT_ARCH


@dataclass(frozen=True)
class BuildSettings:
    """Facts about this worker that a build needs."""

    gpu_arch: str = DEFAULT_ARCH  # the GPU's compute capability, e.g. "90"
    supported_archs: frozenset[str] = frozenset()  # sm numbers the local nvcc accepts
    time_limit_s: float = 60.0  # wall-time limit of the build
    log_cap_bytes: int = 64 << 10  # how much of the compiler's output is kept
    memory_bytes: int = 4 << 30  # host memory limit of the build
    nvcc_flags: tuple[str, ...] = ()  # extra nvcc flags (the diagnosis build adds -lineinfo)


@dataclass(frozen=True)
class BuildPlan:
    """One build: the files to lay out, the command, and what it must produce."""

    files: dict[str, bytes]  # build-dir file name -> content (sources, maybe a rewritten Makefile)
    argv: list[str]  # the build command, run in the build dir inside the sandbox
    product: str  # the file the build must leave in the build dir (a regular file)
    notes: list[str] = field(default_factory=list)  # what the judge changed, shown to the student
    check_argv: list[str] | None = None  # a second sandboxed command that must succeed (optional)
    check_message: str = ""  # the CE message when the check fails


class Language(ABC):
    """A submission kind: `name` is what users type (--language)."""

    name: ClassVar[str]  # e.g. "cuda-program"
    uses_gpu: ClassVar[bool]  # runs need the worker's GPU device nodes
    harness: ClassVar[bool] = False  # runs go through the cuda-kernel harness, not the product

    @classmethod
    @abstractmethod
    def claims(cls, files: Mapping[str, bytes]) -> bool:
        """Whether these files look like this language (for inference when none is given)."""

    @abstractmethod
    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        """The build for these files; raises SubmissionError when a required file is missing."""

    def run_argv(self, input_path: str, output_path: str) -> list[str]:
        """The command a test runs (in the work dir, where the product is copied)."""
        return ["./hw4", input_path, output_path]


def with_nvcc_flags(argv: list[str], flags: tuple[str, ...]) -> list[str]:
    """argv with extra nvcc flags: appended to an nvcc line; for anything else (`make hw4`), set
    in NVCC_APPEND_FLAGS, which nvcc itself reads, so a student's Makefile gets them too."""
    if not flags:
        return argv
    if argv and argv[0] == "nvcc":
        return [*argv, *flags]
    return ["env", f"NVCC_APPEND_FLAGS={' '.join(flags)}", *argv]


def sources(files: Mapping[str, bytes], *suffixes: str) -> list[str]:
    """The names ending in one of `suffixes`, sorted (a stable build command)."""
    return sorted(n for n in files if n.endswith(suffixes))

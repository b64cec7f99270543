"""What a build is, as data: the worker's facts a build needs, and the plan a language makes.

Languages (worker/languages/) make BuildPlans; worker/running/build.py runs them. Both types live
here, below both, so that the build knows a language only as something that makes a plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

DEFAULT_ARCH = "90"  # the H100's compute capability: the default when no GPU can be asked


@dataclass(frozen=True)
class BuildSettings:
    """Facts about this worker that a build needs."""

    gpu_arch: str = DEFAULT_ARCH  # the GPU's compute capability, e.g. "90"
    supported_archs: frozenset[str] = frozenset()  # sm numbers the local nvcc accepts
    time_limit_s: float = 60.0  # wall-time limit of the build
    log_cap_bytes: int = 64 << 10  # how much of the compiler's output is kept
    memory_bytes: int = 4 << 30  # host memory limit of the build
    nvcc_flags: tuple[str, ...] = ()  # extra nvcc flags (the diagnosis build adds -lineinfo)
    scratch: Path | None = None  # where the build dir goes (Machine.scratch; None: scratch_root)


@dataclass(frozen=True)
class BuildPlan:
    """One build: the files to lay out, the command, and what it must produce."""

    files: dict[str, bytes]  # build-dir file name -> content (sources, maybe a rewritten Makefile)
    argv: list[str]  # the build command, run in the build dir inside the sandbox
    product: str  # the file the build must leave in the build dir (a regular file)
    notes: list[str] = field(default_factory=list)  # what the judge changed, shown to the student
    check_argv: list[str] | None = None  # a second sandboxed command that must succeed (optional)
    check_message: str = ""  # the CE message when the check fails


class Planner(Protocol):
    """What the build needs of a language (worker.languages.base.Language is one)."""

    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        """The build for these files; raises SubmissionError when a required file is missing."""
        ...

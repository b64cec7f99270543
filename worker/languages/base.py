"""What a language is: how to build a submission in the sandbox, and how to run one test of it.

CMS style: each language is one small class in the registry (worker/languages/__init__.py) that
says which files it claims, its build, the inputs a test needs and how a test runs. Program
languages run `./hw4 IN OUT` (worker/running/testrun.py); the cuda-kernel language overrides the
run with its harness. The public facts (name, GPU or not, accepted files, timer, noise model, ...)
are the class's `facts`, its row of the contract's table: nothing outside a language's own module
tests its name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from flashjudge.contract import LanguageFacts, TestResult
from testcases.prepared import prepare_suite
from testcases.suite import Suite
from worker.machine import Machine
from worker.running.plan import BuildPlan, BuildSettings
from worker.running.testrun import (
    INPUT_TARGET,
    OUTPUT_NAME,
    RunContext,
    TestInputs,
    run_program_test,
)

__all__ = ["BuildPlan", "BuildSettings", "Language", "sources", "with_nvcc_flags"]


class Language(ABC):
    """A submission kind: its behaviour here, its facts in its row (`facts`)."""

    facts: ClassVar[LanguageFacts]  # its row of flashjudge.contract.LANGUAGES (a test's own row
    # for a language a test adds)

    @property
    def name(self) -> str:
        """What users type (--language), e.g. "cuda-program"."""
        return self.facts.name

    @property
    def uses_gpu(self) -> bool:
        """Runs need the worker's GPU device nodes."""
        return self.facts.uses_gpu

    @classmethod
    def needs_met(cls) -> bool:
        """Whether this worker has what `facts.needs` names, answered without waiting (False
        while still looking); languages that need nothing more never ask."""
        return True

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

    def test_inputs(self, suite: Suite, cache_dir: Path, device: str,
                    seed: int | None) -> list[TestInputs]:
        """Each test's prepared input and expected output (made in the cache first if missing)."""
        ids = [t.id for t in suite.tests]
        prepared = prepare_suite(suite, cache_dir, device, seed, tests=ids)
        return [TestInputs(prepared[i]) for i in ids]

    def runtime(self, cache_dir: Path, machine: Machine) -> Path | None:
        """What runs the built product besides the sandbox (the cuda-kernel harness, built for
        `machine`'s GPU); None here."""
        return None

    def borrowed_at_build(self, product: Path) -> str | None:
        """Where the suite forbids borrowed kernels: why the built product breaks the rule (the
        library or kernel named), or None. Only the CUDA languages check at build time."""
        return None

    def run_test(self, ctx: RunContext, inputs: TestInputs) -> TestResult:
        """Run one test and judge it (raises only for our own failures)."""
        return run_program_test(ctx, inputs.prepared, self.run_argv(INPUT_TARGET, OUTPUT_NAME))


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

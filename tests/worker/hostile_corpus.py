"""The hostile corpus as data: tests/hostile/<name>/ holds sources and an expected.toml.

expected.toml keys: description, language, verdicts (any of these is right), tests (hw4-mini
ids, or hw4 ids when gpu = true; ["all"]: the whole suite), and optionally time_limit_s (replaces
the tests' limits), build_time_limit_s, memory_bytes (the runs' base memory limit), sources (take
the sources from another case), include (more files sent with the case's own: a table of
name sent -> corpus path, e.g. the honest program as a header), absent (host paths that must not
exist afterwards), compile_notes_contain, log_must_contain, log_must_not_contain,
stderr_must_not_contain, message_contains, no_process_named (a process that must be dead
afterwards), then_judge (a case judged right after, which must get its own verdict: the machine
is still fine).
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testcases.suite import Suite, load_suite

CORPUS = Path(__file__).resolve().parents[1] / "hostile"


@dataclass(frozen=True)
class HostileCase:
    """One program of the corpus and what judging it must show."""

    name: str  # directory name
    files: dict[str, bytes]  # the submission
    language: str  # its language
    verdicts: tuple[str, ...]  # acceptable verdicts for every test
    tests: tuple[str, ...]  # which tests to run
    gpu: bool = False  # needs an NVIDIA GPU
    time_limit_s: float | None = None  # replaces the tests' time limits
    build_time_limit_s: float = 60.0  # the build's limit
    memory_bytes: int | None = None  # replaces the runs' base host memory limit
    checks: dict[str, Any] = field(default_factory=dict)  # the optional keys, as written

    def test_ids(self, suite: Suite) -> list[str]:
        """The ids to run: `tests`, or every test of the suite for ["all"]."""
        return [t.id for t in suite.tests] if self.tests == ("all",) else list(self.tests)

    def suite(self) -> Suite:
        """hw4 (gpu) or hw4-mini, limited to `tests`, with the limits replaced."""
        base = load_suite("hw4" if self.gpu else "hw4-mini")
        specs = [base.test(t) for t in self.test_ids(base)]
        if self.time_limit_s is not None:
            specs = [dataclasses.replace(s, time_limit_s=self.time_limit_s) for s in specs]
        return dataclasses.replace(base, tests=specs)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())
            if p.is_file() and p.name != "expected.toml"}


def load_case(name: str) -> HostileCase:
    directory = CORPUS / name
    data = tomllib.loads((directory / "expected.toml").read_text())
    source_dir = CORPUS / data.get("sources", name)
    known = {"description", "language", "verdicts", "tests", "gpu", "time_limit_s",
             "build_time_limit_s", "sources", "memory_bytes", "include"}
    included = {sent: (CORPUS / path).read_bytes()
                for sent, path in data.get("include", {}).items()}
    return HostileCase(
        name=name, files={**included, **_files(source_dir)}, language=data["language"],
        verdicts=tuple(data["verdicts"]), tests=tuple(data["tests"]), gpu=data.get("gpu", False),
        time_limit_s=data.get("time_limit_s"),
        build_time_limit_s=float(data.get("build_time_limit_s", 60.0)),
        memory_bytes=data.get("memory_bytes"),
        checks={k: v for k, v in data.items() if k not in known},
    )


def all_cases() -> list[HostileCase]:
    return [load_case(p.parent.name) for p in sorted(CORPUS.glob("*/expected.toml"))]

"""A sanitizer diagnosis of a GPU submission that failed: why it went wrong, at which line.

After the verdicts are recorded (so passing submissions never wait for it), a cuda-program or
cuda-kernel with a WA, RE or NO is rebuilt with -lineinfo and run once more on a small input of the
failing test's d under `compute-sanitizer --tool memcheck`, then racecheck when memcheck is clean,
in the same sandbox as the judging, each run under its own time limit. The report is parsed into a
few findings: kind, source line, thread and block (worker/sanitizer_report.py).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flashjudge.contract import JudgeResult, TestResult, diagnosis_follows
from flashjudge.contract.languages import DIAGNOSED_VERDICTS
from testcases.generator import write_input
from testcases.suite import TestSpec, load_suite
from worker.feedback.sanitizer_report import SanitizerReport, parse_report
from worker.harness.build import find_toolchain
from worker.harness.in_process import FRESH_TARGET, harness_argv
from worker.languages import BuildSettings, Language, get_language
from worker.languages.arch import gpu_arch, supported_archs
from worker.machine import Machine
from worker.running.build import build
from worker.running.classify import SystemFailure
from worker.running.fresh import fresh_workdir
from worker.running.testrun import INPUT_TARGET, OUTPUT_NAME
from worker.sandbox.bwrap import Bind, BwrapSandbox, Limits, Sandbox, read_regular_file
from worker.sandbox.workspace import make_workdir, remove_tree

LOG_NAME = "sanitizer.log"
LOG_READ_BYTES = 1 << 20  # the report's first MiB holds the first findings


@dataclass(frozen=True)
class DiagnosisConfig:
    """The diagnosis's own budget, apart from the judging's."""

    tools: tuple[str, ...] = ("memcheck", "racecheck")  # in order; stop at the first finding
    batches: int = 2  # B of the small input
    max_n: int = 256  # N of the small input (the test's N when smaller)
    run_limit_s: float = 90.0  # wall-time limit of one sanitizer run (it slows kernels 10-100x)
    build_limit_s: float = 90.0  # wall-time limit of the -lineinfo rebuild
    memory_bytes: int = 8 << 30  # host memory of a sanitizer run
    keep: int = 5  # findings kept per run


@dataclass
class Diagnosis:
    """What the sanitizer said about a failing submission, for its page."""

    test_id: str  # the failing test whose d (and, up to max_n, N) the small input has
    shape: tuple[int, int, int]  # (B, N, d) of the small input
    reports: list[SanitizerReport] = field(default_factory=list)  # one per tool run, in order
    message: str = ""  # one line for the student
    error: str | None = None  # why no diagnosis could be made (our side), None when it ran
    seconds: float = 0.0  # wall time of the whole diagnosis

    @property
    def findings(self) -> list[Any]:
        return [f for r in self.reports for f in r.findings]

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["reports"] = [r.to_dict() for r in self.reports]
        return data


def failing_test(result: JudgeResult) -> TestResult | None:
    """The first test worth diagnosing (WA, RE or NO), None when there is none."""
    return next((t for t in result.tests if t.verdict in DIAGNOSED_VERDICTS), None)


def small_spec(spec: TestSpec, config: DiagnosisConfig) -> TestSpec:
    """A few batches of the failing test's d, N capped: seconds under a sanitizer."""
    return dataclasses.replace(spec, id=f"{spec.id}-small", B=min(spec.B, config.batches),
                               N=min(spec.N, config.max_n))


def sanitizer_path(cuda_home: str | None = None) -> str | None:
    """compute-sanitizer of the CUDA toolkit (under /usr, hence visible in the sandbox): on the
    PATH, else under `cuda_home` (Machine.cuda_home) or /usr/local/cuda."""
    found = shutil.which("compute-sanitizer")
    homes = [cuda_home or "", "/usr/local/cuda"]
    candidates = [found] if found else []
    candidates += [str(Path(h) / "bin" / "compute-sanitizer") for h in homes if h]
    return next((os.path.realpath(c) for c in candidates if os.path.isfile(c)), None)


def tool_binds(tool: str) -> list[Bind]:
    """The sandbox sees /usr whole; a tool installed elsewhere (ncu under /opt/nvidia) gets its
    install dir bound read-only at the same path."""
    real = Path(os.path.realpath(tool))
    return [] if real.is_relative_to("/usr") else [Bind(real.parent, str(real.parent))]


def sanitizer_argv(sanitizer: str, tool: str, program: list[str]) -> list[str]:
    """One sanitizer run of `program`, its report in /work/sanitizer.log."""
    return [sanitizer, "--tool", tool, "--log-file", f"/work/{LOG_NAME}", "--print-limit", "20",
            "--show-backtrace", "device", *program]


def diagnose(request: Any, result: JudgeResult, cache_dir: str | Path,
             sandbox: Sandbox | None = None, config: DiagnosisConfig | None = None,
             machine: Machine | None = None) -> Diagnosis | None:
    """Diagnose a judged GPU submission (request: the JudgeRequest it was judged from); None when
    nothing needs diagnosing. `sandbox` must give the GPU (default: `machine`'s GPU). Never
    raises for what the submission does; problems of ours come back in Diagnosis.error."""
    config, machine = config or DiagnosisConfig(), machine or Machine()
    test = failing_test(result)
    if not diagnosis_follows(result) or test is None:
        return None
    spec = small_spec(load_suite(request.suite).test(test.id), config)
    diagnosis = Diagnosis(test.id, (spec.B, spec.N, spec.d))
    sandbox = sandbox or BwrapSandbox.for_machine(machine, gpu=True)
    started = time.monotonic()
    scratch = make_workdir("diagnose", machine.scratch)
    try:
        _run(diagnosis, request, result.language, spec, Path(cache_dir), sandbox, config,
             WorkArea(scratch, machine))
    finally:
        remove_tree(scratch)
        diagnosis.seconds = time.monotonic() - started
    return diagnosis


@dataclass(frozen=True)
class WorkArea:
    """Where a diagnosis or a profile works: its scratch dir (the rebuilt product, the small
    input) and the machine it runs on."""

    scratch: Path  # judge-owned, removed afterwards
    machine: Machine  # the GPU, CUDA and scratch root to use


def lineinfo_build_settings(machine: Machine, time_limit_s: float = 60.0) -> BuildSettings:
    """The rebuild of a diagnosis or a profile: -lineinfo, for `machine`'s GPU."""
    return BuildSettings(gpu_arch=gpu_arch(machine), supported_archs=supported_archs(),
                         time_limit_s=time_limit_s, nvcc_flags=("-lineinfo",),
                         scratch=machine.scratch)


def _run(diagnosis: Diagnosis, request: Any, language_name: str, spec: TestSpec, cache_dir: Path,
         sandbox: Sandbox, config: DiagnosisConfig, area: WorkArea) -> None:
    sanitizer = sanitizer_path(area.machine.cuda_home)
    if sanitizer is None:
        diagnosis.error = "compute-sanitizer is not installed on this worker"
        return
    language = get_language(language_name)
    settings = lineinfo_build_settings(area.machine, config.build_limit_s)
    outcome = build(language, request.files, settings, sandbox, area.scratch)
    if outcome.product is None:
        diagnosis.error = "the -lineinfo rebuild failed: " + outcome.compile.log[-300:]
        return
    small = area.scratch / "small.bin"
    write_input(small, spec)
    try:
        layout = run_layout(language, outcome.product, small, cache_dir, area.machine)
    except SystemFailure as exc:
        diagnosis.error = f"harness: {exc}"
        return
    for tool in config.tools:
        report = _sanitize(sanitizer, tool, layout, sandbox, config, area.machine.scratch)
        diagnosis.reports.append(report)
        if not report.clean:
            break
    diagnosis.message = summary_line(diagnosis)


@dataclass(frozen=True)
class RunLayout:
    """What a diagnosis run lays out: files copied into /work, binds, argv and environment."""

    files: dict[str, Path]  # name in /work -> judge-owned source
    binds: list[Bind]  # the small input (twice for the harness)
    program: list[str]  # the command the sanitizer runs
    env: dict[str, str]  # extra environment (the CUDA runtime's path for the harness)


def run_layout(language: Language, product: Path, small: Path, cache_dir: Path,
               machine: Machine) -> RunLayout:
    """A program runs itself; a language with a runtime (the cuda-kernel harness) runs that."""
    binary = language.runtime(cache_dir, machine)
    if binary is None:
        return RunLayout({"hw4": product}, [Bind(small, INPUT_TARGET)],
                         language.run_argv(INPUT_TARGET, OUTPUT_NAME), {})
    argv = harness_argv(60.0, 0.01, 5e-3)
    return RunLayout({binary.name: binary, product.name: product},
                   [Bind(small, INPUT_TARGET), Bind(small, FRESH_TARGET)], argv,
                   {"LD_LIBRARY_PATH": str(find_toolchain(machine.cuda_home).lib_dir)})


def _sanitize(sanitizer: str, tool: str, layout: RunLayout, sandbox: Sandbox,
              config: DiagnosisConfig, scratch: Path | None) -> SanitizerReport:
    """One sanitizer run in a fresh work dir; its report parsed (from the log, else stdout)."""
    with fresh_workdir(f"sanitize-{tool}", layout.files, scratch=scratch) as workdir:
        limits = Limits(wall_s=config.run_limit_s, memory_bytes=config.memory_bytes,
                        file_size_bytes=256 << 20)
        run = sandbox.run(sanitizer_argv(sanitizer, tool, layout.program), workdir=workdir,
                          limits=limits, binds=[*layout.binds, *tool_binds(sanitizer)],
                          env=layout.env)
        log = read_regular_file(workdir, LOG_NAME)
        text = _head(log) if log is not None else run.stdout_tail
        report = parse_report(text, tool, config.keep)
        last = (run.stderr_tail.strip().splitlines() or [""])[-1]
        report.run = f"{run.status} (exit {run.exit_code}, signal {run.signal}): {last}"[:300]
        if run.status == "timeout":
            report.host_errors.append(f"{tool} did not finish in {config.run_limit_s:g} s")
        return report


def _head(path: Path) -> str:
    with open(path, "rb") as f:
        return f.read(LOG_READ_BYTES).decode("utf-8", errors="replace")


def summary_line(diagnosis: Diagnosis) -> str:
    """One line for the submission page."""
    B, N, d = diagnosis.shape
    where = f"on a small input (B={B}, N={N}, d={d}) like {diagnosis.test_id}'s"
    for report in diagnosis.reports:
        if report.findings:
            first = report.findings[0]
            loc = f" at {first.location.short}" if first.location else ""
            who = f" (thread {first.thread}, block {first.block})" if first.thread else ""
            more = f"; {report.total - 1} more" if report.total > 1 else ""
            return f"{report.tool} {where}: {first.kind}{loc}{who}{more}"
        if report.host_errors:
            return f"{report.tool} {where}: {report.host_errors[0]}"
    tools = " and ".join(r.tool for r in diagnosis.reports)
    return f"{tools} {where} found no memory error or race: check the algorithm"


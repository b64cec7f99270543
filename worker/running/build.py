"""Building a submission: lay out its files in a fresh dir, run the language's build in the sandbox.

The build is untrusted code too (a Makefile runs commands, nvcc runs a host compiler), so it runs
with the same sandbox as the tests: no network, nothing of the judge visible, a 60 s limit and a
capped log. The product is copied out (never through a link) into a judge-owned directory, so the
tests run a file the submission can no longer change.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from flashjudge.contract import CompileResult
from worker.running.classify import SystemFailure
from worker.running.plan import BuildPlan, BuildSettings, Planner
from worker.sandbox.bwrap import Limits, RunResult, RunStatus, Sandbox, read_regular_file
from worker.sandbox.workspace import make_workdir, remove_tree

BUILD_ENV = {
    "PATH": "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin",
    "HOME": "/work",
    "LANG": "C.UTF-8",
    "TMPDIR": "/tmp",
}


@dataclass
class BuildOutcome:
    """The compile result and, when it succeeded, where the product now is."""

    compile: CompileResult  # what the student sees
    product: Path | None  # judge-owned copy of the built file (None on CE)


def _log(run: RunResult, cap: int) -> str:
    text = "\n".join(t for t in (run.stdout_tail, run.stderr_tail) if t)
    return text[-cap:]


def _failure(run: RunResult, settings: BuildSettings) -> str | None:
    """Why the build failed, in words, or None when the process succeeded."""
    if run.status == RunStatus.SYSTEM_ERROR:
        raise SystemFailure(f"sandbox failed during the build: {run.message}")
    reasons = {
        RunStatus.TIMEOUT: f"the build exceeded its {settings.time_limit_s:g} s limit",
        RunStatus.MEMORY: "the build exceeded its memory limit",
        RunStatus.OUTPUT_LIMIT: "the build wrote a file over the size limit",
        RunStatus.SIGNALED: f"the build was killed by signal {run.signal}",
        RunStatus.EXIT_NONZERO: f"the build failed (exit status {run.exit_code})",
    }
    return reasons.get(run.status)


def _limits(settings: BuildSettings) -> Limits:
    return Limits(
        wall_s=settings.time_limit_s, memory_bytes=settings.memory_bytes,
        log_tail_bytes=settings.log_cap_bytes,
    )


def _lay_out(plan: BuildPlan, build_dir: Path) -> None:
    for name, data in plan.files.items():
        (build_dir / name).write_bytes(data)


@dataclass(frozen=True)
class _BuildRun:
    ok: bool  # the product exists (and passed the check)
    log: str  # the build's output, led by the reason when it failed


def _run_plan(
    plan: BuildPlan, build_dir: Path, sandbox: Sandbox, settings: BuildSettings
) -> _BuildRun:
    """Run the build (and its check)."""
    run = sandbox.run(plan.argv, workdir=build_dir, limits=_limits(settings), env=BUILD_ENV)
    log = "\n".join([*plan.notes, _log(run, settings.log_cap_bytes)]).strip()
    failure = _failure(run, settings)
    if failure is None and read_regular_file(build_dir, plan.product) is None:
        failure = f"the build did not produce {plan.product}"
    if failure is None and plan.check_argv:
        check = sandbox.run(plan.check_argv, workdir=build_dir, limits=_limits(settings),
                            env=BUILD_ENV)
        _failure(check, settings)  # raises on a system error
        if check.status != RunStatus.OK or "solve" not in check.stdout_tail.split():
            failure = plan.check_message
    return _BuildRun(failure is None, log if failure is None else f"{failure}\n{log}".rstrip())


def build(
    language: Planner, files: dict[str, bytes], settings: BuildSettings, sandbox: Sandbox,
    artifacts: Path,
) -> BuildOutcome:
    """Build `files` as `language`; the product lands in `artifacts` (a judge-owned dir)."""
    plan = language.plan(files, settings)
    command = " ".join(plan.argv)
    build_dir = make_workdir("build", settings.scratch)
    started = time.monotonic()
    try:
        _lay_out(plan, build_dir)
        run = _run_plan(plan, build_dir, sandbox, settings)
        compile_ = CompileResult(run.ok, run.log, time.monotonic() - started, plan.notes, command)
        if not run.ok:
            return BuildOutcome(compile_, None)
        product = artifacts / plan.product
        shutil.copyfile(read_regular_file(build_dir, plan.product), product)  # type: ignore[arg-type]
        product.chmod(0o755)
        return BuildOutcome(compile_, product)
    finally:
        remove_tree(build_dir)

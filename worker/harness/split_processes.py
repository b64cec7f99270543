"""The split timer's two processes: the trusted timer and the student's runner, each sandboxed.

The timer (flashjudge-timer, our code only) and the runner (flashjudge-runner plus the student's
libsolve.so) run at once in two bubblewrap sandboxes with the GPU, each in its own user, pid, ipc
and net namespaces. They meet on a Unix socket in a small directory bound into both (a path
socket crosses network namespaces, an abstract one would not), and the timer passes the shared
GPU memory over it as a file descriptor. The timer's work dir, where its report and the outputs
the judge compares are written, is never bound into the runner's sandbox.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from worker.harness.build import RUNNER_NAME, TIMER_NAME
from worker.harness.census import CENSUS_NAME, Census, read_census
from worker.harness.timer_report import ReportError, TimerReport, read_report
from worker.harness.verify import Calibration, fit_calibration
from worker.sandbox.bwrap import Bind, Limits, RunResult, Sandbox
from worker.sandbox.workspace import make_workdir, remove_tree

CHANNEL = "/chan"  # the directory both sandboxes see
SOCKET = f"{CHANNEL}/timer.sock"
INPUT = "/input/input.bin"
FRESH = "/input/fresh.bin"
REPORT_NAME = "timer.json"
OUT1_NAME = "output.bin"
OUT2_NAME = "output2.bin"
LIBRARY_NAME = "libsolve.so"


class CalibrationError(RuntimeError):
    """The overhead could not be measured: this worker's problem, never a student's."""


@dataclass(frozen=True)
class SplitPrograms:
    """What the two processes run: our binaries and, unless calibrating, the student's library."""

    timer: Path  # flashjudge-timer, built by worker.harness.build
    runner: Path  # flashjudge-runner
    library: Path | None  # the student's shared library; None: our builtin solve (calibration)
    interpreter: str | None = None  # what runs the runner (python3 for the triton runner)
    library_name: str = LIBRARY_NAME  # the library's name in the runner's work dir
    census: bool = False  # the runner records the kernels it ran (the triton runner)


@dataclass(frozen=True)
class SplitJob:
    """One run of the timer and its runner: the inputs and the limits."""

    input_path: Path  # the test's input (host path)
    fresh_path: Path | None  # the judge's fresh input of the same shape (None: calibration)
    time_limit_s: float  # per call
    budget_s: float  # for the timed batches
    limits: Limits  # of each sandbox (wall time covering the whole run)
    env: Mapping[str, str]  # environment inside both sandboxes (e.g. LD_LIBRARY_PATH)
    scratch: Path | None = None  # where the work dirs go (Machine.scratch; None: scratch_root)
    runner_binds: tuple[Bind, ...] = ()  # extra binds of the runner's sandbox (a JIT cache)
    runner_env: Mapping[str, str] | None = None  # the runner's environment (None: `env`)


@dataclass
class SplitRun:
    """What both processes did, and where the timer's files are."""

    timer: RunResult  # the timer's sandboxed run
    runner: RunResult  # the runner's sandboxed run
    report: TimerReport | None  # the timer's report, when it wrote one that parses
    report_error: str | None  # why there is no report
    timer_dir: Path  # host work dir of the timer: its outputs (OUT1_NAME, OUT2_NAME)
    scratch: list[Path]  # work dirs to discard once the caller is done with timer_dir
    census: Census | None = None  # the kernels the runner's process ran, when it records them


def timer_argv(job: SplitJob) -> list[str]:
    argv = [f"./{TIMER_NAME}", "--listen", SOCKET, "--input", INPUT, "--report", REPORT_NAME,
            "--limit", f"{job.time_limit_s:g}", "--budget", f"{job.budget_s:g}"]
    if job.fresh_path is None:
        return [*argv, "--calibrate"]
    return [*argv, "--fresh", FRESH, "--out1", OUT1_NAME, "--out2", OUT2_NAME]


def runner_argv(programs: SplitPrograms) -> list[str]:
    library = f"./{programs.library_name}" if programs.library is not None else "--builtin"
    argv = [f"./{RUNNER_NAME}", "--connect", SOCKET, library]
    if programs.census and programs.library is not None:
        argv += ["--census", CENSUS_NAME]
    return [programs.interpreter, *argv] if programs.interpreter else argv


def _copy(source: Path, directory: Path, name: str) -> None:
    shutil.copyfile(source, directory / name)
    (directory / name).chmod(0o755)


def _lay_out(programs: SplitPrograms, label: str, scratch: Path | None
             ) -> tuple[Path, Path, Path]:
    """The timer's and the runner's work dirs, and the channel dir (writable by both)."""
    timer_dir = make_workdir(f"timer-{label}", scratch)
    runner_dir = make_workdir(f"runner-{label}", scratch)
    channel = make_workdir(f"chan-{label}", scratch)
    channel.chmod(0o777)
    _copy(programs.timer, timer_dir, TIMER_NAME)
    _copy(programs.runner, runner_dir, RUNNER_NAME)
    if programs.library is not None:
        _copy(programs.library, runner_dir, programs.library_name)
    return timer_dir, runner_dir, channel


def run_split(sandbox: Sandbox, programs: SplitPrograms, job: SplitJob, label: str) -> SplitRun:
    """Both processes, to the end of both; never raises for anything either program does."""
    timer_dir, runner_dir, channel = _lay_out(programs, label, job.scratch)
    inputs = [Bind(job.input_path, INPUT)]
    if job.fresh_path is not None:
        inputs.append(Bind(job.fresh_path, FRESH))
    chan = Bind(channel, CHANNEL, writable=True)
    results: dict[str, RunResult] = {}

    def timer() -> None:
        results["timer"] = sandbox.run(timer_argv(job), workdir=timer_dir, limits=job.limits,
                                       binds=[*inputs, chan], env=job.env)

    thread = threading.Thread(target=timer, name=f"timer-{label}", daemon=True)
    thread.start()
    runner = sandbox.run(runner_argv(programs), workdir=runner_dir, limits=job.limits,
                         binds=[chan, *job.runner_binds],
                         env=job.env if job.runner_env is None else job.runner_env)
    thread.join()
    report, error = None, None
    try:
        report = read_report(timer_dir / REPORT_NAME)
    except ReportError as exc:
        error = str(exc)
    census = read_census(runner_dir / CENSUS_NAME) if programs.census else None
    return SplitRun(results["timer"], runner, report, error, timer_dir,
                   [timer_dir, runner_dir, channel], census)


def calibrate(sandbox: Sandbox, programs: SplitPrograms, job: SplitJob, label: str) -> Calibration:
    """This worker's batch overhead for the job's shape, measured with our own builtin solve()
    in the runner (no student code anywhere): what verify.py allows between the runner's event
    times and the timer's clock. Raises CalibrationError when the two did not run cleanly."""
    calibration_job = replace(job, fresh_path=None)
    run = run_split(sandbox, replace(programs, library=None), calibration_job, label)
    try:
        if run.report is None or run.report.runner != "ok":
            why = run.report_error or (run.report.runner if run.report else "")
            raise CalibrationError(f"calibration run failed: {why} {run.timer.stderr_tail[-300:]}"
                                   f" {run.runner.stderr_tail[-300:]}")
        return fit_calibration(run.report)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from exc
    finally:
        for directory in run.scratch:
            remove_tree(directory)

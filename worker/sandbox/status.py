"""From how a sandboxed process ended to a RunStatus and a line for humans."""

from __future__ import annotations

import json

from worker.sandbox.types import Limits, RunStatus

SIGXFSZ = 25


def exit_code_from_status(raw: bytes) -> int | None:
    """bwrap's --json-status-fd: an "exit-code" document appears only if the program ran and
    exited; a run whose sandbox set-up failed has none."""
    for line in raw.decode(errors="replace").splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if "exit-code" in doc:
            return int(doc["exit-code"])
    return None


def run_status_of(exit_code: int | None, timed_out: bool, oom: bool
                  ) -> tuple[RunStatus, int | None]:
    """The status and signal of a finished run (a fact about the process; `classify` in
    worker/running/ turns it into a verdict). Through bwrap a signal shows as 128+N."""
    if timed_out:
        return RunStatus.TIMEOUT, None
    if oom:
        return RunStatus.MEMORY, None
    if exit_code is None:
        return RunStatus.SYSTEM_ERROR, None
    if exit_code == 0:
        return RunStatus.OK, None
    if 128 < exit_code <= 128 + 64:
        sig = exit_code - 128
        return (RunStatus.OUTPUT_LIMIT if sig == SIGXFSZ else RunStatus.SIGNALED), sig
    return RunStatus.EXIT_NONZERO, None


def describe(status: RunStatus, code: int | None, sig: int | None, limits: Limits,
             stderr: str) -> str:
    """One line saying what happened, in the student's terms."""
    if status is RunStatus.TIMEOUT:
        return f"killed after the {limits.wall_s:g} s wall-time limit"
    if status is RunStatus.MEMORY:
        return f"killed on reaching the {limits.memory_bytes >> 20} MiB memory limit"
    if status is RunStatus.OUTPUT_LIMIT:
        return f"wrote a file over the {limits.file_size_bytes >> 20} MiB size limit"
    if status is RunStatus.SIGNALED:
        return f"killed by signal {sig}"
    if status is RunStatus.EXIT_NONZERO:
        return f"exited with code {code}"
    if status is RunStatus.SYSTEM_ERROR:
        last = stderr.strip().splitlines()[-1:] or ["no message"]
        return f"the sandbox failed to start the program: {last[0]}"
    return "ok"

